// Unit tests of statistics (lib/stats.h): arena and heap snapshots after
// known allocations, and the report in text and JSON (well formed, the
// same figures as the snapshot, sections left out as asked).
#include <atf-c++.hpp>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "allocator.h"
#include "arena.h"
#include "chunk.h"
#include "init.h"
#include "options.h"
#include "idle_arena.h"
#include "require_msg.h"
#include "size_classes.h"
#include "stats.h"
#include "tcache.h"

using namespace arenalloc;

namespace {

void append(void *out, const char *s) { static_cast<std::string *>(out)->append(s); }

std::string report(const char *opts) {
    std::string out;
    stats_print(append, &out, opts);
    return out;
}

bool contains(const std::string &s, const std::string &what) { return s.find(what) != std::string::npos; }

// A strict reader of the JSON grammar (objects, arrays, strings, numbers,
// literals); true when text is one value and nothing else.
class JsonChecker {
  public:
    explicit JsonChecker(const std::string &text) : s_(text), i_(0) {}
    bool whole() {
        if (!value())
            return false;
        space();
        return i_ == s_.size();
    }

  private:
    void space() {
        while (i_ < s_.size() && isspace(static_cast<unsigned char>(s_[i_])))
            i_++;
    }
    bool eat(char c) {
        space();
        if (i_ < s_.size() && s_[i_] == c) {
            i_++;
            return true;
        }
        return false;
    }
    bool string() {
        if (!eat('"'))
            return false;
        while (i_ < s_.size() && s_[i_] != '"') {
            if (static_cast<unsigned char>(s_[i_]) < 0x20)
                return false;
            if (s_[i_] == '\\')
                i_++;
            i_++;
        }
        return i_ < s_.size() && s_[i_++] == '"';
    }
    bool number() {
        size_t start = i_;
        if (i_ < s_.size() && s_[i_] == '-')
            i_++;
        size_t digits = i_;
        while (i_ < s_.size() && isdigit(static_cast<unsigned char>(s_[i_])))
            i_++;
        if (i_ == digits || (s_[digits] == '0' && i_ - digits > 1))
            return false;  // no digits, or a leading zero
        return i_ > start;
    }
    bool literal(const char *word) {
        size_t n = strlen(word);
        if (s_.compare(i_, n, word) != 0)
            return false;
        i_ += n;
        return true;
    }
    bool value() {
        space();
        if (i_ >= s_.size())
            return false;
        char c = s_[i_];
        if (c == '{') {
            i_++;
            if (eat('}'))
                return true;
            do {
                if (!string() || !eat(':') || !value())
                    return false;
            } while (eat(','));
            return eat('}');
        }
        if (c == '[') {
            i_++;
            if (eat(']'))
                return true;
            do {
                if (!value())
                    return false;
            } while (eat(','));
            return eat(']');
        }
        if (c == '"')
            return string();
        if (c == 't' || c == 'f' || c == 'n')
            return literal("true") || literal("false") || literal("null");
        return number();
    }

    const std::string &s_;
    size_t i_;
};

}  // namespace

// A large block of 8 pages (32 KiB with 4 KiB pages), and one too big
// for the thread caches (192 KiB with 4 KiB pages), which a free gives
// back to its arena.
const size_t kLargeBlock = 8 * kPage;
const size_t kUncachedLarge = 3 * kTcacheLargeMax;

ATF_TEST_CASE_WITHOUT_HEAD(stats__arena_snapshot_after_known_allocations);
ATF_TEST_CASE_BODY(stats__arena_snapshot_after_known_allocations) {
    Arena *a = idle_arena(1);
    const unsigned bin = size_to_class(64);
    const unsigned cls = size_to_class(kLargeBlock);
    for (int i = 0; i < 10; i++)
        ATF_REQUIRE(arena_malloc_small(a, bin, false) != nullptr);
    void *big[2];
    for (void *&p : big) {
        p = arena_malloc_large(a, cls, kPage, false);
        ATF_REQUIRE(p != nullptr);
        ATF_REQUIRE_EQ(chunk_containing(p)->arena, a);
    }
    std::unique_ptr<ArenaSnapshot> s(new ArenaSnapshot);
    ATF_REQUIRE(stats_arena(1, s.get()));
    ATF_REQUIRE_EQ(s->index, 1u);
    ATF_REQUIRE_EQ(s->allocated_small, 640u);
    ATF_REQUIRE_EQ(s->allocated_large, 2 * kLargeBlock);
    ATF_REQUIRE_EQ(s->nmalloc_small, 10u);
    ATF_REQUIRE_EQ(s->nmalloc_large, 2u);
    ATF_REQUIRE_EQ(s->ndalloc_large, 0u);
    const BinSnapshot &b = s->bins[bin];
    ATF_REQUIRE_EQ(b.region_size, 64u);
    ATF_REQUIRE_EQ(b.nregs, bin_info(bin).nregs);
    ATF_REQUIRE_EQ(b.nmalloc, 10u);
    ATF_REQUIRE_EQ(b.curregs, 10u);
    ATF_REQUIRE_EQ(b.curruns, 1u);
    ATF_REQUIRE_EQ(b.run_size, uint64_t{bin_info(bin).run_pages} * kPage);
    const LargeSnapshot &l = s->large[cls - kNumBins];
    ATF_REQUIRE_EQ(l.size, kLargeBlock);
    ATF_REQUIRE_EQ(l.nmalloc, 2u);
    ATF_REQUIRE_EQ(l.curruns, 2u);
    // One small run and two large blocks in use.
    ATF_REQUIRE_EQ(s->active, b.run_size + 2 * kLargeBlock);
    ATF_REQUIRE(s->mapped >= g_chunk.chunk_size);
    ATF_REQUIRE_EQ(s->mapped % g_chunk.chunk_size, 0u);
    ATF_REQUIRE(s->resident >= s->active);

    arena_free(chunk_containing(big[0]), big[0], "free");
    ATF_REQUIRE(stats_arena(1, s.get()));
    ATF_REQUIRE_EQ(s->allocated_large, kLargeBlock);
    ATF_REQUIRE_EQ(s->ndalloc_large, 1u);
    ATF_REQUIRE_EQ(s->large[cls - kNumBins].curruns, 1u);
    ATF_REQUIRE_EQ(s->dirty, kLargeBlock);  // freed pages count as dirty, written or not
}

ATF_TEST_CASE_WITHOUT_HEAD(stats__missing_arenas);
ATF_TEST_CASE_BODY(stats__missing_arenas) {
    ATF_REQUIRE(ensure_initialized());
    std::unique_ptr<ArenaSnapshot> s(new ArenaSnapshot);
    ATF_REQUIRE(arena_peek(g_narenas - 1) == nullptr);
    ATF_REQUIRE(!stats_arena(g_narenas - 1, s.get()));
    ATF_REQUIRE(!stats_arena(g_narenas, s.get()));
    ATF_REQUIRE(!stats_arena(kMaxArenas + 1, s.get()));
}

ATF_TEST_CASE_WITHOUT_HEAD(stats__heap_totals);
ATF_TEST_CASE_BODY(stats__heap_totals) {
    aa_free(aa_malloc(1));
    HeapSnapshot h0;
    ATF_REQUIRE(stats_heap(&h0));
    ATF_REQUIRE_EQ(h0.narenas, g_narenas);
    ATF_REQUIRE(h0.narenas_used >= 1);
    void *huge = aa_malloc(size_t{5} << 20);
    void *large = aa_malloc(kUncachedLarge);
    ATF_REQUIRE(huge != nullptr && large != nullptr);
    HeapSnapshot h1;
    ATF_REQUIRE(stats_heap(&h1));
    ATF_REQUIRE_EQ(h1.huge_nmalloc, h0.huge_nmalloc + 1);
    ATF_REQUIRE_EQ(h1.huge_cur, h0.huge_cur + 1);
    ATF_REQUIRE_EQ(h1.huge_allocated, h0.huge_allocated + (size_t{5} << 20));
    ATF_REQUIRE_EQ(h1.allocated, h0.allocated + (size_t{5} << 20) + kUncachedLarge);
    ATF_REQUIRE(h1.mapped >= h1.resident);
    ATF_REQUIRE(h1.active >= h1.allocated - h1.huge_allocated);
    ATF_REQUIRE(h1.metadata > 0);
    aa_free(huge);
    aa_free(large);
    HeapSnapshot h2;
    ATF_REQUIRE(stats_heap(&h2));
    ATF_REQUIRE_EQ(h2.huge_ndalloc, h0.huge_ndalloc + 1);
    ATF_REQUIRE_EQ(h2.allocated, h0.allocated);
}

ATF_TEST_CASE_WITHOUT_HEAD(stats__text_report);
ATF_TEST_CASE_BODY(stats__text_report) {
    Arena *a = idle_arena(1);
    ATF_REQUIRE(arena_malloc_small(a, size_to_class(64), false) != nullptr);
    HeapSnapshot h;
    ATF_REQUIRE(stats_heap(&h));
    std::string all = report("");
    ATF_REQUIRE_EQ(all.rfind("___ Begin arenalloc statistics ___\n", 0), 0u);
    const std::string end = "--- End arenalloc statistics ---\n";
    ATF_REQUIRE(all.size() > end.size());
    ATF_REQUIRE_EQ(all.substr(all.size() - end.size()), end);
    ATF_REQUIRE(contains(all, "Version: arenalloc "));
    ATF_REQUIRE(contains(all, "Allocated: " + std::to_string(h.allocated) + ", "));
    ATF_REQUIRE(contains(all, "arena 1: threads "));
    ATF_REQUIRE(contains(all, "  bin   size"));
    ATF_REQUIRE(contains(all, "  large class"));
    // Letters leave sections out.
    ATF_REQUIRE(!contains(report("g"), "Version:"));
    ATF_REQUIRE(!contains(report("t"), "Allocated: "));
    // More than one arena in use: the merged arenas, unless m.
    ATF_REQUIRE(h.narenas_used > 1);
    ATF_REQUIRE(contains(all, "merged: threads "));
    ATF_REQUIRE(!contains(report("m"), "merged: "));
    ATF_REQUIRE(contains(report("m"), "Allocated: "));
    ATF_REQUIRE(!contains(report("x"), "; lock: "));
    ATF_REQUIRE(!contains(report("a"), "arena 1: "));
    std::string no_bins = report("b");
    ATF_REQUIRE(contains(no_bins, "arena 1: "));
    ATF_REQUIRE(!contains(no_bins, "  bin   size"));
    ATF_REQUIRE(!contains(report("l"), "  large class"));
}

ATF_TEST_CASE_WITHOUT_HEAD(stats__json_report);
ATF_TEST_CASE_BODY(stats__json_report) {
    Arena *a = idle_arena(1);
    ATF_REQUIRE(arena_malloc_small(a, size_to_class(64), false) != nullptr);
    ATF_REQUIRE(arena_malloc_large(a, size_to_class(kLargeBlock), kPage, false) != nullptr);
    HeapSnapshot h;
    ATF_REQUIRE(stats_heap(&h));
    // arenalloc's own layout (A), and jemalloc's (J).
    for (const char *opts : {"A", "Ag", "Aa", "Ab", "Al", "Agmabl", "AJ"}) {
        std::string json = report(opts);
        ATF_REQUIRE_MSG(JsonChecker(json).whole(), opts << ": not JSON:\n" << json);
        ATF_REQUIRE_MSG(json.rfind("{\"arenalloc\": {", 0) == 0, opts);
    }
    for (const char *opts : {"J", "Jg", "Ja", "Jm", "Jb", "Jl", "Jx", "Jgmablx"}) {
        std::string json = report(opts);
        ATF_REQUIRE_MSG(JsonChecker(json).whole(), opts << ": not JSON:\n" << json);
        ATF_REQUIRE_MSG(json.rfind("{\"jemalloc\":{", 0) == 0, opts);
    }
    std::string je = report("J");
    ATF_REQUIRE(contains(je, "\"stats\":{\"allocated\":" + std::to_string(h.allocated) + ","));
    ATF_REQUIRE(contains(je, "\"stats.arenas\":{\"merged\":{"));
    ATF_REQUIRE(contains(je, "\"1\":{\"nthreads\":"));
    std::string json = report("A");
    ATF_REQUIRE(contains(json, "\"stats\": {\"allocated\": " + std::to_string(h.allocated) + ","));
    ATF_REQUIRE(contains(json, "\"page\": " + std::to_string(kPage) + ","));
    ATF_REQUIRE(contains(json, "\"index\": 1,"));
    ATF_REQUIRE(contains(json, "\"bins\": ["));
    ATF_REQUIRE(!contains(report("Ag"), "\"config\""));
    ATF_REQUIRE(!contains(report("Aa"), "\"index\""));
    // The checker itself rejects what is not JSON.
    ATF_REQUIRE(!JsonChecker("{\"a\": 1,}").whole());
    ATF_REQUIRE(!JsonChecker("{\"a\": 01}").whole());
    ATF_REQUIRE(!JsonChecker("[1, 2").whole());
    ATF_REQUIRE(!JsonChecker("{\"a\" 1}").whole());
    ATF_REQUIRE(JsonChecker("{\"a\": [1, -2, true, null, \"x\\\"y\"]}").whole());
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, stats__arena_snapshot_after_known_allocations);
    ATF_ADD_TEST_CASE(tcs, stats__missing_arenas);
    ATF_ADD_TEST_CASE(tcs, stats__heap_totals);
    ATF_ADD_TEST_CASE(tcs, stats__text_report);
    ATF_ADD_TEST_CASE(tcs, stats__json_report);
}
