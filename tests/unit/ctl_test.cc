// Unit tests of the mallctl name space (lib/ctl.h), called directly:
// reads of known values, the errors (ENOENT, EINVAL, EPERM), name to MIB
// translation, partial MIBs and inner names' prefixes, the epoch's
// snapshot, a write, and the arena table's created arenas.
#include <atf-c++.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "allocator.h"
#include "arena.h"
#include "chunk.h"
#include "ctl.h"
#include "init.h"
#include "platform.h"
#include "require_msg.h"
#include "size_classes.h"
#include "thread_state.h"

using namespace arenalloc;

namespace {

template <typename T>
T read_name(const char *name) {
    T v;
    memset(&v, 0xab, sizeof(v));
    size_t len = sizeof(v);
    int e = ctl_byname(name, &v, &len, nullptr, 0);
    ATF_REQUIRE_MSG(e == 0, name << ": error " << e);
    ATF_REQUIRE_EQ(len, sizeof(T));
    return v;
}

int read_error(const std::string &name) {
    // A name's figure is a size_t or a uint64_t (the same on 64-bit
    // targets): the error of neither size is what the name gives.
    uint64_t v = 0;
    size_t len = sizeof(size_t);
    int e = ctl_byname(name.c_str(), &v, &len, nullptr, 0);
    if (e == EINVAL && sizeof(size_t) != sizeof(uint64_t)) {
        len = sizeof(v);
        e = ctl_byname(name.c_str(), &v, &len, nullptr, 0);
    }
    return e;
}

// The MIB of name (which must translate) in mib; its length.
size_t mib_of(const char *name, size_t *mib) {
    size_t len = kCtlMaxDepth;
    ATF_REQUIRE_EQ(ctl_nametomib(name, mib, &len), 0);
    return len;
}

void refresh() {
    uint64_t one = 1;
    ATF_REQUIRE_EQ(ctl_byname("epoch", nullptr, nullptr, &one, sizeof(one)), 0);
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(ctl__reads_known_values);
ATF_TEST_CASE_BODY(ctl__reads_known_values) {
    ATF_REQUIRE_EQ(read_name<size_t>("arenas.page"), kPage);
    ATF_REQUIRE_EQ(read_name<size_t>("arenas.quantum"), kQuantum);
    ATF_REQUIRE_EQ(read_name<unsigned>("arenas.nbins"), kNumBins);
    ATF_REQUIRE_EQ(read_name<unsigned>("arenas.narenas"), g_narenas);
    ATF_REQUIRE_EQ(read_name<size_t>("arenas.chunksize"), g_chunk.chunk_size);
    for (unsigned b : {0u, 1u, 8u, kNumBins - 1}) {
        std::string name = "arenas.bin." + std::to_string(b) + ".";
        ATF_REQUIRE_EQ(read_name<size_t>((name + "size").c_str()), bin_info(b).region_size);
        ATF_REQUIRE_EQ(read_name<uint32_t>((name + "nregs").c_str()), bin_info(b).nregs);
    }
    const char *version = read_name<const char *>("version");
    ATF_REQUIRE(version != nullptr);
    ATF_REQUIRE(strncmp(version, "arenalloc ", 10) == 0);
}

ATF_TEST_CASE_WITHOUT_HEAD(ctl__unknown_names);
ATF_TEST_CASE_BODY(ctl__unknown_names) {
    aa_free(aa_malloc(100));  // an arena with a chunk
    const std::string unknown[] = {
        "",
        "nosuch",
        "arenas.nosuch",
        "arenas.page.more",  // past a leaf
        "arenas",            // an inner node
        "arenas.bin",        // a number missing
        "arenas.bin.x.size",
        "arenas.bin." + std::to_string(kNumBins) + ".size",  // out of range
        "arenas.bin.-1.size",
        "stats.arenas." + std::to_string(g_narenas + 1) + ".mapped",
        "Arenas.page",
        "arenas..page",
    };
    for (const std::string &name : unknown)
        ATF_REQUIRE_MSG(read_error(name) == ENOENT, "'" << name << "': " << read_error(name));
    // An arena that was never created has no statistics.
    unsigned last = g_narenas - 1;
    ATF_REQUIRE(arena_peek(last) == nullptr);
    refresh();
    ATF_REQUIRE_EQ(read_error("stats.arenas." + std::to_string(last) + ".mapped"), ENOENT);
    // All arenas merged has two spellings, and both exist.
    size_t all = read_name<size_t>(("stats.arenas." + std::to_string(kCtlArenasAll) + ".mapped").c_str());
    ATF_REQUIRE_EQ(read_name<size_t>(("stats.arenas." + std::to_string(g_narenas) + ".mapped").c_str()), all);
    ATF_REQUIRE(all > 0);
}

ATF_TEST_CASE_WITHOUT_HEAD(ctl__size_mismatch);
ATF_TEST_CASE_BODY(ctl__size_mismatch) {
    // A short read copies what fits and says how much.
    unsigned char buf[16];
    memset(buf, 0, sizeof(buf));
    const size_t half = sizeof(size_t) / 2;  // 4, or 2 on 32-bit targets
    size_t len = half;
    ATF_REQUIRE_EQ(ctl_byname("arenas.page", buf, &len, nullptr, 0), EINVAL);
    ATF_REQUIRE_EQ(len, half);
    size_t page = kPage;
    ATF_REQUIRE(memcmp(buf, &page, half) == 0);
    ATF_REQUIRE_EQ(buf[half], 0);
    // A long one copies the value.
    memset(buf, 0, sizeof(buf));
    len = sizeof(buf);
    ATF_REQUIRE_EQ(ctl_byname("arenas.page", buf, &len, nullptr, 0), EINVAL);
    ATF_REQUIRE_EQ(len, sizeof(size_t));
    ATF_REQUIRE(memcmp(buf, &page, sizeof(page)) == 0);
    // A write of the wrong size changes nothing.
    uint32_t small = 1;
    ATF_REQUIRE_EQ(ctl_byname("epoch", nullptr, nullptr, &small, sizeof(small)), EINVAL);
    unsigned arena = 0;
    ATF_REQUIRE_EQ(ctl_byname("thread.arena", nullptr, nullptr, &arena, 2), EINVAL);
    // A value out of range.
    arena = g_narenas;
    ATF_REQUIRE_EQ(ctl_byname("thread.arena", nullptr, nullptr, &arena, sizeof(arena)), EINVAL);
    ATF_REQUIRE_EQ(ctl_byname(nullptr, buf, &len, nullptr, 0), EINVAL);
}

ATF_TEST_CASE_WITHOUT_HEAD(ctl__read_only_and_triggers);
ATF_TEST_CASE_BODY(ctl__read_only_and_triggers) {
    size_t v = 1 << 16;
    ATF_REQUIRE_EQ(ctl_byname("arenas.page", nullptr, nullptr, &v, sizeof(v)), EPERM);
    ATF_REQUIRE_EQ(read_name<size_t>("arenas.page"), kPage);
    bool on = true;
    ATF_REQUIRE_EQ(ctl_byname("opt.junk", nullptr, nullptr, &on, sizeof(on)), EPERM);
    refresh();
    ATF_REQUIRE_EQ(ctl_byname("stats.allocated", nullptr, nullptr, &v, sizeof(v)), EPERM);
    // A trigger takes no value either way.
    ATF_REQUIRE_EQ(ctl_byname("thread.tcache.flush", nullptr, nullptr, nullptr, 0), 0);
    size_t len = sizeof(v);
    ATF_REQUIRE_EQ(ctl_byname("thread.tcache.flush", &v, &len, nullptr, 0), EPERM);
    ATF_REQUIRE_EQ(ctl_byname("thread.tcache.flush", nullptr, nullptr, &v, sizeof(v)), EPERM);
}

ATF_TEST_CASE_WITHOUT_HEAD(ctl__name_to_mib);
ATF_TEST_CASE_BODY(ctl__name_to_mib) {
    // A named component is its place among its siblings (version, epoch,
    // background_thread, thread, opt, arena, arenas, stats at the top;
    // narenas, page, quantum, chunksize, nbins, bin... under arenas), a
    // number is itself.
    size_t mib[kCtlMaxDepth];
    size_t len = kCtlMaxDepth;
    ATF_REQUIRE_EQ(ctl_nametomib("arenas.page", mib, &len), 0);
    ATF_REQUIRE_EQ(len, 2u);
    ATF_REQUIRE_EQ(mib[0], 6u);
    ATF_REQUIRE_EQ(mib[1], 1u);
    len = kCtlMaxDepth;
    ATF_REQUIRE_EQ(ctl_nametomib("arenas.bin.3.size", mib, &len), 0);
    ATF_REQUIRE_EQ(len, 4u);
    const size_t expect[] = {6, 5, 3, 0};
    ATF_REQUIRE(memcmp(mib, expect, sizeof(expect)) == 0);
    size_t v = 0, vlen = sizeof(v);
    ATF_REQUIRE_EQ(ctl_bymib(mib, len, &v, &vlen, nullptr, 0), 0);
    ATF_REQUIRE_EQ(v, bin_info(3).region_size);
    // Another bin by changing the number only.
    mib[2] = 7;
    ATF_REQUIRE_EQ(ctl_bymib(mib, len, &v, &vlen, nullptr, 0), 0);
    ATF_REQUIRE_EQ(v, bin_info(7).region_size);
    // The deepest names: stats.arenas.<i>.bins.<j>.nmalloc.
    len = kCtlMaxDepth;
    ATF_REQUIRE_EQ(ctl_nametomib("stats.arenas.0.bins.5.nmalloc", mib, &len), 0);
    ATF_REQUIRE_EQ(len, 6u);
    ATF_REQUIRE_EQ(mib[0], 7u);
    ATF_REQUIRE_EQ(mib[2], 0u);
    ATF_REQUIRE_EQ(mib[4], 5u);
    ATF_REQUIRE_EQ(ctl_nametomib("nosuch.name", mib, &len), ENOENT);
}

ATF_TEST_CASE_WITHOUT_HEAD(ctl__partial_mib);
ATF_TEST_CASE_BODY(ctl__partial_mib) {
    size_t mib[4] = {99, 99, 99, 99};
    size_t len = 2;  // room for two components
    ATF_REQUIRE_EQ(ctl_nametomib("arenas.bin.0.size", mib, &len), 0);
    ATF_REQUIRE_EQ(len, 2u);
    ATF_REQUIRE_EQ(mib[0], 6u);
    ATF_REQUIRE_EQ(mib[1], 5u);
    ATF_REQUIRE_EQ(mib[2], 99u);  // nothing written past the room
    // Completed by hand.
    mib[2] = 2;
    mib[3] = 0;
    size_t v = 0, vlen = sizeof(v);
    ATF_REQUIRE_EQ(ctl_bymib(mib, 4, &v, &vlen, nullptr, 0), 0);
    ATF_REQUIRE_EQ(v, bin_info(2).region_size);
    // Stopped short, or past the end of the tree: not a value.
    ATF_REQUIRE_EQ(ctl_bymib(mib, 2, &v, &vlen, nullptr, 0), ENOENT);
    const size_t bad[] = {99};
    ATF_REQUIRE_EQ(ctl_bymib(bad, 1, &v, &vlen, nullptr, 0), ENOENT);
    const size_t too_deep[] = {6, 1, 0};
    ATF_REQUIRE_EQ(ctl_bymib(too_deep, 3, &v, &vlen, nullptr, 0), ENOENT);
}

ATF_TEST_CASE_WITHOUT_HEAD(ctl__epoch_refreshes_the_snapshot);
ATF_TEST_CASE_BODY(ctl__epoch_refreshes_the_snapshot) {
    refresh();
    uint64_t epoch0 = read_name<uint64_t>("epoch");
    size_t allocated0 = read_name<size_t>("stats.allocated");
    uint64_t huge0 = read_name<uint64_t>("stats.huge.nmalloc");
    void *p = aa_malloc(size_t{6} << 20);
    ATF_REQUIRE(p != nullptr);
    // Unchanged until the next epoch.
    ATF_REQUIRE_EQ(read_name<size_t>("stats.allocated"), allocated0);
    ATF_REQUIRE_EQ(read_name<uint64_t>("epoch"), epoch0);
    refresh();
    ATF_REQUIRE(read_name<uint64_t>("epoch") > epoch0);
    ATF_REQUIRE_EQ(read_name<size_t>("stats.allocated"), allocated0 + (size_t{6} << 20));
    ATF_REQUIRE_EQ(read_name<uint64_t>("stats.huge.nmalloc"), huge0 + 1);
    aa_free(p);
    refresh();
    ATF_REQUIRE_EQ(read_name<size_t>("stats.allocated"), allocated0);
}

ATF_TEST_CASE_WITHOUT_HEAD(ctl__thread_arena_moves_the_thread);
ATF_TEST_CASE_BODY(ctl__thread_arena_moves_the_thread) {
    aa_free(aa_malloc(16));  // the thread has an arena now
    unsigned cur = read_name<unsigned>("thread.arena");
    ATF_REQUIRE(cur < g_narenas);
    unsigned target = (cur + 1) % g_narenas;
    unsigned old = 12345;
    size_t len = sizeof(old);
    ATF_REQUIRE_EQ(ctl_byname("thread.arena", &old, &len, &target, sizeof(target)), 0);
    ATF_REQUIRE_EQ(old, cur);
    ATF_REQUIRE_EQ(read_name<unsigned>("thread.arena"), target);
    ATF_REQUIRE(thread_arena() != nullptr);
    ATF_REQUIRE_EQ(thread_arena()->index, target);
}

ATF_TEST_CASE_WITHOUT_HEAD(ctl__inner_names);
ATF_TEST_CASE_BODY(ctl__inner_names) {
    // An inner name gives its prefix MIB; no value by name or by that MIB.
    size_t mib[kCtlMaxDepth];
    ATF_REQUIRE_EQ(mib_of("stats.arenas", mib), 2u);
    ATF_REQUIRE_EQ(mib[0], 7u);
    size_t v = 0, vlen = sizeof(v);
    ATF_REQUIRE_EQ(ctl_bymib(mib, 2, &v, &vlen, nullptr, 0), ENOENT);
    ATF_REQUIRE_EQ(read_error("stats.arenas"), ENOENT);
    // Completed: stats.arenas.0.mapped (mapped is the second arena leaf).
    refresh();
    mib[2] = 0;
    mib[3] = 1;
    ATF_REQUIRE_EQ(ctl_bymib(mib, 4, &v, &vlen, nullptr, 0), 0);
    ATF_REQUIRE_EQ(v, read_name<size_t>("stats.arenas.0.mapped"));
    ATF_REQUIRE_EQ(mib_of("config", mib), 1u);
    ATF_REQUIRE_EQ(mib_of("stats.arenas.0.bins.2", mib), 5u);
    ATF_REQUIRE_EQ(mib[4], 2u);
    // An inner name that does not exist is still unknown.
    size_t len = kCtlMaxDepth;
    ATF_REQUIRE_EQ(ctl_nametomib("stats.nosuch", mib, &len), ENOENT);
}

ATF_TEST_CASE_WITHOUT_HEAD(ctl__created_arenas);
ATF_TEST_CASE_BODY(ctl__created_arenas) {
    aa_free(aa_malloc(16));
    const unsigned autos = g_narenas_auto;
    ATF_REQUIRE_EQ(g_narenas, autos);
    unsigned index = 0;
    size_t len = sizeof(index);
    ATF_REQUIRE_EQ(ctl_byname("arenas.create", &index, &len, nullptr, 0), 0);
    ATF_REQUIRE_EQ(index, autos);
    ATF_REQUIRE_EQ(g_narenas, autos + 1);
    ATF_REQUIRE_EQ(g_narenas_auto, autos);
    ATF_REQUIRE(arena_peek(index) != nullptr);
    ATF_REQUIRE_EQ(arena_peek(index)->index, index);
    ATF_REQUIRE(arena_index_is_manual(index) && !arena_index_is_manual(autos - 1));
    ATF_REQUIRE_EQ(read_name<unsigned>("arenas.narenas"), autos + 1);
    // The merged index follows the count (jemalloc 4's spelling).
    refresh();
    const std::string merged = "stats.arenas." + std::to_string(autos + 1) + ".mapped";
    ATF_REQUIRE_EQ(read_error(merged), 0);
    // The thread reaches it by thread.arena only.
    ATF_REQUIRE_EQ(ctl_byname("thread.arena", nullptr, nullptr, &index, sizeof(index)), 0);
    ATF_REQUIRE_EQ(thread_arena(), arena_peek(index));
    void *p = aa_malloc(100);
    ATF_REQUIRE_EQ(chunk_containing(p)->arena, arena_peek(index));
    aa_free(p);
    // Reset: refused for an automatic arena, done for this one.
    std::string reset0 = "arena.0.reset";
    ATF_REQUIRE_EQ(ctl_byname(reset0.c_str(), nullptr, nullptr, nullptr, 0), EFAULT);
    std::string reset = "arena." + std::to_string(index) + ".reset";
    ATF_REQUIRE_EQ(ctl_byname(reset.c_str(), nullptr, nullptr, nullptr, 0), 0);
    ATF_REQUIRE_EQ(arena_peek(index)->nactive, 0u);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, ctl__reads_known_values);
    ATF_ADD_TEST_CASE(tcs, ctl__unknown_names);
    ATF_ADD_TEST_CASE(tcs, ctl__size_mismatch);
    ATF_ADD_TEST_CASE(tcs, ctl__read_only_and_triggers);
    ATF_ADD_TEST_CASE(tcs, ctl__name_to_mib);
    ATF_ADD_TEST_CASE(tcs, ctl__partial_mib);
    ATF_ADD_TEST_CASE(tcs, ctl__epoch_refreshes_the_snapshot);
    ATF_ADD_TEST_CASE(tcs, ctl__thread_arena_moves_the_thread);
    ATF_ADD_TEST_CASE(tcs, ctl__inner_names);
    ATF_ADD_TEST_CASE(tcs, ctl__created_arenas);
}
