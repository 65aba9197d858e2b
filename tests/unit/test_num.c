/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for core/num: whole strings only, ranges inclusive, overflow an error. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/num.h"

static void test_i64(void **state)
{
	int64_t v = 7;
	(void)state;
	assert_int_equal(num_parse_i64("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(num_parse_i64("+10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(num_parse_i64("-5", -5, 10, &v), 0);
	assert_int_equal(v, -5);
	assert_int_equal(num_parse_i64("007", 0, 10, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(num_parse_i64("9223372036854775807", INT64_MIN, INT64_MAX, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(num_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &v), 0);
	assert_true(v == INT64_MIN);
	v = 42;
	/* Not numbers: the value is left alone. */
	static const char *const bad[] = { "",  " 1",  "1 ",  "1x",  "0x10", "+",
					   "-", "+-1", "1.0", "1e3", "١",    "--1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(num_parse_i64(bad[i], INT64_MIN, INT64_MAX, &v), -EINVAL);
	assert_int_equal(num_parse_i64(NULL, 0, 1, &v), -EINVAL);
	/* Numbers out of range, overflow among them. */
	assert_int_equal(num_parse_i64("11", 0, 10, &v), -ERANGE);
	assert_int_equal(num_parse_i64("-1", 0, 10, &v), -ERANGE);
	assert_int_equal(num_parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &v), -ERANGE);
	assert_int_equal(num_parse_i64("-9223372036854775809", INT64_MIN, INT64_MAX, &v), -ERANGE);
	assert_int_equal(num_parse_i64("99999999999999999999999", 0, INT64_MAX, &v), -ERANGE);
	/* A long run of digits with a letter after it is not a number, not an overflow. */
	assert_int_equal(num_parse_i64("99999999999999999999999x", 0, INT64_MAX, &v), -EINVAL);
	assert_int_equal(v, 42);
}

static void test_u64(void **state)
{
	uint64_t v = 7;
	(void)state;
	assert_int_equal(num_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(num_parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	assert_int_equal(num_parse_u64("100", 99, &v), -ERANGE);
	assert_int_equal(num_parse_u64("99", 99, &v), 0);
	assert_int_equal(v, 99);
	assert_int_equal(num_parse_u64("3", 2, &v), -ERANGE); /* a digit above the limit */
	assert_int_equal(num_parse_u64("0", 0, &v), 0);
	assert_int_equal(v, 0);
	v = 42;
	static const char *const bad[] = { "", "+1", "-0", " 1", "1\n", "1.5", "x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(num_parse_u64(bad[i], UINT64_MAX, &v), -EINVAL);
	assert_int_equal(num_parse_u64(NULL, 1, &v), -EINVAL);
	assert_int_equal(v, 42);
}

static void test_double(void **state)
{
	double v = 7;
	(void)state;
	assert_int_equal(num_parse_double("0.3", 0, 100, &v), 0);
	assert_true(v == 0.3);
	assert_int_equal(num_parse_double("100", 0, 100, &v), 0);
	assert_true(v == 100);
	assert_int_equal(num_parse_double(".5", 0, 1, &v), 0);
	assert_true(v == 0.5);
	assert_int_equal(num_parse_double("5.", 0, 10, &v), 0);
	assert_true(v == 5);
	assert_int_equal(num_parse_double("-1.5e2", -1000, 0, &v), 0);
	assert_true(v == -150);
	assert_int_equal(num_parse_double("+2E-1", 0, 1, &v), 0);
	assert_true(v == 0.2);
	/* Underflow is 0, not an error. */
	assert_int_equal(num_parse_double("1e-400", 0, 1, &v), 0);
	assert_true(v == 0);
	v = 42;
	static const char *const bad[] = { "",    ".",        "-",    "e5",    "1e",
					   "1e+", " 1",       "1 ",   "0x1p3", "inf",
					   "nan", "Infinity", "1..2", "1,5",   "1.5x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(num_parse_double(bad[i], -1e308, 1e308, &v), -EINVAL);
	assert_int_equal(num_parse_double(NULL, 0, 1, &v), -EINVAL);
	assert_int_equal(num_parse_double("100.5", 0, 100, &v), -ERANGE);
	assert_int_equal(num_parse_double("-0.1", 0, 100, &v), -ERANGE);
	assert_int_equal(num_parse_double("1e309", 0, 1e308, &v), -ERANGE); /* overflow */
	assert_int_equal(num_parse_double("-1e309", -1e308, 0, &v), -ERANGE);
	assert_true(v == 42);
}

static void test_duration(void **state)
{
	(void)state;
	int64_t ms = -1;
	assert_int_equal(num_parse_duration_ms("250ms", 0, INT64_MAX, &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(num_parse_duration_ms("1h2m3s", 0, INT64_MAX, &ms), 0);
	assert_int_equal(ms, 3723000);
	assert_int_equal(num_parse_duration_ms("1.5h", 0, INT64_MAX, &ms), 0);
	assert_int_equal(ms, 5400000);
	assert_int_equal(num_parse_duration_ms(".5s", 0, INT64_MAX, &ms), 0);
	assert_int_equal(ms, 500);
	assert_int_equal(num_parse_duration_ms("1.0001s", 0, INT64_MAX, &ms), 0);
	assert_int_equal(ms, 1000); /* below a millisecond is cut */
	assert_int_equal(num_parse_duration_ms("0", 0, INT64_MAX, &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(num_parse_duration_ms("7d", 1, INT64_MAX, &ms), 0);
	assert_int_equal(ms, 7 * 86400000LL);
	ms = -1;
	/* Not durations: no unit, no number, a sign, days where not asked for, stray bytes. */
	const char *bad[] = { "",    "5",   "m",  ".s",    "-5s",    "+5s", "1d",
			      " 5s", "5s ", "5x", "1..5s", "1.5.5s", "5ss", NULL };
	for (const char **b = bad; *b; b++)
		assert_int_equal(num_parse_duration_ms(*b, 0, INT64_MAX, &ms), -EINVAL);
	assert_int_equal(num_parse_duration_ms(NULL, 0, INT64_MAX, &ms), -EINVAL);
	assert_int_equal(ms, -1);
	/* Too long: over max, or past any integer; a bad byte after an overflow is still bad. */
	assert_int_equal(num_parse_duration_ms("99999999999999999999h", 0, INT64_MAX, &ms),
			 -ERANGE);
	assert_int_equal(num_parse_duration_ms("2562047788015h", 0, INT64_MAX, &ms), 0);
	assert_int_equal(num_parse_duration_ms("2562047788016h", 0, INT64_MAX, &ms), -ERANGE);
	assert_int_equal(num_parse_duration_ms("2s", 0, 1999, &ms), -ERANGE);
	assert_int_equal(num_parse_duration_ms("1.9995s", 0, 1999, &ms), 0);
	assert_int_equal(ms, 1999);
	assert_int_equal(num_parse_duration_ms("99999999999999999999hx", 0, INT64_MAX, &ms),
			 -EINVAL);
	assert_int_equal(num_parse_duration_ms("0.99999999999999999999999h", 0, INT64_MAX, &ms), 0);
	assert_int_equal(ms, 3599999);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_i64),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_double),
		cmocka_unit_test(test_duration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
