/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission engine: Kueue v1beta2 quota semantics over a cohort tree, whole-gang admission,
 * queueing, preemption and partial admission, in pure C. The manager feeds it from informers
 * and turns its decisions into API writes; `muster simulate` feeds it from files and prints
 * its decisions. Both get exactly the same answers because this is the only place they are made.
 *
 * Model (all names are copied; the caller keeps ownership of everything it passes in):
 *   ResourceFlavor  nodeLabels, nodeTaints, tolerations        (struct quota_flavor, quota.h)
 *   Cohort          parent, resource groups (a shared pool)    (struct eng_cohort_spec)
 *   ClusterQueue    cohort, resource groups, policies          (struct eng_cq_spec)
 *   LocalQueue      namespace/name -> ClusterQueue, stopPolicy
 *   Namespace       labels, for namespaceSelector
 *   Workload        queue, priority, queue-order time, podSets; pending, admitted or finished
 *
 * Quota maths per (flavor, resource) follow Kueue's hierarchical resource nodes (kueue-compat
 * §3.2): a node's subtree quota is its nominal quota plus what its children lend up; a child
 * keeps max(0, subtree - lendingLimit) for itself; usage beyond that local quota is charged
 * to the parent; borrowingLimit caps what a ClusterQueue (or cohort) may take beyond its own
 * subtree quota. No node's usage ever exceeds what it may take, at any level, including when
 * many workloads are admitted in one cycle: each admission is charged before the next is tried.
 *
 * A cycle (engine_cycle) walks pending workloads and reports decisions through a callback:
 *   ENG_ADMIT    the whole gang (or the largest part allowed by minCount) fits now; the
 *                engine has already charged it;
 *   ENG_PREEMPT  a victim must be evicted so a preemptor can fit later; the victim keeps its
 *                quota until the caller reports the eviction (engine_evict). The preemptor
 *                stays pending (ENG_PENDING WaitingForPreemptedWorkloads, "... Pending the
 *                preemption of N workload(s)")
 *                and is admitted first, before anything else in its cohort tree, with the
 *                flavors and counts it preempted for, once they fit; until then what it needs
 *                is held for it (nobody else takes what its victims free) and it preempts no
 *                more. If its victims are all gone and it still doesn't fit, it queues again.
 *                With preemptor NULL it is a drain instead: the workload's ClusterQueue or
 *                LocalQueue has stopPolicy HoldAndDrain (reason "ClusterQueueStopped" or
 *                "LocalQueueStopped", Kueue's Evicted reasons; the caller writes Evicted, not
 *                Preempted); it too keeps its quota until engine_evict. (A drain reuses
 *                ENG_PREEMPT rather than adding a kind so that callers' switches stay whole.)
 *   ENG_PENDING  the workload waits; reason (one of ENG_WHY_*) and message say why. Reported only
 * when a look at the workload gives a new (reason, message): a workload that is still short of
 *                quota after a release (others took it first) is not looked at again, and
 *                keeps its last message (its "N more needed" may be stale, as Kueue leaves
 *                workloads that are not heads), so that callers don't rewrite statuses.
 * Each victim or drained workload is reported once; the engine remembers it was told to go.
 * Unlike Kueue, which pops one head per ClusterQueue per cycle (kueue#14477), a cycle admits
 * every workload that fits, in order. Order within a cycle is Kueue's: workloads that fit
 * without borrowing first, then higher priority, then older queue-order time.
 *
 * Cost: work is proportional to what changed. Each ClusterQueue keeps its pending workloads in
 * a heap; a ClusterQueue is re-examined only when something in its cohort tree changed (quota,
 * usage released, a new workload, a flavor or namespace), like Kueue's inadmissible set; and
 * after a release, only workloads that the released quota could let in.
 *
 * Assignments (ENG_ADMIT, engine_admission) list per podSet every requested resource with its
 * flavor and usage (count x request), plus "pods" (the pod count) when the ClusterQueue covers
 * it, as Kueue's status.admission does. Their pointers are the engine's: valid during the
 * callback, or until the next engine call.
 *
 * Errors are negative errno values. Nothing here does I/O or allocates without checking.
 *
 * Threads: none. An engine is used by one thread at a time, including the const observers
 * (they may bring internal indexes up to date). The decision callback must not call back into
 * the
 * engine. */
#ifndef MUSTER_ENGINE_H
#define MUSTER_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "core/labels.h"
#include "core/quota.h"

struct engine;

/* --- specs ---------------------------------------------------------------------------------- */

struct eng_resource_quota {
	const char *name;
	int64_t nominal; /* milli-units */
	int has_borrowing_limit; /* unset = unlimited (within the cohort) */
	int64_t borrowing_limit;
	int has_lending_limit; /* unset = lend everything */
	int64_t lending_limit;
};

struct eng_flavor_quotas {
	const char *flavor;
	size_t n_resources;
	const struct eng_resource_quota *resources; /* one per covered resource, any order */
};

struct eng_resource_group {
	size_t n_covered;
	const char *const *covered;
	size_t n_flavors;
	const struct eng_flavor_quotas *flavors; /* in the order they are tried */
};

enum eng_queueing { ENG_BEST_EFFORT_FIFO, ENG_STRICT_FIFO };
enum eng_within_cq { ENG_WITHIN_NEVER, ENG_WITHIN_LOWER_PRIORITY, ENG_WITHIN_LOWER_OR_NEWER_EQUAL };
enum eng_reclaim { ENG_RECLAIM_NEVER, ENG_RECLAIM_LOWER_PRIORITY, ENG_RECLAIM_ANY };
enum eng_borrow_within { ENG_BORROW_WITHIN_NEVER, ENG_BORROW_WITHIN_LOWER_PRIORITY };
enum eng_when_can_borrow { ENG_BORROW_MAY_STOP_SEARCH, ENG_BORROW_TRY_NEXT_FLAVOR };
enum eng_when_can_preempt { ENG_PREEMPT_TRY_NEXT_FLAVOR, ENG_PREEMPT_MAY_STOP_SEARCH };
enum eng_stop_policy { ENG_STOP_NONE, ENG_STOP_HOLD, ENG_STOP_HOLD_AND_DRAIN };

struct eng_preemption {
	enum eng_within_cq within_cluster_queue;
	enum eng_reclaim reclaim_within_cohort;
	enum eng_borrow_within borrow_within_cohort;
	int has_max_priority_threshold;
	int32_t max_priority_threshold;
};

struct eng_cq_spec {
	const char *name;
	const char *cohort; /* NULL: no cohort */
	size_t n_groups;
	const struct eng_resource_group *groups;
	enum eng_queueing queueing;
	struct eng_preemption preemption;
	enum eng_when_can_borrow when_can_borrow;
	enum eng_when_can_preempt when_can_preempt;
	int prefer_preemption_over_borrowing; /* flavorFungibility.preference */
	/* NULL matches no namespace, as in Kueue */
	const struct label_selector *namespace_selector;
	enum eng_stop_policy stop_policy;
	/* spec.fairSharing.weight (used with fair sharing on): unset is 1; 0 is an infinite share
	 * once it borrows. Finite and >= 0. */
	int has_fair_weight;
	double fair_weight;
	/* spec.admissionScope.admissionMode UsageBasedAdmissionFairSharing: with admission fair
	 * sharing on (engine_set_admission_fair_sharing), its pending workloads are ordered by
	 * their LocalQueue's consumed usage first. */
	int usage_based_afs;
};

struct eng_cohort_spec {
	const char *name;
	const char *parent; /* NULL: a root */
	size_t n_groups;
	const struct eng_resource_group *groups; /* the cohort's own pool */
	int has_fair_weight; /* spec.fairSharing.weight, as for a ClusterQueue */
	double fair_weight;
};

struct eng_podset {
	const char *name;
	int64_t count;
	int64_t min_count; /* 0: no partial admission */
	struct quota_podset pod; /* per-pod requests and node constraints; pod.count is ignored */
};

struct eng_workload_spec {
	const char *key; /* "namespace/name", unique */
	const char *namespace_name;
	const char *queue; /* LocalQueue name in that namespace */
	int32_t priority;
	int64_t queue_time; /* queue-order timestamp (e.g. creation, ns since epoch) */
	size_t n_podsets;
	const struct eng_podset *podsets;
	/* The caller's, never read by the engine: handed back as eng_decision.tag, so a caller
	 * with its own record per workload finds it without looking the key up. NULL is fine. */
	void *tag;
};

/* Where an admitted podSet landed. */
struct eng_podset_assignment {
	const char *name; /* podSet name */
	int64_t count; /* pods admitted (< spec count only with partial admission) */
	size_t n;
	const char *resources[QUOTA_MAX_RESOURCES];
	const char *flavors[QUOTA_MAX_RESOURCES];
	int64_t usage[QUOTA_MAX_RESOURCES]; /* count * per-pod request, milli-units */
};

struct eng_assignment {
	const char *cluster_queue;
	size_t n_podsets;
	struct eng_podset_assignment podsets[18];
	/* engine_set_admitted: when the quota was reserved (the QuotaReserved condition's
	 * lastTransitionTime, ns since epoch); 0 if unknown, taken as now. Among equally ranked
	 * preemption victims the most recently admitted goes first, as in Kueue. Reported back as
	 * given; 0 for the engine's own admissions (the caller stamps its own time). */
	int64_t quota_reserved_time;
};

/* --- lifecycle and model ----------------------------------------------------------------- */

int engine_new(struct engine **out);
void engine_free(struct engine *e);

/* Adds or replaces objects by name. Replacing keeps admitted usage (recomputed from the
 * admitted workloads). Removing a ClusterQueue or Cohort leaves its workloads waiting with a
 * clear message; it never loses their charges. 0 or -errno (-EINVAL for a spec that breaks the
 * rules Kueue's webhooks enforce, with no change made). */
int engine_set_flavor(struct engine *e, const struct quota_flavor *flavor);
void engine_remove_flavor(struct engine *e, const char *name);
int engine_set_cohort(struct engine *e, const struct eng_cohort_spec *spec);
void engine_remove_cohort(struct engine *e, const char *name);
int engine_set_cq(struct engine *e, const struct eng_cq_spec *spec);
void engine_remove_cq(struct engine *e, const char *name);
int engine_set_local_queue(struct engine *e, const char *namespace_name, const char *name,
			   const char *cluster_queue, enum eng_stop_policy stop);
void engine_remove_local_queue(struct engine *e, const char *namespace_name, const char *name);
int engine_set_namespace(struct engine *e, const char *name, size_t n_labels,
			 const struct quota_kv *labels);
void engine_remove_namespace(struct engine *e, const char *name);

/* --- workloads ---------------------------------------------------------------------------- */

/* Adds or replaces a pending workload (a replaced admitted one keeps its admission). -EINVAL
 * for what Kueue's validation rejects: no podSets or more than 18, duplicate podSet names,
 * minCount above count or on more than one podSet, negative requests. */
int engine_add_workload(struct engine *e, const struct eng_workload_spec *spec);
/* A hint before adding many workloads: the engine sizes its tables for n_workloads in all, so
 * that adding them grows nothing (more may still be added). 0 or -ENOMEM (nothing changed;
 * adding works as without the hint). */
int engine_reserve(struct engine *e, size_t n_workloads);
/* Records a workload as admitted with the given assignment (from status.admission after a
 * restart, or from a simulator input) and charges it. */
int engine_set_admitted(struct engine *e, const char *key, const struct eng_assignment *a);
/* Releases an admitted workload's quota and requeues it as pending (eviction, preemption
 * done, or a failed admission write). 0 also when it was not admitted; -ENOENT unknown. */
int engine_evict(struct engine *e, const char *key);
/* Releases its quota and forgets it (finished or deleted). */
void engine_remove_workload(struct engine *e, const char *key);

/* --- cycles ------------------------------------------------------------------------------- */

enum eng_decision_kind { ENG_ADMIT, ENG_PREEMPT, ENG_PENDING };

struct eng_decision {
	enum eng_decision_kind kind;
	const char *workload; /* key */
	const struct eng_assignment *assignment; /* ENG_ADMIT */
	const char *preemptor; /* ENG_PREEMPT: the workload the victim makes room for; NULL for
				* a HoldAndDrain eviction */
	const char *reason; /* Kueue's: ENG_PREEMPT "InClusterQueue", "InCohortReclamation",
			     * "InCohortReclaimWhileBorrowing", "InCohortFairSharing", drains
			     * "ClusterQueueStopped", "LocalQueueStopped"; ENG_PENDING one of
			     * ENG_WHY_* below */
	const char *message; /* for people: what is missing and where */
	void *tag; /* the workload's eng_workload_spec.tag (of the latest engine_add_workload) */
};

/*
 * Why a workload waits: Kueue v0.20's reasons for QuotaReserved=False (KEP-10852, the
 * UnadmittedWorkloadsObservability tiers), as ENG_PENDING reports them. When several apply, the
 * most severe is reported, in this order:
 *   Misconfigured     its LocalQueue or ClusterQueue doesn't exist, the ClusterQueue is inactive
 *                     (a missing ResourceFlavor, a cohort cycle), or the ClusterQueue doesn't
 *                     select its namespace;
 *   NoMatchingFlavor  a podSet matches no flavor (taints, node affinity, a flavor that doesn't
 *                     exist) or asks for a resource the ClusterQueue doesn't cover;
 *   Suspended         its LocalQueue or ClusterQueue is stopped (stopPolicy);
 *   ExceedsMaxQuota   it asks for more than its ClusterQueue could ever have (nominal quota,
 *                     borrowing limit and what the cohort tree can lend);
 *   BorrowingLimitReached  what is unused in the cohort would cover it, but a borrowing limit
 *                     forbids taking it;
 *   WaitingForQuota   it fits the maximum but not what is unused now;
 *   TopologyPlacementFailed  the quota fits but no node layout does (muster's node check,
 *                     engine_set_placer);
 *   WaitingForPreemptedWorkloads  victims were told to go and it waits for them.
 * Across podSets the most severe wins, as Kueue resolves them (KEP-10852 "Multi-PodSet").
 */
#define ENG_WHY_MISCONFIGURED "Misconfigured"
#define ENG_WHY_NO_MATCHING_FLAVOR "NoMatchingFlavor"
#define ENG_WHY_SUSPENDED "Suspended"
#define ENG_WHY_EXCEEDS_MAX_QUOTA "ExceedsMaxQuota"
#define ENG_WHY_BORROWING_LIMIT "BorrowingLimitReached"
#define ENG_WHY_WAITING_FOR_QUOTA "WaitingForQuota"
#define ENG_WHY_NO_NODE_LAYOUT "TopologyPlacementFailed"
#define ENG_WHY_PREEMPTION_PENDING "WaitingForPreemptedWorkloads"
/* Whether the reason is a wait for capacity (quota, nodes, victims) that others' ends or
 * releases can end, rather than something only a change of configuration or spec can fix. */
int eng_why_waits(const char *why);

/* Called for each decision; pointers are valid only during the call. */
typedef void (*eng_decision_fn)(void *arg, const struct eng_decision *d);

/* Runs one cycle. Returns the number of admissions, preemptions and evictions issued (0 at a
 * fixed point), or -errno (what was decided before the error stands; the rest is retried by the
 * next cycle). */
int engine_cycle(struct engine *e, eng_decision_fn fn, void *arg);

/* --- node feasibility ----------------------------------------------------------------------- */

/* Asked for every workload the quota admits, just before it is charged (Kueue leaves node
 * feasibility open, kueue#407). Return 0 when its pods have a node layout (the callee keeps
 * it, e.g. as a placement reservation), 1 when not, with a message for people in msg, or
 * -errno (taken as "not now", with the error as message). A workload refused here stays
 * pending (ENG_PENDING, reason TopologyPlacementFailed) without touching quota, and is looked at
 * again only after engine_capacity_changed. The callback must not call back into the engine; a is
 * valid during the call only. A preemptor whose victims are gone is asked too. */
typedef int (*eng_place_fn)(void *arg, const char *workload, const struct eng_assignment *a,
			    char *msg, size_t msg_size);
/* Installs (or with fn NULL removes) the node-feasibility check. */
void engine_set_placer(struct engine *e, eng_place_fn fn, void *arg);
/* Node capacity grew (pods gone, nodes added or Ready): workloads refused by the placer are
 * looked at again in the next cycle. Cheap: only those workloads are touched. */
void engine_capacity_changed(struct engine *e);

/* --- fair sharing ---------------------------------------------------------------------------- */
/*
 * Fair sharing (Kueue's Configuration fairSharing), off by default: with it off, every answer
 * is exactly what it is without this section.
 *
 * A node's share (Kueue's DominantResourceShare) is, over the resources it uses beyond its
 * subtree quota, the largest ratio of that borrowing (summed over flavors) to what its parent
 * could lend of the resource (potentialAvailable summed over the tree's flavors), in per
 * mille, divided by the node's fairSharing.weight. A node without a parent has share 0; a
 * node of weight 0 that borrows has an infinite share (and such nodes compare among
 * themselves by the unweighted ratio).
 *
 * Admission order: within a cohort tree, each pick is a tournament from the root: at every
 * cohort, the child (ClusterQueue or cohort) whose share would be lowest after admitting its
 * candidate wins; ties go to the candidate that doesn't borrow on the flavors it requests at
 * that level, then the lower share, then higher priority, then older queue-order time. Each
 * ClusterQueue's candidate is its head. Unlike Kueue (one head per ClusterQueue per cycle),
 * every admission is charged and the shares recomputed before the next pick, so the cycle
 * still admits everything that fits, in fair order.
 *
 * Preemption in a cohort follows Kueue's fair preemption: candidates from the preemptor's
 * ClusterQueue (withinClusterQueue) and from ClusterQueues of the tree that borrow on a
 * flavor-resource it needs (reclaimWithinCohort); ClusterQueues are visited highest share
 * first, and a candidate of another ClusterQueue goes only if the strategy holds between the
 * preemptor's side and the target's side below their lowest common ancestor:
 *   LessThanOrEqualToFinalShare  preemptor's share with its workload <= target's share
 *                                without the candidate;
 *   LessThanInitialShare         preemptor's share with its workload < target's share now.
 * The strategies apply in turn. A preemptor whose ClusterQueue stays within its nominal quota
 * reclaims without the strategies (InCohortReclamation). Victims of the strategies are
 * reported with reason "InCohortFairSharing".
 */
enum eng_fs_strategy { ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, ENG_FS_LESS_THAN_INITIAL_SHARE };

struct eng_fair_sharing {
	int enabled;
	/* preemptionStrategies, applied in order. 0: Kueue's default, [LessThanOrEqualToFinalShare,
	 * LessThanInitialShare]. Kueue accepts only [LTEFinal], [LTInitial] and [LTEFinal,
	 * LTInitial]; anything else is -EINVAL. */
	size_t n_strategies;
	enum eng_fs_strategy strategies[2];
};
/* Turns fair sharing on or off (fs NULL: off). 0 or -EINVAL. Takes effect at the next cycle. */
int engine_set_fair_sharing(struct engine *e, const struct eng_fair_sharing *fs);

/* A node's share, as Kueue's status.fairSharing reports it. */
struct eng_share {
	int64_t weighted_share; /* weightedShare: ceil(precise); INT64_MAX for weight 0 borrowing */
	double precise; /* the unrounded weighted share (INFINITY for weight 0 borrowing) */
	const char *dominant_resource; /* the resource that gives it; NULL when not borrowing */
	int borrowing; /* uses more than its subtree quota of some (flavor, resource) */
};
/* The current share of ClusterQueue cq / a cohort (computed whether fair sharing is on or not).
 * 0, or -ENOENT. */
int engine_cq_share(const struct engine *e, const char *cq, struct eng_share *out);
int engine_cohort_share(const struct engine *e, const char *cohort, struct eng_share *out);

/*
 * Admission fair sharing (Kueue's Configuration admissionFairSharing), off by default. In a
 * ClusterQueue with usage_based_afs, pending workloads are ordered by their LocalQueue's usage
 * first (lower first; then priority and age as usual), and among preemption candidates of one
 * ClusterQueue from different LocalQueues those of the higher usage go first.
 *
 * A LocalQueue's usage is sum over resources of weight(resource, default 1) x consumed
 * (in units, not milli-units), divided by the LocalQueue's fairSharing.weight (0: infinite).
 * consumed decays toward what the LocalQueue's admitted workloads hold: at each
 * engine_afs_sample, consumed = consumed x (1 - a) + admitted x a, a = 1 - 0.5^(elapsed /
 * half-life) (half-life 0: consumed is reset to nothing). Each admission adds its requests x
 * a(sampling interval) at once (Kueue's entry penalty), so a queue that just got in yields to
 * the others before the next sample.
 */
struct eng_afs_weight {
	const char *resource;
	double weight;
};
struct eng_admission_fair_sharing {
	int enabled;
	int64_t usage_half_life; /* ns; >= 0 */
	int64_t usage_sampling_interval; /* ns; > 0 (Kueue's default: 5 minutes) */
	size_t n_weights;
	const struct eng_afs_weight *weights; /* resourceWeights; >= 0 each */
};
/* Turns admission fair sharing on or off (afs NULL: off). 0, -EINVAL, -ENOMEM. */
int engine_set_admission_fair_sharing(struct engine *e,
				      const struct eng_admission_fair_sharing *afs);
/* A LocalQueue's spec.fairSharing.weight (default 1; >= 0, finite). The LocalQueue need not
 * exist yet; the weight stays until it is set again. 0, -EINVAL, -ENOMEM. */
int engine_set_lq_fair_weight(struct engine *e, const char *namespace_name, const char *name,
			      double weight);

/* One resource of a LocalQueue's consumed usage, in units (e.g. cores, bytes, GPUs). */
struct eng_afs_resource {
	const char *resource;
	double consumed;
};
/* Seeds a LocalQueue's consumed usage from its status (admissionFairSharingStatus:
 * consumedResources, lastUpdate in ns since the epoch), as after a restart; replaces what the
 * engine had. At most QUOTA_MAX_RESOURCES resources. 0, -EINVAL, -ENOMEM. */
int engine_afs_seed(struct engine *e, const char *namespace_name, const char *name,
		    const struct eng_afs_resource *consumed, size_t n, int64_t last_update);
/* Decays every LocalQueue's consumed usage toward its admitted usage as of now (ns since the
 * epoch; a LocalQueue never sampled or seeded starts at now), and reorders the ClusterQueues
 * it changed. The caller runs it every sampling interval. 0 or -ENOMEM. */
int engine_afs_sample(struct engine *e, int64_t now);

struct eng_afs_status {
	int applies; /* admission fair sharing is on and the LocalQueue's ClusterQueue uses it */
	size_t n; /* resources with consumed usage, sorted by name */
	struct eng_afs_resource consumed[QUOTA_MAX_RESOURCES];
	int64_t last_update; /* ns; 0: never sampled */
	double usage; /* what orders its workloads (see above) */
};
/* A LocalQueue's admission-fair-sharing state. 0 or -ENOENT (no such LocalQueue known). */
int engine_afs_status(const struct engine *e, const char *namespace_name, const char *name,
		      struct eng_afs_status *out);

/* --- observation (status, simulator output, tests) ---------------------------------------- */

struct eng_cq_usage {
	int64_t total; /* usage charged to this ClusterQueue for (flavor, resource) */
	int64_t borrowed; /* the part above its nominal quota */
};
int engine_cq_usage(const struct engine *e, const char *cq, const char *flavor,
		    const char *resource, struct eng_cq_usage *out);
/* The same for a cohort (explicit, or implicit: only named by others): total is Kueue's cohort
 * Usage (what its children use beyond the quota they keep for themselves), borrowed the part
 * above its subtree quota (taken from its parent). -ENOENT for an unknown cohort or pair. */
int engine_cohort_usage(const struct engine *e, const char *cohort, const char *flavor,
			const char *resource, struct eng_cq_usage *out);
/* Whether cq can admit: 1 yes, 0 no, -ENOENT no such ClusterQueue. *reason is Kueue's Active
 * condition reason ("Ready", "Stopped", "FlavorNotFound"; muster adds "CohortCycle") and
 * *message its message; both are the engine's, valid until the next call that changes it. */
int engine_cq_active(const struct engine *e, const char *cq, const char **reason,
		     const char **message);
/* Pending and admitted counts of a ClusterQueue (also of one that was removed or is only
 * named by a LocalQueue: its workloads still wait there). */
int engine_cq_counts(const struct engine *e, const char *cq, size_t *pending, size_t *admitted);
/* The same pending count split as Kueue's pending_workloads metric splits it: active (in the
 * queue, to be looked at, or preemptors waiting for their victims) and inadmissible (looked at,
 * didn't fit, waiting for the cohort tree to change). active + inadmissible = pending. */
int engine_cq_pending(const struct engine *e, const char *cq, size_t *active, size_t *inadmissible);
/* The admission of a workload, or NULL when it is not admitted. The result is the engine's
 * and valid until the next engine call. */
const struct eng_assignment *engine_admission(const struct engine *e, const char *key);

/* Recomputes every ClusterQueue's and cohort's usage from the admitted workloads and compares
 * it with what the engine keeps. 0, or -EPROTO with msg saying where they differ. Debug builds
 * run it after every cycle; the property test after every operation. Costs a walk over every
 * admitted workload. */
int engine_check(const struct engine *e, char *msg, size_t size);

/* --- explanations (engine_explain.c: the visibility endpoint) ------------------------------ */
/*
 * Pure observers that answer "where is my workload in the queue" and "why is it pending". They
 * read the engine's own queues and quota maths; what they simulate (waiting preemptors' holds,
 * releasing holders) is undone before they return, so no decision of a later cycle changes.
 * Strings in their answers are the engine's: valid until the next call that changes the
 * engine (a workload key until that workload is removed or replaced).
 */

/* A pending workload and its place in the order the engine tries its ClusterQueue:
 *  1. preemptors waiting for their victims to go (the cycle admits them before anything else
 *     of their cohort tree), in queue order;
 *  2. everything else in the ClusterQueue, whether still to be looked at or parked as
 *     inadmissible until the cohort tree changes (as Kueue's visibility API lists them), in
 *     queue order: higher priority first, then older queue time, then the one the engine was
 *     given first (Kueue: UID).
 * Workloads whose LocalQueue is missing or stopped are held by it and are in no ClusterQueue's
 * order; they are not reported (engine_explain says ENG_WAIT_QUEUE_HELD). */
struct eng_pending {
	const char *key; /* "namespace/name" */
	const char *namespace_name;
	const char *name; /* key without "namespace/" */
	const char *local_queue;
	const char *cluster_queue;
	int32_t priority;
	int64_t queue_time; /* as given to engine_add_workload */
	size_t position_in_cq; /* 0-based, in the ClusterQueue's order */
	size_t position_in_lq; /* 0-based, among the same LocalQueue's in that order */
	int waiting; /* a preemptor waiting for its victims */
	int inadmissible; /* parked: looked at, didn't fit, waits for its cohort tree to change */
};

/* Called per workload in order; p is valid during the call only. Return 0 to go on, anything
 * else to stop. The callback must not call back into the engine. */
typedef int (*eng_pending_fn)(void *arg, const struct eng_pending *p);

/* Reports every pending workload of ClusterQueue cq in order. Returns how many it holds in
 * all (also when fn stopped early), -ENOENT for a ClusterQueue that doesn't exist, -ENOMEM.
 * Cost: a sort of the ClusterQueue's pending workloads. */
int engine_pending_order(const struct engine *e, const char *cq, eng_pending_fn fn, void *arg);
/* The same for the first limit workloads of the order only: fn sees what it would see from
 * engine_pending_order until then (positions included), and the return is still how many are
 * pending in all. Cost: a pass over the pending workloads and a sort of limit of them. */
int engine_pending_order_first(const struct engine *e, const char *cq, size_t limit,
			       eng_pending_fn fn, void *arg);
/* The same restricted to LocalQueue namespace/lq (positions still count the whole
 * ClusterQueue for position_in_cq). Returns how many of the LocalQueue's are in the order,
 * 0 when it is stopped (its workloads are held), -ENOENT when it doesn't exist. */
int engine_pending_order_lq(const struct engine *e, const char *namespace_name, const char *lq,
			    eng_pending_fn fn, void *arg);

enum eng_wl_state { ENG_STATE_PENDING, ENG_STATE_ADMITTED };

/* Why a pending workload waits, as far as the engine can tell right now. */
enum eng_wait {
	ENG_WAIT_QUOTA, /* not enough quota: see lacking, holders, to_fit */
	ENG_WAIT_TURN, /* its quota is there now: the next cycle looks at it (StrictFIFO: once
			* the workloads before it are in) */
	ENG_WAIT_PREEMPTION, /* a preemptor waiting for its victims to go (holders marked
			      * evicting); lacking is what is still short */
	ENG_WAIT_NODES, /* the quota fits, node placement found no layout (placement_closest) */
	ENG_WAIT_QUEUE_HELD, /* its LocalQueue is missing or stopped */
	ENG_WAIT_CQ_INACTIVE, /* its ClusterQueue is missing, stopped, lacks a flavor or is on a
			       * cohort cycle (engine_cq_active says which) */
	ENG_WAIT_NAMESPACE, /* the ClusterQueue's namespaceSelector doesn't select it */
};

#define ENG_EXPLAIN_LACKING 16
#define ENG_EXPLAIN_HOLDERS 32
#define ENG_EXPLAIN_TO_FIT 32

/* What one podSet lacks of one (flavor, resource), with the flavor the engine nominated (the
 * assignment a cycle would make now; a waiting preemptor's: the one it preempted for) or, for
 * a resource group no flavor fits, the first flavor it may use. Partial admission (minCount)
 * is not tried: amounts are for the full count. */
struct eng_lack {
	const char *podset;
	const char *flavor; /* NULL: no flavor of the ClusterQueue covers the resource for this
			     * podSet (not covered, or no flavor matches its node constraints) */
	const char *resource;
	int64_t requested; /* count x per-pod request, milli-units */
	int64_t available; /* what the ClusterQueue may take now (the engine's q_available,
			    * after the podSets before this one), milli-units */
	int64_t missing; /* requested - available, > 0 */
	int64_t reserved; /* of the pair's quota, held for preemptors waiting for their victims
			   * (they come first): not in available. While their victims are still
			   * charged, releases must cover this too before available grows. */
	int exceeds_capacity; /* more than the ClusterQueue could ever get (nominal plus what it
			       * may borrow): no release helps */
};

/* An admitted workload holding quota of a lacking (flavor, resource) in the waiting one's
 * cohort tree. */
struct eng_holder {
	const char *key;
	const char *cluster_queue;
	const char *flavor;
	const char *resource;
	int32_t priority;
	int64_t amount; /* of this pair, milli-units */
	int same_cq; /* 1: in the waiting workload's ClusterQueue ("ClusterQueue"); 0: another
		      * ClusterQueue of its cohort tree ("Cohort") */
	int borrowing; /* its ClusterQueue uses more of this pair than its nominal quota */
	int preemptible; /* the waiting workload's preemption policy may take it: it is one of
			  * the engine's preemption candidates (withinClusterQueue,
			  * reclaimWithinCohort, borrowWithinCohort), or already its victim */
	int evicting; /* told to go (preempted or drained), still charged until evicted */
};

/* One release in to_fit. */
struct eng_fit_step {
	const char *key;
	int preempt; /* 1: preemption may take it; 0: it would have to end */
	const char *flavor; /* the lacking pair it frees most of (relative to what is missing) */
	const char *resource;
	int64_t frees; /* its amount of that pair, milli-units */
};

struct eng_explain {
	enum eng_wl_state state;
	enum eng_wait wait; /* pending only */
	const char *namespace_name;
	const char *local_queue;
	const char *cluster_queue; /* admitted: where; pending: whose queue holds it (NULL when
				    * its LocalQueue routes it nowhere) */
	int32_t priority;
	int64_t queue_time;
	int evicting; /* admitted: told to go, still charged */
	int has_position; /* pending in a ClusterQueue's order: the positions below are set */
	size_t position_in_cq, position_in_lq;
	/* ENG_WAIT_QUOTA and ENG_WAIT_PREEMPTION (the rest are empty): */
	size_t n_lacking, lacking_total; /* the first ENG_EXPLAIN_LACKING in podSet order */
	struct eng_lack lacking[ENG_EXPLAIN_LACKING];
	size_t n_holders, holders_total; /* the first ENG_EXPLAIN_HOLDERS, in to_fit's order */
	struct eng_holder holders[ENG_EXPLAIN_HOLDERS];
	/* The fewest holders whose release lets it fit, found greedily: preemptible ones first,
	 * in the order the engine's preemption removes victims (a waiting preemptor's own
	 * victims; then Kueue's candidate order: those already evicting, then other
	 * ClusterQueues' (hierarchical reclaim first), then its own ClusterQueue's, each by
	 * lower priority, then the most recently admitted); then the others, those that free
	 * most of what is missing first (each pair's share of its missing amount, summed; ties:
	 * lower priority, then the most recently admitted, as preemption would order them).
	 * Holders are released in that order until it fits; then, as the engine's preemption
	 * does, each one it still fits without is put back, last taken first. Whether it fits
	 * is the engine's own check (eng_fits_now) on the released usage. */
	int to_fit_found; /* 0: even releasing every holder is not enough (exceeds_capacity,
			   * quota held for waiting preemptors, or a pair no flavor covers) */
	size_t n_to_fit, to_fit_total;
	struct eng_fit_step to_fit[ENG_EXPLAIN_TO_FIT];
};

/* Explains workload key into *out. 0; -ENOENT for an unknown key; -ENOMEM; -errno from the
 * lazy build. An admitted workload gets state, ClusterQueue and evicting only. Costs a flavor
 * assignment (with its preemption simulation), a walk over the admitted workloads of the
 * cohort tree, and for to_fit up to two quota checks per holder. Not const: it charges and
 * releases usage in place to simulate, and restores it exactly (engine_check agrees). */
int engine_explain(struct engine *e, const char *key, struct eng_explain *out);

#endif
