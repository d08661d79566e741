// walker.cc — the heap walker: reads an arenalloc heap through a read
// callback, guided only by the debug descriptor, and computes statistics,
// address lookups, a consistency check and reports.
#include "arenalloc_walker.h"

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "debug_descriptor.h"

namespace {

// A failed read of the target; caught at the C boundary.
struct ReadError {
    std::string what;
};

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

std::string hex(uint64_t v) { return format("0x%llx", static_cast<unsigned long long>(v)); }

// A little-endian unsigned integer of size bytes at p.
uint64_t load(const uint8_t *p, uint32_t size) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < size && i < 8; i++)
        v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
}

// Bytes of one structure read from the target.
struct Obj {
    uint64_t addr = 0;
    std::vector<uint8_t> b;
    uint64_t get(aa_debug_field f, size_t base = 0) const {
        if (base + f.offset + f.size > b.size())
            return 0;
        return load(b.data() + base + f.offset, f.size);
    }
    uint64_t get_at(size_t off, uint32_t size) const {
        if (off + size > b.size())
            return 0;
        return load(b.data() + off, size);
    }
};

struct RunM {
    uint64_t desc = 0, base = 0, chunk = 0;
    uint32_t first_page = 0, npages = 0, state = 0, size_class = 0;
    uint32_t region_size = 0, nregs = 0, nfree = 0, ndirty = 0;
    uint64_t next = 0, dirty_next = 0;
    std::vector<uint64_t> bitmap;
    bool is_free_region(uint32_t reg) const {
        return reg / 64 < bitmap.size() && ((bitmap[reg / 64] >> (reg % 64)) & 1) != 0;
    }
};

struct ChunkM {
    uint64_t addr = 0, magic = 0, arena = 0, next = 0, prev = 0;
    uint32_t npages = 0, header_pages = 0, nfree_pages = 0, from_sbrk = 0;
    std::vector<uint64_t> map;
    std::vector<RunM> runs;       // in address order
    std::vector<std::string> map_problems;  // page map entries that name no run
};

struct ArenaM {
    unsigned index = 0;
    Obj raw;
    std::vector<ChunkM> chunks;
    std::string chunk_list_problem;
};

struct HugeM {
    uint64_t desc, addr, usize, mapped, arena;
};

struct TCacheEntry {
    uint64_t tcache;
    unsigned bin;
};

struct TCacheM {
    uint64_t addr;
    bool exited;
    uint64_t arena;
    std::vector<std::vector<uint64_t>> stacks;  // per bin
    std::vector<uint32_t> max;
};

constexpr size_t kListLimit = size_t{1} << 22;  // bounds list walks on a corrupt heap

// A version 3 descriptor as first shipped: everything before the first
// appended field (version 4 changed what one TCacheBin field counts, not
// the descriptor).
constexpr size_t kVersion3Size = offsetof(struct arenalloc_debug_descriptor, tcache_nclasses);

}  // namespace

struct aa_walker {
    aa_read_fn read_fn;
    void *ctx;
    uint64_t desc_addr;
    struct arenalloc_debug_descriptor d;
    std::string error;

    // Fixed at open.
    bool initialized = false;
    uint64_t narenas = 0, arenas_table = 0;
    uint64_t lg_chunk = 0, chunk_size = 0, chunk_npages = 0, header_pages = 0, large_max = 0;
    std::vector<uint64_t> class_size;
    struct BinInfoM {
        uint32_t region_size, run_pages, nregs, reciprocal;
    };
    std::vector<BinInfoM> bin_info;
    unsigned nlarge = 0;
    uint64_t tcache_nclasses = 0;  // TCache::bins[] entries (small classes first)

    // --- reading ---------------------------------------------------------

    void read(uint64_t addr, void *buf, size_t len) {
        if (len == 0)
            return;
        if (read_fn(ctx, addr, buf, len) != 0)
            throw ReadError{format("cannot read %zu bytes at %s", len, hex(addr).c_str())};
    }
    uint64_t read_u(uint64_t addr, uint32_t size) {
        uint8_t buf[8] = {};
        read(addr, buf, size > 8 ? 8 : size);
        return load(buf, size);
    }
    uint64_t ptr(uint64_t addr) { return read_u(addr, 8); }
    Obj obj(uint64_t addr, size_t size) {
        Obj o;
        o.addr = addr;
        o.b.resize(size);
        read(addr, o.b.data(), size);
        return o;
    }
    uint64_t var(const aa_debug_var &v) { return read_u(v.addr.u64, static_cast<uint32_t>(v.size)); }

    // --- set-up ----------------------------------------------------------

    bool open() {
        uint8_t head[24];
        if (read_fn(ctx, desc_addr, head, sizeof(head)) != 0) {
            error = format("cannot read the arenalloc debug descriptor at %s", hex(desc_addr).c_str());
            return false;
        }
        uint64_t magic = load(head, 8);
        uint32_t version = static_cast<uint32_t>(load(head + 8, 4));
        uint32_t size = static_cast<uint32_t>(load(head + 12, 4));
        uint32_t order = static_cast<uint32_t>(load(head + 16, 4));
        uint32_t psize = static_cast<uint32_t>(load(head + 20, 4));
        if (magic != ARENALLOC_DEBUG_MAGIC) {
            error = format("no arenalloc debug descriptor at %s (wrong magic: not arenalloc, or "
                           "not this version of its debug interface)", hex(desc_addr).c_str());
            return false;
        }
        if (order != ARENALLOC_DEBUG_BYTE_ORDER || psize != 8) {
            error = "the target is not a 64-bit little-endian arenalloc (unsupported)";
            return false;
        }
        // Version 3 differs only in what TCacheBin's last field counts,
        // which this walker does not read.
        if (version != ARENALLOC_DEBUG_VERSION && version != 3) {
            error = format("arenalloc debug descriptor version %u; this walker reads versions 3 and %u",
                           version, ARENALLOC_DEBUG_VERSION);
            return false;
        }
        // Fields appended to version 3 may be absent: the descriptor must
        // hold the rest, and an absent field takes its default below.
        if (size < kVersion3Size) {
            error = format("arenalloc debug descriptor too short (%u bytes, expected %zu)", size,
                           kVersion3Size);
            return false;
        }
        memset(&d, 0, sizeof(d));
        if (read_fn(ctx, desc_addr, &d, size < sizeof(d) ? size : sizeof(d)) != 0) {
            error = format("cannot read the arenalloc debug descriptor at %s", hex(desc_addr).c_str());
            return false;
        }
        d.package_version[sizeof(d.package_version) - 1] = '\0';
        // Without the field (a library from before large classes were
        // cached), a cache holds the small classes only.
        tcache_nclasses = size >= kVersion3Size + sizeof(d.tcache_nclasses) ? d.tcache_nclasses
                                                                             : d.nbins;
        if (tcache_nclasses < d.nbins || tcache_nclasses > d.nclasses) {
            error = format("arenalloc debug descriptor: %llu thread cache classes, of %llu "
                           "classes (%llu small)",
                           static_cast<unsigned long long>(tcache_nclasses),
                           static_cast<unsigned long long>(d.nclasses),
                           static_cast<unsigned long long>(d.nbins));
            return false;
        }
        try {
            initialized = (var(d.initialized) & 0xff) != 0;
            narenas = var(d.narenas);
            arenas_table = var(d.arenas);
            Obj geo = obj(d.chunk_geometry.addr.u64, d.chunk_geometry_layout.size);
            lg_chunk = geo.get(d.chunk_geometry_layout.lg_chunk);
            chunk_size = geo.get(d.chunk_geometry_layout.chunk_size);
            chunk_npages = geo.get(d.chunk_geometry_layout.npages);
            header_pages = geo.get(d.chunk_geometry_layout.header_pages);
            large_max = geo.get(d.chunk_geometry_layout.large_max);
            Obj table = obj(d.size_classes.addr.u64, d.size_class_table.size);
            for (uint64_t c = 0; c < d.nclasses; c++)
                class_size.push_back(table.get_at(d.size_class_table.size_.offset + c * 8, 8));
            for (uint64_t b = 0; b < d.nbins; b++) {
                size_t base = d.size_class_table.bin.offset + b * d.bin_info.size;
                bin_info.push_back({static_cast<uint32_t>(table.get(d.bin_info.region_size, base)),
                                    static_cast<uint32_t>(table.get(d.bin_info.run_pages, base)),
                                    static_cast<uint32_t>(table.get(d.bin_info.nregs, base)),
                                    static_cast<uint32_t>(table.get(d.bin_info.reciprocal, base))});
            }
        } catch (const ReadError &e) {
            error = "cannot read the allocator's globals: " + e.what;
            return false;
        }
        if (initialized && (chunk_size == 0 || (chunk_size & (chunk_size - 1)) != 0 ||
                            narenas == 0 || narenas > 65536 || arenas_table == 0)) {
            error = "the allocator's globals make no sense (chunk size " + std::to_string(chunk_size) +
                    ", " + std::to_string(narenas) + " arenas)";
            return false;
        }
        for (uint64_t c = d.nbins; c < class_size.size() && class_size[c] <= large_max; c++)
            nlarge++;
        return true;
    }

    // --- arenas, chunks, runs ----------------------------------------------

    // The arena in slot i, or 0.
    uint64_t arena_addr(unsigned i) {
        if (!initialized || i >= narenas)
            return 0;
        return ptr(arenas_table + uint64_t{i} * 8);
    }

    Obj arena_obj(uint64_t addr) { return obj(addr, d.arena.size); }

    uint64_t arena_stat(const Obj &a, aa_debug_field f) { return a.get(f, d.arena.stats.offset); }
    size_t bin_base(unsigned b) const { return d.arena.bins.offset + size_t{b} * d.bin.size; }
    size_t large_base(unsigned l) const { return d.arena.large.offset + size_t{l} * d.large.size; }

    RunM read_run(uint64_t desc) {
        Obj r = obj(desc, d.run.size);
        RunM m;
        m.desc = desc;
        m.base = r.get(d.run.base);
        m.chunk = r.get(d.run.chunk);
        m.npages = static_cast<uint32_t>(r.get(d.run.npages));
        m.state = static_cast<uint32_t>(r.get(d.run.state));
        m.size_class = static_cast<uint32_t>(r.get(d.run.size_class));
        m.region_size = static_cast<uint32_t>(r.get(d.run.region_size));
        m.nregs = static_cast<uint32_t>(r.get(d.run.nregs));
        m.nfree = static_cast<uint32_t>(r.get(d.run.nfree));
        m.ndirty = static_cast<uint32_t>(r.get(d.run.ndirty));
        m.next = r.get(d.run.next);
        m.dirty_next = r.get(d.run.dirty_next);
        for (uint64_t i = 0; i < d.bitmap_words; i++)
            m.bitmap.push_back(r.get_at(d.run.bitmap.offset + i * 8, 8));
        return m;
    }

    // Reads a chunk's header and page map, and the runs the map names.
    ChunkM read_chunk(uint64_t addr) {
        Obj h = obj(addr, d.chunk.size);
        ChunkM c;
        c.addr = addr;
        c.magic = h.get(d.chunk.magic);
        c.arena = h.get(d.chunk.arena);
        c.next = h.get(d.chunk.next);
        c.prev = h.get(d.chunk.prev);
        c.npages = static_cast<uint32_t>(h.get(d.chunk.npages));
        c.header_pages = static_cast<uint32_t>(h.get(d.chunk.header_pages));
        c.nfree_pages = static_cast<uint32_t>(h.get(d.chunk.nfree_pages));
        c.from_sbrk = static_cast<uint32_t>(h.get(d.chunk.from_sbrk));
        if (c.magic != d.chunk_magic)
            return c;  // not a chunk header: nothing below can be trusted
        // The map's length comes from the geometry, not from the header.
        std::vector<uint8_t> raw(chunk_npages * d.chunk.page_map_entry_size);
        read(addr + d.chunk.map.offset, raw.data(), raw.size());
        for (uint64_t p = 0; p < chunk_npages; p++)
            c.map.push_back(load(raw.data() + p * d.chunk.page_map_entry_size,
                                 static_cast<uint32_t>(d.chunk.page_map_entry_size)));
        uint32_t page = static_cast<uint32_t>(header_pages);
        while (page < chunk_npages) {
            uint64_t e = c.map[page];
            uint64_t tag = e & d.page_map.tag_mask;
            uint64_t desc = e & ~d.page_map.flag_mask;
            if (tag == d.page_map.tag_header || desc == 0) {
                c.map_problems.push_back(format("page %u: entry %s names no run", page,
                                                hex(e).c_str()));
                page++;
                continue;
            }
            RunM r = read_run(desc);
            r.first_page = page;
            if (r.npages == 0 || r.npages > chunk_npages - page) {
                c.map_problems.push_back(format("page %u: run %s has %u pages", page,
                                                hex(desc).c_str(), r.npages));
                page++;
                continue;
            }
            page += r.npages;
            c.runs.push_back(std::move(r));
        }
        return c;
    }

    ArenaM read_arena(unsigned i, uint64_t addr) {
        ArenaM a;
        a.index = i;
        a.raw = arena_obj(addr);
        std::set<uint64_t> seen;
        uint64_t c = a.raw.get(d.arena.chunks);
        while (c != 0) {
            if (!seen.insert(c).second || seen.size() > kListLimit) {
                a.chunk_list_problem = "chunk list loops at " + hex(c);
                break;
            }
            a.chunks.push_back(read_chunk(c));
            if (a.chunks.back().magic != d.chunk_magic)
                break;
            c = a.chunks.back().next;
        }
        return a;
    }

    // Every created arena, fully read.
    std::vector<ArenaM> read_arenas() {
        std::vector<ArenaM> out;
        for (unsigned i = 0; i < narenas; i++) {
            uint64_t a = arena_addr(i);
            if (a != 0)
                out.push_back(read_arena(i, a));
        }
        return out;
    }

    std::vector<HugeM> read_huge() {
        std::vector<HugeM> out;
        if (!initialized)
            return out;
        uint64_t h = var(d.huge_live);
        std::set<uint64_t> seen;
        while (h != 0 && seen.insert(h).second && seen.size() < kListLimit) {
            Obj o = obj(h, d.huge.size);
            out.push_back({h, o.get(d.huge.addr), o.get(d.huge.usize), o.get(d.huge.mapped),
                           o.get(d.huge.arena)});
            h = o.get(d.huge.next);
        }
        return out;
    }

    std::vector<TCacheM> read_tcaches() {
        std::vector<TCacheM> out;
        if (!initialized)
            return out;
        std::set<uint64_t> exited;
        for (uint64_t t = var(d.tcache_free); t != 0 && exited.insert(t).second &&
                                               exited.size() < kListLimit;)
            t = ptr(t + d.tcache.next_free.offset);
        std::set<uint64_t> seen;
        for (uint64_t t = var(d.tcache_all); t != 0 && seen.insert(t).second &&
                                              seen.size() < kListLimit;) {
            Obj o = obj(t, d.tcache.size);
            TCacheM m;
            m.addr = t;
            m.exited = exited.count(t) != 0;
            m.arena = o.get(d.tcache.arena);
            for (unsigned b = 0; b < tcache_nclasses; b++) {
                size_t base = d.tcache.bins.offset + size_t{b} * d.tcache_bin.size;
                // The stack is [stack, top) of [stack, limit); a top out of
                // that range (a corrupt cache) reads as empty or full.
                uint64_t top = o.get(d.tcache_bin.top, base);
                uint64_t stack = o.get(d.tcache_bin.stack, base);
                uint64_t limit = o.get(d.tcache_bin.limit, base);
                uint32_t max = limit >= stack ? static_cast<uint32_t>((limit - stack) / 8) : 0;
                uint32_t count = top >= stack ? static_cast<uint32_t>((top - stack) / 8) : 0;
                std::vector<uint64_t> entries;
                if (count > max)
                    count = max;
                if (count != 0) {
                    std::vector<uint8_t> raw(size_t{count} * 8);
                    read(stack, raw.data(), raw.size());
                    for (uint32_t k = 0; k < count; k++)
                        entries.push_back(load(raw.data() + k * 8, 8));
                }
                m.stacks.push_back(std::move(entries));
                m.max.push_back(max);
            }
            out.push_back(std::move(m));
            t = o.get(d.tcache.next_all);
        }
        return out;
    }

    std::map<uint64_t, TCacheEntry> tcache_index(const std::vector<TCacheM> &caches) {
        std::map<uint64_t, TCacheEntry> idx;
        for (const TCacheM &t : caches)
            for (unsigned b = 0; b < t.stacks.size(); b++)
                for (uint64_t p : t.stacks[b])
                    idx.emplace(p, TCacheEntry{t.addr, b});
        return idx;
    }

    // The bytes of one cached block of class b: a small region, or a whole
    // large run.
    uint64_t cached_block_size(unsigned b) const {
        return b < d.nbins ? bin_info[b].region_size : class_size[b];
    }

    // The cache whose class cls stack holds the block at start, or 0.
    uint64_t tcache_holding(uint64_t cls, uint64_t start) {
        for (const TCacheM &t : read_tcaches()) {
            if (cls >= t.stacks.size())
                continue;
            for (uint64_t p : t.stacks[cls])
                if (p == start)
                    return t.addr;
        }
        return 0;
    }

    // Registry: the tagged owner of addr's granule, or 0.
    uint64_t registry_lookup(uint64_t addr) {
        if (!initialized || (addr >> d.registry.address_bits) != 0)
            return 0;
        uint64_t key = addr >> d.registry.lg_granule;
        uint64_t leaf = ptr(d.registry.root.addr.u64 + (key >> d.registry.leaf_bits) * 8);
        if (leaf == 0)
            return 0;
        return ptr(leaf + (key & ((uint64_t{1} << d.registry.leaf_bits) - 1)) * 8);
    }

    // --- statistics -----------------------------------------------------------

    void arena_stats(const Obj &a, unsigned index, aa_arena_stats *s) {
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

    void bin_stats(const Obj &a, unsigned b, aa_bin_stats *s) {
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

    void large_stats(const Obj &a, unsigned l, aa_large_stats *s) {
        size_t base = large_base(l);
        *s = aa_large_stats{};
        s->lclass = l;
        s->size = class_size[d.nbins + l];
        s->nmalloc = a.get(d.large.nmalloc, base);
        s->ndalloc = a.get(d.large.ndalloc, base);
        s->curruns = a.get(d.large.curruns, base);
    }

    // Totals; arenas that cannot be read are listed in unreadable.
    void totals(aa_totals *t, std::vector<std::string> *unreadable) {
        *t = aa_totals{};
        t->narenas = narenas;
        if (!initialized)
            return;
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
        t->metadata = var(d.base_mapped);
        t->mapped += t->metadata;
        t->resident += t->metadata;
        t->nthreads_seen = var(d.threads_seen);
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

    // --- find -------------------------------------------------------------------

    void find(uint64_t addr, aa_find_result *r) {
        *r = aa_find_result{};
        r->address = addr;
        r->arena_index = UINT64_MAX;
        r->size_class = UINT64_MAX;
        uint64_t owner = registry_lookup(addr);
        if (owner == 0)
            return;  // AA_STATE_NOT_HEAP
        uint64_t tag = owner & d.registry.tag_mask;
        uint64_t target = owner & ~d.registry.tag_mask;
        if (tag == d.registry.tag_huge) {
            Obj h = obj(target, d.huge.size);
            uint64_t start = h.get(d.huge.addr), usize = h.get(d.huge.usize);
            r->chunk = start;
            r->region_start = start;
            r->size = usize;
            r->offset = addr - start;
            r->state = addr - start < usize ? AA_STATE_HUGE : AA_STATE_UNUSED;
            r->arena_index = arena_index_of(h.get(d.huge.arena));
            return;
        }
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

    uint64_t arena_index_of(uint64_t arena) {
        if (arena == 0)
            return UINT64_MAX;
        Obj a = obj(arena, d.arena.size);
        return a.get(d.arena.index);
    }

    // --- verify -----------------------------------------------------------------

    void verify(std::vector<std::string> *f);
    void verify_arena(const ArenaM &a, const std::map<uint64_t, TCacheEntry> &cached,
                      std::vector<std::string> *f);

    // --- reports ----------------------------------------------------------------

    std::string report(int flags);
    std::string find_report(uint64_t addr, int flags);
};

namespace {

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

unsigned popcount(const std::vector<uint64_t> &words) {
    unsigned n = 0;
    for (uint64_t w : words)
        n += static_cast<unsigned>(__builtin_popcountll(w));
    return n;
}

}  // namespace

void aa_walker::verify_arena(const ArenaM &a, const std::map<uint64_t, TCacheEntry> &cached,
                             std::vector<std::string> *f) {
    const Obj &ar = a.raw;
    size_t first_finding = f->size();
    std::string where = format("arena %u", a.index);
    auto finding = [&](const std::string &s) { f->push_back(where + ": " + s); };
    if (ar.get(d.arena.index) != a.index)
        finding(format("records index %llu", static_cast<unsigned long long>(ar.get(d.arena.index))));
    if (!a.chunk_list_problem.empty())
        finding(a.chunk_list_problem);

    uint64_t nactive = 0, ndirty = 0, nempty = 0, allocated_large = 0, nfree_runs = 0,
             ndirty_runs = 0;
    std::vector<uint64_t> curruns(d.nbins), curregs(d.nbins), large_runs(nlarge);
    std::map<uint64_t, const RunM *> runs;  // descriptor -> run, every run of the arena
    uint64_t prev_chunk = 0;
    for (const ChunkM &c : a.chunks) {
        std::string cw = "chunk " + hex(c.addr);
        if (c.magic != d.chunk_magic) {
            finding(cw + ": bad magic " + hex(c.magic) + " (not a chunk header)");
            continue;
        }
        if (c.arena != ar.addr)
            finding(cw + ": owned by arena " + hex(c.arena) + ", listed by " + hex(ar.addr));
        if (c.prev != prev_chunk)
            finding(cw + ": prev link " + hex(c.prev) + ", expected " + hex(prev_chunk));
        prev_chunk = c.addr;
        if ((c.addr & (chunk_size - 1)) != 0)
            finding(cw + ": not aligned to the chunk size");
        if (c.npages != chunk_npages || c.header_pages != header_pages)
            finding(cw + format(": %u pages, %u header pages; expected %llu, %llu", c.npages,
                                c.header_pages, static_cast<unsigned long long>(chunk_npages),
                                static_cast<unsigned long long>(header_pages)));
        uint64_t owner = registry_lookup(c.addr);
        if (owner != (c.addr | d.registry.tag_chunk))
            finding(cw + ": the chunk registry maps it to " + hex(owner));
        for (uint32_t p = 0; p < header_pages && p < c.map.size(); p++)
            if ((c.map[p] & d.page_map.tag_mask) != d.page_map.tag_header)
                finding(cw + format(": header page %u has page map entry ", p) + hex(c.map[p]));
        for (const std::string &s : c.map_problems)
            finding(cw + ": " + s);
        uint64_t free_pages = 0;
        bool prev_free = false;
        for (const RunM &r : c.runs) {
            std::string rw = cw + format(" run at page %u (", r.first_page) + hex(r.desc) + ")";
            runs[r.desc] = &r;
            uint64_t base = c.addr + uint64_t{r.first_page} * d.page_size;
            if (r.base != base)
                finding(rw + ": base " + hex(r.base) + ", page map places it at " + hex(base));
            if (r.chunk != c.addr)
                finding(rw + ": records chunk " + hex(r.chunk));
            uint64_t tag = c.map[r.first_page] & d.page_map.tag_mask;
            if (r.state != tag)
                finding(rw + format(": state %u, page map tag %llu", r.state,
                                    static_cast<unsigned long long>(tag)));
            uint32_t dirty_pages = 0;
            for (uint32_t p = r.first_page; p < r.first_page + r.npages; p++) {
                uint64_t e = c.map[p];
                uint64_t etag = e & d.page_map.tag_mask;
                uint64_t edesc = e & ~d.page_map.flag_mask;
                if (etag != tag) {
                    finding(rw + format(": page %u has tag %llu", p,
                                        static_cast<unsigned long long>(etag)));
                    continue;
                }
                if (tag == d.page_map.tag_free) {
                    if ((e & d.page_map.dirty_flag) != 0)
                        dirty_pages++;
                    bool end = p == r.first_page || p == r.first_page + r.npages - 1;
                    if (end && edesc != r.desc)
                        finding(rw + format(": end page %u names run ", p) + hex(edesc));
                } else if (edesc != r.desc) {
                    finding(rw + format(": page %u names run ", p) + hex(edesc));
                }
            }
            if (tag == d.page_map.tag_free) {
                free_pages += r.npages;
                nfree_runs++;
                if (prev_free)
                    finding(rw + ": free run next to another free run (not coalesced)");
                prev_free = true;
                if (r.ndirty != dirty_pages)
                    finding(rw + format(": ndirty %u, %u pages marked dirty", r.ndirty, dirty_pages));
                ndirty += r.ndirty;
                if (r.ndirty != 0)
                    ndirty_runs++;
                continue;
            }
            prev_free = false;
            nactive += r.npages;
            if (tag == d.page_map.tag_large) {
                if (r.size_class < d.nbins || r.size_class >= d.nbins + nlarge) {
                    finding(rw + format(": large run of class %u", r.size_class));
                    continue;
                }
                if (uint64_t{r.npages} * d.page_size != class_size[r.size_class])
                    finding(rw + format(": large run of %u pages in class ", r.npages) +
                            std::to_string(class_size[r.size_class]));
                large_runs[r.size_class - d.nbins]++;
                allocated_large += uint64_t{r.npages} * d.page_size;
                continue;
            }
            // Small run.
            if (r.size_class >= d.nbins) {
                finding(rw + format(": small run of class %u", r.size_class));
                continue;
            }
            const BinInfoM &bi = bin_info[r.size_class];
            if (r.region_size != bi.region_size || r.nregs != bi.nregs ||
                r.npages != bi.run_pages)
                finding(rw + format(": geometry %u bytes x %u regions in %u pages; class %u "
                                    "has %u x %u in %u",
                                    r.region_size, r.nregs, r.npages, r.size_class,
                                    bi.region_size, bi.nregs, bi.run_pages));
            unsigned bits = popcount(r.bitmap);
            if (bits != r.nfree)
                finding(rw + format(": bitmap has %u free regions, nfree says %u", bits, r.nfree));
            for (uint32_t reg = bi.nregs; reg < r.bitmap.size() * 64; reg++)
                if (r.is_free_region(reg)) {
                    finding(rw + format(": bitmap bit %u set beyond the %u regions", reg, bi.nregs));
                    break;
                }
            curruns[r.size_class]++;
            curregs[r.size_class] += r.nregs - (r.nfree <= r.nregs ? r.nfree : r.nregs);
        }
        if (free_pages != c.nfree_pages)
            finding(cw + format(": nfree_pages %u, free runs hold %llu", c.nfree_pages,
                                static_cast<unsigned long long>(free_pages)));
        if (c.nfree_pages == chunk_npages - header_pages)
            nempty++;
    }

    // Arena totals against what the chunks hold.
    if (arena_stat(ar, d.arena_stats.nchunks) != a.chunks.size())
        finding(format("stats say %llu chunks, its list has %zu",
                       static_cast<unsigned long long>(arena_stat(ar, d.arena_stats.nchunks)),
                       a.chunks.size()));
    if (ar.get(d.arena.nempty_chunks) != nempty)
        finding(format("nempty_chunks %llu, %llu chunks are empty",
                       static_cast<unsigned long long>(ar.get(d.arena.nempty_chunks)),
                       static_cast<unsigned long long>(nempty)));
    if (ar.get(d.arena.nactive) != nactive)
        finding(format("nactive %llu pages, runs in use hold %llu",
                       static_cast<unsigned long long>(ar.get(d.arena.nactive)),
                       static_cast<unsigned long long>(nactive)));
    if (ar.get(d.arena.ndirty) != ndirty)
        finding(format("ndirty %llu pages, free runs hold %llu",
                       static_cast<unsigned long long>(ar.get(d.arena.ndirty)),
                       static_cast<unsigned long long>(ndirty)));
    if (arena_stat(ar, d.arena_stats.allocated_large) != allocated_large)
        finding(format("allocated_large %llu, large runs hold %llu",
                       static_cast<unsigned long long>(arena_stat(ar, d.arena_stats.allocated_large)),
                       static_cast<unsigned long long>(allocated_large)));
    uint64_t allocated_small = 0, kept_pages = 0;
    for (unsigned b = 0; b < d.nbins; b++) {
        aa_bin_stats s;
        bin_stats(ar, b, &s);
        allocated_small += s.curregs * s.region_size;
        if (s.curruns != curruns[b])
            finding(format("bin %u: curruns %llu, %llu small runs found", b,
                           static_cast<unsigned long long>(s.curruns),
                           static_cast<unsigned long long>(curruns[b])));
        if (s.curregs != curregs[b])
            finding(format("bin %u: nmalloc - ndalloc = %llu, bitmaps have %llu regions in use", b,
                           static_cast<unsigned long long>(s.curregs),
                           static_cast<unsigned long long>(curregs[b])));
        // The current run and the non-full list.
        size_t base = bin_base(b);
        uint64_t cur = ar.get(d.bin.current, base);
        if (cur != 0) {
            auto it = runs.find(cur);
            if (it == runs.end() || it->second->state != d.page_map.tag_small ||
                it->second->size_class != b)
                finding(format("bin %u: current run ", b) + hex(cur) +
                        " is not a small run of this class in this arena");
        }
        // A list of the bin's runs: each a small run of this class in this
        // arena whose free count `fits' accepts (the pages of each added to
        // *pages when given).
        auto check_list = [&](uint64_t head, const char *name, bool (*fits)(const RunM &),
                              uint64_t *pages) {
            std::set<uint64_t> seen;
            for (uint64_t r = head; r != 0;) {
                if (!seen.insert(r).second || seen.size() > kListLimit) {
                    finding(format("bin %u: %s list loops", b, name));
                    break;
                }
                auto it = runs.find(r);
                if (it == runs.end() || it->second->state != d.page_map.tag_small ||
                    it->second->size_class != b) {
                    finding(format("bin %u: %s list holds ", b, name) + hex(r) +
                            ", not a small run of this class in this arena");
                    break;
                }
                const RunM &run = *it->second;
                if (!fits(run))
                    finding(format("bin %u: run ", b) + hex(r) +
                            format(" on the %s list has %u of %u regions free", name, run.nfree,
                                   run.nregs));
                if (pages != nullptr)
                    *pages += run.npages;
                r = run.next;
            }
        };
        check_list(ar.get(d.bin.nonfull, base), "non-full",
                   [](const RunM &run) { return run.nfree != 0 && run.nfree < run.nregs; },
                   nullptr);
        // The empty list: runs kept, with every region free, for the next
        // refill; the arena counts their pages in nkept.
        check_list(ar.get(d.bin.empty, base), "empty",
                   [](const RunM &run) { return run.nfree == run.nregs; }, &kept_pages);
    }
    if (ar.get(d.arena.nkept) != kept_pages)
        finding(format("nkept %llu pages, the bins' empty lists hold %llu",
                       static_cast<unsigned long long>(ar.get(d.arena.nkept)),
                       static_cast<unsigned long long>(kept_pages)));
    if (arena_stat(ar, d.arena_stats.allocated_small) != allocated_small)
        finding(format("allocated_small %llu, bins hold %llu",
                       static_cast<unsigned long long>(arena_stat(ar, d.arena_stats.allocated_small)),
                       static_cast<unsigned long long>(allocated_small)));
    for (unsigned l = 0; l < nlarge; l++) {
        aa_large_stats s;
        large_stats(ar, l, &s);
        if (s.curruns != large_runs[l])
            finding(format("large class %llu: curruns %llu, %llu runs found",
                           static_cast<unsigned long long>(s.size),
                           static_cast<unsigned long long>(s.curruns),
                           static_cast<unsigned long long>(large_runs[l])));
    }
    // Free buckets: every free run on exactly one, nothing else on them.
    uint64_t on_buckets = 0;
    std::set<uint64_t> bucketed;
    for (uint64_t c = 0; c < d.nclasses; c++) {
        for (uint64_t r = ar.get_at(d.arena.free_buckets.offset + c * 8, 8); r != 0;) {
            if (!bucketed.insert(r).second || bucketed.size() > kListLimit) {
                finding(format("free bucket %llu: run ", static_cast<unsigned long long>(c)) +
                        hex(r) + " listed twice");
                break;
            }
            auto it = runs.find(r);
            if (it == runs.end() || it->second->state != d.page_map.tag_free) {
                finding(format("free bucket %llu holds ", static_cast<unsigned long long>(c)) +
                        hex(r) + ", not a free run of this arena");
                break;
            }
            on_buckets++;
            r = it->second->next;
        }
    }
    if (on_buckets != nfree_runs)
        finding(format("%llu free runs in the chunks, %llu on the free buckets",
                       static_cast<unsigned long long>(nfree_runs),
                       static_cast<unsigned long long>(on_buckets)));
    uint64_t on_dirty = 0;
    std::set<uint64_t> dseen;
    for (uint64_t r = ar.get(d.arena.dirty_first); r != 0;) {
        if (!dseen.insert(r).second || dseen.size() > kListLimit) {
            finding("dirty list loops");
            break;
        }
        auto it = runs.find(r);
        if (it == runs.end() || it->second->state != d.page_map.tag_free ||
            it->second->ndirty == 0) {
            finding("dirty list holds " + hex(r) + ", not a dirty free run of this arena");
            break;
        }
        on_dirty++;
        r = it->second->dirty_next;
    }
    if (on_dirty != ndirty_runs)
        finding(format("%llu free runs have dirty pages, %llu are on the dirty list",
                       static_cast<unsigned long long>(ndirty_runs),
                       static_cast<unsigned long long>(on_dirty)));
    (void)cached;
    if (f->size() != first_finding && ar.get(d.mutex.taken, d.arena.mutex.offset) != 0)
        finding("its lock is held (the target stopped inside the allocator): the problems "
                "above may be an update in progress");
}

void aa_walker::verify(std::vector<std::string> *f) {
    if (!initialized)
        return;
    std::vector<ArenaM> arenas = read_arenas();
    std::vector<TCacheM> caches = read_tcaches();
    std::map<uint64_t, TCacheEntry> cached;
    for (const TCacheM &t : caches) {
        for (unsigned b = 0; b < t.stacks.size(); b++) {
            std::string tw = "thread cache " + hex(t.addr) + format(" class %u", b);
            if (t.exited && !t.stacks[b].empty())
                f->push_back(tw + ": cache of an exited thread holds regions");
            for (uint64_t p : t.stacks[b]) {
                if (!cached.emplace(p, TCacheEntry{t.addr, b}).second) {
                    f->push_back(tw + ": " + hex(p) + " is cached twice");
                    continue;
                }
                // A large class's entry is a whole run, still counted out
                // by its arena like a cached small region.
                bool large = b >= d.nbins;
                aa_find_result r;
                find(p, &r);
                if (r.state != AA_STATE_TCACHE && r.state != AA_STATE_ALLOCATED) {
                    f->push_back(tw + ": " + hex(p) + " is " + state_text(r.state) +
                                 (large ? ", not a large block" : ", not a region") +
                                 " the arena handed out");
                    continue;
                }
                // (The free mark cannot be checked: only blocks freed into
                // the cache carry it, not those a fill brought from the arena.)
                if (large) {
                    uint64_t tag = read_u(r.page_map_entry,
                                          static_cast<uint32_t>(d.chunk.page_map_entry_size)) &
                                   d.page_map.tag_mask;
                    if (tag != d.page_map.tag_large || r.run != p || r.size_class != b ||
                        r.size != class_size[b])
                        f->push_back(tw + ": " + hex(p) +
                                     format(" is not the start of a large run of class %u "
                                            "(%llu bytes)",
                                            b, static_cast<unsigned long long>(class_size[b])));
                } else if (r.region_start != p || r.size_class != b) {
                    f->push_back(tw + ": " + hex(p) + " is not the start of a class " +
                                 std::to_string(b) + " region");
                }
            }
        }
    }
    std::set<uint64_t> chunks;
    for (const ArenaM &a : arenas) {
        verify_arena(a, cached, f);
        for (const ChunkM &c : a.chunks)
            chunks.insert(c.addr);
    }
    // Huge blocks.
    std::vector<HugeM> huge = read_huge();
    Obj hs = obj(d.huge_stats.addr.u64, d.huge_stats_layout.size);
    uint64_t usize = 0, mapped = 0;
    std::map<uint64_t, const HugeM *> huge_by_desc;
    for (const HugeM &h : huge) {
        usize += h.usize;
        mapped += h.mapped;
        huge_by_desc[h.desc] = &h;
        uint64_t owner = registry_lookup(h.addr);
        if (owner != (h.desc | d.registry.tag_huge))
            f->push_back("huge block " + hex(h.addr) + ": the chunk registry maps it to " +
                         hex(owner));
        if (h.usize > h.mapped || h.usize % d.page_size != 0)
            f->push_back("huge block " + hex(h.addr) + format(": usable size %llu, mapped %llu",
                         static_cast<unsigned long long>(h.usize),
                         static_cast<unsigned long long>(h.mapped)));
    }
    uint64_t live = hs.get(d.huge_stats_layout.nmalloc) - hs.get(d.huge_stats_layout.ndalloc);
    if (live != huge.size())
        f->push_back(format("huge: %llu live by the counters, %zu on the list",
                            static_cast<unsigned long long>(live), huge.size()));
    if (hs.get(d.huge_stats_layout.allocated) != usize || hs.get(d.huge_stats_layout.mapped) != mapped)
        f->push_back(format("huge: stats say %llu bytes (%llu mapped), the list holds %llu (%llu)",
                            static_cast<unsigned long long>(hs.get(d.huge_stats_layout.allocated)),
                            static_cast<unsigned long long>(hs.get(d.huge_stats_layout.mapped)),
                            static_cast<unsigned long long>(usize),
                            static_cast<unsigned long long>(mapped)));
    // The registry against the arenas and the huge list.
    uint64_t root_slots = uint64_t{1} << d.registry.root_bits;
    uint64_t leaf_slots = uint64_t{1} << d.registry.leaf_bits;
    std::vector<uint8_t> root(root_slots * 8);
    read(d.registry.root.addr.u64, root.data(), root.size());
    std::map<uint64_t, uint64_t> granules;  // owner -> granules registered
    std::vector<uint8_t> leaf(leaf_slots * 8);
    for (uint64_t i = 0; i < root_slots; i++) {
        uint64_t l = load(root.data() + i * 8, 8);
        if (l == 0)
            continue;
        read(l, leaf.data(), leaf.size());
        for (uint64_t j = 0; j < leaf_slots; j++) {
            uint64_t v = load(leaf.data() + j * 8, 8);
            if (v == 0)
                continue;
            uint64_t addr = ((i << d.registry.leaf_bits) | j) << d.registry.lg_granule;
            uint64_t tag = v & d.registry.tag_mask, target = v & ~d.registry.tag_mask;
            granules[v]++;
            if (tag == d.registry.tag_chunk) {
                if (chunks.count(target) == 0) {
                    if (granules[v] == 1)
                        f->push_back("registry: " + hex(addr) + " maps to chunk " + hex(target) +
                                     ", which no arena lists");
                } else if (addr < target || addr >= target + chunk_size) {
                    f->push_back("registry: " + hex(addr) + " maps to chunk " + hex(target) +
                                 ", which does not contain it");
                }
            } else if (tag == d.registry.tag_huge) {
                auto it = huge_by_desc.find(target);
                if (it == huge_by_desc.end()) {
                    if (granules[v] == 1)
                        f->push_back("registry: " + hex(addr) + " maps to huge descriptor " +
                                     hex(target) + ", which is not on the live list");
                } else if (addr < it->second->addr || addr >= it->second->addr + it->second->mapped) {
                    f->push_back("registry: " + hex(addr) + " maps to huge block " +
                                 hex(it->second->addr) + ", which does not contain it");
                }
            } else {
                f->push_back("registry: " + hex(addr) + " has the bad entry " + hex(v));
            }
        }
    }
    uint64_t granule = uint64_t{1} << d.registry.lg_granule;
    for (uint64_t c : chunks)
        if (granules[c | d.registry.tag_chunk] != chunk_size / granule)
            f->push_back("registry: chunk " + hex(c) +
                         format(" has %llu of its %llu granules registered",
                                static_cast<unsigned long long>(granules[c | d.registry.tag_chunk]),
                                static_cast<unsigned long long>(chunk_size / granule)));
    for (const HugeM &h : huge)
        if (granules[h.desc | d.registry.tag_huge] != h.mapped / granule)
            f->push_back("registry: huge block " + hex(h.addr) +
                         format(" has %llu of its %llu granules registered",
                                static_cast<unsigned long long>(granules[h.desc | d.registry.tag_huge]),
                                static_cast<unsigned long long>(h.mapped / granule)));
}

// --- reports --------------------------------------------------------------------

namespace {

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

}  // namespace

std::string aa_walker::report(int flags) {
    bool json = (flags & AA_REPORT_JSON) != 0;
    Out o;
    std::vector<std::string> unreadable;
    aa_totals t;
    totals(&t, &unreadable);
    if (json) {
        o("{\"arenalloc\": {\"version\": %s, \"schema\": 1,\n", json_string(d.package_version).c_str());
        o("\"config\": {\"page\": %llu, \"quantum\": %llu, \"chunk_size\": %llu, \"nbins\": %llu, "
          "\"small_max\": %llu, \"large_max\": %llu},\n",
          (ull)d.page_size, (ull)d.quantum, (ull)chunk_size, (ull)d.nbins, (ull)d.small_max,
          (ull)large_max);
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
    } else {
        o("___ Begin arenalloc statistics (read from outside) ___\n");
        o("Version: arenalloc %s, debug descriptor %u\n", d.package_version, d.version);
        o("Chunk %llu (2^%llu), arenas %llu, page: %llu, quantum: %llu, small classes: %llu "
          "(8..%llu), large up to %llu\n",
          (ull)chunk_size, (ull)lg_chunk, (ull)narenas, (ull)d.page_size, (ull)d.quantum,
          (ull)d.nbins, (ull)d.small_max, (ull)large_max);
        if (!initialized)
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
        if (json) {
            o("%s{\"index\": %u, \"nthreads\": %llu, \"mapped\": %llu, \"retained\": %llu, "
              "\"active\": %llu, \"dirty\": %llu, \"resident\": %llu, \"npurge\": %llu, "
              "\"nmadvise\": %llu, \"purged_pages\": %llu, \"lock_acquired\": %llu, "
              "\"lock_contended\": %llu,\n",
              first ? "" : ",\n", i, (ull)s.nthreads, (ull)s.mapped, (ull)s.retained,
              (ull)s.active, (ull)s.dirty, (ull)s.resident, (ull)s.npurge_passes,
              (ull)s.nmadvise, (ull)s.npurged_pages, (ull)s.lock_acquired,
              (ull)s.lock_contended);
            o("\"small\": {\"allocated\": %llu, \"nmalloc\": %llu, \"ndalloc\": %llu}, "
              "\"large\": {\"allocated\": %llu, \"nmalloc\": %llu, \"ndalloc\": %llu},\n"
              "\"bins\": [",
              (ull)s.allocated_small, (ull)s.nmalloc_small, (ull)s.ndalloc_small,
              (ull)s.allocated_large, (ull)s.nmalloc_large, (ull)s.ndalloc_large);
            for (unsigned b = 0; b < d.nbins; b++) {
                aa_bin_stats bs;
                bin_stats(a, b, &bs);
                o("%s{\"size\": %llu, \"nregs\": %llu, \"run_size\": %llu, \"nmalloc\": %llu, "
                  "\"ndalloc\": %llu, \"nrequests\": %llu, \"curregs\": %llu, \"curruns\": %llu, "
                  "\"nruns\": %llu, \"nfills\": %llu, \"nflushes\": %llu}",
                  b ? ",\n" : "", (ull)bs.region_size, (ull)bs.nregs, (ull)bs.run_size,
                  (ull)bs.nmalloc, (ull)bs.ndalloc, (ull)bs.nrequests, (ull)bs.curregs,
                  (ull)bs.curruns, (ull)bs.nruns, (ull)bs.nfills, (ull)bs.nflushes);
            }
            o("],\n\"lextents\": [");
            for (unsigned l = 0; l < nlarge; l++) {
                aa_large_stats ls;
                large_stats(a, l, &ls);
                o("%s{\"size\": %llu, \"nmalloc\": %llu, \"ndalloc\": %llu, \"curlextents\": %llu}",
                  l ? ",\n" : "", (ull)ls.size, (ull)ls.nmalloc, (ull)ls.ndalloc,
                  (ull)ls.curruns);
            }
            o("]}");
            first = false;
            continue;
        }
        o("arena %u: threads %llu, mapped %llu, retained %llu, active %llu, dirty %llu, resident "
          "%llu\n",
          i, (ull)s.nthreads, (ull)s.mapped, (ull)s.retained, (ull)s.active, (ull)s.dirty,
          (ull)s.resident);
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
        if ((flags & AA_REPORT_NO_BINS) == 0) {
            o("  bin   size regs pgs    nmalloc    ndalloc  nrequests  curregs curruns   nruns"
              "   fills flushes util\n");
            for (unsigned b = 0; b < d.nbins; b++) {
                aa_bin_stats bs;
                bin_stats(a, b, &bs);
                if (bs.nmalloc == 0 && bs.nrequests == 0)
                    continue;
                uint64_t capacity = bs.curruns * bs.nregs;
                o("%5u%7llu%5llu%4llu%11llu%11llu%11llu%9llu%8llu%8llu%8llu%8llu%4llu%%\n", b,
                  (ull)bs.region_size, (ull)bs.nregs, (ull)(bs.run_size / d.page_size),
                  (ull)bs.nmalloc, (ull)bs.ndalloc, (ull)bs.nrequests, (ull)bs.curregs,
                  (ull)bs.curruns, (ull)bs.nruns, (ull)bs.nfills, (ull)bs.nflushes,
                  (ull)(capacity == 0 ? 0 : bs.curregs * 100 / capacity));
            }
        }
        if ((flags & AA_REPORT_NO_LARGE) == 0) {
            o("  large class      nmalloc    ndalloc    current\n");
            for (unsigned l = 0; l < nlarge; l++) {
                aa_large_stats ls;
                large_stats(a, l, &ls);
                if (ls.nmalloc == 0)
                    continue;
                o("%13llu%13llu%11llu%11llu\n", (ull)ls.size, (ull)ls.nmalloc, (ull)ls.ndalloc,
                  (ull)ls.curruns);
            }
        }
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
    if (flags & AA_REPORT_JSON) {
        o("{\"address\": %llu, \"state\": %s, \"chunk\": %llu, \"arena\": %lld, \"run\": %llu, "
          "\"size_class\": %lld, \"size\": %llu, \"region_index\": %llu, \"region_start\": %llu, "
          "\"offset\": %llu, \"tcache\": %llu, \"page_map_entry\": %llu, "
          "\"run_descriptor\": %llu}\n",
          (ull)r.address, json_string(state_text(r.state)).c_str(), (ull)r.chunk,
          r.arena_index == UINT64_MAX ? -1LL : (long long)r.arena_index, (ull)r.run,
          r.size_class == UINT64_MAX ? -1LL : (long long)r.size_class, (ull)r.size,
          (ull)r.region_index, (ull)r.region_start, (ull)r.offset, (ull)r.tcache,
          (ull)r.page_map_entry, (ull)r.run_descriptor);
        return o.s;
    }
    o("%s: ", hex(addr).c_str());
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
        if (r.size_class >= d.nbins)
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
    return o.s;
}

// --- the C interface -----------------------------------------------------------

namespace {

char *dup_string(const std::string &s) {
    char *p = static_cast<char *>(malloc(s.size() + 1));
    if (p != nullptr)
        memcpy(p, s.c_str(), s.size() + 1);
    return p;
}

// Runs body, turning a read failure into -1 and the walker's error.
template <typename F>
int guarded(aa_walker *w, F body) {
    try {
        return body();
    } catch (const ReadError &e) {
        w->error = e.what;
        return -1;
    }
}

}  // namespace

extern "C" {

aa_walker *aa_walker_open(aa_read_fn read, void *ctx, uint64_t descriptor_addr, char *err,
                          size_t errlen) {
    aa_walker *w = new aa_walker;
    w->read_fn = read;
    w->ctx = ctx;
    w->desc_addr = descriptor_addr;
    if (!w->open()) {
        if (err != nullptr && errlen != 0)
            snprintf(err, errlen, "%s", w->error.c_str());
        delete w;
        return nullptr;
    }
    return w;
}

void aa_walker_close(aa_walker *w) { delete w; }

const char *aa_walker_error(const aa_walker *w) { return w->error.c_str(); }

int aa_walker_config(aa_walker *w, aa_config *out) {
    *out = aa_config{};
    out->descriptor_version = w->d.version;
    out->page_size = w->d.page_size;
    out->quantum = w->d.quantum;
    out->chunk_size = w->chunk_size;
    out->lg_chunk = w->lg_chunk;
    out->chunk_header_pages = w->header_pages;
    out->nbins = w->d.nbins;
    out->nclasses = w->d.nclasses;
    out->nlarge = w->nlarge;
    out->small_max = w->d.small_max;
    out->large_max = w->large_max;
    out->narenas = w->narenas;
    out->initialized = w->initialized;
    snprintf(out->package_version, sizeof(out->package_version), "%s", w->d.package_version);
    return 0;
}

int aa_walker_totals(aa_walker *w, aa_totals *out) {
    return guarded(w, [&] {
        w->totals(out, nullptr);
        return 0;
    });
}

int aa_walker_arena(aa_walker *w, unsigned arena, aa_arena_stats *out) {
    return guarded(w, [&] {
        uint64_t a = w->arena_addr(arena);
        if (a == 0)
            return 0;
        w->arena_stats(w->arena_obj(a), arena, out);
        return 1;
    });
}

int aa_walker_bin(aa_walker *w, unsigned arena, unsigned bin, aa_bin_stats *out) {
    return guarded(w, [&] {
        uint64_t a = w->arena_addr(arena);
        if (a == 0 || bin >= w->d.nbins)
            return 0;
        w->bin_stats(w->arena_obj(a), bin, out);
        return 1;
    });
}

int aa_walker_large(aa_walker *w, unsigned arena, unsigned lclass, aa_large_stats *out) {
    return guarded(w, [&] {
        uint64_t a = w->arena_addr(arena);
        if (a == 0 || lclass >= w->nlarge)
            return 0;
        w->large_stats(w->arena_obj(a), lclass, out);
        return 1;
    });
}

int aa_walker_chunks(aa_walker *w, int (*cb)(void *, const aa_chunk_info *), void *ctx) {
    return guarded(w, [&] {
        for (unsigned i = 0; w->initialized && i < w->narenas; i++) {
            uint64_t a = w->arena_addr(i);
            if (a == 0)
                continue;
            Obj ar = w->arena_obj(a);
            std::set<uint64_t> seen;
            for (uint64_t c = ar.get(w->d.arena.chunks); c != 0 && seen.insert(c).second;) {
                Obj h = w->obj(c, w->d.chunk.size);
                aa_chunk_info info{c, w->chunk_size, i, a, h.get(w->d.chunk.npages),
                                   h.get(w->d.chunk.header_pages), h.get(w->d.chunk.nfree_pages),
                                   h.get(w->d.chunk.from_sbrk)};
                int rc = cb(ctx, &info);
                if (rc != 0)
                    return rc;
                c = h.get(w->d.chunk.next);
            }
        }
        return 0;
    });
}

int aa_walker_runs(aa_walker *w, uint64_t chunk, int (*cb)(void *, const aa_run_info *), void *ctx) {
    return guarded(w, [&] {
        ChunkM c = w->read_chunk(chunk);
        if (c.magic != w->d.chunk_magic) {
            w->error = hex(chunk) + " is not an arenalloc chunk (bad magic)";
            return -1;
        }
        for (const RunM &r : c.runs) {
            aa_run_info info{};
            info.chunk = chunk;
            info.address = r.base;
            info.npages = r.npages;
            uint64_t tag = c.map[r.first_page] & w->d.page_map.tag_mask;
            info.state = tag == w->d.page_map.tag_small ? AA_RUN_SMALL
                         : tag == w->d.page_map.tag_large ? AA_RUN_LARGE
                                                          : AA_RUN_FREE;
            info.size_class = r.size_class;
            info.region_size = info.state == AA_RUN_SMALL   ? r.region_size
                               : info.state == AA_RUN_LARGE ? uint64_t{r.npages} * w->d.page_size
                                                            : 0;
            info.nregs = info.state == AA_RUN_SMALL ? r.nregs : 0;
            info.nfree = info.state == AA_RUN_SMALL ? r.nfree : 0;
            info.ndirty = info.state == AA_RUN_FREE ? r.ndirty : 0;
            info.descriptor = r.desc;
            int rc = cb(ctx, &info);
            if (rc != 0)
                return rc;
        }
        return 0;
    });
}

int aa_walker_huge(aa_walker *w, int (*cb)(void *, const aa_huge_info *), void *ctx) {
    return guarded(w, [&] {
        for (const HugeM &h : w->read_huge()) {
            aa_huge_info info{h.addr, h.usize, h.mapped, h.arena, h.desc};
            int rc = cb(ctx, &info);
            if (rc != 0)
                return rc;
        }
        return 0;
    });
}

int aa_walker_find(aa_walker *w, uint64_t address, aa_find_result *out) {
    return guarded(w, [&] {
        w->find(address, out);
        return 0;
    });
}

const char *aa_walker_state_name(uint64_t state) { return state_text(state); }

int aa_walker_verify(aa_walker *w, void (*finding)(void *, const char *), void *ctx) {
    return guarded(w, [&] {
        std::vector<std::string> f;
        w->verify(&f);
        if (finding != nullptr)
            for (const std::string &s : f)
                finding(ctx, s.c_str());
        return static_cast<int>(f.size());
    });
}

char *aa_walker_report(aa_walker *w, int flags) {
    std::string s;
    if (guarded(w, [&] {
            s = w->report(flags);
            return 0;
        }) != 0)
        return nullptr;
    return dup_string(s);
}

char *aa_walker_find_report(aa_walker *w, uint64_t address, int flags) {
    std::string s;
    if (guarded(w, [&] {
            s = w->find_report(address, flags);
            return 0;
        }) != 0)
        return nullptr;
    return dup_string(s);
}

char *aa_walker_verify_report(aa_walker *w, int flags) {
    std::vector<std::string> f;
    if (guarded(w, [&] {
            w->verify(&f);
            return 0;
        }) != 0)
        return nullptr;
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
    return dup_string(o.s);
}

void aa_walker_free_string(char *s) { free(s); }

}  // extern "C"
