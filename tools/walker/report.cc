// report.cc — the walker's reports: the statistics (text in the layout of
// the P report, or JSON in the layout of malloc_stats_print's "A"), what an
// address is, and the verify findings.
#include <cstdarg>
#include <cstdio>

#include "walker_internal.h"

using namespace walker;

namespace walker {

std::string format(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

std::string hex(uint64_t v) { return format("0x%llx", static_cast<unsigned long long>(v)); }

const char *state_text(uint64_t s) {
    switch (s) {
    case AA_STATE_NOT_HEAP: return "not in any arenalloc chunk";
    case AA_STATE_ALLOCATED: return "allocated";
    case AA_STATE_FREE: return "free";
    case AA_STATE_TCACHE: return "in a thread cache";
    case AA_STATE_HUGE: return "huge";
    case AA_STATE_HEADER: return "chunk header";
    case AA_STATE_FREE_PAGES: return "free pages";
    case AA_STATE_UNUSED: return "unused";
    }
    return "unknown";
}

}  // namespace walker

namespace {

// A report being written, printf-style.
struct Out {
    std::string s;
    Out &operator()(const char *fmt, ...) __attribute__((format(printf, 2, 3))) {
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        s += buf;
        return *this;
    }
};

using ull = unsigned long long;

std::string json_string(const std::string &v) {
    std::string o = "\"";
    for (char c : v) {
        if (c == '"' || c == '\\')
            o += '\\', o += c;
        else if (static_cast<unsigned char>(c) < 0x20)
            o += format("\\u%04x", c);
        else
            o += c;
    }
    return o + "\"";
}

// --- the statistics report --------------------------------------------------------

void json_head(Out &o, const aa_walker &w, const aa_totals &t,
               const std::vector<std::string> &unreadable) {
    const struct arenalloc_debug_descriptor &d = w.d;
    o("{\"arenalloc\": {\"version\": %s, \"schema\": 1,\n", json_string(d.package_version).c_str());
    o("\"config\": {\"page\": %llu, \"quantum\": %llu, \"chunk_size\": %llu, \"nbins\": %llu, "
      "\"small_max\": %llu, \"large_max\": %llu},\n",
      (ull)d.page_size, (ull)d.quantum, (ull)w.chunk_size, (ull)d.nbins, (ull)d.small_max,
      (ull)w.large_max);
    o("\"stats\": {\"allocated\": %llu, \"active\": %llu, \"metadata\": %llu, \"resident\": %llu, "
      "\"mapped\": %llu, \"retained\": %llu, \"dirty\": %llu, \"nchunks\": %llu, "
      "\"nmalloc\": %llu, \"nfree\": %llu, \"narenas\": %llu, \"narenas_used\": %llu, "
      "\"nthreads_seen\": %llu,\n",
      (ull)t.allocated, (ull)t.active, (ull)t.metadata, (ull)t.resident, (ull)t.mapped,
      (ull)t.retained, (ull)t.dirty, (ull)t.nchunks, (ull)t.nmalloc, (ull)t.nfree,
      (ull)t.narenas, (ull)t.narenas_used, (ull)t.nthreads_seen);
    o("\"huge\": {\"nmalloc\": %llu, \"ndalloc\": %llu, \"current\": %llu, \"allocated\": %llu, "
      "\"mapped\": %llu, \"cached\": %llu}},\n",
      (ull)t.huge_nmalloc, (ull)t.huge_ndalloc, (ull)t.huge_current, (ull)t.huge_allocated,
      (ull)t.huge_mapped, (ull)t.huge_cached);
    o("\"walker\": {\"huge_cached\": %llu, \"tcaches\": %llu, \"tcache_regions\": %llu, "
      "\"tcache_bytes\": %llu, \"unreadable\": [",
      (ull)t.huge_cached, (ull)t.tcaches, (ull)t.tcache_regions, (ull)t.tcache_bytes);
    for (size_t i = 0; i < unreadable.size(); i++)
        o("%s%s", i ? ", " : "", json_string(unreadable[i]).c_str());
    o("]},\n\"arenas\": [");
}

void text_head(Out &o, const aa_walker &w, const aa_totals &t,
               const std::vector<std::string> &unreadable) {
    const struct arenalloc_debug_descriptor &d = w.d;
    o("___ Begin arenalloc statistics (read from outside) ___\n");
    o("Version: arenalloc %s, debug descriptor %u\n", d.package_version, d.version);
    o("Chunk %llu (2^%llu), arenas %llu, page: %llu, quantum: %llu, small classes: %llu "
      "(8..%llu), large up to %llu\n",
      (ull)w.chunk_size, (ull)w.lg_chunk, (ull)w.narenas, (ull)d.page_size, (ull)d.quantum,
      (ull)d.nbins, (ull)d.small_max, (ull)w.large_max);
    if (!w.initialized)
        o("The allocator has not been initialized: the heap is empty.\n");
    o("Allocated: %llu, active: %llu, metadata: %llu, resident: %llu\n", (ull)t.allocated,
      (ull)t.active, (ull)t.metadata, (ull)t.resident);
    o("Mapped: %llu, retained: %llu, dirty: %llu, chunks: %llu\n", (ull)t.mapped,
      (ull)t.retained, (ull)t.dirty, (ull)t.nchunks);
    o("Requests: %llu allocations, %llu frees; arenas %llu used of %llu, threads seen %llu\n",
      (ull)t.nmalloc, (ull)t.nfree, (ull)t.narenas_used, (ull)t.narenas, (ull)t.nthreads_seen);
    o("Huge: %llu live, %llu bytes (%llu mapped); %llu allocated, %llu freed; %llu bytes "
      "cached\n",
      (ull)t.huge_current, (ull)t.huge_allocated, (ull)t.huge_mapped, (ull)t.huge_nmalloc,
      (ull)t.huge_ndalloc, (ull)t.huge_cached);
    o("Thread caches: %llu in use, holding %llu free regions (%llu bytes)\n", (ull)t.tcaches,
      (ull)t.tcache_regions, (ull)t.tcache_bytes);
    for (const std::string &u : unreadable)
        o("UNREADABLE: %s\n", u.c_str());
}

void json_arena(Out &o, aa_walker &w, const Obj &a, const aa_arena_stats &s, bool first) {
    o("%s{\"index\": %u, \"nthreads\": %llu, \"mapped\": %llu, \"retained\": %llu, "
      "\"active\": %llu, \"dirty\": %llu, \"resident\": %llu, \"npurge\": %llu, "
      "\"nmadvise\": %llu, \"purged_pages\": %llu, \"lock_acquired\": %llu, "
      "\"lock_contended\": %llu,\n",
      first ? "" : ",\n", static_cast<unsigned>(s.index), (ull)s.nthreads, (ull)s.mapped,
      (ull)s.retained, (ull)s.active, (ull)s.dirty, (ull)s.resident, (ull)s.npurge_passes,
      (ull)s.nmadvise, (ull)s.npurged_pages, (ull)s.lock_acquired, (ull)s.lock_contended);
    o("\"small\": {\"allocated\": %llu, \"nmalloc\": %llu, \"ndalloc\": %llu}, "
      "\"large\": {\"allocated\": %llu, \"nmalloc\": %llu, \"ndalloc\": %llu},\n"
      "\"bins\": [",
      (ull)s.allocated_small, (ull)s.nmalloc_small, (ull)s.ndalloc_small,
      (ull)s.allocated_large, (ull)s.nmalloc_large, (ull)s.ndalloc_large);
    for (unsigned b = 0; b < w.d.nbins; b++) {
        aa_bin_stats bs;
        w.bin_stats(a, b, &bs);
        o("%s{\"size\": %llu, \"nregs\": %llu, \"run_size\": %llu, \"nmalloc\": %llu, "
          "\"ndalloc\": %llu, \"nrequests\": %llu, \"curregs\": %llu, \"curruns\": %llu, "
          "\"nruns\": %llu, \"nfills\": %llu, \"nflushes\": %llu}",
          b ? ",\n" : "", (ull)bs.region_size, (ull)bs.nregs, (ull)bs.run_size,
          (ull)bs.nmalloc, (ull)bs.ndalloc, (ull)bs.nrequests, (ull)bs.curregs,
          (ull)bs.curruns, (ull)bs.nruns, (ull)bs.nfills, (ull)bs.nflushes);
    }
    o("],\n\"lextents\": [");
    for (unsigned l = 0; l < w.nlarge; l++) {
        aa_large_stats ls;
        w.large_stats(a, l, &ls);
        o("%s{\"size\": %llu, \"nmalloc\": %llu, \"ndalloc\": %llu, \"curlextents\": %llu}",
          l ? ",\n" : "", (ull)ls.size, (ull)ls.nmalloc, (ull)ls.ndalloc, (ull)ls.curruns);
    }
    o("]}");
}

void text_bins(Out &o, aa_walker &w, const Obj &a) {
    o("  bin   size regs pgs    nmalloc    ndalloc  nrequests  curregs curruns   nruns"
      "   fills flushes util\n");
    for (unsigned b = 0; b < w.d.nbins; b++) {
        aa_bin_stats bs;
        w.bin_stats(a, b, &bs);
        if (bs.nmalloc == 0 && bs.nrequests == 0)
            continue;
        uint64_t capacity = bs.curruns * bs.nregs;
        o("%5u%7llu%5llu%4llu%11llu%11llu%11llu%9llu%8llu%8llu%8llu%8llu%4llu%%\n", b,
          (ull)bs.region_size, (ull)bs.nregs, (ull)(bs.run_size / w.d.page_size),
          (ull)bs.nmalloc, (ull)bs.ndalloc, (ull)bs.nrequests, (ull)bs.curregs,
          (ull)bs.curruns, (ull)bs.nruns, (ull)bs.nfills, (ull)bs.nflushes,
          (ull)(capacity == 0 ? 0 : bs.curregs * 100 / capacity));
    }
}

void text_large(Out &o, aa_walker &w, const Obj &a) {
    o("  large class      nmalloc    ndalloc    current\n");
    for (unsigned l = 0; l < w.nlarge; l++) {
        aa_large_stats ls;
        w.large_stats(a, l, &ls);
        if (ls.nmalloc == 0)
            continue;
        o("%13llu%13llu%11llu%11llu\n", (ull)ls.size, (ull)ls.nmalloc, (ull)ls.ndalloc,
          (ull)ls.curruns);
    }
}

void text_arena(Out &o, aa_walker &w, const Obj &a, const aa_arena_stats &s, int flags) {
    o("arena %u: threads %llu, mapped %llu, retained %llu, active %llu, dirty %llu, resident "
      "%llu\n",
      static_cast<unsigned>(s.index), (ull)s.nthreads, (ull)s.mapped, (ull)s.retained,
      (ull)s.active, (ull)s.dirty, (ull)s.resident);
    if (s.lock_held)
        o("  (its lock is held: the target stopped inside the allocator, so these figures "
          "may be mid-update)\n");
    o("  purging: %llu passes, %llu madvise calls, %llu pages; lock: %llu acquired, %llu "
      "contended\n",
      (ull)s.npurge_passes, (ull)s.nmadvise, (ull)s.npurged_pages, (ull)s.lock_acquired,
      (ull)s.lock_contended);
    o("              allocated      nmalloc      ndalloc\n");
    o("  small: %14llu%13llu%13llu\n", (ull)s.allocated_small, (ull)s.nmalloc_small,
      (ull)s.ndalloc_small);
    o("  large: %14llu%13llu%13llu\n", (ull)s.allocated_large, (ull)s.nmalloc_large,
      (ull)s.ndalloc_large);
    if ((flags & AA_REPORT_NO_BINS) == 0)
        text_bins(o, w, a);
    if ((flags & AA_REPORT_NO_LARGE) == 0)
        text_large(o, w, a);
}

// --- what an address is ------------------------------------------------------------

void json_find(Out &o, const aa_find_result &r) {
    o("{\"address\": %llu, \"state\": %s, \"chunk\": %llu, \"arena\": %lld, \"run\": %llu, "
      "\"size_class\": %lld, \"size\": %llu, \"region_index\": %llu, \"region_start\": %llu, "
      "\"offset\": %llu, \"tcache\": %llu, \"page_map_entry\": %llu, "
      "\"run_descriptor\": %llu}\n",
      (ull)r.address, json_string(state_text(r.state)).c_str(), (ull)r.chunk,
      r.arena_index == UINT64_MAX ? -1LL : (long long)r.arena_index, (ull)r.run,
      r.size_class == UINT64_MAX ? -1LL : (long long)r.size_class, (ull)r.size,
      (ull)r.region_index, (ull)r.region_start, (ull)r.offset, (ull)r.tcache,
      (ull)r.page_map_entry, (ull)r.run_descriptor);
}

void text_find(Out &o, const aa_find_result &r, uint64_t nbins) {
    o("%s: ", hex(r.address).c_str());
    switch (r.state) {
    case AA_STATE_NOT_HEAP:
        o("not in any arenalloc chunk\n");
        break;
    case AA_STATE_HUGE:
    case AA_STATE_UNUSED:
        if (r.size_class == UINT64_MAX && r.region_start != 0) {
            if (r.state == AA_STATE_HUGE)
                o("huge block at %s, %llu bytes, offset %llu; huge (allocated)\n",
                  hex(r.region_start).c_str(), (ull)r.size, (ull)r.offset);
            else
                o("past the end of the huge block at %s (%llu bytes); unused\n",
                  hex(r.region_start).c_str(), (ull)r.size);
            break;
        }
        o("in the small run at %s (class %llu, %llu bytes) past its last region; unused\n",
          hex(r.run).c_str(), (ull)r.size_class, (ull)r.size);
        break;
    case AA_STATE_HEADER:
        o("in the header (page map) of the chunk at %s, arena %llu\n", hex(r.chunk).c_str(),
          (ull)r.arena_index);
        break;
    case AA_STATE_FREE_PAGES:
        o("in free pages of the chunk at %s (run at %s), arena %llu; free\n", hex(r.chunk).c_str(),
          hex(r.run).c_str(), (ull)r.arena_index);
        break;
    default:
        if (r.size_class >= nbins)
            o("large block at %s, class %llu (%llu bytes), offset %llu, chunk %s, arena %llu; %s\n",
              hex(r.region_start).c_str(), (ull)r.size_class, (ull)r.size, (ull)r.offset,
              hex(r.chunk).c_str(), (ull)r.arena_index, state_text(r.state));
        else
            o("small region %llu at %s, class %llu (%llu bytes), offset %llu, run %s, chunk %s, "
              "arena %llu; %s\n",
              (ull)r.region_index, hex(r.region_start).c_str(), (ull)r.size_class, (ull)r.size,
              (ull)r.offset, hex(r.run).c_str(), hex(r.chunk).c_str(), (ull)r.arena_index,
              state_text(r.state));
    }
}

}  // namespace

std::string aa_walker::report(int flags) {
    bool json = (flags & AA_REPORT_JSON) != 0;
    Out o;
    std::vector<std::string> unreadable;
    aa_totals t;
    totals(&t, &unreadable);
    if (json)
        json_head(o, *this, t, unreadable);
    else
        text_head(o, *this, t, unreadable);
    bool first = true;
    for (unsigned i = 0; initialized && i < narenas; i++) {
        Obj a;
        try {
            uint64_t addr = arena_addr(i);
            if (addr == 0)
                continue;
            a = arena_obj(addr);
        } catch (const ReadError &) {
            continue;  // listed as unreadable above
        }
        aa_arena_stats s;
        arena_stats(a, i, &s);
        if (json)
            json_arena(o, *this, a, s, first);
        else
            text_arena(o, *this, a, s, flags);
        first = false;
    }
    if (json)
        o("]}}\n");
    else
        o("--- End arenalloc statistics ---\n");
    return o.s;
}

std::string aa_walker::find_report(uint64_t addr, int flags) {
    aa_find_result r;
    find(addr, &r);
    Out o;
    if (flags & AA_REPORT_JSON)
        json_find(o, r);
    else
        text_find(o, r, d.nbins);
    return o.s;
}

std::string walker::verify_report(const std::vector<std::string> &f, int flags) {
    Out o;
    if (flags & AA_REPORT_JSON) {
        o("{\"ok\": %s, \"findings\": [", f.empty() ? "true" : "false");
        for (size_t i = 0; i < f.size(); i++)
            o("%s%s", i ? ", " : "", json_string(f[i]).c_str());
        o("]}\n");
    } else {
        for (const std::string &s : f)
            o("%s\n", s.c_str());
        if (f.empty())
            o("heap OK\n");
        else
            o("heap CORRUPT: %zu problem%s\n", f.size(), f.size() == 1 ? "" : "s");
    }
    return o.s;
}
