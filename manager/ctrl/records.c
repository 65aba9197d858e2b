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

#include "core/container_of.h"
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

/* One wait, shared by every record that owes it. */
struct shared_wait {
	size_t refs;
	const char *key; /* "reason\x1fmessage", after the text: the waits map's key */
	char text[]; /* "reason\0message\0", then the key */
};

static void wait_unref(struct mgr *m, const char *text)
{
	struct shared_wait *w = CONTAINER_OF(text, struct shared_wait, text);
	if (--w->refs > 0)
		return;
	if (m->records.last_wait == w->text)
		m->records.last_wait = NULL;
	strmap_remove(&m->records.waits, w->key);
	free(w);
}

/* The shared wait for reason and msg, referenced once more; NULL when out of memory. */
static const char *wait_ref(struct mgr *m, const char *reason, const char *msg)
{
	const char *last = m->records.last_wait;
	if (last && !strcmp(last, reason) && !strcmp(last + strlen(last) + 1, msg)) {
		CONTAINER_OF(last, struct shared_wait, text)->refs++;
		return last;
	}
	size_t rl = strlen(reason) + 1, ml = strlen(msg) + 1;
	struct shared_wait *w = malloc(sizeof(*w) + 2 * (rl + ml)), *have;
	if (!w)
		return NULL;
	char *key = w->text + rl + ml;
	memcpy(w->text, reason, rl);
	memcpy(w->text + rl, msg, ml);
	memcpy(key, reason, rl);
	key[rl - 1] = '\x1f';
	memcpy(key + rl, msg, ml);
	if ((have = strmap_get(&m->records.waits, key)) != NULL) {
		free(w);
		have->refs++;
		return m->records.last_wait = have->text;
	}
	w->refs = 1;
	w->key = key;
	if (strmap_put(&m->records.waits, w->key, w, NULL) != 0) {
		free(w);
		return NULL;
	}
	return m->records.last_wait = w->text;
}

int wl_record_set_unwritten(struct mgr *m, struct wl_record *r, const char *reason, const char *msg)
{
	const char *want;
	if (!reason) {
		if (r && r->unwritten) {
			wait_unref(m, r->unwritten);
			r->unwritten = NULL;
			m->records.unwritten--;
		}
		if (r)
			r->has_front = 0;
		return 0;
	}
	if (!(want = wait_ref(m, reason, msg)))
		return -ENOMEM;
	if (!r->unwritten)
		m->records.unwritten++;
	else
		wait_unref(m, r->unwritten);
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
	free(c); /* and its names, in the same allocation */
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
	strmap_init_borrowed(&m->records.waits);
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
	MUSTER_ASSERT(m->records.waits.len == 0); /* each went with its last record */
	strmap_release(&m->records.waits, free);
	m->records.pending = m->records.unwritten = 0;
}
