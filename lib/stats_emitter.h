// stats_emitter.h — what the statistics reports write through: a line
// buffer handed to the caller's callback (or stderr) one piece at a time,
// and the test for one letter of malloc_stats_print's opts.  Nothing here
// allocates.
#ifndef ARENALLOC_STATS_EMITTER_H
#define ARENALLOC_STATS_EMITTER_H

#include <cstddef>

#include "platform.h"
#include "util.h"

namespace arenalloc {

// Collects output into lines and hands each to the callback, NUL-terminated.
class Emitter {
  public:
    Emitter(void (*cb)(void *, const char *), void *opaque)
        : cb_(cb), opaque_(opaque), line(buf_, sizeof(buf_) - 1) {}
    void flush() {
        if (line.size() == 0)
            return;
        buf_[line.size()] = '\0';
        if (cb_ != nullptr)
            cb_(opaque_, buf_);
        else
            platform_write_stderr(buf_, line.size());
        line.clear();
    }
    // Ends the current line and sends it.
    void end() {
        line.chr('\n');
        flush();
    }

  private:
    void (*cb_)(void *, const char *);
    void *opaque_;
    char buf_[256];

  public:
    LineBuffer line;
};

// Whether malloc_stats_print's opts holds the letter c.
inline bool opts_has(const char *opts, char c) {
    if (opts == nullptr)
        return false;
    for (const char *s = opts; *s != '\0'; s++)
        if (*s == c)
            return true;
    return false;
}

}  // namespace arenalloc

#endif
