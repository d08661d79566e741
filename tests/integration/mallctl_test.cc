// mallctl(), mallctlnametomib() and mallctlbymib(): every name answers with
// a value of its documented size, the errors are jemalloc's (ENOENT,
// EINVAL, EPERM), writes take effect (epoch, thread.arena, arena.<i>.purge,
// thread.tcache.flush), the statistics are exact once caches are flushed,
// and the interface survives concurrent use while the heap is under stress.
//
// Cases:
//   names__every_name_answers     the name table below, by name and by MIB
//   names__unknown_give_enoent    bad names, indices out of range, bad MIBs
//   sizes__wrong_size_gives_einval   short/long reads, bad writes
//   writes__read_only_gives_eperm    read-only names, triggers given values
//   mib__same_as_name             nametomib + bymib == byname; partial MIBs
//   epoch__allocated_follows_malloc   1 MiB malloc/free seen after epoch only
//   thread__arena_moves_thread    a malloc after the move lands in the arena
//   arena__purge_drops_dirty      arena.<i>.purge leaves pdirty 0
//   opt__follows_malloc_options   opt.* in a child run with MALLOC_OPTIONS
//   opt__jemalloc_names_follow_keys   jemalloc's opt.* names and keys
//   opt__jemalloc_names_without_concept   ENOENT for the others
//   exact__two_threads            allocated, curregs, curlextents exact
//   concurrent__with_stress       mallctl in 2 threads, malloc in 4, ~2 s
//   fork__while_refreshing        children forked mid-refresh use mallctl
//   config__build_values          config.*, arenas.tcache_max/nhbins,
//                                 max_background_threads
//   thread__tcache_enabled        off: blocks bypass the cache; on again
//   arenas__create_and_reset      a created arena serves thread.arena;
//                                 reset discards its blocks
//   arenas__reset_waits_for_caches   refused while another cache holds one
//   arena__decay_ms               dirty/muzzy decay times, per arena
//   stats__jemalloc5_names        zero_reallocs, background_thread.*,
//                                 mutexes.*, uptime, base, dirty_*
//   mib__inner_prefix             nametomib of an inner name, completed

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <atf-c++.hpp>

#include "arenalloc.h"
#include "test_util.h"

#define TU_REQUIRE_EQ(a, b) TU_REQUIRE_MSG((a) == (b), (a) << " != " << (b))

namespace {

const size_t KiB = 1024;
const size_t MiB = 1024 * KiB;
const unsigned arenas_all = 4096;  // MALLCTL_ARENAS_ALL

// --- Reading and writing values ---------------------------------------------

template <typename T>
T
get(const char *name)
{
    T v;
    memset(&v, 0xEE, sizeof(v));
    size_t len = sizeof(v);
    const int e = mallctl(name, &v, &len, NULL, 0);
    TU_REQUIRE_MSG(e == 0, "mallctl(\"" << name << "\") = " << e << " (" << strerror(e)
                                         << ")");
    TU_REQUIRE_MSG(len == sizeof(v), name << ": length " << len);
    return v;
}

template <typename T>
T
get(const std::string &name)
{
    return get<T>(name.c_str());
}

// Refreshes the statistics snapshot; returns the new epoch.
uint64_t
refresh(void)
{
    uint64_t e = 1;
    size_t len = sizeof(e);
    const int r = mallctl("epoch", &e, &len, &e, sizeof(e));
    TU_REQUIRE_MSG(r == 0, "epoch: " << r);
    return e;
}

void
flush_cache(void)
{
    const int r = mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
    TU_REQUIRE_MSG(r == 0, "thread.tcache.flush: " << r);
}

// A MIB for name (which must be complete).
struct mib_t {
    size_t v[8];
    size_t len;
};

mib_t
mib_of(const char *name)
{
    mib_t m;
    m.len = 8;
    const int r = mallctlnametomib(name, m.v, &m.len);
    TU_REQUIRE_MSG(r == 0, "mallctlnametomib(\"" << name << "\") = " << r);
    return m;
}

// Reads a value by MIB without allocating; false on any error.
template <typename T>
bool
get_mib(const mib_t &m, T *out)
{
    size_t len = sizeof(T);
    return mallctlbymib(m.v, m.len, out, &len, NULL, 0) == 0 && len == sizeof(T);
}

unsigned narenas(void) { return get<unsigned>("arenas.narenas"); }
unsigned nbins(void) { return get<unsigned>("arenas.nbins"); }
unsigned nlextents(void) { return get<unsigned>("arenas.nlextents"); }

std::string
str(unsigned v)
{
    return std::to_string(v);
}

// --- The name table ----------------------------------------------------------

struct name_info {
    std::string name;
    size_t size;
    bool trigger;  // neither read nor written (thread.tcache.flush, arena.<i>.purge)
    bool writable = false;
};

const size_t S_BOOL = sizeof(bool), S_UNSIGNED = sizeof(unsigned), S_U32 = sizeof(uint32_t),
             S_U64 = sizeof(uint64_t), S_SIZE = sizeof(size_t), S_SSIZE = sizeof(ssize_t),
             S_STR = sizeof(const char *);

// Every documented name, with <i> and <j> instantiated as given.
std::vector<name_info>
documented_names(const std::string &i, const std::string &bin, const std::string &lext)
{
    std::vector<name_info> v = {
        { "version", S_STR, false },
        { "epoch", S_U64, false },
        { "background_thread", S_BOOL, false },
        { "thread.arena", S_UNSIGNED, false },
        { "thread.tcache.flush", 0, true },
        { "thread.tcache.enabled", S_BOOL, false, true },
        { "thread.idle", 0, true },
        { "thread.allocated", S_U64, false },
        { "thread.deallocated", S_U64, false },
        { "max_background_threads", S_SIZE, false, true },
        { "config.malloc_conf", S_STR, false },
        { "opt.abort", S_BOOL, false },
        { "opt.sbrk", S_BOOL, false },
        { "opt.lg_dirty_ratio", S_SSIZE, false },
        { "opt.lg_tcache_gc", S_SSIZE, false },
        { "opt.decay_ms", S_SSIZE, false },
        { "opt.tcache_shift", S_SSIZE, false },
        { "opt.tcache", S_BOOL, false },
        { "opt.junk", S_STR, false },
        { "opt.lg_chunk", S_SIZE, false },
        { "opt.mmap", S_BOOL, false },
        { "opt.narenas", S_UNSIGNED, false },
        { "opt.stats_print", S_BOOL, false },
        { "opt.utrace", S_BOOL, false },
        { "opt.sysv", S_BOOL, false },
        { "opt.xmalloc", S_BOOL, false },
        { "opt.zero", S_BOOL, false },
        { "opt.lazy_purge", S_BOOL, false },
        { "opt.thp", S_STR, false },
        { "opt.shared_large", S_BOOL, false },
        { "opt.abort_conf", S_BOOL, false },
        { "opt.dirty_decay_ms", S_SSIZE, false },
        { "opt.muzzy_decay_ms", S_SSIZE, false },
        { "opt.metadata_thp", S_STR, false },
        { "opt.retain", S_BOOL, false },
        { "opt.percpu_arena", S_STR, false },
        { "opt.background_thread", S_BOOL, false },
        { "opt.tcache_max", S_SIZE, false },
        { "opt.stats_print_opts", S_STR, false },
        { "arena." + i + ".purge", 0, true },
        { "arena." + i + ".initialized", S_BOOL, false },
        { "arena." + i + ".decay", 0, true },
        { "arena." + i + ".muzzy_decay_ms", S_SSIZE, false, true },
        { "arenas.tcache_max", S_SIZE, false },
        { "arenas.nhbins", S_UNSIGNED, false },
        { "arenas.dirty_decay_ms", S_SSIZE, false, true },
        { "arenas.muzzy_decay_ms", S_SSIZE, false, true },
        { "arenas.narenas", S_UNSIGNED, false },
        { "arenas.page", S_SIZE, false },
        { "arenas.quantum", S_SIZE, false },
        { "arenas.chunksize", S_SIZE, false },
        { "arenas.nbins", S_UNSIGNED, false },
        { "arenas.bin." + bin + ".size", S_SIZE, false },
        { "arenas.bin." + bin + ".nregs", S_U32, false },
        { "arenas.bin." + bin + ".run_size", S_SIZE, false },
        { "arenas.bin." + bin + ".slab_size", S_SIZE, false },
        { "arenas.nlextents", S_UNSIGNED, false },
        { "arenas.lextent." + lext + ".size", S_SIZE, false },
        { "stats.allocated", S_SIZE, false },
        { "stats.active", S_SIZE, false },
        { "stats.metadata", S_SIZE, false },
        { "stats.resident", S_SIZE, false },
        { "stats.mapped", S_SIZE, false },
        { "stats.retained", S_SIZE, false },
        { "stats.huge.allocated", S_SIZE, false },
        { "stats.huge.nmalloc", S_U64, false },
        { "stats.huge.ndalloc", S_U64, false },
        { "stats.huge.cached", S_SIZE, false },
        { "stats.zero_reallocs", S_SIZE, false },
        { "stats.background_thread.num_threads", S_SIZE, false },
        { "stats.background_thread.num_runs", S_U64, false },
        { "stats.background_thread.run_interval", S_U64, false },
    };
    const char *const config_flags[] = { "cache_oblivious", "debug", "fill", "lazy_lock",
                                         "opt_safety_checks", "prof", "prof_libgcc",
                                         "prof_libunwind", "stats", "utrace", "xmalloc" };
    for (const char *c : config_flags)
        v.push_back({ std::string("config.") + c, S_BOOL, false });
    // jemalloc 5.3's global mutexes and their counters.
    const char *const mutexes[] = { "ctl", "background_thread", "max_per_bg_thd", "prof",
                                    "prof_thds_data", "prof_dump", "prof_recent_alloc",
                                    "prof_recent_dump", "prof_stats" };
    const std::vector<std::pair<std::string, size_t>> counters = {
        { "num_ops", S_U64 },        { "num_wait", S_U64 },      { "num_spin_acq", S_U64 },
        { "num_owner_switch", S_U64 }, { "total_wait_time", S_U64 },
        { "max_wait_time", S_U64 },  { "max_num_thds", S_U32 },
    };
    for (const char *m : mutexes)
        for (const auto &c : counters)
            v.push_back({ std::string("stats.mutexes.") + m + "." + c.first, c.second, false });
    const std::string sa = "stats.arenas." + i + ".";
    const std::vector<std::pair<std::string, size_t>> arena_leaves = {
        { "nthreads", S_UNSIGNED },
        { "mapped", S_SIZE },
        { "retained", S_SIZE },
        { "active", S_SIZE },
        { "dirty", S_SIZE },
        { "resident", S_SIZE },
        { "pactive", S_SIZE },
        { "pdirty", S_SIZE },
        { "npurge", S_U64 },
        { "nmadvise", S_U64 },
        { "purged", S_U64 },
        { "uptime", S_U64 },
        { "base", S_SIZE },
        { "pmuzzy", S_SIZE },
        { "dirty_npurge", S_U64 },
        { "dirty_nmadvise", S_U64 },
        { "dirty_purged", S_U64 },
        { "muzzy_npurge", S_U64 },
        { "muzzy_nmadvise", S_U64 },
        { "muzzy_purged", S_U64 },
        { "dirty_decay_ms", S_SSIZE },
        { "muzzy_decay_ms", S_SSIZE },
        { "small.allocated", S_SIZE },
        { "small.nmalloc", S_U64 },
        { "small.ndalloc", S_U64 },
        { "small.nrequests", S_U64 },
        { "small.nfills", S_U64 },
        { "small.nflushes", S_U64 },
        { "large.allocated", S_SIZE },
        { "large.nmalloc", S_U64 },
        { "large.ndalloc", S_U64 },
        { "large.nrequests", S_U64 },
        { "bins." + bin + ".nmalloc", S_U64 },
        { "bins." + bin + ".ndalloc", S_U64 },
        { "bins." + bin + ".nrequests", S_U64 },
        { "bins." + bin + ".curregs", S_SIZE },
        { "bins." + bin + ".curruns", S_SIZE },
        { "bins." + bin + ".nruns", S_U64 },
        { "bins." + bin + ".nfills", S_U64 },
        { "bins." + bin + ".nflushes", S_U64 },
        { "bins." + bin + ".nslabs", S_U64 },
        { "bins." + bin + ".curslabs", S_SIZE },
        { "bins." + bin + ".nreslabs", S_U64 },
        { "lextents." + lext + ".nmalloc", S_U64 },
        { "lextents." + lext + ".ndalloc", S_U64 },
        { "lextents." + lext + ".nrequests", S_U64 },
        { "lextents." + lext + ".curlextents", S_SIZE },
        { "mutexes.arena.num_ops", S_U64 },
        { "mutexes.arena.num_wait", S_U64 },
        { "mutexes.arena.num_spin_acq", S_U64 },
        { "mutexes.arena.num_owner_switch", S_U64 },
        { "mutexes.arena.total_wait_time", S_U64 },
        { "mutexes.arena.max_wait_time", S_U64 },
        { "mutexes.arena.max_num_thds", S_U32 },
    };
    for (const auto &l : arena_leaves)
        v.push_back({ sa + l.first, l.second, false });
    return v;
}

// Checks one name: a read of the right size succeeds by name and by MIB
// (triggers: a call without values succeeds).
void
require_answers(const name_info &n)
{
    if (n.trigger) {
        int r = mallctl(n.name.c_str(), NULL, NULL, NULL, 0);
        TU_REQUIRE_MSG(r == 0, n.name << ": " << r);
        mib_t m = mib_of(n.name.c_str());
        r = mallctlbymib(m.v, m.len, NULL, NULL, NULL, 0);
        TU_REQUIRE_MSG(r == 0, n.name << " by MIB: " << r);
        return;
    }
    unsigned char buf[16];
    size_t len = n.size;
    int r = mallctl(n.name.c_str(), buf, &len, NULL, 0);
    TU_REQUIRE_MSG(r == 0, n.name << ": " << r << " (" << strerror(r) << ")");
    TU_REQUIRE_MSG(len == n.size, n.name << ": length " << len << ", expected " << n.size);
    // A size one too big must fail: the value has exactly n.size bytes.
    len = n.size + 1;
    r = mallctl(n.name.c_str(), buf, &len, NULL, 0);
    TU_REQUIRE_MSG(r == EINVAL && len == n.size,
                   n.name << " read with " << n.size + 1 << " bytes: " << r << ", length " << len);
    mib_t m = mib_of(n.name.c_str());
    len = n.size;
    r = mallctlbymib(m.v, m.len, buf, &len, NULL, 0);
    TU_REQUIRE_MSG(r == 0 && len == n.size, n.name << " by MIB: " << r << ", length " << len);
    // Reading nothing is allowed.
    r = mallctl(n.name.c_str(), NULL, NULL, NULL, 0);
    TU_REQUIRE_MSG(r == 0, n.name << " without oldp: " << r);
}

// Block counts per class, for the exactness test.
struct plan {
    size_t size;
    unsigned count[2];  // per thread
};

}  // namespace

// ============================================================================

ATF_TEST_CASE_WITHOUT_HEAD(names__every_name_answers);
ATF_TEST_CASE_BODY(names__every_name_answers)
{
    const unsigned nb = nbins(), nl = nlextents();
    // 36 small classes with 4 KiB pages, 44 with 16 KiB, 52 with 64 KiB.
    TU_REQUIRE_MSG(nb == 36 + 4 * (LG_PAGE - 12), "arenas.nbins " << nb);
    TU_REQUIRE_MSG(nl > 0, "arenas.nlextents " << nl);
    // Arena 0, the merged arenas, the first and last bin and large class.
    const std::vector<std::vector<std::string>> instances = {
        { "0", "0", "0" },
        { str(arenas_all), str(nb - 1), str(nl - 1) },
        { str(narenas()), "17", str(nl / 2) },  // jemalloc 4's merged index
    };
    size_t checked = 0;
    for (const auto &inst : instances)
        for (const name_info &n : documented_names(inst[0], inst[1], inst[2])) {
            require_answers(n);
            checked++;
        }
    TU_REQUIRE_MSG(checked == 3 * documented_names("0", "0", "0").size(), checked);

    // Values that can be checked against what is known.
    TU_REQUIRE_MSG(get<size_t>("arenas.page") == testutil::page_size(), "page");
    TU_REQUIRE_MSG(get<size_t>("arenas.quantum") == 16, "quantum");
    const char *version = get<const char *>("version");
    TU_REQUIRE_MSG(strncmp(version, "arenalloc ", 10) == 0, "version [" << version << "]");
    const size_t chunk = get<size_t>("arenas.chunksize");
    TU_REQUIRE_MSG(chunk == size_t{ 1 } << get<size_t>("opt.lg_chunk"),
                   "chunksize " << chunk);
    TU_REQUIRE_MSG(get<unsigned>("opt.narenas") == narenas(), "opt.narenas");
    TU_REQUIRE_MSG(get<bool>("arena.0.initialized"), "arena 0 not initialized");
    size_t prev = 0;
    for (unsigned j = 0; j < nb; j++) {
        const std::string b = "arenas.bin." + str(j) + ".";
        const size_t size = get<size_t>(b + "size");
        const uint32_t nregs = get<uint32_t>(b + "nregs");
        const size_t run = get<size_t>(b + "run_size");
        TU_REQUIRE_MSG(size > prev && nregs > 0 && run % testutil::page_size() == 0 &&
                           size * nregs <= run && get<size_t>(b + "slab_size") == run,
                       "bin " << j << ": size " << size << ", nregs " << nregs << ", run "
                              << run);
        void *p = malloc(size);
        TU_REQUIRE_MSG(malloc_usable_size(p) == size, "bin " << j << " size " << size);
        free(p);
        prev = size;
    }
    for (unsigned j = 0; j < nl; j++) {
        const size_t size = get<size_t>("arenas.lextent." + str(j) + ".size");
        TU_REQUIRE_MSG(size > prev && size % testutil::page_size() == 0 && size < chunk,
                       "large class " << j << " size " << size);
        prev = size;
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(names__unknown_give_enoent);
ATF_TEST_CASE_BODY(names__unknown_give_enoent)
{
    const unsigned nb = nbins(), nl = nlextents(), na = narenas();
    const std::vector<std::string> bad = {
        "nope",
        "",
        ".",
        "stats.",
        "stats..allocated",
        "stats.allocated.",
        "stats.allocated.x",
        "version.x",
        "Version",
        "stats.arenas.x.pactive",
        "stats.arenas.-1.pactive",
        "stats.arenas.99999.pactive",
        "stats.arenas.99999999999999999999999.pactive",
        "stats.arenas." + str(na + 1) + ".pactive",
        "stats.arenas.4097.pactive",
        "stats.arenas.0.bins." + str(nb) + ".curregs",
        "stats.arenas.0.lextents." + str(nl) + ".curlextents",
        "stats.arenas.0.bins.0.nope",
        "arenas.bin." + str(nb + 1) + ".size",
        "arenas.bin." + str(nb) + ".size",
        "arenas.lextent." + str(nl) + ".size",
        "arena.4097.purge",
        "arena." + str(na + 1) + ".purge",
        "thread.tcache.flush.now",
        "opt.dss",
        // No such concept in arenalloc (see the manual).
        "arena.0.destroy",
        "arena.0.dss",
        "arena.0.retain_grow_limit",
        "arena.0.extent_hooks",
        "arenas.lookup",
        "tcache.create",
        "thread.peak.read",
        "stats.arenas.0.extent_avail",
        "prof.active",
    };
    for (const std::string &name : bad) {
        uint64_t v[2];
        size_t len = 8;
        int r = mallctl(name.c_str(), v, &len, NULL, 0);
        TU_REQUIRE_MSG(r == ENOENT, "mallctl(\"" << name << "\") = " << r);
        size_t mib[8];
        size_t miblen = 8;
        r = mallctlnametomib(name.c_str(), mib, &miblen);
        TU_REQUIRE_MSG(r == ENOENT, "mallctlnametomib(\"" << name << "\") = " << r);
    }

    // Inner names: no value by name, but a prefix MIB (jemalloc's too).
    const char *const inner[] = { "stats", "stats.arenas", "stats.arenas.0",
                                  "stats.arenas.0.bins.0", "arenas.bin", "thread.tcache",
                                  "opt", "config", "stats.mutexes.ctl" };
    for (const char *name : inner) {
        uint64_t v[2];
        size_t len = 8;
        int r = mallctl(name, v, &len, NULL, 0);
        TU_REQUIRE_MSG(r == ENOENT, "mallctl(\"" << name << "\") = " << r);
        size_t mib[8];
        size_t miblen = 8;
        r = mallctlnametomib(name, mib, &miblen);
        TU_REQUIRE_MSG(r == 0, "mallctlnametomib(\"" << name << "\") = " << r);
        len = 8;
        r = mallctlbymib(mib, miblen, v, &len, NULL, 0);
        TU_REQUIRE_MSG(r == ENOENT, "mallctlbymib(\"" << name << "\") = " << r);
    }

    // MIBs: an index past the children, a number out of range, too short
    // (an inner node), too long.
    mib_t m = mib_of("stats.arenas.0.bins.0.curregs");
    TU_REQUIRE_MSG(m.len == 6, "depth " << m.len);
    size_t v, len = sizeof(v);
    size_t bad_mib[8];
    memcpy(bad_mib, m.v, sizeof(bad_mib));
    bad_mib[5] = 1000;
    TU_REQUIRE_EQ(mallctlbymib(bad_mib, 6, &v, &len, NULL, 0), ENOENT);
    memcpy(bad_mib, m.v, sizeof(bad_mib));
    bad_mib[4] = nb;
    TU_REQUIRE_EQ(mallctlbymib(bad_mib, 6, &v, &len, NULL, 0), ENOENT);
    memcpy(bad_mib, m.v, sizeof(bad_mib));
    bad_mib[2] = 99999;
    TU_REQUIRE_EQ(mallctlbymib(bad_mib, 6, &v, &len, NULL, 0), ENOENT);
    TU_REQUIRE_EQ(mallctlbymib(m.v, 5, &v, &len, NULL, 0), ENOENT);
    TU_REQUIRE_EQ(mallctlbymib(m.v, 0, &v, &len, NULL, 0), ENOENT);
    memcpy(bad_mib, m.v, sizeof(bad_mib));
    bad_mib[6] = 0;
    TU_REQUIRE_EQ(mallctlbymib(bad_mib, 7, &v, &len, NULL, 0), ENOENT);
    bad_mib[0] = 1000;
    TU_REQUIRE_EQ(mallctlbymib(bad_mib, 1, &v, &len, NULL, 0), ENOENT);

    // An arena that was never created has no statistics yet.
    for (unsigned i = 1; i < na; i++) {
        bool init = true;
        len = sizeof(init);
        const std::string name = "arena." + str(i) + ".initialized";
        ATF_REQUIRE_EQ(mallctl(name.c_str(), &init, &len, NULL, 0), 0);
        if (!init) {
            const std::string s = "stats.arenas." + str(i) + ".pactive";
            len = sizeof(v);
            TU_REQUIRE_MSG(mallctl(s.c_str(), &v, &len, NULL, 0) == ENOENT, s);
            break;
        }
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(sizes__wrong_size_gives_einval);
ATF_TEST_CASE_BODY(sizes__wrong_size_gives_einval)
{
    // A short read copies what fits and reports it.
    const size_t mapped = get<size_t>("stats.mapped");
    unsigned char buf[16];
    memset(buf, 0xEE, sizeof(buf));
    const size_t half = sizeof(size_t) / 2;  // 4, or 2 on 32-bit targets
    size_t len = half;
    TU_REQUIRE_EQ(mallctl("stats.mapped", buf, &len, NULL, 0), EINVAL);
    TU_REQUIRE_EQ(len, half);
    TU_REQUIRE_MSG(memcmp(buf, &mapped, half) == 0 && buf[half] == 0xEE, "short read copied wrongly");
    // A long one copies the value and reports its size.
    memset(buf, 0xEE, sizeof(buf));
    len = 16;
    TU_REQUIRE_EQ(mallctl("stats.mapped", buf, &len, NULL, 0), EINVAL);
    TU_REQUIRE_EQ(len, sizeof(size_t));
    TU_REQUIRE_MSG(memcmp(buf, &mapped, sizeof(size_t)) == 0, "long read copied wrongly");
    // Booleans, unsigned, strings (opt.junk is jemalloc's string now).
    len = 4;
    TU_REQUIRE_EQ(mallctl("opt.zero", buf, &len, NULL, 0), EINVAL);
    TU_REQUIRE_EQ(len, 1u);
    len = 1;
    TU_REQUIRE_EQ(mallctl("opt.junk", buf, &len, NULL, 0), EINVAL);
    len = 8;
    TU_REQUIRE_EQ(mallctl("arenas.narenas", buf, &len, NULL, 0), EINVAL);
    len = sizeof(const char *) / 2;  // a string is read as a pointer
    TU_REQUIRE_EQ(mallctl("version", buf, &len, NULL, 0), EINVAL);
    len = 8;
    TU_REQUIRE_EQ(mallctl("arenas.bin.0.nregs", buf, &len, NULL, 0), EINVAL);
    len = 0;
    TU_REQUIRE_EQ(mallctl("epoch", buf, &len, NULL, 0), EINVAL);
    TU_REQUIRE_EQ(len, 0u);
    // By MIB as well.
    mib_t m = mib_of("stats.arenas.0.bins.3.nmalloc");
    len = 4;
    TU_REQUIRE_EQ(mallctlbymib(m.v, m.len, buf, &len, NULL, 0), EINVAL);

    // Writes of the wrong size.
    uint64_t e = 0;
    TU_REQUIRE_EQ(mallctl("epoch", NULL, NULL, &e, 4), EINVAL);
    TU_REQUIRE_EQ(mallctl("epoch", NULL, NULL, &e, 16), EINVAL);
    TU_REQUIRE_EQ(mallctl("epoch", NULL, NULL, &e, 0), EINVAL);
    const unsigned before = get<unsigned>("thread.arena");
    uint64_t wide = 0;
    TU_REQUIRE_EQ(mallctl("thread.arena", NULL, NULL, &wide, sizeof(wide)), EINVAL);
    // An arena out of range.
    unsigned far = narenas();
    TU_REQUIRE_EQ(mallctl("thread.arena", NULL, NULL, &far, sizeof(far)), EINVAL);
    far = 100000;
    TU_REQUIRE_EQ(mallctl("thread.arena", NULL, NULL, &far, sizeof(far)), EINVAL);
    TU_REQUIRE_EQ(get<unsigned>("thread.arena"), before);
}

// The purging thread is off by default, starts when asked and stops again.
ATF_TEST_CASE_WITHOUT_HEAD(writes__background_thread);
ATF_TEST_CASE_BODY(writes__background_thread)
{
    TU_REQUIRE_EQ(get<bool>("background_thread"), false);
    bool on = true;
    TU_REQUIRE_EQ(mallctl("background_thread", NULL, NULL, &on, sizeof(on)), 0);
    TU_REQUIRE_EQ(get<bool>("background_thread"), true);
    // Freeing while it runs is safe (it takes the same locks).
    for (int i = 0; i < 2000; i++)
        free(malloc(static_cast<size_t>(i) * 97 + 1));
    bool off = false;
    bool old = false;
    size_t len = sizeof(old);
    TU_REQUIRE_EQ(mallctl("background_thread", &old, &len, &off, sizeof(off)), 0);
    TU_REQUIRE_EQ(old, true);
    TU_REQUIRE_EQ(get<bool>("background_thread"), false);
}

ATF_TEST_CASE_WITHOUT_HEAD(writes__read_only_gives_eperm);
ATF_TEST_CASE_BODY(writes__read_only_gives_eperm)
{
    for (const name_info &n : documented_names("0", "0", "0")) {
        if (n.trigger || n.writable || n.name == "epoch" || n.name == "thread.arena" ||
            n.name == "background_thread")
            continue;
        uint64_t v[2] = { 0, 0 };
        size_t len = n.size;
        int r = mallctl(n.name.c_str(), NULL, NULL, v, n.size);
        TU_REQUIRE_MSG(r == EPERM, "writing " << n.name << ": " << r);
        r = mallctl(n.name.c_str(), v, &len, v, n.size);
        TU_REQUIRE_MSG(r == EPERM, "reading and writing " << n.name << ": " << r);
        mib_t m = mib_of(n.name.c_str());
        r = mallctlbymib(m.v, m.len, NULL, NULL, v, n.size);
        TU_REQUIRE_MSG(r == EPERM, "writing " << n.name << " by MIB: " << r);
    }
    // opt.* stays as it was.
    const bool zero = get<bool>("opt.zero");
    bool flip = !zero;
    TU_REQUIRE_EQ(mallctl("opt.zero", NULL, NULL, &flip, sizeof(flip)), EPERM);
    TU_REQUIRE_EQ(get<bool>("opt.zero"), zero);
    const char *junk = get<const char *>("opt.junk");
    const char *other = "true";
    TU_REQUIRE_EQ(mallctl("opt.junk", NULL, NULL, &other, sizeof(other)), EPERM);
    TU_REQUIRE_EQ(std::string(get<const char *>("opt.junk")), std::string(junk));
    // Triggers take no values in either direction.
    uint64_t v = 0;
    size_t len = sizeof(v);
    TU_REQUIRE_EQ(mallctl("thread.tcache.flush", &v, &len, NULL, 0), EPERM);
    TU_REQUIRE_EQ(mallctl("thread.tcache.flush", NULL, NULL, &v, sizeof(v)), EPERM);
    TU_REQUIRE_EQ(mallctl("arena.0.purge", &v, &len, NULL, 0), EPERM);
    TU_REQUIRE_EQ(mallctl("arena.0.purge", NULL, NULL, &v, sizeof(v)), EPERM);
    TU_REQUIRE_EQ(mallctl("arena.0.purge", NULL, &len, NULL, 0), EPERM);
}

ATF_TEST_CASE_WITHOUT_HEAD(mib__same_as_name);
ATF_TEST_CASE_BODY(mib__same_as_name)
{
    refresh();
    const char *names[] = { "stats.allocated", "stats.mapped", "arenas.narenas",
                            "arenas.bin.7.size", "stats.arenas.0.pactive",
                            "stats.arenas.0.bins.2.nrequests", "opt.lg_chunk", "epoch" };
    for (const char *name : names) {
        mib_t m = mib_of(name);
        uint64_t a = 0, b = 0;
        // The value's size (8 or 4 bytes; size_t ones are 4 on 32-bit
        // targets), as a long read reports it.
        unsigned char probe[16];
        size_t la = sizeof(probe);
        ATF_REQUIRE_EQ(mallctl(name, probe, &la, NULL, 0), EINVAL);
        ATF_REQUIRE(la == 4 || la == 8);
        size_t lb = la;
        ATF_REQUIRE_EQ(mallctl(name, &a, &la, NULL, 0), 0);
        ATF_REQUIRE_EQ(mallctlbymib(m.v, m.len, &b, &lb, NULL, 0), 0);
        TU_REQUIRE_MSG(a == b && la == lb, name << ": by name " << a << ", by MIB " << b);
    }

    // The usual pattern: translate once, then vary the numbered components.
    const unsigned nb = nbins();
    mib_t m = mib_of("arenas.bin.0.size");
    TU_REQUIRE_EQ(m.len, 4u);
    mib_t s = mib_of("stats.arenas.0.bins.0.nmalloc");
    s.v[2] = arenas_all;
    for (unsigned j = 0; j < nb; j++) {
        m.v[2] = j;
        size_t by_mib = 0;
        ATF_REQUIRE(get_mib(m, &by_mib));
        TU_REQUIRE_EQ(by_mib, get<size_t>("arenas.bin." + str(j) + ".size"));
        s.v[4] = j;
        uint64_t n = 0;
        ATF_REQUIRE(get_mib(s, &n));
        TU_REQUIRE_EQ(n, get<uint64_t>("stats.arenas." + str(arenas_all) + ".bins." + str(j) +
                                       ".nmalloc"));
    }

    // A partial MIB: room for three components gives the first three.
    size_t part[3];
    size_t plen = 3;
    ATF_REQUIRE_EQ(mallctlnametomib("arenas.bin.5.nregs", part, &plen), 0);
    TU_REQUIRE_EQ(plen, 3u);
    mib_t full = mib_of("arenas.bin.5.nregs");
    TU_REQUIRE_MSG(memcmp(part, full.v, sizeof(part)) == 0, "partial MIB differs");
    TU_REQUIRE_EQ(full.v[2], 5u);
    // More room than components: *miblenp says how many.
    size_t big[8];
    size_t blen = 8;
    ATF_REQUIRE_EQ(mallctlnametomib("version", big, &blen), 0);
    TU_REQUIRE_EQ(blen, 1u);
}

ATF_TEST_CASE_WITHOUT_HEAD(epoch__allocated_follows_malloc);
ATF_TEST_CASE_BODY(epoch__allocated_follows_malloc)
{
    flush_cache();
    const uint64_t e0 = refresh();
    TU_REQUIRE_EQ(get<uint64_t>("epoch"), e0);
    const size_t a0 = get<size_t>("stats.allocated");
    void *p = malloc(MiB);
    ATF_REQUIRE(p != NULL);
    const size_t usable = malloc_usable_size(p);
    // The snapshot does not move until the epoch is written.
    TU_REQUIRE_EQ(get<size_t>("stats.allocated"), a0);
    const uint64_t e1 = refresh();
    TU_REQUIRE_MSG(e1 > e0, "epoch " << e0 << " -> " << e1);
    const size_t a1 = get<size_t>("stats.allocated");
    TU_REQUIRE_MSG(a1 == a0 + usable, "allocated " << a0 << " -> " << a1 << " after malloc of "
                                                   << usable);
    TU_REQUIRE_MSG(get<size_t>("stats.active") >= a1, "active below allocated");
    TU_REQUIRE_MSG(get<size_t>("stats.mapped") >= get<size_t>("stats.active"),
                   "mapped below active");
    free(p);
    refresh();
    const size_t a2 = get<size_t>("stats.allocated");
    TU_REQUIRE_MSG(a2 == a0, "allocated " << a0 << " -> " << a1 << " -> " << a2);

    // A huge block shows in stats.huge.*.
    const uint64_t h0 = get<uint64_t>("stats.huge.nmalloc");
    void *h = malloc(8 * MiB);
    ATF_REQUIRE(h != NULL);
    refresh();
    TU_REQUIRE_EQ(get<uint64_t>("stats.huge.nmalloc"), h0 + 1);
    TU_REQUIRE_MSG(get<size_t>("stats.huge.allocated") >= malloc_usable_size(h), "huge");
    TU_REQUIRE_EQ(get<size_t>("stats.allocated"), a0 + malloc_usable_size(h));
    free(h);
    refresh();
    TU_REQUIRE_EQ(get<size_t>("stats.allocated"), a0);
}

ATF_TEST_CASE_WITHOUT_HEAD(thread__arena_moves_thread);
ATF_TEST_CASE_BODY(thread__arena_moves_thread)
{
    const unsigned na = narenas();
    const unsigned cur = get<unsigned>("thread.arena");
    TU_REQUIRE_MSG(cur < na, "thread.arena " << cur << " of " << na);
    const unsigned target = (cur + 1) % na;

    // Swap: the old index comes back, the new one is in force.
    unsigned in = target, out = 12345;
    size_t len = sizeof(out);
    ATF_REQUIRE_EQ(mallctl("thread.arena", &out, &len, &in, sizeof(in)), 0);
    TU_REQUIRE_EQ(out, cur);
    TU_REQUIRE_EQ(get<unsigned>("thread.arena"), target);

    // Class of 48-byte blocks.
    unsigned bin = 0;
    while (get<size_t>("arenas.bin." + str(bin) + ".size") < 48)
        bin++;
    // Names are made before the measurements (making one allocates).
    const std::string sa = "stats.arenas." + str(target) + ".";
    const std::string curregs = sa + "bins." + str(bin) + ".curregs",
                      nmalloc = sa + "small.nmalloc", nthreads = sa + "nthreads";
    flush_cache();
    refresh();
    const unsigned threads = get<unsigned>(nthreads.c_str());
    const uint64_t n0 = get<uint64_t>(nmalloc.c_str());
    const size_t c0 = get<size_t>(curregs.c_str());
    void *p = malloc(48);
    flush_cache();
    refresh();
    const uint64_t n1 = get<uint64_t>(nmalloc.c_str());
    const size_t c1 = get<size_t>(curregs.c_str());
    free(p);
    flush_cache();
    refresh();
    const size_t c2 = get<size_t>(curregs.c_str());
    ATF_REQUIRE(p != NULL);
    TU_REQUIRE_MSG(threads >= 1, "nthreads of the new arena: " << threads);
    TU_REQUIRE_MSG(n1 > n0, "small.nmalloc of arena " << target << ": " << n0 << " -> " << n1);
    TU_REQUIRE_MSG(c1 == c0 + 1 && c2 == c0,
                   curregs << ": " << c0 << " -> " << c1 << " -> " << c2);

    // Back again.
    in = cur;
    ATF_REQUIRE_EQ(mallctl("thread.arena", NULL, NULL, &in, sizeof(in)), 0);
    TU_REQUIRE_EQ(get<unsigned>("thread.arena"), cur);
}

ATF_TEST_CASE_WITHOUT_HEAD(arena__purge_drops_dirty);
ATF_TEST_CASE_BODY(arena__purge_drops_dirty)
{
    const unsigned i = get<unsigned>("thread.arena");
    // Every name is made before the measurement: building one allocates,
    // and an allocation may reuse dirty pages.
    const std::string sa = "stats.arenas." + str(i) + ".";
    const std::string n_pdirty = sa + "pdirty", n_dirty = sa + "dirty", n_purged = sa + "purged",
                      n_npurge = sa + "npurge", n_nmadvise = sa + "nmadvise",
                      n_purge = "arena." + str(i) + ".purge",
                      n_purge_all = "arena." + str(narenas()) + ".purge";
    // 1 MiB of large blocks, freed: dirty pages below the one-chunk floor
    // of the ratio rule, so they stay until purged.
    // (Blocks of 64 KiB, or of the first large class, four pages, with 64
    // KiB pages.)
    const size_t block = std::max<size_t>(64 * KiB, testutil::first_large_class());
    std::vector<void *> v;
    v.reserve(16);
    for (size_t k = 0; k < MiB / block; k++) {
        v.push_back(malloc(block));
        ATF_REQUIRE(v.back() != NULL);
        memset(v.back(), 1, block);
    }
    for (void *p : v)
        free(p);
    flush_cache();
    refresh();
    const size_t pdirty = get<size_t>(n_pdirty.c_str());
    const size_t dirty = get<size_t>(n_dirty.c_str());
    const uint64_t purged0 = get<uint64_t>(n_purged.c_str());
    const int r = mallctl(n_purge.c_str(), NULL, NULL, NULL, 0);
    refresh();
    const size_t pdirty1 = get<size_t>(n_pdirty.c_str());
    const uint64_t purged1 = get<uint64_t>(n_purged.c_str());
    ATF_REQUIRE_EQ(r, 0);
    TU_REQUIRE_MSG(pdirty >= MiB / testutil::page_size(),
                   pdirty << " dirty pages after freeing 1 MiB");
    TU_REQUIRE_EQ(dirty, pdirty * testutil::page_size());
    TU_REQUIRE_EQ(pdirty1, 0u);
    TU_REQUIRE_MSG(purged1 >= purged0 + pdirty,
                   "purged " << purged0 << " -> " << purged1 << " pages, " << pdirty
                             << " were dirty");
    TU_REQUIRE_MSG(get<uint64_t>(n_npurge.c_str()) > 0 && get<uint64_t>(n_nmadvise.c_str()) > 0,
                   "purge counters");
    // All arenas at once, both spellings.
    ATF_REQUIRE_EQ(mallctl("arena.4096.purge", NULL, NULL, NULL, 0), 0);
    ATF_REQUIRE_EQ(mallctl(n_purge_all.c_str(), NULL, NULL, NULL, 0), 0);
    refresh();
    TU_REQUIRE_EQ(get<size_t>("stats.arenas.4096.pdirty"), 0u);
}

// --- opt.* in a child run with MALLOC_OPTIONS --------------------------------

namespace {

// The child side: prints every opt.* and a few arenas.* as name=value.
void
print_options(void)
{
    const char *bools[] = { "opt.abort", "opt.sbrk", "opt.mmap", "opt.tcache",
                            "opt.stats_print", "opt.utrace", "opt.sysv", "opt.xmalloc",
                            "opt.zero", "opt.abort_conf", "opt.background_thread",
                            "opt.lazy_purge", "opt.retain", "background_thread" };
    for (const char *n : bools) {
        bool v = false;
        size_t len = sizeof(v);
        int r = mallctl(n, &v, &len, NULL, 0);
        printf("%s=%d\n", n, r == 0 ? static_cast<int>(v) : -100 - r);
    }
    const char *ssizes[] = { "opt.lg_dirty_ratio", "opt.lg_tcache_gc", "opt.tcache_shift",
                             "opt.decay_ms", "opt.dirty_decay_ms", "opt.muzzy_decay_ms" };
    for (const char *n : ssizes) {
        ssize_t v = 0;
        size_t len = sizeof(v);
        int r = mallctl(n, &v, &len, NULL, 0);
        printf("%s=%ld\n", n, r == 0 ? static_cast<long>(v) : -100L - r);
    }
    const char *strings[] = { "opt.junk", "opt.thp", "opt.metadata_thp", "opt.percpu_arena",
                              "opt.stats_print_opts" };
    for (const char *n : strings) {
        const char *v = NULL;
        size_t len = sizeof(v);
        int r = mallctl(n, &v, &len, NULL, 0);
        printf("%s=%s\n", n, r == 0 && v != NULL ? v : "(error)");
    }
    size_t tcache_max = 0, len = sizeof(size_t);
    mallctl("opt.tcache_max", &tcache_max, &len, NULL, 0);
    printf("opt.tcache_max=%zu\n", tcache_max);
    size_t lg = 0, chunk = 0;
    mallctl("opt.lg_chunk", &lg, &len, NULL, 0);
    mallctl("arenas.chunksize", &chunk, &len, NULL, 0);
    unsigned n = 0, na = 0;
    len = sizeof(unsigned);
    mallctl("opt.narenas", &n, &len, NULL, 0);
    mallctl("arenas.narenas", &na, &len, NULL, 0);
    printf("opt.lg_chunk=%zu\narenas.chunksize=%zu\nopt.narenas=%u\narenas.narenas=%u\n", lg,
           chunk, n, na);
    fflush(stdout);
}

__attribute__((constructor)) void
child_main(void)
{
    if (getenv("MALLCTL_TEST_CHILD") == NULL)
        return;
    print_options();
    exit(0);
}

std::map<std::string, std::string>
child_options(const std::string &opts)
{
    const testutil::child_result r = testutil::run_program(
        { "/proc/self/exe" }, { "MALLCTL_TEST_CHILD=1", "MALLOC_OPTIONS=" + opts,
          "ARENALLOC_TRACE_FILE=/dev/null" }, "/dev/null",
        60);
    TU_REQUIRE_MSG(r.exited_ok(), "child with MALLOC_OPTIONS=" << opts << ": " << r.describe());
    std::map<std::string, std::string> m;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
        const size_t eq = line.find('=');
        if (eq != std::string::npos)
            m[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return m;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(opt__follows_malloc_options);
ATF_TEST_CASE_BODY(opt__follows_malloc_options)
{
    std::map<std::string, std::string> d = child_options("");
    std::map<std::string, std::string> o = child_options("NK2Fgg7hAJPUVXZ");
    std::map<std::string, std::string> f = child_options("ajpuvxzk");
    const char *flags[] = { "opt.abort", "opt.stats_print", "opt.utrace",
                            "opt.sysv", "opt.xmalloc", "opt.zero" };
    for (const char *n : flags) {
        TU_REQUIRE_MSG(o[n] == "1", n << " with the flag on: " << o[n]);
        TU_REQUIRE_MSG(f[n] == "0", n << " with the flag off: " << f[n]);
    }
    TU_REQUIRE_EQ(o["opt.junk"], "true");
    TU_REQUIRE_EQ(f["opt.junk"], "false");
    TU_REQUIRE_EQ(d["opt.mmap"], "1");
    TU_REQUIRE_EQ(d["opt.tcache"], "1");
    TU_REQUIRE_EQ(o["opt.tcache"], "0");
    TU_REQUIRE_EQ(o["opt.tcache_shift"], "-7");
    TU_REQUIRE_EQ(std::stol(o["opt.lg_dirty_ratio"]), std::stol(d["opt.lg_dirty_ratio"]) - 2);
    TU_REQUIRE_EQ(std::stol(o["opt.lg_tcache_gc"]), std::stol(d["opt.lg_tcache_gc"]) - 2);
    TU_REQUIRE_EQ(std::stoul(o["opt.lg_chunk"]), std::stoul(d["opt.lg_chunk"]) + 1);
    TU_REQUIRE_EQ(std::stoul(f["opt.lg_chunk"]), std::stoul(d["opt.lg_chunk"]) - 1);
    TU_REQUIRE_EQ(std::stoul(o["arenas.chunksize"]), 1ul << std::stoul(o["opt.lg_chunk"]));
    const unsigned long dn = std::stoul(d["opt.narenas"]);
    TU_REQUIRE_EQ(std::stoul(o["opt.narenas"]), 2 * dn <= 4096 ? 2 * dn : dn);
    TU_REQUIRE_EQ(o["arenas.narenas"], o["opt.narenas"]);
}

// jemalloc's opt.* names: their defaults (jemalloc 5.3's where arenalloc
// has the same), and the values jemalloc's keys give them.
ATF_TEST_CASE_WITHOUT_HEAD(opt__jemalloc_names_follow_keys);
ATF_TEST_CASE_BODY(opt__jemalloc_names_follow_keys)
{
    // MALLOC_OPTIONS, then the values the child prints for it.
    const std::vector<std::pair<std::string, std::map<std::string, std::string>>> cases = {
        { "",
          { { "opt.junk", "false" }, { "opt.thp", "default" },
            { "opt.metadata_thp", "disabled" }, { "opt.percpu_arena", "disabled" },
            { "opt.stats_print_opts", "" }, { "opt.dirty_decay_ms", "10000" },
            { "opt.decay_ms", "10000" }, { "opt.muzzy_decay_ms", "0" },
            { "opt.tcache_max", std::to_string(testutil::largest_cached_class()) }, { "opt.retain", "1" }, { "opt.abort_conf", "0" },
            { "opt.background_thread", "0" }, { "background_thread", "0" } } },
        { "junk:alloc,thp:always,dirty_decay_ms:-1,muzzy_decay_ms:5000,stats_print_opts:gm,"
          "tcache:false,abort_conf:true,background_thread:true,retain:false",
          { { "opt.junk", "true" }, { "opt.thp", "always" },
            { "opt.dirty_decay_ms", "3600000" }, { "opt.muzzy_decay_ms", "-1" },
            { "opt.lazy_purge", "1" }, { "opt.stats_print_opts", "gm" }, { "opt.tcache", "0" },
            { "opt.tcache_shift", "-7" }, { "opt.abort_conf", "1" },
            { "opt.background_thread", "1" },
            { "background_thread", "1" },  // started at initialization
            { "opt.retain", "1" } } },     // kept up to a bound regardless
        { "dirty_decay_ms:0,thp:never,junk:free",
          { { "opt.dirty_decay_ms", "100" }, { "opt.thp", "default" }, { "opt.junk", "true" } } },
    };
    for (const auto &c : cases) {
        std::map<std::string, std::string> got = child_options(c.first);
        for (const auto &want : c.second)
            TU_REQUIRE_MSG(got.count(want.first) == 1 && got[want.first] == want.second,
                           "MALLOC_OPTIONS=" << c.first << ": " << want.first << " is '"
                                             << got[want.first] << "', not '" << want.second
                                             << "'");
    }
}

// Names jemalloc 5.3 has and arenalloc has no concept for.
ATF_TEST_CASE_WITHOUT_HEAD(opt__jemalloc_names_without_concept);
ATF_TEST_CASE_BODY(opt__jemalloc_names_without_concept)
{
    for (const char *n : { "opt.confirm_conf", "opt.cache_oblivious", "opt.trust_madvise",
                           "opt.dss", "opt.oversize_threshold", "opt.max_background_threads",
                           "opt.lg_extent_max_active_fit", "opt.stats_interval",
                           "opt.stats_interval_opts", "opt.zero_realloc", "opt.prof",
                           "opt.lg_tcache_max" }) {
        uint64_t v[2];
        size_t len = sizeof(v);
        TU_REQUIRE_MSG(mallctl(n, v, &len, NULL, 0) == ENOENT, n);
    }
}

// --- Exactness ----------------------------------------------------------------

namespace {

struct exact_thread {
    std::vector<void *> blocks;
    uint64_t usable = 0;          // sum of malloc_usable_size of its blocks
    uint64_t allocated_delta = 0;  // thread.allocated across the mallocs
    uint64_t deallocated_delta = 0;
    int error = 0;
};

std::atomic<int> g_phase{ 0 };  // 0 wait, 1 allocate, 3 free, 5 exit
std::atomic<int> g_done{ 0 };

void
wait_phase(int p)
{
    while (g_phase.load() < p)
        std::this_thread::yield();
}

uint64_t
thread_counter(const char *name)
{
    uint64_t v = 0;
    size_t len = sizeof(v);
    return mallctl(name, &v, &len, NULL, 0) == 0 ? v : ~uint64_t{ 0 };
}

void
exact_worker(exact_thread *t, const std::vector<plan> *plans, int which)
{
    wait_phase(1);
    const uint64_t a0 = thread_counter("thread.allocated");
    for (const plan &p : *plans)
        for (unsigned k = 0; k < p.count[which]; k++) {
            void *b = malloc(p.size);
            if (b == NULL) {
                t->error = ENOMEM;
                continue;
            }
            t->usable += malloc_usable_size(b);
            t->blocks.push_back(b);  // reserved: no reallocation
        }
    t->allocated_delta = thread_counter("thread.allocated") - a0;
    if (mallctl("thread.tcache.flush", NULL, NULL, NULL, 0) != 0)
        t->error = EINVAL;
    g_done.fetch_add(1);
    wait_phase(3);
    const uint64_t d0 = thread_counter("thread.deallocated");
    for (void *b : t->blocks)
        free(b);
    t->deallocated_delta = thread_counter("thread.deallocated") - d0;
    if (mallctl("thread.tcache.flush", NULL, NULL, NULL, 0) != 0)
        t->error = EINVAL;
    g_done.fetch_add(1);
    wait_phase(5);
}

// Current figures, read by MIB from the merged arenas: no allocation.
struct figures {
    size_t allocated;
    size_t curregs[64];
    size_t curlextents[128];
};

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(exact__two_threads);
ATF_TEST_CASE_BODY(exact__two_threads)
{
    const unsigned nb = nbins(), nl = nlextents(), na = narenas();
    ATF_REQUIRE(nb <= 64 && nl <= 128);
    // Three small classes and one large class past the thread caches;
    // block sizes are class sizes.
    std::vector<plan> plans = {
        { 16, { 1000, 700 } },
        { 192, { 300, 500 } },
        { 3072, { 50, 80 } },
        { 2 * testutil::largest_cached_class(), { 20, 30 } },
    };
    std::vector<unsigned> cls(plans.size());
    std::vector<bool> is_large(plans.size());
    for (size_t k = 0; k < plans.size(); k++) {
        bool found = false;
        for (unsigned j = 0; j < nb && !found; j++)
            if (get<size_t>("arenas.bin." + str(j) + ".size") == plans[k].size) {
                cls[k] = j;
                is_large[k] = false;
                found = true;
            }
        for (unsigned j = 0; j < nl && !found; j++)
            if (get<size_t>("arenas.lextent." + str(j) + ".size") == plans[k].size) {
                cls[k] = j;
                is_large[k] = true;
                found = true;
            }
        TU_REQUIRE_MSG(found, "no class of size " << plans[k].size);
    }
    ATF_REQUIRE(!is_large[0] && !is_large[1] && !is_large[2] && is_large[3]);

    mib_t m_alloc = mib_of("epoch");
    mib_t m_epoch = m_alloc;
    m_alloc = mib_of("stats.allocated");
    mib_t m_curregs = mib_of("stats.arenas.0.bins.0.curregs");
    mib_t m_curlext = mib_of("stats.arenas.0.lextents.0.curlextents");
    m_curregs.v[2] = arenas_all;
    m_curlext.v[2] = arenas_all;
    auto read = [&](figures *f) -> bool {
        uint64_t e = 0;
        if (mallctlbymib(m_epoch.v, m_epoch.len, NULL, NULL, &e, sizeof(e)) != 0)
            return false;
        bool ok = get_mib(m_alloc, &f->allocated);
        for (unsigned j = 0; j < nb; j++) {
            m_curregs.v[4] = j;
            ok = ok && get_mib(m_curregs, &f->curregs[j]);
        }
        for (unsigned j = 0; j < nl; j++) {
            m_curlext.v[4] = j;
            ok = ok && get_mib(m_curlext, &f->curlextents[j]);
        }
        return ok;
    };

    exact_thread t[2];
    for (int w = 0; w < 2; w++) {
        unsigned n = 0;
        for (const plan &p : plans)
            n += p.count[w];
        t[w].blocks.reserve(n);
    }
    g_phase.store(0);
    g_done.store(0);
    std::thread th0(exact_worker, &t[0], &plans, 0);
    std::thread th1(exact_worker, &t[1], &plans, 1);

    // From here to the last read this thread allocates nothing (a failing
    // check would, but then the figures no longer matter).
    static figures f0, f1, f2;
    flush_cache();
    const bool ok0 = read(&f0);
    g_phase.store(1);
    while (g_done.load() < 2)
        std::this_thread::yield();
    const bool ok1 = read(&f1);
    g_phase.store(3);
    while (g_done.load() < 4)
        std::this_thread::yield();
    const bool ok2 = read(&f2);
    g_phase.store(5);
    th0.join();
    th1.join();

    ATF_REQUIRE(ok0 && ok1 && ok2);
    ATF_REQUIRE_EQ(t[0].error, 0);
    ATF_REQUIRE_EQ(t[1].error, 0);
    const uint64_t usable = t[0].usable + t[1].usable;
    uint64_t expected = 0;
    for (const plan &p : plans)
        expected += uint64_t{ p.size } * (p.count[0] + p.count[1]);
    TU_REQUIRE_EQ(usable, expected);
    std::cerr << "exact: " << t[0].blocks.size() + t[1].blocks.size() << " blocks, " << usable
              << " bytes; stats.allocated " << f0.allocated << " -> " << f1.allocated << " -> "
              << f2.allocated << "\n";
    TU_REQUIRE_MSG(f1.allocated - f0.allocated == usable,
                   "stats.allocated grew by " << f1.allocated - f0.allocated << ", blocks hold "
                                              << usable);
    TU_REQUIRE_MSG(f2.allocated == f0.allocated,
                   "stats.allocated " << f0.allocated << " before, " << f2.allocated
                                      << " after the frees");
    for (size_t k = 0; k < plans.size(); k++) {
        const unsigned j = cls[k];
        const size_t live = plans[k].count[0] + plans[k].count[1];
        const size_t *c0 = is_large[k] ? f0.curlextents : f0.curregs;
        const size_t *c1 = is_large[k] ? f1.curlextents : f1.curregs;
        const size_t *c2 = is_large[k] ? f2.curlextents : f2.curregs;
        std::cerr << "exact: class " << plans[k].size << ": " << c0[j] << " -> " << c1[j]
                  << " -> " << c2[j] << " (" << live << " blocks)\n";
        TU_REQUIRE_MSG(c1[j] - c0[j] == live, "class " << plans[k].size << ": current count "
                                                       << c0[j] << " -> " << c1[j] << ", "
                                                       << live << " blocks live");
        TU_REQUIRE_MSG(c2[j] == c0[j], "class " << plans[k].size << ": current count " << c0[j]
                                                << " -> " << c2[j] << " after the frees");
    }
    // Classes nobody used did not move.
    for (unsigned j = 0; j < nb; j++)
        if (j != cls[0] && j != cls[1] && j != cls[2])
            TU_REQUIRE_MSG(f1.curregs[j] == f0.curregs[j], "bin " << j << " moved");
    for (int w = 0; w < 2; w++) {
        TU_REQUIRE_MSG(t[w].allocated_delta == t[w].usable,
                       "thread " << w << ": thread.allocated grew by " << t[w].allocated_delta
                                 << ", blocks hold " << t[w].usable);
        TU_REQUIRE_MSG(t[w].deallocated_delta == t[w].usable,
                       "thread " << w << ": thread.deallocated grew by "
                                 << t[w].deallocated_delta << ", blocks held " << t[w].usable);
    }

    // The merged arena is the sum of the arenas.
    refresh();
    size_t sum = 0;
    for (unsigned i = 0; i < na; i++) {
        size_t v = 0, len = sizeof(v);
        const std::string name = "stats.arenas." + str(i) + ".small.allocated";
        const int r = mallctl(name.c_str(), &v, &len, NULL, 0);
        TU_REQUIRE_MSG(r == 0 || r == ENOENT, name << ": " << r);
        sum += v * (r == 0);
    }
    TU_REQUIRE_EQ(sum, get<size_t>("stats.arenas.4096.small.allocated"));
}

// --- Concurrency ----------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(concurrent__with_stress);
ATF_TEST_CASE_BODY(concurrent__with_stress)
{
    const double budget_s = 2.0;
    std::atomic<bool> stop{ false };
    std::atomic<uint64_t> ctl_calls{ 0 }, allocs{ 0 };
    std::atomic<int> failures{ 0 };
    std::atomic<int> first_error{ 0 };
    const unsigned na = narenas();
    const std::vector<name_info> names = documented_names("0", "5", "2");
    const std::vector<name_info> merged = documented_names("4096", "30", "0");

    auto stress = [&](unsigned seed) {
        std::vector<void *> live(256, nullptr);
        uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
        uint64_t n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            const size_t slot = x % live.size();
            free(live[slot]);
            const unsigned kind = (x >> 20) % 100;
            const size_t size = kind < 90 ? 1 + (x >> 32) % 4096
                                : kind < 99 ? 16 * KiB + (x >> 32) % (512 * KiB)
                                            : 2 * MiB + (x >> 32) % (2 * MiB);
            live[slot] = malloc(size);
            if (live[slot] != NULL)
                memset(live[slot], 0x5a, size < 256 ? size : 256);
            n++;
        }
        for (void *p : live)
            free(p);
        allocs.fetch_add(n);
    };
    auto control = [&](unsigned which) {
        uint64_t n = 0;
        unsigned round = 0;
        auto check = [&](int r, bool enoent_ok) {
            if (r != 0 && !(enoent_ok && r == ENOENT)) {
                failures.fetch_add(1);
                int z = 0;
                first_error.compare_exchange_strong(z, r);
            }
            n++;
        };
        while (!stop.load(std::memory_order_relaxed)) {
            const std::vector<name_info> &list = (round & 1) ? merged : names;
            for (const name_info &ni : list) {
                unsigned char buf[16];
                size_t len = ni.size;
                if (ni.trigger)
                    check(mallctl(ni.name.c_str(), NULL, NULL, NULL, 0), false);
                else if (ni.name == "epoch" || (round % 4 == 0 && ni.name == "thread.arena")) {
                    // Refresh, or move this thread to another arena.
                    uint64_t v = round;
                    unsigned a = (which + round) % na;
                    if (ni.name == "epoch")
                        check(mallctl("epoch", buf, &len, &v, sizeof(v)), false);
                    else
                        check(mallctl("thread.arena", buf, &len, &a, sizeof(a)), false);
                } else
                    check(mallctl(ni.name.c_str(), buf, &len, NULL, 0), true);
            }
            // A small allocation or two from this thread, too.
            free(malloc(24 + round % 1000));
            round++;
        }
        ctl_calls.fetch_add(n);
    };

    std::vector<std::thread> threads;
    for (unsigned k = 0; k < 4; k++)
        threads.emplace_back(stress, k + 1);
    for (unsigned k = 0; k < 2; k++)
        threads.emplace_back(control, k);
    usleep(static_cast<useconds_t>(budget_s * 1e6));
    stop.store(true);
    for (std::thread &t : threads)
        t.join();
    std::cerr << "concurrent: " << ctl_calls.load() << " mallctl calls, " << allocs.load()
              << " mallocs in " << budget_s << " s\n";
    TU_REQUIRE_MSG(failures.load() == 0, failures.load() << " calls failed, first with "
                                                         << first_error.load());
    TU_REQUIRE_MSG(ctl_calls.load() > 1000 && allocs.load() > 1000,
                   "too little done: " << ctl_calls.load() << " calls, " << allocs.load()
                                       << " mallocs");
    // Still consistent afterwards.
    flush_cache();
    refresh();
    TU_REQUIRE_MSG(get<size_t>("stats.active") >= get<size_t>("stats.allocated"), "active");
}

// --- fork() -------------------------------------------------------------------

// The snapshot's lock is taken around fork(): a child forked while another
// thread refreshes the snapshot can still use mallctl.
ATF_TEST_CASE_WITHOUT_HEAD(fork__while_refreshing);
ATF_TEST_CASE_BODY(fork__while_refreshing)
{
    std::atomic<bool> stop{ false };
    std::atomic<uint64_t> refreshes{ 0 };
    std::thread refresher([&] {
        while (!stop.load()) {
            uint64_t e = 0;
            if (mallctl("epoch", NULL, NULL, &e, sizeof(e)) == 0)
                refreshes.fetch_add(1);
        }
    });
    while (refreshes.load() == 0)
        std::this_thread::yield();
    std::string failure;
    for (int k = 0; k < 40 && failure.empty(); k++) {
        const testutil::child_result r = testutil::run_in_child(
            [] {
                uint64_t e = 0;
                size_t v = 0, len = sizeof(v);
                if (mallctl("epoch", NULL, NULL, &e, sizeof(e)) != 0 ||
                    mallctl("stats.allocated", &v, &len, NULL, 0) != 0 || v == 0)
                    _exit(1);
                _exit(0);
            },
            10);
        if (!r.exited_ok())
            failure = "child " + std::to_string(k) + ": " + r.describe();
    }
    stop.store(true);
    refresher.join();
    TU_REQUIRE_MSG(failure.empty(), failure);
}

// config.*: this build's answers (no profiling, fill and xmalloc built in,
// no embedded configuration string).
ATF_TEST_CASE_WITHOUT_HEAD(config__build_values);
ATF_TEST_CASE_BODY(config__build_values)
{
    TU_REQUIRE_EQ(std::string(get<const char *>("config.malloc_conf")), "");
    TU_REQUIRE_EQ(get<bool>("config.prof"), false);
    TU_REQUIRE_EQ(get<bool>("config.prof_libgcc"), false);
    TU_REQUIRE_EQ(get<bool>("config.prof_libunwind"), false);
    TU_REQUIRE_EQ(get<bool>("config.cache_oblivious"), false);
    TU_REQUIRE_EQ(get<bool>("config.fill"), true);
    TU_REQUIRE_EQ(get<bool>("config.xmalloc"), true);
    TU_REQUIRE_EQ(get<bool>("config.utrace"), true);
    // The suite builds with statistics and free checks (configure's defaults).
    TU_REQUIRE_EQ(get<bool>("config.stats"), true);
    TU_REQUIRE_EQ(get<bool>("config.opt_safety_checks"), true);
    TU_REQUIRE_EQ(get<size_t>("arenas.tcache_max"), testutil::largest_cached_class());
    const unsigned nh = get<unsigned>("arenas.nhbins");
    TU_REQUIRE_MSG(nh > nbins() && nh <= 64, "arenas.nhbins " << nh);
    size_t max = get<size_t>("max_background_threads");
    TU_REQUIRE_EQ(max, 1u);
    TU_REQUIRE_EQ(mallctl("max_background_threads", NULL, NULL, &max, sizeof(max)), 0);
    size_t two = 2, zero = 0;
    TU_REQUIRE_EQ(mallctl("max_background_threads", NULL, NULL, &two, sizeof(two)), EINVAL);
    TU_REQUIRE_EQ(mallctl("max_background_threads", NULL, NULL, &zero, sizeof(zero)), EINVAL);
    TU_REQUIRE_EQ(mallctl("max_background_threads", NULL, NULL, &max, sizeof(max) / 2), EINVAL);
}

// thread.tcache.enabled: off, a small block comes straight from the arena
// (its bin's curregs moves by exactly one without a flush); the thread's
// byte counts survive the cache; on again, caching resumes.
ATF_TEST_CASE_WITHOUT_HEAD(thread__tcache_enabled);
ATF_TEST_CASE_BODY(thread__tcache_enabled)
{
    free(malloc(48));
    TU_REQUIRE_EQ(get<bool>("thread.tcache.enabled"), true);
    unsigned bin = 0;
    while (get<size_t>("arenas.bin." + str(bin) + ".size") < 48)
        bin++;
    const std::string curregs = "stats.arenas." + str(get<unsigned>("thread.arena")) + ".bins." +
                                str(bin) + ".curregs";
    void *keep = malloc(48);  // in the cache's count when it goes
    const uint64_t allocated = get<uint64_t>("thread.allocated");
    bool off = false, old = false;
    size_t len = sizeof(old);
    TU_REQUIRE_EQ(mallctl("thread.tcache.enabled", &old, &len, &off, sizeof(off)), 0);
    TU_REQUIRE_EQ(old, true);
    TU_REQUIRE_EQ(get<bool>("thread.tcache.enabled"), false);
    TU_REQUIRE_MSG(get<uint64_t>("thread.allocated") == allocated,
                   "thread.allocated " << allocated << " -> " << get<uint64_t>("thread.allocated"));
    refresh();
    const size_t c0 = get<size_t>(curregs);
    void *p = malloc(48);
    ATF_REQUIRE(p != NULL);
    refresh();
    TU_REQUIRE_EQ(get<size_t>(curregs), c0 + 1);
    TU_REQUIRE_EQ(get<uint64_t>("thread.allocated"), allocated + 48);
    free(p);
    refresh();
    TU_REQUIRE_EQ(get<size_t>(curregs), c0);
    bool on = true;
    TU_REQUIRE_EQ(mallctl("thread.tcache.enabled", NULL, NULL, &on, 4), EINVAL);
    TU_REQUIRE_EQ(mallctl("thread.tcache.enabled", NULL, NULL, &on, sizeof(on)), 0);
    TU_REQUIRE_EQ(get<bool>("thread.tcache.enabled"), true);
    free(malloc(48));  // a fill: the cache takes more than one region
    refresh();
    TU_REQUIRE_MSG(get<size_t>(curregs) > c0, curregs << " " << c0);
    free(keep);
    // thread.idle returns the cache too.
    TU_REQUIRE_EQ(mallctl("thread.idle", NULL, NULL, NULL, 0), 0);
    refresh();
    TU_REQUIRE_EQ(get<size_t>(curregs), c0 - 1);
}

namespace {

unsigned
create_arena(void)
{
    unsigned index = 0;
    size_t len = sizeof(index);
    const int r = mallctl("arenas.create", &index, &len, NULL, 0);
    TU_REQUIRE_MSG(r == 0 && len == sizeof(index), "arenas.create: " << r);
    return index;
}

void
set_thread_arena(unsigned index)
{
    const int r = mallctl("thread.arena", NULL, NULL, &index, sizeof(index));
    TU_REQUIRE_MSG(r == 0, "thread.arena = " << index << ": " << r);
}

int
reset_arena(unsigned index)
{
    return mallctl(("arena." + str(index) + ".reset").c_str(), NULL, NULL, NULL, 0);
}

}  // namespace

// arenas.create: a new index after the automatic arenas, reached through
// thread.arena; arena.<i>.reset discards its blocks, and it serves again.
ATF_TEST_CASE_WITHOUT_HEAD(arenas__create_and_reset);
ATF_TEST_CASE_BODY(arenas__create_and_reset)
{
    const unsigned na = narenas();
    // A wrong size creates nothing and reads nothing.
    uint64_t wide = 77;
    size_t len = sizeof(wide);
    TU_REQUIRE_EQ(mallctl("arenas.create", &wide, &len, NULL, 0), EINVAL);
    TU_REQUIRE_EQ(len, 0u);
    TU_REQUIRE_EQ(wide, 77u);
    TU_REQUIRE_EQ(mallctl("arenas.create", NULL, NULL, NULL, 0), EINVAL);
    TU_REQUIRE_EQ(narenas(), na);
    // Extent hooks cannot be given.
    unsigned index = 0;
    len = sizeof(index);
    void *hooks = &index;
    TU_REQUIRE_EQ(mallctl("arenas.create", &index, &len, &hooks, sizeof(hooks)), EFAULT);
    TU_REQUIRE_EQ(narenas(), na);

    const unsigned a = create_arena();
    TU_REQUIRE_EQ(a, na);
    TU_REQUIRE_EQ(narenas(), na + 1);
    TU_REQUIRE_EQ(create_arena(), na + 1);
    refresh();
    TU_REQUIRE_EQ(get<bool>("arena." + str(a) + ".initialized"), true);
    const std::string sa = "stats.arenas." + str(a) + ".";
    TU_REQUIRE_EQ(get<size_t>(sa + "small.allocated"), 0u);

    const unsigned home = get<unsigned>("thread.arena");
    std::vector<void *> blocks;
    blocks.reserve(300);  // not in the new arena
    set_thread_arena(a);
    size_t small = 0, large = 0;
    // Every tenth block large: from 6 KiB past the largest small class.
    const size_t small_max = testutil::largest_small_class();
    for (size_t i = 0; i < 300; i++) {
        const size_t size = i % 10 == 9 ? small_max + 6 * KiB + i * 512 : 16 + i * 8;
        void *p = malloc(size);
        ATF_REQUIRE(p != NULL);
        memset(p, 0x5c, size);
        (size > small_max ? large : small) += malloc_usable_size(p);
        blocks.push_back(p);
    }
    flush_cache();
    refresh();
    TU_REQUIRE_EQ(get<size_t>(sa + "small.allocated"), small);
    TU_REQUIRE_EQ(get<size_t>(sa + "large.allocated"), large);
    TU_REQUIRE_EQ(get<unsigned>(sa + "nthreads"), 1u);
    TU_REQUIRE_MSG(get<size_t>(sa + "bins.1.curslabs") >= 1, "curslabs");
    TU_REQUIRE_EQ(get<size_t>(sa + "bins.1.curslabs"), get<size_t>(sa + "bins.1.curruns"));
    TU_REQUIRE_MSG(get<uint64_t>(sa + "bins.1.nreslabs") >= 1, "nreslabs");
    const size_t pactive = get<size_t>(sa + "pactive");
    TU_REQUIRE_MSG(pactive > 0, "pactive");

    // Automatic arenas and the merged index cannot be reset.
    TU_REQUIRE_EQ(reset_arena(0), EFAULT);
    TU_REQUIRE_EQ(reset_arena(arenas_all), EFAULT);
    TU_REQUIRE_EQ(mallctl(("arena." + str(a) + ".reset").c_str(), &len, &len, NULL, 0), EPERM);

    // The blocks are gone: nothing allocated, every page free.
    TU_REQUIRE_EQ(reset_arena(a), 0);
    refresh();
    TU_REQUIRE_EQ(get<size_t>(sa + "small.allocated"), 0u);
    TU_REQUIRE_EQ(get<size_t>(sa + "large.allocated"), 0u);
    TU_REQUIRE_EQ(get<size_t>(sa + "pactive"), 0u);
    TU_REQUIRE_EQ(get<size_t>(sa + "bins.1.curregs"), 0u);
    TU_REQUIRE_EQ(get<size_t>(sa + "bins.1.curslabs"), 0u);
    TU_REQUIRE_EQ(get<uint64_t>(sa + "small.ndalloc"), get<uint64_t>(sa + "small.nmalloc"));
    TU_REQUIRE_EQ(get<uint64_t>(sa + "large.ndalloc"), get<uint64_t>(sa + "large.nmalloc"));
    TU_REQUIRE_MSG(get<size_t>(sa + "mapped") > 0, "chunks kept");

    // The arena serves again, the same pages first.
    for (size_t i = 0; i < 300; i++) {
        const size_t size = i % 10 == 9 ? 20 * KiB + i * 512 : 16 + i * 8;
        blocks[i] = malloc(size);
        ATF_REQUIRE(blocks[i] != NULL);
        memset(blocks[i], 0xa3, size);
    }
    for (void *p : blocks)
        free(p);
    flush_cache();
    refresh();
    TU_REQUIRE_EQ(get<size_t>(sa + "small.allocated"), 0u);
    TU_REQUIRE_EQ(get<size_t>(sa + "large.allocated"), 0u);
    set_thread_arena(home);
}

// A reset is refused while another thread's cache is seen holding a block
// of the arena, and goes through once that thread has flushed it.
ATF_TEST_CASE_WITHOUT_HEAD(arenas__reset_waits_for_caches);
ATF_TEST_CASE_BODY(arenas__reset_waits_for_caches)
{
    const unsigned a = create_arena();
    std::atomic<int> step{ 0 };
    std::thread user([&] {
        set_thread_arena(a);
        for (int i = 0; i < 50; i++)
            free(malloc(64));  // cached
        step.store(1);
        while (step.load() != 2)
            usleep(1000);
        flush_cache();
        step.store(3);
        while (step.load() != 4)
            usleep(1000);
    });
    while (step.load() != 1)
        usleep(1000);
    TU_REQUIRE_EQ(reset_arena(a), EFAULT);
    step.store(2);
    while (step.load() != 3)
        usleep(1000);
    TU_REQUIRE_EQ(reset_arena(a), 0);
    step.store(4);
    user.join();
}

// Decay times: per arena, read-write within the option's bounds or -1/0; the
// default for new arenas; no muzzy stage (0).
ATF_TEST_CASE_WITHOUT_HEAD(arena__decay_ms);
ATF_TEST_CASE_BODY(arena__decay_ms)
{
    const ssize_t opt = get<ssize_t>("opt.decay_ms");
    TU_REQUIRE_EQ(get<ssize_t>("arena.0.dirty_decay_ms"), opt);
    TU_REQUIRE_EQ(get<ssize_t>("arenas.dirty_decay_ms"), opt);
    ssize_t ms = 5000, old = 0;
    size_t len = sizeof(old);
    TU_REQUIRE_EQ(mallctl("arena.0.dirty_decay_ms", &old, &len, &ms, sizeof(ms)), 0);
    TU_REQUIRE_EQ(old, opt);
    TU_REQUIRE_EQ(get<ssize_t>("arena.0.dirty_decay_ms"), 5000);
    refresh();
    TU_REQUIRE_EQ(get<ssize_t>("stats.arenas.0.dirty_decay_ms"), 5000);
    // Setting it purges what is dirty.
    TU_REQUIRE_EQ(get<size_t>("stats.arenas.0.pdirty"), 0u);
    ssize_t bad[] = { -2, 1, 99, 3600001 };
    for (ssize_t b : bad)
        TU_REQUIRE_MSG(mallctl("arena.0.dirty_decay_ms", NULL, NULL, &b, sizeof(b)) == EFAULT, b);
    // jemalloc's -1 (never) and 0 (at once) are taken, and read back as
    // written (applied as the longest and the shortest time).
    for (ssize_t special : { ssize_t{-1}, ssize_t{0} }) {
        TU_REQUIRE_EQ(mallctl("arena.0.dirty_decay_ms", NULL, NULL, &special, sizeof(special)), 0);
        TU_REQUIRE_EQ(get<ssize_t>("arena.0.dirty_decay_ms"), special);
    }
    TU_REQUIRE_EQ(mallctl("arena.0.dirty_decay_ms", NULL, NULL, &ms, sizeof(ms)), 0);
    TU_REQUIRE_EQ(mallctl("arena.0.dirty_decay_ms", NULL, NULL, &ms, sizeof(ms) / 2), EINVAL);
    TU_REQUIRE_EQ(mallctl(("arena." + str(arenas_all) + ".dirty_decay_ms").c_str(), &old, &len,
                          NULL, 0), EFAULT);
    TU_REQUIRE_EQ(get<ssize_t>("arena.0.dirty_decay_ms"), 5000);
    // New arenas take arenas.dirty_decay_ms.
    ms = 2000;
    TU_REQUIRE_EQ(mallctl("arenas.dirty_decay_ms", NULL, NULL, &ms, sizeof(ms)), 0);
    TU_REQUIRE_EQ(get<ssize_t>("arenas.dirty_decay_ms"), 2000);
    const unsigned a = create_arena();
    TU_REQUIRE_EQ(get<ssize_t>("arena." + str(a) + ".dirty_decay_ms"), 2000);
    TU_REQUIRE_EQ(get<ssize_t>("arena.0.dirty_decay_ms"), 5000);
    // The decay trigger takes no value.
    TU_REQUIRE_EQ(mallctl("arena.0.decay", NULL, NULL, NULL, 0), 0);
    TU_REQUIRE_EQ(mallctl("arena.0.decay", &old, &len, NULL, 0), EPERM);
    // Muzzy: always 0.
    const char *muzzy[] = { "arenas.muzzy_decay_ms", "arena.0.muzzy_decay_ms" };
    for (const char *name : muzzy) {
        TU_REQUIRE_EQ(get<ssize_t>(name), 0);
        ssize_t zero = 0, one = 1;
        TU_REQUIRE_EQ(mallctl(name, NULL, NULL, &zero, sizeof(zero)), 0);
        TU_REQUIRE_EQ(mallctl(name, NULL, NULL, &one, sizeof(one)), EFAULT);
    }
    refresh();
    TU_REQUIRE_EQ(get<ssize_t>("stats.arenas.0.muzzy_decay_ms"), 0);
    TU_REQUIRE_EQ(get<size_t>("stats.arenas.0.pmuzzy"), 0u);
}

// The other new statistics: realloc(p, 0) calls, the purging thread's
// counts, the ctl mutex, arena uptime and metadata, and the dirty_* names
// as the older ones.
ATF_TEST_CASE_WITHOUT_HEAD(stats__jemalloc5_names);
ATF_TEST_CASE_BODY(stats__jemalloc5_names)
{
    const size_t z0 = get<size_t>("stats.zero_reallocs");
    void *p = malloc(10);
    p = realloc(p, 0);
    free(p);
    p = realloc(NULL, 0);  // no pointer: not counted
    free(p);
    TU_REQUIRE_EQ(get<size_t>("stats.zero_reallocs"), z0 + 1);

    TU_REQUIRE_EQ(get<size_t>("stats.background_thread.num_threads"), 0u);
    TU_REQUIRE_EQ(get<uint64_t>("stats.background_thread.num_runs"), 0u);
    bool on = true;
    TU_REQUIRE_EQ(mallctl("background_thread", NULL, NULL, &on, sizeof(on)), 0);
    TU_REQUIRE_EQ(get<size_t>("stats.background_thread.num_threads"), 1u);
    on = false;
    TU_REQUIRE_EQ(mallctl("background_thread", NULL, NULL, &on, sizeof(on)), 0);

    const uint64_t ops = get<uint64_t>("stats.mutexes.ctl.num_ops");
    refresh();
    TU_REQUIRE_MSG(get<uint64_t>("stats.mutexes.ctl.num_ops") > ops, "ctl num_ops");
    TU_REQUIRE_EQ(get<uint64_t>("stats.mutexes.prof.num_ops"), 0u);

    usleep(20000);
    refresh();
    TU_REQUIRE_MSG(get<uint64_t>("stats.arenas.0.uptime") >= 10000000, "uptime");
    TU_REQUIRE_EQ(get<uint64_t>("stats.arenas." + str(arenas_all) + ".uptime"),
                  get<uint64_t>("stats.arenas.0.uptime"));
    // The arenas' metadata adds up to stats.metadata.
    size_t base = 0;
    for (unsigned i = 0; i < narenas(); i++)
        if (get<bool>("arena." + str(i) + ".initialized"))
            base += get<size_t>("stats.arenas." + str(i) + ".base");
    TU_REQUIRE_EQ(base, get<size_t>("stats.metadata"));
    TU_REQUIRE_EQ(get<size_t>("stats.arenas." + str(arenas_all) + ".base"),
                  get<size_t>("stats.metadata"));
    TU_REQUIRE_EQ(get<uint64_t>("stats.arenas.0.dirty_npurge"),
                  get<uint64_t>("stats.arenas.0.npurge"));
    TU_REQUIRE_EQ(get<uint64_t>("stats.arenas.0.dirty_purged"),
                  get<uint64_t>("stats.arenas.0.purged"));
    TU_REQUIRE_EQ(get<uint64_t>("stats.arenas.0.dirty_nmadvise"),
                  get<uint64_t>("stats.arenas.0.nmadvise"));
    TU_REQUIRE_EQ(get<uint64_t>("stats.arenas.0.bins.0.nslabs"),
                  get<uint64_t>("stats.arenas.0.bins.0.nruns"));
}

// An inner name's MIB, completed by the caller as jemalloc's users do.
ATF_TEST_CASE_WITHOUT_HEAD(mib__inner_prefix);
ATF_TEST_CASE_BODY(mib__inner_prefix)
{
    refresh();
    size_t mib[8];
    size_t len = 8;
    ATF_REQUIRE_EQ(mallctlnametomib("stats.arenas", mib, &len), 0);
    TU_REQUIRE_EQ(len, 2u);
    const mib_t full = mib_of("stats.arenas.0.bins.3.nmalloc");
    TU_REQUIRE_MSG(mib[0] == full.v[0] && mib[1] == full.v[1], "prefix differs");
    mib[2] = 0;
    mib[3] = full.v[3];
    mib[4] = 3;
    mib[5] = full.v[5];
    uint64_t v = 0;
    size_t vlen = sizeof(v);
    ATF_REQUIRE_EQ(mallctlbymib(mib, 6, &v, &vlen, NULL, 0), 0);
    TU_REQUIRE_EQ(v, get<uint64_t>("stats.arenas.0.bins.3.nmalloc"));
    ATF_REQUIRE_EQ(mallctlbymib(mib, 2, &v, &vlen, NULL, 0), ENOENT);
    ATF_REQUIRE_EQ(mallctlbymib(mib, 3, &v, &vlen, NULL, 0), ENOENT);
    len = 8;
    ATF_REQUIRE_EQ(mallctlnametomib("arenas.bin", mib, &len), 0);
    TU_REQUIRE_EQ(len, 2u);
    const mib_t size = mib_of("arenas.bin.0.size");
    mib[2] = 4;
    mib[3] = size.v[3];
    size_t s = 0;
    vlen = sizeof(s);
    ATF_REQUIRE_EQ(mallctlbymib(mib, 4, &s, &vlen, NULL, 0), 0);
    TU_REQUIRE_EQ(s, get<size_t>("arenas.bin.4.size"));
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, names__every_name_answers);
    ATF_ADD_TEST_CASE(tcs, names__unknown_give_enoent);
    ATF_ADD_TEST_CASE(tcs, sizes__wrong_size_gives_einval);
    ATF_ADD_TEST_CASE(tcs, writes__background_thread);
    ATF_ADD_TEST_CASE(tcs, writes__read_only_gives_eperm);
    ATF_ADD_TEST_CASE(tcs, mib__same_as_name);
    ATF_ADD_TEST_CASE(tcs, epoch__allocated_follows_malloc);
    ATF_ADD_TEST_CASE(tcs, thread__arena_moves_thread);
    ATF_ADD_TEST_CASE(tcs, arena__purge_drops_dirty);
    ATF_ADD_TEST_CASE(tcs, opt__follows_malloc_options);
    ATF_ADD_TEST_CASE(tcs, opt__jemalloc_names_follow_keys);
    ATF_ADD_TEST_CASE(tcs, opt__jemalloc_names_without_concept);
    ATF_ADD_TEST_CASE(tcs, exact__two_threads);
    ATF_ADD_TEST_CASE(tcs, concurrent__with_stress);
    ATF_ADD_TEST_CASE(tcs, fork__while_refreshing);
    ATF_ADD_TEST_CASE(tcs, config__build_values);
    ATF_ADD_TEST_CASE(tcs, thread__tcache_enabled);
    ATF_ADD_TEST_CASE(tcs, arenas__create_and_reset);
    ATF_ADD_TEST_CASE(tcs, arenas__reset_waits_for_caches);
    ATF_ADD_TEST_CASE(tcs, arena__decay_ms);
    ATF_ADD_TEST_CASE(tcs, stats__jemalloc5_names);
    ATF_ADD_TEST_CASE(tcs, mib__inner_prefix);
}
