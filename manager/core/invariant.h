/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MUSTER_ASSERT(cond): an invariant the code relies on, stated where it must hold. It is
 * checked where NDEBUG is not defined (CMake's Debug build type: the sanitized build of CI's
 * unit tier) and where MUSTER_CHECKED is (muster_core_checked, which the property tests link
 * in every build type). In release builds (RelWithDebInfo and Release define NDEBUG) cond is
 * not evaluated and costs nothing. A broken invariant is a bug, not an error to handle: the
 * check prints where and what, and aborts.
 *
 * Cheap checks (constant time, or one path up the cohort tree) go inline; the ones that walk
 * a whole structure belong in engine_check (core/engine.h), which a checked build runs after
 * every cycle. Standard headers only, like the rest of core/.
 */
#ifndef MUSTER_INVARIANT_H
#define MUSTER_INVARIANT_H

#include <stdio.h>
#include <stdlib.h>

#if !defined(NDEBUG) || defined(MUSTER_CHECKED)
#define MUSTER_CHECKS 1
#define MUSTER_ASSERT(cond) \
	((cond) ? (void)0 : muster_invariant_broken(#cond, __FILE__, __LINE__, __func__))

static inline _Noreturn void muster_invariant_broken(const char *cond, const char *file, int line,
						     const char *func)
{
	fprintf(stderr, "%s:%d: %s: invariant broken: %s\n", file, line, func, cond);
	abort();
}
#else
#define MUSTER_CHECKS 0
/* cond is not evaluated, but what it names counts as used. */
#define MUSTER_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

#endif
