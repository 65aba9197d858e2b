/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bump arena for the jansson trees of one document at a time, for `muster simulate` alone:
 * a 50,000-Workload export is 3.4 million small jansson allocations, built and dropped one
 * document after another, and malloc plus free of them was a fifth of simulating it.
 *
 * Installing sets jansson's allocator (json_set_alloc_funcs), which is process-wide: only the
 * simulate CLI (sim_main) and its fuzz target install it, never the manager, and only from
 * one thread (neither runs jansson on another). Installed, jansson allocates from the arena
 * between json_arena_begin and json_arena_pause, and from malloc otherwise; its free hands
 * malloc's blocks to free() and ignores the arena's, so trees of both kinds may mix.
 *
 * Why no tree outlives its memory: the arena counts its live blocks, those of the current
 * document (allocated since the last json_arena_end) apart from older ones. json_arena_end
 * gives the current document's memory back only when none of its blocks is alive, i.e. every
 * node built for it was freed by jansson; if any is still referenced (a document the caller
 * keeps, a subtree something took a reference to), the memory stays, below a floor that
 * later documents never reuse, and is counted with the older blocks. When no block at all is
 * alive the whole arena is free again. The counts are exact because every arena block is
 * freed through jansson exactly once, as every malloc block is. Under AddressSanitizer the
 * memory given back is poisoned, so a use after it would still be caught.
 *
 * Not installed (or when memory for the arena can't be had), every function is a no-op and
 * jansson uses malloc as before.
 */
#ifndef MUSTER_JSON_ARENA_H
#define MUSTER_JSON_ARENA_H

#include <stddef.h>

/* Reserves the arena's address space and makes it jansson's allocator. 0, or -errno: then
 * nothing changed. Installing twice is a no-op. */
int json_arena_install(void);
/* Puts jansson's previous allocator back and unmaps the arena, if no arena block is alive;
 * else changes nothing (the process is about to exit, and its blocks must stay valid). */
void json_arena_uninstall(void);

/* The next jansson allocations (one document's tree) come from the arena. */
void json_arena_begin(void);
/* jansson allocates from malloc again; the document's blocks still count as current. */
void json_arena_pause(void);
/* Whether jansson allocates from the arena now (between begin and pause): for code that
 * pauses it to build something that outlives the document, and then resumes it. */
int json_arena_on(void);
/* The caller is done with the current document: its memory is reused if none of its blocks
 * is alive, else kept (see above). Also pauses. */
void json_arena_end(void);

/* Ends the current document without freeing its tree: its memory is reused at once, without
 * jansson walking every node to free it (a tenth of reading a large export). Only for a
 * document nothing refers to, the caller's own reference included (which it drops unused):
 * neither a node of it held elsewhere nor a node from elsewhere put into it, as after a
 * decoder that only reads it. 0; or -1, changing nothing but pausing, when the arena isn't
 * installed or a block of the document came from malloc (it must be freed): then free the
 * document and call json_arena_end as usual. */
int json_arena_discard(void);

/* Whether p is arena memory (then it may be reused once its document ends): for code that
 * would keep a reference to a node past its document. 0 when the arena isn't installed. */
int json_arena_owns(const void *p);

/* Arena blocks alive (allocated and not freed), all documents: for tests and leak checks. */
size_t json_arena_live(void);

#endif
