/* SPDX-License-Identifier: Apache-2.0 */
#include "util/yamljson.h"

#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/grow.h"
#include "core/num.h"
#include "util/json_arena.h"

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

/* s[0..n) as one of YAML 1.2's null, true or false words (jansson's shared values), or NULL
 * if it is none. By length first: every plain scalar is asked, and most are names or
 * quantities. */
static json_t *plain_word(const char *s, size_t n)
{
	switch (n) {
	case 0:
		return json_null();
	case 1:
		return *s == '~' ? json_null() : NULL;
	case 4:
		if (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4))
			return json_null();
		if (!memcmp(s, "true", 4) || !memcmp(s, "True", 4) || !memcmp(s, "TRUE", 4))
			return json_true();
		return NULL;
	case 5:
		if (!memcmp(s, "false", 5) || !memcmp(s, "False", 5) || !memcmp(s, "FALSE", 5))
			return json_false();
		return NULL;
	default:
		return NULL;
	}
}

/* Types a plain scalar s[0..n) (s[n] is NUL): the JSON-compatible subset of the YAML 1.2
 * core schema. ascii: s is known to be printable ASCII (the fast path), so the string needs
 * no UTF-8 check. */
static json_t *plain_scalar_n(const char *s, size_t n, int ascii)
{
	json_t *word = plain_word(s, n);
	if (word)
		return word;
	/* A number starts with a digit, a sign or a dot; anything else is a string. The core
	 * schema's int and float are core/num's grammars. Out of range (beyond int64, or a float
	 * that would be infinite, which JSON has not): the text rather than a wrong number. */
	if ((*s >= '0' && *s <= '9') || *s == '-' || *s == '+' || *s == '.') {
		int64_t i;
		double d;
		int rc = num_parse_i64(s, INT64_MIN, INT64_MAX, &i);
		if (rc == 0)
			return json_integer(i);
		if (rc == -EINVAL && num_parse_double(s, -DBL_MAX, DBL_MAX, &d) == 0)
			return json_real(d);
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

/*
 * How it reads: once, left to right. Every line it parses ends in '\n' (the input's last
 * line, if it has none, is parsed from a copy that has one), so the scanners need no end
 * pointer: each stops at a byte outside the class it accepts, and '\n' is in none of them.
 * Each byte of a content line is either structure the parser asks for by name (':', ',',
 * brackets, quotes, spaces) or taken by a scanner that refuses the bytes of CC_BAIL, so no
 * separate pass over the line is needed to find them; nor one to find where it ends.
 */

#define FAST_MAX_DEPTH 64
#define FAST_MAX_SCALAR 1024
/* The input's last line without a '\n' is copied to get one; a longer one goes to libyaml. */
#define FAST_MAX_LAST_LINE 4096

struct fast_frame {
	json_t *node; /* an object or an array, owned by its parent (the root: by the parser) */
	int indent; /* column of its keys or of its "- " */
	size_t keys; /* an object's keys set so far: more than it has means a duplicate */
};

struct fast {
	struct fast_frame stack[FAST_MAX_DEPTH];
	size_t depth;
	/* A key (or a "- ") whose value is on the following lines: filled in when they come. */
	int pending;
	const char *pending_key;
	size_t pending_key_len;
	int pending_indent;
	json_t *root;
	struct share *share; /* NULL: every value is parsed (see yamljson_reader_share) */
};

/* Character classes, one table lookup each: every byte of the input is looked at through
 * them, and a chain of comparisons per byte was most of the fast path's cost. */
enum {
	CC_PLAIN = 1, /* may appear in a plain scalar */
	CC_KEY = 2, /* may appear in a plain key (a '-' not first) */
	CC_BAIL = 4, /* on a content line: the document is libyaml's (see the fast path) */
	CC_CONTROL = 8, /* a control or non-ASCII byte, '\n' included */
	CC_RUN = 16, /* CC_PLAIN but ':', which a block plain scalar looks at twice */
	CC_FLOW = 32, /* CC_PLAIN but ':' and ',', which end a plain scalar in a flow collection */
	CC_NUMBER = 64, /* may start a number: a digit, sign or dot */
	CC_START = 128, /* may start a plain scalar (a '-' only before a digit or dot) */
};
#define CC_WORD (CC_PLAIN | CC_KEY | CC_RUN | CC_FLOW | CC_START)
static const unsigned char char_class[256] = {
	[0 ... 0x1f] = CC_BAIL | CC_CONTROL,
	[0x7f ... 0xff] = CC_BAIL | CC_CONTROL,
	['a' ... 'z'] = CC_WORD,
	['A' ... 'Z'] = CC_WORD,
	['0' ... '9'] = CC_WORD | CC_NUMBER,
	['.'] = CC_WORD | CC_NUMBER,
	['_'] = CC_WORD,
	['/'] = CC_WORD,
	['-'] = CC_PLAIN | CC_KEY | CC_RUN | CC_FLOW | CC_NUMBER,
	['+'] = CC_PLAIN | CC_RUN | CC_FLOW | CC_START | CC_NUMBER,
	['='] = CC_PLAIN | CC_RUN | CC_FLOW | CC_START,
	['('] = CC_PLAIN | CC_RUN | CC_FLOW | CC_START,
	[')'] = CC_PLAIN | CC_RUN | CC_FLOW | CC_START,
	['$'] = CC_PLAIN | CC_RUN | CC_FLOW | CC_START,
	['^'] = CC_PLAIN | CC_RUN | CC_FLOW | CC_START,
	['~'] = CC_PLAIN | CC_RUN | CC_FLOW | CC_START,
	[' '] = CC_PLAIN | CC_RUN | CC_FLOW,
	[':'] = CC_PLAIN,
	[','] = CC_PLAIN | CC_RUN,
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

static int char_is(char c, unsigned char cls)
{
	return char_class[(unsigned char)c] & cls;
}

/* The first byte from s not of class cls (the line's '\n' is in none the callers ask for).
 * Four bytes a round: keys and scalars are most of the input, and a loop's own branch per
 * byte was a fifth of scanning them. */
static inline const char *scan_class(const char *s, unsigned char cls)
{
	for (;; s += 4) {
		if (!char_is(s[0], cls))
			return s;
		if (!char_is(s[1], cls))
			return s + 1;
		if (!char_is(s[2], cls))
			return s + 2;
		if (!char_is(s[3], cls))
			return s + 3;
	}
}

static const char *skip_spaces(const char *s)
{
	while (*s == ' ')
		s++;
	return s;
}

/* Whether s, at the start of a line, is the document marker m ("---" or "..."). */
static int line_is_marker(const char *s, char m)
{
	return s[0] == m && s[1] == m && s[2] == m &&
	       (s[3] == ' ' || s[3] == '\t' || s[3] == '\n' || s[3] == '\r');
}

/* A plain scalar's first character, where YAML indicators can't start one. */
static int plain_start(const char *s)
{
	if (*s == '-')
		return (s[1] >= '0' && s[1] <= '9') || s[1] == '.';
	return char_is(*s, CC_START);
}

/* The rarer plain scalars (floats, long integers): typed by plain_scalar_n from a copy that
 * ends in the NUL core/num needs. */
static json_t *fast_plain_copy(const char *s, size_t n)
{
	char buf[FAST_MAX_SCALAR + 1];
	memcpy(buf, s, n);
	buf[n] = '\0';
	return plain_scalar_n(buf, n, 1);
}

/*
 * Types the plain scalar s[0..n) as plain_scalar_n does, without copying it for the common
 * cases: a scalar that can't start a number is a word (null, true, false) or a string, and
 * an integer of up to 18 digits can't overflow, so it needs no check. Inline, as are
 * fast_key, fast_value and fast_entry_value: each runs for most keys or scalars, and their
 * calls were a few percent of reading an export.
 */
static inline json_t *fast_plain(const char *s, size_t n)
{
	if (n > FAST_MAX_SCALAR)
		return NULL;
	if (!char_is(*s, CC_NUMBER)) {
		/* Words have 1, 4 or 5 characters: others needn't call plain_word. */
		json_t *word = n == 1 || n == 4 || n == 5 ? plain_word(s, n) : NULL;
		return word ? word : json_stringn_nocheck(s, n);
	}
	size_t i = *s == '-' || *s == '+';
	if (i < n && n - i <= 18) {
		long long v = 0;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			v = v * 10 + (s[i] - '0');
		if (i == n)
			return json_integer(*s == '-' ? -v : v);
		/* Past a number's first digits only '.', 'e' or 'E' may still make a float: a
		 * quantity (500m, 1Gi) is a string. */
		if (s[i] != '.' && s[i] != 'e' && s[i] != 'E')
			return json_stringn_nocheck(s, n);
	}
	return fast_plain_copy(s, n);
}

/* A quoted scalar without escapes at *s: a string, *s past the closing quote. NULL to hand
 * the document to libyaml (an escape, the line's end, a byte of CC_BAIL). */
static json_t *fast_quoted(const char **s)
{
	char q = **s;
	const char *from = *s + 1, *at = from;
	for (; *at != q; at++)
		if (char_is(*at, CC_BAIL))
			return NULL;
	if (q == '\'' && at[1] == '\'')
		return NULL; /* '' is an escaped quote */
	*s = at + 1;
	return json_stringn_nocheck(from, (size_t)(at - from));
}

/* A key at *s: plain (letters, digits, . _ / -) or double-quoted; *s past it; NULL if not
 * one. YAML caps a simple key at 1024 characters: longer ones are libyaml's to refuse. */
#define FAST_MAX_KEY 1000
static const char *fast_quoted_key(const char **s, size_t *len)
{
	const char *k = *s, *at;
	for (at = k + 1; *at != '"'; at++)
		if (char_is(*at, CC_BAIL))
			return NULL;
	*len = (size_t)(at - k - 1);
	*s = at + 1;
	return *len <= FAST_MAX_KEY ? k + 1 : NULL;
}

/* Inline: called for every key, and short, the call was half its cost. */
static inline const char *fast_key(const char **s, size_t *len)
{
	const char *k = *s, *at;
	if (*k == '"')
		return fast_quoted_key(s, len);
	if (*k == '-')
		return NULL; /* a plain key doesn't start with '-' */
	at = scan_class(k, CC_KEY);
	*len = (size_t)(at - k);
	*s = at;
	return at != k && *len <= FAST_MAX_KEY ? k : NULL;
}

/*
 * Sets obj[key] = v (v NULL: fails) and counts the key in *keys. A duplicate key is an error
 * libyaml's path reports, with its line; jansson replaces the value of a key it has, so an
 * object with fewer keys than were set had one (fast_unique): asked once per object, when
 * it is complete, not per key (looking each key up first was a tenth of reading a large
 * export). The document then goes to libyaml, replaced values and all.
 */
static int fast_set(json_t *obj, size_t *keys, const char *key, size_t len, json_t *v)
{
	if (!v)
		return -1;
	++*keys;
	return json_object_setn_new_nocheck(obj, key, len, v);
}

/* Whether a complete object (or any array) got every key set in it: none twice. */
static int fast_unique(const json_t *node, size_t keys)
{
	return !json_is_object(node) || json_object_size(node) == keys;
}

static json_t *fast_flow(const char **s, int depth);

/* A value inside a flow collection, *s past it: up to , ] or }. */
static json_t *fast_flow_value(const char **s, int depth)
{
	const char *v = *s, *at;
	if (*v == '{' || *v == '[')
		return fast_flow(s, depth + 1);
	if (*v == '"' || *v == '\'')
		return fast_quoted(s);
	if (!plain_start(v))
		return NULL;
	at = scan_class(v, CC_FLOW);
	if (*at != ',' && *at != ']' && *at != '}')
		return NULL; /* a ':', the line's end or a byte no plain scalar has */
	*s = at;
	while (at[-1] == ' ') /* v is not a space */
		at--;
	return fast_plain(v, (size_t)(at - v));
}

/* A one-line flow collection at *s; *s past its closing bracket. */
static json_t *fast_flow(const char **s, int depth)
{
	int map = **s == '{';
	char close = map ? '}' : ']';
	json_t *c = map ? json_object() : json_array();
	size_t keys = 0;
	const char *at = skip_spaces(*s + 1);
	if (!c || depth > FAST_MAX_DEPTH)
		goto bail;
	if (*at == close) {
		*s = at + 1;
		return c;
	}
	for (;;) {
		json_t *v;
		if (map) {
			size_t klen;
			const char *key = fast_key(&at, &klen);
			/* "a:1" is not the same in every YAML version: left to libyaml. */
			if (!key || *at != ':' || at[1] != ' ')
				goto bail;
			at = skip_spaces(at + 1);
			if (*at == ',' || *at == '}')
				goto bail; /* an empty value: left to libyaml */
			v = fast_flow_value(&at, depth);
			if (fast_set(c, &keys, key, klen, v) != 0)
				goto bail;
		} else {
			v = fast_flow_value(&at, depth);
			if (!v || json_array_append_new(c, v) != 0)
				goto bail;
		}
		at = skip_spaces(at);
		if (*at == close) {
			if (!fast_unique(c, keys))
				goto bail;
			*s = at + 1;
			return c;
		}
		if (*at != ',')
			goto bail;
		at = skip_spaces(at + 1);
		if (*at == close)
			goto bail; /* a trailing comma */
	}
bail:
	json_decref(c);
	return NULL;
}

/* ----------------------------------------------------------------- shared flow values */

/*
 * Sharing (yamljson_reader_share). A cluster export's Workloads come from few pod templates,
 * and written flow style each template is one line: `template: {spec: {containers: ...}}`.
 * Parsing the same line into a new tree for every Workload was half of reading a 50,000-
 * Workload export. So a one-line flow collection whose exact text has come before is copied
 * once out of the document (into malloc, the JSON arena paused: the copy outlives the
 * document), and from then on a document with that text gets the same value, one reference
 * more, without parsing. A text seen once is remembered by its hash only (seen[]), so lines
 * that never repeat (a name, a time) cost a hash and no copy. A hit is compared byte for
 * byte: equal texts parse to equal values, so sharing changes no document's content.
 *
 * Hand-written, as the parser is: a table of a few thousand entries keyed by text, and
 * no library of ours has one over raw bytes.
 */
#define SHARE_SLOTS 4096 /* a power of two */
#define SHARE_MAX (SHARE_SLOTS / 2) /* entries kept: the table stays at most half full */
#define SHARE_MIN_TEXT 16 /* shorter collections parse faster than they are looked up */
#define SHARE_MAX_TEXT 2048
#define SEEN_SLOTS 8192 /* a power of two */

struct share_entry {
	uint64_t hash;
	size_t len;
	char *text; /* NULL: a free slot */
	json_t *value; /* the table's reference */
};

struct share {
	struct share_entry slot[SHARE_SLOTS];
	size_t n;
	uint64_t seen[SEEN_SLOTS]; /* hashes of texts met once, overwritten as they come */
	/* The values handed to the document being read, one reference each (the document's):
	 * what yamljson_reader_discarded gives back when the caller drops the document unfreed. */
	json_t **held;
	size_t n_held, cap_held;
};

/* A 64-bit hash of s[0..n), eight bytes at a time (the texts are tens of bytes). */
static uint64_t text_hash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15u ^ n, w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
	return h ^ (h >> 29);
}

static struct share_entry *share_slot(struct share *sh, uint64_t hash, const char *text, size_t len)
{
	for (size_t i = (size_t)hash & (SHARE_SLOTS - 1);; i = (i + 1) & (SHARE_SLOTS - 1)) {
		struct share_entry *e = &sh->slot[i];
		if (!e->text || (e->hash == hash && e->len == len && !memcmp(e->text, text, len)))
			return e; /* never full: at most SHARE_MAX of the slots are used */
	}
}

/* The shared value for text, one reference more for the document (held); NULL if none. */
static json_t *share_get(struct share *sh, uint64_t hash, const char *text, size_t len)
{
	struct share_entry *e = share_slot(sh, hash, text, len);
	if (!e->text)
		return NULL;
	if (GROW(sh->held, sh->cap_held, sh->n_held + 1) != 0)
		return NULL; /* parsed instead */
	sh->held[sh->n_held++] = e->value;
	return json_incref(e->value);
}

/* text just parsed to v: the second time its hash comes, a copy of v is kept to share. A
 * copy that can't be had is no error: the text is parsed again next time. */
static void share_note(struct share *sh, uint64_t hash, const char *text, size_t len, json_t *v)
{
	uint64_t *seen = &sh->seen[(size_t)hash & (SEEN_SLOTS - 1)];
	if (*seen != hash) {
		*seen = hash;
		return;
	}
	if (sh->n == SHARE_MAX)
		return;
	struct share_entry *e = share_slot(sh, hash, text, len);
	if (e->text)
		return; /* shared already (share_get found no memory to hand it out) */
	int arena_on = json_arena_on();
	json_arena_pause();
	json_t *copy = json_deep_copy(v);
	char *t = malloc(len);
	if (arena_on)
		json_arena_begin();
	if (!copy || !t) {
		json_decref(copy);
		free(t);
		return;
	}
	memcpy(t, text, len);
	*e = (struct share_entry){ hash, len, t, copy };
	sh->n++;
}

static void share_free(struct share *sh)
{
	if (!sh)
		return;
	for (size_t i = 0; i < SHARE_SLOTS; i++) {
		free(sh->slot[i].text);
		json_decref(sh->slot[i].value);
	}
	free(sh->held);
	free(sh);
}

/* A block plain scalar at v, to its line's end (trailing spaces cut); *next past the '\n'. */
static json_t *fast_plain_line(const char *v, const char **next)
{
	const char *at = v;
	if (!plain_start(v))
		return NULL;
	for (;;) {
		at = scan_class(at, CC_RUN);
		if (*at != ':')
			break;
		if (at[1] == ' ' || at[1] == '\n')
			return NULL; /* "a: b: c" */
		at++;
	}
	if (*at != '\n')
		return NULL;
	*next = at + 1;
	while (at[-1] == ' ') /* v is not a space */
		at--;
	return fast_plain(v, (size_t)(at - v));
}

/* A one-line flow collection at v (see fast_value), shared (see struct share) when its text
 * came before. */
static json_t *fast_flow_line(struct share *sh, const char *v, const char **next)
{
	const char *at = v, *eol = NULL, *e;
	uint64_t hash = 0;
	size_t len = 0;
	json_t *out;
	if (sh && (eol = memchr(v, '\n', SHARE_MAX_TEXT + 1)) != NULL) {
		for (e = eol; e[-1] == ' '; e--) /* v is not a space */
			;
		len = (size_t)(e - v);
		if (len >= SHARE_MIN_TEXT && (e[-1] == '}' || e[-1] == ']')) {
			hash = text_hash(v, len);
			if ((out = share_get(sh, hash, v, len)) != NULL) {
				*next = eol + 1;
				return out;
			}
		} else {
			eol = NULL;
		}
	}
	if (!(out = fast_flow(&at, 1)))
		return NULL;
	at = skip_spaces(at);
	if (*at != '\n') { /* something after the closing bracket */
		json_decref(out);
		return NULL;
	}
	*next = at + 1;
	if (eol) /* the parse ended at the line's end: the text hashed is the collection's */
		share_note(sh, hash, v, len, out);
	return out;
}

/* The value after "key: " or "- " (v at neither a space nor the '\n'), to the end of the
 * line; *next past the line's '\n'. */
static inline json_t *fast_value(struct share *sh, const char *v, const char **next)
{
	json_t *out;
	const char *at = v;
	if (*v == '{' || *v == '[')
		return fast_flow_line(sh, v, next);
	if (*v == '"' || *v == '\'')
		out = fast_quoted(&at);
	else
		return fast_plain_line(v, next);
	if (!out)
		return NULL;
	at = skip_spaces(at);
	if (*at != '\n') { /* something after the closing quote */
		json_decref(out);
		return NULL;
	}
	*next = at + 1;
	return out;
}

static int fast_push(struct fast *f, json_t *node, int indent)
{
	if (f->depth == FAST_MAX_DEPTH)
		return -1;
	f->stack[f->depth++] = (struct fast_frame){ node, indent, 0 };
	return 0;
}

/* Stores v where the pending key or "- " wanted it. */
static int fast_fill(struct fast *f, json_t *v)
{
	struct fast_frame *top = &f->stack[f->depth - 1];
	f->pending = 0;
	if (json_is_object(top->node))
		return fast_set(top->node, &top->keys, f->pending_key, f->pending_key_len, v);
	if (!v || json_array_append_new(top->node, v) != 0) {
		json_decref(v);
		return -1;
	}
	return 0;
}

/* What follows key (at: its ':', already known to end the key) in the mapping on top of
 * the stack: a value to the line's end, or nothing (pending). *next past the line's '\n'. */
static inline int fast_entry_value(struct fast *f, const char *key, size_t klen, const char *at,
				   int indent, const char **next)
{
	at = skip_spaces(at + 1);
	if (*at == '\n') {
		f->pending = 1;
		f->pending_key = key;
		f->pending_key_len = klen;
		f->pending_indent = indent;
		*next = at + 1;
		return 0;
	}
	struct fast_frame *top = &f->stack[f->depth - 1];
	return fast_set(top->node, &top->keys, key, klen, fast_value(f->share, at, next));
}

/* Whether a key ends at at: a ':' then a space or the line's end. */
static int key_ends(const char *at)
{
	return at[0] == ':' && (at[1] == ' ' || at[1] == '\n');
}

/* One content line: indent spaces, then text (not a space, '\n' or '#'); *next past its
 * '\n'. */
static int fast_line(struct fast *f, int indent, const char *text, const char **next)
{
	int dash = *text == '-' && (text[1] == ' ' || text[1] == '\n');
	if (!f->root) {
		f->root = dash ? json_array() : json_object();
		if (!f->root || indent != 0 || fast_push(f, f->root, 0) != 0)
			return -1;
	} else if (f->pending) {
		/* The pending value's lines: deeper, or a "- " list at a key's own column. */
		if (indent > f->pending_indent || (dash && indent == f->pending_indent &&
						   json_is_object(f->stack[f->depth - 1].node))) {
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
				 json_is_array(f->stack[f->depth - 1].node)))) {
		f->depth--;
		if (!fast_unique(f->stack[f->depth].node, f->stack[f->depth].keys))
			return -1;
	}
	struct fast_frame *top = &f->stack[f->depth - 1];
	if (top->indent != indent || dash != json_is_array(top->node))
		return -1;
	size_t klen;
	const char *key, *at;
	if (!dash) {
		at = text;
		key = fast_key(&at, &klen);
		if (!key || !key_ends(at))
			return -1;
		return fast_entry_value(f, key, klen, at, indent, next);
	}
	const char *v = skip_spaces(text + 1);
	if (*v == '\n') {
		f->pending = 1;
		f->pending_indent = indent;
		*next = v + 1;
		return 0;
	}
	if (*v == '-' && (v[1] == ' ' || v[1] == '\n'))
		return -1; /* "- - x" */
	/* "- key: value": a mapping whose keys are at the column of its first key. */
	at = v;
	key = fast_key(&at, &klen);
	if (key && key_ends(at)) {
		json_t *obj = json_object();
		if (!obj || json_array_append_new(top->node, obj) != 0 ||
		    fast_push(f, obj, indent + (int)(v - text)) != 0)
			return -1;
		return fast_entry_value(f, key, klen, at, indent + (int)(v - text), next);
	}
	json_t *val = fast_value(f->share, v, next);
	if (!val || json_array_append_new(top->node, val) != 0)
		return -1;
	return 0;
}

/*
 * Parses the document whose lines start at p (after its "---" line, if any), at 1-based line
 * first, up to the next "---" line or end; tail is where the input's last line starts when
 * it has no '\n' (else end). Returns 1 with *doc (NULL for a document of comments only),
 * *line, *stop (where the "---" line or end is) and *lines (its line number); or 0 when the
 * document is not in the subset (or memory ran out: libyaml then fails the same way), a
 * "..." or directive line included (the caller then finds them as it does for libyaml).
 */
static int fast_document(const char *p, const char *end, const char *tail, int first,
			 struct share *share, json_t **doc, int *line, const char **stop,
			 int *lines)
{
	struct fast f; /* not zeroed whole: its stack is a few KB, and per document */
	f.depth = 0;
	f.pending = 0;
	f.root = NULL;
	f.share = share;
	char last[FAST_MAX_LAST_LINE + 1];
	int n = first;
	*doc = NULL;
	*line = 0;
	while (p < end) {
		const char *s = p, *next;
		if (p == tail) {
			size_t len = (size_t)(end - p);
			if (len > FAST_MAX_LAST_LINE)
				goto bail;
			memcpy(last, p, len);
			last[len] = '\n';
			s = last;
		}
		if (line_is_marker(s, '-'))
			break;
		if (line_is_marker(s, '.') || *s == '%')
			goto bail;
		const char *text = skip_spaces(s);
		if (*text == '\n') {
			next = text + 1;
		} else if (*text == '#') {
			/* A comment: no tab or control character hides in it. */
			for (next = text; !char_is(*next, CC_CONTROL); next++)
				;
			if (*next++ != '\n')
				goto bail;
		} else {
			if (!f.root)
				*line = n;
			if (fast_line(&f, (int)(text - s), text, &next) != 0)
				goto bail;
		}
		p = s == last ? end : next;
		n++;
	}
	if (f.pending && fast_fill(&f, json_null()) != 0)
		goto bail;
	for (size_t i = 0; i < f.depth; i++)
		if (!fast_unique(f.stack[i].node, f.stack[i].keys))
			goto bail;
	*doc = f.root;
	*stop = p;
	*lines = n;
	return 1;
bail:
	json_decref(f.root); /* with the references it held to shared values */
	if (share)
		share->n_held = 0;
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
	const char *tail; /* where the input's last line starts if it has no '\n', else its end */
	/* libyaml reads the rest of the stream (after "..." or a directive: its state between
	 * documents then matters); its lines are offset by base. */
	int rest;
	int base;
	/* An error libyaml met right after the document just returned: the next call's. */
	int after, after_line;
	char after_text[200];
	struct share *share; /* NULL unless yamljson_reader_share */
	int share_borrowed; /* a span reader's: its parent's table */
	/* kubectl's List (yamljson_reader_lists): sub reads one span (a List's head, tail or
	 * one item); while in_list, item_at is the next item's "- " line (its number item_line,
	 * its index next_item) and items_col the column of its "- ". */
	int lists;
	struct yamljson_reader *sub;
	int in_list;
	json_t *list_head; /* its members before items */
	const char *item_at;
	int item_line, items_col;
	long next_item, item;
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
	r->item = -1;
	r->whole = whole;
	for (r->tail = data + len; r->tail > data && r->tail[-1] != '\n'; r->tail--)
		;
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
	yaml_parser_set_input_string(&r->parser, (const unsigned char *)r->data + off,
				     r->len - off);
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

/* ----------------------------------------------------------------------- kubectl's List */

/*
 * A List is cut into spans by its lines alone (yamljson_reader_lists): the members before
 * "items:" (its head), each item from its "- " line to the next at that column, and the
 * members after the items (its tail); each span is parsed alone by a reader of its own
 * (sub), which shares the parent's table of shared values. YAML's indentation makes the cut
 * exact for what kubectl writes: an item's lines are deeper than its "- ", or comments. A
 * document whose head or tail doesn't parse, isn't a v1 List or has "items" twice is read
 * whole instead, and then errors are libyaml's own.
 */

static int stream_next(struct yamljson_reader *r, json_t **doc, int *line,
		       struct yamljson_error *err);

/* The line after the one at p (end if none). */
static const char *next_line(const char *p, const char *end)
{
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	return eol ? eol + 1 : end;
}

/* A line's indentation; *blank set when it holds nothing but spaces or a comment. */
static int line_indent(const char *p, const char *end, int *blank)
{
	const char *t = p;
	while (t < end && *t == ' ')
		t++;
	*blank = t == end || *t == '\n' || *t == '#' || (*t == '\r' && t + 1 < end && t[1] == '\n');
	return (int)(t - p);
}

/* Whether the line at p, after its indent, is a "- " entry (or a lone "-"). */
static int line_is_dash(const char *t, const char *end)
{
	return t < end && *t == '-' &&
	       (t + 1 == end || t[1] == ' ' || t[1] == '\n' ||
		(t[1] == '\r' && t + 2 < end && t[2] == '\n'));
}

/* Whether the line at p is key at column 0 with nothing after the ':' but spaces. */
static int line_is_key(const char *p, const char *end, const char *key)
{
	size_t n = strlen(key);
	if ((size_t)(end - p) <= n || memcmp(p, key, n) != 0 || p[n] != ':')
		return 0;
	for (p += n + 1; p < end && *p == ' '; p++)
		;
	return p == end || *p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n');
}

/* Points sub at data[from..to), whose first line is line, sharing r's table. */
static int span_open(struct yamljson_reader *r, const char *from, const char *to, int line)
{
	struct yamljson_reader *s = r->sub;
	if (!s && !(s = r->sub = calloc(1, sizeof(*s))))
		return -ENOMEM;
	if (s->parser_live)
		yaml_parser_delete(&s->parser);
	memset(s, 0, sizeof(*s));
	s->data = from;
	s->len = (size_t)(to - from);
	s->line = line;
	s->share = r->share;
	s->share_borrowed = 1;
	for (s->tail = to; s->tail > from && s->tail[-1] != '\n'; s->tail--)
		;
	return 0;
}

/* The one document of data[from..to) (NULL if it has none) in *doc, its line in *line. 0;
 * -EINVAL (err filled) if it doesn't parse or holds more than one; -ENOMEM. */
static int span_parse(struct yamljson_reader *r, const char *from, const char *to, int first,
		      json_t **doc, int *line, struct yamljson_error *err)
{
	json_t *extra;
	int rc, extra_line;
	*doc = NULL;
	*line = first;
	if ((rc = span_open(r, from, to, first)) != 0)
		return rc;
	struct yamljson_reader *s = r->sub;
	if ((rc = stream_next(s, doc, line, err)) < 0)
		return rc;
	if (rc == 1 && s->after) {
		set_error(err, s->after_line, s->after_text);
		rc = -EINVAL;
	} else if (rc == 1 && (rc = stream_next(s, &extra, &extra_line, err)) == 1) {
		json_decref(extra);
		set_error(err, extra_line, "more than one document");
		rc = -EINVAL;
	}
	if (rc < 0) {
		json_decref(*doc);
		*doc = NULL;
		return rc;
	}
	return 0;
}

/*
 * Whether the document whose lines start at p (line n) is a block v1 List to stream: 1 with
 * the List's state set (in_list); 0 to read it whole; -ENOMEM. Its head is looked for among
 * the document's first lines: keys at column 0 with values on their line, and metadata's
 * block; anything else first (a "spec:" block, a list) means it isn't a List. The head must
 * say apiVersion v1, and kind List or none yet (kubectl writes kind after the items); the
 * tail is checked when the items end (list_end). Nothing is read ahead of the items.
 */
static int list_begin(struct yamljson_reader *r, const char *p, int n)
{
	const char *end = r->data + r->len, *q = p, *items = NULL;
	int line = n, blank, in_meta = 0;
	for (int k = 0; k < 64 && q < end; k++, q = next_line(q, end), line++) {
		int indent = line_indent(q, end, &blank);
		if (blank)
			continue;
		if (indent > 0) {
			if (!in_meta)
				return 0;
			continue;
		}
		if (line_is_dash(q, end) || is_marker(q, end, "---") || is_marker(q, end, "...") ||
		    *q == '%')
			return 0;
		if (line_is_key(q, end, "items")) {
			items = q;
			break;
		}
		in_meta = line_is_key(q, end, "metadata");
	}
	if (!items)
		return 0;
	/* The first item: the first content line after "items:" is a "- " at some column. */
	const char *first = next_line(items, end);
	int first_line = line + 1, col;
	for (;; first = next_line(first, end), first_line++) {
		if (first == end)
			return 0;
		col = line_indent(first, end, &blank);
		if (!blank)
			break;
	}
	if (!line_is_dash(first + col, end))
		return 0;
	json_t *head;
	struct yamljson_error ignored;
	int rc, l;
	/* The head outlives the document the first item is (which the caller may drop with
	 * json_arena_discard): from malloc. */
	int arena_on = json_arena_on();
	json_arena_pause();
	rc = span_parse(r, p, items, n, &head, &l, &ignored);
	if (arena_on)
		json_arena_begin();
	/* The head holds its shared values' references itself (freed by json_decref): they
	 * aren't the next document's, which yamljson_reader_discarded gives back. */
	if (r->share)
		r->share->n_held = 0;
	if (rc != 0)
		return rc == -ENOMEM ? rc : 0;
	const char *api = json_string_value(json_object_get(head, "apiVersion"));
	json_t *kind = json_object_get(head, "kind");
	if (!json_is_object(head) || json_object_get(head, "items") || !api ||
	    strcmp(api, "v1") != 0 ||
	    (kind && (!json_is_string(kind) || strcmp(json_string_value(kind), "List") != 0))) {
		json_decref(head);
		return 0;
	}
	r->list_head = head;
	r->in_list = 1;
	r->item_at = first;
	r->item_line = first_line;
	r->items_col = col;
	r->next_item = 0;
	return 1;
}

/* The List's members after its items, whose lines start at p (line n), to the next "---"
 * line: parsed and checked against its head. 0 (the reader goes on after them), -EINVAL. */
static int list_end(struct yamljson_reader *r, const char *p, int n, struct yamljson_error *err)
{
	const char *end = r->data + r->len, *at = p;
	int at_line = n, rc;
	for (; at < end && !is_marker(at, end, "---"); at = next_line(at, end), at_line++)
		if (is_marker(at, end, "...") || *at == '%')
			break; /* the stream goes on in libyaml (see stream_next) */
	json_t *tail, *head = r->list_head;
	const char *key;
	json_t *v;
	int l;
	r->list_head = NULL;
	r->in_list = 0;
	r->pos = (size_t)(at - r->data);
	r->line = at_line;
	rc = span_parse(r, p, at, n, &tail, &l, err);
	if (r->share)
		r->share->n_held = 0; /* as the head's (list_begin) */
	if (rc != 0) {
		json_decref(head);
		return rc;
	}
	if (tail && !json_is_object(tail)) {
		set_error(err, n, "the List's members after its items are not a mapping");
		rc = -EINVAL;
	}
	json_object_foreach(json_is_object(tail) ? tail : NULL, key, v)
	{
		if (rc == 0 && (!strcmp(key, "items") || json_object_get(head, key))) {
			char text[160];
			snprintf(text, sizeof(text), "duplicate key \"%.100s\"", key);
			set_error(err, n, text);
			rc = -EINVAL;
		}
	}
	json_t *kind = json_object_get(head, "kind");
	if (!kind)
		kind = json_object_get(tail, "kind");
	if (rc == 0 && !kind) {
		set_error(err, n,
			  "a List (apiVersion v1, items) without \"kind: List\" after its "
			  "items: is the input cut short?");
		rc = -EINVAL;
	} else if (rc == 0 && (!json_is_string(kind) || strcmp(json_string_value(kind), "List"))) {
		set_error(err, n, "its items were read as a v1 List's, but its kind is not List");
		rc = -EINVAL;
	}
	json_decref(tail);
	json_decref(head);
	return rc;
}

/* The next item of the List being streamed: 1; 0 after its last (the reader then goes on
 * after the List); -EINVAL, -ENOMEM. An item runs from its "- " line to the next content line
 * at its column or less. */
static int list_next(struct yamljson_reader *r, json_t **doc, int *line, struct yamljson_error *err)
{
	const char *end = r->data + r->len, *from = r->item_at, *at;
	int blank, n = r->item_line + 1;
	int indent = from < end ? line_indent(from, end, &blank) : -1;
	if (indent != r->items_col || !line_is_dash(from + indent, end))
		return list_end(r, from, r->item_line, err);
	for (at = next_line(from, end); at < end; at = next_line(at, end), n++)
		if (line_indent(at, end, &blank) <= r->items_col && !blank)
			break;
	json_t *seq;
	int rc = span_parse(r, from, at, r->item_line, &seq, line, err);
	if (rc == 0 && (!json_is_array(seq) || json_array_size(seq) != 1)) {
		set_error(err, r->item_line, "not one list entry");
		rc = -EINVAL;
	}
	if (rc < 0) {
		json_decref(seq);
		if (err) {
			char text[sizeof(err->text)];
			snprintf(text, sizeof(text), "items[%ld]: %.170s", r->next_item, err->text);
			snprintf(err->text, sizeof(err->text), "%s", text);
		}
		return rc;
	}
	*doc = json_incref(json_array_get(seq, 0));
	json_decref(seq);
	*line = r->item_line;
	r->item = r->next_item++;
	r->pos = (size_t)(from - r->data);
	r->line = r->item_line;
	r->item_at = at;
	r->item_line = n;
	return 1;
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
		if (r->in_list) {
			if ((rc = list_next(r, doc, line, err)) != 0)
				return rc;
			continue;
		}
		if (r->pos >= r->len)
			return 0;
		const char *start = r->data + r->pos, *p = start;
		int start_line = r->line, n = r->line, fast = 1;
		if (is_marker(p, end, "---")) {
			for (p += 3; p < end && *p != '\n'; p++)
				if (*p != ' ')
					fast = 0; /* "--- content": libyaml's */
			p += p < end;
			n++;
		}
		if (fast && r->lists) {
			if ((rc = list_begin(r, p, n)) < 0)
				return rc;
			if (rc == 1)
				continue;
		}
		const char *q;
		int lines;
		if (fast && fast_document(p, end, r->tail, n, r->share, doc, line, &q, &lines)) {
			r->pos = (size_t)(q - r->data);
			r->line = lines;
			if (*doc)
				return 1;
			continue;
		}
		/* Not in the subset: the document's lines, up to the next "---", go to libyaml;
		 * "..." or a directive: libyaml reads the rest of the stream. */
		q = p;
		lines = n;
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
		 * stream, libyaml fails right after it: "did not find expected <document
		 * start>"). */
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
	r->item = -1;
	if (r->share)
		r->share->n_held = 0; /* the last document's references are its own now */
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

int yamljson_reader_share(struct yamljson_reader *r)
{
	if (!r->share && !r->whole && !(r->share = calloc(1, sizeof(*r->share))))
		return -ENOMEM;
	return 0;
}

int yamljson_reader_lists(struct yamljson_reader *r)
{
	r->lists = !r->whole;
	return 0;
}

long yamljson_reader_item(const struct yamljson_reader *r)
{
	return r->item;
}

void yamljson_reader_discarded(struct yamljson_reader *r)
{
	if (!r->share)
		return;
	for (size_t i = 0; i < r->share->n_held; i++)
		json_decref(r->share->held[i]);
	r->share->n_held = 0;
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
	if (!r->share_borrowed)
		share_free(r->share);
	json_decref(r->list_head);
	yamljson_reader_free(r->sub);
	free(r);
}

/* Loads every document; when lines is non-NULL also collects each kept document's first line. */
static int load(const char *data, size_t len, json_t **docs, int **lines,
		struct yamljson_error *err)
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
		if (lines && GROW(at, cap_at, n_at + 1) != 0) {
			json_decref(v);
			rc = -ENOMEM;
			break;
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
			if (GROW(data, cap, len + 8192) != 0) {
				rc = -ENOMEM;
				goto out;
			}
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
