/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Classical preemption, as Kueue's pkg/scheduler/preemption (classical/ and common/):
 * candidates from the preemptor's own ClusterQueue (withinClusterQueue) and from ClusterQueues
 * of the cohort tree that use more than their nominal quota (reclaimWithinCohort,
 * borrowWithinCohort), in Kueue's order; then the greedy minimal set: remove candidates until
 * the preemptor fits, then add back, newest-removed first, every one it still fits without.
 *
 * Simulations change the live usage and restore it exactly (usage is path independent, see
 * engine_quota.c), so nothing is copied.
 *
 * Victims a waiting preemptor counts on (claimed, and evicting) stay candidates, first in the
 * order as Kueue's evicted ones are; a preemptor whose targets include one of them preempts
 * nothing and waits (engine.c, process_tree), as Kueue skips a preemptor whose targets overlap
 * another's. Until 2026-11-29 claimed victims were no candidates and each preemptor of a
 * cohort evicted a set of its own: 391 evictions against Kueue's 3 on Kueue's large-scale
 * shape at 100 ClusterQueues (tests/bench/results/side-by-side.md, bench_kueue_baseline -s
 * large).
 *
 * Differences from Kueue, on purpose:
 *  - Workloads admitted in the current cycle are not candidates in it: Kueue's candidates come
 *    from the snapshot taken before the cycle, so it never preempts what it just admitted.
 *  - The preemption circle guard: between two inputs (engine.input_epoch: a workload added,
 *    replaced or removed, a spec, an eviction that isn't a victim's), preemption takes a
 *    workload for another ClusterQueue's at most ENG_CROSS_VICTIM_MAX (4) times; after that it
 *    is no candidate from outside its ClusterQueue until the next input. Why: with two queues
 *    fair sharing's strategies make preemption settle, as each one lowers the larger of the
 *    two shares (A takes from B only if A's share with its workload stays below B's). But
 *    shares also move without any strategy being asked: a preemptor's own-ClusterQueue
 *    victims (withinClusterQueue, by priority) and FairSharingPreemptWithinNominal's reclaims
 *    are taken without one, and quota a preemption frees beyond what its preemptor uses is
 *    admitted by whoever fits. So A -> B and later B -> A can both pass: in MUSTER_SEED=127's
 *    world (op 899) B's w213 took A's w155, B's w223 (a fair victim of A) came back by
 *    evicting w213 within B, the memory w213 freed went to w155 by plain admission, A's share
 *    rose past B's again and the circle closed, for good. Classical preemption circles the
 *    same way through rules that disagree: reclaimWithinCohort lets a queue within its nominal
 *    quota take any priority from a borrowing one, borrowWithinCohort lets that one take back
 *    lower priorities while borrowing (MUSTER_SEED=795919197, fair sharing off, op 4199).
 *    With the guard, an epoch has at most ENG_CROSS_VICTIM_MAX x workloads preemptions from
 *    other ClusterQueues; every other one is within a ClusterQueue, where the preemptor
 *    outranks each victim in a fixed order (priority, then queue time) and gets the quota
 *    they free, and admissions only add, so the admitted set rises in the multiset order of
 *    that rank until it stops: every world settles once its inputs do. Kueue has no such
 *    guard (kueue#6861, kueue#13662) and circles in such worlds. Where it settles the answers
 *    are the same unless one workload is taken more than ENG_CROSS_VICTIM_MAX times between
 *    inputs: in 360 random fair worlds only the circling one changed, and the classical
 *    benchmarks (bench_engine_throughput, -q, -k) decide exactly as before; but
 *    bench_engine_throughput -q -f, whose fair churn preempts 8,018 times for 9,771
 *    admissions with the default strategies, preempts 2,789 times with the guard (1,464 ->
 *    1,011 with LessThanOrEqualToFinalShare alone). A limit of 8 left some circles going past
 *    the property test's 100 rounds. docs/kueue-compat-fair-preemption.md says the same for
 *    users.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine_internal.h"
#include "core/grow.h"

enum variant {
	V_NEVER,
	V_WITHIN_CQ,
	V_HIERARCHICAL_RECLAIM,
	V_RECLAIM_WITHOUT_BORROWING,
	V_RECLAIM_WHILE_BORROWING,
	V_FAIR_SHARING, /* fair preemption: taken by a strategy (InCohortFairSharing) */
};

struct pctx {
	struct engine *e;
	struct ecq *cq;
	const struct ewl *p;
	const struct frset *f;
	const struct reqset *r;
	uint32_t n_cands;
	uint32_t n_other; /* candidates from other ClusterQueues */
	uint32_t n_hierarchical;
	int fair; /* fair sharing: Kueue's fair preemption replaces the classical one */
};

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int within_nominal(const struct qnode *n, const struct frset *f)
{
	for (uint32_t i = 0; i < f->n; i++) {
		int32_t s = qnode_find(n, f->flavor[i], f->resource[i]);
		if (s >= 0 && n->slots[s].subtree < n->slots[s].usage)
			return 0;
	}
	return 1;
}

static int uses_resources(const struct ewl *w, const struct frset *f)
{
	for (uint32_t i = 0; i < w->adm->n_items; i++)
		for (uint32_t k = 0; k < f->n; k++)
			if (w->adm->items[i].flavor == f->flavor[k] &&
			    w->adm->items[i].resource == f->resource[k])
				return 1;
	return 0;
}

/* Kueue's SatisfiesPreemptionPolicy. */
static int satisfies_policy(const struct ewl *p, const struct ewl *c, int same_cq,
			    const struct eng_preemption *pol)
{
	int lower = p->priority > c->priority;
	if (same_cq) {
		switch (pol->within_cluster_queue) {
		case ENG_WITHIN_LOWER_PRIORITY:
			return lower;
		case ENG_WITHIN_LOWER_OR_NEWER_EQUAL:
			return lower ||
			       (p->priority == c->priority && p->queue_time < c->queue_time);
		case ENG_WITHIN_NEVER:
			return 0;
		}
		return 0;
	}
	switch (pol->reclaim_within_cohort) {
	case ENG_RECLAIM_LOWER_PRIORITY:
		return lower;
	case ENG_RECLAIM_ANY:
		return 1;
	case ENG_RECLAIM_NEVER:
		return 0;
	}
	return 0;
}

/* Kueue's classifyPreemptionVariant. */
static int classify(const struct pctx *pc, const struct ewl *c, int has_advantage)
{
	const struct eng_preemption *pol = &pc->cq->preemption;
	int same_cq = c->adm_cq == pc->cq;
	if (!uses_resources(c, pc->f))
		return V_NEVER;
	if (!satisfies_policy(pc->p, c, same_cq, pol))
		return V_NEVER;
	if (same_cq)
		return V_WITHIN_CQ;
	if (pc->fair)
		return V_FAIR_SHARING; /* borrowWithinCohort plays no part in fair preemption */
	if (has_advantage)
		return V_HIERARCHICAL_RECLAIM;
	if (pol->borrow_within_cohort == ENG_BORROW_WITHIN_NEVER)
		return V_RECLAIM_WITHOUT_BORROWING;
	/* Above the threshold a victim may only go if the preemptor ends up not borrowing. */
	if (c->priority >= pc->p->priority ||
	    (pol->has_max_priority_threshold && c->priority > pol->max_priority_threshold))
		return V_RECLAIM_WITHOUT_BORROWING;
	return V_RECLAIM_WHILE_BORROWING;
}

static int push_cand(struct pctx *pc, struct ewl *w, const struct qnode *lca, int variant,
		     uint8_t list)
{
	struct engine *e = pc->e;
	if (GROW(e->cands, e->cap_cands, pc->n_cands + 1) != 0)
		return -ENOMEM;
	e->cands[pc->n_cands++] = (struct cand){
		.wl = w,
		.lca = lca,
		.adm_time = w->adm_time,
		.priority = w->priority,
		.rank = (uint8_t)((!w->evicting) << 2 | list),
		.afs = w->adm_cq->heap.afs,
		.variant = (uint8_t)variant,
		.list = list,
	};
	if (list != 2)
		pc->n_other++;
	if (list == 0)
		pc->n_hierarchical++;
	return 0;
}

static int collect_cq(struct pctx *pc, struct ecq *q, const struct qnode *lca, int has_advantage,
		      uint8_t list)
{
	/* Admitted lists are in ascending priority: stop where the policy stops. */
	const struct eng_preemption *pol = &pc->cq->preemption;
	int64_t bound = INT64_MAX;
	if (q == pc->cq && pol->within_cluster_queue == ENG_WITHIN_LOWER_PRIORITY)
		bound = pc->p->priority;
	else if (q == pc->cq && pol->within_cluster_queue == ENG_WITHIN_LOWER_OR_NEWER_EQUAL)
		bound = (int64_t)pc->p->priority + 1;
	else if (q != pc->cq && pol->reclaim_within_cohort == ENG_RECLAIM_LOWER_PRIORITY)
		bound = pc->p->priority;
	/* Past the last one admitted before this cycle, none is a candidate. */
	uint32_t older = eng_adm_older(pc->e, q);
	for (struct ewl *w = q->adm_head; older && w && w->priority < bound; w = w->adm_next) {
		if (w->adm_cycle == pc->e->cycle)
			continue;
		older--;
		/* The preemption circle guard (see the file comment). */
		if (q != pc->cq && w->cross_victim_epoch == pc->e->input_epoch &&
		    w->cross_victim_count >= ENG_CROSS_VICTIM_MAX)
			continue;
		int v = classify(pc, w, has_advantage);
		if (v == V_NEVER)
			continue;
		int rc = push_cand(pc, w, lca, v, list);
		if (rc)
			return rc;
	}
	return 0;
}

/* Kueue's collectCandidatesInSubtree: ClusterQueues under cur that use more than their quota
 * (skipping subtrees within theirs, and the subtree already searched). */
static int collect_subtree(struct pctx *pc, const struct ecohort *cur, const struct qnode *lca,
			   const struct ecohort *skip, int has_advantage)
{
	for (uint32_t i = 0; i < cur->n_child_cohorts; i++) {
		const struct ecohort *c = cur->child_cohorts[i];
		if (c == skip || within_nominal(&c->node, pc->f))
			continue;
		int rc = collect_subtree(pc, c, lca, skip, has_advantage);
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < cur->n_child_cqs; i++) {
		struct ecq *q = cur->child_cqs[i];
		if (q == pc->cq || !eng_adm_older(pc->e, q) || within_nominal(&q->node, pc->f))
			continue;
		int rc = collect_cq(pc, q, lca, has_advantage, has_advantage ? 0 : 1);
		if (rc)
			return rc;
	}
	return 0;
}

/* Kueue's QuantitiesFitInQuota: whether the requests fit in the node's subtree quota; leaves in
 * val what exceeds the node's local availability (for the parent). */
static int fits_in_quota(const struct qnode *n, const int32_t *slot, int64_t *val, uint32_t count)
{
	int fits = 1;
	for (uint32_t i = 0; i < count; i++) {
		const struct qslot *q = &n->slots[slot[i]];
		if (q->subtree < sat_add(q->usage, val[i]))
			fits = 0;
		val[i] = max64(0, sat_sub(val[i], q_local_available(n, slot[i])));
	}
	return fits;
}

/* Kueue's cqIsBorrowing: uses more than its nominal quota of a pair preemption is needed on. */
static int borrowing_on(const struct ecq *q, const struct frset *f)
{
	for (uint32_t i = 0; i < f->n; i++) {
		int32_t s = qnode_find(&q->node, f->flavor[i], f->resource[i]);
		if (s >= 0 && q->node.slots[s].nominal < q->node.slots[s].usage)
			return 1;
	}
	return 0;
}

/* Kueue's findCandidates under fair sharing: the own ClusterQueue's (withinClusterQueue) and,
 * from every other ClusterQueue of the tree that borrows on what is needed, those
 * reclaimWithinCohort allows. */
static int collect_fair(struct pctx *pc)
{
	struct ecq *cq = pc->cq;
	int rc;
	if (cq->preemption.within_cluster_queue != ENG_WITHIN_NEVER &&
	    (rc = collect_cq(pc, cq, NULL, 0, 2)) != 0)
		return rc;
	if (!cq->node.parent || cq->preemption.reclaim_within_cohort == ENG_RECLAIM_NEVER)
		return 0;
	for (uint32_t i = 0; i < cq->tree->n_cqs; i++) {
		struct ecq *q = cq->tree->cqs[i];
		if (q != cq && borrowing_on(q, pc->f) && (rc = collect_cq(pc, q, NULL, 0, 1)) != 0)
			return rc;
	}
	return 0;
}

/* Whether some ClusterQueue of cq's tree holds a workload admitted before this cycle: every
 * candidate comes from the tree, so without one there is nothing to collect. Answers most
 * searches of a cycle that fills empty queues, for a few instructions per ClusterQueue. */
static int tree_has_older(const struct engine *e, const struct ecq *cq)
{
	if (!cq->tree)
		return 1; /* not built: let the walk decide */
	for (uint32_t i = 0; i < cq->tree->n_cqs; i++)
		if (eng_adm_older(e, cq->tree->cqs[i]))
			return 1;
	return 0;
}

static int collect(struct pctx *pc)
{
	struct ecq *cq = pc->cq;
	int rc;
	if (!tree_has_older(pc->e, cq))
		return 0;
	if (pc->fair)
		return collect_fair(pc);
	if (cq->preemption.within_cluster_queue != ENG_WITHIN_NEVER) {
		rc = collect_cq(pc, cq, NULL, 0, 2);
		if (rc)
			return rc;
	}
	if (!cq->node.parent || cq->preemption.reclaim_within_cohort == ENG_RECLAIM_NEVER)
		return 0;
	int32_t slot[ENG_MAX_ITEMS];
	int64_t rem[ENG_MAX_ITEMS];
	uint32_t n = pc->r->n;
	memcpy(slot, pc->r->slot, n * sizeof(*slot));
	memcpy(rem, pc->r->val, n * sizeof(*rem));
	int has_advantage = fits_in_quota(&cq->node, slot, rem, n);
	const struct qnode *child = &cq->node;
	const struct ecohort *prev = NULL;
	for (const struct ecohort *a = cq->parent; a; a = a->parent) {
		for (uint32_t i = 0; i < n; i++)
			slot[i] = child->slots[slot[i]].parent_slot;
		rc = collect_subtree(pc, a, &a->node, prev, has_advantage);
		if (rc)
			return rc;
		/* Once a subtree holds the request, the preemptor has the advantage over everything
		 * that uses that subtree's quota. */
		has_advantage |= fits_in_quota(&a->node, slot, rem, n);
		prev = a;
		child = &a->node;
	}
	return 0;
}

/* Kueue's CandidatesOrdering, with evicted candidates moved to the front of each list
 * (evicting first, then by list: struct cand.rank). From the copies in struct cand: a
 * workload is read only with admission fair sharing or for the last tie. */
static int cmp_cand(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	/* Admission fair sharing: of one ClusterQueue, the LocalQueue that used more first. */
	if (a->afs && b->afs && a->wl->adm_cq == b->wl->adm_cq) {
		int c = eng_lq_usage_cmp(a->wl, b->wl);
		if (c)
			return -c;
	}
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	if (a->adm_time != b->adm_time)
		return a->adm_time > b->adm_time ? -1 : 1;
	return strcmp(a->wl->key, b->wl->key);
}

static int candidate_valid(const struct pctx *pc, const struct cand *c, int borrow)
{
	const struct ecq *q = c->wl->adm_cq;
	if (q == pc->cq)
		return 1;
	if (borrow && c->variant == V_RECLAIM_WITHOUT_BORROWING)
		return 0;
	if (within_nominal(&q->node, pc->f))
		return 0;
	for (const struct qnode *n = q->node.parent; n && n != c->lca; n = n->parent)
		if (within_nominal(n, pc->f))
			return 0;
	return 1;
}

static int preemptor_fits(const struct pctx *pc, int borrow)
{
	const struct qnode *n = &pc->cq->node;
	for (uint32_t i = 0; i < pc->r->n; i++) {
		const struct qslot *q = &n->slots[pc->r->slot[i]];
		if (!borrow && q->nominal < sat_add(q->usage, pc->r->val[i]))
			return 0;
		if (pc->r->val[i] > max64(0, q_available(n, pc->r->slot[i])))
			return 0;
	}
	return 1;
}

static void charge_cand(const struct pctx *pc, uint32_t i, int sign)
{
	const struct ewl *w = pc->e->cands[i].wl;
	eng_charge(w->adm_cq, w->adm, sign);
	w->adm_cq->fp_share_ok = 0;
}

static void sort_cands(struct pctx *pc)
{
	if (pc->n_cands > 1)
		qsort(pc->e->cands, pc->n_cands, sizeof(*pc->e->cands), cmp_cand);
}

/* The candidates in e->cands, in the order they are tried. */
static int collect_sorted(struct pctx *pc)
{
	int rc = collect(pc);
	if (rc == 0)
		sort_cands(pc);
	return rc;
}

/* --- fair preemption (Kueue's fairPreemptions) ------------------------------------------- */

/* A node of the cohort tree with its weight: a ClusterQueue's or a cohort's. */
struct fnode {
	const struct qnode *n;
	double weight;
};

static struct drs share(struct fnode f)
{
	struct drs d;
	eng_drs(f.n, f.weight, NULL, 0, &d);
	return d;
}

static int on_preemptor_path(const struct pctx *pc, const struct ecohort *c)
{
	for (const struct ecohort *a = pc->cq->parent; a; a = a->parent)
		if (a == c)
			return 1;
	return 0;
}

/* The node just below lca on q's way up (q itself when lca is its parent). */
static struct fnode almost_lca(const struct ecq *q, const struct ecohort *lca)
{
	struct fnode f = { &q->node, q->fair_weight };
	for (const struct ecohort *c = q->parent; c && c != lca; c = c->parent)
		f = (struct fnode){ &c->node, c->fair_weight };
	return f;
}

/* Kueue's ComputeShares: the preemptor's and the target's sides below their lowest common
 * ancestor. */
static void sides(const struct pctx *pc, const struct ecq *target, struct fnode *pre,
		  struct fnode *tgt)
{
	const struct ecohort *lca = target->parent;
	while (lca && !on_preemptor_path(pc, lca))
		lca = lca->parent;
	*pre = almost_lca(pc->cq, lca);
	*tgt = almost_lca(target, lca);
}

static void charge_preemptor(const struct pctx *pc, int sign)
{
	pc->cq->fp_share_ok = 0;
	for (uint32_t i = 0; i < pc->r->n; i++) {
		if (sign > 0)
			q_add_usage(&pc->cq->node, pc->r->slot[i], pc->r->val[i]);
		else
			q_remove_usage(&pc->cq->node, pc->r->slot[i], pc->r->val[i]);
	}
}

/* Kueue's workloadFitsForFairSharing: the preemptor's usage is charged while the shares are
 * compared; whether it fits is asked without it. */
static int fair_fits(const struct pctx *pc)
{
	charge_preemptor(pc, -1);
	int fits = preemptor_fits(pc, 1);
	charge_preemptor(pc, +1);
	return fits;
}

static void reset_pruned(struct ecohort *c)
{
	c->fp_pruned = 0;
	for (uint32_t i = 0; i < c->n_child_cohorts; i++)
		reset_pruned(c->child_cohorts[i]);
}

/* Kueue's MakeClusterQueueOrdering: the candidates listed (indices into e->cands, in order)
 * queued per ClusterQueue. */
static void order_by_cq(const struct pctx *pc, const uint32_t *list, uint32_t n)
{
	struct engine *e = pc->e;
	struct etree *t = pc->cq->tree;
	for (uint32_t i = 0; i < t->n_cqs; i++) {
		t->cqs[i]->fp_head = t->cqs[i]->fp_tail = -1;
		t->cqs[i]->fp_pruned = 0;
		t->cqs[i]->fp_share_ok = 0;
	}
	if (t->root)
		reset_pruned(t->root);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = list[k];
		struct ecq *q = e->cands[i].wl->adm_cq;
		e->fp_next[i] = -1;
		if (q->fp_tail < 0)
			q->fp_head = (int32_t)i;
		else
			e->fp_next[q->fp_tail] = (int32_t)i;
		q->fp_tail = (int32_t)i;
	}
}

static uint32_t pop_cand(const struct pctx *pc, struct ecq *q)
{
	uint32_t i = (uint32_t)q->fp_head;
	q->fp_head = pc->e->fp_next[i];
	if (q->fp_head < 0)
		q->fp_tail = -1;
	return i;
}

/* Kueue's TargetClusterQueueOrdering.nextTarget: the ClusterQueue under c with the highest
 * share that may still give something, or NULL (then something was pruned). */
static struct ecq *next_target(const struct pctx *pc, struct ecohort *c)
{
	struct ecq *best_q = NULL;
	struct drs best_qd = { -1, 1, NULL, 0, 0 }; /* Kueue's NegativeDRS */
	for (uint32_t i = 0; i < c->n_child_cqs; i++) {
		struct ecq *q = c->child_cqs[i];
		if (q->fp_pruned)
			continue;
		if (q->fp_head < 0) { /* nothing to take: no share needed */
			q->fp_pruned = 1;
			continue;
		}
		if (!q->fp_share_ok) {
			q->fp_share = share((struct fnode){ &q->node, q->fair_weight });
			q->fp_share_ok = 1;
		}
		struct drs d = q->fp_share;
		if (!d.borrowing && q != pc->cq) {
			q->fp_pruned = 1;
			continue;
		}
		int cmp = eng_drs_cmp(&d, &best_qd);
		if (cmp == 0 && best_q) {
			if (cmp_cand(&pc->e->cands[q->fp_head], &pc->e->cands[best_q->fp_head]) < 0)
				best_q = q;
		} else if (cmp > 0) {
			best_qd = d;
			best_q = q;
		}
	}
	struct ecohort *best_c = NULL;
	struct drs best_cd = { -1, 1, NULL, 0, 0 };
	for (uint32_t i = 0; i < c->n_child_cohorts; i++) {
		struct ecohort *k = c->child_cohorts[i];
		if (k->fp_pruned)
			continue;
		struct drs d = share((struct fnode){ &k->node, k->fair_weight });
		if (!d.borrowing && !on_preemptor_path(pc, k)) {
			k->fp_pruned = 1;
			continue;
		}
		if (eng_drs_cmp(&d, &best_cd) >= 0) {
			best_cd = d;
			best_c = k;
		}
	}
	if (!best_c && !best_q) {
		c->fp_pruned = 1;
		return NULL;
	}
	if (eng_drs_cmp(&best_cd, &best_qd) >= 0)
		return next_target(pc, best_c);
	return best_q;
}

/* Kueue's TargetClusterQueueOrdering.Iter, one step: the next ClusterQueue to take from, or
 * NULL when every one is done. */
static struct ecq *next_cq(const struct pctx *pc)
{
	struct ecq *cq = pc->cq;
	if (!cq->parent)
		return !cq->fp_pruned && cq->fp_head >= 0 ? cq : NULL;
	struct ecohort *root = cq->tree->root;
	while (!root->fp_pruned) {
		struct ecq *q = next_target(pc, root);
		if (q)
			return q;
	}
	return NULL;
}

static void take(const struct pctx *pc, uint32_t i, int variant, uint32_t *n)
{
	charge_cand(pc, i, -1);
	pc->e->cands[i].variant = (uint8_t)variant;
	pc->e->picked[(*n)++] = i;
}

static int strategy_holds(enum eng_fs_strategy s, const struct drs *pre_new,
			  const struct drs *tgt_old, const struct drs *tgt_new)
{
	if (s == ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE)
		return eng_drs_cmp(pre_new, tgt_new) <= 0;
	return eng_drs_cmp(pre_new, tgt_old) < 0;
}

/* Kueue's runFirstFsStrategy: 1 when the preemptor fits; candidates that failed the strategy
 * are appended to e->fp_retry. */
static int first_strategy(const struct pctx *pc, enum eng_fs_strategy s, uint32_t *n,
			  uint32_t *n_retry)
{
	struct engine *e = pc->e;
	/* FairSharingPreemptWithinNominal (Beta, on): within its nominal quota on what it needs,
	 * the preemptor reclaims without the strategies. */
	int within_nominal = !borrowing_on(pc->cq, pc->f);
	struct ecq *q;
	while ((q = next_cq(pc)) != NULL) {
		if (q == pc->cq || within_nominal) {
			take(pc, pop_cand(pc, q),
			     q == pc->cq ? V_WITHIN_CQ : V_HIERARCHICAL_RECLAIM, n);
			if (fair_fits(pc))
				return 1;
			continue;
		}
		struct fnode pre, tgt;
		sides(pc, q, &pre, &tgt);
		struct drs pre_new = share(pre), tgt_old = share(tgt);
		if (isinf(eng_drs_precise(&pre_new)) && !isinf(eng_drs_precise(&tgt_old))) {
			/* No candidate here can pass either strategy (Kueue's
			 * fsStrategyUnsatisfiable). */
			while (q->fp_head >= 0)
				e->fp_retry[(*n_retry)++] = pop_cand(pc, q);
			continue;
		}
		while (q->fp_head >= 0) {
			uint32_t i = pop_cand(pc, q);
			charge_cand(pc, i, -1);
			struct drs tgt_new = share(tgt);
			charge_cand(pc, i, +1);
			if (!strategy_holds(s, &pre_new, &tgt_old, &tgt_new)) {
				e->fp_retry[(*n_retry)++] = i;
				continue;
			}
			take(pc, i, V_FAIR_SHARING, n);
			if (fair_fits(pc))
				return 1;
			break; /* the shares moved: choose the ClusterQueue again */
		}
	}
	return 0;
}

/* Kueue's runSecondFsStrategy (rule S2-b): LessThanInitialShare over what the first strategy
 * left, one candidate per ClusterQueue. */
static int second_strategy(const struct pctx *pc, uint32_t n_retry, uint32_t *n)
{
	order_by_cq(pc, pc->e->fp_retry, n_retry);
	struct ecq *q;
	while ((q = next_cq(pc)) != NULL) {
		struct fnode pre, tgt;
		sides(pc, q, &pre, &tgt);
		struct drs pre_new = share(pre), tgt_old = share(tgt);
		uint32_t i = pop_cand(pc, q);
		if (eng_drs_cmp(&pre_new, &tgt_old) < 0) {
			take(pc, i, V_FAIR_SHARING, n);
			if (fair_fits(pc))
				return 1;
		}
		q->fp_pruned = 1;
	}
	return 0;
}

/* Kueue's fairPreemptions over the candidates plan() collected: picked candidate indices in
 * e->picked. */
static int fair_plan(struct pctx *pc, uint32_t *n_picked)
{
	struct engine *e = pc->e;
	const struct eng_fair_sharing *fs = &e->fs;
	if (e->cap_fp < pc->n_cands) { /* two arrays, one capacity */
		size_t cap = grow_capacity(e->cap_fp, pc->n_cands, sizeof(*e->fp_next), UINT32_MAX);
		if (cap == 0 || grow_resize(&e->fp_next, cap, sizeof(*e->fp_next)) != 0 ||
		    grow_resize(&e->fp_retry, cap, sizeof(*e->fp_retry)) != 0)
			return -ENOMEM;
		e->cap_fp = (uint32_t)cap;
	}
	for (uint32_t i = 0; i < pc->n_cands; i++)
		e->fp_retry[i] = i;
	order_by_cq(pc, e->fp_retry, pc->n_cands);
	uint32_t n = 0, n_retry = 0;
	/* The shares are compared with the preemptor's workload in (SimulateUsageAddition). */
	charge_preemptor(pc, +1);
	int fits = first_strategy(pc, fs->strategies[0], &n, &n_retry);
	if (!fits && fs->n_strategies > 1)
		fits = second_strategy(pc, n_retry, &n);
	charge_preemptor(pc, -1);
	if (fits && n > 1) {
		/* Kueue's fillBackWorkloads: put back, last taken first, every victim it fits
		 * without (the last one taken is needed by construction). */
		for (int k = (int)n - 2; k >= 0; k--) {
			charge_cand(pc, e->picked[k], +1);
			if (preemptor_fits(pc, 1))
				e->picked[k] = e->picked[--n];
			else
				charge_cand(pc, e->picked[k], -1);
		}
	}
	for (uint32_t k = 0; k < n; k++)
		charge_cand(pc, e->picked[k], +1);
	*n_picked = fits ? n : 0;
	return 0;
}

/* Moves the evicting candidates before the others and returns how many there are. Evicting
 * ones come first in the order (struct cand.rank), so sorting each part alone gives the whole
 * order: the search sorts the rest only when the evicting ones are not enough. On Kueue's
 * large-scale shape a preemptor mostly fits once the victims another one claimed (evicting)
 * are taken out, and those are about a quarter of the cohort's candidates. */
static uint32_t evicting_first(struct pctx *pc)
{
	struct cand *c = pc->e->cands;
	uint32_t n = 0;
	for (uint32_t i = 0; i < pc->n_cands; i++) {
		if (c[i].rank >> 2) /* not evicting */
			continue;
		struct cand t = c[n];
		c[n++] = c[i];
		c[i] = t;
	}
	return n;
}

static void sort_range(struct pctx *pc, uint32_t from, uint32_t to)
{
	if (to - from > 1)
		qsort(pc->e->cands + from, to - from, sizeof(*pc->e->cands), cmp_cand);
}

/* Whether the preemptor fits once every candidate from `from` on that is valid now is taken
 * out too (e->picked past the *n taken is its scratch). The search takes out only some of
 * those, in order: usage only falls during it, so a ClusterQueue within its nominal quota
 * stays so and a candidate not valid now never becomes valid; and what is available only
 * grows as usage falls. So when this says no, taking more in order never fits, and the
 * search needs neither the rest of the order (a sort of the cohort's candidates) nor the
 * walk: on Kueue's large-scale shape nearly every search in churn ends so. Usage is path
 * independent (engine_quota.c): charging back restores it. */
static int fits_without_rest(struct pctx *pc, int borrow, uint32_t from, uint32_t n_taken)
{
	struct engine *e = pc->e;
	uint32_t n = n_taken;
	for (uint32_t i = from; i < pc->n_cands; i++)
		if (candidate_valid(pc, &e->cands[i], borrow))
			e->picked[n++] = i;
	for (uint32_t k = n_taken; k < n; k++)
		charge_cand(pc, e->picked[k], -1);
	int fits = preemptor_fits(pc, borrow);
	for (uint32_t k = n_taken; k < n; k++)
		charge_cand(pc, e->picked[k], +1);
	return fits;
}

/* Takes out, in order, the valid candidates of [from, to), appending them to e->picked (*n),
 * until the preemptor fits: then 1, with e->picked cut to the minimal set (add back, in
 * reverse, every victim it still fits without) and every one charged back. 0 when it doesn't
 * fit yet: those taken stay out. */
static int take_until_fits(struct pctx *pc, int borrow, uint32_t from, uint32_t to, uint32_t *n)
{
	struct engine *e = pc->e;
	for (uint32_t i = from; i < to; i++) {
		if (!candidate_valid(pc, &e->cands[i], borrow))
			continue;
		charge_cand(pc, i, -1);
		e->picked[(*n)++] = i;
		if (!preemptor_fits(pc, borrow))
			continue;
		for (int k = (int)*n - 2; k >= 0; k--) {
			charge_cand(pc, e->picked[k], +1);
			if (preemptor_fits(pc, borrow)) {
				memmove(&e->picked[k], &e->picked[k + 1],
					(*n - (uint32_t)k - 1) * sizeof(*e->picked));
				(*n)--;
			} else {
				charge_cand(pc, e->picked[k], -1);
			}
		}
		for (uint32_t k = 0; k < *n; k++)
			charge_cand(pc, e->picked[k], +1);
		return 1;
	}
	return 0;
}

/* Kueue's classicalPreemptions (or with fair sharing its fairPreemptions): picked candidate
 * indices in e->picked, in candidate order. */
static int search(struct pctx *pc, uint32_t *n_picked)
{
	struct engine *e = pc->e;
	int rc = collect(pc);
	*n_picked = 0;
	if (rc)
		return rc;
	if (pc->n_cands == 0)
		return 0;
	if (GROW(e->picked, e->cap_picked, pc->n_cands) != 0)
		return -ENOMEM;
	if (pc->fair) {
		sort_cands(pc);
		return fair_plan(pc, n_picked);
	}

	/* Which of "may borrow after preempting" to try, and in which order (Kueue's comment:
	 * without borrowing there are more candidates, with it fewer victims). */
	int attempts[2], n_attempts;
	int forbidden = pc->cq->preemption.borrow_within_cohort == ENG_BORROW_WITHIN_NEVER;
	int under_nominal = 1;
	for (uint32_t i = 0; i < pc->f->n; i++) {
		int32_t s = qnode_find(&pc->cq->node, pc->f->flavor[i], pc->f->resource[i]);
		if (s >= 0 && pc->cq->node.slots[s].nominal <= pc->cq->node.slots[s].usage)
			under_nominal = 0;
	}
	if (pc->n_other == 0 || (forbidden && !under_nominal)) {
		attempts[0] = 1;
		n_attempts = 1;
	} else if (forbidden && pc->n_hierarchical == 0) {
		attempts[0] = 0;
		attempts[1] = 1;
		n_attempts = 2;
	} else {
		attempts[0] = 1;
		attempts[1] = 0;
		n_attempts = 2;
	}

	/* The order, in two parts: the evicting candidates, then the rest once needed. */
	uint32_t n_evicting = evicting_first(pc);
	int rest_sorted = 0;
	sort_range(pc, 0, n_evicting);
	for (int a = 0; a < n_attempts; a++) {
		int borrow = attempts[a];
		uint32_t n = 0;
		int fits = take_until_fits(pc, borrow, 0, n_evicting, &n);
		if (!fits && fits_without_rest(pc, borrow, n_evicting, n)) {
			if (!rest_sorted) {
				sort_range(pc, n_evicting, pc->n_cands);
				rest_sorted = 1;
			}
			fits = take_until_fits(pc, borrow, n_evicting, pc->n_cands, &n);
		}
		if (fits) {
			*n_picked = n;
			return 0;
		}
		for (uint32_t k = 0; k < n; k++)
			charge_cand(pc, e->picked[k], +1);
	}
	return 0;
}

/*
 * The search memo (struct plan_memo). A search reads, of the preemptor, its ClusterQueue, its
 * priority (the candidates' bounds and the policies) and, with LowerOrNewerEqual, its queue
 * time; of the request, the pairs and amounts; of the engine, what eng_changed marks, the
 * cycle (what it admitted is no candidate) and input_epoch (the circle guard). The same
 * search is asked for again and again: the flavor assignment's simulation and then the
 * targets of the same workload, and the same shape from other workloads of the ClusterQueue
 * while nothing changed in between. On Kueue's large-scale shape with quota held long
 * (bench_kueue_baseline -s large -d 500 -f 2000), where preemptors whose targets overlap
 * another's wait and are looked at again at every release, about 106,000 of 156,000 searches
 * were such repeats, and the searches that find victims fell from 61,800 to about 3,400.
 * Not with fair sharing, whose strategies read more, nor admission fair sharing, whose
 * LocalQueue usage orders the candidates. The slot is chosen by pointers too, so which
 * repeats it catches may vary from run to run; its answers never do.
 */
static int memo_usable(const struct pctx *pc)
{
	return !pc->fair && !pc->e->afs_on;
}

static int64_t memo_queue_time(const struct pctx *pc)
{
	return pc->cq->preemption.within_cluster_queue == ENG_WITHIN_LOWER_OR_NEWER_EQUAL ?
		       pc->p->queue_time :
		       0;
}

/* The memo slot for this search's inputs, or NULL when it is not kept. */
static struct plan_memo *memo_slot(const struct pctx *pc)
{
	struct engine *e = pc->e;
	if (pc->f->n > ENG_MEMO_PAIRS || pc->r->n > ENG_MEMO_PAIRS ||
	    (!e->memo && !(e->memo = calloc(ENG_MEMO_SLOTS, sizeof(*e->memo)))))
		return NULL;
	uint64_t h = mix64((uint64_t)(uintptr_t)pc->cq, (uint64_t)(uint32_t)pc->p->priority);
	h = mix64(h, (uint64_t)memo_queue_time(pc));
	for (uint32_t i = 0; i < pc->f->n; i++)
		h = mix64(mix64(h, (uint64_t)(uintptr_t)pc->f->flavor[i]),
			  (uint64_t)(uintptr_t)pc->f->resource[i]);
	for (uint32_t i = 0; i < pc->r->n; i++)
		h = mix64(mix64(h, (uint64_t)(uint32_t)pc->r->slot[i]), (uint64_t)pc->r->val[i]);
	return &e->memo[(h >> 32) & (ENG_MEMO_SLOTS - 1)];
}

static int memo_matches(const struct pctx *pc, const struct plan_memo *m)
{
	const struct engine *e = pc->e;
	/* The epoch first: while it stands no workload was removed, so m->picked is alive. */
	if (!m->valid || m->eval_epoch != e->eval_epoch || m->cycle != e->cycle ||
	    m->input_epoch != e->input_epoch || m->cq != pc->cq || m->priority != pc->p->priority ||
	    m->queue_time != memo_queue_time(pc) || m->n_pairs != pc->f->n || m->n_reqs != pc->r->n)
		return 0;
	for (uint32_t i = 0; i < pc->f->n; i++)
		if (m->flavor[i] != pc->f->flavor[i] || m->resource[i] != pc->f->resource[i])
			return 0;
	for (uint32_t i = 0; i < pc->r->n; i++)
		if (m->slot[i] != pc->r->slot[i] || m->val[i] != pc->r->val[i])
			return 0;
	return 1;
}

/* A cache: without memory for it, nothing is kept. */
static void memo_store(const struct pctx *pc, struct plan_memo *m, uint32_t n)
{
	struct engine *e = pc->e;
	m->valid = 0;
	if (GROW(m->picked, m->cap_picked, n) != 0)
		return;
	for (uint32_t k = 0; k < n; k++)
		m->picked[k] = e->cands[e->picked[k]];
	m->n_picked = n;
	m->eval_epoch = e->eval_epoch;
	m->cycle = e->cycle;
	m->input_epoch = e->input_epoch;
	m->cq = pc->cq;
	m->priority = pc->p->priority;
	m->queue_time = memo_queue_time(pc);
	m->n_pairs = pc->f->n;
	memcpy(m->flavor, pc->f->flavor, pc->f->n * sizeof(*m->flavor));
	memcpy(m->resource, pc->f->resource, pc->f->n * sizeof(*m->resource));
	m->n_reqs = pc->r->n;
	memcpy(m->slot, pc->r->slot, pc->r->n * sizeof(*m->slot));
	memcpy(m->val, pc->r->val, pc->r->n * sizeof(*m->val));
	m->valid = 1;
}

/* The search, or its memo: picked candidates in e->cands, their indices in e->picked. */
static int plan(struct pctx *pc, uint32_t *n_picked)
{
	struct engine *e = pc->e;
	struct plan_memo *m = memo_usable(pc) ? memo_slot(pc) : NULL;
	if (!m)
		return search(pc, n_picked);
	if (memo_matches(pc, m)) {
		uint32_t n = m->n_picked;
#if MUSTER_CHECKS
		/* A checked build searches anyway: the memo must answer as the search does. */
		uint32_t n_searched;
		if (search(pc, &n_searched) == 0) {
			MUSTER_ASSERT(n_searched == n);
			for (uint32_t k = 0; k < n && k < n_searched; k++)
				MUSTER_ASSERT(e->cands[e->picked[k]].wl == m->picked[k].wl &&
					      e->cands[e->picked[k]].variant ==
						      m->picked[k].variant);
		}
#endif
		*n_picked = 0;
		if (GROW(e->cands, e->cap_cands, n) != 0 || GROW(e->picked, e->cap_picked, n) != 0)
			return -ENOMEM;
		for (uint32_t k = 0; k < n; k++) {
			e->cands[k] = m->picked[k];
			e->picked[k] = k;
		}
		*n_picked = n;
		return 0;
	}
	int rc = search(pc, n_picked);
	if (rc == 0)
		memo_store(pc, m, *n_picked);
	return rc;
}

static const char *variant_reason(int v)
{
	switch (v) {
	case V_WITHIN_CQ:
		return "InClusterQueue";
	case V_RECLAIM_WHILE_BORROWING:
		return "InCohortReclaimWhileBorrowing";
	case V_FAIR_SHARING:
		return "InCohortFairSharing";
	default:
		return "InCohortReclamation";
	}
}

int eng_simulate_preemption(struct engine *e, struct ecq *cq, const struct ewl *w, int32_t slot,
			    int64_t val, int *borrow_after)
{
	struct frset *f = &e->pf;
	struct reqset *r = &e->pr;
	struct pctx pc = { e, cq, w, f, r, 0, 0, 0, e->fs.enabled };
	uint32_t n;
	int may_reclaim;

	f->n = 1;
	f->flavor[0] = cq->node.slots[slot].flavor;
	f->resource[0] = cq->node.slots[slot].resource;
	r->n = 1;
	r->slot[0] = slot;
	r->val[0] = val;
	int rc = plan(&pc, &n);
	if (rc)
		return rc;
	if (n == 0) {
		*borrow_after = eng_borrow_height(cq, slot, val, &may_reclaim);
		return PM_NO_CANDIDATES;
	}
	int same = 0;
	for (uint32_t k = 0; k < n; k++) {
		charge_cand(&pc, e->picked[k], -1);
		same |= e->cands[e->picked[k]].wl->adm_cq == cq;
	}
	*borrow_after = eng_borrow_height(cq, slot, val, &may_reclaim);
	for (uint32_t k = 0; k < n; k++)
		charge_cand(&pc, e->picked[k], +1);
	return same ? PM_PREEMPT : PM_RECLAIM;
}

/* Kueue's frsNeedPreemption (the items marked preempt) and the preemptor's requests per slot
 * of its ClusterQueue, into e->pf and e->pr. */
static void request_sets(struct engine *e, const struct eitem *items, uint32_t n_items)
{
	struct frset *f = &e->pf;
	struct reqset *r = &e->pr;
	f->n = 0;
	r->n = 0;
	for (uint32_t i = 0; i < n_items; i++) {
		const struct eitem *it = &items[i];
		if (it->preempt) {
			uint32_t k = 0;
			while (k < f->n &&
			       !(f->flavor[k] == it->flavor && f->resource[k] == it->resource))
				k++;
			if (k == f->n) {
				f->flavor[f->n] = it->flavor;
				f->resource[f->n++] = it->resource;
			}
		}
		if (it->amount == 0)
			continue;
		uint32_t k = 0;
		while (k < r->n && r->slot[k] != it->slot)
			k++;
		if (k == r->n) {
			r->slot[r->n] = it->slot;
			r->val[r->n++] = 0;
		}
		r->val[k] = sat_add(r->val[k], it->amount);
	}
}

int eng_candidates(struct engine *e, struct ecq *cq, const struct ewl *w, const struct eitem *items,
		   uint32_t n_items)
{
	struct pctx pc = { e, cq, w, &e->pf, &e->pr, 0, 0, 0, e->fs.enabled };
	if (n_items > ENG_MAX_ITEMS)
		return -EINVAL;
	request_sets(e, items, n_items);
	if (e->pf.n == 0)
		return 0;
	int rc = collect_sorted(&pc);
	return rc ? rc : (int)pc.n_cands;
}

int eng_get_targets(struct engine *e, struct ecq *cq, const struct ewl *w, struct eval *ev)
{
	struct pctx pc = { e, cq, w, &e->pf, &e->pr, 0, 0, 0, e->fs.enabled };
	uint32_t n;

	ev->n_targets = 0;
	request_sets(e, ev->items, ev->n_items);
	if (e->pf.n == 0)
		return 0;
	int rc = plan(&pc, &n);
	if (rc)
		return rc;
	if (GROW(ev->targets, ev->cap_targets, n) != 0)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		const struct cand *c = &e->cands[e->picked[k]];
		ev->targets[k] = (struct target){ c->wl, variant_reason(c->variant) };
	}
	ev->n_targets = n;
	return (int)n;
}
