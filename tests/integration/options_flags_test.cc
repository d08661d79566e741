// Each MALLOC_OPTIONS flag's effect, seen from a program that runs on
// arenalloc.  Options are read once, at the first allocation, so every case
// runs this program again (/proc/self/exe) with MALLOC_OPTIONS set and
// OPTFLAGS_CHILD naming what the child does; the child does it from a
// constructor, prints "key=value" lines and exits before ATF's main.  Each
// case also runs the child without the flag (or with its opposite) and
// requires the opposite outcome, so that it can fail.
//
// Flags and the cases that test them:
//   A     options__A_makes_warning_fatal       abort on the warning
//   D/M   options__D_chunks_from_sbrk          block inside the data segment
//   F/f   options__F_delays_purging            resident memory after frees
//   G/g   options__G_gc_drains_idle_cache      idle class drained by GC
//   H/h   options__H_thread_cache_capacity     freed blocks kept per thread
//   J     options__J_junk_fills                0xa5 new, 0x5a freed
//   K     options__K_chunk_size                mapped_chunks per new arena
//   N     options__N_arena_count               arenalloc_get_summary()
//   P     options__P_prints_summary            summary lines at exit
//   U     options__U_traces_calls              trace file, tools/trace-decode
//   V     options__V_malloc0_returns_null      malloc(0), calloc, realloc(p,0)
//   X     options__X_aborts_when_out_of_memory under RLIMIT_AS
//   Z     options__Z_zero_fills                recycled blocks read zero
//   (environment ignored when secure)  options__environment_ignored_when_secure
//   (_malloc_options global)           options__global_after_environment

#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <atf-c++.hpp>

#include "arenalloc.h"
#include "config.h"  // the C library contract configure chose
#include "test_util.h"

extern "C" char end;  // the end of this program's data: the break starts after it

namespace {

const size_t KiB = 1024;
const size_t MiB = 1024 * KiB;

// =========================================================================
// The child side: runs from a constructor when OPTFLAGS_CHILD is set.
// Uses stdio (printf) and the allocator under test; no ATF.
// =========================================================================

long env_long(const char *name, long dflt) {
    const char *v = getenv(name);
    return v != NULL ? strtol(v, NULL, 0) : dflt;
}

bool all_bytes(const void *p, size_t n, unsigned char c) {
    return testutil::first_not(p, n, c) == n;
}

// "cached" is a large class that thread caches hold when they are on.
void child_junk(void) {
    const size_t sizes[4] = { 100, 128 * KiB, 4 * MiB, 20 * KiB };
    const char *names[4] = { "small", "large", "huge", "cached" };
    for (int i = 0; i < 4; i++) {
        unsigned char *p = static_cast<unsigned char *>(malloc(sizes[i]));
        if (p == NULL) {
            printf("error=malloc %zu failed\n", sizes[i]);
            return;
        }
        const size_t usize = malloc_usable_size(p);
        printf("new_%s_a5=%d\n", names[i], all_bytes(p, usize, 0xa5));
        memset(p, 0x11, usize);
        testutil::escape(p);
        free(p);
        if (i != 2) {
            // Reading a freed block: undefined in C, but arenalloc keeps
            // small and large runs mapped (and one freed run is far below
            // the dirty-page allowance, so it is not purged).
            testutil::escape(p);
            printf("freed_%s_5a=%d\n", names[i], all_bytes(p, usize, 0x5a));
            // A recycled block is junk-filled again on allocation.
            unsigned char *q = static_cast<unsigned char *>(malloc(sizes[i]));
            printf("recycled_%s_same=%d\n", names[i], q == p);
            printf("recycled_%s_a5=%d\n", names[i],
                   q != NULL && all_bytes(q, malloc_usable_size(q), 0xa5));
            free(q);
        }
    }
}

void child_zero(void) {
    const size_t sizes[4] = { 100, 128 * KiB, 4 * MiB, 20 * KiB };
    const char *names[4] = { "small", "large", "huge", "cached" };
    enum { N = 40 };
    const int counts[4] = { N, N, 4, N };
    for (int i = 0; i < 4; i++) {
        const int n = counts[i];
        void *v[N];
        for (int k = 0; k < n; k++) {
            v[k] = malloc(sizes[i]);
            if (v[k] == NULL) {
                printf("error=malloc %zu failed\n", sizes[i]);
                return;
            }
            memset(v[k], 0xff, malloc_usable_size(v[k]));
            testutil::escape(v[k]);
        }
        for (int k = 0; k < n; k++)
            free(v[k]);
        // The same sizes again: mostly the regions just freed, dirty.
        int nonzero = 0, reused = 0;
        void *w[N];
        for (int k = 0; k < n; k++) {
            w[k] = malloc(sizes[i]);
            if (w[k] == NULL) {
                printf("error=malloc %zu failed\n", sizes[i]);
                return;
            }
            if (!all_bytes(w[k], malloc_usable_size(w[k]), 0))
                nonzero++;
            for (int j = 0; j < n; j++)
                if (w[k] == v[j])
                    reused++;
        }
        for (int k = 0; k < n; k++)
            free(w[k]);
        printf("%s_nonzero=%d\n%s_reused=%d\n", names[i], nonzero, names[i], reused);
    }
}

void child_malloc0(void) {
    errno = EDOM;
    void *p = malloc(0);
    printf("malloc0_null=%d\n", p == NULL);
    printf("malloc0_errno_kept=%d\n", errno == EDOM);
    free(p);
    void *c1 = calloc(0, 8);
    void *c2 = calloc(8, 0);
    printf("calloc0_null=%d\n", c1 == NULL && c2 == NULL);
    free(c1);
    free(c2);
    void *q = malloc(100);
    arenalloc_summary s0, s1;
    arenalloc_get_summary(&s0);
    void *r = realloc(q, 0);
    arenalloc_get_summary(&s1);
    printf("realloc0_null=%d\n", r == NULL);
    printf("realloc0_freed=%llu\n",
           static_cast<unsigned long long>(s1.nfree - s0.nfree));
    free(r);
    // Nonzero sizes are untouched by V.
    void *m = malloc(1);
    printf("malloc1_null=%d\n", m == NULL);
    free(m);
}

size_t vm_size(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
            break;
    fclose(f);
    return kb * KiB;
}

void child_oom(void) {
    // 256 MiB more address space than now: a 1 GiB request cannot succeed.
    void *old = malloc(16);
    const size_t now = vm_size();
    if (now == 0) {
        printf("error=no VmSize\n");
        return;
    }
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = now + 256 * MiB;
    if (setrlimit(RLIMIT_AS, &rl) != 0) {
        printf("error=setrlimit %s\n", strerror(errno));
        return;
    }
    const char *fn = getenv("OPTFLAGS_FN");
    const std::string which = fn != NULL ? fn : "malloc";
    void *p = NULL;
    errno = 0;
    if (which == "calloc")
        p = calloc(1, testutil::opaque(size_t(1) << 30));
    else if (which == "realloc")
        p = realloc(old, testutil::opaque(size_t(1) << 30));
    else
        p = malloc(testutil::opaque(size_t(1) << 30));
    const int e = errno;
    printf("null=%d\nenomem=%d\n", p == NULL, e == ENOMEM);
    fflush(stdout);
    // Smaller requests still work after the failure.
    void *small = malloc(1000);
    printf("after_ok=%d\n", small != NULL);
    free(small);
    free(p);
    if (which != "realloc" || p == NULL)
        free(old);  // a failed realloc leaves the old block alone
}

void child_summary(void) {
    arenalloc_summary s0, s1, s2;
    arenalloc_get_summary(&s0);
    // A new thread gets the next arena, whose first chunk is mapped for it.
    pthread_t t;
    if (pthread_create(&t, NULL, [](void *) -> void * {
            void *p = malloc(16);
            testutil::escape(p);
            free(p);
            return NULL;
        }, NULL) != 0) {
        printf("error=pthread_create\n");
        return;
    }
    pthread_join(t, NULL);
    arenalloc_get_summary(&s1);
    // A 3 MiB block: huge with 2 MiB chunks, large with 4 MiB ones.
    void *big = malloc(3 * MiB);
    testutil::escape(big);
    arenalloc_get_summary(&s2);
    free(big);
    printf("narenas=%u\n", s0.narenas);
    printf("new_arena=%u\n", s1.narenas_used - s0.narenas_used);
    printf("chunk_delta=%llu\n",
           static_cast<unsigned long long>(s1.mapped_chunks - s0.mapped_chunks));
    printf("big_large=%llu\nbig_huge=%llu\n",
           static_cast<unsigned long long>(s2.nmalloc_large - s1.nmalloc_large),
           static_cast<unsigned long long>(s2.nmalloc_huge - s1.nmalloc_huge));
}

// Blocks a thread frees stay in its cache, out of reach of other threads;
// with caches off they go straight back to the (single) arena.  The main
// thread allocates 2 x OPTFLAGS_COUNT blocks of OPTFLAGS_SIZE bytes and
// frees every other one (the live ones keep every run in use, so that the
// arena keeps the freed regions where they are rather than releasing whole
// runs), makes OPTFLAGS_SPIN allocations of another size, then a second
// thread allocates many blocks of that size and counts how many of the
// freed ones it is given (the arena hands out regions of runs in use before
// making new runs): the rest were retained by the main thread's cache.
enum { kMaxFreed = 1024, kTakes = 4096 };
void *g_freed[kMaxFreed];
void *g_kept[kMaxFreed];
void *g_taken[kTakes];
long g_nfreed;
long g_found;
size_t g_size;

void *taker(void *) {
    for (int i = 0; i < kTakes; i++)
        g_taken[i] = malloc(g_size);
    for (int i = 0; i < kTakes; i++)
        for (long k = 0; k < g_nfreed; k++)
            if (g_taken[i] == g_freed[k])
                g_found++;
    for (int i = 0; i < kTakes; i++)
        free(g_taken[i]);
    return NULL;
}

void child_tcache(void) {
    g_size = static_cast<size_t>(env_long("OPTFLAGS_SIZE", 1024));
    g_nfreed = std::min<long>(env_long("OPTFLAGS_COUNT", 32), kMaxFreed);
    const long spin = env_long("OPTFLAGS_SPIN", 0);
    for (long k = 0; k < g_nfreed; k++) {
        g_kept[k] = malloc(g_size);
        g_freed[k] = malloc(g_size);
        memset(g_freed[k], 1, g_size);
    }
    for (long k = 0; k < g_nfreed; k++)
        free(g_freed[k]);
    for (long i = 0; i < spin; i++) {
        void *p = malloc(testutil::opaque(size_t(32)));
        testutil::escape(p);
        free(p);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, taker, NULL) != 0) {
        printf("error=pthread_create\n");
        return;
    }
    pthread_join(t, NULL);
    arenalloc_summary s;
    arenalloc_get_summary(&s);
    printf("narenas=%u\nfreed=%ld\nretained=%ld\n", s.narenas, g_nfreed,
           g_nfreed - g_found);
    for (long k = 0; k < g_nfreed; k++)
        free(g_kept[k]);
}

// Resident memory that is not lazily freed (MADV_FREE pages stay in Rss
// until the kernel takes them; smaps_rollup counts them as LazyFree).
long resident_kib(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long rss = -1, lazy = 0, v;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "Rss: %ld kB", &v) == 1)
            rss = v;
        else if (sscanf(line, "LazyFree: %ld kB", &v) == 1)
            lazy = v;
    }
    fclose(f);
    return rss < 0 ? -1 : rss - lazy;
}

void child_purge(void) {
    // 512 large blocks of 128 KiB (64 MiB), every byte written; then every
    // other one freed: 32 MiB dirty against 32 MiB active, and no chunk
    // becomes empty.  Whether those dirty pages are purged at once depends
    // only on the allowed dirty:active ratio (the F option).
    enum { N = 512 };
    static void *v[N];
    const size_t size = 128 * KiB;
    for (int i = 0; i < N; i++) {
        v[i] = malloc(size);
        if (v[i] == NULL) {
            printf("error=malloc failed\n");
            return;
        }
        memset(v[i], 0x33, size);
    }
    const long before = resident_kib();
    for (int i = 1; i < N; i += 2)
        free(v[i]);
    const long after = resident_kib();
    if (before < 0 || after < 0) {
        printf("error=no /proc/self/smaps_rollup\n");
        return;
    }
    printf("freed_kib=%zu\ndrop_kib=%ld\n", N / 2 * size / KiB, before - after);
    for (int i = 0; i < N; i += 2)
        free(v[i]);
}

void child_trace(void) {
    void *p = malloc(testutil::opaque(size_t(64)));
    void *q = realloc(p, testutil::opaque(size_t(100000)));
    free(q);
    printf("pid=%ld\np=%#lx\nq=%#lx\n", static_cast<long>(getpid()),
           static_cast<unsigned long>(reinterpret_cast<uintptr_t>(p)),
           static_cast<unsigned long>(reinterpret_cast<uintptr_t>(q)));
}

void child_sbrk(void) {
    void *brk_now = sbrk(0);
    if (brk_now == reinterpret_cast<void *>(-1)) {
        printf("no_sbrk=1\n");
        return;
    }
    void *p = malloc(64);
    void *brk_after = sbrk(0);
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    printf("in_brk=%d\n", a >= reinterpret_cast<uintptr_t>(&end) &&
                              a < reinterpret_cast<uintptr_t>(brk_after));
    printf("ok=%d\n", p != NULL);
    free(p);
}

void child_secure(void) {
    printf("at_secure=%lu\n", getauxval(AT_SECURE));
    printf("env_visible=%d\n", getenv("MALLOC_OPTIONS") != NULL);
    void *p = malloc(0);
    printf("malloc0_null=%d\n", p == NULL);
    free(p);
}

__attribute__((constructor)) void
child_main(void)
{
    const char *mode = getenv("OPTFLAGS_CHILD");
    if (mode == NULL)
        return;
    const std::string m(mode);
    if (m == "noop") {
        void *p = malloc(10);
        testutil::escape(p);
        free(p);
    } else if (m == "junk") {
        child_junk();
    } else if (m == "zero") {
        child_zero();
    } else if (m == "malloc0") {
        child_malloc0();
    } else if (m == "oom") {
        child_oom();
    } else if (m == "summary") {
        child_summary();
    } else if (m == "tcache") {
        child_tcache();
    } else if (m == "purge") {
        child_purge();
    } else if (m == "trace") {
        child_trace();
    } else if (m == "sbrk") {
        child_sbrk();
    } else if (m == "secure") {
        child_secure();
    } else {
        printf("error=unknown mode %s\n", mode);
    }
    printf("done=1\n");
    fflush(stdout);
    exit(0);  // atexit handlers run: the P summary
}

// =========================================================================
// The test side.
// =========================================================================

struct Child {
    testutil::child_result r;
    std::map<std::string, std::string> kv;

    bool has(const std::string &k) const { return kv.count(k) != 0; }
    long long num(const std::string &k) const
    {
        auto it = kv.find(k);
        TU_REQUIRE_MSG(it != kv.end(), "child printed no " << k << "; stdout ["
                                           << r.out << "] " << r.describe());
        return std::stoll(it->second, nullptr, 0);
    }
    std::string str(const std::string &k) const
    {
        auto it = kv.find(k);
        TU_REQUIRE_MSG(it != kv.end(), "child printed no " << k << "; stdout ["
                                           << r.out << "] " << r.describe());
        return it->second;
    }
};

// Runs this program as a child in mode with MALLOC_OPTIONS=opts and extra
// environment; does not check how it ended.
Child run_mode_raw(const std::string &mode, const std::string &opts,
                   std::vector<std::string> env = {},
                   const std::string &program = "")
{
    env.push_back("OPTFLAGS_CHILD=" + mode);
    env.push_back("MALLOC_OPTIONS=" + opts);
    Child c;
    c.r = testutil::run_program({ program.empty() ? testutil::self_path() : program }, env,
                                "/dev/null", 60);
    for (const std::string &l : testutil::lines_of(c.r.out)) {
        const std::string::size_type eq = l.find('=');
        if (eq != std::string::npos)
            c.kv[l.substr(0, eq)] = l.substr(eq + 1);
    }
    return c;
}

// The same, requiring a normal exit, no error, and the end reached.
Child run_mode(const std::string &mode, const std::string &opts,
               std::vector<std::string> env = {})
{
    Child c = run_mode_raw(mode, opts, env);
    TU_REQUIRE_MSG(c.r.exited_ok(), "MALLOC_OPTIONS=" << opts << " mode " << mode
                                        << ": " << c.r.describe());
    TU_REQUIRE_MSG(!c.has("error"), "MALLOC_OPTIONS=" << opts << " mode " << mode
                                        << ": " << c.str("error"));
    TU_REQUIRE_MSG(c.has("done"), "MALLOC_OPTIONS=" << opts << ": stdout ["
                                      << c.r.out << "]");
    return c;
}

std::string warning_for(char c) {
    return ": (malloc) Unsupported character in malloc options: '" +
           std::string(1, c) + "'";
}

// Number of lines "<prog>: (malloc) Unsupported ...: 'c'" in err.
int count_warnings(const std::string &err, char c) {
    int n = 0;
    const std::string w = warning_for(c);
    for (const std::string &l : testutil::lines_of(err)) {
        const std::string::size_type at = l.find(w);
        if (at != std::string::npos && at > 0 && at + w.size() == l.size())
            n++;
    }
    return n;
}

// As many 'n' as take the default arena count down to one.
std::string one_arena(void) {
    const Child c = run_mode("summary", "");
    long long n = c.num("narenas");
    std::string s;
    while (n > 1) {
        n /= 2;
        s += 'n';
    }
    return s;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(options__A_makes_warning_fatal);
ATF_TEST_CASE_BODY(options__A_makes_warning_fatal)
{
    // "Ay": the warning for y comes at initialization, then abort().
    Child c = run_mode_raw("noop", "Ay");
    TU_REQUIRE_MSG(WIFSIGNALED(c.r.status) && WTERMSIG(c.r.status) == SIGABRT,
                   "Ay: " << c.r.describe());
    TU_REQUIRE_MSG(count_warnings(c.r.err, 'y') == 1, "Ay: " << c.r.describe());
    TU_REQUIRE_MSG(!c.has("done"), "Ay: the child went on");
    // A past its bound is a warning too.
    c = run_mode_raw("noop", "A20K");
    TU_REQUIRE_MSG(WIFSIGNALED(c.r.status) && WTERMSIG(c.r.status) == SIGABRT,
                   "A20K: " << c.r.describe());
    // Without A in force when the warning comes: a warning only.
    for (const char *opts : { "y", "yA", "Aay" }) {
        c = run_mode("noop", opts);
        TU_REQUIRE_MSG(count_warnings(c.r.err, 'y') == 1,
                       opts << ": " << c.r.describe());
    }
    // A alone prints nothing.
    c = run_mode("noop", "A");
    TU_REQUIRE_MSG(c.r.err.empty(), "A: " << c.r.describe());
}

ATF_TEST_CASE_WITHOUT_HEAD(options__D_chunks_from_sbrk);
ATF_TEST_CASE_BODY(options__D_chunks_from_sbrk)
{
    Child c = run_mode("sbrk", "");
    if (c.has("no_sbrk"))
        ATF_SKIP("this system has no sbrk");
    TU_REQUIRE_MSG(c.num("ok") == 1 && c.num("in_brk") == 0,
                   "default (mmap): " << c.r.out);
    // D alone: sbrk first, mmap as fallback.
    for (const char *opts : { "Dm", "D" }) {
        c = run_mode("sbrk", opts);
        TU_REQUIRE_MSG(c.num("ok") == 1 && c.num("in_brk") == 1,
                       opts << ": block not in the data segment: " << c.r.out);
    }
    // Both off: mmap is turned back on.
    c = run_mode("sbrk", "dm");
    TU_REQUIRE_MSG(c.num("ok") == 1 && c.num("in_brk") == 0, "dm: " << c.r.out);
    TU_REQUIRE_MSG(c.r.err.empty(), "dm: " << c.r.describe());
}

ATF_TEST_CASE_WITHOUT_HEAD(options__F_delays_purging);
ATF_TEST_CASE_BODY(options__F_delays_purging)
{
    // 32 MiB freed while 32 MiB stay in use (a peak of 64 MiB active).
    // With "10F" the dirty allowance is 1024 times the peak: nothing is
    // purged, resident memory stays.  With "10f" it is the one-chunk floor
    // and "3f" an eighth of the peak (8 MiB): most of it is purged during
    // the frees.  The default allows dirty pages up to the peak: nothing
    // purged yet.  No timing is involved (the decay rule acts only after
    // its period).
    const Child keep = run_mode("purge", "10F");
    const long long freed = keep.num("freed_kib");
    TU_REQUIRE_MSG(keep.num("drop_kib") < freed / 8,
                   "10F: resident memory dropped by " << keep.num("drop_kib")
                       << " KiB of " << freed << " KiB freed");
    for (const char *opts : { "10f", "3f" }) {
        const Child purge = run_mode("purge", opts);
        TU_REQUIRE_MSG(purge.num("drop_kib") > freed / 2,
                       opts << ": resident memory dropped by only " << purge.num("drop_kib")
                            << " KiB of " << freed << " KiB freed");
    }
    const Child dflt = run_mode("purge", "");
    TU_REQUIRE_MSG(dflt.num("drop_kib") < freed / 8,
                   "default: resident memory dropped by " << dflt.num("drop_kib")
                       << " KiB of " << freed << " KiB freed");
}

ATF_TEST_CASE_WITHOUT_HEAD(options__G_gc_drains_idle_cache);
ATF_TEST_CASE_BODY(options__G_gc_drains_idle_cache)
{
    // 16 blocks of 1 KiB freed into the main thread's cache (capacity 16),
    // then 200,000 allocations of 32 bytes: with the GC visiting every 2
    // allocations ("12g"), the idle 1 KiB class is drained to nothing; with
    // GC off ("13g") it keeps everything.  G from off turns it back on.
    const std::string n1 = one_arena();
    const std::vector<std::string> env = { "OPTFLAGS_SIZE=1024", "OPTFLAGS_COUNT=16",
                                           "OPTFLAGS_SPIN=200000" };
    Child c = run_mode("tcache", n1 + "13g", env);
    TU_REQUIRE_MSG(c.num("narenas") == 1, c.r.out);
    TU_REQUIRE_MSG(c.num("retained") >= 8,
                   "GC off: only " << c.num("retained") << " of 16 retained");
    for (const char *g : { "12g", "13g1G", "13gG" }) {
        c = run_mode("tcache", n1 + g, env);
        TU_REQUIRE_MSG(c.num("retained") == 0,
                       g << ": " << c.num("retained") << " of 16 still cached");
    }
    TU_REQUIRE_MSG(c.r.err.empty(), c.r.describe());
}

ATF_TEST_CASE_WITHOUT_HEAD(options__H_thread_cache_capacity);
ATF_TEST_CASE_BODY(options__H_thread_cache_capacity)
{
    // 64 blocks of 1 KiB freed by the main thread (of 128 allocated), then
    // looked for by another
    // thread of the same (only) arena: those it cannot get are held in the
    // main thread's cache.  The 1 KiB class caches 32 KiB worth: 32 blocks
    // by default, 64 with H, 16 with h, none with 7h (caches off).
    const std::string n1 = one_arena();
    const std::vector<std::string> env = { "OPTFLAGS_SIZE=1024", "OPTFLAGS_COUNT=64" };
    Child c = run_mode("tcache", n1, env);
    TU_REQUIRE_MSG(c.num("narenas") == 1, c.r.out);
    long long r = c.num("retained");
    TU_REQUIRE_MSG(r >= 1 && r <= 32, "default: " << r << " of 64 retained");
    c = run_mode("tcache", n1 + "H", env);
    r = c.num("retained");
    TU_REQUIRE_MSG(r > 32 && r <= 64, "H: " << r << " of 64 retained");
    c = run_mode("tcache", n1 + "h", env);
    r = c.num("retained");
    TU_REQUIRE_MSG(r >= 1 && r <= 16, "h: " << r << " of 64 retained");
    for (const char *h : { "7h", "9h" }) {
        c = run_mode_raw("tcache", n1 + h, env);
        TU_REQUIRE_MSG(c.r.exited_ok() && c.has("done"), h << ": " << c.r.describe());
        r = c.num("retained");
        TU_REQUIRE_MSG(r == 0, h << ": " << r << " of 32 retained with caches off");
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(options__J_junk_fills);
ATF_TEST_CASE_BODY(options__J_junk_fills)
{
    Child c = run_mode("junk", "J");
    for (const char *k : { "new_small_a5", "new_large_a5", "new_huge_a5", "new_cached_a5",
                           "freed_small_5a", "freed_large_5a", "freed_cached_5a",
                           "recycled_small_a5", "recycled_large_a5", "recycled_cached_a5" })
        TU_REQUIRE_MSG(c.num(k) == 1, "J: " << k << " = " << c.str(k));
    // Without J (or with j after it): no pattern anywhere.
    for (const char *opts : { "", "Jj" }) {
        c = run_mode("junk", opts);
        for (const char *k : { "new_small_a5", "new_large_a5", "new_huge_a5", "new_cached_a5",
                               "freed_small_5a", "freed_large_5a", "freed_cached_5a" })
            TU_REQUIRE_MSG(c.num(k) == 0, "'" << opts << "': " << k << " = " << c.str(k));
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(options__K_chunk_size);
ATF_TEST_CASE_BODY(options__K_chunk_size)
{
    struct {
        const char *opts;
        size_t chunk;
    } cases[] = {
        { "", 2 * MiB }, { "K", 4 * MiB }, { "2K", 8 * MiB },
        // The halvings that reach K's lower bound, without a warning: three
        // to 256 KiB, or one to 1 MiB with 64 KiB pages (16 pages).
        { "k", 1 * MiB },
        { LG_PAGE == 16 ? "k" : "3k", std::max<size_t>(256 * KiB, 16 * testutil::page_size()) },
    };
    for (const auto &k : cases) {
        const Child c = run_mode("summary", k.opts);
        TU_REQUIRE_MSG(c.num("new_arena") == 1, k.opts << ": " << c.r.out);
        TU_REQUIRE_MSG(c.num("chunk_delta") == static_cast<long long>(k.chunk),
                       "'" << k.opts << "': a new arena mapped " << c.num("chunk_delta")
                           << " bytes of chunks, expected " << k.chunk);
        // The largest large class follows the chunk size.
        const bool large = k.chunk >= 4 * MiB;
        TU_REQUIRE_MSG(c.num("big_large") == (large ? 1 : 0) &&
                           c.num("big_huge") == (large ? 0 : 1),
                       "'" << k.opts << "': 3 MiB counted as large "
                           << c.num("big_large") << ", huge " << c.num("big_huge"));
        TU_REQUIRE_MSG(c.r.err.empty(), k.opts << ": " << c.r.describe());
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(options__N_arena_count);
ATF_TEST_CASE_BODY(options__N_arena_count)
{
    const long long d = run_mode("summary", "").num("narenas");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        cpus = CPU_COUNT(&set);
    TU_REQUIRE_MSG(d == std::min<long long>(4 * cpus, 4096),
                   "default arenas " << d << " with " << cpus << " CPUs");
    Child c = run_mode("summary", "n");
    TU_REQUIRE_MSG(c.num("narenas") == d / 2, "n: " << c.num("narenas"));
    if (d * 2 <= 4096) {
        c = run_mode("summary", "N");
        TU_REQUIRE_MSG(c.num("narenas") == d * 2, "N: " << c.num("narenas"));
    }
    c = run_mode("summary", one_arena());
    TU_REQUIRE_MSG(c.num("narenas") == 1, one_arena() << ": " << c.num("narenas"));
    // With one arena, a second thread shares the first one's arena.
    TU_REQUIRE_MSG(c.num("new_arena") == 0, c.r.out);
    c = run_mode_raw("summary", "64N");
    TU_REQUIRE_MSG(c.r.exited_ok() && c.num("narenas") > 2048 && c.num("narenas") <= 4096,
                   "64N: " << c.r.out << c.r.describe());
}

ATF_TEST_CASE_WITHOUT_HEAD(options__P_prints_summary);
ATF_TEST_CASE_BODY(options__P_prints_summary)
{
    static const std::regex first("^arenalloc: allocations served: [0-9]+ \\(small "
                                  "[0-9]+, large [0-9]+, huge [0-9]+\\)$");
    for (const char *opts : { "P", "pP", "", "Pp" }) {
        const Child c = run_mode("noop", opts);
        int n = 0;
        for (const std::string &l : testutil::lines_of(c.r.err))
            if (std::regex_match(l, first))
                n++;
        const int want = opts[0] != '\0' && opts[strlen(opts) - 1] == 'P' ? 1 : 0;
        TU_REQUIRE_MSG(n == want, "'" << opts << "': " << n << " summaries; "
                                       << c.r.describe());
        if (want)
            TU_REQUIRE_MSG(c.r.err.find("arenalloc: arenas: ") != std::string::npos,
                           c.r.describe());
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(options__U_traces_calls);
ATF_TEST_CASE_BODY(options__U_traces_calls)
{
    char cwd[4096];
    ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
    const std::string file = std::string(cwd) + "/trace.out";
    unlink(file.c_str());
    const Child c = run_mode("trace", "U", { "ARENALLOC_TRACE_FILE=" + file });
    std::ifstream in(file.c_str());
    TU_REQUIRE_MSG(in.good(), "U: no trace file " << file);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string trace = ss.str();
    const std::string pid = c.str("pid"), p = c.str("p"), q = c.str("q");
    static const std::regex line_re(
        "^arenalloc-trace ([0-9]+) ([0-9]+) ([a-z_]+) (0x[0-9a-f]+) ([0-9]+) "
        "(0x[0-9a-f]+)$");
    bool saw_malloc = false, saw_realloc = false, saw_free = false;
    size_t n = 0;
    for (const std::string &l : testutil::lines_of(trace)) {
        std::smatch m;
        TU_REQUIRE_MSG(std::regex_match(l, m, line_re), "malformed trace line [" << l << "]");
        TU_REQUIRE_MSG(m[1] == pid, "trace line of another process [" << l << "]");
        n++;
        if (m[3] == "malloc" && m[4] == "0x0" && m[5] == "64" && m[6] == p)
            saw_malloc = true;
        if (m[3] == "realloc" && m[4] == p && m[5] == "100000" && m[6] == q)
            saw_realloc = true;
        if (m[3] == "free" && m[4] == q && m[5] == "0" && m[6] == "0x0")
            saw_free = true;
    }
    TU_REQUIRE_MSG(saw_malloc && saw_realloc && saw_free,
                   "missing records for p=" << p << " q=" << q << " (malloc " << saw_malloc
                       << ", realloc " << saw_realloc << ", free " << saw_free
                       << ") in " << n << " lines");
    // Nothing written to stderr when a file is named.
    TU_REQUIRE_MSG(c.r.err.find("arenalloc-trace") == std::string::npos, c.r.describe());

    // Without U: no trace.
    const std::string file2 = std::string(cwd) + "/trace2.out";
    const Child c2 = run_mode("trace", "Uu", { "ARENALLOC_TRACE_FILE=" + file2 });
    struct stat st;
    TU_REQUIRE_MSG(stat(file2.c_str(), &st) != 0 || st.st_size == 0,
                   "Uu: a trace was written");
    TU_REQUIRE_MSG(c2.r.err.find("arenalloc-trace") == std::string::npos, c2.r.describe());

    // U without a file: the records go to stderr.
    const Child c3 = run_mode("trace", "U", { "ARENALLOC_TRACE_FILE=" });
    TU_REQUIRE_MSG(c3.r.err.find("arenalloc-trace " + c3.str("pid") + " ") !=
                       std::string::npos,
                   "U without ARENALLOC_TRACE_FILE: " << c3.r.describe());

    // tools/trace-decode reads the trace.
    const std::string decode =
        get_config_var("top_srcdir", ARENALLOC_TOP_SRCDIR) + std::string("/tools/trace-decode");
    const std::string python = testutil::find_program("python3", { "/usr/bin/python3" });
    if (access(decode.c_str(), R_OK) != 0 || python.empty())
        return;  // the rest needs the decoder and python3
    const testutil::child_result d =
        testutil::run_program({ python, decode, file }, { "MALLOC_OPTIONS=" });
    TU_REQUIRE_MSG(d.exited_ok(), "trace-decode: " << d.describe());
    TU_REQUIRE_MSG(d.out.find("process " + pid) != std::string::npos &&
                       d.out.find("malloc") != std::string::npos &&
                       d.out.find("realloc") != std::string::npos,
                   "trace-decode output [" << d.out << "]");
    TU_REQUIRE_MSG(d.out.find("frees of blocks never seen allocated") == std::string::npos,
                   "trace-decode found frees of unknown blocks: [" << d.out << "]");
}

ATF_TEST_CASE_WITHOUT_HEAD(options__V_malloc0_returns_null);
ATF_TEST_CASE_BODY(options__V_malloc0_returns_null)
{
    Child c = run_mode("malloc0", "V");
    TU_REQUIRE_MSG(c.num("malloc0_null") == 1, "V: " << c.r.out);
    TU_REQUIRE_MSG(c.num("malloc0_errno_kept") == 1, "V: malloc(0) changed errno");
    TU_REQUIRE_MSG(c.num("calloc0_null") == 1, "V: " << c.r.out);
    TU_REQUIRE_MSG(c.num("realloc0_null") == 1, "V: " << c.r.out);
    TU_REQUIRE_MSG(c.num("realloc0_freed") == 1, "V: realloc(p, 0) freed "
                                                     << c.num("realloc0_freed"));
    TU_REQUIRE_MSG(c.num("malloc1_null") == 0, "V: " << c.r.out);
    for (const char *opts : { "", "Vv" }) {
        c = run_mode("malloc0", opts);
        // Without V, realloc(p, 0) follows the C library's contract
        // (arenalloc(3), STANDARDS).
        TU_REQUIRE_MSG(c.num("malloc0_null") == 0 && c.num("calloc0_null") == 0 &&
                           c.num("realloc0_null") == ARENALLOC_REALLOC_ZERO_FREES,
                       "'" << opts << "': " << c.r.out);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(options__X_aborts_when_out_of_memory);
ATF_TEST_CASE_BODY(options__X_aborts_when_out_of_memory)
{
    for (const char *fn : { "malloc", "calloc", "realloc" }) {
        const std::vector<std::string> env = { std::string("OPTFLAGS_FN=") + fn };
        // Without X: NULL and ENOMEM, and the program goes on.
        Child c = run_mode("oom", "", env);
        TU_REQUIRE_MSG(c.num("null") == 1 && c.num("enomem") == 1 && c.num("after_ok") == 1,
                       fn << " without X: " << c.r.out);
        // With X: the message, then abort().
        c = run_mode_raw("oom", "X", env);
        TU_REQUIRE_MSG(WIFSIGNALED(c.r.status) && WTERMSIG(c.r.status) == SIGABRT,
                       fn << " with X: " << c.r.describe() << " stdout [" << c.r.out << "]");
        const std::string msg =
            std::string("arenalloc: ") + fn + "(): out of memory (1073741824 bytes)";
        bool found = false;
        for (const std::string &l : testutil::lines_of(c.r.err))
            found = found || l == msg;
        TU_REQUIRE_MSG(found, fn << " with X: no line '" << msg << "': " << c.r.describe());
        TU_REQUIRE_MSG(!c.has("null"), fn << " with X: the call returned");
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(options__Z_zero_fills);
ATF_TEST_CASE_BODY(options__Z_zero_fills)
{
    Child c = run_mode("zero", "Z");
    for (const char *k : { "small", "large", "huge", "cached" })
        TU_REQUIRE_MSG(c.num(std::string(k) + "_nonzero") == 0,
                       "Z: " << c.num(std::string(k) + "_nonzero") << " recycled " << k
                             << " blocks not zero");
    // The test recycles dirty memory: without Z the old bytes show.
    TU_REQUIRE_MSG(c.num("small_reused") > 0 && c.num("large_reused") > 0 &&
                       c.num("cached_reused") > 0,
                   "Z: no block was recycled: " << c.r.out);
    for (const char *opts : { "", "Zz" }) {
        c = run_mode("zero", opts);
        TU_REQUIRE_MSG(c.num("small_nonzero") > 0 && c.num("large_nonzero") > 0 &&
                           c.num("cached_nonzero") > 0,
                       "'" << opts << "': recycled blocks all zero: " << c.r.out);
    }
    // Z after J: Z wins for new blocks.
    c = run_mode("zero", "JZ");
    TU_REQUIRE_MSG(c.num("small_nonzero") == 0 && c.num("large_nonzero") == 0,
                   "JZ: " << c.r.out);
}

ATF_TEST_CASE_WITHOUT_HEAD(options__environment_ignored_when_secure);
ATF_TEST_CASE_BODY(options__environment_ignored_when_secure)
{
    // A setuid program (AT_SECURE set by the kernel) must not take
    // MALLOC_OPTIONS from its environment.  Made here, as root, with a
    // copy of this program owned by nobody and mode 04755: run by root it
    // gets euid 65534 and AT_SECURE.  Without root this is skipped: the
    // environment is then read through secure_getenv() (or issetugid()
    // where the system has it; see platform_secure_getenv), checked by
    // reading lib/platform_linux.cc.
    if (geteuid() != 0)
        ATF_SKIP("making a setuid copy needs root");
    struct statvfs vfs;
    ATF_REQUIRE(statvfs(".", &vfs) == 0);
    if (vfs.f_flag & ST_NOSUID)
        ATF_SKIP("the work directory is on a nosuid file system");
    char cwd[4096];
    ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
    const std::string copy = std::string(cwd) + "/secure_copy";
    {
        std::ifstream src(testutil::self_path().c_str(), std::ios::binary);
        std::ofstream dst(copy.c_str(), std::ios::binary);
        dst << src.rdbuf();
        ATF_REQUIRE(dst.good());
    }
    ATF_REQUIRE(chmod(copy.c_str(), 0755) == 0);

    // Control: the same copy, not setuid, honours the environment.
    Child c = run_mode_raw("secure", "V", {}, copy);
    TU_REQUIRE_MSG(c.r.exited_ok() && c.has("done"), "plain copy: " << c.r.describe());
    TU_REQUIRE_MSG(c.num("at_secure") == 0 && c.num("malloc0_null") == 1,
                   "plain copy: " << c.r.out);
    c = run_mode_raw("secure", "", { "MALLOC_CONF=sysv:true" }, copy);
    TU_REQUIRE_MSG(c.r.exited_ok() && c.num("malloc0_null") == 1,
                   "plain copy, MALLOC_CONF: " << c.r.out);

    ATF_REQUIRE(chown(copy.c_str(), 65534, 65534) == 0);
    ATF_REQUIRE(chmod(copy.c_str(), 04755) == 0);
    c = run_mode_raw("secure", "V", {}, copy);
    TU_REQUIRE_MSG(c.r.exited_ok() && c.has("done"), "setuid copy: " << c.r.describe());
    if (c.num("at_secure") == 0)
        ATF_SKIP("the setuid copy did not run with AT_SECURE (container restrictions?)");
    // The variable is still in the environment: the allocator ignored it.
    TU_REQUIRE_MSG(c.num("env_visible") == 1, "setuid copy: " << c.r.out);
    TU_REQUIRE_MSG(c.num("malloc0_null") == 0,
                   "setuid copy: MALLOC_OPTIONS=V was honoured: " << c.r.out);
    c = run_mode_raw("secure", "", { "MALLOC_CONF=sysv:true" }, copy);
    TU_REQUIRE_MSG(c.r.exited_ok() && c.num("malloc0_null") == 0,
                   "setuid copy: MALLOC_CONF=sysv:true was honoured: " << c.r.out);
}

ATF_TEST_CASE_WITHOUT_HEAD(options__global_after_environment);
ATF_TEST_CASE_BODY(options__global_after_environment)
{
    // tests/integration/options_global_helper defines
    //     const char *_malloc_options = "V";
    // and prints whether malloc(0) returned NULL.  The global is read after
    // the environment, so "v" there does not undo it.
    const std::string helper =
        get_config_var("top_builddir", ARENALLOC_TOP_BUILDDIR) +
        std::string("/tests/integration/options_global_helper");
    if (access(helper.c_str(), X_OK) != 0)
        ATF_FAIL(helper + " is missing");
    for (const char *opts : { "", "v", "V", "sysv:false" }) {
        const testutil::child_result r =
            testutil::run_program({ helper }, { std::string("MALLOC_OPTIONS=") + opts });
        TU_REQUIRE_MSG(r.exited_ok(), opts << ": " << r.describe());
        TU_REQUIRE_MSG(testutil::lines_of(r.out).at(0) == "malloc0_null=1",
                       "MALLOC_OPTIONS='" << opts << "': [" << r.out << "]");
    }
    // Control: this program has no such global; "v" leaves malloc(0) alone.
    const Child c = run_mode("malloc0", "v");
    TU_REQUIRE_MSG(c.num("malloc0_null") == 0, c.r.out);
}

namespace {

// The helper's output with these environment variables.
std::string
run_global_helper(const std::string &helper, const std::string &conf, const std::string &opts)
{
    const testutil::child_result r = testutil::run_program(
        { helper }, { "MALLOC_CONF=" + conf, "MALLOC_OPTIONS=" + opts });
    TU_REQUIRE_MSG(r.exited_ok() && r.err.empty(), conf << " / " << opts << ": " << r.describe());
    return r.out;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(options__malloc_conf_global_first);
ATF_TEST_CASE_BODY(options__malloc_conf_global_first)
{
    // tests/integration/options_global_helper defines
    //     const char *malloc_conf = "sysv:false,narenas:3,junk:alloc";
    //     const char *_malloc_options = "V";
    // malloc_conf is read first, _malloc_options last.
    const std::string h = get_config_var("top_builddir", ARENALLOC_TOP_BUILDDIR) +
                          std::string("/tests/integration/options_global_helper");
    ATF_REQUIRE_EQ(run_global_helper(h, "", ""), "malloc0_null=1\nnarenas=3\njunk=true\n");
    // MALLOC_CONF and MALLOC_OPTIONS come after malloc_conf...
    ATF_REQUIRE_EQ(run_global_helper(h, "narenas:5,junk:false", ""),
                  "malloc0_null=1\nnarenas=5\njunk=false\n");
    ATF_REQUIRE_EQ(run_global_helper(h, "narenas:5", "narenas:6,j"),
                  "malloc0_null=1\nnarenas=6\njunk=false\n");
    ATF_REQUIRE_EQ(run_global_helper(h, "narenas:5", "J,n"),
                  "malloc0_null=1\nnarenas=2\njunk=true\n");
    // ... and before _malloc_options.
    ATF_REQUIRE_EQ(run_global_helper(h, "sysv:false", "sysv:false"),
                  "malloc0_null=1\nnarenas=3\njunk=true\n");
}

ATF_TEST_CASE_WITHOUT_HEAD(options__malloc_conf_environment);
ATF_TEST_CASE_BODY(options__malloc_conf_environment)
{
    Child c = run_mode("malloc0", "", { "MALLOC_CONF=sysv:true" });
    TU_REQUIRE_MSG(c.num("malloc0_null") == 1 && c.r.err.empty(), c.r.describe());
    // MALLOC_OPTIONS is read after MALLOC_CONF.
    c = run_mode("malloc0", "v", { "MALLOC_CONF=sysv:true" });
    TU_REQUIRE_MSG(c.num("malloc0_null") == 0, c.r.describe());
    c = run_mode("malloc0", "", { "MALLOC_CONF=" });
    TU_REQUIRE_MSG(c.num("malloc0_null") == 0 && c.r.err.empty(), c.r.describe());
    // Letters and items mixed in MALLOC_OPTIONS.
    c = run_mode("malloc0", "7F,sysv:true,J", {});
    TU_REQUIRE_MSG(c.num("malloc0_null") == 1 && c.r.err.empty(), c.r.describe());
    // Warnings name the source and the key; the process goes on.
    c = run_mode("malloc0", "", { "MALLOC_CONF=nope:1,sysv:true,V" });
    TU_REQUIRE_MSG(c.num("malloc0_null") == 1, c.r.describe());
    TU_REQUIRE_MSG(c.r.err.find(": (malloc) Unsupported option in MALLOC_CONF: 'nope'\n") !=
                           std::string::npos &&
                       c.r.err.find(": (malloc) Missing value in MALLOC_CONF: 'V'\n") !=
                           std::string::npos,
                   c.r.describe());
    // The issue's narenas=12: a warning that says what to write, and
    // nothing applied (it used to halve the arenas twice, silently).
    c = run_mode("malloc0", "sysv=true", {});
    TU_REQUIRE_MSG(c.num("malloc0_null") == 0, c.r.describe());
    TU_REQUIRE_MSG(c.r.err.find(": (malloc) '=' instead of ':' in MALLOC_OPTIONS: 'sysv=true' "
                                "(ignored; write sysv:true)\n") != std::string::npos,
                   c.r.describe());
    // abort_conf: a bad item is fatal once every source is read.
    c = run_mode_raw("malloc0", "", { "MALLOC_CONF=abort_conf:true,nope:1" });
    TU_REQUIRE_MSG(WIFSIGNALED(c.r.status) && WTERMSIG(c.r.status) == SIGABRT,
                   c.r.describe());
    TU_REQUIRE_MSG(c.r.err.find("abort_conf:true, aborting") != std::string::npos,
                   c.r.describe());
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, options__A_makes_warning_fatal);
    ATF_ADD_TEST_CASE(tcs, options__D_chunks_from_sbrk);
    ATF_ADD_TEST_CASE(tcs, options__F_delays_purging);
    ATF_ADD_TEST_CASE(tcs, options__G_gc_drains_idle_cache);
    ATF_ADD_TEST_CASE(tcs, options__H_thread_cache_capacity);
    ATF_ADD_TEST_CASE(tcs, options__J_junk_fills);
    ATF_ADD_TEST_CASE(tcs, options__K_chunk_size);
    ATF_ADD_TEST_CASE(tcs, options__N_arena_count);
    ATF_ADD_TEST_CASE(tcs, options__P_prints_summary);
    ATF_ADD_TEST_CASE(tcs, options__U_traces_calls);
    ATF_ADD_TEST_CASE(tcs, options__V_malloc0_returns_null);
    ATF_ADD_TEST_CASE(tcs, options__X_aborts_when_out_of_memory);
    ATF_ADD_TEST_CASE(tcs, options__Z_zero_fills);
    ATF_ADD_TEST_CASE(tcs, options__environment_ignored_when_secure);
    ATF_ADD_TEST_CASE(tcs, options__global_after_environment);
    ATF_ADD_TEST_CASE(tcs, options__malloc_conf_global_first);
    ATF_ADD_TEST_CASE(tcs, options__malloc_conf_environment);
}
