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

/* Types a plain scalar: the JSON-compatible subset of the YAML 1.2 core schema. */
static json_t *plain_scalar(const char *s)
{
	if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
		return json_null();
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return json_true();
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return json_false();
	if (is_int(s)) {
		errno = 0;
		char *end;
		long long v = strtoll(s, &end, 10);
		if (errno == 0 && *end == '\0')
			return json_integer(v);
		return json_string(s); /* out of int64 range: keep the text rather than a wrong number */
	}
	if (is_float(s)) {
		char *end;
		double v = strtod(s, &end);
		/* JSON has no infinity (json_real refuses it): keep an overflowing float's text, as
		 * for out-of-range integers. */
		if (*end == '\0' && isfinite(v))
			return json_real(v);
	}
	return json_string(s);
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
		json_t *v = node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? plain_scalar(s) :
										  json_string(s);
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

struct yamljson_reader {
	yaml_parser_t parser;
	int done; /* end of stream or an error: next returns 0 or the error again */
	int rc;
	/* 1: one alias budget for the whole input (yamljson_load: every document lands in one
	 * array); 0: a budget per document (the streaming reader frees each before the next). */
	int whole;
	struct conv c;
};

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
	if (!yaml_parser_initialize(&r->parser)) {
		free(r);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&r->parser, (const unsigned char *)data, len);
	r->whole = whole;
	if (whole) {
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

int yamljson_reader_next(struct yamljson_reader *r, json_t **doc, int *line,
			 struct yamljson_error *err)
{
	*doc = NULL;
	*line = 0;
	if (r->done)
		return r->rc;
	for (;;) {
		yaml_document_t ydoc;
		if (!yaml_parser_load(&r->parser, &ydoc)) {
			char text[200];
			snprintf(text, sizeof(text), "%s%s%s",
				 r->parser.problem ? r->parser.problem : "malformed YAML",
				 r->parser.context ? " " : "", r->parser.context ? r->parser.context : "");
			set_error(err, (int)r->parser.problem_mark.line + 1, text);
			r->done = 1;
			return r->rc = -EINVAL;
		}
		yaml_node_t *root = yaml_document_get_root_node(&ydoc);
		if (!root) { /* end of stream */
			yaml_document_delete(&ydoc);
			r->done = 1;
			return r->rc = 0;
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
		int root_line = (int)root->start_mark.line + 1;
		json_t *v = convert(&r->c, root, 0);
		yaml_document_delete(&ydoc);
		r->c.doc = NULL;
		if (!v) {
			r->done = 1;
			return r->rc = -EINVAL;
		}
		/* `---` followed by nothing yields a null document: skip it, as kubectl does. */
		if (json_is_null(v)) {
			json_decref(v);
			continue;
		}
		*doc = v;
		*line = root_line;
		return 1;
	}
}

void yamljson_reader_free(struct yamljson_reader *r)
{
	if (!r)
		return;
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
