// Conformance of every public allocation function: sizes, size classes,
// alignment, errno values, zeroing, realloc contents.
//
// Linked against libarenalloc, so this process's malloc is arenalloc.

#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <functional>
#include <utility>
#include <vector>

#include "arenalloc.h"
#include "config.h"  // the C library contract configure chose
#include "test_util.h"

// glibc declares pvalloc in <malloc.h>; other C libraries (musl) have no
// pvalloc of their own, but arenalloc still defines it.
#ifndef __GLIBC__
extern "C" void *pvalloc(size_t);
#endif

using testutil::escape;
using testutil::is_aligned;
using testutil::page_size;

namespace {

const size_t KiB = 1024;
const size_t MiB = 1024 * 1024;
const size_t small_max = testutil::largest_small_class();
const size_t large_max = 1792 * KiB;     // largest large class, 2 MiB chunks

// The size classes of arenalloc(3): 8, 16, 32 ... 128 by 16, then four per
// doubling, up to the largest large class.
std::vector<size_t>
size_classes(void)
{
    std::vector<size_t> c;
    c.push_back(8);
    for (size_t s = 16; s <= 128; s += 16)
        c.push_back(s);
    for (size_t base = 128; base < large_max; base *= 2)
        for (size_t i = 1; i <= 4; i++)
            c.push_back(base + i * (base / 4));
    while (c.back() > large_max)
        c.pop_back();
    return c;
}

// Smallest class >= n (n <= large_max).
size_t
class_of(size_t n)
{
    static const std::vector<size_t> classes = size_classes();
    return *std::lower_bound(classes.begin(), classes.end(), std::max<size_t>(n, 1));
}

size_t
lowbit(size_t x)
{
    return x & (~x + 1);
}

// Alignment arenalloc(3) promises for malloc(n): a small block of class S is
// aligned to the largest power of two dividing S; large and huge blocks are
// whole pages.
size_t
natural_alignment(size_t n)
{
    if (n <= small_max)
        return lowbit(class_of(n));
    return page_size();
}

// The alignment checked for every size by the size walks: the natural
// alignment, at most a page (malloc__natural_alignment checks the rest).
size_t
expected_alignment(size_t n)
{
    return std::min(natural_alignment(n), page_size());
}

size_t
round_up(size_t n, size_t a)
{
    return (n + a - 1) & ~(a - 1);
}

// Allocates `count` blocks of n bytes with malloc, checks alignment and
// usable size, fills each block's whole usable size with its own byte, checks
// that no block overwrote another, and frees them.
void
check_malloc_size(size_t n, int count)
{
    std::vector<std::pair<unsigned char *, size_t> > blocks;
    const size_t align = expected_alignment(n);
    for (int i = 0; i < count; i++) {
        errno = 0;
        unsigned char *p = static_cast<unsigned char *>(malloc(n));
        TU_REQUIRE_MSG(p != NULL, "malloc(" << n << ") returned NULL, errno "
                                            << errno);
        TU_REQUIRE_MSG(is_aligned(p, align),
                       "malloc(" << n << ") = " << static_cast<void *>(p)
                                 << " is not " << align << "-byte aligned");
        const size_t usable = malloc_usable_size(p);
        TU_REQUIRE_MSG(usable >= n, "malloc_usable_size(malloc(" << n
                                        << ")) = " << usable);
        memset(p, 0x10 + i, usable);
        blocks.push_back(std::make_pair(p, usable));
    }
    for (int i = 0; i < count; i++) {
        const size_t off = testutil::first_not(blocks[i].first,
                                               blocks[i].second, 0x10 + i);
        TU_REQUIRE_MSG(off == blocks[i].second,
                       "block " << i << " of malloc(" << n << ") at "
                                << static_cast<void *>(blocks[i].first)
                                << " overwritten at offset " << off);
        free(blocks[i].first);
    }
}

// Allocates with the aligned function `which` ("posix_memalign",
// "aligned_alloc", "memalign"); returns NULL on failure.
void *
aligned(const char *which, size_t alignment, size_t n)
{
    if (strcmp(which, "posix_memalign") == 0) {
        void *p = NULL;
        const int rv = posix_memalign(&p, alignment, n);
        if (rv != 0) {
            TU_REQUIRE_MSG(p == NULL, "posix_memalign failed (" << rv
                                          << ") but set *memptr");
            return NULL;
        }
        return p;
    }
    if (strcmp(which, "aligned_alloc") == 0)
        return aligned_alloc(alignment, n);
    return memalign(alignment, n);
}

// Every power-of-two alignment from min_align to 1 GiB, small, large and huge
// sizes; the blocks of one alignment live together and are pattern-checked.
void
check_alignments(const char *which, size_t min_align)
{
    for (size_t a = min_align; a <= 1024 * MiB; a *= 2) {
        std::vector<size_t> sizes = { 1, 24, 200, 4000, 20000, 300000,
                                      3 * MiB };
        if (a <= 4 * MiB)
            sizes.push_back(a);
        if (a <= 1 * MiB)
            sizes.push_back(a + 1);
        if (a >= 64 * MiB)
            sizes = { 1, 4096, 3 * MiB };
        std::vector<std::pair<void *, size_t> > blocks;
        for (size_t n : sizes) {
            errno = 0;
            void *p = aligned(which, a, n);
            TU_REQUIRE_MSG(p != NULL, which << "(" << a << ", " << n
                                            << ") failed, errno " << errno);
            TU_REQUIRE_MSG(is_aligned(p, a), which << "(" << a << ", " << n
                                                   << ") = " << p
                                                   << " misaligned");
            const size_t usable = malloc_usable_size(p);
            TU_REQUIRE_MSG(usable >= n, which << "(" << a << ", " << n
                                              << "): usable size " << usable);
            testutil::pattern_fill(p, n, testutil::pattern_seed(p, n));
            blocks.push_back(std::make_pair(p, n));
        }
        for (const auto &b : blocks) {
            const size_t off = testutil::pattern_check(
                b.first, b.second, testutil::pattern_seed(b.first, b.second));
            TU_REQUIRE_MSG(off == b.second,
                           which << "(" << a << ", " << b.second
                                 << "): block overwritten at offset " << off);
            free(b.first);
        }
    }
}

// The sizes that no allocation can satisfy: past PTRDIFF_MAX everywhere;
// PTRDIFF_MAX itself only where that is more than the address space can
// hold (a 32-bit process under a 64-bit kernel can map its 2 GiB).
std::vector<size_t>
impossible_sizes(void)
{
    std::vector<size_t> v = { SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 4095,
                              SIZE_MAX - 2 * MiB,
                              static_cast<size_t>(PTRDIFF_MAX) + 1 };
    if (sizeof(void *) == 8) {
        v.push_back(static_cast<size_t>(PTRDIFF_MAX));
        v.push_back(static_cast<size_t>(PTRDIFF_MAX) - 4095);
    }
    return v;
}

// A factor whose square is just past SIZE_MAX: 2^32 on 64-bit targets, 2^16
// on 32-bit ones.
const size_t kRootOverflow = size_t(1) << (sizeof(size_t) * 4);

// Calls alloc(n) for n in sizes, with and without a previously recycled
// 0xA5-filled block of the same size, and checks that all bytes are zero.
void
check_calloc_recycled(const std::vector<size_t> &sizes, int rounds,
                      int per_round)
{
    for (int round = 0; round < rounds; round++) {
        for (size_t n : sizes) {
            std::vector<void *> dirty;
            for (int i = 0; i < per_round; i++) {
                void *p = malloc(n);
                TU_REQUIRE_MSG(p != NULL, "malloc(" << n << ") failed");
                memset(p, 0xA5, malloc_usable_size(p));
                dirty.push_back(p);
            }
            for (void *p : dirty)
                free(p);
            std::vector<void *> clean;
            for (int i = 0; i < per_round; i++) {
                // Vary the split of n into nmemb * size.
                const size_t size = (i % 3 == 0 && n % 8 == 0) ? 8 : 1;
                void *p = calloc(n / size, size);
                TU_REQUIRE_MSG(p != NULL, "calloc(" << n / size << ", " << size
                                                    << ") failed");
                const size_t off = testutil::first_not(p, n, 0);
                TU_REQUIRE_MSG(off == n,
                               "round " << round << ": calloc of " << n
                                        << " bytes at " << p
                                        << " not zero at offset " << off);
                clean.push_back(p);
            }
            for (void *p : clean)
                free(p);
        }
    }
}

}  // namespace

// --- malloc -----------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(malloc__is_arenalloc);
ATF_TEST_CASE_BODY(malloc__is_arenalloc)
{
#ifdef ARENALLOC_STANDALONE_TESTS
    // A static program has no dynamic symbol table to ask: malloc is
    // arenalloc when a malloc and a free move arenalloc's own counters.
    struct arenalloc_summary before, after;
    ATF_REQUIRE_EQ(arenalloc_get_summary(&before), 0);
    void *p = malloc(testutil::opaque<size_t>(100));
    ATF_REQUIRE(p != NULL);
    escape(p);
    free(p);
    ATF_REQUIRE_EQ(arenalloc_get_summary(&after), 0);
    TU_REQUIRE_MSG(after.nmalloc_small >= before.nmalloc_small + 1,
                   "small allocations " << before.nmalloc_small << " -> "
                                        << after.nmalloc_small);
    TU_REQUIRE_MSG(after.nfree >= before.nfree + 1,
                   "frees " << before.nfree << " -> " << after.nfree);
#else
    void *sym = dlsym(RTLD_DEFAULT, "malloc");
    ATF_REQUIRE(sym != NULL);
    Dl_info info;
    ATF_REQUIRE(dladdr(sym, &info) != 0);
    TU_REQUIRE_MSG(info.dli_fname != NULL &&
                       strstr(info.dli_fname, "libarenalloc") != NULL,
                   "malloc resolves to " << (info.dli_fname ? info.dli_fname
                                                            : "(unknown)"));
    ATF_REQUIRE(dlsym(RTLD_DEFAULT, "arenalloc_get_summary") != NULL);
#endif
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc__zero_size);
ATF_TEST_CASE_BODY(malloc__zero_size)
{
    std::vector<unsigned char *> v;
    for (int i = 0; i < 1000; i++) {
        unsigned char *p = static_cast<unsigned char *>(malloc(0));
        ATF_REQUIRE(p != NULL);
        TU_REQUIRE_MSG(malloc_usable_size(p) >= 8,
                       "malloc_usable_size(malloc(0)) = "
                           << malloc_usable_size(p));
        ATF_REQUIRE(is_aligned(p, 8));
        memset(p, i & 0xff, 8);
        v.push_back(p);
    }
    std::vector<unsigned char *> sorted(v);
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); i++)
        TU_REQUIRE_MSG(sorted[i] - sorted[i - 1] >= 8,
                       "malloc(0) returned " << (void *)sorted[i - 1]
                                             << " and " << (void *)sorted[i]);
    for (size_t i = 0; i < v.size(); i++) {
        TU_REQUIRE_MSG(testutil::first_not(v[i], 8, i & 0xff) == 8,
                       "malloc(0) block " << i << " overwritten");
        free(v[i]);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc__small_sizes);
ATF_TEST_CASE_BODY(malloc__small_sizes)
{
    for (size_t n = 1; n <= small_max; n++)
        check_malloc_size(n, 3);
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc__natural_alignment);
ATF_TEST_CASE_BODY(malloc__natural_alignment)
{
    // Every small class, including those whose natural alignment exceeds a
    // page (8192); several blocks each so that not only a run's first
    // region is looked at.
    for (size_t c : size_classes()) {
        if (c > small_max)
            break;
        for (size_t n : { c - (c > 8 ? 7 : 0), c }) {
            std::vector<void *> v;
            for (int i = 0; i < 8; i++) {
                void *p = malloc(n);
                ATF_REQUIRE(p != NULL);
                v.push_back(p);
                TU_REQUIRE_MSG(is_aligned(p, natural_alignment(n)),
                               "malloc(" << n << ") (class " << c << ") = "
                                         << p << " is not "
                                         << natural_alignment(n)
                                         << "-byte aligned");
            }
            for (void *p : v)
                free(p);
        }
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc__sizes_to_64k);
ATF_TEST_CASE_BODY(malloc__sizes_to_64k)
{
    // Up to the largest class the thread caches keep: 64 KiB, or four
    // pages with 64 KiB pages (arenalloc(3)).
    const size_t cached_max = std::max<size_t>(64 * KiB, 4 * page_size());
    for (size_t n = small_max - 64; n <= cached_max + 64; n += 8)
        check_malloc_size(n, 3);
    for (size_t c : size_classes()) {
        if (c > cached_max)
            break;
        check_malloc_size(c - 1, 2);
        check_malloc_size(c, 2);
        check_malloc_size(c + 1, 2);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc__large_and_huge_sizes);
ATF_TEST_CASE_BODY(malloc__large_and_huge_sizes)
{
    const size_t sizes[] = { 64 * KiB + 1, 100000, 128 * KiB, 256 * KiB - 1,
                             262144, 500000, 1 * MiB, 1 * MiB + 1,
                             1536 * KiB, large_max - 1, large_max,
                             large_max + 1, 2 * MiB - 1, 2 * MiB,
                             2 * MiB + 1, 3 * MiB, 4 * MiB - 4096, 4 * MiB,
                             5 * MiB + 123, 8 * MiB - 1, 8 * MiB };
    for (size_t n : sizes)
        check_malloc_size(n, 3);
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc__too_big);
ATF_TEST_CASE_BODY(malloc__too_big)
{
    for (size_t n : impossible_sizes()) {
        errno = 0;
        void *p = malloc(n);
        TU_REQUIRE_MSG(p == NULL, "malloc(" << n << ") = " << p);
        TU_REQUIRE_MSG(errno == ENOMEM, "malloc(" << n << "): errno " << errno);
    }
    // The allocator still works afterwards.
    void *p = malloc(100);
    ATF_REQUIRE(p != NULL);
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc__no_overlap);
ATF_TEST_CASE_BODY(malloc__no_overlap)
{
    testutil::rng r(42);
    std::vector<std::pair<char *, size_t> > blocks;
    for (int i = 0; i < 3000; i++) {
        size_t n = r.next() % 100 == 0 ? r.range(2 * MiB, 5 * MiB)
                   : r.next() % 10 == 0 ? r.log_range(16 * KiB, large_max)
                                        : r.log_range(1, small_max);
        char *p = static_cast<char *>(malloc(n));
        TU_REQUIRE_MSG(p != NULL, "malloc(" << n << ") failed");
        testutil::pattern_fill(p, n, testutil::pattern_seed(p, n));
        blocks.push_back(std::make_pair(p, n));
        if (r.next() % 3 == 0) {  // free a random earlier block
            const size_t k = r.next() % blocks.size();
            const auto b = blocks[k];
            TU_REQUIRE_MSG(testutil::pattern_check(b.first, b.second,
                               testutil::pattern_seed(b.first, b.second)) ==
                               b.second,
                           "block of " << b.second << " at "
                                       << (void *)b.first << " corrupted");
            free(b.first);
            blocks[k] = blocks.back();
            blocks.pop_back();
        }
    }
    std::vector<std::pair<char *, size_t> > sorted(blocks);
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); i++)
        TU_REQUIRE_MSG(sorted[i - 1].first +
                               malloc_usable_size(sorted[i - 1].first) <=
                           sorted[i].first,
                       "blocks " << (void *)sorted[i - 1].first << " ("
                                 << malloc_usable_size(sorted[i - 1].first)
                                 << " usable) and " << (void *)sorted[i].first
                                 << " overlap");
    for (const auto &b : blocks) {
        TU_REQUIRE_MSG(testutil::pattern_check(b.first, b.second,
                           testutil::pattern_seed(b.first, b.second)) ==
                           b.second,
                       "block of " << b.second << " at " << (void *)b.first
                                   << " corrupted");
        free(b.first);
    }
}

// --- malloc_usable_size -------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(malloc_usable_size__null);
ATF_TEST_CASE_BODY(malloc_usable_size__null)
{
    ATF_REQUIRE_EQ(malloc_usable_size(NULL), 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc_usable_size__small_classes);
ATF_TEST_CASE_BODY(malloc_usable_size__small_classes)
{
    for (size_t n = 0; n <= small_max; n++) {
        void *p = malloc(n);
        ATF_REQUIRE(p != NULL);
        const size_t usable = malloc_usable_size(p);
        TU_REQUIRE_MSG(usable == class_of(n),
                       "malloc_usable_size(malloc(" << n << ")) = " << usable
                                                    << ", size class is "
                                                    << class_of(n));
        free(p);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc_usable_size__large_classes);
ATF_TEST_CASE_BODY(malloc_usable_size__large_classes)
{
    const std::vector<size_t> classes = size_classes();
    for (size_t i = 1; i < classes.size(); i++) {
        const size_t c = classes[i];
        if (c <= small_max)
            continue;
        for (size_t n : { classes[i - 1] + 1, c - 1, c }) {
            void *p = malloc(n);
            ATF_REQUIRE(p != NULL);
            const size_t usable = malloc_usable_size(p);
            TU_REQUIRE_MSG(usable == class_of(n),
                           "malloc_usable_size(malloc(" << n << ")) = "
                               << usable << ", size class is " << class_of(n));
            TU_REQUIRE_MSG(usable % page_size() == 0,
                           "large usable size " << usable
                                                << " not a page multiple");
            free(p);
        }
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc_usable_size__huge_rounding);
ATF_TEST_CASE_BODY(malloc_usable_size__huge_rounding)
{
    const size_t sizes[] = { large_max + 1, 2 * MiB - 1, 2 * MiB, 2 * MiB + 1,
                             3 * MiB + 5, 7 * MiB + 4095, 16 * MiB };
    for (size_t n : sizes) {
        void *p = malloc(n);
        ATF_REQUIRE(p != NULL);
        const size_t usable = malloc_usable_size(p);
        TU_REQUIRE_MSG(usable == round_up(n, page_size()),
                       "malloc_usable_size(malloc(" << n << ")) = " << usable
                           << ", expected " << round_up(n, page_size()));
        free(p);
    }
}

// --- calloc -------------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(calloc__zero_small);
ATF_TEST_CASE_BODY(calloc__zero_small)
{
    check_calloc_recycled({ 1, 8, 24, 48, 100, 512, 1000, 3000, 4096, 8192,
                            14336 },
                          20, 50);
}

ATF_TEST_CASE_WITHOUT_HEAD(calloc__zero_large);
ATF_TEST_CASE_BODY(calloc__zero_large)
{
    check_calloc_recycled({ 16385, 20480, 65536, 100000, 500000, 1536 * KiB,
                            large_max },
                          10, 8);
}

ATF_TEST_CASE_WITHOUT_HEAD(calloc__zero_huge);
ATF_TEST_CASE_BODY(calloc__zero_huge)
{
    check_calloc_recycled({ large_max + 1, 2 * MiB, 4 * MiB, 6 * MiB + 8 },
                          6, 4);
}

ATF_TEST_CASE_WITHOUT_HEAD(calloc__zero_count);
ATF_TEST_CASE_BODY(calloc__zero_count)
{
    void *p = calloc(0, 16);
    void *q = calloc(16, 0);
    void *r = calloc(0, 0);
    ATF_REQUIRE(p != NULL && q != NULL && r != NULL);
    ATF_REQUIRE(p != q && q != r && p != r);
    free(p);
    free(q);
    free(r);
}

ATF_TEST_CASE_WITHOUT_HEAD(calloc__overflow);
ATF_TEST_CASE_BODY(calloc__overflow)
{
    const std::pair<size_t, size_t> cases[] = {
        { SIZE_MAX / 2 + 1, 2 }, { 2, SIZE_MAX / 2 + 1 },
        { kRootOverflow, kRootOverflow }, { SIZE_MAX, SIZE_MAX },
        { 3, SIZE_MAX / 3 + 1 }, { SIZE_MAX, 1 }, { 1, SIZE_MAX },
        { static_cast<size_t>(PTRDIFF_MAX) / 2 + 1, 2 },
    };
    for (const auto &c : cases) {
        errno = 0;
        void *p = calloc(c.first, c.second);
        TU_REQUIRE_MSG(p == NULL, "calloc(" << c.first << ", " << c.second
                                            << ") = " << p);
        TU_REQUIRE_MSG(errno == ENOMEM, "calloc(" << c.first << ", "
                                                  << c.second << "): errno "
                                                  << errno);
    }
}

// --- realloc ------------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(realloc__null);
ATF_TEST_CASE_BODY(realloc__null)
{
    for (size_t n : { size_t(0), size_t(1), size_t(100), 20000 * size_t(1),
                      3 * MiB }) {
        void *p = realloc(NULL, n);
        TU_REQUIRE_MSG(p != NULL, "realloc(NULL, " << n << ") = NULL");
        TU_REQUIRE_MSG(malloc_usable_size(p) >= n,
                       "realloc(NULL, " << n << "): usable size "
                                        << malloc_usable_size(p));
        memset(p, 1, n);
        free(p);
    }
}

// arenalloc(3), STANDARDS: where the C library's contract says so (glibc,
// illumos), realloc(p, 0) frees p and returns NULL, errno untouched; under
// the BSD contract it behaves as realloc(p, 1).  realloc(NULL, 0) is
// malloc(0) everywhere.
ATF_TEST_CASE_WITHOUT_HEAD(realloc__zero_size);
ATF_TEST_CASE_BODY(realloc__zero_size)
{
    for (size_t n : { size_t(1), size_t(100), 20000 * size_t(1), 3 * MiB }) {
        unsigned char *p = static_cast<unsigned char *>(malloc(n));
        ATF_REQUIRE(p != NULL);
        p[0] = 0x5C;
        arenalloc_summary before, after;
        ATF_REQUIRE(arenalloc_get_summary(&before) == 0);
        errno = EDOM;
        unsigned char *q =
            static_cast<unsigned char *>(realloc(p, testutil::opaque<size_t>(0)));
        const int saved_errno = errno;
        ATF_REQUIRE(arenalloc_get_summary(&after) == 0);
#if ARENALLOC_REALLOC_ZERO_FREES
        TU_REQUIRE_MSG(q == NULL, "realloc(malloc(" << n << "), 0) = " << (void *)q);
        TU_REQUIRE_MSG(saved_errno == EDOM, "realloc(p, 0) set errno to " << saved_errno);
        TU_REQUIRE_MSG(after.nfree - before.nfree == 1,
                       "realloc(malloc(" << n << "), 0): " << after.nfree - before.nfree
                                         << " blocks freed, expected 1");
#else
        TU_REQUIRE_MSG(q != NULL, "realloc(malloc(" << n << "), 0) = NULL, errno "
                                                    << saved_errno);
        TU_REQUIRE_MSG(malloc_usable_size(q) >= 1, "usable size " << malloc_usable_size(q));
        TU_REQUIRE_MSG(q[0] == 0x5C, "realloc(p, 0) lost the first byte");
        free(q);
#endif
    }
    void *p = realloc(NULL, testutil::opaque<size_t>(0));
    ATF_REQUIRE(p != NULL);
    free(p);
}

// FreeBSD's reallocf: realloc, and the old block freed too when the new one
// cannot be had; errno as realloc leaves it.
ATF_TEST_CASE_WITHOUT_HEAD(reallocf__frees_on_failure);
ATF_TEST_CASE_BODY(reallocf__frees_on_failure)
{
    unsigned char *p = static_cast<unsigned char *>(malloc(100));
    ATF_REQUIRE(p != NULL);
    testutil::pattern_fill(p, 100, 9);
    errno = EDOM;
    unsigned char *q = static_cast<unsigned char *>(reallocf(p, 5000));
    TU_REQUIRE_MSG(q != NULL && errno == EDOM, "reallocf(p, 5000) = " << (void *)q
                                                   << ", errno " << errno);
    TU_REQUIRE_MSG(testutil::pattern_check(q, 100, 9) == 100, "reallocf lost the contents");
    arenalloc_summary before, after;
    ATF_REQUIRE(arenalloc_get_summary(&before) == 0);
    void *r = reallocf(q, testutil::opaque(SIZE_MAX));
    const int failed_errno = errno;
    ATF_REQUIRE(arenalloc_get_summary(&after) == 0);
    TU_REQUIRE_MSG(r == NULL && failed_errno == ENOMEM,
                   "reallocf(p, SIZE_MAX) = " << r << ", errno " << failed_errno);
    TU_REQUIRE_MSG(after.nfree - before.nfree == 1,
                   "reallocf(p, SIZE_MAX) freed " << after.nfree - before.nfree << " blocks");
    void *n = reallocf(NULL, 64);
    ATF_REQUIRE(n != NULL);
    ATF_REQUIRE(arenalloc_get_summary(&before) == 0);
    errno = EDOM;
    void *z = reallocf(n, testutil::opaque<size_t>(0));
    ATF_REQUIRE(arenalloc_get_summary(&after) == 0);
    TU_REQUIRE_MSG(errno == EDOM, "reallocf(p, 0) set errno to " << errno);
#if ARENALLOC_REALLOC_ZERO_FREES
    TU_REQUIRE_MSG(z == NULL && after.nfree - before.nfree == 1,
                   "reallocf(p, 0) = " << z << ", " << after.nfree - before.nfree << " freed");
#else
    TU_REQUIRE_MSG(z != NULL, "reallocf(p, 0) = NULL");
    free(z);
#endif
}

// Many realloc(p, 0) in a row leave nothing behind (glibc contract): the
// blocks are freed, not kept as minimal blocks.
ATF_TEST_CASE_WITHOUT_HEAD(realloc__zero_size_loop);
ATF_TEST_CASE_BODY(realloc__zero_size_loop)
{
    for (int i = 0; i < 100000; i++) {
        void *p = malloc(static_cast<size_t>(1 + i % 3000));
        ATF_REQUIRE(p != NULL);
        void *q = realloc(p, testutil::opaque<size_t>(0));
#if ARENALLOC_REALLOC_ZERO_FREES
        TU_REQUIRE_MSG(q == NULL, "round " << i << ": realloc(p, 0) returned " << q);
#else
        TU_REQUIRE_MSG(q != NULL, "round " << i << ": realloc(p, 0) returned NULL");
        free(q);
#endif
    }
}

namespace {

// realloc from `from` bytes to `to` bytes keeps min(from, to) bytes.
void
check_realloc_pair(size_t from, size_t to, uint64_t salt)
{
    void *p = malloc(from);
    TU_REQUIRE_MSG(p != NULL, "malloc(" << from << ") failed");
    const uint64_t seed = testutil::pattern_seed(NULL, from, salt);
    testutil::pattern_fill(p, from, seed);
    errno = 0;
    void *q = realloc(p, to);
    TU_REQUIRE_MSG(q != NULL, "realloc(" << from << " -> " << to
                                         << ") failed, errno " << errno);
    TU_REQUIRE_MSG(malloc_usable_size(q) >= to,
                   "realloc(" << from << " -> " << to << "): usable size "
                              << malloc_usable_size(q));
    const size_t keep = std::min(from, to);
    const size_t off = testutil::pattern_check(q, keep, seed);
    TU_REQUIRE_MSG(off == keep, "realloc(" << from << " -> " << to
                                           << ") changed byte " << off);
    memset(q, 0x77, to);  // the whole new size is writable
    free(q);
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(realloc__ladder_up_and_down);
ATF_TEST_CASE_BODY(realloc__ladder_up_and_down)
{
    // One block walks small -> large -> huge and back down; at each step the
    // bytes common to both sizes are checked.
    const size_t steps[] = { 1, 7, 8, 9, 100, 1000, 4096, 14336, 14337, 20000,
                             65536, 300000, large_max, large_max + 1,
                             2 * MiB, 3 * MiB + 17, 6 * MiB, 9 * MiB };
    const size_t nsteps = sizeof(steps) / sizeof(steps[0]);
    std::vector<size_t> ladder(steps, steps + nsteps);
    for (size_t i = nsteps - 1; i-- > 0;)
        ladder.push_back(steps[i]);

    size_t cur = ladder[0];
    void *p = malloc(cur);
    ATF_REQUIRE(p != NULL);
    uint64_t seed = testutil::pattern_seed(NULL, cur, 1);
    testutil::pattern_fill(p, cur, seed);
    for (size_t i = 1; i < ladder.size(); i++) {
        const size_t next = ladder[i];
        void *q = realloc(p, next);
        TU_REQUIRE_MSG(q != NULL, "realloc(" << cur << " -> " << next
                                             << ") failed");
        const size_t keep = std::min(cur, next);
        const size_t off = testutil::pattern_check(q, keep, seed);
        TU_REQUIRE_MSG(off == keep, "realloc(" << cur << " -> " << next
                                               << ") changed byte " << off);
        TU_REQUIRE_MSG(malloc_usable_size(q) >= next,
                       "usable size " << malloc_usable_size(q) << " < "
                                      << next);
        p = q;
        cur = next;
        seed = testutil::pattern_seed(NULL, cur, i + 1);
        testutil::pattern_fill(p, cur, seed);
    }
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(realloc__all_pairs);
ATF_TEST_CASE_BODY(realloc__all_pairs)
{
    const size_t sizes[] = { 1, 24, 200, 3000, 14336, 16384, 40000, 500000,
                             large_max, large_max + 1, 2 * MiB + 4096,
                             5 * MiB };
    uint64_t salt = 0;
    for (size_t from : sizes)
        for (size_t to : sizes)
            check_realloc_pair(from, to, ++salt);
    // Growing and shrinking by one byte around every small class.
    for (size_t c : size_classes()) {
        if (c > 64 * KiB)
            break;
        check_realloc_pair(c, c + 1, ++salt);
        check_realloc_pair(c + 1, c, ++salt);
        check_realloc_pair(c, c - 1, ++salt);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(realloc__same_class_in_place);
ATF_TEST_CASE_BODY(realloc__same_class_in_place)
{
    const size_t sizes[] = { 100, 1000, 14000, 20000, 100000 };
    for (size_t n : sizes) {
        void *p = malloc(n);
        ATF_REQUIRE(p != NULL);
        const size_t c = class_of(n);
        void *q = realloc(p, c);
        TU_REQUIRE_MSG(q == p, "realloc(malloc(" << n << "), " << c
                                                 << ") moved the block");
        q = realloc(p, n - 1);
        TU_REQUIRE_MSG(q == p, "realloc(malloc(" << n << "), " << n - 1
                                                 << ") moved the block");
        free(q);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(realloc__failure_keeps_block);
ATF_TEST_CASE_BODY(realloc__failure_keeps_block)
{
    for (size_t n : { size_t(100), 20000 * size_t(1), 3 * MiB }) {
        void *p = malloc(n);
        ATF_REQUIRE(p != NULL);
        const uint64_t seed = testutil::pattern_seed(p, n);
        testutil::pattern_fill(p, n, seed);
        for (size_t big : impossible_sizes()) {
            errno = 0;
            void *q = realloc(p, big);
            TU_REQUIRE_MSG(q == NULL, "realloc(p, " << big << ") = " << q);
            TU_REQUIRE_MSG(errno == ENOMEM, "realloc(p, " << big
                                                          << "): errno "
                                                          << errno);
            TU_REQUIRE_MSG(testutil::pattern_check(p, n, seed) == n,
                           "failed realloc changed the block");
        }
        free(p);
    }
}

// --- reallocarray -------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(reallocarray__basic);
ATF_TEST_CASE_BODY(reallocarray__basic)
{
    void *p = reallocarray(NULL, 10, 10);
    ATF_REQUIRE(p != NULL);
    ATF_REQUIRE(malloc_usable_size(p) >= 100);
    testutil::pattern_fill(p, 100, 7);
    void *q = reallocarray(p, 1000, 100);
    ATF_REQUIRE(q != NULL);
    ATF_REQUIRE(malloc_usable_size(q) >= 100000);
    ATF_REQUIRE_EQ(testutil::pattern_check(q, 100, 7), 100u);
    free(q);
}

ATF_TEST_CASE_WITHOUT_HEAD(reallocarray__overflow);
ATF_TEST_CASE_BODY(reallocarray__overflow)
{
    void *p = malloc(64);
    ATF_REQUIRE(p != NULL);
    testutil::pattern_fill(p, 64, 99);
    const std::pair<size_t, size_t> cases[] = {
        { SIZE_MAX / 2 + 1, 2 }, { 4, SIZE_MAX / 4 + 1 },
        { kRootOverflow, kRootOverflow }, { SIZE_MAX, SIZE_MAX },
    };
    for (const auto &c : cases) {
        errno = 0;
        void *q = reallocarray(p, c.first, c.second);
        TU_REQUIRE_MSG(q == NULL, "reallocarray(p, " << c.first << ", "
                                                     << c.second << ") = "
                                                     << q);
        TU_REQUIRE_MSG(errno == ENOMEM, "reallocarray(p, " << c.first << ", "
                                                           << c.second
                                                           << "): errno "
                                                           << errno);
        TU_REQUIRE_MSG(testutil::pattern_check(p, 64, 99) == 64,
                       "failed reallocarray changed the block");
    }
    errno = 0;
    ATF_REQUIRE(reallocarray(NULL, testutil::opaque(SIZE_MAX / 2 + 1), 2) ==
                NULL);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    free(p);
}

// --- posix_memalign, aligned_alloc, memalign ----------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(posix_memalign__bad_alignment);
ATF_TEST_CASE_BODY(posix_memalign__bad_alignment)
{
    // sizeof(void *) / 2: a power of two below a pointer's size (4 is a
    // valid alignment on a 32-bit target).
    const size_t bad[] = { 0, 1, 2, 3, sizeof(void *) / 2, 6, 12, 24, 40, 48, 100, 4097,
                           (size_t(1) << 20) + 8, SIZE_MAX,
                           static_cast<size_t>(PTRDIFF_MAX) + 2 };
    for (size_t a : bad) {
        void *sentinel = reinterpret_cast<void *>(0x1234);
        void *p = sentinel;
        errno = EDOM;
        const int rv = posix_memalign(&p, a, 64);
        TU_REQUIRE_MSG(rv == EINVAL, "posix_memalign(&p, " << a
                                         << ", 64) returned " << rv);
        TU_REQUIRE_MSG(p == sentinel, "posix_memalign(&p, " << a
                                          << ", 64) changed *memptr");
        TU_REQUIRE_MSG(errno == EDOM, "posix_memalign(&p, " << a
                                          << ", 64) changed errno to "
                                          << errno);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(posix_memalign__enomem);
ATF_TEST_CASE_BODY(posix_memalign__enomem)
{
    const size_t aligns[] = { 8, 64, 4096, size_t(1) << 21, size_t(1) << 30 };
    for (size_t a : aligns) {
        for (size_t n : impossible_sizes()) {
            void *sentinel = reinterpret_cast<void *>(0x4321);
            void *p = sentinel;
            errno = EDOM;
            const int rv = posix_memalign(&p, a, n);
            TU_REQUIRE_MSG(rv == ENOMEM, "posix_memalign(&p, " << a << ", "
                                             << n << ") returned " << rv);
            TU_REQUIRE_MSG(p == sentinel, "posix_memalign(&p, " << a << ", "
                                              << n << ") changed *memptr");
            const int want = ARENALLOC_POSIX_MEMALIGN_SETS_ERRNO ? ENOMEM : EDOM;
            TU_REQUIRE_MSG(errno == want, "posix_memalign(&p, " << a << ", "
                                              << n << "): errno " << errno
                                              << ", expected " << want);
        }
    }
}

// arenalloc(3), STANDARDS: glibc's memalign takes any alignment and rounds
// it up to a power of two; the BSD and illumos contracts refuse it (EINVAL).
// Several alignments in a loop, each block aligned and usable.
ATF_TEST_CASE_WITHOUT_HEAD(memalign__any_alignment);
ATF_TEST_CASE_BODY(memalign__any_alignment)
{
    for (int round = 0; round < 3; round++) {
        for (size_t a = 0; a <= 5000; a += (a < 100 ? 1 : 97)) {
            const size_t n = 1 + a % 300 + static_cast<size_t>(round) * 1000;
            errno = EDOM;
            unsigned char *p = static_cast<unsigned char *>(memalign(testutil::opaque(a), n));
            const bool pow2 = a != 0 && (a & (a - 1)) == 0;
#if ARENALLOC_MEMALIGN_ROUNDS_UP
            TU_REQUIRE_MSG(p != NULL, "memalign(" << a << ", " << n << ") = NULL, errno " << errno);
            size_t want = 1;
            while (want < a)
                want <<= 1;
            TU_REQUIRE_MSG(reinterpret_cast<uintptr_t>(p) % want == 0,
                           "memalign(" << a << ", " << n << ") = " << (void *)p
                                       << ", not aligned to " << want);
            TU_REQUIRE_MSG(malloc_usable_size(p) >= n, "usable size " << malloc_usable_size(p));
            memset(p, 0xA5, n);
            free(p);
#else
            if (pow2) {
                TU_REQUIRE_MSG(p != NULL && reinterpret_cast<uintptr_t>(p) % a == 0,
                               "memalign(" << a << ", " << n << ") = " << (void *)p);
                free(p);
            } else {
                TU_REQUIRE_MSG(p == NULL && errno == EINVAL,
                               "memalign(" << a << ", " << n << ") = " << (void *)p
                                           << ", errno " << errno);
            }
#endif
            (void)pow2;
        }
    }
}

// C11 (DR 460) and glibc take a size that is not a multiple of the
// alignment; so does arenalloc, on every platform.
ATF_TEST_CASE_WITHOUT_HEAD(aligned_alloc__size_not_multiple);
ATF_TEST_CASE_BODY(aligned_alloc__size_not_multiple)
{
    const size_t cases[][2] = { { 16, 1 }, { 64, 65 }, { 4096, 100 }, { 4096, 5000 },
                                { size_t(1) << 21, 3 } };
    for (const auto &c : cases) {
        unsigned char *p = static_cast<unsigned char *>(aligned_alloc(c[0], c[1]));
        TU_REQUIRE_MSG(p != NULL && reinterpret_cast<uintptr_t>(p) % c[0] == 0,
                       "aligned_alloc(" << c[0] << ", " << c[1] << ") = " << (void *)p);
        memset(p, 1, c[1]);
        free(p);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(posix_memalign__alignments);
ATF_TEST_CASE_BODY(posix_memalign__alignments)
{
    check_alignments("posix_memalign", sizeof(void *));
}

ATF_TEST_CASE_WITHOUT_HEAD(posix_memalign__many_small);
ATF_TEST_CASE_BODY(posix_memalign__many_small)
{
    // Many live aligned small blocks (seed 002: 64-byte posix_memalign).
    for (size_t a : { size_t(16), size_t(64), size_t(256), size_t(4096) }) {
        std::vector<void *> v;
        for (int i = 0; i < 2000; i++) {
            void *p = NULL;
            const size_t n = 1 + (i * 37) % (2 * a);
            ATF_REQUIRE_EQ(posix_memalign(&p, a, n), 0);
            TU_REQUIRE_MSG(is_aligned(p, a), "posix_memalign(" << a << ", "
                                                 << n << ") = " << p);
            testutil::pattern_fill(p, n, testutil::pattern_seed(p, n));
            v.push_back(p);
        }
        for (int i = 0; i < 2000; i++) {
            const size_t n = 1 + (i * 37) % (2 * a);
            TU_REQUIRE_MSG(testutil::pattern_check(v[i], n,
                               testutil::pattern_seed(v[i], n)) == n,
                           "aligned block " << v[i] << " overwritten");
            free(v[i]);
        }
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(aligned_alloc__bad_alignment);
ATF_TEST_CASE_BODY(aligned_alloc__bad_alignment)
{
    // C17 (DR 460), on every platform: an alignment that is not a power
    // of two is refused (memalign is the one that rounds, under glibc's
    // contract).
    const size_t bad[] = { 0, 3, 6, 12, 24, 48, 100, 4097,
                           (size_t(1) << 20) + 8, SIZE_MAX };
    for (size_t a : bad) {
        errno = 0;
        void *p = aligned_alloc(a, 64);
        TU_REQUIRE_MSG(p == NULL, "aligned_alloc(" << a << ", 64) = " << p);
        TU_REQUIRE_MSG(errno == EINVAL, "aligned_alloc(" << a
                                            << ", 64): errno " << errno);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(aligned_alloc__alignments);
ATF_TEST_CASE_BODY(aligned_alloc__alignments)
{
    check_alignments("aligned_alloc", 1);
}

ATF_TEST_CASE_WITHOUT_HEAD(aligned_alloc__enomem);
ATF_TEST_CASE_BODY(aligned_alloc__enomem)
{
    for (size_t a : { size_t(8), size_t(4096), size_t(1) << 30 }) {
        for (size_t n : impossible_sizes()) {
            errno = 0;
            void *p = aligned_alloc(a, n);
            TU_REQUIRE_MSG(p == NULL, "aligned_alloc(" << a << ", " << n
                                                       << ") = " << p);
            TU_REQUIRE_MSG(errno == ENOMEM, "aligned_alloc(" << a << ", "
                                                << n << "): errno " << errno);
        }
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(memalign__bad_alignment);
ATF_TEST_CASE_BODY(memalign__bad_alignment)
{
    // glibc's contract rounds these up (memalign__any_alignment) and
    // refuses only alignments no block can have.
#if ARENALLOC_MEMALIGN_ROUNDS_UP
    const size_t bad[] = { SIZE_MAX, (SIZE_MAX >> 1) + 2 };
#else
    const size_t bad[] = { 0, 3, 6, 12, 24, 48, 100, 4097,
                           (size_t(1) << 20) + 8, SIZE_MAX };
#endif
    for (size_t a : bad) {
        errno = 0;
        void *p = memalign(a, 64);
        TU_REQUIRE_MSG(p == NULL, "memalign(" << a << ", 64) = " << p);
        TU_REQUIRE_MSG(errno == EINVAL, "memalign(" << a << ", 64): errno "
                                                    << errno);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(memalign__alignments);
ATF_TEST_CASE_BODY(memalign__alignments)
{
    check_alignments("memalign", 1);
}

ATF_TEST_CASE_WITHOUT_HEAD(memalign__enomem);
ATF_TEST_CASE_BODY(memalign__enomem)
{
    for (size_t n : impossible_sizes()) {
        errno = 0;
        void *p = memalign(64, n);
        TU_REQUIRE_MSG(p == NULL, "memalign(64, " << n << ") = " << p);
        TU_REQUIRE_MSG(errno == ENOMEM, "memalign(64, " << n << "): errno "
                                                        << errno);
    }
}

// --- valloc, pvalloc ------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(valloc__page_aligned);
ATF_TEST_CASE_BODY(valloc__page_aligned)
{
    const size_t pg = page_size();
    std::vector<void *> v;
    for (size_t n : { size_t(0), size_t(1), size_t(100), pg - 1, pg, pg + 1,
                      3 * pg, 20000 * size_t(1), 3 * MiB }) {
        void *p = valloc(n);
        TU_REQUIRE_MSG(p != NULL, "valloc(" << n << ") = NULL");
        TU_REQUIRE_MSG(is_aligned(p, pg), "valloc(" << n << ") = " << p);
        TU_REQUIRE_MSG(malloc_usable_size(p) >= n,
                       "valloc(" << n << "): usable size "
                                 << malloc_usable_size(p));
        memset(p, 0x3C, n);
        v.push_back(p);
    }
    for (void *p : v)
        free(p);
    for (size_t n : impossible_sizes()) {
        errno = 0;
        void *p = valloc(n);
        TU_REQUIRE_MSG(p == NULL && errno == ENOMEM,
                       "valloc(" << n << ") = " << p << ", errno " << errno);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(pvalloc__rounding);
ATF_TEST_CASE_BODY(pvalloc__rounding)
{
    const size_t pg = page_size();
    for (size_t n : { size_t(0), size_t(1), size_t(100), pg - 1, pg, pg + 1,
                      5 * pg - 3, 20000 * size_t(1), 3 * MiB + 1 }) {
        void *p = pvalloc(n);
        TU_REQUIRE_MSG(p != NULL, "pvalloc(" << n << ") = NULL");
        TU_REQUIRE_MSG(is_aligned(p, pg), "pvalloc(" << n << ") = " << p);
        const size_t want = n == 0 ? pg : round_up(n, pg);
        TU_REQUIRE_MSG(malloc_usable_size(p) >= want,
                       "pvalloc(" << n << "): usable size "
                                  << malloc_usable_size(p) << " < " << want);
        memset(p, 0x3D, want);  // the whole rounded size is writable
        free(p);
    }
    for (size_t n : impossible_sizes()) {
        errno = 0;
        void *p = pvalloc(n);
        TU_REQUIRE_MSG(p == NULL && errno == ENOMEM,
                       "pvalloc(" << n << ") = " << p << ", errno " << errno);
    }
}

// --- free ---------------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(free__null);
ATF_TEST_CASE_BODY(free__null)
{
    void *volatile null = NULL;
    errno = EDOM;
    free(null);
    ATF_REQUIRE_EQ(errno, EDOM);
}


// --- every failure path, one table -------------------------------------------

// Each row is one call that must fail: the value it returns (NULL, or
// posix_memalign's error number), the errno it leaves, and whether a block
// passed in must be left intact.
ATF_TEST_CASE_WITHOUT_HEAD(errno__every_failure_table);
ATF_TEST_CASE_BODY(errno__every_failure_table)
{
    const size_t big = static_cast<size_t>(PTRDIFF_MAX) + 1;
    // Alignments no mapping can have with 1 byte: 2^63 and 2^62.  On 32-bit
    // targets every alignment can be had (a block at 2^31 in a 4 GiB address
    // space), so there the rows ask for PTRDIFF_MAX + 1 bytes as well.
    const size_t top_align = size_t(1) << (sizeof(size_t) * 8 - 1);
    const size_t huge_align = top_align / 2;
    const size_t align_n = sizeof(size_t) == 8 ? 1 : big;
    // A failing posix_memalign sets errno too under glibc's contract.
    const int kPmErrno = ARENALLOC_POSIX_MEMALIGN_SETS_ERRNO ? ENOMEM : EDOM;
    void *keep = malloc(100);
    ATF_REQUIRE(keep != NULL);
    testutil::pattern_fill(keep, 100, 5);
    struct row {
        const char *call;
        std::function<long()> run;  // a pointer as a long, or an error number
        long expect_value;          // 0: NULL
        int expect_errno;           // errno after the call (EDOM: unchanged)
    };
    auto ptr = [](void *p) {
        long v = static_cast<long>(reinterpret_cast<intptr_t>(p));
        if (p != NULL)
            free(p);
        return v;
    };
    auto pm = [](size_t a, size_t n) {
        void *p = reinterpret_cast<void *>(0x1234);
        const int rv = posix_memalign(&p, a, n);
        if (rv == 0)
            free(p);
        else if (p != reinterpret_cast<void *>(0x1234))
            return -1L;  // *memptr changed on failure
        return static_cast<long>(rv);
    };
    using testutil::opaque;
    const std::vector<row> rows = {
        { "malloc(SIZE_MAX)", [&] { return ptr(malloc(opaque(SIZE_MAX))); }, 0, ENOMEM },
        { "malloc(PTRDIFF_MAX+1)", [&] { return ptr(malloc(opaque(big))); }, 0, ENOMEM },
        { "calloc(SIZE_MAX/2+1, 2)", [&] { return ptr(calloc(opaque(SIZE_MAX / 2 + 1), 2)); }, 0, ENOMEM },
        { "calloc(root, root)", [&] { return ptr(calloc(opaque(kRootOverflow), kRootOverflow)); }, 0, ENOMEM },
        { "calloc(1, PTRDIFF_MAX+1)", [&] { return ptr(calloc(1, opaque(big))); }, 0, ENOMEM },
        { "realloc(p, SIZE_MAX)", [&] { return ptr(realloc(keep, opaque(SIZE_MAX))); }, 0, ENOMEM },
        { "realloc(p, PTRDIFF_MAX+1)", [&] { return ptr(realloc(keep, opaque(big))); }, 0, ENOMEM },
        { "realloc(NULL, SIZE_MAX)", [&] { return ptr(realloc(NULL, opaque(SIZE_MAX))); }, 0, ENOMEM },
        { "reallocarray(p, SIZE_MAX/2+1, 2)", [&] { return ptr(reallocarray(keep, opaque(SIZE_MAX / 2 + 1), 2)); }, 0, ENOMEM },
        { "reallocarray(NULL, root, root)", [&] { return ptr(reallocarray(NULL, opaque(kRootOverflow), kRootOverflow)); }, 0, ENOMEM },
        { "aligned_alloc(64, SIZE_MAX)", [&] { return ptr(aligned_alloc(64, opaque(SIZE_MAX))); }, 0, ENOMEM },
        { "aligned_alloc(2^21, PTRDIFF_MAX+1)", [&] { return ptr(aligned_alloc(size_t(1) << 21, opaque(big))); }, 0, ENOMEM },
        { "aligned_alloc(2^62, 1)", [&] { return ptr(aligned_alloc(opaque(huge_align), align_n)); }, 0, ENOMEM },
        { "aligned_alloc(2^63, 1)", [&] { return ptr(aligned_alloc(opaque(top_align), align_n)); }, 0, ENOMEM },
        { "memalign(64, SIZE_MAX)", [&] { return ptr(memalign(64, opaque(SIZE_MAX))); }, 0, ENOMEM },
        { "memalign(2^62, 1)", [&] { return ptr(memalign(opaque(huge_align), align_n)); }, 0, ENOMEM },
        { "valloc(SIZE_MAX)", [&] { return ptr(valloc(opaque(SIZE_MAX))); }, 0, ENOMEM },
        { "valloc(PTRDIFF_MAX+1)", [&] { return ptr(valloc(opaque(big))); }, 0, ENOMEM },
        { "pvalloc(SIZE_MAX)", [&] { return ptr(pvalloc(opaque(SIZE_MAX))); }, 0, ENOMEM },
        { "pvalloc(PTRDIFF_MAX+1)", [&] { return ptr(pvalloc(opaque(big))); }, 0, ENOMEM },
        { "posix_memalign(8, SIZE_MAX)", [&] { return pm(8, opaque(SIZE_MAX)); }, ENOMEM, kPmErrno },
        { "posix_memalign(4096, PTRDIFF_MAX+1)", [&] { return pm(4096, opaque(big)); }, ENOMEM, kPmErrno },
        { "posix_memalign(2^62, 1)", [&] { return pm(opaque(huge_align), align_n); }, ENOMEM, kPmErrno },
        { "posix_memalign(0, 8)", [&] { return pm(opaque(size_t(0)), 8); }, EINVAL, EDOM },
        { "posix_memalign(sizeof(void *) / 2, 8)", [&] { return pm(opaque(sizeof(void *) / 2), 8); }, EINVAL, EDOM },
        { "posix_memalign(24, 8)", [&] { return pm(opaque(size_t(24)), 8); }, EINVAL, EDOM },
        { "posix_memalign(24, SIZE_MAX)", [&] { return pm(opaque(size_t(24)), SIZE_MAX); }, EINVAL, EDOM },
        { "aligned_alloc(0, 8)", [&] { return ptr(aligned_alloc(opaque(size_t(0)), 8)); }, 0, EINVAL },
        { "aligned_alloc(3, 8)", [&] { return ptr(aligned_alloc(opaque(size_t(3)), 8)); }, 0, EINVAL },
        { "aligned_alloc(24, 8)", [&] { return ptr(aligned_alloc(opaque(size_t(24)), 8)); }, 0, EINVAL },
        { "aligned_alloc(24, SIZE_MAX)", [&] { return ptr(aligned_alloc(opaque(size_t(24)), SIZE_MAX)); }, 0, EINVAL },
        { "aligned_alloc(SIZE_MAX, 8)", [&] { return ptr(aligned_alloc(opaque(SIZE_MAX), 8)); }, 0, EINVAL },
#if !ARENALLOC_MEMALIGN_ROUNDS_UP
        { "memalign(0, 8)", [&] { return ptr(memalign(opaque(size_t(0)), 8)); }, 0, EINVAL },
        { "memalign(3, 8)", [&] { return ptr(memalign(opaque(size_t(3)), 8)); }, 0, EINVAL },
        { "memalign(24, 8)", [&] { return ptr(memalign(opaque(size_t(24)), 8)); }, 0, EINVAL },
#endif
        { "memalign(SIZE_MAX, 8)", [&] { return ptr(memalign(opaque(SIZE_MAX), 8)); }, 0, EINVAL },
    };
    for (const row &r : rows) {
        errno = EDOM;
        const long v = r.run();
        TU_REQUIRE_MSG(v == r.expect_value, r.call << " returned " << v << ", expected "
                                                   << r.expect_value);
        TU_REQUIRE_MSG(errno == r.expect_errno, r.call << ": errno " << errno << ", expected "
                                                       << r.expect_errno);
        TU_REQUIRE_MSG(testutil::pattern_check(keep, 100, 5) == 100,
                       r.call << " changed the block passed in");
    }
    free(keep);
}

// --- free_sized, free_aligned_sized (C23) -------------------------------------

// Every size of every kind of block, freed with the size it was requested
// with (and every other size of its class), must be accepted silently and
// the memory reused.
ATF_TEST_CASE_WITHOUT_HEAD(free_sized__matching_sizes);
ATF_TEST_CASE_BODY(free_sized__matching_sizes)
{
    const testutil::child_result r = testutil::run_in_child([] {
        std::vector<size_t> sizes = { 0, 1, 7, 8, 9, 100, 1000, 4096, 14336, 14337,
                                      20000, 65536, 100000, 1 * MiB, 3 * MiB, 5 * MiB + 1 };
        for (size_t n = 1; n < 20000; n = n * 5 / 4 + 1)
            sizes.push_back(n);
        for (size_t n : sizes) {
            free_sized(malloc(n), n);
            free_sized(calloc(1, n), n);
            void *p = malloc(n / 2 + 1);
            free_sized(realloc(p, n), n);
            // Any size of the same class is accepted.
            void *q = malloc(n);
            free_sized(q, malloc_usable_size(q));
            for (size_t a : { size_t(1), size_t(8), size_t(16), size_t(64), size_t(4096),
                              size_t(1) << 16, size_t(1) << 21 }) {
                const size_t m = (n + a - 1) / a * a;  // C11's multiple, though not required
                free_aligned_sized(aligned_alloc(a, m), a, m);
                free_aligned_sized(aligned_alloc(a, n), a, n);
                void *pm = NULL;
                if (a >= sizeof(void *) && posix_memalign(&pm, a, n) == 0)
                    free_aligned_sized(pm, a, n);
            }
        }
        free_sized(NULL, 100);
        free_aligned_sized(NULL, 64, 100);
        // The memory came back: the same block again.
        void *a = malloc(200);
        free_sized(a, 200);
        void *b = malloc(200);
        if (a != b)
            _exit(3);
        free(b);
    });
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    TU_REQUIRE_MSG(r.err.empty(), "stderr: [" << r.err << "]");
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, errno__every_failure_table);
    ATF_ADD_TEST_CASE(tcs, free_sized__matching_sizes);
    ATF_ADD_TEST_CASE(tcs, malloc__is_arenalloc);
    ATF_ADD_TEST_CASE(tcs, malloc__zero_size);
    ATF_ADD_TEST_CASE(tcs, malloc__small_sizes);
    ATF_ADD_TEST_CASE(tcs, malloc__natural_alignment);
    ATF_ADD_TEST_CASE(tcs, malloc__sizes_to_64k);
    ATF_ADD_TEST_CASE(tcs, malloc__large_and_huge_sizes);
    ATF_ADD_TEST_CASE(tcs, malloc__too_big);
    ATF_ADD_TEST_CASE(tcs, malloc__no_overlap);
    ATF_ADD_TEST_CASE(tcs, malloc_usable_size__null);
    ATF_ADD_TEST_CASE(tcs, malloc_usable_size__small_classes);
    ATF_ADD_TEST_CASE(tcs, malloc_usable_size__large_classes);
    ATF_ADD_TEST_CASE(tcs, malloc_usable_size__huge_rounding);
    ATF_ADD_TEST_CASE(tcs, calloc__zero_small);
    ATF_ADD_TEST_CASE(tcs, calloc__zero_large);
    ATF_ADD_TEST_CASE(tcs, calloc__zero_huge);
    ATF_ADD_TEST_CASE(tcs, calloc__zero_count);
    ATF_ADD_TEST_CASE(tcs, calloc__overflow);
    ATF_ADD_TEST_CASE(tcs, realloc__null);
    ATF_ADD_TEST_CASE(tcs, realloc__zero_size);
    ATF_ADD_TEST_CASE(tcs, realloc__zero_size_loop);
    ATF_ADD_TEST_CASE(tcs, reallocf__frees_on_failure);
    ATF_ADD_TEST_CASE(tcs, realloc__ladder_up_and_down);
    ATF_ADD_TEST_CASE(tcs, realloc__all_pairs);
    ATF_ADD_TEST_CASE(tcs, realloc__same_class_in_place);
    ATF_ADD_TEST_CASE(tcs, realloc__failure_keeps_block);
    ATF_ADD_TEST_CASE(tcs, reallocarray__basic);
    ATF_ADD_TEST_CASE(tcs, reallocarray__overflow);
    ATF_ADD_TEST_CASE(tcs, posix_memalign__bad_alignment);
    ATF_ADD_TEST_CASE(tcs, posix_memalign__enomem);
    ATF_ADD_TEST_CASE(tcs, memalign__any_alignment);
    ATF_ADD_TEST_CASE(tcs, aligned_alloc__size_not_multiple);
    ATF_ADD_TEST_CASE(tcs, posix_memalign__alignments);
    ATF_ADD_TEST_CASE(tcs, posix_memalign__many_small);
    ATF_ADD_TEST_CASE(tcs, aligned_alloc__bad_alignment);
    ATF_ADD_TEST_CASE(tcs, aligned_alloc__alignments);
    ATF_ADD_TEST_CASE(tcs, aligned_alloc__enomem);
    ATF_ADD_TEST_CASE(tcs, memalign__bad_alignment);
    ATF_ADD_TEST_CASE(tcs, memalign__alignments);
    ATF_ADD_TEST_CASE(tcs, memalign__enomem);
    ATF_ADD_TEST_CASE(tcs, valloc__page_aligned);
    ATF_ADD_TEST_CASE(tcs, pvalloc__rounding);
    ATF_ADD_TEST_CASE(tcs, free__null);
}
