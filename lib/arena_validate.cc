// arena_validate.cc — whether a pointer is a live block start of an
// arena, checked under its lock against the page map and the run's bitmap.
#include <stdint.h>

#include "arena_internal.h"
#include "chunk_registry.h"
#include "debug_assert.h"
#include "report.h"

namespace arenalloc {

// For AA_ASSERT: run r lies in its chunk's usable pages, and the map
// entries of its first and last page name r with r's state.
bool run_map_agrees(const Run *r) {
    const Chunk *c = r->chunk;
    uint32_t first = run_first_page(r);
    uint32_t last = first + r->npages - 1;
    return r->npages != 0 && first >= c->header_pages && last < c->npages &&
           page_map_run(c->map[first]) == r && page_map_tag(c->map[first]) == r->state &&
           page_map_run(c->map[last]) == r && page_map_tag(c->map[last]) == r->state;
}

// For AA_ASSERT: c is a live arena chunk, and the registry says so for p.
bool chunk_owns(const Chunk *c, const void *p) {
    return c->magic == kChunkMagic &&
           registry_lookup(p) == (reinterpret_cast<uintptr_t>(c) | kRegistryChunk);
}

// Checks p against the page map (lock held).  Returns nullptr and the run
// (and region index for small runs) when p is a live block start, or the
// finding to report.
const char *validate_locked(Chunk *c, const void *p, Run **run_out, uint32_t *reg_out) {
    uint32_t page = chunk_page_index(c, p);
    PageMapEntry e = c->map[page];
    switch (page_map_tag(e)) {
    case kPageSmall: {
        Run *r = page_map_run(e);
        uint32_t reg = 0;
        RegionAt at = run_region_at(r, reinterpret_cast<uintptr_t>(p) - r->base, &reg);
        if (at == RegionAt::kNotAStart)
            return "not the start of a block";
        if (at == RegionAt::kFree)
            return "block already free (double free)";
        AA_ASSERT(r->chunk == c && r->size_class < kNumBins && run_map_agrees(r));
        *run_out = r;
        *reg_out = reg;
        return nullptr;
    }
    case kPageLarge: {
        Run *r = page_map_run(e);
        if (reinterpret_cast<uintptr_t>(p) != r->base)
            return "not the start of a block";
        AA_ASSERT(r->chunk == c && r->size_class >= kNumBins && run_map_agrees(r));
        *run_out = r;
        return nullptr;
    }
    case kPageFree:
        return "block already free (or never allocated)";
    default:
        return "not a block returned by malloc";
    }
}

bool arena_region_is_free(Chunk *c, const void *p) {
    AA_ASSERT(chunk_owns(c, p));
    Arena *a = c->arena;
    MutexGuard guard(a->mutex);
    arena_drain_remote_locked(a);
    PageMapEntry e = c->map[chunk_page_index(c, p)];
    if (page_map_tag(e) != kPageSmall)
        return false;
    const Run *r = page_map_run(e);
    uint32_t reg = 0;
    return run_region_at(r, reinterpret_cast<uintptr_t>(p) - r->base, &reg) == RegionAt::kFree;
}

size_t arena_usable_size(Chunk *c, const void *p, const char *fn) {
    AA_ASSERT(chunk_owns(c, p));
    Arena *a = c->arena;
    a->mutex.lock();
    arena_drain_remote_locked(a);
    Run *r = nullptr;
    uint32_t reg = 0;
    const char *finding = validate_locked(c, p, &r, &reg);
    size_t usize = 0;
    if (finding == nullptr) {
        usize = r->state == kPageSmall ? bin_info(r->size_class).region_size
                                        : static_cast<size_t>(r->npages) << kLgPage;
    }
    a->mutex.unlock();
    if (AA_UNLIKELY(finding != nullptr))
        report_invalid_pointer(fn, p, finding);
    return usize;
}

}  // namespace arenalloc
