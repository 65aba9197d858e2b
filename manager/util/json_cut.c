/* SPDX-License-Identifier: Apache-2.0 */
#include "util/json_cut.h"

#include <string.h>

#define JSON_CUT_MAX_DEPTH 8

struct scan {
	const char *p, *end;
};

/* Skips whitespace; 1 if a byte follows, 0 at the end. */
static int skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
	return s->p < s->end;
}

/* Moves past the string whose opening quote is at s->p. 0, or -1 if it doesn't end. */
static int skip_string(struct scan *s)
{
	const char *p = s->p + 1;
	for (;;) {
		const char *q = memchr(p, '"', (size_t)(s->end - p));
		if (!q)
			return -1;
		/* Escaped when an odd number of backslashes stands before it; p never follows a
		 * backslash (it starts after a quote), so counting stops there. */
		const char *b = q;
		while (b > p && b[-1] == '\\')
			b--;
		if (((q - b) & 1) == 0) {
			s->p = q + 1;
			return 0;
		}
		p = q + 1;
	}
}

/* Moves past one value (no validation of scalars: the parser after us does that). */
static int skip_value(struct scan *s)
{
	if (!skip_ws(s))
		return -1;
	if (*s->p == '"')
		return skip_string(s);
	if (*s->p == '{' || *s->p == '[') {
		size_t depth = 0;
		while (s->p < s->end) {
			char c = *s->p;
			if (c == '"') {
				if (skip_string(s) != 0)
					return -1;
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0) {
				s->p++;
				return 0;
			}
			s->p++;
		}
		return -1;
	}
	while (s->p < s->end && !memchr(",}] \t\r\n", *s->p, 7))
		s->p++;
	return 0;
}

static size_t cut(char *text, size_t len, const char *from, const char *to)
{
	size_t a = (size_t)(from - text), b = (size_t)(to - text);
	memmove(text + a, text + b, len - b);
	len -= b - a;
	text[len] = '\0';
	return len;
}

/* Where locate found a member: its first byte (the key's quote), the comma before it (NULL
 * when it is its object's first), its value's bytes, and the byte after the value and the
 * whitespace that follows it (a ',' or the object's '}'). */
struct found {
	const char *member, *comma, *value, *value_end, *after;
};

/* Walks text to the member at path. 0, or -1 when it isn't there or the text can't be walked
 * that far. */
static int locate(const char *text, size_t len, const char *const *path, struct found *f)
{
	struct scan s = { text, text + len };
	for (size_t depth = 0; path[depth] && depth < JSON_CUT_MAX_DEPTH; depth++) {
		size_t want = strlen(path[depth]);
		const char *comma = NULL; /* the comma before the current member */
		if (!skip_ws(&s) || *s.p != '{')
			return -1;
		s.p++;
		for (;;) {
			if (!skip_ws(&s) || *s.p != '"')
				return -1; /* the end of the object ('}'), or not a member */
			const char *member = s.p, *key = s.p + 1;
			if (skip_string(&s) != 0)
				return -1;
			/* Keys are compared as written: one spelled with escapes isn't found. */
			int match = (size_t)(s.p - 1 - key) == want &&
				    !memcmp(key, path[depth], want);
			if (!skip_ws(&s) || *s.p != ':')
				return -1;
			s.p++;
			if (match && path[depth + 1])
				break; /* descend into this member's value */
			if (!skip_ws(&s))
				return -1;
			const char *value = s.p;
			if (skip_value(&s) != 0)
				return -1;
			const char *value_end = s.p;
			if (!skip_ws(&s) || (*s.p != ',' && *s.p != '}'))
				return -1;
			if (match) {
				*f = (struct found){ member, comma, value, value_end, s.p };
				return 0;
			}
			if (*s.p != ',')
				return -1;
			comma = s.p++;
		}
	}
	return -1;
}

size_t json_cut_member(char *text, size_t len, const char *const *path)
{
	struct found f;
	if (!path[0] || locate(text, len, path, &f) != 0)
		return len;
	if (*f.after == ',')
		return cut(text, len, f.member, f.after + 1);
	return cut(text, len, f.comma ? f.comma : f.member, f.value_end);
}

int json_member_span(const char *text, size_t len, const char *const *path, size_t *from,
		     size_t *to)
{
	struct found f;
	if (!path[0] || locate(text, len, path, &f) != 0 || f.value == f.value_end)
		return -1; /* an empty value ("a":,) is no value */
	*from = (size_t)(f.value - text);
	*to = (size_t)(f.value_end - text);
	return 0;
}

int json_member_string(const char *text, size_t len, const char *const *path, char *buf,
		       size_t size)
{
	size_t from, to;
	if (json_member_span(text, len, path, &from, &to) != 0 || to - from < 2 ||
	    text[from] != '"' || text[to - 1] != '"' || to - from - 2 >= size)
		return -1;
	for (size_t i = from + 1; i < to - 1; i++)
		if (text[i] == '\\' || (unsigned char)text[i] < 0x20)
			return -1;
	memcpy(buf, text + from + 1, to - from - 2);
	buf[to - from - 2] = '\0';
	return 0;
}

int json_value_end(const char *text, size_t len, size_t *end)
{
	struct scan s = { text, text + len };
	if (skip_value(&s) != 0 || s.p == text)
		return -1;
	*end = (size_t)(s.p - text);
	return 0;
}

int json_array_next(const char *text, size_t len, size_t *pos, size_t *from, size_t *to)
{
	struct scan s = { text + *pos, text + len };
	if (*pos > len || !skip_ws(&s))
		return -1;
	/* Before the first element the '[' (and maybe the ']' at once); after one, a ',' or
	 * the ']'. */
	char opener = *pos == 0 ? '[' : ',';
	if (*s.p == ']' && *pos != 0) {
		*pos = (size_t)(s.p + 1 - text);
		return 0;
	}
	if (*s.p != opener)
		return -1;
	s.p++;
	if (!skip_ws(&s))
		return -1;
	if (opener == '[' && *s.p == ']') {
		*pos = (size_t)(s.p + 1 - text);
		return 0;
	}
	const char *value = s.p;
	if (skip_value(&s) != 0 || s.p == value)
		return -1; /* no value where one must be: "[,", ",]" or ",," */
	*from = (size_t)(value - text);
	*to = (size_t)(s.p - text);
	*pos = *to;
	return 1;
}
