/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for core/labels: LabelSelectors and node selector requirements, the one rule the
 * engine, quota, placement and the configuration all ask. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/labels.h"

/* Labels for the tests: a NULL-terminated list of key, value pairs. */
static const char *pairs_get(const void *labels, const char *key)
{
	for (const char *const *kv = labels; kv && kv[0]; kv += 2)
		if (!strcmp(kv[0], key))
			return kv[1];
	return NULL;
}

static const char *const team_a_gold[] = { "team", "a", "tier", "gold", NULL };

#define EXPR(k, o, ...)                                                                   \
	((struct quota_match_expr){                                                       \
		k, o, sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *) - 1, \
		(const char *const[]){ __VA_ARGS__ } })

static int one(struct quota_match_expr e, const char *const *labels)
{
	const struct label_selector s = { 0, NULL, 1, &e };
	return labels_selector_matches(&s, pairs_get, labels);
}

static void test_labels_empty_selector_matches_everything(void **state)
{
	(void)state;
	const struct label_selector empty = { 0 };
	assert_true(labels_selector_matches(&empty, pairs_get, team_a_gold));
	assert_true(labels_selector_matches(&empty, pairs_get, NULL));
}

static void test_labels_match_labels_all_set_and_equal(void **state)
{
	(void)state;
	struct quota_kv want[] = { { "team", "a" }, { "tier", "gold" } };
	const struct label_selector s = { 2, want, 0, NULL };
	static const char *const extra[] = { "team", "a", "tier", "gold", "x", "y", NULL };
	static const char *const partial[] = { "team", "a", NULL };
	static const char *const wrong[] = { "team", "b", "tier", "gold", NULL };
	assert_true(labels_selector_matches(&s, pairs_get, extra));
	assert_false(labels_selector_matches(&s, pairs_get, partial));
	assert_false(labels_selector_matches(&s, pairs_get, wrong));
	assert_false(labels_selector_matches(&s, pairs_get, NULL));
}

static void test_labels_set_operators(void **state)
{
	(void)state;
	const char *const *l = team_a_gold;
	assert_true(one(EXPR("team", "In", "a", "b", NULL), l));
	assert_false(one(EXPR("team", "In", "b", NULL), l));
	assert_false(one(EXPR("nope", "In", "a", NULL), l));
	assert_true(one(EXPR("team", "NotIn", "b", NULL), l));
	assert_false(one(EXPR("team", "NotIn", "a", NULL), l));
	assert_true(one(EXPR("nope", "NotIn", "a", NULL), l));
	assert_true(one(EXPR("tier", "Exists", NULL), l));
	assert_false(one(EXPR("nope", "Exists", NULL), l));
	assert_true(one(EXPR("nope", "DoesNotExist", NULL), l));
	assert_false(one(EXPR("tier", "DoesNotExist", NULL), l));
	/* An operator we don't know never matches, whatever the labels. */
	assert_false(one(EXPR("team", "Matches", "a", NULL), l));
	assert_false(one(EXPR("team", NULL, "a", NULL), l));
}

static void test_labels_match_labels_and_expressions_are_anded(void **state)
{
	(void)state;
	struct quota_kv team[] = { { "team", "a" } };
	struct quota_match_expr gold_no_x[] = { EXPR("tier", "In", "gold", NULL),
						EXPR("x", "DoesNotExist", NULL) };
	struct quota_match_expr silver[] = { EXPR("tier", "In", "silver", NULL) };
	const struct label_selector yes = { 1, team, 2, gold_no_x }, no = { 1, team, 1, silver };
	assert_true(labels_selector_matches(&yes, pairs_get, team_a_gold));
	assert_false(labels_selector_matches(&no, pairs_get, team_a_gold));
}

/* Gt and Lt compare int64s, as Kubernetes parses them: the label must be set, there must be
 * exactly one value, and both must be base-10 int64s. A number past int64 is not one: strtoll
 * would clamp it to INT64_MAX or INT64_MIN, and a clamped label or bound would decide a
 * comparison Kubernetes refuses to make (quota.c's copy of the rule once did). */
static void test_labels_gt_lt_and_overflow(void **state)
{
	(void)state;
	static const char *const labels[] = { "gpus", "8",
					      "name", "eight",
					      "neg",  "-3",
					      "huge", "9223372036854775808",
					      "max",  "9223372036854775807",
					      "tiny", "-9223372036854775809",
					      NULL };
	static const struct {
		const char *key, *op, *bound;
		int want;
	} rows[] = {
		{ "gpus", "Gt", "4", 1 },
		{ "gpus", "Gt", "8", 0 },
		{ "gpus", "Lt", "9", 1 },
		{ "gpus", "Lt", "8", 0 },
		{ "neg", "Lt", "0", 1 },
		{ "nope", "Gt", "0", 0 },
		{ "nope", "Lt", "0", 0 },
		{ "name", "Gt", "0", 0 },
		{ "gpus", "Gt", "4x", 0 },
		{ "gpus", "Gt", "", 0 },
		{ "huge", "Gt", "0", 0 },
		{ "huge", "Lt", "0", 0 },
		{ "tiny", "Lt", "0", 0 },
		{ "tiny", "Gt", "0", 0 },
		{ "max", "Lt", "9223372036854775808", 0 },
		{ "max", "Gt", "-9223372036854775809", 0 },
		/* The edges themselves are int64s. */
		{ "max", "Gt", "9223372036854775806", 1 },
		{ "max", "Gt", "-9223372036854775808", 1 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (one(EXPR(rows[i].key, rows[i].op, rows[i].bound, NULL), labels) != rows[i].want)
			fail_msg("row %zu: %s %s %s: want %d", i, rows[i].key, rows[i].op,
				 rows[i].bound, rows[i].want);
	assert_false(one(EXPR("gpus", "Gt", NULL), labels));
	assert_false(one(EXPR("gpus", "Gt", "1", "2", NULL), labels));
}

/* labels_expr_matches takes the label's value directly (quota.c asks it only about the keys a
 * flavor sets; placement.c about a node's). */
static void test_labels_expr_on_a_value(void **state)
{
	(void)state;
	struct quota_match_expr in = EXPR("k", "In", "v", NULL), gt = EXPR("k", "Gt", "1", NULL);
	assert_true(labels_expr_matches(&in, "v"));
	assert_false(labels_expr_matches(&in, NULL));
	assert_true(labels_expr_matches(&gt, "2"));
	assert_false(labels_expr_matches(&gt, "99999999999999999999"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels_empty_selector_matches_everything),
		cmocka_unit_test(test_labels_match_labels_all_set_and_equal),
		cmocka_unit_test(test_labels_set_operators),
		cmocka_unit_test(test_labels_match_labels_and_expressions_are_anded),
		cmocka_unit_test(test_labels_gt_lt_and_overflow),
		cmocka_unit_test(test_labels_expr_on_a_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
