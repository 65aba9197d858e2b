/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for core/engine: quota maths over cohort trees, flavor assignment and
 * fungibility, queueing, cycle order, preemption, partial admission, selectors, stop policies
 * and the messages Kueue would write. Quantities are in whole units (U(2) = 2 CPUs).
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
#include "core/engine_internal.h" /* engine_check's own test breaks what it checks */

#define U(x) ((int64_t)(x)*1000)
#define UNSET (-1)

/* --- decisions ---------------------------------------------------------------------------- */

struct dec {
	enum eng_decision_kind kind;
	char wl[64];
	char preemptor[64];
	char reason[64];
	char msg[1024];
	char cq[64];
	char flavor[64]; /* first resource of the first podSet */
	int64_t count; /* first podSet */
};

struct rec {
	struct dec d[2048];
	int n;
};

static void on_decision(void *arg, const struct eng_decision *d)
{
	struct rec *r = arg;
	assert_true(r->n < (int)(sizeof(r->d) / sizeof(r->d[0])));
	struct dec *x = &r->d[r->n++];
	memset(x, 0, sizeof(*x));
	x->kind = d->kind;
	snprintf(x->wl, sizeof(x->wl), "%s", d->workload);
	snprintf(x->preemptor, sizeof(x->preemptor), "%s", d->preemptor ? d->preemptor : "");
	snprintf(x->reason, sizeof(x->reason), "%s", d->reason ? d->reason : "");
	snprintf(x->msg, sizeof(x->msg), "%s", d->message ? d->message : "");
	if (d->kind == ENG_ADMIT) {
		assert_non_null(d->assignment);
		snprintf(x->cq, sizeof(x->cq), "%s", d->assignment->cluster_queue);
		x->count = d->assignment->podsets[0].count;
		if (d->assignment->podsets[0].n)
			snprintf(x->flavor, sizeof(x->flavor), "%s",
				 d->assignment->podsets[0].flavors[0]);
	}
}

static int cycle(struct engine *e, struct rec *r)
{
	int rc = engine_cycle(e, on_decision, r);
	assert_true(rc >= 0);
	return rc;
}

/* Runs cycles until nothing more happens. */
static void settle(struct engine *e, struct rec *r)
{
	for (int i = 0; i < 100; i++)
		if (cycle(e, r) == 0)
			return;
	fail_msg("no fixed point");
}

static const struct dec *find(const struct rec *r, enum eng_decision_kind kind, const char *wl)
{
	for (int i = r->n - 1; i >= 0; i--)
		if (r->d[i].kind == kind && !strcmp(r->d[i].wl, wl))
			return &r->d[i];
	return NULL;
}

static int count_kind(const struct rec *r, enum eng_decision_kind kind)
{
	int n = 0;
	for (int i = 0; i < r->n; i++)
		n += r->d[i].kind == kind;
	return n;
}

static int admitted(struct engine *e, const char *wl)
{
	return engine_admission(e, wl) != NULL;
}

static int64_t cq_usage(struct engine *e, const char *cq, const char *flavor, const char *res)
{
	struct eng_cq_usage u = { -1, -1 };
	assert_int_equal(engine_cq_usage(e, cq, flavor, res, &u), 0);
	return u.total;
}

static int64_t cohort_usage(struct engine *e, const char *co, const char *flavor, const char *res)
{
	struct eng_cq_usage u = { -1, -1 };
	assert_int_equal(engine_cohort_usage(e, co, flavor, res, &u), 0);
	return u.total;
}

/* --- specs ---------------------------------------------------------------------------------- */

/* A flavor's quotas for up to 3 covered resources; UNSET limits are absent. */
struct fq {
	const char *flavor;
	int64_t nominal[3];
	int64_t borrowing[3];
	int64_t lending[3];
};

struct cqdef {
	const char *name;
	const char *cohort;
	const char *res[3]; /* covered resources; default {"cpu"} */
	struct fq fl[4];
	enum eng_queueing queueing;
	struct eng_preemption preemption;
	enum eng_when_can_borrow when_can_borrow;
	enum eng_when_can_preempt when_can_preempt;
	int prefer_preemption;
	const struct label_selector *selector; /* default: all namespaces */
	int no_selector;
	enum eng_stop_policy stop;
	double weight; /* fairSharing.weight when has_weight */
	int has_weight;
	int afs; /* admissionScope UsageBasedAdmissionFairSharing */
};

struct built {
	const char *cov[3];
	struct eng_resource_quota rq[4][3];
	struct eng_flavor_quotas fq[4];
	struct eng_resource_group g;
};

static void build_group(struct built *b, const char *const *res, const struct fq *fl)
{
	size_t n_res = 0, n_fl = 0;
	for (; n_res < 3 && res[n_res]; n_res++)
		b->cov[n_res] = res[n_res];
	if (n_res == 0)
		b->cov[n_res++] = "cpu";
	for (; n_fl < 4 && fl[n_fl].flavor; n_fl++) {
		for (size_t r = 0; r < n_res; r++) {
			b->rq[n_fl][r] = (struct eng_resource_quota){
				b->cov[r],
				fl[n_fl].nominal[r],
				fl[n_fl].borrowing[r] != UNSET,
				fl[n_fl].borrowing[r] == UNSET ? 0 : fl[n_fl].borrowing[r],
				fl[n_fl].lending[r] != UNSET,
				fl[n_fl].lending[r] == UNSET ? 0 : fl[n_fl].lending[r]
			};
		}
		b->fq[n_fl] = (struct eng_flavor_quotas){ fl[n_fl].flavor, n_res, b->rq[n_fl] };
	}
	b->g = (struct eng_resource_group){ n_res, b->cov, n_fl, b->fq };
}

/* fq entries: limits default to UNSET unless given. */
#define FQ(f, n)                                         \
	{                                                \
		f, { n, 0, 0 }, { UNSET, UNSET, UNSET }, \
		{                                        \
			UNSET, UNSET, UNSET              \
		}                                        \
	}
#define FQB(f, n, b)                                 \
	{                                            \
		f, { n, 0, 0 }, { b, UNSET, UNSET }, \
		{                                    \
			UNSET, UNSET, UNSET          \
		}                                    \
	}
#define FQL(f, n, l)                                     \
	{                                                \
		f, { n, 0, 0 }, { UNSET, UNSET, UNSET }, \
		{                                        \
			l, UNSET, UNSET                  \
		}                                        \
	}
#define FQBL(f, n, b, l)                             \
	{                                            \
		f, { n, 0, 0 }, { b, UNSET, UNSET }, \
		{                                    \
			l, UNSET, UNSET              \
		}                                    \
	}

static int try_put_cq(struct engine *e, const struct cqdef *d)
{
	static const struct label_selector all = { 0 };
	struct built b;
	build_group(&b, d->res, d->fl);
	struct eng_cq_spec spec = {
		.name = d->name,
		.cohort = d->cohort,
		.n_groups = 1,
		.groups = &b.g,
		.queueing = d->queueing,
		.preemption = d->preemption,
		.when_can_borrow = d->when_can_borrow,
		.when_can_preempt = d->when_can_preempt,
		.prefer_preemption_over_borrowing = d->prefer_preemption,
		.namespace_selector = d->no_selector ? NULL :
				      d->selector    ? d->selector :
						       &all,
		.stop_policy = d->stop,
		.has_fair_weight = d->has_weight,
		.fair_weight = d->weight,
		.usage_based_afs = d->afs,
	};
	return engine_set_cq(e, &spec);
}

static void put_cq(struct engine *e, const struct cqdef *d)
{
	assert_int_equal(try_put_cq(e, d), 0);
}

static int try_put_cohort_w(struct engine *e, const char *name, const char *parent,
			    const struct fq *fl, int has_weight, double weight)
{
	static const char *const cpu[] = { "cpu", NULL };
	struct built b;
	size_t n_groups = fl && fl[0].flavor ? 1 : 0;
	if (n_groups)
		build_group(&b, cpu, fl);
	struct eng_cohort_spec spec = { .name = name,
					.parent = parent,
					.n_groups = n_groups,
					.groups = n_groups ? &b.g : NULL,
					.has_fair_weight = has_weight,
					.fair_weight = weight };
	return engine_set_cohort(e, &spec);
}

static int try_put_cohort(struct engine *e, const char *name, const char *parent,
			  const struct fq *fl)
{
	return try_put_cohort_w(e, name, parent, fl, 0, 0);
}

static void put_cohort(struct engine *e, const char *name, const char *parent, const struct fq *fl)
{
	assert_int_equal(try_put_cohort(e, name, parent, fl), 0);
}

static void put_flavor(struct engine *e, const char *name)
{
	struct quota_flavor f = { .name = (char *)name };
	assert_int_equal(engine_set_flavor(e, &f), 0);
}

/* A workload "ns/<name>" in LocalQueue "lq-<cq>" (one podSet "main"). */
struct wldef {
	const char *name;
	const char *queue; /* LocalQueue name in "ns" */
	int32_t priority;
	int64_t time;
	int64_t count;
	int64_t min_count;
	const char *res[3]; /* default "cpu" */
	int64_t per_pod[3];
	const struct quota_kv *selector;
	size_t n_selector;
	const struct quota_taint *tolerations;
	size_t n_tolerations;
	const char *ns; /* default "ns" */
};

static int try_add_wl(struct engine *e, const struct wldef *d)
{
	char key[128];
	const char *res[3];
	int64_t per_pod[3];
	size_t n = 0;
	for (; n < 3 && d->res[n]; n++) {
		res[n] = d->res[n];
		per_pod[n] = d->per_pod[n];
	}
	if (n == 0) {
		res[0] = "cpu";
		per_pod[0] = d->per_pod[0];
		n = 1;
	}
	const char *ns = d->ns ? d->ns : "ns";
	snprintf(key, sizeof(key), "%s/%s", ns, d->name);
	struct eng_podset ps = { "main",
				 d->count ? d->count : 1,
				 d->min_count,
				 { .n_requests = n,
				   .resources = res,
				   .per_pod = per_pod,
				   .n_selector = d->n_selector,
				   .node_selector = d->selector,
				   .n_tolerations = d->n_tolerations,
				   .tolerations = d->tolerations } };
	struct eng_workload_spec w = { key, ns, d->queue, d->priority, d->time, 1, &ps, NULL };
	return engine_add_workload(e, &w);
}

static void add_wl(struct engine *e, const struct wldef *d)
{
	assert_int_equal(try_add_wl(e, d), 0);
}

/* An engine with flavor "default", namespace "ns" (team=a) and n ClusterQueues cq-<i> in
 * cohort co (or none) with nominal cpu each, LocalQueue lq-<name> -> it. */
static struct engine *new_engine(void)
{
	struct engine *e;
	assert_int_equal(engine_new(&e), 0);
	put_flavor(e, "default");
	struct quota_kv labels[] = { { "team", "a" } };
	assert_int_equal(engine_set_namespace(e, "ns", 1, labels), 0);
	return e;
}

static void lq(struct engine *e, const char *name, const char *cq)
{
	assert_int_equal(engine_set_local_queue(e, "ns", name, cq, ENG_STOP_NONE), 0);
}

/* engine_check after each step: its spec table must agree with the workloads. */
static void assert_engine_consistent(const struct engine *e)
{
	char why[256];
	if (engine_check(e, why, sizeof(why)) != 0)
		fail_msg("%s", why);
}

/* Workloads with equal podSets share one interned spec (spec pointers compared by the shape
 * caches); replacing and removing workloads keeps its count right, and equal content built
 * from other strings still finds it. */
static void test_engine_specs_interned_and_counted(void **state)
{
	(void)state;
	struct engine *e = new_engine();
	lq(e, "lq", "cq");
	char zone_a[] = "zone", value_a[] = "a", zone_b[] = "zone", value_b[] = "a";
	struct quota_kv sel_a[] = { { zone_a, value_a } }, sel_b[] = { { zone_b, value_b } };
	struct wldef defs[] = {
		{ .name = "w1",
		  .queue = "lq",
		  .per_pod = { 1000 },
		  .selector = sel_a,
		  .n_selector = 1 },
		{ .name = "w2",
		  .queue = "lq",
		  .per_pod = { 1000 },
		  .selector = sel_b,
		  .n_selector = 1 },
		{ .name = "w3", .queue = "lq", .per_pod = { 2000 } },
		{ .name = "w4", .queue = "lq", .per_pod = { 1000 }, .count = 2 },
	};
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		add_wl(e, &defs[i]);
		assert_engine_consistent(e);
	}
	/* w1 takes w3's shape, then its own back; w2 goes; w1 and w3 go last. */
	defs[0].per_pod[0] = 2000;
	defs[0].n_selector = 0;
	add_wl(e, &defs[0]);
	assert_engine_consistent(e);
	defs[0].per_pod[0] = 1000;
	defs[0].n_selector = 1;
	add_wl(e, &defs[0]);
	assert_engine_consistent(e);
	engine_remove_workload(e, "ns/w2");
	assert_engine_consistent(e);
	engine_remove_workload(e, "ns/w1");
	engine_remove_workload(e, "ns/w3");
	assert_engine_consistent(e);
	engine_free(e);
}

/* --- fits, no fit, exceeds max ------------------------------------------------------------ */

static void test_engine_fits_admits_and_charges(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "w", "lq", .count = 4, .per_pod = { U(1) } });
	assert_int_equal(cycle(e, &r), 1);
	const struct dec *d = find(&r, ENG_ADMIT, "ns/w");
	assert_non_null(d);
	assert_string_equal(d->cq, "cq");
	assert_string_equal(d->flavor, "default");
	assert_int_equal(d->count, 4);
	assert_int_equal(cq_usage(e, "cq", "default", "cpu"), U(4));
	const struct eng_assignment *a = engine_admission(e, "ns/w");
	assert_non_null(a);
	assert_int_equal(a->podsets[0].usage[0], U(4));
	size_t pending, adm;
	assert_int_equal(engine_cq_counts(e, "cq", &pending, &adm), 0);
	assert_int_equal(pending, 0);
	assert_int_equal(adm, 1);
	assert_int_equal(cycle(e, &r), 0); /* fixed point */
	engine_free(e);
}

/* engine_reserve is only a hint: workloads added after it, fewer or more than it named, are
 * decided as without it. */
static void test_engine_reserve_is_only_a_hint(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	char name[16];
	assert_int_equal(engine_reserve(e, 4), 0);
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) } });
	lq(e, "lq", "cq");
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		add_wl(e, &(struct wldef){ name, "lq", .time = i, .per_pod = { U(1) } });
	}
	assert_int_equal(engine_reserve(e, 2), 0); /* below what is there: nothing changes */
	assert_int_equal(cycle(e, &r), 4);
	assert_true(admitted(e, "ns/w3"));
	assert_false(admitted(e, "ns/w4"));
	assert_non_null(find(&r, ENG_PENDING, "ns/w7"));
	engine_free(e);
}

static void test_engine_no_fit_pending_with_kueue_message(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_flavor(e, "gpu-a100");
	put_cq(e, &(struct cqdef){ .name = "cq",
				   .res = { "nvidia.com/gpu" },
				   .fl = { FQ("gpu-a100", U(8)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "first", "lq", .time = 1, .count = 6,
				   .res = { "nvidia.com/gpu" }, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "second", "lq", .time = 2, .count = 4,
				   .res = { "nvidia.com/gpu" }, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/first"));
	const struct dec *d = find(&r, ENG_PENDING, "ns/second");
	assert_non_null(d);
	assert_string_equal(d->reason, "WaitingForQuota");
	assert_string_equal(d->msg,
			    "couldn't assign flavors to pod set main: insufficient unused quota "
			    "for nvidia.com/gpu in flavor gpu-a100, 2 more needed");
	engine_free(e);
}

static void test_engine_exceeds_max_names_maximum_capacity(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	/* 3 pods of 2Gi against 4Gi (milli-units: 4Gi = 4<<30 * 1000). */
	put_cq(e, &(struct cqdef){ .name = "cq",
				   .res = { "memory" },
				   .fl = { FQ("default", (4LL << 30) * 1000) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "big", "lq", .count = 3, .res = { "memory" },
				   .per_pod = { (2LL << 30) * 1000 } });
	cycle(e, &r);
	const struct dec *d = find(&r, ENG_PENDING, "ns/big");
	assert_non_null(d);
	assert_string_equal(
		d->msg, "couldn't assign flavors to pod set main: insufficient quota for memory "
			"in flavor default, previously considered podsets requests (0) + current "
			"podset request (6Gi) > maximum capacity (4Gi)");
	assert_false(admitted(e, "ns/big"));
	engine_free(e);
}

static void test_engine_pending_reported_only_on_change(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "a", "lq", .time = 1, .count = 3, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "b", "lq", .time = 2, .count = 3, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PENDING), 1);
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/b")->msg, "2 more needed"));
	add_wl(e, &(struct wldef){ "c", "lq", .time = 3, .count = 9, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "x", "lq", .time = 0, .count = 2, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PENDING), 3); /* c and x */
	/* a's 3 go to x first; b is still short and isn't examined again, c can never fit:
	 * nobody's status is rewritten. */
	engine_remove_workload(e, "ns/a");
	cycle(e, &r);
	assert_true(admitted(e, "ns/x"));
	assert_int_equal(count_kind(&r, ENG_PENDING), 3);
	int before = r.n;
	assert_int_equal(cycle(e, &r), 0);
	assert_int_equal(r.n, before);
	/* A spec change looks at everything again: new messages are reported, once. */
	put_cq(e, &(struct cqdef){
			  .name = "cq", .fl = { FQ("default", U(4)) }, .stop = ENG_STOP_HOLD });
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_PENDING, "ns/b")->msg, "ClusterQueue cq is stopped");
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) } });
	cycle(e, &r);
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/b")->msg, "1 more needed"));
	before = r.n;
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) } });
	cycle(e, &r);
	assert_int_equal(r.n, before);
	engine_free(e);
}

/* A shape that failed is answered again from the engine's shape cache only while nothing an
 * evaluation reads has changed: after an admission the same shape gets the new shortfall. The
 * four other failing shapes between push the first out of the small per-queue ring, so the
 * answer comes from the exact cache or a fresh evaluation, never a stale one. */
static void test_engine_same_shape_after_an_admission_gets_the_new_shortfall(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(8)) } });
	lq(e, "lq", "cq");
	int64_t t = 1;
	add_wl(e, &(struct wldef){ "big", "lq", .time = t++, .count = 6, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "s1", "lq", .time = t++, .count = 4, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "tiny", "lq", .time = t++, .count = 1, .per_pod = { U(1) } });
	const char *fill[] = { "f1", "f2", "f3", "f4" };
	for (int i = 0; i < 4; i++)
		add_wl(e, &(struct wldef){ fill[i], "lq", .time = t++, .count = 5 + i,
					   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "s2", "lq", .time = t++, .count = 4, .per_pod = { U(1) } });
	const char *more[] = { "g1", "g2", "g3", "g4" };
	for (int i = 0; i < 4; i++)
		add_wl(e, &(struct wldef){ more[i], "lq", .time = t++, .count = 5 + i,
					   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "s3", "lq", .time = t++, .count = 4, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/big"));
	assert_true(admitted(e, "ns/tiny"));
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/s1")->msg, ", 2 more needed"));
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/s2")->msg, ", 3 more needed"));
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/s3")->msg, ", 3 more needed"));
	engine_free(e);
}

/* --- cohorts: borrowing, lending, hierarchy ------------------------------------------------ */

static void test_engine_borrowing_within_limit_admits_beyond_waits(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){
			  .name = "a", .cohort = "co", .fl = { FQB("default", U(4), U(2)) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(4)) } });
	lq(e, "lq-a", "a");
	add_wl(e, &(struct wldef){ "six", "lq-a", .time = 1, .count = 6, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "one", "lq-a", .time = 2, .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/six"));
	assert_false(admitted(e, "ns/one"));
	struct eng_cq_usage u;
	assert_int_equal(engine_cq_usage(e, "a", "default", "cpu", &u), 0);
	assert_int_equal(u.total, U(6));
	assert_int_equal(u.borrowed, U(2));
	assert_int_equal(cohort_usage(e, "co", "default", "cpu"), U(6));
	const struct dec *d = find(&r, ENG_PENDING, "ns/one");
	assert_non_null(d);
	assert_non_null(
		strstr(d->msg,
		       "insufficient unused quota for cpu in flavor default, 1 more needed"));
	/* 7 can never fit: nominal 4 + borrowingLimit 2. */
	add_wl(e, &(struct wldef){ "seven", "lq-a", .time = 3, .count = 7, .per_pod = { U(1) } });
	cycle(e, &r);
	d = find(&r, ENG_PENDING, "ns/seven");
	assert_non_null(d);
	assert_non_null(strstr(d->msg, "> maximum capacity (6)"));
	engine_free(e);
}

static void test_engine_no_cohort_borrowing_limit_einval(void **state)
{
	struct engine *e = new_engine();
	assert_int_equal(try_put_cq(e, &(struct cqdef){ .name = "a",
							.fl = { FQB("default", U(4), U(2)) } }),
			 -EINVAL);
	assert_int_equal(try_put_cq(e, &(struct cqdef){ .name = "a",
							.fl = { FQL("default", U(4), U(2)) } }),
			 -EINVAL);
	/* lendingLimit above nominalQuota */
	assert_int_equal(try_put_cq(e, &(struct cqdef){ .name = "a",
							.cohort = "co",
							.fl = { FQL("default", U(4), U(5)) } }),
			 -EINVAL);
	/* borrowWithinCohort needs reclaimWithinCohort */
	assert_int_equal(
		try_put_cq(e,
			   &(struct cqdef){
				   .name = "a",
				   .fl = { FQ("default", U(4)) },
				   .preemption = { .borrow_within_cohort =
							   ENG_BORROW_WITHIN_LOWER_PRIORITY } }),
		-EINVAL);
	/* preference needs both TryNextFlavor */
	assert_int_equal(try_put_cq(e, &(struct cqdef){ .name = "a",
							.fl = { FQ("default", U(4)) },
							.prefer_preemption = 1 }),
			 -EINVAL);
	/* duplicate flavor */
	assert_int_equal(try_put_cq(e, &(struct cqdef){ .name = "a",
							.fl = { FQ("default", U(4)),
								FQ("default", U(2)) } }),
			 -EINVAL);
	/* a cohort's limits need a parent */
	struct fq lim[] = { FQB("default", U(4), U(1)), { 0 } };
	assert_int_equal(try_put_cohort(e, "root", NULL, lim), -EINVAL);
	assert_int_equal(try_put_cohort(e, "child", "root", lim), 0);
	engine_free(e);
}

static void test_engine_lending_limit_holds_back_quota(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	/* a lends at most 4 of its 10. */
	put_cq(e, &(struct cqdef){
			  .name = "a", .cohort = "co", .fl = { FQL("default", U(10), U(4)) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", 0) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	add_wl(e, &(struct wldef){ "b5", "lq-b", .time = 1, .count = 5, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "b4", "lq-b", .time = 2, .count = 4, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_false(admitted(e, "ns/b5"));
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/b5")->msg, "maximum capacity (4)"));
	assert_true(admitted(e, "ns/b4"));
	/* a keeps 6 for itself whatever b does. */
	add_wl(e, &(struct wldef){ "a6", "lq-a", .time = 3, .count = 6, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "a1", "lq-a", .time = 4, .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/a6"));
	assert_false(admitted(e, "ns/a1"));
	assert_int_equal(cq_usage(e, "b", "default", "cpu"), U(4));
	assert_int_equal(cohort_usage(e, "co", "default", "cpu"), U(4));
	engine_free(e);
}

static void test_engine_cohort_nominal_quota_is_shared_pool(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct fq pool[] = { FQ("default", U(10)), { 0 } };
	put_cohort(e, "root", NULL, pool);
	put_cohort(e, "team", "root", NULL);
	put_cq(e, &(struct cqdef){ .name = "a", .cohort = "team", .fl = { FQ("default", U(2)) } });
	lq(e, "lq-a", "a");
	add_wl(e, &(struct wldef){ "w8", "lq-a", .time = 1, .count = 8, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w5", "lq-a", .time = 2, .count = 5, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/w8")); /* 2 own + 6 from root's pool through team */
	assert_false(admitted(e, "ns/w5")); /* 12 in all */
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/w5")->msg, "1 more needed"));
	assert_int_equal(cohort_usage(e, "team", "default", "cpu"), U(8));
	assert_int_equal(cohort_usage(e, "root", "default", "cpu"), U(8));
	engine_free(e);
}

static void test_engine_cohort_borrowing_limit_caps_subtree(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct fq pool[] = { FQ("default", U(10)), { 0 } };
	struct fq team[] = { FQB("default", 0, U(3)), { 0 } };
	put_cohort(e, "root", NULL, pool);
	put_cohort(e, "team", "root", team);
	put_cq(e, &(struct cqdef){ .name = "a", .cohort = "team", .fl = { FQ("default", U(2)) } });
	lq(e, "lq-a", "a");
	add_wl(e, &(struct wldef){ "w6", "lq-a", .time = 1, .count = 6, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w5", "lq-a", .time = 2, .count = 5, .per_pod = { U(1) } });
	cycle(e, &r);
	/* team may take 3 beyond its own 2: 5 at most. */
	assert_false(admitted(e, "ns/w6"));
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/w6")->msg, "maximum capacity (5)"));
	assert_true(admitted(e, "ns/w5"));
	struct eng_cq_usage u;
	assert_int_equal(engine_cohort_usage(e, "team", "default", "cpu", &u), 0);
	assert_int_equal(u.total, U(5));
	assert_int_equal(u.borrowed, U(3));
	engine_free(e);
}

static void test_engine_cohort_lending_limit_keeps_quota_for_subtree(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct fq team[] = { FQL("default", U(4), U(1)), { 0 } };
	put_cohort(e, "root", NULL, NULL);
	put_cohort(e, "team", "root", team);
	put_cohort(e, "other", "root", NULL);
	put_cq(e, &(struct cqdef){ .name = "a", .cohort = "team", .fl = { FQ("default", 0) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "other", .fl = { FQ("default", 0) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	add_wl(e, &(struct wldef){ "b2", "lq-b", .time = 1, .count = 2, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "b1", "lq-b", .time = 2, .count = 1, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "a3", "lq-a", .time = 3, .count = 3, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_false(admitted(e, "ns/b2")); /* team lends only 1 */
	assert_true(admitted(e, "ns/b1"));
	assert_true(admitted(e, "ns/a3")); /* team's own 3 stay for a */
	assert_int_equal(cohort_usage(e, "root", "default", "cpu"), U(1));
	engine_free(e);
}

static void test_engine_many_admissions_in_one_cycle_never_exceed_cohort_pool(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	char name[32], q[32];
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "cq-%d", i);
		snprintf(q, sizeof(q), "lq-%d", i);
		put_cq(e, &(struct cqdef){
				  .name = name, .cohort = "co", .fl = { FQ("default", U(2)) } });
		lq(e, q, name);
		for (int k = 0; k < 10; k++) {
			char wl[32];
			snprintf(wl, sizeof(wl), "w-%d-%d", i, k);
			add_wl(e, &(struct wldef){ wl, q, .time = k, .count = 1,
						   .per_pod = { U(1) } });
		}
	}
	assert_int_equal(cycle(e, &r), 6);
	assert_int_equal(cohort_usage(e, "co", "default", "cpu"), U(6));
	int64_t sum = 0;
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "cq-%d", i);
		sum += cq_usage(e, name, "default", "cpu");
	}
	assert_int_equal(sum, U(6));
	assert_int_equal(cycle(e, &r), 0);
	engine_free(e);
}

/* --- flavors and fungibility --------------------------------------------------------------- */

static void test_engine_flavor_fallback_in_order(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_flavor(e, "small");
	put_flavor(e, "large");
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("small", U(2)), FQ("large", U(4)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "w3", "lq", .time = 1, .count = 3, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w2", "lq", .time = 2, .count = 2, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w1", "lq", .time = 3, .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_ADMIT, "ns/w3")->flavor, "large");
	assert_string_equal(find(&r, ENG_ADMIT, "ns/w2")->flavor, "small");
	assert_string_equal(find(&r, ENG_ADMIT, "ns/w1")->flavor, "large");
	engine_free(e);
}

static void test_engine_flavor_node_selector_and_taints_skip_flavor(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct quota_kv spot_label = { "kind", "spot" }, od_label = { "kind", "on-demand" };
	struct quota_taint taint = { "spot", "true", "NoSchedule", 0 };
	struct quota_flavor spot = { .name = "spot",
				     .n_labels = 1,
				     .labels = &spot_label,
				     .n_taints = 1,
				     .taints = &taint };
	struct quota_flavor od = { .name = "on-demand", .n_labels = 1, .labels = &od_label };
	assert_int_equal(engine_set_flavor(e, &spot), 0);
	assert_int_equal(engine_set_flavor(e, &od), 0);
	put_cq(e,
	       &(struct cqdef){ .name = "cq", .fl = { FQ("spot", U(4)), FQ("on-demand", U(4)) } });
	lq(e, "lq", "cq");
	/* No toleration: spot is skipped. */
	add_wl(e, &(struct wldef){ "plain", "lq", .time = 1, .count = 1, .per_pod = { U(1) } });
	/* Tolerates spot: first flavor. */
	struct quota_taint tol = { "spot", NULL, NULL, 1 };
	add_wl(e, &(struct wldef){ "tolerant", "lq", .time = 2, .count = 1, .per_pod = { U(1) },
				   .tolerations = &tol, .n_tolerations = 1 });
	/* Tolerates spot but selects on-demand. */
	struct quota_kv sel = { "kind", "on-demand" };
	add_wl(e, &(struct wldef){ "picky", "lq", .time = 3, .count = 1, .per_pod = { U(1) },
				   .selector = &sel, .n_selector = 1, .tolerations = &tol,
				   .n_tolerations = 1 });
	/* Selects a kind no flavor has. */
	struct quota_kv none = { "kind", "gpu" };
	add_wl(e, &(struct wldef){ "lost", "lq", .time = 4, .count = 1, .per_pod = { U(1) },
				   .selector = &none, .n_selector = 1 });
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_ADMIT, "ns/plain")->flavor, "on-demand");
	assert_string_equal(find(&r, ENG_ADMIT, "ns/tolerant")->flavor, "spot");
	assert_string_equal(find(&r, ENG_ADMIT, "ns/picky")->flavor, "on-demand");
	const struct dec *d = find(&r, ENG_PENDING, "ns/lost");
	assert_non_null(d);
	assert_string_equal(
		d->msg,
		"couldn't assign flavors to pod set main: flavor on-demand doesn't match "
		"node affinity, untolerated taint {spot true NoSchedule <nil>} in flavor spot");
	engine_free(e);
}

/* x has flavors f1 (2) and f2 (4); y lends 10 of f1 in the cohort. */
static struct engine *fungibility_engine(enum eng_when_can_borrow when)
{
	struct engine *e = new_engine();
	put_flavor(e, "f1");
	put_flavor(e, "f2");
	put_cq(e, &(struct cqdef){ .name = "x",
				   .cohort = "co",
				   .fl = { FQ("f1", U(2)), FQ("f2", U(4)) },
				   .when_can_borrow = when });
	put_cq(e, &(struct cqdef){ .name = "y", .cohort = "co", .fl = { FQ("f1", U(10)) } });
	lq(e, "lq-x", "x");
	add_wl(e, &(struct wldef){ "w3", "lq-x", .count = 3, .per_pod = { U(1) } });
	return e;
}

static void test_engine_fungibility_may_stop_search_borrows_in_first_flavor(void **state)
{
	struct engine *e = fungibility_engine(ENG_BORROW_MAY_STOP_SEARCH);
	struct rec r = { 0 };
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_ADMIT, "ns/w3")->flavor, "f1");
	struct eng_cq_usage u;
	assert_int_equal(engine_cq_usage(e, "x", "f1", "cpu", &u), 0);
	assert_int_equal(u.borrowed, U(1));
	engine_free(e);
}

static void test_engine_fungibility_try_next_flavor_avoids_borrowing(void **state)
{
	struct engine *e = fungibility_engine(ENG_BORROW_TRY_NEXT_FLAVOR);
	struct rec r = { 0 };
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_ADMIT, "ns/w3")->flavor, "f2");
	engine_free(e);
}

/* f1 full of a low-priority workload, f2 free: preempt in f1 or move on to f2. */
static void fungibility_preempt(enum eng_when_can_preempt when, int expect_preempt)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_flavor(e, "f1");
	put_flavor(e, "f2");
	put_cq(e,
	       &(struct cqdef){ .name = "cq",
				.fl = { FQ("f1", U(4)), FQ("f2", U(4)) },
				.preemption = { .within_cluster_queue = ENG_WITHIN_LOWER_PRIORITY },
				.when_can_preempt = when });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "low", "lq", .priority = 0, .count = 4, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_ADMIT, "ns/low")->flavor, "f1");
	add_wl(e, &(struct wldef){ "high", "lq", .priority = 10, .time = 1, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	if (expect_preempt) {
		const struct dec *d = find(&r, ENG_PREEMPT, "ns/low");
		assert_non_null(d);
		assert_string_equal(d->preemptor, "ns/high");
		assert_false(admitted(e, "ns/high"));
	} else {
		assert_null(find(&r, ENG_PREEMPT, "ns/low"));
		assert_string_equal(find(&r, ENG_ADMIT, "ns/high")->flavor, "f2");
	}
	engine_free(e);
}

static void test_engine_fungibility_when_can_preempt_try_next_takes_free_flavor(void **state)
{
	fungibility_preempt(ENG_PREEMPT_TRY_NEXT_FLAVOR, 0);
}

static void test_engine_fungibility_when_can_preempt_may_stop_preempts(void **state)
{
	fungibility_preempt(ENG_PREEMPT_MAY_STOP_SEARCH, 1);
}

static void test_engine_fungibility_preference_orders_borrowing_and_preemption(void **state)
{
	/* f1: preempting would make room without borrowing; f2: fits by borrowing. */
	for (int prefer_preemption = 0; prefer_preemption < 2; prefer_preemption++) {
		struct engine *e = new_engine();
		struct rec r = { 0 };
		put_flavor(e, "f1");
		put_flavor(e, "f2");
		put_cq(e, &(struct cqdef){ .name = "x",
					   .cohort = "co",
					   .fl = { FQ("f1", U(4)), FQ("f2", 0) },
					   .preemption = { .within_cluster_queue =
								   ENG_WITHIN_LOWER_PRIORITY },
					   .when_can_borrow = ENG_BORROW_TRY_NEXT_FLAVOR,
					   .when_can_preempt = ENG_PREEMPT_TRY_NEXT_FLAVOR,
					   .prefer_preemption = prefer_preemption });
		put_cq(e, &(struct cqdef){ .name = "y",
					   .cohort = "co",
					   .fl = { FQ("f1", 0), FQ("f2", U(8)) } });
		lq(e, "lq", "x");
		add_wl(e, &(struct wldef){ "low", "lq", .priority = 0, .count = 4,
					   .per_pod = { U(1) } });
		cycle(e, &r);
		assert_string_equal(find(&r, ENG_ADMIT, "ns/low")->flavor, "f1");
		add_wl(e, &(struct wldef){ "high", "lq", .priority = 9, .time = 1, .count = 4,
					   .per_pod = { U(1) } });
		cycle(e, &r);
		if (prefer_preemption) {
			assert_non_null(find(&r, ENG_PREEMPT, "ns/low"));
		} else {
			assert_null(find(&r, ENG_PREEMPT, "ns/low"));
			assert_string_equal(find(&r, ENG_ADMIT, "ns/high")->flavor, "f2");
		}
		engine_free(e);
	}
}

/* --- queueing ------------------------------------------------------------------------------ */

static void queueing(enum eng_queueing q, int expect_small_admitted)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) }, .queueing = q });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "running", "lq", .time = 0, .count = 3, .per_pod = { U(1) } });
	cycle(e, &r);
	add_wl(e, &(struct wldef){ "head", "lq", .time = 1, .count = 2, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "small", "lq", .time = 2, .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_false(admitted(e, "ns/head"));
	assert_int_equal(admitted(e, "ns/small"), expect_small_admitted);
	/* When running finishes, the head goes first either way. */
	engine_remove_workload(e, "ns/running");
	settle(e, &r);
	assert_true(admitted(e, "ns/head"));
	assert_true(admitted(e, "ns/small"));
	engine_free(e);
}

static void test_engine_strict_fifo_head_blocks_queue(void **state)
{
	queueing(ENG_STRICT_FIFO, 0);
}

static void test_engine_best_effort_fifo_skips_head_that_doesnt_fit(void **state)
{
	queueing(ENG_BEST_EFFORT_FIFO, 1);
}

static void test_engine_queue_order_priority_then_age(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(2)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "old-low", "lq", .priority = 0, .time = 1, .count = 1,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "new-high", "lq", .priority = 5, .time = 3, .count = 1,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "old-high", "lq", .priority = 5, .time = 2, .count = 1,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/old-high"));
	assert_true(admitted(e, "ns/new-high"));
	assert_false(admitted(e, "ns/old-low"));
	assert_string_equal(r.d[0].wl, "ns/old-high");
	engine_free(e);
}

/* Equal priority and queue time (whole seconds: a burst of Jobs): first seen, first admitted,
 * whatever the names; a Workload updated while pending keeps its place. */
static void test_engine_queue_order_ties_by_arrival(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(2)) } });
	lq(e, "lq", "cq");
	const char *names[] = { "zeta", "alpha", "mid", "beta" };
	for (int i = 0; i < 4; i++)
		add_wl(e, &(struct wldef){ names[i], "lq", .time = 7, .count = 1,
					   .per_pod = { U(1) } });
	/* zeta again (a status change): still first. */
	add_wl(e, &(struct wldef){ "zeta", "lq", .time = 7, .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/zeta"));
	assert_true(admitted(e, "ns/alpha"));
	assert_false(admitted(e, "ns/mid"));
	assert_false(admitted(e, "ns/beta"));
	engine_remove_workload(e, "ns/zeta");
	settle(e, &r);
	assert_true(admitted(e, "ns/mid"));
	assert_false(admitted(e, "ns/beta"));
	engine_free(e);
}

static void test_engine_cycle_order_non_borrowing_before_priority(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "a", .cohort = "co", .fl = { FQ("default", 0) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(4)) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	add_wl(e, &(struct wldef){ "a-high", "lq-a", .priority = 100, .time = 1, .count = 4,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "b-low", "lq-b", .priority = 0, .time = 2, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/b-low")); /* fits without borrowing: first */
	assert_false(admitted(e, "ns/a-high"));
	engine_free(e);
}

static void test_engine_cycle_order_borrowers_by_priority_then_age(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "a", .cohort = "co", .fl = { FQ("default", U(2)) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(2)) } });
	put_cq(e, &(struct cqdef){ .name = "c", .cohort = "co", .fl = { FQ("default", U(2)) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	lq(e, "lq-c", "c");
	/* Each needs 4 (borrows 2); the pool of 6 holds one. */
	add_wl(e, &(struct wldef){ "a", "lq-a", .priority = 1, .time = 1, .count = 4,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "b", "lq-b", .priority = 5, .time = 3, .count = 4,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "c", "lq-c", .priority = 5, .time = 2, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/c")); /* highest priority, older */
	assert_false(admitted(e, "ns/b"));
	assert_false(admitted(e, "ns/a"));
	engine_free(e);
}

static void test_engine_strict_fifo_namespace_mismatch_head_doesnt_block(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct quota_kv team_b = { "team", "b" };
	assert_int_equal(engine_set_namespace(e, "scratch", 1, &team_b), 0);
	struct quota_kv want = { "team", "a" };
	struct label_selector sel = { 1, &want, 0, NULL };
	put_cq(e, &(struct cqdef){ .name = "cq",
				   .fl = { FQ("default", U(4)) },
				   .selector = &sel,
				   .queueing = ENG_STRICT_FIFO });
	lq(e, "lq", "cq");
	assert_int_equal(engine_set_local_queue(e, "scratch", "lq", "cq", ENG_STOP_NONE), 0);
	add_wl(e, &(struct wldef){ "stray", "lq", .time = 1, .count = 1, .per_pod = { U(1) },
				   .ns = "scratch" });
	add_wl(e, &(struct wldef){ "nightly", "lq", .time = 2, .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	/* Kueue sets such a head aside (kueue#301): it doesn't block the queue. */
	assert_false(admitted(e, "scratch/stray"));
	assert_string_equal(find(&r, ENG_PENDING, "scratch/stray")->reason, "Misconfigured");
	assert_true(admitted(e, "ns/nightly"));
	engine_free(e);
}

/* --- preemption ---------------------------------------------------------------------------- */

static struct engine *within_engine(enum eng_within_cq policy)
{
	struct engine *e = new_engine();
	put_cq(e, &(struct cqdef){ .name = "cq",
				   .fl = { FQ("default", U(4)) },
				   .preemption = { .within_cluster_queue = policy } });
	lq(e, "lq", "cq");
	return e;
}

static void test_engine_preempt_lower_priority_within_cluster_queue(void **state)
{
	struct engine *e = within_engine(ENG_WITHIN_LOWER_PRIORITY);
	struct rec r = { 0 };
	add_wl(e, &(struct wldef){ "low", "lq", .priority = 0, .time = 1, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	add_wl(e, &(struct wldef){ "same", "lq", .priority = 0, .time = 0, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_null(find(&r, ENG_PREEMPT, "ns/low")); /* equal priority: no */
	add_wl(e, &(struct wldef){ "high", "lq", .priority = 10, .time = 2, .count = 4,
				   .per_pod = { U(1) } });
	assert_int_equal(cycle(e, &r), 1);
	const struct dec *d = find(&r, ENG_PREEMPT, "ns/low");
	assert_non_null(d);
	assert_string_equal(d->preemptor, "ns/high");
	assert_string_equal(d->reason, "InClusterQueue");
	assert_non_null(strstr(d->msg, "prioritization in the ClusterQueue"));
	d = find(&r, ENG_PENDING, "ns/high");
	assert_non_null(d);
	assert_non_null(strstr(d->msg, ". Pending the preemption of 1 workload(s)"));
	/* The victim keeps its quota until evicted; nothing more happens meanwhile. */
	assert_true(admitted(e, "ns/low"));
	assert_int_equal(cq_usage(e, "cq", "default", "cpu"), U(4));
	assert_int_equal(cycle(e, &r), 0);
	assert_int_equal(engine_evict(e, "ns/low"), 0);
	assert_int_equal(cycle(e, &r), 1);
	assert_true(admitted(e, "ns/high"));
	assert_false(admitted(e, "ns/low"));
	engine_free(e);
}

static void test_engine_preempt_lower_or_newer_equal_priority(void **state)
{
	struct engine *e = within_engine(ENG_WITHIN_LOWER_OR_NEWER_EQUAL);
	struct rec r = { 0 };
	add_wl(e, &(struct wldef){ "newer", "lq", .priority = 5, .time = 10, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	/* Same priority, but created later than the running one: no. */
	add_wl(e, &(struct wldef){ "newest", "lq", .priority = 5, .time = 20, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_null(find(&r, ENG_PREEMPT, "ns/newer"));
	/* Same priority and older: yes. */
	add_wl(e, &(struct wldef){ "older", "lq", .priority = 5, .time = 5, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	const struct dec *d = find(&r, ENG_PREEMPT, "ns/newer");
	assert_non_null(d);
	assert_string_equal(d->preemptor, "ns/older");
	engine_free(e);
}

static void test_engine_preempt_never_leaves_workload_pending(void **state)
{
	struct engine *e = within_engine(ENG_WITHIN_NEVER);
	struct rec r = { 0 };
	add_wl(e, &(struct wldef){ "low", "lq", .priority = 0, .count = 4, .per_pod = { U(1) } });
	cycle(e, &r);
	add_wl(e, &(struct wldef){ "high", "lq", .priority = 10, .time = 1, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 0);
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/high")->msg, "4 more needed"));
	engine_free(e);
}

static void test_engine_preempt_most_recently_admitted_first(void **state)
{
	struct engine *e = within_engine(ENG_WITHIN_LOWER_PRIORITY);
	struct rec r = { 0 };
	/* Restored after a restart, in this order: created first but admitted last goes first. */
	add_wl(e, &(struct wldef){ "late-run", "lq", .priority = 1, .time = 6, .count = 2,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "early-run", "lq", .priority = 1, .time = 7, .count = 2,
				   .per_pod = { U(1) } });
	struct eng_assignment a = { .cluster_queue = "cq", .n_podsets = 1 };
	a.podsets[0] =
		(struct eng_podset_assignment){ "main", 2, 1, { "cpu" }, { "default" }, { U(2) } };
	a.quota_reserved_time = 10;
	assert_int_equal(engine_set_admitted(e, "ns/late-run", &a), 0);
	a.quota_reserved_time = 8;
	assert_int_equal(engine_set_admitted(e, "ns/early-run", &a), 0);
	assert_int_equal(engine_admission(e, "ns/early-run")->quota_reserved_time, 8);
	add_wl(e, &(struct wldef){ "urgent", "lq", .priority = 9, .time = 11, .count = 2,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_non_null(find(&r, ENG_PREEMPT, "ns/late-run"));
	assert_null(find(&r, ENG_PREEMPT, "ns/early-run"));
	engine_free(e);
}

static void test_engine_preempt_minimal_victim_set(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){
			  .name = "cq",
			  .fl = { FQ("default", U(10)) },
			  .preemption = { .within_cluster_queue = ENG_WITHIN_LOWER_PRIORITY } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "v1", "lq", .priority = 1, .time = 1, .count = 1,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "v2", "lq", .priority = 2, .time = 2, .count = 4,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "v3", "lq", .priority = 3, .time = 3, .count = 5,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_int_equal(cq_usage(e, "cq", "default", "cpu"), U(10));
	/* Greedy: v1 (lowest) then v2 make room; adding v1 back still fits, so only v2 goes. */
	add_wl(e, &(struct wldef){ "p", "lq", .priority = 10, .time = 4, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 1);
	assert_non_null(find(&r, ENG_PREEMPT, "ns/v2"));
	engine_free(e);
}

/* a and b share a cohort of 8; b borrows 2 from a. */
static struct engine *reclaim_engine(enum eng_reclaim reclaim, int32_t b_priority)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "a",
				   .cohort = "co",
				   .fl = { FQ("default", U(4)) },
				   .preemption = { .reclaim_within_cohort = reclaim } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(4)) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	add_wl(e, &(struct wldef){ "b6", "lq-b", .priority = b_priority, .count = 6,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "a2", "lq-a", .priority = 1, .time = 1, .count = 2,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/b6"));
	assert_true(admitted(e, "ns/a2"));
	add_wl(e, &(struct wldef){ "a-more", "lq-a", .priority = 5, .time = 2, .count = 2,
				   .per_pod = { U(1) } });
	return e;
}

static void test_engine_reclaim_lower_priority_preempts_borrower(void **state)
{
	struct engine *e = reclaim_engine(ENG_RECLAIM_LOWER_PRIORITY, 0);
	struct rec r = { 0 };
	cycle(e, &r);
	const struct dec *d = find(&r, ENG_PREEMPT, "ns/b6");
	assert_non_null(d);
	assert_string_equal(d->reason, "InCohortReclamation");
	assert_string_equal(d->preemptor, "ns/a-more");
	assert_non_null(strstr(d->msg, "preemptor path: /co/a; preemptee path: /co/b"));
	engine_free(e);
}

static void test_engine_reclaim_lower_priority_spares_higher_priority(void **state)
{
	struct engine *e = reclaim_engine(ENG_RECLAIM_LOWER_PRIORITY, 9);
	struct rec r = { 0 };
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 0);
	engine_free(e);
}

static void test_engine_reclaim_any_preempts_higher_priority_borrower(void **state)
{
	struct engine *e = reclaim_engine(ENG_RECLAIM_ANY, 9);
	struct rec r = { 0 };
	cycle(e, &r);
	assert_non_null(find(&r, ENG_PREEMPT, "ns/b6"));
	engine_free(e);
}

static void test_engine_reclaim_never_waits(void **state)
{
	struct engine *e = reclaim_engine(ENG_RECLAIM_NEVER, 0);
	struct rec r = { 0 };
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 0);
	assert_false(admitted(e, "ns/a-more"));
	engine_free(e);
}

static void test_engine_reclaim_before_lower_priority_in_own_queue(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){
			  .name = "a",
			  .cohort = "co",
			  .fl = { FQ("default", U(4)) },
			  .preemption = { .within_cluster_queue = ENG_WITHIN_LOWER_PRIORITY,
					  .reclaim_within_cohort = ENG_RECLAIM_LOWER_PRIORITY } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(4)) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	add_wl(e,
	       &(struct wldef){ "a-low", "lq-a", .priority = 0, .count = 2, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "b-borrow", "lq-b", .priority = 5, .count = 6,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	add_wl(e, &(struct wldef){ "a-high", "lq-a", .priority = 10, .time = 1, .count = 2,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	/* a's lower-priority workload stays: b gives back what it borrowed first. */
	assert_non_null(find(&r, ENG_PREEMPT, "ns/b-borrow"));
	assert_null(find(&r, ENG_PREEMPT, "ns/a-low"));
	engine_free(e);
}

/* a (4) wants 6, so it must borrow; c borrows a's 4 with a low-priority workload. */
static struct engine *borrow_within_engine(enum eng_borrow_within policy, int has_threshold,
					   int32_t threshold)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e,
	       &(struct cqdef){ .name = "a",
				.cohort = "co",
				.fl = { FQ("default", U(4)) },
				.preemption = { .reclaim_within_cohort = ENG_RECLAIM_LOWER_PRIORITY,
						.borrow_within_cohort = policy,
						.has_max_priority_threshold = has_threshold,
						.max_priority_threshold = threshold } });
	put_cq(e, &(struct cqdef){ .name = "c", .cohort = "co", .fl = { FQ("default", U(4)) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-c", "c");
	add_wl(e, &(struct wldef){ "c8", "lq-c", .priority = 1, .count = 8, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/c8"));
	add_wl(e, &(struct wldef){ "a6", "lq-a", .priority = 10, .time = 1, .count = 6,
				   .per_pod = { U(1) } });
	return e;
}

static void test_engine_borrow_within_cohort_preempts_below_threshold(void **state)
{
	struct engine *e = borrow_within_engine(ENG_BORROW_WITHIN_LOWER_PRIORITY, 1, 5);
	struct rec r = { 0 };
	cycle(e, &r);
	const struct dec *d = find(&r, ENG_PREEMPT, "ns/c8");
	assert_non_null(d);
	assert_string_equal(d->reason, "InCohortReclaimWhileBorrowing");
	engine_free(e);
}

static void test_engine_borrow_within_cohort_spares_above_threshold(void **state)
{
	struct engine *e = borrow_within_engine(ENG_BORROW_WITHIN_LOWER_PRIORITY, 1, 0);
	struct rec r = { 0 };
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 0);
	assert_false(admitted(e, "ns/a6"));
	engine_free(e);
}

static void test_engine_borrow_within_cohort_never_doesnt_preempt_to_borrow(void **state)
{
	struct engine *e = borrow_within_engine(ENG_BORROW_WITHIN_NEVER, 0, 0);
	struct rec r = { 0 };
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 0);
	assert_non_null(find(&r, ENG_PENDING, "ns/a6"));
	engine_free(e);
}

static void test_engine_preemptor_holds_freed_quota_and_preempts_once(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){
			  .name = "a",
			  .cohort = "co",
			  .fl = { FQ("default", U(4)) },
			  .preemption = { .within_cluster_queue = ENG_WITHIN_LOWER_PRIORITY } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", 0) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	add_wl(e, &(struct wldef){ "v1", "lq-a", .priority = 0, .time = 1, .count = 2,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "v2", "lq-a", .priority = 0, .time = 2, .count = 2,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	add_wl(e, &(struct wldef){ "p", "lq-a", .priority = 10, .time = 3, .count = 4,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "b2", "lq-b", .priority = 100, .time = 4, .count = 2,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_non_null(find(&r, ENG_PREEMPT, "ns/v1"));
	assert_non_null(find(&r, ENG_PREEMPT, "ns/v2"));
	assert_false(admitted(e, "ns/b2"));
	/* One victim gone: the 2 it frees stay with p, which doesn't preempt again. */
	assert_int_equal(engine_evict(e, "ns/v1"), 0);
	int preempts = count_kind(&r, ENG_PREEMPT);
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), preempts);
	assert_false(admitted(e, "ns/b2"));
	assert_false(admitted(e, "ns/p"));
	assert_int_equal(engine_evict(e, "ns/v2"), 0);
	cycle(e, &r);
	assert_true(admitted(e, "ns/p"));
	assert_false(admitted(e, "ns/b2"));
	assert_int_equal(cohort_usage(e, "co", "default", "cpu"), U(4));
	engine_free(e);
}

/* Two ClusterQueues within their nominal quota reclaim from one borrower at once. Kueue skips
 * the second preemptor while its targets overlap the first one's (scheduler.go, "overlapping
 * preemption targets"): it evicts nothing of its own and gets in on quota freed meanwhile.
 * Before, the second one took a victim of its own: two evictions where one will do. */
static void test_engine_preemptor_overlapping_targets_waits(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct eng_preemption any = { .reclaim_within_cohort = ENG_RECLAIM_ANY };
	put_cq(e, &(struct cqdef){ .name = "a",
				   .cohort = "co",
				   .fl = { FQ("default", U(4)) },
				   .preemption = any });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(4)) } });
	put_cq(e, &(struct cqdef){ .name = "c",
				   .cohort = "co",
				   .fl = { FQ("default", U(4)) },
				   .preemption = any });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	lq(e, "lq-c", "c");
	for (int i = 1; i <= 3; i++) {
		char name[8];
		snprintf(name, sizeof(name), "b%d", i);
		add_wl(e, &(struct wldef){ name, "lq-b", .priority = 0, .time = i, .count = 4,
					   .per_pod = { U(1) } });
		cycle(e, &r);
	}
	assert_int_equal(cohort_usage(e, "co", "default", "cpu"), U(12));
	add_wl(e, &(struct wldef){ "a1", "lq-a", .priority = 0, .time = 10, .count = 4,
				   .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "c1", "lq-c", .priority = 0, .time = 11, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	/* a1 reclaims b's newest; c1's targets would include it: c1 preempts nothing. */
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 1);
	const struct dec *d = find(&r, ENG_PREEMPT, "ns/b3");
	assert_non_null(d);
	assert_string_equal(d->preemptor, "ns/a1");
	/* Meanwhile b2 finishes; b3's eviction lands: both get in, nothing more is evicted. */
	engine_remove_workload(e, "ns/b2");
	assert_int_equal(engine_evict(e, "ns/b3"), 0);
	cycle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 1);
	assert_true(admitted(e, "ns/a1"));
	assert_true(admitted(e, "ns/c1"));
	engine_free(e);
}

/* A victim already going (here drained: no preemptor claims it) comes first in the order, as
 * Kueue's evicted ones do; when it frees too little the search goes on in the order of the
 * rest, which it sorts only then (engine_preempt.c, evicting_first): a1 takes the drained b1
 * and b's newest, b3, where the order without the evicting one first would take b3 and b2. */
static void test_engine_preemption_takes_evicting_first_then_the_rest(void **state)
{
	(void)state;
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct eng_preemption any = { .reclaim_within_cohort = ENG_RECLAIM_ANY };
	put_cq(e, &(struct cqdef){ .name = "a",
				   .cohort = "co",
				   .fl = { FQ("default", U(6)) },
				   .preemption = any });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(2)) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	lq(e, "lq-drained", "b");
	add_wl(e,
	       &(struct wldef){ "b1", "lq-drained", .time = 1, .count = 2, .per_pod = { U(1) } });
	cycle(e, &r);
	add_wl(e, &(struct wldef){ "b2", "lq-b", .time = 2, .count = 2, .per_pod = { U(1) } });
	cycle(e, &r);
	add_wl(e, &(struct wldef){ "b3", "lq-b", .time = 3, .count = 2, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_int_equal(cohort_usage(e, "co", "default", "cpu"), U(6));
	assert_int_equal(engine_set_local_queue(e, "ns", "lq-drained", "b",
						ENG_STOP_HOLD_AND_DRAIN),
			 0);
	cycle(e, &r);
	assert_non_null(find(&r, ENG_PREEMPT, "ns/b1")); /* going, still charged */
	add_wl(e, &(struct wldef){ "a1", "lq-a", .time = 10, .count = 6, .per_pod = { U(1) } });
	cycle(e, &r);
	const struct dec *d = find(&r, ENG_PREEMPT, "ns/b3");
	assert_non_null(d);
	assert_string_equal(d->preemptor, "ns/a1");
	assert_null(find(&r, ENG_PREEMPT, "ns/b2"));
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 2);
	assert_int_equal(engine_evict(e, "ns/b1"), 0);
	assert_int_equal(engine_evict(e, "ns/b3"), 0);
	cycle(e, &r);
	assert_true(admitted(e, "ns/a1"));
	assert_true(admitted(e, "ns/b2"));
	engine_free(e);
}

/* The property test's liveness bug (MUSTER_SEED=1123334822): flavor f0 is chosen because a
 * preemption simulated for memory alone finds a victim (a's memory request is within its
 * nominal quota: it reclaims from borrowing b), whenCanPreempt MayStopSearch stops the scan
 * there, and the real search, which also sees cpu borrowed in f0, finds none. f1 fits; w must
 * not wait for a preemption that never comes, nor w2 at a smaller count (minCount). */
static void test_engine_preemption_without_victims_scans_on(void **state)
{
	(void)state;
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_flavor(e, "f0");
	put_flavor(e, "f1");
	put_cq(e, &(struct cqdef){ .name = "a",
				   .cohort = "co",
				   .res = { "cpu", "memory" },
				   .fl = { { "f0",
					     { U(2), U(4), 0 },
					     { UNSET, UNSET, UNSET },
					     { UNSET, UNSET, UNSET } },
					   { "f1",
					     { U(4), U(4), 0 },
					     { UNSET, UNSET, UNSET },
					     { UNSET, UNSET, UNSET } } },
				   .preemption = { .reclaim_within_cohort = ENG_RECLAIM_ANY },
				   .when_can_borrow = ENG_BORROW_MAY_STOP_SEARCH,
				   .when_can_preempt = ENG_PREEMPT_MAY_STOP_SEARCH });
	put_cq(e, &(struct cqdef){ .name = "b",
				   .cohort = "co",
				   .res = { "cpu", "memory" },
				   .fl = { { "f0",
					     { U(4), 0, 0 },
					     { UNSET, UNSET, UNSET },
					     { UNSET, UNSET, UNSET } } } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	/* a borrows cpu in f0, b borrows all of a's memory in f0. */
	add_wl(e, &(struct wldef){ "a1", "lq-a", .time = 1, .per_pod = { U(3) } });
	settle(e, &r);
	add_wl(e, &(struct wldef){ "b1", "lq-b", .time = 2, .res = { "memory" },
				   .per_pod = { U(4) } });
	settle(e, &r);
	assert_string_equal(find(&r, ENG_ADMIT, "ns/a1")->flavor, "f0");
	assert_string_equal(find(&r, ENG_ADMIT, "ns/b1")->flavor, "f0");
	add_wl(e, &(struct wldef){ "w", "lq-a", .time = 3, .res = { "cpu", "memory" },
				   .per_pod = { U(1), U(1) } });
	settle(e, &r);
	const struct dec *d = find(&r, ENG_ADMIT, "ns/w");
	assert_non_null(d);
	assert_string_equal(d->flavor, "f1");
	/* With minCount: 4 pods exceed f0's cpu and f1's room, 3 don't fit f0 but f1. */
	add_wl(e, &(struct wldef){ "w2", "lq-a", .time = 4, .count = 4, .min_count = 1,
				   .res = { "cpu", "memory" }, .per_pod = { U(1), U(1) } });
	settle(e, &r);
	d = find(&r, ENG_ADMIT, "ns/w2");
	assert_non_null(d);
	assert_string_equal(d->flavor, "f1");
	assert_int_equal(d->count, 3);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 0);
	assert_true(admitted(e, "ns/b1"));
	engine_free(e);
}

/* --- partial admission --------------------------------------------------------------------- */

static void test_engine_partial_admission_takes_largest_count(void **state)
{
	/* Every quota between minCount and count: the largest count that fits wins. */
	for (int quota = 2; quota <= 8; quota++) {
		struct engine *e = new_engine();
		struct rec r = { 0 };
		put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(quota)) } });
		lq(e, "lq", "cq");
		add_wl(e, &(struct wldef){ "p", "lq", .count = 8, .min_count = 2,
					   .per_pod = { U(1) } });
		cycle(e, &r);
		const struct dec *d = find(&r, ENG_ADMIT, "ns/p");
		assert_non_null(d);
		assert_int_equal(d->count, quota);
		assert_int_equal(engine_admission(e, "ns/p")->podsets[0].usage[0], U(quota));
		assert_int_equal(cq_usage(e, "cq", "default", "cpu"), U(quota));
		engine_free(e);
	}
}

static void test_engine_partial_admission_below_min_count_waits(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(5)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "p", "lq", .count = 8, .min_count = 6, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_false(admitted(e, "ns/p"));
	/* The message is the full count's, as Kueue's. */
	assert_non_null(strstr(find(&r, ENG_PENDING, "ns/p")->msg, "podset request (8)"));
	/* Two podSets with minCount are invalid. */
	const char *res[] = { "cpu" };
	int64_t pp[] = { U(1) };
	struct eng_podset ps[2] = {
		{ "a", 4, 2, { .n_requests = 1, .resources = res, .per_pod = pp } },
		{ "b", 4, 2, { .n_requests = 1, .resources = res, .per_pod = pp } }
	};
	struct eng_workload_spec w = { "ns/two", "ns", "lq", 0, 0, 2, ps, NULL };
	assert_int_equal(engine_add_workload(e, &w), -EINVAL);
	engine_free(e);
}

static void test_engine_multiple_podsets_share_flavor_usage(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(5)) } });
	lq(e, "lq", "cq");
	const char *res[] = { "cpu" };
	int64_t pp[] = { U(1) };
	struct eng_podset ps[2] = {
		{ "driver", 1, 0, { .n_requests = 1, .resources = res, .per_pod = pp } },
		{ "workers", 5, 0, { .n_requests = 1, .resources = res, .per_pod = pp } }
	};
	struct eng_workload_spec w = { "ns/job", "ns", "lq", 0, 0, 2, ps, NULL };
	assert_int_equal(engine_add_workload(e, &w), 0);
	cycle(e, &r);
	assert_false(admitted(e, "ns/job")); /* 1 + 5 > 5: all or nothing */
	assert_non_null(strstr(
		find(&r, ENG_PENDING, "ns/job")->msg,
		"couldn't assign flavors to pod set workers: insufficient quota for cpu in flavor "
		"default, previously considered podsets requests (1) + current podset request (5) "
		"> maximum capacity (5)"));
	ps[1].count = 4;
	assert_int_equal(engine_add_workload(e, &w), 0);
	cycle(e, &r);
	const struct eng_assignment *a = engine_admission(e, "ns/job");
	assert_non_null(a);
	assert_int_equal(a->n_podsets, 2);
	assert_string_equal(a->podsets[1].name, "workers");
	assert_int_equal(a->podsets[1].usage[0], U(4));
	engine_free(e);
}

static void test_engine_pods_resource_counts_pods(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct fq fl = {
		"default", { U(100), 3000, 0 }, { UNSET, UNSET, UNSET }, { UNSET, UNSET, UNSET }
	};
	put_cq(e, &(struct cqdef){ .name = "cq", .res = { "cpu", "pods" }, .fl = { fl } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "w2", "lq", .time = 1, .count = 2, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w2b", "lq", .time = 2, .count = 2, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/w2"));
	assert_false(admitted(e, "ns/w2b")); /* 3 pods at most */
	assert_int_equal(cq_usage(e, "cq", "default", "pods"), 2000);
	assert_non_null(
		strstr(find(&r, ENG_PENDING, "ns/w2b")->msg, "insufficient unused quota for pods"));
	engine_free(e);
}

/* --- namespaces, stop policies, missing objects ------------------------------------------- */

static void test_engine_namespace_selector_null_none_empty_all_labels_match(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct quota_kv team_b = { "team", "b" };
	assert_int_equal(engine_set_namespace(e, "other", 1, &team_b), 0);
	struct quota_kv want = { "team", "a" };
	struct label_selector sel = { 1, &want, 0, NULL };
	put_cq(e,
	       &(struct cqdef){ .name = "none", .fl = { FQ("default", U(4)) }, .no_selector = 1 });
	put_cq(e, &(struct cqdef){ .name = "all", .fl = { FQ("default", U(4)) } });
	put_cq(e, &(struct cqdef){
			  .name = "team-a", .fl = { FQ("default", U(4)) }, .selector = &sel });
	lq(e, "lq-none", "none");
	lq(e, "lq-all", "all");
	lq(e, "lq-team", "team-a");
	assert_int_equal(engine_set_local_queue(e, "other", "lq-team", "team-a", ENG_STOP_NONE), 0);
	add_wl(e, &(struct wldef){ "w-none", "lq-none", .count = 1, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w-all", "lq-all", .count = 1, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w-team", "lq-team", .count = 1, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w-other", "lq-team", .count = 1, .per_pod = { U(1) },
				   .ns = "other" });
	cycle(e, &r);
	assert_false(admitted(e, "ns/w-none"));
	const struct dec *d = find(&r, ENG_PENDING, "ns/w-none");
	assert_string_equal(d->reason, "Misconfigured");
	assert_string_equal(d->msg, "workload namespace doesn't match ClusterQueue selector");
	assert_true(admitted(e, "ns/w-all"));
	assert_true(admitted(e, "ns/w-team"));
	assert_false(admitted(e, "other/w-other"));
	/* Relabelling the namespace is a change the engine looks at. */
	assert_int_equal(engine_set_namespace(e, "other", 1, &want), 0);
	cycle(e, &r);
	assert_true(admitted(e, "other/w-other"));
	engine_free(e);
}

static void test_engine_stop_hold_keeps_admitted_blocks_new(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "running", "lq", .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	put_cq(e, &(struct cqdef){
			  .name = "cq", .fl = { FQ("default", U(4)) }, .stop = ENG_STOP_HOLD });
	add_wl(e, &(struct wldef){ "new", "lq", .time = 1, .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/running"));
	assert_false(admitted(e, "ns/new"));
	const struct dec *d = find(&r, ENG_PENDING, "ns/new");
	assert_string_equal(d->reason, "Suspended");
	assert_string_equal(d->msg, "ClusterQueue cq is stopped");
	const char *reason, *msg;
	assert_int_equal(engine_cq_active(e, "cq", &reason, &msg), 0);
	assert_string_equal(reason, "Stopped");
	assert_string_equal(msg, "Can't admit new workloads: is stopped.");
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 0);
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/new"));
	engine_free(e);
}

static void test_engine_stop_hold_and_drain_evicts_admitted(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) } });
	lq(e, "lq", "cq");
	lq(e, "lq2", "cq");
	add_wl(e, &(struct wldef){ "w1", "lq", .count = 1, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w2", "lq2", .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	/* A LocalQueue drain evicts only its own workloads. */
	assert_int_equal(engine_set_local_queue(e, "ns", "lq2", "cq", ENG_STOP_HOLD_AND_DRAIN), 0);
	assert_int_equal(cycle(e, &r), 1);
	const struct dec *d = find(&r, ENG_PREEMPT, "ns/w2");
	assert_non_null(d);
	assert_string_equal(d->preemptor, "");
	assert_string_equal(d->reason, "LocalQueueStopped");
	assert_null(find(&r, ENG_PREEMPT, "ns/w1"));
	assert_int_equal(engine_evict(e, "ns/w2"), 0);
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_PENDING, "ns/w2")->msg, "LocalQueue lq2 is stopped");
	/* A ClusterQueue drain evicts everything admitted there, once. */
	put_cq(e, &(struct cqdef){ .name = "cq",
				   .fl = { FQ("default", U(4)) },
				   .stop = ENG_STOP_HOLD_AND_DRAIN });
	assert_int_equal(cycle(e, &r), 1);
	d = find(&r, ENG_PREEMPT, "ns/w1");
	assert_non_null(d);
	assert_string_equal(d->reason, "ClusterQueueStopped");
	assert_string_equal(d->msg, "The ClusterQueue is stopped");
	assert_int_equal(cycle(e, &r), 0);
	assert_int_equal(engine_evict(e, "ns/w1"), 0);
	cycle(e, &r);
	assert_false(admitted(e, "ns/w1"));
	assert_int_equal(cq_usage(e, "cq", "default", "cpu"), 0);
	engine_free(e);
}

static void test_engine_missing_queue_and_flavor_messages(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	add_wl(e, &(struct wldef){ "no-lq", "lq", .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	const struct dec *d = find(&r, ENG_PENDING, "ns/no-lq");
	assert_string_equal(d->reason, "Misconfigured");
	assert_string_equal(d->msg, "LocalQueue lq doesn't exist");
	lq(e, "lq", "cq");
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_PENDING, "ns/no-lq")->msg,
			    "ClusterQueue cq doesn't exist");
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("gpu", U(4)) } });
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_PENDING, "ns/no-lq")->msg,
			    "ClusterQueue cq is inactive: references missing ResourceFlavor gpu");
	const char *reason, *msg;
	assert_int_equal(engine_cq_active(e, "cq", &reason, &msg), 0);
	assert_string_equal(reason, "FlavorNotFound");
	assert_string_equal(msg,
			    "Can't admit new workloads: references missing ResourceFlavor gpu.");
	put_flavor(e, "gpu");
	cycle(e, &r);
	assert_true(admitted(e, "ns/no-lq"));
	assert_int_equal(engine_cq_active(e, "cq", &reason, &msg), 1);
	assert_string_equal(reason, "Ready");
	/* Removing the ClusterQueue keeps the charge; re-creating it counts it again. */
	engine_remove_cq(e, "cq");
	add_wl(e, &(struct wldef){ "later", "lq", .time = 5, .count = 4, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_PENDING, "ns/later")->msg,
			    "ClusterQueue cq doesn't exist");
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("gpu", U(4)) } });
	cycle(e, &r);
	assert_int_equal(cq_usage(e, "cq", "gpu", "cpu"), U(1));
	assert_false(admitted(e, "ns/later"));
	/* Without its LocalQueue a workload waits with a message to match. */
	engine_remove_local_queue(e, "ns", "lq");
	cycle(e, &r);
	assert_string_equal(find(&r, ENG_PENDING, "ns/later")->msg, "LocalQueue lq doesn't exist");
	size_t pending, adm;
	assert_int_equal(engine_cq_counts(e, "cq", &pending, &adm), 0);
	assert_int_equal(pending, 0);
	assert_int_equal(adm, 1);
	engine_free(e);
}

static void test_engine_cohort_cycle_disables_tree(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cohort(e, "a", "b", NULL);
	put_cohort(e, "b", "a", NULL);
	put_cohort(e, "leaf", "a", NULL);
	put_cq(e, &(struct cqdef){ .name = "cq", .cohort = "leaf", .fl = { FQ("default", U(4)) } });
	put_cq(e, &(struct cqdef){ .name = "free", .fl = { FQ("default", U(4)) } });
	lq(e, "lq", "cq");
	lq(e, "lq-free", "free");
	add_wl(e, &(struct wldef){ "w", "lq", .count = 1, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "w-free", "lq-free", .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_false(admitted(e, "ns/w"));
	assert_true(admitted(e, "ns/w-free"));
	const struct dec *d = find(&r, ENG_PENDING, "ns/w");
	assert_string_equal(d->reason, "Misconfigured");
	assert_non_null(strstr(d->msg, "ClusterQueue cq is inactive: cohort "));
	assert_non_null(strstr(d->msg, "is part of a cycle"));
	const char *reason, *msg;
	assert_int_equal(engine_cq_active(e, "cq", &reason, &msg), 0);
	assert_string_equal(reason, "CohortCycle");
	put_cohort(e, "b", NULL, NULL);
	cycle(e, &r);
	assert_true(admitted(e, "ns/w"));
	engine_free(e);
}

/* --- restarts and evictions --------------------------------------------------------------- */

static void test_engine_set_admitted_charges_and_evict_requeues(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "a", .cohort = "co", .fl = { FQ("default", U(2)) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(2)) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	add_wl(e, &(struct wldef){ "restored", "lq-a", .count = 3, .per_pod = { U(1) } });
	struct eng_assignment a = { .cluster_queue = "a", .n_podsets = 1 };
	a.podsets[0] =
		(struct eng_podset_assignment){ "main", 3, 1, { "cpu" }, { "default" }, { U(3) } };
	assert_int_equal(engine_set_admitted(e, "ns/restored", &a), 0);
	assert_int_equal(engine_set_admitted(e, "ns/unknown", &a), -ENOENT);
	assert_int_equal(cq_usage(e, "a", "default", "cpu"), U(3));
	assert_int_equal(cohort_usage(e, "co", "default", "cpu"), U(3));
	add_wl(e, &(struct wldef){ "b2", "lq-b", .time = 1, .count = 2, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_false(admitted(e, "ns/b2")); /* only 1 left in the cohort */
	assert_int_equal(engine_evict(e, "ns/restored"), 0);
	assert_int_equal(cohort_usage(e, "co", "default", "cpu"), 0);
	cycle(e, &r);
	assert_true(admitted(e, "ns/b2")); /* fits without borrowing: before restored */
	assert_false(admitted(e, "ns/restored")); /* 2 + 3 > 4 */
	assert_non_null(find(&r, ENG_PENDING, "ns/restored"));
	engine_free(e);
}

static void test_engine_invalid_workloads_einval(void **state)
{
	struct engine *e = new_engine();
	assert_int_equal(try_add_wl(e, &(struct wldef){ "w", NULL, .count = 1 }), -EINVAL);
	assert_int_equal(try_add_wl(e, &(struct wldef){ "w", "lq", .count = 2, .min_count = 3 }),
			 -EINVAL);
	assert_int_equal(try_add_wl(e, &(struct wldef){ "w", "lq", .count = 1, .per_pod = { -1 } }),
			 -EINVAL);
	const char *res[] = { "cpu", "cpu" };
	int64_t pp[] = { 1, 1 };
	struct eng_podset ps = {
		"main", 1, 0, { .n_requests = 2, .resources = res, .per_pod = pp }
	};
	struct eng_workload_spec w = { "ns/dup", "ns", "lq", 0, 0, 1, &ps, NULL };
	assert_int_equal(engine_add_workload(e, &w), -EINVAL);
	assert_int_equal(engine_evict(e, "ns/none"), -ENOENT);
	engine_free(e);
}

/* --- node feasibility (engine_set_placer) ------------------------------------------------- */

/* A fake placer: nodes hold `room` pods in total; each placed workload takes its count. */
struct fake_nodes {
	int64_t room;
	int calls;
	char last[64];
};

static int fake_place(void *arg, const char *workload, const struct eng_assignment *a, char *msg,
		      size_t size)
{
	struct fake_nodes *n = arg;
	n->calls++;
	snprintf(n->last, sizeof(n->last), "%s", workload);
	assert_non_null(a->cluster_queue);
	if (a->podsets[0].count > n->room) {
		snprintf(msg, size, "no node layout fits %lld pods: at most %lld fit",
			 (long long)a->podsets[0].count, (long long)n->room);
		return 1;
	}
	n->room -= a->podsets[0].count;
	return 0;
}

static void placer(enum eng_queueing q, int expect_small_admitted)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct fake_nodes nodes = { .room = 2 };
	engine_set_placer(e, fake_place, &nodes);
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(8)) }, .queueing = q });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "big", "lq", .time = 1, .count = 4, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "small", "lq", .time = 2, .count = 2, .per_pod = { U(1) } });
	cycle(e, &r);
	/* The quota fits big, the nodes don't: pending with the placer's message, uncharged. */
	assert_false(admitted(e, "ns/big"));
	const struct dec *d = find(&r, ENG_PENDING, "ns/big");
	assert_non_null(d);
	assert_string_equal(d->reason, "TopologyPlacementFailed");
	assert_string_equal(d->msg, "no node layout fits 4 pods: at most 2 fit");
	assert_int_equal(admitted(e, "ns/small"), expect_small_admitted);
	assert_int_equal(cq_usage(e, "cq", "default", "cpu"), expect_small_admitted ? U(2) : 0);
	/* Nothing changes until capacity does: no busy loop, no repeated asks. */
	int calls = nodes.calls;
	assert_int_equal(cycle(e, &r), 0);
	assert_int_equal(nodes.calls, calls);
	/* Capacity grows: big is looked at again, and admitted. */
	nodes.room = 6;
	engine_capacity_changed(e);
	settle(e, &r);
	assert_true(admitted(e, "ns/big"));
	assert_true(admitted(e, "ns/small"));
	assert_int_equal(cq_usage(e, "cq", "default", "cpu"), U(6));
	engine_free(e);
}

static void test_engine_placer_refusal_keeps_best_effort_queue_moving(void **state)
{
	placer(ENG_BEST_EFFORT_FIFO, 1);
}

static void test_engine_placer_refusal_blocks_strict_fifo_head(void **state)
{
	placer(ENG_STRICT_FIFO, 0);
}

static void test_engine_placer_capacity_change_without_refusals_is_noop(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct fake_nodes nodes = { .room = 100 };
	engine_set_placer(e, fake_place, &nodes);
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(2)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "a", "lq", .count = 2, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "b", "lq", .time = 1, .count = 2, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/a"));
	assert_int_equal(nodes.calls, 1); /* b is short of quota: the placer is never asked */
	engine_capacity_changed(e);
	assert_int_equal(cycle(e, &r), 0);
	assert_int_equal(nodes.calls, 1);
	engine_free(e);
}

/* --- pending reasons: Kueue v0.20's QuotaReserved=False tokens, one test each --------------- */

/* The last pending decision for ns/<name> has exactly this reason and message. */
static void assert_pending(const struct rec *r, const char *name, const char *reason,
			   const char *msg)
{
	char key[128];
	snprintf(key, sizeof(key), "ns/%s", name);
	const struct dec *d = find(r, ENG_PENDING, key);
	assert_non_null(d);
	assert_string_equal(d->reason, reason);
	assert_string_equal(d->msg, msg);
}

static void test_engine_reason_misconfigured_missing_cluster_queue(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	lq(e, "lq", "gone");
	add_wl(e, &(struct wldef){ "w", "lq", .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_pending(&r, "w", "Misconfigured", "ClusterQueue gone doesn't exist");
	assert_false(eng_why_waits("Misconfigured"));
	engine_free(e);
}

static void test_engine_reason_misconfigured_missing_flavor(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("h100", U(4)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "w", "lq", .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_pending(&r, "w", "Misconfigured",
		       "ClusterQueue cq is inactive: references missing ResourceFlavor h100");
	engine_free(e);
}

static void test_engine_reason_misconfigured_wins_over_suspended(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e,
	       &(struct cqdef){ .name = "cq", .fl = { FQ("h100", U(4)) }, .stop = ENG_STOP_HOLD });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "w", "lq", .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_pending(&r, "w", "Misconfigured",
		       "ClusterQueue cq is inactive: is stopped, references missing ResourceFlavor "
		       "h100");
	engine_free(e);
}

static void test_engine_reason_no_matching_flavor(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct quota_taint taint = { "spot", "true", "NoSchedule", 0 };
	struct quota_flavor spot = { .name = "spot", .n_taints = 1, .taints = &taint };
	assert_int_equal(engine_set_flavor(e, &spot), 0);
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("spot", U(4)) } });
	lq(e, "lq", "cq");
	add_wl(e, &(struct wldef){ "w", "lq", .count = 1, .per_pod = { U(1) } });
	/* A resource the ClusterQueue doesn't cover can't match any flavor either. */
	add_wl(e, &(struct wldef){ "mem", "lq", .count = 1, .res = { "memory" },
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_pending(&r, "w", "NoMatchingFlavor",
		       "couldn't assign flavors to pod set main: untolerated taint {spot true "
		       "NoSchedule <nil>} in flavor spot");
	assert_pending(&r, "mem", "NoMatchingFlavor",
		       "couldn't assign flavors to pod set main: resource memory unavailable in "
		       "ClusterQueue");
	assert_false(eng_why_waits("NoMatchingFlavor"));
	engine_free(e);
}

static void test_engine_reason_suspended_local_queue(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) } });
	assert_int_equal(engine_set_local_queue(e, "ns", "lq", "cq", ENG_STOP_HOLD), 0);
	add_wl(e, &(struct wldef){ "w", "lq", .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_pending(&r, "w", "Suspended", "LocalQueue lq is stopped");
	assert_false(eng_why_waits("Suspended"));
	engine_free(e);
}

static void test_engine_reason_exceeds_max_quota(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){
			  .name = "a", .cohort = "co", .fl = { FQB("default", U(4), U(2)) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(10)) } });
	lq(e, "lq", "a");
	/* 4 nominal + 2 borrowable: 7 can never fit, whatever the cohort has free. */
	add_wl(e, &(struct wldef){ "w", "lq", .count = 7, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_pending(&r, "w", "ExceedsMaxQuota",
		       "couldn't assign flavors to pod set main: insufficient quota for cpu in "
		       "flavor default, previously considered podsets requests (0) + current "
		       "podset "
		       "request (7) > maximum capacity (6)");
	assert_false(eng_why_waits("ExceedsMaxQuota"));
	engine_free(e);
}

static void test_engine_reason_borrowing_limit_reached(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){
			  .name = "a", .cohort = "co", .fl = { FQB("default", U(4), U(2)) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(10)) } });
	lq(e, "lq", "a");
	add_wl(e, &(struct wldef){ "big", "lq", .time = 1, .count = 6, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_true(admitted(e, "ns/big"));
	/* b has 8 unused, but a already borrows all it may. */
	add_wl(e, &(struct wldef){ "w", "lq", .time = 2, .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_pending(&r, "w", "BorrowingLimitReached",
		       "couldn't assign flavors to pod set main: insufficient unused quota for cpu "
		       "in flavor default, 1 more needed");
	assert_true(eng_why_waits("BorrowingLimitReached"));
	engine_free(e);
}

static void test_engine_reason_waiting_for_quota(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	put_cq(e, &(struct cqdef){
			  .name = "a", .cohort = "co", .fl = { FQB("default", U(4), U(2)) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(1)) } });
	lq(e, "lq", "a");
	lq(e, "lq-b", "b");
	add_wl(e, &(struct wldef){ "b1", "lq-b", .time = 1, .count = 1, .per_pod = { U(1) } });
	add_wl(e, &(struct wldef){ "a1", "lq", .time = 2, .count = 4, .per_pod = { U(1) } });
	cycle(e, &r);
	/* The cohort has nothing unused: a plain wait, though a borrowing limit is set too. */
	add_wl(e, &(struct wldef){ "w", "lq", .time = 3, .count = 1, .per_pod = { U(1) } });
	cycle(e, &r);
	assert_pending(&r, "w", "WaitingForQuota",
		       "couldn't assign flavors to pod set main: insufficient unused quota for cpu "
		       "in flavor default, 1 more needed");
	assert_true(eng_why_waits("WaitingForQuota"));
	engine_free(e);
}

static void test_engine_reason_waiting_for_preempted_workloads(void **state)
{
	struct engine *e = within_engine(ENG_WITHIN_LOWER_PRIORITY);
	struct rec r = { 0 };
	add_wl(e, &(struct wldef){ "low", "lq", .priority = 0, .time = 1, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	add_wl(e, &(struct wldef){ "high", "lq", .priority = 10, .time = 2, .count = 4,
				   .per_pod = { U(1) } });
	cycle(e, &r);
	assert_pending(&r, "high", "WaitingForPreemptedWorkloads",
		       "couldn't assign flavors to pod set main: insufficient unused quota for cpu "
		       "in flavor default, 4 more needed. Pending the preemption of 1 workload(s)");
	assert_true(eng_why_waits("WaitingForPreemptedWorkloads"));
	engine_free(e);
}

/* --- fair sharing ---------------------------------------------------------------------------- */

static void fair_on(struct engine *e, size_t n, enum eng_fs_strategy s0, enum eng_fs_strategy s1)
{
	struct eng_fair_sharing fs = { 1, n, { s0, s1 } };
	assert_int_equal(engine_set_fair_sharing(e, &fs), 0);
}

/* n one-cpu workloads "<prefix>-<i>" in LocalQueue queue, queue-order times from t0 up. */
static void add_many(struct engine *e, const char *prefix, const char *queue, int n, int64_t t0,
		     int64_t step)
{
	for (int i = 1; i <= n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		add_wl(e,
		       &(struct wldef){ name, queue, .time = t0 + i * step, .per_pod = { U(1) } });
	}
}

static int count_admitted_in(const struct rec *r, const char *cq)
{
	int n = 0;
	for (int i = 0; i < r->n; i++)
		n += r->d[i].kind == ENG_ADMIT && !strcmp(r->d[i].cq, cq);
	return n;
}

/* engine_check can fail: a heap out of order, and a negative usage, are found and named. */
static void test_engine_check_finds_broken_invariants(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	char msg[256];
	put_cq(e, &(struct cqdef){ .name = "a", .fl = { FQ("default", U(2)) } });
	lq(e, "lq-a", "a");
	add_many(e, "w", "lq-a", 4, 0, 1);
	assert_int_equal(engine_check(e, msg, sizeof(msg)), 0);
	struct ecq *q = strmap_get(&e->cqs, "a");
	assert_non_null(q);
	assert_int_equal(q->heap.n, 4);
	/* The head and the last entry trade places, positions and keys kept right. */
	uint32_t last = q->heap.n - 1;
	struct ewl *head = q->heap.v[0], *tail = q->heap.v[last];
	struct wkey head_key = q->heap.k[0];
	q->heap.v[0] = tail, q->heap.k[0] = q->heap.k[last], tail->pos = 0;
	q->heap.v[last] = head, q->heap.k[last] = head_key, head->pos = last;
	assert_int_not_equal(engine_check(e, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "out of place or order"));
	q->heap.v[last] = tail, q->heap.k[last] = q->heap.k[0], tail->pos = last;
	q->heap.v[0] = head, q->heap.k[0] = head_key, head->pos = 0;
	assert_int_equal(engine_check(e, msg, sizeof(msg)), 0);

	settle(e, &r);
	assert_int_equal(count_admitted_in(&r, "a"), 2);
	int64_t usage = q->node.slots[0].usage;
	q->node.slots[0].usage = -1;
	assert_int_not_equal(engine_check(e, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "uses -1"));
	q->node.slots[0].usage = usage;
	assert_int_equal(engine_check(e, msg, sizeof(msg)), 0);
	engine_free(e);
}

static void test_fair_share_is_borrowing_over_lendable(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	struct eng_share sh;
	put_cq(e, &(struct cqdef){ .name = "a", .cohort = "co", .fl = { FQ("default", U(4)) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(4)) } });
	put_cq(e, &(struct cqdef){ .name = "lone", .fl = { FQ("default", U(4)) } });
	lq(e, "lq-a", "a");
	add_wl(e, &(struct wldef){ "w", "lq-a", .count = 6, .per_pod = { U(1) } });
	settle(e, &r);
	assert_true(admitted(e, "ns/w"));
	/* a borrows 2 of the 8 its cohort could lend: 250 per mille. */
	assert_int_equal(engine_cq_share(e, "a", &sh), 0);
	assert_int_equal(sh.weighted_share, 250);
	assert_true(sh.borrowing);
	assert_string_equal(sh.dominant_resource, "cpu");
	assert_int_equal(engine_cq_share(e, "b", &sh), 0);
	assert_int_equal(sh.weighted_share, 0);
	assert_false(sh.borrowing);
	assert_null(sh.dominant_resource);
	/* A root (and a ClusterQueue without a cohort) has share 0. */
	assert_int_equal(engine_cohort_share(e, "co", &sh), 0);
	assert_int_equal(sh.weighted_share, 0);
	assert_int_equal(engine_cq_share(e, "lone", &sh), 0);
	assert_int_equal(sh.weighted_share, 0);
	assert_int_equal(engine_cq_share(e, "nope", &sh), -ENOENT);
	/* Weight 2 halves it, weight 0.3 rounds the share up, weight 0 makes it infinite. */
	put_cq(e, &(struct cqdef){ .name = "a",
				   .cohort = "co",
				   .fl = { FQ("default", U(4)) },
				   .has_weight = 1,
				   .weight = 2 });
	assert_int_equal(engine_cq_share(e, "a", &sh), 0);
	assert_int_equal(sh.weighted_share, 125);
	put_cq(e, &(struct cqdef){ .name = "a",
				   .cohort = "co",
				   .fl = { FQ("default", U(4)) },
				   .has_weight = 1,
				   .weight = 0.3 });
	assert_int_equal(engine_cq_share(e, "a", &sh), 0);
	assert_int_equal(sh.weighted_share, 834); /* ceil(250 / 0.3) */
	put_cq(e, &(struct cqdef){ .name = "a",
				   .cohort = "co",
				   .fl = { FQ("default", U(4)) },
				   .has_weight = 1,
				   .weight = 0 });
	assert_int_equal(engine_cq_share(e, "a", &sh), 0);
	assert_int_equal(sh.weighted_share, INT64_MAX);
	assert_int_equal(try_put_cq(e, &(struct cqdef){ .name = "a",
							.fl = { FQ("default", U(4)) },
							.has_weight = 1,
							.weight = -1 }),
			 -EINVAL);
	engine_free(e);
	(void)state;
}

/* Two ClusterQueues with nothing of their own borrow a lender's 10 cpus. Kueue's classical
 * order gives the older queue everything; fair sharing takes turns. */
static void fair_two_queues(int fair, double wa, double wb, int *na, int *nb, int capacity)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	if (fair)
		fair_on(e, 0, 0, 0);
	put_cq(e, &(struct cqdef){ .name = "a",
				   .cohort = "co",
				   .fl = { FQ("default", 0) },
				   .has_weight = 1,
				   .weight = wa });
	put_cq(e, &(struct cqdef){ .name = "b",
				   .cohort = "co",
				   .fl = { FQ("default", 0) },
				   .has_weight = 1,
				   .weight = wb });
	put_cq(e, &(struct cqdef){
			  .name = "l", .cohort = "co", .fl = { FQ("default", U(capacity)) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	add_many(e, "a", "lq-a", 10, 0, 1);
	add_many(e, "b", "lq-b", 10, 100, 1);
	settle(e, &r);
	*na = count_admitted_in(&r, "a");
	*nb = count_admitted_in(&r, "b");
	char msg[256];
	assert_int_equal(engine_check(e, msg, sizeof(msg)), 0);
	engine_free(e);
}

static void test_fair_tournament_takes_turns(void **state)
{
	int na, nb;
	fair_two_queues(0, 1, 1, &na, &nb, 10);
	assert_int_equal(na, 10); /* classical: the older workloads, all in a */
	assert_int_equal(nb, 0);
	fair_two_queues(1, 1, 1, &na, &nb, 10);
	assert_int_equal(na, 5);
	assert_int_equal(nb, 5);
	/* Weights 2:1 over 9 cpus: 6 and 3 (worked by hand in the comment of the issue's test). */
	fair_two_queues(1, 2, 1, &na, &nb, 9);
	assert_int_equal(na, 6);
	assert_int_equal(nb, 3);
	/* Weight 0: b takes only what a doesn't want. */
	fair_two_queues(1, 1, 0, &na, &nb, 12);
	assert_int_equal(na, 10);
	assert_int_equal(nb, 2);
	(void)state;
}

/* root: cohorts c1 (ClusterQueues a1, a2) and c2 (b), a lender l with 12 cpus. The root
 * splits 6:6 between c1 and c2, and c1 splits its 6 as 3:3 (worked by hand pick by pick). */
static void test_fair_tournament_hierarchical(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	fair_on(e, 0, 0, 0);
	put_cohort(e, "c1", "root", NULL);
	put_cohort(e, "c2", "root", NULL);
	put_cq(e, &(struct cqdef){ .name = "a1", .cohort = "c1", .fl = { FQ("default", 0) } });
	put_cq(e, &(struct cqdef){ .name = "a2", .cohort = "c1", .fl = { FQ("default", 0) } });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "c2", .fl = { FQ("default", 0) } });
	put_cq(e, &(struct cqdef){ .name = "l", .cohort = "root", .fl = { FQ("default", U(12)) } });
	lq(e, "lq-a1", "a1");
	lq(e, "lq-a2", "a2");
	lq(e, "lq-b", "b");
	add_many(e, "a1", "lq-a1", 10, 0, 3);
	add_many(e, "a2", "lq-a2", 10, 1, 3);
	add_many(e, "b", "lq-b", 10, 2, 3);
	settle(e, &r);
	assert_int_equal(count_admitted_in(&r, "a1"), 3);
	assert_int_equal(count_admitted_in(&r, "a2"), 3);
	assert_int_equal(count_admitted_in(&r, "b"), 6);
	/* The order of the first picks: a1, b, a2, b, a1. */
	const char *first[] = { "ns/a1-1", "ns/b-1", "ns/a2-1", "ns/b-2", "ns/a1-2" };
	for (int i = 0; i < 5; i++)
		assert_string_equal(r.d[i].wl, first[i]);
	struct eng_share sh;
	assert_int_equal(engine_cohort_share(e, "c1", &sh), 0);
	assert_int_equal(sh.weighted_share, 500); /* 6 of 12 */
	engine_free(e);
	(void)state;
}

/* a (2 cpus) wants 3 while b (4 of its own) runs four 2-cpu workloads on 8; l lends 2. */
static struct engine *fair_preemption_world(struct rec *r)
{
	struct engine *e = new_engine();
	struct eng_preemption any = { .reclaim_within_cohort = ENG_RECLAIM_ANY };
	put_cq(e, &(struct cqdef){ .name = "a",
				   .cohort = "co",
				   .fl = { FQ("default", U(2)) },
				   .preemption = any });
	put_cq(e, &(struct cqdef){ .name = "b", .cohort = "co", .fl = { FQ("default", U(4)) } });
	put_cq(e, &(struct cqdef){ .name = "l", .cohort = "co", .fl = { FQ("default", U(2)) } });
	lq(e, "lq-a", "a");
	lq(e, "lq-b", "b");
	for (int i = 1; i <= 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "b-%d", i);
		add_wl(e, &(struct wldef){ name, "lq-b", .priority = i, .time = i,
					   .per_pod = { U(2) } });
	}
	settle(e, r);
	assert_int_equal(count_admitted_in(r, "b"), 4);
	add_wl(e, &(struct wldef){ "a-1", "lq-a", .time = 10, .per_pod = { U(3) } });
	return e;
}

static void test_fair_preemption_strategies(void **state)
{
	struct rec r = { 0 };
	/* LessThanOrEqualToFinalShare alone: a with 3 would have share 125; b without b-1 has
	 * 250 (ok, taken), without b-2 too 0 (refused). One victim is not enough: none. */
	struct engine *e = fair_preemption_world(&r);
	fair_on(e, 1, ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, 0);
	r.n = 0;
	settle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 0);
	assert_false(admitted(e, "ns/a-1"));
	engine_free(e);

	/* Kueue's default adds LessThanInitialShare (125 < 250): b-1 and b-2 go. */
	e = fair_preemption_world(&r);
	fair_on(e, 0, 0, 0);
	r.n = 0;
	settle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 2);
	const struct dec *d = find(&r, ENG_PREEMPT, "ns/b-1");
	assert_non_null(d);
	assert_string_equal(d->reason, "InCohortFairSharing");
	assert_string_equal(d->preemptor, "ns/a-1");
	assert_non_null(find(&r, ENG_PREEMPT, "ns/b-2"));
	assert_int_equal(engine_evict(e, "ns/b-1"), 0);
	assert_int_equal(engine_evict(e, "ns/b-2"), 0);
	settle(e, &r);
	assert_true(admitted(e, "ns/a-1"));
	engine_free(e);

	/* LessThanInitialShare alone: 125 < 500, then 125 < 250. */
	e = fair_preemption_world(&r);
	fair_on(e, 1, ENG_FS_LESS_THAN_INITIAL_SHARE, 0);
	r.n = 0;
	settle(e, &r);
	assert_int_equal(count_kind(&r, ENG_PREEMPT), 2);
	assert_non_null(find(&r, ENG_PREEMPT, "ns/b-1"));
	assert_non_null(find(&r, ENG_PREEMPT, "ns/b-2"));
	/* Only the lists Kueue accepts. */
	struct eng_fair_sharing bad = {
		1, 2, { ENG_FS_LESS_THAN_INITIAL_SHARE, ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE }
	};
	assert_int_equal(engine_set_fair_sharing(e, &bad), -EINVAL);
	engine_free(e);
	(void)state;
}

/* Within its nominal quota the preemptor reclaims without the strategies. */
static void test_fair_preemption_within_nominal_reclaims(void **state)
{
	struct rec r = { 0 };
	struct engine *e = fair_preemption_world(&r);
	fair_on(e, 1, ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, 0);
	add_wl(e, &(struct wldef){ "a-2", "lq-a", .time = 5, .per_pod = { U(2) } });
	r.n = 0;
	settle(e, &r);
	const struct dec *d = find(&r, ENG_PREEMPT, "ns/b-1");
	assert_non_null(d);
	assert_string_equal(d->reason, "InCohortReclamation");
	assert_string_equal(d->preemptor, "ns/a-2");
	engine_free(e);
	(void)state;
}

static void afs_on(struct engine *e)
{
	struct eng_afs_weight w[] = { { "cpu", 1 } };
	struct eng_admission_fair_sharing afs = { 1, 3600LL * 1000000000, 300LL * 1000000000, 1,
						  w };
	assert_int_equal(engine_set_admission_fair_sharing(e, &afs), 0);
}

static void test_afs_orders_by_local_queue_usage(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	afs_on(e);
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) }, .afs = 1 });
	lq(e, "x", "cq");
	lq(e, "y", "cq");
	/* x's workloads are older; without usage the entry penalty makes them alternate. */
	add_many(e, "x", "x", 4, 0, 1);
	add_many(e, "y", "y", 4, 100, 1);
	settle(e, &r);
	const char *order[] = { "ns/x-1", "ns/y-1", "ns/x-2", "ns/y-2" };
	for (int i = 0; i < 4; i++)
		assert_string_equal(r.d[i].wl, order[i]);
	struct eng_afs_status st;
	assert_int_equal(engine_afs_status(e, "ns", "x", &st), 0);
	assert_true(st.applies);
	assert_int_equal(st.n, 1);
	assert_string_equal(st.consumed[0].resource, "cpu");
	/* 2 cpus times 1 - 0.5^(5m / 1h) */
	assert_true(st.consumed[0].consumed > 0.1122 && st.consumed[0].consumed < 0.1123);
	engine_free(e);

	/* A LocalQueue that consumed more (seeded from its status) waits for the other. */
	e = new_engine();
	r.n = 0;
	afs_on(e);
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(2)) }, .afs = 1 });
	lq(e, "x", "cq");
	lq(e, "y", "cq");
	struct eng_afs_resource used[] = { { "cpu", 10 } };
	assert_int_equal(engine_afs_seed(e, "ns", "x", used, 1, 1), 0);
	add_many(e, "x", "x", 2, 0, 1);
	add_many(e, "y", "y", 2, 100, 1);
	settle(e, &r);
	assert_true(admitted(e, "ns/y-1") && admitted(e, "ns/y-2"));
	assert_false(admitted(e, "ns/x-1"));
	/* LocalQueue weight 100 makes x's usage 0.1: it goes first again. */
	engine_remove_workload(e, "ns/y-1");
	engine_remove_workload(e, "ns/y-2");
	add_many(e, "y", "y", 2, 200, 1);
	assert_int_equal(engine_set_lq_fair_weight(e, "ns", "x", 100), 0);
	settle(e, &r);
	assert_true(admitted(e, "ns/x-1") && admitted(e, "ns/x-2"));
	engine_free(e);
	(void)state;
}

static void test_afs_sample_decays_toward_admitted_usage(void **state)
{
	struct engine *e = new_engine();
	struct rec r = { 0 };
	const int64_t hour = 3600LL * 1000000000;
	afs_on(e);
	put_cq(e, &(struct cqdef){ .name = "cq", .fl = { FQ("default", U(4)) }, .afs = 1 });
	lq(e, "x", "cq");
	struct eng_afs_resource used[] = { { "cpu", 8 } };
	assert_int_equal(engine_afs_seed(e, "ns", "x", used, 1, hour), 0);
	assert_int_equal(engine_afs_sample(e, 2 * hour), 0);
	struct eng_afs_status st;
	assert_int_equal(engine_afs_status(e, "ns", "x", &st), 0);
	assert_true(st.consumed[0].consumed > 3.9999 && st.consumed[0].consumed < 4.0001);
	assert_int_equal(st.last_update, 2 * hour);
	/* With 2 cpus admitted for another half-life: 4 x 0.5 + 2 x 0.5 (+ the entry penalty). */
	add_wl(e, &(struct wldef){ "w", "x", .count = 2, .per_pod = { U(1) } });
	settle(e, &r);
	assert_int_equal(engine_afs_status(e, "ns", "x", &st), 0);
	double penalty = st.consumed[0].consumed - 4;
	assert_int_equal(engine_afs_sample(e, 3 * hour), 0);
	assert_int_equal(engine_afs_status(e, "ns", "x", &st), 0);
	double want = (4 + penalty) * 0.5 + 2 * 0.5;
	assert_true(st.consumed[0].consumed > want - 1e-9 && st.consumed[0].consumed < want + 1e-9);
	assert_true(st.usage > want - 1e-9 && st.usage < want + 1e-9);
	assert_int_equal(engine_afs_status(e, "ns", "nope", &st), -ENOENT);
	engine_free(e);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_specs_interned_and_counted),
		cmocka_unit_test(test_engine_fits_admits_and_charges),
		cmocka_unit_test(test_engine_reserve_is_only_a_hint),
		cmocka_unit_test(test_engine_placer_refusal_keeps_best_effort_queue_moving),
		cmocka_unit_test(test_engine_placer_refusal_blocks_strict_fifo_head),
		cmocka_unit_test(test_engine_placer_capacity_change_without_refusals_is_noop),
		cmocka_unit_test(test_engine_no_fit_pending_with_kueue_message),
		cmocka_unit_test(test_engine_exceeds_max_names_maximum_capacity),
		cmocka_unit_test(test_engine_pending_reported_only_on_change),
		cmocka_unit_test(test_engine_same_shape_after_an_admission_gets_the_new_shortfall),
		cmocka_unit_test(test_engine_borrowing_within_limit_admits_beyond_waits),
		cmocka_unit_test(test_engine_no_cohort_borrowing_limit_einval),
		cmocka_unit_test(test_engine_lending_limit_holds_back_quota),
		cmocka_unit_test(test_engine_cohort_nominal_quota_is_shared_pool),
		cmocka_unit_test(test_engine_cohort_borrowing_limit_caps_subtree),
		cmocka_unit_test(test_engine_cohort_lending_limit_keeps_quota_for_subtree),
		cmocka_unit_test(test_engine_many_admissions_in_one_cycle_never_exceed_cohort_pool),
		cmocka_unit_test(test_engine_flavor_fallback_in_order),
		cmocka_unit_test(test_engine_flavor_node_selector_and_taints_skip_flavor),
		cmocka_unit_test(test_engine_fungibility_may_stop_search_borrows_in_first_flavor),
		cmocka_unit_test(test_engine_fungibility_try_next_flavor_avoids_borrowing),
		cmocka_unit_test(
			test_engine_fungibility_when_can_preempt_try_next_takes_free_flavor),
		cmocka_unit_test(test_engine_fungibility_when_can_preempt_may_stop_preempts),
		cmocka_unit_test(
			test_engine_fungibility_preference_orders_borrowing_and_preemption),
		cmocka_unit_test(test_engine_strict_fifo_head_blocks_queue),
		cmocka_unit_test(test_engine_best_effort_fifo_skips_head_that_doesnt_fit),
		cmocka_unit_test(test_engine_strict_fifo_namespace_mismatch_head_doesnt_block),
		cmocka_unit_test(test_engine_queue_order_priority_then_age),
		cmocka_unit_test(test_engine_queue_order_ties_by_arrival),
		cmocka_unit_test(test_engine_cycle_order_non_borrowing_before_priority),
		cmocka_unit_test(test_engine_cycle_order_borrowers_by_priority_then_age),
		cmocka_unit_test(test_engine_preempt_lower_priority_within_cluster_queue),
		cmocka_unit_test(test_engine_preempt_lower_or_newer_equal_priority),
		cmocka_unit_test(test_engine_preempt_never_leaves_workload_pending),
		cmocka_unit_test(test_engine_preempt_most_recently_admitted_first),
		cmocka_unit_test(test_engine_preempt_minimal_victim_set),
		cmocka_unit_test(test_engine_reclaim_lower_priority_preempts_borrower),
		cmocka_unit_test(test_engine_reclaim_lower_priority_spares_higher_priority),
		cmocka_unit_test(test_engine_reclaim_any_preempts_higher_priority_borrower),
		cmocka_unit_test(test_engine_reclaim_never_waits),
		cmocka_unit_test(test_engine_reclaim_before_lower_priority_in_own_queue),
		cmocka_unit_test(test_engine_preemptor_overlapping_targets_waits),
		cmocka_unit_test(test_engine_preemption_takes_evicting_first_then_the_rest),
		cmocka_unit_test(test_engine_borrow_within_cohort_preempts_below_threshold),
		cmocka_unit_test(test_engine_borrow_within_cohort_spares_above_threshold),
		cmocka_unit_test(test_engine_borrow_within_cohort_never_doesnt_preempt_to_borrow),
		cmocka_unit_test(test_engine_preemptor_holds_freed_quota_and_preempts_once),
		cmocka_unit_test(test_engine_preemption_without_victims_scans_on),
		cmocka_unit_test(test_engine_partial_admission_takes_largest_count),
		cmocka_unit_test(test_engine_partial_admission_below_min_count_waits),
		cmocka_unit_test(test_engine_multiple_podsets_share_flavor_usage),
		cmocka_unit_test(test_engine_pods_resource_counts_pods),
		cmocka_unit_test(test_engine_namespace_selector_null_none_empty_all_labels_match),
		cmocka_unit_test(test_engine_stop_hold_keeps_admitted_blocks_new),
		cmocka_unit_test(test_engine_stop_hold_and_drain_evicts_admitted),
		cmocka_unit_test(test_engine_missing_queue_and_flavor_messages),
		cmocka_unit_test(test_engine_cohort_cycle_disables_tree),
		cmocka_unit_test(test_engine_set_admitted_charges_and_evict_requeues),
		cmocka_unit_test(test_engine_invalid_workloads_einval),
		cmocka_unit_test(test_engine_reason_misconfigured_missing_cluster_queue),
		cmocka_unit_test(test_engine_reason_misconfigured_missing_flavor),
		cmocka_unit_test(test_engine_reason_misconfigured_wins_over_suspended),
		cmocka_unit_test(test_engine_reason_no_matching_flavor),
		cmocka_unit_test(test_engine_reason_suspended_local_queue),
		cmocka_unit_test(test_engine_reason_exceeds_max_quota),
		cmocka_unit_test(test_engine_reason_borrowing_limit_reached),
		cmocka_unit_test(test_engine_reason_waiting_for_quota),
		cmocka_unit_test(test_engine_reason_waiting_for_preempted_workloads),
		cmocka_unit_test(test_fair_share_is_borrowing_over_lendable),
		cmocka_unit_test(test_fair_tournament_takes_turns),
		cmocka_unit_test(test_engine_check_finds_broken_invariants),
		cmocka_unit_test(test_fair_tournament_hierarchical),
		cmocka_unit_test(test_fair_preemption_strategies),
		cmocka_unit_test(test_fair_preemption_within_nominal_reclaims),
		cmocka_unit_test(test_afs_orders_by_local_queue_usage),
		cmocka_unit_test(test_afs_sample_decays_toward_admitted_usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
