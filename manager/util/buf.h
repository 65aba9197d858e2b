/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A growable byte buffer with a hard size cap, for input that arrives from outside (HTTP
 * bodies, watch streams). Growing past the cap fails with -E2BIG and leaves the buffer as it
 * was, so an oversized body is an error, never an unbounded allocation.
 *
 * Invariant: data is NUL-terminated whenever it is non-NULL (the NUL is not counted in len).
 * The buffer owns data; buf_release frees it, buf_take hands it to the caller.
 */
#ifndef MUSTER_BUF_H
#define MUSTER_BUF_H

#include <stddef.h>

struct buf {
	char *data; /* NULL until the first append */
	size_t len; /* bytes used, excluding the NUL */
	size_t alloc; /* bytes allocated */
	size_t max; /* largest len allowed */
};

void buf_init(struct buf *b, size_t max);
void buf_release(struct buf *b);

/* Appends n bytes. Returns 0, -E2BIG past the cap, or -ENOMEM. */
int buf_append(struct buf *b, const void *data, size_t n);
int buf_append_str(struct buf *b, const char *s);

/* Drops the first n bytes (n <= len). */
void buf_consume(struct buf *b, size_t n);

/* Returns data (caller frees; never NULL on success) and resets b to empty. NULL on ENOMEM. */
char *buf_take(struct buf *b);

#endif
