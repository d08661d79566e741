// Unit tests of the page map (lib/page_map.h) and of the invariants the
// arena keeps in it, checked by walking real chunks after real allocations
// made through the internal API (aa_malloc and friends).
#include <atf-c++.hpp>

#include "require_msg.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "allocator.h"
#include "arena.h"
#include "init.h"
#include "page_map.h"

using namespace arenalloc;

namespace {

// Walks every chunk of every arena and checks the page map invariants
// written in page_map.h and arena.h.  Returns the number of chunks seen.
unsigned check_heap() {
    unsigned nchunks = 0;
    for (unsigned i = 0; i < g_narenas; i++) {
        Arena *a = arena_peek(i);
        if (a == nullptr)
            continue;
        MutexGuard guard(a->mutex);
        std::set<Run *> on_buckets, on_dirty_list;
        for (unsigned b = 0; b < kNumClasses; b++)
            for (Run *r = a->free_buckets[b]; r != nullptr; r = r->next)
                on_buckets.insert(r);
        for (Run *r = a->dirty_first; r != nullptr; r = r->dirty_next) {
            ATF_REQUIRE(r->ndirty > 0);
            on_dirty_list.insert(r);
        }
        uint64_t ndirty = 0, nactive = 0, nempty = 0;
        for (Chunk *c = a->chunks; c != nullptr; c = c->next) {
            nchunks++;
            ATF_REQUIRE_EQ(c->magic, kChunkMagic);
            ATF_REQUIRE_EQ(c->arena, a);
            for (uint32_t p = 0; p < c->header_pages; p++)
                ATF_REQUIRE_EQ(c->map[p], static_cast<PageMapEntry>(kPageHeader));
            uint32_t nfree = 0;
            bool prev_free = false;
            uint32_t p = c->header_pages;
            while (p < c->npages) {
                PageMapEntry e = c->map[p];
                Run *r = page_map_run(e);
                ATF_REQUIRE_MSG(r != nullptr, "page " << p << " has no run");
                ATF_REQUIRE_EQ(r->base, chunk_page_addr(c, p));
                ATF_REQUIRE_EQ(r->chunk, c);
                ATF_REQUIRE(r->npages >= 1 && p + r->npages <= c->npages);
                PageTag tag = page_map_tag(e);
                ATF_REQUIRE_EQ(static_cast<unsigned>(r->state), static_cast<unsigned>(tag));
                if (tag == kPageFree) {
                    ATF_REQUIRE_MSG(!prev_free, "adjacent free runs at page " << p);
                    ATF_REQUIRE(on_buckets.count(r) == 1);
                    ATF_REQUIRE_EQ(page_map_run(c->map[p + r->npages - 1]), r);
                    uint32_t dirty = 0;
                    for (uint32_t q = 0; q < r->npages; q++) {
                        ATF_REQUIRE_EQ(page_map_tag(c->map[p + q]), kPageFree);
                        dirty += page_map_dirty(c->map[p + q]) ? 1 : 0;
                    }
                    // The dirty accounting matches the page map.
                    ATF_REQUIRE_MSG(dirty == r->ndirty, "run at page " << p << ": " << dirty
                                                        << " dirty pages, ndirty " << r->ndirty);
                    ATF_REQUIRE_EQ(on_dirty_list.count(r), r->ndirty != 0 ? 1u : 0u);
                    ndirty += dirty;
                    nfree += r->npages;
                    prev_free = true;
                } else {
                    ATF_REQUIRE(tag == kPageSmall || tag == kPageLarge);
                    for (uint32_t q = 0; q < r->npages; q++)
                        ATF_REQUIRE_EQ(c->map[p + q], e);
                    nactive += r->npages;
                    if (tag == kPageSmall) {
                        const BinInfo &info = bin_info(r->size_class);
                        ATF_REQUIRE_EQ(r->npages, info.run_pages);
                        ATF_REQUIRE_EQ(r->bitmap.count_free(), r->nfree);
                    } else {
                        ATF_REQUIRE_EQ(uint64_t{r->npages} * kPage, class_to_size(r->size_class));
                    }
                    prev_free = false;
                }
                p += r->npages;
            }
            ATF_REQUIRE_EQ(nfree, c->nfree_pages);
            if (nfree == c->npages - c->header_pages)
                nempty++;
        }
        ATF_REQUIRE_EQ(ndirty, a->ndirty);
        ATF_REQUIRE_EQ(nactive, a->nactive);
        ATF_REQUIRE_EQ(nempty, uint64_t{a->nempty_chunks});
        ATF_REQUIRE(a->nempty_chunks <= kRetainedChunks);
    }
    return nchunks;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(page_map__entry_round_trip);
ATF_TEST_CASE_BODY(page_map__entry_round_trip) {
    alignas(8) static char storage[64];
    Run *r = reinterpret_cast<Run *>(storage);
    PageTag tags[] = {kPageFree, kPageSmall, kPageLarge};
    for (PageTag t : tags) {
        PageMapEntry e = page_map_entry(r, t);
        ATF_REQUIRE_EQ(page_map_run(e), r);
        ATF_REQUIRE_EQ(page_map_tag(e), t);
    }
    ATF_REQUIRE_EQ(page_map_tag(kPageHeader), kPageHeader);
    ATF_REQUIRE(page_map_run(kPageFree) == nullptr);
}

ATF_TEST_CASE_WITHOUT_HEAD(page_map__consistent_under_mixed_use);
ATF_TEST_CASE_BODY(page_map__consistent_under_mixed_use) {
    std::mt19937 rng(12345);
    std::vector<void *> live;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 400; i++) {
            size_t size;
            switch (rng() % 4) {
            case 0: size = 1 + rng() % 128; break;
            case 1: size = 1 + rng() % 14336; break;
            case 2: size = 16385 + rng() % (256 << 10); break;
            default: size = 1 + rng() % (1 << 20); break;
            }
            void *p = aa_malloc(size);
            ATF_REQUIRE(p != nullptr);
            memset(p, 0x5a, size < 64 ? size : 64);
            live.push_back(p);
        }
        // Free about half, in random order, and resize some in place.
        for (size_t i = 0; i < live.size();) {
            if (rng() % 2 == 0) {
                aa_free(live[i]);
                live[i] = live.back();
                live.pop_back();
            } else {
                if (rng() % 8 == 0) {
                    void *q = aa_realloc(live[i], 1 + rng() % (512 << 10));
                    ATF_REQUIRE(q != nullptr);
                    live[i] = q;
                }
                i++;
            }
        }
        ATF_REQUIRE(check_heap() >= 1);
    }
    for (void *p : live)
        aa_free(p);
    check_heap();
}

ATF_TEST_CASE_WITHOUT_HEAD(page_map__aligned_runs);
ATF_TEST_CASE_BODY(page_map__aligned_runs) {
    std::vector<void *> live;
    for (size_t align = 8192; align <= (256 << 10); align *= 2) {
        for (size_t size : {size_t{1}, size_t{5000}, size_t{70000}}) {
            void *p = nullptr;
            ATF_REQUIRE_EQ(aa_posix_memalign(&p, align, size), 0);
            ATF_REQUIRE_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u);
            live.push_back(p);
        }
        check_heap();
    }
    for (void *p : live)
        aa_free(p);
    check_heap();
}

ATF_TEST_CASE_WITHOUT_HEAD(page_map__empty_chunks_retained_then_released);
ATF_TEST_CASE_BODY(page_map__empty_chunks_retained_then_released) {
    // Filling many chunks with large blocks and freeing them all keeps a
    // bounded number of empty chunks mapped; an explicit purge unmaps them.
    std::vector<void *> live;
    for (unsigned i = 0; i < 4 * (kRetainedChunks + 8); i++)
        live.push_back(aa_malloc(512 << 10));
    ATF_REQUIRE(check_heap() >= kRetainedChunks + 8);
    for (void *p : live)
        aa_free(p);
    Arena *a = arena_peek(0);
    ATF_REQUIRE(a != nullptr);
    ATF_REQUIRE(check_heap() <= kRetainedChunks);
    ATF_REQUIRE_EQ(a->stats.nchunks, uint64_t{kRetainedChunks});
    ATF_REQUIRE(aa_purge() >= kRetainedChunks * (1u << 20));
    ATF_REQUIRE(a->chunks == nullptr);
    ATF_REQUIRE_EQ(a->stats.nchunks, 0u);
    ATF_REQUIRE_EQ(check_heap(), 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(page_map__range_helpers);
ATF_TEST_CASE_BODY(page_map__range_helpers) {
    // page_map_fill, page_map_clear_dirty and page_map_count_dirty go four
    // entries a step with a scalar tail: every length and start (odd
    // starts put the vector stores off 16-byte alignment) against a
    // one-entry-a-step reference, and nothing outside the range touched.
    const PageMapEntry guard = static_cast<PageMapEntry>(0x5a5a5a5a5a5a5a5aULL);
    std::mt19937_64 rng(7);
    for (uint32_t start = 0; start < 4; start++)
        for (uint32_t n = 0; n <= 21; n++) {
            std::vector<PageMapEntry> map(start + n + 4, guard);
            PageMapEntry *range = map.data() + start;
            for (uint32_t i = 0; i < n; i++)
                range[i] = (rng() & ~kPageFlagMask) | (rng() & kPageFlagMask);
            uint32_t expect = 0;
            for (uint32_t i = 0; i < n; i++)
                expect += page_map_dirty(range[i]) ? 1 : 0;
            ATF_REQUIRE_EQ(page_map_count_dirty(range, n), expect);

            std::vector<PageMapEntry> before(range, range + n);
            page_map_clear_dirty(range, n);
            for (uint32_t i = 0; i < n; i++)
                ATF_REQUIRE_EQ(range[i], before[i] & ~kPageDirty);
            ATF_REQUIRE_EQ(page_map_count_dirty(range, n), 0u);

            page_map_fill(range, n, kPageFree | kPageDirty);
            for (uint32_t i = 0; i < n; i++)
                ATF_REQUIRE_EQ(range[i], kPageFree | kPageDirty);
            ATF_REQUIRE_EQ(page_map_count_dirty(range, n), n);

            for (uint32_t i = 0; i < start; i++)
                ATF_REQUIRE_EQ(map[i], guard);
            for (uint32_t i = start + n; i < map.size(); i++)
                ATF_REQUIRE_EQ(map[i], guard);
        }
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, page_map__entry_round_trip);
    ATF_ADD_TEST_CASE(tcs, page_map__range_helpers);
    ATF_ADD_TEST_CASE(tcs, page_map__consistent_under_mixed_use);
    ATF_ADD_TEST_CASE(tcs, page_map__aligned_runs);
    ATF_ADD_TEST_CASE(tcs, page_map__empty_chunks_retained_then_released);
}
