/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What happened, told twice: as Kubernetes Events on the Workload and on its owner, with
 * Kueue's reasons (events.k8s.io/v1, as Kueue since v0.18), so that what users grep for keeps
 * working; and as records of the decision ledger (ledger/ledger.h), which outlive the Events'
 * hour and answer `history` and `usage`.
 *
 * Everything here runs when a write has landed (its completion), so both say what happened,
 * not what was asked. The one exception is a preemption, recorded when the engine decides it,
 * with its preemptor; the eviction that follows is recorded when it lands. Events go through
 * writer_event, which deduplicates them and holds them to a rate; records through
 * ledger_append, which never touches the disk on this thread and drops rather than waits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "ctrl/internal.h"
#include "ledger/ledger.h"
#include "util/buf.h"
#include "util/log.h"

const char *workload_cluster_queue(struct mgr *m, json_t *wl)
{
	const char *cq = obj_str(wl, "status.admission.clusterQueue");
	const char *queue = obj_str(wl, "spec.queueName"), *ns = obj_namespace(wl);
	char lq[600];
	if (cq || !queue || !ns)
		return cq;
	snprintf(lq, sizeof(lq), "%s/%s", ns, queue);
	return obj_str(store_get(m, K_LQ, lq), "spec.clusterQueue");
}

/* The integrated owner of a Workload (integration_owner_ref), borrowed from its store, or NULL
 * (a pod group, an owner not cached). */
static json_t *owner_of(struct mgr *m, json_t *wl, enum kind *kind)
{
	json_t *o = integration_owner_ref(wl, NULL);
	const char *name = json_string_value(json_object_get(o, "name"));
	const char *ns = obj_namespace(wl);
	enum kind k = owner_kind_for(json_string_value(json_object_get(o, "apiVersion")),
				     json_string_value(json_object_get(o, "kind")));
	char key[600];
	if (k == K_KINDS || !name || !ns)
		return NULL;
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	*kind = k;
	return store_get(m, k, key);
}

static void owner_event(struct mgr *m, json_t *wl, enum event_class cls, const char *reason,
			const char *message)
{
	enum kind kind;
	json_t *owner = owner_of(m, wl, &kind);
	if (owner)
		writer_event(m, kind, owner, cls, reason, message);
}

/* The time of wl's condition of this type (ms), or 0. */
static int64_t condition_time(json_t *wl, const char *type)
{
	int64_t ms;
	const char *t =
		json_string_value(json_object_get(condition_get(wl, type), "lastTransitionTime"));
	return time_parse_rfc3339(t, &ms) == 0 ? ms : 0;
}

/* The reason and message of wl's condition of this type (NULL when absent). */
static void condition_text(json_t *wl, const char *type, const char **reason, const char **message)
{
	json_t *c = condition_get(wl, type);
	*reason = json_string_value(json_object_get(c, "reason"));
	*message = json_string_value(json_object_get(c, "message"));
}

/* Whole seconds from one condition's lastTransitionTime (NULL: the creation) to another's,
 * or -1 when either is missing. */
static long long seconds_between(json_t *wl, const char *from, const char *to)
{
	int64_t a = 0, b = condition_time(wl, to);
	if (from)
		a = condition_time(wl, from);
	else if (time_parse_rfc3339(obj_str(wl, "metadata.creationTimestamp"), &a) != 0)
		a = 0;
	return a && b && b >= a ? (long long)((b - a) / 1000) : -1;
}

/* --- the ledger's records ------------------------------------------------------------------ */

int history_init(struct mgr *m)
{
	char path[1100];
	if (!m->conf.ledger_enable)
		return 0;
	if (m->conf.ledger_path[0])
		snprintf(path, sizeof(path), "%s", m->conf.ledger_path);
	else if (m->opt.state_dir)
		snprintf(path, sizeof(path), "%s/ledger.db", m->opt.state_dir);
	else {
		log_warn("no decision ledger: set ledger.path or --state-dir", LF_END);
		return 0;
	}
	struct ledger_options o = { .path = path,
				    .retention_age_ms = m->conf.ledger_max_age_ms,
				    .retention_bytes = m->conf.ledger_max_bytes };
	int rc = ledger_open(&o, &m->ledger);
	/* Losing history is acceptable, not admitting is not: the manager runs on without. */
	if (rc != 0)
		log_error("cannot open the decision ledger; running without it",
			  LF_STR("path", path), LF_STR("error", strerror(-rc)), LF_END);
	else
		log_info("decision ledger open", LF_STR("path", path), LF_END);
	return 0;
}

void history_release(struct mgr *m)
{
	ledger_close(m->ledger); /* commits what is queued */
	m->ledger = NULL;
}

/* --- the record's JSON texts ------------------------------------------------------------------
 *
 * The ledger keeps the texts as given, so they are what jansson's compact dump with sorted keys
 * writes (dump(), from a tree: the reference). Most records are written here straight from the
 * Workload and the engine, without a tree, which is most of what a record costs the loop: names
 * JSON needs no escape for, flavors given as strings, at most TEXT_ITEMS_MAX members, no key
 * twice. Anything else marks the texts bad and takes the tree. test_ctrl checks that both agree.
 */

#define TEXT_ITEMS_MAX 64

/* A member key:"value"; a group is key:{members}. */
struct text_pair {
	const char *key, *value;
};

struct text_group {
	const char *key;
	size_t first, n; /* its members: pair[first .. first + n) */
};

/* One text's members, {key:value,...} or {key:{key:value,...},...}: borrowed strings, and the
 * quantities written into value[]. */
struct texts {
	struct text_group group[TEXT_ITEMS_MAX];
	struct text_pair pair[TEXT_ITEMS_MAX];
	char value[TEXT_ITEMS_MAX][64];
	size_t groups, pairs;
	int bad; /* not for this path: take the tree */
};

/* Whether jansson's dump writes s as it is: it escapes '"', '\\' and control characters, and
 * nothing else without JSON_ENSURE_ASCII (the names come from parsed JSON: valid UTF-8). */
static int plain(const char *s)
{
	if (!s)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\')
			return 0;
	return 1;
}

static void texts_group(struct texts *t, const char *key)
{
	if (t->groups == TEXT_ITEMS_MAX || !plain(key))
		t->bad = 1;
	else
		t->group[t->groups++] = (struct text_group){ key, t->pairs, 0 };
}

/* Adds key:value to the last group, if any. value NULL: returns where to write it (64 bytes);
 * NULL once the texts are bad. */
static char *texts_pair(struct texts *t, const char *key, const char *value)
{
	if (t->bad || t->pairs == TEXT_ITEMS_MAX || !plain(key) || (value && !plain(value))) {
		t->bad = 1;
		return NULL;
	}
	char *out = t->value[t->pairs];
	t->pair[t->pairs++] = (struct text_pair){ key, value ? value : out };
	if (t->groups)
		t->group[t->groups - 1].n++;
	return out;
}

static int pair_cmp(const void *a, const void *b)
{
	return strcmp(((const struct text_pair *)a)->key, ((const struct text_pair *)b)->key);
}

static int group_cmp(const void *a, const void *b)
{
	return strcmp(((const struct text_group *)a)->key, ((const struct text_group *)b)->key);
}

/* Appends {"key":"value",...} of pairs sorted by key, as JSON_SORT_KEYS (jansson compares
 * bytes); -EEXIST for a key twice (a tree keeps one of them: the tree decides which). */
static int put_pairs(struct buf *b, struct text_pair *p, size_t n)
{
	int rc = buf_append(b, "{", 1);
	qsort(p, n, sizeof(*p), pair_cmp);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (i && !strcmp(p[i - 1].key, p[i].key))
			return -EEXIST;
		rc = buf_append(b, i ? ",\"" : "\"", i ? 2 : 1);
		if (rc == 0)
			rc = buf_append_str(b, p[i].key);
		if (rc == 0)
			rc = buf_append(b, "\":\"", 3);
		if (rc == 0)
			rc = buf_append_str(b, p[i].value);
		if (rc == 0)
			rc = buf_append(b, "\"", 1);
	}
	return rc ? rc : buf_append(b, "}", 1);
}

/* The texts as JSON (groups, or the pairs alone when there are none), a new string; NULL when
 * they are bad or on ENOMEM (the tree then tries). */
static char *texts_json(struct texts *t)
{
	struct buf b;
	int rc = t->bad ? -EINVAL : 0;
	buf_init(&b, LEDGER_TEXT_MAX + 1);
	if (rc == 0 && !t->groups)
		rc = put_pairs(&b, t->pair, t->pairs);
	else if (rc == 0) {
		qsort(t->group, t->groups, sizeof(t->group[0]), group_cmp);
		rc = buf_append(&b, "{", 1);
		for (size_t i = 0; rc == 0 && i < t->groups; i++) {
			const struct text_group *g = &t->group[i];
			if (i && !strcmp(t->group[i - 1].key, g->key))
				rc = -EEXIST;
			if (rc == 0)
				rc = buf_append(&b, i ? ",\"" : "\"", i ? 2 : 1);
			if (rc == 0)
				rc = buf_append_str(&b, g->key);
			if (rc == 0)
				rc = buf_append(&b, "\":", 2);
			if (rc == 0)
				rc = put_pairs(&b, t->pair + g->first, g->n);
		}
		if (rc == 0)
			rc = buf_append(&b, "}", 1);
	}
	char *out = rc == 0 ? buf_take(&b) : NULL;
	buf_release(&b);
	return out;
}

/* A new string: obj (taken) as compact JSON with sorted keys, or NULL. */
static char *dump(json_t *obj)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(obj);
	return s;
}

/* The flavors of an admission, {podSet:{resource:flavor}}. */
static char *flavors_text(json_t *adm)
{
	struct texts t = { .bad = 0 };
	json_t *psa, *flavor;
	const char *res;
	size_t i;
	json_array_foreach(json_object_get(adm, "podSetAssignments"), i, psa)
	{
		const char *ps = json_string_value(json_object_get(psa, "name"));
		json_t *flavors = json_object_get(psa, "flavors");
		if (!ps || !flavors)
			continue;
		texts_group(&t, ps);
		if (!json_is_object(flavors))
			t.bad = 1;
		json_object_foreach(flavors, res, flavor)
		{
			if (json_is_string(flavor))
				texts_pair(&t, res, json_string_value(flavor));
			else
				t.bad = 1;
		}
	}
	char *text = texts_json(&t);
	if (text)
		return text;
	json_t *tree = json_object();
	json_array_foreach(json_object_get(adm, "podSetAssignments"), i, psa)
	{
		const char *ps = json_string_value(json_object_get(psa, "name"));
		if (ps && json_object_get(psa, "flavors"))
			json_object_set(tree, ps, json_object_get(psa, "flavors"));
	}
	return dump(tree);
}

#define AMOUNT_TEXT_MAX 48 /* what a record's quantity is cut to, as it always was */

/* The admitted resources summed over pod sets, {resource:"quantity"}. */
static char *resources_text(const char *const *names, const int64_t *sum, size_t n)
{
	struct texts t = { .bad = 0 };
	for (size_t k = 0; k < n; k++) {
		char *value = texts_pair(&t, names[k], NULL);
		if (value)
			quota_format_amount(names[k], sum[k], value, AMOUNT_TEXT_MAX);
	}
	char *text = texts_json(&t);
	if (text)
		return text;
	json_t *tree = json_object();
	for (size_t k = 0; k < n; k++) {
		char value[AMOUNT_TEXT_MAX];
		quota_format_amount(names[k], sum[k], value, sizeof(value));
		json_object_set_new(tree, names[k], json_string(value));
	}
	return dump(tree);
}

static void usage_member(void *arg, const char *flavor, const char *resource,
			 const struct eng_cq_usage *u)
{
	struct texts *t = arg;
	char *value;
	if (!resource)
		texts_group(t, flavor);
	else if ((value = texts_pair(t, resource, NULL)) != NULL)
		quantity_to_string(resource, u->total, value, sizeof(t->value[0]));
}

/* The ClusterQueue's usage as the ledger keeps it: {flavor:{resource:"quantity"}}, the totals
 * of cq_flavors_usage. */
static char *usage_text(struct mgr *m, const char *cq)
{
	struct texts t = { .bad = 0 };
	if (cq)
		cq_usage_walk(m, cq, usage_member, &t);
	char *text = texts_json(&t);
	if (text)
		return text;
	json_t *out = json_object(), *f, *r;
	json_t *usage = cq ? cq_flavors_usage(m, cq) : NULL;
	size_t i, k;
	json_array_foreach(usage, i, f)
	{
		json_t *res = json_object();
		json_array_foreach(json_object_get(f, "resources"), k, r)
			json_object_set(res, json_string_value(json_object_get(r, "name")),
					json_object_get(r, "total"));
		json_object_set_new(out, json_string_value(json_object_get(f, "name")), res);
	}
	json_decref(usage);
	return dump(out);
}

/* Remembers key's admission as open in the ledger, in its record: "uid\0clusterQueue", what a
 * finish record of a Workload deleted or finished by others needs. */
static void remember_open(struct mgr *m, const char *key, const char *uid, const char *cq)
{
	size_t ul = strlen(uid) + 1, cl = cq ? strlen(cq) + 1 : 1;
	char *copy = malloc(ul + cl);
	struct wl_record *r = copy ? wl_record_make(m, key) : NULL;
	if (!r) {
		free(copy);
		return;
	}
	memcpy(copy, uid, ul);
	memcpy(copy + ul, cq ? cq : "", cl);
	free(r->open_admission);
	r->open_admission = copy;
}

/* The ledger's admission of key ends: the record forgets it. */
static void forget_open(struct mgr *m, const char *key)
{
	struct wl_record *r = wl_record_get(m, key);
	if (r) {
		free(r->open_admission);
		r->open_admission = NULL;
	}
}

/* Appends a record about wl: its admission's flavors and summed usage, its ClusterQueue's
 * usage now. Best effort: a full queue drops it (counted by the ledger). */
static void record_at(struct mgr *m, int64_t time_ms, enum ledger_event event, json_t *wl,
		      const char *reason, const char *message, const char *preemptor)
{
	const char *uid = obj_uid(wl), *cq = workload_cluster_queue(m, wl);
	if (!m->ledger || !uid || !obj_namespace(wl) || !obj_name(wl))
		return;
	json_t *psa, *q;
	int64_t sum[QUOTA_MAX_RESOURCES] = { 0 };
	const char *names[QUOTA_MAX_RESOURCES], *res;
	size_t i, n = 0;
	json_t *adm = obj_path(wl, "status.admission");
	json_array_foreach(json_object_get(adm, "podSetAssignments"), i, psa)
	{
		json_object_foreach(json_object_get(psa, "resourceUsage"), res, q)
		{
			int64_t v;
			size_t k = 0;
			while (k < n && strcmp(names[k], res))
				k++;
			if (quantity_from_json(q, &v) != 0 || (k == n && n == QUOTA_MAX_RESOURCES))
				continue;
			if (k == n)
				names[n++] = res;
			sum[k] += v;
		}
	}
	char *fl = flavors_text(adm), *rs = resources_text(names, sum, n), *us = usage_text(m, cq);
	struct ledger_record r = {
		.time_ms = time_ms ? time_ms : m->now_ms(),
		.event = event,
		.ns = obj_namespace(wl),
		.name = obj_name(wl),
		.uid = uid,
		.cluster_queue = cq,
		.local_queue = obj_str(wl, "spec.queueName"),
		.flavors = fl,
		.resources = rs,
		.reason = reason,
		.message = message,
		.preemptor = preemptor,
		.cluster_queue_usage = us,
	};
	int rc = ledger_append(m->ledger, &r);
	if (rc != 0 && rc != -ENOBUFS)
		log_warn("cannot record a decision", LF_STR("workload", obj_name(wl)),
			 LF_INT("rc", rc), LF_END);
	/* Which admissions are open, so a Workload deleted while admitted gets its end. */
	char key[600];
	if (informer_key(wl, key, sizeof(key)) == 0) {
		if (event == LEDGER_ADMIT)
			remember_open(m, key, uid, cq);
		else if (event != LEDGER_PREEMPT)
			forget_open(m, key);
	}
	free(fl);
	free(rs);
	free(us);
}

static void record(struct mgr *m, enum ledger_event event, json_t *wl, const char *reason,
		   const char *message, const char *preemptor)
{
	record_at(m, 0, event, wl, reason, message, preemptor);
}

/* --- after a restart ------------------------------------------------------------------------- */

/* The time of an end the cluster gives in whole seconds: the last millisecond of that second,
 * so that an end in the second of its admission (recorded to the millisecond) never comes
 * before it; but never after now. */
static int64_t end_time(struct mgr *m, json_t *wl, const char *type)
{
	int64_t t = condition_time(wl, type), now = m->now_ms();
	return !t ? 0 : t + 999 < now ? t + 999 : now;
}

struct reconcile {
	struct mgr *m;
	json_t *open; /* uid -> true: admissions the ledger holds open */
	size_t closed, opened;
};

/* An admission the ledger holds open: still true, or ended while no record was made. */
static int close_if_ended(void *arg, const struct ledger_admission *a)
{
	struct reconcile *r = arg;
	struct mgr *m = r->m;
	char key[600];
	if (!a->uid || !a->ns || !a->name)
		return 0;
	json_object_set_new(r->open, a->uid, json_true());
	snprintf(key, sizeof(key), "%s/%s", a->ns, a->name);
	json_t *wl = store_get(m, K_WORKLOAD, key);
	const char *uid = obj_uid(wl);
	int same = uid && !strcmp(uid, a->uid);
	if (same && condition_true(wl, "QuotaReserved") && !condition_true(wl, "Finished")) {
		remember_open(m, key, a->uid, a->cluster_queue);
		return 0;
	}
	/* The record of its end was lost (a kill -9 loses the last batch): it is written now,
	 * at the time the cluster says it happened when it says so. */
	json_t *gone = json_pack("{s:{s:s, s:s, s:s}, s:{s:{s:s?}}}", "metadata", "namespace",
				 a->ns, "name", a->name, "uid", a->uid, "status", "admission",
				 "clusterQueue", a->cluster_queue);
	static const char note[] = "recorded after a restart: the ledger had missed it";
	if (same && condition_true(wl, "Finished"))
		record_at(m, end_time(m, wl, "Finished"), LEDGER_FINISH, gone, "Recovered", note,
			  NULL);
	else if (same)
		record_at(m, condition_time(wl, "QuotaReserved"), LEDGER_REQUEUE, gone, "Recovered",
			  note, NULL);
	else
		record_at(m, 0, LEDGER_FINISH, gone, "Deleted", note, NULL);
	json_decref(gone);
	state_release_views(m);
	r->closed++;
	return 0;
}

void history_reconcile(struct mgr *m)
{
	struct reconcile r = { m, json_object(), 0, 0 };
	const char *key;
	json_t *v;
	if (!m->ledger || !r.open)
		goto out;
	/* Our own records first, so that what this process recorded is not taken as missing. */
	if (ledger_flush(m->ledger) != 0 ||
	    ledger_open_admissions(m->ledger, close_if_ended, &r) != 0) {
		log_warn("cannot reconcile the decision ledger", LF_END);
		goto out;
	}
	/* Admitted Workloads the ledger has no open admission for: their admit was lost. One
	 * whose text doesn't name the condition isn't admitted (a queue's worth of pending
	 * Workloads mostly say nothing yet) and is not parsed. */
	json_object_foreach(m->stores[K_WORKLOAD], key, v)
	{
		if (!store_may_hold(m, K_WORKLOAD, key, "\"QuotaReserved\""))
			continue;
		json_t *wl = store_get(m, K_WORKLOAD, key);
		const char *uid = obj_uid(wl);
		if (uid && condition_true(wl, "QuotaReserved") && !condition_true(wl, "Finished") &&
		    !json_object_get(r.open, uid)) {
			record_at(m, condition_time(wl, "QuotaReserved"), LEDGER_ADMIT, wl,
				  "Recovered", "recorded after a restart: the ledger had missed it",
				  NULL);
			r.opened++;
		}
		state_release_views(m);
	}
	log_info("decision ledger reconciled with the cluster",
		 LF_INT("ends_recovered", (long long)r.closed),
		 LF_INT("admissions_recovered", (long long)r.opened), LF_END);
out:
	json_decref(r.open);
}

void history_preempting(struct mgr *m, json_t *victim, const char *preemptor, const char *reason,
			const char *message)
{
	record(m, LEDGER_PREEMPT, victim, reason, message, preemptor);
}

void history_requeued(struct mgr *m, json_t *wl)
{
	const char *reason, *message;
	condition_text(wl, "Requeued", &reason, &message);
	record(m, LEDGER_REQUEUE, wl, reason, message, NULL);
}

void history_deleted(struct mgr *m, const char *key)
{
	struct wl_record *rec = wl_record_get(m, key);
	char *uid = rec ? rec->open_admission : NULL;
	const char *slash = strchr(key, '/');
	if (rec)
		rec->open_admission = NULL;
	if (uid && slash && m->ledger) {
		char ns[300];
		snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
		const char *cq = uid + strlen(uid) + 1;
		json_t *gone = json_pack("{s:{s:s, s:s, s:s}, s:{s:{s:s}}}", "metadata",
					 "namespace", ns, "name", slash + 1, "uid", uid, "status",
					 "admission", "clusterQueue", cq);
		record(m, LEDGER_FINISH, gone, "Deleted", "the Workload was deleted while admitted",
		       NULL);
		json_decref(gone);
	}
	free(uid);
}

/* Records the end of key's admission, if the ledger holds it open (so only once). */
void history_finished_seen(struct mgr *m, const char *key, json_t *wl)
{
	const struct wl_record *rec = wl_record_get(m, key);
	const char *open = rec ? rec->open_admission : NULL;
	const char *uid = obj_uid(wl);
	if (!open || !uid || strcmp(open, uid) != 0)
		return;
	const char *reason, *message;
	condition_text(wl, "Finished", &reason, &message);
	record_at(m, end_time(m, wl, "Finished"), LEDGER_FINISH, wl, reason, message, NULL);
}

void history_admitted(struct mgr *m, json_t *wl)
{
	char msg[512];
	const char *cq = obj_str(wl, "status.admission.clusterQueue");
	if (!cq)
		return;
	snprintf(msg, sizeof(msg),
		 "Quota reserved in ClusterQueue %s, wait time since queued was %llds", cq,
		 seconds_between(wl, NULL, "QuotaReserved"));
	writer_event(m, K_WORKLOAD, wl, EVENT_ROUTINE, "QuotaReserved", msg);
	snprintf(msg, sizeof(msg),
		 "Admitted by ClusterQueue %s, wait time since reservation was %llds", cq,
		 seconds_between(wl, "QuotaReserved", "Admitted"));
	writer_event(m, K_WORKLOAD, wl, EVENT_ROUTINE, "Admitted", msg);
	const char *reason, *message;
	condition_text(wl, "QuotaReserved", &reason, &message);
	record(m, LEDGER_ADMIT, wl, reason, message, NULL);
}

void history_pending(struct mgr *m, json_t *wl)
{
	const char *reason, *message;
	condition_text(wl, "QuotaReserved", &reason, &message);
	if (reason && message)
		writer_event(m, K_WORKLOAD, wl, EVENT_WARNING, reason, message);
}

void history_evicted(struct mgr *m, json_t *wl)
{
	const char *reason, *message;
	char why[160];
	condition_text(wl, "Evicted", &reason, &message);
	if (!reason || !message)
		return;
	if (condition_get(wl, "Preempted") && !strcmp(reason, "Preempted"))
		writer_event(m, K_WORKLOAD, wl, EVENT_NOTABLE, "Preempted", message);
	/* Kueue's ReasonWithCause: "EvictedDueTo" + the Evicted reason. */
	snprintf(why, sizeof(why), "EvictedDueTo%s", reason);
	writer_event(m, K_WORKLOAD, wl, EVENT_NOTABLE, why, message);
	record(m, LEDGER_EVICT, wl, reason, message, NULL);
}

void history_finished(struct mgr *m, json_t *wl)
{
	const char *reason, *message;
	char msg[600];
	condition_text(wl, "Finished", &reason, &message);
	if (!reason || !message)
		return;
	writer_event(m, K_WORKLOAD, wl, EVENT_ROUTINE, "Finished", message);
	snprintf(msg, sizeof(msg), "Workload '%s/%s' is declared finished", obj_namespace(wl),
		 obj_name(wl));
	owner_event(m, wl, EVENT_ROUTINE, "FinishedWorkload", msg);
	/* Recorded once, whichever comes first: this write's answer or the watch's event. */
	char key[600];
	if (informer_key(wl, key, sizeof(key)) == 0)
		history_finished_seen(m, key, wl);
}

void history_deactivated(struct mgr *m, json_t *wl)
{
	static const char msg[] = "The workload is deactivated: its requeuing limit was exceeded";
	writer_event(m, K_WORKLOAD, wl, EVENT_WARNING, "Deactivated", msg);
	record(m, LEDGER_DEACTIVATE, wl, "Deactivated", msg, NULL);
}
