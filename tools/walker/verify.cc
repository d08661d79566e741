// verify.cc — the consistency check: every thread cache, arena, chunk,
// run, bin list, free bucket, huge block and registry entry against the
// others and against the counters the allocator keeps.  Each problem is
// one finding (a line of text); reading goes on after a problem wherever
// what follows can still be trusted.
#include <map>
#include <set>

#include "walker_internal.h"

using namespace walker;

namespace {

using Findings = std::vector<std::string>;
using ull = unsigned long long;

unsigned popcount(const std::vector<uint64_t> &words) {
    unsigned n = 0;
    for (uint64_t w : words)
        n += static_cast<unsigned>(__builtin_popcountll(w));
    return n;
}

// One arena's check.  Walks its chunks and their runs once, counting what
// they hold, then compares the counts with the arena's counters, its
// bins' lists, its free buckets and its dirty list.
class ArenaCheck {
public:
    ArenaCheck(aa_walker &w, const ArenaM &a, Findings *f)
        : w_(w), d_(w.d), a_(a), ar_(a.raw), f_(f), where_(format("arena %u", a.index)),
          curruns_(w.d.nbins), curregs_(w.d.nbins), large_runs_(w.nlarge) {}

    void run() {
        size_t first_finding = f_->size();
        if (ar_.get(d_.arena.index) != a_.index)
            finding(format("records index %llu", (ull)ar_.get(d_.arena.index)));
        if (!a_.chunk_list_problem.empty())
            finding(a_.chunk_list_problem);
        uint64_t prev_chunk = 0;
        for (const ChunkM &c : a_.chunks)
            check_chunk(c, &prev_chunk);
        check_counters();
        check_bins();
        check_large_classes();
        check_free_buckets();
        check_dirty_list();
        if (f_->size() != first_finding && ar_.get(d_.mutex.taken, d_.arena.mutex.offset) != 0)
            finding("its lock is held (the target stopped inside the allocator): the problems "
                    "above may be an update in progress");
    }

private:
    aa_walker &w_;
    const struct arenalloc_debug_descriptor &d_;
    const ArenaM &a_;
    const Obj &ar_;
    Findings *f_;
    std::string where_;

    // What the chunks hold.
    uint64_t nactive_ = 0, ndirty_ = 0, nempty_ = 0, allocated_large_ = 0;
    uint64_t nfree_runs_ = 0, ndirty_runs_ = 0;
    std::vector<uint64_t> curruns_, curregs_;  // per bin
    std::vector<uint64_t> large_runs_;         // per large class
    std::map<uint64_t, const RunM *> runs_;    // descriptor -> run, every run of the arena

    void finding(const std::string &s) { f_->push_back(where_ + ": " + s); }

    // The run with descriptor desc when it is one of this arena's runs in
    // state `state', or null.
    const RunM *arena_run(uint64_t desc, uint64_t state) const {
        auto it = runs_.find(desc);
        if (it == runs_.end() || it->second->state != state)
            return nullptr;
        return it->second;
    }

    // --- chunks and runs -------------------------------------------------------

    void check_chunk(const ChunkM &c, uint64_t *prev_chunk) {
        std::string cw = "chunk " + hex(c.addr);
        if (c.magic != d_.chunk_magic) {
            finding(cw + ": bad magic " + hex(c.magic) + " (not a chunk header)");
            return;
        }
        check_chunk_header(c, cw, *prev_chunk);
        *prev_chunk = c.addr;
        uint64_t free_pages = 0;
        bool prev_free = false;
        for (const RunM &r : c.runs)
            check_run(c, cw, r, &free_pages, &prev_free);
        if (free_pages != c.nfree_pages)
            finding(cw + format(": nfree_pages %u, free runs hold %llu", c.nfree_pages,
                                (ull)free_pages));
        if (c.nfree_pages == w_.chunk_npages - w_.header_pages)
            nempty_++;
    }

    void check_chunk_header(const ChunkM &c, const std::string &cw, uint64_t prev_chunk) {
        if (c.arena != ar_.addr)
            finding(cw + ": owned by arena " + hex(c.arena) + ", listed by " + hex(ar_.addr));
        if (c.prev != prev_chunk)
            finding(cw + ": prev link " + hex(c.prev) + ", expected " + hex(prev_chunk));
        if ((c.addr & (w_.chunk_size - 1)) != 0)
            finding(cw + ": not aligned to the chunk size");
        if (c.npages != w_.chunk_npages || c.header_pages != w_.header_pages)
            finding(cw + format(": %u pages, %u header pages; expected %llu, %llu", c.npages,
                                c.header_pages, (ull)w_.chunk_npages, (ull)w_.header_pages));
        uint64_t owner = w_.registry_lookup(c.addr);
        if (owner != (c.addr | d_.registry.tag_chunk))
            finding(cw + ": the chunk registry maps it to " + hex(owner));
        for (uint32_t p = 0; p < w_.header_pages && p < c.map.size(); p++)
            if ((c.map[p] & d_.page_map.tag_mask) != d_.page_map.tag_header)
                finding(cw + format(": header page %u has page map entry ", p) + hex(c.map[p]));
        for (const std::string &s : c.map_problems)
            finding(cw + ": " + s);
    }

    void check_run(const ChunkM &c, const std::string &cw, const RunM &r, uint64_t *free_pages,
                   bool *prev_free) {
        std::string rw = cw + format(" run at page %u (", r.first_page) + hex(r.desc) + ")";
        runs_[r.desc] = &r;
        uint64_t base = c.addr + uint64_t{r.first_page} * d_.page_size;
        if (r.base != base)
            finding(rw + ": base " + hex(r.base) + ", page map places it at " + hex(base));
        if (r.chunk != c.addr)
            finding(rw + ": records chunk " + hex(r.chunk));
        uint64_t tag = c.map[r.first_page] & d_.page_map.tag_mask;
        if (r.state != tag)
            finding(rw + format(": state %u, page map tag %llu", r.state, (ull)tag));
        uint32_t dirty_pages = check_run_pages(c, rw, r, tag);
        if (tag == d_.page_map.tag_free) {
            *free_pages += r.npages;
            check_free_run(rw, r, dirty_pages, *prev_free);
            *prev_free = true;
            return;
        }
        *prev_free = false;
        nactive_ += r.npages;
        if (tag == d_.page_map.tag_large)
            check_large_run(rw, r);
        else
            check_small_run(rw, r);
    }

    // Every page of the run carries its tag; the pages of a run in use
    // name it, and so do the end pages of a free run.  Returns the pages
    // marked dirty.
    uint32_t check_run_pages(const ChunkM &c, const std::string &rw, const RunM &r,
                             uint64_t tag) {
        uint32_t dirty_pages = 0;
        for (uint32_t p = r.first_page; p < r.first_page + r.npages; p++) {
            uint64_t e = c.map[p];
            uint64_t etag = e & d_.page_map.tag_mask;
            uint64_t edesc = e & ~d_.page_map.flag_mask;
            if (etag != tag) {
                finding(rw + format(": page %u has tag %llu", p, (ull)etag));
                continue;
            }
            if (tag == d_.page_map.tag_free) {
                if ((e & d_.page_map.dirty_flag) != 0)
                    dirty_pages++;
                bool end = p == r.first_page || p == r.first_page + r.npages - 1;
                if (end && edesc != r.desc)
                    finding(rw + format(": end page %u names run ", p) + hex(edesc));
            } else if (edesc != r.desc) {
                finding(rw + format(": page %u names run ", p) + hex(edesc));
            }
        }
        return dirty_pages;
    }

    void check_free_run(const std::string &rw, const RunM &r, uint32_t dirty_pages,
                        bool prev_free) {
        nfree_runs_++;
        if (prev_free)
            finding(rw + ": free run next to another free run (not coalesced)");
        if (r.ndirty != dirty_pages)
            finding(rw + format(": ndirty %u, %u pages marked dirty", r.ndirty, dirty_pages));
        ndirty_ += r.ndirty;
        if (r.ndirty != 0)
            ndirty_runs_++;
    }

    void check_large_run(const std::string &rw, const RunM &r) {
        if (r.size_class < d_.nbins || r.size_class >= d_.nbins + w_.nlarge) {
            finding(rw + format(": large run of class %u", r.size_class));
            return;
        }
        if (uint64_t{r.npages} * d_.page_size != w_.class_size[r.size_class])
            finding(rw + format(": large run of %u pages in class ", r.npages) +
                    std::to_string(w_.class_size[r.size_class]));
        large_runs_[r.size_class - d_.nbins]++;
        allocated_large_ += uint64_t{r.npages} * d_.page_size;
    }

    void check_small_run(const std::string &rw, const RunM &r) {
        if (r.size_class >= d_.nbins) {
            finding(rw + format(": small run of class %u", r.size_class));
            return;
        }
        const aa_walker::BinInfoM &bi = w_.bin_info[r.size_class];
        if (r.region_size != bi.region_size || r.nregs != bi.nregs || r.npages != bi.run_pages)
            finding(rw + format(": geometry %u bytes x %u regions in %u pages; class %u "
                                "has %u x %u in %u",
                                r.region_size, r.nregs, r.npages, r.size_class, bi.region_size,
                                bi.nregs, bi.run_pages));
        unsigned bits = popcount(r.bitmap);
        if (bits != r.nfree)
            finding(rw + format(": bitmap has %u free regions, nfree says %u", bits, r.nfree));
        for (uint32_t reg = bi.nregs; reg < r.bitmap.size() * 64; reg++)
            if (r.is_free_region(reg)) {
                finding(rw + format(": bitmap bit %u set beyond the %u regions", reg, bi.nregs));
                break;
            }
        curruns_[r.size_class]++;
        curregs_[r.size_class] += r.nregs - (r.nfree <= r.nregs ? r.nfree : r.nregs);
    }

    // --- the arena's counters and lists ------------------------------------------

    // Arena totals against what the chunks hold.
    void check_counters() {
        uint64_t nchunks = w_.arena_stat(ar_, d_.arena_stats.nchunks);
        if (nchunks != a_.chunks.size())
            finding(format("stats say %llu chunks, its list has %zu", (ull)nchunks,
                           a_.chunks.size()));
        if (ar_.get(d_.arena.nempty_chunks) != nempty_)
            finding(format("nempty_chunks %llu, %llu chunks are empty",
                           (ull)ar_.get(d_.arena.nempty_chunks), (ull)nempty_));
        if (ar_.get(d_.arena.nactive) != nactive_)
            finding(format("nactive %llu pages, runs in use hold %llu",
                           (ull)ar_.get(d_.arena.nactive), (ull)nactive_));
        if (ar_.get(d_.arena.ndirty) != ndirty_)
            finding(format("ndirty %llu pages, free runs hold %llu", (ull)ar_.get(d_.arena.ndirty),
                           (ull)ndirty_));
        uint64_t allocated_large = w_.arena_stat(ar_, d_.arena_stats.allocated_large);
        if (allocated_large != allocated_large_)
            finding(format("allocated_large %llu, large runs hold %llu", (ull)allocated_large,
                           (ull)allocated_large_));
    }

    void check_bins() {
        uint64_t allocated_small = 0, kept_pages = 0;
        for (unsigned b = 0; b < d_.nbins; b++)
            check_bin(b, &allocated_small, &kept_pages);
        if (ar_.get(d_.arena.nkept) != kept_pages)
            finding(format("nkept %llu pages, the bins' empty lists hold %llu",
                           (ull)ar_.get(d_.arena.nkept), (ull)kept_pages));
        uint64_t recorded = w_.arena_stat(ar_, d_.arena_stats.allocated_small);
        if (recorded != allocated_small)
            finding(format("allocated_small %llu, bins hold %llu", (ull)recorded,
                           (ull)allocated_small));
    }

    void check_bin(unsigned b, uint64_t *allocated_small, uint64_t *kept_pages) {
        aa_bin_stats s;
        w_.bin_stats(ar_, b, &s);
        *allocated_small += s.curregs * s.region_size;
        if (s.curruns != curruns_[b])
            finding(format("bin %u: curruns %llu, %llu small runs found", b, (ull)s.curruns,
                           (ull)curruns_[b]));
        if (s.curregs != curregs_[b])
            finding(format("bin %u: nmalloc - ndalloc = %llu, bitmaps have %llu regions in use",
                           b, (ull)s.curregs, (ull)curregs_[b]));
        size_t base = w_.bin_base(b);
        uint64_t cur = ar_.get(d_.bin.current, base);
        if (cur != 0 && !is_bin_run(cur, b))
            finding(format("bin %u: current run ", b) + hex(cur) +
                    " is not a small run of this class in this arena");
        check_bin_list(b, ar_.get(d_.bin.nonfull, base), "non-full",
                       [](const RunM &run) { return run.nfree != 0 && run.nfree < run.nregs; },
                       nullptr);
        // The empty list: runs kept, with every region free, for the next
        // refill; the arena counts their pages in nkept.
        check_bin_list(b, ar_.get(d_.bin.empty, base), "empty",
                       [](const RunM &run) { return run.nfree == run.nregs; }, kept_pages);
    }

    bool is_bin_run(uint64_t desc, unsigned b) const {
        const RunM *run = arena_run(desc, d_.page_map.tag_small);
        return run != nullptr && run->size_class == b;
    }

    // A list of the bin's runs: each a small run of this class in this
    // arena whose free count `fits' accepts (the pages of each added to
    // *pages when given).
    void check_bin_list(unsigned b, uint64_t head, const char *name, bool (*fits)(const RunM &),
                        uint64_t *pages) {
        std::set<uint64_t> seen;
        for (uint64_t r = head; r != 0;) {
            if (!seen.insert(r).second || seen.size() > kListLimit) {
                finding(format("bin %u: %s list loops", b, name));
                break;
            }
            if (!is_bin_run(r, b)) {
                finding(format("bin %u: %s list holds ", b, name) + hex(r) +
                        ", not a small run of this class in this arena");
                break;
            }
            const RunM &run = *runs_.at(r);
            if (!fits(run))
                finding(format("bin %u: run ", b) + hex(r) +
                        format(" on the %s list has %u of %u regions free", name, run.nfree,
                               run.nregs));
            if (pages != nullptr)
                *pages += run.npages;
            r = run.next;
        }
    }

    void check_large_classes() {
        for (unsigned l = 0; l < w_.nlarge; l++) {
            aa_large_stats s;
            w_.large_stats(ar_, l, &s);
            if (s.curruns != large_runs_[l])
                finding(format("large class %llu: curruns %llu, %llu runs found", (ull)s.size,
                               (ull)s.curruns, (ull)large_runs_[l]));
        }
    }

    // Free buckets: every free run on exactly one, nothing else on them.
    void check_free_buckets() {
        uint64_t on_buckets = 0;
        std::set<uint64_t> bucketed;
        for (uint64_t c = 0; c < d_.nclasses; c++) {
            for (uint64_t r = ar_.word_at(d_.arena.free_buckets.offset + c * ar_.fmt.word_size); r != 0;) {
                if (!bucketed.insert(r).second || bucketed.size() > kListLimit) {
                    finding(format("free bucket %llu: run ", (ull)c) + hex(r) + " listed twice");
                    break;
                }
                const RunM *run = arena_run(r, d_.page_map.tag_free);
                if (run == nullptr) {
                    finding(format("free bucket %llu holds ", (ull)c) + hex(r) +
                            ", not a free run of this arena");
                    break;
                }
                on_buckets++;
                r = run->next;
            }
        }
        if (on_buckets != nfree_runs_)
            finding(format("%llu free runs in the chunks, %llu on the free buckets",
                           (ull)nfree_runs_, (ull)on_buckets));
    }

    void check_dirty_list() {
        uint64_t on_dirty = 0;
        std::set<uint64_t> seen;
        for (uint64_t r = ar_.get(d_.arena.dirty_first); r != 0;) {
            if (!seen.insert(r).second || seen.size() > kListLimit) {
                finding("dirty list loops");
                break;
            }
            const RunM *run = arena_run(r, d_.page_map.tag_free);
            if (run == nullptr || run->ndirty == 0) {
                finding("dirty list holds " + hex(r) + ", not a dirty free run of this arena");
                break;
            }
            on_dirty++;
            r = run->dirty_next;
        }
        if (on_dirty != ndirty_runs_)
            finding(format("%llu free runs have dirty pages, %llu are on the dirty list",
                           (ull)ndirty_runs_, (ull)on_dirty));
    }
};

// --- thread caches --------------------------------------------------------------

// What is wrong with the block at p in a cache's class b stack (the text
// after its address), or "".
std::string cached_block_problem(aa_walker &w, uint64_t p, unsigned b) {
    // A large class's entry is a whole run, still counted out by its arena
    // like a cached small region.
    bool large = b >= w.d.nbins;
    aa_find_result r;
    w.find(p, &r);
    if (r.state != AA_STATE_TCACHE && r.state != AA_STATE_ALLOCATED)
        return std::string(" is ") + state_text(r.state) +
               (large ? ", not a large block" : ", not a region") + " the arena handed out";
    // (The free mark cannot be checked: only blocks freed into the cache
    // carry it, not those a fill brought from the arena.)
    if (large) {
        uint64_t tag = w.read_u(r.page_map_entry,
                                static_cast<uint32_t>(w.d.chunk.page_map_entry_size)) &
                       w.d.page_map.tag_mask;
        if (tag != w.d.page_map.tag_large || r.run != p || r.size_class != b ||
            r.size != w.class_size[b])
            return format(" is not the start of a large run of class %u (%llu bytes)", b,
                          (ull)w.class_size[b]);
    } else if (r.region_start != p || r.size_class != b) {
        return " is not the start of a class " + std::to_string(b) + " region";
    }
    return "";
}

// Every cached block once, in a live thread's cache, and the start of a
// block its class's arena handed out.
void verify_tcaches(aa_walker &w, Findings *f) {
    std::set<uint64_t> cached;
    for (const TCacheM &t : w.read_tcaches()) {
        for (unsigned b = 0; b < t.stacks.size(); b++) {
            std::string tw = "thread cache " + hex(t.addr) + format(" class %u", b);
            if (t.exited && !t.stacks[b].empty())
                f->push_back(tw + ": cache of an exited thread holds regions");
            for (uint64_t p : t.stacks[b]) {
                if (!cached.insert(p).second) {
                    f->push_back(tw + ": " + hex(p) + " is cached twice");
                    continue;
                }
                std::string problem = cached_block_problem(w, p, b);
                if (!problem.empty())
                    f->push_back(tw + ": " + hex(p) + problem);
            }
        }
    }
}

// --- huge blocks and the registry ---------------------------------------------

// The live huge list against the huge counters and the registry.
void verify_huge(aa_walker &w, const std::vector<HugeM> &huge, Findings *f) {
    const struct arenalloc_debug_descriptor &d = w.d;
    Obj hs = w.obj(d.huge_stats.addr.u64, d.huge_stats_layout.size);
    uint64_t usize = 0, mapped = 0;
    for (const HugeM &h : huge) {
        usize += h.usize;
        mapped += h.mapped;
        uint64_t owner = w.registry_lookup(h.addr);
        if (owner != (h.desc | d.registry.tag_huge))
            f->push_back("huge block " + hex(h.addr) + ": the chunk registry maps it to " +
                         hex(owner));
        if (h.usize > h.mapped || h.usize % d.page_size != 0)
            f->push_back("huge block " + hex(h.addr) +
                         format(": usable size %llu, mapped %llu", (ull)h.usize, (ull)h.mapped));
    }
    uint64_t live = hs.get(d.huge_stats_layout.nmalloc) - hs.get(d.huge_stats_layout.ndalloc);
    if (live != huge.size())
        f->push_back(format("huge: %llu live by the counters, %zu on the list", (ull)live,
                            huge.size()));
    if (hs.get(d.huge_stats_layout.allocated) != usize || hs.get(d.huge_stats_layout.mapped) != mapped)
        f->push_back(format("huge: stats say %llu bytes (%llu mapped), the list holds %llu (%llu)",
                            (ull)hs.get(d.huge_stats_layout.allocated),
                            (ull)hs.get(d.huge_stats_layout.mapped), (ull)usize, (ull)mapped));
}

// The registry against the arenas' chunks and the huge list: every entry
// names a chunk or huge block that contains its granule, and each of those
// has all its granules registered.
class RegistryCheck {
public:
    RegistryCheck(aa_walker &w, const std::set<uint64_t> &chunks, const std::vector<HugeM> &huge,
                  Findings *f)
        : w_(w), d_(w.d), chunks_(chunks), huge_(huge), f_(f) {
        for (const HugeM &h : huge)
            huge_by_desc_[h.desc] = &h;
    }

    void run() {
        uint64_t root_slots = uint64_t{1} << d_.registry.root_bits;
        std::vector<uint64_t> root = w_.read_words(d_.registry.root.addr.u64, root_slots);
        for (uint64_t i = 0; i < root_slots; i++) {
            uint64_t leaf = root[i];
            if (leaf != 0)
                check_leaf(i, leaf);
        }
        check_coverage();
    }

private:
    aa_walker &w_;
    const struct arenalloc_debug_descriptor &d_;
    const std::set<uint64_t> &chunks_;
    const std::vector<HugeM> &huge_;
    Findings *f_;
    std::map<uint64_t, const HugeM *> huge_by_desc_;
    std::map<uint64_t, uint64_t> granules_;  // owner -> granules registered

    void check_leaf(uint64_t i, uint64_t leaf_addr) {
        uint64_t leaf_slots = uint64_t{1} << d_.registry.leaf_bits;
        std::vector<uint64_t> leaf = w_.read_words(leaf_addr, leaf_slots);
        for (uint64_t j = 0; j < leaf_slots; j++) {
            uint64_t v = leaf[j];
            if (v != 0)
                check_entry(((i << d_.registry.leaf_bits) | j) << d_.registry.lg_granule, v);
        }
    }

    // One granule's entry v; a missing owner is reported at its first
    // granule only.
    void check_entry(uint64_t addr, uint64_t v) {
        uint64_t tag = v & d_.registry.tag_mask, target = v & ~d_.registry.tag_mask;
        granules_[v]++;
        if (tag == d_.registry.tag_chunk) {
            if (chunks_.count(target) == 0) {
                if (granules_[v] == 1)
                    f_->push_back("registry: " + hex(addr) + " maps to chunk " + hex(target) +
                                  ", which no arena lists");
            } else if (addr < target || addr >= target + w_.chunk_size) {
                f_->push_back("registry: " + hex(addr) + " maps to chunk " + hex(target) +
                              ", which does not contain it");
            }
        } else if (tag == d_.registry.tag_huge) {
            auto it = huge_by_desc_.find(target);
            if (it == huge_by_desc_.end()) {
                if (granules_[v] == 1)
                    f_->push_back("registry: " + hex(addr) + " maps to huge descriptor " +
                                  hex(target) + ", which is not on the live list");
            } else if (addr < it->second->addr || addr >= it->second->addr + it->second->mapped) {
                f_->push_back("registry: " + hex(addr) + " maps to huge block " +
                              hex(it->second->addr) + ", which does not contain it");
            }
        } else {
            f_->push_back("registry: " + hex(addr) + " has the bad entry " + hex(v));
        }
    }

    void check_coverage() {
        uint64_t granule = uint64_t{1} << d_.registry.lg_granule;
        for (uint64_t c : chunks_)
            if (granules_[c | d_.registry.tag_chunk] != w_.chunk_size / granule)
                f_->push_back("registry: chunk " + hex(c) +
                              format(" has %llu of its %llu granules registered",
                                     (ull)granules_[c | d_.registry.tag_chunk],
                                     (ull)(w_.chunk_size / granule)));
        for (const HugeM &h : huge_)
            if (granules_[h.desc | d_.registry.tag_huge] != h.mapped / granule)
                f_->push_back("registry: huge block " + hex(h.addr) +
                              format(" has %llu of its %llu granules registered",
                                     (ull)granules_[h.desc | d_.registry.tag_huge],
                                     (ull)(h.mapped / granule)));
    }
};

}  // namespace

void aa_walker::verify(std::vector<std::string> *f) {
    if (!initialized)
        return;
    std::vector<ArenaM> arenas = read_arenas();
    verify_tcaches(*this, f);
    std::set<uint64_t> chunks;
    for (const ArenaM &a : arenas) {
        ArenaCheck(*this, a, f).run();
        for (const ChunkM &c : a.chunks)
            chunks.insert(c.addr);
    }
    std::vector<HugeM> huge = read_huge();
    verify_huge(*this, huge, f);
    RegistryCheck(*this, chunks, huge, f).run();
}
