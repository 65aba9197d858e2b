/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake apiserver for unit tests: muster's own httpd on 127.0.0.1, on the test's uv loop,
 * so the real kube client, informers and writer talk HTTP to it.
 *
 * Two ways to answer:
 *   - a responder the test installs (a script: one canned answer per request, as the informer
 *     tests use), or
 *   - by default, an object store with the apiserver's write semantics that the controller
 *     relies on: GET an object; POST to a collection (409 if it exists; metadata.name or
 *     generateName; uid, creationTimestamp); PATCH with a JSON merge patch, the /status
 *     subresource changing only status and the object itself everything else, a
 *     metadata.resourceVersion in the patch that differs from the object's giving 409; PUT
 *     replacing an object, with the same resourceVersion check; DELETE marking an object
 *     with finalizers (deletionTimestamp) and removing it once it has none, also when a later
 *     PATCH takes the last one off; every
 *     write bumps a global resourceVersion and is queued as a watch event the test delivers
 *     when it chooses (so tests decide how far the controller's cache lags).
 * Faults: fake_api_fail makes the next n requests matching (method, path prefix) answer a
 * status; fake_api_down closes the listener (connections are refused) until fake_api_up.
 * Every request is logged (method, path, body, status answered).
 */
#ifndef MUSTER_TEST_FAKE_APISERVER_H
#define MUSTER_TEST_FAKE_APISERVER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "net/httpd.h"

#define FAKE_API_MAX_LOG 4096

struct fake_request {
	char method[8];
	char path[512]; /* without the query */
	char query[512];
	char *body; /* owned; "" when none */
	int status; /* what was answered */
	uint64_t at; /* uv_hrtime() */
};

/* A write's result as a watch would report it. obj is a new reference (the object after the
 * write, or the last version for a deletion). */
struct fake_event {
	char path[512]; /* the object's path */
	json_t *obj;
	int deleted; /* the object is gone (obj is its last version) */
};

/* A custom responder: fills resp (status, body malloc'd) for req. */
typedef void (*fake_api_responder)(void *arg, const struct httpd_request *req,
				   struct httpd_response *resp);

struct fake_api;

/* Starts on 127.0.0.1 with a free port. responder NULL: the object store. */
int fake_api_start(uv_loop_t *loop, fake_api_responder responder, void *arg, struct fake_api **out);
/* The same over HTTPS with this serving certificate and key (copied), as muster's own
 * endpoints are served. */
int fake_api_start_tls(uv_loop_t *loop, fake_api_responder responder, void *arg,
		       const char *cert_pem, const char *key_pem, struct fake_api **out);
/* "http://127.0.0.1:PORT" (or https://), for a kube_config. */
const char *fake_api_url(const struct fake_api *f);
/* Stops listening and frees everything; the loop must run afterwards to close the handles. */
void fake_api_stop(struct fake_api *f);

/* Refuse connections (the listener closes) / listen again on the same port. */
void fake_api_down(struct fake_api *f);
int fake_api_up(struct fake_api *f);
/* The next n requests whose method matches (NULL: any) and whose path starts with prefix get
 * status (with a Status body). One rule at a time; a new call replaces it. */
void fake_api_fail(struct fake_api *f, const char *method, const char *prefix, int status, int n);

/* Puts an object at path (as if created), setting its resourceVersion; obj is stolen. Queues
 * no event: the test seeds its cache itself. Returns the stored object, borrowed. */
json_t *fake_api_put(struct fake_api *f, const char *path, json_t *obj);
/* The stored object at path, borrowed, or NULL. */
json_t *fake_api_get(const struct fake_api *f, const char *path);

/* The request log. */
size_t fake_api_nrequests(const struct fake_api *f);
const struct fake_request *fake_api_request(const struct fake_api *f, size_t i);
/* How many logged requests match method (NULL: any) and start with prefix (NULL: any), and
 * were answered with status (0: any). */
size_t fake_api_count(const struct fake_api *f, const char *method, const char *prefix, int status);

/* Takes the oldest queued watch event into *ev (the caller releases ev->obj). 0, or -ENOENT
 * when none is queued. */
int fake_api_next_event(struct fake_api *f, struct fake_event *ev);

/* Applies a JSON merge patch (RFC 7386) to target in place. */
void fake_merge_patch(json_t *target, json_t *patch);

#endif
