/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A min-heap of timed events for the simulations that run in virtual time (the forecast's
 * expected ends, the Philly replay's true ends): the earliest first, ties by id so that runs
 * are deterministic. The heap owns its array; events are copied in.
 */
#ifndef MUSTER_EVENT_HEAP_H
#define MUSTER_EVENT_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct event {
	int64_t t; /* ms */
	size_t id; /* the caller's: which workload or job */
	unsigned gen; /* the caller's: to tell a stale event from a current one */
};

struct event_heap {
	struct event *v; /* v[0] is the earliest when n > 0 */
	size_t n, cap;
};

/* 0 or -ENOMEM (the heap unchanged). */
int event_heap_push(struct event_heap *h, struct event e);
/* Removes v[0]; n must be > 0. */
void event_heap_pop(struct event_heap *h);
/* Frees the array and empties the heap (NULL-safe). */
void event_heap_release(struct event_heap *h);

#endif
