/* SPDX-License-Identifier: Apache-2.0 */
#include "core/quota.h"

#include "core/labels.h"
#include "core/quantity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void quota_taints_free(struct quota_taint *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++) {
		free(t[i].key);
		free(t[i].value);
		free(t[i].effect);
	}
	free(t);
}

void quota_flavor_free(struct quota_flavor *f)
{
	if (!f)
		return;
	free(f->name);
	quota_kvs_free(f->labels, f->n_labels);
	quota_taints_free(f->taints, f->n_taints);
	quota_taints_free(f->tolerations, f->n_tolerations);
	free(f);
}

static int taint_tolerated(const struct quota_taint *tol, const struct quota_taint *taint)
{
	if (tol->effect && *tol->effect &&
	    strcmp(tol->effect, taint->effect ? taint->effect : "") != 0)
		return 0;
	if (!tol->key || !*tol->key) /* an empty key with Exists tolerates every taint */
		return tol->exists;
	if (strcmp(tol->key, taint->key ? taint->key : "") != 0)
		return 0;
	if (tol->exists)
		return 1;
	return !strcmp(tol->value ? tol->value : "", taint->value ? taint->value : "");
}

int quota_tolerates(const struct quota_taint *tolerations, size_t n,
		    const struct quota_taint *taint)
{
	for (size_t i = 0; i < n; i++)
		if (taint_tolerated(&tolerations[i], taint))
			return 1;
	return 0;
}

static const char *label_value(const struct quota_flavor *f, const char *key)
{
	for (size_t i = 0; i < f->n_labels; i++)
		if (!strcmp(f->labels[i].key, key))
			return f->labels[i].value;
	return NULL;
}

/* Evaluates a match expression against the flavor's labels. Keys the flavor does not set are
 * not decided by the flavor (the node will decide), so they match, as in Kueue. */
static int expr_matches(const struct quota_flavor *f, const struct quota_match_expr *e)
{
	const char *value = label_value(f, e->key);
	return !value || labels_expr_matches(e, value);
}

/* Whether the flavor's labels contradict the nodeSelector. Keys the flavor doesn't set are
 * decided by the node, not the flavor, so they match. */
static int selector_conflicts(const struct quota_flavor *f, const struct quota_podset *ps)
{
	for (size_t i = 0; i < ps->n_selector; i++) {
		const char *v = label_value(f, ps->node_selector[i].key);
		if (v && strcmp(v, ps->node_selector[i].value) != 0)
			return 1;
	}
	return 0;
}

static int affinity_matches(const struct quota_flavor *f, const struct quota_podset *ps)
{
	if (ps->n_terms == 0)
		return 1;
	for (size_t t = 0; t < ps->n_terms; t++) {
		/* An empty term matches nothing, as in Kubernetes. */
		int all = ps->terms[t].n_exprs > 0 || ps->terms[t].has_match_fields;
		for (size_t e = 0; e < ps->terms[t].n_exprs && all; e++)
			all = expr_matches(f, &ps->terms[t].exprs[e]);
		if (all)
			return 1;
	}
	return 0;
}

static const struct quota_taint *untolerated_taint(const struct quota_flavor *f,
						   const struct quota_podset *ps)
{
	for (size_t i = 0; i < f->n_taints; i++) {
		const struct quota_taint *taint = &f->taints[i];
		/* PreferNoSchedule never keeps a pod off a node. */
		if (taint->effect && !strcmp(taint->effect, "PreferNoSchedule"))
			continue;
		if (!quota_tolerates(ps->tolerations, ps->n_tolerations, taint) &&
		    !quota_tolerates(f->tolerations, f->n_tolerations, taint))
			return taint;
	}
	return NULL;
}

enum quota_mismatch quota_flavor_match(const struct quota_flavor *f, const struct quota_podset *ps,
				       const struct quota_taint **taint)
{
	const struct quota_taint *t = untolerated_taint(f, ps);
	if (taint)
		*taint = t;
	/* Taints first, as Kueue checks them before labels. */
	if (t)
		return QUOTA_MISMATCH_TAINT;
	if (selector_conflicts(f, ps))
		return QUOTA_MISMATCH_SELECTOR;
	if (!affinity_matches(f, ps))
		return QUOTA_MISMATCH_AFFINITY;
	return QUOTA_MATCH;
}

int quota_resource_in_bytes(const char *resource)
{
	return resource && (!strcmp(resource, "memory") || !strcmp(resource, "ephemeral-storage") ||
			    !strcmp(resource, "storage") || !strncmp(resource, "hugepages-", 10));
}

size_t quota_format_amount_in(int in_bytes, int64_t milli, char *buf, size_t size)
{
	int n = quantity_format_milli(milli, in_bytes ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI,
				      buf, size);
	if (n < 0)
		n = snprintf(buf, size, "%lldm", (long long)milli);
	if (n < 0 || size == 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

void quota_format_amount(const char *resource, int64_t milli, char *buf, size_t size)
{
	(void)quota_format_amount_in(quota_resource_in_bytes(resource), milli, buf, size);
}
