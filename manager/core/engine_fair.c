/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fair sharing, as Kueue's: the dominant resource share of a node of the cohort tree
 * (pkg/cache/scheduler/fair_sharing.go), the tournament that orders a tree's heads
 * (pkg/scheduler/fair_sharing_iterator.go), and admission fair sharing: the decayed usage of
 * LocalQueues that orders a ClusterQueue's queue (pkg/util/admissionfairsharing). Fair
 * preemption is in engine_preempt.c, beside the classical one it replaces; the entry points
 * (settings, samples, shares) are in engine_fair_api.c, above engine.c, which calls this.
 *
 * Shares with a candidate's workload are computed by charging its usage in place and
 * releasing it again (usage is path independent, see engine_quota.c), as Kueue's
 * SimulateUsageAddition does on its snapshot.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/container_of.h"
#include "core/engine_internal.h"
#include "core/grow.h"

int eng_weight_valid(double w)
{
	return isfinite(w) && w >= 0;
}

/* --- dominant resource share -------------------------------------------------------------- */

/* Kueue's potentialAvailable for a pair, also one the node has no quota for (then its
 * ancestors decide, and the root's subtree quota is 0). */
/* Room for one more in a pair of parallel arrays (resource names and their values), doubling
 * them when full. 0 or -ENOMEM (then nothing changed but maybe a larger names array). */
static int grow_pairs(const char ***res, double **val, uint32_t n, uint32_t *cap)
{
	if (n < *cap)
		return 0;
	size_t want = grow_capacity(*cap, (size_t)n + 1, sizeof(**val), UINT32_MAX);
	if (want == 0 || grow_resize(res, want, sizeof(**res)) != 0 ||
	    grow_resize(val, want, sizeof(**val)) != 0)
		return -ENOMEM;
	*cap = (uint32_t)want;
	return 0;
}

static int64_t potential(const struct qnode *n, const char *flavor, const char *resource)
{
	for (; n; n = n->parent) {
		int32_t s = qnode_find(n, flavor, resource);
		if (s >= 0)
			return q_potential_available(n, s);
	}
	return 0;
}

/* Kueue's calculateLendable for one resource: what parent could get of it, over every flavor
 * of the tree. Kept in the cohort until the next build (a cache, so the const parent is not
 * changed in any way a caller sees); if it can't be kept, it is computed each time. */
static double lendable(const struct qnode *parent, const char *resource)
{
	/* A parent is always a cohort's node (engine_check checks every one), and a cohort with a
	 * child is at height 1 or more, where a ClusterQueue is at 0. */
	MUSTER_ASSERT(parent->height > 0);
	struct ecohort *c = CONTAINER_OF(parent, struct ecohort, node);
	for (uint32_t i = 0; i < c->n_lend; i++)
		if (c->lend_res[i] == resource)
			return c->lend_val[i];
	const struct qnode *root = parent;
	while (root->parent)
		root = root->parent;
	double sum = 0;
	for (uint32_t s = 0; s < root->n_slots; s++)
		if (root->slots[s].resource == resource)
			sum += (double)potential(parent, root->slots[s].flavor, resource);
	if (grow_pairs(&c->lend_res, &c->lend_val, c->n_lend, &c->cap_lend) != 0)
		return sum;
	c->lend_res[c->n_lend] = resource;
	c->lend_val[c->n_lend++] = sum;
	return sum;
}

static int64_t over(const struct qslot *q)
{
	return q->usage > q->subtree ? sat_sub(q->usage, q->subtree) : 0;
}

void eng_drs(const struct qnode *n, double weight, const struct eitem *req, uint32_t n_req,
	     struct drs *out)
{
	*out = (struct drs){ 0, weight, NULL, 0, 0 };
	if (!n->parent)
		return;
	for (uint32_t s = 0; s < n->n_slots && !out->borrowing; s++)
		out->borrowing = over(&n->slots[s]) > 0;
	if (!out->borrowing)
		return;
	for (uint32_t i = 0; i < n_req && !out->borrows_requested; i++) {
		if (req[i].amount <= 0)
			continue;
		int32_t s = qnode_find(n, req[i].flavor, req[i].resource);
		out->borrows_requested = s >= 0 && over(&n->slots[s]) > 0;
	}
	/* Borrowing summed per resource over flavors; each resource once, at its first slot. */
	for (uint32_t s = 0; s < n->n_slots; s++) {
		const char *r = n->slots[s].resource;
		if (over(&n->slots[s]) == 0)
			continue;
		int seen = 0;
		for (uint32_t k = 0; k < s && !seen; k++)
			seen = n->slots[k].resource == r && over(&n->slots[k]) > 0;
		if (seen)
			continue;
		double borrowed = 0;
		for (uint32_t k = s; k < n->n_slots; k++)
			if (n->slots[k].resource == r)
				borrowed += (double)over(&n->slots[k]);
		double lend = lendable(n->parent, r);
		if (lend <= 0)
			continue;
		double ratio = borrowed * 1000.0 / lend;
		/* Ties go to the name first in alphabetical order, so the answer is stable. */
		if (ratio > out->ratio ||
		    (ratio == out->ratio && out->dominant && strcmp(r, out->dominant) < 0)) {
			out->ratio = ratio;
			out->dominant = r;
		}
	}
}

double eng_drs_precise(const struct drs *d)
{
	if (d->ratio == 0)
		return 0;
	if (d->weight == 0)
		return INFINITY;
	return d->ratio / d->weight;
}

static int cmp_double(double a, double b)
{
	return (a > b) - (a < b);
}

static int zero_weight_borrows(const struct drs *d)
{
	return d->weight == 0 && d->ratio != 0;
}

int eng_drs_cmp(const struct drs *a, const struct drs *b)
{
	int az = zero_weight_borrows(a), bz = zero_weight_borrows(b);
	if (az && bz)
		return cmp_double(a->ratio, b->ratio);
	if (az != bz)
		return az ? 1 : -1;
	return cmp_double(eng_drs_precise(a), eng_drs_precise(b));
}

void eng_share_of(const struct drs *d, struct eng_share *out)
{
	out->precise = eng_drs_precise(d);
	if (zero_weight_borrows(d) || out->precise >= 9.2e18)
		out->weighted_share = INT64_MAX;
	else
		out->weighted_share = (int64_t)ceil(out->precise);
	out->dominant_resource = d->dominant;
	out->borrowing = d->borrowing;
}

/* --- the tournament ------------------------------------------------------------------------ */

/* Keeps what the admission in ev charges (amount > 0) as cq's candidate usage. */
static int keep_usage(struct ecq *cq, const struct eval *ev)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < ev->n_items; i++)
		n += ev->items[i].amount > 0;
	if (GROW(cq->fs_items, cq->cap_fs_items, n) != 0)
		return -ENOMEM;
	cq->n_fs_items = 0;
	for (uint32_t i = 0; i < ev->n_items; i++)
		if (ev->items[i].amount > 0)
			cq->fs_items[cq->n_fs_items++] = ev->items[i];
	return 0;
}

int eng_fs_push(struct engine *e, struct ecq *cq, struct ewl *head, int known_nofit)
{
	struct eval *ev = &e->ev_try;
	if (known_nofit) {
		cq->fs_nofit = 1;
		cq->n_fs_items = 0;
		cq->fs_tries = 0;
		eng_fs_repush(e, cq, head);
		return 0;
	}
	int64_t counts[ENG_MAX_PODSETS];
	for (uint32_t i = 0; i < head->spec->n_podsets; i++)
		counts[i] = head->spec->ps[i].count;
	/* Kueue ranks the assignment its nomination found (with preemption), not the request. */
	struct assign_opts opts = { 0, 0, 0 };
	int rc = eng_assign(e, cq, head, counts, &opts, ev);
	if (rc)
		return rc;
	cq->fs_nofit = ev->mode != PM_FIT && ev->mode != PM_PREEMPT;
	if ((rc = keep_usage(cq, ev)) != 0)
		return rc;
	cq->fs_tries = 0;
	eng_fs_repush(e, cq, head);
	return 0;
}

void eng_fs_repush(struct engine *e, struct ecq *cq, struct ewl *head)
{
	/* Room: one entry per ClusterQueue of the tree, reserved by process_tree. */
	MUSTER_ASSERT(e->n_merge < e->cap_merge);
	cq->fs_cand = (int32_t)e->n_merge;
	e->merge[e->n_merge++] = (struct mentry){ cq, head, 0, 0 };
}

struct mentry eng_fs_take(struct engine *e, int i)
{
	struct mentry m = e->merge[i];
	e->merge[i] = e->merge[--e->n_merge];
	if ((uint32_t)i < e->n_merge)
		e->merge[i].cq->fs_cand = i;
	m.cq->fs_cand = -1;
	return m;
}

int eng_fs_same_usage(struct ecq *cq, const struct eval *ev)
{
	uint32_t n = 0;
	int same = 1;
	for (uint32_t i = 0; i < ev->n_items; i++) {
		const struct eitem *it = &ev->items[i];
		if (it->amount <= 0)
			continue;
		if (n >= cq->n_fs_items || cq->fs_items[n].slot != it->slot ||
		    cq->fs_items[n].amount != it->amount)
			same = 0;
		n++;
	}
	if (same && n == cq->n_fs_items)
		return 1;
	/* Out of memory, the old usage stays: the ranking is off, the admission is not. */
	(void)keep_usage(cq, ev);
	return 0;
}

static uint32_t levels_of(const struct ecq *cq)
{
	uint32_t n = 0;
	for (const struct ecohort *c = cq->parent; c; c = c->parent)
		n++;
	return n;
}

/* Kueue's entryComparer.less at cohort c: whether candidate a goes before candidate b. */
static int fs_less(const struct engine *e, int a, int b, const struct ecohort *c)
{
	const struct ecq *qa = e->merge[a].cq, *qb = e->merge[b].cq;
	uint32_t ka = 0, kb = 0;
	for (const struct ecohort *p = qa->parent; p && p != c; p = p->parent)
		ka++;
	for (const struct ecohort *p = qb->parent; p && p != c; p = p->parent)
		kb++;
	const struct drs *da = &e->fs_drs[e->fs_off[a] + ka], *db = &e->fs_drs[e->fs_off[b] + kb];
	/* FairSharingPrioritizeNonBorrowing (Beta, on): not borrowing on what it asks first. */
	if (da->borrows_requested != db->borrows_requested)
		return !da->borrows_requested;
	int d = eng_drs_cmp(da, db);
	if (d)
		return d < 0;
	const struct ewl *wa = e->merge[a].wl, *wb = e->merge[b].wl;
	if (wa->priority != wb->priority) /* PrioritySortingWithinCohort (on) */
		return wa->priority > wb->priority;
	return wa->queue_time < wb->queue_time;
}

/* Kueue's runTournament: the winner among the candidates under cohort c, or -1. */
static int tournament(const struct engine *e, const struct ecohort *c)
{
	int best = -1;
	for (uint32_t i = 0; i < c->n_child_cohorts; i++) {
		int r = tournament(e, c->child_cohorts[i]);
		if (r >= 0 && (best < 0 || fs_less(e, r, best, c)))
			best = r;
	}
	for (uint32_t i = 0; i < c->n_child_cqs; i++) {
		int r = c->child_cqs[i]->fs_cand;
		if (r >= 0 && (best < 0 || fs_less(e, r, best, c)))
			best = r;
	}
	return best;
}

int eng_fs_pick(struct engine *e, struct etree *t)
{
	if (e->n_merge == 0)
		return -1;
	/* A head that fits in no way takes nothing from anyone: it is parked first. */
	for (uint32_t i = 0; i < e->n_merge; i++)
		if (e->merge[i].cq->fs_nofit)
			return (int)i;
	if (e->n_merge == 1)
		return 0;
	uint32_t total = 0;
	if (GROW(e->fs_off, e->cap_fs_off, e->n_merge) != 0)
		return 0; /* out of memory: the first candidate, unranked */
	for (uint32_t i = 0; i < e->n_merge; i++) {
		e->fs_off[i] = total;
		total += levels_of(e->merge[i].cq);
	}
	if (GROW(e->fs_drs, e->cap_fs_drs, total) != 0)
		return 0;
	/* Each candidate's share after admitting it, at every level on its way to the root
	 * (Kueue's computeDRS): level k is the node k steps above its ClusterQueue. */
	for (uint32_t i = 0; i < e->n_merge; i++) {
		struct ecq *q = e->merge[i].cq;
		struct drs *d = &e->fs_drs[e->fs_off[i]];
		eng_charge_items(q, q->fs_items, q->n_fs_items, +1);
		const struct qnode *node = &q->node;
		double weight = q->fair_weight;
		for (const struct ecohort *c = q->parent; c; c = c->parent) {
			eng_drs(node, weight, q->fs_items, q->n_fs_items, d++);
			node = &c->node;
			weight = c->fair_weight;
		}
		eng_charge_items(q, q->fs_items, q->n_fs_items, -1);
	}
	int best = tournament(e, t->root);
	return best >= 0 ? best : 0;
}

/* --- admission fair sharing ---------------------------------------------------------------- */

int eng_afs_applies(const struct engine *e, const struct ecq *cq)
{
	return e->afs_on && cq->usage_based_afs;
}

void eng_afs_order(struct engine *e, struct ecq *cq)
{
	uint8_t on = (uint8_t)eng_afs_applies(e, cq);
	if (cq->heap.afs == on)
		return;
	cq->heap.afs = on;
	eng_heap_rebuild(&cq->heap);
}

static double resource_weight(const struct engine *e, const char *resource)
{
	for (uint32_t i = 0; i < e->afs_n_weights; i++)
		if (e->afs_weight_res[i] == resource)
			return e->afs_weight_val[i];
	return 1;
}

/* Kueue's CalculateUsage: resources in name order, so the sum rounds the same each time. */
void eng_lq_usage(const struct engine *e, struct elq *lq)
{
	double u = 0;
	for (uint32_t i = 0; i < lq->afs_n; i++)
		u += resource_weight(e, lq->afs_res[i]) * lq->afs_val[i];
	lq->afs_usage = lq->fair_weight <= 0 ? INFINITY : u / lq->fair_weight;
}

int eng_lq_changed(struct engine *e, struct elq *lq)
{
	eng_lq_usage(e, lq);
	if (!lq->cq || !lq->cq->heap.afs)
		return 0;
	eng_heap_rebuild(&lq->cq->heap);
	return 1;
}

/* The slot of resource r (interned) in lq's consumed usage, made if new; -1 on ENOMEM. */
int eng_afs_slot(struct elq *lq, const char *r)
{
	uint32_t i = 0;
	while (i < lq->afs_n && strcmp(lq->afs_res[i], r) < 0)
		i++;
	if (i < lq->afs_n && lq->afs_res[i] == r)
		return (int)i;
	if (grow_pairs(&lq->afs_res, &lq->afs_val, lq->afs_n, &lq->afs_cap) != 0)
		return -1;
	memmove(&lq->afs_res[i + 1], &lq->afs_res[i], (lq->afs_n - i) * sizeof(*lq->afs_res));
	memmove(&lq->afs_val[i + 1], &lq->afs_val[i], (lq->afs_n - i) * sizeof(*lq->afs_val));
	lq->afs_res[i] = r;
	lq->afs_val[i] = 0;
	lq->afs_n++;
	return (int)i;
}

void eng_afs_add(struct elq *lq, const char *r, double v)
{
	int i = eng_afs_slot(lq, r);
	/* Out of memory: the charge is lost, and only the order of queues feels it. */
	if (i >= 0)
		lq->afs_val[i] += v;
}

void eng_afs_admitted(struct engine *e, struct ecq *cq, const struct ewl *w, const struct eadm *a)
{
	struct elq *lq = w->lq;
	if (!eng_afs_applies(e, cq) || !lq || e->afs_entry_alpha <= 0)
		return;
	/* Kueue's entry penalty: the requests times the share one sampling interval would give
	 * them, charged at once so that the queue yields before the next sample. */
	for (uint32_t i = 0; i < a->n_items; i++)
		if (a->items[i].amount > 0)
			eng_afs_add(lq, a->items[i].resource,
				    (double)a->items[i].amount / 1000.0 * e->afs_entry_alpha);
	eng_lq_changed(e, lq);
}
