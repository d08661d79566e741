// run.h — a Run describes a span of whole pages inside a chunk: free pages,
// a small run cut into equal regions, or one large block.  Descriptors live
// outside the pages they describe (they are carved from metadata memory and
// recycled per arena), so a stray write through a user pointer cannot reach
// them, and purged free pages need no links inside them.
#ifndef ARENALLOC_RUN_H
#define ARENALLOC_RUN_H

#include <cstddef>
#include <cstdint>

#include "bitmap.h"
#include "page_map.h"
#include "size_classes.h"
#include "util.h"

namespace arenalloc {

struct Chunk;

struct Run {
    // Read by free()'s fast path without the arena lock: fixed while the
    // run is a small run with live regions.
    uintptr_t base;        // address of the first page
    uint64_t start_magic;  // small: region_start_magic(region_size), for
                           //   region_is_start()
    uint32_t region_size;  // small: bytes per region (copied from BinInfo)
    uint32_t reciprocal;   // small: BinInfo::reciprocal, for region_index()
    uint16_t nregs;        // small: regions in the run
    uint16_t nfree;        // small: regions still free (bitmap population)
    uint16_t hint;         // small: no free region lies in a bitmap word below this
    uint8_t state;         // PageTag: kPageFree, kPageSmall or kPageLarge
    uint8_t size_class;    // small: bin index; large: size-class index
    uint8_t bin_offset_words;  // small: size_class * 4, the offset of its
                               //   cache bin in words (tcache_bin_at_offset)
    // Arena lock held for everything below.  The first cache line
    // (base_alloc aligns descriptors to 64 bytes) ends with what releasing
    // a run reads and the first bitmap words, which realloc reads without
    // the lock (allocator.cc) for the first 128 regions.
    uint32_t npages;       // length in pages
    Chunk *chunk;          // chunk the pages belong to
    RunBitmap bitmap;      // small: a set bit is a free region
    uint8_t zeroed;        // free: every page is known to read as zero
    uint32_t ndirty;       // free: pages with kPageDirty
    uint32_t dirty_since;  // free with ndirty > 0: platform_now_ms() (low
                           //   32 bits) when its pages became dirty
    Run *next;             // list links: free bucket, bin non-full or empty list, or
    Run *prev;             //   the arena's spare-descriptor list
    Run *dirty_next;       // free with ndirty > 0: the arena's dirty list,
    Run *dirty_prev;       //   oldest first
};

static_assert(offsetof(Run, bitmap) + sizeof(uint64_t) <= 64 && offsetof(Run, chunk) < 64,
              "a run's class, chunk, length and first bitmap word share a cache line");

// Whether offset (from r->base) is a region start of small run r: free()'s
// inline check, one multiply and one compare.
AA_ALWAYS_INLINE bool run_offset_is_region_start(const Run *r, size_t offset) {
    return region_is_start(r->start_magic, offset);
}

// What lies at offset (from r->base) in small run r.
enum class RegionAt { kLive, kFree, kNotAStart };

// Whether offset is the start of a live region of small run r, with its
// index in *reg_out when it is a region start.  Every check of a pointer
// into a small run asks this (under the arena lock, or without it for a
// block the caller owns: the bitmap word is read once).
AA_ALWAYS_INLINE RegionAt run_region_at(const Run *r, size_t offset, uint32_t *reg_out) {
    if (!run_offset_is_region_start(r, offset))
        return RegionAt::kNotAStart;
    uint32_t reg = region_index(r->reciprocal, offset);
    if (reg >= r->nregs)
        return RegionAt::kNotAStart;
    *reg_out = reg;
    uint64_t word = __atomic_load_n(&r->bitmap.words[reg / 64], __ATOMIC_RELAXED);
    return (word >> (reg % 64)) & 1 ? RegionAt::kFree : RegionAt::kLive;
}

// Intrusive doubly-linked list of runs with a head pointer.
inline void run_list_push(Run **head, Run *r) {
    r->prev = nullptr;
    r->next = *head;
    if (*head != nullptr)
        (*head)->prev = r;
    *head = r;
}

inline void run_list_remove(Run **head, Run *r) {
    if (r->prev != nullptr)
        r->prev->next = r->next;
    else
        *head = r->next;
    if (r->next != nullptr)
        r->next->prev = r->prev;
    r->next = r->prev = nullptr;
}

}  // namespace arenalloc

#endif
