// Unit tests of the heap walker (tools/walker), on this process's own
// arenalloc heap (the internal API; the test itself runs on the system
// allocator).  The read callback copies this process's memory, and can lay
// patches over it or refuse ranges: a corrupted or unreadable heap without
// corrupting the real one.
#include <atf-c++.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "allocator.h"
#include "arena.h"
#include "arenalloc_walker.h"
#include "chunk.h"
#include "debug_descriptor.h"
#include "init.h"
#include "require_msg.h"
#include "run.h"
#include "stats.h"
#include "tcache.h"
#include "thread_state.h"

using namespace arenalloc;

namespace {

// A pointer as the walker takes it: converted through uintptr_t, since a
// 32-bit compiler sign-extends a pointer cast straight to uint64_t.
uint64_t address(const void *p) { return reinterpret_cast<uintptr_t>(p); }

// What the read callback returns instead of this process's memory.
struct Patch {
    uint64_t addr;
    std::vector<uint8_t> bytes;
};

struct Self {
    std::vector<Patch> patches;
    uint64_t refuse_from = 0, refuse_to = 0;  // reads touching this fail
};

int read_self(void *ctx, uint64_t addr, void *buf, size_t len) {
    Self *s = static_cast<Self *>(ctx);
    if (addr < s->refuse_to && addr + len > s->refuse_from)
        return -1;
    memcpy(buf, reinterpret_cast<const void *>(static_cast<uintptr_t>(addr)), len);
    for (const Patch &p : s->patches)
        for (size_t i = 0; i < p.bytes.size(); i++)
            if (p.addr + i >= addr && p.addr + i < addr + len)
                static_cast<uint8_t *>(buf)[p.addr + i - addr] = p.bytes[i];
    return 0;
}

template <typename T>
Patch patch(const T *where, T value) {
    Patch p{address(where), std::vector<uint8_t>(sizeof(T))};
    memcpy(p.bytes.data(), &value, sizeof(T));
    return p;
}

uint64_t desc_addr() { return address(&arenalloc_debug_descriptor); }

aa_walker *open_walker(Self *self) {
    char err[256] = "";
    aa_walker *w = aa_walker_open(read_self, self, desc_addr(), err, sizeof(err));
    ATF_REQUIRE_MSG(w != nullptr, err);
    return w;
}

void add_finding(void *ctx, const char *text) {
    static_cast<std::vector<std::string> *>(ctx)->push_back(text);
}

std::vector<std::string> verify(aa_walker *w) {
    std::vector<std::string> f;
    int n = aa_walker_verify(w, add_finding, &f);
    ATF_REQUIRE_MSG(n >= 0, aa_walker_error(w));
    ATF_REQUIRE_EQ(static_cast<size_t>(n), f.size());
    return f;
}

bool any_contains(const std::vector<std::string> &f, const std::string &s) {
    for (const std::string &x : f)
        if (x.find(s) != std::string::npos)
            return true;
    return false;
}

std::string joined(const std::vector<std::string> &f) {
    std::string s;
    for (const std::string &x : f)
        s += x + "\n";
    return s;
}

// A heap with blocks of every kind; returns some live small blocks.
std::vector<void *> build_heap() {
    std::vector<void *> live;
    for (int i = 0; i < 300; i++)
        live.push_back(aa_malloc(8 + static_cast<size_t>(i) * 29));
    for (int i = 0; i < 300; i += 3) {
        aa_free(live[i]);
        live[i] = nullptr;
    }
    live.push_back(aa_malloc(70000));           // large
    live.push_back(aa_malloc(size_t{6} << 20));  // huge
    return live;
}

Run *run_of(const void *p) {
    Chunk *c = chunk_containing(p);
    return page_map_run(c->map[chunk_page_index(c, p)]);
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(walker__figures_equal_the_snapshots);
ATF_TEST_CASE_BODY(walker__figures_equal_the_snapshots)
{
    build_heap();
    ATF_REQUIRE(thread_set_arena(1));
    std::vector<void *> second = build_heap();  // a second arena
    HeapSnapshot h;
    ATF_REQUIRE(stats_heap(&h));  // merges this thread's cache counts
    Self self;
    aa_walker *w = open_walker(&self);
    aa_totals t;
    ATF_REQUIRE_EQ(aa_walker_totals(w, &t), 0);
    ATF_REQUIRE_EQ(t.narenas, h.narenas);
    ATF_REQUIRE_EQ(t.narenas_used, h.narenas_used);
    ATF_REQUIRE(t.narenas_used >= 2);
    ATF_REQUIRE_EQ(t.allocated, h.allocated);
    ATF_REQUIRE_EQ(t.active, h.active);
    ATF_REQUIRE_EQ(t.metadata, h.metadata);
    ATF_REQUIRE_EQ(t.resident, h.resident);
    ATF_REQUIRE_EQ(t.mapped, h.mapped);
    ATF_REQUIRE_EQ(t.retained, h.retained);
    ATF_REQUIRE_EQ(t.dirty, h.dirty);
    ATF_REQUIRE_EQ(t.nchunks, h.nchunks);
    ATF_REQUIRE_EQ(t.nmalloc, h.nmalloc);
    ATF_REQUIRE_EQ(t.nfree, h.nfree);
    ATF_REQUIRE_EQ(t.nmalloc_small, h.nmalloc_small);
    ATF_REQUIRE_EQ(t.nmalloc_large, h.nmalloc_large);
    ATF_REQUIRE_EQ(t.huge_nmalloc, h.huge_nmalloc);
    ATF_REQUIRE_EQ(t.huge_current, h.huge_cur);
    ATF_REQUIRE_EQ(t.huge_allocated, h.huge_allocated);
    ATF_REQUIRE_EQ(t.huge_mapped, h.huge_mapped);
    ATF_REQUIRE_EQ(t.huge_cached, h.huge_cached);
    ATF_REQUIRE_EQ(t.nthreads_seen, h.nthreads_seen);
    ATF_REQUIRE(t.tcaches >= 1 && t.tcache_regions > 0);
    aa_config cfg;
    ATF_REQUIRE_EQ(aa_walker_config(w, &cfg), 0);
    ATF_REQUIRE_EQ(cfg.chunk_size, g_chunk.chunk_size);
    ATF_REQUIRE_EQ(cfg.nbins, kNumBins);
    ATF_REQUIRE_EQ(cfg.large_max, g_chunk.large_max);
    static ArenaSnapshot snap;
    for (unsigned i = 0; i < g_narenas; i++) {
        aa_arena_stats s;
        int rc = aa_walker_arena(w, i, &s);
        ATF_REQUIRE_EQ(rc == 1, stats_arena(i, &snap));
        if (rc != 1)
            continue;
        ATF_REQUIRE_EQ(s.mapped, snap.mapped);
        ATF_REQUIRE_EQ(s.active, snap.active);
        ATF_REQUIRE_EQ(s.dirty, snap.dirty);
        ATF_REQUIRE_EQ(s.resident, snap.resident);
        ATF_REQUIRE_EQ(s.allocated_small, snap.allocated_small);
        ATF_REQUIRE_EQ(s.allocated_large, snap.allocated_large);
        ATF_REQUIRE_EQ(s.nmalloc_small, snap.nmalloc_small);
        ATF_REQUIRE_EQ(s.ndalloc_large, snap.ndalloc_large);
        for (unsigned b = 0; b < kNumBins; b++) {
            aa_bin_stats bs;
            ATF_REQUIRE_EQ(aa_walker_bin(w, i, b, &bs), 1);
            ATF_REQUIRE_EQ(bs.nmalloc, snap.bins[b].nmalloc);
            ATF_REQUIRE_EQ(bs.ndalloc, snap.bins[b].ndalloc);
            ATF_REQUIRE_EQ(bs.nrequests, snap.bins[b].nrequests);
            ATF_REQUIRE_EQ(bs.curruns, snap.bins[b].curruns);
            ATF_REQUIRE_EQ(bs.region_size, snap.bins[b].region_size);
        }
        for (unsigned l = 0; l < snap.nlarge; l++) {
            aa_large_stats ls;
            ATF_REQUIRE_EQ(aa_walker_large(w, i, l, &ls), 1);
            ATF_REQUIRE_EQ(ls.size, snap.large[l].size);
            ATF_REQUIRE_EQ(ls.nmalloc, snap.large[l].nmalloc);
            ATF_REQUIRE_EQ(ls.curruns, snap.large[l].curruns);
        }
    }
    ATF_REQUIRE(verify(w).empty());
    aa_walker_close(w);
}

ATF_TEST_CASE_WITHOUT_HEAD(walker__find);
ATF_TEST_CASE_BODY(walker__find)
{
    std::vector<void *> heap = build_heap();
    char *small = static_cast<char *>(aa_malloc(100));
    char *cached = static_cast<char *>(aa_malloc(100));
    char *flushed = static_cast<char *>(aa_malloc(3000));
    char *large = static_cast<char *>(aa_malloc(40000));
    char *huge = static_cast<char *>(aa_malloc(size_t{5} << 20));
    aa_free(flushed);
    tcache_flush_all(tls_thread_state.tcache);  // flushed is back in its run
    aa_free(cached);                            // cached stays in the cache
    Self self;
    aa_walker *w = open_walker(&self);
    aa_find_result r;

    ATF_REQUIRE_EQ(aa_walker_find(w, address(small + 7), &r), 0);
    ATF_REQUIRE_EQ(r.state, uint64_t{AA_STATE_ALLOCATED});
    ATF_REQUIRE_EQ(r.region_start, address(small));
    ATF_REQUIRE_EQ(r.offset, 7u);
    ATF_REQUIRE_EQ(r.size, aa_usable_size(small));
    ATF_REQUIRE_EQ(r.size_class, size_to_class(100));
    ATF_REQUIRE_EQ(r.chunk, address(chunk_containing(small)));
    ATF_REQUIRE_EQ(r.arena_index, 0u);

    ATF_REQUIRE_EQ(aa_walker_find(w, address(cached), &r), 0);
    ATF_REQUIRE_EQ(r.state, uint64_t{AA_STATE_TCACHE});
    ATF_REQUIRE_EQ(r.tcache, address(tls_thread_state.tcache));
    ATF_REQUIRE_EQ(std::string(aa_walker_state_name(r.state)), "in a thread cache");

    ATF_REQUIRE_EQ(aa_walker_find(w, address(flushed + 1), &r), 0);
    ATF_REQUIRE_EQ(r.state, uint64_t{AA_STATE_FREE});
    ATF_REQUIRE_EQ(r.region_start, address(flushed));

    ATF_REQUIRE_EQ(aa_walker_find(w, address(large + 5000), &r), 0);
    ATF_REQUIRE_EQ(r.state, uint64_t{AA_STATE_ALLOCATED});
    ATF_REQUIRE_EQ(r.region_start, address(large));
    ATF_REQUIRE_EQ(r.size, aa_usable_size(large));

    ATF_REQUIRE_EQ(aa_walker_find(w, address(huge + 100000), &r), 0);
    ATF_REQUIRE_EQ(r.state, uint64_t{AA_STATE_HUGE});
    ATF_REQUIRE_EQ(r.region_start, address(huge));
    ATF_REQUIRE_EQ(r.size, aa_usable_size(huge));

    ATF_REQUIRE_EQ(aa_walker_find(w, address(chunk_containing(small)), &r), 0);
    ATF_REQUIRE_EQ(r.state, uint64_t{AA_STATE_HEADER});

    int on_stack = 0;
    ATF_REQUIRE_EQ(aa_walker_find(w, address(&on_stack), &r), 0);
    ATF_REQUIRE_EQ(r.state, uint64_t{AA_STATE_NOT_HEAP});
    char *text = aa_walker_find_report(w, address(&on_stack), 0);
    ATF_REQUIRE(std::string(text).find("not in any arenalloc chunk") != std::string::npos);
    aa_walker_free_string(text);
    text = aa_walker_find_report(w, address(cached), 0);
    ATF_REQUIRE_MSG(std::string(text).find("; in a thread cache") != std::string::npos, text);
    aa_walker_free_string(text);

    // Iteration sees the chunk and the run of small.
    struct Seen {
        uint64_t chunk, small;
        bool chunk_seen = false, run_seen = false;
    } seen{address(chunk_containing(small)), address(small)};
    ATF_REQUIRE_EQ(aa_walker_chunks(w, [](void *ctx, const aa_chunk_info *c) {
        Seen *s = static_cast<Seen *>(ctx);
        s->chunk_seen |= c->address == s->chunk;
        return 0;
    }, &seen), 0);
    ATF_REQUIRE(seen.chunk_seen);
    ATF_REQUIRE_EQ(aa_walker_runs(w, seen.chunk, [](void *ctx, const aa_run_info *r) {
        Seen *s = static_cast<Seen *>(ctx);
        s->run_seen |= r->state == AA_RUN_SMALL && r->address <= s->small &&
                       s->small < r->address + r->npages * kPage;
        return 0;
    }, &seen), 0);
    ATF_REQUIRE(seen.run_seen);
    // An arena whose lock is held (a process stopped inside malloc) says so.
    Arena *a0 = arena_peek(0);
    aa_arena_stats as;
    ATF_REQUIRE_EQ(aa_walker_arena(w, 0, &as), 1);
    ATF_REQUIRE_EQ(as.lock_held, 0u);
    a0->mutex.lock();
    int rc = aa_walker_arena(w, 0, &as);
    a0->mutex.unlock();
    ATF_REQUIRE_EQ(rc, 1);
    ATF_REQUIRE_EQ(as.lock_held, 1u);
    unsigned nhuge = 0;
    ATF_REQUIRE_EQ(aa_walker_huge(w, [](void *ctx, const aa_huge_info *) {
        ++*static_cast<unsigned *>(ctx);
        return 0;
    }, &nhuge), 0);
    ATF_REQUIRE(nhuge >= 2);
    aa_walker_close(w);
}

ATF_TEST_CASE_WITHOUT_HEAD(walker__verify_finds_corruption);
ATF_TEST_CASE_BODY(walker__verify_finds_corruption)
{
    std::vector<void *> heap = build_heap();
    void *p = heap[1];  // live small block
    Run *r = run_of(p);
    Chunk *c = chunk_containing(p);
    Self self;
    aa_walker *w = open_walker(&self);
    std::vector<std::string> f = verify(w);
    ATF_REQUIRE_MSG(f.empty(), joined(f));
    char *text = aa_walker_verify_report(w, 0);
    ATF_REQUIRE_EQ(std::string(text), "heap OK\n");
    aa_walker_free_string(text);

    // A live region's bitmap bit flipped to "free".
    uint32_t reg = static_cast<uint32_t>((reinterpret_cast<uintptr_t>(p) - r->base) / r->region_size);
    self.patches = {patch(&r->bitmap.words[reg / 64],
                          r->bitmap.words[reg / 64] | (uint64_t{1} << (reg % 64)))};
    f = verify(w);
    ATF_REQUIRE_MSG(any_contains(f, "bitmap has"), joined(f));
    text = aa_walker_verify_report(w, 0);
    ATF_REQUIRE(std::string(text).find("heap CORRUPT: ") != std::string::npos);
    aa_walker_free_string(text);

    // The run's free count alone.
    self.patches = {patch(&r->nfree, static_cast<uint16_t>(r->nfree + 1))};
    f = verify(w);
    ATF_REQUIRE_MSG(any_contains(f, "nfree says"), joined(f));

    // A page map entry naming another run.
    uint32_t page = chunk_page_index(c, p);
    self.patches = {patch(&c->map[page], page_map_entry(run_of(heap[200]), kPageSmall))};
    f = verify(w);
    ATF_REQUIRE_MSG(!f.empty(), "a page map entry pointing elsewhere went unnoticed");

    // The arena's page count.
    Arena *a = c->arena;
    self.patches = {patch(&a->nactive, a->nactive + 1)};
    f = verify(w);
    ATF_REQUIRE_MSG(any_contains(f, "nactive"), joined(f));

    // Without the patches the heap reads as consistent again.
    self.patches = {};
    aa_walker_close(w);
    w = open_walker(&self);
    ATF_REQUIRE(verify(w).empty());
    aa_walker_close(w);
}

ATF_TEST_CASE_WITHOUT_HEAD(walker__verify_kept_runs);
ATF_TEST_CASE_BODY(walker__verify_kept_runs)
{
    // Runs kept empty for the next refill (three runs' worth of a 4 KiB
    // class, so that one besides the bin's current run falls empty) are
    // checked like the non-full lists.
    std::vector<void *> heap = build_heap();
    std::vector<void *> pages;
    for (unsigned i = 0; i < 3 * bin_info(size_to_class(4096)).nregs; i++)
        pages.push_back(aa_malloc(4096));
    tcache_flush_all(tls_thread_state.tcache);
    for (void *p : pages)
        aa_free(p);
    tcache_flush_all(tls_thread_state.tcache);
    Arena *a = chunk_containing(heap[1])->arena;
    unsigned bin = size_to_class(4096);
    ATF_REQUIRE(a->bins[bin].empty != nullptr && a->nkept > 0);
    Self self;
    aa_walker *w = open_walker(&self);
    std::vector<std::string> f = verify(w);
    ATF_REQUIRE_MSG(f.empty(), joined(f));

    // The arena's count of kept pages.
    self.patches = {patch(&a->nkept, a->nkept + 1)};
    f = verify(w);
    ATF_REQUIRE_MSG(any_contains(f, "nkept"), joined(f));

    // A run with live regions on the empty list.
    Run *live = run_of(heap[1]);
    unsigned live_bin = live->size_class;
    self.patches = {patch(&a->bins[live_bin].empty, live)};
    f = verify(w);
    ATF_REQUIRE_MSG(any_contains(f, "on the empty list has"), joined(f));

    self.patches = {};
    aa_walker_close(w);
    w = open_walker(&self);
    ATF_REQUIRE(verify(w).empty());
    aa_walker_close(w);
}

ATF_TEST_CASE_WITHOUT_HEAD(walker__cached_large_blocks);
ATF_TEST_CASE_BODY(walker__cached_large_blocks)
{
    // The smallest large classes are cached too: each entry is a whole
    // large run that its arena still counts as allocated.
    std::vector<void *> heap = build_heap();
    // The second large class (20 KiB with 4 KiB pages) where the caches
    // hold it, else the first (the only one with 16 and 64 KiB pages).
    unsigned cls = kNumBins + 1 < kNumTcacheClasses ? kNumBins + 1 : kNumBins;
    ATF_REQUIRE(cls >= kNumBins && cls < kNumTcacheClasses);
    std::vector<void *> blocks;
    for (int i = 0; i < 4; i++)
        blocks.push_back(aa_malloc(class_to_size(cls)));
    for (void *p : blocks)
        aa_free(p);
    TCache *tc = tls_thread_state.tcache;
    const TCacheBin &bin = tc->bins[cls];
    ATF_REQUIRE(bin.count() > 0);
    void *cached = bin.top[-1];  // the newest: the last block freed
    ATF_REQUIRE(cached == blocks.back());
    // What this thread's cache holds (the only cache in use here).
    uint64_t bytes = 0, blocks_cached = 0, large_bytes = 0, large_blocks = 0;
    for (unsigned b = 0; b < kNumTcacheClasses; b++) {
        uint64_t n = tc->bins[b].count();
        blocks_cached += n;
        bytes += n * class_to_size(b);
        if (b >= kNumBins) {
            large_blocks += n;
            large_bytes += n * class_to_size(b);
        }
    }
    ATF_REQUIRE(large_bytes >= uint64_t{bin.count()} * class_to_size(cls));

    Self self;
    aa_walker *w = open_walker(&self);
    aa_totals t;
    ATF_REQUIRE_EQ(aa_walker_totals(w, &t), 0);
    ATF_REQUIRE_EQ(t.tcaches, 1u);
    ATF_REQUIRE_EQ(t.tcache_regions, blocks_cached);
    ATF_REQUIRE_EQ(t.tcache_bytes, bytes);
    std::vector<std::string> f = verify(w);
    ATF_REQUIRE_MSG(f.empty(), joined(f));
    aa_find_result r;
    ATF_REQUIRE_EQ(aa_walker_find(w, address(cached) + 100, &r), 0);
    ATF_REQUIRE_EQ(r.state, uint64_t{AA_STATE_TCACHE});
    ATF_REQUIRE_EQ(r.tcache, address(tc));
    ATF_REQUIRE_EQ(r.region_start, address(cached));
    ATF_REQUIRE_EQ(r.size_class, uint64_t{cls});
    ATF_REQUIRE_EQ(r.size, uint64_t{class_to_size(cls)});
    char *text = aa_walker_find_report(w, address(cached), 0);
    ATF_REQUIRE_MSG(std::string(text).find("large block") != std::string::npos &&
                        std::string(text).find("; in a thread cache") != std::string::npos,
                    text);
    aa_walker_free_string(text);

    // A cache entry that is not the start of a large run of its class.
    self.patches = {patch(bin.top - 1, static_cast<void *>(static_cast<char *>(cached) + kPage))};
    f = verify(w);
    ATF_REQUIRE_MSG(any_contains(f, "is not the start of a large run"), joined(f));
    self.patches = {};

    // A descriptor from before tcache_nclasses was appended (version 3,
    // which differs from 4 only in a TCacheBin field the walker does not
    // read): the walker reads the small classes only, and the cached large
    // runs then read as allocated, still without a problem.
    auto old_size =
        static_cast<uint32_t>(offsetof(struct arenalloc_debug_descriptor, tcache_nclasses));
    self.patches = {patch(&arenalloc_debug_descriptor.size, old_size),
                    patch(&arenalloc_debug_descriptor.version, 3u)};
    aa_walker *old = open_walker(&self);
    aa_totals old_t;
    ATF_REQUIRE_EQ(aa_walker_totals(old, &old_t), 0);
    ATF_REQUIRE_EQ(t.tcache_bytes - old_t.tcache_bytes, large_bytes);
    ATF_REQUIRE_EQ(t.tcache_regions - old_t.tcache_regions, large_blocks);
    f = verify(old);
    ATF_REQUIRE_MSG(f.empty(), joined(f));
    ATF_REQUIRE_EQ(aa_walker_find(old, address(cached), &r), 0);
    ATF_REQUIRE_EQ(r.state, uint64_t{AA_STATE_ALLOCATED});
    aa_walker_close(old);
    char err[256];
    self.patches = {patch(&arenalloc_debug_descriptor.size, old_size - 8),
                    patch(&arenalloc_debug_descriptor.version, 3u)};
    ATF_REQUIRE(aa_walker_open(read_self, &self, desc_addr(), err, sizeof(err)) == nullptr);
    ATF_REQUIRE_MSG(std::string(err).find("too short") != std::string::npos, err);
    aa_walker_close(w);
}

ATF_TEST_CASE_WITHOUT_HEAD(walker__bad_descriptor);
ATF_TEST_CASE_BODY(walker__bad_descriptor)
{
    Self self;
    char err[256];
    static const uint64_t not_a_descriptor[8] = {1, 2, 3};
    ATF_REQUIRE(aa_walker_open(read_self, &self, address(not_a_descriptor),
                               err, sizeof(err)) == nullptr);
    ATF_REQUIRE_MSG(std::string(err).find("no arenalloc debug descriptor") != std::string::npos, err);
    self.patches = {patch(&arenalloc_debug_descriptor.version, 99u)};
    ATF_REQUIRE(aa_walker_open(read_self, &self, desc_addr(), err, sizeof(err)) == nullptr);
    ATF_REQUIRE_MSG(std::string(err).find("version 99") != std::string::npos, err);
    // The byte order comes from the magic: a mark that disagrees, or
    // pointers neither 4 nor 8 bytes, are refused.
    self.patches = {patch(&arenalloc_debug_descriptor.byte_order, 0x04030201u)};
    ATF_REQUIRE(aa_walker_open(read_self, &self, desc_addr(), err, sizeof(err)) == nullptr);
    ATF_REQUIRE_MSG(std::string(err).find("disagrees with its magic") != std::string::npos, err);
    self.patches = {patch(&arenalloc_debug_descriptor.pointer_size, 16u)};
    ATF_REQUIRE(aa_walker_open(read_self, &self, desc_addr(), err, sizeof(err)) == nullptr);
    ATF_REQUIRE_MSG(std::string(err).find("pointers are 16 bytes") != std::string::npos, err);
    self.patches = {};
    self.refuse_from = desc_addr();
    self.refuse_to = desc_addr() + 1;
    ATF_REQUIRE(aa_walker_open(read_self, &self, desc_addr(), err, sizeof(err)) == nullptr);
    ATF_REQUIRE_MSG(std::string(err).find("cannot read") != std::string::npos, err);
}

ATF_TEST_CASE_WITHOUT_HEAD(walker__unreadable_memory);
ATF_TEST_CASE_BODY(walker__unreadable_memory)
{
    std::vector<void *> heap = build_heap();
    Self self;
    aa_walker *w = open_walker(&self);
    // The first chunk cannot be read: verify says so, the totals (from
    // metadata memory) are still there.
    uint64_t chunk = address(chunk_containing(heap[1]));
    self.refuse_from = chunk;
    self.refuse_to = chunk + 4096;
    ATF_REQUIRE_EQ(aa_walker_verify(w, nullptr, nullptr), -1);
    ATF_REQUIRE_MSG(std::string(aa_walker_error(w)).find("cannot read") != std::string::npos,
                    aa_walker_error(w));
    aa_totals t;
    ATF_REQUIRE_EQ(aa_walker_totals(w, &t), 0);
    ATF_REQUIRE(t.allocated > 0);
    char *text = aa_walker_report(w, AA_REPORT_JSON);
    ATF_REQUIRE(text != nullptr);
    ATF_REQUIRE(std::string(text).compare(0, 14, "{\"arenalloc\": ") == 0);
    aa_walker_free_string(text);
    aa_walker_close(w);
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, walker__figures_equal_the_snapshots);
    ATF_ADD_TEST_CASE(tcs, walker__find);
    ATF_ADD_TEST_CASE(tcs, walker__verify_finds_corruption);
    ATF_ADD_TEST_CASE(tcs, walker__verify_kept_runs);
    ATF_ADD_TEST_CASE(tcs, walker__cached_large_blocks);
    ATF_ADD_TEST_CASE(tcs, walker__bad_descriptor);
    ATF_ADD_TEST_CASE(tcs, walker__unreadable_memory);
}
