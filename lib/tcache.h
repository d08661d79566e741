// tcache.h — the per-thread cache of free small regions, and of free
// blocks of the smallest large classes, that sits in front of the arenas.
// malloc pops from and free pushes onto a stack per size class with no
// lock and no atomic read-modify-write; the stacks are refilled and
// drained in batches under one arena lock acquisition.
//
// Bounds: a class of up to 14 KiB caches at most tcache_slots(bin) regions
// (about 32 KiB worth, but between 16 and 128 regions; H and h scale the
// 32 KiB and the 128, and the 16 only where a halved 128 falls below it);
// a bigger one (a large class, or with pages above 4 KiB a small one)
// about 128 KiB worth, at least one block.  Every
// g_tcache_gc_interval allocations (8192 by default, G and g) one class
// is visited; a class that needed no fill and no flush since the last
// visit is idle, and half of its stack is flushed, so an idle class
// drains to nothing while a busy one keeps what it uses.  Every
// kDecayLookAllocs allocations (or the GC interval, if shorter) the cache
// also gives the decay rule a look (decay_tick).  Both intervals are
// counted by the bins' countdowns (tcache_alloc), so they hold on average
// over the classes a thread uses.
//
// Cross-thread frees: a region freed by a thread other than the one that
// allocated it goes onto the freeing thread's stack like any other; the
// flush that stack overflows into pushes it, in a batch and without a
// lock, to its owning arena, which returns it to its run, checked as
// free() checks a block, the next time its lock is taken (a refill of its
// thread's cache above all; arena.h, RemoteBatch).  A large block goes
// back under its arena's lock (arena_flush_large): a few per flush.
#ifndef ARENALLOC_TCACHE_H
#define ARENALLOC_TCACHE_H

#include <cstdint>

#include "arena.h"
#include "config.h"
#include "debug_assert.h"
#include "size_classes.h"
#include "util.h"

namespace arenalloc {

constexpr uint32_t kTcacheBinBytes = 32 << 10;
constexpr uint32_t kTcacheMaxSlots = 128;
// At least 16 regions even of the biggest small classes: a thread that
// only allocates (or only frees) the 4-14 KiB classes then takes the arena
// lock every 8 blocks, not every 4, for at most about 1.7 MiB cached per
// thread (tools/bench cross-thread).
constexpr uint32_t kTcacheMinSlots = 16;
// Classes up to here are bounded by count (the three above); bigger ones,
// whatever the page size makes them, by bytes (kTcacheLargeBinBytes), so
// that a 64 KiB-page build's small classes of 16 to 224 KiB do not keep
// 16 blocks each.
constexpr size_t kTcacheCountedMax = 14336;

// The smallest large classes are cached too, up to kTcacheLargeMax (16 to
// 64 KiB with 4 KiB pages: nine classes; the 64 KiB class with 16 KiB
// pages; the 256 KiB class with 64 KiB pages, whose small classes reach
// 224 KiB): served by the arena, a malloc and free of these
// sizes costs two lock holds, a run cut and a run release, some 1,200
// instructions where the other allocators take tens (lib/DECISIONS.md,
// "Large classes of 16 to 64 KiB in thread caches").
// Each such class caches about kTcacheLargeBinBytes worth, at least one
// block (H and h scale the bytes); the classes are indexed after the
// small ones, so a cache's arrays cover kNumTcacheClasses classes.
constexpr size_t kTcacheLargeMax = kPage <= (16 << 10) ? size_t{64} << 10 : 4 * kPage;
constexpr uint32_t kTcacheLargeBinBytes = 128 << 10;
constexpr unsigned kNumTcacheClasses = size_to_class_formula(kTcacheLargeMax) + 1;
static_assert(kLgPage != 12 || kSmallMax == kTcacheCountedMax,
              "with 4 KiB pages the count bound is the small classes'");
static_assert(kNumTcacheClasses > kNumBins && kNumTcacheClasses <= 64,
              "the cached large classes follow the small ones");
// A cached large class is served by its class index alone, with no
// rounding to the page first, and must exist whatever the chunk size (the
// smallest chunk's largest large class is far above it).
constexpr bool cached_large_classes_are_pages() {
    for (unsigned cls = kNumBins; cls < kNumTcacheClasses; cls++)
        if (class_size_formula(cls) % kPage != 0)
            return false;
    return true;
}
static_assert(cached_large_classes_are_pages(), "cached large classes are whole pages");
static_assert(kTcacheLargeMax <= (size_t{1} << kLgChunkMin) / 2,
              "every chunk size has the cached large classes");
static_assert(kLookupMax == kTcacheLargeMax, "malloc's inline path serves the cached classes");

// Whether the fast paths count requests (configure --disable-stats turns
// it off, to measure what counting costs).
constexpr bool kStats = ARENALLOC_STATS != 0;

// Whether the fast paths check frees (configure --disable-free-checks
// turns it off, only to measure what checking costs).
constexpr bool kFreeChecks = ARENALLOC_FREE_CHECKS != 0;

// Capacity of a class's stack when H/h shift the default: about
// kTcacheBinBytes worth, between kTcacheMinSlots and kTcacheMaxSlots
// regions; the bytes and the upper bound are scaled by 2^shift, the lower
// bound only comes down to a scaled upper bound below it.
constexpr uint32_t tcache_slots_for(unsigned bin, int shift) {
    if (class_size_formula(bin) > kTcacheCountedMax) {
        uint32_t large_bytes =
            shift >= 0 ? kTcacheLargeBinBytes << shift : kTcacheLargeBinBytes >> -shift;
        uint32_t blocks = large_bytes / static_cast<uint32_t>(class_size_formula(bin));
        return blocks != 0 ? blocks : 1;
    }
    uint32_t bytes = shift >= 0 ? kTcacheBinBytes << shift : kTcacheBinBytes >> -shift;
    uint32_t most = shift >= 0 ? kTcacheMaxSlots << shift : kTcacheMaxSlots >> -shift;
    uint32_t least = kTcacheMinSlots < most ? kTcacheMinSlots : most;
    uint32_t n = bytes / static_cast<uint32_t>(class_size_formula(bin));
    return n < least ? least : n > most ? most : n;
}

// The default capacity (no H or h).
constexpr uint32_t tcache_slots(unsigned bin) { return tcache_slots_for(bin, 0); }

// Capacities in force, set once at initialization from the options.
extern AA_HIDDEN uint32_t g_tcache_slots[kNumTcacheClasses];  // all 0 when caches are off
extern AA_HIDDEN uint32_t g_tcache_total_slots;
extern AA_HIDDEN int32_t g_tcache_gc_interval;       // 0: no GC
// Allocations of one class between two ticks of its cache (the decay
// look, and the GC visit count): kDecayLookAllocs, or the GC interval if
// shorter.
extern AA_HIDDEN int64_t g_tcache_tick_period;

// Applies the H and G options; thread caches are off when H is at its
// minimum or an option needs every call on the slow path.
void tcache_configure();

// Owned by its thread; other threads only read top and the stack (the
// double-free look, tcache_any_holds()).  The stack is kept as pointers
// (top, limit) rather than a count and a capacity: a push or a pop is then
// a compare and a move of top, with no index arithmetic.
struct TCacheBin {
    void **top;       // stack[0..top) are free blocks, the newest at top[-1]
    void **stack;     // the bottom of the stack
    void **limit;     // stack + capacity (g_tcache_slots[bin]), where the
                      //   inline push stops; stack itself under S, whose
                      //   frees all take tcache_free_flush (hardened.h).
                      //   All three are null in the placeholder cache
    int64_t tick_left; // requests the bin serves before its cache's next
                       //   tick, the cache's clock (tcache_alloc); the
                       //   bin's request count is derived from it
                       //   (tcache_bin_nmalloc)
#if UINTPTR_MAX == UINT32_MAX
    // 32-bit pointers leave the fields 20 bytes; tcache_bin_at_offset's
    // arithmetic (class * 32 bytes, one scaled address) needs 32.
    uint32_t pad_to_four_words[3];
#endif

    uint32_t count() const { return static_cast<uint32_t>(top - stack); }
    // The capacity, except under S, whose limits are the stacks' bottoms:
    // g_tcache_slots[bin] is the capacity in every case.
    uint32_t max() const { return static_cast<uint32_t>(limit - stack); }
};

// The hardened profile's delayed reuse (hardened.cc): small regions the
// cache's thread freed under S, checked and junk-filled, wait here before
// they go onto their bins' stacks, so that a freed region is not handed out
// again at once.  A ring, oldest at `next`; only its thread touches it.
// Invariants: count <= kQuarantineSlots; slot[(next + i) %
// kQuarantineSlots] for i < count are the held regions, bin[] their
// classes, and bytes the sum of their sizes (at most kQuarantineBytes
// after each free).
constexpr unsigned kQuarantineSlots = 32;
constexpr size_t kQuarantineBytes = 64 << 10;  // at most this much held per thread

struct Quarantine {
    void *slot[kQuarantineSlots];
    uint8_t bin[kQuarantineSlots];
    uint32_t next;  // oldest entry
    uint32_t count;
    size_t bytes;
};

struct TCache {
    TCacheBin bins[kNumTcacheClasses];
    uint8_t active[kNumTcacheClasses];  // filled or flushed since the last GC visit
    uint8_t flow[kNumTcacheClasses];    // the bin's last slow path: kFlowFill,
                               //   kFlowFlush or 0 (see tcache.cc)
    Arena *arena;          // where fills come from: the thread's arena
    uint64_t nmalloc_ticked[kNumTcacheClasses];  // requests counted at the bins' ticks
    uint64_t merged_nmalloc[kNumTcacheClasses];  // bins' counts already handed to arenas
    uint64_t merged_nfree[kNumTcacheClasses];
    // Frees taken are not counted on the free hit path: every push raises
    // the bin's count, so they are count + tcache_bin_nmalloc +
    // nfree_adjust, where the slow paths add what they flush and subtract
    // what they fill.
    uint64_t nfree_adjust[kNumTcacheClasses];
    uint32_t gc_bin;       // class the next GC visit looks at
    int32_t gc_left;       // allocations until the next GC visit
    TCache *next_free;     // on the global list of caches of exited threads
    TCache *next_all;      // on the list of every cache ever made (never freed)
    RemoteBatch *spare_batches;  // for pushing frees to other arenas
    Quarantine *quarantine;      // S only (made with the cache, kept with it)
    // The bins' stacks, one after another: g_tcache_total_slots entries.
    void *slots[];
};

// The cache of a thread that has none: every bin is empty with no room,
// so both fast paths fall through to their slow paths without a separate
// null test.
extern AA_HIDDEN TCache g_tcache_none;

// Requests bin has served since its thread started: none in the
// placeholder cache (all zeros, its countdown is no clock), and none
// counted at all when the hit paths do not count (--disable-stats).
AA_ALWAYS_INLINE uint64_t tcache_bin_nmalloc(const TCache *tc, unsigned bin) {
    if (!kStats || tc == &g_tcache_none)
        return 0;
    return tc->nmalloc_ticked[bin] +
           static_cast<uint64_t>(g_tcache_tick_period - tc->bins[bin].tick_left);
}

// Frees bin has taken since its thread started.
// (Not counted at all when the hit paths do not count: --disable-stats.)
AA_ALWAYS_INLINE uint64_t tcache_bin_nfree(const TCache *tc, unsigned bin) {
    if (!kStats)
        return 0;
    return tc->nfree_adjust[bin] + tc->bins[bin].count() + tcache_bin_nmalloc(tc, bin);
}

// Every cache ever made, newest first, and those of exited threads (kept
// for reuse); under the tcache list lock.  A debugger finds the regions
// held in thread caches from g_tcache_all: a thread's own pointer to its
// cache lives in TLS, which a core file does not let it find easily.
extern AA_HIDDEN TCache *g_tcache_all;
extern AA_HIDDEN TCache *g_tcache_free;

// A cache for a thread that uses arena a (reused from an exited thread
// when possible), or nullptr.
TCache *tcache_create(Arena *a);

// Returns everything cached to the arenas and the cache to the free list.
void tcache_destroy(TCache *tc);

// Returns everything cached to the arenas; the cache stays usable.
void tcache_flush_all(TCache *tc);

// Whether the block at p (a region start of small class bin, or a large
// run's start of cached class bin) is in any thread's cache.  Other
// threads' stacks are read without their owners' cooperation: a block
// another thread pops at this very moment may be
// missed, but one this thread can reach only after a free that happened
// before is always seen.  Called only when p carries the free mark.
bool tcache_any_holds(const TCache *own, unsigned bin, const void *p);

// Hands the counts not yet merged to the cache's arena.
void tcache_merge_counts(TCache *tc);

// Slow paths of the hit functions below.
// They take the bin by address (one of tc->bins), which the hit paths
// have at hand, rather than by index.
AA_NOINLINE void *tcache_alloc_slow(TCache *tc, TCacheBin *b);
// calloc of a cached large class: from the stack and cleared, or on a miss
// from the arena, which clears only pages that were ever touched.
void *tcache_calloc_large(TCache *tc, unsigned bin);
// Under S every free comes here from the inline push (the bins' limits
// are their stacks) and is handed to the allocator's checked path
// (g_free_hardened_region, or g_free_uncached).
AA_NOINLINE void tcache_free_flush(TCache *tc, TCacheBin *b, void *p);

// The hardened profile's pieces (hardened.cc): a region of small class bin
// that has left tc's quarantine goes onto its stack as it is (no free
// mark: under S a free region is junk throughout), making room first when
// the stack is full; a thread's quarantine, emptied onto its stacks
// (tcache_destroy does it first).
void tcache_put_unmarked(TCache *tc, unsigned bin, void *p);
void tcache_quarantine_drain(TCache *tc);

// Where a block freed by a thread without a cache goes: the allocator's
// uncached free path (it traces and checks the block); set by the layer
// above, so this one does not depend on it.
extern AA_HIDDEN void (*const g_free_uncached)(void *p);
// Where a free under S of p, a region start of a small run of class bin as
// the inline free found it, goes (the hardened profile's checked free, its
// run and class needing no second look); set by the layer above.  Other
// frees under S take g_free_uncached, which checks them too.
extern AA_HIDDEN void (*const g_free_hardened_region)(void *p, unsigned bin);

// What an allocation that the system refused memory for calls before its
// one retry: returns the calling thread's cache to the arenas and purges
// them and the huge cache (aa_purge); set by the layer above.
extern AA_HIDDEN void (*const g_reclaim_for_retry)();
AA_NOINLINE void tcache_report_double_free(void *p);

// A block in a thread cache carries kFreeMark in its first word.  free()
// of a block that already carries it is suspect: tcache_free_suspect()
// then looks for the block in the thread's stack, in its arena's bitmap and
// in the other threads' stacks, and reports a double free when it finds it
// free; a program's own data that happens to match costs one such look and
// nothing else.  The mark is never read for any other purpose, so a
// use-after-free that forges it gains nothing, and it carries no secret: a
// fixed value that fits an instruction's 32-bit immediate (sign-extended)
// keeps the check and the store one instruction each.  Neither a small
// integer, nor a user-space address, nor a common fill byte pattern.
constexpr uintptr_t kFreeMark = static_cast<uintptr_t>(int64_t{-0x5eed0b5f});
AA_NOINLINE void tcache_free_suspect(TCache *tc, TCacheBin *b, void *p);

void tcache_prefork();
void tcache_postfork_parent();
void tcache_postfork_child();

// Fast path of malloc for a cached class: a stack pop.  Anything unusual
// (empty stack, a tick due, no cache yet) is one tail call.  The bin's
// countdown is the cache's clock: every malloc counts in exactly one bin,
// so the ticks of all bins together still come once a period on average.
// An empty stack and a tick due both make one of two numbers negative, so
// one branch tests both; as two branches (the tick counted by the bin or
// by the whole cache) malloc-test ran 5-8 % slower (lib/DECISIONS.md:
// "The cache's clock").
// The cache bin that lies offset_words 8-byte words after the first
// (SizeClassTable::bin_offset_words, Run::bin_offset_words: the class
// times 4, bins being 32 bytes): one scaled address, tc + offset * 8, where
// the class itself would take a shift and an add.
static_assert(sizeof(TCacheBin) == 32, "a bin is 32 bytes (four words on 64-bit targets)");
AA_ALWAYS_INLINE TCacheBin *tcache_bin_at_offset(TCache *tc, size_t offset_words) {
    return reinterpret_cast<TCacheBin *>(reinterpret_cast<char *>(tc->bins) + offset_words * 8);
}

template <typename Miss>
AA_ALWAYS_INLINE void *tcache_pop(TCacheBin *b, Miss miss) {
    void **top = b->top;
    AA_ASSERT(top >= b->stack);  // (and at most limit but under S)
    int64_t left = b->tick_left - 1;  // negative: a tick is due
    // Negative when the stack is empty (also in the placeholder cache,
    // whose pointers are null: hence integers, not pointer arithmetic).
    intptr_t room = static_cast<intptr_t>(reinterpret_cast<uintptr_t>(top) - 1 -
                                          reinterpret_cast<uintptr_t>(b->stack));
    if (AA_UNLIKELY((left | room) < 0))
        return miss(b);
    top--;
    b->top = top;
    b->tick_left = left;
    void *p = *top;
    if (kFreeChecks)
        *static_cast<uintptr_t *>(p) = 0;  // no stale free mark in a live block
    return p;
}

AA_ALWAYS_INLINE void *tcache_alloc(TCache *tc, size_t bin) {
    return tcache_pop(&tc->bins[bin], [tc](TCacheBin *b) { return tcache_alloc_slow(tc, b); });
}

// tcache_alloc of the class whose bin_offset_words is given (malloc's inline path).
AA_ALWAYS_INLINE void *tcache_alloc_at_offset(TCache *tc, size_t bin_offset_words) {
    return tcache_pop(tcache_bin_at_offset(tc, bin_offset_words), [tc](TCacheBin *b) { return tcache_alloc_slow(tc, b); });
}

// The pop alone, of the class whose bin_offset_words is given: nullptr where
// tcache_alloc would take its slow path, so that a caller with a general
// path of its own (posix_memalign's) needs no frame for a call it would
// have to come back from.
AA_ALWAYS_INLINE void *tcache_try_alloc_at_offset(TCache *tc, size_t bin_offset_words) {
    return tcache_pop(tcache_bin_at_offset(tc, bin_offset_words), [](TCacheBin *) -> void * { return nullptr; });
}

// Fast path of free for a validated block of a cached class: a stack push,
// after the double-free check of the mark described above.
AA_ALWAYS_INLINE void tcache_push(TCache *tc, TCacheBin *b, void *p) {
    uintptr_t *word = static_cast<uintptr_t *>(p);
    if (kFreeChecks && AA_UNLIKELY(*word == kFreeMark))
        return tcache_free_suspect(tc, b, p);
    void **top = b->top;
    if (AA_UNLIKELY(top >= b->limit))  // full, or the placeholder cache
        return tcache_free_flush(tc, b, p);
    if (kFreeChecks)
        *word = kFreeMark;
    *top = p;
    b->top = top + 1;
}

AA_ALWAYS_INLINE void tcache_free(TCache *tc, size_t bin, void *p) { tcache_push(tc, &tc->bins[bin], p); }

// tcache_free of the class whose bin_offset_words is given (free's inline path).
AA_ALWAYS_INLINE void tcache_free_at_offset(TCache *tc, size_t bin_offset_words, void *p) {
    tcache_push(tc, tcache_bin_at_offset(tc, bin_offset_words), p);
}

}  // namespace arenalloc

#endif
