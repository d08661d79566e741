// tcache.cc — filling, flushing and collecting thread caches.
#include "tcache.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base.h"
#include "chunk.h"
#include "decay.h"
#include "mutex.h"
#include "options.h"
#include "platform.h"
#include "report.h"
#include "thread_state.h"

namespace arenalloc {

TCache g_tcache_none;
uint32_t g_tcache_slots[kNumTcacheClasses];
uint32_t g_tcache_total_slots;
int32_t g_tcache_gc_interval;
TCache *g_tcache_all = nullptr;
TCache *g_tcache_free = nullptr;

namespace {

// Allocations from a cache (over all its classes, on average) between two
// looks of the decay rule.  A process that frees a big job's memory and
// then goes on with light traffic served entirely from its caches would
// otherwise look only at GC visits, every 8192 allocations, and keep its
// freed memory resident long past the decay time (tools/bench/free_all.c).
// A look costs a clock read from the vDSO.
constexpr int32_t kDecayLookAllocs = 512;

int32_t tick_period() {
    return g_tcache_gc_interval != 0 && g_tcache_gc_interval < kDecayLookAllocs
               ? g_tcache_gc_interval
               : kDecayLookAllocs;
}

}  // namespace

int64_t g_tcache_tick_period = kDecayLookAllocs;  // until tcache_configure()

void tcache_configure() {
    bool off = options_shut_tcache();
    g_tcache_total_slots = 0;
    for (unsigned bin = 0; bin < kNumTcacheClasses; bin++) {
        g_tcache_slots[bin] = off ? 0 : tcache_slots_for(bin, g_options.tcache_shift);
        g_tcache_total_slots += g_tcache_slots[bin];
    }
    g_tcache_gc_interval = g_options.lg_tcache_gc > 0 ? int32_t{1} << g_options.lg_tcache_gc : 0;
    AA_ASSERT(g_tcache_all == nullptr);  // the bins' countdowns assume one period
    g_tcache_tick_period = tick_period();
}

namespace {

// TCache::flow: what last took a bin to its slow path.
constexpr uint8_t kFlowFill = 1;
constexpr uint8_t kFlowFlush = 2;

// What a refill or an overflow moves, unless the bin keeps going one way:
// half its stack, at least one region.
uint32_t half_stack(unsigned bin) { return g_tcache_slots[bin] / 2 != 0 ? g_tcache_slots[bin] / 2 : 1; }

// The counts of bin not yet handed to an arena (tcache.h: nfree_adjust).
CountDelta unmerged_counts(const TCache *tc, unsigned bin) {
    return {tcache_bin_nmalloc(tc, bin) - tc->merged_nmalloc[bin],
            tcache_bin_nfree(tc, bin) - tc->merged_nfree[bin]};
}

void note_counts_merged(TCache *tc, unsigned bin) {
    tc->merged_nmalloc[bin] = tcache_bin_nmalloc(tc, bin);
    tc->merged_nfree[bin] = tcache_bin_nfree(tc, bin);
}

// One block of a cached class for a thread with no cache, straight from
// its arena.
void *alloc_uncached(Arena *a, unsigned bin) {
    return bin < kNumBins ? arena_malloc_small(a, bin, false)
                          : arena_malloc_large(a, bin, kPage, false);
}

}  // namespace

namespace {

Mutex g_tcache_mutex;               // guards both lists (see tcache.h)

// Frees stack[0..n) of bin b to their arenas and slides the rest of the
// stack down.  The regions of the thread's own arena and of an arena no
// thread uses any more go back under one lock hold per arena; the others
// are pushed to their arena in batches without its lock, for the next
// holder of that lock to return to their runs (lib/DECISIONS.md:
// "Cross-thread frees go back in batches").  Blocks of a cached large
// class all go back under their arena's lock.
void flush_oldest(TCache *tc, unsigned bin, unsigned n) {
    TCacheBin *b = &tc->bins[bin];
    AA_ASSERT(n <= b->count() && b->count() <= g_tcache_slots[bin]);
    unsigned left = n;
    // A large class's counts go with its first flush (its misses and
    // flushes are its only visits to an arena: tcache_alloc_slow).
    CountDelta counts = bin >= kNumBins ? unmerged_counts(tc, bin) : CountDelta{0, 0};
    if (bin >= kNumBins)
        note_counts_merged(tc, bin);  // a flush leaves the counts as they are
    while (left != 0) {
        Arena *owner = chunk_containing(b->stack[0])->arena;
        if (bin >= kNumBins) {
            // Large blocks go back to their runs under their arena's lock.
            left = arena_flush_large(owner, bin, b->stack, left, counts);
            counts = {0, 0};
            continue;
        }
        RemoteBatch *batch = nullptr;
        if (owner != tc->arena && owner->nthreads.load(std::memory_order_relaxed) != 0)
            batch = remote_batch_get(&tc->spare_batches);
        if (batch != nullptr)
            left = arena_push_remote(owner, bin, b->stack, left, batch);
        else
            left = arena_flush_small(owner, bin, b->stack, left);
    }
    memmove(b->stack, b->stack + n, (b->count() - n) * sizeof(void *));
    b->top -= n;
    tc->nfree_adjust[bin] += n;
}

}  // namespace

TCache *tcache_create(Arena *a) {
    if (g_tcache_total_slots == 0)
        return nullptr;  // caches are off
    TCache *tc;
    {
        MutexGuard guard(g_tcache_mutex);
        tc = g_tcache_free;
        if (tc != nullptr)
            g_tcache_free = tc->next_free;
    }
    if (tc == nullptr) {
        tc = static_cast<TCache *>(
            base_alloc(sizeof(TCache) + g_tcache_total_slots * sizeof(void *)));
        Quarantine *q = nullptr;
        if (tc != nullptr && g_options.hardened)
            q = static_cast<Quarantine *>(base_alloc(sizeof(Quarantine)));
        if (tc == nullptr || (g_options.hardened && q == nullptr))
            return nullptr;  // (base memory is never returned: tc is lost)
        tc->quarantine = q;
        void **slot = tc->slots;
        for (unsigned bin = 0; bin < kNumTcacheClasses; bin++) {
            tc->bins[bin].stack = slot;
            slot += g_tcache_slots[bin];
            // Under S the inline push finds every stack full (tcache.h).
            tc->bins[bin].limit = g_options.hardened ? tc->bins[bin].stack : slot;
        }
        MutexGuard guard(g_tcache_mutex);
        tc->next_all = g_tcache_all;
        // Read without the lock (double-free checks, debuggers).
        __atomic_store_n(&g_tcache_all, tc, __ATOMIC_RELEASE);
    }
    for (unsigned bin = 0; bin < kNumTcacheClasses; bin++) {
        tc->bins[bin].top = tc->bins[bin].stack;
        tc->active[bin] = 0;
        tc->flow[bin] = 0;
    }
    tc->arena = a;
    for (unsigned bin = 0; bin < kNumTcacheClasses; bin++) {
        // The bins start their countdowns out of step (a golden-ratio
        // spread over the period), so a thread that cycles through a few
        // classes ticks about every period allocations rather than all
        // its classes at once, a few periods apart.  Their request counts
        // start at zero all the same (tcache_bin_nmalloc; the unsigned
        // sum wraps).
        uint64_t spread = static_cast<uint32_t>(bin * 0x9e3779b9u);  // bin x 2^32 / golden ratio
        uint64_t period = static_cast<uint64_t>(g_tcache_tick_period);
        int64_t left = 1 + static_cast<int64_t>((spread * period) >> 32);
        tc->bins[bin].tick_left = left;
        tc->nmalloc_ticked[bin] = static_cast<uint64_t>(left - g_tcache_tick_period);
        tc->nfree_adjust[bin] = 0;
        tc->merged_nmalloc[bin] = tc->merged_nfree[bin] = 0;
    }
    tc->gc_bin = 0;
    tc->gc_left = g_tcache_gc_interval;
    tc->spare_batches = nullptr;
    tc->next_free = nullptr;
    return tc;
}

namespace {

bool stack_holds(const TCacheBin *b, const void *p) {
    void **top = __atomic_load_n(&b->top, __ATOMIC_RELAXED);
    uint32_t n = static_cast<uint32_t>(top - b->stack);
    for (uint32_t i = n; i-- > 0;)
        if (__atomic_load_n(&b->stack[i], __ATOMIC_RELAXED) == p)
            return true;
    return false;
}

}  // namespace

bool tcache_any_holds(const TCache *own, unsigned bin, const void *p) {
    if (*static_cast<const uintptr_t *>(p) != kFreeMark)
        return false;
    for (const TCache *tc = __atomic_load_n(&g_tcache_all, __ATOMIC_ACQUIRE); tc != nullptr;
         tc = tc->next_all)
        if (tc != own && stack_holds(&tc->bins[bin], p))
            return true;
    return own != &g_tcache_none && stack_holds(&own->bins[bin], p);
}

void tcache_merge_counts(TCache *tc) {
    CountDelta d[kNumTcacheClasses];
    for (unsigned bin = 0; bin < kNumTcacheClasses; bin++) {
        d[bin] = unmerged_counts(tc, bin);
        note_counts_merged(tc, bin);
    }
    arena_merge_counts(tc->arena, d, kNumTcacheClasses);
}

void tcache_flush_all(TCache *tc) {
    for (unsigned bin = 0; bin < kNumTcacheClasses; bin++) {
        if (tc->bins[bin].count() != 0)
            flush_oldest(tc, bin, tc->bins[bin].count());
        tc->flow[bin] = 0;  // what follows starts at halves again
    }
    tcache_merge_counts(tc);
}

void tcache_destroy(TCache *tc) {
    // The quarantine goes with its thread; a purge or a flush of a living
    // thread's cache leaves it, so that the reuse it delays stays delayed.
    tcache_quarantine_drain(tc);
    tcache_flush_all(tc);
    if (tc->spare_batches != nullptr) {
        RemoteBatch *last = tc->spare_batches;
        while (last->next != nullptr)
            last = last->next;
        remote_batch_put(tc->spare_batches, last);
        tc->spare_batches = nullptr;
    }
    MutexGuard guard(g_tcache_mutex);
    tc->next_free = g_tcache_free;
    g_tcache_free = tc;
}

namespace {

void tcache_tick(TCache *tc) {
    int32_t counted = static_cast<int32_t>(g_tcache_tick_period);
    decay_tick();
    if (g_tcache_gc_interval == 0)
        return;
    tc->gc_left -= counted;
    if (tc->gc_left > 0)
        return;
    tc->gc_left = g_tcache_gc_interval;
    // What other threads freed and no holder of the arena lock has
    // returned yet goes back to the runs now and then, so that regions
    // passed between threads do not wait for this thread's next refill.
    arena_drain_remote(tc->arena);
    unsigned bin = tc->gc_bin;
    uint32_t n = tc->bins[bin].count();
    if (!tc->active[bin] && n != 0) {
        flush_oldest(tc, bin, (n + 1) / 2);
        tc->flow[bin] = 0;  // idle: its next refill is half the stack
    }
    tc->active[bin] = 0;
    tc->gc_bin = (bin + 1) % kNumTcacheClasses;
}

// Counts a request that a slow path serves from bin b, then ticks the
// cache if the bin's countdown had run out (the hit path leaves that
// request to the slow path).  Counted first, so that a GC visit the tick
// makes sees the counts whole.
void count_request(TCache *tc, TCacheBin *b) {
    if (b->tick_left > 0) {
        b->tick_left--;
        return;
    }
    tc->nmalloc_ticked[b - tc->bins] += static_cast<uint64_t>(g_tcache_tick_period - b->tick_left);
    b->tick_left = g_tcache_tick_period - 1;
    tcache_tick(tc);
}

// A large class is not filled ahead: a miss takes one block from the
// arena, counted as the cache's (the stack fills as the thread frees).
// After a failure, once more with what is held given back.  The counts go
// with it, this request included.  With zero the arena clears the block,
// or knows its pages were never touched and leaves them so.
void *large_miss(TCache *tc, unsigned bin, bool zero) {
    TCacheBin *b = &tc->bins[bin];
    CountDelta counts = unmerged_counts(tc, bin);
    counts.nmalloc++;
    void *p = arena_malloc_large(tc->arena, bin, kPage, zero, &counts);
    if (AA_UNLIKELY(p == nullptr)) {
        g_reclaim_for_retry();  // merges this cache's counts: take them anew
        counts = unmerged_counts(tc, bin);
        counts.nmalloc++;
        p = arena_malloc_large(tc->arena, bin, kPage, zero, &counts);
    }
    if (p == nullptr)
        return nullptr;  // errno set by the arena; the counts stay here
    count_request(tc, b);
    tc->nfree_adjust[bin]--;  // handed out without passing the stack
    note_counts_merged(tc, bin);
    tc->active[bin] = 1;
    tc->flow[bin] = kFlowFill;  // an overflow after it returns half
    if (!zero)
        *static_cast<uintptr_t *>(p) = 0;  // a free mark left by an earlier owner
    return p;
}

}  // namespace

void *tcache_calloc_large(TCache *tc, unsigned bin) {
    AA_ASSERT(bin >= kNumBins && bin < kNumTcacheClasses);
    if (tc != &g_tcache_none && tc->bins[bin].top == tc->bins[bin].stack) {
        return large_miss(tc, bin, true);
    }
    void *p = tcache_alloc(tc, bin);
    if (p != nullptr)
        memset(p, 0, class_to_size(bin));
    return p;
}

void *tcache_alloc_slow(TCache *tc, TCacheBin *bin_of_tc) {
    unsigned bin = static_cast<unsigned>(bin_of_tc - tc->bins);
    if (AA_UNLIKELY(tc == &g_tcache_none)) {
        // First cached-class request of this thread (or one made while it
        // exits).
        tc = thread_tcache_slow();
        if (tc == nullptr) {
            Arena *a = thread_arena();
            if (a == nullptr) {
                errno = ENOMEM;
                return nullptr;
            }
            void *p = alloc_uncached(a, bin);
            if (p == nullptr) {
                g_reclaim_for_retry();
                p = alloc_uncached(a, bin);
            }
            if (p != nullptr)
                tls_thread_state.allocated_uncached += class_to_size(bin);
            return p;
        }
        return tcache_alloc(tc, bin);
    }
    TCacheBin *b = &tc->bins[bin];
    // A stack that is not empty came here for the tick (count_request).
    if (b->top == b->stack) {
        if (bin >= kNumBins)
            return large_miss(tc, bin, false);
        // Half the capacity per fill: enough to amortize the lock, not so
        // much that a thread hoards regions it will not use.  A bin whose
        // last slow path was a fill too has not overflowed since: its
        // thread takes more of the class than it gives back (a producer
        // of blocks that others free, a wave of allocations), and gets
        // the whole capacity, for half as many fills.
        unsigned want = tc->flow[bin] == kFlowFill ? g_tcache_slots[bin] : half_stack(bin);
        tc->flow[bin] = kFlowFill;
        unsigned got = arena_fill_small(tc->arena, bin, b->stack, want, unmerged_counts(tc, bin));
        note_counts_merged(tc, bin);
        if (AA_UNLIKELY(got == 0)) {
            // The system refused a chunk: give back what is held, once.
            g_reclaim_for_retry();
            CountDelta none = {0, 0};
            want = half_stack(bin);  // short of memory: no more than half
            got = arena_fill_small(tc->arena, bin, b->stack, want, none);
        }
        if (got == 0) {
            errno = ENOMEM;
            return nullptr;
        }
        AA_ASSERT(got <= want && want <= g_tcache_slots[bin]);
        b->top = b->stack + got;
        tc->nfree_adjust[bin] -= got;
        tc->active[bin] = 1;
        decay_tick();
    }
    void *p = *--b->top;
    count_request(tc, b);
    // No stale free mark in a live block; under S there is none, and the
    // caller checks the region is still all junk.
    if (!g_options.hardened)
        *static_cast<uintptr_t *>(p) = 0;
    return p;
}

namespace {

// Pushes p onto bin's stack, first flushing the oldest half (or all, when
// the last slow path was a flush too: a thread that frees what others
// allocate keeps nothing) when it is full.
void push_making_room(TCache *tc, unsigned bin, void *p) {
    TCacheBin *b = &tc->bins[bin];
    if (b->count() >= g_tcache_slots[bin]) {
        unsigned n = tc->flow[bin] == kFlowFlush ? b->count() : half_stack(bin);
        tc->flow[bin] = kFlowFlush;
        flush_oldest(tc, bin, n);
        tc->active[bin] = 1;
        decay_tick();
    }
    AA_ASSERT(b->count() < g_tcache_slots[bin]);
    *b->top++ = p;
}

}  // namespace

void tcache_free_flush(TCache *tc, TCacheBin *bin_of_tc, void *p) {
    unsigned bin = static_cast<unsigned>(bin_of_tc - tc->bins);
    if (AA_UNLIKELY(g_options.hardened)) {
        // Checked, then quarantined (hardened.h).  A small class's block
        // comes from the inline free, which found it a region start of a
        // run of that class (unless free checks are configured out).
        if (kFreeChecks && bin < kNumBins)
            return g_free_hardened_region(p, bin);
        return g_free_uncached(p);
    }
    if (AA_UNLIKELY(tc == &g_tcache_none)) {
        // The first free of a thread that has not allocated a small block
        // yet, such as a consumer freeing what producers allocate: it gets
        // a cache too, or each of its frees would take an arena lock.
        tc = thread_tcache_slow();
        if (tc == nullptr)
            return g_free_uncached(p);  // caches off, or the thread is exiting
        return tcache_free(tc, bin, p);
    }
    *static_cast<uintptr_t *>(p) = kFreeMark;
    push_making_room(tc, bin, p);
}

void tcache_put_unmarked(TCache *tc, unsigned bin, void *p) {
    AA_ASSERT(bin < kNumBins);
    push_making_room(tc, bin, p);
}

void tcache_quarantine_drain(TCache *tc) {
    Quarantine *q = tc->quarantine;
    if (q == nullptr)
        return;
    for (; q->count != 0; q->count--) {
        push_making_room(tc, q->bin[q->next], q->slot[q->next]);
        q->next = (q->next + 1) % kQuarantineSlots;
    }
    q->bytes = 0;
}

void tcache_free_suspect(TCache *tc, TCacheBin *bin_of_tc, void *p) {
    unsigned bin = static_cast<unsigned>(bin_of_tc - tc->bins);
    // This thread's stack first (the common double free), then the arena,
    // then every other thread's stack (the first free happened elsewhere).
    if (tc != &g_tcache_none && stack_holds(&tc->bins[bin], p))
        return tcache_report_double_free(p);
    if (arena_region_is_free(chunk_containing(p), p))
        return tcache_report_double_free(p);
    if (tcache_any_holds(tc, bin, p))
        return tcache_report_double_free(p);
    // Not free: the program's data matched the mark by chance.  Free it
    // normally.
    tcache_free_flush(tc, bin_of_tc, p);
}

void tcache_report_double_free(void *p) {
    report_invalid_pointer("free", p, "block already free (double free)");
}

void tcache_prefork() { g_tcache_mutex.lock(); }
void tcache_postfork_parent() { g_tcache_mutex.unlock(); }
void tcache_postfork_child() { g_tcache_mutex.reinit_in_child(); }

}  // namespace arenalloc
