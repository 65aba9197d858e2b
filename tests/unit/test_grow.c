/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for core/grow: doubling, the first allocation, and every overflow refused. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "core/grow.h"

static void test_doubles(void **state)
{
	int64_t *v = NULL;
	size_t cap = 0;
	(void)state;
	assert_int_equal(GROW(v, cap, 0), 0); /* nothing needed, nothing allocated */
	assert_null(v);
	assert_int_equal(GROW(v, cap, 1), 0);
	assert_non_null(v);
	assert_int_equal(cap, GROW_FIRST);
	for (size_t n = 0; n < 1000; n++) {
		assert_int_equal(GROW(v, cap, n + 1), 0);
		v[n] = (int64_t)n;
	}
	assert_int_equal(cap, 1024); /* 8 doubled seven times */
	for (size_t n = 0; n < 1000; n++)
		assert_int_equal(v[n], n);
	int64_t *was = v;
	assert_int_equal(GROW(v, cap, 1024), 0); /* enough: unchanged */
	assert_ptr_equal(v, was);
	assert_int_equal(cap, 1024);
	assert_int_equal(GROW(v, cap, 5000), 0); /* more than twice: need itself */
	assert_int_equal(cap, 5000);
	free(v);
}

static void test_u32_capacity(void **state)
{
	char *v = NULL;
	uint32_t cap = 0;
	(void)state;
	assert_int_equal(GROW(v, cap, 3), 0);
	assert_int_equal(cap, GROW_FIRST);
	assert_int_equal(GROW(v, cap, 9), 0);
	assert_int_equal(cap, 16);
	/* More than a uint32_t counts: refused, nothing changed. */
	char *was = v;
	assert_int_equal(GROW(v, cap, (size_t)UINT32_MAX + 1), -ENOMEM);
	assert_ptr_equal(v, was);
	assert_int_equal(cap, 16);
	free(v);
}

static void test_overflow(void **state)
{
	struct big {
		char bytes[1 << 12];
	} *v = NULL;
	size_t cap = 0;
	(void)state;
	/* need * elem past SIZE_MAX: refused before any allocation. */
	assert_int_equal(GROW(v, cap, SIZE_MAX / sizeof(*v) + 1), -ENOMEM);
	assert_null(v);
	assert_int_equal(cap, 0);
	assert_int_equal(grow_capacity(0, SIZE_MAX / 16 + 1, 16, SIZE_MAX), 0);
	/* Doubling near the top stops at the largest count that fits. */
	assert_int_equal(grow_capacity(SIZE_MAX / 16 - 1, SIZE_MAX / 16, 16, SIZE_MAX),
			 SIZE_MAX / 16);
	assert_int_equal(grow_capacity(SIZE_MAX / 2, SIZE_MAX / 2 + 1, 1, SIZE_MAX), SIZE_MAX - 1);
	assert_int_equal(grow_capacity(SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 2, 1, SIZE_MAX), SIZE_MAX);
	assert_int_equal(grow_capacity(10, 5, 1, SIZE_MAX), 10);
	assert_int_equal(grow_capacity(10, 11, 1, SIZE_MAX), 20);
	assert_int_equal(grow_capacity(0, 100, 1, SIZE_MAX), 100);
	assert_int_equal(grow_capacity(1u << 31, (1u << 31) + 1, 1, UINT32_MAX), UINT32_MAX);
	assert_int_equal(grow_capacity(8, (size_t)UINT32_MAX + 1, 1, UINT32_MAX), 0);
	/* grow_resize refuses nothing and an overflow alike, the array kept. */
	assert_int_equal(GROW(v, cap, 1), 0);
	struct big *was = v;
	assert_int_equal(grow_resize(&v, 0, sizeof(*v)), -ENOMEM);
	assert_int_equal(grow_resize(&v, SIZE_MAX / 2, 4), -ENOMEM);
	assert_ptr_equal(v, was);
	assert_int_equal(cap, GROW_FIRST);
	free(v);
}

static void test_resize_shared_capacity(void **state)
{
	int *a = NULL;
	double *b = NULL;
	size_t cap = grow_capacity(0, 3, sizeof(double), SIZE_MAX);
	(void)state;
	assert_int_equal(cap, GROW_FIRST);
	assert_int_equal(grow_resize(&a, cap, sizeof(*a)), 0);
	assert_int_equal(grow_resize(&b, cap, sizeof(*b)), 0);
	a[cap - 1] = 1;
	b[cap - 1] = 2;
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_u32_capacity),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_resize_shared_capacity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
