/* SPDX-License-Identifier: Apache-2.0 */
#include "util/export_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_arena.h"
#include "util/json_cut.h"

/* A JSON List's members other than items (its head and tail: apiVersion, kind, metadata) are
 * parsed on their own, from a copy of their bytes; a List whose others run past this is read
 * whole (nothing kubectl writes comes near it). */
#define LIST_HEAD_MAX (1u << 20)
/* jansson's flags for every JSON value: duplicate keys are an error, as Kubernetes' strict
 * decoding and the YAML reader (util/yamljson.h) have them. */
#define JSON_FLAGS JSON_REJECT_DUPLICATES

struct export_reader {
	const char *data;
	size_t len;
	int json;
	/* An error ends the input: next returns it again. */
	int done, rc;
	struct yamljson_error err;

	/* YAML: the streaming reader; last_yaml when the last object came from it. */
	struct yamljson_reader *yaml;
	int last_yaml;

	/* JSON: the next byte to read, its 1-based line and the documents begun so far. */
	size_t pos;
	int line;
	size_t doc;
	/* A JSON List being streamed: pos is inside its items array, item the next item's
	 * index. */
	int streaming;
	json_t *head; /* its members before items */
	long item;

	/* A List read whole (written otherwise than kubectl writes it): its items, handed out one
	 * by one, each slot emptied when the next is taken. */
	json_t *held;
	size_t held_next;
	int held_line;
};

__attribute__((format(printf, 3, 4))) static int fail(struct yamljson_error *err, int line,
						      const char *fmt, ...)
{
	va_list ap;
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The first byte from p that isn't whitespace (end if none). */
static const char *past_space(const char *p, const char *end)
{
	while (p < end && is_space(*p))
		p++;
	return p;
}

/* Whether the line at p (up to end) is a `---` document separator. */
static int separator_at(const char *p, const char *end)
{
	return end - p >= 3 && !memcmp(p, "---", 3) &&
	       (end - p == 3 || p[3] == ' ' || p[3] == '\t' || p[3] == '\n' || p[3] == '\r');
}

/* Moves pos to to, counting the lines passed. */
static void advance(struct export_reader *r, size_t to)
{
	const char *p = r->data + r->pos, *end = r->data + to;
	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		r->line++;
		p++;
	}
	r->pos = to;
}

/* Moves past whitespace. */
static void skip_space(struct export_reader *r)
{
	advance(r, (size_t)(past_space(r->data + r->pos, r->data + r->len) - r->data));
}

/* Moves past whitespace and `---` lines (at a line's start) between documents. */
static void skip_separators(struct export_reader *r)
{
	for (;;) {
		skip_space(r);
		const char *p = r->data + r->pos, *end = r->data + r->len;
		int line_start = r->pos == 0 || p[-1] == '\n';
		if (!line_start || !separator_at(p, end))
			return;
		/* What follows on its line, if anything, is the next document's ("--- {...}"). */
		advance(r, r->pos + 3);
	}
}

static int is_v1_list(json_t *obj)
{
	const char *api = json_string_value(json_object_get(obj, "apiVersion"));
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	return api && kind && !strcmp(api, "v1") && !strcmp(kind, "List");
}

/* jansson's error in a value that starts at line `line`: its line is the value's own. */
static int json_fail(struct yamljson_error *err, int line, const json_error_t *jerr,
		     const char *where)
{
	return fail(err, jerr->line > 0 ? line + jerr->line - 1 : line, "%s: %s", where,
		    jerr->text);
}

/* Moves *p past whitespace; 0 at the end. */
static int space_to(const char **p, const char *end)
{
	*p = past_space(*p, end);
	return *p < end;
}

/* ----------------------------------------------------------------------- the fast path */

/*
 * jansson reads a character at a time through its stream layer, and was three quarters of
 * simulating a JSON export. So each JSON document or List item is first tried by this parser,
 * written here for the subset exports are written in: objects, arrays, strings (escapes and
 * UTF-8 in values, as kubectl's last-applied-configuration annotation has them; keys of
 * printable ASCII), integers of up to 18 digits, true, false, null. Anything else (a
 * fraction or exponent, a duplicate key, nesting past FAST_MAX_DEPTH, any error) makes it
 * give the value to jansson, which then decides, with its own messages; its values and
 * jansson's are the same JSON (fuzz_export_reader checks it).
 */
#define FAST_MAX_DEPTH 64

/* Printable ASCII but '"' and '\\': a string's bytes on the fast path. */
static const unsigned char string_byte[256] = {
	[0x20 ... 0x21] = 1, /* '"' is 0x22 */
	[0x23 ... 0x5b] = 1, /* '\\' is 0x5c */
	[0x5d ... 0x7e] = 1,
};

/* A string at *pp (its opening quote): its bytes' start and length; *pp past it. NULL if not
 * in the subset. */
static const char *fast_string(const char **pp, const char *end, size_t *len)
{
	const char *s = *pp + 1, *q = s;
	while (q < end && string_byte[(unsigned char)*q])
		q++;
	if (q == end || *q != '"')
		return NULL;
	*len = (size_t)(q - s);
	*pp = q + 1;
	return s;
}

static int hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
			     c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) :
						    16;
		if (d == 16)
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

/* The escapes of text[0..n) decoded into out (never longer than text): its length, or -1
 * for what jansson refuses (an unknown escape, \u0000 or a lone surrogate) or decodes with
 * its own message. */
static long unescape(const char *text, size_t n, char *out)
{
	const char *p = text, *end = text + n;
	char *o = out;
	while (p < end) {
		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		if (end - p < 2)
			return -1;
		char c = p[1];
		p += 2;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			*o++ = c;
			continue;
		case 'b':
			*o++ = '\b';
			continue;
		case 'f':
			*o++ = '\f';
			continue;
		case 'n':
			*o++ = '\n';
			continue;
		case 'r':
			*o++ = '\r';
			continue;
		case 't':
			*o++ = '\t';
			continue;
		default:
			break;
		}
		unsigned cp, low;
		if (c != 'u' || end - p < 4 || hex4(p, &cp) != 0 || cp == 0)
			return -1;
		p += 4;
		if (cp >= 0xDC00 && cp <= 0xDFFF)
			return -1;
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &low) != 0 ||
			    low < 0xDC00 || low > 0xDFFF)
				return -1;
			p += 6;
			cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
		}
		if (cp < 0x80) {
			*o++ = (char)cp;
		} else if (cp < 0x800) {
			*o++ = (char)(0xC0 | cp >> 6);
			*o++ = (char)(0x80 | (cp & 0x3F));
		} else if (cp < 0x10000) {
			*o++ = (char)(0xE0 | cp >> 12);
			*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
			*o++ = (char)(0x80 | (cp & 0x3F));
		} else {
			*o++ = (char)(0xF0 | cp >> 18);
			*o++ = (char)(0x80 | (cp >> 12 & 0x3F));
			*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
			*o++ = (char)(0x80 | (cp & 0x3F));
		}
	}
	return o - out;
}

/* A string value with escapes or bytes past ASCII at *pp: decoded, and its UTF-8 checked by
 * json_stringn as jansson's parser checks it; *pp past it. NULL to hand it to jansson. */
static json_t *fast_string_escaped(const char **pp, const char *end)
{
	const char *s = *pp + 1, *q = s;
	int escaped = 0;
	for (; q < end && *q != '"'; q++) {
		if ((unsigned char)*q < 0x20)
			return NULL;
		if (*q == '\\') {
			escaped = 1;
			if (++q == end)
				return NULL;
		}
	}
	if (q == end)
		return NULL;
	size_t n = (size_t)(q - s);
	*pp = q + 1;
	if (!escaped)
		return json_stringn(s, n);
	char small[256], *buf = n <= sizeof(small) ? small : malloc(n);
	if (!buf)
		return NULL;
	long len = unescape(s, n, buf);
	json_t *v = len < 0 ? NULL : json_stringn(buf, (size_t)len);
	if (buf != small)
		free(buf);
	return v;
}

static json_t *fast_value(const char **pp, const char *end, int depth);

static json_t *fast_object(const char **pp, const char *end, int depth)
{
	json_t *obj = json_object();
	const char *p = past_space(*pp + 1, end), *key;
	size_t keys = 0, key_len;
	if (!obj)
		return NULL;
	if (p < end && *p == '}') {
		*pp = p + 1;
		return obj;
	}
	for (;;) {
		if (p == end || *p != '"' || !(key = fast_string(&p, end, &key_len)))
			goto bail;
		p = past_space(p, end);
		if (p == end || *p != ':')
			goto bail;
		p = past_space(p + 1, end);
		json_t *v = fast_value(&p, end, depth + 1);
		if (!v || json_object_setn_new_nocheck(obj, key, key_len, v) != 0)
			goto bail;
		keys++;
		p = past_space(p, end);
		if (p < end && *p == ',') {
			p = past_space(p + 1, end);
			continue;
		}
		if (p == end || *p != '}')
			goto bail;
		break;
	}
	/* A key set twice left fewer keys than were set: jansson reports it. */
	if (json_object_size(obj) != keys)
		goto bail;
	*pp = p + 1;
	return obj;
bail:
	json_decref(obj);
	return NULL;
}

static json_t *fast_array(const char **pp, const char *end, int depth)
{
	json_t *arr = json_array();
	const char *p = past_space(*pp + 1, end);
	if (!arr)
		return NULL;
	if (p < end && *p == ']') {
		*pp = p + 1;
		return arr;
	}
	for (;;) {
		json_t *v = fast_value(&p, end, depth + 1);
		if (!v || json_array_append_new(arr, v) != 0)
			goto bail;
		p = past_space(p, end);
		if (p < end && *p == ',') {
			p = past_space(p + 1, end);
			continue;
		}
		if (p == end || *p != ']')
			goto bail;
		*pp = p + 1;
		return arr;
	}
bail:
	json_decref(arr);
	return NULL;
}

/* An integer of up to 18 digits (no fraction, no exponent, no leading zero). */
static json_t *fast_integer(const char **pp, const char *end)
{
	int negative = **pp == '-';
	const char *p = *pp + negative, *digits = p;
	unsigned long long v = 0; /* wraps past 19 digits, which are refused below */
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned)(*p - '0');
	size_t n = (size_t)(p - digits);
	if (n == 0 || n > 18 || (n > 1 && *digits == '0') ||
	    (p < end && (*p == '.' || *p == 'e' || *p == 'E')))
		return NULL;
	*pp = p;
	return json_integer(negative ? -(long long)v : (long long)v);
}

/* A value at *pp (not a space; NULL at the end); *pp past it. What follows it is the
 * caller's to check. */
static json_t *fast_value(const char **pp, const char *end, int depth)
{
	const char *p = *pp;
	size_t len;
	if (p == end || depth > FAST_MAX_DEPTH)
		return NULL;
	switch (*p) {
	case '{':
		return fast_object(pp, end, depth);
	case '[':
		return fast_array(pp, end, depth);
	case '"': {
		const char *s = fast_string(pp, end, &len);
		return s ? json_stringn_nocheck(s, len) : fast_string_escaped(pp, end);
	}
	case 't':
		if (end - p < 4 || memcmp(p, "true", 4) != 0)
			return NULL;
		*pp = p + 4;
		return json_true();
	case 'f':
		if (end - p < 5 || memcmp(p, "false", 5) != 0)
			return NULL;
		*pp = p + 5;
		return json_false();
	case 'n':
		if (end - p < 4 || memcmp(p, "null", 4) != 0)
			return NULL;
		*pp = p + 4;
		return json_null();
	default:
		return *p == '-' || (*p >= '0' && *p <= '9') ? fast_integer(pp, end) : NULL;
	}
}

/* The object or array at data[pos] (the fast path, else jansson): *used is its length. NULL
 * with jerr filled if it doesn't parse. */
static json_t *parse_value(struct export_reader *r, size_t *used, json_error_t *jerr)
{
	const char *p = r->data + r->pos, *q = p;
	json_t *v = fast_value(&q, r->data + r->len, 0);
	if (v) {
		*used = (size_t)(q - p);
		return v;
	}
	v = json_loadb(p, r->len - r->pos, JSON_FLAGS | JSON_DISABLE_EOF_CHECK, jerr);
	if (v && jerr->position <= 0) { /* jansson counts in an int */
		json_decref(v);
		snprintf(jerr->text, sizeof(jerr->text), "larger than 2 GB");
		jerr->line = -1;
		return NULL;
	}
	if (v)
		*used = (size_t)jerr->position;
	return v;
}

/* prefix + data[from..from+len) + suffix, parsed from a copy: a List's head or tail. NULL
 * with err filled (about the current document, at line) if it doesn't parse, or with
 * err->line -1 if memory ran out. */
static json_t *parse_copy(struct export_reader *r, const char *prefix, const char *from, size_t len,
			  const char *suffix, int line, struct yamljson_error *err)
{
	size_t a = strlen(prefix), b = strlen(suffix);
	char *copy = malloc(a + len + b);
	if (!copy) {
		err->line = -1;
		return NULL;
	}
	memcpy(copy, prefix, a);
	memcpy(copy + a, from, len);
	memcpy(copy + a + len, suffix, b);
	json_error_t jerr;
	json_t *v = json_loadb(copy, a + len + b, JSON_FLAGS, &jerr);
	free(copy);
	if (!v) {
		char where[64];
		snprintf(where, sizeof(where), "document %zu", r->doc);
		json_fail(err, line, &jerr, where);
	}
	return v;
}

/*
 * A JSON List, streamed: at r->pos, a document starting with '{'. Its top-level members are
 * walked to "items" (skipping scalar values and metadata's object, the members kubectl and
 * people write before it; any other value first means it isn't read as a List here), and the
 * members before items (its head) are parsed from a copy. A head with apiVersion v1 and kind
 * List, or no kind yet (kubectl writes kind after items), makes it a List, whose items come
 * one at a time; the members after them (its tail) are checked when they come (json_list_end).
 * Nothing is read ahead: a List cut short hands out the items before the cut, then fails.
 * 1: streaming from its first item; 0: read it whole; -EINVAL,
 * -ENOMEM. */
static int json_list_begin(struct export_reader *r, struct yamljson_error *err)
{
	const char *doc = r->data + r->pos, *end = r->data + r->len, *p = doc + 1;
	size_t n;
	for (;;) {
		/* Not a key: the object's end, or not JSON (jansson says which). */
		if (!space_to(&p, end) || *p != '"' ||
		    json_value_end(p, (size_t)(end - p), &n) != 0)
			return 0;
		const char *key = p + 1;
		size_t key_len = n - 2;
		p += n;
		if (!space_to(&p, end) || *p != ':')
			return 0;
		p++;
		if (!space_to(&p, end))
			return 0;
		int is_items = key_len == 5 && !memcmp(key, "items", 5);
		if (is_items && *p == '[')
			break;
		if (is_items ||
		    ((*p == '{' || *p == '[') && !(key_len == 8 && !memcmp(key, "metadata", 8))))
			return 0;
		size_t room = (size_t)(end - p) < LIST_HEAD_MAX ? (size_t)(end - p) : LIST_HEAD_MAX;
		if (json_value_end(p, room, &n) != 0)
			return 0;
		p += n;
		if (!space_to(&p, end) || *p != ',')
			return 0;
		p++;
	}
	/* The head outlives the document the first item is (which the caller may drop with
	 * json_arena_discard): from malloc. */
	int arena_on = json_arena_on();
	json_arena_pause();
	json_t *head = parse_copy(r, "", doc, (size_t)(p - doc), "[]}", r->line, err);
	if (arena_on)
		json_arena_begin();
	if (!head)
		return err->line < 0 ? -ENOMEM : 0; /* jansson's error comes reading it whole */
	const char *api = json_string_value(json_object_get(head, "apiVersion"));
	json_t *kind = json_object_get(head, "kind");
	if (!api || strcmp(api, "v1") != 0 ||
	    (kind && (!json_is_string(kind) || strcmp(json_string_value(kind), "List") != 0))) {
		json_decref(head);
		return 0;
	}
	r->head = head;
	r->streaming = 1;
	r->item = 0;
	advance(r, (size_t)(p + 1 - r->data));
	return 1;
}

/* The List's members after its items, from after (past the items' ']') to its closing
 * brace: parsed and checked against its head. 0 (pos then past the List), -EINVAL, -ENOMEM. */
static int json_list_end(struct export_reader *r, const char *after, struct yamljson_error *err)
{
	const char *end = r->data + r->len, *q = after;
	size_t n;
	advance(r, (size_t)(after - r->data));
	for (;;) {
		if (!space_to(&q, end))
			goto cut;
		if (*q == '}')
			break;
		if (*q != ',')
			return fail(err, r->line,
				    "document %zu: malformed JSON after the List's items", r->doc);
		q++;
		/* A member: its key, ':' and value (jansson checks them in the copy). */
		for (int part = 0; part < 3; part++) {
			if (!space_to(&q, end))
				break;
			if (part == 1) {
				q += *q == ':';
				continue;
			}
			if (json_value_end(q, (size_t)(end - q), &n) != 0)
				goto cut;
			q += n;
		}
	}
	const char *doc_end = q + 1;
	json_t *tail =
		parse_copy(r, "{\"items\":[]", after, (size_t)(doc_end - after), "", r->line, err);
	if (!tail)
		return err->line < 0 ? -ENOMEM : -EINVAL;
	const char *key;
	json_t *v;
	int rc = 0;
	json_object_foreach(tail, key, v)
	{
		if (strcmp(key, "items") != 0 && json_object_get(r->head, key)) {
			rc = fail(err, r->line, "document %zu: duplicate key \"%.100s\"", r->doc,
				  key);
			break;
		}
	}
	json_t *kind = json_object_get(r->head, "kind");
	if (!kind)
		kind = json_object_get(tail, "kind");
	if (rc == 0 && !kind)
		rc = fail(err, r->line,
			  "document %zu: a List (apiVersion v1, items) without \"kind\": is the "
			  "input cut short?",
			  r->doc);
	else if (rc == 0 && (!json_is_string(kind) || strcmp(json_string_value(kind), "List")))
		rc = fail(err, r->line,
			  "document %zu: its items were read as a v1 List's, but its kind is not "
			  "\"List\"",
			  r->doc);
	json_decref(tail);
	json_decref(r->head);
	r->head = NULL;
	r->streaming = 0;
	if (rc == 0)
		advance(r, (size_t)(doc_end - r->data));
	return rc;
cut:
	return fail(err, r->line,
		    "document %zu: the List ends after its items: the input is cut "
		    "short",
		    r->doc);
}

/* The next item of the List being streamed: 1, or 0 after its last (pos then past the List). */
static int json_list_next(struct export_reader *r, json_t **obj, struct export_pos *pos,
			  struct yamljson_error *err)
{
	const char *p = r->data + r->pos, *end = r->data + r->len;
	if (!space_to(&p, end))
		goto cut;
	if (r->item > 0 || *p == ']') {
		/* After an item (or in an empty List): ',' or the items' end. */
		if (*p == ']')
			return json_list_end(r, p + 1, err);
		if (*p != ',') {
			advance(r, (size_t)(p - r->data));
			return fail(err, r->line,
				    "document %zu: items[%ld] is followed by neither ',' nor ']'",
				    r->doc, r->item - 1);
		}
		p++;
		if (!space_to(&p, end))
			goto cut;
	}
	advance(r, (size_t)(p - r->data));
	if (*p != '{')
		return fail(err, r->line, "document %zu: items[%ld] is not an object", r->doc,
			    r->item);
	json_error_t jerr;
	size_t used;
	json_t *v = parse_value(r, &used, &jerr);
	if (!v) {
		char where[64];
		snprintf(where, sizeof(where), "document %zu: items[%ld]", r->doc, r->item);
		return json_fail(err, r->line, &jerr, where);
	}
	*obj = v;
	pos->line = r->line;
	pos->item = r->item++;
	advance(r, r->pos + used);
	return 1;
cut:
	advance(r, r->len);
	return fail(err, r->line,
		    "document %zu: the List ends after %ld items: the input is cut "
		    "short",
		    r->doc, r->item);
}

/* The next JSON document or List item. */
static int json_next(struct export_reader *r, json_t **obj, struct export_pos *pos,
		     struct yamljson_error *err)
{
	int rc;
	for (;;) {
		if (r->streaming) {
			if ((rc = json_list_next(r, obj, pos, err)) != 0)
				return rc;
			continue;
		}
		skip_separators(r);
		if (r->pos == r->len)
			return 0;
		const char *p = r->data + r->pos;
		r->doc++;
		if (*p != '{' && *p != '[')
			return fail(err, r->line,
				    "document %zu: not JSON (the input's first document is JSON: "
				    "every document must be)",
				    r->doc);
		if (*p == '{') {
			if ((rc = json_list_begin(r, err)) < 0)
				return rc;
			if (rc == 1)
				continue;
		}
		json_error_t jerr;
		size_t used;
		json_t *v = parse_value(r, &used, &jerr);
		if (!v) {
			char where[64];
			snprintf(where, sizeof(where), "document %zu", r->doc);
			return json_fail(err, r->line, &jerr, where);
		}
		*obj = v;
		pos->line = r->line;
		pos->item = -1;
		advance(r, r->pos + used);
		return 1;
	}
}

/* The next item of a List read whole: 1, or 0 after its last (the List is then let go). */
static int held_next(struct export_reader *r, json_t **obj, struct export_pos *pos)
{
	/* The previous item goes now, unless the caller kept it. */
	if (r->held_next > 0 && r->held->refcount == 1 &&
	    json_array_set_new(r->held, r->held_next - 1, json_null()) != 0)
		return -ENOMEM;
	if (r->held_next == json_array_size(r->held)) {
		json_decref(r->held);
		r->held = NULL;
		return 0;
	}
	*obj = json_incref(json_array_get(r->held, r->held_next));
	pos->line = r->held_line;
	pos->item = (long)r->held_next++;
	return 1;
}

static int next_object(struct export_reader *r, json_t **obj, struct export_pos *pos,
		       struct yamljson_error *err)
{
	int rc;
	for (;;) {
		r->last_yaml = 0;
		if (r->held) {
			if ((rc = held_next(r, obj, pos)) != 0)
				return rc;
			continue;
		}
		if (r->json) {
			rc = json_next(r, obj, pos, err);
		} else {
			rc = yamljson_reader_next(r->yaml, obj, &pos->line, err);
			pos->item = yamljson_reader_item(r->yaml);
			r->last_yaml = 1;
		}
		if (rc != 1 || pos->item >= 0 || !json_is_object(*obj) || !is_v1_list(*obj))
			return rc;
		/* A List not streamed by its format's reader: its items, one by one. */
		json_t *items = json_object_get(*obj, "items");
		int line = pos->line;
		if (items && !json_is_array(items) && !json_is_null(items)) {
			json_decref(*obj);
			*obj = NULL;
			return fail(err, line, "List: items must be a list");
		}
		if (json_array_size(items) > 0) {
			r->held = json_incref(items);
			r->held_next = 0;
			r->held_line = line;
		}
		json_decref(*obj); /* with the references it held to shared values */
		*obj = NULL;
	}
}

int export_reader_next(struct export_reader *r, json_t **obj, struct export_pos *pos,
		       struct yamljson_error *err)
{
	*obj = NULL;
	pos->line = 0;
	pos->item = -1;
	if (r->done) {
		*err = r->err;
		return r->rc;
	}
	int rc = next_object(r, obj, pos, err);
	if (rc == 1 && pos->item >= 0 && !json_is_object(*obj)) {
		json_decref(*obj);
		*obj = NULL;
		rc = fail(err, pos->line, "items[%ld] is not an object", pos->item);
	}
	if (rc != 1) {
		r->done = 1;
		r->rc = rc;
		if (rc < 0)
			r->err = *err;
		pos->line = rc < 0 ? err->line : 0;
		json_decref(r->held);
		r->held = NULL;
	}
	return rc;
}

int export_reader_new(const char *data, size_t len, struct export_reader **out,
		      struct yamljson_error *err)
{
	int rc;
	*out = NULL;
	err->line = 0;
	err->text[0] = '\0';
	struct export_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->data = data;
	r->len = len;
	r->line = 1;
	skip_separators(r);
	r->json = r->pos < len && (data[r->pos] == '{' || data[r->pos] == '[');
	if (r->json)
		goto done;
	if ((rc = yamljson_reader_new(data, len, &r->yaml, err)) != 0)
		goto fail;
	if ((rc = yamljson_reader_share(r->yaml)) != 0 ||
	    (rc = yamljson_reader_lists(r->yaml)) != 0)
		goto fail;
done:
	*out = r;
	return 0;
fail:
	export_reader_free(r);
	return rc;
}

int export_reader_is_json(const struct export_reader *r)
{
	return r->json;
}

void export_reader_discarded(struct export_reader *r)
{
	if (r->last_yaml)
		yamljson_reader_discarded(r->yaml);
}

size_t export_reader_offset(const struct export_reader *r)
{
	return r->json ? r->pos : yamljson_reader_offset(r->yaml);
}

void export_reader_free(struct export_reader *r)
{
	if (!r)
		return;
	json_decref(r->held);
	json_decref(r->head);
	yamljson_reader_free(r->yaml);
	free(r);
}
