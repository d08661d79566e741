// huge.h — allocations too big for a chunk's runs get a mapping of their
// own, aligned to the registry granule and registered under a descriptor
// kept out of line.
#ifndef ARENALLOC_HUGE_H
#define ARENALLOC_HUGE_H

#include <cstddef>
#include <cstdint>

#include "util.h"

namespace arenalloc {

struct Arena;

// A huge block's descriptor, in metadata memory.  Guarded by the huge
// lock (g_huge_mutex), except that addr is fixed while the block lives and
// the registry maps its granules to the descriptor, so free() finds it
// without the lock.  Invariants: usize is a multiple of the page, mapped
// of the granule, usize <= mapped; a live descriptor is on g_huge_live,
// a spare one on the spare list only.
struct Huge {
    uintptr_t addr;    // start of the block (and of the mapping)
    size_t usize;      // usable size: the request rounded up to a page
    size_t mapped;     // mapping length: usize rounded up to the granule
    Arena *arena;      // arena of the allocating thread, for statistics
    Huge *next;        // global list of live huge blocks, or spare descriptors
    Huge *prev;
};

struct HugeStats {
    uint64_t nmalloc;
    uint64_t ndalloc;
    uint64_t allocated;  // sum of usize of live blocks
    uint64_t mapped;     // sum of mapped of live blocks
};

// Under the huge lock; named here for the debug descriptor.
extern AA_HIDDEN Huge *g_huge_live;           // every live huge block
extern AA_HIDDEN HugeStats g_huge_stats;
extern AA_HIDDEN size_t g_huge_cache_bytes;   // bytes of freed mappings kept

// A huge block of at least size bytes aligned to align (power of two),
// zeroed when zero is set.
void *huge_malloc(Arena *arena, size_t size, size_t align, bool zero);

// Frees the huge block described by h; p must be its start (else reported
// on behalf of fn).
// Returns the usable size freed (0 after reporting a bad pointer).
size_t huge_free(Huge *h, void *p, const char *fn);

// Usable size of the huge block at p; reports bad pointers.
size_t huge_usable_size(Huge *h, const void *p, const char *fn);

// Resizes in place to at least size bytes; false when that cannot be done
// without moving.
bool huge_ralloc_in_place(Huge *h, void *p, size_t size);

// Grows the huge block at p to at least size bytes by moving its pages to
// a new range without copying (mremap); the new address, or nullptr.
void *huge_ralloc_move(Huge *h, void *p, size_t size);

// Unmaps cached mappings unused for the decay time.
void huge_decay();

// Unmaps every cached mapping; the bytes given back.
size_t huge_purge_cache();

// The counts, and the bytes of freed mappings kept for reuse, read
// together.
void huge_stats(HugeStats *out, size_t *cached_bytes);

void huge_prefork();
void huge_postfork_parent();
void huge_postfork_child();

}  // namespace arenalloc

#endif
