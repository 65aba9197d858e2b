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
#include "util/log.h"

/* Deletes metadata.managedFields, often the largest part of an object and never read; whether
 * there was one. */
static int drop_managed_fields(json_t *obj)
{
	return json_object_del(json_object_get(obj, "metadata"), "managedFields") == 0;
}

/* What the store keeps of an object: everything but metadata.managedFields. Modifies obj in
 * place (the informer drops it after). */
static json_t *without_managed_fields(void *arg, json_t *obj, const char *text, size_t len)
{
	(void)arg;
	(void)text;
	(void)len;
	(void)drop_managed_fields(obj);
	return json_incref(obj);
}

static json_t *slim_node(void *arg, json_t *obj, const char *text, size_t len)
{
	(void)text;
	(void)len;
	return nodes_slim_node(arg, obj);
}

static json_t *slim_pod(void *arg, json_t *obj, const char *text, size_t len)
{
	(void)text;
	(void)len;
	return nodes_slim_pod(arg, obj);
}

/* A Workload without managedFields and with its pod templates' containers cut to what muster
 * reads (name, resources, restartPolicy): images, commands, env and probes can be most of a
 * Workload, and a Job's pods are made from the Job, not from its Workload. Workloads and Jobs
 * are the many and the large: the store keeps them compact (state.c). */
static json_t *keep_workload(void *arg, json_t *obj, const char *text, size_t len)
{
	size_t i, cut = 0;
	json_t *ps;
	json_array_foreach(obj_path(obj, "spec.podSets"), i, ps)
	{
		json_t *spec = obj_path(ps, "template.spec");
		cut += obj_slim_containers(json_object_get(spec, "containers"));
		cut += obj_slim_containers(json_object_get(spec, "initContainers"));
	}
	cut += drop_managed_fields(obj);
	/* The event's text when slimming left the object as the text has it (the watch cut
	 * managedFields already): that spares serializing the tree again. */
	return store_keep(arg, K_WORKLOAD, obj, cut ? NULL : text, len);
}

static json_t *keep_owner(struct mgr *m, enum kind kind, json_t *obj, const char *text,
			  size_t len)
{
	return store_keep(m, kind, obj, drop_managed_fields(obj) ? NULL : text, len);
}

static json_t *keep_job(void *arg, json_t *obj, const char *text, size_t len)
{
	return keep_owner(arg, K_JOB, obj, text, len);
}

static json_t *keep_rayjob(void *arg, json_t *obj, const char *text, size_t len)
{
	return keep_owner(arg, K_RAYJOB, obj, text, len);
}

static json_t *keep_raycluster(void *arg, json_t *obj, const char *text, size_t len)
{
	return keep_owner(arg, K_RAYCLUSTER, obj, text, len);
}

static json_t *keep_queued_pod(void *arg, json_t *obj, const char *text, size_t len)
{
	return keep_owner(arg, K_GPOD, obj, text, len);
}

struct informer_def {
	enum kind kind;
	const char *name;
	const char *path;
	const char *label_selector;
	json_t *(*transform)(void *arg, json_t *obj, const char *text, size_t len);
	/* Kinds of integrations run only when integrations.frameworks names this framework;
	 * NULL: always. */
	const char *framework;
	/* The CRD may be missing (then the informer is empty and synced:
	 * informer_options.optional). */
	int optional;
};

/* Flavors, queues and cohorts first: a Workload listed before its queue would wait a cycle. */
static const struct informer_def informer_table[] = {
	{ K_FLAVOR, "resourceflavors", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", NULL, without_managed_fields, NULL, 0 },
	{ K_COHORT, "cohorts", "/apis/kueue.x-k8s.io/v1beta2/cohorts", NULL, without_managed_fields, NULL, 0 },
	{ K_CQ, "clusterqueues", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", NULL, without_managed_fields, NULL, 0 },
	{ K_LQ, "localqueues", "/apis/kueue.x-k8s.io/v1beta2/localqueues", NULL, without_managed_fields, NULL, 0 },
	{ K_NAMESPACE, "namespaces", "/api/v1/namespaces", NULL, without_managed_fields, NULL, 0 },
	{ K_WPC, "workloadpriorityclasses", "/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses", NULL, without_managed_fields, NULL, 0 },
	{ K_PC, "priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses", NULL, without_managed_fields, NULL, 0 },
	{ K_TOPOLOGY, "topologies", "/apis/kueue.x-k8s.io/v1beta2/topologies", NULL, without_managed_fields, NULL, 0 },
	{ K_NODE, "nodes", "/api/v1/nodes", NULL, slim_node, NULL, 0 },
	{ K_POD, "pods", "/api/v1/pods", NULL, slim_pod, NULL, 0 },
	{ K_WORKLOAD, "workloads", "/apis/kueue.x-k8s.io/v1beta2/workloads", NULL, keep_workload, NULL, 0 },
	{ K_JOB, "jobs", "/apis/batch/v1/jobs", LABEL_QUEUE_NAME, keep_job, "batch/job", 0 },
	{ K_RAYJOB, "rayjobs", "/apis/ray.io/v1/rayjobs", LABEL_QUEUE_NAME, keep_rayjob, "ray.io/rayjob", 1 },
	{ K_RAYCLUSTER, "rayclusters", "/apis/ray.io/v1/rayclusters", LABEL_QUEUE_NAME, keep_raycluster,
	  "ray.io/raycluster", 1 },
	{ K_GPOD, "queuedpods", "/api/v1/pods", LABEL_QUEUE_NAME, keep_queued_pod, "pod", 0 },
};
#define N_INFORMERS (sizeof(informer_table) / sizeof(informer_table[0]))

static void mark_all(struct mgr *m, enum kind store_kind, enum kind mark_kind)
{
	const char *key;
	json_t *v;
	json_object_foreach(m->stores[store_kind], key, v)
		state_mark(m, mark_kind, key);
}

static void on_workload(struct mgr *m, enum watch_event_type type, const char *key, json_t *obj)
{
	if (type != WATCH_DELETED)
		writer_seen(m, K_WORKLOAD, key);
	state_mark(m, K_WORKLOAD, key);
	workload_mark_owner(m, obj);
	state_want_cycle(m);
}

/* Whether an update changed the object's spec (not only its status: our own writes). */
static int spec_changed(json_t *old, json_t *obj)
{
	return !old || !obj || !json_equal(json_object_get(old, "spec"), json_object_get(obj, "spec"));
}

static void on_cq(struct mgr *m, enum watch_event_type type, const char *key, json_t *old,
		  json_t *obj)
{
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
	if (type == WATCH_DELETED || eobj_local_queue_decode(obj, NULL, &q, err, sizeof(err)) != 0) {
		if (type != WATCH_DELETED) {
			log_error("cannot use LocalQueue", LF_STR("localQueue", key), LF_STR("error", err), LF_END);
			writer_event(m, K_LQ, obj, EVENT_WARNING, "LocalQueueNotUsable", err);
		}
		char ns[300];
		snprintf(ns, sizeof(ns), "%.*s", slash ? (int)(slash - key) : 0, key);
		engine_remove_local_queue(m->engine, ns, slash ? slash + 1 : key);
		if (type == WATCH_DELETED)
			fairshare_on_lq(m, key, old, NULL, ns, slash ? slash + 1 : key, 0, 1);
	} else {
		if (engine_set_local_queue(m->engine, q.namespace_name, q.name, q.cluster_queue, q.stop) != 0) {
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
		log_error("cannot use ResourceFlavor", LF_STR("flavor", key), LF_STR("error", err), LF_END);
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
		log_error("cannot use Namespace", LF_STR("namespace", key), LF_STR("error", err), LF_END);
		eobj_namespace_release(&ns);
	}
	state_want_cycle(m);
}

void ingest_event(struct mgr *m, enum kind kind, enum watch_event_type type, const char *key,
		  json_t *old, json_t *obj)
{
	if (type == WATCH_DELETED) {
		writer_forget(m, kind, key);
		store_forget(m, kind, key);
		if (kind == K_CQ || kind == K_LQ || kind == K_COHORT)
			queues_forget_queue(m, kind, key);
	}
	switch (kind) {
	case K_JOB:
	case K_RAYJOB:
	case K_RAYCLUSTER:
		state_mark(m, kind, key);
		break;
	case K_WORKLOAD:
		on_workload(m, type, key, obj);
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
		nodes_on_node(m, type, key, old, obj);
		break;
	case K_POD:
		nodes_on_pod(m, type, key, old, obj);
		break;
	case K_GPOD:
		/* The store keeps a stub of a compact kind: the group is read from the whole pod. */
		(void)obj;
		podgroups_on_pod(m, key, type == WATCH_DELETED ? NULL : store_get(m, K_GPOD, key));
		break;
	case K_PODGROUP:
	case K_KINDS:
		break;
	}
}

static void on_informer_event(void *arg, struct informer *inf, enum watch_event_type type,
			      const char *key, json_t *old, json_t *obj)
{
	struct mgr *m = arg;
	for (int k = 0; k < K_KINDS; k++)
		if (m->informers[k] == inf) {
			ingest_event(m, (enum kind)k, type, key, old, obj);
			state_release_views(m);
			return;
		}
}

json_t *ingest_keep(struct mgr *m, enum kind kind, json_t *obj, const char *text, size_t len)
{
	for (size_t i = 0; i < N_INFORMERS; i++)
		if (informer_table[i].kind == kind && informer_table[i].transform)
			return informer_table[i].transform(m, obj, text, len);
	return json_incref(obj);
}

static void on_informer_synced(void *arg, struct informer *inf)
{
	(void)inf;
	state_kick(arg);
}

int ingest_start(struct mgr *m)
{
	for (size_t i = 0; i < N_INFORMERS; i++) {
		const struct informer_def *d = &informer_table[i];
		if (d->framework && !config_framework_enabled(&m->conf, d->framework))
			continue;
		/* manageJobsWithoutQueueName: owners without the label are held too, so they are
		 * watched too (pods never: only queued Pods are muster's). */
		const char *selector = d->label_selector;
		if (m->conf.manage_without_queue_name && d->kind >= K_OWNER_FIRST && d->kind <= K_OWNER_LAST)
			selector = NULL;
		struct informer_options o = { d->name, d->path, selector, on_informer_event, m,
					      on_informer_synced, d->transform, d->optional,
					      m->compact[d->kind] };
		int rc = informer_start(m->loop, m->kube, &o, &m->informers[d->kind]);
		if (rc != 0) {
			log_error("cannot start informer", LF_STR("resource", d->name), LF_INT("rc", rc), LF_END);
			return rc;
		}
		m->stores[d->kind] = informer_store(m->informers[d->kind]);
	}
	return 0;
}

int ingest_synced(struct mgr *m)
{
	for (size_t i = 0; i < N_INFORMERS; i++) {
		const struct informer_def *d = &informer_table[i];
		struct informer *inf = m->informers[d->kind];
		if (d->framework && !config_framework_enabled(&m->conf, d->framework))
			continue;
		if (!inf || !informer_synced(inf))
			return 0;
	}
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
