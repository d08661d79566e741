// The module inside a second C library: tools/musl/build-and-test builds
// arenalloc with musl (configure answered by musl, CXX=tools/musl/cxx),
// links the stand-alone conformance, stress and fork tests, static_init and
// the demo statically against musl's libc.a with arenalloc as its malloc, checks
// the links (no loader, no glibc file, every public name from arenalloc,
// none of musl's malloc) and runs them.  Skipped where musl is not installed.
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace {

std::string srcdir() { return ARENALLOC_TOP_SRCDIR; }

// The output's last non-empty line.
std::string last_line(const std::string &out) {
    std::vector<std::string> lines = testutil::lines_of(out);
    while (!lines.empty() && lines.back().empty())
        lines.pop_back();
    return lines.empty() ? std::string() : lines.back();
}

bool contains(const std::string &out, const std::string &what) {
    return out.find(what) != std::string::npos;
}

}  // namespace

ATF_TEST_CASE(musl__static_build_passes_its_tests);
ATF_TEST_CASE_HEAD(musl__static_build_passes_its_tests) {
    set_md_var("descr", "arenalloc as musl's malloc, in static programs: the "
                        "conformance and stress tests pass without ATF or glibc");
    set_md_var("timeout", "900");
}
ATF_TEST_CASE_BODY(musl__static_build_passes_its_tests) {
    if (testutil::find_program("musl-gcc", {"/usr/bin/musl-gcc"}).empty())
        ATF_SKIP("musl-gcc is not installed (apt-get install musl-tools musl-dev)");
    char cwd[4096];
    ATF_REQUIRE(getcwd(cwd, sizeof cwd) != NULL);
    const std::string build = std::string(cwd) + "/build-musl";
    testutil::child_result r = testutil::run_program(
        {srcdir() + "/tools/musl/build-and-test", build},
        // Our make's flags (make check runs us) are not for the nested build.
        {"MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", "MAKEFILES="},
        "/dev/null", 880);
    const std::string tail = r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
    if (!r.timed_out && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 77)
        ATF_SKIP("musl is not fully installed: " + last_line(r.out));
    TU_REQUIRE_MSG(r.exited_ok(), r.describe() << " out: " << tail);

    const std::string summary = last_line(r.out);
    TU_REQUIRE_MSG(summary.find(" passed, 0 failed") != std::string::npos &&
                       summary.find_first_not_of("0123456789") > 0,
                   "last line: " << summary);
    TU_REQUIRE_MSG(atoi(summary.c_str()) >= 50, "too few checks: " << summary);
    // The parts that carry the proof must each have been reached.
    for (const char *program : {"api_test", "stress_test", "fork_test", "static_init", "demo"}) {
        const std::string p = program;
        TU_REQUIRE_MSG(contains(r.out, "ok: " + p + ": static, no interpreter"), p << ": " << tail);
        TU_REQUIRE_MSG(contains(r.out, "ok: " + p + ": none of musl's malloc linked in"),
                       p << ": " << tail);
        TU_REQUIRE_MSG(contains(r.out, "ok: " + p + ": linked only with musl's libc.a"),
                       p << ": " << tail);
    }
    TU_REQUIRE_MSG(contains(r.out, "api_test:malloc__is_arenalloc  ->  passed"), tail);
    TU_REQUIRE_MSG(contains(r.out, "stress_test:stress__producer_consumer  ->  passed"), tail);
    TU_REQUIRE_MSG(contains(r.out, "fork_test:fork__busy_threads  ->  passed"), tail);
    TU_REQUIRE_MSG(contains(r.out, "static_init: ok: allocation at exit"), tail);
    TU_REQUIRE_MSG(contains(r.out, "ok: demo:") && contains(r.out, "allocations served by arenalloc"),
                   tail);
    printf("%s\n", summary.c_str());
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, musl__static_build_passes_its_tests);
}
