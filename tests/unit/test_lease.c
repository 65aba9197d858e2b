/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Leader election on its own thread (kube/lease_thread.h), against a Lease served by the fake
 * apiserver on a thread of its own too, so the test's (main) loop can be blocked as a long pump
 * pass would block the manager's: renewals go on, the watchdog gives the Lease up when the main
 * loop is wedged past leaseDuration, lapses are counted, release and teardown cross threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "fake_apiserver.h"
#include "kube/lease_thread.h"
#include "util/log.h"

#define LEASES "/apis/coordination.k8s.io/v1/namespaces/ns/leases"
#define LEASE LEASES "/lock"
#define MS (1000ull * 1000)

/* Short durations: leaseDuration 3 s, renewDeadline 1 s, retry period 100 ms. */
#define LEASE_MS 3000
#define DEADLINE_MS 1000
#define RETRY_MS 100

/* The Lease, as the server thread keeps it (touched on that thread only but for the atomics). */
struct server {
	uv_loop_t loop;
	uv_async_t stop;
	uv_thread_t thread;
	struct fake_api *api;
	json_t *lease; /* NULL: none */
	long long rv;
	_Atomic int puts; /* successful writes */
	_Atomic int steal; /* the next request finds the Lease held by "other" */
	_Atomic int released; /* a write named no holder */
	_Atomic int watch_once; /* the next watch brings the Lease as it is, then ends */
};

static json_t *lease_list(struct server *s)
{
	json_t *items = json_array();
	if (s->lease)
		json_array_append(items, s->lease);
	char rv[32];
	snprintf(rv, sizeof(rv), "%lld", s->rv);
	return json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", "LeaseList", "apiVersion",
			 "coordination.k8s.io/v1", "metadata", "resourceVersion", rv, "items",
			 items);
}

static void answer(struct httpd_response *resp, int status, json_t *obj)
{
	resp->status = status;
	resp->content_type = "application/json";
	resp->body = obj ? json_dumps(obj, JSON_COMPACT) : strdup("{}");
	resp->body_len = strlen(resp->body);
}

/* Stores body as the Lease with a new resourceVersion. */
static void keep(struct server *s, json_t *body)
{
	char rv[32];
	snprintf(rv, sizeof(rv), "%lld", ++s->rv);
	json_object_set_new(json_object_get(body, "metadata"), "resourceVersion", json_string(rv));
	json_decref(s->lease);
	s->lease = json_incref(body);
	s->puts++;
	const char *holder =
		json_string_value(json_object_get(json_object_get(body, "spec"), "holderIdentity"));
	if (holder && !*holder)
		s->released = 1;
}

static void on_request(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	struct server *s = arg;
	json_t *body = req->body_len ? json_loadb(req->body, req->body_len, 0, NULL) : NULL;
	if (s->lease && atomic_exchange(&s->steal, 0)) {
		char rv[32];
		snprintf(rv, sizeof(rv), "%lld", ++s->rv);
		json_object_set_new(json_object_get(s->lease, "spec"), "holderIdentity",
				    json_string("other"));
		json_object_set_new(json_object_get(s->lease, "metadata"), "resourceVersion",
				    json_string(rv));
	}
	if (!strcmp(req->method, "GET") && strstr(req->query, "watch=") && s->lease &&
	    atomic_exchange(&s->watch_once, 0)) {
		json_t *ev = json_pack("{s:s, s:O}", "type", "MODIFIED", "object", s->lease);
		char *text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
		size_t n = text ? strlen(text) : 0;
		resp->status = 200;
		resp->content_type = "application/json";
		resp->body = text ? realloc(text, n + 2) : NULL;
		if (resp->body) {
			memcpy(resp->body + n, "\n", 2);
			n++;
		} else {
			free(text);
		}
		resp->body_len = resp->body ? n : 0;
		json_decref(ev);
	} else if (!strcmp(req->method, "GET") && strstr(req->query, "watch=")) {
		answer(resp, 500, NULL); /* no watch: the elector sees its own writes' answers */
	} else if (!strcmp(req->method, "GET") && !strcmp(req->path, LEASES)) {
		json_t *list = lease_list(s);
		answer(resp, 200, list);
		json_decref(list);
	} else if (!strcmp(req->method, "GET") && !strcmp(req->path, LEASE)) {
		answer(resp, s->lease ? 200 : 404, s->lease);
	} else if (!strcmp(req->method, "POST") && !strcmp(req->path, LEASES) && body) {
		if (s->lease) {
			answer(resp, 409, NULL);
		} else {
			keep(s, body);
			answer(resp, 201, s->lease);
		}
	} else if (!strcmp(req->method, "PUT") && !strcmp(req->path, LEASE) && body) {
		const char *rv = json_string_value(
			json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
		char now[32];
		snprintf(now, sizeof(now), "%lld", s->rv);
		if (!s->lease) {
			answer(resp, 404, NULL);
		} else if (!rv || strcmp(rv, now) != 0) {
			answer(resp, 409, NULL);
		} else {
			keep(s, body);
			answer(resp, 200, s->lease);
		}
	} else {
		answer(resp, 400, NULL);
	}
	json_decref(body);
}

static void on_server_stop(uv_async_t *h)
{
	struct server *s = h->data;
	fake_api_stop(s->api);
	uv_close((uv_handle_t *)&s->stop, NULL);
}

static void server_run(void *arg)
{
	struct server *s = arg;
	uv_run(&s->loop, UV_RUN_DEFAULT);
}

/* What the main loop was told. */
struct t {
	uv_loop_t loop;
	struct server server;
	struct lease_thread *lt;
	int started, stopped, taken, released;
};

static void on_started(void *arg)
{
	((struct t *)arg)->started++;
}

static void on_stopped(void *arg, int taken)
{
	struct t *t = arg;
	t->stopped++;
	t->taken += taken;
}

static void on_released(void *arg)
{
	((struct t *)arg)->released++;
}

static int setup(void **state)
{
	struct t *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	assert_int_equal(uv_loop_init(&t->loop), 0);
	struct server *s = &t->server;
	assert_int_equal(uv_loop_init(&s->loop), 0);
	assert_int_equal(fake_api_start(&s->loop, on_request, s, &s->api), 0);
	assert_int_equal(uv_async_init(&s->loop, &s->stop, on_server_stop), 0);
	s->stop.data = s;
	assert_int_equal(uv_thread_create(&s->thread, server_run, s), 0);
	struct kube_config cfg = { .server = (char *)fake_api_url(s->api) };
	struct lease_options lo = { .namespace_name = "ns",
				    .name = "lock",
				    .identity = "me",
				    .lease_duration_ms = LEASE_MS,
				    .renew_deadline_ms = DEADLINE_MS,
				    .retry_period_ms = RETRY_MS,
				    .on_started = on_started,
				    .on_stopped = on_stopped,
				    .arg = t };
	assert_int_equal(lease_thread_start(&t->loop, &cfg, 1, &lo, &t->lt), 0);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct t *t = *state;
	lease_thread_stop(t->lt); /* joins the lease thread */
	uint64_t deadline = uv_hrtime() + 2000 * MS;
	while (uv_run(&t->loop, UV_RUN_NOWAIT) && uv_hrtime() < deadline)
		;
	assert_int_equal(uv_loop_close(&t->loop), 0);
	struct server *s = &t->server;
	uv_async_send(&s->stop);
	uv_thread_join(&s->thread);
	uv_run(&s->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&s->loop), 0);
	json_decref(s->lease);
	free(t);
	return 0;
}

static void on_tick(uv_timer_t *h)
{
	(void)h;
}

/* Runs the main loop until *flag is at least want, or ms pass. */
static void run_until(struct t *t, int *flag, int want, unsigned ms)
{
	uv_timer_t tick;
	uv_timer_init(&t->loop, &tick);
	uv_timer_start(&tick, on_tick, 5, 5);
	uint64_t deadline = uv_hrtime() + ms * MS;
	while (*flag < want && uv_hrtime() < deadline)
		uv_run(&t->loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&tick, NULL);
	uv_run(&t->loop, UV_RUN_NOWAIT);
}

static void lead(struct t *t)
{
	run_until(t, &t->started, 1, 5000);
	assert_int_equal(t->started, 1);
	assert_true(lease_thread_is_leader(t->lt));
	assert_true(lease_thread_may_write(t->lt));
}

/* The main loop blocked past renewDeadline (as one long pump pass would): the lease thread
 * renewed meanwhile, so the fence stayed open, and no lapse was counted or reported. */
static void test_renews_while_main_loop_blocked(void **state)
{
	struct t *t = *state;
	lead(t);
	int before = t->server.puts;
	usleep(2 * DEADLINE_MS * 1000); /* past renewDeadline, within leaseDuration */
	assert_true(lease_thread_may_write(t->lt));
	assert_true(t->server.puts - before >= 5); /* renewals every 100 ms went on */
	assert_int_equal(lease_thread_lapses(t->lt), 0);
	run_until(t, &t->stopped, 1, 300);
	assert_int_equal(t->stopped, 0);
	assert_int_equal(t->started, 1);
}

/* The main loop wedged past leaseDuration: the watchdog stops renewals, so the lead lapses
 * renewDeadline later (counted, the fence closed at once, on_stopped delivered when the loop
 * turns again); then the main loop answers and the record, still ours, is renewed again. */
static void test_watchdog_gives_up_when_wedged(void **state)
{
	struct t *t = *state;
	lead(t);
	usleep((LEASE_MS + DEADLINE_MS + 5 * RETRY_MS) * 1000);
	assert_false(lease_thread_may_write(t->lt));
	assert_false(lease_thread_is_leader(t->lt));
	assert_int_equal(lease_thread_lapses(t->lt), 1);
	assert_int_equal(t->stopped, 0); /* the main loop has not turned yet */
	run_until(t, &t->started, 2, 3000);
	assert_int_equal(t->stopped, 1);
	assert_int_equal(t->taken, 0);
	assert_int_equal(t->started, 2);
	assert_true(lease_thread_may_write(t->lt));
	assert_int_equal(lease_thread_lapses(t->lt), 1);
}

/* Another replica takes the Lease: one lapse, reported as taken. */
static void test_taken_is_a_lapse(void **state)
{
	struct t *t = *state;
	lead(t);
	t->server.steal = 1;
	run_until(t, &t->stopped, 1, 3000);
	assert_int_equal(t->stopped, 1);
	assert_int_equal(t->taken, 1);
	assert_int_equal(lease_thread_lapses(t->lt), 1);
	assert_false(lease_thread_may_write(t->lt));
}

/* Release: writes stop at once, the Lease is given up on the lease thread, and done runs on
 * the main loop. */
static void test_release_across_threads(void **state)
{
	struct t *t = *state;
	lead(t);
	lease_thread_release(t->lt, on_released, t);
	assert_false(lease_thread_may_write(t->lt));
	run_until(t, &t->released, 1, 3000);
	assert_int_equal(t->released, 1);
	assert_int_equal(lease_thread_lapses(t->lt), 0);
	assert_true(t->server.released); /* the record names nobody */
	/* The freed Lease comes back through the watch: a releasing elector must not take it
	 * again, or the next leader waits out leaseDuration. */
	int puts = t->server.puts, never = 0;
	t->server.watch_once = 1;
	run_until(t, &never, 1, 2 * LEASE_MS / 3 + 500);
	assert_int_equal(t->server.puts, puts);
	assert_int_equal(t->started, 1);
}

int main(void)
{
	log_set_level(getenv("T_DEBUG") ? LOG_DEBUG : LOG_ERROR + 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_renews_while_main_loop_blocked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_watchdog_gives_up_when_wedged, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_taken_is_a_lapse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_across_threads, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
