/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulator's internals, shared by simulate.c (`muster simulate`) and forecast.c (the
 * admission-time estimate), so that both read objects, build the engine and run its cycles
 * by the same rules in the same place. Nothing here is for other callers: use simulate.h and
 * forecast.h.
 *
 * A run: sim_init, then sim_load_texts or sim_load_objects (decoding; problems are collected,
 * not printed), then, when s->invalid is 0, sim_build_engine and sim_settle (cycles to a fixed
 * point, victims evicted at once); sim_print_problems writes the problems in file and line
 * order; sim_release frees everything, also after a failure. Functions return 0 or -errno;
 * s->failed keeps the first run failure (-ENOMEM, an engine error).
 *
 * Ownership: struct sim owns every record, decoded object and the engine. A doc's obj is
 * borrowed from s->loaded (or NULL once its Workload is detached); records point to docs,
 * which live in chunks that never move.
 */
#ifndef MUSTER_SIM_INTERNAL_H
#define MUSTER_SIM_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api/config.h"
#include "api/engine_objects.h"
#include "api/placement_objects.h"
#include "core/engine.h"
#include "core/placement.h"
#include "core/strmap.h"
#include "sim/simulate.h"

#define SIM_DEFAULT_NAMESPACE "default"
#define SIM_RECENT_TEXTS 1024

enum sim_kind {
	K_NONE, /* not a document we read: already reported */
	K_NAMESPACE,
	K_PRIORITY_CLASS,
	K_WPC,
	K_FLAVOR,
	K_TOPOLOGY,
	K_NODE,
	K_POD,
	K_COHORT,
	K_CQ,
	K_LQ,
	K_WORKLOAD,
	K_OWNER, /* an integrated kind (api/integrations.h): Job, RayJob, RayCluster */
	K_CONFIGURATION, /* the manager's Configuration: fair sharing settings */
};

struct doc {
	const char *file;
	size_t file_no; /* position among the inputs, for ordering messages */
	size_t ordinal; /* position among all documents (List items count), from 1 */
	int line;
	size_t item; /* a List's item: its index + 1 (messages name it); 0 for a document */
	/* Borrowed from s->loaded; NULL once a Workload or Job is decoded (its record keeps what
	 * it needs), and then name and ns (metadata's, as obj_name and obj_namespace read them)
	 * stand in for it in messages. */
	json_t *obj;
	const char *name, *ns;
	enum sim_kind kind;
	const char *kind_name;
	const struct integration *in; /* K_OWNER: its kind */
};

/* Documents live in chunks, so records may point to them while more are read. */
#define DOCS_PER_CHUNK 1024
struct doc_chunk {
	struct doc_chunk *next;
	size_t n;
	struct doc docs[DOCS_PER_CHUNK];
};

/* A Workload (given, or a Job's) and what happened to it. */
struct wl_rec {
	struct eobj_workload w;
	const struct doc *doc;
	const char *fixed_reason; /* set when it is not given to the engine */
	const char *fixed_message;
	/* Its latest ENG_PENDING: reason is one of the engine's ENG_WHY_* constants, or else
	 * reason_copy, the record's own copy; message is held in s->messages (shared). */
	const char *reason;
	char *reason_copy;
	const char *message;
	char *evicted_note; /* why it was last evicted (preempted or drained) */
	const char *drain_reason; /* "ClusterQueueStopped"/"LocalQueueStopped" if drained last */
	int preempted;
	int victim; /* queued for eviction after this cycle */
	int placed; /* plan holds its nodes: the placer placed it and it wasn't evicted since */
	/* The engine admitted it at some point (engine_set_admitted or ENG_ADMIT): only then
	 * may engine_admission find it admitted, which it alone says for sure. */
	int ever_admitted;
	struct pobj_plan *plan; /* allocated by the placer: most runs have no Nodes */
	/* not decoded while streaming (it failed then): decoded after the last file */
	int deferred;
	int detached; /* decoded while streaming, its JSON dropped (eobj_workload_detach) */
	json_t *obj; /* for the placer, when detached: the Workload object, read again */
};

struct cq_rec {
	struct eobj_cq c;
	const struct doc *doc;
};

/* Where the run is, for ordering problems on one line (a List's items share its line) as if
 * each stage ran over every document before the next: the order they had before streaming. */
enum stage { ST_LOAD, ST_CLASSIFY, ST_CONFIG, ST_POD, ST_WORKLOAD, ST_ENGINE };

/* An input problem, printed once all are known, in file and line order. */
struct problem {
	size_t file_no;
	int line;
	enum stage stage;
	size_t ordinal;
	size_t seq;
	char *text;
};

struct sim {
	FILE *out, *errout;
	size_t invalid; /* input problems reported */
	struct problem *problems;
	size_t cap_problems;
	int failed; /* the run itself failed (-errno) */
	enum stage stage;
	json_t *loaded; /* the documents kept (all but decoded Workloads and Jobs), for doc.obj */
	struct doc_chunk *docs;
	size_t n_docs; /* documents read so far: the next one's ordinal is n_docs + 1 */
	struct strmap seen; /* "kind\nnamespace\nname" -> struct doc *: duplicates */
	json_t *wpcs, *pcs; /* name -> object, for priorities */
	struct strmap namespaces; /* name -> non-NULL: given or needed */

	/* Growing arrays (cap_*): nothing points into them until the last file is read. */
	struct eobj_namespace *ns;
	size_t n_ns, cap_ns;
	struct eobj_flavor *flavors;
	size_t n_flavors, cap_flavors;
	struct eobj_cohort *cohorts;
	const struct doc **cohort_docs;
	size_t n_cohorts, cap_cohorts, cap_cohort_docs;
	struct cq_rec *cqs;
	size_t n_cqs, cap_cqs;
	struct eobj_local_queue *lqs;
	const struct doc **lq_docs;
	size_t n_lqs, cap_lqs, cap_lq_docs;
	struct wl_rec *wls;
	size_t n_wls, cap_wls;
	/* The Workload records' strings and arrays (eobj_workload_decode_shared): one arena for
	 * them all, freed after them. */
	struct eobj_arena wl_arena;
	size_t n_detached;
	const struct doc **pod_docs; /* decoded once every Node is known */
	const struct doc **queued_pods; /* unbound Pods naming a LocalQueue: pod groups */
	size_t n_queued_pods, cap_queued_pods;
	size_t n_pod_docs, cap_pod_docs;
	struct strmap wl_index; /* key -> struct wl_rec * (borrowed: the record's spec.key) */
	/* Pending messages, one copy per distinct text (50,000 Workloads waiting share about
	 * 2,000): text -> struct shared_text (simulate.c), counted, borrowed keys; and the last
	 * ones held, by a quicker hash (hold_text). */
	struct strmap messages;
	struct shared_text *recent_texts[SIM_RECENT_TEXTS];

	/* The Configuration document (at most one, the first seen: a second is a problem), read
	 * by the manager's parser; only its fair sharing settings act here. Zeroed: both off. */
	const struct doc *config_doc;
	struct muster_config config;
	/* The simulation's clock, which it otherwise lacks: the latest time the input states
	 * (creationTimestamp, conditions' lastTransitionTime, LocalQueues' AFS lastUpdate), ns
	 * since the epoch; 0 when none. Admission fair sharing decays usage up to it. */
	int64_t now;

	struct engine *engine;
	/* The document take() just read is referenced by nothing any more (a decoded Workload's:
	 * its decoder only reads it, and the record keeps copies): read_input discards it. */
	int doc_unreferenced;
	struct wl_rec **victims;
	size_t n_victims;

	/* Placement, used when the inputs hold at least one Node. */
	struct pobj_catalog catalog; /* flavors' topologyName and the Topologies */
	struct pobj_node *nodes;
	const struct doc **node_docs;
	size_t n_nodes, cap_nodes, cap_node_docs;
	struct pobj_pod *pods; /* bound, not terminal */
	size_t cap_pods;
	int *pod_bound; /* still bound: its workload wasn't evicted */
	size_t n_pods;
	struct placement *placement;

	/* The objects path (sim_load_objects): the caller's objects are kept whole (no
	 * detaching, no second pass), and unbound queued Pods are not made into Workloads (a
	 * manager's caches already hold their Workloads). */
	int from_objects;
	/* Called with every decision of a cycle, before the simulator's own bookkeeping (the
	 * forecast's clock); NULL: none. */
	eng_decision_fn observe;
	void *observe_arg;
};

int sim_init(struct sim *s, FILE *out, FILE *errout);
/* Reads the texts (both passes: see read_input in simulate.c). */
int sim_load_texts(struct sim *s, const struct sim_input *inputs, size_t n);
/* Reads the objects of each kind (struct sim_objects); messages name a kind's slot and the
 * object's position in it ("workloads:3: Workload team-a/x: ..."). */
int sim_load_objects(struct sim *s, const struct sim_objects *objects);
/* The engine from what was loaded (engine problems are input problems: s->invalid). */
int sim_build_engine(struct sim *s);
/* Cycles to a fixed point, evicting victims at once; -ELOOP (reported on errout) when there
 * is none after many cycles. */
int sim_settle(struct sim *s);
/* The workload ended: its quota and nodes are released and it is forgotten by the engine (it
 * stays in s->wls). */
void sim_end_workload(struct sim *s, struct wl_rec *r);
/* The workload of a key, or NULL. */
struct wl_rec *sim_find_workload(struct sim *s, const char *key);
void sim_print_problems(struct sim *s);
void sim_release(struct sim *s);

#endif
