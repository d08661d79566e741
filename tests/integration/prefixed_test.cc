// lib/libarenalloc_prefixed: the library built with the symbol prefix
// arena_, linked (statically) into this program, where malloc stays the C
// library's.  Both allocators serve this one process side by side: the
// arena_ functions behave as arenalloc's standard ones, glibc's malloc is
// untouched, neither knows the other's pointers, and the fork and
// thread-exit hooks still run although no libc calls them by name.
//
// Compiled with -DARENALLOC_SYMBOL_PREFIX=arena_, so arenalloc.h declares
// arena_malloc etc.

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <atf-c++.hpp>

#include "arenalloc.h"
#include "config.h"
#include "malloc_np.h"
#include "test_util.h"

#ifndef ARENALLOC_PREFIXED_ARCHIVE
#error "ARENALLOC_PREFIXED_ARCHIVE (path of libarenalloc_prefixed.a) must be defined"
#endif

using testutil::escape;
using testutil::is_aligned;
using testutil::opaque;
using testutil::page_size;

namespace {

const size_t KiB = 1024;
const size_t MiB = 1024 * 1024;

// Sizes from the smallest class to a huge block (own mapping).
const size_t kSizes[] = { 1, 8, 24, 100, 1000, 4096, 14336, 20 * KiB, 300 * KiB,
                          1792 * KiB, 5 * MiB };

uint64_t
thread_counter(const char *name)
{
    uint64_t v = 0;
    size_t len = sizeof(v);
    TU_REQUIRE_MSG(arena_mallctl(name, &v, &len, NULL, 0) == 0,
                   "arena_mallctl(" << name << ") failed");
    return v;
}

// Threads the arenas have now (stats.arenas.<i>.nthreads, summed): a thread
// counts from its first allocation until its exit hook runs.
unsigned
arena_threads(void)
{
    uint64_t epoch = 1;
    ATF_REQUIRE_EQ(arena_mallctl("epoch", NULL, NULL, &epoch, sizeof(epoch)), 0);
    unsigned narenas = 0;
    size_t len = sizeof(narenas);
    ATF_REQUIRE_EQ(arena_mallctl("arenas.narenas", &narenas, &len, NULL, 0), 0);
    unsigned total = 0;
    for (unsigned i = 0; i < narenas; i++) {
        const std::string name = "stats.arenas." + std::to_string(i) + ".nthreads";
        unsigned n = 0;
        len = sizeof(n);
        const int rc = arena_mallctl(name.c_str(), &n, &len, NULL, 0);
        if (rc == ENOENT)  // an arena not created yet
            continue;
        TU_REQUIRE_MSG(rc == 0, name << ": error " << rc);
        total += n;
    }
    return total;
}

// The object a symbol's address lies in (dladdr), "" when unknown.
std::string
object_of(const void *addr)
{
    Dl_info info;
    if (dladdr(addr, &info) == 0 || info.dli_fname == NULL)
        return "";
    return info.dli_fname;
}

}  // namespace

// The archive defines every public name with the prefix and none of the
// standard names: linking it cannot replace a program's malloc.
ATF_TEST_CASE_WITHOUT_HEAD(prefixed__archive_symbols);
ATF_TEST_CASE_BODY(prefixed__archive_symbols)
{
    const std::string nm = testutil::find_program("nm");
    if (nm.empty())
        ATF_SKIP("nm not found (binutils)");
    const testutil::child_result r = testutil::run_program(
        { nm, "--defined-only", "--extern-only", ARENALLOC_PREFIXED_ARCHIVE },
        { "LC_ALL=C" }, "/dev/null", 60);
    TU_REQUIRE_MSG(r.exited_ok(), "nm: " << r.describe());
    std::set<std::string> defined;
    for (const std::string &line : testutil::lines_of(r.out)) {
        std::istringstream in(line);
        std::string addr, type, name;
        if (in >> addr >> type >> name)
            defined.insert(name);
    }
    const char *const names[] = {
        "malloc", "calloc", "realloc", "reallocarray", "reallocf", "free", "posix_memalign",
        "aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size",
        "malloc_trim", "malloc_stats_print", "mallctl", "mallctlbymib",
        "mallctlnametomib", "arenalloc_purge", "arenalloc_get_summary",
        "_malloc_prefork", "_malloc_postfork", "_malloc_postfork_child",
        "_malloc_thread_cleanup", "mallocx", "rallocx", "xallocx", "sallocx", "dallocx",
        "sdallocx", "nallocx",
#if defined(__GLIBC__)
        // glibc's extensions (lib/Symbol.glibc.map).
        "mallinfo", "mallinfo2", "mallopt", "malloc_info",
#endif
    };
    for (const char *n : names) {
        TU_REQUIRE_MSG(defined.count(std::string("arena_") + n) == 1,
                       "the archive does not define arena_" << n);
        TU_REQUIRE_MSG(defined.count(n) == 0, "the archive defines " << n);
    }
}

// This process's malloc and free are the C library's, not the archive's.
ATF_TEST_CASE_WITHOUT_HEAD(prefixed__process_malloc_is_libc);
ATF_TEST_CASE_BODY(prefixed__process_malloc_is_libc)
{
    void *(*volatile m)(size_t) = malloc;
    void (*volatile f)(void *) = free;
    for (const void *addr : { reinterpret_cast<const void *>(m),
                              reinterpret_cast<const void *>(f) }) {
        const std::string obj = object_of(addr);
        TU_REQUIRE_MSG(obj.find("libc.so") != std::string::npos,
                       "malloc/free resolve into [" << obj << "], not libc");
    }
    const std::string ours = object_of(reinterpret_cast<const void *>(&arena_malloc));
    TU_REQUIRE_MSG(ours.find("libc.so") == std::string::npos,
                   "arena_malloc resolves into " << ours);
}

// What api_test checks of malloc & co., through the arena_ names.
ATF_TEST_CASE_WITHOUT_HEAD(prefixed__conformance);
ATF_TEST_CASE_BODY(prefixed__conformance)
{
    ATF_REQUIRE_EQ(arena_malloc_usable_size(NULL), 0u);
    arena_free(NULL);
    for (size_t n : kSizes) {
        unsigned char *p = static_cast<unsigned char *>(arena_malloc(n));
        TU_REQUIRE_MSG(p != NULL, "arena_malloc(" << n << ")");
        TU_REQUIRE_MSG(is_aligned(p, 16) || n < 16, "arena_malloc(" << n << ") = " << p);
        const size_t usable = arena_malloc_usable_size(p);
        TU_REQUIRE_MSG(usable >= n, "usable " << usable << " < " << n);
        if (n <= testutil::largest_small_class())  // small: at most a quarter above the request
            TU_REQUIRE_MSG(usable <= n + n / 4 + 16, "usable " << usable << " for " << n);
        testutil::pattern_fill(p, usable, 1);
        // Grow then shrink: the contents that fit survive both moves.
        unsigned char *q = static_cast<unsigned char *>(arena_realloc(p, 2 * n + 100));
        ATF_REQUIRE(q != NULL);
        const size_t kept = std::min(usable, 2 * n + 100);
        TU_REQUIRE_MSG(testutil::pattern_check(q, kept, 1) == kept,
                       "arena_realloc(" << n << ") lost contents");
        unsigned char *r = static_cast<unsigned char *>(arena_realloc(q, n / 2 + 1));
        ATF_REQUIRE(r != NULL);
        ATF_REQUIRE(arena_malloc_usable_size(r) >= n / 2 + 1);
        TU_REQUIRE_MSG(testutil::pattern_check(r, n / 2 + 1, 1) == n / 2 + 1,
                       "arena_realloc(" << n << ") shrinking lost contents");
        arena_free(r);

        unsigned char *z = static_cast<unsigned char *>(arena_calloc(n, 1));
        ATF_REQUIRE(z != NULL);
        TU_REQUIRE_MSG(testutil::first_not(z, n, 0) == n, "arena_calloc(" << n << ", 1) not zeroed");
        arena_free(z);
    }

    for (size_t align = sizeof(void *); align <= 4 * MiB; align *= 2) {
        void *p = NULL;
        ATF_REQUIRE_EQ(arena_posix_memalign(&p, align, 100), 0);
        TU_REQUIRE_MSG(p != NULL && is_aligned(p, align), "arena_posix_memalign " << align);
        arena_free(p);
        p = arena_aligned_alloc(align, align);
        TU_REQUIRE_MSG(p != NULL && is_aligned(p, align), "arena_aligned_alloc " << align);
        ATF_REQUIRE(arena_malloc_usable_size(p) >= align);
        arena_free(p);
        p = arena_memalign(align, 3 * align);
        TU_REQUIRE_MSG(p != NULL && is_aligned(p, align), "arena_memalign " << align);
        arena_free(p);
    }
    void *p = arena_valloc(1);
    ATF_REQUIRE(p != NULL && is_aligned(p, page_size()));
    arena_free(p);
    p = arena_pvalloc(page_size() + 1);
    ATF_REQUIRE(p != NULL && is_aligned(p, page_size()));
    ATF_REQUIRE(arena_malloc_usable_size(p) >= 2 * page_size());
    arena_free(p);

    // The errors: errno ENOMEM on overflow, EINVAL from posix_memalign
    // (which leaves errno and *memptr alone).
    errno = 0;
    ATF_REQUIRE(arena_malloc(opaque(SIZE_MAX)) == NULL);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    errno = 0;
    ATF_REQUIRE(arena_calloc(opaque(SIZE_MAX / 2), 3) == NULL);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    void *keep = arena_malloc(10);
    errno = 0;
    ATF_REQUIRE(arena_reallocarray(keep, opaque(SIZE_MAX / 4), 8) == NULL);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    ATF_REQUIRE(arena_malloc_usable_size(keep) >= 10);  // still valid
    errno = 0;
    ATF_REQUIRE(arena_realloc(keep, opaque(SIZE_MAX - 100)) == NULL);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    arena_free(keep);
    void *out = &out;
    errno = 0;
    ATF_REQUIRE_EQ(arena_posix_memalign(&out, 24, 10), EINVAL);
    ATF_REQUIRE_EQ(errno, 0);
    ATF_REQUIRE(out == &out);
    ATF_REQUIRE_EQ(arena_posix_memalign(&out, sizeof(void *) / 2, 10), EINVAL);
    ATF_REQUIRE(out == &out);
    errno = 0;
    ATF_REQUIRE(arena_aligned_alloc(24, 48) == NULL);
    ATF_REQUIRE_EQ(errno, EINVAL);
}

// malloc_np.h under the prefix: the mallocx family as arena_mallocx...,
// on blocks of the prefixed library.
ATF_TEST_CASE_WITHOUT_HEAD(prefixed__mallocx_family);
ATF_TEST_CASE_BODY(prefixed__mallocx_family)
{
    for (size_t n : kSizes) {
        const size_t want = arena_nallocx(n, MALLOCX_ALIGN(64) | MALLOCX_ZERO);
        unsigned char *p = static_cast<unsigned char *>(
            arena_mallocx(n, MALLOCX_ALIGN(64) | MALLOCX_ZERO));
        TU_REQUIRE_MSG(p != NULL && is_aligned(p, 64), "arena_mallocx(" << n << ")");
        TU_REQUIRE_MSG(arena_sallocx(p, 0) == want, "sallocx " << arena_sallocx(p, 0)
                                                               << ", nallocx " << want);
        TU_REQUIRE_MSG(testutil::first_not(p, want, 0) == want, "not zeroed: " << n);
        ATF_REQUIRE(arena_xallocx(p, 1, 0, 0) >= 1);
        p = static_cast<unsigned char *>(arena_rallocx(p, 2 * n + 1, MALLOCX_TCACHE_NONE));
        ATF_REQUIRE(p != NULL);
        ATF_REQUIRE(arena_sallocx(p, 0) >= 2 * n + 1);
        arena_sdallocx(p, 2 * n + 1, MALLOCX_TCACHE_NONE);
        p = static_cast<unsigned char *>(arena_mallocx(n, MALLOCX_ARENA(0)));
        ATF_REQUIRE(p != NULL);
        arena_dallocx(p, 0);
    }
}

// glibc's malloc and arena_malloc interleaved, each with its own blocks;
// the arena_ statistics count the arena_ calls and nothing else.
ATF_TEST_CASE_WITHOUT_HEAD(prefixed__beside_libc_malloc);
ATF_TEST_CASE_BODY(prefixed__beside_libc_malloc)
{
    struct block {
        void *p;
        size_t n;
        bool ours;
    };
    std::vector<block> blocks;
    blocks.reserve(2000);
    const uint64_t before = thread_counter("thread.allocated");
    uint64_t ours_usable = 0;
    testutil::rng rng(7);
    for (int i = 0; i < 2000; i++) {
        const size_t n = rng.log_range(1, 64 * KiB);
        const bool ours = (i % 2) == 0;
        void *p = ours ? arena_malloc(n) : malloc(n);
        ATF_REQUIRE(p != NULL);
        if (ours)
            ours_usable += arena_malloc_usable_size(p);
        else
            ATF_REQUIRE(malloc_usable_size(p) >= n);  // glibc's
        testutil::pattern_fill(p, n, i);
        blocks.push_back({ p, n, ours });
    }
    const uint64_t delta = thread_counter("thread.allocated") - before;
    if (ARENALLOC_STATS)
        TU_REQUIRE_MSG(delta == ours_usable,
                       "thread.allocated grew by " << delta << ", the arena_ blocks are "
                                                   << ours_usable << " bytes");
    else
        ATF_REQUIRE_EQ(delta, 0u);
    for (size_t i = 0; i < blocks.size(); i++)
        TU_REQUIRE_MSG(testutil::pattern_check(blocks[i].p, blocks[i].n, i) == blocks[i].n,
                       "block " << i << (blocks[i].ours ? " (arena_)" : " (libc)")
                                << " overwritten");
    // Frees in another order, each to its own allocator; glibc's malloc
    // still works afterwards.
    for (size_t i = blocks.size(); i-- > 0;)
        if (blocks[i].ours)
            arena_free(blocks[i].p);
        else
            free(blocks[i].p);
    void *g = malloc(100);
    ATF_REQUIRE(g != NULL);
    free(g);
    const int trimmed = arena_malloc_trim(0);
    ATF_REQUIRE(trimmed == 0 || trimmed == 1);
    struct arenalloc_summary s;
    ATF_REQUIRE_EQ(arena_arenalloc_get_summary(&s), 0);
    ATF_REQUIRE(s.nmalloc_small + s.nmalloc_large + s.nmalloc_huge > 0 || !ARENALLOC_STATS);
}

// arenalloc does not know glibc's blocks: handing one to arena_free is
// reported as an invalid pointer (in a child, which aborts).
ATF_TEST_CASE_WITHOUT_HEAD(prefixed__libc_block_is_foreign);
ATF_TEST_CASE_BODY(prefixed__libc_block_is_foreign)
{
    void *g = malloc(100);
    ATF_REQUIRE(g != NULL);
    const testutil::child_result r = testutil::run_in_child([g] { arena_free(g); });
    TU_REQUIRE_MSG(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
                   "arena_free(libc block) did not abort: " << r.describe());
    TU_REQUIRE_MSG(r.err.find("arenalloc: ") != std::string::npos &&
                       r.err.find("invalid pointer") != std::string::npos,
                   "no report: [" << r.err << "]");
    free(g);
}

namespace {

struct shared_pool {
    std::mutex lock;
    std::vector<std::pair<void *, size_t>> blocks;  // arena_ blocks, patterned
};

void
worker(shared_pool *pool, unsigned seed, std::atomic<int> *errors)
{
    testutil::rng rng(seed);
    for (int i = 0; i < 3000; i++) {
        const size_t n = rng.log_range(1, 256 * KiB);
        void *p = arena_malloc(n);
        void *g = malloc(n / 2 + 1);
        if (p == NULL || g == NULL) {
            errors->fetch_add(1);
            return;
        }
        testutil::pattern_fill(p, n, uintptr_t(p));
        free(g);
        std::pair<void *, size_t> other{ NULL, 0 };
        {
            std::lock_guard<std::mutex> hold(pool->lock);
            pool->blocks.push_back({ p, n });
            if (pool->blocks.size() > 64) {
                // Often another thread's block: freed across threads.
                const size_t k = rng.range(0, pool->blocks.size() - 1);
                other = pool->blocks[k];
                pool->blocks[k] = pool->blocks.back();
                pool->blocks.pop_back();
            }
        }
        if (other.first != NULL) {
            if (testutil::pattern_check(other.first, other.second, uintptr_t(other.first)) !=
                other.second)
                errors->fetch_add(1);
            arena_free(other.first);
        }
    }
}

}  // namespace

// Threads, cross-thread frees, and the thread-exit hook: a thread's arena
// binding is released when it exits (the library registered the hook
// itself; no libc calls arena__malloc_thread_cleanup).
ATF_TEST_CASE_WITHOUT_HEAD(prefixed__threads);
ATF_TEST_CASE_BODY(prefixed__threads)
{
    arena_free(arena_malloc(1));  // this thread counts from here on
    const unsigned threads_before = arena_threads();
    shared_pool pool;
    std::atomic<int> errors{ 0 };
    std::atomic<int> started{ 0 };
    std::atomic<bool> go_on{ false };
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < 4; t++)
        ts.emplace_back([&, t] {
            worker(&pool, 100 + t, &errors);
            started.fetch_add(1);
            while (!go_on.load())
                std::this_thread::yield();
        });
    while (started.load() < 4)
        std::this_thread::yield();
    TU_REQUIRE_MSG(arena_threads() == threads_before + 4,
                   "arenas count " << arena_threads() << " threads, expected "
                                   << threads_before + 4);
    go_on.store(true);
    for (std::thread &t : ts)
        t.join();
    ATF_REQUIRE_EQ(errors.load(), 0);
    TU_REQUIRE_MSG(arena_threads() == threads_before,
                   "after the threads exited the arenas count " << arena_threads()
                       << " threads, expected " << threads_before
                       << ": the thread-exit hook did not run");
    for (const auto &b : pool.blocks) {
        ATF_REQUIRE(testutil::pattern_check(b.first, b.second, uintptr_t(b.first)) ==
                    b.second);
        arena_free(b.first);
    }

    // The prefixed libc entry points themselves.
    std::thread t([] {
        void *p = arena_malloc(100);
        arena_free(p);
        arena__malloc_thread_cleanup();
        void *q = arena_malloc(100);  // later destructors may still allocate
        arena_free(q);
    });
    t.join();
    arena__malloc_prefork();
    arena__malloc_postfork();
    arena_free(arena_malloc(5000));
}

// fork() while other threads allocate through arena_: the fork handlers the
// library registered itself leave the child's allocator usable.
ATF_TEST_CASE_WITHOUT_HEAD(prefixed__fork_while_busy);
ATF_TEST_CASE_BODY(prefixed__fork_while_busy)
{
    std::atomic<bool> stop{ false };
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < 3; t++)
        ts.emplace_back([&stop, t] {
            testutil::rng rng(200 + t);
            while (!stop.load()) {
                void *p = arena_malloc(rng.log_range(1, 3 * MiB));
                arena_free(p);
            }
        });
    std::string failure;
    for (int i = 0; i < 40 && failure.empty(); i++) {
        const testutil::child_result r = testutil::run_in_child(
            [] {
                for (size_t n : kSizes) {
                    void *p = arena_malloc(n);
                    if (p == NULL)
                        _exit(3);
                    memset(p, 1, n);
                    arena_free(p);
                }
                void *g = malloc(100);
                free(g);
            },
            60);
        if (!r.exited_ok())
            failure = "child " + std::to_string(i) + ": " + r.describe();
    }
    stop.store(true);
    for (std::thread &t : ts)
        t.join();
    TU_REQUIRE_MSG(failure.empty(), failure);
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, prefixed__archive_symbols);
    ATF_ADD_TEST_CASE(tcs, prefixed__process_malloc_is_libc);
    ATF_ADD_TEST_CASE(tcs, prefixed__conformance);
    ATF_ADD_TEST_CASE(tcs, prefixed__mallocx_family);
    ATF_ADD_TEST_CASE(tcs, prefixed__beside_libc_malloc);
    ATF_ADD_TEST_CASE(tcs, prefixed__libc_block_is_foreign);
    ATF_ADD_TEST_CASE(tcs, prefixed__threads);
    ATF_ADD_TEST_CASE(tcs, prefixed__fork_while_busy);
}
