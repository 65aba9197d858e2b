/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine throughput at Kueue's large-scale shape: 1,000 ClusterQueues in 10 cohorts (100 per
 * cohort), 50 pending workloads per ClusterQueue (35 small, 11 medium, 4 large: 1, 5 and 20
 * cpu at priorities 50, 100 and 200), 50,000 in all. Each ClusterQueue has borrowingLimit 100,
 * reclaimWithinCohort Any and withinClusterQueue LowerPriority, as Kueue's generator writes
 * them, and a seeded random cpu nominalQuota: a tenth have none (they only borrow), a tenth
 * 200 (more than their 170 cpu of demand: they lend), the rest 20..80. About a third of the
 * demand fits at once. Kueue gives every ClusterQueue the same quota and demand, which in a
 * one-shot run would leave nothing to lend or borrow (-k runs that way).
 *
 * Two phases per repetition:
 *   fixed point  all 50,000 are added pending, then engine_cycle runs until it returns 0;
 *                preemption victims are evicted (engine_evict) between cycles, as the manager
 *                does once its writes land. Time, cycles and decisions are reported.
 *   churn        round after round a seeded random quarter of the running workloads finishes
 *                (engine_remove_workload) and the engine is cycled to its fixed point again,
 *                until all 50,000 have run: the incremental path a live cluster exercises.
 * Correctness is checked (outside the timed parts) after each fixed point: every ClusterQueue's
 * usage equals the sum of what it admitted, stays within nominal + borrowingLimit, and each
 * cohort's usage equals its ClusterQueues' sum and stays within the cohort's quota; the
 * engine's pending and admitted counts equal the bench's; at the end nothing is left.
 *
 * Each repetition runs in a forked child so that its peak RSS is its own. Figures are medians.
 * Usage: bench_engine_throughput [-r reps] [-s seed] [-q] [-k] [-f] [-v]
 *   -q  quick: 2 cohorts x 20 ClusterQueues      -k  Kueue's quotas: nominal 20 everywhere
 *   -f  fair sharing on (Kueue's default strategies), weights 1, 2 and 0.5 in turn
 *   -l  with -f: the strategy LessThanOrEqualToFinalShare alone
 *   -F  the fixed point only (no churn): fair sharing's churn at full size is slow, see
 *       tests/bench/results/engine.md
 *   -v  one line per cycle (cpu time, decisions) on stderr
 * Exit status: 0 figures printed; 1 a correctness check failed, the engine returned an error,
 * never reached a fixed point, or a child crashed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_common.h"
#include "core/engine.h"

#define CPU(x) ((int64_t)(x)*1000)
#define BORROWING_LIMIT CPU(100)
#define KEY_STRIDE 32
#define MAX_CYCLES 100000 /* per fixed point: far beyond any sane need */
#define MAX_REPS 15
#define MAX_ROUNDS 100000

struct wclass {
	const char *name;
	int per_cq;
	int64_t cpu; /* milli-cpu per (single-pod) workload */
	int32_t priority;
	int64_t interval_ms; /* queue-order time spacing, as Kueue's generator creates them */
};

static const struct wclass classes[3] = {
	{ "small", 35, CPU(1), 50, 100 },
	{ "medium", 11, CPU(5), 100, 500 },
	{ "large", 4, CPU(20), 200, 1200 },
};

enum { WL_PENDING, WL_ADMITTED, WL_VICTIM, WL_DONE };

struct bwl {
	uint8_t cls;
	uint8_t state;
	uint8_t listed; /* in run.admitted */
	uint32_t cq;
};

struct opts {
	int n_cohorts, per_cohort;
	uint64_t seed;
	int uniform; /* Kueue's own quotas: nominal 20 everywhere */
	int fair; /* fair sharing on (2: LessThanOrEqualToFinalShare alone) */
	int fixed_only; /* no churn phase */
	int verbose; /* one line per cycle on stderr */
};

struct run {
	struct engine *e;
	const struct opts *o;
	const char *phase;
	long round;
	int n_cohorts, per_cohort, n_cqs;
	char (*cq_name)[32];
	int64_t *nominal;
	int64_t *used; /* the bench's own record of admitted cpu per ClusterQueue */
	uint32_t *n_adm, *n_pend;
	struct bwl *wl;
	size_t n_wl;
	char *keys; /* n_wl keys, KEY_STRIDE bytes apart */
	uint32_t *victims;
	size_t n_victims;
	uint32_t *admitted; /* what runs, each once; entries of evicted workloads are stale */
	size_t n_admitted;
	long admits, preempts, pendings;
	long n_borrowing; /* ClusterQueues above nominal, and by how much, at the last check */
	int64_t borrowed;
	int failed;
	char err[256];
};

/* What a child reports to the parent for one repetition. */
struct result {
	int ok;
	char err[256];
	long n_wl, total_nominal_cpu, fix_borrowing, fix_borrowed_cpu;
	long fix_cycles, fix_admits, fix_preempts, fix_pendings;
	long turn_rounds, turn_cycles, turn_admits, turn_preempts, turn_pendings;
	/* Measured figures, all doubles so that medians are taken the same way. */
	double load_ms, fix_ms, fix_cpu_ms, turn_ms, turn_cpu_ms;
	double rss_base_kib, rss_cqs_kib, hwm_loaded_kib, hwm_fix_kib, hwm_end_kib;
	double heap_base, heap_loaded, heap_fix;
};

static void fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct run *r, const char *fmt, ...)
{
	if (r->failed++)
		return; /* keep the first: later ones are usually its consequences */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

static const char *key_of(const struct run *r, size_t i)
{
	return r->keys + i * KEY_STRIDE;
}

/* Keys are "<namespace>/w<index>": the index is parsed back, then the whole key compared, so
 * a decision about a workload the bench never added can't go unnoticed. */
static long wl_index(const struct run *r, const char *key)
{
	const char *p = key ? strrchr(key, '/') : NULL;
	if (!p || p[1] != 'w')
		return -1;
	char *end;
	unsigned long i = strtoul(p + 2, &end, 10);
	if (*end || i >= r->n_wl || strcmp(key, key_of(r, i)))
		return -1;
	return (long)i;
}

static void on_decision(void *arg, const struct eng_decision *d)
{
	struct run *r = arg;
	long i = wl_index(r, d->workload);
	if (i < 0) {
		fail(r, "decision about unknown workload %s", d->workload ? d->workload : "(null)");
		return;
	}
	struct bwl *w = &r->wl[i];
	const struct wclass *c = &classes[w->cls];
	switch (d->kind) {
	case ENG_ADMIT: {
		const struct eng_assignment *a = d->assignment;
		if (w->state != WL_PENDING) {
			fail(r, "%s admitted while in state %d", d->workload, w->state);
			return;
		}
		if (!a || a->n_podsets != 1 || a->podsets[0].count != 1 || a->podsets[0].n != 1 ||
		    strcmp(a->podsets[0].resources[0], "cpu") || a->podsets[0].usage[0] != c->cpu ||
		    strcmp(a->cluster_queue, r->cq_name[w->cq])) {
			fail(r, "%s: wrong assignment", d->workload);
			return;
		}
		w->state = WL_ADMITTED;
		r->used[w->cq] += c->cpu;
		r->n_adm[w->cq]++;
		r->n_pend[w->cq]--;
		if (!w->listed) {
			w->listed = 1;
			r->admitted[r->n_admitted++] = (uint32_t)i;
		}
		r->admits++;
		break;
	}
	case ENG_PREEMPT:
		if (w->state != WL_ADMITTED || !d->preemptor) {
			fail(r, "%s: preempted in state %d (preemptor %s)", d->workload, w->state,
			     d->preemptor ? d->preemptor : "none: a drain");
			return;
		}
		w->state = WL_VICTIM;
		r->victims[r->n_victims++] = (uint32_t)i;
		r->preempts++;
		break;
	case ENG_PENDING:
		if (w->state != WL_PENDING)
			fail(r, "%s: pending decision in state %d", d->workload, w->state);
		r->pendings++;
		break;
	}
}

/* Cycles until the engine has nothing more to do, evicting victims as soon as they are named
 * (the manager's eviction write succeeding at once). */
static int settle(struct run *r, long *cycles)
{
	for (long n = 0;; n++) {
		if (n >= MAX_CYCLES) {
			fail(r, "no fixed point after %d cycles", MAX_CYCLES);
			return -1;
		}
		long a0 = r->admits, p0 = r->preempts, d0 = r->pendings;
		int64_t t0 = r->o->verbose ? bench_cpu_ns() : 0;
		int rc = engine_cycle(r->e, on_decision, r);
		if (r->o->verbose)
			fprintf(stderr,
				"  %s round %ld cycle %ld: %.2f ms cpu, %ld admitted, %ld "
				"preempted, "
				"%ld pending decisions\n",
				r->phase, r->round, n + 1, BENCH_MS(bench_cpu_ns() - t0),
				r->admits - a0, r->preempts - p0, r->pendings - d0);
		(*cycles)++;
		if (rc < 0) {
			fail(r, "engine_cycle: %s", strerror(-rc));
			return -1;
		}
		for (size_t k = 0; k < r->n_victims; k++) {
			uint32_t i = r->victims[k];
			struct bwl *w = &r->wl[i];
			int erc = engine_evict(r->e, key_of(r, i));
			if (erc) {
				fail(r, "engine_evict(%s): %s", key_of(r, i), strerror(-erc));
				return -1;
			}
			w->state = WL_PENDING;
			r->used[w->cq] -= classes[w->cls].cpu;
			r->n_adm[w->cq]--;
			r->n_pend[w->cq]++;
		}
		r->n_victims = 0;
		if (r->failed)
			return -1;
		if (rc == 0)
			return 0;
	}
}

/* The engine's view must equal the bench's, and stay within every limit. */
static int check(struct run *r, const char *when)
{
	r->n_borrowing = 0;
	r->borrowed = 0;
	for (int c = 0; c < r->n_cohorts; c++) {
		int64_t sum = 0, quota = 0;
		for (int q = c * r->per_cohort; q < (c + 1) * r->per_cohort; q++) {
			struct eng_cq_usage u;
			int rc = engine_cq_usage(r->e, r->cq_name[q], "rf", "cpu", &u);
			if (rc) {
				fail(r, "%s: engine_cq_usage(%s): %s", when, r->cq_name[q],
				     strerror(-rc));
				return -1;
			}
			if (u.total != r->used[q]) {
				fail(r,
				     "%s: %s usage %" PRId64
				     "m, its admitted workloads sum to %" PRId64 "m",
				     when, r->cq_name[q], u.total, r->used[q]);
				return -1;
			}
			if (u.total > r->nominal[q] + BORROWING_LIMIT) {
				fail(r,
				     "%s: %s over nominal + borrowingLimit: %" PRId64 "m > %" PRId64
				     "m",
				     when, r->cq_name[q], u.total, r->nominal[q] + BORROWING_LIMIT);
				return -1;
			}
			if (u.borrowed != (u.total > r->nominal[q] ? u.total - r->nominal[q] : 0)) {
				fail(r,
				     "%s: %s borrowed %" PRId64 "m with usage %" PRId64
				     "m, nominal %" PRId64 "m",
				     when, r->cq_name[q], u.borrowed, u.total, r->nominal[q]);
				return -1;
			}
			size_t pending, adm;
			rc = engine_cq_counts(r->e, r->cq_name[q], &pending, &adm);
			if (rc || pending != r->n_pend[q] || adm != r->n_adm[q]) {
				fail(r,
				     "%s: %s counts %zu pending %zu admitted, bench counts %u and "
				     "%u",
				     when, r->cq_name[q], pending, adm, r->n_pend[q], r->n_adm[q]);
				return -1;
			}
			r->n_borrowing += u.borrowed > 0;
			r->borrowed += u.borrowed;
			sum += r->used[q];
			quota += r->nominal[q];
		}
		char co[24];
		snprintf(co, sizeof(co), "cohort-%d", c);
		struct eng_cq_usage u;
		int rc = engine_cohort_usage(r->e, co, "rf", "cpu", &u);
		if (rc) {
			fail(r, "%s: engine_cohort_usage(%s): %s", when, co, strerror(-rc));
			return -1;
		}
		if (u.total != sum || sum > quota) {
			fail(r,
			     "%s: %s usage %" PRId64 "m, ClusterQueues sum to %" PRId64
			     "m, quota %" PRId64 "m",
			     when, co, u.total, sum, quota);
			return -1;
		}
	}
	return 0;
}

static int setup(struct run *r)
{
	static const char *const covered[] = { "cpu" };
	static const struct label_selector everything = { 0 }; /* empty: matches every namespace */
	uint64_t rng = r->o->seed;
	struct quota_flavor rf = { .name = "rf" };
	struct eng_fair_sharing fs = { 1, r->o->fair > 1, { 0, 0 } }; /* -l: LTEFinal alone */
	if (engine_new(&r->e) || engine_set_flavor(r->e, &rf) ||
	    (r->o->fair && engine_set_fair_sharing(r->e, &fs)))
		return fail(r, "engine_new/engine_set_flavor/engine_set_fair_sharing failed"), -1;
	for (int c = 0; c < r->n_cohorts; c++) {
		char co[24];
		snprintf(co, sizeof(co), "cohort-%d", c);
		for (int k = 0; k < r->per_cohort; k++) {
			int q = c * r->per_cohort + k;
			snprintf(r->cq_name[q], sizeof(r->cq_name[q]), "cq-%d-%d", c, k);
			/* A tenth of the ClusterQueues have no quota of their own (they only
			 * borrow), a tenth more than their demand (they lend), the rest 20..80
			 * cpu. */
			uint64_t x = bench_rnd(&rng) % 70;
			r->nominal[q] = x < 7  ? 0 :
					x < 14 ? CPU(200) :
						 CPU(20 + 10 * (int64_t)(x % 7));
			if (r->o->uniform)
				r->nominal[q] = CPU(20);
			struct eng_resource_quota rq = { "cpu", r->nominal[q],
							 1,     BORROWING_LIMIT,
							 0,     0 };
			struct eng_flavor_quotas fq = { "rf", 1, &rq };
			struct eng_resource_group rg = { 1, covered, 1, &fq };
			struct eng_cq_spec spec = {
				.name = r->cq_name[q],
				.cohort =
					co, /* implicit cohorts, as Kueue's generator leaves them */
				.n_groups = 1,
				.groups = &rg,
				.queueing = ENG_BEST_EFFORT_FIFO,
				.preemption = { .within_cluster_queue = ENG_WITHIN_LOWER_PRIORITY,
						.reclaim_within_cohort = ENG_RECLAIM_ANY },
				.namespace_selector = &everything,
				.has_fair_weight = r->o->fair,
				.fair_weight = q % 3 == 0 ? 1 :
					       q % 3 == 1 ? 2 :
							    0.5,
			};
			/* One namespace and LocalQueue per ClusterQueue, named after it, as in
			 * Kueue. */
			if (engine_set_cq(r->e, &spec) ||
			    engine_set_namespace(r->e, r->cq_name[q], 0, NULL) ||
			    engine_set_local_queue(r->e, r->cq_name[q], "lq", r->cq_name[q],
						   ENG_STOP_NONE))
				return fail(r, "setting up %s failed", r->cq_name[q]), -1;
		}
	}
	return 0;
}

static int load(struct run *r, const uint32_t *order)
{
	static const char *const cpu[] = { "cpu" };
	for (size_t n = 0; n < r->n_wl; n++) {
		uint32_t i = order[n];
		struct bwl *w = &r->wl[i];
		const struct wclass *c = &classes[w->cls];
		/* The index within its class gives Kueue's creation time: (k + 1) * interval. */
		int64_t k = (int64_t)(i % 50);
		for (int c0 = 0; c0 < w->cls; c0++)
			k -= classes[c0].per_cq;
		struct eng_podset ps = { .name = "main", .count = 1 };
		ps.pod.n_requests = 1;
		ps.pod.resources = cpu;
		ps.pod.per_pod = &c->cpu;
		struct eng_workload_spec spec = {
			.key = key_of(r, i),
			.namespace_name = r->cq_name[w->cq],
			.queue = "lq",
			.priority = c->priority,
			.queue_time = (k + 1) * c->interval_ms * 1000000,
			.n_podsets = 1,
			.podsets = &ps,
		};
		int rc = engine_add_workload(r->e, &spec);
		if (rc)
			return fail(r, "engine_add_workload(%s): %s", spec.key, strerror(-rc)), -1;
		r->n_pend[w->cq]++;
	}
	return 0;
}

static void one_rep(const struct opts *o, struct result *res)
{
	int n_cohorts = o->n_cohorts, per_cohort = o->per_cohort;
	uint64_t seed = o->seed;
	struct run run = {
		.o = o, .n_cohorts = n_cohorts, .per_cohort = per_cohort, .phase = "fill"
	};
	struct run *r = &run;
	r->n_cqs = n_cohorts * per_cohort;
	r->n_wl = (size_t)r->n_cqs * 50;
	/* Everything the bench itself needs is allocated and touched before the baseline, so the
	 * growth after it is the engine's. */
	r->cq_name = calloc((size_t)r->n_cqs, sizeof(*r->cq_name));
	r->nominal = calloc((size_t)r->n_cqs, sizeof(*r->nominal));
	r->used = calloc((size_t)r->n_cqs, sizeof(*r->used));
	r->n_adm = calloc((size_t)r->n_cqs, sizeof(*r->n_adm));
	r->n_pend = calloc((size_t)r->n_cqs, sizeof(*r->n_pend));
	r->wl = calloc(r->n_wl, sizeof(*r->wl));
	r->keys = calloc(r->n_wl, KEY_STRIDE);
	r->victims = calloc(r->n_wl, sizeof(*r->victims));
	size_t admitted_cap = r->n_wl;
	r->admitted = calloc(admitted_cap, sizeof(*r->admitted));
	uint32_t *order = calloc(r->n_wl, sizeof(*order));
	if (!r->cq_name || !r->nominal || !r->used || !r->n_adm || !r->n_pend || !r->wl ||
	    !r->keys || !r->victims || !r->admitted || !order) {
		snprintf(res->err, sizeof(res->err), "out of memory");
		return;
	}
	for (size_t i = 0; i < r->n_wl; i++) {
		struct bwl *w = &r->wl[i];
		int k = (int)(i % 50);
		w->cq = (uint32_t)(i / 50);
		w->cls = k < classes[0].per_cq                     ? 0 :
			 k < classes[0].per_cq + classes[1].per_cq ? 1 :
								     2;
		snprintf(r->keys + i * KEY_STRIDE, KEY_STRIDE, "cq-%d-%d/w%zu",
			 (int)(w->cq / (uint32_t)per_cohort), (int)(w->cq % (uint32_t)per_cohort),
			 i);
		order[i] = (uint32_t)i;
	}
	/* calloc'd pages are not resident until written. */
	memset(r->victims, 0, r->n_wl * sizeof(*r->victims));
	memset(r->admitted, 0, admitted_cap * sizeof(*r->admitted));
	/* Workloads arrive interleaved across ClusterQueues and classes, not sorted. */
	uint64_t rng = seed ^ 0x9e3779b97f4a7c15ull;
	for (size_t i = r->n_wl - 1; i > 0; i--) {
		size_t j = (size_t)(bench_rnd(&rng) % (i + 1));
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	res->n_wl = (long)r->n_wl;
	res->rss_base_kib = (double)bench_status_kib("VmRSS");
	res->heap_base = (double)bench_heap_bytes();

	if (setup(r))
		goto out;
	for (int q = 0; q < r->n_cqs; q++)
		res->total_nominal_cpu += (long)(r->nominal[q] / 1000);
	res->rss_cqs_kib = (double)bench_status_kib("VmRSS");

	int64_t t0 = bench_wall_ns();
	if (load(r, order))
		goto out;
	res->load_ms = BENCH_MS(bench_wall_ns() - t0);
	res->hwm_loaded_kib = (double)bench_status_kib("VmHWM");
	res->heap_loaded = (double)bench_heap_bytes();

	/* Phase 1: from everything pending to the fixed point. */
	t0 = bench_wall_ns();
	int64_t c0 = bench_cpu_ns();
	if (settle(r, &res->fix_cycles))
		goto out;
	res->fix_ms = BENCH_MS(bench_wall_ns() - t0);
	res->fix_cpu_ms = BENCH_MS(bench_cpu_ns() - c0);
	res->fix_admits = r->admits;
	res->fix_preempts = r->preempts;
	res->fix_pendings = r->pendings;
	res->hwm_fix_kib = (double)bench_status_kib("VmHWM");
	res->heap_fix = (double)bench_heap_bytes();
	if (check(r, "after the first fixed point"))
		goto out;
	res->fix_borrowing = r->n_borrowing;
	res->fix_borrowed_cpu = (long)(r->borrowed / 1000);

	/* Phase 2: a random quarter of what runs finishes, the engine admits what is next, until
	 * everything has run. Partial releases are what a live cluster sees: they leave
	 * ClusterQueues below nominal while others borrow, so reclaim preempts, and each cycle has
	 * to find the few workloads that fit among tens of thousands that don't. */
	size_t left = r->o->fixed_only ? 0 : r->n_wl;
	double turn_ns = 0, turn_cpu_ns = 0;
	uint64_t churn_rng = seed ^ 0xd1b54a32d192ed03ull;
	while (left) {
		r->phase = "churn";
		r->round = res->turn_rounds + 1;
		if (++res->turn_rounds > MAX_ROUNDS) {
			fail(r, "churn: %zu workloads left after %d rounds", left, MAX_ROUNDS);
			goto out;
		}
		size_t kept = 0;
		t0 = bench_wall_ns();
		c0 = bench_cpu_ns();
		for (size_t k = 0; k < r->n_admitted; k++) {
			uint32_t i = r->admitted[k];
			struct bwl *w = &r->wl[i];
			if (w->state != WL_ADMITTED) {
				w->listed = 0; /* evicted since: listed again when re-admitted */
				continue;
			}
			if (bench_rnd(&churn_rng) % 4) {
				r->admitted[kept++] = i;
				continue;
			}
			engine_remove_workload(r->e, key_of(r, i));
			w->state = WL_DONE;
			w->listed = 0;
			r->used[w->cq] -= classes[w->cls].cpu;
			r->n_adm[w->cq]--;
			left--;
		}
		r->n_admitted = kept;
		if (left && settle(r, &res->turn_cycles))
			goto out;
		turn_ns += (double)(bench_wall_ns() - t0);
		turn_cpu_ns += (double)(bench_cpu_ns() - c0);
		if (left && !r->n_admitted) {
			fail(r,
			     "churn round %ld: %zu workloads pending, none admitted, none running",
			     res->turn_rounds, left);
			goto out;
		}
		if (check(r, "after a churn round"))
			goto out;
	}
	res->turn_ms = turn_ns / 1e6;
	res->turn_cpu_ms = turn_cpu_ns / 1e6;
	res->turn_admits = r->admits - res->fix_admits;
	res->turn_preempts = r->preempts - res->fix_preempts;
	res->turn_pendings = r->pendings - res->fix_pendings;
	for (int q = 0; q < r->n_cqs && !r->o->fixed_only; q++)
		if (r->used[q] || r->n_adm[q] || r->n_pend[q])
			fail(r,
			     "at the end %s still has usage %" PRId64 "m, %u admitted, %u pending",
			     r->cq_name[q], r->used[q], r->n_adm[q], r->n_pend[q]);
	if (!r->failed)
		check(r, "at the end");
	res->hwm_end_kib = (double)bench_status_kib("VmHWM");
	res->ok = !r->failed;
out:
	if (r->failed)
		memcpy(res->err, r->err, sizeof(res->err));
	engine_free(r->e);
}

static int run_child(const struct opts *o, struct result *res)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		struct result mine = { 0 };
		one_rep(o, &mine);
		ssize_t w = write(fd[1], &mine, sizeof(mine));
		_exit(w == (ssize_t)sizeof(mine) ? 0 : 2);
	}
	close(fd[1]);
	memset(res, 0, sizeof(*res));
	ssize_t got = 0;
	while (got < (ssize_t)sizeof(*res)) {
		ssize_t n = read(fd[0], (char *)res + got, sizeof(*res) - (size_t)got);
		if (n <= 0)
			break;
		got += n;
	}
	close(fd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		snprintf(res->err, sizeof(res->err), "the repetition crashed: signal %d",
			 WTERMSIG(status));
		res->ok = 0;
	} else if (got != (ssize_t)sizeof(*res)) {
		snprintf(res->err, sizeof(res->err), "the repetition exited %d without a result",
			 WEXITSTATUS(status));
		res->ok = 0;
	}
	return 0;
}

/* The median over repetitions of a double field of struct result. */
static double median_of(const struct result *res, int reps, size_t offset)
{
	double v[MAX_REPS];
	for (int i = 0; i < reps; i++)
		memcpy(&v[i], (const char *)&res[i] + offset, sizeof(double));
	return bench_median(v, (size_t)reps);
}

#define MEDIAN(field) median_of(res, reps, offsetof(struct result, field))

int main(int argc, char **argv)
{
	int reps = 3, n_cohorts = 10, per_cohort = 100, uniform = 0, verbose = 0, fair = 0;
	int fixed_only = 0;
	uint64_t seed = 1;
	int opt;
	while ((opt = getopt(argc, argv, "r:s:qkflFv")) != -1) {
		switch (opt) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			n_cohorts = 2;
			per_cohort = 20;
			break;
		case 'k':
			uniform = 1;
			break;
		case 'f':
			fair = fair ? fair : 1;
			break;
		case 'l':
			fair = 2;
			break;
		case 'F':
			fixed_only = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-r reps] [-s seed] [-q] [-k] [-f] [-l] [-F] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "reps must be 1..%d\n", MAX_REPS);
		return 2;
	}
	if (!seed)
		seed = 1; /* xorshift's one bad state */

	struct opts o = { n_cohorts, per_cohort, seed, uniform, fair, fixed_only, verbose };
	struct result res[MAX_REPS];
	int bad = -1;
	for (int i = 0; i < reps; i++) {
		if (run_child(&o, &res[i])) {
			perror("fork");
			return 1;
		}
		if (!res[i].ok) {
			fprintf(stderr, "bench_engine_throughput: repetition %d FAILED: %s\n",
				i + 1, res[i].err);
			if (bad < 0)
				bad = i;
		}
	}
	if (bad >= 0) {
		printf("BENCH engine_throughput status=FAIL reason=\"%s\"\n", res[bad].err);
		return 1;
	}

	/* Every repetition is the same deterministic run: counts must agree exactly. */
	for (int i = 1; i < reps; i++)
		if (res[i].fix_admits != res[0].fix_admits ||
		    res[i].fix_cycles != res[0].fix_cycles ||
		    res[i].turn_admits != res[0].turn_admits ||
		    res[i].fix_preempts != res[0].fix_preempts) {
			fprintf(stderr,
				"bench_engine_throughput: repetition %d decided differently from "
				"the "
				"first: the engine is not deterministic\n",
				i + 1);
			printf("BENCH engine_throughput status=FAIL reason=\"nondeterministic\"\n");
			return 1;
		}

	const struct result *r0 = &res[0];
	double fix_ms = MEDIAN(fix_ms), fix_cpu_ms = MEDIAN(fix_cpu_ms), load_ms = MEDIAN(load_ms);
	double turn_ms = MEDIAN(turn_ms), turn_cpu_ms = MEDIAN(turn_cpu_ms);
	double base = MEDIAN(rss_base_kib), cqs = MEDIAN(rss_cqs_kib),
	       loaded = MEDIAN(hwm_loaded_kib);
	double hwm_fix = MEDIAN(hwm_fix_kib), hwm_end = MEDIAN(hwm_end_kib);
	double heap_loaded = MEDIAN(heap_loaded) - MEDIAN(heap_base);
	double heap_fix = MEDIAN(heap_fix) - MEDIAN(heap_base);
	long fix_dec = r0->fix_admits + r0->fix_preempts + r0->fix_pendings;
	long turn_dec = r0->turn_admits + r0->turn_preempts + r0->turn_pendings;
	/* Rates by wall time and by CPU time: on a shared machine the second is the steadier. */
#define RATE(n, ms) ((ms) > 0 ? (double)(n) / ((ms) / 1e3) : 0.0)
	double dec_s = RATE(fix_dec, fix_ms), dec_cpu_s = RATE(fix_dec, fix_cpu_ms);
	long demand = (long)n_cohorts * per_cohort * (35 * 1 + 11 * 5 + 4 * 20); /* cpu */

	printf("engine throughput%s%s: %d cohorts x %d ClusterQueues, %ld workloads (35 small, 11 "
	       "medium, "
	       "4 large per ClusterQueue), seed %" PRIu64 ", %d repetitions (medians)\n",
	       fair ? " with fair sharing" : "",
	       fair > 1 ? " (LessThanOrEqualToFinalShare alone)" : "", n_cohorts, per_cohort,
	       r0->n_wl, seed, reps);
	printf("  quota (%s): %ld cpu nominal in all, %.0f%% of the %ld cpu demand; borrowingLimit "
	       "100\n",
	       uniform ? "Kueue's, 20 each" : "mixed 0/20..80/200", r0->total_nominal_cpu,
	       100.0 * (double)r0->total_nominal_cpu / (double)demand, demand);
	printf("  %-40s %12s %12s %12s\n", "phase", "wall ms", "cpu ms", "cycles");
	printf("  %-40s %12.1f %12s %12s\n", "load (engine_add_workload x N)", load_ms, "", "");
	printf("  %-40s %12.1f %12.1f %12ld\n", "all pending -> fixed point", fix_ms, fix_cpu_ms,
	       r0->fix_cycles);
	printf("  %-40s %12.1f %12.1f %12ld\n", "churn: quarter finishes, to fixed point", turn_ms,
	       turn_cpu_ms, r0->turn_cycles);
	printf("  %-40s %12s %12s %12s %12s\n", "decisions", "admit", "preempt", "pending",
	       "rounds");
	printf("  %-40s %12ld %12ld %12ld %12d\n", "to the first fixed point", r0->fix_admits,
	       r0->fix_preempts, r0->fix_pendings, 1);
	printf("  %-40s %12ld %12ld %12ld %12ld\n", "churn", r0->turn_admits, r0->turn_preempts,
	       r0->turn_pendings, r0->turn_rounds);
	printf("  %-40s %12s %12s\n", "rates", "per wall s", "per cpu s");
	printf("  %-40s %12.0f %12.0f\n", "fixed point: admissions", RATE(r0->fix_admits, fix_ms),
	       RATE(r0->fix_admits, fix_cpu_ms));
	printf("  %-40s %12.0f %12.0f\n", "fixed point: decisions (incl. pending)", dec_s,
	       dec_cpu_s);
	printf("  %-40s %12.0f %12.0f\n", "churn: admissions", RATE(r0->turn_admits, turn_ms),
	       RATE(r0->turn_admits, turn_cpu_ms));
	printf("  %-40s %12.0f %12.0f\n", "churn: decisions", RATE(turn_dec, turn_ms),
	       RATE(turn_dec, turn_cpu_ms));
	printf("  at the first fixed point %ld ClusterQueues borrow %ld cpu in all\n",
	       r0->fix_borrowing, r0->fix_borrowed_cpu);
	printf("  memory, KiB: RSS before the engine %.0f, with the ClusterQueues %.0f; peak RSS "
	       "after "
	       "load %.0f, at the fixed point %.0f, at the end %.0f; engine heap with all pending "
	       "%.0f, "
	       "at the fixed point %.0f\n",
	       base, cqs, loaded, hwm_fix, hwm_end, heap_loaded / 1024, heap_fix / 1024);
	printf("  targets: >= 100,000 decisions/s to the fixed point (%s), <= 64 MiB peak RSS "
	       "(%s)\n",
	       dec_s >= 100000 ? "met" : "NOT met", hwm_end <= 64 * 1024 ? "met" : "NOT met");
	printf("BENCH engine_throughput%s status=ok quota=%s cqs=%d cohorts=%d workloads=%ld "
	       "seed=%" PRIu64 " reps=%d load_ms=%.1f fixpoint_ms=%.1f fixpoint_cpu_ms=%.1f "
	       "cycles=%ld admitted=%ld "
	       "preemptions=%ld pending_decisions=%ld admissions_per_s=%.0f decisions_per_s=%.0f "
	       "decisions_per_cpu_s=%.0f borrowing_cqs=%ld borrowed_cpu=%ld churn_ms=%.1f "
	       "churn_cpu_ms=%.1f churn_rounds=%ld churn_cycles=%ld churn_admissions=%ld "
	       "churn_preemptions=%ld churn_admissions_per_s=%.0f churn_decisions_per_s=%.0f "
	       "rss_base_kib=%.0f rss_cqs_kib=%.0f hwm_loaded_kib=%.0f hwm_fixpoint_kib=%.0f "
	       "hwm_end_kib=%.0f engine_heap_kib=%.0f\n",
	       fair > 1 ? "_fair_sharing_lte" :
	       fair     ? "_fair_sharing" :
			  "",
	       uniform ? "uniform20" : "mixed", n_cohorts * per_cohort, n_cohorts, r0->n_wl, seed,
	       reps, load_ms, fix_ms, fix_cpu_ms, r0->fix_cycles, r0->fix_admits, r0->fix_preempts,
	       r0->fix_pendings, RATE(r0->fix_admits, fix_ms), dec_s, dec_cpu_s, r0->fix_borrowing,
	       r0->fix_borrowed_cpu, turn_ms, turn_cpu_ms, r0->turn_rounds, r0->turn_cycles,
	       r0->turn_admits, r0->turn_preempts, RATE(r0->turn_admits, turn_ms),
	       RATE(turn_dec, turn_ms), base, cqs, loaded, hwm_fix, hwm_end, heap_fix / 1024);
	return 0;
}
