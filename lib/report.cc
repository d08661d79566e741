// report.cc — message formatting.
#include "report.h"

#include <cstdint>

#include "options.h"
#include "platform.h"

namespace arenalloc {

void report_invalid_pointer(const char *fn, const void *ptr, const char *finding) {
    char buf[256];
    LineBuffer line(buf, sizeof(buf));
    line.str("arenalloc: ").str(fn).str("(): invalid pointer ")
        .hex(reinterpret_cast<uintptr_t>(ptr)).str(": ").str(finding).chr('\n');
    platform_write_stderr(line.data(), line.size());
    if (!g_options.continue_on_bad_pointer)
        platform_abort();
}

void report_page_too_large(size_t system_page, size_t built_page) {
    char buf[256];
    LineBuffer line(buf, sizeof(buf));
    line.str("arenalloc: the system's pages are ").dec(system_page)
        .str(" bytes, larger than the ").dec(built_page)
        .str(" bytes arenalloc was built for (configure --with-lg-page)\n");
    platform_write_stderr(line.data(), line.size());
    platform_abort();
}

void report_out_of_memory(const char *fn, size_t size) {
    char buf[256];
    LineBuffer line(buf, sizeof(buf));
    line.str("arenalloc: ").str(fn).str("(): out of memory (").dec(size).str(" bytes)\n");
    platform_write_stderr(line.data(), line.size());
    platform_abort();
}

void report_options_warning(const char *text, char c) {
    char buf[256];
    LineBuffer line(buf, sizeof(buf));
    line.str(platform_progname()).str(": (malloc) ").str(text);
    if (c != '\0') {
        // A control or non-ASCII byte is shown as \xNN: one line always.
        unsigned char u = static_cast<unsigned char>(c);
        line.str(": '");
        if (u < 0x20 || u >= 0x7f) {
            static const char digits[] = "0123456789abcdef";
            line.str("\\x").chr(digits[u >> 4]).chr(digits[u & 15]);
        } else {
            line.chr(c);
        }
        line.chr('\'');
    }
    line.chr('\n');
    platform_write_stderr(line.data(), line.size());
    if (g_options.abort_on_warning)
        platform_abort();
}

void report_write_after_free(const void *block, size_t offset, size_t region_size) {
    char buf[256];
    LineBuffer line(buf, sizeof(buf));
    uintptr_t at = reinterpret_cast<uintptr_t>(block);
    line.str("arenalloc: malloc(): write after free to ").hex(at + offset).str(" (block ")
        .hex(at).str(", size class ").dec(region_size).str(")\n");
    platform_write_stderr(line.data(), line.size());
    platform_abort();
}

void report_overflow(const char *fn, const void *ptr, size_t requested, bool size_known,
                     size_t region_size) {
    char buf[256];
    LineBuffer line(buf, sizeof(buf));
    line.str("arenalloc: ").str(fn).str("(): write past the end of block ")
        .hex(reinterpret_cast<uintptr_t>(ptr));
    if (size_known)
        line.str(" (requested ").dec(requested).str(" bytes, size class ");
    else
        line.str(" (size trailer overwritten, size class ");
    line.dec(region_size).str(")\n");
    platform_write_stderr(line.data(), line.size());
    platform_abort();
}

}  // namespace arenalloc
