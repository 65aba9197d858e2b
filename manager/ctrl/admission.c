/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Admission: keeps the engine (core/engine.h) in step with the Workloads' status, runs its
 * cycles, and applies its decisions: admissions are written to status.admission, preemptions
 * and drains become evictions, and waiting Workloads say why. Quota maths, cohorts, ordering,
 * preemption and partial admission are the engine's, shared with `muster simulate`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/log.h"


const char *workload_cluster_queue(struct mgr *m, json_t *wl, char *msg, size_t msglen)
{
	const char *queue = obj_str(wl, "spec.queueName");
	char key[600];
	if (!queue || !*queue) {
		snprintf(msg, msglen, "Workload has no queueName");
		return NULL;
	}
	snprintf(key, sizeof(key), "%s/%s", obj_namespace(wl), queue);
	json_t *lq = informer_get(m->lqs, key);
	if (!lq) {
		snprintf(msg, msglen, "LocalQueue %s doesn't exist", queue);
		return NULL;
	}
	const char *stop = obj_str(lq, "spec.stopPolicy");
	if (stop && strcmp(stop, "None") != 0) {
		snprintf(msg, msglen, "LocalQueue %s is stopped", queue);
		return NULL;
	}
	const char *cq = obj_str(lq, "spec.clusterQueue");
	if (!cq || !informer_get(m->cqs, cq)) {
		snprintf(msg, msglen, "ClusterQueue %s doesn't exist", cq ? cq : "(unset)");
		return NULL;
	}
	return cq;
}

static void mark_queues_dirty(struct mgr *m, json_t *wl)
{
	char key[600];
	const char *queue = obj_str(wl, "spec.queueName");
	const char *cq = obj_str(wl, "status.admission.clusterQueue");
	char msg[256];
	if (queue) {
		snprintf(key, sizeof(key), "%s/%s", obj_namespace(wl), queue);
		json_object_set(m->dirty_lqs, key, json_true());
	}
	if (!cq)
		cq = workload_cluster_queue(m, wl, msg, sizeof(msg));
	if (cq)
		json_object_set(m->dirty_cqs, cq, json_true());
}

/* Names what a Workload (or its Job) asks for that muster does not implement yet, in an
 * UnsupportedFields condition, so nothing is silently ignored. Written only when it applies. */
static void report_unsupported(struct mgr *m, const char *key, json_t *wl)
{
	char notes[1024] = "";
	size_t n = 0, i;
	json_t *ps;
#define NOTE(cond, text)                                                                             \
	do {                                                                                         \
		if ((cond) && n < sizeof(notes) && !strstr(notes, (text)))                           \
			n += (size_t)snprintf(notes + n, sizeof(notes) - n, "%s%s", n ? "; " : "", (text)); \
	} while (0)
	json_array_foreach(obj_path(wl, "spec.podSets"), i, ps)
	{
		NOTE(obj_path(ps, "topologyRequest.podSetSliceRequiredTopology"),
		     "podSets[].topologyRequest.podSetSliceRequiredTopology: slices are not implemented yet");
		NOTE(obj_path(ps, "topologyRequest.podSetGroupName"),
		     "podSets[].topologyRequest.podSetGroupName: podSet groups are not implemented yet");
	}
	NOTE(obj_path(wl, "spec.maximumExecutionTimeSeconds"),
	     "spec.maximumExecutionTimeSeconds is not enforced yet");
#undef NOTE
	if (!notes[0] || mgr_inflight(m, MGR_WL, key))
		return;
	int changed;
	json_t *conds = conditions_with(wl, "UnsupportedFields", "True", "NotImplemented", notes, &changed);
	if (!conds || !changed) {
		json_decref(conds);
		return;
	}
	json_t *patch = json_pack("{s:{s:s}, s:{s:o}}", "metadata", "resourceVersion",
				  obj_str(wl, "metadata.resourceVersion"), "status", "conditions", conds);
	patch_workload_status(m, key, wl, patch, NULL);
}

static void set_pending(struct mgr *m, const char *key, json_t *wl, const char *reason,
			const char *msg);

/* Keeps the engine's view of one workload equal to its status: pending ones queued, reserved
 * ones charged (rebuilt from status.admission after a restart), released ones requeued,
 * finished and deleted ones forgotten. */
void workload_reconcile(struct mgr *m, const char *key)
{
	json_t *wl = informer_get(m->workloads, key);
	json_t *assumed = json_object_get(m->assumed, key);
	struct eobj_workload w;
	char err[512];

	m->admission_needed = 1;
	if (!wl) {
		json_object_del(m->pending, key);
		if (assumed) {
			mark_queues_dirty(m, assumed);
			json_object_del(m->assumed, key);
		}
		engine_remove_workload(m->engine, key);
		nodes_release(m, key);
		/* Freed quota may let others in. Status of every queue is recomputed cheaply. */
		const char *k;
		json_t *v;
		json_object_foreach(informer_store(m->cqs), k, v)
			json_object_set(m->dirty_cqs, k, json_true());
		json_object_foreach(informer_store(m->lqs), k, v)
			json_object_set(m->dirty_lqs, k, json_true());
		return;
	}
	mark_queues_dirty(m, wl);
	if (assumed) {
		/* Our admission is in flight or not yet seen by the watch: the engine's charge
		 * stands. Only muster reserves quota, so once the cache shows the reservation the
		 * cache is the truth, even if other writes (an eviction) are in flight meanwhile. */
		if (!condition_true(wl, "QuotaReserved"))
			return;
		json_object_del(m->assumed, key);
	}
	if (eobj_workload_decode(wl, NULL, informer_store(m->wpcs), informer_store(m->pcs), &w, err,
				 sizeof(err)) != 0) {
		/* A Workload muster can't read (a class that doesn't exist, a bad quantity) waits,
		 * and says why, rather than being admitted on a guess. */
		engine_remove_workload(m->engine, key);
		json_object_set(m->pending, key, json_true());
		set_pending(m, key, wl, "Inadmissible", err);
		return;
	}
	int rc = 0;
	int64_t requeue_at = 0;
	/* Only an admitted workload keeps its nodes. */
	if (!w.admitted || w.finished)
		nodes_release(m, key);
	if (w.finished) {
		engine_remove_workload(m->engine, key);
		json_object_del(m->pending, key);
	} else if (w.admitted) {
		rc = engine_add_workload(m->engine, &w.spec);
		if (rc == 0)
			rc = engine_set_admitted(m->engine, key, w.admission);
		json_object_del(m->pending, key);
		if (w.inactive)
			workload_evict(m, key, wl, "Deactivated", "The workload is deactivated", NULL);
	} else {
		/* Released after an eviction: the engine still counted it; requeue it there. */
		if (engine_admission(m->engine, key))
			engine_evict(m->engine, key);
		if (w.inactive) {
			engine_remove_workload(m->engine, key);
			json_object_del(m->pending, key);
		} else if (time_parse_rfc3339(obj_str(wl, "status.requeueState.requeueAt"), &requeue_at) == 0 &&
			   requeue_at > time_now_ms()) {
			/* Backing off after a PodsReadyTimeout eviction: out of the queue until then. */
			char wait[200], at[32];
			engine_remove_workload(m->engine, key);
			json_object_set(m->pending, key, json_true());
			time_format_rfc3339(requeue_at, at, sizeof(at));
			snprintf(wait, sizeof(wait), "Waiting until %s to be requeued (backoff after an eviction)", at);
			set_pending(m, key, wl, "Pending", wait);
			mgr_schedule(m, MGR_WL, key, requeue_at);
		} else {
			/* requeuingStrategy Eviction: a workload evicted for PodsReadyTimeout re-enters
			 * its queue at the eviction time, behind the others. */
			json_t *ev = condition_get(wl, "Evicted");
			const char *why = json_string_value(json_object_get(ev, "reason"));
			int64_t at;
			if (!m->conf.requeue_at_creation && why && !strcmp(why, "PodsReadyTimeout") &&
			    time_parse_rfc3339(json_string_value(json_object_get(ev, "lastTransitionTime")), &at) == 0)
				w.spec.queue_time = at * 1000000;
			rc = engine_add_workload(m->engine, &w.spec);
			json_object_set(m->pending, key, json_true());
		}
	}
	if (rc != 0)
		log_error("engine refused workload", LF_STR("workload", key), LF_INT("rc", rc), LF_END);
	int finished = w.finished;
	eobj_workload_release(&w);
	if (!finished)
		report_unsupported(m, key, wl);
}

/* Writes QuotaReserved=False with reason and message, unless that is already what it says. */
static void set_pending(struct mgr *m, const char *key, json_t *wl, const char *reason,
			const char *msg)
{
	int changed;
	if (mgr_inflight(m, MGR_WL, key))
		return;
	json_t *conds = conditions_with(wl, "QuotaReserved", "False", reason, msg, &changed);
	if (!conds || !changed) {
		json_decref(conds);
		return;
	}
	json_t *patch = json_pack("{s:{s:s}, s:{s:o}}", "metadata", "resourceVersion",
				  obj_str(wl, "metadata.resourceVersion"), "status", "conditions", conds);
	patch_workload_status(m, key, wl, patch, NULL);
}

static void on_admitted(struct mgr *m, const char *key, json_t *updated, int ok)
{
	json_t *assumed = json_object_get(m->assumed, key);
	if (!assumed)
		return; /* the watch got there first and took over */
	if (ok && updated) {
		json_t *cached = informer_get(m->workloads, key);
		if (cached && condition_true(cached, "QuotaReserved"))
			json_object_del(m->assumed, key); /* the watch was faster */
		else
			json_object_set(m->assumed, key, updated);
		return; /* patch_object's completion marks the Job, which starts it */
	}
	/* The write lost (conflict, error): give the quota back and let the cache decide again. */
	json_object_del(m->assumed, key);
	engine_evict(m->engine, key);
	nodes_release(m, key);
	mgr_retry_key(m, MGR_WL, key);
}

/* Writes the engine's admission into the Workload's status (the engine has charged it). */
static void write_admission(struct mgr *m, const char *key, json_t *wl, const struct eng_assignment *a)
{
	json_t *psas = json_array();
	char qmsg[300];
	int changed;

	for (size_t i = 0; i < a->n_podsets && psas; i++) {
		const struct eng_podset_assignment *p = &a->podsets[i];
		json_t *flavors = json_object(), *usage = json_object();
		for (size_t k = 0; k < p->n; k++) {
			char q[64];
			quantity_to_string(p->resources[k], p->usage[k], q, sizeof(q));
			json_object_set_new(flavors, p->resources[k], json_string(p->flavors[k]));
			json_object_set_new(usage, p->resources[k], json_string(q));
		}
		json_array_append_new(psas, json_pack("{s:s, s:o, s:o, s:I}", "name", p->name, "flavors",
						      flavors, "resourceUsage", usage, "count",
						      (json_int_t)p->count));
	}
	json_t *admission = json_pack("{s:s, s:o}", "clusterQueue", a->cluster_queue, "podSetAssignments", psas);
	snprintf(qmsg, sizeof(qmsg), "Quota reserved in ClusterQueue %s", a->cluster_queue);
	json_t *tmp = json_deep_copy(wl);
	json_t *status = json_object_get(tmp, "status");
	if (!status) {
		status = json_object();
		json_object_set_new(tmp, "status", status);
	}
	json_object_set_new(status, "conditions",
			    conditions_with(tmp, "QuotaReserved", "True", "QuotaReserved", qmsg, &changed));
	json_object_set_new(status, "conditions",
			    conditions_with(tmp, "Admitted", "True", "Admitted", "The workload is admitted", &changed));
	/* A previous eviction is over: left True, it would suspend the Job again at once. */
	if (condition_get(tmp, "Evicted"))
		json_object_set_new(status, "conditions",
				    conditions_with(tmp, "Evicted", "False", "QuotaReserved",
						    "The workload has quota reserved again", &changed));
	json_object_set(status, "admission", admission);
	json_object_set(m->assumed, key, tmp);
	json_object_del(m->pending, key);
	json_t *patch = json_pack("{s:{s:s}, s:{s:o, s:O}}", "metadata", "resourceVersion",
				  obj_str(wl, "metadata.resourceVersion"), "status", "admission", admission,
				  "conditions", json_object_get(status, "conditions"));
	json_decref(tmp);
	if (patch_workload_status(m, key, wl, patch, on_admitted) != 0) {
		json_object_del(m->assumed, key);
		engine_evict(m->engine, key);
		nodes_release(m, key);
		return;
	}
	log_info("workload admitted", LF_STR("workload", key), LF_STR("clusterQueue", a->cluster_queue),
		 LF_END);
}

static void evict_with(struct mgr *m, const char *key, json_t *wl, const char *reason,
		       const char *message, const char *preempted_reason, json_t *requeue_state);

void workload_evict(struct mgr *m, const char *key, json_t *wl, const char *reason,
		    const char *message, const char *preempted_reason)
{
	evict_with(m, key, wl, reason, message, preempted_reason, NULL);
}

void workload_evict_pods_ready(struct mgr *m, const char *key, json_t *wl, const char *message)
{
	const struct muster_config *c = &m->conf;
	json_int_t count = json_integer_value(obj_path(wl, "status.requeueState.count")) + 1;
	char path[1024];
	if (mgr_inflight(m, MGR_WL, key) || condition_true(wl, "Evicted"))
		return;
	if (c->has_backoff_limit && count > c->backoff_limit_count) {
		/* Out of retries: deactivate, as Kueue does; the eviction follows from that. */
		json_t *patch = json_pack("{s:{s:s}, s:{s:b}}", "metadata", "resourceVersion",
					  obj_str(wl, "metadata.resourceVersion"), "spec", "active", 0);
		snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s",
			 obj_namespace(wl), obj_name(wl));
		if (patch_object(m, path, MGR_WL, key, patch, NULL) == 0)
			log_info("workload deactivated: requeuing limit exceeded", LF_STR("workload", key),
				 LF_INT("count", count - 1), LF_END);
		return;
	}
	/* base * 2^(n-1) seconds, capped, plus up to 10% jitter so evictions don't return in step. */
	int64_t delay_s = c->backoff_base_s;
	for (json_int_t i = 1; i < count && delay_s < c->backoff_max_s; i++)
		delay_s *= 2;
	if (delay_s > c->backoff_max_s)
		delay_s = c->backoff_max_s;
	int64_t delay_ms = delay_s * 1000 + (int64_t)(rand() % (int)(delay_s * 100 + 1));
	char at[32];
	time_format_rfc3339(time_now_ms() + delay_ms, at, sizeof(at));
	json_t *state = json_pack("{s:I, s:s}", "count", count, "requeueAt", at);
	evict_with(m, key, wl, "PodsReadyTimeout", message, NULL, state);
}

static void evict_with(struct mgr *m, const char *key, json_t *wl, const char *reason,
		       const char *message, const char *preempted_reason, json_t *requeue_state)
{
	int changed;
	if (mgr_inflight(m, MGR_WL, key) || condition_true(wl, "Evicted")) {
		json_decref(requeue_state);
		return;
	}
	json_t *conds = conditions_with(wl, "Evicted", "True", reason, message, &changed);
	if (conds && preempted_reason) {
		json_t *tmp = json_pack("{s:O, s:{s:O}}", "metadata", json_object_get(wl, "metadata"),
					"status", "conditions", conds);
		json_decref(conds);
		conds = conditions_with(tmp, "Preempted", "True", preempted_reason, message, &changed);
		json_decref(tmp);
	}
	if (!conds)
		return;
	json_t *patch = json_pack("{s:{s:s}, s:{s:o}}", "metadata", "resourceVersion",
				  obj_str(wl, "metadata.resourceVersion"), "status", "conditions", conds);
	if (patch && requeue_state)
		json_object_set_new(json_object_get(patch, "status"), "requeueState", requeue_state);
	else
		json_decref(requeue_state);
	if (patch_workload_status(m, key, wl, patch, NULL) == 0)
		log_info("workload evicted", LF_STR("workload", key), LF_STR("reason", reason),
			 LF_STR("message", message), LF_END);
}

/* What the engine decided, applied to the cluster. */
static void on_decision(void *arg, const struct eng_decision *d)
{
	struct mgr *m = arg;
	json_t *wl = informer_get(m->workloads, d->workload);
	if (!wl)
		return;
	switch (d->kind) {
	case ENG_ADMIT:
		write_admission(m, d->workload, wl, d->assignment);
		break;
	case ENG_PREEMPT:
		/* A victim keeps its quota until its pods are gone; the engine hears of it when the
		 * admission is cleared (workload_reconcile -> engine_evict). */
		if (d->preemptor)
			workload_evict(m, d->workload, wl, "Preempted", d->message, d->reason);
		else
			workload_evict(m, d->workload, wl, d->reason, d->message, NULL);
		break;
	case ENG_PENDING:
		set_pending(m, d->workload, wl, d->reason, d->message);
		break;
	}
}

void admission_cycle(struct mgr *m)
{
	int n = engine_cycle(m->engine, on_decision, m);
	if (n < 0)
		log_error("admission cycle failed", LF_INT("rc", n), LF_END);
	else if (n > 0)
		log_debug("admission cycle", LF_INT("decisions", n), LF_END);
}
