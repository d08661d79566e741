// chunk.cc — chunk geometry, mapping and registration.
#include "chunk.h"

#include "chunk_registry.h"
#include "size_classes.h"

namespace arenalloc {

ChunkGeometry g_chunk = {};

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

Chunk *chunk_map(Arena *arena) {
    void *p = pages_map(g_chunk.chunk_size, g_chunk.chunk_size);
    if (p == nullptr)
        return nullptr;
    Chunk *c = static_cast<Chunk *>(p);
    c->magic = kChunkMagic;
    c->arena = arena;
    c->next = c->prev = nullptr;
    c->npages = g_chunk.npages;
    c->header_pages = g_chunk.header_pages;
    c->nfree_pages = 0;
    for (uint32_t i = 0; i < c->header_pages; i++)
        c->map[i] = kPageHeader;
    if (!registry_insert(c, g_chunk.chunk_size,
                         reinterpret_cast<uintptr_t>(c) | kRegistryChunk)) {
        pages_unmap(c, g_chunk.chunk_size);
        return nullptr;
    }
    return c;
}

void chunk_unmap(Chunk *chunk) {
    registry_remove(chunk, g_chunk.chunk_size);
    chunk->magic = 0;
    pages_unmap(chunk, g_chunk.chunk_size);
}

}  // namespace arenalloc
