// Bad input to free(), realloc() and malloc_usable_size(): pointers the
// allocator never returned, interior pointers and double frees must be
// detected, reported with one line on stderr and abort() (arenalloc(3)).
//
// Each case runs the bad call in a forked child and checks that the child died
// by SIGABRT after writing
//     arenalloc: <function>(): invalid pointer 0x<address>: <finding>

#include <sys/mman.h>

#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cerrno>
#include <string>
#include <vector>

#include <atf-c++.hpp>

#include "test_util.h"

using testutil::opaque;

namespace {

const size_t MiB = 1024 * 1024;

char static_buffer[256];

// Checks that the child died by SIGABRT and that its stderr holds exactly one
// report line for function `fn` naming address `p`.
void
require_report(const testutil::child_result &r, const std::string &fn,
               const void *p)
{
    TU_REQUIRE_MSG(!r.timed_out, "child hung");
    TU_REQUIRE_MSG(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
                   "child did not abort: " << r.describe());

    const std::string prefix = "arenalloc: " + fn + "(): invalid pointer 0x";
    int reports = 0;
    std::string report;
    for (const std::string &line : testutil::lines_of(r.err)) {
        if (testutil::starts_with(line, "arenalloc:")) {
            reports++;
            report = line;
        }
    }
    TU_REQUIRE_MSG(reports == 1, "expected one arenalloc line on stderr, got "
                                     << reports << ": [" << r.err << "]");
    TU_REQUIRE_MSG(testutil::starts_with(report, prefix),
                   "report [" << report << "] does not begin with [" << prefix
                              << "]");

    // The address follows, in hex, then ": " and a short finding.
    const std::string rest = report.substr(prefix.size());
    char *end = NULL;
    errno = 0;
    const unsigned long long addr = strtoull(rest.c_str(), &end, 16);
    TU_REQUIRE_MSG(errno == 0 && end != rest.c_str(),
                   "no hex address in [" << report << "]");
    TU_REQUIRE_MSG(addr == static_cast<unsigned long long>(
                               reinterpret_cast<uintptr_t>(p)),
                   "report [" << report << "] names the wrong address; "
                              << "expected " << p);
    TU_REQUIRE_MSG(strncmp(end, ": ", 2) == 0 && end[2] != '\0',
                   "report [" << report
                              << "] lacks ': <finding>' after the address");
}

// free(p) in a child must be reported and abort.
void
require_free_aborts(void *p)
{
    const testutil::child_result r =
        testutil::run_in_child([p] { free(opaque(p)); });
    require_report(r, "free", p);
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
    const testutil::child_result r = testutil::run_in_child([&local] {
        free(opaque<void *>(local));
    });
    require_report(r, "free", local);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__static_pointer);
ATF_TEST_CASE_BODY(free__static_pointer)
{
    require_free_aborts(static_buffer + 16);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__wild_low_address);
ATF_TEST_CASE_BODY(free__wild_low_address)
{
    require_free_aborts(reinterpret_cast<void *>(0x1000));
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
    require_free_aborts(reinterpret_cast<void *>(a + 4096));
    require_free_aborts(reinterpret_cast<void *>(a));
    free(keep);
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
    require_free_aborts(reinterpret_cast<void *>(a));
    require_free_aborts(reinterpret_cast<void *>(a + 64 * 1024));
    munmap(m, 8 * MiB);
    free(keep);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__small_interior);
ATF_TEST_CASE_BODY(free__small_interior)
{
    char *p = static_cast<char *>(malloc(64));
    ATF_REQUIRE(p != NULL);
    require_free_aborts(p + 8);
    require_free_aborts(p + 1);
    free(p);  // the block itself is still fine in the parent
}

ATF_TEST_CASE_WITHOUT_HEAD(free__large_interior);
ATF_TEST_CASE_BODY(free__large_interior)
{
    char *p = static_cast<char *>(malloc(64 * 1024));
    ATF_REQUIRE(p != NULL);
    require_free_aborts(p + 4096);
    require_free_aborts(p + 16);
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__huge_interior);
ATF_TEST_CASE_BODY(free__huge_interior)
{
    char *p = static_cast<char *>(malloc(4 * MiB));
    ATF_REQUIRE(p != NULL);
    require_free_aborts(p + testutil::page_size());
    require_free_aborts(p + 2 * MiB);
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__small_double);
ATF_TEST_CASE_BODY(free__small_double)
{
    void *p = malloc(64);
    void *neighbour = malloc(64);  // keeps the run in use
    ATF_REQUIRE(p != NULL && neighbour != NULL);
    const testutil::child_result r = testutil::run_in_child([p] {
        free(opaque(p));
        free(opaque(p));
    });
    require_report(r, "free", p);
    free(neighbour);
    free(p);
}

// Freed, another block freed, then the first again: the thread cache holds
// both, and the second free of p must still be caught (never handed out
// twice).  Also once p has gone back to its arena.
ATF_TEST_CASE_WITHOUT_HEAD(free__small_double_not_on_top);
ATF_TEST_CASE_BODY(free__small_double_not_on_top)
{
    void *p = malloc(64);
    void *q = malloc(64);
    void *neighbour = malloc(64);
    ATF_REQUIRE(p != NULL && q != NULL && neighbour != NULL);
    const testutil::child_result r = testutil::run_in_child([p, q] {
        free(opaque(p));
        free(opaque(q));
        free(opaque(p));
    });
    require_report(r, "free", p);
    const testutil::child_result r2 = testutil::run_in_child([p] {
        free(opaque(p));
        malloc_trim(0);  // p goes back to its arena
        free(opaque(p));
    });
    require_report(r2, "free", p);
    free(neighbour);
    free(q);
    free(p);
}

// realloc() and malloc_usable_size() of a small block that free() put in
// the thread cache: reported, not served.
ATF_TEST_CASE_WITHOUT_HEAD(realloc__freed_small_block);
ATF_TEST_CASE_BODY(realloc__freed_small_block)
{
    void *p = malloc(200);
    void *neighbour = malloc(200);
    ATF_REQUIRE(p != NULL && neighbour != NULL);
    const testutil::child_result r = testutil::run_in_child([p] {
        free(opaque(p));
        void *q = realloc(opaque(p), 300);
        testutil::escape(q);
    });
    require_report(r, "realloc", p);
    const testutil::child_result r2 = testutil::run_in_child([p] {
        free(opaque(p));
        testutil::escape(reinterpret_cast<void *>(malloc_usable_size(opaque(p))));
    });
    require_report(r2, "malloc_usable_size", p);
    free(neighbour);
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__large_double);
ATF_TEST_CASE_BODY(free__large_double)
{
    void *p = malloc(64 * 1024);
    void *neighbour = malloc(64 * 1024);
    ATF_REQUIRE(p != NULL && neighbour != NULL);
    const testutil::child_result r = testutil::run_in_child([p] {
        free(opaque(p));
        free(opaque(p));
    });
    require_report(r, "free", p);
    free(neighbour);
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(free__huge_double);
ATF_TEST_CASE_BODY(free__huge_double)
{
    void *p = malloc(4 * MiB);
    ATF_REQUIRE(p != NULL);
    const testutil::child_result r = testutil::run_in_child([p] {
        free(opaque(p));
        free(opaque(p));
    });
    require_report(r, "free", p);
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(realloc__stack_pointer);
ATF_TEST_CASE_BODY(realloc__stack_pointer)
{
    char local[64];
    testutil::escape(local);
    const testutil::child_result r = testutil::run_in_child([&local] {
        void *q = realloc(opaque<void *>(local), 128);
        testutil::escape(q);
    });
    require_report(r, "realloc", local);
}

ATF_TEST_CASE_WITHOUT_HEAD(realloc__small_interior);
ATF_TEST_CASE_BODY(realloc__small_interior)
{
    char *p = static_cast<char *>(malloc(64));
    ATF_REQUIRE(p != NULL);
    const testutil::child_result r = testutil::run_in_child([p] {
        void *q = realloc(opaque<void *>(p + 8), 1000);
        testutil::escape(q);
    });
    require_report(r, "realloc", p + 8);
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc_usable_size__stack_pointer);
ATF_TEST_CASE_BODY(malloc_usable_size__stack_pointer)
{
    char local[64];
    testutil::escape(local);
    const testutil::child_result r = testutil::run_in_child([&local] {
        volatile size_t n = malloc_usable_size(opaque<void *>(local));
        (void)n;
    });
    require_report(r, "malloc_usable_size", local);
}

ATF_TEST_CASE_WITHOUT_HEAD(malloc_usable_size__static_pointer);
ATF_TEST_CASE_BODY(malloc_usable_size__static_pointer)
{
    const testutil::child_result r = testutil::run_in_child([] {
        volatile size_t n =
            malloc_usable_size(opaque<void *>(static_buffer + 8));
        (void)n;
    });
    require_report(r, "malloc_usable_size", static_buffer + 8);
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, free__null);
    ATF_ADD_TEST_CASE(tcs, free__stack_pointer);
    ATF_ADD_TEST_CASE(tcs, free__static_pointer);
    ATF_ADD_TEST_CASE(tcs, free__wild_low_address);
    ATF_ADD_TEST_CASE(tcs, free__unmapped_address);
    ATF_ADD_TEST_CASE(tcs, free__foreign_mapping);
    ATF_ADD_TEST_CASE(tcs, free__small_interior);
    ATF_ADD_TEST_CASE(tcs, free__large_interior);
    ATF_ADD_TEST_CASE(tcs, free__huge_interior);
    ATF_ADD_TEST_CASE(tcs, free__small_double);
    ATF_ADD_TEST_CASE(tcs, free__small_double_not_on_top);
    ATF_ADD_TEST_CASE(tcs, realloc__freed_small_block);
    ATF_ADD_TEST_CASE(tcs, free__large_double);
    ATF_ADD_TEST_CASE(tcs, free__huge_double);
    ATF_ADD_TEST_CASE(tcs, realloc__stack_pointer);
    ATF_ADD_TEST_CASE(tcs, realloc__small_interior);
    ATF_ADD_TEST_CASE(tcs, malloc_usable_size__stack_pointer);
    ATF_ADD_TEST_CASE(tcs, malloc_usable_size__static_pointer);
}
