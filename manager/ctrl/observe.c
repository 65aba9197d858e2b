/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manager's metrics (docs/observability.md, "Metrics", lists every series): Kueue's names
 * and labels where the meaning is the same, muster_* for the rest, in the registry of
 * obs/metrics.h.
 *
 * Three kinds of series:
 *   - counters and histograms, bumped where the event happens: an admission or an eviction
 *     when its write has landed (the write's completion, as the logs), a cycle when it ran, an
 *     apiserver call when it completed (the kube client's observer);
 *   - the loop's turns, timed by a prepare handle: a histogram and the longest turn's gauge;
 *   - gauges that mirror state (pending counts, usage, quota, queue status), rebuilt at scrape
 *     time from what the controller already keeps for the ClusterQueues' status: the engine's
 *     counts and usage, the cached specs. Pending counts are the engine's, as status.
 *     pendingWorkloads is, so both say the same. A scrape costs the number of ClusterQueues
 *     times their flavors and resources, never a walk over the Workloads.
 * With fair sharing on, the shares of ClusterQueues and cohorts, and with admission fair
 * sharing on, each LocalQueue's usage, are gauges of the same kind, from the engine; with the
 * feature off, their families are not even registered.
 * A deleted ClusterQueue's counters go with it (observe_forget_cq), as in Kueue; its gauges
 * are simply not rebuilt.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "ctrl/internal.h"
#include "kube/lease_thread.h"
#include "obs/metrics.h"
#include "util/log.h"

#define V(...) ((const char *const[]){ __VA_ARGS__ })
#define L(...) ((const char *[]){ __VA_ARGS__, NULL })

/* Kueue's wait-time buckets: 1 s, then 2.5 s doubling up to 40960 s (about 11.4 h). */
static const double wait_buckets[] = { 1,   2.5, 5,    10,   20,   40,    80,    160,
				       320, 640, 1280, 2560, 5120, 10240, 20480, 40960 };
/* Prometheus' default buckets, which Kueue's admission_attempt_duration_seconds uses. */
static const double default_buckets[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };
/* client-go's rest_client_request_duration_seconds buckets. */
static const double api_buckets[] = { 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60 };
/* A turn longer than this is logged, with what the pump spent it on: the bound for the
 * longest turn. Shorter ones are the histogram's. */
#define SLOW_TURN_NS (200ull * 1000 * 1000)
#define MS (1000ull * 1000)
/* Loop turns: 1 ms up to 10 s, the default renewDeadline. */
static const double turn_buckets[] = { 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1,
				       0.2,   0.5,   1,     2,    5,    10 };
#define N(a) (sizeof(a) / sizeof((a)[0]))

struct observe {
	/* Counters and histograms, and the longest loop turn. */
	struct metric_family *attempts, *attempt_duration, *quota_reserved, *quota_reserved_wait,
		*admitted, *admission_wait, *evicted, *preempted, *placement, *webhook,
		*api_requests, *api_duration, *loop_turn, *loop_turn_max, *lease_lapses;
	/* Gauges rebuilt at scrape time. */
	struct metric_family *pending, *reserving_active, *admitted_active, *cq_status,
		*resource_reservation, *resource_usage, *nominal_quota, *borrowing_limit,
		*lending_limit, *leader, *build_info;
	/* Fair sharing's gauges, NULL when the feature is off. */
	struct metric_family *cq_share, *cohort_share, *lq_afs_usage;
	/* The last prepare's uv_hrtime() (0 before the first) and the loop's idle time then, and
	 * the longest turn's work so far, in ns. */
	uint64_t turn_at, turn_idle, turn_max;
	unsigned long lapses; /* the elector's lapses counted so far */
};

/* Adds a family or fails init: every name here is a constant, so NULL means out of memory. */
#define FAMILY(field, type, name, help, labels, buckets, n)                                        \
	do {                                                                                       \
		if (!(o->field = metrics_add_family(m->metrics, type, name, help, labels, buckets, \
						    n, METRIC_WITH_ROLE)))                         \
			goto fail;                                                                 \
	} while (0)

static void on_api_call(void *arg, const char *method, const char *path, long status, int error,
			uint64_t duration_ns);
static void on_turn_prepare(uv_prepare_t *h);

int observe_init(struct mgr *m)
{
	struct observe *o = calloc(1, sizeof(*o));
	int rc = -ENOMEM;
	if (!o || metrics_new(&m->metrics) != 0)
		goto fail;
	m->obs = o;
	FAMILY(attempts, METRIC_COUNTER, "kueue_admission_attempts_total",
	       "Admission cycles that looked at pending workloads: result success (at least one "
	       "admitted) or inadmissible (none).",
	       L("result"), NULL, 0);
	FAMILY(attempt_duration, METRIC_HISTOGRAM, "kueue_admission_attempt_duration_seconds",
	       "How long an admission cycle took, by result.", L("result"), default_buckets,
	       N(default_buckets));
	FAMILY(quota_reserved, METRIC_COUNTER, "kueue_quota_reserved_workloads_total",
	       "Workloads whose quota reservation was written, per cluster_queue.",
	       L("cluster_queue"), NULL, 0);
	FAMILY(quota_reserved_wait, METRIC_HISTOGRAM, "kueue_quota_reserved_wait_time_seconds",
	       "Time from a workload's creation or last requeue to its quota reservation, per "
	       "cluster_queue.",
	       L("cluster_queue"), wait_buckets, N(wait_buckets));
	FAMILY(admitted, METRIC_COUNTER, "kueue_admitted_workloads_total",
	       "Workloads whose admission was written, per cluster_queue.", L("cluster_queue"),
	       NULL, 0);
	FAMILY(admission_wait, METRIC_HISTOGRAM, "kueue_admission_wait_time_seconds",
	       "Time from a workload's creation or last requeue to its admission, per "
	       "cluster_queue.",
	       L("cluster_queue"), wait_buckets, N(wait_buckets));
	FAMILY(evicted, METRIC_COUNTER, "kueue_evicted_workloads_total",
	       "Workloads whose eviction was written, per cluster_queue and reason (Preempted, "
	       "PodsReadyTimeout, ClusterQueueStopped, LocalQueueStopped, Deactivated).",
	       L("cluster_queue", "reason"), NULL, 0);
	FAMILY(preempted, METRIC_COUNTER, "kueue_preempted_workloads_total",
	       "Workloads preempted, per preempting_cluster_queue and reason (InClusterQueue, "
	       "InCohortReclamation, InCohortFairSharing, InCohortReclaimWhileBorrowing).",
	       L("preempting_cluster_queue", "reason"), NULL, 0);
	FAMILY(placement, METRIC_COUNTER, "muster_placement_attempts_total",
	       "Node placements tried for workloads the quota admits: result planned (a node "
	       "layout "
	       "was found and reserved), no_layout (none fits now; the workload waits) or error.",
	       L("result"), NULL, 0);
	FAMILY(webhook, METRIC_HISTOGRAM, "muster_webhook_latency_seconds",
	       "Time to answer an admission webhook request, per webhook path.", L("webhook"),
	       default_buckets, N(default_buckets));
	FAMILY(api_requests, METRIC_COUNTER, "muster_apiserver_requests_total",
	       "Completed apiserver calls, per verb, resource (with its subresource) and HTTP code "
	       "(\"<error>\" when no response arrived).",
	       L("verb", "resource", "code"), NULL, 0);
	FAMILY(api_duration, METRIC_HISTOGRAM, "muster_apiserver_request_duration_seconds",
	       "Time from an apiserver call leaving the client's queue to its completion, per verb "
	       "and resource; watches are not included.",
	       L("verb", "resource"), api_buckets, N(api_buckets));
	FAMILY(loop_turn, METRIC_HISTOGRAM, "muster_loop_turn_duration_seconds",
	       "The work of one event loop turn: I/O callbacks, timers and the pump, not the wait "
	       "for events. Nothing else on the loop runs meanwhile (lease renewals have a thread "
	       "of their own).",
	       NULL, turn_buckets, N(turn_buckets));
	FAMILY(loop_turn_max, METRIC_GAUGE, "muster_loop_turn_max_seconds",
	       "The longest loop turn's work since the process started.", NULL, NULL, 0);
	FAMILY(lease_lapses, METRIC_COUNTER, "muster_lease_lapses_total",
	       "Times this replica led and lost the lead: renewDeadline passed with no successful "
	       "Lease renewal, or another replica took the Lease.",
	       NULL, NULL, 0);
	FAMILY(pending, METRIC_GAUGE, "kueue_pending_workloads",
	       "Pending workloads per cluster_queue and status: active (in the queue) or "
	       "inadmissible (tried, waiting for the cohort to change). Their sum is the "
	       "ClusterQueue's status.pendingWorkloads.",
	       L("cluster_queue", "status"), NULL, 0);
	FAMILY(reserving_active, METRIC_GAUGE, "kueue_reserving_active_workloads",
	       "Workloads holding a quota reservation, per cluster_queue.", L("cluster_queue"),
	       NULL, 0);
	FAMILY(admitted_active, METRIC_GAUGE, "kueue_admitted_active_workloads",
	       "Admitted workloads not finished, per cluster_queue.", L("cluster_queue"), NULL, 0);
	FAMILY(cq_status, METRIC_GAUGE, "kueue_cluster_queue_status",
	       "1 for the ClusterQueue's status (pending, active or terminating), 0 for the "
	       "others.",
	       L("cluster_queue", "status"), NULL, 0);
	FAMILY(resource_reservation, METRIC_GAUGE, "kueue_cluster_queue_resource_reservation",
	       "Quota reserved in the ClusterQueue per flavor and resource, in the resource's "
	       "units.",
	       L("cohort", "cluster_queue", "flavor", "resource"), NULL, 0);
	FAMILY(resource_usage, METRIC_GAUGE, "kueue_cluster_queue_resource_usage",
	       "Usage of admitted workloads in the ClusterQueue per flavor and resource.",
	       L("cohort", "cluster_queue", "flavor", "resource"), NULL, 0);
	FAMILY(nominal_quota, METRIC_GAUGE, "kueue_cluster_queue_nominal_quota",
	       "The ClusterQueue's nominalQuota per flavor and resource.",
	       L("cohort", "cluster_queue", "flavor", "resource"), NULL, 0);
	FAMILY(borrowing_limit, METRIC_GAUGE, "kueue_cluster_queue_borrowing_limit",
	       "The ClusterQueue's borrowingLimit per flavor and resource (+Inf when unset).",
	       L("cohort", "cluster_queue", "flavor", "resource"), NULL, 0);
	FAMILY(lending_limit, METRIC_GAUGE, "kueue_cluster_queue_lending_limit",
	       "The ClusterQueue's lendingLimit per flavor and resource (+Inf when unset).",
	       L("cohort", "cluster_queue", "flavor", "resource"), NULL, 0);
	if (!(o->leader =
		      metrics_add_family(m->metrics, METRIC_GAUGE, "muster_leader",
					 "1 when this replica admits and writes (the leader, or "
					 "standalone without leader election), 0 for a follower.",
					 NULL, NULL, 0, 0)) ||
	    !(o->build_info = metrics_add_family(m->metrics, METRIC_GAUGE, "muster_build_info",
						 "Always 1; the labels name the build.",
						 L("version", "git"), NULL, 0, 0)))
		goto fail;
	if (m->conf.fair_sharing.enabled) {
		FAMILY(cq_share, METRIC_GAUGE, "kueue_cluster_queue_weighted_share",
		       "The ClusterQueue's share: the largest ratio, over resources, of what it "
		       "uses "
		       "beyond its nominal quota to what its cohort could lend, divided by its "
		       "weight "
		       "(0 when not borrowing; 9223372036854775807 for weight 0 and borrowing).",
		       L("cluster_queue", "cohort"), NULL, 0);
		FAMILY(cohort_share, METRIC_GAUGE, "kueue_cohort_weighted_share",
		       "The cohort's share, as a ClusterQueue's, against its parent cohort (0 for "
		       "a "
		       "root).",
		       L("cohort"), NULL, 0);
	}
	if (m->conf.admission_fair_sharing.enabled)
		FAMILY(lq_afs_usage, METRIC_GAUGE, "kueue_local_queue_admission_fair_sharing_usage",
		       "The LocalQueue's admission fair sharing usage, which orders its workloads "
		       "in "
		       "its ClusterQueue: consumed resources (decayed, with the admission penalty) "
		       "weighted by resourceWeights, summed, divided by the LocalQueue's weight.",
		       L("name", "namespace", "cluster_queue"), NULL, 0);
	if ((rc = metrics_add(o->lease_lapses, NULL, 0)) != 0) /* 0 is a value too */
		goto fail;
	if (m->kube)
		kube_client_set_observer(m->kube, on_api_call, m);
	/* libuv then keeps the time its poll spends blocked, which is not the turn's work. */
	if ((rc = uv_loop_configure(m->loop, UV_METRICS_IDLE_TIME)) != 0 ||
	    (rc = uv_prepare_start(&m->turn_prepare, on_turn_prepare)) != 0)
		goto fail;
	return 0;
fail:
	observe_release(m);
	return rc;
}

/* The kube client may already be freed here (manager_run frees it first), so it is not
 * touched: on_api_call ignores calls once m->obs is gone. */
void observe_release(struct mgr *m)
{
	free(m->obs);
	m->obs = NULL;
	metrics_free(m->metrics);
	m->metrics = NULL;
}

/* Logs a series the registry refused (full family, out of memory): never fatal. */
static void checked(int rc, const char *series)
{
	if (rc != 0)
		log_warn("metric not updated", LF_STR("series", series), LF_INT("rc", rc), LF_END);
}

/* --- events ------------------------------------------------------------------------------- */

void observe_cycle(struct mgr *m, int had_pending, size_t admitted, uint64_t duration_ns)
{
	if (!had_pending && admitted == 0)
		return; /* nothing was waiting: not an attempt */
	const char *result = admitted ? "success" : "inadmissible";
	checked(metrics_add(m->obs->attempts, V(result), 1), "kueue_admission_attempts_total");
	checked(metrics_observe(m->obs->attempt_duration, V(result), (double)duration_ns / 1e9),
		"kueue_admission_attempt_duration_seconds");
}

/* Seconds from the workload's creation, or its last requeue if later (Kueue's wait time), to
 * now; -1 when neither time is known. */
static double queued_seconds(struct mgr *m, json_t *wl)
{
	int64_t since = -1, requeued;
	if (time_parse_rfc3339(obj_str(wl, "metadata.creationTimestamp"), &since) != 0)
		since = -1;
	json_t *c = condition_get(wl, "Requeued");
	if (time_parse_rfc3339(json_string_value(json_object_get(c, "lastTransitionTime")),
			       &requeued) == 0 &&
	    requeued > since)
		since = requeued;
	if (since < 0)
		return -1;
	int64_t waited = m->now_ms() - since;
	return waited > 0 ? (double)waited / 1000 : 0;
}

void observe_admitted(struct mgr *m, json_t *wl)
{
	const char *cq = obj_str(wl, "status.admission.clusterQueue");
	if (!cq)
		return;
	double wait = queued_seconds(m, wl);
	/* muster has no admission checks: quota reservation and admission are one write. */
	checked(metrics_add(m->obs->quota_reserved, V(cq), 1),
		"kueue_quota_reserved_workloads_total");
	checked(metrics_add(m->obs->admitted, V(cq), 1), "kueue_admitted_workloads_total");
	if (wait >= 0) {
		checked(metrics_observe(m->obs->quota_reserved_wait, V(cq), wait),
			"kueue_quota_reserved_wait_time_seconds");
		checked(metrics_observe(m->obs->admission_wait, V(cq), wait),
			"kueue_admission_wait_time_seconds");
	}
}

/* The victim's record keeps the preempting ClusterQueue from the decision until the eviction's
 * write lands: the landed object names only its own ClusterQueue. */
void observe_preemptor(struct mgr *m, const char *victim, const char *preempting_cq)
{
	char *copy = preempting_cq ? strdup(preempting_cq) : NULL;
	struct wl_record *r = copy ? wl_record_make(m, victim) : NULL;
	if (!r) {
		free(copy);
		return;
	}
	free(r->preempting_cq);
	r->preempting_cq = copy;
}

void observe_evicted(struct mgr *m, const char *key, json_t *wl)
{
	struct wl_record *r = wl_record_get(m, key);
	char *preemptor = r ? r->preempting_cq : NULL;
	if (r)
		r->preempting_cq = NULL;
	const char *cq = obj_str(wl, "status.admission.clusterQueue");
	const char *reason =
		json_string_value(json_object_get(condition_get(wl, "Evicted"), "reason"));
	json_t *preempted = condition_get(wl, "Preempted");
	const char *why = json_string_value(json_object_get(preempted, "reason"));
	if (cq && reason)
		checked(metrics_add(m->obs->evicted, V(cq, reason), 1),
			"kueue_evicted_workloads_total");
	if (preemptor && why && condition_true(wl, "Preempted"))
		checked(metrics_add(m->obs->preempted, V(preemptor, why), 1),
			"kueue_preempted_workloads_total");
	free(preemptor);
}

void observe_forget_cq(struct mgr *m, const char *name)
{
	struct observe *o = m->obs;
	struct metric_family *per_cq[] = { o->quota_reserved, o->quota_reserved_wait, o->admitted,
					   o->admission_wait, o->evicted };
	for (size_t i = 0; i < N(per_cq); i++)
		metrics_remove_matching(per_cq[i], "cluster_queue", name);
	metrics_remove_matching(o->preempted, "preempting_cluster_queue", name);
}

void observe_placement(struct mgr *m, int rc)
{
	const char *result = rc == 0 ? "planned" : rc > 0 ? "no_layout" : "error";
	checked(metrics_add(m->obs->placement, V(result), 1), "muster_placement_attempts_total");
}

void observe_webhook(struct mgr *m, const char *path, uint64_t duration_ns)
{
	checked(metrics_observe(m->obs->webhook, V(path), (double)duration_ns / 1e9),
		"muster_webhook_latency_seconds");
}

/*
 * The Kubernetes verb and resource of a request path as the client sends it
 * ("/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/w/status?x" is a patch of
 * "workloads/status"). Paths are the manager's own, so the label values stay few.
 */
static void verb_and_resource(const char *method, const char *path, char *verb, size_t vsize,
			      char *resource, size_t rsize)
{
	const char *seg[8];
	size_t len[8], n = 0;
	const char *query = strchr(path, '?');
	const char *end = query ? query : path + strlen(path);
	for (const char *p = path; p < end && n < 8;) {
		while (p < end && *p == '/')
			p++;
		const char *q = p;
		while (q < end && *q != '/')
			q++;
		if (q > p) {
			seg[n] = p;
			len[n++] = (size_t)(q - p);
		}
		p = q;
	}
	/* Skip "api/v1" or "apis/<group>/<version>", then "namespaces/<ns>" when more follows. */
	size_t i = n >= 2 && len[0] == 3 && !strncmp(seg[0], "api", 3)  ? 2 :
		   n >= 3 && len[0] == 4 && !strncmp(seg[0], "apis", 4) ? 3 :
									  n;
	if (i + 2 < n && len[i] == 10 && !strncmp(seg[i], "namespaces", 10))
		i += 2;
	size_t rest = i < n ? n - i : 0; /* resource [name [subresource]] */
	if (rest == 0)
		snprintf(resource, rsize, "%s", "");
	else if (rest >= 3)
		snprintf(resource, rsize, "%.*s/%.*s", (int)len[i], seg[i], (int)len[i + 2],
			 seg[i + 2]);
	else
		snprintf(resource, rsize, "%.*s", (int)len[i], seg[i]);
	const char *v = method;
	if (!strcmp(method, "GET"))
		v = query && (strstr(query, "watch=true") || strstr(query, "watch=1")) ? "watch" :
		    rest >= 2                                                          ? "get" :
											 "list";
	else if (!strcmp(method, "POST"))
		v = "create";
	else if (!strcmp(method, "PUT"))
		v = "update";
	else if (!strcmp(method, "PATCH"))
		v = "patch";
	else if (!strcmp(method, "DELETE"))
		v = rest >= 2 ? "delete" : "deletecollection";
	snprintf(verb, vsize, "%s", v);
}

static void on_api_call(void *arg, const char *method, const char *path, long status, int error,
			uint64_t duration_ns)
{
	struct mgr *m = arg;
	char verb[32], resource[128], code[24];
	if (!m->obs)
		return; /* a call the client completes after the manager let go of its metrics */
	verb_and_resource(method, path, verb, sizeof(verb), resource, sizeof(resource));
	if (error || status <= 0)
		snprintf(code, sizeof(code), "<error>");
	else
		snprintf(code, sizeof(code), "%ld", status);
	checked(metrics_add(m->obs->api_requests, V(verb, resource, code), 1),
		"muster_apiserver_requests_total");
	if (strcmp(verb, "watch") != 0)
		checked(metrics_observe(m->obs->api_duration, V(verb, resource),
					(double)duration_ns / 1e9),
			"muster_apiserver_request_duration_seconds");
}

/*
 * One loop turn's work, timed at each prepare (the loop is about to poll for I/O): the time
 * since the last prepare less what the poll spent blocked in the kernel. I/O callbacks (watch
 * events, write answers) run inside the poll, and check, close, timer and idle (the pump)
 * callbacks after it, so a check-to-prepare span would miss the I/O callbacks; this counts all
 * of them. Two clock reads and one observation per turn.
 */
static void on_turn_prepare(uv_prepare_t *h)
{
	struct mgr *m = h->data;
	struct observe *o = m->obs;
	if (!o)
		return; /* the manager let go of its metrics; the handle closes next */
	uint64_t now = uv_hrtime(), idle = uv_metrics_idle_time(m->loop);
	if (o->turn_at) {
		uint64_t spent = now - o->turn_at, waited = idle - o->turn_idle;
		uint64_t work = spent > waited ? spent - waited : 0;
		checked(metrics_observe(o->loop_turn, NULL, (double)work / 1e9),
			"muster_loop_turn_duration_seconds");
		if (work > o->turn_max || metrics_series_count(o->loop_turn_max) == 0) {
			o->turn_max = work;
			checked(metrics_set(o->loop_turn_max, NULL, (double)work / 1e9),
				"muster_loop_turn_max_seconds");
		}
		if (work > SLOW_TURN_NS) {
			const struct pump_turn *p = &m->pump_turn;
			uint64_t pumped = p->drain_ns + p->cycle_ns + p->queues_ns;
			log_warn("a loop turn took long",
				 LF_INT("duration_ms", (long long)(work / MS)),
				 LF_INT("pump_keys", (long long)p->keys),
				 LF_INT("pump_keys_ms", (long long)(p->drain_ns / MS)),
				 LF_INT("cycle_ms", (long long)(p->cycle_ns / MS)),
				 LF_INT("queue_status_ms", (long long)(p->queues_ns / MS)),
				 LF_INT("other_ms",
					(long long)((work > pumped ? work - pumped : 0) / MS)),
				 LF_END);
		}
	}
	m->pump_turn = (struct pump_turn){ 0 };
	o->turn_at = now;
	o->turn_idle = idle;
}

/* --- scrape ------------------------------------------------------------------------------- */

/* A borrowingLimit or lendingLimit in the resource's units; +Inf when unset, as Kueue reports. */
static double limit(json_t *resource, const char *field)
{
	int64_t milli;
	json_t *v = json_object_get(resource, field);
	return v && quantity_from_json(v, &milli) == 0 ? (double)milli / 1000 : INFINITY;
}

/* The quota series of one ClusterQueue, from its spec and the engine's usage. */
static void collect_quotas(struct mgr *m, const char *name, json_t *cq)
{
	struct observe *o = m->obs;
	const char *cohort = obj_str(cq, "spec.cohortName");
	json_t *g, *f, *r;
	size_t gi, fi, ri;
	json_array_foreach(obj_path(cq, "spec.resourceGroups"), gi, g)
	{
		json_array_foreach(json_object_get(g, "flavors"), fi, f)
		{
			const char *flavor = json_string_value(json_object_get(f, "name"));
			json_array_foreach(json_object_get(f, "resources"), ri, r)
			{
				const char *res = json_string_value(json_object_get(r, "name"));
				int64_t milli;
				struct eng_cq_usage u = { 0, 0 };
				if (!flavor || !res)
					continue;
				const char *const *lv = V(cohort, name, flavor, res);
				engine_cq_usage(m->engine, name, flavor, res, &u);
				checked(metrics_set(o->resource_reservation, lv,
						    (double)u.total / 1000),
					"kueue_cluster_queue_resource_reservation");
				checked(metrics_set(o->resource_usage, lv, (double)u.total / 1000),
					"kueue_cluster_queue_resource_usage");
				if (quantity_from_json(json_object_get(r, "nominalQuota"),
						       &milli) == 0)
					checked(metrics_set(o->nominal_quota, lv,
							    (double)milli / 1000),
						"kueue_cluster_queue_nominal_quota");
				checked(metrics_set(o->borrowing_limit, lv,
						    limit(r, "borrowingLimit")),
					"kueue_cluster_queue_borrowing_limit");
				checked(metrics_set(o->lending_limit, lv, limit(r, "lendingLimit")),
					"kueue_cluster_queue_lending_limit");
			}
		}
	}
}

/* A share as Kueue's gauges report it: the precise value, and for an infinite one (weight 0,
 * borrowing) the largest int64, as its weightedShare says. */
static double share_value(const struct eng_share *s)
{
	return isinf(s->precise) ? (double)INT64_MAX : s->precise;
}

/* Fair sharing's gauges (only their families that are registered): every ClusterQueue's
 * share, every cohort's (given by a Cohort or only named by a ClusterQueue), every
 * LocalQueue's admission fair sharing usage. */
static void collect_fair_sharing(struct mgr *m)
{
	struct observe *o = m->obs;
	struct eng_share share;
	const char *name;
	json_t *obj;
	if (o->cq_share) {
		json_t *cohorts = json_object();
		json_object_foreach(m->stores[K_CQ], name, obj)
		{
			const char *cohort = obj_str(obj, "spec.cohortName");
			if (cohort && cohorts)
				json_object_set_new(cohorts, cohort, json_true());
			if (engine_cq_share(m->engine, name, &share) == 0)
				checked(metrics_set(o->cq_share, V(name, cohort),
						    share_value(&share)),
					"kueue_cluster_queue_weighted_share");
		}
		json_object_foreach(m->stores[K_COHORT], name, obj) if (cohorts)
			json_object_set_new(cohorts, name, json_true());
		json_object_foreach(cohorts, name,
				    obj) if (engine_cohort_share(m->engine, name, &share) == 0)
			checked(metrics_set(o->cohort_share, V(name), share_value(&share)),
				"kueue_cohort_weighted_share");
		json_decref(cohorts);
	}
	if (o->lq_afs_usage) {
		json_object_foreach(m->stores[K_LQ], name, obj)
		{
			struct eng_afs_status st;
			const char *ns = obj_namespace(obj), *lq = obj_name(obj);
			if (engine_afs_status(m->engine, ns, lq, &st) == 0)
				checked(metrics_set(o->lq_afs_usage,
						    V(lq, ns, obj_str(obj, "spec.clusterQueue")),
						    st.usage),
					"kueue_local_queue_admission_fair_sharing_usage");
		}
	}
}

/* Rebuilds the gauges that mirror state, from the same sources as the queues' status. */
static void collect(struct mgr *m)
{
	struct observe *o = m->obs;
	struct metric_family *mirrors[] = { o->pending,
					    o->reserving_active,
					    o->admitted_active,
					    o->cq_status,
					    o->resource_reservation,
					    o->resource_usage,
					    o->nominal_quota,
					    o->borrowing_limit,
					    o->lending_limit,
					    o->leader,
					    o->build_info };
	for (size_t i = 0; i < N(mirrors); i++)
		metrics_reset(mirrors[i]);
	struct metric_family *fair[] = { o->cq_share, o->cohort_share, o->lq_afs_usage };
	for (size_t i = 0; i < N(fair); i++)
		if (fair[i])
			metrics_reset(fair[i]);
	collect_fair_sharing(m);
	const char *name;
	json_t *cq;
	json_object_foreach(m->stores[K_CQ], name, cq)
	{
		size_t active = 0, inadmissible = 0, pending = 0, admitted = 0;
		const char *reason = NULL, *message = NULL;
		engine_cq_pending(m->engine, name, &active, &inadmissible);
		engine_cq_counts(m->engine, name, &pending, &admitted);
		checked(metrics_set(o->pending, V(name, "active"), (double)active),
			"kueue_pending_workloads");
		checked(metrics_set(o->pending, V(name, "inadmissible"), (double)inadmissible),
			"kueue_pending_workloads");
		/* No admission checks: every reservation is an admission, as in the status. */
		checked(metrics_set(o->reserving_active, V(name), (double)admitted),
			"kueue_reserving_active_workloads");
		checked(metrics_set(o->admitted_active, V(name), (double)admitted),
			"kueue_admitted_active_workloads");
		/* As the Active condition says (queues.c): inactive when muster refused the
		 * spec. */
		const struct cq_record *r = cq_record_get(m, name);
		int is_active = !(r && r->inactive) &&
				engine_cq_active(m->engine, name, &reason, &message) == 1;
		const char *status = obj_path(cq, "metadata.deletionTimestamp") ? "terminating" :
				     is_active                                  ? "active" :
										  "pending";
		static const char *const statuses[] = { "pending", "active", "terminating" };
		for (size_t s = 0; s < N(statuses); s++)
			checked(metrics_set(o->cq_status, V(name, statuses[s]),
					    !strcmp(status, statuses[s]) ? 1 : 0),
				"kueue_cluster_queue_status");
		if (m->conf.metrics_cq_resources)
			collect_quotas(m, name, cq);
	}
	/* Counted on the lease thread (kube/lease_thread.h), at once, even while this loop is
	 * busy; read here. */
	unsigned long lapses = lease_thread_lapses(m->elector);
	if (lapses > o->lapses) {
		checked(metrics_add(o->lease_lapses, NULL, (double)(lapses - o->lapses)),
			"muster_lease_lapses_total");
		o->lapses = lapses;
	}
	const char *role = metrics_replica_role(m->metrics);
	checked(metrics_set(o->leader, NULL, strcmp(role, "follower") ? 1 : 0), "muster_leader");
	checked(metrics_set(o->build_info, V(MUSTER_VERSION, MUSTER_GIT), 1), "muster_build_info");
}

int observe_render(struct mgr *m, struct buf *out)
{
	collect(m);
	return metrics_render(m->metrics, out);
}
