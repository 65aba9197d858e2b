/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault-injection tests for kube/watch (the informer) against a scripted fake apiserver.
 *
 * The fake is the shared one (fake_apiserver.h: muster's own httpd on 127.0.0.1:0, on the same
 * uv loop as the real kube client and informer), answering with this file's script. Its
 * handler is synchronous and answers with a whole Content-Length body, so a watch response is a
 * fixed batch of event lines followed by the end of the watch; the informer treats that as a watch
 * that ended and watches again, which is exactly what lets one script drive it through lists,
 * watches and faults. The script is a sequence of canned responses, one per request in order (the
 * informer has at most one request in flight); every request's target and arrival time is recorded
 * so the tests can assert on what the informer asked for. Requests past the end of the script get
 * 503, which parks the informer in its backoff.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>
#include <uv.h>

#include "kube/client.h"
#include "kube/watch.h"
#include "fake_apiserver.h"
#include "net/httpd.h"
#include "util/log.h"

#define JOBS "/apis/batch/v1/jobs"
#define MAX_REQS 64
#define MAX_EVENTS 64
#define WAIT_MS 5000 /* per condition; the slowest waits cover one backoff of at most 1.6 s */
#define MS (1000000ull) /* uv_hrtime units per millisecond */

/* Object, watch-event and list bodies as the apiserver writes them (items of a list have no
 * kind; the informer must not need one). */
#define OBJ(name, rv)                                                                         \
	"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"" name "\",\"resourceVersion\":\"" rv \
	"\"},\"spec\":{}}"
#define EV(type, name, rv) "{\"type\":\"" type "\",\"object\":" OBJ(name, rv) "}\n"
#define BOOKMARK(rv)                                                                       \
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\"," \
	"\"metadata\":{\"resourceVersion\":\"" rv "\"}}}\n"
#define ERROR_410                                                                                  \
	"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","               \
	"\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: 1 (40)\"," \
	"\"reason\":\"Expired\",\"code\":410}}\n"
#define STATUS(code, reason)                                                                 \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\"," \
	"\"reason\":\"" reason "\",\"code\":" #code "}"
#define LIST(rv, cont, items)                                              \
	"{\"kind\":\"JobList\",\"apiVersion\":\"batch/v1\",\"metadata\":{" \
	"\"resourceVersion\":\"" rv "\",\"continue\":\"" cont "\"},\"items\":[" items "]}"

struct step {
	char kind; /* 'L' a list page or 'W' a watch is expected */
	int status;
	const char *body;
};

struct request {
	char target[1024]; /* path?query, as sent (not decoded) */
	uint64_t at; /* uv_hrtime() on arrival */
	int synced; /* informer_synced() when it arrived */
};

struct event {
	enum watch_event_type type;
	char key[64];
	char old_rv[16]; /* "" when old was NULL */
	char rv[16];
	int synced; /* informer_synced() during the callback */
};

struct fake {
	uv_loop_t loop;
	uv_timer_t tick; /* wakes UV_RUN_ONCE so RUN_UNTIL re-checks its condition */
	struct fake_api *api; /* the shared fake, answering with this file's script */
	struct kube_client *client;
	struct informer *inf;
	const struct step *script;
	size_t nsteps;
	struct request reqs[MAX_REQS];
	size_t nreqs; /* every request, including those not recorded */
	int mismatches; /* requests that were not what the script expected */
	struct event events[MAX_EVENTS];
	size_t nevents;
	int synced_calls;
	size_t events_at_sync; /* nevents when on_synced ran */
	int stubs; /* the store keeps stubs (stub_transform) */
	/* ... read from the text alone (text_stub_transform, stub_transform its fallback): how
	 * many objects each read, and a text that refuses to be read so (it falls back). */
	int text_stubs, text_read, tree_read;
	const char *text_refuses;
	/* Options the next start() passes, and what the transform saw. */
	uint64_t list_slice_ns;
	int with_transform; /* a transform that records what it is given (wants_text) */
	int transformed, saw_managed_fields, text_mismatches;
	uv_prepare_t turns; /* counts events per loop turn */
	size_t events_at_turn, most_events_a_turn;
};

/* Runs the loop until cond holds, failing after ms. cond is re-checked after every loop turn;
 * the 5 ms tick bounds how long one turn can block. */
#define RUN_UNTIL(f, cond, ms)                                                                 \
	do {                                                                                   \
		uint64_t deadline_ = uv_hrtime() + (uint64_t)(ms)*MS;                          \
		while (!(cond) && uv_hrtime() < deadline_)                                     \
			uv_run(&(f)->loop, UV_RUN_ONCE);                                       \
		if (!(cond))                                                                   \
			fail_msg("timed out waiting for %s (requests %zu, events %zu)", #cond, \
				 (f)->nreqs, (f)->nevents);                                    \
	} while (0)

/* ---- helpers ---- */

/* Copies the raw value of query parameter name in target into out; false when absent. */
static bool param(const char *target, const char *name, char *out, size_t size)
{
	const char *q = strchr(target, '?');
	size_t n = strlen(name);
	while (q) {
		q++;
		if (!strncmp(q, name, n) && q[n] == '=') {
			const char *v = q + n + 1;
			size_t len = strcspn(v, "&");
			if (len >= size)
				return false;
			memcpy(out, v, len);
			out[len] = '\0';
			return true;
		}
		q = strchr(q, '&');
	}
	return false;
}

static bool has_param(const char *target, const char *name, const char *want)
{
	char v[512];
	return param(target, name, v, sizeof(v)) && !strcmp(v, want);
}

static bool is_watch(const char *target)
{
	return has_param(target, "watch", "1");
}

/* An object's resourceVersion, or a stub's (a string, or an integer: stub_transform). */
static const char *rv_of(json_t *obj)
{
	static char buf[4][32];
	static unsigned next;
	if (json_is_integer(obj)) {
		char *b = buf[next++ % 4];
		snprintf(b, sizeof(buf[0]), "%" JSON_INTEGER_FORMAT, json_integer_value(obj));
		return b;
	}
	if (json_is_string(obj))
		return json_string_value(obj);
	const char *rv = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	return rv ? rv : "";
}

/* The index of the first event at or after from with this type and key, or -1. */
static int find_event(const struct fake *f, size_t from, enum watch_event_type type,
		      const char *key)
{
	for (size_t i = from; i < f->nevents; i++)
		if (f->events[i].type == type && !strcmp(f->events[i].key, key))
			return (int)i;
	return -1;
}

static size_t count_key(const struct fake *f, size_t from, const char *key)
{
	size_t n = 0;
	for (size_t i = from; i < f->nevents; i++)
		n += !strcmp(f->events[i].key, key);
	return n;
}

static void assert_event(const struct event *e, enum watch_event_type type, const char *key,
			 const char *old_rv, const char *rv)
{
	assert_int_equal(e->type, type);
	assert_string_equal(e->key, key);
	assert_string_equal(e->old_rv, old_rv);
	assert_string_equal(e->rv, rv);
}

/* The resourceVersion of the stored object under key, or NULL when absent. */
static const char *stored_rv(const struct fake *f, const char *key)
{
	json_t *obj = informer_get(f->inf, key);
	return obj ? rv_of(obj) : NULL;
}

static void assert_request_is_list(const struct fake *f, size_t i, const char *cont)
{
	const char *t = f->reqs[i].target;
	char v[512];
	assert_true(i < f->nreqs);
	assert_false(is_watch(t));
	assert_true(!strncmp(t, JOBS "?", strlen(JOBS "?")));
	assert_true(has_param(t, "limit", "500"));
	if (cont)
		assert_true(has_param(t, "continue", cont));
	else if (param(t, "continue", v, sizeof(v)))
		fail_msg("request %zu continues a list: %s", i, t);
}

static void assert_request_is_watch(const struct fake *f, size_t i, const char *rv)
{
	const char *t = f->reqs[i].target;
	char v[64];
	assert_true(i < f->nreqs);
	assert_true(!strncmp(t, JOBS "?", strlen(JOBS "?")));
	assert_true(is_watch(t));
	assert_true(has_param(t, "allowWatchBookmarks", "true"));
	if (!has_param(t, "resourceVersion", rv))
		fail_msg("request %zu: want resourceVersion=%s in %s", i, rv, t);
	/* The server-side timeout is randomised over [300, 600) s, as client-go does. */
	assert_true(param(t, "timeoutSeconds", v, sizeof(v)));
	long timeout = strtol(v, NULL, 10);
	assert_true(timeout >= 300 && timeout < 600);
}

static void assert_gap_ms_at_least(const struct fake *f, size_t later, unsigned ms)
{
	assert_true(later > 0 && later < f->nreqs);
	uint64_t gap = f->reqs[later].at - f->reqs[later - 1].at;
	if (gap < ms * MS)
		fail_msg("request %zu came %llu ms after the previous one, want >= %u", later,
			 (unsigned long long)(gap / MS), ms);
}

static void assert_gap_ms_below(const struct fake *f, size_t later, unsigned ms)
{
	assert_true(later > 0 && later < f->nreqs);
	uint64_t gap = f->reqs[later].at - f->reqs[later - 1].at;
	if (gap >= ms * MS)
		fail_msg("request %zu came %llu ms after the previous one, want < %u", later,
			 (unsigned long long)(gap / MS), ms);
}

/* ---- the fake apiserver and the informer's callbacks ---- */

static void on_request(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	struct fake *f = arg;
	size_t i = f->nreqs++;
	char target[1024];
	snprintf(target, sizeof(target), "%s%s%s", req->path, *req->query ? "?" : "", req->query);
	if (i < MAX_REQS) {
		struct request *r = &f->reqs[i];
		snprintf(r->target, sizeof(r->target), "%s", target);
		r->at = uv_hrtime();
		r->synced = f->inf ? informer_synced(f->inf) : 0;
	}

	const char *body = STATUS(503, "ServiceUnavailable");
	resp->status = 503;
	if (i < f->nsteps) {
		const struct step *s = &f->script[i];
		if (strcmp(req->method, "GET") || strcmp(req->path, JOBS) ||
		    (s->kind == 'W') != is_watch(target)) {
			fprintf(stderr, "request %zu unexpected (want %c): %s %s\n", i, s->kind,
				req->method, target);
			f->mismatches++;
			body = STATUS(400, "BadRequest");
			resp->status = 400;
		} else {
			body = s->body;
			resp->status = s->status;
		}
	}
	resp->content_type = "application/json";
	resp->body = strdup(body);
	resp->body_len = resp->body ? strlen(body) : 0;
}

static void on_event(void *arg, struct informer *inf, enum watch_event_type type, const char *key,
		     json_t *old, json_t *obj)
{
	struct fake *f = arg;
	assert_non_null(obj);
	/* The store already reflects the change when consumers hear of it. */
	if (type == WATCH_DELETED)
		assert_null(informer_get(inf, key));
	else
		assert_ptr_equal(informer_get(inf, key), obj);
	if (f->nevents >= MAX_EVENTS)
		return;
	struct event *e = &f->events[f->nevents++];
	e->type = type;
	snprintf(e->key, sizeof(e->key), "%s", key);
	snprintf(e->old_rv, sizeof(e->old_rv), "%s", old ? rv_of(old) : "");
	snprintf(e->rv, sizeof(e->rv), "%s", rv_of(obj));
	e->synced = informer_synced(inf);
}

static void on_synced(void *arg, struct informer *inf)
{
	struct fake *f = arg;
	assert_true(informer_synced(inf));
	f->synced_calls++;
	f->events_at_sync = f->nevents;
}

static void on_tick(uv_timer_t *t)
{
	(void)t;
}

/* A store of stubs, as the manager's compact stores keep: the resourceVersion alone, an integer,
 * or a string for objects named "b". */
static json_t *stub_transform(void *arg, json_t *obj, const char *text, size_t len)
{
	(void)arg;
	(void)text;
	(void)len;
	json_t *meta = json_object_get(obj, "metadata");
	const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	assert_non_null(rv);
	if (name && !strcmp(name, "b"))
		return json_string(rv);
	return json_integer(strtoll(rv, NULL, 10));
}

/* As the manager's compact kinds: the stub from the text alone, never parsed. */
static json_t *text_stub_transform(void *arg, const char *key, const char *rv_read,
				   const char *text, size_t len)
{
	struct fake *f = arg;
	char buf[4096];
	assert_true(len < sizeof(buf));
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (f->text_refuses && strstr(buf, f->text_refuses))
		return NULL;
	assert_null(strstr(buf, "managedFields"));
	f->text_read++;
	const char *rv = strstr(buf, "\"resourceVersion\":\"");
	assert_non_null(rv);
	rv += strlen("\"resourceVersion\":\"");
	assert_int_equal(strncmp(rv, rv_read, strlen(rv_read)), 0); /* the informer read it */
	return !strcmp(key, "ns/b") ? json_stringn(rv, strcspn(rv, "\"")) :
				      json_integer(strtoll(rv, NULL, 10));
}

static json_t *counted_stub_transform(void *arg, json_t *obj, const char *text, size_t len)
{
	struct fake *f = arg;
	f->tree_read++;
	return stub_transform(arg, obj, text, len);
}

static void on_turn(uv_prepare_t *p)
{
	struct fake *f = p->data;
	size_t n = f->nevents - f->events_at_turn;
	if (n > f->most_events_a_turn)
		f->most_events_a_turn = n;
	f->events_at_turn = f->nevents;
}

/* Keeps objects whole, and records whether one still had managedFields and whether its text
 * is its own bytes (parsed, the same object: so without managedFields too). */
static json_t *record_transform(void *arg, json_t *obj, const char *text, size_t len)
{
	struct fake *f = arg;
	f->transformed++;
	if (json_object_get(json_object_get(obj, "metadata"), "managedFields"))
		f->saw_managed_fields++;
	json_t *again = text ? json_loadb(text, len, 0, NULL) : NULL;
	if (!again || !json_equal(again, obj))
		f->text_mismatches++;
	json_decref(again);
	return NULL;
}

static void start(struct fake *f, const struct step *script, size_t nsteps, const char *selector)
{
	struct informer_options opt = { .name = "jobs",
					.path = JOBS,
					.label_selector = selector,
					.on_event = on_event,
					.arg = f,
					.on_synced = on_synced,
					.transform = f->text_stubs     ? counted_stub_transform :
						     f->stubs          ? stub_transform :
						     f->with_transform ? record_transform :
									 NULL,
					.transform_text = f->text_stubs ? text_stub_transform :
									  NULL,
					.wants_text = f->with_transform,
					.list_slice_ns = f->list_slice_ns };
	f->script = script;
	f->nsteps = nsteps;
	assert_int_equal(informer_start(&f->loop, f->client, &opt, &f->inf), 0);
	assert_non_null(f->inf);
	assert_false(informer_synced(f->inf));
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	assert_int_equal(uv_loop_init(&f->loop), 0);
	uv_timer_init(&f->loop, &f->tick);
	uv_timer_start(&f->tick, on_tick, 5, 5);
	uv_prepare_init(&f->loop, &f->turns);
	f->turns.data = f;
	uv_prepare_start(&f->turns, on_turn);

	assert_int_equal(fake_api_start(&f->loop, on_request, f, &f->api), 0);
	struct kube_config cfg = { .server = (char *)fake_api_url(f->api) };
	assert_int_equal(kube_client_new(&f->loop, &cfg, &f->client), 0);
	*state = f;
	return 0;
}

/* Stops everything the way the manager does and requires that the loop then empties by itself:
 * a handle left open would keep it alive, and LeakSanitizer reports anything not freed. */
static int teardown(void **state)
{
	struct fake *f = *state;
	informer_stop(f->inf);
	kube_client_free(f->client);
	fake_api_stop(f->api);
	uv_close((uv_handle_t *)&f->tick, NULL);
	uv_close((uv_handle_t *)&f->turns, NULL);
	uint64_t deadline = uv_hrtime() + 2000 * MS;
	int alive = 1;
	while (alive && uv_hrtime() < deadline)
		alive = uv_run(&f->loop, UV_RUN_NOWAIT);
	if (alive) {
		fprintf(stderr, "handles still open after teardown\n");
		return -1; /* leak the loop rather than walk it: the leak is the finding */
	}
	int rc = uv_loop_close(&f->loop);
	int mismatches = f->mismatches;
	free(f);
	return rc == 0 && mismatches == 0 ? 0 : -1;
}

/* ---- cases ---- */

/* 1. Two pages joined by a continue token, then a watch from the list's resourceVersion. */
static void test_paged_list_then_watch(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 200, LIST("10", "tok/1+=", OBJ("a", "3") "," OBJ("b", "4")) },
		{ 'L', 200, LIST("10", "", OBJ("c", "5")) },
		{ 'W', 200, "" },
	};
	start(f, script, 3, NULL);
	RUN_UNTIL(f, f->nreqs >= 3, WAIT_MS);

	assert_string_equal(f->reqs[0].target, JOBS "?limit=500");
	assert_request_is_list(f, 1, "tok%2F1%2B%3D"); /* the token is escaped, not passed raw */
	assert_request_is_watch(f, 2, "10");
	/* Synced only once the last page is in: not while the second page is being fetched. */
	assert_false(f->reqs[0].synced);
	assert_false(f->reqs[1].synced);
	assert_true(f->reqs[2].synced);
	assert_true(informer_synced(f->inf));
	assert_int_equal(f->synced_calls, 1);

	/* Every object ADDED exactly once, all before on_synced, none reported as synced early. */
	assert_int_equal(f->nevents, 3);
	assert_int_equal(f->events_at_sync, 3);
	const char *keys[] = { "ns/a", "ns/b", "ns/c" };
	for (size_t i = 0; i < 3; i++) {
		int e = find_event(f, 0, WATCH_ADDED, keys[i]);
		assert_true(e >= 0);
		assert_int_equal(count_key(f, 0, keys[i]), 1);
		assert_string_equal(f->events[e].old_rv, "");
		assert_false(f->events[e].synced);
	}
	assert_int_equal(json_object_size(informer_store(f->inf)), 3);
	assert_string_equal(stored_rv(f, "ns/c"), "5");
}

/* 2. Each event type reaches the store and the callback; watches resume where the last left. */
static void test_watch_events_and_resume(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 200, LIST("10", "", OBJ("a", "3") "," OBJ("b", "4")) },
		{ 'W', 200,
		  EV("ADDED", "c", "11") EV("MODIFIED", "a", "12") EV("DELETED", "b", "13")
			  BOOKMARK("20") },
		{ 'W', 200, EV("MODIFIED", "c", "21") },
		{ 'W', 200, "" },
	};
	start(f, script, 4, NULL);
	RUN_UNTIL(f, f->nreqs >= 4, WAIT_MS);

	assert_request_is_list(f, 0, NULL);
	assert_request_is_watch(f, 1, "10");
	assert_request_is_watch(f, 2, "20"); /* from the bookmark, not the last object event */
	assert_request_is_watch(f, 3, "21");

	size_t base = f->events_at_sync;
	assert_int_equal(base, 2);
	assert_int_equal(f->nevents, base + 4);
	const struct event *e = &f->events[base];
	assert_event(&e[0], WATCH_ADDED, "ns/c", "", "11");
	assert_event(&e[1], WATCH_MODIFIED, "ns/a", "3", "12");
	/* DELETED passes the last stored object as both old and obj (watch.h's contract). */
	assert_event(&e[2], WATCH_DELETED, "ns/b", "4", "4");
	/* The bookmark produced no event; the second watch's MODIFIED did. */
	assert_event(&e[3], WATCH_MODIFIED, "ns/c", "11", "21");

	assert_int_equal(json_object_size(informer_store(f->inf)), 2);
	assert_string_equal(stored_rv(f, "ns/a"), "12");
	assert_string_equal(stored_rv(f, "ns/c"), "21");
	assert_null(informer_get(f->inf, "ns/b"));
	assert_int_equal(f->synced_calls, 1);
}

/* Listed objects as the apiserver serves them, with managedFields (first, last, or alone in
 * metadata, and spaced out as a pretty-printed list is). */
#define OBJ_MF(name, rv)                                                                 \
	"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"" name "\",\"managedFields\":[{" \
	"\"manager\":\"kubectl\",\"fieldsV1\":{\"f:spec\":{\"f:x\":{}}}}],"              \
	"\"resourceVersion\":\"" rv "\"},\"spec\":{\"x\":1}}"

/* 2b. managedFields is cut from every listed item before the transform or the store see it,
 * and the transform gets each item's own bytes (without it) as its text. */
static void test_list_items_lose_managed_fields(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 200,
		  LIST("10", "",
		       OBJ_MF("a", "3") ",\n  {\"metadata\" : { \"managedFields\" : [ {} ] ,"
					" \"namespace\":\"ns\", \"name\":\"b\","
					" \"resourceVersion\":\"4\" } }\n , "
					"{\"spec\":{\"y\":\"]}\\\"\"},\"metadata\":{"
					"\"namespace\":\"ns\",\"name\":\"c\",\"resourceVersion\":"
					"\"5\",\"managedFields\":[{\"a\":\"}\"}]}}") },
		{ 'W', 200, "" },
	};
	f->with_transform = 1;
	start(f, script, 2, NULL);
	RUN_UNTIL(f, f->nreqs >= 2, WAIT_MS);

	assert_int_equal(f->nevents, 3);
	assert_int_equal(f->transformed, 3);
	assert_int_equal(f->saw_managed_fields, 0);
	assert_int_equal(f->text_mismatches, 0);
	const char *keys[] = { "ns/a", "ns/b", "ns/c" };
	for (size_t i = 0; i < 3; i++) {
		json_t *meta = json_object_get(informer_get(f->inf, keys[i]), "metadata");
		assert_non_null(meta);
		assert_null(json_object_get(meta, "managedFields"));
	}
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(informer_get(f->inf, "ns/a"),
								 "spec"),
						 "x")),
			 1);
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(informer_get(f->inf, "ns/c"),
								    "spec"),
						    "y")),
			    "]}\"");
}

#define PAGES 6
#define PER_PAGE 8

/* Page p of a list of PAGES pages of PER_PAGE items "p<p>i<i>", continued by "<p+1>". */
static void make_page(char *buf, size_t size, int p, const char *rv_prefix)
{
	size_t n = (size_t)snprintf(buf, size,
				    "{\"kind\":\"JobList\",\"metadata\":{\"resourceVersion\":"
				    "\"50\",\"continue\":\"%s\"},\"items\":[",
				    p + 1 < PAGES ? (char[]){ (char)('1' + p), 0 } : "");
	for (int i = 0; i < PER_PAGE; i++)
		n += (size_t)snprintf(buf + n, size - n,
				      "%s{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p%di%d\","
				      "\"managedFields\":[{\"manager\":\"m\"}],"
				      "\"resourceVersion\":\"%s%d\"},\"spec\":{}}",
				      i ? "," : "", p, i, rv_prefix, p * PER_PAGE + i);
	snprintf(buf + n, size - n, "]}");
}

/* 2c. Many pages, applied one item a loop turn (a slice of 1 ns): every item ADDED once, in
 * the list's order, none in the same turn as more than one other, all before on_synced, which
 * comes once, after the last page; then the watch from the list's resourceVersion. */
static void test_many_pages_sliced(void **state)
{
	struct fake *f = *state;
	static char bodies[PAGES][2048];
	struct step script[PAGES + 1];
	for (int p = 0; p < PAGES; p++) {
		make_page(bodies[p], sizeof(bodies[p]), p, "1");
		script[p] = (struct step){ 'L', 200, bodies[p] };
	}
	script[PAGES] = (struct step){ 'W', 200, "" };
	f->list_slice_ns = 1;
	start(f, script, PAGES + 1, NULL);
	RUN_UNTIL(f, f->nreqs >= PAGES + 1, WAIT_MS);

	assert_request_is_list(f, 0, NULL);
	for (int p = 1; p < PAGES; p++) {
		assert_request_is_list(f, (size_t)p, (char[]){ (char)('0' + p), 0 });
		assert_false(f->reqs[p].synced);
	}
	assert_request_is_watch(f, PAGES, "50");
	assert_int_equal(f->synced_calls, 1);
	assert_int_equal(f->nevents, PAGES * PER_PAGE);
	assert_int_equal(f->events_at_sync, PAGES * PER_PAGE);
	for (int p = 0, e = 0; p < PAGES; p++)
		for (int i = 0; i < PER_PAGE; i++, e++) {
			char key[32];
			snprintf(key, sizeof(key), "ns/p%di%d", p, i);
			assert_string_equal(f->events[e].key, key);
			assert_int_equal(f->events[e].type, WATCH_ADDED);
			assert_false(f->events[e].synced);
		}
	/* Sliced: without it a page's 8 items would come in one turn. */
	assert_true(f->most_events_a_turn <= 2);
	assert_int_equal(json_object_size(informer_store(f->inf)), PAGES * PER_PAGE);
	assert_null(json_object_get(json_object_get(informer_get(f->inf, "ns/p5i7"), "metadata"),
				    "managedFields"));
}

/* 2d. A relist over several pages, sliced, reports only the difference: the changed and the
 * new as their pages come, and what is gone once the last page is in. */
static void test_relist_pages_sliced_difference(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 200, LIST("10", "2", OBJ("a", "3") "," OBJ("b", "4")) },
		{ 'L', 200, LIST("10", "", OBJ("c", "5") "," OBJ("d", "6")) },
		{ 'W', 410, STATUS(410, "Expired") },
		{ 'L', 200, LIST("30", "2", OBJ_MF("a", "3") "," OBJ_MF("b", "25")) },
		{ 'L', 200, LIST("30", "", OBJ("e", "26") "," OBJ("d", "6")) },
		{ 'W', 200, "" },
	};
	f->list_slice_ns = 1;
	start(f, script, 6, NULL);
	RUN_UNTIL(f, f->nreqs >= 6, WAIT_MS);

	assert_request_is_list(f, 3, NULL);
	assert_request_is_list(f, 4, "2");
	assert_request_is_watch(f, 5, "30");
	assert_int_equal(f->synced_calls, 1);
	assert_int_equal(f->nevents, 4 + 3);
	const struct event *e = &f->events[4];
	assert_event(&e[0], WATCH_MODIFIED, "ns/b", "4", "25");
	assert_event(&e[1], WATCH_ADDED, "ns/e", "", "26");
	/* What is gone comes once the last page is in. */
	assert_event(&e[2], WATCH_DELETED, "ns/c", "5", "5");
	assert_int_equal(json_object_size(informer_store(f->inf)), 4);
	assert_null(informer_get(f->inf, "ns/c"));
	assert_string_equal(stored_rv(f, "ns/a"), "3");
	assert_string_equal(stored_rv(f, "ns/b"), "25");
}

/* 2e. A page with an item that isn't an object fails the list: it starts again from the first
 * page after a backoff, not synced meanwhile, and each object is reported once (what the
 * failed pages applied is not reported again). */
static void test_bad_page_relists(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 200, LIST("10", "2", OBJ("a", "3")) },
		{ 'L', 200, LIST("10", "", OBJ("b", "4") ",42") },
		{ 'L', 200, LIST("11", "2", OBJ("a", "3")) },
		{ 'L', 200, LIST("11", "", OBJ("b", "4") ", {\"metadata\":") },
		{ 'L', 200, LIST("12", "", OBJ("a", "3") "," OBJ("b", "4") "," OBJ("c", "5")) },
		{ 'W', 200, "" },
	};
	start(f, script, 6, NULL);
	RUN_UNTIL(f, f->nreqs >= 6, 3 * WAIT_MS);

	assert_request_is_list(f, 2, NULL);
	assert_gap_ms_at_least(f, 2, 400);
	assert_request_is_list(f, 3, "2");
	assert_request_is_list(f, 4, NULL); /* a truncated page fails the same way */
	assert_gap_ms_at_least(f, 4, 400);
	for (size_t i = 0; i < 5; i++)
		assert_false(f->reqs[i].synced);
	assert_request_is_watch(f, 5, "12");
	assert_int_equal(f->synced_calls, 1);
	assert_int_equal(f->nevents, 3);
	assert_int_equal(count_key(f, 0, "ns/a"), 1);
	assert_int_equal(count_key(f, 0, "ns/b"), 1);
	assert_int_equal(count_key(f, 0, "ns/c"), 1);
	assert_int_equal(json_object_size(informer_store(f->inf)), 3);
}

/* A relist after 410 must report exactly the difference: c gone, b changed, d new, a unchanged
 * (its stored copy came from the watch with the same resourceVersion the new list has). */
static void assert_relist_difference(struct fake *f, size_t relist_req)
{
	assert_request_is_list(f, relist_req, NULL);
	assert_gap_ms_below(f, relist_req, 400); /* a 410 is not an error to back off from */
	assert_request_is_watch(f, relist_req + 1, "30");

	int c = find_event(f, 0, WATCH_DELETED, "ns/c");
	int b = find_event(f, 0, WATCH_MODIFIED, "ns/b");
	int d = find_event(f, 0, WATCH_ADDED, "ns/d");
	assert_true(c >= 0 && b >= 0 && d >= 0);
	assert_string_equal(f->events[c].old_rv, "5");
	assert_string_equal(f->events[b].old_rv, "4");
	assert_string_equal(f->events[b].rv, "25");
	assert_string_equal(f->events[d].old_rv, "");
	assert_string_equal(f->events[d].rv, "26");
	/* a: ADDED by the first list, MODIFIED by the watch, and nothing from the relist. */
	assert_int_equal(count_key(f, 0, "ns/a"), 2);
	assert_int_equal(count_key(f, 0, "ns/b"), 2);
	assert_int_equal(count_key(f, 0, "ns/c"), 2);
	assert_int_equal(count_key(f, 0, "ns/d"), 1);
	assert_int_equal(f->nevents, 3 + 1 + 3);

	assert_int_equal(json_object_size(informer_store(f->inf)), 3);
	assert_string_equal(stored_rv(f, "ns/a"), "11");
	assert_string_equal(stored_rv(f, "ns/b"), "25");
	assert_string_equal(stored_rv(f, "ns/d"), "26");
	assert_null(informer_get(f->inf, "ns/c"));
	assert_int_equal(f->synced_calls, 1); /* a relist is not a second initial sync */
}

/* 3. An ERROR 410 inside the watch stream: everything after it is ignored and the informer
 * relists at once. */
static const struct step in_stream_410[] = {
	{ 'L', 200, LIST("10", "", OBJ("a", "3") "," OBJ("b", "4") "," OBJ("c", "5")) },
	{ 'W', 200, EV("MODIFIED", "a", "11") ERROR_410 EV("ADDED", "z", "99") },
	{ 'L', 200, LIST("30", "", OBJ("a", "11") "," OBJ("b", "25") "," OBJ("d", "26")) },
	{ 'W', 200, "" },
};

static void test_in_stream_410_relists(void **state)
{
	struct fake *f = *state;
	start(f, in_stream_410, 4, NULL);
	RUN_UNTIL(f, f->nreqs >= 4, WAIT_MS);

	assert_request_is_watch(f, 1, "10");
	assert_int_equal(find_event(f, 0, WATCH_ADDED, "ns/z"), -1);
	assert_relist_difference(f, 2);
}

/* 3b. The same relist over a store of stubs (the resourceVersion alone, as an integer or a
 * string): what is unchanged reports nothing, the rest the same difference. */
static void test_relist_over_stubs(void **state)
{
	struct fake *f = *state;
	f->stubs = 1;
	start(f, in_stream_410, 4, NULL);
	RUN_UNTIL(f, f->nreqs >= 4, WAIT_MS);
	assert_true(json_is_integer(informer_get(f->inf, "ns/a")));
	assert_true(json_is_string(informer_get(f->inf, "ns/b")));
	assert_relist_difference(f, 2);
}

/* 3c. The same over objects read from their text alone (transform_text): every list item and
 * watch event, none parsed, the same events and the same difference. */
static void test_relist_from_text(void **state)
{
	struct fake *f = *state;
	f->text_stubs = 1;
	start(f, in_stream_410, 4, NULL);
	RUN_UNTIL(f, f->nreqs >= 4, WAIT_MS);
	assert_true(json_is_integer(informer_get(f->inf, "ns/a")));
	assert_true(json_is_string(informer_get(f->inf, "ns/b")));
	assert_relist_difference(f, 2);
	/* a, b, c listed; a modified; b and d relisted (a unchanged); the event after the 410
	 * never applied. */
	assert_int_equal(f->text_read, 3 + 1 + 2);
	assert_int_equal(f->tree_read, 0);
}

/* 3d. What the text can't say plainly is parsed: a name with an escape, and an object the text
 * reader refuses (the manager's: one that is not well-formed, which the parse reports). Both
 * are applied all the same, under the same keys. */
static void test_text_falls_back_to_parse(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 200,
		  LIST("10", "", OBJ("a", "3") "," OBJ("\\u0065", "4") "," OBJ("refuse", "5")) },
		{ 'W', 200,
		  EV("ADDED", "\\u0066", "11") EV("MODIFIED", "refuse", "12")
			  EV("DELETED", "a", "13") },
		{ 'W', 200, "" },
	};
	f->text_stubs = 1;
	f->text_refuses = "\"refuse\"";
	start(f, script, 3, NULL);
	RUN_UNTIL(f, f->nreqs >= 3, WAIT_MS);
	assert_true(find_event(f, 0, WATCH_ADDED, "ns/e") >= 0);
	assert_true(find_event(f, 0, WATCH_ADDED, "ns/f") >= 0);
	assert_true(find_event(f, 0, WATCH_MODIFIED, "ns/refuse") >= 0);
	assert_true(find_event(f, 0, WATCH_DELETED, "ns/a") >= 0);
	assert_int_equal(f->text_read, 1);
	assert_int_equal(f->tree_read, 4);
	assert_request_is_watch(f, 2, "13");
}

/* 4. The watch request itself answered with HTTP 410 Gone: the same relist. */
static void test_http_410_relists(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 200, LIST("10", "", OBJ("a", "3") "," OBJ("b", "4") "," OBJ("c", "5")) },
		{ 'W', 200, EV("MODIFIED", "a", "11") },
		{ 'W', 410, STATUS(410, "Expired") },
		{ 'L', 200, LIST("30", "", OBJ("a", "11") "," OBJ("b", "25") "," OBJ("d", "26")) },
		{ 'W', 200, "" },
	};
	start(f, script, 5, NULL);
	RUN_UNTIL(f, f->nreqs >= 5, WAIT_MS);

	assert_request_is_watch(f, 1, "10");
	assert_request_is_watch(f, 2, "11");
	assert_relist_difference(f, 3);
}

/* 5. HTTP 500 on a list and on a watch: each is retried after a backoff (0.8 s and up), not at
 * once, and the informer recovers without losing its place. */
static void test_http_500_backs_off(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 500, STATUS(500, "InternalError") },
		{ 'L', 200, LIST("10", "", OBJ("a", "3")) },
		{ 'W', 200, EV("ADDED", "b", "11") },
		{ 'W', 500, STATUS(500, "InternalError") },
		{ 'W', 200, EV("ADDED", "c", "12") },
	};
	start(f, script, 5, NULL);
	RUN_UNTIL(f, find_event(f, 0, WATCH_ADDED, "ns/c") >= 0, WAIT_MS);

	assert_request_is_list(f, 0, NULL);
	assert_false(f->reqs[1].synced);
	assert_request_is_list(f, 1, NULL);
	assert_gap_ms_at_least(f, 1, 400);
	assert_request_is_watch(f, 2, "10");
	assert_request_is_watch(f, 3, "11");
	assert_gap_ms_below(f, 3, 400); /* a watch that ended normally resumes at once */
	/* The failed watch is retried from where it was, not by relisting. */
	assert_request_is_watch(f, 4, "11");
	assert_gap_ms_at_least(f, 4, 400);

	assert_int_equal(f->synced_calls, 1);
	assert_int_equal(f->nevents, 3);
	assert_int_equal(json_object_size(informer_store(f->inf)), 3);
	assert_string_equal(stored_rv(f, "ns/c"), "12");
}

/* 5b. The backoff is capped low: after four failed lists in a row the next try still comes
 * within 4 s (2 s plus jitter; uncapped it would be 6.4 s or more), so an informer resumes
 * within seconds of the apiserver's return. */
static void test_backoff_capped(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 500, STATUS(500, "InternalError") },
		{ 'L', 500, STATUS(500, "InternalError") },
		{ 'L', 500, STATUS(500, "InternalError") },
		{ 'L', 500, STATUS(500, "InternalError") },
		{ 'L', 200, LIST("10", "", OBJ("a", "3")) },
	};
	start(f, script, 5, NULL);
	RUN_UNTIL(f, informer_synced(f->inf), 15000);
	for (size_t i = 1; i <= 4; i++) {
		assert_request_is_list(f, i, NULL);
		assert_gap_ms_below(f, i, 4100);
	}
	assert_gap_ms_at_least(f, 4, 1900);
}

static void on_limited_done(void *arg, const struct kube_response *resp)
{
	(void)resp;
	(*(int *)arg)++;
}

/* 5c. The client's rate limit (clientConnection qps and burst): a burst goes out at once, the
 * rest at qps, in order. */
static void test_client_rate_limit(void **state)
{
	struct fake *f = *state;
	int done = 0;
	kube_client_set_rate(f->client, 20, 5);
	for (int i = 0; i < 15; i++)
		assert_int_equal(kube_request(f->client, "GET", JOBS, NULL, NULL, on_limited_done,
					      &done, NULL),
				 0);
	RUN_UNTIL(f, done == 15, WAIT_MS);
	assert_int_equal(f->nreqs, 15);
	/* 10 requests beyond the burst at 20 a second: at least 0.5 s. */
	uint64_t span = f->reqs[14].at - f->reqs[0].at;
	if (span < 450 * MS)
		fail_msg("15 requests took %llu ms, want >= 450 at qps 20, burst 5",
			 (unsigned long long)(span / MS));
	assert_true(f->reqs[4].at - f->reqs[0].at < 200 * MS);
}

/* Open sockets of this process. */
static int count_sockets(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[300], target[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			n += !strncmp(target, "socket:", 7);
		}
	}
	closedir(d);
	return n;
}

/* 5d. A burst of requests doesn't open a connection each: at most KUBE_MAX_REQUESTS_IN_FLIGHT
 * are in flight (a burst of writes once held 8,000 TLS connections, 1.5 GB). */
static void test_client_caps_connections(void **state)
{
	struct fake *f = *state;
	int done = 0, before = count_sockets();
	for (int i = 0; i < 200; i++)
		assert_int_equal(kube_request(f->client, "GET", JOBS, NULL, NULL, on_limited_done,
					      &done, NULL),
				 0);
	RUN_UNTIL(f, done == 200, WAIT_MS);
	int after = count_sockets();
	/* Client and server ends of each kept connection, plus slack. */
	if (after - before > 2 * KUBE_MAX_REQUESTS_IN_FLIGHT + 4)
		fail_msg("%d sockets after 200 requests (%d before), want at most %d more", after,
			 before, 2 * KUBE_MAX_REQUESTS_IN_FLIGHT + 4);
}

/* 6. A malformed event line aborts that watch (events after it are not applied); the store
 * keeps what came before, and the next watch resumes from the last good event. */
static void test_malformed_line_restarts_watch(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 200, LIST("10", "", OBJ("a", "3")) },
		{ 'W', 200,
		  EV("ADDED", "b",
		     "11") "{\"type\":\"ADDED\",\"object\":{\"metad\n" EV("ADDED", "c", "12") },
		{ 'W', 200, EV("ADDED", "d", "13") },
		{ 'W', 200, "" },
	};
	start(f, script, 4, NULL);
	RUN_UNTIL(f, f->nreqs >= 4, WAIT_MS);

	assert_request_is_watch(f, 1, "10");
	assert_request_is_watch(f, 2, "11");
	assert_request_is_watch(f, 3, "13");
	assert_int_equal(find_event(f, 0, WATCH_ADDED, "ns/c"), -1);
	assert_true(find_event(f, 0, WATCH_ADDED, "ns/d") >= 0);
	assert_int_equal(f->nevents, 3);
	assert_int_equal(json_object_size(informer_store(f->inf)), 3);
	assert_string_equal(stored_rv(f, "ns/a"), "3");
	assert_string_equal(stored_rv(f, "ns/b"), "11");
	assert_null(informer_get(f->inf, "ns/c"));
	assert_int_equal(f->synced_calls, 1);
}

/* 7. The label selector is percent-encoded into every list page and every watch. */
static void test_label_selector_encoded(void **state)
{
	struct fake *f = *state;
	static const struct step script[] = {
		{ 'L', 200, LIST("10", "next", OBJ("a", "3")) },
		{ 'L', 200, LIST("10", "", OBJ("b", "4")) },
		{ 'W', 200, "" },
	};
	static const char want[] = "kueue.x-k8s.io%2Fqueue-name%20in%20%28a%2Cb%29%2C%21skip";
	start(f, script, 3, "kueue.x-k8s.io/queue-name in (a,b),!skip");
	RUN_UNTIL(f, f->nreqs >= 3, WAIT_MS);

	assert_request_is_list(f, 0, NULL);
	assert_request_is_list(f, 1, "next");
	assert_request_is_watch(f, 2, "10");
	for (size_t i = 0; i < 3; i++)
		if (!has_param(f->reqs[i].target, "labelSelector", want))
			fail_msg("request %zu lacks the encoded selector: %s", i,
				 f->reqs[i].target);
	assert_int_equal(json_object_size(informer_store(f->inf)), 2);
}

static int group_setup(void **state)
{
	(void)state;
	log_set_level(LOG_ERROR); /* the faults are deliberate: their warnings are noise here */
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	curl_global_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_paged_list_then_watch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_events_and_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_items_lose_managed_fields, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_many_pages_sliced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relist_pages_sliced_difference, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_page_relists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_stream_410_relists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relist_over_stubs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relist_from_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_falls_back_to_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_410_relists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_500_backs_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_rate_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_caps_connections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_line_restarts_watch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_label_selector_encoded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
