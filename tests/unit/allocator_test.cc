// Unit tests of malloc's rules (lib/allocator.h), called as aa_*: the
// routing between small, large and huge at the class boundaries, usable
// sizes, alignment, size overflow (NULL with ENOMEM), argument errors,
// realloc across the routes, calloc, sized frees and purging.
#include <atf-c++.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "allocator.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "init.h"
#include "options.h"
#include "page_map.h"
#include "require_msg.h"
#include "size_classes.h"

using namespace arenalloc;

namespace {

enum class Kind { kSmall, kLarge, kHuge, kUnknown };

// Where the block lives, from the registry and the page map.
Kind kind_of(const void *p) {
    uintptr_t owner = registry_lookup(p);
    if (owner & kRegistryHuge)
        return Kind::kHuge;
    switch (page_map_tag(page_map_entry_of(p))) {
    case kPageSmall:
        return Kind::kSmall;
    case kPageLarge:
        return Kind::kLarge;
    default:
        return Kind::kUnknown;
    }
}

const char *name(Kind k) {
    switch (k) {
    case Kind::kSmall:
        return "small";
    case Kind::kLarge:
        return "large";
    case Kind::kHuge:
        return "huge";
    default:
        return "unknown";
    }
}

void require_routed(size_t size, Kind want, size_t usable) {
    void *p = aa_malloc(size);
    ATF_REQUIRE_MSG(p != nullptr, size);
    ATF_REQUIRE_MSG(kind_of(p) == want, size << ": " << name(kind_of(p)) << ", not " << name(want));
    ATF_REQUIRE_MSG(aa_usable_size(p) == usable, size << ": usable " << aa_usable_size(p));
    memset(p, 0x5c, size);
    aa_free(p);
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(allocator__routing_at_the_boundaries);
ATF_TEST_CASE_BODY(allocator__routing_at_the_boundaries) {
    ATF_REQUIRE(ensure_initialized());
    require_routed(1, Kind::kSmall, kMinSize);
    require_routed(kMinSize + 1, Kind::kSmall, 16);
    require_routed(kSmallMax, Kind::kSmall, kSmallMax);
    require_routed(kSmallMax + 1, Kind::kLarge, class_to_size(size_to_class(kSmallMax + 1)));
    require_routed(kLookupMax, Kind::kLarge, kLookupMax);
    require_routed(kLookupMax + 1, Kind::kLarge, class_to_size(size_to_class(kLookupMax + 1)));
    require_routed(g_chunk.large_max, Kind::kLarge, g_chunk.large_max);
    require_routed(g_chunk.large_max + 1, Kind::kHuge, align_up(g_chunk.large_max + 1, kPage));
    require_routed(size_t{64} << 20, Kind::kHuge, size_t{64} << 20);
    // Every small and large class size is served exactly, the byte above
    // it by the next class.
    for (unsigned c = 0; class_to_size(c) <= g_chunk.large_max; c++) {
        size_t s = class_to_size(c);
        void *p = aa_malloc(s);
        ATF_REQUIRE_MSG(aa_usable_size(p) == s, "class " << c);
        aa_free(p);
        if (class_to_size(c + 1) <= g_chunk.large_max) {
            p = aa_malloc(s + 1);
            ATF_REQUIRE_MSG(aa_usable_size(p) == class_to_size(c + 1), "class " << c << " + 1");
            aa_free(p);
        }
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(allocator__malloc_zero);
ATF_TEST_CASE_BODY(allocator__malloc_zero) {
    void *p = aa_malloc(0);
    ATF_REQUIRE(p != nullptr);
    ATF_REQUIRE(aa_usable_size(p) >= 1);
    aa_free(p);
    // V: malloc(0) returns NULL.
    g_options.malloc0_null = true;
    ATF_REQUIRE(aa_malloc(0) == nullptr);
    ATF_REQUIRE(aa_malloc(1) != nullptr);
    ATF_REQUIRE_EQ(aa_usable_size(nullptr), 0u);
    aa_free(nullptr);  // nothing
}

ATF_TEST_CASE_WITHOUT_HEAD(allocator__alignment);
ATF_TEST_CASE_BODY(allocator__alignment) {
    ATF_REQUIRE(ensure_initialized());
    const size_t sizes[] = {1, 100, kSmallMax, 40000, g_chunk.large_max, size_t{5} << 20};
    for (size_t align = sizeof(void *); align <= (size_t{8} << 20); align <<= 1) {
        for (size_t size : sizes) {
            void *p = nullptr;
            ATF_REQUIRE_EQ(aa_posix_memalign(&p, align, size), 0);
            ATF_REQUIRE_MSG(reinterpret_cast<uintptr_t>(p) % align == 0, align << "/" << size);
            ATF_REQUIRE_MSG(aa_usable_size(p) >= size, align << "/" << size);
            memset(p, 0x33, size);
            aa_free(p);
            void *q = aa_aligned_alloc(align, size);
            ATF_REQUIRE(q != nullptr);
            ATF_REQUIRE_MSG(reinterpret_cast<uintptr_t>(q) % align == 0, align << "/" << size);
            aa_free(q);
        }
    }
    void *v = aa_valloc(10);
    ATF_REQUIRE_EQ(reinterpret_cast<uintptr_t>(v) % kPage, 0u);
    aa_free(v);
    void *pv = aa_pvalloc(1);
    ATF_REQUIRE_EQ(reinterpret_cast<uintptr_t>(pv) % kPage, 0u);
    ATF_REQUIRE(aa_usable_size(pv) >= kPage);
    aa_free(pv);
}

ATF_TEST_CASE_WITHOUT_HEAD(allocator__bad_alignment);
ATF_TEST_CASE_BODY(allocator__bad_alignment) {
    void *const untouched = reinterpret_cast<void *>(0x1234);
    // sizeof(void *) / 2: a power of two below a pointer's size (4, or 2 on 32-bit targets).
    for (size_t align : {size_t{0}, size_t{1}, sizeof(void *) / 2, size_t{3}, size_t{24}, size_t{48}}) {
        void *p = untouched;
        ATF_REQUIRE_MSG(aa_posix_memalign(&p, align, 16) == EINVAL, align);
        ATF_REQUIRE(p == untouched);
    }
    for (size_t align : {size_t{0}, size_t{3}, size_t{24}}) {
        errno = 0;
        ATF_REQUIRE(aa_aligned_alloc(align, 16) == nullptr);
        ATF_REQUIRE_EQ(errno, EINVAL);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(allocator__overflow_fails_with_enomem);
ATF_TEST_CASE_BODY(allocator__overflow_fails_with_enomem) {
    const size_t too_big[] = {SIZE_MAX, SIZE_MAX - kPage, size_t{PTRDIFF_MAX} + 1};
    for (size_t size : too_big) {
        errno = 0;
        ATF_REQUIRE_MSG(aa_malloc(size) == nullptr, size);
        ATF_REQUIRE_EQ(errno, ENOMEM);
        errno = 0;
        ATF_REQUIRE(aa_valloc(size) == nullptr);
        ATF_REQUIRE_EQ(errno, ENOMEM);
        errno = 0;
        ATF_REQUIRE(aa_pvalloc(size) == nullptr);
        ATF_REQUIRE_EQ(errno, ENOMEM);
        void *p = nullptr;
        ATF_REQUIRE_EQ(aa_posix_memalign(&p, 64, size), ENOMEM);
        errno = 0;
        ATF_REQUIRE(aa_aligned_alloc(kPage, size) == nullptr);
        ATF_REQUIRE_EQ(errno, ENOMEM);
    }
    // n * size past SIZE_MAX.
    errno = 0;
    ATF_REQUIRE(aa_calloc(SIZE_MAX / 2, 3) == nullptr);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    errno = 0;
    const size_t past_root = size_t{1} << (sizeof(size_t) * 4 + 1);  // its square overflows
    ATF_REQUIRE(aa_calloc(past_root, past_root) == nullptr);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    // A failed realloc leaves the block as it was.
    char *p = static_cast<char *>(aa_malloc(100));
    memset(p, 0x7e, 100);
    errno = 0;
    ATF_REQUIRE(aa_realloc(p, SIZE_MAX) == nullptr);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    errno = 0;
    ATF_REQUIRE(aa_reallocarray(p, SIZE_MAX / 2, 3) == nullptr);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    for (int i = 0; i < 100; i++)
        ATF_REQUIRE_EQ(p[i], 0x7e);
    ATF_REQUIRE_EQ(aa_usable_size(p), 112u);
    aa_free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(allocator__realloc_across_routes);
ATF_TEST_CASE_BODY(allocator__realloc_across_routes) {
    ATF_REQUIRE(ensure_initialized());
    const size_t steps[] = {10, 5000, kSmallMax + 1, 100000, g_chunk.large_max + 1,
                            size_t{12} << 20, 300000, 64, 1};
    // Each block is filled with a pattern; the next size keeps what fits.
    size_t old = 10;
    unsigned char *p = static_cast<unsigned char *>(aa_realloc(nullptr, old));
    ATF_REQUIRE(p != nullptr);
    for (size_t i = 0; i < old; i++)
        p[i] = static_cast<unsigned char>(i * 7 + 1);
    for (size_t size : steps) {
        p = static_cast<unsigned char *>(aa_realloc(p, size));
        ATF_REQUIRE_MSG(p != nullptr, size);
        ATF_REQUIRE(aa_usable_size(p) >= size);
        for (size_t i = 0; i < old && i < size; i++)
            ATF_REQUIRE_MSG(p[i] == static_cast<unsigned char>(i * 7 + 1), "size " << size << " byte " << i);
        for (size_t i = 0; i < size; i++)
            p[i] = static_cast<unsigned char>(i * 7 + 1);
        old = size;
    }
    aa_free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(allocator__calloc_zeroes);
ATF_TEST_CASE_BODY(allocator__calloc_zeroes) {
    for (size_t size : {size_t{48}, size_t{3000}, size_t{70000}, size_t{3} << 20}) {
        unsigned char *p = static_cast<unsigned char *>(aa_malloc(size));
        memset(p, 0xff, size);
        aa_free(p);
        unsigned char *q = static_cast<unsigned char *>(aa_calloc(size / 8, 8));
        ATF_REQUIRE(q != nullptr);
        for (size_t i = 0; i < size; i++)
            ATF_REQUIRE_MSG(q[i] == 0, "size " << size << " byte " << i);
        aa_free(q);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(allocator__sized_free_checks_the_size);
ATF_TEST_CASE_BODY(allocator__sized_free_checks_the_size) {
    ATF_REQUIRE(ensure_initialized());         // which sets the options,
    g_options.continue_on_bad_pointer = true;  // then: report and go on
    char *p = static_cast<char *>(aa_malloc(100));
    memset(p, 1, 100);
    aa_free_sized(p, 1, 5000, "free_sized");  // another class: left alone
    ATF_REQUIRE_EQ(aa_usable_size(p), 112u);
    ATF_REQUIRE(kind_of(p) == Kind::kSmall);
    aa_free_sized(p, 3, 100, "free_aligned_sized");  // not a power of two
    ATF_REQUIRE_EQ(aa_usable_size(p), 112u);
    aa_free_sized(p, 1, 100, "free_sized");
    void *q = nullptr;
    ATF_REQUIRE_EQ(aa_posix_memalign(&q, 4096, 100000), 0);
    aa_free_sized(q, 4096, 100000, "free_aligned_sized");
    ATF_REQUIRE(kind_of(q) != Kind::kLarge);  // freed: its pages are free
}

ATF_TEST_CASE_WITHOUT_HEAD(allocator__purge_gives_back);
ATF_TEST_CASE_BODY(allocator__purge_gives_back) {
    void *blocks[8];
    for (void *&p : blocks) {
        p = aa_malloc(256 << 10);
        memset(p, 0x21, 256 << 10);
    }
    for (void *p : blocks)
        aa_free(p);
    ATF_REQUIRE(aa_purge() >= size_t{8} * (256 << 10));
    // Nothing dirty is left to give.
    ATF_REQUIRE(aa_purge() < size_t{256} << 10);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, allocator__routing_at_the_boundaries);
    ATF_ADD_TEST_CASE(tcs, allocator__malloc_zero);
    ATF_ADD_TEST_CASE(tcs, allocator__alignment);
    ATF_ADD_TEST_CASE(tcs, allocator__bad_alignment);
    ATF_ADD_TEST_CASE(tcs, allocator__overflow_fails_with_enomem);
    ATF_ADD_TEST_CASE(tcs, allocator__realloc_across_routes);
    ATF_ADD_TEST_CASE(tcs, allocator__calloc_zeroes);
    ATF_ADD_TEST_CASE(tcs, allocator__sized_free_checks_the_size);
    ATF_ADD_TEST_CASE(tcs, allocator__purge_gives_back);
}
