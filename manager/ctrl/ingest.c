/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ingest: every object kind enters the manager here. The informer table says what is watched
 * and what the store keeps of it; each change is decoded once into what the engine, placement
 * and catalog hold, then marks the keys whose reconcilers must look again. An object muster
 * can't use is never only logged: it gets an Event saying why, and the engine treats it as
 * absent (a ClusterQueue as inactive), so nothing is admitted on a guess.
 */
#include <stdio.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "ctrl/internal.h"
#include "util/json_slim.h"
#include "util/log.h"

/* Deletes metadata.managedFields, often the largest part of an object and never read; whether
 * there was one. */
static int drop_managed_fields(json_t *obj)
{
	return json_object_del(json_object_get(obj, "metadata"), "managedFields") == 0;
}

/* What the store of an informer's kind keeps of obj (its informer_options.transform): the
 * kind's slim copy, without metadata.managedFields, often the largest part of an object and
 * never read; the many and the large (Workloads, Jobs) compact (state.c); a kind with a typed
 * model (Nodes) into its model, the store keeping a stub. The event's text
 * stands for the object when neither cut anything (the watch cut managedFields already): that
 * spares serializing the tree again. */
static json_t *keep(void *arg, json_t *obj, const char *text, size_t len)
{
	const struct kind_arg *ka = arg;
	const struct kind_def *def = kind_def(ka->kind);
	int cut;
	json_t *slim;
	if (def->model) {
		def->model(ka->m, obj);
		return store_keep(ka->m, ka->kind, obj, NULL, 0);
	}
	if (def->slim) {
		slim = def->slim(obj, &cut);
	} else if (def->slim_rule) {
		cut = json_slim_tree(obj, def->slim_rule) != 0;
		slim = json_incref(obj);
	} else {
		cut = drop_managed_fields(obj);
		slim = json_incref(obj);
	}
	if (!slim)
		return NULL;
	json_t *kept = store_keep(ka->m, ka->kind, slim, cut ? NULL : text, len);
	json_decref(slim);
	return kept;
}

/* What the store of a compact kind keeps of an object read from its text alone (its
 * informer_options.transform_text): see store_keep_text. */
static json_t *keep_text(void *arg, const char *key, const char *rv, const char *text, size_t len)
{
	const struct kind_arg *ka = arg;
	return store_keep_text(ka->m, ka->kind, key, rv, text, len);
}

static void mark_all(struct mgr *m, enum kind store_kind, enum kind mark_kind)
{
	const char *key;
	json_t *v;
	json_object_foreach(m->stores[store_kind], key, v) state_mark(m, mark_kind, key);
}

static void on_workload(struct mgr *m, enum watch_event_type type, const char *key, json_t *obj)
{
	struct wl_record *r = wl_record_get(m, key);
	if (r)
		r->cond_known = 0; /* its cached object is another now */
	if (type != WATCH_DELETED)
		writer_seen(m, K_WORKLOAD, key);
	state_mark(m, K_WORKLOAD, key);
	workload_mark_owner(m, obj);
	state_want_cycle(m);
}

/* Whether an update changed the object's spec (not only its status: our own writes). */
static int spec_changed(json_t *old, json_t *obj)
{
	return !old || !obj ||
	       !json_equal(json_object_get(old, "spec"), json_object_get(obj, "spec"));
}

static void on_cq(struct mgr *m, enum watch_event_type type, const char *key, json_t *old,
		  json_t *obj)
{
	/* Our own status writes come back as updates, a thousand ClusterQueues' every few
	 * seconds on a busy cluster. One that leaves the spec as it was changes nothing the
	 * engine, the LocalQueues or the cycle read (eobj_cq_decode reads the name and the spec),
	 * and applying it had the engine rebuild every cohort's tree and walked every LocalQueue:
	 * only its status is looked at again. */
	if (type == WATCH_MODIFIED && !spec_changed(old, obj)) {
		state_mark(m, K_CQ, key);
		return;
	}
	cq_apply(m, key, type == WATCH_DELETED ? NULL : obj);
	/* Quotas set what a cohort can lend, so with fair sharing every share may move. */
	if (type == WATCH_DELETED || spec_changed(old, obj))
		fairshare_mark_all(m);
	const struct cq_record *r = cq_record_get(m, key);
	const char *inactive = r ? r->inactive : NULL;
	if (inactive && type != WATCH_DELETED)
		writer_event(m, K_CQ, obj, EVENT_WARNING, "ClusterQueueNotUsable", inactive);
	state_mark(m, K_CQ, key);
	/* LocalQueues pointing here: their Active condition follows the ClusterQueue. */
	const char *lq_key;
	json_t *lq;
	json_object_foreach(m->stores[K_LQ], lq_key, lq)
	{
		const char *cq = obj_str(lq, "spec.clusterQueue");
		if (cq && !strcmp(cq, key))
			state_mark(m, K_LQ, lq_key);
	}
	state_want_cycle(m);
}

static void on_lq(struct mgr *m, enum watch_event_type type, const char *key, json_t *old,
		  json_t *obj)
{
	struct eobj_local_queue q;
	char err[256] = "";
	const char *slash = strchr(key, '/');
	if (type == WATCH_DELETED ||
	    eobj_local_queue_decode(obj, NULL, &q, err, sizeof(err)) != 0) {
		if (type != WATCH_DELETED) {
			log_error("cannot use LocalQueue", LF_STR("localQueue", key),
				  LF_STR("error", err), LF_END);
			writer_event(m, K_LQ, obj, EVENT_WARNING, "LocalQueueNotUsable", err);
		}
		char ns[300];
		snprintf(ns, sizeof(ns), "%.*s", slash ? (int)(slash - key) : 0, key);
		engine_remove_local_queue(m->engine, ns, slash ? slash + 1 : key);
		if (type == WATCH_DELETED)
			fairshare_on_lq(m, key, old, NULL, ns, slash ? slash + 1 : key, 0, 1);
	} else {
		if (engine_set_local_queue(m->engine, q.namespace_name, q.name, q.cluster_queue,
					   q.stop) != 0) {
			log_error("engine refused LocalQueue", LF_STR("localQueue", key), LF_END);
			writer_event(m, K_LQ, obj, EVENT_WARNING, "LocalQueueNotUsable",
				     "the admission engine refused this LocalQueue");
		}
		fairshare_on_lq(m, key, old, obj, q.namespace_name, q.name, q.has_fair_weight,
				q.fair_weight);
		eobj_local_queue_release(&q);
	}
	state_mark(m, K_LQ, key);
	state_want_cycle(m);
}

static void on_flavor(struct mgr *m, enum watch_event_type type, const char *key, json_t *obj)
{
	struct eobj_flavor f;
	char err[256];
	nodes_set_flavor(m, key, type == WATCH_DELETED ? NULL : obj);
	if (type == WATCH_DELETED) {
		engine_remove_flavor(m->engine, key);
	} else if (eobj_flavor_decode(obj, &f, err, sizeof(err)) != 0) {
		/* Treated as missing: ClusterQueues that name it are inactive and say so. */
		log_error("cannot use ResourceFlavor", LF_STR("flavor", key), LF_STR("error", err),
			  LF_END);
		writer_event(m, K_FLAVOR, obj, EVENT_WARNING, "ResourceFlavorNotUsable", err);
		engine_remove_flavor(m->engine, key);
		eobj_flavor_release(&f);
	} else {
		if (engine_set_flavor(m->engine, &f.spec) != 0)
			log_error("engine refused ResourceFlavor", LF_STR("flavor", key), LF_END);
		eobj_flavor_release(&f);
	}
	mark_all(m, K_CQ, K_CQ);
	mark_all(m, K_LQ, K_LQ);
	state_want_cycle(m);
}

static void on_cohort(struct mgr *m, enum watch_event_type type, const char *key, json_t *old,
		      json_t *obj)
{
	struct eobj_cohort c;
	char err[256];
	if (type != WATCH_DELETED && !spec_changed(old, obj))
		return; /* a status write (fair sharing's, our own): nothing the engine holds */
	if (type == WATCH_DELETED) {
		engine_remove_cohort(m->engine, key);
	} else if (eobj_cohort_decode(obj, &c, err, sizeof(err)) != 0) {
		log_error("cannot use Cohort", LF_STR("cohort", key), LF_STR("error", err), LF_END);
		writer_event(m, K_COHORT, obj, EVENT_WARNING, "CohortNotUsable", err);
		engine_remove_cohort(m->engine, key);
		eobj_cohort_release(&c);
	} else {
		if (engine_set_cohort(m->engine, &c.spec) != 0) {
			log_error("engine refused Cohort", LF_STR("cohort", key), LF_END);
			writer_event(m, K_COHORT, obj, EVENT_WARNING, "CohortNotUsable",
				     "the admission engine refused this Cohort");
		}
		eobj_cohort_release(&c);
	}
	mark_all(m, K_CQ, K_CQ);
	fairshare_mark_all(m);
	state_want_cycle(m);
}

/* A priority class appearing may unblock Jobs whose Workload waits for it, and Workloads whose
 * decoding failed for want of it. */
static void on_priority_class(struct mgr *m, enum watch_event_type type)
{
	struct wl_record *r;
	if (type == WATCH_DELETED)
		return;
	for (enum kind k = K_OWNER_FIRST; k <= K_OWNER_LAST; k++)
		mark_all(m, k, k);
	WL_RECORDS_FOREACH(m, i, r)
	if (r->pending)
		keyset_add(&m->dirty[K_WORKLOAD], r->key);
	state_want_cycle(m);
}

static void on_namespace(struct mgr *m, enum watch_event_type type, const char *key, json_t *obj)
{
	struct eobj_namespace ns;
	char err[256];
	if (type == WATCH_DELETED) {
		engine_remove_namespace(m->engine, key);
	} else if (eobj_namespace_decode(obj, &ns, err, sizeof(err)) == 0) {
		if (engine_set_namespace(m->engine, ns.name, ns.n_labels, ns.labels) != 0)
			log_error("engine refused Namespace", LF_STR("namespace", key), LF_END);
		eobj_namespace_release(&ns);
	} else {
		log_error("cannot use Namespace", LF_STR("namespace", key), LF_STR("error", err),
			  LF_END);
		eobj_namespace_release(&ns);
	}
	state_want_cycle(m);
}

void ingest_event(struct mgr *m, enum kind kind, enum watch_event_type type, const char *key,
		  json_t *old, json_t *obj)
{
	/* A Workload's store keeps a stub: its handler reads the owner from the metadata its
	 * text says (read before a deletion forgets it), when it has an owner at all. */
	json_t *wl_meta = NULL;
	if (kind == K_WORKLOAD && store_may_hold(m, kind, key, "\"ownerReferences\""))
		wl_meta = store_meta(m, kind, key);
	if (type == WATCH_DELETED) {
		writer_forget(m, kind, key);
		store_forget(m, kind, key);
		if (kind == K_CQ || kind == K_LQ || kind == K_COHORT)
			queues_forget_queue(m, kind, key);
	}
	if (kind >= K_OWNER_FIRST && kind <= K_OWNER_LAST) {
		state_mark(m, kind, key);
		return;
	}
	switch (kind) {
	case K_WORKLOAD:
		on_workload(m, type, key, wl_meta);
		break;
	case K_CQ:
		on_cq(m, type, key, old, obj);
		break;
	case K_LQ:
		on_lq(m, type, key, old, obj);
		break;
	case K_FLAVOR:
		on_flavor(m, type, key, obj);
		break;
	case K_COHORT:
		on_cohort(m, type, key, old, obj);
		break;
	case K_WPC:
	case K_PC:
		on_priority_class(m, type);
		break;
	case K_NAMESPACE:
		on_namespace(m, type, key, obj);
		break;
	case K_TOPOLOGY:
		nodes_on_topology(m, type, key, obj);
		break;
	case K_NODE:
		nodes_on_node(m, type, key);
		break;
	case K_POD:
		nodes_on_pod(m, type, key, old, obj);
		break;
	case K_GPOD:
		/* The store keeps a stub of a compact kind: the group is read from the whole
		 * pod. */
		podgroups_on_pod(m, key, type == WATCH_DELETED ? NULL : store_get(m, K_GPOD, key));
		break;
	default: /* the owner kinds, above; K_PODGROUP, not watched */
		break;
	}
	json_decref(wl_meta);
}

static void on_informer_event(void *arg, struct informer *inf, enum watch_event_type type,
			      const char *key, json_t *old, json_t *obj)
{
	const struct kind_arg *ka = arg;
	(void)inf;
	ingest_event(ka->m, ka->kind, type, key, old, obj);
	state_release_views(ka->m);
}

json_t *ingest_keep(struct mgr *m, enum kind kind, json_t *obj, const char *text, size_t len)
{
	struct kind_arg ka = { m, kind };
	return keep(&ka, obj, text, len);
}

static void on_informer_synced(void *arg, struct informer *inf)
{
	const struct kind_arg *ka = arg;
	(void)inf;
	state_kick(ka->m);
}

/* Whether the kind has an informer in this configuration: watched, and its integration (if
 * any) enabled by integrations.frameworks. */
static int informed(struct mgr *m, enum kind kind)
{
	const struct kind_def *d = kind_def(kind);
	return d->watched &&
	       (!d->integration || config_framework_enabled(&m->conf, d->integration->framework));
}

static int start_informer(struct mgr *m, enum kind kind)
{
	const struct kind_def *d = kind_def(kind);
	char path[256];
	int rc = kind_path(kind, NULL, NULL, NULL, path, sizeof(path));
	if (rc != 0)
		return rc;
	/* manageJobsWithoutQueueName: owners without the label are held too, so they are
	 * watched too (pods never: only queued Pods are muster's). */
	const char *selector = d->label_selector;
	if (m->conf.manage_without_queue_name && kind >= K_OWNER_FIRST && kind <= K_OWNER_LAST)
		selector = NULL;
	m->informer_args[kind] = (struct kind_arg){ m, kind };
	/* A compact kind's objects are read from their text alone; others are parsed. The
	 * informer's slice of a list a turn is its default. */
	struct informer_options o = { .name = d->informer ? d->informer : kind_plural(kind),
				      .path = path,
				      .label_selector = selector,
				      .on_event = on_informer_event,
				      .arg = &m->informer_args[kind],
				      .on_synced = on_informer_synced,
				      .transform = keep,
				      .transform_text = m->compact[kind] ? keep_text : NULL,
				      .optional = kind_optional(kind),
				      .wants_text = m->compact[kind] };
	rc = informer_start(m->loop, m->kube, &o, &m->informers[kind]);
	if (rc != 0) {
		log_error("cannot start informer", LF_STR("resource", o.name), LF_INT("rc", rc),
			  LF_END);
		return rc;
	}
	m->stores[kind] = informer_store(m->informers[kind]);
	return 0;
}

/* When a kind's informer starts: Kueue's queue objects first (a Workload listed before its
 * queue would wait a cycle), then the cluster's other objects, Workloads, and last the queued
 * objects of integrated kinds. */
static int start_rank(enum kind kind)
{
	if (kind == K_FLAVOR || kind == K_COHORT || kind == K_CQ || kind == K_LQ)
		return 0;
	return kind_def(kind)->integration ? 3 : kind == K_WORKLOAD ? 2 : 1;
}

int ingest_start(struct mgr *m)
{
	static const enum kind queues[] = { K_FLAVOR, K_COHORT, K_CQ, K_LQ };
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sizeof(queues) / sizeof(queues[0]); i++)
		rc = start_informer(m, queues[i]);
	for (int rank = 1; rank <= 3; rank++)
		for (enum kind k = 0; rc == 0 && k < K_KINDS; k++)
			if (start_rank(k) == rank && informed(m, k))
				rc = start_informer(m, k);
	return rc;
}

int ingest_synced(struct mgr *m)
{
	for (enum kind k = 0; k < K_KINDS; k++)
		if (informed(m, k) && (!m->informers[k] || !informer_synced(m->informers[k])))
			return 0;
	return 1;
}

void ingest_stop(struct mgr *m)
{
	for (int k = 0; k < K_KINDS; k++) {
		informer_stop(m->informers[k]);
		m->informers[k] = NULL;
		m->stores[k] = NULL;
	}
}
