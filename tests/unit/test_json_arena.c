/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for util/json_arena: a document's memory is reused only when none of its nodes is
 * alive; kept documents stay valid; uninstalling waits for the last block. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "util/json_arena.h"

/* One document's tree, as the reader builds one: objects, strings, numbers, an array. */
static json_t *build(const char *name)
{
	json_t *doc = json_pack("{s:s, s:{s:s, s:i}, s:[s, s]}", "kind", "Workload", "metadata",
				"name", name, "count", 3, "items", "a", "b");
	assert_non_null(doc);
	return doc;
}

static json_t *build_in_arena(const char *name)
{
	json_arena_begin();
	json_t *doc = build(name);
	json_arena_pause();
	return doc;
}

static void test_dropped_document_memory_is_reused(void **state)
{
	assert_int_equal(json_arena_install(), 0);
	json_t *first = build_in_arena("one");
	assert_true(json_arena_live() > 0);
	json_decref(first);
	assert_int_equal(json_arena_live(), 0);
	json_arena_end();
	json_t *second = build_in_arena("two");
	/* The same shape from the same place: the dropped document's memory. */
	assert_ptr_equal(first, second);
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(second, "metadata"), "name")),
			    "two");
	json_decref(second);
	json_arena_end();
	json_arena_uninstall();
}

static void test_kept_document_stays_valid(void **state)
{
	assert_int_equal(json_arena_install(), 0);
	json_t *kept = build_in_arena("kept");
	/* The caller holds a subtree only: the document's memory must not be reused. */
	json_t *meta = json_incref(json_object_get(kept, "metadata"));
	json_decref(kept);
	json_arena_end();
	assert_true(json_arena_live() > 0);
	for (int i = 0; i < 100; i++) {
		json_t *other = build_in_arena("other");
		json_decref(other);
		json_arena_end();
	}
	assert_string_equal(json_string_value(json_object_get(meta, "name")), "kept");
	assert_int_equal(json_integer_value(json_object_get(meta, "count")), 3);
	/* Not uninstalled while a block lives: the kept tree's free must still be the arena's. */
	json_arena_uninstall();
	json_decref(meta);
	assert_int_equal(json_arena_live(), 0);
	json_arena_end(); /* nothing alive: the whole arena is free again */
	json_arena_uninstall();
}

static void test_heap_and_arena_nodes_mix(void **state)
{
	assert_int_equal(json_arena_install(), 0);
	json_t *doc = build_in_arena("mixed");
	/* Paused: new nodes come from malloc, and may hold arena nodes and be held by them. */
	json_t *heap = json_object();
	assert_int_equal(json_object_set(heap, "doc", doc), 0);
	assert_int_equal(json_object_set_new(doc, "extra", json_string("from malloc")), 0);
	json_decref(doc);
	json_arena_end();
	assert_true(json_arena_live() > 0); /* heap still holds the document */
	json_decref(heap);
	assert_int_equal(json_arena_live(), 0);
	json_arena_uninstall();
}

static void test_not_installed_is_malloc(void **state)
{
	json_arena_begin();
	json_t *doc = build("plain");
	json_arena_pause();
	assert_int_equal(json_arena_live(), 0);
	json_decref(doc);
	json_arena_end();
}

static void test_large_blocks_come_from_malloc(void **state)
{
	assert_int_equal(json_arena_install(), 0);
	json_arena_begin();
	json_t *arr = json_array();
	for (int i = 0; i < 20000; i++) /* its item storage outgrows an arena block */
		assert_int_equal(json_array_append_new(arr, json_integer(i)), 0);
	json_arena_pause();
	assert_int_equal(json_integer_value(json_array_get(arr, 19999)), 19999);
	json_decref(arr);
	json_arena_end();
	assert_int_equal(json_arena_live(), 0);
	json_arena_uninstall();
}

static void test_discarded_document_memory_is_reused_without_freeing(void **state)
{
	assert_int_equal(json_arena_install(), 0);
	json_t *first = build_in_arena("one");
	assert_int_equal(json_arena_discard(), 0); /* first is never freed: its memory just goes */
	assert_int_equal(json_arena_live(), 0);
	json_t *second = build_in_arena("two");
	assert_ptr_equal(first, second);
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(second, "metadata"), "name")),
			    "two");
	json_decref(second);
	json_arena_end();
	json_arena_uninstall();
}

static void test_discard_refuses_a_document_with_malloc_blocks(void **state)
{
	assert_int_equal(json_arena_install(), 0);
	json_arena_begin();
	json_t *arr = json_array();
	for (int i = 0; i < 20000; i++) /* its item storage comes from malloc */
		assert_int_equal(json_array_append_new(arr, json_integer(i)), 0);
	json_arena_pause();
	assert_int_equal(json_arena_discard(), -1); /* that block must be freed: free it all */
	json_decref(arr);
	json_arena_end();
	assert_int_equal(json_arena_live(), 0);
	/* The next document may be discarded again: the mark was the previous document's. */
	json_t *doc = build_in_arena("next");
	(void)doc;
	assert_int_equal(json_arena_discard(), 0);
	json_arena_uninstall();
}

static void test_discard_not_installed_refuses(void **state)
{
	json_arena_begin();
	json_t *doc = build("plain");
	json_arena_pause();
	assert_int_equal(json_arena_discard(), -1);
	json_decref(doc);
	json_arena_end();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dropped_document_memory_is_reused),
		cmocka_unit_test(test_kept_document_stays_valid),
		cmocka_unit_test(test_heap_and_arena_nodes_mix),
		cmocka_unit_test(test_not_installed_is_malloc),
		cmocka_unit_test(test_large_blocks_come_from_malloc),
		cmocka_unit_test(test_discarded_document_memory_is_reused_without_freeing),
		cmocka_unit_test(test_discard_refuses_a_document_with_malloc_blocks),
		cmocka_unit_test(test_discard_not_installed_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
