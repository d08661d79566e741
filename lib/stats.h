// stats.h — statistics: consistent snapshots of the counters the arenas,
// bins, thread caches and huge blocks keep, and the text/JSON report.
//
// Where each counter lives: arena stats and bin/large-class counts are
// written under the arena lock; thread caches count requests and frees per
// class without a lock and merge them into the arena when they fill, flush
// or exit (stats_merge_own_cache() merges the caller's own at once); huge
// counts are written under the huge lock.  A snapshot takes each lock in
// turn, so totals are exact once every thread cache has been flushed.
#ifndef ARENALLOC_STATS_H
#define ARENALLOC_STATS_H

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "arena.h"
#include "size_classes.h"

namespace arenalloc {

struct BinSnapshot {
    uint64_t region_size;
    uint64_t nregs;        // regions per run
    uint64_t run_size;     // bytes per run
    uint64_t nmalloc;      // regions handed out by the arena
    uint64_t ndalloc;      // regions returned to the arena
    uint64_t nrequests;    // malloc calls served (thread caches merged)
    uint64_t curregs;      // regions outside the arena now (live or cached)
    uint64_t curruns;      // runs alive now
    uint64_t nruns;        // runs created over time
    uint64_t nfills;       // thread-cache fills
    uint64_t nflushes;     // thread-cache flushes
    uint64_t nreslabs;     // times the run regions are cut from changed
};

struct LargeSnapshot {
    uint64_t size;
    uint64_t nmalloc;
    uint64_t ndalloc;
    uint64_t curruns;
};

struct ArenaSnapshot {
    unsigned index;
    unsigned nthreads;
    uint64_t mapped;            // bytes of chunks mapped
    uint64_t retained;          // bytes of empty chunks kept
    uint64_t active;            // bytes in small runs and large blocks
    uint64_t dirty;             // bytes of dirty free pages
    uint64_t resident;          // active + dirty + chunk headers (page map count)
    uint64_t allocated_small;   // bytes of regions outside the arena
    uint64_t allocated_large;
    uint64_t nmalloc_small;     // program-level requests (caches merged)
    uint64_t ndalloc_small;
    uint64_t nmalloc_large;
    uint64_t ndalloc_large;
    uint64_t npurge_passes;
    uint64_t nmadvise;
    uint64_t npurged_pages;
    uint64_t lock_acquired;
    uint64_t lock_contended;
    BinSnapshot bins[kNumBins];
    unsigned nlarge;            // large classes in use with this chunk size
    LargeSnapshot large[kNumLargeClasses];
    uint64_t uptime_ms;         // since the arena was created
    int64_t decay_ms;           // its decay time
};

struct HeapSnapshot {
    unsigned narenas;           // configured
    unsigned narenas_used;      // created
    uint64_t allocated;         // small + large + huge bytes outside the arenas
    uint64_t active;            // active pages of every arena + huge bytes
    uint64_t metadata;          // bytes of the allocator's own metadata mappings
    uint64_t resident;          // arenas' resident + huge (live and cached) + metadata
    uint64_t mapped;            // chunks + huge mappings (live and cached) + metadata
    uint64_t retained;          // empty chunks kept
    uint64_t dirty;
    uint64_t nchunks;
    uint64_t huge_nmalloc;
    uint64_t huge_ndalloc;
    uint64_t huge_allocated;    // usable bytes of live huge blocks
    uint64_t huge_mapped;       // mapped bytes of live huge blocks
    uint64_t huge_cur;          // live huge blocks
    uint64_t huge_cached;       // bytes of freed huge mappings kept for reuse
    uint64_t nmalloc_small;     // small requests (caches merged)
    uint64_t nmalloc_large;
    uint64_t nmalloc;           // small + large + huge requests
    uint64_t nfree;
    uint64_t nthreads_seen;
};

// What is free inside one arena's chunks, by small class.
struct ArenaFreeSummary {
    uint64_t mapped;            // bytes of its chunks
    uint64_t allocated;         // bytes of its small and large blocks
    uint64_t free_regions;      // regions free in its small runs
    uint64_t free_region_bytes;
    uint64_t bin_free[kNumBins];  // free regions per class
};

// realloc() calls with a pointer and size 0 (stats.zero_reallocs).
extern AA_HIDDEN std::atomic<uint64_t> g_zero_reallocs;

// Merges the calling thread's cache counts into its arena.
void stats_merge_own_cache();

// Snapshot of arena i (false when it does not exist).
bool stats_arena(unsigned i, ArenaSnapshot *out);

// Adds arena snapshot from's counts to to's (class sizes copied): the
// figures of several arenas merged, as jemalloc's stats.arenas.<all>.
void stats_merge_arena(ArenaSnapshot *to, const ArenaSnapshot &from);

// Arena i's free summary (false when it does not exist).
bool stats_arena_free(unsigned i, ArenaFreeSummary *out);

// Whole-heap totals (walks every arena).
bool stats_heap(HeapSnapshot *out);

// The report behind malloc_stats_print().  The letters of opts that
// jemalloc 5.3 has mean what they mean there: J, JSON in jemalloc's
// layout (stats_jemalloc.h); g, m, a, b, l, x leave out the general
// section, the merged arenas, the per-arena sections, the bin tables, the
// large tables and the lock counts (d, e, h: nothing of the kind here).
// arenalloc's own: A, JSON in arenalloc's layout (top key "arenalloc",
// what the heap walkers print); t, the text's heap totals left out.
// Written in pieces through write_cb (stderr when null); nothing is
// allocated.
void stats_print(void (*write_cb)(void *, const char *), void *cbopaque, const char *opts);

void stats_prefork();
void stats_postfork_parent();
void stats_postfork_child();

}  // namespace arenalloc

#endif
