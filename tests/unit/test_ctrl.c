/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller (manager/ctrl) without a cluster: the real stages, writer and kube client
 * against the fake apiserver (fake_apiserver.h), with the test as the watch. Each test seeds
 * objects into the controller's stores and the fake, then delivers the fake's write events
 * when it chooses, so races (a write in flight while an event arrives, a cache that lags
 * behind a write) happen in a fixed order. The clock and the random source are injected:
 * backoffs and deadlines run on the test's clock.
 *
 * After every step the incremental queue totals are checked against a recount
 * (queues_check), and no test may leave a write unanswered.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/integrations.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "ledger/ledger.h"
#include "fake_apiserver.h"
#include "test_json.h"
#include "util/log.h"

#define MS (1000000ull)
#define KUEUE "/apis/kueue.x-k8s.io/v1beta2"
#define WL_PATH(name) KUEUE "/namespaces/ns/workloads/" name
#define JOB_PATH(name) "/apis/batch/v1/namespaces/ns/jobs/" name

static int64_t clock_ms;
static int64_t test_now(void)
{
	return clock_ms;
}

static unsigned rand_state = 1;
static unsigned test_rand(void)
{
	rand_state = rand_state * 1103515245u + 12345u;
	return rand_state >> 8;
}

struct t {
	uv_loop_t loop;
	uv_timer_t tick;
	struct fake_api *api;
	struct mgr m;
	json_t *stores[K_KINDS];
};

/* The kinds the fake apiserver holds objects of: every watched kind, Pods as the queued-pod
 * informer sees them (the kind table, ctrl/kinds.c, says where each is). */
static int faked(enum kind kind)
{
	return kind_def(kind)->watched && kind != K_POD;
}

static void path_of(enum kind kind, json_t *obj, char *path, size_t size, char *key, size_t ksize)
{
	int cluster = kind_def(kind)->cluster_scoped;
	assert_true(faked(kind));
	assert_int_equal(kind_path(kind, obj_namespace(obj), obj_name(obj), NULL, path, size), 0);
	if (cluster)
		snprintf(key, ksize, "%s", obj_name(obj));
	else
		snprintf(key, ksize, "%s/%s", obj_namespace(obj), obj_name(obj));
}

/* The kind of an object path; K_KINDS for one the controller doesn't watch (events). */
static enum kind kind_of_path(const char *path, char *key, size_t ksize)
{
	for (enum kind k = 0; k < K_KINDS; k++) {
		char root[300], needle[64];
		if (!faked(k))
			continue;
		/* The group's root: the collection's path less "/<plural>". */
		assert_int_equal(kind_path(k, NULL, NULL, NULL, root, sizeof(root)), 0);
		root[strlen(root) - strlen(kind_plural(k)) - 1] = '\0';
		snprintf(needle, sizeof(needle), "/%s/", kind_plural(k));
		const char *at = strstr(path, needle);
		if (!at || strncmp(path, root, strlen(root)) != 0 || path[strlen(root)] != '/')
			continue;
		const char *name = at + strlen(needle);
		if (strchr(name, '/'))
			continue;
		if (!kind_def(k)->cluster_scoped) {
			const char *ns = strstr(path, "/namespaces/");
			if (!ns)
				continue;
			ns += strlen("/namespaces/");
			snprintf(key, ksize, "%.*s/%s", (int)(strchr(ns, '/') - ns), ns, name);
		} else {
			snprintf(key, ksize, "%s", name);
		}
		return k;
	}
	return K_KINDS;
}

/* What an informer does with a new version of an object (stolen): keeps it in the store as
 * the controller would (slim, or compact), then reports the change. */
static void store(struct t *t, enum kind kind, const char *key, json_t *obj)
{
	json_t *kept = ingest_keep(&t->m, kind, obj, NULL, 0);
	json_decref(obj);
	json_t *old = json_incref(json_object_get(t->stores[kind], key));
	json_object_set_new(t->stores[kind], key, kept);
	ingest_event(&t->m, kind, old ? WATCH_MODIFIED : WATCH_ADDED, key, old, kept);
	state_release_views(&t->m);
	json_decref(old);
}

/* Puts obj (stolen) in the fake and in the controller's cache, and tells the controller;
 * returns the fake's copy. */
static json_t *seed(struct t *t, enum kind kind, json_t *obj)
{
	char path[600], key[600];
	path_of(kind, obj, path, sizeof(path), key, sizeof(key));
	json_t *stored = fake_api_put(t->api, path, obj);
	store(t, kind, key, json_deep_copy(stored));
	return stored;
}

static int quiet(struct t *t)
{
	struct writer_stats s;
	writer_get_stats(&t->m, &s);
	return s.sent == s.ok + s.conflicts + s.retries + s.rejected &&
	       !uv_is_active((uv_handle_t *)&t->m.pump) && !mgr_cycle_held(&t->m);
}

/* Runs the loop until every write is answered and the pump is idle. */
static void settle(struct t *t)
{
	uint64_t deadline = uv_hrtime() + 3000 * MS;
	do
		uv_run(&t->loop, UV_RUN_ONCE);
	while (!quiet(t) && uv_hrtime() < deadline);
	if (!quiet(t))
		fail_msg("the controller did not settle");
	assert_int_equal(queues_check(&t->m), 0);
	assert_int_equal(wl_records_check(&t->m), 0);
}

/* Delivers every queued watch event (the cache catches up), then settles. Returns how many. */
static int deliver(struct t *t)
{
	struct fake_event ev;
	int n = 0;
	while (fake_api_next_event(t->api, &ev) == 0) {
		char key[600];
		enum kind kind = kind_of_path(ev.path, key, sizeof(key));
		if (kind != K_KINDS && ev.deleted) {
			json_t *old = json_incref(json_object_get(t->stores[kind], key));
			json_object_del(t->stores[kind], key);
			ingest_event(&t->m, kind, WATCH_DELETED, key, old, ev.obj);
			state_release_views(&t->m);
			json_decref(old);
			json_decref(ev.obj);
			n++;
		} else if (kind != K_KINDS) {
			store(t, kind, key, ev.obj);
			n++;
		} else {
			json_decref(ev.obj);
		}
	}
	settle(t);
	return n;
}

/* Settles and delivers until nothing more happens. */
static void converge(struct t *t)
{
	settle(t);
	for (int i = 0; i < 50 && deliver(t) > 0; i++)
		;
}

/* Runs the loop until the controller has sent one more write than before (it is then in
 * flight: the fake's answer is read in a later turn). */
static void run_until_sent(struct t *t)
{
	struct writer_stats s;
	writer_get_stats(&t->m, &s);
	uint64_t before = s.sent, deadline = uv_hrtime() + 3000 * MS;
	do {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		writer_get_stats(&t->m, &s);
	} while (s.sent == before && uv_hrtime() < deadline);
	assert_true(s.sent > before);
}

/* Moves the clock and runs what fell due. */
static void advance(struct t *t, int64_t ms)
{
	clock_ms += ms;
	state_run_deadlines(&t->m);
	settle(t);
}

static void on_tick(uv_timer_t *h)
{
	(void)h;
}

static int setup_with(void **state, void (*tune)(struct muster_config *))
{
	struct t *t = calloc(1, sizeof(*t));
	struct muster_config conf;
	assert_non_null(t);
	assert_int_equal(uv_loop_init(&t->loop), 0);
	uv_timer_init(&t->loop, &t->tick);
	uv_timer_start(&t->tick, on_tick, 2, 2);
	assert_int_equal(fake_api_start(&t->loop, NULL, NULL, &t->api), 0);
	config_defaults(&conf);
	conf.node_feasibility = 0; /* no Nodes here: placement has its own tests */
	conf.placement_mode = PLACEMENT_NONE;
	conf.client_qps = 0;
	if (tune)
		tune(&conf);
	struct kube_config cfg = { .server = (char *)fake_api_url(t->api) };
	assert_int_equal(mgr_init_for_test(&t->m, &t->loop, &cfg, &conf), 0);
	time_set_clock(NULL);
	clock_ms = time_now_ms();
	time_set_clock(test_now); /* conditions' times follow the test's clock too */
	rand_state = 1;
	t->m.now_ms = test_now;
	t->m.rand = test_rand;
	t->m.cycle_ms = 0; /* cycles at once: the tests step through every decision */
	t->m.front_ms = 0;
	for (int k = 0; k < K_KINDS; k++)
		t->m.stores[k] = t->stores[k] = json_object();
	*state = t;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, NULL);
}

static int teardown(void **state)
{
	struct t *t = *state;
	settle(t);
	mgr_release_for_test(&t->m);
	fake_api_stop(t->api);
	uv_close((uv_handle_t *)&t->tick, NULL);
	uint64_t deadline = uv_hrtime() + 2000 * MS;
	int alive = 1;
	while (alive && uv_hrtime() < deadline)
		alive = uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_false(alive);
	assert_int_equal(uv_loop_close(&t->loop), 0);
	for (int k = 0; k < K_KINDS; k++)
		json_decref(t->stores[k]);
	free(t);
	time_set_clock(NULL);
	return 0;
}

/* --- fixtures ---------------------------------------------------------------------------- */

/* A flavor, a namespace, a LocalQueue and a ClusterQueue of cpu_quota cpus (in cohort when
 * not NULL, with preemption withinClusterQueue LowerPriority). */
static void seed_queue(struct t *t, const char *cpu_quota, const char *cohort)
{
	char cohort_field[128] = "";
	if (cohort)
		snprintf(cohort_field, sizeof(cohort_field), "'cohortName':'%s',", cohort);
	seed(t, K_FLAVOR, J("{'metadata':{'name':'default'}}"));
	seed(t, K_NAMESPACE,
	     J("{'metadata':{'name':'ns','labels':{'kubernetes.io/metadata.name':'ns'}}}"));
	seed(t, K_CQ,
	     J("{'metadata':{'name':'cq'},'spec':{%s'namespaceSelector':{},"
	       "'preemption':{'withinClusterQueue':'LowerPriority'},"
	       "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'default',"
	       "'resources':[{'name':'cpu','nominalQuota':'%s'}]}]}]}}",
	       cohort_field, cpu_quota));
	seed(t, K_LQ,
	     J("{'metadata':{'namespace':'ns','name':'lq'},'spec':{'clusterQueue':'cq'}}"));
}

static json_t *workload(const char *name, const char *cpu, int priority, const char *created)
{
	return J("{'metadata':{'namespace':'ns','name':'%s','uid':'uid-%s','creationTimestamp':'%s'"
		 "},"
		 "'spec':{'queueName':'lq','priority':%d,'podSets':[{'name':'main','count':1,"
		 "'template':{'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'%s'"
		 "}}}]}}}]}}",
		 name, name, created, priority, cpu);
}

static json_t *job(const char *name, const char *cpu)
{
	return J("{'metadata':{'namespace':'ns','name':'%s','uid':'job-uid-%s',"
		 "'labels':{'kueue.x-k8s.io/"
		 "queue-name':'lq'},'creationTimestamp':'2026-01-01T00:00:00Z'},"
		 "'spec':{'suspend':true,'parallelism':1,'completions':1,'template':{'spec':{"
		 "'restartPolicy':'Never','containers':[{'name':'c','image':'busybox',"
		 "'resources':{'requests':{'cpu':'%s'}}}]}}}}",
		 name, name, cpu);
}

static int fake_cond(struct t *t, const char *path, const char *type)
{
	return condition_true(fake_api_get(t->api, path), type);
}

static int64_t cq_cpu_usage(struct t *t)
{
	struct eng_cq_usage u = { 0, 0 };
	engine_cq_usage(t->m.engine, "cq", "default", "cpu", &u);
	return u.total;
}

/* The store key ("ns/name") of an object path. */
static const char *key_of(const char *path)
{
	static char key[600];
	assert_int_not_equal(kind_of_path(path, key, sizeof(key)), K_KINDS);
	return key;
}

/* The Workload the controller made for a Job, from the fake. */
static json_t *job_workload(struct t *t, const char *job_name, char *path, size_t size)
{
	char name[300];
	char uid[64];
	snprintf(uid, sizeof(uid), "job-uid-%s", job_name);
	assert_int_equal(integration_workload_name(&integration_job, job_name, uid, name,
						   sizeof(name)),
			 0);
	snprintf(path, size, WL_PATH("%s"), name);
	return fake_api_get(t->api, path);
}

/* Waiting Workloads next in line say why once they have been there 5 s (admission.c). */
static void next_in_line_for_a_while(struct t *t)
{
	advance(t, 5000);
	converge(t);
}

/* The Workload at path says it waits for quota: QuotaReserved=False, reason WaitingForQuota. */
static void assert_waits(struct t *t, const char *path)
{
	json_t *c = condition_get(fake_api_get(t->api, path), "QuotaReserved");
	assert_non_null(c);
	assert_string_equal(json_string_value(json_object_get(c, "status")), "False");
	assert_string_equal(json_string_value(json_object_get(c, "reason")), "WaitingForQuota");
}

/* Someone else (Kueue's perf runner) marks the Workload at path Finished. */
static void finish_elsewhere(struct t *t, const char *path)
{
	json_t *done = json_deep_copy(fake_api_get(t->api, path));
	json_array_append_new(obj_path(done, "status.conditions"),
			      J("{'type':'Finished','status':'True','reason':'Succeeded','message':"
				"'done',"
				"'lastTransitionTime':'2026-01-01T00:01:00Z'}"));
	seed(t, K_WORKLOAD, done);
}

/* A queue of cpu_quota cpus and a Job of cpu cpus, converged: its Workload (path written to
 * path) is admitted and the Job started. */
static void admitted_job(struct t *t, const char *cpu_quota, const char *name, const char *cpu,
			 char *path, size_t size)
{
	seed_queue(t, cpu_quota, NULL);
	seed(t, K_JOB, job(name, cpu));
	converge(t);
	assert_non_null(job_workload(t, name, path, size));
	assert_true(fake_cond(t, path, "Admitted"));
	char job_path[300];
	snprintf(job_path, sizeof(job_path), JOB_PATH("%s"), name);
	assert_true(json_is_false(obj_path(fake_api_get(t->api, job_path), "spec.suspend")));
}

/* Job name completes (as the fake holds it, with a Complete condition); its Workload, at path,
 * is then Finished. */
static void complete_job(struct t *t, const char *name, const char *path)
{
	char job_path[300];
	snprintf(job_path, sizeof(job_path), JOB_PATH("%s"), name);
	json_t *done = json_deep_copy(fake_api_get(t->api, job_path));
	json_object_set_new(done, "status",
			    J("{'succeeded':1,'conditions':[{'type':'Complete',"
			      "'status':'True'}]}"));
	seed(t, K_JOB, done);
	converge(t);
	assert_true(fake_cond(t, path, "Finished"));
}

/* The value of one series in the manager's /metrics text: series is its name and labels as
 * rendered, e.g.
 * "kueue_admitted_workloads_total{cluster_queue=\"cq\",replica_role=\"standalone\"}". -1 when the
 * series is absent. */
static double metric(struct t *t, const char *series)
{
	struct buf out;
	double v = -1;
	buf_init(&out, 1u << 24);
	assert_int_equal(observe_render(&t->m, &out), 0);
	size_t n = strlen(series);
	for (const char *line = out.data; line && *line;) {
		if (!strncmp(line, series, n) && line[n] == ' ')
			v = strtod(line + n + 1, NULL);
		const char *nl = strchr(line, '\n');
		line = nl ? nl + 1 : NULL;
	}
	buf_release(&out);
	return v;
}

#define ROLE "replica_role=\"standalone\""

/* The object (kind, key) goes from the cache, as its watch tells. */
static void uncache(struct t *t, enum kind kind, const char *key)
{
	json_t *old = json_incref(json_object_get(t->stores[kind], key));
	json_object_del(t->stores[kind], key);
	ingest_event(&t->m, kind, WATCH_DELETED, key, old, NULL);
	json_decref(old);
}

/* The Workload at key goes from the cache, and the controller settles. */
static void delete_workload(struct t *t, const char *key)
{
	uncache(t, K_WORKLOAD, key);
	settle(t);
}

/* --- tests ------------------------------------------------------------------------------- */

/* The plain path: a pending Workload is admitted with one status write, and nothing more is
 * written once the cache catches up. */
static void test_admit_once(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("w1", "2", 0, "2026-01-01T00:00:00Z"));
	settle(t);
	/* The write has landed, its watch event not yet: the assumed object stands in for the
	 * Workload, at the resourceVersion the write answered with (read from the answer's text,
	 * which is not parsed). */
	json_t *assumed = wl_record_get(&t->m, "ns/w1")->assumed;
	const char *rv = obj_str(assumed, "metadata.resourceVersion");
	assert_non_null(rv);
	assert_string_equal(rv, obj_str(fake_api_get(t->api, WL_PATH("w1")),
					"metadata.resourceVersion"));
	/* It shares what didn't change with the cached view, which stays as the cache has it. */
	json_t *cached = store_get(&t->m, K_WORKLOAD, "ns/w1");
	assert_false(condition_true(cached, "QuotaReserved"));
	assert_null(obj_path(cached, "status.admission"));
	assert_string_not_equal(obj_str(cached, "metadata.resourceVersion"), rv);
	assert_ptr_equal(obj_path(cached, "spec.podSets"), obj_path(assumed, "spec.podSets"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("w1"), "QuotaReserved"));
	assert_true(fake_cond(t, WL_PATH("w1"), "Admitted"));
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w1"), 0), 1);
	assert_int_equal(cq_cpu_usage(t), 2000);
	/* Applied as Kueue applies it: its field manager, its identity, the admission and the
	 * admission's conditions only. */
	for (size_t i = 0; i < fake_api_nrequests(t->api); i++) {
		const struct fake_request *r = fake_api_request(t->api, i);
		if (strcmp(r->method, "PATCH") || strcmp(r->path, WL_PATH("w1") "/status"))
			continue;
		assert_string_equal(r->query, "fieldManager=kueue-admission&force=true");
		json_t *config = json_loads(r->body, 0, NULL);
		assert_string_equal(json_string_value(json_object_get(config, "kind")), "Workload");
		assert_string_equal(obj_str(config, "apiVersion"), "kueue.x-k8s.io/v1beta2");
		assert_string_equal(obj_str(config, "metadata.name"), "w1");
		assert_string_equal(obj_str(config, "metadata.namespace"), "ns");
		assert_string_equal(obj_str(config, "status.admission.clusterQueue"), "cq");
		assert_int_equal(json_array_size(obj_path(config, "status.conditions")), 2);
		json_decref(config);
	}
	seed(t, K_WORKLOAD, json_deep_copy(fake_api_get(t->api, WL_PATH("w1"))));
	converge(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w1"), 0), 1);
}

/* What a write answered with: metadata strings read from the text where that is exact, the
 * parser where it isn't, nothing from a failed write. */
static void test_write_answer(void **state)
{
	(void)state;
	char buf[16];
	struct kube_response r = { .status = 200 };
	struct write_answer a = { .resp = &r };
	r.body = "{\"metadata\":{\"name\":\"w\",\"uid\":\"u-1\",\"resourceVersion\":\"42\"},"
		 "\"spec\":{}}";
	r.body_len = strlen(r.body);
	assert_string_equal(write_answer_rv(&a), "42");
	assert_string_equal(write_answer_meta(&a, "uid", buf, sizeof(buf)), "u-1");
	assert_false(a.parsed); /* neither needed the object */
	assert_null(write_answer_meta(&a, "generateName", buf, sizeof(buf)));
	assert_true(a.parsed); /* absent from the text: the parser says so */
	assert_string_equal(obj_str(write_answer_object(&a), "metadata.name"), "w");

	/* An escape, or a value longer than the buffer: decoded by the parser. */
	struct write_answer b = { .resp = &r };
	r.body = "{\"metadata\":{\"uid\":\"a\\u0062c\",\"name\":\"a-name-longer-than-16\"}}";
	r.body_len = strlen(r.body);
	assert_string_equal(write_answer_meta(&b, "uid", buf, sizeof(buf)), "abc");
	assert_string_equal(buf, "");
	assert_string_equal(write_answer_meta(&b, "name", buf, sizeof(buf)),
			    "a-name-longer-than-16");
	json_decref(b.obj);

	/* Not JSON: no answer at all. A failed write has none either. */
	struct write_answer c = { .resp = &r };
	r.body = "{\"metadata\":{\"resourceVersion\":7";
	r.body_len = strlen(r.body);
	assert_null(write_answer_rv(&c));
	assert_null(write_answer_object(&c));
	struct write_answer d = { .resp = NULL };
	assert_null(write_answer_rv(&d));
	assert_null(write_answer_object(&d));
	json_decref(a.obj);
}

/* A compact store's views: kept across release points (a Workload is read by several steps in
 * a row), replaced by a new event's object, and all dropped past the bound. */
static void test_store_views_kept_until_bound(void **state)
{
	struct t *t = *state;
	struct mgr *m = &t->m;
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("w1", "2", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	/* The latest event's object served the pass; it stays as the view. */
	json_t *v1 = store_get(m, K_WORKLOAD, "ns/w1");
	assert_non_null(v1);
	state_release_views(m);
	state_release_fresh(m);
	assert_ptr_equal(store_get(m, K_WORKLOAD, "ns/w1"), v1);
	/* A new version replaces it. */
	json_t *next = json_deep_copy(fake_api_get(t->api, WL_PATH("w1")));
	json_object_set_new(json_object_get(next, "metadata"), "labels",
			    json_pack("{s:s}", "kueue.x-k8s.io/changed", "yes")); /* kept */
	store(t, K_WORKLOAD, "ns/w1", next);
	state_release_fresh(m);
	json_t *v2 = store_get(m, K_WORKLOAD, "ns/w1");
	assert_string_equal(obj_label(v2, "kueue.x-k8s.io/changed"), "yes");
	/* Parsed from its text once dropped, with the same content. */
	state_drop_views(m);
	json_t *v3 = store_get(m, K_WORKLOAD, "ns/w1");
	assert_string_equal(obj_label(v3, "kueue.x-k8s.io/changed"), "yes");
	assert_string_equal(obj_str(v3, "status.admission.clusterQueue"), "cq");
	/* Past the bound, the next release point drops them all. */
	for (int i = 0; i <= STORE_VIEWS_MAX; i++) {
		char key[64], text[128];
		snprintf(key, sizeof(key), "ns/v%d", i);
		snprintf(text, sizeof(text),
			 "{\"metadata\":{\"name\":\"v%d\",\"namespace\":\"ns\"}}", i);
		json_t *obj = json_loads(text, 0, NULL);
		json_decref(store_keep(m, K_WORKLOAD, obj, NULL, 0));
		json_decref(obj);
	}
	state_release_fresh(m);
	state_drop_views(m);
	for (int i = 0; i <= STORE_VIEWS_MAX; i++) {
		char key[64];
		snprintf(key, sizeof(key), "ns/v%d", i);
		assert_non_null(store_get(m, K_WORKLOAD, key));
	}
	assert_int_equal(m->views[K_WORKLOAD].len, STORE_VIEWS_MAX + 1);
	state_release_views(m);
	assert_int_equal(m->views[K_WORKLOAD].len, 0);
	for (int i = 0; i <= STORE_VIEWS_MAX; i++) {
		char key[64];
		snprintf(key, sizeof(key), "ns/v%d", i);
		store_forget(m, K_WORKLOAD, key);
	}
}

/* A watched object's text is kept as it came when slimming leaves the object as the text has
 * it (no serializing again), and serialized from the slimmed tree when slimming cut anything;
 * either way a read gives the slim object. */
static void test_store_keeps_event_text(void **state)
{
	struct t *t = *state;
	struct mgr *m = &t->m;
	static const char slim[] =
		"{\"metadata\": {\"name\": \"a\", \"namespace\": \"ns\", \"resourceVersion\": "
		"\"7\"},"
		" \"spec\": {\"podSets\": [{\"count\": 1, \"template\": {\"spec\": {\"containers\":"
		" [{\"name\": \"c\", \"resources\": {\"requests\": {\"cpu\": \"1\"}}}]}}}]}}";
	static const char fat[] =
		"{\"metadata\": {\"name\": \"b\", \"namespace\": \"ns\", \"resourceVersion\": "
		"\"8\"},"
		" \"spec\": {\"podSets\": [{\"count\": 1, \"template\": {\"spec\": {\"containers\":"
		" [{\"name\": \"c\", \"image\": \"big\", \"resources\": {}}]}}}]}}";
	json_t *a = json_loads(slim, 0, NULL), *b = json_loads(fat, 0, NULL);
	json_decref(ingest_keep(m, K_WORKLOAD, a, slim, strlen(slim)));
	json_decref(ingest_keep(m, K_WORKLOAD, b, fat, strlen(fat)));
	json_decref(a);
	json_decref(b);
	assert_string_equal(strmap_get(&m->texts[K_WORKLOAD], "ns/a"), slim);
	const char *b_text = strmap_get(&m->texts[K_WORKLOAD], "ns/b");
	assert_null(strstr(b_text, "image"));
	state_release_fresh(m);
	state_drop_views(m);
	json_t *va = store_get(m, K_WORKLOAD, "ns/a"), *vb = store_get(m, K_WORKLOAD, "ns/b");
	assert_string_equal(obj_str(va, "metadata.resourceVersion"), "7");
	assert_non_null(obj_path(va, "spec.podSets"));
	assert_null(
		json_object_get(json_array_get(obj_path(json_array_get(obj_path(vb, "spec.podSets"),
								       0),
							"template.spec.containers"),
					       0),
				"image"));
	/* What a text holds is known without parsing it; a kind kept whole says "may". */
	assert_true(store_may_hold(m, K_WORKLOAD, "ns/a", "\"cpu\""));
	assert_false(store_may_hold(m, K_WORKLOAD, "ns/a", "\"QuotaReserved\""));
	assert_true(store_may_hold(m, K_WORKLOAD, "ns/absent", "\"QuotaReserved\""));
	assert_true(store_may_hold(m, K_CQ, "cq", "\"QuotaReserved\""));
	store_forget(m, K_WORKLOAD, "ns/a");
	store_forget(m, K_WORKLOAD, "ns/b");
}

/* A Workload no Job owns (as Kueue's perf runner creates them) is admitted, and when someone
 * else marks it Finished its quota goes to the next one at once. */
static void test_bare_workload_finished_elsewhere(void **state)
{
	struct t *t = *state;
	seed_queue(t, "2", NULL);
	seed(t, K_WORKLOAD, workload("w1", "2", 0, "2026-01-01T00:00:00Z"));
	seed(t, K_WORKLOAD, workload("w2", "2", 0, "2026-01-01T00:00:01Z"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("w1"), "QuotaReserved"));
	assert_false(fake_cond(t, WL_PATH("w2"), "QuotaReserved"));
	/* The runner finishes w1. */
	finish_elsewhere(t, WL_PATH("w1"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("w2"), "QuotaReserved"));
	assert_int_equal(cq_cpu_usage(t), 2000);
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w1"), 200), 1);
}

/* A 409 on the admission write gives the charge back; the Workload is decided again from the
 * fresh object after a short backoff and admitted once. */
static void test_admission_conflict(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	fake_api_fail(t->api, "PATCH", WL_PATH("w1") "/status", 409, 1);
	seed(t, K_WORKLOAD, workload("w1", "2", 0, "2026-01-01T00:00:00Z"));
	settle(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w1"), 409), 1);
	assert_null(engine_admission(t->m.engine, "ns/w1"));
	assert_int_equal(cq_cpu_usage(t), 0);
	/* Not re-admitted at once, in a loop: only after the backoff. */
	for (int i = 0; i < 5; i++)
		settle(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w1"), 0), 1);
	advance(t, 1000);
	converge(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w1"), 200), 1);
	assert_true(fake_cond(t, WL_PATH("w1"), "QuotaReserved"));
	assert_int_equal(cq_cpu_usage(t), 2000);
}

/* The engine admits a Workload while another write to it is in flight (its UnsupportedFields
 * condition, written in the same pass): the admission can't be sent, is undone after the
 * cycle, and is made again once that write has landed. */
static void test_admission_while_write_in_flight(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	json_t *w = workload("w1", "2", 0, "2026-01-01T00:00:00Z");
	json_object_set_new(json_object_get(w, "spec"), "maximumExecutionTimeSeconds",
			    json_integer(600));
	seed(t, K_WORKLOAD, w);
	settle(t);
	assert_null(engine_admission(t->m.engine, "ns/w1"));
	assert_int_equal(cq_cpu_usage(t), 0);
	converge(t);
	assert_true(fake_cond(t, WL_PATH("w1"), "UnsupportedFields"));
	assert_true(fake_cond(t, WL_PATH("w1"), "QuotaReserved"));
	assert_int_equal(cq_cpu_usage(t), 2000);
}

/* While the apiserver is down, an admission is not retried in a loop: writes pause with a
 * global backoff, the key backs off on its own, and once the apiserver is back it is admitted
 * exactly once. */
static void test_outage_backs_off(void **state)
{
	struct t *t = *state;
	struct writer_stats s;
	seed_queue(t, "4", NULL);
	fake_api_down(t->api);
	for (int i = 0; i < 4; i++)
		seed(t, K_WORKLOAD,
		     workload((const char *[]){ "w1", "w2", "w3", "w4" }[i], "1", 0,
			      "2026-01-01T00:00:00Z"));
	settle(t);
	/* 25 s of outage in 100 ms steps. */
	for (int i = 0; i < 250; i++)
		advance(t, 100);
	writer_get_stats(&t->m, &s);
	/* Per key: 0.5, 1, 2, 4, 8, 16 s (+ jitter) in 25 s: at most 7 tries each. */
	assert_true(s.sent <= 4 * 8);
	assert_true(s.retries >= 4);
	assert_int_equal(s.ok, 0);
	assert_int_equal(fake_api_up(t->api), 0);
	for (int i = 0; i < 40; i++) /* the longest key backoff is at most 30 s */
		advance(t, 1000);
	converge(t);
	for (int i = 0; i < 4; i++) {
		char path[256];
		snprintf(path, sizeof(path), WL_PATH("w%d"), i + 1);
		assert_true(fake_cond(t, path, "QuotaReserved"));
		assert_int_equal(fake_api_count(t->api, "PATCH", path, 200), 1);
	}
	assert_int_equal(cq_cpu_usage(t), 4000);
}

/* A Job gets one Workload create, however often it is reconciled before the Workload shows
 * up in the cache; then it is admitted and started once. */
static void test_job_creates_once(void **state)
{
	struct t *t = *state;
	char path[600];
	seed_queue(t, "4", NULL);
	seed(t, K_JOB, job("j1", "1"));
	settle(t);
	assert_int_equal(fake_api_count(t->api, "POST", KUEUE "/namespaces/ns/workloads", 0), 1);
	/* The Job's events come again before the Workload's. */
	for (int i = 0; i < 3; i++) {
		seed(t, K_JOB, json_deep_copy(fake_api_get(t->api, JOB_PATH("j1"))));
		settle(t);
	}
	assert_int_equal(fake_api_count(t->api, "POST", KUEUE "/namespaces/ns/workloads", 0), 1);
	converge(t);
	assert_non_null(job_workload(t, "j1", path, sizeof(path)));
	assert_true(fake_cond(t, path, "Admitted"));
	assert_false(json_is_true(obj_path(fake_api_get(t->api, JOB_PATH("j1")), "spec.suspend")));
	assert_int_equal(fake_api_count(t->api, "POST", KUEUE "/namespaces/ns/workloads", 0), 1);
	/* One start patch of the Job. */
	assert_int_equal(fake_api_count(t->api, "PATCH", JOB_PATH("j1"), 200), 1);
}

/* A Job's Workload that lists another integrated object first (a RayJob that adopted it too)
 * is still the Job's: its controller reference says whose it is, as Kueue reads it, not its
 * first entry. Once admitted, the Job starts, no second Workload is made, and when the Job
 * completes the Job (not the RayJob) is told its Workload finished. */
static void test_job_owner_is_controller_reference(void **state)
{
	struct t *t = *state;
	char err[256], path[600];
	seed_queue(t, "4", NULL);
	json_t *j = job("j1", "1");
	json_t *wl = integration_workload_new(&integration_job, j, err, sizeof(err));
	assert_non_null(wl);
	assert_int_equal(json_array_insert_new(obj_path(wl, "metadata.ownerReferences"), 0,
					       J("{'apiVersion':'ray.io/v1','kind':'RayJob',"
						 "'name':'j1','uid':'rayjob-uid'}")),
			 0);
	json_object_set_new(json_object_get(wl, "metadata"), "uid", json_string("wl-uid"));
	json_object_set_new(json_object_get(wl, "metadata"), "creationTimestamp",
			    json_string("2026-01-01T00:00:00Z"));
	json_object_set_new(json_object_get(wl, "spec"), "priority", json_integer(0));
	seed(t, K_WORKLOAD, wl);
	seed(t, K_JOB, j);
	converge(t);
	assert_non_null(job_workload(t, "j1", path, sizeof(path)));
	assert_true(fake_cond(t, path, "Admitted"));
	assert_false(json_is_true(obj_path(fake_api_get(t->api, JOB_PATH("j1")), "spec.suspend")));
	assert_int_equal(fake_api_count(t->api, "POST", KUEUE "/namespaces/ns/workloads", 0), 0);
	complete_job(t, "j1", path);
	int told = 0;
	uint64_t deadline = uv_hrtime() + 5000 * MS;
	while (!told && uv_hrtime() < deadline) {
		uv_run(&t->loop, UV_RUN_NOWAIT);
		for (size_t i = 0; i < fake_api_nrequests(t->api); i++) {
			const struct fake_request *r = fake_api_request(t->api, i);
			told |= !strcmp(r->method, "POST") && strstr(r->path, "/events") &&
				strstr(r->body, "\"FinishedWorkload\"") &&
				strstr(r->body, "\"kind\":\"Job\"") != NULL;
		}
	}
	assert_true(told);
}

/* A Job finishes while a write to its Workload is in flight and the Workload's event arrives
 * before the write's answer: the Workload still gets Finished and its quota goes. */
static void test_job_finishes_during_workload_write(void **state)
{
	struct t *t = *state;
	char path[600];
	admitted_job(t, "4", "j1", "2", path, sizeof(path));
	assert_int_equal(cq_cpu_usage(t), 2000);
	/* The Job runs: its ready count triggers a PodsReady write to the Workload... */
	json_t *running = json_deep_copy(fake_api_get(t->api, JOB_PATH("j1")));
	json_object_set_new(running, "status", J("{'active':1,'ready':1}"));
	seed(t, K_JOB, running);
	run_until_sent(t);
	assert_true(writer_busy(&t->m, K_WORKLOAD, key_of(path)));
	/* ... and before it is answered, the Job completes. */
	complete_job(t, "j1", path);
	assert_int_equal(cq_cpu_usage(t), 0);
}

/* Preemption, step by step: Evicted and Preempted on the victim, its Job suspended, its
 * start time cleared, its template restored, then the admission cleared, which frees the
 * quota for the preemptor. */
static void test_eviction_sequence(void **state)
{
	struct t *t = *state;
	char low[600], high[600];
	admitted_job(t, "2", "low", "2", low, sizeof(low));
	/* The low Job is running. */
	json_t *running = json_deep_copy(fake_api_get(t->api, JOB_PATH("low")));
	json_object_set_new(running, "status",
			    J("{'active':1,'startTime':'2026-01-01T00:00:00Z'}"));
	seed(t, K_JOB, running);
	converge(t);
	/* A higher-priority Workload arrives. */
	json_t *hw = workload("high", "2", 100, "2026-01-01T00:00:05Z");
	seed(t, K_WORKLOAD, hw);
	converge(t);
	assert_true(fake_cond(t, low, "Evicted"));
	assert_true(fake_cond(t, low, "Preempted"));
	json_t *lj = fake_api_get(t->api, JOB_PATH("low"));
	assert_true(json_is_true(obj_path(lj, "spec.suspend")));
	assert_null(obj_path(lj, "status.startTime"));
	/* Pods are still active: the quota is kept. */
	assert_true(fake_cond(t, low, "QuotaReserved"));
	assert_false(fake_cond(t, WL_PATH("high"), "QuotaReserved"));
	/* The pods go. */
	json_t *stopped = json_deep_copy(lj);
	json_object_set_new(stopped, "status", J("{'active':0}"));
	seed(t, K_JOB, stopped);
	converge(t);
	assert_false(fake_cond(t, low, "QuotaReserved"));
	assert_true(fake_cond(t, low, "Requeued"));
	snprintf(high, sizeof(high), WL_PATH("high"));
	assert_true(fake_cond(t, high, "QuotaReserved"));
	assert_null(engine_admission(t->m.engine, key_of(low)));
	assert_non_null(engine_admission(t->m.engine, "ns/high"));
	/* Counted once each, when the writes landed: the eviction for the victim's queue, the
	 * preemption for the preemptor's, and two admissions. */
	assert_true(metric(t, "kueue_evicted_workloads_total{cluster_queue=\"cq\",reason="
			      "\"Preempted\"," ROLE "}") == 1);
	assert_true(metric(t, "kueue_preempted_workloads_total{preempting_cluster_queue=\"cq\","
			      "reason=\"InClusterQueue\"," ROLE "}") == 1);
	assert_true(metric(t, "kueue_admitted_workloads_total{cluster_queue=\"cq\"," ROLE "}") ==
		    2);
}

/* An admission is counted when its write lands, not when it is sent: a 409 counts nothing, the
 * retry that lands counts one. Pending counts are the ones the ClusterQueue's status shows,
 * and the apiserver calls are counted per verb, resource and code. */
static void test_metrics_follow_landed_writes(void **state)
{
	struct t *t = *state;
	const char *admitted = "kueue_admitted_workloads_total{cluster_queue=\"cq\"," ROLE "}";
	seed_queue(t, "2", NULL);
	assert_true(metric(t, "muster_build_info{version=\"" MUSTER_VERSION "\",git=\"" MUSTER_GIT
			      "\"}") == 1);
	assert_true(metric(t, "muster_leader") == 1); /* standalone */
	fake_api_fail(t->api, "PATCH", WL_PATH("w1") "/status", 409, 1);
	seed(t, K_WORKLOAD, workload("w1", "2", 0, "2026-01-01T00:00:00Z"));
	seed(t, K_WORKLOAD, workload("w2", "2", 0, "2026-01-01T00:00:01Z"));
	settle(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w1"), 409), 1);
	assert_true(metric(t, admitted) == -1);
	assert_true(metric(t, "muster_apiserver_requests_total{verb=\"patch\",resource=\"workloads/"
			      "status\","
			      "code=\"409\"," ROLE "}") >= 1);
	advance(t, 1000);
	converge(t);
	advance(t, 3000); /* the queue status interval */
	converge(t);
	assert_true(metric(t, admitted) == 1);
	assert_true(metric(t, "kueue_quota_reserved_workloads_total{cluster_queue=\"cq\"," ROLE
			      "}") == 1);
	assert_true(metric(t, "kueue_admission_wait_time_seconds_count{cluster_queue=\"cq\"," ROLE
			      "}") == 1);
	assert_true(metric(t, "kueue_admission_attempts_total{result=\"success\"," ROLE "}") >= 1);
	assert_true(metric(t, "kueue_reserving_active_workloads{cluster_queue=\"cq\"," ROLE "}") ==
		    1);
	assert_true(metric(t,
			   "kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"active\"," ROLE
			   "}") == 1);
	assert_true(
		metric(t, "kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"pending\"," ROLE
			  "}") == 0);
	/* One waits for quota: the metric and the written status agree. */
	json_int_t status_pending =
		json_integer_value(obj_path(fake_api_get(t->api, KUEUE "/clusterqueues/cq"),
					    "status.pendingWorkloads"));
	assert_int_equal(status_pending, 1);
	double active =
		metric(t,
		       "kueue_pending_workloads{cluster_queue=\"cq\",status=\"active\"," ROLE "}");
	double inadmissible =
		metric(t,
		       "kueue_pending_workloads{cluster_queue=\"cq\",status=\"inadmissible\"," ROLE
		       "}");
	assert_true(active >= 0 && inadmissible >= 0);
	assert_true(active + inadmissible == (double)status_pending);
	/* Resource series are off by default, as in Kueue. */
	assert_true(metric(t, "kueue_cluster_queue_nominal_quota{cohort=\"\",cluster_queue=\"cq\","
			      "flavor=\"default\",resource=\"cpu\"," ROLE "}") == -1);
	next_in_line_for_a_while(t); /* the waiting one says why */
	assert_true(metric(t, "muster_apiserver_requests_total{verb=\"patch\",resource=\"workloads/"
			      "status\","
			      "code=\"200\"," ROLE "}") >= 2);
}

static void on_fired(uv_timer_t *timer)
{
	*(int *)timer->data = 1;
}

/* Every loop turn is timed: after a few turns the histogram has counted them, none took 10 s,
 * the longest is at most their total, and the time the loop spent blocked is not counted. */
static void test_metrics_time_loop_turns(void **state)
{
	struct t *t = *state;
	const char *count = "muster_loop_turn_duration_seconds_count{" ROLE "}";
	seed_queue(t, "2", NULL);
	seed(t, K_WORKLOAD, workload("w1", "2", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	for (int i = 0; i < 3; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	double turns = metric(t, count);
	double sum = metric(t, "muster_loop_turn_duration_seconds_sum{" ROLE "}");
	double max = metric(t, "muster_loop_turn_max_seconds{" ROLE "}");
	assert_true(turns >= 3);
	assert_true(metric(t, "muster_loop_turn_duration_seconds_bucket{" ROLE ",le=\"10\"}") ==
		    turns);
	assert_true(metric(t, "muster_loop_turn_duration_seconds_bucket{" ROLE ",le=\"+Inf\"}") ==
		    turns);
	assert_true(max >= 0 && max < 10 && max <= sum + 1e-9);
	/* Beside them, from the start: no lease lapse (kube/lease_thread.h counts them). */
	assert_true(metric(t, "muster_lease_lapses_total{" ROLE "}") == 0);
	uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_true(metric(t, count) > turns);
	/* Waiting is not work: a loop blocked 400 ms on a timer adds almost nothing. */
	uv_timer_t timer;
	int fired = 0;
	uv_timer_init(&t->loop, &timer);
	timer.data = &fired;
	uv_timer_start(&timer, on_fired, 400, 0);
	uint64_t t0 = uv_hrtime();
	while (!fired)
		uv_run(&t->loop, UV_RUN_ONCE);
	uv_run(&t->loop, UV_RUN_NOWAIT); /* the prepare after the timer's turn */
	double waited = (double)(uv_hrtime() - t0) / 1e9;
	double added = metric(t, "muster_loop_turn_duration_seconds_sum{" ROLE "}") - sum;
	assert_true(waited >= 0.3 && added < waited / 2); /* timers round to the ms */
	uv_close((uv_handle_t *)&timer, NULL);
	uv_run(&t->loop, UV_RUN_NOWAIT);
}

static void enable_cq_resources(struct muster_config *c)
{
	c->metrics_cq_resources = 1;
}

static int setup_cq_resources(void **state)
{
	return setup_with(state, enable_cq_resources);
}

/* With enableClusterQueueResources, quota and usage per flavor and resource; a deleted
 * ClusterQueue's series all go. */
static void test_metrics_cq_resources_and_deletion(void **state)
{
	struct t *t = *state;
	const char *usage = "kueue_cluster_queue_resource_usage{cohort=\"\",cluster_queue=\"cq\","
			    "flavor=\"default\",resource=\"cpu\"," ROLE "}";
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("w1", "1500m", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	assert_true(metric(t, usage) == 1.5);
	assert_true(metric(t, "kueue_cluster_queue_nominal_quota{cohort=\"\",cluster_queue=\"cq\","
			      "flavor=\"default\",resource=\"cpu\"," ROLE "}") == 4);
	assert_true(isinf(
		metric(t, "kueue_cluster_queue_borrowing_limit{cohort=\"\",cluster_queue=\"cq\","
			  "flavor=\"default\",resource=\"cpu\"," ROLE "}")));
	assert_true(metric(t, "kueue_admitted_workloads_total{cluster_queue=\"cq\"," ROLE "}") ==
		    1);
	/* The ClusterQueue is deleted. */
	json_t *old = json_incref(json_object_get(t->stores[K_CQ], "cq"));
	json_object_del(t->stores[K_CQ], "cq");
	ingest_event(&t->m, K_CQ, WATCH_DELETED, "cq", old, NULL);
	json_decref(old);
	settle(t);
	assert_true(metric(t, usage) == -1);
	assert_true(metric(t, "kueue_admitted_workloads_total{cluster_queue=\"cq\"," ROLE "}") ==
		    -1);
	assert_true(metric(t, "kueue_pending_workloads{cluster_queue=\"cq\",status=\"active\"," ROLE
			      "}") == -1);
	assert_true(metric(t,
			   "kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"active\"," ROLE
			   "}") == -1);
}

/* A ClusterQueue update that changes only its status (our own write, coming back) is not
 * applied again: no LocalQueue is looked at, no cycle is wanted; its status is. One that
 * changes the spec is applied: the new quota counts. */
static void test_cq_status_update_is_not_applied(void **state)
{
	struct t *t = *state;
	const char *quota = "kueue_cluster_queue_nominal_quota{cohort=\"\",cluster_queue=\"cq\","
			    "flavor=\"default\",resource=\"cpu\"," ROLE "}";
	seed_queue(t, "4", NULL);
	converge(t);
	json_t *old = json_incref(json_object_get(t->stores[K_CQ], "cq"));
	json_t *obj = json_deep_copy(old);
	json_object_set_new(obj, "status", json_pack("{s:i}", "pendingWorkloads", 3));
	json_object_set(t->stores[K_CQ], "cq", obj);
	t->m.admission_needed = 0;
	ingest_event(&t->m, K_CQ, WATCH_MODIFIED, "cq", old, obj);
	assert_false(keyset_has(&t->m.dirty[K_LQ], "ns/lq"));
	assert_true(keyset_has(&t->m.dirty[K_CQ], "cq"));
	assert_false(t->m.admission_needed);
	json_decref(old);
	old = obj;
	obj = json_deep_copy(old);
	json_t *group = json_array_get(obj_path(obj, "spec.resourceGroups"), 0);
	json_t *flavor = json_array_get(json_object_get(group, "flavors"), 0);
	json_t *cpu = json_array_get(json_object_get(flavor, "resources"), 0);
	json_object_set_new(cpu, "nominalQuota", json_string("8"));
	json_object_set(t->stores[K_CQ], "cq", obj);
	ingest_event(&t->m, K_CQ, WATCH_MODIFIED, "cq", old, obj);
	assert_true(keyset_has(&t->m.dirty[K_LQ], "ns/lq"));
	assert_true(t->m.admission_needed);
	json_decref(old);
	json_decref(obj);
	settle(t);
	assert_true(metric(t, quota) == 8);
}

/* A restart rebuilds usage from status.admission: the admitted Workload is charged, not
 * written again, and a pending one that would not fit beside it stays pending. */
static void test_restart_rebuilds_usage(void **state)
{
	struct t *t = *state;
	json_t *admitted = workload("w1", "3", 0, "2026-01-01T00:00:00Z");
	json_object_set_new(
		admitted, "status",
		J("{'admission':{'clusterQueue':'cq','podSetAssignments':[{'name':'main',"
		  "'flavors':{'cpu':'default'},'resourceUsage':{'cpu':'3'},'count':1}]},"
		  "'conditions':[{'type':'QuotaReserved','status':'True','reason':'QuotaReserved',"
		  "'message':'m','lastTransitionTime':'2026-01-01T00:00:01Z'},"
		  "{'type':'Admitted','status':'True','reason':'Admitted','message':'m',"
		  "'lastTransitionTime':'2026-01-01T00:00:01Z'}]}"));
	seed(t, K_WORKLOAD, admitted);
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("w2", "2", 0, "2026-01-01T00:00:02Z"));
	converge(t);
	assert_int_equal(cq_cpu_usage(t), 3000);
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w1"), 0), 0);
	next_in_line_for_a_while(t);
	assert_waits(t, WL_PATH("w2"));
}

/* A waiting Workload's message is not rewritten when only its shortfall changes ("2 more
 * needed" -> "3 more needed"), so quota churn doesn't become status writes. */
static void test_pending_message_not_churned(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("w1", "3", 0, "2026-01-01T00:00:00Z"));
	seed(t, K_WORKLOAD, workload("w2", "1", 0, "2026-01-01T00:00:01Z"));
	converge(t);
	seed(t, K_WORKLOAD, workload("big", "2", 0, "2026-01-01T00:00:02Z"));
	converge(t);
	next_in_line_for_a_while(t);
	json_t *c = condition_get(fake_api_get(t->api, WL_PATH("big")), "QuotaReserved");
	assert_non_null(strstr(json_string_value(json_object_get(c, "message")), "2 more needed"));
	size_t writes = fake_api_count(t->api, "PATCH", WL_PATH("big"), 0);
	/* w2 finishes: big is looked at again and is 1 short now; its message stays. */
	finish_elsewhere(t, WL_PATH("w2"));
	converge(t);
	assert_int_equal(cq_cpu_usage(t), 3000);
	assert_false(fake_cond(t, WL_PATH("big"), "QuotaReserved"));
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("big"), 0), writes);
	/* The record knows what the cached condition says, so the next report of a wait needs
	 * no parse (a debug build checks the digest against the parse anyway); any event of the
	 * Workload makes it unknown again. */
	struct wl_record *r = wl_record_get(&t->m, "ns/big");
	assert_non_null(r);
	assert_true(r->cond_known && r->cond_hash != 0 && r->cond_waits && r->cond_gen_ok);
	json_t *cached = json_incref(store_get(&t->m, K_WORKLOAD, "ns/big"));
	ingest_event(&t->m, K_WORKLOAD, WATCH_MODIFIED, "ns/big", NULL, cached);
	json_decref(cached);
	assert_false(r->cond_known);
	converge(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("big"), 0), writes);
}

/* A wait reported again, with other numbers, over a condition the record knows the cached
 * Workload says: decided from the record, unparsed (a debug build checks the record against
 * the parse), and still not written. */
static void test_pending_wait_from_record(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("w1", "2", 0, "2026-01-01T00:00:00Z"));
	seed(t, K_WORKLOAD, workload("w2", "1", 0, "2026-01-01T00:00:01Z"));
	converge(t);
	seed(t, K_WORKLOAD, workload("big", "3", 0, "2026-01-01T00:00:02Z"));
	converge(t);
	next_in_line_for_a_while(t);
	assert_waits(t, WL_PATH("big"));
	size_t writes = fake_api_count(t->api, "PATCH", WL_PATH("big"), 0);
	finish_elsewhere(t, WL_PATH("w2")); /* 1 short now: parsed, found the same */
	converge(t);
	struct wl_record *r = wl_record_get(&t->m, "ns/big");
	assert_non_null(r);
	assert_true(r->cond_known);
	/* A later, smaller Workload fits beside it: big is 2 short again, looked at again. */
	seed(t, K_WORKLOAD, workload("w4", "1", 0, "2026-01-01T00:00:03Z"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("w4"), "QuotaReserved"));
	assert_false(fake_cond(t, WL_PATH("big"), "QuotaReserved"));
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("big"), 0), writes);
	assert_true(r->cond_known);
}

/* A waiting Workload's condition whose write fails is written by the retry: the engine reports
 * a pending reason once, so the controller must remember it (at scale, 17,615 of 25,000
 * Workloads were left without one after an overloaded apiserver answered 504). */
static void test_pending_write_retried(void **state)
{
	struct t *t = *state;
	seed_queue(t, "1", NULL);
	seed(t, K_WORKLOAD, workload("w1", "1", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	fake_api_fail(t->api, "PATCH", WL_PATH("w2") "/status", 504, 1);
	seed(t, K_WORKLOAD, workload("w2", "1", 0, "2026-01-01T00:00:01Z"));
	converge(t);
	next_in_line_for_a_while(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w2"), 504), 1);
	assert_null(condition_get(fake_api_get(t->api, WL_PATH("w2")), "QuotaReserved"));
	advance(t, 5000);
	converge(t);
	assert_waits(t, WL_PATH("w2"));
}

/* A Workload short of quota gets its QuotaReserved=False only after it has been among the
 * first 5 of its ClusterQueue's order for 5 s; one admitted before then never gets it (a write
 * for nothing), and those further back say why only when they move up. A reason only a change
 * can help is written at once, wherever the Workload stands. */
static void test_new_pending_written_after_a_while(void **state)
{
	struct t *t = *state;
	char name[16];
	seed_queue(t, "1", NULL);
	seed(t, K_WORKLOAD, workload("w1", "1", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	/* w2..w8 wait behind w1, in that order; "huge" can never fit. */
	for (int i = 2; i <= 8; i++) {
		char created[32];
		snprintf(name, sizeof(name), "w%d", i);
		snprintf(created, sizeof(created), "2026-01-01T00:00:%02dZ", i);
		seed(t, K_WORKLOAD, workload(name, "1", 0, created));
	}
	seed(t, K_WORKLOAD, workload("huge", "2", 0, "2026-01-01T00:01:00Z"));
	converge(t);
	json_t *huge = condition_get(fake_api_get(t->api, WL_PATH("huge")), "QuotaReserved");
	assert_string_equal(json_string_value(json_object_get(huge, "reason")), "ExceedsMaxQuota");
	assert_null(condition_get(fake_api_get(t->api, WL_PATH("w2")), "QuotaReserved"));
	/* w1 finishes within the 5 s: w2 is admitted and never said it waited. */
	advance(t, 2000);
	finish_elsewhere(t, WL_PATH("w1"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("w2"), "QuotaReserved"));
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w2"), 0), 1);
	/* The next five (w3..w7) say why once they have been in front for 5 s; w8 doesn't. */
	next_in_line_for_a_while(t);
	for (int i = 3; i <= 7; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		char path[256];
		snprintf(path, sizeof(path), WL_PATH("%s"), name);
		assert_waits(t, path);
	}
	assert_null(condition_get(fake_api_get(t->api, WL_PATH("w8")), "QuotaReserved"));
	assert_int_equal(fake_api_count(t->api, "PATCH", WL_PATH("w8"), 0), 0);
	/* w2 finishes, w3 is admitted: w8 moves up, and says why 5 s later. */
	finish_elsewhere(t, WL_PATH("w2"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("w3"), "QuotaReserved"));
	assert_null(condition_get(fake_api_get(t->api, WL_PATH("w8")), "QuotaReserved"));
	next_in_line_for_a_while(t);
	assert_waits(t, WL_PATH("w8"));
}

/* A Workload left half-written (status.admission set, QuotaReserved not True), as Kueue's perf
 * runner leaves one with server-side apply: muster clears the admission, counts it pending,
 * and admits it again. */
static void test_stale_admission_repaired(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	json_t *w = workload("w1", "2", 0, "2026-01-01T00:00:00Z");
	json_object_set_new(
		w, "status",
		J("{'admission':{'clusterQueue':'cq','podSetAssignments':[{'name':'main',"
		  "'flavors':{'cpu':'default'},'resourceUsage':{'cpu':'2'},'count':1}]},"
		  "'conditions':[{'type':'QuotaReserved','status':'False','reason':'Pending',"
		  "'message':'m','lastTransitionTime':'2026-01-01T00:00:01Z'}]}"));
	seed(t, K_WORKLOAD, w);
	settle(t);
	size_t pending = 0, admitted = 0;
	engine_cq_counts(t->m.engine, "cq", &pending, &admitted);
	assert_int_equal(admitted, 0);
	converge(t);
	assert_true(fake_cond(t, WL_PATH("w1"), "QuotaReserved"));
	assert_int_equal(cq_cpu_usage(t), 2000);
}

/* A Cohort that names itself as parent is a cycle: its ClusterQueue is inactive and admits
 * nothing, as for a cycle of two. */
static void test_cohort_self_parent(void **state)
{
	struct t *t = *state;
	seed(t, K_COHORT, J("{'metadata':{'name':'loop'},'spec':{'parentName':'loop'}}"));
	seed_queue(t, "4", "loop");
	seed(t, K_WORKLOAD, workload("w1", "1", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	advance(t, 3000); /* the queue status interval */
	converge(t);
	assert_false(fake_cond(t, WL_PATH("w1"), "QuotaReserved"));
	json_t *active = condition_get(fake_api_get(t->api, KUEUE "/clusterqueues/cq"), "Active");
	assert_non_null(active);
	assert_string_equal(json_string_value(json_object_get(active, "status")), "False");
	assert_string_equal(json_string_value(json_object_get(active, "reason")), "CohortCycle");
}

/* An object muster can't use is not only logged: it gets a Warning Event saying why. */
static void test_refused_objects_get_events(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	seed(t, K_LQ,
	     J("{'metadata':{'namespace':'ns','name':'broken','uid':'lq-uid'},'spec':{}}"));
	seed(t, K_COHORT,
	     J("{'metadata':{'name':'c1','uid':'co-uid'},'spec':{'resourceGroups':[{"
	       "'coveredResources':['cpu'],'flavors':[{'name':'default','resources':[{'name':'cpu',"
	       "'nominalQuota':'12x'}]}]}]}}"));
	converge(t);
	assert_int_equal(fake_api_count(t->api, "POST",
					"/apis/events.k8s.io/v1/namespaces/ns/events", 201),
			 1);
	assert_int_equal(fake_api_count(t->api, "POST",
					"/apis/events.k8s.io/v1/namespaces/default/events", 201),
			 1);
	int found = 0;
	for (size_t i = 0; i < fake_api_nrequests(t->api); i++) {
		const struct fake_request *r = fake_api_request(t->api, i);
		if (!strcmp(r->method, "POST") && strstr(r->path, "/events")) {
			found += strstr(r->body, "\"LocalQueueNotUsable\"") &&
				 strstr(r->body, "spec.clusterQueue");
			found += strstr(r->body, "\"CohortNotUsable\"") && strstr(r->body, "12x");
		}
	}
	/* A Node placement can't model (more GPUs than it tracks) is refused, and says why. */
	seed(t, K_NODE,
	     J("{'metadata':{'name':'huge','uid':'node-uid'},'status':{'allocatable':"
	       "{'cpu':'64','nvidia.com/"
	       "gpu':'5000'},'conditions':[{'type':'Ready','status':'True'}]}}"));
	converge(t);
	assert_non_null(placement_node_refusal(t->m.placement, "huge"));
	for (size_t i = 0; i < fake_api_nrequests(t->api); i++) {
		const struct fake_request *r = fake_api_request(t->api, i);
		if (!strcmp(r->method, "POST") && strstr(r->path, "/events"))
			found += strstr(r->body, "\"NodeNotUsable\"") && strstr(r->body, "huge") &&
				 strstr(r->body, "\"kind\":\"Node\"");
	}
	assert_int_equal(found, 3);
	/* Once per object and reason, however often it is seen. */
	seed(t, K_LQ,
	     J("{'metadata':{'namespace':'ns','name':'broken','uid':'lq-uid'},'spec':{}}"));
	converge(t);
	assert_int_equal(fake_api_count(t->api, "POST",
					"/apis/events.k8s.io/v1/namespaces/ns/events", 0),
			 1);
}

/* A Node goes straight into placement's model, and its store keeps a stub: the model is where
 * its labels are read, heartbeats change nothing, a change of what placement keeps is news, a
 * refusal is said once however often the Node is seen, and a deletion takes it out. */
#define NODE_N1                                                                                 \
	"{'metadata':{'name':'n1','uid':'n1-uid','labels':{'kubernetes.io/hostname':'n1-host'," \
	"'zone':'%s'}},'status':{'allocatable':{'cpu':'8','pods':'110'},'conditions':[{'type':" \
	"'Ready','status':'True','lastHeartbeatTime':'%s'}]}}"
#define NODE_HUGE                                                                           \
	"{'metadata':{'name':'huge','uid':'huge-uid'},'status':{'allocatable':{'cpu':'64'," \
	"'nvidia.com/gpu':'5000'},'conditions':[{'type':'Ready','status':'True',"           \
	"'lastHeartbeatTime':'%s'}]}}"
static void test_node_model_is_placement(void **state)
{
	struct t *t = *state;
	seed(t, K_NODE, J(NODE_N1, "a", "t1"));
	assert_true(t->m.capacity_changed);
	converge(t);
	json_t *stub = json_object_get(t->stores[K_NODE], "n1");
	assert_true(json_is_integer(stub)); /* its resourceVersion */
	assert_int_equal(json_integer_value(stub),
			 atoll(obj_str(fake_api_get(t->api, "/api/v1/nodes/n1"),
				       "metadata.resourceVersion")));
	assert_string_equal(placement_node_label(t->m.placement, "n1", "zone"), "a");
	assert_string_equal(placement_node_label(t->m.placement, "n1", LABEL_HOSTNAME), "n1-host");
	/* A heartbeat: nothing placement keeps, so no capacity news. */
	seed(t, K_NODE, J(NODE_N1, "a", "t2"));
	assert_false(t->m.capacity_changed);
	/* A label placement keeps: the model follows. */
	seed(t, K_NODE, J(NODE_N1, "b", "t3"));
	assert_true(t->m.capacity_changed);
	assert_string_equal(placement_node_label(t->m.placement, "n1", "zone"), "b");
	converge(t);
	/* Refused once, and not again for a heartbeat. */
	seed(t, K_NODE, J(NODE_HUGE, "t1"));
	assert_true(t->m.capacity_changed);
	assert_non_null(placement_node_refusal(t->m.placement, "huge"));
	converge(t);
	seed(t, K_NODE, J(NODE_HUGE, "t2"));
	assert_false(t->m.capacity_changed);
	converge(t);
	/* Deleted: out of the model. */
	json_t *old = json_incref(json_object_get(t->stores[K_NODE], "n1"));
	json_object_del(t->stores[K_NODE], "n1");
	ingest_event(&t->m, K_NODE, WATCH_DELETED, "n1", old, old);
	json_decref(old);
	assert_null(placement_node_label(t->m.placement, "n1", "zone"));
}
#undef NODE_N1
#undef NODE_HUGE

/* Events are not writes (converge doesn't wait for them): runs the loop until n POSTs to path
 * were answered 201 (or 10 s), and then 200 ms more, for any beyond n to show. */
static void await_posts(struct t *t, const char *path, size_t n)
{
	uint64_t deadline = uv_hrtime() + 10000000000ULL;
	while (fake_api_count(t->api, "POST", path, 201) < n && uv_hrtime() < deadline)
		uv_run(&t->loop, UV_RUN_ONCE);
	deadline = uv_hrtime() + 200000000ULL;
	while (uv_hrtime() < deadline)
		uv_run(&t->loop, UV_RUN_NOWAIT);
}

/* A Job's lifecycle Events: CreatedWorkload, and Started once released, although the cache may
 * not show the admission yet when the release lands. */
static void test_job_events(void **state)
{
	struct t *t = *state;
	char path[600];
	const char *events = "/apis/events.k8s.io/v1/namespaces/ns/events";
	admitted_job(t, "4", "j1", "1", path, sizeof(path));
	int created = 0, started = 0;
	uint64_t deadline = uv_hrtime() + 5000000000ULL;
	while ((!created || !started) && uv_hrtime() < deadline) {
		uv_run(&t->loop, UV_RUN_ONCE);
		created = started = 0;
		for (size_t i = 0; i < fake_api_nrequests(t->api); i++) {
			const struct fake_request *r = fake_api_request(t->api, i);
			if (strcmp(r->method, "POST") || strcmp(r->path, events) ||
			    r->status != 201)
				continue;
			created |= strstr(r->body, "\"CreatedWorkload\"") &&
				   strstr(r->body, "\"Job\"");
			started |= strstr(r->body, "\"Started\"") &&
				   strstr(r->body, "Admitted by clusterQueue cq") != NULL;
		}
	}
	assert_true(created);
	assert_true(started);
}

/* An Event about Workload ns/name (uid = name). The Workload is in the cache, as any Workload
 * muster records an Event about (its record must not outlive it), though no event told the
 * controller: nothing else happens to it. */
static void event_about(struct t *t, const char *name, enum event_class cls, const char *reason,
			const char *message)
{
	char key[128];
	json_t *wl = json_pack("{s:{s:s, s:s, s:s}}", "metadata", "namespace", "ns", "name", name,
			       "uid", name);
	snprintf(key, sizeof(key), "ns/%s", name);
	json_object_set(t->stores[K_WORKLOAD], key, wl);
	writer_event(&t->m, K_WORKLOAD, wl, cls, reason, message);
	json_decref(wl);
}

/* Events are events.k8s.io/v1 objects, held to a rate: a burst past EVENT_BURST is dropped and
 * counted, and the bucket refills at EVENT_QPS; routine news has its own, smaller bucket. */
static void test_events_shape_and_rate_limit(void **state)
{
	struct t *t = *state;
	char name[64];
	struct writer_stats st;
	for (int i = 0; i < EVENT_BURST + 50; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		event_about(t, name, EVENT_WARNING, "WaitingForQuota", "2 more needed");
	}
	const char *path = "/apis/events.k8s.io/v1/namespaces/ns/events";
	await_posts(t, path, EVENT_BURST);
	assert_int_equal(fake_api_count(t->api, "POST", path, 201), EVENT_BURST);
	writer_get_stats(&t->m, &st);
	assert_int_equal(st.events_sent, EVENT_BURST);
	assert_int_equal(st.events_dropped, 50);
	/* One of them, whole. */
	json_t *ev = NULL;
	for (size_t i = 0; i < fake_api_nrequests(t->api) && !ev; i++) {
		const struct fake_request *r = fake_api_request(t->api, i);
		if (!strcmp(r->method, "POST") && !strcmp(r->path, path))
			ev = json_loads(r->body, 0, NULL);
	}
	assert_non_null(ev);
	assert_string_equal(obj_str(ev, "apiVersion"), "events.k8s.io/v1");
	assert_string_equal(obj_str(ev, "reason"), "WaitingForQuota");
	assert_string_equal(obj_str(ev, "type"), "Warning");
	assert_string_equal(obj_str(ev, "note"), "2 more needed");
	assert_string_equal(obj_str(ev, "regarding.kind"), "Workload");
	assert_string_equal(obj_str(ev, "regarding.apiVersion"), "kueue.x-k8s.io/v1beta2");
	assert_string_equal(obj_str(ev, "regarding.name"), "w0");
	assert_string_equal(obj_str(ev, "reportingController"), EVENT_CONTROLLER);
	assert_non_null(obj_str(ev, "reportingInstance"));
	assert_int_equal(strlen(obj_str(ev, "eventTime")), strlen("2026-01-01T00:00:00.000000Z"));
	assert_non_null(strstr(obj_str(ev, "metadata.name"), "w0."));
	json_decref(ev);
	/* The same Event again is not sent twice; a second later, EVENT_QPS more go. */
	event_about(t, "w0", EVENT_WARNING, "WaitingForQuota", "2 more needed");
	advance(t, 1000);
	for (int i = 0; i < EVENT_QPS + 10; i++) {
		snprintf(name, sizeof(name), "later%d", i);
		event_about(t, name, EVENT_NOTABLE, "Admitted", "Admitted by ClusterQueue cq");
	}
	await_posts(t, path, EVENT_BURST + EVENT_QPS);
	assert_int_equal(fake_api_count(t->api, "POST", path, 201), EVENT_BURST + EVENT_QPS);
	writer_get_stats(&t->m, &st);
	assert_int_equal(st.events_dropped, 60);
	/* Routine news has a budget of its own: spent by its own burst, not by the others'. */
	for (int i = 0; i < EVENT_ROUTINE_BURST + 10; i++) {
		snprintf(name, sizeof(name), "routine%d", i);
		event_about(t, name, EVENT_ROUTINE, "QuotaReserved",
			    "Quota reserved in ClusterQueue cq");
	}
	await_posts(t, path, EVENT_BURST + EVENT_QPS + EVENT_ROUTINE_BURST);
	assert_int_equal(fake_api_count(t->api, "POST", path, 201),
			 EVENT_BURST + EVENT_QPS + EVENT_ROUTINE_BURST);
	writer_get_stats(&t->m, &st);
	assert_int_equal(st.events_dropped, 70);
}

/* With cycles batched (ADMISSION_CYCLE_MS), a burst of Workloads is still all admitted, by a
 * cycle the timer brings, not one per event. */
static void test_cycles_batched(void **state)
{
	struct t *t = *state;
	t->m.cycle_ms = ADMISSION_CYCLE_MS;
	seed_queue(t, "100", NULL);
	converge(t);
	for (int i = 0; i < 10; i++) {
		char name[16];
		snprintf(name, sizeof(name), "b%d", i);
		seed(t, K_WORKLOAD, workload(name, "1", 0, "2026-01-01T00:00:00Z"));
	}
	converge(t);
	for (int i = 0; i < 10; i++) {
		char path[256];
		snprintf(path, sizeof(path), WL_PATH("b%d"), i);
		assert_true(fake_cond(t, path, "QuotaReserved"));
	}
	assert_int_equal(cq_cpu_usage(t), 10000);
}

/* Seeds Workloads first..last-1 of 1 cpu ("p<i>"): their keys are dirty, none reconciled. */
static void seed_many(struct t *t, int first, int last)
{
	for (int i = first; i < last; i++) {
		char name[16];
		snprintf(name, sizeof(name), "p%d", i);
		seed(t, K_WORKLOAD, workload(name, "1", 0, "2026-01-01T00:00:00Z"));
	}
}

/* A pass stops when its budget is spent and leaves the rest dirty; the idle pump drains them
 * over later turns. No cycle runs while the batch is half drained, then it runs. */
static void test_pump_yields_and_cycle_waits_for_batch(void **state)
{
	struct t *t = *state;
	seed_queue(t, "1000", NULL);
	converge(t);
	t->m.pump_budget_ns = 1; /* spent at the first look: PUMP_CHECK_EVERY keys a pass */
	seed_many(t, 0, 100);
	assert_int_equal(state_pending(&t->m, K_WORKLOAD), 100);
	uv_run(&t->loop, UV_RUN_NOWAIT); /* one turn, one pass */
	size_t left = state_pending(&t->m, K_WORKLOAD);
	assert_true(left > 0 && left < 100);
	assert_int_equal(left, 100 - PUMP_CHECK_EVERY);
	assert_true(uv_is_active((uv_handle_t *)&t->m.pump)); /* it comes back next turn */
	int passes = 1;
	while (state_pending(&t->m, K_WORKLOAD) > 0) {
		assert_int_equal(cq_cpu_usage(t), 0); /* no cycle over half of the batch */
		mgr_pump_once(&t->m);
		passes++;
	}
	assert_true(passes >= 100 / PUMP_CHECK_EVERY);
	assert_true(cq_cpu_usage(t) > 0); /* the pass that drained the batch ran the cycle */
	converge(t);
	assert_int_equal(cq_cpu_usage(t), 100000);
}

/* A steady trickle of new Workloads, as many a pass as a pass reconciles, never lets the dirty
 * set empty; the cycle still runs once the batch it waited for is drained. */
static void test_cycle_not_starved_by_trickle(void **state)
{
	struct t *t = *state;
	seed_queue(t, "1000", NULL);
	converge(t);
	t->m.pump_budget_ns = 1;
	seed_many(t, 0, 40);
	int next = 40, passes = 0;
	while (cq_cpu_usage(t) == 0 && passes < 40) {
		mgr_pump_once(&t->m);
		seed_many(t, next, next + PUMP_CHECK_EVERY);
		next += PUMP_CHECK_EVERY;
		passes++;
		assert_true(state_pending(&t->m, K_WORKLOAD) > 0);
	}
	assert_true(cq_cpu_usage(t) > 0);
	assert_true(passes <= 40 / PUMP_CHECK_EVERY + 3);
	t->m.pump_budget_ns = PUMP_BUDGET_NS;
	converge(t);
	assert_int_equal(cq_cpu_usage(t), (int64_t)next * 1000);
}

/* A set that is always refilled does not starve the stages after it: the pass after one that
 * spent its budget on Workloads starts with their owners, and reaches queue status. */
static void test_pump_stages_take_turns(void **state)
{
	struct t *t = *state;
	struct writer_stats s;
	seed_queue(t, "1000", NULL);
	converge(t);
	clock_ms += 5000; /* past the queue status interval */
	t->m.pump_budget_ns = 1;
	seed_many(t, 0, 200);
	writer_get_stats(&t->m, &s);
	uint64_t sent = s.sent;
	mgr_pump_once(&t->m); /* the budget goes on Workloads, */
	writer_get_stats(&t->m, &s);
	assert_int_equal(s.sent, sent);
	assert_int_equal(t->m.pump_first, 1);
	mgr_pump_once(&t->m); /* and the next pass starts with the stages after them */
	writer_get_stats(&t->m, &s);
	assert_true(s.sent > sent); /* the LocalQueue's status */
	assert_true(state_pending(&t->m, K_WORKLOAD) > 150);
	t->m.pump_budget_ns = PUMP_BUDGET_NS;
	converge(t);
}

/* Queue status is kept without scans and written coalesced: many admissions in a burst cost
 * one LocalQueue write now and at most one more when the interval ends. */
static void test_queue_status_coalesced(void **state)
{
	struct t *t = *state;
	seed_queue(t, "100", NULL);
	converge(t);
	size_t before =
		fake_api_count(t->api, "PATCH", KUEUE "/namespaces/ns/localqueues/lq/status", 0);
	for (int i = 0; i < 20; i++) {
		char name[16];
		snprintf(name, sizeof(name), "w%d", i);
		seed(t, K_WORKLOAD, workload(name, "1", 0, "2026-01-01T00:00:00Z"));
	}
	converge(t);
	advance(t, 2500);
	converge(t);
	size_t writes =
		fake_api_count(t->api, "PATCH", KUEUE "/namespaces/ns/localqueues/lq/status", 0) -
		before;
	assert_true(writes >= 1 && writes <= 2);
	json_t *st =
		obj_path(fake_api_get(t->api, KUEUE "/namespaces/ns/localqueues/lq"), "status");
	assert_int_equal(json_integer_value(json_object_get(st, "admittedWorkloads")), 20);
	assert_int_equal(json_integer_value(json_object_get(st, "pendingWorkloads")), 0);
	json_t *usage = json_array_get(json_object_get(st, "flavorsUsage"), 0);
	assert_string_equal(json_string_value(json_object_get(usage, "name")), "default");
	assert_string_equal(json_string_value(
				    obj_path(json_array_get(json_object_get(usage, "resources"), 0),
					     "total")),
			    "20");
}

/* A queue status that changes while its write is in flight, the write then losing with a 409:
 * the conflict's retry replaces the queue's one deadline, and the change must still be written
 * when the interval ends (a large-scale side-by-side run left a ClusterQueue and its
 * LocalQueue saying reservingWorkloads 2 for good, and Kueue's runner waiting on them). The
 * change here is the LocalQueue's own stopPolicy, so no ClusterQueue write brings it back. */
static void test_queue_status_change_during_conflicted_write(void **state)
{
	struct t *t = *state;
	const char *lq = KUEUE "/namespaces/ns/localqueues/lq";
	seed_queue(t, "100", NULL);
	converge(t);
	seed(t, K_WORKLOAD, workload("w0", "1", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	advance(t, 2500);
	converge(t);
	advance(t, 2500); /* the LocalQueue's next write goes out at once */
	fake_api_fail(t->api, "PATCH", lq, 409, 1);
	seed(t, K_WORKLOAD, workload("w1", "1", 0, "2026-01-01T00:00:01Z"));
	uint64_t deadline = uv_hrtime() + 3000 * MS;
	while (!writer_busy(&t->m, K_LQ, "ns/lq") && uv_hrtime() < deadline)
		uv_run(&t->loop, UV_RUN_NOWAIT);
	assert_true(writer_busy(&t->m, K_LQ, "ns/lq"));
	seed(t, K_LQ,
	     J("{'metadata':{'namespace':'ns','name':'lq'},'spec':{'clusterQueue':'cq',"
	       "'stopPolicy':'Hold'}}"));
	settle(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", lq, 409), 1);
	converge(t);
	for (int i = 0; i < 3; i++) {
		advance(t, 1000);
		converge(t);
	}
	json_t *active = condition_get(fake_api_get(t->api, lq), "Active");
	assert_non_null(active);
	assert_string_equal(json_string_value(json_object_get(active, "reason")), "Stopped");
}

/* Two status writes to one queue while the watch has not brought the first back: the second
 * is guarded by the version the first answered with, not by the cache's, which would only lose
 * to our own write (a large-scale side-by-side run met about a thousand such 409s). */
static void test_queue_status_write_guarded_by_own_last_write(void **state)
{
	struct t *t = *state;
	const char *lq = KUEUE "/namespaces/ns/localqueues/lq/status";
	seed_queue(t, "100", NULL);
	converge(t);
	advance(t, 2500);
	size_t before = fake_api_count(t->api, "PATCH", lq, 0);
	seed(t, K_WORKLOAD, workload("w0", "1", 0, "2026-01-01T00:00:00Z"));
	settle(t); /* written; its watch event not delivered */
	assert_int_equal(fake_api_count(t->api, "PATCH", lq, 0), before + 1);
	advance(t, 2500);
	seed(t, K_WORKLOAD, workload("w1", "1", 0, "2026-01-01T00:00:01Z"));
	settle(t);
	for (int i = 0; i < 3; i++) {
		advance(t, 1000);
		settle(t);
	}
	assert_true(fake_api_count(t->api, "PATCH", lq, 0) >= before + 2);
	assert_int_equal(fake_api_count(t->api, "PATCH", lq, 409), 0);
	json_t *st =
		obj_path(fake_api_get(t->api, KUEUE "/namespaces/ns/localqueues/lq"), "status");
	assert_int_equal(json_integer_value(json_object_get(st, "admittedWorkloads")), 2);
	converge(t); /* the cache catches up: nothing more to write */
	size_t settled = fake_api_count(t->api, "PATCH", lq, 0);
	advance(t, 2500);
	converge(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", lq, 0), settled);
}

static void pods_ready_fast(struct muster_config *c)
{
	c->wait_for_pods_ready = 1;
	c->pods_ready_timeout_ms = 10000;
	c->recovery_timeout_ms = 10000;
	c->backoff_base_s = 5;
	c->backoff_max_s = 60;
	c->has_backoff_limit = 1;
	c->backoff_limit_count = 1;
}

static int setup_pods_ready(void **state)
{
	return setup_with(state, pods_ready_fast);
}

/* Pods that don't get ready in time: the Workload is evicted with requeueState (count 1, a
 * requeueAt after the backoff), waits out the backoff outside the queue, is admitted again,
 * and after a second timeout is deactivated (backoffLimitCount 1). */
static void test_requeue_backoff_and_deactivation(void **state)
{
	struct t *t = *state;
	char path[600];
	admitted_job(t, "4", "j1", "1", path, sizeof(path));
	advance(t, 11000);
	converge(t);
	json_t *wl = fake_api_get(t->api, path);
	assert_true(condition_true(wl, "Evicted"));
	json_t *ev = condition_get(wl, "Evicted");
	assert_string_equal(json_string_value(json_object_get(ev, "reason")), "PodsReadyTimeout");
	assert_int_equal(json_integer_value(obj_path(wl, "status.requeueState.count")), 1);
	assert_non_null(obj_path(wl, "status.requeueState.requeueAt"));
	/* No pod is active: the quota is released, and the Workload waits out its backoff. */
	assert_false(fake_cond(t, path, "QuotaReserved"));
	assert_int_equal(cq_cpu_usage(t), 0);
	advance(t, 1000);
	converge(t);
	assert_false(fake_cond(t, path, "QuotaReserved"));
	advance(t, 6000); /* base 5 s + at most 10 % jitter */
	converge(t);
	assert_true(fake_cond(t, path, "QuotaReserved"));
	/* Second timeout: the limit is used up, so the Workload is deactivated. */
	advance(t, 11000);
	converge(t);
	assert_false(json_is_true(obj_path(fake_api_get(t->api, path), "spec.active")));
	assert_true(json_is_false(obj_path(fake_api_get(t->api, path), "spec.active")));
	/* Once its quota is released it says why it waits: Deactivated, Kueue v0.20's first
	 * tier. */
	for (int i = 0; i < 20 && fake_cond(t, path, "QuotaReserved"); i++) {
		advance(t, 1000);
		converge(t);
	}
	json_t *c = condition_get(fake_api_get(t->api, path), "QuotaReserved");
	assert_string_equal(json_string_value(json_object_get(c, "status")), "False");
	assert_string_equal(json_string_value(json_object_get(c, "reason")), "Deactivated");
}

static void pods_ready_off(struct muster_config *c)
{
	c->wait_for_pods_ready = 0;
}

static int setup_pods_ready_off(void **state)
{
	return setup_with(state, pods_ready_off);
}

/* With waitForPodsReady off, as in Kueue, a running Job's Workload gets no PodsReady
 * condition: its admission is its only status write. */
static void test_pods_ready_off_writes_nothing(void **state)
{
	struct t *t = *state;
	char path[600], when[40];
	admitted_job(t, "4", "j1", "1", path, sizeof(path));
	json_t *started = json_deep_copy(fake_api_get(t->api, JOB_PATH("j1")));
	time_format_rfc3339(t->m.now_ms(), when, sizeof(when));
	json_object_set_new(started, "status",
			    json_pack("{s:s, s:i, s:i}", "startTime", when, "active", 1, "ready",
				      1));
	seed(t, K_JOB, started);
	converge(t);
	advance(t, 60000);
	converge(t);
	assert_null(condition_get(fake_api_get(t->api, path), "PodsReady"));
	assert_int_equal(fake_api_count(t->api, "PATCH", path, 0), 1);
}

/* A Job started well after its admission (its leader died in between, and the next one took
 * over a leaseDuration later) gets its whole pods-ready timeout from its start. */
static void test_pods_ready_counts_from_start(void **state)
{
	struct t *t = *state;
	char path[600], when[40];
	admitted_job(t, "4", "j1", "1", path, sizeof(path));
	advance(t, 8000);
	json_t *started = json_deep_copy(fake_api_get(t->api, JOB_PATH("j1")));
	time_format_rfc3339(t->m.now_ms(), when, sizeof(when));
	json_object_set_new(started, "status",
			    json_pack("{s:s, s:i}", "startTime", when, "active", 1));
	seed(t, K_JOB, started);
	converge(t);
	advance(t, 5000); /* 13 s after admission, 5 s after the start: within the 10 s */
	converge(t);
	assert_false(condition_true(fake_api_get(t->api, path), "Evicted"));
	advance(t, 6000); /* 11 s after the start */
	converge(t);
	assert_true(condition_true(fake_api_get(t->api, path), "Evicted"));
}

/* A Job admitted but released only much later (its leader died in between; here its release
 * fails until the clock moved 14 s) gets its whole timeout from the release, even while the
 * Job controller has not set its status.startTime yet. */
static void test_pods_ready_counts_from_release(void **state)
{
	struct t *t = *state;
	char path[600];
	seed_queue(t, "4", NULL);
	fake_api_fail(t->api, "PATCH", JOB_PATH("j1"), 500, 1);
	seed(t, K_JOB, job("j1", "1"));
	converge(t);
	assert_non_null(job_workload(t, "j1", path, sizeof(path)));
	assert_true(fake_cond(t, path, "Admitted"));
	assert_true(json_is_true(obj_path(fake_api_get(t->api, JOB_PATH("j1")), "spec.suspend")));
	advance(t, 14000);
	converge(t);
	assert_true(json_is_false(obj_path(fake_api_get(t->api, JOB_PATH("j1")), "spec.suspend")));
	assert_false(fake_cond(t, path, "Evicted"));
	advance(t, 8000); /* 22 s after admission, 8 s after the release */
	converge(t);
	assert_false(fake_cond(t, path, "Evicted"));
	advance(t, 3000); /* 11 s after the release */
	converge(t);
	assert_true(fake_cond(t, path, "Evicted"));
}

/* --- other kinds: RayJob, RayCluster, plain Pods and pod groups --------------------------- */

#define RAY_PATH "/apis/ray.io/v1/namespaces/ns/"
#define POD_PATH(name) "/api/v1/namespaces/ns/pods/" name
#define CPU_TEMPLATE(c) \
	"{'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'" c "'}}}]}}"

static json_t *rayjob(const char *name, int workers)
{
	return J("{'metadata':{'namespace':'ns','name':'%s','uid':'ray-uid-%s',"
		 "'labels':{'kueue.x-k8s.io/"
		 "queue-name':'lq'},'creationTimestamp':'2026-01-01T00:00:00Z'},"
		 "'spec':{'suspend':true,'shutdownAfterJobFinishes':true,"
		 "'submitterPodTemplate':" CPU_TEMPLATE(
			 "500m") ",'rayClusterSpec':{"
				 "'headGroupSpec':{'template':" CPU_TEMPLATE(
					 "1") "},"
					      "'workerGroupSpecs':[{'groupName':'workers','"
					      "replicas':%d,'template':" CPU_TEMPLATE("1") "}]}}}",
		 name, name, workers);
}

static json_t *fake_at(struct t *t, const char *path)
{
	json_t *obj = fake_api_get(t->api, path);
	if (!obj)
		fail_msg("nothing at %s", path);
	return obj;
}

/* A RayJob is held until its head, workers and submitter fit together, then released in one
 * patch: every template gets its PodSet's label and the Workload's annotation. */
static void test_rayjob_admitted_whole(void **state)
{
	struct t *t = *state;
	char name[300], path[400];
	seed_queue(t, "3", NULL);
	seed(t, K_RAYJOB, rayjob("train", 2));
	converge(t);
	assert_int_equal(integration_workload_name(&integration_rayjob, "train", "ray-uid-train",
						   name, sizeof(name)),
			 0);
	snprintf(path, sizeof(path), KUEUE "/namespaces/ns/workloads/%s", name);
	json_t *wl = fake_at(t, path);
	assert_int_equal(json_array_size(obj_path(wl, "spec.podSets")),
			 3); /* head, workers, submitter */
	/* 1 + 2 + 0.5 cpu: 3 is not enough. */
	assert_false(fake_cond(t, path, "QuotaReserved"));
	assert_true(json_is_true(obj_path(fake_at(t, RAY_PATH "rayjobs/train"), "spec.suspend")));
	assert_int_equal(fake_api_count(t->api, "PATCH", RAY_PATH "rayjobs/train", 0), 0);

	/* Room for all of it. */
	json_t *cq = json_deep_copy(fake_at(t, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq"));
	json_object_set_new(
		json_array_get(obj_path(json_array_get(obj_path(json_array_get(obj_path(cq,
											"spec."
											"resourceGr"
											"oups"),
									       0),
								"flavors"),
						       0),
					"resources"),
			       0),
		"nominalQuota", json_string("4"));
	seed(t, K_CQ, cq);
	converge(t);
	assert_true(fake_cond(t, path, "Admitted"));
	json_t *job = fake_at(t, RAY_PATH "rayjobs/train");
	assert_true(json_is_false(obj_path(job, "spec.suspend")));
	json_t *worker =
		json_object_get(json_array_get(obj_path(job,
							"spec.rayClusterSpec.workerGroupSpecs"),
					       0),
				"template");
	assert_string_equal(obj_label(worker, LABEL_PODSET), "workers");
	assert_string_equal(obj_annotation(worker, ANNOTATION_WORKLOAD), name);
	assert_string_equal(obj_label(obj_path(job, "spec.rayClusterSpec.headGroupSpec.template"),
				      LABEL_PODSET),
			    "head");
	assert_string_equal(obj_label(obj_path(job, "spec.submitterPodTemplate"), LABEL_PODSET),
			    "submitter");
	assert_int_equal(fake_api_count(t->api, "PATCH", RAY_PATH "rayjobs/train", 0), 1);
	assert_int_equal(cq_cpu_usage(t), 3500);

	/* It finishes: the quota goes. */
	json_t *done = json_deep_copy(job);
	json_object_set_new(done, "status",
			    J("{'jobDeploymentStatus':'Complete','jobStatus':'SUCCEEDED'}"));
	seed(t, K_RAYJOB, done);
	converge(t);
	assert_true(fake_cond(t, path, "Finished"));
	assert_int_equal(cq_cpu_usage(t), 0);
}

/* An evicted RayCluster is suspended (KubeRay deletes its pods), its templates restored, and
 * its quota freed once KubeRay says it is suspended; it comes back when room returns. */
static void test_raycluster_evicted_and_restored(void **state)
{
	struct t *t = *state;
	char name[300], path[400];
	seed_queue(t, "2", NULL);
	json_t *rc = rayjob("serve", 1);
	json_t *spec = json_deep_copy(obj_path(rc, "spec.rayClusterSpec"));
	json_object_set_new(spec, "suspend", json_true());
	json_object_set_new(rc, "spec", spec);
	json_object_set_new(obj_path(rc, "metadata"), "uid", json_string("rc-uid"));
	seed(t, K_RAYCLUSTER, rc);
	converge(t);
	assert_int_equal(integration_workload_name(&integration_raycluster, "serve", "rc-uid", name,
						   sizeof(name)),
			 0);
	snprintf(path, sizeof(path), KUEUE "/namespaces/ns/workloads/%s", name);
	assert_true(fake_cond(t, path, "Admitted"));
	json_t *running = json_deep_copy(fake_at(t, RAY_PATH "rayclusters/serve"));
	assert_true(json_is_false(obj_path(running, "spec.suspend")));
	json_object_set_new(running, "status", J("{'state':'ready'}"));
	seed(t, K_RAYCLUSTER, running);
	converge(t);
	assert_true(fake_cond(t, path, "PodsReady"));

	seed(t, K_WORKLOAD, workload("high", "2", 100, "2026-01-01T00:00:05Z"));
	converge(t);
	assert_true(fake_cond(t, path, "Evicted"));
	json_t *held = fake_at(t, RAY_PATH "rayclusters/serve");
	assert_true(json_is_true(obj_path(held, "spec.suspend")));
	/* Restored: no label or annotation of ours is left on the templates. */
	assert_null(obj_label(obj_path(held, "spec.headGroupSpec.template"), LABEL_PODSET));
	assert_null(
		obj_annotation(obj_path(held, "spec.headGroupSpec.template"), ANNOTATION_WORKLOAD));
	/* KubeRay still shows it ready: the quota stays until its pods are gone. */
	assert_true(fake_cond(t, path, "QuotaReserved"));
	json_t *stopped = json_deep_copy(held);
	json_object_set_new(stopped, "status", J("{'state':'suspended'}"));
	seed(t, K_RAYCLUSTER, stopped);
	converge(t);
	assert_false(fake_cond(t, path, "QuotaReserved"));
	assert_true(fake_cond(t, WL_PATH("high"), "Admitted"));
	/* Room returns: it is admitted and released again. */
	finish_elsewhere(t, WL_PATH("high"));
	converge(t);
	assert_true(fake_cond(t, path, "Admitted"));
	assert_true(
		json_is_false(obj_path(fake_at(t, RAY_PATH "rayclusters/serve"), "spec.suspend")));

	/* The RayCluster a RayJob makes carries the RayJob's queue label: it is the RayJob's, and
	 * muster neither holds it nor gives it a Workload of its own. */
	json_t *child = rayjob("train-abcde", 1);
	json_t *cspec = json_deep_copy(obj_path(child, "spec.rayClusterSpec"));
	json_object_set_new(child, "spec", cspec);
	json_object_set_new(json_object_get(child, "metadata"), "ownerReferences",
			    J("[{'apiVersion':'ray.io/"
			      "v1','kind':'RayJob','name':'train','uid':'x','controller':true}]"));
	seed(t, K_RAYCLUSTER, child);
	converge(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", RAY_PATH "rayclusters/train-abcde", 0), 0);
	assert_int_equal(fake_api_count(t->api, "POST", KUEUE "/namespaces/ns/workloads", 0), 1);
}

static void enable_pods(struct muster_config *c)
{
	c->frameworks |= config_framework_bit("pod");
}

static int setup_pods(void **state)
{
	return setup_with(state, enable_pods);
}

/* A pod as the webhook lets it in: gated, labelled managed, with the managed finalizer. */
static json_t *queued_pod(const char *name, const char *group, int total, const char *cpu)
{
	json_t *p =
		J("{'metadata':{'namespace':'ns','name':'%s','uid':'pod-uid-%s',"
		  "'creationTimestamp':'2026-01-01T00:00:00Z','finalizers':['kueue.x-k8s.io/"
		  "managed'],"
		  "'labels':{'kueue.x-k8s.io/queue-name':'lq','kueue.x-k8s.io/managed':'true'}},"
		  "'spec':{'schedulingGates':[{'name':'kueue.x-k8s.io/admission'}],"
		  "'containers':[{'name':'c','resources':{'requests':{'cpu':'%s'}}}]},"
		  "'status':{'phase':'Pending'}}",
		  name, name, cpu);
	if (group) {
		char n[16];
		snprintf(n, sizeof(n), "%d", total);
		json_object_set_new(obj_path(p, "metadata.labels"), LABEL_POD_GROUP,
				    json_string(group));
		json_object_set_new(json_object_get(p, "metadata"), "annotations",
				    json_pack("{s:s}", ANNOTATION_POD_GROUP_TOTAL, n));
	}
	return p;
}

static int gated(struct t *t, const char *path)
{
	return pod_gated(fake_at(t, path));
}

/* Sets a pod's phase in the fake and the cache (as the kubelet would). */
static void pod_phase(struct t *t, const char *path, const char *phase)
{
	json_t *p = json_deep_copy(fake_at(t, path));
	json_object_set_new(json_object_get(p, "status"), "phase", json_string(phase));
	json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string("n1"));
	seed(t, K_GPOD, p);
}

/* A group of 4 waits whole while it lacks pods (no Workload: it holds no quota), its pods say
 * why after a while, and once the fourth exists it is admitted and every gate comes off. */
static void test_pod_group_waits_whole(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	seed(t, K_GPOD, queued_pod("p1", "train", 4, "1"));
	seed(t, K_GPOD, queued_pod("p2", "train", 4, "1"));
	seed(t, K_GPOD, queued_pod("p3", "train", 4, "1"));
	converge(t);
	assert_null(fake_api_get(t->api, WL_PATH("train")));
	assert_int_equal(fake_api_count(t->api, "POST",
					"/apis/events.k8s.io/v1/namespaces/ns/events", 0),
			 0);
	advance(t, 6000);
	converge(t);
	assert_int_equal(fake_api_count(t->api, "POST",
					"/apis/events.k8s.io/v1/namespaces/ns/events", 0),
			 3);
	assert_true(gated(t, POD_PATH("p1")));

	seed(t, K_GPOD, queued_pod("p4", "train", 4, "1"));
	converge(t);
	json_t *wl = fake_at(t, WL_PATH("train"));
	assert_int_equal(json_array_size(obj_path(wl, "metadata.ownerReferences")), 4);
	assert_true(fake_cond(t, WL_PATH("train"), "Admitted"));
	const char *pods[] = { POD_PATH("p1"), POD_PATH("p2"), POD_PATH("p3"), POD_PATH("p4") };
	for (size_t i = 0; i < 4; i++) {
		assert_false(gated(t, pods[i]));
		assert_non_null(obj_label(fake_at(t, pods[i]), LABEL_PODSET));
		assert_string_equal(obj_annotation(fake_at(t, pods[i]), ANNOTATION_WORKLOAD),
				    "train");
		assert_int_equal(fake_api_count(t->api, "PATCH", pods[i], 0), 1);
	}
	assert_int_equal(cq_cpu_usage(t), 4000);

	/* Every pod succeeds: the Workload finishes and the pods are let go. */
	for (size_t i = 0; i < 4; i++)
		pod_phase(t, pods[i], "Succeeded");
	converge(t);
	assert_true(fake_cond(t, WL_PATH("train"), "Finished"));
	assert_int_equal(cq_cpu_usage(t), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(json_array_size(
					 obj_path(fake_at(t, pods[i]), "metadata.finalizers")),
				 0);
}

/* A whole group that does not fit waits for quota, and blocks neither a single Pod that fits
 * nor a group that disagrees with itself, which is refused with an event instead. */
static void test_pod_group_short_of_quota_blocks_nothing(void **state)
{
	struct t *t = *state;
	seed_queue(t, "3", NULL);
	for (int i = 1; i <= 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "g%d", i);
		seed(t, K_GPOD, queued_pod(name, "big", 4, "1"));
	}
	seed(t, K_GPOD, queued_pod("solo", NULL, 0, "1"));
	seed(t, K_GPOD, queued_pod("x1", "mixed", 2, "1"));
	seed(t, K_GPOD, queued_pod("x2", "mixed", 3, "1"));
	converge(t);
	assert_false(fake_cond(t, WL_PATH("big"), "QuotaReserved"));
	assert_true(gated(t, POD_PATH("g1")));
	char name[300], path[400];
	assert_int_equal(integration_workload_name(&integration_pod, "solo", "pod-uid-solo", name,
						   sizeof(name)),
			 0);
	snprintf(path, sizeof(path), KUEUE "/namespaces/ns/workloads/%s", name);
	assert_true(fake_cond(t, path, "Admitted"));
	assert_false(gated(t, POD_PATH("solo")));
	assert_null(fake_api_get(t->api, WL_PATH("mixed")));
	assert_true(gated(t, POD_PATH("x1")));
}

/* Eviction deletes the group's pods (a gate can't be put back), and the quota goes once none
 * is left: then the preemptor is admitted. */
static void test_pod_group_evicted(void **state)
{
	struct t *t = *state;
	seed_queue(t, "2", NULL);
	seed(t, K_GPOD, queued_pod("a", "pair", 2, "1"));
	seed(t, K_GPOD, queued_pod("b", "pair", 2, "1"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("pair"), "Admitted"));
	pod_phase(t, POD_PATH("a"), "Running");
	pod_phase(t, POD_PATH("b"), "Running");
	converge(t);
	seed(t, K_WORKLOAD, workload("high", "2", 100, "2026-01-01T00:00:05Z"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("pair"), "Evicted"));
	assert_int_equal(fake_api_count(t->api, "DELETE", POD_PATH("a"), 0), 1);
	assert_int_equal(fake_api_count(t->api, "DELETE", POD_PATH("b"), 0), 1);
	/* Being deleted, they are let go at once (their end is their deletion): the finalizers
	 * go, and so do the pods and the quota. */
	assert_null(fake_api_get(t->api, POD_PATH("a")));
	assert_null(fake_api_get(t->api, POD_PATH("b")));
	assert_false(fake_cond(t, WL_PATH("pair"), "QuotaReserved"));
	assert_true(fake_cond(t, WL_PATH("high"), "Admitted"));
}

static void manage_all_jobs(struct muster_config *c)
{
	c->manage_without_queue_name = 1;
}

static int setup_manage_all(void **state)
{
	return setup_with(state, manage_all_jobs);
}

/* manageJobsWithoutQueueName: a Job without the queue label that runs in a managed namespace
 * is suspended and told why; no Workload is made on a guessed queue. */
static void test_job_without_queue_name_held(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	json_t *j = job("bare", "1");
	json_object_del(obj_path(j, "metadata.labels"), LABEL_QUEUE_NAME);
	json_object_set_new(json_object_get(j, "spec"), "suspend", json_false());
	seed(t, K_JOB, j);
	converge(t);
	assert_true(json_is_true(obj_path(fake_at(t, JOB_PATH("bare")), "spec.suspend")));
	assert_int_equal(fake_api_count(t->api, "POST", KUEUE "/namespaces/ns/workloads", 0), 0);
	assert_int_equal(fake_api_count(t->api, "POST",
					"/apis/events.k8s.io/v1/namespaces/ns/events", 0),
			 1);
	/* Labelled, it is queued and runs. */
	json_t *labelled = json_deep_copy(fake_at(t, JOB_PATH("bare")));
	json_object_set_new(obj_path(labelled, "metadata.labels"), LABEL_QUEUE_NAME,
			    json_string("lq"));
	seed(t, K_JOB, labelled);
	converge(t);
	assert_true(json_is_false(obj_path(fake_at(t, JOB_PATH("bare")), "spec.suspend")));
}

/* --- the visibility endpoint ------------------------------------------------------------------ */

/* GET path?query on the visibility endpoint: the status, and the JSON answer (a new
 * reference, NULL when it doesn't parse). */
static json_t *vis_get(struct t *t, const char *method, const char *path, const char *query,
		       int *status)
{
	struct httpd_request req = {
		.method = method, .path = path, .query = query ? query : "", .body = ""
	};
	struct httpd_response resp = { 500, NULL, NULL, 0 };
	visibility_handle(&t->m, &req, &resp);
	*status = resp.status;
	json_t *out = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
	free(resp.body);
	return out;
}

/* The names of a list's items, "a,b,c". */
static void item_names(json_t *list, const char *field, char *out, size_t size)
{
	json_t *it;
	size_t i, len = 0;
	out[0] = '\0';
	json_array_foreach(json_object_get(list, "items"), i, it) len +=
		(size_t)snprintf(out + len, size - len, "%s%s", i ? "," : "", obj_str(it, field));
}

#define KVIS "/apis/visibility.kueue.x-k8s.io/v1beta2"
#define MVIS "/apis/visibility.muster.io/v1alpha1"

/* Two admitted workloads of priority 10 fill the queue; three wait. */
static void seed_waiting_queue(struct t *t)
{
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("a", "2", 10, "2026-01-01T00:00:00Z"));
	seed(t, K_WORKLOAD, workload("b", "2", 10, "2026-01-01T00:00:01Z"));
	converge(t);
	seed(t, K_WORKLOAD, workload("c", "2", 0, "2026-01-01T00:00:02Z"));
	seed(t, K_WORKLOAD, workload("d", "2", 5, "2026-01-01T00:00:03Z"));
	seed(t, K_WORKLOAD, workload("e", "2", 0, "2026-01-01T00:00:04Z"));
	converge(t);
}

/* Kueue's PendingWorkloadsSummary: the engine's order (priority, then age), both positions,
 * paging, and Kubernetes Status errors. */
static void test_visibility_pending_workloads(void **state)
{
	struct t *t = *state;
	int status;
	char names[256];
	seed_waiting_queue(t);
	json_t *out = vis_get(t, "GET", KVIS "/clusterqueues/cq/pendingworkloads", NULL, &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(out, "kind"), "PendingWorkloadsSummary");
	assert_string_equal(obj_str(out, "apiVersion"), "visibility.kueue.x-k8s.io/v1beta2");
	item_names(out, "metadata.name", names, sizeof(names));
	assert_string_equal(names, "d,c,e");
	json_t *d = json_array_get(json_object_get(out, "items"), 0);
	assert_int_equal(json_integer_value(json_object_get(d, "priority")), 5);
	assert_string_equal(obj_str(d, "localQueueName"), "lq");
	assert_string_equal(obj_str(d, "metadata.namespace"), "ns");
	assert_string_equal(obj_str(d, "metadata.creationTimestamp"), "2026-01-01T00:00:03Z");
	json_t *e = json_array_get(json_object_get(out, "items"), 2);
	assert_int_equal(json_integer_value(json_object_get(e, "positionInClusterQueue")), 2);
	assert_int_equal(json_integer_value(json_object_get(e, "positionInLocalQueue")), 2);
	json_decref(out);
	out = vis_get(t, "GET", KVIS "/namespaces/ns/localqueues/lq/pendingworkloads",
		      "limit=1&offset=1", &status);
	assert_int_equal(status, 200);
	item_names(out, "metadata.name", names, sizeof(names));
	assert_string_equal(names, "c");
	assert_int_equal(json_integer_value(
				 json_object_get(json_array_get(json_object_get(out, "items"), 0),
						 "positionInClusterQueue")),
			 1);
	json_decref(out);
	out = vis_get(t, "GET", KVIS "/clusterqueues/nope/pendingworkloads", NULL, &status);
	assert_int_equal(status, 404);
	assert_string_equal(obj_str(out, "kind"), "Status");
	assert_string_equal(obj_str(out, "reason"), "NotFound");
	json_decref(out);
	out = vis_get(t, "GET", KVIS "/clusterqueues/cq/pendingworkloads", "limit=100001", &status);
	assert_int_equal(status, 400);
	json_decref(out);
	out = vis_get(t, "GET", KVIS "/clusterqueues/../pendingworkloads", NULL, &status);
	assert_int_equal(status, 404);
	json_decref(out);
	out = vis_get(t, "POST", KVIS "/clusterqueues/cq/pendingworkloads", NULL, &status);
	assert_int_equal(status, 405);
	json_decref(out);
	out = vis_get(t, "GET", KVIS, NULL, &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(out, "kind"), "APIResourceList");
	json_decref(out);
	out = vis_get(t, "GET", MVIS, NULL, &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(out, "groupVersion"), "visibility.muster.io/v1alpha1");
	json_decref(out);
}

/* why: the reason, the position, what it lacks, who holds it and what would have to end. */
static void test_visibility_why(void **state)
{
	struct t *t = *state;
	int status;
	seed_waiting_queue(t);
	json_t *out = vis_get(t, "GET", MVIS "/namespaces/ns/workloads/c/why", NULL, &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(out, "kind"), "WorkloadExplanation");
	assert_string_equal(obj_str(out, "state"), "Pending");
	assert_string_equal(obj_str(out, "reason"), "WaitingForQuota");
	assert_string_equal(obj_str(out, "message"), "couldn't assign flavors to pod set main: "
						     "insufficient unused quota for cpu "
						     "in flavor default, 2 more needed");
	assert_string_equal(obj_str(out, "workload.clusterQueue"), "cq");
	assert_int_equal(json_integer_value(json_object_get(out, "positionInClusterQueue")), 1);
	json_t *lack = json_array_get(json_object_get(out, "lacking"), 0);
	assert_string_equal(obj_str(lack, "resource"), "cpu");
	assert_string_equal(obj_str(lack, "flavor"), "default");
	assert_string_equal(obj_str(lack, "requested"), "2");
	assert_string_equal(obj_str(lack, "available"), "0");
	assert_string_equal(obj_str(lack, "missing"), "2");
	json_t *holders = json_object_get(out, "holders"), *h;
	size_t i;
	assert_int_equal(json_array_size(holders), 2);
	json_array_foreach(holders, i, h)
	{
		assert_string_equal(obj_str(h, "via"), "ClusterQueue");
		assert_false(json_is_true(json_object_get(h, "preemptible"))); /* priority 10 > 0 */
		assert_string_equal(obj_str(h, "amount"), "2");
	}
	/* One of them must end: neither can be preempted. */
	json_t *fit = json_object_get(out, "toFit");
	assert_int_equal(json_array_size(fit), 1);
	assert_string_equal(obj_str(json_array_get(fit, 0), "action"), "end");
	assert_string_equal(obj_str(json_array_get(fit, 0), "frees"), "2");
	json_decref(out);
	out = vis_get(t, "GET", MVIS "/namespaces/ns/workloads/a/why", NULL, &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(out, "state"), "Admitted");
	json_decref(out);
	out = vis_get(t, "GET", MVIS "/namespaces/ns/workloads/zz/why", NULL, &status);
	assert_int_equal(status, 404);
	json_decref(out);
	/* Without a ledger, history says so. */
	out = vis_get(t, "GET", MVIS "/namespaces/ns/workloads/a/history", NULL, &status);
	assert_int_equal(status, 503);
	json_decref(out);
}

/* eta: the forecast from the controller's objects; a running workload's end from its
 * maximumExecutionTimeSeconds, none without. */
static void test_visibility_eta(void **state)
{
	struct t *t = *state;
	int status;
	seed_queue(t, "4", NULL);
	json_t *a = workload("a", "2", 10, "2026-01-01T00:00:00Z");
	json_object_set_new(json_object_get(a, "spec"), "maximumExecutionTimeSeconds",
			    json_integer(600));
	seed(t, K_WORKLOAD, a);
	seed(t, K_WORKLOAD, workload("b", "2", 10, "2026-01-01T00:00:01Z"));
	converge(t);
	seed(t, K_WORKLOAD, workload("c", "2", 0, "2026-01-01T00:00:02Z"));
	seed(t, K_WORKLOAD, workload("d", "4", 0, "2026-01-01T00:00:03Z"));
	converge(t);
	json_t *admitted_a = fake_api_get(t->api, WL_PATH("a"));
	int64_t start;
	assert_int_equal(time_parse_rfc3339(json_string_value(
						    json_object_get(condition_get(admitted_a,
										  "QuotaReserved"),
								    "lastTransitionTime")),
					    &start),
			 0);
	char want[40];
	time_format_rfc3339(start + 600 * 1000, want, sizeof(want));
	json_t *out = vis_get(t, "GET", MVIS "/namespaces/ns/workloads/c/eta", NULL, &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(out, "kind"), "WorkloadEstimate");
	assert_string_equal(obj_str(out, "state"), "Pending");
	assert_string_equal(obj_str(out, "estimatedAdmission"), want);
	assert_int_equal(json_integer_value(
				 obj_path(out, "runtimeSources.maximumExecutionTimeSeconds")),
			 1);
	assert_non_null(strstr(obj_str(out, "basis"), "the earliest end frees 2 cpu"));
	json_decref(out);
	/* d needs all 4: b never ends (no runtime known), so there is no basis. */
	out = vis_get(t, "GET", MVIS "/namespaces/ns/workloads/d/eta", NULL, &status);
	assert_int_equal(status, 200);
	assert_true(json_is_null(json_object_get(out, "estimatedAdmission")));
	assert_non_null(strstr(obj_str(out, "basis"), "no basis"));
	json_decref(out);
	out = vis_get(t, "GET", MVIS "/namespaces/ns/workloads/a/eta", NULL, &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(out, "state"), "Admitted");
	json_decref(out);
}

static char ledger_dir[64];

static void with_ledger(struct muster_config *c)
{
	snprintf(ledger_dir, sizeof(ledger_dir), "/tmp/muster-ledger-XXXXXX");
	assert_non_null(mkdtemp(ledger_dir));
	snprintf(c->ledger_path, sizeof(c->ledger_path), "%s/ledger.db", ledger_dir);
}

static int setup_ledger(void **state)
{
	return setup_with(state, with_ledger);
}

static int teardown_ledger(void **state)
{
	char path[128];
	int rc = teardown(state);
	for (const char *const *f =
		     (const char *const[]){ "ledger.db", "ledger.db-wal", "ledger.db-shm", NULL };
	     *f; f++) {
		snprintf(path, sizeof(path), "%s/%s", ledger_dir, *f);
		unlink(path);
	}
	rmdir(ledger_dir);
	return rc;
}

/* The ledger records what landed, history and usage read it back, and a Workload deleted while
 * admitted ends its interval. */
static void test_visibility_history_and_usage(void **state)
{
	struct t *t = *state;
	int status;
	char names[256];
	assert_non_null(t->m.ledger);
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("a", "2", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	assert_int_equal(ledger_flush(t->m.ledger), 0);
	json_t *out = vis_get(t, "GET", MVIS "/namespaces/ns/workloads/a/history", NULL, &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(out, "kind"), "DecisionList");
	item_names(out, "event", names, sizeof(names));
	assert_string_equal(names, "admit");
	json_t *admit = json_array_get(json_object_get(out, "items"), 0);
	assert_string_equal(obj_str(admit, "clusterQueue"), "cq");
	assert_string_equal(obj_str(admit, "localQueue"), "lq");
	assert_string_equal(obj_str(admit, "uid"), "uid-a");
	assert_string_equal(obj_str(admit, "resources.cpu"), "2");
	assert_string_equal(obj_str(admit, "flavors.main.cpu"), "default");
	assert_string_equal(obj_str(admit, "clusterQueueUsage.default.cpu"), "2");
	json_decref(out);
	/* An hour of 2 CPUs, then the Workload goes: 2 CPU-hours, which stay 2 an hour later. */
	clock_ms += 3600 * 1000;
	delete_workload(t, "ns/a");
	clock_ms += 3600 * 1000;
	assert_int_equal(ledger_flush(t->m.ledger), 0);
	out = vis_get(t, "GET", MVIS "/usage", "since=3h&by=queue", &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(out, "kind"), "UsageReport");
	json_t *item = json_array_get(json_object_get(out, "items"), 0);
	assert_string_equal(obj_str(item, "key"), "cq");
	assert_true(fabs(json_real_value(obj_path(item, "resourceHours.cpu")) - 2.0) < 1e-9);
	json_decref(out);
	/* since as an RFC 3339 time, percent-encoded as clients send it: the same answer. */
	char since[64], query[192], enc[128];
	time_format_rfc3339(clock_ms - 3 * 3600 * 1000, since, sizeof(since));
	size_t o = 0;
	for (const char *c = since; *c && o + 4 < sizeof(enc); c++)
		o += (size_t)(*c == ':' ? snprintf(enc + o, sizeof(enc) - o, "%%3A") :
					  snprintf(enc + o, sizeof(enc) - o, "%c", *c));
	snprintf(query, sizeof(query), "since=%s&by=queue", enc);
	out = vis_get(t, "GET", MVIS "/usage", query, &status);
	assert_int_equal(status, 200);
	assert_true(fabs(json_real_value(obj_path(json_array_get(json_object_get(out, "items"), 0),
						  "resourceHours.cpu")) -
			 2.0) < 1e-9);
	json_decref(out);
	out = vis_get(t, "GET", MVIS "/usage", "since=%zz", &status);
	assert_int_equal(status, 400);
	json_decref(out);
	out = vis_get(t, "GET", MVIS "/usage", "by=namespace", &status);
	assert_int_equal(status, 200);
	assert_string_equal(obj_str(json_array_get(json_object_get(out, "items"), 0), "key"), "ns");
	json_decref(out);
	out = vis_get(t, "GET", MVIS "/clusterqueues/cq/history", "since=24h", &status);
	assert_int_equal(status, 200);
	item_names(out, "event", names, sizeof(names));
	assert_string_equal(names, "finish,admit");
	assert_string_equal(obj_str(json_array_get(json_object_get(out, "items"), 0), "reason"),
			    "Deleted");
	json_decref(out);
	out = vis_get(t, "GET", MVIS "/usage", "by=team", &status);
	assert_int_equal(status, 400);
	json_decref(out);
	/* A Workload another party marks Finished ends its admission too; a reconcile of a
	 * ledger that agrees with the cluster adds nothing. */
	seed(t, K_WORKLOAD, workload("b", "2", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	/* (finished now: the ledger's retention would take a record of a year ago) */
	char now[40];
	time_format_rfc3339(clock_ms, now, sizeof(now));
	json_t *done = json_deep_copy(fake_api_get(t->api, WL_PATH("b")));
	json_array_append_new(obj_path(done, "status.conditions"),
			      json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Finished", "status",
					"True", "reason", "Succeeded", "message", "done",
					"lastTransitionTime", now));
	seed(t, K_WORKLOAD, done);
	converge(t);
	history_reconcile(&t->m);
	assert_int_equal(ledger_flush(t->m.ledger), 0);
	out = vis_get(t, "GET", MVIS "/namespaces/ns/workloads/b/history", NULL, &status);
	item_names(out, "event", names, sizeof(names));
	assert_string_equal(names, "finish,admit");
	json_decref(out);
	out = vis_get(t, "GET", MVIS "/clusterqueues/cq/history", NULL, &status);
	assert_int_equal(json_array_size(json_object_get(out, "items")), 4);
	json_decref(out);
}

/* The text the ledger keeps of a record's JSON field: what jansson's compact dump with sorted keys
 * writes of it (the form records always had), a new string. */
static char *ledger_text(const char *dir, const char *name, const char *column)
{
	char path[128], sql[256];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	snprintf(path, sizeof(path), "%s/ledger.db", dir);
	snprintf(sql, sizeof(sql), "SELECT %s FROM decisions WHERE name = ?1 AND event = 'admit'",
		 column);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	char *text = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	json_t *tree = json_loads(text, 0, NULL);
	assert_non_null(tree);
	char *canonical = json_dumps(tree, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, canonical);
	free(canonical);
	json_decref(tree);
	return text;
}

/* A record's flavors, resources and usage are written without a tree: the same texts, byte for
 * byte, as the trees' sorted dump, on a ClusterQueue of two resource groups, flavors in other
 * than sorted order, and a Workload of two pod sets. */
static void test_ledger_record_texts(void **state)
{
	struct t *t = *state;
	assert_non_null(t->m.ledger);
	seed(t, K_FLAVOR, J("{'metadata':{'name':'spot'}}"));
	seed(t, K_FLAVOR, J("{'metadata':{'name':'a100'}}"));
	seed(t, K_FLAVOR, J("{'metadata':{'name':'default'}}"));
	seed(t, K_NAMESPACE,
	     J("{'metadata':{'name':'ns','labels':{'kubernetes.io/metadata.name':'ns'}}}"));
	seed(t, K_CQ,
	     J("{'metadata':{'name':'cq'},'spec':{'namespaceSelector':{},'resourceGroups':["
	       "{'coveredResources':['memory','cpu'],'flavors':["
	       "{'name':'spot','resources':[{'name':'memory','nominalQuota':'0'},"
	       "{'name':'cpu','nominalQuota':'0'}]},"
	       "{'name':'default','resources':[{'name':'memory','nominalQuota':'64Gi'},"
	       "{'name':'cpu','nominalQuota':'16'}]}]},"
	       "{'coveredResources':['nvidia.com/gpu'],'flavors':[{'name':'a100','resources':["
	       "{'name':'nvidia.com/gpu','nominalQuota':'8'}]}]}]}}"));
	seed(t, K_LQ,
	     J("{'metadata':{'namespace':'ns','name':'lq'},'spec':{'clusterQueue':'cq'}}"));
	seed(t, K_WORKLOAD,
	     J("{'metadata':{'namespace':'ns','name':'multi','uid':'uid-multi',"
	       "'creationTimestamp':'2026-01-01T00:00:00Z'},'spec':{'queueName':'lq','podSets':["
	       "{'name':'workers','count':2,'template':{'spec':{'containers':[{'name':'c',"
	       "'resources':{'requests':{'cpu':'1500m','memory':'1Gi','nvidia.com/gpu':'1'}}}]}}},"
	       "{'name':'driver','count':1,'template':{'spec':{'containers':[{'name':'c',"
	       "'resources':{'requests':{'cpu':'500m','memory':'512Mi'}}}]}}}]}}"));
	converge(t);
	assert_int_equal(ledger_flush(t->m.ledger), 0);
	char *flavors = ledger_text(ledger_dir, "multi", "flavors");
	char *resources = ledger_text(ledger_dir, "multi", "resources");
	char *usage = ledger_text(ledger_dir, "multi", "cluster_queue_usage");
	assert_string_equal(flavors, "{\"driver\":{\"cpu\":\"default\",\"memory\":\"default\"},"
				     "\"workers\":{\"cpu\":\"default\",\"memory\":\"default\","
				     "\"nvidia.com/gpu\":\"a100\"}}");
	json_t *r = json_loads(resources, 0, NULL), *u = json_loads(usage, 0, NULL);
	assert_string_equal(obj_str(r, "cpu"), "3500m");
	assert_string_equal(json_string_value(json_object_get(r, "nvidia.com/gpu")), "2");
	assert_int_equal(json_object_size(r), 3);
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(u, "a100"), "nvidia.com/gpu")),
			    "2");
	assert_string_equal(obj_str(u, "default.cpu"), "3500m");
	assert_string_equal(obj_str(u, "spot.cpu"), "0");
	assert_int_equal(json_object_size(u), 3);
	json_decref(r);
	json_decref(u);
	free(flavors);
	free(resources);
	free(usage);
}

/* --- fair sharing ----------------------------------------------------------------------------- */

#define T0_MS 1767225600000LL /* 2026-01-01T00:00:00Z */
#define HOUR_NS (3600LL * 1000000000)
#define SAMPLE_MS (5 * 60 * 1000)

static void fair_sharing_on(struct muster_config *c)
{
	c->fair_sharing.enabled = 1;
}

static int setup_fair_sharing(void **state)
{
	return setup_with(state, fair_sharing_on);
}

/* Admission fair sharing: a half-life of an hour, a sample every 5 minutes. */
static void afs_on(struct muster_config *c)
{
	c->admission_fair_sharing.enabled = 1;
	c->admission_fair_sharing.usage_half_life = HOUR_NS;
	c->admission_fair_sharing.usage_sampling_interval = (int64_t)SAMPLE_MS * 1000000;
}

static int setup_afs(void **state)
{
	return setup_with(state, afs_on);
}

/* The status.fairSharing.weightedShare of the object at path, in the fake; -1 when absent. */
static json_int_t fake_share(struct t *t, const char *path)
{
	json_t *v = obj_path(fake_api_get(t->api, path), "status.fairSharing.weightedShare");
	return json_is_integer(v) ? json_integer_value(v) : -1;
}

static json_int_t engine_share(struct t *t, enum kind kind, const char *name)
{
	struct eng_share s;
	int rc = kind == K_COHORT ? engine_cohort_share(t->m.engine, name, &s) :
				    engine_cq_share(t->m.engine, name, &s);
	assert_int_equal(rc, 0);
	return (json_int_t)s.weighted_share;
}

/* A ClusterQueue of 4 cpus in cohort, for the namespace ns. */
static void seed_cq_in(struct t *t, const char *name, const char *cohort)
{
	seed(t, K_CQ,
	     J("{'metadata':{'name':'%s'},'spec':{'cohortName':'%s','namespaceSelector':{},"
	       "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'default',"
	       "'resources':[{'name':'cpu','nominalQuota':'4'}]}]}]}}",
	       name, cohort));
}

/* With fair sharing on, a ClusterQueue that borrows gets status.fairSharing.weightedShare, the
 * engine's value, and so do the Cohorts above it (a Cohort's status is muster's to write, as
 * Kueue's); both are written again only when the share moves, and back to 0 when the borrower
 * finishes. Tree: root { co { cq, cq2 }, cq3 }, 4 cpus each; w1 takes 10 in cq: cq borrows 6,
 * co borrows 2 of root's. */
static void test_fair_sharing_status(void **state)
{
	struct t *t = *state;
	seed(t, K_COHORT, J("{'metadata':{'name':'root'},'spec':{}}"));
	seed(t, K_COHORT, J("{'metadata':{'name':'co'},'spec':{'parentName':'root'}}"));
	seed_queue(t, "4", "co");
	seed_cq_in(t, "cq2", "co");
	seed_cq_in(t, "cq3", "root");
	seed(t, K_WORKLOAD, workload("w1", "10", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	advance(t, 3000); /* the status interval */
	converge(t);
	assert_true(fake_cond(t, WL_PATH("w1"), "QuotaReserved"));
	json_int_t cq_share = engine_share(t, K_CQ, "cq"),
		   co_share = engine_share(t, K_COHORT, "co");
	assert_true(cq_share > 0 && co_share > 0);
	assert_int_equal(fake_share(t, KUEUE "/clusterqueues/cq"), cq_share);
	assert_int_equal(fake_share(t, KUEUE "/clusterqueues/cq2"), 0);
	assert_int_equal(fake_share(t, KUEUE "/cohorts/co"), co_share);
	assert_int_equal(fake_share(t, KUEUE "/cohorts/root"), 0); /* a root has no share */
	char series[256];
	snprintf(series, sizeof(series),
		 "kueue_cluster_queue_weighted_share{cluster_queue=\"cq\",cohort=\"co\"," ROLE "}");
	assert_true(fabs(metric(t, series) - (double)cq_share) <= 1);
	snprintf(series, sizeof(series), "kueue_cohort_weighted_share{cohort=\"co\"," ROLE "}");
	assert_true(fabs(metric(t, series) - (double)co_share) <= 1);
	assert_true(metric(t, "kueue_local_queue_admission_fair_sharing_usage{name=\"lq\","
			      "namespace=\"ns\",cluster_queue=\"cq\"," ROLE "}") == -1);
	/* Nothing moves: nothing more is written. */
	size_t co_writes = fake_api_count(t->api, "PATCH", KUEUE "/cohorts/co/status", 0);
	assert_int_equal(co_writes, 1);
	advance(t, 3000);
	converge(t);
	assert_int_equal(fake_api_count(t->api, "PATCH", KUEUE "/cohorts/co/status", 0), co_writes);
	/* The borrower finishes: the chain above its ClusterQueue is written with 0. */
	finish_elsewhere(t, WL_PATH("w1"));
	converge(t);
	advance(t, 3000);
	converge(t);
	assert_int_equal(fake_share(t, KUEUE "/clusterqueues/cq"), 0);
	assert_int_equal(fake_share(t, KUEUE "/cohorts/co"), 0);
	assert_int_equal(fake_api_count(t->api, "PATCH", KUEUE "/cohorts/co/status", 0),
			 co_writes + 1);
	assert_int_equal(fake_api_count(t->api, "PATCH", KUEUE "/cohorts/root/status", 0), 1);
}

static json_t *lq_workload(const char *name, const char *lq, const char *cpu, const char *created)
{
	return J("{'metadata':{'namespace':'ns','name':'%s','uid':'uid-%s','creationTimestamp':'%s'"
		 "},"
		 "'spec':{'queueName':'%s','priority':0,'podSets':[{'name':'main','count':1,"
		 "'template':{'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'%s'"
		 "}}}]}}}]}}",
		 name, name, created, lq, cpu);
}

/* A LocalQueue of cq whose status says it consumed cpu (a quantity) as of last_update. */
static json_t *afs_local_queue(const char *name, const char *cpu, const char *last_update)
{
	json_t *lq = J("{'metadata':{'namespace':'ns','name':'%s','uid':'lq-uid-%s'},"
		       "'spec':{'clusterQueue':'cq'}}",
		       name, name);
	if (cpu)
		json_object_set_new(lq, "status",
				    J("{'fairSharing':{'weightedShare':0,'"
				      "admissionFairSharingStatus':"
				      "{'consumedResources':{'cpu':'%s'},'lastUpdate':'%s'}}}",
				      cpu, last_update));
	return lq;
}

/* A LocalQueue's consumed cpu as the engine holds it. */
static double engine_consumed_cpu(struct t *t, const char *lq)
{
	struct eng_afs_status st;
	assert_int_equal(engine_afs_status(t->m.engine, "ns", lq, &st), 0);
	for (size_t i = 0; i < st.n; i++)
		if (!strcmp(st.consumed[i].resource, "cpu"))
			return st.consumed[i].consumed;
	return 0;
}

/* What a sample makes of consumed cpu after elapsed_ms, with admitted cpus held meanwhile:
 * consumed x (1 - a) + admitted x a, a = 1 - 0.5^(elapsed / half-life); as a quantity at milli
 * precision, as the status says it. */
static void decayed(double consumed, double admitted, int64_t elapsed_ms, char *buf, size_t size)
{
	double a = 1 - pow(0.5, (double)elapsed_ms * 1e6 / (double)HOUR_NS);
	quantity_to_string("cpu", llround((consumed * (1 - a) + admitted * a) * 1000), buf, size);
}

/* Admission fair sharing's fixture, at T0: ClusterQueue cq of 1 cpu admitting by usage;
 * LocalQueue lq-a whose status says it consumed 10 cpus, lq-b with no status; wa (lq-a) is
 * older than wb (lq-b), both 1 cpu. wb goes first: lq-a's usage orders it after. */
static void afs_fixture(struct t *t)
{
	char t0[40];
	clock_ms = T0_MS;
	time_format_rfc3339(T0_MS, t0, sizeof(t0));
	seed(t, K_FLAVOR, J("{'metadata':{'name':'default'}}"));
	seed(t, K_NAMESPACE,
	     J("{'metadata':{'name':'ns','labels':{'kubernetes.io/metadata.name':'ns'}}}"));
	seed(t, K_CQ,
	     J("{'metadata':{'name':'cq'},'spec':{'namespaceSelector':{},"
	       "'admissionScope':{'admissionMode':'UsageBasedAdmissionFairSharing'},"
	       "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'default',"
	       "'resources':[{'name':'cpu','nominalQuota':'1'}]}]}]}}"));
	seed(t, K_LQ, afs_local_queue("lq-a", "10", t0));
	seed(t, K_LQ, afs_local_queue("lq-b", NULL, NULL));
	seed(t, K_WORKLOAD, lq_workload("wa", "lq-a", "1", "2026-01-01T00:00:00Z"));
	seed(t, K_WORKLOAD, lq_workload("wb", "lq-b", "1", "2026-01-01T00:00:01Z"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("wb"), "QuotaReserved"));
	assert_false(fake_cond(t, WL_PATH("wa"), "QuotaReserved"));
}

/* With admission fair sharing on, the LocalQueue whose status carries usage waits behind the
 * one without; a status event after the first (our own write, or a stale one) does not
 * overwrite the engine; and each sample writes consumedResources and lastUpdate, decayed by
 * hand: lq-a 10 x (1 - a); lq-b its entry penalty (1 cpu x a) x (1 - a) + 1 cpu x a, with
 * a = 1 - 0.5^(5 min / 1 h) = 0.0561. */
static void test_afs_orders_and_samples(void **state)
{
	struct t *t = *state;
	char t0[40], want[64];
	afs_fixture(t);
	time_format_rfc3339(T0_MS, t0, sizeof(t0));
	seed(t, K_LQ, afs_local_queue("lq-a", "0", t0));
	converge(t);
	assert_true(fabs(engine_consumed_cpu(t, "lq-a") - 10) < 1e-9);

	advance(t, SAMPLE_MS);
	assert_int_equal(fairshare_sample(&t->m), 0); /* what the timer runs */
	converge(t);
	advance(t, 3000); /* a LocalQueue written in the last 2 s waits for its interval */
	converge(t);
	json_t *afs = obj_path(fake_api_get(t->api, KUEUE "/namespaces/ns/localqueues/lq-a"),
			       "status.fairSharing.admissionFairSharingStatus");
	decayed(10, 0, SAMPLE_MS, want, sizeof(want));
	assert_string_equal(json_string_value(obj_path(afs, "consumedResources.cpu")), want);
	assert_string_equal(json_string_value(json_object_get(afs, "lastUpdate")),
			    "2026-01-01T00:05:00Z");
	assert_int_equal(fake_share(t, KUEUE "/namespaces/ns/localqueues/lq-a"), 0);
	afs = obj_path(fake_api_get(t->api, KUEUE "/namespaces/ns/localqueues/lq-b"),
		       "status.fairSharing.admissionFairSharingStatus");
	double a = 1 - pow(0.5, (double)SAMPLE_MS * 1e6 / (double)HOUR_NS);
	decayed(a, 1, SAMPLE_MS, want, sizeof(want));
	assert_string_equal(json_string_value(obj_path(afs, "consumedResources.cpu")), want);
	assert_string_equal(json_string_value(json_object_get(afs, "lastUpdate")),
			    "2026-01-01T00:05:00Z");
	double usage = metric(t, "kueue_local_queue_admission_fair_sharing_usage{name=\"lq-a\","
				 "namespace=\"ns\",cluster_queue=\"cq\"," ROLE "}");
	assert_true(fabs(usage - 10 * (1 - a)) < 1e-6);
	/* No fair sharing: no share series. */
	assert_true(metric(t, "kueue_cohort_weighted_share{cohort=\"co\"," ROLE "}") == -1);
	/* A follower writes nothing, so every status event is the leader's: it is taken. */
	t->m.leading = 0;
	fairshare_unlead(&t->m);
	seed(t, K_LQ, afs_local_queue("lq-a", "3", "2026-01-01T00:05:00Z"));
	assert_true(fabs(engine_consumed_cpu(t, "lq-a") - 3) < 1e-9);
	t->m.leading = 1;
}

/* A new manager over the same objects (a restart) seeds each LocalQueue from the status the
 * last one wrote, not from zero: lq-a's 9.439 cpus still order wa after wc of lq-b (0.109),
 * where from zero wa, the older, would go first. */
static void test_afs_restart_seeds_from_status(void **state)
{
	struct t *t = *state;
	static const enum kind order[] = {
		K_FLAVOR, K_NAMESPACE, K_COHORT, K_CQ, K_LQ, K_WORKLOAD
	};
	afs_fixture(t);
	advance(t, SAMPLE_MS);
	assert_int_equal(fairshare_sample(&t->m), 0);
	converge(t);

	struct muster_config conf = t->m.conf;
	struct kube_config cfg = { .server = (char *)fake_api_url(t->api) };
	mgr_release_for_test(&t->m);
	for (int i = 0; i < 5; i++)
		uv_run(&t->loop, UV_RUN_NOWAIT); /* the old manager's handles close */
	assert_int_equal(mgr_init_for_test(&t->m, &t->loop, &cfg, &conf), 0);
	t->m.now_ms = test_now;
	t->m.rand = test_rand;
	t->m.cycle_ms = 0;
	t->m.front_ms = 0;
	json_t *old[K_KINDS];
	for (int k = 0; k < K_KINDS; k++) {
		old[k] = t->stores[k];
		t->m.stores[k] = t->stores[k] = json_object();
	}
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *key;
		json_t *stub;
		json_object_foreach(old[order[i]], key, stub)
		{
			/* A stub may be only a resourceVersion: the path is the key's. */
			char path[600];
			const char *slash = strchr(key, '/');
			char ns[300] = "";
			if (slash)
				snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
			assert_int_equal(kind_path(order[i], slash ? ns : NULL,
						   slash ? slash + 1 : key, NULL, path,
						   sizeof(path)),
					 0);
			store(t, order[i], key, json_deep_copy(fake_api_get(t->api, path)));
		}
	}
	for (int k = 0; k < K_KINDS; k++)
		json_decref(old[k]);
	converge(t);
	assert_true(fabs(engine_consumed_cpu(t, "lq-a") - 9.439) < 1e-9);
	assert_true(fabs(engine_consumed_cpu(t, "lq-b") - 0.109) < 1e-9);
	assert_true(fake_cond(t, WL_PATH("wb"), "QuotaReserved"));

	seed(t, K_WORKLOAD, lq_workload("wc", "lq-b", "1", "2026-01-01T00:05:00Z"));
	finish_elsewhere(t, WL_PATH("wb"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("wc"), "QuotaReserved"));
	assert_false(fake_cond(t, WL_PATH("wa"), "QuotaReserved"));
}

/* --- the hold's discovery (hold.c) --------------------------------------------------------- */

/* A server as discovery sees it: what it lists, whether a Job keeps spec.scheduling, and how
 * many of the first requests answer 503. */
struct server_shape {
	int map, podgroups, keeps, unavailable;
	int requests, probes;
	char probe_query[128];
};

static void shape_responder(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	struct server_shape *s = arg;
	const char *body = NULL;
	s->requests++;
	resp->content_type = "application/json";
	resp->status = 200;
	if (s->unavailable > 0) {
		s->unavailable--;
		resp->status = 503;
		body = "{\"kind\":\"Status\"}";
	} else if (!strcmp(req->path, "/apis/admissionregistration.k8s.io/v1")) {
		body = s->map ? "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":"
				"\"mutatingadmissionpolicies\"},"
				"{\"name\":\"mutatingadmissionpolicybindings\"},{\"name\":"
				"\"validatingadmissionpolicies\"}]}" :
				"{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":"
				"\"validatingadmissionpolicies\"}]}";
	} else if (!strcmp(req->path, "/apis/scheduling.k8s.io/v1beta1") && s->podgroups) {
		body = "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"podgroups\"},{"
		       "\"name\":\"workloads\"}]}";
	} else if (!strcmp(req->method, "POST") &&
		   !strcmp(req->path, "/apis/batch/v1/namespaces/muster-system/jobs")) {
		s->probes++;
		snprintf(s->probe_query, sizeof(s->probe_query), "%s", req->query);
		resp->status = s->keeps ? 201 : 422;
		body = s->keeps ?
			       "{\"kind\":\"Job\",\"spec\":{\"scheduling\":{\"schedulingPolicy\":{"
			       "\"gang\":{}}}}}" :
			       "{\"kind\":\"Status\",\"message\":\"spec.scheduling: Forbidden\"}";
	} else {
		resp->status = 404;
		body = "{\"kind\":\"Status\",\"reason\":\"NotFound\"}";
	}
	resp->body = strdup(body);
	resp->body_len = strlen(body);
}

static int known_calls;
static void on_known(struct mgr *m)
{
	(void)m;
	known_calls++;
}

struct decision {
	int known, policy, gang, failed;
};

/* Runs discovery against shape with the modes given, and says what it decided. */
static void discover(struct server_shape *shape, enum hold_mode hold, enum gang_mode gang,
		     struct decision *out)
{
	uv_loop_t loop;
	struct fake_api *api;
	struct muster_config conf;
	struct mgr m;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(fake_api_start(&loop, shape_responder, shape, &api), 0);
	config_defaults(&conf);
	conf.client_qps = 0;
	conf.hold_mode = hold;
	conf.gang_mode = gang;
	snprintf(conf.namespace_name, sizeof(conf.namespace_name), "muster-system");
	struct kube_config cfg = { .server = (char *)fake_api_url(api) };
	assert_int_equal(mgr_init_for_test(&m, &loop, &cfg, &conf), 0);
	known_calls = 0;
	assert_int_equal(hold_discover(&m, on_known), 0);
	uint64_t deadline = uv_hrtime() + 5000 * MS;
	while (!m.hold.known && !m.failed && uv_hrtime() < deadline)
		uv_run(&loop, UV_RUN_ONCE);
	assert_true(m.hold.known || m.failed);
	assert_int_equal(known_calls, m.hold.known);
	*out = (struct decision){ m.hold.known, m.hold.policy, m.hold.gang, m.failed };
	uv_timer_stop(&m.hold.retry);
	uv_close((uv_handle_t *)&m.hold.retry, NULL);
	mgr_release_for_test(&m);
	fake_api_stop(api);
	deadline = uv_hrtime() + 2000 * MS;
	while (uv_run(&loop, UV_RUN_NOWAIT) && uv_hrtime() < deadline)
		;
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* Each server shape gets the hold and gang Kueue users on that version would want, asks only
 * what it must, and a server still starting is asked again. */
static void test_hold_discovery(void **state)
{
	(void)state;
	struct decision got;
	/* 1.37 with the gates: policies and gang, after one dry-run Job. */
	struct server_shape full = { 1, 1, 1, 0, 0, 0, "" };
	discover(&full, HOLD_AUTO, GANG_AUTO, &got);
	assert_true(got.policy);
	assert_true(got.gang);
	assert_int_equal(full.probes, 1);
	assert_string_equal(full.probe_query, "dryRun=All");
	/* 1.35: the webhook, no gang, and no probe. */
	struct server_shape old = { 0, 0, 0, 0, 0, 0, "" };
	discover(&old, HOLD_AUTO, GANG_AUTO, &got);
	assert_false(got.policy);
	assert_false(got.gang);
	assert_int_equal(old.probes, 0);
	/* 1.37 with PodGroups but without WorkloadWithJob: the probe is refused, no gang. */
	struct server_shape dropped = { 1, 1, 0, 0, 0, 0, "" };
	discover(&dropped, HOLD_AUTO, GANG_AUTO, &got);
	assert_true(got.policy);
	assert_false(got.gang);
	/* Configured off: the webhook, no gang, no question about PodGroups. */
	struct server_shape off = { 1, 1, 1, 0, 0, 0, "" };
	discover(&off, HOLD_WEBHOOK, GANG_DISABLED, &got);
	assert_false(got.policy);
	assert_false(got.gang);
	assert_int_equal(off.requests, 1);
	/* A server that answers 503 at first is asked again. */
	struct server_shape starting = { 1, 1, 1, 2, 0, 0, "" };
	discover(&starting, HOLD_AUTO, GANG_AUTO, &got);
	assert_true(got.policy);
	assert_true(got.gang);
	assert_int_equal(starting.requests, 5);
	/* A demand the server can't meet stops the start. */
	struct server_shape no_gang = { 1, 0, 0, 0, 0, 0, "" };
	discover(&no_gang, HOLD_AUTO, GANG_ENABLED, &got);
	assert_true(got.failed);
	assert_false(got.known);
}


/* --- one record per Workload, one forget ------------------------------------------------- */

static void exact_placement_with_ledger(struct muster_config *c)
{
	with_ledger(c);
	c->node_feasibility = 1;
	c->placement_mode = PLACEMENT_EXACT;
}

static int setup_records(void **state)
{
	return setup_with(state, exact_placement_with_ledger);
}

/* A Workload admitted (the assumed object standing in for it), planned on a node, a pod given
 * its node, its admission open in the ledger, and the writer's bookkeeping of its write and
 * Events: all of it is one record, and deleting the Workload leaves none. */
static void test_delete_forgets_admitted_record(void **state)
{
	struct t *t = *state;
	seed(t, K_NODE,
	     J("{'metadata':{'name':'n1','uid':'n1-uid','labels':"
	       "{'kubernetes.io/hostname':'n1-host'}},'status':{'allocatable':"
	       "{'cpu':'8','memory':'8Gi','pods':'110'},"
	       "'conditions':[{'type':'Ready','status':'True'}]}}"));
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("w1", "2", 0, "2026-01-01T00:00:00Z"));
	settle(t);
	const struct wl_record *r = wl_record_get(&t->m, "ns/w1");
	assert_non_null(r);
	assert_non_null(r->assumed);
	assert_non_null(r->plan);
	assert_int_equal(r->plan->n_podsets, 1);
	assert_string_equal(r->plan->podsets[0].podset, "main");
	assert_int_equal(r->plan->podsets[0].n_slots, 1);
	assert_string_equal(r->plan->podsets[0].slots[0].node, "n1");
	assert_non_null(r->open_admission);
	assert_string_equal(r->open_admission, "uid-w1");
	assert_string_equal(r->open_admission + strlen("uid-w1") + 1, "cq");
	assert_non_null(r->write.evented); /* QuotaReserved and Admitted */
	assert_non_null(r->write.landed); /* the cache has not caught up with the admission */
	assert_false(r->pending);
	/* A pod of its gang, gated for its node, gets the plan's node, and the plan keeps it. */
	json_t *pod = J("{'metadata':{'namespace':'ns','name':'p1','labels':{'%s':'main'},"
			"'annotations':{'%s':'w1'}},'spec':{'schedulingGates':"
			"[{'name':'kueue.x-k8s.io/topology'}],'containers':[{'name':'c',"
			"'resources':{'requests':{'cpu':'2'}}}]}}",
			LABEL_PODSET, ANNOTATION_WORKLOAD);
	json_t *stored = fake_api_put(t->api, "/api/v1/namespaces/ns/pods/p1", pod);
	store(t, K_POD, "ns/p1", json_deep_copy(stored));
	settle(t);
	stored = fake_api_get(t->api, "/api/v1/namespaces/ns/pods/p1");
	assert_string_equal(json_string_value(json_object_get(obj_path(stored, "spec.nodeSelector"),
							      LABEL_HOSTNAME)),
			    "n1-host");
	assert_int_equal(r->plan->podsets[0].n_assigned, 1);
	assert_string_equal(r->plan->podsets[0].assigned[0].pod, "ns/p1");
	assert_string_equal(r->plan->podsets[0].assigned[0].node, "n1");
	assert_int_equal(wl_records_count(&t->m), 1);
	/* Deleted while its admission is still assumed: the one forget takes it all, the node's
	 * reservation goes, and the ledger's admission ends. */
	delete_workload(t, "ns/w1");
	assert_int_equal(wl_records_count(&t->m), 0);
	assert_null(wl_record_get(&t->m, "ns/w1"));
	assert_null(workload_view(&t->m, "ns/w1"));
	assert_int_equal(cq_cpu_usage(t), 0);
	assert_int_equal(t->m.records.pending, 0);
	assert_int_equal(t->m.records.unwritten, 0);
}

/* Records owing the same wait share one copy of it (a queue's worth of pending Workloads owe
 * the same few hundred bytes), and the copy goes with the last record owing it. */
static void test_unwritten_waits_shared(void **state)
{
	struct t *t = *state;
	struct wl_record *a = wl_record_make(&t->m, "ns/a"), *b = wl_record_make(&t->m, "ns/b");
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(wl_record_set_unwritten(&t->m, a, "Pending", "no quota"), 0);
	assert_int_equal(wl_record_set_unwritten(&t->m, b, "Pending", "no quota"), 0);
	assert_ptr_equal(a->unwritten, b->unwritten);
	assert_string_equal(a->unwritten, "Pending");
	assert_string_equal(wl_record_unwritten_message(b), "no quota");
	assert_int_equal(t->m.records.waits.len, 1);
	assert_int_equal(t->m.records.unwritten, 2);
	/* Another wait for one of them: two copies, each with its own text. */
	assert_int_equal(wl_record_set_unwritten(&t->m, b, "Pending", "no quota, still"), 0);
	assert_ptr_not_equal(a->unwritten, b->unwritten);
	assert_string_equal(wl_record_unwritten_message(a), "no quota");
	assert_string_equal(wl_record_unwritten_message(b), "no quota, still");
	assert_int_equal(t->m.records.waits.len, 2);
	assert_int_equal(t->m.records.unwritten, 2);
	wl_record_forget(&t->m, "ns/a");
	assert_int_equal(t->m.records.waits.len, 1);
	assert_int_equal(wl_record_set_unwritten(&t->m, b, NULL, NULL), 0);
	assert_int_equal(t->m.records.waits.len, 0);
	assert_int_equal(t->m.records.unwritten, 0);
	wl_record_forget(&t->m, "ns/b");
}

/* A waiting Workload's record: pending, the wait it owes its status, when it came next in line
 * and its deadline; a Workload preempted for it keeps who preempts it. Deleting both leaves no
 * record, and the counts follow. */
static void test_delete_forgets_pending_record(void **state)
{
	struct t *t = *state;
	seed_queue(t, "2", NULL);
	seed(t, K_WORKLOAD, workload("low", "2", 0, "2026-01-01T00:00:00Z"));
	converge(t);
	assert_true(fake_cond(t, WL_PATH("low"), "QuotaReserved"));
	seed(t, K_WORKLOAD, workload("high", "2", 100, "2026-01-01T00:00:01Z"));
	run_until_sent(t); /* the eviction of low, in flight */
	const struct wl_record *low = wl_record_get(&t->m, "ns/low");
	assert_non_null(low);
	assert_string_equal(low->preempting_cq, "cq");
	settle(t);
	assert_null(low->preempting_cq); /* counted when the eviction landed */
	const struct wl_record *high = wl_record_get(&t->m, "ns/high");
	assert_non_null(high);
	assert_true(high->pending);
	assert_non_null(high->unwritten);
	assert_true(high->has_front);
	assert_true(high->has_deadline);
	assert_int_equal(t->m.records.pending, 1);
	assert_int_equal(t->m.records.unwritten, 1);
	delete_workload(t, "ns/high");
	assert_null(wl_record_get(&t->m, "ns/high"));
	assert_int_equal(t->m.records.pending, 0);
	assert_int_equal(t->m.records.unwritten, 0);
	delete_workload(t, "ns/low");
	assert_int_equal(wl_records_count(&t->m), 0);
	/* The deadline of the one deleted first is stale now, and finds nothing when it comes. */
	advance(t, 10000);
	assert_int_equal(wl_records_count(&t->m), 0);
}

/* Deleted while a write of its own is in flight: the record keeps only that write's flag (its
 * completion still comes), and the reconcile the completion brings forgets it for good. */
static void test_delete_during_write_keeps_only_the_flight(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	seed(t, K_WORKLOAD, workload("w1", "2", 0, "2026-01-01T00:00:00Z"));
	run_until_sent(t);
	assert_true(writer_busy(&t->m, K_WORKLOAD, "ns/w1"));
	uncache(t, K_WORKLOAD, "ns/w1");
	mgr_pump_once(&t->m);
	const struct wl_record *r = wl_record_get(&t->m, "ns/w1");
	assert_non_null(r);
	assert_true(r->write.inflight);
	assert_null(r->assumed);
	assert_null(r->unwritten);
	assert_false(r->pending);
	assert_false(r->has_deadline);
	assert_int_equal(wl_records_check(&t->m), 0);
	settle(t);
	assert_int_equal(wl_records_count(&t->m), 0);
	assert_int_equal(cq_cpu_usage(t), 0);
}

/* What muster can't use of a ClusterQueue is its record, typed, and goes with it. */
static void test_cq_record(void **state)
{
	struct t *t = *state;
	seed_queue(t, "4", NULL);
	assert_null(cq_record_get(&t->m, "cq"));
	seed(t, K_CQ,
	     J("{'metadata':{'name':'checked'},'spec':{'namespaceSelector':{},"
	       "'admissionChecksStrategy':{'admissionChecks':[{'name':'ac'}]},"
	       "'resourceGroups':[{'coveredResources':['cpu'],'flavors':"
	       "[{'name':'default','resources':[{'name':'cpu','nominalQuota':'1'}]}]}]}}"));
	converge(t);
	const struct cq_record *r = cq_record_get(&t->m, "checked");
	assert_non_null(r);
	assert_non_null(strstr(r->inactive, "admission checks"));
	uncache(t, K_CQ, "checked");
	settle(t);
	assert_null(cq_record_get(&t->m, "checked"));
}

int main(void)
{
	log_set_level(getenv("T_DEBUG") ? LOG_DEBUG : LOG_ERROR);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_admit_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_forgets_admitted_record, setup_records,
						teardown_ledger),
		cmocka_unit_test_setup_teardown(test_delete_forgets_pending_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unwritten_waits_shared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_during_write_keeps_only_the_flight,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cq_record, setup, teardown),
		cmocka_unit_test(test_write_answer),
		cmocka_unit_test_setup_teardown(test_store_views_kept_until_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_keeps_event_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bare_workload_finished_elsewhere, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_admission_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admission_while_write_in_flight, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_outage_backs_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_creates_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_owner_is_controller_reference, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_job_finishes_during_workload_write, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_eviction_sequence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_rebuilds_usage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_admission_repaired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_message_not_churned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_write_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_pending_written_after_a_while, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cohort_self_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_objects_get_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_model_is_placement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycles_batched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pump_yields_and_cycle_waits_for_batch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cycle_not_starved_by_trickle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pump_stages_take_turns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events_shape_and_rate_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_visibility_pending_workloads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_visibility_why, setup, teardown),
		cmocka_unit_test_setup_teardown(test_visibility_eta, setup, teardown),
		cmocka_unit_test_setup_teardown(test_visibility_history_and_usage, setup_ledger,
						teardown_ledger),
		cmocka_unit_test_setup_teardown(test_ledger_record_texts, setup_ledger,
						teardown_ledger),
		cmocka_unit_test_setup_teardown(test_metrics_follow_landed_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_time_loop_turns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_wait_from_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cq_status_update_is_not_applied,
						setup_cq_resources, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_cq_resources_and_deletion,
						setup_cq_resources, teardown),
		cmocka_unit_test_setup_teardown(test_queue_status_coalesced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_status_change_during_conflicted_write,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_status_write_guarded_by_own_last_write,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rayjob_admitted_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raycluster_evicted_and_restored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pod_group_waits_whole, setup_pods, teardown),
		cmocka_unit_test_setup_teardown(test_pod_group_short_of_quota_blocks_nothing,
						setup_pods, teardown),
		cmocka_unit_test_setup_teardown(test_pod_group_evicted, setup_pods, teardown),
		cmocka_unit_test_setup_teardown(test_job_without_queue_name_held, setup_manage_all,
						teardown),
		cmocka_unit_test(test_hold_discovery),
		cmocka_unit_test_setup_teardown(test_requeue_backoff_and_deactivation,
						setup_pods_ready, teardown),
		cmocka_unit_test_setup_teardown(test_pods_ready_off_writes_nothing,
						setup_pods_ready_off, teardown),
		cmocka_unit_test_setup_teardown(test_pods_ready_counts_from_start, setup_pods_ready,
						teardown),
		cmocka_unit_test_setup_teardown(test_pods_ready_counts_from_release,
						setup_pods_ready, teardown),
		cmocka_unit_test_setup_teardown(test_fair_sharing_status, setup_fair_sharing,
						teardown),
		cmocka_unit_test_setup_teardown(test_afs_orders_and_samples, setup_afs, teardown),
		cmocka_unit_test_setup_teardown(test_afs_restart_seeds_from_status, setup_afs,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
