// Unit tests of dirty-page accounting and purging (lib/arena.cc): the
// ratio rule, explicit purges, and that purging goes through madvise (the
// platform layer's counters); how arenas and the huge mapping cache take
// memory from the kernel.  Nothing here depends on timing.
#include <atf-c++.hpp>

#include <pthread.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "allocator.h"
#include "arena.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "decay.h"
#include "huge.h"
#include "thread_state.h"
#include "init.h"
#include "options.h"
#include "platform.h"
#include "require_msg.h"
#include "tcache.h"

using namespace arenalloc;

namespace {

Arena *arena0() {
    ATF_REQUIRE(aa_malloc(1) != nullptr);
    Arena *a = arena_peek(0);
    ATF_REQUIRE(a != nullptr);
    return a;
}

uint64_t nmadvise() {
    PlatformCounters pc;
    platform_counters(&pc);
    return pc.nmadvise;
}

uint64_t nmap() {
    PlatformCounters pc;
    platform_counters(&pc);
    return pc.nmap;
}

uint64_t nhuge() {
    PlatformCounters pc;
    platform_counters(&pc);
    return pc.nhuge;
}

uint64_t rss_bytes() {
    FILE *f = fopen("/proc/self/statm", "r");
    ATF_REQUIRE(f != nullptr);
    unsigned long size = 0, resident = 0;
    ATF_REQUIRE_EQ(fscanf(f, "%lu %lu", &size, &resident), 2);
    fclose(f);
    return uint64_t{resident} * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Makes every dirty run of a look as old as the decay time.
void age_dirty_runs_locked(Arena *a) {
    for (Run *r = a->dirty_first; r != nullptr; r = r->dirty_next)
        r->dirty_since -= static_cast<uint32_t>(g_options.decay_ms) + 1;
}

void age_dirty_runs(Arena *a) {
    MutexGuard guard(a->mutex);
    age_dirty_runs_locked(a);
}

// The arena's dirty allowance in pages, as dirty_allowed() computes it
// with the ratio rule on: the minimum when no thread uses the arena (arena
// 0 is used by all while shared_large is on), and doubled as many times as
// the guard against thrashing says.
uint64_t allowance(const Arena *a) {
    if (a->nthreads.load() == 0 && !(a->index == 0 && g_options.shared_large))
        return g_chunk.npages;
    int shift = g_options.lg_dirty_ratio;
    uint64_t allowed = shift >= 0 ? a->nactive_peak >> shift : a->nactive_peak << -shift;
    if (allowed < g_chunk.npages)
        allowed = g_chunk.npages;
    return allowed << a->lg_allowance_boost;
}

void flush_own_cache() {
    if (tls_thread_state.tcache != &g_tcache_none)
        tcache_flush_all(tls_thread_state.tcache);
}

uint64_t kept_runs_on_lists(const Arena *a, uint64_t *pages) {
    uint64_t runs = 0;
    *pages = 0;
    for (unsigned b = 0; b < kNumBins; b++)
        for (Run *r = a->bins[b].empty; r != nullptr; r = r->next) {
            ATF_REQUIRE_EQ(r->nfree, r->nregs);
            runs++;
            *pages += r->npages;
        }
    return runs;
}

std::vector<void *> allocate_touched(size_t size, int n) {
    std::vector<void *> v;
    for (int i = 0; i < n; i++) {
        void *p = aa_malloc(size);
        ATF_REQUIRE(p != nullptr);
        memset(p, 0x7b, size);
        v.push_back(p);
    }
    return v;
}

// Allocates n blocks of size past the thread cache and frees them all back
// to their runs, which fall empty.
void empty_runs_of(size_t size, int n) {
    std::vector<void *> v = allocate_touched(size, n);
    flush_own_cache();
    for (void *p : v)
        aa_free(p);
    flush_own_cache();
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(purge__freed_pages_are_dirty);
ATF_TEST_CASE_BODY(purge__freed_pages_are_dirty) {
    Arena *a = arena0();
    const size_t size = 2 * kTcacheLargeMax;  // past the thread caches: 128 KiB
    std::vector<void *> v = allocate_touched(size, 8);
    uint64_t before = a->ndirty;
    aa_free(v[3]);
    ATF_REQUIRE_EQ(a->ndirty, before + size / kPage);
    for (size_t i = 0; i < v.size(); i++)
        if (i != 3)
            aa_free(v[i]);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__ratio_rule_bounds_dirty);
ATF_TEST_CASE_BODY(purge__ratio_rule_bounds_dirty) {
    Arena *a = arena0();
    std::vector<void *> v = allocate_touched(256 << 10, 200);  // 50 MiB active
    uint64_t madv = nmadvise();
    // With f (an eighth of the allowance), free every other block: the
    // dirty pages may not exceed the allowance (the period's peak of active
    // pages >> 3, at least a chunk) after any free.
    g_options.lg_dirty_ratio = 3;
    for (size_t i = 0; i < v.size(); i += 2) {
        aa_free(v[i]);
        uint64_t allowed = a->nactive_peak >> 3;
        if (allowed < g_chunk.npages)
            allowed = g_chunk.npages;
        ATF_REQUIRE_MSG(a->ndirty <= allowed, "dirty " << a->ndirty << " allowed " << allowed);
    }
    // Only frees, many purges in a row: the allowance never doubled.
    ATF_REQUIRE(a->stats.npurge_passes > 1);
    ATF_REQUIRE_EQ(a->lg_allowance_boost, 0u);
    ATF_REQUIRE(a->stats.nmadvise > 0);
    ATF_REQUIRE(nmadvise() > madv);  // purging went through madvise
    ATF_REQUIRE(a->stats.npurged_pages > 0);
    for (size_t i = 1; i < v.size(); i += 2)
        aa_free(v[i]);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__ratio_rule_lowers_rss);
ATF_TEST_CASE_BODY(purge__ratio_rule_lowers_rss) {
    // Purging by the rules (no explicit call) must lower the resident size,
    // not only mark pages free for the kernel to take some day: the default
    // is MADV_DONTNEED.
    Arena *a = arena0();
    ATF_REQUIRE(!g_options.lazy_purge);
    std::vector<void *> v = allocate_touched(256 << 10, 400);  // 100 MiB
    uint64_t peak = rss_bytes();
    g_options.lg_dirty_ratio = 3;  // dirty at most an eighth of the peak
    for (void *p : v)
        aa_free(p);
    uint64_t end = rss_bytes();
    uint64_t allowed = (a->nactive_peak >> 3) * kPage;
    ATF_REQUIRE_MSG(a->ndirty * kPage <= allowed + g_chunk.chunk_size,
                    "dirty " << a->ndirty << " pages");
    // 100 MiB freed, at most 12.5 MiB (and a chunk) may stay dirty.
    ATF_REQUIRE_MSG(end + (70u << 20) <= peak, "RSS peak " << peak << " after frees " << end);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__arena_grows_in_batches);
ATF_TEST_CASE_BODY(purge__arena_grows_in_batches) {
    // An arena growing to 64 MiB maps its chunks a few at a time: far
    // fewer mmap calls than chunks.  (pages_map may take two calls for an
    // aligned mapping.)
    Arena *a = arena0();
    uint64_t chunks0 = a->stats.nchunks;
    uint64_t empty0 = a->nempty_chunks;
    uint64_t maps0 = nmap();
    std::vector<void *> v = allocate_touched(g_chunk.large_max, 32);
    uint64_t grew = a->stats.nchunks - chunks0;
    uint64_t maps = nmap() - maps0;
    ATF_REQUIRE_MSG(grew >= 32, "grew by " << grew << " chunks");
    ATF_REQUIRE_MSG(maps * 2 <= grew, grew << " chunks took " << maps << " mmap calls");
    // The chunks not used yet wait empty.
    uint64_t really_empty = 0, n = 0;
    for (Chunk *c = a->chunks; c != nullptr; c = c->next, n++)
        really_empty += c->nfree_pages == c->npages - c->header_pages;
    ATF_REQUIRE_EQ(n, chunks0 + grew);
    ATF_REQUIRE_EQ(really_empty, a->nempty_chunks);
    // ... at most one batch of them (a chunk's free pages after its first
    // small run may hold one of the blocks, so count rather than assume).
    ATF_REQUIRE_MSG(a->nempty_chunks <= kChunkBatchMax,
                    "empty " << empty0 << " -> " << a->nempty_chunks << ", grew " << grew);
    for (void *p : v)
        aa_free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__huge_cache_splits_and_joins);
ATF_TEST_CASE_BODY(purge__huge_cache_splits_and_joins) {
    // A freed 8 MiB mapping serves two 3 MiB blocks (the tail of the first
    // split stays cached), and the two, freed, are joined again to serve a
    // 6 MiB block: no mmap call after the first.
    void *big = aa_malloc(8 << 20);
    ATF_REQUIRE(big != nullptr);
    aa_free(big);
    uint64_t maps0 = nmap();
    void *p = aa_malloc(3 << 20);
    void *q = aa_malloc(3 << 20);
    ATF_REQUIRE(p != nullptr && q != nullptr);
    memset(p, 1, 3 << 20);
    memset(q, 2, 3 << 20);
    ATF_REQUIRE_EQ(nmap(), maps0);
    ATF_REQUIRE(p == big);
    ATF_REQUIRE(q == static_cast<char *>(big) + (3 << 20));
    aa_free(p);
    aa_free(q);
    void *r = aa_malloc(6 << 20);
    ATF_REQUIRE(r == big);
    ATF_REQUIRE_EQ(nmap(), maps0);
    memset(r, 3, 6 << 20);
    aa_free(r);
    HugeStats hs;
    size_t cached = 0;
    huge_stats(&hs, &cached);
    ATF_REQUIRE_EQ(cached, size_t{8} << 20);
    aa_purge();
    huge_stats(&hs, &cached);
    ATF_REQUIRE_EQ(cached, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__explicit_purges_everything);
ATF_TEST_CASE_BODY(purge__explicit_purges_everything) {
    Arena *a = arena0();
    std::vector<void *> v = allocate_touched(3000, 2000);
    std::vector<void *> w = allocate_touched(100 << 10, 20);
    for (void *p : v)
        aa_free(p);
    for (void *p : w)
        aa_free(p);
    uint64_t madv = nmadvise();
    ATF_REQUIRE(aa_purge() > 0);
    ATF_REQUIRE(nmadvise() > madv);
    ATF_REQUIRE_EQ(a->ndirty, 0u);
    ATF_REQUIRE(a->dirty_first == nullptr);
    ATF_REQUIRE_EQ(a->nempty_chunks, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__rss_falls_after_explicit_purge);
ATF_TEST_CASE_BODY(purge__rss_falls_after_explicit_purge) {
    arena0();
    uint64_t start = rss_bytes();
    // Small, large and huge blocks, 200 MiB in all, every page touched.
    std::vector<void *> small = allocate_touched(1000, 60000);
    std::vector<void *> large = allocate_touched(300 << 10, 300);
    std::vector<void *> huge = allocate_touched(6 << 20, 10);
    uint64_t peak = rss_bytes();
    ATF_REQUIRE(peak > start + (150u << 20));
    for (void *p : small)
        aa_free(p);
    for (void *p : large)
        aa_free(p);
    for (void *p : huge)
        aa_free(p);
    aa_purge();
    uint64_t end = rss_bytes();
    // Back near the start: within 8 MiB or 10 %, whichever is larger.
    uint64_t slack = start / 10 > (8u << 20) ? start / 10 : (8u << 20);
    ATF_REQUIRE_MSG(end <= start + slack,
                    "RSS start " << start << " peak " << peak << " after purge " << end);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__decay_purges_what_stayed_dirty);
ATF_TEST_CASE_BODY(purge__decay_purges_what_stayed_dirty) {
    // The decay rule, driven by hand so that no clock is involved: runs
    // dirty for the decay time are purged, younger ones are not.
    Arena *a = arena0();
    std::vector<void *> v = allocate_touched(256 << 10, 40);
    for (size_t i = 0; i < v.size(); i += 2)
        aa_free(v[i]);
    ATF_REQUIRE(a->ndirty > 0);
    age_dirty_runs(a);
    uint64_t madv = nmadvise();
    arena_decay(a);
    ATF_REQUIRE_EQ(a->ndirty, 0u);
    ATF_REQUIRE(nmadvise() > madv);
    // Pages just freed are too young.
    aa_free(v[1]);
    uint64_t before = a->ndirty;
    ATF_REQUIRE(before > 0);
    arena_decay(a);
    ATF_REQUIRE_EQ(a->ndirty, before);
    for (size_t i = 3; i < v.size(); i += 2)
        aa_free(v[i]);
}

namespace {

// Allocates and frees, round after round, four large blocks that together
// take more than a chunk's free pages: the working set that moved between
// two chunks and purged at every round before the guard against
// thrashing.  Checks the ratio rule's bound after every round; returns the
// arena's madvise calls over all of them.
uint64_t moving_working_set(Arena *a, int rounds, unsigned sleep_ms) {
    size_t quarter = (static_cast<size_t>(g_chunk.npages - g_chunk.header_pages) << kLgPage) / 4;
    size_t sizes[4] = {quarter + (8 << 10), quarter + (64 << 10), quarter + (64 << 10),
                       quarter + (64 << 10)};
    ATF_REQUIRE(sizes[3] <= g_chunk.large_max);
    uint64_t madv = a->stats.nmadvise;
    for (int round = 0; round < rounds; round++) {
        void *p[4];
        for (int i = 0; i < 4; i++) {
            p[i] = aa_malloc(sizes[i]);
            ATF_REQUIRE(p[i] != nullptr);
            memset(p[i], round, sizes[i]);
            ATF_REQUIRE(chunk_containing(p[i])->arena == a);
        }
        for (int i = 0; i < 4; i++)
            aa_free(p[i]);
        ATF_REQUIRE_MSG(a->ndirty <= allowance(a),
                        "round " << round << ": dirty " << a->ndirty << " allowed " << allowance(a));
        ATF_REQUIRE(a->lg_allowance_boost <= 2);
        if (sleep_ms != 0)
            usleep(sleep_ms * 1000);
    }
    return a->stats.nmadvise - madv;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(purge__calloc_of_cached_large_class_leaves_fresh_pages);
ATF_TEST_CASE_BODY(purge__calloc_of_cached_large_class_leaves_fresh_pages) {
    // calloc of a large class that thread caches hold, when the cache is
    // empty, takes the block from the arena, which knows that pages never
    // touched are zero and leaves them untouched: 32 MiB of such blocks
    // add little to the resident size.  (They were cleared by memset.)
    arena0();
    // The largest cached class: 64 KiB with 4 KiB pages.
    const size_t size = kTcacheLargeMax;
    std::vector<void *> v;
    uint64_t before = rss_bytes();
    for (size_t i = 0; i < (size_t{32} << 20) / size; i++) {
        void *p = aa_calloc(1, size);
        ATF_REQUIRE(p != nullptr);
        v.push_back(p);
    }
    uint64_t after = rss_bytes();
    ATF_REQUIRE_MSG(after < before + (8u << 20), "RSS " << before << " -> " << after);
    for (void *p : v) {
        const unsigned char *c = static_cast<const unsigned char *>(p);
        for (size_t i = 0; i < size; i += 509)
            ATF_REQUIRE_EQ(c[i], 0);
    }
    // Recycled blocks are cleared.
    for (void *p : v) {
        memset(p, 0x5a, size);
        aa_free(p);
    }
    for (int i = 0; i < 8; i++) {
        unsigned char *c = static_cast<unsigned char *>(aa_calloc(1, size));
        ATF_REQUIRE(c != nullptr);
        for (size_t j = 0; j < size; j++)
            ATF_REQUIRE_EQ(c[j], 0);
        aa_free(c);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__cache_hits_drive_decay);
ATF_TEST_CASE_BODY(purge__cache_hits_drive_decay) {
    // A program whose every call is a thread-cache hit still gives the
    // decay rule a look every few hundred allocations: aged dirty pages go
    // without any slow path.  (Before, only a GC visit every 8192
    // allocations looked.)
    Arena *a = arena0();
    ATF_REQUIRE(g_tcache_gc_interval >= 4096);
    aa_free(aa_malloc(64));  // the 64-byte class's stack is filled
    std::vector<void *> v = allocate_touched(256 << 10, 4);
    for (void *p : v)
        aa_free(p);
    ATF_REQUIRE(a->ndirty > 0);
    age_dirty_runs(a);
    decay_tick_expire();
    uint64_t fills = a->bins[size_to_class(64)].nfills;
    for (int i = 0; i < 2000; i++) {
        void *p = aa_malloc(64);
        ATF_REQUIRE(p != nullptr);
        aa_free(p);
    }
    ATF_REQUIRE_EQ(a->bins[size_to_class(64)].nfills, fills);  // hits only
    ATF_REQUIRE_EQ(a->ndirty, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__moving_working_set_does_not_thrash);
ATF_TEST_CASE_BODY(purge__moving_working_set_does_not_thrash) {
    // A decay time of an hour: the rounds below come within a hundredth of
    // it of each other however slow the machine, and decay purges nothing.
    Arena *a = arena0();
    g_options.decay_ms = 3600000;
    {
        MutexGuard guard(a->mutex);
        a->decay_epoch_end = UINT64_MAX;  // the period began at 10 s
    }
    uint64_t madv = moving_working_set(a, 400, 0);
    // Without the guard: one purge a round from the second on.
    ATF_REQUIRE_MSG(madv <= 8, madv << " madvise calls in 400 rounds");
    ATF_REQUIRE(a->lg_allowance_boost >= 1);
    // A new decay period starts without the doubling.
    {
        MutexGuard guard(a->mutex);
        a->decay_epoch_end = 0;
    }
    arena_decay(a);
    ATF_REQUIRE_EQ(a->lg_allowance_boost, 0u);
    // An explicit purge ends it too.
    moving_working_set(a, 50, 0);
    ATF_REQUIRE(a->lg_allowance_boost >= 1);
    aa_purge();
    ATF_REQUIRE_EQ(a->lg_allowance_boost, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__no_doubling_without_threads);
ATF_TEST_CASE_BODY(purge__no_doubling_without_threads) {
    // The same rounds in an arena no thread is assigned to (as when its
    // threads have exited and another drives it): it keeps the minimum.
    Arena *a = arena0();
    g_options.shared_large = false;  // else arena 0 serves every thread
    g_options.decay_ms = 3600000;
    unsigned n = a->nthreads.load();
    a->nthreads.store(0);
    moving_working_set(a, 50, 0);
    ATF_REQUIRE_EQ(a->lg_allowance_boost, 0u);
    a->nthreads.store(n);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__slow_rounds_keep_the_allowance);
ATF_TEST_CASE_BODY(purge__slow_rounds_keep_the_allowance) {
    // The same rounds further apart than a hundredth of the decay time
    // (1 ms here; the sleeps make them at least 20 ms apart): a purge a
    // round costs little then, and the allowance stays as it was.
    Arena *a = arena0();
    g_options.decay_ms = 100;
    uint64_t madv = moving_working_set(a, 6, 20);
    ATF_REQUIRE(madv >= 3);
    ATF_REQUIRE_EQ(a->lg_allowance_boost, 0u);
}

namespace {

struct Churn {
    Arena *arena;
    uint64_t ndirty;
};

void *churn_and_exit(void *arg) {
    Churn *c = static_cast<Churn *>(arg);
    std::vector<void *> v = allocate_touched(256 << 10, 40);
    for (void *p : v)
        aa_free(p);
    c->arena = thread_arena();
    c->ndirty = c->arena->ndirty;
    return nullptr;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(purge__other_threads_drive_decay);
ATF_TEST_CASE_BODY(purge__other_threads_drive_decay) {
    // A thread leaves dirty pages in its arena and exits; the main thread,
    // in another arena, only allocates small blocks.  Its slow paths
    // (cache fills, collection steps) sweep every arena, so the dead
    // thread's pages still age out.  Ages are set by hand: no clock.
    Arena *mine = arena0();
    g_options.shared_large = false;  // the thread's own arena takes its large runs
    Churn c = {nullptr, 0};
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, churn_and_exit, &c), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    ATF_REQUIRE(c.arena != nullptr && c.arena != mine);
    ATF_REQUIRE(c.ndirty > 0);
    {
        MutexGuard guard(c.arena->mutex);
        age_dirty_runs_locked(c.arena);
    }
    decay_tick_expire();
    // Enough small cache hits for a collection step, and more.
    size_t steps = (size_t{1} << g_options.lg_tcache_gc) * 2;
    for (size_t i = 0; i < steps; i++) {
        void *p = aa_malloc(32);
        ATF_REQUIRE(p != nullptr);
        aa_free(p);
    }
    ATF_REQUIRE_EQ(c.arena->ndirty, 0u);
}

namespace {

struct Leaver {
    Arena *arena;
    uint64_t ndirty;  // before the thread exits
    uint64_t nkept;
    void *left_behind;  // a large block it did not free
};

void *fill_free_and_exit(void *arg) {
    Leaver *l = static_cast<Leaver *>(arg);
    // 64 blocks past the thread caches (256 KiB, 16 MiB in all, with 4 KiB
    // pages), so that each free, the last one's too, goes to the arena.
    std::vector<void *> v = allocate_touched(4 * kTcacheLargeMax, 64);
    l->left_behind = v.back();
    v.pop_back();
    for (void *p : v)
        aa_free(p);
    empty_runs_of(kPage, 400);  // 400 one-page runs, kept
    l->arena = thread_arena();
    l->ndirty = l->arena->ndirty;
    l->nkept = l->arena->nkept;
    return nullptr;
}

Arena *owner_of(const void *p) {
    ATF_REQUIRE((registry_lookup(p) & kRegistryTagMask) == kRegistryChunk);
    return chunk_containing(p)->arena;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(purge__last_thread_leaving_trims_its_arena);
ATF_TEST_CASE_BODY(purge__last_thread_leaving_trims_its_arena) {
    // While its thread lives, an arena keeps dirty pages up to its peak
    // of active ones; once no thread is assigned to it, nobody will
    // allocate there soon, so it keeps the minimum: the next free into it
    // purges down to half a chunk's worth of dirty pages, the next sweep
    // (arena_decay) trims its kept runs as well.
    Arena *mine = arena0();
    g_options.shared_large = false;  // the thread's own arena takes its large runs
    Leaver l = {nullptr, 0, 0, nullptr};
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, fill_free_and_exit, &l), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    ATF_REQUIRE(l.arena != nullptr && l.arena != mine);
    ATF_REQUIRE_MSG(l.ndirty > g_chunk.npages, "dirty " << l.ndirty << " pages while it lived");
    ATF_REQUIRE_MSG(l.nkept > g_chunk.npages / 2, "kept " << l.nkept << " pages while it lived");
    ATF_REQUIRE_EQ(l.arena->nthreads.load(), 0u);
    aa_free(l.left_behind);
    ATF_REQUIRE_MSG(l.arena->ndirty <= g_chunk.npages / 2, "dirty " << l.arena->ndirty);
    ATF_REQUIRE(l.arena->stats.nmadvise > 0);
    arena_decay(l.arena);
    ATF_REQUIRE_MSG(l.arena->nkept <= g_chunk.npages / 2, "kept " << l.arena->nkept);
    // A thread that moves away leaves the same way.
    ATF_REQUIRE(thread_set_arena(l.arena->index));
    std::vector<void *> v = allocate_touched(4 * kTcacheLargeMax, 64);
    for (void *p : v)
        aa_free(p);
    ATF_REQUIRE(l.arena->ndirty > g_chunk.npages);
    ATF_REQUIRE(thread_set_arena(mine->index));
    arena_decay(l.arena);
    ATF_REQUIRE(l.arena->ndirty <= g_chunk.npages / 2);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__large_request_takes_another_arenas_pages);
ATF_TEST_CASE_BODY(purge__large_request_takes_another_arenas_pages) {
    // An arena with no free run for a large request takes another arena's
    // dirty free pages before it maps a chunk; never clean ones, which
    // would cost a page fault anyway.
    Arena *mine = arena0();
    g_options.shared_large = false;  // the thread's own arena takes its large runs
    if (g_narenas < 2)
        ATF_SKIP("needs two arenas");
    size_t big = 1536 << 10;
    void *p = aa_malloc(big);
    ATF_REQUIRE(p != nullptr);
    memset(p, 1, big);
    ATF_REQUIRE(owner_of(p) == mine);
    aa_free(p);  // arena 0 now has a dirty free run that fits
    ATF_REQUIRE(mine->ndirty >= big / kPage);
    // A fresh arena: no chunk yet.
    unsigned last = g_narenas - 1;
    ATF_REQUIRE(arena_peek(last) == nullptr || arena_peek(last)->stats.nchunks == 0);
    ATF_REQUIRE(thread_set_arena(last));
    Arena *taker = arena_peek(last);
    ATF_REQUIRE(taker != nullptr && taker != mine);
    void *q = aa_malloc(big);
    ATF_REQUIRE(q != nullptr);
    ATF_REQUIRE(owner_of(q) == mine);
    ATF_REQUIRE_EQ(taker->stats.nchunks, 0u);
    // Its free goes to the arena that owns the pages.
    uint64_t freed = mine->stats.ndalloc_large;
    aa_free(q);
    ATF_REQUIRE_EQ(mine->stats.ndalloc_large, freed + 1);
    // Purged, the same pages are no longer lent: the arena grows instead.
    arena_purge_all(mine, false);
    ATF_REQUIRE_EQ(mine->ndirty, 0u);
    void *r = aa_malloc(big);
    ATF_REQUIRE(r != nullptr);
    ATF_REQUIRE(owner_of(r) == taker);
    ATF_REQUIRE(taker->stats.nchunks > 0);
    aa_free(r);
}

namespace {

// Moves the calling thread to the last arena (skipping the test when there
// is only one); returns arena 0.
Arena *move_to_last_arena() {
    Arena *shared = arena0();
    if (g_narenas < 2)
        ATF_SKIP("needs two arenas");
    ATF_REQUIRE(thread_set_arena(g_narenas - 1));
    return shared;
}

// Makes arena 0's lock look as if 100 of its next 600 acquisitions found
// it held: the next shared large request closes a window that pauses.
void write_contended_window(Arena *shared) {
    MutexGuard guard(shared->mutex);
    shared->mutex.nacquired_ += 600;
    shared->mutex.ncontended_ += 100;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(purge__shared_large_runs_come_from_arena_0);
ATF_TEST_CASE_BODY(purge__shared_large_runs_come_from_arena_0) {
    // Large blocks above the thread caches' classes come from arena 0
    // whatever the thread's arena; the cached large classes and small
    // blocks from the thread's own; with shared_large off, all from its own.
    Arena *shared = move_to_last_arena();
    ATF_REQUIRE(g_options.shared_large);
    Arena *mine = arena_peek(g_narenas - 1);
    ATF_REQUIRE(mine != nullptr && mine != shared);
    void *big = aa_malloc(kTcacheLargeMax + kPage);
    void *cached = aa_malloc(kTcacheLargeMax);
    void *small = aa_malloc(100);
    ATF_REQUIRE(big != nullptr && cached != nullptr && small != nullptr);
    ATF_REQUIRE(owner_of(big) == shared);
    ATF_REQUIRE(owner_of(cached) == mine);
    ATF_REQUIRE(owner_of(small) == mine);
    aa_free(big);
    // Off: the thread's own arena (arena 0's dirty pages purged first, or
    // the request could borrow them).
    arena_purge_all(shared, false);
    g_options.shared_large = false;
    void *own = aa_malloc(kTcacheLargeMax + kPage);
    ATF_REQUIRE(own != nullptr);
    ATF_REQUIRE(owner_of(own) == mine);
    aa_free(own);
    aa_free(cached);
    aa_free(small);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__shared_arena_0_counts_as_used);
ATF_TEST_CASE_BODY(purge__shared_arena_0_counts_as_used) {
    // Arena 0 serves every thread's large runs, so even with no thread
    // assigned to it, it is not held to the idle minimum: the moving
    // working set that no_doubling_without_threads runs gets its doubling.
    Arena *a = arena0();
    ATF_REQUIRE(g_options.shared_large);
    g_options.decay_ms = 3600000;
    {
        // No new decay period (which drops the doubling) during the test,
        // however slow the machine.
        MutexGuard guard(a->mutex);
        a->decay_epoch_end = UINT64_MAX;
    }
    unsigned n = a->nthreads.load();
    a->nthreads.store(0);
    moving_working_set(a, 50, 0);
    ATF_REQUIRE(a->lg_allowance_boost >= 1);
    a->nthreads.store(n);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__shared_large_resumes_with_a_fresh_window);
ATF_TEST_CASE_BODY(purge__shared_large_resumes_with_a_fresh_window) {
    // A pause ends after a tenth of the decay time (10 ms here; the test
    // waits 100 ms, so a slow machine only waits longer).  What arena 0's
    // lock saw during the pause (its own threads, frees) does not count:
    // the first window after it starts afresh, so sharing does not pause
    // again at once.
    Arena *shared = move_to_last_arena();
    g_options.decay_ms = 100;
    size_t size = kTcacheLargeMax + kPage;
    write_contended_window(shared);
    void *first = aa_malloc(size);  // closes the window: a pause starts
    ATF_REQUIRE(first != nullptr && owner_of(first) == shared);
    write_contended_window(shared);  // during the pause
    usleep(100 * 1000);
    // No dirty pages in arena 0 that a paused request could borrow.
    arena_purge_all(shared, false);
    void *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = aa_malloc(size);
        ATF_REQUIRE(p[i] != nullptr);
        ATF_REQUIRE_MSG(owner_of(p[i]) == shared, "request " << i << " after the pause");
    }
    for (int i = 0; i < 3; i++)
        aa_free(p[i]);
    aa_free(first);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__shared_large_pauses_when_contended);
ATF_TEST_CASE_BODY(purge__shared_large_pauses_when_contended) {
    // Arena 0's lock is watched over windows of 512 acquisitions: a window
    // without contention changes nothing; one where more than a sixteenth
    // found the lock held sends the large requests that follow to the
    // thread's own arena for a tenth of the decay time.  The contention is
    // written into the lock's counters by hand: no threads, no clock
    // (the decay time is an hour).
    Arena *shared = move_to_last_arena();
    g_options.decay_ms = 3600000;
    Arena *mine = arena_peek(g_narenas - 1);
    size_t size = kTcacheLargeMax + kPage;
    for (int i = 0; i < 600; i++) {
        void *p = aa_malloc(size);
        ATF_REQUIRE(p != nullptr);
        ATF_REQUIRE_MSG(owner_of(p) == shared, "round " << i);
        aa_free(p);
    }
    write_contended_window(shared);
    void *last = aa_malloc(size);  // closes the window, still from arena 0
    ATF_REQUIRE(last != nullptr && owner_of(last) == shared);
    void *own = aa_malloc(size);
    ATF_REQUIRE(own != nullptr);
    ATF_REQUIRE(owner_of(own) == mine);
    aa_free(own);
    aa_free(last);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__huge_realloc_resizes_in_place);
ATF_TEST_CASE_BODY(purge__huge_realloc_resizes_in_place) {
    // A huge block shrinks where it is, its tail given back to the kernel
    // at once; with mremap (Linux) it grows back where it is, the tail just
    // given back being free; the contents stay either way, and no new
    // mapping is made.
    size_t big = size_t{8} << 20, half = big / 2;
    auto *p = static_cast<unsigned char *>(aa_malloc(big));
    ATF_REQUIRE(p != nullptr);
    for (size_t i = 0; i < big; i += kPage)
        p[i] = static_cast<unsigned char>(i >> 12);
    PlatformCounters before;
    platform_counters(&before);
    auto *q = static_cast<unsigned char *>(aa_realloc(p, half));
    ATF_REQUIRE(q == p);
    PlatformCounters shrunk;
    platform_counters(&shrunk);
    ATF_REQUIRE_EQ(shrunk.mapped, before.mapped - half);
    auto *r = static_cast<unsigned char *>(aa_realloc(q, big));
    ATF_REQUIRE(r != nullptr);
    for (size_t i = 0; i < half; i += kPage)
        ATF_REQUIRE_EQ(r[i], static_cast<unsigned char>(i >> 12));
#if defined(HAVE_MREMAP)
    ATF_REQUIRE(r == q);
    ATF_REQUIRE_EQ(nmap(), shrunk.nmap);
#endif
    aa_free(r);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__thp_asks_for_huge_pages);
ATF_TEST_CASE_BODY(purge__thp_asks_for_huge_pages) {
    // Off by default: new chunks and huge blocks are mapped as they are.
    Arena *a = arena0();
    ATF_REQUIRE(!g_options.thp);
    uint64_t asked = nhuge();
    std::vector<void *> v = allocate_touched(1536 << 10, 4);  // new chunks
    void *h = aa_malloc(8 << 20);
    ATF_REQUIRE(h != nullptr);
    ATF_REQUIRE_EQ(nhuge(), asked);
    // With thp, every new mapping of either kind is a request.
    g_options.thp = true;
    uint64_t chunks = a->stats.nchunks;
    std::vector<void *> w = allocate_touched(1536 << 10, 4);
    ATF_REQUIRE(a->stats.nchunks > chunks);
    uint64_t after_chunks = nhuge();
    ATF_REQUIRE(after_chunks > asked);
    void *h2 = aa_malloc(40 << 20);  // past the huge cache's bound: mapped
    ATF_REQUIRE(h2 != nullptr);
    memset(h2, 1, 40 << 20);
    ATF_REQUIRE(nhuge() > after_chunks);
    aa_free(h2);
    aa_free(h);
    for (void *p : v)
        aa_free(p);
    for (void *p : w)
        aa_free(p);
    g_options.thp = false;
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__options_change_allowance);
ATF_TEST_CASE_BODY(purge__options_change_allowance) {
    int base = g_options.lg_dirty_ratio;
    options_parse("F");
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, base - 1);  // F doubles the allowance
    options_parse("ff");
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, base + 1);  // f halves it
    options_parse("7F");  // the seed's setting is within bounds
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, base - 6);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__emptied_runs_kept_within_half_the_allowance);
ATF_TEST_CASE_BODY(purge__emptied_runs_kept_within_half_the_allowance) {
    // Every block of the class freed: every run falls empty.
    Arena *a = arena0();
    unsigned bin = size_to_class(4096);
    empty_runs_of(4096, 3000);
    uint64_t pages = 0;
    uint64_t runs = kept_runs_on_lists(a, &pages);
    ATF_REQUIRE(runs > 0);
    ATF_REQUIRE_EQ(runs, a->bins[bin].nempty);
    ATF_REQUIRE_EQ(pages, a->nkept);
    // Half the allowance for kept runs, a chunk at most, besides the
    // dirty pages' allowance.
    uint64_t allowed = allowance(a);
    ATF_REQUIRE_MSG(a->nkept <= allowed / 2 && a->nkept <= g_chunk.npages,
                    "kept " << a->nkept << " allowed " << allowed);
    ATF_REQUIRE_MSG(a->ndirty <= allowed, "dirty " << a->ndirty << " allowed " << allowed);
    // They are cut no more: the next allocations take them back.
    uint64_t nruns = a->bins[bin].nruns;
    uint64_t nempty = a->bins[bin].nempty;
    std::vector<void *> w = allocate_touched(4096, static_cast<int>(nempty));
    ATF_REQUIRE_EQ(a->bins[bin].nruns, nruns);
    for (void *p : w)
        aa_free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__explicit_purge_releases_kept_runs);
ATF_TEST_CASE_BODY(purge__explicit_purge_releases_kept_runs) {
    Arena *a = arena0();
    empty_runs_of(4096, 200);
    ATF_REQUIRE(a->nkept > 0);
    ATF_REQUIRE(aa_purge() > 0);
    uint64_t pages = 0;
    ATF_REQUIRE_EQ(kept_runs_on_lists(a, &pages), 0u);
    ATF_REQUIRE_EQ(a->nkept, 0u);
    ATF_REQUIRE_EQ(a->ndirty, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(purge__kept_runs_age_like_dirty_pages);
ATF_TEST_CASE_BODY(purge__kept_runs_age_like_dirty_pages) {
    // Driven by hand, as for dirty runs: kept runs younger than the decay
    // time stay; once the oldest is that old, all are purged (clean, not
    // dirty, once released).
    Arena *a = arena0();
    empty_runs_of(4096, 100);
    uint64_t kept = a->nkept;
    ATF_REQUIRE(kept > 0);
    arena_decay(a);
    ATF_REQUIRE_EQ(a->nkept, kept);
    uint64_t dirty = a->ndirty;
    uint64_t madv = nmadvise();
    {
        MutexGuard guard(a->mutex);
        a->kept_since -= static_cast<uint32_t>(g_options.decay_ms) + 1;
    }
    arena_decay(a);
    ATF_REQUIRE_EQ(a->nkept, 0u);
    ATF_REQUIRE(nmadvise() > madv);
    ATF_REQUIRE(a->ndirty <= dirty);  // released clean
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, purge__freed_pages_are_dirty);
    ATF_ADD_TEST_CASE(tcs, purge__ratio_rule_bounds_dirty);
    ATF_ADD_TEST_CASE(tcs, purge__ratio_rule_lowers_rss);
    ATF_ADD_TEST_CASE(tcs, purge__arena_grows_in_batches);
    ATF_ADD_TEST_CASE(tcs, purge__huge_cache_splits_and_joins);
    ATF_ADD_TEST_CASE(tcs, purge__explicit_purges_everything);
    ATF_ADD_TEST_CASE(tcs, purge__rss_falls_after_explicit_purge);
    ATF_ADD_TEST_CASE(tcs, purge__decay_purges_what_stayed_dirty);
    ATF_ADD_TEST_CASE(tcs, purge__calloc_of_cached_large_class_leaves_fresh_pages);
    ATF_ADD_TEST_CASE(tcs, purge__cache_hits_drive_decay);
    ATF_ADD_TEST_CASE(tcs, purge__moving_working_set_does_not_thrash);
    ATF_ADD_TEST_CASE(tcs, purge__slow_rounds_keep_the_allowance);
    ATF_ADD_TEST_CASE(tcs, purge__no_doubling_without_threads);
    ATF_ADD_TEST_CASE(tcs, purge__other_threads_drive_decay);
    ATF_ADD_TEST_CASE(tcs, purge__last_thread_leaving_trims_its_arena);
    ATF_ADD_TEST_CASE(tcs, purge__large_request_takes_another_arenas_pages);
    ATF_ADD_TEST_CASE(tcs, purge__shared_large_runs_come_from_arena_0);
    ATF_ADD_TEST_CASE(tcs, purge__shared_large_pauses_when_contended);
    ATF_ADD_TEST_CASE(tcs, purge__shared_arena_0_counts_as_used);
    ATF_ADD_TEST_CASE(tcs, purge__shared_large_resumes_with_a_fresh_window);
    ATF_ADD_TEST_CASE(tcs, purge__huge_realloc_resizes_in_place);
    ATF_ADD_TEST_CASE(tcs, purge__thp_asks_for_huge_pages);
    ATF_ADD_TEST_CASE(tcs, purge__options_change_allowance);
    ATF_ADD_TEST_CASE(tcs, purge__emptied_runs_kept_within_half_the_allowance);
    ATF_ADD_TEST_CASE(tcs, purge__explicit_purge_releases_kept_runs);
    ATF_ADD_TEST_CASE(tcs, purge__kept_runs_age_like_dirty_pages);
}
