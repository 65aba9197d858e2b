/* SPDX-License-Identifier: Apache-2.0 */
#include "util/json_arena.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "util/sanitizer.h"

#if MUSTER_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Address space only (PROT_NONE costs no memory and no commit charge); it is made writable a
 * megabyte at a time as the bump pointer reaches it. One Workload's tree takes a few KB; what
 * the caller keeps (the cluster's queues and classes) stays below the floor for the run. */
#define RESERVE ((size_t)1 << 30)
#define COMMIT_STEP ((size_t)1 << 20)
#define ALIGN 16
/* Larger blocks (a long array's storage) go to malloc: rare, and not worth the room. */
#define MAX_BLOCK ((size_t)64 << 10)

static struct {
	char *base; /* NULL: not installed */
	size_t committed; /* bytes from base that are readable and writable */
	size_t floor; /* below: kept documents' blocks, never reused while any is alive */
	size_t used; /* the bump pointer; [floor, used) is the current document's */
	size_t live_current, live_kept; /* blocks allocated and not freed, above and below floor */
	int on; /* between begin and pause */
	size_t open_end; /* committed while on, else 0: arena_malloc's one bound (set_on) */
	int current_malloc; /* a block of the current document came from malloc */
	json_malloc_t prev_malloc;
	json_free_t prev_free;
} arena;

static int commit(size_t need)
{
	size_t want = (need + COMMIT_STEP - 1) / COMMIT_STEP * COMMIT_STEP;
	if (need > RESERVE || want > RESERVE)
		return -1;
	if (mprotect(arena.base + arena.committed, want - arena.committed,
		     PROT_READ | PROT_WRITE) != 0)
		return -1;
	POISON(arena.base + arena.committed, want - arena.committed);
	arena.committed = want;
	if (arena.on)
		arena.open_end = want;
	return 0;
}

static void set_on(int on)
{
	arena.on = on;
	arena.open_end = on ? arena.committed : 0;
}

/* n bytes (size rounded up) from the bump pointer, which the caller checked are committed. */
static void *bump(size_t n, size_t size)
{
	char *p = arena.base + arena.used;
	arena.used += n;
	arena.live_current++;
	UNPOISON(p, size);
	(void)size;
	return p;
}

/* What arena_malloc leaves out of line: size 0, large blocks, committing more, malloc. */
static __attribute__((noinline)) void *arena_malloc_slow(size_t size)
{
	if (arena.on && size <= MAX_BLOCK) {
		size_t n = size ? (size + ALIGN - 1) / ALIGN * ALIGN : ALIGN;
		if (arena.committed - arena.used >= n || commit(arena.used + n) == 0)
			return bump(n, size);
	}
	if (arena.on)
		arena.current_malloc =
			1; /* the document can't be discarded: this block needs free */
	return malloc(size);
}

/* Every jansson node is one to three calls of this: the common case, a small block within
 * committed memory, is only the bump (with the rest inline, it was three times as long). */
static void *arena_malloc(size_t size)
{
	size_t n = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1); /* 0 for 0 and on overflow */
	if (n - 1 < MAX_BLOCK && arena.used + n <= arena.open_end)
		return bump(n, size);
	return arena_malloc_slow(size);
}

static void arena_free(void *ptr)
{
	char *p = ptr;
	if (p && arena.base && p >= arena.base && p < arena.base + RESERVE) {
		if (p >= arena.base + arena.floor)
			arena.live_current--;
		else
			arena.live_kept--;
		return;
	}
	free(ptr);
}

int json_arena_install(void)
{
	if (arena.base)
		return 0;
	void *p =
		mmap(NULL, RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	arena.base = p;
	arena.committed = arena.floor = arena.used = 0;
	arena.live_current = arena.live_kept = 0;
	set_on(0);
	json_get_alloc_funcs(&arena.prev_malloc, &arena.prev_free);
	json_set_alloc_funcs(arena_malloc, arena_free);
	return 0;
}

void json_arena_uninstall(void)
{
	if (!arena.base || arena.live_current || arena.live_kept)
		return;
	json_set_alloc_funcs(arena.prev_malloc, arena.prev_free);
	UNPOISON(arena.base, arena.committed);
	munmap(arena.base, RESERVE);
	arena.base = NULL;
	set_on(0);
}

void json_arena_begin(void)
{
	set_on(arena.base != NULL);
}

void json_arena_pause(void)
{
	set_on(0);
}

int json_arena_owns(const void *p)
{
	const char *c = p;
	return arena.base && c >= arena.base && c < arena.base + RESERVE;
}

int json_arena_on(void)
{
	return arena.on;
}

void json_arena_end(void)
{
	set_on(0);
	arena.current_malloc = 0;
	if (!arena.base)
		return;
	if (arena.live_current == 0) {
		/* Every block of the document was freed: its memory is the next one's. */
		POISON(arena.base + arena.floor, arena.used - arena.floor);
		arena.used = arena.floor;
	} else {
		/* Something still holds part of it: it stays where it is, counted as kept. */
		arena.live_kept += arena.live_current;
		arena.live_current = 0;
		arena.floor = arena.used;
	}
	if (arena.live_kept == 0) {
		POISON(arena.base, arena.used);
		arena.floor = arena.used = 0;
	}
}

int json_arena_discard(void)
{
	set_on(0);
	if (!arena.base || arena.current_malloc)
		return -1;
	/* The caller's word that nothing refers to the document: its blocks are dead. */
	arena.live_current = 0;
	json_arena_end();
	return 0;
}

size_t json_arena_live(void)
{
	return arena.live_current + arena.live_kept;
}
