/* SPDX-License-Identifier: Apache-2.0 */
#include "util/yamljson.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Aliases may expand a small document into a huge tree; this caps the number of JSON nodes and
 * the bytes of scalar text, over all documents of one input (an alias re-copies its anchor's
 * strings, so a node count alone lets a few aliases of one long scalar take gigabytes). */
#define MAX_NODES 4000000
#define MAX_SCALAR_BYTES (4 * (size_t)YAMLJSON_MAX_INPUT)
#define MAX_DEPTH 256
/* Without aliases a document has at most as many nodes and scalar bytes as input bytes; the
 * caps also scale with the input (x64), so a few hundred bytes can't expand to hundreds of MB. */
#define EXPANSION 64
#define EXPANSION_FLOOR 4096

struct conv {
	yaml_document_t *doc;
	size_t nodes, max_nodes;
	size_t bytes, max_bytes;
	struct yamljson_error *err;
};

static void set_error(struct yamljson_error *err, int line, const char *text)
{
	if (!err)
		return;
	err->line = line;
	snprintf(err->text, sizeof(err->text), "%s", text);
}

static int is_int(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int is_float(const char *s)
{
	int digits = 0, dot = 0, exp = 0;
	if (*s == '-' || *s == '+')
		s++;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9') {
			digits++;
		} else if (*s == '.' && !dot && !exp) {
			dot = 1;
		} else if ((*s == 'e' || *s == 'E') && digits && !exp) {
			exp = 1;
			if (s[1] == '-' || s[1] == '+')
				s++;
			if (!s[1])
				return 0;
		} else {
			return 0;
		}
	}
	return digits > 0;
}

/* Whether s[0..n) is one of YAML 1.2's null, true or false words: 0 null, 1 true, 2 false,
 * -1 none. By length first: every plain scalar is asked, and most are names or quantities. */
static int plain_word(const char *s, size_t n)
{
	switch (n) {
	case 0:
		return 0;
	case 1:
		return *s == '~' ? 0 : -1;
	case 4:
		if (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4))
			return 0;
		if (!memcmp(s, "true", 4) || !memcmp(s, "True", 4) || !memcmp(s, "TRUE", 4))
			return 1;
		return -1;
	case 5:
		return !memcmp(s, "false", 5) || !memcmp(s, "False", 5) || !memcmp(s, "FALSE", 5) ? 2 :
														       -1;
	default:
		return -1;
	}
}

/* Types a plain scalar s[0..n) (s[n] is NUL): the JSON-compatible subset of the YAML 1.2
 * core schema. ascii: s is known to be printable ASCII (the fast path), so the string needs
 * no UTF-8 check. */
static json_t *plain_scalar_n(const char *s, size_t n, int ascii)
{
	switch (plain_word(s, n)) {
	case 0:
		return json_null();
	case 1:
		return json_true();
	case 2:
		return json_false();
	default:
		break;
	}
	/* A number starts with a digit, a sign or a dot; anything else is a string. */
	if ((*s >= '0' && *s <= '9') || *s == '-' || *s == '+' || *s == '.') {
		if (is_int(s)) {
			errno = 0;
			char *end;
			long long v = strtoll(s, &end, 10);
			if (errno == 0 && *end == '\0')
				return json_integer(v);
			/* out of int64 range: keep the text rather than a wrong number */
			return ascii ? json_stringn_nocheck(s, n) : json_stringn(s, n);
		}
		if (is_float(s)) {
			char *end;
			double v = strtod(s, &end);
			/* JSON has no infinity (json_real refuses it): keep an overflowing float's
			 * text, as for out-of-range integers. */
			if (*end == '\0' && isfinite(v))
				return json_real(v);
		}
	}
	return ascii ? json_stringn_nocheck(s, n) : json_stringn(s, n);
}

static json_t *plain_scalar(const char *s, size_t n)
{
	return plain_scalar_n(s, n, 0);
}

static json_t *convert(struct conv *c, yaml_node_t *node, int depth)
{
	int line = (int)node->start_mark.line + 1;
	if (depth > MAX_DEPTH) {
		set_error(c->err, line, "nesting too deep");
		return NULL;
	}
	if (++c->nodes > c->max_nodes) {
		set_error(c->err, line, "document too large after alias expansion");
		return NULL;
	}
	switch (node->type) {
	case YAML_SCALAR_NODE: {
		const char *s = (const char *)node->data.scalar.value;
		if (strlen(s) != node->data.scalar.length) {
			set_error(c->err, line, "scalar contains a NUL byte");
			return NULL;
		}
		c->bytes += node->data.scalar.length;
		if (c->bytes > c->max_bytes) {
			set_error(c->err, line, "document too large after alias expansion");
			return NULL;
		}
		json_t *v = node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ?
				   plain_scalar(s, node->data.scalar.length) :
				   json_stringn(s, node->data.scalar.length);
		if (!v)
			set_error(c->err, line, "scalar is not valid UTF-8");
		return v;
	}
	case YAML_SEQUENCE_NODE: {
		json_t *arr = json_array();
		if (!arr)
			return NULL;
		for (yaml_node_item_t *it = node->data.sequence.items.start;
		     it < node->data.sequence.items.top; it++) {
			yaml_node_t *child = yaml_document_get_node(c->doc, *it);
			json_t *v = child ? convert(c, child, depth + 1) : NULL;
			if (!v || json_array_append_new(arr, v) != 0) {
				json_decref(arr);
				return NULL;
			}
		}
		return arr;
	}
	case YAML_MAPPING_NODE: {
		json_t *obj = json_object();
		if (!obj)
			return NULL;
		for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
		     p < node->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
			yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
			if (!k || !v || k->type != YAML_SCALAR_NODE) {
				set_error(c->err, line, "mapping keys must be scalars");
				json_decref(obj);
				return NULL;
			}
			const char *key = (const char *)k->data.scalar.value;
			json_t *jv = convert(c, v, depth + 1);
			if (!jv) {
				json_decref(obj);
				return NULL;
			}
			if (json_object_get(obj, key)) {
				/* Kubernetes' strict decoding rejects duplicate keys; so do we. */
				char text[160];
				snprintf(text, sizeof(text), "duplicate key \"%.100s\"", key);
				set_error(c->err, (int)k->start_mark.line + 1, text);
				json_decref(jv);
				json_decref(obj);
				return NULL;
			}
			if (json_object_set_new(obj, key, jv) != 0) {
				set_error(c->err, line, "mapping key is not valid UTF-8");
				json_decref(obj);
				return NULL;
			}
		}
		return obj;
	}
	default:
		set_error(c->err, line, "empty node");
		return NULL;
	}
}

/* ----------------------------------------------------------------------- the fast path */

/*
 * libyaml builds every document as a tree of its own, character by character, before it is
 * converted: 0.3 to 0.6 s for a 17 MB export of 50,000 Workloads, most of what simulating it
 * costs. No maintained C YAML library in Debian is much faster, so the streaming reader
 * first tries this parser, written here for the plain subset cluster exports and manifests
 * are written in, and gives the document to libyaml whenever it meets anything else:
 *   block mappings and sequences indented with spaces ("key:" children deeper, or a "- "
 *   list at the key's own indentation), "- key: value" items;
 *   one-line scalars: plain (typed as plain_scalar types them), or quoted without escapes;
 *   one-line flow collections of those, e.g. {cpu: 500m, memory: 1Gi} or [a, b];
 *   full-line comments and blank lines; documents separated by "---" lines.
 * Everything else (anchors, aliases, tags, block scalars, multi-line scalars or flow
 * collections, escapes, comments after values, tabs, non-ASCII bytes, duplicate keys,
 * "..." and directives, and any error) goes to libyaml, which then decides, with its own
 * messages; its documents and this parser's are the same JSON.
 */

#define FAST_MAX_DEPTH 64
#define FAST_MAX_SCALAR 1024

struct fast_frame {
	json_t *node; /* an object or an array, owned by its parent (the root: by the parser) */
	int indent; /* column of its keys or of its "- " */
};

struct fast {
	const char *p, *end; /* the document's lines */
	struct fast_frame stack[FAST_MAX_DEPTH];
	size_t depth;
	/* A key (or a "- ") whose value is on the following lines: filled in when they come. */
	int pending;
	const char *pending_key;
	size_t pending_key_len;
	int pending_indent;
	json_t *root;
};

/* Character classes, one table lookup each: the fast path looks at every byte of the input
 * several times, and a chain of comparisons per byte was most of its cost. */
enum {
	CC_PLAIN = 1, /* may appear in a plain scalar */
	CC_KEY = 2, /* may appear in a plain key (a '-' not first) */
	CC_BAIL = 4, /* on a content line: the document is libyaml's (see fast_document) */
	CC_CONTROL = 8, /* a control or non-ASCII byte */
};
static const unsigned char char_class[256] = {
	[0 ... 0x1f] = CC_BAIL | CC_CONTROL,
	[0x7f ... 0xff] = CC_BAIL | CC_CONTROL,
	['a' ... 'z'] = CC_PLAIN | CC_KEY,
	['A' ... 'Z'] = CC_PLAIN | CC_KEY,
	['0' ... '9'] = CC_PLAIN | CC_KEY,
	['.'] = CC_PLAIN | CC_KEY,
	['_'] = CC_PLAIN | CC_KEY,
	['/'] = CC_PLAIN | CC_KEY,
	['-'] = CC_PLAIN | CC_KEY,
	['+'] = CC_PLAIN,
	['='] = CC_PLAIN,
	['('] = CC_PLAIN,
	[')'] = CC_PLAIN,
	['$'] = CC_PLAIN,
	['^'] = CC_PLAIN,
	['~'] = CC_PLAIN,
	[' '] = CC_PLAIN,
	[':'] = CC_PLAIN,
	[','] = CC_PLAIN,
	['#'] = CC_BAIL,
	['&'] = CC_BAIL,
	['*'] = CC_BAIL,
	['!'] = CC_BAIL,
	['|'] = CC_BAIL,
	['>'] = CC_BAIL,
	['?'] = CC_BAIL,
	['@'] = CC_BAIL,
	['`'] = CC_BAIL,
	['%'] = CC_BAIL,
	['\\'] = CC_BAIL,
};

/* Whether a byte of [c, end) is of class cls: the classes of eight bytes OR'ed per test, as
 * every byte of the input is looked at this way and a branch per byte was most of it. */
static int any_class(const char *c, const char *end, unsigned char cls)
{
	const unsigned char *u = (const unsigned char *)c, *e = (const unsigned char *)end;
	unsigned acc = 0;
	for (; e - u >= 8; u += 8) {
		acc = char_class[u[0]] | char_class[u[1]] | char_class[u[2]] | char_class[u[3]] |
		      char_class[u[4]] | char_class[u[5]] | char_class[u[6]] | char_class[u[7]];
		if (acc & cls)
			return 1;
	}
	for (; u < e; u++)
		acc |= char_class[*u];
	return (acc & cls) != 0;
}

static int plain_char(char c)
{
	return char_class[(unsigned char)c] & CC_PLAIN;
}

/* A plain scalar's first character, where YAML indicators can't start one. */
static int plain_start(const char *s, const char *end)
{
	char c = *s;
	if (c == '-')
		return s + 1 < end && ((s[1] >= '0' && s[1] <= '9') || s[1] == '.');
	return plain_char(c) && c != ' ' && c != ':' && c != ',';
}

static json_t *fast_plain(const char *s, size_t n)
{
	char buf[FAST_MAX_SCALAR + 1];
	if (n > FAST_MAX_SCALAR)
		return NULL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return plain_scalar_n(buf, n, 1);
}

/* A quoted scalar without escapes at *s (in [*s, end)): a string, *s past the closing quote.
 * NULL to hand the document to libyaml. */
static json_t *fast_quoted(const char **s, const char *end)
{
	char q = **s;
	const char *from = *s + 1, *at = from;
	while (at < end && *at != q) {
		if (*at == '\\' || (unsigned char)*at < 0x20 || (unsigned char)*at >= 0x7f)
			return NULL;
		at++;
	}
	if (at == end || (q == '\'' && at + 1 < end && at[1] == '\''))
		return NULL;
	*s = at + 1;
	return json_stringn_nocheck(from, (size_t)(at - from));
}

static const char *skip_spaces(const char *s, const char *end)
{
	while (s < end && *s == ' ')
		s++;
	return s;
}

/* A key at *s: plain (letters, digits, . _ / -) or quoted; *s past it; NULL if not one.
 * YAML caps a simple key at 1024 characters: longer ones are libyaml's to refuse. */
#define FAST_MAX_KEY 1000
static const char *fast_key_any(const char **s, const char *end, size_t *len);

static const char *fast_key(const char **s, const char *end, size_t *len)
{
	const char *key = fast_key_any(s, end, len);
	return key && *len <= FAST_MAX_KEY ? key : NULL;
}

static const char *fast_key_any(const char **s, const char *end, size_t *len)
{
	const char *k = *s;
	if (k < end && *k == '"') {
		const char *at = k + 1;
		while (at < end && *at != '"') {
			if (*at == '\\' || (unsigned char)*at < 0x20 || (unsigned char)*at >= 0x7f)
				return NULL;
			at++;
		}
		if (at == end)
			return NULL;
		*len = (size_t)(at - k - 1);
		*s = at + 1;
		return k + 1;
	}
	const char *at = k;
	if (at < end && *at == '-')
		return NULL; /* a plain key doesn't start with '-' */
	while (at < end && (char_class[(unsigned char)*at] & CC_KEY))
		at++;
	if (at == k)
		return NULL;
	*len = (size_t)(at - k);
	*s = at;
	return k;
}

static int fast_set(json_t *obj, const char *key, size_t len, json_t *v)
{
	/* A duplicate key is an error libyaml's path reports, with its line. jansson replaces
	 * the value of a key it has, so a size that didn't grow is a duplicate: one hash lookup
	 * per key, not two (looking first was a tenth of reading a large export). The document
	 * is dropped on the way to libyaml, replaced value and all. */
	size_t before = json_object_size(obj);
	if (!v)
		return -1;
	if (json_object_setn_new_nocheck(obj, key, len, v) != 0 || json_object_size(obj) == before)
		return -1;
	return 0;
}

static json_t *fast_flow(const char **s, const char *end, int depth);

/* A value inside a flow collection: up to , ] or }. */
static json_t *fast_flow_value(const char **s, const char *end, int depth)
{
	const char *v = *s;
	if (v == end)
		return NULL;
	if (*v == '{' || *v == '[')
		return fast_flow(s, end, depth + 1);
	if (*v == '"' || *v == '\'')
		return fast_quoted(s, end);
	if (!plain_start(v, end))
		return NULL;
	const char *at = v;
	while (at < end && *at != ',' && *at != ']' && *at != '}') {
		if (!plain_char(*at) || *at == ':')
			return NULL;
		at++;
	}
	const char *last = at;
	while (last > v && last[-1] == ' ')
		last--;
	*s = at;
	return fast_plain(v, (size_t)(last - v));
}

/* A one-line flow collection at *s; *s past its closing bracket. */
static json_t *fast_flow(const char **s, const char *end, int depth)
{
	int map = **s == '{';
	char close = map ? '}' : ']';
	json_t *c = map ? json_object() : json_array();
	const char *at = skip_spaces(*s + 1, end);
	if (!c || depth > FAST_MAX_DEPTH)
		goto bail;
	if (at < end && *at == close) {
		*s = at + 1;
		return c;
	}
	for (;;) {
		json_t *v;
		if (map) {
			size_t klen;
			const char *key = fast_key(&at, end, &klen);
			/* "a:1" is not the same in every YAML version: left to libyaml. */
			if (!key || at + 1 >= end || *at != ':' || at[1] != ' ')
				goto bail;
			at = skip_spaces(at + 1, end);
			if (at < end && (*at == ',' || *at == '}'))
				goto bail; /* an empty value: left to libyaml */
			v = fast_flow_value(&at, end, depth);
			if (fast_set(c, key, klen, v) != 0)
				goto bail;
		} else {
			v = fast_flow_value(&at, end, depth);
			if (!v || json_array_append_new(c, v) != 0)
				goto bail;
		}
		at = skip_spaces(at, end);
		if (at < end && *at == close) {
			*s = at + 1;
			return c;
		}
		if (at == end || *at != ',')
			goto bail;
		at = skip_spaces(at + 1, end);
		if (at < end && *at == close)
			goto bail; /* a trailing comma */
	}
bail:
	json_decref(c);
	return NULL;
}

/* The value after "key: " or "- ", to the end of the line (trailing spaces trimmed). */
static json_t *fast_value(const char *v, const char *end)
{
	json_t *out;
	const char *at = v;
	if (*v == '{' || *v == '[')
		out = fast_flow(&at, end, 1);
	else if (*v == '"' || *v == '\'')
		out = fast_quoted(&at, end);
	else if (!plain_start(v, end))
		return NULL;
	else {
		for (at = v; at < end; at++)
			if (!plain_char(*at) || (*at == ':' && (at + 1 == end || at[1] == ' ')))
				return NULL;
		return fast_plain(v, (size_t)(end - v));
	}
	if (out && at != end) { /* something after the closing quote or bracket */
		json_decref(out);
		out = NULL;
	}
	return out;
}

static int fast_push(struct fast *f, json_t *node, int indent)
{
	if (f->depth == FAST_MAX_DEPTH)
		return -1;
	f->stack[f->depth++] = (struct fast_frame){ node, indent };
	return 0;
}

/* Stores v where the pending key or "- " wanted it. */
static int fast_fill(struct fast *f, json_t *v)
{
	json_t *parent = f->stack[f->depth - 1].node;
	f->pending = 0;
	if (json_is_object(parent))
		return fast_set(parent, f->pending_key, f->pending_key_len, v);
	if (!v || json_array_append_new(parent, v) != 0) {
		json_decref(v);
		return -1;
	}
	return 0;
}

/* "key: value", "key:" (pending) at text in the mapping on top of the stack. */
static int fast_entry(struct fast *f, const char *text, const char *end, int indent)
{
	size_t klen;
	const char *at = text;
	const char *key = fast_key(&at, end, &klen);
	if (!key || at == end || *at != ':' || (at + 1 < end && at[1] != ' '))
		return -1;
	at = skip_spaces(at + 1, end);
	if (at == end) {
		f->pending = 1;
		f->pending_key = key;
		f->pending_key_len = klen;
		f->pending_indent = indent;
		return 0;
	}
	return fast_set(f->stack[f->depth - 1].node, key, klen, fast_value(at, end));
}

/* One content line: indent spaces, then text up to end (no newline, trailing spaces cut). */
static int fast_line(struct fast *f, int indent, const char *text, const char *end)
{
	int dash = *text == '-' && (text + 1 == end || text[1] == ' ');
	if (!f->root) {
		f->root = dash ? json_array() : json_object();
		if (!f->root || indent != 0 || fast_push(f, f->root, 0) != 0)
			return -1;
	} else if (f->pending) {
		/* The pending value's lines: deeper, or a "- " list at a key's own column. */
		if (indent > f->pending_indent ||
		    (dash && indent == f->pending_indent && json_is_object(f->stack[f->depth - 1].node))) {
			json_t *child = dash ? json_array() : json_object();
			if (!child || fast_fill(f, json_incref(child)) != 0 ||
			    fast_push(f, child, indent) != 0) {
				json_decref(child);
				return -1;
			}
			json_decref(child); /* its parent holds it */
		} else if (fast_fill(f, json_null()) != 0) {
			return -1;
		}
	}
	/* Close what this line is outside of; a list at its key's column ends at the next key. */
	while (f->depth > 1 && (f->stack[f->depth - 1].indent > indent ||
				(!dash && f->stack[f->depth - 1].indent == indent &&
				 json_is_array(f->stack[f->depth - 1].node))))
		f->depth--;
	struct fast_frame *top = &f->stack[f->depth - 1];
	if (top->indent != indent || dash != json_is_array(top->node))
		return -1;
	if (!dash)
		return fast_entry(f, text, end, indent);
	const char *v = skip_spaces(text + 1, end);
	if (v == end) {
		f->pending = 1;
		f->pending_indent = indent;
		return 0;
	}
	if (*v == '-' && (v + 1 == end || v[1] == ' '))
		return -1; /* "- - x" */
	/* "- key: value": a mapping whose keys are at the column of its first key. */
	size_t klen;
	const char *at = v;
	if (fast_key(&at, end, &klen) && at < end && *at == ':' && (at + 1 == end || at[1] == ' ')) {
		json_t *obj = json_object();
		if (!obj || json_array_append_new(top->node, obj) != 0 ||
		    fast_push(f, obj, indent + (int)(v - text)) != 0)
			return -1;
		return fast_entry(f, v, end, indent + (int)(v - text));
	}
	json_t *val = fast_value(v, end);
	if (!val || json_array_append_new(top->node, val) != 0)
		return -1;
	return 0;
}

/*
 * Parses the document in [p, end) (whole lines, no "---" line), starting at 1-based line
 * first. Returns 1 with *doc (NULL for a document of comments only) and *line, or 0 when the
 * document is not in the subset (or memory ran out: libyaml then fails the same way).
 */
static int fast_document(const char *p, const char *end, int first, json_t **doc, int *line)
{
	struct fast f = { .p = p, .end = end };
	int n = first;
	*doc = NULL;
	*line = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *stop = eol ? eol : end, *text = p;
		while (text < stop && *text == ' ')
			text++;
		const char *last = stop;
		while (last > text && last[-1] == ' ')
			last--;
		if (text < last && *text != '#') {
			if (any_class(text, last, CC_BAIL))
				goto bail;
			if (!f.root)
				*line = n;
			if (fast_line(&f, (int)(text - p), text, last) != 0)
				goto bail;
		} else {
			/* Blank or a comment: no tab or control character hides in it. */
			if (any_class(p, stop, CC_CONTROL))
				goto bail;
		}
		p = eol ? eol + 1 : end;
		n++;
	}
	if (f.pending && fast_fill(&f, json_null()) != 0)
		goto bail;
	*doc = f.root;
	return 1;
bail:
	json_decref(f.root);
	*line = 0;
	return 0;
}

/* ---------------------------------------------------------------------------- the reader */

struct yamljson_reader {
	yaml_parser_t parser;
	int parser_live; /* parser initialized (always for whole; on demand when streaming) */
	int done; /* end of stream or an error: next returns 0 or the error again */
	int rc;
	/* 1: one alias budget for the whole input (yamljson_load: every document lands in one
	 * array), libyaml only; 0: a budget per document (the streaming reader frees each before
	 * the next), and the fast path first. */
	int whole;
	struct conv c;
	const char *data;
	size_t len;
	/* Streaming: where the fast path is, the first byte of a line and its 1-based number. */
	size_t pos;
	int line;
	/* libyaml reads the rest of the stream (after "..." or a directive: its state between
	 * documents then matters); its lines are offset by base. */
	int rest;
	int base;
	/* An error libyaml met right after the document just returned: the next call's. */
	int after, after_line;
	char after_text[200];
};

/* What the fast path's cutting into lines and documents doesn't follow: line breaks libyaml
 * knows besides '\n' and "\r\n" (a lone '\r', NEL, LS, PS), byte order marks (libyaml
 * skips one at the start of any line) and UTF-16 (a UTF-16 mark starts the input). */
static int needs_libyaml(const char *data, size_t len)
{
	const char *end = data + len, *p;
	if (len >= 2 && (((unsigned char)data[0] == 0xFE && (unsigned char)data[1] == 0xFF) ||
			 ((unsigned char)data[0] == 0xFF && (unsigned char)data[1] == 0xFE)))
		return 1;
	for (p = data; (p = memchr(p, 0xEF, (size_t)(end - p))) != NULL; p++)
		if (p + 2 < end && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
			return 1;
	for (p = data; (p = memchr(p, '\r', (size_t)(end - p))) != NULL; p++)
		if (p + 1 == end || p[1] != '\n')
			return 1;
	for (p = data; (p = memchr(p, 0xC2, (size_t)(end - p))) != NULL; p++)
		if (p + 1 < end && (unsigned char)p[1] == 0x85)
			return 1;
	for (p = data; (p = memchr(p, 0xE2, (size_t)(end - p))) != NULL; p++)
		if (p + 2 < end && (unsigned char)p[1] == 0x80 &&
		    ((unsigned char)p[2] == 0xA8 || (unsigned char)p[2] == 0xA9))
			return 1;
	return 0;
}

static int yaml_from(struct yamljson_reader *r, size_t off, int line);

static int reader_open(const char *data, size_t len, int whole, struct yamljson_reader **out,
		       struct yamljson_error *err)
{
	*out = NULL;
	if (memchr(data, '\0', len)) {
		set_error(err, 0, "input contains a NUL byte");
		return -EINVAL;
	}
	struct yamljson_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->data = data;
	r->len = len;
	r->line = 1;
	r->whole = whole;
	if (!whole && needs_libyaml(data, len)) {
		r->rest = 1;
		if (yaml_from(r, 0, 1) != 0) {
			free(r);
			return -ENOMEM;
		}
	}
	if (whole) {
		if (!yaml_parser_initialize(&r->parser)) {
			free(r);
			return -ENOMEM;
		}
		r->parser_live = 1;
		yaml_parser_set_input_string(&r->parser, (const unsigned char *)data, len);
		size_t scaled = EXPANSION_FLOOR + EXPANSION * len;
		r->c.max_nodes = scaled < MAX_NODES ? scaled : MAX_NODES;
		r->c.max_bytes = scaled < MAX_SCALAR_BYTES ? scaled : MAX_SCALAR_BYTES;
	}
	*out = r;
	return 0;
}

int yamljson_reader_new(const char *data, size_t len, struct yamljson_reader **out,
			struct yamljson_error *err)
{
	set_error(err, 0, "");
	return reader_open(data, len, 0, out, err);
}

/* A fresh libyaml parser from byte off, at 1-based line line. Fresh is the same as between
 * documents when off starts the stream or a "---" line, which is where this is called. */
static int yaml_from(struct yamljson_reader *r, size_t off, int line)
{
	if (r->parser_live)
		yaml_parser_delete(&r->parser);
	r->parser_live = 0;
	if (!yaml_parser_initialize(&r->parser))
		return -ENOMEM;
	r->parser_live = 1;
	yaml_parser_set_input_string(&r->parser, (const unsigned char *)r->data + off, r->len - off);
	r->base = line - 1;
	return 0;
}

/*
 * The next document from libyaml: 1 with *doc (NULL for an empty one) and *line (of its
 * root, relative lines offset by base) and *root_rel (the root's 0-based line in libyaml's
 * input); 0 at the end of the stream; -EINVAL with err.
 */
static int yaml_next(struct yamljson_reader *r, json_t **doc, int *line, size_t *root_rel,
		     struct yamljson_error *err)
{
	yaml_document_t ydoc;
	*doc = NULL;
	if (!yaml_parser_load(&r->parser, &ydoc)) {
		char text[200];
		snprintf(text, sizeof(text), "%s%s%s",
			 r->parser.problem ? r->parser.problem : "malformed YAML",
			 r->parser.context ? " " : "", r->parser.context ? r->parser.context : "");
		set_error(err, (int)r->parser.problem_mark.line + 1 + r->base, text);
		return -EINVAL;
	}
	yaml_node_t *root = yaml_document_get_root_node(&ydoc);
	if (!root) { /* end of stream */
		yaml_document_delete(&ydoc);
		return 0;
	}
	if (!r->whole) {
		/* Without aliases a document has at most as many nodes and scalar bytes as
		 * characters; the caps scale with its own size, as the whole-input ones do. */
		size_t span = ydoc.end_mark.index - ydoc.start_mark.index;
		size_t scaled = span > (SIZE_MAX - EXPANSION_FLOOR) / EXPANSION ?
					SIZE_MAX :
					EXPANSION_FLOOR + EXPANSION * span;
		r->c.nodes = r->c.bytes = 0;
		r->c.max_nodes = scaled < MAX_NODES ? scaled : MAX_NODES;
		r->c.max_bytes = scaled < MAX_SCALAR_BYTES ? scaled : MAX_SCALAR_BYTES;
	}
	r->c.doc = &ydoc;
	r->c.err = err;
	*root_rel = root->start_mark.line;
	*line = (int)root->start_mark.line + 1 + r->base;
	json_t *v = convert(&r->c, root, 0);
	yaml_document_delete(&ydoc);
	r->c.doc = NULL;
	if (!v) {
		/* convert's lines are libyaml's: offset them too. */
		if (err && err->line > 0)
			err->line += r->base;
		return -EINVAL;
	}
	*doc = v;
	return 1;
}

/* Whether the line at q (in [q, end)) is the document marker m ("---" or "..."). */
static int is_marker(const char *q, const char *end, const char *m)
{
	return end - q >= 3 && !memcmp(q, m, 3) &&
	       (end - q == 3 || q[3] == ' ' || q[3] == '\t' || q[3] == '\n' || q[3] == '\r');
}

/*
 * Streaming: the next document by the fast path, or by libyaml when the fast path can't.
 * Documents are cut at "---" lines (a "---" at column 0 ends a document wherever it is, in
 * YAML as here); the first may start without one.
 */
static int stream_next(struct yamljson_reader *r, json_t **doc, int *line,
		       struct yamljson_error *err)
{
	const char *end = r->data + r->len;
	size_t rel;
	int rc;
	for (;;) {
		if (r->rest) {
			while ((rc = yaml_next(r, doc, line, &rel, err)) == 1 && json_is_null(*doc))
				json_decref(*doc);
			return rc;
		}
		if (r->pos >= r->len)
			return 0;
		const char *start = r->data + r->pos, *p = start;
		int start_line = r->line, n = r->line, fast = 1;
		if (is_marker(p, end, "---")) {
			const char *eol = memchr(p, '\n', (size_t)(end - p));
			for (const char *c = p + 3; c < (eol ? eol : end); c++)
				if (*c != ' ')
					fast = 0; /* "--- content": libyaml's */
			p = eol ? eol + 1 : end;
			n++;
		}
		/* The document's lines, up to the next "---"; "..." or a directive: libyaml. */
		const char *q = p;
		int lines = n;
		while (q < end && !is_marker(q, end, "---")) {
			if (is_marker(q, end, "...") || *q == '%') {
				r->rest = 1;
				if ((rc = yaml_from(r, r->pos, start_line)) != 0)
					return rc;
				break;
			}
			const char *eol = memchr(q, '\n', (size_t)(end - q));
			q = eol ? eol + 1 : end;
			lines++;
		}
		if (r->rest)
			continue;
		if (fast && fast_document(p, q, n, doc, line)) {
			r->pos = (size_t)(q - r->data);
			r->line = lines;
			if (*doc)
				return 1;
			continue;
		}
		/* libyaml, for this document only. */
		if ((rc = yaml_from(r, r->pos, start_line)) != 0)
			return rc;
		rc = yaml_next(r, doc, line, &rel, err);
		if (rc < 0)
			return rc;
		r->pos = (size_t)(q - r->data);
		r->line = lines;
		/* A document that starts past these lines is the next one's: it comes again. */
		if (rc == 1 && rel >= (size_t)(lines - start_line)) {
			json_decref(*doc);
			*doc = NULL;
			continue;
		}
		/* What follows the document must be the next "---" or the end (else, in the whole
		 * stream, libyaml fails right after it: "did not find expected <document start>"). */
		if (rc == 1) {
			yaml_event_t ev;
			if (!yaml_parser_parse(&r->parser, &ev)) {
				char text[200];
				snprintf(text, sizeof(text), "%s%s%s",
					 r->parser.problem ? r->parser.problem : "malformed YAML",
					 r->parser.context ? " " : "",
					 r->parser.context ? r->parser.context : "");
				r->after_line = (int)r->parser.problem_mark.line + 1 + r->base;
				snprintf(r->after_text, sizeof(r->after_text), "%s", text);
				r->after = 1;
			} else {
				yaml_event_delete(&ev);
			}
			if (json_is_null(*doc)) {
				json_decref(*doc);
				*doc = NULL;
				if (r->after) {
					set_error(err, r->after_line, r->after_text);
					return -EINVAL;
				}
				continue;
			}
			return 1;
		}
	}
}

int yamljson_reader_next(struct yamljson_reader *r, json_t **doc, int *line,
			 struct yamljson_error *err)
{
	*doc = NULL;
	*line = 0;
	if (r->done)
		return r->rc;
	int rc;
	if (r->whole) {
		size_t rel;
		while ((rc = yaml_next(r, doc, line, &rel, err)) == 1 && json_is_null(*doc))
			json_decref(*doc); /* `---` followed by nothing: skipped, as kubectl does */
	} else if (r->after) {
		set_error(err, r->after_line, r->after_text);
		rc = -EINVAL;
	} else {
		rc = stream_next(r, doc, line, err);
	}
	if (rc != 1) {
		r->done = 1;
		r->rc = rc;
		*line = 0;
	}
	return rc;
}

size_t yamljson_reader_offset(const struct yamljson_reader *r)
{
	/* libyaml holds its own place: from where it started (whole: the start). */
	return r->whole ? 0 : r->pos;
}

void yamljson_reader_free(struct yamljson_reader *r)
{
	if (!r)
		return;
	if (r->parser_live)
		yaml_parser_delete(&r->parser);
	free(r);
}

/* Loads every document; when lines is non-NULL also collects each kept document's first line. */
static int load(const char *data, size_t len, json_t **docs, int **lines, struct yamljson_error *err)
{
	struct yamljson_reader *r;
	json_t *out, *v;
	int rc, line;
	int *at = NULL;
	size_t n_at = 0, cap_at = 0;

	*docs = NULL;
	if (lines)
		*lines = NULL;
	set_error(err, 0, "");
	if (len > YAMLJSON_MAX_INPUT) {
		set_error(err, 0, "input larger than 16 MiB");
		return -EINVAL;
	}
	if ((rc = reader_open(data, len, 1, &r, err)) != 0)
		return rc;
	if (!(out = json_array())) {
		yamljson_reader_free(r);
		return -ENOMEM;
	}
	while ((rc = yamljson_reader_next(r, &v, &line, err)) == 1) {
		if (lines && n_at == cap_at) {
			size_t cap = cap_at ? cap_at * 2 : 16;
			int *p = realloc(at, cap * sizeof(*at));
			if (!p) {
				json_decref(v);
				rc = -ENOMEM;
				break;
			}
			at = p;
			cap_at = cap;
		}
		if (json_array_append_new(out, v) != 0) {
			rc = -ENOMEM;
			break;
		}
		if (lines)
			at[n_at++] = line;
	}
	yamljson_reader_free(r);
	if (rc != 0) {
		free(at);
		json_decref(out);
		return rc;
	}
	*docs = out;
	if (lines) {
		/* An input with no documents still gets an array the caller can free. */
		*lines = at ? at : calloc(1, sizeof(int));
		if (!*lines) {
			json_decref(out);
			*docs = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

int yamljson_load(const char *data, size_t len, json_t **docs, struct yamljson_error *err)
{
	return load(data, len, docs, NULL, err);
}

int yamljson_load_lines(const char *data, size_t len, json_t **docs, int **lines,
			struct yamljson_error *err)
{
	return load(data, len, docs, lines, err);
}

int yamljson_load_file(const char *path, json_t **docs, struct yamljson_error *err)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;

	*docs = NULL;
	if (!f) {
		rc = -errno;
		set_error(err, 0, strerror(errno));
		return rc;
	}
	for (;;) {
		if (len == cap) {
			if (cap >= YAMLJSON_MAX_INPUT + 1) {
				set_error(err, 0, "input larger than 16 MiB");
				rc = -EINVAL;
				goto out;
			}
			cap = cap ? cap * 2 : 8192;
			char *p = realloc(data, cap);
			if (!p) {
				rc = -ENOMEM;
				goto out;
			}
			data = p;
		}
		size_t n = fread(data + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		rc = -EIO;
		set_error(err, 0, "read error");
		goto out;
	}
	rc = yamljson_load(data ? data : "", len, docs, err);
out:
	free(data);
	fclose(f);
	return rc;
}
