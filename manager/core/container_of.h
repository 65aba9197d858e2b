/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CONTAINER_OF: the struct of type that holds member at ptr, as libuv's and Linux's
 * container_of. For callbacks handed a pointer to a member (a uv_work_t, a write request, a
 * closing timer; a text inside its header; a cohort's tree node) that need the whole. ptr must
 * point at a member of a type; const is not kept (say it in the result's declaration).
 * Lives in core/ because the pure core uses it too; it includes only a standard header.
 */
#ifndef MUSTER_CONTAINER_OF_H
#define MUSTER_CONTAINER_OF_H

#include <stddef.h>

#define CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#endif
