/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes quantities. Every expected value and canonical string in the tables below was
 * checked against k8s.io/apimachinery v0.35.4 (ParseQuantity, MilliValue, String): where the
 * input carries more precision than a milli-unit, against String() of the value rounded to
 * milli-units, which is what muster stores.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/quantity.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct parse_case {
	const char *input;
	int64_t milli;
	enum quantity_format format;
};

struct canonical_case {
	const char *input;
	const char *canonical;
};

struct error_case {
	const char *input;
	int err;
};

static const char *format_name(enum quantity_format format)
{
	switch (format) {
	case QUANTITY_DECIMAL_SI:
		return "DecimalSI";
	case QUANTITY_BINARY_SI:
		return "BinarySI";
	case QUANTITY_DECIMAL_EXPONENT:
		return "DecimalExponent";
	}
	return "?";
}

static void check_parse_table(const struct parse_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct quantity q;
		int err = quantity_parse(cases[i].input, &q);
		if (err != 0)
			fail_msg("\"%s\": parse failed with %d", cases[i].input, err);
		if (q.milli != cases[i].milli)
			fail_msg("\"%s\": milli %lld, want %lld", cases[i].input,
				 (long long)q.milli, (long long)cases[i].milli);
		if (q.format != cases[i].format)
			fail_msg("\"%s\": format %s, want %s", cases[i].input,
				 format_name(q.format), format_name(cases[i].format));
	}
}

static void check_error_table(const struct error_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct quantity q = { .milli = 42, .format = QUANTITY_BINARY_SI };
		int err = quantity_parse(cases[i].input, &q);
		if (err != cases[i].err)
			fail_msg("\"%s\": got %d, want %d", cases[i].input, err, cases[i].err);
		/* A failed parse leaves the output alone. */
		if (q.milli != 42 || q.format != QUANTITY_BINARY_SI)
			fail_msg("\"%s\": output changed on error", cases[i].input);
	}
}

static void test_quantity_parse_every_suffix(void **state)
{
	static const struct parse_case cases[] = {
		{ "0", 0, QUANTITY_DECIMAL_SI },
		{ "1", 1000, QUANTITY_DECIMAL_SI },
		{ "1000000n", 1, QUANTITY_DECIMAL_SI },
		{ "1000u", 1, QUANTITY_DECIMAL_SI },
		{ "1m", 1, QUANTITY_DECIMAL_SI },
		{ "500m", 500, QUANTITY_DECIMAL_SI },
		{ "1k", INT64_C(1000000), QUANTITY_DECIMAL_SI },
		{ "1M", INT64_C(1000000000), QUANTITY_DECIMAL_SI },
		{ "1G", INT64_C(1000000000000), QUANTITY_DECIMAL_SI },
		{ "1T", INT64_C(1000000000000000), QUANTITY_DECIMAL_SI },
		{ "1P", INT64_C(1000000000000000000), QUANTITY_DECIMAL_SI },
		{ "0.000001E", INT64_C(1000000000000000), QUANTITY_DECIMAL_SI },
		{ "1Ki", INT64_C(1024000), QUANTITY_BINARY_SI },
		{ "1Mi", INT64_C(1048576000), QUANTITY_BINARY_SI },
		{ "1Gi", INT64_C(1073741824000), QUANTITY_BINARY_SI },
		{ "1Ti", INT64_C(1099511627776000), QUANTITY_BINARY_SI },
		{ "1Pi", INT64_C(1125899906842624000), QUANTITY_BINARY_SI },
		{ "0.0001Ei", INT64_C(115292150460684698), QUANTITY_BINARY_SI },
		{ "0Ki", 0, QUANTITY_BINARY_SI },
		{ "0e3", 0, QUANTITY_DECIMAL_EXPONENT },
	};
	(void)state;
	check_parse_table(cases, ARRAY_SIZE(cases));
}

static void test_quantity_parse_decimal_exponents(void **state)
{
	static const struct parse_case cases[] = {
		{ "1e3", INT64_C(1000000), QUANTITY_DECIMAL_EXPONENT },
		{ "1E3", INT64_C(1000000), QUANTITY_DECIMAL_EXPONENT },
		{ "1e+3", INT64_C(1000000), QUANTITY_DECIMAL_EXPONENT },
		{ "1e00003", INT64_C(1000000), QUANTITY_DECIMAL_EXPONENT },
		{ "1e-3", 1, QUANTITY_DECIMAL_EXPONENT },
		{ "1E-3", 1, QUANTITY_DECIMAL_EXPONENT },
		{ "1.5E-2", 15, QUANTITY_DECIMAL_EXPONENT },
		{ "0.5e-2", 5, QUANTITY_DECIMAL_EXPONENT },
		{ "1e0", 1000, QUANTITY_DECIMAL_EXPONENT },
		{ "1e-0", 1000, QUANTITY_DECIMAL_EXPONENT },
		{ "12e3", INT64_C(12000000), QUANTITY_DECIMAL_EXPONENT },
		{ "1.2e3", INT64_C(1200000), QUANTITY_DECIMAL_EXPONENT },
		{ "1.3E+6", INT64_C(1300000000), QUANTITY_DECIMAL_EXPONENT },
		{ "9e15", INT64_C(9000000000000000000), QUANTITY_DECIMAL_EXPONENT },
		{ "0e100", 0, QUANTITY_DECIMAL_EXPONENT },
		/* Any exponent that fits an int64 is accepted; the value decides the outcome. */
		{ "0e-9223372036854775808", 0, QUANTITY_DECIMAL_EXPONENT },
		{ "1e-9223372036854775808", 1, QUANTITY_DECIMAL_EXPONENT },
	};
	(void)state;
	check_parse_table(cases, ARRAY_SIZE(cases));
}

static void test_quantity_parse_fractions(void **state)
{
	static const struct parse_case cases[] = {
		{ "0.5", 500, QUANTITY_DECIMAL_SI },
		{ "1.5", 1500, QUANTITY_DECIMAL_SI },
		{ "0.001", 1, QUANTITY_DECIMAL_SI },
		{ ".5", 500, QUANTITY_DECIMAL_SI },
		{ "5.", 5000, QUANTITY_DECIMAL_SI },
		{ "1.G", INT64_C(1000000000000), QUANTITY_DECIMAL_SI },
		{ "100.035k", INT64_C(100035000), QUANTITY_DECIMAL_SI },
		{ "0.0005k", 500, QUANTITY_DECIMAL_SI },
		{ "7.123456M", INT64_C(7123456000), QUANTITY_DECIMAL_SI },
		{ "6.987654321G", INT64_C(6987654321000), QUANTITY_DECIMAL_SI },
		{ "0.5Ki", INT64_C(512000), QUANTITY_BINARY_SI },
		{ "0.5Mi", INT64_C(524288000), QUANTITY_BINARY_SI },
		{ "1.5Gi", INT64_C(1610612736000), QUANTITY_BINARY_SI },
		{ "0.05Gi", INT64_C(53687091200), QUANTITY_BINARY_SI },
		{ "100.035Ki", INT64_C(102435840), QUANTITY_BINARY_SI },
		{ "1024.5Ki", INT64_C(1049088000), QUANTITY_BINARY_SI },
		{ "01", 1000, QUANTITY_DECIMAL_SI },
		{ "+1", 1000, QUANTITY_DECIMAL_SI },
		{ "00000.0000", 0, QUANTITY_DECIMAL_SI },
	};
	(void)state;
	check_parse_table(cases, ARRAY_SIZE(cases));
}

static void test_quantity_parse_rounds_up_sub_milli(void **state)
{
	static const struct parse_case cases[] = {
		{ "1n", 1, QUANTITY_DECIMAL_SI },
		{ "999n", 1, QUANTITY_DECIMAL_SI },
		{ "1u", 1, QUANTITY_DECIMAL_SI },
		{ "0.1m", 1, QUANTITY_DECIMAL_SI },
		{ "0.0001", 1, QUANTITY_DECIMAL_SI },
		{ "1.0001", 1001, QUANTITY_DECIMAL_SI },
		{ "1.2345", 1235, QUANTITY_DECIMAL_SI },
		{ "3.001n", 1, QUANTITY_DECIMAL_SI },
		{ "1e-9", 1, QUANTITY_DECIMAL_EXPONENT },
		{ "1e-10", 1, QUANTITY_DECIMAL_EXPONENT },
		{ "1.1E-9", 1, QUANTITY_DECIMAL_EXPONENT },
		{ "1.0001Ki", INT64_C(1024103), QUANTITY_BINARY_SI },
		{ "0.9999999999Ki", INT64_C(1024000), QUANTITY_BINARY_SI },
		{ "9223372036854775.8069", INT64_MAX, QUANTITY_DECIMAL_SI },
	};
	(void)state;
	check_parse_table(cases, ARRAY_SIZE(cases));
}

static void test_quantity_parse_binary_below_one_becomes_decimal(void **state)
{
	/*
	 * Kubernetes switches a binary-SI value strictly between -1 and 1 to decimal SI, judged
	 * after rounding to nano-units: 1024 * 0.00097656249999 rounds to exactly 1 there.
	 */
	static const struct parse_case cases[] = {
		{ "0.000000000001Ki", 1, QUANTITY_DECIMAL_SI },
		{ "0.0009765624Ki", 1000, QUANTITY_DECIMAL_SI },
		{ "-0.0009765624Ki", -1000, QUANTITY_DECIMAL_SI },
		{ "0.0009765625Ki", 1000, QUANTITY_BINARY_SI },
		{ "0.00097656249999Ki", 1000, QUANTITY_BINARY_SI },
		{ "-00.00Mi", 0, QUANTITY_BINARY_SI },
	};
	(void)state;
	check_parse_table(cases, ARRAY_SIZE(cases));
}

static void test_quantity_parse_negative_values(void **state)
{
	/* Sub-milli magnitudes round away from zero, as Kubernetes rounds them. */
	static const struct parse_case cases[] = {
		{ "-1", -1000, QUANTITY_DECIMAL_SI },
		{ "-500m", -500, QUANTITY_DECIMAL_SI },
		{ "-1.5Gi", -INT64_C(1610612736000), QUANTITY_BINARY_SI },
		{ "-0.5Ki", -INT64_C(512000), QUANTITY_BINARY_SI },
		{ "-0.1m", -1, QUANTITY_DECIMAL_SI },
		{ "-1e-9", -1, QUANTITY_DECIMAL_EXPONENT },
		{ "-1.0001", -1001, QUANTITY_DECIMAL_SI },
		{ "-0", 0, QUANTITY_DECIMAL_SI },
	};
	(void)state;
	check_parse_table(cases, ARRAY_SIZE(cases));
}

static void test_quantity_parse_accepts_int64_boundary(void **state)
{
	static const struct parse_case cases[] = {
		{ "9223372036854775807m", INT64_MAX, QUANTITY_DECIMAL_SI },
		{ "-9223372036854775807m", -INT64_MAX, QUANTITY_DECIMAL_SI },
		{ "9223372036854775.807", INT64_MAX, QUANTITY_DECIMAL_SI },
		{ "9.223372036854775807P", INT64_MAX, QUANTITY_DECIMAL_SI },
		{ "9223372036854775807000u", INT64_MAX, QUANTITY_DECIMAL_SI },
		{ "9223372036854775807000000n", INT64_MAX, QUANTITY_DECIMAL_SI },
		{ "8Pi", INT64_C(9007199254740992000), QUANTITY_BINARY_SI },
		{ "8192Ti", INT64_C(9007199254740992000), QUANTITY_BINARY_SI },
		{ "8191.999Ti", INT64_C(9007198155229364224), QUANTITY_BINARY_SI },
	};
	(void)state;
	check_parse_table(cases, ARRAY_SIZE(cases));
}

static void test_quantity_parse_rejects_overflow(void **state)
{
	static const struct error_case cases[] = {
		{ "1E", -ERANGE },
		{ "12E", -ERANGE },
		{ "1Ei", -ERANGE },
		{ "-9Ei", -ERANGE },
		{ "9Pi", -ERANGE },
		{ "8.2Pi", -ERANGE },
		{ "9.3P", -ERANGE },
		{ "1e16", -ERANGE },
		{ "9223372036854775808m", -ERANGE },
		/* The range is symmetric: INT64_MIN would make negation overflow. */
		{ "-9223372036854775808m", -ERANGE },
		{ "9223372036854775.8071", -ERANGE },
		{ "9223372036854776", -ERANGE },
		{ "9223372036854775807", -ERANGE },
		{ "10000000000000000000000", -ERANGE },
		{ "1e9223372036854775807", -ERANGE },
		{ "0.00000000000000000000000000001e100", -ERANGE },
	};
	(void)state;
	check_error_table(cases, ARRAY_SIZE(cases));
}

static void test_quantity_parse_rejects_garbage(void **state)
{
	static const struct error_case cases[] = {
		{ "", -EINVAL },
		{ " ", -EINVAL },
		{ " 1", -EINVAL },
		{ "1 ", -EINVAL },
		{ "1\n", -EINVAL },
		{ "1\t", -EINVAL },
		{ "1.2.3", -EINVAL },
		{ "1.1.M", -EINVAL },
		{ "--1", -EINVAL },
		{ "+-1", -EINVAL },
		{ "1+1.0M", -EINVAL },
		{ "1KB", -EINVAL },
		{ "1K", -EINVAL },
		{ "1kb", -EINVAL },
		{ "1ki", -EINVAL },
		{ "1KI", -EINVAL },
		{ "0.1mi", -EINVAL },
		{ "0.1am", -EINVAL },
		{ "1i", -EINVAL },
		{ ".5i", -EINVAL },
		{ "-3.01i", -EINVAL },
		{ "0x10", -EINVAL },
		{ "1x", -EINVAL },
		{ "1e", -EINVAL },
		{ "1E+", -EINVAL },
		{ "-3.01e-", -EINVAL },
		{ "1ee3", -EINVAL },
		{ "1Ee3", -EINVAL },
		{ "1e1.5", -EINVAL },
		{ "1e3Ki", -EINVAL },
		{ "1Ki3", -EINVAL },
		{ "1_000", -EINVAL },
		{ "1,5", -EINVAL },
		{ "aoeu", -EINVAL },
		{ "NaN", -EINVAL },
		{ "inf", -EINVAL },
		{ "\xd9\xa1", -EINVAL }, /* ARABIC-INDIC DIGIT ONE: digits are ASCII only */
		/* Kubernetes' scanner reads these as zero; its grammar and CRD pattern do not. */
		{ "-", -EINVAL },
		{ "+", -EINVAL },
		{ ".", -EINVAL },
		{ "-.", -EINVAL },
		{ "k", -EINVAL },
		{ "Ki", -EINVAL },
		{ "e3", -EINVAL },
		{ ".e3", -EINVAL },
		/* The exponent must fit an int64, as strconv.ParseInt requires. */
		{ "1e9223372036854775808", -EINVAL },
		{ "1e-9223372036854775809", -EINVAL },
		{ "0e99999999999999999999", -EINVAL },
	};
	(void)state;
	check_error_table(cases, ARRAY_SIZE(cases));
}

static void test_quantity_parse_rejects_null_arguments(void **state)
{
	struct quantity q;
	(void)state;
	assert_int_equal(quantity_parse(NULL, &q), -EINVAL);
	assert_int_equal(quantity_parse("1", NULL), -EINVAL);
	assert_int_equal(quantity_parse_n(NULL, 1, &q), -EINVAL);
}

static void test_quantity_parse_n_needs_no_terminator(void **state)
{
	struct quantity q;
	(void)state;
	/* Only the given bytes count: "1.5Gi" out of a longer buffer. */
	assert_int_equal(quantity_parse_n("1.5Gi, 2", 5, &q), 0);
	assert_int_equal(q.milli, INT64_C(1610612736000));
	assert_int_equal(q.format, QUANTITY_BINARY_SI);
	assert_int_equal(quantity_parse_n("500mX", 4, &q), 0);
	assert_int_equal(q.milli, 500);
	/* "1E3" cut after "1E" is exa, not an exponent. */
	assert_int_equal(quantity_parse_n("1E3", 2, &q), -ERANGE);
	assert_int_equal(quantity_parse_n("1", 0, &q), -EINVAL);
}

static void test_quantity_parse_n_rejects_embedded_nul(void **state)
{
	static const char with_nul[][5] = { "1\0m", "\0001", "1\0\0", "1.\0005" };
	struct quantity q;
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(with_nul); i++)
		assert_int_equal(quantity_parse_n(with_nul[i], 3, &q), -EINVAL);
	assert_int_equal(quantity_parse_n("1Ki\0", 4, &q), -EINVAL);
	assert_int_equal(quantity_parse_n("1Ki\0", 3, &q), 0);
}

/* Canonical forms: Quantity.String() after parsing. */
static const struct canonical_case canonical_cases[] = {
	{ "0", "0" },
	{ "-0", "0" },
	{ "0Ki", "0" },
	{ "0e3", "0" },
	{ "1", "1" },
	{ "+1", "1" },
	{ "01", "1" },
	{ "5.", "5" },
	{ "1000", "1k" },
	{ "1500m", "1500m" },
	{ "1.5", "1500m" },
	{ "0.5", "500m" },
	{ ".5", "500m" },
	{ "1000m", "1" },
	{ "1000000m", "1k" },
	{ "100m", "100m" },
	{ "0.001", "1m" },
	{ "1024", "1024" },
	{ "1073741824", "1073741824" },
	{ "1k", "1k" },
	{ "1000k", "1M" },
	{ "1.5M", "1500k" },
	{ "10.035M", "10035k" },
	{ "100.035k", "100035" },
	{ "1000M", "1G" },
	{ "1.G", "1G" },
	{ "1T", "1T" },
	{ "1000T", "1P" },
	{ "9P", "9P" },
	{ "0.000001E", "1T" },
	{ "1000000000000000", "1P" },
	{ "1Ki", "1Ki" },
	{ "1.0Ki", "1Ki" },
	{ "1024Ki", "1Mi" },
	{ "2048Ki", "2Mi" },
	{ "1023Ki", "1023Ki" },
	{ "1025Ki", "1025Ki" },
	{ "1000Ki", "1000Ki" },
	{ "1024Mi", "1Gi" },
	{ "1536Mi", "1536Mi" },
	{ "1.5Gi", "1536Mi" },
	{ "0.5Gi", "512Mi" },
	{ "0.5Mi", "512Ki" },
	{ "8192Ti", "8Pi" },
	{ "8Pi", "8Pi" },
	/* Binary SI below 1024 or with a fraction falls back to decimal SI. */
	{ "0.5Ki", "512" },
	{ "1.5Ki", "1536" },
	{ "1024.5Ki", "1049088" },
	{ "0.1Ki", "102400m" },
	{ "0.05Gi", "53687091200m" },
	{ "1.0001Ki", "1024103m" },
	{ "0.0009765625Ki", "1" },
	{ "0.9999999999Ki", "1Ki" },
	{ "1e3", "1e3" },
	{ "1E3", "1e3" },
	{ "1e+3", "1e3" },
	{ "1000e0", "1e3" },
	{ "1e0", "1" },
	{ "1.5e3", "1500" },
	{ "1.2e3", "1200" },
	{ "1.3E+6", "1300e3" },
	{ "12e3", "12e3" },
	{ "1e6", "1e6" },
	{ "1e15", "1e15" },
	{ "1E-3", "1e-3" },
	{ "1.5E-2", "15e-3" },
	{ "0.5e-2", "5e-3" },
	{ "80e-3", "80e-3" },
	/* Sub-milli precision is gone: printed from the rounded-up milli value. */
	{ "1n", "1m" },
	{ "1u", "1m" },
	{ "1.2345", "1235m" },
	{ "1e-9", "1e-3" },
	{ "0.0001Ei", "115292150460684698m" },
	{ "-1", "-1" },
	{ "-1000", "-1k" },
	{ "-0.5", "-500m" },
	{ "-512", "-512" },
	{ "-1Ki", "-1Ki" },
	{ "-1.5Gi", "-1536Mi" },
	{ "-0.5Ki", "-512" },
	{ "-1.5E-2", "-15e-3" },
	{ "-0.1m", "-1m" },
	{ "9223372036854775807m", "9223372036854775807m" },
	{ "9223372036854775.807", "9223372036854775807m" },
	{ "-9223372036854775807m", "-9223372036854775807m" },
};

static void test_quantity_format_canonical_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(canonical_cases); i++) {
		const struct canonical_case *c = &canonical_cases[i];
		struct quantity q;
		char buf[QUANTITY_FORMAT_SIZE];
		if (quantity_parse(c->input, &q) != 0)
			fail_msg("\"%s\": parse failed", c->input);
		int len = quantity_format(&q, buf, sizeof(buf));
		if (len < 0 || strcmp(buf, c->canonical) != 0)
			fail_msg("\"%s\": formatted \"%s\" (%d), want \"%s\"", c->input, buf, len,
				 c->canonical);
		if ((size_t)len != strlen(c->canonical))
			fail_msg("\"%s\": returned length %d", c->input, len);
	}
}

static void test_quantity_format_round_trips(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(canonical_cases); i++) {
		const char *input = canonical_cases[i].input;
		struct quantity q, again;
		char first[QUANTITY_FORMAT_SIZE], second[QUANTITY_FORMAT_SIZE];
		assert_int_equal(quantity_parse(input, &q), 0);
		assert_true(quantity_format(&q, first, sizeof(first)) > 0);
		/* The canonical form parses to the same value and is its own canonical form. */
		if (quantity_parse(first, &again) != 0 || again.milli != q.milli)
			fail_msg("\"%s\" -> \"%s\" does not parse back", input, first);
		assert_true(quantity_format(&again, second, sizeof(second)) > 0);
		if (strcmp(first, second) != 0)
			fail_msg("\"%s\" -> \"%s\" -> \"%s\"", input, first, second);
	}
}

static void test_quantity_format_milli_prints_sums(void **state)
{
	char buf[QUANTITY_FORMAT_SIZE];
	struct quantity a, b;
	int64_t sum;
	(void)state;
	/* Two 1.5Gi requests sum to 3Gi; the sum prints in its own canonical form. */
	assert_int_equal(quantity_parse("1.5Gi", &a), 0);
	assert_int_equal(quantity_parse("1536Mi", &b), 0);
	assert_int_equal(quantity_milli_add(a.milli, b.milli, &sum), 0);
	assert_int_equal(quantity_format_milli(sum, QUANTITY_BINARY_SI, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "3Gi");
	assert_int_equal(quantity_format_milli(sum, QUANTITY_DECIMAL_SI, buf, sizeof(buf)), 10);
	assert_string_equal(buf, "3221225472");
	assert_int_equal(quantity_format_milli(1500, QUANTITY_DECIMAL_SI, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "1500m");
	/* Binary SI keeps a whole number that 1024 does not divide as it is... */
	assert_int_equal(quantity_format_milli(2000000, QUANTITY_BINARY_SI, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "2000");
	/* ...where decimal SI, which "2000" reads back as, moves the zeros into a suffix. */
	assert_int_equal(quantity_format_milli(2000000, QUANTITY_DECIMAL_SI, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "2k");
	assert_int_equal(quantity_format_milli(0, QUANTITY_BINARY_SI, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "0");
	assert_int_equal(quantity_format_milli(INT64_MAX, QUANTITY_DECIMAL_EXPONENT, buf,
					       sizeof(buf)),
			 22);
	assert_string_equal(buf, "9223372036854775807e-3");
	assert_int_equal(quantity_format_milli(-INT64_MAX, QUANTITY_BINARY_SI, buf, sizeof(buf)),
			 21);
	assert_string_equal(buf, "-9223372036854775807m");
}

static void test_quantity_format_rejects_bad_arguments(void **state)
{
	char buf[QUANTITY_FORMAT_SIZE];
	struct quantity q = { .milli = 1, .format = (enum quantity_format)7 };
	(void)state;
	assert_int_equal(quantity_format(&q, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(quantity_format(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(quantity_format_milli(1, QUANTITY_DECIMAL_SI, NULL, 4), -EINVAL);
	assert_int_equal(quantity_format_milli(INT64_MIN, QUANTITY_DECIMAL_SI, buf, sizeof(buf)),
			 -ERANGE);
}

static void test_quantity_format_reports_enospc(void **state)
{
	char buf[8];
	(void)state;
	/* "1536Mi" needs 7 bytes with its NUL. */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(quantity_format_milli(INT64_C(1610612736000), QUANTITY_BINARY_SI, buf, 6),
			 -ENOSPC);
	assert_int_equal(buf[0], '\0');
	assert_int_equal(quantity_format_milli(INT64_C(1610612736000), QUANTITY_BINARY_SI, buf, 7),
			 6);
	assert_string_equal(buf, "1536Mi");
	assert_int_equal(quantity_format_milli(0, QUANTITY_DECIMAL_SI, buf, 1), -ENOSPC);
	assert_int_equal(quantity_format_milli(0, QUANTITY_DECIMAL_SI, buf, 2), 1);
	assert_int_equal(quantity_format_milli(0, QUANTITY_DECIMAL_SI, NULL, 0), -ENOSPC);
}

static void test_quantity_milli_add_detects_overflow(void **state)
{
	int64_t r = 7;
	(void)state;
	assert_int_equal(quantity_milli_add(1, 2, &r), 0);
	assert_int_equal(r, 3);
	assert_int_equal(quantity_milli_add(INT64_MAX - 1, 1, &r), 0);
	assert_int_equal(r, INT64_MAX);
	assert_int_equal(quantity_milli_add(-INT64_MAX + 1, -1, &r), 0);
	assert_int_equal(r, -INT64_MAX);
	r = 7;
	assert_int_equal(quantity_milli_add(INT64_MAX, 1, &r), -ERANGE);
	assert_int_equal(quantity_milli_add(1, INT64_MAX, &r), -ERANGE);
	assert_int_equal(quantity_milli_add(-INT64_MAX, -1, &r), -ERANGE);
	assert_int_equal(quantity_milli_add(INT64_MIN, 5, &r), -ERANGE);
	assert_int_equal(r, 7);
	assert_int_equal(quantity_milli_add(INT64_MAX, -INT64_MAX, &r), 0);
	assert_int_equal(r, 0);
}

static void test_quantity_milli_sub_detects_overflow(void **state)
{
	int64_t r = 7;
	(void)state;
	assert_int_equal(quantity_milli_sub(5, 7, &r), 0);
	assert_int_equal(r, -2);
	assert_int_equal(quantity_milli_sub(0, INT64_MAX, &r), 0);
	assert_int_equal(r, -INT64_MAX);
	r = 7;
	assert_int_equal(quantity_milli_sub(-1, INT64_MAX, &r), -ERANGE);
	assert_int_equal(quantity_milli_sub(INT64_MAX, -1, &r), -ERANGE);
	assert_int_equal(quantity_milli_sub(0, INT64_MIN, &r), -ERANGE);
	assert_int_equal(r, 7);
}

static void test_quantity_compare_ignores_format(void **state)
{
	struct quantity a, b;
	(void)state;
	assert_int_equal(quantity_milli_cmp(1, 2), -1);
	assert_int_equal(quantity_milli_cmp(2, 2), 0);
	assert_int_equal(quantity_milli_cmp(INT64_MAX, -INT64_MAX), 1);
	assert_int_equal(quantity_parse("1Ki", &a), 0);
	assert_int_equal(quantity_parse("1024", &b), 0);
	assert_int_equal(quantity_cmp(&a, &b), 0);
	assert_int_equal(quantity_parse("1000T", &a), 0);
	assert_int_equal(quantity_parse("100Gi", &b), 0);
	assert_int_equal(quantity_cmp(&a, &b), 1);
	assert_int_equal(quantity_cmp(&b, &a), -1);
}

static void test_quantity_add_takes_format_of_first_non_zero(void **state)
{
	struct quantity acc = { 0 }, gi, m;
	char buf[QUANTITY_FORMAT_SIZE];
	(void)state;
	assert_int_equal(quantity_parse("1Gi", &gi), 0);
	assert_int_equal(quantity_parse("500m", &m), 0);
	/* A zero accumulator takes the first addend's format, so a sum of Gi prints in Gi. */
	assert_int_equal(quantity_add(&acc, &gi), 0);
	assert_int_equal(quantity_add(&acc, &gi), 0);
	assert_int_equal(acc.format, QUANTITY_BINARY_SI);
	assert_true(quantity_format(&acc, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "2Gi");
	/* Later addends do not change it; a fraction falls back to decimal SI in print only. */
	assert_int_equal(quantity_add(&acc, &m), 0);
	assert_int_equal(acc.format, QUANTITY_BINARY_SI);
	assert_true(quantity_format(&acc, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "2147483648500m");
	assert_int_equal(quantity_sub(&acc, &m), 0);
	assert_int_equal(quantity_sub(&acc, &gi), 0);
	assert_true(quantity_format(&acc, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "1Gi");
	/* Zero minus a quantity also takes its format, as Quantity.Sub does. */
	struct quantity zero = { 0 };
	assert_int_equal(quantity_sub(&zero, &gi), 0);
	assert_true(quantity_format(&zero, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "-1Gi");
}

static void test_quantity_add_leaves_accumulator_on_overflow(void **state)
{
	struct quantity acc = { .milli = INT64_MAX, .format = QUANTITY_DECIMAL_SI };
	struct quantity one = { .milli = 1000, .format = QUANTITY_BINARY_SI };
	struct quantity neg = { .milli = -INT64_MAX, .format = QUANTITY_DECIMAL_SI };
	(void)state;
	assert_int_equal(quantity_add(&acc, &one), -ERANGE);
	assert_int_equal(acc.milli, INT64_MAX);
	assert_int_equal(acc.format, QUANTITY_DECIMAL_SI);
	assert_int_equal(quantity_sub(&neg, &one), -ERANGE);
	assert_int_equal(neg.milli, -INT64_MAX);
}

static void test_quantity_milli_to_units_rounds_away_from_zero(void **state)
{
	(void)state;
	assert_int_equal(quantity_milli_to_units(0), 0);
	assert_int_equal(quantity_milli_to_units(1), 1);
	assert_int_equal(quantity_milli_to_units(1000), 1);
	assert_int_equal(quantity_milli_to_units(1001), 2);
	assert_int_equal(quantity_milli_to_units(-1), -1);
	assert_int_equal(quantity_milli_to_units(-1000), -1);
	assert_int_equal(quantity_milli_to_units(-1500), -2);
	assert_int_equal(quantity_milli_to_units(INT64_MAX), INT64_C(9223372036854776));
	assert_int_equal(quantity_milli_to_units(-INT64_MAX), -INT64_C(9223372036854776));
}

/* Whole numbers with suffixes that scale up take a shortcut in the parser: it must agree with
 * exact arithmetic on every digit count and suffix, up to and past int64's edge. */
static void test_quantity_whole_numbers_are_exact_up_to_the_edge(void **state)
{
	static const struct {
		const char *text;
		int exp10, exp2, binary;
	} sfx[] = {
		{ "m", -3, 0, 0 },  { "", 0, 0, 0 },    { "k", 3, 0, 0 },   { "M", 6, 0, 0 },
		{ "G", 9, 0, 0 },   { "T", 12, 0, 0 },  { "P", 15, 0, 0 },  { "E", 18, 0, 0 },
		{ "Ki", 0, 10, 1 }, { "Mi", 0, 20, 1 }, { "Gi", 0, 30, 1 }, { "Ti", 0, 40, 1 },
		{ "Pi", 0, 50, 1 }, { "Ei", 0, 60, 1 },
	};
	static const char *const digits[] = {
		"0",
		"7",
		"12",
		"999",
		"1024",
		"000123",
		"9223372036854775",
		"9223372036854776",
		"8191",
		"9223372036854775807",
		"9223372036854775808",
		"123456789012345678",
		"8",
		"18014398509481983",
		"999999999999999999",
		"1000000000000000000",
	};
	for (size_t d = 0; d < sizeof(digits) / sizeof(digits[0]); d++) {
		for (size_t k = 0; k < sizeof(sfx) / sizeof(sfx[0]); k++) {
			char text[64];
			struct quantity q;
			snprintf(text, sizeof(text), "%s%s", digits[d], sfx[k].text);
			unsigned __int128 v = 0;
			for (const char *c = digits[d]; *c; c++)
				v = v * 10 + (unsigned)(*c - '0');
			/* Each step starts at most at INT64_MAX: 128 bits never overflow. */
			int big = v > (unsigned __int128)INT64_MAX;
			for (int i = 0; i < sfx[k].exp10 + 3 && !big; i++)
				big = (v *= 10) > (unsigned __int128)INT64_MAX;
			for (int i = 0; i < sfx[k].exp2 && !big; i++)
				big = (v *= 2) > (unsigned __int128)INT64_MAX;
			int rc = quantity_parse(text, &q);
			if (big) {
				assert_int_equal(rc, -ERANGE);
				continue;
			}
			if (rc != 0)
				fail_msg("%s: %d", text, rc);
			assert_true(q.milli == (int64_t)v);
			assert_int_equal(q.format, sfx[k].binary && v != 0 ? QUANTITY_BINARY_SI :
						   sfx[k].binary           ? q.format :
									     QUANTITY_DECIMAL_SI);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantity_parse_every_suffix),
		cmocka_unit_test(test_quantity_parse_decimal_exponents),
		cmocka_unit_test(test_quantity_parse_fractions),
		cmocka_unit_test(test_quantity_parse_rounds_up_sub_milli),
		cmocka_unit_test(test_quantity_parse_binary_below_one_becomes_decimal),
		cmocka_unit_test(test_quantity_parse_negative_values),
		cmocka_unit_test(test_quantity_parse_accepts_int64_boundary),
		cmocka_unit_test(test_quantity_parse_rejects_overflow),
		cmocka_unit_test(test_quantity_parse_rejects_garbage),
		cmocka_unit_test(test_quantity_parse_rejects_null_arguments),
		cmocka_unit_test(test_quantity_parse_n_needs_no_terminator),
		cmocka_unit_test(test_quantity_parse_n_rejects_embedded_nul),
		cmocka_unit_test(test_quantity_format_canonical_table),
		cmocka_unit_test(test_quantity_format_round_trips),
		cmocka_unit_test(test_quantity_format_milli_prints_sums),
		cmocka_unit_test(test_quantity_format_rejects_bad_arguments),
		cmocka_unit_test(test_quantity_format_reports_enospc),
		cmocka_unit_test(test_quantity_milli_add_detects_overflow),
		cmocka_unit_test(test_quantity_milli_sub_detects_overflow),
		cmocka_unit_test(test_quantity_compare_ignores_format),
		cmocka_unit_test(test_quantity_add_takes_format_of_first_non_zero),
		cmocka_unit_test(test_quantity_add_leaves_accumulator_on_overflow),
		cmocka_unit_test(test_quantity_milli_to_units_rounds_away_from_zero),
		cmocka_unit_test(test_quantity_whole_numbers_are_exact_up_to_the_edge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
