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

}  // namespace arenalloc

#endif
