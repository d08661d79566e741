// page_map.h — one entry per page of a chunk, kept in the chunk header.
// An entry names the Run descriptor the page belongs to and, in its low
// bits, that run's state, so free() learns "small, large or free" and the
// size class from one load, without reading anything at the pointer.
//
// Invariants (arena lock held to read or write):
//  - every page of a small or large run maps to that run with its tag;
//  - every page of a free run is tagged free, with kPageDirty when it was
//    written since last mapped or purged; the first and last page of a
//    free run also point at its descriptor (for coalescing neighbours);
//  - header pages are kPageHeader (with no run).
#ifndef ARENALLOC_PAGE_MAP_H
#define ARENALLOC_PAGE_MAP_H

#include <cstdint>

namespace arenalloc {

struct Run;

using PageMapEntry = uintptr_t;

// Small is zero so that free()'s fast path reads the run pointer as is;
// every page of a chunk is written before use, so no zero entry means
// "small run at address 0".
enum PageTag : uintptr_t {
    kPageSmall = 0,
    kPageFree = 1,
    kPageLarge = 2,
    kPageHeader = 3,
};

constexpr uintptr_t kPageTagMask = 3;

// On a free page: written since it was last mapped or purged, so it holds
// memory the kernel could take back (see the arena's dirty accounting).
constexpr uintptr_t kPageDirty = 4;
constexpr uintptr_t kPageFlagMask = kPageTagMask | kPageDirty;

inline PageMapEntry page_map_entry(Run *run, PageTag tag) {
    return reinterpret_cast<uintptr_t>(run) | tag;
}

inline PageTag page_map_tag(PageMapEntry e) {
    return static_cast<PageTag>(e & kPageTagMask);
}

inline Run *page_map_run(PageMapEntry e) {
    return reinterpret_cast<Run *>(e & ~kPageFlagMask);
}

inline bool page_map_dirty(PageMapEntry e) {
    return (e & kPageDirty) != 0;
}

// The loops over a run's entries (a 1 MiB run has 256) go four entries a
// step, in two vector registers (GCC's and Clang's vector extension: SSE2
// on x86-64, plain code where there are no vectors): one entry a step,
// they would be most of a large malloc + free.
// (A typedef: clang ignores the alignment attribute on an alias
// declaration, and then uses aligned vector moves on entries that are only
// 8-byte aligned.)
typedef PageMapEntry PageMapPair
    __attribute__((vector_size(2 * sizeof(PageMapEntry)), aligned(sizeof(PageMapEntry)), may_alias));
static_assert(alignof(PageMapPair) == alignof(PageMapEntry),
              "the vector steps may start at any entry");

// Sets n entries to e.
inline void page_map_fill(PageMapEntry *map, uint32_t n, PageMapEntry e) {
    PageMapPair pair = {e, e};
    for (uint32_t k = n / 4; k != 0; k--, map += 4) {
        reinterpret_cast<PageMapPair *>(map)[0] = pair;
        reinterpret_cast<PageMapPair *>(map)[1] = pair;
    }
    for (uint32_t k = n % 4; k != 0; k--, map++)
        *map = e;
}

// Clears the dirty flag of n entries.
inline void page_map_clear_dirty(PageMapEntry *map, uint32_t n) {
    PageMapPair mask = {~kPageDirty, ~kPageDirty};
    for (uint32_t k = n / 4; k != 0; k--, map += 4) {
        reinterpret_cast<PageMapPair *>(map)[0] &= mask;
        reinterpret_cast<PageMapPair *>(map)[1] &= mask;
    }
    for (uint32_t k = n % 4; k != 0; k--, map++)
        *map &= ~kPageDirty;
}

// How many of n entries have the dirty flag.
inline uint32_t page_map_count_dirty(const PageMapEntry *map, uint32_t n) {
    PageMapPair mask = {kPageDirty, kPageDirty};
    PageMapPair sum0 = {0, 0}, sum1 = {0, 0};
    for (uint32_t k = n / 4; k != 0; k--, map += 4) {
        sum0 += reinterpret_cast<const PageMapPair *>(map)[0] & mask;
        sum1 += reinterpret_cast<const PageMapPair *>(map)[1] & mask;
    }
    sum0 += sum1;
    PageMapEntry total = sum0[0] + sum0[1];
    for (uint32_t k = n % 4; k != 0; k--, map++)
        total += *map & kPageDirty;
    return static_cast<uint32_t>(total / kPageDirty);
}

}  // namespace arenalloc

#endif
