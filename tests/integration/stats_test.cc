// malloc_stats_print: the text report (fits 100 columns, per-class live
// counts), both JSON reports (parsed by python3's json module): arenalloc's
// own layout ("A") and jemalloc 5.3's ("J", its figures equal to mallctl's
// after an epoch refresh), the option letters, the P report at exit, exact
// totals, and printing while other threads allocate.
#include <atf-c++.hpp>

#include <errno.h>
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
    std::string json = report("A");
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

// The "J" report goes into static memory: appending to a string would
// allocate while the report is being read, and its figures must stay those
// of the epoch refresh just before.
char g_json[1 << 20];
size_t g_json_len = 0;

void append_static(void *, const char *s) {
    size_t n = strlen(s);
    if (g_json_len + n < sizeof(g_json)) {
        memcpy(g_json + g_json_len, s, n);
        g_json_len += n;
    }
}

void *allocate_some(void *out) {
    void **blocks = static_cast<void **>(out);
    for (int i = 0; i < 64; i++)
        blocks[i] = malloc(static_cast<size_t>(i) * 700 + 1);
    return nullptr;
}

// A mallctl figure of any width (size_t, uint64_t, unsigned or bool).
int read_figure(const std::string &name, uint64_t *v) {
    for (size_t width : {8, 4, 1}) {
        unsigned char buf[8] = {0};
        size_t len = width;
        int e = mallctl(name.c_str(), buf, &len, nullptr, 0);
        if (e == EINVAL)
            continue;
        if (e != 0)
            return e;
        *v = width == 8 ? *reinterpret_cast<uint64_t *>(buf)
                        : width == 4 ? *reinterpret_cast<uint32_t *>(buf) : buf[0];
        return 0;
    }
    return EINVAL;
}

std::string write_temp(const char *data, size_t len) {
    char path[] = "/tmp/arenalloc-stats-XXXXXX";
    int fd = mkstemp(path);
    ATF_REQUIRE(fd >= 0);
    ATF_REQUIRE_EQ(write(fd, data, len), static_cast<ssize_t>(len));
    close(fd);
    return path;
}

std::string check_script() {
    return std::string(ARENALLOC_TOP_SRCDIR) + "/tests/integration/stats_jemalloc_check.py";
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(stats__jemalloc_json_equals_mallctl);
ATF_TEST_CASE_BODY(stats__jemalloc_json_equals_mallctl) {
    std::string python = testutil::find_program("python3", {"/usr/bin/python3"});
    if (python.empty())
        ATF_SKIP("python3 not found");
    // Blocks of every kind, from two threads (two arenas, so a merged
    // section too).
    void *mine[64], *theirs[64];
    allocate_some(mine);
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, allocate_some, theirs), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    void *big = malloc(300000), *huge = malloc(6 << 20);
    // The first refresh takes metadata memory for the snapshot itself; the
    // second sees the heap as the report will.
    uint64_t epoch = 1;
    size_t len = sizeof(epoch);
    ATF_REQUIRE_EQ(mallctl("epoch", &epoch, &len, &epoch, sizeof(epoch)), 0);
    ATF_REQUIRE_EQ(mallctl("epoch", &epoch, &len, &epoch, sizeof(epoch)), 0);
    g_json_len = 0;
    malloc_stats_print(append_static, nullptr, "J");
    std::string path = write_temp(g_json, g_json_len);

    testutil::child_result paths = testutil::run_program({python, check_script(), "paths", path}, {});
    TU_REQUIRE_MSG(paths.exited_ok(), paths.describe());
    testutil::child_result res = testutil::run_program({python, check_script(), "names", path}, {});
    unlink(path.c_str());
    TU_REQUIRE_MSG(res.exited_ok(), res.describe());

    // Every figure against mallctl's (unchanged since the refresh: the
    // snapshot is only retaken on the next epoch write).
    unsigned compared = 0;
    std::string problems;
    for (const std::string &line : testutil::lines_of(res.out)) {
        char name[256], older[256];
        unsigned long long want;
        ATF_REQUIRE_EQ(sscanf(line.c_str(), "%255s %255s %llu", name, older, &want), 3);
        uint64_t got = 0;
        int e = read_figure(name, &got);
        if (e == ENOENT && strcmp(older, "-") != 0)
            e = read_figure(older, &got);
        // config.* names are compared where mallctl has them.
        if (e == ENOENT && testutil::starts_with(name, "config."))
            continue;
        if (e != 0)
            problems += std::string(name) + ": mallctl error " + std::to_string(e) + "\n";
        else if (got != want)
            problems += std::string(name) + ": report " + std::to_string(want) + ", mallctl " +
                        std::to_string(got) + "\n";
        compared++;
    }
    TU_REQUIRE_MSG(problems.empty(), problems);
    TU_REQUIRE_MSG(compared > 500, "only " << compared << " figures compared");
    for (int i = 0; i < 64; i++) {
        free(mine[i]);
        free(theirs[i]);
    }
    free(big);
    free(huge);
}

ATF_TEST_CASE_WITHOUT_HEAD(stats__option_letters);
ATF_TEST_CASE_BODY(stats__option_letters) {
    // Two arenas in use, so the merged section has something to add.
    void *theirs[64];
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, nullptr, allocate_some, theirs), 0);
    ATF_REQUIRE_EQ(pthread_join(t, nullptr), 0);
    void *mine = malloc(100);
    struct Case {
        const char *opts;
        const char *present;  // nullptr: nothing required
        const char *absent;
    } cases[] = {
        {"J", "\"merged\":{", nullptr},
        {"J", "\"0\":{", "\"arenalloc\""},
        {"Jm", "\"0\":{", "\"merged\""},
        {"Ja", "\"merged\":{", "\"0\":{"},
        {"Jma", "\"stats\":{", "\"stats.arenas\""},
        {"Jg", "\"stats\":{", "\"opt\":"},
        {"Jb", "\"lextents\":", "\"bins\":"},
        {"Jl", "\"bins\":", "\"lextents\":"},
        {"Jx", "\"bins\":", "\"mutexes\":"},
        {"A", "{\"arenalloc\": {", "\"jemalloc\""},
        {"AJ", "{\"arenalloc\": {", "\"jemalloc\""},
        {"", "merged: threads", nullptr},
        {"", "; lock: ", nullptr},
        {"m", "arena 0: ", "merged: "},
        {"x", "purging: ", "; lock: "},
        {"t", "Version: ", "Allocated: "},
        {"g", "Allocated: ", "Version: "},
        {"a", "merged: ", "arena 0: "},
    };
    for (const Case &c : cases) {
        std::string out = report(c.opts);
        if (c.present != nullptr)
            TU_REQUIRE_MSG(out.find(c.present) != std::string::npos,
                           "opts '" << c.opts << "': no " << c.present << " in " << out.substr(0, 300));
        if (c.absent != nullptr)
            TU_REQUIRE_MSG(out.find(c.absent) == std::string::npos,
                           "opts '" << c.opts << "': " << c.absent << " in " << out.substr(0, 300));
    }
    free(mine);
    for (void *p : theirs)
        free(p);
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
        std::string text = report(n % 3 == 0 ? "" : n % 3 == 1 ? "J" : "A");
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
    ATF_ADD_TEST_CASE(tcs, stats__jemalloc_json_equals_mallctl);
    ATF_ADD_TEST_CASE(tcs, stats__option_letters);
    ATF_ADD_TEST_CASE(tcs, stats__print_while_others_allocate);
}
