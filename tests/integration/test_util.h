// Helpers shared by the integration test programs (public API only).
//
// The integration tests are ordinary hosted C++ linked against (or preloading)
// the public libarenalloc; nothing here knows about the allocator's internals.

#ifndef ARENALLOC_TESTS_INTEGRATION_TEST_UTIL_H
#define ARENALLOC_TESTS_INTEGRATION_TEST_UTIL_H

#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "config.h"  // LG_PAGE: the allocator's page

// tstd:: names the library parts of C++ the tests use beyond header-only
// templates (string streams, threads, mutexes, condition variables): the
// standard ones, or, in a stand-alone build (ARENALLOC_STANDALONE_TESTS,
// see tools/musl/build-and-test), libc-only equivalents with an ATF-free
// runner, so that the test programs need no ATF and no libstdc++ library.
#ifdef ARENALLOC_STANDALONE_TESTS
#include "../standalone/atf.h"
namespace tstd = ministd;
#else
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <thread>

#include <atf-c++.hpp>
namespace tstd = std;
#endif

extern char **environ;

// Fails the current test case with a formatted message:
//     TU_REQUIRE_MSG(p != NULL, "malloc(" << n << ") returned NULL");
// Newlines in the message are escaped (Kyua takes a multi-line reason for a
// broken test).
#define TU_REQUIRE_MSG(cond, msg)                                           \
    do {                                                                    \
        if (!(cond)) {                                                      \
            tstd::ostringstream tu_ss_;                                     \
            tu_ss_ << "Line " << __LINE__ << ": " << #cond << " not met: "  \
                   << msg;                                                  \
            atf::tests::tc::fail(testutil::one_line(tu_ss_.str()));        \
        }                                                                   \
    } while (false)

#define TU_FAIL_MSG(msg)                                                    \
    do {                                                                    \
        tstd::ostringstream tu_ss_;                                         \
        tu_ss_ << "Line " << __LINE__ << ": " << msg;                       \
        atf::tests::tc::fail(testutil::one_line(tu_ss_.str()));            \
    } while (false)

namespace testutil {

// s with each newline written as a backslash and an 'n', and other control
// characters dropped, so that it fits on the one line of an ATF result.
inline std::string
one_line(const std::string &s)
{
    std::string out;
    for (char c : s) {
        if (c == '\n')
            out += "\\n";
        else if (static_cast<unsigned char>(c) >= 0x20 || c == '\t')
            out += c;
    }
    return out;
}

// Makes the compiler believe that p escapes, so that a malloc/free pair (or a
// store into a block) cannot be optimised away.
inline void
escape(const void *p)
{
    __asm__ __volatile__("" : : "g"(p) : "memory");
}

// Returns x, hidden from the optimiser (no constant folding of sizes).
template <typename T>
inline T
opaque(T x)
{
    __asm__ __volatile__("" : "+r"(x));
    return x;
}

// The allocator's page, the build's (configure --with-lg-page): what
// valloc aligns to and large blocks are multiples of.  It may be bigger
// than the system's (a 64 KiB build runs on 4 KiB pages).
inline size_t
page_size(void)
{
    return size_t(1) << LG_PAGE;
}

// The largest small class, 3.5 pages (arenalloc(3), "Size classes"):
// 14336 bytes with 4 KiB pages.
inline size_t
largest_small_class(void)
{
    return size_t(7) << (LG_PAGE - 1);
}

// The first large class, four pages (16 KiB with 4 KiB pages), and the
// largest class the thread caches keep: 64 KiB, or four pages with 64 KiB
// pages (arenalloc(3), "Thread caches").
inline size_t
first_large_class(void)
{
    return 4 * page_size();
}

inline size_t
largest_cached_class(void)
{
    return 4 * page_size() > (size_t(64) << 10) ? 4 * page_size() : size_t(64) << 10;
}

// A cached large class standing for the size at_4k (16 to 64 KiB) of a
// 4 KiB-page build: the same with 4 KiB pages; with bigger pages, whose
// caches hold one large class, that class.
inline size_t
cached_large(size_t at_4k)
{
    return page_size() == 4096 ? at_4k : largest_cached_class();
}

// The system's page: the unit of /proc/self/statm and of the kernel's
// calls.
inline size_t
system_page_size(void)
{
    return static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

inline bool
is_aligned(const void *p, size_t alignment)
{
    return (reinterpret_cast<uintptr_t>(p) & (alignment - 1)) == 0;
}

inline std::string
hex(const void *p)
{
    tstd::ostringstream ss;
    ss << p;
    return ss.str();
}

// --- Byte patterns -------------------------------------------------------
//
// The pattern of a block is a function of a seed (usually derived from the
// block's address and size) and the offset, written word by word so that
// filling multi-MiB blocks stays cheap.  Byte k is byte k % 8 of
// pattern_word(seed, k / 8) counted from the least significant end, on
// every machine: a block checked over fewer bytes than were filled, which
// ends inside a word, then reads the same bytes as the fill wrote.

inline uint64_t
pattern_seed(const void *p, size_t n, uint64_t salt = 0)
{
    uint64_t x = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)) ^
                 (static_cast<uint64_t>(n) << 17) ^ (salt * 0x94D049BB133111EBull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x | 1;
}

inline uint64_t
pattern_word(uint64_t seed, size_t i)
{
    return seed ^ (static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull);
}

// pattern_word(seed, i) as stored in memory: least significant byte first.
inline uint64_t
pattern_stored_word(uint64_t seed, size_t i)
{
    const uint64_t word = pattern_word(seed, i);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(word);
#else
    return word;
#endif
}

// Fills n bytes at p (p at least 8-byte aligned) with the pattern of seed.
inline void
pattern_fill(void *p, size_t n, uint64_t seed)
{
    uint64_t *w = static_cast<uint64_t *>(p);
    const size_t nw = n / 8;
    for (size_t i = 0; i < nw; i++)
        w[i] = pattern_stored_word(seed, i);
    const uint64_t last = pattern_word(seed, nw);
    unsigned char *tail = static_cast<unsigned char *>(p) + nw * 8;
    for (size_t i = 0; i < n % 8; i++)
        tail[i] = static_cast<unsigned char>(last >> (8 * i));
    escape(p);
}

// Returns the offset of the first byte of the n bytes at p that differs from
// the pattern of seed, or n when all match.
inline size_t
pattern_check(const void *p, size_t n, uint64_t seed)
{
    const uint64_t *w = static_cast<const uint64_t *>(p);
    const size_t nw = n / 8;
    for (size_t i = 0; i < nw; i++) {
        if (w[i] != pattern_stored_word(seed, i)) {
            for (size_t b = 0; b < 8; b++) {
                const unsigned char expected = static_cast<unsigned char>(
                    pattern_word(seed, i) >> (8 * b));
                if (reinterpret_cast<const unsigned char *>(&w[i])[b] !=
                    expected)
                    return i * 8 + b;
            }
        }
    }
    const uint64_t last = pattern_word(seed, nw);
    const unsigned char *tail =
        static_cast<const unsigned char *>(p) + nw * 8;
    for (size_t i = 0; i < n % 8; i++)
        if (tail[i] != static_cast<unsigned char>(last >> (8 * i)))
            return nw * 8 + i;
    return n;
}

// Returns the offset of the first of n bytes at p that is not c, or n.
inline size_t
first_not(const void *p, size_t n, unsigned char c)
{
    const unsigned char *b = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; i++)
        if (b[i] != c)
            return i;
    return n;
}

// --- A small, fast PRNG (xorshift64*) -------------------------------------

struct rng {
    uint64_t s;
    explicit rng(uint64_t seed) : s(seed ? seed : 0x2545F4914F6CDD1Dull) {}
    uint64_t next(void)
    {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 0x2545F4914F6CDD1Dull;
    }
    // Uniform in [lo, hi].
    uint64_t range(uint64_t lo, uint64_t hi)
    {
        return lo + next() % (hi - lo + 1);
    }
    // Roughly log-uniform in [lo, hi] (lo >= 1): small values are common.
    uint64_t log_range(uint64_t lo, uint64_t hi)
    {
        unsigned lg_lo = 63 - __builtin_clzll(lo);
        unsigned lg_hi = 63 - __builtin_clzll(hi);
        unsigned lg = static_cast<unsigned>(range(lg_lo, lg_hi));
        uint64_t a = uint64_t(1) << lg;
        uint64_t b = (lg >= 63) ? ~uint64_t(0) : (uint64_t(1) << (lg + 1)) - 1;
        if (a < lo) a = lo;
        if (b > hi) b = hi;
        return range(a, b);
    }
};

inline double
now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

// --- Child processes ------------------------------------------------------

struct child_result {
    int status = 0;          // as from waitpid()
    bool timed_out = false;  // killed with SIGKILL after the deadline
    std::string out;         // everything the child wrote to stdout
    std::string err;         // everything the child wrote to stderr

    bool exited_ok(void) const
    {
        return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    std::string describe(void) const
    {
        tstd::ostringstream ss;
        if (timed_out)
            ss << "timed out (killed)";
        else if (WIFEXITED(status))
            ss << "exit status " << WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
            ss << "killed by signal " << WTERMSIG(status) << " ("
               << strsignal(WTERMSIG(status)) << ")";
        else
            ss << "status " << status;
        ss << "; stderr: [" << err << "]";
        return ss.str();
    }
};

namespace detail {

// Reads both pipes until EOF or until the deadline passes; then reaps pid
// (killing it with SIGKILL first on timeout).
inline child_result
collect(pid_t pid, int out_fd, int err_fd, double timeout_s)
{
    child_result r;
    const double deadline = now_seconds() + timeout_s;
    int fds[2] = { out_fd, err_fd };
    std::string *bufs[2] = { &r.out, &r.err };
    for (;;) {
        struct pollfd pfd[2];
        int n = 0;
        int which[2];
        for (int i = 0; i < 2; i++) {
            if (fds[i] >= 0) {
                pfd[n].fd = fds[i];
                pfd[n].events = POLLIN;
                pfd[n].revents = 0;
                which[n] = i;
                n++;
            }
        }
        if (n == 0)
            break;
        const double left = deadline - now_seconds();
        if (left <= 0) {
            r.timed_out = true;
            break;
        }
        const int rv = poll(pfd, n, static_cast<int>(left * 1000) + 1);
        if (rv < 0 && errno == EINTR)
            continue;
        if (rv < 0)
            break;
        for (int k = 0; k < n; k++) {
            if (pfd[k].revents == 0)
                continue;
            char buf[65536];
            const ssize_t got = read(pfd[k].fd, buf, sizeof(buf));
            if (got > 0) {
                bufs[which[k]]->append(buf, static_cast<size_t>(got));
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(pfd[k].fd);
                fds[which[k]] = -1;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    // The pipes are closed; the child may still be running (timeout, or it
    // closed its outputs early).  Wait for it, bounded by the deadline.
    while (!r.timed_out) {
        const pid_t w = waitpid(pid, &r.status, WNOHANG);
        if (w == pid)
            return r;
        if (w < 0 && errno != EINTR)
            return r;
        if (now_seconds() >= deadline)
            r.timed_out = true;
        else
            usleep(1000);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &r.status, 0) < 0 && errno == EINTR)
        continue;
    return r;
}

inline void
no_core_dumps(void)
{
    struct rlimit rl;
    rl.rlim_cur = 0;
    rl.rlim_max = 0;
    (void)setrlimit(RLIMIT_CORE, &rl);
}

}  // namespace detail

// Runs fn() in a forked child whose stdout and stderr go to pipes; the child
// exits with status 0 if fn returns.  Core dumps are disabled in the child.
template <typename F>
child_result
run_in_child(F fn, double timeout_s = 30)
{
    int out[2], err[2];
    if (pipe(out) == -1 || pipe(err) == -1)
        ATF_FAIL(std::string("pipe failed: ") + strerror(errno));
    const pid_t pid = fork();
    if (pid == -1)
        ATF_FAIL(std::string("fork failed: ") + strerror(errno));
    if (pid == 0) {
        detail::no_core_dumps();
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(out[0]); close(out[1]);
        close(err[0]); close(err[1]);
        fn();
        _exit(0);
    }
    close(out[1]);
    close(err[1]);
    return detail::collect(pid, out[0], err[0], timeout_s);
}

// Runs a program (looked up in PATH when argv[0] has no slash) with the
// environment of this process plus the NAME=VALUE pairs in env, stdin from
// stdin_path (or /dev/null), and returns its output and status.
inline child_result
run_program(const std::vector<std::string> &argv,
            const std::vector<std::string> &env,
            const std::string &stdin_path = "/dev/null",
            double timeout_s = 120)
{
    // Build argv and envp before forking: the child only calls
    // async-signal-safe functions.
    std::vector<char *> cargv;
    for (const std::string &a : argv)
        cargv.push_back(const_cast<char *>(a.c_str()));
    cargv.push_back(NULL);

    std::vector<std::string> envs;
    for (char **e = environ; *e != NULL; e++) {
        const std::string var(*e);
        const std::string name = var.substr(0, var.find('='));
        bool overridden = false;
        for (const std::string &o : env)
            if (o.substr(0, o.find('=')) == name)
                overridden = true;
        if (!overridden)
            envs.push_back(var);
    }
    for (const std::string &o : env)
        envs.push_back(o);
    std::vector<char *> cenv;
    for (const std::string &e : envs)
        cenv.push_back(const_cast<char *>(e.c_str()));
    cenv.push_back(NULL);

    const int in = open(stdin_path.c_str(), O_RDONLY);
    if (in == -1)
        ATF_FAIL("cannot open " + stdin_path + ": " + strerror(errno));
    int out[2], err[2];
    if (pipe(out) == -1 || pipe(err) == -1)
        ATF_FAIL(std::string("pipe failed: ") + strerror(errno));
    const pid_t pid = fork();
    if (pid == -1)
        ATF_FAIL(std::string("fork failed: ") + strerror(errno));
    if (pid == 0) {
        detail::no_core_dumps();
        dup2(in, STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(in);
        close(out[0]); close(out[1]);
        close(err[0]); close(err[1]);
        execvpe(cargv[0], cargv.data(), cenv.data());
        const char msg[] = "exec failed\n";
        (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(127);
    }
    close(in);
    close(out[1]);
    close(err[1]);
    return detail::collect(pid, out[0], err[0], timeout_s);
}

// Splits s into lines (without the newlines).
inline std::vector<std::string>
lines_of(const std::string &s)
{
    std::vector<std::string> v;
    std::string::size_type start = 0;
    while (start < s.size()) {
        std::string::size_type nl = s.find('\n', start);
        if (nl == std::string::npos) {
            v.push_back(s.substr(start));
            break;
        }
        v.push_back(s.substr(start, nl - start));
        start = nl + 1;
    }
    return v;
}

inline bool
starts_with(const std::string &s, const std::string &prefix)
{
    return s.compare(0, prefix.size(), prefix) == 0;
}

// The allocator's lines ("arenalloc: ...") of a child's stderr.
inline std::vector<std::string>
report_lines(const std::string &err)
{
    std::vector<std::string> v;
    for (const std::string &line : lines_of(err))
        if (starts_with(line, "arenalloc:"))
            v.push_back(line);
    return v;
}

// Path of an executable found in PATH (or in the fixed fallbacks), "" if none.
inline std::string
find_program(const std::string &name,
             const std::vector<std::string> &fallbacks = {})
{
    for (const std::string &f : fallbacks)
        if (access(f.c_str(), X_OK) == 0)
            return f;
    const char *path = getenv("PATH");
    std::string p = path != NULL ? path : "/usr/bin:/bin";
    std::string::size_type start = 0;
    for (;;) {
        std::string::size_type colon = p.find(':', start);
        std::string dir = p.substr(start, colon == std::string::npos
                                              ? std::string::npos
                                              : colon - start);
        if (dir.empty())
            dir = ".";
        const std::string cand = dir + "/" + name;
        if (access(cand.c_str(), X_OK) == 0)
            return cand;
        if (colon == std::string::npos)
            break;
        start = colon + 1;
    }
    return "";
}

// Path of the running test program, for tests that run it again with
// other options; skips the test where /proc/self/exe is missing.
inline std::string
self_path(void)
{
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0)
        ATF_SKIP("/proc/self/exe is not available");
    buf[n] = '\0';
    return buf;
}

}  // namespace testutil

#endif  // !ARENALLOC_TESTS_INTEGRATION_TEST_UTIL_H
