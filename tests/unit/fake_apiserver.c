/* SPDX-License-Identifier: Apache-2.0 */
/* The fake apiserver of fake_apiserver.h. */
#include "fake_apiserver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EVENTS 4096

struct fake_api {
	uv_loop_t *loop;
	struct httpd *srv;
	int port;
	char url[64];
	char *cert_pem, *key_pem; /* owned; NULL: plain HTTP */
	fake_api_responder responder;
	void *arg;
	json_t *store; /* object path -> object */
	uint64_t rv; /* the last resourceVersion handed out */
	uint64_t uid;
	struct fake_request log[FAKE_API_MAX_LOG];
	size_t nlog; /* every request, including those past the log's end */
	struct fake_event events[MAX_EVENTS];
	size_t ev_head, ev_len;
	/* the fault rule */
	char fail_method[8];
	char fail_prefix[512];
	int fail_status, fail_left;
};

void fake_merge_patch(json_t *target, json_t *patch)
{
	const char *k;
	json_t *v;
	json_object_foreach(patch, k, v)
	{
		json_t *have = json_object_get(target, k);
		if (json_is_null(v))
			json_object_del(target, k);
		else if (json_is_object(v) && json_is_object(have))
			fake_merge_patch(have, v);
		else if (json_is_object(v)) {
			json_t *fresh = json_object();
			fake_merge_patch(fresh, v);
			json_object_set_new(target, k, fresh);
		} else
			json_object_set(target, k, v);
	}
}

/* A server-side apply as far as the tests need it: fields merge as in a merge patch, and a list
 * of conditions merges by type (the apply's entries replace those of the same type, the others
 * stay). Field ownership is not modelled: nothing the apply leaves out is removed. */
static void fake_apply(json_t *target, json_t *config)
{
	const char *k;
	json_t *v;
	json_object_foreach(config, k, v)
	{
		json_t *have = json_object_get(target, k);
		if (json_is_object(v) && json_is_object(have)) {
			fake_apply(have, v);
		} else if (!strcmp(k, "conditions") && json_is_array(v) && json_is_array(have)) {
			size_t i, j;
			json_t *c, *h;
			json_array_foreach(v, i, c)
			{
				const char *type = json_string_value(json_object_get(c, "type"));
				int replaced = 0;
				json_array_foreach(have, j, h)
				{
					const char *t =
						json_string_value(json_object_get(h, "type"));
					if (type && t && !strcmp(type, t)) {
						json_array_set(have, j, c);
						replaced = 1;
						break;
					}
				}
				if (!replaced)
					json_array_append(have, c);
			}
		} else {
			json_object_set(target, k, v);
		}
	}
}

static void answer(struct httpd_response *resp, int status, json_t *obj)
{
	resp->status = status;
	resp->content_type = "application/json";
	resp->body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	resp->body_len = resp->body ? strlen(resp->body) : 0;
}

static void answer_status(struct httpd_response *resp, int status, const char *reason)
{
	json_t *s = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
			      "v1", "metadata", "status", "Failure", "reason", reason, "code",
			      status);
	answer(resp, status, s);
	json_decref(s);
}

static void bump(struct fake_api *f, json_t *obj)
{
	char rv[32];
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)++f->rv);
	json_t *meta = json_object_get(obj, "metadata");
	if (!meta) {
		meta = json_object();
		json_object_set_new(obj, "metadata", meta);
	}
	json_object_set_new(meta, "resourceVersion", json_string(rv));
}

static void queue_event_of(struct fake_api *f, const char *path, json_t *obj, int deleted)
{
	if (f->ev_len == MAX_EVENTS)
		return;
	struct fake_event *e = &f->events[(f->ev_head + f->ev_len++) % MAX_EVENTS];
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->obj = json_deep_copy(obj);
	e->deleted = deleted;
}

static void queue_event(struct fake_api *f, const char *path, json_t *obj)
{
	queue_event_of(f, path, obj, 0);
}

/* An object marked for deletion goes once its last finalizer does. 1 when it went. */
static int collect(struct fake_api *f, const char *path, json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");
	if (!json_object_get(meta, "deletionTimestamp") ||
	    json_array_size(json_object_get(meta, "finalizers")))
		return 0;
	queue_event_of(f, path, obj, 1);
	json_object_del(f->store, path);
	return 1;
}

/* DELETE: an object with finalizers is marked (deletionTimestamp) and stays until they go. */
static void on_delete(struct fake_api *f, const struct httpd_request *req,
		      struct httpd_response *resp)
{
	json_t *obj = json_incref(json_object_get(f->store, req->path));
	if (!obj) {
		answer_status(resp, 404, "NotFound");
		return;
	}
	json_t *meta = json_object_get(obj, "metadata");
	if (!json_object_get(meta, "deletionTimestamp")) {
		json_object_set_new(meta, "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
		bump(f, obj);
		if (!collect(f, req->path, obj))
			queue_event(f, req->path, obj);
	}
	answer(resp, 200, obj);
	json_decref(obj);
}

static void on_post(struct fake_api *f, const struct httpd_request *req, json_t *body,
		    struct httpd_response *resp)
{
	json_t *meta = json_object_get(body, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *gen = json_string_value(json_object_get(meta, "generateName"));
	char path[sizeof(((struct fake_event *)0)->path)], made[300], uid[64], now[32];
	if (!meta || (!name && !gen)) {
		answer_status(resp, 422, "Invalid");
		return;
	}
	if (!name) {
		snprintf(made, sizeof(made), "%s%llu", gen, (unsigned long long)(f->uid + 1));
		name = made;
	}
	int n = snprintf(path, sizeof(path), "%s/%s", req->path, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		answer_status(resp, 422, "Invalid"); /* a path the fake can't hold whole */
		return;
	}
	if (json_object_get(f->store, path)) {
		answer_status(resp, 409, "AlreadyExists");
		return;
	}
	json_t *obj = json_deep_copy(body);
	meta = json_object_get(obj, "metadata");
	json_object_set_new(meta, "name", json_string(name));
	snprintf(uid, sizeof(uid), "uid-%llu", (unsigned long long)++f->uid);
	json_object_set_new(meta, "uid", json_string(uid));
	time_t t = time(NULL);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	json_object_set_new(meta, "creationTimestamp", json_string(now));
	bump(f, obj);
	json_object_set_new(f->store, path, obj);
	queue_event(f, path, obj);
	answer(resp, 201, obj);
}

static void on_patch(struct fake_api *f, const struct httpd_request *req, json_t *patch,
		     struct httpd_response *resp)
{
	char path[512];
	size_t n = strlen(req->path);
	int status_sub = n > 7 && !strcmp(req->path + n - 7, "/status");
	snprintf(path, sizeof(path), "%.*s", (int)(status_sub ? n - 7 : n), req->path);
	json_t *obj = json_object_get(f->store, path);
	if (!obj) {
		answer_status(resp, 404, "NotFound");
		return;
	}
	const char *want = json_string_value(
		json_object_get(json_object_get(patch, "metadata"), "resourceVersion"));
	const char *have = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	if (want && (!have || strcmp(want, have) != 0)) {
		answer_status(resp, 409, "Conflict");
		return;
	}
	json_t *apply = json_deep_copy(patch);
	json_object_del(json_object_get(apply, "metadata"), "resourceVersion");
	if (status_sub) {
		/* The status subresource changes status only. */
		json_t *only = json_pack("{s:O}", "status",
					 json_object_get(apply, "status") ?
						 json_object_get(apply, "status") :
						 json_null());
		if (!json_object_get(apply, "status"))
			json_object_clear(only);
		json_decref(apply);
		apply = only;
	} else {
		json_object_del(apply, "status");
	}
	json_t *before = json_deep_copy(obj);
	const char *type = httpd_request_header(req, "Content-Type");
	if (type && !strcmp(type, "application/apply-patch+yaml"))
		fake_apply(obj, apply);
	else
		fake_merge_patch(obj, apply);
	json_decref(apply);
	/* A patch that changes nothing keeps the resourceVersion, as the apiserver does. */
	json_incref(obj);
	if (!json_equal(before, obj)) {
		bump(f, obj);
		if (!collect(f, path, obj))
			queue_event(f, path, obj);
	}
	json_decref(before);
	answer(resp, 200, obj);
	json_decref(obj);
}

/* PUT replaces an object (an update): 404 if absent, 409 if the body's resourceVersion is not
 * the stored one; uid and creationTimestamp stay. */
static void on_put(struct fake_api *f, const struct httpd_request *req, json_t *body,
		   struct httpd_response *resp)
{
	json_t *obj = json_object_get(f->store, req->path);
	json_t *meta = json_object_get(obj, "metadata");
	const char *want = json_string_value(
		json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
	const char *have = json_string_value(json_object_get(meta, "resourceVersion"));
	if (!obj) {
		answer_status(resp, 404, "NotFound");
		return;
	}
	if (!json_is_object(json_object_get(body, "metadata")) ||
	    (want && (!have || strcmp(want, have)))) {
		answer_status(resp, json_is_object(json_object_get(body, "metadata")) ? 409 : 422,
			      "Conflict");
		return;
	}
	json_t *next = json_deep_copy(body);
	json_t *next_meta = json_object_get(next, "metadata");
	json_object_set(next_meta, "uid", json_object_get(meta, "uid"));
	json_object_set(next_meta, "creationTimestamp", json_object_get(meta, "creationTimestamp"));
	bump(f, next);
	json_object_set_new(f->store, req->path, next); /* frees obj */
	queue_event(f, req->path, next);
	answer(resp, 200, next);
}

static void on_request(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	struct fake_api *f = arg;
	struct fake_request *r = f->nlog < FAKE_API_MAX_LOG ? &f->log[f->nlog] : NULL;
	f->nlog++;
	if (r) {
		snprintf(r->method, sizeof(r->method), "%s", req->method);
		snprintf(r->path, sizeof(r->path), "%s", req->path);
		snprintf(r->query, sizeof(r->query), "%s", req->query);
		r->body = strdup(req->body ? req->body : "");
		r->at = uv_hrtime();
	}
	if (f->fail_left > 0 && !strncmp(req->path, f->fail_prefix, strlen(f->fail_prefix)) &&
	    (!f->fail_method[0] || !strcmp(f->fail_method, req->method))) {
		f->fail_left--;
		answer_status(resp, f->fail_status, "Injected");
	} else if (f->responder) {
		f->responder(f->arg, req, resp);
	} else {
		json_error_t jerr;
		json_t *body = req->body_len ? json_loadb(req->body, req->body_len, 0, &jerr) :
					       NULL;
		if (!strcmp(req->method, "GET")) {
			json_t *obj = json_object_get(f->store, req->path);
			if (obj)
				answer(resp, 200, obj);
			else
				answer_status(resp, 404, "NotFound");
		} else if (!strcmp(req->method, "POST") && body) {
			on_post(f, req, body, resp);
		} else if (!strcmp(req->method, "PATCH") && body) {
			on_patch(f, req, body, resp);
		} else if (!strcmp(req->method, "PUT") && body) {
			on_put(f, req, body, resp);
		} else if (!strcmp(req->method, "DELETE")) {
			on_delete(f, req, resp);
		} else {
			answer_status(resp, 400, "BadRequest");
		}
		json_decref(body);
	}
	if (r)
		r->status = resp->status;
}

static int listen_on(struct fake_api *f, int port)
{
	struct httpd_options o = { .host = "127.0.0.1",
				   .port = port,
				   .cert_pem = f->cert_pem,
				   .key_pem = f->key_pem,
				   .handler = on_request,
				   .handler_arg = f };
	int rc = httpd_start(f->loop, &o, &f->srv);
	if (rc == 0)
		f->port = httpd_port(f->srv);
	return rc;
}

int fake_api_start_tls(uv_loop_t *loop, fake_api_responder responder, void *arg,
		       const char *cert_pem, const char *key_pem, struct fake_api **out)
{
	struct fake_api *f = (cert_pem && !key_pem) ? NULL : calloc(1, sizeof(*f));
	int rc = -ENOMEM;
	if (!f)
		return cert_pem && !key_pem ? -EINVAL : -ENOMEM;
	f->loop = loop;
	f->responder = responder;
	f->arg = arg;
	f->store = json_object();
	if (cert_pem && (!(f->cert_pem = strdup(cert_pem)) || !(f->key_pem = strdup(key_pem))))
		goto fail;
	if ((rc = listen_on(f, 0)) != 0)
		goto fail;
	snprintf(f->url, sizeof(f->url), "%s://127.0.0.1:%d", cert_pem ? "https" : "http", f->port);
	*out = f;
	return 0;
fail:
	free(f->cert_pem);
	free(f->key_pem);
	json_decref(f->store);
	free(f);
	return rc;
}

int fake_api_start(uv_loop_t *loop, fake_api_responder responder, void *arg, struct fake_api **out)
{
	return fake_api_start_tls(loop, responder, arg, NULL, NULL, out);
}

const char *fake_api_url(const struct fake_api *f)
{
	return f->url;
}

void fake_api_stop(struct fake_api *f)
{
	if (!f)
		return;
	if (f->srv)
		httpd_stop(f->srv);
	for (size_t i = 0; i < f->nlog && i < FAKE_API_MAX_LOG; i++)
		free(f->log[i].body);
	while (f->ev_len) {
		json_decref(f->events[f->ev_head].obj);
		f->ev_head = (f->ev_head + 1) % MAX_EVENTS;
		f->ev_len--;
	}
	json_decref(f->store);
	free(f->cert_pem);
	free(f->key_pem);
	free(f);
}

void fake_api_down(struct fake_api *f)
{
	if (f->srv)
		httpd_stop(f->srv);
	f->srv = NULL;
}

int fake_api_up(struct fake_api *f)
{
	return f->srv ? 0 : listen_on(f, f->port);
}

void fake_api_fail(struct fake_api *f, const char *method, const char *prefix, int status, int n)
{
	snprintf(f->fail_method, sizeof(f->fail_method), "%s", method ? method : "");
	snprintf(f->fail_prefix, sizeof(f->fail_prefix), "%s", prefix ? prefix : "");
	f->fail_status = status;
	f->fail_left = n;
}

json_t *fake_api_put(struct fake_api *f, const char *path, json_t *obj)
{
	bump(f, obj);
	json_object_set_new(f->store, path, obj);
	return obj;
}

json_t *fake_api_get(const struct fake_api *f, const char *path)
{
	return json_object_get(f->store, path);
}

size_t fake_api_nrequests(const struct fake_api *f)
{
	return f->nlog < FAKE_API_MAX_LOG ? f->nlog : FAKE_API_MAX_LOG;
}

const struct fake_request *fake_api_request(const struct fake_api *f, size_t i)
{
	return i < fake_api_nrequests(f) ? &f->log[i] : NULL;
}

size_t fake_api_count(const struct fake_api *f, const char *method, const char *prefix, int status)
{
	size_t n = 0;
	for (size_t i = 0; i < fake_api_nrequests(f); i++) {
		const struct fake_request *r = &f->log[i];
		if ((!method || !strcmp(r->method, method)) &&
		    (!prefix || !strncmp(r->path, prefix, strlen(prefix))) &&
		    (!status || r->status == status))
			n++;
	}
	return n;
}

int fake_api_next_event(struct fake_api *f, struct fake_event *ev)
{
	if (!f->ev_len)
		return -ENOENT;
	*ev = f->events[f->ev_head];
	f->ev_head = (f->ev_head + 1) % MAX_EVENTS;
	f->ev_len--;
	return 0;
}
