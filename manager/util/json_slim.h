/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Slim rules: what of an object muster keeps, stated once as a table and applied either to a
 * parsed tree (json_slim_tree) or to the object's text before anything parses it
 * (json_slim_text). The manager slims every Workload it caches (api/objects.h has the rules):
 * a watch event's text goes through json_slim_text and is kept as it comes out, so the parts
 * muster never reads (images, commands, env, volumes, other controllers' labels) are never
 * built into a tree at all; a tree made some other way goes through json_slim_tree. Both apply
 * the same table: the text they leave parses to the tree the other leaves (fuzz_json_slim
 * checks it).
 *
 * jansson can't skip part of a text while parsing it, and no well-kept C library streams JSON
 * with a filter, so the text walker is written by hand. It validates as it goes, at least as
 * strictly as jansson's parser (json_loadb, flags 0) and a little more (nesting deeper than
 * JSON_SLIM_MAX_DEPTH, numbers longer than 64 bytes): a text it accepts parses. One difference
 * is not checked: a key written twice in one object (jansson keeps the last; the apiserver
 * never writes one twice).
 */
#ifndef MUSTER_JSON_SLIM_H
#define MUSTER_JSON_SLIM_H

#include <jansson.h>
#include <stddef.h>

#define JSON_SLIM_MAX_DEPTH 256

enum json_slim_op {
	JSON_SLIM_KEEP, /* the value whole */
	JSON_SLIM_DROP, /* a member: removed */
	JSON_SLIM_OBJECT, /* an object: each member by its rule in members, else by others */
	JSON_SLIM_EACH, /* an array: each element by each */
	JSON_SLIM_PREFIXED, /* an object used as a map: only the members whose key starts with
			       prefix stay */
};

/* One rule. A value whose type is not the one the rule is for (an OBJECT rule meeting a
 * string) is kept whole. */
struct json_slim_rule {
	const char *key; /* in a members list: the member it is for; NULL ends the list */
	enum json_slim_op op;
	const struct json_slim_rule *members; /* OBJECT: NULL-key-terminated; may be NULL */
	enum json_slim_op others; /* OBJECT: KEEP or DROP, for a member members doesn't name */
	const struct json_slim_rule *each; /* EACH */
	const char *prefix; /* PREFIXED */
	int drop_empty; /* OBJECT or PREFIXED as a member: an object left empty is removed too */
};

/* Applies rule to the tree v in place. Returns how many members it removed. */
size_t json_slim_tree(json_t *v, const struct json_slim_rule *rule);

/* Validates the JSON object text (len bytes at in) and writes it slimmed by rule to out, which
 * has room for len + 1 bytes (the result is never longer), NUL-terminated. Strings, numbers
 * and literals are copied as written; whitespace between tokens is dropped. 0 and *out_len; or
 * -EINVAL when the text is not one well-formed JSON object, with *err_at the offset where that was
 * found (out is then unspecified). */
int json_slim_text(const char *in, size_t len, const struct json_slim_rule *rule, char *out,
		   size_t *out_len, size_t *err_at);

#endif
