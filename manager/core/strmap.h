/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A string-keyed hash map (open addressing, linear probing, backward-shift deletion: no
 * tombstones, so lookups stay short however much churn there is). Hand-written because the
 * core may use no library beyond libc.
 *
 * The map copies keys and owns the copies; values are the caller's. A map made with
 * strmap_init_borrowed copies nothing: each key is the caller's and must stay valid and
 * unchanged while its entry is in the map (a put that replaces a value keeps the key first
 * put). For large maps whose values hold their own key: one allocation less per entry.
 * Iterate with: for (size_t i = 0; i < m->cap; i++) if (m->slots[i].key) …
 */
#ifndef MUSTER_STRMAP_H
#define MUSTER_STRMAP_H

#include <stddef.h>

struct strmap_slot {
	char *key; /* NULL = empty */
	void *value;
	size_t hash;
};

struct strmap {
	struct strmap_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t len;
	int borrowed; /* keys are the caller's (strmap_init_borrowed) */
};

void strmap_init(struct strmap *m);
void strmap_init_borrowed(struct strmap *m);
/* Frees the keys (unless borrowed) and the table; calls free_value on each value when it is
 * non-NULL. The map stays usable, empty, in its mode. */
void strmap_release(struct strmap *m, void (*free_value)(void *));

void *strmap_get(const struct strmap *m, const char *key);
/* Inserts or replaces. *old (if non-NULL) receives the replaced value or NULL. 0 or -ENOMEM. */
int strmap_put(struct strmap *m, const char *key, void *value, void **old);
/* Makes room for n entries in all, so that putting that many grows the table no more: for a
 * caller that knows its size up front (one allocation instead of a doubling per power of
 * two). 0 or -ENOMEM (the map is unchanged). */
int strmap_reserve(struct strmap *m, size_t n);
/* Removes key and returns its value, or NULL when absent. */
void *strmap_remove(struct strmap *m, const char *key);

#endif
