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
    platform_abort();
}

void report_options_warning(const char *text, char c) {
    char buf[256];
    LineBuffer line(buf, sizeof(buf));
    line.str(platform_progname()).str(": (malloc) ").str(text);
    if (c != '\0')
        line.str(": '").chr(c).chr('\'');
    line.chr('\n');
    platform_write_stderr(line.data(), line.size());
    if (g_options.abort_on_warning)
        platform_abort();
}

}  // namespace arenalloc
