// walker_internal.h — what the heap walker's files share: the target's
// structures as the walker decodes them, and the walker object behind the
// C interface (arenalloc_walker.h).
//
//   decode.cc   reading the descriptor and the target's structures
//   stats.cc    statistics: per arena, bin and large class, and totals
//   find.cc     what an address is
//   verify.cc   the consistency check
//   report.cc   the text and JSON reports
//   api.cc      the C interface
#ifndef ARENALLOC_WALKER_INTERNAL_H
#define ARENALLOC_WALKER_INTERNAL_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "arenalloc_walker.h"
#include "debug_descriptor.h"
#include "target_format.h"

// Only the C interface is exported from the walker library.
#pragma GCC visibility push(hidden)

namespace walker {

// A failed read of the target; caught at the C boundary.
struct ReadError {
    std::string what;
};

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string hex(uint64_t v);

// Bytes of one structure read from the target, decoded in its format.
struct Obj {
    uint64_t addr = 0;
    TargetFormat fmt;
    std::vector<uint8_t> b;
    uint64_t get(aa_debug_field f, size_t base = 0) const {
        if (base + f.offset + f.size > b.size())
            return 0;
        return fmt.load(b.data() + base + f.offset, f.size);
    }
    uint64_t get_at(size_t off, uint32_t size) const {
        if (off + size > b.size())
            return 0;
        return fmt.load(b.data() + off, size);
    }
    // The target's pointer at off.
    uint64_t word_at(size_t off) const { return get_at(off, fmt.word_size); }
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
    std::vector<RunM> runs;                 // in address order
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

struct TCacheM {
    uint64_t addr;
    bool exited;
    uint64_t arena;
    std::vector<std::vector<uint64_t>> stacks;  // per class
    std::vector<uint32_t> max;
};

constexpr size_t kListLimit = size_t{1} << 22;  // bounds list walks on a corrupt heap

// The words of an AA_STATE_* value (report.cc).
const char *state_text(uint64_t state);

// The text or JSON verify report of a list of findings (report.cc).
std::string verify_report(const std::vector<std::string> &findings, int flags);

}  // namespace walker

struct __attribute__((visibility("hidden"))) aa_walker {
    aa_read_fn read_fn;
    void *ctx;
    uint64_t desc_addr;
    uint32_t desc_size = 0;  // what the target's descriptor says it holds
    walker::TargetFormat fmt;  // from the descriptor's magic and pointer size
    struct arenalloc_debug_descriptor d;  // decoded into this machine's order
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

    // --- decode.cc: set-up ---------------------------------------------------
    bool open();
    bool check_descriptor_head();
    bool read_descriptor();
    bool read_globals();

    // --- decode.cc: reading (a failed read throws ReadError) ---------------
    void read(uint64_t addr, void *buf, size_t len);
    uint64_t read_u(uint64_t addr, uint32_t size);
    uint64_t ptr(uint64_t addr) { return read_u(addr, fmt.word_size); }
    std::vector<uint64_t> read_words(uint64_t addr, uint64_t count);
    walker::Obj obj(uint64_t addr, size_t size);
    uint64_t var(const aa_debug_var &v) { return read_u(v.addr.u64, static_cast<uint32_t>(v.size)); }

    // --- decode.cc: arenas, chunks, runs, huge blocks, caches ------------------
    uint64_t arena_addr(unsigned i);  // the arena in slot i, or 0
    walker::Obj arena_obj(uint64_t addr) { return obj(addr, d.arena.size); }
    uint64_t arena_stat(const walker::Obj &a, aa_debug_field f) const {
        return a.get(f, d.arena.stats.offset);
    }
    size_t bin_base(unsigned b) const { return d.arena.bins.offset + size_t{b} * d.bin.size; }
    size_t large_base(unsigned l) const { return d.arena.large.offset + size_t{l} * d.large.size; }
    walker::RunM read_run(uint64_t desc);
    walker::ChunkM read_chunk(uint64_t addr);
    void read_chunk_runs(walker::ChunkM *c);
    walker::ArenaM read_arena(unsigned i, uint64_t addr);
    std::vector<walker::ArenaM> read_arenas();
    std::vector<walker::HugeM> read_huge();
    std::vector<walker::TCacheM> read_tcaches();
    void read_tcache_stacks(const walker::Obj &o, walker::TCacheM *m);
    uint64_t cached_block_size(unsigned b) const;
    uint64_t registry_lookup(uint64_t addr);
    uint64_t arena_index_of(uint64_t arena);

    // --- stats.cc --------------------------------------------------------------
    void arena_stats(const walker::Obj &a, unsigned index, aa_arena_stats *s);
    void bin_stats(const walker::Obj &a, unsigned b, aa_bin_stats *s);
    void large_stats(const walker::Obj &a, unsigned l, aa_large_stats *s);
    void totals(aa_totals *t, std::vector<std::string> *unreadable);
    void add_arena_totals(aa_totals *t, std::vector<std::string> *unreadable);
    void add_huge_totals(aa_totals *t);
    void add_tcache_totals(aa_totals *t, std::vector<std::string> *unreadable);

    // --- find.cc ----------------------------------------------------------------
    void find(uint64_t addr, aa_find_result *r);
    void find_in_huge(uint64_t huge_desc, aa_find_result *r);
    void find_in_chunk(aa_find_result *r);
    uint64_t tcache_holding(uint64_t cls, uint64_t start);

    // --- verify.cc ----------------------------------------------------------------
    void verify(std::vector<std::string> *f);

    // --- report.cc ----------------------------------------------------------------
    std::string report(int flags);
    std::string find_report(uint64_t addr, int flags);
};

#pragma GCC visibility pop

#endif
