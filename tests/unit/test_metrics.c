/* SPDX-License-Identifier: Apache-2.0 */
/* The metrics registry (obs/metrics.h) and the text exposition format it writes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obs/metrics.h"

#define V(...) ((const char *const[]){ __VA_ARGS__ })

static char *render(struct metrics *reg)
{
	struct buf b;
	buf_init(&b, 1u << 20);
	assert_int_equal(metrics_render(reg, &b), 0);
	char *text = b.data ? buf_take(&b) : strdup("");
	assert_non_null(text);
	return text;
}

static void assert_renders(struct metrics *reg, const char *want)
{
	char *got = render(reg);
	if (strcmp(got, want) != 0)
		fail_msg("rendered:\n%s\nwanted:\n%s", got, want);
	free(got);
}

static void test_metrics_counter_and_gauge_render_in_order(void **state)
{
	(void)state;
	struct metrics *reg;
	assert_int_equal(metrics_new(&reg), 0);
	struct metric_family *c = metrics_add_family(reg, METRIC_COUNTER, "a_total", "Things done.",
						     (const char *[]){ "cq", NULL }, NULL, 0, 0);
	struct metric_family *g =
		metrics_add_family(reg, METRIC_GAUGE, "b", "Level.", NULL, NULL, 0, 0);
	assert_non_null(c);
	assert_non_null(g);
	/* Added out of order: rendered sorted by label value. */
	assert_int_equal(metrics_add(c, V("zeta"), 1), 0);
	assert_int_equal(metrics_add(c, V("alpha"), 2), 0);
	assert_int_equal(metrics_add(c, V("alpha"), 0.5), 0);
	assert_int_equal(metrics_set(g, NULL, -3), 0);
	assert_renders(reg, "# HELP a_total Things done.\n"
			    "# TYPE a_total counter\n"
			    "a_total{cq=\"alpha\"} 2.5\n"
			    "a_total{cq=\"zeta\"} 1\n"
			    "# HELP b Level.\n"
			    "# TYPE b gauge\n"
			    "b -3\n");
	assert_true(metrics_value(c, V("alpha")) == 2.5);
	assert_true(metrics_value(c, V("nope")) == -1);
	metrics_free(reg);
}

static void test_metrics_escapes_label_values_and_help(void **state)
{
	(void)state;
	struct metrics *reg;
	assert_int_equal(metrics_new(&reg), 0);
	struct metric_family *g = metrics_add_family(reg, METRIC_GAUGE, "g", "a \\ b\nc \"q\"",
						     (const char *[]){ "v", NULL }, NULL, 0, 0);
	assert_int_equal(metrics_set(g, V("back\\slash \"quoted\"\nline"), 1), 0);
	assert_renders(reg, "# HELP g a \\\\ b\\nc \"q\"\n"
			    "# TYPE g gauge\n"
			    "g{v=\"back\\\\slash \\\"quoted\\\"\\nline\"} 1\n");
	metrics_free(reg);
}

static void test_metrics_histogram_cumulative_with_inf(void **state)
{
	(void)state;
	struct metrics *reg;
	static const double bounds[] = { 0.5, 1, 2.5 };
	assert_int_equal(metrics_new(&reg), 0);
	struct metric_family *h = metrics_add_family(reg, METRIC_HISTOGRAM, "h_seconds", "Latency.",
						     (const char *[]){ "r", NULL }, bounds, 3, 0);
	assert_non_null(h);
	assert_int_equal(metrics_observe(h, V("x"), 0.25), 0);
	assert_int_equal(metrics_observe(h, V("x"), 1), 0); /* on a bound: that bucket (le) */
	assert_int_equal(metrics_observe(h, V("x"), 2), 0);
	assert_int_equal(metrics_observe(h, V("x"), 100), 0);
	assert_renders(reg, "# HELP h_seconds Latency.\n"
			    "# TYPE h_seconds histogram\n"
			    "h_seconds_bucket{r=\"x\",le=\"0.5\"} 1\n"
			    "h_seconds_bucket{r=\"x\",le=\"1\"} 2\n"
			    "h_seconds_bucket{r=\"x\",le=\"2.5\"} 3\n"
			    "h_seconds_bucket{r=\"x\",le=\"+Inf\"} 4\n"
			    "h_seconds_sum{r=\"x\"} 103.25\n"
			    "h_seconds_count{r=\"x\"} 4\n");
	assert_true(metrics_value(h, V("x")) == 4);
	metrics_free(reg);
}

static void test_metrics_removal_of_series(void **state)
{
	(void)state;
	struct metrics *reg;
	assert_int_equal(metrics_new(&reg), 0);
	struct metric_family *c =
		metrics_add_family(reg, METRIC_COUNTER, "e_total", "Evictions.",
				   (const char *[]){ "cluster_queue", "reason", NULL }, NULL, 0, 0);
	/* Enough series that removal shifts entries around in the map. */
	char name[32];
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "cq-%d", i % 20);
		char reason[16];
		snprintf(reason, sizeof(reason), "r%d", i / 20);
		assert_int_equal(metrics_add(c, V(name, reason), 1), 0);
	}
	assert_int_equal(metrics_series_count(c), 200);
	metrics_remove_matching(c, "cluster_queue", "cq-3");
	assert_int_equal(metrics_series_count(c), 190);
	for (int r = 0; r < 10; r++) {
		char reason[16];
		snprintf(reason, sizeof(reason), "r%d", r);
		assert_true(metrics_value(c, V("cq-3", reason)) == -1);
		assert_true(metrics_value(c, V("cq-4", reason)) == 1);
	}
	metrics_remove(c, V("cq-4", "r0"));
	assert_int_equal(metrics_series_count(c), 189);
	metrics_remove_matching(c, "no_such_label", "cq-5"); /* nothing */
	assert_int_equal(metrics_series_count(c), 189);
	metrics_reset(c);
	assert_int_equal(metrics_series_count(c), 0);
	/* A family without series renders nothing at all. */
	assert_renders(reg, "");
	metrics_free(reg);
}

static void test_metrics_replica_role(void **state)
{
	(void)state;
	struct metrics *reg;
	assert_int_equal(metrics_new(&reg), 0);
	struct metric_family *c = metrics_add_family(reg, METRIC_COUNTER, "k_total", "K.",
						     (const char *[]){ "cq", NULL }, NULL, 0,
						     METRIC_WITH_ROLE);
	static const double bounds[] = { 1 };
	struct metric_family *h = metrics_add_family(reg, METRIC_HISTOGRAM, "k_seconds", "S.", NULL,
						     bounds, 1, METRIC_WITH_ROLE);
	assert_string_equal(metrics_replica_role(reg), "standalone");
	assert_int_equal(metrics_add(c, V("a"), 1), 0);
	assert_int_equal(metrics_observe(h, NULL, 0.5), 0);
	metrics_set_replica_role(reg, "leader");
	assert_renders(reg, "# HELP k_total K.\n"
			    "# TYPE k_total counter\n"
			    "k_total{cq=\"a\",replica_role=\"leader\"} 1\n"
			    "# HELP k_seconds S.\n"
			    "# TYPE k_seconds histogram\n"
			    "k_seconds_bucket{replica_role=\"leader\",le=\"1\"} 1\n"
			    "k_seconds_bucket{replica_role=\"leader\",le=\"+Inf\"} 1\n"
			    "k_seconds_sum{replica_role=\"leader\"} 0.5\n"
			    "k_seconds_count{replica_role=\"leader\"} 1\n");
	metrics_free(reg);
}

static void test_metrics_refuses_misuse(void **state)
{
	(void)state;
	struct metrics *reg;
	static const double unsorted[] = { 2, 1 };
	assert_int_equal(metrics_new(&reg), 0);
	assert_null(metrics_add_family(reg, METRIC_GAUGE, "1bad", "x", NULL, NULL, 0, 0));
	assert_null(metrics_add_family(reg, METRIC_GAUGE, "ok", "x", (const char *[]){ "le", NULL },
				       NULL, 0, 0));
	assert_null(metrics_add_family(reg, METRIC_GAUGE, "ok", "x",
				       (const char *[]){ "a-b", NULL }, NULL, 0, 0));
	assert_null(metrics_add_family(reg, METRIC_HISTOGRAM, "h", "x", NULL, unsorted, 2, 0));
	assert_null(metrics_add_family(reg, METRIC_HISTOGRAM, "h", "x", NULL, NULL, 0, 0));
	struct metric_family *c =
		metrics_add_family(reg, METRIC_COUNTER, "c_total", "x", NULL, NULL, 0, 0);
	assert_non_null(c);
	assert_null(metrics_add_family(reg, METRIC_GAUGE, "c_total", "dup", NULL, NULL, 0, 0));
	assert_int_equal(metrics_add(c, NULL, -1), -EINVAL); /* counters only go up */
	assert_int_equal(metrics_set(c, NULL, 1), -EINVAL);
	assert_int_equal(metrics_observe(c, NULL, 1), -EINVAL);
	metrics_free(reg);
}

static void test_metrics_family_is_bounded(void **state)
{
	(void)state;
	struct metrics *reg;
	char name[32];
	assert_int_equal(metrics_new(&reg), 0);
	struct metric_family *g = metrics_add_family(reg, METRIC_GAUGE, "g", "x",
						     (const char *[]){ "n", NULL }, NULL, 0, 0);
	for (int i = 0; i < METRICS_MAX_SERIES; i++) {
		snprintf(name, sizeof(name), "%d", i);
		assert_int_equal(metrics_set(g, V(name), 1), 0);
	}
	assert_int_equal(metrics_set(g, V("one-more"), 1), -ENOSPC);
	assert_int_equal(metrics_set(g, V("7"), 2), 0); /* existing series still update */
	metrics_free(reg);
}

static void test_metrics_number_format(void **state)
{
	(void)state;
	struct metrics *reg;
	assert_int_equal(metrics_new(&reg), 0);
	struct metric_family *g = metrics_add_family(reg, METRIC_GAUGE, "n", "x",
						     (const char *[]){ "k", NULL }, NULL, 0, 0);
	metrics_set(g, V("a"), 0.1);
	metrics_set(g, V("b"), 1.0 / 0.0);
	metrics_set(g, V("c"), 123456789012.0);
	metrics_set(g, V("d"), 1e300);
	assert_renders(reg, "# HELP n x\n# TYPE n gauge\n"
			    "n{k=\"a\"} 0.1\n"
			    "n{k=\"b\"} +Inf\n"
			    "n{k=\"c\"} 123456789012\n"
			    "n{k=\"d\"} 1e+300\n");
	metrics_free(reg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_counter_and_gauge_render_in_order),
		cmocka_unit_test(test_metrics_escapes_label_values_and_help),
		cmocka_unit_test(test_metrics_histogram_cumulative_with_inf),
		cmocka_unit_test(test_metrics_removal_of_series),
		cmocka_unit_test(test_metrics_replica_role),
		cmocka_unit_test(test_metrics_refuses_misuse),
		cmocka_unit_test(test_metrics_family_is_bounded),
		cmocka_unit_test(test_metrics_number_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
