/* SPDX-License-Identifier: Apache-2.0 */
#include "core/labels.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/num.h"

void quota_kvs_free(struct quota_kv *kv, size_t n)
{
	for (size_t i = 0; kv && i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

/* A base-10 int64 for Gt and Lt, as Kubernetes parses one (strconv.ParseInt(s, 10, 64)):
 * 0 when s is not one or is out of range, so that such a requirement never matches. */
static int parse_i64(const char *s, long long *out)
{
	int64_t v;
	if (num_parse_i64(s, INT64_MIN, INT64_MAX, &v) != 0)
		return 0;
	*out = v;
	return 1;
}

static int among(const struct quota_match_expr *e, const char *have)
{
	for (size_t i = 0; i < e->n_values; i++)
		if (e->values[i] && !strcmp(e->values[i], have))
			return 1;
	return 0;
}

int labels_expr_matches(const struct quota_match_expr *e, const char *have)
{
	const char *op = e->op ? e->op : "";
	if (!strcmp(op, "In"))
		return have && among(e, have);
	if (!strcmp(op, "NotIn"))
		return !have || !among(e, have);
	if (!strcmp(op, "Exists"))
		return have != NULL;
	if (!strcmp(op, "DoesNotExist"))
		return have == NULL;
	if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
		long long label, bound;
		if (!have || e->n_values != 1 || !parse_i64(have, &label) ||
		    !parse_i64(e->values[0], &bound))
			return 0;
		return !strcmp(op, "Gt") ? label > bound : label < bound;
	}
	return 0;
}

int labels_selector_matches(const struct label_selector *s, labels_get_fn *get, const void *labels)
{
	for (size_t i = 0; i < s->n_labels; i++) {
		const struct quota_kv *kv = &s->labels[i];
		const char *have = kv->key ? get(labels, kv->key) : NULL;
		if (!have || strcmp(have, kv->value ? kv->value : "") != 0)
			return 0;
	}
	for (size_t i = 0; i < s->n_exprs; i++) {
		const struct quota_match_expr *e = &s->exprs[i];
		if (!labels_expr_matches(e, e->key ? get(labels, e->key) : NULL))
			return 0;
	}
	return 1;
}
