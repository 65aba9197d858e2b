/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Plain Pods on the integration seam, with Kueue's labels: a Pod naming a LocalQueue is one
 * workload; Pods sharing kueue.x-k8s.io/pod-group-name, with kueue.x-k8s.io/pod-group-total-count,
 * are one gang. The object the seam's functions read is a pod group (pod_group_new): its pods
 * grouped by role (the shape of their pod spec) into PodSets, as Kueue does, named by the first
 * 8 hex digits of the role's hash ("main" for a Pod alone).
 *
 * Finishing follows Kueue: a group succeeds once total-count pods succeeded; a failed pod is
 * expected to be replaced (by whatever made it) unless it says
 * kueue.x-k8s.io/retriable-in-group: "false", which fails the whole group.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/integrations.h"
#include "api/objects.h"
#include "core/num.h"

int pod_gated(json_t *pod)
{
	return obj_list_has(obj_path(pod, "spec.schedulingGates"), "name", GATE_ADMISSION);
}

int pod_terminal(json_t *pod)
{
	const char *phase = obj_str(pod, "status.phase");
	return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

static int pod_phase_is(json_t *pod, const char *phase)
{
	const char *p = obj_str(pod, "status.phase");
	return p && !strcmp(p, phase);
}

int pod_succeeded(json_t *pod)
{
	return pod_phase_is(pod, "Succeeded");
}

int pod_group_of(json_t *pod, char *wl_name, size_t size, int64_t *total, char *err, size_t errlen)
{
	const char *group = obj_label(pod, LABEL_POD_GROUP);
	const char *count = obj_annotation(pod, ANNOTATION_POD_GROUP_TOTAL);
	if (!group) {
		if (count)
			return eobj_bad(err, errlen,
					"metadata.annotations[\"" ANNOTATION_POD_GROUP_TOTAL
					"\"]: Forbidden: "
					"only a Pod with the label " LABEL_POD_GROUP
					" belongs to a group");
		*total = 1;
		const char *name = obj_name(pod), *uid = obj_uid(pod);
		if (!name || !uid)
			return eobj_bad(err, errlen, "metadata: a Pod needs a name and a uid");
		return integration_workload_name(&integration_pod, name, uid, wl_name, size) == 0 ?
			       0 :
			       eobj_bad(err, errlen,
					"metadata.name: cannot derive a Workload name");
	}
	/* The group names its Workload, so it must be an object name. */
	if (!*group || !eobj_is_dns_subdomain(group, strlen(group)))
		return eobj_bad(err, errlen,
				"metadata.labels[\"" LABEL_POD_GROUP
				"\"]: Invalid value: \"%.63s\": must be "
				"a lowercase RFC 1123 subdomain, as it names the group's Workload",
				group);
	if (!count)
		return eobj_bad(err, errlen,
				"metadata.annotations[\"" ANNOTATION_POD_GROUP_TOTAL
				"\"]: Required value: "
				"a Pod of group %.63s must say how many pods the group has",
				group);
	int64_t n;
	if (num_parse_i64(count, 1, POD_GROUP_MAX, &n) != 0)
		return eobj_bad(err, errlen,
				"metadata.annotations[\"" ANNOTATION_POD_GROUP_TOTAL
				"\"]: Invalid value: "
				"\"%.32s\": must be an integer from 1 to %d",
				count, POD_GROUP_MAX);
	*total = n;
	if ((size_t)snprintf(wl_name, size, "%s", group) >= size)
		return eobj_bad(err, errlen, "metadata.labels[\"" LABEL_POD_GROUP "\"]: too long");
	return 0;
}

/* The oldest first: a group's identity and its PodSets' templates come from its first pods. */
static int older(json_t *a, json_t *b)
{
	const char *ta = obj_str(a, "metadata.creationTimestamp"),
		   *tb = obj_str(b, "metadata.creationTimestamp");
	int c = strcmp(ta ? ta : "", tb ? tb : "");
	if (c == 0)
		c = strcmp(obj_name(a) ? obj_name(a) : "", obj_name(b) ? obj_name(b) : "");
	return c < 0;
}

json_t *pod_group_new(json_t *const *pods, size_t n, char *err, size_t errlen)
{
	char wl_name[300], first_name[300];
	int64_t total = 0, first_total = 0;
	const char *queue = NULL, *prio = NULL;
	json_t *oldest = NULL, *list;

	if (n == 0) {
		eobj_bad(err, errlen, "the group has no pods");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *q = obj_label(pods[i], LABEL_QUEUE_NAME);
		if (pod_group_of(pods[i], wl_name, sizeof(wl_name), &total, err, errlen) != 0)
			return NULL;
		if (i == 0) {
			snprintf(first_name, sizeof(first_name), "%s", wl_name);
			first_total = total;
			queue = q;
			prio = obj_label(pods[i], LABEL_PRIORITY_CLASS);
		}
		if (strcmp(wl_name, first_name) != 0 || total != first_total) {
			eobj_bad(err, errlen,
				 "pods %.100s and %.100s of group %.63s disagree "
				 "on " ANNOTATION_POD_GROUP_TOTAL ": %lld and %lld",
				 obj_name(pods[0]), obj_name(pods[i]), first_name,
				 (long long)first_total, (long long)total);
			return NULL;
		}
		if (!q || !queue || strcmp(q, queue) != 0) {
			eobj_bad(err, errlen,
				 "pods %.100s and %.100s of group %.63s disagree "
				 "on " LABEL_QUEUE_NAME ": \"%.63s\" and \"%.63s\"",
				 obj_name(pods[0]), obj_name(pods[i]), first_name,
				 queue ? queue : "", q ? q : "");
			return NULL;
		}
		if (!oldest || older(pods[i], oldest))
			oldest = pods[i];
	}
	list = json_array();
	for (size_t i = 0; list && i < n; i++)
		if (json_array_append(list, pods[i]) != 0) {
			json_decref(list);
			list = NULL;
		}
	json_t *labels = json_pack("{s:s}", LABEL_QUEUE_NAME, queue);
	if (labels && prio)
		json_object_set_new(labels, LABEL_PRIORITY_CLASS, json_string(prio));
	if (labels && obj_label(oldest, LABEL_POD_GROUP))
		json_object_set_new(labels, LABEL_POD_GROUP, json_string(first_name));
	json_t *meta = json_pack("{s:s, s:s?, s:s?, s:s?, s:o?}", "name",
				 obj_label(oldest, LABEL_POD_GROUP) ? first_name : obj_name(oldest),
				 "namespace", obj_namespace(oldest), "uid", obj_uid(oldest),
				 "creationTimestamp", obj_str(oldest, "metadata.creationTimestamp"),
				 "labels", labels);
	json_t *group = list && meta ? json_pack("{s:o, s:o, s:I}", "metadata", meta, "pods", list,
						 "totalCount", (json_int_t)first_total) :
				       NULL;
	if (!group) {
		if (!meta)
			json_decref(labels);
		json_decref(meta);
		json_decref(list);
		eobj_nomem(err, errlen);
	}
	return group;
}

/* What makes two pods of a group the same role: the parts of their spec that decide quota and
 * placement. Kueue hashes a similar shape; the PodSet is named by the hash. */
static json_t *role_shape(json_t *pod)
{
	json_t *spec = json_object_get(pod, "spec");
	json_t *shape = json_object();
	static const char *const fields[] = { "nodeSelector",      "affinity", "tolerations",
					      "priorityClassName", "priority", "overhead",
					      "runtimeClassName" };
	static const char *const lists[] = { "containers", "initContainers" };
	for (size_t f = 0; shape && f < sizeof(fields) / sizeof(fields[0]); f++) {
		json_t *v = json_object_get(spec, fields[f]);
		if (v)
			json_object_set(shape, fields[f], v);
	}
	for (size_t l = 0; shape && l < 2; l++) {
		/* A copy: the pod is the informer's, and stays whole. */
		json_t *list = json_object_get(spec, lists[l]);
		json_t *out = list ? json_deep_copy(list) : json_array();
		obj_slim_containers(out);
		json_object_set_new(shape, lists[l], out);
	}
	return shape;
}

static int role_name(json_t *pod, char *buf, size_t size)
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	json_t *shape = role_shape(pod);
	char *text = shape ? json_dumps(shape, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(shape);
	if (!text)
		return -ENOMEM;
	int ok = EVP_Digest(text, strlen(text), digest, &len, EVP_sha1(), NULL);
	free(text);
	if (!ok)
		return -EIO;
	snprintf(buf, size, "%02x%02x%02x%02x", digest[0], digest[1], digest[2], digest[3]);
	return 0;
}

int pod_podset_name(json_t *group, json_t *pod, char *buf, size_t size)
{
	if (!obj_label(group, LABEL_POD_GROUP)) {
		snprintf(buf, size, "main");
		return 0;
	}
	return role_name(pod, buf, size);
}

/* A Workload template from a pod: its labels and what muster reads of its spec. */
static json_t *template_of(json_t *pod)
{
	json_t *spec = json_object_get(pod, "spec");
	json_t *out = json_object(), *tspec = role_shape(pod);
	json_t *labels = json_deep_copy(obj_path(pod, "metadata.labels"));
	if (!out || !tspec) {
		json_decref(out);
		json_decref(tspec);
		json_decref(labels);
		return NULL;
	}
	json_object_del(labels, LABEL_MANAGED);
	if (labels)
		json_object_set_new(out, "metadata", json_pack("{s:o}", "labels", labels));
	json_t *rp = json_object_get(spec, "restartPolicy");
	if (rp)
		json_object_set(tspec, "restartPolicy", rp);
	json_object_set_new(out, "spec", tspec);
	return out;
}

/* The pods that make the group's PodSets: not failed (a failed pod waits for its replacement),
 * the oldest first, at most totalCount of them. */
static size_t members(json_t *group, json_t **out, size_t cap)
{
	json_t *pods = json_object_get(group, "pods"), *p;
	size_t n = 0, i;
	json_array_foreach(pods, i, p)
	{
		if (pod_phase_is(p, "Failed") || n == cap)
			continue;
		size_t at = n++;
		while (at > 0 && older(p, out[at - 1])) {
			out[at] = out[at - 1];
			at--;
		}
		out[at] = p;
	}
	return n;
}

static json_t *pod_podsets(json_t *group, char *err, size_t errlen)
{
	int64_t total = json_integer_value(json_object_get(group, "totalCount"));
	json_t **pods = calloc(total > 0 ? (size_t)total : 1, sizeof(*pods));
	json_t *list = json_array();
	if (!pods || !list) {
		free(pods);
		json_decref(list);
		eobj_nomem(err, errlen);
		return NULL;
	}
	size_t n = members(group, pods, (size_t)total);
	int single = !obj_label(group, LABEL_POD_GROUP);
	for (size_t i = 0; i < n; i++) {
		char name[16], path[64];
		if (single)
			snprintf(name, sizeof(name), "main");
		else if (role_name(pods[i], name, sizeof(name)) != 0)
			goto nomem;
		/* Same role: one more pod of that PodSet. */
		json_t *ps;
		size_t k;
		int found = 0;
		json_array_foreach(list, k, ps)
		{
			if (!strcmp(json_string_value(json_object_get(ps, "name")), name)) {
				json_object_set_new(ps, "count",
						    json_integer(
							    json_integer_value(
								    json_object_get(ps, "count")) +
							    1));
				found = 1;
			}
		}
		if (found)
			continue;
		json_t *tmpl = template_of(pods[i]);
		snprintf(path, sizeof(path), "pods[%zu].spec", i);
		ps = tmpl ? integration_podset(name, 1, tmpl, path, NULL, err, errlen) : NULL;
		json_decref(tmpl);
		if (!ps) {
			if (!tmpl)
				eobj_nomem(err, errlen);
			json_decref(list);
			free(pods);
			return NULL;
		}
		if (json_array_append_new(list, ps) != 0)
			goto nomem;
	}
	free(pods);
	return list;
nomem:
	free(pods);
	json_decref(list);
	eobj_nomem(err, errlen);
	return NULL;
}

static void pod_template_path(json_t *group, size_t i, char *buf, size_t size)
{
	(void)group;
	snprintf(buf, size, "spec.podSets[%zu].template", i);
}

static json_t *no_template(json_t *group, size_t i)
{
	(void)group, (void)i;
	return NULL;
}

static int no_count(json_t *group, size_t i, int64_t count)
{
	(void)group, (void)i, (void)count;
	return -ENOTSUP;
}

/* Held while any pod still waits at the admission gate. */
static int pod_held(json_t *group)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(group, "pods"), i, p) if (pod_gated(p)) return 1;
	return 0;
}

static int pod_set_held(json_t *group, int held)
{
	(void)group, (void)held;
	return -ENOTSUP; /* a gate can't be put back: the manager deletes the pods instead */
}

static int pod_finished(json_t *group, struct integration_result *out)
{
	int64_t total = json_integer_value(json_object_get(group, "totalCount")), succeeded = 0;
	size_t i;
	json_t *p;
	/* A Pod alone ends with its pod: there is nothing to replace it in a group. */
	if (!obj_label(group, LABEL_POD_GROUP)) {
		json_t *pod = json_array_get(json_object_get(group, "pods"), 0);
		if (!pod_terminal(pod))
			return 0;
		int ok = pod_phase_is(pod, "Succeeded");
		*out = (struct integration_result){ ok ? "Succeeded" : "Failed",
						    ok ? "The pod succeeded" : "The pod failed" };
		return 1;
	}
	json_array_foreach(json_object_get(group, "pods"), i, p)
	{
		const char *retriable = obj_annotation(p, ANNOTATION_RETRIABLE_IN_GROUP);
		if (pod_phase_is(p, "Failed") && retriable && !strcmp(retriable, "false")) {
			*out = (struct integration_result){ "Failed",
							    "A pod of the group failed and is "
							    "not retriable in its group" };
			return 1;
		}
		succeeded += pod_phase_is(p, "Succeeded");
	}
	if (succeeded >= total) {
		*out = (struct integration_result){ "Succeeded",
						    "Every pod of the group succeeded" };
		return 1;
	}
	return 0;
}

static int pod_ready(json_t *pod)
{
	size_t i;
	json_t *c;
	if (pod_phase_is(pod, "Succeeded"))
		return 1;
	if (!pod_phase_is(pod, "Running"))
		return 0;
	json_array_foreach(obj_path(pod, "status.conditions"), i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));
		const char *status = json_string_value(json_object_get(c, "status"));
		if (type && !strcmp(type, "Ready"))
			return status && !strcmp(status, "True");
	}
	return 0;
}

static int pod_pods_ready(json_t *group, int64_t want)
{
	int64_t ready = 0;
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(group, "pods"), i, p) ready += pod_ready(p);
	return ready >= want;
}

/* Pods that may run: released (no gate) and not ended. */
static int64_t pod_active(json_t *group)
{
	int64_t n = 0;
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(group, "pods"), i, p)
		n += !pod_gated(p) && !pod_terminal(p);
	return n;
}

static const char *pod_started_at(json_t *group)
{
	(void)group;
	return NULL;
}

/* A group's Workload is named by the group, a Pod alone's as Kueue names it for its owner. */
static int pod_workload_name(json_t *group, char *buf, size_t size)
{
	const char *name = obj_name(group);
	if (obj_label(group, LABEL_POD_GROUP))
		return (size_t)snprintf(buf, size, "%s", name ? name : "") < size && name ? 0 :
											    -ENOSPC;
	return integration_workload_name(&integration_pod, name, obj_uid(group), buf, size);
}

/* Every pod of a group owns its Workload (none as controller), so the Workload goes with the
 * last of them; a Pod alone is its Workload's controller, as for other kinds. */
static json_t *pod_owner_references(json_t *group)
{
	json_t *refs = json_array(), *p;
	size_t i;
	int single = !obj_label(group, LABEL_POD_GROUP);
	json_array_foreach(json_object_get(group, "pods"), i, p)
	{
		json_t *ref = json_pack("{s:s, s:s, s:s?, s:s?}", "apiVersion", "v1", "kind", "Pod",
					"name", obj_name(p), "uid", obj_uid(p));
		if (ref && single) {
			json_object_set_new(ref, "controller", json_true());
			json_object_set_new(ref, "blockOwnerDeletion", json_true());
		}
		if (!ref || json_array_append_new(refs, ref) != 0) {
			json_decref(refs);
			return NULL;
		}
	}
	return refs;
}

const struct integration integration_pod = {
	.framework = "pod",
	.api_version = "v1",
	.kind = "Pod",
	.group = "",
	.plural = "pods",
	.podsets = pod_podsets,
	.template_path = pod_template_path,
	.template_at = no_template,
	.set_count = no_count,
	.held = pod_held,
	.set_held = pod_set_held,
	.finished = pod_finished,
	.pods_ready = pod_pods_ready,
	.active_pods = pod_active,
	.started_at = pod_started_at,
	.before_restore = NULL,
	.workload_name = pod_workload_name,
	.owner_references = pod_owner_references,
};
