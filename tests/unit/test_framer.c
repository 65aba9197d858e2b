/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for kube/framer: line reassembly across chunk boundaries and event parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/framer.h"

#define ADDED_WL                                                                              \
	"{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":" \
	"\"Workload\",\"metadata\":{\"name\":\"job-sample-0c2a1\",\"namespace\":\"team-a\","  \
	"\"resourceVersion\":\"1001\",\"uid\":\"7d0c1f7e-7e8f-4c52-9a64-0c2a1d41b8a9\"},"     \
	"\"spec\":{\"queueName\":\"user-queue\",\"podSets\":[{\"name\":\"main\",\"count\":8}]}}}"
#define MODIFIED_CQ                                                                                \
	"{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"   \
	"\"ClusterQueue\",\"metadata\":{\"name\":\"cluster-queue\",\"resourceVersion\":\"1002\"}," \
	"\"spec\":{\"namespaceSelector\":{}}}}"
#define DELETED_JOB                                                                                \
	"{\"type\":\"DELETED\",\"object\":{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","          \
	"\"metadata\":{\"name\":\"sample\",\"namespace\":\"team-a\",\"resourceVersion\":\"1003\"}" \
	"}}"
#define BOOKMARK                                                                                 \
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Workload\",\"apiVersion\":"               \
	"\"kueue.x-k8s.io/v1beta2\",\"metadata\":{\"resourceVersion\":\"1500\",\"annotations\":" \
	"{\"k8s.io/initial-events-end\":\"true\"}}}}"
#define ERROR_410                                                                                  \
	"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{" \
	"},"                                                                                       \
	"\"status\":\"Failure\",\"message\":\"too old resource version: 1 (1500)\",\"reason\":"    \
	"\"Expired\",\"code\":410}}"

struct lines {
	size_t n;
	char *items[16];
	size_t lens[16];
	int stop_at; /* return -1 from the callback on this line (0-based), or -1 never */
};

static int collect(void *arg, char *line, size_t len)
{
	struct lines *l = arg;
	assert_true(l->n < 16);
	assert_int_equal(strlen(line), len); /* NUL-terminated right after len bytes */
	l->items[l->n] = strndup(line, len);
	l->lens[l->n] = len;
	l->n++;
	if (l->stop_at >= 0 && (size_t)l->stop_at == l->n - 1)
		return -ECANCELED;
	return 0;
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i]);
	l->n = 0;
}

static const char *const stream_lines[] = { ADDED_WL, MODIFIED_CQ, DELETED_JOB, BOOKMARK,
					    ERROR_410 };
#define N_STREAM (sizeof(stream_lines) / sizeof(stream_lines[0]))

static char *make_stream(size_t *len)
{
	size_t total = 0;
	for (size_t i = 0; i < N_STREAM; i++)
		total += strlen(stream_lines[i]) + 1;
	char *s = malloc(total + 1), *p = s;
	assert_non_null(s);
	for (size_t i = 0; i < N_STREAM; i++) {
		size_t n = strlen(stream_lines[i]);
		memcpy(p, stream_lines[i], n);
		p[n] = '\n';
		p += n + 1;
	}
	*p = '\0';
	*len = total;
	return s;
}

static void assert_stream_lines(const struct lines *l)
{
	assert_int_equal(l->n, N_STREAM);
	for (size_t i = 0; i < N_STREAM; i++) {
		assert_int_equal(l->lens[i], strlen(stream_lines[i]));
		assert_string_equal(l->items[i], stream_lines[i]);
	}
}

static void test_framer_single_chunk_yields_all_lines(void **state)
{
	size_t len;
	char *s = make_stream(&len);
	struct framer f;
	struct lines l = { .stop_at = -1 };
	framer_init(&f, FRAMER_MAX_LINE);
	assert_int_equal(framer_feed(&f, s, len, collect, &l), 0);
	assert_stream_lines(&l);
	assert_int_equal(f.pending.len, 0);
	lines_free(&l);
	framer_release(&f);
	free(s);
}

static void test_framer_split_at_every_boundary_reassembles(void **state)
{
	size_t len;
	char *s = make_stream(&len);
	for (size_t cut = 0; cut <= len; cut++) {
		struct framer f;
		struct lines l = { .stop_at = -1 };
		framer_init(&f, FRAMER_MAX_LINE);
		/* Copies so ASan catches any read past the chunk the framer was given. */
		char *a = malloc(cut + 1), *b = malloc(len - cut + 1);
		memcpy(a, s, cut);
		memcpy(b, s + cut, len - cut);
		assert_int_equal(framer_feed(&f, a, cut, collect, &l), 0);
		assert_int_equal(framer_feed(&f, b, len - cut, collect, &l), 0);
		assert_stream_lines(&l);
		lines_free(&l);
		framer_release(&f);
		free(a);
		free(b);
	}
	free(s);
}

static void test_framer_byte_at_a_time_reassembles(void **state)
{
	size_t len;
	char *s = make_stream(&len);
	struct framer f;
	struct lines l = { .stop_at = -1 };
	framer_init(&f, FRAMER_MAX_LINE);
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		assert_int_equal(framer_feed(&f, &c, 1, collect, &l), 0);
	}
	assert_stream_lines(&l);
	lines_free(&l);
	framer_release(&f);
	free(s);
}

static void test_framer_three_way_splits_reassemble(void **state)
{
	size_t len;
	char *s = make_stream(&len);
	/* A prime stride keeps the run short while still placing cuts across every line. */
	for (size_t i = 0; i <= len; i += 7) {
		for (size_t j = i; j <= len; j += 13) {
			struct framer f;
			struct lines l = { .stop_at = -1 };
			framer_init(&f, FRAMER_MAX_LINE);
			assert_int_equal(framer_feed(&f, s, i, collect, &l), 0);
			assert_int_equal(framer_feed(&f, s + i, j - i, collect, &l), 0);
			assert_int_equal(framer_feed(&f, s + j, len - j, collect, &l), 0);
			assert_stream_lines(&l);
			lines_free(&l);
			framer_release(&f);
		}
	}
	free(s);
}

static void test_framer_empty_lines_skipped(void **state)
{
	struct framer f;
	struct lines l = { .stop_at = -1 };
	framer_init(&f, 64);
	assert_int_equal(framer_feed(&f, "\n\nab\n\n\ncd\n\n", 12, collect, &l), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[0], "ab");
	assert_string_equal(l.items[1], "cd");
	lines_free(&l);
	framer_release(&f);
}

static void test_framer_partial_line_held_until_newline(void **state)
{
	struct framer f;
	struct lines l = { .stop_at = -1 };
	framer_init(&f, 64);
	assert_int_equal(framer_feed(&f, "abc", 3, collect, &l), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(framer_feed(&f, "def", 3, collect, &l), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(framer_feed(&f, "\n", 1, collect, &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0], "abcdef");
	lines_free(&l);
	framer_release(&f);
}

static void test_framer_line_at_cap_accepted(void **state)
{
	struct framer f;
	struct lines l = { .stop_at = -1 };
	framer_init(&f, 8);
	assert_int_equal(framer_feed(&f, "12345678\n", 9, collect, &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0], "12345678");
	lines_free(&l);
	framer_release(&f);
}

static void test_framer_overlong_line_e2big(void **state)
{
	struct framer f;
	struct lines l = { .stop_at = -1 };
	framer_init(&f, 8);
	assert_int_equal(framer_feed(&f, "12345", 5, collect, &l), 0);
	assert_int_equal(framer_feed(&f, "6789", 4, collect, &l), -E2BIG);
	assert_int_equal(l.n, 0);
	framer_release(&f);

	/* Also when the whole line arrives in one chunk with its newline. */
	framer_init(&f, 8);
	assert_int_equal(framer_feed(&f, "ok\n123456789\n", 13, collect, &l), -E2BIG);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0], "ok");
	lines_free(&l);
	framer_release(&f);
}

static void test_framer_callback_error_stops_feed(void **state)
{
	struct framer f;
	struct lines l = { .stop_at = 1 };
	framer_init(&f, 64);
	assert_int_equal(framer_feed(&f, "a\nb\nc\n", 6, collect, &l), -ECANCELED);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.items[1], "b");
	lines_free(&l);
	framer_release(&f);
}

static void test_watch_event_added_parsed(void **state)
{
	struct watch_event ev;
	assert_int_equal(watch_event_parse(ADDED_WL, strlen(ADDED_WL), &ev), 0);
	assert_int_equal(ev.type, WATCH_ADDED);
	assert_true(json_is_object(ev.object));
	assert_string_equal(json_string_value(json_object_get(ev.object, "kind")), "Workload");
	assert_string_equal(ev.resource_version, "1001");
	json_decref(ev.object);
}

static void test_watch_event_modified_deleted_parsed(void **state)
{
	struct watch_event ev;
	assert_int_equal(watch_event_parse(MODIFIED_CQ, strlen(MODIFIED_CQ), &ev), 0);
	assert_int_equal(ev.type, WATCH_MODIFIED);
	assert_string_equal(ev.resource_version, "1002");
	json_decref(ev.object);
	assert_int_equal(watch_event_parse(DELETED_JOB, strlen(DELETED_JOB), &ev), 0);
	assert_int_equal(ev.type, WATCH_DELETED);
	assert_string_equal(ev.resource_version, "1003");
	json_decref(ev.object);
}

static void test_watch_event_bookmark_has_resource_version(void **state)
{
	struct watch_event ev;
	assert_int_equal(watch_event_parse(BOOKMARK, strlen(BOOKMARK), &ev), 0);
	assert_int_equal(ev.type, WATCH_BOOKMARK);
	assert_string_equal(ev.resource_version, "1500");
	json_decref(ev.object);
}

static void test_watch_event_error_410_code(void **state)
{
	struct watch_event ev;
	assert_int_equal(watch_event_parse(ERROR_410, strlen(ERROR_410), &ev), 0);
	assert_int_equal(ev.type, WATCH_ERROR);
	assert_int_equal(ev.error_code, 410);
	assert_null(ev.resource_version);
	assert_string_equal(json_string_value(json_object_get(ev.object, "reason")), "Expired");
	json_decref(ev.object);
}

static void test_watch_event_error_without_code_is_500(void **state)
{
	const char *line =
		"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"message\":\"boom\"}}";
	struct watch_event ev;
	assert_int_equal(watch_event_parse(line, strlen(line), &ev), 0);
	assert_int_equal(ev.error_code, 500);
	json_decref(ev.object);
}

static void test_watch_event_object_outlives_line(void **state)
{
	char *line = strdup(ADDED_WL);
	struct watch_event ev;
	assert_int_equal(watch_event_parse(line, strlen(line), &ev), 0);
	memset(line, 'x', strlen(line));
	free(line);
	/* resource_version is borrowed from the object, not from the line. */
	assert_string_equal(ev.resource_version, "1001");
	json_decref(ev.object);
}

static void test_watch_event_garbage_eproto(void **state)
{
	static const char *const bad[] = {
		"garbage",
		"{\"type\":\"ADDED\"",
		"{\"type\":\"ADDED\",\"object\":{}} trailing",
		"[1,2,3]",
		"{\"type\":\"ADDED\"}",
		"{\"object\":{}}",
		"{\"type\":\"UPSERTED\",\"object\":{}}",
		"{\"type\":7,\"object\":{}}",
		"{\"type\":\"ADDED\",\"object\":\"text\"}",
		"{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{}}",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct watch_event ev;
		ev.object = (json_t *)1;
		if (watch_event_parse(bad[i], strlen(bad[i]), &ev) != -EPROTO)
			fail_msg("accepted: %s", bad[i]);
		assert_null(ev.object);
	}
}

static void test_watch_event_len_bounds_the_parse(void **state)
{
	/* The parser must look at len bytes only: here the valid event is followed by junk. */
	char line[512];
	snprintf(line, sizeof(line), "%s%s", DELETED_JOB, "GARBAGE");
	struct watch_event ev;
	assert_int_equal(watch_event_parse(line, strlen(DELETED_JOB), &ev), 0);
	assert_int_equal(ev.type, WATCH_DELETED);
	json_decref(ev.object);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framer_single_chunk_yields_all_lines),
		cmocka_unit_test(test_framer_split_at_every_boundary_reassembles),
		cmocka_unit_test(test_framer_byte_at_a_time_reassembles),
		cmocka_unit_test(test_framer_three_way_splits_reassemble),
		cmocka_unit_test(test_framer_empty_lines_skipped),
		cmocka_unit_test(test_framer_partial_line_held_until_newline),
		cmocka_unit_test(test_framer_line_at_cap_accepted),
		cmocka_unit_test(test_framer_overlong_line_e2big),
		cmocka_unit_test(test_framer_callback_error_stops_feed),
		cmocka_unit_test(test_watch_event_added_parsed),
		cmocka_unit_test(test_watch_event_modified_deleted_parsed),
		cmocka_unit_test(test_watch_event_bookmark_has_resource_version),
		cmocka_unit_test(test_watch_event_error_410_code),
		cmocka_unit_test(test_watch_event_error_without_code_is_500),
		cmocka_unit_test(test_watch_event_object_outlives_line),
		cmocka_unit_test(test_watch_event_garbage_eproto),
		cmocka_unit_test(test_watch_event_len_bounds_the_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
