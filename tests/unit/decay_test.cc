// Unit tests of the decay schedule (lib/decay.h): the interval and age
// limit derived from the decay time, and when decay_tick() sweeps.  Time
// is made up rather than waited for: a dirty run's age is moved back (its
// dirty_since), and the decay time is changed between steps.
#include <atf-c++.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "arena.h"
#include "chunk_registry.h"
#include "decay.h"
#include "huge.h"
#include "init.h"
#include "options.h"
#include "idle_arena.h"
#include "require_msg.h"
#include "run.h"
#include "size_classes.h"

using namespace arenalloc;

namespace {

uint64_t dirty_pages(Arena *a) {
    MutexGuard guard(a->mutex);
    return a->ndirty;
}

// A written block of 8 pages (32 KiB with 4 KiB pages) of arena a.
constexpr size_t kBlock = 8 * kPage;

void *written_block(Arena *a) {
    void *p = arena_malloc_large(a, size_to_class(kBlock), kPage, false);
    ATF_REQUIRE(p != nullptr);
    ATF_REQUIRE_EQ(chunk_containing(p)->arena, a);
    memset(p, 0x11, kBlock);
    return p;
}

// Frees p, of arena a: eight more dirty pages.
void free_block(Arena *a, void *p) {
    uint64_t before = dirty_pages(a);
    ATF_REQUIRE_EQ(arena_free(chunk_containing(p), p, "free"), kBlock);
    ATF_REQUIRE_EQ(dirty_pages(a), before + 8);
}

void make_dirty(Arena *a) { free_block(a, written_block(a)); }

// Makes every dirty run of a older than the decay time.
void age_dirty_runs(Arena *a) {
    MutexGuard guard(a->mutex);
    for (Run *r = a->dirty_first; r != nullptr; r = r->dirty_next)
        r->dirty_since -= static_cast<uint32_t>(g_options.decay_ms) + 1;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(decay__interval_and_age_limit);
ATF_TEST_CASE_BODY(decay__interval_and_age_limit) {
    struct Expected {
        int decay_ms;
        uint64_t interval;
        uint64_t age_limit;
    };
    const Expected expected[] = {
        {kDecayMsDefault, 1000, 9000},
        {kDecayMsMin, 10, 90},
        {kDecayMsMax, 360000, 3240000},
        {1234, 123, 1111},
        {9, 1, 8},  // below ten, the interval is still a millisecond
    };
    for (const Expected &e : expected) {
        g_options.decay_ms = e.decay_ms;
        ATF_REQUIRE_MSG(decay_sweep_interval_ms() == e.interval, "decay_ms " << e.decay_ms);
        ATF_REQUIRE_MSG(decay_age_limit_ms() == e.age_limit, "decay_ms " << e.decay_ms);
        ATF_REQUIRE_EQ(decay_sweep_interval_ms() + decay_age_limit_ms(),
                       static_cast<uint64_t>(e.decay_ms));
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(decay__tick_sweeps_once_per_interval);
ATF_TEST_CASE_BODY(decay__tick_sweeps_once_per_interval) {
    Arena *a = idle_arena(1);
    // An hour's decay: the interval (six minutes) cannot pass in the test.
    g_options.decay_ms = kDecayMsMax;
    make_dirty(a);
    age_dirty_runs(a);
    decay_tick_expire();
    decay_tick();  // expired: sweeps, and the aged pages go
    ATF_REQUIRE_EQ(dirty_pages(a), 0u);

    make_dirty(a);
    age_dirty_runs(a);
    decay_tick();  // within the interval of the last sweep: nothing
    decay_tick();
    ATF_REQUIRE_EQ(dirty_pages(a), kBlock / kPage);

    decay_tick_expire();
    decay_tick();
    ATF_REQUIRE_EQ(dirty_pages(a), 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(decay__sweep_keeps_young_pages);
ATF_TEST_CASE_BODY(decay__sweep_keeps_young_pages) {
    Arena *a = idle_arena(1);
    g_options.decay_ms = kDecayMsMax;
    make_dirty(a);
    uint64_t purged = a->stats.npurged_pages;
    decay_sweep();
    ATF_REQUIRE_EQ(dirty_pages(a), kBlock / kPage);
    age_dirty_runs(a);
    decay_sweep();
    ATF_REQUIRE_EQ(dirty_pages(a), 0u);
    MutexGuard guard(a->mutex);
    ATF_REQUIRE_EQ(a->stats.npurged_pages, purged + kBlock / kPage);
}

ATF_TEST_CASE_WITHOUT_HEAD(decay__sweep_covers_every_arena);
ATF_TEST_CASE_BODY(decay__sweep_covers_every_arena) {
    Arena *a = idle_arena(1);
    Arena *b = idle_arena(2);
    g_options.decay_ms = kDecayMsMax;
    // Both blocks first: a large request may take another arena's dirty
    // pages.
    void *pa = written_block(a);
    void *pb = written_block(b);
    free_block(a, pa);
    free_block(b, pb);
    age_dirty_runs(a);
    age_dirty_runs(b);
    decay_sweep();
    ATF_REQUIRE_EQ(dirty_pages(a), 0u);
    ATF_REQUIRE_EQ(dirty_pages(b), 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(decay__sweep_unmaps_aged_huge_mappings);
ATF_TEST_CASE_BODY(decay__sweep_unmaps_aged_huge_mappings) {
    Arena *a = idle_arena(0);
    g_options.decay_ms = kDecayMsMax;
    huge_purge_cache();
    void *p = huge_malloc(a, size_t{4} << 20, kPage, false);
    ATF_REQUIRE(p != nullptr);
    uintptr_t owner = registry_lookup(p);
    ATF_REQUIRE((owner & kRegistryTagMask) == kRegistryHuge);
    ATF_REQUIRE(huge_free(reinterpret_cast<Huge *>(owner & ~kRegistryTagMask), p, "free") != 0);
    ATF_REQUIRE_EQ(g_huge_cache_bytes, size_t{4} << 20);
    decay_sweep();
    ATF_REQUIRE_EQ(g_huge_cache_bytes, size_t{4} << 20);
    // A decay time of 100 ms: the mapping is past the age limit (90 ms)
    // after a wait of 150.
    g_options.decay_ms = kDecayMsMin;
    usleep(150 * 1000);
    decay_sweep();
    ATF_REQUIRE_EQ(g_huge_cache_bytes, 0u);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, decay__interval_and_age_limit);
    ATF_ADD_TEST_CASE(tcs, decay__tick_sweeps_once_per_interval);
    ATF_ADD_TEST_CASE(tcs, decay__sweep_keeps_young_pages);
    ATF_ADD_TEST_CASE(tcs, decay__sweep_covers_every_arena);
    ATF_ADD_TEST_CASE(tcs, decay__sweep_unmaps_aged_huge_mappings);
}
