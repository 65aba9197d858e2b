/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HTTP/1.1 server on libuv, plain or TLS through OpenSSL memory BIOs. See httpd.h for the
 * contract. Everything runs on the loop thread; nothing here blocks.
 *
 * A connection moves through
 *   CONN_HEAD -> CONN_BODY -> (handler, response) -> CONN_HEAD …   while keep-alive lasts, then
 * (a deferred answer waits in CONN_WAIT between the handler and the response), then
 *   CONN_DRAIN (last response queued, uv_shutdown pending) -> CONN_LINGER (FIN sent, input
 *   discarded until EOF or a short timeout) -> closed.
 * Lingering matters for error answers such as 413: closing a socket with unread input makes the
 * kernel send RST, which can destroy the response before the client has read it.
 *
 * Memory: a conn owns its SSL (and with it both BIOs), its input buffer and nothing else; every
 * write request owns its bytes until its callback. A conn is freed only when both of its
 * handles (tcp, timer) have closed; struct httpd only when the listener and every conn have.
 */
#include "net/httpd.h"

#include "core/container_of.h"
#include "net/http_parse.h"
#include "util/buf.h"
#include "util/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define READ_CHUNK 65536
/* One TLS record holds at most 16 KiB of plaintext. */
#define TLS_PLAINTEXT_CHUNK 16384
/* Stop reading requests while more than this is queued for a client that is not reading. */
#define WRITE_HIGH_WATER ((size_t)1 << 20)
#define WRITE_LOW_WATER (WRITE_HIGH_WATER / 4)
/* Largest single uv_write from the TLS output BIO; only bounds one allocation. */
#define TLS_FLUSH_CHUNK ((size_t)1 << 20)
#define LINGER_TIMEOUT_MS 2000
#define LISTEN_BACKLOG 511
#define CONTENT_TYPE_MAX 200

enum conn_state {
	CONN_HEAD, /* reading a request head */
	CONN_BODY, /* head accepted, reading its body */
	CONN_WAIT, /* the handler deferred its answer (httpd_defer); reading stopped */
	CONN_DRAIN, /* last response queued, uv_shutdown waits for it to be written */
	CONN_LINGER, /* FIN sent; discarding input until EOF so the peer is not reset */
};

enum timer_mode {
	TIMER_NONE, /* forces the next conn_update_timer to re-arm */
	TIMER_REQUEST, /* a handshake or request is arriving: request_timeout_ms from its start */
	TIMER_WRITE, /* waiting for the client to read: request_timeout_ms since last progress */
	TIMER_IDLE, /* keep-alive between requests: idle_timeout_ms */
	TIMER_DRAIN, /* final response still being written */
	TIMER_LINGER,
	TIMER_ANSWER, /* a deferred answer: 6 x request_timeout_ms */
};

struct httpd;

struct conn {
	struct httpd *h;
	struct conn *prev, *next; /* h->conns */
	uv_tcp_t tcp;
	uv_timer_t timer;
	uv_shutdown_t shutdown_req;
	int open_handles; /* the conn is freed when this drops to 0 */
	SSL *ssl; /* NULL for plain HTTP; owns both memory BIOs */
	struct buf in; /* plaintext received and not yet consumed */
	size_t head_scan; /* http_head_end progress through in */
	size_t head_len; /* CONN_BODY: bytes of the current head at the start of in */
	size_t body_len; /* CONN_BODY: its Content-Length */
	size_t reserved; /* of the server's max_buffered, for this body */
	size_t write_pending; /* bytes handed to uv_write whose callback has not run */
	enum conn_state state;
	enum timer_mode timer_mode;
	bool served_any; /* a request was answered, so an empty buffer now means idle */
	bool paused; /* too much output queued: input is neither read nor processed */
	bool reading; /* uv_read_start is in effect */
	bool eof; /* the peer shut down its side */
	bool tls_failed; /* a fatal TLS error: SSL_shutdown must not be called */
	bool closing; /* uv_close was called */
	struct httpd_deferred *deferred; /* CONN_WAIT: the answer awaited */
};

struct httpd_deferred {
	struct conn *c; /* NULL once the connection is gone */
	bool send_body, keep_alive;
	int minor_version;
};

struct httpd {
	uv_loop_t *loop;
	uv_tcp_t listener;
	SSL_CTX *ssl_ctx; /* NULL for plain HTTP; each SSL holds its own reference */
	httpd_handler_fn handler;
	void *handler_arg;
	size_t max_body;
	size_t max_buffered, buffered, buffered_large; /* bodies counted, and the large ones */
	size_t in_cap; /* cap on a conn's input buffer: head + body + one read */
	unsigned max_connections;
	unsigned request_timeout_ms;
	unsigned idle_timeout_ms;
	int port;
	unsigned conn_count; /* allocated conns, closing ones included */
	struct conn *conns;
	bool stopping;
	bool listener_closed;
	bool overload_logged; /* "too many connections" is logged once per episode */
	bool budget_logged; /* "over budget", once per episode */
	/* libuv hands each read to on_read before it allocates for the next, so one buffer serves
	 * every connection. */
	char read_buf[READ_CHUNK];
};

struct write_req {
	uv_write_t req;
	struct conn *c;
	size_t len; /* bytes this request accounts for in c->write_pending */
	char *owned; /* a second buffer freed after the write (a response body), or NULL */
	char data[]; /* copied bytes */
};

static void conn_close(struct conn *c);
static void conn_finish(struct conn *c);
static void conn_pump(struct conn *c);
static void conn_update_timer(struct conn *c);

static void log_tls_error(enum log_level level, const char *msg)
{
	char detail[256] = "unknown";
	unsigned long e = ERR_peek_last_error();
	if (e)
		ERR_error_string_n(e, detail, sizeof(detail));
	log_emit(level, msg, LF_STR("error", detail), LF_END);
	ERR_clear_error();
}

static const char *status_reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 202:
		return "Accepted";
	case 204:
		return "No Content";
	case 301:
		return "Moved Permanently";
	case 302:
		return "Found";
	case 304:
		return "Not Modified";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 411:
		return "Length Required";
	case 413:
		return "Content Too Large";
	case 415:
		return "Unsupported Media Type";
	case 417:
		return "Expectation Failed";
	case 422:
		return "Unprocessable Content";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return ""; /* the reason phrase may be empty (RFC 9112 4) */
	}
}

/* ---- writing ---- */

static void conn_pause(struct conn *c)
{
	if (c->paused || c->state >= CONN_DRAIN)
		return;
	c->paused = true;
	if (c->reading) {
		uv_read_stop((uv_stream_t *)&c->tcp);
		c->reading = false;
	}
}

static void conn_read_start(struct conn *c);

static void conn_resume(struct conn *c)
{
	c->paused = false;
	conn_pump(c);
	if (!c->closing && !c->paused)
		conn_read_start(c);
}

static void on_write(uv_write_t *req, int status)
{
	struct write_req *w = CONTAINER_OF(req, struct write_req, req);
	struct conn *c = w->c;

	c->write_pending -= w->len;
	free(w->owned);
	free(w);
	/* Writes cancelled by uv_close arrive here before the close callback: c is still alive. */
	if (c->closing)
		return;
	if (status < 0) {
		log_debug("httpd write failed", LF_STR("error", uv_strerror(status)), LF_END);
		conn_close(c);
		return;
	}
	if (c->timer_mode == TIMER_WRITE)
		c->timer_mode = TIMER_NONE; /* progress: the write deadline starts again */
	if (c->paused && c->write_pending <= WRITE_LOW_WATER)
		conn_resume(c);
	conn_update_timer(c);
}

/*
 * Queues copy_len bytes from w->data followed by owned[0..owned_len) (freed afterwards). Takes
 * ownership of w and owned in every case. On failure the connection is closed.
 */
static int conn_submit(struct conn *c, struct write_req *w, size_t copy_len, char *owned,
		       size_t owned_len)
{
	uv_buf_t bufs[2];
	unsigned nbufs = 0;
	int r;

	w->c = c;
	w->owned = owned;
	w->len = copy_len + owned_len;
	if (copy_len > UINT_MAX || owned_len > UINT_MAX) {
		r = -E2BIG;
		goto fail;
	}
	if (copy_len)
		bufs[nbufs++] = uv_buf_init(w->data, (unsigned)copy_len);
	if (owned_len)
		bufs[nbufs++] = uv_buf_init(owned, (unsigned)owned_len);
	if (nbufs == 0) {
		free(owned);
		free(w);
		return 0;
	}
	r = uv_write(&w->req, (uv_stream_t *)&c->tcp, bufs, nbufs, on_write);
	if (r < 0)
		goto fail;
	c->write_pending += w->len;
	if (c->write_pending > WRITE_HIGH_WATER)
		conn_pause(c);
	return 0;
fail:
	log_debug("httpd write failed", LF_STR("error", uv_strerror(r)), LF_END);
	free(owned);
	free(w);
	conn_close(c);
	return r;
}

/* Plain HTTP: queues a copy of data followed by owned (taken over, may be NULL). */
static int conn_write_plain(struct conn *c, const char *data, size_t len, char *owned,
			    size_t owned_len)
{
	struct write_req *w = malloc(sizeof(*w) + len);
	if (!w) {
		free(owned);
		conn_close(c);
		return -ENOMEM;
	}
	if (len)
		memcpy(w->data, data, len);
	return conn_submit(c, w, len, owned, owned_len);
}

/* Sends whatever OpenSSL has put into the output BIO. Called after every SSL call. */
static int tls_flush(struct conn *c)
{
	BIO *wbio = SSL_get_wbio(c->ssl);
	size_t pending;

	while (!c->closing && (pending = BIO_ctrl_pending(wbio)) > 0) {
		size_t chunk = pending < TLS_FLUSH_CHUNK ? pending : TLS_FLUSH_CHUNK;
		struct write_req *w = malloc(sizeof(*w) + chunk);
		if (!w) {
			conn_close(c);
			return -ENOMEM;
		}
		int n = BIO_read(wbio, w->data, (int)chunk);
		if (n != (int)chunk) {
			free(w);
			conn_close(c);
			return -EIO;
		}
		int r = conn_submit(c, w, chunk, NULL, 0);
		if (r < 0)
			return r;
	}
	return c->closing ? -ECONNABORTED : 0;
}

/* Encrypts and queues data. With memory BIOs and renegotiation off, SSL_write never waits. */
static int tls_write(struct conn *c, const char *data, size_t len)
{
	while (len > 0) {
		int chunk = len > (1u << 30) ? (1 << 30) : (int)len;
		ERR_clear_error();
		int n = SSL_write(c->ssl, data, chunk);
		if (n <= 0) {
			log_tls_error(LOG_DEBUG, "httpd TLS write failed");
			conn_close(c);
			return -EIO;
		}
		int r = tls_flush(c);
		if (r < 0)
			return r;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Sends bytes as they are (the interim "100 Continue"). */
static void conn_send_raw(struct conn *c, const char *data, size_t len)
{
	if (c->ssl)
		(void)tls_write(c, data, len);
	else
		(void)conn_write_plain(c, data, len, NULL, 0);
}

/* ---- responses ---- */

struct head_builder {
	char buf[512];
	size_t len;
	bool overflow;
};

__attribute__((format(printf, 2, 3))) static void head_printf(struct head_builder *b,
							      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->buf + b->len, sizeof(b->buf) - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(b->buf) - b->len)
		b->overflow = true;
	else
		b->len += (size_t)n;
}

/* RFC 9110 5.6.7 IMF-fixdate, written by hand so the locale cannot change day or month names. */
static void format_date(char *out, size_t size)
{
	static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t now = time(NULL);
	struct tm tm;
	if (!gmtime_r(&now, &tm) || tm.tm_wday < 0 || tm.tm_wday > 6 || tm.tm_mon < 0 ||
	    tm.tm_mon > 11) {
		snprintf(out, size, "Thu, 01 Jan 1970 00:00:00 GMT");
		return;
	}
	snprintf(out, size, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday], tm.tm_mday,
		 months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static bool content_type_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > CONTENT_TYPE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch == 0x7f)
			return false; /* no CR or LF: the handler must not be able to add fields */
	}
	return true;
}

/*
 * Sends one response and takes ownership of body. Content-Length always describes body, even
 * when send_body is false (HEAD). Without keep_alive the connection is finished afterwards.
 */
static void conn_respond(struct conn *c, int status, const char *content_type, char *body,
			 size_t body_len, bool send_body, bool keep_alive, int minor_version)
{
	struct head_builder b = { .len = 0, .overflow = false };
	char date[64];

	if (status < 200 || status > 599 || (content_type && !content_type_ok(content_type))) {
		log_error("httpd handler returned an invalid response", LF_INT("status", status),
			  LF_END);
		free(body);
		body = NULL;
		body_len = 0;
		status = 500;
		content_type = NULL;
	}
	/* No Content-Length in a 204 (RFC 9110 8.6), nor in a 304, where it would describe
	 * another response's body; neither has a body. */
	bool has_length = status != 204 && status != 304;
	if (!has_length || !send_body) {
		free(body);
		body = NULL;
		if (!has_length)
			body_len = 0;
	}

	format_date(date, sizeof(date));
	head_printf(&b, "HTTP/1.1 %d %s\r\nDate: %s\r\n", status, status_reason(status), date);
	if (content_type)
		head_printf(&b, "Content-Type: %s\r\n", content_type);
	if (has_length)
		head_printf(&b, "Content-Length: %zu\r\n", body_len);
	if (!keep_alive)
		head_printf(&b, "Connection: close\r\n");
	else if (minor_version == 0)
		head_printf(&b, "Connection: keep-alive\r\n");
	head_printf(&b, "\r\n");
	if (b.overflow) {
		/* Cannot happen with CONTENT_TYPE_MAX; never send a truncated head. */
		free(body);
		conn_close(c);
		return;
	}

	size_t send_len = body ? body_len : 0;
	if (c->ssl) {
		/* One SSL_write: small responses then leave in a single record and packet. */
		char *all = malloc(b.len + send_len);
		if (!all) {
			free(body);
			conn_close(c);
			return;
		}
		memcpy(all, b.buf, b.len);
		if (send_len)
			memcpy(all + b.len, body, send_len);
		free(body);
		int r = tls_write(c, all, b.len + send_len);
		free(all);
		if (r < 0)
			return;
	} else if (conn_write_plain(c, b.buf, b.len, body, send_len) < 0) {
		return;
	}
	if (!keep_alive)
		conn_finish(c);
}

/* Answers an unusable request with status and a short text body, then closes. */
static void conn_fail(struct conn *c, int status)
{
	const char *reason = status_reason(status);
	size_t n = strlen(reason);
	char *body = malloc(n + 1);
	if (body) {
		memcpy(body, reason, n);
		body[n] = '\n';
	}
	conn_respond(c, status, "text/plain; charset=utf-8", body, body ? n + 1 : 0, true, false,
		     1);
}

/* ---- requests ---- */

/* Counts a body against the server's budget (httpd.h: max_buffered). false: no room. */
static bool body_reserve(struct conn *c, size_t len)
{
	struct httpd *h = c->h;
	bool large = len > h->max_buffered / 16;
	if (len > h->max_buffered - h->buffered ||
	    (large && len > h->max_buffered / 2 - h->buffered_large))
		return false;
	h->buffered += len;
	if (large)
		h->buffered_large += len;
	c->reserved = len;
	return true;
}

static void body_unreserve(struct conn *c)
{
	struct httpd *h = c->h;
	h->buffered -= c->reserved;
	if (c->reserved > h->max_buffered / 16)
		h->buffered_large -= c->reserved;
	c->reserved = 0;
}

static bool conn_accepts_input(const struct conn *c)
{
	return !c->closing && !c->paused && c->state <= CONN_BODY;
}

/* Validates the head at the start of c->in and prepares to read its body. */
static bool conn_begin_request(struct conn *c)
{
	struct http_head head;
	struct http_target target;
	int r = http_parse_head(c->in.data, c->in.len, &head);

	if (r <= 0) {
		conn_fail(c, r == -EMSGSIZE ? 431 : r == -EPROTONOSUPPORT ? 505 : 400);
		return false;
	}
	if (http_target_split(head.target, head.target_len, &target) < 0) {
		conn_fail(c, 400);
		return false;
	}
	/*
	 * Any Transfer-Encoding is refused with 411 Length Required rather than 501 Not
	 * Implemented: chunked bodies are not implemented because nothing we serve needs them,
	 * and 411 (RFC 9110 15.5.12) tells the client how to succeed: send Content-Length, as
	 * kube-apiserver and probes do [unverified for every apiserver version]. Refusing every
	 * Transfer-Encoding also refuses the Transfer-Encoding plus Content-Length combination
	 * used for request smuggling. The body's end is unknown, so the connection closes.
	 */
	if (head.has_transfer_encoding) {
		conn_fail(c, 411);
		return false;
	}
	if (head.expect_unknown) {
		conn_fail(c, 417);
		return false;
	}
	if (head.has_content_length && head.content_length > c->h->max_body) {
		conn_fail(c, 413);
		return false;
	}
	if (head.has_content_length && !body_reserve(c, (size_t)head.content_length)) {
		if (!c->h->budget_logged)
			log_warn("httpd: request bodies over budget; refusing with 429",
				 LF_INT("buffered", (long long)c->h->buffered),
				 LF_INT("max_buffered", (long long)c->h->max_buffered), LF_END);
		c->h->budget_logged = true;
		conn_fail(c, 429);
		return false;
	}
	c->head_len = (size_t)r;
	c->body_len = head.has_content_length ? (size_t)head.content_length : 0;
	c->state = CONN_BODY;
	/* Ask for the body only now that its size is known to be acceptable (RFC 9110 10.1.1). */
	if (head.expect_continue && head.minor_version >= 1 &&
	    c->in.len - c->head_len < c->body_len) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
		conn_send_raw(c, cont, sizeof(cont) - 1);
	}
	return !c->closing;
}

/* Offset of p within base, for writing through the mutable buffer the parser read. */
static size_t offset_in(const char *base, const char *p)
{
	return (size_t)(p - base);
}

/* Calls the handler for the complete request at the start of c->in and sends its answer. */
static void conn_dispatch(struct conn *c)
{
	struct httpd *h = c->h;
	struct http_head head;
	struct http_target target;

	/* Parse again: the buffer may have moved while the body arrived. */
	int r = http_parse_head(c->in.data, c->head_len, &head);
	if (r != (int)c->head_len || http_target_split(head.target, head.target_len, &target) < 0) {
		log_error("httpd request head changed between parses", LF_END);
		conn_fail(c, 500);
		return;
	}
	char *body = malloc(c->body_len + 1);
	if (!body) {
		conn_fail(c, 500);
		return;
	}
	if (c->body_len)
		memcpy(body, c->in.data + c->head_len, c->body_len);
	body[c->body_len] = '\0';

	/*
	 * NUL-terminate the pieces in place: each is followed by a delimiter the handler does not
	 * need (SP after method and target, '?' after the path, ':' after a field name, CR or
	 * whitespace after a field value), and no two pieces share one.
	 */
	char *base = c->in.data;
	base[offset_in(base, head.method) + head.method_len] = '\0';
	const char *path = "/";
	if (target.path_len) {
		base[offset_in(base, target.path) + target.path_len] = '\0';
		path = target.path;
	}
	const char *query = "";
	if (target.query_len) {
		base[offset_in(base, target.query) + target.query_len] = '\0';
		query = target.query;
	}
	for (size_t i = 0; i < head.header_count; i++) {
		const struct http_header *f = &head.headers[i];
		base[offset_in(base, f->name) + f->name_len] = '\0';
		base[offset_in(base, f->value) + f->value_len] = '\0';
	}

	struct httpd_request req = {
		.method = head.method,
		.path = path,
		.query = query,
		.body = body,
		.body_len = c->body_len,
		.minor_version = head.minor_version,
		.head = &head,
		.conn = c,
	};
	struct httpd_response resp = { .status = 500, .content_type = NULL, .body = NULL };
	bool keep_alive = http_head_keep_alive(&head);
	bool send_body = strcmp(req.method, "HEAD") != 0;
	int minor_version = head.minor_version;

	h->handler(h->handler_arg, &req, &resp);

	free(body);
	body_unreserve(c);
	if (h->buffered == 0)
		h->budget_logged = false;
	buf_consume(&c->in, c->head_len + c->body_len);
	if (c->in.len == 0 && c->in.alloc > READ_CHUNK)
		buf_release(&c->in); /* do not keep a large body's buffer on an idle connection */
	c->head_len = 0;
	c->body_len = 0;
	c->head_scan = 0;
	c->state = CONN_HEAD;
	c->served_any = true;
	c->timer_mode = TIMER_NONE; /* the next request gets a full request timeout */

	/* The handler may have stopped the server. */
	if (c->closing) {
		free(resp.body);
		return;
	}
	if (c->deferred) {
		free(resp.body);
		c->deferred->send_body = send_body;
		c->deferred->keep_alive = keep_alive;
		c->deferred->minor_version = minor_version;
		c->state = CONN_WAIT;
		if (c->reading) {
			uv_read_stop((uv_stream_t *)&c->tcp);
			c->reading = false;
		}
		return;
	}
	conn_respond(c, resp.status, resp.content_type, resp.body, resp.body ? resp.body_len : 0,
		     send_body, keep_alive, minor_version);
}

struct httpd_deferred *httpd_defer(const struct httpd_request *req)
{
	struct conn *c = req->conn;
	if (!c || c->deferred || c->closing)
		return NULL;
	struct httpd_deferred *d = calloc(1, sizeof(*d));
	if (d) {
		d->c = c;
		c->deferred = d;
	}
	return d;
}

void httpd_answer(struct httpd_deferred *d, int status, const char *content_type, char *body,
		  size_t body_len)
{
	struct conn *c = d->c;
	bool send_body = d->send_body, keep_alive = d->keep_alive;
	int minor_version = d->minor_version;
	free(d);
	if (!c || c->closing) {
		if (c)
			c->deferred = NULL;
		free(body);
		return;
	}
	c->deferred = NULL;
	c->state = CONN_HEAD;
	c->timer_mode = TIMER_NONE;
	conn_respond(c, status, content_type, body, body ? body_len : 0, send_body,
		     keep_alive && !c->eof, minor_version);
	if (c->closing || c->state != CONN_HEAD)
		return;
	conn_pump(c); /* requests that arrived meanwhile, in order */
	conn_read_start(c);
	conn_update_timer(c);
}

/* Answers every complete request in c->in, in order. */
static void conn_process(struct conn *c)
{
	while (conn_accepts_input(c)) {
		if (c->state == CONN_HEAD) {
			/* Empty lines before a request are ignored (RFC 9112 2.2). */
			size_t skip = 0;
			while (c->in.len - skip >= 2 && c->in.data[skip] == '\r' &&
			       c->in.data[skip + 1] == '\n')
				skip += 2;
			if (skip) {
				buf_consume(&c->in, skip);
				c->head_scan = 0;
			}
			if (c->in.len == 0)
				return;
			if (!http_head_end(c->in.data, c->in.len, &c->head_scan)) {
				if (c->in.len >= HTTP_HEAD_MAX)
					conn_fail(c, 431);
				return;
			}
			if (!conn_begin_request(c))
				return;
		}
		if (c->in.len - c->head_len < c->body_len)
			return;
		conn_dispatch(c);
	}
}

/* TLS: decrypts one chunk into c->in. Returns bytes added, 0 if more input is needed, or < 0
 * if the connection is finishing or closed. */
static int tls_read(struct conn *c)
{
	char plain[TLS_PLAINTEXT_CHUNK];

	ERR_clear_error();
	int n = SSL_read(c->ssl, plain, sizeof(plain));
	int err = n > 0 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, n);
	/* Flush even when SSL_read wants more: handshake messages and alerts must go out. */
	if (tls_flush(c) < 0)
		return -1;
	if (n > 0) {
		if (buf_append(&c->in, plain, (size_t)n) < 0) {
			conn_close(c);
			return -1;
		}
		return n;
	}
	switch (err) {
	case SSL_ERROR_WANT_READ:
		return 0;
	case SSL_ERROR_ZERO_RETURN: /* close_notify: answer with ours and close */
		conn_finish(c);
		return -1;
	default:
		/* Finish rather than close, so the alert just flushed reaches the client and it
		 * can report why (say, an unknown CA) instead of a bare reset. */
		log_tls_error(LOG_DEBUG, "httpd TLS error");
		c->tls_failed = true;
		conn_finish(c);
		return -1;
	}
}

/* Processes buffered input and, for TLS, decrypts more until OpenSSL needs more bytes. */
static void conn_pump(struct conn *c)
{
	for (;;) {
		conn_process(c);
		if (!c->ssl || !conn_accepts_input(c))
			return;
		if (tls_read(c) <= 0)
			return;
	}
}

/* ---- connection lifecycle ---- */

static void httpd_maybe_free(struct httpd *h)
{
	if (!h->stopping || !h->listener_closed || h->conn_count > 0)
		return;
	SSL_CTX_free(h->ssl_ctx);
	free(h);
}

static void conn_free(struct conn *c)
{
	struct httpd *h = c->h;

	if (c->deferred)
		c->deferred->c = NULL; /* its answer, when it comes, only frees */
	SSL_free(c->ssl);
	body_unreserve(c);
	buf_release(&c->in);
	if (c->prev)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	h->conn_count--;
	if (h->conn_count < h->max_connections)
		h->overload_logged = false;
	free(c);
	httpd_maybe_free(h);
}

static void on_conn_handle_closed(uv_handle_t *handle)
{
	struct conn *c = handle->data;
	if (--c->open_handles == 0)
		conn_free(c);
}

static void conn_close(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	c->reading = false;
	uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
	uv_close((uv_handle_t *)&c->tcp, on_conn_handle_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
	struct conn *c = CONTAINER_OF(req, struct conn, shutdown_req);
	if (c->closing)
		return;
	if (status < 0 || c->eof) {
		conn_close(c);
		return;
	}
	c->state = CONN_LINGER;
	conn_update_timer(c);
}

/* Takes no more requests: once queued responses are written, sends FIN, then lingers. */
static void conn_finish(struct conn *c)
{
	if (c->closing || c->state >= CONN_DRAIN)
		return;
	c->state = CONN_DRAIN;
	c->paused = false;
	if (c->ssl && SSL_is_init_finished(c->ssl) && !c->tls_failed) {
		ERR_clear_error();
		/* Sends close_notify; we do not wait for the peer's. Failure changes nothing. */
		if (SSL_shutdown(c->ssl) < 0)
			ERR_clear_error();
		if (tls_flush(c) < 0)
			return;
	}
	int r = uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, on_shutdown);
	if (r < 0) {
		conn_close(c);
		return;
	}
	/* Keep reading (and discarding) so unread input does not turn our FIN into a RST. */
	conn_read_start(c);
	conn_update_timer(c);
}

static void on_timeout(uv_timer_t *timer)
{
	struct conn *c = timer->data;
	static const char *const names[] = {
		"none", "request", "write", "idle", "drain", "linger", "answer",
	};
	if (c->timer_mode != TIMER_IDLE && c->timer_mode != TIMER_LINGER)
		log_debug("httpd connection timed out", LF_STR("waiting_for", names[c->timer_mode]),
			  LF_END);
	conn_close(c);
}

/* Arms the one timer for whatever the connection is waiting for now. */
static void conn_update_timer(struct conn *c)
{
	struct httpd *h = c->h;
	enum timer_mode mode;
	unsigned ms = h->request_timeout_ms;

	if (c->closing)
		return;
	if (c->state == CONN_WAIT) {
		mode = TIMER_ANSWER;
		ms = h->request_timeout_ms * 6;
	} else if (c->state == CONN_DRAIN) {
		mode = TIMER_DRAIN;
	} else if (c->state == CONN_LINGER) {
		mode = TIMER_LINGER;
		ms = LINGER_TIMEOUT_MS;
	} else if (c->paused) {
		mode = TIMER_WRITE;
	} else if (!c->served_any || c->in.len > 0 || c->state == CONN_BODY ||
		   (c->ssl && (!SSL_is_init_finished(c->ssl) || SSL_has_pending(c->ssl) ||
			       BIO_ctrl_pending(SSL_get_rbio(c->ssl)) > 0))) {
		/* Includes a TLS record arriving slowly, which leaves no plaintext yet. */
		mode = TIMER_REQUEST;
	} else if (c->write_pending > 0) {
		mode = TIMER_WRITE;
	} else {
		mode = TIMER_IDLE;
		ms = h->idle_timeout_ms;
	}
	if (mode == c->timer_mode)
		return;
	c->timer_mode = mode;
	int r = uv_timer_start(&c->timer, on_timeout, ms, 0);
	if (r < 0)
		conn_close(c);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *out)
{
	struct conn *c = handle->data;
	*out = uv_buf_init(c->h->read_buf, sizeof(c->h->read_buf));
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *data)
{
	struct conn *c = stream->data;

	if (c->closing || nread == 0)
		return;
	if (nread < 0) {
		if (nread != UV_EOF) {
			log_debug("httpd read failed", LF_STR("error", uv_strerror((int)nread)),
				  LF_END);
			conn_close(c);
			return;
		}
		/* libuv has stopped reading. A partial request is dropped; complete ones were
		 * answered already, or one is being (CONN_WAIT: finished after its answer). */
		c->eof = true;
		c->reading = false;
		if (c->state == CONN_WAIT)
			return;
		if (c->state == CONN_LINGER)
			conn_close(c);
		else
			conn_finish(c);
		return;
	}
	if (c->state >= CONN_DRAIN)
		return; /* discarding */
	if (c->ssl) {
		if (BIO_write(SSL_get_rbio(c->ssl), data->base, (int)nread) != (int)nread) {
			conn_close(c);
			return;
		}
	} else if (buf_append(&c->in, data->base, (size_t)nread) < 0) {
		/* Cannot happen: in_cap holds a whole request plus one read. */
		conn_close(c);
		return;
	}
	conn_pump(c);
	conn_update_timer(c);
}

static void conn_read_start(struct conn *c)
{
	if (c->reading || c->eof || c->closing || c->state == CONN_WAIT)
		return;
	int r = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
	if (r < 0) {
		conn_close(c);
		return;
	}
	c->reading = true;
}

static int tls_conn_init(struct conn *c)
{
	ERR_clear_error();
	c->ssl = SSL_new(c->h->ssl_ctx);
	if (!c->ssl) {
		log_tls_error(LOG_WARN, "httpd cannot create TLS session");
		return -ENOMEM;
	}
	BIO *rbio = BIO_new(BIO_s_mem());
	BIO *wbio = BIO_new(BIO_s_mem());
	if (!rbio || !wbio) {
		BIO_free(rbio);
		BIO_free(wbio);
		return -ENOMEM;
	}
	/* An empty BIO means "no more bytes yet" (retry), not end of stream. */
	BIO_set_mem_eof_return(rbio, -1);
	BIO_set_mem_eof_return(wbio, -1);
	SSL_set_bio(c->ssl, rbio, wbio);
	SSL_set_accept_state(c->ssl);
	return 0;
}

static void on_connection(uv_stream_t *server, int status)
{
	struct httpd *h = server->data;
	int r;

	if (status < 0) {
		log_warn("httpd accept failed", LF_STR("error", uv_strerror(status)), LF_END);
		return;
	}
	struct conn *c = calloc(1, sizeof(*c));
	if (!c) {
		log_error("httpd out of memory accepting a connection", LF_END);
		return;
	}
	c->h = h;
	buf_init(&c->in, h->in_cap);
	c->state = CONN_HEAD;
	c->timer_mode = TIMER_NONE;
	c->tcp.data = c;
	c->timer.data = c;
	r = uv_timer_init(h->loop, &c->timer);
	if (r < 0) {
		free(c);
		return;
	}
	c->next = h->conns;
	if (h->conns)
		h->conns->prev = c;
	h->conns = c;
	h->conn_count++;
	c->open_handles = 1;
	r = uv_tcp_init(h->loop, &c->tcp);
	if (r < 0) {
		c->closing = true;
		uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
		return;
	}
	c->open_handles = 2;

	r = uv_accept(server, (uv_stream_t *)&c->tcp);
	if (r < 0) {
		log_warn("httpd accept failed", LF_STR("error", uv_strerror(r)), LF_END);
		conn_close(c);
		return;
	}
	/* Accept and close rather than leave it queued: libuv stops accepting until we do. */
	if (h->conn_count > h->max_connections) {
		if (!h->overload_logged)
			log_warn("httpd connection limit reached; closing new connections",
				 LF_INT("max_connections", h->max_connections), LF_END);
		h->overload_logged = true;
		conn_close(c);
		return;
	}
	r = uv_tcp_nodelay(&c->tcp, 1);
	if (r < 0)
		log_debug("httpd cannot set TCP_NODELAY", LF_STR("error", uv_strerror(r)), LF_END);
	if (h->ssl_ctx && tls_conn_init(c) < 0) {
		conn_close(c);
		return;
	}
	conn_read_start(c);
	conn_update_timer(c);
}

/* ---- TLS context ---- */

/*
 * Chooses "http/1.1" if the client offers it, else declines ALPN without failing the handshake,
 * so an h2-only client learns nothing is negotiated rather than being told h2 works. Written
 * out instead of SSL_select_next_proto to keep the bounds checks in view (CVE-2024-5535).
 */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	unsigned int i = 0;
	while (i < inlen) {
		unsigned int n = in[i];
		if (n == 0 || n > inlen - i - 1)
			break;
		if (n == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + n;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

/* Refuses encrypted keys instead of letting OpenSSL prompt on the terminal. */
static int no_password(char *buf, int size, int rwflag, void *u)
{
	return -1;
}

static int tls_ctx_new(const char *cert_pem, const char *key_pem, SSL_CTX **out)
{
	int rc = -EINVAL;
	BIO *bio = NULL;
	X509 *leaf = NULL;
	EVP_PKEY *key = NULL;

	*out = NULL;
	ERR_clear_error();
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		log_tls_error(LOG_ERROR, "httpd cannot create TLS context");
		return -ENOMEM;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1)
		goto out;
	/* Peers that drop TCP without close_notify are routine (Go does it on idle close). */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION |
					 SSL_OP_CIPHER_SERVER_PREFERENCE);
	/* Idle keep-alive connections then hold no TLS buffers. */
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);

	bio = BIO_new_mem_buf(cert_pem, -1);
	if (!bio) {
		rc = -ENOMEM;
		goto out;
	}
	leaf = PEM_read_bio_X509(bio, NULL, no_password, NULL);
	if (!leaf || SSL_CTX_use_certificate(ctx, leaf) != 1)
		goto out;
	/* Further certificates in the PEM are the chain, sent after the leaf. */
	for (;;) {
		X509 *extra = PEM_read_bio_X509(bio, NULL, no_password, NULL);
		if (!extra)
			break;
		if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
			X509_free(extra);
			goto out;
		}
	}
	/* The loop ends with "no start line" at the end of the input; anything else is damage. */
	unsigned long e = ERR_peek_last_error();
	if (e && !(ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE))
		goto out;
	ERR_clear_error();
	BIO_free(bio);

	bio = BIO_new_mem_buf(key_pem, -1);
	if (!bio) {
		rc = -ENOMEM;
		goto out;
	}
	key = PEM_read_bio_PrivateKey(bio, NULL, no_password, NULL);
	if (!key || SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1)
		goto out;
	rc = 0;
out:
	if (rc < 0) {
		log_tls_error(LOG_ERROR, "httpd cannot load the serving certificate and key");
		SSL_CTX_free(ctx);
		ctx = NULL;
	}
	BIO_free(bio);
	X509_free(leaf);
	EVP_PKEY_free(key);
	*out = ctx;
	return rc;
}

/* ---- public API ---- */

static void on_listener_closed(uv_handle_t *handle)
{
	struct httpd *h = handle->data;
	h->listener_closed = true;
	httpd_maybe_free(h);
}

int httpd_start(uv_loop_t *loop, const struct httpd_options *opt, struct httpd **out)
{
	struct sockaddr_storage addr;
	int r;

	if (!loop || !opt || !out || !opt->handler || opt->port < 0 || opt->port > 65535)
		return -EINVAL;
	if (!opt->cert_pem != !opt->key_pem)
		return -EINVAL;
	size_t max_body = opt->max_body ? opt->max_body : HTTPD_DEFAULT_MAX_BODY;
	if (max_body > SIZE_MAX / 4)
		return -EINVAL;
	const char *host = opt->host ? opt->host : "127.0.0.1";
	memset(&addr, 0, sizeof(addr));
	if (uv_ip4_addr(host, opt->port, (struct sockaddr_in *)&addr) != 0 &&
	    uv_ip6_addr(host, opt->port, (struct sockaddr_in6 *)&addr) != 0)
		return -EINVAL;

	struct httpd *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->loop = loop;
	h->handler = opt->handler;
	h->handler_arg = opt->handler_arg;
	h->max_body = max_body;
	h->max_buffered = opt->max_buffered ? opt->max_buffered : HTTPD_DEFAULT_MAX_BUFFERED;
	h->in_cap = HTTP_HEAD_MAX + max_body + READ_CHUNK;
	h->max_connections = opt->max_connections ? opt->max_connections :
						    HTTPD_DEFAULT_MAX_CONNECTIONS;
	h->request_timeout_ms = opt->request_timeout_ms ? opt->request_timeout_ms :
							  HTTPD_DEFAULT_REQUEST_TIMEOUT_MS;
	h->idle_timeout_ms = opt->idle_timeout_ms ? opt->idle_timeout_ms :
						    HTTPD_DEFAULT_IDLE_TIMEOUT_MS;
	if (opt->cert_pem) {
		r = tls_ctx_new(opt->cert_pem, opt->key_pem, &h->ssl_ctx);
		if (r < 0) {
			free(h);
			return r;
		}
	}
	r = uv_tcp_init(loop, &h->listener);
	if (r < 0) {
		SSL_CTX_free(h->ssl_ctx);
		free(h);
		return r;
	}
	h->listener.data = h;
	r = uv_tcp_bind(&h->listener, (const struct sockaddr *)&addr, 0);
	if (r == 0)
		r = uv_listen((uv_stream_t *)&h->listener, LISTEN_BACKLOG, on_connection);
	if (r == 0) {
		struct sockaddr_storage bound;
		int len = sizeof(bound);
		r = uv_tcp_getsockname(&h->listener, (struct sockaddr *)&bound, &len);
		if (r == 0 && bound.ss_family == AF_INET)
			h->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
		else if (r == 0)
			h->port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
	}
	if (r < 0) {
		log_error("httpd cannot listen", LF_STR("host", host), LF_INT("port", opt->port),
			  LF_STR("error", uv_strerror(r)), LF_END);
		h->stopping = true;
		uv_close((uv_handle_t *)&h->listener, on_listener_closed);
		return r;
	}
	log_info("httpd listening", LF_STR("host", host), LF_INT("port", h->port),
		 LF_STR("scheme", h->ssl_ctx ? "https" : "http"), LF_END);
	*out = h;
	return 0;
}

int httpd_port(const struct httpd *h)
{
	return h->port;
}

int httpd_set_certificate(struct httpd *h, const char *cert_pem, const char *key_pem)
{
	SSL_CTX *ctx;

	if (!h || !h->ssl_ctx || !cert_pem || !key_pem)
		return -EINVAL;
	int r = tls_ctx_new(cert_pem, key_pem, &ctx);
	if (r < 0)
		return r;
	/* Live SSL objects hold their own reference to the old context. */
	SSL_CTX_free(h->ssl_ctx);
	h->ssl_ctx = ctx;
	log_info("httpd serving certificate replaced", LF_INT("port", h->port), LF_END);
	return 0;
}

void httpd_stop(struct httpd *h)
{
	if (!h || h->stopping)
		return;
	h->stopping = true;
	uv_close((uv_handle_t *)&h->listener, on_listener_closed);
	/* conn_close only marks and schedules; unlinking happens in the close callbacks. */
	for (struct conn *c = h->conns; c; c = c->next)
		conn_close(c);
}

const char *httpd_request_header(const struct httpd_request *req, const char *name)
{
	const struct http_header *f = http_head_find(req->head, name);
	/* conn_dispatch NUL-terminated every value in place. */
	return f ? f->value : NULL;
}
