/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fair sharing in the manager: the engine (core/engine.h, "fair sharing") does the deciding;
 * this file feeds it what only the manager knows and says what it decided.
 *
 *   - At start, the Configuration's fairSharing and admissionFairSharing go to the engine.
 *   - A LocalQueue's spec.fairSharing.weight goes to the engine as it changes.
 *   - Admission fair sharing keeps a LocalQueue's decayed usage where Kueue keeps it, in the
 *     LocalQueue's status.fairSharing.admissionFairSharingStatus. The engine is seeded from it
 *     the first time this process sees the LocalQueue (Kueue seeds once per process); later
 *     status events are this process's own writes, older than what the engine holds. A
 *     follower, which writes nothing, takes every status event: they are the leader's, so on
 *     taking over it starts from the leader's last word, as a restart would.
 *   - The leader samples usage every usageSamplingInterval (a libuv timer), and once on taking
 *     the lead, then marks every LocalQueue so queues.c writes the new status, coalesced.
 *   - Status fragments for queues.c: a LocalQueue's fairSharing, a ClusterQueue's or Cohort's
 *     fairSharing.weightedShare; and the marking of a cohort chain whose shares changed.
 * Times given to the engine are ns since the epoch from the manager's clock (m->now_ms), so
 * tests that move the clock move sampling too.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "core/quantity.h"
#include "ctrl/internal.h"
#include "util/log.h"

/* Cohort chains longer than this are cut short: a cycle (which the engine reports as such)
 * must not loop here. */
#define COHORT_DEPTH_MAX 64

static const char *strategy_name(enum eng_fs_strategy s)
{
	return s == ENG_FS_LESS_THAN_INITIAL_SHARE ? "LessThanInitialShare" :
						     "LessThanOrEqualToFinalShare";
}

int fairshare_init(struct mgr *m)
{
	const struct eng_fair_sharing *fs = &m->conf.fair_sharing;
	const struct eng_admission_fair_sharing *afs = &m->conf.admission_fair_sharing;
	char strategies[128] = "";
	int rc;

	if (fs->enabled && (rc = engine_set_fair_sharing(m->engine, fs)) != 0)
		return rc;
	if (afs->enabled && (rc = engine_set_admission_fair_sharing(m->engine, afs)) != 0)
		return rc;
	if (!fs->enabled && !afs->enabled)
		return 0;
	for (size_t i = 0; fs->enabled && i < fs->n_strategies && i < 2; i++)
		snprintf(strategies + strlen(strategies), sizeof(strategies) - strlen(strategies),
			 "%s%s", i ? "," : "", strategy_name(fs->strategies[i]));
	log_info("fair sharing", LF_INT("fair_sharing", fs->enabled),
		 LF_STR("preemption_strategies", fs->enabled ? strategies : NULL),
		 LF_INT("admission_fair_sharing", afs->enabled),
		 LF_INT("usage_half_life_s", afs->enabled ? afs->usage_half_life / 1000000000 : 0),
		 LF_INT("usage_sampling_interval_s",
			afs->enabled ? afs->usage_sampling_interval / 1000000000 : 0),
		 LF_INT("resource_weights", (long long)afs->n_weights), LF_END);
	return 0;
}

/* Seeds the engine from the LocalQueue's admissionFairSharingStatus, if it has one. One that
 * can't be read is said (log and Event) and ignored: the LocalQueue starts from nothing, and
 * the next status written replaces it. */
static void seed_usage(struct mgr *m, const char *key, json_t *obj, const char *ns,
		       const char *name)
{
	struct eobj_afs_status st;
	char err[256] = "";
	int rc = eobj_local_queue_afs_decode(obj, &st, err, sizeof(err));
	if (rc != 0) {
		log_error("cannot read LocalQueue admission fair sharing status",
			  LF_STR("localQueue", key), LF_STR("error", err), LF_END);
		writer_event(m, K_LQ, obj, EVENT_WARNING, "AdmissionFairSharingStatusNotUsable",
			     err);
	} else if (st.present && (rc = engine_afs_seed(m->engine, ns, name, st.consumed, st.n,
						       st.last_update)) != 0) {
		log_error("engine refused LocalQueue admission fair sharing status",
			  LF_STR("localQueue", key), LF_INT("rc", rc), LF_END);
	}
	eobj_afs_status_release(&st);
}

void fairshare_on_lq(struct mgr *m, const char *key, json_t *old, json_t *obj, const char *ns,
		     const char *name, int has_weight, double weight)
{
	if (!obj) {
		keyset_del(&m->afs_seen, key);
		return;
	}
	/* The engine keeps a weight until told otherwise, also across a delete: a new LocalQueue
	 * states its own, and a change (the field set, changed or removed) is passed on. */
	if (!old || !json_equal(obj_path(old, "spec.fairSharing.weight"),
				obj_path(obj, "spec.fairSharing.weight"))) {
		int rc = engine_set_lq_fair_weight(m->engine, ns, name, has_weight ? weight : 1);
		if (rc != 0)
			log_error("engine refused LocalQueue weight", LF_STR("localQueue", key),
				  LF_INT("rc", rc), LF_END);
	}
	if (!m->conf.admission_fair_sharing.enabled)
		return;
	if (m->leading && keyset_has(&m->afs_seen, key))
		return; /* our own write coming back: the engine is newer */
	if (keyset_add(&m->afs_seen, key) != 0)
		log_error("out of memory: a LocalQueue's status will be read again",
			  LF_STR("localQueue", key), LF_END);
	seed_usage(m, key, obj, ns, name);
}

int fairshare_sample(struct mgr *m)
{
	const char *key;
	json_t *v;
	if (!m->conf.admission_fair_sharing.enabled)
		return 0;
	int rc = engine_afs_sample(m->engine, m->now_ms() * 1000000);
	if (rc != 0) {
		log_error("admission fair sharing: sampling failed", LF_INT("rc", rc), LF_END);
		return rc;
	}
	json_object_foreach(m->stores[K_LQ], key, v) state_mark(m, K_LQ, key);
	return 0;
}

static void on_sample_timer(uv_timer_t *t)
{
	struct mgr *m = t->data;
	if (m->leading && !m->stopping)
		fairshare_sample(m);
}

void fairshare_lead(struct mgr *m)
{
	const char *key;
	json_t *v;
	if (m->fair_leading)
		return;
	m->fair_leading = 1;
	if (m->conf.fair_sharing.enabled)
		json_object_foreach(m->stores[K_COHORT], key, v) state_mark(m, K_COHORT, key);
	if (!m->conf.admission_fair_sharing.enabled)
		return;
	/* Usage decays from each LocalQueue's lastUpdate to now, and the interval starts now. */
	fairshare_sample(m);
	uint64_t every =
		(uint64_t)(m->conf.admission_fair_sharing.usage_sampling_interval / 1000000);
	m->afs_timer.data = m;
	uv_timer_start(&m->afs_timer, on_sample_timer, every ? every : 1, every ? every : 1);
}

void fairshare_unlead(struct mgr *m)
{
	m->fair_leading = 0;
	uv_timer_stop(&m->afs_timer);
}

/* A consumed amount in units, as a quantity at milli precision. */
static json_t *consumed_qty(const char *resource, double units)
{
	char buf[64];
	double milli = units * 1000.0;
	int64_t v = !(milli > 0) ? 0 : milli >= 9.2e18 ? QUANTITY_MILLI_MAX : llround(milli);
	quantity_to_string(resource, v, buf, sizeof(buf));
	return json_string(buf);
}

json_t *fairshare_lq_status(struct mgr *m, json_t *lq)
{
	struct eng_afs_status st;
	char when[40];
	if (!m->conf.admission_fair_sharing.enabled ||
	    engine_afs_status(m->engine, obj_namespace(lq), obj_name(lq), &st) != 0 ||
	    st.last_update <= 0)
		return NULL; /* never sampled: Kueue's lastUpdate is required */
	json_t *consumed = json_object();
	/* A merge patch keeps what it does not name: a resource the engine no longer lists (a
	 * half-life of 0 forgets everything) is written as 0 rather than left standing. */
	const char *res;
	json_t *v;
	json_object_foreach(obj_path(lq, "status.fairSharing.admissionFairSharingStatus."
					 "consumedResources"),
			    res, v) if (consumed)
		json_object_set_new(consumed, res, json_string("0"));
	for (size_t i = 0; consumed && i < st.n; i++)
		json_object_set_new(consumed, st.consumed[i].resource,
				    consumed_qty(st.consumed[i].resource, st.consumed[i].consumed));
	time_format_rfc3339(st.last_update / 1000000, when, sizeof(when));
	/* weightedShare is required by the schema; a LocalQueue has no share of its own. */
	return consumed ? json_pack("{s:i, s:{s:o, s:s}}", "weightedShare", 0,
				    "admissionFairSharingStatus", "consumedResources", consumed,
				    "lastUpdate", when) :
			  NULL;
}

json_t *fairshare_share_status(struct mgr *m, enum kind kind, const char *name)
{
	struct eng_share share;
	if (!m->conf.fair_sharing.enabled)
		return NULL;
	int rc = kind == K_COHORT ? engine_cohort_share(m->engine, name, &share) :
				    engine_cq_share(m->engine, name, &share);
	return rc == 0 ? json_pack("{s:I}", "weightedShare", (json_int_t)share.weighted_share) :
			 NULL;
}

void fairshare_mark_tree(struct mgr *m, const char *cq)
{
	if (!m->conf.fair_sharing.enabled)
		return;
	const char *cohort = obj_str(store_get(m, K_CQ, cq), "spec.cohortName");
	/* Only the chain: a ClusterQueue's share is its own usage against what its parent could
	 * lend, which no other queue's usage changes; a cohort's sums its subtree's. */
	for (int depth = 0; cohort && depth < COHORT_DEPTH_MAX; depth++) {
		json_t *obj = store_get(m, K_COHORT, cohort);
		if (!obj)
			break; /* implicit: no object to write, and no parent */
		state_mark(m, K_COHORT, cohort);
		cohort = obj_str(obj, "spec.parentName");
	}
}

void fairshare_mark_all(struct mgr *m)
{
	const char *key;
	json_t *v;
	/* Before the first sync every ClusterQueue is marked anyway (and every Cohort on taking
	 * the lead): a thousand ClusterQueues listed must not mark a thousand each. */
	if (!m->conf.fair_sharing.enabled || !m->synced)
		return;
	json_object_foreach(m->stores[K_CQ], key, v) state_mark(m, K_CQ, key);
	json_object_foreach(m->stores[K_COHORT], key, v) state_mark(m, K_COHORT, key);
}
