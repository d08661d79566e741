// find.cc — what an address of the target is: outside the heap, in a
// huge block, a chunk header, free pages, a large block or a small region,
// and whether a thread cache holds it.  Follows the same chain of loads as
// the allocator's free(): registry, page map, run.
#include "walker_internal.h"

using namespace walker;

void aa_walker::find(uint64_t addr, aa_find_result *r) {
    *r = aa_find_result{};
    r->address = addr;
    r->arena_index = UINT64_MAX;
    r->size_class = UINT64_MAX;
    uint64_t owner = registry_lookup(addr);
    if (owner == 0)
        return;  // AA_STATE_NOT_HEAP
    uint64_t tag = owner & d.registry.tag_mask;
    uint64_t target = owner & ~d.registry.tag_mask;
    if (tag == d.registry.tag_huge)
        find_in_huge(target, r);
    else
        find_in_chunk(r);
}

void aa_walker::find_in_huge(uint64_t huge_desc, aa_find_result *r) {
    uint64_t addr = r->address;
    Obj h = obj(huge_desc, d.huge.size);
    uint64_t start = h.get(d.huge.addr), usize = h.get(d.huge.usize);
    r->chunk = start;
    r->region_start = start;
    r->size = usize;
    r->offset = addr - start;
    r->state = addr - start < usize ? AA_STATE_HUGE : AA_STATE_UNUSED;
    r->arena_index = arena_index_of(h.get(d.huge.arena));
}

void aa_walker::find_in_chunk(aa_find_result *r) {
    uint64_t addr = r->address;
    uint64_t chunk = addr & ~(chunk_size - 1);
    r->chunk = chunk;
    Obj ch = obj(chunk, d.chunk.size);
    r->arena_index = arena_index_of(ch.get(d.chunk.arena));
    uint64_t page = (addr - chunk) / d.page_size;
    if (page < header_pages) {
        r->state = AA_STATE_HEADER;
        return;
    }
    r->page_map_entry = chunk + d.chunk.map.offset + page * d.chunk.page_map_entry_size;
    uint64_t e = read_u(r->page_map_entry, static_cast<uint32_t>(d.chunk.page_map_entry_size));
    uint64_t ptag = e & d.page_map.tag_mask;
    uint64_t desc = e & ~d.page_map.flag_mask;
    r->run_descriptor = desc;
    if (ptag == d.page_map.tag_header) {
        r->state = AA_STATE_HEADER;
        return;
    }
    if (ptag == d.page_map.tag_free) {
        r->state = AA_STATE_FREE_PAGES;
        // Only a free run's end pages name it; report the page otherwise.
        r->run = addr & ~(d.page_size - 1);
        if (desc != 0) {
            RunM run = read_run(desc);
            r->run = run.base;
            r->run_pages = run.npages;
        }
        return;
    }
    RunM run = read_run(desc);
    r->run = run.base;
    r->run_pages = run.npages;
    r->size_class = run.size_class;
    if (ptag == d.page_map.tag_large) {
        r->size = uint64_t{run.npages} * d.page_size;
        r->region_start = run.base;
        r->offset = addr - run.base;
        // A cached large block is free, though its arena counts it out.
        r->tcache = tcache_holding(run.size_class, run.base);
        r->state = r->tcache != 0 ? AA_STATE_TCACHE : AA_STATE_ALLOCATED;
        return;
    }
    uint64_t off = addr - run.base;
    uint64_t reg = off / run.region_size;
    r->size = run.region_size;
    if (reg >= run.nregs) {
        r->state = AA_STATE_UNUSED;
        return;
    }
    r->region_index = reg;
    r->region_start = run.base + reg * run.region_size;
    r->offset = addr - r->region_start;
    if (run.is_free_region(static_cast<uint32_t>(reg))) {
        r->state = AA_STATE_FREE;
        return;
    }
    r->tcache = tcache_holding(run.size_class, r->region_start);
    r->state = r->tcache != 0 ? AA_STATE_TCACHE : AA_STATE_ALLOCATED;
}

// The cache whose class cls stack holds the block at start, or 0.
uint64_t aa_walker::tcache_holding(uint64_t cls, uint64_t start) {
    for (const TCacheM &t : read_tcaches()) {
        if (cls >= t.stacks.size())
            continue;
        for (uint64_t p : t.stacks[cls])
            if (p == start)
                return t.addr;
    }
    return 0;
}
