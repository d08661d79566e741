// arena.h — an arena owns chunks and serves small and large requests from
// them under its own lock.  Threads are spread over arenas round-robin so
// that they rarely meet on one lock.
//
// Invariants (arena mutex held):
//  - every chunk in `chunks` (and the spare) is registered and owned here;
//  - a bin's `current` run and the runs on its `nonfull` and `empty` lists
//    are small runs of that bin; `nonfull` runs have 0 < nfree < nregs,
//    `empty` runs nfree == nregs (the current run may be full or empty);
//    full runs are on no list; nkept is the pages of the empty lists' runs;
//  - every free run is on exactly one free bucket, chosen by its length,
//    and no two free runs are adjacent (they are coalesced on release);
//  - a free run is on the dirty list exactly when its ndirty is not zero;
//    ndirty is the sum of the free runs' ndirty, nactive the pages of
//    small and large runs.
#ifndef ARENALLOC_ARENA_H
#define ARENALLOC_ARENA_H

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "chunk.h"
#include "mutex.h"
#include "options.h"
#include "run.h"
#include "size_classes.h"

namespace arenalloc {

struct Bin {
    Run *current;        // run allocations are cut from
    Run *nonfull;        // other runs with free regions
    Run *empty;          // runs with every region free, kept for the next
                         //   fill rather than released (see region_release_locked)
    uint32_t nempty;     // runs on the empty list
    uint64_t nmalloc;    // regions handed out (to programs or thread caches)
    uint64_t ndalloc;    // regions returned
    uint64_t nrequests;  // malloc calls served from this class (caches merged)
    uint64_t nfills;     // thread-cache fills
    uint64_t nflushes;   // thread-cache flushes
    uint64_t nruns;      // runs created over time
    uint64_t curruns;    // runs alive now
    uint64_t nreslabs;   // times `current' was given another run
};

constexpr unsigned kNumLargeClasses = kNumClasses - kNumBins;

struct LargeClassStats {
    uint64_t nmalloc;
    uint64_t ndalloc;
    uint64_t curruns;
};

// Purging: an arena keeps its dirty pages (free pages written since they
// were mapped or purged) below max(peak active >> lg_dirty_ratio, one
// chunk), where peak active is the most pages the arena had in use during
// the current decay period; and dirty pages that stay unused for the decay
// time (g_options.decay_ms, 10 s by default)
// are purged the next time the arena is used after that.  Small runs that
// fall empty are kept for their bin's next refill, besides that allowance:
// up to half of it and one chunk at most, purged with the same age
// limit (arena.cc, may_keep_empty_run).  Measuring
// against the recent peak rather than the current active count keeps a
// program whose memory swings from purging at every trough.  Empty chunks
// are kept, up to kRetainedChunks, so such a program does not map and
// unmap chunks in a loop either; their pages are purged by the same rules.
constexpr uint32_t kRetainedChunks = 64;

struct ArenaStats {
    uint64_t nmalloc_small;
    uint64_t ndalloc_small;
    uint64_t nmalloc_large;
    uint64_t ndalloc_large;
    uint64_t allocated_small;  // bytes in live small regions
    uint64_t allocated_large;  // bytes in live large runs
    uint64_t nchunks;          // chunks mapped now, empty retained ones included
    uint64_t npurge_passes;    // times purging was started
    uint64_t nmadvise;         // madvise calls made for purging
    uint64_t npurged_pages;    // dirty pages given back
};

// Regions of one class freed by a thread of another arena, on their way
// back to their own arena.  Kept out of the regions themselves (metadata
// memory, recycled, never unmapped), so that a write after free cannot
// forge an entry, and so that taking a batch reads a few sequential lines
// rather than chasing a link through every region.  A batch belongs to one
// party at a time, so it needs no lock: the pushing thread while it fills
// it, an arena's chain (lock-free, arena_push_remote) until the arena's
// lock holder takes the whole chain, then the pool.  All regions[0..count)
// are of one class and one arena.
constexpr unsigned kRemoteBatchRegions = 64;

struct RemoteBatch {
    RemoteBatch *next;  // on an arena's chain of a class, or on a spare list
    uint32_t count;     // regions[0..count) are the regions not yet taken
    uint32_t unused;
    void *regions[kRemoteBatchRegions];
};

// A batch for arena_push_remote, or nullptr: from the spare list *spare
// (the caller's own, no lock) or, when that is empty, from the shared
// pool (lock-free), or new metadata memory.
RemoteBatch *remote_batch_get(RemoteBatch **spare);

// Returns the batches of the list first..last (linked by next) to the
// shared pool.
void remote_batch_put(RemoteBatch *first, RemoteBatch *last);

// The batches pushed to an arena, on lines of their own, so that pushers
// do not steal the lock's or the bins' lines.
struct alignas(64) RemoteFrees {
    std::atomic<uint64_t> pending;                // classes pushed to since
                                                  //   the last drain (a hint)
    std::atomic<RemoteBatch *> chains[kNumBins];  // per class, newest first
};

struct Arena {
    Mutex mutex;
    unsigned index;
    std::atomic<unsigned> nthreads;  // threads currently assigned
    Bin bins[kNumBins];
    Run *free_buckets[kNumClasses];  // free runs by floor size class of their length
    uint64_t free_nonempty[(kNumClasses + 63) / 64];
    Chunk *chunks;                   // every chunk, empty retained ones included
    uint32_t nempty_chunks;          // chunks with no page in use
    Run *spare_runs;                 // recycled descriptors
    uint64_t nactive;                // pages in small and large runs
    uint64_t nactive_peak;           // most active pages in this decay period
    uint64_t ndirty;                 // dirty pages in free runs
    uint64_t nkept;                  // pages of the runs on the bins' empty lists
    uint32_t kept_since;             // nkept != 0: platform_now_ms() (low 32 bits)
                                     //   when the oldest of them was kept
    Run *dirty_first;                // free runs with dirty pages, oldest first
    Run *dirty_last;
    uint64_t decay_epoch_end;        // platform_now_ms() when the period ends
    // The ratio rule's guard against purging pages that are faulted in
    // again at once (maybe_purge):
    uint64_t nclean_taken;           // clean pages made active since its last purge
    uint64_t ratio_purged;           // pages that purge gave back
    uint32_t ratio_purged_at;        // platform_now_ms() (low 32 bits) of that purge
    uint32_t lg_allowance_boost;     // allowance doublings for the rest of the period
    int32_t decay_ms;                // this arena's decay time (arena_set_decay_ms),
                                     //   kDecayMsOption: the decay_ms option's
    uint64_t created_ms;             // platform_now_ms() when it was created
    ArenaStats stats;
    LargeClassStats large[kNumLargeClasses];
    // Remote frees: small regions of this arena freed by threads of other
    // arenas, pushed into `remote' a batch at a time without the lock
    // (arena_push_remote).  Every holder of the lock (a fill of the owner
    // thread's cache, above all) first returns them all to their runs,
    // each checked against its run's bitmap (arena_drain_remote_locked).
    RemoteFrees remote;
};

// What a thread cache hands an arena for one class: the requests it served
// and the frees it took since it last handed counts over.
struct CountDelta {
    uint64_t nmalloc;
    uint64_t nfree;
};

// A new arena from metadata memory, or nullptr.  Its decay time is
// g_arena_decay_ms_default.
Arena *arena_create(unsigned index);

// Arena::decay_ms and g_arena_decay_ms_default hold a decay time as
// mallctl was given it: kDecayMsOption (follow the decay_ms option), a time
// within that option's bounds, or jemalloc's -1 (never purge by age) and 0
// (purge at once), which are applied as the longest and the shortest time
// there is.  A program reads back what it wrote.
constexpr int32_t kDecayMsOption = INT32_MIN;

inline int32_t decay_ms_as_given(int32_t d) { return d == kDecayMsOption ? g_options.decay_ms : d; }

inline int32_t decay_ms_applied(int32_t given) {
    return given == -1 ? kDecayMsMax : given == 0 ? kDecayMsMin : given;
}

// The decay time new arenas get (mallctl arenas.dirty_decay_ms).
extern AA_HIDDEN std::atomic<int32_t> g_arena_decay_ms_default;

// An arena's decay time in milliseconds, as applied (lock held).
inline int32_t arena_decay_ms_locked(const Arena *a) {
    return decay_ms_applied(decay_ms_as_given(a->decay_ms));
}

// The same taking the lock, and a new one (within the decay_ms option's
// bounds, checked by the caller).  Setting it counts every dirty page as
// decayed, as jemalloc does: they are purged at once.
int32_t arena_decay_ms(Arena *a);
void arena_set_decay_ms(Arena *a, int32_t ms);

struct TCache;

// Discards every block of a (arena_reset.cc): its runs go back to its
// free pages, its chunks stay (retained, as after free()), and its counts
// say they were freed.  Only for an arena of arenas.create, with no
// thread caches holding its blocks: own_cache (the caller's) must have
// been flushed, and false is returned, nothing done, when another cache
// is seen holding one, or with S (its guard pages would stay).
bool arena_reset(Arena *a, const TCache *own_cache);

// J and Z: new blocks zeroed or junk-filled, freed ones junk-filled.  S
// junk-fills freed small regions too, and checks the junk when a region is
// handed out again (a write after free).
constexpr int kJunkOnAlloc = 0xa5;
constexpr int kJunkOnFree = 0x5a;

// S keeps junk in the parts of a free small region that a write after
// free most likely hits and that a second free reads: its first
// kJunkHeadBytes (an object's header: a reference count, a vtable, a list
// link) and its last four, where a live block keeps its size (hardened.h).
// J junk-fills the whole region; either way these parts read as junk.
constexpr size_t kJunkHeadBytes = 64;
constexpr size_t kJunkTailBytes = 4;

// Junk-fills those parts of the free region p of usize bytes (a multiple
// of 8, as every class's size is), a word at a time.
AA_ALWAYS_INLINE void region_fill_junk(void *p, size_t usize) {
    const uint64_t pattern = 0x0101010101010101ull * kJunkOnFree;
    unsigned char *b = static_cast<unsigned char *>(p);
    size_t head = usize <= kJunkHeadBytes + kJunkTailBytes ? usize : kJunkHeadBytes;
    for (size_t i = 0; i + 8 <= head; i += 8)
        __builtin_memcpy(b + i, &pattern, 8);
    if (head != usize)
        __builtin_memcpy(b + usize - kJunkTailBytes, &pattern, kJunkTailBytes);
}

// Whether those parts of region p read as junk: the offset of the first
// byte that does not, or usize when all do.
size_t region_junk_changed_at(const void *p, size_t usize);

// A region about to be handed out whose junk changed was written after it
// was freed (reported).
void region_check_junk(void *p, size_t usize);

// The common answer of region_junk_changed_at() for a size that is a
// multiple of 8, as every class's is: whether the junk is intact (false
// also for any other size), the words or'd together, one branch.
AA_ALWAYS_INLINE bool region_junk_intact(const void *p, size_t usize) {
    const uint64_t pattern = 0x0101010101010101ull * kJunkOnFree;
    const unsigned char *b = static_cast<const unsigned char *>(p);
    if (usize % 8 != 0)
        return false;
    size_t head = usize <= kJunkHeadBytes + kJunkTailBytes ? usize : kJunkHeadBytes;
    uint64_t diff = 0;
    size_t i = 0;
    for (; i + 16 <= head; i += 16) {  // two words a step: half the loop's cost
        uint64_t w[2];
        __builtin_memcpy(w, b + i, 16);
        diff |= (w[0] ^ pattern) | (w[1] ^ pattern);
    }
    if (i < head) {
        uint64_t w;
        __builtin_memcpy(&w, b + i, 8);
        diff |= w ^ pattern;
    }
    if (head != usize) {
        uint32_t tail;
        __builtin_memcpy(&tail, b + usize - kJunkTailBytes, kJunkTailBytes);
        diff |= tail ^ static_cast<uint32_t>(pattern);
    }
    return diff == 0;
}

// Fills a new block of usize bytes as the options ask (Z zero, J junk);
// zero forces zeroing, known_zero says the memory already reads as zero.
void fill_new_block(void *p, size_t usize, bool zero, bool known_zero);

void *arena_malloc_small(Arena *a, unsigned bin, bool zero);

// Takes up to n regions of bin for a thread cache, in one lock hold; the
// lowest address ends at out[got - 1] (popped first).  Adds the cache's
// counts for the class.
unsigned arena_fill_small(Arena *a, unsigned bin, void **out, unsigned n, CountDelta counts);

// Frees, in one lock hold, those of the n small regions of class bin in
// ptrs that a owns (each checked like free() checks it); the others are
// moved to the front of ptrs and their number returned.
unsigned arena_flush_small(Arena *a, unsigned bin, void **ptrs, unsigned n);

// Pushes, without the lock, up to kRemoteBatchRegions of those of the n
// small regions of class bin in ptrs that a owns, in batch, onto a's
// remote frees; the others (of other arenas, or past the batch's room) are
// moved to the front of ptrs and their number returned.
unsigned arena_push_remote(Arena *a, unsigned bin, void **ptrs, unsigned n, RemoteBatch *batch);

// Returns a's remote-freed regions to their runs (lock held), each
// checked like free() checks it (a region freed twice is reported), and
// the batches to the pool.  Every path but a fill does this first.
void arena_drain_remote_locked(Arena *a);

// The same, taking the lock.
void arena_drain_remote(Arena *a);

// Adds a cache's counts for classes 0..nclasses-1 (the small ones and
// the cached large ones, whose requests are counted as large requests).
void arena_merge_counts(Arena *a, const CountDelta *counts, unsigned nclasses);
// Large class cls, aligned to align (a power of two, at least a page), for
// a thread of arena a: from another arena's dirty pages when a has no free
// run that fits (the block then belongs to that arena).  A thread cache's
// miss passes the counts of the class it has not handed over yet (this
// request included), which are added instead of counting one request.
void *arena_malloc_large(Arena *a, unsigned cls, size_t align, bool zero,
                         const CountDelta *cache_counts = nullptr);

// The same from a's own free pages or new chunks only, never another
// arena's (mallocx with MALLOCX_ARENA: the block belongs to the arena
// asked for), and counted as one request.
void *arena_malloc_large_in(Arena *a, unsigned cls, size_t align, bool zero);

// Frees, in one lock hold, those of the n large blocks of class cls in
// ptrs (from a thread cache) that a owns, each checked as free() checks a
// block, and adds the cache's counts of the class; the others are moved to
// the front of ptrs and their number returned.
unsigned arena_flush_large(Arena *a, unsigned cls, void **ptrs, unsigned n, CountDelta counts);

// Frees p, which the registry placed in chunk c.  A pointer that is not a
// live block start is reported on behalf of fn.
// Returns the usable size freed (0 after reporting a bad pointer).
size_t arena_free(Chunk *c, void *p, const char *fn);

// Whether the small region at p (known to be a region start in chunk c)
// is free in its run's bitmap.
bool arena_region_is_free(Chunk *c, const void *p);

// Usable size of the live block at p in chunk c; reports bad pointers.
size_t arena_usable_size(Chunk *c, const void *p, const char *fn);

// Resizes the large block at p in place to large class cls; false when the
// neighbouring pages are not free.
bool arena_ralloc_large_in_place(Chunk *c, void *p, unsigned cls);

// Purges every dirty page of the arena now; with unmap_empty, also unmaps
// its empty chunks.  Returns the number of pages purged or unmapped.
uint64_t arena_purge_all(Arena *a, bool unmap_empty);

// Applies the purging rules now (the decay sweep and the background thread
// call it for every arena, so that those nobody uses age out too): dirty
// pages over the allowance or past the decay time are purged, kept runs
// over their bound or past it released.
void arena_decay(Arena *a);


void arena_prefork(Arena *a);
void arena_postfork_parent(Arena *a);
void arena_postfork_child(Arena *a);

}  // namespace arenalloc

#endif
