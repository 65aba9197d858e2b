/* SPDX-License-Identifier: Apache-2.0 */
/* Hand-written HTTP/1.x request-head parser; see http_parse.h for why and how strict. */
#include "net/http_parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* tchar from RFC 9110 section 5.6.2: the characters of methods and field names. */
static bool is_tchar(char ch)
{
	unsigned char c = (unsigned char)ch;
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Visible ASCII: what a request-target may contain (no spaces, no controls, no 8-bit bytes). */
static bool is_target_char(char ch)
{
	unsigned char c = (unsigned char)ch;
	return c >= 0x21 && c <= 0x7e;
}

/* field-vchar and the whitespace allowed inside a field value; obs-text (0x80-0xff) is kept. */
static bool is_value_char(char ch)
{
	unsigned char c = (unsigned char)ch;
	return c == '\t' || c == ' ' || (c >= 0x21 && c != 0x7f);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Whether s[0..n) equals the lower-case literal lit, ignoring ASCII case. */
static bool equals_ci(const char *s, size_t n, const char *lit)
{
	size_t i;
	for (i = 0; i < n; i++) {
		if (lit[i] == '\0' || lower(s[i]) != lit[i])
			return false;
	}
	return lit[i] == '\0';
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

size_t http_head_end(const char *buf, size_t len, size_t *scanned)
{
	size_t i = *scanned <= len ? *scanned : 0;

	/* A terminator may straddle the previous end of the buffer: back up three bytes. */
	i = i >= 3 ? i - 3 : 0;
	while (len >= 4 && i <= len - 4) {
		const char *cr = memchr(buf + i, '\r', len - 3 - i);
		if (!cr)
			break;
		i = (size_t)(cr - buf);
		if (buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
			*scanned = i + 4;
			return i + 4;
		}
		i++;
	}
	*scanned = len;
	return 0;
}

static int parse_request_line(const char *p, const char *eol, struct http_head *out)
{
	const char *start = p;
	while (p < eol && is_tchar(*p))
		p++;
	if (p == start || p == eol || *p != ' ')
		return -EBADMSG;
	out->method = start;
	out->method_len = (size_t)(p - start);

	start = ++p;
	while (p < eol && is_target_char(*p))
		p++;
	if (p == start || p == eol || *p != ' ')
		return -EBADMSG;
	out->target = start;
	out->target_len = (size_t)(p - start);

	p++;
	if (eol - p != 8 || memcmp(p, "HTTP/", 5) != 0 || !is_digit(p[5]) || p[6] != '.' ||
	    !is_digit(p[7]))
		return -EBADMSG;
	if (p[5] != '1')
		return -EPROTONOSUPPORT;
	/* A higher 1.x minor version is answered as 1.1, the highest we speak (RFC 9110 2.5). */
	out->minor_version = p[7] == '0' ? 0 : 1;
	return 0;
}

static int decode_content_length(const char *v, size_t n, struct http_head *out)
{
	uint64_t value = 0;
	if (n == 0)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(v[i]))
			return -EBADMSG;
		uint64_t digit = (uint64_t)(v[i] - '0');
		/* Saturate: a length too large to represent is still a length, just too big. */
		if (value > (UINT64_MAX - digit) / 10)
			value = UINT64_MAX;
		else
			value = value * 10 + digit;
	}
	if (out->has_content_length && out->content_length != value)
		return -EBADMSG;
	out->has_content_length = true;
	out->content_length = value;
	return 0;
}

/* Connection is a comma-separated list of tokens; only "close" and "keep-alive" matter. */
static void decode_connection(const char *v, size_t n, struct http_head *out)
{
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && v[j] != ',')
			j++;
		size_t a = i, b = j;
		while (a < b && is_ows(v[a]))
			a++;
		while (b > a && is_ows(v[b - 1]))
			b--;
		if (equals_ci(v + a, b - a, "close"))
			out->connection_close = true;
		else if (equals_ci(v + a, b - a, "keep-alive"))
			out->connection_keep_alive = true;
		i = j + 1;
	}
}

static int parse_field(const char *p, const char *eol, struct http_head *out, int *host_count)
{
	const char *name = p;
	/* A line starting with whitespace (obs-fold) or whitespace before the colon fails here. */
	while (p < eol && is_tchar(*p))
		p++;
	if (p == name || p == eol || *p != ':')
		return -EBADMSG;
	size_t name_len = (size_t)(p - name);

	p++;
	while (p < eol && is_ows(*p))
		p++;
	const char *value = p;
	const char *value_end = eol;
	while (value_end > value && is_ows(value_end[-1]))
		value_end--;
	for (const char *q = value; q < value_end; q++) {
		if (!is_value_char(*q))
			return -EBADMSG;
	}
	size_t value_len = (size_t)(value_end - value);

	if (out->header_count == HTTP_MAX_HEADERS)
		return -EMSGSIZE;
	struct http_header *h = &out->headers[out->header_count++];
	h->name = name;
	h->name_len = name_len;
	h->value = value;
	h->value_len = value_len;

	if (equals_ci(name, name_len, "content-length"))
		return decode_content_length(value, value_len, out);
	if (equals_ci(name, name_len, "transfer-encoding")) {
		out->has_transfer_encoding = true;
	} else if (equals_ci(name, name_len, "connection")) {
		decode_connection(value, value_len, out);
	} else if (equals_ci(name, name_len, "host")) {
		(*host_count)++;
	} else if (equals_ci(name, name_len, "expect")) {
		if (equals_ci(value, value_len, "100-continue"))
			out->expect_continue = true;
		else
			out->expect_unknown = true;
	}
	return 0;
}

int http_parse_head(const char *buf, size_t len, struct http_head *out)
{
	size_t start = 0;
	while (len - start >= 2 && buf[start] == '\r' && buf[start + 1] == '\n') {
		start += 2;
		if (start > HTTP_HEAD_MAX)
			return -EMSGSIZE;
	}

	size_t scanned = 0;
	size_t end = http_head_end(buf + start, len - start, &scanned);
	if (end == 0)
		return len - start >= HTTP_HEAD_MAX ? -EMSGSIZE : 0;
	if (end > HTTP_HEAD_MAX)
		return -EMSGSIZE;

	memset(out, 0, sizeof(*out));
	/*
	 * Every line in [p, stop) ends in CRLF, and stop is the CR of the blank line. Since the
	 * blank line is the first CRLFCRLF, no empty line occurs before it.
	 */
	const char *p = buf + start;
	const char *stop = buf + start + end - 2;
	int host_count = 0;
	int rc;
	for (bool first = true; p < stop; first = false) {
		const char *eol = memchr(p, '\r', (size_t)(stop - p));
		if (!eol || eol[1] != '\n')
			return -EBADMSG;
		if (first)
			rc = parse_request_line(p, eol, out);
		else
			rc = parse_field(p, eol, out, &host_count);
		if (rc < 0)
			return rc;
		p = eol + 2;
	}
	/* RFC 9112 section 3.2: a 1.1 request without Host, or any with several, gets 400. */
	if (host_count > 1 || (out->minor_version >= 1 && host_count == 0))
		return -EBADMSG;
	return (int)(start + end);
}

const struct http_header *http_head_find(const struct http_head *head, const char *name)
{
	size_t name_len = strlen(name);
	for (size_t i = 0; i < head->header_count; i++) {
		const struct http_header *h = &head->headers[i];
		if (h->name_len != name_len)
			continue;
		size_t j = 0;
		while (j < name_len && lower(h->name[j]) == lower(name[j]))
			j++;
		if (j == name_len)
			return h;
	}
	return NULL;
}

bool http_head_keep_alive(const struct http_head *head)
{
	if (head->connection_close)
		return false;
	return head->minor_version >= 1 || head->connection_keep_alive;
}

/* Splits an origin-form "/p?q" (or the tail of an absolute form) at the first '?'. */
static void split_query(const char *s, size_t len, struct http_target *out)
{
	const char *q = memchr(s, '?', len);
	out->path = s;
	if (q) {
		out->path_len = (size_t)(q - s);
		out->query = q + 1;
		out->query_len = len - out->path_len - 1;
	} else {
		out->path_len = len;
		out->query = s + len;
		out->query_len = 0;
	}
}

int http_target_split(const char *target, size_t len, struct http_target *out)
{
	if (len == 0)
		return -EBADMSG;
	if (len == 1 && target[0] == '*') {
		out->path = target;
		out->path_len = 1;
		out->query = target + 1;
		out->query_len = 0;
		return 0;
	}
	if (target[0] == '/') {
		split_query(target, len, out);
		return 0;
	}

	/* Absolute form, which servers must accept (RFC 9112 3.2.2): skip scheme and authority. */
	size_t skip;
	if (len >= 7 && equals_ci(target, 7, "http://"))
		skip = 7;
	else if (len >= 8 && equals_ci(target, 8, "https://"))
		skip = 8;
	else
		return -EBADMSG;
	size_t i = skip;
	while (i < len && target[i] != '/' && target[i] != '?')
		i++;
	if (i == skip)
		return -EBADMSG; /* no authority */
	split_query(target + i, len - i, out);
	return 0;
}

/* Each segment in turn is checked, cut with a NUL, and kept. */
int http_path_split(const char *path, char *buf, size_t size, char **seg)
{
	int n = 0;
	if (*path && *path != '/')
		return -1; /* "/apis/visibility.kueue.x-k8s.io/v1beta2x" */
	if (snprintf(buf, size, "%s", path) >= (int)size)
		return -1;
	for (char *p = buf; *p;) {
		char *tok = p;
		while (*p && *p != '/')
			p++;
		if (*p)
			*p++ = '\0';
		if (!*tok)
			continue;
		for (const char *c = tok; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
			      *c == '.'))
				return -1;
		if (!strcmp(tok, "..") || !strcmp(tok, ".") || n == HTTP_PATH_SEGMENTS)
			return -1;
		seg[n++] = tok;
	}
	return n;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 :
				      -1;
}

int http_query_param(const char *query, const char *name, char *out, size_t size)
{
	size_t len = strlen(name);
	for (const char *p = query; p && *p;) {
		const char *end = strchr(p, '&');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > len && !strncmp(p, name, len) && p[len] == '=') {
			size_t o = 0;
			for (const char *v = p + len + 1; v < p + n; v++) {
				int c = (unsigned char)*v;
				if (c == '%') {
					int hi = v + 2 < p + n ? hex_digit(v[1]) : -1;
					int lo = hi >= 0 ? hex_digit(v[2]) : -1;
					if (lo < 0)
						return -EINVAL;
					c = hi * 16 + lo;
					v += 2;
				}
				if (o + 1 >= size || c == 0)
					return -EINVAL;
				out[o++] = (char)c;
			}
			out[o] = '\0';
			return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}
