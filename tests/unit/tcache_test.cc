// Unit tests of the thread cache (lib/tcache.h), through the internal API:
// the test process itself runs on the system allocator.
#include <atf-c++.hpp>

#include <pthread.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "allocator.h"
#include "arena.h"
#include "init.h"
#include "require_msg.h"
#include "tcache.h"
#include "thread_state.h"

using namespace arenalloc;

// The first large class (four pages: 16 KiB with 4 KiB pages), and the
// second and third where the thread caches hold them (with 16 and 64 KiB
// pages they hold the first only).
const size_t kFirstLarge = class_to_size(kNumBins);
const size_t kSecondCachedLarge = class_to_size(kNumBins + 1 < kNumTcacheClasses ? kNumBins + 1 : kNumBins);
const size_t kThirdCachedLarge = class_to_size(kNumBins + 2 < kNumTcacheClasses ? kNumBins + 2 : kNumBins);

namespace {

uint64_t allocated_small(Arena *a) {
    MutexGuard guard(a->mutex);
    return a->stats.allocated_small;
}

uint64_t allocated_small_all() {
    uint64_t sum = 0;
    for (unsigned i = 0; i < g_narenas; i++)
        if (Arena *a = arena_peek(i))
            sum += allocated_small(a);
    return sum;
}

TCache *own_cache() {
    TCache *tc = tls_thread_state.tcache;
    ATF_REQUIRE(tc != &g_tcache_none);
    return tc;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(tcache__created_on_first_small_request);
ATF_TEST_CASE_BODY(tcache__created_on_first_small_request) {
    ATF_REQUIRE(tls_thread_state.tcache == &g_tcache_none);
    void *p = aa_malloc(64);
    ATF_REQUIRE(p != nullptr);
    own_cache();
    aa_free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(tcache__last_freed_is_next_allocated);
ATF_TEST_CASE_BODY(tcache__last_freed_is_next_allocated) {
    void *a = aa_malloc(100);
    void *b = aa_malloc(100);
    aa_free(a);
    aa_free(b);
    ATF_REQUIRE_EQ(aa_malloc(100), b);
    ATF_REQUIRE_EQ(aa_malloc(100), a);
}

ATF_TEST_CASE_WITHOUT_HEAD(tcache__bounded_per_class);
ATF_TEST_CASE_BODY(tcache__bounded_per_class) {
    // Freeing far more regions than a class may cache flushes the excess
    // back to the arena in batches.
    std::vector<void *> blocks;
    for (int i = 0; i < 5000; i++)
        blocks.push_back(aa_malloc(1024));
    uint64_t before = allocated_small_all();
    TCache *tc = own_cache();
    unsigned bin = size_to_class(1024);
    // Regions of the last refill not handed out yet count as out too.
    uint64_t leftover = tc->bins[bin].count();
    for (void *p : blocks)
        aa_free(p);
    ATF_REQUIRE(tc->bins[bin].count() <= tc->bins[bin].max());
    ATF_REQUIRE_EQ(tc->bins[bin].max(), tcache_slots(bin));
    uint64_t cached_bytes = uint64_t{tc->bins[bin].count()} * 1024;
    // Everything not in the cache went back: allocated_small counts cached
    // regions as still out of the arena.
    ATF_REQUIRE_EQ(allocated_small_all(), before - (5000 + leftover) * 1024 + cached_bytes);
}

ATF_TEST_CASE_WITHOUT_HEAD(tcache__bytes_bounded);
ATF_TEST_CASE_BODY(tcache__bytes_bounded) {
    // The most a thread can cache, over all classes.
    // Classes up to 14 KiB (every small class with 4 KiB pages) by count;
    // the bigger small classes of 16 and 64 KiB pages by bytes, as the
    // large ones: about kTcacheLargeBinBytes worth, at least one block.
    uint64_t total = 0;
    unsigned by_bytes = 0;
    for (unsigned bin = 0; bin < kNumBins; bin++) {
        const uint64_t size = bin_info(bin).region_size;
        const uint64_t bytes = uint64_t{tcache_slots(bin)} * size;
        if (size <= kTcacheCountedMax) {
            ATF_REQUIRE(tcache_slots(bin) >= kTcacheMinSlots);
            ATF_REQUIRE(tcache_slots(bin) <= kTcacheMaxSlots);
        } else {
            by_bytes++;
            ATF_REQUIRE(tcache_slots(bin) >= 1);
            ATF_REQUIRE_MSG(bytes <= kTcacheLargeBinBytes || tcache_slots(bin) == 1,
                            "class " << size << ": " << tcache_slots(bin));
        }
        total += bytes;
    }
    ATF_REQUIRE_EQ(by_bytes, kNumBins - 36);
    const uint64_t bound = 36u * 2 * kTcacheBinBytes + uint64_t{by_bytes} * kTcacheLargeBinBytes * 2;
    ATF_REQUIRE_MSG(total <= bound, "cache bound " << total);
}

namespace {

struct Handoff {
    std::vector<void *> blocks;
    unsigned arena_index;
};

void *alloc_many(void *arg) {
    Handoff *h = static_cast<Handoff *>(arg);
    ATF_REQUIRE(thread_set_arena(h->arena_index));
    for (int i = 0; i < 3000; i++)
        h->blocks.push_back(aa_malloc(48 + (i % 7) * 200));
    // Free a few here too so this thread's own cache holds something.
    for (int i = 0; i < 100; i++) {
        aa_free(h->blocks.back());
        h->blocks.pop_back();
    }
    return nullptr;
}

void *free_many(void *arg) {
    Handoff *h = static_cast<Handoff *>(arg);
    ATF_REQUIRE(thread_set_arena(h->arena_index));
    for (void *p : h->blocks)
        aa_free(p);
    h->blocks.clear();
    return nullptr;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(tcache__thread_exit_returns_everything);
ATF_TEST_CASE_BODY(tcache__thread_exit_returns_everything) {
    ATF_REQUIRE(aa_malloc(8) != nullptr);  // initializes
    uint64_t before = allocated_small_all();
    Handoff h{{}, 0};
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, alloc_many, &h), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    // The allocating thread exited: its cached regions are back; what is
    // still out is exactly the blocks it handed over.
    uint64_t handed = 0;
    for (void *p : h.blocks)
        handed += aa_usable_size(p);
    ATF_REQUIRE_EQ(allocated_small_all(), before + handed);
    for (void *p : h.blocks)
        aa_free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(tcache__cross_thread_free_reaches_owner);
ATF_TEST_CASE_BODY(tcache__cross_thread_free_reaches_owner) {
    ATF_REQUIRE(aa_malloc(8) != nullptr);
    if (g_narenas < 2)
        ATF_SKIP("needs two arenas");
    Arena *owner = arena_get(1);
    ATF_REQUIRE(owner != nullptr);
    uint64_t owner_before = allocated_small(owner);
    Handoff h{{}, 1};
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, alloc_many, &h), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    ATF_REQUIRE(allocated_small(owner) > owner_before);
    // A thread on another arena frees them; when it exits its cache is
    // flushed to the owning arena, not to its own.
    h.arena_index = 0;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, free_many, &h), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    ATF_REQUIRE_EQ(allocated_small(owner), owner_before);
}

namespace {

uint64_t lock_acquisitions(Arena *a) {
    MutexGuard guard(a->mutex);
    return a->mutex.nacquired_;
}

struct RemoteFree {
    std::vector<void *> blocks;
    Arena *owner;
    uint64_t owner_locks_before;
    uint64_t owner_locks_after;
};

// Frees every block on arena 1 and exits (which flushes its cache), then
// reports how often the owner's lock was taken meanwhile.
void *free_remotely(void *arg) {
    RemoteFree *f = static_cast<RemoteFree *>(arg);
    ATF_REQUIRE(thread_set_arena(1));
    f->owner_locks_before = lock_acquisitions(f->owner);
    for (void *p : f->blocks)
        aa_free(p);
    tcache_flush_all(own_cache());
    f->owner_locks_after = lock_acquisitions(f->owner);
    return nullptr;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(tcache__remote_frees_skip_the_owners_lock);
ATF_TEST_CASE_BODY(tcache__remote_frees_skip_the_owners_lock) {
    ATF_REQUIRE(aa_malloc(8) != nullptr);
    if (g_narenas < 2)
        ATF_SKIP("needs two arenas");
    ATF_REQUIRE(thread_set_arena(0));  // the owner has a live thread: this one
    RemoteFree f{{}, arena_get(0), 0, 0};
    // 64 regions a run at every page size (64 bytes with 4 KiB pages), so
    // that the 1000 blocks span runs the owner's fills come back to.
    const size_t size = 64 * (kPage / 4096);
    unsigned bin = size_to_class(size);
    for (int i = 0; i < 1000; i++)
        f.blocks.push_back(aa_malloc(size));
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, free_remotely, &f), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    // The freeing thread pushed batches: the only acquisition it saw is
    // its own second look (lock_acquisitions takes the lock once).
    ATF_REQUIRE_EQ(f.owner_locks_after, f.owner_locks_before + 1);
    ATF_REQUIRE(f.owner->remote.chains[bin].load() != nullptr);
    // The owner's fills hand those very regions out again, before any
    // region from a run.
    TCache *tc = own_cache();
    while (tc->bins[bin].count() != 0)
        (void)aa_malloc(size);
    void *again = aa_malloc(size);
    bool was_freed = false;
    for (void *p : f.blocks)
        was_freed = was_freed || p == again;
    ATF_REQUIRE(was_freed);
    aa_free(again);
}

// Issue 9 item 2: once a class's stack holds regions, its malloc and free
// take no arena lock.  100,000 pairs would take 200,000 acquisitions
// without the cache, and over 1,500 fills and flushes if the cache went to
// its arena on every batch; the hit path takes none.  What may come is
// the periodic work of the cache's clock (a decay sweep), a few at most.
ATF_TEST_CASE_WITHOUT_HEAD(tcache__hits_take_no_lock);
ATF_TEST_CASE_BODY(tcache__hits_take_no_lock) {
    aa_free(aa_malloc(64));  // the cache exists and holds a 64-byte region
    own_cache();
    // Every arena that exists (arena_peek creates none); the loop below
    // creates none either.
    std::vector<uint64_t> before;
    for (unsigned i = 0; i < g_narenas; i++) {
        Arena *a = arena_peek(i);
        before.push_back(a != nullptr ? lock_acquisitions(a) : 0);
    }
    for (int i = 0; i < 100000; i++) {
        void *p = aa_malloc(64);
        ATF_REQUIRE(p != nullptr);
        aa_free(p);
    }
    uint64_t taken = 0;
    for (unsigned i = 0; i < g_narenas; i++) {
        Arena *a = arena_peek(i);
        ATF_REQUIRE_EQ(a != nullptr, before[i] != 0);
        if (a != nullptr)
            taken += lock_acquisitions(a) - before[i] - 1;  // less its own
    }
    ATF_REQUIRE_MSG(taken <= 2 * g_narenas,
                    "100,000 cache hits took " << taken << " arena locks");
}

ATF_TEST_CASE_WITHOUT_HEAD(tcache__remote_frees_seen_by_checks_and_stats);
ATF_TEST_CASE_BODY(tcache__remote_frees_seen_by_checks_and_stats) {
    ATF_REQUIRE(aa_malloc(8) != nullptr);
    if (g_narenas < 2)
        ATF_SKIP("needs two arenas");
    ATF_REQUIRE(thread_set_arena(0));
    Arena *owner = arena_get(0);
    tcache_flush_all(own_cache());
    uint64_t before = allocated_small(owner);
    RemoteFree f{{}, owner, 0, 0};
    for (int i = 0; i < 300; i++)
        f.blocks.push_back(aa_malloc(16 + (i % 9) * 100));
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, free_remotely, &f), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    ATF_REQUIRE(owner->remote.pending.load() != 0);
    // A pushed region is free to the double-free check (which returns
    // the batches to their runs first) ...
    void *p = f.blocks[0];
    ATF_REQUIRE(arena_region_is_free(chunk_containing(p), p));
    ATF_REQUIRE_EQ(owner->remote.pending.load(), 0u);
    // ... and to the statistics.
    tcache_flush_all(own_cache());
    ATF_REQUIRE_EQ(allocated_small(owner), before);
}

ATF_TEST_CASE_WITHOUT_HEAD(tcache__remote_frees_refill_from_emptied_runs);
ATF_TEST_CASE_BODY(tcache__remote_frees_refill_from_emptied_runs) {
    // Regions another thread frees empty their runs when the owner's refill
    // drains them; the refill takes those runs back instead of releasing
    // them and cutting new ones.
    ATF_REQUIRE(aa_malloc(8) != nullptr);
    if (g_narenas < 2)
        ATF_SKIP("needs two arenas");
    ATF_REQUIRE(thread_set_arena(0));
    Arena *owner = arena_get(0);
    unsigned bin = size_to_class(4096);
    RemoteFree f{{}, owner, 0, 0};
    for (int i = 0; i < 64; i++)
        f.blocks.push_back(aa_malloc(4096));
    TCache *tc = own_cache();
    tcache_flush_all(tc);
    uint64_t nruns = owner->bins[bin].nruns;
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, free_remotely, &f), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    ATF_REQUIRE(owner->remote.chains[bin].load() != nullptr);
    std::vector<void *> again;
    for (int i = 0; i < 64; i++)
        again.push_back(aa_malloc(4096));
    ATF_REQUIRE_EQ(owner->bins[bin].nruns, nruns);
    for (void *p : again)
        aa_free(p);
}

namespace {

struct FreeOnly {
    std::vector<void *> blocks;
    bool had_cache_before;
    uint32_t cached;
};

void *free_only(void *arg) {
    FreeOnly *f = static_cast<FreeOnly *>(arg);
    f->had_cache_before = tls_thread_state.tcache != &g_tcache_none;
    for (void *p : f->blocks)
        aa_free(p);
    TCache *tc = tls_thread_state.tcache;
    f->cached = tc != &g_tcache_none ? tc->bins[size_to_class(64)].count() : 0;
    return nullptr;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(tcache__free_only_thread_gets_a_cache);
ATF_TEST_CASE_BODY(tcache__free_only_thread_gets_a_cache) {
    // A thread that never allocates a small block, only frees what another
    // allocated, caches those frees too instead of taking an arena lock
    // for each.
    FreeOnly f{{}, false, 0};
    for (int i = 0; i < 10; i++)
        f.blocks.push_back(aa_malloc(64));
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, free_only, &f), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    ATF_REQUIRE(!f.had_cache_before);
    ATF_REQUIRE_EQ(f.cached, 10u);
}

ATF_TEST_CASE_WITHOUT_HEAD(tcache__idle_class_drained);
ATF_TEST_CASE_BODY(tcache__idle_class_drained) {
    std::vector<void *> blocks;
    for (int i = 0; i < 40; i++)
        blocks.push_back(aa_malloc(2000));
    for (void *p : blocks)
        aa_free(p);
    TCache *tc = own_cache();
    unsigned idle = size_to_class(2000);
    ATF_REQUIRE(tc->bins[idle].count() > 0);
    // Busy with another class only: every class is visited once per
    // kNumTcacheClasses GC intervals; an idle one loses half its stack per
    // visit.
    for (uint64_t i = 0; i < uint64_t(g_tcache_gc_interval) * kNumTcacheClasses * 12; i++)
        aa_free(aa_malloc(32));
    ATF_REQUIRE_EQ(tc->bins[idle].count(), 0u);
    ATF_REQUIRE(tc->bins[size_to_class(32)].count() > 0);
}

ATF_TEST_CASE_WITHOUT_HEAD(tcache__flush_all_empties);
ATF_TEST_CASE_BODY(tcache__flush_all_empties) {
    std::vector<void *> blocks;
    for (size_t s = 8; s <= kSmallMax; s += 97)
        blocks.push_back(aa_malloc(s));
    for (void *p : blocks)
        aa_free(p);
    TCache *tc = own_cache();
    ATF_REQUIRE(allocated_small_all() > 0);  // cached regions count as out
    tcache_flush_all(tc);
    for (unsigned bin = 0; bin < kNumBins; bin++)
        ATF_REQUIRE_EQ(tc->bins[bin].count(), 0u);
    // Nothing is live in this process's arenalloc heap any more.
    ATF_REQUIRE_EQ(allocated_small_all(), 0u);
}

namespace {

// One arena statistic summed over every arena.
uint64_t arena_stat_all(uint64_t ArenaStats::*field) {
    uint64_t sum = 0;
    for (unsigned i = 0; i < g_narenas; i++) {
        if (Arena *a = arena_peek(i)) {
            MutexGuard guard(a->mutex);
            sum += a->stats.*field;
        }
    }
    return sum;
}

uint64_t allocated_large_all() { return arena_stat_all(&ArenaStats::allocated_large); }
uint64_t large_requests_all() { return arena_stat_all(&ArenaStats::nmalloc_large); }

}  // namespace

// The large classes up to kTcacheLargeMax are cached like small ones: a
// freed block is the next one handed out, without the arena; the stack is
// bounded, and what overflows goes back to the runs.
ATF_TEST_CASE_WITHOUT_HEAD(tcache__smallest_large_classes_cached);
ATF_TEST_CASE_BODY(tcache__smallest_large_classes_cached) {
    aa_free(aa_malloc(64));  // the thread's cache
    TCache *tc = own_cache();
    ATF_REQUIRE_EQ(kFirstLarge, 4 * kPage);  // the first large class
    ATF_REQUIRE_EQ(size_to_class(kTcacheLargeMax), kNumTcacheClasses - 1);
    const size_t size = kSecondCachedLarge;
    unsigned cls = size_to_class(size);
    TCacheBin *b = &tc->bins[cls];
    ATF_REQUIRE_EQ(b->max(), tcache_slots(cls));
    ATF_REQUIRE(b->max() >= 1);

    void *p = aa_malloc(size);
    uint64_t out = allocated_large_all();
    aa_free(p);
    ATF_REQUIRE_EQ(b->count(), 1u);
    ATF_REQUIRE_EQ(allocated_large_all(), out);  // cached: still out of the arena
    ATF_REQUIRE_EQ(aa_malloc(size), p);
    ATF_REQUIRE_EQ(b->count(), 0u);

    // More than the stack holds: the oldest go back to their runs.
    std::vector<void *> blocks{p};
    for (uint32_t i = 0; i < 4 * b->max() + 3; i++)
        blocks.push_back(aa_malloc(size));
    uint64_t all_out = allocated_large_all();
    for (void *q : blocks)
        aa_free(q);
    ATF_REQUIRE(b->count() >= 1 && b->count() <= b->max());
    ATF_REQUIRE_EQ(allocated_large_all(),
                   all_out - (blocks.size() - b->count()) * class_to_size(cls));
    tcache_flush_all(tc);
    ATF_REQUIRE_EQ(b->count(), 0u);
    ATF_REQUIRE_EQ(allocated_large_all(), all_out - blocks.size() * class_to_size(cls));

    // The next class up is not cached.
    void *big = aa_malloc(kTcacheLargeMax + 1);
    uint64_t before = allocated_large_all();
    aa_free(big);
    ATF_REQUIRE(allocated_large_all() < before);
}

// calloc() of a cached block that held data gets zeros; the requests are
// counted as large requests whether the cache or the arena served them.
ATF_TEST_CASE_WITHOUT_HEAD(tcache__cached_large_blocks_zeroed_and_counted);
ATF_TEST_CASE_BODY(tcache__cached_large_blocks_zeroed_and_counted) {
    aa_free(aa_malloc(64));
    TCache *tc = own_cache();
    tcache_merge_counts(tc);
    uint64_t requests = large_requests_all();
    const size_t size = kThirdCachedLarge;
    unsigned char *p = static_cast<unsigned char *>(aa_malloc(size));
    memset(p, 0xee, size);
    uint64_t out = allocated_large_all();
    aa_free(p);
    ATF_REQUIRE_EQ(tc->bins[size_to_class(size)].count(), 1u);
    ATF_REQUIRE_EQ(allocated_large_all(), out);  // held by the cache
    unsigned char *z = static_cast<unsigned char *>(aa_calloc(1, size));
    ATF_REQUIRE_EQ(z, p);  // from the cache
    for (size_t i = 0; i < size; i++)
        ATF_REQUIRE_MSG(z[i] == 0, "byte " << i);
    aa_free(z);
    for (int i = 0; i < 10; i++)
        aa_free(aa_malloc(size));
    tcache_merge_counts(tc);
    ATF_REQUIRE_EQ(large_requests_all(), requests + 12);
}

namespace {

void *cache_large_then_exit(void *) {
    std::vector<void *> blocks;
    for (unsigned cls = kNumBins; cls < kNumTcacheClasses; cls++)
        blocks.push_back(aa_malloc(class_to_size(cls)));
    for (void *p : blocks)
        aa_free(p);
    // Every block is in the cache as the thread exits.
    uint32_t held = 0;
    for (unsigned cls = kNumBins; cls < kNumTcacheClasses; cls++)
        held += own_cache()->bins[cls].count();
    ATF_REQUIRE_EQ(held, blocks.size());
    return nullptr;
}

}  // namespace

// A thread's cached large blocks go back to their runs when it exits.
ATF_TEST_CASE_WITHOUT_HEAD(tcache__thread_exit_returns_large_blocks);
ATF_TEST_CASE_BODY(tcache__thread_exit_returns_large_blocks) {
    aa_free(aa_malloc(64));
    uint64_t before = allocated_large_all();
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, cache_large_then_exit, nullptr), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    ATF_REQUIRE_EQ(allocated_large_all(), before);
}

// Freeing many blocks of every cached large class leaves at most about
// 128 KiB of each in the cache (1064 KiB for the nine), and at least one.
ATF_TEST_CASE_WITHOUT_HEAD(tcache__large_classes_bounded);
ATF_TEST_CASE_BODY(tcache__large_classes_bounded) {
    aa_free(aa_malloc(64));
    TCache *tc = own_cache();
    std::vector<void *> blocks;
    for (unsigned cls = kNumBins; cls < kNumTcacheClasses; cls++)
        for (int i = 0; i < 20; i++)
            blocks.push_back(aa_malloc(class_to_size(cls)));
    for (void *p : blocks)
        aa_free(p);
    uint64_t capacity = 0;
    for (unsigned cls = kNumBins; cls < kNumTcacheClasses; cls++) {
        uint64_t bytes = uint64_t{tc->bins[cls].count()} * class_to_size(cls);
        ATF_REQUIRE_MSG(tc->bins[cls].count() >= 1 &&
                            (bytes <= kTcacheLargeBinBytes || tc->bins[cls].count() == 1),
                        "class " << cls << " holds " << tc->bins[cls].count());
        capacity += uint64_t{tc->bins[cls].max()} * class_to_size(cls);
    }
    // What the manual page says: nine classes of 16 to 64 KiB with 4 KiB
    // pages; two blocks of 64 KiB with 16 KiB pages; one of 256 KiB with
    // 64 KiB pages.
    const uint64_t documented = kLgPage == 12 ? 1064u << 10 : kLgPage == 14 ? 128u << 10 : 256u << 10;
    ATF_REQUIRE_EQ(capacity, documented);
    tcache_flush_all(tc);
}

namespace {

struct LargeWorker {
    pthread_barrier_t counted, checked;
    bool had_cache = false;
};

// Allocates and frees 40 blocks of the first large class, then waits, alive, while the
// main thread reads the counts; its cache keeps the last few blocks.
void *large_worker(void *arg) {
    LargeWorker *w = static_cast<LargeWorker *>(arg);
    std::vector<void *> blocks;
    for (int i = 0; i < 40; i++)
        blocks.push_back(aa_malloc(kFirstLarge));
    for (void *p : blocks)
        aa_free(p);
    pthread_barrier_wait(&w->counted);
    pthread_barrier_wait(&w->checked);
    return nullptr;
}

// Only frees blocks of a cached large class that another thread allocated.
void *large_consumer(void *arg) {
    std::vector<void *> *blocks = static_cast<std::vector<void *> *>(arg);
    ATF_REQUIRE(tls_thread_state.tcache == &g_tcache_none);
    for (void *p : *blocks)
        aa_free(p);
    ATF_REQUIRE(tls_thread_state.tcache != &g_tcache_none);
    ATF_REQUIRE(own_cache()->bins[size_to_class(kFirstLarge)].count() > 0);
    return nullptr;
}

}  // namespace

// A cached large class hands its counts over at its misses and flushes:
// another thread sees them while the thread still runs.
ATF_TEST_CASE_WITHOUT_HEAD(tcache__large_counts_reach_the_arenas);
ATF_TEST_CASE_BODY(tcache__large_counts_reach_the_arenas) {
    aa_free(aa_malloc(64));
    uint64_t requests = large_requests_all();
    uint64_t frees = arena_stat_all(&ArenaStats::ndalloc_large);
    LargeWorker w;
    pthread_barrier_init(&w.counted, nullptr, 2);
    pthread_barrier_init(&w.checked, nullptr, 2);
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, large_worker, &w), 0);
    pthread_barrier_wait(&w.counted);
    ATF_REQUIRE_EQ(large_requests_all(), requests + 40);
    uint64_t cached = tcache_slots(size_to_class(kFirstLarge));
    ATF_REQUIRE_MSG(arena_stat_all(&ArenaStats::ndalloc_large) >= frees + 40 - cached,
                    "frees " << arena_stat_all(&ArenaStats::ndalloc_large) - frees);
    pthread_barrier_wait(&w.checked);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    pthread_barrier_destroy(&w.counted);
    pthread_barrier_destroy(&w.checked);
}

namespace {

// Requests of class bin that the arenas have been told of.
uint64_t arena_requests_all(unsigned bin) {
    if (bin >= kNumBins)
        return large_requests_all();
    uint64_t sum = 0;
    for (unsigned i = 0; i < g_narenas; i++) {
        if (Arena *a = arena_peek(i)) {
            MutexGuard guard(a->mutex);
            sum += a->bins[bin].nrequests;
        }
    }
    return sum;
}

}  // namespace

// A bin's request count is derived from the countdown to its cache's next
// tick (tcache.h, tick_left): it stays exact across ticks, with the counts
// merged into the arenas between them, for a small class and a cached
// large one; and the ticks happen (each takes the period off the
// allocations left until the next GC visit).
ATF_TEST_CASE_WITHOUT_HEAD(tcache__counts_exact_across_ticks);
ATF_TEST_CASE_BODY(tcache__counts_exact_across_ticks) {
    aa_free(aa_malloc(64));
    TCache *tc = own_cache();
    ATF_REQUIRE(g_tcache_gc_interval >= 8 * g_tcache_tick_period);
    const uint64_t n = 3 * static_cast<uint64_t>(g_tcache_tick_period) + 7;
    for (size_t size : {size_t{64}, size_t{16} << 10}) {
        unsigned bin = size_to_class(size);
        tcache_merge_counts(tc);
        uint64_t nmalloc = tcache_bin_nmalloc(tc, bin);
        uint64_t nfree = tcache_bin_nfree(tc, bin);
        uint64_t arena_requests = arena_requests_all(bin);
        int64_t gc_left = tc->gc_left;
        for (uint64_t i = 0; i < n; i++) {
            aa_free(aa_malloc(size));
            if (i % 200 == 0)
                tcache_merge_counts(tc);
        }
        ATF_REQUIRE_EQ(tcache_bin_nmalloc(tc, bin) - nmalloc, n);
        ATF_REQUIRE_EQ(tcache_bin_nfree(tc, bin) - nfree, n);
        tcache_merge_counts(tc);
        ATF_REQUIRE_EQ(arena_requests_all(bin) - arena_requests, n);
        // At least three ticks of this bin, and no GC visit yet (the
        // interval is at least 8 periods, and this is at most 8 ticks in).
        ATF_REQUIRE_MSG(gc_left - tc->gc_left >= 3 * g_tcache_tick_period,
                        "gc_left " << gc_left << " -> " << tc->gc_left);
    }
}

// A thread whose first call frees a cached large block gets a cache, as
// one that first frees a small block does.
ATF_TEST_CASE_WITHOUT_HEAD(tcache__large_free_only_thread_gets_a_cache);
ATF_TEST_CASE_BODY(tcache__large_free_only_thread_gets_a_cache) {
    std::vector<void *> blocks;
    for (int i = 0; i < 4; i++)
        blocks.push_back(aa_malloc(kFirstLarge));
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, large_consumer, &blocks), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
}

// A class that only goes one way: a thread that keeps allocating it gets
// half its stack on the first refill and the whole stack from the second
// on; a thread that keeps freeing it sends half back on the first
// overflow and everything from the second on.  A class used both ways
// stays at halves.
ATF_TEST_CASE_WITHOUT_HEAD(tcache__one_way_classes_move_whole_stacks);
ATF_TEST_CASE_BODY(tcache__one_way_classes_move_whole_stacks) {
    const size_t size = 3000;
    aa_free(aa_malloc(64));  // the thread's cache, without touching size's class
    TCache *tc = own_cache();
    unsigned bin = size_to_class(size);
    TCacheBin *b = &tc->bins[bin];
    tcache_flush_all(tc);
    const uint32_t max = b->max();
    ATF_REQUIRE(max >= 4);

    // Allocating only.  The first request refills half the stack, and
    // hands one out.
    std::vector<void *> held;
    held.push_back(aa_malloc(size));
    ATF_REQUIRE_EQ(b->count(), max / 2 - 1);
    while (b->count() != 0)
        held.push_back(aa_malloc(size));
    held.push_back(aa_malloc(size));  // the second refill in a row
    ATF_REQUIRE_EQ(b->count(), max - 1);
    while (b->count() != 0)
        held.push_back(aa_malloc(size));
    held.push_back(aa_malloc(size));
    ATF_REQUIRE_EQ(b->count(), max - 1);

    // Freeing only.  The stack fills, the first overflow sends the oldest
    // half back, the second everything.
    tcache_flush_all(tc);
    size_t next = 0;
    while (b->count() < max)
        aa_free(held.at(next++));
    aa_free(held.at(next++));  // first overflow
    ATF_REQUIRE_EQ(b->count(), max - max / 2 + 1);
    while (b->count() < max)
        aa_free(held.at(next++));
    aa_free(held.at(next++));  // second overflow in a row
    ATF_REQUIRE_EQ(b->count(), 1u);

    // Both ways: after an overflow, a refill is half the stack again.
    while (b->count() != 0)
        held.push_back(aa_malloc(size));
    held.push_back(aa_malloc(size));
    ATF_REQUIRE_EQ(b->count(), max / 2 - 1);

    // After the cache was emptied (malloc_trim, fork, a thread's exit,
    // which hands the cache to the next thread), halves again: two
    // refills in a row, but the first after the flush is half.
    while (b->count() != 0)
        held.push_back(aa_malloc(size));
    held.push_back(aa_malloc(size));
    ATF_REQUIRE_EQ(b->count(), max - 1);
    tcache_flush_all(tc);
    held.push_back(aa_malloc(size));
    ATF_REQUIRE_EQ(b->count(), max / 2 - 1);

    while (next < held.size())
        aa_free(held[next++]);
    tcache_flush_all(tc);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, tcache__created_on_first_small_request);
    ATF_ADD_TEST_CASE(tcs, tcache__last_freed_is_next_allocated);
    ATF_ADD_TEST_CASE(tcs, tcache__bounded_per_class);
    ATF_ADD_TEST_CASE(tcs, tcache__bytes_bounded);
    ATF_ADD_TEST_CASE(tcs, tcache__thread_exit_returns_everything);
    ATF_ADD_TEST_CASE(tcs, tcache__cross_thread_free_reaches_owner);
    ATF_ADD_TEST_CASE(tcs, tcache__remote_frees_skip_the_owners_lock);
    ATF_ADD_TEST_CASE(tcs, tcache__hits_take_no_lock);
    ATF_ADD_TEST_CASE(tcs, tcache__remote_frees_seen_by_checks_and_stats);
    ATF_ADD_TEST_CASE(tcs, tcache__remote_frees_refill_from_emptied_runs);
    ATF_ADD_TEST_CASE(tcs, tcache__free_only_thread_gets_a_cache);
    ATF_ADD_TEST_CASE(tcs, tcache__idle_class_drained);
    ATF_ADD_TEST_CASE(tcs, tcache__flush_all_empties);
    ATF_ADD_TEST_CASE(tcs, tcache__one_way_classes_move_whole_stacks);
    ATF_ADD_TEST_CASE(tcs, tcache__smallest_large_classes_cached);
    ATF_ADD_TEST_CASE(tcs, tcache__cached_large_blocks_zeroed_and_counted);
    ATF_ADD_TEST_CASE(tcs, tcache__thread_exit_returns_large_blocks);
    ATF_ADD_TEST_CASE(tcs, tcache__large_classes_bounded);
    ATF_ADD_TEST_CASE(tcs, tcache__large_counts_reach_the_arenas);
    ATF_ADD_TEST_CASE(tcs, tcache__counts_exact_across_ticks);
    ATF_ADD_TEST_CASE(tcs, tcache__large_free_only_thread_gets_a_cache);
}
