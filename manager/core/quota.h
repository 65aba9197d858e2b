/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ResourceFlavors and the node constraints of a podSet: whether a flavor's nodes could take a
 * podSet's pods (node selector, required node affinity, taints and tolerations, judged against
 * the flavor's nodeLabels, nodeTaints and tolerations), and the canonical formatting of
 * resource amounts. The admission engine (engine.h) builds on these; all quota maths is there.
 *
 * Pure: no I/O, no JSON. The manager and the simulator translate API objects into these
 * structs. All quantities are int64 milli-units (see quantity.h).
 */
#ifndef MUSTER_QUOTA_H
#define MUSTER_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#include "core/labels.h"

/* A taint on a flavor's nodes, or a toleration (key NULL = all keys for Exists). */
struct quota_taint {
	char *key;
	char *value;
	/* "NoSchedule", "PreferNoSchedule", "NoExecute"; NULL/"" = any (tolerations) */
	char *effect;
	int exists; /* toleration operator Exists (else Equal) */
};

/* Frees n taints whose strings are their own allocations, and the array (NULL is fine). */
void quota_taints_free(struct quota_taint *t, size_t n);

struct quota_flavor {
	char *name;
	size_t n_labels;
	struct quota_kv *labels; /* nodeLabels */
	size_t n_taints;
	struct quota_taint *taints; /* nodeTaints */
	size_t n_tolerations;
	struct quota_taint *tolerations; /* added to admitted pods */
};

struct quota_affinity_term {
	size_t n_exprs;
	const struct quota_match_expr *exprs;
	int has_match_fields; /* matchFields select nodes by name: the flavor can't decide them */
};

/* What a podSet asks for: per-pod requests and node constraints. Borrowed, never owned. */
struct quota_podset {
	int64_t count; /* pods */
	size_t n_requests;
	const char *const *resources; /* resource names */
	const int64_t *per_pod; /* milli-units per pod, one per resource */
	size_t n_selector;
	const struct quota_kv *node_selector;
	size_t n_terms; /* required node affinity: terms are ORed */
	const struct quota_affinity_term *terms;
	size_t n_tolerations;
	const struct quota_taint *tolerations;
};

/* The most distinct resources a pod may request (and a resource group may cover): fixed, so
 * that requests and assignments fit in arrays without allocation. */
#define QUOTA_MAX_RESOURCES 64

/* Frees a flavor built on the heap, strings included (NULL-safe). */
void quota_flavor_free(struct quota_flavor *f);

/* Formats an amount of a resource canonically: byte-valued resources (memory, storage,
 * hugepages) in binary SI where exact ("1536Gi"), others in decimal SI (16000m -> "16").
 * A sum of quantities has no suffix of its own, so the resource decides. */
void quota_format_amount(const char *resource, int64_t milli, char *buf, size_t size);
/* The same in two steps, for callers that format many amounts of a resource they keep: whether
 * it counts bytes (binary SI), then the amount with that known. Returns the length written. */
int quota_resource_in_bytes(const char *resource);
size_t quota_format_amount_in(int in_bytes, int64_t milli, char *buf, size_t size);

/* Why a flavor's nodes can't take a podSet's pods (QUOTA_MATCH: they can). */
enum quota_mismatch {
	QUOTA_MATCH = 0,
	QUOTA_MISMATCH_TAINT, /* a NoSchedule/NoExecute taint neither the pods nor the flavor
				 tolerate */
	QUOTA_MISMATCH_SELECTOR, /* nodeSelector contradicts the flavor's nodeLabels */
	/* no required node-affinity term matches the flavor's nodeLabels */
	QUOTA_MISMATCH_AFFINITY,
};

/* Matches a podSet's node constraints against a flavor: label keys the flavor doesn't set are
 * left to the node (they match). On QUOTA_MISMATCH_TAINT, *taint (if taint is non-NULL) points
 * at the untolerated taint, borrowed from f; otherwise it is set to NULL. */
enum quota_mismatch quota_flavor_match(const struct quota_flavor *f, const struct quota_podset *ps,
				       const struct quota_taint **taint);

/* Whether tolerations tolerate taint (Kubernetes' rules). */
int quota_tolerates(const struct quota_taint *tolerations, size_t n,
		    const struct quota_taint *taint);

#endif
