// glibc's malloc extensions (mallinfo2, mallinfo, mallopt, malloc_info):
// the figures agree with mallctl's, mallinfo saturates, mallopt answers as
// its table in arenalloc(3) says (before and after the first allocation),
// malloc_info's XML parses with glibc's shape, and under LD_PRELOAD a plain
// program gets arenalloc's functions, not glibc's.
#include <atf-c++.hpp>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "arenalloc.h"
#include "test_util.h"

#if defined(__GLIBC__)

namespace {

size_t ctl_size(const char *name) {
    size_t v = 0, len = sizeof(v);
    ATF_REQUIRE_EQ(mallctl(name, &v, &len, nullptr, 0), 0);
    return v;
}

void refresh() {
    uint64_t e = 1;
    size_t len = sizeof(e);
    ATF_REQUIRE_EQ(mallctl("epoch", &e, &len, &e, sizeof(e)), 0);
}

std::string target(const atf::tests::tc &tc, const char *which) {
    return tc.get_config_var("top_builddir", ARENALLOC_TOP_BUILDDIR) + "/tests/integration/" + which;
}

std::string python() { return testutil::find_program("python3", {"/usr/bin/python3"}); }

// The checks of malloc_info's XML: glibc's elements, one heap per arena
// at least, the mmap total counting at least min_mmap bytes.
const char kXmlCheck[] =
    "import sys, xml.etree.ElementTree as E\n"
    "text = open(sys.argv[1]).read()\n"
    "r = E.fromstring(text[text.index('<malloc'):])\n"
    "assert r.tag == 'malloc' and r.get('version') == '1', r.tag\n"
    "heaps = r.findall('heap')\n"
    "assert heaps and heaps[0].get('nr') == '0', 'no heap 0'\n"
    "for h in heaps:\n"
    "    assert h.find('sizes') is not None\n"
    "    assert {t.get('type') for t in h.findall('total')} == {'fast', 'rest'}\n"
    "    assert [s.get('type') for s in h.findall('system')] == ['current', 'max']\n"
    "    assert [a.get('type') for a in h.findall('aspace')] == ['total', 'mprotect']\n"
    "    for s in h.find('sizes'):\n"
    "        assert int(s.get('total')) == int(s.get('count')) * int(s.get('to'))\n"
    "totals = {t.get('type'): t for t in r.findall('total')}\n"
    "assert set(totals) == {'fast', 'rest', 'mmap'}, totals\n"
    "assert int(totals['mmap'].get('size')) >= int(sys.argv[2]), totals['mmap'].attrib\n"
    "assert int(totals['mmap'].get('count')) >= 1\n";

void check_xml(const std::string &path, size_t min_mmap) {
    std::string py = python();
    if (py.empty())
        ATF_SKIP("python3 not found");
    testutil::child_result r =
        testutil::run_program({py, "-c", kXmlCheck, path, std::to_string(min_mmap)}, {});
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(glibc__mallinfo2_agrees_with_mallctl);
ATF_TEST_CASE_BODY(glibc__mallinfo2_agrees_with_mallctl) {
    std::vector<void *> v;
    v.reserve(3000);
    for (int i = 0; i < 3000; i++)
        v.push_back(malloc(static_cast<size_t>(i % 300) * 40 + 1));
    void *huge = malloc(10u << 20);
    ATF_REQUIRE(huge != nullptr);
    // Nothing allocates between the refresh and mallinfo2.
    refresh();
    struct mallinfo2 m = mallinfo2();
    size_t allocated = ctl_size("stats.allocated"), huge_allocated = ctl_size("stats.huge.allocated");
    size_t mapped = ctl_size("stats.mapped"), metadata = ctl_size("stats.metadata");
    size_t cached = ctl_size("stats.huge.cached");
    TU_REQUIRE_MSG(m.uordblks == allocated - huge_allocated,
                   "uordblks " << m.uordblks << ", mallctl " << allocated - huge_allocated);
    TU_REQUIRE_MSG(m.arena + m.hblkhd + cached + metadata == mapped,
                   "arena " << m.arena << " hblkhd " << m.hblkhd << " mapped " << mapped);
    ATF_REQUIRE_EQ(m.arena, m.uordblks + m.fordblks);
    TU_REQUIRE_MSG(m.hblkhd >= (10u << 20) && m.hblks >= 1, "hblkhd " << m.hblkhd);
    ATF_REQUIRE(m.ordblks > 0);
    ATF_REQUIRE_EQ(m.usmblks, 0u);
    ATF_REQUIRE_EQ(m.smblks, 0u);
    ATF_REQUIRE_EQ(m.fsmblks, 0u);
    // keepcost: what malloc_trim(0) gives back; after it, nothing dirty.
    free(huge);
    for (void *p : v)
        free(p);
    malloc_trim(0);
    struct mallinfo2 after = mallinfo2();
    TU_REQUIRE_MSG(after.keepcost == 0, "keepcost after malloc_trim: " << after.keepcost);
}

ATF_TEST_CASE_WITHOUT_HEAD(glibc__mallinfo_saturates);
ATF_TEST_CASE_BODY(glibc__mallinfo_saturates) {
    // 3 GiB of address space, never touched.
    void *p = malloc(size_t{3} << 30);
    if (p == nullptr)
        ATF_SKIP("no 3 GiB of address space");
    struct mallinfo2 wide = mallinfo2();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // glibc marks mallinfo so
    struct mallinfo narrow = mallinfo();
#pragma GCC diagnostic pop
    free(p);
    ATF_REQUIRE(wide.hblkhd >= size_t{3} << 30);
    ATF_REQUIRE_EQ(narrow.hblkhd, INT_MAX);
    ATF_REQUIRE_EQ(static_cast<size_t>(narrow.uordblks), wide.uordblks);
}

ATF_TEST_CASE_WITHOUT_HEAD(glibc__mallopt_table);
ATF_TEST_CASE_BODY(glibc__mallopt_table) {
    free(malloc(1));  // initialized
    for (int param : {M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD, M_MMAP_MAX, M_CHECK_ACTION,
                      M_ARENA_TEST, M_NLBLKS, M_GRAIN, M_KEEP})
        TU_REQUIRE_MSG(mallopt(param, 4096) == 1, "param " << param);
    ATF_REQUIRE_EQ(mallopt(M_MXFAST, 64), 1);
    ATF_REQUIRE_EQ(mallopt(M_MXFAST, 100000), 0);
    ATF_REQUIRE_EQ(mallopt(M_MXFAST, -1), 0);
    // The arena table and the junk setting are fixed once initialized.
    unsigned narenas = 0;
    size_t len = sizeof(narenas);
    ATF_REQUIRE_EQ(mallctl("arenas.narenas", &narenas, &len, nullptr, 0), 0);
    ATF_REQUIRE_EQ(mallopt(M_ARENA_MAX, static_cast<int>(narenas) + 1), 0);
    ATF_REQUIRE_EQ(mallopt(M_ARENA_MAX, 0), 1);  // ignored, as glibc
    ATF_REQUIRE_EQ(mallopt(M_PERTURB, 0x33), 0);
    unsigned now = 0;
    ATF_REQUIRE_EQ(mallctl("arenas.narenas", &now, &len, nullptr, 0), 0);
    ATF_REQUIRE_EQ(now, narenas);
    ATF_REQUIRE_EQ(mallopt(12345, 1), 0);
}

ATF_TEST_CASE_WITHOUT_HEAD(glibc__mallopt_before_first_allocation);
ATF_TEST_CASE_BODY(glibc__mallopt_before_first_allocation) {
    // The program's first calls; they win over the environment's option.
    testutil::child_result r = testutil::run_program(
        {target(*this, "glibc_malloc_target_linked"), "first-mallopt"}, {"MALLOC_OPTIONS=NN"});
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    ATF_REQUIRE_EQ(r.out, "mallopt 1 1 narenas 3 junk 1\n");
}

ATF_TEST_CASE_WITHOUT_HEAD(glibc__malloc_info_xml);
ATF_TEST_CASE_BODY(glibc__malloc_info_xml) {
    std::vector<void *> v;
    for (int i = 0; i < 500; i++)
        v.push_back(malloc(static_cast<size_t>(i) * 13 + 1));
    for (int i = 0; i < 500; i += 2)
        free(v[i]);
    void *huge = malloc(6u << 20);
    char path[] = "/tmp/arenalloc-info-XXXXXX";
    int fd = mkstemp(path);
    ATF_REQUIRE(fd >= 0);
    FILE *f = fdopen(fd, "w");
    ATF_REQUIRE(f != nullptr);
    ATF_REQUIRE_EQ(malloc_info(1, f), EINVAL);  // options must be 0, as glibc
    ATF_REQUIRE_EQ(malloc_info(0, f), 0);
    fclose(f);
    check_xml(path, 6u << 20);
    unlink(path);
    free(huge);
    for (int i = 1; i < 500; i += 2)
        free(v[i]);
}

ATF_TEST_CASE_WITHOUT_HEAD(glibc__preloaded_program_sees_arenalloc);
ATF_TEST_CASE_BODY(glibc__preloaded_program_sees_arenalloc) {
    std::string shlib = get_config_var("shlib", ARENALLOC_SHLIB);
    testutil::child_result r = testutil::run_program(
        {target(*this, "glibc_malloc_target"), "mallinfo"}, {"LD_PRELOAD=" + shlib});
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    std::vector<std::string> lines = testutil::lines_of(r.out);
    ATF_REQUIRE(lines.size() > 3);
    ATF_REQUIRE_EQ(lines[0], "malloc arenalloc");
    unsigned long long before = 0, after = 0, nbefore = 0, nafter = 0;
    ATF_REQUIRE_EQ(sscanf(lines[1].c_str(), "hblkhd %llu %llu", &before, &after), 2);
    ATF_REQUIRE_EQ(sscanf(lines[2].c_str(), "hblks %llu %llu", &nbefore, &nafter), 2);
    TU_REQUIRE_MSG(after >= before + (10u << 20), r.out);
    ATF_REQUIRE_EQ(nafter, nbefore + 1);
    char path[] = "/tmp/arenalloc-info-XXXXXX";
    int fd = mkstemp(path);
    ATF_REQUIRE(fd >= 0);
    ATF_REQUIRE_EQ(write(fd, r.out.data(), r.out.size()), static_cast<ssize_t>(r.out.size()));
    close(fd);
    check_xml(path, 10u << 20);
    unlink(path);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, glibc__mallinfo2_agrees_with_mallctl);
    ATF_ADD_TEST_CASE(tcs, glibc__mallinfo_saturates);
    ATF_ADD_TEST_CASE(tcs, glibc__mallopt_table);
    ATF_ADD_TEST_CASE(tcs, glibc__mallopt_before_first_allocation);
    ATF_ADD_TEST_CASE(tcs, glibc__malloc_info_xml);
    ATF_ADD_TEST_CASE(tcs, glibc__preloaded_program_sees_arenalloc);
}

#else  // not glibc

ATF_TEST_CASE_WITHOUT_HEAD(glibc__not_glibc);
ATF_TEST_CASE_BODY(glibc__not_glibc) { ATF_SKIP("glibc's malloc extensions exist only on glibc"); }

ATF_INIT_TEST_CASES(tcs) { ATF_ADD_TEST_CASE(tcs, glibc__not_glibc); }

#endif
