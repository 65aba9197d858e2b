/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Explanations for the visibility endpoint (contract in engine.h, "explanations"): the order in
 * which a ClusterQueue's pending workloads are tried, and why one of them waits.
 *
 * Nothing here decides anything. The queue order, the build, the namespace rule, the flavor
 * assignment, the quota maths and the preemption candidates are the engine's own (reached
 * through engine_internal.h), so an explanation can't drift from what a cycle does. What is
 * simulated is done in place and undone, as the preemption search does (usage is path
 * independent, engine_quota.c): quota held for waiting preemptors, and releasing holders.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine_internal.h"
#include "core/grow.h"

/* --- the order of a ClusterQueue ------------------------------------------------------------ */

/* An entry of the order: the workload's queue-order key beside it, so a comparison reads no
 * workload (with admission fair sharing, their LocalQueues). */
struct oent {
	struct wkey k;
	struct ewl *w;
};

struct order {
	struct oent *v; /* waiting preemptors, then the heap and the parked list, each sorted */
	uint32_t *lq_pos; /* [i]: position of v[i] among its LocalQueue's */
	uint32_t n, n_waiting; /* sorted (at most the limit asked for); the waiting among them */
	uint32_t total; /* pending in all */
};

struct lq_rank {
	uintptr_t lq;
	uint32_t i;
};

static int cmp_queue_order(const void *a, const void *b)
{
	const struct oent *x = a, *y = b;
	return eng_queue_before(0, &x->k, x->w, &y->k, y->w) ? -1 :
	       eng_queue_before(0, &y->k, y->w, &x->k, x->w) ? 1 :
							       0;
}

/* The same with admission fair sharing: the LocalQueue that used less first. */
static int cmp_queue_order_afs(const void *a, const void *b)
{
	const struct oent *x = a, *y = b;
	return eng_queue_before(1, &x->k, x->w, &y->k, y->w) ? -1 :
	       eng_queue_before(1, &y->k, y->w, &x->k, x->w) ? 1 :
							       0;
}

static int cmp_lq_rank(const void *a, const void *b)
{
	const struct lq_rank *x = a, *y = b;
	if (x->lq != y->lq)
		return x->lq < y->lq ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

typedef int (*order_cmp)(const void *, const void *);

/* Sifts v[i] down a heap of n entries whose top is the last in cmp's order. */
static void sift_last_down(struct oent *v, uint32_t n, uint32_t i, order_cmp cmp)
{
	struct oent x = v[i];
	for (uint32_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && cmp(&v[c + 1], &v[c]) > 0)
			c++;
		if (cmp(&v[c], &x) <= 0)
			break;
		v[i] = v[c];
	}
	v[i] = x;
}

/* Sorts the first r of v[0..n) in cmp's order into v[0..r) (the rest in no order). Keeping
 * only r in a heap, the last of them on top for each later entry to beat, costs O(n log r):
 * the front of a queue of 50,000 needs five, not a sort of all. cmp is a strict total order
 * (the last tie-break is the unique arrival), so the r are those a full sort puts first. */
static void sort_first(struct oent *v, uint32_t n, uint32_t r, order_cmp cmp)
{
	if (r < n && r > 0) {
		for (uint32_t i = r / 2; i-- > 0;)
			sift_last_down(v, r, i, cmp);
		for (uint32_t j = r; j < n; j++) {
			if (cmp(&v[j], &v[0]) >= 0)
				continue;
			struct oent t = v[0];
			v[0] = v[j];
			v[j] = t;
			sift_last_down(v, r, 0, cmp);
		}
	}
	qsort(v, r < n ? r : n, sizeof(*v), cmp);
}

static void order_release(struct order *o)
{
	free(o->v);
	free(o->lq_pos);
	o->v = NULL;
	o->lq_pos = NULL;
	o->n = o->n_waiting = o->total = 0;
}

static void order_add(struct order *o, struct ewl *w)
{
	o->v[o->total++] = (struct oent){ wl_key(w), w };
}

/* Sorts the first limit of q's pending workloads into the order a cycle tries them (see
 * engine.h). */
static int order_build(const struct ecq *q, uint32_t limit, struct order *o)
{
	uint32_t n = q->waiting.n + q->heap.n + q->parked.n;
	memset(o, 0, sizeof(*o));
	if (n == 0)
		return 0;
	o->v = malloc(n * sizeof(*o->v));
	if (!o->v)
		return -ENOMEM;
	for (uint32_t i = 0; i < q->waiting.n; i++)
		order_add(o, q->waiting.v[i]);
	for (uint32_t i = 0; i < q->heap.n; i++)
		order_add(o, q->heap.v[i]);
	for (uint32_t i = 0; i < q->parked.n; i++)
		order_add(o, q->parked.v[i]);
	uint32_t nw = q->waiting.n, rest = limit > nw ? limit - nw : 0;
	o->n_waiting = limit < nw ? limit : nw;
	sort_first(o->v, nw, o->n_waiting, cmp_queue_order);
	if (rest > n - nw)
		rest = n - nw;
	sort_first(o->v + nw, n - nw, rest, q->heap.afs ? cmp_queue_order_afs : cmp_queue_order);
	o->n = o->n_waiting + rest; /* rest is 0 unless every waiting one is among them */
	if (o->n == 0)
		return 0;
	/* Positions within each LocalQueue: group by LocalQueue, keeping the order. Those before
	 * an entry in the order are all among the first n, so its position is exact. */
	struct lq_rank *rank = malloc(o->n * sizeof(*rank));
	o->lq_pos = malloc(o->n * sizeof(*o->lq_pos));
	if (!rank || !o->lq_pos) {
		free(rank);
		order_release(o);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < o->n; i++)
		rank[i] = (struct lq_rank){ (uintptr_t)o->v[i].w->lq, i };
	qsort(rank, o->n, sizeof(*rank), cmp_lq_rank);
	for (uint32_t i = 0, pos = 0; i < o->n; i++) {
		pos = i > 0 && rank[i].lq == rank[i - 1].lq ? pos + 1 : 0;
		o->lq_pos[rank[i].i] = pos;
	}
	free(rank);
	return 0;
}

static void pending_fill(const struct ecq *q, const struct order *o, uint32_t i,
			 struct eng_pending *p)
{
	const struct ewl *w = o->v[i].w;
	size_t ns_len = strlen(w->ns);
	p->key = w->key;
	p->namespace_name = w->ns;
	p->name = !strncmp(w->key, w->ns, ns_len) && w->key[ns_len] == '/' ? w->key + ns_len + 1 :
									     w->key;
	p->local_queue = w->queue;
	p->cluster_queue = q->name;
	p->priority = w->priority;
	p->queue_time = w->queue_time;
	p->position_in_cq = i;
	p->position_in_lq = o->lq_pos[i];
	p->waiting = i < o->n_waiting;
	p->inadmissible = w->where == WL_PARKED;
}

/* Reports the first limit of q's order, only lq's workloads when lq is not NULL (then limit
 * must take them all). How many were in it, or -errno. */
static int report_order(const struct ecq *q, const struct elq *lq, uint32_t limit,
			eng_pending_fn fn, void *arg)
{
	struct order o;
	int rc = order_build(q, limit, &o);
	if (rc)
		return rc;
	uint32_t n = 0;
	int stopped = !fn;
	for (uint32_t i = 0; i < o.n; i++) {
		if (lq && o.v[i].w->lq != lq)
			continue;
		n++;
		if (stopped)
			continue;
		struct eng_pending p;
		pending_fill(q, &o, i, &p);
		stopped = fn(arg, &p) != 0;
	}
	if (!lq)
		n = o.total;
	order_release(&o);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

int engine_pending_order_first(const struct engine *e, const char *cq, size_t limit,
			       eng_pending_fn fn, void *arg)
{
	const struct ecq *q = e && cq ? strmap_get(&e->cqs, cq) : NULL;
	if (!q || !q->exists)
		return -ENOENT;
	return report_order(q, NULL, limit < UINT32_MAX ? (uint32_t)limit : UINT32_MAX, fn, arg);
}

int engine_pending_order(const struct engine *e, const char *cq, eng_pending_fn fn, void *arg)
{
	return engine_pending_order_first(e, cq, UINT32_MAX, fn, arg);
}

int engine_pending_order_lq(const struct engine *e, const char *namespace_name, const char *lq,
			    eng_pending_fn fn, void *arg)
{
	char key[640];
	if (!e || !namespace_name || !lq ||
	    (size_t)snprintf(key, sizeof(key), "%s/%s", namespace_name, lq) >= sizeof(key))
		return -ENOENT;
	const struct elq *l = strmap_get(&e->lqs, key);
	if (!l || !l->exists)
		return -ENOENT;
	if (l->stop != ENG_STOP_NONE || !l->cq)
		return 0; /* its workloads are held by it, in no ClusterQueue's order */
	return report_order(l->cq, l, UINT32_MAX, fn, arg);
}

/* --- why: the context of one explanation ------------------------------------------------- */

/* Distinct (flavor, resource) pairs a workload lacks, for the holders. More than this many
 * lacking pairs are listed in lacking but get no holders (no real queue has that many). */
#define X_PAIRS 64

/* An admitted workload holding some lacking pair. */
struct hold {
	struct ewl *wl;
	const int64_t *am; /* [pair]: what it holds of each lacking pair (set once all are found) */
	int64_t rank; /* preemptible: its place in the preemption order */
	double score; /* others: how much of what is missing it frees (see cmp_hold) */
	uint8_t preemptible;
	uint8_t released; /* to_fit: its usage is released in the simulation */
};

struct xctx {
	struct engine *e;
	struct ecq *cq;
	struct ewl *w;
	struct eng_explain *out;
	uint32_t n_items;
	struct eitem items[ENG_MAX_ITEMS]; /* what it asks for, with the nominated flavors */
	uint32_t n_pairs;
	const char *pair_flavor[X_PAIRS];
	const char *pair_resource[X_PAIRS];
	int64_t pair_missing[X_PAIRS];
	int64_t lack_avail[ENG_EXPLAIN_LACKING]; /* avail_raw with the holds, per lacking entry */
	int never; /* some lacking item can't be covered by releases */
	struct eitem valid[ENG_MAX_ITEMS]; /* the items that have a slot, for the candidates */
	struct hold *h;
	int64_t *amount; /* [hold * n_pairs + pair] */
	uint32_t n_h, cap_h;
};

/* Charges (+1) or releases (-1) the plans of the preemptors waiting in w's cohort tree, as a
 * cycle holds them before it looks at anything else there (engine.c, handle_waiting). */
static void hold_waiting(struct xctx *x, int sign)
{
	const struct etree *t = x->cq->tree;
	for (uint32_t i = 0; i < t->n_cqs; i++) {
		struct ecq *q = t->cqs[i];
		if (!q->active)
			continue;
		for (uint32_t k = 0; k < q->waiting.n; k++) {
			struct ewl *p = q->waiting.v[k];
			if (p == x->w || !p->wait)
				continue;
			if (sign > 0)
				eng_resolve_slots(q, p->wait->plan->items, p->wait->plan->n_items);
			eng_charge(q, p->wait->plan, sign);
		}
	}
}

static int add_item(struct xctx *x, uint16_t podset, const char *resource, const char *flavor,
		    int64_t amount, int32_t slot)
{
	if (x->n_items == ENG_MAX_ITEMS)
		return -E2BIG; /* validation bounds podSets and requests: can't happen */
	x->items[x->n_items++] = (struct eitem){ resource, flavor, amount, slot, podset, 0 };
	return 0;
}

/* The flavor index of group g the engine nominated for (podset, resource) in ev, or the first
 * one the podSet may use; -1 when none may. */
static int nominated_flavor(const struct ecq *cq, uint32_t g, const struct wps *ps, uint16_t podset,
			    const char *resource, const struct eval *ev)
{
	const struct egroup *grp = &cq->groups.g[g];
	for (uint32_t i = 0; ev && i < ev->n_items; i++) {
		if (ev->items[i].podset != podset || ev->items[i].resource != resource)
			continue;
		for (uint32_t f = 0; f < grp->n_fl; f++)
			if (grp->fl[f] == ev->items[i].flavor)
				return (int)f;
	}
	for (uint32_t f = 0; f < grp->n_fl; f++)
		if (grp->flavor[f] &&
		    quota_flavor_match(grp->flavor[f], &ps->pod, NULL) == QUOTA_MATCH)
			return (int)f;
	return -1;
}

static int add_request(struct xctx *x, const struct wps *ps, uint16_t podset, const char *res,
		       int64_t amount, const struct eval *ev)
{
	uint32_t g, pos;
	if (!eng_cq_group_of(x->cq, res, &g, &pos))
		return amount == 0 ? 0 : add_item(x, podset, res, NULL, amount, -1);
	int f = nominated_flavor(x->cq, g, ps, podset, res, ev);
	if (f < 0)
		return add_item(x, podset, res, NULL, amount, -1);
	const struct egroup *grp = &x->cq->groups.g[g];
	int32_t slot = grp->slot[(uint32_t)f * grp->n_cov + pos];
	return add_item(x, podset, res, grp->fl[f], amount, slot);
}

static int64_t mul_sat(int64_t a, int64_t b)
{
	if (a != 0 && b != 0 && (a > INT64_MAX / b || a < INT64_MIN / b))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return a * b;
}

/* What a cycle would ask of the quota for w now: its requests per podSet with the flavors of
 * the engine's own flavor assignment (as far as it got). */
static int requested_items(struct xctx *x)
{
	struct engine *e = x->e;
	const struct wspec *s = x->w->spec;
	int64_t counts[ENG_MAX_PODSETS];
	struct assign_opts opts = { 0, 0, 0 };
	for (uint32_t i = 0; i < s->n_podsets; i++)
		counts[i] = s->ps[i].count;
	int rc = eng_assign(e, x->cq, x->w, counts, &opts, &e->ev_try);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < s->n_podsets && !rc; i++) {
		const struct wps *ps = &s->ps[i];
		for (size_t r = 0; r < ps->pod.n_requests && !rc; r++) {
			const char *res = ps->pod.resources[r];
			if (x->cq->covers_pods && res == e->pods)
				continue; /* charged as the pod count, below */
			int64_t amount = mul_sat(ps->pod.per_pod[r], ps->count);
			rc = add_request(x, ps, (uint16_t)i, res, amount, &e->ev_try);
		}
		if (!rc && x->cq->covers_pods)
			rc = add_request(x, ps, (uint16_t)i, e->pods, mul_sat(ps->count, 1000),
					 &e->ev_try);
	}
	return rc;
}

/* A waiting preemptor asks for what it preempted for. */
static int planned_items(struct xctx *x)
{
	struct eadm *plan = x->w->wait->plan;
	eng_resolve_slots(x->cq, plan->items, plan->n_items);
	for (uint32_t i = 0; i < plan->n_items; i++) {
		const struct eitem *it = &plan->items[i];
		int rc = add_item(x, it->podset, it->resource, it->flavor, it->amount, it->slot);
		if (rc)
			return rc;
	}
	return 0;
}

/* The engine's available quota for cq's slot: below 0 while waiting preemptors' holds and
 * their victims (still charged) count twice. */
static int64_t avail_raw(const struct ecq *cq, int32_t slot)
{
	return slot >= 0 ? q_available(&cq->node, slot) : 0;
}

static void note_pair(struct xctx *x, const char *flavor, const char *resource, int64_t missing)
{
	uint32_t k = 0;
	while (k < x->n_pairs && !(x->pair_flavor[k] == flavor && x->pair_resource[k] == resource))
		k++;
	if (k == X_PAIRS)
		return;
	if (k == x->n_pairs) {
		x->pair_flavor[k] = flavor;
		x->pair_resource[k] = resource;
		x->pair_missing[k] = 0;
		x->n_pairs++;
	}
	x->pair_missing[k] = sat_add(x->pair_missing[k], missing);
}

/* The lacking entries, with waiting preemptors' holds charged. Items that lack are marked
 * preempt (Kueue's frsNeedPreemption), for the candidates. */
static void find_lacking(struct xctx *x)
{
	struct eng_explain *out = x->out;
	const struct wspec *s = x->w->spec;
	for (uint32_t i = 0; i < x->n_items; i++) {
		struct eitem *it = &x->items[i];
		int64_t assumed = 0;
		for (uint32_t k = 0; k < i && it->slot >= 0; k++)
			if (x->items[k].slot == it->slot)
				assumed = sat_add(assumed, x->items[k].amount);
		int64_t raw = avail_raw(x->cq, it->slot), avail = raw > 0 ? raw : 0;
		int64_t left = avail > assumed ? avail - assumed : 0;
		if (it->amount <= left)
			continue;
		it->preempt = 1;
		int exceeds = it->slot < 0 || sat_add(assumed, it->amount) >
						      q_potential_available(&x->cq->node, it->slot);
		x->never |= exceeds;
		if (it->flavor)
			note_pair(x, it->flavor, it->resource, it->amount - left);
		out->lacking_total++;
		if (out->n_lacking == ENG_EXPLAIN_LACKING)
			continue;
		out->lacking[out->n_lacking++] = (struct eng_lack){
			it->podset < s->n_podsets ? s->ps[it->podset].name : NULL,
			it->flavor,
			it->resource,
			it->amount,
			left,
			it->amount - left,
			0,
			exceeds,
		};
		x->lack_avail[out->n_lacking - 1] = raw;
	}
}

/* What the waiting preemptors' holds take of each lacking pair: available without them minus
 * available with them, unclamped, so that a hold counts also where the victims it waits for
 * are still charged and nothing is available either way. */
static void note_reserved(struct xctx *x)
{
	struct eng_explain *out = x->out;
	uint32_t n = 0;
	hold_waiting(x, -1);
	for (uint32_t i = 0; i < x->n_items && n < out->n_lacking; i++) {
		if (!x->items[i].preempt)
			continue;
		int64_t with = x->lack_avail[n];
		int64_t without = avail_raw(x->cq, x->items[i].slot);
		out->lacking[n++].reserved = without > with ? sat_sub(without, with) : 0;
	}
	hold_waiting(x, +1);
}

/* --- why: holders -------------------------------------------------------------------------- */

/* Every admitted workload of w's cohort tree that holds a lacking pair. */
static int find_holders(struct xctx *x)
{
	const struct etree *t = x->cq->tree;
	int64_t held[X_PAIRS];
	for (uint32_t c = 0; c < t->n_cqs; c++) {
		const struct ecq *q = t->cqs[c];
		if (!q->exists)
			continue; /* not charged: holds nothing in this tree */
		for (struct ewl *a = q->adm_head; a; a = a->adm_next) {
			int any = 0;
			memset(held, 0, x->n_pairs * sizeof(*held));
			for (uint32_t i = 0; i < a->adm->n_items; i++) {
				const struct eitem *it = &a->adm->items[i];
				for (uint32_t k = 0; k < x->n_pairs; k++) {
					if (it->flavor != x->pair_flavor[k] ||
					    it->resource != x->pair_resource[k] || it->amount <= 0)
						continue;
					held[k] = sat_add(held[k], it->amount);
					any = 1;
				}
			}
			if (!any)
				continue;
			if (x->n_h == x->cap_h) { /* h, and n_pairs amounts per hold */
				size_t per = x->n_pairs * sizeof(*x->amount);
				size_t cap = grow_capacity(x->cap_h, x->n_h + 1, per ? per : 1,
							   UINT32_MAX);
				if (cap == 0 || grow_resize(&x->h, cap, sizeof(*x->h)) != 0 ||
				    (per && grow_resize(&x->amount, cap, per) != 0))
					return -ENOMEM;
				x->cap_h = (uint32_t)cap;
			}
			x->h[x->n_h] = (struct hold){ a, NULL, 0, 0, 0, 0 };
			memcpy(&x->amount[(size_t)x->n_h * x->n_pairs], held,
			       x->n_pairs * sizeof(*held));
			x->n_h++;
		}
	}
	/* The rows stay put from here on; each holder takes its own along when sorted. */
	for (uint32_t i = 0; i < x->n_h; i++)
		x->h[i].am = &x->amount[(size_t)i * x->n_pairs];
	return 0;
}

struct cand_rank {
	uintptr_t wl;
	int64_t rank;
};

static int cmp_cand_rank(const void *a, const void *b)
{
	const struct cand_rank *x = a, *y = b;
	return x->wl < y->wl ? -1 : x->wl > y->wl;
}

/* Marks the holders the engine's preemption may take for w, with their place in its order. A
 * waiting preemptor's own victims (claimed) come first, in the order it chose them. */
static int mark_preemptible(struct xctx *x)
{
	struct engine *e = x->e;
	uint32_t n = 0;
	for (uint32_t i = 0; i < x->n_items; i++)
		if (x->items[i].slot >= 0)
			x->valid[n++] = x->items[i];
	int n_cands = eng_candidates(e, x->cq, x->w, x->valid, n);
	if (n_cands < 0)
		return n_cands;
	struct cand_rank *ranks = malloc(((size_t)n_cands + 1) * sizeof(*ranks));
	if (!ranks)
		return -ENOMEM;
	for (int i = 0; i < n_cands; i++)
		ranks[i] = (struct cand_rank){ (uintptr_t)e->cands[i].wl, i };
	qsort(ranks, (size_t)n_cands, sizeof(*ranks), cmp_cand_rank);
	const struct ewait *wt = x->w->wait;
	for (uint32_t i = 0; i < x->n_h; i++) {
		struct hold *h = &x->h[i];
		struct cand_rank key = { (uintptr_t)h->wl, 0 };
		const struct cand_rank *found =
			bsearch(&key, ranks, (size_t)n_cands, sizeof(*ranks), cmp_cand_rank);
		if (found) {
			h->preemptible = 1;
			h->rank = found->rank;
		}
		for (uint32_t v = 0; wt && v < wt->n_victims; v++) {
			if (h->wl->claimed == x->w->uid && h->wl->uid == wt->victim_uid[v]) {
				h->preemptible = 1;
				h->rank = (int64_t)v - (int64_t)wt->n_victims;
			}
		}
	}
	free(ranks);
	return 0;
}

/* The share of pair k's missing amount that a holder of am frees. */
static double share_of(const struct xctx *x, const int64_t *am, uint32_t k)
{
	int64_t missing = x->pair_missing[k];
	if (missing <= 0)
		return 0;
	return (double)(am[k] < missing ? am[k] : missing) / (double)missing;
}

/* How much of what is missing a holder frees: its shares summed over the pairs (each relative
 * to its missing amount, so that resources in different units add up). */
static void score_holders(struct xctx *x)
{
	for (uint32_t i = 0; i < x->n_h; i++) {
		double s = 0;
		for (uint32_t k = 0; k < x->n_pairs; k++)
			s += share_of(x, x->h[i].am, k);
		x->h[i].score = s;
	}
}

/* to_fit's order (see engine.h): preemptible ones as preemption takes them, then the rest. */
static int cmp_hold(const void *pa, const void *pb)
{
	const struct hold *a = pa, *b = pb;
	if (a->preemptible != b->preemptible)
		return a->preemptible ? -1 : 1;
	if (a->preemptible && a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (!a->preemptible && a->score != b->score)
		return a->score > b->score ? -1 : 1;
	if (a->wl->priority != b->wl->priority)
		return a->wl->priority < b->wl->priority ? -1 : 1;
	if (a->wl->adm_time != b->wl->adm_time)
		return a->wl->adm_time > b->wl->adm_time ? -1 : 1;
	return strcmp(a->wl->key, b->wl->key);
}

static void report_holders(struct xctx *x)
{
	struct eng_explain *out = x->out;
	for (uint32_t i = 0; i < x->n_h; i++) {
		const struct hold *h = &x->h[i];
		const struct ecq *q = h->wl->adm_cq;
		const int64_t *am = h->am;
		for (uint32_t k = 0; k < x->n_pairs; k++) {
			if (am[k] <= 0)
				continue;
			out->holders_total++;
			if (out->n_holders == ENG_EXPLAIN_HOLDERS)
				continue;
			int32_t s = qnode_find(&q->node, x->pair_flavor[k], x->pair_resource[k]);
			out->holders[out->n_holders++] = (struct eng_holder){
				h->wl->key,
				q->name,
				x->pair_flavor[k],
				x->pair_resource[k],
				h->wl->priority,
				am[k],
				q == x->cq,
				s >= 0 && q->node.slots[s].usage > q->node.slots[s].nominal,
				h->preemptible,
				h->wl->evicting,
			};
		}
	}
}

/* --- why: to_fit --------------------------------------------------------------------------- */

static void release_hold(struct xctx *x, uint32_t i, int sign)
{
	struct hold *h = &x->h[i];
	eng_charge(h->wl->adm_cq, h->wl->adm, sign);
	h->released = sign < 0;
}

/* eng_fits_now sums into e->acc, which the flavor assignment sizes; a waiting preemptor's
 * explanation doesn't run one. */
static int acc_reserve(struct engine *e, const struct ecq *cq)
{
	return GROW(e->acc, e->cap_acc, cq->node.n_slots);
}

static void report_step(struct xctx *x, uint32_t i)
{
	struct eng_explain *out = x->out;
	const struct hold *h = &x->h[i];
	const int64_t *am = h->am;
	uint32_t best = 0;
	double best_share = -1;
	out->to_fit_total++;
	if (out->n_to_fit == ENG_EXPLAIN_TO_FIT)
		return;
	for (uint32_t k = 0; k < x->n_pairs; k++) {
		double share = share_of(x, am, k);
		if (share > best_share) {
			best_share = share;
			best = k;
		}
	}
	out->to_fit[out->n_to_fit++] = (struct eng_fit_step){
		h->wl->key, h->preemptible, x->pair_flavor[best], x->pair_resource[best], am[best],
	};
}

/* Releases holders in order until w fits, then puts back every one it still fits without,
 * last taken first (the engine's minimal set); reports the rest and restores all usage. */
static int find_to_fit(struct xctx *x)
{
	struct engine *e = x->e;
	uint32_t *picked, n = 0;
	int fits = 0;
	if (x->never || x->n_h == 0)
		return 0;
	int rc = acc_reserve(e, x->cq);
	if (rc)
		return rc;
	if (!(picked = malloc(x->n_h * sizeof(*picked))))
		return -ENOMEM;
	for (uint32_t i = 0; i < x->n_h && !fits; i++) {
		release_hold(x, i, -1);
		picked[n++] = i;
		fits = eng_fits_now(e, x->cq, x->items, x->n_items);
	}
	for (int k = fits ? (int)n - 2 : -1; k >= 0; k--) {
		release_hold(x, picked[k], +1);
		if (!eng_fits_now(e, x->cq, x->items, x->n_items))
			release_hold(x, picked[k], -1);
	}
	x->out->to_fit_found = fits;
	for (uint32_t k = 0; k < n; k++) {
		if (!x->h[picked[k]].released)
			continue;
		if (fits)
			report_step(x, picked[k]);
		release_hold(x, picked[k], +1);
	}
	free(picked);
	return 0;
}

/* --- why: the whole ---------------------------------------------------------------------- */

static int explain_quota(struct xctx *x)
{
	struct eng_explain *out = x->out;
	int waiting = x->w->where == WL_WAITING && x->w->wait;
	int rc = waiting ? planned_items(x) : requested_items(x);
	if (rc)
		return rc;
	find_lacking(x);
	note_reserved(x);
	if (out->lacking_total == 0) {
		out->wait = waiting         ? ENG_WAIT_PREEMPTION :
			    x->w->no_layout ? ENG_WAIT_NODES :
					      ENG_WAIT_TURN;
		return 0;
	}
	out->wait = waiting ? ENG_WAIT_PREEMPTION : ENG_WAIT_QUOTA;
	if ((rc = find_holders(x)) != 0 || (rc = mark_preemptible(x)) != 0)
		return rc;
	score_holders(x);
	if (x->n_h > 1)
		qsort(x->h, x->n_h, sizeof(*x->h), cmp_hold);
	report_holders(x);
	return find_to_fit(x);
}

static int find_position(const struct ecq *cq, const struct ewl *w, struct eng_explain *out)
{
	struct order o;
	int rc = order_build(cq, UINT32_MAX, &o);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < o.n; i++) {
		if (o.v[i].w != w)
			continue;
		out->has_position = 1;
		out->position_in_cq = i;
		out->position_in_lq = o.lq_pos[i];
	}
	order_release(&o);
	return 0;
}

int engine_explain(struct engine *e, const char *key, struct eng_explain *out)
{
	struct ewl *w = e && key ? strmap_get(&e->workloads, key) : NULL;
	if (!out)
		return -EINVAL;
	if (!w)
		return -ENOENT;
	int rc = eng_build(e);
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	out->namespace_name = w->ns;
	out->local_queue = w->queue;
	out->priority = w->priority;
	out->queue_time = w->queue_time;
	if (w->admitted) {
		out->state = ENG_STATE_ADMITTED;
		out->cluster_queue = w->adm_cq->name;
		out->evicting = w->evicting;
		return 0;
	}
	out->state = ENG_STATE_PENDING;
	struct ecq *cq = w->cq;
	if (!cq || w->where == WL_HELD || w->where == WL_NONE) {
		out->wait = ENG_WAIT_QUEUE_HELD;
		out->cluster_queue = w->lq && w->lq->cq ? w->lq->cq->name : NULL;
		return 0;
	}
	out->cluster_queue = cq->name;
	if ((rc = find_position(cq, w, out)) != 0)
		return rc;
	if (!cq->exists || !cq->active || !cq->tree || cq->tree->cyclic) {
		out->wait = ENG_WAIT_CQ_INACTIVE;
		return 0;
	}
	if (w->where != WL_WAITING && !eng_ns_selected(cq, w)) {
		out->wait = ENG_WAIT_NAMESPACE;
		return 0;
	}
	struct xctx *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->e = e;
	x->cq = cq;
	x->w = w;
	x->out = out;
	/* Look as the next cycle will: what the last one admitted may be preempted in it. */
	uint64_t cycle = e->cycle++;
	hold_waiting(x, +1);
	rc = explain_quota(x);
	hold_waiting(x, -1);
	e->cycle = cycle;
	free(x->h);
	free(x->amount);
	free(x);
	return rc;
}
