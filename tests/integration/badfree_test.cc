// Bad input to free(), realloc() and malloc_usable_size(): pointers the
// allocator never returned, interior pointers and double frees must be
// detected, reported with one line on stderr and abort() (arenalloc(3)).
//
// Each case runs the bad call in a forked child and checks that the child died
// by SIGABRT after writing exactly
//     arenalloc: <function>(): invalid pointer 0x<address>: <finding>
// Every case runs kRepeats times, each time on a block allocated afresh (a
// different address and neighbourhood), so that an outcome that depends on
// the layout shows.
//
// The continue__* cases run this program again with MALLOC_OPTIONS=a (and
// BADFREE_CHILD naming the case): the child does the bad call from a
// constructor, must print the same line and go on, and then checks that the
// blocks it allocates afterwards are distinct and overlap nothing live.

#include <sys/mman.h>

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <string>
#include <utility>
#include <set>
#include <vector>

#include <atf-c++.hpp>

#include "arenalloc.h"
#include "malloc_np.h"
#include "test_util.h"

using testutil::opaque;

namespace {

const size_t KiB = 1024;
const size_t MiB = 1024 * KiB;
const int kRepeats = 5;

const char kNotOurs[] = "not allocated by arenalloc";
const char kInterior[] = "not the start of a block";
const char kDoubleFree[] = "block already free (double free)";
const char kFreePages[] = "block already free (or never allocated)";
const char kInCache[] = "block already free (in a thread cache)";

char static_buffer[256];

std::string
expected_line(const std::string &fn, const void *p, const std::string &finding)
{
    return "arenalloc: " + fn + "(): invalid pointer " + testutil::hex(p) +
           ": " + finding;
}

// Checks that the child died by SIGABRT and that its stderr holds exactly one
// report line, the one expected.
void
require_report(const testutil::child_result &r, const std::string &fn,
               const void *p, const std::string &finding)
{
    TU_REQUIRE_MSG(!r.timed_out, "child hung");
    TU_REQUIRE_MSG(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
                   "child did not abort: " << r.describe());
    const std::vector<std::string> lines = testutil::report_lines(r.err);
    TU_REQUIRE_MSG(lines.size() == 1, "expected one arenalloc line on stderr, got "
                                          << lines.size() << ": [" << r.err << "]");
    const std::string want = expected_line(fn, p, finding);
    TU_REQUIRE_MSG(lines[0] == want,
                   "report [" << lines[0] << "], expected [" << want << "]");
}

// Runs body in a child kRepeats times; each time make() first gives (in
// this process) the pointer the bad call uses.  Blocks made for it stay
// allocated until the end, so that each round sees another address.
void
require_deaths(const std::string &fn, const std::string &finding,
               const std::function<void *()> &make,
               const std::function<void(void *)> &body)
{
    for (int i = 0; i < kRepeats; i++) {
        void *p = make();
        const testutil::child_result r =
            testutil::run_in_child([&body, p] { body(p); });
        require_report(r, fn, p, finding);
    }
}

// free(p) in a child must be reported and abort, kRepeats times.
void
require_free_aborts(void *p, const std::string &finding)
{
    require_deaths("free", finding, [p] { return p; },
                   [](void *q) { free(opaque(q)); });
}

// A block of size n, and a live neighbour of the same size that keeps its
// run (or chunk) in use; both stay allocated (leaked) in this process.
void *
fresh_block(size_t n)
{
    void *p = malloc(n);
    void *neighbour = malloc(n);
    if (p == NULL || neighbour == NULL)
        ATF_FAIL("malloc failed");
    testutil::escape(neighbour);
    return p;
}

// Runs fn on a new thread and waits for it.
void
on_other_thread(const std::function<void()> &fn)
{
    pthread_t t;
    std::function<void()> f = fn;
    auto tramp = [](void *arg) -> void * {
        (*static_cast<std::function<void()> *>(arg))();
        return NULL;
    };
    if (pthread_create(&t, NULL, tramp, &f) != 0)
        abort();
    pthread_join(t, NULL);
}

// A thread that frees p into its own cache (it allocated before, so it has
// one) and then stays alive, blocked, until released: the block sits in a
// live thread's cache.
struct parked_thread {
    pthread_t t;
    void *p;
    int ready[2];
    int release[2];

    explicit parked_thread(void *block) : p(block)
    {
        if (pipe(ready) != 0 || pipe(release) != 0)
            abort();
        if (pthread_create(&t, NULL, run, this) != 0)
            abort();
        char c;
        if (read(ready[0], &c, 1) != 1)
            abort();
    }
    static void *
    run(void *arg)
    {
        parked_thread *self = static_cast<parked_thread *>(arg);
        void *own = malloc(32);  // this thread now has a cache
        free(own);
        free(self->p);
        char c = 'r';
        if (write(self->ready[1], &c, 1) != 1)
            abort();
        (void)!read(self->release[0], &c, 1);
        return NULL;
    }
};

// Runs fn on a new thread that uses another arena than the calling thread
// and exits before this returns: what it freed of this thread's blocks
// went back to this thread's arena in a batch, without the arena's lock.
void
on_thread_of_other_arena(const std::function<void()> &fn)
{
    unsigned mine = 0, n = 0;
    size_t len = sizeof(mine);
    if (mallctl("thread.arena", &mine, &len, NULL, 0) != 0 ||
        mallctl("arenas.narenas", &n, &len, NULL, 0) != 0)
        abort();
    if (n < 2)
        ATF_SKIP("needs two arenas");
    on_other_thread([&] {
        unsigned other = (mine + 1) % n;
        if (mallctl("thread.arena", NULL, NULL, &other, sizeof(other)) != 0)
            abort();
        fn();
    });
}

}  // namespace

// =========================================================================
// The child side of the continue__* cases (MALLOC_OPTIONS=a): a bad call,
// then allocations that must not overlap anything live.
// =========================================================================

namespace {

// Allocates n blocks of size sz, checks that they are distinct, that none
// overlaps another or a block of live[], and frees them.  Prints
// "overlap=N" (0 when all is well).
void
check_no_overlap(size_t sz, int n, const std::vector<std::pair<void *, size_t>> &live)
{
    std::vector<std::pair<uintptr_t, uintptr_t>> spans;
    std::vector<void *> mine;
    for (const auto &l : live)
        spans.push_back({reinterpret_cast<uintptr_t>(l.first),
                         reinterpret_cast<uintptr_t>(l.first) + l.second});
    for (int i = 0; i < n; i++) {
        void *q = malloc(sz);
        if (q == NULL) {
            printf("error=malloc failed\n");
            return;
        }
        mine.push_back(q);
        spans.push_back({reinterpret_cast<uintptr_t>(q),
                         reinterpret_cast<uintptr_t>(q) + malloc_usable_size(q)});
    }
    std::sort(spans.begin(), spans.end());
    int overlaps = 0;
    for (size_t i = 1; i < spans.size(); i++)
        if (spans[i].first < spans[i - 1].second)
            overlaps++;
    for (void *q : mine)
        free(q);
    printf("overlap=%d\n", overlaps);
}

void
expect(const char *fn, const void *p, const char *finding)
{
    printf("expect=%s\n", expected_line(fn, p, finding).c_str());
    fflush(stdout);
}

// One bad call of each kind; the block size follows the kind.
void
continue_child(const std::string &which)
{
    size_t sz = which.find("cached_large") != std::string::npos ? testutil::cached_large(20 * KiB)
                : which.find("large") != std::string::npos   ? 2 * testutil::largest_cached_class()
                : which.find("huge") != std::string::npos  ? 4 * MiB
                                                           : 64;
    char *p = static_cast<char *>(malloc(sz));
    char *neighbour = static_cast<char *>(malloc(sz));
    if (p == NULL || neighbour == NULL) {
        printf("error=malloc failed\n");
        return;
    }
    std::vector<std::pair<void *, size_t>> live = {{neighbour, sz}};
    if (which == "small_double" || which == "large_double" || which == "huge_double") {
        // expect() before the first free: stdio's own allocations must
        // not take the freed pages before the second.
        expect("free", p, which == "small_double" ? kDoubleFree
                          : which == "large_double" ? kFreePages : kNotOurs);
        free(p);
        free(opaque(p));
    } else if (which == "small_double_other_thread") {
        expect("free", p, kDoubleFree);
        free(p);
        on_other_thread([p] { free(opaque(p)); });
    } else if (which == "small_interior" || which == "large_interior" ||
               which == "huge_interior") {
        char *bad = p + (which == "small_interior" ? 16 : 4096);
        expect("free", bad, kInterior);
        free(opaque(bad));
        live.push_back({p, sz});
    } else if (which == "stack") {
        char local[64];
        testutil::escape(local);
        expect("free", local, kNotOurs);
        free(opaque<void *>(local));
        live.push_back({p, sz});
    } else if (which == "realloc0_cached_small" || which == "realloc0_cached_large") {
        // With V, realloc(p, 0) frees p: of a block already freed into
        // the cache, it must report, not free it again under the cache.
        expect("realloc", p, kInCache);
        free(p);
        void *q = realloc(opaque(p), 0);
        printf("realloc_null=%d\n", q == NULL);
    } else if (which == "realloc_freed") {
        expect("realloc", p, kInCache);
        free(p);
        void *q = realloc(opaque(p), 1000);
        printf("realloc_null=%d\n", q == NULL);
    } else if (which == "usable_size_freed_large") {
        expect("malloc_usable_size", p, kFreePages);
        free(p);
        size_t usable = malloc_usable_size(opaque(p));
        printf("usable=%zu\n", usable);
    } else {
        printf("error=unknown case\n");
        return;
    }
    fflush(stdout);
    check_no_overlap(sz, sz > MiB ? 8 : 500, live);
    check_no_overlap(64, 500, live);
}

__attribute__((constructor)) void
badfree_child_main(void)
{
    const char *which = getenv("BADFREE_CHILD");
    if (which == NULL)
        return;
    continue_child(which);
    printf("done=1\n");
    fflush(stdout);
    _exit(0);
}

// The value of "key=" in the child's stdout, or "" if absent.
std::string
value_of(const std::string &out, const std::string &key)
{
    for (const std::string &line : testutil::lines_of(out))
        if (testutil::starts_with(line, key + "="))
            return line.substr(key.size() + 1);
    return "";
}

testutil::child_result
run_child(const std::string &which, const std::string &options)
{
    return testutil::run_program({"/proc/self/exe"},
                                 {"BADFREE_CHILD=" + which, "MALLOC_OPTIONS=" + options});
}

// With a, the child reports the one line, goes on and exits 0, and nothing
// it allocates afterwards overlaps; without it (and with a then A) the same
// child aborts after the same line.
void
require_continues(const std::string &which, const std::string &more_options = "")
{
    for (int i = 0; i < kRepeats; i++) {
        const testutil::child_result r = run_child(which, "a" + more_options);
        TU_REQUIRE_MSG(r.exited_ok(), which << ": " << r.describe() << " stdout: [" << r.out << "]");
        TU_REQUIRE_MSG(value_of(r.out, "error").empty(), which << ": " << r.out);
        const std::string want = value_of(r.out, "expect");
        TU_REQUIRE_MSG(!want.empty(), which << ": no expect= line: [" << r.out << "]");
        const std::vector<std::string> lines = testutil::report_lines(r.err);
        TU_REQUIRE_MSG(lines.size() == 1 && lines[0] == want,
                       which << ": stderr [" << r.err << "], expected [" << want << "]");
        TU_REQUIRE_MSG(value_of(r.out, "done") == "1", which << ": " << r.out);
        for (const std::string &line : testutil::lines_of(r.out))
            if (testutil::starts_with(line, "overlap="))
                TU_REQUIRE_MSG(line == "overlap=0", which << ": " << r.out);
    }
    for (const char *opts : {"", "aA"}) {
        const testutil::child_result r = run_child(which, opts + more_options);
        TU_REQUIRE_MSG(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
                       which << " with options [" << opts << "] did not abort: " << r.describe());
        const std::vector<std::string> lines = testutil::report_lines(r.err);
        TU_REQUIRE_MSG(lines.size() == 1 && lines[0] == value_of(r.out, "expect"),
                       which << ": stderr [" << r.err << "]");
    }
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(free__null);
ATF_TEST_CASE_BODY(free__null)
{
    const testutil::child_result r = testutil::run_in_child([] {
        for (int i = 0; i < 1000; i++)
            free(opaque<void *>(NULL));
        void *p = malloc(100);
        if (p == NULL)
            _exit(2);
        free(p);
    });
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    TU_REQUIRE_MSG(r.err.empty(), "free(NULL) wrote [" << r.err << "]");
}

ATF_TEST_CASE_WITHOUT_HEAD(free__stack_pointer);
ATF_TEST_CASE_BODY(free__stack_pointer)
{
    // The child's stack has the same layout as ours after fork().
    char local[64];
    testutil::escape(local);
    require_free_aborts(local, kNotOurs);
    require_free_aborts(local + 24, kNotOurs);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__static_pointer);
ATF_TEST_CASE_BODY(free__static_pointer)
{
    require_free_aborts(static_buffer + 16, kNotOurs);
    require_free_aborts(static_buffer, kNotOurs);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__wild_low_address);
ATF_TEST_CASE_BODY(free__wild_low_address)
{
    require_free_aborts(reinterpret_cast<void *>(0x1000), kNotOurs);
    require_free_aborts(reinterpret_cast<void *>(0x10), kNotOurs);
    require_free_aborts(reinterpret_cast<void *>(UINTPTR_MAX - 15), kNotOurs);
    // Half the user address space: 2^47, or 2^31 on 32-bit targets.
    const unsigned half = sizeof(void *) == 8 ? 47 : 31;
    require_free_aborts(reinterpret_cast<void *>(uintptr_t{1} << half), kNotOurs);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__unmapped_address);
ATF_TEST_CASE_BODY(free__unmapped_address)
{
    // Make sure the heap exists, then pick an address nobody maps.
    void *keep = malloc(100);
    ATF_REQUIRE(keep != NULL);
    void *m = mmap(NULL, 8 * MiB, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ATF_REQUIRE(m != MAP_FAILED);
    ATF_REQUIRE(munmap(m, 8 * MiB) == 0);
    // Chunk-aligned (2 MiB) address inside the unmapped range, so that a
    // lookup by masking finds a "chunk" header position that is not mapped.
    uintptr_t a = (reinterpret_cast<uintptr_t>(m) + 2 * MiB - 1) &
                  ~(uintptr_t)(2 * MiB - 1);
    require_free_aborts(reinterpret_cast<void *>(a + 4096), kNotOurs);
    require_free_aborts(reinterpret_cast<void *>(a), kNotOurs);
    free(keep);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__chunk_unmapped_since_last_free);
ATF_TEST_CASE_BODY(free__chunk_unmapped_since_last_free)
{
    // free() remembers the chunk the thread last freed into, to skip the
    // registry next time.  Once that chunk is unmapped, an address in it
    // must be refused as not ours, not looked up in a header that is gone.
    // Nothing may be freed between the free of p and the bad call, or the
    // memo would name another chunk: the child is forked at once.
    unsigned n = 0;
    size_t len = sizeof(n);
    ATF_REQUIRE(mallctl("arenas.narenas", &n, &len, NULL, 0) == 0);
    if (n < 2)
        ATF_SKIP("needs an arena of its own");
    unsigned own = n - 1;  // no other thread of this process uses it
    ATF_REQUIRE(mallctl("thread.arena", NULL, NULL, &own, sizeof(own)) == 0);
    // Nothing of the old arena stays in the cache to be handed out below.
    ATF_REQUIRE(mallctl("thread.tcache.flush", NULL, NULL, NULL, 0) == 0);
    // A cached large class: its run, unlike a small class's current run,
    // leaves the chunk empty once flushed.
    void *p = malloc(testutil::cached_large(32 * KiB));
    ATF_REQUIRE(p != NULL);
    free(opaque(p));  // the thread's memo now names p's chunk
    ATF_REQUIRE(mallctl("thread.tcache.flush", NULL, NULL, NULL, 0) == 0);
    arenalloc_purge();
    errno = 0;
    if (!(msync(p, testutil::system_page_size(), MS_ASYNC) == -1 && errno == ENOMEM))
        ATF_FAIL("the chunk of p is still mapped after arenalloc_purge()");
    const testutil::child_result r = testutil::run_in_child([p] { free(opaque(p)); });
    require_report(r, "free", p, kNotOurs);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__high_address_after_registry_change);
ATF_TEST_CASE_BODY(free__high_address_after_registry_change)
{
    // An address past the registry's 48 bits is refused whatever free()
    // remembers of the chunk the thread last freed into, also once the
    // registry has changed since (the huge block's free takes its mapping
    // out).  Each child starts from the same state and flips another run
    // of high bits of a block's address: 1, 3, 7, ... 2^14 - 1 times 2^50.
    if (sizeof(void *) < 8)
        ATF_SKIP("a 32-bit target: the registry covers every address");
    void *p = malloc(64);
    ATF_REQUIRE(p != NULL);
    const unsigned shift = sizeof(void *) * 8 - 14;  // 50 (written so that 32-bit builds compile)
    for (uintptr_t k = 1; k < (uintptr_t{1} << 14); k = 2 * k + 1) {
        void *q = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(p) ^ (k << shift));
        const testutil::child_result r = testutil::run_in_child([p, q] {
            free(opaque(p));  // the memo now names p's chunk
            void *big = malloc(8 * MiB);
            if (big == NULL)
                _exit(3);
            free(opaque(big));
            free(opaque(q));
        });
        require_report(r, "free", q, kNotOurs);
    }
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__foreign_mapping);
ATF_TEST_CASE_BODY(free__foreign_mapping)
{
    // A readable mapping the allocator does not own, at a chunk-aligned
    // address: whatever is there must not be taken for a chunk header.
    void *keep = malloc(100);
    ATF_REQUIRE(keep != NULL);
    unsigned char *m = static_cast<unsigned char *>(
        mmap(NULL, 8 * MiB, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ATF_REQUIRE(m != MAP_FAILED);
    memset(m, 0xFF, 8 * MiB);
    uintptr_t a = (reinterpret_cast<uintptr_t>(m) + 2 * MiB - 1) &
                  ~(uintptr_t)(2 * MiB - 1);
    require_free_aborts(reinterpret_cast<void *>(a), kNotOurs);
    require_free_aborts(reinterpret_cast<void *>(a + 64 * 1024), kNotOurs);
    munmap(m, 8 * MiB);
    free(keep);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__small_interior);
ATF_TEST_CASE_BODY(free__small_interior)
{
    for (size_t off : {size_t{8}, size_t{1}, size_t{63}})
        require_deaths("free", kInterior,
                       [off] { return static_cast<char *>(fresh_block(64)) + off; },
                       [](void *q) { free(opaque(q)); });
}

ATF_TEST_CASE_WITHOUT_HEAD(free__large_interior);
ATF_TEST_CASE_BODY(free__large_interior)
{
    for (size_t off : {size_t{4096}, size_t{16}})
        require_deaths("free", kInterior,
                       [off] { return static_cast<char *>(fresh_block(64 * KiB)) + off; },
                       [](void *q) { free(opaque(q)); });
}

ATF_TEST_CASE_WITHOUT_HEAD(free__huge_interior);
ATF_TEST_CASE_BODY(free__huge_interior)
{
    for (size_t off : {testutil::page_size(), 2 * MiB, size_t{8}})
        require_deaths("free", kInterior,
                       [off] { return static_cast<char *>(malloc(4 * MiB)) + off; },
                       [](void *q) { free(opaque(q)); });
}

ATF_TEST_CASE_WITHOUT_HEAD(free__small_double);
ATF_TEST_CASE_BODY(free__small_double)
{
    for (size_t sz : {size_t{8}, size_t{64}, size_t{3000}, size_t{14 * KiB}})
        require_deaths("free", kDoubleFree, [sz] { return fresh_block(sz); },
                       [](void *p) {
                           free(opaque(p));
                           free(opaque(p));
                       });
}

// Freed, another block freed, then the first again: the thread cache holds
// both, and the second free of p must still be caught (never handed out
// twice).  Also once p has gone back to its arena.
ATF_TEST_CASE_WITHOUT_HEAD(free__small_double_not_on_top);
ATF_TEST_CASE_BODY(free__small_double_not_on_top)
{
    require_deaths("free", kDoubleFree, [] { return fresh_block(64); },
                   [](void *p) {
                       void *q = malloc(64);
                       free(opaque(p));
                       free(opaque(q));
                       free(opaque(p));
                   });
    require_deaths("free", kDoubleFree, [] { return fresh_block(64); },
                   [](void *p) {
                       free(opaque(p));
                       malloc_trim(0);  // p goes back to its arena
                       free(opaque(p));
                   });
}

// A block freed by the arena rather than a thread cache (realloc moved it)
// and then freed again must be caught at the second free, not cached and
// handed out twice.
ATF_TEST_CASE_WITHOUT_HEAD(free__small_double_after_realloc_moved);
ATF_TEST_CASE_BODY(free__small_double_after_realloc_moved)
{
    for (size_t sz : {size_t{16}, size_t{100}, size_t{3000}})
        require_deaths("free", kDoubleFree, [sz] { return fresh_block(sz); },
                       [](void *p) {
                           void *q = realloc(opaque(p), 100000);
                           if (q == NULL)
                               _exit(2);
                           free(opaque(p));
                       });
}

// The first free put the block in one thread's cache, the second comes from
// another thread: one without a cache of its own, one with (the block is
// not in its cache), and the reverse (the first free on a thread that is
// still alive, the second on the main thread).
ATF_TEST_CASE_WITHOUT_HEAD(free__small_double_across_threads);
ATF_TEST_CASE_BODY(free__small_double_across_threads)
{
    require_deaths("free", kDoubleFree, [] { return fresh_block(64); },
                   [](void *p) {
                       free(opaque(p));
                       on_other_thread([p] { free(opaque(p)); });
                   });
    require_deaths("free", kDoubleFree, [] { return fresh_block(64); },
                   [](void *p) {
                       free(opaque(p));
                       on_other_thread([p] {
                           void *own = malloc(64);
                           free(own);
                           free(opaque(p));
                       });
                   });
    require_deaths("free", kDoubleFree, [] { return fresh_block(200); },
                   [](void *p) {
                       parked_thread t(p);
                       free(opaque(p));
                   });
}

// The first free came from a thread of another arena, which has exited:
// its cache pushed the block back to the block's own arena in a batch,
// where no bitmap says it is free yet.  The second free, and realloc() or
// malloc_usable_size() of the block, must still be caught.
ATF_TEST_CASE_WITHOUT_HEAD(free__small_double_after_remote_push);
ATF_TEST_CASE_BODY(free__small_double_after_remote_push)
{
    require_deaths("free", kDoubleFree, [] { return fresh_block(64); },
                   [](void *p) {
                       on_thread_of_other_arena([p] { free(opaque(p)); });
                       free(opaque(p));
                   });
    require_deaths("realloc", kDoubleFree, [] { return fresh_block(200); },
                   [](void *p) {
                       on_thread_of_other_arena([p] { free(opaque(p)); });
                       testutil::escape(realloc(opaque(p), 300));
                   });
    require_deaths("malloc_usable_size", kDoubleFree, [] { return fresh_block(200); },
                   [](void *p) {
                       on_thread_of_other_arena([p] { free(opaque(p)); });
                       testutil::escape(reinterpret_cast<void *>(malloc_usable_size(opaque(p))));
                   });
}

// realloc() moved the block, so it went straight back to its run, with no
// free mark; a thread of another arena then frees it: its free() has
// nothing to catch it by, and the block reaches its arena in a batch.  The
// owner's next refill of the class must report it rather than hand it out
// while the run's bitmap also has it free (twice, then).
ATF_TEST_CASE_WITHOUT_HEAD(free__moved_block_freed_by_other_arena);
ATF_TEST_CASE_BODY(free__moved_block_freed_by_other_arena)
{
    require_deaths("free", kDoubleFree, [] { return fresh_block(200); },
                   [](void *p) {
                       void *moved = realloc(opaque(p), 1000);
                       on_thread_of_other_arena([p] { free(opaque(p)); });
                       // Enough requests of p's class to empty this
                       // thread's cache of it and make it refill.
                       std::vector<void *> held;
                       for (int i = 0; i < 1000; i++)
                           held.push_back(malloc(200));
                       // Not caught by now: was a block handed out twice?
                       std::set<void *> distinct(held.begin(), held.end());
                       if (distinct.size() != held.size())
                           _exit(3);
                       for (void *h : held)
                           free(h);
                       free(moved);
                   });
}

// realloc() and malloc_usable_size() of a small block that free() put in
// a thread cache (this thread's or another's): reported, not served.
ATF_TEST_CASE_WITHOUT_HEAD(realloc__freed_small_block);
ATF_TEST_CASE_BODY(realloc__freed_small_block)
{
    require_deaths("realloc", kInCache, [] { return fresh_block(200); },
                   [](void *p) {
                       free(opaque(p));
                       testutil::escape(realloc(opaque(p), 300));
                   });
    require_deaths("malloc_usable_size", kInCache, [] { return fresh_block(200); },
                   [](void *p) {
                       free(opaque(p));
                       testutil::escape(reinterpret_cast<void *>(malloc_usable_size(opaque(p))));
                   });
    require_deaths("realloc", kInCache, [] { return fresh_block(200); },
                   [](void *p) {
                       parked_thread t(p);
                       testutil::escape(realloc(opaque(p), 300));
                   });
    require_deaths("malloc_usable_size", kInCache, [] { return fresh_block(200); },
                   [](void *p) {
                       parked_thread t(p);
                       testutil::escape(reinterpret_cast<void *>(malloc_usable_size(opaque(p))));
                   });
}

// realloc() of a small block that an earlier realloc() moved to another
// class: the old block went straight back to its run, with no thread-cache
// mark on it, and only the run's bitmap says it is free.  Both a size in
// its old class (which would return it as it is) and another class are
// reported.
ATF_TEST_CASE_WITHOUT_HEAD(realloc__small_block_moved_away);
ATF_TEST_CASE_BODY(realloc__small_block_moved_away)
{
    for (size_t again : {size_t{210}, size_t{300}}) {
        require_deaths("realloc", kDoubleFree, [] { return fresh_block(200); },
                       [again](void *p) {
                           void *q = realloc(opaque(p), 1000);
                           if (q == NULL || q == p)
                               _exit(3);
                           testutil::escape(q);
                           testutil::escape(realloc(opaque(p), again));
                       });
    }
}

// The same for large and huge blocks (no cache: freed is freed).
ATF_TEST_CASE_WITHOUT_HEAD(realloc__freed_large_and_huge_block);
ATF_TEST_CASE_BODY(realloc__freed_large_and_huge_block)
{
    require_deaths("realloc", kFreePages, [] { return fresh_block(2 * testutil::largest_cached_class()); },
                   [](void *p) {
                       free(opaque(p));
                       testutil::escape(realloc(opaque(p), 200 * KiB));
                   });
    require_deaths("malloc_usable_size", kFreePages,
                   [] { return fresh_block(2 * testutil::largest_cached_class()); },
                   [](void *p) {
                       free(opaque(p));
                       testutil::escape(reinterpret_cast<void *>(malloc_usable_size(opaque(p))));
                   });
    require_deaths("realloc", kNotOurs, [] { return malloc(4 * MiB); },
                   [](void *p) {
                       free(opaque(p));
                       testutil::escape(realloc(opaque(p), 8 * MiB));
                   });
    require_deaths("malloc_usable_size", kNotOurs, [] { return malloc(4 * MiB); },
                   [](void *p) {
                       free(opaque(p));
                       testutil::escape(reinterpret_cast<void *>(malloc_usable_size(opaque(p))));
                   });
}

ATF_TEST_CASE_WITHOUT_HEAD(free__large_double);
ATF_TEST_CASE_BODY(free__large_double)
{
    // 16 to 64 KiB are thread-cache classes: the first free leaves the
    // block in the cache with the free mark, as a small one.
    for (size_t sz : {testutil::cached_large(16 * KiB), testutil::cached_large(20 * KiB),
                      testutil::cached_large(32 * KiB), testutil::cached_large(40 * KiB),
                      testutil::cached_large(64 * KiB)})
        require_deaths("free", kDoubleFree, [sz] { return fresh_block(sz); },
                       [](void *p) {
                           free(opaque(p));
                           free(opaque(p));
                       });
    for (size_t sz : {testutil::largest_cached_class() + 1, 2 * testutil::largest_cached_class(),
                      size_t{1 * MiB}})
        require_deaths("free", kFreePages, [sz] { return fresh_block(sz); },
                       [](void *p) {
                           free(opaque(p));
                           free(opaque(p));
                       });
    // Once the cache has given it back to its run, the page map tells.
    require_deaths("free", kFreePages, [] { return fresh_block(testutil::cached_large(20 * KiB)); },
                   [](void *p) {
                       free(opaque(p));
                       malloc_trim(0);
                       free(opaque(p));
                   });
}

// A cached large block freed again from another thread, or passed to
// realloc() or malloc_usable_size() while it waits in the cache.
ATF_TEST_CASE_WITHOUT_HEAD(free__large_cached_double_elsewhere);
ATF_TEST_CASE_BODY(free__large_cached_double_elsewhere)
{
    require_deaths("free", kDoubleFree, [] { return fresh_block(testutil::cached_large(24 * KiB)); },
                   [](void *p) {
                       free(opaque(p));
                       on_other_thread([p] { free(opaque(p)); });
                   });
    require_deaths("free", kDoubleFree, [] { return fresh_block(testutil::cached_large(24 * KiB)); },
                   [](void *p) {
                       parked_thread t(p);
                       free(opaque(p));
                   });
    require_deaths("realloc", kInCache, [] { return fresh_block(testutil::cached_large(16 * KiB)); },
                   [](void *p) {
                       free(opaque(p));
                       testutil::escape(realloc(opaque(p), 40 * KiB));
                   });
    require_deaths("malloc_usable_size", kInCache,
                   [] { return fresh_block(testutil::cached_large(28 * KiB)); },
                   [](void *p) {
                       free(opaque(p));
                       testutil::escape(reinterpret_cast<void *>(malloc_usable_size(opaque(p))));
                   });
}

ATF_TEST_CASE_WITHOUT_HEAD(free__huge_double);
ATF_TEST_CASE_BODY(free__huge_double)
{
    require_deaths("free", kNotOurs, [] { return malloc(4 * MiB); },
                   [](void *p) {
                       free(opaque(p));
                       free(opaque(p));
                   });
}

ATF_TEST_CASE_WITHOUT_HEAD(realloc__foreign_pointers);
ATF_TEST_CASE_BODY(realloc__foreign_pointers)
{
    char local[64];
    testutil::escape(local);
    for (void *bad : {static_cast<void *>(local), static_cast<void *>(static_buffer + 8),
                      reinterpret_cast<void *>(0x1000)})
        require_deaths("realloc", kNotOurs, [bad] { return bad; },
                       [](void *q) { testutil::escape(realloc(opaque(q), 128)); });
}

ATF_TEST_CASE_WITHOUT_HEAD(realloc__interior);
ATF_TEST_CASE_BODY(realloc__interior)
{
    require_deaths("realloc", kInterior,
                   [] { return static_cast<char *>(fresh_block(64)) + 8; },
                   [](void *q) { testutil::escape(realloc(opaque(q), 1000)); });
    require_deaths("realloc", kInterior,
                   [] { return static_cast<char *>(fresh_block(64 * KiB)) + 4096; },
                   [](void *q) { testutil::escape(realloc(opaque(q), 1000)); });
    require_deaths("realloc", kInterior,
                   [] { return static_cast<char *>(malloc(4 * MiB)) + 4096; },
                   [](void *q) { testutil::escape(realloc(opaque(q), 1000)); });
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc_usable_size__foreign_pointers);
ATF_TEST_CASE_BODY(malloc_usable_size__foreign_pointers)
{
    char local[64];
    testutil::escape(local);
    for (void *bad : {static_cast<void *>(local), static_cast<void *>(static_buffer + 8),
                      reinterpret_cast<void *>(0x1000)})
        require_deaths("malloc_usable_size", kNotOurs, [bad] { return bad; },
                       [](void *q) {
                           volatile size_t n = malloc_usable_size(opaque(q));
                           (void)n;
                       });
}


// free_sized() and free_aligned_sized() with a size of another class, a bad
// alignment, or a pointer that free() would reject.
ATF_TEST_CASE_WITHOUT_HEAD(free_sized__mismatch);
ATF_TEST_CASE_BODY(free_sized__mismatch)
{
    const struct {
        size_t allocated, claimed, usable, usable_aligned_64;
    } cases[] = {
        { 100, 1000, 112, 128 }, { 100, 8, 112, 128 }, { 64 * KiB, 100, 64 * KiB, 64 * KiB },
        { 64 * KiB, 128 * KiB, 64 * KiB, 64 * KiB }, { 4 * MiB, 8 * MiB, 4 * MiB, 4 * MiB },
        { 4 * MiB, 100, 4 * MiB, 4 * MiB },
    };
    for (const auto &c : cases) {
        const size_t claimed = c.claimed;
        const std::string finding = "size " + std::to_string(claimed) +
                                    " does not match the block (" +
                                    std::to_string(c.usable) + " usable bytes)";
        const std::string finding_aligned =
            "size " + std::to_string(claimed) + " does not match the block (" +
            std::to_string(c.usable_aligned_64) + " usable bytes)";
        const size_t n = c.allocated;
        require_deaths("free_sized", finding, [n] { return malloc(n); },
                       [claimed](void *p) { free_sized(opaque(p), claimed); });
        require_deaths("free_aligned_sized", finding_aligned,
                       [n] { return aligned_alloc(64, n); },
                       [claimed](void *p) { free_aligned_sized(opaque(p), 64, claimed); });
    }
    require_deaths("free_aligned_sized", "alignment 24 is not a power of two",
                   [] { return malloc(100); },
                   [](void *p) { free_aligned_sized(opaque(p), 24, 100); });
    // A large block (64 KiB, or four pages with 64 KiB pages: its size is
    // what a 1 MiB-aligned request of it gets) that happens to be 1 MiB
    // aligned would be accepted: skip those.
    require_deaths("free_aligned_sized", "block is not aligned to 1048576",
                   [] {
                       void *p;
                       while (((reinterpret_cast<uintptr_t>(
                                   p = fresh_block(testutil::largest_cached_class()))) &
                               (MiB - 1)) == 0)
                           continue;
                       return p;
                   },
                   [](void *p) {
                       free_aligned_sized(opaque(p), MiB, testutil::largest_cached_class());
                   });
    // The size check finds the block in the cache first.
    require_deaths("free_sized", kInCache, [] { return fresh_block(100); },
                   [](void *p) {
                       free_sized(opaque(p), 100);
                       free_sized(opaque(p), 100);
                   });
    require_deaths("free_sized", kNotOurs, [] { return static_cast<void *>(static_buffer); },
                   [](void *p) { free_sized(opaque(p), 100); });
    require_deaths("free_aligned_sized", kInterior,
                   [] { return static_cast<char *>(fresh_block(64 * KiB)) + 4096; },
                   [](void *p) { free_aligned_sized(opaque(p), 4096, 64 * KiB); });
}

// sdallocx() with a size outside the range from the one requested to the
// usable size (jemalloc's rule), for the block the flags describe; and
// the mallocx family's bad pointers, each reported under its own name.
ATF_TEST_CASE_WITHOUT_HEAD(mallocx_family__mismatch_and_bad_pointers);
ATF_TEST_CASE_BODY(mallocx_family__mismatch_and_bad_pointers)
{
    const struct {
        size_t allocated, claimed, usable;
        int flags;
    } cases[] = {
        { 100, 1000, 112, 0 }, { 100, 8, 112, 0 }, { 100, 113, 112, MALLOCX_TCACHE_NONE },
        { 100, 8, 128, MALLOCX_ALIGN(64) }, { 64 * KiB, 100, 64 * KiB, MALLOCX_ARENA(0) },
        { 4 * MiB, 8 * MiB, 4 * MiB, MALLOCX_ZERO },
    };
    for (const auto &c : cases) {
        const size_t claimed = c.claimed;
        const int flags = c.flags;
        const std::string finding = "size " + std::to_string(claimed) +
                                    " does not match the block (" +
                                    std::to_string(c.usable) + " usable bytes)";
        const size_t n = c.allocated;
        require_deaths("sdallocx", finding, [n, flags] { return mallocx(n, flags); },
                       [claimed, flags](void *p) { sdallocx(opaque(p), claimed, flags); });
    }
    // The same block freed twice: caught in the cache, or in the arena.
    for (int flags : { 0, MALLOCX_TCACHE_NONE }) {
        require_deaths("dallocx", flags == 0 ? kInCache : kDoubleFree,
                       [] { return fresh_block(100); },
                       [flags](void *p) {
                           dallocx(opaque(p), flags);
                           dallocx(opaque(p), flags);
                       });
    }
    require_deaths("sdallocx", kNotOurs, [] { return static_cast<void *>(static_buffer); },
                   [](void *p) { sdallocx(opaque(p), 100, 0); });
    require_deaths("dallocx", kInterior,
                   [] { return static_cast<char *>(fresh_block(64 * KiB)) + 4096; },
                   [](void *p) { dallocx(opaque(p), MALLOCX_TCACHE_NONE); });
    require_deaths("sallocx", kNotOurs, [] { return static_cast<void *>(static_buffer); },
                   [](void *p) {
                       volatile size_t n = sallocx(opaque(p), 0);
                       (void)n;
                   });
    require_deaths("rallocx", kInterior,
                   [] { return static_cast<char *>(fresh_block(100)) + 16; },
                   [](void *p) { testutil::escape(rallocx(opaque(p), 200, 0)); });
    require_deaths("xallocx", kNotOurs, [] { return static_cast<void *>(static_buffer); },
                   [](void *p) {
                       volatile size_t n = xallocx(opaque(p), 200, 0, 0);
                       (void)n;
                   });
}

#define CONTINUE_CASE(name)                 \
    ATF_TEST_CASE_WITHOUT_HEAD(continue__##name); \
    ATF_TEST_CASE_BODY(continue__##name) { require_continues(#name); }

CONTINUE_CASE(small_double)
CONTINUE_CASE(small_double_other_thread)
CONTINUE_CASE(large_double)
CONTINUE_CASE(huge_double)
CONTINUE_CASE(small_interior)
CONTINUE_CASE(large_interior)
CONTINUE_CASE(huge_interior)
CONTINUE_CASE(stack)
CONTINUE_CASE(realloc_freed)

// (With V.)
ATF_TEST_CASE_WITHOUT_HEAD(continue__realloc0_cached);
ATF_TEST_CASE_BODY(continue__realloc0_cached)
{
    require_continues("realloc0_cached_small", "V");
    require_continues("realloc0_cached_large", "V");
}
CONTINUE_CASE(usable_size_freed_large)

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, free__null);
    ATF_ADD_TEST_CASE(tcs, free__stack_pointer);
    ATF_ADD_TEST_CASE(tcs, free__static_pointer);
    ATF_ADD_TEST_CASE(tcs, free__wild_low_address);
    ATF_ADD_TEST_CASE(tcs, free__unmapped_address);
    ATF_ADD_TEST_CASE(tcs, free__chunk_unmapped_since_last_free);
    ATF_ADD_TEST_CASE(tcs, free__high_address_after_registry_change);
    ATF_ADD_TEST_CASE(tcs, free__foreign_mapping);
    ATF_ADD_TEST_CASE(tcs, free__small_interior);
    ATF_ADD_TEST_CASE(tcs, free__large_interior);
    ATF_ADD_TEST_CASE(tcs, free__huge_interior);
    ATF_ADD_TEST_CASE(tcs, free__small_double);
    ATF_ADD_TEST_CASE(tcs, free__small_double_not_on_top);
    ATF_ADD_TEST_CASE(tcs, free__small_double_after_realloc_moved);
    ATF_ADD_TEST_CASE(tcs, free__small_double_across_threads);
    ATF_ADD_TEST_CASE(tcs, free__small_double_after_remote_push);
    ATF_ADD_TEST_CASE(tcs, free__moved_block_freed_by_other_arena);
    ATF_ADD_TEST_CASE(tcs, realloc__freed_small_block);
    ATF_ADD_TEST_CASE(tcs, realloc__small_block_moved_away);
    ATF_ADD_TEST_CASE(tcs, realloc__freed_large_and_huge_block);
    ATF_ADD_TEST_CASE(tcs, free__large_double);
    ATF_ADD_TEST_CASE(tcs, free__large_cached_double_elsewhere);
    ATF_ADD_TEST_CASE(tcs, free__huge_double);
    ATF_ADD_TEST_CASE(tcs, realloc__foreign_pointers);
    ATF_ADD_TEST_CASE(tcs, realloc__interior);
    ATF_ADD_TEST_CASE(tcs, malloc_usable_size__foreign_pointers);
    ATF_ADD_TEST_CASE(tcs, free_sized__mismatch);
    ATF_ADD_TEST_CASE(tcs, continue__small_double);
    ATF_ADD_TEST_CASE(tcs, continue__small_double_other_thread);
    ATF_ADD_TEST_CASE(tcs, continue__realloc0_cached);
    ATF_ADD_TEST_CASE(tcs, continue__large_double);
    ATF_ADD_TEST_CASE(tcs, continue__huge_double);
    ATF_ADD_TEST_CASE(tcs, continue__small_interior);
    ATF_ADD_TEST_CASE(tcs, continue__large_interior);
    ATF_ADD_TEST_CASE(tcs, mallocx_family__mismatch_and_bad_pointers);
    ATF_ADD_TEST_CASE(tcs, continue__huge_interior);
    ATF_ADD_TEST_CASE(tcs, continue__stack);
    ATF_ADD_TEST_CASE(tcs, continue__realloc_freed);
    ATF_ADD_TEST_CASE(tcs, continue__usable_size_freed_large);
}
