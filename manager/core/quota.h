/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The quota model: ResourceFlavors, ClusterQueue quota tables, and what each admitted workload
 * charges against them. It answers one question: does this gang fit now, and in which flavor?
 *
 * Pure: no I/O, no JSON. The manager and the simulator translate API objects into these
 * structs. All quantities are int64 milli-units (see quantity.h). The model owns everything
 * passed to its *_set functions (they take ownership of the spec) and frees it on replace,
 * remove or quota_model_release.
 *
 * Semantics follow Kueue v1beta2 for a ClusterQueue without a cohort: resource groups are
 * independent; within a group the flavors are tried in order and the first one where every
 * requested resource fits within nominalQuota - usage is taken.
 */
#ifndef MUSTER_QUOTA_H
#define MUSTER_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#include "core/strmap.h"

struct quota_kv {
	char *key;
	char *value;
};

/* A taint on a flavor's nodes, or a toleration (key NULL = all keys for Exists). */
struct quota_taint {
	char *key;
	char *value;
	char *effect; /* "NoSchedule", "PreferNoSchedule", "NoExecute"; NULL/"" = any (tolerations) */
	int exists; /* toleration operator Exists (else Equal) */
};

struct quota_flavor {
	char *name;
	size_t n_labels;
	struct quota_kv *labels; /* nodeLabels */
	size_t n_taints;
	struct quota_taint *taints; /* nodeTaints */
	size_t n_tolerations;
	struct quota_taint *tolerations; /* added to admitted pods */
};

struct quota_flavor_quota {
	char *flavor;
	int64_t *nominal; /* one per resource of the group, same order */
};

struct quota_group {
	size_t n_resources;
	char **resources; /* coveredResources */
	size_t n_flavors;
	struct quota_flavor_quota *flavors;
};

struct quota_cq {
	char *name;
	size_t n_groups;
	struct quota_group *groups;
	int strict_fifo; /* queueingStrategy StrictFIFO */
	/* Set by the model: usage per (group, flavor, resource) cell, flattened in that order. */
	int64_t *usage;
	size_t n_cells;
};

/* One node-affinity match expression (operators In, NotIn, Exists, DoesNotExist, Gt, Lt). */
struct quota_match_expr {
	const char *key;
	const char *op;
	size_t n_values;
	const char *const *values;
};

struct quota_affinity_term {
	size_t n_exprs;
	const struct quota_match_expr *exprs;
	int has_match_fields; /* matchFields select nodes by name: the flavor can't decide them */
};

/* What a podSet asks for. Borrowed by the model for the duration of a call. */
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

/* Where a podSet landed: one flavor per requested resource and the total charged. */
struct quota_assigned {
	const char *resource; /* borrowed from the podset */
	const char *flavor; /* borrowed from the model; valid until the ClusterQueue changes */
	int64_t total; /* count * per_pod */
};

#define QUOTA_MAX_RESOURCES 64

struct quota_assignment {
	size_t n;
	struct quota_assigned items[QUOTA_MAX_RESOURCES];
};

/* A workload's charge against a ClusterQueue, as recorded in its status.admission. */
struct quota_charge_item {
	char *flavor;
	char *resource;
	int64_t amount;
};

struct quota_charge {
	char *cq;
	size_t n;
	struct quota_charge_item *items;
};

struct quota_model {
	struct strmap flavors; /* name -> struct quota_flavor * */
	struct strmap cqs; /* name -> struct quota_cq * */
	struct strmap charges; /* workload key -> struct quota_charge * */
};

void quota_model_init(struct quota_model *m);
void quota_model_release(struct quota_model *m);

/* Adds or replaces a flavor / ClusterQueue; the model takes ownership of f / cq (also on
 * failure). A replaced ClusterQueue gets its usage recomputed from the charges. 0 or -ENOMEM. */
int quota_set_flavor(struct quota_model *m, struct quota_flavor *f);
void quota_remove_flavor(struct quota_model *m, const char *name);
int quota_set_cq(struct quota_model *m, struct quota_cq *cq);
void quota_remove_cq(struct quota_model *m, const char *name);

const struct quota_cq *quota_get_cq(const struct quota_model *m, const char *name);

/* Records (replacing any previous) the charge of workload key; the model takes ownership of c.
 * Charges against a missing ClusterQueue are kept and counted once it appears. 0 or -ENOMEM. */
int quota_charge(struct quota_model *m, const char *key, struct quota_charge *c);
/* Releases the charge of workload key, if any. */
void quota_uncharge(struct quota_model *m, const char *key);
/* True if workload key holds a charge. */
int quota_is_charged(const struct quota_model *m, const char *key);

/*
 * Whether the ClusterQueue can admit at all: every flavor it names exists. On failure writes
 * the reason (Kueue's, e.g. "FlavorNotFound") and a message. Returns 1 active, 0 inactive.
 */
int quota_cq_active(const struct quota_model *m, const struct quota_cq *cq, char *reason,
		    size_t reason_len, char *msg, size_t msg_len);

/*
 * Assigns flavors to a podSet in ClusterQueue cq (which must be active).
 * Returns 0 when it fits now (out filled), or:
 *   -ENOSPC  it fits the quota but not the current usage: wait for quota;
 *   -E2BIG   it can never fit: the request exceeds every flavor's nominal quota;
 *   -ENOENT  no flavor matches (node selector, affinity or taints) or a resource is not covered;
 *   -ERANGE  count * request overflows.
 * On failure msg says why in words a user can act on.
 */
int quota_assign(const struct quota_model *m, const struct quota_cq *cq,
		 const struct quota_podset *ps, struct quota_assignment *out, char *msg,
		 size_t msg_len);

/* Usage and nominal of (flavor, resource) in cq; returns 0, or -ENOENT if cq has no such cell. */
int quota_cell(const struct quota_cq *cq, const char *flavor, const char *resource,
	       int64_t *nominal, int64_t *usage);

/* Frees specs built by callers (NULL-safe); the model uses them for what it owns. */
void quota_flavor_free(struct quota_flavor *f);
void quota_cq_free(struct quota_cq *cq);
void quota_charge_free(struct quota_charge *c);

/* Formats an amount of a resource canonically: byte-valued resources (memory, storage,
 * hugepages) in binary SI where exact ("1536Gi"), others in decimal SI (16000m -> "16").
 * A sum of quantities has no suffix of its own, so the resource decides. */
void quota_format_amount(const char *resource, int64_t milli, char *buf, size_t size);

/* Why a flavor's nodes can't take a podSet's pods (QUOTA_MATCH: they can). */
enum quota_mismatch {
	QUOTA_MATCH = 0,
	QUOTA_MISMATCH_TAINT, /* a NoSchedule/NoExecute taint neither the pods nor the flavor tolerate */
	QUOTA_MISMATCH_SELECTOR, /* nodeSelector contradicts the flavor's nodeLabels */
	QUOTA_MISMATCH_AFFINITY, /* no required node-affinity term matches the flavor's nodeLabels */
};

/* Matches a podSet's node constraints against a flavor: label keys the flavor doesn't set are
 * left to the node (they match). On QUOTA_MISMATCH_TAINT, *taint (if taint is non-NULL) points
 * at the untolerated taint, borrowed from f; otherwise it is set to NULL. */
enum quota_mismatch quota_flavor_match(const struct quota_flavor *f, const struct quota_podset *ps,
				       const struct quota_taint **taint);

/* Whether tolerations tolerate taint (Kubernetes' rules). */
int quota_tolerates(const struct quota_taint *tolerations, size_t n, const struct quota_taint *taint);

#endif
