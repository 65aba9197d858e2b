/* SPDX-License-Identifier: Apache-2.0 */
#include "util/yamljson.h"

#include <errno.h>
#include <math.h>
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

/* Loads every document; when lines is non-NULL also collects each kept document's first line. */
static int load(const char *data, size_t len, json_t **docs, int **lines, struct yamljson_error *err)
{
	yaml_parser_t parser;
	json_t *out;
	int rc = 0;
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
	if (memchr(data, '\0', len)) {
		set_error(err, 0, "input contains a NUL byte");
		return -EINVAL;
	}
	out = json_array();
	if (!out || !yaml_parser_initialize(&parser)) {
		json_decref(out);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	/* One budget for the whole input: the documents all end up in one array. */
	size_t scaled = EXPANSION_FLOOR + EXPANSION * len;
	struct conv c = { .doc = NULL, .nodes = 0, .bytes = 0, .err = err,
			  .max_nodes = scaled < MAX_NODES ? scaled : MAX_NODES,
			  .max_bytes = scaled < MAX_SCALAR_BYTES ? scaled : MAX_SCALAR_BYTES };
	for (;;) {
		yaml_document_t doc;
		if (!yaml_parser_load(&parser, &doc)) {
			char text[200];
			snprintf(text, sizeof(text), "%s%s%s", parser.problem ? parser.problem : "malformed YAML",
				 parser.context ? " " : "", parser.context ? parser.context : "");
			set_error(err, (int)parser.problem_mark.line + 1, text);
			rc = -EINVAL;
			break;
		}
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		if (!root) { /* end of stream */
			yaml_document_delete(&doc);
			break;
		}
		c.doc = &doc;
		int root_line = (int)root->start_mark.line + 1;
		json_t *v = convert(&c, root, 0);
		yaml_document_delete(&doc);
		if (!v) {
			rc = -EINVAL;
			break;
		}
		/* `---` followed by nothing yields a null document: skip it, as kubectl does. */
		if (json_is_null(v)) {
			json_decref(v);
			continue;
		}
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
			at[n_at++] = root_line;
	}
	yaml_parser_delete(&parser);
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
