/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small helpers shared by the engine benchmarks: clocks, memory figures, a seeded generator
 * and medians. Header-only (static inline) so each bench stays one translation unit.
 * The benches are not core code, so they may read /proc and use glibc's mallinfo2.
 */
#ifndef MUSTER_BENCH_COMMON_H
#define MUSTER_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

#define BENCH_MS(ns) ((double)(ns) / 1e6)

static inline int64_t bench_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wall time on a clock that never jumps. */
static inline int64_t bench_wall_ns(void)
{
	return bench_clock(CLOCK_MONOTONIC);
}

/* CPU time of this process (one thread: the engine has none of its own). */
static inline int64_t bench_cpu_ns(void)
{
	return bench_clock(CLOCK_PROCESS_CPUTIME_ID);
}

/* A field of /proc/self/status in KiB (VmRSS: now, VmHWM: the peak so far), -1 if absent. */
static inline long bench_status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	size_t n = strlen(field);
	long v = -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Bytes of heap in use (small blocks plus mmapped ones): unlike RSS this drops when the
 * engine frees and is not rounded to pages, so it shows the engine's own data size. */
static inline long long bench_heap_bytes(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();
	return (long long)(mi.uordblks + mi.hblkhd);
#else
	return -1;
#endif
}

/* xorshift64*: deterministic across platforms, good enough for shuffles. */
static inline uint64_t bench_rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of n values (sorts v). */
static inline double bench_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The q-quantile (0..1, nearest rank) of n values already sorted ascending. */
static inline double bench_quantile(const double *sorted, size_t n, double q)
{
	if (!n)
		return 0;
	size_t i = (size_t)(q * (double)n + 0.999999);
	if (i < 1)
		i = 1;
	if (i > n)
		i = n;
	return sorted[i - 1];
}

#endif
