// lib/Makefile.inc, the BSD make fragment a C library includes: the
// harness in tests/bmake builds a static archive from it with Debian's
// bmake; the archive defines every name of Symbol.map and needs no C++
// runtime; the fragment's sources and flags are the autotools build's.
#include <atf-c++.hpp>

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <utility>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

std::string bmake() {
    std::string b = testutil::find_program("bmake", {"/usr/bin/bmake"});
    if (b.empty())
        ATF_SKIP("bmake is not installed (apt-get install bmake)");
    return b;
}

std::set<std::string> words(const std::string &s) {
    std::set<std::string> out;
    std::istringstream in(s);
    std::string w;
    while (in >> w)
        out.insert(w);
    return out;
}

std::string read_file(const std::string &path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string srcdir() { return ARENALLOC_TOP_SRCDIR; }

// The value of a variable of the fragment, expanded (-V NAME alone would
// print nested references unexpanded), for the system os (the host's when
// empty).
std::string var(const std::string &name, const std::string &os = "") {
    std::vector<std::string> cmd = {bmake(), "-f", srcdir() + "/lib/Makefile.inc",
                                    "-V", "${" + name + "}"};
    if (!os.empty())
        cmd.push_back("ARENALLOC_OS=" + os);
    testutil::child_result r = testutil::run_program(
        cmd, {"MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", "MAKEFILES="});
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    return r.out;
}

// Each system's platform file, by the name uname -s gives.
const std::pair<const char *, const char *> kPlatformFiles[] = {
    {"FreeBSD", "platform_freebsd.cc"},
    {"Linux", "platform_linux.cc"},
    {"SunOS", "platform_illumos.cc"},
};

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(bmake__sources_are_the_autotools_ones);
ATF_TEST_CASE_BODY(bmake__sources_are_the_autotools_ones) {
    // The host's list plus every system's platform file.
    std::set<std::string> listed = words(var("ARENALLOC_SRCS"));
    for (const auto &pf : kPlatformFiles)
        listed.insert(pf.second);
    std::set<std::string> on_disk;
    DIR *d = opendir((srcdir() + "/lib").c_str());
    ATF_REQUIRE(d != NULL);
    while (struct dirent *e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 3 && n.compare(n.size() - 3, 3, ".cc") == 0)
            on_disk.insert(n);
    }
    closedir(d);
    TU_REQUIRE_MSG(listed == on_disk, "Makefile.inc lists " << listed.size()
                                                            << " sources, lib/ has " << on_disk.size());
    // The automake fragment names the same files.
    std::string am = read_file(srcdir() + "/lib/Makefile.am.inc");
    for (const std::string &f : listed)
        TU_REQUIRE_MSG(am.find("lib/" + f) != std::string::npos, f << " missing from Makefile.am.inc");
}

ATF_TEST_CASE_WITHOUT_HEAD(bmake__platform_file_follows_the_system);
ATF_TEST_CASE_BODY(bmake__platform_file_follows_the_system) {
    // On each system the fragment builds platform_posix.cc and that
    // system's file, never another's.
    for (const auto &pf : kPlatformFiles) {
        std::set<std::string> srcs = words(var("ARENALLOC_SRCS", pf.first));
        TU_REQUIRE_MSG(srcs.count("platform_posix.cc") == 1, pf.first << ": no platform_posix.cc");
        for (const auto &other : kPlatformFiles)
            TU_REQUIRE_MSG(srcs.count(other.second) == (other.second == pf.second ? 1u : 0u),
                           pf.first << ": " << other.second);
    }
    // An unknown system is refused rather than built without a layer.
    testutil::child_result r = testutil::run_program(
        {bmake(), "-f", srcdir() + "/lib/Makefile.inc", "-V", "${ARENALLOC_SRCS}",
         "ARENALLOC_OS=Plan9"},
        {"MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", "MAKEFILES="});
    TU_REQUIRE_MSG(!r.exited_ok(), "Plan9 accepted: " << r.out);
}

ATF_TEST_CASE_WITHOUT_HEAD(bmake__flags_are_the_autotools_ones);
ATF_TEST_CASE_BODY(bmake__flags_are_the_autotools_ones) {
    std::string am = read_file(srcdir() + "/lib/Makefile.am.inc");
    for (const std::string &flag : words(var("ARENALLOC_CXXFLAGS")))
        TU_REQUIRE_MSG(am.find(flag) != std::string::npos,
                       flag << " is in Makefile.inc but not in Makefile.am.inc");
    for (const char *needed : {"-fno-exceptions", "-fno-rtti", "-fno-threadsafe-statics",
                               "-fvisibility=hidden"})
        TU_REQUIRE_MSG(words(var("ARENALLOC_CXXFLAGS")).count(needed) == 1, needed);
    TU_REQUIRE_MSG(var("SYM_MAPS").find("Symbol.map") != std::string::npos, "SYM_MAPS");
    std::set<std::string> mlinks = words(var("MLINKS"));
    for (const char *page : {"malloc.3", "free.3", "calloc.3", "realloc.3", "posix_memalign.3",
                             "aligned_alloc.3", "malloc_usable_size.3", "malloc.conf.5"})
        TU_REQUIRE_MSG(mlinks.count(page) == 1, "MLINKS lacks " << page);
}

ATF_TEST_CASE_WITHOUT_HEAD(bmake__harness_builds_the_archive);
ATF_TEST_CASE_BODY(bmake__harness_builds_the_archive) {
    char dir[] = "/tmp/arenalloc-bmake-XXXXXX";
    ATF_REQUIRE(mkdtemp(dir) != NULL);
    testutil::child_result r = testutil::run_program(
        {bmake(), "-C", srcdir() + "/tests/bmake",
         std::string("ARENALLOC_CONFIG_DIR=") + ARENALLOC_TOP_BUILDDIR + "/lib"},
        // GNU make's flags (make check runs us) mean something else to bmake.
        {std::string("MAKEOBJDIR=") + dir, "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", "MAKEFILES="},
        "/dev/null", 600);
    TU_REQUIRE_MSG(r.exited_ok(), r.describe() << " out: " << r.out.substr(r.out.size() > 2000 ? r.out.size() - 2000 : 0));
    std::string archive = std::string(dir) + "/libarenalloc_bsd.a";
    ATF_REQUIRE(access(archive.c_str(), R_OK) == 0);

    testutil::child_result defined = testutil::run_program({"nm", "--defined-only", archive}, {});
    testutil::child_result undefined = testutil::run_program({"nm", "-u", archive}, {});
    ATF_REQUIRE(defined.exited_ok() && undefined.exited_ok());
    std::set<std::string> def, undef;
    for (const std::string &line : testutil::lines_of(defined.out)) {
        std::istringstream in(line);
        std::string addr, type, name;
        if (in >> addr >> type >> name)
            def.insert(name);
    }
    for (const std::string &line : testutil::lines_of(undefined.out)) {
        std::istringstream in(line);
        std::string type, name;
        if (in >> type >> name)
            undef.insert(name);
    }
    // Every public name of Symbol.map is defined in the archive.
    std::string map = read_file(srcdir() + "/lib/Symbol.map");
    size_t g = map.find("global:"), l = map.find("local:");
    ATF_REQUIRE(g != std::string::npos && l != std::string::npos);
    std::istringstream names(map.substr(g + 7, l - g - 7));
    std::string n;
    unsigned count = 0;
    while (names >> n) {
        if (n.back() == ';')
            n.pop_back();
        TU_REQUIRE_MSG(def.count(n) == 1, n << " is not defined by the archive");
        count++;
    }
    ATF_REQUIRE(count >= 20);
    // Nothing from a C++ runtime: every undefined _Z name is one of ours.
    for (const std::string &u : undef) {
        bool cxx = u.compare(0, 2, "_Z") == 0 || u.compare(0, 6, "__cxa_") == 0 ||
                   u.compare(0, 8, "_Unwind_") == 0 || u.compare(0, 6, "__gxx_") == 0;
        TU_REQUIRE_MSG(!cxx || def.count(u) == 1, "the archive needs " << u);
    }
    testutil::run_program({"rm", "-rf", dir}, {});
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, bmake__sources_are_the_autotools_ones);
    ATF_ADD_TEST_CASE(tcs, bmake__platform_file_follows_the_system);
    ATF_ADD_TEST_CASE(tcs, bmake__flags_are_the_autotools_ones);
    ATF_ADD_TEST_CASE(tcs, bmake__harness_builds_the_archive);
}
