// debug_descriptor.cc — the exported debug descriptor (see
// debug_descriptor.h).  Constant-initialized: it is built from sizeof,
// offsetof and the addresses of globals, so it is valid before the
// allocator runs, in a process that never called malloc, and in a core
// file of one that crashed in the middle of an allocation.
#include "debug_descriptor.h"

#include <cstddef>

#include "arena.h"
#include "arenalloc.h"
#include "base.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "config.h"
#include "huge.h"
#include "init.h"
#include "run.h"
#include "size_classes.h"
#include "hardened.h"
#include "tcache.h"
#include "thread_state.h"
#include "util.h"

namespace arenalloc {
namespace {

#define AA_DEBUG_FIELD(T, m) \
    aa_debug_field { static_cast<uint32_t>(offsetof(T, m)), static_cast<uint32_t>(sizeof(T::m)) }
#define AA_DEBUG_SIZE(T) static_cast<uint32_t>(sizeof(T)), 0

constexpr aa_debug_var var(const void *p, size_t size) {
    return aa_debug_var{{p}, size};
}

}  // namespace
}  // namespace arenalloc

using namespace arenalloc;

// Spelled with ARENALLOC_NAME like api.cc's functions: a library built
// with a symbol prefix exports PREFIXarenalloc_debug_descriptor.
extern "C" AA_EXPORT constexpr struct arenalloc_debug_descriptor
    ARENALLOC_NAME(arenalloc_debug_descriptor) = {
    ARENALLOC_DEBUG_MAGIC,
    ARENALLOC_DEBUG_VERSION,
    sizeof(struct arenalloc_debug_descriptor),
    ARENALLOC_DEBUG_BYTE_ORDER,
    sizeof(void *),
    ARENALLOC_DEBUG_LAYOUT_HASH,
    PACKAGE_VERSION,

    kPage, kLgPage, kQuantum, kNumClasses, kNumBins, kSmallMax,
    kMaxRunRegions, kBitmapWords, kChunkMagic,

    var(&g_initialized, sizeof(g_initialized)),
    var(&g_narenas, sizeof(g_narenas)),
    var(&g_arenas, sizeof(g_arenas)),
    var(&g_chunk, sizeof(g_chunk)),
    var(&kSizeClasses, sizeof(kSizeClasses)),
    var(&g_huge_live, sizeof(g_huge_live)),
    var(&g_huge_stats, sizeof(g_huge_stats)),
    var(&g_huge_cache_bytes, sizeof(g_huge_cache_bytes)),
    var(&g_base_mapped, sizeof(g_base_mapped)),
    var(&g_threads_seen, sizeof(g_threads_seen)),
    var(&g_tcache_all, sizeof(g_tcache_all)),
    var(&g_tcache_free, sizeof(g_tcache_free)),
    var(&g_hardened_key, sizeof(g_hardened_key)),

    {var(&g_registry_root, sizeof(g_registry_root)), kLgGranule, kRegistryAddressBits,
     kRegistryRootBits, kRegistryLeafBits, kRegistryChunk, kRegistryHuge, kRegistryTagMask},
    {kPageSmall, kPageFree, kPageLarge, kPageHeader, kPageTagMask, kPageDirty, kPageFlagMask},

    {AA_DEBUG_SIZE(Mutex), AA_DEBUG_FIELD(Mutex, nacquired_), AA_DEBUG_FIELD(Mutex, ncontended_),
     AA_DEBUG_FIELD(Mutex, taken_)},
    {AA_DEBUG_SIZE(Arena), AA_DEBUG_FIELD(Arena, mutex), AA_DEBUG_FIELD(Arena, index),
     AA_DEBUG_FIELD(Arena, nthreads), AA_DEBUG_FIELD(Arena, bins),
     AA_DEBUG_FIELD(Arena, free_buckets), AA_DEBUG_FIELD(Arena, chunks),
     AA_DEBUG_FIELD(Arena, nempty_chunks), AA_DEBUG_FIELD(Arena, nactive),
     AA_DEBUG_FIELD(Arena, ndirty), AA_DEBUG_FIELD(Arena, dirty_first),
     AA_DEBUG_FIELD(Arena, stats), AA_DEBUG_FIELD(Arena, large), AA_DEBUG_FIELD(Arena, nkept)},
    {AA_DEBUG_SIZE(ArenaStats), AA_DEBUG_FIELD(ArenaStats, nmalloc_small),
     AA_DEBUG_FIELD(ArenaStats, ndalloc_small), AA_DEBUG_FIELD(ArenaStats, nmalloc_large),
     AA_DEBUG_FIELD(ArenaStats, ndalloc_large), AA_DEBUG_FIELD(ArenaStats, allocated_small),
     AA_DEBUG_FIELD(ArenaStats, allocated_large), AA_DEBUG_FIELD(ArenaStats, nchunks),
     AA_DEBUG_FIELD(ArenaStats, npurge_passes), AA_DEBUG_FIELD(ArenaStats, nmadvise),
     AA_DEBUG_FIELD(ArenaStats, npurged_pages)},
    {AA_DEBUG_SIZE(Bin), AA_DEBUG_FIELD(Bin, current), AA_DEBUG_FIELD(Bin, nonfull),
     AA_DEBUG_FIELD(Bin, nmalloc), AA_DEBUG_FIELD(Bin, ndalloc), AA_DEBUG_FIELD(Bin, nrequests),
     AA_DEBUG_FIELD(Bin, nfills), AA_DEBUG_FIELD(Bin, nflushes), AA_DEBUG_FIELD(Bin, nruns),
     AA_DEBUG_FIELD(Bin, curruns), AA_DEBUG_FIELD(Bin, empty)},
    {AA_DEBUG_SIZE(LargeClassStats), AA_DEBUG_FIELD(LargeClassStats, nmalloc),
     AA_DEBUG_FIELD(LargeClassStats, ndalloc), AA_DEBUG_FIELD(LargeClassStats, curruns)},
    {AA_DEBUG_SIZE(Chunk), AA_DEBUG_FIELD(Chunk, magic), AA_DEBUG_FIELD(Chunk, arena),
     AA_DEBUG_FIELD(Chunk, next), AA_DEBUG_FIELD(Chunk, prev), AA_DEBUG_FIELD(Chunk, npages),
     AA_DEBUG_FIELD(Chunk, header_pages), AA_DEBUG_FIELD(Chunk, nfree_pages),
     AA_DEBUG_FIELD(Chunk, from_sbrk),
     aa_debug_field{static_cast<uint32_t>(offsetof(Chunk, map)), 0}, sizeof(PageMapEntry)},
    {AA_DEBUG_SIZE(Run), AA_DEBUG_FIELD(Run, base), AA_DEBUG_FIELD(Run, region_size),
     AA_DEBUG_FIELD(Run, reciprocal), AA_DEBUG_FIELD(Run, nregs), AA_DEBUG_FIELD(Run, nfree),
     AA_DEBUG_FIELD(Run, state), AA_DEBUG_FIELD(Run, size_class), AA_DEBUG_FIELD(Run, npages),
     AA_DEBUG_FIELD(Run, ndirty), AA_DEBUG_FIELD(Run, chunk), AA_DEBUG_FIELD(Run, next),
     AA_DEBUG_FIELD(Run, prev), AA_DEBUG_FIELD(Run, dirty_next), AA_DEBUG_FIELD(Run, bitmap)},
    {AA_DEBUG_SIZE(Huge), AA_DEBUG_FIELD(Huge, addr), AA_DEBUG_FIELD(Huge, usize),
     AA_DEBUG_FIELD(Huge, mapped), AA_DEBUG_FIELD(Huge, arena), AA_DEBUG_FIELD(Huge, next)},
    {AA_DEBUG_SIZE(HugeStats), AA_DEBUG_FIELD(HugeStats, nmalloc),
     AA_DEBUG_FIELD(HugeStats, ndalloc), AA_DEBUG_FIELD(HugeStats, allocated),
     AA_DEBUG_FIELD(HugeStats, mapped)},
    {AA_DEBUG_SIZE(TCache), AA_DEBUG_FIELD(TCache, bins), AA_DEBUG_FIELD(TCache, arena),
     AA_DEBUG_FIELD(TCache, next_free), AA_DEBUG_FIELD(TCache, next_all)},
    {AA_DEBUG_SIZE(TCacheBin), AA_DEBUG_FIELD(TCacheBin, top), AA_DEBUG_FIELD(TCacheBin, stack),
     AA_DEBUG_FIELD(TCacheBin, limit), AA_DEBUG_FIELD(TCacheBin, tick_left)},
    {AA_DEBUG_SIZE(BinInfo), AA_DEBUG_FIELD(BinInfo, region_size),
     AA_DEBUG_FIELD(BinInfo, run_pages), AA_DEBUG_FIELD(BinInfo, nregs),
     AA_DEBUG_FIELD(BinInfo, reciprocal)},
    {AA_DEBUG_SIZE(SizeClassTable), AA_DEBUG_FIELD(SizeClassTable, size),
     AA_DEBUG_FIELD(SizeClassTable, bin)},
    {AA_DEBUG_SIZE(ChunkGeometry), AA_DEBUG_FIELD(ChunkGeometry, lg_chunk),
     AA_DEBUG_FIELD(ChunkGeometry, chunk_size), AA_DEBUG_FIELD(ChunkGeometry, npages),
     AA_DEBUG_FIELD(ChunkGeometry, header_pages), AA_DEBUG_FIELD(ChunkGeometry, large_max)},

    kNumTcacheClasses,
};
