// stats.cc — the walker's statistics: one arena, one bin, one large class,
// and the totals of the whole heap, from the counters the target keeps.
#include "walker_internal.h"

using namespace walker;

void aa_walker::arena_stats(const Obj &a, unsigned index, aa_arena_stats *s) {
    *s = aa_arena_stats{};
    s->index = index;
    s->address = a.addr;
    s->nthreads = a.get(d.arena.nthreads);
    uint64_t nchunks = arena_stat(a, d.arena_stats.nchunks);
    uint64_t nactive = a.get(d.arena.nactive);
    uint64_t ndirty = a.get(d.arena.ndirty);
    s->nchunks = nchunks;
    s->mapped = nchunks * chunk_size;
    s->retained = a.get(d.arena.nempty_chunks) * chunk_size;
    s->active = nactive * d.page_size;
    s->dirty = ndirty * d.page_size;
    s->resident = (nactive + ndirty + nchunks * header_pages) * d.page_size;
    s->allocated_small = arena_stat(a, d.arena_stats.allocated_small);
    s->allocated_large = arena_stat(a, d.arena_stats.allocated_large);
    s->nmalloc_small = arena_stat(a, d.arena_stats.nmalloc_small);
    s->ndalloc_small = arena_stat(a, d.arena_stats.ndalloc_small);
    s->nmalloc_large = arena_stat(a, d.arena_stats.nmalloc_large);
    s->ndalloc_large = arena_stat(a, d.arena_stats.ndalloc_large);
    s->npurge_passes = arena_stat(a, d.arena_stats.npurge_passes);
    s->nmadvise = arena_stat(a, d.arena_stats.nmadvise);
    s->npurged_pages = arena_stat(a, d.arena_stats.npurged_pages);
    s->lock_acquired = a.get(d.mutex.nacquired, d.arena.mutex.offset);
    s->lock_contended = a.get(d.mutex.ncontended, d.arena.mutex.offset);
    s->lock_held = a.get(d.mutex.taken, d.arena.mutex.offset) != 0;
}

void aa_walker::bin_stats(const Obj &a, unsigned b, aa_bin_stats *s) {
    size_t base = bin_base(b);
    *s = aa_bin_stats{};
    s->bin = b;
    s->region_size = bin_info[b].region_size;
    s->nregs = bin_info[b].nregs;
    s->run_size = uint64_t{bin_info[b].run_pages} * d.page_size;
    s->nmalloc = a.get(d.bin.nmalloc, base);
    s->ndalloc = a.get(d.bin.ndalloc, base);
    s->nrequests = a.get(d.bin.nrequests, base);
    s->curregs = s->nmalloc - s->ndalloc;
    s->curruns = a.get(d.bin.curruns, base);
    s->nruns = a.get(d.bin.nruns, base);
    s->nfills = a.get(d.bin.nfills, base);
    s->nflushes = a.get(d.bin.nflushes, base);
}

void aa_walker::large_stats(const Obj &a, unsigned l, aa_large_stats *s) {
    size_t base = large_base(l);
    *s = aa_large_stats{};
    s->lclass = l;
    s->size = class_size[d.nbins + l];
    s->nmalloc = a.get(d.large.nmalloc, base);
    s->ndalloc = a.get(d.large.ndalloc, base);
    s->curruns = a.get(d.large.curruns, base);
}

// Totals; arenas that cannot be read are listed in unreadable (without
// it, the first failed read ends the call).
void aa_walker::totals(aa_totals *t, std::vector<std::string> *unreadable) {
    *t = aa_totals{};
    t->narenas = narenas;
    if (!initialized)
        return;
    add_arena_totals(t, unreadable);
    add_huge_totals(t);
    t->metadata = var(d.base_mapped);
    t->mapped += t->metadata;
    t->resident += t->metadata;
    t->nthreads_seen = var(d.threads_seen);
    add_tcache_totals(t, unreadable);
}

void aa_walker::add_arena_totals(aa_totals *t, std::vector<std::string> *unreadable) {
    for (unsigned i = 0; i < narenas; i++) {
        aa_arena_stats s;
        try {
            uint64_t addr = arena_addr(i);
            if (addr == 0)
                continue;
            arena_stats(arena_obj(addr), i, &s);
        } catch (const ReadError &e) {
            if (unreadable == nullptr)
                throw;
            unreadable->push_back(format("arena %u: ", i) + e.what);
            continue;
        }
        t->narenas_used++;
        t->allocated += s.allocated_small + s.allocated_large;
        t->active += s.active;
        t->resident += s.resident;
        t->mapped += s.mapped;
        t->retained += s.retained;
        t->dirty += s.dirty;
        t->nchunks += s.nchunks;
        t->nmalloc_small += s.nmalloc_small;
        t->nmalloc_large += s.nmalloc_large;
        t->nmalloc += s.nmalloc_small + s.nmalloc_large;
        t->nfree += s.ndalloc_small + s.ndalloc_large;
    }
}

void aa_walker::add_huge_totals(aa_totals *t) {
    Obj hs = obj(d.huge_stats.addr.u64, d.huge_stats_layout.size);
    t->huge_nmalloc = hs.get(d.huge_stats_layout.nmalloc);
    t->huge_ndalloc = hs.get(d.huge_stats_layout.ndalloc);
    t->huge_allocated = hs.get(d.huge_stats_layout.allocated);
    t->huge_mapped = hs.get(d.huge_stats_layout.mapped);
    t->huge_current = t->huge_nmalloc - t->huge_ndalloc;
    t->huge_cached = var(d.huge_cached);
    t->allocated += t->huge_allocated;
    t->active += t->huge_allocated;
    // Cached mappings are not purged: their pages stay resident.
    t->resident += t->huge_allocated + t->huge_cached;
    t->mapped += t->huge_mapped + t->huge_cached;
    t->nmalloc += t->huge_nmalloc;
    t->nfree += t->huge_ndalloc;
}

// The caches of live threads: how many, and the blocks they hold.
void aa_walker::add_tcache_totals(aa_totals *t, std::vector<std::string> *unreadable) {
    try {
        for (const TCacheM &c : read_tcaches()) {
            if (c.exited)
                continue;
            t->tcaches++;
            for (unsigned b = 0; b < c.stacks.size(); b++) {
                t->tcache_regions += c.stacks[b].size();
                t->tcache_bytes += c.stacks[b].size() * cached_block_size(b);
            }
        }
    } catch (const ReadError &e) {
        if (unreadable == nullptr)
            throw;
        unreadable->push_back("thread caches: " + e.what);
    }
}
