/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The strict number and duration parsers on arbitrary bytes, as flags and query parameters bring
 * them. Whatever parses must be within its range and print back to text that parses to the same
 * value; whatever does not must fail with -EINVAL or -ERANGE and leave the value alone. The
 * first byte picks the range, the rest is the text. Violations abort(), in every build.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 128

static void require(int condition)
{
	if (!condition)
		abort();
}

static void check_i64(const char *s, int64_t min, int64_t max)
{
	int64_t v = 12345, again = 0;
	char text[32];
	int rc = num_parse_i64(s, min, max, &v);
	require(rc == 0 || rc == -EINVAL || rc == -ERANGE);
	if (rc != 0) {
		require(v == 12345);
		return;
	}
	require(v >= min && v <= max);
	snprintf(text, sizeof(text), "%" PRId64, v);
	require(num_parse_i64(text, min, max, &again) == 0 && again == v);
}

static void check_u64(const char *s, uint64_t max)
{
	uint64_t v = 12345, again = 0;
	char text[32];
	int rc = num_parse_u64(s, max, &v);
	require(rc == 0 || rc == -EINVAL || rc == -ERANGE);
	if (rc != 0) {
		require(v == 12345);
		return;
	}
	require(v <= max);
	snprintf(text, sizeof(text), "%" PRIu64, v);
	require(num_parse_u64(text, max, &again) == 0 && again == v);
	/* An unsigned number is an integer too, where it fits. */
	if (v <= INT64_MAX) {
		int64_t i;
		require(num_parse_i64(s, 0, INT64_MAX, &i) == 0 && (uint64_t)i == v);
	}
}

static void check_double(const char *s, double min, double max)
{
	double v = 12345, again = 0;
	char text[64];
	int rc = num_parse_double(s, min, max, &v);
	require(rc == 0 || rc == -EINVAL || rc == -ERANGE);
	if (rc != 0) {
		require(v == 12345);
		return;
	}
	require(v >= min && v <= max);
	snprintf(text, sizeof(text), "%.17g", v);
	require(num_parse_double(text, min, max, &again) == 0 && again == v);
}

static void check_duration(const char *s, int days, int64_t max)
{
	int64_t v = 12345, again = 0;
	char text[32];
	int rc = num_parse_duration_ms(s, days, max, &v);
	require(rc == 0 || rc == -EINVAL || rc == -ERANGE);
	if (rc != 0) {
		require(v == 12345);
		return;
	}
	require(v >= 0 && v <= max);
	/* Whole milliseconds print back as one: the same value. */
	snprintf(text, sizeof(text), "%" PRId64 "ms", v);
	require(num_parse_duration_ms(text, days, max, &again) == 0 && again == v);
	/* Days are a unit more, never a different reading. */
	if (!days)
		require(num_parse_duration_ms(s, 1, max, &again) == 0 && again == v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[MAX_INPUT + 1];
	if (size < 1)
		return 0;
	uint8_t pick = data[0];
	size = size - 1 > MAX_INPUT ? MAX_INPUT : size - 1;
	memcpy(text, data + 1, size);
	text[size] = '\0';
	/* Wide ranges and narrow ones, so both overflow and range checks are reached. */
	int64_t lo = pick & 1 ? INT64_MIN : -(int64_t)(pick >> 1);
	int64_t hi = pick & 2 ? INT64_MAX : (int64_t)pick * 1000;
	check_i64(text, lo, hi);
	check_u64(text, pick & 4 ? UINT64_MAX : (uint64_t)pick * 1000);
	check_double(text, pick & 8 ? -1e308 : -(double)pick, pick & 16 ? 1e308 : (double)pick);
	check_duration(text, pick & 32, pick & 64 ? INT64_MAX : (int64_t)pick * 60000);
	return 0;
}
