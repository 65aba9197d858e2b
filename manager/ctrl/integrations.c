/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The owners of Workloads: every integrated kind (api/integrations.h) runs through the same
 * steps. A queued object is held and gets a Workload; an admitted Workload releases it with
 * the flavors' node labels and tolerations and the placement hints; its pods' readiness is
 * tracked; an evicted one is held again and restored, and its quota freed once no pod is left;
 * a finished one finishes its Workload. An object that runs without an admitted Workload is
 * held again.
 *
 * Every write is one merge patch, the difference between the cached object and a copy edited
 * by the kind's own functions (template_at, set_count, set_held), so a kind never builds
 * patches itself, and a field muster did not change is never sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/integrations.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/log.h"

/* The Workload's key of an owner object: its namespace and Kueue's Workload name. */
static int workload_key_of(const struct integration *in, json_t *obj, char *buf, size_t size)
{
	char name[300];
	int rc = integration_workload_name(in, obj_name(obj), obj_uid(obj), name, sizeof(name));
	if (rc == 0 && snprintf(buf, size, "%s/%s", obj_namespace(obj), name) >= (int)size)
		rc = -ENOSPC;
	return rc;
}

static void on_owner_written(struct mgr *m, enum kind kind, const char *key,
			     enum write_outcome outcome, struct write_answer *answer)
{
	json_t *updated = write_answer_object(answer);
	if (outcome != WRITE_OK)
		return; /* the writer retries: the object is decided again after a backoff */
	const struct integration *in = owner_integration(kind);
	int held = updated && in->held(updated);
	char wl_key[600], msg[600];
	/* The assumed copy of a fresh admission, which the cache may not show yet. */
	json_t *wl = updated && workload_key_of(in, updated, wl_key, sizeof(wl_key)) == 0 ?
			     workload_view(m, wl_key) :
			     NULL;
	/* Kueue's Job events: Started when admitted and let go, Stopped when held again. */
	const char *cq = obj_str(wl, "status.admission.clusterQueue");
	if (updated && cq && !held) {
		snprintf(msg, sizeof(msg), "Admitted by clusterQueue %s", cq);
		writer_event(m, kind, updated, EVENT_ROUTINE, "Started", msg);
	} else if (updated && wl && condition_true(wl, "Evicted")) {
		json_t *evicted = condition_get(wl, "Evicted");
		const char *why = json_string_value(json_object_get(evicted, "message"));
		writer_event(m, kind, updated, EVENT_NOTABLE, "Stopped",
			     why ? why : "The workload was evicted");
	}
	log_info(held ? "workload owner held" : "workload owner released", LF_STR("kind", in->kind),
		 LF_STR("object", key), LF_END);
}

/* Patches obj (or its subresource) with the difference to edited, guarded by the
 * resourceVersion it was decided on: a user edit in between makes this a conflict, and the
 * object is decided again when the watch brings the fresh copy. Nothing is sent when the
 * difference is empty. 0, 1 (nothing to send) or -errno. */
static int patch_owner(struct mgr *m, enum kind kind, const char *key, json_t *obj, json_t *edited,
		       const char *subresource)
{
	char path[1024];
	int rc =
		kind_path(kind, obj_namespace(obj), obj_name(obj), subresource, path, sizeof(path));
	if (rc != 0)
		return rc;
	json_t *patch = obj_merge_diff(obj, edited);
	if (!patch)
		return -ENOMEM;
	if (json_object_size(patch) == 0) {
		json_decref(patch);
		return 1;
	}
	return writer_merge_patch(m, kind, key, path, patch,
				  obj_str(obj, "metadata.resourceVersion"), on_owner_written);
}

/* Holds obj (spec.suspend for Jobs and Ray). */
static void hold(struct mgr *m, enum kind kind, const char *key, json_t *obj)
{
	json_t *copy = json_deep_copy(obj);
	if (copy && owner_integration(kind)->set_held(copy, 1) == 0)
		patch_owner(m, kind, key, obj, copy, "");
	json_decref(copy);
}

/* Created, or it existed already (409): either way its watch event is on its way, and until it
 * arrives the owner must not create it again. */
static void on_workload_created(struct mgr *m, enum kind kind, const char *key,
				enum write_outcome outcome, struct write_answer *answer)
{
	json_t *obj = store_get(m, kind, key);
	char wl_key[600], uid[64];
	if (!obj || workload_key_of(owner_integration(kind), obj, wl_key, sizeof(wl_key)) != 0)
		return;
	if (outcome == WRITE_OK || outcome == WRITE_CONFLICT)
		writer_expect(m, K_WORKLOAD, wl_key);
	if (outcome == WRITE_OK) {
		char msg[700];
		snprintf(msg, sizeof(msg), "Created Workload: %s", wl_key);
		writer_event(m, kind, obj, EVENT_ROUTINE, "CreatedWorkload", msg);
		log_info("workload created", LF_STR("workload", wl_key), LF_STR("owner", key),
			 LF_STR("uid", write_answer_meta(answer, "uid", uid, sizeof(uid))), LF_END);
	}
}

static void create_workload(struct mgr *m, enum kind kind, const char *key, json_t *obj)
{
	const struct integration *in = owner_integration(kind);
	char err[512], path[512];
	struct eobj_workload w;

	/* The simulator converts with the same function, so both see the same Workload. */
	if (eobj_workload_for(in, obj, NULL, m->stores[K_WPC], m->stores[K_PC], &w, err,
			      sizeof(err)) != 0) {
		/* Admitting at a guessed priority or count would break the queue's rules; the
		 * object waits, held, and the event says why. A new class brings it back here. */
		writer_event(m, kind, obj, EVENT_WARNING,
			     strstr(err, "PriorityClass") && strstr(err, "doesn't exist") ?
				     "PriorityClassNotFound" :
				     "CreatingWorkloadFailed",
			     err);
		log_warn("cannot build workload", LF_STR("kind", in->kind), LF_STR("object", key),
			 LF_STR("error", err), LF_END);
		eobj_workload_release(&w);
		return;
	}
	/* Keyed by the owner: its own events wait while the create is in flight, and until the
	 * cache shows the Workload (writer_expect) nothing creates it again. */
	if (kind_path(K_WORKLOAD, obj_namespace(obj), NULL, NULL, path, sizeof(path)) == 0)
		writer_send(m, kind, key, "POST", path, NULL, json_incref(w.obj), NULL,
			    on_workload_created);
	eobj_workload_release(&w);
}

/* A PodSet's assignment in status.admission, by name. */
json_t *owner_assignment(json_t *wl, const char *podset)
{
	size_t i;
	json_t *psa;
	json_array_foreach(obj_path(wl, "status.admission.podSetAssignments"), i, psa)
	{
		const char *name = json_string_value(json_object_get(psa, "name"));
		if (name && !strcmp(name, podset))
			return psa;
	}
	return NULL;
}

static json_t *object_member(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_object(v)) {
		v = json_object();
		json_object_set_new(obj, key, v);
	}
	return v;
}

/* Adds the flavors' node labels and tolerations of one PodSet's assignment to a pod template,
 * with our labels and annotation, as Kueue does at start. */
void owner_release_template(struct mgr *m, const char *wl_key, json_t *wl, const char *podset,
			    json_t *psa, json_t *tmpl)
{
	json_t *tspec = object_member(tmpl, "spec");
	json_t *selector = object_member(tspec, "nodeSelector");
	json_t *tolerations = json_object_get(tspec, "tolerations");
	json_t *meta = object_member(tmpl, "metadata");
	const char *res, *slash = strchr(wl_key, '/');
	json_t *fname;

	if (!json_is_array(tolerations)) {
		tolerations = json_array();
		json_object_set_new(tspec, "tolerations", tolerations);
	}
	json_object_foreach(json_object_get(psa, "flavors"), res, fname)
	{
		const char *flavor = json_string_value(fname);
		json_t *rf = flavor ? store_get(m, K_FLAVOR, flavor) : NULL;
		const char *k;
		json_t *v, *t;
		size_t i;
		/* Admission matched the flavor against the pod's own selector, so no key
		 * clashes. */
		json_object_foreach(obj_path(rf, "spec.nodeLabels"), k, v)
			json_object_set(selector, k, v);
		json_array_foreach(obj_path(rf, "spec.tolerations"), i, t)
		{
			int dup = 0;
			size_t j;
			json_t *have;
			json_array_foreach(tolerations, j, have) dup |= json_equal(have, t);
			if (!dup)
				json_array_append(tolerations, t);
		}
	}
	if (!json_object_size(selector))
		json_object_del(tspec, "nodeSelector");
	if (!json_array_size(tolerations))
		json_object_del(tspec, "tolerations");
	json_object_set_new(object_member(meta, "labels"), LABEL_PODSET, json_string(podset));
	json_object_set_new(object_member(meta, "annotations"), ANNOTATION_WORKLOAD,
			    json_string(slash ? slash + 1 : wl_key));
	nodes_start_hints(m, wl_key, wl, podset, tspec);
}

/* Releases an admitted workload's owner: one patch with every PodSet's template and count. */
static void release(struct mgr *m, enum kind kind, const char *key, json_t *obj, const char *wl_key,
		    json_t *wl)
{
	const struct integration *in = owner_integration(kind);
	json_t *copy = json_deep_copy(obj), *ps;
	size_t i;
	if (!copy)
		return;
	json_array_foreach(obj_path(wl, "spec.podSets"), i, ps)
	{
		const char *name = json_string_value(json_object_get(ps, "name"));
		json_t *psa = name ? owner_assignment(wl, name) : NULL;
		json_t *tmpl = in->template_at(copy, i);
		if (!psa)
			continue;
		if (tmpl)
			owner_release_template(m, wl_key, wl, name, psa, tmpl);
		/* Partial admission may lower the count. */
		json_t *count = json_object_get(psa, "count");
		if (json_is_integer(count) &&
		    json_integer_value(count) < json_integer_value(json_object_get(ps, "count")))
			in->set_count(copy, i, json_integer_value(count));
	}
	if (in->set_held(copy, 0) == 0)
		patch_owner(m, kind, key, obj, copy, "");
	json_decref(copy);
}

/* Undoes release_template from the original template kept in the Workload, in place: the
 * node selector and tolerations go back to the original's, our label and annotation go, and
 * the hints (nodes_stop_restore). Other labels stay (the Job API requires its selector's). */
static void restore_template(json_t *tmpl, json_t *orig)
{
	json_t *tspec = object_member(tmpl, "spec");
	json_t *ospec = json_object_get(orig, "spec");
	static const char *const fields[] = { "nodeSelector", "tolerations" };
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		json_t *v = json_object_get(ospec, fields[f]);
		if (v)
			json_object_set(tspec, fields[f], v);
		else
			json_object_del(tspec, fields[f]);
	}
	json_t *meta = json_object_get(tmpl, "metadata");
	json_object_del(json_object_get(meta, "labels"), LABEL_PODSET);
	json_object_del(json_object_get(meta, "annotations"), ANNOTATION_WORKLOAD);
	nodes_stop_restore(ospec, tspec);
}

/* The owner as it was before release: templates and counts from the Workload. A new
 * reference, or NULL. */
static json_t *restored(const struct integration *in, json_t *obj, json_t *wl)
{
	char err[256];
	json_t *copy = json_deep_copy(obj), *ps;
	json_t *now = in->podsets(obj, err, sizeof(err));
	size_t i;
	json_array_foreach(obj_path(wl, "spec.podSets"), i, ps)
	{
		json_t *tmpl = copy ? in->template_at(copy, i) : NULL;
		if (tmpl)
			restore_template(tmpl, json_object_get(ps, "template"));
		/* Partial admission lowered the count at release; the requeued Workload asks for
		 * its full count again, so the owner must too. */
		json_t *want = json_object_get(ps, "count");
		json_t *have = json_object_get(json_array_get(now, i), "count");
		if (copy && json_is_integer(want) && json_is_integer(have) &&
		    json_integer_value(have) != json_integer_value(want))
			in->set_count(copy, i, json_integer_value(want));
	}
	json_decref(now);
	return copy;
}

static void on_requeued(struct mgr *m, enum kind kind, const char *key, enum write_outcome outcome,
			struct write_answer *answer)
{
	json_t *updated = write_answer_object(answer);
	(void)kind;
	if (outcome == WRITE_OK && updated)
		history_requeued(m, updated);
	workload_log_landed(outcome, "evicted workload requeued", key, updated, "Requeued");
}

static void on_finished(struct mgr *m, enum kind kind, const char *key, enum write_outcome outcome,
			struct write_answer *answer)
{
	json_t *updated = write_answer_object(answer);
	(void)kind;
	if (outcome == WRITE_OK && updated)
		history_finished(m, updated);
	workload_log_landed(outcome, "workload finished", key, updated, "Finished");
}

void owner_finish_workload(struct mgr *m, const char *wl_key, json_t *wl,
			   const struct integration_result *result)
{
	int changed;
	if (condition_true(wl, "Finished") || writer_busy(m, K_WORKLOAD, wl_key))
		return;
	json_t *conds =
		conditions_with(wl, "Finished", "True", result->reason, result->message, &changed);
	workload_write_status(m, wl_key, wl, json_pack("{s:o}", "conditions", conds), on_finished);
}

/* Once an evicted Workload's owner has no active pod, its quota can go: the admission is
 * cleared and the Workload requeued (Kueue keeps the quota until the pods are gone too). */
void owner_release_evicted(struct mgr *m, const char *wl_key, json_t *wl)
{
	json_t *evicted = condition_get(wl, "Evicted");
	const char *reason = json_string_value(json_object_get(evicted, "reason"));
	const char *message = json_string_value(json_object_get(evicted, "message"));
	int changed;
	json_t *tmp = json_deep_copy(wl);
	json_t *conds = conditions_with(tmp, "QuotaReserved", "False", reason ? reason : "Evicted",
					message ? message : "The workload was evicted", &changed);
	json_object_set_new(json_object_get(tmp, "status"), "conditions", conds);
	conds = conditions_with(tmp, "Admitted", "False", "NoReservation",
				"The workload has no reservation", &changed);
	json_object_set_new(json_object_get(tmp, "status"), "conditions", conds);
	conds = conditions_with(tmp, "Requeued", "True", reason ? reason : "Evicted",
				"The workload is requeued after its eviction", &changed);
	json_decref(tmp);
	workload_write_status(m, wl_key, wl,
			      json_pack("{s:n, s:o}", "admission", "conditions", conds),
			      on_requeued);
}

/* Eviction is a sequence, one step per event of the owner, because some kinds let the pod
 * template change only while held and never started: hold, the kind's own step (a Job's
 * status.startTime goes, as Kueue does), restore the templates and counts, then release the
 * quota once no pod is left. */
static void evict_step(struct mgr *m, enum kind kind, const char *key, json_t *obj,
		       const char *wl_key, json_t *wl)
{
	const struct integration *in = owner_integration(kind);
	json_t *patch = NULL;
	const char *sub = "";
	if (!in->held(obj)) {
		hold(m, kind, key, obj);
		log_debug("evicting: hold", LF_STR("object", key), LF_END);
		return;
	}
	if (in->before_restore && in->before_restore(obj, &patch, &sub)) {
		char path[1024];
		if (kind_path(kind, obj_namespace(obj), obj_name(obj), sub, path, sizeof(path)) !=
		    0) {
			json_decref(patch);
			return;
		}
		if (writer_merge_patch(m, kind, key, path, patch,
				       obj_str(obj, "metadata.resourceVersion"),
				       on_owner_written) == 0)
			log_debug("evicting: step before restore", LF_STR("object", key), LF_END);
		return;
	}
	json_t *copy = restored(in, obj, wl);
	int rc = copy ? patch_owner(m, kind, key, obj, copy, "") : -ENOMEM;
	json_decref(copy);
	if (rc == 0)
		log_debug("evicting: restore templates", LF_STR("object", key), LF_END);
	if (rc == 1 && in->active_pods(obj) == 0 && !writer_busy(m, K_WORKLOAD, wl_key))
		owner_release_evicted(m, wl_key, wl);
}

/*
 * waitForPodsReady: the Workload's PodsReady condition follows its owner's pods (the kind
 * says whether the admitted count runs). Pods that don't all get ready within the timeout of
 * admission (or within recoveryTimeout of losing readiness) get the Workload evicted and
 * requeued with a backoff; until then a deadline brings the owner back here, so nothing polls.
 */
void owner_track_pods_ready(struct mgr *m, enum kind kind, const char *key, json_t *obj,
			    const char *wl_key, json_t *wl)
{
	const struct integration *in = owner_integration(kind);
	json_int_t want = 0;
	size_t i;
	json_t *psa;
	/* As Kueue: the PodsReady condition is kept only with waitForPodsReady on (off, it was a
	 * status write or two per Workload that nothing reads). */
	if (!m->conf.wait_for_pods_ready)
		return;
	json_array_foreach(obj_path(wl, "status.admission.podSetAssignments"), i, psa)
		want += json_integer_value(json_object_get(psa, "count"));
	json_t *prev = condition_get(wl, "PodsReady");
	const char *prev_status = json_string_value(json_object_get(prev, "status"));
	int was_ready = prev_status && !strcmp(prev_status, "True");
	const char *prev_reason = json_string_value(json_object_get(prev, "reason"));
	int ready = in->pods_ready(obj, want);
	const char *reason =
		ready ? (prev_reason && !strcmp(prev_reason, "WaitForRecovery") ? "Recovered" :
										  "Started") :
			(was_ready || (prev_reason && !strcmp(prev_reason, "WaitForRecovery")) ?
				 "WaitForRecovery" :
				 "WaitForStart");
	const char *msg = ready ? "All pods reached readiness and the workload is running" :
				  "Not all pods are ready or succeeded";
	int changed;
	json_t *conds =
		conditions_with(wl, "PodsReady", ready ? "True" : "False", reason, msg, &changed);
	if (conds && changed && !writer_busy(m, K_WORKLOAD, wl_key)) {
		workload_write_status(m, wl_key, wl, json_pack("{s:o}", "conditions", conds), NULL);
		return; /* decide on the timeout once the condition is written */
	}
	json_decref(conds);
	if (ready)
		return;
	/* The clock runs from admission, or from the loss of readiness when recovering. Pods can
	 * exist only once the owner is released: one still held (a leader that admitted it died
	 * before releasing it, and the next took over a leaseDuration later) has not used any of
	 * its time, and one started later than its admission counts from its start (a Job's
	 * status.startTime, which the Job controller resets on every resume). */
	int recovering = !strcmp(reason, "WaitForRecovery");
	int64_t since, started,
		limit = recovering ? m->conf.recovery_timeout_ms : m->conf.pods_ready_timeout_ms;
	const char *start =
		json_string_value(json_object_get(recovering ? prev : condition_get(wl, "Admitted"),
						  "lastTransitionTime"));
	if (limit <= 0 || time_parse_rfc3339(start, &since) != 0)
		return;
	if (!recovering) {
		if (in->held(obj))
			return; /* its release (an event of the owner) brings it back here */
		/* The clock starts at the release, which PodsReady=False (WaitForStart) records as
		 * it is first written after it: a leader that admitted and died before releasing
		 * leaves the next one a full timeout, even before the Job controller set the
		 * Job's status.startTime (which, when later, counts instead). */
		int64_t released;
		if (prev_reason && !strcmp(prev_reason, "WaitForStart") &&
		    time_parse_rfc3339(json_string_value(
					       json_object_get(prev, "lastTransitionTime")),
				       &released) == 0 &&
		    released > since)
			since = released;
		if (time_parse_rfc3339(in->started_at(obj), &started) == 0 && started > since)
			since = started;
	}
	if (m->now_ms() >= since + limit) {
		char why[200];
		snprintf(why, sizeof(why), "Not all pods are ready or succeeded within %llds of %s",
			 (long long)(limit / 1000), recovering ? "losing readiness" : "admission");
		workload_evict_pods_ready(m, wl_key, wl, why);
	} else {
		state_at(m, kind, key, since + limit);
	}
}

void owner_reconcile(struct mgr *m, enum kind kind, const char *key)
{
	const struct integration *in = owner_integration(kind);
	json_t *obj = in ? store_get(m, kind, key) : NULL;
	struct integration_result result;
	char wl_key[600];

	/* A write of ours for this object is in flight, or landed and the cache hasn't caught up:
	 * its completion or the watch event brings the object back here. */
	if (!obj || writer_busy(m, kind, key) ||
	    writer_lagging(m, kind, key, obj_str(obj, "metadata.resourceVersion")))
		return;
	/* An object on its way out needs nothing more; in a terminating namespace nothing can be
	 * created anyway (the apiserver answers 403). */
	json_t *ns = store_get(m, K_NAMESPACE, obj_namespace(obj));
	const char *phase = obj_str(ns, "status.phase");
	if (obj_path(obj, "metadata.deletionTimestamp") || (phase && !strcmp(phase, "Terminating")))
		return;
	/* An object an integrated owner made (a RayJob's RayCluster, which KubeRay gives the
	 * RayJob's labels, queue included) is its owner's business: never queued on its own. */
	if (integration_owned(obj))
		return;
	const char *queue = obj_label(obj, LABEL_QUEUE_NAME);
	if ((!queue || !*queue) && m->conf.manage_without_queue_name &&
	    config_namespace_managed(&m->conf, obj_namespace(obj),
				     obj_path(ns, "metadata.labels")) &&
	    !in->finished(obj, &result)) {
		/* manageJobsWithoutQueueName: it may not run unqueued, and no queue is a guess. */
		if (!in->held(obj))
			hold(m, kind, key, obj);
		writer_event(m, kind, obj, EVENT_WARNING, "NoQueueName",
			     "muster manages every object of this kind in this namespace "
			     "(manageJobsWithoutQueueName): it stays suspended until it names a "
			     "LocalQueue in the label kueue.x-k8s.io/queue-name");
		return;
	}
	if (!queue || !*queue || !obj_uid(obj) ||
	    workload_key_of(in, obj, wl_key, sizeof(wl_key)) != 0)
		return;
	json_t *wl = workload_view(m, wl_key);
	json_t *cached_wl = store_get(m, K_WORKLOAD, wl_key);
	/* Likewise for a write to its Workload. */
	if (cached_wl &&
	    writer_lagging(m, K_WORKLOAD, wl_key, obj_str(cached_wl, "metadata.resourceVersion")))
		return;
	int held = in->held(obj);

	if (in->finished(obj, &result)) {
		if (wl)
			owner_finish_workload(m, wl_key, wl, &result);
		return;
	}
	if (!wl) {
		/* A queued object must not run before admission; if it slipped past the webhook
		 * (created before muster was up), hold it first. */
		if (!held)
			hold(m, kind, key, obj);
		else if (!writer_expected(m, K_WORKLOAD, wl_key))
			create_workload(m, kind, key, obj);
		return;
	}
	const char *owner_uid =
		json_string_value(json_object_get(integration_owner_ref(wl, NULL), "uid"));
	if (!owner_uid || strcmp(owner_uid, obj_uid(obj)) != 0)
		/* a workload of an older object with the same name, about to be collected */
		return;

	int admitted = condition_true(wl, "QuotaReserved") && condition_true(wl, "Admitted") &&
		       !condition_true(wl, "Finished");
	if (admitted && condition_true(wl, "Evicted")) {
		evict_step(m, kind, key, obj, wl_key, wl);
		return;
	}
	if (admitted && !held)
		owner_track_pods_ready(m, kind, key, obj, wl_key, wl);
	if (admitted && held)
		release(m, kind, key, obj, wl_key, wl);
	else if (!admitted && !held && !condition_true(wl, "Finished"))
		hold(m, kind, key, obj);
}
