/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decision ledger (ledger/ledger.h): append, flush, reopen; every query against answers
 * computed by hand; retention by age and by size; schema versions; a full queue; disk errors;
 * reads beside the writer; bad paths. Prints the committed throughput (a figure, not a test).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "ledger/ledger.h"
#include "tests/unit/test_json.h"

#define HOUR_MS 3600000LL
#define T0 1800000000000LL /* 2027-01-15T08:00:00Z */

/* ------------------------------------------------------------------------------------------ */
/* Fixture: a fresh directory per test, an injectable clock */

struct fixture {
	char dir[64];
	char path[96];
};

static _Atomic int64_t test_now = T0;

static int64_t test_clock(void *arg)
{
	(void)arg;
	return atomic_load(&test_now);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_ledger.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/ledger.db", f->dir);
	atomic_store(&test_now, T0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	const char *suffixes[] = { "", "-wal", "-shm", "-journal" };
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char p[128];
		snprintf(p, sizeof(p), "%s%s", f->path, suffixes[i]);
		unlink(p);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

static struct ledger_options options(const struct fixture *f)
{
	return (struct ledger_options){ .path = f->path, .batch_ms = 5, .clock = test_clock };
}

static struct ledger *open_ledger(const struct ledger_options *opts)
{
	struct ledger *l = NULL;
	assert_int_equal(ledger_open(opts, &l), 0);
	assert_non_null(l);
	return l;
}

static void append(struct ledger *l, int64_t time_ms, enum ledger_event event, const char *ns,
		   const char *name, const char *uid, const char *cq, const char *resources)
{
	struct ledger_record r = {
		.time_ms = time_ms,
		.event = event,
		.ns = ns,
		.name = name,
		.uid = uid,
		.cluster_queue = cq,
		.local_queue = "lq",
		.resources = resources,
		.reason = event == LEDGER_ADMIT ? "QuotaReserved" : "Test",
	};
	assert_int_equal(ledger_append(l, &r), 0);
}

/* Compares JSON values, numbers within 1e-9 (resource-hours are sums of doubles). */
static void assert_json_near(json_t *got, json_t *want, const char *where)
{
	if (json_is_number(want)) {
		if (!json_is_number(got) ||
		    fabs(json_number_value(got) - json_number_value(want)) > 1e-9)
			fail_msg("%s: got %g, want %g", where, json_number_value(got),
				 json_number_value(want));
		return;
	}
	if (json_is_object(want)) {
		const char *key;
		json_t *value;
		if (!json_is_object(got) || json_object_size(got) != json_object_size(want))
			fail_msg("%s: object keys differ", where);
		json_object_foreach(want, key, value)
		{
			char sub[256];
			snprintf(sub, sizeof(sub), "%s.%s", where, key);
			assert_json_near(json_object_get(got, key), value, sub);
		}
		return;
	}
	if (json_is_array(want)) {
		if (!json_is_array(got) || json_array_size(got) != json_array_size(want))
			fail_msg("%s: array sizes differ", where);
		for (size_t i = 0; i < json_array_size(want); i++) {
			char sub[256];
			snprintf(sub, sizeof(sub), "%s[%zu]", where, i);
			assert_json_near(json_array_get(got, i), json_array_get(want, i), sub);
		}
		return;
	}
	if (!json_equal(got, want)) {
		char *g = json_dumps(got, JSON_ENCODE_ANY), *w = json_dumps(want, JSON_ENCODE_ANY);
		fail_msg("%s: got %s, want %s", where, g ? g : "NULL", w ? w : "NULL");
	}
}

static void assert_json_is(json_t *got, json_t *want_owned)
{
	if (!json_equal(got, want_owned)) {
		char *g = json_dumps(got, JSON_SORT_KEYS),
		     *w = json_dumps(want_owned, JSON_SORT_KEYS);
		fail_msg("got  %s\nwant %s", g ? g : "NULL", w ? w : "NULL");
	}
	json_decref(want_owned);
}

/* The names of a DecisionList's items, in order, joined by spaces; events after a colon. */
static void assert_items(json_t *list, const char *want)
{
	char got[1024] = "";
	json_t *items = json_object_get(list, "items"), *item;
	size_t i;
	json_array_foreach(items, i, item)
	{
		size_t n = strlen(got);
		snprintf(got + n, sizeof(got) - n, "%s%s:%s", i ? " " : "",
			 json_string_value(json_object_get(item, "name")),
			 json_string_value(json_object_get(item, "event")));
	}
	assert_string_equal(got, want);
}

/* The history of a workload or a ClusterQueue, as assert_items spells it. */
static void assert_workload_history(struct ledger *l, const char *ns, const char *name,
				    unsigned limit, const char *want)
{
	json_t *list = NULL;
	assert_int_equal(ledger_workload_history(l, ns, name, limit, &list), 0);
	assert_items(list, want);
	json_decref(list);
}

static void assert_queue_history(struct ledger *l, const char *cq, int64_t since_ms, unsigned limit,
				 const char *want)
{
	json_t *list = NULL;
	assert_int_equal(ledger_cluster_queue_history(l, cq, since_ms, limit, &list), 0);
	assert_items(list, want);
	json_decref(list);
}

static sqlite3 *raw_open(const char *path)
{
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	return db;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static int64_t raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ------------------------------------------------------------------------------------------ */
/* Append, flush, close, reopen */

static void test_ledger_records_survive_close_and_reopen(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = options(f);
	struct ledger *l = open_ledger(&opts);
	struct ledger_record admit = {
		.time_ms = T0 + 123,
		.event = LEDGER_ADMIT,
		.ns = "team-a",
		.name = "job-a-1b2c3",
		.uid = "u-1",
		.cluster_queue = "cq-a",
		.local_queue = "lq-a",
		.flavors = "{\"main\":{\"nvidia.com/gpu\":\"a100\"}}",
		.resources = "{\"nvidia.com/gpu\":\"8\",\"cpu\":\"4\"}",
		.reason = "QuotaReserved",
		.message = "Quota reserved in ClusterQueue cq-a",
		.cluster_queue_usage = "{\"a100\":{\"nvidia.com/gpu\":\"8\"}}",
	};
	assert_int_equal(ledger_append(l, &admit), 0);
	struct ledger_record preempt = {
		.event = LEDGER_PREEMPT, /* time 0: the ledger's clock */
		.ns = "team-a",
		.name = "job-a-1b2c3",
		.uid = "u-1",
		.cluster_queue = "cq-a",
		.reason = "InCohortReclamation",
		.preemptor = "team-b/job-b",
		.flavors = "not json",
	};
	atomic_store(&test_now, T0 + 1000);
	assert_int_equal(ledger_append(l, &preempt), 0);
	assert_int_equal(ledger_flush(l), 0);
	struct ledger_stats st;
	ledger_stats(l, &st);
	assert_int_equal(st.appended, 2);
	assert_int_equal(st.written, 2);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.queued, 0);
	assert_true(st.batches >= 1);
	assert_true(st.db_bytes > 0);
	ledger_close(l);

	l = open_ledger(&opts);
	json_t *list = NULL;
	assert_int_equal(ledger_workload_history(l, "team-a", "job-a-1b2c3", 10, &list), 0);
	assert_json_is(
		list,
		J("{'kind':'DecisionList','apiVersion':'visibility.muster.io/v1alpha1','items':["
		  "{'id':2,'time':'2027-01-15T08:00:01.000Z','event':'preempt','namespace':'team-a'"
		  ","
		  "'name':'job-a-1b2c3','uid':'u-1','clusterQueue':'cq-a','localQueue':null,"
		  "'flavors':null,'resources':null,'reason':'InCohortReclamation','message':null,"
		  "'preemptor':'team-b/job-b','clusterQueueUsage':null},"
		  "{'id':1,'time':'2027-01-15T08:00:00.123Z','event':'admit','namespace':'team-a',"
		  "'name':'job-a-1b2c3','uid':'u-1','clusterQueue':'cq-a','localQueue':'lq-a',"
		  "'flavors':{'main':{'nvidia.com/gpu':'a100'}},"
		  "'resources':{'nvidia.com/gpu':'8','cpu':'4'},'reason':'QuotaReserved',"
		  "'message':'Quota reserved in ClusterQueue cq-a','preemptor':null,"
		  "'clusterQueueUsage':{'a100':{'nvidia.com/gpu':'8'}}}]}"));
	json_decref(list);
	/* Ids go on after a reopen. */
	append(l, T0 + 2000, LEDGER_ADMIT, "team-a", "job-a-1b2c3", "u-1", "cq-a", NULL);
	ledger_close(l);
	sqlite3 *db = raw_open(f->path);
	assert_int_equal(raw_int(db, "SELECT max(id) FROM decisions"), 3);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), LEDGER_SCHEMA_VERSION);
	assert_int_equal(raw_int(db, "PRAGMA auto_vacuum"), 2); /* incremental */
	sqlite3_close(db);
}

/* What the killed child below writes: KILLED_WORKLOADS admits, each finished KILLED_LAG admits
 * later but the last KILLED_LAG, and the first admitted twice (the repeat closes the first). */
#define KILLED_WORKLOADS 400
#define KILLED_LAG 20

/* The child: commits the records in batches of 13 (the baseline's), each waited for, and dies
 * by SIGKILL without closing: no checkpoint on close, the WAL as the last commit left it. */
static void write_then_die(const struct ledger_options *opts)
{
	struct ledger *l = NULL;
	int appended = 0;
	if (ledger_open(opts, &l) != 0)
		_exit(2);
	for (int i = 0; i < KILLED_WORKLOADS; i++) {
		char name[32], uid[32];
		struct ledger_record r = { .time_ms = T0 + 1000LL * (i + 1),
					   .ns = "ns",
					   .name = name,
					   .uid = uid,
					   .cluster_queue = "cq",
					   .resources = "{\"cpu\":\"1\"}" };
		for (int k = 0; k < 2; k++) {
			int w = k == 0 ? i : i - KILLED_LAG;
			if (w < 0)
				continue;
			snprintf(name, sizeof(name), "w%d", w);
			snprintf(uid, sizeof(uid), "u%d", w);
			r.event = k == 0 ? LEDGER_ADMIT : LEDGER_FINISH;
			if (ledger_append(l, &r) != 0)
				_exit(3);
			if (++appended % 13 == 0 && ledger_flush(l) != 0)
				_exit(4);
		}
		if (i == 0) { /* w0 again, without an end between */
			r.event = LEDGER_ADMIT;
			r.time_ms = T0 + 1500;
			if (ledger_append(l, &r) != 0)
				_exit(3);
			appended++;
		}
	}
	if (ledger_flush(l) != 0)
		_exit(4);
	raise(SIGKILL);
	_exit(5);
}

/* A writer killed after its commits: the file reopens and holds every committed row, with the
 * admissions closed by id as the records came (the writer finds an open admission, then closes
 * it by id; it skips the schema's CHECK). */
static void test_ledger_reopen_after_kill_reads_every_committed_row(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = options(f);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		write_then_die(&opts);
	int status = 0;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	struct ledger *l = open_ledger(&opts);
	sqlite3 *db = raw_open(f->path);
	int64_t finished = KILLED_WORKLOADS - KILLED_LAG;
	assert_int_equal(raw_int(db, "SELECT count(*) FROM decisions"),
			 KILLED_WORKLOADS + 1 + finished);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM decisions WHERE event = 'finish'"),
			 finished);
	/* Every finish closed its admission at its own time; the repeated admit closed the
	 * first; the last KILLED_LAG are open. */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM decisions a JOIN decisions e"
				     " ON e.uid = a.uid AND e.event = 'finish'"
				     " WHERE a.event = 'admit' AND a.end_event = 'finish'"
				     " AND a.ended_ms = e.time_ms"),
			 finished);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM decisions WHERE uid = 'u0'"
				     " AND end_event = 'admit' AND ended_ms = 1800000001500"),
			 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM decisions WHERE event = 'admit'"
				     " AND ended_ms IS NULL"),
			 KILLED_LAG);
	assert_int_equal(raw_int(db,
				 "SELECT count(*) FROM decisions WHERE event NOT IN"
				 " ('admit','preempt','evict','requeue','finish','deactivate')"),
			 0);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(db);

	assert_workload_history(l, "ns", "w7", 10, "w7:finish w7:admit");
	assert_workload_history(l, "ns", "w0", 10, "w0:finish w0:admit w0:admit");
	struct ledger_runtime runtimes[4];
	size_t n = 0;
	assert_int_equal(ledger_recent_runtimes(l, "cq", runtimes, 4, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(runtimes[0].runtime_ms, 1000LL * KILLED_LAG);
	ledger_close(l);
}

/* ------------------------------------------------------------------------------------------ */
/* Queries */

/*
 * Three workloads, the figures of test_ledger_usage_*:
 *   w1 team-a/cq-a uid u1: admitted T0..T0+2h, 8 GPU + 4 CPU, then finished;
 *   w2 team-b/cq-a uid u2: admitted from T0+1h, still running, 2 GPU + 500m CPU;
 *   w3 team-a/cq-b uid u3: admitted T0-2h..T0-1h (evicted), then T0+30m..T0+90m (requeued),
 *      1 CPU;
 *   w4 team-c/cq-c uid u4: admitted at T0+1h and again at T0+2h without an end between (a
 *      repeated admit), finished at T0+150m, 2 CPU.
 */
static struct ledger *usage_fixture(const struct fixture *f)
{
	struct ledger_options opts = options(f);
	struct ledger *l = open_ledger(&opts);
	const char *big = "{\"nvidia.com/gpu\":\"8\",\"cpu\":\"4\"}";
	const char *small = "{\"nvidia.com/gpu\":\"2\",\"cpu\":\"500m\"}";
	append(l, T0 - 2 * HOUR_MS, LEDGER_ADMIT, "team-a", "w3", "u3", "cq-b", "{\"cpu\":\"1\"}");
	append(l, T0 - HOUR_MS, LEDGER_EVICT, "team-a", "w3", "u3", "cq-b", NULL);
	append(l, T0, LEDGER_ADMIT, "team-a", "w1", "u1", "cq-a", big);
	append(l, T0 + HOUR_MS / 2, LEDGER_ADMIT, "team-a", "w3", "u3", "cq-b", "{\"cpu\":\"1\"}");
	append(l, T0 + HOUR_MS, LEDGER_ADMIT, "team-b", "w2", "u2", "cq-a", small);
	append(l, T0 + HOUR_MS, LEDGER_ADMIT, "team-c", "w4", "u4", "cq-c", "{\"cpu\":\"2\"}");
	append(l, T0 + 3 * HOUR_MS / 2, LEDGER_REQUEUE, "team-a", "w3", "u3", "cq-b", NULL);
	append(l, T0 + 2 * HOUR_MS, LEDGER_FINISH, "team-a", "w1", "u1", "cq-a", NULL);
	append(l, T0 + 2 * HOUR_MS, LEDGER_ADMIT, "team-c", "w4", "u4", "cq-c", "{\"cpu\":\"2\"}");
	append(l, T0 + 5 * HOUR_MS / 2, LEDGER_FINISH, "team-c", "w4", "u4", "cq-c", NULL);
	assert_int_equal(ledger_flush(l), 0);
	return l;
}

static void test_ledger_workload_history_newest_first_and_limited(void **state)
{
	struct ledger *l = usage_fixture(*state);
	json_t *list = NULL;
	assert_workload_history(l, "team-a", "w3", 10, "w3:requeue w3:admit w3:evict w3:admit");
	assert_workload_history(l, "team-a", "w3", 2, "w3:requeue w3:admit");
	/* Another namespace's workload of the same name is not this one. */
	assert_workload_history(l, "team-b", "w3", 10, "");
	assert_int_equal(ledger_workload_history(l, "team-a", "w3", 0, &list), -EINVAL);
	assert_int_equal(ledger_workload_history(l, "team-a", "w3", LEDGER_HISTORY_MAX + 1, &list),
			 -EINVAL);
	ledger_close(l);
}

static void test_ledger_cluster_queue_history_since_and_limit(void **state)
{
	struct ledger *l = usage_fixture(*state);
	assert_queue_history(l, "cq-a", 0, 10, "w1:finish w2:admit w1:admit");
	assert_queue_history(l, "cq-a", T0 + HOUR_MS, 10, "w1:finish w2:admit");
	assert_queue_history(l, "cq-a", 0, 1, "w1:finish");
	/* Equal times come newest id first. */
	assert_queue_history(l, "cq-c", 0, 10, "w4:finish w4:admit w4:admit");
	assert_queue_history(l, "nope", 0, 10, "");
	ledger_close(l);
}

static void test_ledger_usage_by_queue_clips_at_since_and_counts_open_until_now(void **state)
{
	struct ledger *l = usage_fixture(*state);
	json_t *report = NULL;
	/* since T0+30m, now T0+3h:
	 *   w1 [T0, T0+2h] clipped to 1.5 h: 12 GPU-h, 6 CPU-h;
	 *   w2 [T0+1h, now] 2 h: 4 GPU-h, 1 CPU-h;
	 *   w3 only its second admission, 1 h: 1 CPU-h (the first ended before since);
	 *   w4 [T0+1h, T0+2h] + [T0+2h, T0+2.5h]: 1.5 h of 2 CPU, not counted twice. */
	assert_int_equal(ledger_usage(l, T0 + HOUR_MS / 2, T0 + 3 * HOUR_MS, LEDGER_BY_QUEUE,
				      &report),
			 0);
	json_t *want =
		J("{'kind':'UsageReport','apiVersion':'visibility.muster.io/v1alpha1',"
		  "'since':'2027-01-15T08:30:00.000Z','until':'2027-01-15T11:00:00.000Z',"
		  "'by':'queue','items':["
		  "{'key':'cq-a','resourceHours':{'nvidia.com/gpu':16.0,'cpu':7.0},'workloads':2},"
		  "{'key':'cq-b','resourceHours':{'cpu':1.0},'workloads':1},"
		  "{'key':'cq-c','resourceHours':{'cpu':3.0},'workloads':1}]}");
	assert_json_near(report, want, "report");
	json_decref(want);
	json_decref(report);

	/* An earlier now cuts the open admission: since T0, now T0+90m:
	 *   w1 1.5 h: 12 GPU-h, 6 CPU-h; w2 0.5 h: 1 GPU-h, 0.25 CPU-h; w3 1 h: 1 CPU-h;
	 *   w4 0.5 h: 1 CPU-h. */
	assert_int_equal(ledger_usage(l, T0, T0 + 3 * HOUR_MS / 2, LEDGER_BY_QUEUE, &report), 0);
	want = J("{'kind':'UsageReport','apiVersion':'visibility.muster.io/v1alpha1',"
		 "'since':'2027-01-15T08:00:00.000Z','until':'2027-01-15T09:30:00.000Z',"
		 "'by':'queue','items':["
		 "{'key':'cq-a','resourceHours':{'nvidia.com/gpu':13.0,'cpu':6.25},'workloads':2},"
		 "{'key':'cq-b','resourceHours':{'cpu':1.0},'workloads':1},"
		 "{'key':'cq-c','resourceHours':{'cpu':1.0},'workloads':1}]}");
	assert_json_near(report, want, "report");
	json_decref(want);
	json_decref(report);

	/* A window before everything but w3's first admission; an empty one. */
	assert_int_equal(ledger_usage(l, T0 - 3 * HOUR_MS, T0, LEDGER_BY_QUEUE, &report), 0);
	want = J(
		"{'kind':'UsageReport','apiVersion':'visibility.muster.io/v1alpha1',"
		"'since':'2027-01-15T05:00:00.000Z','until':'2027-01-15T08:00:00.000Z',"
		"'by':'queue','items':[{'key':'cq-b','resourceHours':{'cpu':1.0},'workloads':1}]}");
	assert_json_near(report, want, "report");
	json_decref(want);
	json_decref(report);
	assert_int_equal(ledger_usage(l, T0 - 9 * HOUR_MS, T0 - 8 * HOUR_MS, LEDGER_BY_QUEUE,
				      &report),
			 0);
	assert_int_equal(json_array_size(json_object_get(report, "items")), 0);
	json_decref(report);
	assert_int_equal(ledger_usage(l, T0, T0 - 1, LEDGER_BY_QUEUE, &report), -EINVAL);
	ledger_close(l);
}

static void test_ledger_usage_by_namespace(void **state)
{
	struct ledger *l = usage_fixture(*state);
	json_t *report = NULL;
	/* The first window of the previous test, grouped by namespace: team-a has w1 and w3. */
	assert_int_equal(ledger_usage(l, T0 + HOUR_MS / 2, T0 + 3 * HOUR_MS, LEDGER_BY_NAMESPACE,
				      &report),
			 0);
	json_t *want = J(
		"{'kind':'UsageReport','apiVersion':'visibility.muster.io/v1alpha1',"
		"'since':'2027-01-15T08:30:00.000Z','until':'2027-01-15T11:00:00.000Z',"
		"'by':'namespace','items':["
		"{'key':'team-a','resourceHours':{'nvidia.com/gpu':12.0,'cpu':7.0},'workloads':2},"
		"{'key':'team-b','resourceHours':{'nvidia.com/gpu':4.0,'cpu':1.0},'workloads':1},"
		"{'key':'team-c','resourceHours':{'cpu':3.0},'workloads':1}]}");
	assert_json_near(report, want, "report");
	json_decref(want);
	json_decref(report);
	ledger_close(l);
}

static void test_ledger_recent_runtimes_newest_first(void **state)
{
	struct ledger *l = usage_fixture(*state);
	struct ledger_runtime rt[4];
	size_t n = 99;
	/* cq-a: only w1 finished (w2 runs). cq-b: w3 was evicted and requeued, never finished.
	 * cq-c: w4's runtime is its last admission's, 30 min. */
	assert_int_equal(ledger_recent_runtimes(l, "cq-a", rt, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rt[0].finished_ms, T0 + 2 * HOUR_MS);
	assert_int_equal(rt[0].runtime_ms, 2 * HOUR_MS);
	assert_int_equal(ledger_recent_runtimes(l, "cq-b", rt, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ledger_recent_runtimes(l, "cq-c", rt, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rt[0].runtime_ms, HOUR_MS / 2);

	/* Three more in cq-a; the newest two come back, newest first. */
	for (int i = 1; i <= 3; i++) {
		char name[16], uid[16];
		snprintf(name, sizeof(name), "r%d", i);
		snprintf(uid, sizeof(uid), "ur%d", i);
		append(l, T0 + 10 * HOUR_MS, LEDGER_ADMIT, "team-a", name, uid, "cq-a", "{}");
		append(l, T0 + 10 * HOUR_MS + i * 60000, LEDGER_FINISH, "team-a", name, uid, "cq-a",
		       NULL);
	}
	assert_int_equal(ledger_flush(l), 0);
	assert_int_equal(ledger_recent_runtimes(l, "cq-a", rt, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rt[0].runtime_ms, 3 * 60000);
	assert_int_equal(rt[1].runtime_ms, 2 * 60000);
	assert_int_equal(ledger_recent_runtimes(l, "cq-a", rt, 0, &n), 0);
	assert_int_equal(n, 0);
	ledger_close(l);
}

/* ------------------------------------------------------------------------------------------ */
/* Retention */

static void test_ledger_retention_by_age_keeps_open_admissions(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = options(f);
	opts.retention_age_ms = 24 * HOUR_MS;
	struct ledger *l = open_ledger(&opts);
	append(l, T0 - 72 * HOUR_MS, LEDGER_ADMIT, "ns", "long", "u-long", "cq", "{\"cpu\":\"1\"}");
	append(l, T0 - 50 * HOUR_MS, LEDGER_ADMIT, "ns", "old", "u-old", "cq", "{\"cpu\":\"1\"}");
	append(l, T0 - 48 * HOUR_MS, LEDGER_FINISH, "ns", "old", "u-old", "cq", NULL);
	append(l, T0 - HOUR_MS, LEDGER_ADMIT, "ns", "new", "u-new", "cq", "{\"cpu\":\"1\"}");
	assert_int_equal(ledger_flush(l), 0);

	/* old's two rows went; long's admission is open, so it stays, however old. */
	assert_queue_history(l, "cq", 0, 10, "new:admit long:admit");
	struct ledger_stats st;
	ledger_stats(l, &st);
	assert_int_equal(st.deleted, 2);

	/* Once long finishes, its admission ages from its end (its usage in the last day stays
	 * whole), and goes with its finish a day later. new's admission is still open. */
	append(l, T0, LEDGER_FINISH, "ns", "long", "u-long", "cq", NULL);
	assert_int_equal(ledger_flush(l), 0);
	assert_queue_history(l, "cq", 0, 10, "long:finish new:admit long:admit");
	atomic_store(&test_now, T0 + 25 * HOUR_MS);
	append(l, 0, LEDGER_ADMIT, "ns", "later", "u-later", "cq", NULL);
	assert_int_equal(ledger_flush(l), 0);
	assert_queue_history(l, "cq", 0, 10, "later:admit new:admit");
	ledger_close(l);
}

static void test_ledger_retention_by_size_trims_oldest(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = options(f);
	opts.retention_bytes = 256 << 10;
	struct ledger *l = open_ledger(&opts);
	char message[1001];
	memset(message, 'm', sizeof(message) - 1);
	message[sizeof(message) - 1] = '\0';
	int seq = 0;
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 200; i++, seq++) {
			char name[32];
			snprintf(name, sizeof(name), "w%05d", seq);
			struct ledger_record r = { .time_ms = T0 + seq,
						   .event = LEDGER_FINISH,
						   .ns = "ns",
						   .name = name,
						   .uid = name,
						   .cluster_queue = "cq",
						   .message = message };
			assert_int_equal(ledger_append(l, &r), 0);
		}
		assert_int_equal(ledger_flush(l), 0);
		struct ledger_stats st;
		ledger_stats(l, &st);
		if (st.db_bytes > opts.retention_bytes)
			fail_msg("round %d: %lld bytes in use, bound %lld", round,
				 (long long)st.db_bytes, (long long)opts.retention_bytes);
	}
	struct ledger_stats st;
	ledger_stats(l, &st);
	assert_true(st.deleted > 0);
	assert_int_equal(st.written, 2000);
	assert_workload_history(l, "ns", "w01999", 1, "w01999:finish");
	assert_workload_history(l, "ns", "w00000", 1, "");
	ledger_close(l);

	/* Checked apart from the ledger's own count: the pages in use, and what is left is the
	 * newest rows with nothing missing between them. */
	sqlite3 *db = raw_open(f->path);
	int64_t used = (raw_int(db, "PRAGMA page_count") - raw_int(db, "PRAGMA freelist_count")) *
		       raw_int(db, "PRAGMA page_size");
	assert_true(used <= opts.retention_bytes);
	int64_t rows = raw_int(db, "SELECT count(*) FROM decisions");
	assert_int_equal(raw_int(db, "SELECT max(id) - min(id) + 1 FROM decisions"), rows);
	assert_int_equal(raw_int(db, "SELECT max(id) FROM decisions"), 2000);
	printf("ledger: size retention kept %lld of 2000 rows in %lld bytes (bound %lld)\n",
	       (long long)rows, (long long)used, (long long)opts.retention_bytes);
	sqlite3_close(db);
}

/* ------------------------------------------------------------------------------------------ */
/* Files that are not (this version of) a ledger */

static void test_ledger_newer_schema_refused(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = options(f);
	ledger_close(open_ledger(&opts));
	sqlite3 *db = raw_open(f->path);
	raw_exec(db, "PRAGMA user_version = 99");
	sqlite3_close(db);
	struct ledger *l = NULL;
	assert_int_equal(ledger_open(&opts, &l), -EPROTO);
	assert_null(l);
}

static void test_ledger_foreign_database_refused(void **state)
{
	struct fixture *f = *state;
	sqlite3 *db = raw_open(f->path);
	raw_exec(db, "CREATE TABLE something (x)");
	sqlite3_close(db);
	struct ledger_options opts = options(f);
	struct ledger *l = NULL;
	assert_int_equal(ledger_open(&opts, &l), -EPROTO);
	assert_null(l);
}

static void test_ledger_garbage_file_refused(void **state)
{
	struct fixture *f = *state;
	FILE *fp = fopen(f->path, "w");
	assert_non_null(fp);
	for (int i = 0; i < 512; i++)
		fputs("this is not a database file ", fp);
	fclose(fp);
	struct ledger_options opts = options(f);
	struct ledger *l = NULL;
	assert_int_equal(ledger_open(&opts, &l), -EBADMSG);
	assert_null(l);
}

static void test_ledger_bad_path_is_an_errno(void **state)
{
	struct fixture *f = *state;
	struct ledger *l = NULL;
	struct ledger_options opts = { .path = "/nonexistent-muster-dir/sub/ledger.db" };
	assert_int_equal(ledger_open(&opts, &l), -ENOENT);
	opts.path = f->dir; /* a directory */
	int rc = ledger_open(&opts, &l);
	assert_true(rc < 0);
	opts.path = "";
	assert_int_equal(ledger_open(&opts, &l), -EINVAL);
	assert_int_equal(ledger_open(NULL, &l), -EINVAL);
	assert_null(l);
}

static void test_ledger_bad_records_refused(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = options(f);
	struct ledger *l = open_ledger(&opts);
	struct ledger_record r = { .event = LEDGER_ADMIT, .ns = "ns", .name = "n", .uid = NULL };
	assert_int_equal(ledger_append(l, &r), -EINVAL);
	r.uid = "";
	assert_int_equal(ledger_append(l, &r), -EINVAL);
	r.uid = "u";
	r.event = (enum ledger_event)42;
	assert_int_equal(ledger_append(l, &r), -EINVAL);
	r.event = LEDGER_ADMIT;
	char *huge = malloc(LEDGER_TEXT_MAX + 2);
	assert_non_null(huge);
	memset(huge, 'x', LEDGER_TEXT_MAX + 1);
	huge[LEDGER_TEXT_MAX + 1] = '\0';
	r.message = huge;
	assert_int_equal(ledger_append(l, &r), -E2BIG);
	huge[LEDGER_TEXT_MAX] = '\0'; /* exactly the limit is fine */
	assert_int_equal(ledger_append(l, &r), 0);
	free(huge);
	assert_int_equal(ledger_flush(l), 0);
	struct ledger_stats st;
	ledger_stats(l, &st);
	assert_int_equal(st.appended, 1);
	assert_int_equal(st.dropped, 0);
	assert_null(ledger_event_name((enum ledger_event)42));
	assert_string_equal(ledger_event_name(LEDGER_DEACTIVATE), "deactivate");
	ledger_close(l);
	ledger_close(NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* A full queue, a failing disk */

static void wait_until_taken(struct ledger *l)
{
	struct ledger_stats st;
	for (int i = 0; i < 5000; i++) {
		ledger_stats(l, &st);
		if (st.queued == 0)
			return;
		usleep(1000);
	}
	fail_msg("the writer never took its batch");
}

static void test_ledger_full_queue_drops_and_counts(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = options(f);
	opts.queue_max = 8;
	struct ledger *l = open_ledger(&opts);
	/* Another connection holds the write lock: the writer takes the first record and waits
	 * for the lock (busy_timeout), so what follows stays queued. */
	sqlite3 *db = raw_open(f->path);
	raw_exec(db, "BEGIN IMMEDIATE");
	append(l, T0, LEDGER_ADMIT, "ns", "first", "u0", "cq", NULL);
	wait_until_taken(l);
	for (int i = 0; i < 8; i++)
		append(l, T0 + i, LEDGER_ADMIT, "ns", "queued", "u1", "cq", NULL);
	struct ledger_record r = { .event = LEDGER_FINISH, .ns = "ns", .name = "x", .uid = "u" };
	for (int i = 0; i < 3; i++)
		assert_int_equal(ledger_append(l, &r), -ENOBUFS);
	struct ledger_stats st;
	ledger_stats(l, &st);
	assert_int_equal(st.dropped, 3);
	assert_int_equal(st.appended, 9);
	assert_int_equal(st.queued, 8);
	raw_exec(db, "COMMIT");
	sqlite3_close(db);
	assert_int_equal(ledger_flush(l), 0);
	ledger_stats(l, &st);
	assert_int_equal(st.written, 9);
	assert_int_equal(st.failed, 0);
	ledger_close(l);
}

static void test_ledger_disk_error_counted_not_fatal(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = options(f);
	opts.busy_timeout_ms = 20;
	struct ledger *l = open_ledger(&opts);
	sqlite3 *db = raw_open(f->path);
	raw_exec(db, "BEGIN IMMEDIATE");
	append(l, T0, LEDGER_ADMIT, "ns", "lost", "u0", "cq", NULL);
	append(l, T0, LEDGER_FINISH, "ns", "lost", "u0", "cq", NULL);
	assert_int_equal(ledger_flush(l), -EIO);
	struct ledger_stats st;
	ledger_stats(l, &st);
	assert_int_equal(st.failed, 2);
	assert_int_equal(st.written, 0);
	assert_true(st.errors >= 1);
	raw_exec(db, "COMMIT");
	sqlite3_close(db);
	/* The ledger goes on once the disk is back. */
	append(l, T0, LEDGER_ADMIT, "ns", "kept", "u1", "cq", NULL);
	assert_int_equal(ledger_flush(l), 0);
	ledger_stats(l, &st);
	assert_int_equal(st.written, 1);
	assert_queue_history(l, "cq", 0, 10, "kept:admit");
	ledger_close(l);
}

/* ------------------------------------------------------------------------------------------ */
/* Reads beside the writer; throughput */

#define CONCURRENT_RECORDS 20000

static void append_many(void *arg)
{
	struct ledger *l = arg;
	for (int i = 0; i < CONCURRENT_RECORDS; i++) {
		char uid[32];
		snprintf(uid, sizeof(uid), "u%d", i);
		struct ledger_record r = { .time_ms = T0 + i,
					   .event = i % 2 ? LEDGER_FINISH : LEDGER_ADMIT,
					   .ns = "ns",
					   .name = "w",
					   .uid = uid,
					   .cluster_queue = "cq",
					   .resources = "{\"cpu\":\"1\"}" };
		while (ledger_append(l, &r) == -ENOBUFS)
			usleep(100);
	}
}

static void test_ledger_reads_beside_the_writer(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = options(f);
	struct ledger *l = open_ledger(&opts);
	uv_thread_t writer;
	assert_int_equal(uv_thread_create(&writer, append_many, l), 0);
	size_t last = 0, reads = 0;
	int64_t last_id = 0;
	for (;;) {
		struct ledger_stats st;
		ledger_stats(l, &st);
		json_t *list = NULL, *report = NULL;
		assert_int_equal(ledger_cluster_queue_history(l, "cq", 0, 100, &list), 0);
		size_t n = json_array_size(json_object_get(list, "items"));
		assert_true(n >= last); /* snapshots only grow */
		last = n;
		json_t *newest = json_array_get(json_object_get(list, "items"), 0);
		int64_t id = json_integer_value(json_object_get(newest, "id"));
		assert_true(id >= last_id);
		last_id = id;
		json_decref(list);
		assert_int_equal(ledger_usage(l, T0, T0 + CONCURRENT_RECORDS, LEDGER_BY_QUEUE,
					      &report),
				 0);
		json_decref(report);
		reads++;
		if (st.written == CONCURRENT_RECORDS)
			break;
		usleep(2000);
	}
	uv_thread_join(&writer);
	assert_int_equal(last, 100);
	assert_int_equal(last_id, CONCURRENT_RECORDS);
	printf("ledger: %zu reads ran beside the writer, none refused\n", reads);
	ledger_close(l);
}

static double seconds_since(uint64_t start_ns)
{
	return (double)(uv_hrtime() - start_ns) / 1e9;
}

static void test_ledger_throughput_figure(void **state)
{
	struct fixture *f = *state;
	struct ledger_options opts = { .path = f->path }; /* the defaults: 200 ms batches */
	struct ledger *l = open_ledger(&opts);
	const int n = 30000;
	uint64_t start = uv_hrtime(), retries = 0;
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "job-%d", i / 2);
		struct ledger_record r = {
			.event = i % 2 ? LEDGER_FINISH : LEDGER_ADMIT,
			.ns = "team-a",
			.name = name,
			.uid = name,
			.cluster_queue = "cq-a",
			.local_queue = "lq-a",
			.flavors = "{\"main\":{\"nvidia.com/gpu\":\"a100\",\"cpu\":\"default\"}}",
			.resources = "{\"nvidia.com/gpu\":\"8\",\"cpu\":\"4\"}",
			.reason = "QuotaReserved",
			.message = "Quota reserved in ClusterQueue cq-a",
			.cluster_queue_usage = "{\"a100\":{\"nvidia.com/gpu\":\"48\"}}",
		};
		while (ledger_append(l, &r) == -ENOBUFS) {
			retries++;
			usleep(200);
		}
	}
	double append_s = seconds_since(start);
	assert_int_equal(ledger_flush(l), 0);
	double total_s = seconds_since(start);
	struct ledger_stats st;
	ledger_stats(l, &st);
	assert_int_equal(st.written, (uint64_t)n);
	printf("ledger: %d records committed in %.2f s: %.0f records/s, %llu batches, "
	       "appends %.2f us each (%llu waits on a full queue), file %lld bytes in use\n",
	       n, total_s, n / total_s, (unsigned long long)st.batches, append_s * 1e6 / n,
	       (unsigned long long)retries, (long long)st.db_bytes);
	ledger_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_ledger_records_survive_close_and_reopen),
		T(test_ledger_reopen_after_kill_reads_every_committed_row),
		T(test_ledger_workload_history_newest_first_and_limited),
		T(test_ledger_cluster_queue_history_since_and_limit),
		T(test_ledger_usage_by_queue_clips_at_since_and_counts_open_until_now),
		T(test_ledger_usage_by_namespace),
		T(test_ledger_recent_runtimes_newest_first),
		T(test_ledger_retention_by_age_keeps_open_admissions),
		T(test_ledger_retention_by_size_trims_oldest),
		T(test_ledger_newer_schema_refused),
		T(test_ledger_foreign_database_refused),
		T(test_ledger_garbage_file_refused),
		T(test_ledger_bad_path_is_an_errno),
		T(test_ledger_bad_records_refused),
		T(test_ledger_full_queue_drops_and_counts),
		T(test_ledger_disk_error_counted_not_fatal),
		T(test_ledger_reads_beside_the_writer),
		T(test_ledger_throughput_figure),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
