/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libcurl multi on libuv, after the pattern in curl's docs/examples/multi-uv.c, with the fixes
 * c-libraries.md §1.2 lists: reap after every action, pass poll errors to libcurl as
 * CURL_CSELECT_ERR, free socket contexts only in uv close callbacks.
 */
#include "kube/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/log.h"

struct kube_client {
	uv_loop_t *loop;
	CURLM *multi;
	uv_timer_t timeout; /* libcurl's single timeout */
	uv_timer_t kick; /* hands queued calls to libcurl outside its callbacks */
	struct kube_config cfg;
	struct curl_slist *auth_headers;
	/* A tokenFile's token is read again this often (uv_now() ms): in-cluster the projected
	 * token rotates, and client-go's file token source re-reads it every minute too. */
	uint64_t token_read_ms, token_period_ms;
	/* Not yet added to the multi handle, FIFO: watches go at once, requests as the rate
	 * limit and the in-flight cap allow. */
	struct call_queue {
		struct kube_call *head, *tail;
	} streams, requests;
	int requests_active; /* requests added to the multi handle, not yet done */
	/* Client-side rate limit (client-go's token bucket): qps tokens a second, at most burst
	 * saved up; qps <= 0 means none. Every request and watch start takes one token. */
	double qps, tokens;
	int burst;
	long request_timeout_s; /* bounds each request (not watches) */
	uint64_t refilled_ms; /* uv_now() at the last refill */
	struct kube_call *active; /* added; doubly linked for O(1) removal */
	kube_observe_fn observe; /* NULL: none */
	void *observe_arg;
	int handles_open; /* uv handles not yet closed; the client is freed at zero */
	int closing;
};

struct kube_call {
	struct kube_client *client;
	/* The request, as given; the curl handle is made only when the call leaves the queue,
	 * so a long queue of writes holds their bodies, not a handle and TLS blobs each. */
	char method[8];
	char *url;
	char *content_type; /* NULL: no body */
	char *request; /* the body, or NULL */
	long timeout_s;
	uint64_t started_ns; /* uv_hrtime() when it left the queue */
	CURL *easy; /* NULL while queued */
	struct curl_slist *headers;
	struct buf body;
	kube_data_fn data;
	kube_done_fn done;
	void *arg;
	int cancelled;
	int streaming;
	struct kube_call *prev, *next;
};

struct sock_ctx {
	uv_poll_t poll;
	curl_socket_t fd;
	struct kube_client *client;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void list_remove(struct kube_call **head, struct kube_call *call)
{
	if (call->prev)
		call->prev->next = call->next;
	else
		*head = call->next;
	if (call->next)
		call->next->prev = call->prev;
	call->prev = call->next = NULL;
}

/* Appends to a FIFO of queued calls, so the limits let them out in order. */
static void queue_append(struct call_queue *q, struct kube_call *call)
{
	call->next = NULL;
	call->prev = q->tail;
	if (q->tail)
		q->tail->next = call;
	else
		q->head = call;
	q->tail = call;
}

static void queue_remove(struct call_queue *q, struct kube_call *call)
{
	if (q->tail == call)
		q->tail = call->prev;
	list_remove(&q->head, call);
}

static void list_push(struct kube_call **head, struct kube_call *call)
{
	call->prev = NULL;
	call->next = *head;
	if (*head)
		(*head)->prev = call;
	*head = call;
}

static void call_free(struct kube_call *call)
{
	if (call->easy)
		curl_easy_cleanup(call->easy);
	free(call->url);
	free(call->content_type);
	free(call->request);
	curl_slist_free_all(call->headers);
	buf_release(&call->body);
	free(call);
}

static int curl_error_to_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_OK:
		return 0;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_WRITE_ERROR:
		return -ECANCELED;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
		return -EPROTO;
	default:
		return -EIO;
	}
}

static void on_kick(uv_timer_t *t);

static void check_multi_info(struct kube_client *c)
{
	CURLMsg *msg;
	int pending;
	while ((msg = curl_multi_info_read(c->multi, &pending))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		struct kube_call *call = NULL;
		CURLcode result = msg->data.result;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&call);
		curl_multi_remove_handle(c->multi, msg->easy_handle);
		list_remove(&c->active, call);
		if (!call->streaming) {
			c->requests_active--;
			/* A slot is free: let the next queued request out. */
			if (c->requests.head && !uv_is_active((uv_handle_t *)&c->kick))
				uv_timer_start(&c->kick, on_kick, 0, 0);
		}
		if (!call->cancelled && call->done) {
			struct kube_response resp = { 0 };
			curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &resp.status);
			resp.error = curl_error_to_errno(result);
			resp.error_text = result == CURLE_OK ? "" : curl_easy_strerror(result);
			resp.body = call->body.data ? call->body.data : "";
			resp.body_len = call->body.len;
			if (c->observe)
				c->observe(c->observe_arg, call->method,
					   call->url + strlen(c->cfg.server), resp.status,
					   resp.error, uv_hrtime() - call->started_ns);
			call->done(call->arg, &resp);
		}
		call_free(call);
	}
}

static void on_poll(uv_poll_t *handle, int status, int events)
{
	struct sock_ctx *ctx = handle->data;
	int flags = 0, running;
	if (status < 0)
		flags = CURL_CSELECT_ERR;
	if (events & UV_READABLE)
		flags |= CURL_CSELECT_IN;
	if (events & UV_WRITABLE)
		flags |= CURL_CSELECT_OUT;
	curl_multi_socket_action(ctx->client->multi, ctx->fd, flags, &running);
	check_multi_info(ctx->client);
}

static void on_handle_closed(uv_handle_t *handle)
{
	struct kube_client *c = handle->data;
	if (--c->handles_open == 0 && c->closing) {
		curl_multi_cleanup(c->multi);
		curl_slist_free_all(c->auth_headers);
		kube_config_release(&c->cfg);
		free(c);
	}
}

static void on_sock_closed(uv_handle_t *handle)
{
	struct sock_ctx *ctx = handle->data;
	struct kube_client *c = ctx->client;
	free(ctx);
	if (--c->handles_open == 0 && c->closing) {
		curl_multi_cleanup(c->multi);
		curl_slist_free_all(c->auth_headers);
		kube_config_release(&c->cfg);
		free(c);
	}
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct kube_client *c = userp;
	struct sock_ctx *ctx = socketp;
	int events = 0;

	if (what == CURL_POLL_REMOVE) {
		/* libcurl may report a socket it already closed; stop before close, free in
		 * close_cb. */
		if (ctx) {
			uv_poll_stop(&ctx->poll);
			uv_close((uv_handle_t *)&ctx->poll, on_sock_closed);
			curl_multi_assign(c->multi, fd, NULL);
		}
		return 0;
	}
	if (!ctx) {
		ctx = calloc(1, sizeof(*ctx));
		if (!ctx)
			return -1;
		ctx->fd = fd;
		ctx->client = c;
		if (uv_poll_init_socket(c->loop, &ctx->poll, fd) != 0) {
			free(ctx);
			return -1;
		}
		ctx->poll.data = ctx;
		c->handles_open++;
		curl_multi_assign(c->multi, fd, ctx);
	}
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		events |= UV_READABLE;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		events |= UV_WRITABLE;
	return uv_poll_start(&ctx->poll, events, on_poll) == 0 ? 0 : -1;
}

static void on_timeout(uv_timer_t *t)
{
	struct kube_client *c = t->data;
	int running;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi_info(c);
}

static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct kube_client *c = userp;
	if (timeout_ms < 0)
		uv_timer_stop(&c->timeout);
	else /* libcurl must not be called from here, even for a zero timeout: go via the loop */
		uv_timer_start(&c->timeout, on_timeout, timeout_ms ? (uint64_t)timeout_ms : 1, 0);
	return 0;
}

static int build_easy(struct kube_client *c, struct kube_call *call);

/* Hands a queued call to libcurl. */
static void start_call(struct kube_client *c, struct kube_call *call)
{
	if (build_easy(c, call) != 0) {
		struct kube_response resp = { .error = -ENOMEM,
					      .error_text = "out of memory",
					      .body = "" };
		call->done(call->arg, &resp);
		call_free(call);
		return;
	}
	CURLMcode mrc = curl_multi_add_handle(c->multi, call->easy);
	if (mrc != CURLM_OK) {
		struct kube_response resp = { .error = -EIO,
					      .error_text = curl_multi_strerror(mrc),
					      .body = "" };
		call->done(call->arg, &resp);
		call_free(call);
		return;
	}
	if (!call->streaming)
		c->requests_active++;
	call->started_ns = uv_hrtime();
	list_push(&c->active, call);
}

static void on_kick(uv_timer_t *t)
{
	struct kube_client *c = t->data;
	/* Cancelled transfers leave here, outside libcurl's callbacks, even when idle. */
	for (struct kube_call *call = c->active, *next; call; call = next) {
		next = call->next;
		if (call->cancelled) {
			curl_multi_remove_handle(c->multi, call->easy);
			list_remove(&c->active, call);
			if (!call->streaming)
				c->requests_active--;
			call_free(call);
		}
	}
	/* Watches are few and long: they never wait behind requests. */
	while (c->streams.head) {
		struct kube_call *call = c->streams.head;
		queue_remove(&c->streams, call);
		if (call->cancelled)
			call_free(call);
		else
			start_call(c, call);
	}
	if (c->qps > 0) {
		uint64_t now = uv_now(c->loop);
		c->tokens += (double)(now - c->refilled_ms) * c->qps / 1000.0;
		if (c->tokens > c->burst)
			c->tokens = c->burst;
		c->refilled_ms = now;
	}
	/* Requests: at most KUBE_MAX_REQUESTS_IN_FLIGHT at once (each HTTP/1.1 request in flight
	 * holds a connection, with its TLS state), and qps a second. The rest wait here, in order;
	 * a finished request or the next token brings us back. */
	while (c->requests.head) {
		struct kube_call *call = c->requests.head;
		if (!call->cancelled) {
			if (c->requests_active >= KUBE_MAX_REQUESTS_IN_FLIGHT)
				break;
			if (c->qps > 0) {
				if (c->tokens < 1.0) {
					uint64_t wait =
						(uint64_t)((1.0 - c->tokens) * 1000.0 / c->qps) + 1;
					uv_timer_start(&c->kick, on_kick, wait, 0);
					break;
				}
				c->tokens -= 1.0;
			}
		}
		queue_remove(&c->requests, call);
		if (call->cancelled)
			call_free(call);
		else
			start_call(c, call);
	}
	int running;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi_info(c);
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct kube_call *call = userdata;
	size_t n = size * nmemb;
	if (call->cancelled)
		return 0; /* aborts the transfer */
	if (call->streaming) {
		long status = 0;
		curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &status);
		/* An error status carries a Status body, not a stream: keep it for the done
		 * callback. */
		if (status == 200)
			return call->data(call->arg, ptr, n) < 0 ? 0 : n;
	}
	return buf_append(&call->body, ptr, n) == 0 ? n : 0;
}

/* The Authorization header for token as a list, or NULL (no token, or out of memory). */
static struct curl_slist *auth_header(const char *token)
{
	char header[8192];
	if (!token)
		return NULL;
	snprintf(header, sizeof(header), "Authorization: Bearer %s", token);
	return curl_slist_append(NULL, header);
}

/* Re-reads the tokenFile once its period has passed. A small file, at most once a minute: the
 * blocking read on the loop thread costs less than a thread would. On failure the old token
 * stays (the apiserver accepts it until it expires) and the next call tries again. */
static void reread_token(struct kube_client *c)
{
	uint64_t now = uv_now(c->loop);
	if (!c->cfg.token_file || now - c->token_read_ms < c->token_period_ms)
		return;
	c->token_read_ms = now;
	int rc = kube_config_refresh_token(&c->cfg);
	struct curl_slist *h = rc == 0 ? auth_header(c->cfg.token) : NULL;
	if (!h) {
		log_warn("cannot re-read the token file; keeping the current token",
			 LF_STR("file", c->cfg.token_file), LF_INT("rc", rc), LF_END);
		return;
	}
	curl_slist_free_all(c->auth_headers);
	c->auth_headers = h;
}

void kube_client_set_token_period(struct kube_client *c, unsigned ms)
{
	c->token_period_ms = ms;
}

static uv_once_t curl_once = UV_ONCE_INIT;
static CURLcode curl_init_rc;

/* Once per process; never undone (libcurl's global state lives as long as the process). */
static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int kube_client_new(uv_loop_t *loop, const struct kube_config *cfg, struct kube_client **out)
{
	*out = NULL;
	uv_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK)
		return -ENOMEM;
	struct kube_client *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->request_timeout_s = KUBE_REQUEST_TIMEOUT_S;
	c->cfg.server = dup_or_null(cfg->server);
	c->cfg.ca_pem = dup_or_null(cfg->ca_pem);
	c->cfg.cert_pem = dup_or_null(cfg->cert_pem);
	c->cfg.key_pem = dup_or_null(cfg->key_pem);
	c->cfg.token = dup_or_null(cfg->token);
	c->cfg.token_file = dup_or_null(cfg->token_file);
	c->cfg.insecure = cfg->insecure;
	c->multi = curl_multi_init();
	if (!c->cfg.server || !c->multi) {
		curl_multi_cleanup(c->multi);
		kube_config_release(&c->cfg);
		free(c);
		return -ENOMEM;
	}
	c->auth_headers = auth_header(c->cfg.token);
	c->token_read_ms = uv_now(loop);
	c->token_period_ms = KUBE_TOKEN_PERIOD_MS;
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	/* The connection cache counts the watches' connections too: room for every request in
	 * flight beside them, or a finished request's connection is closed and the next one pays
	 * a TLS handshake (which cost most of the manager's CPU when this was too small). */
	curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)KUBE_MAX_CONNECTIONS);
	uv_timer_init(loop, &c->timeout);
	uv_timer_init(loop, &c->kick);
	c->timeout.data = c;
	c->kick.data = c;
	c->handles_open = 2;
	*out = c;
	return 0;
}

void kube_client_free(struct kube_client *c)
{
	if (!c)
		return;
	c->closing = 1;
	while (c->streams.head || c->requests.head || c->active) {
		struct kube_call *call = c->streams.head  ? c->streams.head :
					 c->requests.head ? c->requests.head :
							    c->active;
		if (call == c->streams.head) {
			queue_remove(&c->streams, call);
		} else if (call == c->requests.head) {
			queue_remove(&c->requests, call);
		} else {
			list_remove(&c->active, call);
			curl_multi_remove_handle(c->multi, call->easy);
		}
		if (!call->cancelled && call->done) {
			struct kube_response resp = { .error = -ECANCELED,
						      .error_text = "client closed",
						      .body = "" };
			call->done(call->arg, &resp);
		}
		call_free(call);
	}
	uv_close((uv_handle_t *)&c->timeout, on_handle_closed);
	uv_close((uv_handle_t *)&c->kick, on_handle_closed);
}

static int call_new(struct kube_client *c, const char *method, const char *path, kube_done_fn done,
		    void *arg, struct kube_call **out)
{
	char url[8192];
	struct kube_call *call;

	if (c->closing)
		return -ESHUTDOWN;
	if (path[0] != '/' || strlen(method) >= sizeof(call->method) ||
	    (size_t)snprintf(url, sizeof(url), "%s%s", c->cfg.server, path) >= sizeof(url))
		return -EINVAL;
	call = calloc(1, sizeof(*call));
	if (!call)
		return -ENOMEM;
	call->client = c;
	call->done = done;
	call->arg = arg;
	snprintf(call->method, sizeof(call->method), "%s", method);
	buf_init(&call->body, KUBE_MAX_RESPONSE);
	if (!(call->url = strdup(url))) {
		free(call);
		return -ENOMEM;
	}
	*out = call;
	return 0;
}

/* libcurl sets SSL_MODE_RELEASE_BUFFERS on each connection's SSL_CTX, so OpenSSL frees a
 * connection's read buffer (over 16 KiB) whenever a read drains it and allocates it again for
 * the next read. On watch streams that is one large malloc per read, and each made glibc
 * consolidate its fast bins: about 5 % of the manager's CPU on Kueue's benchmark. A few
 * long-lived connections can afford to keep their buffers. Called when libcurl sets up a
 * connection's TLS (OpenSSL builds of libcurl only: elsewhere the option is refused, and
 * nothing changes). */
static CURLcode keep_tls_buffers(CURL *easy, void *ssl_ctx, void *arg)
{
	(void)easy;
	(void)arg;
	SSL_CTX_clear_mode((SSL_CTX *)ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
	return CURLE_OK;
}

/* Makes the call's curl handle, as it leaves the queue. 0 or -ENOMEM. */
static int build_easy(struct kube_client *c, struct kube_call *call)
{
	CURL *e = call->easy = curl_easy_init();
	if (!e)
		return -ENOMEM;
	curl_easy_setopt(e, CURLOPT_URL, call->url);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, call->method);
	curl_easy_setopt(e, CURLOPT_PRIVATE, call);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, call);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 10L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, call->timeout_s);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "muster/" MUSTER_VERSION);
	curl_easy_setopt(e, CURLOPT_SSL_CTX_FUNCTION, keep_tls_buffers);
	if (c->cfg.ca_pem) {
		struct curl_blob blob = { c->cfg.ca_pem, strlen(c->cfg.ca_pem), CURL_BLOB_COPY };
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (c->cfg.cert_pem && c->cfg.key_pem) {
		struct curl_blob cert = { c->cfg.cert_pem, strlen(c->cfg.cert_pem),
					  CURL_BLOB_COPY };
		struct curl_blob key = { c->cfg.key_pem, strlen(c->cfg.key_pem), CURL_BLOB_COPY };
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (c->cfg.insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	reread_token(c);
	call->headers = curl_slist_append(NULL, "Accept: application/json");
	for (struct curl_slist *h = c->auth_headers; h && call->headers; h = h->next)
		call->headers = curl_slist_append(call->headers, h->data);
	if (call->headers && call->request) {
		char header[160];
		snprintf(header, sizeof(header), "Content-Type: %s", call->content_type);
		struct curl_slist *h = curl_slist_append(call->headers, header);
		if (!h)
			return -ENOMEM;
		call->headers = h;
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(call->request));
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->request); /* ours until call_free */
		/* POSTFIELDS implies POST; the custom request keeps the real method. */
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, call->method);
	}
	if (!call->headers)
		return -ENOMEM;
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, call->headers);
	return 0;
}

static void enqueue(struct kube_client *c, struct kube_call *call)
{
	queue_append(call->streaming ? &c->streams : &c->requests, call);
	if (!uv_is_active((uv_handle_t *)&c->kick))
		uv_timer_start(&c->kick, on_kick, 0, 0);
}

int kube_request(struct kube_client *c, const char *method, const char *path,
		 const char *content_type, const char *body, kube_done_fn done, void *arg,
		 struct kube_call **out)
{
	struct kube_call *call;
	int rc = call_new(c, method, path, done, arg, &call);
	if (rc != 0)
		return rc;
	call->timeout_s = c->request_timeout_s;
	if (body &&
	    (!(call->request = strdup(body)) ||
	     !(call->content_type = strdup(content_type ? content_type : "application/json")))) {
		call_free(call);
		return -ENOMEM;
	}
	enqueue(c, call);
	if (out)
		*out = call;
	return 0;
}

int kube_stream(struct kube_client *c, const char *path, long timeout_s, kube_data_fn data,
		kube_done_fn done, void *arg, struct kube_call **out)
{
	struct kube_call *call;
	int rc = call_new(c, "GET", path, done, arg, &call);
	if (rc != 0)
		return rc;
	call->streaming = 1;
	call->data = data;
	buf_init(&call->body, 1u << 20); /* only an error Status is kept */
	call->timeout_s = timeout_s;
	enqueue(c, call);
	if (out)
		*out = call;
	return 0;
}

struct sync_call {
	struct kube_reply *out;
	int done;
	int rc; /* 0, or -ENOMEM copying the body */
};

static void on_sync_done(void *arg, const struct kube_response *resp)
{
	struct sync_call *s = arg;
	s->done = 1;
	s->out->status = resp->status;
	s->out->error = resp->error;
	snprintf(s->out->error_text, sizeof(s->out->error_text), "%s", resp->error_text);
	s->out->body = malloc(resp->body_len + 1);
	if (!s->out->body) {
		s->rc = -ENOMEM;
		return;
	}
	memcpy(s->out->body, resp->body, resp->body_len);
	s->out->body[resp->body_len] = '\0';
	s->out->body_len = resp->body_len;
}

int kube_request_sync(struct kube_client *c, const char *method, const char *path, const char *body,
		      struct kube_reply *out)
{
	struct sync_call s = { .out = out };
	struct kube_call *call;
	memset(out, 0, sizeof(*out));
	int rc = kube_request(c, method, path, NULL, body, on_sync_done, &s, &call);
	if (rc != 0)
		return rc;
	while (!s.done) {
		/* The call's own handles keep the loop alive until it ends; a loop with nothing
		 * left while the call is unfinished cannot happen, but must not spin. */
		if (uv_run(c->loop, UV_RUN_ONCE) == 0 && !s.done) {
			kube_call_cancel(call);
			uv_run(c->loop, UV_RUN_NOWAIT);
			return -EIO;
		}
	}
	if (s.rc != 0)
		kube_reply_release(out);
	return s.rc;
}

void kube_reply_release(struct kube_reply *r)
{
	if (!r)
		return;
	free(r->body);
	memset(r, 0, sizeof(*r));
}

void kube_call_cancel(struct kube_call *call)
{
	/* Removal from the multi handle is not allowed inside libcurl callbacks; marking the call
	 * makes on_write abort it, and check_multi_info then frees it silently. */
	call->cancelled = 1;
	struct kube_client *c = call->client;
	if (!uv_is_active((uv_handle_t *)&c->kick))
		uv_timer_start(&c->kick, on_kick, 0, 0);
}

void kube_client_set_request_timeout(struct kube_client *c, long seconds)
{
	c->request_timeout_s = seconds > 0 ? seconds : KUBE_REQUEST_TIMEOUT_S;
}

void kube_client_set_observer(struct kube_client *c, kube_observe_fn fn, void *arg)
{
	c->observe = fn;
	c->observe_arg = arg;
}

void kube_client_set_rate(struct kube_client *c, double qps, int burst)
{
	c->qps = qps;
	c->burst = burst < 1 ? 1 : burst;
	c->tokens = c->burst;
	c->refilled_ms = uv_now(c->loop);
}

int kube_escape(char *dst, size_t size, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(dst);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' ||
			    ch == '~';
		if (n + (plain ? 1 : 3) >= size)
			return -ENOSPC;
		if (plain) {
			dst[n++] = (char)ch;
		} else {
			dst[n++] = '%';
			dst[n++] = hex[ch >> 4];
			dst[n++] = hex[ch & 15];
		}
	}
	dst[n] = '\0';
	return 0;
}
