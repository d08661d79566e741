// key:value items ("narenas:12,decay_ms:5000"): every name, bounds and
// clamping, bad input warned about and ignored, BSD letter strings (no
// ':') keeping their meaning, items mixed with letter runs, the key=value
// and bare-key mistakes, the key:value-only syntax of MALLOC_CONF, and
// jemalloc 5.3's keys.
#include <atf-c++.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "chunk.h"
#include "options.h"
#include "platform.h"
#include "require_msg.h"

using namespace arenalloc;

namespace {

// Parses s after a reset and returns what went to stderr.
std::string parse(const char *s, const char *source = "malloc options",
                  OptionSyntax syntax = OptionSyntax::kMixed) {
    options_reset();
    char path[] = "/tmp/arenalloc-opt-XXXXXX";
    int fd = mkstemp(path);
    ATF_REQUIRE(fd >= 0);
    int saved = dup(2);
    dup2(fd, 2);
    options_parse(s, source, syntax);
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

// The whole warning line for text: "<prog>: (malloc) <text>\n".
std::string line(const std::string &text) {
    return std::string(platform_progname()) + ": (malloc) " + text + "\n";
}

// Every field of the table equal.
bool same_options(const Options &a, const Options &b) {
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) \
    if (a.field != b.field)                                                         \
        return false;
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) \
    if (a.field != b.field)                                                          \
        return false;
#define AA_LETTER_ONLY(letter, kind, type, field, dflt, min, max, text) \
    if (a.field != b.field)                                             \
        return false;
#include "option_list.h"
    return a.continue_on_bad_pointer == b.continue_on_bad_pointer;
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
    ATF_REQUIRE_EQ(err, line("Value out of bounds in malloc options: 'narenas:100000' (clamped)") +
                            line("Value out of bounds in malloc options: 'decay_ms:1' (clamped)"));
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

ATF_TEST_CASE_WITHOUT_HEAD(items__letters_and_items_mixed);
ATF_TEST_CASE_BODY(items__letters_and_items_mixed) {
    // The manual's example: a letter run, an item, a letter run.
    ATF_REQUIRE_EQ(parse("7F,narenas:12,J"), "");
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, kLgDirtyRatioDefault - 7);
    ATF_REQUIRE_EQ(g_options.narenas, 12);
    ATF_REQUIRE(g_options.junk);
    // Items first, then letters (once "Missing value").
    ATF_REQUIRE_EQ(parse("narenas:12,J,2K"), "");
    ATF_REQUIRE_EQ(g_options.narenas, 12);
    ATF_REQUIRE(g_options.junk);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 23);
    // Letter runs split by commas, empty items, later items override.
    ATF_REQUIRE_EQ(parse(",J,,2K,,zero:true,Z,z,"), "");
    ATF_REQUIRE(g_options.junk && !g_options.zero);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 23);
    ATF_REQUIRE_EQ(parse("junk:true,j"), "");
    ATF_REQUIRE(!g_options.junk);
    // A count does not run on past a comma.
    ATF_REQUIRE_EQ(parse("3,K"), "");
    ATF_REQUIRE_EQ(g_options.lg_chunk, 22);
    // A key of upper-case letters is still a key (and not an option).
    ATF_REQUIRE_EQ(parse("Junk:true"), line("Unsupported option in malloc options: 'Junk'"));
    ATF_REQUIRE(!g_options.junk && !g_options.trace);
}

ATF_TEST_CASE_WITHOUT_HEAD(items__equals_sign_warned_not_letters);
ATF_TEST_CASE_BODY(items__equals_sign_warned_not_letters) {
    const int narenas = (options_reset(), g_options.narenas);
    // The case: narenas=12 used to halve the arenas twice.
    ATF_REQUIRE_EQ(parse("narenas=12"),
                   line("'=' instead of ':' in malloc options: 'narenas=12' "
                        "(ignored; write narenas:12)"));
    ATF_REQUIRE_EQ(g_options.narenas, narenas);
    ATF_REQUIRE(!g_options.hardened && !g_options.continue_on_bad_pointer);
    ATF_REQUIRE_EQ(parse("J,junk=true,K", "MALLOC_OPTIONS"),
                   line("'=' instead of ':' in MALLOC_OPTIONS: 'junk=true' "
                        "(ignored; write junk:true)"));
    ATF_REQUIRE(g_options.junk);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 22);
    ATF_REQUIRE_EQ(parse("nope=1"),
                   line("'=' instead of ':' in malloc options: 'nope=1' (ignored; write nope:1)"));
    // One letter before '=' is a letter run, as before: J, then '='.
    ATF_REQUIRE_EQ(parse("J="), line("Unsupported character in malloc options: '='"));
    ATF_REQUIRE(g_options.junk);
    // jemalloc's syntax warns the same way.
    ATF_REQUIRE_EQ(parse("narenas=3", "MALLOC_CONF", OptionSyntax::kKeyValue),
                   line("'=' instead of ':' in MALLOC_CONF: 'narenas=3' "
                        "(ignored; write narenas:3)"));
    ATF_REQUIRE_EQ(g_options.narenas, narenas);
}

ATF_TEST_CASE_WITHOUT_HEAD(items__bare_key_warned_not_letters);
ATF_TEST_CASE_BODY(items__bare_key_warned_not_letters) {
    const int narenas = (options_reset(), g_options.narenas);
    // "junk" and "mmap" are valid letters too, but a key is what was meant.
    for (const char *key : {"junk", "mmap", "narenas", "dirty_decay_ms", "background_thread"}) {
        ATF_REQUIRE_EQ(parse(key), line(std::string("Missing value in malloc options: '") + key +
                                        "'"));
        ATF_REQUIRE_EQ(g_options.narenas, narenas);
        ATF_REQUIRE(!g_options.junk && g_options.use_mmap && !g_options.trace);
        ATF_REQUIRE_EQ(g_options.lg_chunk, static_cast<int>(kLgChunkDefault));
    }
    // Lower-case letters that are no key stay letters.
    ATF_REQUIRE_EQ(parse("jk"), "");
    ATF_REQUIRE_EQ(g_options.lg_chunk, static_cast<int>(kLgChunkDefault) - 1);
    ATF_REQUIRE_EQ(parse("ajpuvxzk"), "");
    ATF_REQUIRE(g_options.continue_on_bad_pointer);
}

ATF_TEST_CASE_WITHOUT_HEAD(items__key_value_only_syntax);
ATF_TEST_CASE_BODY(items__key_value_only_syntax) {
    const OptionSyntax kv = OptionSyntax::kKeyValue;
    ATF_REQUIRE_EQ(parse("narenas:3,junk:true,lg_chunk:20", "MALLOC_CONF", kv), "");
    ATF_REQUIRE_EQ(g_options.narenas, 3);
    ATF_REQUIRE(g_options.junk);
    ATF_REQUIRE_EQ(g_options.lg_chunk, 20);
    // Letters are not read: each item that is not key:value is warned.
    ATF_REQUIRE_EQ(parse("J,7F,:3,narenas:3", "MALLOC_CONF", kv),
                   line("Missing value in MALLOC_CONF: 'J'") +
                       line("Malformed item in MALLOC_CONF: '7F'") +
                       line("Malformed item in MALLOC_CONF: ':3'"));
    ATF_REQUIRE(!g_options.junk);
    ATF_REQUIRE_EQ(g_options.lg_dirty_ratio, kLgDirtyRatioDefault);
    ATF_REQUIRE_EQ(g_options.narenas, 3);
    // A one-character key is a key here.
    ATF_REQUIRE_EQ(parse("J:1", "malloc_conf", kv),
                   line("Unsupported option in malloc_conf: 'J'"));
    ATF_REQUIRE_EQ(parse("", "MALLOC_CONF", kv), "");
    ATF_REQUIRE_EQ(parse(",,", "MALLOC_CONF", kv), "");
}

ATF_TEST_CASE_WITHOUT_HEAD(items__jemalloc_words);
ATF_TEST_CASE_BODY(items__jemalloc_words) {
    for (const char *on : {"junk:true", "junk:alloc", "junk:free", "junk:yes"}) {
        ATF_REQUIRE_EQ(parse(on), "");
        ATF_REQUIRE_MSG(g_options.junk, on);
    }
    ATF_REQUIRE_EQ(parse("J,junk:false"), "");
    ATF_REQUIRE(!g_options.junk);
    ATF_REQUIRE_EQ(parse("junk:never"), line("Bad value in malloc options: 'junk:never'"));
    ATF_REQUIRE_EQ(parse("junk:"), line("Bad value in malloc options: 'junk:'"));
    ATF_REQUIRE_EQ(parse("thp:always"), "");
    ATF_REQUIRE(g_options.thp);
    for (const char *off : {"thp:default", "thp:never", "thp:false"}) {
        ATF_REQUIRE_EQ(parse((std::string("thp:true,") + off).c_str()), "");
        ATF_REQUIRE_MSG(!g_options.thp, off);
    }
    ATF_REQUIRE_EQ(parse("thp:alloc"), line("Bad value in malloc options: 'thp:alloc'"));
}

ATF_TEST_CASE_WITHOUT_HEAD(items__jemalloc_keys);
ATF_TEST_CASE_BODY(items__jemalloc_keys) {
    // dirty_decay_ms: decay_ms, with -1 the longest and 0 the shortest.
    ATF_REQUIRE_EQ(parse("dirty_decay_ms:5000"), "");
    ATF_REQUIRE_EQ(g_options.decay_ms, 5000);
    ATF_REQUIRE_EQ(parse("dirty_decay_ms:-1"), "");
    ATF_REQUIRE_EQ(g_options.decay_ms, kDecayMsMax);
    for (const char *fast : {"dirty_decay_ms:0", "dirty_decay_ms:99"}) {
        ATF_REQUIRE_EQ(parse(fast), "");
        ATF_REQUIRE_EQ(g_options.decay_ms, kDecayMsMin);
    }
    ATF_REQUIRE_EQ(parse("dirty_decay_ms:99999999"),
                   line("Value out of bounds in malloc options: 'dirty_decay_ms:99999999' "
                        "(clamped)"));
    ATF_REQUIRE_EQ(g_options.decay_ms, kDecayMsMax);
    for (const char *bad : {"dirty_decay_ms:-2", "dirty_decay_ms:1s"}) {
        ATF_REQUIRE_EQ(parse(bad), line(std::string("Bad value in malloc options: '") + bad + "'"));
        ATF_REQUIRE_EQ(g_options.decay_ms, kDecayMsDefault);
    }
    // muzzy_decay_ms: 0 purges with MADV_DONTNEED, anything else MADV_FREE.
    for (const char *lazy : {"muzzy_decay_ms:-1", "muzzy_decay_ms:10000", "muzzy_decay_ms:1"}) {
        ATF_REQUIRE_EQ(parse(lazy), "");
        ATF_REQUIRE_MSG(g_options.lazy_purge, lazy);
    }
    ATF_REQUIRE_EQ(parse("lazy_purge:true,muzzy_decay_ms:0"), "");
    ATF_REQUIRE(!g_options.lazy_purge);
    ATF_REQUIRE_EQ(parse("muzzy_decay_ms:-3"), line("Bad value in malloc options: 'muzzy_decay_ms:-3'"));
    ATF_REQUIRE(!g_options.lazy_purge);
    // tcache: false is 7h; true undoes only that.
    ATF_REQUIRE_EQ(parse("tcache:false"), "");
    ATF_REQUIRE_EQ(g_options.tcache_shift, kTcacheShiftOff);
    ATF_REQUIRE_EQ(parse("tcache:false,tcache:true"), "");
    ATF_REQUIRE_EQ(g_options.tcache_shift, 0);
    ATF_REQUIRE_EQ(parse("2H,tcache:true"), "");
    ATF_REQUIRE_EQ(g_options.tcache_shift, 2);
    ATF_REQUIRE_EQ(parse("tcache:off"), line("Bad value in malloc options: 'tcache:off'"));
    ATF_REQUIRE_EQ(g_options.tcache_shift, 0);
    // Fields of their own.
    ATF_REQUIRE_EQ(parse("abort_conf:true,background_thread:true"), "");
    ATF_REQUIRE(g_options.abort_conf && g_options.background_thread);
    ATF_REQUIRE(!(options_reset(), g_options.abort_conf || g_options.background_thread));
    // stats_print_opts: letters, kept.
    ATF_REQUIRE_EQ(parse("stats_print_opts:Jgm"), "");
    ATF_REQUIRE_EQ(std::string(options_stats_print_opts()), "Jgm");
    ATF_REQUIRE_EQ(parse("stats_print_opts:Jgm,stats_print_opts:"), "");
    ATF_REQUIRE_EQ(std::string(options_stats_print_opts()), "");
    for (const char *bad : {"stats_print_opts:J1", "stats_print_opts:abcdefghijklmnop"}) {
        ATF_REQUIRE_EQ(parse(bad), line(std::string("Bad value in malloc options: '") + bad + "'"));
        ATF_REQUIRE_EQ(std::string(options_stats_print_opts()), "");
    }
    ATF_REQUIRE_EQ((parse("stats_print_opts:J"), options_reset(), std::string(options_stats_print_opts())), "");
    // percpu_arena: only "disabled".
    ATF_REQUIRE_EQ(parse("percpu_arena:disabled"), "");
    ATF_REQUIRE_EQ(parse("percpu_arena:percpu", "MALLOC_CONF", OptionSyntax::kKeyValue),
                   line("Unsupported value in MALLOC_CONF: 'percpu_arena:percpu' "
                        "(threads take arenas round-robin)"));
    ATF_REQUIRE_EQ(parse("percpu_arena:x"), line("Bad value in malloc options: 'percpu_arena:x'"));
}

ATF_TEST_CASE_WITHOUT_HEAD(items__jemalloc_keys_checked_only);
ATF_TEST_CASE_BODY(items__jemalloc_keys_checked_only) {
    // Accepted with no effect: nothing changes, no warning.
    for (const char *s : {"retain:true", "retain:false", "tcache_max:0", "tcache_max:1048576",
                          "lg_tcache_max:15", "metadata_thp:disabled", "metadata_thp:auto",
                          "metadata_thp:always"}) {
        options_reset();
        Options before = g_options;
        ATF_REQUIRE_EQ(parse(s), "");
        ATF_REQUIRE_MSG(same_options(before, g_options), s);
    }
    // But checked.
    for (const char *s : {"retain:2", "tcache_max:-1", "tcache_max:big", "lg_tcache_max:64",
                          "metadata_thp:on"})
        ATF_REQUIRE_EQ(parse(s), line(std::string("Bad value in malloc options: '") + s + "'"));
    // jemalloc keys arenalloc has nothing for are unknown keys.
    ATF_REQUIRE_EQ(parse("dss:primary,prof:true", "MALLOC_CONF", OptionSyntax::kKeyValue),
                   line("Unsupported option in MALLOC_CONF: 'dss'") +
                       line("Unsupported option in MALLOC_CONF: 'prof'"));
}

ATF_TEST_CASE_WITHOUT_HEAD(items__warnings_count);
ATF_TEST_CASE_BODY(items__warnings_count) {
    parse("narenas:3,J");
    ATF_REQUIRE_EQ(options_warning_count(), 0u);
    parse("nope:1,narenas=3,y,junk");
    ATF_REQUIRE_EQ(options_warning_count(), 4u);
    options_reset();
    ATF_REQUIRE_EQ(options_warning_count(), 0u);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, long__numbers);
    ATF_ADD_TEST_CASE(tcs, long__booleans);
    ATF_ADD_TEST_CASE(tcs, long__bounds_clamped_with_a_warning);
    ATF_ADD_TEST_CASE(tcs, long__bad_input_warned_and_ignored);
    ATF_ADD_TEST_CASE(tcs, long__bsd_letters_unchanged);
    ATF_ADD_TEST_CASE(tcs, items__letters_and_items_mixed);
    ATF_ADD_TEST_CASE(tcs, items__equals_sign_warned_not_letters);
    ATF_ADD_TEST_CASE(tcs, items__bare_key_warned_not_letters);
    ATF_ADD_TEST_CASE(tcs, items__key_value_only_syntax);
    ATF_ADD_TEST_CASE(tcs, items__jemalloc_words);
    ATF_ADD_TEST_CASE(tcs, items__jemalloc_keys);
    ATF_ADD_TEST_CASE(tcs, items__jemalloc_keys_checked_only);
    ATF_ADD_TEST_CASE(tcs, items__warnings_count);
}
