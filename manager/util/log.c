/* SPDX-License-Identifier: Apache-2.0 */
/* Hand-written: Debian packages no C structured-logging library that fits one write per line. */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_LINE_MAX 4096

static enum log_level min_level = LOG_INFO;

void log_set_level(enum log_level level)
{
	min_level = level;
}

int log_enabled(enum log_level level)
{
	return level >= min_level;
}

struct line {
	char buf[LOG_LINE_MAX];
	size_t len;
	int truncated;
};

static void put(struct line *l, const char *s, size_t n)
{
	/* Keep room for the closing `,"truncated":true}\n`. */
	const size_t limit = LOG_LINE_MAX - 24;
	if (l->len + n > limit) {
		n = l->len < limit ? limit - l->len : 0;
		l->truncated = 1;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void put_str(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

/* Writes s as a JSON string, escaping quotes, backslashes and control characters. */
static void put_json_string(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	put(l, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			put(l, esc, 2);
		} else if (c == '\n') {
			put(l, "\\n", 2);
		} else if (c < 0x20) {
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			put(l, esc, 6);
		} else {
			put(l, (const char *)&c, 1);
		}
	}
	put(l, "\"", 1);
}

void log_emit(enum log_level level, const char *msg, ...)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };
	struct line l = { .len = 0, .truncated = 0 };
	struct timespec ts;
	char num[64];
	va_list ap;

	if (!log_enabled(level))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(num, sizeof(num),
		 "{\"ts\":%lld.%03ld,\"level\":\"%s\",\"msg\":", (long long)ts.tv_sec,
		 ts.tv_nsec / 1000000, names[level]);
	put_str(&l, num);
	put_json_string(&l, msg ? msg : "");

	va_start(ap, msg);
	for (;;) {
		struct log_field f = va_arg(ap, struct log_field);
		if (f.type == LOG_FIELD_END)
			break;
		put(&l, ",", 1);
		put_json_string(&l, f.key ? f.key : "?");
		put(&l, ":", 1);
		if (f.type == LOG_FIELD_INT) {
			snprintf(num, sizeof(num), "%lld", f.num);
			put_str(&l, num);
		} else if (f.str) {
			put_json_string(&l, f.str);
		} else {
			put_str(&l, "null");
		}
	}
	va_end(ap);

	if (l.truncated) {
		static const char tail[] = ",\"truncated\":true";
		memcpy(l.buf + l.len, tail, sizeof(tail) - 1);
		l.len += sizeof(tail) - 1;
	}
	l.buf[l.len++] = '}';
	l.buf[l.len++] = '\n';
	/* A short write to stderr has nowhere to be reported; the line is lost either way. */
	ssize_t written = write(STDERR_FILENO, l.buf, l.len);
	(void)written;
}
