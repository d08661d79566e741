// decode.cc — the walker's view of the target: the debug descriptor, the
// allocator's globals, and its arenas, chunks, runs, huge blocks and
// thread caches, each read through the read callback and decoded with the
// layouts the descriptor gives.
#include <cstring>
#include <set>

#include "walker_internal.h"

using namespace walker;

namespace {

// A version 3 descriptor as first shipped: everything before the first
// appended field (version 4 changed what one TCacheBin field counts, not
// the descriptor).
constexpr size_t kVersion3Size = offsetof(struct arenalloc_debug_descriptor, tcache_nclasses);

// The descriptor as runs of same-width fields, in order: a reader of
// another byte order decodes each field where it lies.  The descriptor
// has fixed-width fields and no padding (checked below), so it lies the
// same in every ABI and this machine's offsets are the target's.
enum class FieldKind { kU32, kU64, kBytes, kVar };
struct DescriptorRun {
    size_t begin, end;
    FieldKind kind;
};

#define AA_DESC_AT(m) offsetof(struct arenalloc_debug_descriptor, m)
constexpr DescriptorRun kDescriptorRuns[] = {
    {AA_DESC_AT(magic), AA_DESC_AT(version), FieldKind::kU64},
    {AA_DESC_AT(version), AA_DESC_AT(layout_hash), FieldKind::kU32},
    {AA_DESC_AT(layout_hash), AA_DESC_AT(package_version), FieldKind::kU64},
    {AA_DESC_AT(package_version), AA_DESC_AT(page_size), FieldKind::kBytes},
    {AA_DESC_AT(page_size), AA_DESC_AT(initialized), FieldKind::kU64},
    {AA_DESC_AT(initialized), AA_DESC_AT(registry.lg_granule), FieldKind::kVar},
    {AA_DESC_AT(registry.lg_granule), AA_DESC_AT(registry.tag_chunk), FieldKind::kU32},
    {AA_DESC_AT(registry.tag_chunk), AA_DESC_AT(mutex), FieldKind::kU64},
    {AA_DESC_AT(mutex), AA_DESC_AT(chunk.page_map_entry_size), FieldKind::kU32},
    {AA_DESC_AT(chunk.page_map_entry_size), AA_DESC_AT(run), FieldKind::kU64},
    {AA_DESC_AT(run), AA_DESC_AT(tcache_nclasses), FieldKind::kU32},
    {AA_DESC_AT(tcache_nclasses), sizeof(struct arenalloc_debug_descriptor), FieldKind::kU64},
};
#undef AA_DESC_AT

constexpr size_t field_width(FieldKind k) {
    return k == FieldKind::kU32 ? 4 : k == FieldKind::kU64 ? 8 : k == FieldKind::kVar ? 16 : 1;
}

// The runs cover the descriptor end to end, each a whole number of its
// fields: no member is left undecoded and none is padded.
constexpr bool runs_cover_descriptor() {
    size_t at = 0;
    for (const DescriptorRun &r : kDescriptorRuns) {
        if (r.begin != at || r.end <= r.begin || (r.end - r.begin) % field_width(r.kind) != 0)
            return false;
        at = r.end;
    }
    return at == sizeof(struct arenalloc_debug_descriptor);
}
static_assert(runs_cover_descriptor(), "kDescriptorRuns must follow the descriptor's members");
static_assert(sizeof(aa_debug_var) == 16 && sizeof(aa_debug_field) == 8,
              "an address slot is 8 bytes, a field layout two uint32_t");

template <typename T>
void store(uint8_t *to, uint64_t v) {
    T t = static_cast<T>(v);
    memcpy(to, &t, sizeof(t));
}

// Decodes the first len bytes of a target's descriptor, raw, into *out
// (this machine's order; what len does not reach stays zero).  An address
// slot holds a target pointer in its first word_size bytes.
void decode_descriptor(const uint8_t *raw, size_t len, const TargetFormat &f,
                       struct arenalloc_debug_descriptor *out) {
    memset(out, 0, sizeof(*out));
    uint8_t *to = reinterpret_cast<uint8_t *>(out);
    for (const DescriptorRun &r : kDescriptorRuns) {
        size_t width = field_width(r.kind);
        for (size_t at = r.begin; at + width <= r.end && at + width <= len; at += width) {
            switch (r.kind) {
            case FieldKind::kU32:
                store<uint32_t>(to + at, f.load(raw + at, 4));
                break;
            case FieldKind::kU64:
                store<uint64_t>(to + at, f.load(raw + at, 8));
                break;
            case FieldKind::kBytes:
                to[at] = raw[at];
                break;
            case FieldKind::kVar:
                store<uint64_t>(to + at + offsetof(aa_debug_var, addr), f.load_word(raw + at));
                store<uint64_t>(to + at + offsetof(aa_debug_var, size),
                                f.load(raw + at + offsetof(aa_debug_var, size), 8));
                break;
            }
        }
    }
}

}  // namespace

// --- reading -----------------------------------------------------------------

void aa_walker::read(uint64_t addr, void *buf, size_t len) {
    if (len == 0)
        return;
    if (read_fn(ctx, addr, buf, len) != 0)
        throw ReadError{format("cannot read %zu bytes at %s", len, hex(addr).c_str())};
}

uint64_t aa_walker::read_u(uint64_t addr, uint32_t size) {
    uint8_t buf[8] = {};
    uint32_t n = size > 8 ? 8 : size;
    read(addr, buf, n);
    return fmt.load(buf, n);
}

// count target pointers from addr.
std::vector<uint64_t> aa_walker::read_words(uint64_t addr, uint64_t count) {
    std::vector<uint8_t> raw(count * fmt.word_size);
    read(addr, raw.data(), raw.size());
    std::vector<uint64_t> out(count);
    for (uint64_t i = 0; i < count; i++)
        out[i] = fmt.load_word(raw.data() + i * fmt.word_size);
    return out;
}

Obj aa_walker::obj(uint64_t addr, size_t size) {
    Obj o;
    o.addr = addr;
    o.fmt = fmt;
    o.b.resize(size);
    read(addr, o.b.data(), size);
    return o;
}

// --- set-up --------------------------------------------------------------------

bool aa_walker::open() {
    if (!check_descriptor_head() || !read_descriptor() || !read_globals())
        return false;
    for (uint64_t c = d.nbins; c < class_size.size() && class_size[c] <= large_max; c++)
        nlarge++;
    return true;
}

// The descriptor's fixed head: magic (which also gives the byte order),
// version, size, byte order mark, pointer size.
bool aa_walker::check_descriptor_head() {
    uint8_t head[24];
    if (read_fn(ctx, desc_addr, head, sizeof(head)) != 0) {
        error = format("cannot read the arenalloc debug descriptor at %s", hex(desc_addr).c_str());
        return false;
    }
    if (!TargetFormat::order_of(head, ARENALLOC_DEBUG_MAGIC, &fmt.big_endian)) {
        error = format("no arenalloc debug descriptor at %s (wrong magic: not arenalloc, or "
                       "not this version of its debug interface)", hex(desc_addr).c_str());
        return false;
    }
    uint32_t version = static_cast<uint32_t>(fmt.load(head + 8, 4));
    uint32_t size = static_cast<uint32_t>(fmt.load(head + 12, 4));
    uint32_t order = static_cast<uint32_t>(fmt.load(head + 16, 4));
    uint32_t psize = static_cast<uint32_t>(fmt.load(head + 20, 4));
    if (order != ARENALLOC_DEBUG_BYTE_ORDER) {
        error = format("arenalloc debug descriptor: byte order mark %#x disagrees with its magic",
                       order);
        return false;
    }
    if (psize != 4 && psize != 8) {
        error = format("the target's pointers are %u bytes; this walker reads 4 and 8", psize);
        return false;
    }
    fmt.word_size = psize;
    // Version 3 differs only in what TCacheBin's last field counts,
    // which this walker does not read.
    if (version != ARENALLOC_DEBUG_VERSION && version != 3) {
        error = format("arenalloc debug descriptor version %u; this walker reads versions 3 and %u",
                       version, ARENALLOC_DEBUG_VERSION);
        return false;
    }
    // Fields appended to version 3 may be absent: the descriptor must
    // hold the rest, and an absent field takes its default in
    // read_descriptor.
    if (size < kVersion3Size) {
        error = format("arenalloc debug descriptor too short (%u bytes, expected %zu)", size,
                       kVersion3Size);
        return false;
    }
    desc_size = size;
    return true;
}

// The whole descriptor (as much of it as the target's holds).
bool aa_walker::read_descriptor() {
    uint32_t size = desc_size;
    uint8_t raw[sizeof(d)];
    size_t len = size < sizeof(d) ? size : sizeof(d);
    if (read_fn(ctx, desc_addr, raw, len) != 0) {
        error = format("cannot read the arenalloc debug descriptor at %s", hex(desc_addr).c_str());
        return false;
    }
    decode_descriptor(raw, len, fmt, &d);
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
    return true;
}

// The globals the descriptor points at: the arena table, the chunk
// geometry and the size-class table.
bool aa_walker::read_globals() {
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
            class_size.push_back(table.get_at(d.size_class_table.size_.offset + c * 8, 8));  // uint64_t
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
    return true;
}

// --- arenas, chunks, runs ------------------------------------------------------

uint64_t aa_walker::arena_addr(unsigned i) {
    if (!initialized || i >= narenas)
        return 0;
    return ptr(arenas_table + uint64_t{i} * fmt.word_size);
}

RunM aa_walker::read_run(uint64_t desc) {
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
    for (uint64_t i = 0; i < d.bitmap_words; i++)  // uint64_t words
        m.bitmap.push_back(r.get_at(d.run.bitmap.offset + i * 8, 8));
    return m;
}

// Reads a chunk's header and page map, and the runs the map names.
ChunkM aa_walker::read_chunk(uint64_t addr) {
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
        c.map.push_back(fmt.load(raw.data() + p * d.chunk.page_map_entry_size,
                                 static_cast<uint32_t>(d.chunk.page_map_entry_size)));
    read_chunk_runs(&c);
    return c;
}

// Follows the page map from the first page after the header, one run at
// a time; an entry that names no run is a problem, skipped a page.
void aa_walker::read_chunk_runs(ChunkM *c) {
    uint32_t page = static_cast<uint32_t>(header_pages);
    while (page < chunk_npages) {
        uint64_t e = c->map[page];
        uint64_t tag = e & d.page_map.tag_mask;
        uint64_t desc = e & ~d.page_map.flag_mask;
        if (tag == d.page_map.tag_header || desc == 0) {
            c->map_problems.push_back(format("page %u: entry %s names no run", page,
                                             hex(e).c_str()));
            page++;
            continue;
        }
        RunM r = read_run(desc);
        r.first_page = page;
        if (r.npages == 0 || r.npages > chunk_npages - page) {
            c->map_problems.push_back(format("page %u: run %s has %u pages", page,
                                             hex(desc).c_str(), r.npages));
            page++;
            continue;
        }
        page += r.npages;
        c->runs.push_back(std::move(r));
    }
}

ArenaM aa_walker::read_arena(unsigned i, uint64_t addr) {
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
std::vector<ArenaM> aa_walker::read_arenas() {
    std::vector<ArenaM> out;
    for (unsigned i = 0; i < narenas; i++) {
        uint64_t a = arena_addr(i);
        if (a != 0)
            out.push_back(read_arena(i, a));
    }
    return out;
}

// --- huge blocks and thread caches -------------------------------------------

std::vector<HugeM> aa_walker::read_huge() {
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

std::vector<TCacheM> aa_walker::read_tcaches() {
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
        read_tcache_stacks(o, &m);
        out.push_back(std::move(m));
        t = o.get(d.tcache.next_all);
    }
    return out;
}

// The stack of every class of the cache o.
void aa_walker::read_tcache_stacks(const Obj &o, TCacheM *m) {
    for (unsigned b = 0; b < tcache_nclasses; b++) {
        size_t base = d.tcache.bins.offset + size_t{b} * d.tcache_bin.size;
        // The stack is [stack, top) of [stack, limit); a top out of
        // that range (a corrupt cache) reads as empty or full.  Under S a
        // bin's limit is its stack (the inline push always overflows),
        // and its room runs to the next bin's stack: the stacks lie one
        // after another in the cache.
        uint64_t top = o.get(d.tcache_bin.top, base);
        uint64_t stack = o.get(d.tcache_bin.stack, base);
        uint64_t limit = o.get(d.tcache_bin.limit, base);
        if (limit == stack && b + 1 < tcache_nclasses) {
            uint64_t next = o.get(d.tcache_bin.stack, base + d.tcache_bin.size);
            if (next > stack)
                limit = next;
        }
        uint32_t max = limit >= stack ? static_cast<uint32_t>((limit - stack) / fmt.word_size) : 0;
        uint32_t count = top >= stack ? static_cast<uint32_t>((top - stack) / fmt.word_size) : 0;
        if (count > max)
            count = max;
        m->stacks.push_back(read_words(stack, count));
        m->max.push_back(max);
    }
}

// The bytes of one cached block of class b: a small region, or a whole
// large run.
uint64_t aa_walker::cached_block_size(unsigned b) const {
    return b < d.nbins ? bin_info[b].region_size : class_size[b];
}

// --- owners ----------------------------------------------------------------------

// Registry: the tagged owner of addr's granule, or 0.
uint64_t aa_walker::registry_lookup(uint64_t addr) {
    if (!initialized || (addr >> d.registry.address_bits) != 0)
        return 0;
    uint64_t key = addr >> d.registry.lg_granule;
    uint64_t leaf = ptr(d.registry.root.addr.u64 + (key >> d.registry.leaf_bits) * fmt.word_size);
    if (leaf == 0)
        return 0;
    return ptr(leaf + (key & ((uint64_t{1} << d.registry.leaf_bits) - 1)) * fmt.word_size);
}

uint64_t aa_walker::arena_index_of(uint64_t arena) {
    if (arena == 0)
        return UINT64_MAX;
    Obj a = obj(arena, d.arena.size);
    return a.get(d.arena.index);
}
