// atf.h — the part of the atf-c++ interface the tests use, implemented
// here so that the same test sources build into programs that need no ATF
// library.  Two builds use it:
//   - the musl build (tools/musl/build-and-test, ARENALLOC_STANDALONE_TESTS):
//     no ATF, no Kyua, no libstdc++ (see mini_std.h);
//   - the cross builds (tools/cross-check, through tests/cross/atf-c++.hpp):
//     programs for another architecture, where Debian has no atf-c++ that
//     installs beside the host's, run by the host's Kyua under qemu-user.
//
// A program built with it runs in one of two ways:
//   prog [case...]   runs the cases (all by default) one after the other,
//                    each in a forked child (a crash or abort fails only
//                    that case), prints one line per case and then
//                        N passed, N failed
//                    (", N skipped" added when some were skipped), and exits
//                    0 when nothing failed;
//   prog -l          lists the cases in the ATF test-program format, and
//   prog -r FILE [-s DIR] [-v VAR=VALUE]... CASE[:body]
//                    runs one case and writes its result to FILE, as an ATF
//                    test program does for Kyua (atf-test-program(1)):
//                    "passed", "failed: why" or "skipped: why", exit status
//                    0, 1 and 0.  -v sets what get_config_var returns.
//
// Supported: ATF_TEST_CASE, ATF_TEST_CASE_WITHOUT_HEAD, ATF_TEST_CASE_HEAD,
// ATF_TEST_CASE_BODY, ATF_INIT_TEST_CASES, ATF_ADD_TEST_CASE, ATF_REQUIRE,
// ATF_REQUIRE_MSG, ATF_REQUIRE_EQ, ATF_REQUIRE_MATCH, ATF_FAIL, ATF_SKIP,
// ATF_PASS, set_md_var (the "timeout" variable is enforced with alarm(2);
// the others are kept for -l), get_config_var, has_config_var and
// tc::fail/skip/pass.
#ifndef ARENALLOC_TESTS_STANDALONE_ATF_H
#define ARENALLOC_TESTS_STANDALONE_ATF_H

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include <regex.h>

#include "mini_std.h"

// The stream failure messages are formatted with: the standard one where
// libstdc++ is there (it prints every type a test compares), else
// mini_std.h's.
#ifdef ARENALLOC_STANDALONE_TESTS
namespace atfu_std = ministd;
#else
#include <sstream>
namespace atfu_std = std;
#endif

namespace atf {
namespace tests {

class tc {
public:
    tc(const char *name, bool has_head) : name_(name), has_head_(has_head) {}
    tc(const tc &) = delete;
    tc &operator=(const tc &) = delete;
    virtual ~tc() {}

    const char *name() const { return name_; }
    bool has_head() const { return has_head_; }

    void set_md_var(const std::string &key, const std::string &value)
    {
        for (std::pair<std::string, std::string> &kv : md_)
            if (kv.first == key) {
                kv.second = value;
                return;
            }
        md_.push_back(std::make_pair(key, value));
    }
    std::string get_md_var(const std::string &key) const
    {
        for (const std::pair<std::string, std::string> &kv : md_)
            if (kv.first == key)
                return kv.second;
        return std::string();
    }

    // Kyua's configuration variables (-v VAR=VALUE), shared by all cases.
    static std::vector<std::pair<std::string, std::string> > &config()
    {
        static std::vector<std::pair<std::string, std::string> > vars;
        return vars;
    }
    bool has_config_var(const std::string &key) const
    {
        for (const std::pair<std::string, std::string> &kv : config())
            if (kv.first == key)
                return true;
        return false;
    }
    std::string get_config_var(const std::string &key, const std::string &dflt) const
    {
        for (const std::pair<std::string, std::string> &kv : config())
            if (kv.first == key)
                return kv.second;
        return dflt;
    }
    std::string get_config_var(const std::string &key) const
    {
        if (!has_config_var(key))
            fail("no configuration variable " + key);
        return get_config_var(key, std::string());
    }

    // The outcome of the running case: written on the child's stdout
    // pipe to the runner, then the child exits (see run_one).
    [[noreturn]] static void fail(const std::string &reason) { finish(1, "failed", reason); }
    [[noreturn]] static void skip(const std::string &reason) { finish(2, "skipped", reason); }
    [[noreturn]] static void pass() { finish(0, "passed", std::string()); }

    virtual void head() {}
    virtual void body() const = 0;

    // The file descriptor a running case reports its outcome on.
    static int &result_fd()
    {
        static int fd = -1;
        return fd;
    }

private:
    [[noreturn]] static void finish(int code, const char *what, const std::string &reason)
    {
        std::string line = what;
        if (!reason.empty())
            line += ": " + reason;
        line += '\n';
        if (result_fd() >= 0 && write(result_fd(), line.data(), line.size()) < 0)
            code = 3;
        fflush(NULL);
        // _exit: the case is over; exit handlers belong to the runner.
        _exit(code);
    }

    const char *name_;
    bool has_head_;
    std::vector<std::pair<std::string, std::string> > md_;
};

}  // namespace tests

namespace standalone {

inline std::string
signal_name(int sig)
{
    const char *s = strsignal(sig);
    ministd::ostringstream ss;
    ss << "received signal " << sig << " (" << (s != NULL ? s : "?") << ")";
    return ss.str();
}

// Runs one case in a child; returns 0 passed, 1 failed, 2 skipped, and
// sets *why to the reason.
inline int
run_one(tests::tc *t, std::string *why)
{
    int fds[2];
    if (pipe(fds) != 0) {
        *why = std::string("pipe: ") + strerror(errno);
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        *why = std::string("fork: ") + strerror(errno);
        close(fds[0]);
        close(fds[1]);
        return 1;
    }
    if (pid == 0) {
        close(fds[0]);
        tests::tc::result_fd() = fds[1];
        unsigned timeout = 300;  // ATF's default
        std::string t_s = t->get_md_var("timeout");
        if (!t_s.empty())
            timeout = static_cast<unsigned>(strtoul(t_s.c_str(), NULL, 10));
        if (timeout != 0)
            alarm(timeout);
        t->body();
        tests::tc::pass();
    }
    close(fds[1]);
    std::string out;
    char buf[512];
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        out.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    while (!out.empty() && out[out.size() - 1] == '\n')
        out.erase(out.size() - 1);
    if (WIFSIGNALED(status)) {
        *why = WTERMSIG(status) == SIGALRM ? std::string("timed out")
                                            : signal_name(WTERMSIG(status));
        return 1;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    size_t colon = out.find(": ");
    *why = colon == std::string::npos ? std::string() : out.substr(colon + 2);
    if (code == 0 && out == "passed")
        return 0;
    if (code == 2 && out.compare(0, 7, "skipped") == 0)
        return 2;
    if (out.empty()) {
        ministd::ostringstream ss;
        ss << "exited with status " << code << " without a result";
        *why = ss.str();
    }
    return 1;
}

// Lists the cases in the ATF test-program format Kyua reads.
inline void
list_atf(const std::vector<tests::tc *> &all)
{
    printf("Content-Type: application/X-atf-tp; version=\"1\"\n");
    for (tests::tc *t : all) {
        printf("\nident: %s\n", t->name());
        static const char *const keys[] = {"descr", "timeout"};
        for (const char *k : keys) {
            std::string v = t->get_md_var(k);
            if (!v.empty())
                printf("%s: %s\n", k, v.c_str());
        }
    }
}

// prog -r FILE [-s DIR] [-v VAR=VALUE]... CASE[:body]: the one case, its
// result written to FILE.  Returns the exit status.
inline int
run_atf(int argc, char **argv, const std::vector<tests::tc *> &all, const char *prog)
{
    std::string result_file, name;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a.size() >= 2 && a[0] == '-' && (a[1] == 'r' || a[1] == 's' || a[1] == 'v')) {
            std::string v = a.substr(2);
            if (v.empty() && i + 1 < argc)
                v = argv[++i];
            if (a[1] == 'r')
                result_file = v;
            else if (a[1] == 'v') {
                size_t eq = v.find('=');
                if (eq == std::string::npos) {
                    fprintf(stderr, "%s: -v needs VAR=VALUE, got %s\n", prog, v.c_str());
                    return 2;
                }
                tests::tc::config().push_back(std::make_pair(v.substr(0, eq), v.substr(eq + 1)));
            }
        } else if (name.empty()) {
            name = a;
        } else {
            fprintf(stderr, "%s: one test case at a time with -r\n", prog);
            return 2;
        }
    }
    size_t colon = name.find(':');
    if (colon != std::string::npos) {
        // No case has a cleanup part: it has nothing to do.
        if (name.substr(colon) == ":cleanup")
            return 0;
        name.erase(colon);
    }
    tests::tc *chosen = NULL;
    for (tests::tc *t : all)
        if (name == t->name())
            chosen = t;
    if (chosen == NULL) {
        fprintf(stderr, "%s: no test case named %s\n", prog, name.c_str());
        return 2;
    }
    std::string why;
    int r = run_one(chosen, &why);
    std::string line = r == 0 ? "passed" : r == 2 ? "skipped" : "failed";
    if (r != 0)
        line += ": " + (why.empty() ? std::string("no reason given") : why);
    line += '\n';
    FILE *f = fopen(result_file.c_str(), "w");
    if (f == NULL || fputs(line.c_str(), f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write %s\n", prog, result_file.c_str());
        return 2;
    }
    return r == 1 ? 1 : 0;
}

inline int
run(int argc, char **argv, void (*init)(std::vector<tests::tc *> &))
{
    std::vector<tests::tc *> all;
    init(all);
    for (tests::tc *t : all)
        if (t->has_head())
            t->head();

    const char *prog = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 : argv[0];
    // Kyua gives -v and -s to the listing as well as to a case.
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-l") == 0) {
            list_atf(all);
            return 0;
        }
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "-r", 2) == 0)
            return run_atf(argc, argv, all, prog);
    std::vector<tests::tc *> chosen;
    for (int i = 1; i < argc; i++) {
        bool found = false;
        for (tests::tc *t : all)
            if (strcmp(t->name(), argv[i]) == 0) {
                chosen.push_back(t);
                found = true;
            }
        if (!found) {
            fprintf(stderr, "%s: no test case named %s\n", prog, argv[i]);
            return 2;
        }
    }
    if (argc < 2)
        chosen = all;

    unsigned passed = 0, failed = 0, skipped = 0;
    for (tests::tc *t : chosen) {
        std::string why;
        int r = run_one(t, &why);
        const char *what = r == 0 ? "passed" : r == 2 ? "skipped" : "failed";
        printf("%s:%s  ->  %s%s%s\n", prog, t->name(), what, why.empty() ? "" : ": ", why.c_str());
        fflush(stdout);
        (r == 0 ? passed : r == 2 ? skipped : failed)++;
    }
    printf("%u passed, %u failed", passed, failed);
    if (skipped != 0)
        printf(", %u skipped", skipped);
    printf("\n");
    return failed == 0 ? 0 : 1;
}

// Whether text matches the extended regular expression re.
inline bool
matches(const char *re, const std::string &text)
{
    regex_t compiled;
    if (regcomp(&compiled, re, REG_EXTENDED | REG_NOSUB) != 0)
        tests::tc::fail(std::string("bad regular expression ") + re);
    bool m = regexec(&compiled, text.c_str(), 0, NULL, 0) == 0;
    regfree(&compiled);
    return m;
}

}  // namespace standalone
}  // namespace atf

#define ATF_TEST_CASE(name)                                                 \
    class atfu_tc_##name : public atf::tests::tc {                          \
        void head() override;                                               \
        void body() const override;                                         \
                                                                            \
    public:                                                                 \
        atfu_tc_##name() : atf::tests::tc(#name, true) {}                   \
    }

#define ATF_TEST_CASE_WITHOUT_HEAD(name)                                    \
    class atfu_tc_##name : public atf::tests::tc {                          \
        void body() const override;                                         \
                                                                            \
    public:                                                                 \
        atfu_tc_##name() : atf::tests::tc(#name, false) {}                  \
    }

#define ATF_TEST_CASE_HEAD(name) void atfu_tc_##name::head()
#define ATF_TEST_CASE_BODY(name) void atfu_tc_##name::body() const

#define ATF_INIT_TEST_CASES(tcs)                                            \
    static void atfu_init_tcs(std::vector<atf::tests::tc *> &);             \
    int main(int argc, char **argv)                                         \
    {                                                                       \
        return atf::standalone::run(argc, argv, atfu_init_tcs);             \
    }                                                                       \
    static void atfu_init_tcs(std::vector<atf::tests::tc *> &tcs)

#define ATF_ADD_TEST_CASE(tcs, name) (tcs).push_back(new atfu_tc_##name())

#define ATF_PASS() atf::tests::tc::pass()
#define ATF_FAIL(reason) atf::tests::tc::fail(reason)
#define ATF_SKIP(reason) atf::tests::tc::skip(reason)

#define ATF_REQUIRE_MSG(cond, msg)                                          \
    do {                                                                    \
        if (!(cond)) {                                                      \
            atfu_std::ostringstream atfu_ss_;                                \
            atfu_ss_ << "Line " << __LINE__ << ": " << msg;                 \
            atf::tests::tc::fail(atfu_ss_.str());                           \
        }                                                                   \
    } while (false)

#define ATF_REQUIRE(cond) ATF_REQUIRE_MSG(cond, #cond << " not met")

// Each side is evaluated once, as in a plain comparison.
#define ATF_REQUIRE_EQ(expected, actual)                                    \
    do {                                                                    \
        const auto &atfu_e_ = (expected);                                   \
        const auto &atfu_a_ = (actual);                                     \
        ATF_REQUIRE_MSG(atfu_e_ == atfu_a_, #expected << " != " << #actual \
                                                << " (" << atfu_e_ << " != " \
                                                << atfu_a_ << ")");         \
    } while (false)

#define ATF_REQUIRE_MATCH(re, text)                                         \
    ATF_REQUIRE_MSG(atf::standalone::matches((re), (text)),                 \
                    "'" << (text) << "' does not match " << (re))

#endif
