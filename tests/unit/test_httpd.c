/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for net/http_parse and net/httpd. Parser tests call it directly. Server tests run the
 * server on a uv loop in a background thread and talk to it from the test thread, with
 * libcurl (real client behaviour: keep-alive, TLS verification, ALPN) or with a raw socket
 * (bytes no polite client sends). Anything the loop owns is touched only on the loop thread,
 * through run_on_loop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <uv.h>

#include "net/certs.h"
#include "net/http_parse.h"
#include "net/httpd.h"

/* ---- parser ---- */

static int parse(const char *s, struct http_head *head)
{
	return http_parse_head(s, strlen(s), head);
}

static bool span_is(const char *p, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(p, want, n) == 0;
}

static void test_parse_valid_request(void **state)
{
	static const char req[] = "POST /mutate-batch-v1-job?timeout=10s HTTP/1.1\r\n"
				  "Host: 127.0.0.1:9443\r\n"
				  "User-Agent: kube-apiserver-admission\r\n"
				  "Content-Length: 42\r\n"
				  "Accept: application/json, */*\r\n"
				  "Content-Type:application/json   \r\n"
				  "X-Empty:\r\n"
				  "\r\n"
				  "{\"body\":…}";
	struct http_head head;
	int n = http_parse_head(req, sizeof(req) - 1, &head);
	assert_int_equal(n, (int)(strstr(req, "{") - req));
	assert_true(span_is(head.method, head.method_len, "POST"));
	assert_true(span_is(head.target, head.target_len, "/mutate-batch-v1-job?timeout=10s"));
	assert_int_equal(head.minor_version, 1);
	assert_int_equal(head.header_count, 6);
	assert_true(head.has_content_length);
	assert_int_equal(head.content_length, 42);
	assert_false(head.has_transfer_encoding);
	assert_true(http_head_keep_alive(&head));

	const struct http_header *ct = http_head_find(&head, "content-type");
	assert_non_null(ct);
	assert_true(span_is(ct->value, ct->value_len, "application/json"));
	const struct http_header *empty = http_head_find(&head, "X-EMPTY");
	assert_non_null(empty);
	assert_int_equal(empty->value_len, 0);
	assert_null(http_head_find(&head, "content"));

	struct http_target t;
	assert_int_equal(http_target_split(head.target, head.target_len, &t), 0);
	assert_true(span_is(t.path, t.path_len, "/mutate-batch-v1-job"));
	assert_true(span_is(t.query, t.query_len, "timeout=10s"));
}

static void test_parse_needs_more_until_complete(void **state)
{
	static const char req[] = "\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
	const size_t len = sizeof(req) - 1;
	struct http_head head;
	size_t scanned = 0;

	for (size_t i = 0; i < len; i++) {
		assert_int_equal(http_parse_head(req, i, &head), 0);
		/* The incremental end search agrees with the one-shot parse at every step. */
		assert_int_equal(http_head_end(req + 2, i > 2 ? i - 2 : 0, &scanned), 0);
	}
	assert_int_equal(http_head_end(req + 2, len - 2, &scanned), len - 2);
	assert_int_equal(http_parse_head(req, len, &head), (int)len);
	assert_true(span_is(head.target, head.target_len, "/healthz"));
}

static void test_parse_rejects_malformed(void **state)
{
#define CASE(literal, rc)                        \
	{                                        \
		literal, sizeof(literal) - 1, rc \
	}
	static const struct {
		const char *req;
		size_t len; /* explicit: one case holds a NUL */
		int rc;
	} cases[] = {
		CASE("GARBAGE\r\n\r\n", -EBADMSG),
		CASE("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1 \r\nHost: x\r\n\r\n", -EBADMSG),
		CASE("GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost : x\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\n\r\n", -EBADMSG), /* 1.1 without Host */
		CASE("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		     -EBADMSG),
		CASE("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", -EBADMSG),
		CASE("GET / HTTP/2.0\r\nHost: a\r\n\r\n", -EPROTONOSUPPORT),
		CASE("GET / HTTP/1.10\r\nHost: a\r\n\r\n", -EBADMSG),
		CASE("GET / http/1.1\r\nHost: a\r\n\r\n", -EBADMSG),
		CASE("GET /\r\n\r\n", -EBADMSG), /* HTTP/0.9 */
	};
#undef CASE
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_head head;
		int rc = http_parse_head(cases[i].req, cases[i].len, &head);
		if (rc != cases[i].rc)
			fail_msg("case %zu: got %d, want %d", i, rc, cases[i].rc);
	}
}

static void test_parse_fields_and_limits(void **state)
{
	struct http_head head;

	assert_int_equal(parse("GET / HTTP/1.0\r\n\r\n", &head), 18);
	assert_int_equal(head.minor_version, 0);
	assert_false(http_head_keep_alive(&head));
	assert_true(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &head) > 0);
	assert_true(http_head_keep_alive(&head));
	assert_true(parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, CLOSE\r\n\r\n", &head) >
		    0);
	assert_false(http_head_keep_alive(&head));
	assert_true(parse("GET / HTTP/1.9\r\nHost: a\r\n\r\n", &head) > 0);
	assert_int_equal(head.minor_version, 1);

	assert_true(parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
			  &head) > 0);
	assert_true(head.has_transfer_encoding);
	assert_true(parse("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\n\r\n", &head) > 0);
	assert_true(head.expect_continue);
	assert_false(head.expect_unknown);
	assert_true(parse("POST / HTTP/1.1\r\nHost: a\r\nExpect: teapot\r\n\r\n", &head) > 0);
	assert_true(head.expect_unknown);
	assert_true(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\nContent-Length: 7\r\n"
			  "\r\n",
			  &head) > 0);
	assert_int_equal(head.content_length, 7);
	assert_true(parse("POST / HTTP/1.1\r\nHost: a\r\n"
			  "Content-Length: 99999999999999999999999999\r\n\r\n",
			  &head) > 0);
	assert_true(head.content_length == UINT64_MAX);

	/* Too many fields. */
	char many[HTTP_MAX_HEADERS * 8 + 64];
	size_t n = (size_t)snprintf(many, sizeof(many), "GET / HTTP/1.1\r\nHost: a\r\n");
	for (int i = 0; i < HTTP_MAX_HEADERS; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "X%d: 1\r\n", i);
	snprintf(many + n, sizeof(many) - n, "\r\n");
	assert_int_equal(parse(many, &head), -EMSGSIZE);

	/* Too long, complete or not. */
	char *big = malloc(HTTP_HEAD_MAX + 64);
	assert_non_null(big);
	n = (size_t)snprintf(big, 64, "GET / HTTP/1.1\r\nHost: a\r\nX: ");
	memset(big + n, 'a', HTTP_HEAD_MAX - n);
	assert_int_equal(http_parse_head(big, HTTP_HEAD_MAX - 1, &head), 0);
	assert_int_equal(http_parse_head(big, HTTP_HEAD_MAX, &head), -EMSGSIZE);
	memcpy(big + HTTP_HEAD_MAX, "\r\n\r\n", 4);
	assert_int_equal(http_parse_head(big, HTTP_HEAD_MAX + 4, &head), -EMSGSIZE);
	/* Exactly at the limit is fine. */
	memcpy(big + HTTP_HEAD_MAX - 4, "\r\n\r\n", 4);
	assert_int_equal(http_parse_head(big, HTTP_HEAD_MAX, &head), HTTP_HEAD_MAX);
	free(big);
}

static void test_target_split_forms(void **state)
{
	struct http_target t;
	assert_int_equal(http_target_split("/a/b", 4, &t), 0);
	assert_true(span_is(t.path, t.path_len, "/a/b"));
	assert_int_equal(t.query_len, 0);
	assert_int_equal(http_target_split("/?", 2, &t), 0);
	assert_true(span_is(t.path, t.path_len, "/"));
	assert_int_equal(t.query_len, 0);
	assert_int_equal(http_target_split("*", 1, &t), 0);
	assert_true(span_is(t.path, t.path_len, "*"));
	assert_int_equal(http_target_split("http://h:1/x?y=1", 16, &t), 0);
	assert_true(span_is(t.path, t.path_len, "/x"));
	assert_true(span_is(t.query, t.query_len, "y=1"));
	assert_int_equal(http_target_split("HTTPS://h?q", 11, &t), 0);
	assert_int_equal(t.path_len, 0);
	assert_true(span_is(t.query, t.query_len, "q"));
	assert_int_equal(http_target_split("http:///x", 9, &t), -EBADMSG);
	assert_int_equal(http_target_split("x", 1, &t), -EBADMSG);
	assert_int_equal(http_target_split("", 0, &t), -EBADMSG);
}

/* ---- server fixture ---- */

struct server {
	uv_loop_t loop;
	uv_async_t wakeup; /* runs the queued call, or the stop, on the loop thread */
	pthread_t thread;
	struct httpd *httpd; /* NULL once stopped */
	int port;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void (*call)(struct server *s, void *arg);
	void *call_arg;
	bool call_done;
	bool stop;
};

static void on_wakeup(uv_async_t *async)
{
	struct server *s = async->data;
	pthread_mutex_lock(&s->lock);
	if (s->call) {
		s->call(s, s->call_arg);
		s->call = NULL;
		s->call_done = true;
		pthread_cond_broadcast(&s->cond);
	}
	if (s->stop) {
		httpd_stop(s->httpd);
		s->httpd = NULL;
		uv_close((uv_handle_t *)&s->wakeup, NULL);
	}
	pthread_mutex_unlock(&s->lock);
}

static void *loop_thread(void *arg)
{
	struct server *s = arg;
	uv_run(&s->loop, UV_RUN_DEFAULT);
	return NULL;
}

static void run_on_loop(struct server *s, void (*fn)(struct server *, void *), void *arg)
{
	pthread_mutex_lock(&s->lock);
	s->call = fn;
	s->call_arg = arg;
	s->call_done = false;
	pthread_mutex_unlock(&s->lock);
	assert_int_equal(uv_async_send(&s->wakeup), 0);
	pthread_mutex_lock(&s->lock);
	while (!s->call_done)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

static void set_body(struct httpd_response *resp, int status, const char *type, const char *text)
{
	resp->status = status;
	resp->content_type = type;
	resp->body = strdup(text);
	resp->body_len = resp->body ? strlen(text) : 0;
}

/* A deferred answer, given by a timer. */
struct later {
	uv_timer_t timer;
	struct httpd_deferred *d;
	char text[64];
};

static void on_later_closed(uv_handle_t *h)
{
	free(h->data);
}

static void on_later(uv_timer_t *t)
{
	struct later *l = t->data;
	httpd_answer(l->d, 200, "text/plain", strdup(l->text), strlen(l->text));
	uv_close((uv_handle_t *)t, on_later_closed);
}

/* /healthz: "ok"; /echo: a summary line of the request, then its body; /big?n=N: N bytes;
 * /later?ms=N: "later N", deferred (httpd_defer) and answered N ms later; /stop: stops the
 * server from inside the handler; anything else 404. */
static void test_handler(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	struct server *s = arg;

	if (strcmp(req->path, "/later") == 0) {
		struct later *l = calloc(1, sizeof(*l));
		unsigned ms = (unsigned)strtoul(req->query + 3, NULL, 10);
		if (!l || !(l->d = httpd_defer(req))) {
			free(l);
			return; /* 500 */
		}
		snprintf(l->text, sizeof(l->text), "later %u", ms);
		uv_timer_init(&s->loop, &l->timer);
		l->timer.data = l;
		uv_timer_start(&l->timer, on_later, ms, 0);
		set_body(resp, 200, "text/plain", "ignored"); /* a deferred answer ignores resp */
	} else if (strcmp(req->path, "/healthz") == 0) {
		set_body(resp, 200, "text/plain", "ok");
	} else if (strcmp(req->path, "/echo") == 0) {
		const char *ct = httpd_request_header(req, "content-type");
		const char *xt = httpd_request_header(req, "X-Test");
		int nul = req->body[req->body_len] == '\0';
		char line[512];
		int n = snprintf(line, sizeof(line), "%s %s ?%s ct=%s x=%s nul=%d\n", req->method,
				 req->path, req->query, ct ? ct : "-", xt ? xt : "-", nul);
		if (n < 0 || (size_t)n >= sizeof(line))
			return; /* 500 */
		resp->body = malloc((size_t)n + req->body_len);
		if (!resp->body)
			return;
		memcpy(resp->body, line, (size_t)n);
		memcpy(resp->body + n, req->body, req->body_len);
		resp->body_len = (size_t)n + req->body_len;
		resp->status = 200;
		resp->content_type = "application/octet-stream";
	} else if (strcmp(req->path, "/big") == 0) {
		size_t n = strtoul(req->query + 2, NULL, 10);
		resp->body = malloc(n);
		if (!resp->body)
			return;
		memset(resp->body, 'b', n);
		resp->body_len = n;
		resp->status = 200;
	} else if (strcmp(req->path, "/stop") == 0) {
		httpd_stop(s->httpd);
		s->httpd = NULL;
		set_body(resp, 200, "text/plain", "stopping");
	} else {
		set_body(resp, 404, "text/plain", "not found");
	}
}

static void server_start(struct server *s, struct httpd_options *opt)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(uv_loop_init(&s->loop), 0);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	opt->handler = test_handler;
	opt->handler_arg = s;
	assert_int_equal(httpd_start(&s->loop, opt, &s->httpd), 0);
	s->port = httpd_port(s->httpd);
	assert_true(s->port > 0);
	assert_int_equal(uv_async_init(&s->loop, &s->wakeup, on_wakeup), 0);
	s->wakeup.data = s;
	assert_int_equal(pthread_create(&s->thread, NULL, loop_thread, s), 0);
}

static void server_stop(struct server *s)
{
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_mutex_unlock(&s->lock);
	assert_int_equal(uv_async_send(&s->wakeup), 0);
	assert_int_equal(pthread_join(s->thread, NULL), 0);
	/* Every handle, connections included, must be closed and freed by now. */
	assert_int_equal(uv_loop_close(&s->loop), 0);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
}

/* ---- curl client ---- */

struct reply {
	long status;
	char *body;
	size_t len;
	long connects; /* new connections made for this transfer */
	long http_version;
	char content_type[128];
};

static size_t collect(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct reply *r = userdata;
	size_t n = size * nmemb;
	char *p = realloc(r->body, r->len + n + 1);
	if (!p)
		return 0;
	memcpy(p + r->len, data, n);
	r->len += n;
	p[r->len] = '\0';
	r->body = p;
	return n;
}

static void reply_release(struct reply *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

static CURLcode fetch(CURL *curl, const char *url, const char *post, size_t post_len,
		      struct curl_slist *headers, struct reply *r)
{
	char *ct = NULL;
	memset(r, 0, sizeof(*r));
	curl_easy_setopt(curl, CURLOPT_URL, url);
	if (post) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)post_len);
	} else {
		curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &r->connects);
	curl_easy_getinfo(curl, CURLINFO_HTTP_VERSION, &r->http_version);
	if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
		snprintf(r->content_type, sizeof(r->content_type), "%s", ct);
	return rc;
}

static void url(char *out, size_t size, const char *scheme, int port, const char *path)
{
	snprintf(out, size, "%s://127.0.0.1:%d%s", scheme, port, path);
}

/* ---- raw socket client ---- */

static int raw_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct timeval tv = { .tv_sec = 5 };
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

static void raw_send(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n > 0);
		data += n;
		len -= (size_t)n;
	}
}

/* Reads until needle has arrived (or, for NULL, until EOF). Returns the bytes read, NUL-
 * terminated in buf; *eof tells whether the server closed. Gives up after 5 s of silence. */
static size_t raw_read(int fd, char *buf, size_t cap, const char *needle, bool *eof)
{
	size_t len = 0;
	*eof = false;
	buf[0] = '\0';
	while (len + 1 < cap) {
		if (needle && strstr(buf, needle))
			break;
		ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			*eof = true;
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
	}
	return len;
}

/* Sends req on a new connection and returns everything until the server closes. */
static size_t raw_exchange(int port, const char *req, size_t req_len, char *buf, size_t cap)
{
	bool eof;
	int fd = raw_connect(port);
	raw_send(fd, req, req_len);
	size_t n = raw_read(fd, buf, cap, NULL, &eof);
	close(fd);
	assert_true(eof);
	return n;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- plain HTTP ---- */

static void test_plain_get(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	struct reply r;
	char u[128];

	server_start(&s, &opt);
	CURL *curl = curl_easy_init();
	assert_non_null(curl);
	url(u, sizeof(u), "http", s.port, "/healthz");
	assert_int_equal(fetch(curl, u, NULL, 0, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "ok");
	assert_string_equal(r.content_type, "text/plain");
	reply_release(&r);

	url(u, sizeof(u), "http", s.port, "/nope");
	assert_int_equal(fetch(curl, u, NULL, 0, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 404);
	reply_release(&r);
	curl_easy_cleanup(curl);
	server_stop(&s);
}

static void test_post_echo(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	struct reply r;
	char u[128];
	static const char body[] = "{\"kind\":\"AdmissionReview\"}";

	server_start(&s, &opt);
	CURL *curl = curl_easy_init();
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	h = curl_slist_append(h, "X-Test:   padded value  ");
	url(u, sizeof(u), "http", s.port, "/echo?timeout=10s");
	assert_int_equal(fetch(curl, u, body, sizeof(body) - 1, h, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "POST /echo ?timeout=10s ct=application/json x=padded value "
				    "nul=1\n{\"kind\":\"AdmissionReview\"}");
	reply_release(&r);

	/* An empty body is "" with length 0, not NULL. */
	url(u, sizeof(u), "http", s.port, "/echo");
	assert_int_equal(fetch(curl, u, "", 0, NULL, &r), CURLE_OK);
	assert_string_equal(r.body,
			    "POST /echo ? ct=application/x-www-form-urlencoded x=- nul=1\n");
	reply_release(&r);
	curl_slist_free_all(h);
	curl_easy_cleanup(curl);
	server_stop(&s);
}

static void test_keepalive_reuses_connection(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	struct reply r;
	char u[128];

	server_start(&s, &opt);
	CURL *curl = curl_easy_init();
	url(u, sizeof(u), "http", s.port, "/echo");
	for (int i = 0; i < 5; i++) {
		if (i % 2)
			assert_int_equal(fetch(curl, u, "x", 1, NULL, &r), CURLE_OK);
		else
			assert_int_equal(fetch(curl, u, NULL, 0, NULL, &r), CURLE_OK);
		assert_int_equal(r.status, 200);
		assert_int_equal(r.connects, i == 0 ? 1 : 0);
		reply_release(&r);
	}
	curl_easy_cleanup(curl);
	/* Stopping with an idle keep-alive connection open must free everything. */
	server_stop(&s);
}

static void test_large_bodies(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	struct reply r;
	char u[128];
	const size_t len = 3u << 20; /* above the write high-water mark: pauses and resumes */

	server_start(&s, &opt);
	char *body = malloc(len);
	assert_non_null(body);
	for (size_t i = 0; i < len; i++)
		body[i] = (char)('a' + i % 26);
	CURL *curl = curl_easy_init();
	url(u, sizeof(u), "http", s.port, "/echo");
	assert_int_equal(fetch(curl, u, body, len, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	const char *nl = memchr(r.body, '\n', r.len);
	assert_non_null(nl);
	assert_int_equal(r.len - (size_t)(nl + 1 - r.body), len);
	assert_memory_equal(nl + 1, body, len);
	reply_release(&r);

	url(u, sizeof(u), "http", s.port, "/big?n=5000000");
	assert_int_equal(fetch(curl, u, NULL, 0, NULL, &r), CURLE_OK);
	assert_int_equal(r.len, 5000000);
	reply_release(&r);
	free(body);
	curl_easy_cleanup(curl);
	server_stop(&s);
}

static void test_body_too_large(void **state)
{
	struct server s;
	struct httpd_options opt = { .max_body = 1024 };
	struct reply r;
	char u[128], buf[4096];

	server_start(&s, &opt);
	char *body = calloc(1, 4096);
	CURL *curl = curl_easy_init();
	url(u, sizeof(u), "http", s.port, "/echo");
	assert_int_equal(fetch(curl, u, body, 4096, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 413);
	reply_release(&r);
	assert_int_equal(fetch(curl, u, body, 1024, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	reply_release(&r);
	free(body);
	curl_easy_cleanup(curl);

	/* A huge declared length is refused before any of the body is read. */
	static const char huge[] = "POST /echo HTTP/1.1\r\nHost: x\r\n"
				   "Content-Length: 18446744073709551616\r\n\r\n";
	raw_exchange(s.port, huge, sizeof(huge) - 1, buf, sizeof(buf));
	assert_true(strncmp(buf, "HTTP/1.1 413 ", 13) == 0);
	assert_non_null(strstr(buf, "Connection: close\r\n"));

	/* With Expect: 100-continue, 413 comes instead of the 100. */
	static const char expect[] = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n"
				     "Expect: 100-continue\r\n\r\n";
	raw_exchange(s.port, expect, sizeof(expect) - 1, buf, sizeof(buf));
	assert_true(strncmp(buf, "HTTP/1.1 413 ", 13) == 0);
	server_stop(&s);
}

/* post_head LEN: a POST head declaring a body of LEN bytes. */
static int post_head(char *buf, size_t size, size_t len)
{
	return snprintf(buf, size, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n",
			len);
}

/* The total of bodies buffered at once is bounded: clients that hold large bodies open get 429
 * once large bodies use half the budget; small requests still pass beside them, until the
 * whole budget is used. Answered bodies give their share back. */
static void test_body_budget(void **state)
{
	struct server s;
	/* A sixteenth of 16,000 is 1,000: the 1,500-byte bodies are large, 900 small. */
	struct httpd_options opt = { .max_body = 4000, .max_buffered = 16000 };
	char head[128], buf[4096];
	bool eof;
	int hold[8];

	server_start(&s, &opt);
	/* Five large bodies (7,500 bytes) fit in the half for large ones; the sixth gets 429. */
	for (int i = 0; i < 5; i++) {
		hold[i] = raw_connect(s.port);
		raw_send(hold[i], head, (size_t)post_head(head, sizeof(head), 1500));
		raw_send(hold[i], "x", 1); /* the body trickles: counted from its head */
	}
	int refused = raw_connect(s.port);
	raw_send(refused, head, (size_t)post_head(head, sizeof(head), 1500));
	raw_read(refused, buf, sizeof(buf), NULL, &eof);
	assert_true(strncmp(buf, "HTTP/1.1 429 ", 13) == 0);
	assert_true(eof);
	close(refused);

	/* A small request still passes beside them. */
	char *small = calloc(1, 900);
	CURL *curl = curl_easy_init();
	struct reply r;
	char u[128];
	url(u, sizeof(u), "http", s.port, "/echo");
	assert_int_equal(fetch(curl, u, small, 900, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 200);
	reply_release(&r);

	/* Small bodies held open fill the rest (7,500 + 9 * 900 = 15,600): then even a small one
	 * is refused. */
	int filler[9];
	for (int i = 0; i < 9; i++) {
		filler[i] = raw_connect(s.port);
		raw_send(filler[i], head, (size_t)post_head(head, sizeof(head), 900));
	}
	/* Let the server read the nine heads before the next request. */
	usleep(200000);
	assert_int_equal(fetch(curl, u, small, 900, NULL, &r), CURLE_OK);
	assert_int_equal(r.status, 429);
	reply_release(&r);

	/* A large body that completes is answered and returns its share: another fits again. */
	char *rest = malloc(1499);
	memset(rest, 'x', 1499);
	raw_send(hold[0], rest, 1499);
	raw_read(hold[0], buf, sizeof(buf), "\r\n\r\n", &eof);
	assert_true(strncmp(buf, "HTTP/1.1 200 ", 13) == 0);
	for (int i = 0; i < 9; i++)
		close(filler[i]);
	usleep(200000);
	int again = raw_connect(s.port);
	raw_send(again, head, (size_t)post_head(head, sizeof(head), 1500));
	raw_send(again, rest, 1499);
	raw_send(again, "x", 1);
	raw_read(again, buf, sizeof(buf), "\r\n\r\n", &eof);
	assert_true(strncmp(buf, "HTTP/1.1 200 ", 13) == 0);
	close(again);
	for (int i = 0; i < 5; i++)
		close(hold[i]);
	free(rest);
	free(small);
	curl_easy_cleanup(curl);
	server_stop(&s);
}

static void test_bad_requests_get_4xx_and_close(void **state)
{
	static const struct {
		const char *req;
		const char *status;
	} cases[] = {
		{ "GARBAGE\r\n\r\n", "HTTP/1.1 400 " },
		{ "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", "HTTP/1.1 400 " },
		{ "GET /\x7f HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 " },
		{ "GET nope HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 " },
		{ "GET / HTTP/3.0\r\nHost: x\r\n\r\n", "HTTP/1.1 505 " },
		{ "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "5\r\nhello\r\n0\r\n\r\n",
		  "HTTP/1.1 411 " },
		{ "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		  "HTTP/1.1 411 " },
		{ "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nContent-Length: 1\r\n\r\nx",
		  "HTTP/1.1 417 " },
		/* A bad second request still gets the first one answered. */
		{ "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nBAD\r\n\r\n", "HTTP/1.1 200 " },
	};
	struct server s;
	struct httpd_options opt = { 0 };
	char buf[4096];

	server_start(&s, &opt);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		raw_exchange(s.port, cases[i].req, strlen(cases[i].req), buf, sizeof(buf));
		if (strncmp(buf, cases[i].status, strlen(cases[i].status)) != 0)
			fail_msg("case %zu: got %.40s", i, buf);
	}
	raw_exchange(s.port, cases[8].req, strlen(cases[8].req), buf, sizeof(buf));
	assert_non_null(strstr(buf, "\r\n\r\nokHTTP/1.1 400 "));
	server_stop(&s);
}

static void test_head_too_large(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	char buf[4096];
	const size_t pad = 20000;

	server_start(&s, &opt);
	char *req = malloc(pad + 128);
	assert_non_null(req);
	size_t n = (size_t)snprintf(req, 128, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ");
	memset(req + n, 'a', pad);
	n += pad;
	memcpy(req + n, "\r\n\r\n", 4);
	n += 4;
	raw_exchange(s.port, req, n, buf, sizeof(buf));
	assert_true(strncmp(buf, "HTTP/1.1 431 ", 13) == 0);

	/* Also when the head never ends. */
	raw_exchange(s.port, req, n - 4, buf, sizeof(buf));
	assert_true(strncmp(buf, "HTTP/1.1 431 ", 13) == 0);
	free(req);
	server_stop(&s);
}

static void test_pipelined_requests_answered_in_order(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	char buf[4096];
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
				  "\r\n" /* a stray empty line between requests is ignored */
				  "POST /echo?n=2 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n"
				  "abc"
				  "GET /echo?n=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
				  "GET /never HTTP/1.1\r\nHost: x\r\n\r\n";

	server_start(&s, &opt);
	raw_exchange(s.port, req, sizeof(req) - 1, buf, sizeof(buf));
	const char *first = strstr(buf, "\r\n\r\nok");
	const char *second = strstr(buf, "POST /echo ?n=2 ct=- x=- nul=1\nabc");
	const char *third = strstr(buf, "GET /echo ?n=3 ct=- x=- nul=1\n");
	assert_non_null(first);
	assert_non_null(second);
	assert_non_null(third);
	assert_true(first < second && second < third);
	assert_null(strstr(buf, "404"));
	server_stop(&s);
}

/* A deferred answer keeps its place: the request after it waits, and is answered after it. */
static void test_deferred_answer_in_order(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	char buf[4096];
	static const char req[] = "GET /later?ms=80 HTTP/1.1\r\nHost: x\r\n\r\n"
				  "GET /later?ms=1 HTTP/1.1\r\nHost: x\r\n\r\n"
				  "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

	server_start(&s, &opt);
	raw_exchange(s.port, req, sizeof(req) - 1, buf, sizeof(buf));
	const char *first = strstr(buf, "\r\n\r\nlater 80");
	const char *second = strstr(buf, "\r\n\r\nlater 1");
	const char *third = strstr(buf, "\r\n\r\nok");
	assert_non_null(first);
	assert_non_null(second);
	assert_non_null(third);
	assert_true(first < second && second < third);
	assert_null(strstr(buf, "ignored"));
	/* A client that goes before its answer: the answer only frees, the server serves on. */
	int fd = raw_connect(s.port);
	static const char gone[] = "GET /later?ms=50 HTTP/1.1\r\nHost: x\r\n\r\n";
	raw_send(fd, gone, sizeof(gone) - 1);
	close(fd);
	usleep(100 * 1000);
	static const char after[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	raw_exchange(s.port, after, sizeof(after) - 1, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\r\n\r\nok"));
	/* The server stopped with an answer outstanding: the answer only frees. */
	fd = raw_connect(s.port);
	static const char pending[] = "GET /later?ms=100 HTTP/1.1\r\nHost: x\r\n\r\n";
	raw_send(fd, pending, sizeof(pending) - 1);
	usleep(20 * 1000);
	server_stop(&s);
	close(fd);
}

static void test_expect_continue(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	char buf[4096];
	bool eof;
	static const char head[] = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
				   "Expect: 100-continue\r\nConnection: close\r\n\r\n";

	server_start(&s, &opt);
	int fd = raw_connect(s.port);
	raw_send(fd, head, sizeof(head) - 1);
	raw_read(fd, buf, sizeof(buf), "\r\n\r\n", &eof);
	assert_string_equal(buf, "HTTP/1.1 100 Continue\r\n\r\n");
	raw_send(fd, "hello", 5);
	raw_read(fd, buf, sizeof(buf), NULL, &eof);
	assert_true(eof);
	assert_true(strncmp(buf, "HTTP/1.1 200 ", 13) == 0);
	assert_non_null(strstr(buf, "\nhello"));
	close(fd);
	server_stop(&s);
}

static void test_http10_and_head(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	char buf[4096];
	bool eof;

	server_start(&s, &opt);
	/* 1.0 without keep-alive: answered, then closed; Host is optional. */
	static const char v10[] = "GET /healthz HTTP/1.0\r\n\r\n";
	raw_exchange(s.port, v10, sizeof(v10) - 1, buf, sizeof(buf));
	assert_true(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0);
	assert_non_null(strstr(buf, "Connection: close\r\n"));
	assert_non_null(strstr(buf, "Date: "));

	/* 1.0 with keep-alive stays open and says so. */
	static const char v10ka[] = "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
	int fd = raw_connect(s.port);
	raw_send(fd, v10ka, sizeof(v10ka) - 1);
	raw_read(fd, buf, sizeof(buf), "\r\n\r\nok", &eof);
	assert_false(eof);
	assert_non_null(strstr(buf, "Connection: keep-alive\r\n"));
	close(fd);

	/* HEAD: the length of the body, but no body. */
	static const char head[] = "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	size_t n = raw_exchange(s.port, head, sizeof(head) - 1, buf, sizeof(buf));
	assert_non_null(strstr(buf, "Content-Length: 2\r\n"));
	assert_true(n >= 4 && strcmp(buf + n - 4, "\r\n\r\n") == 0);
	server_stop(&s);
}

static void test_request_timeout_closes_slow_client(void **state)
{
	struct server s;
	struct httpd_options opt = { .request_timeout_ms = 300 };
	char buf[256];
	bool eof;

	server_start(&s, &opt);
	/* A head that never completes, and a connection that never sends anything. */
	int fd = raw_connect(s.port);
	int silent = raw_connect(s.port);
	double start = now_seconds();
	raw_send(fd, "GET / HTTP/1.1\r\nHo", 18);
	assert_int_equal(raw_read(fd, buf, sizeof(buf), NULL, &eof), 0);
	assert_true(eof);
	assert_int_equal(raw_read(silent, buf, sizeof(buf), NULL, &eof), 0);
	assert_true(eof);
	double elapsed = now_seconds() - start;
	assert_true(elapsed > 0.25 && elapsed < 4.5);
	close(fd);
	close(silent);
	server_stop(&s);
}

static void test_idle_timeout_closes_keepalive(void **state)
{
	struct server s;
	struct httpd_options opt = { .idle_timeout_ms = 300 };
	char buf[1024];
	bool eof;
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

	server_start(&s, &opt);
	int fd = raw_connect(s.port);
	raw_send(fd, req, sizeof(req) - 1);
	raw_read(fd, buf, sizeof(buf), "\r\n\r\nok", &eof);
	assert_false(eof);
	double start = now_seconds();
	assert_int_equal(raw_read(fd, buf, sizeof(buf), NULL, &eof), 0);
	assert_true(eof);
	double elapsed = now_seconds() - start;
	assert_true(elapsed > 0.2 && elapsed < 4.5);
	close(fd);
	server_stop(&s);
}

static void test_connection_limit(void **state)
{
	struct server s;
	struct httpd_options opt = { .max_connections = 2 };
	char buf[1024];
	bool eof;
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

	server_start(&s, &opt);
	int a = raw_connect(s.port);
	int b = raw_connect(s.port);
	int over = raw_connect(s.port);
	assert_int_equal(raw_read(over, buf, sizeof(buf), NULL, &eof), 0);
	assert_true(eof);
	close(over);
	raw_send(a, req, sizeof(req) - 1);
	raw_read(a, buf, sizeof(buf), "\r\n\r\nok", &eof);
	assert_non_null(strstr(buf, "\r\n\r\nok"));
	raw_send(b, req, sizeof(req) - 1);
	raw_read(b, buf, sizeof(buf), "\r\n\r\nok", &eof);
	assert_non_null(strstr(buf, "\r\n\r\nok"));
	close(a);
	close(b);
	server_stop(&s);
}

static void test_stop_from_handler(void **state)
{
	struct server s;
	struct httpd_options opt = { 0 };
	struct reply r;
	char u[128];

	server_start(&s, &opt);
	CURL *curl = curl_easy_init();
	url(u, sizeof(u), "http", s.port, "/stop");
	/* The connection is closed along with the server, so there is no answer. */
	assert_int_not_equal(fetch(curl, u, NULL, 0, NULL, &r), CURLE_OK);
	reply_release(&r);
	curl_easy_cleanup(curl);
	server_stop(&s);
}

static void test_start_rejects_bad_options(void **state)
{
	uv_loop_t loop;
	struct httpd *h = NULL;
	struct httpd_options opt = { .handler = test_handler };

	assert_int_equal(uv_loop_init(&loop), 0);
	opt.host = "localhost"; /* names are not resolved */
	assert_int_equal(httpd_start(&loop, &opt, &h), -EINVAL);
	opt.host = NULL;
	opt.cert_pem = "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n";
	assert_int_equal(httpd_start(&loop, &opt, &h), -EINVAL); /* key missing */
	opt.key_pem = "nope";
	assert_int_equal(httpd_start(&loop, &opt, &h), -EINVAL); /* garbage */
	opt.cert_pem = opt.key_pem = NULL;
	opt.handler = NULL;
	assert_int_equal(httpd_start(&loop, &opt, &h), -EINVAL);

	/* A port in use: the failed server's handle is closed by the loop. */
	opt.handler = test_handler;
	assert_int_equal(httpd_start(&loop, &opt, &h), 0);
	struct httpd *second = NULL;
	opt.port = httpd_port(h);
	assert_int_equal(httpd_start(&loop, &opt, &second), -EADDRINUSE);
	assert_null(second);
	httpd_stop(h);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---- TLS ---- */

static const char *const test_dns[] = { "localhost", NULL };
static const char *const test_ips[] = { "127.0.0.1", "::1", NULL };

static CURL *tls_client(const char *ca_pem)
{
	CURL *curl = curl_easy_init();
	struct curl_blob blob = { .data = (void *)ca_pem,
				  .len = strlen(ca_pem),
				  .flags = CURL_BLOB_COPY };
	assert_non_null(curl);
	assert_int_equal(curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &blob), CURLE_OK);
	curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	/* Offer h2 too: ALPN must pick http/1.1. */
	curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	return curl;
}

static void test_https_verified_keepalive(void **state)
{
	struct certs certs;
	struct server s;
	struct reply r;
	char u[128];

	assert_int_equal(certs_generate(test_dns, test_ips, &certs), 0);
	struct httpd_options opt = { .cert_pem = certs.cert_pem, .key_pem = certs.key_pem };
	server_start(&s, &opt);

	CURL *curl = tls_client(certs.ca_pem);
	url(u, sizeof(u), "https", s.port, "/echo?tls=1");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fetch(curl, u, "secret", 6, NULL, &r), CURLE_OK);
		assert_int_equal(r.status, 200);
		assert_int_equal(r.connects, i == 0 ? 1 : 0);
		assert_int_equal(r.http_version, CURL_HTTP_VERSION_1_1);
		assert_string_equal(r.body, "POST /echo ?tls=1 ct=application/x-www-form-urlencoded"
					    " x=- nul=1\nsecret");
		reply_release(&r);
	}
	curl_easy_cleanup(curl);

	/* The DNS SAN works too: "localhost" pinned to 127.0.0.1 so /etc/hosts does not matter. */
	char pin[64];
	snprintf(pin, sizeof(pin), "localhost:%d:127.0.0.1", s.port);
	struct curl_slist *resolve = curl_slist_append(NULL, pin);
	curl = tls_client(certs.ca_pem);
	curl_easy_setopt(curl, CURLOPT_RESOLVE, resolve);
	snprintf(u, sizeof(u), "https://localhost:%d/healthz", s.port);
	assert_int_equal(fetch(curl, u, NULL, 0, NULL, &r), CURLE_OK);
	assert_string_equal(r.body, "ok");
	reply_release(&r);
	curl_easy_cleanup(curl);
	curl_slist_free_all(resolve);
	url(u, sizeof(u), "https", s.port, "/echo?tls=1");

	/* A client that trusts another CA refuses the server. */
	struct certs other;
	assert_int_equal(certs_generate(test_dns, test_ips, &other), 0);
	curl = tls_client(other.ca_pem);
	assert_int_equal(fetch(curl, u, NULL, 0, NULL, &r), CURLE_PEER_FAILED_VERIFICATION);
	reply_release(&r);
	curl_easy_cleanup(curl);
	certs_release(&other);

	/* Plain HTTP to the TLS port fails for that client only. */
	char buf[1024];
	static const char plain[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
	raw_exchange(s.port, plain, sizeof(plain) - 1, buf, sizeof(buf));
	assert_null(strstr(buf, "HTTP/1.1 200"));

	/* Large bodies both ways through the TLS pump and the write back-pressure. */
	const size_t len = 3u << 20;
	char *body = malloc(len);
	assert_non_null(body);
	for (size_t i = 0; i < len; i++)
		body[i] = (char)('A' + i % 26);
	curl = tls_client(certs.ca_pem);
	url(u, sizeof(u), "https", s.port, "/echo");
	assert_int_equal(fetch(curl, u, body, len, NULL, &r), CURLE_OK);
	const char *nl = memchr(r.body, '\n', r.len);
	assert_non_null(nl);
	assert_int_equal(r.len - (size_t)(nl + 1 - r.body), len);
	assert_memory_equal(nl + 1, body, len);
	reply_release(&r);
	url(u, sizeof(u), "https", s.port, "/big?n=4000000");
	assert_int_equal(fetch(curl, u, NULL, 0, NULL, &r), CURLE_OK);
	assert_int_equal(r.len, 4000000);
	assert_int_equal(r.connects, 0);
	reply_release(&r);
	curl_easy_cleanup(curl);
	free(body);

	server_stop(&s);
	certs_release(&certs);
}

static void test_https_ipv6_san(void **state)
{
	struct certs certs;
	struct server s;
	struct reply r;
	char u[128];

	assert_int_equal(certs_generate(test_dns, test_ips, &certs), 0);
	struct httpd_options opt = { .host = "::1",
				     .cert_pem = certs.cert_pem,
				     .key_pem = certs.key_pem };
	memset(&s, 0, sizeof(s));
	/* Hosts without IPv6 loopback cannot run this. */
	int probe = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	bool have_v6 = probe >= 0 && bind(probe, (struct sockaddr *)&sin6, sizeof(sin6)) == 0;
	if (probe >= 0)
		close(probe);
	if (!have_v6) {
		certs_release(&certs);
		skip();
	}
	server_start(&s, &opt);
	CURL *curl = tls_client(certs.ca_pem);
	snprintf(u, sizeof(u), "https://[::1]:%d/healthz", s.port);
	assert_int_equal(fetch(curl, u, NULL, 0, NULL, &r), CURLE_OK);
	assert_string_equal(r.body, "ok");
	reply_release(&r);
	curl_easy_cleanup(curl);
	server_stop(&s);
	certs_release(&certs);
}

struct swap {
	const struct certs *certs;
	int rc;
};

static void swap_certificate(struct server *s, void *arg)
{
	struct swap *sw = arg;
	sw->rc = httpd_set_certificate(s->httpd, sw->certs->cert_pem, sw->certs->key_pem);
}

static void test_https_certificate_swap(void **state)
{
	struct certs old_certs, new_certs;
	struct server s;
	struct reply r;
	char u[128];

	assert_int_equal(certs_generate(test_dns, test_ips, &old_certs), 0);
	assert_int_equal(certs_generate(test_dns, test_ips, &new_certs), 0);
	struct httpd_options opt = { .cert_pem = old_certs.cert_pem, .key_pem = old_certs.key_pem };
	server_start(&s, &opt);
	url(u, sizeof(u), "https", s.port, "/healthz");

	CURL *old_client = tls_client(old_certs.ca_pem);
	assert_int_equal(fetch(old_client, u, NULL, 0, NULL, &r), CURLE_OK);
	reply_release(&r);

	/* A key that does not belong to the certificate is refused; the old pair stays. */
	struct certs mismatched = { .cert_pem = new_certs.cert_pem, .key_pem = old_certs.key_pem };
	struct swap sw = { .certs = &mismatched };
	run_on_loop(&s, swap_certificate, &sw);
	assert_int_equal(sw.rc, -EINVAL);

	sw.certs = &new_certs;
	run_on_loop(&s, swap_certificate, &sw);
	assert_int_equal(sw.rc, 0);

	/* The established connection keeps working; new ones get the new certificate. */
	assert_int_equal(fetch(old_client, u, NULL, 0, NULL, &r), CURLE_OK);
	assert_int_equal(r.connects, 0);
	reply_release(&r);
	curl_easy_setopt(old_client, CURLOPT_FRESH_CONNECT, 1L);
	assert_int_equal(fetch(old_client, u, NULL, 0, NULL, &r), CURLE_PEER_FAILED_VERIFICATION);
	reply_release(&r);
	CURL *new_client = tls_client(new_certs.ca_pem);
	assert_int_equal(fetch(new_client, u, NULL, 0, NULL, &r), CURLE_OK);
	assert_string_equal(r.body, "ok");
	reply_release(&r);

	curl_easy_cleanup(old_client);
	curl_easy_cleanup(new_client);
	server_stop(&s);
	certs_release(&old_certs);
	certs_release(&new_certs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid_request),
		cmocka_unit_test(test_parse_needs_more_until_complete),
		cmocka_unit_test(test_parse_rejects_malformed),
		cmocka_unit_test(test_parse_fields_and_limits),
		cmocka_unit_test(test_target_split_forms),
		cmocka_unit_test(test_plain_get),
		cmocka_unit_test(test_post_echo),
		cmocka_unit_test(test_keepalive_reuses_connection),
		cmocka_unit_test(test_large_bodies),
		cmocka_unit_test(test_body_too_large),
		cmocka_unit_test(test_body_budget),
		cmocka_unit_test(test_bad_requests_get_4xx_and_close),
		cmocka_unit_test(test_head_too_large),
		cmocka_unit_test(test_pipelined_requests_answered_in_order),
		cmocka_unit_test(test_deferred_answer_in_order),
		cmocka_unit_test(test_expect_continue),
		cmocka_unit_test(test_http10_and_head),
		cmocka_unit_test(test_request_timeout_closes_slow_client),
		cmocka_unit_test(test_idle_timeout_closes_keepalive),
		cmocka_unit_test(test_connection_limit),
		cmocka_unit_test(test_stop_from_handler),
		cmocka_unit_test(test_start_rejects_bad_options),
		cmocka_unit_test(test_https_verified_keepalive),
		cmocka_unit_test(test_https_ipv6_san),
		cmocka_unit_test(test_https_certificate_swap),
	};
	/* A server writing to a socket the client already closed must not kill the test. */
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return 1;
	int failed = cmocka_run_group_tests_name("httpd", tests, NULL, NULL);
	curl_global_cleanup();
	return failed;
}
