/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for util/export_reader: every format users export (YAML and JSON documents,
 * kubectl's v1 List in YAML and JSON) gives the same objects with their lines and List item
 * indexes, and every bad input a clear error that names the document or item: a List cut
 * short, an item that isn't an object, a JSON syntax error, a List whose kind isn't List.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/export_reader.h"
#include "util/json_arena.h"

/* What a reader gave: its objects (dumped compact, keys sorted), lines and items, and its
 * error (rc, line, text) if it ended in one. */
struct got {
	char *objs[16];
	int lines[16];
	long items[16];
	size_t n;
	int rc, err_line;
	char err[200];
};

static void read_all(const char *text, struct got *g)
{
	struct export_reader *r;
	struct yamljson_error err = { 0 };
	struct export_pos pos;
	json_t *obj;
	memset(g, 0, sizeof(*g));
	assert_int_equal(export_reader_new(text, strlen(text), &r, &err), 0);
	while ((g->rc = export_reader_next(r, &obj, &pos, &err)) == 1) {
		assert_true(g->n < 16);
		g->objs[g->n] = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
		g->lines[g->n] = pos.line;
		g->items[g->n] = pos.item;
		g->n++;
		json_decref(obj);
	}
	if (g->rc < 0) {
		g->err_line = err.line;
		snprintf(g->err, sizeof(g->err), "%s", err.text);
		/* Done: the same error again. */
		assert_int_equal(export_reader_next(r, &obj, &pos, &err), g->rc);
		assert_null(obj);
	}
	export_reader_free(r);
}

static void got_free(struct got *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->objs[i]);
}

static void expect_error(const char *text, int objects, int line, const char *what);

#define A "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a\"}}"
#define B "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"b\"}}"

static void expect_ab(const struct got *g)
{
	assert_int_equal(g->rc, 0);
	assert_int_equal(g->n, 2);
	assert_string_equal(g->objs[0], A);
	assert_string_equal(g->objs[1], B);
}

static void test_yaml_documents(void **state)
{
	(void)state;
	struct got g;
	read_all("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
		 "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n",
		 &g);
	expect_ab(&g);
	assert_int_equal(g.lines[0], 1);
	assert_int_equal(g.lines[1], 5);
	assert_int_equal(g.items[0], -1);
	assert_int_equal(g.items[1], -1);
	got_free(&g);
}

static void test_json_documents_separated_and_concatenated(void **state)
{
	(void)state;
	struct got g;
	read_all("---\n" A "\n---\n" B "\n", &g);
	expect_ab(&g);
	assert_int_equal(g.lines[0], 2);
	assert_int_equal(g.lines[1], 4);
	got_free(&g);
	read_all(A "\n" B, &g); /* one per line */
	expect_ab(&g);
	assert_int_equal(g.lines[1], 2);
	got_free(&g);
	read_all(A "\n--- " B, &g); /* on the separator's line */
	expect_ab(&g);
	assert_int_equal(g.lines[1], 2);
	got_free(&g);
	read_all(A B, &g); /* simply concatenated */
	expect_ab(&g);
	got_free(&g);
	read_all("  \n\n", &g);
	assert_int_equal(g.rc, 0);
	assert_int_equal(g.n, 0);
	got_free(&g);
}

/* Strings with escapes and UTF-8, as kubectl's last-applied-configuration annotation has
 * them: the values jansson gives; bytes that aren't UTF-8 get jansson's error. */
static void test_json_strings_as_jansson_reads_them(void **state)
{
	(void)state;
	static const char text[] =
		"{\"a\": \"q\\\"b\\\\s\\/n\\n\\u00e9\\ud83d\\ude00\\t\", \"b\": \"caf\xc3\xa9\","
		" \"c\": [\"\\u0041\", -7, true, null, {}]}";
	struct got g;
	read_all(text, &g);
	assert_int_equal(g.rc, 0);
	assert_int_equal(g.n, 1);
	json_t *want = json_loads(text, 0, NULL);
	char *dump = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(g.objs[0], dump);
	free(dump);
	json_decref(want);
	got_free(&g);
	expect_error("{\"a\": \"\xc3\"}", 0, 1, "document 1: ");
	expect_error("{\"a\": \"\\u0000\"}", 0, 1, "document 1: ");
	expect_error("{\"a\": \"\\udc00\"}", 0, 1, "document 1: ");
}

static void test_json_list_items_one_by_one(void **state)
{
	(void)state;
	struct got g;
	/* As kubectl writes it: kind after the items. */
	read_all("{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n    " A ",\n    " B "\n  ],\n"
		 "  \"kind\": \"List\",\n  \"metadata\": {\"resourceVersion\": \"\"}\n}\n",
		 &g);
	expect_ab(&g);
	assert_int_equal(g.items[0], 0);
	assert_int_equal(g.items[1], 1);
	assert_int_equal(g.lines[0], 4);
	assert_int_equal(g.lines[1], 5);
	got_free(&g);
	/* Kind and metadata first, then more documents after it. */
	read_all("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{},"
		 "\"items\":[" A "]}\n---\n" B,
		 &g);
	expect_ab(&g);
	assert_int_equal(g.items[0], 0);
	assert_int_equal(g.items[1], -1);
	got_free(&g);
	/* Empty. */
	read_all("{\"apiVersion\":\"v1\",\"items\":[],\"kind\":\"List\"}" A, &g);
	assert_int_equal(g.rc, 0);
	assert_int_equal(g.n, 1);
	got_free(&g);
}

static void test_yaml_list_items_one_by_one(void **state)
{
	(void)state;
	struct got g;
	/* As kubectl writes it: "- " at the key's column, kind after the items. */
	read_all("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n"
		 "    name: a\n# between\n- apiVersion: v1\n  kind: Namespace\n"
		 "  metadata: {name: b}\nkind: List\nmetadata:\n  resourceVersion: \"\"\n",
		 &g);
	expect_ab(&g);
	assert_int_equal(g.items[0], 0);
	assert_int_equal(g.items[1], 1);
	assert_int_equal(g.lines[0], 3);
	assert_int_equal(g.lines[1], 8);
	got_free(&g);
	/* Indented items, kind first, a document after it. */
	read_all("apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Namespace\n"
		 "    metadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\n"
		 "metadata: {name: b}\n",
		 &g);
	expect_ab(&g);
	assert_int_equal(g.items[0], 0);
	assert_int_equal(g.items[1], -1);
	got_free(&g);
	/* Flow style: read whole, the same objects. */
	read_all("apiVersion: v1\nkind: List\nitems: [" A ", " B "]\n", &g);
	expect_ab(&g);
	assert_int_equal(g.items[1], 1);
	got_free(&g);
}

/* The same objects in every format: the same dumps. */
static void test_every_format_same_objects(void **state)
{
	(void)state;
	static const char *const inputs[] = {
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n",
		A "\n---\n" B "\n",
		"{\"apiVersion\":\"v1\",\"items\":[" A "," B "],\"kind\":\"List\"}",
		"apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n"
		"    name: a\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: b\n"
		"kind: List\n",
	};
	for (size_t i = 0; i < 4; i++) {
		struct got g;
		read_all(inputs[i], &g);
		expect_ab(&g);
		got_free(&g);
	}
}

static void expect_error(const char *text, int objects, int line, const char *what)
{
	struct got g;
	read_all(text, &g);
	if (g.rc != -EINVAL || !strstr(g.err, what))
		fail_msg("for %s: rc %d, error \"%s\", wanted \"%s\"", text, g.rc, g.err, what);
	assert_int_equal(g.n, objects);
	assert_int_equal(g.err_line, line);
	got_free(&g);
}

static void test_json_bad_input(void **state)
{
	(void)state;
	/* Cut short inside an item: the items before it come first. */
	expect_error("{\"apiVersion\":\"v1\",\"items\":[\n" A ",\n{\"apiVersion\":", 1, 3,
		     "document 1: items[1]: ");
	expect_error("{\"apiVersion\":\"v1\",\"items\":[\n" A ",\n", 1, 3,
		     "the List ends after 1 items: the input is cut short");
	expect_error("{\"apiVersion\":\"v1\",\"items\":[" A "]", 1, 1,
		     "the List ends after its items: the input is cut short");
	expect_error("{\"apiVersion\":\"v1\",\"items\":[" A "]}", 1, 1,
		     "without \"kind\": is the input cut short?");
	/* An item that isn't an object. */
	expect_error("{\"apiVersion\":\"v1\",\"items\":[" A ",\n 5],\"kind\":\"List\"}", 1, 2,
		     "document 1: items[1] is not an object");
	expect_error("{\"apiVersion\":\"v1\",\"items\":[" A " " B "],\"kind\":\"List\"}", 1, 1,
		     "items[0] is followed by neither ',' nor ']'");
	/* A syntax error: the document and its line. */
	expect_error(A "\n---\n{\"apiVersion\": \"v1\",\n \"kind\": }\n", 1, 4, "document 2: ");
	expect_error(A "\nkind: Namespace\n", 1, 2, "document 2: not JSON");
	expect_error(A "\n--- \"a\": 1\n", 1, 2, "document 2: not JSON");
	/* Not a v1 List after all, duplicate keys. */
	expect_error("{\"apiVersion\":\"v1\",\"items\":[" A "],\"kind\":\"PodList\"}", 1, 1,
		     "its kind is not \"List\"");
	expect_error("{\"apiVersion\":\"v1\",\"items\":[],\"kind\":\"List\",\"apiVersion\":\"v1\"}",
		     0, 1, "duplicate key \"apiVersion\"");
	expect_error("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":{}}", 0, 1,
		     "items must be a list");
	expect_error("{\"a\":1,\"a\":2}", 0, 1, "duplicate");
}

static void test_yaml_bad_input(void **state)
{
	(void)state;
	/* Cut short: no kind after the items. */
	expect_error("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n"
		     "  metadata: {name: a}\n",
		     1, 6, "without \"kind: List\" after its items: is the input cut short?");
	/* An item that isn't an object, or doesn't parse: its index. */
	expect_error("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n"
		     "  metadata: {name: a}\n- 5\nkind: List\n",
		     1, 6, "items[1] is not an object");
	expect_error("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n"
		     "  metadata: {name: a}\n- apiVersion: v1\n  metadata: {name: [}\nkind: List\n",
		     1, 7, "items[1]: ");
	expect_error("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n"
		     "  metadata: {name: a}\nkind: NamespaceList\n",
		     1, 6, "its kind is not List");
	expect_error("apiVersion: v1\nitems:\n- {apiVersion: v1}\nkind: List\napiVersion: v1\n", 1,
		     4, "duplicate key \"apiVersion\"");
	expect_error("apiVersion: v1\nkind: List\nitems: 5\n", 0, 1, "items must be a list");
}

/* Lists whose heads and items share values (yamljson_reader_share), each item dropped from
 * the JSON arena unfreed as `muster simulate` drops a decoded Workload's tree: a head's
 * shared references are its own, not the item's, so nothing is given back twice and nothing
 * outlives the run. Last: it installs the arena, process-wide, and takes it out again. */
static void test_yaml_list_items_discarded_from_the_arena(void **state)
{
	(void)state;
	static const char list[] =
		"apiVersion: v1\nkind: List\nmetadata: {annotations: {note: a shared head}}\n"
		"items:\n- apiVersion: v1\n  kind: Namespace\n"
		"  metadata: {labels: {team: shared-a}}\n"
		"- apiVersion: v1\n  kind: Namespace\n  metadata: {labels: {team: shared-a}}\n"
		"---\n";
	char text[6 * sizeof(list)];
	text[0] = '\0';
	for (int i = 0; i < 6; i++)
		strcat(text, list);
	struct export_reader *r;
	struct yamljson_error err;
	struct export_pos pos;
	json_t *obj;
	int rc, n = 0;
	assert_int_equal(json_arena_install(), 0);
	assert_int_equal(export_reader_new(text, strlen(text), &r, &err), 0);
	for (;;) {
		json_arena_begin();
		rc = export_reader_next(r, &obj, &pos, &err);
		json_arena_pause();
		if (rc != 1)
			break;
		assert_int_equal(pos.item, n++ % 2);
		if (obj->refcount == 1 && json_arena_discard() == 0) {
			export_reader_discarded(r);
			continue;
		}
		json_decref(obj);
		json_arena_end();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 12);
	json_arena_end();
	export_reader_free(r);
	assert_int_equal(json_arena_live(), 0);
	json_arena_uninstall();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml_documents),
		cmocka_unit_test(test_json_documents_separated_and_concatenated),
		cmocka_unit_test(test_json_strings_as_jansson_reads_them),
		cmocka_unit_test(test_json_list_items_one_by_one),
		cmocka_unit_test(test_yaml_list_items_one_by_one),
		cmocka_unit_test(test_every_format_same_objects),
		cmocka_unit_test(test_json_bad_input),
		cmocka_unit_test(test_yaml_bad_input),
		cmocka_unit_test(test_yaml_list_items_discarded_from_the_arena),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
