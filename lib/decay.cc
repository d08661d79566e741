// decay.cc — see decay.h.
#include "decay.h"

#include <atomic>

#include "arena.h"
#include "huge.h"
#include "init.h"
#include "platform.h"

namespace arenalloc {

namespace {

// platform_now_ms() at or after which the next tick sweeps.  Loads and
// stores only: two threads may both sweep, which costs a few lock
// acquisitions and nothing else.
std::atomic<uint64_t> g_next_sweep{0};

}  // namespace

void decay_sweep() {
    for (unsigned i = 0; i < g_narenas; i++)
        if (Arena *a = arena_peek(i))
            arena_decay(a);
    huge_decay();
}

void decay_tick() {
    // A coarse clock read from the vDSO: a few nanoseconds.
    uint64_t now = platform_now_ms();
    if (AA_LIKELY(now < g_next_sweep.load(std::memory_order_relaxed)))
        return;
    g_next_sweep.store(now + decay_sweep_interval_ms(), std::memory_order_relaxed);
    decay_sweep();
}

void decay_tick_expire() { g_next_sweep.store(0, std::memory_order_relaxed); }

}  // namespace arenalloc
