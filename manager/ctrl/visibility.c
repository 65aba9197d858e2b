/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The visibility endpoint: where a workload stands and why, for people and for tools.
 *
 *   /apis/visibility.kueue.x-k8s.io/v1beta2  Kueue's visibility API, same paths and JSON:
 *       clusterqueues/{cq}/pendingworkloads, namespaces/{ns}/localqueues/{lq}/pendingworkloads
 *       (PendingWorkloadsSummary; ?limit= default 1000, at most 100000; ?offset=)
 *   /apis/visibility.muster.io/v1alpha1      what Kueue has no answer for:
 *       namespaces/{ns}/workloads/{name}/why  WorkloadExplanation
 *       namespaces/{ns}/workloads/{name}/eta  WorkloadEstimate
 *       namespaces/{ns}/workloads/{name}/history, clusterqueues/{cq}/history  DecisionList
 *       usage?since=&by=queue|namespace       UsageReport
 * (docs/observability.md, "The visibility endpoint", documents the JSON.) Both groups answer
 * discovery at their root, so an APIService can put them behind the apiserver, which then
 * authenticates and authorizes the caller; run directly, the endpoint has no authentication
 * of its own and should listen where only trusted clients reach it.
 *
 * Answers are built on the loop thread from what the controller already holds: the engine's
 * queues (positions are its real order, engine_pending_order), its quota maths
 * (engine_explain), the placement model, the ledger. Every answer is bounded: lists by limit,
 * explanations by the engine's fixed arrays.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/config.h"
#include "api/objects.h"
#include "core/container_of.h"
#include "core/num.h"
#include "ctrl/internal.h"
#include "ledger/ledger.h"
#include "net/http_parse.h"
#include "sim/forecast.h"
#include "util/log.h"

#define KUEUE_VIS "/apis/visibility.kueue.x-k8s.io/v1beta2"
#define MUSTER_VIS "/apis/visibility.muster.io/v1alpha1"
#define MUSTER_VIS_VERSION "visibility.muster.io/v1alpha1"
#define PENDING_LIMIT_DEFAULT 1000
#define PENDING_LIMIT_MAX 100000

/* --- answers ---------------------------------------------------------------------------------- */

static void reply(struct httpd_response *resp, int status, json_t *body)
{
	resp->status = status;
	resp->content_type = "application/json";
	resp->body = body ? json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	resp->body_len = resp->body ? strlen(resp->body) : 0;
	if (body && !resp->body)
		resp->status = 500;
	json_decref(body);
}

/* A Kubernetes Status, as the apiserver answers errors. */
static void reply_error(struct httpd_response *resp, int code, const char *reason, const char *fmt,
			...) __attribute__((format(printf, 4, 5)));
static void reply_error(struct httpd_response *resp, int code, const char *reason, const char *fmt,
			...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	reply(resp, code,
	      json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
			"v1", "metadata", "status", "Failure", "message", msg, "reason", reason,
			"code", code));
}

static json_t *quantity(const char *resource, int64_t milli)
{
	char buf[64];
	quota_format_amount(resource, milli, buf, sizeof(buf));
	return json_string(buf);
}

/* --- requests --------------------------------------------------------------------------------- */

/* ?name= as a whole number in [0, max], def when absent. 0, or -EINVAL. */
static int query_count(const char *query, const char *name, long def, long max, long *out)
{
	char v[32];
	int64_t n;
	int found = http_query_param(query, name, v, sizeof(v));
	if (found <= 0) {
		*out = def;
		return found;
	}
	if (num_parse_i64(v, 0, max, &n) != 0)
		return -EINVAL;
	*out = (long)n;
	return 0;
}

/* --- Kueue's visibility API
 * -------------------------------------------------------------------- */

struct pending_page {
	struct mgr *m;
	long offset, limit, seen;
	json_t *items;
};

static int add_pending(void *arg, const struct eng_pending *p)
{
	struct pending_page *pg = arg;
	if (pg->seen++ < pg->offset)
		return 0;
	if ((long)json_array_size(pg->items) >= pg->limit)
		return 1;
	json_t *wl = store_get(pg->m, K_WORKLOAD, p->key);
	json_t *meta = json_pack("{s:s, s:s}", "name", p->name, "namespace", p->namespace_name);
	const char *created = obj_str(wl, "metadata.creationTimestamp");
	json_t *owners = obj_path(wl, "metadata.ownerReferences");
	if (created)
		json_object_set_new(meta, "creationTimestamp", json_string(created));
	if (owners)
		json_object_set(meta, "ownerReferences", owners);
	json_array_append_new(pg->items,
			      json_pack("{s:o, s:i, s:s, s:I, s:I}", "metadata", meta, "priority",
					(int)p->priority, "localQueueName", p->local_queue,
					"positionInClusterQueue", (json_int_t)p->position_in_cq,
					"positionInLocalQueue", (json_int_t)p->position_in_lq));
	return 0;
}

static void pending_workloads(struct mgr *m, const struct httpd_request *req, const char *ns,
			      const char *queue, struct httpd_response *resp)
{
	struct pending_page pg = { m, 0, 0, 0, json_array() };
	if (query_count(req->query, "offset", 0, 1L << 30, &pg.offset) != 0 ||
	    query_count(req->query, "limit", PENDING_LIMIT_DEFAULT, PENDING_LIMIT_MAX, &pg.limit) !=
		    0) {
		json_decref(pg.items);
		reply_error(resp, 400, "BadRequest",
			    "limit must be 0..%d and offset a whole number", PENDING_LIMIT_MAX);
		return;
	}
	int rc = ns ? engine_pending_order_lq(m->engine, ns, queue, add_pending, &pg) :
		      engine_pending_order(m->engine, queue, add_pending, &pg);
	if (rc == -ENOENT) {
		json_decref(pg.items);
		reply_error(resp, 404, "NotFound", "%s \"%s\" not found",
			    ns ? "localqueues" : "clusterqueues", queue);
		return;
	}
	if (rc < 0) {
		json_decref(pg.items);
		reply_error(resp, 500, "InternalError", "%s", strerror(-rc));
		return;
	}
	reply(resp, 200,
	      json_pack("{s:s, s:s, s:{s:n}, s:o}", "kind", "PendingWorkloadsSummary", "apiVersion",
			"visibility.kueue.x-k8s.io/v1beta2", "metadata", "creationTimestamp",
			"items", pg.items));
}

/* --- muster's answers
 * ---------------------------------------------------------------------------- */

/* What the Workload's QuotaReserved=False says now: the reason the engine gave last even when
 * it is not written yet (a new workload's quiet period, a write in flight). */
static void pending_reason(struct mgr *m, const char *key, json_t *wl, const char **reason,
			   const char **message)
{
	const struct wl_record *r = wl_record_get(m, key);
	json_t *c = condition_get(wl, "QuotaReserved");
	if (r && r->unwritten) {
		*reason = r->unwritten;
		*message = wl_record_unwritten_message(r);
		return;
	}
	const char *status = json_string_value(json_object_get(c, "status"));
	*reason = json_string_value(json_object_get(c, "reason"));
	*message = json_string_value(json_object_get(c, "message"));
	if (!*reason || !status || strcmp(status, "False") != 0) {
		*reason = "PendingEvaluation";
		*message = "Workload is pending evaluation in the scheduling queue";
	}
}

static json_t *workload_summary(const struct eng_explain *x, const char *ns, const char *name)
{
	json_t *w = json_pack("{s:s, s:s, s:i}", "namespace", ns, "name", name, "priority",
			      (int)x->priority);
	if (x->cluster_queue)
		json_object_set_new(w, "clusterQueue", json_string(x->cluster_queue));
	if (x->local_queue)
		json_object_set_new(w, "localQueue", json_string(x->local_queue));
	return w;
}

/* The name part of a "namespace/name" key. */
static const char *key_name(const char *key)
{
	const char *slash = strchr(key, '/');
	return slash ? slash + 1 : key;
}

static json_t *explanation(struct mgr *m, const char *key, json_t *wl, struct eng_explain *x)
{
	const char *reason = NULL, *message = NULL;
	json_t *out = json_pack("{s:s, s:s, s:o}", "kind", "WorkloadExplanation", "apiVersion",
				MUSTER_VIS_VERSION, "workload",
				workload_summary(x, obj_namespace(wl), obj_name(wl)));
	if (x->state == ENG_STATE_ADMITTED) {
		json_object_set_new(out, "state", json_string("Admitted"));
		json_object_set_new(out, "reason",
				    json_string(x->evicting ? "Evicting" : "Admitted"));
		json_object_set_new(out, "message",
				    json_string(x->evicting ? "told to go; its quota is released "
							      "once its pods are gone" :
							      "admitted: it holds its quota"));
		return out;
	}
	pending_reason(m, key, wl, &reason, &message);
	json_object_set_new(out, "state", json_string("Pending"));
	json_object_set_new(out, "reason", json_string(reason));
	json_object_set_new(out, "message", json_string(message ? message : ""));
	if (x->has_position) {
		json_object_set_new(out, "positionInClusterQueue",
				    json_integer((json_int_t)x->position_in_cq));
		json_object_set_new(out, "positionInLocalQueue",
				    json_integer((json_int_t)x->position_in_lq));
	}
	json_t *lacking = json_array(), *holders = json_array(), *to_fit = json_array();
	for (size_t i = 0; i < x->n_lacking; i++) {
		const struct eng_lack *l = &x->lacking[i];
		json_t *e = json_pack("{s:s, s:s, s:o, s:o, s:o}", "podSet", l->podset, "resource",
				      l->resource, "requested", quantity(l->resource, l->requested),
				      "available", quantity(l->resource, l->available), "missing",
				      quantity(l->resource, l->missing));
		if (l->flavor)
			json_object_set_new(e, "flavor", json_string(l->flavor));
		if (l->reserved)
			json_object_set_new(e, "reservedForPreemptors",
					    quantity(l->resource, l->reserved));
		if (l->exceeds_capacity)
			json_object_set_new(e, "exceedsCapacity", json_true());
		json_array_append_new(lacking, e);
	}
	for (size_t i = 0; i < x->n_holders; i++) {
		const struct eng_holder *h = &x->holders[i];
		const char *slash = strchr(h->key, '/');
		json_array_append_new(
			holders,
			json_pack("{s:s%, s:s, s:s, s:s, s:i, s:s, s:s, s:o, s:b, s:b, s:b}",
				  "namespace", h->key, slash ? (size_t)(slash - h->key) : 0, "name",
				  key_name(h->key), "clusterQueue", h->cluster_queue, "via",
				  h->same_cq ? "ClusterQueue" : "Cohort", "priority",
				  (int)h->priority, "flavor", h->flavor, "resource", h->resource,
				  "amount", quantity(h->resource, h->amount), "borrowing",
				  h->borrowing, "preemptible", h->preemptible, "evicting",
				  h->evicting));
	}
	for (size_t i = 0; x->to_fit_found && i < x->n_to_fit; i++) {
		const struct eng_fit_step *f = &x->to_fit[i];
		const char *slash = strchr(f->key, '/');
		json_array_append_new(to_fit,
				      json_pack("{s:s, s:s%, s:s, s:s, s:s, s:o}", "action",
						f->preempt ? "preempt" : "end", "namespace", f->key,
						slash ? (size_t)(slash - f->key) : 0, "name",
						key_name(f->key), "flavor", f->flavor, "resource",
						f->resource, "frees",
						quantity(f->resource, f->frees)));
	}
	json_object_set_new(out, "lacking", lacking);
	json_object_set_new(out, "holders", holders);
	json_object_set_new(out, "toFit", to_fit);
	if (x->holders_total > x->n_holders)
		json_object_set_new(out, "holdersNotListed",
				    json_integer((json_int_t)(x->holders_total - x->n_holders)));
	json_t *closest = x->wait == ENG_WAIT_NODES ? nodes_closest(m, key) : NULL;
	if (closest)
		json_object_set(out, "nodes", closest);
	if (x->wait == ENG_WAIT_QUOTA && !x->to_fit_found)
		json_object_set_new(out, "toFitNote",
				    json_string(
					    "no set of releases lets it fit: it asks for more than "
					    "its ClusterQueue can ever have, or for quota held for "
					    "waiting preemptors"));
	return out;
}

static void why(struct mgr *m, const char *ns, const char *name, struct httpd_response *resp)
{
	char key[600];
	struct eng_explain *x = calloc(1, sizeof(*x));
	if (!x) {
		reply_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	json_t *wl = store_get(m, K_WORKLOAD, key);
	int rc = wl ? engine_explain(m->engine, key, x) : -ENOENT;
	if (!wl) {
		reply_error(resp, 404, "NotFound", "workloads \"%s\" not found in namespace %s",
			    name, ns);
	} else if (rc == -ENOENT) {
		/* Not in the engine: finished, deactivated, not queued, or unreadable. */
		const char *reason, *message;
		int finished = condition_true(wl, "Finished");
		if (finished) {
			json_t *c = condition_get(wl, "Finished");
			reason = json_string_value(json_object_get(c, "reason"));
			message = json_string_value(json_object_get(c, "message"));
		} else {
			pending_reason(m, key, wl, &reason, &message);
		}
		reply(resp, 200,
		      json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s}", "kind",
				"WorkloadExplanation", "apiVersion", MUSTER_VIS_VERSION, "workload",
				"namespace", ns, "name", name, "state",
				finished ? "Finished" : "Unknown", "reason",
				reason   ? reason :
				finished ? "Finished" :
					   "Unknown",
				"message", message ? message : ""));
	} else if (rc < 0) {
		reply_error(resp, 500, "InternalError", "%s", strerror(-rc));
	} else {
		reply(resp, 200, explanation(m, key, wl, x));
	}
	free(x);
}

/* --- the ledger's answers
 * ------------------------------------------------------------------------ */

#define HISTORY_LIMIT_DEFAULT 100

/* ?since= as a time: RFC 3339, or a duration back from now ("24h"); def_ms back when absent. */
static int query_since(struct mgr *m, const char *query, int64_t def_ms, int64_t *since)
{
	char v[64];
	int64_t ms;
	int found = http_query_param(query, "since", v, sizeof(v));
	if (found <= 0) {
		*since = m->now_ms() - def_ms;
		return found;
	}
	/* A person's query: days too ("7d"), as kubectl muster's --since takes them. */
	if (num_parse_duration_ms(v, 1, INT64_MAX, &ms) == 0) {
		*since = m->now_ms() - ms;
		return 0;
	}
	return time_parse_rfc3339(v, since) == 0 ? 0 : -EINVAL;
}

static int ledger_ready(struct mgr *m, struct httpd_response *resp)
{
	if (m->ledger)
		return 1;
	reply_error(resp, 503, "ServiceUnavailable",
		    "the decision ledger is off on this replica (ledger.enable, ledger.path or "
		    "--state-dir)");
	return 0;
}

static void reply_ledger(struct httpd_response *resp, int rc, json_t *out)
{
	if (rc == 0)
		reply(resp, 200, out);
	else if (rc == -EINVAL)
		reply_error(resp, 400, "BadRequest", "invalid query");
	else if (rc == -E2BIG)
		reply_error(resp, 400, "BadRequest",
			    "too many admissions in the window: narrow it with since");
	else
		reply_error(resp, 500, "InternalError", "the ledger could not answer: %s",
			    strerror(-rc));
}

/* A ledger query: it does disk I/O (a usage report over a busy day reads some 100,000
 * admissions, most of a second), so it runs on libuv's threadpool and the request gets its
 * answer when it is done (httpd_defer); the loop, and admission, never wait for the disk. The
 * ledger's queries are thread-safe. */
enum query_kind { Q_WORKLOAD_HISTORY, Q_CQ_HISTORY, Q_USAGE };

struct ledger_query {
	uv_work_t work;
	struct mgr *m;
	struct httpd_deferred *d;
	enum query_kind kind;
	char ns[256], name[256];
	unsigned limit;
	int64_t since, until;
	enum ledger_usage_by by;
	json_t *out;
	int rc;
};

static void run_query(struct ledger_query *q)
{
	struct ledger *l = q->m->ledger;
	switch (q->kind) {
	case Q_WORKLOAD_HISTORY:
		q->rc = ledger_workload_history(l, q->ns, q->name, q->limit, &q->out);
		break;
	case Q_CQ_HISTORY:
		q->rc = ledger_cluster_queue_history(l, q->name, q->since, q->limit, &q->out);
		break;
	case Q_USAGE:
		q->rc = ledger_usage(l, q->since, q->until, q->by, &q->out);
		break;
	}
}

static void on_query_work(uv_work_t *w)
{
	run_query(CONTAINER_OF(w, struct ledger_query, work));
}

static void answer_query(struct ledger_query *q)
{
	struct httpd_response resp = { 500, NULL, NULL, 0 };
	reply_ledger(&resp, q->rc, q->out);
	q->out = NULL; /* reply took it */
	httpd_answer(q->d, resp.status, resp.content_type, resp.body, resp.body_len);
	free(q);
}

static void on_query_done(uv_work_t *w, int status)
{
	struct ledger_query *q = CONTAINER_OF(w, struct ledger_query, work);
	q->m->visibility_work--;
	if (status == UV_ECANCELED) {
		json_decref(q->out);
		q->out = NULL;
		q->rc = -ECANCELED;
	}
	answer_query(q);
}

/* Runs q (owned) off the loop when the request can wait for its answer, else here. */
static void submit_query(struct mgr *m, const struct httpd_request *req, struct ledger_query *q,
			 struct httpd_response *resp)
{
	q->m = m;
	q->d = httpd_defer(req);
	if (q->d && uv_queue_work(m->loop, &q->work, on_query_work, on_query_done) == 0) {
		m->visibility_work++;
		return;
	}
	run_query(q);
	if (q->d) {
		answer_query(q);
		return;
	}
	reply_ledger(resp, q->rc, q->out);
	free(q);
}

static void history(struct mgr *m, const struct httpd_request *req, const char *ns,
		    const char *name, struct httpd_response *resp)
{
	long limit;
	int64_t since = 0;
	if (!ledger_ready(m, resp))
		return;
	if (query_count(req->query, "limit", HISTORY_LIMIT_DEFAULT, LEDGER_HISTORY_MAX, &limit) !=
		    0 ||
	    limit == 0 ||
	    (!ns && query_since(m, req->query, (int64_t)24 * 3600 * 1000, &since) != 0)) {
		reply_error(resp, 400, "BadRequest",
			    "limit must be 1..%u, since a duration (\"24h\") or an RFC 3339 time",
			    LEDGER_HISTORY_MAX);
		return;
	}
	struct ledger_query *q = calloc(1, sizeof(*q));
	if (!q) {
		reply_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	q->kind = ns ? Q_WORKLOAD_HISTORY : Q_CQ_HISTORY;
	snprintf(q->ns, sizeof(q->ns), "%s", ns ? ns : "");
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->limit = (unsigned)limit;
	q->since = since;
	submit_query(m, req, q, resp);
}

static void usage(struct mgr *m, const struct httpd_request *req, struct httpd_response *resp)
{
	char by[32] = "queue";
	int64_t since;
	if (!ledger_ready(m, resp))
		return;
	if (http_query_param(req->query, "by", by, sizeof(by)) < 0 ||
	    query_since(m, req->query, (int64_t)24 * 3600 * 1000, &since) != 0 ||
	    (strcmp(by, "queue") != 0 && strcmp(by, "namespace") != 0)) {
		reply_error(resp, 400, "BadRequest",
			    "since must be a duration (\"24h\") or an RFC 3339 time, by queue or "
			    "namespace");
		return;
	}
	struct ledger_query *q = calloc(1, sizeof(*q));
	if (!q) {
		reply_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	q->kind = Q_USAGE;
	q->since = since;
	q->until = m->now_ms();
	q->by = !strcmp(by, "queue") ? LEDGER_BY_QUEUE : LEDGER_BY_NAMESPACE;
	submit_query(m, req, q, resp);
}

/* --- eta: the forecast (sim/forecast.h) on a copy of what the controller holds
 * ------------------- */

/* How long one forecast answers eta for every workload: a forecast decodes every object again
 * (about 0.8 s for 50,000 Workloads), so requests in a burst share one. */
#define ETA_CACHE_MS 10000
/* Recent runtimes of a ClusterQueue the forecast gets as its sample (ledger). */
#define ETA_RUNTIME_SAMPLE 200
/* Requests waiting for a forecast at most; more get 503. */
#define ETA_WAITERS_MAX 256

struct eta_cache {
	int64_t made_ms;
	struct forecast_result result;
};

/* A request waiting for the forecast in flight. */
struct eta_waiter {
	struct eta_waiter *next;
	struct httpd_deferred *d;
	char ns[256], name[256];
};

/*
 * A forecast in flight. The loop thread takes a snapshot (the compact stores' texts, copies of
 * the small ones), which costs a copy of each text; everything else (parsing, decoding, the
 * ledger's runtimes, the forecast itself) runs on libuv's threadpool, so admission never waits
 * for it. Requests that arrive meanwhile wait for it (httpd_defer).
 */
struct forecast_job {
	uv_work_t work;
	struct mgr *m;
	int64_t now_ms;
	struct ledger *ledger;
	json_t *flavors, *cohorts, *cqs, *lqs, *namespaces, *wpcs, *pcs, *topologies;
	struct strmap wl_texts, job_texts; /* key -> char *: snapshots of the compact stores */
	struct eta_cache *cache; /* the result */
	int rc;
	char err[512];
	struct eta_waiter *waiters;
	size_t n_waiters;
};

static int cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* A compact store's texts parsed into key -> object. A new reference. */
static json_t *parse_texts(const struct strmap *texts)
{
	json_t *out = json_object();
	for (size_t i = 0; out && i < texts->cap; i++) {
		const struct strmap_slot *sl = &texts->slots[i];
		json_t *obj = sl->key ? json_loads(sl->value, 0, NULL) : NULL;
		if (obj)
			json_object_set_new(out, sl->key, obj);
	}
	return out;
}

/* Runs the forecast on the job's snapshot: any thread. */
static void run_forecast(struct forecast_job *job)
{
	struct sim_objects objs = { 0 };
	json_t *wls = parse_texts(&job->wl_texts), *jobs = parse_texts(&job->job_texts);
	const char *key;
	json_t *v;
	size_t n_cqs = json_object_size(job->cqs), n_dl = 0, n_rt = 0;
	struct forecast_deadline *dl = calloc(json_object_size(jobs) + 1, sizeof(*dl));
	struct forecast_runtime *rt = calloc(n_cqs + 1, sizeof(*rt));
	int64_t *samples = calloc((n_cqs + 1) * ETA_RUNTIME_SAMPLE, sizeof(*samples));
	struct ledger_runtime *recent = calloc(ETA_RUNTIME_SAMPLE, sizeof(*recent));
	char(*names)[600] = calloc(json_object_size(jobs) + 1, sizeof(*names));
	job->cache = calloc(1, sizeof(*job->cache));
	job->rc = -ENOMEM;
	if (!wls || !jobs || !dl || !rt || !samples || !recent || !names || !job->cache)
		goto out;
	/* A Job's activeDeadlineSeconds bounds its Workload's runtime. */
	json_object_foreach(jobs, key, v)
	{
		json_t *ads = obj_path(v, "spec.activeDeadlineSeconds");
		char name[300];
		if (!json_is_integer(ads) ||
		    integration_workload_name(&integration_job, obj_name(v), obj_uid(v), name,
					      sizeof(name)) != 0)
			continue;
		snprintf(names[n_dl], sizeof(names[n_dl]), "%s/%s", obj_namespace(v), name);
		dl[n_dl].workload = names[n_dl];
		dl[n_dl].seconds = json_integer_value(ads);
		n_dl++;
	}
	/* Runtimes of each ClusterQueue's finished workloads, from the ledger. */
	json_object_foreach(job->cqs, key, v)
	{
		size_t n = 0;
		if (!job->ledger ||
		    ledger_recent_runtimes(job->ledger, key, recent, ETA_RUNTIME_SAMPLE, &n) != 0 ||
		    !n)
			continue;
		int64_t *sample = samples + n_rt * ETA_RUNTIME_SAMPLE;
		for (size_t i = 0; i < n; i++)
			sample[i] = recent[i].runtime_ms;
		qsort(sample, n, sizeof(*sample), cmp_int64);
		rt[n_rt++] = (struct forecast_runtime){ key, 0, sample, n };
	}
	/* The manager's fair-sharing settings: its configuration lives as long as the process
	 * and is not changed after start, so the forecast's thread may read it. */
	objs.fair_sharing = &job->m->conf.fair_sharing;
	objs.admission_fair_sharing = &job->m->conf.admission_fair_sharing;
	objs.flavors = job->flavors;
	objs.cohorts = job->cohorts;
	objs.cluster_queues = job->cqs;
	objs.local_queues = job->lqs;
	objs.namespaces = job->namespaces;
	objs.workload_priority_classes = job->wpcs;
	objs.priority_classes = job->pcs;
	objs.topologies = job->topologies;
	objs.workloads = wls;
	struct forecast_input in = { .objects = &objs };
	struct forecast_options opt = { .now_ms = job->now_ms,
					.deadlines = dl,
					.n_deadlines = n_dl,
					.runtimes = rt,
					.n_runtimes = n_rt,
					.skip_invalid = 1 };
	job->rc = forecast_pending(&in, &opt, &job->cache->result, job->err, sizeof(job->err));
	job->cache->made_ms = job->now_ms;
out:
	if (job->rc != 0) {
		free(job->cache);
		job->cache = NULL;
	}
	json_decref(wls);
	json_decref(jobs);
	free(dl);
	free(rt);
	free(samples);
	free(recent);
	free(names);
}

/* A copy of a compact store's texts. 0 or -ENOMEM. */
static int copy_texts(const struct strmap *from, struct strmap *to)
{
	strmap_init(to);
	for (size_t i = 0; i < from->cap; i++) {
		const struct strmap_slot *sl = &from->slots[i];
		char *copy = sl->key ? strdup(sl->value) : NULL;
		if (sl->key && (!copy || strmap_put(to, sl->key, copy, NULL) != 0)) {
			free(copy);
			return -ENOMEM;
		}
	}
	return 0;
}

static void forecast_job_free(struct forecast_job *job)
{
	json_t *objs[] = { job->flavors,    job->cohorts, job->cqs, job->lqs,
			   job->namespaces, job->wpcs,    job->pcs, job->topologies };
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		json_decref(objs[i]);
	strmap_release(&job->wl_texts, free);
	strmap_release(&job->job_texts, free);
	if (job->cache)
		forecast_result_release(&job->cache->result);
	free(job->cache);
	free(job);
}

/* The snapshot a forecast runs on, taken on the loop thread; NULL when out of memory. */
static struct forecast_job *forecast_job_new(struct mgr *m)
{
	struct forecast_job *job = calloc(1, sizeof(*job));
	if (!job)
		return NULL;
	job->m = m;
	job->now_ms = m->now_ms();
	job->ledger = m->ledger;
	strmap_init(&job->wl_texts);
	strmap_init(&job->job_texts);
	json_t **to[] = { &job->flavors,    &job->cohorts, &job->cqs, &job->lqs,
			  &job->namespaces, &job->wpcs,    &job->pcs, &job->topologies };
	enum kind from[] = { K_FLAVOR, K_COHORT, K_CQ, K_LQ, K_NAMESPACE, K_WPC, K_PC, K_TOPOLOGY };
	int ok = copy_texts(&m->texts[K_WORKLOAD], &job->wl_texts) == 0 &&
		 copy_texts(&m->texts[K_JOB], &job->job_texts) == 0;
	for (size_t i = 0; ok && i < sizeof(from) / sizeof(from[0]); i++)
		ok = (*to[i] = json_deep_copy(m->stores[from[i]] ? m->stores[from[i]] :
								   json_object())) != NULL;
	if (!ok) {
		forecast_job_free(job);
		return NULL;
	}
	return job;
}

/* Frees the latest forecast. */
static void eta_cache_drop(struct mgr *m)
{
	if (m->eta_cache)
		forecast_result_release(&m->eta_cache->result);
	free(m->eta_cache);
	m->eta_cache = NULL;
}

void visibility_release(struct mgr *m)
{
	/* Work on the threadpool finishes first: the ledger closes after this. */
	while (m->visibility_work > 0)
		uv_run(m->loop, UV_RUN_ONCE);
	eta_cache_drop(m);
}

/* Whether the latest forecast answers for key now: it is fresh, and it knows key or key came
 * too late for it (a pending workload it doesn't know has a second's grace before a new one:
 * a stream of requests can't run one forecast after another). */
static int cache_answers(struct mgr *m, const char *key)
{
	int64_t now = m->now_ms();
	struct eta_cache *c = m->eta_cache;
	if (!c || now - c->made_ms > ETA_CACHE_MS || now < c->made_ms)
		return 0;
	for (size_t i = 0; i < c->result.n; i++)
		if (!strcmp(c->result.items[i].workload, key))
			return 1;
	const struct wl_record *r = wl_record_get(m, key);
	return !r || !r->pending || now - c->made_ms < 1000;
}

/* The answer to eta for ns/name from the latest forecast (which answers for it). */
static void eta_answer(struct mgr *m, const char *ns, const char *name, struct httpd_response *resp)
{
	char key[600], when[40];
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	json_t *wl = store_get(m, K_WORKLOAD, key);
	if (!wl) {
		reply_error(resp, 404, "NotFound", "workloads \"%s\" not found in namespace %s",
			    name, ns);
		return;
	}
	json_t *summary = json_pack("{s:s, s:s}", "namespace", ns, "name", name);
	const char *cq = workload_cluster_queue(m, wl), *lq = obj_str(wl, "spec.queueName");
	if (cq)
		json_object_set_new(summary, "clusterQueue", json_string(cq));
	if (lq)
		json_object_set_new(summary, "localQueue", json_string(lq));
	json_t *out = json_pack("{s:s, s:s, s:o}", "kind", "WorkloadEstimate", "apiVersion",
				MUSTER_VIS_VERSION, "workload", summary);
	if (condition_true(wl, "Finished") || condition_true(wl, "QuotaReserved")) {
		int fin = condition_true(wl, "Finished");
		const char *t = json_string_value(
			json_object_get(condition_get(wl, "QuotaReserved"), "lastTransitionTime"));
		json_object_set_new(out, "state", json_string(fin ? "Finished" : "Admitted"));
		json_object_set_new(out, "estimatedAdmission",
				    !fin && t ? json_string(t) : json_null());
		json_object_set_new(out, "basis",
				    json_string(fin ? "it has finished" : "it is admitted"));
		reply(resp, 200, out);
		return;
	}
	const struct forecast_estimate *e = NULL;
	for (size_t i = 0; m->eta_cache && i < m->eta_cache->result.n; i++)
		if (!strcmp(m->eta_cache->result.items[i].workload, key))
			e = &m->eta_cache->result.items[i];
	if (!e) {
		json_object_set_new(out, "state", json_string("Unknown"));
		json_object_set_new(out, "estimatedAdmission", json_null());
		json_object_set_new(out, "basis",
				    json_string("no basis: the workload is not queued (inactive, "
						"without a "
						"queue, or not read yet)"));
		reply(resp, 200, out);
		return;
	}
	time_format_rfc3339(e->admission_ms, when, sizeof(when));
	json_t *sources = json_object();
	for (int src = 0; src < FORECAST_N_SOURCES; src++)
		json_object_set_new(sources, forecast_source_name(src),
				    json_integer((json_int_t)e->sources[src]));
	json_object_set_new(out, "state", json_string("Pending"));
	json_object_set_new(out, "estimatedAdmission",
			    e->has_admission ? json_string(when) : json_null());
	json_object_set_new(out, "ahead", json_integer((json_int_t)e->ahead));
	json_object_set_new(out, "basis", json_string(e->basis));
	json_object_set_new(out, "runtimeSources", sources);
	time_format_rfc3339(m->eta_cache->made_ms, when, sizeof(when));
	json_object_set_new(out, "estimatedAt", json_string(when));
	reply(resp, 200, out);
}

static void on_forecast_work(uv_work_t *w)
{
	run_forecast(CONTAINER_OF(w, struct forecast_job, work));
}

/* The forecast is done: it becomes the latest, and every waiting request gets its answer. */
static void on_forecast_done(uv_work_t *w, int status)
{
	struct forecast_job *job = CONTAINER_OF(w, struct forecast_job, work);
	struct mgr *m = job->m;
	m->visibility_work--;
	m->forecast_job = NULL;
	if (status == 0 && job->rc == 0) {
		eta_cache_drop(m);
		m->eta_cache = job->cache;
		job->cache = NULL;
	}
	for (struct eta_waiter *wt = job->waiters, *next; wt; wt = next) {
		struct httpd_response resp = { 500, NULL, NULL, 0 };
		next = wt->next;
		if (status != 0 || job->rc != 0)
			reply_error(&resp, 500, "InternalError", "the forecast failed: %s",
				    job->err[0] ? job->err :
						  strerror(status ? ECANCELED : -job->rc));
		else
			eta_answer(m, wt->ns, wt->name, &resp);
		state_release_views(m);
		httpd_answer(wt->d, resp.status, resp.content_type, resp.body, resp.body_len);
		free(wt);
	}
	job->waiters = NULL;
	forecast_job_free(job);
}

static void eta(struct mgr *m, const struct httpd_request *req, const char *ns, const char *name,
		struct httpd_response *resp)
{
	char key[600];
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	json_t *wl = store_get(m, K_WORKLOAD, key);
	if (!wl || condition_true(wl, "Finished") || condition_true(wl, "QuotaReserved") ||
	    cache_answers(m, key)) {
		eta_answer(m, ns, name, resp);
		return;
	}
	struct forecast_job *job = m->forecast_job;
	if (job && job->n_waiters >= ETA_WAITERS_MAX) {
		reply_error(resp, 503, "ServiceUnavailable", "too many estimates asked at once");
		return;
	}
	if (!job && !(job = forecast_job_new(m))) {
		reply_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	struct eta_waiter *wt = calloc(1, sizeof(*wt));
	if (wt)
		wt->d = httpd_defer(req);
	if (!wt || !wt->d) {
		/* No connection to answer later on (tests), or no memory: here and now. */
		free(wt);
		if (job != m->forecast_job) {
			run_forecast(job);
			if (job->rc == 0) {
				eta_cache_drop(m);
				m->eta_cache = job->cache;
				job->cache = NULL;
			}
			if (job->rc != 0)
				reply_error(resp, 500, "InternalError", "the forecast failed: %s",
					    job->err[0] ? job->err : strerror(-job->rc));
			else
				eta_answer(m, ns, name, resp);
			forecast_job_free(job);
		} else {
			reply_error(resp, 503, "ServiceUnavailable",
				    "a forecast is running; ask again");
		}
		return;
	}
	snprintf(wt->ns, sizeof(wt->ns), "%s", ns);
	snprintf(wt->name, sizeof(wt->name), "%s", name);
	wt->next = job->waiters;
	job->waiters = wt;
	job->n_waiters++;
	if (job != m->forecast_job) {
		if (uv_queue_work(m->loop, &job->work, on_forecast_work, on_forecast_done) != 0) {
			/* Can't hand it off: run it here, answering the same way. */
			run_forecast(job);
			m->visibility_work++;
			m->forecast_job = job;
			on_forecast_done(&job->work, 0);
			return;
		}
		m->visibility_work++;
		m->forecast_job = job;
	}
}

/* --- routing ---------------------------------------------------------------------------------- */

static json_t *resource(const char *name, int namespaced, const char *kind)
{
	return json_pack("{s:s, s:s, s:b, s:s, s:[s]}", "name", name, "singularName", "",
			 "namespaced", namespaced, "kind", kind, "verbs", "get");
}

static void discovery(const char *group_version, json_t *resources, struct httpd_response *resp)
{
	reply(resp, 200,
	      json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
			"groupVersion", group_version, "resources", resources));
}

void visibility_handle(struct mgr *m, const struct httpd_request *req, struct httpd_response *resp)
{
	char buf[1024];
	char *s[HTTP_PATH_SEGMENTS];
	int n;
	if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) {
		reply_error(resp, 405, "MethodNotAllowed", "only GET is served");
		return;
	}
	if (!strncmp(req->path, KUEUE_VIS, strlen(KUEUE_VIS)) &&
	    (n = http_path_split(req->path + strlen(KUEUE_VIS), buf, sizeof(buf), s)) >= 0) {
		if (n == 0) {
			discovery("visibility.kueue.x-k8s.io/v1beta2",
				  json_pack("[o, o]",
					    resource("clusterqueues/pendingworkloads", 0,
						     "PendingWorkloadsSummary"),
					    resource("localqueues/pendingworkloads", 1,
						     "PendingWorkloadsSummary")),
				  resp);
			return;
		}
		if (n == 3 && !strcmp(s[0], "clusterqueues") && !strcmp(s[2], "pendingworkloads")) {
			pending_workloads(m, req, NULL, s[1], resp);
			return;
		}
		if (n == 5 && !strcmp(s[0], "namespaces") && !strcmp(s[2], "localqueues") &&
		    !strcmp(s[4], "pendingworkloads")) {
			pending_workloads(m, req, s[1], s[3], resp);
			return;
		}
	} else if (!strncmp(req->path, MUSTER_VIS, strlen(MUSTER_VIS)) &&
		   (n = http_path_split(req->path + strlen(MUSTER_VIS), buf, sizeof(buf), s)) >=
			   0) {
		if (n == 0) {
			discovery(MUSTER_VIS_VERSION,
				  json_pack("[o, o, o, o, o]",
					    resource("workloads/why", 1, "WorkloadExplanation"),
					    resource("workloads/eta", 1, "WorkloadEstimate"),
					    resource("workloads/history", 1, "DecisionList"),
					    resource("clusterqueues/history", 0, "DecisionList"),
					    resource("usage", 0, "UsageReport")),
				  resp);
			return;
		}
		if (n == 5 && !strcmp(s[0], "namespaces") && !strcmp(s[2], "workloads")) {
			if (!strcmp(s[4], "why")) {
				why(m, s[1], s[3], resp);
				return;
			}
			if (!strcmp(s[4], "history")) {
				history(m, req, s[1], s[3], resp);
				return;
			}
			if (!strcmp(s[4], "eta")) {
				eta(m, req, s[1], s[3], resp);
				return;
			}
		}
		if (n == 3 && !strcmp(s[0], "clusterqueues") && !strcmp(s[2], "history")) {
			history(m, req, NULL, s[1], resp);
			return;
		}
		if (n == 1 && !strcmp(s[0], "usage")) {
			usage(m, req, resp);
			return;
		}
	}
	reply_error(resp, 404, "NotFound", "the server could not find the requested resource");
}
