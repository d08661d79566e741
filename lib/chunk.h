// chunk.h — an arena chunk: a chunk-aligned mapping of chunk_size bytes
// whose first pages hold this header and the page map; the remaining pages
// are cut into runs.  Masking is never trusted on its own: a pointer is
// first found in the chunk registry.
#ifndef ARENALLOC_CHUNK_H
#define ARENALLOC_CHUNK_H

#include <cstddef>
#include <cstdint>

#include "chunk_registry.h"
#include "page_map.h"
#include "platform.h"

namespace arenalloc {

struct Arena;

constexpr uint64_t kChunkMagic = 0x61726e616c636b31ULL;  // "arnalck1"

// Chunk geometry, fixed at initialization from the options (K flag).
struct ChunkGeometry {
    unsigned lg_chunk;
    size_t chunk_size;
    uint32_t npages;        // pages per chunk
    uint32_t header_pages;  // pages taken by the header and page map
    size_t large_max;       // largest large class that fits a chunk's free pages
};
extern AA_HIDDEN ChunkGeometry g_chunk;

// kLgChunkDefault, kLgChunkMin and kLgChunkMax: chunk_registry.h.

// The header of a chunk, at its start.  magic, arena, npages,
// header_pages and from_sbrk are set before the chunk is registered and
// never change, so they are read without a lock; everything else is
// guarded by the owning arena's mutex.  Invariants: map[0..header_pages)
// are header tags; every page after them belongs to exactly one run, and
// nfree_pages counts the pages of its free runs (npages - header_pages
// when the chunk is empty).  free() reads map entries without the lock
// (allocator.h): an entry is written whole, with a relaxed atomic load.
struct Chunk {
    uint64_t magic;     // kChunkMagic while the chunk is mapped
    Arena *arena;       // owner; fixed for the chunk's life
    Chunk *next;        // the arena's list of chunks
    Chunk *prev;
    uint32_t npages;
    uint32_t header_pages;
    uint32_t nfree_pages;  // pages in free runs
    uint32_t from_sbrk;    // taken from the data segment (D): never unmapped
    PageMapEntry map[];    // npages entries
};

// Sets g_chunk for chunks of 2^lg_chunk bytes.
void chunk_configure(unsigned lg_chunk);

// Most chunks mapped at once (see chunk_map()).
constexpr unsigned kChunkBatchMax = 8;
constexpr size_t kChunkBatchBytes = size_t{16} << 20;

// Maps and registers up to n (at most kChunkBatchMax) new chunks for arena
// with one mapping, so that a growing arena makes a few system calls rather
// than one per chunk; fewer (down to one) when the kernel refuses the
// bigger mapping.  Each chunk's map is all header tags, the rest is left to
// the caller; the pages are zero.  Returns how many are in out[], 0 when
// the kernel refuses even one.
unsigned chunk_map(Arena *arena, Chunk **out, unsigned n);

// Unregisters and unmaps a chunk; false (and nothing done) for a chunk
// from the data segment, which cannot be given back.
bool chunk_unmap(Chunk *chunk);

// The chunk of a pointer already known (from the registry) to lie in an
// arena chunk: chunks are aligned to their size.
AA_ALWAYS_INLINE Chunk *chunk_containing(const void *p) {
    return reinterpret_cast<Chunk *>(reinterpret_cast<uintptr_t>(p) & ~(g_chunk.chunk_size - 1));
}

AA_ALWAYS_INLINE uintptr_t chunk_page_addr(const Chunk *c, uint32_t page) {
    return reinterpret_cast<uintptr_t>(c) + (static_cast<uintptr_t>(page) << kLgPage);
}

AA_ALWAYS_INLINE uint32_t chunk_page_index(const Chunk *c, const void *p) {
    return static_cast<uint32_t>((reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(c)) >> kLgPage);
}

}  // namespace arenalloc

#endif
