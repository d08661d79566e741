// Unit tests of huge blocks (lib/huge.h): the mapping and usable sizes,
// alignment, registration, statistics, resizing in place and by moving,
// the cache of freed mappings and its bound, and pointers it refuses.
#include <atf-c++.hpp>

#include <cstdint>
#include <cstring>

#include "arena.h"
#include "chunk_registry.h"
#include "config.h"
#include "huge.h"
#include "init.h"
#include "options.h"
#include "platform.h"
#include "require_msg.h"

using namespace arenalloc;

namespace {

// huge_stats() also reports the cached bytes; these tests read the counts.
size_t g_cached_ignored;

const size_t MiB = size_t{1} << 20;

Arena *arena0() {
    ATF_REQUIRE(ensure_initialized());
    Arena *a = arena_get(0);
    ATF_REQUIRE(a != nullptr);
    g_options.decay_ms = kDecayMsMax;  // nothing in the cache ages during a test
    return a;
}

Huge *descriptor(const void *p) {
    uintptr_t owner = registry_lookup(p);
    ATF_REQUIRE_EQ(owner & kRegistryTagMask, uintptr_t{kRegistryHuge});
    return reinterpret_cast<Huge *>(owner & ~kRegistryTagMask);
}

uintptr_t tag_of(const Huge *h) { return reinterpret_cast<uintptr_t>(h) | kRegistryHuge; }

bool is_live(const Huge *h) {
    for (const Huge *x = g_huge_live; x != nullptr; x = x->next)
        if (x == h)
            return true;
    return false;
}

// A huge block of size bytes whose every page starts with its number.
unsigned char *numbered_block(Arena *a, size_t size) {
    unsigned char *p = static_cast<unsigned char *>(huge_malloc(a, size, kPage, false));
    ATF_REQUIRE(p != nullptr);
    for (size_t i = 0; i < size; i += kPage)
        p[i] = static_cast<unsigned char>(i / kPage);
    return p;
}

void require_numbered(const unsigned char *p, size_t size) {
    for (size_t i = 0; i < size; i += kPage)
        ATF_REQUIRE_MSG(p[i] == static_cast<unsigned char>(i / kPage), "page " << i / kPage);
}

uint64_t mapped_bytes() {
    PlatformCounters pc;
    platform_counters(&pc);
    return pc.mapped;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(huge__sizes_registration_and_stats);
ATF_TEST_CASE_BODY(huge__sizes_registration_and_stats) {
    Arena *a = arena0();
    HugeStats before;
    huge_stats(&before, &g_cached_ignored);
    // A request of 3 MiB + 100: a page more in use, the mapping to the
    // next granule.
    const size_t size = 3 * MiB + 100;
    const size_t usize = 3 * MiB + kPage;
    const size_t mapped = 3 * MiB + kGranule;
    char *p = static_cast<char *>(huge_malloc(a, size, kPage, false));
    ATF_REQUIRE(p != nullptr);
    ATF_REQUIRE_EQ(reinterpret_cast<uintptr_t>(p) % kGranule, 0u);
    Huge *h = descriptor(p);
    ATF_REQUIRE_EQ(h->addr, reinterpret_cast<uintptr_t>(p));
    ATF_REQUIRE_EQ(h->usize, usize);
    ATF_REQUIRE_EQ(h->mapped, mapped);
    ATF_REQUIRE_EQ(h->arena, a);
    ATF_REQUIRE(is_live(h));
    ATF_REQUIRE_EQ(huge_usable_size(h, p, "malloc_usable_size"), usize);
    // The whole mapping answers for the block, and nothing past it.
    ATF_REQUIRE_EQ(registry_lookup(p + usize - 1), tag_of(h));
    ATF_REQUIRE_EQ(registry_lookup(p + mapped - 1), tag_of(h));
    ATF_REQUIRE(registry_lookup(p + mapped) != tag_of(h));
    memset(p, 0x6b, usize);
    HugeStats live;
    huge_stats(&live, &g_cached_ignored);
    ATF_REQUIRE_EQ(live.nmalloc, before.nmalloc + 1);
    ATF_REQUIRE_EQ(live.allocated, before.allocated + usize);
    ATF_REQUIRE_EQ(live.mapped, before.mapped + mapped);

    ATF_REQUIRE_EQ(huge_free(h, p, "free"), usize);
    ATF_REQUIRE(!is_live(h));
    ATF_REQUIRE_EQ(registry_lookup(p), 0u);
    HugeStats after;
    huge_stats(&after, &g_cached_ignored);
    ATF_REQUIRE_EQ(after.ndalloc, before.ndalloc + 1);
    ATF_REQUIRE_EQ(after.allocated, before.allocated);
    ATF_REQUIRE_EQ(after.mapped, before.mapped);
}

ATF_TEST_CASE_WITHOUT_HEAD(huge__aligned_as_asked);
ATF_TEST_CASE_BODY(huge__aligned_as_asked) {
    Arena *a = arena0();
    for (size_t align : {kPage, kGranule, 4 * MiB, 16 * MiB}) {
        void *p = huge_malloc(a, 5 * MiB, align, false);
        ATF_REQUIRE(p != nullptr);
        ATF_REQUIRE_MSG(reinterpret_cast<uintptr_t>(p) % align == 0, "align " << align);
        ATF_REQUIRE_MSG(reinterpret_cast<uintptr_t>(p) % kGranule == 0, "align " << align);
        ATF_REQUIRE(huge_free(descriptor(p), p, "free") != 0);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(huge__freed_mapping_reused_and_zeroed);
ATF_TEST_CASE_BODY(huge__freed_mapping_reused_and_zeroed) {
    Arena *a = arena0();
    huge_purge_cache();
    ATF_REQUIRE_EQ(g_huge_cache_bytes, 0u);
    unsigned char *p = static_cast<unsigned char *>(huge_malloc(a, 4 * MiB, kPage, false));
    ATF_REQUIRE(p != nullptr);
    memset(p, 0xff, 4 * MiB);
    ATF_REQUIRE(huge_free(descriptor(p), p, "free") != 0);
    ATF_REQUIRE_EQ(g_huge_cache_bytes, 4 * MiB);
    // The cached mapping serves the next request of its size, cleared
    // when zero is asked.
    unsigned char *q = static_cast<unsigned char *>(huge_malloc(a, 4 * MiB, kPage, true));
    ATF_REQUIRE_EQ(q, p);
    ATF_REQUIRE_EQ(g_huge_cache_bytes, 0u);
    for (size_t i = 0; i < 4 * MiB; i += 997)
        ATF_REQUIRE_MSG(q[i] == 0, "byte " << i);
    ATF_REQUIRE(huge_free(descriptor(q), q, "free") != 0);
    ATF_REQUIRE_EQ(huge_purge_cache(), 4 * MiB);
    ATF_REQUIRE_EQ(g_huge_cache_bytes, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(huge__cache_bounded);
ATF_TEST_CASE_BODY(huge__cache_bounded) {
    Arena *a = arena0();
    huge_purge_cache();
    // huge.cc keeps at most 128 MiB of freed mappings, none bigger than a
    // quarter of that.
    const size_t bound = 128 * MiB;
    void *blocks[12];
    for (void *&p : blocks) {
        p = huge_malloc(a, 24 * MiB, kPage, false);
        ATF_REQUIRE(p != nullptr);
    }
    uint64_t mapped = mapped_bytes();
    for (void *p : blocks) {
        ATF_REQUIRE(huge_free(descriptor(p), p, "free") != 0);
        ATF_REQUIRE_MSG(g_huge_cache_bytes <= bound, g_huge_cache_bytes);
        if (p == blocks[0])
            ATF_REQUIRE_EQ(g_huge_cache_bytes, 24 * MiB);
    }
    // What is not cached went back to the kernel.
    ATF_REQUIRE_EQ(mapped_bytes(), mapped - 12 * 24 * MiB + g_huge_cache_bytes);
    huge_purge_cache();
    void *big = huge_malloc(a, bound / 4 + MiB, kPage, false);
    ATF_REQUIRE(big != nullptr);
    ATF_REQUIRE(huge_free(descriptor(big), big, "free") != 0);
    ATF_REQUIRE_EQ(g_huge_cache_bytes, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(huge__shrink_and_grow_in_place);
ATF_TEST_CASE_BODY(huge__shrink_and_grow_in_place) {
    Arena *a = arena0();
    unsigned char *p = numbered_block(a, 8 * MiB);
    Huge *h = descriptor(p);
    HugeStats before;
    huge_stats(&before, &g_cached_ignored);
    ATF_REQUIRE(huge_ralloc_in_place(h, p, 4 * MiB + 1));
    ATF_REQUIRE_EQ(h->usize, 4 * MiB + kPage);
    ATF_REQUIRE_EQ(h->mapped, 4 * MiB + kGranule);
    ATF_REQUIRE_EQ(huge_usable_size(h, p, "realloc"), 4 * MiB + kPage);
    ATF_REQUIRE_EQ(registry_lookup(p + h->mapped - 1), tag_of(h));
    ATF_REQUIRE(registry_lookup(p + h->mapped) != tag_of(h));
    HugeStats shrunk;
    huge_stats(&shrunk, &g_cached_ignored);
    ATF_REQUIRE_EQ(shrunk.allocated, before.allocated - (4 * MiB - kPage));
    ATF_REQUIRE_EQ(shrunk.mapped, before.mapped - (4 * MiB - kGranule));
#if defined(HAVE_MREMAP)
    // The tail just given back is free: the block grows over it again.
    ATF_REQUIRE(huge_ralloc_in_place(h, p, 8 * MiB));
    ATF_REQUIRE_EQ(h->usize, 8 * MiB);
    ATF_REQUIRE_EQ(registry_lookup(p + 8 * MiB - 1), tag_of(h));
    p[8 * MiB - 1] = 1;
#endif
    require_numbered(p, 4 * MiB);
    ATF_REQUIRE(huge_free(h, p, "free") != 0);
}

ATF_TEST_CASE_WITHOUT_HEAD(huge__grow_by_moving);
ATF_TEST_CASE_BODY(huge__grow_by_moving) {
#if !defined(HAVE_MREMAP)
    ATF_SKIP("no mremap: huge blocks are not moved");
#else
    Arena *a = arena0();
    unsigned char *p = numbered_block(a, 4 * MiB);
    Huge *h = descriptor(p);
    // Not a growth: refused.
    ATF_REQUIRE(huge_ralloc_move(h, p, 2 * MiB) == nullptr);
    unsigned char *q = static_cast<unsigned char *>(huge_ralloc_move(h, p, 12 * MiB));
    ATF_REQUIRE(q != nullptr);
    ATF_REQUIRE_EQ(descriptor(q), h);
    ATF_REQUIRE_EQ(h->addr, reinterpret_cast<uintptr_t>(q));
    ATF_REQUIRE_EQ(h->usize, 12 * MiB);
    ATF_REQUIRE_EQ(registry_lookup(q + 12 * MiB - 1), tag_of(h));
    if (q != p)
        ATF_REQUIRE(registry_lookup(p) != tag_of(h));
    require_numbered(q, 4 * MiB);
    q[12 * MiB - 1] = 1;
    ATF_REQUIRE_EQ(huge_free(h, q, "free"), 12 * MiB);
#endif
}

ATF_TEST_CASE_WITHOUT_HEAD(huge__refuses_bad_pointers);
ATF_TEST_CASE_BODY(huge__refuses_bad_pointers) {
    Arena *a = arena0();
    g_options.continue_on_bad_pointer = true;  // report and go on
    char *p = static_cast<char *>(huge_malloc(a, 3 * MiB, kPage, false));
    ATF_REQUIRE(p != nullptr);
    Huge *h = descriptor(p);
    ATF_REQUIRE_EQ(huge_usable_size(h, p + kPage, "malloc_usable_size"), 0u);
    ATF_REQUIRE_EQ(huge_free(h, p + 16, "free"), 0u);
    ATF_REQUIRE(!huge_ralloc_in_place(h, p + kPage, 2 * MiB));
    ATF_REQUIRE(is_live(h));
    ATF_REQUIRE_EQ(huge_free(h, p, "free"), 3 * MiB);
    // The descriptor is kept for reuse: a second free finds it free.
    HugeStats before;
    huge_stats(&before, &g_cached_ignored);
    ATF_REQUIRE_EQ(huge_free(h, p, "free"), 0u);
    HugeStats after;
    huge_stats(&after, &g_cached_ignored);
    ATF_REQUIRE_EQ(after.ndalloc, before.ndalloc);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, huge__sizes_registration_and_stats);
    ATF_ADD_TEST_CASE(tcs, huge__aligned_as_asked);
    ATF_ADD_TEST_CASE(tcs, huge__freed_mapping_reused_and_zeroed);
    ATF_ADD_TEST_CASE(tcs, huge__cache_bounded);
    ATF_ADD_TEST_CASE(tcs, huge__shrink_and_grow_in_place);
    ATF_ADD_TEST_CASE(tcs, huge__grow_by_moving);
    ATF_ADD_TEST_CASE(tcs, huge__refuses_bad_pointers);
}
