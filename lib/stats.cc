// stats.cc — snapshots of the counters and the malloc_stats_print report.
#include "stats.h"

#include "base.h"
#include "chunk.h"
#include "config.h"
#include "huge.h"
#include "init.h"
#include "options.h"
#include "platform.h"
#include "stats_emitter.h"
#include "stats_jemalloc.h"
#include "tcache.h"
#include "thread_state.h"
#include "util.h"

namespace arenalloc {

std::atomic<uint64_t> g_zero_reallocs{0};

void stats_merge_own_cache() {
    TCache *tc = tls_thread_state.tcache;
    if (tc != &g_tcache_none)
        tcache_merge_counts(tc);
}

bool stats_arena(unsigned i, ArenaSnapshot *out) {
    if (!ensure_initialized() || i >= g_narenas)
        return false;
    Arena *a = arena_peek(i);
    if (a == nullptr)
        return false;
    MutexGuard guard(a->mutex);
    arena_drain_remote_locked(a);  // counted as the allocated bytes they are not
    out->index = i;
    out->nthreads = a->nthreads.load(std::memory_order_relaxed);
    out->mapped = a->stats.nchunks * g_chunk.chunk_size;
    out->retained = uint64_t{a->nempty_chunks} * g_chunk.chunk_size;
    out->active = a->nactive << kLgPage;
    out->dirty = a->ndirty << kLgPage;
    out->resident = (a->nactive + a->ndirty + a->stats.nchunks * g_chunk.header_pages) << kLgPage;
    out->allocated_small = a->stats.allocated_small;
    out->allocated_large = a->stats.allocated_large;
    out->nmalloc_small = a->stats.nmalloc_small;
    out->ndalloc_small = a->stats.ndalloc_small;
    out->nmalloc_large = a->stats.nmalloc_large;
    out->ndalloc_large = a->stats.ndalloc_large;
    out->npurge_passes = a->stats.npurge_passes;
    out->nmadvise = a->stats.nmadvise;
    out->npurged_pages = a->stats.npurged_pages;
    out->lock_acquired = a->mutex.nacquired_;
    out->lock_contended = a->mutex.ncontended_;
    for (unsigned b = 0; b < kNumBins; b++) {
        const BinInfo &info = bin_info(b);
        const Bin &bin = a->bins[b];
        BinSnapshot &s = out->bins[b];
        s.region_size = info.region_size;
        s.nregs = info.nregs;
        s.run_size = uint64_t{info.run_pages} << kLgPage;
        s.nmalloc = bin.nmalloc;
        s.ndalloc = bin.ndalloc;
        s.nrequests = bin.nrequests;
        s.curregs = bin.nmalloc - bin.ndalloc;
        s.curruns = bin.curruns;
        s.nruns = bin.nruns;
        s.nfills = bin.nfills;
        s.nflushes = bin.nflushes;
        s.nreslabs = bin.nreslabs;
    }
    out->nlarge = size_to_class_formula(g_chunk.large_max) - kNumBins + 1;
    for (unsigned l = 0; l < kNumLargeClasses; l++) {
        LargeSnapshot &s = out->large[l];
        s.size = class_to_size(kNumBins + l);
        s.nmalloc = a->large[l].nmalloc;
        s.ndalloc = a->large[l].ndalloc;
        s.curruns = a->large[l].curruns;
    }
    out->uptime_ms = platform_now_ms() - a->created_ms;
    out->decay_ms = decay_ms_as_given(a->decay_ms);
    return true;
}

void stats_merge_arena(ArenaSnapshot *to, const ArenaSnapshot &from) {
    if (from.index == 0)  // jemalloc's merged uptime: since initialization
        to->uptime_ms = from.uptime_ms;
    to->nthreads += from.nthreads;
    to->mapped += from.mapped;
    to->retained += from.retained;
    to->active += from.active;
    to->dirty += from.dirty;
    to->resident += from.resident;
    to->allocated_small += from.allocated_small;
    to->allocated_large += from.allocated_large;
    to->nmalloc_small += from.nmalloc_small;
    to->ndalloc_small += from.ndalloc_small;
    to->nmalloc_large += from.nmalloc_large;
    to->ndalloc_large += from.ndalloc_large;
    to->npurge_passes += from.npurge_passes;
    to->nmadvise += from.nmadvise;
    to->npurged_pages += from.npurged_pages;
    to->lock_acquired += from.lock_acquired;
    to->lock_contended += from.lock_contended;
    for (unsigned b = 0; b < kNumBins; b++) {
        BinSnapshot &t = to->bins[b];
        const BinSnapshot &f = from.bins[b];
        t.region_size = f.region_size;
        t.nregs = f.nregs;
        t.run_size = f.run_size;
        t.nmalloc += f.nmalloc;
        t.ndalloc += f.ndalloc;
        t.nrequests += f.nrequests;
        t.curregs += f.curregs;
        t.curruns += f.curruns;
        t.nruns += f.nruns;
        t.nfills += f.nfills;
        t.nflushes += f.nflushes;
        t.nreslabs += f.nreslabs;
    }
    to->nlarge = from.nlarge;
    for (unsigned l = 0; l < kNumLargeClasses; l++) {
        LargeSnapshot &t = to->large[l];
        const LargeSnapshot &f = from.large[l];
        t.size = f.size;
        t.nmalloc += f.nmalloc;
        t.ndalloc += f.ndalloc;
        t.curruns += f.curruns;
    }
}

namespace {

// Snapshots are too big for a small thread stack and the report must not
// allocate, so each user has static scratch space under a lock.  Order:
// the print lock, then the heap lock, then arena locks.
Mutex g_print_mutex;
ArenaSnapshot g_print_scratch;
ArenaSnapshot g_print_merged;
Mutex g_heap_mutex;
ArenaSnapshot g_heap_scratch;

}  // namespace

void stats_prefork() {
    g_print_mutex.lock();
    g_heap_mutex.lock();
}

void stats_postfork_parent() {
    g_heap_mutex.unlock();
    g_print_mutex.unlock();
}

void stats_postfork_child() {
    g_heap_mutex.reinit_in_child();
    g_print_mutex.reinit_in_child();
}

bool stats_arena_free(unsigned i, ArenaFreeSummary *out) {
    MutexGuard guard(g_print_mutex);
    ArenaSnapshot &a = g_print_scratch;
    if (!stats_arena(i, &a))
        return false;
    *out = ArenaFreeSummary{};
    out->mapped = a.mapped;
    out->allocated = a.allocated_small + a.allocated_large;
    for (unsigned b = 0; b < kNumBins; b++) {
        uint64_t n = a.bins[b].curruns * a.bins[b].nregs - a.bins[b].curregs;
        out->bin_free[b] = n;
        out->free_regions += n;
        out->free_region_bytes += n * a.bins[b].region_size;
    }
    return true;
}

bool stats_heap(HeapSnapshot *out) {
    *out = HeapSnapshot{};
    if (!ensure_initialized())
        return false;
    stats_merge_own_cache();
    out->narenas = g_narenas;
    MutexGuard guard(g_heap_mutex);
    ArenaSnapshot &scratch = g_heap_scratch;
    for (unsigned i = 0; i < g_narenas; i++) {
        if (!stats_arena(i, &scratch))
            continue;
        out->narenas_used++;
        out->allocated += scratch.allocated_small + scratch.allocated_large;
        out->active += scratch.active;
        out->resident += scratch.resident;
        out->mapped += scratch.mapped;
        out->retained += scratch.retained;
        out->dirty += scratch.dirty;
        out->nchunks += scratch.mapped / g_chunk.chunk_size;
        out->nmalloc_small += scratch.nmalloc_small;
        out->nmalloc_large += scratch.nmalloc_large;
        out->nmalloc += scratch.nmalloc_small + scratch.nmalloc_large;
        out->nfree += scratch.ndalloc_small + scratch.ndalloc_large;
    }
    HugeStats huge;
    size_t huge_cached = 0;
    huge_stats(&huge, &huge_cached);
    out->huge_nmalloc = huge.nmalloc;
    out->huge_ndalloc = huge.ndalloc;
    out->huge_allocated = huge.allocated;
    out->huge_mapped = huge.mapped;
    out->huge_cur = huge.nmalloc - huge.ndalloc;
    out->huge_cached = huge_cached;
    out->allocated += huge.allocated;
    out->active += huge.allocated;
    // Cached mappings are not purged: their pages stay resident.
    out->resident += huge.allocated + huge_cached;
    out->mapped += huge.mapped + huge_cached;
    out->nmalloc += huge.nmalloc;
    out->nfree += huge.ndalloc;
    out->metadata = base_mapped();
    out->mapped += out->metadata;
    out->resident += out->metadata;
    out->nthreads_seen = thread_state_nthreads_seen();
    return true;
}

namespace {

// Bin utilization in percent of the regions of its runs.
uint64_t util_percent(const BinSnapshot &b) {
    uint64_t capacity = b.curruns * b.nregs;
    return capacity == 0 ? 0 : b.curregs * 100 / capacity;
}

void print_general_text(Emitter &e) {
    char letters[32];
    options_in_force(letters, sizeof(letters));
    e.line.str("Version: arenalloc " PACKAGE_VERSION);
    e.end();
    e.line.str("Options: ").str(letters).str(", chunk ").dec(g_chunk.chunk_size)
        .str(" (2^").dec(g_chunk.lg_chunk).str("), arenas ").dec(g_narenas);
    e.end();
    int lg = g_options.lg_dirty_ratio;
    e.line.str("Purging: dirty allowance ");
    if (lg == 0)
        e.line.str("1");
    else
        e.line.str(lg < 0 ? "2^" : "2^-").dec(static_cast<uint64_t>(lg < 0 ? -lg : lg));
    e.line.str(" x peak active, tcache ").str(g_tcache_total_slots != 0 ? "on" : "off")
        .str(" (GC every ").dec(static_cast<uint64_t>(g_tcache_gc_interval)).str(")");
    e.end();
    e.line.str("CPUs: ").dec(platform_ncpus()).str(", page: ").dec(kPage)
        .str(", quantum: ").dec(kQuantum).str(", small classes: ").dec(kNumBins)
        .str(" (8..").dec(kSmallMax).str("), large up to ").dec(g_chunk.large_max);
    e.end();
}

void print_totals_text(Emitter &e, const HeapSnapshot &h) {
    e.line.str("Allocated: ").dec(h.allocated).str(", active: ").dec(h.active)
        .str(", metadata: ").dec(h.metadata).str(", resident: ").dec(h.resident);
    e.end();
    e.line.str("Mapped: ").dec(h.mapped).str(", retained: ").dec(h.retained)
        .str(", dirty: ").dec(h.dirty).str(", chunks: ").dec(h.nchunks);
    e.end();
    e.line.str("Requests: ").dec(h.nmalloc).str(" allocations, ").dec(h.nfree)
        .str(" frees; arenas ").dec(h.narenas_used).str(" used of ").dec(h.narenas)
        .str(", threads seen ").dec(h.nthreads_seen);
    e.end();
    e.line.str("Huge: ").dec(h.huge_cur).str(" live, ").dec(h.huge_allocated)
        .str(" bytes (").dec(h.huge_mapped).str(" mapped); ").dec(h.huge_nmalloc)
        .str(" allocated, ").dec(h.huge_ndalloc).str(" freed; ").dec(h.huge_cached)
        .str(" bytes cached");
    e.end();
}

// One arena's section, or (merged) every arena's figures summed.
void print_arena_text(Emitter &e, const ArenaSnapshot &a, const char *opts, bool merged) {
    if (merged)
        e.line.str("merged");  // no longer than "arena 10"
    else
        e.line.str("arena ").dec(a.index);
    e.line.str(": threads ").dec(a.nthreads).str(", mapped ")
        .dec(a.mapped).str(", retained ").dec(a.retained).str(", active ").dec(a.active)
        .str(", dirty ").dec(a.dirty).str(", resident ").dec(a.resident);
    e.end();
    e.line.str("  purging: ").dec(a.npurge_passes).str(" passes, ").dec(a.nmadvise)
        .str(" madvise calls, ").dec(a.npurged_pages).str(" pages");
    if (!opts_has(opts, 'x'))
        e.line.str("; lock: ").dec(a.lock_acquired).str(" acquired, ").dec(a.lock_contended)
            .str(" contended");
    e.end();
    e.line.str("              allocated      nmalloc      ndalloc");
    e.end();
    e.line.str("  small: ").rdec(a.allocated_small, 14).rdec(a.nmalloc_small, 13)
        .rdec(a.ndalloc_small, 13);
    e.end();
    e.line.str("  large: ").rdec(a.allocated_large, 14).rdec(a.nmalloc_large, 13)
        .rdec(a.ndalloc_large, 13);
    e.end();
    if (!opts_has(opts, 'b')) {
        e.line.str("  bin   size regs pgs    nmalloc    ndalloc  nrequests  curregs curruns"
                   "   nruns   fills flushes util");
        e.end();
        for (unsigned b = 0; b < kNumBins; b++) {
            const BinSnapshot &s = a.bins[b];
            if (s.nmalloc == 0 && s.nrequests == 0)
                continue;
            e.line.rdec(b, 5).rdec(s.region_size, 7).rdec(s.nregs, 5)
                .rdec(s.run_size >> kLgPage, 4).rdec(s.nmalloc, 11).rdec(s.ndalloc, 11)
                .rdec(s.nrequests, 11).rdec(s.curregs, 9).rdec(s.curruns, 8)
                .rdec(s.nruns, 8).rdec(s.nfills, 8).rdec(s.nflushes, 8)
                .rdec(util_percent(s), 4).chr('%');
            e.end();
        }
    }
    if (!opts_has(opts, 'l')) {
        e.line.str("  large class      nmalloc    ndalloc    current");
        e.end();
        for (unsigned l = 0; l < a.nlarge; l++) {
            const LargeSnapshot &s = a.large[l];
            if (s.nmalloc == 0)
                continue;
            e.line.rdec(s.size, 13).rdec(s.nmalloc, 13).rdec(s.ndalloc, 11)
                .rdec(s.curruns, 11);
            e.end();
        }
    }
}

// ---- JSON ------------------------------------------------------------------

void jkey(Emitter &e, const char *key, uint64_t v, bool last = false) {
    e.line.chr('"').str(key).str("\": ").dec(v);
    if (!last)
        e.line.chr(',');
    e.flush();
}

void print_arena_json(Emitter &e, const ArenaSnapshot &a, const char *opts) {
    e.line.chr('{');
    jkey(e, "index", a.index);
    jkey(e, "nthreads", a.nthreads);
    jkey(e, "mapped", a.mapped);
    jkey(e, "retained", a.retained);
    jkey(e, "active", a.active);
    jkey(e, "dirty", a.dirty);
    jkey(e, "resident", a.resident);
    jkey(e, "npurge", a.npurge_passes);
    jkey(e, "nmadvise", a.nmadvise);
    jkey(e, "purged_pages", a.npurged_pages);
    jkey(e, "lock_acquired", a.lock_acquired);
    jkey(e, "lock_contended", a.lock_contended);
    e.line.str("\"small\": {");
    jkey(e, "allocated", a.allocated_small);
    jkey(e, "nmalloc", a.nmalloc_small);
    jkey(e, "ndalloc", a.ndalloc_small, true);
    e.line.str("}, \"large\": {");
    jkey(e, "allocated", a.allocated_large);
    jkey(e, "nmalloc", a.nmalloc_large);
    jkey(e, "ndalloc", a.ndalloc_large, true);
    e.line.str("}, \"bins\": [");
    e.flush();
    bool first = true;
    for (unsigned b = 0; b < kNumBins && !opts_has(opts, 'b'); b++) {
        const BinSnapshot &s = a.bins[b];
        e.line.str(first ? "{" : ", {");
        first = false;
        jkey(e, "size", s.region_size);
        jkey(e, "nregs", s.nregs);
        jkey(e, "run_size", s.run_size);
        jkey(e, "nmalloc", s.nmalloc);
        jkey(e, "ndalloc", s.ndalloc);
        jkey(e, "nrequests", s.nrequests);
        jkey(e, "curregs", s.curregs);
        jkey(e, "curruns", s.curruns);
        jkey(e, "nruns", s.nruns);
        jkey(e, "nfills", s.nfills);
        jkey(e, "nflushes", s.nflushes, true);
        e.line.chr('}');
        e.flush();
    }
    e.line.str("], \"lextents\": [");
    e.flush();
    first = true;
    for (unsigned l = 0; l < a.nlarge && !opts_has(opts, 'l'); l++) {
        const LargeSnapshot &s = a.large[l];
        e.line.str(first ? "{" : ", {");
        first = false;
        jkey(e, "size", s.size);
        jkey(e, "nmalloc", s.nmalloc);
        jkey(e, "ndalloc", s.ndalloc);
        jkey(e, "curlextents", s.curruns, true);
        e.line.chr('}');
        e.flush();
    }
    e.line.str("]}");
    e.flush();
}

void print_json(Emitter &e, const HeapSnapshot &h, const char *opts) {
    char letters[32];
    options_in_force(letters, sizeof(letters));
    e.line.str("{\"arenalloc\": {\"version\": \"" PACKAGE_VERSION "\", \"schema\": 1,");
    e.flush();
    if (!opts_has(opts, 'g')) {
        e.line.str("\"config\": {");
        jkey(e, "page", kPage);
        jkey(e, "quantum", kQuantum);
        jkey(e, "chunk_size", g_chunk.chunk_size);
        jkey(e, "nbins", kNumBins);
        jkey(e, "small_max", kSmallMax);
        jkey(e, "large_max", g_chunk.large_max);
        jkey(e, "ncpus", platform_ncpus(), true);
        e.line.str("}, \"opt\": {\"flags\": \"").str(letters).str("\",");
        jkey(e, "lg_chunk", g_chunk.lg_chunk);
        jkey(e, "narenas", g_narenas);
        e.line.str("\"lg_dirty_ratio\": ");
        if (g_options.lg_dirty_ratio < 0)
            e.line.chr('-');
        e.line.dec(static_cast<uint64_t>(g_options.lg_dirty_ratio < 0 ? -g_options.lg_dirty_ratio
                                                                       : g_options.lg_dirty_ratio))
            .chr(',');
        jkey(e, "tcache_gc_interval", static_cast<uint64_t>(g_tcache_gc_interval));
        jkey(e, "tcache_slots", g_tcache_total_slots, true);
        e.line.str("},");
        e.flush();
    }
    e.line.str("\"stats\": {");
    jkey(e, "allocated", h.allocated);
    jkey(e, "active", h.active);
    jkey(e, "metadata", h.metadata);
    jkey(e, "resident", h.resident);
    jkey(e, "mapped", h.mapped);
    jkey(e, "retained", h.retained);
    jkey(e, "dirty", h.dirty);
    jkey(e, "nchunks", h.nchunks);
    jkey(e, "nmalloc", h.nmalloc);
    jkey(e, "nfree", h.nfree);
    jkey(e, "narenas", h.narenas);
    jkey(e, "narenas_used", h.narenas_used);
    jkey(e, "nthreads_seen", h.nthreads_seen);
    e.line.str("\"huge\": {");
    jkey(e, "nmalloc", h.huge_nmalloc);
    jkey(e, "ndalloc", h.huge_ndalloc);
    jkey(e, "current", h.huge_cur);
    jkey(e, "allocated", h.huge_allocated);
    jkey(e, "mapped", h.huge_mapped);
    jkey(e, "cached", h.huge_cached, true);
    e.line.str("}}, \"arenas\": [");
    e.flush();
    if (!opts_has(opts, 'a')) {
        ArenaSnapshot &scratch = g_print_scratch;  // the caller holds g_print_mutex
        bool first = true;
        for (unsigned i = 0; i < g_narenas; i++) {
            if (!stats_arena(i, &scratch))
                continue;
            if (!first) {
                e.line.str(", ");
                e.flush();
            }
            first = false;
            print_arena_json(e, scratch, opts);
        }
    }
    e.line.str("]}}");
    e.end();
}

}  // namespace

void stats_print(void (*write_cb)(void *, const char *), void *cbopaque, const char *opts) {
    MutexGuard guard(g_print_mutex);
    Emitter e(write_cb, cbopaque);
    HeapSnapshot h;
    if (!stats_heap(&h))
        return;
    if (opts_has(opts, 'A')) {
        print_json(e, h, opts);
        return;
    }
    // jemalloc's rule: the merged figures when they say more than the one
    // arena's section would, or stand in for the sections left out.
    bool merged = !opts_has(opts, 'm') && (h.narenas_used > 1 || opts_has(opts, 'a'));
    if (merged) {
        g_print_merged = ArenaSnapshot{};
        for (unsigned i = 0; i < g_narenas; i++)
            if (stats_arena(i, &g_print_scratch))
                stats_merge_arena(&g_print_merged, g_print_scratch);
    }
    if (opts_has(opts, 'J')) {
        stats_print_jemalloc_json(e, h, merged ? &g_print_merged : nullptr, &g_print_scratch, opts);
        return;
    }
    e.line.str("___ Begin arenalloc statistics ___");
    e.end();
    if (!opts_has(opts, 'g'))
        print_general_text(e);
    if (!opts_has(opts, 't'))
        print_totals_text(e, h);
    if (merged)
        print_arena_text(e, g_print_merged, opts, true);
    if (!opts_has(opts, 'a')) {
        for (unsigned i = 0; i < g_narenas; i++)
            if (stats_arena(i, &g_print_scratch))
                print_arena_text(e, g_print_scratch, opts, false);
    }
    e.line.str("--- End arenalloc statistics ---");
    e.end();
}

}  // namespace arenalloc
