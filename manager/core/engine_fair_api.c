/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fair sharing's entry points (engine.h): its settings, the LocalQueues' weights and sampled
 * usage of admission fair sharing, and the shares a status reports. They sit above engine.c,
 * whose records and lazy build they use; the mechanics (shares, the tournament, the queue
 * order by usage) are in engine_fair.c, below it, where the cycle calls them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine_internal.h"

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
	eng_share_of(&d, out);
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
	eng_share_of(&d, out);
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

/* --- admission fair sharing ---------------------------------------------------------------- */

/* The LocalQueue's usage changed: its ClusterQueue's order follows, and outside a cycle the
 * ClusterQueue is looked at again. */
static void lq_changed(struct engine *e, struct elq *lq)
{
	if (eng_lq_changed(e, lq))
		eng_cq_reordered(e, lq->cq);
}

int engine_set_admission_fair_sharing(struct engine *e,
				      const struct eng_admission_fair_sharing *afs)
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
	e->afs_entry_alpha =
		on && e->afs_half_life > 0 ?
			1.0 - pow(0.5, (double)e->afs_interval / (double)e->afs_half_life) :
			0;
	for (uint32_t i = 0; i < e->n_all_lqs; i++)
		eng_lq_usage(e, e->all_lqs[i]);
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
	lq_changed(e, lq);
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
		if (eng_afs_slot(lq, res[i]) < 0)
			return -ENOMEM;
	lq->afs_n = 0;
	for (size_t i = 0; i < n; i++)
		eng_afs_add(lq, res[i], consumed[i].consumed); /* room is there: no allocation */
	lq->afs_last = last_update;
	lq_changed(e, lq);
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
		double elapsed = lq->afs_last && now > lq->afs_last ? (double)(now - lq->afs_last) :
								      0;
		double alpha = e->afs_half_life > 0 ?
				       1.0 - pow(0.5, elapsed / (double)e->afs_half_life) :
				       1;
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
					eng_afs_add(lq, w->adm->items[k].resource,
						    (double)w->adm->items[k].amount / 1000.0 *
							    lq->afs_alpha);
		}
	for (uint32_t i = 0; i < e->n_all_lqs; i++)
		lq_changed(e, e->all_lqs[i]);
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
		out->consumed[out->n++] =
			(struct eng_afs_resource){ lq->afs_res[i], lq->afs_val[i] };
	out->last_update = lq->afs_last;
	out->usage = lq->afs_usage;
	return 0;
}
