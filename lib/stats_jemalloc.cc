// stats_jemalloc.cc — the "J" report: jemalloc 5.3's JSON key layout,
// filled with arenalloc's figures.  Each key path, read with dots
// ("stats.arenas" + ".0.bins.3.curregs"), is the mallctl name that gives
// the same figure, so a tool can use either; what arenalloc has no
// concept for (muzzy pages, extents, HPA, destroyed arenas, profiling) is
// left out rather than written as zeros.
#include "stats_jemalloc.h"

#include <sys/types.h>

#include <cstdint>

#include "background.h"
#include "chunk.h"
#include "config.h"
#include "ctl.h"
#include "debug_assert.h"
#include "init.h"
#include "size_classes.h"
#include "util.h"

namespace arenalloc {

namespace {

// Writes JSON through the emitter, keeping track of where a comma is due.
class JsonOut {
  public:
    explicit JsonOut(Emitter &e) : e_(e) { first_[0] = true; }

    void open_object(const char *key = nullptr) { open(key, '{'); }
    void close_object() { close('}'); }
    void open_array(const char *key) { open(key, '['); }
    void close_array() { close(']'); }

    void value(const char *key, unsigned long long v) {
        start(key);
        e_.line.dec(v);
        e_.flush();
    }
    void value(const char *key, long long v) {
        start(key);
        if (v < 0)
            e_.line.chr('-').dec(0 - static_cast<unsigned long long>(v));
        else
            e_.line.dec(static_cast<unsigned long long>(v));
        e_.flush();
    }
    void value(const char *key, unsigned long v) { value(key, static_cast<unsigned long long>(v)); }
    void value(const char *key, unsigned v) { value(key, static_cast<unsigned long long>(v)); }
    void value(const char *key, long v) { value(key, static_cast<long long>(v)); }
    void value(const char *key, int v) { value(key, static_cast<long long>(v)); }
    void value(const char *key, bool v) {
        start(key);
        e_.line.str(v ? "true" : "false");
        e_.flush();
    }
    void value(const char *key, const char *v) {
        start(key);
        string(v != nullptr ? v : "");
        e_.flush();
    }

  private:
    static constexpr unsigned kMaxDepth = 8;

    void start(const char *key) {
        if (!first_[depth_])
            e_.line.chr(',');
        first_[depth_] = false;
        if (key != nullptr) {
            string(key);
            e_.line.chr(':');
        }
    }
    void open(const char *key, char bracket) {
        start(key);
        e_.line.chr(bracket);
        AA_ASSERT(depth_ + 1 < kMaxDepth);
        first_[++depth_] = true;
    }
    void close(char bracket) {
        depth_--;
        e_.line.chr(bracket);
        // A line per object keeps a reader's view of the text short.
        if (bracket == '}' && depth_ <= 4)
            e_.end();
        else
            e_.flush();
    }
    // A quoted, escaped string, sent in pieces the line buffer can hold.
    void string(const char *s) {
        e_.line.chr('"');
        for (; *s != '\0'; s++) {
            unsigned char c = static_cast<unsigned char>(*s);
            if (c == '"' || c == '\\')
                e_.line.chr('\\').chr(static_cast<char>(c));
            else if (c < 0x20)
                e_.line.str("\\u00").chr("0123456789abcdef"[c >> 4]).chr("0123456789abcdef"[c & 15]);
            else
                e_.line.chr(static_cast<char>(c));
            if (e_.line.size() > 200)
                e_.flush();
        }
        e_.line.chr('"');
    }

    Emitter &e_;
    unsigned depth_ = 0;
    bool first_[kMaxDepth];
};

// opt.<name> as mallctl reads it, so the two never disagree.
template <typename T>
void opt_value(JsonOut &j, const char *key, const char *ctl_name) {
    T v{};
    size_t len = sizeof(v);
    if (ctl_byname(ctl_name, &v, &len, nullptr, 0) == 0)
        j.value(key, v);
}

// config.<name> as mallctl reads it (ctl.cc says what this build has).
void print_config(JsonOut &j) {
    static const char *const kConfigFlags[] = {
        "cache_oblivious", "debug", "fill", "lazy_lock", "opt_safety_checks", "prof",
        "prof_libgcc", "prof_libunwind", "stats", "utrace", "xmalloc",
    };
    j.open_object("config");
    char name[48];
    for (const char *flag : kConfigFlags) {
        LineBuffer line(name, sizeof(name) - 1);
        line.str("config.").str(flag);
        name[line.size()] = '\0';
        opt_value<bool>(j, flag, name);
    }
    opt_value<const char *>(j, "malloc_conf", "config.malloc_conf");
    j.close_object();
}

void print_opt(JsonOut &j) {
    j.open_object("opt");
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) \
    opt_value<ctl_type>(j, #name, "opt." #name);
#define AA_DERIVED_OPT(name, ctl_type, text) opt_value<ctl_type>(j, #name, "opt." #name);
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) \
    opt_value<const char *>(j, #name, "opt." #name);
#include "option_list.h"
    j.close_object();
}

unsigned large_classes_in_use() {
    unsigned n = 0;
    while (n < kNumLargeClasses && class_to_size(kNumBins + n) <= g_chunk.large_max)
        n++;
    return n;
}

void print_arenas(JsonOut &j) {
    j.open_object("arenas");
    j.value("narenas", g_narenas);
    j.value("page", static_cast<unsigned long>(kPage));
    j.value("quantum", static_cast<unsigned long>(kQuantum));
    j.value("chunksize", static_cast<unsigned long>(g_chunk.chunk_size));
    opt_value<ssize_t>(j, "dirty_decay_ms", "arenas.dirty_decay_ms");
    opt_value<ssize_t>(j, "muzzy_decay_ms", "arenas.muzzy_decay_ms");
    opt_value<size_t>(j, "tcache_max", "arenas.tcache_max");
    opt_value<unsigned>(j, "nhbins", "arenas.nhbins");
    j.value("nbins", kNumBins);
    j.open_array("bin");
    for (unsigned b = 0; b < kNumBins; b++) {
        const BinInfo &info = bin_info(b);
        j.open_object();
        j.value("size", static_cast<unsigned long>(info.region_size));
        j.value("nregs", static_cast<unsigned>(info.nregs));
        j.value("slab_size", static_cast<unsigned long>(info.run_pages) << kLgPage);
        j.close_object();
    }
    j.close_array();
    unsigned nlextents = large_classes_in_use();
    j.value("nlextents", nlextents);
    j.open_array("lextent");
    for (unsigned l = 0; l < nlextents; l++) {
        j.open_object();
        j.value("size", static_cast<unsigned long>(class_to_size(kNumBins + l)));
        j.close_object();
    }
    j.close_array();
    j.close_object();
}

// One figure of an object: jemalloc's key, the snapshot's field.
template <typename Snapshot>
struct Field {
    const char *key;
    uint64_t Snapshot::*member;
};

constexpr Field<BinSnapshot> kBinFields[] = {
    {"nmalloc", &BinSnapshot::nmalloc},   {"ndalloc", &BinSnapshot::ndalloc},
    {"curregs", &BinSnapshot::curregs},   {"nrequests", &BinSnapshot::nrequests},
    {"nfills", &BinSnapshot::nfills},     {"nflushes", &BinSnapshot::nflushes},
    {"nslabs", &BinSnapshot::nruns},      {"curslabs", &BinSnapshot::curruns},
    {"nreslabs", &BinSnapshot::nreslabs},
};

// A large class's requests are its allocations: no cache stands between.
constexpr Field<LargeSnapshot> kLargeFields[] = {
    {"nmalloc", &LargeSnapshot::nmalloc},   {"ndalloc", &LargeSnapshot::ndalloc},
    {"nrequests", &LargeSnapshot::nmalloc}, {"curlextents", &LargeSnapshot::curruns},
};

// Blocks with their own mapping belong to no arena.
constexpr Field<HeapSnapshot> kHugeFields[] = {
    {"allocated", &HeapSnapshot::huge_allocated}, {"nmalloc", &HeapSnapshot::huge_nmalloc},
    {"ndalloc", &HeapSnapshot::huge_ndalloc},     {"cached", &HeapSnapshot::huge_cached},
};

constexpr Field<ArenaSnapshot> kArenaLargeFields[] = {
    {"allocated", &ArenaSnapshot::allocated_large}, {"nmalloc", &ArenaSnapshot::nmalloc_large},
    {"ndalloc", &ArenaSnapshot::ndalloc_large},     {"nrequests", &ArenaSnapshot::nmalloc_large},
};

// An object of those figures, under key (nullptr: a list entry).
template <typename Snapshot, size_t N>
void print_fields(JsonOut &j, const char *key, const Snapshot &s,
                  const Field<Snapshot> (&fields)[N]) {
    j.open_object(key);
    for (const Field<Snapshot> &f : fields)
        j.value(f.key, s.*f.member);
    j.close_object();
}

void print_stats(JsonOut &j, const HeapSnapshot &h, const char *opts) {
    j.open_object("stats");
    j.value("allocated", h.allocated);
    j.value("active", h.active);
    j.value("metadata", h.metadata);
    j.value("resident", h.resident);
    j.value("mapped", h.mapped);
    j.value("retained", h.retained);
    print_fields(j, "huge", h, kHugeFields);
    j.value("zero_reallocs", g_zero_reallocs.load(std::memory_order_relaxed));
    j.open_object("background_thread");
    j.value("num_threads", static_cast<unsigned long>(background_num_threads()));
    j.value("num_runs", background_num_runs());
    j.value("run_interval", background_run_interval_ns());
    j.close_object();
    // The one global lock arenalloc has (ctl.cc: the others count nothing).
    if (!opts_has(opts, 'x')) {
        j.open_object("mutexes");
        j.open_object("ctl");
        opt_value<uint64_t>(j, "num_ops", "stats.mutexes.ctl.num_ops");
        opt_value<uint64_t>(j, "num_wait", "stats.mutexes.ctl.num_wait");
        j.close_object();
        j.close_object();
    }
    j.close_object();
}

void print_arena(JsonOut &j, const char *key, const ArenaSnapshot &a, bool merged,
                 const char *opts) {
    uint64_t nfills = 0, nflushes = 0, small_nmalloc = 0, small_ndalloc = 0, small_nrequests = 0;
    for (unsigned b = 0; b < kNumBins; b++) {
        nfills += a.bins[b].nfills;
        nflushes += a.bins[b].nflushes;
        small_nmalloc += a.bins[b].nmalloc;
        small_ndalloc += a.bins[b].ndalloc;
        small_nrequests += a.bins[b].nrequests;
    }
    j.open_object(key);
    j.value("nthreads", a.nthreads);
    j.value("uptime_ns", a.uptime_ms * 1000000);
    // The merged arenas' decay time is the one new arenas get, as mallctl
    // reports it.
    if (merged)
        opt_value<ssize_t>(j, "dirty_decay_ms", "arenas.dirty_decay_ms");
    else
        j.value("dirty_decay_ms", static_cast<long long>(a.decay_ms));
    j.value("muzzy_decay_ms", 0);  // no muzzy stage (ctl.cc)
    j.value("pmuzzy", 0);
    j.value("pactive", a.active >> kLgPage);
    j.value("pdirty", a.dirty >> kLgPage);
    j.value("dirty_npurge", a.npurge_passes);
    j.value("dirty_nmadvise", a.nmadvise);
    j.value("dirty_purged", a.npurged_pages);
    // As jemalloc counts them: nmalloc and ndalloc at the arena (cache
    // fills and flushes included), nrequests at the program.
    j.open_object("small");
    j.value("allocated", a.allocated_small);
    j.value("nmalloc", small_nmalloc);
    j.value("ndalloc", small_ndalloc);
    j.value("nrequests", small_nrequests);
    j.value("nfills", nfills);
    j.value("nflushes", nflushes);
    j.close_object();
    print_fields(j, "large", a, kArenaLargeFields);
    j.value("mapped", a.mapped);
    j.value("retained", a.retained);
    j.value("resident", a.resident);
    j.value("active", a.active);
    j.value("dirty", a.dirty);
    if (!opts_has(opts, 'x')) {
        j.open_object("mutexes");
        j.open_object("arena");
        j.value("num_ops", a.lock_acquired);
        j.value("num_wait", a.lock_contended);
        j.close_object();
        j.close_object();
    }
    if (!opts_has(opts, 'b')) {
        j.open_array("bins");
        for (unsigned b = 0; b < kNumBins; b++)
            print_fields(j, nullptr, a.bins[b], kBinFields);
        j.close_array();
    }
    if (!opts_has(opts, 'l')) {
        j.open_array("lextents");
        for (unsigned l = 0; l < a.nlarge; l++)
            print_fields(j, nullptr, a.large[l], kLargeFields);
        j.close_array();
    }
    j.close_object();
}

}  // namespace

void stats_print_jemalloc_json(Emitter &e, const HeapSnapshot &h, const ArenaSnapshot *merged,
                               ArenaSnapshot *scratch, const char *opts) {
    JsonOut j(e);
    j.open_object();
    j.open_object("jemalloc");
    j.value("version", PACKAGE_NAME " " PACKAGE_VERSION);
    if (!opts_has(opts, 'g')) {
        print_config(j);
        print_opt(j);
        print_arenas(j);
    }
    print_stats(j, h, opts);
    bool per_arena = !opts_has(opts, 'a');
    if (merged != nullptr || per_arena) {
        j.open_object("stats.arenas");
        if (merged != nullptr)
            print_arena(j, "merged", *merged, true, opts);
        for (unsigned i = 0; i < g_narenas && per_arena; i++) {
            if (!stats_arena(i, scratch))
                continue;
            char key[12];
            LineBuffer name(key, sizeof(key) - 1);
            name.dec(i);
            key[name.size()] = '\0';
            print_arena(j, key, *scratch, false, opts);
        }
        j.close_object();
    }
    j.close_object();
    j.close_object();
}

}  // namespace arenalloc
