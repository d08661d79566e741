// malloc_stats_print: the text report (fits 100 columns, per-class live
// counts), the JSON report (parsed by python3's json module), the P report
// at exit, exact totals, and printing while other threads allocate.
#include <atf-c++.hpp>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "arenalloc.h"
#include "test_util.h"

namespace {

void append(void *opaque, const char *s) { static_cast<std::string *>(opaque)->append(s); }

std::string report(const char *opts) {
    std::string out;
    malloc_stats_print(append, &out, opts);
    return out;
}

// The number after `key` in the first line that starts with `prefix`.
uint64_t field(const std::string &text, const std::string &prefix, const std::string &key) {
    for (const std::string &line : testutil::lines_of(text)) {
        if (!testutil::starts_with(line, prefix))
            continue;
        size_t at = line.find(key);
        if (at != std::string::npos)
            return std::stoull(line.substr(at + key.size()));
    }
    ATF_FAIL("no '" + key + "' in a line starting '" + prefix + "'");
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(stats__text_report_fits_100_columns);
ATF_TEST_CASE_BODY(stats__text_report_fits_100_columns) {
    std::vector<void *> v;
    for (size_t s = 1; s < 200000; s = s * 3 / 2 + 1)
        v.push_back(malloc(s));
    std::string text = report("");
    ATF_REQUIRE(testutil::starts_with(text, "___ Begin arenalloc statistics ___\n"));
    ATF_REQUIRE(text.find("--- End arenalloc statistics ---\n") != std::string::npos);
    for (const std::string &line : testutil::lines_of(text))
        TU_REQUIRE_MSG(line.size() <= 100, "line of " << line.size() << ": [" << line << "]");
    for (void *p : v)
        free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(stats__text_counts_live_regions_per_class);
ATF_TEST_CASE_BODY(stats__text_counts_live_regions_per_class) {
    // 777 live blocks of the 448-byte class (bin 15): the bin row shows
    // them among its current regions (cached regions count as out too).
    std::string before = report("a");
    std::vector<void *> v;
    for (int i = 0; i < 777; i++)
        v.push_back(malloc(440));
    std::string text = report("gml");
    uint64_t curregs = 0;
    for (const std::string &line : testutil::lines_of(text)) {
        unsigned bin, size, regs, pgs;
        unsigned long long nmalloc, ndalloc, nreq, cur;
        if (sscanf(line.c_str(), "%u %u %u %u %llu %llu %llu %llu", &bin, &size, &regs, &pgs,
                   &nmalloc, &ndalloc, &nreq, &cur) == 8 && size == 448)
            curregs += cur;
    }
    TU_REQUIRE_MSG(curregs >= 777 && curregs < 777 + 200, "curregs " << curregs << "\n" << text);
    for (void *p : v)
        free(p);
}

ATF_TEST_CASE_WITHOUT_HEAD(stats__allocated_is_exact);
ATF_TEST_CASE_BODY(stats__allocated_is_exact) {
    // After the caller's cache is flushed (malloc_trim returns it), the
    // allocated total is exactly the usable size of what is live.
    std::vector<void *> v;
    v.reserve(400);  // the vector's own buffer is live throughout
    // A first report makes whatever the C++ and C libraries set up once
    // (stream buffers) before the figure that counts is taken.
    field(report("a"), "Allocated: ", "Allocated: ");
    malloc_trim(0);
    uint64_t base = field(report("a"), "Allocated: ", "Allocated: ");
    uint64_t live = 0;
    for (size_t s : {24, 100, 3000, 40000, 300000, 3000000}) {
        for (int i = 0; i < 50; i++) {
            void *p = malloc(s);
            live += malloc_usable_size(p);
            v.push_back(p);
        }
    }
    malloc_trim(0);
    uint64_t now = field(report("a"), "Allocated: ", "Allocated: ");
    TU_REQUIRE_MSG(now == base + live, "allocated " << now << " expected " << base + live);
    for (void *p : v)
        free(p);
    malloc_trim(0);
    uint64_t after = field(report("a"), "Allocated: ", "Allocated: ");
    TU_REQUIRE_MSG(after == base, "allocated " << after << " expected " << base);
}

ATF_TEST_CASE_WITHOUT_HEAD(stats__json_parses);
ATF_TEST_CASE_BODY(stats__json_parses) {
    std::string python = testutil::find_program("python3", {"/usr/bin/python3"});
    if (python.empty())
        ATF_SKIP("python3 not found");
    void *p = malloc(1000), *q = malloc(100000), *r = malloc(5 << 20);
    std::string json = report("J");
    char path[] = "/tmp/arenalloc-stats-XXXXXX";
    int fd = mkstemp(path);
    ATF_REQUIRE(fd >= 0);
    ATF_REQUIRE_EQ(write(fd, json.data(), json.size()), static_cast<ssize_t>(json.size()));
    close(fd);
    testutil::child_result res = testutil::run_program(
        {python, "-c",
         "import json,sys; d=json.load(open(sys.argv[1]))['arenalloc']; "
         "s=d['stats']; assert d['schema']==1; assert s['allocated']>0; "
         "assert s['huge']['current']>=1; assert len(d['arenas'])>=1; "
         "a=d['arenas'][0]; assert len(a['bins'])==d['config']['nbins']; "
         "print(s['allocated'])",
         path},
        {});
    unlink(path);
    TU_REQUIRE_MSG(res.exited_ok(), res.describe() << " json: " << json.substr(0, 400));
    free(p);
    free(q);
    free(r);
}

namespace {

std::atomic<bool> g_stop{false};

void *churn(void *) {
    testutil::rng rng(7);
    std::vector<void *> v;
    while (!g_stop.load()) {
        size_t s = 1 + rng.next() % 70000;
        v.push_back(malloc(s));
        if (v.size() > 500) {
            for (void *p : v)
                free(p);
            v.clear();
        }
    }
    for (void *p : v)
        free(p);
    return nullptr;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(stats__print_while_others_allocate);
ATF_TEST_CASE_BODY(stats__print_while_others_allocate) {
    pthread_t t[4];
    for (pthread_t &th : t)
        ATF_REQUIRE_EQ(pthread_create(&th, nullptr, churn, nullptr), 0);
    double end = testutil::now_seconds() + 1.5;
    unsigned n = 0;
    while (testutil::now_seconds() < end) {
        std::string text = report(n % 2 == 0 ? "" : "J");
        ATF_REQUIRE(!text.empty());
        n++;
    }
    g_stop.store(true);
    for (pthread_t &th : t)
        ATF_REQUIRE_EQ(pthread_join(th, nullptr), 0);
    ATF_REQUIRE(n > 0);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, stats__text_report_fits_100_columns);
    ATF_ADD_TEST_CASE(tcs, stats__text_counts_live_regions_per_class);
    ATF_ADD_TEST_CASE(tcs, stats__allocated_is_exact);
    ATF_ADD_TEST_CASE(tcs, stats__json_parses);
    ATF_ADD_TEST_CASE(tcs, stats__print_while_others_allocate);
}
