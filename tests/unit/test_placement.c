/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for core/placement: filters, GPU accounting, gang packing, topology, reservations,
 * pods on unknown nodes, messages, the FGD choice, the baselines, and a seeded property test
 * against brute force (MUSTER_SEED=<n> replays one seed; the seed is printed).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "core/placement.h"

#define GPU "nvidia.com/gpu"
#define CORES(x) ((int64_t)(x)*1000)
#define GI(x) ((int64_t)(x)*1024 * 1024 * 1024 * 1000)

static const char *const RN[] = { "cpu", "memory", GPU };

/* --- builders --------------------------------------------------------------------------------- */

static void node_full(struct placement *p, const char *name, int64_t cpu, int64_t mem, int gpus,
		      const struct quota_kv *labels, size_t nl, const struct quota_taint *taints,
		      size_t nt, int schedulable)
{
	int64_t alloc[3] = { cpu, mem, (int64_t)gpus * 1000 };
	struct plc_node_spec s = {
		.name = name,
		.n_labels = nl,
		.labels = labels,
		.n_taints = nt,
		.taints = taints,
		.schedulable = schedulable,
		.n_resources = 3,
		.resources = RN,
		.allocatable = alloc,
	};
	assert_int_equal(placement_set_node(p, &s), 0);
}

static void node(struct placement *p, const char *name, int64_t cpu, int gpus)
{
	node_full(p, name, cpu, GI(1024), gpus, NULL, 0, NULL, 0, 1);
}

static void node_l(struct placement *p, const char *name, int64_t cpu, int gpus,
		   const struct quota_kv *labels, size_t nl)
{
	node_full(p, name, cpu, GI(1024), gpus, labels, nl, NULL, 0, 1);
}

/* A request for count pods of (cpu, gpu milli, memory). */
struct rb {
	int64_t v[3];
	struct quota_podset ps;
	struct plc_request r;
};

static void req(struct rb *b, int64_t count, int64_t cpu, int64_t gpu)
{
	memset(b, 0, sizeof(*b));
	b->v[0] = cpu;
	b->v[1] = 0;
	b->v[2] = gpu;
	b->ps.count = count;
	b->ps.n_requests = 3;
	b->ps.resources = RN;
	b->ps.per_pod = b->v;
	b->r.workload = "ns/wl";
	b->r.podset = "main";
	b->r.count = count;
	b->r.pod = &b->ps;
	b->r.policy = PLC_MUSTER;
}

static int plan(struct placement *p, struct rb *b, struct plc_plan *out, char *why, size_t n)
{
	return placement_plan(p, &b->r, out, why, n);
}

static void bind_wl(struct placement *p, const char *key, const char *nodename, int64_t cpu,
		    int64_t gpu, const char *wl, const char *ps)
{
	int64_t v[3] = { cpu, 0, gpu };
	struct plc_pod_spec s = {
		.key = key,
		.node = nodename,
		.n_resources = 3,
		.resources = RN,
		.requests = v,
		.workload = wl,
		.podset = ps,
	};
	assert_int_equal(placement_bind_pod(p, &s), 0);
}

static void bind(struct placement *p, const char *key, const char *nodename, int64_t cpu,
		 int64_t gpu)
{
	bind_wl(p, key, nodename, cpu, gpu, NULL, NULL);
}

static struct plc_node_usage usage(struct placement *p, const char *name)
{
	struct plc_node_usage u;
	assert_int_equal(placement_node_usage(p, name, &u), 0);
	return u;
}

/* "gpu0,gpu1,..." free milli of a node's GPUs. */
static const char *gpus(struct placement *p, const char *name)
{
	static char buf[8192];
	int64_t f[PLC_MAX_GPUS];
	int n = placement_node_gpus(p, name, f, PLC_MAX_GPUS);
	size_t len = 0;
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%lld", i ? "," : "",
					(long long)f[i]);
	return buf;
}

/* "node:count ..." of a plan. */
static const char *slots(const struct plc_plan *pl)
{
	static char buf[512];
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < pl->n_slots; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s:%lld", i ? " " : "",
					pl->slots[i].node, (long long)pl->slots[i].count);
	return buf;
}

static struct placement *new_p(void)
{
	struct placement *p;
	assert_int_equal(placement_new(&p), 0);
	return p;
}

/* Which one-GPU nodes the request may use: every node holds one 1-GPU pod, so the plan for
 * as many pods as eligible nodes lists them all. Sorted, comma-separated. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *eligible(struct placement *p, struct rb *b, size_t nodes)
{
	static char buf[256];
	struct plc_plan pl;
	char why[512];
	buf[0] = 0;
	b->v[2] = 1000;
	b->r.count = (int64_t)nodes + 1;
	assert_int_equal(plan(p, b, &pl, why, sizeof(why)), 1);
	const char *m = strstr(why, "at most ");
	if (!m)
		return buf; /* "none of the nodes may take them" */
	b->r.count = atoll(m + 8);
	if (b->r.count == 0)
		return buf;
	assert_int_equal(plan(p, b, &pl, why, sizeof(why)), 0);
	const char *names[16];
	for (size_t i = 0; i < pl.n_slots; i++) {
		assert_int_equal(pl.slots[i].count, 1);
		names[i] = pl.slots[i].node;
	}
	qsort(names, pl.n_slots, sizeof(names[0]), cmp_str);
	size_t len = 0;
	for (size_t i = 0; i < pl.n_slots; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "",
					names[i]);
	return buf;
}

/* --- filters ---------------------------------------------------------------------------------- */

static void test_filter_labels_selector_unschedulable(void **state)
{
	struct placement *p = new_p();
	struct quota_kv za[] = { { "zone", "a" }, { "pool", "x" } }, zb[] = { { "zone", "b" } };
	node_l(p, "n1", CORES(8), 1, za, 2);
	node_l(p, "n2", CORES(8), 1, zb, 1);
	node_full(p, "n3", CORES(8), GI(64), 1, za, 2, NULL, 0, 0); /* cordoned */
	node(p, "n4", CORES(8), 1);
	struct rb b;
	req(&b, 1, 0, 1000);
	assert_string_equal(eligible(p, &b, 4), "n1,n2,n4");

	struct quota_kv fl[] = { { "zone", "a" } };
	struct quota_flavor f = { .name = "fa", .n_labels = 1, .labels = fl };
	b.r.flavor = &f;
	assert_string_equal(eligible(p, &b, 4), "n1");

	b.r.flavor = NULL;
	struct quota_kv sel[] = { { "zone", "b" } };
	b.ps.n_selector = 1;
	b.ps.node_selector = sel;
	assert_string_equal(eligible(p, &b, 4), "n2");

	/* Flavor and selector both apply: nothing is both zone=a and zone=b. */
	b.r.flavor = &f;
	assert_string_equal(eligible(p, &b, 4), "");
	char why[300];
	struct plc_plan pl;
	b.r.count = 1;
	assert_int_equal(plan(p, &b, &pl, why, sizeof(why)), 1);
	assert_string_equal(why, "no node layout fits 1 pod of {nvidia.com/gpu: 1}: none of the 4 "
				 "nodes may take them (1 unschedulable, 2 lack flavor fa's labels, "
				 "1 fail the nodeSelector)");
	placement_free(p);
}

static void test_filter_affinity_operators(void **state)
{
	struct placement *p = new_p();
	struct quota_kv l1[] = { { "gpu", "a100" }, { "mem", "80" } };
	struct quota_kv l2[] = { { "gpu", "v100" }, { "mem", "32" } };
	struct quota_kv l3[] = { { "mem", "big" } };
	node_l(p, "n1", CORES(8), 1, l1, 2);
	node_l(p, "n2", CORES(8), 1, l2, 2);
	node_l(p, "n3", CORES(8), 1, l3, 1);
	node(p, "n4", CORES(8), 1);
	struct rb b;
	req(&b, 1, 0, 1000);
	const char *a100[] = { "a100" }, *both[] = { "a100", "v100" }, *forty[] = { "40" };
	struct {
		struct quota_match_expr e;
		const char *want;
	} cases[] = {
		{ { "gpu", "In", 1, a100 }, "n1" },
		{ { "gpu", "In", 2, both }, "n1,n2" },
		{ { "gpu", "NotIn", 1, a100 }, "n2,n3,n4" }, /* a missing key is not in the set */
		{ { "gpu", "Exists", 0, NULL }, "n1,n2" },
		{ { "gpu", "DoesNotExist", 0, NULL }, "n3,n4" },
		{ { "mem", "Gt", 1, forty }, "n1" }, /* "big" isn't a number: no match */
		{ { "mem", "Lt", 1, forty }, "n2" },
		{ { "mem", "Bogus", 1, forty }, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct quota_affinity_term t = { .n_exprs = 1, .exprs = &cases[i].e };
		b.ps.n_terms = 1;
		b.ps.terms = &t;
		assert_string_equal(eligible(p, &b, 4), cases[i].want);
	}
	/* Terms are ORed, expressions ANDed. */
	struct quota_match_expr and2[] = { { "gpu", "Exists", 0, NULL },
					   { "mem", "Lt", 1, forty } };
	struct quota_match_expr dne = { "gpu", "DoesNotExist", 0, NULL };
	struct quota_affinity_term terms[] = { { .n_exprs = 2, .exprs = and2 },
					       { .n_exprs = 1, .exprs = &dne } };
	b.ps.n_terms = 2;
	b.ps.terms = terms;
	assert_string_equal(eligible(p, &b, 4), "n2,n3,n4");
	/* An empty term matches nothing; a term of matchFields alone is left to kube-scheduler. */
	struct quota_affinity_term empty = { 0 }, fields = { .has_match_fields = 1 };
	b.ps.n_terms = 1;
	b.ps.terms = &empty;
	assert_string_equal(eligible(p, &b, 4), "");
	b.ps.terms = &fields;
	assert_string_equal(eligible(p, &b, 4), "n1,n2,n3,n4");
	placement_free(p);
}

static void test_filter_taints_and_tolerations(void **state)
{
	struct placement *p = new_p();
	struct quota_taint t1 = { "dedicated", "gpu", "NoSchedule", 0 };
	struct quota_taint t2 = { "maint", "", "NoExecute", 0 };
	struct quota_taint t3 = { "soft", "x", "PreferNoSchedule", 0 };
	node_full(p, "n1", CORES(8), GI(64), 1, NULL, 0, &t1, 1, 1);
	node_full(p, "n2", CORES(8), GI(64), 1, NULL, 0, &t2, 1, 1);
	node_full(p, "n3", CORES(8), GI(64), 1, NULL, 0, &t3, 1, 1);
	node(p, "n4", CORES(8), 1);
	struct rb b;
	req(&b, 1, 0, 1000);
	assert_string_equal(eligible(p, &b, 4), "n3,n4");

	struct quota_taint tol_eq = { "dedicated", "gpu", "NoSchedule", 0 };
	struct quota_taint tol_wrong = { "dedicated", "cpu", "", 0 };
	b.ps.n_tolerations = 1;
	b.ps.tolerations = &tol_wrong;
	assert_string_equal(eligible(p, &b, 4), "n3,n4");
	b.ps.tolerations = &tol_eq;
	assert_string_equal(eligible(p, &b, 4), "n1,n3,n4");

	/* The flavor's tolerations count too (they are added to admitted pods). */
	struct quota_taint ftol = { "maint", NULL, NULL, 1 };
	struct quota_flavor f = { .name = "f", .n_tolerations = 1, .tolerations = &ftol };
	b.r.flavor = &f;
	assert_string_equal(eligible(p, &b, 4), "n1,n2,n3,n4");

	b.r.flavor = NULL;
	b.ps.n_tolerations = 0;
	char why[300];
	struct plc_plan pl;
	b.r.count = 3;
	assert_int_equal(plan(p, &b, &pl, why, sizeof(why)), 1);
	assert_string_equal(why, "no node layout fits 3 pods of {nvidia.com/gpu: 1}: at most 2 fit "
				 "on the 2 nodes they may use");
	/* With nothing eligible, the message names an untolerated taint. */
	placement_remove_node(p, "n3");
	placement_remove_node(p, "n4");
	b.r.count = 1;
	assert_int_equal(plan(p, &b, &pl, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "none of the 2 nodes may take them (2 have untolerated taints "
				    "such as dedicated=gpu:NoSchedule)"));
	placement_free(p);
}

/* --- GPU accounting --------------------------------------------------------------------------- */

static void test_gpu_shares_and_whole_gpus(void **state)
{
	struct placement *p = new_p();
	node(p, "a", CORES(32), 2);
	node(p, "b", CORES(32), 2);
	node(p, "c", CORES(32), 2);
	bind(p, "ns/h1", "a", CORES(1), 500);
	bind(p, "ns/h2", "a", CORES(1), 500);
	assert_string_equal(gpus(p, "a"), "0,1000"); /* two halves share one GPU */
	assert_int_equal(usage(p, "a").whole_free_gpus, 1);
	bind(p, "ns/s1", "b", CORES(1), 600);
	bind(p, "ns/s2", "b", CORES(1), 600);
	assert_string_equal(gpus(p, "b"), "400,400"); /* 0.6 + 0.6 need two GPUs */
	assert_int_equal(usage(p, "b").whole_free_gpus, 0);
	assert_int_equal(usage(p, "b").gpu_free, 800);
	assert_int_equal(usage(p, "b").cpu_free, CORES(30));

	/* Whole GPUs need completely free ones: b has 800 free milli but no whole GPU. */
	struct rb r;
	struct plc_plan pl;
	req(&r, 1, 0, 1000);
	r.ps.n_selector = 0;
	placement_remove_node(p, "c");
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "a:1");
	req(&r, 1, 0, 2000);
	char why[300];
	assert_int_equal(plan(p, &r, &pl, why, sizeof(why)), 1);
	assert_string_equal(why, "no node layout fits 1 pod of {nvidia.com/gpu: 2}: at most 0 "
				 "fit on the 2 nodes they may use");
	/* A share goes to the fullest GPU that still has room. */
	bind(p, "ns/s3", "b", CORES(1), 300);
	assert_string_equal(gpus(p, "b"), "100,400");
	/* A request above 1000 that isn't whole takes whole GPUs, rounded up. */
	placement_unbind_pod(p, "ns/h1");
	placement_unbind_pod(p, "ns/h2");
	bind(p, "ns/w", "a", CORES(1), 1500);
	assert_string_equal(gpus(p, "a"), "0,0");
	placement_unbind_pod(p, "ns/w");
	assert_string_equal(gpus(p, "a"), "1000,1000");

	struct plc_totals t;
	placement_totals(p, &t);
	assert_int_equal(t.nodes, 2);
	assert_int_equal(t.gpu_capacity, 4000);
	assert_int_equal(t.gpu_allocated, 1500);
	assert_int_equal(t.free_whole_nodes, 1);
	assert_int_equal(t.free_8gpu_nodes, 0);
	placement_free(p);
}

/* A node's spec compared with the model: any field placement keeps differs, or nothing does;
 * and its labels are read from the model (the hostname label defaulting to nothing here: the
 * decoder adds it). */
static void test_node_same_and_labels(void **state)
{
	(void)state;
	struct placement *p = new_p();
	struct quota_kv labels[] = { { "zone", "a" }, { "rack", "r1" } };
	struct quota_taint taints[] = { { "gpu", "yes", "NoSchedule", 0 } };
	int64_t alloc[3] = { CORES(8), GI(64), 8000 };
	struct plc_node_spec s = { .name = "n",
				   .n_labels = 2,
				   .labels = labels,
				   .n_taints = 1,
				   .taints = taints,
				   .schedulable = 1,
				   .n_resources = 3,
				   .resources = RN,
				   .allocatable = alloc };
	assert_false(placement_node_same(p, &s)); /* not in the model yet */
	assert_int_equal(placement_set_node(p, &s), 0);
	assert_true(placement_node_same(p, &s));
	assert_string_equal(placement_node_label(p, "n", "rack"), "r1");
	assert_null(placement_node_label(p, "n", "missing"));
	assert_null(placement_node_label(p, "other", "rack"));
	labels[1].value = "r2";
	assert_false(placement_node_same(p, &s));
	labels[1].value = "r1";
	taints[0].effect = "NoExecute";
	assert_false(placement_node_same(p, &s));
	taints[0].effect = "NoSchedule";
	s.schedulable = 0;
	assert_false(placement_node_same(p, &s));
	s.schedulable = 1;
	alloc[0] = CORES(9);
	assert_false(placement_node_same(p, &s));
	alloc[0] = CORES(8);
	alloc[2] = 7000; /* a GPU fewer */
	assert_false(placement_node_same(p, &s));
	alloc[2] = 8500; /* half a GPU more: not a GPU */
	assert_true(placement_node_same(p, &s));
	alloc[2] = 8000;
	s.n_resources = 2; /* no GPUs */
	assert_false(placement_node_same(p, &s));
	s.n_resources = 3;
	s.n_labels = 1;
	assert_false(placement_node_same(p, &s));
	s.n_labels = 2;
	assert_true(placement_node_same(p, &s));
	placement_remove_node(p, "n");
	assert_false(placement_node_same(p, &s));
	assert_null(placement_node_label(p, "n", "rack"));
	placement_free(p);
}

static void test_plain_resources_and_unknown_resource(void **state)
{
	struct placement *p = new_p();
	const char *rn[] = { "cpu", "memory", "example.com/fpga", "pods" };
	int64_t alloc[] = { CORES(4), GI(8), 2000, 110000 };
	struct plc_node_spec s = { .name = "n",
				   .schedulable = 1,
				   .n_resources = 4,
				   .resources = rn,
				   .allocatable = alloc };
	assert_int_equal(placement_set_node(p, &s), 0);
	const char *pr[] = { "memory", "example.com/fpga" };
	int64_t pv[] = { GI(3), 1000 };
	struct quota_podset ps = { .n_requests = 2, .resources = pr, .per_pod = pv };
	struct plc_request r = { .count = 2, .pod = &ps, .policy = PLC_MUSTER };
	struct plc_plan pl;
	char why[300];
	assert_int_equal(placement_plan(p, &r, &pl, why, sizeof(why)), 0);
	assert_string_equal(slots(&pl), "n:2");
	r.count = 3;
	assert_int_equal(placement_plan(p, &r, &pl, why, sizeof(why)), 1);
	assert_string_equal(why, "no node layout fits 3 pods of {memory: 3Gi, "
				 "example.com/fpga: 1}: at most 2 fit on the 1 node they may use");
	/* A resource no node has ever had fits nowhere. */
	const char *pr2[] = { "example.com/tpu" };
	int64_t pv2[] = { 1000 };
	struct quota_podset ps2 = { .n_requests = 1, .resources = pr2, .per_pod = pv2 };
	r.pod = &ps2;
	r.count = 1;
	assert_int_equal(placement_plan(p, &r, &pl, NULL, 0), 1);
	/* Errors. */
	int64_t neg[] = { -1 };
	ps2.per_pod = neg;
	assert_int_equal(placement_plan(p, &r, &pl, NULL, 0), -EINVAL);
	r.count = -1;
	ps2.per_pod = pv2;
	assert_int_equal(placement_plan(p, &r, &pl, NULL, 0), -EINVAL);
	int64_t many[] = { (PLC_MAX_GPUS + 1) * 1000 };
	const char *g[] = { GPU };
	struct plc_node_spec big = { .name = "big",
				     .schedulable = 1,
				     .n_resources = 1,
				     .resources = g,
				     .allocatable = many };
	assert_int_equal(placement_set_node(p, &big), -EINVAL);
	assert_non_null(placement_node_refusal(p, "big"));
	assert_int_equal(placement_set_gpu_resource(p, "amd.com/gpu"), -EBUSY);
	/* count 0: an empty plan. */
	r.count = 0;
	assert_int_equal(placement_plan(p, &r, &pl, NULL, 0), 0);
	assert_int_equal(pl.n_slots, 0);
	placement_free(p);
}

static void test_gpu_resource_name(void **state)
{
	struct placement *p = new_p();
	assert_int_equal(placement_set_gpu_resource(p, "amd.com/gpu"), 0);
	const char *rn[] = { "cpu", "amd.com/gpu" };
	int64_t alloc[] = { CORES(8), 2000 };
	struct plc_node_spec s = { .name = "n",
				   .schedulable = 1,
				   .n_resources = 2,
				   .resources = rn,
				   .allocatable = alloc };
	assert_int_equal(placement_set_node(p, &s), 0);
	assert_int_equal(usage(p, "n").gpus, 2);
	int64_t v[] = { 0, 500 };
	struct plc_pod_spec pod = {
		.key = "ns/p", .node = "n", .n_resources = 2, .resources = rn, .requests = v
	};
	assert_int_equal(placement_bind_pod(p, &pod), 0);
	assert_string_equal(gpus(p, "n"), "500,1000");
	placement_free(p);
}

/* --- gang packing ----------------------------------------------------------------------------- */

static void test_pack_five_two_gpu_pods_four_and_one(void **state)
{
	struct placement *p = new_p();
	node(p, "a", CORES(64), 8);
	node(p, "b", CORES(64), 8);
	struct rb r;
	struct plc_plan pl;
	req(&r, 5, CORES(2), 2000);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "a:4 b:1");
	assert_null(pl.domain_level);
	req(&r, 3, CORES(2), 2000);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "a:3");
	/* The remainder goes to the best fit, the fullest node that holds it. */
	node(p, "c", CORES(64), 8);
	bind(p, "ns/x", "c", CORES(1), 4000);
	req(&r, 5, CORES(2), 2000);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "a:4 c:1");
	placement_free(p);
}

static void test_pack_single_pods_share_one_node(void **state)
{
	struct placement *p = new_p();
	node(p, "a", CORES(64), 8);
	node(p, "b", CORES(64), 8);
	for (int i = 0; i < 4; i++) {
		struct rb r;
		struct plc_plan pl;
		char wl[32];
		snprintf(wl, sizeof(wl), "ns/w%d", i);
		req(&r, 1, CORES(4), 1000);
		r.r.workload = wl;
		assert_int_equal(placement_place(p, &r.r, &pl, NULL, 0), 0);
		assert_string_equal(slots(&pl), "a:1");
		if (i % 2) {
			char key[32];
			snprintf(key, sizeof(key), "ns/w%d-0", i);
			bind_wl(p, key, "a", CORES(4), 1000, wl, "main");
		}
	}
	assert_int_equal(usage(p, "a").whole_free_gpus, 4);
	assert_int_equal(usage(p, "b").whole_free_gpus, 8);
	struct plc_totals t;
	placement_totals(p, &t);
	assert_int_equal(t.free_8gpu_nodes, 1);
	assert_int_equal(t.gpu_allocated, 4000);
	placement_free(p);
}

static void test_pack_fewest_nodes_fullest_first(void **state)
{
	struct placement *p = new_p();
	node(p, "a", CORES(64), 8);
	node(p, "b", CORES(64), 8);
	node(p, "c", CORES(64), 8);
	node(p, "d", CORES(64), 4);
	bind(p, "ns/x", "b", 0, 3000); /* b: 5 free */
	bind(p, "ns/y", "c", 0, 5000); /* c: 3 free */
	struct rb r;
	struct plc_plan pl;
	/* 11 one-GPU pods: 8 on an empty node, the last 3 on the fullest that holds 3 (c). */
	req(&r, 11, 0, 1000);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "a:8 c:3");
	/* 4 fit on d exactly: one node, best fit. */
	req(&r, 4, 0, 1000);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "d:4");
	/* 20: 8 + 5 + 4 + 3. */
	req(&r, 20, 0, 1000);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "a:8 b:5 d:4 c:3");
	/* cpu limits the fit count too. */
	req(&r, 3, CORES(30), 1000);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "c:2 d:1");
	placement_free(p);
}

/* --- topology --------------------------------------------------------------------------------- */

static const char *const LV3[] = { "zone", "rack", "host" };

static void rack_node(struct placement *p, const char *name, const char *zone, const char *rack,
		      int gpus)
{
	struct quota_kv l[] = { { "zone", (char *)zone },
				{ "rack", (char *)rack },
				{ "host", (char *)name } };
	node_l(p, name, CORES(64), gpus, l, rack ? 3 : 1);
}

static void test_topology_required_picks_the_rack_that_fits(void **state)
{
	struct placement *p = new_p();
	rack_node(p, "n1", "z1", "rack-1", 8);
	rack_node(p, "n2", "z1", "rack-1", 8);
	rack_node(p, "n3", "z1", "rack-2", 8);
	rack_node(p, "n4", "z1", "rack-2", 8);
	rack_node(p, "n5", "z1", NULL, 8); /* no rack label: outside every rack */
	bind(p, "ns/used", "n1", 0, 6000);
	struct plc_topology topo = { .n_levels = 3, .levels = LV3, .required = "rack" };
	struct rb r;
	struct plc_plan pl;
	char why[300];
	req(&r, 12, 0, 1000);
	r.r.topology = &topo;
	assert_int_equal(plan(p, &r, &pl, why, sizeof(why)), 0);
	assert_string_equal(slots(&pl), "n3:8 n4:4");
	assert_string_equal(pl.domain_level, "rack");
	assert_string_equal(pl.domain_value, "rack-2");
	/* Within the required rack, the most specific level that fits: one host. */
	req(&r, 2, 0, 1000);
	r.r.topology = &topo;
	assert_int_equal(plan(p, &r, &pl, why, sizeof(why)), 0);
	assert_string_equal(slots(&pl), "n1:2");
	assert_string_equal(pl.domain_level, "host");
	assert_string_equal(pl.domain_value, "n1");
	/* 17 fit in no rack. */
	req(&r, 17, 0, 1000);
	r.r.topology = &topo;
	assert_int_equal(plan(p, &r, &pl, why, sizeof(why)), 1);
	assert_string_equal(why, "no node layout fits 17 pods of {nvidia.com/gpu: 1}: at most 34 "
				 "fit on the 5 nodes they may use; in one rack domain at most 16 "
				 "(2 nodes in rack=rack-2)");
	/* A required level no node has. */
	struct plc_topology nolabel = { .n_levels = 0, .required = "block" };
	req(&r, 1, 0, 1000);
	r.r.topology = &nolabel;
	assert_int_equal(plan(p, &r, &pl, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "; none has label block"));
	placement_free(p);
}

static void test_topology_preferred_widens(void **state)
{
	struct placement *p = new_p();
	rack_node(p, "n1", "z1", "r1", 4);
	rack_node(p, "n2", "z1", "r2", 4);
	rack_node(p, "n3", "z2", "r3", 8);
	struct plc_topology topo = { .n_levels = 3, .levels = LV3, .preferred = "rack" };
	struct rb r;
	struct plc_plan pl;
	req(&r, 8, 0, 1000);
	r.r.topology = &topo;
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "n3:8");
	assert_string_equal(pl.domain_level, "rack");
	assert_string_equal(pl.domain_value, "r3");
	bind(p, "ns/x", "n3", 0, 1000);
	/* 8 fit in no rack now: zone z1 (two racks, 4+4) holds them. */
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "n1:4 n2:4");
	assert_string_equal(pl.domain_level, "zone");
	assert_string_equal(pl.domain_value, "z1");
	/* 12: no zone holds them (8 and 7): everything. */
	req(&r, 12, 0, 1000);
	r.r.topology = &topo;
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_null(pl.domain_level);
	assert_null(pl.domain_value);
	assert_string_equal(slots(&pl), "n3:7 n1:4 n2:1");
	/* Neither required nor preferred: the most specific level first. */
	struct plc_topology plain = { .n_levels = 3, .levels = LV3 };
	req(&r, 3, 0, 1000);
	r.r.topology = &plain;
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(pl.domain_level, "host");
	placement_free(p);
}

/* --- GPU avoidance ---------------------------------------------------------------------------- */

static void test_cpu_pods_avoid_gpu_nodes(void **state)
{
	struct placement *p = new_p();
	node(p, "gpu", CORES(64), 8);
	node(p, "cpu", CORES(64), 0);
	bind(p, "ns/fill", "gpu", CORES(12), 1000); /* gpu is the best fit on cpu */
	struct rb r;
	struct plc_plan pl;
	req(&r, 1, CORES(2), 0);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "cpu:1");
	req(&r, 2, CORES(40), 0);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "cpu:1 gpu:1"); /* no layout without GPU nodes */
	/* Best fit (the FGD paper's) weighs GPUs left too, even for a CPU-only pod: gpu scores
	 * 0.5*50/64 + 0.5*7/8, cpu 0.5*62/64 + 0, so the CPU node. */
	req(&r, 1, CORES(2), 0);
	r.r.policy = PLC_BEST_FIT;
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "cpu:1");
	placement_free(p);
}

/* --- reservations ----------------------------------------------------------------------------- */

static void test_reservation_holds_and_binds_consume_it(void **state)
{
	struct placement *p = new_p();
	node(p, "a", CORES(32), 4);
	node(p, "b", CORES(32), 4);
	struct rb r;
	struct plc_plan pl;
	req(&r, 6, CORES(1), 1000);
	r.r.workload = "ns/job";
	assert_int_equal(placement_place(p, &r.r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "a:4 b:2");
	assert_int_equal(usage(p, "a").whole_free_gpus, 0);
	assert_int_equal(usage(p, "b").whole_free_gpus, 2);
	assert_int_equal(usage(p, "a").cpu_free, CORES(28));
	/* The next plan sees the capacity gone. */
	struct rb r2;
	req(&r2, 3, 0, 1000);
	char why[300];
	assert_int_equal(plan(p, &r2, &pl, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "at most 2 fit"));

	/* A pod on a planned node takes its virtual pod's place: nothing changes. */
	bind_wl(p, "ns/job-0", "a", CORES(1), 1000, "ns/job", "main");
	assert_int_equal(usage(p, "a").whole_free_gpus, 0);
	assert_int_equal(usage(p, "a").cpu_free, CORES(28));
	/* An update of the same pod takes nothing more. */
	bind_wl(p, "ns/job-0", "a", CORES(1), 1000, "ns/job", "main");
	assert_int_equal(usage(p, "b").whole_free_gpus, 2);
	/* A pod of another podSet, or of no workload, doesn't consume it. */
	bind_wl(p, "ns/other", "b", CORES(1), 1000, "ns/job", "driver");
	assert_int_equal(usage(p, "b").whole_free_gpus, 1);
	placement_unbind_pod(p, "ns/other");
	/* A pod on a node the plan didn't choose frees the plan's last slot (b). */
	node(p, "c", CORES(32), 4);
	bind_wl(p, "ns/job-1", "c", CORES(1), 1000, "ns/job", "main");
	assert_int_equal(usage(p, "b").whole_free_gpus, 3);
	assert_int_equal(usage(p, "c").whole_free_gpus, 3);
	/* Finishing pods free their own requests; release frees the rest. */
	placement_unbind_pod(p, "ns/job-0");
	assert_int_equal(usage(p, "a").whole_free_gpus, 1);
	placement_release(p, "ns/job");
	assert_int_equal(usage(p, "a").whole_free_gpus, 4);
	assert_int_equal(usage(p, "b").whole_free_gpus, 4);
	assert_int_equal(usage(p, "c").whole_free_gpus, 3); /* job-1 still runs */
	placement_unbind_pod(p, "ns/job-1");
	struct plc_totals t;
	placement_totals(p, &t);
	assert_int_equal(t.gpu_allocated, 0);
	placement_free(p);
}

static void test_reservation_replaced_and_bound_pods_counted_once(void **state)
{
	struct placement *p = new_p();
	node(p, "a", CORES(32), 4);
	/* Two pods already run when the reservation is made (a restart): they take their places. */
	bind_wl(p, "ns/j-0", "a", 0, 1000, "ns/j", "main");
	bind_wl(p, "ns/j-1", "a", 0, 1000, "ns/j", "main");
	struct plc_slot s = { "a", 3 };
	struct plc_plan pl = { .n_slots = 1, .slots = &s };
	struct rb r;
	req(&r, 3, 0, 1000);
	assert_int_equal(placement_reserve(p, "ns/j", "main", &r.ps, &pl), 0);
	assert_int_equal(usage(p, "a").whole_free_gpus, 1);
	/* Replacing the reservation doesn't stack. */
	assert_int_equal(placement_reserve(p, "ns/j", "main", &r.ps, &pl), 0);
	assert_int_equal(usage(p, "a").whole_free_gpus, 1);
	bind_wl(p, "ns/j-2", "a", 0, 1000, "ns/j", "main");
	assert_int_equal(usage(p, "a").whole_free_gpus, 1);
	/* Reserving on an unknown node fails and holds nothing. */
	struct plc_slot bad = { "nowhere", 1 };
	struct plc_plan badpl = { .n_slots = 1, .slots = &bad };
	assert_int_equal(placement_reserve(p, "ns/k", "main", &r.ps, &badpl), -ENOENT);
	placement_release(p, "ns/j");
	placement_release(p, "ns/never"); /* unknown: nothing */
	assert_int_equal(usage(p, "a").whole_free_gpus, 1);
	placement_free(p);
}

/* --- nodes and pods coming and going ---------------------------------------------------------- */

static void test_pod_on_unknown_node_counts_when_it_appears(void **state)
{
	struct placement *p = new_p();
	bind(p, "ns/early", "late", CORES(2), 2000);
	struct plc_totals t;
	placement_totals(p, &t);
	assert_int_equal(t.nodes, 0);
	assert_int_equal(placement_node_usage(p, "late", &(struct plc_node_usage){ 0 }), -ENOENT);
	node(p, "late", CORES(8), 4);
	assert_string_equal(gpus(p, "late"), "0,0,1000,1000");
	assert_int_equal(usage(p, "late").cpu_free, CORES(6));
	/* Replacing a pod undoes the old one first, wherever it was. */
	bind(p, "ns/early", "late", CORES(1), 500);
	assert_string_equal(gpus(p, "late"), "500,1000,1000,1000");
	bind(p, "ns/early", "elsewhere", CORES(1), 500);
	assert_string_equal(gpus(p, "late"), "1000,1000,1000,1000");
	placement_unbind_pod(p, "ns/early");
	placement_unbind_pod(p, "ns/never");
	placement_free(p);
}

static void test_node_replace_and_remove(void **state)
{
	struct placement *p = new_p();
	node(p, "n", CORES(8), 4);
	bind(p, "ns/a", "n", CORES(2), 1000);
	bind(p, "ns/b", "n", CORES(2), 500);
	struct plc_slot s = { "n", 1 };
	struct plc_plan pl = { .n_slots = 1, .slots = &s };
	struct rb r;
	req(&r, 1, CORES(1), 1000);
	assert_int_equal(placement_reserve(p, "ns/j", "main", &r.ps, &pl), 0);
	assert_int_equal(usage(p, "n").gpu_free, 1500);
	/* Replaced with more GPUs: pods and the reservation stay. */
	node(p, "n", CORES(16), 8);
	assert_int_equal(usage(p, "n").gpu_free, 5500);
	assert_int_equal(usage(p, "n").cpu_free, CORES(11));
	/* Cordoned: it keeps its pods and leaves GPU totals. */
	node_full(p, "n", CORES(16), GI(1024), 8, NULL, 0, NULL, 0, 0);
	struct plc_totals t;
	placement_totals(p, &t);
	assert_int_equal(t.gpu_capacity, 0);
	assert_int_equal(usage(p, "n").schedulable, 0);
	/* Removed: the reservation's pod is dropped, bound pods wait for the node to return. */
	placement_remove_node(p, "n");
	placement_totals(p, &t);
	assert_int_equal(t.nodes, 0);
	node(p, "n", CORES(16), 8);
	assert_int_equal(usage(p, "n").gpu_free, 6500);
	assert_int_equal(usage(p, "n").cpu_free, CORES(12));
	placement_release(p, "ns/j");
	assert_int_equal(usage(p, "n").gpu_free, 6500);
	placement_remove_node(p, "n");
	placement_remove_node(p, "n");
	placement_free(p);
}

/* --- nodes with many GPUs, refused nodes ------------------------------------------------------ */

/* Places and reserves count pods for workload ns/wl, podSet main; the plan must be `want`. */
static void place_as(struct placement *p, int64_t count, int64_t cpu, int64_t gpu, const char *want)
{
	struct rb b;
	struct plc_plan pl;
	req(&b, count, cpu, gpu);
	assert_int_equal(placement_place(p, &b.r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), want);
}

/* An 8 x H100 node under the device plugin's MIG "single" strategy: 56 slices, each one
 * nvidia.com/gpu. A CPU-only node next to it. */
static void test_mig_56_gpu_node_takes_single_pods(void **state)
{
	struct placement *p = new_p();
	node(p, "mig", CORES(224), 56);
	node(p, "cpu-1", CORES(64), 0);
	assert_int_equal(usage(p, "mig").gpus, 56);
	char key[32];
	for (int i = 0; i < 56; i++) {
		struct rb b;
		struct plc_plan pl;
		req(&b, 1, CORES(1), 1000);
		assert_int_equal(plan(p, &b, &pl, NULL, 0), 0);
		assert_string_equal(slots(&pl), "mig:1");
		snprintf(key, sizeof(key), "ns/p%d", i);
		bind(p, key, "mig", CORES(1), 1000);
	}
	struct plc_node_usage u = usage(p, "mig");
	assert_int_equal(u.gpu_free, 0);
	assert_int_equal(u.whole_free_gpus, 0);
	/* The 57th has nowhere to go; a CPU-only pod still goes to the CPU node. */
	struct rb b;
	struct plc_plan pl;
	char why[512];
	req(&b, 1, CORES(1), 1000);
	assert_int_equal(plan(p, &b, &pl, why, sizeof(why)), 1);
	req(&b, 1, CORES(1), 0);
	assert_int_equal(plan(p, &b, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "cpu-1:1");
	/* Pods leaving give their slices back, one by one. */
	placement_unbind_pod(p, "ns/p3");
	placement_unbind_pod(p, "ns/p40");
	assert_int_equal(usage(p, "mig").whole_free_gpus, 2);
	assert_int_equal(usage(p, "mig").gpu_free, 2000);
	placement_free(p);
}

/* A gang of 8 pods x 7 slices fills one 56-slice node exactly, rather than being refused or
 * spread; with a mix set, the fragmentation measure sees the same node. */
static void test_mig_gang_of_eight_fills_one_node(void **state)
{
	for (int with_mix = 0; with_mix < 2; with_mix++) {
		struct placement *p = new_p();
		node(p, "mig-1", CORES(224), 56);
		node(p, "mig-2", CORES(224), 56);
		node(p, "gpu-8", CORES(96), 8);
		bind(p, "ns/other", "mig-2", CORES(1), 1000);
		if (with_mix) {
			struct plc_shape mix[] = { { 1000, 1000, 3 }, { 8000, 7000, 1 } };
			assert_int_equal(placement_set_mix(p, mix, 2), 0);
		}
		place_as(p, 8, CORES(8), 7000, "mig-1:8");
		assert_int_equal(usage(p, "mig-1").gpu_free, 0);
		/* The pods bind where they were planned: the reservation turns into them. */
		char key[32];
		for (int i = 0; i < 8; i++) {
			snprintf(key, sizeof(key), "ns/w-%d", i);
			bind_wl(p, key, "mig-1", CORES(8), 7000, "ns/wl", "main");
		}
		assert_int_equal(usage(p, "mig-1").gpu_free, 0);
		assert_int_equal(usage(p, "mig-1").cpu_free, CORES(224 - 64));
		placement_release(p, "ns/wl");
		for (int i = 0; i < 8; i++) {
			snprintf(key, sizeof(key), "ns/w-%d", i);
			placement_unbind_pod(p, key);
		}
		assert_int_equal(usage(p, "mig-1").whole_free_gpus, 56);
		placement_free(p);
	}
}

/* Pods taking more GPUs than a load records in place (8): reserved, bound, overcommitted by a
 * kubelet's choice, and the node resized under them; every GPU comes back exactly. */
static void test_pods_with_many_gpus_give_back_exactly(void **state)
{
	struct placement *p = new_p();
	node(p, "big", CORES(128), 40);
	place_as(p, 2, CORES(4), 16000, "big:2");
	assert_int_equal(usage(p, "big").whole_free_gpus, 8);
	bind_wl(p, "ns/a", "big", CORES(4), 16000, "ns/wl", "main");
	/* A bound pod the node can't hold: 12 GPUs where 8 are free. */
	bind(p, "ns/over", "big", CORES(1), 12000);
	assert_int_equal(usage(p, "big").gpu_free, -4000);
	/* Same GPU count: everyone keeps their GPUs. More GPUs: chosen again, nothing over. */
	node(p, "big", CORES(128), 40);
	assert_int_equal(usage(p, "big").gpu_free, -4000);
	node(p, "big", CORES(128), 48);
	assert_int_equal(usage(p, "big").gpu_free, 4000);
	assert_int_equal(usage(p, "big").whole_free_gpus, 4);
	placement_unbind_pod(p, "ns/over");
	placement_release(p, "ns/wl");
	placement_unbind_pod(p, "ns/a");
	assert_int_equal(usage(p, "big").whole_free_gpus, 48);
	const char *g = gpus(p, "big");
	for (const char *c = g; *c; c += strcspn(c, ",") + (c[strcspn(c, ",")] ? 1 : 0))
		assert_int_equal(atoi(c), 1000);
	placement_free(p);
}

/* A node muster can't model is never dropped silently: the reason stays with its name, plans
 * that find no layout say which nodes they couldn't use, and setting the node again (or
 * removing it) forgets it. */
static void test_refused_nodes_are_named(void **state)
{
	struct placement *p = new_p();
	node(p, "gpu-1", CORES(64), 8);
	bind(p, "ns/on-huge", "huge", CORES(1), 1000);
	node(p, "huge", CORES(64), 8);
	assert_null(placement_node_refusal(p, "huge"));
	int64_t alloc[3] = { CORES(64), GI(64), (PLC_MAX_GPUS + 1) * 1000 };
	struct plc_node_spec s = { .name = "huge",
				   .schedulable = 1,
				   .n_resources = 3,
				   .resources = RN,
				   .allocatable = alloc };
	assert_int_equal(placement_set_node(p, &s), -EINVAL);
	assert_string_equal(placement_node_refusal(p, "huge"),
			    "1025 nvidia.com/gpu is more than the 1024 GPUs muster models on one "
			    "node");
	/* Out of the model, as if removed; its bound pod is remembered. */
	struct plc_node_usage u;
	assert_int_equal(placement_node_usage(p, "huge", &u), -ENOENT);
	assert_int_equal(placement_refuse_node(p, "odd",
					       "status.allocatable.cpu: invalid quantity \"x\""),
			 0);
	struct rb b;
	struct plc_plan pl;
	char why[1024];
	req(&b, 9, CORES(1), 1000);
	assert_int_equal(plan(p, &b, &pl, why, sizeof(why)), 1);
	assert_string_equal(why,
			    "no node layout fits 9 pods of {cpu: 1, nvidia.com/gpu: 1}: at most 8 "
			    "fit on the 1 node they may use; node huge not used: 1025 "
			    "nvidia.com/gpu is more than the 1024 GPUs muster models on one "
			    "node; node odd not used: status.allocatable.cpu: invalid quantity "
			    "\"x\"");
	/* Beyond three, a count. */
	placement_refuse_node(p, "a", "r");
	placement_refuse_node(p, "b", "r");
	assert_int_equal(plan(p, &b, &pl, why, sizeof(why)), 1);
	assert_non_null(
		strstr(why, "; node a not used: r; node b not used: r; node huge not used: "));
	assert_non_null(strstr(why, "node; 1 more nodes not used"));
	/* Read well again: modelled, with its pod counted; removing forgets a refusal. */
	node(p, "huge", CORES(64), 8);
	assert_null(placement_node_refusal(p, "huge"));
	assert_int_equal(usage(p, "huge").gpu_free, 7000);
	placement_remove_node(p, "odd");
	assert_null(placement_node_refusal(p, "odd"));
	/* Specs that can't be modelled are refused by name, too. */
	int64_t neg[3] = { -1, 0, 0 };
	s.allocatable = neg;
	assert_int_equal(placement_set_node(p, &s), -EINVAL);
	assert_string_equal(placement_node_refusal(p, "huge"), "allocatable cpu is negative");
	assert_int_equal(placement_refuse_node(p, "", "r"), -EINVAL);
	assert_int_equal(placement_refuse_node(p, "x", NULL), -EINVAL);
	placement_free(p);
}

/* --- FGD and baselines ------------------------------------------------------------------------ */

static void test_fgd_choice_hand_computed(void **state)
{
	/*
	 * Mix: one shape, a 0.6-GPU share. Node a has a GPU with 700 free, b one with 1000 (their
	 * other GPUs are taken). A 0.4 pod:
	 *   on a: 700 -> 300. Before, 700 >= 600 serves the shape (F 0); after, 300 can't
	 *         (F 300): ΔF = +300.
	 *   on b: 1000 -> 600, which still serves it: ΔF = 0.
	 * FGD takes b; best fit (least GPU left) takes a.
	 */
	struct placement *p = new_p();
	node(p, "a", CORES(8), 2);
	node(p, "b", CORES(8), 2);
	bind(p, "ns/a1", "a", 0, 1000);
	bind(p, "ns/a2", "a", 0, 300);
	bind(p, "ns/b1", "b", 0, 1000);
	assert_string_equal(gpus(p, "a"), "0,700");
	struct plc_shape mix[] = { { .cpu = 0, .gpu = 600, .weight = 5 } };
	assert_int_equal(placement_set_mix(p, mix, 1), 0);
	struct rb r;
	struct plc_plan pl;
	req(&r, 1, 0, 400);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "b:1");
	r.r.policy = PLC_BEST_FIT;
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "a:1");
	/* Without a mix, PLC_MUSTER is best fit. */
	assert_int_equal(placement_set_mix(p, NULL, 0), 0);
	r.r.policy = PLC_MUSTER;
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "a:1");
	/* A shape needing more cpu than b has left: on b the shape can't be placed at all, so
	 * all of b's free GPU counts (1000 before, 600 after: ΔF -400); on a it still fits
	 * before (F 0) and not after (300): +300. */
	struct plc_shape mix2[] = { { .cpu = CORES(4), .gpu = 600, .weight = 1 } };
	assert_int_equal(placement_set_mix(p, mix2, 1), 0);
	bind(p, "ns/bcpu", "b", CORES(5), 0);
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "b:1");
	assert_int_equal(placement_set_mix(p, (struct plc_shape[]){ { 0, 100, -1 } }, 1), -EINVAL);
	placement_free(p);
}

static void test_baselines(void **state)
{
	struct placement *p = new_p();
	node_full(p, "a", CORES(16), GI(64), 4, NULL, 0, NULL, 0, 1);
	node_full(p, "b", CORES(32), GI(64), 4, NULL, 0, NULL, 0, 1);
	node_full(p, "c", CORES(32), GI(256), 4, NULL, 0, NULL, 0, 1);
	node_full(p, "full", CORES(32), GI(256), 1, NULL, 0, NULL, 0, 1);
	bind(p, "ns/x", "b", CORES(2), 2000);
	bind(p, "ns/y", "full", 0, 1000);
	struct rb r;
	struct plc_plan pl;
	req(&r, 1, CORES(1), 1000);
	r.r.policy = PLC_BEST_FIT; /* least of cpu and GPU left: b, 0.5*29/32 + 0.5*1/4 */
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "b:1");
	req(&r, 1, CORES(1), 0);
	r.r.policy = PLC_BEST_FIT; /* CPU-only: least of cpu and GPU left (shares of 32 cores
				    * and 4 GPUs): full, 0.5*31/32 + 0 */
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "full:1");
	req(&r, 1, CORES(1), 1000);
	r.r.policy = PLC_SPREAD; /* emptiest on cpu and memory: c */
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "c:1");
	/* Several pods one by one, each seeing the one before. */
	req(&r, 3, CORES(1), 1000);
	r.r.policy = PLC_BEST_FIT;
	assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
	assert_string_equal(slots(&pl), "b:2 a:1");
	assert_int_equal(usage(p, "b").whole_free_gpus, 2); /* planning reserved nothing */
	req(&r, 13, CORES(1), 1000);
	r.r.policy = PLC_SPREAD;
	char why[300];
	assert_int_equal(plan(p, &r, &pl, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "at most 10 fit on the 4 nodes"));
	/* Random: seeded, uniform over feasible nodes, never an infeasible one. */
	req(&r, 1, CORES(1), 1000);
	r.r.policy = PLC_RANDOM;
	int seen[3] = { 0 };
	placement_set_seed(p, 42);
	char first[8][8];
	for (int i = 0; i < 300; i++) {
		assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
		assert_int_equal(pl.n_slots, 1);
		assert_string_not_equal(pl.slots[0].node, "full");
		seen[pl.slots[0].node[0] - 'a']++;
		if (i < 8)
			snprintf(first[i], sizeof(first[i]), "%s", pl.slots[0].node);
	}
	for (int i = 0; i < 3; i++)
		assert_true(seen[i] > 60);
	placement_set_seed(p, 42);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(plan(p, &r, &pl, NULL, 0), 0);
		assert_string_equal(pl.slots[0].node, first[i]);
	}
	placement_free(p);
}

/* --- property test ---------------------------------------------------------------------------- */

#define PN 4 /* nodes */
#define PG 3 /* GPUs at most per node */

struct pnode_m {
	char name[8];
	int present;
	int gpus;
	int64_t cpu;
	char rack[8]; /* "" = unlabelled */
};

struct ppod_m {
	char key[16];
	int node;
	int64_t cpu, gpu;
	int wl; /* -1: none */
	int live;
};

struct pwl_m {
	char name[16];
	int reserved;
	int64_t cpu, gpu;
	int n_slots;
	int slot_node[PN];
	int64_t slot_left[PN]; /* virtual pods left per slot */
};

struct world {
	struct placement *p;
	struct pnode_m n[PN];
	struct ppod_m pods[64];
	int npods;
	struct pwl_m w[6];
	uint64_t rng;
};

static uint64_t rnd(struct world *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int node_index(const char *name)
{
	return name[1] - '0';
}

static void w_set_node(struct world *w, int i)
{
	struct pnode_m *m = &w->n[i];
	struct quota_kv l[] = { { "rack", m->rack } };
	node_full(w->p, m->name, m->cpu, GI(64), m->gpus, l, m->rack[0] ? 1 : 0, NULL, 0, 1);
	m->present = 1;
}

/* The model's expected free cpu and GPU milli on node i: bound pods plus virtual pods. */
static void expect_free(const struct world *w, int i, int64_t *cpu, int64_t *gpu)
{
	*cpu = w->n[i].cpu;
	*gpu = (int64_t)w->n[i].gpus * 1000;
	for (int k = 0; k < w->npods; k++) {
		const struct ppod_m *q = &w->pods[k];
		if (!q->live || q->node != i)
			continue;
		*cpu -= q->cpu;
		*gpu -= q->gpu < 1000 ? q->gpu : (q->gpu + 999) / 1000 * 1000;
	}
	for (int k = 0; k < 6; k++) {
		const struct pwl_m *r = &w->w[k];
		for (int s = 0; r->reserved && s < r->n_slots; s++) {
			if (r->slot_node[s] != i)
				continue;
			*cpu -= r->slot_left[s] * r->cpu;
			*gpu -= r->slot_left[s] *
				(r->gpu < 1000 ? r->gpu : (r->gpu + 999) / 1000 * 1000);
		}
	}
}

static void check_world(struct world *w)
{
	for (int i = 0; i < PN; i++) {
		if (!w->n[i].present)
			continue;
		int64_t cpu, gpu, f[PLC_MAX_GPUS];
		expect_free(w, i, &cpu, &gpu);
		struct plc_node_usage u = usage(w->p, w->n[i].name);
		assert_int_equal(u.cpu_free, cpu);
		assert_int_equal(u.gpu_free, gpu);
		assert_true(u.cpu_free >= 0);
		int n = placement_node_gpus(w->p, w->n[i].name, f, PLC_MAX_GPUS);
		assert_int_equal(n, w->n[i].gpus);
		for (int g = 0; g < n; g++)
			assert_true(f[g] >= 0 && f[g] <= 1000);
	}
}

/* Brute force: can count pods of (cpu, gpu) be placed on the given nodes' free GPUs and cpu? */
static int brute(int64_t *cpu, int64_t (*g)[PG], const int *ng, const int *use, int count,
		 int64_t pc, int64_t pg, int from)
{
	if (count == 0)
		return 1;
	for (int i = from; i < PN; i++) {
		if (!use[i] || cpu[i] < pc)
			continue;
		cpu[i] -= pc;
		if (pg == 0) {
			int ok = brute(cpu, g, ng, use, count - 1, pc, pg, i);
			cpu[i] += pc;
			if (ok)
				return 1;
			continue;
		}
		if (pg < 1000) {
			for (int k = 0; k < ng[i]; k++) {
				if (g[i][k] < pg)
					continue;
				g[i][k] -= pg;
				int ok = brute(cpu, g, ng, use, count - 1, pc, pg, i);
				g[i][k] += pg;
				if (ok) {
					cpu[i] += pc;
					return 1;
				}
			}
		} else {
			int want = (int)((pg + 999) / 1000), took[PG] = { 0 }, t = 0;
			for (int k = 0; k < ng[i] && t < want; k++)
				if (g[i][k] == 1000) {
					took[k] = 1;
					g[i][k] = 0;
					t++;
				}
			int ok = t == want && brute(cpu, g, ng, use, count - 1, pc, pg, i);
			for (int k = 0; k < ng[i]; k++)
				if (took[k])
					g[i][k] = 1000;
			if (ok) {
				cpu[i] += pc;
				return 1;
			}
		}
		cpu[i] += pc;
	}
	return 0;
}

static int brute_world(struct world *w, int count, int64_t pc, int64_t pg, const char *rack)
{
	int64_t cpu[PN], g[PN][PG];
	int ng[PN], use[PN];
	for (int i = 0; i < PN; i++) {
		struct plc_node_usage u;
		int64_t f[PLC_MAX_GPUS];
		use[i] = w->n[i].present && (!rack || !strcmp(w->n[i].rack, rack));
		ng[i] = 0;
		if (!w->n[i].present)
			continue;
		assert_int_equal(placement_node_usage(w->p, w->n[i].name, &u), 0);
		cpu[i] = u.cpu_free;
		ng[i] = placement_node_gpus(w->p, w->n[i].name, f, PLC_MAX_GPUS);
		for (int k = 0; k < ng[i]; k++)
			g[i][k] = f[k];
	}
	return brute(cpu, g, ng, use, count, pc, pg, 0);
}

static int n_plans, n_nolayout, n_reserves, n_binds;

static void prop_plan(struct world *w)
{
	static const int64_t gpu_sizes[] = { 0, 250, 500, 600, 1000, 2000, 3000 };
	int wi = (int)(rnd(w) % 6);
	struct pwl_m *m = &w->w[wi];
	int count = 1 + (int)(rnd(w) % 5);
	int64_t pc = (int64_t)(rnd(w) % 4) * 1000, pg = gpu_sizes[rnd(w) % 7];
	enum plc_policy pol = rnd(w) % 3 ? PLC_MUSTER : (enum plc_policy)(1 + rnd(w) % 3);
	static const char *const lv[] = { "rack" };
	struct plc_topology req_topo = { .n_levels = 1, .levels = lv, .required = "rack" };
	struct plc_topology pref_topo = { .n_levels = 1, .levels = lv, .preferred = "rack" };
	int topo = pol == PLC_MUSTER ? (int)(rnd(w) % 3) : 0;
	struct rb b;
	struct plc_plan pl;
	char why[300];
	req(&b, count, pc, pg);
	b.r.workload = m->name;
	b.r.policy = pol;
	b.r.topology = topo == 1 ? &req_topo : topo == 2 ? &pref_topo : NULL;
	int rc = plan(w->p, &b, &pl, why, sizeof(why));
	assert_true(rc == 0 || rc == 1);
	n_plans++;
	if (rc == 1) {
		n_nolayout++;
		assert_true(strlen(why) > 0 && strlen(why) < 300);
		if (topo == 1) {
			for (int i = 0; i < PN; i++)
				if (w->n[i].present && w->n[i].rack[0])
					assert_false(brute_world(w, count, pc, pg, w->n[i].rack));
		} else {
			assert_false(brute_world(w, count, pc, pg, NULL));
		}
		return;
	}
	int64_t total = 0;
	for (size_t s = 0; s < pl.n_slots; s++) {
		total += pl.slots[s].count;
		if (topo == 1)
			assert_string_equal(w->n[node_index(pl.slots[s].node)].rack,
					    w->n[node_index(pl.slots[0].node)].rack);
	}
	assert_int_equal(total, count);
	if (rnd(w) % 4 == 0)
		return; /* planned, never reserved */
	/* Reserve it: every node must still be within its capacity (checked by check_world). */
	assert_int_equal(placement_reserve(w->p, m->name, "main", &b.ps, &pl), 0);
	n_reserves++;
	m->reserved = 1;
	m->cpu = pc;
	m->gpu = pg;
	m->n_slots = (int)pl.n_slots;
	for (size_t s = 0; s < pl.n_slots; s++) {
		m->slot_node[s] = node_index(pl.slots[s].node);
		m->slot_left[s] = pl.slots[s].count;
	}
	/* Pods of the podSet already bound took their places at once. */
	for (int k = 0; k < w->npods; k++) {
		struct ppod_m *q = &w->pods[k];
		if (!q->live || q->wl != wi)
			continue;
		int s = -1;
		for (int t = 0; t < m->n_slots; t++)
			if (m->slot_node[t] == q->node && m->slot_left[t] > 0)
				s = t;
		for (int t = m->n_slots - 1; s < 0 && t >= 0; t--)
			if (m->slot_left[t] > 0)
				s = t;
		if (s >= 0)
			m->slot_left[s]--;
	}
}

/* Whether one pod of (cpu, gpu) fits on node i now, from its reported free cpu and GPUs. */
static int fits_on(struct world *w, int i, int64_t cpu, int64_t gpu)
{
	int64_t c, f[PLC_MAX_GPUS];
	struct plc_node_usage u;
	if (placement_node_usage(w->p, w->n[i].name, &u) != 0)
		return 0;
	c = u.cpu_free;
	int n = placement_node_gpus(w->p, w->n[i].name, f, PLC_MAX_GPUS);
	if (c < cpu)
		return 0;
	if (gpu == 0)
		return 1;
	int whole = 0;
	for (int g = 0; g < n; g++) {
		if (gpu < 1000 && f[g] >= gpu)
			return 1;
		whole += f[g] == 1000;
	}
	return gpu >= 1000 && whole >= (gpu + 999) / 1000;
}

static void prop_bind(struct world *w)
{
	if (w->npods == 64)
		return;
	int wi = (int)(rnd(w) % 7) - 1;
	struct pwl_m *m = wi >= 0 ? &w->w[wi] : NULL;
	int64_t pc = m && m->reserved ? m->cpu : (int64_t)(rnd(w) % 3) * 1000;
	int64_t pg = m && m->reserved ? m->gpu : (int64_t)(rnd(w) % 3) * 500;
	int on = (int)(rnd(w) % PN);
	int planned = -1;
	/* A reserved pod lands where planned (its virtual pod frees the room first) or, if it
	 * fits there anyway, anywhere. */
	for (int s = 0; m && m->reserved && s < m->n_slots; s++)
		if (m->slot_left[s] > 0 && (planned < 0 || rnd(w) % 2))
			planned = s;
	if (planned >= 0 && rnd(w) % 3)
		on = m->slot_node[planned];
	else if (!w->n[on].present || !fits_on(w, on, pc, pg))
		return;
	struct ppod_m *q = &w->pods[w->npods];
	snprintf(q->key, sizeof(q->key), "ns/p%d", w->npods);
	q->node = on;
	q->cpu = pc;
	q->gpu = pg;
	q->wl = wi;
	q->live = 1;
	w->npods++;
	bind_wl(w->p, q->key, w->n[on].name, pc, pg, m ? m->name : NULL, m ? "main" : NULL);
	n_binds++;
	if (m && m->reserved) {
		int s = -1;
		for (int t = 0; t < m->n_slots; t++)
			if (m->slot_node[t] == on && m->slot_left[t] > 0)
				s = t;
		for (int t = m->n_slots - 1; s < 0 && t >= 0; t--)
			if (m->slot_left[t] > 0)
				s = t;
		if (s >= 0)
			m->slot_left[s]--;
	}
}

static void prop_step(struct world *w)
{
	switch (rnd(w) % 11) {
	case 0:
	case 1:
	case 2:
		prop_plan(w);
		break;
	case 3:
	case 4:
	case 5:
		prop_bind(w);
		break;
	case 6: { /* a pod ends */
		int k = w->npods ? (int)(rnd(w) % (uint64_t)w->npods) : -1;
		if (k >= 0 && w->pods[k].live) {
			placement_unbind_pod(w->p, w->pods[k].key);
			w->pods[k].live = 0;
		}
		break;
	}
	case 7:
	case 10: { /* a workload ends */
		struct pwl_m *m = &w->w[rnd(w) % 6];
		placement_release(w->p, m->name);
		m->reserved = 0;
		break;
	}
	case 8: { /* an update of a bound pod: same key, same everything */
		int k = w->npods ? (int)(rnd(w) % (uint64_t)w->npods) : -1;
		if (k >= 0 && w->pods[k].live) {
			struct ppod_m *q = &w->pods[k];
			bind_wl(w->p, q->key, w->n[q->node].name, q->cpu, q->gpu,
				q->wl >= 0 ? w->w[q->wl].name : NULL, q->wl >= 0 ? "main" : NULL);
		}
		break;
	}
	default: { /* a node's spec is sent again, unchanged; or it goes away, or comes back */
		int i = (int)(rnd(w) % PN);
		if (w->n[i].present && rnd(w) % 4 == 0) {
			placement_remove_node(w->p, w->n[i].name);
			w->n[i].present = 0;
			/* Its reservation slots are dropped; its pods wait for it. */
			for (int k = 0; k < 6; k++)
				for (int t = 0; t < w->w[k].n_slots; t++)
					if (w->w[k].slot_node[t] == i)
						w->w[k].slot_left[t] = 0;
		} else {
			w_set_node(w, i);
		}
		break;
	}
	}
}

static void test_property_against_model_and_brute_force(void **state)
{
	uint64_t seed = (uint64_t)time(NULL);
	const char *env = getenv("MUSTER_SEED");
	if (env)
		seed = strtoull(env, NULL, 10);
	int worlds = 300;
	printf("[ placement property ] seed %llu (MUSTER_SEED=<seed> replays it)\n",
	       (unsigned long long)seed);
	for (int wn = 0; wn < worlds; wn++) {
		struct world w;
		if (getenv("MUSTER_VERBOSE"))
			printf("world %d\n", wn);
		memset(&w, 0, sizeof(w));
		w.rng = seed + (uint64_t)wn * 7919;
		w.p = new_p();
		static const char *const racks[] = { "r1", "r2", "" };
		for (int i = 0; i < PN; i++) {
			snprintf(w.n[i].name, sizeof(w.n[i].name), "n%d", i);
			w.n[i].gpus = (int)(rnd(&w) % (PG + 1));
			w.n[i].cpu = (int64_t)(4 + rnd(&w) % 12) * 1000;
			snprintf(w.n[i].rack, sizeof(w.n[i].rack), "%s", racks[rnd(&w) % 3]);
			w_set_node(&w, i);
		}
		for (int k = 0; k < 6; k++)
			snprintf(w.w[k].name, sizeof(w.w[k].name), "ns/w%d", k);
		if (rnd(&w) % 2) {
			struct plc_shape mix[] = {
				{ 1000, 500, 2 }, { 0, 1000, 1 }, { 2000, 250, 1 }, { 1000, 0, 1 }
			};
			assert_int_equal(placement_set_mix(w.p, mix, 4), 0);
		}
		for (int step = 0; step < 60; step++) {
			prop_step(&w);
			check_world(&w);
		}
		placement_free(w.p);
	}
	printf("[ placement property ] %d worlds: %d plans (%d without a layout, each confirmed by "
	       "brute force), %d reserved, %d binds\n",
	       worlds, n_plans, n_nolayout, n_reserves, n_binds);
}

/* --- speed ------------------------------------------------------------------------------------ */

/* A synthetic replay the size of openb: 1,213 nodes, 10,000 one-pod plans and binds, a mix of
 * 100 shapes. Prints the time; sanitizers make it several times slower than a release build.
 * With mig, every fourth node is an 8 x H100 under MIG "single" (56 GPUs) instead: the
 * fragmentation measure must stay cheap on nodes with many GPUs. */
static void speed_synthetic_replay(int mig)
{
	struct placement *p = new_p();
	struct world w = { .rng = 7 };
	char name[32];
	for (int i = 0; i < 1213; i++) {
		snprintf(name, sizeof(name), "node-%04d", i);
		int g = i % 2 ? 8 : (i % 4 ? 2 : mig ? 56 : 4);
		node(p, name, CORES(g >= 8 ? 96 : 64), g);
	}
	struct plc_shape mix[100];
	static const int64_t gs[] = { 0,   100,  250,  300,  460,  500, 650,
				      810, 1000, 1000, 2000, 4000, 8000 };
	for (int i = 0; i < 100; i++) {
		mix[i].cpu = (int64_t)(1 + rnd(&w) % 16) * 1000;
		mix[i].gpu = gs[rnd(&w) % 13];
		mix[i].weight = (double)(1 + rnd(&w) % 50);
	}
	assert_int_equal(placement_set_mix(p, mix, 100), 0);
	clock_t t0 = clock();
	int placed = 0;
	for (int i = 0; i < 10000; i++) {
		const struct plc_shape *s = &mix[rnd(&w) % 100];
		struct rb b;
		struct plc_plan pl;
		req(&b, 1, s->cpu, s->gpu);
		if (plan(p, &b, &pl, NULL, 0) != 0)
			continue;
		snprintf(name, sizeof(name), "ns/p%d", i);
		bind(p, name, pl.slots[0].node, s->cpu, s->gpu);
		placed++;
	}
	double sec = (double)(clock() - t0) / CLOCKS_PER_SEC;
	struct plc_totals t;
	placement_totals(p, &t);
	printf("[ placement speed ] 10000 plans+binds over 1213 nodes%s, 100 shapes: %.3f s, "
	       "%d placed, %.1f%% GPU allocated\n",
	       mig ? " (303 with 56 GPUs)" : "", sec, placed,
	       100.0 * (double)t.gpu_allocated / (double)t.gpu_capacity);
	assert_true(placed > 1000);
	placement_free(p);
}

static void test_speed_synthetic_replay(void **state)
{
	speed_synthetic_replay(0);
	speed_synthetic_replay(1);
}

/* --- closest nodes ---------------------------------------------------------------------------- */

static void check_closest(const struct plc_closest *c, const char *node, int64_t pods,
			  int64_t cpu_free, int64_t cpu_short, int64_t gpu_free, int64_t gpu_short)
{
	assert_string_equal(c->node, node);
	assert_int_equal(c->pods, pods);
	assert_int_equal(c->n, 2);
	assert_string_equal(c->resources[0], "cpu");
	assert_string_equal(c->resources[1], GPU);
	assert_int_equal(c->free[0], cpu_free);
	assert_int_equal(c->short_by[0], cpu_short);
	assert_int_equal(c->free[1], gpu_free);
	assert_int_equal(c->short_by[1], gpu_short);
}

/* One pod of 8 GPUs and 4 cores: ranked by the share of it a node has free (its scarcest
 * resource), then by free GPUs; tainted nodes are not candidates. */
static void test_closest_single_pod(void **state)
{
	(void)state;
	struct placement *p = new_p();
	struct quota_taint t = { "dedicated", "other", "NoSchedule", 0 };
	node(p, "n-a", CORES(64), 8);
	bind(p, "ns/a", "n-a", CORES(2), 2000);
	node(p, "n-b", CORES(64), 8);
	bind(p, "ns/b", "n-b", CORES(2), 6000);
	node(p, "n-c", CORES(64), 4);
	node_full(p, "n-d", CORES(64), GI(1024), 8, NULL, 0, &t, 1, 1);
	node(p, "n-e", CORES(2), 8);
	node(p, "n-f", CORES(64), 0);
	node(p, "n-g", CORES(64), 8);
	for (int i = 0; i < 8; i++) {
		char key[16];
		snprintf(key, sizeof(key), "ns/g%d", i);
		bind(p, key, "n-g", 0, 700); /* 300 left on each GPU, none whole */
	}
	struct rb b;
	req(&b, 1, CORES(4), 8000);
	struct plc_plan pl;
	assert_int_equal(plan(p, &b, &pl, NULL, 0), 1);

	struct plc_closest c[PLC_CLOSEST_MAX + 1];
	assert_int_equal(placement_closest(p, &b.r, c, 99), PLC_CLOSEST_MAX);
	check_closest(&c[0], "n-a", 0, CORES(62), 0, 6000, 2000);
	assert_true(c[0].share == 0.75);
	check_closest(&c[1], "n-e", 0, CORES(2), CORES(2), 8000, 0); /* 0.5, 8 GPUs free */
	assert_true(c[1].share == 0.5);
	check_closest(&c[2], "n-c", 0, CORES(64), 0, 4000, 4000); /* 0.5, 4 GPUs free */
	check_closest(&c[3], "n-b", 0, CORES(62), 0, 2000, 6000);
	check_closest(&c[4], "n-g", 0, CORES(64), 0, 2400, 8000); /* before n-f: more free */
	assert_true(c[4].share == 0);

	assert_int_equal(placement_closest(p, &b.r, c, 2), 2);
	assert_string_equal(c[1].node, "n-e");
	assert_int_equal(placement_closest(p, &b.r, c, 0), 0);
	placement_free(p);
}

/* A gang of 5 pods of 2 GPUs: the most pods first; what each lacks is for one pod more. A
 * node that takes them all lacks nothing. */
static void test_closest_gang(void **state)
{
	(void)state;
	struct placement *p = new_p();
	node(p, "n1", CORES(64), 8);
	bind(p, "ns/x", "n1", 0, 5000); /* 3 GPUs left: 1 pod, the next lacks 1 GPU */
	node(p, "n2", CORES(64), 4); /* 2 pods */
	node(p, "n3", CORES(64), 2); /* 1 pod, the next lacks 2 GPUs */
	struct rb b;
	req(&b, 5, CORES(1), 2000);
	struct plc_closest c[PLC_CLOSEST_MAX];
	assert_int_equal(placement_closest(p, &b.r, c, PLC_CLOSEST_MAX), 3);
	check_closest(&c[0], "n2", 2, CORES(64), 0, 4000, 2000);
	check_closest(&c[1], "n1", 1, CORES(64), 0, 3000, 1000);
	assert_true(c[1].share == 0.5);
	check_closest(&c[2], "n3", 1, CORES(64), 0, 2000, 2000);
	assert_true(c[2].share == 0);

	req(&b, 2, CORES(1), 2000);
	assert_int_equal(placement_closest(p, &b.r, c, 1), 1);
	check_closest(&c[0], "n2", 2, CORES(64), 0, 4000, 0);
	assert_true(c[0].share == 1.0);
	placement_free(p);
}

/* A share of one GPU lacks what the best GPU misses; a resource no node has is all short. */
static void test_closest_shared_gpu_and_unknown_resource(void **state)
{
	(void)state;
	struct placement *p = new_p();
	node(p, "s1", CORES(8), 1);
	bind(p, "ns/s1", "s1", 0, 500);
	node(p, "s2", CORES(8), 2);
	bind(p, "ns/s2a", "s2", 0, 700);
	bind(p, "ns/s2b", "s2", 0, 700);
	struct rb b;
	req(&b, 1, CORES(1), 600);
	struct plc_closest c[PLC_CLOSEST_MAX];
	assert_int_equal(placement_closest(p, &b.r, c, PLC_CLOSEST_MAX), 2);
	check_closest(&c[0], "s1", 0, CORES(8), 0, 500, 100);
	check_closest(&c[1], "s2", 0, CORES(8), 0, 600, 300);
	assert_true(c[1].share == 0.5);

	static const char *const odd[] = { "cpu", "example.com/fpga" };
	int64_t v[] = { CORES(1), 1000 };
	b.ps.n_requests = 2;
	b.ps.resources = odd;
	b.ps.per_pod = v;
	assert_int_equal(placement_closest(p, &b.r, c, PLC_CLOSEST_MAX), 2);
	assert_int_equal(c[0].pods, 0);
	assert_string_equal(c[0].resources[1], "example.com/fpga");
	assert_int_equal(c[0].free[1], 0);
	assert_int_equal(c[0].short_by[1], 1000);
	assert_true(c[0].share == 0);

	assert_int_equal(placement_closest(p, NULL, c, 1), -EINVAL);
	b.r.count = -1;
	assert_int_equal(placement_closest(p, &b.r, c, 1), -EINVAL);
	placement_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_labels_selector_unschedulable),
		cmocka_unit_test(test_filter_affinity_operators),
		cmocka_unit_test(test_filter_taints_and_tolerations),
		cmocka_unit_test(test_gpu_shares_and_whole_gpus),
		cmocka_unit_test(test_plain_resources_and_unknown_resource),
		cmocka_unit_test(test_node_same_and_labels),
		cmocka_unit_test(test_gpu_resource_name),
		cmocka_unit_test(test_pack_five_two_gpu_pods_four_and_one),
		cmocka_unit_test(test_pack_single_pods_share_one_node),
		cmocka_unit_test(test_pack_fewest_nodes_fullest_first),
		cmocka_unit_test(test_topology_required_picks_the_rack_that_fits),
		cmocka_unit_test(test_topology_preferred_widens),
		cmocka_unit_test(test_cpu_pods_avoid_gpu_nodes),
		cmocka_unit_test(test_reservation_holds_and_binds_consume_it),
		cmocka_unit_test(test_reservation_replaced_and_bound_pods_counted_once),
		cmocka_unit_test(test_pod_on_unknown_node_counts_when_it_appears),
		cmocka_unit_test(test_node_replace_and_remove),
		cmocka_unit_test(test_mig_56_gpu_node_takes_single_pods),
		cmocka_unit_test(test_mig_gang_of_eight_fills_one_node),
		cmocka_unit_test(test_pods_with_many_gpus_give_back_exactly),
		cmocka_unit_test(test_refused_nodes_are_named),
		cmocka_unit_test(test_fgd_choice_hand_computed),
		cmocka_unit_test(test_baselines),
		cmocka_unit_test(test_property_against_model_and_brute_force),
		cmocka_unit_test(test_speed_synthetic_replay),
		cmocka_unit_test(test_closest_single_pod),
		cmocka_unit_test(test_closest_gang),
		cmocka_unit_test(test_closest_shared_gpu_and_unknown_resource),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
