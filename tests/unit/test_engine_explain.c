/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for core/engine_explain: the pending order (checked against the order in which
 * cycles really admit, property-style over random priorities and times, StrictFIFO and
 * BestEffortFIFO; MUSTER_SEED=<n> replays one seed), waiting preemptors first, LocalQueue
 * positions and held queues; and the explanation of a pending workload (lacking, holders in
 * the ClusterQueue and the cohort, preemptibility from the engine's own candidates, to_fit,
 * quota held for waiting preemptors, the other reasons to wait), including that explaining
 * changes no later decision. Amounts are GPUs in milli-units: G(2) = 2 GPUs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/engine.h"

#define GPU "nvidia.com/gpu"
#define G(x) ((int64_t)(x)*1000)

/* --- a small model: flavor a100, namespace ns, ClusterQueues covering cpu and GPUs --------- */

struct cqd {
	const char *name;
	const char *cohort;
	int64_t gpu; /* nominal */
	enum eng_queueing queueing;
	struct eng_preemption pol;
	const char *flavor; /* default a100 */
	int no_selector; /* selects no namespace */
};

static void put_cq(struct engine *e, const struct cqd *d)
{
	static const char *const cov[] = { "cpu", GPU };
	static const struct label_selector all = { 0 };
	struct eng_resource_quota rq[] = { { "cpu", G(1000), 0, 0, 0, 0 },
					   { GPU, d->gpu, 0, 0, 0, 0 } };
	struct eng_flavor_quotas fq = { d->flavor ? d->flavor : "a100", 2, rq };
	struct eng_resource_group g = { 2, cov, 1, &fq };
	struct eng_cq_spec s = {
		.name = d->name,
		.cohort = d->cohort,
		.n_groups = 1,
		.groups = &g,
		.queueing = d->queueing,
		.preemption = d->pol,
		.namespace_selector = d->no_selector ? NULL : &all,
	};
	assert_int_equal(engine_set_cq(e, &s), 0);
}

static struct engine *new_engine(void)
{
	struct engine *e;
	struct quota_flavor f = { .name = "a100" };
	assert_int_equal(engine_new(&e), 0);
	assert_int_equal(engine_set_flavor(e, &f), 0);
	assert_int_equal(engine_set_namespace(e, "ns", 0, NULL), 0);
	return e;
}

static void lq(struct engine *e, const char *name, const char *cq)
{
	assert_int_equal(engine_set_local_queue(e, "ns", name, cq, ENG_STOP_NONE), 0);
}

/* An engine with one BestEffortFIFO ClusterQueue "cq" whose withinClusterQueue policy is
 * LowerPriority, and LocalQueue lq-0 to it. */
static struct engine *lower_priority_cq(int64_t gpu)
{
	struct engine *e = new_engine();
	struct eng_preemption lower = { ENG_WITHIN_LOWER_PRIORITY, 0, 0, 0, 0 };
	put_cq(e, &(struct cqd){ .name = "cq", .gpu = gpu, .pol = lower });
	lq(e, "lq-0", "cq");
	return e;
}

/* Workload ns/<name>: podSets of count pods asking for gpu (and cpu) each. */
struct wld {
	const char *name;
	const char *queue;
	int32_t priority;
	int64_t time;
	int64_t count[2]; /* a second podSet when count[1] > 0 */
	int64_t gpu[2];
	const char *extra; /* a further resource, 1 per pod, in the first podSet */
};

static void add(struct engine *e, const struct wld *d)
{
	static const char *const res[] = { GPU, "cpu", NULL };
	const char *res0[] = { GPU, "cpu", d->extra };
	int64_t per[2][3] = { { d->gpu[0], 100, 1000 }, { d->gpu[1], 100, 0 } };
	char key[64];
	snprintf(key, sizeof(key), "ns/%s", d->name);
	struct eng_podset ps[2] = {
		{ "main",
		  d->count[0] ? d->count[0] : 1,
		  0,
		  { .n_requests = d->extra ? 3 : 2, .resources = res0, .per_pod = per[0] } },
		{ "aux", d->count[1], 0, { .n_requests = 2, .resources = res, .per_pod = per[1] } },
	};
	struct eng_workload_spec w = { key,         "ns",    d->queue,
				       d->priority, d->time, d->count[1] > 0 ? 2 : 1,
				       ps,          NULL };
	assert_int_equal(engine_add_workload(e, &w), 0);
}

/* The common case: one podSet of count pods asking for gpu each. */
static void add1(struct engine *e, const char *name, const char *queue, int32_t priority,
		 int64_t time, int64_t count, int64_t gpu)
{
	add(e, &(struct wld){ .name = name,
			      .queue = queue,
			      .priority = priority,
			      .time = time,
			      .count = { count },
			      .gpu = { gpu } });
}

/* --- decisions ------------------------------------------------------------------------------ */

struct rec {
	char admitted[64][32];
	char preempted[64][32];
	char log[8192]; /* every decision, in order */
	int n_admitted, n_preempted;
};

static void on_decision(void *arg, const struct eng_decision *d)
{
	struct rec *r = arg;
	size_t len = strlen(r->log);
	snprintf(r->log + len, sizeof(r->log) - len, "%d %s %s|", (int)d->kind, d->workload,
		 d->message ? d->message : "");
	if (d->kind == ENG_ADMIT && r->n_admitted < 64)
		snprintf(r->admitted[r->n_admitted++], 32, "%s", d->workload);
	if (d->kind == ENG_PREEMPT && r->n_preempted < 64)
		snprintf(r->preempted[r->n_preempted++], 32, "%s", d->workload);
}

static struct rec cycle(struct engine *e)
{
	struct rec r;
	memset(&r, 0, sizeof(r));
	assert_true(engine_cycle(e, on_decision, &r) >= 0);
	return r;
}

static void check_usage(struct engine *e)
{
	char why[512];
	if (engine_check(e, why, sizeof(why)) != 0)
		fail_msg("%s", why);
}

/* --- the order ------------------------------------------------------------------------------ */

struct seen {
	char key[200][32];
	char lq[200][16];
	size_t pos_cq[200], pos_lq[200];
	int waiting[200], inadmissible[200];
	int n, stop_after;
};

static int on_pending(void *arg, const struct eng_pending *p)
{
	struct seen *s = arg;
	assert_true(s->n < 200);
	assert_string_equal(p->namespace_name, "ns");
	assert_string_equal(p->key + 3, p->name);
	snprintf(s->key[s->n], sizeof(s->key[0]), "%s", p->key);
	snprintf(s->lq[s->n], sizeof(s->lq[0]), "%s", p->local_queue);
	s->pos_cq[s->n] = p->position_in_cq;
	s->pos_lq[s->n] = p->position_in_lq;
	s->waiting[s->n] = p->waiting;
	s->inadmissible[s->n] = p->inadmissible;
	s->n++;
	return s->stop_after && s->n == s->stop_after;
}

static struct seen order(struct engine *e, const char *cq)
{
	struct seen s;
	memset(&s, 0, sizeof(s));
	int n = engine_pending_order(e, cq, on_pending, &s);
	assert_int_equal(n, s.n);
	return s;
}

static struct seen order_lq(struct engine *e, const char *name)
{
	struct seen s;
	memset(&s, 0, sizeof(s));
	int n = engine_pending_order_lq(e, "ns", name, on_pending, &s);
	assert_int_equal(n, s.n);
	return s;
}

/* Positions are 0, 1, ... in the ClusterQueue and per LocalQueue; the LocalQueue form gives
 * the same entries. */
static void check_positions(struct engine *e, const struct seen *s)
{
	static const char *const lqs[] = { "lq-0", "lq-1", "lq-2" };
	for (size_t q = 0; q < 3; q++) {
		struct seen l = order_lq(e, lqs[q]);
		size_t next = 0;
		for (int i = 0; i < s->n; i++) {
			assert_int_equal(s->pos_cq[i], i);
			if (strcmp(s->lq[i], lqs[q]))
				continue;
			assert_true(next < (size_t)l.n);
			assert_int_equal(s->pos_lq[i], next);
			assert_string_equal(l.key[next], s->key[i]);
			assert_int_equal(l.pos_cq[next], s->pos_cq[i]);
			assert_int_equal(l.pos_lq[next], next);
			next++;
		}
		assert_int_equal(next, l.n);
	}
}

/* The first k of the order, for every k, are the full order's first k, positions included,
 * and the count is still the whole. */
static void check_first(struct engine *e, const char *cq, const struct seen *s)
{
	for (int k = 0; k <= s->n + 1; k++) {
		struct seen f;
		memset(&f, 0, sizeof(f));
		assert_int_equal(engine_pending_order_first(e, cq, (size_t)k, on_pending, &f),
				 s->n);
		assert_int_equal(f.n, k < s->n ? k : s->n);
		for (int i = 0; i < f.n; i++) {
			assert_string_equal(f.key[i], s->key[i]);
			assert_int_equal(f.pos_cq[i], s->pos_cq[i]);
			assert_int_equal(f.pos_lq[i], s->pos_lq[i]);
			assert_int_equal(f.waiting[i], s->waiting[i]);
			assert_int_equal(f.inadmissible[i], s->inadmissible[i]);
		}
	}
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void add_random(struct engine *e, uint64_t *rng, int i)
{
	static const int32_t prio[] = { 0, 0, 1, 3, -2 };
	char name[16], queue[8];
	snprintf(name, sizeof(name), "w%02d", i);
	snprintf(queue, sizeof(queue), "lq-%d", (int)(rng_next(rng) % 3));
	add1(e, name, queue, prio[rng_next(rng) % 5], (int64_t)(rng_next(rng) % 4), 1, G(1));
}

/* One GPU of quota, one-GPU workloads: every cycle after a release admits exactly one, and
 * it must be the first of the order. New workloads arrive in between. */
static void order_property(uint64_t seed, enum eng_queueing queueing)
{
	uint64_t rng = seed;
	struct engine *e = new_engine();
	put_cq(e, &(struct cqd){ .name = "cq", .gpu = G(1), .queueing = queueing });
	for (int i = 0; i < 3; i++) {
		char name[8];
		snprintf(name, sizeof(name), "lq-%d", i);
		lq(e, name, "cq");
	}
	int n = 0, total = 5 + (int)(rng_next(&rng) % 20);
	for (; n < total / 2; n++)
		add_random(e, &rng, n);
	char last[32] = "";
	for (int step = 0; step < 200; step++) {
		if (n < total && rng_next(&rng) % 3 == 0)
			add_random(e, &rng, n++);
		if (last[0])
			engine_remove_workload(e, last);
		struct seen s = order(e, "cq");
		size_t pending, admitted;
		assert_int_equal(engine_cq_counts(e, "cq", &pending, &admitted), 0);
		assert_int_equal(pending, s.n);
		check_positions(e, &s);
		check_first(e, "cq", &s);
		struct rec r = cycle(e);
		if (s.n == 0) {
			assert_int_equal(r.n_admitted, 0);
			if (n == total)
				break;
			last[0] = 0;
			continue;
		}
		if (r.n_admitted != 1 || strcmp(r.admitted[0], s.key[0]))
			fail_msg("seed %llu: order starts with %s, the cycle admitted %s",
				 (unsigned long long)seed, s.key[0],
				 r.n_admitted ? r.admitted[0] : "nothing");
		snprintf(last, sizeof(last), "%s", r.admitted[0]);
		/* The rest keep their order; parked ones are in it (BestEffortFIFO). */
		struct seen after = order(e, "cq");
		assert_int_equal(after.n, s.n - 1);
		for (int i = 0; i < after.n; i++) {
			assert_string_equal(after.key[i], s.key[i + 1]);
			if (queueing == ENG_BEST_EFFORT_FIFO)
				assert_true(after.inadmissible[i]);
		}
	}
	engine_free(e);
}

static void test_order_is_admission_order(void **state)
{
	(void)state;
	const char *env = getenv("MUSTER_SEED");
	if (env) {
		uint64_t seed = strtoull(env, NULL, 10);
		order_property(seed, ENG_STRICT_FIFO);
		order_property(seed, ENG_BEST_EFFORT_FIFO);
		return;
	}
	for (uint64_t seed = 1; seed <= 40; seed++) {
		order_property(seed, ENG_STRICT_FIFO);
		order_property(seed, ENG_BEST_EFFORT_FIFO);
	}
}

/* A preemptor waiting for its victim comes first, even before a higher priority, because the
 * cycle admits it first. */
static void test_order_waiting_preemptor_first(void **state)
{
	(void)state;
	struct engine *e = lower_priority_cq(G(2));
	add1(e, "victim", "lq-0", 0, 1, 1, G(1));
	add1(e, "top", "lq-0", 20, 1, 1, G(1));
	assert_int_equal(cycle(e).n_admitted, 2);
	add1(e, "p", "lq-0", 5, 2, 1, G(1));
	struct rec r = cycle(e);
	assert_int_equal(r.n_preempted, 1);
	assert_string_equal(r.preempted[0], "ns/victim");
	/* q may not preempt: the victim is claimed, top has a higher priority. */
	add1(e, "q", "lq-0", 10, 0, 1, G(1));
	cycle(e);
	struct seen s = order(e, "cq");
	assert_int_equal(s.n, 2);
	assert_string_equal(s.key[0], "ns/p");
	assert_true(s.waiting[0]);
	assert_string_equal(s.key[1], "ns/q");
	assert_false(s.waiting[1]);
	assert_int_equal(s.pos_lq[1], 1);

	/* The victim goes: p is admitted first, then the victim queues behind q. */
	assert_int_equal(engine_evict(e, "ns/victim"), 0);
	s = order(e, "cq");
	assert_int_equal(s.n, 3);
	assert_string_equal(s.key[0], "ns/p");
	assert_string_equal(s.key[1], "ns/q");
	assert_string_equal(s.key[2], "ns/victim");
	check_first(e, "cq", &s);
	r = cycle(e);
	assert_int_equal(r.n_admitted, 1);
	assert_string_equal(r.admitted[0], "ns/p");
	engine_free(e);
}

/* Held workloads (stopped or missing LocalQueue) are in no order; unknown names are -ENOENT;
 * a callback may stop early and the count is still the whole. */
static void test_order_held_unknown_and_early_stop(void **state)
{
	(void)state;
	struct engine *e = new_engine();
	put_cq(e, &(struct cqd){ .name = "cq", .gpu = 0, .queueing = ENG_STRICT_FIFO });
	lq(e, "lq-0", "cq");
	lq(e, "lq-1", "cq");
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "a%d", i);
		add1(e, name, "lq-0", 0, i, 1, G(1));
	}
	add1(e, "b", "lq-1", 0, 9, 1, G(1));
	add1(e, "orphan", "lq-none", 0, 0, 1, G(1));
	assert_int_equal(engine_set_local_queue(e, "ns", "lq-1", "cq", ENG_STOP_HOLD), 0);
	struct seen s = order(e, "cq");
	assert_int_equal(s.n, 4);
	assert_string_equal(s.key[3], "ns/a3");
	assert_int_equal(engine_pending_order_lq(e, "ns", "lq-1", on_pending, &s), 0);
	assert_int_equal(engine_pending_order_lq(e, "ns", "lq-none", on_pending, &s), -ENOENT);
	assert_int_equal(engine_pending_order(e, "cq-none", on_pending, &s), -ENOENT);
	assert_int_equal(engine_pending_order(e, "cq", NULL, NULL), 4);

	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	assert_int_equal(engine_pending_order(e, "cq", on_pending, &s), 4);
	assert_int_equal(s.n, 2);

	struct eng_explain x;
	assert_int_equal(engine_explain(e, "ns/b", &x), 0);
	assert_int_equal(x.state, ENG_STATE_PENDING);
	assert_int_equal(x.wait, ENG_WAIT_QUEUE_HELD);
	assert_false(x.has_position);
	assert_string_equal(x.cluster_queue, "cq");
	assert_string_equal(x.local_queue, "lq-1");
	assert_int_equal(engine_explain(e, "ns/orphan", &x), 0);
	assert_int_equal(x.wait, ENG_WAIT_QUEUE_HELD);
	assert_null(x.cluster_queue);
	assert_int_equal(engine_explain(e, "ns/a2", &x), 0);
	assert_true(x.has_position);
	assert_int_equal(x.position_in_cq, 2);
	assert_int_equal(x.position_in_lq, 2);
	assert_int_equal(engine_explain(e, "ns/nobody", &x), -ENOENT);
	engine_free(e);
}

/* --- why ------------------------------------------------------------------------------------ */

static struct eng_explain explain(struct engine *e, const char *key)
{
	struct eng_explain x;
	assert_int_equal(engine_explain(e, key, &x), 0);
	check_usage(e);
	return x;
}

static void check_holder(const struct eng_holder *h, const char *key, const char *cq,
			 int64_t amount, int same_cq, int borrowing, int preemptible)
{
	assert_string_equal(h->key, key);
	assert_string_equal(h->cluster_queue, cq);
	assert_string_equal(h->flavor, "a100");
	assert_string_equal(h->resource, GPU);
	assert_int_equal(h->amount, amount);
	assert_int_equal(h->same_cq, same_cq);
	assert_int_equal(h->borrowing, borrowing);
	assert_int_equal(h->preemptible, preemptible);
}

static void check_step(const struct eng_fit_step *s, const char *key, int preempt, int64_t frees)
{
	assert_string_equal(s->key, key);
	assert_int_equal(s->preempt, preempt);
	assert_string_equal(s->resource, GPU);
	assert_int_equal(s->frees, frees);
}

/* Without preemption every holder would have to end; to_fit takes the biggest share of what is
 * missing first, then (equal shares) the most recently admitted, and drops none it needs. */
static void test_explain_holders_must_end(void **state)
{
	(void)state;
	struct engine *e = new_engine();
	put_cq(e, &(struct cqd){ .name = "cq", .gpu = G(8) });
	lq(e, "lq", "cq");
	add1(e, "a", "lq", 0, 0, 1, G(4));
	add1(e, "b", "lq", 0, 1, 1, G(2));
	add1(e, "c", "lq", 0, 2, 1, G(2));
	assert_int_equal(cycle(e).n_admitted, 3);
	add1(e, "p", "lq", 0, 3, 3, G(2));

	struct eng_explain x = explain(e, "ns/p");
	assert_int_equal(x.state, ENG_STATE_PENDING);
	assert_int_equal(x.wait, ENG_WAIT_QUOTA);
	assert_string_equal(x.cluster_queue, "cq");
	assert_true(x.has_position);
	assert_int_equal(x.position_in_cq, 0);
	assert_int_equal(x.n_lacking, 1);
	assert_string_equal(x.lacking[0].podset, "main");
	assert_string_equal(x.lacking[0].flavor, "a100");
	assert_string_equal(x.lacking[0].resource, GPU);
	assert_int_equal(x.lacking[0].requested, G(6));
	assert_int_equal(x.lacking[0].available, 0);
	assert_int_equal(x.lacking[0].missing, G(6));
	assert_int_equal(x.lacking[0].reserved, 0);
	assert_false(x.lacking[0].exceeds_capacity);
	assert_int_equal(x.n_holders, 3);
	check_holder(&x.holders[0], "ns/a", "cq", G(4), 1, 0, 0);
	check_holder(&x.holders[1], "ns/c", "cq", G(2), 1, 0, 0);
	check_holder(&x.holders[2], "ns/b", "cq", G(2), 1, 0, 0);
	assert_true(x.to_fit_found);
	assert_int_equal(x.n_to_fit, 2);
	check_step(&x.to_fit[0], "ns/a", 0, G(4));
	check_step(&x.to_fit[1], "ns/c", 0, G(2));

	/* When c ends, a alone is not enough; with a gone too p is admitted. */
	engine_remove_workload(e, "ns/c");
	assert_int_equal(cycle(e).n_admitted, 0);
	x = explain(e, "ns/p");
	assert_int_equal(x.lacking[0].missing, G(4));
	assert_int_equal(x.n_to_fit, 1);
	check_step(&x.to_fit[0], "ns/a", 0, G(4));
	engine_remove_workload(e, "ns/a");
	struct rec r = cycle(e);
	assert_int_equal(r.n_admitted, 1);
	assert_string_equal(r.admitted[0], "ns/p");
	engine_free(e);
}

/* withinClusterQueue: LowerPriority: the lower-priority holders are preemptible, in the
 * engine's order (most recently admitted first), and to_fit names what the next cycle really
 * preempts. Then p waits for its victims, and once they are gone it just waits its turn. */
static void test_explain_preemptible_is_what_preemption_takes(void **state)
{
	(void)state;
	struct engine *e = lower_priority_cq(G(8));
	add1(e, "lo1", "lq-0", 0, 0, 1, G(2));
	add1(e, "hi", "lq-0", 10, 1, 1, G(4));
	assert_int_equal(cycle(e).n_admitted, 2);
	add1(e, "lo2", "lq-0", 0, 2, 1, G(2));
	assert_int_equal(cycle(e).n_admitted, 1);
	add1(e, "p", "lq-0", 5, 3, 1, G(4));

	struct eng_explain x = explain(e, "ns/p");
	assert_int_equal(x.wait, ENG_WAIT_QUOTA);
	assert_int_equal(x.lacking[0].missing, G(4));
	assert_int_equal(x.n_holders, 3);
	check_holder(&x.holders[0], "ns/lo2", "cq", G(2), 1, 0, 1);
	check_holder(&x.holders[1], "ns/lo1", "cq", G(2), 1, 0, 1);
	check_holder(&x.holders[2], "ns/hi", "cq", G(4), 1, 0, 0);
	assert_int_equal(x.n_to_fit, 2);
	check_step(&x.to_fit[0], "ns/lo2", 1, G(2));
	check_step(&x.to_fit[1], "ns/lo1", 1, G(2));

	struct rec r = cycle(e);
	assert_int_equal(r.n_preempted, 2);
	assert_string_equal(r.preempted[0], "ns/lo2");
	assert_string_equal(r.preempted[1], "ns/lo1");

	x = explain(e, "ns/p");
	assert_int_equal(x.wait, ENG_WAIT_PREEMPTION);
	assert_int_equal(x.position_in_cq, 0);
	assert_int_equal(x.lacking[0].missing, G(4));
	assert_int_equal(x.n_holders, 3);
	assert_true(x.holders[0].evicting && x.holders[0].preemptible);
	assert_true(x.holders[1].evicting && x.holders[1].preemptible);
	assert_false(x.holders[2].preemptible);
	assert_int_equal(x.n_to_fit, 2);
	check_step(&x.to_fit[0], "ns/lo2", 1, G(2));
	check_step(&x.to_fit[1], "ns/lo1", 1, G(2));

	/* p's hold counts on top of its victims, still charged: a newcomer must see both go. It
	 * can't preempt, so the others would have to end: lo2 and lo1 (lower priority, newest
	 * first), then hi; with all three gone lo1 isn't needed after all. */
	add1(e, "late", "lq-0", 0, 4, 1, G(1));
	x = explain(e, "ns/late");
	assert_int_equal(x.wait, ENG_WAIT_QUOTA);
	assert_int_equal(x.lacking[0].available, 0);
	assert_int_equal(x.lacking[0].missing, G(1));
	assert_int_equal(x.lacking[0].reserved, G(4));
	assert_int_equal(x.n_to_fit, 2);
	check_step(&x.to_fit[0], "ns/lo2", 0, G(2));
	check_step(&x.to_fit[1], "ns/hi", 0, G(4));

	/* Victims gone: the quota they free is held for p, which another workload sees. */
	assert_int_equal(engine_evict(e, "ns/lo2"), 0);
	assert_int_equal(engine_evict(e, "ns/lo1"), 0);
	x = explain(e, "ns/p");
	assert_int_equal(x.wait, ENG_WAIT_PREEMPTION);
	assert_int_equal(x.n_lacking, 0);
	x = explain(e, "ns/lo1");
	assert_int_equal(x.wait, ENG_WAIT_QUOTA);
	assert_int_equal(x.position_in_cq, 1);
	assert_int_equal(x.lacking[0].available, 0);
	assert_int_equal(x.lacking[0].reserved, G(4));
	assert_int_equal(x.n_holders, 1); /* hi: p isn't admitted yet */
	check_holder(&x.holders[0], "ns/hi", "cq", G(4), 1, 0, 0);
	r = cycle(e);
	assert_int_equal(r.n_admitted, 1);
	assert_string_equal(r.admitted[0], "ns/p");
	engine_free(e);
}

/* A ClusterQueue of the cohort borrowing what p's queue lends: a "Cohort" holder, borrowing,
 * preemptible under reclaimWithinCohort: Any (and the cycle reclaims it), not under Never. */
static void cohort_case(int reclaim)
{
	struct engine *e = new_engine();
	struct eng_preemption pol = { 0, reclaim ? ENG_RECLAIM_ANY : ENG_RECLAIM_NEVER, 0, 0, 0 };
	put_cq(e, &(struct cqd){ .name = "cq-a", .cohort = "co", .gpu = G(8), .pol = pol });
	put_cq(e, &(struct cqd){ .name = "cq-b", .cohort = "co", .gpu = 0 });
	lq(e, "lq-a", "cq-a");
	lq(e, "lq-b", "cq-b");
	add1(e, "b1", "lq-b", 0, 0, 3, G(2));
	assert_int_equal(cycle(e).n_admitted, 1);
	add1(e, "p", "lq-a", 0, 1, 1, G(8));

	struct eng_explain x = explain(e, "ns/p");
	assert_int_equal(x.wait, ENG_WAIT_QUOTA);
	assert_int_equal(x.lacking[0].requested, G(8));
	assert_int_equal(x.lacking[0].available, G(2));
	assert_int_equal(x.lacking[0].missing, G(6));
	assert_int_equal(x.n_holders, 1);
	check_holder(&x.holders[0], "ns/b1", "cq-b", G(6), 0, 1, reclaim);
	assert_true(x.to_fit_found);
	assert_int_equal(x.n_to_fit, 1);
	check_step(&x.to_fit[0], "ns/b1", reclaim, G(6));
	struct rec r = cycle(e);
	assert_int_equal(r.n_preempted, reclaim);
	engine_free(e);
}

static void test_explain_cohort_holder(void **state)
{
	(void)state;
	cohort_case(1);
	cohort_case(0);
}

/* Explaining changes nothing: a twin engine that is never asked makes the same decisions. */
static void twin_setup(struct engine *e)
{
	struct eng_preemption pol = { ENG_WITHIN_LOWER_PRIORITY, ENG_RECLAIM_ANY, 0, 0, 0 };
	put_cq(e, &(struct cqd){ .name = "cq-a", .cohort = "co", .gpu = G(4), .pol = pol });
	put_cq(e, &(struct cqd){ .name = "cq-b",
				 .cohort = "co",
				 .gpu = G(4),
				 .queueing = ENG_STRICT_FIFO,
				 .pol = pol });
	lq(e, "lq-a", "cq-a");
	lq(e, "lq-b", "cq-b");
	add1(e, "b1", "lq-b", 0, 0, 5, G(1));
	add1(e, "a1", "lq-a", 0, 1, 1, G(2));
	assert_int_equal(cycle(e).n_admitted, 2);
	add1(e, "a2", "lq-a", 3, 2, 1, G(3));
	add1(e, "b2", "lq-b", 1, 3, 2, G(2));
	add1(e, "a3", "lq-a", 0, 4, 1, G(1));
}

static void test_explain_changes_nothing(void **state)
{
	(void)state;
	static const char *const keys[] = { "ns/a1", "ns/a2", "ns/a3", "ns/b1", "ns/b2" };
	struct engine *asked = new_engine(), *twin = new_engine();
	twin_setup(asked);
	twin_setup(twin);
	for (int round = 0; round < 6; round++) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			struct eng_explain x;
			int rc = engine_explain(asked, keys[i], &x);
			assert_true(rc == 0 || (rc == -ENOENT && round > 3));
			check_usage(asked);
		}
		struct rec ra = cycle(asked), rt = cycle(twin);
		assert_string_equal(ra.log, rt.log);
		for (int k = 0; k < ra.n_preempted; k++) {
			assert_int_equal(engine_evict(asked, ra.preempted[k]), 0);
			assert_int_equal(engine_evict(twin, rt.preempted[k]), 0);
		}
		if (round == 3) {
			engine_remove_workload(asked, "ns/b1");
			engine_remove_workload(twin, "ns/b1");
		}
	}
	engine_free(asked);
	engine_free(twin);
}

/* The other reasons to wait. */
static int refuse(void *arg, const char *wl, const struct eng_assignment *a, char *msg, size_t size)
{
	(void)arg;
	(void)wl;
	(void)a;
	snprintf(msg, size, "no node layout");
	return 1;
}

static void test_explain_other_waits(void **state)
{
	(void)state;
	struct engine *e = new_engine();
	put_cq(e, &(struct cqd){ .name = "strict", .gpu = G(8), .queueing = ENG_STRICT_FIFO });
	put_cq(e, &(struct cqd){ .name = "closed", .gpu = G(8), .no_selector = 1 });
	put_cq(e, &(struct cqd){ .name = "broken", .gpu = G(8), .flavor = "h100" });
	put_cq(e, &(struct cqd){ .name = "nodes", .gpu = G(8) });
	lq(e, "lq-s", "strict");
	lq(e, "lq-c", "closed");
	lq(e, "lq-b", "broken");
	lq(e, "lq-n", "nodes");
	add1(e, "x", "lq-s", 0, 0, 1, G(4));
	cycle(e);
	add1(e, "head", "lq-s", 10, 1, 1, G(8));
	add1(e, "small", "lq-s", 0, 2, 1, G(1));
	add1(e, "c", "lq-c", 0, 0, 1, G(1));
	add1(e, "b", "lq-b", 0, 0, 1, G(1));
	add1(e, "n", "lq-n", 0, 0, 1, G(1));
	engine_set_placer(e, refuse, NULL);
	cycle(e);

	struct eng_explain x = explain(e, "ns/small");
	assert_int_equal(x.wait, ENG_WAIT_TURN); /* behind the blocked head */
	assert_int_equal(x.position_in_cq, 1);
	assert_int_equal(x.n_lacking, 0);
	x = explain(e, "ns/head");
	assert_int_equal(x.wait, ENG_WAIT_QUOTA);
	assert_int_equal(x.lacking[0].missing, G(4));
	check_step(&x.to_fit[0], "ns/x", 0, G(4));
	assert_int_equal(explain(e, "ns/c").wait, ENG_WAIT_NAMESPACE);
	assert_int_equal(explain(e, "ns/b").wait, ENG_WAIT_CQ_INACTIVE);
	assert_int_equal(explain(e, "ns/n").wait, ENG_WAIT_NODES);
	x = explain(e, "ns/x");
	assert_int_equal(x.state, ENG_STATE_ADMITTED);
	assert_string_equal(x.cluster_queue, "strict");
	assert_false(x.evicting);
	assert_false(x.has_position);
	engine_free(e);
}

/* More than the ClusterQueue could ever get, a resource it doesn't cover, a second podSet on
 * the same flavor, and more holders than the bounds. */
static void test_explain_capacity_podsets_and_bounds(void **state)
{
	(void)state;
	struct engine *e = new_engine();
	put_cq(e, &(struct cqd){ .name = "cq", .gpu = G(40) });
	lq(e, "lq", "cq");
	for (int i = 0; i < 34; i++) {
		char name[8];
		snprintf(name, sizeof(name), "h%02d", i);
		add1(e, name, "lq", 0, i, 1, G(1));
	}
	assert_int_equal(cycle(e).n_admitted, 34);
	/* main takes 4 of the 6 left, aux asks 4 more: it lacks 2 after main. */
	add(e, &(struct wld){ .name = "two",
			      .queue = "lq",
			      .time = 100,
			      .count = { 2, 1 },
			      .gpu = { G(2), G(4) } });
	struct eng_explain x = explain(e, "ns/two");
	assert_int_equal(x.n_lacking, 1);
	assert_string_equal(x.lacking[0].podset, "aux");
	assert_int_equal(x.lacking[0].requested, G(4));
	assert_int_equal(x.lacking[0].available, G(2));
	assert_int_equal(x.lacking[0].missing, G(2));
	assert_int_equal(x.holders_total, 34);
	assert_int_equal(x.n_holders, ENG_EXPLAIN_HOLDERS);
	assert_int_equal(x.n_to_fit, 2);
	check_step(&x.to_fit[0], "ns/h33", 0, G(1)); /* most recently admitted first */
	check_step(&x.to_fit[1], "ns/h32", 0, G(1));

	add1(e, "huge", "lq", 0, 101, 1, G(41));
	x = explain(e, "ns/huge");
	assert_true(x.lacking[0].exceeds_capacity);
	assert_int_equal(x.lacking[0].missing, G(35));
	assert_int_equal(x.holders_total, 34);
	assert_false(x.to_fit_found);
	assert_int_equal(x.n_to_fit, 0);

	add(e, &(struct wld){ .name = "odd",
			      .queue = "lq",
			      .time = 102,
			      .count = { 1 },
			      .gpu = { G(1) },
			      .extra = "example.com/foo" });
	x = explain(e, "ns/odd");
	assert_int_equal(x.n_lacking, 1);
	assert_null(x.lacking[0].flavor);
	assert_string_equal(x.lacking[0].resource, "example.com/foo");
	assert_int_equal(x.lacking[0].missing, 1000);
	assert_true(x.lacking[0].exceeds_capacity);
	assert_int_equal(x.n_holders, 0);
	assert_false(x.to_fit_found);
	assert_int_equal(engine_explain(e, "ns/odd", NULL), -EINVAL);
	engine_free(e);
}

/* --- random scenarios ----------------------------------------------------------------------- */

/* A cohort of three ClusterQueues with random quotas and policies and a lone one; workloads
 * arrive, end and are evicted at random, preemptions are carried out a step later. */
struct scenario {
	uint64_t rng;
	int n_names;
	char names[400][16];
	int gone[400];
	char evict[64][32];
	int n_evict;
};

static void scenario_setup(struct engine *e, struct scenario *sc, uint64_t seed)
{
	static const int64_t nominal[] = { 0, G(2), G(4), G(8) };
	memset(sc, 0, sizeof(*sc));
	sc->rng = seed;
	for (int i = 0; i < 4; i++) {
		char name[8], queue[8];
		struct eng_preemption pol = {
			(enum eng_within_cq)(rng_next(&sc->rng) % 3),
			(enum eng_reclaim)(rng_next(&sc->rng) % 3),
			(enum eng_borrow_within)(rng_next(&sc->rng) % 2),
			0,
			0,
		};
		if (pol.reclaim_within_cohort == ENG_RECLAIM_NEVER)
			pol.borrow_within_cohort = ENG_BORROW_WITHIN_NEVER; /* Kueue's CEL rule */
		snprintf(name, sizeof(name), "q%d", i);
		snprintf(queue, sizeof(queue), "lq-%d", i);
		put_cq(e, &(struct cqd){ .name = name,
					 .cohort = i < 3 ? "co" : NULL,
					 .gpu = nominal[rng_next(&sc->rng) % 4],
					 .queueing = (enum eng_queueing)(rng_next(&sc->rng) % 2),
					 .pol = pol });
		lq(e, queue, name);
	}
}

static void scenario_step(struct engine *e, struct scenario *sc, struct rec *r)
{
	static const int32_t prio[] = { 0, 1, 5 };
	for (int i = 0; i < sc->n_evict; i++)
		(void)engine_evict(e, sc->evict[i]);
	sc->n_evict = 0;
	uint64_t what = rng_next(&sc->rng) % 10;
	if (what < 5 && sc->n_names < 400) {
		char *name = sc->names[sc->n_names++], queue[8];
		snprintf(name, 16, "w%03d", sc->n_names - 1);
		snprintf(queue, sizeof(queue), "lq-%d", (int)(rng_next(&sc->rng) % 4));
		int two = rng_next(&sc->rng) % 8 == 0;
		add(e, &(struct wld){ .name = name,
				      .queue = queue,
				      .priority = prio[rng_next(&sc->rng) % 3],
				      .time = sc->n_names,
				      .count = { 1 + (int64_t)(rng_next(&sc->rng) % 3), two },
				      .gpu = { G(1) << (rng_next(&sc->rng) % 3), G(1) } });
	} else if (sc->n_names > 0) {
		int i = (int)(rng_next(&sc->rng) % (uint64_t)sc->n_names);
		char key[32];
		snprintf(key, sizeof(key), "ns/%s", sc->names[i]);
		if (what < 8 && !sc->gone[i]) {
			engine_remove_workload(e, key);
			sc->gone[i] = 1;
		} else if (!sc->gone[i]) {
			(void)engine_evict(e, key);
		}
	}
	memset(r, 0, sizeof(*r));
	assert_true(engine_cycle(e, on_decision, r) >= 0);
	for (int i = 0; i < r->n_preempted && sc->n_evict < 64; i++)
		snprintf(sc->evict[sc->n_evict++], 32, "%s", r->preempted[i]);
}

/* What an explanation must satisfy whatever the scenario. */
static void check_explanation(const struct eng_explain *x)
{
	assert_true(x->n_lacking <= x->lacking_total && x->n_lacking <= ENG_EXPLAIN_LACKING);
	for (size_t i = 0; i < x->n_lacking; i++) {
		const struct eng_lack *l = &x->lacking[i];
		assert_true(l->missing > 0);
		assert_int_equal(l->missing, l->requested - l->available);
	}
	assert_true(x->n_holders <= x->holders_total && x->n_holders <= ENG_EXPLAIN_HOLDERS);
	for (size_t i = 0; i < x->n_holders; i++)
		assert_true(x->holders[i].amount > 0);
	assert_true(x->n_to_fit <= x->to_fit_total);
	assert_true(x->to_fit_found || x->n_to_fit == 0);
	for (size_t i = 0; i < x->n_to_fit; i++) {
		int held = x->holders_total > ENG_EXPLAIN_HOLDERS;
		for (size_t k = 0; k < x->n_holders && !held; k++)
			held = !strcmp(x->holders[k].key, x->to_fit[i].key);
		assert_true(held);
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(x->to_fit[k].key, x->to_fit[i].key);
	}
}

/* Explains every workload and lists every ClusterQueue. The key of one whose to_fit is
 * complete goes to probe (if not NULL). */
static void ask_everything(struct engine *e, const struct scenario *sc, char *probe)
{
	for (int i = 0; i < 4; i++) {
		char name[8];
		size_t pending, admitted;
		snprintf(name, sizeof(name), "q%d", i);
		assert_int_equal(engine_cq_counts(e, name, &pending, &admitted), 0);
		assert_int_equal(engine_pending_order(e, name, NULL, NULL), (int)pending);
	}
	for (int i = 0; i < sc->n_names; i++) {
		char key[32];
		struct eng_explain x;
		snprintf(key, sizeof(key), "ns/%s", sc->names[i]);
		int rc = engine_explain(e, key, &x);
		assert_int_equal(rc, sc->gone[i] ? -ENOENT : 0);
		check_usage(e);
		if (rc)
			continue;
		check_explanation(&x);
		if (probe && !probe[0] && x.wait == ENG_WAIT_QUOTA && x.to_fit_found &&
		    x.n_to_fit == x.to_fit_total)
			snprintf(probe, 32, "%s", key);
	}
}

/* Replays the scenario to where it is, removes what to_fit names, and looks again. */
static void probe_to_fit(uint64_t seed, int steps, const char *key)
{
	struct engine *e = new_engine();
	struct scenario sc;
	struct rec r;
	struct eng_explain x;
	scenario_setup(e, &sc, seed);
	for (int i = 0; i < steps; i++)
		scenario_step(e, &sc, &r);
	assert_int_equal(engine_explain(e, key, &x), 0);
	assert_int_equal(x.wait, ENG_WAIT_QUOTA);
	for (size_t i = 0; i < x.n_to_fit; i++)
		engine_remove_workload(e, x.to_fit[i].key);
	assert_int_equal(engine_explain(e, key, &x), 0);
	if (x.lacking_total != 0)
		fail_msg("seed %llu step %d: %s still lacks %s after its to_fit left",
			 (unsigned long long)seed, steps, key, x.lacking[0].resource);
	engine_free(e);
}

static void test_explain_random_scenarios(void **state)
{
	(void)state;
	const char *env = getenv("MUSTER_SEED");
	uint64_t first = env ? strtoull(env, NULL, 10) : 1, last = env ? first : 12;
	int probes = 0;
	for (uint64_t seed = first; seed <= last; seed++) {
		struct engine *asked = new_engine(), *twin = new_engine();
		struct scenario sa, st;
		struct rec ra, rt;
		scenario_setup(asked, &sa, seed);
		scenario_setup(twin, &st, seed);
		for (int step = 0; step < 120; step++) {
			char probe[32] = "";
			ask_everything(asked, &sa, step % 10 == 9 ? probe : NULL);
			if (probe[0]) {
				probe_to_fit(seed, step, probe);
				probes++;
			}
			scenario_step(asked, &sa, &ra);
			scenario_step(twin, &st, &rt);
			if (strcmp(ra.log, rt.log))
				fail_msg("seed %llu step %d: explaining changed a decision",
					 (unsigned long long)seed, step);
		}
		engine_free(asked);
		engine_free(twin);
	}
	assert_true(env || probes > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_is_admission_order),
		cmocka_unit_test(test_order_waiting_preemptor_first),
		cmocka_unit_test(test_order_held_unknown_and_early_stop),
		cmocka_unit_test(test_explain_holders_must_end),
		cmocka_unit_test(test_explain_preemptible_is_what_preemption_takes),
		cmocka_unit_test(test_explain_cohort_holder),
		cmocka_unit_test(test_explain_changes_nothing),
		cmocka_unit_test(test_explain_other_waits),
		cmocka_unit_test(test_explain_capacity_podsets_and_bounds),
		cmocka_unit_test(test_explain_random_scenarios),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
