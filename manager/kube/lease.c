/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/lease.h"

#include <errno.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "kube/watch.h"
#include "util/log.h"

struct lease_elector {
	struct kube_client *client;
	struct informer *informer;
	char *ns, *name, *identity;
	char collection[320], object[400];
	int64_t duration_ms, renew_deadline_ms, retry_ms;
	void (*on_started)(void *arg);
	void (*on_stopped)(void *arg, int taken);
	void *arg;
	uv_timer_t timer;
	struct kube_call *call; /* the one write or read in flight, or NULL */
	uint64_t call_sent_ms; /* mono_ms() when it was sent */

	/* The record as last seen (watch or our own write's answer). */
	int synced; /* the informer listed once: `exists` is known */
	int exists;
	char holder[254];
	char rv[64];
	int64_t holder_duration_ms;
	long long transitions;
	char acquire_time[40];
	uint64_t observed_ms; /* mono_ms() when the record last changed */

	/* Written on the elector's loop, read by lease_elector_may_write and _is_leader from any
	 * thread. */
	_Atomic int leader;
	_Atomic uint64_t renewed_ms; /* mono_ms() when our last successful write was sent */
	_Atomic int releasing; /* lease_elector_release was called: no writes may follow */
	_Atomic unsigned long lapses; /* times we led and lost it */
	int (*may_renew)(void *arg);
	void (*released)(void *arg); /* lease_elector_release in progress */
	void *released_arg;
	int stopping; /* freed once the timer handle has closed */
};

/* The loop's cached uv_now can be a long callback behind: the fence must not trust it. */
static uint64_t mono_ms(void)
{
	return uv_hrtime() / 1000000u;
}

static int64_t wall_now_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

void lease_format_micro_time(int64_t ms, char *buf, size_t size)
{
	time_t s = (time_t)(ms / 1000);
	unsigned micros = (unsigned)(ms % 1000) * 1000u % 1000000u;
	struct tm tm;
	size_t n;
	gmtime_r(&s, &tm);
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	if (n == 0 || (size_t)snprintf(buf + n, size - n, ".%06uZ", micros) >= size - n)
		snprintf(buf, size, "%s", ""); /* too small a buffer: nothing half-written */
}

static void tick(struct lease_elector *e);

static void on_timer(uv_timer_t *t)
{
	tick(t->data);
}

static void schedule(struct lease_elector *e, uint64_t delay_ms)
{
	if (!e->stopping)
		uv_timer_start(&e->timer, on_timer, delay_ms, 0);
}

static int is_holder(const struct lease_elector *e)
{
	return e->exists && !strcmp(e->holder, e->identity);
}

/* Takes in a Lease object (from the watch or a write's answer): the record, and when it last
 * changed on our clock. */
static void observe(struct lease_elector *e, json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec");
	const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
	const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
	const char *acquired = json_string_value(json_object_get(spec, "acquireTime"));
	json_t *duration = json_object_get(spec, "leaseDurationSeconds");
	if (!rv)
		return;
	if (e->exists && !strcmp(rv, e->rv))
		return; /* nothing new: the expiry clock keeps running */
	e->exists = 1;
	snprintf(e->rv, sizeof(e->rv), "%s", rv);
	snprintf(e->holder, sizeof(e->holder), "%s", holder ? holder : "");
	snprintf(e->acquire_time, sizeof(e->acquire_time), "%s", acquired ? acquired : "");
	e->holder_duration_ms = json_is_integer(duration) && json_integer_value(duration) > 0 ?
					json_integer_value(duration) * 1000 :
					e->duration_ms;
	e->transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
	e->observed_ms = mono_ms();
}

static void lose(struct lease_elector *e, const char *why, int taken)
{
	if (!e->leader)
		return;
	e->leader = 0;
	e->lapses++;
	log_error("leader election lost", LF_STR("lease", e->name), LF_STR("reason", why),
		  LF_STR("holder", e->holder), LF_END);
	if (e->on_stopped)
		e->on_stopped(e->arg, taken);
}

static void on_watch(void *arg, struct informer *inf, enum watch_event_type type, const char *key,
		     json_t *old, json_t *obj)
{
	struct lease_elector *e = arg;
	const char *name =
		json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	(void)inf;
	(void)key;
	(void)old;
	if (!name || strcmp(name, e->name) != 0)
		return;
	if (type == WATCH_DELETED) {
		e->exists = 0;
		e->holder[0] = e->rv[0] = '\0';
		e->observed_ms = mono_ms();
	} else {
		observe(e, obj);
	}
	if (e->leader && !is_holder(e))
		lose(e,
		     type == WATCH_DELETED ? "the Lease was deleted" :
					     "another replica holds the Lease",
		     type != WATCH_DELETED);
	if (!e->leader && !e->call)
		tick(e); /* a follower decides at once: free now, or when it expires */
}

static void on_synced(void *arg, struct informer *inf)
{
	struct lease_elector *e = arg;
	(void)inf;
	e->synced = 1;
	if (!e->call)
		tick(e);
}

static void on_write(void *arg, const struct kube_response *resp);
static void on_read(void *arg, const struct kube_response *resp);

/* PUT (or POST when the Lease does not exist) a record with holder; "" releases. */
static int send_record(struct lease_elector *e, const char *holder)
{
	char now[40];
	int taking = strcmp(holder, e->holder) != 0 || !e->exists;
	lease_format_micro_time(wall_now_ms(), now, sizeof(now));
	json_t *obj =
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:I, s:s, s:s, s:I}}", "apiVersion",
			  "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", e->name,
			  "namespace", e->ns, "spec", "holderIdentity", holder,
			  "leaseDurationSeconds", (json_int_t)(*holder ? e->duration_ms / 1000 : 1),
			  "acquireTime", taking || !e->acquire_time[0] ? now : e->acquire_time,
			  "renewTime", now, "leaseTransitions",
			  (json_int_t)(e->transitions + (taking && e->exists && *holder ? 1 : 0)));
	if (obj && e->exists)
		json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion",
				    json_string(e->rv));
	char *body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	json_decref(obj);
	if (!body)
		return -ENOMEM;
	e->call_sent_ms = mono_ms();
	int rc = kube_request(e->client, e->exists ? "PUT" : "POST",
			      e->exists ? e->object : e->collection, "application/json", body,
			      on_write, e, &e->call);
	free(body);
	return rc;
}

static void tick(struct lease_elector *e)
{
	uint64_t now = mono_ms();
	/* Once releasing, never campaign again: the freed Lease's own watch event would otherwise
	 * take it back, and the next leader would wait out leaseDuration. */
	if (e->stopping || e->releasing || e->released || e->call)
		return;
	if (e->leader) {
		/* Then try on: the record may still name us (below). */
		if (now - e->renewed_ms >= (uint64_t)e->renew_deadline_ms)
			lose(e, "no renewal succeeded within renewDeadline", 0);
		if (e->stopping)
			return;
	} else if (!e->synced) {
		return;
	} else if (e->exists && e->holder[0] && !is_holder(e)) {
		uint64_t expiry = e->observed_ms + (uint64_t)e->holder_duration_ms;
		if (now < expiry) {
			schedule(e, expiry - now + 1);
			return;
		}
	}
	if (e->may_renew && !e->may_renew(e->arg)) {
		schedule(e, (uint64_t)e->retry_ms);
		return;
	}
	if (send_record(e, e->identity) != 0) {
		e->call = NULL;
		schedule(e, (uint64_t)e->retry_ms);
	}
}

static void on_write(void *arg, const struct kube_response *resp)
{
	struct lease_elector *e = arg;
	e->call = NULL;
	if (resp->error == -ECANCELED)
		return;
	json_t *obj = resp->status >= 200 && resp->status < 300 ?
			      json_loadb(resp->body, resp->body_len, 0, NULL) :
			      NULL;
	if (obj) {
		observe(e, obj);
		json_decref(obj);
	}
	if (e->released) {
		void (*done)(void *) = e->released;
		e->released = NULL;
		if (!obj)
			log_warn("could not release the Lease", LF_STR("lease", e->name),
				 LF_INT("status", resp->status), LF_STR("error", resp->error_text),
				 LF_END);
		done(e->released_arg);
		return;
	}
	if (obj && is_holder(e)) {
		e->renewed_ms = e->call_sent_ms;
		if (!e->leader) {
			e->leader = 1;
			log_info("became the leader", LF_STR("lease", e->name),
				 LF_STR("identity", e->identity),
				 LF_INT("transitions", e->transitions), LF_END);
			if (e->on_started)
				e->on_started(e->arg);
		}
		schedule(e, (uint64_t)e->retry_ms);
		return;
	}
	if (resp->status == 409) {
		/* Someone wrote first: read the record now rather than wait for the watch. */
		if (kube_request(e->client, "GET", e->object, NULL, NULL, on_read, e, &e->call) ==
		    0)
			return;
		e->call = NULL;
	} else if (resp->error || resp->status >= 300) {
		log_warn("Lease write failed", LF_STR("lease", e->name),
			 LF_INT("status", resp->status), LF_STR("error", resp->error_text), LF_END);
	}
	schedule(e, (uint64_t)e->retry_ms);
}

static void on_read(void *arg, const struct kube_response *resp)
{
	struct lease_elector *e = arg;
	e->call = NULL;
	if (resp->error == -ECANCELED)
		return;
	if (resp->status == 404) {
		e->exists = 0;
		e->holder[0] = e->rv[0] = '\0';
	} else if (resp->status == 200) {
		json_t *obj = json_loadb(resp->body, resp->body_len, 0, NULL);
		observe(e, obj);
		json_decref(obj);
	}
	if (e->leader && !is_holder(e) && resp->status < 300) {
		lose(e, "another replica holds the Lease", 1);
		return;
	}
	if (e->leader)
		tick(e); /* renew now, with the fresh resourceVersion */
	else
		schedule(e, 0);
}

int lease_elector_start(uv_loop_t *loop, struct kube_client *client,
			const struct lease_options *opt, struct lease_elector **out)
{
	struct lease_elector *e = calloc(1, sizeof(*e));
	int rc = -ENOMEM;
	*out = NULL;
	if (!e)
		return -ENOMEM;
	e->client = client;
	e->duration_ms = opt->lease_duration_ms;
	e->renew_deadline_ms = opt->renew_deadline_ms;
	e->retry_ms = opt->retry_period_ms;
	e->on_started = opt->on_started;
	e->on_stopped = opt->on_stopped;
	e->may_renew = opt->may_renew;
	e->arg = opt->arg;
	if (!(e->ns = strdup(opt->namespace_name)) || !(e->name = strdup(opt->name)) ||
	    !(e->identity = strdup(opt->identity)))
		goto fail;
	/* .../namespaces/NS/leases, and the object under it (names escaped). */
	snprintf(e->collection, sizeof(e->collection), "/apis/coordination.k8s.io/v1/namespaces/");
	if ((rc = kube_escape(e->collection, sizeof(e->collection), e->ns)) != 0)
		goto fail;
	rc = -ENOSPC;
	if (strlen(e->collection) + sizeof("/leases") > sizeof(e->collection))
		goto fail;
	strcat(e->collection, "/leases");
	/* object is larger than collection, so this fits. */
	snprintf(e->object, sizeof(e->object), "%s/", e->collection);
	if ((rc = kube_escape(e->object, sizeof(e->object), e->name)) != 0)
		goto fail;
	struct informer_options io = { .name = "leases",
				       .path = e->collection,
				       .on_event = on_watch,
				       .on_synced = on_synced,
				       .arg = e };
	/* The informer's callbacks run from the loop only, after the timer exists. */
	if ((rc = informer_start(loop, client, &io, &e->informer)) != 0)
		goto fail;
	uv_timer_init(loop, &e->timer);
	e->timer.data = e;
	*out = e;
	return 0;

fail:
	free(e->ns);
	free(e->name);
	free(e->identity);
	free(e);
	return rc;
}

int lease_elector_is_leader(const struct lease_elector *e)
{
	return e && e->leader;
}

int lease_elector_may_write(const struct lease_elector *e)
{
	return e && e->leader && !e->releasing &&
	       mono_ms() - e->renewed_ms < (uint64_t)e->renew_deadline_ms;
}

unsigned long lease_elector_lapses(const struct lease_elector *e)
{
	return e ? e->lapses : 0;
}

void lease_elector_release(struct lease_elector *e, void (*done)(void *arg), void *arg)
{
	int was_leader = e->leader;
	e->releasing = 1;
	uv_timer_stop(&e->timer);
	e->leader = 0;
	if (e->call) {
		kube_call_cancel(e->call);
		e->call = NULL;
	}
	if (!was_leader || !is_holder(e)) {
		done(arg);
		return;
	}
	e->released = done;
	e->released_arg = arg;
	if (send_record(e, "") != 0) {
		e->call = NULL;
		e->released = NULL;
		done(arg);
		return;
	}
	log_info("releasing the Lease", LF_STR("lease", e->name), LF_END);
}

static void on_timer_closed(uv_handle_t *h)
{
	struct lease_elector *e = h->data;
	free(e->ns);
	free(e->name);
	free(e->identity);
	free(e);
}

void lease_elector_stop(struct lease_elector *e)
{
	if (!e)
		return;
	e->stopping = 1;
	e->released = NULL;
	if (e->call)
		kube_call_cancel(e->call);
	e->call = NULL;
	informer_stop(e->informer);
	e->informer = NULL;
	uv_timer_stop(&e->timer);
	uv_close((uv_handle_t *)&e->timer, on_timer_closed);
}
