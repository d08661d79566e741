// chunk.cc — chunk geometry, mapping and registration.
#include "chunk.h"

#include <string.h>

#include "chunk_registry.h"
#include "debug_assert.h"
#include "options.h"
#include "size_classes.h"

namespace arenalloc {

ChunkGeometry g_chunk = {};

// The smallest chunk holds its header and the longest small run: a chunk
// of kLgChunkMin has 16 pages, and the header of one that small takes one.
constexpr bool smallest_chunk_holds_every_run() {
    uint32_t npages = uint32_t{1} << (kLgChunkMin - kLgPage);
    size_t header = sizeof(Chunk) + npages * sizeof(PageMapEntry);
    uint32_t header_pages = static_cast<uint32_t>(align_up(header, kPage) >> kLgPage);
    for (unsigned i = 0; i < kNumBins; i++)
        if (header_pages + make_bin_info(class_size_formula(i)).run_pages > npages)
            return false;
    return true;
}
static_assert(smallest_chunk_holds_every_run(), "K's lower bound leaves room for every small run");

void chunk_configure(unsigned lg_chunk) {
    g_chunk.lg_chunk = lg_chunk;
    g_chunk.chunk_size = size_t{1} << lg_chunk;
    g_chunk.npages = static_cast<uint32_t>(g_chunk.chunk_size >> kLgPage);
    size_t header = sizeof(Chunk) + g_chunk.npages * sizeof(PageMapEntry);
    g_chunk.header_pages = static_cast<uint32_t>(align_up(header, kPage) >> kLgPage);
    size_t usable = (g_chunk.npages - g_chunk.header_pages) * kPage;
    unsigned c = size_to_class_formula(usable);
    if (class_to_size(c) > usable)
        c--;
    g_chunk.large_max = class_to_size(c);
}

namespace {

// Writes the header of a new chunk at p and registers it.
Chunk *chunk_init(void *p, Arena *arena, bool from_sbrk) {
    Chunk *c = static_cast<Chunk *>(p);
    // Data-segment memory may hold old contents of a reused break: the
    // page map must be written whole.
    if (from_sbrk)
        memset(c, 0, sizeof(Chunk) + g_chunk.npages * sizeof(PageMapEntry));
    c->magic = kChunkMagic;
    c->arena = arena;
    c->next = c->prev = nullptr;
    c->npages = g_chunk.npages;
    c->header_pages = g_chunk.header_pages;
    c->nfree_pages = 0;
    c->from_sbrk = from_sbrk ? 1 : 0;
    for (uint32_t i = 0; i < c->header_pages; i++)
        c->map[i] = kPageHeader;
    if (!registry_insert(c, g_chunk.chunk_size,
                         reinterpret_cast<uintptr_t>(c) | kRegistryChunk))
        return nullptr;
    AA_ASSERT(registry_lookup(c) == (reinterpret_cast<uintptr_t>(c) | kRegistryChunk) &&
              registry_lookup(reinterpret_cast<char *>(c) + g_chunk.chunk_size - 1) ==
                  (reinterpret_cast<uintptr_t>(c) | kRegistryChunk));
    return c;
}

}  // namespace

unsigned chunk_map(Arena *arena, Chunk **out, unsigned n) {
    // D and M choose the sources, sbrk first when both are on; the data
    // segment gives one chunk at a time.
    if (g_options.use_sbrk) {
        void *p = pages_map_sbrk(g_chunk.chunk_size, g_chunk.chunk_size);
        if (p != nullptr) {
            out[0] = chunk_init(p, arena, true);
            return out[0] != nullptr ? 1 : 0;
        }
    }
    if (!g_options.use_mmap)
        return 0;
    size_t max = kChunkBatchBytes >> g_chunk.lg_chunk;
    if (n > max)
        n = max != 0 ? static_cast<unsigned>(max) : 1;
    if (n > kChunkBatchMax)
        n = kChunkBatchMax;
    if (n == 0)
        n = 1;
    char *p = nullptr;
    while (p == nullptr) {
        p = static_cast<char *>(pages_map(n * g_chunk.chunk_size, g_chunk.chunk_size));
        if (p == nullptr) {
            if (n == 1)
                return 0;
            n = 1;  // short of memory: no reserve
        }
    }
    // Before the headers are written: the first touch then faults in a
    // huge page where the kernel grants one.
    if (g_options.thp)
        pages_prefer_huge(p, n * g_chunk.chunk_size);
    unsigned got = 0;
    for (unsigned i = 0; i < n; i++) {
        char *at = p + i * g_chunk.chunk_size;
        Chunk *c = chunk_init(at, arena, false);
        if (c == nullptr) {
            pages_unmap(at, (n - i) * g_chunk.chunk_size);
            break;
        }
        out[got++] = c;
    }
    return got;
}

bool chunk_unmap(Chunk *chunk) {
    // Unused (fresh from chunk_map) or empty.
    AA_ASSERT(chunk->magic == kChunkMagic &&
              (chunk->nfree_pages == 0 ||
               chunk->nfree_pages == chunk->npages - chunk->header_pages));
    if (chunk->from_sbrk)
        return false;
    registry_remove(chunk, g_chunk.chunk_size);
    chunk->magic = 0;
    pages_unmap(chunk, g_chunk.chunk_size);
    return true;
}

}  // namespace arenalloc
