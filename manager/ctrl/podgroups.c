/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Plain Pods and pod groups (Kueue's pod integration). A queued Pod arrives gated (the
 * webhook); its group is the Pods sharing kueue.x-k8s.io/pod-group-name, or the Pod alone. The
 * group's Workload is made once the group is whole (every one of its total-count pods exists),
 * so a group short of pods holds no quota and blocks nothing; it says why it waits, on its
 * pods. Once admitted, each pod's gate comes off with the flavors' node labels, tolerations
 * and the placement hints set in the same patch (a gated pod's scheduling directives may
 * still gain terms). Eviction deletes the pods, as Kueue does, and the quota goes once none
 * runs. A finished group's pods lose the managed finalizer; until then a pod that ended is
 * still counted.
 *
 * Index: which pods make which group (group key = the Workload's key, "ns/name"), kept as
 * pods come and go, so a group's reconcile reads only its own pods.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/integrations.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/log.h"

/* How long a group may lack pods before its pods say so (a burst of creates is not news). */
#define GROUP_QUIET_MS 5000
/* The most pods one group's reconcile reads (a group larger than POD_GROUP_MAX is refused). */
#define GROUP_READ_MAX (POD_GROUP_MAX + 64)

struct pod_groups {
	struct strmap members; /* group key -> struct keyset * of pod keys */
	struct strmap group_of; /* pod key -> char * group key */
	struct strmap waiting; /* group key -> int64_t * since when it is short of pods (ms) */
};

static void free_keyset(void *v)
{
	keyset_release(v);
	free(v);
}

int podgroups_init(struct mgr *m)
{
	m->groups = calloc(1, sizeof(*m->groups));
	if (!m->groups)
		return -ENOMEM;
	strmap_init(&m->groups->members);
	strmap_init(&m->groups->group_of);
	strmap_init(&m->groups->waiting);
	return 0;
}

void podgroups_release(struct mgr *m)
{
	if (!m->groups)
		return;
	strmap_release(&m->groups->members, free_keyset);
	strmap_release(&m->groups->group_of, free);
	strmap_release(&m->groups->waiting, free);
	free(m->groups);
	m->groups = NULL;
}

static void leave(struct mgr *m, const char *pod_key)
{
	char *group = strmap_remove(&m->groups->group_of, pod_key);
	if (!group)
		return;
	struct keyset *set = strmap_get(&m->groups->members, group);
	if (set) {
		keyset_del(set, pod_key);
		if (keyset_size(set) == 0) {
			free_keyset(strmap_remove(&m->groups->members, group));
			free(strmap_remove(&m->groups->waiting, group));
		}
	}
	state_mark(m, K_PODGROUP, group);
	free(group);
}

void podgroups_on_pod(struct mgr *m, const char *key, json_t *obj)
{
	char wl[300], group[600], err[256];
	int64_t total;
	if (!obj || pod_group_of(obj, wl, sizeof(wl), &total, err, sizeof(err)) != 0) {
		/* Gone, or no longer a member of any group (the webhook refuses a bad label, so
		 * this is a Pod created while muster's webhook was away): say so once. */
		if (obj)
			writer_event(m, K_GPOD, obj, EVENT_WARNING, "PodGroupInvalid", err);
		leave(m, key);
		return;
	}
	snprintf(group, sizeof(group), "%s/%s", obj_namespace(obj), wl);
	const char *was = strmap_get(&m->groups->group_of, key);
	if (was && strcmp(was, group) != 0)
		leave(m, key);
	if (!strmap_get(&m->groups->group_of, key)) {
		struct keyset *set = strmap_get(&m->groups->members, group);
		char *copy = strdup(group);
		if (!set && (set = calloc(1, sizeof(*set))) != NULL &&
		    strmap_put(&m->groups->members, group, set, NULL) != 0) {
			free(set);
			set = NULL;
		}
		if (!set || !copy || keyset_add(set, key) != 0 ||
		    strmap_put(&m->groups->group_of, key, copy, NULL) != 0) {
			free(copy);
			log_error("out of memory indexing a pod group", LF_STR("pod", key), LF_END);
			return;
		}
	}
	state_mark(m, K_PODGROUP, group);
}

static int pod_path(json_t *pod, char *buf, size_t size)
{
	return kind_path(K_GPOD, obj_namespace(pod), obj_name(pod), NULL, buf, size);
}

static void on_pod_written(struct mgr *m, enum kind kind, const char *key,
			   enum write_outcome outcome, struct write_answer *answer)
{
	(void)m, (void)kind;
	if (outcome == WRITE_OK && log_enabled(LOG_DEBUG))
		log_debug("pod written", LF_STR("pod", key),
			  LF_INT("gated", pod_gated(write_answer_object(answer))), LF_END);
}

static int has_our_finalizer(json_t *pod)
{
	return obj_list_has(obj_path(pod, "metadata.finalizers"), NULL, FINALIZER_MANAGED);
}

/* Lets the pod go: the managed finalizer comes off (the list without it, guarded by the
 * pod's resourceVersion). */
static void drop_finalizer(struct mgr *m, const char *key, json_t *pod)
{
	char path[600];
	json_t *rest =
		obj_list_without(obj_path(pod, "metadata.finalizers"), NULL, FINALIZER_MANAGED);
	if (pod_path(pod, path, sizeof(path)) != 0) {
		json_decref(rest);
		return;
	}
	writer_merge_patch(m, K_GPOD, key, path,
			   json_pack("{s:{s:o}}", "metadata", "finalizers", rest),
			   obj_str(pod, "metadata.resourceVersion"), on_pod_written);
}

static void delete_pod(struct mgr *m, const char *key, json_t *pod)
{
	char path[600];
	if (pod_path(pod, path, sizeof(path)) == 0 &&
	    writer_send(m, K_GPOD, key, "DELETE", path, NULL, NULL, NULL, on_pod_written) == 0)
		log_info("deleting pod", LF_STR("pod", key), LF_END);
}

/* Takes the admission gate off one pod, with its PodSet's flavors and hints in the same
 * patch. A gated pod may gain node selector entries, tolerations and node affinity terms;
 * in Exact mode the hints add Kueue's topology gate, and nodes.c gives the pod its node. */
static void release_pod(struct mgr *m, const char *key, json_t *pod, json_t *group,
			const char *wl_key, json_t *wl)
{
	char podset[32], path[600];
	if (pod_podset_name(group, pod, podset, sizeof(podset)) != 0)
		return;
	json_t *psa = owner_assignment(wl, podset);
	if (!psa) {
		/* A pod of another shape than the group's pods had when its Workload was made (a
		 * replacement that changed): no quota was reserved for it. */
		writer_event(m, K_GPOD, pod, EVENT_WARNING, "PodSetNotAdmitted",
			     "This pod's spec differs from every PodSet its group was admitted "
			     "with, so no "
			     "quota covers it; it waits at its gate");
		return;
	}
	json_t *copy = json_deep_copy(pod);
	if (!copy)
		return;
	owner_release_template(m, wl_key, wl, podset, psa, copy);
	json_t *gates =
		obj_list_without(obj_path(copy, "spec.schedulingGates"), "name", GATE_ADMISSION);
	json_object_set_new(json_object_get(copy, "spec"), "schedulingGates", gates);
	json_t *patch = obj_merge_diff(pod, copy);
	json_decref(copy);
	/* Only what muster changed: the status and other fields are left alone. */
	json_object_del(patch, "status");
	if (pod_path(pod, path, sizeof(path)) != 0) {
		json_decref(patch);
		return;
	}
	if (patch &&
	    writer_merge_patch(m, K_GPOD, key, path, patch,
			       obj_str(pod, "metadata.resourceVersion"), on_pod_written) == 0)
		log_info("pod released", LF_STR("pod", key), LF_STR("workload", wl_key),
			 LF_STR("podset", podset), LF_END);
}

static void on_group_workload_created(struct mgr *m, enum kind kind, const char *key,
				      enum write_outcome outcome, struct write_answer *answer)
{
	char uid[64];
	(void)kind;
	if (outcome == WRITE_OK || outcome == WRITE_CONFLICT)
		writer_expect(m, K_WORKLOAD, key);
	if (outcome == WRITE_OK)
		log_info("workload created", LF_STR("workload", key), LF_STR("owner", "pod group"),
			 LF_STR("uid", write_answer_meta(answer, "uid", uid, sizeof(uid))), LF_END);
}

static void create_workload(struct mgr *m, const char *key, json_t *group, json_t *const *pods,
			    size_t n)
{
	char err[512], path[512];
	struct eobj_workload w;
	if (eobj_workload_for(&integration_pod, group, NULL, m->stores[K_WPC], m->stores[K_PC], &w,
			      err, sizeof(err)) != 0) {
		for (size_t i = 0; i < n; i++)
			writer_event(m, K_GPOD, pods[i], EVENT_WARNING,
				     strstr(err, "PriorityClass") && strstr(err, "doesn't exist") ?
					     "PriorityClassNotFound" :
					     "CreatingWorkloadFailed",
				     err);
		log_warn("cannot build workload for pod group", LF_STR("group", key),
			 LF_STR("error", err), LF_END);
		eobj_workload_release(&w);
		return;
	}
	if (kind_path(K_WORKLOAD, obj_namespace(group), NULL, NULL, path, sizeof(path)) == 0)
		writer_send(m, K_PODGROUP, key, "POST", path, NULL, json_incref(w.obj), NULL,
			    on_group_workload_created);
	eobj_workload_release(&w);
}

/* A group short of pods waits without a Workload; after GROUP_QUIET_MS its pods say so. */
static void wait_for_pods(struct mgr *m, const char *key, json_t *group, json_t *const *pods,
			  size_t n, size_t live)
{
	int64_t *since = strmap_get(&m->groups->waiting, key);
	int64_t now = m->now_ms();
	if (!since) {
		since = malloc(sizeof(*since));
		if (!since || strmap_put(&m->groups->waiting, key, since, NULL) != 0) {
			free(since);
			return;
		}
		*since = now;
	}
	if (now < *since + GROUP_QUIET_MS) {
		state_at(m, K_PODGROUP, key, *since + GROUP_QUIET_MS);
		return;
	}
	char msg[512], at[32];
	time_format_rfc3339(*since, at, sizeof(at));
	snprintf(msg, sizeof(msg),
		 "%zu of %lld pods of group %s exist (waiting since %s); the group is admitted "
		 "only "
		 "whole, once all of them exist, and holds no quota until then",
		 live, (long long)json_integer_value(json_object_get(group, "totalCount")),
		 obj_name(group), at);
	for (size_t i = 0; i < n; i++)
		writer_event(m, K_GPOD, pods[i], EVENT_NOTABLE, "WaitingForPodGroup", msg);
}

/* Every pod of the group is gone (deleted, or being deleted without having succeeded): an
 * evicted Workload's quota goes now, and an admitted one finished, failed, as its pods can't
 * come back. A waiting one goes with its pods (they own it). */
static void group_gone(struct mgr *m, const char *key)
{
	json_t *wl = workload_view(m, key);
	if (!wl || condition_true(wl, "Finished") || writer_busy(m, K_WORKLOAD, key) ||
	    !condition_true(wl, "QuotaReserved"))
		return;
	if (condition_true(wl, "Evicted")) {
		owner_release_evicted(m, key, wl);
		return;
	}
	const struct integration_result gone = { "Failed",
						 "The pods of the workload were deleted" };
	owner_finish_workload(m, key, wl, &gone);
}

void podgroup_reconcile(struct mgr *m, const char *key)
{
	struct keyset *set = strmap_get(&m->groups->members, key);
	json_t **pods = NULL, *group = NULL;
	const char **keys = NULL;
	size_t n = 0, live = 0, cap = set ? keyset_size(set) : 0;
	const char *pk;
	char err[512];

	if (cap > GROUP_READ_MAX || writer_busy(m, K_PODGROUP, key))
		return;
	if (!cap) {
		group_gone(m, key);
		return;
	}
	pods = calloc(cap, sizeof(*pods));
	keys = calloc(cap, sizeof(*keys));
	if (!pods || !keys)
		goto out;
	KEYSET_FOREACH(set, i, pk) {
		json_t *pod = store_get(m, K_GPOD, pk);
		if (!pod)
			continue;
		/* A write of ours for a pod is in flight or not seen yet: its answer or its watch
		 * event brings the group back here. */
		if (writer_busy(m, K_GPOD, pk) ||
		    writer_lagging(m, K_GPOD, pk, obj_str(pod, "metadata.resourceVersion")))
			goto out;
		/* Made before muster's webhook was up: it runs ungated, and muster can't hold
		 * it. */
		if (!pod_gated(pod) && !obj_label(pod, LABEL_MANAGED)) {
			writer_event(m, K_GPOD, pod, EVENT_WARNING, "NotManaged",
				     "This Pod was created without muster's admission gate (its "
				     "webhook was "
				     "not installed yet), so it runs unqueued; recreate it to "
				     "queue it");
			continue;
		}
		/* A pod being deleted ends there, unless it succeeded already: that one is still
		 * counted until its group finished. The others are let go at once (their end is
		 * their deletion, and a kubelet may take a while to say so). */
		if (obj_path(pod, "metadata.deletionTimestamp") && !pod_succeeded(pod)) {
			if (has_our_finalizer(pod))
				drop_finalizer(m, pk, pod);
			continue;
		}
		keys[n] = pk;
		pods[n++] = pod;
		live += !pod_terminal(pod) || pod_succeeded(pod);
	}
	if (n == 0) {
		group_gone(m, key);
		goto out;
	}
	group = pod_group_new(pods, n, err, sizeof(err));
	if (!group) {
		/* Admitting on a guess would break the group's promise; each pod says why. */
		for (size_t i = 0; i < n; i++)
			writer_event(m, K_GPOD, pods[i], EVENT_WARNING, "PodGroupInconsistent",
				     err);
		log_warn("pod group not usable", LF_STR("group", key), LF_STR("error", err),
			 LF_END);
		goto out;
	}
	json_t *wl = workload_view(m, key);
	json_t *cached_wl = store_get(m, K_WORKLOAD, key);
	if (cached_wl &&
	    writer_lagging(m, K_WORKLOAD, key, obj_str(cached_wl, "metadata.resourceVersion")))
		goto out;
	struct integration_result result;
	int64_t total = json_integer_value(json_object_get(group, "totalCount"));

	if (integration_pod.finished(group, &result) || (wl && condition_true(wl, "Finished"))) {
		if (wl && !condition_true(wl, "Finished")) {
			owner_finish_workload(m, key, wl, &result);
			goto out;
		}
		/* Finished: its pods need not be counted any more. */
		for (size_t i = 0; i < n; i++)
			if (has_our_finalizer(pods[i]))
				drop_finalizer(m, keys[i], pods[i]);
		goto out;
	}
	if (!wl) {
		if ((int64_t)live < total) {
			wait_for_pods(m, key, group, pods, n, live);
		} else if (!writer_expected(m, K_WORKLOAD, key)) {
			free(strmap_remove(&m->groups->waiting, key));
			create_workload(m, key, group, pods, n);
		}
		goto out;
	}
	/* A Workload none of these pods owns belongs to an earlier group of the same name, whose
	 * pods are gone: the garbage collector takes it, and then this group gets its own. The
	 * garbage collector's question, not Kueue's owner rule: each pod of a group owns its
	 * Workload, none as its controller. */
	int owned = 0;
	for (size_t i = 0; i < n && !owned; i++)
		owned = obj_uid(pods[i]) && obj_owner_ref(wl, 0, NULL, NULL, obj_uid(pods[i]));
	if (!owned)
		goto out;
	int admitted = condition_true(wl, "QuotaReserved") && condition_true(wl, "Admitted");
	if (admitted && condition_true(wl, "Evicted")) {
		/* A gate can't be put back: the pods go, as Kueue stops a pod group, and the quota
		 * with them once none runs. Whatever made them may make them again. */
		for (size_t i = 0; i < n; i++)
			if (!obj_path(pods[i], "metadata.deletionTimestamp") &&
			    !pod_terminal(pods[i]))
				delete_pod(m, keys[i], pods[i]);
		if (integration_pod.active_pods(group) == 0 && !writer_busy(m, K_WORKLOAD, key))
			owner_release_evicted(m, key, wl);
		goto out;
	}
	if (admitted) {
		/* Every pod up to the group's count runs; one more (a replacement made before the
		 * failed pod it replaces was counted out) waits at its gate. */
		int64_t running = 0;
		for (size_t i = 0; i < n; i++)
			running += !pod_gated(pods[i]) &&
				   (!pod_terminal(pods[i]) || pod_succeeded(pods[i]));
		for (size_t i = 0; i < n; i++) {
			if (!pod_gated(pods[i]))
				continue;
			if (running >= total) {
				writer_event(m, K_GPOD, pods[i], EVENT_NOTABLE, "ExcessPod",
					     "The group already runs all of its pods; this one "
					     "waits at its gate");
				continue;
			}
			release_pod(m, keys[i], pods[i], group, key, wl);
			running++;
		}
		if (!integration_pod.held(group))
			owner_track_pods_ready(m, K_PODGROUP, key, group, key, wl);
		goto out;
	}
	/* Not admitted (waiting, or requeued after an eviction): a pod that runs anyway has no
	 * quota; stop it. One that ended while being deleted needs counting no more. */
	for (size_t i = 0; i < n; i++) {
		int deleting = obj_path(pods[i], "metadata.deletionTimestamp") != NULL;
		if (!pod_gated(pods[i]) && !pod_terminal(pods[i]) && !deleting)
			delete_pod(m, keys[i], pods[i]);
		else if (deleting && pod_terminal(pods[i]) && has_our_finalizer(pods[i]))
			drop_finalizer(m, keys[i], pods[i]);
	}
out:
	json_decref(group);
	free(pods);
	free(keys);
}
