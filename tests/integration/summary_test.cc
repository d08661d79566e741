// arenalloc_get_summary() and the MALLOC_OPTIONS=P summary at exit; an
// unknown MALLOC_OPTIONS character gives a warning and is ignored.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <atf-c++.hpp>

#include "arenalloc.h"
#include "test_util.h"

#ifndef ARENALLOC_SHLIB
#error "ARENALLOC_SHLIB (path of the built libarenalloc.so) must be defined"
#endif

namespace {

const size_t MiB = 1024 * 1024;

arenalloc_summary
summary(void)
{
    arenalloc_summary s;
    memset(&s, 0xEE, sizeof(s));
    ATF_REQUIRE_EQ(arenalloc_get_summary(&s), 0);
    return s;
}

std::string
describe(const arenalloc_summary &s)
{
    std::ostringstream ss;
    ss << "small " << s.nmalloc_small << ", large " << s.nmalloc_large
       << ", huge " << s.nmalloc_huge << ", frees " << s.nfree
       << ", mapped chunks " << s.mapped_chunks << " huge " << s.mapped_huge
       << " metadata " << s.mapped_metadata << ", arenas "
       << s.narenas_used << "/" << s.narenas << ", threads " << s.nthreads;
    return ss.str();
}

std::string
shlib(const atf::tests::tc &tc)
{
    const std::string path = tc.get_config_var("shlib", ARENALLOC_SHLIB);
    if (access(path.c_str(), R_OK) != 0)
        ATF_FAIL("the built library " + path + " is missing");
    return path;
}

// A program that certainly allocates and exits normally.
std::vector<std::string>
ls_command(void)
{
    const std::string ls = testutil::find_program("ls", { "/bin/ls",
                                                          "/usr/bin/ls" });
    if (ls.empty())
        ATF_SKIP("ls not found");
    return { ls, "-la", "/usr/bin" };
}

// An interpreter that allocates plenty, prints "2000" and a newline, and
// leaves stderr open to the end.
std::vector<std::string>
interpreter_command(void)
{
    const std::string perl = testutil::find_program("perl", { "/usr/bin/perl" });
    if (!perl.empty())
        return { perl, "-e",
                 "my @a = map { 'x' x $_ } 1..2000; print scalar(@a), qq(\\n);" };
    const std::string python = testutil::find_program(
        "python3", { "/usr/bin/python3", "/usr/local/bin/python3" });
    if (!python.empty())
        return { python, "-c", "a = ['x' * i for i in range(2000)]; "
                               "print(len(a))" };
    ATF_SKIP("neither perl nor python3 found");
}

// Checks that err holds the four summary lines of MALLOC_OPTIONS=P, in
// order, consecutive, and consistent; returns the allocations served.
uint64_t
require_summary_lines(const std::string &err)
{
    static const std::regex re[4] = {
        std::regex("^arenalloc: allocations served: ([0-9]+) \\(small "
                   "([0-9]+), large ([0-9]+), huge ([0-9]+)\\)$"),
        std::regex("^arenalloc: frees: ([0-9]+)$"),
        std::regex("^arenalloc: bytes mapped at exit: ([0-9]+) \\(chunks "
                   "([0-9]+), huge ([0-9]+), metadata ([0-9]+)\\)$"),
        std::regex("^arenalloc: arenas: ([0-9]+) used of ([0-9]+), threads "
                   "seen: ([0-9]+)$"),
    };
    const std::vector<std::string> lines = testutil::lines_of(err);
    size_t first = 0;
    while (first < lines.size() &&
           !testutil::starts_with(lines[first], "arenalloc: allocations"))
        first++;
    TU_REQUIRE_MSG(first + 4 <= lines.size(),
                   "no summary on stderr: [" << err << "]");
    std::smatch m[4];
    for (int i = 0; i < 4; i++)
        TU_REQUIRE_MSG(std::regex_match(lines[first + i], m[i], re[i]),
                       "summary line " << i + 1 << " is malformed: ["
                                       << lines[first + i] << "]");
    const uint64_t total = std::stoull(m[0][1]);
    const uint64_t small = std::stoull(m[0][2]);
    const uint64_t large = std::stoull(m[0][3]);
    const uint64_t huge = std::stoull(m[0][4]);
    TU_REQUIRE_MSG(total == small + large + huge,
                   "allocations served " << total << " != " << small << " + "
                                         << large << " + " << huge);
    TU_REQUIRE_MSG(total > 0, "no allocations counted: [" << lines[first]
                                                          << "]");
    const uint64_t used = std::stoull(m[3][1]);
    const uint64_t narenas = std::stoull(m[3][2]);
    const uint64_t threads = std::stoull(m[3][3]);
    TU_REQUIRE_MSG(used >= 1 && used <= narenas && threads >= 1,
                   "implausible arena line [" << lines[first + 3] << "]");
    int count = 0;
    for (const std::string &l : lines)
        if (testutil::starts_with(l, "arenalloc: allocations served:"))
            count++;
    TU_REQUIRE_MSG(count == 1, "summary printed " << count << " times");
    return total;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(summary__small_counts);
ATF_TEST_CASE_BODY(summary__small_counts)
{
    const arenalloc_summary s0 = summary();
    std::vector<void *> v;
    for (int i = 0; i < 1000; i++) {
        v.push_back(malloc(16 + i % 500));
        ATF_REQUIRE(v.back() != NULL);
    }
    const arenalloc_summary s1 = summary();
    TU_REQUIRE_MSG(s1.nmalloc_small >= s0.nmalloc_small + 1000,
                   "after 1000 small mallocs: " << describe(s0) << " -> "
                                                << describe(s1));
    TU_REQUIRE_MSG(s1.mapped_chunks > 0, describe(s1));
    TU_REQUIRE_MSG(s1.mapped_metadata > 0, describe(s1));
    for (void *p : v)
        free(p);
    const arenalloc_summary s2 = summary();
    TU_REQUIRE_MSG(s2.nfree >= s1.nfree + 1000,
                   "after 1000 frees: " << describe(s1) << " -> "
                                        << describe(s2));
}

ATF_TEST_CASE_WITHOUT_HEAD(summary__large_counts);
ATF_TEST_CASE_BODY(summary__large_counts)
{
    const arenalloc_summary s0 = summary();
    // Past the thread caches: 128 KiB with 4 KiB pages.
    const size_t size = 2 * testutil::largest_cached_class();
    void *p = malloc(size);
    ATF_REQUIRE(p != NULL);
    testutil::escape(p);
    const arenalloc_summary s1 = summary();
    TU_REQUIRE_MSG(s1.nmalloc_large >= s0.nmalloc_large + 1,
                   "after malloc(" << size << "): " << describe(s0) << " -> "
                                   << describe(s1));
    TU_REQUIRE_MSG(s1.nmalloc_huge == s0.nmalloc_huge,
                   size << " bytes counted as huge: " << describe(s1));
    free(p);
    const arenalloc_summary s2 = summary();
    TU_REQUIRE_MSG(s2.nfree >= s1.nfree + 1, "after free: " << describe(s1)
                                                            << " -> "
                                                            << describe(s2));
}

ATF_TEST_CASE_WITHOUT_HEAD(summary__huge_counts_and_mapping);
ATF_TEST_CASE_BODY(summary__huge_counts_and_mapping)
{
    const arenalloc_summary s0 = summary();
    void *p = malloc(4 * MiB);
    ATF_REQUIRE(p != NULL);
    memset(p, 1, 4 * MiB);
    const arenalloc_summary s1 = summary();
    TU_REQUIRE_MSG(s1.nmalloc_huge == s0.nmalloc_huge + 1,
                   "after malloc(4 MiB): " << describe(s0) << " -> "
                                           << describe(s1));
    TU_REQUIRE_MSG(s1.mapped_huge >= s0.mapped_huge + 4 * MiB,
                   "mapped_huge while a 4 MiB block lives: "
                       << describe(s0) << " -> " << describe(s1));
    free(p);
    const arenalloc_summary s2 = summary();
    TU_REQUIRE_MSG(s2.nfree >= s1.nfree + 1, "after free: " << describe(s1)
                                                            << " -> "
                                                            << describe(s2));
    TU_REQUIRE_MSG(s2.mapped_huge + 4 * MiB <= s1.mapped_huge,
                   "mapped_huge did not drop after free: "
                       << describe(s1) << " -> " << describe(s2));
}

ATF_TEST_CASE_WITHOUT_HEAD(summary__arenas_and_threads);
ATF_TEST_CASE_BODY(summary__arenas_and_threads)
{
    void *p = malloc(10);
    ATF_REQUIRE(p != NULL);
    const arenalloc_summary s0 = summary();
    TU_REQUIRE_MSG(s0.narenas >= 1 && s0.narenas_used >= 1 &&
                       s0.narenas_used <= s0.narenas && s0.nthreads >= 1,
                   describe(s0));
    // Each new thread that allocates is given an arena.
    for (int i = 0; i < 3; i++) {
        std::thread t([] {
            void *q = malloc(100);
            testutil::escape(q);
            free(q);
        });
        t.join();
    }
    const arenalloc_summary s1 = summary();
    TU_REQUIRE_MSG(s1.nthreads >= s0.nthreads + 3,
                   "3 new threads: " << describe(s0) << " -> "
                                     << describe(s1));
    TU_REQUIRE_MSG(s1.narenas == s0.narenas, describe(s1));
    TU_REQUIRE_MSG(s1.narenas_used >= std::min<unsigned>(s0.narenas, 2),
                   "round-robin: a second thread should use a second arena: "
                       << describe(s1));
    free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(options__P_prints_summary_preloaded);
ATF_TEST_CASE_BODY(options__P_prints_summary_preloaded)
{
    const testutil::child_result r = testutil::run_program(
        interpreter_command(),
        { "LD_PRELOAD=" + shlib(*this), "MALLOC_OPTIONS=P" });
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    TU_REQUIRE_MSG(r.out == "2000\n", "unexpected output [" << r.out << "]");
    require_summary_lines(r.err);
}

ATF_TEST_CASE_WITHOUT_HEAD(options__P_summary_when_program_closes_stderr);
ATF_TEST_CASE_BODY(options__P_summary_when_program_closes_stderr)
{
    // coreutils programs close stdout and stderr in an atexit handler
    // (gnulib close_stdout) that runs before one registered by the allocator
    // at its first malloc; the summary must still reach the original stderr.
    const testutil::child_result r = testutil::run_program(
        ls_command(), { "LD_PRELOAD=" + shlib(*this), "MALLOC_OPTIONS=P" });
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    TU_REQUIRE_MSG(!r.out.empty(), "ls printed nothing");
    require_summary_lines(r.err);
}

ATF_TEST_CASE_WITHOUT_HEAD(options__P_prints_summary_linked);
ATF_TEST_CASE_BODY(options__P_prints_summary_linked)
{
    // This program itself is linked with libarenalloc: run it again (listing
    // its test cases) with MALLOC_OPTIONS=P.
    const testutil::child_result r = testutil::run_program(
        { testutil::self_path(), "-l" }, { "MALLOC_OPTIONS=P" });
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    TU_REQUIRE_MSG(r.out.find("summary__small_counts") != std::string::npos,
                   "unexpected output [" << r.out << "]");
    require_summary_lines(r.err);
}

ATF_TEST_CASE_WITHOUT_HEAD(options__no_summary_without_P);
ATF_TEST_CASE_BODY(options__no_summary_without_P)
{
    const testutil::child_result r = testutil::run_program(
        ls_command(), { "LD_PRELOAD=" + shlib(*this), "MALLOC_OPTIONS=" });
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    TU_REQUIRE_MSG(r.err.find("arenalloc:") == std::string::npos,
                   "unexpected stderr [" << r.err << "]");
}

ATF_TEST_CASE_WITHOUT_HEAD(options__unknown_character);
ATF_TEST_CASE_BODY(options__unknown_character)
{
    const std::vector<std::string> cmd = interpreter_command();
    const std::string lib = shlib(*this);
    const testutil::child_result plain = testutil::run_program(
        cmd, { "LD_PRELOAD=" + lib, "MALLOC_OPTIONS=" });
    TU_REQUIRE_MSG(plain.exited_ok(), plain.describe());

    const std::string warning =
        "(malloc) Unsupported character in malloc options: 'y'";
    for (const char *opts : { "y", "Py" }) {
        const testutil::child_result r = testutil::run_program(
            cmd, { "LD_PRELOAD=" + lib, std::string("MALLOC_OPTIONS=") + opts });
        TU_REQUIRE_MSG(r.exited_ok(), "MALLOC_OPTIONS=" << opts << ": "
                                                        << r.describe());
        TU_REQUIRE_MSG(r.out == plain.out,
                       "MALLOC_OPTIONS=" << opts << " changed the output");
        int found = 0;
        for (const std::string &l : testutil::lines_of(r.err)) {
            const size_t at = l.find(": " + warning);
            if (at != std::string::npos && at > 0 &&
                at + 2 + warning.size() == l.size())
                found++;
        }
        TU_REQUIRE_MSG(found == 1, "MALLOC_OPTIONS=" << opts << ": expected "
                                       << "one line '<prog>: " << warning
                                       << "', stderr: [" << r.err << "]");
        if (strchr(opts, 'P') != NULL)
            require_summary_lines(r.err);
    }
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, summary__small_counts);
    ATF_ADD_TEST_CASE(tcs, summary__large_counts);
    ATF_ADD_TEST_CASE(tcs, summary__huge_counts_and_mapping);
    ATF_ADD_TEST_CASE(tcs, summary__arenas_and_threads);
    ATF_ADD_TEST_CASE(tcs, options__P_prints_summary_preloaded);
    ATF_ADD_TEST_CASE(tcs, options__P_prints_summary_linked);
    ATF_ADD_TEST_CASE(tcs, options__P_summary_when_program_closes_stderr);
    ATF_ADD_TEST_CASE(tcs, options__no_summary_without_P);
    ATF_ADD_TEST_CASE(tcs, options__unknown_character);
}
