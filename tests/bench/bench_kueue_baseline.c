/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kueue's scheduler-performance "baseline" shape (test/performance/scheduler/configs/baseline),
 * driven through the engine by a discrete-event simulation in virtual time:
 *   5 cohorts x 6 ClusterQueues, each cpu nominalQuota 20, borrowingLimit 100,
 *   reclaimWithinCohort Any, withinClusterQueue LowerPriority; per ClusterQueue
 *   350 small  (1 cpu,  200 ms, priority 50,  one every 100 ms),
 *   100 medium (5 cpu,  500 ms, priority 100, one every 500 ms),
 *    50 large  (20 cpu, 1000 ms, priority 200, one every 1200 ms): 15,000 workloads.
 * As in Kueue's generator, the k-th workload of a class arrives at (k + 1) * interval, in every
 * ClusterQueue at once, and its queue-order time is its creation time.
 *
 * Events: an arrival adds a workload; an admitted workload finishes runtime after its
 * admission (engine_remove_workload); a preemption victim is evicted at once (engine_evict)
 * and requeued, and runs its whole runtime again when re-admitted (Kueue's runner measures
 * runtime from the latest admission). After each batch of simultaneous events the engine is
 * cycled to its fixed point (victims evicted between cycles), all at the same virtual instant:
 * decisions take no virtual time.
 *
 * Figures, defined as Kueue's recorder and checker define them:
 *   makespan          virtual time until the last workload finishes;
 *   time to admission per class: from creation to the (latest) admission, mean/p50/p95/max;
 *   usage             cpu.time held by admitted workloads (including runs later preempted)
 *                     / (sum of nominal quotas x makespan): clusterQueueClassesMinUsage;
 *   preemptions, and the real CPU and wall time the whole simulation took.
 * After every instant the engine's usage is checked against the simulation's own record and
 * against the limits (ClusterQueue <= 120 cpu, cohort <= 120 cpu); at the end every workload
 * must have finished. Deterministic: no randomness at all.
 *
 * -s large runs Kueue's large-scale shape instead (kueue_side_by_side.sh gen_config_large at
 * scale 0.1): one cohort of 100 ClusterQueues, each with 35 small (150 ms, one every 60 ms),
 * 11 medium (350 ms, every 300 ms) and 4 large (700 ms, every 700 ms): 5,000 workloads.
 * -d MS keeps a victim's quota for MS after its preemption and -f MS a finished workload's
 * for MS after its runtime, as a live control plane's writes and watches do; with them,
 * preemptors wait on victims that are still going, as they do against a cluster (with -d 0,
 * the default, victims go between two cycles of one instant).
 * The preemptions are counted per reason: within a ClusterQueue, or reclaims in the cohort.
 *
 * Usage: bench_kueue_baseline [-r reps] [-s baseline|large] [-d evict_delay_ms]
 *                             [-f finish_delay_ms]
 * Exit status: 0 figures printed; 1 a check failed, the engine erred, a fixed point was not
 * reached, or repetitions disagreed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "core/engine.h"

#define CPU(x) ((int64_t)(x)*1000)
#define MAX_CQS 100
#define MAX_WL 15000
#define N_COHORTS (shape->n_cohorts)
#define CQ_PER (shape->cq_per)
#define N_CQS (N_COHORTS * CQ_PER)
#define WL_PER_CQ (shape->cls[0].count + shape->cls[1].count + shape->cls[2].count)
#define N_WL (N_CQS * WL_PER_CQ)
#define NOMINAL CPU(20)
#define BORROWING_LIMIT CPU(100)
#define MAX_CYCLES_PER_INSTANT 10000
#define MAX_REPS 9
#define KEY_STRIDE 48

struct wclass {
	const char *name;
	int count; /* per ClusterQueue */
	int64_t cpu; /* milli-cpu */
	int64_t runtime_ms;
	int32_t priority;
	int64_t interval_ms;
};

struct shape {
	const char *name;
	int n_cohorts, cq_per;
	struct wclass cls[3];
	/* Kueue's figures for the shape, wall-clock: time to admission per class, wall, usage. */
	double kueue_tta_ms[3], kueue_wall_ms, kueue_usage_pct;
	const char *kueue_source;
};

static const struct shape shapes[] = {
	{ "baseline",
	  5,
	  6,
	  {
		  { "small", 350, CPU(1), 200, 50, 100 },
		  { "medium", 100, CPU(5), 500, 100, 500 },
		  { "large", 50, CPU(20), 1000, 200, 1200 },
	  },
	  { 215468, 76768, 16501 },
	  351116.4,
	  55.9,
	  "Kueue's published averages, kueue-compat.md 5.1" },
	/* Kueue's large-scale generator (tests/bench/kueue_side_by_side.sh gen_config_large) at
	 * scale 0.1: one cohort of 100 ClusterQueues, the same quotas and preemption. */
	{ "large",
	  1,
	  100,
	  {
		  { "small", 35, CPU(1), 150, 50, 60 },
		  { "medium", 11, CPU(5), 350, 100, 300 },
		  { "large", 4, CPU(20), 700, 200, 700 },
	  },
	  { 24800, 13400, 7600 },
	  61100,
	  53.5,
	  "Kueue v0.17 full manager, tests/bench/results/side-by-side.md, 762c6ad" },
};

static const struct shape *shape = &shapes[0];
#define classes (shape->cls)


enum { WL_FUTURE, WL_PENDING, WL_ADMITTED, WL_VICTIM, WL_DONE };
enum { EV_ARRIVE, EV_FINISH, EV_RELEASE };

/* Latencies a live control plane adds (0: none, the default). A victim keeps its quota for
 * evict_delay_ms after its preemption (the eviction's write, the job stopping, the manager
 * seeing it); a finished workload keeps it for finish_delay_ms after its runtime. */
static int64_t evict_delay_ms, finish_delay_ms;

struct swl {
	uint8_t cls, state;
	uint16_t cq;
	uint32_t gen; /* admissions so far: a finish event of an earlier run is stale */
	uint32_t evictions;
	int64_t arrival_ms, admitted_ms, first_admit_ms, finish_ms;
};

struct event {
	int64_t t;
	uint32_t seq; /* ties: in the order they were scheduled */
	uint32_t wl;
	uint32_t gen;
	uint8_t kind;
};

struct sim {
	struct engine *e;
	char cq_name[MAX_CQS][32];
	int64_t used[MAX_CQS]; /* admitted cpu per ClusterQueue, as the simulation sees it */
	double held_cpu_ms[MAX_CQS]; /* integral of used over time, milli-cpu x ms */
	struct swl wl[MAX_WL];
	char keys[MAX_WL][KEY_STRIDE];
	struct event *heap;
	size_t n_heap, cap_heap;
	uint32_t seq;
	uint32_t victims[MAX_WL];
	size_t n_victims;
	int64_t now;
	long cycles, instants, admits, preempts, pendings, done;
	long preempts_within; /* of preempts, InClusterQueue (the rest reclaim in the cohort) */
	int64_t makespan_ms;
	int failed;
	char err[256];
};

struct result {
	int ok;
	char err[256];
	long cycles, instants, admits, preempts, pendings, preempts_within;
	int64_t makespan_ms;
	double usage_pct, useful_pct;
	double tta_mean[3], tta_p50[3], tta_p95[3], tta_max[3], first_mean[3];
	long evictions[3];
	double cpu_ms, wall_ms, hwm_kib;
};

static void fail(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct sim *s, const char *fmt, ...)
{
	if (s->failed++)
		return; /* the first one explains the rest */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
}

/* --- the event queue: a binary min-heap on (time, seq) ------------------------------------- */

static int ev_before(const struct event *a, const struct event *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static int ev_push(struct sim *s, int64_t t, uint8_t kind, uint32_t wl, uint32_t gen)
{
	if (s->n_heap == s->cap_heap) {
		size_t cap = s->cap_heap ? s->cap_heap * 2 : 1024;
		struct event *h = realloc(s->heap, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		s->heap = h;
		s->cap_heap = cap;
	}
	size_t i = s->n_heap++;
	struct event ev = { t, s->seq++, wl, gen, kind };
	while (i && ev_before(&ev, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = ev;
	return 0;
}

static struct event ev_pop(struct sim *s)
{
	struct event top = s->heap[0], last = s->heap[--s->n_heap];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->n_heap)
			break;
		if (c + 1 < s->n_heap && ev_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->n_heap)
		s->heap[i] = last;
	return top;
}

/* --- the engine side ----------------------------------------------------------------------- */

static long wl_index(const struct sim *s, const char *key)
{
	const char *p = key ? strrchr(key, '/') : NULL;
	if (!p || p[1] != 'w')
		return -1;
	char *end;
	unsigned long i = strtoul(p + 2, &end, 10);
	if (*end || i >= (unsigned long)N_WL || strcmp(key, s->keys[i]))
		return -1;
	return (long)i;
}

static void on_decision(void *arg, const struct eng_decision *d)
{
	struct sim *s = arg;
	long i = wl_index(s, d->workload);
	if (i < 0) {
		fail(s, "decision about unknown workload %s", d->workload ? d->workload : "(null)");
		return;
	}
	struct swl *w = &s->wl[i];
	const struct wclass *c = &classes[w->cls];
	switch (d->kind) {
	case ENG_ADMIT: {
		const struct eng_assignment *a = d->assignment;
		if (w->state != WL_PENDING) {
			fail(s, "%s admitted in state %d", d->workload, w->state);
			return;
		}
		if (!a || a->n_podsets != 1 || a->podsets[0].n != 1 ||
		    a->podsets[0].usage[0] != c->cpu ||
		    strcmp(a->cluster_queue, s->cq_name[w->cq])) {
			fail(s, "%s: wrong assignment", d->workload);
			return;
		}
		w->state = WL_ADMITTED;
		w->admitted_ms = s->now;
		if (!w->gen)
			w->first_admit_ms = s->now;
		w->gen++;
		s->used[w->cq] += c->cpu;
		s->admits++;
		if (ev_push(s, s->now + c->runtime_ms + finish_delay_ms, EV_FINISH, (uint32_t)i,
			    w->gen))
			fail(s, "out of memory");
		break;
	}
	case ENG_PREEMPT:
		if (w->state != WL_ADMITTED || !d->preemptor) {
			fail(s, "%s preempted in state %d", d->workload, w->state);
			return;
		}
		w->state = WL_VICTIM;
		s->victims[s->n_victims++] = (uint32_t)i;
		s->preempts++;
		if (d->reason && !strcmp(d->reason, "InClusterQueue"))
			s->preempts_within++;
		break;
	case ENG_PENDING:
		if (w->state != WL_PENDING)
			fail(s, "%s: pending decision in state %d", d->workload, w->state);
		s->pendings++;
		break;
	}
}

/* Quota held from admission until now goes into the usage integral. */
static void release(struct sim *s, struct swl *w)
{
	int64_t cpu = classes[w->cls].cpu;
	s->used[w->cq] -= cpu;
	s->held_cpu_ms[w->cq] += (double)cpu * (double)(s->now - w->admitted_ms);
}

/* A victim's eviction reaches the engine: its quota is free and it queues again. */
static int evict(struct sim *s, uint32_t i)
{
	struct swl *w = &s->wl[i];
	int erc = engine_evict(s->e, s->keys[i]);
	if (erc)
		return fail(s, "engine_evict(%s): %s", s->keys[i], strerror(-erc)), -1;
	release(s, w);
	w->state = WL_PENDING;
	w->evictions++;
	return 0;
}

static int settle(struct sim *s)
{
	for (int n = 0;; n++) {
		if (n >= MAX_CYCLES_PER_INSTANT) {
			fail(s, "t=%" PRId64 " ms: no fixed point after %d cycles", s->now,
			     MAX_CYCLES_PER_INSTANT);
			return -1;
		}
		int rc = engine_cycle(s->e, on_decision, s);
		s->cycles++;
		if (rc < 0) {
			fail(s, "engine_cycle: %s", strerror(-rc));
			return -1;
		}
		for (size_t k = 0; k < s->n_victims; k++) {
			if (evict_delay_ms) {
				uint32_t v = s->victims[k];
				if (ev_push(s, s->now + evict_delay_ms, EV_RELEASE, v,
					    s->wl[v].gen))
					return fail(s, "out of memory"), -1;
			} else if (evict(s, s->victims[k])) {
				return -1;
			}
		}
		s->n_victims = 0;
		if (s->failed)
			return -1;
		if (rc == 0)
			return 0;
	}
}

static int check(struct sim *s)
{
	for (int c = 0; c < N_COHORTS; c++) {
		int64_t sum = 0;
		for (int q = c * CQ_PER; q < (c + 1) * CQ_PER; q++) {
			struct eng_cq_usage u;
			int rc = engine_cq_usage(s->e, s->cq_name[q], "rf", "cpu", &u);
			if (rc || u.total != s->used[q] || u.total > NOMINAL + BORROWING_LIMIT) {
				fail(s,
				     "t=%" PRId64 " ms: %s usage %" PRId64
				     "m (rc %d), admitted sum %" PRId64 "m, limit %" PRId64 "m",
				     s->now, s->cq_name[q], u.total, rc, s->used[q],
				     NOMINAL + BORROWING_LIMIT);
				return -1;
			}
			sum += u.total;
		}
		char co[24];
		snprintf(co, sizeof(co), "cohort-%d", c);
		struct eng_cq_usage u;
		int rc = engine_cohort_usage(s->e, co, "rf", "cpu", &u);
		if (rc || u.total != sum || sum > CQ_PER * NOMINAL) {
			fail(s,
			     "t=%" PRId64 " ms: %s usage %" PRId64
			     "m (rc %d), ClusterQueues sum %" PRId64 "m, quota %" PRId64 "m",
			     s->now, co, u.total, rc, sum, CQ_PER * NOMINAL);
			return -1;
		}
	}
	return 0;
}

static int setup(struct sim *s)
{
	static const char *const covered[] = { "cpu" };
	static const struct label_selector everything = { 0 }; /* empty: matches every namespace */
	struct quota_flavor rf = { .name = "rf" };
	if (engine_new(&s->e) || engine_set_flavor(s->e, &rf))
		return fail(s, "engine_new/engine_set_flavor failed"), -1;
	for (int q = 0; q < N_CQS; q++) {
		char co[24];
		snprintf(co, sizeof(co), "cohort-%d", q / CQ_PER);
		snprintf(s->cq_name[q], sizeof(s->cq_name[q]), "cq-%d-%d", q / CQ_PER, q % CQ_PER);
		struct eng_resource_quota rq = { "cpu", NOMINAL, 1, BORROWING_LIMIT, 0, 0 };
		struct eng_flavor_quotas fq = { "rf", 1, &rq };
		struct eng_resource_group rg = { 1, covered, 1, &fq };
		struct eng_cq_spec spec = {
			.name = s->cq_name[q],
			.cohort = co,
			.n_groups = 1,
			.groups = &rg,
			.queueing = ENG_BEST_EFFORT_FIFO,
			.preemption = { .within_cluster_queue = ENG_WITHIN_LOWER_PRIORITY,
					.reclaim_within_cohort = ENG_RECLAIM_ANY },
			.namespace_selector = &everything,
		};
		if (engine_set_cq(s->e, &spec) ||
		    engine_set_namespace(s->e, s->cq_name[q], 0, NULL) ||
		    engine_set_local_queue(s->e, s->cq_name[q], "lq", s->cq_name[q], ENG_STOP_NONE))
			return fail(s, "setting up %s failed", s->cq_name[q]), -1;
	}
	for (uint32_t i = 0; i < (uint32_t)N_WL; i++) {
		struct swl *w = &s->wl[i];
		int k = (int)(i % WL_PER_CQ), j = k;
		w->cq = (uint16_t)(i / WL_PER_CQ);
		w->cls = 0;
		while (j >= classes[w->cls].count)
			j -= classes[w->cls++].count;
		w->arrival_ms = (int64_t)(j + 1) * classes[w->cls].interval_ms;
		snprintf(s->keys[i], KEY_STRIDE, "%s/w%u", s->cq_name[w->cq], i);
		if (ev_push(s, w->arrival_ms, EV_ARRIVE, i, 0))
			return fail(s, "out of memory"), -1;
	}
	return 0;
}

static int arrive(struct sim *s, uint32_t i)
{
	static const char *const cpu[] = { "cpu" };
	struct swl *w = &s->wl[i];
	const struct wclass *c = &classes[w->cls];
	struct eng_podset ps = { .name = "main", .count = 1 };
	ps.pod.n_requests = 1;
	ps.pod.resources = cpu;
	ps.pod.per_pod = &c->cpu;
	struct eng_workload_spec spec = {
		.key = s->keys[i],
		.namespace_name = s->cq_name[w->cq],
		.queue = "lq",
		.priority = c->priority,
		.queue_time = w->arrival_ms * 1000000,
		.n_podsets = 1,
		.podsets = &ps,
	};
	int rc = engine_add_workload(s->e, &spec);
	if (rc)
		return fail(s, "engine_add_workload(%s): %s", spec.key, strerror(-rc)), -1;
	w->state = WL_PENDING;
	return 0;
}

static void simulate(struct sim *s, struct result *res)
{
	int64_t w0 = bench_wall_ns(), c0 = bench_cpu_ns();
	if (setup(s))
		goto out;
	while (s->n_heap) {
		s->now = s->heap[0].t;
		s->instants++;
		while (s->n_heap && s->heap[0].t == s->now) {
			struct event ev = ev_pop(s);
			struct swl *w = &s->wl[ev.wl];
			if (ev.kind == EV_ARRIVE) {
				if (arrive(s, ev.wl))
					goto out;
				continue;
			}
			if (ev.kind == EV_RELEASE) {
				if (w->state == WL_VICTIM && ev.gen == w->gen && evict(s, ev.wl))
					goto out;
				continue;
			}
			if (w->state != WL_ADMITTED || ev.gen != w->gen)
				continue; /* preempted since: this run never finishes */
			engine_remove_workload(s->e, s->keys[ev.wl]);
			release(s, w);
			w->state = WL_DONE;
			w->finish_ms = s->now;
			s->done++;
			s->makespan_ms = s->now;
		}
		if (settle(s) || check(s))
			goto out;
	}
	if (s->done != N_WL)
		fail(s, "only %ld of %d workloads finished", s->done, N_WL);
out:
	res->cpu_ms = BENCH_MS(bench_cpu_ns() - c0);
	res->wall_ms = BENCH_MS(bench_wall_ns() - w0);
	engine_free(s->e);
	s->e = NULL;
	res->hwm_kib = (double)bench_status_kib("VmHWM");
	if (s->failed) {
		memcpy(res->err, s->err, sizeof(res->err));
		return;
	}
	res->cycles = s->cycles;
	res->instants = s->instants;
	res->admits = s->admits;
	res->preempts = s->preempts;
	res->preempts_within = s->preempts_within;
	res->pendings = s->pendings;
	res->makespan_ms = s->makespan_ms;
	double held = 0;
	for (int q = 0; q < N_CQS; q++)
		held += s->held_cpu_ms[q];
	double capacity = (double)N_CQS * (double)NOMINAL * (double)s->makespan_ms;
	res->usage_pct = 100 * held / capacity;
	double useful = 0;
	for (int k = 0; k < 3; k++)
		useful += (double)N_CQS * classes[k].count * (double)classes[k].cpu *
			  (double)classes[k].runtime_ms;
	res->useful_pct = 100 * useful / capacity;
	static double tta[3][MAX_WL];
	size_t n[3] = { 0 };
	double first[3] = { 0 };
	for (int i = 0; i < N_WL; i++) {
		const struct swl *w = &s->wl[i];
		tta[w->cls][n[w->cls]++] = (double)(w->admitted_ms - w->arrival_ms);
		first[w->cls] += (double)(w->first_admit_ms - w->arrival_ms);
		res->evictions[w->cls] += w->evictions;
	}
	for (int k = 0; k < 3; k++) {
		double sum = 0;
		for (size_t i = 0; i < n[k]; i++)
			sum += tta[k][i];
		qsort(tta[k], n[k], sizeof(double), bench_cmp_double);
		res->tta_mean[k] = sum / (double)n[k];
		res->first_mean[k] = first[k] / (double)n[k];
		res->tta_p50[k] = bench_quantile(tta[k], n[k], 0.50);
		res->tta_p95[k] = bench_quantile(tta[k], n[k], 0.95);
		res->tta_max[k] = tta[k][n[k] - 1];
	}
	res->ok = 1;
}

int main(int argc, char **argv)
{
	int reps = 3, opt;
	while ((opt = getopt(argc, argv, "r:s:d:f:")) != -1) {
		switch (opt) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 's':
			shape = NULL;
			for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
				if (!strcmp(optarg, shapes[k].name))
					shape = &shapes[k];
			if (!shape) {
				fprintf(stderr, "unknown shape %s (baseline, large)\n", optarg);
				return 2;
			}
			break;
		case 'd':
			evict_delay_ms = atoll(optarg);
			break;
		case 'f':
			finish_delay_ms = atoll(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-r reps] [-s baseline|large] [-d evict_delay_ms] "
				"[-f finish_delay_ms]\n",
				argv[0]);
			return 2;
		}
	}
	if (evict_delay_ms < 0 || finish_delay_ms < 0) {
		fprintf(stderr, "delays must be >= 0\n");
		return 2;
	}
	if (reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "reps must be 1..%d\n", MAX_REPS);
		return 2;
	}
	static struct result res[MAX_REPS];
	struct sim *s = malloc(sizeof(*s));
	if (!s)
		return 1;
	for (int r = 0; r < reps; r++) {
		memset(s, 0, sizeof(*s));
		simulate(s, &res[r]);
		free(s->heap);
		if (!res[r].ok) {
			fprintf(stderr, "bench_kueue_baseline: FAILED: %s\n", res[r].err);
			printf("BENCH kueue_baseline status=FAIL reason=\"%s\"\n", res[r].err);
			free(s);
			return 1;
		}
		/* Virtual time has no noise: every repetition must decide exactly the same. */
		if (r &&
		    (res[r].makespan_ms != res[0].makespan_ms || res[r].admits != res[0].admits ||
		     res[r].preempts != res[0].preempts || res[r].cycles != res[0].cycles)) {
			fprintf(stderr,
				"bench_kueue_baseline: repetition %d differs from the first\n",
				r + 1);
			printf("BENCH kueue_baseline status=FAIL reason=\"nondeterministic\"\n");
			free(s);
			return 1;
		}
	}
	free(s);
	double cpu[MAX_REPS], wall[MAX_REPS];
	for (int r = 0; r < reps; r++) {
		cpu[r] = res[r].cpu_ms;
		wall[r] = res[r].wall_ms;
	}
	double cpu_ms = bench_median(cpu, (size_t)reps), wall_ms = bench_median(wall, (size_t)reps);
	const struct result *r0 = &res[0];
	long evictions = r0->evictions[0] + r0->evictions[1] + r0->evictions[2];

	/* The bound no scheduler can beat: a cohort's quota must carry its work (baseline: 120 cpu,
	 * 7,920 cpu.s), and the last arrival must run (baseline: a large at 60 s, for 1 s). */
	double work = 0;
	for (int k = 0; k < 3; k++)
		work += CQ_PER * classes[k].count * (double)classes[k].cpu / 1000 *
			(double)classes[k].runtime_ms / 1000;
	double bound_s = work / (CQ_PER * (double)NOMINAL / 1000), last_s = 0;
	for (int k = 0; k < 3; k++) {
		double end = (double)(classes[k].count * classes[k].interval_ms +
				      classes[k].runtime_ms) /
			     1000;
		last_s = end > last_s ? end : last_s;
	}
	if (bound_s < last_s)
		bound_s = last_s;

	printf("Kueue %s shape in virtual time: %d cohorts x %d ClusterQueues, %d workloads, "
	       "%d repetitions (CPU time: median); evict delay %" PRId64
	       " ms, finish delay %" PRId64 " ms\n",
	       shape->name, N_COHORTS, CQ_PER, N_WL, reps, evict_delay_ms, finish_delay_ms);
	printf("  Kueue's figures: %s\n", shape->kueue_source);
	printf("  makespan %.1f s virtual (lower bound %.1f s; Kueue's run: %.1f s of wall time)\n",
	       (double)r0->makespan_ms / 1e3, bound_s, shape->kueue_wall_ms / 1e3);
	printf("  usage %.1f%% (Kueue's run: %.1f%%); of it completed work %.1f%%, preempted runs "
	       "%.1f%%\n",
	       r0->usage_pct, shape->kueue_usage_pct, r0->useful_pct,
	       r0->usage_pct - r0->useful_pct);
	printf("  %-7s %10s %10s %10s %10s %12s %10s %12s\n", "class", "tta mean", "p50", "p95",
	       "max", "first mean", "evictions", "Kueue mean");
	for (int k = 2; k >= 0; k--)
		printf("  %-7s %10.0f %10.0f %10.0f %10.0f %12.0f %10ld %12.0f\n", classes[k].name,
		       r0->tta_mean[k], r0->tta_p50[k], r0->tta_p95[k], r0->tta_max[k],
		       r0->first_mean[k], r0->evictions[k], shape->kueue_tta_ms[k]);
	printf("  (times to admission in ms: virtual here, wall clock for Kueue; tta counts from "
	       "creation to the latest admission, as Kueue's recorder does)\n");
	printf("  preemptions %ld (within a ClusterQueue %ld, reclaims in the cohort %ld), "
	       "admissions %ld, cycles %ld at %ld instants, pending decisions "
	       "%ld\n",
	       r0->preempts, r0->preempts_within, r0->preempts - r0->preempts_within, r0->admits,
	       r0->cycles, r0->instants, r0->pendings);
	printf("  real time for the whole simulation: %.1f ms CPU, %.1f ms wall; peak RSS %.0f "
	       "KiB\n",
	       cpu_ms, wall_ms, r0->hwm_kib);
	printf("BENCH kueue_baseline status=ok workloads=%d makespan_s=%.1f bound_s=%.1f "
	       "usage_pct=%.1f "
	       "useful_pct=%.1f tta_large_ms=%.0f tta_medium_ms=%.0f tta_small_ms=%.0f "
	       "p95_large_ms=%.0f p95_medium_ms=%.0f p95_small_ms=%.0f preemptions=%ld "
	       "evictions=%ld "
	       "admissions=%ld cycles=%ld instants=%ld cpu_ms=%.1f wall_ms=%.1f hwm_kib=%.0f\n",
	       N_WL, (double)r0->makespan_ms / 1e3, bound_s, r0->usage_pct, r0->useful_pct,
	       r0->tta_mean[2], r0->tta_mean[1], r0->tta_mean[0], r0->tta_p95[2], r0->tta_p95[1],
	       r0->tta_p95[0], r0->preempts, evictions, r0->admits, r0->cycles, r0->instants,
	       cpu_ms, wall_ms, r0->hwm_kib);
	return 0;
}
