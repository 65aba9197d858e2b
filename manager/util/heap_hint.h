/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Huge pages for a one-shot batch process's heap: `muster simulate` alone, never the manager.
 *
 * Simulating a large export fills about 70 MiB of heap, once, and keeps it to the end. Each
 * first touch of a 4 KiB page is a page fault, and on a virtual machine a fault costs
 * microseconds: the 18,200 of a 50,000-Workload export were most of its system time, about
 * a seventh of its CPU. Transparent huge pages fault 2 MiB at a time, but with the kernel's
 * usual setting ("madvise") only in memory the process marks, and glibc marks its heap only
 * when told by an environment variable (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), which a
 * process can't set for itself.
 *
 * What it buys, measured (tests/bench/results/simulate-large.md, 74fe4d6): 18,200 faults
 * become 1,400 and a run takes 0.93x the CPU. Not more, because the kernel still zeroes
 * every huge page it hands out, and calloc now clears blocks that used to come from fresh,
 * already zero mappings (1.6 % more instructions).
 *
 * So heap_hint_huge_pages makes glibc's heap grow once by about `expect` bytes from the next
 * allocation on, and never shrink, with every block, large ones too, carved from it, and marks
 * that range MADV_HUGEPAGE. Memory is touched as before; only the page size changes (the
 * resident set grows by less than one huge page per region, plus what the heap's top holds).
 * It changes malloc's behaviour for the whole process and for good, which only a short-lived
 * single-purpose run can afford: the manager, long-running, keeps glibc's defaults.
 *
 * Returns 0, or -ENOTSUP when it changed nothing that matters: not glibc, built with
 * AddressSanitizer (its allocator is not glibc's), no MADV_HUGEPAGE, or the heap could not be
 * grown by brk (glibc then maps memory instead). Never fatal: everything works without it.
 */
#ifndef MUSTER_HEAP_HINT_H
#define MUSTER_HEAP_HINT_H

#include <stddef.h>

int heap_hint_huge_pages(size_t expect);

#endif
