/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for sim/forecast: small clusters whose admission times are worked out by hand
 * (each test says how), checked to the minute with their "ahead" counts, runtime sources and
 * basis sentences. Now is 2026-11-27T12:00:00Z throughout; every workload is in namespace
 * team-a, and every ClusterQueue X has the LocalQueue lq-X there.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <jansson.h>

#include "core/engine.h"
#include "sim/forecast.h"
#include "util/yamljson.h"

#define NOW "2026-11-27T12:00:00Z"

/* --- building the inputs ---------------------------------------------------------------- */

struct text {
	char *data;
	size_t len;
	FILE *f;
};

static void text_open(struct text *t)
{
	memset(t, 0, sizeof(*t));
	t->f = open_memstream(&t->data, &t->len);
	assert_non_null(t->f);
	fprintf(t->f, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		      "metadata: {name: a100}\n");
}

static void text_close(struct text *t)
{
	fclose(t->f);
	t->f = NULL;
}

static void text_free(struct text *t)
{
	if (t->f)
		fclose(t->f);
	free(t->data);
}

/* A ClusterQueue of gpus nvidia.com/gpu with its LocalQueue lq-NAME; spec lines are more of
 * its spec (cohortName, queueingStrategy, preemption), each line indented by two spaces. */
static void add_cq(struct text *t, const char *name, int gpus, const char *spec)
{
	fprintf(t->f,
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: "
		"%s}\n"
		"spec:\n%s  namespaceSelector: {}\n  resourceGroups:\n"
		"  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: a100\n"
		"      resources:\n      - {name: nvidia.com/gpu, nominalQuota: %d}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {name: lq-%s, namespace: team-a}\nspec: {clusterQueue: %s}\n",
		name, spec ? spec : "", gpus, name, name);
}

struct wl {
	const char *name;
	const char *cq; /* its LocalQueue is lq-CQ; an admitted one is admitted there */
	int count, gpus; /* pods, GPUs per pod */
	int priority;
	const char *created; /* "HH:MM" on now's day */
	const char *reserved; /* "HH:MM" when admitted; NULL: pending */
	long max_exec; /* maximumExecutionTimeSeconds, 0: unset */
};

static void add_wl(struct text *t, const struct wl *w)
{
	fprintf(t->f,
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		"metadata: {name: %s, namespace: team-a, creationTimestamp: "
		"\"2026-11-27T%s:00Z\"}\n"
		"spec:\n  queueName: lq-%s\n  priority: %d\n",
		w->name, w->created, w->cq, w->priority);
	if (w->max_exec)
		fprintf(t->f, "  maximumExecutionTimeSeconds: %ld\n", w->max_exec);
	fprintf(t->f,
		"  podSets:\n  - name: main\n    count: %d\n    template:\n      spec:\n"
		"        containers: [{name: c, resources: {requests: {nvidia.com/gpu: "
		"\"%d\"}}}]\n",
		w->count, w->gpus);
	if (!w->reserved)
		return;
	fprintf(t->f,
		"status:\n  conditions:\n  - {type: QuotaReserved, status: \"True\", reason: "
		"QuotaReserved, message: ok, lastTransitionTime: \"2026-11-27T%s:00Z\"}\n"
		"  admission:\n    clusterQueue: %s\n    podSetAssignments:\n"
		"    - {name: main, count: %d, flavors: {nvidia.com/gpu: a100}, resourceUsage: "
		"{nvidia.com/gpu: \"%d\"}}\n",
		w->reserved, w->cq, w->count, w->count * w->gpus);
}

static int64_t at(const char *hhmm)
{
	struct tm tm = { .tm_year = 126, .tm_mon = 10, .tm_mday = 27 };
	assert_int_equal(sscanf(hhmm, "%d:%d", &tm.tm_hour, &tm.tm_min), 2);
	return (int64_t)timegm(&tm) * 1000;
}

static struct forecast_options options(void)
{
	return (struct forecast_options){ .now_ms = at("12:00") };
}

/* forecast_pending over the text; the estimate of a workload by name. */
struct run {
	struct text t;
	struct sim_input in;
	struct forecast_result res;
};

static void run_pending(struct run *r, const struct forecast_options *opt)
{
	char err[1024] = "";
	text_close(&r->t);
	r->in = (struct sim_input){ .name = "input.yaml", .data = r->t.data, .len = r->t.len };
	struct forecast_input fin = { .texts = &r->in, .n_texts = 1 };
	int rc = forecast_pending(&fin, opt, &r->res, err, sizeof(err));
	if (rc != 0)
		fail_msg("forecast_pending: %d: %s", rc, err);
}

static const struct forecast_estimate *find(const struct run *r, const char *name)
{
	char key[128];
	snprintf(key, sizeof(key), "team-a/%s", name);
	for (size_t i = 0; i < r->res.n; i++)
		if (!strcmp(r->res.items[i].workload, key))
			return &r->res.items[i];
	fail_msg("no estimate for %s", key);
	return NULL;
}

static void expect(const struct run *r, const char *name, const char *when, size_t ahead,
		   const char *basis)
{
	const struct forecast_estimate *e = find(r, name);
	assert_int_equal(e->state, FORECAST_PENDING);
	if (when) {
		assert_true(e->has_admission);
		assert_int_equal(e->admission_ms, at(when));
	} else {
		assert_false(e->has_admission);
	}
	assert_int_equal(e->ahead, ahead);
	assert_string_equal(e->basis, basis);
}

static void expect_sources(const struct run *r, const char *name, size_t deadline, size_t max_exec,
			   size_t history, size_t none)
{
	const struct forecast_estimate *e = find(r, name);
	assert_int_equal(e->sources[FORECAST_ACTIVE_DEADLINE], deadline);
	assert_int_equal(e->sources[FORECAST_MAX_EXECUTION], max_exec);
	assert_int_equal(e->sources[FORECAST_HISTORY], history);
	assert_int_equal(e->sources[FORECAST_NO_RUNTIME], none);
}

static void run_free(struct run *r)
{
	forecast_result_release(&r->res);
	text_free(&r->t);
}

/* --- tests ------------------------------------------------------------------------------- */

/*
 * One ClusterQueue of 8 GPUs, BestEffortFIFO; runtime history 1 h. r1 (4 GPUs) ends 13:00,
 * r2 (4) 12:30. At 12:30 p1 (4, oldest) takes r2's place; p2 (8) is the head after it but
 * can't fit, so at 13:00 BestEffortFIFO lets p3 (4) past it; p1 ends 13:30 (4 free, p2 still
 * can't fit), p3 ends 14:00 and p2 gets all 8.
 */
static void test_one_queue_best_effort(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "cq", 8, NULL);
	add_wl(&r.t, &(struct wl){ "r1", "cq", 1, 4, 0, "10:00", "11:00", 7200 });
	add_wl(&r.t, &(struct wl){ "r2", "cq", 1, 4, 0, "10:00", "11:30", 3600 });
	add_wl(&r.t, &(struct wl){ "p1", "cq", 1, 4, 0, "11:40", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "p2", "cq", 1, 8, 0, "11:45", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "p3", "cq", 1, 4, 0, "11:50", NULL, 0 });
	struct forecast_runtime hist[] = { { .cluster_queue = "cq", .ms = 3600 * 1000 } };
	struct forecast_options opt = options();
	opt.runtimes = hist;
	opt.n_runtimes = 1;
	run_pending(&r, &opt);
	assert_int_equal(r.res.n, 3);
	assert_int_equal(r.res.running, 2);
	assert_int_equal(r.res.stop, FORECAST_STOP_DONE);
	expect(&r, "p1", "12:30", 0,
	       "0 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~12:30");
	expect(&r, "p3", "13:00", 1,
	       "1 workload ahead; the earliest end frees 4 nvidia.com/gpu at ~13:00");
	expect(&r, "p2", "14:00", 2,
	       "2 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~14:00");
	expect_sources(&r, "p1", 0, 2, 0, 0);
	expect_sources(&r, "p2", 0, 2, 2, 0);
	run_free(&r);
}

/*
 * StrictFIFO with priorities: r1 holds all 8 GPUs until 12:30. hi (priority 100, 8 GPUs, the
 * newest) goes first, then lo and lo2 (4 each) in creation order once hi ends at 13:30
 * (history 1 h), both at once.
 */
static void test_strict_fifo_priorities(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "cq", 8, "  queueingStrategy: StrictFIFO\n");
	add_wl(&r.t, &(struct wl){ "r1", "cq", 2, 4, 0, "10:00", "11:30", 3600 });
	add_wl(&r.t, &(struct wl){ "lo", "cq", 1, 4, 0, "11:00", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "hi", "cq", 1, 8, 100, "11:30", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "lo2", "cq", 1, 4, 0, "11:10", NULL, 0 });
	struct forecast_runtime hist[] = { { .cluster_queue = "cq", .ms = 3600 * 1000 } };
	struct forecast_options opt = options();
	opt.runtimes = hist;
	opt.n_runtimes = 1;
	run_pending(&r, &opt);
	expect(&r, "hi", "12:30", 0,
	       "0 workloads ahead; the earliest end frees 8 nvidia.com/gpu at ~12:30");
	expect(&r, "lo", "13:30", 1,
	       "1 workload ahead; the earliest end frees 8 nvidia.com/gpu at ~13:30");
	expect(&r, "lo2", "13:30", 2,
	       "2 workloads ahead; the earliest end frees 8 nvidia.com/gpu at ~13:30");
	run_free(&r);
}

/*
 * A cohort: cq-a and cq-b, 4 GPUs each. a1 fills cq-a until 13:00; b1 fills cq-b until 12:20
 * (activeDeadlineSeconds 1200 from 12:00). a2 borrows cq-b's 4 GPUs when b1 ends. A queue
 * outside the cohort, with a workload of no known end, counts for nothing here.
 */
static void test_cohort_borrowing(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "cq-a", 4, "  cohortName: research\n");
	add_cq(&r.t, "cq-b", 4, "  cohortName: research\n");
	add_cq(&r.t, "other", 4, NULL);
	add_wl(&r.t, &(struct wl){ "a1", "cq-a", 1, 4, 0, "11:00", "11:00", 7200 });
	add_wl(&r.t, &(struct wl){ "b1", "cq-b", 1, 4, 0, "11:00", "12:00", 0 });
	add_wl(&r.t, &(struct wl){ "o1", "other", 1, 4, 0, "11:00", "11:00", 0 });
	add_wl(&r.t, &(struct wl){ "a2", "cq-a", 1, 4, 0, "11:30", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "o2", "other", 1, 4, 0, "11:30", NULL, 0 });
	struct forecast_deadline dl[] = { { "team-a/b1", 1200 } };
	struct forecast_options opt = options();
	opt.deadlines = dl;
	opt.n_deadlines = 1;
	run_pending(&r, &opt);
	expect(&r, "a2", "12:20", 0,
	       "0 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~12:20");
	expect_sources(&r, "a2", 1, 1, 0, 0);
	expect(&r, "o2", NULL, 0,
	       "no basis: it waits for team-a/o1, running with no expected end (no "
	       "maximumExecutionTimeSeconds, activeDeadlineSeconds or runtime history)");
	expect_sources(&r, "o2", 0, 0, 0, 1);
	run_free(&r);
}

/* A gang of 2 x 4 GPUs in a queue of 8 waits for both of r1 (ends 12:30) and r2 (13:10). */
static void test_gang_waits_for_two_ends(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "cq", 8, NULL);
	add_wl(&r.t, &(struct wl){ "r1", "cq", 1, 4, 0, "10:00", "11:30", 3600 });
	add_wl(&r.t, &(struct wl){ "r2", "cq", 4, 1, 0, "10:00", "11:10", 7200 });
	add_wl(&r.t, &(struct wl){ "gang", "cq", 2, 4, 0, "11:20", NULL, 0 });
	struct forecast_options opt = options();
	run_pending(&r, &opt);
	expect(&r, "gang", "13:10", 0,
	       "0 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~13:10");
	assert_int_equal(r.res.steps, 2);
	run_free(&r);
}

/*
 * No basis: blocked by r1 (no maximumExecutionTimeSeconds, no deadline, no history), and, in a
 * queue of its own, a workload larger than the queue can ever hold.
 */
static void test_no_basis(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "cq", 16, NULL);
	add_cq(&r.t, "small", 8, NULL);
	add_wl(&r.t, &(struct wl){ "r1", "cq", 1, 8, 0, "10:00", "11:00", 0 });
	add_wl(&r.t, &(struct wl){ "r2", "cq", 1, 8, 0, "10:00", "11:00", 0 });
	add_wl(&r.t, &(struct wl){ "p", "cq", 1, 4, 0, "11:30", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "huge", "small", 2, 8, 0, "11:30", NULL, 0 });
	struct forecast_options opt = options();
	run_pending(&r, &opt);
	assert_int_equal(r.res.stop, FORECAST_STOP_NO_ENDS);
	expect(&r, "p", NULL, 0,
	       "no basis: it waits for 2 running workloads with no expected end (team-a/r1 and 1 "
	       "more; no maximumExecutionTimeSeconds, activeDeadlineSeconds or runtime history)");
	expect_sources(&r, "p", 0, 0, 0, 2);
	const struct forecast_estimate *e = find(&r, "huge");
	assert_false(e->has_admission);
	assert_string_equal(
		e->basis,
		"no basis: it does not fit even with nothing else running: couldn't assign "
		"flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor "
		"a100, previously considered podsets requests (0) + current podset request "
		"(16) > maximum capacity (8)");
	run_free(&r);
}

/*
 * Which runtime counts: 12 GPUs, three running workloads of 4 reserved at 12:00 and three
 * pending of 4 in FIFO order, so the pending ones are admitted at the three ends in order.
 *   rmax: maximumExecutionTimeSeconds 3600, activeDeadlineSeconds 7200 -> 13:00
 *   rdl:  maximumExecutionTimeSeconds 3600, activeDeadlineSeconds 1800 -> 12:30
 *   rhist: neither, reserved 11:50; the queue's history 5400 s           -> 13:20
 * and late, already past its end (reserved 10:00, maximumExecutionTimeSeconds 3600): due now.
 * (p0, admitted at 12:00, ends at 13:30 by the history: after p3's admission.)
 */
static void test_runtime_precedence(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "cq", 16, NULL);
	add_wl(&r.t, &(struct wl){ "rmax", "cq", 1, 4, 0, "11:00", "12:00", 3600 });
	add_wl(&r.t, &(struct wl){ "rdl", "cq", 1, 4, 0, "11:00", "12:00", 3600 });
	add_wl(&r.t, &(struct wl){ "rhist", "cq", 1, 4, 0, "11:00", "11:50", 0 });
	add_wl(&r.t, &(struct wl){ "late", "cq", 1, 4, 0, "09:00", "10:00", 3600 });
	add_wl(&r.t, &(struct wl){ "p0", "cq", 1, 4, 0, "11:00", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "p1", "cq", 1, 4, 0, "11:10", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "p2", "cq", 1, 4, 0, "11:20", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "p3", "cq", 1, 4, 0, "11:30", NULL, 0 });
	struct forecast_deadline dl[] = { { "team-a/rmax", 7200 }, { "team-a/rdl", 1800 } };
	struct forecast_runtime hist[] = { { .cluster_queue = "cq", .ms = 5400 * 1000 } };
	struct forecast_options opt = options();
	opt.deadlines = dl;
	opt.n_deadlines = 2;
	opt.runtimes = hist;
	opt.n_runtimes = 1;
	run_pending(&r, &opt);
	expect(&r, "p0", "12:00", 0,
	       "0 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~12:00");
	expect(&r, "p1", "12:30", 1,
	       "1 workload ahead; the earliest end frees 4 nvidia.com/gpu at ~12:30");
	expect(&r, "p2", "13:00", 2,
	       "2 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~13:00");
	expect(&r, "p3", "13:20", 3,
	       "3 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~13:20");
	/* By p3's admission: rdl's deadline, rmax's and late's maximum, rhist, p0..p2 history. */
	expect_sources(&r, "p3", 1, 2, 4, 0);
	run_free(&r);
}

/*
 * The history as a sample of runtimes (10, 20, 30, 90, 150 min): a running workload's runtime
 * is the median of those longer than it has run. r1 (4 GPUs, 60 min in) -> median of 90 and
 * 150 = 120 -> ends 13:00; r2 (4, 240 min in, longer than any) -> the median (30) more ->
 * 12:30; a workload the forecast admits -> the median, 30 min. So p1 12:30 (ends 13:00); at
 * 13:00 r1 and p1 end together and p2 goes (ends 13:30); p3 (8) then waits for p2: 13:30.
 */
static void test_history_sample(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "cq", 8, NULL);
	add_wl(&r.t, &(struct wl){ "r1", "cq", 1, 4, 0, "10:00", "11:00", 0 });
	add_wl(&r.t, &(struct wl){ "r2", "cq", 1, 4, 0, "07:00", "08:00", 0 });
	add_wl(&r.t, &(struct wl){ "p1", "cq", 1, 4, 0, "11:30", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "p2", "cq", 1, 4, 0, "11:40", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "p3", "cq", 1, 8, 0, "11:50", NULL, 0 });
	static const int64_t minutes[] = { 10 * 60000, 20 * 60000, 30 * 60000, 90 * 60000,
					   150 * 60000 };
	struct forecast_runtime hist[] = {
		{ .cluster_queue = "cq", .sample = minutes, .n_sample = 5 }
	};
	struct forecast_options opt = options();
	opt.runtimes = hist;
	opt.n_runtimes = 1;
	run_pending(&r, &opt);
	expect(&r, "p1", "12:30", 0,
	       "0 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~12:30");
	expect(&r, "p2", "13:00", 1,
	       "1 workload ahead; the earliest ends free 8 nvidia.com/gpu at ~13:00");
	expect(&r, "p3", "13:30", 2,
	       "2 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~13:30");
	expect_sources(&r, "p3", 0, 0, 4, 0);
	run_free(&r);
	/* A sample out of order is refused. */
	static const int64_t unsorted[] = { 2, 1 };
	struct forecast_runtime bad[] = {
		{ .cluster_queue = "cq", .sample = unsorted, .n_sample = 2 }
	};
	struct forecast_result res;
	char err[256];
	text_open(&r.t);
	add_cq(&r.t, "cq", 8, NULL);
	text_close(&r.t);
	struct sim_input in = { .name = "input.yaml", .data = r.t.data, .len = r.t.len };
	struct forecast_input fin = { .texts = &in, .n_texts = 1 };
	opt.runtimes = bad;
	assert_int_equal(forecast_pending(&fin, &opt, &res, err, sizeof(err)), -EINVAL);
	text_free(&r.t);
}

/* A workload that fits now, one that fits now by preempting, and the horizon. */
static void test_now_preemption_horizon(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "cq", 8, "  preemption: {withinClusterQueue: LowerPriority}\n");
	add_cq(&r.t, "free", 8, NULL);
	add_cq(&r.t, "long", 8, NULL);
	add_wl(&r.t, &(struct wl){ "low", "cq", 1, 8, 0, "10:00", "11:00", 0 });
	add_wl(&r.t, &(struct wl){ "high", "cq", 1, 8, 100, "11:00", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "f", "free", 1, 2, 0, "11:00", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "r", "long", 1, 8, 0, "10:00", "11:00", 2 * 86400 });
	add_wl(&r.t, &(struct wl){ "w", "long", 1, 8, 0, "11:00", NULL, 0 });
	struct forecast_options opt = options();
	opt.horizon_ms = 86400 * 1000;
	run_pending(&r, &opt);
	expect(&r, "high", "12:00", 0,
	       "0 workloads ahead; it fits now once 1 workload is preempted");
	expect(&r, "f", "12:00", 0, "0 workloads ahead; it fits now");
	expect(&r, "w", NULL, 0, "no estimate within 1 day: it is still waiting then");
	assert_int_equal(r.res.stop, FORECAST_STOP_HORIZON);
	/* With a longer horizon: the day after, so the time carries its date. */
	run_free(&r);
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "long", 8, NULL);
	add_wl(&r.t, &(struct wl){ "r", "long", 1, 8, 0, "10:00", "11:00", 2 * 86400 });
	add_wl(&r.t, &(struct wl){ "w", "long", 1, 8, 0, "11:00", NULL, 0 });
	opt.horizon_ms = 0;
	run_pending(&r, &opt);
	const struct forecast_estimate *e = find(&r, "w");
	assert_int_equal(e->admission_ms, at("11:00") + 2 * 86400 * 1000);
	assert_string_equal(e->basis, "0 workloads ahead; the earliest end frees 8 nvidia.com/gpu "
				      "at ~2026-11-29 11:00");
	run_free(&r);
}

/* forecast_workload: the same answer for one target; admitted, not queued, unknown. */
static void test_one_workload(void **state)
{
	(void)state;
	struct text t;
	char err[512];
	text_open(&t);
	add_cq(&t, "cq", 8, NULL);
	add_wl(&t, &(struct wl){ "r1", "cq", 1, 8, 0, "10:00", "11:30", 3600 });
	add_wl(&t, &(struct wl){ "p1", "cq", 1, 8, 0, "11:40", NULL, 0 });
	add_wl(&t, &(struct wl){ "p2", "cq", 1, 8, 0, "11:45", NULL, 0 });
	fprintf(t.f, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		     "metadata: {name: off, namespace: team-a}\nspec:\n  active: false\n"
		     "  queueName: lq-cq\n  podSets:\n  - count: 1\n    template:\n      spec:\n"
		     "        containers: [{name: c}]\n");
	text_close(&t);
	struct sim_input in = { .name = "input.yaml", .data = t.data, .len = t.len };
	struct forecast_input fin = { .texts = &in, .n_texts = 1 };
	struct forecast_runtime hist[] = { { .cluster_queue = "cq", .ms = 1800 * 1000 } };
	struct forecast_options opt = options();
	opt.runtimes = hist;
	opt.n_runtimes = 1;
	struct forecast_estimate e;

	assert_int_equal(forecast_workload(&fin, &opt, "team-a/p2", &e, err, sizeof(err)), 0);
	assert_string_equal(e.workload, "team-a/p2");
	assert_int_equal(e.state, FORECAST_PENDING);
	assert_int_equal(e.admission_ms, at("13:00"));
	assert_int_equal(e.ahead, 1);
	assert_string_equal(e.basis,
			    "1 workload ahead; the earliest end frees 8 nvidia.com/gpu at ~13:00");
	forecast_estimate_release(&e);

	assert_int_equal(forecast_workload(&fin, &opt, "team-a/r1", &e, err, sizeof(err)), 0);
	assert_int_equal(e.state, FORECAST_ADMITTED);
	assert_int_equal(e.admission_ms, at("11:30"));
	assert_string_equal(e.basis, "admitted at ~11:30");
	forecast_estimate_release(&e);

	assert_int_equal(forecast_workload(&fin, &opt, "team-a/off", &e, err, sizeof(err)), 0);
	assert_int_equal(e.state, FORECAST_NOT_QUEUED);
	assert_false(e.has_admission);
	assert_non_null(strstr(e.basis, "no basis: spec.active is false"));
	forecast_estimate_release(&e);

	assert_int_equal(forecast_workload(&fin, &opt, "team-a/nope", &e, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "no Workload team-a/nope among the inputs");
	assert_null(e.workload);
	text_free(&t);
}

/* Invalid input fails with simulate's FILE:LINE messages, unless skip_invalid. */
static void test_invalid_input(void **state)
{
	(void)state;
	struct text t;
	char err[512];
	text_open(&t);
	add_cq(&t, "cq", 8, NULL);
	add_wl(&t, &(struct wl){ "p1", "cq", 1, 8, 0, "11:40", NULL, 0 });
	fprintf(t.f, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		     "metadata: {name: bad, namespace: team-a}\nspec:\n  queueName: lq-cq\n"
		     "  maximumExecutionTimeSeconds: 0\n  podSets:\n  - count: 1\n    template:\n"
		     "      spec:\n        containers: [{name: c}]\n");
	text_close(&t);
	struct sim_input in = { .name = "input.yaml", .data = t.data, .len = t.len };
	struct forecast_input fin = { .texts = &in, .n_texts = 1 };
	struct forecast_options opt = options();
	struct forecast_result res;
	assert_int_equal(forecast_pending(&fin, &opt, &res, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "input.yaml:"));
	assert_non_null(strstr(err, "spec.maximumExecutionTimeSeconds"));
	assert_int_equal(res.n, 0);
	opt.skip_invalid = 1;
	assert_int_equal(forecast_pending(&fin, &opt, &res, err, sizeof(err)), 0);
	assert_int_equal(res.n, 1);
	assert_int_equal(res.skipped, 1);
	assert_int_equal(res.items[0].admission_ms, at("12:00"));
	forecast_result_release(&res);
	/* Options out of range. */
	struct forecast_runtime bad[] = { { .cluster_queue = "cq", .ms = -1 } };
	opt.runtimes = bad;
	opt.n_runtimes = 1;
	assert_int_equal(forecast_pending(&fin, &opt, &res, err, sizeof(err)), -EINVAL);
	text_free(&t);
}

/* The objects path (a manager's stores) answers exactly as the texts path. */
static void test_objects_match_texts(void **state)
{
	(void)state;
	struct run r;
	memset(&r, 0, sizeof(r));
	text_open(&r.t);
	add_cq(&r.t, "cq-a", 4, "  cohortName: research\n");
	add_cq(&r.t, "cq-b", 4, "  cohortName: research\n");
	add_wl(&r.t, &(struct wl){ "a1", "cq-a", 1, 4, 0, "11:00", "11:00", 7200 });
	add_wl(&r.t, &(struct wl){ "b1", "cq-b", 1, 4, 0, "11:00", "11:50", 1800 });
	add_wl(&r.t, &(struct wl){ "a2", "cq-a", 1, 4, 0, "11:30", NULL, 0 });
	add_wl(&r.t, &(struct wl){ "b2", "cq-b", 1, 8, 0, "11:40", NULL, 0 });
	struct forecast_runtime hist[] = { { .cluster_queue = "cq-a", .ms = 600 * 1000 } };
	struct forecast_options opt = options();
	opt.runtimes = hist;
	opt.n_runtimes = 1;
	run_pending(&r, &opt);

	json_t *docs = NULL;
	struct yamljson_error yerr;
	assert_int_equal(yamljson_load(r.t.data, r.t.len, &docs, &yerr), 0);
	struct sim_objects objs = { .flavors = json_array(),
				    .cluster_queues = json_array(),
				    .local_queues = json_array(),
				    .workloads = json_object() };
	size_t i;
	json_t *d;
	json_array_foreach(docs, i, d)
	{
		const char *kind = json_string_value(json_object_get(d, "kind"));
		json_object_del(d, "apiVersion"); /* the slot says what it is */
		if (!strcmp(kind, "ResourceFlavor"))
			json_array_append(objs.flavors, d);
		else if (!strcmp(kind, "ClusterQueue"))
			json_array_append(objs.cluster_queues, d);
		else if (!strcmp(kind, "LocalQueue"))
			json_array_append(objs.local_queues, d);
		else /* a store, key -> object, in its own order */
			json_object_set(objs.workloads,
					json_string_value(
						json_object_get(json_object_get(d, "metadata"),
								"name")),
					d);
	}
	struct forecast_input fin = { .objects = &objs };
	struct forecast_result res;
	char err[512];
	assert_int_equal(forecast_pending(&fin, &opt, &res, err, sizeof(err)), 0);
	assert_int_equal(res.n, r.res.n);
	assert_int_equal(res.n, 2);
	for (i = 0; i < res.n; i++) {
		assert_string_equal(res.items[i].workload, r.res.items[i].workload);
		assert_int_equal(res.items[i].admission_ms, r.res.items[i].admission_ms);
		assert_int_equal(res.items[i].ahead, r.res.items[i].ahead);
		assert_string_equal(res.items[i].basis, r.res.items[i].basis);
	}
	/* b1 ends 12:20 and a2 borrows; a2 ends 12:30 (history), a1 13:00: b2 then has 8. */
	expect(&r, "a2", "12:20", 0,
	       "0 workloads ahead; the earliest end frees 4 nvidia.com/gpu at ~12:20");
	expect(&r, "b2", "13:00", 1,
	       "1 workload ahead; the earliest end frees 4 nvidia.com/gpu at ~13:00");
	forecast_result_release(&res);
	json_decref(objs.flavors);
	json_decref(objs.cluster_queues);
	json_decref(objs.local_queues);
	json_decref(objs.workloads);
	json_decref(docs);
	run_free(&r);
}

/*
 * The objects path (the manager's eta) with its fair-sharing settings: a lender with 2 GPUs,
 * and cq-a and cq-b with none in its cohort. a1 and a2 are older than b1. Kueue's classical
 * order gives both GPUs to cq-a now; with fair sharing b1 gets one of them now.
 */
static json_t *objs_of(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, 0, &jerr);
	if (!v)
		fail_msg("%s", jerr.text);
	return v;
}

static void fair_forecast(int fair, struct forecast_result *res)
{
	char cq[3][400];
	const char *names[3] = { "l", "cq-a", "cq-b" };
	for (int i = 0; i < 3; i++)
		snprintf(cq[i], sizeof(cq[i]),
			 "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"cohortName\":\"co\","
			 "\"namespaceSelector\":{},\"resourceGroups\":[{\"coveredResources\":"
			 "[\"nvidia.com/gpu\"],\"flavors\":[{\"name\":\"a100\",\"resources\":"
			 "[{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":%d}]}]}]}}",
			 names[i], i == 0 ? 2 : 0);
	char cqs[1300], wls[2000] = "[";
	snprintf(cqs, sizeof(cqs), "[%s,%s,%s]", cq[0], cq[1], cq[2]);
	const char *wl[3][3] = { { "a1", "lq-a", "10:00" },
				 { "a2", "lq-a", "10:01" },
				 { "b1", "lq-b", "10:02" } };
	for (int i = 0; i < 3; i++) {
		size_t len = strlen(wls);
		snprintf(wls + len, sizeof(wls) - len,
			 "%s{\"metadata\":{\"name\":\"%s\",\"namespace\":\"team-a\","
			 "\"creationTimestamp\":\"2026-11-27T%s:00Z\"},\"spec\":{\"queueName\":\"%"
			 "s\","
			 "\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":"
			 "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
			 "{\"nvidia.com/gpu\":\"1\"}}}]}}}]}}",
			 i ? "," : "", wl[i][0], wl[i][2], wl[i][1]);
	}
	strcat(wls, "]");
	struct sim_objects objs = {
		.flavors = objs_of("[{\"metadata\":{\"name\":\"a100\"}}]"),
		.cluster_queues = objs_of(cqs),
		.local_queues =
			objs_of("[{\"metadata\":{\"name\":\"lq-a\",\"namespace\":\"team-a\"},"
				"\"spec\":{\"clusterQueue\":\"cq-a\"}},"
				"{\"metadata\":{\"name\":\"lq-b\",\"namespace\":\"team-a\"},"
				"\"spec\":{\"clusterQueue\":\"cq-b\"}}]"),
		.workloads = objs_of(wls),
	};
	struct eng_fair_sharing fs = { 1, 0, { 0, 0 } };
	if (fair)
		objs.fair_sharing = &fs;
	struct forecast_input fin = { .objects = &objs };
	struct forecast_options opt = options();
	char err[512] = "";
	int rc = forecast_pending(&fin, &opt, res, err, sizeof(err));
	if (rc != 0)
		fail_msg("forecast_pending: %d: %s", rc, err);
	json_decref(objs.flavors);
	json_decref(objs.cluster_queues);
	json_decref(objs.local_queues);
	json_decref(objs.workloads);
}

static int admitted_now(const struct forecast_result *res, const char *key)
{
	for (size_t i = 0; i < res->n; i++)
		if (!strcmp(res->items[i].workload, key))
			return res->items[i].has_admission &&
			       res->items[i].admission_ms == at("12:00");
	fail_msg("no estimate for %s", key);
	return 0;
}

static void test_objects_with_fair_sharing(void **state)
{
	(void)state;
	struct forecast_result res;
	fair_forecast(0, &res);
	assert_true(admitted_now(&res, "team-a/a2"));
	assert_false(admitted_now(&res, "team-a/b1"));
	forecast_result_release(&res);
	fair_forecast(1, &res);
	assert_false(admitted_now(&res, "team-a/a2"));
	assert_true(admitted_now(&res, "team-a/b1"));
	forecast_result_release(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_queue_best_effort),
		cmocka_unit_test(test_strict_fifo_priorities),
		cmocka_unit_test(test_cohort_borrowing),
		cmocka_unit_test(test_gang_waits_for_two_ends),
		cmocka_unit_test(test_no_basis),
		cmocka_unit_test(test_runtime_precedence),
		cmocka_unit_test(test_history_sample),
		cmocka_unit_test(test_now_preemption_horizon),
		cmocka_unit_test(test_one_workload),
		cmocka_unit_test(test_invalid_input),
		cmocka_unit_test(test_objects_with_fair_sharing),
		cmocka_unit_test(test_objects_match_texts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
