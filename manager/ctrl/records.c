/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One record per Workload of what ctrl/ knows of it beyond its cached object (internal.h,
 * struct wl_record), and one per ClusterQueue: one map each, one lookup per use, and one
 * forget. Calls no other file of ctrl/: every stage reads and writes its fields.
 *
 * Lifetime: a Workload's record is made when a stage first has something to keep (what it adds
 * to its LocalQueue, a wait to write, an admission in flight, a write's bookkeeping, an Event
 * recorded), so in practice at its first reconcile, and lives until the Workload is deleted,
 * when workload_reconcile calls wl_record_forget. A record is one allocation (112 bytes and
 * its key) and one slot, where the per-key maps it replaces took a slot and a copy of the key
 * each: a queued Workload costs a little less than before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/invariant.h"
#include "ctrl/internal.h"
#include "util/log.h"

struct wl_record *wl_record_get(struct mgr *m, const char *key)
{
	return key ? strmap_get(&m->records.workloads, key) : NULL;
}

struct wl_record *wl_record_make(struct mgr *m, const char *key)
{
	struct wl_record *r = wl_record_get(m, key);
	size_t len;
	if (r || !key)
		return r;
	len = strlen(key) + 1;
	if (!(r = calloc(1, sizeof(*r) + len)))
		return NULL;
	memcpy(r->key, key, len);
	if (strmap_put(&m->records.workloads, r->key, r, NULL) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

static void set_pending(struct mgr *m, struct wl_record *r, int pending)
{
	if (r->pending == !!pending)
		return;
	r->pending = !!pending;
	if (pending)
		m->records.pending++;
	else
		m->records.pending--;
}

void wl_record_set_pending(struct mgr *m, const char *key, int pending)
{
	struct wl_record *r = pending ? wl_record_make(m, key) : wl_record_get(m, key);
	if (r)
		set_pending(m, r, pending);
	else if (pending)
		log_error("out of memory: a pending Workload is not counted",
			  LF_STR("workload", key), LF_END);
}

int wl_record_set_unwritten(struct mgr *m, struct wl_record *r, const char *reason, const char *msg)
{
	char *want;
	if (!reason) {
		if (r && r->unwritten) {
			free(r->unwritten);
			r->unwritten = NULL;
			m->records.unwritten--;
		}
		if (r)
			r->has_front = 0;
		return 0;
	}
	size_t rl = strlen(reason) + 1, ml = strlen(msg) + 1;
	if (!(want = malloc(rl + ml)))
		return -ENOMEM;
	memcpy(want, reason, rl);
	memcpy(want + rl, msg, ml);
	if (!r->unwritten)
		m->records.unwritten++;
	free(r->unwritten);
	r->unwritten = want;
	return 0;
}

const char *wl_record_unwritten_message(const struct wl_record *r)
{
	return r && r->unwritten ? r->unwritten + strlen(r->unwritten) + 1 : NULL;
}

void wl_plan_free(struct wl_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_podsets; i++) {
		struct podset_plan *ps = &plan->podsets[i];
		for (size_t k = 0; k < ps->n_slots; k++)
			free(ps->slots[k].node);
		for (size_t k = 0; k < ps->n_assigned; k++) {
			free(ps->assigned[k].pod);
			free(ps->assigned[k].node);
		}
		free(ps->podset);
		free(ps->slots);
		free(ps->assigned);
	}
	free(plan->podsets);
	free(plan);
}

void queue_contrib_free(struct queue_contrib *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->usage[i].flavor);
		free(c->usage[i].resource);
	}
	free(c->usage);
	free(c->lq);
	free(c->cq);
	free(c);
}

/* Everything the record holds but its write state goes. */
static void clear_state(struct mgr *m, struct wl_record *r)
{
	set_pending(m, r, 0);
	wl_record_set_unwritten(m, r, NULL, NULL);
	json_decref(r->assumed);
	json_decref(r->closest);
	wl_plan_free(r->plan);
	queue_contrib_free(r->queued);
	free(r->open_admission);
	free(r->preempting_cq);
	r->assumed = r->closest = NULL;
	r->plan = NULL;
	r->queued = NULL;
	r->open_admission = r->preempting_cq = NULL;
	r->has_deadline = 0; /* its heap entry is then stale, and skipped */
}

static void clear_write(struct write_state *w)
{
	free(w->landed);
	free(w->evented);
	*w = (struct write_state){ .inflight = w->inflight };
}

static void record_free(struct mgr *m, struct wl_record *r)
{
	clear_state(m, r);
	clear_write(&r->write);
	free(r);
}

void wl_record_forget(struct mgr *m, const char *key)
{
	struct wl_record *r = wl_record_get(m, key);
	if (!r)
		return;
	/* Still counted in its LocalQueue's totals, it would count there for ever. */
	MUSTER_ASSERT(!r->queued); /* queues_forget comes before wl_record_forget */
	if (r->write.inflight) {
		/* The writer's completion needs the flag, and brings the key back to be
		 * forgotten. */
		clear_state(m, r);
		clear_write(&r->write);
		return;
	}
	strmap_remove(&m->records.workloads, key);
	record_free(m, r);
}

size_t wl_records_count(struct mgr *m)
{
	return m->records.workloads.len;
}

int wl_records_check(struct mgr *m)
{
	struct wl_record *r;
	size_t pending = 0, unwritten = 0;
	int rc = 0;
	WL_RECORDS_FOREACH(m, i, r)
	{
		pending += r->pending;
		unwritten += r->unwritten != NULL;
		if (rc || json_object_get(m->stores[K_WORKLOAD], r->key) || r->write.inflight ||
		    r->has_deadline || r->write.expect_until ||
		    strmap_get(&m->dirty[K_WORKLOAD].map, r->key) ||
		    strmap_get(&m->draining[K_WORKLOAD].batch.map, r->key))
			continue;
		log_error("a Workload's record outlives it", LF_STR("workload", r->key), LF_END);
		rc = -EPROTO;
	}
	if (pending != m->records.pending || unwritten != m->records.unwritten) {
		log_error("Workload records: counts disagree",
			  LF_INT("pending", (long long)pending),
			  LF_INT("counted", (long long)m->records.pending), LF_END);
		rc = -EPROTO;
	}
	return rc;
}

/* --- ClusterQueues --------------------------------------------------------------------------- */

struct cq_record *cq_record_get(struct mgr *m, const char *name)
{
	return name ? strmap_get(&m->records.cqs, name) : NULL;
}

static void cq_record_free(void *p)
{
	struct cq_record *r = p;
	if (!r)
		return;
	free(r->inactive);
	free(r->not_implemented);
	free(r);
}

int cq_record_set(struct mgr *m, const char *name, const char *inactive,
		  const char *not_implemented)
{
	cq_record_free(strmap_remove(&m->records.cqs, name));
	if (!inactive && !not_implemented)
		return 0;
	size_t len = strlen(name) + 1;
	struct cq_record *r = calloc(1, sizeof(*r) + len);
	if (!r)
		return -ENOMEM;
	memcpy(r->name, name, len);
	if ((inactive && !(r->inactive = strdup(inactive))) ||
	    (not_implemented && !(r->not_implemented = strdup(not_implemented))) ||
	    strmap_put(&m->records.cqs, r->name, r, NULL) != 0) {
		cq_record_free(r);
		return -ENOMEM;
	}
	return 0;
}

void records_init(struct mgr *m)
{
	strmap_init_borrowed(&m->records.workloads);
	strmap_init_borrowed(&m->records.cqs);
	m->records.pending = m->records.unwritten = 0;
}

void records_release(struct mgr *m)
{
	struct wl_record *r;
	WL_RECORDS_FOREACH(m, i, r)
	{
		r->write.inflight = 0;
		record_free(m, r);
	}
	strmap_release(&m->records.workloads, NULL);
	strmap_release(&m->records.cqs, cq_record_free);
	m->records.pending = m->records.unwritten = 0;
}
