/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Quantity parsing on arbitrary bytes. Whatever parses must print in a canonical form that
 * parses back to the very same value (printing identically again when the format is kept) and
 * negates exactly; the checked arithmetic must agree with itself on the values found.
 * Violations abort(), so they crash in every build, NDEBUG or not.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Real quantities are short; a longer input only slows the fuzzer down. */
#define MAX_INPUT 256

static void require(int condition)
{
	if (!condition)
		abort();
}

/* add and sub must be inverse, and cmp must order consistently with them. */
static void check_arithmetic(int64_t a, int64_t b)
{
	int64_t sum, back, difference;
	if (quantity_milli_add(a, b, &sum) == 0) {
		require(quantity_milli_sub(sum, b, &back) == 0 && back == a);
		require(quantity_milli_cmp(sum, a) == quantity_milli_cmp(b, 0));
	}
	if (quantity_milli_sub(a, b, &difference) == 0) {
		require(quantity_milli_add(difference, b, &back) == 0 && back == a);
		require(quantity_milli_cmp(a, b) == quantity_milli_cmp(difference, 0));
	}
	require(quantity_milli_cmp(a, b) == -quantity_milli_cmp(b, a));
}

static void check_round_trip(const struct quantity *q)
{
	char text[QUANTITY_FORMAT_SIZE], again_text[QUANTITY_FORMAT_SIZE];
	struct quantity again, negated;

	int len = quantity_format(q, text, sizeof(text));
	require(len > 0 && (size_t)len == strlen(text));
	require(quantity_parse(text, &again) == 0);
	require(again.milli == q->milli);
	/*
	 * The text is canonical again only within the same family: binary SI prints 2000 as
	 * "2000", which reads back as decimal SI and then prints "2k", exactly as in Kubernetes.
	 */
	if (again.format == q->format) {
		require(quantity_format(&again, again_text, sizeof(again_text)) == len);
		require(strcmp(text, again_text) == 0);
	}

	/* One byte short must fail cleanly. */
	require(quantity_format(q, again_text, (size_t)len) == -ENOSPC);

	/* The range is symmetric: the negation of a printed value parses to the negated value. */
	if (q->milli > 0) {
		char minus[QUANTITY_FORMAT_SIZE + 1] = "-";
		memcpy(minus + 1, text, (size_t)len + 1);
		require(quantity_parse(minus, &negated) == 0 && negated.milli == -q->milli);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char copy[MAX_INPUT + 1];
	struct quantity q, q_terminated;

	if (size > MAX_INPUT)
		size = MAX_INPUT;
	memcpy(copy, data, size);
	copy[size] = '\0';

	/* The counted parser reads the bytes as given; the string parser stops at a NUL. */
	int err = quantity_parse_n((const char *)data, size, &q);
	int err_terminated = quantity_parse(copy, &q_terminated);
	require(err == 0 || err == -EINVAL || err == -ERANGE);
	if (memchr(data, '\0', size)) {
		require(err == -EINVAL);
	} else {
		require(err == err_terminated);
		require(err != 0 || q.milli == q_terminated.milli);
		require(err != 0 || q.format == q_terminated.format);
	}
	if (err == 0) {
		require(q.milli >= QUANTITY_MILLI_MIN);
		check_round_trip(&q);
		check_arithmetic(q.milli, q.milli);
		check_arithmetic(q.milli, -q.milli);
		check_arithmetic(q.milli, QUANTITY_MILLI_MAX);
		check_arithmetic(q.milli, QUANTITY_MILLI_MIN);
	}

	/* Raw bytes as a milli value: exercises formatting and arithmetic at any magnitude. */
	if (size >= 16) {
		int64_t a, b;
		memcpy(&a, data, sizeof(a));
		memcpy(&b, data + 8, sizeof(b));
		if (a != INT64_MIN) {
			enum quantity_format format = (enum quantity_format)(b & 3);
			struct quantity raw = { .milli = a, .format = format };
			if (raw.format <= QUANTITY_DECIMAL_EXPONENT)
				check_round_trip(&raw);
			else
				require(quantity_format(&raw, copy, sizeof(copy)) == -EINVAL);
		}
		check_arithmetic(a, b);
	}
	return 0;
}
