/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HTTP/1.x request-head parser (RFC 9112): request line and header fields, nothing else. It is
 * a pure function over a byte range, so it can be fuzzed directly and swapped out later; the
 * server (net/httpd.c) owns the connection, the body and the limits on them.
 *
 * Hand-written on purpose: Debian 12 packages no maintained HTTP parser as a C library
 * (llhttp and picohttpparser are not packaged; libhttp-parser-dev is the nodejs http-parser,
 * which its upstream declares unmaintained). The server only needs request heads from
 * kube-apiserver (POST with Content-Length) and probes (GET), so a strict parser is enough.
 *
 * Strictness, so that one byte stream can only mean one thing (no request smuggling):
 *   - lines end in CRLF; a bare CR or LF, NUL or any other control character is an error;
 *   - exactly one SP between method, request-target and version;
 *   - no whitespace between a field name and its colon, and no obs-fold continuation lines;
 *   - Content-Length is 1*DIGIT; repeated Content-Length fields must agree;
 *   - HTTP/1.1 requires exactly one Host field.
 * Empty lines before the request line are skipped (RFC 9112 section 2.2).
 *
 * Nothing here allocates. Every pointer in struct http_head points into the caller's buffer and
 * is valid as long as that buffer is; strings are NOT NUL-terminated (use the _len fields).
 */
#ifndef MUSTER_HTTP_PARSE_H
#define MUSTER_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest request head accepted, counting the request line, all fields and the blank line. */
#define HTTP_HEAD_MAX 16384
/* More header fields than this is an error (-EMSGSIZE), like an oversized head. */
#define HTTP_MAX_HEADERS 64

struct http_header {
	const char *name; /* field name as sent (compare case-insensitively) */
	size_t name_len;
	const char *value; /* without leading and trailing whitespace; may be empty */
	size_t value_len;
};

struct http_head {
	const char *method; /* a token, case-sensitive ("GET") */
	size_t method_len;
	const char *target; /* request-target as sent: "/p?q", "http://h/p", "*" */
	size_t target_len;
	int minor_version; /* HTTP/1.<minor>: 0, or 1 for 1.1 and any later 1.x */
	size_t header_count;
	struct http_header headers[HTTP_MAX_HEADERS];

	/* Fields the server acts on, decoded once here. */
	bool has_content_length;
	uint64_t content_length; /* bytes; saturates at UINT64_MAX instead of overflowing */
	bool has_transfer_encoding; /* any Transfer-Encoding field, whatever its value */
	bool connection_close; /* a "close" token in Connection */
	bool connection_keep_alive; /* a "keep-alive" token in Connection */
	bool expect_continue; /* Expect: 100-continue */
	bool expect_unknown; /* an Expect field with any other value (answer 417) */
};

/*
 * Parses the request head at the start of buf[0..len). Bytes after the head (a body, or the
 * next pipelined request) are not looked at.
 *
 * Returns the number of bytes the head occupies, including skipped leading empty lines and the
 * final blank line (so the body starts at buf + result), or
 *   0                 the head is not complete yet: read more and call again;
 *   -EMSGSIZE         the head is longer than HTTP_HEAD_MAX or has too many fields (HTTP 431);
 *   -EPROTONOSUPPORT  the version is HTTP/<major>.<minor> with major other than 1 (HTTP 505);
 *   -EBADMSG          anything else malformed (HTTP 400).
 * On error *out is unspecified.
 */
int http_parse_head(const char *buf, size_t len, struct http_head *out);

/*
 * Finds the end of a head (the CRLFCRLF) in buf[0..len) without parsing it, resuming where an
 * earlier call on the same, grown, buffer stopped: *scanned is 0 for a new head and is updated
 * on every call. This keeps a client that sends one byte at a time from making the server
 * rescan the whole head on every read. Returns the offset just past the blank line, or 0 if it
 * is not there yet. Leading empty lines must already have been removed by the caller.
 */
size_t http_head_end(const char *buf, size_t len, size_t *scanned);

/* The first field called name (case-insensitive), or NULL. */
const struct http_header *http_head_find(const struct http_head *head, const char *name);

/*
 * Whether the connection may stay open after this request: HTTP/1.1 unless "Connection: close",
 * HTTP/1.0 only with "Connection: keep-alive".
 */
bool http_head_keep_alive(const struct http_head *head);

/*
 * Splits a request-target into path and query. Origin form "/p?q" gives "/p" and "q";
 * absolute form "http://host/p?q" gives "/p" and "q" (path_len 0 if it has no path, meaning
 * "/"); asterisk form "*" gives "*". The query excludes the '?', and is empty (query_len 0,
 * query pointing at the end of the target) when there is none. Returns 0, or -EBADMSG for
 * a target in none of these forms. Pointers point into target.
 */
struct http_target {
	const char *path;
	size_t path_len;
	const char *query;
	size_t query_len;
};
int http_target_split(const char *target, size_t len, struct http_target *out);

/*
 * Splits a path (from '/', NUL-terminated) at '/' into seg, in buf (size bytes, a copy the
 * segments point into): how many segments, at most HTTP_PATH_SEGMENTS, or -1 for a path that
 * can't be an API path: not starting with '/' (unless empty), longer than buf, more segments,
 * or a segment with anything but [a-z0-9.-] (an escape, an upper-case letter) or that is "."
 * or "..". Empty segments ("//") are skipped. For names that are DNS labels or subdomains.
 */
#define HTTP_PATH_SEGMENTS 12
int http_path_split(const char *path, char *buf, size_t size, char **seg);

/*
 * The value of name in a query string ("a=1&b=2", without '?'), percent-decoded ("+" stays
 * "+": RFC 3339 offsets), into out (size bytes, NUL-terminated): 1, 0 when name is absent,
 * -EINVAL for a value longer than out, with a bad escape, or decoding to a NUL.
 */
int http_query_param(const char *query, const char *name, char *out, size_t size);

#endif
