/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The containers of pending workloads: vectors (parked, waiting, held) and each ClusterQueue's
 * binary heap in queue order (key_before, engine_internal.h; with admission fair sharing, its
 * LocalQueue's usage first). Every container keeps a workload's index in it (struct ewl.pos),
 * so a workload leaves any of them in O(log n). It calls no other file of the engine.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/engine_internal.h"
#include "core/grow.h"

/* --- vectors -------------------------------------------------------------------------------- */

int wvec_reserve(struct wvec *v, uint32_t n)
{
	return GROW(v->v, v->cap, n);
}

int wvec_push(struct wvec *v, struct ewl *w)
{
	int rc = wvec_reserve(v, v->n + 1);
	if (rc)
		return rc;
	w->pos = v->n;
	v->v[v->n++] = w;
	return 0;
}

void wvec_remove(struct wvec *v, struct ewl *w)
{
	uint32_t i = w->pos;
	MUSTER_ASSERT(i < v->n && v->v[i] == w); /* w is where its pos says */
	v->v[i] = v->v[--v->n];
	v->v[i]->pos = i;
}

/* --- the heap ------------------------------------------------------------------------------ */

/* The order of a ClusterQueue's heap (eng_queue_before, from the keys: the workloads
 * themselves are read only with admission fair sharing). */
static inline int heap_before(const struct wheap *h, const struct wkey *ka, const struct ewl *a,
			      const struct wkey *kb, const struct ewl *b)
{
	return eng_queue_before(h->afs, ka, a, kb, b);
}

static void heap_set(struct wheap *h, uint32_t i, struct ewl *w, struct wkey k)
{
	h->v[i] = w;
	h->k[i] = k;
	w->pos = i;
}

/* Puts w at i (a free slot) with its key; the caller restores the order. */
void heap_place(struct wheap *h, uint32_t i, struct ewl *w)
{
	heap_set(h, i, w, wl_key(w));
}

static void heap_up(struct wheap *h, uint32_t i)
{
	struct ewl *w = h->v[i];
	struct wkey k = h->k[i];
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!heap_before(h, &k, w, &h->k[parent], h->v[parent]))
			break;
		heap_set(h, i, h->v[parent], h->k[parent]);
		i = parent;
	}
	heap_set(h, i, w, k);
}

/* The child of i that comes first, or h->n when i has none (heap_remove's hole walk;
 * heap_down keeps its own loop, which compiles to faster code for the rebuilds). */
static inline uint32_t first_child(const struct wheap *h, uint32_t i)
{
	uint32_t c = 2 * i + 1;
	if (c >= h->n)
		return h->n;
	if (c + 1 < h->n && heap_before(h, &h->k[c + 1], h->v[c + 1], &h->k[c], h->v[c]))
		c++;
	return c;
}

static void heap_down(struct wheap *h, uint32_t i)
{
	struct ewl *w = h->v[i];
	struct wkey k = h->k[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && heap_before(h, &h->k[c + 1], h->v[c + 1], &h->k[c], h->v[c]))
			c++;
		if (!heap_before(h, &h->k[c], h->v[c], &k, w))
			break;
		heap_set(h, i, h->v[c], h->k[c]);
		i = c;
	}
	heap_set(h, i, w, k);
}

int heap_reserve(struct wheap *h, uint32_t n)
{
	if (n <= h->cap)
		return 0;
	size_t cap = grow_capacity(h->cap, n, sizeof(*h->k), UINT32_MAX);
	/* v may grow alone, which is harmless: cap says what both hold */
	if (cap == 0 || grow_resize(&h->v, cap, sizeof(*h->v)) != 0 ||
	    grow_resize(&h->k, cap, sizeof(*h->k)) != 0)
		return -ENOMEM;
	h->cap = (uint32_t)cap;
	return 0;
}

int heap_push(struct wheap *h, struct ewl *w)
{
	int rc = heap_reserve(h, h->n + 1);
	if (rc)
		return rc;
	heap_place(h, h->n++, w);
	heap_up(h, w->pos);
	return 0;
}

/* Takes w out. The head of a deep heap (a cycle takes it once per workload when it parks a
 * deep queue) leaves a hole that moves down to a leaf, the child that comes first rising at
 * each level, and the last entry fills it and rises (Floyd's bottom-up deletion): one
 * comparison per level where sifting the last entry down from the top is two, and in a heap
 * far larger than the cache each level is a miss (bench_pump_cycle: heap removal from 17 % to
 * 8 % of the first cycle over 50,000). In the small heaps of bench_kueue_baseline it cost 12 %
 * more CPU in all: sifting stops early there. Elsewhere the last entry takes w's place and
 * moves up or down, as it mostly settles at once. Any heap in the same order yields the same
 * sequence of heads, so the order is unchanged. */
#define HEAP_DEEP 8192
void heap_remove(struct wheap *h, struct ewl *w)
{
	uint32_t i = w->pos;
	MUSTER_ASSERT(i < h->n && h->v[i] == w); /* w is where its pos says */
	--h->n;
	if (i == h->n)
		return;
	if (i == 0 && h->n >= HEAP_DEEP) {
		for (uint32_t c; (c = first_child(h, i)) < h->n; i = c)
			heap_set(h, i, h->v[c], h->k[c]);
		heap_set(h, i, h->v[h->n], h->k[h->n]);
		heap_up(h, i);
		return;
	}
	heap_set(h, i, h->v[h->n], h->k[h->n]);
	if (i > 0 && heap_before(h, &h->k[i], h->v[i], &h->k[(i - 1) / 2], h->v[(i - 1) / 2]))
		heap_up(h, i);
	else
		heap_down(h, i);
}

void eng_heap_rebuild(struct wheap *h)
{
	for (uint32_t i = h->n / 2; i-- > 0;)
		heap_down(h, i);
}

int64_t eng_heap_check(const struct wheap *h)
{
	for (uint32_t i = 0; i < h->n; i++) {
		struct wkey k = wl_key(h->v[i]);
		uint32_t up = i ? (i - 1) / 2 : 0;
		if (h->v[i]->pos != i || k.queue_time != h->k[i].queue_time ||
		    k.uid != h->k[i].uid || k.priority != h->k[i].priority)
			return i;
		if (i > 0 && heap_before(h, &h->k[i], h->v[i], &h->k[up], h->v[up]))
			return i;
	}
	return -1;
}
