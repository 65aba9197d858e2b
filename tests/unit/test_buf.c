/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for util/buf: the cap, consume and take. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/buf.h"

static void test_buf_init_is_empty(void **state)
{
	struct buf b;
	buf_init(&b, 100);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.max, 100);
	buf_release(&b);
	assert_null(b.data);
	assert_int_equal(b.max, 100); /* release keeps the cap so the buffer can be reused */
}

static void test_buf_append_many_grows_and_terminates(void **state)
{
	struct buf b;
	char expect[5000];
	buf_init(&b, sizeof(expect));
	for (size_t i = 0; i < sizeof(expect) - 1; i++) {
		char c = (char)('a' + i % 26);
		expect[i] = c;
		assert_int_equal(buf_append(&b, &c, 1), 0);
		/* The NUL invariant must hold after every append, not just at the end. */
		assert_int_equal(b.data[b.len], '\0');
	}
	expect[sizeof(expect) - 1] = '\0';
	assert_int_equal(b.len, sizeof(expect) - 1);
	assert_string_equal(b.data, expect);
	assert_true(b.alloc > b.len);
	buf_release(&b);
}

static void test_buf_append_zero_bytes_allocates_empty_string(void **state)
{
	struct buf b;
	buf_init(&b, 10);
	assert_int_equal(buf_append(&b, "", 0), 0);
	assert_non_null(b.data);
	assert_string_equal(b.data, "");
	buf_release(&b);
}

static void test_buf_append_exactly_cap_succeeds(void **state)
{
	struct buf b;
	buf_init(&b, 8);
	assert_int_equal(buf_append_str(&b, "abcd"), 0);
	assert_int_equal(buf_append_str(&b, "efgh"), 0);
	assert_int_equal(b.len, 8);
	assert_string_equal(b.data, "abcdefgh");
	buf_release(&b);
}

static void test_buf_append_past_cap_e2big_leaves_contents(void **state)
{
	struct buf b;
	buf_init(&b, 8);
	assert_int_equal(buf_append_str(&b, "abcdef"), 0);
	char *before = b.data;
	size_t alloc = b.alloc;
	assert_int_equal(buf_append_str(&b, "xyz"), -E2BIG);
	assert_int_equal(b.len, 6);
	assert_string_equal(b.data, "abcdef");
	assert_ptr_equal(b.data, before);
	assert_int_equal(b.alloc, alloc);
	/* What still fits is accepted after a refusal. */
	assert_int_equal(buf_append_str(&b, "gh"), 0);
	assert_string_equal(b.data, "abcdefgh");
	assert_int_equal(buf_append(&b, "i", 1), -E2BIG);
	assert_string_equal(b.data, "abcdefgh");
	buf_release(&b);
}

static void test_buf_append_huge_n_e2big_without_overflow(void **state)
{
	struct buf b;
	buf_init(&b, 16);
	assert_int_equal(buf_append_str(&b, "abc"), 0);
	/* len + n would wrap around SIZE_MAX; the check must not. The data is never read. */
	assert_int_equal(buf_append(&b, "x", SIZE_MAX - 1), -E2BIG);
	assert_int_equal(buf_append(&b, "x", SIZE_MAX), -E2BIG);
	assert_string_equal(b.data, "abc");
	buf_release(&b);
}

static void test_buf_append_zero_cap_refuses_everything(void **state)
{
	struct buf b;
	buf_init(&b, 0);
	assert_int_equal(buf_append(&b, "a", 1), -E2BIG);
	assert_null(b.data);
	buf_release(&b);
}

static void test_buf_consume_partial_shifts(void **state)
{
	struct buf b;
	buf_init(&b, 64);
	assert_int_equal(buf_append_str(&b, "hello world"), 0);
	buf_consume(&b, 6);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.data, "world");
	buf_consume(&b, 0);
	assert_string_equal(b.data, "world");
	assert_int_equal(buf_append_str(&b, "!"), 0);
	assert_string_equal(b.data, "world!");
	buf_release(&b);
}

static void test_buf_consume_all_empties(void **state)
{
	struct buf b;
	buf_init(&b, 64);
	assert_int_equal(buf_append_str(&b, "abc"), 0);
	buf_consume(&b, 3);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	buf_release(&b);
}

static void test_buf_consume_frees_room_under_cap(void **state)
{
	struct buf b;
	buf_init(&b, 4);
	assert_int_equal(buf_append_str(&b, "abcd"), 0);
	assert_int_equal(buf_append_str(&b, "e"), -E2BIG);
	buf_consume(&b, 2);
	assert_int_equal(buf_append_str(&b, "ef"), 0);
	assert_string_equal(b.data, "cdef");
	buf_release(&b);
}

static void test_buf_consume_on_empty_buffer_is_noop(void **state)
{
	struct buf b;
	buf_init(&b, 4);
	buf_consume(&b, 0);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
}

static void test_buf_take_hands_over_and_resets(void **state)
{
	struct buf b;
	buf_init(&b, 32);
	assert_int_equal(buf_append_str(&b, "payload"), 0);
	char *p = buf_take(&b);
	assert_non_null(p);
	assert_string_equal(p, "payload");
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.alloc, 0);
	assert_int_equal(b.max, 32);
	/* The buffer is reusable and independent of the taken memory. */
	assert_int_equal(buf_append_str(&b, "next"), 0);
	assert_string_equal(p, "payload");
	assert_string_equal(b.data, "next");
	free(p);
	buf_release(&b);
}

static void test_buf_take_empty_returns_empty_string(void **state)
{
	struct buf b;
	buf_init(&b, 32);
	char *p = buf_take(&b);
	assert_non_null(p);
	assert_string_equal(p, "");
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_init_is_empty),
		cmocka_unit_test(test_buf_append_many_grows_and_terminates),
		cmocka_unit_test(test_buf_append_zero_bytes_allocates_empty_string),
		cmocka_unit_test(test_buf_append_exactly_cap_succeeds),
		cmocka_unit_test(test_buf_append_past_cap_e2big_leaves_contents),
		cmocka_unit_test(test_buf_append_huge_n_e2big_without_overflow),
		cmocka_unit_test(test_buf_append_zero_cap_refuses_everything),
		cmocka_unit_test(test_buf_consume_partial_shifts),
		cmocka_unit_test(test_buf_consume_all_empties),
		cmocka_unit_test(test_buf_consume_frees_room_under_cap),
		cmocka_unit_test(test_buf_consume_on_empty_buffer_is_noop),
		cmocka_unit_test(test_buf_take_hands_over_and_resets),
		cmocka_unit_test(test_buf_take_empty_returns_empty_string),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
