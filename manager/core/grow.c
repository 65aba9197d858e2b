/* SPDX-License-Identifier: Apache-2.0 */
#include "core/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t grow_capacity(size_t cap, size_t need, size_t elem, size_t max)
{
	if (SIZE_MAX / elem < max)
		max = SIZE_MAX / elem;
	if (need <= cap)
		return cap;
	if (need > max)
		return 0;
	size_t next = cap == 0 ? GROW_FIRST : cap > max / 2 ? max : 2 * cap;
	return next < need ? need : next > max ? max : next;
}

int grow_resize(void *arrayp, size_t n, size_t elem)
{
	void *array;
	if (n == 0 || n > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&array, arrayp, sizeof(array));
	void *grown = realloc(array, n * elem);
	if (!grown)
		return -ENOMEM;
	memcpy(arrayp, &grown, sizeof(grown));
	return 0;
}

static int grow_within(void *arrayp, size_t *cap, size_t need, size_t elem, size_t max)
{
	if (need <= *cap)
		return 0;
	size_t next = grow_capacity(*cap, need, elem, max);
	if (next == 0 || grow_resize(arrayp, next, elem) != 0)
		return -ENOMEM;
	*cap = next;
	return 0;
}

int grow_size(void *arrayp, size_t *cap, size_t need, size_t elem)
{
	return grow_within(arrayp, cap, need, elem, SIZE_MAX);
}

int grow_u32(void *arrayp, uint32_t *cap, size_t need, size_t elem)
{
	size_t wide = *cap;
	int rc = grow_within(arrayp, &wide, need, elem, UINT32_MAX);
	if (rc == 0)
		*cap = (uint32_t)wide;
	return rc;
}
