/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Property test for core/engine: random cohort trees and ClusterQueues (limits, lending,
 * cohort pools, policies), then random operations (add workloads, cycles, finishes,
 * evictions of victims and of running work, stop-policy flips that rebuild the trees). After
 * every operation the test recomputes, from its own record of what was admitted, the usage
 * Kueue's formulas give at every node, and checks:
 *   - the engine's usage equals it at every ClusterQueue and cohort;
 *   - no over-admission: a ClusterQueue stays within nominal + borrowingLimit, a cohort within
 *     its subtree quota (+ its borrowingLimit under a parent), a root within its subtree
 *     quota, where subtree quotas only count what lendingLimits let children lend;
 *   - gangs are all or nothing: every admitted podSet has its full count, or with minCount
 *     at least minCount, and is charged count x request.
 * And every few hundred operations, liveness: at a quiet fixed point, submitting pending
 * workloads again unchanged (a fresh look) must not admit any: what fits was admitted. Only
 * where fitting is monotone in usage: one podSet, and no PreemptionOverBorrowing. (Kueue picks
 * flavors podSet by podSet, greedily, so with two podSets more usage elsewhere can move the
 * first one to another flavor and let the second fit; PreemptionOverBorrowing can prefer a
 * flavor needing preemption over one that fits by borrowing, until the former stops being a
 * candidate.) The others are left as they are.
 * The same worlds run again with fair sharing on (random weights, 0 included, random
 * preemption strategies, admission fair sharing on some ClusterQueues with two LocalQueues
 * each and a sampling clock): the same checks hold, and every InCohortFairSharing victim's
 * side of the cohort had, when it was told to go, a share at least its preemptor's side's
 * (the strategies' guarantee, checked where the preemptor's side is its own ClusterQueue
 * under the root and gives no victims, so that the shares read then bound the ones the
 * strategy compared).
 * Every liveness check must also find its quiet point: preemption settles, with fair sharing
 * on or off (fair preemption once went round in a circle in about 1 world in 200,
 * MUSTER_SEED=127 at op 899, classical preemption more rarely; engine_preempt.c's circle
 * guard ended both).
 * A last test streams work into weighted ClusterQueues and checks that none with a positive
 * weight starves.
 * Seeded and reproducible: MUSTER_SEED=<n> replays a run; the seed is printed.
 * MUSTER_WORLDS=<n> runs only its first n worlds of each kind.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "core/engine.h"

#define U(x) ((int64_t)(x)*1000)
#define MAX_COHORTS 6
#define MAX_CQS 10
#define MAX_WLS 4096
#define N_FR 5 /* (f0|f1) x (cpu|memory), g0 x gpu */
#define N_RES 3

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static int64_t rnd_in(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static const char *const res_names[N_RES] = { "cpu", "memory", "nvidia.com/gpu" };
static const char *const fr_flavor[N_FR] = { "f0", "f0", "f1", "f1", "g0" };
static const int fr_res[N_FR] = { 0, 1, 0, 1, 2 };

static int fr_index(const char *flavor, const char *resource)
{
	for (int i = 0; i < N_FR; i++)
		if (!strcmp(fr_flavor[i], flavor) && !strcmp(res_names[fr_res[i]], resource))
			return i;
	fail_msg("unknown flavor-resource %s/%s", flavor, resource);
	return -1;
}

/* The test's own copy of the quotas. */
struct q {
	int has; /* the node has this flavor-resource in its spec */
	int64_t nominal;
	int has_bl, has_ll;
	int64_t bl, ll;
};

struct node {
	char name[16];
	int parent; /* cohort index, -1 none */
	struct q q[N_FR];
	/* model, recomputed */
	int64_t subtree[N_FR], local[N_FR], usage[N_FR];
};

struct wl {
	int live;
	int admitted;
	int victim; /* told to go, not yet evicted */
	int cq; /* where admitted */
	int lq; /* ClusterQueue whose LocalQueue it was submitted to */
	int lq_b; /* fair worlds: its second LocalQueue, "lq<n>-b" */
	int waiting; /* a preemptor waiting for its victims */
	int checked; /* looked at again by the liveness check */
	int32_t priority;
	int64_t time;
	int n_podsets;
	int64_t count[2], min_count[2];
	int64_t per_pod[2][N_RES];
	int64_t usage[N_FR]; /* admitted charge */
};

struct world {
	struct engine *e;
	int n_cohorts, n_cqs;
	struct node cohort[MAX_COHORTS];
	struct node cq[MAX_CQS];
	int cq_stopped[MAX_CQS];
	struct eng_cq_spec cq_spec[MAX_CQS];
	struct wl wl[MAX_WLS];
	int n_wl; /* ids used */
	long ops;
	long admits, preempts, pendings;
	int liveness; /* checking: an admission now is a workload left behind */
	int fair; /* fair sharing on (see the file comment) */
	int64_t clock; /* admission fair sharing's sampling clock, ns */
	/* InCohortFairSharing preemptions of the current cycle (see check_fair_victims) */
	struct fair_pre {
		int preemptor, victim;
		int cmp; /* CompareDRS(preemptor's side, victim's side), -2: not comparable */
	} pre[64];
	int n_pre;
	int n_fs_checked;
	/* spec storage */
	struct eng_resource_quota rq[MAX_CQS][2][2][2];
	struct eng_flavor_quotas fq[MAX_CQS][2][2];
	struct eng_resource_group rg[MAX_CQS][2];
	const char *cov[2][2];
};

static struct label_selector all_namespaces;

/* --- building the world ----------------------------------------------------------------- */

static void random_quota(struct q *q, int has_parent, int allow_limits)
{
	q->has = 1;
	q->nominal = U(rnd_in(0, 12));
	q->has_bl = has_parent && allow_limits && rnd() % 3 == 0;
	q->bl = U(rnd_in(0, 4));
	q->has_ll = has_parent && allow_limits && rnd() % 3 == 0;
	q->ll = q->nominal ? U(rnd_in(0, q->nominal / 1000)) : 0;
}

static void fill_group(struct world *w, int owner, struct node *n, struct eng_resource_group *rg,
		       int with_gpu, size_t *n_groups)
{
	static const char *const cov_cm[] = { "cpu", "memory" };
	static const char *const cov_g[] = { "nvidia.com/gpu" };
	/* group 0: cpu+memory in f0, f1 (random order); group 1: gpu in g0 */
	int first = (int)(rnd() % 2);
	for (int k = 0; k < 2; k++) {
		int f = k == 0 ? first : 1 - first;
		for (int r = 0; r < 2; r++) {
			struct q *q = &n->q[f * 2 + r];
			w->rq[owner][0][k][r] = (struct eng_resource_quota){ cov_cm[r], q->nominal,
									     q->has_bl, q->bl,
									     q->has_ll, q->ll };
		}
		w->fq[owner][0][k] =
			(struct eng_flavor_quotas){ f ? "f1" : "f0", 2, w->rq[owner][0][k] };
	}
	rg[0] = (struct eng_resource_group){ 2, cov_cm, 2, w->fq[owner][0] };
	*n_groups = 1;
	if (with_gpu) {
		struct q *q = &n->q[4];
		w->rq[owner][1][0][0] = (struct eng_resource_quota){ "nvidia.com/gpu", q->nominal,
								     q->has_bl,        q->bl,
								     q->has_ll,        q->ll };
		w->fq[owner][1][0] = (struct eng_flavor_quotas){ "g0", 1, w->rq[owner][1][0] };
		rg[1] = (struct eng_resource_group){ 1, cov_g, 1, w->fq[owner][1] };
		*n_groups = 2;
	}
}

/* A random fairSharing.weight, unset included (then 1). */
static void random_weight(int *has, double *weight)
{
	static const double weights[] = { 0, 0.5, 1, 2, 3 };
	*has = rnd() % 4 != 0;
	*weight = weights[rnd() % 5];
}

static void set_cq(struct world *w, int i)
{
	w->cq_spec[i].stop_policy = w->cq_stopped[i] ? ENG_STOP_HOLD : ENG_STOP_NONE;
	assert_int_equal(engine_set_cq(w->e, &w->cq_spec[i]), 0);
}

static void build_world(struct world *w)
{
	struct quota_flavor f0 = { .name = "f0" }, f1 = { .name = "f1" }, g0 = { .name = "g0" };
	assert_int_equal(engine_new(&w->e), 0);
	assert_int_equal(engine_set_flavor(w->e, &f0), 0);
	assert_int_equal(engine_set_flavor(w->e, &f1), 0);
	assert_int_equal(engine_set_flavor(w->e, &g0), 0);
	assert_int_equal(engine_set_namespace(w->e, "ns", 0, NULL), 0);

	w->n_cohorts = (int)rnd_in(0, MAX_COHORTS);
	for (int i = 0; i < w->n_cohorts; i++) {
		struct node *c = &w->cohort[i];
		snprintf(c->name, sizeof(c->name), "co%d", i);
		/* Parents come earlier: a forest, no cycles. */
		c->parent = i > 0 && rnd() % 3 ? (int)rnd_in(0, i - 1) : -1;
		int pool = rnd() % 2;
		struct eng_resource_group rg[2];
		size_t n_groups = 0;
		if (pool) {
			for (int k = 0; k < N_FR; k++)
				random_quota(&c->q[k], c->parent >= 0, 1);
			fill_group(w, MAX_CQS - 1, c, rg, 1, &n_groups);
		}
		struct eng_cohort_spec spec = {
			.name = c->name,
			.parent = c->parent >= 0 ? w->cohort[c->parent].name : NULL,
			.n_groups = n_groups,
			.groups = n_groups ? rg : NULL,
		};
		if (w->fair)
			random_weight(&spec.has_fair_weight, &spec.fair_weight);
		assert_int_equal(engine_set_cohort(w->e, &spec), 0);
	}
	w->n_cqs = (int)rnd_in(2, MAX_CQS - 1);
	for (int i = 0; i < w->n_cqs; i++) {
		struct node *q = &w->cq[i];
		snprintf(q->name, sizeof(q->name), "cq%d", i);
		q->parent = w->n_cohorts && rnd() % 5 ? (int)rnd_in(0, w->n_cohorts - 1) : -1;
		int with_gpu = rnd() % 2;
		for (int k = 0; k < N_FR; k++)
			if (k < 4 || with_gpu)
				random_quota(&q->q[k], q->parent >= 0, 1);
		size_t n_groups;
		fill_group(w, i, q, w->rg[i], with_gpu, &n_groups);
		struct eng_preemption p = { 0 };
		p.within_cluster_queue = (enum eng_within_cq)rnd_in(0, 2);
		p.reclaim_within_cohort = (enum eng_reclaim)rnd_in(0, 2);
		if (p.reclaim_within_cohort != ENG_RECLAIM_NEVER && rnd() % 2) {
			p.borrow_within_cohort = ENG_BORROW_WITHIN_LOWER_PRIORITY;
			p.has_max_priority_threshold = (int)(rnd() % 2);
			p.max_priority_threshold = (int32_t)rnd_in(0, 3);
		}
		w->cq_spec[i] = (struct eng_cq_spec){
			.name = q->name,
			.cohort = q->parent >= 0 ? w->cohort[q->parent].name : NULL,
			.n_groups = n_groups,
			.groups = w->rg[i],
			.queueing = (enum eng_queueing)rnd_in(0, 1),
			.preemption = p,
			.when_can_borrow = (enum eng_when_can_borrow)rnd_in(0, 1),
			.when_can_preempt = (enum eng_when_can_preempt)rnd_in(0, 1),
			.namespace_selector = &all_namespaces,
		};
		if (w->cq_spec[i].when_can_borrow == ENG_BORROW_TRY_NEXT_FLAVOR &&
		    w->cq_spec[i].when_can_preempt == ENG_PREEMPT_TRY_NEXT_FLAVOR)
			w->cq_spec[i].prefer_preemption_over_borrowing = (int)(rnd() % 2);
		if (w->fair) {
			random_weight(&w->cq_spec[i].has_fair_weight, &w->cq_spec[i].fair_weight);
			w->cq_spec[i].usage_based_afs = (int)(rnd() % 2);
		}
		set_cq(w, i);
		char lq[16];
		snprintf(lq, sizeof(lq), "lq%d", i);
		assert_int_equal(engine_set_local_queue(w->e, "ns", lq, q->name, ENG_STOP_NONE), 0);
		if (w->fair) {
			snprintf(lq, sizeof(lq), "lq%d-b", i);
			assert_int_equal(engine_set_local_queue(w->e, "ns", lq, q->name,
								ENG_STOP_NONE),
					 0);
			if (rnd() % 2)
				assert_int_equal(engine_set_lq_fair_weight(w->e, "ns", lq,
									   (double)rnd_in(0, 3)),
						 0);
		}
	}
	if (w->fair) {
		static const struct eng_fair_sharing lists[] = {
			{ 1, 0, { 0, 0 } },
			{ 1, 1, { ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, 0 } },
			{ 1, 1, { ENG_FS_LESS_THAN_INITIAL_SHARE, 0 } },
		};
		assert_int_equal(engine_set_fair_sharing(w->e, &lists[rnd() % 3]), 0);
		static const struct eng_afs_weight weights[] = { { "cpu", 1 },
								 { "nvidia.com/gpu", 4 } };
		static const int64_t half_lives[] = { 0, 600000000000LL, 3600000000000LL };
		struct eng_admission_fair_sharing afs = { 1, half_lives[rnd() % 3], 300000000000LL,
							  2, weights };
		assert_int_equal(engine_set_admission_fair_sharing(w->e, &afs), 0);
	}
}

/* MUSTER_TRACE: the world's quotas and policies, to rebuild a failing world by hand. */
static void trace_node(const struct world *w, const struct node *n, int is_cohort)
{
	char line[512];
	int len = snprintf(line, sizeof(line), "  %s %s parent %s:", is_cohort ? "cohort" : "cq",
			   n->name, n->parent < 0 ? "-" : w->cohort[n->parent].name);
	for (int k = 0; k < N_FR && len < (int)sizeof(line) - 64; k++) {
		const struct q *q = &n->q[k];
		if (!q->has)
			continue;
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %s/%s=%" PRId64,
				fr_flavor[k], res_names[fr_res[k]], q->nominal / 1000);
		if (q->has_bl)
			len += snprintf(line + len, sizeof(line) - (size_t)len, " bl%" PRId64,
					q->bl / 1000);
		if (q->has_ll)
			len += snprintf(line + len, sizeof(line) - (size_t)len, " ll%" PRId64,
					q->ll / 1000);
	}
	print_message("%s\n", line);
}

static void trace_world(const struct world *w)
{
	for (int i = 0; i < w->n_cohorts; i++)
		trace_node(w, &w->cohort[i], 1);
	for (int i = 0; i < w->n_cqs; i++) {
		const struct eng_cq_spec *s = &w->cq_spec[i];
		trace_node(w, &w->cq[i], 0);
		print_message("    order %s%s queueing %d within %d reclaim %d borrowWithin %d "
			      "threshold %d/%d whenCanBorrow %d whenCanPreempt %d preferPreempt %d "
			      "weight %d/%g\n",
			      s->groups[0].flavors[0].flavor, s->n_groups > 1 ? "+g0" : "",
			      s->queueing, s->preemption.within_cluster_queue,
			      s->preemption.reclaim_within_cohort,
			      s->preemption.borrow_within_cohort,
			      s->preemption.has_max_priority_threshold,
			      s->preemption.max_priority_threshold, s->when_can_borrow,
			      s->when_can_preempt, s->prefer_preemption_over_borrowing,
			      s->has_fair_weight, s->fair_weight);
	}
}

/* --- the model ------------------------------------------------------------------------- */

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static void model_node(struct node *n, int k, int64_t base_subtree)
{
	n->subtree[k] = base_subtree;
	n->local[k] = n->q[k].has && n->q[k].has_ll ? max64(0, n->subtree[k] - n->q[k].ll) : 0;
}

/* Kueue's resource_node.go, from scratch: SubtreeQuota, localQuota and Usage at every node. */
static void model(struct world *w)
{
	for (int i = 0; i < w->n_cqs; i++)
		memset(w->cq[i].usage, 0, sizeof(w->cq[i].usage));
	for (int id = 0; id < w->n_wl; id++) {
		const struct wl *x = &w->wl[id];
		if (x->live && x->admitted)
			for (int k = 0; k < N_FR; k++)
				w->cq[x->cq].usage[k] += x->usage[k];
	}
	for (int k = 0; k < N_FR; k++) {
		for (int i = 0; i < w->n_cqs; i++) {
			struct node *q = &w->cq[i];
			model_node(q, k, q->q[k].has ? q->q[k].nominal : 0);
		}
		/* Children have larger indices than parents: fold from the leaves up. */
		for (int c = w->n_cohorts - 1; c >= 0; c--) {
			struct node *n = &w->cohort[c];
			int64_t subtree = n->q[k].has ? n->q[k].nominal : 0, usage = 0;
			for (int i = 0; i < w->n_cqs; i++) {
				if (w->cq[i].parent != c)
					continue;
				subtree += w->cq[i].subtree[k] - w->cq[i].local[k];
				usage += max64(0, w->cq[i].usage[k] - w->cq[i].local[k]);
			}
			for (int d = c + 1; d < w->n_cohorts; d++) {
				if (w->cohort[d].parent != c)
					continue;
				subtree += w->cohort[d].subtree[k] - w->cohort[d].local[k];
				usage += max64(0, w->cohort[d].usage[k] - w->cohort[d].local[k]);
			}
			model_node(n, k, subtree);
			n->usage[k] = usage;
		}
	}
}

static void check(struct world *w, const char *after)
{
	char why[512];
	/* The engine's own self-check agrees with this test's independent model below. */
	if (engine_check(w->e, why, sizeof(why)) != 0)
		fail_msg("op %ld (%s): engine_check: %s", w->ops, after, why);
	model(w);
	size_t n_adm[MAX_CQS] = { 0 };
	for (int id = 0; id < w->n_wl; id++)
		if (w->wl[id].live && w->wl[id].admitted)
			n_adm[w->wl[id].cq]++;
	for (int i = 0; i < w->n_cqs; i++) {
		struct node *q = &w->cq[i];
		size_t pending, adm;
		assert_int_equal(engine_cq_counts(w->e, q->name, &pending, &adm), 0);
		size_t active, inadmissible; /* the metric's split adds up to the status' count */
		assert_int_equal(engine_cq_pending(w->e, q->name, &active, &inadmissible), 0);
		if (active + inadmissible != pending)
			fail_msg("op %ld (%s): %s pending %zu, split %zu + %zu", w->ops, after,
				 q->name, pending, active, inadmissible);
		if (adm != n_adm[i])
			fail_msg("op %ld (%s): %s admitted %zu, test counts %zu", w->ops, after,
				 q->name, adm, n_adm[i]);
		for (int k = 0; k < N_FR; k++) {
			struct eng_cq_usage u;
			int rc = engine_cq_usage(w->e, q->name, fr_flavor[k], res_names[fr_res[k]],
						 &u);
			int64_t engine = rc == 0 ? u.total : 0;
			if (rc != 0 && rc != -ENOENT)
				fail_msg("engine_cq_usage: %d", rc);
			if (engine != q->usage[k])
				fail_msg("op %ld (%s): %s %s/%s usage %" PRId64
					 ", admitted workloads sum to %" PRId64,
					 w->ops, after, q->name, fr_flavor[k], res_names[fr_res[k]],
					 engine, q->usage[k]);
			if (q->parent < 0 && q->usage[k] > (q->q[k].has ? q->q[k].nominal : 0))
				fail_msg("op %ld (%s): %s over nominal in %s/%s", w->ops, after,
					 q->name, fr_flavor[k], res_names[fr_res[k]]);
			if (q->parent >= 0 && q->q[k].has && q->q[k].has_bl &&
			    q->usage[k] > q->q[k].nominal + q->q[k].bl)
				fail_msg("op %ld (%s): %s over nominal + borrowingLimit in %s/%s: "
					 "%" PRId64,
					 w->ops, after, q->name, fr_flavor[k], res_names[fr_res[k]],
					 q->usage[k]);
		}
	}
	for (int c = 0; c < w->n_cohorts; c++) {
		struct node *n = &w->cohort[c];
		for (int k = 0; k < N_FR; k++) {
			struct eng_cq_usage u;
			int rc = engine_cohort_usage(w->e, n->name, fr_flavor[k],
						     res_names[fr_res[k]], &u);
			int64_t engine = rc == 0 ? u.total : 0;
			if (rc != 0 && rc != -ENOENT)
				fail_msg("engine_cohort_usage: %d", rc);
			if (engine != n->usage[k])
				fail_msg("op %ld (%s): cohort %s %s/%s usage %" PRId64
					 ", model %" PRId64,
					 w->ops, after, n->name, fr_flavor[k], res_names[fr_res[k]],
					 engine, n->usage[k]);
			int64_t cap = n->subtree[k];
			if (n->parent >= 0) {
				if (!(n->q[k].has && n->q[k].has_bl))
					continue; /* bounded by its parent */
				cap += n->q[k].bl;
			}
			if (n->usage[k] > cap)
				fail_msg("op %ld (%s): cohort %s over its pool in %s/%s: %" PRId64
					 " > %" PRId64,
					 w->ops, after, n->name, fr_flavor[k], res_names[fr_res[k]],
					 n->usage[k], cap);
		}
	}
}

/* --- decisions ----------------------------------------------------------------------------- */

static int wl_id(const char *key)
{
	int id = atoi(key + strlen("ns/w"));
	assert_true(id >= 0 && id < MAX_WLS);
	return id;
}

static int trace; /* MUSTER_TRACE=1: print every decision */

/* The node just below the root of ClusterQueue i's cohort tree (the ClusterQueue itself when
 * its cohort is the root): *is_cq and *index. -1: no cohort. */
static int root_child(const struct world *w, int i, int *is_cq, int *index)
{
	int p = w->cq[i].parent;
	if (p < 0)
		return -1;
	*is_cq = 1;
	*index = i;
	while (w->cohort[p].parent >= 0) {
		*is_cq = 0;
		*index = p;
		p = w->cohort[p].parent;
	}
	return p;
}

static double side_share(const struct world *w, int is_cq, int index, int *zero_weight)
{
	struct eng_share sh;
	int rc = is_cq ? engine_cq_share(w->e, w->cq[index].name, &sh) :
			 engine_cohort_share(w->e, w->cohort[index].name, &sh);
	assert_int_equal(rc, 0);
	*zero_weight = sh.weighted_share == INT64_MAX;
	return sh.precise;
}

/* Records a preemption of this cycle for check_fair_victims: how the preemptor's and the
 * victim's sides compare now (the shares are read, not changed: the engine is built). */
static void record_preemption(struct world *w, int preemptor, int victim, const char *reason)
{
	struct fair_pre *fp = &w->pre[w->n_pre < 64 ? w->n_pre++ : 63];
	*fp = (struct fair_pre){ preemptor, victim, -2 };
	int pc = 0, pi = 0, vc = 0, vi = 0, zp, zv; /* root_child sets them; -O2 can't tell */
	if (strcmp(reason, "InCohortFairSharing") != 0)
		return;
	int pr = root_child(w, w->wl[preemptor].lq, &pc, &pi);
	int vr = root_child(w, w->wl[victim].cq, &vc, &vi);
	assert_true(pr >= 0 && pr == vr); /* one cohort tree */
	if (pc == vc && pi == vi)
		return; /* a subtree in common below the root: the shares read now prove nothing */
	/* Kueue's fill-back may return victims taken from the preemptor's own side after the
	 * strategy was checked without them: only where its side can give nothing (its own
	 * ClusterQueue, under the root, never preempting within) do the shares read now bound
	 * the ones compared. */
	if (!pc || w->cq_spec[pi].preemption.within_cluster_queue != ENG_WITHIN_NEVER)
		return;
	double sp = side_share(w, pc, pi, &zp), sv = side_share(w, vc, vi, &zv);
	if (zp && zv)
		return; /* both infinite: Kueue compares unweighted ratios, not read here */
	fp->cmp = (sp > sv) - (sp < sv);
}

/* The strategies' guarantee: a preemptor's side never had a higher share than a victim's
 * side it took from (with its own workload in, before its victims left, it had at most
 * what the strategy compared; the victim's side had at least that). */
static void check_fair_victims(struct world *w)
{
	for (int i = 0; i < w->n_pre; i++) {
		int ok = 1;
		for (int k = 0; k < w->n_pre; k++)
			if (w->pre[k].preemptor == w->pre[i].preemptor && w->pre[k].cmp == -2)
				ok = 0;
		if (!ok)
			continue;
		w->n_fs_checked++;
		if (w->pre[i].cmp > 0)
			fail_msg("op %ld: w%d preempted w%d (InCohortFairSharing) while its side's "
				 "share was higher than the victim's",
				 w->ops, w->pre[i].preemptor, w->pre[i].victim);
	}
	w->n_pre = 0;
}

static void on_decision(void *arg, const struct eng_decision *d)
{
	struct world *w = arg;
	struct wl *x = &w->wl[wl_id(d->workload)];
	if (trace)
		print_message("    op %ld: %s %s %s %s\n", w->ops,
			      d->kind == ENG_ADMIT   ? "ADMIT" :
			      d->kind == ENG_PREEMPT ? "PREEMPT" :
						       "PENDING",
			      d->workload,
			      d->kind == ENG_ADMIT ? d->assignment->cluster_queue : d->reason,
			      d->message ? d->message : (d->preemptor ? d->preemptor : ""));
	if (trace && d->kind == ENG_ADMIT)
		for (size_t p = 0; p < d->assignment->n_podsets; p++) {
			const struct eng_podset_assignment *ps = &d->assignment->podsets[p];
			for (size_t r = 0; r < ps->n; r++)
				print_message("      %s x%" PRId64 " %s/%s %" PRId64 "\n", ps->name,
					      ps->count, ps->flavors[r], ps->resources[r],
					      ps->usage[r]);
		}
	assert_true(x->live);
	switch (d->kind) {
	case ENG_ADMIT: {
		const struct eng_assignment *a = d->assignment;
		if (w->liveness && x->checked)
			fail_msg("op %ld: %s fits, but was left pending at the fixed point", w->ops,
				 d->workload);
		assert_false(x->admitted);
		x->waiting = 0;
		assert_int_equal(a->n_podsets, x->n_podsets);
		x->admitted = 1;
		x->victim = 0;
		x->cq = -1;
		for (int i = 0; i < w->n_cqs; i++)
			if (!strcmp(w->cq[i].name, a->cluster_queue))
				x->cq = i;
		assert_int_equal(x->cq, x->lq);
		memset(x->usage, 0, sizeof(x->usage));
		for (size_t p = 0; p < a->n_podsets; p++) {
			const struct eng_podset_assignment *ps = &a->podsets[p];
			/* All or nothing, or at least minCount. */
			if (ps->count != x->count[p] &&
			    !(x->min_count[p] > 0 && ps->count >= x->min_count[p] &&
			      ps->count < x->count[p]))
				fail_msg("%s podSet %zu admitted with %" PRId64 " of %" PRId64
					 " (minCount %" PRId64 ")",
					 d->workload, p, ps->count, x->count[p], x->min_count[p]);
			for (size_t r = 0; r < ps->n; r++) {
				int k = fr_index(ps->flavors[r], ps->resources[r]);
				assert_int_equal(ps->usage[r],
						 ps->count * x->per_pod[p][fr_res[k]]);
				x->usage[k] += ps->usage[r];
			}
			for (int r = 0; r < N_RES; r++) {
				int charged = 0;
				for (size_t i = 0; i < ps->n; i++)
					charged |= !strcmp(ps->resources[i], res_names[r]);
				assert_true(charged || x->per_pod[p][r] == 0);
			}
		}
		w->admits++;
		break;
	}
	case ENG_PREEMPT:
		assert_true(x->admitted);
		assert_false(x->victim); /* once */
		x->victim = 1;
		w->preempts++;
		if (w->fair && d->preemptor)
			record_preemption(w, wl_id(d->preemptor), wl_id(d->workload), d->reason);
		break;
	case ENG_PENDING:
		assert_false(x->admitted);
		/* A preemptor's wait has its own reason, and only it says so; a stopped or broken
		 * queue says nothing about a preemptor's wait. */
		assert_int_equal(!strcmp(d->reason, ENG_WHY_PREEMPTION_PENDING),
				 strstr(d->message, "Pending the preemption of") != NULL);
		if (eng_why_waits(d->reason))
			x->waiting = !strcmp(d->reason, ENG_WHY_PREEMPTION_PENDING);
		w->pendings++;
		break;
	}
}

/* --- operations ----------------------------------------------------------------------------- */

static void key_of(int id, char *key, size_t size)
{
	snprintf(key, size, "ns/w%d", id);
}

/* Submits (or re-submits, unchanged) workload id from the test's record. */
static void submit(struct world *w, int id)
{
	struct wl *x = &w->wl[id];
	char key[32], lq[16];
	const char *res[2][N_RES];
	int64_t per_pod[2][N_RES];
	struct eng_podset ps[2];
	for (int p = 0; p < x->n_podsets; p++) {
		size_t n = 0;
		for (int r = 0; r < N_RES; r++) {
			if (x->per_pod[p][r] || r == 0) {
				res[p][n] = res_names[r];
				per_pod[p][n++] = x->per_pod[p][r];
			}
		}
		ps[p] = (struct eng_podset){
			p ? "workers" : "main",
			x->count[p],
			x->min_count[p],
			{ .n_requests = n, .resources = res[p], .per_pod = per_pod[p] }
		};
	}
	snprintf(key, sizeof(key), "ns/w%d", id);
	snprintf(lq, sizeof(lq), x->lq_b ? "lq%d-b" : "lq%d", x->lq);
	struct eng_workload_spec spec = { key, "ns", lq, x->priority, x->time, (size_t)x->n_podsets,
					  ps,  NULL };
	assert_int_equal(engine_add_workload(w->e, &spec), 0);
}

static void op_add(struct world *w)
{
	if (w->n_wl == MAX_WLS)
		return;
	int id = w->n_wl++;
	struct wl *x = &w->wl[id];
	memset(x, 0, sizeof(*x));
	x->live = 1;
	x->lq = (int)rnd_in(0, w->n_cqs - 1);
	x->lq_b = w->fair && rnd() % 2;
	x->n_podsets = rnd() % 4 == 0 ? 2 : 1;
	x->priority = (int32_t)rnd_in(0, 3);
	x->time = w->ops;
	int with_min = rnd() % 3 == 0 ? (int)rnd_in(0, x->n_podsets - 1) : -1;
	for (int p = 0; p < x->n_podsets; p++) {
		x->count[p] = rnd_in(1, 4);
		x->min_count[p] = p == with_min ? rnd_in(1, x->count[p]) : 0;
		for (int r = 0; r < N_RES; r++)
			x->per_pod[p][r] =
				r == 2 ?
					(rnd() % 4 == 0 ? U(rnd_in(1, 2)) : 0) :
					(rnd() % 5 ? U(rnd_in(0, 2)) + (int64_t)rnd_in(0, 1) * 500 :
						     0);
		if (trace)
			print_message("    w%d lq%d%s prio %d podSet %d: %" PRId64 " (min %" PRId64
				      ") x cpu %" PRId64 " mem %" PRId64 " gpu %" PRId64 "\n",
				      id, x->lq, x->lq_b ? "-b" : "", x->priority, p, x->count[p],
				      x->min_count[p], x->per_pod[p][0], x->per_pod[p][1],
				      x->per_pod[p][2]);
	}
	submit(w, id);
}

/* At a quiet fixed point (no victims left to evict, so no preemptor is waiting and no
 * candidate is claimed), a fresh look at every pending workload admits nothing. */
static void check_liveness(struct world *w)
{
	int round;
	for (round = 0; round < 100; round++) {
		for (int i = 0; i < 100 && engine_cycle(w->e, on_decision, w) > 0; i++)
			;
		int victims = 0;
		for (int id = 0; id < w->n_wl; id++) {
			struct wl *x = &w->wl[id];
			if (!x->live || !x->victim)
				continue;
			char key[32];
			key_of(id, key, sizeof(key));
			assert_int_equal(engine_evict(w->e, key), 0);
			x->admitted = x->victim = 0;
			memset(x->usage, 0, sizeof(x->usage));
			victims++;
		}
		if (!victims)
			break;
	}
	if (round == 100)
		fail_msg("op %ld: preemption circles: no quiet point after 100 rounds of evictions",
			 w->ops);
	for (int id = 0; id < w->n_wl; id++) {
		struct wl *x = &w->wl[id];
		x->checked = x->live && !x->admitted && !x->waiting && x->n_podsets == 1 &&
			     !w->cq_spec[x->lq].prefer_preemption_over_borrowing;
		if (x->checked) {
			if (trace)
				print_message("    touch w%d (cq%d)\n", id, x->lq);
			submit(w, id);
		}
	}
	w->liveness = 1;
	assert_true(engine_cycle(w->e, on_decision, w) >= 0);
	w->liveness = 0;
}

static int pick(struct world *w, int admitted, int victim)
{
	int n = 0, chosen = -1;
	for (int id = 0; id < w->n_wl; id++) {
		struct wl *x = &w->wl[id];
		if (!x->live || x->admitted != admitted || (victim >= 0 && x->victim != victim))
			continue;
		if (rnd() % (uint64_t)++n == 0)
			chosen = id; /* reservoir sampling */
	}
	return chosen;
}

static void op_finish(struct world *w)
{
	char key[32];
	int id = pick(w, 1, -1);
	if (id < 0)
		return;
	key_of(id, key, sizeof(key));
	engine_remove_workload(w->e, key);
	w->wl[id].live = 0;
}

static void op_evict(struct world *w, int victims_only)
{
	char key[32];
	int id = pick(w, 1, victims_only ? 1 : -1);
	if (id < 0)
		return;
	key_of(id, key, sizeof(key));
	assert_int_equal(engine_evict(w->e, key), 0);
	w->wl[id].admitted = 0;
	w->wl[id].victim = 0;
	memset(w->wl[id].usage, 0, sizeof(w->wl[id].usage));
}

static void op_remove_pending(struct world *w)
{
	char key[32];
	int id = pick(w, 0, -1);
	if (id < 0)
		return;
	key_of(id, key, sizeof(key));
	engine_remove_workload(w->e, key);
	w->wl[id].live = 0;
}

static void op_cycle(struct world *w)
{
	int rc = engine_cycle(w->e, on_decision, w);
	assert_true(rc >= 0);
	check_fair_victims(w);
}

/* Admission fair sharing's sampling tick, after up to 20 minutes. */
static void op_sample(struct world *w)
{
	w->clock += rnd_in(0, 1200) * 1000000000LL;
	assert_int_equal(engine_afs_sample(w->e, w->clock), 0);
}

static void op_toggle_stop(struct world *w)
{
	int i = (int)rnd_in(0, w->n_cqs - 1);
	w->cq_stopped[i] = !w->cq_stopped[i];
	set_cq(w, i);
}

static long run_world(uint64_t seed, long ops, int fair)
{
	struct world *w = calloc(1, sizeof(*w));
	assert_non_null(w);
	rng_state = seed ? seed : 1;
	w->fair = fair;
	w->clock = 1000000000LL;
	build_world(w);
	if (trace)
		trace_world(w);
	check(w, "build");
	for (w->ops = 0; w->ops < ops; w->ops++) {
		int live = 0;
		for (int id = 0; id < w->n_wl; id++)
			live += w->wl[id].live;
		uint64_t r = rnd() % 100;
		const char *what;
		if (r < 30 && live < 200 && w->n_wl < MAX_WLS) {
			op_add(w);
			what = "add";
		} else if (r < 60) {
			op_cycle(w);
			what = "cycle";
		} else if (r < 72) {
			op_finish(w);
			what = "finish";
		} else if (r < 87) {
			op_evict(w, 1);
			what = "evict victim";
		} else if (r < 92) {
			op_evict(w, 0);
			what = "evict";
		} else if (r < 98) {
			op_remove_pending(w);
			what = "remove pending";
		} else if (w->fair && r == 98) {
			op_sample(w);
			what = "afs sample";
		} else {
			op_toggle_stop(w);
			what = "stop policy";
		}
		if (trace)
			print_message("  op %ld: %s\n", w->ops, what);
		check(w, what);
		if (w->ops % 300 == 299) {
			check_liveness(w);
			check(w, "liveness");
		}
	}
	long admits = w->admits;
	print_message("  world %#" PRIx64
		      ": %d cohorts, %d ClusterQueues, %d workloads, %ld admissions, "
		      "%ld preemptions, %ld pending reports%s",
		      seed, w->n_cohorts, w->n_cqs, w->n_wl, w->admits, w->preempts, w->pendings,
		      w->fair ? "" : "\n");
	if (w->fair)
		print_message(", %d fair-sharing victims checked\n", w->n_fs_checked);
	engine_free(w->e);
	free(w);
	return admits;
}

static uint64_t test_seed(void)
{
	const char *env = getenv("MUSTER_SEED");
	trace = getenv("MUSTER_TRACE") != NULL;
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
	print_message("MUSTER_SEED=%" PRIu64 " (set it to replay this run)\n", seed);
	return seed;
}

static void run_worlds(int fair)
{
	uint64_t seed = test_seed();
	long total_ops = 0, admits = 0;
	const long ops_per_world = 9000;
	/* MUSTER_WORLDS=<n> runs only the first n worlds of the seed (a replay of one of them). */
	const char *env = getenv("MUSTER_WORLDS");
	const long worlds = env ? atol(env) : 12;
	assert_true(worlds >= 1 && worlds <= 12);
	for (long i = 0; i < worlds; i++) {
		admits +=
			run_world(seed + (uint64_t)i * 0x9e3779b97f4a7c15ull, ops_per_world, fair);
		total_ops += ops_per_world;
	}
	/* tests/bench/property_seeds.sh sums these lines. */
	print_message("%ld operations in %ld worlds, fair sharing %s\n", total_ops, worlds,
		      fair ? "on" : "off");
	assert_true(env || total_ops >= 100000);
	assert_true(admits > 0);
}

static void test_engine_property_random_trees_never_over_admit(void **state)
{
	run_worlds(0);
	(void)state;
}

static void test_engine_property_fair_sharing(void **state)
{
	run_worlds(1);
	(void)state;
}

/* --- no starvation under a steady stream --------------------------------------------------- */

#define SV_CQS 5
#define SV_ROUNDS 400
#define SV_WINDOW 25 /* rounds a ClusterQueue may wait with work pending while others admit */

struct sv {
	struct engine *e;
	int admitted[SV_CQS]; /* admissions this round */
	int pending[SV_CQS];
	int running[SV_CQS];
	char victims[256][32];
	int n_victims;
};

static void sv_decision(void *arg, const struct eng_decision *d)
{
	struct sv *v = arg;
	int q = d->workload[1] - '0'; /* "s<q>/..." */
	assert_true(q >= 0 && q < SV_CQS);
	if (d->kind == ENG_ADMIT) {
		v->admitted[q]++;
		v->pending[q]--;
		v->running[q]++;
	} else if (d->kind == ENG_PREEMPT && v->n_victims < 256) {
		snprintf(v->victims[v->n_victims++], sizeof(v->victims[0]), "%s", d->workload);
	}
}

/* A lender's 12 cpus shared by ClusterQueues of random positive weights (one of weight 0),
 * each fed a workload of 1..2 cpus in two rounds of five while a random third of what runs
 * finishes: the cohort is busy and queues build up, but the stream is one the cohort can
 * serve. Every ClusterQueue with a positive weight and work waiting gets an admission within
 * SV_WINDOW rounds of others getting theirs. (Beyond what the cohort can serve, dominant
 * resource fairness lets a queue whose head asks for more than its weighted share wait as
 * long as the others' heads fit in theirs: Kueue's semantics, not starvation this checks.) */
static void starvation_world(uint64_t seed)
{
	static const char *const cpu[] = { "cpu" };
	static const double weights[] = { 0.5, 1, 2, 3 };
	struct sv v = { 0 };
	struct quota_flavor f = { .name = "f" };
	double weight[SV_CQS];
	int waited[SV_CQS] = { 0 };
	long n = 0;
	rng_state = seed ? seed : 1;
	assert_int_equal(engine_new(&v.e), 0);
	assert_int_equal(engine_set_flavor(v.e, &f), 0);
	struct eng_fair_sharing fs = { 1,
				       (size_t)rnd_in(0, 1),
				       { ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, 0 } };
	assert_int_equal(engine_set_fair_sharing(v.e, &fs), 0);
	for (int q = 0; q <= SV_CQS; q++) {
		char name[8], ns[8];
		int lender = q == SV_CQS;
		snprintf(name, sizeof(name), lender ? "lender" : "s%d", q);
		if (!lender)
			weight[q] = q == 0 ? 0 : weights[rnd() % 4];
		struct eng_resource_quota rq = { "cpu", lender ? U(12) : 0, 0, 0, 0, 0 };
		struct eng_flavor_quotas fq = { "f", 1, &rq };
		struct eng_resource_group rg = { 1, cpu, 1, &fq };
		struct eng_cq_spec spec = {
			.name = name,
			.cohort = "co",
			.n_groups = 1,
			.groups = &rg,
			.preemption = { .reclaim_within_cohort = ENG_RECLAIM_ANY },
			.namespace_selector = &all_namespaces,
			.has_fair_weight = !lender,
			.fair_weight = lender ? 1 : weight[q],
		};
		assert_int_equal(engine_set_cq(v.e, &spec), 0);
		snprintf(ns, sizeof(ns), "%s", name);
		assert_int_equal(engine_set_namespace(v.e, ns, 0, NULL), 0);
		assert_int_equal(engine_set_local_queue(v.e, ns, "lq", name, ENG_STOP_NONE), 0);
	}
	for (int round = 0; round < SV_ROUNDS; round++) {
		/* A third of what runs ends. */
		for (int q = 0; q < SV_CQS; q++)
			v.admitted[q] = 0;
		for (long id = 0; id < n; id++) {
			char key[32];
			snprintf(key, sizeof(key), "s%ld/w%ld", id % SV_CQS, id);
			if (engine_admission(v.e, key) && rnd() % 3 == 0) {
				engine_remove_workload(v.e, key);
				v.running[id % SV_CQS]--;
			}
		}
		/* New work: workload id belongs to ClusterQueue id % SV_CQS. */
		for (int q = 0; q < SV_CQS; q++)
			for (int k = rnd() % 5 < 2; k > 0; k--) {
				while (n % SV_CQS != q)
					n++;
				char key[32], ns[8];
				snprintf(key, sizeof(key), "s%d/w%ld", q, n);
				snprintf(ns, sizeof(ns), "s%d", q);
				const char *res[] = { "cpu" };
				int64_t per_pod[] = { U(rnd_in(1, 2)) };
				struct eng_podset ps = {
					"main",
					1,
					0,
					{ .n_requests = 1, .resources = res, .per_pod = per_pod }
				};
				struct eng_workload_spec w = { key, ns, "lq", 0, n, 1, &ps, NULL };
				assert_int_equal(engine_add_workload(v.e, &w), 0);
				v.pending[q]++;
				n++;
			}
		for (int i = 0; i < 50; i++) {
			v.n_victims = 0;
			int rc = engine_cycle(v.e, sv_decision, &v);
			assert_true(rc >= 0);
			for (int k = 0; k < v.n_victims; k++) {
				assert_int_equal(engine_evict(v.e, v.victims[k]), 0);
				int q = v.victims[k][1] - '0';
				v.running[q]--;
				v.pending[q]++;
			}
			if (rc == 0)
				break;
		}
		char msg[256];
		assert_int_equal(engine_check(v.e, msg, sizeof(msg)), 0);
		int others = 0;
		for (int q = 0; q < SV_CQS; q++)
			others += v.admitted[q];
		for (int q = 1; q < SV_CQS; q++) { /* s0 has weight 0: it may wait */
			waited[q] = v.pending[q] > 0 && !v.admitted[q] && others ? waited[q] + 1 :
										   0;
			if (waited[q] > SV_WINDOW)
				fail_msg("seed %#" PRIx64
					 " round %d: s%d (weight %g) waited %d rounds "
					 "with %d pending while others were admitted",
					 seed, round, q, weight[q], waited[q], v.pending[q]);
		}
	}
	engine_free(v.e);
}

static void test_engine_property_fair_no_starvation(void **state)
{
	uint64_t seed = test_seed();
	for (int i = 0; i < 20; i++)
		starvation_world(seed + (uint64_t)i * 0x9e3779b97f4a7c15ull);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_property_random_trees_never_over_admit),
		cmocka_unit_test(test_engine_property_fair_sharing),
		cmocka_unit_test(test_engine_property_fair_no_starvation),
	};
	/* MUSTER_TEST_FILTER=<glob> runs only the tests it matches (replaying one seed). */
	if (getenv("MUSTER_TEST_FILTER"))
		cmocka_set_test_filter(getenv("MUSTER_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
