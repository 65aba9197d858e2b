/* SPDX-License-Identifier: Apache-2.0 */
/* util/json_cut.h: which member goes, what stays byte for byte, and texts it leaves alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
	expect_cut("{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"f\":1}]},\"spec\":{}}", object_path,
		   "{\"metadata\":{\"name\":\"a\"},\"spec\":{}}");
	expect_cut("{\"metadata\":{\"name\":\"a\",\"managedFields\":[],\"uid\":\"u\"}}", object_path,
		   "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}}");
	expect_cut("{\"metadata\":{\"managedFields\":[],\"uid\":\"u\"}}", object_path,
		   "{\"metadata\":{\"uid\":\"u\"}}");
	expect_cut("{\"metadata\":{\"managedFields\":[1]}}", object_path, "{\"metadata\":{}}");
	expect_cut(" { \"metadata\" : { \"a\" : 1 , \"managedFields\" : [ 1 ] } } ", object_path,
		   " { \"metadata\" : { \"a\" : 1  } } ");
}

static void test_watch_event(void **state)
{
	(void)state;
	expect_cut("{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Workload\",\"metadata\":{\"name\":\"w\","
		   "\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:status\":{\"f:a\\\"]}\":{}}}}]},"
		   "\"status\":{\"managedFields\":\"kept\"}}}",
		   event_path,
		   "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Workload\",\"metadata\":{\"name\":\"w\"},"
		   "\"status\":{\"managedFields\":\"kept\"}}}");
}

/* Only the member at the path goes; strings that look like it, and the same key elsewhere,
 * stay. */
static void test_lookalikes_stay(void **state)
{
	(void)state;
	const char *in = "{\"spec\":{\"metadata\":{\"managedFields\":[]}},\"note\":\"\\\"metadata\\\":{\\\"managedFields\\\":[]}\"}";
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_middle_first_only),
		cmocka_unit_test(test_watch_event),
		cmocka_unit_test(test_lookalikes_stay),
		cmocka_unit_test(test_left_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
