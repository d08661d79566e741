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

void *background_main(void *) {
    while (g_wanted.load(std::memory_order_acquire)) {
        platform_sleep_ms(kBackgroundIntervalMs);
        decay_sweep();
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

void background_postfork_child() {
    g_wanted.store(false, std::memory_order_relaxed);
    g_running.store(false, std::memory_order_relaxed);
}

}  // namespace arenalloc
