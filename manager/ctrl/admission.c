/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Admission: keeps the engine (core/engine.h) in step with the Workloads' status, runs its
 * cycles, and applies its decisions: admissions are written to status.admission, preemptions
 * and drains become evictions, and waiting Workloads say why. Quota maths, cohorts, ordering,
 * preemption and partial admission are the engine's, shared with `muster simulate`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "core/invariant.h"
#include "ctrl/internal.h"
#include "util/log.h"

int workload_write_status(struct mgr *m, const char *key, json_t *wl, json_t *status,
			  write_done_fn done)
{
	char path[1024];
	int rc = kind_path(K_WORKLOAD, obj_namespace(wl), obj_name(wl), "/status", path,
			   sizeof(path));
	if (rc != 0) {
		json_decref(status);
		return rc;
	}
	return writer_merge_patch(m, K_WORKLOAD, key, path,
				  status ? json_pack("{s:o}", "status", status) : NULL,
				  obj_str(wl, "metadata.resourceVersion"), done);
}

void workload_mark_owner(struct mgr *m, json_t *wl)
{
	json_t *o = integration_owner_ref(wl, NULL);
	const char *name = json_string_value(json_object_get(o, "name"));
	enum kind owner = owner_kind_for(json_string_value(json_object_get(o, "apiVersion")),
					 json_string_value(json_object_get(o, "kind")));
	char key[600];
	if (owner != K_KINDS && name && obj_namespace(wl)) {
		snprintf(key, sizeof(key), "%s/%s", obj_namespace(wl), name);
		state_mark(m, owner, key);
		return;
	}
	/* A pod group, keyed by its Workload: a Pod alone is its Workload's controller, and
	 * each Pod of a group owns the group's Workload, none as its controller. */
	const struct integration *pods = owner_integration(K_PODGROUP);
	if (owner == K_KINDS && obj_owner_ref(wl, 0, pods->api_version, pods->kind, NULL) &&
	    informer_key(wl, key, sizeof(key)) == 0)
		state_mark(m, K_PODGROUP, key);
}

/* Names what a Workload (or its Job) asks for that muster does not implement yet, in an
 * UnsupportedFields condition, so nothing is silently ignored. Written only when it applies. */
static void report_unsupported(struct mgr *m, const char *key, json_t *wl)
{
	char notes[1024] = "";
	size_t n = 0, i;
	json_t *ps;
#define NOTE(cond, text)                                                                           \
	do {                                                                                       \
		if ((cond) && n < sizeof(notes) && !strstr(notes, (text)))                         \
			n += (size_t)snprintf(notes + n, sizeof(notes) - n, "%s%s", n ? "; " : "", \
					      (text));                                             \
	} while (0)
	json_array_foreach(obj_path(wl, "spec.podSets"), i, ps)
	{
		NOTE(obj_path(ps, "topologyRequest.podSetSliceRequiredTopology"),
		     "podSets[].topologyRequest.podSetSliceRequiredTopology: slices are not "
		     "implemented yet");
		NOTE(obj_path(ps, "topologyRequest.podSetGroupName"),
		     "podSets[].topologyRequest.podSetGroupName: podSet groups are not implemented "
		     "yet");
	}
	NOTE(obj_path(wl, "spec.maximumExecutionTimeSeconds"),
	     "spec.maximumExecutionTimeSeconds is not enforced yet");
#undef NOTE
	if (!notes[0] || writer_busy(m, K_WORKLOAD, key))
		return;
	int changed;
	json_t *conds =
		conditions_with(wl, "UnsupportedFields", "True", "NotImplemented", notes, &changed);
	if (!conds || !changed) {
		json_decref(conds);
		return;
	}
	workload_write_status(m, key, wl, json_pack("{s:o}", "conditions", conds), NULL);
}

/*
 * Why a Workload waits, in its status. Reasons only a change of configuration or spec can help
 * (Misconfigured, NoMatchingFlavor, ExceedsMaxQuota, Suspended, Deactivated) are written at
 * once. A wait for quota (eng_why_waits: WaitingForQuota, BorrowingLimitReached, no node
 * layout, waiting for preemption) is written only once the Workload has been among the first
 * FRONT_DEPTH of its ClusterQueue's order for PENDING_QUIET_MS: those are the ones the queue is
 * blocked on, and the ones Kueue's scheduler would be trying. Written for every Workload in a
 * deep queue, that wait was most of muster's status writes (one per queued Workload, about
 * 2,800 for Kueue's 3,000-Workload benchmark), and most of them were admitted soon after,
 * their write for nothing. Those further back say why when they move up; meanwhile the
 * visibility API and `kubectl muster pending` / `why` answer for every position, from
 * their records' unwritten wait. A wait that replaces a reason of the first kind is written
 * at once, so a status never keeps saying something that is no longer true.
 */
#define PENDING_QUIET_MS 5000
#define FRONT_DEPTH 5

static void set_pending(struct mgr *m, const char *key, json_t *wl, const char *reason,
			const char *msg);
static void remember_pending(struct mgr *m, const char *key, const char *reason, const char *msg);
static void write_unwritten(struct mgr *m, const char *key, json_t *wl);

/* The Workload is gone: what the engine, the nodes, the queue totals and the ledger hold of it
 * ends, then its record goes, and with it all ctrl/ kept of it. */
static void workload_gone(struct mgr *m, const char *key)
{
	engine_remove_workload(m->engine, key);
	nodes_release(m, key);
	queues_forget(m, key);
	history_deleted(m, key);
	wl_record_forget(m, key);
}

/* Our admission stands no more for the cache's object (seen by the watch, or undone). */
static void drop_assumed(struct wl_record *r)
{
	if (r) {
		json_decref(r->assumed);
		r->assumed = NULL;
	}
}

/* Keeps the engine's view of one workload equal to its status: pending ones queued, reserved
 * ones charged (rebuilt from status.admission after a restart), released ones requeued,
 * finished and deleted ones forgotten. */
void workload_reconcile(struct mgr *m, const char *key)
{
	json_t *wl = store_get(m, K_WORKLOAD, key);
	struct wl_record *r = wl_record_get(m, key);
	struct eobj_workload w;
	char err[512];

	m->admission_needed = 1;
	if (!wl) {
		workload_gone(m, key);
		return;
	}
	/* Whatever happened to the Workload (an event, one of our writes landing or failing), its
	 * Job looks again: a Job that finished while a Workload write was in flight skipped its
	 * own event, and the Workload's event may have come before the write's answer. */
	workload_mark_owner(m, wl);
	if (r && r->assumed) {
		/* Our admission is in flight or not yet seen by the watch: the engine's charge
		 * stands. Only muster reserves quota, so once the cache shows the reservation the
		 * cache is the truth, even if other writes (an eviction) are in flight
		 * meanwhile. */
		if (!condition_true(wl, "QuotaReserved"))
			return;
		drop_assumed(r);
	}
	/* A write of ours landed and the cache still shows the version it was decided on:
	 * deciding again now would repeat it. The watch event brings the new version. */
	if (writer_lagging(m, K_WORKLOAD, key, obj_str(wl, "metadata.resourceVersion")))
		return;
	if (obj_path(wl, "status.admission") && !json_is_null(obj_path(wl, "status.admission")) &&
	    !condition_true(wl, "QuotaReserved") && !condition_true(wl, "Finished")) {
		/* Half-written by someone else (e.g. a server-side apply that cleared the
		 * reservation but could not remove the admission we merge-patched): the Workload
		 * is pending, as Kueue treats it; clear the stale admission. */
		engine_remove_workload(m->engine, key);
		nodes_release(m, key);
		wl_record_set_pending(m, key, 1);
		queues_track(m, key);
		if (!writer_busy(m, K_WORKLOAD, key) &&
		    workload_write_status(m, key, wl, json_pack("{s:n}", "admission"), NULL) == 0)
			log_info("clearing a stale admission", LF_STR("workload", key), LF_END);
		return;
	}
	if (eobj_workload_decode(wl, NULL, m->stores[K_WPC], m->stores[K_PC], &w, err,
				 sizeof(err)) != 0) {
		/* A Workload muster can't read (a class that doesn't exist, a bad quantity) waits,
		 * and says why, rather than being admitted on a guess. */
		engine_remove_workload(m->engine, key);
		wl_record_set_pending(m, key, 1);
		set_pending(m, key, wl, ENG_WHY_MISCONFIGURED, err);
		queues_track(m, key);
		return;
	}
	int rc = 0;
	int64_t requeue_at = 0;
	/* Only an admitted workload keeps its nodes. */
	if (!w.admitted || w.finished)
		nodes_release(m, key);
	if (w.finished) {
		engine_remove_workload(m->engine, key);
		wl_record_set_pending(m, key, 0);
		history_finished_seen(m, key, wl);
	} else if (w.admitted) {
		rc = engine_add_workload(m->engine, &w.spec);
		if (rc == 0)
			rc = engine_set_admitted(m->engine, key, w.admission);
		wl_record_set_pending(m, key, 0);
		if (w.inactive)
			workload_evict(m, key, wl, "Deactivated", "The workload is deactivated",
				       NULL);
	} else {
		/* Released after an eviction: the engine still counted it; requeue it there. */
		if (engine_admission(m->engine, key))
			engine_evict(m->engine, key);
		if (w.inactive) {
			/* Out of every queue; it says so, as Kueue v0.20 (the first tier). */
			engine_remove_workload(m->engine, key);
			wl_record_set_pending(m, key, 0);
			set_pending(m, key, wl, "Deactivated",
				    "The workload is deactivated: spec.active is false");
		} else if (time_parse_rfc3339(obj_str(wl, "status.requeueState.requeueAt"),
					      &requeue_at) == 0 &&
			   requeue_at > m->now_ms()) {
			/* Backing off after a PodsReadyTimeout eviction: out of the queue until
			 * then. */
			char wait[200], at[32];
			engine_remove_workload(m->engine, key);
			wl_record_set_pending(m, key, 1);
			time_format_rfc3339(requeue_at, at, sizeof(at));
			snprintf(wait, sizeof(wait),
				 "Waiting until %s to be requeued (backoff after an eviction)", at);
			set_pending(m, key, wl, "Pending", wait);
			state_at(m, K_WORKLOAD, key, requeue_at);
		} else {
			/* requeuingStrategy Eviction: a workload evicted for PodsReadyTimeout
			 * re-enters its queue at the eviction time, behind the others. */
			json_t *ev = condition_get(wl, "Evicted");
			const char *why = json_string_value(json_object_get(ev, "reason"));
			int64_t at;
			if (!m->conf.requeue_at_creation && why &&
			    !strcmp(why, "PodsReadyTimeout") &&
			    time_parse_rfc3339(json_string_value(
						       json_object_get(ev, "lastTransitionTime")),
					       &at) == 0)
				w.spec.queue_time = at * 1000000;
			rc = engine_add_workload(m->engine, &w.spec);
			wl_record_set_pending(m, key, 1);
		}
	}
	if (rc != 0)
		log_error("engine refused workload", LF_STR("workload", key), LF_INT("rc", rc),
			  LF_END);
	int finished = w.finished;
	eobj_workload_release(&w);
	if (!finished)
		report_unsupported(m, key, wl);
	if ((r = wl_record_get(m, key)) != NULL && r->pending)
		write_unwritten(m, key, wl);
	else
		remember_pending(m, key, NULL, NULL);
	queues_track(m, key);
}

/* A hash of a wait as set_pending compares it with the cached condition: the reason, and the
 * message, but for the numbers of one that says how much "more needed" ("2 more needed" and
 * "5 more needed" are the same wait). Never 0. 64 bits: two waits that differ must not pass for
 * the same (the status would not be written). */
static uint64_t wait_hash(const char *reason, const char *msg)
{
	const uint64_t prime = 1099511628211u;
	uint64_t h = 14695981039346656037u;
	int but_numbers = strstr(msg, "more needed") != NULL;
	for (const char *p = reason; *p; p++)
		h = (h ^ (unsigned char)*p) * prime;
	h = (h ^ 0x1f) * prime;
	for (const char *p = msg; *p; p++) {
		if (but_numbers && *p >= '0' && *p <= '9') {
			while (p[1] >= '0' && p[1] <= '9')
				p++;
			h = (h ^ '#') * prime;
			continue;
		}
		h = (h ^ (unsigned char)*p) * prime;
	}
	return h ? h : 1;
}

/* Remembers in r the condition to write until it is written (NULL reason: nothing to write;
 * NULL r: out of memory, not remembered). */
static void remember_wait(struct mgr *m, struct wl_record *r, const char *reason, const char *msg)
{
	if (!reason || !r) {
		wl_record_set_unwritten(m, r, NULL, NULL);
		return;
	}
	if (r->unwritten && !strcmp(r->unwritten, reason) &&
	    !strcmp(wl_record_unwritten_message(r), msg))
		return;
	/* Out of memory: the wait is not remembered, and the engine's next report brings it. */
	wl_record_set_unwritten(m, r, reason, msg);
}

static void remember_pending(struct mgr *m, const char *key, const char *reason, const char *msg)
{
	remember_wait(m, reason ? wl_record_make(m, key) : wl_record_get(m, key), reason, msg);
}

static void on_pending_written(struct mgr *m, enum kind kind, const char *key,
			       enum write_outcome outcome, struct write_answer *answer)
{
	(void)kind;
	json_t *updated = write_answer_object(answer);
	json_t *c = condition_get(updated, "QuotaReserved");
	const struct wl_record *r = wl_record_get(m, key);
	const char *have = r ? r->unwritten : NULL;
	const char *reason = json_string_value(json_object_get(c, "reason"));
	const char *message = json_string_value(json_object_get(c, "message"));
	/* Written, and nothing newer wanted meanwhile. A failure keeps it for the retry. */
	if (outcome == WRITE_OK && have && reason && message && !strcmp(have, reason) &&
	    !strcmp(wl_record_unwritten_message(r), message))
		remember_pending(m, key, NULL, NULL);
	if (outcome == WRITE_OK && updated)
		history_pending(m, updated);
}

/* Whether a wait the engine reported (reason), over the Workload's current condition
 * (cond_waits: it has none, or it is one of the engine's waits; r its record, or NULL), is
 * kept unwritten for now: a wait for quota is written once the Workload has been next in line
 * for a while (see PENDING_QUIET_MS); front_pass notes when it got there and brings it back
 * to set_pending then. */
static int wait_kept_quiet(struct mgr *m, const struct wl_record *r, const char *reason,
			   int cond_waits)
{
	return eng_why_waits(reason) && cond_waits &&
	       (!r || !r->has_front || r->front_since + PENDING_QUIET_MS > m->now_ms());
}

/* What set_pending reads of a Workload's cached QuotaReserved condition. */
struct cond_digest {
	uint64_t hash; /* the False condition's wait (wait_hash), else 0 */
	int waits; /* absent, or one of the engine's waits (wait_kept_quiet's cond_waits) */
	int gen_ok; /* its observedGeneration is the Workload's generation */
};

static struct cond_digest cond_digest_of(json_t *wl)
{
	json_t *cur = condition_get(wl, "QuotaReserved");
	const char *status = json_string_value(json_object_get(cur, "status"));
	const char *reason = json_string_value(json_object_get(cur, "reason"));
	const char *message = json_string_value(json_object_get(cur, "message"));
	struct cond_digest d = {
		.waits = !status || eng_why_waits(reason),
		.gen_ok = json_integer_value(json_object_get(cur, "observedGeneration")) ==
			  json_integer_value(obj_path(wl, "metadata.generation")),
	};
	if (status && !strcmp(status, "False") && reason && message)
		d.hash = wait_hash(reason, message);
	return d;
}

/* Keeps d in the Workload's record, if it has one (a pending Workload does). */
static void cond_remember(struct mgr *m, const char *key, const struct cond_digest *d)
{
	struct wl_record *r = wl_record_get(m, key);
	if (r) {
		r->cond_hash = d->hash;
		r->cond_waits = (unsigned)!!d->waits;
		r->cond_gen_ok = (unsigned)!!d->gen_ok;
		r->cond_known = 1;
	}
}

enum pending_verdict {
	PENDING_SAID, /* the cached condition says it already */
	PENDING_QUIET, /* it differs, but a wait is kept unwritten for now (PENDING_QUIET_MS) */
	PENDING_WRITE,
};

/* What set_pending does with a wait (reason, msg) the engine reported, over the cached
 * condition d, for the Workload of record r (NULL: none yet). A waiting Workload whose
 * shortfall changed ("2 more needed" -> "5 more needed") keeps its message: while quota churns
 * these change on every release, and Kueue leaves non-head Workloads' messages stale too
 * (kueue#8095: writes on Workloads that didn't admit). Otherwise the condition is the same
 * only with the same reason and message at the current generation. */
static enum pending_verdict pending_verdict(struct mgr *m, const struct wl_record *r,
					    const struct cond_digest *d, const char *reason,
					    const char *msg)
{
	if (d->hash && d->hash == wait_hash(reason, msg) &&
	    (d->gen_ok || strstr(msg, "more needed")))
		return PENDING_SAID;
	if (wait_kept_quiet(m, r, reason, d->waits))
		return PENDING_QUIET;
	return PENDING_WRITE;
}

/* Whether a wait the engine reported was dealt with from the record's digest alone, without
 * parsing the Workload; else set_pending parses it. */
static int pending_from_record(struct mgr *m, const char *key, const char *reason, const char *msg)
{
	struct wl_record *r = wl_record_get(m, key);
	if (!r || !r->cond_known)
		return 0;
	struct cond_digest d = { r->cond_hash, r->cond_waits, r->cond_gen_ok };
#if MUSTER_CHECKS
	/* The digest is the cached object's, or it would decide on a stale condition. */
	struct cond_digest now = cond_digest_of(store_get(m, K_WORKLOAD, key));
	MUSTER_ASSERT(now.hash == d.hash && !!now.waits == !!d.waits && !!now.gen_ok == !!d.gen_ok);
#endif
	switch (pending_verdict(m, r, &d, reason, msg)) {
	case PENDING_SAID:
		remember_pending(m, key, NULL, NULL);
		return 1;
	case PENDING_QUIET:
		remember_wait(m, r, reason, msg);
		return 1;
	default:
		return 0;
	}
}

/* Writes QuotaReserved=False with reason and message, unless that is what it says already or
 * a wait is kept unwritten for now (pending_verdict). */
static void set_pending(struct mgr *m, const char *key, json_t *wl, const char *reason,
			const char *msg)
{
	int changed;
	struct cond_digest d = cond_digest_of(wl);
	cond_remember(m, key, &d);
	enum pending_verdict v = pending_verdict(m, wl_record_get(m, key), &d, reason, msg);
	if (v == PENDING_SAID) {
		remember_pending(m, key, NULL, NULL);
		return;
	}
	/* Until it lands, it is remembered: a write in flight now, or a failed one, would
	 * otherwise lose it for good (the engine doesn't report the same reason twice). */
	struct wl_record *r = wl_record_make(m, key);
	remember_wait(m, r, reason, msg);
	if (v == PENDING_QUIET)
		return;
	json_t *conds = conditions_with(wl, "QuotaReserved", "False", reason, msg, &changed);
	if (!conds || !changed) {
		json_decref(conds); /* out of memory (or a hash collision): as said */
		remember_pending(m, key, NULL, NULL);
		return;
	}
	if (writer_busy(m, K_WORKLOAD, key)) {
		json_decref(conds);
		return; /* the write in flight brings the Workload back here when it lands */
	}
	workload_write_status(m, key, wl, json_pack("{s:o}", "conditions", conds),
			      on_pending_written);
}

/* What a waiting Workload still owes its status: the condition the engine reported last. */
static void write_unwritten(struct mgr *m, const char *key, json_t *wl)
{
	const struct wl_record *r = wl_record_get(m, key);
	char reason[128], msg[1024];
	if (!r || !r->unwritten)
		return;
	snprintf(reason, sizeof(reason), "%s", r->unwritten);
	snprintf(msg, sizeof(msg), "%s", wl_record_unwritten_message(r));
	set_pending(m, key, wl, reason, msg);
}

/* The engine's charge for a workload whose admission write did not land goes, and so does the
 * workload, until the writer's retry brings it back through workload_reconcile after a
 * backoff: re-admitting it in the next cycle at once would loop as fast as the apiserver
 * fails (thousands of times a second while it is down). */
static void undo_admission(struct mgr *m, const char *key)
{
	drop_assumed(wl_record_get(m, key));
	engine_remove_workload(m->engine, key);
	wl_record_set_pending(m, key, 0);
	nodes_release(m, key);
	queues_track(m, key);
}

static void on_admitted(struct mgr *m, enum kind kind, const char *key, enum write_outcome outcome,
			struct write_answer *answer)
{
	(void)kind;
	struct wl_record *r = wl_record_get(m, key);
	json_t *assumed = r ? r->assumed : NULL;
	if (outcome == WRITE_OK) {
		/* The answer is the assumed object as written, at a new resourceVersion (the apply
		 * was guarded by the one it was decided on), so it is parsed only when the watch
		 * got there first and took the assumed object over. */
		json_t *wl = assumed ? assumed : write_answer_object(answer);
		observe_admitted(m, wl);
		history_admitted(m, wl);
		log_info("workload admitted", LF_STR("workload", key),
			 LF_STR("clusterQueue", obj_str(wl, "status.admission.clusterQueue")),
			 LF_END);
		if (!assumed)
			return; /* the watch got there first and took over */
		json_t *cached = store_get(m, K_WORKLOAD, key);
		const char *rv;
		if (cached && condition_true(cached, "QuotaReserved"))
			drop_assumed(r); /* the watch was faster */
		else if ((rv = write_answer_rv(answer)) != NULL)
			json_object_set_new(json_object_get(assumed, "metadata"), "resourceVersion",
					    json_string(rv));
		return; /* the writer marks the Workload, whose reconcile marks its Job */
	}
	if (assumed)
		undo_admission(m, key);
}

/* The field manager a Workload's admission is applied under: Kueue's own. Whatever clears an
 * admission the way Kueue's tools do (its performance runner; reconcilers written against
 * Kueue), by an apply as kueue-admission that leaves status.admission out, then removes
 * muster's as it would Kueue's; with a name of muster's own, or with a merge patch, the
 * admission would outlive that apply and have to be cleared by another write. */
#define ADMISSION_FIELD_MANAGER "kueue-admission"

/* The conditions Kueue's admission apply carries (and so owns) when the Workload has them. */
static const char *const admission_conditions[] = {
	"QuotaReserved", "BlockedOnPreemptionGates", "Evicted",  "Admitted", "Preempted",
	"Requeued",      "DeactivationTarget",       "Finished", NULL,
};

/* The apply configuration of an admission: the Workload's identity, status.admission and the
 * admission's conditions out of conds (the Workload's conditions as they will be). */
static json_t *admission_config(json_t *wl, json_t *admission, json_t *conds)
{
	json_t *owned = json_array(), *c;
	size_t i;
	json_array_foreach(conds, i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));
		for (const char *const *t = admission_conditions; type && *t; t++)
			if (!strcmp(type, *t))
				json_array_append(owned, c);
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:O, s:o}}", "apiVersion", KUEUE_API_VERSION,
			 "kind", "Workload", "metadata", "name", obj_name(wl), "namespace",
			 obj_namespace(wl), "status", "admission", admission, "conditions", owned);
}

/* Writes the engine's admission into the Workload's status (the engine has charged it). */
static void write_admission(struct mgr *m, const char *key, json_t *wl,
			    const struct eng_assignment *a)
{
	json_t *psas = json_array();
	char qmsg[300];
	int changed;

	for (size_t i = 0; i < a->n_podsets && psas; i++) {
		const struct eng_podset_assignment *p = &a->podsets[i];
		json_t *flavors = json_object(), *usage = json_object();
		for (size_t k = 0; k < p->n; k++) {
			char q[64];
			quantity_to_string(p->resources[k], p->usage[k], q, sizeof(q));
			json_object_set_new(flavors, p->resources[k], json_string(p->flavors[k]));
			json_object_set_new(usage, p->resources[k], json_string(q));
		}
		json_array_append_new(psas, json_pack("{s:s, s:o, s:o, s:I}", "name", p->name,
						      "flavors", flavors, "resourceUsage", usage,
						      "count", (json_int_t)p->count));
	}
	json_t *admission = json_pack("{s:s, s:o}", "clusterQueue", a->cluster_queue,
				      "podSetAssignments", psas);
	snprintf(qmsg, sizeof(qmsg), "Quota reserved in ClusterQueue %s", a->cluster_queue);
	/* The assumed object: wl with new metadata and status objects, the rest shared with the
	 * cached view (nothing changes a cached value in place; a deep copy of the podSets'
	 * templates was 2 % of a busy manager's CPU). on_admitted sets its resourceVersion. */
	json_t *tmp = json_copy(wl), *status = json_object_get(wl, "status");
	status = status ? json_copy(status) : json_object();
	json_object_set_new(tmp, "status", status);
	json_object_set_new(tmp, "metadata", json_copy(json_object_get(wl, "metadata")));
	json_object_set_new(status, "conditions",
			    conditions_with(tmp, "QuotaReserved", "True", "QuotaReserved", qmsg,
					    &changed));
	json_object_set_new(status, "conditions",
			    conditions_with(tmp, "Admitted", "True", "Admitted",
					    "The workload is admitted", &changed));
	/* A previous eviction is over: left True, it would suspend the Job again at once. */
	if (condition_get(tmp, "Evicted"))
		json_object_set_new(status, "conditions",
				    conditions_with(tmp, "Evicted", "False", "QuotaReserved",
						    "The workload has quota reserved again",
						    &changed));
	json_object_set(status, "admission", admission);
	struct wl_record *r = wl_record_make(m, key);
	if (r) {
		json_decref(r->assumed);
		r->assumed = json_incref(tmp);
	}
	wl_record_set_pending(m, key, 0);
	json_t *config = admission_config(wl, admission, json_object_get(status, "conditions"));
	json_decref(admission);
	json_decref(tmp);
	keyset_add(&m->admitted_now, key);
	remember_pending(m, key, NULL, NULL);
	char path[1024];
	if (config && kind_path(K_WORKLOAD, obj_namespace(wl), obj_name(wl), "/status", path,
				sizeof(path)) != 0) {
		json_decref(config);
		config = NULL;
	}
	if (!config || writer_apply(m, K_WORKLOAD, key, path, ADMISSION_FIELD_MANAGER, config,
				    obj_str(wl, "metadata.resourceVersion"), on_admitted) != 0)
		keyset_add(&m->unsent, key);
}

static void evict_with(struct mgr *m, const char *key, json_t *wl, const char *reason,
		       const char *message, const char *preempted_reason, json_t *requeue_state);

void workload_evict(struct mgr *m, const char *key, json_t *wl, const char *reason,
		    const char *message, const char *preempted_reason)
{
	evict_with(m, key, wl, reason, message, preempted_reason, NULL);
}

void workload_log_landed(enum write_outcome outcome, const char *msg, const char *key,
			 json_t *updated, const char *condition)
{
	json_t *c = condition ? condition_get(updated, condition) : NULL;
	if (outcome == WRITE_OK)
		log_info(msg, LF_STR("workload", key),
			 LF_STR("reason", json_string_value(json_object_get(c, "reason"))),
			 LF_STR("message", json_string_value(json_object_get(c, "message"))),
			 LF_END);
}

static void on_deactivated(struct mgr *m, enum kind kind, const char *key,
			   enum write_outcome outcome, struct write_answer *answer)
{
	json_t *updated = write_answer_object(answer);
	(void)kind;
	if (outcome == WRITE_OK && updated)
		history_deactivated(m, updated);
	workload_log_landed(outcome, "workload deactivated: requeuing limit exceeded", key, updated,
			    NULL);
}

static void on_evicted(struct mgr *m, enum kind kind, const char *key, enum write_outcome outcome,
		       struct write_answer *answer)
{
	json_t *updated = write_answer_object(answer);
	(void)kind;
	if (outcome == WRITE_OK && updated) {
		observe_evicted(m, key, updated);
		history_evicted(m, updated);
	}
	workload_log_landed(outcome, "workload evicted", key, updated, "Evicted");
}

void workload_evict_pods_ready(struct mgr *m, const char *key, json_t *wl, const char *message)
{
	const struct muster_config *c = &m->conf;
	json_int_t count = json_integer_value(obj_path(wl, "status.requeueState.count")) + 1;
	char path[1024];
	if (writer_busy(m, K_WORKLOAD, key) || condition_true(wl, "Evicted"))
		return;
	if (c->has_backoff_limit && count > c->backoff_limit_count) {
		/* Out of retries: deactivate, as Kueue does; the eviction follows from that. */
		if (kind_path(K_WORKLOAD, obj_namespace(wl), obj_name(wl), NULL, path,
			      sizeof(path)) == 0)
			writer_merge_patch(m, K_WORKLOAD, key, path,
					   json_pack("{s:{s:b}}", "spec", "active", 0),
					   obj_str(wl, "metadata.resourceVersion"), on_deactivated);
		return;
	}
	/* base * 2^(n-1) seconds, capped, plus up to 10% jitter so evictions don't return in
	 * step. */
	int64_t delay_s = c->backoff_base_s;
	for (json_int_t i = 1; i < count && delay_s < c->backoff_max_s; i++)
		delay_s *= 2;
	if (delay_s > c->backoff_max_s)
		delay_s = c->backoff_max_s;
	int64_t delay_ms = delay_s * 1000 + (int64_t)(m->rand() % (unsigned)(delay_s * 100 + 1));
	char at[32];
	time_format_rfc3339(m->now_ms() + delay_ms, at, sizeof(at));
	json_t *state = json_pack("{s:I, s:s}", "count", count, "requeueAt", at);
	evict_with(m, key, wl, "PodsReadyTimeout", message, NULL, state);
}

static void evict_with(struct mgr *m, const char *key, json_t *wl, const char *reason,
		       const char *message, const char *preempted_reason, json_t *requeue_state)
{
	int changed;
	if (writer_busy(m, K_WORKLOAD, key) || condition_true(wl, "Evicted")) {
		json_decref(requeue_state);
		return;
	}
	json_t *conds = conditions_with(wl, "Evicted", "True", reason, message, &changed);
	if (conds && preempted_reason) {
		json_t *tmp = json_pack("{s:O, s:{s:O}}", "metadata",
					json_object_get(wl, "metadata"), "status", "conditions",
					conds);
		json_decref(conds);
		conds = conditions_with(tmp, "Preempted", "True", preempted_reason, message,
					&changed);
		json_decref(tmp);
	}
	if (!conds)
		return;
	json_t *status = json_pack("{s:o}", "conditions", conds);
	if (status && requeue_state)
		json_object_set_new(status, "requeueState", requeue_state);
	else
		json_decref(requeue_state);
	workload_write_status(m, key, wl, status, on_evicted);
}

/* The ClusterQueue a pending workload's LocalQueue points at, from the cache, or NULL. */
/* What the engine decided, applied to the cluster. */
/* A wait reported for a cached Workload whose text has no QuotaReserved condition (new, never
 * decided on), kept quiet for now: all set_pending would do is remember it, and that needs no
 * parse of the Workload. On taking the lead over 50,000 new Workloads in one ClusterQueue the
 * parses were most of the first cycle (tests/bench/bench_pump_cycle.c). */
static int pending_remembered_unparsed(struct mgr *m, const struct eng_decision *d)
{
	struct wl_record *r;
	if (json_object_get(m->stores[K_WORKLOAD], d->workload) == NULL ||
	    store_may_hold(m, K_WORKLOAD, d->workload, "QuotaReserved") ||
	    !wait_kept_quiet(m, r = wl_record_get(m, d->workload), d->reason, 1))
		return 0;
	remember_wait(m, r ? r : wl_record_make(m, d->workload), d->reason, d->message);
	return 1;
}

static void on_decision(void *arg, const struct eng_decision *d)
{
	struct mgr *m = arg;
	state_release_views(m); /* one decision's views at a time */
	if (d->kind == ENG_PENDING && (pending_from_record(m, d->workload, d->reason, d->message) ||
				       pending_remembered_unparsed(m, d)))
		return;
	json_t *wl = store_get(m, K_WORKLOAD, d->workload);
	if (!wl)
		return;
	switch (d->kind) {
	case ENG_ADMIT:
		write_admission(m, d->workload, wl, d->assignment);
		break;
	case ENG_PREEMPT:
		/* A victim keeps its quota until its pods are gone; the engine hears of it when the
		 * admission is cleared (workload_reconcile -> engine_evict). */
		if (d->preemptor) {
			observe_preemptor(m, d->workload,
					  workload_cluster_queue(m, store_get(m, K_WORKLOAD,
									      d->preemptor)));
			history_preempting(m, wl, d->preemptor, d->reason, d->message);
			workload_evict(m, d->workload, wl, "Preempted", d->message, d->reason);
		} else
			workload_evict(m, d->workload, wl, d->reason, d->message, NULL);
		break;
	case ENG_PENDING:
		set_pending(m, d->workload, wl, d->reason, d->message);
		break;
	}
}

struct front_look {
	struct mgr *m;
	int64_t now;
};

/* Notes a Workload next in line that has a wait to say, and when it may say it. */
static int on_front(void *arg, const struct eng_pending *p)
{
	struct front_look *look = arg;
	struct mgr *m = look->m;
	if (p->position_in_cq >= FRONT_DEPTH)
		return 1;
	struct wl_record *r = wl_record_get(m, p->key);
	if (!r || !r->unwritten || r->has_front)
		return 0;
	r->front_since = look->now;
	r->has_front = 1;
	state_at(m, K_WORKLOAD, p->key, look->now + PENDING_QUIET_MS);
	return 0;
}

static void on_front_timer(uv_timer_t *t);

/* Looks at which Workloads are next in line in each ClusterQueue (its first FRONT_DEPTH, a
 * pass over its pending ones), at most every front_ms; a look held back comes with
 * front_timer. */
static void front_pass(struct mgr *m)
{
	uint64_t now = uv_now(m->loop);
	if (m->records.unwritten == 0)
		return;
	if (now < m->front_next) {
		if (!uv_is_active((uv_handle_t *)&m->front_timer))
			uv_timer_start(&m->front_timer, on_front_timer, m->front_next - now, 0);
		return;
	}
	m->front_next = now + m->front_ms;
	struct front_look look = { m, m->now_ms() };
	const char *name;
	json_t *cq;
	json_object_foreach(m->stores[K_CQ], name, cq)
	{
		size_t pending = 0, admitted = 0;
		engine_cq_counts(m->engine, name, &pending, &admitted);
		if (pending > 0 && engine_pending_order_first(m->engine, name, FRONT_DEPTH,
							      on_front, &look) == -ENOMEM)
			log_error("out of memory: the front of a queue is not looked at",
				  LF_STR("clusterQueue", name), LF_END);
	}
}

static void on_front_timer(uv_timer_t *t)
{
	front_pass(t->data);
}

void admission_cycle(struct mgr *m)
{
	/* While writes are paused the decisions could not be written; the writer asks for a
	 * cycle when the pause ends. */
	if (writer_paused(m))
		return;
	m->admission_needed = 0;
	int had_pending = m->records.pending > 0;
	uint64_t started = uv_hrtime();
	int n = engine_cycle(m->engine, on_decision, m);
	struct keyset done;
	const char *key;
	observe_cycle(m, had_pending, keyset_size(&m->admitted_now), uv_hrtime() - started);
	state_release_views(m);
	keyset_take(&m->unsent, &done);
	KEYSET_FOREACH(&done, i, key) {
		undo_admission(m, key);
		state_release_views(m);
	}
	keyset_release(&done);
	keyset_take(&m->admitted_now, &done);
	KEYSET_FOREACH(&done, i, key) {
		queues_track(m, key);
		state_release_views(m);
	}
	keyset_release(&done);
	front_pass(m);
	if (n < 0)
		log_error("admission cycle failed", LF_INT("rc", n), LF_END);
	else if (n > 0)
		log_debug("admission cycle", LF_INT("decisions", n), LF_END);
}
