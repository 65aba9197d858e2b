/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ClusterQueue and LocalQueue status: pending, reserving and admitted counts, flavor usage and
 * the Active condition. Also where a ClusterQueue's spec enters the engine, and where fields
 * muster does not implement yet are named, never ignored.
 *
 * Nothing here scans the Workloads. ClusterQueue figures are the engine's. LocalQueue figures
 * are totals kept incrementally: each workload's contribution (its LocalQueue, whether it is
 * pending, reserving or admitted, and its usage per flavor and resource) is remembered in its
 * record (wl_record.queued), and
 * queues_track replaces it with the new one when something about the workload changed, so a
 * change costs the size of one workload's assignment. queues_check recounts from scratch, for
 * tests and debug builds.
 *
 * With fair sharing on, Cohorts get a status too (fairSharing.weightedShare), kept the same
 * way: a Cohort is marked when usage below it changes (fairshare_mark_tree) and written as a
 * queue is.
 *
 * Writes are coalesced: a queue whose status changed is written at once if it was not written
 * in the last QUEUE_STATUS_INTERVAL_MS, else when that interval ends, with whatever it says
 * then; a status equal to what the cache (or our last write, while the cache lags) shows is
 * not written at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/log.h"

#define QUEUE_STATUS_INTERVAL_MS 2000

/* A LocalQueue's totals. usage: "flavor\x1fresource" -> struct usage_total. */
struct usage_total {
	int64_t milli;
	int64_t refs; /* workloads contributing; the entry goes at zero */
};
struct lq_totals {
	int64_t pending, reserving, admitted;
	struct strmap usage;
};

/* Kinds whose status is written here, each with its slot in the write history. */
#define N_SLOTS 3
#define SLOT(kind) ((kind) == K_CQ ? 0 : (kind) == K_LQ ? 1 : 2)

/* One queue's status writes, from its first until the queue is deleted. */
struct status_writes {
	json_t *written; /* the status last written, while the cache may lag; or NULL */
	int64_t last_write; /* when last written (ms), if has_last */
	unsigned char has_last;
	unsigned char deferred; /* changed, waiting for its interval (a deadline is set) */
};

struct queue_totals {
	struct strmap lqs; /* lq key -> struct lq_totals */
	/* Per slot (ClusterQueues, LocalQueues, Cohorts): key -> struct status_writes * */
	struct strmap writes[N_SLOTS];
};

static void writes_free(void *p)
{
	struct status_writes *h = p;
	if (h)
		json_decref(h->written);
	free(h);
}

/* The queue's status writes, made when make is set and there is none; NULL if none (or out
 * of memory). */
static struct status_writes *writes_of(struct mgr *m, enum kind kind, const char *key, int make)
{
	struct strmap *map = &m->queues->writes[SLOT(kind)];
	struct status_writes *h = strmap_get(map, key);
	if (h || !make)
		return h;
	if ((h = calloc(1, sizeof(*h))) != NULL && strmap_put(map, key, h, NULL) != 0) {
		free(h);
		h = NULL;
	}
	return h;
}

static void lq_totals_free(void *p)
{
	struct lq_totals *t = p;
	if (!t)
		return;
	strmap_release(&t->usage, free);
	free(t);
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int contrib_equal(const struct queue_contrib *a, const struct queue_contrib *b)
{
	if (!str_eq(a->lq, b->lq) || !str_eq(a->cq, b->cq) || a->pending != b->pending ||
	    a->reserving != b->reserving || a->admitted != b->admitted || a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->usage[i].flavor, b->usage[i].flavor) ||
		    strcmp(a->usage[i].resource, b->usage[i].resource) ||
		    a->usage[i].milli != b->usage[i].milli)
			return 0;
	return 1;
}

/* Adds (sign 1) or removes (sign -1) a contribution to its LocalQueue's totals. */
static void apply(struct queue_totals *q, const struct queue_contrib *c, int sign)
{
	if (!c->lq)
		return;
	struct lq_totals *t = strmap_get(&q->lqs, c->lq);
	if (!t) {
		if (sign < 0 || !(t = calloc(1, sizeof(*t))))
			return;
		strmap_init(&t->usage);
		if (strmap_put(&q->lqs, c->lq, t, NULL) != 0) {
			free(t);
			return;
		}
	}
	t->pending += sign * c->pending;
	t->reserving += sign * c->reserving;
	t->admitted += sign * c->admitted;
	for (size_t i = 0; i < c->n; i++) {
		char k[600];
		snprintf(k, sizeof(k), "%s\x1f%s", c->usage[i].flavor, c->usage[i].resource);
		struct usage_total *u = strmap_get(&t->usage, k);
		if (!u) {
			if (sign < 0 || !(u = calloc(1, sizeof(*u))))
				continue;
			if (strmap_put(&t->usage, k, u, NULL) != 0) {
				free(u);
				continue;
			}
		}
		u->milli += sign * c->usage[i].milli;
		u->refs += sign;
		if (u->refs <= 0)
			free(strmap_remove(&t->usage, k));
	}
	if (t->pending == 0 && t->reserving == 0 && t->admitted == 0 && t->usage.len == 0)
		lq_totals_free(strmap_remove(&q->lqs, c->lq));
}

/* The ClusterQueue a LocalQueue points at, from the cache. */
static const char *cq_of_lq(struct mgr *m, const char *lq_key)
{
	return obj_str(store_get(m, K_LQ, lq_key), "spec.clusterQueue");
}

/* What the workload adds now (r: its record, or NULL); NULL when it adds nothing (gone, or out
 * of memory). */
static struct queue_contrib *contrib_now(struct mgr *m, const char *key, const struct wl_record *r)
{
	json_t *view = workload_view(m, key);
	const char *queue = obj_str(view, "spec.queueName"), *ns = obj_namespace(view);
	if (!view || !queue || !ns)
		return NULL;
	char lq[600];
	snprintf(lq, sizeof(lq), "%s/%s", ns, queue);
	const struct eng_assignment *a = engine_admission(m->engine, key);
	const char *cq = a ? a->cluster_queue : cq_of_lq(m, lq);
	size_t lq_len = strlen(lq) + 1, cq_len = cq ? strlen(cq) + 1 : 0;
	/* The names in the same allocation: one per pending Workload, not three. */
	struct queue_contrib *c = calloc(1, sizeof(*c) + lq_len + cq_len);
	if (!c)
		return NULL;
	c->lq = memcpy((char *)(c + 1), lq, lq_len);
	c->cq = cq ? memcpy(c->lq + lq_len, cq, cq_len) : NULL;
	c->pending = r && r->pending;
	c->reserving = a != NULL;
	c->admitted = a && condition_true(view, "Admitted");
	size_t n = 0;
	for (size_t p = 0; a && p < a->n_podsets; p++)
		n += a->podsets[p].n;
	c->usage = n ? calloc(n, sizeof(*c->usage)) : NULL;
	if (n && !c->usage) {
		queue_contrib_free(c);
		return NULL;
	}
	for (size_t p = 0; a && p < a->n_podsets; p++) {
		for (size_t k = 0; k < a->podsets[p].n; k++) {
			struct queue_usage *u = &c->usage[c->n++];
			u->flavor = strdup(a->podsets[p].flavors[k]);
			u->resource = strdup(a->podsets[p].resources[k]);
			u->milli = a->podsets[p].usage[k];
			if (!u->flavor || !u->resource) {
				queue_contrib_free(c);
				return NULL;
			}
		}
	}
	return c;
}

static void mark_contrib_queues(struct mgr *m, const struct queue_contrib *c)
{
	if (!c)
		return;
	if (c->lq)
		state_mark(m, K_LQ, c->lq);
	if (c->cq) {
		state_mark(m, K_CQ, c->cq);
		fairshare_mark_tree(m, c->cq);
	}
}

void queues_track(struct mgr *m, const char *key)
{
	struct queue_totals *q = m->queues;
	struct wl_record *r = wl_record_get(m, key);
	struct queue_contrib *now = contrib_now(m, key, r);
	struct queue_contrib *old = r ? r->queued : NULL;
	if (!now) {
		queues_forget(m, key);
		return;
	}
	if ((old && contrib_equal(old, now)) || (!r && !(r = wl_record_make(m, key)))) {
		queue_contrib_free(now);
		return;
	}
	r->queued = now;
	if (old)
		apply(q, old, -1);
	apply(q, now, 1);
	mark_contrib_queues(m, old);
	mark_contrib_queues(m, now);
	queue_contrib_free(old);
}

void queues_forget(struct mgr *m, const char *key)
{
	struct wl_record *r = wl_record_get(m, key);
	struct queue_contrib *old = r ? r->queued : NULL;
	if (!old)
		return;
	r->queued = NULL;
	apply(m->queues, old, -1);
	mark_contrib_queues(m, old);
	queue_contrib_free(old);
}

int queues_check(struct mgr *m)
{
	struct queue_totals *q = m->queues;
	struct wl_record *r;
	int rc = 0;
	/* Every tracked contribution must be what the workload adds now ... */
	WL_RECORDS_FOREACH(m, i, r)
	{
		if (!r->queued)
			continue;
		struct queue_contrib *now = contrib_now(m, r->key, r);
		if (!now || !contrib_equal(now, r->queued)) {
			log_error("queue totals: stale contribution", LF_STR("workload", r->key),
				  LF_END);
			rc = -EPROTO;
		}
		queue_contrib_free(now);
		state_release_views(m);
	}
	/* ... and the totals their sum. */
	struct queue_totals sum;
	memset(&sum, 0, sizeof(sum));
	strmap_init(&sum.lqs);
	WL_RECORDS_FOREACH(m, i, r)
	if (r->queued)
		apply(&sum, r->queued, 1);
	for (int pass = 0; pass < 2; pass++) {
		const struct strmap *a = pass ? &sum.lqs : &q->lqs, *b = pass ? &q->lqs : &sum.lqs;
		for (size_t i = 0; i < a->cap; i++) {
			const char *lq = a->slots[i].key;
			if (!lq)
				continue;
			const struct lq_totals *x = a->slots[i].value, *y = strmap_get(b, lq);
			int same = y && x->pending == y->pending && x->reserving == y->reserving &&
				   x->admitted == y->admitted && x->usage.len == y->usage.len;
			for (size_t j = 0; same && j < x->usage.cap; j++) {
				const char *k = x->usage.slots[j].key;
				const struct usage_total *ux = x->usage.slots[j].value, *uy;
				if (k && (!(uy = strmap_get(&y->usage, k)) ||
					  ux->milli != uy->milli || ux->refs != uy->refs))
					same = 0;
			}
			if (!same) {
				log_error("queue totals differ from a recount",
					  LF_STR("localQueue", lq), LF_END);
				rc = -EPROTO;
			}
		}
	}
	strmap_release(&sum.lqs, lq_totals_free);
	return rc;
}

/* A ClusterQueue's spec enters the engine here. What the decoder reports as not implemented
 * (concurrentAdmissionPolicy, …) is named in the UnsupportedFields condition; admission
 * checks make the queue inactive, since admitting without them would skip them. */
void cq_apply(struct mgr *m, const char *name, json_t *obj)
{
	char err[256] = "";
	struct eobj_cq cq;
	const char *inactive = NULL, *notes = NULL;

	if (!obj) {
		engine_remove_cq(m->engine, name);
		observe_forget_cq(m, name);
		cq_record_set(m, name, NULL, NULL);
		return;
	}
	if (json_array_size(obj_path(obj, "spec.admissionChecksStrategy.admissionChecks")) > 0)
		inactive = "admission checks are not implemented yet, and admitting without them "
			   "would skip them";
	int decoded = eobj_cq_decode(obj, &cq, err, sizeof(err)) == 0;
	if (!decoded) {
		engine_remove_cq(m->engine, name);
		inactive = err;
		log_error("cannot use ClusterQueue", LF_STR("clusterQueue", name),
			  LF_STR("error", err), LF_END);
	} else {
		if (cq.unsupported && *cq.unsupported)
			notes = cq.unsupported;
		if (inactive)
			engine_remove_cq(m->engine, name);
		else if (engine_set_cq(m->engine, &cq.spec) != 0)
			inactive = "the engine refused its spec";
	}
	if (cq_record_set(m, name, inactive, notes) != 0)
		log_error("out of memory: what muster can't use of a ClusterQueue is not kept",
			  LF_STR("clusterQueue", name), LF_END);
	if (decoded)
		eobj_cq_release(&cq);
}

static json_t *qty(const char *resource, int64_t milli)
{
	char buf[64];
	quantity_to_string(resource, milli, buf, sizeof(buf));
	return json_string(buf);
}

static void on_status_written(struct mgr *m, enum kind kind, const char *key,
			      enum write_outcome outcome, struct write_answer *answer)
{
	(void)answer;
	/* What we sent stands in for the cache until the cache catches up (writer_lagging). */
	struct status_writes *h = outcome != WRITE_OK ? writes_of(m, kind, key, 0) : NULL;
	if (h) {
		json_decref(h->written);
		h->written = NULL;
		/* The writer's retry has replaced the key's one deadline (state_at), perhaps the
		 * end of the interval a change is deferred to: due() must set it again, or that
		 * change waits for the next one, which may never come. */
		h->deferred = 0;
	}
}

/* Writes obj's status when `status` differs in any field it sets from what the cache shows,
 * or, while the cache has not caught up with our last write, from what that write said. */
static void write_status_if_changed(struct mgr *m, json_t *obj, const char *path, enum kind kind,
				    const char *key, json_t *status)
{
	const char *rv = obj_str(obj, "metadata.resourceVersion");
	json_t *current = json_object_get(obj, "status");
	struct status_writes *h = writes_of(m, kind, key, 0);
	json_t *sent = h ? h->written : NULL;
	if (sent && writer_lagging(m, kind, key, rv))
		current = sent;
	const char *field;
	json_t *v;
	int differs = 0;
	json_object_foreach(status, field, v)
		differs |= !json_equal(v, json_object_get(current, field));
	if (!differs || writer_busy(m, kind, key)) {
		json_decref(status);
		return;
	}
	if (h || (h = writes_of(m, kind, key, 1)) != NULL) {
		json_decref(h->written);
		h->written = json_incref(status);
		h->last_write = m->now_ms();
		h->has_last = 1;
	}
	/* Guarded by resourceVersion: a write decided on an old copy loses and is decided again
	 * (the spec, and so the flavors listed, may have changed meanwhile). While the cache lags
	 * our own last write, by the version that write answered with: by the cache's, it would
	 * only lose to ourselves. */
	writer_merge_patch(m, kind, key, path, json_pack("{s:o}", "status", status),
			   writer_guard_rv(m, kind, key, rv), on_status_written);
}

static json_t *cq_conditions(struct mgr *m, json_t *obj, const char *name)
{
	const struct cq_record *r = cq_record_get(m, name);
	const char *inactive = r ? r->inactive : NULL;
	const char *notes = r ? r->not_implemented : NULL;
	const char *reason = "Unsupported", *message = NULL;
	char msg[512];
	int active = 0, changed;

	if (inactive) {
		snprintf(msg, sizeof(msg), "Can't admit new workloads: %s", inactive);
	} else {
		active = engine_cq_active(m->engine, name, &reason, &message);
		snprintf(msg, sizeof(msg), "%s",
			 message ? message : (active ? "Can admit new workloads" : ""));
	}
	json_t *conds = conditions_with(obj, "Active", active ? "True" : "False",
					reason ? reason : "Ready", msg, &changed);
	json_t *tmp = json_pack("{s:O, s:{s:O}}", "metadata", json_object_get(obj, "metadata"),
				"status", "conditions", conds);
	json_decref(conds);
	conds = conditions_with(tmp, "UnsupportedFields", notes ? "True" : "False",
				notes ? "NotImplemented" : "AllFieldsSupported",
				notes ? notes :
					"muster implements every field this ClusterQueue sets",
				&changed);
	json_decref(tmp);
	return conds;
}

void cq_usage_walk(struct mgr *m, const char *name, cq_usage_fn fn, void *arg)
{
	json_t *obj = store_get(m, K_CQ, name);
	json_t *groups = obj_path(obj, "spec.resourceGroups"), *g;
	size_t gi;
	json_array_foreach(groups, gi, g)
	{
		json_t *f;
		size_t fi;
		json_array_foreach(json_object_get(g, "flavors"), fi, f)
		{
			const char *fname = json_string_value(json_object_get(f, "name"));
			json_t *r;
			size_t ri;
			if (!fname)
				continue;
			fn(arg, fname, NULL, NULL);
			json_array_foreach(json_object_get(g, "coveredResources"), ri, r)
			{
				const char *rname = json_string_value(r);
				struct eng_cq_usage u = { 0, 0 };
				if (!rname)
					continue;
				engine_cq_usage(m->engine, name, fname, rname, &u);
				fn(arg, fname, rname, &u);
			}
		}
	}
}

/* What cq_flavors_usage builds: the array of flavors, and the resources of the last one (NULL
 * when it could not be added). */
struct flavors_usage {
	json_t *usage, *resources;
};

static void flavor_usage_json(void *arg, const char *flavor, const char *resource,
			      const struct eng_cq_usage *u)
{
	struct flavors_usage *fu = arg;
	if (!resource) {
		json_t *f = json_pack("{s:s, s:[]}", "name", flavor, "resources");
		fu->resources = json_object_get(f, "resources");
		if (json_array_append_new(fu->usage, f))
			fu->resources = NULL;
		return;
	}
	if (fu->resources)
		json_array_append_new(fu->resources,
				      json_pack("{s:s, s:o, s:o}", "name", resource, "total",
						qty(resource, u->total), "borrowed",
						qty(resource, u->borrowed)));
}

json_t *cq_flavors_usage(struct mgr *m, const char *name)
{
	struct flavors_usage fu = { json_array(), NULL };
	if (fu.usage)
		cq_usage_walk(m, name, flavor_usage_json, &fu);
	return fu.usage;
}

static void cq_status(struct mgr *m, const char *name)
{
	json_t *obj = store_get(m, K_CQ, name);
	char path[512];
	size_t pending = 0, admitted = 0;
	if (!obj)
		return;
	json_t *usage = cq_flavors_usage(m, name);
	engine_cq_counts(m->engine, name, &pending, &admitted);
	json_t *status = json_pack("{s:o, s:I, s:I, s:I, s:O, s:O}", "conditions",
				   cq_conditions(m, obj, name), "pendingWorkloads",
				   (json_int_t)pending, "reservingWorkloads", (json_int_t)admitted,
				   "admittedWorkloads", (json_int_t)admitted, "flavorsReservation",
				   usage, "flavorsUsage", usage);
	json_decref(usage);
	json_t *fair = fairshare_share_status(m, K_CQ, name);
	if (fair) /* json_object_set_new drops it when status is NULL */
		json_object_set_new(status, "fairSharing", fair);
	if (kind_path(K_CQ, NULL, name, "/status", path, sizeof(path)) != 0)
		json_decref(status);
	else if (status)
		write_status_if_changed(m, obj, path, K_CQ, name, status);
}

/* Orders "flavor\x1fresource" keys, so a LocalQueue's usage lists read the same every time. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A LocalQueue's flavorsUsage from its totals: flavors by name, resources by name. */
static json_t *lq_usage(struct mgr *m, const char *key)
{
	const struct lq_totals *t = strmap_get(&m->queues->lqs, key);
	json_t *usage = json_array();
	if (!t || !usage || t->usage.len == 0)
		return usage;
	const char **keys = calloc(t->usage.len, sizeof(*keys));
	size_t n = 0;
	if (!keys)
		return usage;
	for (size_t i = 0; i < t->usage.cap; i++)
		if (t->usage.slots[i].key)
			keys[n++] = t->usage.slots[i].key;
	qsort(keys, n, sizeof(*keys), cmp_str);
	json_t *list = NULL;
	char flavor[300] = "";
	for (size_t i = 0; i < n; i++) {
		const char *sep = strchr(keys[i], '\x1f');
		const struct usage_total *u = strmap_get(&t->usage, keys[i]);
		if (!sep || !u)
			continue;
		if (!list || strncmp(flavor, keys[i], (size_t)(sep - keys[i])) != 0 ||
		    flavor[sep - keys[i]] != '\0') {
			snprintf(flavor, sizeof(flavor), "%.*s", (int)(sep - keys[i]), keys[i]);
			list = json_array();
			json_array_append_new(usage, json_pack("{s:s, s:o}", "name", flavor,
							       "resources", list));
		}
		json_array_append_new(list, json_pack("{s:s, s:o}", "name", sep + 1, "total",
						      qty(sep + 1, u->milli)));
	}
	free(keys);
	return usage;
}

static void lq_status(struct mgr *m, const char *key)
{
	json_t *obj = store_get(m, K_LQ, key);
	const struct lq_totals *t = strmap_get(&m->queues->lqs, key);
	char path[1024], msg[512] = "Can submit new workloads to ClusterQueue";
	const char *reason = "Ready";
	int changed;
	if (!obj)
		return;
	const char *cq_name = obj_str(obj, "spec.clusterQueue");
	const struct cq_record *cqr;
	const char *cq_reason = NULL, *cq_message = NULL;
	int active = cq_name && store_get(m, K_CQ, cq_name) != NULL;
	if (!active) {
		reason = "ClusterQueueDoesNotExist";
		snprintf(msg, sizeof(msg),
			 "Can't submit new workloads to ClusterQueue %s: it doesn't exist",
			 cq_name ? cq_name : "");
	} else if (((cqr = cq_record_get(m, cq_name)) != NULL && cqr->inactive) ||
		   !engine_cq_active(m->engine, cq_name, &cq_reason, &cq_message)) {
		active = 0;
		reason = "ClusterQueueIsInactive";
		snprintf(msg, sizeof(msg),
			 "Can't submit new workloads to ClusterQueue %s: it is inactive", cq_name);
	}
	const char *stop = obj_str(obj, "spec.stopPolicy");
	if (stop && strcmp(stop, "None") != 0) {
		active = 0;
		reason = "Stopped";
		snprintf(msg, sizeof(msg), "LocalQueue is stopped (stopPolicy %s)", stop);
	}
	json_t *usage = lq_usage(m, key);
	json_t *conds =
		conditions_with(obj, "Active", active ? "True" : "False", reason, msg, &changed);
	json_t *status = json_pack("{s:o, s:I, s:I, s:I, s:O, s:O}", "conditions", conds,
				   "pendingWorkloads", (json_int_t)(t ? t->pending : 0),
				   "reservingWorkloads", (json_int_t)(t ? t->reserving : 0),
				   "admittedWorkloads", (json_int_t)(t ? t->admitted : 0),
				   "flavorsReservation", usage, "flavorsUsage", usage);
	json_decref(usage);
	json_t *fair = fairshare_lq_status(m, obj);
	if (fair) /* json_object_set_new drops it when status is NULL */
		json_object_set_new(status, "fairSharing", fair);
	if (kind_path(K_LQ, obj_namespace(obj), obj_name(obj), "/status", path, sizeof(path)) != 0)
		json_decref(status);
	else if (status)
		write_status_if_changed(m, obj, path, K_LQ, key, status);
}

/* A Cohort's status: only fairSharing.weightedShare, and only with fair sharing on (Kueue
 * writes no other Cohort status). */
static void cohort_status(struct mgr *m, const char *name)
{
	json_t *obj = store_get(m, K_COHORT, name);
	char path[512];
	json_t *fair = obj ? fairshare_share_status(m, K_COHORT, name) : NULL;
	if (!fair)
		return;
	json_t *status = json_pack("{s:o}", "fairSharing", fair);
	if (kind_path(K_COHORT, NULL, name, "/status", path, sizeof(path)) != 0)
		json_decref(status);
	else if (status)
		write_status_if_changed(m, obj, path, K_COHORT, name, status);
}

/* Whether key may be written now; if not, it waits in deferred for its interval to end. */
static int due(struct mgr *m, enum kind kind, const char *key)
{
	struct status_writes *h = writes_of(m, kind, key, 0);
	int64_t now = m->now_ms();
	if (!h || !h->has_last || now - h->last_write >= QUEUE_STATUS_INTERVAL_MS) {
		if (h)
			h->deferred = 0;
		return 1;
	}
	/* Once per key: a deadline brings it back here when its interval ends. */
	if (!h->deferred) {
		h->deferred = 1;
		state_at(m, kind, key, h->last_write + QUEUE_STATUS_INTERVAL_MS);
	}
	return 0;
}

static void status_if_due(struct mgr *m, enum kind kind, const char *key)
{
	if (due(m, kind, key))
		(kind == K_CQ ? cq_status : kind == K_LQ ? lq_status : cohort_status)(m, key);
}

void queues_sync(struct mgr *m, struct pump_budget *b)
{
	state_drain(m, K_CQ, b, 1, status_if_due);
	state_drain(m, K_LQ, b, 1, status_if_due);
	state_drain(m, K_COHORT, b, 1, status_if_due);
}

void queues_forget_queue(struct mgr *m, enum kind kind, const char *key)
{
	writes_free(strmap_remove(&m->queues->writes[SLOT(kind)], key));
}

int queues_init(struct mgr *m)
{
	struct queue_totals *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	strmap_init(&q->lqs);
	for (int slot = 0; slot < N_SLOTS; slot++)
		strmap_init(&q->writes[slot]);
	m->queues = q;
	return 0;
}

void queues_release(struct mgr *m)
{
	struct queue_totals *q = m->queues;
	if (!q)
		return;
	strmap_release(&q->lqs, lq_totals_free);
	for (int slot = 0; slot < N_SLOTS; slot++)
		strmap_release(&q->writes[slot], writes_free);
	m->queues = NULL;
	free(q);
}
