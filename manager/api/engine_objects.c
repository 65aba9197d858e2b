/* SPDX-License-Identifier: Apache-2.0 */
#include "api/engine_objects.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strfmt.h"
#include "util/json_arena.h"
#include "util/sanitizer.h"

/* Paths in messages name user-chosen keys (resource names, labels), so give them room. */
#define PATH_MAX_LEN 512

/* ------------------------------------------------------------------------------ the arena */

struct eobj_block {
	struct eobj_block *next;
	max_align_t data[];
};

/* Allocations are carved from blocks, the first two small (one Workload takes a few hundred
 * bytes, one with two podSets a little more), later ones larger: a malloc per string made
 * decoding 50,000 Workloads mostly malloc and free. The second stays small because glibc
 * serves requests over about 1000 bytes from its large bins and consolidates its fast bins
 * for each, which a Workload per document made a steady cost. Under AddressSanitizer every
 * allocation keeps a block of its own, so an overrun of one is still caught. */
#define ARENA_FIRST_BLOCK 512
/* An arena that keeps growing (the simulator's, shared by all its Workloads) goes on to blocks
 * glibc maps whole: no memset of what the kernel hands over zeroed, a few dozen blocks for
 * 50,000 Workloads instead of thousands. */
#define ARENA_MAX_BLOCK (1u << 20)
#define ARENA_CARVE (!MUSTER_ASAN)

void *eobj_arena_alloc(struct eobj_arena *a, size_t n, size_t size)
{
	const size_t unit = sizeof(max_align_t);
	size_t bytes;
	if (a->shared)
		a = a->shared;
	if (__builtin_mul_overflow(n, size, &bytes) || bytes > SIZE_MAX / 2)
		return NULL;
	/* Aligned as an element of size bytes may need: its largest power-of-two divisor, up to
	 * max_align_t (a type's alignment divides its size). Strings take 1: rounded up to 16
	 * bytes each, they were half of the 50,000 simulated Workloads' arena. */
	size_t align = size & (~size + 1);
	if (align == 0 || align > unit)
		align = unit;
	if (bytes == 0)
		bytes = 1; /* "no elements" stays distinct from "no memory" */
	if (ARENA_CARVE && a->blocks) {
		size_t at = (a->used + align - 1) & ~(align - 1);
		if (at <= a->cap && a->cap - at >= bytes) {
			a->used = at + bytes;
			return (char *)a->blocks->data +
			       at; /* calloc'ed, never reused: still zero */
		}
	}
	size_t cap = a->blocks && a->blocks->next ? 2 * a->cap : ARENA_FIRST_BLOCK;
	if (cap > ARENA_MAX_BLOCK)
		cap = ARENA_MAX_BLOCK;
	if (!ARENA_CARVE || cap < bytes)
		cap = bytes;
	struct eobj_block *b = calloc(1, sizeof(*b) + cap);
	if (!b)
		return NULL;
	if (ARENA_CARVE && a->blocks && a->cap - a->used > cap - bytes) {
		/* The current block has more room left than this one would: keep carving it. */
		b->next = a->blocks->next;
		a->blocks->next = b;
		return b->data;
	}
	b->next = a->blocks;
	a->blocks = b;
	a->used = bytes;
	a->cap = cap;
	return b->data;
}

char *eobj_arena_strdup(struct eobj_arena *a, const char *s)
{
	size_t n = strlen(s);
	char *p = eobj_arena_alloc(a, n + 1, 1);
	if (p)
		memcpy(p, s, n + 1);
	return p;
}

void eobj_template_memo_clear(struct eobj_template_memo *m)
{
	for (size_t i = 0; m && i < EOBJ_TEMPLATE_MEMO; i++) {
		json_decref(m->slot[i].template);
		m->slot[i].template = NULL;
	}
}

/* The memo's slot for template (by address: a jansson node is at least 16-byte aligned). */
static size_t memo_slot(const json_t *template)
{
	uint64_t a = (uint64_t)(uintptr_t) template >> 4;
	return (size_t)((a * 0x9e3779b97f4a7c15u) >> 32) & (EOBJ_TEMPLATE_MEMO - 1);
}

/* The pod decoded before from template, in the shared arena a, or NULL. */
static const struct quota_podset *memo_get(const struct eobj_arena *a, const json_t *template)
{
	struct eobj_template_memo *m = a->shared ? a->shared->memo : NULL;
	if (!m || !template)
		return NULL;
	size_t i = memo_slot(template);
	return m->slot[i].template == template ? &m->slot[i].pod : NULL;
}

/* template decoded to pod (its arrays in the shared arena of a): known from now on. */
static void memo_put(const struct eobj_arena *a, json_t *template, const struct quota_podset *pod)
{
	struct eobj_template_memo *m = a->shared ? a->shared->memo : NULL;
	if (!m || !template || json_arena_owns(template))
		return;
	size_t i = memo_slot(template);
	json_decref(m->slot[i].template);
	m->slot[i].template = json_incref(template);
	m->slot[i].pod = *pod;
}

void eobj_arena_release(struct eobj_arena *a)
{
	eobj_template_memo_clear(a->memo); /* its pods are in the blocks */
	a->shared = NULL; /* its blocks are its own to free */
	while (a->blocks) {
		struct eobj_block *next = a->blocks->next;
		free(a->blocks);
		a->blocks = next;
	}
	a->used = a->cap = 0;
}

/* ------------------------------------------------------------------------- messages */

int eobj_bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int eobj_nomem(char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

/* Formats a field path. Paths may hold user-chosen keys, so they are cut to fit (a message
 * naming a shortened path beats none); a function of its own keeps -Wformat-truncation, which
 * can't know that, quiet about it. Paths are formatted for every field a decoder reads, valid
 * or not: strfmt_v does their %s and %zu without vsnprintf, which took a tenth of decoding
 * 50,000 Workloads. */
void eobj_pathf(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)strfmt_v(dst, size, fmt, ap);
	va_end(ap);
}

const char *eobj_show(json_t *v, char *buf, size_t size)
{
	if (json_is_string(v))
		snprintf(buf, size, "%.64s%s", json_string_value(v),
			 strlen(json_string_value(v)) > 64 ? "..." : "");
	else if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, size, "%g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
	else if (json_is_object(v))
		snprintf(buf, size, "{...}");
	else if (json_is_array(v))
		snprintf(buf, size, "[...]");
	else
		snprintf(buf, size, "null");
	return buf;
}

const char *eobj_type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/* --------------------------------------------------------------- typed field access */

/* Absent and null mean the same: Kubernetes drops nulls when it decodes. */
json_t *eobj_field(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return json_is_null(v) ? NULL : v;
}

int eobj_want_object(json_t *v, const char *path, char *err, size_t errlen)
{
	if (v && !json_is_object(v))
		return eobj_bad(err, errlen, "%s: must be an object, not %s", path,
				eobj_type_name(v));
	return 0;
}

int eobj_want_array(json_t *v, const char *path, char *err, size_t errlen)
{
	if (v && !json_is_array(v))
		return eobj_bad(err, errlen, "%s: must be a list, not %s", path, eobj_type_name(v));
	return 0;
}

/* An optional string field's value v (NULL: absent), named prefix.key; *out NULL when absent. */
static int string_value(json_t *v, const char *key, const char *prefix, const char **out, char *err,
			size_t errlen)
{
	*out = NULL;
	if (!v)
		return 0;
	if (!json_is_string(v))
		return eobj_bad(err, errlen, "%s%s%s: must be a string, not %s", prefix,
				*prefix ? "." : "", key, eobj_type_name(v));
	*out = json_string_value(v);
	return 0;
}

/* An optional string field; *out NULL when absent. */
int eobj_get_string(json_t *obj, const char *key, const char *prefix, const char **out, char *err,
		    size_t errlen)
{
	return string_value(eobj_field(obj, key), key, prefix, out, err, errlen);
}

/* An optional integer field's value v (NULL: absent) within [lo, hi]; *has says whether it
 * was set. */
static int int_value(json_t *v, const char *key, const char *prefix, int64_t lo, int64_t hi,
		     int *has, int64_t *out, char *err, size_t errlen)
{
	char text[96];
	const char *dot = *prefix ? "." : "";
	*has = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v))
		return eobj_bad(err, errlen, "%s%s%s: must be an integer, not %s", prefix, dot, key,
				json_is_string(v) ? eobj_show(v, text, sizeof(text)) :
						    eobj_type_name(v));
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return eobj_bad(err, errlen, "%s%s%s: %lld is out of range [%lld, %lld]", prefix,
				dot, key, (long long)x, (long long)lo, (long long)hi);
	*has = 1;
	*out = (int64_t)x;
	return 0;
}

int eobj_get_int(json_t *obj, const char *key, const char *prefix, int64_t lo, int64_t hi, int *has,
		 int64_t *out, char *err, size_t errlen)
{
	return int_value(eobj_field(obj, key), key, prefix, lo, hi, has, out, err, errlen);
}

/* As eobj_check_keys, and picks the allowed fields' values (obj_pick) on the way. */
static int pick_fields(json_t *obj, const char *path, const char *const *allowed, json_t **out,
		       char *err, size_t errlen)
{
	const char *unknown = obj_pick(obj, allowed, out);
	if (unknown)
		return eobj_bad(err, errlen, "%s%s%s: unknown field", path, *path ? "." : "",
				unknown);
	return 0;
}

/* Fails on keys outside allowed (a NULL-terminated list), as kubectl's strict field validation
 * does: a misspelt field would otherwise be silently ignored. */
int eobj_check_keys(json_t *obj, const char *path, const char *const *allowed, char *err,
		    size_t errlen)
{
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v)
	{
		size_t i;
		for (i = 0; allowed[i]; i++)
			if (!strcmp(allowed[i], key))
				break;
		if (!allowed[i])
			return eobj_bad(err, errlen, "%s%s%s: unknown field", path,
					*path ? "." : "", key);
	}
	return 0;
}

/* One of values (NULL-terminated), or dflt when absent; *index gets the position. */
static int get_enum(json_t *obj, const char *key, const char *prefix, const char *const *values,
		    int dflt, int *index, char *err, size_t errlen)
{
	const char *s;
	int rc = eobj_get_string(obj, key, prefix, &s, err, errlen);
	if (rc != 0)
		return rc;
	*index = dflt;
	if (!s)
		return 0;
	char list[256] = "";
	size_t n = 0;
	for (int i = 0; values[i]; i++) {
		if (!strcmp(values[i], s)) {
			*index = i;
			return 0;
		}
		if (n < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s\"%s\"", i ? ", " : "",
					      values[i]);
	}
	return eobj_bad(err, errlen, "%s%s%s: unsupported value \"%.64s\": must be one of %s",
			prefix, *prefix ? "." : "", key, s, list);
}

/* The bytes of a DNS name part: 1 for [a-z0-9], 2 for '-'. A table, because every Workload's
 * names go through it, a byte at a time. */
static const unsigned char dns_byte[256] = {
	['-'] = 2, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
	['7'] = 1, ['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1,
	['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1,
	['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1,
	['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?: one part of a label or subdomain, of any length. */
static int is_dns_part(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	if (len == 0 || dns_byte[u[0]] != 1 || dns_byte[u[len - 1]] != 1)
		return 0;
	for (size_t i = 1; i + 1 < len; i++)
		if (!dns_byte[u[i]])
			return 0;
	return 1;
}

int eobj_is_dns_label(const char *s, size_t len)
{
	return len <= 63 && is_dns_part(s, len);
}

int eobj_is_dns_subdomain(const char *s, size_t len)
{
	if (len == 0 || len > 253)
		return 0;
	for (size_t i = 0;; i++) {
		size_t n = 0;
		while (i + n < len && s[i + n] != '.')
			n++;
		/* An empty part is a leading, trailing or doubled dot: "a..b" is no name. */
		if (!is_dns_part(s + i, n))
			return 0;
		i += n;
		if (i == len)
			return 1;
	}
}

static int check_subdomain(const char *s, const char *path, char *err, size_t errlen)
{
	if (!eobj_is_dns_subdomain(s, strlen(s)))
		return eobj_bad(err, errlen,
				"%s: invalid name \"%.64s\": must be lowercase letters, digits, "
				"'-' and '.', "
				"start and end with a letter or digit, at most 253 characters",
				path, s);
	return 0;
}

static int check_label(const char *s, const char *path, char *err, size_t errlen)
{
	if (!eobj_is_dns_label(s, strlen(s)))
		return eobj_bad(err, errlen,
				"%s: invalid name \"%.64s\": must be lowercase letters, digits and "
				"'-', "
				"start and end with a letter or digit, at most 63 characters",
				path, s);
	return 0;
}

/* A quantity that must be a non-negative Kubernetes quantity within int64 milli-units. */
int eobj_get_quantity(json_t *v, const char *path, int64_t *out, char *err, size_t errlen)
{
	char text[96];
	if (!json_is_string(v) && !json_is_number(v))
		return eobj_bad(err, errlen,
				"%s: invalid quantity: must be a string or a number, not %s", path,
				eobj_type_name(v));
	int rc = quantity_from_json(v, out);
	if (rc == -ERANGE)
		return eobj_bad(err, errlen,
				"%s: quantity \"%s\" is out of range: muster accounts quantities "
				"exactly in "
				"int64 milli-units (at most about 9.2e15 units)",
				path, eobj_show(v, text, sizeof(text)));
	if (rc != 0)
		return eobj_bad(err, errlen, "%s: invalid quantity \"%s\"", path,
				eobj_show(v, text, sizeof(text)));
	if (*out < 0)
		return eobj_bad(err, errlen, "%s: invalid quantity \"%s\": must not be negative",
				path, eobj_show(v, text, sizeof(text)));
	return 0;
}

/* metadata.name, required, an RFC 1123 subdomain (label for namespaces), from its value. */
static int name_value(json_t *v, int label, const char **out, char *err, size_t errlen)
{
	int rc = string_value(v, "name", "metadata", out, err, errlen);
	if (rc != 0)
		return rc;
	if (!*out || !**out)
		return eobj_bad(err, errlen, "metadata.name: required");
	return label ? check_label(*out, "metadata.name", err, errlen) :
		       check_subdomain(*out, "metadata.name", err, errlen);
}

int eobj_meta_name(json_t *obj, int label, const char **out, char *err, size_t errlen)
{
	json_t *meta = eobj_field(obj, "metadata");
	int rc = eobj_want_object(meta, "metadata", err, errlen);
	if (rc != 0)
		return rc;
	return name_value(eobj_field(meta, "name"), label, out, err, errlen);
}

/* metadata.namespace from its value, or dflt (what kubectl applies to when the manifest
 * names none). */
static int namespace_value(json_t *v, const char *dflt, const char **out, char *err, size_t errlen)
{
	int rc = string_value(v, "namespace", "metadata", out, err, errlen);
	if (rc != 0)
		return rc;
	if (!*out || !**out)
		*out = dflt;
	if (!*out)
		return eobj_bad(err, errlen, "metadata.namespace: required");
	return check_label(*out, "metadata.namespace", err, errlen);
}

static int meta_namespace(json_t *obj, const char *dflt, const char **out, char *err, size_t errlen)
{
	return namespace_value(eobj_field(eobj_field(obj, "metadata"), "namespace"), dflt, out, err,
			       errlen);
}

int eobj_decode_string_map(struct eobj_arena *a, json_t *m, const char *path, size_t extra,
			   size_t *n, struct quota_kv **out, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	size_t i = 0;
	int rc = eobj_want_object(m, path, err, errlen);
	*n = 0;
	*out = NULL;
	if (rc != 0)
		return rc;
	*out = eobj_arena_alloc(a, json_object_size(m) + extra, sizeof(**out));
	if (!*out)
		return eobj_nomem(err, errlen);
	json_object_foreach(m, key, v)
	{
		if (!json_is_string(v))
			return eobj_bad(err, errlen, "%s.%s: must be a string, not %s", path, key,
					eobj_type_name(v));
		(*out)[i].key = eobj_arena_strdup(a, key);
		(*out)[i].value = eobj_arena_strdup(a, json_string_value(v));
		if (!(*out)[i].key || !(*out)[i].value)
			return eobj_nomem(err, errlen);
		i++;
	}
	*n = i;
	return 0;
}

static const char *const taint_effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };

int eobj_decode_taints(struct eobj_arena *a, json_t *arr, const char *path, int strict, size_t *n,
		       struct quota_taint **out, char *err, size_t errlen)
{
	static const char *const keys[] = { "key", "value", "effect", "timeAdded", NULL };
	json_t *t;
	size_t i;
	char p[PATH_MAX_LEN];
	int rc = eobj_want_array(arr, path, err, errlen);
	*n = 0;
	*out = NULL;
	if (rc != 0)
		return rc;
	*out = eobj_arena_alloc(a, json_array_size(arr), sizeof(**out));
	if (!*out)
		return eobj_nomem(err, errlen);
	json_array_foreach(arr, i, t)
	{
		const char *key, *value, *given;
		int effect;
		eobj_pathf(p, sizeof(p), "%s[%zu]", path, i);
		if (!json_is_object(t))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p,
					eobj_type_name(t));
		if ((strict && (rc = eobj_check_keys(t, p, keys, err, errlen)) != 0) ||
		    (rc = eobj_get_string(t, "key", p, &key, err, errlen)) != 0 ||
		    (rc = eobj_get_string(t, "value", p, &value, err, errlen)) != 0 ||
		    (rc = eobj_get_string(t, "effect", p, &given, err, errlen)) != 0)
			return rc;
		if (!key || !*key)
			return eobj_bad(err, errlen, "%s.key: required", p);
		if (!given || !*given)
			return eobj_bad(err, errlen, "%s.effect: required", p);
		if ((rc = get_enum(t, "effect", p, taint_effects, 0, &effect, err, errlen)) != 0)
			return rc;
		struct quota_taint *q = &(*out)[i];
		q->key = eobj_arena_strdup(a, key);
		q->value = eobj_arena_strdup(a, value ? value : "");
		q->effect = (char *)taint_effects[effect]; /* static storage */
		if (!q->key || !q->value)
			return eobj_nomem(err, errlen);
	}
	*n = json_array_size(arr);
	return 0;
}

/* Checks a list of tolerations the way Kubernetes validates them. */
static int check_tolerations(json_t *arr, const char *path, char *err, size_t errlen)
{
	static const char *const ops[] = { "Equal", "Exists", NULL };
	static const char *const effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", "",
					       NULL };
	json_t *t;
	size_t i;
	char p[PATH_MAX_LEN];
	int rc = eobj_want_array(arr, path, err, errlen);
	if (rc != 0)
		return rc;
	json_array_foreach(arr, i, t)
	{
		const char *key, *value;
		int op, effect, has;
		int64_t secs;
		eobj_pathf(p, sizeof(p), "%s[%zu]", path, i);
		if (!json_is_object(t))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p,
					eobj_type_name(t));
		if ((rc = eobj_get_string(t, "key", p, &key, err, errlen)) != 0 ||
		    (rc = eobj_get_string(t, "value", p, &value, err, errlen)) != 0 ||
		    (rc = get_enum(t, "operator", p, ops, 0, &op, err, errlen)) != 0 ||
		    (rc = get_enum(t, "effect", p, effects, 3, &effect, err, errlen)) != 0 ||
		    (rc = eobj_get_int(t, "tolerationSeconds", p, INT64_MIN, INT64_MAX, &has, &secs,
				       err, errlen)) != 0)
			return rc;
		if (op == 1 && value && *value)
			return eobj_bad(err, errlen,
					"%s.value: must be empty when operator is Exists", p);
		if ((!key || !*key) && op != 1)
			return eobj_bad(err, errlen,
					"%s.operator: must be Exists when key is empty", p);
	}
	return 0;
}

static int decode_tolerations(struct eobj_arena *a, json_t *arr, const char *path, size_t *n,
			      struct quota_taint **out, char *err, size_t errlen)
{
	json_t *t;
	size_t i;
	int rc = check_tolerations(arr, path, err, errlen);
	*n = 0;
	if (rc != 0)
		return rc;
	*out = eobj_arena_alloc(a, json_array_size(arr), sizeof(**out));
	if (!*out)
		return eobj_nomem(err, errlen);
	json_array_foreach(arr, i, t)
	{
		const char *key = json_string_value(eobj_field(t, "key"));
		const char *value = json_string_value(eobj_field(t, "value"));
		const char *effect = json_string_value(eobj_field(t, "effect"));
		const char *op = json_string_value(eobj_field(t, "operator"));
		struct quota_taint *q = &(*out)[i];
		/* quota.h: a NULL key tolerates every key (with Exists); "" effect any effect. */
		q->key = key && *key ? eobj_arena_strdup(a, key) : NULL;
		q->value = eobj_arena_strdup(a, value ? value : "");
		q->effect = eobj_arena_strdup(a, effect ? effect : "");
		q->exists = op && !strcmp(op, "Exists");
		if ((key && *key && !q->key) || !q->value || !q->effect)
			return eobj_nomem(err, errlen);
	}
	*n = json_array_size(arr);
	return 0;
}

/* ---------------------------------------------------------------------- ResourceFlavor */

int eobj_flavor_decode(json_t *rf, struct eobj_flavor *out, char *err, size_t errlen)
{
	static const char *const top[] = {
		"apiVersion", "kind", "metadata", "spec", "status", NULL
	};
	static const char *const spec_keys[] = { "nodeLabels", "nodeTaints", "tolerations",
						 "topologyName", NULL };
	const char *name;
	struct quota_flavor *f = &out->spec;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(rf))
		return eobj_bad(err, errlen, "ResourceFlavor: must be an object");
	json_t *spec = eobj_field(rf, "spec");
	if ((rc = eobj_check_keys(rf, "", top, err, errlen)) != 0 ||
	    (rc = eobj_meta_name(rf, 0, &name, err, errlen)) != 0 ||
	    (rc = eobj_want_object(spec, "spec", err, errlen)) != 0 ||
	    (rc = eobj_check_keys(spec, "spec", spec_keys, err, errlen)) != 0)
		return rc;
	if (!(f->name = eobj_arena_strdup(&out->arena, name)))
		return eobj_nomem(err, errlen);
	if ((rc = eobj_decode_string_map(&out->arena, eobj_field(spec, "nodeLabels"),
					 "spec.nodeLabels", 0, &f->n_labels, &f->labels, err,
					 errlen)) != 0 ||
	    (rc = eobj_decode_taints(&out->arena, eobj_field(spec, "nodeTaints"), "spec.nodeTaints",
				     1, &f->n_taints, &f->taints, err, errlen)) != 0 ||
	    (rc = decode_tolerations(&out->arena, eobj_field(spec, "tolerations"),
				     "spec.tolerations", &f->n_tolerations, &f->tolerations, err,
				     errlen)) != 0)
		return rc;
	return 0;
}

void eobj_flavor_release(struct eobj_flavor *f)
{
	eobj_arena_release(&f->arena);
	memset(f, 0, sizeof(*f));
}

/* --------------------------------------------------------------------- resource groups */

static int find_str(const char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return (int)i;
	return -1;
}

/*
 * spec.resourceGroups of a ClusterQueue or Cohort, with Kueue's webhook rules: a resource and
 * a flavor belong to one group only; each flavor lists exactly the covered resources, in their
 * order; quotas are non-negative; limits need a parent (cohortName / parentName); for a
 * ClusterQueue lendingLimit <= nominalQuota.
 */
static int decode_groups(struct eobj_arena *a, json_t *groups, int has_parent, int is_cohort,
			 size_t *n_out, const struct eng_resource_group **out, char *err,
			 size_t errlen)
{
	static const char *const group_keys[] = { "coveredResources", "flavors", NULL };
	static const char *const flavor_keys[] = { "name", "resources", NULL };
	static const char *const res_keys[] = { "name", "nominalQuota", "borrowingLimit",
						"lendingLimit", NULL };
	const char *seen_res[256], *seen_flavors[256];
	size_t n_res = 0, n_flavors = 0;
	char p[PATH_MAX_LEN], fp[PATH_MAX_LEN], rp[PATH_MAX_LEN], qp[PATH_MAX_LEN];
	json_t *g;
	size_t gi;
	int rc = eobj_want_array(groups, "spec.resourceGroups", err, errlen);

	*n_out = 0;
	*out = NULL;
	if (rc != 0)
		return rc;
	if (json_array_size(groups) > 16)
		return eobj_bad(err, errlen,
				"spec.resourceGroups: at most 16 resource groups, got %zu",
				json_array_size(groups));
	struct eng_resource_group *rgs = eobj_arena_alloc(a, json_array_size(groups), sizeof(*rgs));
	if (!rgs)
		return eobj_nomem(err, errlen);
	json_array_foreach(groups, gi, g)
	{
		struct eng_resource_group *rg = &rgs[gi];
		eobj_pathf(p, sizeof(p), "spec.resourceGroups[%zu]", gi);
		if (!json_is_object(g))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p,
					eobj_type_name(g));
		if ((rc = eobj_check_keys(g, p, group_keys, err, errlen)) != 0)
			return rc;
		json_t *covered = eobj_field(g, "coveredResources"),
		       *flavors = eobj_field(g, "flavors");
		eobj_pathf(fp, sizeof(fp), "%s.coveredResources", p);
		if ((rc = eobj_want_array(covered, fp, err, errlen)) != 0)
			return rc;
		if (json_array_size(covered) == 0)
			return eobj_bad(err, errlen, "%s: required: list at least one resource",
					fp);
		if (json_array_size(covered) > 64)
			return eobj_bad(err, errlen, "%s: at most 64 resources, got %zu", fp,
					json_array_size(covered));
		const char **cov = eobj_arena_alloc(a, json_array_size(covered), sizeof(*cov));
		if (!cov)
			return eobj_nomem(err, errlen);
		json_t *c;
		size_t ci;
		json_array_foreach(covered, ci, c)
		{
			const char *s = json_string_value(c);
			if (!s || !*s)
				return eobj_bad(err, errlen,
						"%s[%zu]: must be a resource name, not %s", fp, ci,
						s ? "an empty string" : eobj_type_name(c));
			if (find_str(seen_res, n_res, s) >= 0)
				return eobj_bad(err, errlen,
						"%s[%zu]: duplicate resource \"%.64s\": a resource "
						"can be covered "
						"by one resource group only",
						fp, ci, s);
			if (n_res == 256)
				return eobj_bad(err, errlen,
						"spec.resourceGroups: at most 256 covered "
						"resources in all");
			if (!(cov[ci] = eobj_arena_strdup(a, s)))
				return eobj_nomem(err, errlen);
			seen_res[n_res++] = cov[ci];
		}
		rg->n_covered = json_array_size(covered);
		rg->covered = cov;

		eobj_pathf(fp, sizeof(fp), "%s.flavors", p);
		if ((rc = eobj_want_array(flavors, fp, err, errlen)) != 0)
			return rc;
		if (json_array_size(flavors) == 0)
			return eobj_bad(err, errlen, "%s: required: list at least one flavor", fp);
		if (json_array_size(flavors) > 64)
			return eobj_bad(err, errlen, "%s: at most 64 flavors, got %zu", fp,
					json_array_size(flavors));
		struct eng_flavor_quotas *fqs =
			eobj_arena_alloc(a, json_array_size(flavors), sizeof(*fqs));
		if (!fqs)
			return eobj_nomem(err, errlen);
		json_t *f;
		size_t fi;
		json_array_foreach(flavors, fi, f)
		{
			const char *fname;
			eobj_pathf(fp, sizeof(fp), "%s.flavors[%zu]", p, fi);
			if (!json_is_object(f))
				return eobj_bad(err, errlen, "%s: must be an object, not %s", fp,
						eobj_type_name(f));
			if ((rc = eobj_check_keys(f, fp, flavor_keys, err, errlen)) != 0 ||
			    (rc = eobj_get_string(f, "name", fp, &fname, err, errlen)) != 0)
				return rc;
			eobj_pathf(rp, sizeof(rp), "%s.name", fp);
			if (!fname || !*fname)
				return eobj_bad(err, errlen, "%s: required", rp);
			if ((rc = check_subdomain(fname, rp, err, errlen)) != 0)
				return rc;
			if (find_str(seen_flavors, n_flavors, fname) >= 0)
				return eobj_bad(err, errlen,
						"%s: duplicate flavor \"%.64s\": a flavor can "
						"appear in one "
						"resource group only, once",
						rp, fname);
			if (n_flavors == 256)
				return eobj_bad(err, errlen,
						"spec.resourceGroups: at most 256 flavors in all "
						"resource groups");
			struct eng_flavor_quotas *fq = &fqs[fi];
			if (!(fq->flavor = eobj_arena_strdup(a, fname)))
				return eobj_nomem(err, errlen);
			seen_flavors[n_flavors++] = fq->flavor;

			json_t *resources = eobj_field(f, "resources");
			eobj_pathf(rp, sizeof(rp), "%s.resources", fp);
			if ((rc = eobj_want_array(resources, rp, err, errlen)) != 0)
				return rc;
			if (json_array_size(resources) != rg->n_covered)
				return eobj_bad(err, errlen,
						"%s: must list exactly the %zu coveredResources, "
						"in their order "
						"(got %zu entries)",
						rp, rg->n_covered, json_array_size(resources));
			struct eng_resource_quota *rq =
				eobj_arena_alloc(a, rg->n_covered, sizeof(*rq));
			if (!rq)
				return eobj_nomem(err, errlen);
			json_t *r;
			size_t ri;
			json_array_foreach(resources, ri, r)
			{
				const char *rname;
				eobj_pathf(rp, sizeof(rp), "%s.resources[%zu]", fp, ri);
				if (!json_is_object(r))
					return eobj_bad(err, errlen,
							"%s: must be an object, not %s", rp,
							eobj_type_name(r));
				if ((rc = eobj_check_keys(r, rp, res_keys, err, errlen)) != 0 ||
				    (rc = eobj_get_string(r, "name", rp, &rname, err, errlen)) != 0)
					return rc;
				if (!rname)
					return eobj_bad(err, errlen, "%s.name: required", rp);
				if (strcmp(rname, cov[ri]) != 0)
					return eobj_bad(err, errlen,
							"%s.name: \"%.64s\" must match "
							"coveredResources[%zu] "
							"(\"%.64s\")",
							rp, rname, ri, cov[ri]);
				rq[ri].name = cov[ri];
				json_t *nominal = eobj_field(r, "nominalQuota");
				json_t *borrow = eobj_field(r, "borrowingLimit");
				json_t *lend = eobj_field(r, "lendingLimit");
				eobj_pathf(qp, sizeof(qp), "%s.nominalQuota", rp);
				if (!nominal)
					return eobj_bad(err, errlen, "%s: required", qp);
				if ((rc = eobj_get_quantity(nominal, qp, &rq[ri].nominal, err,
							    errlen)) != 0)
					return rc;
				if (borrow) {
					eobj_pathf(qp, sizeof(qp), "%s.borrowingLimit", rp);
					if (!has_parent)
						return eobj_bad(
							err, errlen,
							"%s: must be unset when %s is empty", qp,
							is_cohort ? "parentName" : "cohortName");
					if ((rc = eobj_get_quantity(borrow, qp,
								    &rq[ri].borrowing_limit, err,
								    errlen)) != 0)
						return rc;
					rq[ri].has_borrowing_limit = 1;
				}
				if (lend) {
					eobj_pathf(qp, sizeof(qp), "%s.lendingLimit", rp);
					if (!has_parent)
						return eobj_bad(
							err, errlen,
							"%s: must be unset when %s is empty", qp,
							is_cohort ? "parentName" : "cohortName");
					if ((rc = eobj_get_quantity(lend, qp, &rq[ri].lending_limit,
								    err, errlen)) != 0)
						return rc;
					if (!is_cohort && rq[ri].lending_limit > rq[ri].nominal)
						return eobj_bad(err, errlen,
								"%s: must be less than or equal to "
								"nominalQuota",
								qp);
					rq[ri].has_lending_limit = 1;
				}
			}
			fq->n_resources = rg->n_covered;
			fq->resources = rq;
		}
		rg->n_flavors = json_array_size(flavors);
		rg->flavors = fqs;
	}
	*n_out = json_array_size(groups);
	*out = rgs;
	return 0;
}

/* ------------------------------------------------------------------------ ClusterQueue */

/* A LabelSelector with metav1's validation (operators and their values). */
/*
 * Checks one match expression (of a LabelSelector or a node-affinity term) at path ep: an
 * object with a non-empty key, an operator from ops, and values a list of strings. allowed
 * (NULL: not checked) lists its permitted keys. When count_rules is set, In/NotIn (ops 0 and 1)
 * need values and the others must have none, as LabelSelector validation says; those come
 * before the string check, so a wrong count is reported first.
 */
static int check_match_expr(json_t *e, const char *ep, const char *const *allowed,
			    const char *const *ops, int count_rules, const char **key, int *op,
			    json_t **values, char *err, size_t errlen)
{
	char vp[PATH_MAX_LEN];
	json_t *v;
	size_t k;
	int rc;
	if (!json_is_object(e))
		return eobj_bad(err, errlen, "%s: must be an object, not %s", ep,
				eobj_type_name(e));
	if ((allowed && (rc = eobj_check_keys(e, ep, allowed, err, errlen)) != 0) ||
	    (rc = eobj_get_string(e, "key", ep, key, err, errlen)) != 0)
		return rc;
	if (!*key || !**key)
		return eobj_bad(err, errlen, "%s.key: required", ep);
	if (!eobj_field(e, "operator"))
		return eobj_bad(err, errlen, "%s.operator: required", ep);
	if ((rc = get_enum(e, "operator", ep, ops, 0, op, err, errlen)) != 0)
		return rc;
	*values = eobj_field(e, "values");
	eobj_pathf(vp, sizeof(vp), "%s.values", ep);
	if ((rc = eobj_want_array(*values, vp, err, errlen)) != 0)
		return rc;
	if (count_rules && *op <= 1 && json_array_size(*values) == 0)
		return eobj_bad(err, errlen, "%s: must be non-empty when operator is %s", vp,
				ops[*op]);
	if (count_rules && *op >= 2 && json_array_size(*values) > 0)
		return eobj_bad(err, errlen, "%s: may not be specified when operator is %s", vp,
				ops[*op]);
	json_array_foreach(*values, k, v) if (!json_is_string(v)) return eobj_bad(
		err, errlen, "%s[%zu]: must be a string, not %s", vp, k, eobj_type_name(v));
	return 0;
}

int eobj_selector_decode(struct eobj_arena *a, json_t *sel, const char *path,
			 const struct label_selector **out, char *err, size_t errlen)
{
	static const char *const keys[] = { "matchLabels", "matchExpressions", NULL };
	static const char *const expr_keys[] = { "key", "operator", "values", NULL };
	static const char *const ops[] = { "In", "NotIn", "Exists", "DoesNotExist", NULL };
	char p[PATH_MAX_LEN], ep[PATH_MAX_LEN];
	int rc;

	*out = NULL;
	if (!sel)
		return 0;
	if ((rc = eobj_want_object(sel, path, err, errlen)) != 0 ||
	    (rc = eobj_check_keys(sel, path, keys, err, errlen)) != 0)
		return rc;
	struct label_selector *s = eobj_arena_alloc(a, 1, sizeof(*s));
	if (!s)
		return eobj_nomem(err, errlen);
	struct quota_kv *labels;
	eobj_pathf(p, sizeof(p), "%s.matchLabels", path);
	if ((rc = eobj_decode_string_map(a, eobj_field(sel, "matchLabels"), p, 0, &s->n_labels,
					 &labels, err, errlen)) != 0)
		return rc;
	s->labels = labels;
	json_t *exprs = eobj_field(sel, "matchExpressions"), *e;
	size_t i;
	eobj_pathf(p, sizeof(p), "%s.matchExpressions", path);
	if ((rc = eobj_want_array(exprs, p, err, errlen)) != 0)
		return rc;
	struct quota_match_expr *me = eobj_arena_alloc(a, json_array_size(exprs), sizeof(*me));
	if (!me)
		return eobj_nomem(err, errlen);
	json_array_foreach(exprs, i, e)
	{
		const char *key;
		int op;
		json_t *values, *v;
		size_t k;
		eobj_pathf(ep, sizeof(ep), "%s[%zu]", p, i);
		if ((rc = check_match_expr(e, ep, expr_keys, ops, 1, &key, &op, &values, err,
					   errlen)) != 0)
			return rc;
		const char **vals = eobj_arena_alloc(a, json_array_size(values), sizeof(*vals));
		if (!vals)
			return eobj_nomem(err, errlen);
		json_array_foreach(values, k, v) if (
			!(vals[k] = eobj_arena_strdup(a, json_string_value(
								 v)))) return eobj_nomem(err,
											 errlen);
		me[i].key = eobj_arena_strdup(a, key);
		me[i].op = ops[op]; /* static storage */
		me[i].n_values = json_array_size(values);
		me[i].values = vals;
		if (!me[i].key)
			return eobj_nomem(err, errlen);
	}
	s->n_exprs = json_array_size(exprs);
	s->exprs = me;
	*out = s;
	return 0;
}

static int decode_preemption(json_t *pre, struct eng_preemption *out, char *err, size_t errlen)
{
	static const char *const keys[] = { "withinClusterQueue", "reclaimWithinCohort",
					    "borrowWithinCohort", NULL };
	static const char *const bwc_keys[] = { "policy", "maxPriorityThreshold", NULL };
	static const char *const within[] = { "Never", "LowerPriority", "LowerOrNewerEqualPriority",
					      NULL };
	static const char *const reclaim[] = { "Never", "LowerPriority", "Any", NULL };
	static const char *const borrow[] = { "Never", "LowerPriority", NULL };
	int w, r, b = 0, rc, has = 0;
	int64_t threshold = 0;

	memset(out, 0, sizeof(*out));
	const char *pp = "spec.preemption";
	if ((rc = eobj_want_object(pre, pp, err, errlen)) != 0 ||
	    (rc = eobj_check_keys(pre, pp, keys, err, errlen)) != 0 ||
	    (rc = get_enum(pre, "withinClusterQueue", pp, within, 0, &w, err, errlen)) != 0 ||
	    (rc = get_enum(pre, "reclaimWithinCohort", pp, reclaim, 0, &r, err, errlen)) != 0)
		return rc;
	json_t *bwc = eobj_field(pre, "borrowWithinCohort");
	const char *bp = "spec.preemption.borrowWithinCohort";
	if ((rc = eobj_want_object(bwc, bp, err, errlen)) != 0 ||
	    (rc = eobj_check_keys(bwc, bp, bwc_keys, err, errlen)) != 0 ||
	    (rc = get_enum(bwc, "policy", bp, borrow, 0, &b, err, errlen)) != 0 ||
	    (rc = eobj_get_int(bwc, "maxPriorityThreshold", bp, INT32_MIN, INT32_MAX, &has,
			       &threshold, err, errlen)) != 0)
		return rc;
	if (r == 0 && b != 0)
		return eobj_bad(err, errlen,
				"spec.preemption: reclaimWithinCohort=Never and "
				"borrowWithinCohort.policy!=Never: "
				"borrowing with preemption needs reclaimWithinCohort");
	static const enum eng_within_cq within_v[] = { ENG_WITHIN_NEVER, ENG_WITHIN_LOWER_PRIORITY,
						       ENG_WITHIN_LOWER_OR_NEWER_EQUAL };
	static const enum eng_reclaim reclaim_v[] = { ENG_RECLAIM_NEVER, ENG_RECLAIM_LOWER_PRIORITY,
						      ENG_RECLAIM_ANY };
	out->within_cluster_queue = within_v[w];
	out->reclaim_within_cohort = reclaim_v[r];
	out->borrow_within_cohort = b ? ENG_BORROW_WITHIN_LOWER_PRIORITY : ENG_BORROW_WITHIN_NEVER;
	out->has_max_priority_threshold = has;
	out->max_priority_threshold = (int32_t)threshold;
	return 0;
}

static int decode_fungibility(json_t *ff, struct eng_cq_spec *spec, char *err, size_t errlen)
{
	static const char *const keys[] = { "whenCanBorrow", "whenCanPreempt", "preference", NULL };
	static const char *const when[] = { "MayStopSearch", "TryNextFlavor", NULL };
	static const char *const pref[] = { "BorrowingOverPreemption", "PreemptionOverBorrowing",
					    NULL };
	const char *path = "spec.flavorFungibility";
	int borrow, preempt, p, rc;

	if ((rc = eobj_want_object(ff, path, err, errlen)) != 0 ||
	    (rc = eobj_check_keys(ff, path, keys, err, errlen)) != 0 ||
	    (rc = get_enum(ff, "whenCanBorrow", path, when, 0, &borrow, err, errlen)) != 0 ||
	    (rc = get_enum(ff, "whenCanPreempt", path, when, 1, &preempt, err, errlen)) != 0 ||
	    (rc = get_enum(ff, "preference", path, pref, -1, &p, err, errlen)) != 0)
		return rc;
	if (p >= 0 && (borrow != 1 || preempt != 1))
		return eobj_bad(err, errlen,
				"%s.preference: \"%s\" requires both whenCanBorrow and "
				"whenCanPreempt to be "
				"TryNextFlavor",
				path, pref[p]);
	spec->when_can_borrow = borrow ? ENG_BORROW_TRY_NEXT_FLAVOR : ENG_BORROW_MAY_STOP_SEARCH;
	spec->when_can_preempt = preempt ? ENG_PREEMPT_TRY_NEXT_FLAVOR :
					   ENG_PREEMPT_MAY_STOP_SEARCH;
	spec->prefer_preemption_over_borrowing = p == 1;
	return 0;
}

/*
 * spec.fairSharing of a ClusterQueue, Cohort or LocalQueue: {weight}, a Quantity >= 0. Kueue
 * keeps the Quantity and compares shares with its float value; muster reads it in milli-units
 * like every quantity, so a weight has milli precision: "0.0001" rounds up to 0.001 (never to
 * 0, which would mean an infinite share) and finer digits are lost. Unset: *has is 0 (the
 * engine's default, 1, as the CRD's).
 */
static int decode_fair_weight(json_t *spec, int *has, double *weight, char *err, size_t errlen)
{
	static const char *const keys[] = { "weight", NULL };
	const char *path = "spec.fairSharing";
	json_t *fs = eobj_field(spec, "fairSharing"), *w;
	int64_t milli;
	int rc;
	*has = 0;
	*weight = 1;
	if ((rc = eobj_want_object(fs, path, err, errlen)) != 0 ||
	    (rc = eobj_check_keys(fs, path, keys, err, errlen)) != 0)
		return rc;
	if (!(w = eobj_field(fs, "weight")))
		return 0;
	if ((rc = eobj_get_quantity(w, "spec.fairSharing.weight", &milli, err, errlen)) != 0)
		return rc;
	*has = 1;
	*weight = (double)milli / 1000.0;
	return 0;
}

/* spec.admissionScope: {admissionMode} (required), as the CRD has it. */
static int decode_admission_scope(json_t *spec, int *usage_based, char *err, size_t errlen)
{
	static const char *const keys[] = { "admissionMode", NULL };
	static const char *const modes[] = { "UsageBasedAdmissionFairSharing",
					     "NoAdmissionFairSharing", NULL };
	const char *path = "spec.admissionScope";
	json_t *scope = eobj_field(spec, "admissionScope");
	int mode, rc;
	*usage_based = 0;
	if ((rc = eobj_want_object(scope, path, err, errlen)) != 0 ||
	    (rc = eobj_check_keys(scope, path, keys, err, errlen)) != 0 ||
	    (rc = get_enum(scope, "admissionMode", path, modes, -1, &mode, err, errlen)) != 0)
		return rc;
	if (scope && mode < 0)
		return eobj_bad(err, errlen, "%s.admissionMode: required", path);
	*usage_based = mode == 0;
	return 0;
}

static const char *const stop_policies[] = { "None", "Hold", "HoldAndDrain", NULL };
static const enum eng_stop_policy stop_values[] = { ENG_STOP_NONE, ENG_STOP_HOLD,
						    ENG_STOP_HOLD_AND_DRAIN };

int eobj_cq_decode(json_t *cq, struct eobj_cq *out, char *err, size_t errlen)
{
	static const char *const top[] = {
		"apiVersion", "kind", "metadata", "spec", "status", NULL
	};
	static const char *const spec_keys[] = { "resourceGroups",
						 "cohortName",
						 "queueingStrategy",
						 "namespaceSelector",
						 "flavorFungibility",
						 "preemption",
						 "admissionChecksStrategy",
						 "stopPolicy",
						 "fairSharing",
						 "admissionScope",
						 "concurrentAdmissionPolicy",
						 NULL };
	static const char *const strategies[] = { "BestEffortFIFO", "StrictFIFO", NULL };
	struct eng_cq_spec *s = &out->spec;
	const char *name, *cohort;
	int rc, strategy, stop;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(cq))
		return eobj_bad(err, errlen, "ClusterQueue: must be an object");
	json_t *spec = eobj_field(cq, "spec");
	if ((rc = eobj_check_keys(cq, "", top, err, errlen)) != 0 ||
	    (rc = eobj_meta_name(cq, 0, &name, err, errlen)) != 0 ||
	    (rc = eobj_want_object(spec, "spec", err, errlen)) != 0 ||
	    (rc = eobj_check_keys(spec, "spec", spec_keys, err, errlen)) != 0 ||
	    (rc = eobj_get_string(spec, "cohortName", "spec", &cohort, err, errlen)) != 0)
		return rc;
	if (cohort && *cohort &&
	    (rc = check_subdomain(cohort, "spec.cohortName", err, errlen)) != 0)
		return rc;
	if (!(s->name = eobj_arena_strdup(&out->arena, name)))
		return eobj_nomem(err, errlen);
	/* An empty cohortName is no cohort, as in Kueue. */
	if (cohort && *cohort && !(s->cohort = eobj_arena_strdup(&out->arena, cohort)))
		return eobj_nomem(err, errlen);
	if ((rc = decode_groups(&out->arena, eobj_field(spec, "resourceGroups"), s->cohort != NULL,
				0, &s->n_groups, &s->groups, err, errlen)) != 0 ||
	    (rc = get_enum(spec, "queueingStrategy", "spec", strategies, 0, &strategy, err,
			   errlen)) != 0 ||
	    (rc = eobj_selector_decode(&out->arena, eobj_field(spec, "namespaceSelector"),
				       "spec.namespaceSelector", &s->namespace_selector, err,
				       errlen)) != 0 ||
	    (rc = decode_preemption(eobj_field(spec, "preemption"), &s->preemption, err, errlen)) !=
		    0 ||
	    (rc = decode_fungibility(eobj_field(spec, "flavorFungibility"), s, err, errlen)) != 0 ||
	    (rc = get_enum(spec, "stopPolicy", "spec", stop_policies, 0, &stop, err, errlen)) !=
		    0 ||
	    (rc = decode_fair_weight(spec, &s->has_fair_weight, &s->fair_weight, err, errlen)) !=
		    0 ||
	    (rc = decode_admission_scope(spec, &s->usage_based_afs, err, errlen)) != 0)
		return rc;
	s->queueing = strategy ? ENG_STRICT_FIFO : ENG_BEST_EFFORT_FIFO;
	s->stop_policy = stop_values[stop];
	/* Admission checks gate admission on external controllers; admitting without them, or
	 * pretending to run them, would both be wrong, so the caller decides. */
	if (eobj_field(spec, "admissionChecksStrategy"))
		out->unsupported =
			"spec.admissionChecksStrategy: admission checks are not implemented";
	else if (eobj_field(spec, "concurrentAdmissionPolicy"))
		out->unsupported =
			"spec.concurrentAdmissionPolicy: concurrent admission is not implemented";
	return 0;
}

void eobj_cq_release(struct eobj_cq *c)
{
	eobj_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------------------------ Cohort */

int eobj_cohort_decode(json_t *cohort, struct eobj_cohort *out, char *err, size_t errlen)
{
	static const char *const top[] = {
		"apiVersion", "kind", "metadata", "spec", "status", NULL
	};
	static const char *const spec_keys[] = { "parentName", "resourceGroups", "fairSharing",
						 NULL };
	struct eng_cohort_spec *s = &out->spec;
	const char *name, *parent;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(cohort))
		return eobj_bad(err, errlen, "Cohort: must be an object");
	json_t *spec = eobj_field(cohort, "spec");
	if ((rc = eobj_check_keys(cohort, "", top, err, errlen)) != 0 ||
	    (rc = eobj_meta_name(cohort, 0, &name, err, errlen)) != 0 ||
	    (rc = eobj_want_object(spec, "spec", err, errlen)) != 0 ||
	    (rc = eobj_check_keys(spec, "spec", spec_keys, err, errlen)) != 0 ||
	    (rc = eobj_get_string(spec, "parentName", "spec", &parent, err, errlen)) != 0)
		return rc;
	if (parent && *parent &&
	    (rc = check_subdomain(parent, "spec.parentName", err, errlen)) != 0)
		return rc;
	/* A cohort that names itself as parent is a cycle of one: the API accepts it, and the
	 * engine makes its ClusterQueues inactive as it does for any cohort cycle. */
	if (!(s->name = eobj_arena_strdup(&out->arena, name)))
		return eobj_nomem(err, errlen);
	if (parent && *parent && !(s->parent = eobj_arena_strdup(&out->arena, parent)))
		return eobj_nomem(err, errlen);
	if ((rc = decode_fair_weight(spec, &s->has_fair_weight, &s->fair_weight, err, errlen)) != 0)
		return rc;
	return decode_groups(&out->arena, eobj_field(spec, "resourceGroups"), s->parent != NULL, 1,
			     &s->n_groups, &s->groups, err, errlen);
}

void eobj_cohort_release(struct eobj_cohort *c)
{
	eobj_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

/* -------------------------------------------------------------------------- LocalQueue */

int eobj_local_queue_decode(json_t *lq, const char *default_namespace, struct eobj_local_queue *out,
			    char *err, size_t errlen)
{
	static const char *const top[] = {
		"apiVersion", "kind", "metadata", "spec", "status", NULL
	};
	static const char *const spec_keys[] = { "clusterQueue", "stopPolicy", "fairSharing",
						 NULL };
	const char *name, *ns, *cq;
	int rc, stop;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(lq))
		return eobj_bad(err, errlen, "LocalQueue: must be an object");
	json_t *spec = eobj_field(lq, "spec");
	if ((rc = eobj_check_keys(lq, "", top, err, errlen)) != 0 ||
	    (rc = eobj_meta_name(lq, 0, &name, err, errlen)) != 0 ||
	    (rc = meta_namespace(lq, default_namespace, &ns, err, errlen)) != 0 ||
	    (rc = eobj_want_object(spec, "spec", err, errlen)) != 0 ||
	    (rc = eobj_check_keys(spec, "spec", spec_keys, err, errlen)) != 0 ||
	    (rc = eobj_get_string(spec, "clusterQueue", "spec", &cq, err, errlen)) != 0 ||
	    (rc = get_enum(spec, "stopPolicy", "spec", stop_policies, 0, &stop, err, errlen)) !=
		    0 ||
	    (rc = decode_fair_weight(spec, &out->has_fair_weight, &out->fair_weight, err,
				     errlen)) != 0)
		return rc;
	if (!cq || !*cq)
		return eobj_bad(err, errlen, "spec.clusterQueue: required");
	if ((rc = check_subdomain(cq, "spec.clusterQueue", err, errlen)) != 0)
		return rc;
	out->name = eobj_arena_strdup(&out->arena, name);
	out->namespace_name = eobj_arena_strdup(&out->arena, ns);
	out->cluster_queue = eobj_arena_strdup(&out->arena, cq);
	out->stop = stop_values[stop];
	if (!out->name || !out->namespace_name || !out->cluster_queue)
		return eobj_nomem(err, errlen);
	return 0;
}

void eobj_local_queue_release(struct eobj_local_queue *q)
{
	eobj_arena_release(&q->arena);
	memset(q, 0, sizeof(*q));
}

/*
 * status.fairSharing.admissionFairSharingStatus: consumedResources and lastUpdate, both
 * required (the CRD's). Keys besides those read are let be: status is the controller's to
 * write, not a person's.
 */
int eobj_local_queue_afs_decode(json_t *lq, struct eobj_afs_status *out, char *err, size_t errlen)
{
	const char *path = "status.fairSharing.admissionFairSharingStatus";
	char p[PATH_MAX_LEN];
	const char *last, *name;
	json_t *v;
	int rc;

	memset(out, 0, sizeof(*out));
	json_t *status = eobj_field(lq, "status"), *fs = eobj_field(status, "fairSharing");
	if ((rc = eobj_want_object(status, "status", err, errlen)) != 0 ||
	    (rc = eobj_want_object(fs, "status.fairSharing", err, errlen)) != 0)
		return rc;
	json_t *afs = eobj_field(fs, "admissionFairSharingStatus");
	if (!afs)
		return 0;
	json_t *consumed = eobj_field(afs, "consumedResources");
	if ((rc = eobj_want_object(afs, path, err, errlen)) != 0 ||
	    (rc = eobj_get_string(afs, "lastUpdate", path, &last, err, errlen)) != 0)
		return rc;
	if (!last)
		return eobj_bad(err, errlen, "%s.lastUpdate: required", path);
	if (time_parse_rfc3339_ns(last, &out->last_update) != 0)
		return eobj_bad(err, errlen,
				"%s.lastUpdate: invalid time \"%.64s\": want RFC 3339, "
				"e.g. \"2025-01-01T00:00:00Z\"",
				path, last);
	eobj_pathf(p, sizeof(p), "%s.consumedResources", path);
	if (!consumed)
		return eobj_bad(err, errlen, "%s: required", p);
	if ((rc = eobj_want_object(consumed, p, err, errlen)) != 0)
		return rc;
	if (json_object_size(consumed) > QUOTA_MAX_RESOURCES)
		return eobj_bad(err, errlen, "%s: at most %d resources, got %zu", p,
				QUOTA_MAX_RESOURCES, json_object_size(consumed));
	json_object_foreach(consumed, name, v)
	{
		char vp[PATH_MAX_LEN];
		int64_t milli;
		eobj_pathf(vp, sizeof(vp), "%s.%s", p, name);
		if (!*name)
			return eobj_bad(err, errlen, "%s: a resource name is empty", p);
		if ((rc = eobj_get_quantity(v, vp, &milli, err, errlen)) != 0)
			return rc;
		struct eng_afs_resource *r = &out->consumed[out->n++];
		if (!(r->resource = eobj_arena_strdup(&out->arena, name)))
			return eobj_nomem(err, errlen);
		r->consumed = (double)milli / 1000.0; /* the engine counts units */
	}
	out->present = 1;
	return 0;
}

void eobj_afs_status_release(struct eobj_afs_status *s)
{
	eobj_arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}

/* --------------------------------------------------------------------------- Namespace */

/* Sets (adding or overwriting) kubernetes.io/metadata.name, which the apiserver owns. */
static int add_name_label(struct eobj_namespace *out, size_t n, struct quota_kv *labels)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (!strcmp(labels[i].key, LABEL_METADATA_NAME))
			break;
	struct quota_kv *all = labels;
	if (i == n) {
		all = eobj_arena_alloc(&out->arena, n + 1, sizeof(*all));
		if (!all)
			return -ENOMEM;
		if (n)
			memcpy(all, labels, n * sizeof(*all));
		all[n].key = eobj_arena_strdup(&out->arena, LABEL_METADATA_NAME);
		if (!all[n].key)
			return -ENOMEM;
		n++;
	}
	all[i].value = (char *)out->name;
	out->labels = all;
	out->n_labels = n;
	return 0;
}

int eobj_namespace_decode(json_t *ns, struct eobj_namespace *out, char *err, size_t errlen)
{
	const char *name;
	size_t n;
	struct quota_kv *labels;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(ns))
		return eobj_bad(err, errlen, "Namespace: must be an object");
	if ((rc = eobj_meta_name(ns, 1, &name, err, errlen)) != 0 ||
	    (rc = eobj_decode_string_map(&out->arena,
					 eobj_field(eobj_field(ns, "metadata"), "labels"),
					 "metadata.labels", 0, &n, &labels, err, errlen)) != 0)
		return rc;
	if (!(out->name = eobj_arena_strdup(&out->arena, name)) ||
	    add_name_label(out, n, labels) != 0)
		return eobj_nomem(err, errlen);
	return 0;
}

int eobj_namespace_default(const char *name, struct eobj_namespace *out)
{
	memset(out, 0, sizeof(*out));
	if (!(out->name = eobj_arena_strdup(&out->arena, name)))
		return -ENOMEM;
	return add_name_label(out, 0, NULL);
}

void eobj_namespace_release(struct eobj_namespace *n)
{
	eobj_arena_release(&n->arena);
	memset(n, 0, sizeof(*n));
}

/* --------------------------------------------------------------- WorkloadPriorityClass */

int eobj_priority_class_decode(json_t *obj, const char **name, int32_t *value, char *err,
			       size_t errlen)
{
	/* The union of both kinds' fields; globalDefault and preemptionPolicy are
	 * PriorityClass's. */
	static const char *const top[] = { "apiVersion",       "kind",
					   "metadata",         "value",
					   "description",      "globalDefault",
					   "preemptionPolicy", NULL };
	int has, rc;
	int64_t v;

	if (!json_is_object(obj))
		return eobj_bad(err, errlen, "priority class: must be an object");
	if ((rc = eobj_check_keys(obj, "", top, err, errlen)) != 0 ||
	    (rc = eobj_meta_name(obj, 0, name, err, errlen)) != 0 ||
	    (rc = eobj_get_int(obj, "value", "", INT32_MIN, INT32_MAX, &has, &v, err, errlen)) != 0)
		return rc;
	if (!has)
		return eobj_bad(err, errlen, "value: required");
	*value = (int32_t)v;
	return 0;
}

/* ---------------------------------------------------------------------------- Workload */

/* Checks what a pod template contributes to quota and placement, so a mistake is reported at
 * its own path rather than as a vague failure of the whole template. */
/* A field path built up segment by segment, cut to fit as eobj_pathf cuts it: a template's
 * checks name a path per field, and reformatting each from its prefix was most of their cost.
 * path_add and path_index return the new length, to come back to with path_cut. */
struct path {
	char s[PATH_MAX_LEN];
	size_t len;
	int quiet; /* no message wanted: the path stays "" (see decode_workload) */
};

static void path_put(struct path *p, const char *piece)
{
	if (p->quiet)
		return;
	/* What fits of it, in one copy: a byte at a time was most of checking a template. */
	size_t n = piece ? strlen(piece) : 0, room = sizeof(p->s) - 1 - p->len;
	if (n > room)
		n = room;
	memcpy(p->s + p->len, piece ? piece : "", n);
	p->len += n;
	p->s[p->len] = '\0';
}

static size_t path_add(struct path *p, const char *a, const char *b)
{
	path_put(p, a);
	path_put(p, b);
	return p->len;
}

static size_t path_index(struct path *p, size_t i)
{
	if (p->quiet)
		return p->len;
	char num[24];
	size_t k = sizeof(num);
	num[--k] = '\0';
	num[--k] = ']';
	do
		num[--k] = (char)('0' + i % 10);
	while ((i /= 10) != 0);
	num[--k] = '[';
	return path_add(p, num + k, NULL);
}

static void path_cut(struct path *p, size_t len)
{
	p->len = len;
	p->s[len] = '\0';
}

/* The template tpl checked to be an object with an object spec, whose fields are picked into f
 * (pod_spec_fields); p then holds the spec's path. */
static int pick_template(json_t *tpl, const char *path, struct path *p, json_t **f, char *err,
			 size_t errlen)
{
	int rc;
	if (!tpl)
		return eobj_bad(err, errlen, "%s: required", path);
	if ((rc = eobj_want_object(tpl, path, err, errlen)) != 0)
		return rc;
	json_t *spec = eobj_field(tpl, "spec");
	path_add(p, path, ".spec");
	if ((rc = eobj_want_object(spec, p->s, err, errlen)) != 0)
		return rc;
	(void)obj_pick(spec, pod_spec_fields, f);
	return 0;
}

/* A pod's requests for name would pass int64 milli-units. */
static int requests_overflow(const char *name, char *msg, size_t size)
{
	snprintf(msg, size, "requests for %s overflow", name);
	return -ERANGE;
}

/* Adds (or maxes) one amount into acc under name, which acc borrows; msg says why it can't. */
static int add_amount(struct pod_requests *acc, const char *name, int64_t milli, int take_max,
		      char *msg, size_t size)
{
	size_t i;
	for (i = 0; i < acc->n; i++)
		if (!strcmp(acc->names[i], name))
			break;
	if (i == acc->n) {
		if (acc->n == QUOTA_MAX_RESOURCES) {
			snprintf(msg, size, "more than %d resources requested",
				 QUOTA_MAX_RESOURCES);
			return -EINVAL;
		}
		acc->names[i] = name;
		acc->milli[i] = 0;
		acc->n++;
	}
	if (take_max) {
		if (milli > acc->milli[i])
			acc->milli[i] = milli;
	} else if (__builtin_add_overflow(acc->milli[i], milli, &acc->milli[i])) {
		return requests_overflow(name, msg, size);
	}
	return 0;
}

/* A pod's requests while its spec is walked (spec_requests): the first failure to sum is kept
 * for after the spec's checks, so that a field that is wrong is named before a sum too large.
 * Made by request_sum_init: its lists are a few KiB, of which only the counts need zeroing. */
struct request_sum {
	struct pod_requests *out;
	struct pod_requests sidecars; /* restartPolicy Always init containers so far */
	struct pod_requests init_max; /* each other init container, with the sidecars before it */
	int rc;
	char msg[96];
};

static void request_sum_init(struct request_sum *sum, struct pod_requests *out)
{
	sum->out = out;
	out->n = sum->sidecars.n = sum->init_max.n = 0;
	sum->rc = 0;
	sum->msg[0] = '\0';
}

/* Adds (or maxes) every amount of from into acc, unless summing failed already. */
static void sum_all(struct request_sum *sum, struct pod_requests *acc,
		    const struct pod_requests *from, int take_max)
{
	for (size_t k = 0; k < from->n && sum->rc == 0; k++)
		sum->rc = add_amount(acc, from->names[k], from->milli[k], take_max, sum->msg,
				     sizeof(sum->msg));
}

/* One container's requests, limits standing in where a request is missing, into its list
 * (l: 0 containers, 1 init containers) as Kubernetes schedules a pod: containers and sidecars
 * (restartPolicy Always) add up; any other init container runs alone, next to the sidecars
 * started before it, so the pod needs the max of those. */
static void sum_container(struct request_sum *sum, size_t l, json_t *container,
			  const struct pod_requests *one)
{
	if (l == 0) {
		sum_all(sum, sum->out, one, 0);
		return;
	}
	const char *restart = json_string_value(json_object_get(container, "restartPolicy"));
	if (restart && !strcmp(restart, "Always")) {
		sum_all(sum, sum->out, one, 0);
		sum_all(sum, &sum->sidecars, one, 0);
		return;
	}
	for (size_t k = 0; k < one->n && sum->rc == 0; k++) {
		int64_t v = one->milli[k];
		for (size_t s = 0; s < sum->sidecars.n; s++)
			if (!strcmp(sum->sidecars.names[s], one->names[k]) &&
			    __builtin_add_overflow(v, sum->sidecars.milli[s], &v)) {
				sum->rc = requests_overflow(one->names[k], sum->msg,
							    sizeof(sum->msg));
				return;
			}
		sum->rc =
			add_amount(&sum->init_max, one->names[k], v, 1, sum->msg, sizeof(sum->msg));
	}
}

/*
 * The containers, init containers and overhead of a pod spec's fields f (pod_spec_fields): each
 * quantity checked at its path under p (the spec's), and the pod's effective requests summed into
 * sum->out on the way, so each is read once: requests (limits standing in where unset) of the
 * containers and sidecars, the max with each other init container, plus overhead. Zero requests
 * take no quota and are dropped.
 */
static int spec_requests(json_t *const *f, struct path *p, struct request_sum *sum, char *err,
			 size_t errlen)
{
	static const char *const lists[] = { ".containers", ".initContainers" };
	static const char *const kinds[] = { ".requests", ".limits" };
	const size_t at_spec = p->len;
	int rc;
	_Static_assert(POD_SPEC_INIT == POD_SPEC_CONTAINERS + 1, "the lists are walked by index");

	for (size_t l = 0; l < 2; l++) {
		json_t *arr = f[POD_SPEC_CONTAINERS + l], *c;
		size_t i;
		path_cut(p, at_spec);
		const size_t at_list = path_add(p, lists[l], NULL);
		if ((rc = eobj_want_array(arr, p->s, err, errlen)) != 0)
			return rc;
		json_array_foreach(arr, i, c)
		{
			struct pod_requests one; /* only one.n zeroed: the lists are 1 KiB */
			one.n = 0;
			json_t *requests = NULL;
			path_cut(p, at_list);
			path_index(p, i);
			if (!json_is_object(c))
				return eobj_bad(err, errlen, "%s: must be an object, not %s", p->s,
						eobj_type_name(c));
			json_t *res = eobj_field(c, "resources");
			const size_t at_res = path_add(p, ".resources", NULL);
			if ((rc = eobj_want_object(res, p->s, err, errlen)) != 0)
				return rc;
			for (size_t k = 0; k < 2; k++) {
				json_t *list = eobj_field(res, kinds[k] + 1), *v;
				const char *rname;
				path_cut(p, at_res);
				const size_t at_kind = path_add(p, kinds[k], NULL);
				if ((rc = eobj_want_object(list, p->s, err, errlen)) != 0)
					return rc;
				if (k == 0)
					requests = list;
				json_object_foreach(list, rname, v)
				{
					int64_t milli;
					path_cut(p, at_kind);
					path_add(p, ".", rname);
					if ((rc = eobj_get_quantity(v, p->s, &milli, err,
								    errlen)) != 0)
						return rc;
					if (sum->rc == 0 &&
					    (k == 0 || !json_object_get(requests, rname)))
						sum->rc = add_amount(&one, rname, milli, 0,
								     sum->msg, sizeof(sum->msg));
				}
			}
			if (sum->rc == 0)
				sum_container(sum, l, c, &one);
		}
	}
	/* Only now, with every sidecar counted, the max with the init containers: an init
	 * container is done before later sidecars start, so they don't stack on it. */
	sum_all(sum, sum->out, &sum->init_max, 1);
	json_t *overhead = f[POD_SPEC_OVERHEAD], *v;
	const char *rname;
	path_cut(p, at_spec);
	const size_t at_overhead = path_add(p, ".overhead", NULL);
	if ((rc = eobj_want_object(overhead, p->s, err, errlen)) != 0)
		return rc;
	json_object_foreach(overhead, rname, v)
	{
		int64_t milli;
		path_cut(p, at_overhead);
		path_add(p, ".", rname);
		if ((rc = eobj_get_quantity(v, p->s, &milli, err, errlen)) != 0)
			return rc;
		if (sum->rc == 0)
			sum->rc = add_amount(sum->out, rname, milli, 0, sum->msg, sizeof(sum->msg));
	}
	struct pod_requests *out = sum->out;
	for (size_t k = 0; k < out->n;) {
		if (out->milli[k] == 0) {
			out->names[k] = out->names[out->n - 1];
			out->milli[k] = out->milli[out->n - 1];
			out->n--;
		} else {
			k++;
		}
	}
	path_cut(p, at_spec);
	return 0;
}

/* A failure to sum (see struct request_sum), reported at the spec's path. */
static int sum_failed(const struct request_sum *sum, const char *spec_path, char *err,
		      size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", spec_path, sum->msg);
	return sum->rc;
}

/* spec_requests with a failure to sum reported at once; out is empty when it fails. */
static int pod_spec_requests(json_t *const *f, struct path *p, struct pod_requests *out, char *err,
			     size_t errlen)
{
	struct request_sum sum;
	request_sum_init(&sum, out);
	int rc = spec_requests(f, p, &sum, err, errlen);
	if (rc == 0 && sum.rc != 0)
		rc = sum_failed(&sum, p->s, err, errlen);
	if (rc != 0)
		out->n = 0;
	return rc;
}

/* Checks a pod spec's fields f, picked by pick_template (its path in p), and sums the pod's
 * effective requests into out (spec_requests; a failure to sum is reported after the other
 * fields' checks). */
static int check_pod_spec(json_t *const *f, struct path *p, struct pod_requests *out, char *err,
			  size_t errlen)
{
	static const char *const expr_ops[] = { "In", "NotIn", "Exists", "DoesNotExist",
						"Gt", "Lt",    NULL };
	enum {
		F_PRIORITY = POD_SPEC_PRIORITY,
		F_CLASS = POD_SPEC_CLASS,
		F_SELECTOR = POD_SPEC_SELECTOR,
		F_TOLERATIONS = POD_SPEC_TOLERATIONS,
		F_AFFINITY = POD_SPEC_AFFINITY
	};
	const size_t at_spec = p->len;
	struct request_sum sum;
	json_t *v;
	const char *rname;
	int rc;

	{
		int has;
		int64_t prio;
		const char *pc;
		if ((rc = int_value(f[F_PRIORITY], "priority", p->s, INT32_MIN, INT32_MAX, &has,
				    &prio, err, errlen)) != 0 ||
		    (rc = string_value(f[F_CLASS], "priorityClassName", p->s, &pc, err, errlen)) !=
			    0)
			return rc;
	}
	request_sum_init(&sum, out);
	if ((rc = spec_requests(f, p, &sum, err, errlen)) != 0)
		return rc;
	json_t *selector = f[F_SELECTOR];
	path_cut(p, at_spec);
	path_add(p, ".nodeSelector", NULL);
	if ((rc = eobj_want_object(selector, p->s, err, errlen)) != 0)
		return rc;
	json_object_foreach(selector, rname, v) if (!json_is_string(v)) return eobj_bad(
		err, errlen, "%s.%s: must be a string, not %s", p->s, rname, eobj_type_name(v));
	path_cut(p, at_spec);
	path_add(p, ".tolerations", NULL);
	if ((rc = check_tolerations(f[F_TOLERATIONS], p->s, err, errlen)) != 0)
		return rc;
	const char *tp = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
	json_t *required = obj_path(f[F_AFFINITY], strchr(tp, '.') + 1);
	path_cut(p, at_spec);
	path_add(p, ".", tp);
	if ((rc = eobj_want_object(required, p->s, err, errlen)) != 0)
		return rc;
	json_t *terms = eobj_field(required, "nodeSelectorTerms"), *t;
	size_t i;
	const size_t at_terms = path_add(p, ".nodeSelectorTerms", NULL);
	if ((rc = eobj_want_array(terms, p->s, err, errlen)) != 0)
		return rc;
	json_array_foreach(terms, i, t)
	{
		path_cut(p, at_terms);
		path_index(p, i);
		if (!json_is_object(t))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p->s,
					eobj_type_name(t));
		json_t *exprs = eobj_field(t, "matchExpressions"), *e;
		size_t k;
		const size_t at_exprs = path_add(p, ".matchExpressions", NULL);
		if ((rc = eobj_want_array(exprs, p->s, err, errlen)) != 0)
			return rc;
		json_array_foreach(exprs, k, e)
		{
			const char *key;
			json_t *values;
			int op;
			path_cut(p, at_exprs);
			path_index(p, k);
			if ((rc = check_match_expr(e, p->s, NULL, expr_ops, 0, &key, &op, &values,
						   err, errlen)) != 0)
				return rc;
		}
	}
	path_cut(p, at_spec);
	return sum.rc ? sum_failed(&sum, p->s, err, errlen) : 0;
}

int eobj_check_template(json_t *tpl, const char *path, char *err, size_t errlen)
{
	json_t *f[POD_SPEC_N];
	struct pod_requests requests;
	struct path p = { .len = 0, .quiet = !err };
	int rc = pick_template(tpl, path, &p, f, err, errlen);
	return rc ? rc : check_pod_spec(f, &p, &requests, err, errlen);
}

int eobj_pod_requests(json_t *spec, const char *path, struct pod_requests *out, char *err,
		      size_t errlen)
{
	json_t *f[POD_SPEC_N];
	struct path p = { .len = 0, .quiet = !err };
	int rc = eobj_want_object(spec, path, err, errlen);
	out->n = 0;
	if (rc != 0)
		return rc;
	path_add(&p, path, NULL);
	(void)obj_pick(spec, pod_spec_fields, f);
	return pod_spec_requests(f, &p, out, err, errlen);
}

int podset_view_decode(json_t *podset, struct podset_view *v, char *err, size_t errlen)
{
	static const char *const podset_fields[] = { "name", "template", "count", NULL };
	json_t *pf[3], *f[POD_SPEC_N];
	struct pod_requests requests;
	struct path p = { .len = 0, .quiet = !err };
	int rc;

	podset_view_clear(v);
	(void)obj_pick(podset, podset_fields, pf);
	if ((rc = pick_template(pf[1], "template", &p, f, err, errlen)) != 0 ||
	    (rc = pod_spec_requests(f, &p, &requests, err, errlen)) != 0)
		return rc;
	return podset_view_from_fields(pf[0], pf[2], f, &requests, v, err, errlen);
}

static int dup_into(struct eobj_arena *a, const char *s, const char **out)
{
	*out = eobj_arena_strdup(a, s);
	return *out ? 0 : -ENOMEM;
}

/* Copies a string into the arena; NULL stays NULL. */
static int own(struct eobj_arena *a, const char **s)
{
	if (!*s)
		return 0;
	return (*s = eobj_arena_strdup(a, *s)) ? 0 : -ENOMEM;
}

/* A podSet's requests and node constraints, copied into the arena: they point into its view
 * (fixed arrays sized for 64 resources, on the decoder's stack) and into the JSON object. */
static int own_podset(struct eobj_arena *a, struct quota_podset *ps)
{
	const char **res = eobj_arena_alloc(a, ps->n_requests, sizeof(*res));
	int64_t *per_pod = eobj_arena_alloc(a, ps->n_requests, sizeof(*per_pod));
	/* Node constraints are rare: none takes no room (most Workloads then fit the arena's
	 * first block). */
	struct quota_kv *sel = ps->n_selector ? eobj_arena_alloc(a, ps->n_selector, sizeof(*sel)) :
						NULL;
	struct quota_affinity_term *terms =
		ps->n_terms ? eobj_arena_alloc(a, ps->n_terms, sizeof(*terms)) : NULL;
	struct quota_taint *tols =
		ps->n_tolerations ? eobj_arena_alloc(a, ps->n_tolerations, sizeof(*tols)) : NULL;
	if (!res || !per_pod || (ps->n_selector && !sel) || (ps->n_terms && !terms) ||
	    (ps->n_tolerations && !tols))
		return -ENOMEM;
	for (size_t k = 0; k < ps->n_requests; k++) {
		res[k] = ps->resources[k];
		per_pod[k] = ps->per_pod[k];
		if (own(a, &res[k]) != 0)
			return -ENOMEM;
	}
	for (size_t k = 0; k < ps->n_selector; k++) {
		sel[k] = ps->node_selector[k];
		if (own(a, (const char **)&sel[k].key) != 0 ||
		    own(a, (const char **)&sel[k].value) != 0)
			return -ENOMEM;
	}
	for (size_t t = 0; t < ps->n_terms; t++) {
		const struct quota_affinity_term *src = &ps->terms[t];
		struct quota_match_expr *exprs = eobj_arena_alloc(a, src->n_exprs, sizeof(*exprs));
		if (!exprs)
			return -ENOMEM;
		terms[t] = *src;
		for (size_t k = 0; k < src->n_exprs; k++) {
			struct quota_match_expr *e = &exprs[k];
			*e = src->exprs[k];
			const char **values = eobj_arena_alloc(a, e->n_values, sizeof(*values));
			if (!values || own(a, &e->key) != 0 || own(a, &e->op) != 0)
				return -ENOMEM;
			for (size_t x = 0; x < e->n_values; x++)
				if (!(values[x] = eobj_arena_strdup(a, e->values[x])))
					return -ENOMEM;
			e->values = e->n_values ? values : NULL;
		}
		terms[t].exprs = exprs;
	}
	for (size_t k = 0; k < ps->n_tolerations; k++) {
		tols[k] = ps->tolerations[k];
		if (own(a, (const char **)&tols[k].key) != 0 ||
		    own(a, (const char **)&tols[k].value) != 0 ||
		    own(a, (const char **)&tols[k].effect) != 0)
			return -ENOMEM;
	}
	ps->resources = res;
	ps->per_pod = per_pod;
	ps->node_selector = sel;
	ps->terms = terms;
	ps->tolerations = tols;
	return 0;
}

/* status.admission into out->admission; the podSets and their views are already decoded. */
static int decode_admission(struct eobj_workload *out, json_t *adm, char *err, size_t errlen)
{
	static const char *const keys[] = { "clusterQueue", "podSetAssignments", NULL };
	static const char *const psa_keys[] = { "name",
						"flavors",
						"resourceUsage",
						"count",
						"topologyAssignment",
						"delayedTopologyRequest",
						NULL };
	struct eng_assignment *as;
	const char *path = "status.admission";
	const char *cq;
	char p[PATH_MAX_LEN], q[PATH_MAX_LEN];
	int rc;

	if (!(as = out->admission = eobj_arena_alloc(&out->arena, 1, sizeof(*as))))
		return eobj_nomem(err, errlen);
	if (!adm)
		return eobj_bad(err, errlen,
				"%s: required when the QuotaReserved condition is True", path);
	if ((rc = eobj_want_object(adm, path, err, errlen)) != 0 ||
	    (rc = eobj_check_keys(adm, path, keys, err, errlen)) != 0 ||
	    (rc = eobj_get_string(adm, "clusterQueue", path, &cq, err, errlen)) != 0)
		return rc;
	if (!cq || !*cq)
		return eobj_bad(err, errlen, "%s.clusterQueue: required", path);
	if ((rc = check_subdomain(cq, "status.admission.clusterQueue", err, errlen)) != 0)
		return rc;
	if (dup_into(&out->arena, cq, &as->cluster_queue) != 0)
		return eobj_nomem(err, errlen);
	json_t *psas = eobj_field(adm, "podSetAssignments"), *psa;
	size_t i;
	eobj_pathf(p, sizeof(p), "%s.podSetAssignments", path);
	if ((rc = eobj_want_array(psas, p, err, errlen)) != 0)
		return rc;
	if (json_array_size(psas) > 18)
		return eobj_bad(err, errlen, "%s: at most 18 entries", p);
	json_array_foreach(psas, i, psa)
	{
		const char *name;
		eobj_pathf(p, sizeof(p), "%s.podSetAssignments[%zu]", path, i);
		if (!json_is_object(psa))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p,
					eobj_type_name(psa));
		if ((rc = eobj_check_keys(psa, p, psa_keys, err, errlen)) != 0 ||
		    (rc = eobj_get_string(psa, "name", p, &name, err, errlen)) != 0)
			return rc;
		if (!name)
			name = "main";
		size_t ps;
		for (ps = 0; ps < out->spec.n_podsets; ps++)
			if (!strcmp(out->spec.podsets[ps].name, name))
				break;
		if (ps == out->spec.n_podsets)
			return eobj_bad(err, errlen,
					"%s.name: \"%.64s\" is not a podSet of spec.podSets", p,
					name);
		for (size_t k = 0; k < as->n_podsets; k++)
			if (!strcmp(as->podsets[k].name, name))
				return eobj_bad(err, errlen, "%s.name: duplicate podSet \"%.64s\"",
						p, name);
		const struct eng_podset *sps = &out->spec.podsets[ps];
		struct eng_podset_assignment *pa = &as->podsets[as->n_podsets];
		int has;
		int64_t count;
		if ((rc = eobj_get_int(psa, "count", p, 0, INT32_MAX, &has, &count, err, errlen)) !=
		    0)
			return rc;
		pa->name = sps->name;
		pa->count = has ? count : sps->count;
		json_t *flavors = eobj_field(psa, "flavors"),
		       *usage = eobj_field(psa, "resourceUsage"), *v;
		const char *res;
		eobj_pathf(q, sizeof(q), "%s.flavors", p);
		if ((rc = eobj_want_object(flavors, q, err, errlen)) != 0)
			return rc;
		eobj_pathf(q, sizeof(q), "%s.resourceUsage", p);
		if ((rc = eobj_want_object(usage, q, err, errlen)) != 0)
			return rc;
		json_object_foreach(usage, res, v)
		{
			if (!eobj_field(flavors, res))
				return eobj_bad(err, errlen,
						"%s.resourceUsage.%s: no flavor for it in flavors",
						p, res);
		}
		json_object_foreach(flavors, res, v)
		{
			eobj_pathf(q, sizeof(q), "%s.flavors.%s", p, res);
			if (!json_is_string(v))
				return eobj_bad(err, errlen, "%s: must be a string, not %s", q,
						eobj_type_name(v));
			if ((rc = check_subdomain(json_string_value(v), q, err, errlen)) != 0)
				return rc;
			if (pa->n == QUOTA_MAX_RESOURCES)
				return eobj_bad(err, errlen, "%s.flavors: more than %d resources",
						p, QUOTA_MAX_RESOURCES);
			int64_t amount = 0;
			json_t *u = eobj_field(usage, res);
			if (u) {
				eobj_pathf(q, sizeof(q), "%s.resourceUsage.%s", p, res);
				if ((rc = eobj_get_quantity(u, q, &amount, err, errlen)) != 0)
					return rc;
			} else {
				/* Kueue always writes resourceUsage; without it, count x
				 * request. */
				for (size_t r = 0; r < sps->pod.n_requests; r++)
					if (!strcmp(sps->pod.resources[r], res) &&
					    __builtin_mul_overflow(pa->count, sps->pod.per_pod[r],
								   &amount))
						return eobj_bad(err, errlen,
								"%s.flavors.%s: usage overflows", p,
								res);
			}
			if (dup_into(&out->arena, res, &pa->resources[pa->n]) != 0 ||
			    dup_into(&out->arena, json_string_value(v), &pa->flavors[pa->n]) != 0)
				return eobj_nomem(err, errlen);
			pa->usage[pa->n] = amount;
			pa->n++;
		}
		/* An admission that charges nothing for a requested resource would let usage
		 * exceed quota unnoticed. */
		for (size_t r = 0; r < sps->pod.n_requests; r++)
			if (!eobj_field(flavors, sps->pod.resources[r]))
				return eobj_bad(err, errlen,
						"%s.flavors: no flavor for requested resource %s",
						p, sps->pod.resources[r]);
		as->n_podsets++;
	}
	for (size_t ps = 0; ps < out->spec.n_podsets; ps++) {
		size_t k;
		for (k = 0; k < as->n_podsets; k++)
			if (!strcmp(as->podsets[k].name, out->spec.podsets[ps].name))
				break;
		if (k == as->n_podsets)
			return eobj_bad(err, errlen,
					"%s.podSetAssignments: no assignment for podSet \"%s\"",
					path, out->spec.podsets[ps].name);
	}
	return 0;
}

/* Whether status (the Workload's, NULL when absent) has a condition of type that is True. */
static int condition_status(json_t *status, const char *type, int *is_true, char *err,
			    size_t errlen)
{
	json_t *conds = json_object_get(status, "conditions"), *c;
	size_t i;
	int rc = eobj_want_array(conds, "status.conditions", err, errlen);
	*is_true = 0;
	if (rc != 0)
		return rc;
	json_array_foreach(conds, i, c)
	{
		char p[64];
		eobj_pathf(p, sizeof(p), "status.conditions[%zu]", i);
		if (!json_is_object(c))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p,
					eobj_type_name(c));
		const char *t = json_string_value(eobj_field(c, "type"));
		const char *s = json_string_value(eobj_field(c, "status"));
		if (t && !strcmp(t, type))
			*is_true = s && !strcmp(s, "True");
	}
	return 0;
}

/* Formats a field path for a message, or leaves it "" when no message is wanted (err NULL). */
__attribute__((format(printf, 4, 5))) static void message_path(const char *err, char *dst,
							       size_t size, const char *fmt, ...)
{
	va_list ap;
	dst[0] = '\0';
	if (!err)
		return;
	va_start(ap, fmt);
	(void)strfmt_v(dst, size, fmt, ap);
	va_end(ap);
}

/* One pass of the common decoder (see decode_workload); with err NULL it makes no message and
 * formats no field path. */
static int decode_pass(json_t *wl, const char *default_namespace, json_t *wpcs, json_t *pcs,
		       const struct integration *in, json_t *owner, struct eobj_arena *shared,
		       struct eobj_workload *out, char *err, size_t errlen)
{
	static const char *const top[] = {
		"apiVersion", "kind", "metadata", "spec", "status", NULL
	};
	static const char *const spec_keys[] = { "podSets",          "queueName",
						 "priorityClassRef", "priority",
						 "active",           "maximumExecutionTimeSeconds",
						 "preemptionGates",  NULL };
	static const char *const podset_keys[] = { "name",     "template",        "count",
						   "minCount", "topologyRequest", NULL };
	static const char *const ref_keys[] = { "group", "kind", "name", NULL };
	static const char *const meta_keys[] = { "name", "namespace", "creationTimestamp", NULL };
	/* Each object's fields are picked in one walk (obj_pick), in the lists' order. */
	enum { T_API, T_KIND, T_META, T_SPEC, T_STATUS, T_N };
	enum { M_NAME, M_NAMESPACE, M_CREATED, M_N };
	enum { S_PODSETS, S_QUEUE, S_REF, S_PRIORITY, S_ACTIVE, S_MAX_EXEC, S_GATES, S_N };
	enum { P_NAME, P_TEMPLATE, P_COUNT, P_MIN_COUNT, P_TOPOLOGY, P_N };
	json_t *tf[T_N], *mf[M_N], *sf[S_N];
	struct eng_workload_spec *s = &out->spec;
	const char *name, *ns, *queue, *created;
	char p[PATH_MAX_LEN];
	int rc, has;
	int64_t v;

	memset(out, 0, sizeof(*out));
	out->arena.shared = shared;
	if (!json_is_object(wl))
		return eobj_bad(err, errlen, "Workload: must be an object");
	out->obj = json_incref(wl);
	if ((rc = pick_fields(wl, "", top, tf, err, errlen)) != 0 ||
	    (rc = eobj_want_object(tf[T_META], "metadata", err, errlen)) != 0)
		return rc;
	(void)obj_pick(tf[T_META], meta_keys, mf); /* metadata has more fields than these */
	json_t *spec = tf[T_SPEC];
	if ((rc = name_value(mf[M_NAME], 0, &name, err, errlen)) != 0 ||
	    (rc = namespace_value(mf[M_NAMESPACE], default_namespace, &ns, err, errlen)) != 0 ||
	    (rc = string_value(mf[M_CREATED], "creationTimestamp", "metadata", &created, err,
			       errlen)) != 0)
		return rc;
	if (!spec)
		return eobj_bad(err, errlen, "spec: required");
	if ((rc = eobj_want_object(spec, "spec", err, errlen)) != 0 ||
	    (rc = pick_fields(spec, "spec", spec_keys, sf, err, errlen)) != 0 ||
	    (rc = string_value(sf[S_QUEUE], "queueName", "spec", &queue, err, errlen)) != 0)
		return rc;
	if (queue && *queue && (rc = check_subdomain(queue, "spec.queueName", err, errlen)) != 0)
		return rc;
	/* "namespace/name", the name its own tail (both are checked names: short, no '/'). */
	size_t ns_len = strlen(ns), name_len = strlen(name);
	char *key = eobj_arena_alloc(&out->arena, ns_len + name_len + 2, 1);
	if (!key)
		return eobj_nomem(err, errlen);
	memcpy(key, ns, ns_len);
	key[ns_len] = '/';
	memcpy(key + ns_len + 1, name, name_len + 1);
	s->key = key;
	out->name = key + ns_len + 1;
	if (dup_into(&out->arena, ns, &s->namespace_name) != 0 ||
	    dup_into(&out->arena, queue ? queue : "", &s->queue) != 0)
		return eobj_nomem(err, errlen);
	if (created) {
		if (time_parse_rfc3339_ns(created, &s->queue_time) != 0)
			return eobj_bad(err, errlen,
					"metadata.creationTimestamp: invalid time \"%.64s\": must "
					"be RFC 3339, "
					"e.g. 2025-01-02T03:04:05Z",
					created);
		out->has_queue_time = 1;
	}

	/* Priority: what Kueue's webhook resolved into spec.priority wins. */
	if ((rc = int_value(sf[S_PRIORITY], "priority", "spec", INT32_MIN, INT32_MAX, &has, &v, err,
			    errlen)) != 0)
		return rc;
	json_t *ref = sf[S_REF];
	if ((rc = eobj_want_object(ref, "spec.priorityClassRef", err, errlen)) != 0 ||
	    (rc = eobj_check_keys(ref, "spec.priorityClassRef", ref_keys, err, errlen)) != 0)
		return rc;
	if (has) {
		s->priority = (int32_t)v;
	} else if (ref) {
		const char *group, *kind, *cname;
		const char *rp = "spec.priorityClassRef";
		if ((rc = eobj_get_string(ref, "group", rp, &group, err, errlen)) != 0 ||
		    (rc = eobj_get_string(ref, "kind", rp, &kind, err, errlen)) != 0 ||
		    (rc = eobj_get_string(ref, "name", rp, &cname, err, errlen)) != 0)
			return rc;
		if (!cname || !*cname)
			return eobj_bad(err, errlen, "spec.priorityClassRef.name: required");
		int kueue_class = group && !strcmp(group, KUEUE_GROUP) && kind &&
				  !strcmp(kind, "WorkloadPriorityClass");
		int pod_class = group && !strcmp(group, "scheduling.k8s.io") && kind &&
				!strcmp(kind, "PriorityClass");
		if (!kueue_class && !pod_class)
			return eobj_bad(err, errlen,
					"spec.priorityClassRef: must be a kueue.x-k8s.io "
					"WorkloadPriorityClass or "
					"a scheduling.k8s.io PriorityClass");
		json_t *cls = json_object_get(kueue_class ? wpcs : pcs, cname);
		if (!cls)
			return eobj_bad(err, errlen,
					"spec.priorityClassRef.name: %s \"%.64s\" doesn't exist",
					kind, cname);
		s->priority = (int32_t)json_integer_value(json_object_get(cls, "value"));
	}
	/* Kueue's CRD: int32, at least 1. The manager doesn't enforce it yet; the forecast
	 * (sim/forecast.h) takes it as the longest the Workload can run. */
	if ((rc = int_value(sf[S_MAX_EXEC], "maximumExecutionTimeSeconds", "spec", 1, INT32_MAX,
			    &has, &v, err, errlen)) != 0)
		return rc;
	out->has_max_execution = has;
	out->max_execution_seconds = has ? v : 0;
	json_t *active = sf[S_ACTIVE];
	if (active && !json_is_boolean(active))
		return eobj_bad(err, errlen, "spec.active: must be a boolean, not %s",
				eobj_type_name(active));
	out->inactive = json_is_false(active);

	json_t *podsets = sf[S_PODSETS], *ps;
	size_t i;
	if ((rc = eobj_want_array(podsets, "spec.podSets", err, errlen)) != 0)
		return rc;
	if (json_array_size(podsets) == 0)
		return eobj_bad(err, errlen, "spec.podSets: required: list 1 to 18 podSets");
	if (json_array_size(podsets) > 18)
		return eobj_bad(err, errlen, "spec.podSets: at most 18 podSets, got %zu",
				json_array_size(podsets));
	size_t n = json_array_size(podsets);
	struct eng_podset *eps = eobj_arena_alloc(&out->arena, n, sizeof(*eps));
	if (!eps)
		return eobj_nomem(err, errlen);
	int min_count_seen = 0;
	json_array_foreach(podsets, i, ps)
	{
		const char *psname;
		char tp[PATH_MAX_LEN];
		int64_t count = 1, min_count = 0;
		json_t *pf[P_N];
		message_path(err, p, sizeof(p), "spec.podSets[%zu]", i);
		if (!json_is_object(ps))
			return eobj_bad(err, errlen, "%s: must be an object, not %s", p,
					eobj_type_name(ps));
		if ((rc = pick_fields(ps, p, podset_keys, pf, err, errlen)) != 0 ||
		    (rc = string_value(pf[P_NAME], "name", p, &psname, err, errlen)) != 0)
			return rc;
		if (!psname)
			psname = "main";
		message_path(err, tp, sizeof(tp), "%s.name", p);
		if ((rc = check_label(psname, tp, err, errlen)) != 0)
			return rc;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(eps[k].name, psname))
				return eobj_bad(err, errlen, "%s.name: duplicate podSet \"%s\"", p,
						psname);
		if ((rc = int_value(pf[P_COUNT], "count", p, 0, INT32_MAX, &has, &v, err,
				    errlen)) != 0)
			return rc;
		if (has)
			count = v;
		if ((rc = int_value(pf[P_MIN_COUNT], "minCount", p, 1, INT32_MAX, &has, &v, err,
				    errlen)) != 0)
			return rc;
		if (has) {
			if (v > count)
				return eobj_bad(err, errlen,
						"%s.minCount: %lld must be at most count (%lld)", p,
						(long long)v, (long long)count);
			if (min_count_seen)
				return eobj_bad(err, errlen,
						"%s.minCount: at most one podSet may set minCount",
						p);
			min_count_seen = 1;
			min_count = v;
		}
		const struct quota_podset *known = memo_get(&out->arena, pf[P_TEMPLATE]);
		if (known) {
			eps[i].pod = *known;
		} else {
			if (in && err)
				in->template_path(owner, i, tp, sizeof(tp));
			else
				message_path(err, tp, sizeof(tp), "spec.podSets[%zu].template", i);
			json_t *f[POD_SPEC_N]; /* picked once, for the check and the view */
			struct pod_requests requests;
			struct path spec_path = { .len = 0, .quiet = !err };
			if ((rc = pick_template(pf[P_TEMPLATE], tp, &spec_path, f, err, errlen)) !=
				    0 ||
			    (rc = check_pod_spec(f, &spec_path, &requests, err, errlen)) != 0)
				return rc;
			/* The view is sized for 64 resources: a heap copy per Workload (over 1 KiB)
			 * made malloc consolidate its free lists each time. It lives here until its
			 * podSet is copied into the arena. */
			char verr[256];
			struct podset_view view;
			rc = podset_view_from_fields(pf[P_NAME], pf[P_COUNT], f, &requests, &view,
						     verr, sizeof(verr));
			if (rc == -ENOMEM)
				return eobj_nomem(err, errlen);
			if (rc != 0)
				return eobj_bad(err, errlen, "%s: %s", tp, verr);
			eps[i].pod = view.ps;
			rc = own_podset(&out->arena, &eps[i].pod);
			podset_view_release(&view);
			if (rc != 0)
				return eobj_nomem(err, errlen);
			memo_put(&out->arena, pf[P_TEMPLATE], &eps[i].pod);
		}
		if (dup_into(&out->arena, psname, &eps[i].name) != 0)
			return eobj_nomem(err, errlen);
		eps[i].count = count;
		eps[i].min_count = min_count;
		eps[i].pod.count = count;
		/* Requests are per pod; a gang's total must stay within int64 milli-units. */
		for (size_t r = 0; r < eps[i].pod.n_requests; r++) {
			int64_t total;
			if (__builtin_mul_overflow(count, eps[i].pod.per_pod[r], &total))
				return eobj_bad(err, errlen,
						"%s.count: %lld pods x %s request overflows int64 "
						"milli-units",
						p, (long long)count, eps[i].pod.resources[r]);
		}
	}
	s->n_podsets = n;
	s->podsets = eps;

	int reserved, finished;
	json_t *status = tf[T_STATUS];
	if ((rc = eobj_want_object(status, "status", err, errlen)) != 0 ||
	    (rc = condition_status(status, "QuotaReserved", &reserved, err, errlen)) != 0 ||
	    (rc = condition_status(status, "Finished", &finished, err, errlen)) != 0)
		return rc;
	out->finished = finished;
	json_t *adm = json_object_get(status, "admission");
	if (reserved) {
		if ((rc = decode_admission(out, json_is_null(adm) ? NULL : adm, err, errlen)) != 0)
			return rc;
		out->admitted = 1;
		/* When the quota was reserved: among equally ranked preemption victims Kueue takes
		 * the most recently admitted first. Unknown (no parsable time) counts as now. */
		int64_t reserved_ns;
		const char *since = json_string_value(
			json_object_get(condition_get(wl, "QuotaReserved"), "lastTransitionTime"));
		if (since && time_parse_rfc3339_ns(since, &reserved_ns) == 0)
			out->admission->quota_reserved_time = reserved_ns;
	} else if (adm && !json_is_null(adm)) {
		return eobj_bad(err, errlen,
				"status.admission: set, but the QuotaReserved condition is not "
				"True: "
				"an admitted Workload has both, a pending one neither");
	}
	return 0;
}

/*
 * The common decoder; with in, template errors name the owner's field (owner's spec.template)
 * instead of the Workload's. It decodes quietly first: a valid Workload, by far the most common,
 * then costs no message and no field path (formatting a path for every field read was a tenth
 * of decoding). Only an invalid one is decoded again, for its message.
 */
static int decode_workload(json_t *wl, const char *default_namespace, json_t *wpcs, json_t *pcs,
			   const struct integration *in, json_t *owner, struct eobj_arena *shared,
			   struct eobj_workload *out, char *err, size_t errlen)
{
	int rc = decode_pass(wl, default_namespace, wpcs, pcs, in, owner, shared, out, NULL, 0);
	if (rc == 0)
		return 0;
	if (rc == -ENOMEM)
		return eobj_nomem(err, errlen);
	if (!err || !errlen)
		return rc;
	eobj_workload_release(out);
	return decode_pass(wl, default_namespace, wpcs, pcs, in, owner, shared, out, err, errlen);
}

int eobj_workload_decode(json_t *wl, const char *default_namespace, json_t *wpcs, json_t *pcs,
			 struct eobj_workload *out, char *err, size_t errlen)
{
	return decode_workload(wl, default_namespace, wpcs, pcs, NULL, NULL, NULL, out, err,
			       errlen);
}

int eobj_workload_decode_shared(struct eobj_arena *shared, json_t *wl,
				const char *default_namespace, json_t *wpcs, json_t *pcs,
				struct eobj_workload *out, char *err, size_t errlen)
{
	return decode_workload(wl, default_namespace, wpcs, pcs, NULL, NULL, shared, out, err,
			       errlen);
}

int eobj_workload_decode_owner(const struct integration *in, json_t *obj,
			       const char *default_namespace, json_t *wpcs, json_t *pcs,
			       eobj_workload_new_fn workload_new, struct eobj_workload *out,
			       char *err, size_t errlen)
{
	const char *name, *ns, *queue, *wpc, *uid, *created;
	json_t *meta, *wl = NULL, *copy = NULL, *mcopy = NULL;
	int rc;
	struct job_priority jp;
	size_t from;
	char verr[256], path[PATH_MAX_LEN];

	memset(out, 0, sizeof(*out));
	if (!json_is_object(obj))
		return eobj_bad(err, errlen, "%s: must be an object", in->kind);
	meta = eobj_field(obj, "metadata");
	if ((rc = eobj_meta_name(obj, 0, &name, err, errlen)) != 0 ||
	    (rc = meta_namespace(obj, default_namespace, &ns, err, errlen)) != 0 ||
	    (rc = eobj_get_string(meta, "uid", "metadata", &uid, err, errlen)) != 0 ||
	    (rc = eobj_get_string(meta, "creationTimestamp", "metadata", &created, err, errlen)) !=
		    0 ||
	    (rc = eobj_want_object(eobj_field(meta, "labels"), "metadata.labels", err, errlen)) !=
		    0 ||
	    (rc = eobj_want_object(eobj_field(meta, "annotations"), "metadata.annotations", err,
				   errlen)) != 0)
		return rc;
	queue = obj_label(obj, LABEL_QUEUE_NAME);
	wpc = obj_label(obj, LABEL_PRIORITY_CLASS);
	if (!queue || !*queue)
		return eobj_bad(err, errlen,
				"metadata.labels[\"" LABEL_QUEUE_NAME
				"\"]: required: muster manages only "
				"%ss with this label",
				in->kind);
	rc = check_subdomain(queue, "metadata.labels[\"" LABEL_QUEUE_NAME "\"]", err, errlen);
	if (rc != 0)
		return rc;

	/* The conversion needs a uid (the Workload's name hashes it) and a namespace. */
	copy = json_copy(obj);
	mcopy = meta ? json_copy(meta) : json_object();
	if (!copy || !mcopy)
		goto nomem;
	if (!uid || !*uid) {
		char made[600];
		snprintf(made, sizeof(made), "%s.%s", ns, name);
		if (json_object_set_new(mcopy, "uid", json_string(made)) != 0)
			goto nomem;
	}
	if (json_object_set_new(mcopy, "namespace", json_string(ns)) != 0 ||
	    json_object_set(copy, "metadata", mcopy) != 0)
		goto nomem;
	/* The kind's own checks name its fields (spec.template..., spec.rayClusterSpec...). */
	wl = workload_new(in, copy, err, errlen);
	if (!wl) {
		rc = -EINVAL;
		goto out;
	}
	json_t *podsets = obj_path(wl, "spec.podSets");
	/* The manager's own resolution, so both agree on every object. */
	if (workload_priority_resolve(obj, podsets, wpcs, pcs, &jp, &from, verr, sizeof(verr)) !=
	    0) {
		if (wpc && *wpc)
			rc = eobj_bad(err, errlen,
				      "metadata.labels[\"" LABEL_PRIORITY_CLASS "\"]: %s", verr);
		else {
			in->template_path(obj, from, path, sizeof(path));
			rc = eobj_bad(err, errlen, "%s.spec.priorityClassName: %s", path, verr);
		}
		goto out;
	}
	if ((rc = workload_apply_priority(wl, &jp)) != 0) {
		rc = rc == -ENOMEM ? eobj_nomem(err, errlen) :
				     eobj_bad(err, errlen, "cannot set the priority");
		goto out;
	}
	if (created && json_object_set_new(json_object_get(wl, "metadata"), "creationTimestamp",
					   json_string(created)) != 0)
		goto nomem;
	rc = decode_workload(wl, ns, wpcs, pcs, in, obj, NULL, out, err, errlen);
	goto out;
nomem:
	rc = eobj_nomem(err, errlen);
out:
	json_decref(wl);
	json_decref(copy);
	json_decref(mcopy);
	return rc;
}

int eobj_workload_detach(struct eobj_workload *w)
{
	json_decref(w->obj);
	w->obj = NULL;
	return 0;
}

void eobj_workload_release(struct eobj_workload *w)
{
	json_decref(w->obj);
	eobj_arena_release(&w->arena);
	memset(w, 0, sizeof(*w));
}
