/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for core/strmap and core/quota: the hash map, flavor matching, amount formatting. */
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

#define MILLI(x) ((int64_t)(x)*1000)
#define MI(x) ((int64_t)(x)*1024 * 1024 * 1000)
#define GI(x) (MI(x) * 1024)

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

/* A reserve sizes the table once: the puts it was made for don't move it, the entries already
 * in it survive the resize, and a smaller reserve changes nothing. */
static void test_strmap_reserve_then_puts_do_not_grow(void **state)
{
	struct strmap m;
	char key[16];
	int v[1000];
	strmap_init(&m);
	assert_int_equal(strmap_put(&m, "before", &v[0], NULL), 0);
	assert_int_equal(strmap_reserve(&m, 1000), 0);
	struct strmap_slot *table = m.slots;
	size_t cap = m.cap;
	assert_true(cap * 3 >= 1000 * 4);
	assert_ptr_equal(strmap_get(&m, "before"), &v[0]);
	for (int i = 1; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(strmap_put(&m, key, &v[i], NULL), 0);
	}
	assert_ptr_equal(m.slots, table);
	assert_int_equal(m.cap, cap);
	assert_int_equal(strmap_reserve(&m, 10), 0);
	assert_int_equal(m.cap, cap);
	for (int i = 1; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_ptr_equal(strmap_get(&m, key), &v[i]);
	}
	strmap_release(&m, NULL);
}

/* Borrowed keys: the map keeps the caller's pointer (the first one put), copies nothing and
 * frees no key, through growth, removal and release (ASan would see a free of the stack). */
static void test_strmap_borrowed_keys_are_not_copied(void **state)
{
	struct strmap m;
	char keys[64][16], again[] = "k1";
	int v[64];
	strmap_init_borrowed(&m);
	for (int i = 0; i < 64; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		assert_int_equal(strmap_put(&m, keys[i], &v[i], NULL), 0);
	}
	assert_int_equal(strmap_put(&m, again, &v[0], NULL), 0); /* replaces: keeps keys[1] */
	for (size_t i = 0; i < m.cap; i++)
		if (m.slots[i].value == &v[0] && m.slots[i].key != keys[0])
			assert_ptr_equal(m.slots[i].key, keys[1]);
	assert_ptr_equal(strmap_remove(&m, "k2"), &v[2]);
	assert_ptr_equal(strmap_get(&m, "k63"), &v[63]);
	assert_int_equal(m.len, 63);
	strmap_release(&m, NULL);
	assert_int_equal(m.borrowed, 1); /* still usable, in its mode */
	assert_int_equal(strmap_put(&m, keys[5], &v[5], NULL), 0);
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

/* ---------------------------------------------------------------- flavor builders */

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

/* The reference flavors: a100 and h100, each labelling its nodes gpu.example.com/model. */
static void mk_gpu_flavors(struct quota_flavor **a100, struct quota_flavor **h100)
{
	*a100 = mk_flavor("a100");
	*h100 = mk_flavor("h100");
	flavor_label(*a100, "gpu.example.com/model", "a100");
	flavor_label(*h100, "gpu.example.com/model", "h100");
}

static enum quota_mismatch match(const struct quota_flavor *f, const struct quota_podset *ps)
{
	return quota_flavor_match(f, ps, NULL);
}

/* ---------------------------------------------------------------- flavor matching */

static void test_quota_flavor_match_node_selector_vs_flavor_labels(void **state)
{
	struct quota_flavor *a100, *h100;
	struct quota_podset ps = { .count = 1 };
	mk_gpu_flavors(&a100, &h100);
	/* No constraints: every flavor's nodes will do. */
	assert_int_equal(match(a100, &ps), QUOTA_MATCH);

	struct quota_kv sel[] = { { "gpu.example.com/model", "h100" }, { "zone", "any" } };
	ps.node_selector = sel;
	ps.n_selector = 2;
	/* "zone" is set by no flavor: the nodes decide it, so it doesn't exclude a flavor. */
	assert_int_equal(match(h100, &ps), QUOTA_MATCH);
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_SELECTOR);

	struct quota_kv none[] = { { "gpu.example.com/model", "t4" } };
	ps.node_selector = none;
	ps.n_selector = 1;
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_SELECTOR);
	assert_int_equal(match(h100, &ps), QUOTA_MISMATCH_SELECTOR);

	/* A flavor without labels leaves every key to its nodes. */
	struct quota_flavor *plain = mk_flavor("plain");
	assert_int_equal(match(plain, &ps), QUOTA_MATCH);

	/* The selector is judged before the affinity; *taint is cleared on any verdict. */
	struct quota_affinity_term empty = { 0, NULL, 0 };
	ps.terms = &empty;
	ps.n_terms = 1;
	struct quota_taint stale = { 0 };
	const struct quota_taint *taint = &stale;
	assert_int_equal(quota_flavor_match(a100, &ps, &taint), QUOTA_MISMATCH_SELECTOR);
	assert_null(taint);
	quota_flavor_free(plain);
	quota_flavor_free(a100);
	quota_flavor_free(h100);
}

static void test_quota_flavor_match_affinity_in_notin_exists(void **state)
{
	struct quota_flavor *a100, *h100;
	struct quota_podset ps = { .count = 1 };
	mk_gpu_flavors(&a100, &h100);

	const char *const h100_only[] = { "h100", "h200" };
	struct quota_match_expr in = { "gpu.example.com/model", "In", 2, h100_only };
	struct quota_affinity_term t_in = { 1, &in, 0 };
	ps.terms = &t_in;
	ps.n_terms = 1;
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_AFFINITY);
	assert_int_equal(match(h100, &ps), QUOTA_MATCH);

	const char *const a100_only[] = { "a100" };
	struct quota_match_expr notin = { "gpu.example.com/model", "NotIn", 1, a100_only };
	struct quota_affinity_term t_notin = { 1, &notin, 0 };
	ps.terms = &t_notin;
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_AFFINITY);
	assert_int_equal(match(h100, &ps), QUOTA_MATCH);

	/* The expressions of one term are ANDed. */
	struct quota_match_expr notin_both[] = {
		{ "gpu.example.com/model", "NotIn", 1, a100_only },
		{ "gpu.example.com/model", "NotIn", 1, (const char *const[]){ "h100" } },
	};
	struct quota_affinity_term t_none = { 2, notin_both, 0 };
	ps.terms = &t_none;
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_AFFINITY);
	assert_int_equal(match(h100, &ps), QUOTA_MISMATCH_AFFINITY);

	/* Terms are ORed: a failing term next to a matching one still matches. */
	struct quota_affinity_term two[] = { { 2, notin_both, 0 }, { 1, &in, 0 } };
	ps.terms = two;
	ps.n_terms = 2;
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_AFFINITY);
	assert_int_equal(match(h100, &ps), QUOTA_MATCH);

	/* DoesNotExist on a key the flavor sets excludes it; Exists accepts it. */
	struct quota_match_expr dne = { "gpu.example.com/model", "DoesNotExist", 0, NULL };
	struct quota_affinity_term t_dne = { 1, &dne, 0 };
	ps.terms = &t_dne;
	ps.n_terms = 1;
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_AFFINITY);
	struct quota_match_expr ex = { "gpu.example.com/model", "Exists", 0, NULL };
	struct quota_affinity_term t_ex = { 1, &ex, 0 };
	ps.terms = &t_ex;
	assert_int_equal(match(a100, &ps), QUOTA_MATCH);
	assert_int_equal(match(h100, &ps), QUOTA_MATCH);

	/* A key the flavor doesn't set is the nodes' to decide, whatever the operator. */
	const char *const zones[] = { "a" };
	struct quota_match_expr zone_exprs[] = {
		{ "zone", "In", 1, zones },
		{ "zone", "DoesNotExist", 0, NULL },
		{ "zone", "Gt", 1, zones },
	};
	struct quota_affinity_term t_zone = { 3, zone_exprs, 0 };
	ps.terms = &t_zone;
	assert_int_equal(match(a100, &ps), QUOTA_MATCH);

	/* An operator Kubernetes doesn't know never matches a key the flavor sets. */
	struct quota_match_expr odd = { "gpu.example.com/model", "Like", 1, a100_only };
	struct quota_affinity_term t_odd = { 1, &odd, 0 };
	ps.terms = &t_odd;
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_AFFINITY);
	quota_flavor_free(a100);
	quota_flavor_free(h100);
}

static void test_quota_flavor_match_affinity_gt_lt(void **state)
{
	struct quota_flavor *small = mk_flavor("small"), *large = mk_flavor("large");
	struct quota_flavor *odd = mk_flavor("odd");
	flavor_label(small, "memory-gb", "64");
	flavor_label(large, "memory-gb", "512");
	flavor_label(odd, "memory-gb", "lots");
	struct quota_match_expr gt = { "memory-gb", "Gt", 1, (const char *const[]){ "100" } };
	struct quota_affinity_term t = { 1, &gt, 0 };
	struct quota_podset ps = { .count = 1, .n_terms = 1, .terms = &t };
	assert_int_equal(match(large, &ps), QUOTA_MATCH);
	assert_int_equal(match(small, &ps), QUOTA_MISMATCH_AFFINITY);
	/* A label that is no integer can't be compared, so it doesn't match. */
	assert_int_equal(match(odd, &ps), QUOTA_MISMATCH_AFFINITY);

	struct quota_match_expr lt = { "memory-gb", "Lt", 1, (const char *const[]){ "100" } };
	t.exprs = &lt;
	assert_int_equal(match(small, &ps), QUOTA_MATCH);
	assert_int_equal(match(large, &ps), QUOTA_MISMATCH_AFFINITY);

	/* Nor does a value that is no integer, or anything but exactly one value. */
	struct quota_match_expr bad = { "memory-gb", "Gt", 1, (const char *const[]){ "lots" } };
	t.exprs = &bad;
	assert_int_equal(match(small, &ps), QUOTA_MISMATCH_AFFINITY);
	assert_int_equal(match(large, &ps), QUOTA_MISMATCH_AFFINITY);
	struct quota_match_expr two = { "memory-gb", "Gt", 2, (const char *const[]){ "1", "2" } };
	t.exprs = &two;
	assert_int_equal(match(large, &ps), QUOTA_MISMATCH_AFFINITY);
	/* Nor a label past int64: quota once clamped it to INT64_MAX and let it pass Gt, where
	 * placement (and Kubernetes) refuse it; both now ask core/labels. */
	struct quota_flavor *huge = mk_flavor("huge");
	flavor_label(huge, "memory-gb", "9223372036854775808");
	t.exprs = &gt;
	assert_int_equal(match(huge, &ps), QUOTA_MISMATCH_AFFINITY);
	quota_flavor_free(huge);
	quota_flavor_free(small);
	quota_flavor_free(large);
	quota_flavor_free(odd);
}

/* In Kubernetes an empty node selector term matches no node, while a term of matchFields alone
 * (node names) is for the node to decide, not the flavor. */
static void test_quota_flavor_match_affinity_empty_term_matches_nothing(void **state)
{
	struct quota_flavor *a100, *h100;
	mk_gpu_flavors(&a100, &h100);
	struct quota_affinity_term empty = { 0, NULL, 0 };
	struct quota_podset ps = { .count = 1, .n_terms = 1, .terms = &empty };
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_AFFINITY);
	empty.has_match_fields = 1;
	assert_int_equal(match(a100, &ps), QUOTA_MATCH);

	/* matchFields don't excuse the term's expressions. */
	struct quota_match_expr in = { "gpu.example.com/model", "In", 1,
				       (const char *const[]){ "h100" } };
	struct quota_affinity_term fields_and_expr = { 1, &in, 1 };
	ps.terms = &fields_and_expr;
	assert_int_equal(match(a100, &ps), QUOTA_MISMATCH_AFFINITY);
	assert_int_equal(match(h100, &ps), QUOTA_MATCH);

	/* An empty term ORed with one that matches still matches. */
	struct quota_affinity_term terms[] = { { 0, NULL, 0 }, { 1, &in, 0 } };
	ps.terms = terms;
	ps.n_terms = 2;
	assert_int_equal(match(h100, &ps), QUOTA_MATCH);
	quota_flavor_free(a100);
	quota_flavor_free(h100);
}

static void test_quota_flavor_match_taint_not_tolerated(void **state)
{
	struct quota_flavor *spot = mk_flavor("spot"), *ondemand = mk_flavor("on-demand");
	struct quota_flavor *evicting = mk_flavor("evicting");
	struct quota_podset ps = { .count = 1 };
	const struct quota_taint *taint = NULL;
	flavor_taint(spot, "spot", "true", "NoSchedule");
	flavor_taint(evicting, "maintenance", "", "NoExecute");

	assert_int_equal(quota_flavor_match(spot, &ps, &taint), QUOTA_MISMATCH_TAINT);
	assert_ptr_equal(taint, &spot->taints[0]);
	assert_int_equal(quota_flavor_match(evicting, &ps, &taint), QUOTA_MISMATCH_TAINT);
	assert_ptr_equal(taint, &evicting->taints[0]);
	assert_int_equal(quota_flavor_match(ondemand, &ps, &taint), QUOTA_MATCH);
	assert_null(taint);
	/* taint may be NULL when the caller only wants the verdict. */
	assert_int_equal(quota_flavor_match(spot, &ps, NULL), QUOTA_MISMATCH_TAINT);

	/* The first taint left untolerated is the one reported. */
	flavor_taint(spot, "gpu", "present", "NoSchedule");
	struct quota_taint spot_ok = { "spot", NULL, NULL, 1 };
	ps.tolerations = &spot_ok;
	ps.n_tolerations = 1;
	assert_int_equal(quota_flavor_match(spot, &ps, &taint), QUOTA_MISMATCH_TAINT);
	assert_ptr_equal(taint, &spot->taints[1]);

	/* Taints are judged before labels, as Kueue does. */
	flavor_label(evicting, "zone", "a");
	struct quota_kv sel[] = { { "zone", "b" } };
	ps.node_selector = sel;
	ps.n_selector = 1;
	assert_int_equal(quota_flavor_match(evicting, &ps, &taint), QUOTA_MISMATCH_TAINT);
	quota_flavor_free(spot);
	quota_flavor_free(ondemand);
	quota_flavor_free(evicting);
}

static void test_quota_flavor_match_taint_tolerated_by_pods(void **state)
{
	struct quota_flavor *spot = mk_flavor("spot");
	struct quota_taint equal = { "spot", "true", "NoSchedule", 0 };
	struct quota_taint wrong_value = { "spot", "false", "NoSchedule", 0 };
	struct quota_taint wrong_effect = { "spot", "true", "NoExecute", 0 };
	struct quota_taint exists_any_effect = { "spot", NULL, NULL, 1 };
	struct quota_podset ps = { .count = 1, .n_tolerations = 1 };
	flavor_taint(spot, "spot", "true", "NoSchedule");

	ps.tolerations = &equal;
	assert_int_equal(match(spot, &ps), QUOTA_MATCH);
	ps.tolerations = &wrong_value;
	assert_int_equal(match(spot, &ps), QUOTA_MISMATCH_TAINT);
	ps.tolerations = &wrong_effect;
	assert_int_equal(match(spot, &ps), QUOTA_MISMATCH_TAINT);
	ps.tolerations = &exists_any_effect;
	assert_int_equal(match(spot, &ps), QUOTA_MATCH);
	quota_flavor_free(spot);
}

static void test_quota_flavor_match_flavor_own_toleration_tolerates_its_taint(void **state)
{
	struct quota_flavor *spot = mk_flavor("spot");
	struct quota_podset ps = { .count = 1 };
	flavor_taint(spot, "spot", "true", "NoSchedule");
	assert_int_equal(match(spot, &ps), QUOTA_MISMATCH_TAINT);
	/* The flavor's tolerations are added to admitted pods, so they count. */
	flavor_toleration(spot, "spot", NULL, "NoSchedule", 1);
	assert_int_equal(match(spot, &ps), QUOTA_MATCH);
	quota_flavor_free(spot);
}

static void test_quota_flavor_match_prefer_no_schedule_taint_ignored(void **state)
{
	struct quota_flavor *spot = mk_flavor("spot");
	struct quota_podset ps = { .count = 1 };
	const struct quota_taint *taint = NULL;
	flavor_taint(spot, "spot", "true", "PreferNoSchedule");
	assert_int_equal(quota_flavor_match(spot, &ps, &taint), QUOTA_MATCH);
	assert_null(taint);
	quota_flavor_free(spot);
	quota_flavor_free(NULL); /* NULL-safe, like free */
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
	struct quota_taint all_noexec = { "", NULL, "NoExecute", 1 };
	assert_true(quota_tolerates(&all, 1, &taint));
	assert_true(quota_tolerates(&all_empty_key, 1, &taint));
	assert_false(quota_tolerates(&empty_key_equal, 1, &taint));
	assert_true(quota_tolerates(&exists_key, 1, &taint));
	assert_true(quota_tolerates(&equal_no_effect, 1, &taint));
	assert_false(quota_tolerates(&equal_other_key, 1, &taint));
	assert_false(quota_tolerates(&exists_noexec, 1, &taint));
	/* An empty key with Exists tolerates every key, but still only its own effect. */
	assert_false(quota_tolerates(&all_noexec, 1, &taint));
	assert_false(quota_tolerates(NULL, 0, &taint));
	struct quota_taint two[] = { equal_other_key, exists_key };
	assert_true(quota_tolerates(two, 2, &taint));
}

/* ---------------------------------------------------------------- amount formatting */

static void test_quota_format_amount_binary_for_bytes_decimal_otherwise(void **state)
{
	char buf[32];
	/* Byte-valued resources print in binary SI where exact. */
	quota_format_amount("memory", GI(1536), buf, sizeof(buf));
	assert_string_equal(buf, "1536Gi");
	quota_format_amount("memory", GI(1) + MI(512), buf, sizeof(buf));
	assert_string_equal(buf, "1536Mi");
	quota_format_amount("ephemeral-storage", GI(10), buf, sizeof(buf));
	assert_string_equal(buf, "10Gi");
	quota_format_amount("storage", GI(1024), buf, sizeof(buf));
	assert_string_equal(buf, "1Ti");
	quota_format_amount("hugepages-2Mi", MI(4), buf, sizeof(buf));
	assert_string_equal(buf, "4Mi");
	/* ... and in decimal SI where binary isn't exact. */
	quota_format_amount("memory", MILLI(1000), buf, sizeof(buf));
	assert_string_equal(buf, "1k");

	/* Everything else is decimal, even where a binary suffix would be exact. */
	quota_format_amount("cpu", MILLI(16), buf, sizeof(buf));
	assert_string_equal(buf, "16");
	quota_format_amount("cpu", 500, buf, sizeof(buf));
	assert_string_equal(buf, "500m");
	quota_format_amount("nvidia.com/gpu", MILLI(8), buf, sizeof(buf));
	assert_string_equal(buf, "8");
	quota_format_amount("pods", MILLI(1024), buf, sizeof(buf));
	assert_string_equal(buf, "1024");
	quota_format_amount("hugepages", GI(1), buf, sizeof(buf)); /* not "hugepages-<size>" */
	assert_string_equal(buf, "1073741824");
	quota_format_amount(NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	/* A value outside the quantity range still prints, in raw milli-units. */
	quota_format_amount("cpu", INT64_MIN, buf, sizeof(buf));
	assert_string_equal(buf, "-9223372036854775808m");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strmap_empty_get_remove_return_null),
		cmocka_unit_test(test_strmap_put_get_replace_remove),
		cmocka_unit_test(test_strmap_key_is_copied),
		cmocka_unit_test(test_strmap_reserve_then_puts_do_not_grow),
		cmocka_unit_test(test_strmap_borrowed_keys_are_not_copied),
		cmocka_unit_test(test_strmap_empty_key_and_null_value),
		cmocka_unit_test(test_strmap_release_frees_each_value_once),
		cmocka_unit_test(test_strmap_10k_keys_remove_every_other_all_lookups_hold),
		cmocka_unit_test(test_strmap_random_churn_matches_shadow),
		cmocka_unit_test(test_quota_flavor_match_node_selector_vs_flavor_labels),
		cmocka_unit_test(test_quota_flavor_match_affinity_in_notin_exists),
		cmocka_unit_test(test_quota_flavor_match_affinity_gt_lt),
		cmocka_unit_test(test_quota_flavor_match_affinity_empty_term_matches_nothing),
		cmocka_unit_test(test_quota_flavor_match_taint_not_tolerated),
		cmocka_unit_test(test_quota_flavor_match_taint_tolerated_by_pods),
		cmocka_unit_test(test_quota_flavor_match_flavor_own_toleration_tolerates_its_taint),
		cmocka_unit_test(test_quota_flavor_match_prefer_no_schedule_taint_ignored),
		cmocka_unit_test(test_quota_tolerates_kubernetes_rules),
		cmocka_unit_test(test_quota_format_amount_binary_for_bytes_decimal_otherwise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
