/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Growing arrays, the one way muster grows them. An array is a pointer to its first element
 * (NULL when nothing is allocated) and a capacity, the elements allocated; the caller keeps
 * the count of those in use. GROW(arr, cap, need) makes room for need elements: when cap is
 * less, the array is reallocated to the larger of need and twice cap (GROW_FIRST at first),
 * so n appends copy O(n) elements in all. cap is a size_t or a uint32_t.
 *
 * Every function returns 0, or -ENOMEM when out of memory or when the size would not fit its
 * type (need elements of the array's size in a size_t of bytes, or a uint32_t capacity): the
 * array and its capacity are then as they were. Elements past the old capacity are
 * uninitialised. arrayp is always the array's address (a T **, taken as void * so that any T
 * will do; the pointer is read and written whole, never through a void ** alias).
 */
#ifndef MUSTER_GROW_H
#define MUSTER_GROW_H

#include <stddef.h>
#include <stdint.h>

#define GROW_FIRST 8 /* elements of the first allocation, unless need is more */

/* The common case, room enough, costs a comparison and no call: need and cap are read
 * twice, so they must have no side effects. */
#define GROW(arr, cap, need)                  \
	(grow_has_room((need), (cap)) ?       \
		 0 :                          \
		 _Generic((cap), uint32_t     \
			  : grow_u32, default \
			  : grow_size)((void *)&(arr), &(cap), (need), sizeof(*(arr))))

static inline int grow_has_room(size_t need, size_t cap)
{
	return need <= cap;
}

int grow_size(void *arrayp, size_t *cap, size_t need, size_t elem);
int grow_u32(void *arrayp, uint32_t *cap, size_t need, size_t elem);

/* The capacity GROW would grow cap to for need elements of elem bytes, at most max_cap
 * (UINT32_MAX for a uint32_t capacity): cap itself when it is enough, 0 when need elements
 * could not be allocated at all. For arrays that share one capacity: each is then
 * reallocated with grow_resize. */
size_t grow_capacity(size_t cap, size_t need, size_t elem, size_t max_cap);

/* Reallocates the array to exactly n elements of elem bytes (n > 0). */
int grow_resize(void *arrayp, size_t n, size_t elem);

#endif
