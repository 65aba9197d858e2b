/* SPDX-License-Identifier: Apache-2.0 */
#include "util/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"

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
	size_t need = b->len + n + 1; /* the NUL too; at least 256 bytes at first */
	if (GROW(b->data, b->alloc, need < 256 ? 256 : need) != 0)
		return -ENOMEM;
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
