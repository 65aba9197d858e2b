/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for util/yamljson: typing, documents, duplicate keys, errors and alias caps. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/json_arena.h"
#include "util/yamljson.h"

/* Loads text and returns the document array; fails the test on error. */
static json_t *load_ok(const char *text)
{
	json_t *docs = (json_t *)1;
	struct yamljson_error err = { .line = -1 };
	int rc = yamljson_load(text, strlen(text), &docs, &err);
	if (rc != 0)
		fail_msg("yamljson_load: rc %d line %d: %s", rc, err.line, err.text);
	assert_non_null(docs);
	assert_true(json_is_array(docs));
	return docs;
}

/* The single document of text. */
static json_t *load_one(const char *text, json_t **docs)
{
	*docs = load_ok(text);
	assert_int_equal(json_array_size(*docs), 1);
	return json_array_get(*docs, 0);
}

static int load_err(const char *text, struct yamljson_error *err)
{
	json_t *docs = (json_t *)1;
	memset(err, 0, sizeof(*err));
	int rc = yamljson_load(text, strlen(text), &docs, err);
	assert_null(docs);
	return rc;
}

static void test_yamljson_multi_doc_returns_each_document(void **state)
{
	json_t *docs = load_ok("apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n---\n"
			       "- 1\n- 2\n");
	assert_int_equal(json_array_size(docs), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(docs, 0), "kind")),
			    "A");
	assert_string_equal(json_string_value(json_object_get(json_array_get(docs, 1), "kind")),
			    "B");
	assert_int_equal(json_array_size(json_array_get(docs, 2)), 2);
	json_decref(docs);
}

static void test_yamljson_empty_documents_skipped(void **state)
{
	json_t *docs = load_ok("---\n---\n# only a comment\n---\na: 1\n---\n...\n---\nb: 2\n---\n");
	assert_int_equal(json_array_size(docs), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(docs, 0), "a")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(docs, 1), "b")), 2);
	json_decref(docs);
}

static void test_yamljson_empty_input_zero_documents(void **state)
{
	json_t *docs = load_ok("");
	assert_int_equal(json_array_size(docs), 0);
	json_decref(docs);
	docs = load_ok("   \n\n# nothing\n");
	assert_int_equal(json_array_size(docs), 0);
	json_decref(docs);
}

static void test_yamljson_booleans_and_null_typed(void **state)
{
	json_t *docs;
	json_t *d = load_one("t: true\nT: True\nf: false\nF: FALSE\nn: null\nt2: ~\ne:\n", &docs);
	assert_true(json_is_true(json_object_get(d, "t")));
	assert_true(json_is_true(json_object_get(d, "T")));
	assert_true(json_is_false(json_object_get(d, "f")));
	assert_true(json_is_false(json_object_get(d, "F")));
	assert_true(json_is_null(json_object_get(d, "n")));
	assert_true(json_is_null(json_object_get(d, "t2")));
	assert_true(json_is_null(json_object_get(d, "e")));
	json_decref(docs);
}

static void test_yamljson_yaml11_booleans_stay_strings(void **state)
{
	json_t *docs;
	json_t *d = load_one("a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\ng: Yes\n", &docs);
	static const char *const keys[] = { "a", "b", "c", "d", "e", "f", "g" };
	static const char *const vals[] = { "yes", "no", "on", "off", "y", "n", "Yes" };
	for (size_t i = 0; i < 7; i++) {
		json_t *v = json_object_get(d, keys[i]);
		assert_true(json_is_string(v));
		assert_string_equal(json_string_value(v), vals[i]);
	}
	json_decref(docs);
}

static void test_yamljson_numbers_typed(void **state)
{
	json_t *docs;
	json_t *d = load_one("i: 42\nn: -7\np: +3\nz: 0\nbig: 9223372036854775807\n"
			     "f: 1.5\ng: -0.25\nx: 1e3\ny: 2.5E-2\nh: .5\n",
			     &docs);
	assert_true(json_is_integer(json_object_get(d, "i")));
	assert_int_equal(json_integer_value(json_object_get(d, "i")), 42);
	assert_int_equal(json_integer_value(json_object_get(d, "n")), -7);
	assert_int_equal(json_integer_value(json_object_get(d, "p")), 3);
	assert_int_equal(json_integer_value(json_object_get(d, "z")), 0);
	assert_true(json_integer_value(json_object_get(d, "big")) == INT64_MAX);
	assert_true(json_is_real(json_object_get(d, "f")));
	assert_true(json_real_value(json_object_get(d, "f")) == 1.5);
	assert_true(json_real_value(json_object_get(d, "g")) == -0.25);
	assert_true(json_is_real(json_object_get(d, "x")));
	assert_true(json_real_value(json_object_get(d, "x")) == 1000.0);
	assert_true(json_real_value(json_object_get(d, "y")) == 0.025);
	assert_true(json_real_value(json_object_get(d, "h")) == 0.5);
	json_decref(docs);
}

static void test_yamljson_out_of_range_int_kept_as_string(void **state)
{
	json_t *docs;
	json_t *d = load_one("big: 99999999999999999999\n", &docs);
	assert_true(json_is_string(json_object_get(d, "big")));
	assert_string_equal(json_string_value(json_object_get(d, "big")), "99999999999999999999");
	json_decref(docs);
}

static void test_yamljson_out_of_range_float_kept_as_string(void **state)
{
	json_t *docs;
	json_t *d = load_one("huge: 1e999\nneg: -1e999\nsmall: 1e-999\n", &docs);
	assert_true(json_is_string(json_object_get(d, "huge")));
	assert_string_equal(json_string_value(json_object_get(d, "huge")), "1e999");
	assert_string_equal(json_string_value(json_object_get(d, "neg")), "-1e999");
	/* Underflow to zero is still a number, as in Go's strconv. */
	assert_true(json_is_real(json_object_get(d, "small")));
	json_decref(docs);
}

static void test_yamljson_non_numbers_stay_strings(void **state)
{
	json_t *docs;
	/* Quantities, versions and lone signs look numeric but are not YAML numbers. */
	json_t *d = load_one("a: 500m\nb: 1.2.3\nc: 1e\nd: +\ne: 10Gi\nf: 1e+\ng: 1_000\nh: .\n",
			     &docs);
	static const char *const keys[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	static const char *const vals[] = {
		"500m", "1.2.3", "1e", "+", "10Gi", "1e+", "1_000", "."
	};
	for (size_t i = 0; i < 8; i++) {
		json_t *v = json_object_get(d, keys[i]);
		if (!json_is_string(v))
			fail_msg("%s: expected string %s", keys[i], vals[i]);
		assert_string_equal(json_string_value(v), vals[i]);
	}
	json_decref(docs);
}

static void test_yamljson_quoted_scalars_stay_strings(void **state)
{
	json_t *docs;
	json_t *d = load_one("a: \"true\"\nb: '42'\nc: \"null\"\nd: ''\ne: '~'\nf: \"1.5\"\n"
			     "g: |\n  true\n",
			     &docs);
	assert_string_equal(json_string_value(json_object_get(d, "a")), "true");
	assert_string_equal(json_string_value(json_object_get(d, "b")), "42");
	assert_string_equal(json_string_value(json_object_get(d, "c")), "null");
	assert_string_equal(json_string_value(json_object_get(d, "d")), "");
	assert_string_equal(json_string_value(json_object_get(d, "e")), "~");
	assert_string_equal(json_string_value(json_object_get(d, "f")), "1.5");
	assert_string_equal(json_string_value(json_object_get(d, "g")), "true\n");
	json_decref(docs);
}

static void test_yamljson_nested_structures_convert(void **state)
{
	json_t *docs;
	json_t *d = load_one("spec:\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n"
			     "    flavors:\n    - name: default\n      resources:\n"
			     "      - {name: cpu, nominalQuota: 9}\n",
			     &docs);
	json_t *g =
		json_array_get(json_object_get(json_object_get(d, "spec"), "resourceGroups"), 0);
	json_t *cov = json_object_get(g, "coveredResources");
	assert_int_equal(json_array_size(cov), 2);
	assert_string_equal(json_string_value(json_array_get(cov, 1)), "memory");
	json_t *r = json_array_get(json_object_get(json_array_get(json_object_get(g, "flavors"), 0),
						   "resources"),
				   0);
	assert_int_equal(json_integer_value(json_object_get(r, "nominalQuota")), 9);
	json_decref(docs);
}

static void test_yamljson_duplicate_key_rejected_with_line(void **state)
{
	struct yamljson_error err;
	int rc = load_err("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n", &err);
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(err.line, 5);
	assert_non_null(strstr(err.text, "duplicate key"));
	assert_non_null(strstr(err.text, "name"));
}

static void test_yamljson_duplicate_key_in_later_document_rejected(void **state)
{
	struct yamljson_error err;
	int rc = load_err("a: 1\n---\nb: 1\nc: 2\nb: 3\n", &err);
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(err.line, 5);
	assert_non_null(strstr(err.text, "\"b\""));
}

static void test_yamljson_malformed_einval_with_line(void **state)
{
	struct yamljson_error err;
	int rc = load_err("a: 1\nb: [1, 2\nc: 3\nd: }\n", &err);
	assert_int_equal(rc, -EINVAL);
	assert_true(err.line >= 2);
	assert_true(strlen(err.text) > 0);

	rc = load_err("key: value\n  bad indent: x\n", &err);
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(err.line, 2);
	assert_true(strlen(err.text) > 0);
}

static void test_yamljson_undefined_alias_einval(void **state)
{
	struct yamljson_error err;
	assert_int_equal(load_err("a: *nope\n", &err), -EINVAL);
	assert_int_equal(err.line, 1);
}

static void test_yamljson_non_scalar_key_einval(void **state)
{
	struct yamljson_error err;
	assert_int_equal(load_err("? [a, b]\n: 1\n", &err), -EINVAL);
	assert_non_null(strstr(err.text, "scalar"));
	assert_int_equal(err.line, 1);
}

static void test_yamljson_nul_byte_einval(void **state)
{
	struct yamljson_error err;
	json_t *docs = (json_t *)1;
	static const char text[] = "a: b\0c\n";
	assert_int_equal(yamljson_load(text, sizeof(text) - 1, &docs, &err), -EINVAL);
	assert_null(docs);
}

static void test_yamljson_oversized_input_einval(void **state)
{
	struct yamljson_error err;
	json_t *docs = (json_t *)1;
	size_t n = YAMLJSON_MAX_INPUT + 1;
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, ' ', n);
	assert_int_equal(yamljson_load(big, n, &docs, &err), -EINVAL);
	assert_null(docs);
	free(big);
}

static void test_yamljson_deep_nesting_rejected(void **state)
{
	struct yamljson_error err;
	char text[2048];
	size_t n = 0;
	for (int i = 0; i < 600; i++)
		text[n++] = '[';
	for (int i = 0; i < 600; i++)
		text[n++] = ']';
	text[n] = '\0';
	assert_int_equal(load_err(text, &err), -EINVAL);
}

static void test_yamljson_aliases_expand(void **state)
{
	json_t *docs;
	json_t *d =
		load_one("base: &b\n  cpu: 1\n  memory: 1Gi\nx: *b\ny: *b\nname: &n hello\nz: *n\n",
			 &docs);
	json_t *x = json_object_get(d, "x"), *y = json_object_get(d, "y");
	assert_true(json_equal(x, json_object_get(d, "base")));
	assert_true(json_equal(y, json_object_get(d, "base")));
	assert_string_equal(json_string_value(json_object_get(x, "memory")), "1Gi");
	assert_string_equal(json_string_value(json_object_get(d, "z")), "hello");
	json_decref(docs);
}

static void test_yamljson_billion_laughs_rejected(void **state)
{
	/* Each level multiplies by 9: 9^9 = 387M leaves, far above any sane document. */
	const char *text = "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n"
			   "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
			   "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
			   "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
			   "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
			   "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
			   "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
			   "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
			   "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
	struct yamljson_error err;
	assert_int_equal(load_err(text, &err), -EINVAL);
	assert_non_null(strstr(err.text, "alias"));
}

static void test_yamljson_billion_laughs_across_documents_rejected(void **state)
{
	/* Each document stays under the node cap (9^6 leaves), but together they would not: the
	 * cap must hold for the whole input, since every document lands in the same array. */
	static const char doc[] = "---\n"
				  "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n"
				  "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
				  "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
				  "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
				  "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
				  "f: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n";
	char text[sizeof(doc) * 8];
	size_t n = 0;
	for (int i = 0; i < 8; i++) {
		memcpy(text + n, doc, sizeof(doc) - 1);
		n += sizeof(doc) - 1;
	}
	text[n] = '\0';
	struct yamljson_error err;
	assert_int_equal(load_err(text, &err), -EINVAL);
	assert_non_null(strstr(err.text, "alias"));
}

static void test_yamljson_long_scalar_laughs_rejected(void **state)
{
	/* Few nodes, many bytes: 10^4 aliases of one 64 KiB scalar would be 640 MiB of strings. */
	size_t big = 64 * 1024;
	char *text = malloc(big + 512);
	assert_non_null(text);
	size_t n = (size_t)sprintf(text, "a: &a ");
	memset(text + n, 'x', big);
	n += big;
	n += (size_t)sprintf(text + n, "\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
				       "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
				       "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
				       "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n");
	struct yamljson_error err;
	assert_int_equal(load_err(text, &err), -EINVAL);
	assert_non_null(strstr(err.text, "alias"));
	free(text);
}

static void test_yamljson_recursive_alias_rejected(void **state)
{
	/* libyaml resolves an alias to its own enclosing node; conversion must not loop forever. */
	struct yamljson_error err;
	int rc = load_err("a: &a\n  b: *a\n", &err);
	assert_int_equal(rc, -EINVAL);
}

static void test_yamljson_invalid_utf8_einval(void **state)
{
	struct yamljson_error err;
	assert_int_equal(load_err("a: \"\xff\xfe\"\n", &err), -EINVAL);
}

static void test_yamljson_load_file_reads_documents(void **state)
{
	char path[] = "/tmp/test_yamljson_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "kind: Config\ncurrent-context: kwok\n---\nkind: Other\n";
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	json_t *docs = NULL;
	struct yamljson_error err;
	assert_int_equal(yamljson_load_file(path, &docs, &err), 0);
	assert_int_equal(json_array_size(docs), 2);
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(docs, 0), "current-context")),
			    "kwok");
	json_decref(docs);
	unlink(path);
	docs = (json_t *)1;
	assert_int_equal(yamljson_load_file(path, &docs, &err), -ENOENT);
	assert_null(docs);
}

/* ------------------------------------------------------------------ the streaming reader */

static void test_yamljson_reader_streams_documents_with_lines(void **state)
{
	static const char text[] = "# head\na: 1\n---\n---\n\nkind: B\nx: [1, 2]\n---\n- 3\n";
	struct yamljson_reader *r;
	struct yamljson_error err;
	json_t *doc;
	int line;
	assert_int_equal(yamljson_reader_new(text, strlen(text), &r, &err), 0);
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), 1);
	assert_int_equal(line, 2);
	assert_int_equal(json_integer_value(json_object_get(doc, "a")), 1);
	json_decref(doc);
	/* The empty document between is skipped, as yamljson_load skips it. */
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), 1);
	assert_int_equal(line, 6);
	assert_string_equal(json_string_value(json_object_get(doc, "kind")), "B");
	json_decref(doc);
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), 1);
	assert_int_equal(line, 9);
	assert_true(json_is_array(doc));
	json_decref(doc);
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), 0);
	assert_null(doc);
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), 0);
	yamljson_reader_free(r);
}

static void test_yamljson_reader_error_in_the_middle_keeps_earlier_documents(void **state)
{
	static const char text[] = "a: 1\n---\nb: [1, 2\nc: 3\n---\nd: 4\n";
	struct yamljson_reader *r;
	struct yamljson_error err;
	json_t *doc;
	int line;
	assert_int_equal(yamljson_reader_new(text, strlen(text), &r, &err), 0);
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), 1);
	json_decref(doc);
	memset(&err, 0, sizeof(err));
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), -EINVAL);
	assert_null(doc);
	assert_int_equal(err.line, 4);
	assert_non_null(strstr(err.text, "flow sequence"));
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), -EINVAL);
	yamljson_reader_free(r);
}

static void test_yamljson_reader_caps_aliases_per_document(void **state)
{
	/* One small document of 9^6 leaves: far more than its size allows. */
	static const char text[] = "ok: 1\n---\n"
				   "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n"
				   "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
				   "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
				   "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
				   "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
				   "f: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n";
	struct yamljson_reader *r;
	struct yamljson_error err;
	json_t *doc;
	int line;
	assert_int_equal(yamljson_reader_new(text, strlen(text), &r, &err), 0);
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), 1);
	json_decref(doc);
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), -EINVAL);
	assert_non_null(strstr(err.text, "alias"));
	yamljson_reader_free(r);
}

static void test_yamljson_reader_takes_input_over_the_load_cap(void **state)
{
	/* The reader has no size cap: 17 MiB of documents stream through one at a time. */
	static const char doc[] = "---\nkind: Workload\nspec: {podSets: [{count: 1}]}\n";
	size_t n = (YAMLJSON_MAX_INPUT / (sizeof(doc) - 1) + 1000) * (sizeof(doc) - 1);
	char *big = malloc(n + 1);
	assert_non_null(big);
	for (size_t at = 0; at < n; at += sizeof(doc) - 1)
		memcpy(big + at, doc, sizeof(doc) - 1);
	struct yamljson_reader *r;
	struct yamljson_error err;
	json_t *d;
	int line, rc;
	size_t count = 0;
	assert_int_equal(yamljson_reader_new(big, n, &r, &err), 0);
	while ((rc = yamljson_reader_next(r, &d, &line, &err)) == 1) {
		count++;
		json_decref(d);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(count, n / (sizeof(doc) - 1));
	assert_int_equal(line, 0);
	yamljson_reader_free(r);
	free(big);
}

/* The streaming reader's documents and lines (or error) must be yamljson_load_lines's: its
 * fast path parses the plain subset by hand and hands the rest to libyaml. With share, the
 * reader shares repeated flow collections (yamljson_reader_share): that changes no value. */
static void reader_matches_load(const char *text, int share)
{
	json_t *docs, *doc;
	int *lines;
	struct yamljson_error lerr, rerr;
	struct yamljson_reader *r;
	int line, rc;
	size_t n = 0;
	int lrc = yamljson_load_lines(text, strlen(text), &docs, &lines, &lerr);
	assert_int_equal(yamljson_reader_new(text, strlen(text), &r, &rerr), 0);
	if (share)
		assert_int_equal(yamljson_reader_share(r), 0);
	while ((rc = yamljson_reader_next(r, &doc, &line, &rerr)) == 1) {
		if (lrc != 0) {
			json_decref(doc);
			continue;
		}
		/* The same text, so the same types and values and keys in the same order. */
		char *got = json_dumps(doc, JSON_ENCODE_ANY | JSON_COMPACT);
		char *want = n < json_array_size(docs) ?
				     json_dumps(json_array_get(docs, n),
						JSON_ENCODE_ANY | JSON_COMPACT) :
				     NULL;
		if (!want || strcmp(got, want) != 0 || line != lines[n])
			fail_msg("document %zu of:\n%s\nreader: line %d %s\nload: %s", n, text,
				 line, got, want ? want : "(none)");
		free(got);
		free(want);
		json_decref(doc);
		n++;
	}
	yamljson_reader_free(r);
	if (lrc == 0) {
		if (rc != 0)
			fail_msg("reader failed at %d: %s\non:\n%s", rerr.line, rerr.text, text);
		assert_int_equal(n, json_array_size(docs));
		json_decref(docs);
		free(lines);
	} else {
		if (rc != -EINVAL || rerr.line != lerr.line || strcmp(rerr.text, lerr.text) != 0)
			fail_msg("load: %d: %s; reader: rc %d, %d: %s\non:\n%s", lerr.line,
				 lerr.text, rc, rerr.line, rerr.text, text);
	}
}

/* text as one stream, unshared and shared, and three times over, shared: what a repeated
 * line shares must be what parsing it gives. */
static void assert_reader_matches_load(const char *text)
{
	reader_matches_load(text, 0);
	reader_matches_load(text, 1);
	size_t n = strlen(text);
	char *thrice = malloc(3 * n + 16);
	assert_non_null(thrice);
	snprintf(thrice, 3 * n + 16, "%s\n---\n%s\n---\n%s", text, text, text);
	reader_matches_load(thrice, 1);
	free(thrice);
}

static void test_yamljson_reader_fast_path_matches_libyaml(void **state)
{
	static const char *const cases[] = {
		/* the subset */
		"apiVersion: v1\nkind: A\nmetadata: {name: a, namespace: b}\nspec:\n  x: 1\n  y: "
		"-2.5\n"
		"  z: [1, 2, three, \"four\", 'five']\n  e: {}\n  l: []\n  n:\n  t: true\n  ti: "
		"~\n",
		"# head\n---\na:\n- 1\n- x: 1\n  y: [a, {b: c}]\n-\n- - nested\nb: 2\n",
		"a:\n  - x\n  - y: 1\n    z:\n    - q\nb:\n  c:\n    d: 5e3\n",
		"---\n---\n# only a comment\n---\na: 1\n---\nb: 2\n---\n",
		"k: 2025-03-01T09:00:00Z\nq: \"2025-03-01T09:00:00Z\"\nimg: repo/x:1.0\nm: a, b "
		"c\n",
		"k: 99999999999999999999\nf: 1e999\nn: -0\np: +12\nd: .5\ns: 0x1F\no: 0o17\n",
		"- 1\n- 2\n",
		"a: 1\n\n\nb:   spaced   \nc: \"\"\nd: ''\n",
		"z: 1\ny: {b: 2, a: [3, x]}\nx:\n  d: 4\n  c: 5\n",
		"a: \"#&*!|>?@`%\"\nb: '#x'\n\"c#\": 1\n",
		"a: 123456789012345678\nb: -123456789012345678\nc: 1234567890123456789\n"
		"d: 500m\ne: 1e3\nf: 1.5Gi\ng: 12e\nh: -.5\ni: +\nj: -\nk: 1_000\n",
		"a: true\nb: False\nc: NULL\nd: ~\ne: [null, TRUE, ~, yes]\n",
		"a: 1\nb: [x, y]",
		"a: 1\nb:",
		"- a\n-",
		"a: 1\n---",
		"a: 1\n# c",
		"a: 1\n#\tc\n",
		"a:   \n  b: 1   \n",
		"a: [1, 2]  \nb: \"x\"   \nc: {d: e}  # c\n",
		/* handed to libyaml */
		"a: &x 1\nb: *x\n",
		"a: |\n  text\n  more\nb: >\n  folded\n",
		"a: \"esc\\n\"\nb: 'it''s'\nc: !!str 1\n",
		"a: 1 # trailing comment\nb: [1,\n  2]\n",
		"a: 1\n...\n---\nb: 2\n",
		"a: 1\n...\nb: 2\n",
		"%YAML 1.1\n---\na: 1\n",
		"--- {a: 1}\n--- b\n",
		"  indented: root\n",
		"a:\tb\n",
		"a: b\n c: d\n",
		"a: plain\n  continued\n",
		"a: 1\na: 2\n",
		"a: {x: 1, x: 2}\n",
		"a:\n  x: 1\n  x:\n    y: 2\nb: 1\n",
		"- a: 1\n  a: 2\n- b\n",
		"a: [{z: 1, y: {z: 1, z: 2}}]\n",
		"a:\n  b: 1\na: 3\n",
		"a:\nb: 2\na:\n",
		"a: 1\n---\nb:\n  c: 1\n  c: 1",
		"a: [1, 2\nb: 3\n",
		"a: {b:1}\n",
		"a: [b, ]\n",
		"? complex\n: key\n",
		"a: \"caf\xc3\xa9\"\n",
		"a: 1\n---\nb: [\n---\nc: 3\n",
		"a:\n- b\n  - c\n",
		"a: - b\n",
		"a: b: c\n",
		"a:b\n",
		"- a\nb: 1\n",
		"a: 1\r\nb: 2\r\n",
		"a: 1\r\n---\r\nb: [1, 2]\r\n",
		"a: x\r- y\n---\nb: 2\n",
		"a: 1\r---\rb: 2\n--- 7\n",
		"a: \xc2\x85"
		"b\n---\nc: 1\n",
		"a: 1\n\xef\xbb\xbf---\nb: 2\n",
		"\xef\xbb\xbf"
		"a: 1\n---\nb: 2\n",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_reader_matches_load(cases[i]);
	/* A simple key is at most 1024 characters, in block and flow context alike. */
	char text[2 * 1100 + 32];
	memset(text, 'k', 1100);
	memcpy(text + 1100, ": 1\n---\n{", 9);
	memset(text + 1109, 'k', 1100);
	memcpy(text + 2209, ": 1}\n", 6);
	assert_reader_matches_load(text);
	assert_reader_matches_load(text + 1109 - 1); /* the flow one alone */
}

/* ------------------------------------------------------------------------- sharing */

static json_t *next_doc(struct yamljson_reader *r)
{
	struct yamljson_error err;
	json_t *doc;
	int line;
	assert_int_equal(yamljson_reader_next(r, &doc, &line, &err), 1);
	return doc;
}

static void test_yamljson_reader_shares_a_repeated_flow_line(void **state)
{
	/* The template line comes in every document; the metadata line never twice. A
	 * document libyaml reads (an alias) sits between, and the last one is given up on by
	 * the fast path after it took the shared line ("b: c: d"), then refused by libyaml. */
	static const char text[] =
		"metadata: {name: w1, namespace: team-a}\ntemplate: {spec: {containers: [{name: "
		"c}]}}\n"
		"---\nmetadata: {name: w2, namespace: team-a}\ntemplate: {spec: {containers: "
		"[{name: c}]}}\n"
		"---\ntemplate: {spec: {containers: [{name: c}]}}\nx: &a 1\ny: *a\n"
		"---\nmetadata: {name: w3, namespace: team-a}\ntemplate: {spec: {containers: "
		"[{name: c}]}}\n"
		"---\ntemplate: {spec: {containers: [{name: c}]}}\nb: c: d\n";
	struct yamljson_reader *r;
	struct yamljson_error err;
	json_t *bad;
	int line;
	assert_int_equal(yamljson_reader_new(text, strlen(text), &r, &err), 0);
	assert_int_equal(yamljson_reader_share(r), 0);
	json_t *d1 = next_doc(r), *d2 = next_doc(r), *d3 = next_doc(r), *d4 = next_doc(r);
	json_t *t1 = json_object_get(d1, "template"), *t2 = json_object_get(d2, "template");
	json_t *t3 = json_object_get(d3, "template"), *t4 = json_object_get(d4, "template");
	/* Parsed the first two times (the second is copied to share), shared from then on;
	 * libyaml's document has its own. Every one has the same value. */
	assert_ptr_not_equal(t1, t2);
	assert_ptr_not_equal(t3, t2);
	assert_ptr_not_equal(t4, t2);
	assert_ptr_not_equal(t4, t3);
	assert_true(json_equal(t1, t2) && json_equal(t2, t3) && json_equal(t3, t4));
	assert_int_equal(json_integer_value(json_object_get(d3, "y")), 1);
	/* Only a repeated line is shared: the metadata lines differ. */
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(d4, "metadata"), "name")),
			    "w3");
	/* Held by the reader and by d4: the document given up on gave its reference back. */
	assert_int_equal(yamljson_reader_next(r, &bad, &line, &err), -EINVAL);
	assert_int_equal(err.line, 15);
	assert_int_equal(t4->refcount, 2);
	json_decref(d1);
	json_decref(d2);
	json_decref(d3);
	json_decref(d4);
	assert_int_equal(t4->refcount, 1);
	yamljson_reader_free(r);
}

static void test_yamljson_reader_shares_across_documents_in_order(void **state)
{
	/* d3 and d4 hold the same value; freeing the reader first leaves it to them. */
	static const char text[] =
		"t: [alpha, beta, gamma, delta]\n---\nt: [alpha, beta, gamma, delta]\n"
		"---\nt: [alpha, beta, gamma, delta]\n---\nt: [alpha, beta, gamma, delta]\n";
	struct yamljson_reader *r;
	struct yamljson_error err;
	assert_int_equal(yamljson_reader_new(text, strlen(text), &r, &err), 0);
	assert_int_equal(yamljson_reader_share(r), 0);
	json_t *d1 = next_doc(r), *d2 = next_doc(r), *d3 = next_doc(r), *d4 = next_doc(r);
	json_t *shared = json_object_get(d3, "t");
	assert_ptr_equal(json_object_get(d4, "t"), shared);
	assert_int_equal(shared->refcount, 3);
	yamljson_reader_free(r);
	assert_int_equal(shared->refcount, 2);
	assert_int_equal(json_array_size(shared), 4);
	json_decref(d1);
	json_decref(d2);
	json_decref(d3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d4, "t"), 3)),
			    "delta");
	json_decref(d4);
}

/* A document dropped unfreed from the JSON arena (as `muster simulate` drops a decoded
 * Workload's) gives its shared values back through yamljson_reader_discarded; the shared
 * values come from malloc, so the arena's memory is reused under them safely. Last in the
 * list: it installs the arena, process-wide, and takes it out again. */
static void test_yamljson_reader_discarded_gives_shared_values_back(void **state)
{
	static const char line[] = "template: {spec: {containers: [{name: c, image: x}]}}\n---\n";
	char text[20 * sizeof(line)];
	text[0] = '\0';
	for (int i = 0; i < 20; i++)
		strcat(text, line);
	struct yamljson_reader *r;
	struct yamljson_error err;
	json_t *doc, *shared = NULL;
	int line_no, rc, n = 0;
	assert_int_equal(json_arena_install(), 0);
	assert_int_equal(yamljson_reader_new(text, strlen(text), &r, &err), 0);
	assert_int_equal(yamljson_reader_share(r), 0);
	for (;;) {
		json_arena_begin();
		rc = yamljson_reader_next(r, &doc, &line_no, &err);
		json_arena_pause();
		if (rc != 1)
			break;
		json_t *t = json_object_get(doc, "template");
		if (++n >= 3) {
			assert_false(json_arena_owns(t));
			assert_true(shared == NULL || t == shared);
			shared = t;
			assert_int_equal(shared->refcount, 2);
		} else {
			assert_true(json_arena_owns(t));
		}
		assert_int_equal(json_arena_discard(), 0);
		yamljson_reader_discarded(r);
		if (shared)
			assert_int_equal(shared->refcount, 1);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 20);
	json_arena_end();
	yamljson_reader_free(r);
	assert_int_equal(json_arena_live(), 0);
	json_arena_uninstall();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yamljson_multi_doc_returns_each_document),
		cmocka_unit_test(test_yamljson_empty_documents_skipped),
		cmocka_unit_test(test_yamljson_empty_input_zero_documents),
		cmocka_unit_test(test_yamljson_booleans_and_null_typed),
		cmocka_unit_test(test_yamljson_yaml11_booleans_stay_strings),
		cmocka_unit_test(test_yamljson_numbers_typed),
		cmocka_unit_test(test_yamljson_out_of_range_int_kept_as_string),
		cmocka_unit_test(test_yamljson_out_of_range_float_kept_as_string),
		cmocka_unit_test(test_yamljson_non_numbers_stay_strings),
		cmocka_unit_test(test_yamljson_quoted_scalars_stay_strings),
		cmocka_unit_test(test_yamljson_nested_structures_convert),
		cmocka_unit_test(test_yamljson_duplicate_key_rejected_with_line),
		cmocka_unit_test(test_yamljson_duplicate_key_in_later_document_rejected),
		cmocka_unit_test(test_yamljson_malformed_einval_with_line),
		cmocka_unit_test(test_yamljson_undefined_alias_einval),
		cmocka_unit_test(test_yamljson_non_scalar_key_einval),
		cmocka_unit_test(test_yamljson_nul_byte_einval),
		cmocka_unit_test(test_yamljson_oversized_input_einval),
		cmocka_unit_test(test_yamljson_deep_nesting_rejected),
		cmocka_unit_test(test_yamljson_aliases_expand),
		cmocka_unit_test(test_yamljson_billion_laughs_rejected),
		cmocka_unit_test(test_yamljson_billion_laughs_across_documents_rejected),
		cmocka_unit_test(test_yamljson_long_scalar_laughs_rejected),
		cmocka_unit_test(test_yamljson_recursive_alias_rejected),
		cmocka_unit_test(test_yamljson_invalid_utf8_einval),
		cmocka_unit_test(test_yamljson_load_file_reads_documents),
		cmocka_unit_test(test_yamljson_reader_streams_documents_with_lines),
		cmocka_unit_test(test_yamljson_reader_error_in_the_middle_keeps_earlier_documents),
		cmocka_unit_test(test_yamljson_reader_caps_aliases_per_document),
		cmocka_unit_test(test_yamljson_reader_takes_input_over_the_load_cap),
		cmocka_unit_test(test_yamljson_reader_fast_path_matches_libyaml),
		cmocka_unit_test(test_yamljson_reader_shares_a_repeated_flow_line),
		cmocka_unit_test(test_yamljson_reader_shares_across_documents_in_order),
		cmocka_unit_test(test_yamljson_reader_discarded_gives_shared_values_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
