// arena_internal.h — what the pieces of the arena layer share; arena.h is
// its interface to the rest of lib/.  Every function here runs with the
// arena's lock held unless its name or comment says otherwise.
//
//   arena.cc           creation, free(), counts handed over, fork hooks
//   arena_run.cc       run descriptors, free buckets, page-map tagging,
//                      chunks, cutting runs from free pages and coalescing
//                      them back
//   arena_purge.cc     the dirty-page rules: ratio (with its thrash guard),
//                      decay, kept empty runs, explicit purges
//   arena_bin.cc       bins: small regions, thread-cache fills and flushes
//   arena_remote.cc    regions freed by threads of other arenas, and the
//                      lock-free pool of batches that carry them
//   arena_large.cc     large blocks, arena 0's shared large runs and the
//                      watch over its lock, resizing in place
//   arena_validate.cc  whether a pointer is a live block start
//   arena_reset.cc     discarding every block of an arena at once
#ifndef ARENALLOC_ARENA_INTERNAL_H
#define ARENALLOC_ARENA_INTERNAL_H

#include <atomic>
#include <cstdint>

#include "arena.h"
#include "chunk.h"
#include "page_map.h"
#include "run.h"
#include "size_classes.h"

namespace arenalloc {

// ---- counts a thread cache hands over (arena.cc, arena_bin.cc,
// arena_large.cc)

inline void merge_bin_counts_locked(Arena *a, unsigned bin, CountDelta d) {
    a->bins[bin].nrequests += d.nmalloc;
    a->stats.nmalloc_small += d.nmalloc;
    a->stats.ndalloc_small += d.nfree;
}

// A cached large class's requests and frees (its runs are counted apart).
inline void merge_large_counts_locked(Arena *a, CountDelta d) {
    a->stats.nmalloc_large += d.nmalloc;
    a->stats.ndalloc_large += d.nfree;
}

// ---- runs and chunks (arena_run.cc)

// A zeroed run descriptor, recycled or new, or nullptr.
Run *desc_alloc(Arena *a);
void desc_free(Arena *a, Run *r);

// The page index of run r's first page in its chunk.
inline uint32_t run_first_page(const Run *r) {
    return chunk_page_index(r->chunk, reinterpret_cast<void *>(r->base));
}

// Every page of run r gets tag (and names r).
void tag_pages(Run *r, PageTag tag);
// A free run's boundary pages name it; its inner pages only say "free".
void tag_free_boundaries(Run *r);
// A page that stops being a free run's boundary (its dirty bit kept).
void untag_boundary(Chunk *c, uint32_t page);

// The dirty pages among n pages of free run r from page first on.
uint32_t count_dirty(const Run *r, uint32_t first, uint32_t n);

void dirty_list_remove(Arena *a, Run *r);
// A free run goes onto its size bucket, and the dirty list when it has
// dirty pages; and comes off both.
void free_run_insert(Arena *a, Run *r);
void free_run_remove(Arena *a, Run *r);
void note_dirty_dropped(Arena *a, uint32_t n);

// The pages of a chunk that runs can use (those after its header).
inline uint32_t chunk_usable_pages() { return g_chunk.npages - g_chunk.header_pages; }

// Unmaps an empty chunk whose one free run, covering every usable page,
// has been taken off the free lists and its boundaries untagged.
void chunk_release(Arena *a, Chunk *c, Run *whole);

// Where run_alloc may take pages from: any free run, growing the arena when
// none fits; any free run; or only a free run whose first npages pages are
// mostly dirty (resident already), looked for among the oldest dirty runs.
enum class RunSource { kAnyOrGrow, kAny, kDirty };

// npages pages starting at a multiple of align_pages pages, from the free
// runs as from says; untagged.  nullptr when none can be had.
Run *run_alloc(Arena *a, uint32_t npages, uint32_t align_pages,
               RunSource from = RunSource::kAnyOrGrow);

// Returns a run's pages to the free runs, dirty unless the caller purged
// them, merging with free neighbours; may unmap an empty chunk, and
// applies the purging rules.
void run_release(Arena *a, Run *r, bool dirty = true);

// Grows run r in place by the extra pages after it, when they are free;
// the caller tags them.
bool run_extend(Arena *a, Run *r, uint32_t extra);

// Shrinks run r to its first npages pages, releasing the rest; false when
// no descriptor can be had for the rest.
bool run_trim_tail(Arena *a, Run *r, uint32_t npages);

// ---- purging and kept empty runs (arena_purge.cc)

// The ratio rule and decay, after pages became dirty at time now.
void maybe_purge(Arena *a, uint64_t now);

// Whether bin's run r, just fallen empty, may be kept on the bin's empty
// list; keeping it, and taking the newest kept run back for a refill.
bool may_keep_empty_run(const Arena *a, const Run *r);
void keep_empty_run(Arena *a, Bin &bin, Run *r);
Run *take_kept_run(Arena *a, Bin &bin);

// Releases kept runs of the bins in mask until the arena keeps no more
// than it may.
void trim_empty_runs_locked(Arena *a, uint64_t mask);

// ---- bins (arena_bin.cc)

// Returns region reg of small run r, validated by the caller.
void region_release_locked(Arena *a, Run *r, uint32_t reg, bool keep_empty = false);

// Returns the regions in ptrs[0..n) of class bin_index that belong to a,
// each checked as free() checks it; moves the others' to the front of
// ptrs and returns how many.
unsigned release_regions_locked(Arena *a, unsigned bin_index, void **ptrs, unsigned n,
                                bool keep_empty);

// ---- remote frees (arena_remote.cc)

uint64_t drain_remote_pending_locked(Arena *a, bool keep_empty);

// Returns the regions other threads pushed to their runs; the bins they
// were for.  Checked inline: most calls find nothing pending.
AA_ALWAYS_INLINE uint64_t drain_remote_locked(Arena *a, bool keep_empty) {
    if (AA_LIKELY(a->remote.pending.load(std::memory_order_relaxed) == 0))
        return 0;
    return drain_remote_pending_locked(a, keep_empty);
}

// ---- large blocks (arena_large.cc)

// How many times a free into arena 0 retries its busy lock before it
// sleeps on it (shared_large).
constexpr unsigned kSharedLargeSpins = 100;

// Returns validated large run r to the free pages; the request was
// counted by the caller or its thread cache.
void large_release_locked(Arena *a, Run *r);

// ---- validation (arena_validate.cc)

// nullptr and the run (and the region index of a small run) when p is a
// live block start in chunk c, or the finding to report.
const char *validate_locked(Chunk *c, const void *p, Run **run_out, uint32_t *reg_out);

// For AA_ASSERT: run r lies in its chunk's usable pages, and the map
// entries of its first and last page name r with r's state.
bool run_map_agrees(const Run *r);

// For AA_ASSERT: c is a live arena chunk, and the registry says so for p.
bool chunk_owns(const Chunk *c, const void *p);

}  // namespace arenalloc

#endif
