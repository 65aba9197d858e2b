/* SPDX-License-Identifier: Apache-2.0 */
#include "core/quota.h"

#include "core/quantity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_kvs(struct quota_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

static void free_taints(struct quota_taint *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].key);
		free(t[i].value);
		free(t[i].effect);
	}
	free(t);
}

void quota_flavor_free(struct quota_flavor *f)
{
	if (!f)
		return;
	free(f->name);
	free_kvs(f->labels, f->n_labels);
	free_taints(f->taints, f->n_taints);
	free_taints(f->tolerations, f->n_tolerations);
	free(f);
}

void quota_cq_free(struct quota_cq *cq)
{
	if (!cq)
		return;
	for (size_t g = 0; g < cq->n_groups; g++) {
		struct quota_group *grp = &cq->groups[g];
		for (size_t r = 0; r < grp->n_resources; r++)
			free(grp->resources[r]);
		free(grp->resources);
		for (size_t f = 0; f < grp->n_flavors; f++) {
			free(grp->flavors[f].flavor);
			free(grp->flavors[f].nominal);
		}
		free(grp->flavors);
	}
	free(cq->groups);
	free(cq->usage);
	free(cq->name);
	free(cq);
}

void quota_charge_free(struct quota_charge *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->items[i].flavor);
		free(c->items[i].resource);
	}
	free(c->items);
	free(c->cq);
	free(c);
}

static void free_flavor_value(void *p)
{
	quota_flavor_free(p);
}

static void free_cq_value(void *p)
{
	quota_cq_free(p);
}

static void free_charge_value(void *p)
{
	quota_charge_free(p);
}

void quota_model_init(struct quota_model *m)
{
	strmap_init(&m->flavors);
	strmap_init(&m->cqs);
	strmap_init(&m->charges);
}

void quota_model_release(struct quota_model *m)
{
	strmap_release(&m->flavors, free_flavor_value);
	strmap_release(&m->cqs, free_cq_value);
	strmap_release(&m->charges, free_charge_value);
}

/* Index of the (flavor, resource) cell in cq's flattened usage array, or -1. */
static long cell_index(const struct quota_cq *cq, const char *flavor, const char *resource)
{
	size_t base = 0;
	for (size_t g = 0; g < cq->n_groups; g++) {
		const struct quota_group *grp = &cq->groups[g];
		for (size_t r = 0; r < grp->n_resources; r++) {
			if (strcmp(grp->resources[r], resource) != 0)
				continue;
			for (size_t f = 0; f < grp->n_flavors; f++)
				if (!strcmp(grp->flavors[f].flavor, flavor))
					return (long)(base + f * grp->n_resources + r);
			return -1; /* a resource belongs to exactly one group */
		}
		base += grp->n_flavors * grp->n_resources;
	}
	return -1;
}

static void apply_charge(struct quota_cq *cq, const struct quota_charge *c, int sign)
{
	for (size_t i = 0; i < c->n; i++) {
		long idx = cell_index(cq, c->items[i].flavor, c->items[i].resource);
		if (idx >= 0)
			cq->usage[idx] += sign * c->items[i].amount;
	}
}

int quota_set_flavor(struct quota_model *m, struct quota_flavor *f)
{
	void *old;
	int rc = strmap_put(&m->flavors, f->name, f, &old);
	if (rc != 0) {
		quota_flavor_free(f);
		return rc;
	}
	quota_flavor_free(old);
	return 0;
}

void quota_remove_flavor(struct quota_model *m, const char *name)
{
	quota_flavor_free(strmap_remove(&m->flavors, name));
}

int quota_set_cq(struct quota_model *m, struct quota_cq *cq)
{
	size_t cells = 0;
	for (size_t g = 0; g < cq->n_groups; g++)
		cells += cq->groups[g].n_flavors * cq->groups[g].n_resources;
	cq->n_cells = cells;
	cq->usage = calloc(cells ? cells : 1, sizeof(*cq->usage));
	if (!cq->usage) {
		quota_cq_free(cq);
		return -ENOMEM;
	}
	/* Recompute usage from the recorded charges: a spec change never loses admitted work. */
	for (size_t i = 0; i < m->charges.cap; i++) {
		const struct quota_charge *c = m->charges.slots[i].value;
		if (m->charges.slots[i].key && !strcmp(c->cq, cq->name))
			apply_charge(cq, c, +1);
	}
	void *old;
	int rc = strmap_put(&m->cqs, cq->name, cq, &old);
	if (rc != 0) {
		quota_cq_free(cq);
		return rc;
	}
	quota_cq_free(old);
	return 0;
}

void quota_remove_cq(struct quota_model *m, const char *name)
{
	quota_cq_free(strmap_remove(&m->cqs, name));
}

const struct quota_cq *quota_get_cq(const struct quota_model *m, const char *name)
{
	return strmap_get(&m->cqs, name);
}

int quota_charge(struct quota_model *m, const char *key, struct quota_charge *c)
{
	quota_uncharge(m, key);
	int rc = strmap_put(&m->charges, key, c, NULL);
	if (rc != 0) {
		quota_charge_free(c);
		return rc;
	}
	struct quota_cq *cq = strmap_get(&m->cqs, c->cq);
	if (cq)
		apply_charge(cq, c, +1);
	return 0;
}

void quota_uncharge(struct quota_model *m, const char *key)
{
	struct quota_charge *c = strmap_remove(&m->charges, key);
	if (!c)
		return;
	struct quota_cq *cq = strmap_get(&m->cqs, c->cq);
	if (cq)
		apply_charge(cq, c, -1);
	quota_charge_free(c);
}

int quota_is_charged(const struct quota_model *m, const char *key)
{
	return strmap_get(&m->charges, key) != NULL;
}

int quota_cq_active(const struct quota_model *m, const struct quota_cq *cq, char *reason,
		    size_t reason_len, char *msg, size_t msg_len)
{
	for (size_t g = 0; g < cq->n_groups; g++) {
		for (size_t f = 0; f < cq->groups[g].n_flavors; f++) {
			const char *name = cq->groups[g].flavors[f].flavor;
			if (!strmap_get(&m->flavors, name)) {
				snprintf(reason, reason_len, "FlavorNotFound");
				snprintf(msg, msg_len,
					 "Can't admit new workloads: references missing ResourceFlavor %s",
					 name);
				return 0;
			}
		}
	}
	snprintf(reason, reason_len, "Ready");
	snprintf(msg, msg_len, "Can admit new workloads");
	return 1;
}

int quota_cell(const struct quota_cq *cq, const char *flavor, const char *resource,
	       int64_t *nominal, int64_t *usage)
{
	size_t base = 0;
	for (size_t g = 0; g < cq->n_groups; g++) {
		const struct quota_group *grp = &cq->groups[g];
		for (size_t r = 0; r < grp->n_resources; r++) {
			if (strcmp(grp->resources[r], resource) != 0)
				continue;
			for (size_t f = 0; f < grp->n_flavors; f++) {
				if (strcmp(grp->flavors[f].flavor, flavor) != 0)
					continue;
				*nominal = grp->flavors[f].nominal[r];
				*usage = cq->usage[base + f * grp->n_resources + r];
				return 0;
			}
			return -ENOENT;
		}
		base += grp->n_flavors * grp->n_resources;
	}
	return -ENOENT;
}

static int taint_tolerated(const struct quota_taint *tol, const struct quota_taint *taint)
{
	if (tol->effect && *tol->effect && strcmp(tol->effect, taint->effect ? taint->effect : "") != 0)
		return 0;
	if (!tol->key || !*tol->key) /* an empty key with Exists tolerates every taint */
		return tol->exists;
	if (strcmp(tol->key, taint->key ? taint->key : "") != 0)
		return 0;
	if (tol->exists)
		return 1;
	return !strcmp(tol->value ? tol->value : "", taint->value ? taint->value : "");
}

int quota_tolerates(const struct quota_taint *tolerations, size_t n, const struct quota_taint *taint)
{
	for (size_t i = 0; i < n; i++)
		if (taint_tolerated(&tolerations[i], taint))
			return 1;
	return 0;
}

static const char *label_value(const struct quota_flavor *f, const char *key)
{
	for (size_t i = 0; i < f->n_labels; i++)
		if (!strcmp(f->labels[i].key, key))
			return f->labels[i].value;
	return NULL;
}

/* Parses a base-10 int64 for Gt/Lt; returns 0 when s is not one. */
static int parse_i64(const char *s, long long *out)
{
	char *end;
	if (!s || !*s)
		return 0;
	*out = strtoll(s, &end, 10);
	return *end == '\0';
}

/* Evaluates a match expression against the flavor's labels. Keys the flavor does not set are
 * not decided by the flavor (the node will decide), so they match, as in Kueue. */
static int expr_matches(const struct quota_flavor *f, const struct quota_match_expr *e)
{
	const char *value = label_value(f, e->key);
	if (!value)
		return 1;
	if (!strcmp(e->op, "Exists"))
		return 1;
	if (!strcmp(e->op, "DoesNotExist"))
		return 0;
	if (!strcmp(e->op, "In") || !strcmp(e->op, "NotIn")) {
		int found = 0;
		for (size_t i = 0; i < e->n_values; i++)
			found |= !strcmp(e->values[i], value);
		return !strcmp(e->op, "In") ? found : !found;
	}
	if (!strcmp(e->op, "Gt") || !strcmp(e->op, "Lt")) {
		long long have, want;
		if (e->n_values != 1 || !parse_i64(value, &have) || !parse_i64(e->values[0], &want))
			return 0;
		return !strcmp(e->op, "Gt") ? have > want : have < want;
	}
	return 0;
}

/* Index of the first nodeSelector entry the flavor's labels contradict, or -1. Keys the flavor
 * doesn't set are decided by the node, not the flavor, so they match. */
static long selector_conflict(const struct quota_flavor *f, const struct quota_podset *ps)
{
	for (size_t i = 0; i < ps->n_selector; i++) {
		const char *v = label_value(f, ps->node_selector[i].key);
		if (v && strcmp(v, ps->node_selector[i].value) != 0)
			return (long)i;
	}
	return -1;
}

static int affinity_matches(const struct quota_flavor *f, const struct quota_podset *ps)
{
	if (ps->n_terms == 0)
		return 1;
	for (size_t t = 0; t < ps->n_terms; t++) {
		/* An empty term matches nothing, as in Kubernetes. */
		int all = ps->terms[t].n_exprs > 0 || ps->terms[t].has_match_fields;
		for (size_t e = 0; e < ps->terms[t].n_exprs && all; e++)
			all = expr_matches(f, &ps->terms[t].exprs[e]);
		if (all)
			return 1;
	}
	return 0;
}

static const struct quota_taint *untolerated_taint(const struct quota_flavor *f,
						   const struct quota_podset *ps)
{
	for (size_t i = 0; i < f->n_taints; i++) {
		const struct quota_taint *taint = &f->taints[i];
		/* PreferNoSchedule never keeps a pod off a node. */
		if (taint->effect && !strcmp(taint->effect, "PreferNoSchedule"))
			continue;
		if (!quota_tolerates(ps->tolerations, ps->n_tolerations, taint) &&
		    !quota_tolerates(f->tolerations, f->n_tolerations, taint))
			return taint;
	}
	return NULL;
}

enum quota_mismatch quota_flavor_match(const struct quota_flavor *f, const struct quota_podset *ps,
				       const struct quota_taint **taint)
{
	const struct quota_taint *t = untolerated_taint(f, ps);
	if (taint)
		*taint = t;
	/* Taints first, as Kueue checks them before labels. */
	if (t)
		return QUOTA_MISMATCH_TAINT;
	if (selector_conflict(f, ps) >= 0)
		return QUOTA_MISMATCH_SELECTOR;
	if (!affinity_matches(f, ps))
		return QUOTA_MISMATCH_AFFINITY;
	return QUOTA_MATCH;
}

/* Whether the podset's pods could run on this flavor's nodes; msg says why not. */
static int flavor_matches(const struct quota_flavor *f, const struct quota_podset *ps, char *msg,
			  size_t msg_len)
{
	long sel = selector_conflict(f, ps);
	if (sel >= 0) {
		snprintf(msg, msg_len, "flavor %s doesn't match node selector %s=%s", f->name,
			 ps->node_selector[sel].key, ps->node_selector[sel].value);
		return 0;
	}
	if (!affinity_matches(f, ps)) {
		snprintf(msg, msg_len, "flavor %s doesn't match the required node affinity", f->name);
		return 0;
	}
	const struct quota_taint *taint = untolerated_taint(f, ps);
	if (taint) {
		snprintf(msg, msg_len, "flavor %s has taint %s=%s:%s that the pods don't tolerate",
			 f->name, taint->key ? taint->key : "", taint->value ? taint->value : "",
			 taint->effect ? taint->effect : "");
		return 0;
	}
	return 1;
}

void quota_format_amount(const char *resource, int64_t milli, char *buf, size_t size)
{
	int bytes = resource && (!strcmp(resource, "memory") || !strcmp(resource, "ephemeral-storage") ||
				 !strcmp(resource, "storage") || !strncmp(resource, "hugepages-", 10));
	if (quantity_format_milli(milli, bytes ? QUANTITY_BINARY_SI : QUANTITY_DECIMAL_SI, buf, size) < 0)
		snprintf(buf, size, "%lldm", (long long)milli);
}

static int mul_checked(int64_t a, int64_t b, int64_t *out)
{
	if (a != 0 && b != 0 && (a > INT64_MAX / b || a < INT64_MIN / b))
		return -ERANGE;
	*out = a * b;
	return 0;
}

int quota_assign(const struct quota_model *m, const struct quota_cq *cq,
		 const struct quota_podset *ps, struct quota_assignment *out, char *msg,
		 size_t msg_len)
{
	int64_t totals[QUOTA_MAX_RESOURCES];
	int worst = 0;
	size_t base = 0;

	out->n = 0;
	snprintf(msg, msg_len, "fits");
	if (ps->n_requests > QUOTA_MAX_RESOURCES) {
		snprintf(msg, msg_len, "more than %d resources requested", QUOTA_MAX_RESOURCES);
		return -ENOENT;
	}
	/* Every requested resource must be covered by some group of the ClusterQueue. */
	for (size_t i = 0; i < ps->n_requests; i++) {
		if (mul_checked(ps->count, ps->per_pod[i], &totals[i]) != 0) {
			snprintf(msg, msg_len, "request for %s times %lld pods overflows",
				 ps->resources[i], (long long)ps->count);
			return -ERANGE;
		}
		int covered = 0;
		for (size_t g = 0; g < cq->n_groups && !covered; g++)
			for (size_t r = 0; r < cq->groups[g].n_resources && !covered; r++)
				covered = !strcmp(cq->groups[g].resources[r], ps->resources[i]);
		if (!covered) {
			snprintf(msg, msg_len, "resource %s unavailable in ClusterQueue %s",
				 ps->resources[i], cq->name);
			return -ENOENT;
		}
	}

	for (size_t g = 0; g < cq->n_groups; g++) {
		const struct quota_group *grp = &cq->groups[g];
		size_t group_cells = grp->n_flavors * grp->n_resources;
		int needed = 0;
		for (size_t i = 0; i < ps->n_requests && !needed; i++)
			for (size_t r = 0; r < grp->n_resources && !needed; r++)
				needed = !strcmp(grp->resources[r], ps->resources[i]);
		if (!needed) {
			base += group_cells;
			continue;
		}
		/* The group's verdict is the best over its flavors: fits, then waits, then never. */
		int group_rc = -ENOENT;
		char group_msg[512] = "";
		for (size_t f = 0; f < grp->n_flavors; f++) {
			const struct quota_flavor_quota *fq = &grp->flavors[f];
			const struct quota_flavor *flavor = strmap_get(&m->flavors, fq->flavor);
			char why[512];
			int flavor_rc = 0;
			if (!flavor) {
				snprintf(why, sizeof(why), "flavor %s not found", fq->flavor);
				flavor_rc = -ENOENT;
			} else if (!flavor_matches(flavor, ps, why, sizeof(why))) {
				flavor_rc = -ENOENT;
			}
			for (size_t i = 0; i < ps->n_requests && flavor_rc == 0; i++) {
				for (size_t r = 0; r < grp->n_resources; r++) {
					if (strcmp(grp->resources[r], ps->resources[i]) != 0)
						continue;
					int64_t nominal = fq->nominal[r];
					int64_t used = cq->usage[base + f * grp->n_resources + r];
					char want[40], have[40];
					if (totals[i] > nominal) {
						quota_format_amount(ps->resources[i], totals[i], want, sizeof(want));
						quota_format_amount(ps->resources[i], nominal, have, sizeof(have));
						snprintf(why, sizeof(why),
							 "insufficient quota for %s in flavor %s: the pod set requests %s, more than the nominal quota %s",
							 ps->resources[i], fq->flavor, want, have);
						flavor_rc = -E2BIG;
					} else if (totals[i] > nominal - used) {
						quota_format_amount(ps->resources[i], totals[i] - (nominal - used), want,
								    sizeof(want));
						snprintf(why, sizeof(why),
							 "insufficient unused quota for %s in flavor %s, %s more needed",
							 ps->resources[i], fq->flavor, want);
						flavor_rc = -ENOSPC;
					}
					break;
				}
			}
			if (flavor_rc == 0) {
				for (size_t i = 0; i < ps->n_requests; i++)
					for (size_t r = 0; r < grp->n_resources; r++)
						if (!strcmp(grp->resources[r], ps->resources[i]))
							out->items[out->n++] = (struct quota_assigned){
								ps->resources[i], fq->flavor, totals[i]
							};
				group_rc = 0;
				break;
			}
			/* Remember the most hopeful failure: waiting beats never, never beats no match. */
			if (group_msg[0] == '\0' || flavor_rc == -ENOSPC ||
			    (flavor_rc == -E2BIG && group_rc == -ENOENT)) {
				if (group_rc != -ENOSPC) {
					group_rc = flavor_rc;
					snprintf(group_msg, sizeof(group_msg), "%s", why);
				}
			}
		}
		if (group_rc != 0) {
			snprintf(msg, msg_len, "couldn't assign flavors to pod set: %s", group_msg);
			/* Across groups, the worst verdict decides. */
			if (worst == 0 || group_rc == -ENOENT || (group_rc == -E2BIG && worst == -ENOSPC))
				worst = group_rc;
		}
		base += group_cells;
	}
	if (worst != 0)
		out->n = 0;
	return worst;
}
