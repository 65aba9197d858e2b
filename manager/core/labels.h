/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Labels and the rules that match them: a LabelSelector (matchLabels and matchExpressions, as
 * a ClusterQueue's namespaceSelector and the configuration's managedJobsNamespaceSelector are)
 * and a node selector requirement (node affinity). This is the one place an operator means
 * something; every caller (the engine's namespaces, quota's flavors, placement's nodes, the
 * configuration) brings its own labels through a lookup and asks here.
 *
 * Operators are Kubernetes': In, NotIn, Exists, DoesNotExist, and for node selector
 * requirements Gt and Lt, which compare the label and the one value as base-10 int64 (a
 * value that isn't one, or overflows, doesn't match). An unknown operator never matches.
 * The API decoders let only the LabelSelector operators into a LabelSelector.
 *
 * Pure: no I/O, no allocation. Everything is borrowed from the caller.
 */
#ifndef MUSTER_LABELS_H
#define MUSTER_LABELS_H

#include <stddef.h>

struct quota_kv {
	char *key;
	char *value;
};

/* Frees n pairs whose strings are their own allocations, and the array (NULL is fine). */
void quota_kvs_free(struct quota_kv *kv, size_t n);

/* One match expression (a LabelSelectorRequirement or a NodeSelectorRequirement). */
struct quota_match_expr {
	const char *key;
	const char *op;
	size_t n_values;
	const char *const *values;
};

/* A Kubernetes LabelSelector: every matchLabels pair and every expression must hold. Empty
 * matches everything. */
struct label_selector {
	size_t n_labels;
	const struct quota_kv *labels;
	size_t n_exprs;
	const struct quota_match_expr *exprs;
};

/* The value of label key in the caller's labels, or NULL when it is not set. */
typedef const char *labels_get_fn(const void *labels, const char *key);

/* Whether a label whose value is have (NULL: the label is not set) meets e. */
int labels_expr_matches(const struct quota_match_expr *e, const char *have);

/* Whether the labels that get finds in labels meet s. */
int labels_selector_matches(const struct label_selector *s, labels_get_fn *get, const void *labels);

#endif
