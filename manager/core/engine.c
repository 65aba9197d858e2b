/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission engine: the model (flavors, cohorts, ClusterQueues, LocalQueues, namespaces,
 * workloads), the cohort-tree build, the queues, and the cycle. Quota maths and flavor
 * assignment are in engine_quota.c, preemption in engine_preempt.c; engine_internal.h lists
 * every file of the engine and the order in which they call each other.
 *
 * How work is kept proportional to change:
 *  - Specs (flavors, cohorts, ClusterQueues) only set topology_dirty; the next cycle or query
 *    rebuilds every tree once, recomputing usage from the admitted workloads, and looks again
 *    at everything pending.
 *  - A new pending workload marks its ClusterQueue dirty; released quota (eviction, finish)
 *    marks its whole tree for requeue. A cycle visits only dirty trees and, in them, only dirty
 *    ClusterQueues: a BestEffortFIFO workload that doesn't fit is parked until its tree
 *    changes (Kueue's inadmissible set), a StrictFIFO head stays and blocks its queue.
 *  - A parked workload remembers what it lacked (struct need, engine_internal.h): after a
 *    release it is requeued only if enough of what it lacked was released, and when its turn
 *    comes it is re-parked unexamined if what is available now still falls short.
 *  - In a cycle, same-shaped workloads after one that didn't fit in the same ClusterQueue get
 *    its answer without another flavor assignment (like Kueue's scheduling-equivalence
 *    hashing): state only gets tighter during a cycle, so the answer can't change.
 *
 * A cycle, per dirty tree: requeue what a release may let in; report inactive ClusterQueues'
 * workloads; let waiting preemptors in (or hold their quota for the rest of the turn); then
 * merge the ClusterQueues' heads in Kueue's order (fits without borrowing first, then priority,
 * then age), admitting, preempting or parking each; the merge key starts optimistic (no
 * borrowing) and a head found to borrow more is pushed back to its true place.
 *
 * Differences from Kueue, on purpose:
 *  - Every workload that fits is admitted in one cycle, not one head per ClusterQueue.
 *  - A waiting preemptor is admitted with the assignment it preempted for (Kueue recomputes,
 *    usually to the same); its victims can't be counted by another preemptor (see
 *    engine_preempt.c); and what it needs is held in every cycle until it fits, where Kueue
 *    holds it within a cycle and lets PrioritizePreemptorWorkloads order it first in the next.
 *  - No resumption of the flavor scan across cycles (Kueue's LastAssignment / next flavor to
 *    try): every look starts at the first flavor.
 *  - A workload that needs preemption but finds no victims doesn't reserve quota for the rest
 *    of the cycle (Kueue's reserveCapacityForUnreclaimablePreempt): Kueue parks it right after
 *    and lets others take that quota in the next cycle anyway.
 *  - Resource groups are tried in the ClusterQueue's order (Kueue iterates a map: any order).
 *  - Admissions are charged per podSet and flavor as given; Kueue's last "fits" check before
 *    admitting is kept (and never fails unless the assignment is wrong).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine_internal.h"
#include "core/labels.h"
#include "core/grow.h"

#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= FNV_PRIME;
	}
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return fnv(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

/* --- interning ---------------------------------------------------------------------------- */

const char *eng_intern(struct engine *e, const char *s)
{
	char *c = strmap_get(&e->names, s);
	if (c)
		return c;
	c = strdup(s);
	if (!c)
		return NULL;
	if (strmap_put(&e->names, s, c, NULL) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

/* Interned string if s was ever interned, else NULL (for lookups that must not allocate). */
static const char *interned(const struct engine *e, const char *s)
{
	return s ? strmap_get(&e->names, s) : NULL;
}

/* --- queue order ----------------------------------------------------------------------------- */

/* Kueue's queue order of two workloads (key_before, engine_internal.h). */
static int wl_before(const struct ewl *a, const struct ewl *b)
{
	struct wkey ka = wl_key(a), kb = wl_key(b);
	return key_before(&ka, &kb);
}

/* --- dirty marks -------------------------------------------------------------------------- */

/* The dirty lists are sized at build (trees) and record creation (LocalQueues), so marking
 * never allocates and never fails. */
static void mark_tree_dirty(struct engine *e, struct etree *t)
{
	t->dirty = 1;
	if (!t->listed) {
		t->listed = 1;
		e->dirty_trees[e->n_dirty_trees++] = t;
	}
}

static void mark_cq_dirty(struct engine *e, struct ecq *cq)
{
	cq->dirty = 1;
	if (!e->topology_dirty && cq->tree)
		mark_tree_dirty(e, cq->tree);
}

static void mark_tree_requeue(struct engine *e, struct etree *t)
{
	t->requeue = 1;
	mark_tree_dirty(e, t);
}

static void mark_lq_dirty(struct engine *e, struct elq *lq)
{
	lq->dirty = 1;
	if (!lq->listed) {
		lq->listed = 1;
		e->dirty_lqs[e->n_dirty_lqs++] = lq;
	}
}

static void mark_all_requeue(struct engine *e)
{
	if (e->topology_dirty)
		return;
	for (uint32_t i = 0; i < e->n_trees; i++)
		mark_tree_requeue(e, e->trees[i]);
}

/* --- records ------------------------------------------------------------------------------ */

static struct ecq *cq_record(struct engine *e, const char *name)
{
	struct ecq *q = strmap_get(&e->cqs, name);
	if (q)
		return q;
	const char *iname = eng_intern(e, name);
	int rc;
	rc = GROW(e->all_cqs, e->cap_all_cqs, e->n_all_cqs + 1);
	if (!iname || rc)
		return NULL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->fair_weight = 1;
	q->fs_cand = -1;
	q->name = iname;
	if (strmap_put(&e->cqs, name, q, NULL) != 0) {
		free(q);
		return NULL;
	}
	e->all_cqs[e->n_all_cqs++] = q;
	/* A new record needs a tree: the next build gives it one. */
	e->topology_dirty = 1;
	return q;
}

static struct ecohort *cohort_record(struct engine *e, const char *name)
{
	struct ecohort *c = strmap_get(&e->cohorts, name);
	if (c)
		return c;
	const char *iname = eng_intern(e, name);
	int rc;
	rc = GROW(e->all_cohorts, e->cap_all_cohorts, e->n_all_cohorts + 1);
	if (!iname || rc)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fair_weight = 1;
	c->name = iname;
	if (strmap_put(&e->cohorts, name, c, NULL) != 0) {
		free(c);
		return NULL;
	}
	e->all_cohorts[e->n_all_cohorts++] = c;
	e->topology_dirty = 1;
	return c;
}

static struct elq *lq_record(struct engine *e, const char *ns, const char *name)
{
	char key[640];
	/* "ns/name" by hand: snprintf was most of adding a workload, which comes here each time. */
	size_t ns_len = strlen(ns), name_len = strlen(name);
	if (ns_len + 1 + name_len >= sizeof(key))
		return NULL;
	memcpy(key, ns, ns_len);
	key[ns_len] = '/';
	memcpy(key + ns_len + 1, name, name_len + 1);
	struct elq *lq = strmap_get(&e->lqs, key);
	if (lq)
		return lq;
	const char *ikey = eng_intern(e, key), *iname = eng_intern(e, name),
		   *ins = eng_intern(e, ns);
	int rc1, rc2;
	rc1 = GROW(e->all_lqs, e->cap_all_lqs, e->n_all_lqs + 1);
	rc2 = GROW(e->dirty_lqs, e->cap_dirty_lqs, e->n_all_lqs + 1);
	if (!ikey || !iname || !ins || rc1 || rc2)
		return NULL;
	lq = calloc(1, sizeof(*lq));
	if (!lq)
		return NULL;
	lq->fair_weight = 1;
	lq->key = ikey;
	lq->name = iname;
	lq->ns = ins;
	if (strmap_put(&e->lqs, key, lq, NULL) != 0) {
		free(lq);
		return NULL;
	}
	e->all_lqs[e->n_all_lqs++] = lq;
	return lq;
}

static struct ens *ns_record(struct engine *e, const char *name)
{
	struct ens *ns = strmap_get(&e->namespaces, name);
	if (ns)
		return ns;
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return NULL;
	if (strmap_put(&e->namespaces, name, ns, NULL) != 0) {
		free(ns);
		return NULL;
	}
	return ns;
}

/* --- spec copies -------------------------------------------------------------------------- */

/* A two-pass bump allocator: measure with base == NULL, then fill one block. */
struct bump {
	char *base;
	size_t off;
};

static void *bump_alloc(struct bump *b, size_t size, size_t align)
{
	b->off = (b->off + align - 1) & ~(align - 1);
	void *p = b->base ? b->base + b->off : NULL;
	b->off += size;
	return p;
}

static char *bump_str(struct bump *b, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = bump_alloc(b, n, 1);
	if (p)
		memcpy(p, s, n);
	return p;
}

static int nonempty(const char *s)
{
	return s && *s;
}

/* Kueue's resourceGroups validation (webhook and CEL). */
static int validate_groups(size_t n_groups, const struct eng_resource_group *groups, int has_parent)
{
	size_t total_flavors = 0;
	if (n_groups > ENG_MAX_GROUPS || (n_groups && !groups))
		return -EINVAL;
	for (size_t g = 0; g < n_groups; g++) {
		const struct eng_resource_group *grp = &groups[g];
		if (grp->n_covered < 1 || grp->n_covered > QUOTA_MAX_RESOURCES || !grp->covered ||
		    grp->n_flavors < 1 || grp->n_flavors > ENG_MAX_FLAVORS || !grp->flavors)
			return -EINVAL;
		total_flavors += grp->n_flavors;
		for (size_t r = 0; r < grp->n_covered; r++) {
			if (!nonempty(grp->covered[r]))
				return -EINVAL;
			/* A resource belongs to one group only. */
			for (size_t g2 = 0; g2 <= g; g2++)
				for (size_t r2 = 0; r2 < (g2 == g ? r : groups[g2].n_covered); r2++)
					if (!strcmp(groups[g2].covered[r2], grp->covered[r]))
						return -EINVAL;
		}
		for (size_t f = 0; f < grp->n_flavors; f++) {
			const struct eng_flavor_quotas *fq = &grp->flavors[f];
			if (!nonempty(fq->flavor) || fq->n_resources != grp->n_covered ||
			    !fq->resources)
				return -EINVAL;
			for (size_t g2 = 0; g2 <= g; g2++)
				for (size_t f2 = 0; f2 < (g2 == g ? f : groups[g2].n_flavors); f2++)
					if (!strcmp(groups[g2].flavors[f2].flavor, fq->flavor))
						return -EINVAL;
			for (size_t r = 0; r < grp->n_covered; r++) {
				int found = 0;
				for (size_t k = 0; k < fq->n_resources; k++)
					found += nonempty(fq->resources[k].name) &&
						 !strcmp(fq->resources[k].name, grp->covered[r]);
				if (found != 1)
					return -EINVAL;
			}
			for (size_t k = 0; k < fq->n_resources; k++) {
				const struct eng_resource_quota *q = &fq->resources[k];
				if (q->nominal < 0)
					return -EINVAL;
				/* Limits need somewhere to borrow from or lend to. */
				if (q->has_borrowing_limit &&
				    (q->borrowing_limit < 0 || !has_parent))
					return -EINVAL;
				if (q->has_lending_limit && (q->lending_limit < 0 || !has_parent ||
							     q->lending_limit > q->nominal))
					return -EINVAL;
			}
		}
	}
	if (total_flavors > 256)
		return -EINVAL;
	return 0;
}

static void groups_free(struct egroups *g)
{
	free(g->block);
	*g = (struct egroups){ 0 };
}

static int groups_copy(struct engine *e, struct egroups *out, size_t n_groups,
		       const struct eng_resource_group *groups)
{
	struct bump b = { NULL, 0 };
	struct egroup *gs = NULL;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			b.base = malloc(b.off ? b.off : 1);
			if (!b.base)
				return -ENOMEM;
			b.off = 0;
		}
		gs = bump_alloc(&b, n_groups * sizeof(*gs), _Alignof(struct egroup));
		for (size_t g = 0; g < n_groups; g++) {
			const struct eng_resource_group *src = &groups[g];
			size_t cells = src->n_covered * src->n_flavors;
			const char **cov =
				bump_alloc(&b, src->n_covered * sizeof(*cov), _Alignof(char *));
			const char **fl =
				bump_alloc(&b, src->n_flavors * sizeof(*fl), _Alignof(char *));
			struct equota *q =
				bump_alloc(&b, cells * sizeof(*q), _Alignof(struct equota));
			int32_t *slot = bump_alloc(&b, cells * sizeof(*slot), _Alignof(int32_t));
			const struct quota_flavor **flavor =
				bump_alloc(&b, src->n_flavors * sizeof(*flavor), _Alignof(char *));
			if (!b.base)
				continue;
			gs[g] = (struct egroup){ (uint32_t)src->n_covered,
						 (uint32_t)src->n_flavors,
						 cov,
						 fl,
						 q,
						 slot,
						 flavor };
			for (size_t r = 0; r < src->n_covered; r++)
				if (!(cov[r] = eng_intern(e, src->covered[r])))
					goto nomem;
			for (size_t f = 0; f < src->n_flavors; f++) {
				const struct eng_flavor_quotas *fq = &src->flavors[f];
				if (!(fl[f] = eng_intern(e, fq->flavor)))
					goto nomem;
				flavor[f] = NULL;
				for (size_t r = 0; r < src->n_covered; r++) {
					slot[f * src->n_covered + r] = -1;
					for (size_t k = 0; k < fq->n_resources; k++) {
						const struct eng_resource_quota *rq =
							&fq->resources[k];
						if (strcmp(rq->name, src->covered[r]) != 0)
							continue;
						q[f * src->n_covered + r] = (struct equota){
							rq->nominal, rq->borrowing_limit,
							rq->lending_limit,
							(uint8_t) !!rq->has_borrowing_limit,
							(uint8_t) !!rq->has_lending_limit
						};
					}
				}
			}
		}
	}
	*out = (struct egroups){ (uint32_t)n_groups, gs, b.base };
	return 0;
nomem:
	free(b.base);
	return -ENOMEM;
}

static void sel_free(struct esel *s)
{
	free(s->block);
	*s = (struct esel){ 0 };
}

static int sel_copy(struct esel *out, const struct label_selector *src)
{
	struct bump b = { NULL, 0 };
	struct quota_kv *labels = NULL;
	struct quota_match_expr *exprs = NULL;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			b.base = malloc(b.off ? b.off : 1);
			if (!b.base)
				return -ENOMEM;
			b.off = 0;
		}
		labels = bump_alloc(&b, src->n_labels * sizeof(*labels), _Alignof(struct quota_kv));
		exprs = bump_alloc(&b, src->n_exprs * sizeof(*exprs),
				   _Alignof(struct quota_match_expr));
		for (size_t i = 0; i < src->n_labels; i++) {
			char *k = bump_str(&b, src->labels[i].key),
			     *v = bump_str(&b, src->labels[i].value);
			if (labels)
				labels[i] = (struct quota_kv){ k, v };
		}
		for (size_t i = 0; i < src->n_exprs; i++) {
			const struct quota_match_expr *x = &src->exprs[i];
			const char **values =
				bump_alloc(&b, x->n_values * sizeof(*values), _Alignof(char *));
			for (size_t k = 0; k < x->n_values; k++) {
				char *v = bump_str(&b, x->values[k]);
				if (values)
					values[k] = v;
			}
			char *key = bump_str(&b, x->key), *op = bump_str(&b, x->op);
			if (exprs)
				exprs[i] =
					(struct quota_match_expr){ key, op, x->n_values, values };
		}
	}
	*out = (struct esel){ { src->n_labels, labels, src->n_exprs, exprs }, b.base };
	return 0;
}

/* A namespace's label for labels_selector_matches (a missing namespace has none). */
static const char *ns_label(const void *labels, const char *key)
{
	const struct ens *ns = labels;
	if (!ns || !ns->exists)
		return NULL;
	for (size_t i = 0; i < ns->n_labels; i++)
		if (!strcmp(ns->labels[i].key, key))
			return ns->labels[i].value;
	return NULL;
}

static char *strdup_or_null(const char *s, int *failed)
{
	if (!s)
		return NULL;
	char *c = strdup(s);
	if (!c)
		*failed = 1;
	return c;
}

static struct quota_flavor *flavor_copy(const struct quota_flavor *src)
{
	struct quota_flavor *f = calloc(1, sizeof(*f));
	int failed = 0;
	if (!f)
		return NULL;
	f->name = strdup_or_null(src->name, &failed);
	if (src->n_labels && !(f->labels = calloc(src->n_labels, sizeof(*f->labels))))
		failed = 1;
	for (size_t i = 0; !failed && i < src->n_labels; i++) {
		f->labels[i].key = strdup_or_null(src->labels[i].key, &failed);
		f->labels[i].value = strdup_or_null(src->labels[i].value, &failed);
		f->n_labels = i + 1;
	}
	const struct quota_taint *srcs[2] = { src->taints, src->tolerations };
	size_t ns[2] = { src->n_taints, src->n_tolerations };
	struct quota_taint **dsts[2] = { &f->taints, &f->tolerations };
	size_t *dns[2] = { &f->n_taints, &f->n_tolerations };
	for (int k = 0; k < 2 && !failed; k++) {
		if (ns[k] && !(*dsts[k] = calloc(ns[k], sizeof(**dsts[k])))) {
			failed = 1;
			break;
		}
		for (size_t i = 0; !failed && i < ns[k]; i++) {
			struct quota_taint *d = &(*dsts[k])[i];
			d->key = strdup_or_null(srcs[k][i].key, &failed);
			d->value = strdup_or_null(srcs[k][i].value, &failed);
			d->effect = strdup_or_null(srcs[k][i].effect, &failed);
			d->exists = srcs[k][i].exists;
			*dns[k] = i + 1;
		}
	}
	if (failed) {
		quota_flavor_free(f);
		return NULL;
	}
	return f;
}

/* --- workload specs ----------------------------------------------------------------------- */

static int validate_workload(const struct eng_workload_spec *s)
{
	int with_min = 0;
	if (!s || !nonempty(s->key) || !nonempty(s->namespace_name) || !nonempty(s->queue) ||
	    s->n_podsets < 1 || s->n_podsets > ENG_MAX_PODSETS || !s->podsets)
		return -EINVAL;
	for (size_t i = 0; i < s->n_podsets; i++) {
		const struct eng_podset *ps = &s->podsets[i];
		if (!nonempty(ps->name) || ps->count < 0 || ps->min_count < 0 ||
		    ps->min_count > ps->count)
			return -EINVAL;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(s->podsets[k].name, ps->name))
				return -EINVAL;
		/* Kueue: only one podSet may set minCount. */
		with_min += ps->min_count > 0;
		if (ps->pod.n_requests > QUOTA_MAX_RESOURCES ||
		    (ps->pod.n_requests && (!ps->pod.resources || !ps->pod.per_pod)))
			return -EINVAL;
		for (size_t r = 0; r < ps->pod.n_requests; r++) {
			if (!nonempty(ps->pod.resources[r]) || ps->pod.per_pod[r] < 0)
				return -EINVAL;
			for (size_t k = 0; k < r; k++)
				if (!strcmp(ps->pod.resources[k], ps->pod.resources[r]))
					return -EINVAL;
		}
		for (size_t k = 0; k < ps->pod.n_selector; k++)
			if (!ps->pod.node_selector[k].key || !ps->pod.node_selector[k].value)
				return -EINVAL;
		for (size_t t = 0; t < ps->pod.n_terms; t++)
			for (size_t k = 0; k < ps->pod.terms[t].n_exprs; k++)
				if (!ps->pod.terms[t].exprs[k].key || !ps->pod.terms[t].exprs[k].op)
					return -EINVAL;
	}
	return with_min > 1 ? -EINVAL : 0;
}

/* The shape hash only narrows spec_equal, in this process: interned names (podSet name,
 * resources) are hashed by their pointer, which spec_equal compares too. */
static uint64_t hash_podset(uint64_t h, const struct wps *ps)
{
	h = mix64(h, (uint64_t)(uintptr_t)ps->name);
	h = mix64(h, (uint64_t)ps->count);
	h = mix64(h, (uint64_t)ps->min_count);
	for (size_t r = 0; r < ps->pod.n_requests; r++) {
		h = mix64(h, (uint64_t)(uintptr_t)ps->pod.resources[r]);
		h = mix64(h, (uint64_t)ps->pod.per_pod[r]);
	}
	for (size_t k = 0; k < ps->pod.n_selector; k++) {
		h = fnv_str(h, ps->pod.node_selector[k].key);
		h = fnv_str(h, ps->pod.node_selector[k].value);
	}
	for (size_t t = 0; t < ps->pod.n_terms; t++) {
		h = mix64(h, (uint64_t)ps->pod.terms[t].n_exprs * 2 +
				     ps->pod.terms[t].has_match_fields);
		for (size_t k = 0; k < ps->pod.terms[t].n_exprs; k++) {
			const struct quota_match_expr *x = &ps->pod.terms[t].exprs[k];
			h = fnv_str(fnv_str(h, x->key), x->op);
			for (size_t v = 0; v < x->n_values; v++)
				h = fnv_str(h, x->values[v]);
		}
	}
	for (size_t k = 0; k < ps->pod.n_tolerations; k++) {
		const struct quota_taint *t = &ps->pod.tolerations[k];
		h = fnv_str(fnv_str(fnv_str(h, t->key), t->value), t->effect);
		h = mix64(h, (uint64_t)t->exists);
	}
	return h;
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int podset_equal(const struct wps *a, const struct wps *b)
{
	const struct quota_podset *x = &a->pod, *y = &b->pod;
	if (a->name != b->name || a->count != b->count || a->min_count != b->min_count ||
	    x->n_requests != y->n_requests || x->n_selector != y->n_selector ||
	    x->n_terms != y->n_terms || x->n_tolerations != y->n_tolerations)
		return 0;
	for (size_t r = 0; r < x->n_requests; r++)
		if (x->resources[r] != y->resources[r] || x->per_pod[r] != y->per_pod[r])
			return 0;
	for (size_t k = 0; k < x->n_selector; k++)
		if (!str_eq(x->node_selector[k].key, y->node_selector[k].key) ||
		    !str_eq(x->node_selector[k].value, y->node_selector[k].value))
			return 0;
	for (size_t t = 0; t < x->n_terms; t++) {
		const struct quota_affinity_term *p = &x->terms[t], *q = &y->terms[t];
		if (p->n_exprs != q->n_exprs || p->has_match_fields != q->has_match_fields)
			return 0;
		for (size_t k = 0; k < p->n_exprs; k++) {
			const struct quota_match_expr *u = &p->exprs[k], *v = &q->exprs[k];
			if (!str_eq(u->key, v->key) || !str_eq(u->op, v->op) ||
			    u->n_values != v->n_values)
				return 0;
			for (size_t i = 0; i < u->n_values; i++)
				if (!str_eq(u->values[i], v->values[i]))
					return 0;
		}
	}
	for (size_t k = 0; k < x->n_tolerations; k++) {
		const struct quota_taint *p = &x->tolerations[k], *q = &y->tolerations[k];
		if (!str_eq(p->key, q->key) || !str_eq(p->value, q->value) ||
		    !str_eq(p->effect, q->effect) || p->exists != q->exists)
			return 0;
	}
	return 1;
}

/* Whether a and b hold the same podSets, field by field: only for interning them
 * (spec_intern); once interned, equal specs are one pointer. */
static int spec_same_content(const struct wspec *a, const struct wspec *b)
{
	if (a == b)
		return 1;
	if (a->shape != b->shape || a->n_podsets != b->n_podsets)
		return 0;
	for (uint32_t i = 0; i < a->n_podsets; i++)
		if (!podset_equal(&a->ps[i], &b->ps[i]))
			return 0;
	return 1;
}

/* Two workloads' specs: interned, so equal exactly when the same. */
static int spec_equal(const struct wspec *a, const struct wspec *b)
{
	MUSTER_ASSERT(a == b || !spec_same_content(a, b));
	return a == b;
}

/* Copies a workload's podSets into one allocation (names and resources interned), to be
 * interned (spec_intern). */
static int spec_copy(struct engine *e, const struct eng_workload_spec *s, struct wspec **out)
{
	struct bump b = { NULL, 0 };
	struct wspec *w = NULL;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			char *block = malloc(b.off);
			if (!block)
				return -ENOMEM;
			b.base = block;
			b.off = 0;
		}
		w = bump_alloc(&b, sizeof(*w) + s->n_podsets * sizeof(w->ps[0]),
			       _Alignof(struct wspec));
		for (size_t i = 0; i < s->n_podsets; i++) {
			const struct eng_podset *src = &s->podsets[i];
			const struct quota_podset *sp = &src->pod;
			const char **res =
				bump_alloc(&b, sp->n_requests * sizeof(*res), _Alignof(char *));
			int64_t *per_pod = bump_alloc(&b, sp->n_requests * sizeof(*per_pod),
						      _Alignof(int64_t));
			struct quota_kv *sel = bump_alloc(&b, sp->n_selector * sizeof(*sel),
							  _Alignof(struct quota_kv));
			struct quota_affinity_term *terms =
				bump_alloc(&b, sp->n_terms * sizeof(*terms),
					   _Alignof(struct quota_affinity_term));
			struct quota_taint *tol = bump_alloc(&b, sp->n_tolerations * sizeof(*tol),
							     _Alignof(struct quota_taint));
			for (size_t k = 0; k < sp->n_selector; k++) {
				char *key = bump_str(&b, sp->node_selector[k].key);
				char *val = bump_str(&b, sp->node_selector[k].value);
				if (sel)
					sel[k] = (struct quota_kv){ key, val };
			}
			for (size_t t = 0; t < sp->n_terms; t++) {
				const struct quota_affinity_term *st = &sp->terms[t];
				struct quota_match_expr *exprs =
					bump_alloc(&b, st->n_exprs * sizeof(*exprs),
						   _Alignof(struct quota_match_expr));
				for (size_t k = 0; k < st->n_exprs; k++) {
					const struct quota_match_expr *x = &st->exprs[k];
					const char **values =
						bump_alloc(&b, x->n_values * sizeof(*values),
							   _Alignof(char *));
					for (size_t v = 0; v < x->n_values; v++) {
						char *c = bump_str(&b, x->values[v] ? x->values[v] :
										      "");
						if (values)
							values[v] = c;
					}
					char *key = bump_str(&b, x->key), *op = bump_str(&b, x->op);
					if (exprs)
						exprs[k] = (struct quota_match_expr){ key, op,
										      x->n_values,
										      values };
				}
				if (terms)
					terms[t] = (struct quota_affinity_term){
						st->n_exprs, exprs, st->has_match_fields
					};
			}
			for (size_t k = 0; k < sp->n_tolerations; k++) {
				const struct quota_taint *t = &sp->tolerations[k];
				char *key = bump_str(&b, t->key), *val = bump_str(&b, t->value);
				char *eff = bump_str(&b, t->effect);
				if (tol)
					tol[k] = (struct quota_taint){ key, val, eff, t->exists };
			}
			if (!w)
				continue;
			for (size_t r = 0; r < sp->n_requests; r++) {
				if (!(res[r] = eng_intern(e, sp->resources[r])))
					goto nomem;
				per_pod[r] = sp->per_pod[r];
			}
			const char *name = eng_intern(e, src->name);
			if (!name)
				goto nomem;
			w->ps[i] = (struct wps){ name,
						 src->count,
						 src->min_count,
						 { src->count, sp->n_requests, res, per_pod,
						   sp->n_selector, sel, sp->n_terms, terms,
						   sp->n_tolerations, tol } };
		}
	}
	w->n_podsets = (uint32_t)s->n_podsets;
	w->shape = FNV_OFFSET;
	for (uint32_t i = 0; i < w->n_podsets; i++)
		w->shape = hash_podset(w->shape, &w->ps[i]);
	*out = w;
	return 0;
nomem:
	free(b.base);
	return -ENOMEM;
}

/* The bucket of engine.specs for a shape hash. */
static struct wspec **spec_bucket(struct engine *e, uint64_t shape)
{
	return &e->specs[(size_t)(mix64(shape, 0) & (e->spec_buckets - 1))];
}

/* Twice the buckets, or none changed when memory is short (chains just grow longer). */
static void specs_grow(struct engine *e)
{
	size_t n = e->spec_buckets ? 2 * e->spec_buckets : 64;
	struct wspec **old = e->specs, **specs = calloc(n, sizeof(*specs));
	size_t old_n = e->spec_buckets;
	if (!specs)
		return;
	e->specs = specs;
	e->spec_buckets = n;
	for (size_t i = 0; i < old_n; i++)
		for (struct wspec *s = old[i], *next; s; s = next) {
			next = s->next;
			struct wspec **b = spec_bucket(e, s->shape);
			s->next = *b;
			*b = s;
		}
	free(old);
}

/* The interned spec equal to ws (a new copy, which this takes: freed when one exists), with
 * a reference for the caller; NULL when out of memory (ws freed). */
static struct wspec *spec_intern(struct engine *e, struct wspec *ws)
{
	if (e->n_specs >= e->spec_buckets / 4 * 3)
		specs_grow(e);
	if (!e->specs) {
		free(ws);
		return NULL;
	}
	struct wspec **b = spec_bucket(e, ws->shape);
	for (struct wspec *s = *b; s; s = s->next)
		if (spec_same_content(s, ws)) {
			free(ws);
			s->refs++;
			return s;
		}
	ws->refs = 1;
	ws->next = *b;
	*b = ws;
	e->n_specs++;
	return ws;
}

/* Drops w's reference to its spec; the last one frees it. */
static void spec_free(struct engine *e, struct ewl *w)
{
	struct wspec *ws = w->spec;
	w->spec = NULL;
	if (!ws || --ws->refs > 0)
		return;
	for (struct wspec **p = spec_bucket(e, ws->shape); *p; p = &(*p)->next)
		if (*p == ws) {
			*p = ws->next;
			break;
		}
	e->n_specs--;
	free(ws);
}

/* --- admissions --------------------------------------------------------------------------- */

static struct eadm *adm_new(uint32_t n_podsets, uint32_t n_items)
{
	size_t size = sizeof(struct eadm) + n_items * sizeof(struct eitem);
	size = (size + 7) & ~(size_t)7;
	size_t counts_at = size;
	size += n_podsets * sizeof(int64_t);
	size_t names_at = size;
	size += n_podsets * sizeof(char *);
	struct eadm *a = malloc(size);
	if (!a)
		return NULL;
	a->n_podsets = n_podsets;
	a->n_items = n_items;
	a->count = (int64_t *)((char *)a + counts_at);
	a->podset = (const char **)((char *)a + names_at);
	return a;
}

static struct eadm *adm_from_eval(const struct ewl *w, const struct eval *ev)
{
	struct eadm *a = adm_new(ev->n_podsets, ev->n_items);
	if (!a)
		return NULL;
	memcpy(a->items, ev->items, ev->n_items * sizeof(ev->items[0]));
	for (uint32_t i = 0; i < ev->n_podsets; i++) {
		a->count[i] = ev->count[i];
		a->podset[i] = w->spec->ps[i].name;
	}
	return a;
}

static const struct eng_assignment *materialize_adm(struct engine *e, const struct ecq *cq,
						    const struct eadm *a, int64_t given_time)
{
	struct eng_assignment *out = &e->out_assignment;
	out->cluster_queue = cq->name;
	out->quota_reserved_time = given_time;
	out->n_podsets = a->n_podsets;
	for (uint32_t i = 0; i < a->n_podsets; i++) {
		out->podsets[i].name = a->podset[i];
		out->podsets[i].count = a->count[i];
		out->podsets[i].n = 0;
	}
	for (uint32_t i = 0; i < a->n_items; i++) {
		const struct eitem *it = &a->items[i];
		struct eng_podset_assignment *ps = &out->podsets[it->podset];
		if (ps->n == QUOTA_MAX_RESOURCES)
			continue;
		ps->resources[ps->n] = it->resource;
		ps->flavors[ps->n] = it->flavor;
		ps->usage[ps->n++] = it->amount;
	}
	return out;
}

static const struct eng_assignment *materialize(struct engine *e, const struct ecq *cq,
						const struct ewl *w)
{
	return materialize_adm(e, cq, w->adm, w->adm_given_time);
}

/* Whether the placer (if any) finds a node layout for a's pods: 1 yes, 0 no, with why in msg.
 * An error from the placer counts as "no" for now: admitting on a guess is worse than waiting. */
static int has_layout(struct engine *e, const struct ecq *cq, struct ewl *w, const struct eadm *a,
		      char *msg, size_t size)
{
	if (!e->place_fn)
		return 1;
	msg[0] = 0;
	int rc = e->place_fn(e->place_arg, w->key, materialize_adm(e, cq, a, 0), msg, size);
	if (rc == 0)
		return 1;
	if (rc < 0)
		snprintf(msg, size, "node placement failed: %s", strerror(-rc));
	else if (!msg[0])
		snprintf(msg, size, "no node layout fits the workload's pods");
	w->no_layout = 1;
	e->no_layout_seen = 1;
	return 0;
}

static int cq_charged(const struct engine *e, const struct ecq *cq)
{
	return !e->topology_dirty && cq->exists;
}

/* Keeps a ClusterQueue's admitted workloads in ascending priority: preemption scans stop at
 * the first one a priority-bound policy can't take. w->adm_cycle is set before. */
static void link_admitted(struct ecq *cq, struct ewl *w)
{
	struct ewl *prev = NULL, *next = cq->adm_head;
	while (next && next->priority < w->priority) {
		prev = next;
		next = next->adm_next;
	}
	w->adm_cq = cq;
	w->adm_prev = prev;
	w->adm_next = next;
	if (prev)
		prev->adm_next = w;
	else
		cq->adm_head = w;
	if (next)
		next->adm_prev = w;
	cq->n_admitted++;
	if (w->adm_cycle == cq->fresh_cycle) {
		cq->n_fresh++;
	} else if (w->adm_cycle > cq->fresh_cycle) {
		cq->fresh_cycle = w->adm_cycle; /* no listed one has it yet */
		cq->n_fresh = 1;
	}
}

static void unlink_admitted(struct ewl *w)
{
	struct ecq *cq = w->adm_cq;
	if (w->adm_prev)
		w->adm_prev->adm_next = w->adm_next;
	else
		cq->adm_head = w->adm_next;
	if (w->adm_next)
		w->adm_next->adm_prev = w->adm_prev;
	cq->n_admitted--;
	if (w->adm_cycle == cq->fresh_cycle)
		cq->n_fresh--;
	w->adm_prev = w->adm_next = NULL;
	w->adm_cq = NULL;
}

/* Counts quota released in a tree at its root, for the parked workloads' needs. */
static void credit(struct ecq *cq, struct eitem *items, uint32_t n)
{
	struct qnode *root = eng_root(cq);
	eng_resolve_slots(cq, items, n);
	for (uint32_t i = 0; i < n; i++) {
		int32_t rs = items[i].slot >= 0 ? eng_root_slot(cq, items[i].slot) : -1;
		if (rs >= 0 && items[i].amount > 0)
			root->slots[rs].released =
				sat_add(root->slots[rs].released, items[i].amount);
	}
}

/* Whether a parked workload could fit now, as far as its needs tell. */
static int worth_a_look(struct ecq *cq, const struct ewl *w)
{
	if (w->needs.n == 0)
		return 1;
	const struct qnode *root = eng_root(cq);
	for (uint32_t i = 0; i < w->needs.n; i++) {
		const struct need *nd = &w->needs.v[i];
		if (nd->slot >= 0 && (uint32_t)nd->slot < root->n_slots &&
		    sat_sub(root->slots[nd->slot].released, nd->base) >= nd->deficit)
			return 1;
	}
	return 0;
}

/* Whether a requeued workload could fit with what is available right now (quota released
 * since it was parked may already be taken). When not, its needs are brought up to date, so
 * that only quota released from now on counts. */
static int could_fit_now(struct ecq *cq, struct ewl *w)
{
	if (w->needs.n == 0)
		return 1;
	const struct qnode *root = eng_root(cq);
	for (uint32_t i = 0; i < w->needs.n; i++) {
		const struct need *nd = &w->needs.v[i];
		if (nd->cq_slot >= 0 && (uint32_t)nd->cq_slot < cq->node.n_slots &&
		    nd->val <= q_available(&cq->node, nd->cq_slot))
			return 1;
	}
	for (uint32_t i = 0; i < w->needs.n; i++) {
		struct need *nd = &w->needs.v[i];
		if (nd->cq_slot < 0)
			continue;
		int64_t available = q_available(&cq->node, nd->cq_slot);
		nd->deficit = sat_sub(nd->val, available > 0 ? available : 0);
		nd->base = root->slots[nd->slot].released;
	}
	return 0;
}

/* Releases an admitted workload's quota: its tree gets another look. */
static void release(struct engine *e, struct ewl *w)
{
	struct ecq *cq = w->adm_cq;
	eng_changed(e);
	if (cq_charged(e, cq)) {
		eng_charge(cq, w->adm, -1);
		credit(cq, w->adm->items, w->adm->n_items);
		if (cq->tree)
			mark_tree_requeue(e, cq->tree);
	}
	unlink_admitted(w);
	free(w->adm);
	w->adm = NULL;
	w->admitted = 0;
	w->evicting = 0;
	w->claimed = 0;
}

/* --- waiting preemptors ------------------------------------------------------------------ */

static void end_wait(struct engine *e, struct ewl *p)
{
	struct ewait *wt = p->wait;
	if (!wt)
		return;
	eng_changed(e);
	for (uint32_t i = 0; i < wt->n_victims; i++) {
		struct ewl *v = strmap_get(&e->workloads, wt->victim_key[i]);
		if (v && v->uid == wt->victim_uid[i] && v->claimed == p->uid)
			v->claimed = 0;
	}
	free(wt->plan);
	free(wt);
	p->wait = NULL;
}

static uint32_t victims_left(struct engine *e, const struct ewl *p)
{
	const struct ewait *wt = p->wait;
	uint32_t n = 0;
	for (uint32_t i = 0; i < wt->n_victims; i++) {
		struct ewl *v = strmap_get(&e->workloads, wt->victim_key[i]);
		n += v && v->uid == wt->victim_uid[i] && v->admitted && v->claimed == p->uid;
	}
	return n;
}

static struct ewait *wait_new(const struct ewl *p, const struct eval *ev)
{
	size_t size = sizeof(struct ewait);
	size = (size + 7) & ~(size_t)7;
	size_t uids_at = size;
	size += ev->n_targets * sizeof(uint64_t);
	size_t keys_at = size;
	size += ev->n_targets * sizeof(char *);
	size_t strs_at = size;
	for (uint32_t i = 0; i < ev->n_targets; i++)
		size += strlen(ev->targets[i].wl->key) + 1;
	struct ewait *wt = malloc(size);
	if (!wt)
		return NULL;
	wt->plan = adm_from_eval(p, ev);
	if (!wt->plan) {
		free(wt);
		return NULL;
	}
	wt->n_victims = ev->n_targets;
	wt->victim_uid = (uint64_t *)((char *)wt + uids_at);
	wt->victim_key = (char **)((char *)wt + keys_at);
	char *s = (char *)wt + strs_at;
	for (uint32_t i = 0; i < ev->n_targets; i++) {
		size_t n = strlen(ev->targets[i].wl->key) + 1;
		memcpy(s, ev->targets[i].wl->key, n);
		wt->victim_key[i] = s;
		wt->victim_uid[i] = ev->targets[i].wl->uid;
		s += n;
	}
	return wt;
}

/* --- placing pending workloads ----------------------------------------------------------- */

/* Takes a pending workload out of whatever holds it. With mark, what it leaves behind gets
 * another look (a StrictFIFO queue it was blocking). */
static void unplace(struct engine *e, struct ewl *w, int mark)
{
	struct ecq *cq = w->cq;
	switch (w->where) {
	case WL_HEAP:
		heap_remove(&cq->heap, w);
		if (mark)
			mark_cq_dirty(e, cq);
		break;
	case WL_PARKED:
		wvec_remove(&cq->parked, w);
		break;
	case WL_WAITING:
		wvec_remove(&cq->waiting, w);
		if (mark && cq_charged(e, cq) && cq->tree) {
			/* The quota held for it is free again. */
			credit(cq, w->wait->plan->items, w->wait->plan->n_items);
			mark_tree_requeue(e, cq->tree);
		}
		if (mark)
			mark_cq_dirty(e, cq);
		break;
	case WL_HELD:
		wvec_remove(&w->lq->held, w);
		break;
	}
	end_wait(e, w);
	w->where = WL_NONE;
	w->cq = NULL;
	w->needs.n = 0; /* only a parked workload's needs mean anything */
}

/* Puts a pending workload where its LocalQueue routes it. */
static int place(struct engine *e, struct ewl *w)
{
	struct elq *lq = w->lq;
	int rc;
	w->needs.n = 0;
	if (lq->exists && lq->stop == ENG_STOP_NONE && lq->cq) {
		rc = heap_push(&lq->cq->heap, w);
		if (rc)
			return rc;
		w->where = WL_HEAP;
		w->cq = lq->cq;
		mark_cq_dirty(e, lq->cq);
		return 0;
	}
	rc = wvec_push(&lq->held, w);
	if (rc)
		return rc;
	w->where = WL_HELD;
	mark_lq_dirty(e, lq);
	return 0;
}

/* Re-routes every pending workload of a LocalQueue after it changed. */
static int reroute_lq(struct engine *e, struct elq *lq, struct ecq *old_cq)
{
	uint32_t n = lq->held.n;
	if (old_cq)
		n += old_cq->heap.n + old_cq->parked.n + old_cq->waiting.n;
	if (n == 0)
		return 0;
	struct ewl **list = malloc(n * sizeof(*list));
	uint32_t k = 0;
	int rc = 0;
	if (!list)
		return -ENOMEM;
	for (uint32_t i = 0; i < lq->held.n; i++)
		list[k++] = lq->held.v[i];
	if (old_cq) {
		for (uint32_t i = 0; i < old_cq->heap.n; i++)
			if (old_cq->heap.v[i]->lq == lq)
				list[k++] = old_cq->heap.v[i];
		for (uint32_t i = 0; i < old_cq->parked.n; i++)
			if (old_cq->parked.v[i]->lq == lq)
				list[k++] = old_cq->parked.v[i];
		for (uint32_t i = 0; i < old_cq->waiting.n; i++)
			if (old_cq->waiting.v[i]->lq == lq)
				list[k++] = old_cq->waiting.v[i];
	}
	for (uint32_t i = 0; i < k; i++) {
		unplace(e, list[i], 1);
		int r = place(e, list[i]);
		if (r && !rc)
			rc = r;
	}
	free(list);
	mark_lq_dirty(e, lq);
	return rc;
}

/* --- the build ---------------------------------------------------------------------------- */

static void free_trees(struct engine *e)
{
	for (uint32_t i = 0; i < e->n_trees; i++) {
		free(e->trees[i]->cqs);
		free(e->trees[i]);
	}
	free(e->trees);
	e->trees = NULL;
	e->n_trees = 0;
	e->n_dirty_trees = 0;
}

static struct etree *tree_new(struct engine *e, struct ecohort *root)
{
	/* The capacity is implicit: the count rounded up to 64. */
	if (e->n_trees % 64 == 0 && grow_resize(&e->trees, e->n_trees + 64, sizeof(*e->trees)) != 0)
		return NULL;
	struct etree *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->root = root;
	e->trees[e->n_trees++] = t;
	return t;
}

static int tree_add_cq(struct etree *t, struct ecq *q)
{
	if ((t->n_cqs & (t->n_cqs - 1)) == 0 && /* grow at powers of two */
	    grow_resize(&t->cqs, t->n_cqs ? (size_t)t->n_cqs * 2 : 1, sizeof(*t->cqs)) != 0)
		return -ENOMEM;
	t->cqs[t->n_cqs++] = q;
	return 0;
}

static void node_reset(struct qnode *n)
{
	free(n->slots);
	free(n->index);
	*n = (struct qnode){ 0 };
}

/* Adds (flavor, resource) to a node under construction, or finds it. Returns the slot or -1. */
static int32_t node_slot(struct qnode *n, uint32_t *cap, const char *flavor, const char *resource)
{
	int32_t s = qnode_find(n, flavor, resource);
	if (s >= 0)
		return s;
	if (GROW(n->slots, *cap, n->n_slots + 1) != 0)
		return -1;
	s = (int32_t)n->n_slots++;
	n->slots[s] = (struct qslot){ .flavor = flavor,
				      .resource = resource,
				      .parent_slot = -1,
				      .in_bytes = (uint8_t)quota_resource_in_bytes(resource) };
	/* Keep lookups fast while the node grows (big cohorts union many children). */
	if (n->n_slots > 8 && n->n_slots * 2 > n->index_cap) {
		if (qnode_index(n) != 0)
			return -1;
	} else if (n->index_cap) {
		free(n->index);
		n->index = NULL;
		n->index_cap = 0;
		if (qnode_index(n) != 0)
			return -1;
	}
	return s;
}

static int add_group_slots(struct engine *e, struct qnode *n, uint32_t *cap, struct egroups *gs)
{
	for (uint32_t g = 0; g < gs->n; g++) {
		struct egroup *grp = &gs->g[g];
		for (uint32_t f = 0; f < grp->n_fl; f++) {
			grp->flavor[f] = strmap_get(&e->flavors, grp->fl[f]);
			for (uint32_t r = 0; r < grp->n_cov; r++) {
				int32_t s = node_slot(n, cap, grp->fl[f], grp->cov[r]);
				if (s < 0)
					return -ENOMEM;
				const struct equota *q = &grp->q[f * grp->n_cov + r];
				struct qslot *sl = &n->slots[s];
				sl->nominal = q->nominal;
				sl->has_borrowing_limit = q->has_borrowing_limit;
				sl->borrowing_limit = q->borrowing_limit;
				sl->has_lending_limit = q->has_lending_limit;
				sl->lending_limit = q->lending_limit;
				grp->slot[f * grp->n_cov + r] = s;
			}
		}
	}
	return 0;
}

static void finish_slots(struct qnode *n)
{
	for (uint32_t s = 0; s < n->n_slots; s++) {
		struct qslot *q = &n->slots[s];
		q->local = q->has_lending_limit ?
				   (q->subtree > q->lending_limit ? q->subtree - q->lending_limit :
								    0) :
				   0;
		q->usage = 0;
	}
}

static int build_cq_slots(struct engine *e, struct ecq *q)
{
	uint32_t cap = 0;
	node_reset(&q->node);
	if (!q->exists)
		return 0;
	int rc = add_group_slots(e, &q->node, &cap, &q->groups);
	if (rc)
		return rc;
	/* Admitted work on pairs the spec no longer has still counts (Kueue keeps it too). */
	for (struct ewl *w = q->adm_head; w; w = w->adm_next)
		for (uint32_t i = 0; i < w->adm->n_items; i++)
			if (node_slot(&q->node, &cap, w->adm->items[i].flavor,
				      w->adm->items[i].resource) < 0)
				return -ENOMEM;
	for (uint32_t s = 0; s < q->node.n_slots; s++)
		q->node.slots[s].subtree = q->node.slots[s].nominal;
	finish_slots(&q->node);
	uint32_t g, r;
	q->covers_pods = eng_cq_group_of(q, e->pods, &g, &r);
	return 0;
}

static int build_cohort_slots(struct engine *e, struct ecohort *c)
{
	uint32_t cap = 0;
	int rc;
	node_reset(&c->node);
	for (uint32_t i = 0; i < c->n_child_cohorts; i++)
		if ((rc = build_cohort_slots(e, c->child_cohorts[i])) != 0)
			return rc;
	for (uint32_t i = 0; i < c->n_child_cqs; i++)
		if ((rc = build_cq_slots(e, c->child_cqs[i])) != 0)
			return rc;
	if (c->exists && (rc = add_group_slots(e, &c->node, &cap, &c->groups)) != 0)
		return rc;
	for (uint32_t s = 0; s < c->node.n_slots; s++)
		c->node.slots[s].subtree = c->node.slots[s].nominal;
	/* SubtreeQuota(C) = nominal + sum over children of (SubtreeQuota - localQuota). */
	int height = c->n_child_cohorts + c->n_child_cqs > 0;
	for (uint32_t i = 0; i < c->n_child_cohorts + c->n_child_cqs; i++) {
		struct qnode *child = i < c->n_child_cohorts ?
					      &c->child_cohorts[i]->node :
					      &c->child_cqs[i - c->n_child_cohorts]->node;
		if (i < c->n_child_cohorts && child->height + 1 > height)
			height = child->height + 1;
		child->parent = &c->node;
		for (uint32_t s = 0; s < child->n_slots; s++) {
			struct qslot *cs = &child->slots[s];
			int32_t ps = node_slot(&c->node, &cap, cs->flavor, cs->resource);
			if (ps < 0)
				return -ENOMEM;
			cs->parent_slot = ps;
			c->node.slots[ps].subtree =
				sat_add(c->node.slots[ps].subtree, sat_sub(cs->subtree, cs->local));
		}
	}
	c->node.height = height;
	finish_slots(&c->node);
	return 0;
}

static char *strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *strdupf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return strdup(buf);
}

static int compute_active(struct engine *e, struct ecq *q)
{
	char missing[512] = "";
	size_t n_missing = 0;
	free(q->inactive_msg);
	free(q->pending_msg);
	q->inactive_msg = q->pending_msg = NULL;
	q->active = 0;
	if (!q->exists) {
		q->inactive_reason = "NotFound";
		q->pending_why = ENG_WHY_MISCONFIGURED;
		q->inactive_msg = strdupf("ClusterQueue %s doesn't exist", q->name);
		q->pending_msg = strdupf("ClusterQueue %s doesn't exist", q->name);
		return q->inactive_msg && q->pending_msg ? 0 : -ENOMEM;
	}
	for (uint32_t g = 0; g < q->groups.n; g++) {
		for (uint32_t f = 0; f < q->groups.g[g].n_fl; f++) {
			if (q->groups.g[g].flavor[f])
				continue;
			size_t len = strlen(missing);
			snprintf(missing + len, sizeof(missing) - len, "%s%s", n_missing ? "," : "",
				 q->groups.g[g].fl[f]);
			n_missing++;
		}
	}
	int cyclic = q->tree && q->tree->cyclic;
	if (q->stop == ENG_STOP_NONE && !n_missing && !cyclic) {
		q->active = 1;
		q->inactive_reason = "Ready";
		return 0;
	}
	/* Kueue's wording: the first reason, and every cause in the message. */
	char why[1024] = "";
	size_t len = 0;
	const char *reason = NULL;
	if (q->stop != ENG_STOP_NONE) {
		reason = "Stopped";
		len += (size_t)snprintf(why + len, sizeof(why) - len, "is stopped");
	}
	if (n_missing) {
		reason = reason ? reason : "FlavorNotFound";
		len += (size_t)snprintf(why + len, sizeof(why) - len,
					"%sreferences missing ResourceFlavor%s %s", len ? ", " : "",
					n_missing > 1 ? "s" : "", missing);
	}
	if (cyclic && len < sizeof(why)) {
		/* Kueue has no reason for this; it skips such ClusterQueues without saying so. */
		reason = reason ? reason : "CohortCycle";
		snprintf(why + len, sizeof(why) - len, "%scohort %s is part of a cycle",
			 len ? ", " : "", q->tree->cycle_cohort);
	}
	q->inactive_reason = reason;
	q->inactive_msg = strdupf("Can't admit new workloads: %s.", why);
	/* A queue that is both stopped and broken is reported broken: Misconfigured outranks
	 * Suspended, and starting it again would not help. */
	if (q->stop != ENG_STOP_NONE && !n_missing && !cyclic) {
		q->pending_why = ENG_WHY_SUSPENDED;
		q->pending_msg = strdupf("ClusterQueue %s is stopped", q->name);
	} else {
		q->pending_why = ENG_WHY_MISCONFIGURED;
		q->pending_msg = strdupf("ClusterQueue %s is inactive: %s", q->name, why);
	}
	return q->inactive_msg && q->pending_msg ? 0 : -ENOMEM;
}

/* Finds the tree of a cohort: walks up to a root, a cycle, or a cohort already placed. */
static int resolve_tree(struct engine *e, struct ecohort *c, struct ecohort ***path, uint32_t *cap)
{
	uint32_t n = 0;
	struct ecohort *x = c;
	while (x && x->build_state == 0) {
		int rc;
		rc = GROW(*path, *cap, n + 1);
		if (rc)
			return rc;
		x->build_state = 1;
		(*path)[n++] = x;
		x = x->parent;
	}
	struct etree *t;
	if (!x) {
		t = tree_new(e, (*path)[n - 1]);
	} else if (x->build_state == 1) {
		t = tree_new(e, NULL);
		if (t) {
			t->cyclic = 1;
			t->cycle_cohort = x->name;
		}
	} else {
		t = x->tree;
	}
	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		(*path)[i]->tree = t;
		(*path)[i]->build_state = 2;
	}
	return 0;
}

static int build(struct engine *e)
{
	struct ecohort **path = NULL;
	uint32_t path_cap = 0;
	int rc = 0;

	e->input_epoch++; /* a spec changed */
	free_trees(e);
	for (uint32_t i = 0; i < e->n_all_cohorts; i++) {
		struct ecohort *c = e->all_cohorts[i];
		c->parent = NULL;
		c->n_child_cohorts = c->n_child_cqs = 0;
		c->tree = NULL;
		c->build_state = 0;
		c->n_lend = 0; /* quotas may change: lendable is computed again */
		node_reset(&c->node);
	}
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		struct ecq *q = e->all_cqs[i];
		q->parent = NULL;
		q->tree = NULL;
		q->node.parent = NULL;
		/* Needs name slots of the old build. */
		for (uint32_t k = 0; k < q->parked.n; k++)
			q->parked.v[k]->needs.n = 0;
	}
	/* Parents (records for cohorts that are only referenced are created here: Kueue's
	 * implicit cohorts, with no quota of their own). */
	for (uint32_t i = 0; i < e->n_all_cohorts; i++) {
		struct ecohort *c = e->all_cohorts[i];
		if (c->exists && c->parent_name && !(c->parent = cohort_record(e, c->parent_name)))
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		struct ecq *q = e->all_cqs[i];
		if (q->exists && q->cohort_name && !(q->parent = cohort_record(e, q->cohort_name)))
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < e->n_all_cohorts; i++) {
		struct ecohort *c = e->all_cohorts[i], *p = c->parent;
		if (!p)
			continue;
		rc = GROW(p->child_cohorts, p->cap_child_cohorts, p->n_child_cohorts + 1);
		if (rc)
			return rc;
		p->child_cohorts[p->n_child_cohorts++] = c;
	}
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		struct ecq *q = e->all_cqs[i];
		struct ecohort *p = q->parent;
		if (!p)
			continue;
		rc = GROW(p->child_cqs, p->cap_child_cqs, p->n_child_cqs + 1);
		if (rc)
			return rc;
		p->child_cqs[p->n_child_cqs++] = q;
	}
	for (uint32_t i = 0; i < e->n_all_cohorts && !rc; i++)
		rc = resolve_tree(e, e->all_cohorts[i], &path, &path_cap);
	free(path);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		struct ecq *q = e->all_cqs[i];
		q->tree = q->parent ? q->parent->tree : tree_new(e, NULL);
		if (!q->tree || tree_add_cq(q->tree, q) != 0)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < e->n_trees; i++) {
		struct etree *t = e->trees[i];
		if (t->root && !t->cyclic) {
			if ((rc = build_cohort_slots(e, t->root)) != 0)
				return rc;
			continue;
		}
		/* Lone ClusterQueues, and everything in a cyclic tree: no parent to charge. */
		for (uint32_t k = 0; k < t->n_cqs; k++)
			if ((rc = build_cq_slots(e, t->cqs[k])) != 0)
				return rc;
	}
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		struct ecq *q = e->all_cqs[i];
		if ((rc = compute_active(e, q)) != 0)
			return rc;
		if (!q->exists)
			continue;
		for (struct ewl *w = q->adm_head; w; w = w->adm_next) {
			eng_resolve_slots(q, w->adm->items, w->adm->n_items);
			eng_charge(q, w->adm, +1);
		}
	}
	rc = GROW(e->dirty_trees, e->cap_dirty_trees, e->n_trees);
	if (rc)
		return rc;
	e->topology_dirty = 0;
	for (uint32_t i = 0; i < e->n_trees; i++)
		mark_tree_requeue(e, e->trees[i]);
	for (uint32_t i = 0; i < e->n_all_cqs; i++)
		e->all_cqs[i]->dirty = 1;
	return 0;
}

static int ensure_built(struct engine *e)
{
	if (!e->topology_dirty)
		return 0;
	int rc = build(e);
	if (rc) {
		/* Leave it marked: the next call tries again from scratch. */
		free_trees(e);
		e->topology_dirty = 1;
	}
	return rc;
}

/* --- lifecycle ---------------------------------------------------------------------------- */

int engine_new(struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	strmap_init(&e->names);
	strmap_init(&e->flavors);
	strmap_init(&e->cohorts);
	strmap_init(&e->cqs);
	strmap_init(&e->lqs);
	strmap_init(&e->namespaces);
	strmap_init_borrowed(&e->workloads); /* keyed by each ewl's own key */
	e->next_uid = 1;
	e->oracle = eng_simulate_preemption;
	e->pods = eng_intern(e, "pods");
	if (!e->pods) {
		engine_free(e);
		return -ENOMEM;
	}
	*out = e;
	return 0;
}

static void free_value(void *p)
{
	free(p);
}

static void free_flavor(void *p)
{
	quota_flavor_free(p);
}

/* At engine_free: the specs go with the table. */
static void free_workload(void *p)
{
	struct ewl *w = p;
	if (w->wait) {
		free(w->wait->plan);
		free(w->wait);
	}
	free(w->adm);
	free(w);
}

static void free_ns(void *p)
{
	struct ens *ns = p;
	free(ns->labels);
	free(ns);
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	strmap_release(&e->workloads, free_workload);
	for (size_t i = 0; i < e->spec_buckets; i++)
		for (struct wspec *s = e->specs[i], *next; s; s = next) {
			next = s->next;
			free(s);
		}
	free(e->specs);
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		struct ecq *q = e->all_cqs[i];
		groups_free(&q->groups);
		sel_free(&q->ns_selector);
		node_reset(&q->node);
		free(q->heap.v);
		free(q->heap.k);
		free(q->parked.v);
		free(q->waiting.v);
		free(q->inactive_msg);
		free(q->pending_msg);
		free(q->fs_items);
		free(q);
	}
	for (uint32_t i = 0; i < e->n_all_cohorts; i++) {
		struct ecohort *c = e->all_cohorts[i];
		groups_free(&c->groups);
		node_reset(&c->node);
		free(c->child_cohorts);
		free(c->child_cqs);
		free(c->lend_res);
		free(c->lend_val);
		free(c);
	}
	for (uint32_t i = 0; i < e->n_all_lqs; i++) {
		free(e->all_lqs[i]->held.v);
		free(e->all_lqs[i]->afs_res);
		free(e->all_lqs[i]->afs_val);
		free(e->all_lqs[i]);
	}
	free(e->seen);
	free(e->seen_text);
	strmap_release(&e->cqs, NULL);
	strmap_release(&e->cohorts, NULL);
	strmap_release(&e->lqs, NULL);
	strmap_release(&e->namespaces, free_ns);
	strmap_release(&e->flavors, free_flavor);
	strmap_release(&e->names, free_value);
	free_trees(e);
	free(e->all_cqs);
	free(e->all_cohorts);
	free(e->all_lqs);
	free(e->dirty_trees);
	free(e->dirty_lqs);
	free(e->acc);
	free(e->cands);
	free(e->picked);
	if (e->memo)
		for (uint32_t i = 0; i < ENG_MEMO_SLOTS; i++)
			free(e->memo[i].picked);
	free(e->memo);
	free(e->merge);
	free(e->scratch);
	free(e->phantoms);
	free(e->fp_next);
	free(e->fp_retry);
	free(e->fs_drs);
	free(e->fs_off);
	free(e->afs_weight_res);
	free(e->afs_weight_val);
	free(e->ev_full.targets);
	free(e->ev_try.targets);
	free(e->ev_best.targets);
	free(e);
}

/* --- model API ---------------------------------------------------------------------------- */

int engine_set_flavor(struct engine *e, const struct quota_flavor *flavor)
{
	eng_changed(e);
	if (!flavor || !nonempty(flavor->name))
		return -EINVAL;
	struct quota_flavor *copy = flavor_copy(flavor);
	if (!copy || !eng_intern(e, flavor->name)) {
		quota_flavor_free(copy);
		return -ENOMEM;
	}
	void *old;
	if (strmap_put(&e->flavors, copy->name, copy, &old) != 0) {
		quota_flavor_free(copy);
		return -ENOMEM;
	}
	quota_flavor_free(old);
	/* ClusterQueues hold pointers to flavors: the build rebinds them. */
	e->topology_dirty = 1;
	return 0;
}

void engine_remove_flavor(struct engine *e, const char *name)
{
	eng_changed(e);
	struct quota_flavor *f = name ? strmap_remove(&e->flavors, name) : NULL;
	if (!f)
		return;
	quota_flavor_free(f);
	e->topology_dirty = 1;
}

int engine_set_cohort(struct engine *e, const struct eng_cohort_spec *spec)
{
	eng_changed(e);
	struct egroups groups;
	if (!spec || !nonempty(spec->name) || (spec->parent && !*spec->parent) ||
	    (spec->has_fair_weight && !eng_weight_valid(spec->fair_weight)))
		return -EINVAL;
	int rc = validate_groups(spec->n_groups, spec->groups, spec->parent != NULL);
	if (rc)
		return rc;
	const char *parent = spec->parent ? eng_intern(e, spec->parent) : NULL;
	if (spec->parent && !parent)
		return -ENOMEM;
	if ((rc = groups_copy(e, &groups, spec->n_groups, spec->groups)) != 0)
		return rc;
	struct ecohort *c = cohort_record(e, spec->name);
	if (!c) {
		groups_free(&groups);
		return -ENOMEM;
	}
	groups_free(&c->groups);
	c->groups = groups;
	c->parent_name = parent;
	c->fair_weight = spec->has_fair_weight ? spec->fair_weight : 1;
	c->exists = 1;
	e->topology_dirty = 1;
	return 0;
}

void engine_remove_cohort(struct engine *e, const char *name)
{
	eng_changed(e);
	struct ecohort *c = name ? strmap_get(&e->cohorts, name) : NULL;
	if (!c || !c->exists)
		return;
	/* The record stays: ClusterQueues naming it keep an implicit cohort, as in Kueue. */
	groups_free(&c->groups);
	c->parent_name = NULL;
	c->exists = 0;
	e->topology_dirty = 1;
}

static int valid_enums(const struct eng_cq_spec *s)
{
	const struct eng_preemption *p = &s->preemption;
	return (unsigned)s->queueing <= ENG_STRICT_FIFO &&
	       (unsigned)p->within_cluster_queue <= ENG_WITHIN_LOWER_OR_NEWER_EQUAL &&
	       (unsigned)p->reclaim_within_cohort <= ENG_RECLAIM_ANY &&
	       (unsigned)p->borrow_within_cohort <= ENG_BORROW_WITHIN_LOWER_PRIORITY &&
	       (unsigned)s->when_can_borrow <= ENG_BORROW_TRY_NEXT_FLAVOR &&
	       (unsigned)s->when_can_preempt <= ENG_PREEMPT_MAY_STOP_SEARCH &&
	       (unsigned)s->stop_policy <= ENG_STOP_HOLD_AND_DRAIN;
}

int engine_set_cq(struct engine *e, const struct eng_cq_spec *spec)
{
	eng_changed(e);
	struct egroups groups;
	struct esel sel = { 0 };
	if (!spec || !nonempty(spec->name) || (spec->cohort && !*spec->cohort) ||
	    !valid_enums(spec) || (spec->has_fair_weight && !eng_weight_valid(spec->fair_weight)))
		return -EINVAL;
	/* Kueue's CEL rules. */
	if (spec->preemption.reclaim_within_cohort == ENG_RECLAIM_NEVER &&
	    spec->preemption.borrow_within_cohort != ENG_BORROW_WITHIN_NEVER)
		return -EINVAL;
	if (spec->prefer_preemption_over_borrowing &&
	    (spec->when_can_borrow != ENG_BORROW_TRY_NEXT_FLAVOR ||
	     spec->when_can_preempt != ENG_PREEMPT_TRY_NEXT_FLAVOR))
		return -EINVAL;
	int rc = validate_groups(spec->n_groups, spec->groups, spec->cohort != NULL);
	if (rc)
		return rc;
	const char *cohort = spec->cohort ? eng_intern(e, spec->cohort) : NULL;
	if (spec->cohort && !cohort)
		return -ENOMEM;
	if ((rc = groups_copy(e, &groups, spec->n_groups, spec->groups)) != 0)
		return rc;
	if (spec->namespace_selector && (rc = sel_copy(&sel, spec->namespace_selector)) != 0) {
		groups_free(&groups);
		return rc;
	}
	struct ecq *q = cq_record(e, spec->name);
	if (!q) {
		groups_free(&groups);
		sel_free(&sel);
		return -ENOMEM;
	}
	groups_free(&q->groups);
	sel_free(&q->ns_selector);
	q->groups = groups;
	q->ns_selector = sel;
	q->has_ns_selector = spec->namespace_selector != NULL;
	q->cohort_name = cohort;
	q->queueing = spec->queueing;
	q->preemption = spec->preemption;
	q->when_can_borrow = spec->when_can_borrow;
	q->when_can_preempt = spec->when_can_preempt;
	q->prefer_preemption = (uint8_t) !!spec->prefer_preemption_over_borrowing;
	q->stop = spec->stop_policy;
	q->fair_weight = spec->has_fair_weight ? spec->fair_weight : 1;
	q->usage_based_afs = (uint8_t) !!spec->usage_based_afs;
	eng_afs_order(e, q);
	q->exists = 1;
	if (q->stop == ENG_STOP_HOLD_AND_DRAIN) {
		q->drain = 1;
		e->drain_pending = 1;
	}
	e->topology_dirty = 1;
	return 0;
}

void engine_remove_cq(struct engine *e, const char *name)
{
	eng_changed(e);
	struct ecq *q = name ? strmap_get(&e->cqs, name) : NULL;
	if (!q || !q->exists)
		return;
	/* The record keeps its queues and admitted list; they come back with the ClusterQueue. */
	groups_free(&q->groups);
	sel_free(&q->ns_selector);
	q->has_ns_selector = 0;
	q->cohort_name = NULL;
	q->exists = 0;
	q->stop = ENG_STOP_NONE;
	e->topology_dirty = 1;
}

int engine_set_local_queue(struct engine *e, const char *namespace_name, const char *name,
			   const char *cluster_queue, enum eng_stop_policy stop)
{
	eng_changed(e);
	if (!nonempty(namespace_name) || !nonempty(name) || !nonempty(cluster_queue) ||
	    (unsigned)stop > ENG_STOP_HOLD_AND_DRAIN)
		return -EINVAL;
	struct elq *lq = lq_record(e, namespace_name, name);
	struct ecq *cq = lq ? cq_record(e, cluster_queue) : NULL;
	if (!cq)
		return -ENOMEM;
	struct ecq *old_cq = lq->exists ? lq->cq : NULL;
	int was_routable = lq->exists && lq->stop == ENG_STOP_NONE;
	int was_draining = lq->exists && lq->stop == ENG_STOP_HOLD_AND_DRAIN;
	lq->exists = 1;
	lq->cq = cq;
	lq->stop = stop;
	if (stop == ENG_STOP_HOLD_AND_DRAIN && !was_draining) {
		lq->drain = 1;
		e->drain_pending = 1;
	}
	if (old_cq == cq && was_routable == (stop == ENG_STOP_NONE))
		return 0;
	return reroute_lq(e, lq, was_routable ? old_cq : NULL);
}

void engine_remove_local_queue(struct engine *e, const char *namespace_name, const char *name)
{
	eng_changed(e);
	char key[640];
	if (!namespace_name || !name ||
	    snprintf(key, sizeof(key), "%s/%s", namespace_name, name) >= (int)sizeof(key))
		return;
	struct elq *lq = strmap_get(&e->lqs, key);
	if (!lq || !lq->exists)
		return;
	struct ecq *old_cq = lq->stop == ENG_STOP_NONE ? lq->cq : NULL;
	lq->exists = 0;
	lq->cq = NULL;
	lq->stop = ENG_STOP_NONE;
	/* Moving to the held list can't be undone on -ENOMEM; the workloads stay unplaced until
	 * they are replaced. */
	(void)reroute_lq(e, lq, old_cq);
}

int engine_set_namespace(struct engine *e, const char *name, size_t n_labels,
			 const struct quota_kv *labels)
{
	eng_changed(e);
	if (!nonempty(name) || (n_labels && !labels))
		return -EINVAL;
	size_t size = n_labels * sizeof(struct quota_kv);
	for (size_t i = 0; i < n_labels; i++) {
		if (!labels[i].key || !labels[i].value)
			return -EINVAL;
		size += strlen(labels[i].key) + strlen(labels[i].value) + 2;
	}
	struct ens *ns = ns_record(e, name);
	struct quota_kv *copy = malloc(size ? size : 1);
	if (!ns || !copy) {
		free(copy);
		return -ENOMEM;
	}
	char *s = (char *)(copy + n_labels);
	for (size_t i = 0; i < n_labels; i++) {
		size_t k = strlen(labels[i].key) + 1, v = strlen(labels[i].value) + 1;
		copy[i].key = memcpy(s, labels[i].key, k);
		copy[i].value = memcpy(s + k, labels[i].value, v);
		s += k + v;
	}
	free(ns->labels);
	ns->labels = copy;
	ns->n_labels = n_labels;
	ns->exists = 1;
	mark_all_requeue(e);
	return 0;
}

void engine_remove_namespace(struct engine *e, const char *name)
{
	eng_changed(e);
	struct ens *ns = name ? strmap_get(&e->namespaces, name) : NULL;
	if (!ns || !ns->exists)
		return;
	free(ns->labels);
	ns->labels = NULL;
	ns->n_labels = 0;
	ns->exists = 0;
	mark_all_requeue(e);
}

/* --- workload API ------------------------------------------------------------------------- */

int engine_add_workload(struct engine *e, const struct eng_workload_spec *spec)
{
	eng_changed(e);
	e->input_epoch++;
	struct wspec *ws;
	int rc = validate_workload(spec);
	if (rc)
		return rc;
	struct elq *lq = lq_record(e, spec->namespace_name, spec->queue);
	if (lq && !lq->nsrec)
		lq->nsrec = ns_record(e, spec->namespace_name);
	if (!lq || !lq->nsrec)
		return -ENOMEM;
	const char *ns = lq->ns, *queue = lq->name;
	struct ens *nsrec = lq->nsrec;
	struct ewl *w = strmap_get(&e->workloads, spec->key);
	if ((rc = spec_copy(e, spec, &ws)) != 0)
		return rc;
	if (!(ws = spec_intern(e, ws)))
		return -ENOMEM;
	if (!w) {
		size_t klen = strlen(spec->key) + 1;
		if (!(w = calloc(1, sizeof(*w) + klen))) {
			spec_free(e, &(struct ewl){ .spec = ws });
			return -ENOMEM;
		}
		memcpy(w->key, spec->key, klen);
		if (strmap_put(&e->workloads, w->key, w, NULL) != 0) {
			free(w);
			spec_free(e, &(struct ewl){ .spec = ws });
			return -ENOMEM;
		}
		w->uid = e->next_uid++;
	} else {
		if (!w->admitted)
			unplace(e, w, 1);
		spec_free(e, w);
	}
	w->spec = ws;
	w->ns = ns;
	w->nsrec = nsrec;
	w->queue = queue;
	w->lq = lq;
	w->queue_time = spec->queue_time;
	w->tag = spec->tag;
	if (w->admitted) {
		/* A replaced admitted workload keeps its admission (and its place by priority). */
		if (w->priority != spec->priority) {
			struct ecq *cq = w->adm_cq;
			unlink_admitted(w);
			w->priority = spec->priority;
			link_admitted(cq, w);
		}
		return 0;
	}
	w->priority = spec->priority;
	return place(e, w);
}

int engine_reserve(struct engine *e, size_t n_workloads)
{
	return strmap_reserve(&e->workloads, n_workloads);
}

static int validate_assignment(const struct ewl *w, const struct eng_assignment *a)
{
	if (!a || !nonempty(a->cluster_queue) || a->n_podsets < 1 || a->n_podsets > ENG_MAX_PODSETS)
		return -EINVAL;
	for (size_t i = 0; i < a->n_podsets; i++) {
		const struct eng_podset_assignment *ps = &a->podsets[i];
		if (ps->count < 0 || ps->n > QUOTA_MAX_RESOURCES)
			return -EINVAL;
		for (size_t k = 0; k < ps->n; k++)
			if (!nonempty(ps->resources[k]) || !nonempty(ps->flavors[k]) ||
			    ps->usage[k] < 0)
				return -EINVAL;
	}
	(void)w;
	return 0;
}

int engine_set_admitted(struct engine *e, const char *key, const struct eng_assignment *a)
{
	eng_changed(e);
	struct ewl *w = key ? strmap_get(&e->workloads, key) : NULL;
	if (!w)
		return -ENOENT;
	int rc = validate_assignment(w, a);
	if (rc)
		return rc;
	uint32_t n_items = 0;
	for (size_t i = 0; i < a->n_podsets; i++)
		n_items += (uint32_t)a->podsets[i].n;
	struct eadm *adm = adm_new((uint32_t)a->n_podsets, n_items);
	struct ecq *cq = adm ? cq_record(e, a->cluster_queue) : NULL;
	if (!cq) {
		free(adm);
		return -ENOMEM;
	}
	uint32_t k = 0;
	for (size_t i = 0; i < a->n_podsets; i++) {
		const struct eng_podset_assignment *ps = &a->podsets[i];
		const char *name = ps->name ?
					   ps->name :
					   (i < w->spec->n_podsets ? w->spec->ps[i].name : "main");
		adm->count[i] = ps->count;
		if (!(adm->podset[i] = eng_intern(e, name)))
			goto nomem;
		for (size_t r = 0; r < ps->n; r++, k++) {
			struct eitem *it = &adm->items[k];
			it->resource = eng_intern(e, ps->resources[r]);
			it->flavor = eng_intern(e, ps->flavors[r]);
			if (!it->resource || !it->flavor)
				goto nomem;
			it->amount = ps->usage[r];
			it->slot = -1;
			it->podset = (uint16_t)i;
			it->preempt = 0;
		}
	}
	if (w->admitted)
		release(e, w);
	else
		unplace(e, w, 1);
	w->adm = adm;
	w->adm_cycle = 0;
	link_admitted(cq, w);
	w->admitted = 1;
	w->adm_given_time = a->quota_reserved_time > 0 ? a->quota_reserved_time : 0;
	if (w->adm_given_time) {
		w->adm_time = w->adm_given_time;
		if (w->adm_given_time > e->adm_clock)
			e->adm_clock = w->adm_given_time;
	} else {
		w->adm_time = ++e->adm_clock;
	}
	w->status_hash = 0;
	if (cq_charged(e, cq)) {
		eng_resolve_slots(cq, adm->items, adm->n_items);
		int missing = 0;
		for (uint32_t i = 0; i < adm->n_items; i++)
			missing |= adm->items[i].slot < 0;
		if (missing)
			e->topology_dirty = 1; /* the build adds the pairs the spec lacks */
		else
			eng_charge(cq, adm, +1);
	}
	if (cq->exists && cq->stop == ENG_STOP_HOLD_AND_DRAIN) {
		cq->drain = 1;
		e->drain_pending = 1;
	}
	if (w->lq->exists && w->lq->stop == ENG_STOP_HOLD_AND_DRAIN) {
		w->lq->drain = 1;
		e->drain_pending = 1;
	}
	return 0;
nomem:
	free(adm);
	return -ENOMEM;
}

int engine_evict(struct engine *e, const char *key)
{
	eng_changed(e);
	struct ewl *w = key ? strmap_get(&e->workloads, key) : NULL;
	if (!w)
		return -ENOENT;
	if (!w->admitted)
		return 0;
	if (!w->evicting)
		e->input_epoch++; /* not a victim going: quota freed from outside the cycles */
	release(e, w);
	w->status_hash = 0;
	return place(e, w);
}

void engine_remove_workload(struct engine *e, const char *key)
{
	eng_changed(e);
	e->input_epoch++;
	struct ewl *w = key ? strmap_remove(&e->workloads, key) : NULL;
	if (!w)
		return;
	if (w->admitted)
		release(e, w);
	else
		unplace(e, w, 1);
	spec_free(e, w);
	free(w);
}

/* --- the cycle ---------------------------------------------------------------------------- */

struct cycle {
	struct engine *e;
	eng_decision_fn fn;
	void *arg;
	int actions;
};

/* A fast 64-bit hash of a status (reason, message), only to tell whether it changed. */
static uint64_t status_hash(const char *reason, const char *msg)
{
	uint64_t h = fnv_str(FNV_OFFSET, reason);
	size_t n = strlen(msg), i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t word;
		memcpy(&word, msg + i, 8);
		h = mix64(h, word);
	}
	h = fnv(h, msg + i, n - i);
	h ^= (uint64_t)n;
	return h + (h == 0);
}

int eng_why_waits(const char *why)
{
	static const char *const waits[] = { ENG_WHY_BORROWING_LIMIT, ENG_WHY_WAITING_FOR_QUOTA,
					     ENG_WHY_NO_NODE_LAYOUT, ENG_WHY_PREEMPTION_PENDING };
	for (size_t i = 0; why && i < sizeof(waits) / sizeof(waits[0]); i++)
		if (!strcmp(why, waits[i]))
			return 1;
	return 0;
}

static void emit_pending(struct cycle *cx, struct ewl *w, const char *reason, const char *msg)
{
	uint64_t h = status_hash(reason, msg);
	if (h == w->status_hash)
		return;
	w->status_hash = h;
	struct eng_decision d = { ENG_PENDING, w->key, NULL, NULL, reason, msg, w->tag };
	cx->fn(cx->arg, &d);
}

static void emit_evict(struct cycle *cx, struct ewl *w, const char *reason, const char *msg)
{
	w->evicting = 1;
	struct eng_decision d = { ENG_PREEMPT, w->key, NULL, NULL, reason, msg, w->tag };
	cx->fn(cx->arg, &d);
	cx->actions++;
}

static void run_drains(struct cycle *cx)
{
	struct engine *e = cx->e;
	e->drain_pending = 0;
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		struct ecq *q = e->all_cqs[i];
		if (!q->drain)
			continue;
		q->drain = 0;
		if (!q->exists || q->stop != ENG_STOP_HOLD_AND_DRAIN)
			continue;
		for (struct ewl *w = q->adm_head; w; w = w->adm_next)
			if (!w->evicting)
				emit_evict(cx, w, "ClusterQueueStopped",
					   "The ClusterQueue is stopped");
	}
	for (uint32_t i = 0; i < e->n_all_lqs; i++) {
		struct elq *lq = e->all_lqs[i];
		if (!lq->drain)
			continue;
		lq->drain = 0;
		if (!lq->exists || lq->stop != ENG_STOP_HOLD_AND_DRAIN)
			continue;
		for (uint32_t k = 0; k < e->n_all_cqs; k++)
			for (struct ewl *w = e->all_cqs[k]->adm_head; w; w = w->adm_next)
				if (w->lq == lq && !w->evicting)
					emit_evict(cx, w, "LocalQueueStopped",
						   "The LocalQueue is stopped");
	}
}

static void run_held(struct cycle *cx)
{
	struct engine *e = cx->e;
	char msg[600];
	for (uint32_t i = 0; i < e->n_dirty_lqs; i++) {
		struct elq *lq = e->dirty_lqs[i];
		lq->dirty = 0;
		lq->listed = 0;
		const char *why = lq->exists ? ENG_WHY_SUSPENDED : ENG_WHY_MISCONFIGURED;
		if (!lq->exists)
			snprintf(msg, sizeof(msg), "LocalQueue %s doesn't exist", lq->name);
		else
			snprintf(msg, sizeof(msg), "LocalQueue %s is stopped", lq->name);
		for (uint32_t k = 0; k < lq->held.n; k++)
			emit_pending(cx, lq->held.v[k], why, msg);
	}
	e->n_dirty_lqs = 0;
}

static void emit_inactive(struct cycle *cx, struct ecq *q)
{
	for (uint32_t i = 0; i < q->heap.n; i++)
		emit_pending(cx, q->heap.v[i], q->pending_why, q->pending_msg);
	for (uint32_t i = 0; i < q->parked.n; i++)
		emit_pending(cx, q->parked.v[i], q->pending_why, q->pending_msg);
	for (uint32_t i = 0; i < q->waiting.n; i++)
		emit_pending(cx, q->waiting.v[i], q->pending_why, q->pending_msg);
}

/* Gives parked workloads another look, those that could fit now (see struct need). */
/* Moves the parked workloads that pick() selects back to the heap. */
static int requeue_parked_if(struct ecq *q, int (*pick)(struct ecq *, struct ewl *))
{
	if (q->parked.n == 0)
		return 0;
	int rc = heap_reserve(&q->heap, q->heap.n + q->parked.n);
	if (rc)
		return rc;
	uint32_t keep = 0, before = q->heap.n;
	for (uint32_t i = 0; i < q->parked.n; i++) {
		struct ewl *w = q->parked.v[i];
		if (!pick(q, w)) {
			w->pos = keep;
			q->parked.v[keep++] = w;
			continue;
		}
		w->where = WL_HEAP;
		heap_place(&q->heap, q->heap.n++, w);
	}
	q->parked.n = keep;
	if (q->heap.n == before)
		return 0;
	eng_heap_rebuild(&q->heap);
	return 0;
}

/* Worth another look, and could fit with what is available now. Without the second test,
 * every parked workload whose need a release covered went through the heap only to be parked
 * again at once by the same test when it came up (process_tree): availability only falls
 * during a cycle, so a workload that can't fit now can't fit when its turn comes either. In a
 * deep queue that was most of a busy manager's engine time. */
static int worth_requeue(struct ecq *q, struct ewl *w)
{
	return worth_a_look(q, w) && could_fit_now(q, w);
}

/* Moves every queued workload of q that can't fit now to the parked list, in one pass over
 * the heap (the rest is heapified again). Once per ClusterQueue and cycle (process_tree), so
 * its cost stays linear in the queue. */
static int park_unfit(struct ecq *q)
{
	int rc = wvec_reserve(&q->parked, q->parked.n + q->heap.n);
	if (rc)
		return rc;
	uint32_t keep = 0, before = q->heap.n;
	for (uint32_t i = 0; i < q->heap.n; i++) {
		struct ewl *w = q->heap.v[i];
		if (could_fit_now(q, w)) {
			heap_place(&q->heap, keep++, w);
			continue;
		}
		(void)wvec_push(&q->parked, w); /* capacity reserved above */
		w->where = WL_PARKED;
	}
	q->heap.n = keep;
	if (keep != before)
		eng_heap_rebuild(&q->heap);
	return 0;
}

static int requeue_parked(struct ecq *q)
{
	return requeue_parked_if(q, worth_requeue);
}

static int lacks_layout(struct ecq *q, struct ewl *w)
{
	(void)q;
	return w->no_layout;
}

/* Holds a waiting preemptor's planned usage for the rest of its tree's turn, so nobody takes
 * the quota its victims free (Kueue adds the preemptor's usage to the cycle's snapshot). */
static int phantom_add(struct engine *e, struct ecq *cq, struct eadm *plan)
{
	if (GROW(e->phantoms, e->cap_phantoms, e->n_phantoms + 1) != 0)
		return -ENOMEM;
	eng_resolve_slots(cq, plan->items, plan->n_items);
	eng_charge(cq, plan, +1);
	eng_changed(e);
	e->phantoms[e->n_phantoms].cq = cq;
	e->phantoms[e->n_phantoms++].plan = plan;
	return 0;
}

/* Drops one hold before the end of the turn (its owner is admitted or queues again). */
static void phantom_drop(struct engine *e, uint32_t i)
{
	if (!e->phantoms[i].plan)
		return;
	eng_charge(e->phantoms[i].cq, e->phantoms[i].plan, -1);
	eng_changed(e);
	e->phantoms[i].plan = NULL;
}

static void phantoms_release(struct engine *e)
{
	for (uint32_t i = 0; i < e->n_phantoms; i++)
		phantom_drop(e, i);
	e->n_phantoms = 0;
}

/* Admits w with admission a (taken over). */
static void admit_adm(struct cycle *cx, struct ecq *cq, struct ewl *w, struct eadm *a)
{
	struct engine *e = cx->e;
	unplace(e, w, 0);
	w->adm = a;
	w->adm_cycle = e->cycle;
	link_admitted(cq, w);
	w->admitted = 1;
	w->adm_time = ++e->adm_clock;
	w->adm_given_time = 0;
	w->status_hash = 0;
	eng_charge(cq, a, +1);
	/* Within quota plus borrowing: the caller found that it fits now (eng_fits_now), so no
	 * slot it is charged on is over what the ClusterQueue may use, borrowing included. */
	for (uint32_t i = 0; i < a->n_items; i++)
		MUSTER_ASSERT(
			a->items[i].slot >= 0 &&
			(a->items[i].amount == 0 || q_available(&cq->node, a->items[i].slot) >= 0));
	eng_changed(e);
	eng_afs_admitted(e, cq, w, a);
	struct eng_decision d = {
		ENG_ADMIT, w->key, materialize(e, cq, w), NULL, NULL, NULL, w->tag
	};
	cx->fn(cx->arg, &d);
	cx->actions++;
}

static const char *cq_path(const struct ecq *q, char *buf, size_t size)
{
	/* "/root/.../cq", as Kueue's buildCQPath. */
	const char *parts[64];
	size_t n = 0, len = 0;
	parts[n++] = q->name;
	for (const struct ecohort *c = q->parent; c && n < 64; c = c->parent)
		parts[n++] = c->name;
	buf[0] = '\0';
	while (n-- > 0 && len < size)
		len += (size_t)snprintf(buf + len, size - len, "/%s", parts[n]);
	return buf;
}

static const char *reason_words(const char *reason)
{
	if (!strcmp(reason, "InClusterQueue"))
		return "prioritization in the ClusterQueue";
	if (!strcmp(reason, "InCohortReclaimWhileBorrowing"))
		return "reclamation within the cohort while borrowing";
	if (!strcmp(reason, "InCohortFairSharing"))
		return "Fair Sharing within the cohort";
	return "reclamation within the cohort";
}

static int start_preemption(struct cycle *cx, struct ecq *cq, struct ewl *w, struct eval *ev)
{
	struct engine *e = cx->e;
	struct ewait *wt = wait_new(w, ev);
	if (!wt)
		return -ENOMEM;
	if (wvec_reserve(&cq->waiting, cq->waiting.n + 1) != 0) {
		free(wt->plan);
		free(wt);
		return -ENOMEM;
	}
	unplace(e, w, 0);
	(void)wvec_push(&cq->waiting, w); /* capacity reserved above */
	w->where = WL_WAITING;
	w->cq = cq;
	w->wait = wt;
	eng_changed(e); /* its victims are claimed */
	char from[512], to[512], msg[1400];
	for (uint32_t i = 0; i < ev->n_targets; i++) {
		struct ewl *v = ev->targets[i].wl;
		v->claimed = w->uid;
		if (v->adm_cq != cq) {
			if (v->cross_victim_epoch != e->input_epoch)
				v->cross_victim_count = 0;
			v->cross_victim_epoch = e->input_epoch;
			v->cross_victim_count++;
		}
		if (v->evicting)
			continue; /* already going: Kueue counts it without a second eviction */
		v->evicting = 1;
		snprintf(msg, sizeof(msg),
			 "Preempted to accommodate a workload (%s) due to %s; preemptor path: %s; "
			 "preemptee path: %s",
			 w->key, reason_words(ev->targets[i].reason),
			 cq_path(cq, from, sizeof(from)), cq_path(v->adm_cq, to, sizeof(to)));
		struct eng_decision d = { ENG_PREEMPT,           v->key, NULL,  w->key,
					  ev->targets[i].reason, msg,    v->tag };
		cx->fn(cx->arg, &d);
		cx->actions++;
	}
	int rc = phantom_add(e, cq, wt->plan);
	if (rc)
		return rc;
	size_t len = strlen(ev->msg);
	snprintf(ev->msg + len, sizeof(ev->msg) - len, ". Pending the preemption of %u workload(s)",
		 ev->n_targets);
	emit_pending(cx, w, ENG_WHY_PREEMPTION_PENDING, ev->msg);
	return 0;
}

static int eval_copy(struct eval *dst, const struct eval *src)
{
	if (GROW(dst->targets, dst->cap_targets, src->n_targets) != 0)
		return -ENOMEM;
	dst->kind = src->kind;
	dst->mode = src->mode;
	dst->borrow = src->borrow;
	dst->cacheable = src->cacheable;
	dst->cause = src->cause;
	dst->why = src->why;
	dst->n_podsets = src->n_podsets;
	memcpy(dst->count, src->count, sizeof(dst->count));
	dst->n_items = src->n_items;
	memcpy(dst->items, src->items, src->n_items * sizeof(src->items[0]));
	if (src->n_targets)
		memcpy(dst->targets, src->targets, src->n_targets * sizeof(src->targets[0]));
	dst->n_targets = src->n_targets;
	memcpy(dst->msg, src->msg, strlen(src->msg) + 1);
	return 0;
}

/* Kueue's PodSetReducer: the largest counts between count and minCount that fit (or fit by
 * preempting; with quick, that fit without), by binary search over the total reduction. 1
 * found (in e->ev_best), 0 not. Sets *victimless when a count chose a flavor to preempt in
 * and found no victims there. */
static int partial_search(struct engine *e, struct ecq *cq, const struct ewl *w, int quick,
			  int *victimless)
{
	const struct wspec *s = w->spec;
	int64_t full[ENG_MAX_PODSETS], delta[ENG_MAX_PODSETS], counts[ENG_MAX_PODSETS];
	int64_t total = 0, last_good = -1;
	struct assign_opts opts = { quick, 0, 0 };
	for (uint32_t i = 0; i < s->n_podsets; i++) {
		full[i] = s->ps[i].count;
		delta[i] = s->ps[i].min_count > 0 ? s->ps[i].count - s->ps[i].min_count : 0;
		total += delta[i];
	}
	if (total == 0)
		return 0;
	int64_t lo = 0, hi = total + 1;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		for (uint32_t i = 0; i < s->n_podsets; i++)
			counts[i] = full[i] - delta[i] * mid / total;
		struct eval *ev = &e->ev_try;
		int rc = eng_assign(e, cq, w, counts, &opts, ev);
		if (rc)
			return rc;
		int ok = ev->mode == PM_FIT;
		if (!ok && ev->mode == PM_PREEMPT && !quick) {
			rc = eng_get_targets(e, cq, w, ev);
			if (rc < 0)
				return rc;
			ok = rc > 0;
			*victimless |= !ok;
		} else {
			ev->n_targets = 0;
		}
		if (ok) {
			ev->kind = ev->mode == PM_FIT ? EV_FIT : EV_PREEMPT;
			if ((rc = eval_copy(&e->ev_best, ev)) != 0)
				return rc;
			last_good = mid;
			hi = mid;
		} else {
			lo = mid + 1;
		}
	}
	return lo == last_good;
}

static const struct shape_fail *shape_lookup(struct engine *e, const struct ecq *q,
					     const struct ewl *w)
{
	for (uint32_t i = 0; i < ENG_SHAPE_CACHE; i++) {
		const struct shape_fail *sf = &q->shapes[i];
		if (sf->cycle == e->cycle && sf->wl && sf->priority == w->priority &&
		    spec_equal(sf->spec, w->spec))
			return sf;
	}
	return NULL;
}

static void shape_remember(struct engine *e, struct ecq *q, const struct ewl *w,
			   const struct eval *ev)
{
	size_t n = strlen(ev->msg) + 1;
	if (e->arena_used + n > sizeof(e->arena))
		return;
	char *copy = memcpy(e->arena + e->arena_used, ev->msg, n);
	e->arena_used += n;
	q->shapes[q->shape_next++ % ENG_SHAPE_CACHE] =
		(struct shape_fail){ w, w->spec, w->priority, e->cycle, copy, ev->why, ev->needs };
}

/*
 * The exact shape cache. What an evaluation found for a workload that doesn't fit is reused for
 * a later one of the same ClusterQueue, podSets and priority (and queue time, where the
 * ClusterQueue's preemption compares it) while eval_epoch stands: nothing the evaluation read
 * has changed, so evaluating again would find the same, message and all. About half the
 * workloads of a large backlog share a shape with one before them. Not with fair sharing,
 * whose tournament charges and ranks by more than this key, nor for a waiting preemptor.
 */
static uint32_t seen_slot(const struct ecq *cq, const struct ewl *w)
{
	uint64_t h = mix64(mix64(w->spec->shape, (uint64_t)(uintptr_t)cq), (uint32_t)w->priority);
	return (uint32_t)(h >> 32) & (ENG_SEEN_SLOTS - 1);
}

static int seen_usable(const struct engine *e, const struct ewl *w)
{
	return !e->fs.enabled && !e->afs_on && !w->wait;
}

static const struct shape_seen *shape_seen_lookup(const struct engine *e, const struct ecq *cq,
						  const struct ewl *w)
{
	if (!e->seen || !seen_usable(e, w))
		return NULL;
	const struct shape_seen *s = &e->seen[seen_slot(cq, w)];
	/* The epoch first: while it stands no workload was removed, so s->wl is alive. */
	if (s->epoch != e->eval_epoch || s->cq != cq || s->wl->priority != w->priority ||
	    !spec_equal(s->wl->spec, w->spec))
		return NULL;
	if (cq->preemption.within_cluster_queue == ENG_WITHIN_LOWER_OR_NEWER_EQUAL &&
	    s->wl->queue_time != w->queue_time)
		return NULL;
	return s;
}

/* A cache: without memory for it, nothing is kept. */
static void shape_seen_remember(struct engine *e, const struct ecq *cq, const struct ewl *w,
				const struct eval *ev)
{
	if (!seen_usable(e, w) ||
	    (!e->seen && !(e->seen = calloc(ENG_SEEN_SLOTS, sizeof(*e->seen)))))
		return;
	if (e->seen_text_epoch != e->eval_epoch) { /* the older entries are void: reuse */
		e->seen_used = 0;
		e->seen_text_epoch = e->eval_epoch;
	}
	size_t n = strlen(ev->msg) + 1;
	if (n > e->seen_cap - e->seen_used) {
		size_t need = e->seen_used + n < 64 * 1024 ? 64 * 1024 : e->seen_used + n;
		size_t cap = grow_capacity(e->seen_cap, need, 1, ENG_SEEN_TEXT_MAX);
		if (cap == 0 || grow_resize(&e->seen_text, cap, 1) != 0)
			return;
		e->seen_cap = cap;
	}
	memcpy(e->seen_text + e->seen_used, ev->msg, n);
	e->seen[seen_slot(cq, w)] =
		(struct shape_seen){ cq, w, e->eval_epoch, ev->why, e->seen_used, ev->needs };
	e->seen_used += n;
}

/* Decides what a pending workload gets now: Kueue's nominate + getInitialAssignments. */
static int evaluate(struct engine *e, struct ecq *cq, struct ewl *w, struct eval *ev)
{
	ev->n_targets = 0;
	ev->cacheable = 0;
	if (!cq->has_ns_selector ||
	    !labels_selector_matches(&cq->ns_selector.sel, ns_label, w->nsrec)) {
		ev->kind = EV_INADMISSIBLE;
		ev->why = ENG_WHY_MISCONFIGURED;
		snprintf(ev->msg, sizeof(ev->msg),
			 "workload namespace doesn't match ClusterQueue selector");
		return 0;
	}
	ev->needs.n = 0;
	const struct shape_fail *cached = shape_lookup(e, cq, w);
	if (cached) {
		ev->kind = EV_PENDING;
		ev->why = cached->why;
		ev->borrow = 0;
		ev->needs = cached->needs;
		memcpy(ev->msg, cached->message, strlen(cached->message) + 1);
		return 0;
	}
	const struct shape_seen *seen = shape_seen_lookup(e, cq, w);
	if (seen) {
		const char *msg = e->seen_text + seen->msg_off;
		ev->kind = EV_PENDING;
		ev->why = seen->why;
		ev->borrow = 0;
		ev->needs = seen->needs;
		ev->cacheable = 1; /* as the evaluation it stands for */
		memcpy(ev->msg, msg, strlen(msg) + 1);
		return 0;
	}
	int64_t counts[ENG_MAX_PODSETS];
	int partial = 0;
	for (uint32_t i = 0; i < w->spec->n_podsets; i++) {
		counts[i] = w->spec->ps[i].count;
		partial |= w->spec->ps[i].min_count > 0 && w->spec->ps[i].min_count < counts[i];
	}
	/* With minCount a smaller count may fit: the full count's needs are no bound. */
	struct assign_opts opts = { 0, 1, !partial };
	int rc = eng_assign(e, cq, w, counts, &opts, ev);
	if (rc)
		return rc;
	if (ev->mode == PM_FIT) {
		ev->kind = EV_FIT;
		return 0;
	}
	if (ev->mode == PM_PREEMPT) {
		rc = eng_get_targets(e, cq, w, ev);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			ev->kind = EV_PREEMPT;
			return 0;
		}
	}
	int victimless = ev->mode == PM_PREEMPT;
	rc = partial_search(e, cq, w, 0, &victimless);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		if ((rc = eval_copy(ev, &e->ev_best)) != 0)
			return rc;
		/* The search runs without messages; a preemptor's status still wants one. */
		if (ev->kind == EV_PREEMPT) {
			struct eval *tmp = &e->ev_try;
			struct assign_opts msg_only = { 0, 1, 0 };
			rc = eng_assign(e, cq, w, ev->count, &msg_only, tmp);
			if (rc)
				return rc;
			memcpy(ev->msg, tmp->msg, sizeof(ev->msg));
			ev->cause = tmp->cause;
		}
		return 0;
	}
	/* A flavor it would preempt in (at the full count or a smaller one) has no victims after
	 * all: the per-resource simulation that chose it (Kueue's SimulatePreemption) sees one
	 * resource, the search all of them. Kueue's next attempt resumes the flavor scan past it
	 * (LastAssignment); this one scans on now, so a later flavor that fits (with minCount, at
	 * the largest count that does) is taken instead of waiting for nothing. */
	if (victimless) {
		struct assign_opts scan_on = { 1, 0, 0 };
		struct eval *tmp = &e->ev_try;
		if ((rc = eng_assign(e, cq, w, counts, &scan_on, tmp)) != 0)
			return rc;
		if (tmp->mode != PM_FIT && partial) {
			if ((rc = partial_search(e, cq, w, 1, &victimless)) < 0)
				return rc;
			tmp = rc > 0 ? &e->ev_best : tmp;
		}
		if (tmp->mode == PM_FIT) {
			tmp->kind = EV_FIT;
			tmp->cacheable = 0;
			tmp->n_targets = 0;
			return eval_copy(ev, tmp);
		}
	}
	ev->kind = EV_PENDING;
	ev->why = eng_cause_why(ev->cause);
	ev->n_targets = 0;
	ev->cacheable = 1;
	shape_seen_remember(e, cq, w, ev);
	return 0;
}

static int mentry_before(const struct mentry *a, const struct mentry *b)
{
	if (a->borrow != b->borrow)
		return a->borrow < b->borrow;
	return wl_before(a->wl, b->wl);
}

static void merge_push(struct engine *e, struct mentry m)
{
	/* Capacity: one entry per ClusterQueue of the tree, reserved by process_tree. */
	MUSTER_ASSERT(e->n_merge < e->cap_merge);
	uint32_t i = e->n_merge++;
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!mentry_before(&m, &e->merge[parent]))
			break;
		e->merge[i] = e->merge[parent];
		i = parent;
	}
	e->merge[i] = m;
}

static struct mentry merge_pop(struct engine *e)
{
	struct mentry top = e->merge[0], last = e->merge[--e->n_merge];
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= e->n_merge)
			break;
		if (c + 1 < e->n_merge && mentry_before(&e->merge[c + 1], &e->merge[c]))
			c++;
		if (!mentry_before(&e->merge[c], &last))
			break;
		e->merge[i] = e->merge[c];
		i = c;
	}
	if (e->n_merge)
		e->merge[i] = last;
	return top;
}

/* A StrictFIFO queue is held by a waiting preemptor that comes before its head. */
/* Whether one of the targets is a victim another waiting preemptor counts on. */
static int overlaps_claimed(const struct ewl *w, const struct eval *ev)
{
	for (uint32_t i = 0; i < ev->n_targets; i++) {
		uint64_t by = ev->targets[i].wl->claimed;
		if (by && by != w->uid)
			return 1;
	}
	return 0;
}

static int strict_blocked(const struct ecq *q, const struct ewl *head)
{
	for (uint32_t i = 0; i < q->waiting.n; i++)
		if (wl_before(q->waiting.v[i], head))
			return 1;
	return 0;
}

/* Offers q's head to its tree's turn: to the merge by Kueue's order, or with fair sharing as
 * a tournament candidate. 0 or -errno. */
static int push_next(struct engine *e, struct ecq *q)
{
	if (q->heap.n == 0)
		return 0;
	struct ewl *head = q->heap.v[0];
	if (q->queueing == ENG_STRICT_FIFO && strict_blocked(q, head))
		return 0;
	if (e->fs_turn)
		return eng_fs_push(e, q, head, shape_lookup(e, q, head) != NULL);
	/* Optimistic key: no borrowing. A worse key found when it is popped re-queues it. */
	merge_push(e, (struct mentry){ q, head, 0, 0 });
	return 0;
}

/* The next head of the turn: the merge's first, or the tournament's winner. 0: none left. */
static int next_head(struct engine *e, struct etree *t, struct mentry *m)
{
	if (!e->fs_turn) {
		if (!e->n_merge)
			return 0;
		*m = merge_pop(e);
		return 1;
	}
	int i = eng_fs_pick(e, t);
	if (i < 0)
		return 0;
	*m = eng_fs_take(e, i);
	return 1;
}

static int cmp_wl(const void *a, const void *b)
{
	const struct ewl *x = *(struct ewl *const *)a, *y = *(struct ewl *const *)b;
	return wl_before(x, y) ? -1 : wl_before(y, x) ? 1 : 0;
}

/* Preemptors whose victims are going: admit those that fit now, hold quota for the others. */
static int handle_waiting(struct cycle *cx, struct etree *t)
{
	struct engine *e = cx->e;
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->n_cqs; i++)
		if (t->cqs[i]->active)
			n += t->cqs[i]->waiting.n;
	if (n == 0)
		return 0;
	int grown;
	grown = GROW(e->scratch, e->cap_scratch, n);
	if (grown)
		return grown;
	n = 0;
	for (uint32_t i = 0; i < t->n_cqs; i++)
		if (t->cqs[i]->active)
			for (uint32_t k = 0; k < t->cqs[i]->waiting.n; k++)
				e->scratch[n++] = t->cqs[i]->waiting.v[k];
	qsort(e->scratch, n, sizeof(*e->scratch), cmp_wl);
	/* Every preemptor holds its quota before any of them is looked at: one must not take what
	 * another is waiting for. */
	uint32_t first = e->n_phantoms;
	for (uint32_t i = 0; i < n; i++) {
		int rc = phantom_add(e, e->scratch[i]->cq, e->scratch[i]->wait->plan);
		if (rc)
			return rc;
	}
	/* A preemptor that stops waiting without being admitted frees what it held, which the
	 * ones looked at before it may need: look again until nothing changes. */
	int released = 0, again;
	do {
		again = 0;
		for (uint32_t i = 0; i < n; i++) {
			struct ewl *p = e->scratch[i];
			if (!p)
				continue; /* done in an earlier pass */
			struct ecq *cq = p->cq;
			struct eadm *plan = p->wait->plan;
			int rc;
			phantom_drop(e, first + i);
			/* It is admitted with what it preempted for, as Kueue's next assignment for
			 * it would find the same flavors once its victims are gone. */
			if (eng_fits_now(e, cq, plan->items, plan->n_items) &&
			    has_layout(e, cq, p, plan, e->ev_try.msg, sizeof(e->ev_try.msg))) {
				struct eadm *a = adm_new(plan->n_podsets, plan->n_items);
				if (!a)
					return -ENOMEM;
				memcpy(a->items, plan->items,
				       plan->n_items * sizeof(plan->items[0]));
				memcpy(a->count, plan->count,
				       plan->n_podsets * sizeof(a->count[0]));
				memcpy(a->podset, plan->podset,
				       plan->n_podsets * sizeof(a->podset[0]));
				admit_adm(cx, cq, p, a);
				e->scratch[i] = NULL;
				continue;
			}
			if (victims_left(e, p) > 0 && !p->no_layout) {
				/* Hold it again, for the rest of this turn. */
				eng_charge(cq, plan, +1);
				eng_changed(e);
				e->phantoms[first + i].plan = plan;
				continue;
			}
			/* Its victims are gone and it still doesn't fit: it queues again (and may
			 * preempt again), as Kueue retries a preemptor whose targets vanished. */
			if ((rc = heap_reserve(&cq->heap, cq->heap.n + 1)) != 0)
				return rc;
			credit(cq, plan->items, plan->n_items);
			released = again = 1;
			unplace(e, p, 0);
			(void)heap_push(&cq->heap, p);
			p->where = WL_HEAP;
			p->cq = cq;
			cq->dirty = 1;
			e->scratch[i] = NULL;
		}
	} while (again);
	/* Parked workloads were last looked at with that quota held: look again now. */
	for (uint32_t i = 0; released && i < t->n_cqs; i++) {
		int rc = requeue_parked(t->cqs[i]);
		if (rc)
			return rc;
		t->cqs[i]->dirty = 1;
	}
	return 0;
}

static int process_tree(struct cycle *cx, struct etree *t)
{
	struct engine *e = cx->e;
	int rc = 0;
	t->dirty = 0;
	if (t->requeue) {
		for (uint32_t i = 0; i < t->n_cqs; i++) {
			if ((rc = requeue_parked(t->cqs[i])) != 0)
				return rc;
			t->cqs[i]->dirty = 1;
		}
		t->requeue = 0;
	}
	for (uint32_t i = 0; i < t->n_cqs; i++) {
		struct ecq *q = t->cqs[i];
		if (q->dirty && !q->active) {
			emit_inactive(cx, q);
			q->dirty = 0;
		}
	}
	if (t->cyclic)
		return 0;
	if ((rc = handle_waiting(cx, t)) != 0)
		goto out;
	if (GROW(e->merge, e->cap_merge, t->n_cqs) != 0) {
		rc = -ENOMEM;
		goto out;
	}
	e->n_merge = 0;
	/* Fair sharing orders a cohort's heads by tournament; a ClusterQueue alone has share 0. */
	e->fs_turn = e->fs.enabled && t->root;
	for (uint32_t i = 0; i < t->n_cqs; i++)
		if (t->cqs[i]->dirty && t->cqs[i]->active && (rc = push_next(e, t->cqs[i])) != 0)
			goto out;
	struct mentry m;
	while (next_head(e, t, &m)) {
		struct ecq *q = m.cq;
		struct ewl *w = m.wl;
		struct eval *ev = &e->ev_full;
		if (!could_fit_now(q, w)) {
			/* Still short: back to the parked list, unexamined (its message stands).
			 * The first time in a cycle, so does every queued workload that can't fit
			 * now either: availability only falls during a cycle, so each would be
			 * parked the same way when its turn came, one heap removal at a time. */
			if (q->swept_cycle != e->cycle) {
				q->swept_cycle = e->cycle;
				if ((rc = park_unfit(q)) != 0)
					goto out;
			} else {
				if ((rc = wvec_reserve(&q->parked, q->parked.n + 1)) != 0)
					goto out;
				heap_remove(&q->heap, w);
				(void)wvec_push(&q->parked, w);
				w->where = WL_PARKED;
			}
			if ((rc = push_next(e, q)) != 0)
				goto out;
			continue;
		}
		w->no_layout = 0;
		if ((rc = evaluate(e, q, w, ev)) != 0)
			goto out;
		/* Kueue's order puts workloads that borrow less first: if this one turned out to
		 * borrow more than assumed and another head now comes first, it waits its turn. */
		if (!e->fs_turn && (ev->kind == EV_FIT || ev->kind == EV_PREEMPT) &&
		    ev->borrow > m.borrow && m.tries < 4 && e->n_merge) {
			struct mentry again = { q, w, ev->borrow, m.tries + 1 };
			if (mentry_before(&e->merge[0], &again)) {
				merge_push(e, again);
				continue;
			}
		}
		/* Fair sharing: the tournament ranked it by the usage it was offered with; if the
		 * admission now charges something else, the ranking is taken again. */
		if (e->fs_turn && (ev->kind == EV_FIT || ev->kind == EV_PREEMPT) &&
		    !eng_fs_same_usage(q, ev) && q->fs_tries < 4 && e->n_merge) {
			q->fs_tries++;
			eng_fs_repush(e, q, w);
			continue;
		}
		if (ev->kind == EV_PREEMPT && overlaps_claimed(w, ev)) {
			/* Kueue skips a preemptor whose targets overlap those another one already
			 * took: it preempts nothing now and is looked at again once quota is
			 * released (its victims going, say). So the preemptors of one cohort
			 * share the victims the first one chose instead of each evicting a set of
			 * its own, and quota freed meanwhile (workloads finishing) may admit them
			 * without any eviction. */
			ev->kind = EV_PENDING;
			ev->why = ENG_WHY_WAITING_FOR_QUOTA;
			ev->cacheable = 0;
			ev->needs.n = 0;
			ev->n_targets = 0;
		}
		if (ev->kind == EV_FIT && !eng_fits_now(e, q, ev->items, ev->n_items)) {
			/* Kueue's last check before admitting; the assignment should never fail it.
			 */
			ev->kind = EV_PENDING;
			ev->why = ENG_WHY_WAITING_FOR_QUOTA;
			ev->cacheable = 0;
			snprintf(ev->msg, sizeof(ev->msg),
				 "Workload no longer fits after processing another workload");
		}
		struct eadm *a = NULL;
		if (ev->kind == EV_FIT) {
			if (!(a = adm_from_eval(w, ev))) {
				rc = -ENOMEM;
				goto out;
			}
			if (!has_layout(e, q, w, a, ev->msg, sizeof(ev->msg))) {
				/* Quota fits, nodes don't: it waits for capacity, not quota
				 * (engine_capacity_changed), with the placer's message. */
				free(a);
				a = NULL;
				ev->kind = EV_PENDING;
				ev->why = ENG_WHY_NO_NODE_LAYOUT;
				ev->cacheable = 0;
				ev->needs.n = 0;
			}
		}
		switch (ev->kind) {
		case EV_FIT:
			admit_adm(cx, q, w, a);
			rc = push_next(e, q);
			break;
		case EV_PREEMPT:
			if ((rc = start_preemption(cx, q, w, ev)) != 0)
				goto out;
			if (q->queueing == ENG_BEST_EFFORT_FIFO)
				rc = push_next(e, q);
			break;
		default:
			emit_pending(cx, w, ev->why, ev->msg);
			if (ev->cacheable)
				shape_remember(e, q, w, ev);
			/* A StrictFIFO head waiting for quota blocks its queue; one whose namespace
			 * isn't selected is set aside (Kueue: kueue#301, RequeueIfNotPresent). */
			if (q->queueing == ENG_STRICT_FIFO && ev->kind != EV_INADMISSIBLE)
				break;
			if ((rc = wvec_reserve(&q->parked, q->parked.n + 1)) != 0)
				goto out;
			heap_remove(&q->heap, w);
			(void)wvec_push(&q->parked, w); /* reserved */
			w->where = WL_PARKED;
			w->needs = ev->kind == EV_PENDING ? ev->needs : (struct needs){ 0 };
			rc = push_next(e, q);
			break;
		}
		if (rc)
			goto out;
	}
out:
	for (uint32_t i = 0; i < t->n_cqs; i++) {
		t->cqs[i]->dirty = 0;
		t->cqs[i]->fs_cand = -1;
	}
	e->fs_turn = 0;
	e->n_merge = 0;
	phantoms_release(e);
	return rc;
}

void engine_set_placer(struct engine *e, eng_place_fn fn, void *arg)
{
	eng_changed(e);
	e->place_fn = fn;
	e->place_arg = arg;
}

void engine_capacity_changed(struct engine *e)
{
	eng_changed(e);
	/* Walks every ClusterQueue's parked list, but only when something was refused since the
	 * last call, and at most once per call: the manager calls it once per batch of node
	 * and pod events. */
	if (!e->no_layout_seen)
		return;
	e->no_layout_seen = 0;
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		struct ecq *q = e->all_cqs[i];
		uint32_t before = q->heap.n;
		int blocked_head = q->heap.n && q->heap.v[0]->no_layout; /* a StrictFIFO head */
		if (requeue_parked_if(q, lacks_layout) != 0)
			e->no_layout_seen = 1; /* out of memory: try again next time */
		if (blocked_head || q->heap.n > before)
			mark_cq_dirty(e, q);
	}
}

/* What a slot's usage pushes up to its parent: the part beyond its local quota. */
static int64_t beyond_local(const struct qslot *q)
{
	int64_t over = sat_sub(q->usage, q->local);
	return over > 0 ? over : 0;
}

/* The engine's invariant, recomputed from scratch: a ClusterQueue's usage per (flavor,
 * resource) is the sum of what its admitted workloads are charged, and a cohort's is what its
 * children use beyond the quota they keep for themselves (what q_add_usage pushes up). */
/* The interned specs: each in its bucket, held by as many workloads as it counts, and no two
 * with the same content. */
static int check_specs(const struct engine *e, char *msg, size_t size)
{
	size_t n = 0, refs = 0;
	for (size_t i = 0; i < e->spec_buckets; i++)
		for (const struct wspec *s = e->specs[i]; s; s = s->next) {
			n++;
			refs += s->refs;
			if (s->refs == 0 ||
			    (size_t)(mix64(s->shape, 0) & (e->spec_buckets - 1)) != i) {
				snprintf(msg, size, "spec %p: %u references, in bucket %zu",
					 (const void *)s, s->refs, i);
				return -EPROTO;
			}
			for (const struct wspec *t = s->next; t; t = t->next)
				if (spec_same_content(s, t)) {
					snprintf(msg, size, "specs %p and %p are equal, not one",
						 (const void *)s, (const void *)t);
					return -EPROTO;
				}
		}
	if (n != e->n_specs || refs != e->workloads.len) {
		snprintf(msg, size,
			 "%zu specs counted, %zu listed; %zu references for %zu workloads",
			 e->n_specs, n, refs, e->workloads.len);
		return -EPROTO;
	}
	return 0;
}

/* Each pending workload is where its where and pos say, in the queues of its ClusterQueue (or
 * held by its LocalQueue), every heap in queue order, and each admitted workload is listed by
 * the ClusterQueue it is charged to. */
static int check_queues(const struct engine *e, char *msg, size_t size)
{
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		const struct ecq *q = e->all_cqs[i];
		int64_t bad = eng_heap_check(&q->heap);
		if (bad >= 0) {
			snprintf(msg, size,
				 "ClusterQueue %s: %s is out of place or order in its "
				 "heap",
				 q->name, q->heap.v[bad]->key);
			return -EPROTO;
		}
		const struct {
			const struct ewl *const *v;
			uint32_t n;
			uint8_t where;
		} lists[] = {
			{ (const struct ewl *const *)q->heap.v, q->heap.n, WL_HEAP },
			{ (const struct ewl *const *)q->parked.v, q->parked.n, WL_PARKED },
			{ (const struct ewl *const *)q->waiting.v, q->waiting.n, WL_WAITING },
		};
		for (uint32_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
			for (uint32_t k = 0; k < lists[l].n; k++) {
				const struct ewl *w = lists[l].v[k];
				if (w->where == lists[l].where && w->pos == k && w->cq == q &&
				    !w->admitted)
					continue;
				snprintf(msg, size,
					 "ClusterQueue %s: %s is at %u of list %u, but "
					 "says %u at %u (admitted %u)",
					 q->name, w->key, k, (unsigned)lists[l].where,
					 (unsigned)w->where, w->pos, (unsigned)w->admitted);
				return -EPROTO;
			}
		for (const struct ewl *w = q->adm_head; w; w = w->adm_next)
			if (!w->admitted || w->adm_cq != q || !w->adm) {
				snprintf(msg, size,
					 "ClusterQueue %s lists %s as admitted here, "
					 "which it is not",
					 q->name, w->key);
				return -EPROTO;
			}
	}
	for (uint32_t i = 0; i < e->n_all_lqs; i++) {
		const struct elq *lq = e->all_lqs[i];
		for (uint32_t k = 0; k < lq->held.n; k++) {
			const struct ewl *w = lq->held.v[k];
			if (w->where != WL_HELD || w->pos != k) {
				snprintf(msg, size,
					 "LocalQueue %s: %s is held at %u, but says "
					 "%u at %u",
					 lq->key, w->key, k, (unsigned)w->where, w->pos);
				return -EPROTO;
			}
		}
	}
	return 0;
}

/* A node's parent is its cohort's node (or none), each slot has the same (flavor, resource)
 * in the parent, and no usage is negative. */
static int check_node(const struct qnode *n, const struct ecohort *parent, const char *name,
		      char *msg, size_t size)
{
	if (n->parent && (!parent || n->parent != &parent->node)) {
		snprintf(msg, size, "%s: its parent node is not its cohort's", name);
		return -EPROTO;
	}
	for (uint32_t s = 0; s < n->n_slots; s++) {
		const struct qslot *q = &n->slots[s];
		int32_t ps = q->parent_slot;
		if (q->usage < 0 || (n->parent && (ps < 0 || (uint32_t)ps >= n->parent->n_slots ||
						   n->parent->slots[ps].flavor != q->flavor ||
						   n->parent->slots[ps].resource != q->resource))) {
			snprintf(msg, size, "%s: %s/%s uses %lld, parent slot %d", name, q->flavor,
				 q->resource, (long long)q->usage, ps);
			return -EPROTO;
		}
	}
	return 0;
}

int engine_check(const struct engine *e, char *msg, size_t size)
{
	int rc = check_queues(e, msg, size);
	if (rc)
		return rc;
	if (e->topology_dirty || e->n_phantoms)
		return 0; /* mid-change: the next build recomputes usage */
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		const struct ecq *q = e->all_cqs[i];
		if ((rc = check_node(&q->node, q->parent, q->name, msg, size)) != 0)
			return rc;
	}
	for (uint32_t i = 0; i < e->n_all_cohorts; i++) {
		const struct ecohort *c = e->all_cohorts[i];
		if ((rc = check_node(&c->node, c->parent, c->name, msg, size)) != 0)
			return rc;
	}
	for (uint32_t i = 0; i < e->n_all_cqs; i++) {
		const struct ecq *q = e->all_cqs[i];
		uint32_t n = 0;
		for (uint32_t s = 0; s < q->node.n_slots; s++) {
			int64_t want = 0;
			for (const struct ewl *w = q->adm_head; w; w = w->adm_next)
				for (uint32_t k = 0; w->adm && k < w->adm->n_items; k++)
					if (w->adm->items[k].slot == (int32_t)s)
						want = sat_add(want, w->adm->items[k].amount);
			if (want != q->node.slots[s].usage) {
				snprintf(msg, size,
					 "ClusterQueue %s: usage of %s/%s is %lld, its admitted "
					 "workloads add up to %lld",
					 q->name, q->node.slots[s].flavor,
					 q->node.slots[s].resource,
					 (long long)q->node.slots[s].usage, (long long)want);
				return -EPROTO;
			}
		}
		for (const struct ewl *w = q->adm_head; w; w = w->adm_next)
			n++;
		uint32_t fresh = 0;
		for (const struct ewl *w = q->adm_head; w; w = w->adm_next)
			fresh += w->adm_cycle == q->fresh_cycle;
		if (fresh != q->n_fresh) {
			snprintf(msg, size,
				 "ClusterQueue %s: %u admitted in cycle %llu counted, %u listed",
				 q->name, q->n_fresh, (unsigned long long)q->fresh_cycle, fresh);
			return -EPROTO;
		}
		if (n != q->n_admitted) {
			snprintf(msg, size, "ClusterQueue %s: %u admitted counted, %u listed",
				 q->name, q->n_admitted, n);
			return -EPROTO;
		}
	}
	for (uint32_t i = 0; i < e->n_all_cohorts; i++) {
		const struct ecohort *c = e->all_cohorts[i];
		for (uint32_t s = 0; s < c->node.n_slots; s++) {
			int64_t want = 0;
			for (uint32_t k = 0; k < c->n_child_cqs; k++) {
				const struct qnode *ch = &c->child_cqs[k]->node;
				for (uint32_t cs = 0; ch->parent == &c->node && cs < ch->n_slots;
				     cs++)
					if (ch->slots[cs].parent_slot == (int32_t)s)
						want = sat_add(want, beyond_local(&ch->slots[cs]));
			}
			for (uint32_t k = 0; k < c->n_child_cohorts; k++) {
				const struct qnode *ch = &c->child_cohorts[k]->node;
				for (uint32_t cs = 0; ch->parent == &c->node && cs < ch->n_slots;
				     cs++)
					if (ch->slots[cs].parent_slot == (int32_t)s)
						want = sat_add(want, beyond_local(&ch->slots[cs]));
			}
			if (want != c->node.slots[s].usage) {
				snprintf(msg, size,
					 "cohort %s: usage of %s/%s is %lld, its children push up "
					 "%lld",
					 c->name, c->node.slots[s].flavor,
					 c->node.slots[s].resource,
					 (long long)c->node.slots[s].usage, (long long)want);
				return -EPROTO;
			}
		}
	}
	return check_specs(e, msg, size);
}

int engine_cycle(struct engine *e, eng_decision_fn fn, void *arg)
{
	struct cycle cx = { e, fn, arg, 0 };
	int rc = ensure_built(e);
	if (rc)
		return rc;
	e->cycle++;
	e->arena_used = 0;
	eng_changed(e);
	if (e->drain_pending)
		run_drains(&cx);
	run_held(&cx);
	for (uint32_t i = 0; i < e->n_dirty_trees; i++) {
		struct etree *t = e->dirty_trees[i];
		t->listed = 0;
		if ((rc = process_tree(&cx, t)) != 0) {
			/* What is left stays listed for the next cycle. */
			memmove(e->dirty_trees, e->dirty_trees + i,
				(e->n_dirty_trees - i) * sizeof(*e->dirty_trees));
			e->n_dirty_trees -= i;
			for (uint32_t k = 0; k < e->n_dirty_trees; k++)
				e->dirty_trees[k]->listed = 1;
			return rc;
		}
	}
	e->n_dirty_trees = 0;
#if MUSTER_CHECKS
	{
		/* Checked builds (core/invariant.h) check the whole engine after every cycle. */
		char why[512];
		if (engine_check(e, why, sizeof(why)) != 0) {
			fprintf(stderr, "engine invariant broken: %s\n", why);
			MUSTER_ASSERT(!"engine_check failed");
		}
	}
#endif
	return cx.actions;
}

/* --- observation -------------------------------------------------------------------------- */

int engine_cq_usage(const struct engine *ce, const char *cq, const char *flavor,
		    const char *resource, struct eng_cq_usage *out)
{
	struct engine *e = (struct engine *)ce; /* a lazy rebuild is not a visible change */
	int rc = ensure_built(e);
	if (rc)
		return rc;
	struct ecq *q = cq ? strmap_get(&e->cqs, cq) : NULL;
	const char *f = interned(e, flavor), *r = interned(e, resource);
	if (!q || !q->exists || !f || !r)
		return -ENOENT;
	int32_t s = qnode_find(&q->node, f, r);
	if (s < 0)
		return -ENOENT;
	out->total = q->node.slots[s].usage;
	out->borrowed = q->node.slots[s].usage > q->node.slots[s].nominal ?
				q->node.slots[s].usage - q->node.slots[s].nominal :
				0;
	return 0;
}

int engine_cohort_usage(const struct engine *ce, const char *cohort, const char *flavor,
			const char *resource, struct eng_cq_usage *out)
{
	struct engine *e = (struct engine *)ce;
	int rc = ensure_built(e);
	if (rc)
		return rc;
	struct ecohort *c = cohort ? strmap_get(&e->cohorts, cohort) : NULL;
	const char *f = interned(e, flavor), *r = interned(e, resource);
	if (!c || !f || !r)
		return -ENOENT;
	int32_t s = qnode_find(&c->node, f, r);
	if (s < 0)
		return -ENOENT;
	const struct qslot *q = &c->node.slots[s];
	out->total = q->usage;
	out->borrowed = q->usage > q->subtree ? q->usage - q->subtree : 0;
	return 0;
}

int engine_cq_active(const struct engine *ce, const char *cq, const char **reason,
		     const char **message)
{
	struct engine *e = (struct engine *)ce;
	int rc = ensure_built(e);
	if (rc)
		return rc;
	struct ecq *q = cq ? strmap_get(&e->cqs, cq) : NULL;
	if (!q || !q->exists)
		return -ENOENT;
	if (reason)
		*reason = q->inactive_reason;
	if (message)
		*message = q->active ? "Can admit new workloads" : q->inactive_msg;
	return q->active;
}

int engine_cq_counts(const struct engine *e, const char *cq, size_t *pending, size_t *admitted)
{
	struct ecq *q = cq ? strmap_get(&e->cqs, cq) : NULL;
	if (!q)
		return -ENOENT;
	if (pending)
		*pending = (size_t)q->heap.n + q->parked.n + q->waiting.n;
	if (admitted)
		*admitted = q->n_admitted;
	return 0;
}

int engine_cq_pending(const struct engine *e, const char *cq, size_t *active, size_t *inadmissible)
{
	struct ecq *q = cq ? strmap_get(&e->cqs, cq) : NULL;
	if (!q)
		return -ENOENT;
	*active = (size_t)q->heap.n + q->waiting.n;
	*inadmissible = q->parked.n;
	return 0;
}

const struct eng_assignment *engine_admission(const struct engine *ce, const char *key)
{
	struct engine *e = (struct engine *)ce; /* the result lives in engine scratch */
	struct ewl *w = key ? strmap_get(&e->workloads, key) : NULL;
	if (!w || !w->admitted)
		return NULL;
	return materialize(e, w->adm_cq, w);
}

/* --- for engine_explain.c ------------------------------------------------------------------- */

/* The explanations must use the same build, queue order and namespace rule as the cycle, so
 * they reach them here rather than copy them. */
int eng_build(struct engine *e)
{
	return ensure_built(e);
}

struct elq *eng_lq(struct engine *e, const char *namespace_name, const char *name)
{
	return lq_record(e, namespace_name, name);
}

void eng_cq_reordered(struct engine *e, struct ecq *cq)
{
	mark_cq_dirty(e, cq);
}

void eng_all_changed(struct engine *e)
{
	mark_all_requeue(e);
}

int eng_ns_selected(const struct ecq *cq, const struct ewl *w)
{
	return cq->has_ns_selector &&
	       labels_selector_matches(&cq->ns_selector.sel, ns_label, w->nsrec);
}
