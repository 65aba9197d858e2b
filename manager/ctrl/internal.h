/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manager's controller: state shared by its stages, and each stage's entry points. Not a
 * public API: everything here runs on the loop thread.
 *
 * Data flows one way:  watch -> ingest -> engine/placement -> stages -> writer -> apiserver.
 *   ingest.c     the informers of the kind table; every object kind enters here, is decoded
 *                once, and updates the engine, placement and catalog; then marks keys dirty.
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
 *   kinds.c      the kind table: what each kind is (name, apiVersion, resource, paths,
 *                informer, store, integration), for every file above.
 *   records.c    one record per Workload (and per ClusterQueue) of what ctrl/ knows of it
 *                beyond its cached object, with one forget.
 * Beside the flow, read-only: manager.c's servers, and
 *   visibility.c the visibility endpoint: positions, why, eta, history, usage.
 *   hold.c       what the server serves, and how queued objects are held at create: admission
 *                policies or webhooks, and gang scheduling for Jobs; installs them (leader).
 * A file calls only files below it in this list (manager.c calls them all), so there is no
 * call cycle between files; work comes back up only through the dirty sets and through
 * completion callbacks the caller passed down.
 * Layers, top to bottom (tests/unit/test_layers.sh checks that no file calls one above it):
 *   manager.c hold.c visibility.c ingest.c podgroups.c integrations.c admission.c history.c
 *   nodes.c queues.c fairshare.c writer.c observe.c state.c kinds.c records.c
 *
 * Work is event-driven: events mark keys dirty, and one uv_idle "pump" (manager.c) drains the
 * dirty sets once per loop turn, so a burst of events costs one pass, and nothing polls. A
 * pass stops when its time budget (PUMP_BUDGET_NS) is spent and the rest waits for the next
 * turn, so nothing else on the loop waits behind a backlog.
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

/* Every kind of object the manager watches; also the kinds of keys it tracks. What each is
 * (its name, apiVersion, resource, informer, store) is its row of the kind table (kinds.c).
 * The owners of Workloads come first, K_OWNER_FIRST..K_OWNER_LAST, one per line of
 * api/integrations.h's INTEGRATED_OWNERS: K_JOB, K_RAYJOB, K_RAYCLUSTER. */
#define KIND_OF_OWNER(name, in) K_##name,
enum kind {
	INTEGRATED_OWNERS(KIND_OF_OWNER) K_WORKLOAD,
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
#undef KIND_OF_OWNER
#define K_OWNER_FIRST ((enum kind)0)
#define K_OWNER_LAST ((enum kind)(K_WORKLOAD - 1))

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
struct lease_thread; /* kube/lease_thread.h */
struct writer; /* writer.c */
struct observe; /* observe.c */
struct metrics; /* obs/metrics.h */

/* What the writer remembers of one object (writer.c): a Workload's is part of its record, other
 * kinds' are the writer's own, one per object while it holds something. */
struct write_state {
	/* Our writes that landed and that the cache has not caught up with (writer.c; one
	 * allocation, freed with free()), or NULL. */
	struct landed_writes *landed;
	char *evented; /* "uid|reason#hash|...|": the Events recorded, so each is recorded once */
	int64_t expect_until; /* created, not yet seen: expected until then (ms); 0: not expected */
	unsigned delay; /* the next retry delay (ms); 0: no failure since the last success */
	unsigned char inflight; /* a write is sent and not yet answered */
};

/* An admitted Workload's placement plan (nodes.c), one entry per podSet, in assignment order:
 * what its release's hints and its pods' nodes are made from (the topology domain it was kept
 * in is the nodes' labels, and is not kept). */
struct plan_slot {
	char *node;
	int64_t count; /* pods planned on the node */
};
struct plan_pod {
	char *pod, *node; /* a pod given its node (exact mode), while the pod exists */
};
struct podset_plan {
	char *podset;
	size_t n_slots;
	struct plan_slot *slots; /* in fill order */
	size_t n_assigned, cap_assigned;
	struct plan_pod *assigned;
};
struct wl_plan {
	size_t n_podsets;
	struct podset_plan *podsets;
};

/* What one Workload adds to its LocalQueue's status (queues.c). */
struct queue_usage {
	char *flavor, *resource;
	int64_t milli;
};
struct queue_contrib {
	char *lq; /* "ns/queueName", after the struct in its allocation */
	char *cq; /* its ClusterQueue (after lq), or NULL */
	unsigned char pending, reserving, admitted;
	size_t n;
	struct queue_usage *usage;
};

/*
 * What ctrl/ knows of one Workload beyond its cached object (records.c), in one place: made
 * when a stage first has something to keep, gone when the Workload is deleted
 * (wl_record_forget, from workload_reconcile). The key is the record's own (a borrowed key in
 * the map), so a record is one allocation.
 */
struct wl_record {
	struct write_state write; /* writer.c */
	/* admission.c: our admission while its write is in flight or not yet seen by the watch
	 * (the engine has already charged it); an owned reference, or NULL. */
	json_t *assumed;
	/* admission.c: a waiting Workload's condition the engine reported but that is not written
	 * yet (its write failed, or another was in flight), "reason\0message"; the engine reports
	 * a pending reason once, so this is what a retry writes. NULL: nothing owed. Shared by
	 * every record owing the same wait (records.c), set only by wl_record_set_unwritten. */
	const char *unwritten;
	int64_t front_since; /* since when (ms) it has been next in line with an unwritten wait */
	int64_t deadline; /* state.c: when (ms) it is reconciled again (has_deadline) */
	struct wl_plan *plan; /* nodes.c: the placement plan, while admitted; owned, or NULL */
	/* queues.c: what it adds to its LocalQueue's totals, as they count it; owned, or NULL */
	struct queue_contrib *queued;
	json_t *closest; /* nodes.c: the nodes closest to the layout it was refused (pobj_plan's
			  * closest), until it is placed or gone; owned, or NULL */
	char *open_admission; /* history.c: "uid\0clusterQueue", admitted as the ledger knows */
	char *preempting_cq; /* observe.c: the ClusterQueue it is being preempted for, or NULL */
	/* admission.c: what its cached object's QuotaReserved condition says, as set_pending
	 * reads it (struct cond_digest there), while cond_known; ingest.c forgets it on each
	 * event of the Workload. A cycle reports waits for thousands of Workloads again and
	 * again: the digest decides most of them without parsing the Workload. cond_hash: the
	 * False condition's wait (wait_hash), else 0. */
	uint64_t cond_hash;
	unsigned cond_known : 1;
	unsigned cond_waits : 1; /* absent, or one of the engine's waits */
	unsigned cond_gen_ok : 1; /* its observedGeneration is the Workload's generation */
	unsigned pending : 1; /* waiting for quota (records.pending counts them) */
	unsigned has_front : 1; /* front_since is set */
	unsigned has_deadline : 1; /* deadline is set */
	char key[]; /* "namespace/name" */
};

/* What ctrl/ knows of one ClusterQueue beyond its cached object (records.c): what muster does
 * not implement of its spec (queues.c's cq_apply), NULL when nothing. */
struct cq_record {
	char *inactive; /* why it can admit nothing (admission checks; a spec muster refused) */
	char *not_implemented; /* fields ignored, for the UnsupportedFields condition */
	char name[];
};

/* Every record, by key (records.c). */
struct records {
	struct strmap workloads; /* workload key -> struct wl_record *, borrowed keys */
	struct strmap cqs; /* ClusterQueue name -> struct cq_record *, borrowed keys */
	size_t pending; /* records with pending set */
	size_t unwritten; /* records with an unwritten wait */
	/* "reason\x1fmessage" -> the wait records owe (records.c), borrowed keys: a queue's worth
	 * of pending Workloads mostly owe the same few hundred bytes. */
	struct strmap waits;
	/* The wait wait_ref gave last, or NULL: a cycle reports the same wait for a queue's worth
	 * of Workloads in a row, and comparing it costs less than hashing it again. */
	const char *last_wait;
};

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
	/* Leader election (kube/lease_thread.h), NULL when off: only the leader admits and
	 * writes. Its elector runs on a thread of its own, with its own loop and client, so
	 * renewals never queue behind our writes nor wait for a long turn of our loop. */
	struct lease_thread *elector;
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
	/* Each informer's argument: the manager and the kind its events and objects are of. */
	struct kind_arg {
		struct mgr *m;
		enum kind kind;
	} informer_args[K_KINDS];
	/* Compact kinds (the many and large: Workloads, Jobs): the store keeps a stub (the
	 * resourceVersion, store_keep) and texts the object as compact JSON,
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
		enum hold_phase {
			HOLD_APPLY_POLICIES,
			HOLD_VERIFY,
			HOLD_APPLY_WEBHOOKS,
			HOLD_DELETE_UNUSED,
			HOLD_INSTALLED
		} phase;
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
	int capacity_changed; /* node capacity grew: workloads without a layout get a look */

	uv_idle_t pump;
	void (*pump_fn)(struct mgr *m); /* manager.c's pass over the dirty sets */
	/* Times each loop turn's work for the metrics (observe.c starts it); unreferenced, so it
	 * never keeps the loop alive. */
	uv_prepare_t turn_prepare;
	uv_signal_t sigterm, sigint;

	struct keyset dirty[K_KINDS]; /* used for the owners, K_WORKLOAD, K_CQ, K_LQ, K_COHORT
				       * (status), K_POD (ungate), K_PODGROUP */
	/* Per kind, the batch the pump is draining (state_drain): what was dirty when it was
	 * taken, reconciled over as many passes as the budget needs. */
	struct drain {
		struct keyset batch; /* a reconciled key's value is cleared, its slot kept */
		size_t next; /* the next slot to look at */
		size_t left; /* keys not yet reconciled */
	} draining[K_KINDS];
	uint64_t pump_budget_ns; /* PUMP_BUDGET_NS; tests may set less */
	unsigned pump_first; /* manager.c: the stage the next pass starts with (fairness) */
	/* What the running turn's pump did, for the slow-turn log line (observe.c): keys
	 * reconciled and ns spent in the drains, the admission cycle and queue statuses. */
	struct pump_turn {
		size_t keys;
		uint64_t drain_ns, cycle_ns, queues_ns;
	} pump_turn;
	int admission_needed;
	/* Cycles run at most every ADMISSION_CYCLE_MS (uv_now, not the injected clock: this only
	 * batches work): events stream in, and one cycle over them all is far cheaper than one per
	 * loop turn. cycle_timer brings the pump back for a cycle held back. */
	uint64_t last_cycle; /* uv_now() of the last cycle */
	unsigned cycle_ms; /* ADMISSION_CYCLE_MS; tests may set 0 */
	uv_timer_t cycle_timer;

	/* Each Workload's and ClusterQueue's state beyond its cached object (records.c). */
	struct records records;
	/* When a Workload with an unwritten wait was first seen among the next in line of its
	 * ClusterQueue (wl_record.front_since, admission.c): the front is looked at after cycles,
	 * at most every front_ms (uv_now; tests may set 0), and front_timer brings a look held
	 * back. */
	uint64_t front_next;
	unsigned front_ms;
	uv_timer_t front_timer;
	/* Admissions of the running cycle: to track in queue totals once the engine returns, and
	 * those whose write could not be sent, to undo then (the engine's callback must not call
	 * back into it). */
	struct keyset admitted_now, unsent;

	/* Deadlines: a min-heap by time, and per kind the key's current time (an int64_t *). */
	struct deadline *heap;
	size_t heap_len, heap_cap;
	struct strmap deadlines[K_KINDS]; /* unused for K_WORKLOAD: wl_record.deadline */
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
	struct observe *obs; /* observe.c's series and what it remembers */
	struct httpd *metrics_srv;

	/* fairshare.c. LocalQueues whose status this process has read (seeded the engine from),
	 * the sampling timer (admissionFairSharing.usageSamplingInterval; leader only), and
	 * whether the work of taking the lead (fairshare_lead) is done. */
	struct keyset afs_seen;
	uv_timer_t afs_timer;
	int fair_leading;
};

/* --- observe.c: metrics
 * ------------------------------------------------------------------------ */

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
#define KEYSET_FOREACH(s, i, var)                 \
	for (size_t i = 0; i < (s)->map.cap; i++) \
		if (((var) = (s)->map.slots[i].key) != NULL)

/* A pump pass's time budget: 10 ms. The target for a loop turn is a p99 of 20 ms and
 * a max of 200 ms; a pass of 10 ms leaves the other half of a turn to the I/O callbacks that
 * bring the events (and an admission cycle), and at some 5-20 us a key it still reconciles
 * hundreds of keys per pass, so a backlog of 50,000 drains in well under a second of passes
 * while the lease, watches and HTTP get a turn between them. */
#define PUMP_BUDGET_NS (10u * 1000u * 1000u)
/* The clock is read once every this many keys (uv_hrtime is cheap, but not free). */
#define PUMP_CHECK_EVERY 8
struct pump_budget {
	uint64_t until_ns; /* uv_hrtime() at which the pass is over */
	unsigned keys; /* keys reconciled in the pass */
	int spent;
};
/* Starts a pass's budget of m->pump_budget_ns. */
void pump_budget_start(struct mgr *m, struct pump_budget *b);
/* Whether the pass's budget is spent; a pass always reconciles one key at least. */
int pump_budget_spent(struct pump_budget *b);
/*
 * Reconciles keys of kind through reconcile, one at a time (a release point after each), until
 * the budget is spent: the rest stay for the next pass. The keys are those of a batch, what was
 * dirty when the batch was taken; keys marked meanwhile wait for the next batch (so one busy
 * object can't starve the rest, nor a steady stream the end of a batch). A drained batch is
 * followed by a new one only at the next call, and only if may_take. Returns 1 when no batch
 * is in progress (all drained), 0 when keys remain.
 */
int state_drain(struct mgr *m, enum kind kind, struct pump_budget *b, int may_take,
		void (*reconcile)(struct mgr *m, enum kind kind, const char *key));
/* Whether kind has a batch in progress. */
int state_draining(struct mgr *m, enum kind kind);
/* Keys of kind dirty or in its batch, not yet reconciled. */
size_t state_pending(struct mgr *m, enum kind kind);

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
/* The object stored for (kind, key) as far as its metadata goes ({"metadata": ...}, maybe the
 * whole object), a new reference, or NULL. For a compact kind without a view or a fresh
 * object, only its text's metadata member is parsed: an event's handler that wants the owner
 * of each of a relist's 50,000 Workloads must not parse them whole. */
json_t *store_meta(struct mgr *m, enum kind kind, const char *key);
/* Whether the object stored for (kind, key) may hold the bytes needle: 0 only when its kept
 * text is known not to (a compact kind), without parsing it. A pass over a whole store that
 * cares only about objects saying something skips the rest this way (50,000 parses on taking
 * the lead held the loop for seconds). */
int store_may_hold(struct mgr *m, enum kind kind, const char *key, const char *needle);
/* What the store keeps of obj (slimmed already by the caller): for a compact kind the text is
 * recorded and a stub returned, for a kind with a typed model (kind_def.model) a stub, for
 * others obj itself. A stub is the object's resourceVersion alone (a JSON integer, or a string
 * when it is no plain number), what relists compare (kube/watch.h); handlers read such a kind's
 * object from the store or its model, never from the stub. A new reference. text, when not
 * NULL, is obj as JSON (len bytes, as a watch event brought it), kept as it is instead of
 * serializing obj. The informer's transform, and the tests' way of filling their stores. */
json_t *store_keep(struct mgr *m, enum kind kind, json_t *obj, const char *text, size_t len);
/* What the store keeps of a compact kind's object read from its text alone (len bytes,
 * managedFields cut, as a watch event or a list brings it; rv its resourceVersion, which the
 * informer read from it), never parsed here: the text
 * slimmed by the kind's slim_rule (which validates it) is kept under key, and the stub
 * returned; a later read parses it (store_get). NULL when the text isn't an object muster can
 * read, or for want of memory: the informer then parses it and calls store_keep's way, which
 * says what is wrong (the informer's transform_text). */
json_t *store_keep_text(struct mgr *m, enum kind kind, const char *key, const char *rv,
			const char *text, size_t len);
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

/* --- records.c: one record per Workload and per ClusterQueue ------------------------------ */

/* The Workload's record, borrowed, or NULL when there is none. One map lookup: callers fetch
 * it once and read its fields. */
struct wl_record *wl_record_get(struct mgr *m, const char *key);
/* The Workload's record, made empty if there is none; NULL only when out of memory. */
struct wl_record *wl_record_make(struct mgr *m, const char *key);
/* Sets or clears the pending flag (making the record to set it), keeping records.pending. */
void wl_record_set_pending(struct mgr *m, const char *key, int pending);
/* Remembers the wait a Workload owes its status (copies of reason and message), or with
 * reason NULL forgets it and its front_since; keeps records.unwritten. 0 or -ENOMEM. */
int wl_record_set_unwritten(struct mgr *m, struct wl_record *r, const char *reason,
			    const char *msg);
/* The unwritten wait's message (after its reason), or NULL. */
const char *wl_record_unwritten_message(const struct wl_record *r);
/* Frees a plan, a queue contribution (NULL is fine). */
void wl_plan_free(struct wl_plan *plan);
void queue_contrib_free(struct queue_contrib *c);
/* The one forget: the Workload is gone, and so is everything ctrl/ kept of it. A write still in
 * flight keeps the record holding only that; its completion marks the key again, and the
 * reconcile that follows forgets it for good. What others derived from the record (the queue
 * totals its contribution is counted in) is the caller's to end first (queues_forget). */
void wl_record_forget(struct mgr *m, const char *key);
/* How many Workload records there are (tests: none outlives its Workload). */
size_t wl_records_count(struct mgr *m);
#define WL_RECORDS_FOREACH(m, i, rec)                           \
	for (size_t i = 0; i < (m)->records.workloads.cap; i++) \
		if ((m)->records.workloads.slots[i].key &&      \
		    ((rec) = (m)->records.workloads.slots[i].value) != NULL)
/* For tests and debug builds: every record whose Workload is not cached has a reason to be
 * (a write in flight, a deadline, an expected create, a reconcile coming). 0, or -EPROTO
 * (and a log line) for the first orphan. */
int wl_records_check(struct mgr *m);
/* The ClusterQueue's record, borrowed, or NULL. */
struct cq_record *cq_record_get(struct mgr *m, const char *name);
/* Replaces the ClusterQueue's record by one saying inactive and not_implemented (either may be
 * NULL; both NULL: the record goes). 0 or -ENOMEM (the record is then gone). */
int cq_record_set(struct mgr *m, const char *name, const char *inactive,
		  const char *not_implemented);
void records_init(struct mgr *m);
void records_release(struct mgr *m);

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
 * for when the pause ends), or
 * -errno. */
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
		 const char *field_manager, json_t *config, const char *base_rv,
		 write_done_fn done);
int writer_busy(struct mgr *m, enum kind kind, const char *key);
/* Whether a write based on cached_rv has landed but the cache still shows cached_rv: acting on
 * the cached object now would repeat that write. Forgets the record once the cache moved on. */
int writer_lagging(struct mgr *m, enum kind kind, const char *key, const char *cached_rv);
/* The resourceVersion a write to (kind, key) should be guarded by: while writer_lagging, the
 * one our last write answered with (the cache's would only lose, 409), else cached_rv. */
const char *writer_guard_rv(struct mgr *m, enum kind kind, const char *key, const char *cached_rv);
/* Creates recorded by writer_expect: an object this manager created that the cache has not
 * shown yet (at most WRITER_EXPECT_MS); writer_seen clears it when it arrives. */
void writer_expect(struct mgr *m, enum kind kind, const char *key);
int writer_expected(struct mgr *m, enum kind kind, const char *key);
void writer_seen(struct mgr *m, enum kind kind, const char *key);
/* The object is gone: forget what the writer remembers of it (landed writes, expected
 * creates, retry delays, Events recorded). A Workload's goes with its record instead
 * (wl_record_forget). */
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
/* What cq_flavors_usage is made from, without a tree: for each flavor of each resource group
 * of the ClusterQueue's spec, in spec order, fn(arg, flavor, NULL, NULL) opens the flavor,
 * then fn(arg, flavor, resource, usage) comes for each resource the group covers. Flavors and
 * resources without a name are skipped; nothing for a ClusterQueue not cached. */
typedef void (*cq_usage_fn)(void *arg, const char *flavor, const char *resource,
			    const struct eng_cq_usage *usage);
void cq_usage_walk(struct mgr *m, const char *name, cq_usage_fn fn, void *arg);
/* Writes the status of dirty queues (and, with fair sharing, Cohorts) that changed, each at
 * most once per interval, as far as the pass's budget goes (state_drain). */
void queues_sync(struct mgr *m, struct pump_budget *b);
/* For tests and debug-build checks: recounts every LocalQueue from scratch and compares with
 * the incremental totals. 0 when they agree, -EPROTO (and a log line) when not. */
int queues_check(struct mgr *m);
int queues_init(struct mgr *m);
void queues_release(struct mgr *m);

/* --- history.c: what happened, as Events and ledger records
 * ------------------------------------ */

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
/* The kind table's model of Nodes (struct kind_def.model): a Node as it comes goes straight
 * into placement's node model (labels, taints, allocatable, schedulable), which is where
 * every reader of a Node's fields finds them; a Node muster can't model is refused there, and
 * gets an Event saying why. Updates that change nothing placement keeps (heartbeats) cost one
 * decode and a comparison. */
void nodes_model_node(struct mgr *m, json_t *obj);
/* The kind table's slim copy of a Pod (struct kind_def.slim): the fields placement reads,
 * nothing else (managedFields never among them). */
json_t *nodes_slim_pod(json_t *obj, int *cut);
/* A Node's event: deleted, it leaves the model. */
void nodes_on_node(struct mgr *m, enum watch_event_type type, const char *key);
void nodes_on_pod(struct mgr *m, enum watch_event_type type, const char *key, json_t *old,
		  json_t *obj);
void nodes_on_topology(struct mgr *m, enum watch_event_type type, const char *key, json_t *obj);
/* A ResourceFlavor changed (rf NULL: deleted). */
void nodes_set_flavor(struct mgr *m, const char *name, json_t *rf);
/* The workload is no longer admitted: its reservation and plan go. */
void nodes_release(struct mgr *m, const char *key);
/* The nodes closest to the layout the workload was last refused (pobj_plan.closest), borrowed,
 * or NULL. */
json_t *nodes_closest(struct mgr *m, const char *key);
/* Adds the placement hints of the workload's PodSet podset to a pod template spec, in place
 * (see nodes.c). */
void nodes_start_hints(struct mgr *m, const char *key, json_t *wl, const char *podset,
		       json_t *tspec);
/* Puts back what nodes_start_hints changed, from the Workload's template spec, in place. */
void nodes_stop_restore(json_t *orig, json_t *tspec);
/* Once per pump: capacity news for the engine, node assignments for gated pods (as far as the
 * pass's budget goes: a Job of thousands of pods gates them all). */
void nodes_sync(struct mgr *m, struct pump_budget *b);

/* --- admission.c
 * -------------------------------------------------------------------------------- */

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

/* --- ingest.c
 * ------------------------------------------------------------------------------------ */

/* Starts an informer for every watched kind of the kind table (kinds.c) whose integration,
 * if any, is enabled. 0 or -errno. */
int ingest_start(struct mgr *m);
void ingest_stop(struct mgr *m);
/* Whether every informer delivered its first list. */
int ingest_synced(struct mgr *m);
/* What the informer's store keeps of obj (slimmed, or a stub of a compact kind): tests fill
 * their stores with it. May modify obj. A new reference. text: obj's JSON as a watch event
 * brings it (the informer's transform), or NULL. */
json_t *ingest_keep(struct mgr *m, enum kind kind, json_t *obj, const char *text, size_t len);
/* One change of an object of the kind, as an informer reports it, with the objects as the
 * store keeps them (tests call it directly with their own stores in m->stores). A compact
 * kind's old and obj are stubs: its handlers read the object from the store. */
void ingest_event(struct mgr *m, enum kind kind, enum watch_event_type type, const char *key,
		  json_t *old, json_t *obj);

/* --- manager.c
 * ----------------------------------------------------------------------------------- */

/* For unit tests: a manager without informers, webhooks or servers, on loop, talking to the
 * apiserver cfg points at; stores are the test's own (key -> object, per kind). */
int mgr_init_for_test(struct mgr *m, uv_loop_t *loop, const struct kube_config *cfg,
		      const struct muster_config *conf);
void mgr_release_for_test(struct mgr *m);
/* One pass of the pump, as a loop turn runs it. */
void mgr_pump_once(struct mgr *m);
/* Whether a cycle is wanted but held back until ADMISSION_CYCLE_MS since the last has passed. */
int mgr_cycle_held(struct mgr *m);

/* --- kinds.c: the kind table ------------------------------------------------------------- */

/* One row per enum kind: what the informers watch and keep, what Events and logs call an
 * object, where its API paths are, and which integration owns it. An owner kind's row is made
 * from its integration (api/integrations.h's INTEGRATED_OWNERS), so adding an integrated kind
 * adds no row by hand. Read through the functions below. */
struct kind_def {
	/* The object's kind, apiVersion ("group/version", or "v1" for the core group) and
	 * resource (plural): NULL in an owner kind's row, which takes its integration's. */
	const char *name;
	const char *api_version;
	const char *plural;
	/* Watched: an informer lists and watches the resource (K_PODGROUP is a key, not an
	 * object). informer names it in logs when that is not the plural ("queuedpods"). */
	int watched;
	const char *informer;
	const char *label_selector; /* the informer's, or NULL for every object */
	/* What the store keeps of an object, a new reference: obj cut in place, or a slim copy,
	 * either without metadata.managedFields. *cut is set when that differs from obj as it
	 * came (then the event's text can't stand for it). NULL: obj as it came, less
	 * managedFields, which is never read.
	 * Called only by ingest.c's informers. */
	json_t *(*slim)(json_t *obj, int *cut);
	/* What a compact kind's store keeps of an object, as a slim rule (util/json_slim.h):
	 * applied to its text as the informer brings it, which is never parsed then
	 * (store_keep_text), or to its tree when there is one. NULL: all of it but
	 * managedFields, which is never read. */
	const struct json_slim_rule *slim_rule;
	/* The kind's typed model takes each object as the informer brings it (before any slim
	 * copy), and the store keeps only a stub (state.c): the model is the one home of its
	 * fields, and what reads them asks the model. NULL: the store keeps the object. Called
	 * only by ingest.c's informers (and, for tests, ingest_keep). */
	void (*model)(struct mgr *m, json_t *obj);
	/* The integration of an owner kind, of queued Pods (K_GPOD: watched only when the pod
	 * framework is on) and of pod groups (K_PODGROUP); NULL for others. */
	const struct integration *integration;
	int cluster_scoped; /* no namespace in its paths and keys */
	/* The store keeps compact text, not a tree: the many and the large (state.c). */
	int compact;
};
/* The row of kind (kind < K_KINDS). */
const struct kind_def *kind_def(enum kind kind);
/* The kind's object kind, apiVersion and resource: the row's, or its integration's. */
const char *kind_name(enum kind kind);
const char *kind_api_version(enum kind kind);
const char *kind_plural(enum kind kind);
/* Whether the kind's CRD may be missing (informer_options.optional): an integrated kind of a
 * group with a dot, as every CRD's group has (batch/v1 is served by every apiserver). */
int kind_optional(enum kind kind);
/* The API path of the kind's collection (ns and name NULL), of the collection in namespace ns
 * (name NULL), or of object name, with subresource appended when not NULL ("/status"):
 * "/apis/batch/v1/namespaces/ns/jobs/j/status", "/api/v1/nodes". ns is ignored for a
 * cluster-scoped kind. 0, or -ENOSPC when buf is too small. */
int kind_path(enum kind kind, const char *ns, const char *name, const char *subresource, char *buf,
	      size_t size);
/* The integration of an owner kind (K_OWNER_FIRST..K_OWNER_LAST) or of pod groups
 * (K_PODGROUP), or NULL for other kinds. */
const struct integration *owner_integration(enum kind kind);
/* The owner kind for an apiVersion and kind (a Workload's ownerReference), or K_KINDS. */
enum kind owner_kind_for(const char *api_version, const char *kind);
/* Whether the manager's configuration enables the owner kind (integrations.frameworks). */
int owner_enabled(struct mgr *m, enum kind kind);

#endif
