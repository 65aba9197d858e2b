/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/lease_thread.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/grow.h"
#include "util/log.h"

/* What the elector reported, queued for the main loop. */
enum lease_news { NEWS_STARTED, NEWS_STOPPED, NEWS_TAKEN, NEWS_RELEASED };

struct lease_thread {
	/* The lease thread's own: its loop, client and elector (made on the main thread before
	 * the thread starts, then touched by the lease thread only, but for the elector's atomic
	 * reads), and the main loop's requests to it. */
	uv_loop_t loop;
	struct kube_client *client;
	struct lease_elector *elector;
	uv_async_t command;
	_Atomic int release_asked, stop_asked;
	uv_thread_t thread;
	uint64_t ping_ns; /* uv_hrtime() of the main loop's oldest unanswered ping; 0: none */
	int wedged; /* the watchdog stopped renewals */
	uint64_t watchdog_ns; /* leaseDuration */

	/* The main loop's side: news from the elector, and the answers to pings. */
	uv_async_t news_async; /* on the main loop, unreferenced */
	uv_mutex_t news_lock; /* guards news, n_news, cap_news */
	enum lease_news *news;
	size_t n_news, cap_news;
	_Atomic uint64_t answered_ns; /* uv_hrtime() when the main loop last answered */
	_Atomic int releasing; /* lease_thread_release was called */
	void (*on_started)(void *arg);
	void (*on_stopped)(void *arg, int taken);
	void *arg;
	void (*released)(void *arg);
	void *released_arg;
	int stopped; /* lease_thread_stop: nothing more is delivered */
};

/* --- the lease thread ---------------------------------------------------------------------- */

/* Queues news for the main loop and wakes it. Out of memory, the news is lost, and the fence
 * (the atomics) still tells the truth; say so. */
static void tell(struct lease_thread *t, enum lease_news news)
{
	int rc;
	uv_mutex_lock(&t->news_lock);
	if ((rc = GROW(t->news, t->cap_news, t->n_news + 1)) == 0)
		t->news[t->n_news++] = news;
	uv_mutex_unlock(&t->news_lock);
	if (rc != 0)
		log_error("out of memory: leader election news is lost", LF_INT("news", news),
			  LF_END);
	uv_async_send(&t->news_async);
}

static void on_elector_started(void *arg)
{
	tell(arg, NEWS_STARTED);
}

static void on_elector_stopped(void *arg, int taken)
{
	tell(arg, taken ? NEWS_TAKEN : NEWS_STOPPED);
}

static void on_elector_released(void *arg)
{
	tell(arg, NEWS_RELEASED);
}

/* The watchdog (see the header): a ping answered, another goes out; one unanswered for
 * leaseDuration stops renewals until it is answered. */
static int main_loop_turns(void *arg)
{
	struct lease_thread *t = arg;
	uint64_t now = uv_hrtime(), answered = t->answered_ns;
	if (t->ping_ns == 0 || answered >= t->ping_ns) {
		if (t->wedged)
			log_info("the main loop turns again: Lease renewals resume", LF_END);
		t->wedged = 0;
		t->ping_ns = now;
		uv_async_send(&t->news_async);
		return 1;
	}
	if (now - t->ping_ns < t->watchdog_ns)
		return 1;
	if (!t->wedged)
		log_error("the main loop has not turned for longer than leaseDuration: Lease "
			  "renewals stop until it does",
			  LF_INT("unanswered_ms", (long long)((now - t->ping_ns) / 1000000)),
			  LF_INT("lease_duration_ms", (long long)(t->watchdog_ns / 1000000)),
			  LF_END);
	t->wedged = 1;
	return 0;
}

static void close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static void on_command(uv_async_t *h)
{
	struct lease_thread *t = h->data;
	if (atomic_exchange(&t->release_asked, 0))
		lease_elector_release(t->elector, on_elector_released, t);
	if (!t->stop_asked)
		return;
	lease_elector_stop(t->elector);
	kube_client_free(t->client);
	t->client = NULL;
	uv_close((uv_handle_t *)&t->command, NULL);
}

static void run(void *arg)
{
	struct lease_thread *t = arg;
	uv_run(&t->loop, UV_RUN_DEFAULT);
	/* What the client and the informer left closing, or unreferenced. */
	uv_walk(&t->loop, close_walk, NULL);
	uv_run(&t->loop, UV_RUN_DEFAULT);
}

/* --- the main loop -------------------------------------------------------------------------- */

static void on_news(uv_async_t *h)
{
	struct lease_thread *t = h->data;
	enum lease_news *news;
	size_t n;
	t->answered_ns = uv_hrtime(); /* the ping's answer */
	uv_mutex_lock(&t->news_lock);
	news = t->news;
	n = t->n_news;
	t->news = NULL;
	t->n_news = t->cap_news = 0;
	uv_mutex_unlock(&t->news_lock);
	for (size_t i = 0; i < n && !t->stopped; i++) {
		if (news[i] == NEWS_STARTED && t->on_started) {
			t->on_started(t->arg);
		} else if ((news[i] == NEWS_STOPPED || news[i] == NEWS_TAKEN) && t->on_stopped) {
			t->on_stopped(t->arg, news[i] == NEWS_TAKEN);
		} else if (news[i] == NEWS_RELEASED && t->released) {
			void (*done)(void *) = t->released;
			t->released = NULL;
			done(t->released_arg);
		}
	}
	free(news);
}

static void on_news_closed(uv_handle_t *h)
{
	struct lease_thread *t = h->data;
	uv_mutex_destroy(&t->news_lock);
	free(t->news);
	free(t);
}

int lease_thread_start(uv_loop_t *main_loop, const struct kube_config *cfg, long request_timeout_s,
		       const struct lease_options *opt, struct lease_thread **out)
{
	struct lease_thread *t = calloc(1, sizeof(*t));
	int rc;
	*out = NULL;
	if (!t)
		return -ENOMEM;
	if (opt->may_renew) {
		free(t);
		return -EINVAL;
	}
	t->on_started = opt->on_started;
	t->on_stopped = opt->on_stopped;
	t->arg = opt->arg;
	t->watchdog_ns = (uint64_t)opt->lease_duration_ms * 1000000u;
	struct lease_options own = *opt;
	own.on_started = on_elector_started;
	own.on_stopped = on_elector_stopped;
	own.may_renew = main_loop_turns;
	own.arg = t;
	if ((rc = uv_mutex_init(&t->news_lock)) != 0)
		goto fail_mutex;
	if ((rc = uv_loop_init(&t->loop)) != 0)
		goto fail_loop;
	if ((rc = kube_client_new(&t->loop, cfg, &t->client)) != 0)
		goto fail_client;
	kube_client_set_request_timeout(t->client, request_timeout_s);
	if ((rc = lease_elector_start(&t->loop, t->client, &own, &t->elector)) != 0)
		goto fail_elector;
	if ((rc = uv_async_init(&t->loop, &t->command, on_command)) != 0)
		goto fail_command;
	t->command.data = t;
	if ((rc = uv_async_init(main_loop, &t->news_async, on_news)) != 0)
		goto fail_news;
	t->news_async.data = t;
	uv_unref((uv_handle_t *)&t->news_async); /* it never keeps the main loop alive */
	if ((rc = uv_thread_create(&t->thread, run, t)) != 0)
		goto fail_thread;
	*out = t;
	return 0;

	/* Undone in reverse, on the main thread: the lease thread never ran. */
fail_thread:
	uv_close((uv_handle_t *)&t->news_async, on_news_closed);
	t->stop_asked = 1;
	on_command(&t->command);
	run(t);
	uv_loop_close(&t->loop);
	return rc; /* on_news_closed frees t when the main loop runs */
fail_news:
	uv_close((uv_handle_t *)&t->command, NULL);
fail_command:
	lease_elector_stop(t->elector);
fail_elector:
	kube_client_free(t->client);
fail_client:
	run(t);
	uv_loop_close(&t->loop);
fail_loop:
	uv_mutex_destroy(&t->news_lock);
fail_mutex:
	free(t);
	return rc;
}

int lease_thread_may_write(const struct lease_thread *t)
{
	return t && !t->releasing && lease_elector_may_write(t->elector);
}

int lease_thread_is_leader(const struct lease_thread *t)
{
	return t && lease_elector_is_leader(t->elector);
}

unsigned long lease_thread_lapses(const struct lease_thread *t)
{
	return t ? lease_elector_lapses(t->elector) : 0;
}

void lease_thread_release(struct lease_thread *t, void (*done)(void *arg), void *arg)
{
	t->released = done;
	t->released_arg = arg;
	t->releasing = 1;
	t->release_asked = 1;
	uv_async_send(&t->command);
}

void lease_thread_stop(struct lease_thread *t)
{
	if (!t)
		return;
	t->stopped = 1;
	t->stop_asked = 1;
	uv_async_send(&t->command);
	uv_thread_join(&t->thread);
	int rc = uv_loop_close(&t->loop);
	if (rc != 0)
		log_error("the lease thread's loop did not close", LF_INT("rc", rc), LF_END);
	uv_close((uv_handle_t *)&t->news_async, on_news_closed);
}
