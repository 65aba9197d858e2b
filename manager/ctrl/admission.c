/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Admission: keeps the quota model's charges equal to the admitted Workloads (rebuilt from
 * their status after a restart), and runs admission cycles. A cycle walks each ClusterQueue's
 * pending Workloads in Kueue's order (priority, then age) and admits every one whose whole
 * gang fits now; a ClusterQueue's later Workloads see the usage of the earlier ones at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/log.h"

#define MAX_PODSETS 18

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
	char notes[1024] = "", path[1024];
	size_t n = 0, i;
	json_t *ps;
#define NOTE(cond, text)                                                                             \
	do {                                                                                         \
		if ((cond) && n < sizeof(notes) && !strstr(notes, (text)))                           \
			n += (size_t)snprintf(notes + n, sizeof(notes) - n, "%s%s", n ? "; " : "", (text)); \
	} while (0)
	json_array_foreach(obj_path(wl, "spec.podSets"), i, ps)
	{
		NOTE(json_object_get(ps, "minCount"),
		     "podSets[].minCount: partial admission is not implemented yet, so the full count is admitted or nothing");
		NOTE(json_object_get(ps, "topologyRequest"),
		     "podSets[].topologyRequest: topology-aware placement is not implemented yet");
	}
	NOTE(obj_path(wl, "spec.maximumExecutionTimeSeconds"),
	     "spec.maximumExecutionTimeSeconds is not enforced yet");
	json_t *owner = json_array_get(obj_path(wl, "metadata.ownerReferences"), 0);
	const char *job_name = json_string_value(json_object_get(owner, "name"));
	char job_key[600];
	snprintf(job_key, sizeof(job_key), "%s/%s", obj_namespace(wl), job_name ? job_name : "");
	json_t *job = job_name ? informer_get(m->jobs, job_key) : NULL;
	NOTE(job && obj_annotation(job, "kueue.x-k8s.io/job-min-parallelism"),
	     "podSets[].minCount: partial admission is not implemented yet, so the full count is admitted or nothing");
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
	snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s/status",
		 obj_namespace(wl), obj_name(wl));
	patch_object(m, path, MGR_WL, key, patch, NULL);
}

void workload_reconcile(struct mgr *m, const char *key)
{
	json_t *wl = informer_get(m->workloads, key);
	json_t *assumed = json_object_get(m->assumed, key);

	if (!wl) {
		json_object_del(m->pending, key);
		if (assumed) {
			mark_queues_dirty(m, assumed);
			json_object_del(m->assumed, key);
		}
		quota_uncharge(&m->model, key);
		/* Freed quota may let others in. Status of every queue is recomputed cheaply. */
		const char *k;
		json_t *v;
		json_object_foreach(informer_store(m->cqs), k, v)
			json_object_set(m->dirty_cqs, k, json_true());
		json_object_foreach(informer_store(m->lqs), k, v)
			json_object_set(m->dirty_lqs, k, json_true());
		m->admission_needed = 1;
		return;
	}
	mark_queues_dirty(m, wl);
	if (assumed) {
		/* Our admission is in flight or not yet seen by the watch: its charge stands. Only
		 * muster reserves quota, so once the cache shows the reservation the cache is the
		 * truth, even if other writes (an eviction) are in flight meanwhile. */
		if (!condition_true(wl, "QuotaReserved"))
			return;
		json_object_del(m->assumed, key);
	}
	int reserved = condition_true(wl, "QuotaReserved");
	int finished = condition_true(wl, "Finished");
	if (reserved && !finished) {
		struct quota_charge *c = charge_decode(wl);
		if (!c || quota_charge(&m->model, key, c) != 0)
			log_error("cannot account admitted workload", LF_STR("workload", key), LF_END);
	} else {
		if (quota_is_charged(&m->model, key))
			m->admission_needed = 1;
		quota_uncharge(&m->model, key);
	}
	int active = !json_is_false(obj_path(wl, "spec.active"));
	if (!reserved && !finished && active)
		json_object_set(m->pending, key, json_true());
	else
		json_object_del(m->pending, key);
	if (!finished)
		report_unsupported(m, key, wl);
}

/* Writes QuotaReserved=False with reason and message, unless that is already what it says. */
static void set_pending(struct mgr *m, const char *key, json_t *wl, const char *reason,
			const char *msg)
{
	int changed;
	char path[1024];
	if (mgr_inflight(m, MGR_WL, key))
		return;
	json_t *conds = conditions_with(wl, "QuotaReserved", "False", reason, msg, &changed);
	if (!conds || !changed) {
		json_decref(conds);
		return;
	}
	json_t *patch = json_pack("{s:{s:s}, s:{s:o}}", "metadata", "resourceVersion",
				  obj_str(wl, "metadata.resourceVersion"), "status", "conditions", conds);
	snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s/status",
		 obj_namespace(wl), obj_name(wl));
	patch_object(m, path, MGR_WL, key, patch, NULL);
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
		json_t *owner = json_array_get(obj_path(updated, "metadata.ownerReferences"), 0);
		const char *job = json_string_value(json_object_get(owner, "name"));
		if (job) {
			char job_key[600];
			snprintf(job_key, sizeof(job_key), "%s/%s", obj_namespace(updated), job);
			mgr_mark(m, m->dirty_jobs, job_key);
		}
		return;
	}
	/* The write lost (conflict, error): undo the charge and let the cache decide again. */
	json_object_del(m->assumed, key);
	quota_uncharge(&m->model, key);
	mgr_retry_key(m, MGR_WL, key);
}

static struct quota_charge *charge_from_assignment(const char *cq, const struct quota_assignment *a)
{
	struct quota_charge *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cq = strdup(cq);
	c->items = calloc(a->n ? a->n : 1, sizeof(*c->items));
	if (!c->cq || !c->items) {
		quota_charge_free(c);
		return NULL;
	}
	for (size_t i = 0; i < a->n; i++) {
		c->items[i].flavor = strdup(a->items[i].flavor);
		c->items[i].resource = strdup(a->items[i].resource);
		c->items[i].amount = a->items[i].total;
		c->n++;
		if (!c->items[i].flavor || !c->items[i].resource) {
			quota_charge_free(c);
			return NULL;
		}
	}
	return c;
}

/* Appends one charge's items onto another (for multi-podset workloads). */
static int charge_merge(struct quota_charge *into, const struct quota_charge *from)
{
	struct quota_charge_item *items =
		realloc(into->items, (into->n + from->n + 1) * sizeof(*items));
	if (!items)
		return -1;
	into->items = items;
	for (size_t i = 0; i < from->n; i++) {
		items[into->n].flavor = strdup(from->items[i].flavor);
		items[into->n].resource = strdup(from->items[i].resource);
		items[into->n].amount = from->items[i].amount;
		into->n++;
	}
	return 0;
}

/*
 * Tries to admit one workload into cq. Returns 1 when admitted (write issued), 0 when it must
 * wait (msg and reason say why).
 */
static int try_admit(struct mgr *m, const char *key, json_t *wl, const struct quota_cq *cq,
		     char *reason, size_t reason_len, char *msg, size_t msglen)
{
	json_t *podsets = obj_path(wl, "spec.podSets");
	size_t n = json_array_size(podsets);
	struct podset_view views[MAX_PODSETS];
	struct quota_assignment asg[MAX_PODSETS];
	char tmp_key[700], err[512];
	struct quota_charge *total = NULL;
	int rc = 0, admitted = 0;
	size_t decoded = 0;

	if (n == 0 || n > MAX_PODSETS) {
		snprintf(reason, reason_len, "Inadmissible");
		snprintf(msg, msglen, "Workload must have between 1 and %d podSets", MAX_PODSETS);
		return 0;
	}
	total = calloc(1, sizeof(*total));
	if (!total || !(total->cq = strdup(cq->name)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (podset_view_decode(json_array_get(podsets, i), &views[i], err, sizeof(err)) != 0) {
			snprintf(reason, reason_len, "Inadmissible");
			snprintf(msg, msglen, "podSet %zu: %s", i, err);
			goto out;
		}
		decoded++;
		char why[512];
		rc = quota_assign(&m->model, cq, &views[i].ps, &asg[i], why, sizeof(why));
		if (rc != 0) {
			snprintf(reason, reason_len, "Pending");
			snprintf(msg, msglen, "couldn't assign flavors to pod set %s: %s", views[i].name,
				 why + (strncmp(why, "couldn't assign flavors to pod set: ", 36) ? 0 : 36));
			goto out;
		}
		struct quota_charge *part = charge_from_assignment(cq->name, &asg[i]);
		if (!part || charge_merge(total, part) != 0) {
			quota_charge_free(part);
			goto out;
		}
		/* Later podsets of the same workload see this one's usage. */
		snprintf(tmp_key, sizeof(tmp_key), "\x01%s/%zu", key, i);
		if (quota_charge(&m->model, tmp_key, part) != 0)
			goto out;
	}
	admitted = 1;
out:
	for (size_t i = 0; i < decoded; i++) {
		snprintf(tmp_key, sizeof(tmp_key), "\x01%s/%zu", key, i);
		quota_uncharge(&m->model, tmp_key);
	}
	if (!admitted) {
		for (size_t i = 0; i < decoded; i++)
			podset_view_release(&views[i]);
		quota_charge_free(total);
		if (!reason[0]) {
			snprintf(reason, reason_len, "Pending");
			snprintf(msg, msglen, "out of memory");
		}
		return 0;
	}

	/* Build status.admission: per podset, the flavor of each resource and the usage. */
	json_t *psas = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *flavors = json_object(), *usage = json_object();
		for (size_t k = 0; k < asg[i].n; k++) {
			char qty[64];
			quantity_to_string(asg[i].items[k].resource, asg[i].items[k].total, qty, sizeof(qty));
			json_object_set_new(flavors, asg[i].items[k].resource,
					    json_string(asg[i].items[k].flavor));
			json_object_set_new(usage, asg[i].items[k].resource, json_string(qty));
		}
		json_array_append_new(psas, json_pack("{s:s, s:o, s:o, s:I}", "name", views[i].name,
						      "flavors", flavors, "resourceUsage", usage,
						      "count", (json_int_t)views[i].ps.count));
		podset_view_release(&views[i]);
	}
	json_t *admission = json_pack("{s:s, s:o}", "clusterQueue", cq->name, "podSetAssignments", psas);
	char qmsg[300];
	int changed;
	snprintf(qmsg, sizeof(qmsg), "Quota reserved in ClusterQueue %s", cq->name);
	json_t *conds = conditions_with(wl, "QuotaReserved", "True", "QuotaReserved", qmsg, &changed);
	json_t *tmp = json_deep_copy(wl);
	json_t *status = json_object_get(tmp, "status");
	if (!status) {
		status = json_object();
		json_object_set_new(tmp, "status", status);
	}
	json_object_set_new(status, "conditions", conds);
	conds = conditions_with(tmp, "Admitted", "True", "Admitted", "The workload is admitted", &changed);
	json_object_set_new(status, "conditions", conds);
	/* A previous eviction is over: left True, it would suspend the Job again at once. */
	if (condition_get(tmp, "Evicted")) {
		conds = conditions_with(tmp, "Evicted", "False", "QuotaReserved",
					"The workload has quota reserved again", &changed);
		json_object_set_new(status, "conditions", conds);
	}
	json_object_set(status, "admission", admission);

	/* Charge now, so the rest of this cycle sees the usage; the write confirms it. */
	if (quota_charge(&m->model, key, total) != 0) {
		json_decref(admission);
		json_decref(tmp);
		return 0;
	}
	json_object_set(m->assumed, key, tmp);
	json_object_del(m->pending, key);
	json_t *patch = json_pack("{s:{s:s}, s:{s:o, s:O}}", "metadata", "resourceVersion",
				  obj_str(wl, "metadata.resourceVersion"), "status", "admission",
				  admission, "conditions", json_object_get(status, "conditions"));
	json_decref(tmp);
	char path[1024];
	snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s/status",
		 obj_namespace(wl), obj_name(wl));
	if (patch_object(m, path, MGR_WL, key, patch, on_admitted) != 0) {
		json_object_del(m->assumed, key);
		quota_uncharge(&m->model, key);
		return 0;
	}
	log_info("workload admitted", LF_STR("workload", key), LF_STR("clusterQueue", cq->name),
		 LF_END);
	return 1;
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
	char path[1024];
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
	snprintf(path, sizeof(path), "/apis/kueue.x-k8s.io/v1beta2/namespaces/%s/workloads/%s/status",
		 obj_namespace(wl), obj_name(wl));
	if (patch_object(m, path, MGR_WL, key, patch, NULL) == 0)
		log_info("workload evicted", LF_STR("workload", key), LF_STR("reason", reason),
			 LF_STR("message", message), LF_END);
}

/* stopPolicy HoldAndDrain on a ClusterQueue or LocalQueue evicts what it has admitted, and so
 * does deactivating a workload (spec.active=false). */
static void drain_stopped(struct mgr *m)
{
	for (size_t i = 0; i < m->model.charges.cap; i++) {
		const char *key = m->model.charges.slots[i].key;
		const struct quota_charge *c = m->model.charges.slots[i].value;
		json_t *wl = key ? informer_get(m->workloads, key) : NULL;
		if (!wl || !condition_true(wl, "QuotaReserved") || condition_true(wl, "Evicted"))
			continue;
		if (json_is_false(obj_path(wl, "spec.active"))) {
			workload_evict(m, key, wl, "Deactivated", "The workload is deactivated", NULL);
			continue;
		}
		const char *cq_stop = obj_str(informer_get(m->cqs, c->cq), "spec.stopPolicy");
		char lq_key[600];
		snprintf(lq_key, sizeof(lq_key), "%s/%s", obj_namespace(wl), obj_str(wl, "spec.queueName"));
		const char *lq_stop = obj_str(informer_get(m->lqs, lq_key), "spec.stopPolicy");
		if (cq_stop && !strcmp(cq_stop, "HoldAndDrain")) {
			char msg[400];
			snprintf(msg, sizeof(msg), "The ClusterQueue %s is stopped", c->cq);
			workload_evict(m, key, wl, "ClusterQueueStopped", msg, NULL);
		} else if (lq_stop && !strcmp(lq_stop, "HoldAndDrain")) {
			char msg[400];
			snprintf(msg, sizeof(msg), "The LocalQueue %s is stopped", obj_str(wl, "spec.queueName"));
			workload_evict(m, key, wl, "LocalQueueStopped", msg, NULL);
		}
	}
}

static json_int_t priority_of(json_t *wl)
{
	return json_integer_value(obj_path(wl, "spec.priority"));
}

/* Set for the duration of a sort: qsort has no context argument. */
static int sort_by_creation;

/* Where a workload stands in its queue: its creation, or for a workload evicted because its
 * pods weren't ready, its eviction (Kueue's requeuingStrategy timestamp Eviction), so it goes
 * to the back rather than blocking the queue again at once. */
static const char *queue_time_of(json_t *wl)
{
	json_t *ev = condition_get(wl, "Evicted");
	const char *reason = json_string_value(json_object_get(ev, "reason"));
	if (!sort_by_creation && reason && !strcmp(reason, "PodsReadyTimeout"))
		return json_string_value(json_object_get(ev, "lastTransitionTime"));
	return obj_str(wl, "metadata.creationTimestamp");
}

/* Kueue's queue order: higher priority first, then older, then by name for a total order. */
static int compare_pending(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t px = priority_of(x), py = priority_of(y);
	if (px != py)
		return px > py ? -1 : 1;
	const char *tx = queue_time_of(x);
	const char *ty = queue_time_of(y);
	int c = strcmp(tx ? tx : "", ty ? ty : "");
	if (c != 0)
		return c;
	c = strcmp(obj_namespace(x) ? obj_namespace(x) : "", obj_namespace(y) ? obj_namespace(y) : "");
	return c ? c : strcmp(obj_name(x), obj_name(y));
}

/* Whether cq can admit now; otherwise reason and msg say why. */
static int cq_usable(struct mgr *m, const char *name, const struct quota_cq **out, char *reason,
		     size_t reason_len, char *msg, size_t msglen)
{
	json_t *obj = informer_get(m->cqs, name);
	const struct quota_cq *cq = quota_get_cq(&m->model, name);
	json_t *info = json_object_get(m->unsupported, name);
	const char *inactive = json_string_value(json_object_get(info, "inactive"));
	char r[64], why[300];
	*out = cq;
	snprintf(reason, reason_len, "Inadmissible");
	if (!obj || !cq || inactive) {
		snprintf(msg, msglen, "ClusterQueue %s is inactive%s%s", name, inactive ? ": " : "",
			 inactive ? inactive : "");
		return 0;
	}
	if (!quota_cq_active(&m->model, cq, r, sizeof(r), why, sizeof(why))) {
		snprintf(msg, msglen, "ClusterQueue %s is inactive: %s", name, why);
		return 0;
	}
	return 1;
}

void admission_cycle(struct mgr *m)
{
	json_t *by_cq = json_object();
	const char *key;
	json_t *v;
	char msg[768], reason[64];
	size_t admitted = 0, considered = 0;

	if (!by_cq)
		return;
	drain_stopped(m);
	json_object_foreach(m->pending, key, v)
	{
		json_t *wl = informer_get(m->workloads, key);
		if (!wl || mgr_inflight(m, MGR_WL, key) || json_object_get(m->assumed, key))
			continue;
		int64_t requeue_at;
		if (time_parse_rfc3339(obj_str(wl, "status.requeueState.requeueAt"), &requeue_at) == 0 &&
		    requeue_at > time_now_ms()) {
			/* Backing off after a PodsReadyTimeout eviction: come back when it ends. */
			char wait[200], at[32];
			time_format_rfc3339(requeue_at, at, sizeof(at));
			snprintf(wait, sizeof(wait), "Waiting until %s to be requeued (backoff after an eviction)", at);
			set_pending(m, key, wl, "Pending", wait);
			mgr_schedule(m, MGR_WL, key, requeue_at);
			continue;
		}
		const char *cq = workload_cluster_queue(m, wl, msg, sizeof(msg));
		if (!cq) {
			set_pending(m, key, wl, "Inadmissible", msg);
			continue;
		}
		json_t *cq_obj = informer_get(m->cqs, cq);
		json_t *ns = informer_get(m->namespaces, obj_namespace(wl));
		if (!selector_matches(obj_path(cq_obj, "spec.namespaceSelector"),
				      obj_path(ns, "metadata.labels"))) {
			set_pending(m, key, wl, "Inadmissible",
				    "Workload namespace doesn't match ClusterQueue selector");
			continue;
		}
		json_t *list = json_object_get(by_cq, cq);
		if (!list) {
			list = json_array();
			json_object_set_new(by_cq, cq, list);
		}
		json_array_append(list, wl);
	}
	json_object_foreach(by_cq, key, v)
	{
		const struct quota_cq *cq;
		size_t n = json_array_size(v);
		json_t **order = calloc(n ? n : 1, sizeof(*order));
		if (!order)
			break;
		for (size_t i = 0; i < n; i++)
			order[i] = json_array_get(v, i);
		sort_by_creation = m->conf.requeue_at_creation;
		qsort(order, n, sizeof(*order), compare_pending);
		int usable = cq_usable(m, key, &cq, reason, sizeof(reason), msg, sizeof(msg));
		const char *blocked_by = NULL;
		for (size_t i = 0; i < n; i++) {
			char wl_key[600];
			json_t *wl = order[i];
			snprintf(wl_key, sizeof(wl_key), "%s/%s", obj_namespace(wl), obj_name(wl));
			considered++;
			if (!usable) {
				set_pending(m, wl_key, wl, reason, msg);
				continue;
			}
			if (blocked_by) {
				char wait[700];
				snprintf(wait, sizeof(wait),
					 "waiting for %s, ahead in StrictFIFO ClusterQueue %s", blocked_by,
					 key);
				set_pending(m, wl_key, wl, "Pending", wait);
				continue;
			}
			reason[0] = '\0';
			if (try_admit(m, wl_key, wl, cq, reason, sizeof(reason), msg, sizeof(msg))) {
				admitted++;
				continue;
			}
			set_pending(m, wl_key, wl, reason, msg);
			if (cq->strict_fifo)
				blocked_by = obj_name(wl);
		}
		free(order);
	}
	json_decref(by_cq);
	if (considered)
		log_debug("admission cycle", LF_INT("considered", considered),
			  LF_INT("admitted", admitted), LF_END);
}
