/* SPDX-License-Identifier: Apache-2.0 */
#include "util/json_slim.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* --- on a tree ------------------------------------------------------------------------------ */

static const struct json_slim_rule *member_rule(const struct json_slim_rule *r, const char *key)
{
	for (const struct json_slim_rule *m = r->members; m && m->key; m++)
		if (!strcmp(m->key, key))
			return m;
	return NULL;
}

static int has_prefix(const char *key, const char *prefix)
{
	return !strncmp(key, prefix, strlen(prefix));
}

size_t json_slim_tree(json_t *v, const struct json_slim_rule *r)
{
	size_t cut = 0, i;
	const char *key;
	json_t *mv;
	void *tmp;
	switch (r ? r->op : JSON_SLIM_KEEP) {
	case JSON_SLIM_OBJECT:
		json_object_foreach_safe(v, tmp, key, mv)
		{
			const struct json_slim_rule *m = member_rule(r, key);
			if ((m ? m->op : r->others) == JSON_SLIM_DROP) {
				cut += json_object_del(v, key) == 0;
				continue;
			}
			if (!m)
				continue;
			cut += json_slim_tree(mv, m);
			if (m->drop_empty && json_is_object(mv) && json_object_size(mv) == 0)
				cut += json_object_del(v, key) == 0;
		}
		break;
	case JSON_SLIM_PREFIXED:
		json_object_foreach_safe(v, tmp, key, mv)
		{
			if (!has_prefix(key, r->prefix))
				cut += json_object_del(v, key) == 0;
		}
		break;
	case JSON_SLIM_EACH:
		json_array_foreach(v, i, mv) cut += json_slim_tree(mv, r->each);
		break;
	default:
		break;
	}
	return cut;
}

/* --- on text: a validating walk that copies what the rule keeps ----------------------------- */

struct slim {
	const char *p, *end;
	char *out; /* where the next kept byte goes; NULL while walking a dropped value */
	int depth;
};

/* The decoded bytes of a key compared with the rules' keys (none is longer). */
#define KEY_MAX 256

static int ws(struct slim *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
	return s->p < s->end;
}

static void put(struct slim *s, const char *from, size_t n)
{
	if (s->out) {
		memmove(s->out, from, n);
		s->out += n;
	}
}

static void put_byte(struct slim *s, char c)
{
	if (s->out)
		*s->out++ = c;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* Appends code point cp as UTF-8 to key (*n bytes so far, at most KEY_MAX kept). */
static void key_put(char *key, size_t *n, unsigned cp)
{
	unsigned char b[4];
	size_t k;
	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		k = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xC0 | (cp >> 6));
		b[1] = (unsigned char)(0x80 | (cp & 0x3F));
		k = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xE0 | (cp >> 12));
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (unsigned char)(0x80 | (cp & 0x3F));
		k = 3;
	} else {
		b[0] = (unsigned char)(0xF0 | (cp >> 18));
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		b[3] = (unsigned char)(0x80 | (cp & 0x3F));
		k = 4;
	}
	for (size_t i = 0; i < k; i++, (*n)++)
		if (*n < KEY_MAX)
			key[*n] = (char)b[i];
}

/* The length of the UTF-8 sequence starting at p (at most avail bytes) as jansson accepts it:
 * no overlong form, no surrogate, nothing above U+10FFFF; 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t avail, unsigned *cp)
{
	unsigned c = p[0], v;
	size_t n;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		v = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		v = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3F);
	}
	if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10FFFF ||
	    (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

/* Walks the string whose quote is at s->p, validating it, and copies it when s->out is set.
 * With key, decodes it there (*klen bytes, of which at most KEY_MAX are kept). */
static int string(struct slim *s, char *key, size_t *klen)
{
	const char *from = s->p++;
	if (klen)
		*klen = 0;
	for (;;) {
		if (s->p >= s->end)
			return -1;
		unsigned char c = (unsigned char)*s->p;
		unsigned cp;
		if (c == '"') {
			s->p++;
			put(s, from, (size_t)(s->p - from));
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			size_t n =
				utf8_len((const unsigned char *)s->p, (size_t)(s->end - s->p), &cp);
			if (n == 0)
				return -1;
			if (klen)
				key_put(key, klen, cp);
			s->p += n;
			continue;
		}
		if (s->end - s->p < 2)
			return -1;
		switch (s->p[1]) {
		case '"':
		case '\\':
		case '/':
			cp = (unsigned char)s->p[1];
			break;
		case 'b':
			cp = '\b';
			break;
		case 'f':
			cp = '\f';
			break;
		case 'n':
			cp = '\n';
			break;
		case 'r':
			cp = '\r';
			break;
		case 't':
			cp = '\t';
			break;
		case 'u':
			if (s->end - s->p < 6 || hex4(s->p + 2, &cp) != 0 || cp == 0 ||
			    (cp >= 0xDC00 && cp <= 0xDFFF))
				return -1;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				unsigned lo;
				if (s->end - s->p < 12 || s->p[6] != '\\' || s->p[7] != 'u' ||
				    hex4(s->p + 8, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
					return -1;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				s->p += 6;
			}
			s->p += 4;
			break;
		default:
			return -1;
		}
		s->p += 2;
		if (klen)
			key_put(key, klen, cp);
	}
}

static int is_digit(const struct slim *s)
{
	return s->p < s->end && *s->p >= '0' && *s->p <= '9';
}

/* A number as jansson's lexer reads it, and refuses what it refuses: an integer out of
 * int64's range, a real that overflows a double. */
static int number(struct slim *s)
{
	const char *from = s->p;
	int real = 0;
	char buf[65];
	if (*s->p == '-')
		s->p++;
	if (!is_digit(s))
		return -1;
	if (*s->p++ == '0') {
		if (is_digit(s))
			return -1;
	} else {
		while (is_digit(s))
			s->p++;
	}
	if (s->p < s->end && *s->p == '.') {
		real = 1;
		s->p++;
		if (!is_digit(s))
			return -1;
		while (is_digit(s))
			s->p++;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		real = 1;
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (!is_digit(s))
			return -1;
		while (is_digit(s))
			s->p++;
	}
	size_t n = (size_t)(s->p - from);
	if (n >= sizeof(buf))
		return -1; /* stricter than jansson: no Kubernetes number is this long */
	memcpy(buf, from, n);
	buf[n] = '\0';
	errno = 0;
	if (real) {
		double d = strtod(buf, NULL);
		if (errno == ERANGE && isinf(d))
			return -1;
	} else {
		(void)strtoll(buf, NULL, 10);
		if (errno == ERANGE)
			return -1;
	}
	put(s, from, n);
	return 0;
}

static int literal(struct slim *s, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return -1;
	put(s, s->p, n);
	s->p += n;
	return 0;
}

static int value(struct slim *s, const struct json_slim_rule *r, int *empty);

/* After a member or an element: 1 at the closing bracket (left for the caller), 0 past the
 * comma before the next, -1 at anything else. */
static int after_item(struct slim *s, char close)
{
	if (!ws(s))
		return -1;
	if (*s->p == close)
		return 1;
	if (*s->p != ',')
		return -1;
	s->p++;
	return 0;
}

/* An object, its members by r (NULL: all kept); *empty when it was left with none. */
static int object(struct slim *s, const struct json_slim_rule *r, int *empty)
{
	char key[KEY_MAX];
	size_t klen;
	int kept = 0, first = 1, rc;
	s->p++;
	put_byte(s, '{');
	for (;;) {
		if (!ws(s))
			return -1;
		if (first && *s->p == '}')
			break;
		if (*s->p != '"')
			return -1;
		const char *key_from = s->p;
		char *out = s->out, *member_at = s->out;
		const struct json_slim_rule *m = NULL;
		enum json_slim_op op = JSON_SLIM_KEEP;
		s->out = NULL; /* the key is copied once its member is known to stay */
		if (string(s, key, &klen) != 0)
			return -1;
		const char *key_to = s->p;
		s->out = out;
		if (r && r->op == JSON_SLIM_OBJECT) {
			for (m = r->members; m && m->key; m++)
				if (strlen(m->key) == klen && klen <= KEY_MAX &&
				    !memcmp(m->key, key, klen))
					break;
			if (m && !m->key)
				m = NULL;
			op = m ? m->op : r->others;
		} else if (r && r->op == JSON_SLIM_PREFIXED) {
			size_t pn = strlen(r->prefix);
			op = klen >= pn && pn <= KEY_MAX && !memcmp(key, r->prefix, pn) ?
				     JSON_SLIM_KEEP :
				     JSON_SLIM_DROP;
		}
		if (!ws(s) || *s->p != ':')
			return -1;
		s->p++;
		int member_empty = 0;
		if (op == JSON_SLIM_DROP) {
			s->out = NULL;
			rc = value(s, NULL, &member_empty);
			s->out = out;
			if (rc != 0)
				return -1;
		} else {
			if (kept)
				put_byte(s, ',');
			put(s, key_from, (size_t)(key_to - key_from));
			put_byte(s, ':');
			if (value(s, m, &member_empty) != 0)
				return -1;
			if (m && m->drop_empty && member_empty)
				s->out = member_at; /* left empty: it goes too */
			else
				kept++;
		}
		if ((rc = after_item(s, '}')) != 0) {
			if (rc < 0)
				return -1;
			break;
		}
		first = 0;
	}
	s->p++;
	put_byte(s, '}');
	*empty = kept == 0;
	return 0;
}

static int array(struct slim *s, const struct json_slim_rule *each)
{
	int first = 1, empty, rc;
	s->p++;
	put_byte(s, '[');
	for (;;) {
		if (!ws(s))
			return -1;
		if (first && *s->p == ']')
			break;
		if (!first)
			put_byte(s, ',');
		if (value(s, each, &empty) != 0)
			return -1;
		if ((rc = after_item(s, ']')) != 0) {
			if (rc < 0)
				return -1;
			break;
		}
		first = 0;
	}
	s->p++;
	put_byte(s, ']');
	return 0;
}

/* One value by rule r (NULL or KEEP: kept whole, still validated); *empty when it is an object
 * left with no members. */
static int value(struct slim *s, const struct json_slim_rule *r, int *empty)
{
	int rc;
	*empty = 0;
	if (!ws(s))
		return -1;
	switch (*s->p) {
	case '{':
		if (++s->depth > JSON_SLIM_MAX_DEPTH)
			return -1;
		rc = object(s,
			    r && (r->op == JSON_SLIM_OBJECT || r->op == JSON_SLIM_PREFIXED) ? r :
											      NULL,
			    empty);
		s->depth--;
		return rc;
	case '[':
		if (++s->depth > JSON_SLIM_MAX_DEPTH)
			return -1;
		rc = array(s, r && r->op == JSON_SLIM_EACH ? r->each : NULL);
		s->depth--;
		return rc;
	case '"':
		return string(s, NULL, NULL);
	case 't':
		return literal(s, "true");
	case 'f':
		return literal(s, "false");
	case 'n':
		return literal(s, "null");
	default:
		return number(s);
	}
}

int json_slim_text(const char *in, size_t len, const struct json_slim_rule *rule, char *out,
		   size_t *out_len, size_t *err_at)
{
	struct slim s = { .p = in, .end = in + len, .out = out };
	int empty;
	if (!ws(&s) || *s.p != '{' || value(&s, rule, &empty) != 0 || ws(&s)) {
		*err_at = (size_t)(s.p - in);
		return -EINVAL;
	}
	*out_len = (size_t)(s.out - out);
	out[*out_len] = '\0';
	return 0;
}
