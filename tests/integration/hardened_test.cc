// The hardened profile (MALLOC_OPTIONS flag S, arenalloc(3)): a canary
// after each small block checked at free and realloc, junk on free checked
// at reuse, a quarantine that delays reuse, guard pages after large and
// huge blocks.  Options are read once, at the first allocation, so every
// case runs this program again (/proc/self/exe) with MALLOC_OPTIONS set and
// HARDENED_CHILD naming what the child does; the child does it from a
// constructor, prints "key=value" lines (flushed before any bad operation)
// and exits before ATF's main.  Death cases check the exact signal and the
// one report line, repeat over several sizes and runs (layouts differ), and
// run a control with S off ("s") that must not die, so that they can fail.

#include <malloc.h>
#include <signal.h>
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

const size_t KiB = 1024;
const size_t MiB = 1024 * KiB;

// =========================================================================
// The child side: runs from a constructor when HARDENED_CHILD is set.
// =========================================================================

size_t env_size(const char *name, size_t dflt) {
    const char *v = getenv(name);
    return v != NULL ? static_cast<size_t>(strtoull(v, NULL, 0)) : dflt;
}

void say(const char *key, const void *p) {
    printf("%s=%p\n", key, p);
    fflush(stdout);
}

void say(const char *key, size_t v) {
    printf("%s=%zu\n", key, v);
    fflush(stdout);
}

// One byte past the requested size, then free (or realloc).
void child_overflow(bool nul, bool by_realloc) {
    const size_t n = env_size("HARDENED_SIZE", 24);
    char *p = static_cast<char *>(malloc(n));
    if (p == NULL) {
        say("error", n);
        return;
    }
    say("ptr", p);
    if (nul) {
        // A string of n characters copied into n bytes: its NUL lands one
        // byte too far.
        std::string s(n, 'a');
        strcpy(testutil::opaque(p), s.c_str());
    } else {
        memset(p, 'a', n);
        testutil::opaque(p)[n] = 'x';  // even: never the (odd) canary byte
    }
    testutil::escape(p);
    if (by_realloc)
        p = static_cast<char *>(realloc(testutil::opaque(p), 2 * n + 1));
    free(testutil::opaque(p));
    say("survived", size_t{1});
}

// Writes into a freed block, then allocates the class until the block
// comes back.
void child_write_after_free(void) {
    const size_t n = env_size("HARDENED_SIZE", 100);
    const size_t off = env_size("HARDENED_OFFSET", 0);
    enum { kOthers = 80 };
    void *others[kOthers];
    for (int i = 0; i < kOthers; i++)
        others[i] = malloc(n);
    unsigned char *p = static_cast<unsigned char *>(malloc(n));
    say("ptr", p);
    free(p);
    testutil::opaque(p)[off] = 0;
    testutil::escape(p);
    // Enough frees to push p out of the quarantine.
    for (int i = 0; i < kOthers; i++)
        free(others[i]);
    for (int i = 0; i < 200000; i++) {
        void *q = malloc(n);
        testutil::escape(q);
        if (q == p) {
            say("reused", size_t{1});
            return;
        }
    }
    say("never_reused", size_t{1});
}

void child_double_free(void) {
    const size_t n = env_size("HARDENED_SIZE", 100);
    void *p = malloc(n);
    say("ptr", p);
    free(p);
    free(testutil::opaque(p));
    say("survived", size_t{1});
}

// A freed block must not come back within the quarantine's depth (32
// frees), and must come back after it.
void child_quarantine(void) {
    const size_t n = 100;
    enum { kDepth = 32 };
    // Fill the quarantine with blocks of another class, so that it is
    // full (and FIFO order alone decides) when x enters.
    std::vector<void *> fill;
    for (int i = 0; i < kDepth; i++)
        fill.push_back(malloc(500));
    for (void *f : fill)
        free(f);
    // Freed and asked for again at once: a thread cache would hand it back.
    void *y = malloc(n);
    free(y);
    void *z = malloc(n);
    say("immediate", size_t{z == y});
    std::vector<void *> v;
    for (int i = 0; i < kDepth; i++)
        v.push_back(malloc(n));
    // Reserved before x is freed: a vector growing in the loop below would
    // free its old storage into the quarantine too, and push x out early.
    std::vector<void *> kept;
    kept.reserve(kDepth);
    void *x = malloc(n);
    free(x);
    size_t early = 0;
    for (int i = 0; i < kDepth - 1; i++) {
        free(v[static_cast<size_t>(i)]);
        void *q = malloc(n);
        kept.push_back(q);
        early += q == x;
    }
    say("early", early);
    free(v[kDepth - 1]);  // the 32nd free after x's: x leaves the quarantine
    size_t late = 0;
    for (int i = 0; i < 100000 && late == 0; i++) {
        void *q = malloc(n);
        testutil::escape(q);
        late = q == x;
    }
    say("late", late);
}

// Writes the whole usable size, then one byte past it.
void child_guard(void) {
    const size_t n = env_size("HARDENED_SIZE", 100 * KiB);
    const size_t align = env_size("HARDENED_ALIGN", 0);
    void *v = NULL;
    if (align != 0) {
        if (posix_memalign(&v, align, n) != 0)
            v = NULL;
    } else {
        v = malloc(n);
    }
    char *p = static_cast<char *>(v);
    if (p == NULL) {
        say("error", n);
        return;
    }
    const size_t u = malloc_usable_size(p);
    memset(p, 1, u);
    testutil::escape(p);
    say("usable", u);
    testutil::opaque(p)[u] = 1;
    testutil::escape(p);
    say("survived", size_t{1});
}

// Ordinary use: every function, contents kept, usable size = request.
// free_sized and free_aligned_sized with the sizes the blocks were asked
// for, from malloc, calloc, realloc and aligned_alloc; then, when
// HARDENED_WRONG is set, one size that is wrong (the report must come).
void child_free_sized(void) {
    const size_t sizes[] = { 1, 16, 100, 4096, 8192, 14336, 16 * KiB, 20000, 64 * KiB,
                             100000, MiB, 2 * MiB, 3 * MiB + 5, 8 * MiB };
    for (size_t n : sizes) {
        free_sized(malloc(n), n);
        free_sized(calloc(1, n), n);
        free_sized(realloc(malloc(1), n), n);
        for (size_t a : { size_t(16), size_t(64), size_t(4096), size_t(64) * KiB })
            free_aligned_sized(aligned_alloc(a, n), a, n);
    }
    printf("correct_sizes_done=1\n");
    fflush(stdout);
    if (getenv("HARDENED_WRONG") != NULL)
        free_sized(malloc(100), 5000);
    printf("wrong_size_passed=1\n");
}

void child_api(void) {
    testutil::rng r(12345);
    size_t bad = 0;
    for (int i = 0; i < 8000; i++) {
        const size_t n = static_cast<size_t>(r.log_range(1, 4 * MiB));
        char *p;
        size_t align = 8;
        switch (i % 4) {
        case 0:
            p = static_cast<char *>(malloc(n));
            break;
        case 1:
            p = static_cast<char *>(calloc(1, n));
            if (p != NULL && testutil::first_not(p, n, 0) != n)
                bad++;
            break;
        case 2: {
            void *v = NULL;
            align = 64;
            p = posix_memalign(&v, align, n) == 0 ? static_cast<char *>(v) : NULL;
            if (p != NULL && !testutil::is_aligned(p, 64))
                bad++;
            break;
        }
        default:
            align = 4096;
            p = static_cast<char *>(aligned_alloc(align, n));
            if (p != NULL && !testutil::is_aligned(p, 4096))
                bad++;
            break;
        }
        if (p == NULL) {
            say("error", n);
            return;
        }
        const size_t u = malloc_usable_size(p);
        // Small blocks (those whose request, 5 bytes of canary and size
        // trailer and the alignment fit the largest small class) report
        // the request; large and huge ones at least it.
        const bool small = ((n + 5 + align - 1) & ~(align - 1)) <= testutil::largest_small_class();
        if (small ? u != n : u < n)
            bad++;
        const uint64_t seed = testutil::pattern_seed(p, n);
        testutil::pattern_fill(p, n, seed);
        const size_t m = static_cast<size_t>(r.log_range(1, 4 * MiB));
        char *q = static_cast<char *>(realloc(p, m));
        if (q == NULL) {
            say("error", m);
            return;
        }
        if (testutil::pattern_check(q, n < m ? n : m, seed) != (n < m ? n : m))
            bad++;
        memset(q, 7, malloc_usable_size(q));
        free(q);
    }
    say("bad", bad);
}

__attribute__((constructor)) void
child_main(void)
{
    const char *mode = getenv("HARDENED_CHILD");
    if (mode == NULL)
        return;
    const std::string m(mode);
    if (m == "overflow")
        child_overflow(false, false);
    else if (m == "nul")
        child_overflow(true, false);
    else if (m == "realloc")
        child_overflow(false, true);
    else if (m == "uaf")
        child_write_after_free();
    else if (m == "double_free")
        child_double_free();
    else if (m == "quarantine")
        child_quarantine();
    else if (m == "guard")
        child_guard();
    else if (m == "api")
        child_api();
    else if (m == "free_sized")
        child_free_sized();
    else
        printf("error=unknown mode %s\n", mode);
    fflush(stdout);
    _exit(0);
}

// =========================================================================
// The test side.
// =========================================================================

struct Child {
    testutil::child_result r;
    std::map<std::string, std::string> kv;

    unsigned long long num(const std::string &k) const {
        auto it = kv.find(k);
        TU_REQUIRE_MSG(it != kv.end(), "child printed no " << k << "; stdout ["
                                           << r.out << "] " << r.describe());
        return strtoull(it->second.c_str(), NULL, 0);
    }
    bool has(const std::string &k) const { return kv.count(k) != 0; }
};

Child run_child(const std::string &mode, const std::string &opts,
                std::vector<std::string> env = {}) {
    env.push_back("HARDENED_CHILD=" + mode);
    env.push_back("MALLOC_OPTIONS=" + opts);
    Child c;
    c.r = testutil::run_program({ testutil::self_path() }, env, "/dev/null", 120);
    for (const std::string &l : testutil::lines_of(c.r.out)) {
        const std::string::size_type eq = l.find('=');
        if (eq != std::string::npos)
            c.kv[l.substr(0, eq)] = l.substr(eq + 1);
    }
    TU_REQUIRE_MSG(!c.kv.count("error"), mode << ": " << c.r.out << " " << c.r.describe());
    return c;
}

// The one "arenalloc:" line of the child's stderr (fails unless there is
// exactly one).
std::string report_line(const Child &c) {
    std::vector<std::string> found;
    for (const std::string &l : testutil::lines_of(c.r.err))
        if (testutil::starts_with(l, "arenalloc:"))
            found.push_back(l);
    TU_REQUIRE_MSG(found.size() == 1,
                   "expected one arenalloc line, got " << found.size() << ": " << c.r.describe());
    return found[0];
}

std::string hex(unsigned long long v) {
    char buf[32];
    snprintf(buf, sizeof(buf), "0x%llx", v);
    return buf;
}

void require_signal(const Child &c, int sig, const std::string &what) {
    TU_REQUIRE_MSG(!c.r.timed_out && WIFSIGNALED(c.r.status) && WTERMSIG(c.r.status) == sig,
                   what << ": expected signal " << sig << ", got " << c.r.describe()
                        << "; stdout [" << c.r.out << "]");
    TU_REQUIRE_MSG(!c.has("survived"), what << ": the bad operation returned");
}

// "arenalloc: <fn>(): write past the end of block <ptr> (requested <n>
// bytes, size class <R>)" with n + 5 <= R.
void require_overflow_report(const Child &c, const std::string &fn, size_t n,
                             const std::string &what) {
    require_signal(c, SIGABRT, what);
    const std::string line = report_line(c);
    const std::string head = "arenalloc: " + fn + "(): write past the end of block " +
                             hex(c.num("ptr")) + " (requested " + std::to_string(n) +
                             " bytes, size class ";
    TU_REQUIRE_MSG(testutil::starts_with(line, head) && line.back() == ')',
                   what << ": report [" << line << "], expected [" << head << "R)]");
    const size_t cls = strtoull(line.c_str() + head.size(), NULL, 10);
    TU_REQUIRE_MSG(cls >= n + 5 && cls <= testutil::largest_small_class(), what << ": size class in [" << line << "]");
}

const size_t kSmallSizes[] = { 1, 7, 8, 24, 100, 1000, 4000, 9000, 14000, 14331 };

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(canary__one_byte_overflow_detected_at_free);
ATF_TEST_CASE_BODY(canary__one_byte_overflow_detected_at_free)
{
    for (int run = 0; run < 3; run++)
        for (size_t n : kSmallSizes) {
            const std::string what = "run " + std::to_string(run) + ", " + std::to_string(n) +
                                     " bytes";
            const Child c = run_child("overflow", "S",
                                      { "HARDENED_SIZE=" + std::to_string(n) });
            require_overflow_report(c, "free", n, what);
        }
    // Control: without S the byte lands in the class's slack unnoticed.
    const Child c = run_child("overflow", "s", { "HARDENED_SIZE=24" });
    TU_REQUIRE_MSG(c.r.exited_ok() && c.has("survived"), "s: " << c.r.describe());
}

ATF_TEST_CASE_WITHOUT_HEAD(canary__nul_overflow_detected_at_free);
ATF_TEST_CASE_BODY(canary__nul_overflow_detected_at_free)
{
    for (int run = 0; run < 3; run++)
        for (size_t n : kSmallSizes) {
            const std::string what = "run " + std::to_string(run) + ", " + std::to_string(n) +
                                     " bytes";
            const Child c = run_child("nul", "S", { "HARDENED_SIZE=" + std::to_string(n) });
            require_overflow_report(c, "free", n, what);
        }
    const Child c = run_child("nul", "s", { "HARDENED_SIZE=24" });
    TU_REQUIRE_MSG(c.r.exited_ok() && c.has("survived"), "s: " << c.r.describe());
}

ATF_TEST_CASE_WITHOUT_HEAD(canary__overflow_detected_at_realloc);
ATF_TEST_CASE_BODY(canary__overflow_detected_at_realloc)
{
    for (int run = 0; run < 3; run++)
        for (size_t n : { 1, 24, 1000, 14000 }) {
            const std::string what = "run " + std::to_string(run) + ", " + std::to_string(n) +
                                     " bytes";
            const Child c = run_child("realloc", "S", { "HARDENED_SIZE=" + std::to_string(n) });
            require_overflow_report(c, "realloc", n, what);
        }
}

ATF_TEST_CASE_WITHOUT_HEAD(junk__write_after_free_detected_at_reuse);
ATF_TEST_CASE_BODY(junk__write_after_free_detected_at_reuse)
{
    // S junk-fills and checks the first 64 bytes of a freed block (and the
    // last 4 of its region, past the request): offsets there are caught,
    // and a write further in is not (the manual says so).
    const size_t head = 64;
    for (int run = 0; run < 2; run++)
        for (size_t n : { 8, 24, 100, 3000, 14000 })
            for (size_t off : { size_t{0}, n / 2, n - 1, head - 1 }) {
                if (off >= n)
                    continue;
                const std::string what = "run " + std::to_string(run) + ", " +
                                         std::to_string(n) + " bytes, offset " +
                                         std::to_string(off);
                const Child c = run_child("uaf", "S", { "HARDENED_SIZE=" + std::to_string(n),
                                                        "HARDENED_OFFSET=" + std::to_string(off) });
                if (off >= head) {
                    TU_REQUIRE_MSG(c.r.exited_ok() && c.has("reused"),
                                   what << ": past the junk-filled head, yet: " << c.r.describe());
                    continue;
                }
                TU_REQUIRE_MSG(!c.has("reused") && !c.has("never_reused"),
                               what << ": not detected: " << c.r.out);
                require_signal(c, SIGABRT, what);
                const std::string line = report_line(c);
                const unsigned long long p = c.num("ptr");
                const std::string head = "arenalloc: malloc(): write after free to " +
                                         hex(p + off) + " (block " + hex(p) + ", size class ";
                TU_REQUIRE_MSG(testutil::starts_with(line, head) && line.back() == ')',
                               what << ": report [" << line << "], expected [" << head << "R)]");
                const size_t cls = strtoull(line.c_str() + head.size(), NULL, 10);
                TU_REQUIRE_MSG(cls >= n + 5, what << ": size class in [" << line << "]");
            }
    // Control: without S the block comes back with the write in it.
    const Child c = run_child("uaf", "s", { "HARDENED_SIZE=100", "HARDENED_OFFSET=50" });
    TU_REQUIRE_MSG(c.r.exited_ok() && c.has("reused"), "s: " << c.r.describe());
}

ATF_TEST_CASE_WITHOUT_HEAD(quarantine__delays_reuse);
ATF_TEST_CASE_BODY(quarantine__delays_reuse)
{
    for (int run = 0; run < 3; run++) {
        const Child c = run_child("quarantine", "S");
        TU_REQUIRE_MSG(c.r.exited_ok(), "S: " << c.r.describe());
        TU_REQUIRE_MSG(c.num("immediate") == 0, "S: a freed block came back at once");
        TU_REQUIRE_MSG(c.num("early") == 0, "S: a freed block came back within 31 frees");
        TU_REQUIRE_MSG(c.num("late") == 1, "S: the block never left the quarantine");
    }
    // Control: without S the thread cache hands the block back at once.
    const Child c = run_child("quarantine", "s");
    TU_REQUIRE_MSG(c.r.exited_ok() && c.num("immediate") == 1, "s: " << c.r.out);
}

// C23's sized frees with the right sizes are accepted under S as without
// it (the canary and the guard page make the block bigger than its
// request), and a wrong size is still reported.
ATF_TEST_CASE_WITHOUT_HEAD(free_sized__correct_sizes_accepted);
ATF_TEST_CASE_BODY(free_sized__correct_sizes_accepted)
{
    for (const char *opts : { "S", "s" }) {
        const Child c = run_child("free_sized", opts);
        TU_REQUIRE_MSG(c.r.exited_ok() && c.num("correct_sizes_done") == 1 &&
                           c.num("wrong_size_passed") == 1 && c.r.err.empty(),
                       opts << ": " << c.r.describe());
    }
    const Child c = run_child("free_sized", "S", { "HARDENED_WRONG=1" });
    require_signal(c, SIGABRT, "free_sized(malloc(100), 5000)");
    TU_REQUIRE_MSG(c.r.err.find("size 5000 does not match the block") != std::string::npos,
                   c.r.err);
}

ATF_TEST_CASE_WITHOUT_HEAD(quarantine__double_free_reported);
ATF_TEST_CASE_BODY(quarantine__double_free_reported)
{
    for (int run = 0; run < 3; run++)
        for (size_t n : { 1, 100, 14000 }) {
            const std::string what = std::to_string(n) + " bytes";
            const Child c = run_child("double_free", "S", { "HARDENED_SIZE=" + std::to_string(n) });
            require_signal(c, SIGABRT, what);
            const std::string want = "arenalloc: free(): invalid pointer " + hex(c.num("ptr")) +
                                     ": block already free (in the quarantine)";
            TU_REQUIRE_MSG(report_line(c) == want,
                           what << ": [" << report_line(c) << "], expected [" << want << "]");
        }
}

ATF_TEST_CASE_WITHOUT_HEAD(guard__write_past_large_and_huge_faults);
ATF_TEST_CASE_BODY(guard__write_past_large_and_huge_faults)
{
    struct Case {
        size_t size;
        size_t align;
    };
    // Sizes and alignments below 1 MiB are those of 4 KiB pages scaled by
    // the page, so that each stays past the small classes; the first is
    // the largest small class less 4, which the 5 bytes of canary and
    // trailer take past it (14332 bytes with 4 KiB pages).
    const size_t f = testutil::page_size() / 4096;
    const Case cases[] = {
        { testutil::largest_small_class() - 4, 0 }, { 16 * KiB * f, 0 }, { 20000 * f, 0 }, { 100 * KiB * f, 0 }, { 1 * MiB, 0 },
        { 3 * MiB, 0 }, { 10 * MiB + 1, 0 }, { 50000 * f, 8192 * f }, { 300 * KiB * f, 64 * KiB * f },
        { 5 * MiB, 1 * MiB }, { 13000 * f, 4096 * f },
    };
    for (int run = 0; run < 2; run++)
        for (const Case &k : cases) {
            const std::string what = std::to_string(k.size) + " bytes, align " +
                                     std::to_string(k.align);
            const Child c = run_child("guard", "S", { "HARDENED_SIZE=" + std::to_string(k.size),
                                                      "HARDENED_ALIGN=" + std::to_string(k.align) });
            TU_REQUIRE_MSG(c.num("usable") >= k.size, what << ": usable " << c.num("usable"));
            require_signal(c, SIGSEGV, what);
            TU_REQUIRE_MSG(c.r.err.find("arenalloc:") == std::string::npos,
                           what << ": " << c.r.err);
        }
    // Control: without S the byte lands on the next (mapped) page.
    const Child c = run_child("guard", "s", { "HARDENED_SIZE=20000" });
    TU_REQUIRE_MSG(c.r.exited_ok() && c.has("survived"), "s: " << c.r.describe());
}

ATF_TEST_CASE_WITHOUT_HEAD(hardened__ordinary_use_works);
ATF_TEST_CASE_BODY(hardened__ordinary_use_works)
{
    for (const char *opts : { "S", "SJ", "SZ" }) {
        const Child c = run_child("api", opts);
        TU_REQUIRE_MSG(c.r.exited_ok() && c.num("bad") == 0,
                       opts << ": " << c.r.out << " " << c.r.describe());
    }
}

ATF_TEST_CASE(hardened__stress_test_passes);
ATF_TEST_CASE_HEAD(hardened__stress_test_passes)
{
    set_md_var("descr", "tests/stress/stress_test's cases pass with S");
    set_md_var("timeout", "300");
}
ATF_TEST_CASE_BODY(hardened__stress_test_passes)
{
    const std::string stress = get_config_var("top_builddir", ARENALLOC_TOP_BUILDDIR) +
                               std::string("/tests/stress/stress_test");
    if (access(stress.c_str(), X_OK) != 0)
        ATF_FAIL(stress + " is missing");
    for (const char *tc : { "stress__mixed_cross_thread", "stress__producer_consumer",
                            "stress__small_cross_thread" }) {
        const testutil::child_result r =
            testutil::run_program({ stress, tc }, { "MALLOC_OPTIONS=S" }, "/dev/null", 280);
        TU_REQUIRE_MSG(r.exited_ok() && r.out.find("passed") != std::string::npos,
                       tc << ": " << r.describe() << "; stdout [" << r.out << "]");
    }
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, canary__one_byte_overflow_detected_at_free);
    ATF_ADD_TEST_CASE(tcs, canary__nul_overflow_detected_at_free);
    ATF_ADD_TEST_CASE(tcs, canary__overflow_detected_at_realloc);
    ATF_ADD_TEST_CASE(tcs, junk__write_after_free_detected_at_reuse);
    ATF_ADD_TEST_CASE(tcs, quarantine__delays_reuse);
    ATF_ADD_TEST_CASE(tcs, free_sized__correct_sizes_accepted);
    ATF_ADD_TEST_CASE(tcs, quarantine__double_free_reported);
    ATF_ADD_TEST_CASE(tcs, guard__write_past_large_and_huge_faults);
    ATF_ADD_TEST_CASE(tcs, hardened__ordinary_use_works);
    ATF_ADD_TEST_CASE(tcs, hardened__stress_test_passes);
}
