// arena_reset.cc — discarding every block of an arena at once (mallctl
// arena.<i>.reset), for the arenas arenas.create made: their blocks are
// only those their threads allocated (arena_large.cc lends them no pages
// and takes none of theirs), so a program can throw away a whole phase's
// data in one call.
#include <stdint.h>

#include "arena_internal.h"
#include "debug_assert.h"
#include "options.h"
#include "tcache.h"

namespace arenalloc {

namespace {

bool arena_owns_chunk(const Arena *a, const Chunk *c) {
    for (const Chunk *k = a->chunks; k != nullptr; k = k->next)
        if (k == c)
            return true;
    return false;
}

// Whether a cache other than own is seen holding a block of a (lock
// held).  The other threads' stacks are read without their owners, as
// tcache_any_holds reads them: a cache in use at this very moment may be
// misread, one its thread left alone is read right.  Only the addresses
// are compared; nothing at them is read.
bool other_cache_holds_block_of(const Arena *a, const TCache *own) {
    for (const TCache *tc = __atomic_load_n(&g_tcache_all, __ATOMIC_ACQUIRE); tc != nullptr;
         tc = tc->next_all) {
        if (tc == own)
            continue;
        for (unsigned bin = 0; bin < kNumTcacheClasses; bin++) {
            const TCacheBin &b = tc->bins[bin];
            void **top = __atomic_load_n(&b.top, __ATOMIC_RELAXED);
            for (void **slot = b.stack; slot < top; slot++) {
                const void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);
                if (arena_owns_chunk(a, chunk_containing(p)))
                    return true;
            }
        }
    }
    return false;
}

// Every small and large run of a's chunks, linked through their `next'
// fields (free for the purpose once the bins' lists are emptied).  A page
// of a live run names its run, and so does the first page of a free run.
Run *collect_live_runs(Arena *a) {
    Run *live = nullptr;
    for (Chunk *c = a->chunks; c != nullptr; c = c->next) {
        for (uint32_t page = c->header_pages; page < c->npages;) {
            PageMapEntry e = c->map[page];
            Run *r = page_map_run(e);
            AA_ASSERT(r != nullptr && run_first_page(r) == page);
            page += r->npages;
            if (page_map_tag(e) == kPageFree)
                continue;
            r->next = live;
            live = r;
        }
    }
    return live;
}

}  // namespace

bool arena_reset(Arena *a, const TCache *own_cache) {
    if (g_options.hardened)
        return false;
    MutexGuard guard(a->mutex);
    if (other_cache_holds_block_of(a, own_cache))
        return false;
    arena_drain_remote_locked(a);
    for (unsigned b = 0; b < kNumBins; b++) {
        Bin &bin = a->bins[b];
        bin.current = nullptr;
        bin.nonfull = nullptr;
        bin.empty = nullptr;
        bin.nempty = 0;
    }
    a->nkept = 0;
    Run *r = collect_live_runs(a);
    // A run released after the last of its chunk may take the chunk with
    // it (run_release): nothing here reads a chunk after its last run.
    while (r != nullptr) {
        Run *next = r->next;
        if (r->state == kPageSmall) {
            Bin &bin = a->bins[r->size_class];
            uint64_t live = r->nregs - r->nfree;
            bin.ndalloc += live;
            bin.curruns--;
            a->stats.ndalloc_small += live;
            a->stats.allocated_small -= live * r->region_size;
            run_release(a, r);
        } else {
            AA_ASSERT(r->state == kPageLarge);
            a->stats.ndalloc_large++;
            large_release_locked(a, r);
        }
        r = next;
    }
    return true;
}

}  // namespace arenalloc
