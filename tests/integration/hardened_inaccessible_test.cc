// The S option's inaccessible blocks (arenalloc(3), S): large and huge
// blocks wait in a quarantine after free(), purged and inaccessible, so a
// read or write after free faults and a second free is reported even when
// the next request of the same size came between; malloc(0) gives a
// unique pointer into a range no access reaches, freeable once.  Options
// are read at the first allocation, so each case runs this program again
// with MALLOC_OPTIONS set and INACCESSIBLE_CASE naming what it does (from
// a constructor, before ATF's main); the child prints "key=value" lines,
// flushed before the bad operation.  Every fault case has a control
// without S that must survive it.

#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include <atf-c++.hpp>

#include "arenalloc.h"
#include "test_util.h"

namespace {

const size_t kKiB = 1024;
const size_t kMiB = 1024 * kKiB;

// -------------------------------------------------------------------------
// The program run again: one case, chosen by INACCESSIBLE_CASE.
// -------------------------------------------------------------------------

void put(const char *key, unsigned long long v) {
    printf("%s=%llu\n", key, v);
    fflush(stdout);
}

void put_ptr(const char *key, const void *p) {
    put(key, static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
}

size_t case_size(void) {
    const char *v = getenv("INACCESSIBLE_SIZE");
    return v != NULL ? static_cast<size_t>(strtoull(v, NULL, 0)) : 256 * kKiB;
}

// The kernel's count of this process's resident pages, in KiB.
unsigned long long resident_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (f != NULL) {
        if (fscanf(f, "%llu %llu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * testutil::system_page_size() / kKiB;
}

// A block written all over, freed, then written (or read) once more.
void access_after_free(bool write) {
    const size_t n = case_size();
    char *p = static_cast<char *>(malloc(n));
    memset(p, 'a', n);
    free(testutil::opaque(p));
    put("freed", 1);
    volatile char *v = testutil::opaque(p) + n / 2;
    if (write)
        *v = 'b';
    else
        put("read", static_cast<unsigned char>(*v));
    put("survived", 1);
}

// free(p), the same size again (without S: p itself), free(p) again.
void double_free_after_reuse(void) {
    const size_t n = case_size();
    void *p = malloc(n);
    free(p);
    void *q = malloc(n);
    put_ptr("ptr", p);
    put("reused", q == p);
    free(testutil::opaque(p));
    put("survived", 1);
}

// A freed block stays out of use for the quarantine's 64 blocks, then
// comes back.
void quarantine_order(void) {
    const size_t n = case_size();
    void *p = malloc(n);
    free(p);
    size_t early = 0;
    for (int i = 0; i < 63; i++) {
        void *q = malloc(n);
        early += q == p;
        free(q);
    }
    put("early", early);
    void *last = malloc(n);
    early += last == p;
    free(last);  // the 64th free after p's: p leaves
    std::vector<void *> kept;
    kept.reserve(1000);
    size_t late = 0;
    while (late == 0 && kept.size() < 1000) {
        kept.push_back(malloc(n));
        late = kept.back() == p;
    }
    put("late", late);
}

// Blocks freed into the quarantine are not resident, past the first 4 MiB.
void quarantine_resident(void) {
    const size_t sizes[] = { kMiB, kMiB, kMiB, kMiB, 8 * kMiB, kMiB, kMiB, kMiB, kMiB, 8 * kMiB };
    std::vector<char *> blocks;
    size_t total = 0;
    const unsigned long long before = resident_kib();
    for (size_t n : sizes) {
        char *p = static_cast<char *>(malloc(n));
        memset(p, 'r', n);
        blocks.push_back(p);
        total += n;
    }
    const unsigned long long full = resident_kib();
    for (char *p : blocks)
        free(p);
    const unsigned long long after = resident_kib();
    put("written_kib", total / kKiB);
    put("grew_kib", full > before ? full - before : 0);
    put("left_kib", after > before ? after - before : 0);
}

// With 100 MiB of address space to spare, a 64 MiB block freed (into the
// quarantine) and asked for again: the quarantine must give way.
void quarantine_under_limit(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f == NULL || fscanf(f, "%llu", &pages) != 1) {
        put("no_statm", 1);
        return;
    }
    fclose(f);
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = pages * testutil::system_page_size() + 100 * kMiB;
    if (setrlimit(RLIMIT_AS, &rl) != 0) {
        put("no_limit", 1);
        return;
    }
    void *p = malloc(64 * kMiB);
    put("first", p != NULL);
    free(p);
    void *q = malloc(64 * kMiB);
    put("second", q != NULL);
    free(q);
}

void zero_access(bool write) {
    volatile char *z = testutil::opaque(static_cast<char *>(malloc(0)));
    put_ptr("ptr", const_cast<char *>(z));
    if (write)
        *z = 'z';
    else
        put("read", static_cast<unsigned char>(*z));
    put("survived", 1);
}

void zero_double_free(void) {
    void *z = malloc(0);
    put_ptr("ptr", z);
    free(z);
    free(testutil::opaque(z));
    put("survived", 1);
}

// malloc(0), calloc(0, n) and realloc(NULL, 0): distinct pointers, 0
// usable bytes; realloc to 100 bytes gives an ordinary block.
void zero_use(void) {
    void *z[] = { malloc(0), calloc(0, 10), calloc(10, 0), realloc(NULL, 0) };
    size_t distinct = 1, usable = 0;
    for (size_t i = 0; i < 4; i++) {
        usable += malloc_usable_size(z[i]);
        for (size_t j = 0; j < i; j++)
            distinct &= z[i] != z[j] && z[i] != NULL;
    }
    put("distinct", distinct);
    put("usable", usable);
    char *r = static_cast<char *>(realloc(z[0], 100));
    memset(r, 'x', 100);
    put("grown_usable", malloc_usable_size(r));
    free(r);
    free(z[1]);
    free_sized(z[2], 0);
    free(z[3]);
    put("done", 1);
}

// posix_memalign with an alignment past a chunk's pages, for 1 byte and
// more: the usable size is that of a big block.
void aligned_usable(void) {
    for (size_t n : { size_t{1}, size_t{100}, size_t{5000} }) {
        void *p = NULL;
        if (posix_memalign(&p, 2 * kMiB, n) != 0) {
            put("failed", n);
            return;
        }
        const size_t u = malloc_usable_size(p);
        memset(p, 1, u);
        put(("usable_" + std::to_string(n)).c_str(), u);
        free(p);
    }
    put("done", 1);
}

void write_after_free(void) { access_after_free(true); }
void read_after_free(void) { access_after_free(false); }
void zero_write(void) { zero_access(true); }
void zero_read(void) { zero_access(false); }

const struct {
    const char *name;
    void (*run)(void);
} kCases[] = {
    { "write_after_free", write_after_free },
    { "read_after_free", read_after_free },
    { "double_free_after_reuse", double_free_after_reuse },
    { "quarantine_order", quarantine_order },
    { "quarantine_resident", quarantine_resident },
    { "quarantine_under_limit", quarantine_under_limit },
    { "zero_write", zero_write },
    { "zero_read", zero_read },
    { "zero_double_free", zero_double_free },
    { "zero_use", zero_use },
    { "aligned_usable", aligned_usable },
};

__attribute__((constructor)) void
run_case(void)
{
    const char *name = getenv("INACCESSIBLE_CASE");
    if (name == NULL)
        return;
    bool known = false;
    for (const auto &c : kCases)
        if (strcmp(c.name, name) == 0) {
            known = true;
            c.run();
        }
    if (!known)
        put("unknown_case", 1);
    fflush(stdout);
    _exit(0);
}

// -------------------------------------------------------------------------
// The tests.
// -------------------------------------------------------------------------

struct Outcome {
    testutil::child_result r;
    std::map<std::string, unsigned long long> values;

    unsigned long long at(const std::string &key) const {
        const auto it = values.find(key);
        TU_REQUIRE_MSG(it != values.end(), "no " << key << " in [" << r.out << "]; "
                                                 << r.describe());
        return it->second;
    }
    bool died_of(int sig) const {
        return !r.timed_out && WIFSIGNALED(r.status) && WTERMSIG(r.status) == sig &&
               values.count("survived") == 0;
    }
};

Outcome run_case_with(const std::string &name, const std::string &opts, size_t size = 0) {
    std::vector<std::string> env = { "INACCESSIBLE_CASE=" + name, "MALLOC_OPTIONS=" + opts };
    if (size != 0)
        env.push_back("INACCESSIBLE_SIZE=" + std::to_string(size));
    Outcome o;
    o.r = testutil::run_program({ testutil::self_path() }, env, "/dev/null", 120);
    for (const std::string &line : testutil::lines_of(o.r.out)) {
        const size_t eq = line.find('=');
        if (eq != std::string::npos)
            o.values[line.substr(0, eq)] = strtoull(line.c_str() + eq + 1, NULL, 10);
    }
    TU_REQUIRE_MSG(o.values.count("unknown_case") == 0, name);
    return o;
}

// The child's stderr is exactly the one report line expected.
void require_report(const Outcome &o, const std::string &fn, const std::string &finding,
                    const std::string &what) {
    TU_REQUIRE_MSG(o.died_of(SIGABRT), what << ": " << o.r.describe() << "; stdout [" << o.r.out << "]");
    char ptr[32];
    snprintf(ptr, sizeof(ptr), "0x%llx", o.at("ptr"));
    const std::string want = "arenalloc: " + fn + "(): invalid pointer " + ptr + ": " + finding + "\n";
    TU_REQUIRE_MSG(o.r.err == want, what << ": stderr [" << o.r.err << "], expected [" << want << "]");
}

// A byte past the first large class: with 4 KiB pages one the thread
// caches hold without S (16 to 64 KiB), which under S goes to the
// quarantine all the same; with bigger pages a large block still.
size_t cached_large_size(void) { return testutil::first_large_class() + 1; }

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(big__access_after_free_faults);
ATF_TEST_CASE_BODY(big__access_after_free_faults)
{
    for (const char *name : { "write_after_free", "read_after_free" })
        for (size_t n : { cached_large_size(), 256 * kKiB, 8 * kMiB }) {
            const std::string what = std::string(name) + ", " + std::to_string(n) + " bytes";
            const Outcome s = run_case_with(name, "S", n);
            TU_REQUIRE_MSG(s.at("freed") == 1 && s.died_of(SIGSEGV),
                           what << ": " << s.r.describe() << "; stdout [" << s.r.out << "]");
            TU_REQUIRE_MSG(s.r.err.empty(), what << ": " << s.r.err);
            const Outcome dflt = run_case_with(name, "s", n);
            TU_REQUIRE_MSG(dflt.r.exited_ok() && dflt.at("survived") == 1,
                           what << " without S: " << dflt.r.describe());
        }
}

ATF_TEST_CASE_WITHOUT_HEAD(big__double_free_after_reuse_reported);
ATF_TEST_CASE_BODY(big__double_free_after_reuse_reported)
{
    for (size_t n : { cached_large_size(), 256 * kKiB, kMiB, 8 * kMiB }) {
        const std::string what = std::to_string(n) + " bytes";
        const Outcome s = run_case_with("double_free_after_reuse", "S", n);
        TU_REQUIRE_MSG(s.at("reused") == 0, what << ": the block came back at once");
        require_report(s, "free", "block already free (in the quarantine)", what);
    }
    // Without S the next request takes the block back, and the second
    // free frees the new owner's block unnoticed.
    const Outcome dflt = run_case_with("double_free_after_reuse", "s", kMiB);
    TU_REQUIRE_MSG(dflt.at("reused") == 1 && dflt.r.exited_ok() && dflt.r.err.empty(),
                   "without S: " << dflt.r.describe());
}

ATF_TEST_CASE_WITHOUT_HEAD(big__quarantine_is_fifo_and_bounded);
ATF_TEST_CASE_BODY(big__quarantine_is_fifo_and_bounded)
{
    const Outcome s = run_case_with("quarantine_order", "S", 256 * kKiB);
    TU_REQUIRE_MSG(s.r.exited_ok(), s.r.describe());
    TU_REQUIRE_MSG(s.at("early") == 0, "a freed block came back within 64 frees");
    TU_REQUIRE_MSG(s.at("late") == 1, "a block never left the quarantine");
    const Outcome dflt = run_case_with("quarantine_order", "s", 256 * kKiB);
    TU_REQUIRE_MSG(dflt.r.exited_ok() && dflt.at("early") != 0, "without S: " << dflt.r.out);
}

ATF_TEST_CASE_WITHOUT_HEAD(big__quarantine_not_resident);
ATF_TEST_CASE_BODY(big__quarantine_not_resident)
{
    const Outcome s = run_case_with("quarantine_resident", "S");
    TU_REQUIRE_MSG(s.r.exited_ok(), s.r.describe());
    const unsigned long long written = s.at("written_kib");
    // The blocks were resident while in use; after free() only the first
    // 4 MiB of them keep their pages (kBigQuarantineResidentBytes), and a
    // sixteenth more is the margin for the rest of the process.
    TU_REQUIRE_MSG(s.at("grew_kib") >= written * 3 / 4, "grew by " << s.at("grew_kib") << " KiB");
    TU_REQUIRE_MSG(s.at("left_kib") <= 4096 + written / 16,
                   "after free, " << s.at("left_kib") << " KiB of " << written << " still resident");
}

ATF_TEST_CASE_WITHOUT_HEAD(big__quarantine_gives_way_under_a_limit);
ATF_TEST_CASE_BODY(big__quarantine_gives_way_under_a_limit)
{
    for (const char *opts : { "S", "s" }) {
        const Outcome o = run_case_with("quarantine_under_limit", opts);
        TU_REQUIRE_MSG(o.r.exited_ok() && o.at("first") == 1 && o.at("second") == 1,
                       opts << ": " << o.r.describe() << "; stdout [" << o.r.out << "]");
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(zero__access_faults);
ATF_TEST_CASE_BODY(zero__access_faults)
{
    for (const char *name : { "zero_write", "zero_read" }) {
        const Outcome s = run_case_with(name, "S");
        TU_REQUIRE_MSG(s.died_of(SIGSEGV) && s.r.err.empty(),
                       name << ": " << s.r.describe() << "; stdout [" << s.r.out << "]");
        const Outcome dflt = run_case_with(name, "s");
        TU_REQUIRE_MSG(dflt.r.exited_ok() && dflt.at("survived") == 1,
                       name << " without S: " << dflt.r.describe());
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(zero__double_free_reported);
ATF_TEST_CASE_BODY(zero__double_free_reported)
{
    for (int run = 0; run < 2; run++)
        require_report(run_case_with("zero_double_free", "S"), "free",
                       "block already free (double free)", "malloc(0) freed twice");
}

ATF_TEST_CASE_WITHOUT_HEAD(zero__blocks_are_unique_and_freeable);
ATF_TEST_CASE_BODY(zero__blocks_are_unique_and_freeable)
{
    for (const char *opts : { "S", "s" }) {
        const Outcome o = run_case_with("zero_use", opts);
        TU_REQUIRE_MSG(o.r.exited_ok() && o.r.err.empty() && o.at("done") == 1,
                       opts << ": " << o.r.describe());
        TU_REQUIRE_MSG(o.at("distinct") == 1, opts << ": two zero-size blocks share a pointer");
        TU_REQUIRE_MSG(o.at("grown_usable") >= 100, opts << ": " << o.r.out);
        if (std::string(opts) == "S")
            TU_REQUIRE_MSG(o.at("usable") == 0, "S: zero-size blocks report usable bytes");
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(aligned__big_alignment_usable_size);
ATF_TEST_CASE_BODY(aligned__big_alignment_usable_size)
{
    const size_t page = testutil::page_size();
    for (const char *opts : { "S", "s" }) {
        const Outcome o = run_case_with("aligned_usable", opts);
        TU_REQUIRE_MSG(o.r.exited_ok() && o.at("done") == 1, opts << ": " << o.r.describe());
        for (size_t n : { size_t{1}, size_t{100}, size_t{5000} }) {
            const unsigned long long u = o.at("usable_" + std::to_string(n));
            // Under S: the request rounded to pages (the guard page is not
            // usable); without S at least the request.
            if (std::string(opts) == "S")
                TU_REQUIRE_MSG(u == (n + page - 1) / page * page, "S, " << n << " bytes: " << u);
            else
                TU_REQUIRE_MSG(u >= n, "s, " << n << " bytes: " << u);
        }
    }
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, big__access_after_free_faults);
    ATF_ADD_TEST_CASE(tcs, big__double_free_after_reuse_reported);
    ATF_ADD_TEST_CASE(tcs, big__quarantine_is_fifo_and_bounded);
    ATF_ADD_TEST_CASE(tcs, big__quarantine_not_resident);
    ATF_ADD_TEST_CASE(tcs, big__quarantine_gives_way_under_a_limit);
    ATF_ADD_TEST_CASE(tcs, zero__access_faults);
    ATF_ADD_TEST_CASE(tcs, zero__double_free_reported);
    ATF_ADD_TEST_CASE(tcs, zero__blocks_are_unique_and_freeable);
    ATF_ADD_TEST_CASE(tcs, aligned__big_alignment_usable_size);
}
