// background.h — the optional purging thread.  Purging is otherwise lazy:
// an arena applies its decay rule when it is used, so a process that frees
// everything and then sits idle keeps its dirty pages.  With the thread on
// (off by default; mallctl "background_thread"), every idle arena's decay
// rule and the huge-mapping cache are checked once a second.
#ifndef ARENALLOC_BACKGROUND_H
#define ARENALLOC_BACKGROUND_H

#include <cstddef>
#include <cstdint>

namespace arenalloc {

constexpr unsigned kBackgroundIntervalMs = 1000;

// Starts or stops the thread; false when it cannot be started.
bool background_thread_set(bool on);

bool background_thread_enabled();

// At most one purging thread (mallctl max_background_threads).
constexpr size_t kMaxBackgroundThreads = 1;

// For stats.background_thread.*: threads running now (0 or 1), sweeps
// they made, and the mean time between two sweeps in nanoseconds (0
// before the second).
size_t background_num_threads();
uint64_t background_num_runs();
uint64_t background_run_interval_ns();

// The thread does not survive fork(); the child starts without it.
void background_postfork_child();

}  // namespace arenalloc

#endif
