/* SPDX-License-Identifier: Apache-2.0 */
#include "util/heap_hint.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/sanitizer.h"

#if defined(__GLIBC__) && !MUSTER_ASAN
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

int heap_hint_huge_pages(size_t expect)
{
#if defined(__GLIBC__) && !MUSTER_ASAN && defined(MADV_HUGEPAGE) && defined(M_TOP_PAD)
	const uintptr_t huge = (uintptr_t)2 << 20;
	/* mallopt takes an int; past 1 GiB the rest is left to malloc's usual growth. */
	const size_t floor = (size_t)64 << 20, ceiling = (size_t)1 << 30;
	size_t pad = expect < floor ? floor : expect > ceiling ? ceiling : expect;
	/* Large blocks from the heap too (by default those over 128 KiB are mapped apart, in
	 * 4 KiB pages), and no trimming: the run keeps what it fills. */
	if (!mallopt(M_MMAP_THRESHOLD, 64 << 20) || !mallopt(M_TRIM_THRESHOLD, INT_MAX) ||
	    !mallopt(M_TOP_PAD, (int)pad))
		return -ENOTSUP;
	/* A block larger than the heap's free top makes it grow now, by the pad. */
	const size_t probe_size = (size_t)1 << 20;
	char *probe = malloc(probe_size);
	void *brk_end = sbrk(0);
	if (!probe || brk_end == (void *)-1) {
		free(probe);
		return -ENOTSUP;
	}
	uintptr_t from = ((uintptr_t)probe + huge - 1) & ~(huge - 1);
	uintptr_t end = (uintptr_t)brk_end;
	int rc = -ENOTSUP;
	/* The probe must lie in the brk heap, just below its end (else glibc mapped it). */
	if ((uintptr_t)probe + probe_size <= end &&
	    end - (uintptr_t)probe <= pad + probe_size + huge && end > from)
		rc = madvise((void *)from, end - from, MADV_HUGEPAGE) == 0 ? 0 : -ENOTSUP;
	free(probe);
	return rc;
#else
	(void)expect;
	return -ENOTSUP;
#endif
}
