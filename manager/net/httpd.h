/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small HTTP/1.1 server on a libuv loop, plain or TLS (OpenSSL 3 memory BIOs on uv_tcp_t).
 * It serves the admission webhook to kube-apiserver over HTTPS and /healthz, /readyz and
 * /metrics over plain HTTP. One handler per server sees every request, synchronously, on the
 * loop thread; everything here must be called on that thread too.
 *
 * Protocol: HTTP/1.1 and 1.0, keep-alive (Go clients reuse connections), "Connection: close"
 * honoured, pipelined requests answered in order. Request bodies need Content-Length; a
 * Transfer-Encoding request gets 411 and the connection closes. "Expect: 100-continue" is
 * answered. HEAD requests get the handler's headers without its body.
 *
 * Limits, all enforced per connection:
 *   - request head <= HTTP_HEAD_MAX (16 KiB), else 431; malformed head, 400; both close;
 *   - body <= max_body, else 413 and the connection closes;
 *   - bodies buffered at once, over all connections, <= max_buffered (a body is counted from
 *     its head, by its Content-Length, until its handler returns), else 429 and the connection
 *     closes; bodies above a sixteenth of it (4 MiB by default) may hold only half of it, so
 *     clients sending large bodies can't crowd out the small requests kube-apiserver sends;
 *   - a request (or TLS handshake) must arrive completely within request_timeout_ms of its
 *     first byte (against slowloris), an idle keep-alive connection lives idle_timeout_ms;
 *     the connection is closed without a response when either runs out;
 *   - at most max_connections at once; further ones are accepted and closed at once;
 *   - if the client stops reading responses, the server stops reading requests.
 * TLS: 1.2 minimum; ALPN selects "http/1.1" when offered and nothing else, so a Go client never
 * attempts h2.
 */
#ifndef MUSTER_HTTPD_H
#define MUSTER_HTTPD_H

#include <stddef.h>
#include <uv.h>

#define HTTPD_DEFAULT_MAX_BODY ((size_t)8 << 20)
#define HTTPD_DEFAULT_MAX_CONNECTIONS 1024
/* Bodies buffered at once: bounds the server's memory whatever the clients do (without it,
 * 1024 connections could hold 8 MiB each). An AdmissionReview is rarely above 100 KiB and at
 * most two objects of etcd's 1.5 MiB each. */
#define HTTPD_DEFAULT_MAX_BUFFERED ((size_t)64 << 20)
#define HTTPD_DEFAULT_REQUEST_TIMEOUT_MS 10000
/*
 * Longer than the 90 s IdleConnTimeout of Go's default transport (which client-go copies
 * [unverified for the apiserver's webhook client]), so the client, not the server, closes an
 * idle connection. Otherwise a request sent just as the server closes would fail, and Go does
 * not retry a POST.
 */
#define HTTPD_DEFAULT_IDLE_TIMEOUT_MS 120000

struct httpd;
struct http_head;

/* A request, valid only during the handler call. All strings are NUL-terminated. */
struct httpd_request {
	const char *method; /* "GET", "POST", … (case-sensitive) */
	const char *path; /* without the query string, not percent-decoded; "*" for OPTIONS * */
	const char *query; /* after '?', not decoded, or "" */
	const char *body; /* body_len bytes plus a NUL; "" when there is no body */
	size_t body_len;
	int minor_version; /* HTTP/1.<minor_version> */
	const struct http_head *head; /* private: use httpd_request_header */
	void *conn; /* private: for httpd_defer */
};

/*
 * The value of the first header field called name (case-insensitive), without surrounding
 * whitespace, or NULL. Borrowed: valid during the handler call only.
 */
const char *httpd_request_header(const struct httpd_request *req, const char *name);

/*
 * The handler fills this in. It arrives as { 500, NULL, NULL, 0 }, so a handler that forgets to
 * set a status answers 500. The server takes ownership of body in every case.
 */
struct httpd_response {
	int status; /* 200…599; anything else is answered as 500 */
	const char *content_type; /* borrowed, must outlive the call (a literal); NULL = none */
	char *body; /* malloc'd by the handler, freed by httpd; may be NULL */
	size_t body_len;
};

typedef void (*httpd_handler_fn)(void *arg, const struct httpd_request *req,
				 struct httpd_response *resp);

struct httpd_options {
	const char *host; /* numeric IPv4 or IPv6 address; NULL = "127.0.0.1" */
	int port; /* 0 = pick a free port; httpd_port() tells which */
	const char *cert_pem; /* NULL => plain HTTP; else the serving certificate chain (PEM) */
	const char *key_pem; /* its private key (PEM), required with cert_pem */
	size_t max_body; /* larger bodies get 413; 0 = HTTPD_DEFAULT_MAX_BODY */
	size_t max_buffered; /* bodies buffered at once, else 429; 0 = HTTPD_DEFAULT_MAX_BUFFERED */
	unsigned max_connections; /* 0 = HTTPD_DEFAULT_MAX_CONNECTIONS */
	unsigned request_timeout_ms; /* 0 = HTTPD_DEFAULT_REQUEST_TIMEOUT_MS */
	unsigned idle_timeout_ms; /* 0 = HTTPD_DEFAULT_IDLE_TIMEOUT_MS */
	httpd_handler_fn handler; /* required */
	void *handler_arg;
};

/*
 * Deferred answers, for a handler whose answer needs work off the loop thread (a database
 * query in uv_queue_work). Called during the handler, httpd_defer says the answer comes later
 * (the handler's response is then ignored) and returns the handle to give it with; NULL when
 * it can't (out of memory, or a request not from a connection, as tests make them): answer
 * at once. Until the answer the connection reads no further request (pipelined ones wait
 * their turn) and stays open up to six request timeouts. httpd_answer sends it (taking body)
 * and frees the handle; it must be called exactly once, on the loop thread. If the connection
 * or the server has gone meanwhile it only frees.
 */
struct httpd_deferred;
struct httpd_deferred *httpd_defer(const struct httpd_request *req);
void httpd_answer(struct httpd_deferred *d, int status, const char *content_type, char *body,
		  size_t body_len);

/*
 * Binds, listens and starts accepting on loop. The options are copied; the PEM strings may be
 * freed after the call. Returns 0 and sets *out, or a negative errno: -EINVAL (bad options,
 * address or certificate/key), -ENOMEM, or libuv's error from bind/listen (-EADDRINUSE, …).
 * On failure part of the state may be released by a close callback: run the loop before
 * uv_loop_close().
 */
int httpd_start(uv_loop_t *loop, const struct httpd_options *opt, struct httpd **out);

/* The port the server listens on. */
int httpd_port(const struct httpd *h);

/*
 * Replaces the serving certificate and key of a TLS server, e.g. after rotation. New
 * connections use them; established ones keep the old ones. Returns 0, -EINVAL (plain server,
 * bad PEM or a key that does not match) or -ENOMEM, leaving the old certificate in place.
 */
int httpd_set_certificate(struct httpd *h, const char *cert_pem, const char *key_pem);

/*
 * Closes the listener and every connection, without waiting for responses in flight. h must
 * not be used afterwards; its memory is freed by close callbacks as the loop runs. May be
 * called from inside the handler. NULL is a no-op.
 */
void httpd_stop(struct httpd *h);

#endif
