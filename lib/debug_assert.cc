// debug_assert.cc — the failure path of AA_ASSERT (debug builds only).
#include "debug_assert.h"

#if ARENALLOC_DEBUG

#include "platform.h"

namespace arenalloc {

void debug_assert_failed(const char *file, int line, const char *cond) {
    // __FILE__ is the path the compiler was given; its last component
    // names the file within lib/.
    const char *name = file;
    for (const char *s = file; *s != '\0'; s++)
        if (*s == '/')
            name = s + 1;
    char buf[512];
    LineBuffer msg(buf, sizeof(buf));
    msg.str("arenalloc: internal check failed: ").str(name).chr(':')
        .dec(static_cast<uint64_t>(line)).str(": ").str(cond).chr('\n');
    platform_write_stderr(msg.data(), msg.size());
    platform_abort();
}

}  // namespace arenalloc

#endif
