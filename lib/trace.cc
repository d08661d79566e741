// trace.cc — writing trace records.
#include "trace.h"

#include <cstdint>

#include "options.h"
#include "platform.h"
#include "util.h"

namespace arenalloc {

namespace {

int g_trace_fd = 2;

}  // namespace

void trace_init() {
    if (!g_options.trace)
        return;
    const char *path = platform_secure_getenv("ARENALLOC_TRACE_FILE");
    if (path != nullptr && *path != '\0') {
        int fd = platform_open_append(path);
        if (fd >= 0)
            g_trace_fd = fd;
    }
}

void trace_call(const char *call, const void *arg, size_t size, const void *result) {
    if (!g_options.trace)
        return;
    if (platform_utrace(arg, size, result))
        return;
    char buf[160];
    LineBuffer line(buf, sizeof(buf));
    line.str("arenalloc-trace ").dec(platform_pid()).chr(' ').dec(platform_tid()).chr(' ')
        .str(call).chr(' ').hex(reinterpret_cast<uintptr_t>(arg)).chr(' ').dec(size).chr(' ')
        .hex(reinterpret_cast<uintptr_t>(result)).chr('\n');
    platform_write_fd(g_trace_fd, line.data(), line.size());
}

}  // namespace arenalloc
