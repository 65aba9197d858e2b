/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_cut.h"
#include "util/log.h"

#define LIST_PAGE 500
#define WATCH_TIMEOUT_MIN 300 /* seconds; randomised up to twice this, like client-go */
#define BACKOFF_START_MS 800
/* Capped low (client-go's reflector goes to 30 s): with jitter a retry comes at most 4 s after
 * the previous one, so admission resumes within 5 s of the apiserver answering again. A dozen
 * informers retrying every few seconds is no load for an apiserver that is back. */
#define BACKOFF_MAX_MS 2000
#define BUSY_RETRY_MS 1000
/* How long a loop turn may apply a list page's items for by default (wall time; at least one
 * item), what the controller's pump takes a turn (ctrl/internal.h): a page of 500 Workloads as
 * manager_scale.sh makes them took 150-300 ms of CPU parsed whole, too long to hold the loop. */
#define LIST_SLICE_DEFAULT_NS (10ull * 1000 * 1000)

struct informer {
	uv_loop_t *loop;
	struct kube_client *client;
	char *name, *path, *label_selector;
	informer_event_fn on_event;
	json_t *(*transform)(void *arg, json_t *obj, const char *text, size_t len);
	json_t *(*transform_text)(void *arg, const char *key, const char *rv, const char *text,
				  size_t len);
	void *arg;
	void (*on_synced)(void *arg, struct informer *inf);
	int wants_text; /* informer_options.wants_text */
	uint64_t list_slice_ns; /* informer_options.list_slice_ns, the default applied */

	json_t *store; /* key -> object */
	int listing; /* a list is in progress: its first page came */
	/* The keys it listed so far (key -> null), which finish_list keeps; NULL when the store
	 * was empty as it began (the first list): all the store will hold was listed. */
	json_t *listed;
	struct {
		char *items; /* a copy of its items array's text: each item is cut in place */
		size_t len, pos; /* the text's length, and how far its items were applied */
		char *rv, *cont; /* its resourceVersion, its continue token (NULL on the last) */
	} page; /* the list page being applied, over one or more loop turns; items NULL if none */
	char *resource_version; /* where the next watch starts */
	struct kube_call *call; /* the list page or watch in flight */
	struct framer framer;
	uv_timer_t retry;
	uv_idle_t page_more; /* runs while a page has items left to apply */
	int open_handles; /* of retry and page_more: the informer is freed when both closed */
	unsigned backoff_ms;
	int synced;
	int optional; /* a 404 list (the API is not served) is an empty, synced store */
	int absent; /* the last list answered 404 */
};

/* How often an optional informer asks again for an API that is not served (a CRD installed
 * later is picked up within this). */
#define ABSENT_RETRY_MS 15000

static void list_page(struct informer *inf, const char *cont);
static void start_watch(struct informer *inf);
static void page_close(struct informer *inf);
static void list_forget(struct informer *inf);
static void page_consume(struct informer *inf);

/* Never read, and often an object's largest part: cut from a watch event's object, and from
 * a listed object (the same path without "object"), before either is parsed. */
static const char *const managed_fields[] = { "object", "metadata", "managedFields", NULL };
static const char *const *const object_managed_fields = managed_fields + 1;

int informer_key(json_t *obj, char *buf, size_t size)
{
	json_t *meta = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	int n;
	if (!name)
		return -EINVAL;
	n = ns && *ns ? snprintf(buf, size, "%s/%s", ns, name) : snprintf(buf, size, "%s", name);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

/* An object's store key and resourceVersion read from its text (len bytes), for
 * transform_text: 0, or -1 when the text doesn't say them plainly (then it is parsed). */
static int text_key_rv(const char *text, size_t len, char *key, size_t size, char *rv,
		       size_t rv_size)
{
	static const char *const name_path[] = { "metadata", "name", NULL };
	static const char *const ns_path[] = { "metadata", "namespace", NULL };
	static const char *const rv_path[] = { "metadata", "resourceVersion", NULL };
	char name[300], ns[300];
	int n;
	if (json_member_string(text, len, name_path, name, sizeof(name)) != 0 ||
	    json_member_string(text, len, rv_path, rv, rv_size) != 0)
		return -1;
	size_t from, to;
	if (json_member_string(text, len, ns_path, ns, sizeof(ns)) != 0) {
		if (json_member_span(text, len, ns_path, &from, &to) == 0)
			return -1; /* there, but not plainly: parsed instead */
		ns[0] = '\0'; /* cluster-scoped */
	}
	n = ns[0] ? snprintf(key, size, "%s/%s", ns, name) : snprintf(key, size, "%s", name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* A kept object's resourceVersion: its metadata's, or itself when a transform keeps it alone
 * (informer_options.transform), as a string or, when it is a number, an integer written into
 * buf (size bytes). */
static const char *rv_of(json_t *obj, char *buf, size_t size)
{
	if (json_is_integer(obj)) {
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(obj));
		return buf;
	}
	if (json_is_string(obj))
		return json_string_value(obj);
	return json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

static void set_rv(struct informer *inf, const char *rv)
{
	char *copy = rv ? strdup(rv) : NULL;
	if (rv && !copy)
		return; /* keep the old one; a later event or relist brings it forward */
	free(inf->resource_version);
	inf->resource_version = copy;
}

static void on_retry(uv_timer_t *t)
{
	struct informer *inf = t->data;
	if (inf->resource_version)
		start_watch(inf);
	else
		list_page(inf, NULL);
}

/* Schedules the next attempt after an error. relist drops the resourceVersion. busy: the
 * apiserver answered 429 (a restarted one sheds load so while it warms up): it is up, so the
 * retry comes after about the second its Retry-After asks, as client-go's does, instead of
 * after a growing backoff. */
static void back_off(struct informer *inf, int relist, int busy, const char *why)
{
	unsigned delay = busy ? BUSY_RETRY_MS + (unsigned)(rand() % (BUSY_RETRY_MS / 2 + 1)) :
				inf->backoff_ms + (unsigned)(rand() % (int)(inf->backoff_ms + 1));
	log_warn("watch interrupted", LF_STR("resource", inf->name), LF_STR("reason", why),
		 LF_INT("retry_ms", delay), LF_INT("relist", relist), LF_END);
	if (relist)
		set_rv(inf, NULL);
	if (!busy)
		inf->backoff_ms = inf->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
									 inf->backoff_ms * 2;
	uv_timer_start(&inf->retry, on_retry, delay, 0);
}

static void emit(struct informer *inf, enum watch_event_type type, const char *key, json_t *old,
		 json_t *obj)
{
	if (inf->on_event)
		inf->on_event(inf->arg, inf, type, key, old, obj);
}

/* What the store keeps of obj: a new reference. */
static json_t *kept(struct informer *inf, json_t *obj, const char *text, size_t len)
{
	json_t *t = inf->transform ? inf->transform(inf->arg, obj, text, len) : NULL;
	return t ? t : json_incref(obj);
}

/* Applies an added or modified object (already as the store keeps it) and reports it. */
static void upsert(struct informer *inf, const char *key, json_t *obj)
{
	json_t *old = json_incref(json_object_get(inf->store, key));
	if (json_object_set(inf->store, key, obj) != 0) {
		json_decref(old);
		return;
	}
	emit(inf, old ? WATCH_MODIFIED : WATCH_ADDED, key, old, obj);
	json_decref(old);
}

static void remove_key(struct informer *inf, const char *key)
{
	char own[512]; /* keys come from informer_key into 512 bytes, so this never truncates */
	json_t *old = json_incref(json_object_get(inf->store, key));
	if (!old)
		return;
	/* key may be the store's own copy (finish_list iterates the store), which the deletion
	 * frees: report the event under a copy. */
	snprintf(own, sizeof(own), "%s", key);
	json_object_del(inf->store, own);
	emit(inf, WATCH_DELETED, own, old, old);
	json_decref(old);
}

/* Ends a completed list: objects in the store it didn't list are gone (the listed ones were
 * applied as their pages came). */
static void finish_list(struct informer *inf, const char *rv)
{
	const char *key;
	json_t *tmp;
	void *iter;

	/* Every listed key is in the store (list_item applied it or found it there): the store
	 * holds more only when something is gone, and the walk over a large store is skipped. */
	if (inf->listed && json_object_size(inf->store) > json_object_size(inf->listed))
		json_object_foreach_safe(inf->store, iter, key, tmp)
		{
			(void)tmp;
			if (!json_object_get(inf->listed, key))
				remove_key(inf, key);
		}
	list_forget(inf);
	set_rv(inf, rv);
	inf->backoff_ms = BACKOFF_START_MS; /* a whole list went through: the server is fine */
	if (!inf->synced) {
		inf->synced = 1;
		log_info("cache synced", LF_STR("resource", inf->name),
			 LF_INT("objects", (long long)json_object_size(inf->store)), LF_END);
		if (inf->on_synced)
			inf->on_synced(inf->arg, inf);
	}
	start_watch(inf);
}

static void list_forget(struct informer *inf)
{
	json_decref(inf->listed);
	inf->listed = NULL;
	inf->listing = 0;
}

/* A list (or a page of it) failed: what was listed so far is dropped, and the list starts
 * again after a backoff. The store keeps what the pages before applied: each was a real
 * state, and the next list reports the difference from it. */
static void list_failed(struct informer *inf, int busy, const char *why)
{
	page_close(inf);
	list_forget(inf);
	back_off(inf, 1, busy, why);
}

/* Takes in the list page at body: a copy, whose items are cut and parsed one at a time by
 * page_consume; its resourceVersion and continue token are read now. 0, -EPROTO when it isn't
 * a list, or -ENOMEM. */
static int page_open(struct informer *inf, const char *body, size_t len)
{
	static const char *const metadata[] = { "metadata", NULL };
	static const char *const items[] = { "items", NULL };
	size_t from, to;
	json_t *meta = NULL;
	int rc = -EPROTO;

	if (json_member_span(body, len, metadata, &from, &to) == 0)
		meta = json_loadb(body + from, to - from, 0, NULL);
	const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
	const char *cont = json_string_value(json_object_get(meta, "continue"));
	if (!rv || json_member_span(body, len, items, &from, &to) != 0)
		goto fail;
	rc = -ENOMEM;
	inf->page.rv = strdup(rv);
	inf->page.cont = cont && *cont ? strdup(cont) : NULL;
	inf->page.items = malloc(to - from + 1);
	if (!inf->page.rv || (cont && *cont && !inf->page.cont) || !inf->page.items)
		goto fail;
	memcpy(inf->page.items, body + from, to - from);
	inf->page.items[to - from] = '\0';
	inf->page.len = to - from;
	inf->page.pos = 0;
	if (!inf->listing) {
		inf->listing = 1;
		if (json_object_size(inf->store) && !(inf->listed = json_object()))
			goto fail;
	}
	json_decref(meta);
	return 0;
fail:
	page_close(inf);
	json_decref(meta);
	return rc;
}

static void page_close(struct informer *inf)
{
	free(inf->page.items);
	free(inf->page.rv);
	free(inf->page.cont);
	memset(&inf->page, 0, sizeof(inf->page));
}

/* One listed object read from its text alone (transform_text): as list_item. 0, or -1 when
 * it must be parsed instead (nothing was applied). */
static int list_item_text(struct informer *inf, const char *text, size_t len)
{
	char key[512], rv[128], old_buf[32];
	if (text_key_rv(text, len, key, sizeof(key), rv, sizeof(rv)) != 0)
		return -1;
	if (inf->listed && json_object_set_new(inf->listed, key, json_null()) != 0)
		return 0; /* out of memory: skipped, as list_item skips it */
	json_t *old = json_object_get(inf->store, key);
	const char *old_rv = old ? rv_of(old, old_buf, sizeof(old_buf)) : NULL;
	if (old_rv && !strcmp(old_rv, rv))
		return 0;
	json_t *keep = inf->transform_text(inf->arg, key, rv, text, len);
	if (!keep)
		return -1;
	upsert(inf, key, keep);
	json_decref(keep);
	return 0;
}

/* One listed object (obj, parsed from the len bytes at text): marked as listed, and applied
 * unless the store has it at the same resourceVersion, so a relist reports only what
 * changed. */
static void list_item(struct informer *inf, json_t *obj, const char *text, size_t len)
{
	char key[512];
	if (informer_key(obj, key, sizeof(key)) != 0 ||
	    (inf->listed && json_object_set_new(inf->listed, key, json_null()) != 0))
		return;
	json_t *old = json_object_get(inf->store, key);
	char old_buf[32], new_buf[32];
	const char *old_rv = old ? rv_of(old, old_buf, sizeof(old_buf)) : NULL;
	const char *new_rv = rv_of(obj, new_buf, sizeof(new_buf));
	if (old_rv && new_rv && !strcmp(old_rv, new_rv))
		return;
	json_t *keep = kept(inf, obj, inf->wants_text ? text : NULL, inf->wants_text ? len : 0);
	upsert(inf, key, keep);
	json_decref(keep);
}

static void on_page_more(uv_idle_t *idle)
{
	uv_idle_stop(idle);
	page_consume(idle->data);
}

/* Applies the open page's items, for at most list_slice_ns a turn: the rest wait for the
 * next turn (an idle handle, as the controller's pump: the loop polls for I/O without blocking
 * first; libuv 1.44 would run a timer of 0 ms started from a timer in the same turn), so a
 * page of large objects never holds the loop for long. The last item of a page asks for the next
 * page, or, of the last page, finishes the list. */
static void page_consume(struct informer *inf)
{
	uint64_t deadline = uv_hrtime() + inf->list_slice_ns;
	size_t from, to;
	int more;
	while ((more = json_array_next(inf->page.items, inf->page.len, &inf->page.pos, &from,
				       &to)) == 1) {
		/* Never read, and often the largest part of an object: cut before it is
		 * parsed, as from a watched object. */
		char *item = inf->page.items + from;
		size_t len = json_cut_member(item, to - from, object_managed_fields);
		if (inf->transform_text && list_item_text(inf, item, len) == 0)
			goto applied;
		json_t *obj = json_loadb(item, len, 0, NULL);
		if (!obj) {
			more = -1;
			break;
		}
		list_item(inf, obj, item, len);
		json_decref(obj);
	applied:
		if (uv_hrtime() >= deadline) {
			uv_idle_start(&inf->page_more, on_page_more);
			return;
		}
	}
	if (more != 0) {
		list_failed(inf, 0, "list response is not a list");
		return;
	}
	char *rv = inf->page.rv, *cont = inf->page.cont;
	inf->page.rv = inf->page.cont = NULL;
	page_close(inf);
	if (cont)
		list_page(inf, cont);
	else
		finish_list(inf, rv);
	free(rv);
	free(cont);
}

static void on_list(void *arg, const struct kube_response *resp)
{
	struct informer *inf = arg;
	inf->call = NULL;

	if (inf->optional && !resp->error && resp->status == 404) {
		/* The kind's CRD is not installed: nothing of it exists, so the cache is complete
		 * as it is; ask again now and then for when it is. */
		list_forget(inf);
		if (!inf->absent)
			log_info("resource not served; watching for it",
				 LF_STR("resource", inf->name), LF_INT("retry_ms", ABSENT_RETRY_MS),
				 LF_END);
		inf->absent = 1;
		if (!inf->synced) {
			inf->synced = 1;
			if (inf->on_synced)
				inf->on_synced(inf->arg, inf);
		}
		set_rv(inf, NULL);
		uv_timer_start(&inf->retry, on_retry, ABSENT_RETRY_MS, 0);
		return;
	}
	if (resp->error || resp->status != 200) {
		char why[256];
		snprintf(why, sizeof(why), "list failed: status %ld %s", resp->status,
			 resp->error_text);
		list_failed(inf, !resp->error && resp->status == 429, why);
		return;
	}
	int rc = page_open(inf, resp->body, resp->body_len);
	if (rc != 0) {
		list_failed(inf, 0,
			    rc == -ENOMEM ? "out of memory" : "list response is not a list");
		return;
	}
	if (inf->absent) {
		inf->absent = 0;
		log_info("resource served now", LF_STR("resource", inf->name), LF_END);
	}
	page_consume(inf);
}

static void list_page(struct informer *inf, const char *cont)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s?limit=%d", inf->path, LIST_PAGE);
	int rc = n < 0 || (size_t)n >= sizeof(path) ? -ENOSPC : 0;
	if (rc == 0 && inf->label_selector) {
		strcat(path, "&labelSelector=");
		rc = kube_escape(path, sizeof(path), inf->label_selector);
	}
	if (rc == 0 && cont) {
		strcat(path, "&continue=");
		rc = kube_escape(path, sizeof(path), cont);
	}
	/* Any failure to start is retried after a backoff: an informer never stops for good. */
	if (rc == 0)
		rc = kube_request(inf->client, "GET", path, NULL, NULL, on_list, inf, &inf->call);
	if (rc != 0)
		back_off(inf, 1, 0, "cannot start list");
}

/* A watch event whose object is read from its text alone (transform_text). 0, or -1 when it
 * must be parsed instead (nothing was applied). */
static int on_line_text(struct informer *inf, const char *line, size_t len)
{
	static const char *const type_path[] = { "type", NULL };
	static const char *const object_path[] = { "object", NULL };
	char type[16], key[512], rv[128];
	size_t from, to;
	if (json_member_string(line, len, type_path, type, sizeof(type)) != 0 ||
	    json_member_span(line, len, object_path, &from, &to) != 0 ||
	    text_key_rv(line + from, to - from, key, sizeof(key), rv, sizeof(rv)) != 0)
		return -1;
	if (!strcmp(type, "DELETED")) {
		remove_key(inf, key);
	} else if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED")) {
		json_t *obj = inf->transform_text(inf->arg, key, rv, line + from, to - from);
		if (!obj)
			return -1;
		upsert(inf, key, obj);
		json_decref(obj);
	} else {
		return -1; /* a bookmark or an error: parsed */
	}
	set_rv(inf, rv);
	return 0;
}

static int on_line(void *arg, char *line, size_t len)
{
	struct informer *inf = arg;
	struct watch_event ev;
	char key[512];

	static const char *const object[] = { "object", NULL };
	size_t from, to;
	/* Never read, and often the largest part of an object: cut before it is parsed. */
	len = json_cut_member(line, len, managed_fields);
	if (inf->transform_text && on_line_text(inf, line, len) == 0) {
		inf->backoff_ms = BACKOFF_START_MS;
		return 0;
	}
	if (watch_event_parse(line, len, &ev) != 0) {
		log_warn("malformed watch event", LF_STR("resource", inf->name), LF_END);
		return -EPROTO;
	}
	switch (ev.type) {
	case WATCH_ERROR:
		json_decref(ev.object);
		return ev.error_code == 410 ? -ESTALE : -EPROTO;
	case WATCH_BOOKMARK:
		set_rv(inf, ev.resource_version);
		break;
	case WATCH_ADDED:
	case WATCH_MODIFIED:
		if (informer_key(ev.object, key, sizeof(key)) == 0) {
			/* The object's own bytes, which parsed fine as part of the event. */
			int spans = inf->wants_text &&
				    json_member_span(line, len, object, &from, &to) == 0;
			json_t *obj = kept(inf, ev.object, spans ? line + from : NULL,
					   spans ? to - from : 0);
			upsert(inf, key, obj);
			json_decref(obj);
		}
		set_rv(inf, ev.resource_version);
		break;
	case WATCH_DELETED:
		if (informer_key(ev.object, key, sizeof(key)) == 0)
			remove_key(inf, key);
		set_rv(inf, ev.resource_version);
		break;
	}
	json_decref(ev.object);
	inf->backoff_ms = BACKOFF_START_MS;
	return 0;
}

static int on_watch_data(void *arg, const char *data, size_t len)
{
	struct informer *inf = arg;
	int rc = framer_feed(&inf->framer, data, len, on_line, inf);
	if (rc == -ESTALE)
		set_rv(inf, NULL); /* 410 inside the stream: the done callback relists */
	return rc;
}

static void on_watch_done(void *arg, const struct kube_response *resp)
{
	struct informer *inf = arg;
	inf->call = NULL;
	framer_release(&inf->framer);

	if (resp->status == 410 || !inf->resource_version) {
		/* Our resourceVersion is too old: list again and report the difference. */
		log_info("resourceVersion expired, relisting", LF_STR("resource", inf->name),
			 LF_END);
		set_rv(inf, NULL);
		list_page(inf, NULL);
		return;
	}
	if (resp->status == 200 && (resp->error == 0 || resp->error == -ETIMEDOUT)) {
		/* A watch that ends on its timeout is normal: resume where it stopped. */
		start_watch(inf);
		return;
	}
	char why[256];
	snprintf(why, sizeof(why), "watch failed: status %ld %s", resp->status, resp->error_text);
	back_off(inf, 0, !resp->error && resp->status == 429, why);
}

static void start_watch(struct informer *inf)
{
	char path[4096];
	long timeout = WATCH_TIMEOUT_MIN + rand() % WATCH_TIMEOUT_MIN;
	int n = snprintf(path, sizeof(path),
			 "%s?watch=1&allowWatchBookmarks=true&timeoutSeconds=%ld&resourceVersion=",
			 inf->path, timeout);
	int rc = n < 0 || (size_t)n >= sizeof(path) || !inf->resource_version ? -EINVAL : 0;
	if (rc == 0)
		rc = kube_escape(path, sizeof(path), inf->resource_version);
	if (rc == 0 && inf->label_selector) {
		strcat(path, "&labelSelector=");
		rc = kube_escape(path, sizeof(path), inf->label_selector);
	}
	framer_init(&inf->framer, FRAMER_MAX_LINE);
	/* Our own deadline sits past the server's, so a silently dead connection is replaced. */
	if (rc == 0)
		rc = kube_stream(inf->client, path, timeout + 30, on_watch_data, on_watch_done, inf,
				 &inf->call);
	if (rc != 0)
		back_off(inf, 0, 0, "cannot start watch");
}

int informer_start(uv_loop_t *loop, struct kube_client *client, const struct informer_options *opt,
		   struct informer **out)
{
	struct informer *inf = calloc(1, sizeof(*inf));
	*out = NULL;
	if (!inf)
		return -ENOMEM;
	inf->loop = loop;
	inf->client = client;
	inf->name = strdup(opt->name);
	inf->path = strdup(opt->path);
	inf->label_selector = opt->label_selector ? strdup(opt->label_selector) : NULL;
	inf->on_event = opt->on_event;
	inf->transform = opt->transform;
	inf->transform_text = opt->transform ? opt->transform_text : NULL;
	inf->wants_text = opt->wants_text;
	inf->list_slice_ns = opt->list_slice_ns ? opt->list_slice_ns : LIST_SLICE_DEFAULT_NS;
	inf->arg = opt->arg;
	inf->on_synced = opt->on_synced;
	inf->optional = opt->optional;
	inf->store = json_object();
	inf->backoff_ms = BACKOFF_START_MS;
	if (!inf->name || !inf->path || !inf->store ||
	    (opt->label_selector && !inf->label_selector)) {
		free(inf->name);
		free(inf->path);
		free(inf->label_selector);
		json_decref(inf->store);
		free(inf);
		return -ENOMEM;
	}
	uv_timer_init(loop, &inf->retry);
	uv_idle_init(loop, &inf->page_more);
	inf->retry.data = inf->page_more.data = inf;
	inf->open_handles = 2;
	list_page(inf, NULL);
	*out = inf;
	return 0;
}

static void on_handle_closed(uv_handle_t *h)
{
	struct informer *inf = h->data;
	if (--inf->open_handles == 0)
		free(inf);
}

void informer_stop(struct informer *inf)
{
	if (!inf)
		return;
	if (inf->call)
		kube_call_cancel(inf->call);
	framer_release(&inf->framer);
	json_decref(inf->store);
	list_forget(inf);
	page_close(inf);
	free(inf->resource_version);
	free(inf->name);
	free(inf->path);
	free(inf->label_selector);
	uv_close((uv_handle_t *)&inf->retry, on_handle_closed);
	uv_close((uv_handle_t *)&inf->page_more, on_handle_closed);
}

int informer_synced(const struct informer *inf)
{
	return inf->synced;
}

json_t *informer_get(const struct informer *inf, const char *key)
{
	return json_object_get(inf->store, key);
}

json_t *informer_store(const struct informer *inf)
{
	return inf->store;
}
