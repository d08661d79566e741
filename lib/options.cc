// options.cc — the MALLOC_OPTIONS parser.
#include "options.h"

#include "chunk.h"
#include "platform.h"
#include "report.h"

// A program may define this to choose options at link time.
extern "C" const char *_malloc_options __attribute__((weak));

namespace arenalloc {

Options g_options = {false, false, kLgChunkDefault, 0, kLgDirtyRatioDefault};

namespace {

constexpr unsigned kMaxRepeat = 64;  // a count beyond this cannot change anything

void apply_flag(char c) {
    switch (c) {
    case 'A':
        g_options.abort_on_warning = true;
        break;
    case 'a':
        g_options.abort_on_warning = false;
        break;
    case 'P':
        g_options.print_summary = true;
        break;
    case 'p':
        g_options.print_summary = false;
        break;
    case 'F':
        if (g_options.lg_dirty_ratio > kLgDirtyRatioMin)
            g_options.lg_dirty_ratio--;
        else
            report_options_warning("dirty page allowance at its maximum, ignoring", c);
        break;
    case 'f':
        if (g_options.lg_dirty_ratio < kLgDirtyRatioMax)
            g_options.lg_dirty_ratio++;
        else
            report_options_warning("dirty page allowance at its minimum, ignoring", c);
        break;
    case 'K':
        if (g_options.lg_chunk < kLgChunkMax)
            g_options.lg_chunk++;
        else
            report_options_warning("chunk size at its maximum (1 GiB), ignoring", c);
        break;
    case 'k':
        if (g_options.lg_chunk > kLgChunkMin)
            g_options.lg_chunk--;
        else
            report_options_warning("chunk size at its minimum (256 KiB), ignoring", c);
        break;
    case 'N':
        if (g_options.narenas_shift < 12)
            g_options.narenas_shift++;
        else
            report_options_warning("arena count at its maximum, ignoring", c);
        break;
    case 'n':
        if (g_options.narenas_shift > -12)
            g_options.narenas_shift--;
        break;
    default:
        report_options_warning("Unsupported character in malloc options", c);
        break;
    }
}

}  // namespace

void options_parse(const char *opts) {
    unsigned repeat = 0;
    bool counting = false;
    for (const char *s = opts; *s != '\0'; s++) {
        char c = *s;
        if (c >= '0' && c <= '9') {
            repeat = repeat * 10 + static_cast<unsigned>(c - '0');
            if (repeat > kMaxRepeat)
                repeat = kMaxRepeat;
            counting = true;
            continue;
        }
        unsigned n = counting ? repeat : 1;
        for (unsigned i = 0; i < n; i++)
            apply_flag(c);
        repeat = 0;
        counting = false;
    }
}

void options_init() {
    char link[256];
    if (platform_readlink("/etc/malloc.conf", link, sizeof(link)))
        options_parse(link);
    const char *env = platform_secure_getenv("MALLOC_OPTIONS");
    if (env != nullptr)
        options_parse(env);
    if (&_malloc_options != nullptr && _malloc_options != nullptr)
        options_parse(_malloc_options);
}

}  // namespace arenalloc
