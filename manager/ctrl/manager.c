/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/log.h"
#include "webhooks/webhooks.h"

#include <openssl/evp.h>

#define WEBHOOK_MAX_BODY (8u << 20)
#define MUTATING_CONFIG "muster-mutating-webhook-configuration"
#define VALIDATING_CONFIG "muster-validating-webhook-configuration"

void mgr_mark(struct mgr *m, json_t *set, const char *key)
{
	json_object_set(set, key, json_true());
	mgr_kick(m);
}

static void on_pump(uv_idle_t *h);

void mgr_kick(struct mgr *m)
{
	if (!uv_is_active((uv_handle_t *)&m->pump))
		uv_idle_start(&m->pump, on_pump);
}

static void on_retry(uv_timer_t *t)
{
	struct mgr *m = t->data;
	const char *k;
	json_t *v;
	json_object_foreach(m->retry_keys, k, v)
		json_object_set(mgr_set_for_kind(m, k[0]), k + 2, json_true());
	json_object_clear(m->retry_keys);
	m->admission_needed = 1;
	mgr_kick(m);
}

static void on_deadline(uv_timer_t *t);

json_t *mgr_set_for_kind(struct mgr *m, char kind)
{
	return kind == MGR_JOB ? m->dirty_jobs : kind == MGR_WL ? m->dirty_workloads :
	       kind == MGR_CQ ? m->dirty_cqs : kind == MGR_POD ? m->ungate : m->dirty_lqs;
}

static void arm_deadline_timer(struct mgr *m)
{
	const char *k;
	json_t *v;
	int64_t next = INT64_MAX, now = time_now_ms();
	json_object_foreach(m->deadlines, k, v)
		if (json_integer_value(v) < next)
			next = json_integer_value(v);
	if (next == INT64_MAX) {
		uv_timer_stop(&m->deadline_timer);
		return;
	}
	uint64_t delay = next > now ? (uint64_t)(next - now) : 0;
	uv_timer_start(&m->deadline_timer, on_deadline, delay, 0);
}

static void on_deadline(uv_timer_t *t)
{
	struct mgr *m = t->data;
	int64_t now = time_now_ms();
	const char *k;
	json_t *v;
	void *iter;
	json_t *tmp;
	json_object_foreach_safe(m->deadlines, iter, k, tmp)
	{
		v = tmp;
		if (json_integer_value(v) > now)
			continue;
		json_object_set(mgr_set_for_kind(m, k[0]), k + 2, json_true());
		json_object_del(m->deadlines, k);
	}
	m->admission_needed = 1;
	mgr_kick(m);
	arm_deadline_timer(m);
}

void mgr_schedule(struct mgr *m, char kind, const char *key, int64_t when_ms)
{
	char k[700];
	snprintf(k, sizeof(k), "%c:%s", kind, key);
	json_object_set_new(m->deadlines, k, json_integer(when_ms));
	arm_deadline_timer(m);
}

void mgr_retry_key(struct mgr *m, char kind, const char *key)
{
	char k[700];
	snprintf(k, sizeof(k), "%c:%s", kind, key);
	json_object_set(m->retry_keys, k, json_true());
	mgr_retry_later(m);
}

void mgr_retry_later(struct mgr *m)
{
	if (!uv_is_active((uv_handle_t *)&m->retry))
		uv_timer_start(&m->retry, on_retry, 1000, 0);
}

/* Drains a dirty set, calling fn for each key. Keys marked during the drain wait for the next
 * turn, so one busy object can't starve the rest. */
static void drain(struct mgr *m, json_t *set, void (*fn)(struct mgr *, const char *))
{
	json_t *batch = json_copy(set);
	const char *key;
	json_t *v;
	if (!batch)
		return;
	json_object_clear(set);
	json_object_foreach(batch, key, v)
		fn(m, key);
	json_decref(batch);
}

static void on_event_written(void *arg, const struct kube_response *resp)
{
	if (resp->error || resp->status >= 300)
		log_warn("cannot record event", LF_INT("status", resp->status),
			 LF_STR("error", resp->error_text), LF_END);
}

void mgr_event(struct mgr *m, json_t *obj, const char *type, const char *reason,
	       const char *message)
{
	char key[800], path[512], now[32];
	const char *ns = obj_namespace(obj);
	snprintf(key, sizeof(key), "%s:%s/%s", reason, ns ? ns : "", obj_name(obj));
	if (json_object_get(m->evented, key))
		return;
	json_object_set(m->evented, key, json_true());
	time_now_rfc3339(now, sizeof(now));
	json_t *ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s},"
			       " s:s, s:s, s:s, s:{s:s}, s:s, s:s, s:i}",
			       "apiVersion", "v1", "kind", "Event", "metadata", "generateName", "muster-",
			       "namespace", ns ? ns : "default", "involvedObject", "apiVersion",
			       obj_str(obj, "apiVersion") ? obj_str(obj, "apiVersion") : "batch/v1",
			       "kind", obj_str(obj, "kind") ? obj_str(obj, "kind") : "Job", "name",
			       obj_name(obj), "namespace", ns ? ns : "", "uid", obj_uid(obj) ? obj_uid(obj) : "",
			       "reason", reason, "message", message, "type", type, "source",
			       "component", "muster", "firstTimestamp", now, "lastTimestamp", now,
			       "count", 1);
	char *body = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns ? ns : "default");
	if (!body || kube_request(m->kube, "POST", path, NULL, body, on_event_written, m, NULL) != 0)
		log_warn("cannot record event", LF_STR("reason", reason), LF_END);
	log_info("event", LF_STR("object", key), LF_STR("type", type), LF_STR("message", message),
		 LF_END);
	free(body);
	json_decref(ev);
}

static void check_synced(struct mgr *m)
{
	if (m->synced)
		return;
	if (!informer_synced(m->jobs) || !informer_synced(m->workloads) || !informer_synced(m->cqs) ||
	    !informer_synced(m->lqs) || !informer_synced(m->flavors) || !informer_synced(m->namespaces) ||
	    !informer_synced(m->wpcs) || !informer_synced(m->pcs) || !informer_synced(m->cohorts) ||
	    !informer_synced(m->nodes) || !informer_synced(m->pods) || !informer_synced(m->topologies))
		return;
	/* Only now is usage complete: every admitted workload has been charged from its status.
	 * Admitting before this point could admit twice what a restart forgot. */
	m->synced = 1;
	const char *key;
	json_t *v;
	json_object_foreach(informer_store(m->workloads), key, v)
		json_object_set(m->dirty_workloads, key, json_true());
	json_object_foreach(informer_store(m->jobs), key, v)
		json_object_set(m->dirty_jobs, key, json_true());
	json_object_foreach(informer_store(m->cqs), key, v)
		json_object_set(m->dirty_cqs, key, json_true());
	json_object_foreach(informer_store(m->lqs), key, v)
		json_object_set(m->dirty_lqs, key, json_true());
	m->admission_needed = 1;
	log_info("caches synced; admission starts", LF_END);
}

static void on_pump(uv_idle_t *h)
{
	struct mgr *m = h->data;
	check_synced(m);
	if (!m->synced) {
		uv_idle_stop(h);
		return;
	}
	drain(m, m->dirty_workloads, workload_reconcile);
	drain(m, m->dirty_jobs, jobs_reconcile);
	nodes_sync(m);
	if (m->admission_needed) {
		m->admission_needed = 0;
		admission_cycle(m);
	}
	status_sync(m);
	if (json_object_size(m->dirty_workloads) == 0 && json_object_size(m->dirty_jobs) == 0 &&
	    json_object_size(m->dirty_cqs) == 0 && json_object_size(m->dirty_lqs) == 0 &&
	    !m->admission_needed && !m->capacity_changed && json_object_size(m->ungate) == 0)
		uv_idle_stop(h);
}

/* --- informer events -------------------------------------------------------------------- */

/* Queue, flavor, cohort and namespace changes need only a cycle: the engine re-examines the
 * cohort trees they touch. Re-decoding every pending Workload is for what the engine can't
 * see: a priority class that appears lets Workloads wait outside it (decoding failed) in. */
static void redecode_pending(struct mgr *m)
{
	const char *key;
	json_t *v;
	json_object_foreach(m->pending, key, v)
		json_object_set(m->dirty_workloads, key, json_true());
	m->admission_needed = 1;
}

static void on_job(void *arg, struct informer *inf, enum watch_event_type type, const char *key,
		   json_t *old, json_t *obj)
{
	struct mgr *m = arg;
	json_object_set(m->dirty_jobs, key, json_true());
	mgr_kick(m);
}

static void on_workload(void *arg, struct informer *inf, enum watch_event_type type,
			const char *key, json_t *old, json_t *obj)
{
	struct mgr *m = arg;
	json_t *owners = obj_path(obj, "metadata.ownerReferences"), *o;
	size_t i;
	json_object_set(m->dirty_workloads, key, json_true());
	json_array_foreach(owners, i, o)
	{
		const char *kind = json_string_value(json_object_get(o, "kind"));
		const char *name = json_string_value(json_object_get(o, "name"));
		char job_key[512];
		if (kind && name && !strcmp(kind, "Job")) {
			snprintf(job_key, sizeof(job_key), "%s/%s", obj_namespace(obj), name);
			json_object_set(m->dirty_jobs, job_key, json_true());
		}
	}
	m->admission_needed = 1;
	mgr_kick(m);
}

static void on_cq(void *arg, struct informer *inf, enum watch_event_type type, const char *key,
		  json_t *old, json_t *obj)
{
	struct mgr *m = arg;
	cq_apply(m, key, type == WATCH_DELETED ? NULL : obj);
	json_object_set(m->dirty_cqs, key, json_true());
	/* Every LocalQueue may point here; their Active condition follows the ClusterQueue. */
	json_object_foreach(informer_store(m->lqs), key, obj)
		json_object_set(m->dirty_lqs, key, json_true());
	m->admission_needed = 1;
	mgr_kick(m);
}

static void on_lq(void *arg, struct informer *inf, enum watch_event_type type, const char *key,
		  json_t *old, json_t *obj)
{
	struct mgr *m = arg;
	struct eobj_local_queue q;
	char err[256];
	const char *slash = strchr(key, '/');
	if (type == WATCH_DELETED || eobj_local_queue_decode(obj, NULL, &q, err, sizeof(err)) != 0) {
		if (type != WATCH_DELETED)
			log_error("cannot use LocalQueue", LF_STR("localQueue", key), LF_STR("error", err), LF_END);
		char ns[300];
		snprintf(ns, sizeof(ns), "%.*s", slash ? (int)(slash - key) : 0, key);
		engine_remove_local_queue(m->engine, ns, slash ? slash + 1 : key);
	} else {
		if (engine_set_local_queue(m->engine, q.namespace_name, q.name, q.cluster_queue, q.stop) != 0)
			log_error("engine refused LocalQueue", LF_STR("localQueue", key), LF_END);
		eobj_local_queue_release(&q);
	}
	json_object_set(m->dirty_lqs, key, json_true());
	m->admission_needed = 1;
	mgr_kick(m);
}

static void on_flavor(void *arg, struct informer *inf, enum watch_event_type type,
		      const char *key, json_t *old, json_t *obj)
{
	struct mgr *m = arg;
	struct eobj_flavor f;
	char err[256];
	nodes_set_flavor(m, key, type == WATCH_DELETED ? NULL : obj);
	if (type == WATCH_DELETED) {
		engine_remove_flavor(m->engine, key);
	} else if (eobj_flavor_decode(obj, &f, err, sizeof(err)) != 0) {
		log_error("cannot use ResourceFlavor", LF_STR("flavor", key), LF_STR("error", err), LF_END);
		engine_remove_flavor(m->engine, key);
	} else {
		if (engine_set_flavor(m->engine, &f.spec) != 0)
			log_error("engine refused ResourceFlavor", LF_STR("flavor", key), LF_END);
		eobj_flavor_release(&f);
	}
	json_object_foreach(informer_store(m->cqs), key, obj)
		json_object_set(m->dirty_cqs, key, json_true());
	json_object_foreach(informer_store(m->lqs), key, obj)
		json_object_set(m->dirty_lqs, key, json_true());
	m->admission_needed = 1;
	mgr_kick(m);
}

static void on_cohort(void *arg, struct informer *inf, enum watch_event_type type,
		      const char *key, json_t *old, json_t *obj)
{
	struct mgr *m = arg;
	struct eobj_cohort c;
	char err[256];
	if (type == WATCH_DELETED) {
		engine_remove_cohort(m->engine, key);
	} else if (eobj_cohort_decode(obj, &c, err, sizeof(err)) != 0) {
		log_error("cannot use Cohort", LF_STR("cohort", key), LF_STR("error", err), LF_END);
		engine_remove_cohort(m->engine, key);
	} else {
		if (engine_set_cohort(m->engine, &c.spec) != 0)
			log_error("engine refused Cohort", LF_STR("cohort", key), LF_END);
		eobj_cohort_release(&c);
	}
	json_object_foreach(informer_store(m->cqs), key, obj)
		json_object_set(m->dirty_cqs, key, json_true());
	m->admission_needed = 1;
	mgr_kick(m);
}

/* A priority class appearing may unblock Jobs whose Workload waits for it. */
static void on_priority_class(void *arg, struct informer *inf, enum watch_event_type type,
			      const char *key, json_t *old, json_t *obj)
{
	struct mgr *m = arg;
	if (type == WATCH_DELETED)
		return;
	json_object_foreach(informer_store(m->jobs), key, obj)
		json_object_set(m->dirty_jobs, key, json_true());
	redecode_pending(m);
	mgr_kick(m);
}

static void on_namespace(void *arg, struct informer *inf, enum watch_event_type type,
			 const char *key, json_t *old, json_t *obj)
{
	struct mgr *m = arg;
	struct eobj_namespace ns;
	char err[256];
	if (type == WATCH_DELETED) {
		engine_remove_namespace(m->engine, key);
	} else if (eobj_namespace_decode(obj, &ns, err, sizeof(err)) == 0) {
		if (engine_set_namespace(m->engine, ns.name, ns.n_labels, ns.labels) != 0)
			log_error("engine refused Namespace", LF_STR("namespace", key), LF_END);
		eobj_namespace_release(&ns);
	}
	m->admission_needed = 1;
	mgr_kick(m);
}

/* --- webhook and health servers --------------------------------------------------------- */

static void on_webhook_request(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	char *body = NULL;
	resp->content_type = "application/json";
	if (strcmp(req->method, "POST") != 0) {
		resp->status = 405;
		return;
	}
	resp->status = webhook_handle(req->path, req->body, req->body_len, &body);
	if (!body) {
		resp->status = 500;
		return;
	}
	resp->body = body;
	resp->body_len = strlen(body);
}

static void on_health_request(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	struct mgr *m = arg;
	const char *text = NULL;
	resp->content_type = "text/plain";
	if (!strcmp(req->path, "/healthz") || !strcmp(req->path, "/livez")) {
		resp->status = 200;
		text = "ok\n";
	} else if (!strcmp(req->path, "/readyz")) {
		int ready = m->synced && m->webhooks_installed;
		resp->status = ready ? 200 : 503;
		text = ready ? "ok\n" : !m->synced ? "caches not synced\n" : "webhooks not installed\n";
	} else {
		resp->status = 404;
		text = "not found\n";
	}
	resp->body = strdup(text);
	resp->body_len = resp->body ? strlen(resp->body) : 0;
}

/* --- webhook configurations ------------------------------------------------------------- */

static json_t *webhook_entry(struct mgr *m, const char *name, const char *path, json_t *rules,
			     int job_only, const char *ca_b64)
{
	char url[512];
	snprintf(url, sizeof(url), "https://%s:%d%s", m->opt.webhook_host, httpd_port(m->webhook_srv),
		 path);
	json_t *w = json_pack("{s:s, s:[s], s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:i,"
			      " s:{s:[{s:s, s:s, s:[s, s, s]}]}}",
			      "name", name, "admissionReviewVersions", "v1", "clientConfig", "url", url,
			      "caBundle", ca_b64, "rules", rules, "sideEffects", "None", "failurePolicy",
			      "Fail", "matchPolicy", "Equivalent", "timeoutSeconds", 10,
			      "namespaceSelector", "matchExpressions", "key",
			      "kubernetes.io/metadata.name", "operator", "NotIn", "values", "kube-system",
			      "kube-public", "kube-node-lease");
	/* Jobs without a queue label never reach us: a down muster can't block them (Kueue
	 * receives every Job, so an outage there blocks all Job creation, kueue#5244). */
	if (w && job_only)
		json_object_set_new(w, "objectSelector",
				    json_pack("{s:[{s:s, s:s}]}", "matchExpressions", "key",
					      LABEL_QUEUE_NAME, "operator", "Exists"));
	return w;
}

static void on_config_applied(void *arg, const struct kube_response *resp)
{
	struct mgr *m = arg;
	if (resp->error || resp->status >= 300) {
		log_error("cannot install webhook configuration", LF_INT("status", resp->status),
			  LF_STR("error", resp->error_text), LF_STR("body", resp->body), LF_END);
		exit(1); /* without its webhook muster would let queued Jobs start unadmitted */
	}
	if (++m->webhook_configs_applied == 2) {
		m->webhooks_installed = 1;
		log_info("webhook configurations installed", LF_END);
	}
}

static int apply_config(struct mgr *m, const char *resource, const char *name, json_t *webhooks)
{
	char path[256];
	json_t *obj = json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion",
				"admissionregistration.k8s.io/v1", "kind",
				!strcmp(resource, "mutatingwebhookconfigurations") ?
					"MutatingWebhookConfiguration" :
					"ValidatingWebhookConfiguration",
				"metadata", "name", name, "webhooks", webhooks);
	char *body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	int rc = -ENOMEM;
	snprintf(path, sizeof(path),
		 "/apis/admissionregistration.k8s.io/v1/%s/%s?fieldManager=muster&force=true", resource,
		 name);
	/* Server-side apply: one idempotent call creates or updates the configuration. */
	if (body)
		rc = kube_request(m->kube, "PATCH", path, "application/apply-patch+yaml", body,
				  on_config_applied, m, NULL);
	free(body);
	json_decref(obj);
	return rc;
}

static int install_webhooks(struct mgr *m)
{
	size_t n = strlen(m->certs.ca_pem);
	char *ca_b64 = malloc(4 * ((n + 2) / 3) + 1);
	int rc;
	if (!ca_b64)
		return -ENOMEM;
	EVP_EncodeBlock((unsigned char *)ca_b64, (const unsigned char *)m->certs.ca_pem, (int)n);
	json_t *job_create = json_pack("[{s:[s], s:[s], s:[s], s:[s], s:s}]", "apiGroups", "batch",
				       "apiVersions", "v1", "operations", "CREATE", "resources", "jobs",
				       "scope", "Namespaced");
	json_t *job_cu = json_pack("[{s:[s], s:[s], s:[s, s], s:[s], s:s}]", "apiGroups", "batch",
				   "apiVersions", "v1", "operations", "CREATE", "UPDATE", "resources",
				   "jobs", "scope", "Namespaced");
	json_t *cq_cu = json_pack("[{s:[s], s:[s], s:[s, s], s:[s], s:s}]", "apiGroups", KUEUE_GROUP,
				  "apiVersions", "v1beta2", "operations", "CREATE", "UPDATE",
				  "resources", "clusterqueues", "scope", "Cluster");
	json_t *mutating = json_pack("[o]", webhook_entry(m, "mjob.muster.kueue.x-k8s.io",
							  WEBHOOK_PATH_MUTATE_JOB, job_create, 1, ca_b64));
	json_t *validating = json_pack(
		"[o, o]",
		webhook_entry(m, "vjob.muster.kueue.x-k8s.io", WEBHOOK_PATH_VALIDATE_JOB, job_cu, 1, ca_b64),
		webhook_entry(m, "vclusterqueue.muster.kueue.x-k8s.io", WEBHOOK_PATH_VALIDATE_CQ, cq_cu,
			      0, ca_b64));
	free(ca_b64);
	if (!mutating || !validating) {
		json_decref(mutating);
		json_decref(validating);
		return -ENOMEM;
	}
	rc = apply_config(m, "mutatingwebhookconfigurations", MUTATING_CONFIG, mutating);
	if (rc == 0)
		rc = apply_config(m, "validatingwebhookconfigurations", VALIDATING_CONFIG, validating);
	else
		json_decref(validating);
	return rc;
}

/* --- lifecycle -------------------------------------------------------------------------- */

static void on_signal(uv_signal_t *s, int signum)
{
	struct mgr *m = s->data;
	log_info("shutting down", LF_INT("signal", signum), LF_END);
	uv_stop(m->loop);
}

static void on_informer_synced(void *arg, struct informer *inf)
{
	mgr_kick(arg);
}

static int start_informer_slim(struct mgr *m, const char *name, const char *path,
			       const char *selector, informer_event_fn fn,
			       json_t *(*transform)(void *, json_t *), struct informer **out)
{
	struct informer_options o = { name, path, selector, fn, m, on_informer_synced, transform };
	int rc = informer_start(m->loop, m->kube, &o, out);
	if (rc != 0)
		log_error("cannot start informer", LF_STR("resource", name), LF_INT("rc", rc), LF_END);
	return rc;
}

static int start_informer(struct mgr *m, const char *name, const char *path, const char *selector,
			  informer_event_fn fn, struct informer **out)
{
	return start_informer_slim(m, name, path, selector, fn, NULL, out);
}

static void close_walk(uv_handle_t *h, void *arg)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

int manager_run(const struct manager_options *opt)
{
	struct mgr m;
	char err[512];
	int rc;

	memset(&m, 0, sizeof(m));
	m.opt = *opt;
	m.loop = uv_default_loop();
	config_defaults(&m.conf);
	if (opt->config && config_load(opt->config, &m.conf, err, sizeof(err)) != 0) {
		log_error("invalid configuration", LF_STR("error", err), LF_END);
		return 1;
	}
	if (engine_new(&m.engine) != 0 || nodes_init(&m) != 0) {
		log_error("out of memory", LF_END);
		return 1;
	}
	m.dirty_jobs = json_object();
	m.dirty_workloads = json_object();
	m.dirty_cqs = json_object();
	m.dirty_lqs = json_object();
	m.pending = json_object();
	m.assumed = json_object();
	m.inflight = json_object();
	m.unsupported = json_object();
	m.retry_keys = json_object();
	m.evented = json_object();
	m.deadlines = json_object();
	signal(SIGPIPE, SIG_IGN);
	/* Backoff jitter and watch timeouts must differ between processes and restarts. */
	srand((unsigned)time(NULL) ^ (unsigned)getpid());

	rc = kube_config_load(opt->kubeconfig, &m.cfg, err, sizeof(err));
	if (rc != 0) {
		log_error("cannot load kubeconfig", LF_STR("error", err), LF_END);
		return 1;
	}
	const char *dns[] = { "localhost", NULL };
	const char *ips[] = { opt->webhook_host, NULL };
	rc = opt->state_dir ? certs_load_or_create(opt->state_dir, dns, ips, &m.certs) :
			      certs_generate(dns, ips, &m.certs);
	if (rc != 0) {
		log_error("cannot create webhook certificates", LF_INT("rc", rc), LF_END);
		return 1;
	}
	struct httpd_options wh = { .host = opt->webhook_host, .port = opt->webhook_port,
				    .cert_pem = m.certs.cert_pem, .key_pem = m.certs.key_pem,
				    .max_body = WEBHOOK_MAX_BODY, .handler = on_webhook_request,
				    .handler_arg = &m };
	struct httpd_options hh = { .host = opt->health_host, .port = opt->health_port,
				    .handler = on_health_request, .handler_arg = &m };
	if ((rc = httpd_start(m.loop, &wh, &m.webhook_srv)) != 0 ||
	    (rc = httpd_start(m.loop, &hh, &m.health_srv)) != 0) {
		log_error("cannot listen", LF_INT("rc", rc), LF_STR("error", strerror(-rc)), LF_END);
		return 1;
	}
	if ((rc = kube_client_new(m.loop, &m.cfg, &m.kube)) != 0) {
		log_error("cannot create API client", LF_INT("rc", rc), LF_END);
		return 1;
	}
	uv_idle_init(m.loop, &m.pump);
	m.pump.data = &m;
	uv_timer_init(m.loop, &m.retry);
	m.retry.data = &m;
	uv_timer_init(m.loop, &m.deadline_timer);
	m.deadline_timer.data = &m;
	uv_signal_init(m.loop, &m.sigterm);
	uv_signal_init(m.loop, &m.sigint);
	m.sigterm.data = m.sigint.data = &m;
	uv_signal_start(&m.sigterm, on_signal, SIGTERM);
	uv_signal_start(&m.sigint, on_signal, SIGINT);

	/* The webhook server already answers, so registering it can't block Job creation. */
	if (install_webhooks(&m) != 0 ||
	    start_informer(&m, "resourceflavors", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", NULL,
			   on_flavor, &m.flavors) ||
	    start_informer(&m, "clusterqueues", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", NULL,
			   on_cq, &m.cqs) ||
	    start_informer(&m, "localqueues", "/apis/kueue.x-k8s.io/v1beta2/localqueues", NULL, on_lq,
			   &m.lqs) ||
	    start_informer(&m, "workloads", "/apis/kueue.x-k8s.io/v1beta2/workloads", NULL, on_workload,
			   &m.workloads) ||
	    start_informer(&m, "jobs", "/apis/batch/v1/jobs", LABEL_QUEUE_NAME, on_job, &m.jobs) ||
	    start_informer(&m, "namespaces", "/api/v1/namespaces", NULL, on_namespace, &m.namespaces) ||
	    start_informer(&m, "workloadpriorityclasses",
			   "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses", NULL, on_priority_class,
			   &m.wpcs) ||
	    start_informer(&m, "priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses", NULL,
			   on_priority_class, &m.pcs) ||
	    start_informer(&m, "cohorts", "/apis/kueue.x-k8s.io/v1beta2/cohorts", NULL, on_cohort,
			   &m.cohorts) ||
	    start_informer(&m, "topologies", "/apis/kueue.x-k8s.io/v1beta2/topologies", NULL,
			   nodes_on_topology, &m.topologies) ||
	    start_informer_slim(&m, "nodes", "/api/v1/nodes", NULL, nodes_on_node, nodes_slim_node,
				&m.nodes) ||
	    start_informer_slim(&m, "pods", "/api/v1/pods", NULL, nodes_on_pod, nodes_slim_pod,
				&m.pods))
		return 1;
	log_info("manager started", LF_STR("version", MUSTER_VERSION),
		 LF_INT("wait_for_pods_ready", m.conf.wait_for_pods_ready),
		 LF_INT("pods_ready_timeout_ms", m.conf.pods_ready_timeout_ms),
		 LF_STR("placement", m.conf.placement_mode == PLACEMENT_PREFERRED ? "Preferred" :
				     m.conf.placement_mode == PLACEMENT_EXACT	  ? "Exact" :
										    "None"),
		 LF_INT("node_feasibility", m.conf.node_feasibility),
		 LF_INT("webhook_port", httpd_port(m.webhook_srv)),
		 LF_INT("health_port", httpd_port(m.health_srv)), LF_END);

	uv_run(m.loop, UV_RUN_DEFAULT);

	/* Orderly teardown so sanitizers see every allocation returned. */
	informer_stop(m.jobs);
	informer_stop(m.workloads);
	informer_stop(m.cqs);
	informer_stop(m.lqs);
	informer_stop(m.flavors);
	informer_stop(m.namespaces);
	informer_stop(m.wpcs);
	informer_stop(m.pcs);
	informer_stop(m.cohorts);
	informer_stop(m.topologies);
	informer_stop(m.nodes);
	informer_stop(m.pods);
	httpd_stop(m.webhook_srv);
	httpd_stop(m.health_srv);
	kube_client_free(m.kube);
	uv_walk(m.loop, close_walk, NULL);
	uv_run(m.loop, UV_RUN_DEFAULT);
	uv_loop_close(m.loop);
	engine_free(m.engine);
	nodes_free(&m);
	json_decref(m.dirty_jobs);
	json_decref(m.dirty_workloads);
	json_decref(m.dirty_cqs);
	json_decref(m.dirty_lqs);
	json_decref(m.pending);
	json_decref(m.assumed);
	json_decref(m.inflight);
	json_decref(m.unsupported);
	json_decref(m.retry_keys);
	json_decref(m.evented);
	json_decref(m.deadlines);
	certs_release(&m.certs);
	kube_config_release(&m.cfg);
	log_info("stopped", LF_END);
	return 0;
}
