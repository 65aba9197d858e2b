/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one place writes leave the manager. It knows no domain rules: it tracks what is in
 * flight and what has just landed, classifies answers, backs off, and tells the stage that
 * asked how its write ended.
 *
 * Backoff, so an outage costs nothing and floods nothing:
 *   - per key: a failed write of (kind, key) is retried (the key is reconciled again) after
 *     500 ms doubling to 30 s with jitter; a conflict after 100 ms doubling (the watch
 *     usually brings the fresh object first); a rejection (400, 403, 404, 422) after 5 s
 *     doubling to 5 min;
 *   - globally: a transport error, 5xx or 429 pauses every write, and the admission cycles
 *     that would make them, for 250 ms doubling to 4 s; any success ends it.
 * Repeated failures are logged once per LOG_INTERVAL_MS with a count, not once per attempt.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "core/container_of.h"
#include "ctrl/internal.h"
#include "kube/lease_thread.h"
#include "util/json_cut.h"
#include "util/log.h"

#define KEY_RETRY_START_MS 500
#define KEY_RETRY_MAX_MS 30000
#define KEY_CONFLICT_START_MS 100
#define KEY_REJECTED_START_MS 5000
#define KEY_REJECTED_MAX_MS 300000
/* What config/rbac/leader-fence.yaml says when it refuses a write. */
#define FENCE_MESSAGE "muster leader fence:"
#define FENCED_RETRY_MS 1000 /* a write held back while the lease is not fresh */
#define PAUSE_START_MS 250
#define PAUSE_MAX_MS 4000
#define LOG_INTERVAL_MS 10000
#define WRITER_EXPECT_MS 30000

struct writer {
	/* Per kind, object key -> struct write_state *: what is in flight, landed, expected, the
	 * next retry delay and the Events recorded, while it holds any of them. Unused for
	 * Workloads: theirs is in their record (wl_record.write). */
	struct strmap objs[K_KINDS];
	size_t inflight; /* writes sent and not yet answered */
	/* Events' token buckets, per class (routine, and the rest): a deep queue whose every
	 * Workload changes reason at once must not flood the apiserver. Tokens in thousandths. */
	struct bucket {
		int64_t tokens, refilled_ms;
	} buckets[2];
	uint64_t event_seq; /* makes Event names unique within a millisecond */
	int64_t paused_until;
	unsigned pause_ms;
	uv_timer_t resume;
	int64_t last_log_ms;
	uint64_t unlogged_failures;
	struct writer_stats stats;
};

struct write_ctx {
	struct mgr *m;
	enum kind kind;
	char *key;
	char *base_rv;
	write_done_fn done;
};


static unsigned jitter(struct mgr *m, unsigned ms)
{
	return ms + m->rand() % (ms / 4 + 1);
}

/* What the writer remembers of (kind, key), or NULL. */
static struct write_state *ws_get(struct mgr *m, enum kind kind, const char *key)
{
	if (kind == K_WORKLOAD) {
		struct wl_record *r = wl_record_get(m, key);
		return r ? &r->write : NULL;
	}
	return strmap_get(&m->writer->objs[kind], key);
}

/* Likewise, made empty when there is none; NULL only when out of memory. */
static struct write_state *ws_make(struct mgr *m, enum kind kind, const char *key)
{
	struct write_state *s;
	if (kind == K_WORKLOAD) {
		struct wl_record *r = wl_record_make(m, key);
		return r ? &r->write : NULL;
	}
	if ((s = strmap_get(&m->writer->objs[kind], key)) != NULL)
		return s;
	if ((s = calloc(1, sizeof(*s))) != NULL &&
	    strmap_put(&m->writer->objs[kind], key, s, NULL) != 0) {
		free(s);
		s = NULL;
	}
	return s;
}

/* An object's state goes once it holds nothing; a Workload's stays with its record. */
static void ws_tidy(struct mgr *m, enum kind kind, const char *key)
{
	struct write_state *s = kind == K_WORKLOAD ? NULL : strmap_get(&m->writer->objs[kind], key);
	if (s && !s->inflight && !s->landed && !s->evented && !s->expect_until && !s->delay)
		free(strmap_remove(&m->writer->objs[kind], key));
}

/* The key's next delay: start on the first failure, doubling after each, at most max. */
static unsigned next_delay(struct mgr *m, enum kind kind, const char *key, unsigned start,
			   unsigned max)
{
	struct write_state *s = ws_make(m, kind, key);
	if (!s)
		return max;
	s->delay = s->delay < start ? start : s->delay * 2 > max ? max : s->delay * 2;
	return s->delay;
}

static void log_failure(struct mgr *m, enum kind kind, const char *key, const char *what,
			const struct kube_response *resp)
{
	struct writer *w = m->writer;
	int64_t now = m->now_ms();
	if (now - w->last_log_ms < LOG_INTERVAL_MS) {
		w->unlogged_failures++;
		return;
	}
	log_warn(what, LF_STR("kind", kind_name(kind)), LF_STR("object", key),
		 LF_INT("status", resp->status), LF_STR("error", resp->error_text),
		 LF_STR("body", resp->body ? resp->body : ""),
		 LF_INT("failures_not_logged", (long long)w->unlogged_failures), LF_END);
	w->last_log_ms = now;
	w->unlogged_failures = 0;
}

static void on_resume(uv_timer_t *t)
{
	struct mgr *m = t->data;
	state_want_cycle(m); /* cycles were held back during the pause */
}

static void pause_writes(struct mgr *m)
{
	struct writer *w = m->writer;
	w->pause_ms = w->pause_ms ?
			      (w->pause_ms * 2 > PAUSE_MAX_MS ? PAUSE_MAX_MS : w->pause_ms * 2) :
			      PAUSE_START_MS;
	unsigned ms = jitter(m, w->pause_ms);
	w->paused_until = m->now_ms() + ms;
	uv_timer_start(&w->resume, on_resume, ms, 0);
}

static void ctx_free(struct write_ctx *ctx)
{
	free(ctx->key);
	free(ctx->base_rv);
	free(ctx);
}

/* The object a write answered with, without metadata.managedFields: never read, and cut from
 * a copy of the text before parsing it costs less than parsing it. NULL if unreadable. */
static json_t *load_answer(const struct kube_response *resp)
{
	static const char *const managed_fields[] = { "metadata", "managedFields", NULL };
	json_error_t jerr;
	char *text = malloc(resp->body_len + 1);
	if (!text)
		return NULL;
	memcpy(text, resp->body, resp->body_len);
	text[resp->body_len] = '\0';
	json_t *obj =
		json_loadb(text, json_cut_member(text, resp->body_len, managed_fields), 0, &jerr);
	free(text);
	return obj;
}

json_t *write_answer_object(struct write_answer *a)
{
	if (!a->parsed && a->resp) {
		a->parsed = 1;
		a->obj = load_answer(a->resp);
	}
	return a->obj;
}

const char *write_answer_meta(struct write_answer *a, const char *field, char *buf, size_t size)
{
	const char *const path[] = { "metadata", field, NULL };
	const char *body = a->resp ? a->resp->body : NULL;
	size_t from, to;
	if (!body)
		return NULL;
	buf[0] = '\0'; /* nothing from the text, unless all of it */
	/* A plain string: quotes around bytes with no escape to decode and nothing JSON forbids
	 * (else the parser decides). */
	if (json_member_span(body, a->resp->body_len, path, &from, &to) == 0 && to - from >= 2 &&
	    to - from - 2 < size && body[from] == '"' && body[to - 1] == '"') {
		size_t n = to - from - 2, i = 0;
		while (i < n && body[from + 1 + i] != '\\' &&
		       (unsigned char)body[from + 1 + i] >= 0x20)
			i++;
		if (i == n) {
			memcpy(buf, body + from + 1, n);
			buf[n] = '\0';
			return buf;
		}
	}
	return json_string_value(
		json_object_get(json_object_get(write_answer_object(a), "metadata"), field));
}

const char *write_answer_rv(struct write_answer *a)
{
	return a->rv[0] ? a->rv : write_answer_meta(a, "resourceVersion", a->rv, sizeof(a->rv));
}

static void on_written(void *arg, const struct kube_response *resp)
{
	struct write_ctx *ctx = arg;
	struct mgr *m = ctx->m;
	struct writer *w = m->writer;
	enum kind kind = ctx->kind;
	const char *key = ctx->key;
	enum write_outcome outcome;
	struct write_answer answer = { .resp = NULL };
	struct write_state *s = ws_get(m, kind, key);

	if (s)
		s->inflight = 0;
	w->inflight--;
	if (resp->error == -ECANCELED && resp->status == 0) {
		ws_tidy(m, kind, key);
		ctx_free(ctx); /* shutting down: nobody is left to tell */
		return;
	}
	if (resp->error == 0 && resp->status >= 200 && resp->status < 300)
		outcome = WRITE_OK;
	else if (resp->status == 409)
		outcome = WRITE_CONFLICT;
	else if (resp->error || resp->status == 0 || resp->status == 429 || resp->status >= 500)
		outcome = WRITE_RETRY;
	else
		outcome = WRITE_REJECTED;

	unsigned delay = 0;
	switch (outcome) {
	case WRITE_OK:
		w->stats.ok++;
		w->pause_ms = 0;
		if (s)
			s->delay = 0;
		if (resp->body && resp->body_len > 0)
			answer.resp = resp;
		/* Until the cache moves past the version this write was decided on, acting on the
		 * cache would repeat it. A write that changed nothing keeps the version, and the
		 * cache is then already right. */
		const char *new_rv = ctx->base_rv ? write_answer_rv(&answer) : NULL;
		if (ctx->base_rv && new_rv && strcmp(new_rv, ctx->base_rv) != 0 &&
		    (s = ws_make(m, kind, key)) != NULL) {
			free(s->landed);
			s->landed = ctx->base_rv; /* the state owns it now */
			ctx->base_rv = NULL;
		}
		break;
	case WRITE_CONFLICT:
		w->stats.conflicts++;
		delay = next_delay(m, kind, key, KEY_CONFLICT_START_MS, KEY_RETRY_MAX_MS);
		log_debug("write conflict; deciding again from the fresh object",
			  LF_STR("object", key), LF_END);
		break;
	case WRITE_RETRY:
		w->stats.retries++;
		delay = next_delay(m, kind, key, KEY_RETRY_START_MS, KEY_RETRY_MAX_MS);
		pause_writes(m);
		log_failure(m, kind, key, "write failed; backing off", resp);
		break;
	default:
		w->stats.rejected++;
		delay = next_delay(m, kind, key, KEY_REJECTED_START_MS, KEY_REJECTED_MAX_MS);
		log_failure(m, kind, key,
			    resp->status == 403 && resp->body &&
					    strstr(resp->body, FENCE_MESSAGE) &&
					    lease_thread_is_leader(m->elector) ?
				    "write rejected: the apiserver's leader fence refuses our "
				    "writes although we "
				    "hold the Lease, so its copy of the Lease is stale "
				    "(kubernetes#130887); "
				    "restart the kube-apiservers" :
				    "write rejected",
			    resp);
		break;
	}
	if (outcome == WRITE_OK) {
		/* Events for this key that arrived while the write was in flight were skipped. */
		if (kind != K_POD)
			state_mark(m, kind, key);
		if (kind == K_WORKLOAD)
			state_want_cycle(m);
	} else {
		state_at(m, kind, key, m->now_ms() + jitter(m, delay));
	}
	if (ctx->done) {
		state_release_views(m); /* the completion is a step of its own */
		ctx->done(m, kind, key, outcome, &answer);
		state_release_views(m);
	}
	ws_tidy(m, kind, key);
	json_decref(answer.obj);
	ctx_free(ctx);
}

/* With leader election, only the leader writes, and only while its last renewal is fresh
 * (kube/lease.h, "Fencing"): a leader that can't renew stops before anyone may take over. */
static int fenced(struct mgr *m)
{
	return m->elector && !lease_thread_may_write(m->elector);
}

int writer_send(struct mgr *m, enum kind kind, const char *key, const char *method,
		const char *path, const char *content_type, json_t *body, const char *base_rv,
		write_done_fn done)
{
	struct writer *w = m->writer;
	struct write_ctx *ctx = NULL;
	struct write_state *s = ws_get(m, kind, key);
	char *text = NULL;
	int rc;

	if (writer_paused(m)) {
		w->stats.paused_skips++;
		state_at(m, kind, key, fenced(m) ? m->now_ms() + FENCED_RETRY_MS : w->paused_until);
		json_decref(body);
		return -EAGAIN;
	}
	if (s && s->inflight) {
		json_decref(body);
		return -EBUSY;
	}
	rc = -ENOMEM;
	if (body && !(text = json_dumps(body, JSON_COMPACT)))
		goto fail;
	if (!(ctx = calloc(1, sizeof(*ctx))) || !(ctx->key = strdup(key)) ||
	    (base_rv && !(ctx->base_rv = strdup(base_rv))))
		goto fail;
	ctx->m = m;
	ctx->kind = kind;
	ctx->done = done;
	if (!(s = ws_make(m, kind, key)))
		goto fail;
	s->inflight = 1;
	rc = kube_request(m->kube, method, path, content_type, text, on_written, ctx, NULL);
	if (rc != 0) {
		s->inflight = 0;
		ws_tidy(m, kind, key);
		goto fail;
	}
	w->inflight++;
	w->stats.sent++;
	free(text);
	json_decref(body);
	return 0;
fail:
	if (ctx)
		ctx_free(ctx);
	free(text);
	json_decref(body);
	state_at(m, kind, key, m->now_ms() + KEY_RETRY_START_MS);
	return rc;
}

/* Sends a patch guarded by base_rv (metadata.resourceVersion is added: the apiserver then
 * refuses it with 409 if the object moved on). */
static int send_guarded(struct mgr *m, enum kind kind, const char *key, const char *path,
			const char *content_type, json_t *patch, const char *base_rv,
			write_done_fn done)
{
	if (patch && base_rv) {
		json_t *meta = json_object_get(patch, "metadata");
		if (!meta) {
			meta = json_object();
			json_object_set_new(patch, "metadata", meta);
		}
		json_object_set_new(meta, "resourceVersion", json_string(base_rv));
	}
	if (!patch) {
		state_at(m, kind, key, m->now_ms() + KEY_RETRY_START_MS);
		return -ENOMEM;
	}
	return writer_send(m, kind, key, "PATCH", path, content_type, patch, base_rv, done);
}

int writer_merge_patch(struct mgr *m, enum kind kind, const char *key, const char *path,
		       json_t *patch, const char *base_rv, write_done_fn done)
{
	return send_guarded(m, kind, key, path, "application/merge-patch+json", patch, base_rv,
			    done);
}

int writer_apply(struct mgr *m, enum kind kind, const char *key, const char *path,
		 const char *field_manager, json_t *config, const char *base_rv, write_done_fn done)
{
	char query[1200];
	if ((size_t)snprintf(query, sizeof(query), "%s?fieldManager=%s&force=true", path,
			     field_manager) >= sizeof(query)) {
		json_decref(config);
		return -ENAMETOOLONG;
	}
	return send_guarded(m, kind, key, query, "application/apply-patch+yaml", config, base_rv,
			    done);
}

int writer_busy(struct mgr *m, enum kind kind, const char *key)
{
	const struct write_state *s = ws_get(m, kind, key);
	return s && s->inflight;
}

int writer_lagging(struct mgr *m, enum kind kind, const char *key, const char *cached_rv)
{
	struct write_state *s = ws_get(m, kind, key);
	if (!s || !s->landed)
		return 0;
	if (cached_rv && !strcmp(s->landed, cached_rv))
		return 1;
	free(s->landed);
	s->landed = NULL;
	ws_tidy(m, kind, key);
	return 0;
}

void writer_expect(struct mgr *m, enum kind kind, const char *key)
{
	struct write_state *s = ws_make(m, kind, key);
	if (s)
		s->expect_until = m->now_ms() + WRITER_EXPECT_MS;
}

int writer_expected(struct mgr *m, enum kind kind, const char *key)
{
	struct write_state *s = ws_get(m, kind, key);
	if (!s || !s->expect_until)
		return 0;
	if (s->expect_until > m->now_ms())
		return 1;
	s->expect_until = 0;
	ws_tidy(m, kind, key);
	return 0;
}

void writer_seen(struct mgr *m, enum kind kind, const char *key)
{
	struct write_state *s = ws_get(m, kind, key);
	if (s && s->expect_until) {
		s->expect_until = 0;
		ws_tidy(m, kind, key);
	}
}

int writer_paused(struct mgr *m)
{
	return m->writer->paused_until > m->now_ms() || fenced(m);
}

size_t writer_in_flight(struct mgr *m)
{
	return m->writer->inflight;
}

void writer_get_stats(struct mgr *m, struct writer_stats *out)
{
	*out = m->writer->stats;
}

/* --- events
 * ------------------------------------------------------------------------------------ */

/* What was recorded of the object's Events goes, so the next report tries again. */
static void forget_events(struct mgr *m, enum kind kind, const char *key)
{
	struct write_state *s = ws_get(m, kind, key);
	if (s && s->evented) {
		free(s->evented);
		s->evented = NULL;
		ws_tidy(m, kind, key);
	}
}

struct event_ctx {
	struct mgr *m;
	enum kind kind;
	char key[600]; /* the object's store key */
};

static void on_event_written(void *arg, const struct kube_response *resp)
{
	struct event_ctx *ctx = arg;
	if (resp->error == -ECANCELED && resp->status == 0) {
		free(ctx);
		return;
	}
	if (resp->error || resp->status >= 300) {
		forget_events(ctx->m, ctx->kind, ctx->key);
		log_warn("cannot record event", LF_STR("object", ctx->key),
			 LF_INT("status", resp->status), LF_STR("error", resp->error_text), LF_END);
	}
	free(ctx);
}

/* Records reason as reported for the object; 0 when it was not yet, 1 when it was (or when
 * memory ran out: better one Event missing than a storm of them). A long-lived object's list
 * starts over past EVENT_SEEN_MAX bytes: at worst an Event is recorded again. */
#define EVENT_SEEN_MAX 2048
static int seen_before(struct mgr *m, enum kind kind, const char *key, const char *uid,
		       const char *reason)
{
	struct write_state *s = ws_get(m, kind, key);
	char *have = s ? s->evented : NULL, *next;
	size_t ulen = strlen(uid), rlen = strlen(reason);
	if (have && strlen(have) > EVENT_SEEN_MAX)
		have = NULL;
	if (have && !strncmp(have, uid, ulen) && have[ulen] == '|') {
		for (const char *p = have + ulen; (p = strstr(p, reason)) != NULL; p++)
			if (p[-1] == '|' && p[rlen] == '|')
				return 1;
	} else {
		have = NULL; /* none yet, or for an earlier object of the same name */
	}
	size_t n = have ? strlen(have) : ulen + 1;
	if (!(next = malloc(n + rlen + 2)))
		return 1;
	if (have)
		memcpy(next, have, n);
	else
		snprintf(next, n + 1, "%s|", uid);
	snprintf(next + n, rlen + 2, "%s|", reason);
	if (!s && !(s = ws_make(m, kind, key))) {
		free(next);
		return 1;
	}
	free(s->evented);
	s->evented = next;
	return 0;
}

/* Takes a token from the bucket of an Event's class: 1, or 0 when its burst is spent. */
static int event_token(struct mgr *m, enum event_class cls)
{
	int routine = cls == EVENT_ROUTINE;
	struct bucket *b = &m->writer->buckets[routine];
	int64_t qps = routine ? EVENT_ROUTINE_QPS : EVENT_QPS;
	int64_t burst = (routine ? EVENT_ROUTINE_BURST : EVENT_BURST) * 1000;
	int64_t now = m->now_ms();
	if (now > b->refilled_ms) {
		int64_t add = (now - b->refilled_ms) * qps; /* thousandths */
		b->tokens = b->tokens + add > burst ? burst : b->tokens + add;
		b->refilled_ms = now;
	}
	if (b->tokens < 1000)
		return 0;
	b->tokens -= 1000;
	return 1;
}

/* FNV-1a: tells messages apart in the record of Events sent, nothing more. */
static uint32_t message_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

void writer_event(struct mgr *m, enum kind kind, json_t *obj, enum event_class cls,
		  const char *reason, const char *message)
{
	const char *type = cls == EVENT_WARNING ? "Warning" : "Normal";
	struct writer *w = m->writer;
	char path[512], when[40], name[256], seen[160], note[1024];
	const char *ns = obj_namespace(obj), *uid = obj_uid(obj);
	if (fenced(m))
		return; /* a follower's caches see what the leader records */
	struct event_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return;
	ctx->m = m;
	ctx->kind = kind;
	snprintf(seen, sizeof(seen), "%s#%08x", reason, (unsigned)message_hash(message));
	if (informer_key(obj, ctx->key, sizeof(ctx->key)) != 0 ||
	    seen_before(m, kind, ctx->key, uid ? uid : "", seen)) {
		free(ctx);
		return;
	}
	if (!event_token(m, cls)) {
		/* Dropped, not queued: a queue would only delay the flood. It is logged and
		 * counted; the object's status carries the same news. */
		forget_events(m, kind, ctx->key);
		w->stats.events_dropped++;
		log_debug("event dropped by the rate limit", LF_STR("object", ctx->key),
			  LF_STR("reason", reason), LF_END);
		free(ctx);
		return;
	}
	int64_t now = m->now_ms();
	time_format_rfc3339(now - now % 1000, when, sizeof(when));
	/* events.k8s.io/v1 wants a MicroTime: "...:05.000000Z". */
	size_t wl = strlen(when);
	if (wl > 1 && when[wl - 1] == 'Z')
		snprintf(when + wl - 1, sizeof(when) - (wl - 1), ".%03d000Z", (int)(now % 1000));
	/* Names as client-go makes them, the object's name and a time; the sequence number keeps
	 * two Events of one millisecond apart. */
	snprintf(name, sizeof(name), "%.200s.%llx", obj_name(obj),
		 (unsigned long long)((uint64_t)now * 4096 + (w->event_seq++ & 4095)));
	snprintf(note, sizeof(note), "%s", message); /* the API takes at most 1 kB */
	json_t *ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s,"
			       " s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:s}",
			       "apiVersion", "events.k8s.io/v1", "kind", "Event", "metadata",
			       "name", name, "namespace", ns ? ns : "default", "eventTime", when,
			       "reportingController", EVENT_CONTROLLER, "reportingInstance",
			       m->identity[0] ? m->identity : "muster", "action", reason, "reason",
			       reason, "regarding", "apiVersion", kind_api_version(kind), "kind",
			       kind_name(kind), "name", obj_name(obj), "namespace", ns ? ns : "",
			       "uid", uid ? uid : "", "note", note, "type", type);
	char *body = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
	snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events",
		 ns ? ns : "default");
	struct kube_client *client = m->event_kube ? m->event_kube : m->kube;
	if (!body ||
	    kube_request(client, "POST", path, NULL, body, on_event_written, ctx, NULL) != 0) {
		forget_events(m, kind, ctx->key);
		log_warn("cannot record event", LF_STR("reason", reason), LF_END);
		free(ctx);
	} else {
		w->stats.events_sent++;
	}
	log_info("event", LF_STR("kind", kind_name(kind)), LF_STR("object", obj_name(obj)),
		 LF_STR("reason", reason), LF_STR("type", type), LF_STR("message", message),
		 LF_END);
	free(body);
	json_decref(ev);
}

void writer_forget(struct mgr *m, enum kind kind, const char *key)
{
	struct write_state *s;
	/* A Workload's goes with its record (wl_record_forget). A write in flight keeps its flag:
	 * its completion still comes. */
	if (kind == K_WORKLOAD || !(s = strmap_get(&m->writer->objs[kind], key)))
		return;
	free(s->landed);
	free(s->evented);
	*s = (struct write_state){ .inflight = s->inflight };
	ws_tidy(m, kind, key);
}

int writer_init(struct mgr *m)
{
	struct writer *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (int k = 0; k < K_KINDS; k++)
		strmap_init(&w->objs[k]);
	w->last_log_ms = INT64_MIN / 2;
	w->buckets[0] = (struct bucket){ (int64_t)EVENT_BURST * 1000, m->now_ms ? m->now_ms() : 0 };
	w->buckets[1] =
		(struct bucket){ (int64_t)EVENT_ROUTINE_BURST * 1000, w->buckets[0].refilled_ms };
	uv_timer_init(m->loop, &w->resume);
	w->resume.data = m;
	m->writer = w;
	return 0;
}

static void on_resume_closed(uv_handle_t *h)
{
	struct writer *w = CONTAINER_OF(h, struct writer, resume);
	free(w);
}

/* Calls still in flight have completed (kube_client_free cancels them) before this. */
void writer_release(struct mgr *m)
{
	struct writer *w = m->writer;
	if (!w)
		return;
	for (int k = 0; k < K_KINDS; k++) {
		for (size_t i = 0; i < w->objs[k].cap; i++) {
			struct write_state *s = w->objs[k].slots[i].value;
			if (w->objs[k].slots[i].key) {
				free(s->landed);
				free(s->evented);
			}
		}
		strmap_release(&w->objs[k], free);
	}
	m->writer = NULL;
	uv_close((uv_handle_t *)&w->resume, on_resume_closed);
}
