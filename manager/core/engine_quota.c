/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hierarchical quota maths (Kueue's pkg/cache/scheduler/resource_node.go) and flavor
 * assignment (Kueue's pkg/scheduler/flavorassigner), per (flavor, resource) slot. Flavor
 * assignment asks whether preemption would help through struct engine.oracle, as Kueue's
 * assigner asks its PreemptionOracle: engine_preempt.c is above this file.
 *
 * The usage stored at every cohort is a function of its children's usage only
 * (Usage(C) = sum over children of max(0, Usage(child) - localQuota(child))), which
 * q_add_usage and q_remove_usage keep incrementally. Because it is a pure function, charging
 * and releasing in any order give the same numbers: preemption simulations remove and re-add
 * usage in place and leave exactly what they found.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine_internal.h"
#include "core/grow.h"
#include "core/strfmt.h"

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

int64_t q_available(const struct qnode *n, int32_t s)
{
	const struct qslot *q = &n->slots[s];
	if (!n->parent)
		return sat_sub(q->subtree, q->usage);
	int64_t from_parent = q_available(n->parent, q->parent_slot);
	if (q->has_borrowing_limit) {
		int64_t stored_in_parent = sat_sub(q->subtree, q->local);
		int64_t used_in_parent = max64(0, sat_sub(q->usage, q->local));
		int64_t cap =
			sat_add(sat_sub(stored_in_parent, used_in_parent), q->borrowing_limit);
		from_parent = min64(from_parent, cap);
	}
	return sat_add(q_local_available(n, s), from_parent);
}

/* What q_available would be if no borrowing limit applied on the way up: the unused quota of
 * the whole tree that the node could reach. Tells BorrowingLimitReached from WaitingForQuota. */
static int64_t q_available_unlimited(const struct qnode *n, int32_t s)
{
	const struct qslot *q = &n->slots[s];
	if (!n->parent)
		return sat_sub(q->subtree, q->usage);
	return sat_add(q_local_available(n, s), q_available_unlimited(n->parent, q->parent_slot));
}

int64_t q_potential_available(const struct qnode *n, int32_t s)
{
	const struct qslot *q = &n->slots[s];
	if (!n->parent)
		return q->subtree;
	int64_t avail = sat_add(q->local, q_potential_available(n->parent, q->parent_slot));
	if (q->has_borrowing_limit)
		avail = min64(avail, sat_add(q->subtree, q->borrowing_limit));
	return avail;
}

void q_add_usage(struct qnode *n, int32_t s, int64_t v)
{
	MUSTER_ASSERT(v >= 0); /* a charge is what pods request: never negative */
	while (n) {
		struct qslot *q = &n->slots[s];
		int64_t local_available = q_local_available(n, s);
		q->usage = sat_add(q->usage, v);
		/* What the local quota can't hold is charged to the parent. */
		if (!n->parent || v <= local_available)
			return;
		v -= local_available;
		s = q->parent_slot;
		n = n->parent;
	}
}

void q_remove_usage(struct qnode *n, int32_t s, int64_t v)
{
	while (n) {
		struct qslot *q = &n->slots[s];
		int64_t stored_in_parent = sat_sub(q->usage, q->local);
		q->usage = sat_sub(q->usage, v);
		/* Usage is never negative: nothing is released that was not charged. */
		MUSTER_ASSERT(v >= 0 && q->usage >= 0);
		if (stored_in_parent <= 0 || !n->parent)
			return;
		v = min64(v, stored_in_parent);
		s = q->parent_slot;
		n = n->parent;
	}
}

static uint32_t slot_hash(const char *flavor, const char *resource)
{
	uint64_t h = (uint64_t)(uintptr_t)flavor * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)(uintptr_t)resource + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
	return (uint32_t)(h ^ (h >> 32));
}

int32_t qnode_find(const struct qnode *n, const char *flavor, const char *resource)
{
	if (n->index_cap == 0) {
		for (uint32_t i = 0; i < n->n_slots; i++)
			if (n->slots[i].flavor == flavor && n->slots[i].resource == resource)
				return (int32_t)i;
		return -1;
	}
	uint32_t mask = n->index_cap - 1;
	for (uint32_t i = slot_hash(flavor, resource) & mask;; i = (i + 1) & mask) {
		int32_t s = n->index[i];
		if (s < 0)
			return -1;
		if (n->slots[s].flavor == flavor && n->slots[s].resource == resource)
			return s;
	}
}

int qnode_index(struct qnode *n)
{
	free(n->index);
	n->index = NULL;
	n->index_cap = 0;
	/* Small nodes are searched linearly: a few pointer compares beat hashing. */
	if (n->n_slots <= 8)
		return 0;
	uint32_t cap = 16;
	while (cap < n->n_slots * 2)
		cap *= 2;
	n->index = malloc(cap * sizeof(*n->index));
	if (!n->index)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		n->index[i] = -1;
	n->index_cap = cap;
	for (uint32_t s = 0; s < n->n_slots; s++) {
		uint32_t i = slot_hash(n->slots[s].flavor, n->slots[s].resource) & (cap - 1);
		while (n->index[i] >= 0)
			i = (i + 1) & (cap - 1);
		n->index[i] = (int32_t)s;
	}
	return 0;
}

int eng_borrow_height(const struct ecq *cq, int32_t s, int64_t val, int *may_reclaim)
{
	const struct qnode *n = &cq->node;
	const struct qslot *q = &n->slots[s];
	int has_parent = n->parent != NULL;
	if (!(q->nominal < sat_add(q->usage, val)) || !has_parent) {
		*may_reclaim = has_parent;
		return 0;
	}
	int64_t remaining = sat_sub(val, q_local_available(n, s));
	const struct qnode *node = n->parent, *root = n->parent;
	int32_t slot = q->parent_slot;
	while (node) {
		const struct qslot *t = &node->slots[slot];
		if (!(t->subtree < sat_add(t->usage, remaining))) {
			*may_reclaim = node->parent != NULL;
			return node->height;
		}
		remaining = sat_sub(remaining, q_local_available(node, slot));
		root = node;
		slot = t->parent_slot;
		node = node->parent;
	}
	*may_reclaim = 0;
	return root->height;
}

struct qnode *eng_root(struct ecq *cq)
{
	struct qnode *n = &cq->node;
	while (n->parent)
		n = n->parent;
	return n;
}

int32_t eng_root_slot(const struct ecq *cq, int32_t s)
{
	const struct qnode *n = &cq->node;
	while (n->parent && s >= 0) {
		s = n->slots[s].parent_slot;
		n = n->parent;
	}
	return s;
}

void eng_resolve_slots(const struct ecq *cq, struct eitem *items, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		items[i].slot = qnode_find(&cq->node, items[i].flavor, items[i].resource);
}

void eng_charge_items(struct ecq *cq, const struct eitem *items, uint32_t n, int sign)
{
	for (uint32_t i = 0; i < n; i++) {
		if (items[i].slot < 0 || items[i].amount == 0)
			continue;
		if (sign > 0)
			q_add_usage(&cq->node, items[i].slot, items[i].amount);
		else
			q_remove_usage(&cq->node, items[i].slot, items[i].amount);
	}
}

void eng_charge(struct ecq *cq, const struct eadm *a, int sign)
{
	eng_charge_items(cq, a->items, a->n_items, sign);
}

int eng_cq_group_of(const struct ecq *cq, const char *resource, uint32_t *g, uint32_t *r)
{
	for (uint32_t i = 0; i < cq->groups.n; i++) {
		const struct egroup *grp = &cq->groups.g[i];
		for (uint32_t k = 0; k < grp->n_cov; k++) {
			if (grp->cov[k] == resource) {
				*g = i;
				*r = k;
				return 1;
			}
		}
	}
	return 0;
}

/* --- messages -------------------------------------------------------------------------- */

static void reasons_reset(struct reasons *rs)
{
	rs->n = 0;
	rs->used = 0;
}

static void reasons_addf(struct reasons *rs, enum cause cause, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void reasons_addf(struct reasons *rs, enum cause cause, const char *fmt, ...)
{
	if (rs->n >= sizeof(rs->r) / sizeof(rs->r[0]) || rs->used >= sizeof(rs->buf) - 1)
		return; /* a message this long is cut anyway */
	va_list ap;
	va_start(ap, fmt);
	char *dst = rs->buf + rs->used;
	size_t room = sizeof(rs->buf) - rs->used;
	/* Not vsnprintf: a message per pending workload made it a tenth of a large cycle. */
	int len = strfmt_v(dst, room, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	rs->cause[rs->n] = (uint8_t)cause;
	rs->len[rs->n] = (uint16_t)((size_t)len < room ? (size_t)len : room - 1);
	rs->r[rs->n++] = dst;
	rs->used += (size_t)len < room ? (size_t)len + 1 : room;
}

/* A piece of a reason: text and its length. The quota reasons, one or two per flavor tried of
 * nearly every pending workload, are joined from pieces: no format to parse, no strlen of
 * literals. */
struct piece {
	const char *s;
	size_t n;
};

#define PIECE_LIT(lit) ((struct piece){ (lit), sizeof(lit) - 1 })

static struct piece piece_str(const char *s)
{
	return (struct piece){ s, strlen(s) };
}

/* reasons_addf's result for the text of the pieces joined, cut the same way. */
static void reasons_add(struct reasons *rs, enum cause cause, const struct piece *p, size_t n)
{
	if (rs->n >= sizeof(rs->r) / sizeof(rs->r[0]) || rs->used >= sizeof(rs->buf) - 1)
		return;
	char *dst = rs->buf + rs->used;
	size_t room = sizeof(rs->buf) - rs->used, len = 0, total = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = p[i].n < room - 1 - len ? p[i].n : room - 1 - len;
		memcpy(dst + len, p[i].s, k);
		len += k;
		total += p[i].n;
	}
	dst[len] = '\0';
	rs->cause[rs->n] = (uint8_t)cause;
	rs->len[rs->n] = (uint16_t)len;
	rs->r[rs->n++] = dst;
	rs->used += total < room ? total + 1 : room;
}

/* Appends n bytes to a message of known length, cutting it at ENG_MSG_MAX. */
static void msg_append_n(char *msg, size_t *len, const char *s, size_t n)
{
	if (*len + n >= ENG_MSG_MAX)
		n = ENG_MSG_MAX - 1 - *len;
	memcpy(msg + *len, s, n);
	*len += n;
	msg[*len] = '\0';
}

static void msg_append(char *msg, size_t *len, const char *s)
{
	msg_append_n(msg, len, s, strlen(s));
}

const char *eng_cause_why(int cause)
{
	switch (cause) {
	case CAUSE_NO_MATCH:
		return ENG_WHY_NO_MATCHING_FLAVOR;
	case CAUSE_EXCEEDS:
		return ENG_WHY_EXCEEDS_MAX_QUOTA;
	case CAUSE_BORROW_LIMIT:
		return ENG_WHY_BORROWING_LIMIT;
	default:
		return ENG_WHY_WAITING_FOR_QUOTA;
	}
}

/* Folds one podSet's reasons (from on) into the evaluation's cause: the podSet matched no
 * flavor when all its reasons say so, and that outranks any quota reason; otherwise the most
 * severe quota reason wins (KEP-10852's multi-podSet rule). */
static void fold_cause(struct eval *ev, const struct reasons *rs, uint32_t from)
{
	int c = CAUSE_NONE, all_no_match = rs->n > from;
	for (uint32_t i = from; i < rs->n; i++) {
		if (rs->cause[i] == CAUSE_NO_MATCH)
			continue;
		all_no_match = 0;
		if (c == CAUSE_NONE || rs->cause[i] < c)
			c = rs->cause[i];
	}
	if (all_no_match)
		c = CAUSE_NO_MATCH;
	if (c != CAUSE_NONE && (ev->cause == CAUSE_NONE || c < ev->cause))
		ev->cause = c;
}

/* Kueue's Assignment.Message for one podSet: its reasons sorted and joined with ", ". The
 * causes are folded first: sorting reorders the messages, not their causes. */
static void msg_podset(struct eval *ev, const char *podset, struct reasons *rs, uint32_t from)
{
	char *msg = ev->msg;
	fold_cause(ev, rs, from);
	size_t len = strlen(msg);
	if (len)
		msg_append(msg, &len, "; ");
	msg_append(msg, &len, "couldn't assign flavors to pod set ");
	msg_append(msg, &len, podset);
	msg_append(msg, &len, ": ");
	/* Sorted by insertion: a podSet has a reason or two per flavor, and qsort's setup cost
	 * more than the sorting. Equal reasons are equal text, so any sort writes the same. */
	for (uint32_t i = from + 1; i < rs->n; i++) {
		const char *r = rs->r[i];
		uint16_t n = rs->len[i];
		uint32_t k = i;
		for (; k > from && strcmp(rs->r[k - 1], r) > 0; k--) {
			rs->r[k] = rs->r[k - 1];
			rs->len[k] = rs->len[k - 1];
		}
		rs->r[k] = r;
		rs->len[k] = n;
	}
	for (uint32_t i = from; i < rs->n; i++) {
		if (i > from)
			msg_append_n(msg, &len, ", ", 2);
		msg_append_n(msg, &len, rs->r[i], rs->len[i]);
	}
}

/* --- flavor assignment ------------------------------------------------------------------- */

/* Kueue's isPreferred: whether mode a is better than b under the ClusterQueue's fungibility. */
static int is_preferred(struct gmode a, struct gmode b, const struct ecq *cq)
{
	if (a.pm == PM_NOFIT)
		return 0;
	if (b.pm == PM_NOFIT)
		return 1;
	int a_none = a.pm == PM_NO_CANDIDATES, b_none = b.pm == PM_NO_CANDIDATES;
	if (a_none != b_none)
		return !a_none;
	if (cq->prefer_preemption) {
		if (a.borrow != b.borrow)
			return a.borrow < b.borrow;
		return a.pm > b.pm;
	}
	if (a.pm != b.pm)
		return a.pm > b.pm;
	return a.borrow < b.borrow;
}

static int should_try_next_flavor(struct gmode m, const struct ecq *cq)
{
	if (m.pm == PM_NOFIT || m.pm == PM_NO_CANDIDATES)
		return 1;
	if ((m.pm == PM_PREEMPT || m.pm == PM_RECLAIM) &&
	    cq->when_can_preempt == ENG_PREEMPT_TRY_NEXT_FLAVOR)
		return 1;
	if (m.borrow != 0 && cq->when_can_borrow == ENG_BORROW_TRY_NEXT_FLAVOR)
		return 1;
	return 0;
}

static int may_preempt_at_all(const struct ecq *cq)
{
	return cq->preemption.within_cluster_queue != ENG_WITHIN_NEVER ||
	       (cq->node.parent && cq->preemption.reclaim_within_cohort != ENG_RECLAIM_NEVER);
}

/* Kueue's fitsResourceQuota for one (flavor, resource). */
static struct gmode fits_resource_quota(struct engine *e, struct ecq *cq, const struct ewl *w,
					int32_t s, int64_t assumed, int64_t request,
					const struct assign_opts *opts, int *err)
{
	const struct qslot *q = &cq->node.slots[s];
	int64_t available = max64(0, q_available(&cq->node, s));
	int64_t max_capacity = q_potential_available(&cq->node, s);
	int64_t val = sat_add(assumed, request);
	char a[48], b[48], c[48];

	if (val > max_capacity) {
		if (opts->messages) {
			size_t na = quota_format_amount_in(q->in_bytes, assumed, a, sizeof(a));
			size_t nb = quota_format_amount_in(q->in_bytes, request, b, sizeof(b));
			size_t nc = quota_format_amount_in(q->in_bytes, max_capacity, c, sizeof(c));
			const struct piece p[] = {
				PIECE_LIT("insufficient quota for "),
				piece_str(q->resource),
				PIECE_LIT(" in flavor "),
				piece_str(q->flavor),
				PIECE_LIT(", previously considered podsets requests ("),
				{ a, na },
				PIECE_LIT(") + current podset request ("),
				{ b, nb },
				PIECE_LIT(") > maximum capacity ("),
				{ c, nc },
				PIECE_LIT(")"),
			};
			reasons_add(&e->reasons, CAUSE_EXCEEDS, p, sizeof(p) / sizeof(p[0]));
		}
		return (struct gmode){ PM_NOFIT, 0 };
	}
	int may_reclaim;
	int borrow = eng_borrow_height(cq, s, val, &may_reclaim);
	if (val <= available)
		return (struct gmode){ PM_FIT, borrow };
	if (opts->messages) {
		size_t na = quota_format_amount_in(q->in_bytes, val - available, a, sizeof(a));
		/* Blocked by a borrowing limit when the tree's unused quota would cover it. */
		enum cause cause = val <= q_available_unlimited(&cq->node, s) ? CAUSE_BORROW_LIMIT :
										CAUSE_WAIT;
		const struct piece p[] = {
			PIECE_LIT("insufficient unused quota for "),
			piece_str(q->resource),
			PIECE_LIT(" in flavor "),
			piece_str(q->flavor),
			PIECE_LIT(", "),
			{ a, na },
			PIECE_LIT(" more needed"),
		};
		reasons_add(&e->reasons, cause, p, sizeof(p) / sizeof(p[0]));
	}
	/* Kueue's canPreemptWhileBorrowing: borrowWithinCohort, or fair sharing with
	 * reclaimWithinCohort (its strategies decide). */
	int can_preempt_while_borrowing =
		cq->preemption.borrow_within_cohort != ENG_BORROW_WITHIN_NEVER ||
		(e->fs.enabled && cq->preemption.reclaim_within_cohort != ENG_RECLAIM_NEVER);
	if (q->nominal >= val || may_reclaim || can_preempt_while_borrowing) {
		/* Without any policy that could pick a victim the simulation finds none. */
		if (opts->quick || !may_preempt_at_all(cq))
			return (struct gmode){ PM_NO_CANDIDATES, borrow };
		int borrow_after = borrow;
		int pm = e->oracle(e, cq, w, s, val, &borrow_after);
		if (pm < 0) {
			*err = pm;
			return (struct gmode){ PM_NOFIT, 0 };
		}
		return (struct gmode){ pm, borrow_after };
	}
	return (struct gmode){ PM_NOFIT, borrow };
}

struct request {
	const char *resource;
	int64_t amount;
	uint32_t group, pos;
};

/* The per-resource outcome of trying one flavor. */
struct flavor_try {
	struct gmode mode;
	int pm[ENG_MAX_REQUESTS];
	int borrow[ENG_MAX_REQUESTS];
};

/* Kueue's findFlavorForPodSets for one resource group: the chosen flavor index (or -1), its
 * per-resource modes in *best. Reasons go to e->reasons (dropped by the caller on a fit). */
static int find_flavor(struct engine *e, struct ecq *cq, const struct ewl *w, const struct wps *ps,
		       uint32_t g, const struct request *req, const uint32_t *members,
		       uint32_t n_members, const struct assign_opts *opts, struct flavor_try *best,
		       int *err)
{
	const struct egroup *grp = &cq->groups.g[g];
	struct flavor_try cur;
	int chosen = -1;

	best->mode = (struct gmode){ PM_NOFIT, 1 << 30 };
	for (uint32_t f = 0; f < grp->n_fl; f++) {
		const struct quota_flavor *flavor = grp->flavor[f];
		if (!flavor) {
			if (opts->messages)
				reasons_addf(&e->reasons, CAUSE_NO_MATCH, "flavor %s not found",
					     grp->fl[f]);
			continue;
		}
		const struct quota_taint *taint;
		enum quota_mismatch mm = quota_flavor_match(flavor, &ps->pod, &taint);
		if (mm != QUOTA_MATCH) {
			if (!opts->messages)
				continue;
			/* Kueue prints the taint struct with Go's %s. */
			if (mm == QUOTA_MISMATCH_TAINT)
				reasons_addf(&e->reasons, CAUSE_NO_MATCH,
					     "untolerated taint {%s %s %s <nil>} in flavor %s",
					     taint->key ? taint->key : "",
					     taint->value ? taint->value : "",
					     taint->effect ? taint->effect : "", grp->fl[f]);
			else
				reasons_addf(&e->reasons, CAUSE_NO_MATCH,
					     "flavor %s doesn't match node affinity", grp->fl[f]);
			continue;
		}
		cur.mode = (struct gmode){ PM_FIT, 0 };
		for (uint32_t k = 0; k < n_members; k++) {
			const struct request *r = &req[members[k]];
			int32_t s = grp->slot[f * grp->n_cov + r->pos];
			struct gmode m =
				fits_resource_quota(e, cq, w, s, e->acc[s], r->amount, opts, err);
			if (*err)
				return -1;
			if (is_preferred(cur.mode, m, cq))
				cur.mode = m;
			if (cur.mode.pm == PM_NOFIT)
				break;
			cur.pm[k] = m.pm;
			cur.borrow[k] = m.borrow;
		}
		if (!should_try_next_flavor(cur.mode, cq)) {
			*best = cur;
			chosen = (int)f;
			break;
		}
		if (is_preferred(cur.mode, best->mode, cq)) {
			*best = cur;
			chosen = (int)f;
		}
	}
	return chosen;
}

/* Records what a group that doesn't fit lacks, per flavor: its most lacking resource. Only
 * for ClusterQueues that can't preempt: one that can may get in without any quota released
 * (a victim appears, or stops being claimed), so released quota is no bound for it. */
static void record_needs(struct ecq *cq, const struct wps *ps, uint32_t g,
			 const struct request *req, const uint32_t *members, uint32_t n_members,
			 struct needs *out)
{
	const struct egroup *grp = &cq->groups.g[g];
	struct qnode *root = eng_root(cq);
	out->n = 0;
	if (grp->n_fl > ENG_NEEDS || may_preempt_at_all(cq))
		return; /* unknown: always look again */
	for (uint32_t f = 0; f < grp->n_fl; f++) {
		struct need *nd = &out->v[f];
		*nd = (struct need){ -1, -1, 0, INT64_MAX, 0 };
		const struct quota_flavor *flavor = grp->flavor[f];
		if (!flavor || quota_flavor_match(flavor, &ps->pod, NULL) != QUOTA_MATCH)
			continue; /* only a spec change helps, and that requeues everything */
		int64_t worst = 0, worst_val = 0;
		int32_t worst_slot = -1;
		int never = 0;
		for (uint32_t k = 0; k < n_members && !never; k++) {
			int32_t s = grp->slot[f * grp->n_cov + req[members[k]].pos];
			/* Earlier podSets may take other flavors next time: only this one's own
			 * request is sure to be needed here. */
			int64_t val = req[members[k]].amount;
			never = val > q_potential_available(&cq->node, s);
			int64_t deficit =
				max64(0, sat_sub(val, max64(0, q_available(&cq->node, s))));
			if (deficit > worst) {
				worst = deficit;
				worst_val = val;
				worst_slot = s;
			}
		}
		if (never)
			continue;
		if (worst == 0 || worst_slot < 0 || eng_root_slot(cq, worst_slot) < 0)
			return; /* it fits as far as quota goes: no bound (n stays 0) */
		nd->slot = eng_root_slot(cq, worst_slot);
		nd->cq_slot = worst_slot;
		nd->val = worst_val;
		nd->deficit = worst;
		nd->base = root->slots[nd->slot].released;
	}
	out->n = (uint8_t)grp->n_fl;
}

static int mul_checked(int64_t a, int64_t b, int64_t *out)
{
	if (a != 0 && b != 0 && (a > INT64_MAX / b || a < INT64_MIN / b))
		return -ERANGE;
	*out = a * b;
	return 0;
}

int eng_assign(struct engine *e, struct ecq *cq, const struct ewl *w, const int64_t *counts,
	       const struct assign_opts *opts, struct eval *ev)
{
	const struct wspec *spec = w->spec;
	const char *pods = e->pods;
	struct request req[ENG_MAX_REQUESTS];
	uint32_t members[ENG_MAX_REQUESTS];
	struct flavor_try best;
	int err = 0;

	ev->n_items = 0;
	ev->borrow = 0;
	ev->mode = PM_FIT;
	ev->needs.n = 0;
	ev->cause = CAUSE_NONE;
	int needs_done = !opts->needs;
	ev->n_podsets = spec->n_podsets;
	ev->msg[0] = '\0';
	if (GROW(e->acc, e->cap_acc, cq->node.n_slots) != 0)
		return -ENOMEM;
	if (cq->node.n_slots) /* a ClusterQueue without resource groups has none (acc NULL) */
		memset(e->acc, 0, cq->node.n_slots * sizeof(*e->acc));

	for (uint32_t i = 0; i < spec->n_podsets; i++) {
		const struct wps *ps = &spec->ps[i];
		uint32_t n_req = 0;
		ev->count[i] = counts[i];
		reasons_reset(&e->reasons);

		for (size_t r = 0; r < ps->pod.n_requests; r++) {
			const char *res = ps->pod.resources[r];
			int64_t amount;
			uint32_t g, pos;
			if (cq->covers_pods && res == pods)
				continue; /* Kueue sets "pods" to the pod count itself */
			if (mul_checked(ps->pod.per_pod[r], counts[i], &amount) != 0) {
				if (opts->messages)
					snprintf(ev->msg, ENG_MSG_MAX,
						 "couldn't assign flavors to pod set %s: request "
						 "for %s times %lld pods overflows",
						 ps->name, res, (long long)counts[i]);
				ev->mode = PM_NOFIT;
				ev->cause = CAUSE_EXCEEDS;
				return 0;
			}
			if (!eng_cq_group_of(cq, res, &g, &pos)) {
				if (amount == 0)
					continue; /* as Kueue (#8079): a zero request needs no
						     flavor */
				if (opts->messages) {
					reasons_addf(&e->reasons, CAUSE_NO_MATCH,
						     "resource %s unavailable in ClusterQueue",
						     res);
					msg_podset(ev, ps->name, &e->reasons, 0);
				}
				ev->mode = PM_NOFIT;
				return 0;
			}
			req[n_req++] = (struct request){ res, amount, g, pos };
		}
		if (cq->covers_pods) {
			uint32_t g, pos;
			if (n_req == QUOTA_MAX_RESOURCES) {
				if (opts->messages)
					snprintf(ev->msg, ENG_MSG_MAX,
						 "couldn't assign flavors to pod set %s: more than "
						 "%d resources requested",
						 ps->name, QUOTA_MAX_RESOURCES);
				ev->mode = PM_NOFIT;
				ev->cause = CAUSE_NO_MATCH;
				return 0;
			}
			int64_t amount;
			if (mul_checked(counts[i], 1000, &amount) != 0 ||
			    !eng_cq_group_of(cq, pods, &g, &pos)) {
				ev->mode = PM_NOFIT;
				ev->cause = CAUSE_NO_MATCH;
				return 0;
			}
			req[n_req++] = (struct request){ pods, amount, g, pos };
		}

		int podset_fit = 1;
		uint32_t first_item = ev->n_items;
		for (uint32_t g = 0; g < cq->groups.n; g++) {
			uint32_t n_members = 0;
			for (uint32_t k = 0; k < n_req; k++)
				if (req[k].group == g)
					members[n_members++] = k;
			if (n_members == 0)
				continue;
			uint32_t mark = e->reasons.n;
			size_t mark_used = e->reasons.used;
			int f = find_flavor(e, cq, w, ps, g, req, members, n_members, opts, &best,
					    &err);
			if (err)
				return err;
			if (f < 0) {
				/* Kueue keeps only the failing group's reasons for the message. */
				if (opts->messages)
					msg_podset(ev, ps->name, &e->reasons, mark);
				if (!needs_done)
					record_needs(cq, ps, g, req, members, n_members,
						     &ev->needs);
				ev->mode = PM_NOFIT;
				return 0;
			}
			/* Under PreemptionOverBorrowing Kueue ranks "fits by borrowing" below "fits
			 * by preempting", so a flavor whose representative mode is a fit can still
			 * hold a resource that needs preemption: the resources' own modes decide.
			 */
			int group_fit = best.mode.pm == PM_FIT;
			for (uint32_t k = 0; k < n_members; k++)
				group_fit &= best.pm[k] == PM_FIT;
			if (group_fit) {
				e->reasons.n = mark;
				e->reasons.used = mark_used;
			} else {
				podset_fit = 0;
				if (!needs_done) {
					record_needs(cq, ps, g, req, members, n_members,
						     &ev->needs);
					needs_done = 1;
				}
			}
			const struct egroup *grp = &cq->groups.g[g];
			for (uint32_t k = 0; k < n_members; k++) {
				const struct request *r = &req[members[k]];
				struct eitem *it = &ev->items[ev->n_items++];
				it->resource = r->resource;
				it->flavor = grp->fl[f];
				it->amount = r->amount;
				it->slot = grp->slot[(uint32_t)f * grp->n_cov + r->pos];
				it->podset = (uint16_t)i;
				it->preempt = best.pm[k] != PM_FIT;
				if (best.borrow[k] > ev->borrow)
					ev->borrow = best.borrow[k];
			}
		}
		/* Later podSets see this one's usage. */
		for (uint32_t k = first_item; k < ev->n_items; k++)
			e->acc[ev->items[k].slot] =
				sat_add(e->acc[ev->items[k].slot], ev->items[k].amount);
		if (!podset_fit) {
			ev->mode = PM_PREEMPT;
			if (opts->messages)
				msg_podset(ev, ps->name, &e->reasons, 0);
		}
	}
	return 0;
}

int eng_fits_now(struct engine *e, struct ecq *cq, const struct eitem *items, uint32_t n)
{
	/* The caller's evaluation sized e->acc for this ClusterQueue. */
	for (uint32_t i = 0; i < n; i++)
		if (items[i].slot >= 0)
			e->acc[items[i].slot] = 0;
	for (uint32_t i = 0; i < n; i++)
		if (items[i].slot >= 0)
			e->acc[items[i].slot] = sat_add(e->acc[items[i].slot], items[i].amount);
	for (uint32_t i = 0; i < n; i++) {
		int32_t s = items[i].slot;
		if (s < 0)
			return 0;
		if (e->acc[s] > max64(0, q_available(&cq->node, s)))
			return 0;
	}
	return 1;
}
