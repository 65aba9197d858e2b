/* SPDX-License-Identifier: Apache-2.0 */
#include "core/strmap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash_str(const char *s)
{
	/* FNV-1a, 64-bit. */
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return (size_t)h;
}

void strmap_init(struct strmap *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
	m->borrowed = 0;
}

void strmap_init_borrowed(struct strmap *m)
{
	strmap_init(m);
	m->borrowed = 1;
}

void strmap_release(struct strmap *m, void (*free_value)(void *))
{
	int borrowed = m->borrowed;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		if (!borrowed)
			free(m->slots[i].key);
		if (free_value)
			free_value(m->slots[i].value);
	}
	free(m->slots);
	strmap_init(m);
	m->borrowed = borrowed;
}

static struct strmap_slot *find(const struct strmap *m, const char *key, size_t h)
{
	if (!m->cap)
		return NULL;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct strmap_slot *s = &m->slots[i];
		if (!s->key)
			return NULL;
		if (s->hash == h && !strcmp(s->key, key))
			return s;
	}
}

void *strmap_get(const struct strmap *m, const char *key)
{
	struct strmap_slot *s = find(m, key, hash_str(key));
	return s ? s->value : NULL;
}

static void place(struct strmap_slot *slots, size_t cap, struct strmap_slot item)
{
	size_t i = item.hash & (cap - 1);
	while (slots[i].key)
		i = (i + 1) & (cap - 1);
	slots[i] = item;
}

/* Whether len entries keep the load under 3/4, so probe sequences stay short. */
static int fits(size_t len, size_t cap)
{
	return len * 4 <= cap * 3;
}

static int resize(struct strmap *m, size_t cap)
{
	struct strmap_slot *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			place(slots, cap, m->slots[i]);
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int strmap_reserve(struct strmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 16;
	if (n > SIZE_MAX / 8)
		return -ENOMEM;
	while (!fits(n, cap))
		cap *= 2;
	return cap == m->cap ? 0 : resize(m, cap);
}

int strmap_put(struct strmap *m, const char *key, void *value, void **old)
{
	size_t h = hash_str(key);
	struct strmap_slot *s = find(m, key, h);
	if (old)
		*old = s ? s->value : NULL;
	if (s) {
		s->value = value;
		return 0;
	}
	if (!fits(m->len + 1, m->cap) && resize(m, m->cap ? m->cap * 2 : 16) != 0)
		return -ENOMEM;
	/* Borrowed: the caller's key, which the map never writes (the cast is only the slot's
	 * type, shared with owned keys). */
	char *copy = m->borrowed ? (char *)key : strdup(key);
	if (!copy)
		return -ENOMEM;
	place(m->slots, m->cap, (struct strmap_slot){ copy, value, h });
	m->len++;
	return 0;
}

void *strmap_remove(struct strmap *m, const char *key)
{
	struct strmap_slot *s = find(m, key, hash_str(key));
	if (!s)
		return NULL;
	void *value = s->value;
	if (!m->borrowed)
		free(s->key);
	size_t mask = m->cap - 1, hole = (size_t)(s - m->slots);
	m->slots[hole].key = NULL;
	m->len--;
	/* Backward-shift: pull later members of the probe run into the hole when that keeps them
	 * reachable from their home slot. */
	for (size_t i = (hole + 1) & mask; m->slots[i].key; i = (i + 1) & mask) {
		size_t home = m->slots[i].hash & mask;
		size_t dist_i = (i - home) & mask, dist_hole = (hole - home) & mask;
		if (dist_hole < dist_i) {
			m->slots[hole] = m->slots[i];
			m->slots[i].key = NULL;
			hole = i;
		}
	}
	return value;
}
