/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manager's controller: state shared by its stages, and each stage's entry points. Not a
 * public API: everything here runs on the loop thread.
 *
 * Data flows one way:  watch -> ingest -> engine/placement -> stages -> writer -> apiserver.
 *   ingest.c     the informer table; every object kind enters here, is decoded once, and
 *                updates the engine, placement and catalog; then marks keys dirty.
 *   integrations.c  the owners of Workloads (Job, RayJob, RayCluster) through one seam
 *                (api/integrations.h): create, hold, release, pods ready, evict, finish.
 *   admission.c  keeps the engine in step with Workloads, runs cycles, applies decisions.
 *   history.c    what happened, as Events on Workloads and their owners.
 *   nodes.c      the node model, the engine's feasibility hook, plans and start hints.
 *   queues.c     ClusterQueue specs into the engine; queue and Cohort status kept incrementally.
 *   fairshare.c  fair sharing's settings, LocalQueue weights and usage, sampling, shares.
 *   writer.c     every write: in-flight tracking, conflicts, backoff, recent writes, Events.
 *   observe.c    metrics: counters bumped as events land, gauges rebuilt from state at scrape.
 *   state.c      typed key sets, the pump, deadlines, stores, the clock.
 * Beside the flow, read-only: manager.c's servers, and
 *   visibility.c the visibility endpoint: positions, why, eta, history, usage.
 *   hold.c       what the server serves, and how queued objects are held at create: admission
 *                policies or webhooks, and gang scheduling for Jobs; installs them (leader).
 * A file calls only files below it in this list (manager.c calls them all), so there is no
 * call cycle between files; work comes back up only through the dirty sets and through
 * completion callbacks the caller passed down.
 * Layers, top to bottom (tests/unit/test_layers.sh checks that no file calls one above it):
 *   manager.c hold.c visibility.c ingest.c podgroups.c integrations.c admission.c history.c
 *   nodes.c queues.c fairshare.c writer.c observe.c state.c
 *
 * Work is event-driven: events mark keys dirty, and one uv_idle "pump" (manager.c) drains the
 * dirty sets once per loop turn, so a burst of events costs one pass, and nothing polls.
 */
#ifndef MUSTER_CTRL_INTERNAL_H
#define MUSTER_CTRL_INTERNAL_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

#include "api/config.h"
#include "api/integrations.h"
#include "api/placement_objects.h"
#include "core/engine.h"
#include "core/placement.h"
#include "core/strmap.h"
#include "ctrl/manager.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/watch.h"
#include "net/certs.h"
#include "net/httpd.h"
#include "util/buf.h"

/* Every kind of object the manager watches; also the kinds of keys it tracks. The owners of
 * Workloads (integrated kinds, ctrl/integrations.c) come first, K_OWNER_FIRST..K_OWNER_LAST. */
enum kind {
	K_JOB,
	K_RAYJOB,
	K_RAYCLUSTER,
	K_WORKLOAD,
	K_CQ,
	K_LQ,
	K_FLAVOR,
	K_NAMESPACE,
	K_WPC,
	K_PC,
	K_COHORT,
	K_TOPOLOGY,
	K_NODE,
	K_POD,
	K_GPOD, /* Pods with the queue-name label, whole: plain Pods and pod groups (podgroups.c) */
	K_PODGROUP, /* not watched: a pod group, keyed by its Workload's key */
	K_KINDS
};
#define K_OWNER_FIRST K_JOB
#define K_OWNER_LAST K_RAYCLUSTER

/* A set of keys ("ns/name" or "name"): a strmap whose values are unused. */
struct keyset {
	struct strmap map;
};

/* One entry of the deadline heap: (kind, key) is reconciled again at `when` (ms), unless a
 * later sched_at for the key replaced it (the entry is then stale and skipped). */
struct deadline {
	int64_t when;
	enum kind kind;
	char *key;
};

/* The shortest time between two admission cycles (see struct mgr). */
#define ADMISSION_CYCLE_MS 100
/* The shortest time between two looks at which Workloads are next in line (admission.c). */
#define FRONT_PASS_MS 1000

struct queue_totals; /* queues.c */
struct pod_groups; /* podgroups.c */
struct lease_elector; /* kube/lease.h */
struct writer; /* writer.c */
struct observe; /* observe.c */
struct metrics; /* obs/metrics.h */

struct mgr {
	uv_loop_t *loop;
	struct manager_options opt;
	struct muster_config conf; /* from --config, over Kueue's defaults */
	struct kube_config cfg;
	struct kube_client *kube;
	/* Events go through a client of their own (NULL: kube), with its own rate limit, so that
	 * recording what happened never takes a turn from the writes that make it happen. */
	struct kube_client *event_kube;
	/* The hold's discovery, probes and installs (hold.c) have a client of their own too (NULL:
	 * kube): behind a backlog of writes (1,000 Jobs at start) they waited 37 s in kube's queue,
	 * and the replica's readiness with them. */
	struct kube_client *setup_kube;
	/* This replica: the pod's name, else host_pid. The lease's holderIdentity and the
	 * reportingInstance of its Events. */
	char identity[256];
	/* Leader election (kube/lease.h), NULL when off: only the leader admits and writes, and
	 * its elector talks through its own client, so renewals never queue behind our writes. */
	struct lease_elector *elector;
	struct kube_client *lease_kube;
	int leading; /* 1 when leader election is off */
	int stopping; /* SIGTERM: in-flight writes drain, then the lease is released */
	uv_timer_t stop_timer;
	uint64_t stop_started; /* uv_now() */

	/* Injected for tests: the wall clock (ms since the epoch) and a random number source. */
	int64_t (*now_ms)(void);
	unsigned (*rand)(void);

	/* Per kind: its informer (NULL in unit tests) and its store, key -> object, borrowed.
	 * Read through store_get; the informer owns the store. */
	struct informer *informers[K_KINDS];
	json_t *stores[K_KINDS];
	/* Compact kinds (the many and large: Workloads, Jobs): the store keeps a stub (name,
	 * namespace, uid, resourceVersion, ownerReferences) and texts the object as compact JSON,
	 * about a tenth of a jansson tree; store_get parses it into a view that stays for later
	 * reads, a bounded number of them (state_release_views). */
	unsigned char compact[K_KINDS];
	struct strmap texts[K_KINDS]; /* key -> char *: the object as compact JSON */
	struct strmap views[K_KINDS]; /* key -> json_t *: parsed texts (see state_release_views) */
	/* Views kept per kind between release points. A Workload is read by several steps in a
	 * row (its event, its decision, its write's completion, the queues' sums): parsing its
	 * text for each was a twentieth of a busy manager's CPU. A few MiB of trees at most:
	 * past the bound, the next release point frees them all. */
#define STORE_VIEWS_MAX 1024
	/* key -> json_t *: the object of the latest event, already parsed, so the step it wakes
	 * needs no parse of its own; dropped at the end of each pump pass, and at most
	 * STORE_FRESH_MAX at once (a relist of thousands would otherwise hold them all). */
	struct strmap fresh[K_KINDS];
	int synced; /* all informers have delivered their first list */
	int ledger_reconciled; /* history_reconcile ran since this replica took the lead */
	/* hold.c: what the server serves, the hold and gang decided from it, and the leader's
	 * installation of policies and webhook configurations. */
	struct {
		int step; /* discovery's next step */
		int served_map, served_podgroups, job_scheduling; /* what discovery found */
		unsigned retry_ms;
		int probe_tries; /* the dry-run Job's, before it counts as refused */
		uv_timer_t retry;
		void (*on_known)(struct mgr *m);
		int known; /* decided: the webhooks may answer, the leader may install */
		int policy; /* queued objects are held by admission policies, else by webhooks */
		int gang; /* queued Jobs are created with gang scheduling */
		/* The installation (hold.c, install_phase); HOLD_INSTALLED: every policy and
		 * configuration in place, and in force. */
		enum hold_phase { HOLD_APPLY_POLICIES, HOLD_VERIFY, HOLD_APPLY_WEBHOOKS, HOLD_DELETE_UNUSED,
				  HOLD_INSTALLED } phase;
		int installing; /* its writes (or probes) in flight */
		int probe_unheld, verify_tries; /* the verification's round */
		int probe_refused; /* a probe was refused by someone else: can't check, wait */
		char token[32]; /* this process's probe label value */
	} hold;
	int failed; /* a fatal error: the loop stops and manager_run returns 1 */

	struct certs certs;
	struct httpd *webhook_srv, *health_srv, *visibility_srv;

	struct engine *engine; /* quota, queues and every admission decision (core/engine.h) */
	struct placement *placement; /* nodes, bound pods and reservations (core/placement.h) */
	struct pobj_catalog catalog; /* flavors' topologies, for placement requests */
	json_t *plans; /* workload key -> its placement plan (nodes.c), while admitted */
	json_t *closest; /* workload key -> the nodes closest to the layout it was refused
			  * (struct pobj_plan.closest), until it is placed or gone */
	int capacity_changed; /* node capacity grew: workloads without a layout get a look */

	uv_idle_t pump;
	void (*pump_fn)(struct mgr *m); /* manager.c's pass over the dirty sets */
	uv_signal_t sigterm, sigint;

	struct keyset dirty[K_KINDS]; /* used for the owners, K_WORKLOAD, K_CQ, K_LQ, K_COHORT
				       * (status), K_POD (ungate), K_PODGROUP */
	int admission_needed;
	/* Cycles run at most every ADMISSION_CYCLE_MS (uv_now, not the injected clock: this only
	 * batches work): events stream in, and one cycle over them all is far cheaper than one per
	 * loop turn. cycle_timer brings the pump back for a cycle held back. */
	uint64_t last_cycle; /* uv_now() of the last cycle */
	unsigned cycle_ms; /* ADMISSION_CYCLE_MS; tests may set 0 */
	uv_timer_t cycle_timer;

	struct keyset pending; /* workloads waiting for quota */
	/* key -> "reason\0message": a waiting Workload's condition the engine reported but that is
	 * not written yet (its write failed, or another was in flight). The engine reports a
	 * pending reason once, so this is what a retry writes. */
	struct strmap unwritten;
	/* workload key -> int64_t ms (injected clock): since when a Workload with an unwritten
	 * wait has been seen among the next in line of its ClusterQueue (admission.c). The front
	 * is looked at after cycles, at most every front_ms (uv_now; tests may set 0), and
	 * front_timer brings a look held back. */
	struct strmap front_since;
	uint64_t front_next;
	unsigned front_ms;
	uv_timer_t front_timer;
	/* Admissions of the running cycle: to track in queue totals once the engine returns, and
	 * those whose write could not be sent, to undo then (the engine's callback must not call
	 * back into it). */
	struct keyset admitted_now, unsent;
	json_t *assumed; /* workload key -> admitted object whose write is in flight or not yet
			  * seen by the watch; the engine has already charged it */
	json_t *unsupported; /* cq name -> message about fields muster does not implement */

	/* Deadlines: a min-heap by time, and per kind the key's current time (an int64_t *). */
	struct deadline *heap;
	size_t heap_len, heap_cap;
	struct strmap deadlines[K_KINDS];
	uv_timer_t deadline_timer; /* armed for the earliest deadline */

	struct writer *writer;
	struct queue_totals *queues;
	struct pod_groups *groups; /* podgroups.c: which pods make which group */
	/* The metrics registry, served on metrics.bindAddress. Leader election sets the
	 * replica_role its series carry with metrics_set_replica_role(m->metrics, role). */
	struct metrics *metrics;
	struct ledger *ledger; /* the decision ledger (ledger/ledger.h), NULL when off */
	struct eta_cache *eta_cache; /* visibility.c: the latest forecast, for a few seconds */
	struct forecast_job *forecast_job; /* visibility.c: the forecast running, or NULL */
	unsigned visibility_work; /* visibility.c: ledger queries and forecasts on the threadpool */
	/* workload key -> "uid\0clusterQueue": admitted, as the ledger knows (history.c) */
	struct strmap open_admissions;
	struct observe *obs; /* observe.c's series and what it remembers */
	struct httpd *metrics_srv;

	/* fairshare.c. LocalQueues whose status this process has read (seeded the engine from),
	 * the sampling timer (admissionFairSharing.usageSamplingInterval; leader only), and
	 * whether the work of taking the lead (fairshare_lead) is done. */
	struct keyset afs_seen;
	uv_timer_t afs_timer;
	int fair_leading;
};

/* --- observe.c: metrics ------------------------------------------------------------------------ */

/* Makes the registry (m->metrics) and its series, and watches the kube client's calls. */
int observe_init(struct mgr *m);
void observe_release(struct mgr *m);
/* An admission cycle ran: had_pending whether workloads were waiting, admitted how many it
 * admitted, and how long it took. A cycle with neither is not an attempt. */
void observe_cycle(struct mgr *m, int had_pending, size_t admitted, uint64_t duration_ns);
/* A Workload's admission write landed; wl is the admitted object. */
void observe_admitted(struct mgr *m, json_t *wl);
/* The preemption of victim for a workload of preempting_cq was decided; counted when the
 * eviction lands (observe_evicted). */
void observe_preemptor(struct mgr *m, const char *victim, const char *preempting_cq);
/* A Workload's eviction write landed; wl is the evicted object (Evicted, maybe Preempted). */
void observe_evicted(struct mgr *m, const char *key, json_t *wl);
/* The Workload is gone: forget what was remembered for it. */
void observe_forget_workload(struct mgr *m, const char *key);
/* The ClusterQueue is gone: its series go too, as in Kueue. */
void observe_forget_cq(struct mgr *m, const char *name);
/* A node placement was tried: rc 0 planned, 1 no layout, < 0 error. */
void observe_placement(struct mgr *m, int rc);
/* A webhook request on path was answered in duration_ns. */
void observe_webhook(struct mgr *m, const char *path, uint64_t duration_ns);
/* Rebuilds the gauges that mirror state and appends the exposition text to out. 0 or -errno. */
int observe_render(struct mgr *m, struct buf *out);

/* --- state.c: key sets, marking, the pump, deadlines, stores ------------------------------ */

int keyset_add(struct keyset *s, const char *key); /* 0 or -ENOMEM */
int keyset_has(const struct keyset *s, const char *key);
void keyset_del(struct keyset *s, const char *key);
size_t keyset_size(const struct keyset *s);
/* Moves every key out of s into a fresh set the caller drains and releases (keys added to s
 * meanwhile wait for the next pass, so one busy object can't starve the rest). */
void keyset_take(struct keyset *s, struct keyset *out);
void keyset_release(struct keyset *s);
#define KEYSET_FOREACH(s, i, var)                                                                  \
	for (size_t i = 0; i < (s)->map.cap; i++)                                                  \
		if (((var) = (s)->map.slots[i].key) != NULL)

/* Marks (kind, key) dirty and makes sure the pump runs. */
void state_mark(struct mgr *m, enum kind kind, const char *key);
/* Asks for an admission cycle in the next pump. */
void state_want_cycle(struct mgr *m);
void state_kick(struct mgr *m);
/* Reconciles (kind, key) again at when_ms (ms since the epoch): a pods-ready deadline, the
 * end of a requeue backoff, a write retry. A later call for the same key replaces the time. */
void state_at(struct mgr *m, enum kind kind, const char *key, int64_t when_ms);
/* Marks every key whose time has come (the deadline timer calls it; tests with their own
 * clock call it after moving the clock). */
void state_run_deadlines(struct mgr *m);
/* The object stored for (kind, key), borrowed, or NULL. For a compact kind it is a view, which
 * the next state_release_views may free: hold none across a release point (each key of the
 * pump's drains, each decision, each write completion). */
json_t *store_get(struct mgr *m, enum kind kind, const char *key);
/* Whether the object stored for (kind, key) may hold the bytes needle: 0 only when its kept
 * text is known not to (a compact kind), without parsing it. A pass over a whole store that
 * cares only about objects saying something skips the rest this way (50,000 parses on taking
 * the lead held the loop for seconds). */
int store_may_hold(struct mgr *m, enum kind kind, const char *key, const char *needle);
/* What the store keeps of obj (slimmed already by the caller): for a compact kind the text is
 * recorded and a stub returned, for others obj itself. A new reference. text, when not NULL,
 * is obj as JSON (len bytes, as a watch event brought it), kept as it is instead of
 * serializing obj. The informer's transform, and the tests' way of filling their stores. */
json_t *store_keep(struct mgr *m, enum kind kind, json_t *obj, const char *text, size_t len);
/* The object is gone from a compact kind's store: its text and view go. */
void store_forget(struct mgr *m, enum kind kind, const char *key);
/* A release point: no pointer store_get returned for a compact kind may be used after it.
 * Views stay for later reads of their keys (a new event's text replaces its key's) until
 * there are more than a bound, when they all go. */
void state_release_views(struct mgr *m);
/* Frees every view now (tests that read a text back through a fresh parse). */
void state_drop_views(struct mgr *m);
/* Drops the objects kept from the latest events (end of a pump pass). */
void state_release_fresh(struct mgr *m);
/* The workload for the key: the assumed copy of a fresh admission, or the cached one. */
json_t *workload_view(struct mgr *m, const char *key);
int state_init(struct mgr *m);
void state_release(struct mgr *m);
/* The integration of an owner kind (K_OWNER_FIRST..K_OWNER_LAST), or NULL for other kinds. */
const struct integration *owner_integration(enum kind kind);
/* The owner kind for an apiVersion and kind (a Workload's ownerReference), or K_KINDS. */
enum kind owner_kind_for(const char *api_version, const char *kind);
/* Whether the manager's configuration enables the owner kind (integrations.frameworks). */
int owner_enabled(struct mgr *m, enum kind kind);

/* --- fairshare.c: fair sharing and admission fair sharing ---------------------------------- */

/* The Configuration's fairSharing and admissionFairSharing into the engine, and one log line
 * saying which are on. 0 or -errno (the engine refused them). */
int fairshare_init(struct mgr *m);
/* A LocalQueue changed (obj NULL: deleted; old: the previous object or NULL). ns, name and the
 * weight (has_weight 0: the default, 1) are its decoded spec. Passes a new weight to the
 * engine; with admission fair sharing, seeds the engine from its status the first time this
 * process sees it (always while following: the leader's writes are newer than our state). */
void fairshare_on_lq(struct mgr *m, const char *key, json_t *old, json_t *obj, const char *ns,
		     const char *name, int has_weight, double weight);
/* Samples admission fair sharing's usage as of now (m->now_ms) and marks every LocalQueue, so
 * its status is written. The timer runs it; tests call it after moving the clock. 0 or -errno. */
int fairshare_sample(struct mgr *m);
/* Took the lead with caches synced: Cohorts marked for their status, one sample at once, and
 * the sampling timer started. Again only after fairshare_unlead (lost the lead). */
void fairshare_lead(struct mgr *m);
void fairshare_unlead(struct mgr *m);
/* The status.fairSharing of LocalQueue lq (the cached object): Kueue's
 * LocalQueueFairSharingStatus, weightedShare 0 and admissionFairSharingStatus. A new
 * reference; NULL when admission fair sharing is off or the LocalQueue was never sampled. */
json_t *fairshare_lq_status(struct mgr *m, json_t *lq);
/* A ClusterQueue's (kind K_CQ) or Cohort's (K_COHORT) status.fairSharing, {weightedShare: N},
 * a new reference; NULL when fair sharing is off or the engine does not know it. */
json_t *fairshare_share_status(struct mgr *m, enum kind kind, const char *name);
/* Usage changed in the ClusterQueue: the Cohorts above it are marked (their share changed). */
void fairshare_mark_tree(struct mgr *m, const char *cq);
/* Quotas changed (a ClusterQueue's or Cohort's spec): every share may have; all are marked. */
void fairshare_mark_all(struct mgr *m);

/* --- writer.c: every write to the apiserver ------------------------------------------------ */

/* How a write ended. */
enum write_outcome {
	WRITE_OK, /* 2xx; the answer holds the object the apiserver returned (may be NULL) */
	WRITE_CONFLICT, /* 409: someone wrote first; decide again from the fresh object */
	WRITE_RETRY, /* transport error, 5xx or 429: retried after a backoff */
	WRITE_REJECTED, /* any other answer (400, 403, 404, 422): retried only after a long delay */
	WRITE_CANCELLED, /* the manager is shutting down */
};
/* What the apiserver answered a write with, read only as far as a completion asks: most
 * completions need nothing of it or its resourceVersion, and parsing every answer (a whole
 * Workload for each admission) was a twentieth of a busy manager's CPU. Valid during the
 * completion it is handed to. */
struct write_answer {
	const struct kube_response *resp; /* NULL: the write failed, or the answer is empty */
	json_t *obj; /* parsed by write_answer_object, freed by the writer */
	int parsed;
	char rv[72]; /* write_answer_rv's, when read from the text */
};
/* The object a successful write answered with (without metadata.managedFields), parsed at the
 * first call; NULL when the write failed or the answer is unreadable. Borrowed. */
json_t *write_answer_object(struct write_answer *a);
/* The answer's metadata.<field> string (resourceVersion, uid), read from the text without
 * parsing the object when it has no escape to decode: into buf (size > 0; emptied otherwise),
 * or borrowed from the parsed object. NULL if absent. */
const char *write_answer_meta(struct write_answer *a, const char *field, char *buf, size_t size);
/* Its metadata.resourceVersion (write_answer_meta into a->rv). */
const char *write_answer_rv(struct write_answer *a);

/* Completion, for the stage that asked; runs once per accepted write, after the writer's own
 * bookkeeping (retry scheduling, in-flight release). */
typedef void (*write_done_fn)(struct mgr *m, enum kind kind, const char *key,
			      enum write_outcome outcome, struct write_answer *answer);

/*
 * Sends one write for (kind, key): method "PATCH" (content_type merge or apply patch),
 * "POST" or "PUT" to path with body (stolen, may be NULL). base_rv is the resourceVersion of
 * the object written, as cached when the write was decided, or NULL (always for a create,
 * which writes another object than the key's). While it is in flight writer_busy says
 * so. When it lands, (kind, key) is marked dirty again (events skipped meanwhile get a look),
 * and until the cache has moved past base_rv writer_lagging says so, so nothing is sent twice
 * for the same object version. A failure schedules (kind, key) again after a per-key backoff;
 * a transport error, 5xx or 429 also pauses every write and admission cycles (writer_paused)
 * for a global backoff. Returns 0 (done will run), -EAGAIN while paused (the key is scheduled
 * for when the pause ends), or -errno.
 */
int writer_send(struct mgr *m, enum kind kind, const char *key, const char *method,
		const char *path, const char *content_type, json_t *body, const char *base_rv,
		write_done_fn done);
/* A merge patch, guarded by base_rv when given (metadata.resourceVersion is added). */
int writer_merge_patch(struct mgr *m, enum kind kind, const char *key, const char *path,
		       json_t *patch, const char *base_rv, write_done_fn done);
/* A server-side apply of config (apiVersion, kind, metadata.name and namespace, and the
 * fields field_manager owns; JSON is YAML) as field_manager, taking over fields another
 * manager set (force); guarded by base_rv as a merge patch is. path has no query. */
int writer_apply(struct mgr *m, enum kind kind, const char *key, const char *path,
		 const char *field_manager, json_t *config, const char *base_rv, write_done_fn done);
int writer_busy(struct mgr *m, enum kind kind, const char *key);
/* Whether a write based on cached_rv has landed but the cache still shows cached_rv: acting on
 * the cached object now would repeat that write. Forgets the record once the cache moved on. */
int writer_lagging(struct mgr *m, enum kind kind, const char *key, const char *cached_rv);
/* Creates recorded by writer_expect: an object this manager created that the cache has not
 * shown yet (at most WRITER_EXPECT_MS); writer_seen clears it when it arrives. */
void writer_expect(struct mgr *m, enum kind kind, const char *key);
int writer_expected(struct mgr *m, enum kind kind, const char *key);
void writer_seen(struct mgr *m, enum kind kind, const char *key);
/* The object is gone: forget what the writer remembers of it (landed writes, expected
 * creates, retry delays, Events recorded). */
void writer_forget(struct mgr *m, enum kind kind, const char *key);
/* Whether writes are paused: after transport errors (global backoff), or because this replica
 * does not hold a fresh lease (followers, and a leader that could not renew). */
int writer_paused(struct mgr *m);
/* Writes sent and not yet answered. */
size_t writer_in_flight(struct mgr *m);
/* What an Event tells, which decides its type and its budget: routine news of a Workload's
 * life (QuotaReserved, Admitted, CreatedWorkload, Started, Finished) has a small one of its
 * own, so a burst of admissions can't crowd out why something waits or was evicted. */
enum event_class {
	EVENT_ROUTINE, /* type Normal; EVENT_ROUTINE_QPS, EVENT_ROUTINE_BURST */
	EVENT_NOTABLE, /* type Normal: preemption, eviction, a stop; EVENT_QPS, EVENT_BURST */
	EVENT_WARNING, /* type Warning: why it waits, what can't be used; EVENT_QPS, EVENT_BURST */
};
/* Records an events.k8s.io/v1 Event about obj, once per (reason, message, object) for this
 * process (a new object of the same name, with another uid, gets its own); best effort, a
 * failure is only logged. Events of a class past its token bucket are dropped and counted
 * (writer_stats.events_dropped), never queued. */
#define EVENT_QPS 20
#define EVENT_BURST 200
#define EVENT_ROUTINE_QPS 5
#define EVENT_ROUTINE_BURST 50
#define EVENT_CONTROLLER "muster.io/manager"
void writer_event(struct mgr *m, enum kind kind, json_t *obj, enum event_class cls,
		  const char *reason, const char *message);
/* Counters, for logs and tests. */
struct writer_stats {
	uint64_t sent, ok, conflicts, retries, rejected, paused_skips;
	uint64_t events_sent, events_dropped; /* Events posted, and dropped by the rate limit */
};
void writer_get_stats(struct mgr *m, struct writer_stats *out);
int writer_init(struct mgr *m);
void writer_release(struct mgr *m);

/* --- queues.c: ClusterQueue specs, queue status ---------------------------------------------- */

/* A ClusterQueue's spec enters the engine here (obj NULL: deleted). */
void cq_apply(struct mgr *m, const char *name, json_t *obj);
/* Recomputes what one workload adds to its LocalQueue's counts and usage, and marks the
 * queues whose status changed. Cheap; call after anything that may change it. */
void queues_track(struct mgr *m, const char *key);
void queues_forget(struct mgr *m, const char *key);
/* A ClusterQueue (kind K_CQ), LocalQueue (K_LQ) or Cohort (K_COHORT) is gone: forget its
 * write history. */
void queues_forget_queue(struct mgr *m, enum kind kind, const char *key);
/* The ClusterQueue's usage as its status.flavorsUsage says it (flavors and resources of its
 * spec, in spec order, total and borrowed), from the engine. A new reference; [] for a
 * ClusterQueue not cached. */
json_t *cq_flavors_usage(struct mgr *m, const char *name);
/* Writes the status of dirty queues (and, with fair sharing, Cohorts) that changed, each at
 * most once per interval. */
void queues_sync(struct mgr *m);
/* For tests and debug-build checks: recounts every LocalQueue from scratch and compares with
 * the incremental totals. 0 when they agree, -EPROTO (and a log line) when not. */
int queues_check(struct mgr *m);
int queues_init(struct mgr *m);
void queues_release(struct mgr *m);

/* --- history.c: what happened, as Events and ledger records ------------------------------------ */

/* Opens the ledger (ledger.path, else <--state-dir>/ledger.db; none when neither or
 * ledger.enable is false). A ledger that can't be opened is logged and left out: 0 anyway. */
int history_init(struct mgr *m);
/* Commits what the ledger holds and closes it. */
void history_release(struct mgr *m);
/* The ClusterQueue of a Workload: its admission's, else its LocalQueue's (cached), or NULL. */
const char *workload_cluster_queue(struct mgr *m, json_t *wl);
/* A write landed; wl is the Workload it returned. Events on the Workload (and its owner):
 * QuotaReserved and Admitted, the QuotaReserved=False reason (Warning), Preempted and
 * EvictedDueTo<Reason>, Finished (and FinishedWorkload on the owner), Deactivated; and the
 * ledger's records: admit, evict, requeue, finish, deactivate. */
void history_admitted(struct mgr *m, json_t *wl);
void history_pending(struct mgr *m, json_t *wl);
void history_evicted(struct mgr *m, json_t *wl);
void history_finished(struct mgr *m, json_t *wl);
void history_deactivated(struct mgr *m, json_t *wl);
void history_requeued(struct mgr *m, json_t *wl);
/* The cache shows key Finished (by muster or by others): the ledger's admission of it, if it
 * holds one open, ends at the Finished condition's time. */
void history_finished_seen(struct mgr *m, const char *key, json_t *wl);
/* The engine decided to preempt victim for preemptor ("namespace/name"): a preempt record. */
void history_preempting(struct mgr *m, json_t *victim, const char *preemptor, const char *reason,
			const char *message);
/* The Workload is gone: an admission still open ends here (a finish record, "Deleted"). */
void history_deleted(struct mgr *m, const char *key);
/* Once the caches are synced on taking the lead: the ledger agrees with the cluster again.
 * An admission it holds open whose Workload finished, was requeued or is gone gets its end,
 * and an admitted Workload it has no open admission for gets its admit, at the times the
 * Workloads' conditions give (a kill -9 loses the last batch of records). Blocks for one
 * ledger flush. */
void history_reconcile(struct mgr *m);

/* --- nodes.c: the node model and placement ---------------------------------------------------- */

int nodes_init(struct mgr *m);
void nodes_free(struct mgr *m);
json_t *nodes_slim_node(void *arg, json_t *obj);
json_t *nodes_slim_pod(void *arg, json_t *obj);
void nodes_on_node(struct mgr *m, enum watch_event_type type, const char *key, json_t *old,
		   json_t *obj);
void nodes_on_pod(struct mgr *m, enum watch_event_type type, const char *key, json_t *old,
		  json_t *obj);
void nodes_on_topology(struct mgr *m, enum watch_event_type type, const char *key, json_t *obj);
/* A ResourceFlavor changed (rf NULL: deleted). */
void nodes_set_flavor(struct mgr *m, const char *name, json_t *rf);
/* The workload is no longer admitted: its reservation and plan go. */
void nodes_release(struct mgr *m, const char *key);
/* The workload is gone: also what was kept of its refusal. */
void nodes_forget(struct mgr *m, const char *key);
/* The nodes closest to the layout the workload was last refused (pobj_plan.closest), borrowed,
 * or NULL. */
json_t *nodes_closest(struct mgr *m, const char *key);
/* Adds the placement hints of the workload's PodSet podset to a pod template spec, in place
 * (see nodes.c). */
void nodes_start_hints(struct mgr *m, const char *key, json_t *wl, const char *podset, json_t *tspec);
/* Puts back what nodes_start_hints changed, from the Workload's template spec, in place. */
void nodes_stop_restore(json_t *orig, json_t *tspec);
/* Once per pump: capacity news for the engine, node assignments for gated pods. */
void nodes_sync(struct mgr *m);

/* --- admission.c -------------------------------------------------------------------------------- */

void workload_reconcile(struct mgr *m, const char *key);
/* Marks the Job that owns a Workload: its reconcile follows the Workload's state. */
void workload_mark_owner(struct mgr *m, json_t *wl);
/* Starts evicting an admitted workload: Evicted=True with reason and message (and
 * Preempted=True with preempted_reason when not NULL). Its Job is then suspended and its pod
 * template restored (integrations.c), and once no pod is active the admission is cleared, which
 * releases the quota and requeues it. */
void workload_evict(struct mgr *m, const char *key, json_t *wl, const char *reason,
		    const char *message, const char *preempted_reason);
/* Evicts for PodsReadyTimeout with Kueue's requeue backoff in status.requeueState, or
 * deactivates the workload (spec.active=false) once backoffLimitCount is used up. */
void workload_evict_pods_ready(struct mgr *m, const char *key, json_t *wl, const char *message);
/* Writes a workload's status (a merge patch guarded by its resourceVersion). */
int workload_write_status(struct mgr *m, const char *key, json_t *wl, json_t *status,
			  write_done_fn done);
void admission_cycle(struct mgr *m);
/* Logs msg for a Workload write that landed (nothing otherwise), with the reason and message
 * of its condition of that type when condition is not NULL: logs say what happened, not what
 * was asked. */
void workload_log_landed(enum write_outcome outcome, const char *msg, const char *key,
			 json_t *updated, const char *condition);

/* --- podgroups.c: plain Pods and pod groups ------------------------------------------------ */

int podgroups_init(struct mgr *m);
void podgroups_release(struct mgr *m);
/* A queued Pod changed (obj NULL: gone): its group's membership follows, and the group is
 * marked (K_PODGROUP). */
void podgroups_on_pod(struct mgr *m, const char *key, json_t *obj);
/* Brings a pod group and its Workload in step: create once whole, release pod by pod, evict
 * by deleting the pods, finish, and the managed finalizer (see podgroups.c). */
void podgroup_reconcile(struct mgr *m, const char *key);

/* --- integrations.c: the owners of Workloads ---------------------------------------------- */

/* Brings the owner's Workload in step with it: create, hold, release, pods ready, evict,
 * finish (see integrations.c). */
void owner_reconcile(struct mgr *m, enum kind kind, const char *key);
/* Steps shared with pod groups: the Workload's Finished condition, its quota freed once an
 * evicted owner has no pod left, PodsReady and its timeout (kind K_PODGROUP: obj is the
 * group), and a template (or a Pod: the same shape) given the flavors' node labels and
 * tolerations, our podset label and workload annotation, and the placement hints. */
void owner_finish_workload(struct mgr *m, const char *wl_key, json_t *wl,
			   const struct integration_result *result);
void owner_release_evicted(struct mgr *m, const char *wl_key, json_t *wl);
void owner_track_pods_ready(struct mgr *m, enum kind kind, const char *key, json_t *obj,
			    const char *wl_key, json_t *wl);
void owner_release_template(struct mgr *m, const char *wl_key, json_t *wl, const char *podset,
			    json_t *psa, json_t *tmpl);
/* The PodSet assignment named podset in wl's status.admission, borrowed, or NULL. */
json_t *owner_assignment(json_t *wl, const char *podset);

/* --- hold.c: the hold at create, and gang scheduling ---------------------------------------- */

/* Finds out what the server serves (every replica, once), decides the hold and gang
 * (webhooks/policies.h), logs them, sets m->hold.known and calls on_known; a demand of the
 * configuration the server can't meet stops the manager (m->failed). 0 or -errno. */
int hold_discover(struct mgr *m, void (*on_known)(struct mgr *m));
/* The leader, once the hold is known: applies the policies and webhook configurations, and
 * deletes the policies it does not use; m->hold.installed once all landed. A failed write
 * stops the manager: without its hold, queued objects would start unadmitted. 0 or -errno. */
int hold_install(struct mgr *m);

/* --- visibility.c: the visibility endpoint --------------------------------------------------- */

/* Answers one request of the visibility endpoint (see visibility.c for its paths). */
void visibility_handle(struct mgr *m, const struct httpd_request *req, struct httpd_response *resp);
/* Frees what the endpoint keeps between requests (the latest forecast). */
void visibility_release(struct mgr *m);

/* --- ingest.c ------------------------------------------------------------------------------------ */

/* Starts every informer of the table. 0 or -errno. */
int ingest_start(struct mgr *m);
void ingest_stop(struct mgr *m);
/* Whether every informer delivered its first list. */
int ingest_synced(struct mgr *m);
/* What the informer's store keeps of obj (slimmed, or a stub of a compact kind): tests fill
 * their stores with it. May modify obj. A new reference. text: obj's JSON as a watch event
 * brings it (the informer's transform), or NULL. */
json_t *ingest_keep(struct mgr *m, enum kind kind, json_t *obj, const char *text, size_t len);
/* One change of an object of the kind, as an informer reports it, with the objects as the
 * store keeps them (tests call it directly with their own stores in m->stores). */
void ingest_event(struct mgr *m, enum kind kind, enum watch_event_type type, const char *key,
		  json_t *old, json_t *obj);

/* --- manager.c ----------------------------------------------------------------------------------- */

/* For unit tests: a manager without informers, webhooks or servers, on loop, talking to the
 * apiserver cfg points at; stores are the test's own (key -> object, per kind). */
int mgr_init_for_test(struct mgr *m, uv_loop_t *loop, const struct kube_config *cfg,
		      const struct muster_config *conf);
void mgr_release_for_test(struct mgr *m);
/* One pass of the pump, as a loop turn runs it. */
void mgr_pump_once(struct mgr *m);
/* Whether a cycle is wanted but held back until ADMISSION_CYCLE_MS since the last has passed. */
int mgr_cycle_held(struct mgr *m);

#endif
