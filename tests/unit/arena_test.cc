// Unit tests of an arena through lib/arena.h: small regions (counts,
// fills and flushes, remote frees), large runs (release and coalescing,
// resizing in place), dirty-page accounting, and pointers it refuses.
// Each case works in an arena of the table that no thread is assigned
// to, so nothing else touches it.
#include <atf-c++.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "arena.h"
#include "chunk.h"
#include "init.h"
#include "options.h"
#include "page_map.h"
#include "idle_arena.h"
#include "require_msg.h"
#include "run.h"
#include "size_classes.h"

using namespace arenalloc;

namespace {

// Large sizes are written in quarter pages, so that a test means the same
// runs at every page size: 32 * kQuarterPage is 8 pages (32 KiB with 4 KiB
// pages).
const size_t kQuarterPage = kPage / 4;

unsigned large_class(size_t size) {
    unsigned cls = size_to_class(size);
    ATF_REQUIRE(cls >= kNumBins);
    ATF_REQUIRE_EQ(class_to_size(cls), size);
    return cls;
}

void *large(Arena *a, size_t size) {
    void *p = arena_malloc_large(a, large_class(size), kPage, false);
    ATF_REQUIRE(p != nullptr);
    ATF_REQUIRE_EQ(chunk_containing(p)->arena, a);
    memset(p, 0x42, size);
    return p;
}

size_t usable(void *p) { return arena_usable_size(chunk_containing(p), p, "malloc_usable_size"); }

size_t release(void *p) { return arena_free(chunk_containing(p), p, "free"); }

PageMapEntry entry_of(Arena *a, const void *p) {
    MutexGuard guard(a->mutex);
    Chunk *c = chunk_containing(p);
    return c->map[chunk_page_index(c, p)];
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(arena__small_regions_and_counts);
ATF_TEST_CASE_BODY(arena__small_regions_and_counts) {
    Arena *a = idle_arena(1);
    const unsigned bin = size_to_class(48);
    const BinInfo &info = bin_info(bin);
    ATF_REQUIRE_EQ(info.region_size, 48u);
    // Two runs and a few regions of a third.
    const unsigned n = 2 * info.nregs + 5;
    std::vector<void *> v;
    std::set<void *> seen;
    for (unsigned i = 0; i < n; i++) {
        void *p = arena_malloc_small(a, bin, false);
        ATF_REQUIRE(p != nullptr);
        ATF_REQUIRE_MSG(seen.insert(p).second, "region " << p << " handed out twice");
        PageMapEntry e = entry_of(a, p);
        ATF_REQUIRE_EQ(page_map_tag(e), kPageSmall);
        const Run *r = page_map_run(e);
        ATF_REQUIRE_EQ(r->size_class, bin);
        ATF_REQUIRE_EQ((reinterpret_cast<uintptr_t>(p) - r->base) % 48, 0u);
        ATF_REQUIRE_EQ(usable(p), size_t{48});
        memset(p, static_cast<int>(i), 48);
        v.push_back(p);
    }
    {
        MutexGuard guard(a->mutex);
        ATF_REQUIRE_EQ(a->bins[bin].nmalloc, n);
        ATF_REQUIRE_EQ(a->bins[bin].nrequests, n);
        ATF_REQUIRE_EQ(a->bins[bin].ndalloc, 0u);
        ATF_REQUIRE_EQ(a->bins[bin].curruns, 3u);
        ATF_REQUIRE_EQ(a->stats.allocated_small, uint64_t{n} * 48);
        ATF_REQUIRE_EQ(a->stats.nmalloc_small, n);
    }
    // Every other region back: each run keeps live regions.
    for (unsigned i = 0; i < n; i += 2)
        ATF_REQUIRE_EQ(release(v[i]), size_t{48});
    unsigned freed = (n + 1) / 2;
    for (unsigned i = 0; i < n; i++) {
        bool is_free = arena_region_is_free(chunk_containing(v[i]), v[i]);
        ATF_REQUIRE_MSG(is_free == (i % 2 == 0), "region " << i);
        if (i % 2 == 1)  // the live ones kept their contents
            ATF_REQUIRE_EQ(static_cast<unsigned char *>(v[i])[47], static_cast<unsigned char>(i));
    }
    {
        MutexGuard guard(a->mutex);
        ATF_REQUIRE_EQ(a->bins[bin].ndalloc, freed);
        ATF_REQUIRE_EQ(a->stats.allocated_small, uint64_t{n - freed} * 48);
    }
    for (unsigned i = 1; i < n; i += 2)
        release(v[i]);
    MutexGuard guard(a->mutex);
    ATF_REQUIRE_EQ(a->bins[bin].ndalloc, n);
    ATF_REQUIRE_EQ(a->stats.allocated_small, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(arena__small_zeroed_on_request);
ATF_TEST_CASE_BODY(arena__small_zeroed_on_request) {
    Arena *a = idle_arena(1);
    const unsigned bin = size_to_class(256);
    std::vector<void *> v;
    for (int i = 0; i < 50; i++) {
        void *p = arena_malloc_small(a, bin, false);
        memset(p, 0xff, 256);
        v.push_back(p);
    }
    for (void *p : v)
        release(p);
    // The regions come back written; zero asks for them cleared.
    for (int i = 0; i < 50; i++) {
        unsigned char *p = static_cast<unsigned char *>(arena_malloc_small(a, bin, true));
        ATF_REQUIRE(p != nullptr);
        for (int k = 0; k < 256; k++)
            ATF_REQUIRE_MSG(p[k] == 0, "region " << i << " byte " << k);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(arena__fill_and_flush_small);
ATF_TEST_CASE_BODY(arena__fill_and_flush_small) {
    Arena *a = idle_arena(1);
    Arena *b = idle_arena(2);
    const unsigned bin = size_to_class(128);
    void *out[21];
    unsigned got = arena_fill_small(a, bin, out, 20, CountDelta{7, 3});
    ATF_REQUIRE_EQ(got, 20u);
    std::set<void *> distinct(out, out + got);
    ATF_REQUIRE_EQ(distinct.size(), size_t{got});
    // Popped from the end: the lowest address is handed out first.
    ATF_REQUIRE_EQ(out[got - 1], *std::min_element(out, out + got));
    {
        MutexGuard guard(a->mutex);
        ATF_REQUIRE_EQ(a->bins[bin].nmalloc, 20u);
        ATF_REQUIRE_EQ(a->bins[bin].nfills, 1u);
        ATF_REQUIRE_EQ(a->bins[bin].nrequests, 7u);  // the cache's count, not the regions'
        ATF_REQUIRE_EQ(a->stats.allocated_small, 20u * 128);
    }
    // A region of another arena among them is handed back, at the front.
    void *foreign = arena_malloc_small(b, bin, false);
    out[got] = out[5];
    out[5] = foreign;
    ATF_REQUIRE_EQ(arena_flush_small(a, bin, out, got + 1), 1u);
    ATF_REQUIRE_EQ(out[0], foreign);
    MutexGuard guard(a->mutex);
    ATF_REQUIRE_EQ(a->bins[bin].ndalloc, 20u);
    ATF_REQUIRE_EQ(a->bins[bin].nflushes, 1u);
    ATF_REQUIRE_EQ(a->stats.allocated_small, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(arena__remote_frees_return_at_drain);
ATF_TEST_CASE_BODY(arena__remote_frees_return_at_drain) {
    Arena *a = idle_arena(1);
    Arena *b = idle_arena(2);
    const unsigned bin = size_to_class(64);
    void *ptrs[11];
    for (int i = 0; i < 10; i++)
        ptrs[i] = arena_malloc_small(a, bin, false);
    ptrs[10] = arena_malloc_small(b, bin, false);
    RemoteBatch *spare = nullptr;
    RemoteBatch *batch = remote_batch_get(&spare);
    ATF_REQUIRE(batch != nullptr);
    ATF_REQUIRE_EQ(arena_push_remote(a, bin, ptrs, 11, batch), 1u);
    ATF_REQUIRE_EQ(ptrs[0], ptrs[10]);  // b's region, left for the caller
    // Pushed, not yet returned: the regions are still out of their runs.
    {
        MutexGuard guard(a->mutex);
        ATF_REQUIRE_EQ(a->bins[bin].ndalloc, 0u);
    }
    arena_drain_remote(a);
    MutexGuard guard(a->mutex);
    ATF_REQUIRE_EQ(a->bins[bin].ndalloc, 10u);
    ATF_REQUIRE_EQ(a->stats.allocated_small, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(arena__large_runs_coalesce_when_freed);
ATF_TEST_CASE_BODY(arena__large_runs_coalesce_when_freed) {
    Arena *a = idle_arena(1);
    void *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = large(a, 32 * kQuarterPage);
        ATF_REQUIRE_EQ(usable(p[i]), 32 * kQuarterPage);
        ATF_REQUIRE_EQ(page_map_tag(entry_of(a, p[i])), kPageLarge);
    }
    Chunk *c = chunk_containing(p[0]);
    ATF_REQUIRE(chunk_containing(p[1]) == c && chunk_containing(p[2]) == c);
    {
        MutexGuard guard(a->mutex);
        ATF_REQUIRE_EQ(a->nactive, 3u * (32 * kQuarterPage / kPage));
        ATF_REQUIRE_EQ(a->stats.allocated_large, 3u * 32 * kQuarterPage);
        ATF_REQUIRE_EQ(c->nfree_pages, c->npages - c->header_pages - 3u * (32 * kQuarterPage / kPage));
    }
    // The middle first, so that each later free joins free neighbours.
    ATF_REQUIRE_EQ(release(p[1]), 32 * kQuarterPage);
    ATF_REQUIRE_EQ(release(p[0]), 32 * kQuarterPage);
    ATF_REQUIRE_EQ(release(p[2]), 32 * kQuarterPage);
    MutexGuard guard(a->mutex);
    ATF_REQUIRE_EQ(a->nactive, 0u);
    ATF_REQUIRE_EQ(a->stats.allocated_large, 0u);
    ATF_REQUIRE_EQ(a->stats.nmalloc_large, 3u);
    ATF_REQUIRE_EQ(a->stats.ndalloc_large, 3u);
    unsigned l = large_class(32 * kQuarterPage) - kNumBins;
    ATF_REQUIRE_EQ(a->large[l].nmalloc, 3u);
    ATF_REQUIRE_EQ(a->large[l].ndalloc, 3u);
    ATF_REQUIRE_EQ(a->large[l].curruns, 0u);
    // The chunk's pages are one free run again, named by its first and
    // last pages.
    uint32_t usable_pages = c->npages - c->header_pages;
    ATF_REQUIRE_EQ(c->nfree_pages, usable_pages);
    PageMapEntry first = c->map[c->header_pages];
    PageMapEntry last = c->map[c->npages - 1];
    ATF_REQUIRE_EQ(page_map_tag(first), kPageFree);
    ATF_REQUIRE_EQ(page_map_run(first), page_map_run(last));
    ATF_REQUIRE_EQ(page_map_run(first)->npages, usable_pages);
}

ATF_TEST_CASE_WITHOUT_HEAD(arena__large_resize_in_place);
ATF_TEST_CASE_BODY(arena__large_resize_in_place) {
    Arena *a = idle_arena(1);
    // Find two blocks side by side.
    std::vector<void *> v;
    void *x = nullptr, *y = nullptr;
    for (int i = 0; i < 16 && x == nullptr; i++) {
        v.push_back(large(a, 32 * kQuarterPage));
        for (void *p : v)
            if (static_cast<char *>(p) + 32 * kQuarterPage == v.back())
                x = p, y = v.back();
            else if (static_cast<char *>(v.back()) + 32 * kQuarterPage == p)
                x = v.back(), y = p;
    }
    ATF_REQUIRE(x != nullptr);
    Chunk *c = chunk_containing(x);
    // y is in the way.
    ATF_REQUIRE(!arena_ralloc_large_in_place(c, x, large_class(64 * kQuarterPage)));
    ATF_REQUIRE_EQ(usable(x), 32 * kQuarterPage);
    ATF_REQUIRE_EQ(release(y), 32 * kQuarterPage);
    // Grown over y's pages, which are x's now; x's bytes stay.
    ATF_REQUIRE(arena_ralloc_large_in_place(c, x, large_class(64 * kQuarterPage)));
    ATF_REQUIRE_EQ(usable(x), 64 * kQuarterPage);
    ATF_REQUIRE_EQ(page_map_run(entry_of(a, y)), page_map_run(entry_of(a, x)));
    ATF_REQUIRE_EQ(page_map_tag(entry_of(a, y)), kPageLarge);
    ATF_REQUIRE_EQ(static_cast<unsigned char *>(x)[32 * kQuarterPage - 1], 0x42);
    uint64_t allocated;
    {
        MutexGuard guard(a->mutex);
        allocated = a->stats.allocated_large;
    }
    // Shrunk: the tail is a free run, and the block can grow into it again.
    ATF_REQUIRE(arena_ralloc_large_in_place(c, x, large_class(16 * kQuarterPage)));
    ATF_REQUIRE_EQ(usable(x), 16 * kQuarterPage);
    ATF_REQUIRE_EQ(page_map_tag(entry_of(a, static_cast<char *>(x) + 16 * kQuarterPage)), kPageFree);
    {
        MutexGuard guard(a->mutex);
        ATF_REQUIRE_EQ(a->stats.allocated_large, allocated - 48 * kQuarterPage);
    }
    ATF_REQUIRE(arena_ralloc_large_in_place(c, x, large_class(40 * kQuarterPage)));
    ATF_REQUIRE_EQ(usable(x), 40 * kQuarterPage);
    // Not a large block: refused.
    void *small = arena_malloc_small(a, size_to_class(32), false);
    ATF_REQUIRE(!arena_ralloc_large_in_place(chunk_containing(small), small, large_class(32 * kQuarterPage)));
}

ATF_TEST_CASE_WITHOUT_HEAD(arena__dirty_pages_accounted_and_purged);
ATF_TEST_CASE_BODY(arena__dirty_pages_accounted_and_purged) {
    Arena *a = idle_arena(1);
    g_options.decay_ms = kDecayMsMax;  // nothing ages during the test
    void *p = large(a, 64 * kQuarterPage);
    void *q = large(a, 32 * kQuarterPage);
    uint64_t dirty0, active0;
    {
        MutexGuard guard(a->mutex);
        dirty0 = a->ndirty;
        active0 = a->nactive;
    }
    release(p);
    {
        MutexGuard guard(a->mutex);
        ATF_REQUIRE_EQ(a->ndirty, dirty0 + 16);
        ATF_REQUIRE_EQ(a->nactive, active0 - 16);
        ATF_REQUIRE(a->dirty_first != nullptr);
    }
    // Written pages are flagged dirty in the page map.
    ATF_REQUIRE(page_map_dirty(entry_of(a, p)));
    uint64_t purged_before = a->stats.npurged_pages;
    uint64_t calls_before = a->stats.nmadvise;
    ATF_REQUIRE(arena_purge_all(a, false) >= 16);
    MutexGuard guard(a->mutex);
    ATF_REQUIRE_EQ(a->ndirty, 0u);
    ATF_REQUIRE(a->dirty_first == nullptr);
    ATF_REQUIRE(a->stats.npurged_pages >= purged_before + 16);
    ATF_REQUIRE(a->stats.nmadvise > calls_before);
    ATF_REQUIRE(!page_map_dirty(chunk_containing(p)->map[chunk_page_index(chunk_containing(p), p)]));
    // The live block is untouched.
    ATF_REQUIRE_EQ(static_cast<unsigned char *>(q)[100], 0x42);
}

ATF_TEST_CASE_WITHOUT_HEAD(arena__refuses_bad_pointers);
ATF_TEST_CASE_BODY(arena__refuses_bad_pointers) {
    Arena *a = idle_arena(1);
    g_options.continue_on_bad_pointer = true;  // report and go on
    void *p = large(a, 32 * kQuarterPage);
    char *s = static_cast<char *>(arena_malloc_small(a, size_to_class(64), false));
    ATF_REQUIRE_EQ(release(static_cast<char *>(p) + kPage), 0u);
    ATF_REQUIRE_EQ(arena_usable_size(chunk_containing(s), s + 8, "malloc_usable_size"), 0u);
    ATF_REQUIRE_EQ(release(s + 8), 0u);
    // Refused, they are still live.
    ATF_REQUIRE_EQ(usable(p), 32 * kQuarterPage);
    ATF_REQUIRE_EQ(usable(s), size_t{64});
    ATF_REQUIRE_EQ(release(p), 32 * kQuarterPage);
    ATF_REQUIRE_EQ(release(s), size_t{64});
    // A second free of either is refused too, and counted once.
    ATF_REQUIRE_EQ(release(s), 0u);
    MutexGuard guard(a->mutex);
    ATF_REQUIRE_EQ(a->stats.ndalloc_large, 1u);
    ATF_REQUIRE_EQ(a->stats.allocated_small, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(arena__fill_new_block_follows_options);
ATF_TEST_CASE_BODY(arena__fill_new_block_follows_options) {
    ATF_REQUIRE(ensure_initialized());
    unsigned char buf[100];
    g_options.zero = false;
    g_options.junk = false;
    memset(buf, 0x77, sizeof(buf));
    fill_new_block(buf, sizeof(buf), false, false);
    ATF_REQUIRE_EQ(buf[0], 0x77);
    ATF_REQUIRE_EQ(buf[99], 0x77);
    fill_new_block(buf, sizeof(buf), true, true);  // known zero: left alone
    ATF_REQUIRE_EQ(buf[50], 0x77);
    fill_new_block(buf, sizeof(buf), true, false);
    ATF_REQUIRE_EQ(buf[0] | buf[50] | buf[99], 0);
    g_options.junk = true;
    fill_new_block(buf, sizeof(buf), false, false);
    ATF_REQUIRE_EQ(buf[0], kJunkOnAlloc);
    ATF_REQUIRE_EQ(buf[99], kJunkOnAlloc);
    g_options.zero = true;  // Z wins over J
    fill_new_block(buf, sizeof(buf), false, false);
    ATF_REQUIRE_EQ(buf[0] | buf[99], 0);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, arena__small_regions_and_counts);
    ATF_ADD_TEST_CASE(tcs, arena__small_zeroed_on_request);
    ATF_ADD_TEST_CASE(tcs, arena__fill_and_flush_small);
    ATF_ADD_TEST_CASE(tcs, arena__remote_frees_return_at_drain);
    ATF_ADD_TEST_CASE(tcs, arena__large_runs_coalesce_when_freed);
    ATF_ADD_TEST_CASE(tcs, arena__large_resize_in_place);
    ATF_ADD_TEST_CASE(tcs, arena__dirty_pages_accounted_and_purged);
    ATF_ADD_TEST_CASE(tcs, arena__refuses_bad_pointers);
    ATF_ADD_TEST_CASE(tcs, arena__fill_new_block_follows_options);
}
