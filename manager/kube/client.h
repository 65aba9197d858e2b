/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The apiserver client: libcurl's multi interface driven by a libuv loop, so every request and
 * watch runs on the loop thread without blocking it. HTTP/1.1 on every handle: each watch gets
 * its own connection, failures stay isolated and cancelling is closing.
 *
 * Callbacks run on the loop thread. Requests may be issued from inside any callback (they are
 * handed to libcurl on the next loop turn, since libcurl forbids re-entrant calls).
 */
#ifndef MUSTER_KUBE_CLIENT_H
#define MUSTER_KUBE_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "kube/kubeconfig.h"

#define KUBE_MAX_RESPONSE (256u << 20) /* a non-streaming response body */
/* Requests (not watches) in flight at once; more wait in the client, in order. Each holds an
 * HTTP/1.1 connection and its TLS state: unbounded, a burst of writes opened thousands. */
#define KUBE_MAX_REQUESTS_IN_FLIGHT 16
/* How long a request (not a watch) may take by default, connecting included. */
#define KUBE_REQUEST_TIMEOUT_S 60
/* Connections kept open (watches' and requests'). */
#define KUBE_MAX_CONNECTIONS 64

/* How often a kubeconfig's tokenFile (in-cluster: the projected service-account token, which
 * rotates) is read again; every call sends the token last read. */
#define KUBE_TOKEN_PERIOD_MS 60000

struct kube_client;
struct kube_call;

struct kube_response {
	long status; /* HTTP status, 0 when no response arrived */
	/* 0, or a negative errno for transport failures (-ETIMEDOUT, -ECONNREFUSED, …) */
	int error;
	const char *error_text; /* human-readable transport error, "" when none */
	const char *body; /* NUL-terminated response body (empty for streams), borrowed */
	size_t body_len;
};

/* Completion: called exactly once per call unless the call was cancelled first. */
typedef void (*kube_done_fn)(void *arg, const struct kube_response *resp);

/* Streaming data: called with each chunk as it arrives. Return a negative value to abort the
 * stream (the done callback then reports error -ECANCELED). */
typedef int (*kube_data_fn)(void *arg, const char *data, size_t len);

/* Creates a client for cfg (copied; the caller keeps ownership of cfg), used on loop's thread
 * only. The first call sets up libcurl's global state (curl_global_init, not thread-safe, once
 * per process): make a client on the main thread before starting threads that make their own.
 * 0 or -errno. */
int kube_client_new(uv_loop_t *loop, const struct kube_config *cfg, struct kube_client **out);

/* Ends every call: those not cancelled complete at once with error -ECANCELED ("client
 * closed"), so their owners free what they hold; then frees the client once libuv has closed
 * its handles (the loop must run after this for the memory to be released). Callbacks must not
 * start new calls on this client (they get -ESHUTDOWN). */
void kube_client_free(struct kube_client *c);

/* Limits how fast calls leave, as client-go's QPS and burst do (Kueue's clientConnection):
 * qps calls a second on average, bursts of up to burst; calls beyond wait in order. qps <= 0
 * removes the limit (the default). */
void kube_client_set_rate(struct kube_client *c, double qps, int burst);

/* Bounds each request started afterwards to seconds (<= 0: KUBE_REQUEST_TIMEOUT_S). A client
 * whose answers matter only while fresh, such as leader election's, gives up sooner. */
void kube_client_set_request_timeout(struct kube_client *c, long seconds);
/* For tests: re-read the tokenFile every ms instead of KUBE_TOKEN_PERIOD_MS. */
void kube_client_set_token_period(struct kube_client *c, unsigned ms);

/*
 * Starts a request. method is "GET", "POST", "PUT", "PATCH" or "DELETE"; path starts with '/';
 * body (copied) may be NULL; content_type defaults to application/json when a body is given.
 * If out is non-NULL it receives a handle for kube_call_cancel, valid until done runs.
 * Returns 0, or -errno (done is then never called).
 */
int kube_request(struct kube_client *c, const char *method, const char *path,
		 const char *content_type, const char *body, kube_done_fn done, void *arg,
		 struct kube_call **out);

/* Starts a streaming GET (a watch). timeout_s bounds the whole stream on our side. */
int kube_stream(struct kube_client *c, const char *path, long timeout_s, kube_data_fn data,
		kube_done_fn done, void *arg, struct kube_call **out);

/* Watches every completed call (not cancelled ones), for metrics, so the client itself knows
 * nothing of them: method, path (as given, with its query), HTTP status (0 when no response
 * arrived), transport error (0 or -errno), and the time from the call leaving the client's
 * queue to its completion, in ns. Runs on the loop thread before the call's own callback. */
typedef void (*kube_observe_fn)(void *arg, const char *method, const char *path, long status,
				int error, uint64_t duration_ns);
/* Installs (or with fn NULL removes) the observer. */
void kube_client_set_observer(struct kube_client *c, kube_observe_fn fn, void *arg);

/* A finished request's answer, owned by whoever holds it (kube_reply_release). */
struct kube_reply {
	long status; /* HTTP status, 0 when no response arrived */
	int error; /* 0, or the transport failure as a negative errno */
	char error_text[256]; /* its text, "" when none */
	char *body; /* NUL-terminated, never NULL once filled */
	size_t body_len;
};

/*
 * Runs a request to its end by turning the client's loop, for programs that have nothing else
 * to do meanwhile (a command-line tool) and for tests; never from a loop callback, since the
 * loop must not be running. Whatever else is on the loop (a test's fake server) runs too.
 * Returns 0 with *out filled, a transport failure included (out->error), or -errno when the
 * request could not start (*out is then empty). Release *out with kube_reply_release.
 */
int kube_request_sync(struct kube_client *c, const char *method, const char *path, const char *body,
		      struct kube_reply *out);
void kube_reply_release(struct kube_reply *r);

/* Stops a call; its callbacks never run afterwards. Safe from inside its own data callback. */
void kube_call_cancel(struct kube_call *call);

/* Appends s to a URL path or query, percent-encoding everything but unreserved characters.
 * Returns 0 or -ENOSPC. */
int kube_escape(char *dst, size_t size, const char *s);

#endif
