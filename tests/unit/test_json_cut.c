/* SPDX-License-Identifier: Apache-2.0 */
/* util/json_cut.h: which member goes, what stays byte for byte, and texts it leaves alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/json_cut.h"

static const char *const event_path[] = { "object", "metadata", "managedFields", NULL };
static const char *const object_path[] = { "metadata", "managedFields", NULL };

/* Cuts path out of in and checks the result is want. */
static void expect_cut(const char *in, const char *const *path, const char *want)
{
	char text[512];
	size_t len = strlen(in);
	assert_true(len < sizeof(text));
	memcpy(text, in, len + 1);
	size_t n = json_cut_member(text, len, path);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(text, want, n);
	if (n < len)
		assert_int_equal(text[n], '\0');
}

static void test_last_middle_first_only(void **state)
{
	(void)state;
	expect_cut("{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"f\":1}]},\"spec\":{}}",
		   object_path, "{\"metadata\":{\"name\":\"a\"},\"spec\":{}}");
	expect_cut("{\"metadata\":{\"name\":\"a\",\"managedFields\":[],\"uid\":\"u\"}}",
		   object_path, "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}}");
	expect_cut("{\"metadata\":{\"managedFields\":[],\"uid\":\"u\"}}", object_path,
		   "{\"metadata\":{\"uid\":\"u\"}}");
	expect_cut("{\"metadata\":{\"managedFields\":[1]}}", object_path, "{\"metadata\":{}}");
	expect_cut(" { \"metadata\" : { \"a\" : 1 , \"managedFields\" : [ 1 ] } } ", object_path,
		   " { \"metadata\" : { \"a\" : 1  } } ");
}

static void test_watch_event(void **state)
{
	(void)state;
	expect_cut("{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Workload\",\"metadata\":{"
		   "\"name\":\"w\","
		   "\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:status\":{\"f:a\\\"]}"
		   "\":{}}}}]},"
		   "\"status\":{\"managedFields\":\"kept\"}}}",
		   event_path,
		   "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Workload\",\"metadata\":{"
		   "\"name\":\"w\"},"
		   "\"status\":{\"managedFields\":\"kept\"}}}");
}

/* Only the member at the path goes; strings that look like it, and the same key elsewhere,
 * stay. */
static void test_lookalikes_stay(void **state)
{
	(void)state;
	const char *in = "{\"spec\":{\"metadata\":{\"managedFields\":[]}},\"note\":"
			 "\"\\\"metadata\\\":{\\\"managedFields\\\":[]}\"}";
	expect_cut(in, object_path, in);
	/* A key spelled with an escape is compared as written: not found, not cut. */
	in = "{\"metadata\":{\"managed\\u0046ields\":[1]}}";
	expect_cut(in, object_path, in);
	/* Backslashes before a quote: an even count ends the string. */
	expect_cut("{\"metadata\":{\"a\":\"x\\\\\",\"managedFields\":[\"\\\\\"]}}", object_path,
		   "{\"metadata\":{\"a\":\"x\\\\\"}}");
}

static void test_left_alone(void **state)
{
	(void)state;
	const char *const texts[] = {
		"",
		"[]",
		"{\"metadata\":[1]}",
		"{\"metadata\":{\"managedFields\":[1,2",
		"{\"metadata\":{\"managedFields\":[1]",
		"{\"metadata\":{\"managedFields\"",
		"{\"metadata\":{\"x\" 1,\"managedFields\":[]}}",
		"{\"metadata\":{\"x\":\"unterminated",
		"{\"metadata\":{\"managedFields\":[] \"x\":1}}",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		expect_cut(texts[i], object_path, texts[i]);
}

/* json_member_span: the value's bytes as written, whatever its type; -1 where the cut would
 * leave the text alone. */
static void test_member_span(void **state)
{
	(void)state;
	static const char *const object_only[] = { "object", NULL };
	static const char *const name_path[] = { "object", "metadata", "name", NULL };
	const char *event = "{\"type\":\"ADDED\", \"object\" : {\"metadata\":{\"name\":\"w\\\"1\"},"
			    "\"spec\":[1,{\"}\":\"]\"}]} }";
	size_t from, to;
	assert_int_equal(json_member_span(event, strlen(event), object_only, &from, &to), 0);
	assert_int_equal(to - from,
			 strlen("{\"metadata\":{\"name\":\"w\\\"1\"},\"spec\":[1,{\"}\":\"]\"}]}"));
	assert_memory_equal(event + from, "{\"metadata\"", 11);
	assert_int_equal(event[to - 1], '}');
	assert_int_equal(json_member_span(event, strlen(event), name_path, &from, &to), 0);
	assert_int_equal(to - from, 6);
	assert_memory_equal(event + from, "\"w\\\"1\"", 6);
	const char *scalar = "{\"a\":12.5e3,\"b\":true}";
	static const char *const a_path[] = { "a", NULL };
	assert_int_equal(json_member_span(scalar, strlen(scalar), a_path, &from, &to), 0);
	assert_int_equal(to - from, 6);
	assert_int_equal(json_member_span(scalar, strlen(scalar), object_only, &from, &to), -1);
	const char *const bad[] = { "",
				    "[]",
				    "{\"object\":{\"a\":1",
				    "{\"object\" {}}",
				    "{\"object\":{} \"x\":1}",
				    "{\"object\":,\"x\":1}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(json_member_span(bad[i], strlen(bad[i]), object_only, &from, &to),
				 -1);
}

/* Walks the array in text and joins its elements' bytes with '|'; -1 when the walk fails, else
 * how many it found. */
static int walk(const char *text, char *out, size_t size)
{
	size_t pos = 0, from, to, n = 0;
	int rc, count = 0;
	out[0] = '\0';
	while ((rc = json_array_next(text, strlen(text), &pos, &from, &to)) == 1) {
		n += (size_t)snprintf(out + n, size - n, "%s%.*s", count ? "|" : "",
				      (int)(to - from), text + from);
		count++;
	}
	if (rc == 0)
		assert_int_equal(text[pos - 1], ']');
	return rc < 0 ? -1 : count;
}

static void test_array_next(void **state)
{
	(void)state;
	char out[256];
	assert_int_equal(walk(" [ ] ", out, sizeof(out)), 0);
	assert_int_equal(walk("[1]", out, sizeof(out)), 1);
	assert_string_equal(out, "1");
	assert_int_equal(walk("[ {\"a\":\"],\\\"\"} ,\n[1,[2]] , \"x\",true ]", out, sizeof(out)),
			 4);
	assert_string_equal(out, "{\"a\":\"],\\\"\"}|[1,[2]]|\"x\"|true");
	const char *const bad[] = { "",     "{}",    "[",      "[1",         "[1,",  "[1,]",
				    "[,1]", "[1 2]", "[1,,2]", "[{\"a\":1]", "[\"x]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (walk(bad[i], out, sizeof(out)) != -1)
			fail_msg("walked %s", bad[i]);

	/* An element cut in place before the next is asked for: the walk goes on as if not. */
	char list[] = "[{\"metadata\":{\"managedFields\":[1],\"name\":\"a\"}},{\"metadata\":{"
		      "\"name\":\"b\",\"managedFields\":{}}}]";
	size_t pos = 0, from, to, len = strlen(list);
	const char *want[] = { "{\"metadata\":{\"name\":\"a\"}}",
			       "{\"metadata\":{\"name\":\"b\"}}" };
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(json_array_next(list, len, &pos, &from, &to), 1);
		size_t n = json_cut_member(list + from, to - from, object_path);
		assert_int_equal(n, strlen(want[i]));
		assert_memory_equal(list + from, want[i], n);
	}
	assert_int_equal(json_array_next(list, len, &pos, &from, &to), 0);
	assert_int_equal(pos, len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_middle_first_only),
		cmocka_unit_test(test_watch_event),
		cmocka_unit_test(test_lookalikes_stay),
		cmocka_unit_test(test_left_alone),
		cmocka_unit_test(test_member_span),
		cmocka_unit_test(test_array_next),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
