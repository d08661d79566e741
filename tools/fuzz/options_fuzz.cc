// options_fuzz.cc — libFuzzer target for the MALLOC_OPTIONS parser
// (lib/options.cc).  Built and run by tools/fuzz/run.
//
// Each input is split at its first three NUL bytes into four strings, used
// as the MALLOC_OPTIONS environment variable, the _malloc_options global,
// one more string given straight to options_parse() and the MALLOC_CONF
// environment variable.  Checked for every input, beyond the memory errors
// AddressSanitizer catches:
//   - parsing never calls malloc (sanitizer allocation hooks count calls);
//   - every value stays within its documented bounds;
//   - chunks always have a source (D or M on);
//   - options_in_force() writes a NUL-terminated string within its buffer.
// 'A', and the keys abort and abort_conf, make warnings fatal (abort) by
// design, so the target maps 'A' to 'a' and "abort" to "abxrt": otherwise
// libFuzzer would report that documented abort as a crash.
// Warnings go to descriptor 2, which tools/fuzz/run silences with
// -close_fd_mask=2.
#include <sanitizer/allocator_interface.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "chunk.h"
#include "options.h"

// The link-time source; the library refers to it weakly.
extern "C" {
const char *_malloc_options = nullptr;
}

using namespace arenalloc;

namespace {

volatile bool g_watch = false;
volatile unsigned long g_allocs = 0;

void on_malloc(const volatile void *, size_t) {
    if (g_watch)
        g_allocs = g_allocs + 1;
}

void on_free(const volatile void *) {}

void check(bool ok) {
    if (!ok)
        __builtin_trap();
}

void check_bounds() {
    const Options &o = g_options;
    check(o.lg_dirty_ratio >= kLgDirtyRatioMin && o.lg_dirty_ratio <= kLgDirtyRatioMax);
    check(o.lg_tcache_gc >= 0 && o.lg_tcache_gc <= kLgTcacheGcMax);
    check(o.tcache_shift >= kTcacheShiftOff && o.tcache_shift <= kTcacheShiftMax);
    check(o.lg_chunk >= static_cast<int>(kLgChunkMin) && o.lg_chunk <= static_cast<int>(kLgChunkMax));
    check(o.narenas >= 1 && o.narenas <= static_cast<int>(kMaxArenas));
    check(o.decay_ms >= kDecayMsMin && o.decay_ms <= kDecayMsMax);
    check(o.use_mmap || o.use_sbrk);
    check(!o.abort_on_warning && !o.abort_conf);
    check(strlen(options_stats_print_opts()) <= 15);
}

bool same(const Options &a, const Options &b) {
    return a.abort_on_warning == b.abort_on_warning && a.use_sbrk == b.use_sbrk &&
           a.use_mmap == b.use_mmap && a.lg_dirty_ratio == b.lg_dirty_ratio &&
           a.lg_tcache_gc == b.lg_tcache_gc && a.tcache_shift == b.tcache_shift &&
           a.junk == b.junk && a.lg_chunk == b.lg_chunk && a.narenas == b.narenas &&
           a.print_summary == b.print_summary && a.trace == b.trace &&
           a.malloc0_null == b.malloc0_null && a.xmalloc == b.xmalloc && a.zero == b.zero &&
           a.decay_ms == b.decay_ms && a.lazy_purge == b.lazy_purge && a.thp == b.thp &&
           a.background_thread == b.background_thread;
}

// putenv, not setenv (glibc keeps every value setenv was given): the
// entry lives in a buffer of ours, updated in place.
void set_variable(std::vector<char> *entry, const char *name_eq, const char *value) {
    const size_t n = strlen(name_eq), len = strlen(value);
    if (entry->size() < n + len + 1)
        entry->resize(n + len + 1);
    memcpy(entry->data(), name_eq, n);
    memcpy(entry->data() + n, value, len + 1);
    putenv(entry->data());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
    options_set_conf_path("/nonexistent/arenalloc-fuzz/malloc.conf");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // The input, NUL-terminated, in a buffer that only ever grows (no
    // allocation per input: ASan's quarantine would fill with them).
    static std::vector<char> in;
    if (in.size() < size + 1)
        in.resize(size + 1);
    memcpy(in.data(), data, size);
    in[size] = '\0';
    for (size_t i = 0; i < size; i++) {
        if (in[i] == 'A')
            in[i] = 'a';
        if (i + 5 <= size && memcmp(&in[i], "abort", 5) == 0)
            in[i + 2] = 'x';
    }
    // Up to four NUL-separated strings; missing ones are empty.
    const char *parts[4] = {"", "", "", ""};
    size_t start = 0;
    for (int i = 0; i < 4 && start <= size; i++) {
        parts[i] = &in[start];
        start += strlen(parts[i]) + 1;
    }
    static std::vector<char> options_entry, conf_entry;
    set_variable(&options_entry, "MALLOC_OPTIONS=", parts[0]);
    set_variable(&conf_entry, "MALLOC_CONF=", parts[3]);
    _malloc_options = parts[1];
    char buf[48];
    memset(buf, 0x7e, sizeof(buf));

    g_allocs = 0;
    g_watch = true;
    options_init();                // defaults, then the environment and the global
    options_parse(parts[2]);
    size_t n = options_in_force(buf, 32);
    g_watch = false;

    check(g_allocs == 0);
    check_bounds();
    check(n < 32 && buf[n] == '\0' && strlen(buf) == n);
    for (size_t i = 32; i < sizeof(buf); i++)
        check(buf[i] == 0x7e);

    // The same strings parsed again give the same options.
    Options first = g_options;
    options_init();
    options_parse(parts[2]);
    check(same(first, g_options));
    _malloc_options = nullptr;
    return 0;
}
