/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/event_heap.h"

#include <errno.h>
#include <stdlib.h>

#include "core/grow.h"

static int before(const struct event *a, const struct event *b)
{
	return a->t != b->t ? a->t < b->t : a->id < b->id;
}

int event_heap_push(struct event_heap *h, struct event e)
{
	if (GROW(h->v, h->cap, h->n + 1) != 0)
		return -ENOMEM;
	size_t i = h->n++;
	while (i > 0 && before(&e, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = e;
	return 0;
}

void event_heap_pop(struct event_heap *h)
{
	struct event last = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n > 0)
		h->v[i] = last;
}

void event_heap_release(struct event_heap *h)
{
	if (!h)
		return;
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
