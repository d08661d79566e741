// background.cc — the purging thread.
#include "background.h"

#include <atomic>

#include "decay.h"
#include "init.h"
#include "platform.h"

namespace arenalloc {

namespace {

std::atomic<bool> g_wanted{false};   // the thread should run
std::atomic<bool> g_running{false};  // a thread is running (or starting)
// Sweeps made, and the milliseconds between the first and the last.
std::atomic<uint64_t> g_num_runs{0};
std::atomic<uint64_t> g_first_run_ms{0};
std::atomic<uint64_t> g_last_run_ms{0};

void note_run() {
    uint64_t now = platform_now_ms();
    if (g_num_runs.load(std::memory_order_relaxed) == 0)
        g_first_run_ms.store(now, std::memory_order_relaxed);
    g_last_run_ms.store(now, std::memory_order_relaxed);
    g_num_runs.fetch_add(1, std::memory_order_release);
}

void *background_main(void *) {
    while (g_wanted.load(std::memory_order_acquire)) {
        platform_sleep_ms(kBackgroundIntervalMs);
        decay_sweep();
        note_run();
    }
    g_running.store(false, std::memory_order_release);
    return nullptr;
}

}  // namespace

bool background_thread_set(bool on) {
    if (!ensure_initialized())
        return false;
    g_wanted.store(on, std::memory_order_release);
    if (!on)
        return true;  // the thread sees it within one interval and ends
    bool expected = false;
    if (!g_running.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
        return true;  // already running
    if (!platform_thread_start(background_main, nullptr)) {
        g_running.store(false, std::memory_order_release);
        g_wanted.store(false, std::memory_order_release);
        return false;
    }
    return true;
}

bool background_thread_enabled() { return g_wanted.load(std::memory_order_acquire); }

size_t background_num_threads() { return g_running.load(std::memory_order_acquire) ? 1 : 0; }

uint64_t background_num_runs() { return g_num_runs.load(std::memory_order_acquire); }

uint64_t background_run_interval_ns() {
    uint64_t runs = g_num_runs.load(std::memory_order_acquire);
    if (runs < 2)
        return 0;
    uint64_t span = g_last_run_ms.load(std::memory_order_relaxed) -
                    g_first_run_ms.load(std::memory_order_relaxed);
    return span * 1000000 / (runs - 1);
}

void background_postfork_child() {
    g_wanted.store(false, std::memory_order_relaxed);
    g_running.store(false, std::memory_order_relaxed);
}

}  // namespace arenalloc
