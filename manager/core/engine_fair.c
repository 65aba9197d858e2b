/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fair sharing, as Kueue's: the dominant resource share of a node of the cohort tree
 * (pkg/cache/scheduler/fair_sharing.go), the tournament that orders a tree's heads
 * (pkg/scheduler/fair_sharing_iterator.go), and admission fair sharing: the decayed usage of
 * LocalQueues that orders a ClusterQueue's queue (pkg/util/admissionfairsharing). Fair
 * preemption is in engine_preempt.c, beside the classical one it replaces.
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
	struct ecohort *c = (struct ecohort *)parent; /* a parent is always a cohort's node */
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

static void share_of(const struct drs *d, struct eng_share *out)
{
	out->precise = eng_drs_precise(d);
	if (zero_weight_borrows(d) || out->precise >= 9.2e18)
		out->weighted_share = INT64_MAX;
	else
		out->weighted_share = (int64_t)ceil(out->precise);
	out->dominant_resource = d->dominant;
	out->borrowing = d->borrowing;
}

int engine_cq_share(const struct engine *ce, const char *cq, struct eng_share *out)
{
	struct engine *e = (struct engine *)ce; /* a lazy rebuild is not a visible change */
	int rc = eng_build(e);
	if (rc)
		return rc;
	const struct ecq *q = cq ? strmap_get(&e->cqs, cq) : NULL;
	if (!q || !q->exists)
		return -ENOENT;
	struct drs d;
	eng_drs(&q->node, q->fair_weight, NULL, 0, &d);
	share_of(&d, out);
	return 0;
}

int engine_cohort_share(const struct engine *ce, const char *cohort, struct eng_share *out)
{
	struct engine *e = (struct engine *)ce;
	int rc = eng_build(e);
	if (rc)
		return rc;
	const struct ecohort *c = cohort ? strmap_get(&e->cohorts, cohort) : NULL;
	if (!c)
		return -ENOENT;
	struct drs d;
	eng_drs(&c->node, c->fair_weight, NULL, 0, &d);
	share_of(&d, out);
	return 0;
}

int engine_set_fair_sharing(struct engine *e, const struct eng_fair_sharing *fs)
{
	eng_changed(e); /* what evaluations found may no longer hold */
	struct eng_fair_sharing v = { 0 };
	if (fs && fs->enabled) {
		v = *fs;
		if (v.n_strategies == 0) {
			v.n_strategies = 2;
			v.strategies[0] = ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
			v.strategies[1] = ENG_FS_LESS_THAN_INITIAL_SHARE;
		}
		/* Kueue's validation: one of the two alone, or both in this order. */
		if (v.n_strategies > 2 ||
		    (unsigned)v.strategies[0] > ENG_FS_LESS_THAN_INITIAL_SHARE ||
		    (v.n_strategies == 2 &&
		     (v.strategies[0] != ENG_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE ||
		      v.strategies[1] != ENG_FS_LESS_THAN_INITIAL_SHARE)))
			return -EINVAL;
	}
	e->fs = v;
	eng_all_changed(e);
	return 0;
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
static void lq_usage(const struct engine *e, struct elq *lq)
{
	double u = 0;
	for (uint32_t i = 0; i < lq->afs_n; i++)
		u += resource_weight(e, lq->afs_res[i]) * lq->afs_val[i];
	lq->afs_usage = lq->fair_weight <= 0 ? INFINITY : u / lq->fair_weight;
}

/* The LocalQueue's usage changed: its ClusterQueue's order follows (outside a cycle, the
 * ClusterQueue is looked at again). */
static void lq_changed(struct engine *e, struct elq *lq, int mark)
{
	lq_usage(e, lq);
	if (!lq->cq || !lq->cq->heap.afs)
		return;
	eng_heap_rebuild(&lq->cq->heap);
	if (mark)
		eng_cq_reordered(e, lq->cq);
}

/* The slot of resource r (interned) in lq's consumed usage, made if new; -1 on ENOMEM. */
static int afs_slot(struct elq *lq, const char *r)
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

static void afs_add(struct elq *lq, const char *r, double v)
{
	int i = afs_slot(lq, r);
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
			afs_add(lq, a->items[i].resource,
				(double)a->items[i].amount / 1000.0 * e->afs_entry_alpha);
	lq_changed(e, lq, 0);
}

int engine_set_admission_fair_sharing(struct engine *e, const struct eng_admission_fair_sharing *afs)
{
	eng_changed(e); /* what evaluations found may no longer hold */
	const char **res = NULL;
	double *val = NULL;
	uint32_t n = 0;
	int on = afs && afs->enabled;
	if (on) {
		if (afs->usage_half_life < 0 || afs->usage_sampling_interval <= 0 ||
		    (afs->n_weights && !afs->weights))
			return -EINVAL;
		for (size_t i = 0; i < afs->n_weights; i++)
			if (!afs->weights[i].resource || !*afs->weights[i].resource ||
			    !eng_weight_valid(afs->weights[i].weight))
				return -EINVAL;
		if (afs->n_weights) {
			res = malloc(afs->n_weights * sizeof(*res));
			val = malloc(afs->n_weights * sizeof(*val));
			if (!res || !val)
				goto nomem;
		}
		for (size_t i = 0; i < afs->n_weights; i++, n++) {
			if (!(res[n] = eng_intern(e, afs->weights[i].resource)))
				goto nomem;
			val[n] = afs->weights[i].weight;
		}
	}
	free(e->afs_weight_res);
	free(e->afs_weight_val);
	e->afs_weight_res = res;
	e->afs_weight_val = val;
	e->afs_n_weights = n;
	e->afs_on = (uint8_t)on;
	e->afs_half_life = on ? afs->usage_half_life : 0;
	e->afs_interval = on ? afs->usage_sampling_interval : 0;
	e->afs_entry_alpha = on && e->afs_half_life > 0
				     ? 1.0 - pow(0.5, (double)e->afs_interval / (double)e->afs_half_life)
				     : 0;
	for (uint32_t i = 0; i < e->n_all_lqs; i++)
		lq_usage(e, e->all_lqs[i]);
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		struct ecq *q = e->all_cqs[i];
		q->heap.afs = (uint8_t)eng_afs_applies(e, q);
		eng_heap_rebuild(&q->heap);
	}
	eng_all_changed(e);
	return 0;
nomem:
	free(res);
	free(val);
	return -ENOMEM;
}

int engine_set_lq_fair_weight(struct engine *e, const char *namespace_name, const char *name,
			      double weight)
{
	eng_changed(e); /* what evaluations found may no longer hold */
	if (!namespace_name || !*namespace_name || !name || !*name || !eng_weight_valid(weight))
		return -EINVAL;
	struct elq *lq = eng_lq(e, namespace_name, name);
	if (!lq)
		return -ENOMEM;
	lq->fair_weight = weight;
	lq->has_fair_weight = 1;
	lq_changed(e, lq, 1);
	return 0;
}

int engine_afs_seed(struct engine *e, const char *namespace_name, const char *name,
		    const struct eng_afs_resource *consumed, size_t n, int64_t last_update)
{
	eng_changed(e); /* what evaluations found may no longer hold */
	if (!namespace_name || !*namespace_name || !name || !*name || n > QUOTA_MAX_RESOURCES ||
	    (n && !consumed) || last_update < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!consumed[i].resource || !*consumed[i].resource ||
		    !isfinite(consumed[i].consumed) || consumed[i].consumed < 0)
			return -EINVAL;
	struct elq *lq = eng_lq(e, namespace_name, name);
	if (!lq)
		return -ENOMEM;
	const char *res[QUOTA_MAX_RESOURCES];
	for (size_t i = 0; i < n; i++)
		if (!(res[i] = eng_intern(e, consumed[i].resource)))
			return -ENOMEM;
	/* Make room for all first, so a failure leaves the old values. */
	for (size_t i = 0; i < n; i++)
		if (afs_slot(lq, res[i]) < 0)
			return -ENOMEM;
	lq->afs_n = 0;
	for (size_t i = 0; i < n; i++)
		afs_add(lq, res[i], consumed[i].consumed); /* room is there: no allocation */
	lq->afs_last = last_update;
	lq_changed(e, lq, 1);
	return 0;
}

int engine_afs_sample(struct engine *e, int64_t now)
{
	eng_changed(e); /* what evaluations found may no longer hold */
	if (!e->afs_on)
		return 0;
	/* Decay what each LocalQueue consumed, then add its admitted usage at the same rate
	 * (Kueue's CalculateDecayedConsumed); half-life 0 resets it. */
	for (uint32_t i = 0; i < e->n_all_lqs; i++) {
		struct elq *lq = e->all_lqs[i];
		double elapsed = lq->afs_last && now > lq->afs_last ? (double)(now - lq->afs_last) : 0;
		double alpha = e->afs_half_life > 0
				       ? 1.0 - pow(0.5, elapsed / (double)e->afs_half_life)
				       : 1;
		if (e->afs_half_life == 0)
			lq->afs_n = 0;
		for (uint32_t k = 0; k < lq->afs_n; k++)
			lq->afs_val[k] *= 1 - alpha;
		lq->afs_alpha = e->afs_half_life == 0 ? 0 : alpha;
		if (!lq->afs_last || now > lq->afs_last)
			lq->afs_last = now;
	}
	for (uint32_t i = 0; i < e->n_all_cqs; i++)
		for (const struct ewl *w = e->all_cqs[i]->adm_head; w; w = w->adm_next) {
			struct elq *lq = w->lq;
			if (!lq || lq->afs_alpha <= 0 || !w->adm)
				continue;
			for (uint32_t k = 0; k < w->adm->n_items; k++)
				if (w->adm->items[k].amount > 0)
					afs_add(lq, w->adm->items[k].resource,
						(double)w->adm->items[k].amount / 1000.0 *
							lq->afs_alpha);
		}
	for (uint32_t i = 0; i < e->n_all_lqs; i++)
		lq_changed(e, e->all_lqs[i], 1);
	return 0;
}

int engine_afs_status(const struct engine *ce, const char *namespace_name, const char *name,
		      struct eng_afs_status *out)
{
	char key[640];
	if (!namespace_name || !name ||
	    snprintf(key, sizeof(key), "%s/%s", namespace_name, name) >= (int)sizeof(key))
		return -ENOENT;
	const struct elq *lq = strmap_get(&ce->lqs, key);
	if (!lq)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->applies = ce->afs_on && lq->exists && lq->cq && lq->cq->usage_based_afs;
	for (uint32_t i = 0; i < lq->afs_n && i < QUOTA_MAX_RESOURCES; i++)
		out->consumed[out->n++] = (struct eng_afs_resource){ lq->afs_res[i], lq->afs_val[i] };
	out->last_update = lq->afs_last;
	out->usage = lq->afs_usage;
	return 0;
}
