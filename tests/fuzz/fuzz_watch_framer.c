/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the watch-stream framer and event parser (kube/framer.h). The input is fed in chunks
 * whose sizes come from the input bytes themselves, so seeds stay real watch streams while the
 * fuzzer still controls the split points. Every line the framer hands out must be exactly the
 * next non-empty line of the input (checked against a one-pass split), NUL-terminated, and no
 * longer than the cap; every line is then parsed as a watch event and released.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/framer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct expect {
	const char *data; /* the whole input */
	size_t size;
	size_t pos; /* where the next expected line starts */
	size_t max_line;
	size_t lines;
};

/* The next non-empty line of the input, found without the framer; 0 when none is left. */
static int next_line(struct expect *e, const char **line, size_t *len)
{
	while (e->pos < e->size) {
		const char *start = e->data + e->pos;
		const char *nl = memchr(start, '\n', e->size - e->pos);
		if (!nl)
			return 0; /* an unterminated tail is never delivered */
		e->pos = (size_t)(nl - e->data) + 1;
		if (nl > start) {
			*line = start;
			*len = (size_t)(nl - start);
			return 1;
		}
	}
	return 0;
}

static void check_event(const struct watch_event *ev)
{
	if (!json_is_object(ev->object))
		abort();
	switch (ev->type) {
	case WATCH_ADDED:
	case WATCH_MODIFIED:
	case WATCH_DELETED:
	case WATCH_BOOKMARK:
		if (ev->error_code != 0)
			abort();
		break;
	case WATCH_ERROR:
		if (ev->error_code <= 0 || ev->error_code >= 1000)
			abort();
		break;
	default:
		abort();
	}
	if (ev->resource_version &&
	    ev->resource_version !=
		    json_string_value(json_object_get(json_object_get(ev->object, "metadata"),
						      "resourceVersion")))
		abort();
}

static int on_line(void *arg, char *line, size_t len)
{
	struct expect *e = arg;
	const char *want;
	size_t want_len;
	if (!next_line(e, &want, &want_len))
		abort(); /* a line the input doesn't have */
	if (len != want_len || memcmp(line, want, len) != 0 || line[len] != '\0')
		abort();
	if (len == 0 || len > e->max_line)
		abort();
	e->lines++;

	struct watch_event ev;
	int rc = watch_event_parse(line, len, &ev);
	if (rc == 0)
		check_event(&ev);
	else if (rc != -EPROTO || ev.object != NULL)
		abort();
	json_decref(ev.object);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct framer f;
	struct expect e = { .data = buf, .size = size };

	/* A small cap now and then, so over-long lines are reachable with small inputs. */
	e.max_line = FRAMER_MAX_LINE;
	if (size > 0 && data[0] % 4 == 0)
		e.max_line = 16 + (size_t)data[size - 1];
	framer_init(&f, e.max_line);
	size_t off = 0;
	int rc = 0;
	while (off < size) {
		size_t chunk = 1 + (size_t)(data[off] % 97);
		if (chunk > size - off)
			chunk = size - off;
		rc = framer_feed(&f, buf + off, chunk, on_line, &e);
		if (rc != 0)
			break;
		off += chunk;
	}
	if (rc == 0) {
		/* Everything terminated was delivered; what's left is the unterminated tail. */
		const char *line;
		size_t len;
		if (next_line(&e, &line, &len))
			abort();
		const char *last_nl = NULL;
		for (size_t i = size; i-- > 0;)
			if (buf[i] == '\n') {
				last_nl = buf + i;
				break;
			}
		size_t tail = last_nl ? size - (size_t)(last_nl - buf) - 1 : size;
		if (f.pending.len != tail)
			abort();
	} else if (rc == -E2BIG) {
		/* Only a line longer than the cap may stop the stream. */
		const char *line;
		size_t len;
		if (next_line(&e, &line, &len)) {
			if (len <= e.max_line)
				abort();
		} else if (size - e.pos <= e.max_line) {
			abort();
		}
	} else {
		abort();
	}
	framer_release(&f);
	return 0;
}
