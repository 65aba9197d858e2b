/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for core/strmap and core/quota: the hash map, flavor assignment and charges. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/quota.h"
#include "core/strmap.h"

#define MILLI(x) ((int64_t)(x) * 1000)
#define GI(x) ((int64_t)(x) * 1024 * 1024 * 1024 * 1000)

/* ---------------------------------------------------------------- strmap */

static void test_strmap_empty_get_remove_return_null(void **state)
{
	struct strmap m;
	strmap_init(&m);
	assert_null(strmap_get(&m, "a"));
	assert_null(strmap_remove(&m, "a"));
	assert_int_equal(m.len, 0);
	strmap_release(&m, NULL);
}

static void test_strmap_put_get_replace_remove(void **state)
{
	struct strmap m;
	int a = 1, b = 2, c = 3;
	void *old = &c;
	strmap_init(&m);
	assert_int_equal(strmap_put(&m, "alpha", &a, &old), 0);
	assert_null(old);
	assert_int_equal(strmap_put(&m, "beta", &b, NULL), 0);
	assert_ptr_equal(strmap_get(&m, "alpha"), &a);
	assert_ptr_equal(strmap_get(&m, "beta"), &b);
	assert_null(strmap_get(&m, "gamma"));
	assert_int_equal(m.len, 2);

	assert_int_equal(strmap_put(&m, "alpha", &c, &old), 0);
	assert_ptr_equal(old, &a);
	assert_ptr_equal(strmap_get(&m, "alpha"), &c);
	assert_int_equal(m.len, 2); /* a replace is not an insert */

	assert_ptr_equal(strmap_remove(&m, "alpha"), &c);
	assert_null(strmap_get(&m, "alpha"));
	assert_null(strmap_remove(&m, "alpha"));
	assert_int_equal(m.len, 1);
	assert_ptr_equal(strmap_get(&m, "beta"), &b);
	strmap_release(&m, NULL);
}

static void test_strmap_key_is_copied(void **state)
{
	struct strmap m;
	char key[] = "mutable";
	int v = 7;
	strmap_init(&m);
	assert_int_equal(strmap_put(&m, key, &v, NULL), 0);
	key[0] = 'X';
	assert_ptr_equal(strmap_get(&m, "mutable"), &v);
	assert_null(strmap_get(&m, key));
	strmap_release(&m, NULL);
}

static void test_strmap_empty_key_and_null_value(void **state)
{
	struct strmap m;
	int v;
	strmap_init(&m);
	assert_int_equal(strmap_put(&m, "", &v, NULL), 0);
	assert_ptr_equal(strmap_get(&m, ""), &v);
	/* A NULL value is stored like any other (get can't tell it from absence, by design). */
	assert_int_equal(strmap_put(&m, "nothing", NULL, NULL), 0);
	assert_int_equal(m.len, 2);
	assert_null(strmap_remove(&m, "nothing"));
	assert_int_equal(m.len, 1);
	strmap_release(&m, NULL);
}

static int freed_count;
static void count_free(void *p)
{
	freed_count++;
	free(p);
}

static void test_strmap_release_frees_each_value_once(void **state)
{
	struct strmap m;
	strmap_init(&m);
	for (int i = 0; i < 100; i++) {
		char key[16];
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(strmap_put(&m, key, malloc(8), NULL), 0);
	}
	freed_count = 0;
	strmap_release(&m, count_free);
	assert_int_equal(freed_count, 100);
	assert_int_equal(m.len, 0);
	assert_null(m.slots);
}

/* Values are the key's index + 1 encoded as a pointer, so no allocation is needed. */
#define IDX_PTR(i) ((void *)(uintptr_t)((i) + 1))

static void key_of(char *buf, size_t size, size_t i)
{
	snprintf(buf, size, "ns-%zu/workload-%zu", i % 97, i);
}

static void assert_map_matches(const struct strmap *m, const unsigned char *present, size_t n)
{
	size_t live = 0;
	for (size_t i = 0; i < n; i++) {
		char key[64];
		key_of(key, sizeof(key), i);
		void *v = strmap_get(m, key);
		if (present[i]) {
			if (v != IDX_PTR(i))
				fail_msg("key %s lost", key);
			live++;
		} else if (v) {
			fail_msg("key %s should be gone", key);
		}
	}
	assert_int_equal(m->len, live);
	/* Iteration sees exactly the live keys. */
	size_t seen = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			seen++;
	assert_int_equal(seen, live);
}

static void test_strmap_10k_keys_remove_every_other_all_lookups_hold(void **state)
{
	enum { N = 10000 };
	static unsigned char present[N];
	struct strmap m;
	char key[64];
	strmap_init(&m);
	for (size_t i = 0; i < N; i++) {
		key_of(key, sizeof(key), i);
		assert_int_equal(strmap_put(&m, key, IDX_PTR(i), NULL), 0);
		present[i] = 1;
	}
	assert_map_matches(&m, present, N);
	for (size_t i = 0; i < N; i += 2) {
		key_of(key, sizeof(key), i);
		assert_ptr_equal(strmap_remove(&m, key), IDX_PTR(i));
		present[i] = 0;
	}
	assert_map_matches(&m, present, N);
	/* Put the removed half back, then remove everything in reverse. */
	for (size_t i = 0; i < N; i += 2) {
		key_of(key, sizeof(key), i);
		assert_int_equal(strmap_put(&m, key, IDX_PTR(i), NULL), 0);
		present[i] = 1;
	}
	assert_map_matches(&m, present, N);
	for (size_t i = N; i-- > 0;) {
		key_of(key, sizeof(key), i);
		assert_ptr_equal(strmap_remove(&m, key), IDX_PTR(i));
		present[i] = 0;
		if (i % 1000 == 0)
			assert_map_matches(&m, present, N);
	}
	assert_int_equal(m.len, 0);
	strmap_release(&m, NULL);
}

static uint64_t rng_state;
static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static void test_strmap_random_churn_matches_shadow(void **state)
{
	/* Few keys, many removals: long probe runs that wrap around the table end get shifted back
	 * over and over, which is where backward-shift deletion goes wrong if it does. */
	enum { N = 300, OPS = 200000 };
	unsigned char present[N] = { 0 };
	struct strmap m;
	char key[64];
	rng_state = 0x9e3779b97f4a7c15ull;
	strmap_init(&m);
	for (int op = 0; op < OPS; op++) {
		size_t i = rng() % N;
		key_of(key, sizeof(key), i);
		if (rng() % 2) {
			void *old;
			assert_int_equal(strmap_put(&m, key, IDX_PTR(i), &old), 0);
			assert_ptr_equal(old, present[i] ? IDX_PTR(i) : NULL);
			present[i] = 1;
		} else {
			assert_ptr_equal(strmap_remove(&m, key), present[i] ? IDX_PTR(i) : NULL);
			present[i] = 0;
		}
		if (op % 5000 == 0)
			assert_map_matches(&m, present, N);
	}
	assert_map_matches(&m, present, N);
	strmap_release(&m, NULL);
}

/* ---------------------------------------------------------------- quota builders */

static char *xstrdup(const char *s)
{
	char *p = s ? strdup(s) : NULL;
	assert_true(!s || p);
	return p;
}

static struct quota_flavor *mk_flavor(const char *name)
{
	struct quota_flavor *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->name = xstrdup(name);
	return f;
}

static void flavor_label(struct quota_flavor *f, const char *k, const char *v)
{
	f->labels = realloc(f->labels, (f->n_labels + 1) * sizeof(*f->labels));
	assert_non_null(f->labels);
	f->labels[f->n_labels++] = (struct quota_kv){ xstrdup(k), xstrdup(v) };
}

static struct quota_taint mk_taint(const char *k, const char *v, const char *effect, int exists)
{
	return (struct quota_taint){ xstrdup(k), xstrdup(v), xstrdup(effect), exists };
}

static void flavor_taint(struct quota_flavor *f, const char *k, const char *v, const char *effect)
{
	f->taints = realloc(f->taints, (f->n_taints + 1) * sizeof(*f->taints));
	assert_non_null(f->taints);
	f->taints[f->n_taints++] = mk_taint(k, v, effect, 0);
}

static void flavor_toleration(struct quota_flavor *f, const char *k, const char *v,
			      const char *effect, int exists)
{
	f->tolerations = realloc(f->tolerations, (f->n_tolerations + 1) * sizeof(*f->tolerations));
	assert_non_null(f->tolerations);
	f->tolerations[f->n_tolerations++] = mk_taint(k, v, effect, exists);
}

static struct quota_cq *mk_cq(const char *name)
{
	struct quota_cq *cq = calloc(1, sizeof(*cq));
	assert_non_null(cq);
	cq->name = xstrdup(name);
	return cq;
}

/* Adds a group covering the NULL-terminated resources; returns it for cq_flavor. */
static struct quota_group *cq_group(struct quota_cq *cq, const char *const *resources)
{
	cq->groups = realloc(cq->groups, (cq->n_groups + 1) * sizeof(*cq->groups));
	assert_non_null(cq->groups);
	struct quota_group *g = &cq->groups[cq->n_groups++];
	memset(g, 0, sizeof(*g));
	while (resources[g->n_resources])
		g->n_resources++;
	g->resources = calloc(g->n_resources, sizeof(char *));
	assert_non_null(g->resources);
	for (size_t r = 0; r < g->n_resources; r++)
		g->resources[r] = xstrdup(resources[r]);
	return g;
}

/* Adds a flavor with one nominal quota per resource of the group, in the group's order. */
static void cq_flavor(struct quota_group *g, const char *flavor, const int64_t *nominal)
{
	g->flavors = realloc(g->flavors, (g->n_flavors + 1) * sizeof(*g->flavors));
	assert_non_null(g->flavors);
	struct quota_flavor_quota *fq = &g->flavors[g->n_flavors++];
	fq->flavor = xstrdup(flavor);
	fq->nominal = calloc(g->n_resources, sizeof(int64_t));
	assert_non_null(fq->nominal);
	memcpy(fq->nominal, nominal, g->n_resources * sizeof(int64_t));
}

static struct quota_charge *mk_charge(const char *cq)
{
	struct quota_charge *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->cq = xstrdup(cq);
	return c;
}

static void charge_item(struct quota_charge *c, const char *flavor, const char *resource,
			int64_t amount)
{
	c->items = realloc(c->items, (c->n + 1) * sizeof(*c->items));
	assert_non_null(c->items);
	c->items[c->n++] = (struct quota_charge_item){ xstrdup(flavor), xstrdup(resource), amount };
}

/* The charge quota_assign's answer stands for, as the manager records it. */
static struct quota_charge *charge_from(const char *cq, const struct quota_assignment *a)
{
	struct quota_charge *c = mk_charge(cq);
	for (size_t i = 0; i < a->n; i++)
		charge_item(c, a->items[i].flavor, a->items[i].resource, a->items[i].total);
	return c;
}

static int64_t usage_of(const struct quota_model *m, const char *cq, const char *flavor,
			const char *resource)
{
	int64_t nominal, usage;
	const struct quota_cq *q = quota_get_cq(m, cq);
	assert_non_null(q);
	assert_int_equal(quota_cell(q, flavor, resource, &nominal, &usage), 0);
	return usage;
}

static const char *const GPU_RES[] = { "cpu", "memory", "nvidia.com/gpu", NULL };

/*
 * The reference setup: flavors a100 and h100, ClusterQueue "gpu-cq" with one group
 * (cpu, memory, nvidia.com/gpu) and both flavors, a100 first. gpus is each flavor's GPU quota.
 */
static void setup_gpu_model(struct quota_model *m, int64_t a100_gpus, int64_t h100_gpus)
{
	quota_model_init(m);
	struct quota_flavor *a = mk_flavor("a100"), *h = mk_flavor("h100");
	flavor_label(a, "gpu.example.com/model", "a100");
	flavor_label(h, "gpu.example.com/model", "h100");
	assert_int_equal(quota_set_flavor(m, a), 0);
	assert_int_equal(quota_set_flavor(m, h), 0);
	struct quota_cq *cq = mk_cq("gpu-cq");
	struct quota_group *g = cq_group(cq, GPU_RES);
	cq_flavor(g, "a100", (int64_t[]){ MILLI(64), GI(512), MILLI(a100_gpus) });
	cq_flavor(g, "h100", (int64_t[]){ MILLI(64), GI(512), MILLI(h100_gpus) });
	assert_int_equal(quota_set_cq(m, cq), 0);
}

/* A podset of count pods, each 2 CPUs, 16Gi and gpus GPUs. */
struct gang {
	const char *res[3];
	int64_t per_pod[3];
	struct quota_podset ps;
};

static void mk_gang(struct gang *g, int64_t count, int64_t gpus)
{
	memset(g, 0, sizeof(*g));
	g->res[0] = "cpu";
	g->res[1] = "memory";
	g->res[2] = "nvidia.com/gpu";
	g->per_pod[0] = MILLI(2);
	g->per_pod[1] = GI(16);
	g->per_pod[2] = MILLI(gpus);
	g->ps.count = count;
	g->ps.n_requests = 3;
	g->ps.resources = g->res;
	g->ps.per_pod = g->per_pod;
}

static int assign(const struct quota_model *m, const char *cq, const struct quota_podset *ps,
		  struct quota_assignment *out, char *msg, size_t msg_len)
{
	const struct quota_cq *q = quota_get_cq(m, cq);
	assert_non_null(q);
	return quota_assign(m, q, ps, out, msg, msg_len);
}

static const char *flavor_for(const struct quota_assignment *a, const char *resource)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->items[i].resource, resource))
			return a->items[i].flavor;
	return NULL;
}

/* ---------------------------------------------------------------- quota tests */

static void test_quota_gang_of_8_gpus_fits_in_8(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 8, 8);
	mk_gang(&g, 8, 1);
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_int_equal(out.n, 3);
	for (size_t i = 0; i < out.n; i++) {
		assert_string_equal(out.items[i].flavor, "a100");
		assert_int_equal(out.items[i].total, 8 * g.per_pod[i]);
		assert_string_equal(out.items[i].resource, g.res[i]);
	}
	quota_model_release(&m);
}

static void test_quota_gang_with_6_free_enospc_names_resource(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	/* h100 has no GPUs at all, so only a100 is worth waiting for. */
	setup_gpu_model(&m, 8, 0);
	struct quota_charge *c = mk_charge("gpu-cq");
	charge_item(c, "a100", "nvidia.com/gpu", MILLI(2));
	assert_int_equal(quota_charge(&m, "team-a/other", c), 0);
	mk_gang(&g, 8, 1);
	out.n = 99;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -ENOSPC);
	assert_int_equal(out.n, 0);
	assert_non_null(strstr(msg, "nvidia.com/gpu"));
	assert_non_null(strstr(msg, "a100"));
	/* 6 GPUs free, 8 wanted: 2 more needed. */
	if (!strstr(msg, " 2 more"))
		fail_msg("msg: %s", msg);

	/* Once the other workload finishes, the gang fits. */
	quota_uncharge(&m, "team-a/other");
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "nvidia.com/gpu"), "a100");
	quota_model_release(&m);
}

static void test_quota_gang_in_quota_of_4_never_fits_e2big(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 4, 4);
	mk_gang(&g, 8, 1);
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -E2BIG);
	assert_int_equal(out.n, 0);
	assert_non_null(strstr(msg, "nvidia.com/gpu"));
	quota_model_release(&m);
}

static void test_quota_first_flavor_full_falls_back_to_second(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 8, 8);
	mk_gang(&g, 8, 1);
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_int_equal(quota_charge(&m, "ns/first", charge_from("gpu-cq", &out)), 0);
	assert_int_equal(usage_of(&m, "gpu-cq", "a100", "nvidia.com/gpu"), MILLI(8));

	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_int_equal(out.n, 3);
	/* All resources of the group move together: the flavor is chosen per group. */
	for (size_t i = 0; i < out.n; i++)
		assert_string_equal(out.items[i].flavor, "h100");
	assert_int_equal(quota_charge(&m, "ns/second", charge_from("gpu-cq", &out)), 0);

	/* Both full now: a third gang waits. */
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -ENOSPC);
	quota_model_release(&m);
}

static void test_quota_wait_beats_never_across_flavors(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	/* a100 can never hold 8 GPUs; h100 can, once freed: the verdict is "wait". */
	setup_gpu_model(&m, 4, 8);
	struct quota_charge *c = mk_charge("gpu-cq");
	charge_item(c, "h100", "nvidia.com/gpu", MILLI(1));
	assert_int_equal(quota_charge(&m, "ns/x", c), 0);
	mk_gang(&g, 8, 1);
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -ENOSPC);
	assert_non_null(strstr(msg, "h100"));
	quota_model_release(&m);
}

static void test_quota_charge_uncharge_update_usage(void **state)
{
	struct quota_model m;
	setup_gpu_model(&m, 8, 8);
	struct quota_charge *c = mk_charge("gpu-cq");
	charge_item(c, "a100", "cpu", MILLI(4));
	charge_item(c, "a100", "nvidia.com/gpu", MILLI(2));
	assert_int_equal(quota_charge(&m, "ns/a", c), 0);
	assert_true(quota_is_charged(&m, "ns/a"));
	assert_false(quota_is_charged(&m, "ns/b"));
	assert_int_equal(usage_of(&m, "gpu-cq", "a100", "cpu"), MILLI(4));
	assert_int_equal(usage_of(&m, "gpu-cq", "a100", "nvidia.com/gpu"), MILLI(2));
	assert_int_equal(usage_of(&m, "gpu-cq", "h100", "cpu"), 0);

	c = mk_charge("gpu-cq");
	charge_item(c, "h100", "cpu", MILLI(1));
	assert_int_equal(quota_charge(&m, "ns/b", c), 0);
	assert_int_equal(usage_of(&m, "gpu-cq", "h100", "cpu"), MILLI(1));

	/* Recharging a key replaces its old charge rather than adding to it. */
	c = mk_charge("gpu-cq");
	charge_item(c, "a100", "cpu", MILLI(1));
	assert_int_equal(quota_charge(&m, "ns/a", c), 0);
	assert_int_equal(usage_of(&m, "gpu-cq", "a100", "cpu"), MILLI(1));
	assert_int_equal(usage_of(&m, "gpu-cq", "a100", "nvidia.com/gpu"), 0);

	quota_uncharge(&m, "ns/a");
	quota_uncharge(&m, "ns/a"); /* twice is harmless */
	quota_uncharge(&m, "never-charged");
	assert_false(quota_is_charged(&m, "ns/a"));
	assert_int_equal(usage_of(&m, "gpu-cq", "a100", "cpu"), 0);
	assert_int_equal(usage_of(&m, "gpu-cq", "h100", "cpu"), MILLI(1));
	quota_uncharge(&m, "ns/b");
	assert_int_equal(usage_of(&m, "gpu-cq", "h100", "cpu"), 0);
	quota_model_release(&m);
}

static void test_quota_cell_unknown_enoent(void **state)
{
	struct quota_model m;
	int64_t nominal = -1, usage = -1;
	setup_gpu_model(&m, 8, 4);
	const struct quota_cq *cq = quota_get_cq(&m, "gpu-cq");
	assert_int_equal(quota_cell(cq, "h100", "nvidia.com/gpu", &nominal, &usage), 0);
	assert_int_equal(nominal, MILLI(4));
	assert_int_equal(usage, 0);
	assert_int_equal(quota_cell(cq, "t4", "cpu", &nominal, &usage), -ENOENT);
	assert_int_equal(quota_cell(cq, "a100", "pods", &nominal, &usage), -ENOENT);
	assert_null(quota_get_cq(&m, "missing"));
	quota_model_release(&m);
}

static void test_quota_set_cq_replace_recomputes_usage_from_charges(void **state)
{
	struct quota_model m;
	setup_gpu_model(&m, 8, 8);
	struct quota_charge *c = mk_charge("gpu-cq");
	charge_item(c, "a100", "nvidia.com/gpu", MILLI(3));
	charge_item(c, "h100", "cpu", MILLI(5));
	assert_int_equal(quota_charge(&m, "ns/a", c), 0);
	c = mk_charge("gpu-cq");
	charge_item(c, "a100", "nvidia.com/gpu", MILLI(2));
	assert_int_equal(quota_charge(&m, "ns/b", c), 0);
	c = mk_charge("other-cq"); /* must not leak into gpu-cq */
	charge_item(c, "a100", "nvidia.com/gpu", MILLI(7));
	assert_int_equal(quota_charge(&m, "ns/c", c), 0);

	/* New spec: flavors in the other order, resources reordered, a100 quota raised. */
	struct quota_cq *cq = mk_cq("gpu-cq");
	struct quota_group *g = cq_group(cq, (const char *const[]){ "nvidia.com/gpu", "cpu", "memory",
								    NULL });
	cq_flavor(g, "h100", (int64_t[]){ MILLI(8), MILLI(64), GI(512) });
	cq_flavor(g, "a100", (int64_t[]){ MILLI(16), MILLI(64), GI(512) });
	assert_int_equal(quota_set_cq(&m, cq), 0);
	assert_int_equal(usage_of(&m, "gpu-cq", "a100", "nvidia.com/gpu"), MILLI(5));
	assert_int_equal(usage_of(&m, "gpu-cq", "h100", "cpu"), MILLI(5));
	assert_int_equal(usage_of(&m, "gpu-cq", "h100", "nvidia.com/gpu"), 0);

	/* Uncharging after the replace subtracts from the new table. */
	quota_uncharge(&m, "ns/a");
	assert_int_equal(usage_of(&m, "gpu-cq", "a100", "nvidia.com/gpu"), MILLI(2));
	assert_int_equal(usage_of(&m, "gpu-cq", "h100", "cpu"), 0);
	quota_model_release(&m);
}

static void test_quota_charge_before_cq_counted_when_it_appears(void **state)
{
	struct quota_model m;
	quota_model_init(&m);
	assert_int_equal(quota_set_flavor(&m, mk_flavor("default")), 0);
	struct quota_charge *c = mk_charge("late-cq");
	charge_item(c, "default", "cpu", MILLI(3));
	assert_int_equal(quota_charge(&m, "ns/early", c), 0);
	struct quota_cq *cq = mk_cq("late-cq");
	cq_flavor(cq_group(cq, (const char *const[]){ "cpu", NULL }), "default",
		  (int64_t[]){ MILLI(10) });
	assert_int_equal(quota_set_cq(&m, cq), 0);
	assert_int_equal(usage_of(&m, "late-cq", "default", "cpu"), MILLI(3));

	/* Removing and re-adding the queue keeps the charge. */
	quota_remove_cq(&m, "late-cq");
	assert_null(quota_get_cq(&m, "late-cq"));
	quota_uncharge(&m, "ns/nothing");
	cq = mk_cq("late-cq");
	cq_flavor(cq_group(cq, (const char *const[]){ "cpu", NULL }), "default",
		  (int64_t[]){ MILLI(10) });
	assert_int_equal(quota_set_cq(&m, cq), 0);
	assert_int_equal(usage_of(&m, "late-cq", "default", "cpu"), MILLI(3));
	quota_model_release(&m);
}

static void test_quota_resource_not_covered_enoent(void **state)
{
	struct quota_model m;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 8, 8);
	const char *res[] = { "cpu", "example.com/fpga" };
	int64_t per_pod[] = { MILLI(1), MILLI(1) };
	struct quota_podset ps = { .count = 1, .n_requests = 2, .resources = res, .per_pod = per_pod };
	assert_int_equal(assign(&m, "gpu-cq", &ps, &out, msg, sizeof(msg)), -ENOENT);
	assert_int_equal(out.n, 0);
	assert_non_null(strstr(msg, "example.com/fpga"));
	quota_model_release(&m);
}

static void test_quota_empty_request_fits_with_no_assignment(void **state)
{
	struct quota_model m;
	struct quota_assignment out;
	char msg[64];
	setup_gpu_model(&m, 8, 8);
	struct quota_podset ps = { .count = 3 };
	assert_int_equal(assign(&m, "gpu-cq", &ps, &out, msg, sizeof(msg)), 0);
	assert_int_equal(out.n, 0);
	quota_model_release(&m);
}

static void test_quota_node_selector_mismatch_skips_flavor(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 8, 8);
	mk_gang(&g, 2, 1);
	struct quota_kv sel[] = { { "gpu.example.com/model", "h100" }, { "zone", "any" } };
	g.ps.node_selector = sel;
	g.ps.n_selector = 2;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	/* "zone" is set by no flavor: the nodes decide it, so it doesn't exclude a flavor. */
	assert_string_equal(flavor_for(&out, "nvidia.com/gpu"), "h100");

	struct quota_kv none[] = { { "gpu.example.com/model", "t4" } };
	g.ps.node_selector = none;
	g.ps.n_selector = 1;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "node selector"));
	quota_model_release(&m);
}

static void test_quota_node_affinity_in_notin_against_flavor_labels(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 8, 8);
	mk_gang(&g, 1, 1);

	const char *const h100_only[] = { "h100", "h200" };
	struct quota_match_expr in = { "gpu.example.com/model", "In", 2, h100_only };
	struct quota_affinity_term t_in = { 1, &in, 0 };
	g.ps.terms = &t_in;
	g.ps.n_terms = 1;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "cpu"), "h100");

	const char *const not_a100[] = { "a100" };
	struct quota_match_expr notin = { "gpu.example.com/model", "NotIn", 1, not_a100 };
	struct quota_affinity_term t_notin = { 1, &notin, 0 };
	g.ps.terms = &t_notin;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "cpu"), "h100");

	const char *const a100[] = { "a100" };
	struct quota_match_expr notin_both[] = {
		{ "gpu.example.com/model", "NotIn", 1, a100 },
		{ "gpu.example.com/model", "NotIn", 1, (const char *const[]){ "h100" } },
	};
	struct quota_affinity_term t_none = { 2, notin_both, 0 };
	g.ps.terms = &t_none;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "affinity"));

	/* Terms are ORed: a failing term next to a matching one still matches. */
	struct quota_affinity_term two[] = { { 2, notin_both, 0 }, { 1, &in, 0 } };
	g.ps.terms = two;
	g.ps.n_terms = 2;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "cpu"), "h100");

	/* DoesNotExist on a key the flavor sets excludes it; Exists accepts it. */
	struct quota_match_expr dne = { "gpu.example.com/model", "DoesNotExist", 0, NULL };
	struct quota_affinity_term t_dne = { 1, &dne, 0 };
	g.ps.terms = &t_dne;
	g.ps.n_terms = 1;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -ENOENT);
	struct quota_match_expr ex = { "gpu.example.com/model", "Exists", 0, NULL };
	struct quota_affinity_term t_ex = { 1, &ex, 0 };
	g.ps.terms = &t_ex;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "cpu"), "a100");
	quota_model_release(&m);
}

static void test_quota_node_affinity_gt_lt(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	quota_model_init(&m);
	struct quota_flavor *small = mk_flavor("small"), *large = mk_flavor("large");
	flavor_label(small, "memory-gb", "64");
	flavor_label(large, "memory-gb", "512");
	assert_int_equal(quota_set_flavor(&m, small), 0);
	assert_int_equal(quota_set_flavor(&m, large), 0);
	struct quota_cq *cq = mk_cq("gpu-cq");
	struct quota_group *grp = cq_group(cq, GPU_RES);
	cq_flavor(grp, "small", (int64_t[]){ MILLI(64), GI(512), MILLI(8) });
	cq_flavor(grp, "large", (int64_t[]){ MILLI(64), GI(512), MILLI(8) });
	assert_int_equal(quota_set_cq(&m, cq), 0);
	mk_gang(&g, 1, 1);
	struct quota_match_expr gt = { "memory-gb", "Gt", 1, (const char *const[]){ "100" } };
	struct quota_affinity_term t = { 1, &gt, 0 };
	g.ps.terms = &t;
	g.ps.n_terms = 1;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "cpu"), "large");
	struct quota_match_expr lt = { "memory-gb", "Lt", 1, (const char *const[]){ "100" } };
	t.exprs = &lt;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "cpu"), "small");
	struct quota_match_expr bad = { "memory-gb", "Gt", 1, (const char *const[]){ "lots" } };
	t.exprs = &bad;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -ENOENT);
	quota_model_release(&m);
}

/* In Kubernetes an empty node selector term matches no node, while a term of matchFields alone
 * (node names) is for the node to decide, not the flavor. */
static void test_quota_node_affinity_empty_term_matches_nothing(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 8, 8);
	mk_gang(&g, 1, 1);
	struct quota_affinity_term empty = { 0, NULL, 0 };
	g.ps.terms = &empty;
	g.ps.n_terms = 1;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -ENOENT);
	empty.has_match_fields = 1;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	quota_model_release(&m);
}

/* Two flavors where only the second is tainted, for the taint tests. */
static void setup_tainted_model(struct quota_model *m, int taint_first)
{
	quota_model_init(m);
	struct quota_flavor *spot = mk_flavor("spot"), *ondemand = mk_flavor("on-demand");
	flavor_taint(spot, "spot", "true", "NoSchedule");
	assert_int_equal(quota_set_flavor(m, spot), 0);
	assert_int_equal(quota_set_flavor(m, ondemand), 0);
	struct quota_cq *cq = mk_cq("cq");
	struct quota_group *g = cq_group(cq, (const char *const[]){ "cpu", NULL });
	if (taint_first) {
		cq_flavor(g, "spot", (int64_t[]){ MILLI(10) });
		cq_flavor(g, "on-demand", (int64_t[]){ MILLI(10) });
	} else {
		cq_flavor(g, "spot", (int64_t[]){ MILLI(10) });
	}
	assert_int_equal(quota_set_cq(m, cq), 0);
}

static void test_quota_taint_not_tolerated_skips_flavor(void **state)
{
	struct quota_model m;
	struct quota_assignment out;
	char msg[512];
	const char *res[] = { "cpu" };
	int64_t per_pod[] = { MILLI(1) };
	struct quota_podset ps = { .count = 1, .n_requests = 1, .resources = res, .per_pod = per_pod };

	setup_tainted_model(&m, 1);
	assert_int_equal(assign(&m, "cq", &ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "cpu"), "on-demand");
	quota_model_release(&m);

	setup_tainted_model(&m, 0);
	assert_int_equal(assign(&m, "cq", &ps, &out, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "taint"));
	assert_non_null(strstr(msg, "spot"));
	quota_model_release(&m);
}

static void test_quota_taint_tolerated_fits(void **state)
{
	struct quota_model m;
	struct quota_assignment out;
	char msg[512];
	const char *res[] = { "cpu" };
	int64_t per_pod[] = { MILLI(1) };
	struct quota_taint equal = { "spot", "true", "NoSchedule", 0 };
	struct quota_taint wrong_value = { "spot", "false", "NoSchedule", 0 };
	struct quota_taint wrong_effect = { "spot", "true", "NoExecute", 0 };
	struct quota_taint exists_any_effect = { "spot", NULL, NULL, 1 };
	struct quota_podset ps = { .count = 1, .n_requests = 1, .resources = res, .per_pod = per_pod };

	setup_tainted_model(&m, 0);
	ps.tolerations = &equal;
	ps.n_tolerations = 1;
	assert_int_equal(assign(&m, "cq", &ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "cpu"), "spot");
	ps.tolerations = &wrong_value;
	assert_int_equal(assign(&m, "cq", &ps, &out, msg, sizeof(msg)), -ENOENT);
	ps.tolerations = &wrong_effect;
	assert_int_equal(assign(&m, "cq", &ps, &out, msg, sizeof(msg)), -ENOENT);
	ps.tolerations = &exists_any_effect;
	assert_int_equal(assign(&m, "cq", &ps, &out, msg, sizeof(msg)), 0);
	quota_model_release(&m);
}

static void test_quota_flavor_own_toleration_tolerates_its_taint(void **state)
{
	struct quota_model m;
	struct quota_assignment out;
	char msg[512];
	const char *res[] = { "cpu" };
	int64_t per_pod[] = { MILLI(1) };
	struct quota_podset ps = { .count = 1, .n_requests = 1, .resources = res, .per_pod = per_pod };
	setup_tainted_model(&m, 0);
	/* The flavor's tolerations are added to admitted pods, so they count. */
	struct quota_flavor *spot = mk_flavor("spot");
	flavor_taint(spot, "spot", "true", "NoSchedule");
	flavor_toleration(spot, "spot", NULL, "NoSchedule", 1);
	assert_int_equal(quota_set_flavor(&m, spot), 0);
	assert_int_equal(assign(&m, "cq", &ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "cpu"), "spot");
	quota_model_release(&m);
}

static void test_quota_prefer_no_schedule_taint_ignored(void **state)
{
	struct quota_model m;
	struct quota_assignment out;
	char msg[512];
	const char *res[] = { "cpu" };
	int64_t per_pod[] = { MILLI(1) };
	struct quota_podset ps = { .count = 1, .n_requests = 1, .resources = res, .per_pod = per_pod };
	setup_tainted_model(&m, 0);
	struct quota_flavor *spot = mk_flavor("spot");
	flavor_taint(spot, "spot", "true", "PreferNoSchedule");
	assert_int_equal(quota_set_flavor(&m, spot), 0);
	assert_int_equal(assign(&m, "cq", &ps, &out, msg, sizeof(msg)), 0);
	quota_model_release(&m);
}

static void test_quota_tolerates_kubernetes_rules(void **state)
{
	struct quota_taint taint = { "dedicated", "ml", "NoSchedule", 0 };
	struct quota_taint all = { NULL, NULL, NULL, 1 };
	struct quota_taint all_empty_key = { "", NULL, NULL, 1 };
	struct quota_taint empty_key_equal = { "", NULL, NULL, 0 };
	struct quota_taint exists_key = { "dedicated", NULL, "", 1 };
	struct quota_taint equal_no_effect = { "dedicated", "ml", NULL, 0 };
	struct quota_taint equal_other_key = { "other", "ml", NULL, 0 };
	struct quota_taint exists_noexec = { "dedicated", NULL, "NoExecute", 1 };
	assert_true(quota_tolerates(&all, 1, &taint));
	assert_true(quota_tolerates(&all_empty_key, 1, &taint));
	assert_false(quota_tolerates(&empty_key_equal, 1, &taint));
	assert_true(quota_tolerates(&exists_key, 1, &taint));
	assert_true(quota_tolerates(&equal_no_effect, 1, &taint));
	assert_false(quota_tolerates(&equal_other_key, 1, &taint));
	assert_false(quota_tolerates(&exists_noexec, 1, &taint));
	assert_false(quota_tolerates(NULL, 0, &taint));
	struct quota_taint two[] = { equal_other_key, exists_key };
	assert_true(quota_tolerates(two, 2, &taint));
}

static void test_quota_missing_flavor_cq_inactive_flavor_not_found(void **state)
{
	struct quota_model m;
	char reason[64], msg[256];
	quota_model_init(&m);
	assert_int_equal(quota_set_flavor(&m, mk_flavor("a100")), 0);
	struct quota_cq *cq = mk_cq("gpu-cq");
	struct quota_group *g = cq_group(cq, GPU_RES);
	cq_flavor(g, "a100", (int64_t[]){ MILLI(1), MILLI(1), MILLI(1) });
	cq_flavor(g, "h100", (int64_t[]){ MILLI(1), MILLI(1), MILLI(1) });
	assert_int_equal(quota_set_cq(&m, cq), 0);
	const struct quota_cq *q = quota_get_cq(&m, "gpu-cq");
	assert_int_equal(quota_cq_active(&m, q, reason, sizeof(reason), msg, sizeof(msg)), 0);
	assert_string_equal(reason, "FlavorNotFound");
	assert_non_null(strstr(msg, "h100"));

	assert_int_equal(quota_set_flavor(&m, mk_flavor("h100")), 0);
	assert_int_equal(quota_cq_active(&m, q, reason, sizeof(reason), msg, sizeof(msg)), 1);
	assert_string_equal(reason, "Ready");

	quota_remove_flavor(&m, "a100");
	assert_int_equal(quota_cq_active(&m, q, reason, sizeof(reason), msg, sizeof(msg)), 0);
	assert_string_equal(reason, "FlavorNotFound");
	assert_non_null(strstr(msg, "a100"));
	quota_model_release(&m);
}

static void test_quota_replaced_flavor_labels_take_effect(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 8, 8);
	mk_gang(&g, 1, 1);
	struct quota_kv sel[] = { { "gpu.example.com/model", "b200" } };
	g.ps.node_selector = sel;
	g.ps.n_selector = 1;
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), -ENOENT);
	struct quota_flavor *h = mk_flavor("h100");
	flavor_label(h, "gpu.example.com/model", "b200");
	assert_int_equal(quota_set_flavor(&m, h), 0);
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_string_equal(flavor_for(&out, "nvidia.com/gpu"), "h100");
	quota_model_release(&m);
}

/* cpu/memory in "default"; GPUs in a second group with flavors a100 then h100. */
static void setup_two_group_model(struct quota_model *m, int64_t a100_gpus, int64_t h100_gpus)
{
	quota_model_init(m);
	assert_int_equal(quota_set_flavor(m, mk_flavor("default")), 0);
	assert_int_equal(quota_set_flavor(m, mk_flavor("a100")), 0);
	assert_int_equal(quota_set_flavor(m, mk_flavor("h100")), 0);
	struct quota_cq *cq = mk_cq("multi");
	struct quota_group *g1 = cq_group(cq, (const char *const[]){ "cpu", "memory", NULL });
	cq_flavor(g1, "default", (int64_t[]){ MILLI(32), GI(1024) });
	struct quota_group *g2 = cq_group(cq, (const char *const[]){ "nvidia.com/gpu", NULL });
	cq_flavor(g2, "a100", (int64_t[]){ MILLI(a100_gpus) });
	cq_flavor(g2, "h100", (int64_t[]){ MILLI(h100_gpus) });
	assert_int_equal(quota_set_cq(m, cq), 0);
}

static void test_quota_multiple_groups_assigned_independently(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	setup_two_group_model(&m, 2, 8);
	mk_gang(&g, 4, 1);
	assert_int_equal(assign(&m, "multi", &g.ps, &out, msg, sizeof(msg)), 0);
	assert_int_equal(out.n, 3);
	assert_string_equal(flavor_for(&out, "cpu"), "default");
	assert_string_equal(flavor_for(&out, "memory"), "default");
	assert_string_equal(flavor_for(&out, "nvidia.com/gpu"), "h100");
	assert_int_equal(quota_charge(&m, "ns/a", charge_from("multi", &out)), 0);
	assert_int_equal(usage_of(&m, "multi", "default", "cpu"), MILLI(8));
	assert_int_equal(usage_of(&m, "multi", "h100", "nvidia.com/gpu"), MILLI(4));
	assert_int_equal(usage_of(&m, "multi", "a100", "nvidia.com/gpu"), 0);

	/* CPU-only work ignores the GPU group entirely. */
	const char *res[] = { "cpu" };
	int64_t per_pod[] = { MILLI(24) };
	struct quota_podset cpu_only = { .count = 1, .n_requests = 1, .resources = res,
					 .per_pod = per_pod };
	assert_int_equal(assign(&m, "multi", &cpu_only, &out, msg, sizeof(msg)), 0);
	assert_int_equal(out.n, 1);

	/* One group failing fails the whole podset: no partial assignment. */
	mk_gang(&g, 5, 1); /* 5 GPUs: a100 never (2), h100 has 4 left -> wait */
	assert_int_equal(assign(&m, "multi", &g.ps, &out, msg, sizeof(msg)), -ENOSPC);
	assert_int_equal(out.n, 0);
	assert_non_null(strstr(msg, "nvidia.com/gpu"));

	/* A group that can never fit wins over one that waits. */
	mk_gang(&g, 9, 1); /* cpu 18 of 24 free -> fits; gpus 9 > 8 -> never */
	assert_int_equal(assign(&m, "multi", &g.ps, &out, msg, sizeof(msg)), -E2BIG);
	mk_gang(&g, 13, 0); /* cpu 26 > 24 free -> wait; no GPUs needed */
	g.ps.n_requests = 2;
	assert_int_equal(assign(&m, "multi", &g.ps, &out, msg, sizeof(msg)), -ENOSPC);
	assert_non_null(strstr(msg, "cpu"));
	quota_model_release(&m);
}

static void test_quota_count_times_request_overflow_erange(void **state)
{
	struct quota_model m;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 8, 8);
	const char *res[] = { "memory" };
	int64_t per_pod[] = { INT64_MAX / 1000 };
	struct quota_podset ps = { .count = 1001, .n_requests = 1, .resources = res,
				   .per_pod = per_pod };
	assert_int_equal(assign(&m, "gpu-cq", &ps, &out, msg, sizeof(msg)), -ERANGE);
	assert_non_null(strstr(msg, "memory"));
	/* Exactly at the edge is not an overflow (and simply never fits). */
	ps.count = 1000;
	assert_int_equal(assign(&m, "gpu-cq", &ps, &out, msg, sizeof(msg)), -E2BIG);
	ps.count = INT64_MAX;
	per_pod[0] = 2;
	assert_int_equal(assign(&m, "gpu-cq", &ps, &out, msg, sizeof(msg)), -ERANGE);
	quota_model_release(&m);
}

static void test_quota_zero_count_fits_with_zero_totals(void **state)
{
	struct quota_model m;
	struct gang g;
	struct quota_assignment out;
	char msg[512];
	setup_gpu_model(&m, 0, 0);
	mk_gang(&g, 0, 1);
	assert_int_equal(assign(&m, "gpu-cq", &g.ps, &out, msg, sizeof(msg)), 0);
	for (size_t i = 0; i < out.n; i++)
		assert_int_equal(out.items[i].total, 0);
	quota_model_release(&m);
}

/* ---------------------------------------------------------------- property test */

#define P_CQS 3
#define P_KEYS 48
static const char *const P_CQ_NAMES[P_CQS] = { "p0", "p1", "p2" };
static const char *const P_FLAVORS[] = { "f0", "f1", "f2" };
static const char *const P_RES[] = { "cpu", "memory", "gpu", "pods", NULL };

/* p0: one group over all resources, two flavors; p1: two groups; p2: one flavor, cpu only. */
static struct quota_cq *p_make_cq(int which)
{
	struct quota_cq *cq = mk_cq(P_CQ_NAMES[which]);
	if (which == 0) {
		struct quota_group *g = cq_group(cq, P_RES);
		cq_flavor(g, "f0", (int64_t[]){ 10000, 40000, 4000, 20000 });
		cq_flavor(g, "f1", (int64_t[]){ 7000, 10000, 8000, 9000 });
	} else if (which == 1) {
		struct quota_group *g = cq_group(cq, (const char *const[]){ "cpu", "memory", NULL });
		cq_flavor(g, "f0", (int64_t[]){ 12000, 30000 });
		struct quota_group *g2 = cq_group(cq, (const char *const[]){ "gpu", NULL });
		cq_flavor(g2, "f1", (int64_t[]){ 3000 });
		cq_flavor(g2, "f2", (int64_t[]){ 5000 });
	} else {
		cq_flavor(cq_group(cq, (const char *const[]){ "cpu", NULL }), "f2",
			  (int64_t[]){ 9000 });
	}
	return cq;
}

struct shadow_charge {
	int live;
	int cq;
	size_t n;
	char flavor[QUOTA_MAX_RESOURCES][8];
	char resource[QUOTA_MAX_RESOURCES][16];
	int64_t amount[QUOTA_MAX_RESOURCES];
};

/* The cell's usage must be the sum of the live charges on it, within [0, nominal]. */
static void p_check_cell(const struct quota_cq *cq, int q, const struct shadow_charge *sh,
			 const char *flavor, const char *resource)
{
	int64_t nominal, usage, want = 0;
	if (quota_cell(cq, flavor, resource, &nominal, &usage) != 0)
		return;
	for (int k = 0; k < P_KEYS; k++) {
		if (!sh[k].live || sh[k].cq != q)
			continue;
		for (size_t i = 0; i < sh[k].n; i++)
			if (!strcmp(sh[k].flavor[i], flavor) && !strcmp(sh[k].resource[i], resource))
				want += sh[k].amount[i];
	}
	if (usage != want)
		fail_msg("%s %s/%s: usage %lld, live charges %lld", cq->name, flavor, resource,
			 (long long)usage, (long long)want);
	if (usage < 0 || usage > nominal)
		fail_msg("%s %s/%s: usage %lld outside [0, %lld]", cq->name, flavor, resource,
			 (long long)usage, (long long)nominal);
}

static void p_check(const struct quota_model *m, const struct shadow_charge *sh)
{
	for (int q = 0; q < P_CQS; q++) {
		const struct quota_cq *cq = quota_get_cq(m, P_CQ_NAMES[q]);
		assert_non_null(cq);
		for (size_t f = 0; f < 3; f++)
			for (size_t r = 0; r < 4; r++)
				p_check_cell(cq, q, sh, P_FLAVORS[f], P_RES[r]);
	}
}

static void test_quota_random_ops_usage_equals_live_charges(void **state)
{
	static struct shadow_charge sh[P_KEYS];
	struct quota_model m;
	int fits = 0, waits = 0, nevers = 0;
	memset(sh, 0, sizeof(sh));
	rng_state = 0xc0ffee1234567ull;
	quota_model_init(&m);
	for (int f = 0; f < 3; f++)
		assert_int_equal(quota_set_flavor(&m, mk_flavor(P_FLAVORS[f])), 0);
	for (int q = 0; q < P_CQS; q++)
		assert_int_equal(quota_set_cq(&m, p_make_cq(q)), 0);

	for (int op = 0; op < 20000; op++) {
		uint64_t what = rng() % 100;
		int k = (int)(rng() % P_KEYS);
		char key[32];
		snprintf(key, sizeof(key), "ns/wl-%d", k);
		if (what < 55) {
			int q = (int)(rng() % P_CQS);
			const char *res[4];
			int64_t per_pod[4];
			size_t n = 0;
			for (size_t r = 0; r < 4; r++) {
				if (rng() % 2)
					continue;
				res[n] = P_RES[r];
				per_pod[n++] = (int64_t)(rng() % 3000);
			}
			struct quota_podset ps = { .count = (int64_t)(rng() % 5), .n_requests = n,
						   .resources = res, .per_pod = per_pod };
			struct quota_assignment out;
			char msg[512];
			const struct quota_cq *cq = quota_get_cq(&m, P_CQ_NAMES[q]);
			int rc = quota_assign(&m, cq, &ps, &out, msg, sizeof(msg));
			assert_true(rc == 0 || rc == -ENOSPC || rc == -E2BIG || rc == -ENOENT);
			if (rc != 0) {
				assert_int_equal(out.n, 0);
				waits += rc == -ENOSPC;
				nevers += rc == -E2BIG;
				continue;
			}
			fits++;
			/* Recharging a live key would free its old charge first; the new one was
			 * sized with the old still counted, so the invariant holds either way. */
			assert_true(out.n <= n);
			struct shadow_charge *s = &sh[k];
			s->live = 1;
			s->cq = q;
			s->n = out.n;
			for (size_t i = 0; i < out.n; i++) {
				snprintf(s->flavor[i], sizeof(s->flavor[i]), "%s", out.items[i].flavor);
				snprintf(s->resource[i], sizeof(s->resource[i]), "%s",
					 out.items[i].resource);
				s->amount[i] = out.items[i].total;
			}
			assert_int_equal(quota_charge(&m, key, charge_from(P_CQ_NAMES[q], &out)), 0);
		} else if (what < 90) {
			quota_uncharge(&m, key);
			sh[k].live = 0;
		} else if (what < 97) {
			/* A no-op spec update: usage must come back from the charges. */
			assert_int_equal(quota_set_cq(&m, p_make_cq((int)(rng() % P_CQS))), 0);
		} else {
			/* Flavor churn touches nothing the usage depends on. */
			assert_int_equal(quota_set_flavor(&m, mk_flavor(P_FLAVORS[rng() % 3])), 0);
		}
		assert_int_equal(quota_is_charged(&m, key), sh[k].live);
		p_check(&m, sh);
	}
	/* The run must exercise every outcome, or it proves little. */
	assert_true(fits > 1000);
	assert_true(waits > 100);
	assert_true(nevers > 100);
	for (int k = 0; k < P_KEYS; k++) {
		char key[32];
		snprintf(key, sizeof(key), "ns/wl-%d", k);
		quota_uncharge(&m, key);
		sh[k].live = 0;
	}
	p_check(&m, sh);
	quota_model_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strmap_empty_get_remove_return_null),
		cmocka_unit_test(test_strmap_put_get_replace_remove),
		cmocka_unit_test(test_strmap_key_is_copied),
		cmocka_unit_test(test_strmap_empty_key_and_null_value),
		cmocka_unit_test(test_strmap_release_frees_each_value_once),
		cmocka_unit_test(test_strmap_10k_keys_remove_every_other_all_lookups_hold),
		cmocka_unit_test(test_strmap_random_churn_matches_shadow),
		cmocka_unit_test(test_quota_gang_of_8_gpus_fits_in_8),
		cmocka_unit_test(test_quota_gang_with_6_free_enospc_names_resource),
		cmocka_unit_test(test_quota_gang_in_quota_of_4_never_fits_e2big),
		cmocka_unit_test(test_quota_first_flavor_full_falls_back_to_second),
		cmocka_unit_test(test_quota_wait_beats_never_across_flavors),
		cmocka_unit_test(test_quota_charge_uncharge_update_usage),
		cmocka_unit_test(test_quota_cell_unknown_enoent),
		cmocka_unit_test(test_quota_set_cq_replace_recomputes_usage_from_charges),
		cmocka_unit_test(test_quota_charge_before_cq_counted_when_it_appears),
		cmocka_unit_test(test_quota_resource_not_covered_enoent),
		cmocka_unit_test(test_quota_empty_request_fits_with_no_assignment),
		cmocka_unit_test(test_quota_node_selector_mismatch_skips_flavor),
		cmocka_unit_test(test_quota_node_affinity_in_notin_against_flavor_labels),
		cmocka_unit_test(test_quota_node_affinity_gt_lt),
		cmocka_unit_test(test_quota_taint_not_tolerated_skips_flavor),
		cmocka_unit_test(test_quota_taint_tolerated_fits),
		cmocka_unit_test(test_quota_flavor_own_toleration_tolerates_its_taint),
		cmocka_unit_test(test_quota_prefer_no_schedule_taint_ignored),
		cmocka_unit_test(test_quota_tolerates_kubernetes_rules),
		cmocka_unit_test(test_quota_missing_flavor_cq_inactive_flavor_not_found),
		cmocka_unit_test(test_quota_replaced_flavor_labels_take_effect),
		cmocka_unit_test(test_quota_multiple_groups_assigned_independently),
		cmocka_unit_test(test_quota_count_times_request_overflow_erange),
		cmocka_unit_test(test_quota_zero_count_fits_with_zero_totals),
		cmocka_unit_test(test_quota_random_ops_usage_equals_live_charges),
		cmocka_unit_test(test_quota_node_affinity_empty_term_matches_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
