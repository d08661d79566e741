// jemalloc's non-standard interface from malloc_np.h: mallocx, rallocx,
// xallocx, sallocx, dallocx, sdallocx and nallocx with every MALLOCX_*
// flag (arenalloc(3), NON-STANDARD API).  Where a block comes from
// (which arena, past the thread cache or not) is read from the mallctl
// statistics, which count what each arena hands out.
//
// Linked against libarenalloc, so this process's malloc is arenalloc.  The
// reports of bad pointers and wrong sizes are badfree_test's.

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "malloc_np.h"
#include "test_util.h"

using testutil::first_not;
using testutil::is_aligned;
using testutil::opaque;

namespace {

const size_t KiB = 1024;
const size_t MiB = 1024 * KiB;

// Request sizes over every kind of block: small, large (cached by the
// thread caches and not), huge.
std::vector<size_t>
request_sizes(void)
{
    std::vector<size_t> v = { 1, 7, 8, 9, 15, 16, 17, 100, 128, 129, 1000, 4095, 4096,
                              4097, 14336, 14337, 20 * KiB, 64 * KiB, 64 * KiB + 1,
                              100 * KiB, 1 * MiB, 1792 * KiB, 1792 * KiB + 1, 3 * MiB };
    for (size_t n = 1; n < 200 * KiB; n = n * 3 / 2 + 1)
        v.push_back(n);
    return v;
}

// Re-reads the statistics (jemalloc's "epoch" protocol).
void
refresh_stats(void)
{
    uint64_t epoch = 1;
    size_t len = sizeof(epoch);
    ATF_REQUIRE_EQ(mallctl("epoch", &epoch, &len, &epoch, sizeof(epoch)), 0);
}

unsigned
read_unsigned(const char *name)
{
    unsigned v = 0;
    size_t len = sizeof(v);
    TU_REQUIRE_MSG(mallctl(name, &v, &len, NULL, 0) == 0, name);
    return v;
}

unsigned
narenas(void)
{
    return read_unsigned("arenas.narenas");
}

// The calling thread's arena.
unsigned
thread_arena(void)
{
    return read_unsigned("thread.arena");
}

// Bytes of live small or large blocks arena i has handed out (thread
// caches' stock included), freshly read.
size_t
arena_allocated(unsigned i, bool small)
{
    refresh_stats();
    const std::string name = "stats.arenas." + std::to_string(i) +
                             (small ? ".small.allocated" : ".large.allocated");
    size_t v = 0;
    size_t len = sizeof(v);
    TU_REQUIRE_MSG(mallctl(name.c_str(), &v, &len, NULL, 0) == 0, name);
    return v;
}

}  // namespace

// The flag values are jemalloc 5.3's, bit for bit: programs compiled
// against jemalloc's header pass these numbers.
ATF_TEST_CASE_WITHOUT_HEAD(flags__jemalloc_encoding);
ATF_TEST_CASE_BODY(flags__jemalloc_encoding)
{
    ATF_REQUIRE_EQ(MALLOCX_LG_ALIGN(0), 0);
    ATF_REQUIRE_EQ(MALLOCX_LG_ALIGN(12), 12);
    ATF_REQUIRE_EQ(MALLOCX_ALIGN(1), 0);
    ATF_REQUIRE_EQ(MALLOCX_ALIGN(64), 6);
    ATF_REQUIRE_EQ(MALLOCX_ALIGN(opaque(size_t(4096))), 12);
    ATF_REQUIRE_EQ(MALLOCX_ALIGN(size_t(1) << 31), 31);
    if (sizeof(size_t) == 8)  // an alignment a 32-bit size_t cannot hold
        ATF_REQUIRE_EQ(MALLOCX_ALIGN(uint64_t(1) << 40), 40);
    ATF_REQUIRE_EQ(MALLOCX_ZERO, 0x40);
    ATF_REQUIRE_EQ(MALLOCX_TCACHE_NONE, 0x100);
    ATF_REQUIRE_EQ(MALLOCX_TCACHE(0), 0x200);
    ATF_REQUIRE_EQ(MALLOCX_TCACHE(5), 0x700);
    ATF_REQUIRE_EQ(MALLOCX_ARENA(0), 0x100000);
    ATF_REQUIRE_EQ(MALLOCX_ARENA(3), 0x400000);
    ATF_REQUIRE_EQ(MALLOCX_ARENA(2046), 0x7ff00000);
}

// Every size with every alignment from none to 4 MiB, with and without
// the thread cache and a named arena: the block is aligned, as big as
// nallocx said (sallocx), writable to its end, and freed by dallocx.
ATF_TEST_CASE_WITHOUT_HEAD(mallocx__sizes_alignments_nallocx);
ATF_TEST_CASE_BODY(mallocx__sizes_alignments_nallocx)
{
    const int routes[] = { 0, MALLOCX_TCACHE_NONE, MALLOCX_ARENA(narenas() - 1),
                           MALLOCX_ARENA(0) | MALLOCX_TCACHE_NONE };
    for (size_t n : request_sizes()) {
        for (int lg = 0; lg <= 22; lg++) {
            for (int route : routes) {
                const int flags = MALLOCX_LG_ALIGN(lg) | route;
                const size_t want = nallocx(n, flags);
                TU_REQUIRE_MSG(want >= n, "nallocx(" << n << ", " << flags << ") = " << want);
                TU_REQUIRE_MSG(nallocx(n, MALLOCX_ALIGN(size_t(1) << lg) | route) == want,
                               "MALLOCX_ALIGN and MALLOCX_LG_ALIGN differ");
                void *p = mallocx(n, flags);
                TU_REQUIRE_MSG(p != NULL, "mallocx(" << n << ", " << flags << ")");
                TU_REQUIRE_MSG(is_aligned(p, size_t(1) << lg),
                               "mallocx(" << n << ", lg " << lg << ") = " << p);
                TU_REQUIRE_MSG(sallocx(p, 0) == want, "mallocx(" << n << ", " << flags
                               << "): sallocx " << sallocx(p, 0) << ", nallocx " << want);
                ATF_REQUIRE_EQ(malloc_usable_size(p), want);
                memset(p, 0xa5, want);
                dallocx(p, route);
            }
        }
    }
}

// Size 0 is served as 1 byte (jemalloc leaves it undefined).
ATF_TEST_CASE_WITHOUT_HEAD(mallocx__size_zero_is_one);
ATF_TEST_CASE_BODY(mallocx__size_zero_is_one)
{
    for (int flags : { 0, MALLOCX_ZERO, MALLOCX_LG_ALIGN(12), MALLOCX_TCACHE_NONE }) {
        ATF_REQUIRE_EQ(nallocx(0, flags), nallocx(1, flags));
        void *p = mallocx(opaque(size_t(0)), flags);
        ATF_REQUIRE(p != NULL);
        ATF_REQUIRE_EQ(sallocx(p, 0), nallocx(1, flags));
        void *q = rallocx(p, opaque(size_t(0)), flags);
        ATF_REQUIRE(q != NULL);
        ATF_REQUIRE_EQ(sallocx(q, 0), nallocx(1, flags));
        sdallocx(q, 0, flags);
    }
}

// Requests past what can ever be mapped: nallocx 0, mallocx and rallocx
// NULL with errno ENOMEM, the old block untouched.
ATF_TEST_CASE_WITHOUT_HEAD(mallocx__too_big);
ATF_TEST_CASE_BODY(mallocx__too_big)
{
    // PTRDIFF_MAX - 4094 rounds up past PTRDIFF_MAX in pages.
    const size_t sizes[] = { SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 2 - 4094 };
    for (size_t n : sizes) {
        for (int flags : { 0, MALLOCX_ZERO, MALLOCX_TCACHE_NONE, MALLOCX_ARENA(0) }) {
            TU_REQUIRE_MSG(nallocx(opaque(n), flags) == 0, n);
            errno = 0;
            ATF_REQUIRE(mallocx(opaque(n), flags) == NULL);
            ATF_REQUIRE_EQ(errno, ENOMEM);
        }
    }
    ATF_REQUIRE_EQ(nallocx(1, MALLOCX_LG_ALIGN(63)), 0u);
    errno = 0;
    ATF_REQUIRE(mallocx(1, MALLOCX_LG_ALIGN(opaque(63))) == NULL);
    ATF_REQUIRE_EQ(errno, ENOMEM);

    unsigned char *p = static_cast<unsigned char *>(mallocx(1000, 0));
    ATF_REQUIRE(p != NULL);
    testutil::pattern_fill(p, 1000, 7);
    errno = 0;
    ATF_REQUIRE(rallocx(p, opaque(SIZE_MAX - 100), 0) == NULL);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    ATF_REQUIRE(rallocx(p, 100, MALLOCX_LG_ALIGN(opaque(63))) == NULL);
    ATF_REQUIRE_EQ(testutil::pattern_check(p, 1000, 7), 1000u);
    ATF_REQUIRE_EQ(sallocx(p, 0), nallocx(1000, 0));
    dallocx(p, 0);
}

// MALLOCX_ZERO: a block made of memory just filled and freed reads as
// zero to its usable size, whichever path serves it.
ATF_TEST_CASE_WITHOUT_HEAD(mallocx__zero);
ATF_TEST_CASE_BODY(mallocx__zero)
{
    const int routes[] = { 0, MALLOCX_TCACHE_NONE, MALLOCX_ARENA(narenas() - 1),
                           MALLOCX_LG_ALIGN(6), MALLOCX_LG_ALIGN(14) | MALLOCX_TCACHE_NONE };
    for (size_t n : request_sizes()) {
        for (int route : routes) {
            // Dirty memory of this size first, freed the way the next
            // block will be made, so that the next block reuses it.
            void *dirty = mallocx(n, route);
            ATF_REQUIRE(dirty != NULL);
            memset(dirty, 0xa5, sallocx(dirty, 0));
            dallocx(dirty, route);
            unsigned char *p = static_cast<unsigned char *>(mallocx(n, route | MALLOCX_ZERO));
            ATF_REQUIRE(p != NULL);
            const size_t usize = sallocx(p, 0);
            TU_REQUIRE_MSG(first_not(p, usize, 0) == usize,
                           "mallocx(" << n << ", ZERO | " << route << ") byte "
                                      << first_not(p, usize, 0) << " not zero");
            dallocx(p, route);
        }
    }
}

// rallocx keeps the contents up to the smaller size, gives the alignment
// asked for, and with MALLOCX_ZERO zeroes what lies past the old usable
// size; NULL as the block is mallocx.
ATF_TEST_CASE_WITHOUT_HEAD(rallocx__contents_alignment_zero);
ATF_TEST_CASE_BODY(rallocx__contents_alignment_zero)
{
    const std::vector<size_t> sizes = request_sizes();
    for (size_t i = 0; i + 1 < sizes.size(); i++) {
        const size_t from = sizes[i];
        const size_t to = sizes[i + 1];
        for (int flags : { 0, MALLOCX_ZERO, MALLOCX_LG_ALIGN(12) | MALLOCX_ZERO,
                           MALLOCX_LG_ALIGN(16), MALLOCX_TCACHE_NONE | MALLOCX_ZERO,
                           MALLOCX_ARENA(narenas() - 1) }) {
            unsigned char *p = static_cast<unsigned char *>(mallocx(from, 0));
            ATF_REQUIRE(p != NULL);
            const size_t old_usize = sallocx(p, 0);
            testutil::pattern_fill(p, old_usize, from);
            unsigned char *q = static_cast<unsigned char *>(rallocx(p, to, flags));
            TU_REQUIRE_MSG(q != NULL, "rallocx(" << from << " -> " << to << ", " << flags << ")");
            const size_t usize = sallocx(q, 0);
            ATF_REQUIRE(usize >= to);
            const size_t lg = static_cast<size_t>(flags & 0x3f);
            TU_REQUIRE_MSG(is_aligned(q, size_t(1) << lg), "rallocx to lg " << lg << ": " << q);
            const size_t kept = std::min(old_usize, to);
            TU_REQUIRE_MSG(testutil::pattern_check(q, kept, from) == kept,
                           "rallocx(" << from << " -> " << to << ", " << flags << ") lost contents");
            if ((flags & MALLOCX_ZERO) && usize > old_usize)
                TU_REQUIRE_MSG(first_not(q + old_usize, usize - old_usize, 0) == usize - old_usize,
                               "rallocx(" << from << " -> " << to << ", ZERO): grown part not zero");
            // And back down.
            unsigned char *r = static_cast<unsigned char *>(rallocx(q, from, flags));
            ATF_REQUIRE(r != NULL);
            const size_t back = std::min(kept, from);
            ATF_REQUIRE_EQ(testutil::pattern_check(r, back, from), back);
            sdallocx(r, from, flags);
        }
    }
    void *p = rallocx(NULL, 100, MALLOCX_ZERO);
    ATF_REQUIRE(p != NULL);
    ATF_REQUIRE_EQ(first_not(p, 100, 0), 100u);
    dallocx(p, 0);
}

// xallocx never moves a block: it returns the usable size it leaves,
// which is less than size when the block could not grow that far.
ATF_TEST_CASE_WITHOUT_HEAD(xallocx__in_place_contract);
ATF_TEST_CASE_BODY(xallocx__in_place_contract)
{
    for (size_t n : request_sizes()) {
        for (size_t target : { size_t(1), n / 2 + 1, n, n + 1, 2 * n, 5 * MiB }) {
            for (size_t extra : { size_t(0), size_t(4096), 2 * n }) {
                unsigned char *p = static_cast<unsigned char *>(mallocx(n, 0));
                ATF_REQUIRE(p != NULL);
                const size_t old_usize = sallocx(p, 0);
                testutil::pattern_fill(p, old_usize, n);
                const size_t got = xallocx(p, target, extra, 0);
                TU_REQUIRE_MSG(got == sallocx(p, 0), "xallocx(" << n << " -> " << target
                               << " + " << extra << ") = " << got << ", sallocx " << sallocx(p, 0));
                if (got < target)
                    TU_REQUIRE_MSG(got == old_usize, "xallocx failed to grow but changed "
                                   << old_usize << " to " << got);
                // Never below the request nor above it plus extra, unless
                // the block already was (a size class holds it as it is).
                TU_REQUIRE_MSG(got >= std::min(target, old_usize), got);
                const size_t kept = std::min(old_usize, got);
                ATF_REQUIRE_EQ(testutil::pattern_check(p, kept, n), kept);
                memset(p, 0x5a, got);  // the whole of the returned size is the block's
                dallocx(p, 0);
            }
        }
    }
    // Within one small size class: the size class is the answer.
    void *s = mallocx(100, 0);
    ATF_REQUIRE_EQ(xallocx(s, 110, 0, 0), nallocx(100, 0));
    ATF_REQUIRE_EQ(xallocx(s, 20000, 0, 0), nallocx(100, 0));  // cannot grow in place
    dallocx(s, 0);
}

// A large block in an arena nobody else uses, with free pages after it,
// really grows and shrinks in place, and MALLOCX_ZERO zeroes the grown
// part even where the pages held other data before.  Sizes in units of
// the first large class (16 KiB with 4 KiB pages, 256 KiB with 64 KiB
// pages), all large classes: 7 units is the largest with 64 KiB pages.
ATF_TEST_CASE_WITHOUT_HEAD(xallocx__grows_and_shrinks_large);
ATF_TEST_CASE_BODY(xallocx__grows_and_shrinks_large)
{
    const size_t unit = testutil::first_large_class();
    const int own = MALLOCX_ARENA(narenas() - 1) | MALLOCX_TCACHE_NONE;
    // Dirty pages at the start of the arena's chunk, then freed.
    void *dirty = mallocx(7 * unit, own);
    ATF_REQUIRE(dirty != NULL);
    memset(dirty, 0xa5, 7 * unit);
    dallocx(dirty, own);

    // (opaque: the compiler takes mallocx's size for the block's bound,
    // which xallocx moves.)
    unsigned char *p = opaque(static_cast<unsigned char *>(mallocx(2 * unit, own)));
    ATF_REQUIRE(p != NULL);
    ATF_REQUIRE_EQ(sallocx(p, 0), 2 * unit);
    testutil::pattern_fill(p, 2 * unit, 3);
    const size_t grown = xallocx(p, 4 * unit, 2 * unit, MALLOCX_ZERO | own);
    ATF_REQUIRE_EQ(grown, 6 * unit);
    ATF_REQUIRE_EQ(sallocx(p, 0), 6 * unit);
    ATF_REQUIRE_EQ(testutil::pattern_check(p, 2 * unit, 3), 2 * unit);
    ATF_REQUIRE_EQ(first_not(p + 2 * unit, 4 * unit, 0), 4 * unit);
    // Shrinking frees the tail pages.
    const size_t shrunk = xallocx(p, 5 * unit / 2, 0, own);
    ATF_REQUIRE_EQ(shrunk, nallocx(5 * unit / 2, 0));
    ATF_REQUIRE_EQ(testutil::pattern_check(p, 2 * unit, 3), 2 * unit);
    // size + extra bigger than the old block, size within it: not shrunk.
    ATF_REQUIRE_EQ(xallocx(p, unit, 10 * MiB, own), shrunk);
    // A block placed just after p stops its growth.
    void *next = mallocx(unit, own);
    ATF_REQUIRE(next != NULL);
    if (static_cast<unsigned char *>(next) == p + shrunk)
        ATF_REQUIRE_EQ(xallocx(p, 6 * unit, 0, own), shrunk);
    dallocx(next, own);
    dallocx(p, own);
}

// sallocx is the usable size, as malloc_usable_size says it.
ATF_TEST_CASE_WITHOUT_HEAD(sallocx__usable_size);
ATF_TEST_CASE_BODY(sallocx__usable_size)
{
    for (size_t n : request_sizes()) {
        void *p = malloc(n);
        ATF_REQUIRE(p != NULL);
        ATF_REQUIRE_EQ(sallocx(p, 0), malloc_usable_size(p));
        ATF_REQUIRE(sallocx(p, MALLOCX_LG_ALIGN(12)) == malloc_usable_size(p));
        free(p);
    }
}

// sdallocx takes any size from the one requested to the usable size, as
// jemalloc does, silently; NULL is ignored by dallocx and sdallocx.
ATF_TEST_CASE_WITHOUT_HEAD(sdallocx__accepted_sizes);
ATF_TEST_CASE_BODY(sdallocx__accepted_sizes)
{
    const testutil::child_result r = testutil::run_in_child([] {
        for (size_t n : request_sizes()) {
            for (int flags : { 0, MALLOCX_LG_ALIGN(6), MALLOCX_LG_ALIGN(13) | MALLOCX_TCACHE_NONE,
                               MALLOCX_ARENA(0) | MALLOCX_ZERO }) {
                const size_t usize = nallocx(n, flags);
                for (size_t claimed : { n, n + (usize - n) / 2, usize }) {
                    void *p = mallocx(n, flags);
                    if (p == NULL)
                        _exit(2);
                    sdallocx(p, claimed, flags);
                }
            }
        }
        dallocx(NULL, 0);
        sdallocx(NULL, 100, 0);
        // The memory came back: the same block again.
        void *a = mallocx(200, 0);
        sdallocx(a, 200, 0);
        void *b = mallocx(200, 0);
        if (a != b)
            _exit(3);
        dallocx(b, 0);
    });
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    TU_REQUIRE_MSG(r.err.empty(), "stderr: [" << r.err << "]");
}

// MALLOCX_TCACHE_NONE: the block comes from the thread's arena at once and
// goes back to it at once, where the thread cache would have kept it.
ATF_TEST_CASE_WITHOUT_HEAD(tcache_none__past_the_thread_cache);
ATF_TEST_CASE_BODY(tcache_none__past_the_thread_cache)
{
    const unsigned arena = thread_arena();
    for (size_t n : { size_t(100), size_t(3000), size_t(20 * KiB), size_t(200 * KiB),
                      4 * testutil::largest_cached_class() }) {
        const bool small = n <= testutil::largest_small_class();
        for (int none : { MALLOCX_TCACHE_NONE, MALLOCX_TCACHE(0), MALLOCX_TCACHE(7) }) {
            // Through the cache: freed into it, still counted as out.
            void *warm = mallocx(n, 0);
            dallocx(warm, 0);
            void *cached = mallocx(n, 0);
            const size_t before_free = arena_allocated(arena, small);
            dallocx(cached, 0);
            if (n <= testutil::largest_cached_class())
                ATF_REQUIRE_EQ(arena_allocated(arena, small), before_free);

            const size_t before = arena_allocated(arena, small);
            void *p = mallocx(n, none);
            ATF_REQUIRE(p != NULL);
            TU_REQUIRE_MSG(arena_allocated(arena, small) == before + sallocx(p, 0),
                           "mallocx(" << n << ", " << none << ") not from the arena");
            dallocx(p, none);
            TU_REQUIRE_MSG(arena_allocated(arena, small) == before,
                           "dallocx(" << n << ", " << none << ") not to the arena");
            p = mallocx(n, none);
            const size_t out = arena_allocated(arena, small);
            sdallocx(p, n, none);
            ATF_REQUIRE_EQ(arena_allocated(arena, small), out - nallocx(n, 0));
        }
    }
}

// MALLOCX_ARENA(a): the block comes from arena a, for every arena; an
// index out of range fails like a lack of memory.
ATF_TEST_CASE_WITHOUT_HEAD(arena__routing);
ATF_TEST_CASE_BODY(arena__routing)
{
    const unsigned count = narenas();
    for (unsigned a = 0; a < count; a++) {
        // Its statistics exist once it does: its first block creates it.
        dallocx(mallocx(1, MALLOCX_ARENA(a)), MALLOCX_TCACHE_NONE);
        for (size_t n : { size_t(100), size_t(10000), size_t(20 * KiB), size_t(300 * KiB) }) {
            const bool small = n <= testutil::largest_small_class();
            const size_t before = arena_allocated(a, small);
            void *p = mallocx(n, MALLOCX_ARENA(a));
            ATF_REQUIRE(p != NULL);
            TU_REQUIRE_MSG(arena_allocated(a, small) == before + sallocx(p, 0),
                           "mallocx(" << n << ", MALLOCX_ARENA(" << a << ")) not from it");
            // rallocx that moves puts the new block in the arena asked for.
            void *q = rallocx(p, 2 * n, MALLOCX_ARENA(a) | MALLOCX_TCACHE_NONE);
            ATF_REQUIRE(q != NULL);
            if (q != p)
                TU_REQUIRE_MSG(arena_allocated(a, 2 * n <= testutil::largest_small_class()) >= sallocx(q, 0),
                               "rallocx to arena " << a);
            dallocx(q, MALLOCX_TCACHE_NONE);
            ATF_REQUIRE_EQ(arena_allocated(a, small), before);
        }
    }
    // A huge block names its arena too (for the statistics) and works.
    void *h = mallocx(5 * MiB, MALLOCX_ARENA(count - 1) | MALLOCX_ZERO);
    ATF_REQUIRE(h != NULL);
    ATF_REQUIRE_EQ(first_not(h, 5 * MiB, 0), 5 * MiB);
    dallocx(h, 0);
    for (unsigned bad : { count, count + 1, 4000u }) {
        errno = 0;
        ATF_REQUIRE(mallocx(1, MALLOCX_ARENA(opaque(bad))) == NULL);
        ATF_REQUIRE_EQ(errno, ENOMEM);
        ATF_REQUIRE(nallocx(1, MALLOCX_ARENA(opaque(bad))) == nallocx(1, 0));
    }
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, flags__jemalloc_encoding);
    ATF_ADD_TEST_CASE(tcs, mallocx__sizes_alignments_nallocx);
    ATF_ADD_TEST_CASE(tcs, mallocx__size_zero_is_one);
    ATF_ADD_TEST_CASE(tcs, mallocx__too_big);
    ATF_ADD_TEST_CASE(tcs, mallocx__zero);
    ATF_ADD_TEST_CASE(tcs, rallocx__contents_alignment_zero);
    ATF_ADD_TEST_CASE(tcs, xallocx__in_place_contract);
    ATF_ADD_TEST_CASE(tcs, xallocx__grows_and_shrinks_large);
    ATF_ADD_TEST_CASE(tcs, sallocx__usable_size);
    ATF_ADD_TEST_CASE(tcs, sdallocx__accepted_sizes);
    ATF_ADD_TEST_CASE(tcs, tcache_none__past_the_thread_cache);
    ATF_ADD_TEST_CASE(tcs, arena__routing);
}
