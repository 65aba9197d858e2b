/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission engine's internals, shared by its files. Nothing here is for callers: use
 * engine.h.
 *   engine_explain.c   why a workload waits, and the queues' order, as the cycle would see it.
 *   engine_fair_api.c  fair sharing's entry points: settings, LocalQueue usage, shares.
 *   engine.c           the model, the cohort-tree build, the queues and the cycle.
 *   engine_preempt.c   preemption: Kueue's classical and fair preemption.
 *   engine_fair.c      fair sharing's shares and tournament; admission fair sharing's order.
 *   engine_quota.c     hierarchical quota maths and flavor assignment.
 *   engine_queue.c     the containers of pending workloads: vectors and the ordered heap.
 * A file calls only files below it, so there is no call cycle between files; flavor
 * assignment asks preemption through a pointer engine_new sets (struct engine.oracle).
 * Layers, top to bottom (tests/unit/test_layers.sh checks that no file calls one above it):
 *   engine_explain.c engine_fair_api.c engine.c engine_preempt.c engine_fair.c engine_quota.c
 *   engine_queue.c
 *
 * Ownership: the engine owns every struct below. Names (flavors, resources, namespaces,
 * queue and podSet names, cohort and ClusterQueue names) are interned once per engine, so two
 * names are equal exactly when their pointers are; they live until engine_free. ClusterQueue,
 * Cohort and LocalQueue records are never freed before engine_free either: a removed object
 * leaves a record (exists == 0) that keeps its workloads and charges, so re-creating it picks
 * them up again and no pointer to a record ever dangles.
 */
#ifndef MUSTER_ENGINE_INTERNAL_H
#define MUSTER_ENGINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/engine.h"
#include "core/invariant.h"
#include "core/strmap.h"

#define ENG_MAX_PODSETS 18 /* Kueue: podSets 1..18 */
#define ENG_MAX_GROUPS 16 /* Kueue: resourceGroups <= 16 */
#define ENG_MAX_FLAVORS 64 /* Kueue: flavors per group <= 64 */
/* A podSet requests at most QUOTA_MAX_RESOURCES resources, plus "pods" when it is covered. */
#define ENG_MAX_REQUESTS (QUOTA_MAX_RESOURCES + 1)
#define ENG_MAX_ITEMS (ENG_MAX_PODSETS * ENG_MAX_REQUESTS)
#define ENG_MSG_MAX 2048 /* longer messages are cut: they are for people */
#define ENG_CROSS_VICTIM_MAX 4 /* the preemption circle guard (engine_preempt.c) */

/* A saturating "unlimited" for sums of quotas that would overflow. */
#define ENG_INF INT64_MAX

struct engine;
struct ecq;
struct ecohort;
struct ewl;

/* --- small vectors ------------------------------------------------------------------------- */

struct wvec {
	struct ewl **v;
	uint32_t n, cap;
};

/* --- quota nodes (Kueue's resourceNode) ---------------------------------------------------- */

/* One (flavor, resource) of a node. Cohorts carry the union of their own and their children's
 * pairs, so every child slot has a slot in its parent (parent_slot). */
struct qslot {
	const char *flavor; /* interned */
	const char *resource; /* interned */
	int32_t parent_slot; /* index in the parent's slots; -1 without a parent */
	uint8_t has_borrowing_limit;
	uint8_t has_lending_limit;
	uint8_t in_bytes; /* quota_resource_in_bytes(resource): how its amounts are written */
	int64_t nominal;
	int64_t borrowing_limit;
	int64_t lending_limit;
	int64_t subtree; /* SubtreeQuota: nominal plus what children lend up */
	int64_t local; /* localQuota: subtree - lendingLimit, kept for this subtree */
	int64_t usage; /* Usage: own for a ClusterQueue; beyond children's local for a cohort */
	int64_t released; /* at a tree's root: quota released in the tree since the build */
};

struct qnode {
	struct qnode *parent; /* NULL for a root (and for everything in a cyclic tree) */
	uint32_t n_slots;
	struct qslot *slots;
	int32_t *index; /* open-addressing index over slots (NULL for small nodes) */
	uint32_t index_cap;
	int height; /* Kueue's getNodeHeight: 0 for a ClusterQueue */
};

/* Finds the slot of (flavor, resource) in a node (interned pointers), or -1. */
int32_t qnode_find(const struct qnode *n, const char *flavor, const char *resource);
/* (Re)builds the node's slot index after its slots changed. 0 or -ENOMEM. */
int qnode_index(struct qnode *n);

/* Kueue's resource_node.go, per slot. */
int64_t q_available(const struct qnode *n, int32_t s); /* may be negative when over-admitted */
int64_t q_potential_available(const struct qnode *n, int32_t s);
void q_add_usage(struct qnode *n, int32_t s, int64_t v);
void q_remove_usage(struct qnode *n, int32_t s, int64_t v);

/* Saturating sums, inline: the quota maths and the preemption search call them per slot
 * visited, hundreds of thousands of times in a large cycle. */
static inline int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* Kueue's LocalAvailable: what the node's local quota still holds (never negative). */
static inline int64_t q_local_available(const struct qnode *n, int32_t s)
{
	const struct qslot *q = &n->slots[s];
	int64_t left = sat_sub(q->local, q->usage);
	return left > 0 ? left : 0;
}

/* --- specs -------------------------------------------------------------------------------- */

struct equota {
	int64_t nominal;
	int64_t borrowing_limit;
	int64_t lending_limit;
	uint8_t has_borrowing_limit;
	uint8_t has_lending_limit;
};

struct egroup {
	uint32_t n_cov;
	uint32_t n_fl;
	const char **cov; /* interned resource names */
	const char **fl; /* interned flavor names, in the order they are tried */
	struct equota *q; /* [f * n_cov + r] */
	int32_t *slot; /* [f * n_cov + r]: the owner node's slot, set by the build */
	const struct quota_flavor **flavor; /* [f]: the flavor object, NULL if missing (build) */
};

/* One allocation holding the groups and all their arrays. */
struct egroups {
	uint32_t n;
	struct egroup *g;
	void *block;
};

struct esel {
	struct label_selector sel;
	void *block; /* everything sel points to, in one allocation */
};

/* --- the cohort tree ---------------------------------------------------------------------- */

/* A tree is everything under one root cohort, or a ClusterQueue without a cohort. Admissions
 * in one tree never change what fits in another, so trees are the unit of "something
 * changed, look again". */
struct etree {
	struct ecohort *root; /* NULL for a lone ClusterQueue */
	struct ecq **cqs;
	uint32_t n_cqs;
	uint8_t cyclic; /* a cohort cycle: every ClusterQueue here is inactive */
	uint8_t dirty; /* some ClusterQueue has something to look at */
	uint8_t requeue; /* quota was released or specs changed: parked workloads get a new look */
	uint8_t listed; /* in engine.dirty_trees */
	const char *cycle_cohort; /* a cohort on the cycle, for the message */
};

struct ecohort {
	struct qnode node;
	const char *name; /* interned */
	uint8_t exists; /* set by engine_set_cohort (else only referenced) */
	uint8_t build_state; /* build: 0 new, 1 on the current path, 2 done */
	const char *parent_name; /* interned, NULL: a root */
	struct egroups groups; /* its own pool */
	double fair_weight; /* spec.fairSharing.weight (1 when unset) */
	uint8_t fp_pruned; /* fair preemption's scratch */
	/* What it could get of each resource (Kueue's calculateLendable), as its children's
	 * shares divide by it: quota alone decides it, so it is kept until the next build. */
	uint32_t n_lend, cap_lend;
	const char **lend_res; /* interned */
	double *lend_val;
	/* Set by the build. */
	struct ecohort *parent;
	struct ecohort **child_cohorts;
	uint32_t n_child_cohorts, cap_child_cohorts;
	struct ecq **child_cqs;
	uint32_t n_child_cqs, cap_child_cqs;
	struct etree *tree;
};

/* Kueue's DRS of one node. */
struct drs {
	double ratio; /* unweighted, per mille of what the parent could lend; 0: not borrowing */
	double weight;
	const char *dominant; /* interned resource, NULL when ratio is 0 */
	uint8_t borrowing; /* usage above subtree quota on some (flavor, resource) */
	uint8_t borrows_requested; /* ... on one the candidate requests (tournament only) */
};

/* --- ClusterQueues and LocalQueues ------------------------------------------------------- */

/* A binary heap of pending workloads in Kueue's queue order (priority, then age). */
/* A heap entry's queue-order key, a copy of its workload's (wl_before): comparing keys kept
 * beside the heap, not in the workloads they belong to, spares a cache miss per comparison
 * in a ClusterQueue of thousands. Valid while the workload is in the heap, where none of the
 * fields changes (engine_add_workload takes a pending workload out before changing them; the
 * uid never changes). */
struct wkey {
	int64_t queue_time;
	uint64_t uid; /* the last tie-break: arrival order (struct ewl.uid) */
	int32_t priority;
};

/* Kueue's queue order within a ClusterQueue: higher priority, then older, then first seen
 * (struct ewl.uid). Kueue breaks the last tie by UID, which is random; the order of arrival
 * keeps Workloads created in the same second (queue times are whole seconds) first come,
 * first served, keeps simulations reproducible, and after a restart (a List arrives by key)
 * falls back to the key. From the workloads' keys (struct wkey), which the heaps keep beside
 * them, so a comparison reads no workload. */
static inline int key_before(const struct wkey *ka, const struct wkey *kb)
{
	if (ka->priority != kb->priority)
		return ka->priority > kb->priority;
	if (ka->queue_time != kb->queue_time)
		return ka->queue_time < kb->queue_time;
	return ka->uid < kb->uid;
}

struct wheap {
	struct ewl **v;
	struct wkey *k; /* k[i] is v[i]'s */
	uint32_t n, cap;
	uint8_t afs; /* admission fair sharing: its LocalQueue's usage orders first */
};

/*
 * What a parked workload needs before it can fit: for each flavor of the resource group that
 * blocked it, one resource of that flavor and how much more of it must become available.
 * Available quota grows by at most what is released in the tree (usage at every node is a
 * 1-Lipschitz, monotone function of the ClusterQueues' usage), so until the tree's root has
 * released that much of one of these, evaluating the workload again can't admit it.
 */
#define ENG_NEEDS 2
struct need {
	int32_t slot; /* in the tree's root node; -1: this flavor can never take it */
	int32_t cq_slot; /* the same pair in the ClusterQueue */
	int64_t val; /* what the workload needs there in all */
	int64_t deficit; /* how much more than was available */
	int64_t base; /* the root slot's released counter when the need was recorded */
};

struct needs {
	uint8_t n; /* 0: unknown, always look again */
	struct need v[ENG_NEEDS];
};

/* What evaluations found for shapes that don't fit, valid while nothing they read changed
 * (engine.eval_epoch; see engine.c, shape_seen_lookup). Direct-mapped by shape. */
#define ENG_SEEN_SLOTS 4096u
#define ENG_SEEN_TEXT_MAX (8u << 20) /* their messages, at most; beyond, no more are kept */
struct shape_seen {
	const struct ecq *cq;
	const struct ewl *wl; /* the workload evaluated: its spec, priority and queue time */
	uint64_t epoch; /* engine.eval_epoch when it was evaluated; 0: empty */
	const char *why;
	size_t msg_off; /* in engine.seen_text */
	struct needs needs;
};

/* Shapes that failed in this ClusterQueue in this cycle (see engine.c, shape cache). */
#define ENG_SHAPE_CACHE 4
struct shape_fail {
	const struct ewl *wl; /* the workload that failed; valid for the cycle */
	const struct wspec *spec; /* its spec and priority: what a lookup compares */
	int32_t priority;
	uint64_t cycle;
	const char *message; /* in the cycle arena */
	const char *why;
	struct needs needs;
};

struct ecq {
	struct qnode node;
	const char *name; /* interned */
	uint8_t exists;
	/* Spec. */
	const char *cohort_name; /* interned, NULL: none */
	struct egroups groups;
	enum eng_queueing queueing;
	struct eng_preemption preemption;
	enum eng_when_can_borrow when_can_borrow;
	enum eng_when_can_preempt when_can_preempt;
	uint8_t prefer_preemption;
	uint8_t has_ns_selector; /* 0: selects no namespace */
	struct esel ns_selector;
	enum eng_stop_policy stop;
	double fair_weight; /* spec.fairSharing.weight (1 when unset) */
	uint8_t usage_based_afs; /* admissionScope UsageBasedAdmissionFairSharing */
	/* Set by the build. */
	struct ecohort *parent;
	struct etree *tree;
	uint8_t active;
	uint8_t covers_pods; /* a group covers "pods": podSets are charged their pod count */
	const char *inactive_reason; /* static string (Kueue's) */
	char *inactive_msg; /* for engine_cq_active: "Can't admit new workloads: ..." */
	char *pending_msg; /* for its workloads: "ClusterQueue x is inactive: ..." */
	const char *pending_why; /* and its reason: Misconfigured or Suspended */
	/* Queues. */
	struct wheap heap; /* pending, to be looked at */
	struct wvec parked; /* BestEffortFIFO: didn't fit; wait for the tree to change */
	struct wvec waiting; /* preemptors waiting for their victims to go */
	/* Admitted workloads charged here (intrusive list through ewl.adm_prev/adm_next). */
	struct ewl *adm_head;
	uint32_t n_admitted;
	/* How many of them have adm_cycle == fresh_cycle (no listed one has a later adm_cycle).
	 * Admissions of the running cycle are no preemption candidates in it, so a candidate
	 * search stops once it has passed every older one (eng_adm_older) instead of walking
	 * thousands admitted in a large first cycle (link_admitted keeps the count). */
	uint32_t n_fresh;
	uint64_t fresh_cycle;
	uint8_t dirty; /* new pending workloads or a changed head: look again */
	uint8_t drain; /* HoldAndDrain: evict what is admitted here */
	struct shape_fail shapes[ENG_SHAPE_CACHE];
	uint32_t shape_next;
	uint64_t swept_cycle; /* the cycle park_unfit last swept this ClusterQueue's heap */
	/* Fair sharing: its head as a candidate of the tree's tournament (engine_fair.c). */
	int32_t fs_cand; /* index in engine.merge; -1: none */
	uint8_t fs_tries; /* re-picks after its usage turned out different */
	uint8_t fs_nofit; /* the head fits in no way: look at it first, it admits nothing */
	uint32_t n_fs_items, cap_fs_items;
	struct eitem *fs_items; /* what admitting the head would charge here (amount > 0) */
	/* Fair preemption's scratch (engine_preempt.c): its candidates, in order, and its share
	 * while its usage is unchanged (fp_share_ok). */
	int32_t fp_head, fp_tail;
	uint8_t fp_pruned;
	uint8_t fp_share_ok;
	struct drs fp_share;
};

struct elq {
	const char *key; /* interned "namespace/name" */
	const char *name; /* interned */
	/* Its namespace, interned, and the namespace's record (made by its first workload;
	 * records outlive removal): adding a workload finds all three with one lookup. */
	const char *ns;
	struct ens *nsrec;
	uint8_t exists;
	uint8_t dirty; /* held workloads need their message */
	uint8_t drain;
	uint8_t listed;
	enum eng_stop_policy stop;
	struct ecq *cq; /* NULL when it doesn't exist */
	struct wvec held; /* pending workloads it can't route (missing or stopped) */
	/* Admission fair sharing (engine_fair.c). */
	double fair_weight; /* spec.fairSharing.weight (1 unless set) */
	uint8_t has_fair_weight;
	uint32_t afs_n, afs_cap;
	const char **afs_res; /* interned resource names, sorted by name */
	double *afs_val; /* consumed, in units */
	int64_t afs_last; /* last sample (ns); 0: never */
	double afs_usage; /* the weighted usage that orders its workloads */
	double afs_alpha; /* engine_afs_sample's scratch: this sample's rate */
};

/* --- workloads ---------------------------------------------------------------------------- */

struct wps {
	const char *name; /* interned */
	int64_t count;
	int64_t min_count; /* 0: no partial admission */
	struct quota_podset pod; /* arrays point into the spec block; resources are interned */
};

/* A workload's podSets in one allocation, replaced whole when the spec changes. */
/* A workload's podSets. Interned (engine.specs): workloads with equal podSets share one,
 * so two workloads have the same shape exactly when they have the same spec pointer. */
struct wspec {
	uint32_t n_podsets;
	uint32_t refs; /* workloads holding it */
	uint64_t shape; /* hash of everything that decides where it fits */
	struct wspec *next; /* in its engine.specs bucket */
	struct wps ps[];
};

/* Where an admitted (or planned) workload is charged: one item per (podSet, resource). */
struct eitem {
	const char *resource; /* interned */
	const char *flavor; /* interned */
	int64_t amount;
	int32_t slot; /* in the ClusterQueue's node; -1 when it has no such slot */
	uint16_t podset;
	uint8_t preempt; /* planning only: Kueue's Preempt mode for this resource */
};

struct eadm {
	uint32_t n_podsets;
	uint32_t n_items;
	int64_t *count; /* [n_podsets], after the items */
	const char **podset; /* [n_podsets] interned names, after the counts */
	struct eitem items[];
};

/* A preemptor waiting for its victims: who they are, and the plan to hold quota for. */
struct ewait {
	uint32_t n_victims;
	struct eadm *plan;
	uint64_t *victim_uid;
	char **victim_key; /* into this allocation */
};

enum wl_where { WL_NONE, WL_HEAP, WL_PARKED, WL_WAITING, WL_HELD };

struct ewl {
	struct wspec *spec; /* interned: one reference */
	struct ens *nsrec; /* its namespace (a record that outlives removal) */
	const char *ns; /* interned */
	const char *queue; /* interned */
	struct elq *lq;
	struct ecq *cq; /* the ClusterQueue whose queues hold it (pending) */
	int32_t priority;
	uint8_t where; /* enum wl_where */
	uint8_t admitted;
	uint8_t evicting; /* told to go (preempted or drained); still charged until engine_evict */
	uint8_t no_layout; /* the quota fits but the placer found no node layout */
	int64_t queue_time;
	uint64_t claimed; /* uid of the waiting preemptor that counts on its quota; 0: none */
	uint32_t pos; /* index in the container named by where */
	uint64_t uid; /* unique per engine, never reused */
	uint64_t status_hash; /* last ENG_PENDING (reason, message) reported; 0: none */
	struct needs needs; /* parked: when it is worth another look */
	/* Admitted. */
	struct ecq *adm_cq;
	struct ewl *adm_prev, *adm_next;
	struct eadm *adm;
	int64_t adm_time; /* admission order: larger is more recent (see engine.adm_clock) */
	int64_t adm_given_time; /* quota_reserved_time given to engine_set_admitted, or 0 */
	uint64_t adm_cycle; /* cycle it was admitted in (not a preemption candidate in it) */
	/* The preemption circle guard (engine_preempt.c): how often, in input epoch
	 * cross_victim_epoch, it was taken for another ClusterQueue's workload. */
	uint64_t cross_victim_epoch;
	uint32_t cross_victim_count;
	struct ewait *wait; /* a preemptor waiting for victims */
	void *tag; /* the caller's (eng_workload_spec.tag), handed back in its decisions */
	char key[]; /* "namespace/name" */
};

/* A workload's queue-order key (struct wkey, key_before). */
static inline struct wkey wl_key(const struct ewl *w)
{
	return (struct wkey){ .queue_time = w->queue_time, .uid = w->uid, .priority = w->priority };
}

/* --- evaluation (flavor assignment, preemption plan) ----------------------------------- */

enum pmode {
	PM_NOFIT = 0,
	PM_NO_CANDIDATES, /* preemption would help but found no victims */
	PM_PREEMPT,
	PM_RECLAIM,
	PM_FIT,
};

struct gmode {
	int pm; /* enum pmode */
	int borrow; /* borrowing height: 0 = within the ClusterQueue */
};

enum eval_kind { EV_FIT, EV_PREEMPT, EV_PENDING, EV_INADMISSIBLE };

struct target {
	struct ewl *wl;
	const char *reason; /* Kueue's preemption reason */
};

/* Flavor-resources that need preemption (Kueue's frsNeedPreemption) and what the preemptor
 * requests, per slot of its ClusterQueue. */
struct frset {
	uint32_t n;
	const char *flavor[ENG_MAX_ITEMS];
	const char *resource[ENG_MAX_ITEMS];
};

struct reqset {
	uint32_t n;
	int32_t slot[ENG_MAX_ITEMS];
	int64_t val[ENG_MAX_ITEMS];
};

/* A preemption candidate (Kueue's candidateElem). */
struct cand {
	struct ewl *wl;
	const struct qnode *lca; /* the cohort it was found under; NULL in the own ClusterQueue */
	/* Copies of what orders it (engine_preempt.c's cmp_cand), taken as it is collected (none
	 * of them changes during a search): sorting a cohort's candidates read each workload
	 * anew per comparison, most of the search's time on Kueue's large-scale shape. */
	int64_t adm_time; /* wl's */
	int32_t priority; /* wl's */
	uint8_t rank; /* 0 when wl is evicting, else 1, then list: (!evicting) << 2 | list */
	uint8_t afs; /* wl's ClusterQueue orders by admission fair sharing */
	uint8_t variant;
	uint8_t list; /* 0 hierarchical reclaim, 1 priority-based reclaim, 2 same ClusterQueue */
};

/* Classical preemption searches and their answers (engine_preempt.c, plan): asked again with
 * the same inputs while nothing they read changed (eval_epoch, and the cycle and input_epoch
 * they also read), they answer the same without searching. Direct-mapped by the inputs; a
 * search on more than ENG_MEMO_PAIRS pairs or requests is not kept. */
#define ENG_MEMO_SLOTS 256u
#define ENG_MEMO_PAIRS 8u
struct plan_memo {
	uint8_t valid;
	uint64_t eval_epoch, cycle, input_epoch;
	const struct ecq *cq;
	int32_t priority;
	int64_t queue_time;
	uint32_t n_pairs, n_reqs;
	const char *flavor[ENG_MEMO_PAIRS], *resource[ENG_MEMO_PAIRS]; /* struct frset's */
	int32_t slot[ENG_MEMO_PAIRS]; /* struct reqset's */
	int64_t val[ENG_MEMO_PAIRS];
	struct cand *picked; /* the victims, in candidate order; owned */
	uint32_t n_picked, cap_picked;
};

struct eval {
	int kind; /* enum eval_kind */
	int mode; /* Kueue's representative mode: PM_FIT, PM_PREEMPT (victims or not), PM_NOFIT */
	int borrow; /* Assignment.Borrowing */
	int cacheable; /* a plain "doesn't fit": same-shaped workloads after it won't either */
	uint32_t n_podsets;
	int64_t count[ENG_MAX_PODSETS];
	uint32_t n_items;
	struct eitem items[ENG_MAX_ITEMS];
	struct target *targets;
	uint32_t n_targets, cap_targets;
	struct needs needs; /* a plain "doesn't fit": what it lacks (see struct need) */
	int cause; /* enum cause of a NOFIT or PREEMPT mode: its messages' most severe */
	const char *why; /* EV_PENDING, EV_INADMISSIBLE: an ENG_WHY_* reason */
	char msg[ENG_MSG_MAX];
};

/* What one reason of a message says about quota, most severe first (engine.h, ENG_WHY_*):
 * within a podSet, NoMatchingFlavor only when every flavor failed to match. */
enum cause { CAUSE_NONE, CAUSE_NO_MATCH, CAUSE_EXCEEDS, CAUSE_BORROW_LIMIT, CAUSE_WAIT };
const char *eng_cause_why(int cause);

/* A message under construction: reasons that are sorted and joined, as Kueue does. */
struct reasons {
	uint32_t n;
	const char *r[128];
	uint16_t len[128]; /* strlen(r[i]): joining them needs no strlen */
	uint8_t cause[128]; /* enum cause of each reason */
	char buf[8192];
	size_t used;
};

/* Quota held for a waiting preemptor during its tree's turn (plan NULL: dropped). */
struct phantom {
	struct ecq *cq;
	const struct eadm *plan;
};

/* An entry of a cycle's merge across the ClusterQueues of one tree. */
struct mentry {
	struct ecq *cq;
	struct ewl *wl; /* the ClusterQueue's head when pushed */
	int borrow; /* ordering key: borrowing height, as far as known */
	int tries; /* re-pushes after the key turned out worse */
};

/* --- the engine --------------------------------------------------------------------------- */

struct engine {
	struct strmap names; /* interned strings: name -> char * (the canonical copy) */
	struct strmap flavors; /* name -> struct quota_flavor * (owned deep copy) */
	struct strmap cohorts; /* name -> struct ecohort * */
	struct strmap cqs; /* name -> struct ecq * */
	struct strmap lqs; /* "ns/name" -> struct elq * */
	struct strmap namespaces; /* name -> struct ens * */
	struct strmap workloads; /* key -> struct ewl * (borrowed keys: the ewl's own) */
	/* Interned specs (struct wspec), chained by shape hash; n_specs of them. */
	struct wspec **specs;
	size_t spec_buckets, n_specs;

	/* The built structure: valid when !topology_dirty. */
	uint8_t topology_dirty;
	struct etree **trees;
	uint32_t n_trees;
	struct ecq **all_cqs; /* every record, in creation order: deterministic walks */
	uint32_t n_all_cqs, cap_all_cqs;
	struct ecohort **all_cohorts;
	uint32_t n_all_cohorts, cap_all_cohorts;

	/* Work for the next cycle. */
	struct etree **dirty_trees;
	uint32_t n_dirty_trees, cap_dirty_trees;
	struct elq **dirty_lqs;
	uint32_t n_dirty_lqs, cap_dirty_lqs;
	uint8_t drain_pending; /* some queue was set to HoldAndDrain */

	struct elq **all_lqs;
	uint32_t n_all_lqs, cap_all_lqs;
	const char *pods; /* interned "pods" */
	struct mentry *merge;
	uint32_t n_merge, cap_merge;
	struct ewl **scratch;
	uint32_t cap_scratch;

	uint64_t next_uid;
	/* Bumped by every change from outside the cycles (a workload added, replaced or removed,
	 * a spec, an eviction that isn't a victim's): preemption takes a workload for another
	 * ClusterQueue's at most ENG_CROSS_VICTIM_MAX times per epoch (engine_preempt.c). */
	uint64_t input_epoch;
	/* Admission times: given ones (ns) as they are, the engine's own after every one seen. */
	int64_t adm_clock;
	uint64_t cycle;

	/* Scratch, reused: evaluations, per-slot accumulators, materialized assignments. */
	struct eval ev_full, ev_try, ev_best;
	int64_t *acc; /* per ClusterQueue slot: this workload's usage so far */
	uint32_t cap_acc;
	struct reasons reasons;
	struct eng_assignment out_assignment;
	char arena[1 << 16]; /* cycle arena for cached messages */
	size_t arena_used;
	/* Bumped by every change an evaluation may read: admissions, releases, claims, holds,
	 * each cycle and each call that changes the engine (eng_changed). */
	uint64_t eval_epoch;
	struct shape_seen *seen; /* ENG_SEEN_SLOTS, made on first use */
	char *seen_text; /* the messages of this epoch's entries */
	size_t seen_used, seen_cap;
	uint64_t seen_text_epoch;
	/* Preemption scratch. */
	struct frset pf;
	struct reqset pr;
	struct cand *cands;
	uint32_t cap_cands;
	uint32_t *picked;
	uint32_t cap_picked;
	struct plan_memo *memo; /* ENG_MEMO_SLOTS, made on first use */
	int32_t *fp_next; /* fair preemption: the next candidate of the same ClusterQueue */
	uint32_t *fp_retry;
	uint32_t cap_fp;
	/* Kueue's PreemptionOracle, which its FlavorAssigner is given: whether preemption could
	 * make room for val of cq's slot s for w (engine_preempt.c's eng_simulate_preemption,
	 * set by engine_new). Flavor assignment (engine_quota.c) asks it through this pointer:
	 * engine_preempt.c lies above engine_quota.c, whose quota maths it uses. */
	int (*oracle)(struct engine *e, struct ecq *cq, const struct ewl *w, int32_t s, int64_t val,
		      int *borrow_after);
	/* Node feasibility (engine_set_placer). */
	eng_place_fn place_fn;
	void *place_arg;
	uint8_t no_layout_seen; /* some workload was refused since engine_capacity_changed */
	/* Phantom charges held for the rest of a tree's turn (waiting preemptors). */
	struct phantom *phantoms;
	uint32_t n_phantoms, cap_phantoms;
	/* Fair sharing (engine_fair.c). */
	struct eng_fair_sharing fs;
	uint8_t fs_turn; /* the tree being processed orders its heads by tournament */
	struct drs *fs_drs; /* per candidate and level, during a pick */
	uint32_t cap_fs_drs;
	uint32_t *fs_off; /* per candidate: its first entry in fs_drs */
	uint32_t cap_fs_off;
	/* Admission fair sharing. */
	uint8_t afs_on;
	int64_t afs_half_life, afs_interval; /* ns */
	double afs_entry_alpha; /* the entry penalty's share of an admission's requests */
	uint32_t afs_n_weights;
	const char **afs_weight_res; /* interned */
	double *afs_weight_val;
};

struct ens {
	size_t n_labels;
	struct quota_kv *labels; /* strings in the same allocation */
	uint8_t exists;
};

/* --- fair sharing (engine_fair.c) --------------------------------------------------------- */


/* The share of node n (weight w); with req (a candidate's items, already charged), also
 * whether it borrows on what they request. */
void eng_drs(const struct qnode *n, double weight, const struct eitem *req, uint32_t n_req,
	     struct drs *out);
/* Kueue's CompareDRS: < 0 when a is lower (preferred for admission), > 0 higher. */
int eng_drs_cmp(const struct drs *a, const struct drs *b);
double eng_drs_precise(const struct drs *d);
/* Fair sharing's pick: the candidate (index in e->merge) the tournament of tree t chooses, or
 * -1 when there is none. Charges and restores usage in place. */
int eng_fs_pick(struct engine *e, struct etree *t);
/* Records cq's head as a tournament candidate (its usage from a full flavor assignment; with
 * known_nofit, a head the shape cache says fits in no way, without one). */
int eng_fs_push(struct engine *e, struct ecq *cq, struct ewl *head, int known_nofit);
/* Puts back a picked candidate as it was. */
void eng_fs_repush(struct engine *e, struct ecq *cq, struct ewl *head);
/* Whether the admission in ev charges what the candidate's usage assumed; if not, the
 * candidate's usage is updated. */
int eng_fs_same_usage(struct ecq *cq, const struct eval *ev);
/* Removes entry i from the candidate set. */
struct mentry eng_fs_take(struct engine *e, int i);

/* Admission fair sharing: whether it orders cq's queue; the entry penalty of an admission; the
 * queue order within an AFS ClusterQueue. */
int eng_afs_applies(const struct engine *e, const struct ecq *cq);
void eng_afs_admitted(struct engine *e, struct ecq *cq, const struct ewl *w, const struct eadm *a);
/* Admission fair sharing's comparison of two workloads' LocalQueues: < 0 when a's used less,
 * 0 when they are the same queue or used as much. One place for the queue order, the
 * visibility order and the preemption candidates' order. */
static inline int eng_lq_usage_cmp(const struct ewl *a, const struct ewl *b)
{
	if (a->lq == b->lq || !a->lq || !b->lq || a->lq->afs_usage == b->lq->afs_usage)
		return 0;
	return a->lq->afs_usage < b->lq->afs_usage ? -1 : 1;
}
/* The order of a ClusterQueue's pending workloads, from their keys (ka is a's): with admission
 * fair sharing (afs), the LocalQueue that used less goes first (Kueue's queueOrderingFunc),
 * then the queue order (key_before). The heap's and the visibility order's one rule. */
static inline int eng_queue_before(int afs, const struct wkey *ka, const struct ewl *a,
				   const struct wkey *kb, const struct ewl *b)
{
	int c = afs ? eng_lq_usage_cmp(a, b) : 0;
	return c ? c < 0 : key_before(ka, kb);
}
/* Sets whether cq's queue is ordered by admission fair sharing, reordering it on a change. */
void eng_afs_order(struct engine *e, struct ecq *cq);
/* For engine_fair_api.c, the entry points above engine.c: a share as a status reports it; a
 * LocalQueue's usage from what it consumed; the same, then its ClusterQueue's order (1 when
 * that order is by usage and was rebuilt); the slot of resource r (interned) in what lq
 * consumed, made if new (-1: ENOMEM); and v more of r consumed. */
void eng_share_of(const struct drs *d, struct eng_share *out);
void eng_lq_usage(const struct engine *e, struct elq *lq);
int eng_lq_changed(struct engine *e, struct elq *lq);
int eng_afs_slot(struct elq *lq, const char *r);
void eng_afs_add(struct elq *lq, const char *r, double v);
/* A fairSharing.weight the engine takes: finite and >= 0. */
int eng_weight_valid(double w);

/* How many of cq's admitted workloads were admitted before the engine's current cycle. */
static inline uint32_t eng_adm_older(const struct engine *e, const struct ecq *cq)
{
	return cq->n_admitted - (cq->fresh_cycle == e->cycle ? cq->n_fresh : 0);
}

/* engine.c */
const char *eng_intern(struct engine *e, const char *s);
/* For engine_explain.c: the lazy build (0 or -errno), and whether cq's namespaceSelector
 * selects w's namespace. */
int eng_build(struct engine *e);
/* The LocalQueue record of namespace/name, made if new (it may not exist yet); NULL: -ENOMEM. */
struct elq *eng_lq(struct engine *e, const char *namespace_name, const char *name);
/* cq's queue order changed: look at it again. */
void eng_cq_reordered(struct engine *e, struct ecq *cq);
/* A setting that changes every decision changed: every ClusterQueue is looked at again. */
void eng_all_changed(struct engine *e);
int eng_ns_selected(const struct ecq *cq, const struct ewl *w);

/* engine_quota.c */
struct assign_opts {
	int quick; /* no preemption simulation (what needs it has no victims), no messages */
	int messages; /* build the pending message */
	int needs; /* record ev->needs at the first resource group that doesn't fit */
};
/* Flavor assignment for counts[] (Kueue's FlavorAssigner.assignFlavors): fills ev->items, mode,
 * borrow and (with opts->messages) ev->msg. 0 or -errno. */
int eng_assign(struct engine *e, struct ecq *cq, const struct ewl *w, const int64_t *counts,
	       const struct assign_opts *opts, struct eval *ev);
/* Kueue's ClusterQueueSnapshot.Fits: whether the items, summed per slot, fit the available
 * quota now. The last check before any admission, so nothing is ever over-admitted. */
int eng_fits_now(struct engine *e, struct ecq *cq, const struct eitem *items, uint32_t n);
/* Kueue's FindHeightOfLowestSubtreeThatFits. */
int eng_borrow_height(const struct ecq *cq, int32_t s, int64_t val, int *may_reclaim);
/* Charges or releases an admission against its ClusterQueue's nodes. */
/* One 64-bit word into a hash: a multiply and a shift where FNV takes eight rounds. */
static inline uint64_t mix64(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* Something an evaluation may read changed: what shape_seen holds is no longer valid. */
static inline void eng_changed(struct engine *e)
{
	e->eval_epoch++;
}

void eng_charge(struct ecq *cq, const struct eadm *a, int sign);
void eng_charge_items(struct ecq *cq, const struct eitem *items, uint32_t n, int sign);
/* The root node of cq's tree (cq itself without a cohort), and the root slot of cq's slot s. */
struct qnode *eng_root(struct ecq *cq);
int32_t eng_root_slot(const struct ecq *cq, int32_t s);
/* Resolves item slots against cq (after a build). */
void eng_resolve_slots(const struct ecq *cq, struct eitem *items, uint32_t n);
int eng_cq_group_of(const struct ecq *cq, const char *resource, uint32_t *g, uint32_t *r);

/* engine_preempt.c */
/* Kueue's preemption oracle for one (flavor, resource): PM_NO_CANDIDATES, PM_PREEMPT or
 * PM_RECLAIM, and the borrowing height after the preemptions. */
int eng_simulate_preemption(struct engine *e, struct ecq *cq, const struct ewl *w, int32_t slot,
			    int64_t val, int *borrow_after);
/* Kueue's classical preemption: a minimal set of victims for the assignment in ev
 * (ev->targets). Returns the number of targets or -errno. */
int eng_get_targets(struct engine *e, struct ecq *cq, const struct ewl *w, struct eval *ev);
/* The workloads preemption may take from for the items marked preempt (a preemptor asking for
 * items): Kueue's candidates in the order the greedy search removes them, in e->cands. The
 * number of candidates or -errno. Usage is left as it was. */
int eng_candidates(struct engine *e, struct ecq *cq, const struct ewl *w, const struct eitem *items,
		   uint32_t n_items);

/* engine_queue.c: the containers of pending workloads. Each keeps w->pos, w's index in it. */
int wvec_reserve(struct wvec *v, uint32_t n);
int wvec_push(struct wvec *v, struct ewl *w);
void wvec_remove(struct wvec *v, struct ewl *w);
/* The heap in queue order: room for n, then push and remove keep the order; heap_place puts
 * w at a free index i and leaves the order to the caller (then eng_heap_rebuild). */
int heap_reserve(struct wheap *h, uint32_t n);
int heap_push(struct wheap *h, struct ewl *w);
void heap_remove(struct wheap *h, struct ewl *w);
void heap_place(struct wheap *h, uint32_t i, struct ewl *w);
/* Re-establishes the heap order of cq's queue after LocalQueue usages changed. */
void eng_heap_rebuild(struct wheap *h);
/* For engine_check, in O(n): the first index of h whose workload is not where its pos says,
 * whose kept key is not its workload's, or that comes before its parent; -1: none. */
int64_t eng_heap_check(const struct wheap *h);

#endif
