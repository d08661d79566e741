// The long form of MALLOC_OPTIONS ("narenas:12,decay_ms:5000"): every name,
// bounds and clamping, bad input warned about and ignored, and BSD letter
// strings (no ':') keeping their meaning.
#include <atf-c++.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "options.h"
#include "require_msg.h"

using namespace arenalloc;

namespace {

// Parses s after a reset and returns what went to stderr.
std::string parse(const char *s) {
    options_reset();
    char path[] = "/tmp/arenalloc-opt-XXXXXX";
    int fd = mkstemp(path);
    ATF_REQUIRE(fd >= 0);
    int saved = dup(2);
    dup2(fd, 2);
    options_parse(s);
    dup2(saved, 2);
    close(saved);
    std::string out;
    char buf[4096];
    lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
        out.append(buf, static_cast<size_t>(n));
    close(fd);
    unlink(path);
    return out;
}

size_t lines(const std::string &s) {
    size_t n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(long__numbers);
ATF_TEST_CASE_BODY(long__numbers) {
    ATF_REQUIRE_EQ(parse("narenas:12,decay_ms:5000,lg_chunk:23"), "");
    ATF_REQUIRE_EQ(g_options.narenas, 12);
    ATF_REQUIRE_EQ(g_options.decay_ms, 5000);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 23);
    ATF_REQUIRE_EQ(parse("lg_dirty_ratio:-4,lg_tcache_gc:0,tcache_shift:-7"), "");
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, -4);
    ATF_REQUIRE_EQ(g_options.lg_tcache_gc, 0);
    ATF_REQUIRE_EQ(g_options.tcache_shift, kTcacheShiftOff);
}

ATF_TEST_CASE_WITHOUT_HEAD(long__booleans);
ATF_TEST_CASE_BODY(long__booleans) {
    ATF_REQUIRE_EQ(parse("junk:true,zero:1,xmalloc:yes,sysv:true,utrace:true,abort:false"), "");
    ATF_REQUIRE(g_options.junk && g_options.zero && g_options.xmalloc);
    ATF_REQUIRE(g_options.malloc0_null && g_options.trace && !g_options.abort_on_warning);
    ATF_REQUIRE_EQ(parse("stats_print:true,sbrk:true,mmap:false"), "");
    ATF_REQUIRE(g_options.print_summary && g_options.use_sbrk && !g_options.use_mmap);
    ATF_REQUIRE(!g_options.lazy_purge);
    ATF_REQUIRE_EQ(parse("lazy_purge:yes"), "");
    ATF_REQUIRE(g_options.lazy_purge);
    ATF_REQUIRE(!g_options.thp);
    ATF_REQUIRE_EQ(parse("thp:true"), "");
    ATF_REQUIRE(g_options.thp);
    ATF_REQUIRE(g_options.shared_large);  // on by default
    ATF_REQUIRE_EQ(parse("shared_large:false"), "");
    ATF_REQUIRE(!g_options.shared_large);
    // Chunks must come from somewhere: both sources off turns mmap back on.
    ATF_REQUIRE_EQ(parse("sbrk:false,mmap:false"), "");
    ATF_REQUIRE(g_options.use_mmap);
}

ATF_TEST_CASE_WITHOUT_HEAD(long__bounds_clamped_with_a_warning);
ATF_TEST_CASE_BODY(long__bounds_clamped_with_a_warning) {
    std::string err = parse("narenas:100000,decay_ms:1");
    ATF_REQUIRE_EQ(lines(err), 2u);
    ATF_REQUIRE(err.find("clamped") != std::string::npos);
    ATF_REQUIRE_EQ(g_options.narenas, static_cast<int>(kMaxArenas));
    ATF_REQUIRE_EQ(g_options.decay_ms, kDecayMsMin);
}

ATF_TEST_CASE_WITHOUT_HEAD(long__bad_input_warned_and_ignored);
ATF_TEST_CASE_BODY(long__bad_input_warned_and_ignored) {
    int defaults = (options_reset(), g_options.narenas);
    std::string err = parse("nope:3,narenas:x,junk:maybe,:,,narenas");
    ATF_REQUIRE_MSG(lines(err) == 5, err);
    ATF_REQUIRE(err.find("Unsupported option in malloc options: 'nope'") != std::string::npos);
    ATF_REQUIRE_EQ(g_options.narenas, defaults);
    ATF_REQUIRE(!g_options.junk);
    // Garbage never crashes and never writes more than one line per item.
    std::string junk = "narenas:" + std::string(5000, ':');
    err = parse(junk.c_str());
    ATF_REQUIRE(lines(err) <= 1);
    // A BSD string with a ':' in it is still BSD letters.
    err = parse("J:");
    ATF_REQUIRE(g_options.junk);
    ATF_REQUIRE(err.find("Unsupported character in malloc options: ':'") != std::string::npos);
}

ATF_TEST_CASE_WITHOUT_HEAD(long__bsd_letters_unchanged);
ATF_TEST_CASE_BODY(long__bsd_letters_unchanged) {
    ATF_REQUIRE_EQ(parse("7F6K"), "");
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, kLgDirtyRatioDefault - 7);
    ATF_REQUIRE_EQ(g_options.decay_ms, kDecayMsDefault);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, long__numbers);
    ATF_ADD_TEST_CASE(tcs, long__booleans);
    ATF_ADD_TEST_CASE(tcs, long__bounds_clamped_with_a_warning);
    ATF_ADD_TEST_CASE(tcs, long__bad_input_warned_and_ignored);
    ATF_ADD_TEST_CASE(tcs, long__bsd_letters_unchanged);
}
