// Unit tests of the metadata allocator (lib/base.h): alignment, zeroed
// memory, no two blocks overlapping (from one thread or several), and the
// count of bytes it mapped.
#include <atf-c++.hpp>

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "base.h"
#include "platform.h"
#include "require_msg.h"

using namespace arenalloc;

namespace {

using Block = std::pair<uintptr_t, size_t>;  // start, requested size

bool all_zero(const void *p, size_t n) {
    const unsigned char *b = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0)
            return false;
    return true;
}

// Sorted by address, no block may reach into the next.
void require_disjoint(std::vector<Block> blocks) {
    std::sort(blocks.begin(), blocks.end());
    for (size_t i = 1; i < blocks.size(); i++)
        ATF_REQUIRE_MSG(blocks[i - 1].first + blocks[i - 1].second <= blocks[i].first,
                        "block at 0x" << std::hex << blocks[i - 1].first << " (" << std::dec
                                      << blocks[i - 1].second << " bytes) overlaps 0x"
                                      << std::hex << blocks[i].first);
}

size_t size_of(unsigned i) { return 1 + (i * 37) % 700; }

struct ThreadBlocks {
    std::vector<Block> blocks;
    bool failed = false;
};

void *allocate_many(void *arg) {
    ThreadBlocks *out = static_cast<ThreadBlocks *>(arg);
    for (unsigned i = 0; i < 2000; i++) {
        size_t n = size_of(i);
        void *p = base_alloc(n);
        if (p == nullptr || reinterpret_cast<uintptr_t>(p) % 64 != 0) {
            out->failed = true;
            break;
        }
        memset(p, 0xee, n);
        out->blocks.push_back(Block(reinterpret_cast<uintptr_t>(p), n));
    }
    return nullptr;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(base__aligned_and_zeroed);
ATF_TEST_CASE_BODY(base__aligned_and_zeroed) {
    for (size_t n : {size_t{1}, size_t{8}, size_t{63}, size_t{64}, size_t{65}, size_t{1000},
                     size_t{4096}, size_t{100000}}) {
        void *p = base_alloc(n);
        ATF_REQUIRE(p != nullptr);
        ATF_REQUIRE_MSG(reinterpret_cast<uintptr_t>(p) % 64 == 0, "size " << n << " at " << p);
        ATF_REQUIRE_MSG(all_zero(p, n), "size " << n);
        memset(p, 0xff, n);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(base__blocks_do_not_overlap);
ATF_TEST_CASE_BODY(base__blocks_do_not_overlap) {
    // Enough to run through more than one 2 MiB metadata block.
    std::vector<Block> blocks;
    for (unsigned i = 0; i < 8000; i++) {
        size_t n = size_of(i);
        void *p = base_alloc(n);
        ATF_REQUIRE(p != nullptr);
        ATF_REQUIRE_MSG(all_zero(p, n), "block " << i << " was handed out before");
        memset(p, static_cast<int>(i % 251) + 1, n);
        blocks.push_back(Block(reinterpret_cast<uintptr_t>(p), n));
    }
    // Every block still holds its own byte: none was written through
    // another.
    for (unsigned i = 0; i < blocks.size(); i++) {
        const unsigned char *b = reinterpret_cast<const unsigned char *>(blocks[i].first);
        for (size_t k = 0; k < blocks[i].second; k++)
            ATF_REQUIRE_MSG(b[k] == i % 251 + 1, "block " << i << " byte " << k);
    }
    require_disjoint(blocks);
}

ATF_TEST_CASE_WITHOUT_HEAD(base__threads_get_disjoint_blocks);
ATF_TEST_CASE_BODY(base__threads_get_disjoint_blocks) {
    ThreadBlocks results[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        ATF_REQUIRE_EQ(pthread_create(&th[i], nullptr, allocate_many, &results[i]), 0);
    std::vector<Block> all;
    for (int i = 0; i < 4; i++) {
        ATF_REQUIRE_EQ(pthread_join(th[i], nullptr), 0);
        ATF_REQUIRE(!results[i].failed);
        all.insert(all.end(), results[i].blocks.begin(), results[i].blocks.end());
    }
    ATF_REQUIRE_EQ(all.size(), 4u * 2000u);
    require_disjoint(all);
}

ATF_TEST_CASE_WITHOUT_HEAD(base__counts_what_it_maps);
ATF_TEST_CASE_BODY(base__counts_what_it_maps) {
    ATF_REQUIRE(base_alloc(64) != nullptr);
    uint64_t before = base_mapped();
    ATF_REQUIRE(before >= 64);
    ATF_REQUIRE_EQ(before, g_base_mapped);
    // Small requests come out of the block already mapped.
    for (int i = 0; i < 10; i++)
        ATF_REQUIRE(base_alloc(128) != nullptr);
    ATF_REQUIRE_EQ(base_mapped(), before);
    // A request bigger than a metadata block gets a mapping of its own,
    // counted whole, usable to its last byte.
    size_t big = (size_t{3} << 20) + 100;
    char *p = static_cast<char *>(base_alloc(big));
    ATF_REQUIRE(p != nullptr);
    ATF_REQUIRE_EQ(base_mapped(), before + ((big + kPage - 1) & ~(kPage - 1)));
    ATF_REQUIRE(all_zero(p, big));
    p[0] = 1;
    p[big - 1] = 1;
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, base__aligned_and_zeroed);
    ATF_ADD_TEST_CASE(tcs, base__blocks_do_not_overlap);
    ATF_ADD_TEST_CASE(tcs, base__threads_get_disjoint_blocks);
    ATF_ADD_TEST_CASE(tcs, base__counts_what_it_maps);
}
