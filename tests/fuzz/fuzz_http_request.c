/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the HTTP request-head parser (net/http_parse.h) with arbitrary bytes, checking that
 * it never reads outside the input, returns only its documented codes, points only inside the
 * head it reports, and that the incremental end-of-head search the server uses agrees with a
 * one-pass search however the input is split. The target's path and query then go through the
 * visibility endpoint's path splitter and query decoder (http_path_split, http_query_param).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/http_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_span(const char *base, size_t len, const char *p, size_t n)
{
	if (n > len || p < base || p > base + len - n)
		abort();
}

/* The path's segments lie in the copy and hold only what the splitter allows; a query
 * value decodes within its bound. */
static void check_path_and_query(const struct http_target *t)
{
	char path[1024], buf[1024], query[1024], value[64];
	char *seg[HTTP_PATH_SEGMENTS];
	if (t->path_len >= sizeof(path) || t->query_len >= sizeof(query))
		return;
	memcpy(path, t->path, t->path_len);
	path[t->path_len] = '\0';
	memcpy(query, t->query, t->query_len);
	query[t->query_len] = '\0';
	int n = http_path_split(path, buf, sizeof(buf), seg);
	if (n > HTTP_PATH_SEGMENTS)
		abort();
	for (int i = 0; i < n; i++) {
		if (seg[i] < buf || seg[i] >= buf + sizeof(buf) || !*seg[i] ||
		    strspn(seg[i], "abcdefghijklmnopqrstuvwxyz0123456789.-") != strlen(seg[i]) ||
		    !strcmp(seg[i], "..") || !strcmp(seg[i], "."))
			abort();
	}
	static const char *const names[] = { "limit", "offset", "since", "by" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int rc = http_query_param(query, names[i], value, sizeof(value));
		if (rc != 0 && rc != 1 && rc != -EINVAL)
			abort();
		if (rc == 1 && strlen(value) >= sizeof(value))
			abort();
	}
}

static void check_head(const char *buf, size_t consumed, const struct http_head *head)
{
	check_span(buf, consumed, head->method, head->method_len);
	check_span(buf, consumed, head->target, head->target_len);
	if (head->method_len == 0 || head->target_len == 0 || head->header_count > HTTP_MAX_HEADERS)
		abort();
	if (head->minor_version != 0 && head->minor_version != 1)
		abort();
	for (size_t i = 0; i < head->header_count; i++) {
		const struct http_header *h = &head->headers[i];
		check_span(buf, consumed, h->name, h->name_len);
		check_span(buf, consumed, h->value, h->value_len);
		if (h->name_len == 0 || memchr(h->value, '\r', h->value_len) ||
		    memchr(h->value, '\n', h->value_len))
			abort();
	}
	if (head->has_content_length != (http_head_find(head, "Content-Length") != NULL))
		abort();
	if (head->has_transfer_encoding != (http_head_find(head, "transfer-encoding") != NULL))
		abort();
	(void)http_head_keep_alive(head);

	struct http_target t;
	if (http_target_split(head->target, head->target_len, &t) == 0) {
		check_span(head->target, head->target_len, t.path, t.path_len);
		check_span(head->target, head->target_len, t.query, t.query_len);
		check_path_and_query(&t);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct http_head head;

	int n = http_parse_head(buf, size, &head);
	if (n < 0 && n != -EBADMSG && n != -EMSGSIZE && n != -EPROTONOSUPPORT)
		abort();
	if (n > 0) {
		if ((size_t)n > size)
			abort();
		check_head(buf, (size_t)n, &head);
		/* The head alone parses the same: nothing after it was looked at. */
		struct http_head again;
		if (http_parse_head(buf, (size_t)n, &again) != n)
			abort();
	}

	/*
	 * The server searches for the end of the head as bytes arrive, resuming each time. Split
	 * the input at steps chosen by its first byte and compare with a single search.
	 */
	size_t skip = 0;
	while (size - skip >= 2 && buf[skip] == '\r' && buf[skip + 1] == '\n')
		skip += 2;
	const char *head_start = buf + skip;
	size_t head_size = size - skip;
	size_t step = size ? 1 + data[0] % 13 : 1;
	size_t scanned = 0, end = 0;
	for (size_t len = 0; !end; len += step) {
		if (len > head_size)
			len = head_size;
		end = http_head_end(head_start, len, &scanned);
		if (len == head_size)
			break;
	}
	size_t once = 0;
	if (end != http_head_end(head_start, head_size, &once))
		abort();
	if (n > 0 && end != (size_t)n - skip)
		abort();
	return 0;
}
