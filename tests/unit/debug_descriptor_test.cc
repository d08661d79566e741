// Unit tests of the debug descriptor (lib/debug_descriptor.h): it must
// describe the structures as compiled, and a change to any described
// structure must not pass unnoticed.
//
// Each structure a walker reads is listed below with EVERY member, in
// declaration order.  The list is checked against the compiled layout (each
// member where the previous one ends, the structure ending after the
// last), so adding, removing or moving a member fails here; the names in
// the list hash to ARENALLOC_DEBUG_LAYOUT_HASH, so whoever edits the list
// must also touch debug_descriptor.h, next to the version number.  (A new
// member small enough to hide in existing padding is not seen by the
// layout check, only by review.)
#include <atf-c++.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iomanip>

#include "arena.h"
#include "base.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "debug_descriptor.h"
#include "huge.h"
#include "init.h"
#include "mutex.h"
#include "require_msg.h"
#include "run.h"
#include "size_classes.h"
#include "hardened.h"
#include "tcache.h"
#include "thread_state.h"

using namespace arenalloc;

namespace {

struct Member {
    const char *type;
    const char *name;
    size_t offset;
    size_t size;   // 0: flexible array member
    size_t align;
};

struct Layout {
    const char *type;
    size_t size;
    size_t align;
    const Member *members;
    size_t nmembers;
};

#define M(T, m) Member{#T, #m, offsetof(T, m), sizeof(T::m), alignof(decltype(T::m))}
#define FLEX(T, m, E) Member{#T, #m, offsetof(T, m), 0, alignof(E)}
#define LAYOUT(T, arr) Layout{#T, sizeof(T), alignof(T), arr, sizeof(arr) / sizeof(arr[0])}

const Member kMutex[] = {M(Mutex, lock_), M(Mutex, nacquired_), M(Mutex, ncontended_),
                         M(Mutex, taken_)};
const Member kBin[] = {M(Bin, current), M(Bin, nonfull), M(Bin, empty), M(Bin, nempty),
                       M(Bin, nmalloc), M(Bin, ndalloc),
                       M(Bin, nrequests), M(Bin, nfills), M(Bin, nflushes), M(Bin, nruns),
                       M(Bin, curruns), M(Bin, nreslabs)};
const Member kLarge[] = {M(LargeClassStats, nmalloc), M(LargeClassStats, ndalloc),
                         M(LargeClassStats, curruns)};
const Member kArenaStats[] = {
    M(ArenaStats, nmalloc_small), M(ArenaStats, ndalloc_small), M(ArenaStats, nmalloc_large),
    M(ArenaStats, ndalloc_large), M(ArenaStats, allocated_small), M(ArenaStats, allocated_large),
    M(ArenaStats, nchunks), M(ArenaStats, npurge_passes), M(ArenaStats, nmadvise),
    M(ArenaStats, npurged_pages)};
const Member kArena[] = {
    M(Arena, mutex), M(Arena, index), M(Arena, nthreads), M(Arena, bins),
    M(Arena, free_buckets), M(Arena, free_nonempty), M(Arena, chunks), M(Arena, nempty_chunks),
    M(Arena, spare_runs), M(Arena, nactive), M(Arena, nactive_peak), M(Arena, ndirty),
    M(Arena, nkept), M(Arena, kept_since),
    M(Arena, dirty_first), M(Arena, dirty_last), M(Arena, decay_epoch_end),
    M(Arena, nclean_taken), M(Arena, ratio_purged), M(Arena, ratio_purged_at),
    M(Arena, lg_allowance_boost), M(Arena, decay_ms), M(Arena, created_ms),
    M(Arena, stats), M(Arena, large), M(Arena, remote)};
const Member kChunk[] = {M(Chunk, magic), M(Chunk, arena), M(Chunk, next), M(Chunk, prev),
                         M(Chunk, npages), M(Chunk, header_pages), M(Chunk, nfree_pages),
                         M(Chunk, from_sbrk), FLEX(Chunk, map, PageMapEntry)};
const Member kRun[] = {M(Run, base), M(Run, start_magic), M(Run, region_size),
                       M(Run, reciprocal), M(Run, nregs),
                       M(Run, nfree), M(Run, hint), M(Run, state), M(Run, size_class),
                       M(Run, bin_offset_words),
                       M(Run, npages), M(Run, chunk), M(Run, bitmap), M(Run, zeroed),
                       M(Run, ndirty), M(Run, dirty_since), M(Run, next), M(Run, prev), M(Run, dirty_next),
                       M(Run, dirty_prev)};
const Member kBitmap[] = {M(RunBitmap, words)};
const Member kHuge[] = {M(Huge, addr), M(Huge, usize), M(Huge, mapped), M(Huge, arena),
                        M(Huge, next), M(Huge, prev)};
const Member kHugeStats[] = {M(HugeStats, nmalloc), M(HugeStats, ndalloc),
                             M(HugeStats, allocated), M(HugeStats, mapped)};
const Member kTCache[] = {M(TCache, bins), M(TCache, active), M(TCache, flow), M(TCache, arena),
                          M(TCache, nmalloc_ticked), M(TCache, merged_nmalloc), M(TCache, merged_nfree), M(TCache, nfree_adjust),
                          M(TCache, gc_bin), M(TCache, gc_left), M(TCache, next_free),
                          M(TCache, next_all), M(TCache, spare_batches), M(TCache, quarantine),
                          FLEX(TCache, slots, void *)};
const Member kTCacheBin[] = {M(TCacheBin, top), M(TCacheBin, stack), M(TCacheBin, limit),
                             M(TCacheBin, tick_left),
#if UINTPTR_MAX == UINT32_MAX
                             M(TCacheBin, pad_to_four_words),  // 32-bit targets only
#endif
};
const Member kBinInfo[] = {M(BinInfo, region_size), M(BinInfo, run_pages), M(BinInfo, nregs),
                           M(BinInfo, reciprocal), M(BinInfo, start_magic)};
const Member kSizeClassTable[] = {M(SizeClassTable, size), M(SizeClassTable, bin),
                                  M(SizeClassTable, lookup), M(SizeClassTable, bin_offset_words)};
const Member kChunkGeometry[] = {M(ChunkGeometry, lg_chunk), M(ChunkGeometry, chunk_size),
                                 M(ChunkGeometry, npages), M(ChunkGeometry, header_pages),
                                 M(ChunkGeometry, large_max)};

const Layout kLayouts[] = {
    LAYOUT(Mutex, kMutex),           LAYOUT(Bin, kBin),
    LAYOUT(LargeClassStats, kLarge), LAYOUT(ArenaStats, kArenaStats),
    LAYOUT(Arena, kArena),           LAYOUT(Chunk, kChunk),
    LAYOUT(Run, kRun),               LAYOUT(RunBitmap, kBitmap),
    LAYOUT(Huge, kHuge),             LAYOUT(HugeStats, kHugeStats),
    LAYOUT(TCache, kTCache),         LAYOUT(TCacheBin, kTCacheBin),
    LAYOUT(BinInfo, kBinInfo),       LAYOUT(SizeClassTable, kSizeClassTable),
    LAYOUT(ChunkGeometry, kChunkGeometry),
};

size_t round_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s != '\0'; s++) {
        h ^= static_cast<unsigned char>(*s);
        h *= 0x100000001b3ULL;
    }
    return h;
}

void require_field(const char *what, aa_debug_field f, size_t offset, size_t size) {
    ATF_REQUIRE_MSG(f.offset == offset && f.size == size,
                    what << ": descriptor says offset " << f.offset << " size " << f.size
                         << ", compiled " << offset << " " << size);
}

const struct arenalloc_debug_descriptor &d = arenalloc_debug_descriptor;

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(debug_descriptor__every_member_listed);
ATF_TEST_CASE_BODY(debug_descriptor__every_member_listed)
{
    for (const Layout &l : kLayouts) {
        size_t end = 0;
        for (size_t i = 0; i < l.nmembers; i++) {
            const Member &m = l.members[i];
            size_t expected = round_up(end, m.align);
            ATF_REQUIRE_MSG(m.offset == expected,
                            l.type << "::" << m.name << " is at " << m.offset << ", expected "
                                   << expected << ": a member was added, removed or moved; "
                                   "update lib/debug_descriptor.{h,cc} and this list");
            ATF_REQUIRE_MSG(m.size != 0 || i + 1 == l.nmembers,
                            l.type << "::" << m.name << " (flexible) must be last");
            end = m.offset + m.size;
        }
        ATF_REQUIRE_MSG(round_up(end, l.align) == l.size,
                        l.type << " is " << l.size << " bytes but its listed members end at "
                               << end << ": a member was added; update "
                               "lib/debug_descriptor.{h,cc} and this list");
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(debug_descriptor__layout_hash);
ATF_TEST_CASE_BODY(debug_descriptor__layout_hash)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const Layout &l : kLayouts)
        for (size_t i = 0; i < l.nmembers; i++) {
            // Padding (TCacheBin's on 32-bit targets) is nothing a walker reads.
            if (std::strncmp(l.members[i].name, "pad_", 4) == 0)
                continue;
            h = fnv1a(h, l.members[i].type);
            h = fnv1a(h, ".");
            h = fnv1a(h, l.members[i].name);
            h = fnv1a(h, ";");
        }
    std::ostringstream hex;
    hex << "0x" << std::hex << std::setw(16) << std::setfill('0') << h << "ULL";
    ATF_REQUIRE_MSG(h == ARENALLOC_DEBUG_LAYOUT_HASH,
                    "the described structures changed: set ARENALLOC_DEBUG_LAYOUT_HASH to "
                        << hex.str() << " in lib/debug_descriptor.h, and bump "
                        "ARENALLOC_DEBUG_VERSION if an older walker would misread them");
    ATF_REQUIRE_EQ(d.layout_hash, ARENALLOC_DEBUG_LAYOUT_HASH);
}

ATF_TEST_CASE_WITHOUT_HEAD(debug_descriptor__header);
ATF_TEST_CASE_BODY(debug_descriptor__header)
{
    ATF_REQUIRE_EQ(d.magic, ARENALLOC_DEBUG_MAGIC);
    // The magic and the order mark are stored in the machine's order: a
    // reader tells a target's byte order from them.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    const char *magic_bytes = "1gblanra";
    const unsigned char order_bytes[4] = {1, 2, 3, 4};
#else
    const char *magic_bytes = "arnalbg1";
    const unsigned char order_bytes[4] = {4, 3, 2, 1};
#endif
    ATF_REQUIRE(std::memcmp(&d.magic, magic_bytes, 8) == 0);
    ATF_REQUIRE(std::memcmp(&d.byte_order, order_bytes, 4) == 0);
    ATF_REQUIRE_EQ(d.version, unsigned{ARENALLOC_DEBUG_VERSION});
    ATF_REQUIRE_EQ(d.size, sizeof(struct arenalloc_debug_descriptor));
    ATF_REQUIRE_EQ(d.pointer_size, sizeof(void *));
    ATF_REQUIRE(std::strlen(d.package_version) > 0 &&
                std::strlen(d.package_version) < sizeof(d.package_version));
    ATF_REQUIRE_EQ(d.page_size, kPage);
    ATF_REQUIRE_EQ(d.nbins, kNumBins);
    ATF_REQUIRE_EQ(d.nclasses, kNumClasses);
    ATF_REQUIRE_EQ(d.tcache_nclasses, uint64_t{kNumTcacheClasses});
    ATF_REQUIRE_EQ(d.chunk_magic, kChunkMagic);
    ATF_REQUIRE_EQ(d.bitmap_words, kBitmapWords);
    ATF_REQUIRE_EQ(d.small_max, kSmallMax);
}

ATF_TEST_CASE_WITHOUT_HEAD(debug_descriptor__globals);
ATF_TEST_CASE_BODY(debug_descriptor__globals)
{
    ATF_REQUIRE(d.initialized.addr.ptr == &g_initialized);
    ATF_REQUIRE(d.narenas.addr.ptr == &g_narenas && d.narenas.size == sizeof(g_narenas));
    ATF_REQUIRE(d.arenas.addr.ptr == &g_arenas);
    ATF_REQUIRE(d.chunk_geometry.addr.ptr == &g_chunk);
    ATF_REQUIRE(d.size_classes.addr.ptr == &kSizeClasses);
    ATF_REQUIRE(d.huge_live.addr.ptr == &g_huge_live);
    ATF_REQUIRE(d.huge_stats.addr.ptr == &g_huge_stats);
    ATF_REQUIRE(d.huge_cached.addr.ptr == &g_huge_cache_bytes);
    ATF_REQUIRE(d.base_mapped.addr.ptr == &g_base_mapped);
    ATF_REQUIRE(d.threads_seen.addr.ptr == &g_threads_seen);
    ATF_REQUIRE(d.tcache_all.addr.ptr == &g_tcache_all);
    ATF_REQUIRE(d.tcache_free.addr.ptr == &g_tcache_free);
    ATF_REQUIRE(d.hardened_key.addr.ptr == &g_hardened_key);
    ATF_REQUIRE(d.registry.root.addr.ptr == &g_registry_root);
    ATF_REQUIRE_EQ(d.registry.root.size, sizeof(g_registry_root));
    ATF_REQUIRE_EQ(d.registry.lg_granule, kLgGranule);
    ATF_REQUIRE_EQ(d.registry.leaf_bits, kRegistryLeafBits);
    ATF_REQUIRE_EQ(d.registry.tag_huge, uint64_t{kRegistryHuge});
    ATF_REQUIRE_EQ(d.page_map.tag_free, uint64_t{kPageFree});
    ATF_REQUIRE_EQ(d.page_map.dirty_flag, kPageDirty);
}

#define F(T, m) offsetof(T, m), sizeof(T::m)

ATF_TEST_CASE_WITHOUT_HEAD(debug_descriptor__fields);
ATF_TEST_CASE_BODY(debug_descriptor__fields)
{
    ATF_REQUIRE_EQ(d.arena.size, sizeof(Arena));
    require_field("Arena::bins", d.arena.bins, F(Arena, bins));
    require_field("Arena::chunks", d.arena.chunks, F(Arena, chunks));
    require_field("Arena::nactive", d.arena.nactive, F(Arena, nactive));
    require_field("Arena::stats", d.arena.stats, F(Arena, stats));
    require_field("Arena::large", d.arena.large, F(Arena, large));
    require_field("Arena::nthreads", d.arena.nthreads, F(Arena, nthreads));
    require_field("Mutex::nacquired_", d.mutex.nacquired, F(Mutex, nacquired_));
    require_field("Mutex::taken_", d.mutex.taken, F(Mutex, taken_));
    require_field("ArenaStats::allocated_large", d.arena_stats.allocated_large,
                  F(ArenaStats, allocated_large));
    ATF_REQUIRE_EQ(d.bin.size, sizeof(Bin));
    require_field("Bin::curruns", d.bin.curruns, F(Bin, curruns));
    require_field("Bin::empty", d.bin.empty, F(Bin, empty));
    require_field("Arena::nkept", d.arena.nkept, F(Arena, nkept));
    require_field("Bin::nrequests", d.bin.nrequests, F(Bin, nrequests));
    ATF_REQUIRE_EQ(d.large.size, sizeof(LargeClassStats));
    ATF_REQUIRE_EQ(d.chunk.size, sizeof(Chunk));
    ATF_REQUIRE_EQ(d.chunk.map.offset, offsetof(Chunk, map));
    ATF_REQUIRE_EQ(d.chunk.page_map_entry_size, sizeof(PageMapEntry));
    require_field("Chunk::nfree_pages", d.chunk.nfree_pages, F(Chunk, nfree_pages));
    ATF_REQUIRE_EQ(d.run.size, sizeof(Run));
    require_field("Run::nregs", d.run.nregs, F(Run, nregs));
    require_field("Run::nfree", d.run.nfree, F(Run, nfree));
    require_field("Run::state", d.run.state, F(Run, state));
    require_field("Run::bitmap", d.run.bitmap, F(Run, bitmap));
    require_field("Run::ndirty", d.run.ndirty, F(Run, ndirty));
    require_field("Huge::mapped", d.huge.mapped, F(Huge, mapped));
    require_field("HugeStats::allocated", d.huge_stats_layout.allocated,
                  F(HugeStats, allocated));
    require_field("TCache::next_all", d.tcache.next_all, F(TCache, next_all));
    require_field("TCacheBin::top", d.tcache_bin.top, F(TCacheBin, top));
    ATF_REQUIRE_EQ(d.tcache_bin.size, sizeof(TCacheBin));
    require_field("BinInfo::nregs", d.bin_info.nregs, F(BinInfo, nregs));
    require_field("SizeClassTable::bin", d.size_class_table.bin, F(SizeClassTable, bin));
    require_field("ChunkGeometry::chunk_size", d.chunk_geometry_layout.chunk_size,
                  F(ChunkGeometry, chunk_size));
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, debug_descriptor__every_member_listed);
    ATF_ADD_TEST_CASE(tcs, debug_descriptor__layout_hash);
    ATF_ADD_TEST_CASE(tcs, debug_descriptor__header);
    ATF_ADD_TEST_CASE(tcs, debug_descriptor__globals);
    ATF_ADD_TEST_CASE(tcs, debug_descriptor__fields);
}
