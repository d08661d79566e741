// Unit tests of the MALLOC_OPTIONS parser (lib/options.h): every letter in
// both cases, repetition counts, bounds and their warnings, unknown
// characters, empty and very long strings, the three sources and their
// order, the list of options in force, that parsing never allocates, and
// that the manual page documents every letter of the option table.
//
// The test process runs on the system allocator; the parser is called
// directly.  Warnings go to descriptor 2, which the tests redirect to a file
// around each call.  Anything that must abort (A in force) runs in a forked
// child.
#include <atf-c++.hpp>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "chunk.h"
#include "options.h"
#include "platform.h"
#include "require_msg.h"

// The link-time source of options: options_init() reads it when it is not
// null.  A strong definition here satisfies the library's weak reference;
// each test case sets it (Kyua runs every case in its own process).
extern "C" {
const char *_malloc_options = nullptr;
const char *malloc_conf = nullptr;  // jemalloc's, likewise
}

// Allocation counting: the whole test program's malloc goes through these
// wrappers to glibc, so that a test can check that the parser never calls
// the allocator (it runs inside malloc's initialization).
extern "C" void *__libc_malloc(size_t);
extern "C" void *__libc_calloc(size_t, size_t);
extern "C" void *__libc_realloc(void *, size_t);

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocs{0};
}  // namespace

extern "C" void *malloc(size_t n) {
    if (g_counting.load(std::memory_order_relaxed))
        g_allocs.fetch_add(1, std::memory_order_relaxed);
    return __libc_malloc(n);
}

extern "C" void *calloc(size_t n, size_t size) {
    if (g_counting.load(std::memory_order_relaxed))
        g_allocs.fetch_add(1, std::memory_order_relaxed);
    return __libc_calloc(n, size);
}

extern "C" void *realloc(void *p, size_t n) {
    if (g_counting.load(std::memory_order_relaxed))
        g_allocs.fetch_add(1, std::memory_order_relaxed);
    return __libc_realloc(p, n);
}

using namespace arenalloc;

namespace {

// --- The fields of Options, by name -------------------------------------

typedef std::vector<std::pair<std::string, long long>> Fields;

Fields fields() {
    const Options &o = g_options;
    return {
        {"abort_on_warning", o.abort_on_warning},
        {"use_sbrk", o.use_sbrk},
        {"use_mmap", o.use_mmap},
        {"lg_dirty_ratio", o.lg_dirty_ratio},
        {"lg_tcache_gc", o.lg_tcache_gc},
        {"tcache_shift", o.tcache_shift},
        {"junk", o.junk},
        {"lg_chunk", o.lg_chunk},
        {"narenas", o.narenas},
        {"print_summary", o.print_summary},
        {"trace", o.trace},
        {"malloc0_null", o.malloc0_null},
        {"xmalloc", o.xmalloc},
        {"zero", o.zero},
        {"hardened", o.hardened},
    };
}

long long field(const std::string &name) {
    for (const auto &f : fields())
        if (f.first == name)
            return f.second;
    ATF_FAIL("no field " + name);
    return 0;
}

std::string describe(const Fields &fs) {
    std::ostringstream ss;
    for (const auto &f : fs)
        ss << f.first << "=" << f.second << " ";
    return ss.str();
}

// Names of the fields that differ between a and b.
std::vector<std::string> changed(const Fields &a, const Fields &b) {
    std::vector<std::string> v;
    for (size_t i = 0; i < a.size(); i++)
        if (a[i].second != b[i].second)
            v.push_back(a[i].first);
    return v;
}

// --- Standard error, captured -------------------------------------------

// Runs fn with descriptor 2 redirected to a file; returns what was written.
template <typename F>
std::string capture_stderr(F fn) {
    char path[] = "stderr.XXXXXX";
    int fd = mkstemp(path);
    ATF_REQUIRE(fd != -1);
    unlink(path);
    int saved = dup(STDERR_FILENO);
    ATF_REQUIRE(saved != -1);
    ATF_REQUIRE(dup2(fd, STDERR_FILENO) != -1);
    fn();
    dup2(saved, STDERR_FILENO);
    close(saved);
    std::string out;
    char buf[65536];
    ATF_REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        ATF_REQUIRE(n >= 0);
        if (n == 0)
            break;
        out.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return out;
}

// Parses s after options_reset(); returns the warnings written.
std::string parse(const std::string &s) {
    options_reset();
    return capture_stderr([&] { options_parse(s.c_str()); });
}

std::vector<std::string> lines_of(const std::string &s) {
    std::vector<std::string> v;
    std::string::size_type start = 0;
    while (start < s.size()) {
        std::string::size_type nl = s.find('\n', start);
        if (nl == std::string::npos) {
            v.push_back(s.substr(start));  // an unterminated line
            break;
        }
        v.push_back(s.substr(start, nl - start));
        start = nl + 1;
    }
    return v;
}

std::string printable(const std::string &s) {
    std::string out;
    for (unsigned char c : s) {
        if (c == '\n') {
            out += "\\n";
        } else if (c < 0x20 || c >= 0x7f) {
            char b[8];
            snprintf(b, sizeof(b), "\\x%02x", c);
            out += b;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

// The prefix of every options warning: "<prog>: (malloc) ".
std::string prefix() {
    return std::string(platform_progname()) + ": (malloc) ";
}

std::string unsupported(char c) {
    return prefix() + "Unsupported character in malloc options: '" + std::string(1, c) + "'";
}

// Requires err to be exactly one complete line, the warning that an option
// is at its maximum (or minimum) and letter c was ignored.
void require_bound_warning(const std::string &err, bool at_max, char c,
                           const std::string &context) {
    const std::vector<std::string> lines = lines_of(err);
    ATF_REQUIRE_MSG(lines.size() == 1 && err.back() == '\n',
                    context << ": expected one warning line, got ["
                            << printable(err) << "]");
    const std::string &l = lines[0];
    const std::string tail = std::string(at_max ? " at its maximum" : " at its minimum") +
                             ", ignoring: '" + std::string(1, c) + "'";
    ATF_REQUIRE_MSG(l.compare(0, prefix().size(), prefix()) == 0 &&
                        l.size() > prefix().size() + tail.size() &&
                        l.compare(l.size() - tail.size(), tail.size(), tail) == 0,
                    context << ": expected '" << prefix() << "<what>" << tail
                            << "', got [" << printable(l) << "]");
}

// --- Children that may abort ---------------------------------------------

struct ChildResult {
    int status;
    std::string err;
};

// Runs fn in a forked child (stderr to a pipe, no core dump); the child
// exits 0 when fn returns.
template <typename F>
ChildResult run_child(F fn) {
    int p[2];
    ATF_REQUIRE(pipe(p) == 0);
    pid_t pid = fork();
    ATF_REQUIRE(pid != -1);
    if (pid == 0) {
        struct rlimit rl = {0, 0};
        setrlimit(RLIMIT_CORE, &rl);
        dup2(p[1], STDERR_FILENO);
        close(p[0]);
        close(p[1]);
        fn();
        _exit(0);
    }
    close(p[1]);
    ChildResult r;
    char buf[4096];
    for (;;) {
        ssize_t n = read(p[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        r.err.append(buf, static_cast<size_t>(n));
    }
    close(p[0]);
    while (waitpid(pid, &r.status, 0) == -1)
        ATF_REQUIRE(errno == EINTR);
    return r;
}

bool aborted(const ChildResult &r) {
    return WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT;
}

bool exited_ok(const ChildResult &r) {
    return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
}

// --- The sources ---------------------------------------------------------

// A fresh symbolic link in the test's working directory pointing to
// target; returns its absolute path.
std::string make_link(const std::string &name, const std::string &target) {
    char cwd[4096];
    ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != nullptr);
    std::string path = std::string(cwd) + "/" + name;
    unlink(path.c_str());
    ATF_REQUIRE_MSG(symlink(target.c_str(), path.c_str()) == 0,
                    "symlink " << path << ": " << strerror(errno));
    return path;
}

// Sets the five sources (nullptr: absent); returns the link's path.
std::string set_sources(const char *link, const char *env, const char *global,
                        const char *conf_env = nullptr, const char *conf_global = nullptr) {
    static int n = 0;
    std::string path;
    if (link != nullptr)
        path = make_link("malloc.conf." + std::to_string(++n), link);
    else
        path = "/nonexistent/arenalloc-test/malloc.conf";
    static std::string kept;  // options_set_conf_path keeps the pointer
    kept = path;
    options_set_conf_path(kept.c_str());
    const std::pair<const char *, const char *> vars[] = {{"MALLOC_OPTIONS", env},
                                                          {"MALLOC_CONF", conf_env}};
    for (const auto &v : vars) {
        if (v.second != nullptr)
            ATF_REQUIRE(setenv(v.first, v.second, 1) == 0);
        else
            ATF_REQUIRE(unsetenv(v.first) == 0);
    }
    _malloc_options = global;
    malloc_conf = conf_global;
    return path;
}

// set_sources, then options_init(); returns the warnings written.
std::string init_with(const char *link, const char *env, const char *global,
                      const char *conf_env = nullptr, const char *conf_global = nullptr) {
    set_sources(link, env, global, conf_env, conf_global);
    return capture_stderr([] { options_init(); });
}

Fields default_fields() {
    options_reset();
    return fields();
}

// n followed by letter: "13F".
std::string times(int n, char letter) {
    return std::to_string(n) + letter;
}

// The strings that take each numeric option exactly to one of its bounds
// from the defaults (kLg*Default in options.h; arenalloc(3) documents them).
struct Bound {
    std::string s;      // e.g. "13F"
    char letter;
    bool at_max;        // the warning past it says "maximum"
    const char *field;
    long long value;
};

std::vector<Bound> bounds() {
    return {
        // F lowers lg_dirty_ratio: more dirty pages allowed.
        {times(kLgDirtyRatioDefault - kLgDirtyRatioMin, 'F'), 'F', true, "lg_dirty_ratio",
         kLgDirtyRatioMin},
        {times(kLgDirtyRatioMax - kLgDirtyRatioDefault, 'f'), 'f', false, "lg_dirty_ratio",
         kLgDirtyRatioMax},
        {times(kLgTcacheGcMax - kLgTcacheGcDefault, 'G'), 'G', true, "lg_tcache_gc",
         kLgTcacheGcMax},
        {times(kLgTcacheGcDefault, 'g'), 'g', false, "lg_tcache_gc", 0},  // GC off
        {times(kTcacheShiftMax, 'H'), 'H', true, "tcache_shift", kTcacheShiftMax},
        {times(-kTcacheShiftOff, 'h'), 'h', false, "tcache_shift", kTcacheShiftOff},
        {times(static_cast<int>(kLgChunkMax - kLgChunkDefault), 'K'), 'K', true, "lg_chunk",
         kLgChunkMax},
        {times(static_cast<int>(kLgChunkDefault - kLgChunkMin), 'k'), 'k', false, "lg_chunk",
         kLgChunkMin},
    };
}

// --- What each letter does -----------------------------------------------

// Parsing pre and then letter changes exactly field, from before to after.
// For the numeric options "before" is the default unless pre says
// otherwise.
struct LetterCase {
    char letter;
    const char *pre;
    const char *field;
    long long before;
    long long after;
};

}  // namespace

// --- Defaults ---------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(reset__defaults);
ATF_TEST_CASE_BODY(reset__defaults) {
    // Scribble over every field first: reset must restore each one.
    parse("DJPUVXZ9F9G3H9K3NA");
    options_reset();
    ATF_REQUIRE_EQ(g_options.abort_on_warning, false);
    ATF_REQUIRE_EQ(g_options.use_sbrk, false);
    ATF_REQUIRE_EQ(g_options.use_mmap, true);
    // The documented defaults (arenalloc(3)): dirty pages up to the recent
    // peak of active pages, GC every 8192 allocations, 2 MiB chunks.
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, kLgDirtyRatioDefault);
    ATF_REQUIRE_EQ(kLgDirtyRatioDefault, 0);
    ATF_REQUIRE_EQ(g_options.lg_tcache_gc, 13);
    ATF_REQUIRE_EQ(g_options.tcache_shift, 0);
    ATF_REQUIRE_EQ(g_options.junk, false);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 21);
    long long n = 4LL * platform_ncpus();
    ATF_REQUIRE_EQ(g_options.narenas, n > 4096 ? 4096 : n);
    ATF_REQUIRE_EQ(g_options.print_summary, false);
    ATF_REQUIRE_EQ(g_options.trace, false);
    ATF_REQUIRE_EQ(g_options.malloc0_null, false);
    ATF_REQUIRE_EQ(g_options.xmalloc, false);
    ATF_REQUIRE_EQ(g_options.zero, false);
}

// --- Every letter, both cases ------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(parse__each_letter_changes_its_field);
ATF_TEST_CASE_BODY(parse__each_letter_changes_its_field) {
    options_reset();
    const long long na = g_options.narenas;
    const long long dr = kLgDirtyRatioDefault, gc = kLgTcacheGcDefault, lc = kLgChunkDefault;
    const LetterCase cases[] = {
        {'A', "", "abort_on_warning", 0, 1},
        {'a', "A", "abort_on_warning", 1, 0},
        {'D', "", "use_sbrk", 0, 1},
        {'d', "D", "use_sbrk", 1, 0},
        {'M', "Dm", "use_mmap", 0, 1},
        {'m', "D", "use_mmap", 1, 0},
        {'F', "", "lg_dirty_ratio", dr, dr - 1},
        {'f', "", "lg_dirty_ratio", dr, dr + 1},
        {'G', "", "lg_tcache_gc", gc, gc + 1},
        {'g', "", "lg_tcache_gc", gc, gc - 1},
        {'H', "", "tcache_shift", 0, 1},
        {'h', "", "tcache_shift", 0, -1},
        {'J', "", "junk", 0, 1},
        {'j', "J", "junk", 1, 0},
        {'K', "", "lg_chunk", lc, lc + 1},
        {'k', "", "lg_chunk", lc, lc - 1},
        {'N', "n", "narenas", na / 2, na / 2 * 2},
        {'n', "", "narenas", na, na / 2},
        {'P', "", "print_summary", 0, 1},
        {'p', "P", "print_summary", 1, 0},
        {'U', "", "trace", 0, 1},
        {'u', "U", "trace", 1, 0},
        {'V', "", "malloc0_null", 0, 1},
        {'v', "V", "malloc0_null", 1, 0},
        {'X', "", "xmalloc", 0, 1},
        {'x', "X", "xmalloc", 1, 0},
        {'Z', "", "zero", 0, 1},
        {'z', "Z", "zero", 1, 0},
        {'S', "s", "hardened", 0, 1},  // s first: --enable-hardened makes S the default
        {'s', "S", "hardened", 1, 0},
    };
    // Every letter of the table is covered here in both cases, except the
    // ignored ones (tested below), and nothing else is.
    std::map<char, int> covered;
    for (const LetterCase &c : cases)
        covered[c.letter]++;
    for (unsigned i = 0; i < kOptionTableSize; i++) {
        const OptionDef &o = kOptionTable[i];
        ATF_REQUIRE_MSG(o.letter >= 'A' && o.letter <= 'Z',
                        "table row " << i << " has letter '" << o.letter << "'");
        if (o.kind == OptionKind::kIgnored)
            continue;
        ATF_REQUIRE_MSG(covered[o.letter] == 1 && covered[o.letter - 'A' + 'a'] == 1,
                        "no test of what '" << o.letter << "' does");
    }
    ATF_REQUIRE_EQ(covered.size(), sizeof(cases) / sizeof(cases[0]));
    for (const auto &c : covered) {
        char upper = c.first >= 'a' ? static_cast<char>(c.first - 'a' + 'A') : c.first;
        bool in_table = false;
        for (unsigned i = 0; i < kOptionTableSize; i++)
            in_table = in_table || kOptionTable[i].letter == upper;
        ATF_REQUIRE_MSG(in_table, "'" << c.first << "' is tested but not in the table");
    }

    for (const LetterCase &c : cases) {
        std::string err = parse(c.pre);
        ATF_REQUIRE_MSG(err.empty(), "'" << c.pre << "' warned: " << printable(err));
        const Fields before = fields();
        ATF_REQUIRE_MSG(field(c.field) == c.before,
                        "after '" << c.pre << "': " << c.field << " = " << field(c.field)
                                  << ", expected " << c.before);
        const char s[2] = {c.letter, '\0'};
        err = capture_stderr([&] { options_parse(s); });
        ATF_REQUIRE_MSG(err.empty(), "'" << c.letter << "' warned: " << printable(err));
        const Fields after = fields();
        const std::vector<std::string> diff = changed(before, after);
        ATF_REQUIRE_MSG(diff.size() == 1 && diff[0] == c.field,
                        "'" << c.pre << "' then '" << c.letter << "' changed ["
                            << describe(before) << "] into [" << describe(after)
                            << "]; expected only " << c.field);
        ATF_REQUIRE_MSG(field(c.field) == c.after,
                        "'" << c.letter << "': " << c.field << " = " << field(c.field)
                            << ", expected " << c.after);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__ignored_letters_are_silent);
ATF_TEST_CASE_BODY(parse__ignored_letters_are_silent) {
    // C, Q and E (size-class letters of the jemalloc-era BSD malloc) are
    // accepted with no effect and no warning.
    const Fields d = default_fields();
    for (const char *s : {"C", "c", "Q", "q", "E", "e", "CcQqEe", "64C64q64E", "3c2Q"}) {
        const std::string err = parse(s);
        ATF_REQUIRE_MSG(err.empty(), "'" << s << "' warned: " << printable(err));
        ATF_REQUIRE_MSG(changed(d, fields()).empty(),
                        "'" << s << "' changed the options: " << describe(fields()));
    }
    unsigned ignored = 0;
    for (unsigned i = 0; i < kOptionTableSize; i++)
        if (kOptionTable[i].kind == OptionKind::kIgnored) {
            ignored++;
            char l = kOptionTable[i].letter;
            ATF_REQUIRE_MSG(l == 'C' || l == 'Q' || l == 'E',
                            "'" << l << "' is ignored by the table");
        }
    ATF_REQUIRE_EQ(ignored, 3u);
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__last_letter_wins);
ATF_TEST_CASE_BODY(parse__last_letter_wins) {
    ATF_REQUIRE(parse("JjJ").empty());
    ATF_REQUIRE_EQ(g_options.junk, true);
    ATF_REQUIRE(parse("JjJj").empty());
    ATF_REQUIRE_EQ(g_options.junk, false);
    ATF_REQUIRE(parse("KKk").empty());
    ATF_REQUIRE_EQ(g_options.lg_chunk, 22);
    ATF_REQUIRE(parse("ZVXzvx").empty());
    ATF_REQUIRE_MSG(changed(default_fields(), (parse("ZVXzvx"), fields())).empty(),
                    describe(fields()));
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__sbrk_or_mmap_never_both_off);
ATF_TEST_CASE_BODY(parse__sbrk_or_mmap_never_both_off) {
    // "If both D and M are off, M is forced on (no warning)".
    ATF_REQUIRE(parse("m").empty());
    ATF_REQUIRE_EQ(g_options.use_sbrk, false);
    ATF_REQUIRE_EQ(g_options.use_mmap, true);
    ATF_REQUIRE(parse("Ddm").empty());
    ATF_REQUIRE_EQ(g_options.use_mmap, true);
    ATF_REQUIRE(parse("Dm").empty());
    ATF_REQUIRE_EQ(g_options.use_sbrk, true);
    ATF_REQUIRE_EQ(g_options.use_mmap, false);
    ATF_REQUIRE(parse("DM").empty());
    ATF_REQUIRE_EQ(g_options.use_sbrk, true);
    ATF_REQUIRE_EQ(g_options.use_mmap, true);
}

// --- Repetition counts -----------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(parse__repetition_counts);
ATF_TEST_CASE_BODY(parse__repetition_counts) {
    // The seed's tuning string, with no warning.
    std::string err = parse("7F6K");
    ATF_REQUIRE_MSG(err.empty(), "7F6K warned: " << printable(err));
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, kLgDirtyRatioDefault - 7);
    ATF_REQUIRE_EQ(g_options.lg_chunk, static_cast<int>(kLgChunkDefault) + 6);
    const Fields seed = fields();
    ATF_REQUIRE_EQ(changed(default_fields(), seed).size(), 2u);

    // A zero count applies the letter zero times.
    ATF_REQUIRE(parse("0F").empty());
    ATF_REQUIRE(changed(default_fields(), (parse("0F"), fields())).empty());
    ATF_REQUIRE(parse("0J0K00k").empty());
    ATF_REQUIRE_MSG(changed(default_fields(), fields()).empty(), describe(fields()));

    // A count applies to the next letter only.
    ATF_REQUIRE(parse("2KF").empty());
    ATF_REQUIRE_EQ(g_options.lg_chunk, static_cast<int>(kLgChunkDefault) + 2);
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, kLgDirtyRatioDefault - 1);
    // (Down one, up one, down one: within K's bounds at every page size.)
    ATF_REQUIRE(parse("1k1K1k").empty());
    ATF_REQUIRE_EQ(g_options.lg_chunk, static_cast<int>(kLgChunkDefault) - 1);
    ATF_REQUIRE(parse("10f").empty());
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, kLgDirtyRatioDefault + 10);

    // Leading zeros; a count on a boolean letter.
    ATF_REQUIRE(parse("007g").empty());
    ATF_REQUIRE_EQ(g_options.lg_tcache_gc, kLgTcacheGcDefault - 7);
    ATF_REQUIRE(parse("5J").empty());
    ATF_REQUIRE_EQ(g_options.junk, true);

    // Counts are capped (64): huge ones do not overflow into small ones.
    // 2^32 + 1 and 2^64 + 1 would wrap to 1 in 32- or 64-bit arithmetic.
    // (Past the bound they warn: how often is parse__repeat_past_bound_warns_once.)
    for (const char *s : {"64f", "99f", "999999f", "4294967297f", "18446744073709551617f",
                          "99999999999999999999999999999999999999f"}) {
        const std::string err = parse(s);
        ATF_REQUIRE_MSG(g_options.lg_dirty_ratio == kLgDirtyRatioMax,
                        s << ": lg_dirty_ratio " << g_options.lg_dirty_ratio);
        ATF_REQUIRE_MSG(!err.empty(), s << ": no warning");
        for (const std::string &l : lines_of(err))
            require_bound_warning(l + "\n", false, 'f', s);
    }
    // 64 is enough to reach every bound from its default.
    for (const Bound &b : bounds())
        ATF_REQUIRE_MSG(b.s.size() <= 3 && std::stoi(b.s) <= 64, b.s);

    // A count with no letter after it does nothing.
    for (const char *s : {"7", "123456789", "0"}) {
        const std::string e = parse(s);
        ATF_REQUIRE_MSG(e.empty(), s << " warned: " << printable(e));
        ATF_REQUIRE_MSG(changed(default_fields(), (parse(s), fields())).empty(), s);
    }
}

// --- Bounds ---------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(parse__bounds_reached_silently);
ATF_TEST_CASE_BODY(parse__bounds_reached_silently) {
    // The bounds of arenalloc(3): dirty pages from 1024 x (F) down to the
    // one-chunk floor (f); GC interval 2^1 .. 2^30, then off (g); thread
    // caches up to 8 x (H), off at 7 h; chunks 256 KiB .. 1 GiB (1 MiB ..
    // with 64 KiB pages: at least 16 pages).
    ATF_REQUIRE_EQ(kLgDirtyRatioMin, -10);
    ATF_REQUIRE_EQ(kLgDirtyRatioMax, 30);
    ATF_REQUIRE_EQ(kLgTcacheGcMax, 30);
    ATF_REQUIRE_EQ(kTcacheShiftMax, 3);
    ATF_REQUIRE_EQ(kTcacheShiftOff, -7);
    ATF_REQUIRE_EQ(kLgChunkMin, kLgPage == 16 ? 20u : 18u);
    ATF_REQUIRE_EQ(kLgChunkMax, 30u);
    for (const Bound &b : bounds()) {
        const std::string err = parse(b.s);
        ATF_REQUIRE_MSG(err.empty(), b.s << " warned: " << printable(err));
        ATF_REQUIRE_MSG(field(b.field) == b.value,
                        b.s << ": " << b.field << " = " << field(b.field) << ", expected "
                            << b.value);
    }
    // G from off goes back to the smallest interval (2 allocations).
    ATF_REQUIRE(parse(times(kLgTcacheGcDefault, 'g') + "G").empty());
    ATF_REQUIRE_EQ(g_options.lg_tcache_gc, 1);
    // 7h turns the caches off, as the manual says.
    ATF_REQUIRE(parse("7h").empty());
    ATF_REQUIRE_EQ(g_options.tcache_shift, kTcacheShiftOff);
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__past_bound_warns_and_keeps_value);
ATF_TEST_CASE_BODY(parse__past_bound_warns_and_keeps_value) {
    for (const Bound &b : bounds()) {
        ATF_REQUIRE(parse(b.s).empty());
        const Fields before = fields();
        const char s[2] = {b.letter, '\0'};
        const std::string err = capture_stderr([&] { options_parse(s); });
        require_bound_warning(err, b.at_max, b.letter, b.s + " then " + s);
        ATF_REQUIRE_MSG(changed(before, fields()).empty(),
                        b.s << " then " << s << " changed [" << describe(before)
                            << "] into [" << describe(fields()) << "]");
        // The letter in the other case still moves the value back.
        const char back[2] = {static_cast<char>(b.letter ^ 0x20), '\0'};
        ATF_REQUIRE(capture_stderr([&] { options_parse(back); }).empty());
        ATF_REQUIRE_MSG(changed(before, fields()).size() == 1,
                        b.s << " then " << s << back << ": " << describe(fields()));
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__narenas_bounds);
ATF_TEST_CASE_BODY(parse__narenas_bounds) {
    // 1 .. 4096 arenas: enough n gives one arena, enough N at most 4096.
    parse("64n");
    ATF_REQUIRE_EQ(g_options.narenas, 1);
    parse("64N");
    ATF_REQUIRE_MSG(g_options.narenas > 2048 && g_options.narenas <= 4096,
                    "64N: narenas " << g_options.narenas);
    for (const char *s : {"64n", "64N", "nnnnnnnnnnnnnnnnnnnnnnnn", "NNNNNNNNNNNNNNNNN"}) {
        const std::string err = parse(s);
        ATF_REQUIRE_MSG(g_options.narenas >= 1 && g_options.narenas <= 4096,
                        s << ": narenas " << g_options.narenas);
        // Whatever is written is whole warning lines, at most one per
        // character of the string.
        for (const std::string &l : lines_of(err))
            ATF_REQUIRE_MSG(l.compare(0, prefix().size(), prefix()) == 0,
                            s << ": unexpected output [" << printable(err) << "]");
        ATF_REQUIRE_MSG(lines_of(err).size() <= strlen(s) - strspn(s, "0123456789"),
                        s << ": " << lines_of(err).size() << " warnings");
    }
    // Back from one arena by doubling.
    parse("64nN");
    ATF_REQUIRE_EQ(g_options.narenas, 2);
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__repeat_past_bound_warns_once);
ATF_TEST_CASE_BODY(parse__repeat_past_bound_warns_once) {
    // "at most one warning per bad character": a count repeats the letter,
    // but the string holds the letter once, so it warns once at most.
    struct {
        const char *s;
        const char *field;
        long long value;
        bool at_max;
        char letter;
    } cases[] = {
        {"20K", "lg_chunk", 30, true, 'K'},
        {"64k", "lg_chunk", kLgChunkMin, false, 'k'},
        {"999999F", "lg_dirty_ratio", -10, true, 'F'},
        {"64h", "tcache_shift", -7, false, 'h'},
    };
    for (const auto &c : cases) {
        const std::string err = parse(c.s);
        ATF_REQUIRE_MSG(field(c.field) == c.value,
                        c.s << ": " << c.field << " = " << field(c.field));
        require_bound_warning(err, c.at_max, c.letter, c.s);
    }
    // Likewise an unknown character with a count.
    const std::string err = parse("3y");
    ATF_REQUIRE_MSG(err == unsupported('y') + "\n", "3y: [" << printable(err) << "]");
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__separate_letters_past_bound_warn_each);
ATF_TEST_CASE_BODY(parse__separate_letters_past_bound_warn_each) {
    // Twelve K letters from 21: nine move the value, three warn.
    const std::string err = parse("KKKKKKKKKKKK");
    ATF_REQUIRE_EQ(g_options.lg_chunk, 30);
    const std::vector<std::string> lines = lines_of(err);
    ATF_REQUIRE_MSG(lines.size() == 3, "[" << printable(err) << "]");
    for (const std::string &l : lines)
        require_bound_warning(l + "\n", true, 'K', "KKKKKKKKKKKK");
}

// --- Unknown characters -------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(parse__unknown_characters);
ATF_TEST_CASE_BODY(parse__unknown_characters) {
    const Fields d = default_fields();
    // (',' separates items: a string of commas is empty items, no warning.)
    ATF_REQUIRE(parse(",").empty() && parse(",,,").empty());
    ATF_REQUIRE(changed(d, fields()).empty());
    for (char c : std::string("yYbBiIlLoOrRtTwW?;:.-+=/ _~!@#$%^&*()[]{}'\"\\|<>")) {
        const std::string s(1, c);
        const std::string err = parse(s);
        ATF_REQUIRE_MSG(err == unsupported(c) + "\n",
                        "'" << printable(s) << "': [" << printable(err) << "]");
        ATF_REQUIRE_MSG(changed(d, fields()).empty(), "'" << printable(s) << "' changed "
                                                          << describe(fields()));
    }
    // Bytes outside ASCII and control characters: one line each, the byte
    // shown as \xNN (arenalloc(3)), so no raw control byte reaches the
    // terminal and a '\n' byte cannot split the line.
    for (int b : {0x80, 0xff, 0xc3, 0x01, 0x09, 0x1b, 0x7f, 0x0a, 0x0d}) {
        const std::string s(1, static_cast<char>(b));
        const std::string err = parse(s);
        char lower[8], upper[8];
        snprintf(lower, sizeof(lower), "\\x%02x", b);
        snprintf(upper, sizeof(upper), "\\x%02X", b);
        const std::string head = prefix() + "Unsupported character in malloc options: '";
        ATF_REQUIRE_MSG(err == head + lower + "'\n" || err == head + upper + "'\n",
                        "byte " << b << ": [" << printable(err) << "]");
        ATF_REQUIRE_MSG(changed(d, fields()).empty(), "byte " << b);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__unknown_among_known);
ATF_TEST_CASE_BODY(parse__unknown_among_known) {
    // Each bad character warns once and the rest still applies (',' is
    // the item separator).
    const std::string err = parse("J?K;y,Z");
    ATF_REQUIRE_EQ(g_options.junk, true);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 22);
    ATF_REQUIRE_EQ(g_options.zero, true);
    ATF_REQUIRE_MSG(err == unsupported('?') + "\n" + unsupported(';') + "\n" + unsupported('y') +
                               "\n",
                    "[" << printable(err) << "]");
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__A_makes_warnings_fatal);
ATF_TEST_CASE_BODY(parse__A_makes_warnings_fatal) {
    // A earlier in the string: the warning aborts, after being written.
    ChildResult r = run_child([] {
        options_reset();
        options_parse("Ay");
    });
    ATF_REQUIRE_MSG(aborted(r), "Ay: status " << r.status << ", stderr [" << r.err << "]");
    ATF_REQUIRE_MSG(r.err == unsupported('y') + "\n", "Ay: [" << printable(r.err) << "]");

    // A bound warning is fatal too.
    r = run_child([] {
        options_reset();
        options_parse("A10K");
    });
    ATF_REQUIRE_MSG(aborted(r), "A10K: status " << r.status);
    require_bound_warning(r.err, true, 'K', "A10K");

    // A from an earlier string (source) still counts.
    r = run_child([] {
        options_reset();
        options_parse("A");
        options_parse("y");
    });
    ATF_REQUIRE_MSG(aborted(r), "A, y: status " << r.status);

    // A after the bad character, or turned off again: a warning only.
    for (const char *s : {"yA", "Aay", "y"}) {
        r = run_child([s] {
            options_reset();
            options_parse(s);
        });
        ATF_REQUIRE_MSG(exited_ok(r), s << ": status " << r.status << ", stderr [" << r.err
                                        << "]");
        ATF_REQUIRE_MSG(r.err == unsupported('y') + "\n", s << ": [" << printable(r.err) << "]");
    }
}

// --- Empty and long strings --------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(parse__empty_string);
ATF_TEST_CASE_BODY(parse__empty_string) {
    const Fields d = default_fields();
    ATF_REQUIRE(parse("").empty());
    ATF_REQUIRE(changed(d, fields()).empty());
    // An empty string after others changes nothing either.
    ATF_REQUIRE(parse("J").empty());
    ATF_REQUIRE(capture_stderr([] { options_parse(""); }).empty());
    ATF_REQUIRE_EQ(g_options.junk, true);
}

ATF_TEST_CASE_WITHOUT_HEAD(parse__long_strings);
ATF_TEST_CASE_BODY(parse__long_strings) {
    const size_t n = 100000;
    // 100,000 letters that cancel out.
    std::string s;
    for (size_t i = 0; i < n / 2; i++)
        s += "Jj";
    ATF_REQUIRE(parse(s).empty());
    ATF_REQUIRE_EQ(g_options.junk, false);

    // 100,000 letters of every kind that stay within bounds in total.
    s.clear();
    const char *unit = "ADMFGHJKNPUVXZCQEadmfghjknpuvxzcqe";  // net effect: none
    while (s.size() < n)
        s += unit;
    std::string err = parse(s);
    ATF_REQUIRE_MSG(err.empty(), "[" << printable(err.substr(0, 200)) << "]");
    ATF_REQUIRE_MSG(changed(default_fields(), (parse(s), fields())).empty(),
                    describe(fields()));

    // 100,000 digits and a letter: one capped count.
    s = std::string(n, '9') + "k";
    err = parse(s);
    ATF_REQUIRE_EQ(g_options.lg_chunk, kLgChunkMin);
    for (const std::string &l : lines_of(err))
        require_bound_warning(l + "\n", false, 'k', "100,000 digits and k");

    // 100,000 unknown characters: exactly one warning line each.
    s = std::string(n, '?');
    err = parse(s);
    const std::vector<std::string> lines = lines_of(err);
    ATF_REQUIRE_EQ(lines.size(), n);
    for (const std::string &l : lines)
        ATF_REQUIRE(l == unsupported('?'));
    ATF_REQUIRE_MSG(changed(default_fields(), (parse(""), fields())).empty(), "");
}

// --- Parsing never allocates ----------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(parse__never_allocates);
ATF_TEST_CASE_BODY(parse__never_allocates) {
    // The wrappers above count: check that they do.
    g_counting = true;
    void *p = malloc(16);
    g_counting = false;
    free(p);
    ATF_REQUIRE_EQ(g_allocs.load(), 1);
    g_allocs = 0;

    const std::string link = make_link("malloc.conf", "JK?");
    options_set_conf_path(link.c_str());
    ATF_REQUIRE(setenv("MALLOC_OPTIONS", "9999F;y64K\x80,narenas=3,junk,lg_chunk:x", 1) == 0);
    ATF_REQUIRE(setenv("MALLOC_CONF", "narenas:3,nope:1,J,stats_print_opts:Jm", 1) == 0);
    malloc_conf = "percpu_arena:percpu,dirty_decay_ms:-1";
    _malloc_options = "Zk#";
    std::string long_string(100000, 'y');
    long_string += "ADMFGHJKNPUVXZCQEadmfghjknpuvxzcqe7F6K";
    char buf[64];
    const std::string err = capture_stderr([&] {
        g_counting = true;
        options_reset();
        options_parse(long_string.c_str());
        options_parse("");
        options_init();
        options_in_force(buf, sizeof(buf));
        g_counting = false;
    });
    ATF_REQUIRE_MSG(g_allocs.load() == 0, g_allocs.load() << " allocations while parsing");
    ATF_REQUIRE(!err.empty());
    ATF_REQUIRE_EQ(g_options.junk, true);
    ATF_REQUIRE_EQ(g_options.zero, true);
}

// --- The three sources -------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(init__no_sources_gives_defaults);
ATF_TEST_CASE_BODY(init__no_sources_gives_defaults) {
    const Fields d = default_fields();
    parse("JZ4K");  // init starts from the defaults
    const std::string err = init_with(nullptr, nullptr, nullptr);
    ATF_REQUIRE_MSG(err.empty(), printable(err));
    ATF_REQUIRE_MSG(changed(d, fields()).empty(), describe(fields()));
    ATF_REQUIRE(init_with(nullptr, "", "").empty());
    ATF_REQUIRE_MSG(changed(d, fields()).empty(), describe(fields()));
    ATF_REQUIRE(init_with("0", "", "").empty());
    ATF_REQUIRE_MSG(changed(d, fields()).empty(), describe(fields()));
}

ATF_TEST_CASE_WITHOUT_HEAD(init__link_name);
ATF_TEST_CASE_BODY(init__link_name) {
    // The name the link points to is the option string; nothing is opened
    // (the link dangles).
    ATF_REQUIRE(init_with("Jk", nullptr, nullptr).empty());
    ATF_REQUIRE_EQ(g_options.junk, true);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 20);
    ATF_REQUIRE_EQ(changed(default_fields(), (init_with("Jk", nullptr, nullptr), fields())).size(),
                   2u);
    // A link whose name is a path to an existing file is still just a name
    // (each '/' and '.' an unknown character).
    const std::string err = init_with("/.", nullptr, nullptr);
    ATF_REQUIRE_MSG(err == unsupported('/') + "\n" + unsupported('.') + "\n", printable(err));
}

ATF_TEST_CASE_WITHOUT_HEAD(init__regular_file_is_not_read);
ATF_TEST_CASE_BODY(init__regular_file_is_not_read) {
    // /etc/malloc.conf as a plain file holding options: not a link, so
    // ignored (the options are a link's name, never a file's contents).
    {
        std::ofstream f("malloc.conf.file");
        f << "J";
    }
    char cwd[4096];
    ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != nullptr);
    const std::string path = std::string(cwd) + "/malloc.conf.file";
    options_set_conf_path(path.c_str());
    ATF_REQUIRE(unsetenv("MALLOC_OPTIONS") == 0);
    _malloc_options = nullptr;
    const std::string err = capture_stderr([] { options_init(); });
    ATF_REQUIRE_MSG(err.empty(), printable(err));
    ATF_REQUIRE_EQ(g_options.junk, false);
}

ATF_TEST_CASE_WITHOUT_HEAD(init__environment_after_link);
ATF_TEST_CASE_BODY(init__environment_after_link) {
    ATF_REQUIRE(init_with("Jk", "j2K", nullptr).empty());
    ATF_REQUIRE_EQ(g_options.junk, false);        // j overrides the link's J
    ATF_REQUIRE_EQ(g_options.lg_chunk, 21 - 1 + 2);  // counts accumulate
    ATF_REQUIRE(init_with(nullptr, "Z", nullptr).empty());
    ATF_REQUIRE_EQ(g_options.zero, true);
    // Counts do not run on from one source into the next.
    ATF_REQUIRE(init_with("3", "K", nullptr).empty());
    ATF_REQUIRE_EQ(g_options.lg_chunk, 22);
}

ATF_TEST_CASE_WITHOUT_HEAD(init__global_after_environment);
ATF_TEST_CASE_BODY(init__global_after_environment) {
    ATF_REQUIRE(init_with("Jk", "jU", "J2K").empty());
    ATF_REQUIRE_EQ(g_options.junk, true);             // the global's J is last
    ATF_REQUIRE_EQ(g_options.lg_chunk, 21 - 1 + 2);   // all three sources
    ATF_REQUIRE_EQ(g_options.trace, true);            // the environment's U
    ATF_REQUIRE(init_with(nullptr, "Z", "z").empty());
    ATF_REQUIRE_EQ(g_options.zero, false);
    ATF_REQUIRE(init_with("V", nullptr, "X").empty());
    ATF_REQUIRE_EQ(g_options.malloc0_null, true);
    ATF_REQUIRE_EQ(g_options.xmalloc, true);
}

ATF_TEST_CASE_WITHOUT_HEAD(init__warnings_name_each_source);
ATF_TEST_CASE_BODY(init__warnings_name_each_source) {
    const std::string err = init_with("y", "?", ";");
    ATF_REQUIRE_MSG(err == unsupported('y') + "\n" + unsupported('?') + "\n" + unsupported(';') +
                               "\n",
                    "[" << printable(err) << "]");
}

ATF_TEST_CASE_WITHOUT_HEAD(init__A_in_link_makes_later_warnings_fatal);
ATF_TEST_CASE_BODY(init__A_in_link_makes_later_warnings_fatal) {
    // Create the link in the parent: the child only parses.
    const std::string link = make_link("malloc.conf.A", "A");
    ChildResult r = run_child([&] {
        options_set_conf_path(link.c_str());
        setenv("MALLOC_OPTIONS", "J", 1);
        _malloc_options = "y";
        options_init();
    });
    ATF_REQUIRE_MSG(aborted(r), "status " << r.status << ", stderr [" << r.err << "]");
    ATF_REQUIRE_MSG(r.err == unsupported('y') + "\n", "[" << printable(r.err) << "]");
    // The environment's a turns it off again.
    r = run_child([&] {
        options_set_conf_path(link.c_str());
        setenv("MALLOC_OPTIONS", "a", 1);
        _malloc_options = "y";
        options_init();
    });
    ATF_REQUIRE_MSG(exited_ok(r), "status " << r.status << ", stderr [" << r.err << "]");
}

ATF_TEST_CASE_WITHOUT_HEAD(init__long_link_name);
ATF_TEST_CASE_BODY(init__long_link_name) {
    // A name longer than any buffer the parser might use: no crash, and no
    // warning for a name of valid letters.
    std::string name;
    for (int i = 0; i < 1000; i++)
        name += "Jj";
    const std::string err = init_with(name.c_str(), nullptr, nullptr);
    ATF_REQUIRE_MSG(err.empty(), printable(err.substr(0, 200)));
    ATF_REQUIRE_EQ(g_options.lg_chunk, 21);
}

ATF_TEST_CASE_WITHOUT_HEAD(init__five_sources_in_order);
ATF_TEST_CASE_BODY(init__five_sources_in_order) {
    // Each source is read (a field of its own) and overrides the ones
    // before it (lg_chunk): malloc_conf, the link, MALLOC_CONF,
    // MALLOC_OPTIONS, _malloc_options.  Every value is in K's bounds for
    // every page size (lg_chunk 20 is the smallest at 64 KiB pages).
    const std::string err =
        init_with("lg_chunk:20,X", "lg_chunk:23,U", "lg_chunk:24,V", "lg_chunk:22,zero:true",
                  "lg_chunk:26,junk:true");
    ATF_REQUIRE_MSG(err.empty(), printable(err));
    ATF_REQUIRE(g_options.junk && g_options.xmalloc && g_options.zero && g_options.trace &&
                g_options.malloc0_null);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 24);
    ATF_REQUIRE(init_with("lg_chunk:20", "lg_chunk:23", nullptr, "lg_chunk:22", "lg_chunk:26")
                    .empty());
    ATF_REQUIRE_EQ(g_options.lg_chunk, 23);
    ATF_REQUIRE(init_with("lg_chunk:20", nullptr, nullptr, "lg_chunk:22", "lg_chunk:26").empty());
    ATF_REQUIRE_EQ(g_options.lg_chunk, 22);
    ATF_REQUIRE(init_with("lg_chunk:20", nullptr, nullptr, nullptr, "lg_chunk:26").empty());
    ATF_REQUIRE_EQ(g_options.lg_chunk, 20);
    ATF_REQUIRE(init_with(nullptr, nullptr, nullptr, nullptr, "lg_chunk:26").empty());
    ATF_REQUIRE_EQ(g_options.lg_chunk, 26);
    // Letters and items of different sources meet as one string would:
    // 2K (23), then lg_chunk:25, then k.
    ATF_REQUIRE(init_with("2K", "k", nullptr, "lg_chunk:25").empty());
    ATF_REQUIRE_EQ(g_options.lg_chunk, 24);
}

ATF_TEST_CASE_WITHOUT_HEAD(init__jemalloc_sources_take_items_only);
ATF_TEST_CASE_BODY(init__jemalloc_sources_take_items_only) {
    const std::string err = init_with(nullptr, nullptr, nullptr, "J,zero:true", "K,xmalloc:true");
    ATF_REQUIRE_MSG(err == prefix() + "Missing value in malloc_conf: 'K'\n" + prefix() +
                               "Missing value in MALLOC_CONF: 'J'\n",
                    printable(err));
    ATF_REQUIRE(!g_options.junk && g_options.zero && g_options.xmalloc);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 21);
}

ATF_TEST_CASE_WITHOUT_HEAD(init__item_warnings_name_their_source);
ATF_TEST_CASE_BODY(init__item_warnings_name_their_source) {
    const std::string link = set_sources("a1:1", "a3:1", "a4:1", "a2:1", "a0:1");
    const std::string err = capture_stderr([] { options_init(); });
    const std::string u = prefix() + "Unsupported option in ";
    ATF_REQUIRE_MSG(err == u + "malloc_conf: 'a0'\n" + u + link + ": 'a1'\n" + u +
                               "MALLOC_CONF: 'a2'\n" + u + "MALLOC_OPTIONS: 'a3'\n" + u +
                               "_malloc_options: 'a4'\n",
                    printable(err));
    ATF_REQUIRE_EQ(options_warning_count(), 5u);
}

ATF_TEST_CASE_WITHOUT_HEAD(init__abort_conf);
ATF_TEST_CASE_BODY(init__abort_conf) {
    // A bad item anywhere aborts once every source is read, whichever
    // source set abort_conf (the first case: a later one than the bad
    // item's), letters included; without a warning, or with abort_conf
    // turned off again, nothing aborts.  {MALLOC_CONF, malloc_conf,
    // _malloc_options, MALLOC_OPTIONS}, then the warning expected first.
    const std::string abort_line = prefix() + "bad options and abort_conf:true, aborting\n";
    struct Case {
        const char *conf_env, *conf_global, *global, *env;
        std::string first_warning;  // empty: no abort
    } cases[] = {
        {"nope:1", nullptr, "abort_conf:true,J", nullptr,
         prefix() + "Unsupported option in MALLOC_CONF: 'nope'\n"},
        {nullptr, "abort_conf:true", nullptr, "y", unsupported('y') + "\n"},
        {"abort_conf:true,narenas:2", nullptr, nullptr, nullptr, ""},
        {"abort_conf:true,nope:1,abort_conf:false", nullptr, nullptr, nullptr, ""},
    };
    for (const Case &c : cases) {
        const ChildResult r = run_child([&c] {
            set_sources(nullptr, c.env, c.global, c.conf_env, c.conf_global);
            options_init();
        });
        const char *what = c.conf_env != nullptr ? c.conf_env : c.conf_global;
        if (c.first_warning.empty()) {
            ATF_REQUIRE_MSG(exited_ok(r), what << ": status " << r.status << ", stderr ["
                                               << r.err << "]");
            continue;
        }
        ATF_REQUIRE_MSG(aborted(r), what << ": status " << r.status << ", stderr [" << r.err
                                         << "]");
        ATF_REQUIRE_MSG(r.err == c.first_warning + abort_line, printable(r.err));
    }
}

// --- Options in force ----------------------------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(in_force__boolean_letters);
ATF_TEST_CASE_BODY(in_force__boolean_letters) {
    std::string bools;
    for (unsigned i = 0; i < kOptionTableSize; i++)
        if (kOptionTable[i].kind == OptionKind::kBool)
            bools += kOptionTable[i].letter;
    ATF_REQUIRE_EQ(bools.size(), 10u);  // A D J M P S U V X Z
    for (const char *s : {"", "AJZ", "DmPSUVX", "ADJMPSUVXZ", "adjmpsuvxz"}) {
        parse(s);
        char buf[64];
        memset(buf, 0x7e, sizeof(buf));
        const size_t n = options_in_force(buf, sizeof(buf));
        ATF_REQUIRE_EQ(n, strlen(buf));
        const std::string got(buf);
        ATF_REQUIRE_MSG(got.size() == bools.size(), s << ": [" << got << "]");
        for (char l : bools) {
            const char lower = static_cast<char>(l - 'A' + 'a');
            bool on = false;
            if (l == 'A') on = g_options.abort_on_warning;
            if (l == 'D') on = g_options.use_sbrk;
            if (l == 'J') on = g_options.junk;
            if (l == 'M') on = g_options.use_mmap;
            if (l == 'P') on = g_options.print_summary;
            if (l == 'U') on = g_options.trace;
            if (l == 'V') on = g_options.malloc0_null;
            if (l == 'X') on = g_options.xmalloc;
            if (l == 'Z') on = g_options.zero;
            if (l == 'S') on = g_options.hardened;
            const char want = on ? l : lower;
            const char other = on ? lower : l;
            ATF_REQUIRE_MSG(got.find(want) != std::string::npos &&
                                got.find(other) == std::string::npos,
                            s << ": [" << got << "] for " << l);
        }
    }
    parse("AJZ");
    char buf[64];
    options_in_force(buf, sizeof(buf));
    ATF_REQUIRE_MSG(std::string(buf).find('A') != std::string::npos &&
                        std::string(buf).find('J') != std::string::npos &&
                        std::string(buf).find('Z') != std::string::npos &&
                        std::string(buf).find('M') != std::string::npos,
                    buf);
}

ATF_TEST_CASE_WITHOUT_HEAD(in_force__small_buffer);
ATF_TEST_CASE_BODY(in_force__small_buffer) {
    options_reset();
    char full[64];
    const size_t len = options_in_force(full, sizeof(full));
    for (size_t cap = 0; cap <= len + 1; cap++) {
        char buf[80];
        memset(buf, 0x7e, sizeof(buf));
        const size_t n = options_in_force(buf + 8, cap);
        for (size_t i = 0; i < 8; i++)
            ATF_REQUIRE_MSG(buf[i] == 0x7e, "cap " << cap << ": wrote before the buffer");
        for (size_t i = 8 + cap; i < sizeof(buf); i++)
            ATF_REQUIRE_MSG(buf[i] == 0x7e, "cap " << cap << ": wrote past the buffer");
        if (cap == 0)
            continue;
        ATF_REQUIRE_MSG(n < cap && buf[8 + n] == '\0', "cap " << cap << ": n " << n);
        ATF_REQUIRE_MSG(std::string(buf + 8) == std::string(full).substr(0, n),
                        "cap " << cap << ": [" << buf + 8 << "]");
    }
}

// --- The manual documents every letter --------------------------------------------

ATF_TEST_CASE_WITHOUT_HEAD(manual__documents_every_letter);
ATF_TEST_CASE_BODY(manual__documents_every_letter) {
    const std::string path =
        get_config_var("top_srcdir", ARENALLOC_TOP_SRCDIR) + std::string("/man/arenalloc.3");
    std::ifstream f(path.c_str());
    ATF_REQUIRE_MSG(f.good(), "cannot read " << path);
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(f, line))
        lines.push_back(line);
    ATF_REQUIRE(lines.size() > 100);
    for (unsigned i = 0; i < kOptionTableSize; i++) {
        const std::string entry = std::string(".It Cm ") + kOptionTable[i].letter;
        int found = 0;
        for (const std::string &l : lines)
            if (l.compare(0, entry.size(), entry) == 0 &&
                (l.size() == entry.size() || l[entry.size()] == ' '))
                found++;
        ATF_REQUIRE_MSG(found >= 1, path << ": no '" << entry << "' entry");
    }
    // And the manual lists no flag that the table lacks.
    for (const std::string &l : lines) {
        const std::string head = ".It Cm ";
        if (l.compare(0, head.size(), head) != 0 || l.size() < head.size() + 1)
            continue;
        const char c = l[head.size()];
        if (!(c >= 'A' && c <= 'Z') || (l.size() > head.size() + 1 && l[head.size() + 1] != ' '))
            continue;
        bool in_table = false;
        for (unsigned i = 0; i < kOptionTableSize; i++)
            in_table = in_table || kOptionTable[i].letter == c;
        ATF_REQUIRE_MSG(in_table, path << " documents '" << c << "', which the table lacks");
    }
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, reset__defaults);
    ATF_ADD_TEST_CASE(tcs, parse__each_letter_changes_its_field);
    ATF_ADD_TEST_CASE(tcs, parse__ignored_letters_are_silent);
    ATF_ADD_TEST_CASE(tcs, parse__last_letter_wins);
    ATF_ADD_TEST_CASE(tcs, parse__sbrk_or_mmap_never_both_off);
    ATF_ADD_TEST_CASE(tcs, parse__repetition_counts);
    ATF_ADD_TEST_CASE(tcs, parse__bounds_reached_silently);
    ATF_ADD_TEST_CASE(tcs, parse__past_bound_warns_and_keeps_value);
    ATF_ADD_TEST_CASE(tcs, parse__narenas_bounds);
    ATF_ADD_TEST_CASE(tcs, parse__repeat_past_bound_warns_once);
    ATF_ADD_TEST_CASE(tcs, parse__separate_letters_past_bound_warn_each);
    ATF_ADD_TEST_CASE(tcs, parse__unknown_characters);
    ATF_ADD_TEST_CASE(tcs, parse__unknown_among_known);
    ATF_ADD_TEST_CASE(tcs, parse__A_makes_warnings_fatal);
    ATF_ADD_TEST_CASE(tcs, parse__empty_string);
    ATF_ADD_TEST_CASE(tcs, parse__long_strings);
    ATF_ADD_TEST_CASE(tcs, parse__never_allocates);
    ATF_ADD_TEST_CASE(tcs, init__no_sources_gives_defaults);
    ATF_ADD_TEST_CASE(tcs, init__link_name);
    ATF_ADD_TEST_CASE(tcs, init__regular_file_is_not_read);
    ATF_ADD_TEST_CASE(tcs, init__environment_after_link);
    ATF_ADD_TEST_CASE(tcs, init__global_after_environment);
    ATF_ADD_TEST_CASE(tcs, init__warnings_name_each_source);
    ATF_ADD_TEST_CASE(tcs, init__A_in_link_makes_later_warnings_fatal);
    ATF_ADD_TEST_CASE(tcs, init__long_link_name);
    ATF_ADD_TEST_CASE(tcs, init__five_sources_in_order);
    ATF_ADD_TEST_CASE(tcs, init__jemalloc_sources_take_items_only);
    ATF_ADD_TEST_CASE(tcs, init__item_warnings_name_their_source);
    ATF_ADD_TEST_CASE(tcs, init__abort_conf);
    ATF_ADD_TEST_CASE(tcs, in_force__boolean_letters);
    ATF_ADD_TEST_CASE(tcs, in_force__small_buffer);
    ATF_ADD_TEST_CASE(tcs, manual__documents_every_letter);
}
