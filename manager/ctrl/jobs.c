/* SPDX-License-Identifier: Apache-2.0 */
/*
 * batch/v1 Job integration: a queued Job gets a Workload; an admitted Workload starts its Job
 * with the flavors' node labels and tolerations; a finished Job finishes its Workload, which
 * releases its quota. A Job that runs without an admitted Workload is suspended again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/log.h"

static int job_finished(json_t *job, const char **how)
{
	if (condition_true(job, "Complete")) {
		*how = "Succeeded";
		return 1;
	}
	if (condition_true(job, "Failed")) {
		*how = "Failed";
		return 1;
	}
	return 0;
}

static void on_job_written(struct mgr *m, enum kind kind, const char *key,
			   enum write_outcome outcome, json_t *updated)
{
	(void)m;
	(void)kind;
	if (outcome != WRITE_OK)
		return; /* the writer retries: the Job is decided again after a backoff */
	int suspended = json_is_true(obj_path(updated, "spec.suspend"));
	log_info(suspended ? "job suspended" : "job started", LF_STR("job", key), LF_END);
}

/* Patches the Job (or its subresource), guarded by the resourceVersion it was decided on: a
 * user edit in between makes this a conflict, and the Job is decided again when the watch
 * brings the fresh copy. */
static int patch_job_at(struct mgr *m, json_t *job, const char *key, json_t *patch,
			const char *subresource)
{
	char path[1024];
	snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs/%s%s", obj_namespace(job),
		 obj_name(job), subresource);
	return writer_merge_patch(m, K_JOB, key, path, patch, obj_str(job, "metadata.resourceVersion"),
				  on_job_written);
}

static int patch_job(struct mgr *m, json_t *job, const char *key, json_t *patch)
{
	return patch_job_at(m, job, key, patch, "");
}

/* The Workload key a Job's create was for, from the created object or the Job's key. */
static void on_workload_created(struct mgr *m, enum kind kind, const char *key,
				enum write_outcome outcome, json_t *updated)
{
	(void)kind;
	json_t *job = store_get(m, K_JOB, key);
	char wl_name[300], wl_key[600];
	if (!job || workload_name_for_job(obj_name(job), obj_uid(job), wl_name, sizeof(wl_name)) != 0)
		return;
	snprintf(wl_key, sizeof(wl_key), "%s/%s", obj_namespace(job), wl_name);
	/* Created, or it existed already (409): either way its watch event is on its way, and
	 * until it arrives the Job must not create it again. */
	if (outcome == WRITE_OK || outcome == WRITE_CONFLICT)
		writer_expect(m, K_WORKLOAD, wl_key);
	if (outcome == WRITE_OK)
		log_info("workload created", LF_STR("workload", wl_key), LF_STR("job", key),
			 LF_STR("uid", obj_uid(updated)), LF_END);
}

static void create_workload(struct mgr *m, const char *key, json_t *job)
{
	char err[512], path[512];
	struct eobj_workload w;

	/* The simulator converts Jobs with the same function, so both see the same Workload. */
	if (eobj_workload_from_job(job, NULL, m->stores[K_WPC], m->stores[K_PC], &w, err,
				   sizeof(err)) != 0) {
		/* Admitting at a guessed priority or count would break the queue's rules; the Job
		 * waits, suspended, and the event says why. A new class brings it back here. */
		writer_event(m, K_JOB, job, "Warning",
			     strstr(err, "PriorityClass") && strstr(err, "doesn't exist") ? "PriorityClassNotFound" :
											     "CreatingWorkloadFailed",
			     err);
		log_warn("cannot build workload for job", LF_STR("job", key), LF_STR("error", err), LF_END);
		eobj_workload_release(&w);
		return;
	}
	snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads",
		 obj_namespace(job));
	/* Keyed by the Job: its own events wait while the create is in flight, and until the
	 * cache shows the Workload (writer_expect) nothing creates it again. */
	writer_send(m, K_JOB, key, "POST", path, NULL, json_incref(w.obj), NULL, on_workload_created);
	eobj_workload_release(&w);
}

/* Undoes start_patch from the original template kept in the Workload: flavor node labels that
 * the original lacks are removed, tolerations go back to the original list, and our podset
 * label goes. The Job's selector labels are left alone (the Job API requires them). */
static json_t *stop_patch(json_t *job, json_t *wl)
{
	json_t *orig = obj_path(json_array_get(obj_path(wl, "spec.podSets"), 0), "template.spec");
	json_t *orig_sel = json_object_get(orig, "nodeSelector");
	json_t *cur_sel = obj_path(job, "spec.template.spec.nodeSelector");
	json_t *selector = json_object();
	const char *k;
	json_t *v;
	json_object_foreach(cur_sel, k, v)
		if (!json_object_get(orig_sel, k))
			json_object_set_new(selector, k, json_null());
	json_object_foreach(orig_sel, k, v)
		json_object_set(selector, k, v);
	json_t *tol = json_object_get(orig, "tolerations");
	json_t *patch = json_pack("{s:{s:{s:{s:{s:n}}, s:{s:o, s:O}}}}", "spec", "template", "metadata",
				  "labels", LABEL_PODSET, "spec", "nodeSelector", selector, "tolerations",
				  tol ? tol : json_null());
	nodes_stop_restore(orig, obj_path(patch, "spec.template.spec"));
	/* Partial admission lowered parallelism at start; the requeued Workload asks for its
	 * full count again, so the Job must too (Kueue restores it with the pod-set info). */
	json_t *count = obj_path(json_array_get(obj_path(wl, "spec.podSets"), 0), "count");
	json_t *parallelism = obj_path(job, "spec.parallelism");
	if (patch && json_is_integer(count) && json_is_integer(parallelism) &&
	    json_integer_value(parallelism) < json_integer_value(count))
		json_object_set(json_object_get(patch, "spec"), "parallelism", count);
	return patch;
}

static void on_requeued(struct mgr *m, enum kind kind, const char *key, enum write_outcome outcome,
			json_t *updated)
{
	(void)m, (void)kind;
	workload_log_landed(outcome, "evicted workload requeued", key, updated, "Requeued");
}

static void on_finished(struct mgr *m, enum kind kind, const char *key, enum write_outcome outcome,
			json_t *updated)
{
	(void)m, (void)kind;
	workload_log_landed(outcome, "workload finished", key, updated, "Finished");
}

/* Once an evicted Workload's Job has no active pod, its quota can go: the admission is
 * cleared and the Workload requeued (Kueue keeps the quota until the pods are gone too). */
static void release_evicted(struct mgr *m, const char *wl_key, json_t *wl)
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
	workload_write_status(m, wl_key, wl, json_pack("{s:n, s:o}", "admission", "conditions", conds),
			      on_requeued);
}

/*
 * waitForPodsReady: the Workload's PodsReady condition follows its Job (ready + succeeded pods
 * against the admitted count). Pods that don't all get ready within the timeout of admission
 * (or within recoveryTimeout of losing readiness) get the Workload evicted and requeued with a
 * backoff; until then a deadline brings this Job back here, so nothing polls.
 */
static void track_pods_ready(struct mgr *m, const char *key, json_t *job, const char *wl_key,
			     json_t *wl)
{
	json_t *psa = json_array_get(obj_path(wl, "status.admission.podSetAssignments"), 0);
	json_int_t want = json_integer_value(json_object_get(psa, "count"));
	json_int_t have = json_integer_value(obj_path(job, "status.ready")) +
			  json_integer_value(obj_path(job, "status.succeeded"));
	json_t *prev = condition_get(wl, "PodsReady");
	const char *prev_status = json_string_value(json_object_get(prev, "status"));
	int was_ready = prev_status && !strcmp(prev_status, "True");
	const char *prev_reason = json_string_value(json_object_get(prev, "reason"));
	int ready = have >= want;
	const char *reason = ready ? (prev_reason && !strcmp(prev_reason, "WaitForRecovery") ? "Recovered" : "Started") :
			     (was_ready || (prev_reason && !strcmp(prev_reason, "WaitForRecovery")) ? "WaitForRecovery" : "WaitForStart");
	const char *msg = ready ? "All pods reached readiness and the workload is running" :
				  "Not all pods are ready or succeeded";
	int changed;
	json_t *conds = conditions_with(wl, "PodsReady", ready ? "True" : "False", reason, msg, &changed);
	if (conds && changed && !writer_busy(m, K_WORKLOAD, wl_key)) {
		workload_write_status(m, wl_key, wl, json_pack("{s:o}", "conditions", conds), NULL);
		return; /* decide on the timeout once the condition is written */
	}
	json_decref(conds);
	if (ready || !m->conf.wait_for_pods_ready)
		return;
	/* The clock runs from admission, or from the loss of readiness when recovering. Pods can
	 * exist only once the Job runs: a Job still suspended (a leader that admitted it died
	 * before starting it, and the next took over a leaseDuration later) has not used any of
	 * its time, and one started later than its admission counts from its start
	 * (status.startTime, which the Job controller resets on every resume). */
	int recovering = !strcmp(reason, "WaitForRecovery");
	int64_t since, started, limit = recovering ? m->conf.recovery_timeout_ms : m->conf.pods_ready_timeout_ms;
	const char *start = json_string_value(json_object_get(
		recovering ? prev : condition_get(wl, "Admitted"), "lastTransitionTime"));
	if (limit <= 0 || time_parse_rfc3339(start, &since) != 0)
		return;
	if (!recovering) {
		if (json_is_true(obj_path(job, "spec.suspend")))
			return; /* its start (a Job event) brings it back here */
		if (time_parse_rfc3339(json_string_value(obj_path(job, "status.startTime")), &started) == 0 &&
		    started > since)
			since = started;
	}
	if (m->now_ms() >= since + limit) {
		char why[200];
		snprintf(why, sizeof(why), "Not all pods are ready or succeeded within %llds of %s",
			 (long long)(limit / 1000), recovering ? "losing readiness" : "admission");
		workload_evict_pods_ready(m, wl_key, wl, why);
	} else {
		state_at(m, K_JOB, key, since + limit);
	}
}

/* Adds the flavors' node labels and tolerations to the pod template, as Kueue does at start. */
static json_t *start_patch(struct mgr *m, json_t *job, const char *wl_key, json_t *wl)
{
	json_t *tspec = obj_path(job, "spec.template.spec");
	json_t *selector = json_deep_copy(json_object_get(tspec, "nodeSelector"));
	json_t *tolerations = json_deep_copy(json_object_get(tspec, "tolerations"));
	json_t *labels = json_deep_copy(obj_path(job, "spec.template.metadata.labels"));
	json_t *psa = json_array_get(obj_path(wl, "status.admission.podSetAssignments"), 0);
	json_t *flavors_seen = json_object();
	const char *res;
	json_t *fname;

	if (!selector)
		selector = json_object();
	if (!tolerations)
		tolerations = json_array();
	if (!labels)
		labels = json_object();
	json_object_foreach(json_object_get(psa, "flavors"), res, fname)
	{
		const char *flavor = json_string_value(fname);
		json_t *rf = flavor ? store_get(m, K_FLAVOR, flavor) : NULL;
		if (!rf || json_object_get(flavors_seen, flavor))
			continue;
		json_object_set(flavors_seen, flavor, json_true());
		const char *k;
		json_t *v;
		/* Admission matched the flavor against the pod's own selector, so no key clashes. */
		json_object_foreach(obj_path(rf, "spec.nodeLabels"), k, v)
			json_object_set(selector, k, v);
		size_t i;
		json_t *t;
		json_array_foreach(obj_path(rf, "spec.tolerations"), i, t)
		{
			int dup = 0;
			size_t j;
			json_t *have;
			json_array_foreach(tolerations, j, have)
				dup |= json_equal(have, t);
			if (!dup)
				json_array_append(tolerations, t);
		}
	}
	json_decref(flavors_seen);
	json_object_set_new(labels, LABEL_PODSET, json_string("main"));
	json_t *patch = json_pack("{s:{s:b, s:{s:{s:o}, s:{s:o, s:o}}}}", "spec", "suspend", 0,
				  "template", "metadata", "labels", labels, "spec", "nodeSelector",
				  selector, "tolerations", tolerations);
	if (patch)
		nodes_start_hints(m, wl_key, wl, tspec, obj_path(patch, "spec.template.spec"));
	/* Partial admission may lower the count below parallelism. */
	json_int_t count = json_integer_value(json_object_get(psa, "count"));
	json_int_t parallelism = json_integer_value(obj_path(job, "spec.parallelism"));
	if (patch && json_is_integer(json_object_get(psa, "count")) && count < parallelism)
		json_object_set_new(json_object_get(patch, "spec"), "parallelism", json_integer(count));
	return patch;
}

void jobs_reconcile(struct mgr *m, const char *key)
{
	json_t *job = store_get(m, K_JOB, key);
	const char *how;
	char wl_name[300], wl_key[600];

	/* A write of ours for this Job is in flight, or landed and the cache hasn't caught up:
	 * its completion or the watch event brings the Job back here. */
	if (!job || writer_busy(m, K_JOB, key) ||
	    writer_lagging(m, K_JOB, key, obj_str(job, "metadata.resourceVersion")))
		return;
	/* A Job on its way out needs nothing more; in a terminating namespace nothing can be
	 * created anyway (the apiserver answers 403). */
	json_t *ns = store_get(m, K_NAMESPACE, obj_namespace(job));
	const char *phase = obj_str(ns, "status.phase");
	if (obj_path(job, "metadata.deletionTimestamp") || (phase && !strcmp(phase, "Terminating")))
		return;
	const char *queue = obj_label(job, LABEL_QUEUE_NAME);
	if (!queue || !*queue || !obj_uid(job))
		return;
	if (workload_name_for_job(obj_name(job), obj_uid(job), wl_name, sizeof(wl_name)) != 0)
		return;
	snprintf(wl_key, sizeof(wl_key), "%s/%s", obj_namespace(job), wl_name);
	json_t *wl = workload_view(m, wl_key);
	json_t *cached_wl = store_get(m, K_WORKLOAD, wl_key);
	/* Likewise for a write to its Workload. */
	if (cached_wl && writer_lagging(m, K_WORKLOAD, wl_key, obj_str(cached_wl, "metadata.resourceVersion")))
		return;
	int suspended = json_is_true(obj_path(job, "spec.suspend"));

	if (job_finished(job, &how)) {
		if (wl && !condition_true(wl, "Finished") && !writer_busy(m, K_WORKLOAD, wl_key)) {
			int changed;
			json_t *conds = conditions_with(wl, "Finished", "True", how,
							!strcmp(how, "Succeeded") ? "Job finished successfully" :
										    "Job failed",
							&changed);
			workload_write_status(m, wl_key, wl, json_pack("{s:o}", "conditions", conds),
					      on_finished);
		}
		return;
	}
	if (!wl) {
		/* A queued Job must not run before admission; if it slipped past the webhook
		 * (created before muster was up), stop it first. */
		if (!suspended) {
			json_t *patch = json_pack("{s:{s:b}}", "spec", "suspend", 1);
			patch_job(m, job, key, patch);
			return;
		}
		if (!writer_expected(m, K_WORKLOAD, wl_key))
			create_workload(m, key, job);
		return;
	}
	const char *owner_uid = json_string_value(
		json_object_get(json_array_get(obj_path(wl, "metadata.ownerReferences"), 0), "uid"));
	if (!owner_uid || strcmp(owner_uid, obj_uid(job)) != 0)
		return; /* a workload of an older Job with the same name, about to be collected */

	int admitted = condition_true(wl, "QuotaReserved") && condition_true(wl, "Admitted") &&
		       !condition_true(wl, "Finished");
	if (admitted && condition_true(wl, "Evicted")) {
		/* Eviction is a sequence, one step per Job event, because the Job API lets the pod
		 * template change only while the Job is suspended and has never started: suspend,
		 * forget the start time (as Kueue does), restore the template, then release the
		 * quota once no pod is left. */
		json_t *patch = NULL;
		const char *sub = "";
		if (!suspended) {
			patch = json_pack("{s:{s:b}}", "spec", "suspend", 1);
		} else if (obj_path(job, "status.startTime")) {
			patch = json_pack("{s:{s:n}}", "status", "startTime");
			sub = "/status";
		} else if (obj_label(json_object_get(obj_path(job, "spec"), "template"), LABEL_PODSET)) {
			patch = stop_patch(job, wl);
		} else if (json_integer_value(obj_path(job, "status.active")) == 0 &&
			   !writer_busy(m, K_WORKLOAD, wl_key)) {
			release_evicted(m, wl_key, wl);
			return;
		}
		if (patch && patch_job_at(m, job, key, patch, sub) == 0)
			log_debug("evicting: job step", LF_STR("job", key),
				  LF_STR("step", !suspended ? "suspend" : *sub ? "clear startTime" : "restore template"),
				  LF_END);
		return;
	}
	if (admitted && !suspended)
		track_pods_ready(m, key, job, wl_key, wl);
	if (admitted && suspended) {
		json_t *patch = start_patch(m, job, wl_key, wl);
		if (patch)
			patch_job(m, job, key, patch);
	} else if (!admitted && !suspended && !condition_true(wl, "Finished")) {
		json_t *patch = json_pack("{s:{s:b}}", "spec", "suspend", 1);
		patch_job(m, job, key, patch);
	}
}
