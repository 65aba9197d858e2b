/* SPDX-License-Identifier: Apache-2.0 */
#include "util/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->max = max;
}

void buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b, b->max);
}

int buf_append(struct buf *b, const void *data, size_t n)
{
	if (n > b->max || b->len > b->max - n)
		return -E2BIG;
	if (b->len + n + 1 > b->alloc) {
		size_t want = b->alloc ? b->alloc : 256;
		while (want < b->len + n + 1)
			want *= 2;
		char *p = realloc(b->data, want);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->alloc = want;
	}
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_append_str(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
	} else {
		memmove(b->data, b->data + n, b->len - n);
		b->len -= n;
	}
	if (b->data)
		b->data[b->len] = '\0';
}

char *buf_take(struct buf *b)
{
	char *p = b->data;
	if (!p) {
		p = calloc(1, 1);
		if (!p)
			return NULL;
	}
	buf_init(b, b->max);
	return p;
}
