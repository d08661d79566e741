// Unit tests of chunks (lib/chunk.h): the geometry chunk_configure derives
// for each chunk size, and chunk_map/chunk_unmap: alignment, header,
// registration, batches.
#include <atf-c++.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "arena.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "init.h"
#include "options.h"
#include "page_map.h"
#include "platform.h"
#include "require_msg.h"
#include "size_classes.h"

using namespace arenalloc;

namespace {

uint64_t nmap() {
    PlatformCounters pc;
    platform_counters(&pc);
    return pc.nmap;
}

// Checks g_chunk after chunk_configure(lg) against the definitions in
// chunk.h: the header (Chunk and one entry a page) rounded up to pages,
// and the largest size class that fits the rest.
void require_geometry(unsigned lg) {
    chunk_configure(lg);
    ATF_REQUIRE_EQ(g_chunk.lg_chunk, lg);
    ATF_REQUIRE_EQ(g_chunk.chunk_size, size_t{1} << lg);
    ATF_REQUIRE_EQ(g_chunk.npages, static_cast<uint32_t>((size_t{1} << lg) / kPage));
    size_t header = sizeof(Chunk) + size_t{g_chunk.npages} * sizeof(PageMapEntry);
    ATF_REQUIRE_MSG(size_t{g_chunk.header_pages} * kPage >= header, "lg " << lg);
    ATF_REQUIRE_MSG(size_t{g_chunk.header_pages - 1} * kPage < header, "lg " << lg);
    size_t usable = size_t{g_chunk.npages - g_chunk.header_pages} * kPage;
    unsigned cls = size_to_class(g_chunk.large_max);
    ATF_REQUIRE_MSG(class_to_size(cls) == g_chunk.large_max, "lg " << lg << ": not a class");
    ATF_REQUIRE_MSG(g_chunk.large_max <= usable, "lg " << lg);
    ATF_REQUIRE_MSG(class_to_size(cls + 1) > usable, "lg " << lg << ": a bigger class fits");
    ATF_REQUIRE_MSG(g_chunk.large_max > kSmallMax, "lg " << lg);
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(chunk__geometry_follows_the_definitions);
ATF_TEST_CASE_BODY(chunk__geometry_follows_the_definitions) {
    for (unsigned lg = kLgChunkMin; lg <= kLgChunkMax; lg++)
        require_geometry(lg);
}

ATF_TEST_CASE_WITHOUT_HEAD(chunk__geometry_known_values);
ATF_TEST_CASE_BODY(chunk__geometry_known_values) {
    // lg, header pages, largest large class: four classes a doubling, so
    // the biggest below the usable pages is 7/8 of a power of two.  The
    // header is 48 bytes and 8 more a page.
    struct Expected {
        unsigned lg;
        uint32_t header_pages;
        size_t large_max;
    };
    const std::vector<Expected> expected64 =
        kLgPage == 12 ? std::vector<Expected>{
            {18, 1, 224u << 10},        // 64 pages: 560 bytes of header; 252 KiB usable
            {20, 1, 896u << 10},        // 256 pages: 2,096 bytes; 1,020 KiB usable
            {21, 2, 1792u << 10},       // 512 pages: 4,144 bytes; 2,040 KiB usable
            {22, 3, 3584u << 10},       // 1,024 pages: 8,240 bytes
            {30, 513, size_t{896} << 20},  // 262,144 pages: 2 MiB + 48 bytes
        } : kLgPage == 14 ? std::vector<Expected>{
            {18, 1, 224u << 10},        // 16 pages: 176 bytes; 240 KiB usable
            {21, 1, 1792u << 10},       // 128 pages: 1,072 bytes; 2,032 KiB usable
            {24, 1, 14336u << 10},      // 1,024 pages: 8,240 bytes
            {25, 2, 28672u << 10},      // 2,048 pages: 16,432 bytes
            {30, 33, size_t{896} << 20},   // 65,536 pages: 512 KiB + 48 bytes
        } : std::vector<Expected>{
            {20, 1, 896u << 10},        // 16 pages: 176 bytes; 960 KiB usable
            {21, 1, 1792u << 10},       // 32 pages: 304 bytes; 1,984 KiB usable
            {28, 1, 224u << 20},        // 4,096 pages: 32,816 bytes
            {29, 2, 448u << 20},        // 8,192 pages: 65,584 bytes
            {30, 3, size_t{896} << 20},    // 16,384 pages: 128 KiB + 48 bytes
        };
    // 32-bit targets (4 KiB pages): page-map entries of 4 bytes, a smaller
    // Chunk.
    const std::vector<Expected> expected32 = {
        {18, 1, 224u << 10},         // 64 pages: 256 bytes of entries
        {20, 1, 896u << 10},         // 256 pages: 1 KiB
        {21, 1, 1792u << 10},        // 512 pages: 2 KiB; 2,044 KiB usable
        {22, 2, 3584u << 10},        // 1,024 pages: 4 KiB + the Chunk
        {30, 257, size_t{896} << 20},  // 262,144 pages: 1 MiB + the Chunk
    };
    for (const Expected &e : sizeof(void *) == 8 ? expected64 : expected32) {
        chunk_configure(e.lg);
        ATF_REQUIRE_MSG(g_chunk.header_pages == e.header_pages,
                        "lg " << e.lg << ": " << g_chunk.header_pages);
        ATF_REQUIRE_MSG(g_chunk.large_max == e.large_max,
                        "lg " << e.lg << ": " << g_chunk.large_max);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(chunk__page_arithmetic);
ATF_TEST_CASE_BODY(chunk__page_arithmetic) {
    chunk_configure(kLgChunkDefault);
    // A made-up chunk address: the helpers only compute.
    const Chunk *c = reinterpret_cast<const Chunk *>(uintptr_t{7} << kLgChunkDefault);
    for (uint32_t page : {0u, 1u, 2u, g_chunk.npages / 2 - 1, g_chunk.npages - 1}) {
        uintptr_t at = chunk_page_addr(c, page);
        ATF_REQUIRE_EQ(at, reinterpret_cast<uintptr_t>(c) + page * kPage);
        ATF_REQUIRE_EQ(chunk_page_index(c, reinterpret_cast<void *>(at)), page);
        ATF_REQUIRE_EQ(chunk_page_index(c, reinterpret_cast<void *>(at + kPage - 1)), page);
        ATF_REQUIRE_EQ(chunk_containing(reinterpret_cast<void *>(at + 123)), c);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(chunk__map_writes_header_and_registers);
ATF_TEST_CASE_BODY(chunk__map_writes_header_and_registers) {
    ATF_REQUIRE(ensure_initialized());
    ATF_REQUIRE_EQ(g_chunk.lg_chunk, static_cast<unsigned>(g_options.lg_chunk));
    Arena *owner = arena_get(0);
    ATF_REQUIRE(owner != nullptr);
    Chunk *out[kChunkBatchMax];
    unsigned got = chunk_map(owner, out, 3);
    ATF_REQUIRE(got >= 1 && got <= 3);
    for (unsigned i = 0; i < got; i++) {
        Chunk *c = out[i];
        uintptr_t at = reinterpret_cast<uintptr_t>(c);
        ATF_REQUIRE_EQ(at % g_chunk.chunk_size, 0u);
        ATF_REQUIRE_EQ(c->magic, kChunkMagic);
        ATF_REQUIRE_EQ(c->arena, owner);
        ATF_REQUIRE_EQ(c->npages, g_chunk.npages);
        ATF_REQUIRE_EQ(c->header_pages, g_chunk.header_pages);
        ATF_REQUIRE_EQ(c->from_sbrk, 0u);
        for (uint32_t p = 0; p < c->header_pages; p++)
            ATF_REQUIRE_EQ(c->map[p], PageMapEntry{kPageHeader});
        // Registered from its first byte to its last, as a chunk.
        uintptr_t expect = at | kRegistryChunk;
        ATF_REQUIRE_EQ(registry_lookup(c), expect);
        ATF_REQUIRE_EQ(registry_lookup(reinterpret_cast<char *>(c) + g_chunk.chunk_size / 2), expect);
        ATF_REQUIRE_EQ(registry_lookup(reinterpret_cast<char *>(c) + g_chunk.chunk_size - 1), expect);
        // The pages for runs are fresh: zero, and writable.
        char *first_run_page = reinterpret_cast<char *>(chunk_page_addr(c, c->header_pages));
        for (size_t k = 0; k < kPage; k++)
            ATF_REQUIRE(first_run_page[k] == 0);
        memset(first_run_page, 0x3c, kPage);
        ATF_REQUIRE_EQ(chunk_containing(first_run_page + 17), c);
    }
    for (unsigned i = 0; i < got; i++) {
        Chunk *c = out[i];
        ATF_REQUIRE(chunk_unmap(c));
        ATF_REQUIRE_EQ(registry_lookup(c), 0u);
        ATF_REQUIRE_EQ(registry_lookup(reinterpret_cast<char *>(c) + g_chunk.chunk_size - 1), 0u);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(chunk__map_batches_in_one_mapping);
ATF_TEST_CASE_BODY(chunk__map_batches_in_one_mapping) {
    ATF_REQUIRE(ensure_initialized());
    Arena *owner = arena_get(0);
    ATF_REQUIRE(owner != nullptr);
    // Never more than the batch bounds allow, whatever is asked.
    unsigned cap = static_cast<unsigned>(kChunkBatchBytes >> g_chunk.lg_chunk);
    if (cap == 0)
        cap = 1;
    if (cap > kChunkBatchMax)
        cap = kChunkBatchMax;
    Chunk *out[kChunkBatchMax + 8];
    uint64_t maps = nmap();
    unsigned got = chunk_map(owner, out, kChunkBatchMax + 8);
    ATF_REQUIRE_EQ(got, cap);
    // One mapping for the batch (an aligned one may take a second call,
    // and a registry leaf a metadata block), not one per chunk.
    uint64_t calls = nmap() - maps;
    ATF_REQUIRE(calls >= 1);
    if (got > 3)
        ATF_REQUIRE_MSG(calls <= 3, calls << " mmap calls for " << got << " chunks");
    // Consecutive chunks of one mapping, each its own registry owner.
    for (unsigned i = 1; i < got; i++) {
        ATF_REQUIRE_EQ(reinterpret_cast<uintptr_t>(out[i]),
                       reinterpret_cast<uintptr_t>(out[i - 1]) + g_chunk.chunk_size);
        ATF_REQUIRE_EQ(registry_lookup(out[i]), reinterpret_cast<uintptr_t>(out[i]) | kRegistryChunk);
    }
    // Unmapped one by one: the others stay registered.
    ATF_REQUIRE(chunk_unmap(out[0]));
    if (got > 1)
        ATF_REQUIRE_EQ(registry_lookup(out[1]), reinterpret_cast<uintptr_t>(out[1]) | kRegistryChunk);
    for (unsigned i = 1; i < got; i++)
        ATF_REQUIRE(chunk_unmap(out[i]));
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, chunk__geometry_follows_the_definitions);
    ATF_ADD_TEST_CASE(tcs, chunk__geometry_known_values);
    ATF_ADD_TEST_CASE(tcs, chunk__page_arithmetic);
    ATF_ADD_TEST_CASE(tcs, chunk__map_writes_header_and_registers);
    ATF_ADD_TEST_CASE(tcs, chunk__map_batches_in_one_mapping);
}
