// Unit tests of the chunk registry (lib/chunk_registry.h).  The registry
// never touches the memory it describes, so made-up addresses do.
#include <atf-c++.hpp>

#include <cstdint>
#include <vector>

#include "chunk_registry.h"

using namespace arenalloc;

namespace {

const void *addr(uintptr_t a) { return reinterpret_cast<const void *>(a); }

void collect(uintptr_t v, void *ctx) {
    static_cast<std::vector<uintptr_t> *>(ctx)->push_back(v);
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(registry__empty_lookup);
ATF_TEST_CASE_BODY(registry__empty_lookup) {
    ATF_REQUIRE_EQ(registry_lookup(addr(0)), 0u);
    ATF_REQUIRE_EQ(registry_lookup(addr(0x7f0000000000)), 0u);
    ATF_REQUIRE_EQ(registry_lookup(addr(~uintptr_t{0})), 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(registry__insert_covers_every_granule);
ATF_TEST_CASE_BODY(registry__insert_covers_every_granule) {
    uintptr_t base = 0x7f1234000000;  // granule aligned
    uintptr_t value = 0x1000 | kRegistryChunk;
    ATF_REQUIRE(registry_insert(addr(base), 4 * kGranule, value));
    for (uintptr_t a = base; a < base + 4 * kGranule; a += 4093)
        ATF_REQUIRE_EQ(registry_lookup(addr(a)), value);
    ATF_REQUIRE_EQ(registry_lookup(addr(base - 1)), 0u);
    ATF_REQUIRE_EQ(registry_lookup(addr(base + 4 * kGranule)), 0u);
    registry_remove(addr(base), 4 * kGranule);
    for (uintptr_t a = base; a < base + 4 * kGranule; a += kGranule / 2)
        ATF_REQUIRE_EQ(registry_lookup(addr(a)), 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(registry__neighbours_and_leaf_boundary);
ATF_TEST_CASE_BODY(registry__neighbours_and_leaf_boundary) {
    // A range crossing a leaf boundary, next to another owner.
    uintptr_t leaf_span = uintptr_t{1} << (kLgGranule + kRegistryLeafBits);
    uintptr_t a = 5 * leaf_span - 2 * kGranule;
    uintptr_t b = a + 4 * kGranule;
    ATF_REQUIRE(registry_insert(addr(a), 4 * kGranule, 0x2000 | kRegistryHuge));
    ATF_REQUIRE(registry_insert(addr(b), kGranule, 0x3000 | kRegistryChunk));
    ATF_REQUIRE_EQ(registry_lookup(addr(a + kGranule)), 0x2000 | kRegistryHuge);
    ATF_REQUIRE_EQ(registry_lookup(addr(a + 3 * kGranule)), 0x2000 | kRegistryHuge);
    ATF_REQUIRE_EQ(registry_lookup(addr(b)), 0x3000 | kRegistryChunk);

    std::vector<uintptr_t> seen;
    registry_for_each(collect, &seen);
    ATF_REQUIRE_EQ(seen.size(), 2u);
    ATF_REQUIRE_EQ(seen[0], 0x2000 | kRegistryHuge);
    ATF_REQUIRE_EQ(seen[1], 0x3000 | kRegistryChunk);

    registry_remove(addr(a), 4 * kGranule);
    ATF_REQUIRE_EQ(registry_lookup(addr(a)), 0u);
    ATF_REQUIRE_EQ(registry_lookup(addr(b)), 0x3000 | kRegistryChunk);
}

ATF_TEST_CASE_WITHOUT_HEAD(registry__rejects_addresses_beyond_48_bits);
ATF_TEST_CASE_BODY(registry__rejects_addresses_beyond_48_bits) {
    if (kRegistryAddressBits == kPointerBits)
        ATF_SKIP("a 32-bit target: the registry covers every address");
    const uintptr_t beyond = kRegistryAddressMax + 1;
    ATF_REQUIRE(!registry_insert(addr(beyond), kGranule, 0x10 | kRegistryChunk));
    ATF_REQUIRE_EQ(registry_lookup(addr(beyond + 5)), 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(registry__covers_the_address_space);
ATF_TEST_CASE_BODY(registry__covers_the_address_space) {
    // 48 bits on 64-bit targets, every bit of a 32-bit pointer.
    ATF_REQUIRE_EQ(kRegistryAddressBits, sizeof(void *) == 4 ? 32u : 48u);
    ATF_REQUIRE_EQ(kRegistryRootBits + kRegistryLeafBits + kLgGranule, kRegistryAddressBits);
    // The highest granule is recorded and found, the leaf below it untouched.
    const uintptr_t top = (kRegistryAddressMax >> kLgGranule) << kLgGranule;
    ATF_REQUIRE(registry_insert(addr(top), kGranule, 0x40 | kRegistryChunk));
    ATF_REQUIRE_EQ(registry_lookup(addr(top + kGranule - 1)), 0x40 | kRegistryChunk);
    ATF_REQUIRE_EQ(registry_lookup(addr(top - 1)), 0u);
    registry_remove(addr(top), kGranule);
    ATF_REQUIRE_EQ(registry_lookup(addr(top)), 0u);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, registry__empty_lookup);
    ATF_ADD_TEST_CASE(tcs, registry__insert_covers_every_granule);
    ATF_ADD_TEST_CASE(tcs, registry__neighbours_and_leaf_boundary);
    ATF_ADD_TEST_CASE(tcs, registry__covers_the_address_space);
    ATF_ADD_TEST_CASE(tcs, registry__rejects_addresses_beyond_48_bits);
}
