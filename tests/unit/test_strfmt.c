/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for core/strfmt: the same bytes and return value as vsnprintf, at every size. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/strfmt.h"

__attribute__((format(printf, 3, 4))) static int fmt(char *dst, size_t size, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = strfmt_v(dst, size, f, ap);
	va_end(ap);
	return n;
}

__attribute__((format(printf, 3, 4))) static int ref(char *dst, size_t size, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(dst, size, f, ap);
	va_end(ap);
	return n;
}

/* Both into buffers of every size up to past the text, compared byte for byte (the bytes past
 * the NUL too: neither may write beyond what it reports). */
#define SAME(...)                                                                  \
	do {                                                                       \
		for (size_t size = 0; size < 90; size++) {                         \
			char a[96], b[96];                                         \
			memset(a, 'x', sizeof(a));                                 \
			memset(b, 'x', sizeof(b));                                 \
			assert_int_equal(fmt(size ? a : NULL, size, __VA_ARGS__),  \
					 ref(size ? b : NULL, size, __VA_ARGS__)); \
			assert_memory_equal(a, b, sizeof(a));                      \
		}                                                                  \
	} while (0)

static void test_strfmt_strings_and_sizes(void **state)
{
	SAME("insufficient unused quota for %s in flavor %s, %s more needed", "cpu", "on-demand",
	     "7500m");
	SAME("%s", "");
	SAME("plain text, no directive");
	SAME("%s%s%s", "a", "bb", "ccc");
	const char *volatile none = NULL; /* hidden from gcc's check of literal NULLs */
	SAME("%s", none);
}

static void test_strfmt_sizes_and_percent(void **state)
{
	SAME("spec.podSets[%zu].template", (size_t)0);
	SAME("[%zu] of %zu", (size_t)18, SIZE_MAX);
	SAME("100%% of %s", "quota");
}

static void test_strfmt_other_directives_fall_back(void **state)
{
	SAME("%d pods, %s", -3, "cut");
	SAME("%.3s|%5s|%lld", "abcdef", "x", (long long)-9);
	SAME("%s and %x", "hex", 255u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strfmt_strings_and_sizes),
		cmocka_unit_test(test_strfmt_sizes_and_percent),
		cmocka_unit_test(test_strfmt_other_directives_fall_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
