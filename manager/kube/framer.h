/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Watch-stream framing: the apiserver sends one JSON event per line, but libcurl hands us
 * chunks with arbitrary boundaries. The framer reassembles lines (capped, so a peer cannot make
 * us buffer without bound) and watch_event_parse decodes one line into a typed event.
 */
#ifndef MUSTER_FRAMER_H
#define MUSTER_FRAMER_H

#include <jansson.h>
#include <stddef.h>

#include "util/buf.h"

#define FRAMER_MAX_LINE (16u << 20) /* one watch event; Kubernetes objects stay under ~1.5 MiB */

struct framer {
	struct buf pending; /* bytes of an unfinished line */
};

/* Called for each complete line (newline stripped, NUL-terminated, len bytes). A negative
 * return stops feeding and is returned by framer_feed. */
typedef int (*framer_line_fn)(void *arg, char *line, size_t len);

void framer_init(struct framer *f, size_t max_line);
void framer_release(struct framer *f);

/* Consumes data; returns 0, -E2BIG when a line exceeds the cap (the stream is then unusable),
 * or the callback's negative return. Empty lines are skipped. */
int framer_feed(struct framer *f, const char *data, size_t len, framer_line_fn fn, void *arg);

enum watch_event_type {
	WATCH_ADDED,
	WATCH_MODIFIED,
	WATCH_DELETED,
	WATCH_BOOKMARK,
	WATCH_ERROR,
};

struct watch_event {
	enum watch_event_type type;
	json_t *object; /* owned by the event (json_decref); a Status for WATCH_ERROR */
	int error_code; /* HTTP-like code of a WATCH_ERROR (410 = resourceVersion too old) */
	const char *resource_version; /* borrowed from object; NULL if absent */
};

/* Parses one line. Returns 0, or -EPROTO when the line is not a well-formed watch event;
 * on success the caller releases ev->object. */
int watch_event_parse(const char *line, size_t len, struct watch_event *ev);

#endif
