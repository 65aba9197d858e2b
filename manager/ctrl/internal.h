/* SPDX-License-Identifier: Apache-2.0 */
/*
 * State shared by the manager's controllers (manager.c, jobs.c, admission.c, status.c).
 * Not a public API: everything here runs on the loop thread and owns its JSON by reference.
 *
 * Work is event-driven: informer events mark keys dirty, and one uv_idle "pump" drains the
 * dirty sets once per loop turn, so a burst of events costs one pass, and nothing polls.
 */
#ifndef MUSTER_CTRL_INTERNAL_H
#define MUSTER_CTRL_INTERNAL_H

#include <jansson.h>
#include <uv.h>

#include "api/placement_objects.h"
#include "core/engine.h"
#include "core/placement.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/watch.h"
#include "net/certs.h"
#include "net/httpd.h"

#include "api/config.h"
#include "ctrl/manager.h"

struct mgr {
	uv_loop_t *loop;
	struct manager_options opt;
	struct muster_config conf; /* from --config, over Kueue's defaults */
	struct kube_config cfg;
	struct kube_client *kube;

	struct informer *jobs, *workloads, *cqs, *lqs, *flavors, *namespaces;
	struct informer *wpcs, *pcs; /* WorkloadPriorityClasses, scheduling PriorityClasses */
	struct informer *cohorts;
	struct informer *nodes, *pods, *topologies; /* slim copies (nodes.c) */
	int synced; /* all informers have delivered their first list */
	int webhooks_installed; /* both webhook configurations are in place */
	int webhook_configs_applied;

	struct certs certs;
	struct httpd *webhook_srv, *health_srv;

	struct engine *engine; /* quota, queues and every admission decision (core/engine.h) */
	struct placement *placement; /* nodes, bound pods and reservations (core/placement.h) */
	struct pobj_catalog catalog; /* flavors' topologies, for placement requests */
	json_t *plans; /* workload key -> its placement plan (nodes.c), while admitted */
	json_t *ungate; /* pod key -> true: a gated pod to give its node (Exact mode) */
	int capacity_changed; /* node capacity grew: workloads without a layout get a look */

	uv_idle_t pump;
	uv_signal_t sigterm, sigint;
	uv_timer_t retry; /* re-runs the pump after failed writes */

	/* Dirty sets: key -> true. */
	json_t *dirty_jobs, *dirty_workloads, *dirty_cqs, *dirty_lqs;
	int admission_needed;

	json_t *pending; /* workload key -> true: waiting for quota */
	json_t *assumed; /* workload key -> admitted object whose write is in flight or not yet
			  * seen by the watch; the engine has already charged it */
	json_t *inflight; /* "<kind>:<key>" -> true: a write is in flight, don't act twice */
	json_t *unsupported; /* cq name -> message about fields muster does not implement */
	json_t *evented; /* "<reason>:<key>" -> true: that Warning event was already recorded */
	json_t *retry_keys; /* "<kind>:<key>" -> true: reconcile again when the retry timer fires */
	json_t *deadlines; /* "<kind>:<key>" -> ms since epoch: reconcile again at that time */
	uv_timer_t deadline_timer; /* armed for the earliest deadline */
};

/* manager.c */
void mgr_mark(struct mgr *m, json_t *set, const char *key);
void mgr_kick(struct mgr *m);
/* The dirty set that reconciles keys of a kind (MGR_JOB, MGR_WL, ...). */
json_t *mgr_set_for_kind(struct mgr *m, char kind);
/* Schedules the pump again after a failed write, after a short delay. */
void mgr_retry_later(struct mgr *m);
/* Reconciles (kind, key) again after that delay: a failed write is retried, never in a loop. */
void mgr_retry_key(struct mgr *m, char kind, const char *key);
/* Reconciles (kind, key) again at when_ms (ms since the epoch), e.g. a pods-ready deadline or
 * the end of a requeue backoff. A later call for the same key replaces the time. */
void mgr_schedule(struct mgr *m, char kind, const char *key, int64_t when_ms);

/* Records a Kubernetes Event about obj (type "Normal" or "Warning"), once per (reason, object)
 * for this process; best effort, a failure is only logged. */
void mgr_event(struct mgr *m, json_t *obj, const char *type, const char *reason,
	       const char *message);

/* jobs.c */
void jobs_reconcile(struct mgr *m, const char *key);
/* The workload for the key: the assumed copy of a fresh admission, or the cached one. */
json_t *workload_view(struct mgr *m, const char *key);

/* admission.c */
void workload_reconcile(struct mgr *m, const char *key);
/* Starts evicting an admitted workload: Evicted=True with reason and message (and
 * Preempted=True with preempted_reason when not NULL). Its Job is then suspended and its pod
 * template restored (jobs.c), and once no pod is active the admission is cleared, which
 * releases the quota and requeues it. */
void workload_evict(struct mgr *m, const char *key, json_t *wl, const char *reason,
		    const char *message, const char *preempted_reason);
/* Evicts for PodsReadyTimeout with Kueue's requeue backoff in status.requeueState, or
 * deactivates the workload (spec.active=false) once backoffLimitCount is used up. */
void workload_evict_pods_ready(struct mgr *m, const char *key, json_t *wl, const char *message);
void admission_cycle(struct mgr *m);
/* The ClusterQueue a workload's LocalQueue points at, or NULL (msg says why). */
const char *workload_cluster_queue(struct mgr *m, json_t *wl, char *msg, size_t msglen);

/* nodes.c */
int nodes_init(struct mgr *m);
void nodes_free(struct mgr *m);
json_t *nodes_slim_node(void *arg, json_t *obj);
json_t *nodes_slim_pod(void *arg, json_t *obj);
void nodes_on_node(void *arg, struct informer *inf, enum watch_event_type type, const char *key,
		   json_t *old, json_t *obj);
void nodes_on_pod(void *arg, struct informer *inf, enum watch_event_type type, const char *key,
		  json_t *old, json_t *obj);
void nodes_on_topology(void *arg, struct informer *inf, enum watch_event_type type,
		       const char *key, json_t *old, json_t *obj);
/* A ResourceFlavor changed (rf NULL: deleted). */
void nodes_set_flavor(struct mgr *m, const char *name, json_t *rf);
/* The workload is no longer admitted: its reservation and plan go. */
void nodes_release(struct mgr *m, const char *key);
/* Adds placement hints to the template spec a start patch sets (see nodes.c). */
void nodes_start_hints(struct mgr *m, const char *key, json_t *wl, json_t *orig, json_t *tspec);
/* Puts back what nodes_start_hints changed, from the Workload's template spec. */
void nodes_stop_restore(json_t *orig, json_t *tspec);
/* Once per pump: capacity news for the engine, node assignments for gated pods. */
void nodes_sync(struct mgr *m);

/* status.c */
void cq_apply(struct mgr *m, const char *name, json_t *obj);
void status_sync(struct mgr *m);
/* PATCHes status of a namespaced or cluster object with a merge patch guarded by its
 * resourceVersion; on_ok (may be NULL) receives the updated object. Marks key in-flight. */
typedef void (*status_done_fn)(struct mgr *m, const char *key, json_t *updated, int ok);
/* Kinds of in-flight keys: objects of different kinds may share a namespace/name. */
#define MGR_JOB 'j'
#define MGR_WL 'w'
#define MGR_CQ 'c'
#define MGR_LQ 'l'
#define MGR_POD 'p'
int patch_object(struct mgr *m, const char *path, char kind, const char *key, json_t *patch,
		 status_done_fn done);
/* patch_object on a Workload's status subresource (wl gives its namespace and name). */
int patch_workload_status(struct mgr *m, const char *key, json_t *wl, json_t *patch,
			  status_done_fn done);
/* Whether a write for (kind, key) is in flight; and marking one. */
int mgr_inflight(struct mgr *m, char kind, const char *key);
void mgr_inflight_set(struct mgr *m, char kind, const char *key, int on);

#endif
