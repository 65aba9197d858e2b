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
#include "core/invariant.h"
#include "ctrl/internal.h"
#include "kube/cert_secret.h"
#include "kube/lease_thread.h"
#include "obs/metrics.h"
#include "util/base64.h"
#include "util/log.h"
#include "webhooks/webhooks.h"

#define WEBHOOK_MAX_BODY (8u << 20)
#define STOP_DRAIN_MS 3000 /* how long a stopping leader waits for its writes in flight */

/* Every informer has listed once (none has started yet in unit tests' managers). */
static int caches_synced(struct mgr *m)
{
	return m->informers[K_WORKLOAD] && ingest_synced(m);
}

/* Whether the admission cycle waits: a batch of Workloads, their owners or pod groups is
 * being drained. A cycle over half of a batch the sync dirtied could admit what the other half
 * already holds. */
static int cycle_waits_for_batch(struct mgr *m)
{
	if (state_draining(m, K_WORKLOAD) || state_draining(m, K_PODGROUP))
		return 1;
	for (enum kind k = K_OWNER_FIRST; k <= K_OWNER_LAST; k++)
		if (state_draining(m, k))
			return 1;
	return 0;
}

/* Keys of kinds the pump drains that are dirty or in a batch. */
static int keys_pending(struct mgr *m)
{
	static const enum kind drained[] = { K_WORKLOAD, K_PODGROUP, K_POD, K_CQ, K_LQ, K_COHORT };
	for (size_t i = 0; i < sizeof(drained) / sizeof(drained[0]); i++)
		if (state_pending(m, drained[i]))
			return 1;
	for (enum kind k = K_OWNER_FIRST; k <= K_OWNER_LAST; k++)
		if (state_pending(m, k))
			return 1;
	return 0;
}

/* One pass over the dirty sets (mgr_pump_once), as long as the leader has keys to reconcile
 * or a cycle to run. */
static void pump(struct mgr *m)
{
	if (!m->leading || m->stopping) {
		/* A follower keeps its caches warm and decides nothing; on taking over it marks
		 * everything dirty below, as at the first sync. */
		uv_idle_stop(&m->pump);
		return;
	}
	if (!m->synced) {
		if (!caches_synced(m)) {
			uv_idle_stop(&m->pump);
			return;
		}
		/* Only now is usage complete: every admitted workload has been charged from its
		 * status. Admitting before this point could admit twice what a restart forgot. */
		m->synced = 1;
		for (enum kind k = K_JOB; k <= K_LQ; k++) {
			const char *sk;
			json_t *v;
			json_object_foreach(m->stores[k], sk, v) keyset_add(&m->dirty[k], sk);
		}
		m->admission_needed = 1;
		log_info("caches synced; admission starts", LF_END);
	}
	if (!m->ledger_reconciled) {
		m->ledger_reconciled = 1;
		history_reconcile(m);
	}
	fairshare_lead(m); /* once per lead: Cohort status, the first usage sample */
	mgr_pump_once(m);
	if (!keys_pending(m) && (!m->admission_needed || writer_paused(m) || mgr_cycle_held(m)) &&
	    !m->capacity_changed)
		uv_idle_stop(&m->pump);
}

static void on_cycle_timer(uv_timer_t *t)
{
	state_kick(t->data);
}

/* Whether a cycle may run now; if not, the timer brings the pump back when it may. */
static int cycle_due(struct mgr *m)
{
	uint64_t now = uv_now(m->loop);
	if (now - m->last_cycle >= m->cycle_ms)
		return 1;
	if (!uv_is_active((uv_handle_t *)&m->cycle_timer))
		uv_timer_start(&m->cycle_timer, on_cycle_timer, m->last_cycle + m->cycle_ms - now,
			       0);
	return 0;
}

int mgr_cycle_held(struct mgr *m)
{
	return m->admission_needed && uv_is_active((uv_handle_t *)&m->cycle_timer);
}

/* --- the pump's stages ------------------------------------------------------------------- */

static void workload_key(struct mgr *m, enum kind kind, const char *key)
{
	(void)kind;
	workload_reconcile(m, key);
}

static void podgroup_key(struct mgr *m, enum kind kind, const char *key)
{
	(void)kind;
	podgroup_reconcile(m, key);
}

/* may_take: the Workloads', owners' and pod groups' stages may start new batches (see
 * mgr_pump_once). */
static void stage_workloads(struct mgr *m, struct pump_budget *b, int may_take)
{
	state_drain(m, K_WORKLOAD, b, may_take, workload_key);
}

static void stage_owners(struct mgr *m, struct pump_budget *b, int may_take)
{
	for (enum kind k = K_OWNER_FIRST; k <= K_OWNER_LAST; k++)
		state_drain(m, k, b, may_take, owner_reconcile);
}

static void stage_podgroups(struct mgr *m, struct pump_budget *b, int may_take)
{
	state_drain(m, K_PODGROUP, b, may_take, podgroup_key);
}

static void stage_nodes(struct mgr *m, struct pump_budget *b, int may_take)
{
	(void)may_take;
	nodes_sync(m, b);
}

/* The cycle is one piece (the engine decides over every pending Workload at once), so it runs
 * whatever is left of the budget: only a batch in progress holds it back. */
static void run_cycle(struct mgr *m)
{
	if (!m->admission_needed || cycle_waits_for_batch(m) || !cycle_due(m))
		return;
	uint64_t started = uv_hrtime();
	m->last_cycle = uv_now(m->loop);
	admission_cycle(m);
	m->pump_turn.cycle_ns += uv_hrtime() - started;
}

static void stage_queues(struct mgr *m, struct pump_budget *b, int may_take)
{
	(void)may_take;
	uint64_t started = uv_hrtime();
	queues_sync(m, b);
	m->pump_turn.queues_ns += uv_hrtime() - started;
}

static void stage_cycle(struct mgr *m, struct pump_budget *b, int may_take)
{
	(void)b;
	(void)may_take;
	run_cycle(m);
}

/* In the direction data flows: Workloads (the engine's view), their owners (Jobs, RayJobs,
 * ...), pod groups, nodes, the admission cycle, then queue status. */
static void (*const stages[])(struct mgr *m, struct pump_budget *b, int may_take) = {
	stage_workloads, stage_owners, stage_podgroups, stage_nodes, stage_cycle, stage_queues,
};
#define N_STAGES (sizeof(stages) / sizeof(stages[0]))

/*
 * One pass: every stage in turn, as far as the budget (m->pump_budget_ns) goes; what is left
 * stays dirty, and the idle pump comes back next turn, after the lease, the watches and the
 * servers had theirs. Fairness: a pass that spends its budget in one stage makes the next
 * pass start with the stage after it, so a set that is always refilled can't starve the
 * others.
 *
 * The cycle waits for the batches of Workloads, owners and pod groups in progress to drain,
 * and while it waits, those stages take no new batch: keys marked meanwhile wait for the
 * cycle, which so waits for one batch at most, however steady the stream of events.
 */
void mgr_pump_once(struct mgr *m)
{
	struct pump_budget b;
	uint64_t started = uv_hrtime(), cycle_ns = m->pump_turn.cycle_ns,
		 queues_ns = m->pump_turn.queues_ns;
	unsigned first = m->pump_first % N_STAGES;
	int may_take = !(m->admission_needed && cycle_waits_for_batch(m));
	/* A release point after each key: no view is held from one to the next. */
	state_release_views(m);
	pump_budget_start(m, &b);
	m->pump_first = 0;
	for (unsigned i = 0; i < N_STAGES; i++) {
		unsigned stage = (first + i) % N_STAGES;
		int spent = b.spent;
		stages[stage](m, &b, may_take);
		state_release_views(m);
		if (!spent && b.spent)
			m->pump_first = (stage + 1) % N_STAGES;
	}
	/* A pass that started past the cycle's stage may have drained the batch the cycle waited
	 * for after it: the cycle runs now, before any stage takes a new batch. */
	run_cycle(m);
	state_release_views(m);
	state_release_fresh(m);
	m->pump_turn.keys += b.keys;
	m->pump_turn.drain_ns += uv_hrtime() - started - (m->pump_turn.cycle_ns - cycle_ns) -
				 (m->pump_turn.queues_ns - queues_ns);
	/* Debug builds check after every pass that no Workload's record outlives it (a walk over
	 * every record; release builds don't evaluate it). */
	MUSTER_ASSERT(wl_records_check(m) == 0);
}

/* --- webhook and health servers --------------------------------------------------------- */

static int webhook_namespace_managed(void *arg, const char *ns)
{
	struct mgr *m = arg;
	json_t *obj = store_get(m, K_NAMESPACE, ns);
	return config_namespace_managed(&m->conf, ns, obj_path(obj, "metadata.labels"));
}

static int webhook_has_local_queue(void *arg, const char *ns, const char *name)
{
	char key[600];
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	return store_get(arg, K_LQ, key) != NULL;
}

static void on_webhook_request(void *arg, const struct httpd_request *req,
			       struct httpd_response *resp)
{
	struct mgr *m = arg;
	char *body = NULL;
	const struct webhook_context ctx = { m->conf.manage_without_queue_name,
					     webhook_namespace_managed, webhook_has_local_queue, m,
					     m->hold.gang };
	resp->content_type = "application/json";
	if (strcmp(req->method, "POST") != 0) {
		resp->status = 405;
		return;
	}
	uint64_t started = uv_hrtime();
	resp->status = webhook_handle(req->path, req->body, req->body_len, &ctx, &body);
	/* Known paths only (webhook_handle answers 404 for the others): a label per path anyone
	 * may send would be unbounded. */
	observe_webhook(m, resp->status == 404 ? "other" : req->path, uv_hrtime() - started);
	if (!body) {
		resp->status = 500;
		return;
	}
	resp->body = body;
	resp->body_len = strlen(body);
}

static void on_health_request(void *arg, const struct httpd_request *req,
			      struct httpd_response *resp)
{
	struct mgr *m = arg;
	const char *text = NULL;
	resp->content_type = "text/plain";
	if (!strcmp(req->path, "/healthz") || !strcmp(req->path, "/livez")) {
		resp->status = 200;
		text = "ok\n";
	} else if (!strcmp(req->path, "/readyz")) {
		/* A follower is ready once its caches are and it knows the hold: it serves the
		 * webhooks and can take over at once. The leader also needs the hold installed. */
		int synced = caches_synced(m);
		int ready = synced && m->hold.known &&
			    (!m->leading || m->hold.phase == HOLD_INSTALLED);
		resp->status = ready ? 200 : 503;
		text = ready          ? "ok\n" :
		       !synced        ? "caches not synced\n" :
		       !m->hold.known ? "discovering what the server serves\n" :
					"hold not installed\n";
	} else {
		resp->status = 404;
		text = "not found\n";
	}
	resp->body = strdup(text);
	resp->body_len = resp->body ? strlen(resp->body) : 0;
}

/* GET /metrics: the Prometheus text format (observe.c). */
static void on_metrics_request(void *arg, const struct httpd_request *req,
			       struct httpd_response *resp)
{
	struct mgr *m = arg;
	struct buf out;
	resp->content_type = "text/plain";
	if (strcmp(req->path, "/metrics") != 0) {
		resp->status = 404;
		resp->body = strdup("not found\n");
	} else if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) {
		resp->status = 405;
		resp->body = strdup("method not allowed\n");
	} else {
		buf_init(&out, 64u << 20);
		if (observe_render(m, &out) == 0 &&
		    (resp->body = out.data ? buf_take(&out) : strdup("")) != NULL) {
			resp->status = 200;
			resp->content_type = METRICS_CONTENT_TYPE;
		} else {
			resp->status = 500;
		}
		buf_release(&out);
	}
	resp->body_len = resp->body ? strlen(resp->body) : 0;
}

/* The visibility endpoint (visibility.c): Kueue's pending workloads and muster's answers. */
static void on_visibility_request(void *arg, const struct httpd_request *req,
				  struct httpd_response *resp)
{
	visibility_handle(arg, req, resp);
}

/* --- lifecycle -------------------------------------------------------------------------- */

static void on_lease_released(void *arg)
{
	struct mgr *m = arg;
	uv_stop(m->loop);
}

/* Stopping as the leader: no new decisions (the pump is off), the writes in flight land or
 * fail (at most STOP_DRAIN_MS), then the Lease is given up so a follower takes over at once
 * instead of waiting out leaseDuration. */
static void on_stop_timer(uv_timer_t *t)
{
	struct mgr *m = t->data;
	if (writer_in_flight(m) > 0 && uv_now(m->loop) - m->stop_started < STOP_DRAIN_MS)
		return;
	uv_timer_stop(t);
	lease_thread_release(m->elector, on_lease_released, m);
}

static void on_signal(uv_signal_t *s, int signum)
{
	struct mgr *m = s->data;
	if (m->stopping || !m->elector) {
		log_info("shutting down", LF_INT("signal", signum), LF_END);
		uv_stop(m->loop);
		return;
	}
	log_info("shutting down", LF_INT("signal", signum),
		 LF_INT("writes_in_flight", (long long)writer_in_flight(m)), LF_END);
	m->stopping = 1;
	m->stop_started = uv_now(m->loop);
	uv_timer_start(&m->stop_timer, on_stop_timer, 0, 50);
}

/* The leader installs the hold once discovery decided it (whichever comes second). URL mode
 * can name one address only: the leader's. */
static void install_when_known(struct mgr *m)
{
	if (m->leading && m->hold.known && hold_install(m) != 0) {
		log_error("cannot install the hold", LF_END);
		m->failed = 1;
		uv_stop(m->loop);
	}
}

static void on_started_leading(void *arg)
{
	struct mgr *m = arg;
	m->leading = 1;
	metrics_set_replica_role(m->metrics, "leader");
	state_want_cycle(m); /* what waited while we could not write */
	install_when_known(m);
}

/* Lost the Lease. If another replica holds it, it may be admitting already and what we hold
 * is its past: stop; in a cluster the container restarts as a follower (client-go's
 * controllers do the same). If we only could not renew (the apiserver was away), our writes
 * are fenced already; decide nothing until the elector renews the record that still names
 * us, which is at once when the apiserver answers, instead of a restart and a leaseDuration
 * to wait out. */
static void on_stopped_leading(void *arg, int taken)
{
	struct mgr *m = arg;
	m->leading = 0;
	m->ledger_reconciled = 0; /* another leader may have decided meanwhile */
	fairshare_unlead(m); /* a follower samples nothing: the leader's status is the truth */
	metrics_set_replica_role(m->metrics, "follower");
	if (taken) {
		m->failed = 1;
		uv_stop(m->loop);
	}
}

/* This replica's holderIdentity: the pod's name where there is a pod (the apiserver-side fence,
 * config/rbac/leader-fence.yaml, compares it with the pod its token is bound to), else the host
 * and process. */
static void lease_identity(char *buf, size_t size)
{
	const char *pod = getenv("POD_NAME");
	char host[256] = "";
	if (pod && *pod) {
		snprintf(buf, size, "%s", pod);
		return;
	}
	gethostname(host, sizeof(host) - 1);
	snprintf(buf, size, "%s_%ld", host[0] ? host : "muster", (long)getpid());
}

static int start_election(struct mgr *m)
{
	/* resourceNamespace, else the manager's own namespace (resolve_serving filled it in). */
	const char *ns = m->conf.lease_namespace[0] ? m->conf.lease_namespace :
						      m->conf.namespace_name;
	int rc;

	struct lease_options lo = { .namespace_name = ns,
				    .name = m->conf.lease_name,
				    .identity = m->identity,
				    .lease_duration_ms = m->conf.lease_duration_ms,
				    .renew_deadline_ms = m->conf.renew_deadline_ms,
				    .retry_period_ms = m->conf.retry_period_ms,
				    .on_started = on_started_leading,
				    .on_stopped = on_stopped_leading,
				    .arg = m };
	/* A renewal that takes longer than renewDeadline / 2 can't keep the lease anyway. */
	if ((rc = lease_thread_start(m->loop, &m->cfg, (long)(m->conf.renew_deadline_ms / 2000),
				     &lo, &m->elector)) != 0)
		return rc;
	log_info("leader election started", LF_STR("lease", m->conf.lease_name),
		 LF_STR("namespace", ns), LF_STR("identity", m->identity), LF_END);
	return 0;
}

static void close_walk(uv_handle_t *h, void *arg)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static int64_t wall_ms(void)
{
	return time_now_ms();
}

static unsigned libc_rand(void)
{
	return (unsigned)rand();
}

/* What every manager has, for the real one and for tests: state, writer, queues, engine,
 * placement. Undone by core_release. */
static int core_init(struct mgr *m, uv_loop_t *loop)
{
	int rc;
	m->loop = loop;
	m->now_ms = wall_ms;
	m->rand = libc_rand;
	m->pump_fn = pump;
	m->cycle_ms = ADMISSION_CYCLE_MS;
	m->front_ms = FRONT_PASS_MS;
	if ((rc = state_init(m)) != 0 || (rc = writer_init(m)) != 0 || (rc = queues_init(m)) != 0 ||
	    (rc = engine_new(&m->engine)) != 0 || (rc = fairshare_init(m)) != 0 ||
	    (rc = nodes_init(m)) != 0 || (rc = observe_init(m)) != 0 ||
	    (rc = podgroups_init(m)) != 0 || (rc = history_init(m)) != 0)
		return rc;
	if (m->kube)
		kube_client_set_rate(m->kube, m->conf.client_qps, m->conf.client_burst);
	return 0;
}

/* Frees what core_init made; the caller then closes the loop's handles and runs it. */
static void core_release(struct mgr *m)
{
	visibility_release(m);
	history_release(m);
	writer_release(m);
	queues_release(m);
	engine_free(m->engine);
	m->engine = NULL;
	nodes_free(m);
	observe_release(m);
	podgroups_release(m);
	state_release(m);
}

int mgr_init_for_test(struct mgr *m, uv_loop_t *loop, const struct kube_config *cfg,
		      const struct muster_config *conf)
{
	int rc;
	memset(m, 0, sizeof(*m));
	m->conf = *conf;
	if ((rc = kube_client_new(loop, cfg, &m->kube)) != 0)
		return rc;
	if ((rc = core_init(m, loop)) != 0)
		return rc;
	m->synced = 1;
	m->leading = 1; /* no election: tests drive one manager */
	return 0;
}

void mgr_release_for_test(struct mgr *m)
{
	kube_client_free(m->kube); /* in-flight writes complete, cancelled */
	m->kube = NULL;
	uv_idle_stop(&m->pump);
	uv_close((uv_handle_t *)&m->pump, NULL);
	uv_close((uv_handle_t *)&m->turn_prepare, NULL);
	uv_close((uv_handle_t *)&m->deadline_timer, NULL);
	uv_close((uv_handle_t *)&m->cycle_timer, NULL);
	uv_close((uv_handle_t *)&m->afs_timer, NULL);
	uv_close((uv_handle_t *)&m->front_timer, NULL);
	core_release(m);
}

#define SA_NAMESPACE_FILE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

/* The manager's own namespace when the configuration names none: the pod's (POD_NAMESPACE from
 * the downward API, else the service account's namespace file), else muster-system. */
static void default_namespace(char *out, size_t size)
{
	const char *env = getenv("POD_NAMESPACE");
	char line[CONFIG_NAME_MAX] = "";
	FILE *f;
	if (env && *env && strlen(env) < size) {
		snprintf(out, size, "%s", env);
		return;
	}
	if ((f = fopen(SA_NAMESPACE_FILE, "r"))) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
		line[strcspn(line, "\r\n ")] = '\0';
	}
	snprintf(out, size, "%s", line[0] ? line : "muster-system");
}

/* Flags win over the configuration file, which wins over the defaults. In service mode the
 * webhook listens on every interface (the Service reaches the pod's address); in URL mode on
 * 127.0.0.1, which is also the address the apiserver calls. -EINVAL when URL mode is given no
 * address to advertise. */
static int resolve_serving(struct mgr *m)
{
	struct manager_options *o = &m->opt;
	struct muster_config *c = &m->conf;
	if (!c->namespace_name[0])
		default_namespace(c->namespace_name, sizeof(c->namespace_name));
	if (!o->webhook_host)
		o->webhook_host = c->has_webhook_host   ? c->webhook_host :
				  c->webhook_service[0] ? "" :
							  "127.0.0.1";
	if (!*o->webhook_host && !c->webhook_service[0]) {
		log_error("invalid configuration",
			  LF_STR("error",
				 "webhook.host: URL mode (no "
				 "internalCertManagement.webhookServiceName) needs the address the "
				 "apiserver calls"),
			  LF_END);
		return -EINVAL;
	}
	if (!*o->webhook_host)
		o->webhook_host = "0.0.0.0";
	if (o->webhook_port < 0)
		o->webhook_port = c->webhook_port;
	if (!o->health_host)
		o->health_host = c->health_port < 0 ? "127.0.0.1" :
				 c->health_host[0]  ? c->health_host :
						      "0.0.0.0";
	if (o->health_port < 0)
		o->health_port = c->health_port < 0 ? 8081 : c->health_port;
	return 0;
}

/* Service mode: the CA and serving key pair every replica shares, from the Secret (made once
 * by whichever replica comes first), for the Service's DNS names. */
static int shared_certs(struct mgr *m)
{
	const struct muster_config *c = &m->conf;
	char svc[2 * CONFIG_NAME_MAX + 8], fqdn[2 * CONFIG_NAME_MAX + 32];
	snprintf(svc, sizeof(svc), "%s.%s.svc", c->webhook_service, c->namespace_name);
	snprintf(fqdn, sizeof(fqdn), "%s.cluster.local", svc);
	const char *dns[] = { svc, fqdn, NULL };
	return cert_secret_sync(m->loop, m->kube, c->namespace_name, c->webhook_secret, dns,
				&m->certs);
}

int manager_run(const struct manager_options *opt)
{
	struct mgr m;
	char err[512];
	int rc, status = 1;

	memset(&m, 0, sizeof(m));
	m.opt = *opt;
	lease_identity(m.identity, sizeof(m.identity));
	config_defaults(&m.conf);
	if (opt->config && config_load(opt->config, &m.conf, err, sizeof(err)) != 0) {
		log_error("invalid configuration", LF_STR("error", err), LF_END);
		return 1;
	}
	if (resolve_serving(&m) != 0)
		goto fail_muster_config;
	signal(SIGPIPE, SIG_IGN);
	/* Backoff jitter and watch timeouts must differ between processes and restarts. */
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	if ((rc = kube_config_load(opt->kubeconfig, &m.cfg, err, sizeof(err))) != 0) {
		log_error("cannot load kubeconfig", LF_STR("error", err), LF_END);
		goto fail_muster_config;
	}
	const char *dns[] = { "localhost", NULL };
	const char *ips[] = { m.opt.webhook_host, NULL };
	rc = m.conf.webhook_service[0] ? 0 :
	     opt->state_dir            ? certs_load_or_create(opt->state_dir, dns, ips, &m.certs) :
					 certs_generate(dns, ips, &m.certs);
	if (rc != 0) {
		log_error("cannot create webhook certificates", LF_INT("rc", rc), LF_END);
		goto fail_config;
	}
	if ((rc = kube_client_new(uv_default_loop(), &m.cfg, &m.kube)) != 0 ||
	    (rc = kube_client_new(uv_default_loop(), &m.cfg, &m.event_kube)) != 0 ||
	    (rc = kube_client_new(uv_default_loop(), &m.cfg, &m.setup_kube)) != 0) {
		log_error("cannot create API client", LF_INT("rc", rc), LF_END);
		kube_client_free(m.kube);
		kube_client_free(m.event_kube);
		goto fail_certs;
	}
	/* The writer's bucket already drops what is over EVENT_QPS; this only paces a burst. */
	kube_client_set_rate(m.event_kube, EVENT_QPS, EVENT_BURST);
	m.loop = uv_default_loop();
	if (m.conf.webhook_service[0] && (rc = shared_certs(&m)) != 0) {
		log_error("cannot get the webhook certificates", LF_INT("rc", rc),
			  LF_STR("namespace", m.conf.namespace_name),
			  LF_STR("secret", m.conf.webhook_secret), LF_END);
		goto fail_core;
	}
	if ((rc = core_init(&m, uv_default_loop())) != 0) {
		log_error("cannot initialise the controller", LF_INT("rc", rc), LF_END);
		goto fail_core;
	}
	struct httpd_options wh = { .host = m.opt.webhook_host,
				    .port = m.opt.webhook_port,
				    .cert_pem = m.certs.cert_pem,
				    .key_pem = m.certs.key_pem,
				    .max_body = WEBHOOK_MAX_BODY,
				    .handler = on_webhook_request,
				    .handler_arg = &m };
	struct httpd_options hh = { .host = m.opt.health_host,
				    .port = m.opt.health_port,
				    .handler = on_health_request,
				    .handler_arg = &m };
	/* metrics.bindAddress; an empty host listens on every IPv4 address, as Go's ":8080". */
	struct httpd_options mh = {
		.host = m.conf.metrics_host[0] ? m.conf.metrics_host : "0.0.0.0",
		.port = opt->metrics_port >= 0 ? opt->metrics_port : m.conf.metrics_port,
		.handler = on_metrics_request,
		.handler_arg = &m
	};
	/* visibilityServer.bindAddress; "" listens on every IPv4 address, as Kueue's server. */
	struct httpd_options vh = {
		.host = m.conf.visibility_host[0] ? m.conf.visibility_host : "0.0.0.0",
		.port = opt->visibility_port >= 0 ? opt->visibility_port : m.conf.visibility_port,
		.cert_pem = m.certs.cert_pem,
		.key_pem = m.certs.key_pem,
		.max_body = 4096,
		.handler = on_visibility_request,
		.handler_arg = &m
	};
	if ((rc = httpd_start(m.loop, &wh, &m.webhook_srv)) != 0 ||
	    (rc = httpd_start(m.loop, &hh, &m.health_srv)) != 0 ||
	    (rc = httpd_start(m.loop, &mh, &m.metrics_srv)) != 0 ||
	    (rc = httpd_start(m.loop, &vh, &m.visibility_srv)) != 0) {
		log_error("cannot listen", LF_INT("rc", rc), LF_STR("error", strerror(-rc)),
			  LF_END);
		goto fail_servers;
	}
	uv_signal_init(m.loop, &m.sigterm);
	uv_signal_init(m.loop, &m.sigint);
	m.sigterm.data = m.sigint.data = &m;
	uv_signal_start(&m.sigterm, on_signal, SIGTERM);
	uv_signal_start(&m.sigint, on_signal, SIGINT);

	uv_timer_init(m.loop, &m.stop_timer);
	m.stop_timer.data = &m;
	if (m.conf.leader_elect) {
		metrics_set_replica_role(m.metrics, "follower");
		if ((rc = start_election(&m)) != 0) {
			log_error("cannot start leader election", LF_INT("rc", rc), LF_END);
			goto fail_election;
		}
	} else {
		/* The webhook server already answers, so registering it can't block Job
		 * creation. */
		m.leading = 1;
	}
	/* Then the hold: the leader installs it once it is known (install_when_known). */
	if ((rc = hold_discover(&m, install_when_known)) != 0) {
		log_error("cannot start discovery", LF_INT("rc", rc), LF_END);
		goto fail_election;
	}
	if ((rc = ingest_start(&m)) != 0)
		goto fail_informers;
	log_info("manager started", LF_STR("version", MUSTER_VERSION),
		 LF_INT("wait_for_pods_ready", m.conf.wait_for_pods_ready),
		 LF_INT("pods_ready_timeout_ms", m.conf.pods_ready_timeout_ms),
		 LF_STR("placement", m.conf.placement_mode == PLACEMENT_PREFERRED ? "Preferred" :
				     m.conf.placement_mode == PLACEMENT_EXACT     ? "Exact" :
										    "None"),
		 LF_INT("node_feasibility", m.conf.node_feasibility),
		 LF_INT("client_qps", (long long)m.conf.client_qps),
		 LF_INT("client_burst", m.conf.client_burst),
		 LF_INT("leader_elect", m.conf.leader_elect),
		 LF_STR("namespace", m.conf.namespace_name),
		 LF_STR("webhook_service",
			m.conf.webhook_service[0] ? m.conf.webhook_service : NULL),
		 LF_INT("webhook_port", httpd_port(m.webhook_srv)),
		 LF_INT("health_port", httpd_port(m.health_srv)),
		 LF_INT("metrics_port", httpd_port(m.metrics_srv)),
		 LF_INT("visibility_port", httpd_port(m.visibility_srv)), LF_END);

	uv_run(m.loop, UV_RUN_DEFAULT);
	status = m.failed ? 1 : 0;

	/* Orderly teardown so sanitizers see every allocation returned. */
fail_informers:
	ingest_stop(&m);
fail_election:
	lease_thread_stop(m.elector);
fail_servers:
	httpd_stop(m.webhook_srv);
	httpd_stop(m.health_srv);
	httpd_stop(m.metrics_srv);
	httpd_stop(m.visibility_srv);
fail_core:
	kube_client_free(m.kube);
	kube_client_free(m.event_kube);
	kube_client_free(m.setup_kube);
	core_release(&m);
	uv_walk(m.loop, close_walk, NULL);
	uv_run(m.loop, UV_RUN_DEFAULT);
	uv_loop_close(m.loop);
fail_certs:
	certs_release(&m.certs);
fail_config:
	kube_config_release(&m.cfg);
	config_release(&m.conf);
	log_info("stopped", LF_INT("status", status), LF_END);
	return status;
fail_muster_config:
	config_release(&m.conf);
	return 1;
}
