/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The integration seam's shared parts: the table of kinds, Kueue's Workload names, PodSets
 * with their topology requests, and the Workload an owner gets. See integrations.h.
 */
#include "api/integrations.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/objects.h"

#define INTEGRATION_ADDRESS(name, in) &in,
static const struct integration *const all[] = { INTEGRATED_OWNERS(INTEGRATION_ADDRESS) &
						 integration_pod };
#undef INTEGRATION_ADDRESS
#define N_ALL (sizeof(all) / sizeof(all[0]))

const struct integration *integration_for(const char *api_version, const char *kind)
{
	for (size_t i = 0; api_version && kind && i < N_ALL; i++)
		if (!strcmp(all[i]->api_version, api_version) && !strcmp(all[i]->kind, kind))
			return all[i];
	return NULL;
}

const struct integration *integration_by_framework(const char *framework)
{
	for (size_t i = 0; framework && i < N_ALL; i++)
		if (!strcmp(all[i]->framework, framework))
			return all[i];
	return NULL;
}

json_t *integration_owner_ref(json_t *obj, const struct integration **in)
{
	json_t *ref = obj_owner_ref(obj, 1, NULL, NULL, NULL);
	const struct integration *found =
		ref ? integration_for(json_string_value(json_object_get(ref, "apiVersion")),
				      json_string_value(json_object_get(ref, "kind"))) :
		      NULL;
	if (in)
		*in = found;
	return found ? ref : NULL;
}

int integration_owned(json_t *obj)
{
	return integration_owner_ref(obj, NULL) != NULL;
}

const char *integration_version(const struct integration *in)
{
	const char *slash = strchr(in->api_version, '/');
	return slash ? slash + 1 : in->api_version;
}

const struct integration *const *integration_all(size_t *n)
{
	*n = N_ALL;
	return all;
}

int integration_workload_name(const struct integration *in, const char *name, const char *uid,
			      char *buf, size_t size)
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int digest_len = 0;
	char input[1024], prefix[64];
	int n = snprintf(input, sizeof(input), "%s\n%s\n%s\n%s", in->kind, in->group, name, uid);
	if (n < 0 || (size_t)n >= sizeof(input))
		return -EINVAL;
	if (!EVP_Digest(input, (size_t)n, digest, &digest_len, EVP_sha1(), NULL))
		return -EIO;
	size_t k = 0;
	for (; in->kind[k] && k < sizeof(prefix) - 1; k++)
		prefix[k] = (char)tolower((unsigned char)in->kind[k]);
	prefix[k] = '\0';
	/* "<kind>-" + name, cut to 253 - 1 - 5 characters, then "-" + 5 hex digits of the hash. */
	int keep = 247 - (int)k - 1;
	n = snprintf(buf, size, "%s-%.*s-%02x%02x%x", prefix, keep < 0 ? 0 : keep, name, digest[0],
		     digest[1], digest[2] >> 4);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

/*
 * The topologyRequest Kueue's jobframework derives from a pod template's annotations:
 * required, else preferred, else unconstrained; *out stays NULL without any of them. Its
 * webhooks refuse a template with more than one, or an unconstrained value that isn't a
 * boolean (Go's strconv.ParseBool spellings), so those fail here.
 */
static int topology_request(json_t *template, const char *path, const char *pod_index_label,
			    json_t **out, char *err, size_t errlen)
{
	static const char *const keys[] = { "kueue.x-k8s.io/podset-required-topology",
					    "kueue.x-k8s.io/podset-preferred-topology",
					    "kueue.x-k8s.io/podset-unconstrained-topology" };
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
	json_t *ann = obj_path(template, "metadata.annotations");
	const char *value[3];
	int found = 0, which = -1;

	*out = NULL;
	for (int i = 0; i < 3; i++) {
		json_t *v = json_object_get(ann, keys[i]);
		value[i] = json_string_value(v);
		if (!v)
			continue;
		if (!value[i] || (i < 2 && !*value[i]))
			return eobj_bad(err, errlen,
					"%s.metadata.annotations[\"%s\"]: must be a non-empty "
					"string",
					path, keys[i]);
		found++;
		if (which < 0)
			which = i;
	}
	if (found > 1)
		return eobj_bad(err, errlen,
				"%s.metadata.annotations: must not contain more than one topology "
				"annotation: "
				"[\"%s\", \"%s\", \"%s\"]",
				path, keys[0], keys[1], keys[2]);
	if (which < 0)
		return 0;
	json_t *tr = pod_index_label ? json_pack("{s:s}", "podIndexLabel", pod_index_label) :
				       json_object();
	if (!tr)
		return eobj_nomem(err, errlen);
	int rc = 0;
	if (which < 2) {
		rc = json_object_set_new(tr, which ? "preferred" : "required",
					 json_string(value[which]));
	} else {
		int b = -1;
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (!strcmp(value[2], yes[i]))
				b = 1;
			if (!strcmp(value[2], no[i]))
				b = 0;
		}
		if (b < 0) {
			json_decref(tr);
			return eobj_bad(err, errlen,
					"%s.metadata.annotations[\"%s\"]: invalid value \"%.64s\": "
					"must be a boolean value",
					path, keys[2], value[2]);
		}
		rc = json_object_set_new(tr, "unconstrained", json_boolean(b));
	}
	if (rc != 0) {
		json_decref(tr);
		return eobj_nomem(err, errlen);
	}
	*out = tr;
	return 0;
}

json_t *integration_podset(const char *name, int64_t count, json_t *template, const char *path,
			   const char *pod_index_label, char *err, size_t errlen)
{
	json_t *topology = NULL;
	if (eobj_check_template(template, path, err, errlen) != 0 ||
	    topology_request(template, path, pod_index_label, &topology, err, errlen) != 0)
		return NULL;
	/* A copy of the template, so the Workload owns it and the kind's is left alone. */
	json_t *ps = json_pack("{s:s, s:I, s:o}", "name", name, "count", (json_int_t)count,
			       "template", json_deep_copy(template));
	if (!ps || (topology && json_object_set(ps, "topologyRequest", topology) != 0)) {
		json_decref(ps);
		ps = NULL;
		eobj_nomem(err, errlen);
	}
	json_decref(topology);
	return ps;
}

json_t *integration_workload_new(const struct integration *in, json_t *obj, char *err,
				 size_t errlen)
{
	const char *name = obj_name(obj), *ns = obj_namespace(obj), *uid = obj_uid(obj);
	const char *queue = obj_label(obj, LABEL_QUEUE_NAME);
	char wl_name[300];

	if (!name || !ns || !uid || !queue || !*queue) {
		eobj_bad(err, errlen, "%s has no name, namespace, uid or queue name", in->kind);
		return NULL;
	}
	if ((in->workload_name ?
		     in->workload_name(obj, wl_name, sizeof(wl_name)) :
		     integration_workload_name(in, name, uid, wl_name, sizeof(wl_name))) != 0) {
		eobj_bad(err, errlen, "cannot derive a workload name");
		return NULL;
	}
	json_t *podsets = in->podsets(obj, err, errlen);
	if (!podsets)
		return NULL;
	json_t *refs = in->owner_references ?
			       in->owner_references(obj) :
			       json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion",
					 in->api_version, "kind", in->kind, "name", name, "uid",
					 uid, "controller", 1, "blockOwnerDeletion", 1);
	json_t *wl = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:o}, s:{s:s, s:o}}", "apiVersion",
			       KUEUE_API_VERSION, "kind", "Workload", "metadata", "name", wl_name,
			       "namespace", ns, "labels", LABEL_JOB_UID, uid, "ownerReferences",
			       refs, "spec", "queueName", queue, "podSets", podsets);
	if (!wl)
		eobj_nomem(err, errlen);
	return wl;
}

int eobj_workload_for(const struct integration *in, json_t *obj, const char *default_namespace,
		      json_t *wpcs, json_t *pcs, struct eobj_workload *out, char *err,
		      size_t errlen)
{
	return eobj_workload_decode_owner(in, obj, default_namespace, wpcs, pcs,
					  integration_workload_new, out, err, errlen);
}
