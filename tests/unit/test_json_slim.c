/* SPDX-License-Identifier: Apache-2.0 */
/* util/json_slim.h: the text walk keeps what the tree walk keeps, and refuses every text
 * jansson refuses (and a little more). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/objects.h"
#include "util/json_slim.h"

/* Slims in by rule as text; checks it is accepted and parses to what the tree walk leaves, and
 * returns the text (to free). */
static char *slim_both_ways(const char *in, const struct json_slim_rule *rule)
{
	size_t len = strlen(in), out_len, err_at;
	char *out = malloc(len + 1);
	assert_non_null(out);
	assert_int_equal(json_slim_text(in, len, rule, out, &out_len, &err_at), 0);
	assert_true(out_len <= len);
	assert_int_equal(out[out_len], '\0');
	json_error_t jerr;
	json_t *got = json_loads(out, 0, &jerr), *want = json_loads(in, 0, &jerr);
	assert_non_null(got);
	assert_non_null(want);
	json_slim_tree(want, rule);
	if (!json_equal(got, want)) {
		char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
		fprintf(stderr, "text walk: %s\ntree walk: %s\n", out, w);
		free(w);
		fail();
	}
	json_decref(got);
	json_decref(want);
	return out;
}

static void expect_text(const char *in, const struct json_slim_rule *rule, const char *want)
{
	char *out = slim_both_ways(in, rule);
	assert_string_equal(out, want);
	free(out);
}

static void test_workload_as_the_store_keeps_it(void **state)
{
	(void)state;
	expect_text(
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
		"{\"name\":\"w\",\"namespace\":\"ns\",\"resourceVersion\":\"7\",\"labels\":"
		"{\"app\":\"x\",\"kueue.x-k8s.io/queue-name\":\"q\"},\"annotations\":{\"a\":\"b\"},"
		"\"managedFields\":[{\"manager\":\"m\"}],\"ownerReferences\":[{\"kind\":\"Job\"}]},"
		"\"spec\":{\"queueName\":\"q\",\"podSets\":[{\"name\":\"main\",\"count\":2,"
		"\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"volumes\":[{}],"
		"\"serviceAccountName\":\"sa\",\"nodeSelector\":{\"g\":\"h\"},\"containers\":"
		"[{\"name\":\"c\",\"image\":\"img\",\"command\":[\"sh\",\"-c\"],\"env\":[{\"name\":"
		"\"E\",\"value\":\"}\\\"]\"}],\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]},"
		"\"status\":{\"conditions\":[]}}",
		&obj_workload_rule,
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
		"{\"name\":\"w\",\"namespace\":\"ns\",\"resourceVersion\":\"7\",\"labels\":"
		"{\"kueue.x-k8s.io/queue-name\":\"q\"},\"ownerReferences\":[{\"kind\":\"Job\"}]},"
		"\"spec\":{\"queueName\":\"q\",\"podSets\":[{\"name\":\"main\",\"count\":2,"
		"\"template\":{\"spec\":{\"nodeSelector\":{\"g\":\"h\"},\"containers\":"
		"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]},"
		"\"status\":{\"conditions\":[]}}");
}

/* Keys spelled with escapes are matched by what they say; strings and numbers keep their
 * bytes; whitespace between tokens goes. */
static void test_escapes_and_whitespace(void **state)
{
	(void)state;
	expect_text("{ \"metadata\" : { \"l\\u0061bels\" : { \"x\" : 1 } , \"name\" : \"a b\" } ,"
		    " \"spec\" : [ 1 , 2 ] }",
		    &obj_workload_rule, "{\"metadata\":{\"name\":\"a b\"},\"spec\":[1,2]}");
	expect_text("{\"a\":\"\\u00e9\\ud83d\\ude00\\n\\/\",\"b\":[-0,1.5e-3,9223372036854775807,"
		    "-9223372036854775808,1e-400,true,false,null,{},[]]}",
		    NULL,
		    "{\"a\":\"\\u00e9\\ud83d\\ude00\\n\\/\",\"b\":[-0,1.5e-3,9223372036854775807,"
		    "-9223372036854775808,1e-400,true,false,null,{},[]]}");
	/* A value of a type its rule isn't for is kept whole. */
	expect_text("{\"metadata\":\"x\",\"spec\":{\"podSets\":{\"a\":1}}}", &obj_workload_rule,
		    "{\"metadata\":\"x\",\"spec\":{\"podSets\":{\"a\":1}}}");
	/* Template metadata left empty goes, whether or not it was empty to begin with. */
	expect_text("{\"metadata\":{},\"spec\":{}}", &obj_pod_template_rule, "{\"spec\":{}}");
	expect_text("{\"spec\":{},\"metadata\":{\"labels\":{\"a\":\"b\"}}}", &obj_pod_template_rule,
		    "{\"spec\":{}}");
}

static void expect_refused(const char *in, size_t len)
{
	char out[256];
	size_t out_len, err_at = 12345;
	assert_true(len < sizeof(out));
	assert_int_equal(json_slim_text(in, len, &obj_workload_rule, out, &out_len, &err_at),
			 -EINVAL);
	assert_true(err_at <= len);
	/* jansson refuses it too, but for the walk's own limits (an object's text only). */
	json_t *t = json_loadb(in, len, 0, NULL);
	if (json_is_object(t)) {
		fprintf(stderr, "jansson reads what the walk refused: %.*s\n", (int)len, in);
		fail();
	}
	json_decref(t);
}

#define REFUSED(s) expect_refused(s, sizeof(s) - 1)

static void test_refuses_what_jansson_refuses(void **state)
{
	(void)state;
	REFUSED("");
	REFUSED("[]");
	REFUSED("\"a\"");
	REFUSED("{\"a\":1");
	REFUSED("{\"a\":1}x");
	REFUSED("{\"a\":1,}");
	REFUSED("{\"a\" 1}");
	REFUSED("{\"a\":1 \"b\":2}");
	REFUSED("{a:1}");
	REFUSED("{\"a\":[1,]}");
	REFUSED("{\"a\":[,1]}");
	REFUSED("{\"a\":01}");
	REFUSED("{\"a\":-}");
	REFUSED("{\"a\":1.}");
	REFUSED("{\"a\":1e}");
	REFUSED("{\"a\":+1}");
	REFUSED("{\"a\":9223372036854775808}");
	REFUSED("{\"a\":-9223372036854775809}");
	REFUSED("{\"a\":1e400}");
	REFUSED("{\"a\":truex}");
	REFUSED("{\"a\":nul}");
	REFUSED("{\"a\":\"x\ty\"}");
	REFUSED("{\"a\":\"\\x\"}");
	REFUSED("{\"a\":\"\\u12\"}");
	REFUSED("{\"a\":\"\\u0000\"}");
	REFUSED("{\"a\":\"\\udc00\"}");
	REFUSED("{\"a\":\"\\ud800\"}");
	REFUSED("{\"a\":\"\\ud800\\u0041\"}");
	REFUSED("{\"a\":\"\xc0\x80\"}");
	REFUSED("{\"a\":\"\xed\xa0\x80\"}");
	REFUSED("{\"a\":\"\xf5\x80\x80\x80\"}");
	REFUSED("{\"a\":\"\xe2\x82\"}");
	REFUSED("{\"a\":\"\x80\"}");
	REFUSED("{\"a\":\"x\"");
	REFUSED("{\"metadata\":{\"labels\":{\"a\":[}}}"); /* in a dropped value too */
	expect_refused("{\"a\":\"\0\"}", 8);
	/* Deeper than JSON_SLIM_MAX_DEPTH: refused, though jansson's own limit is higher. */
	char deep[2 * JSON_SLIM_MAX_DEPTH + 16];
	size_t n = 0;
	deep[n++] = '{';
	memcpy(deep + n, "\"a\":", 4);
	n += 4;
	for (int i = 0; i < JSON_SLIM_MAX_DEPTH; i++)
		deep[n++] = '[';
	for (int i = 0; i < JSON_SLIM_MAX_DEPTH; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	char *out = malloc(n + 1);
	size_t out_len, err_at;
	assert_int_equal(json_slim_text(deep, n, NULL, out, &out_len, &err_at), -EINVAL);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload_as_the_store_keeps_it),
		cmocka_unit_test(test_escapes_and_whitespace),
		cmocka_unit_test(test_refuses_what_jansson_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
