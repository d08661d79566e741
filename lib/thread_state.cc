// thread_state.cc — round-robin arena assignment and thread exit.
#include "thread_state.h"


#include <atomic>

#include "arena.h"
#include "init.h"
#include "platform.h"
#include "tcache.h"

namespace arenalloc {

__thread ThreadState tls_thread_state AA_TLS_MODEL = {&g_tcache_none, nullptr, kThreadNew, false,
                                                       0, 0, 0, 0, 0};

std::atomic<uint64_t> g_threads_seen{0};

namespace {

std::atomic<unsigned> g_next_arena{0};
std::atomic<bool> g_exit_hook_ready{false};

}  // namespace

void thread_cleanup() {
    ThreadState *ts = &tls_thread_state;
    if (ts->phase == kThreadExited || ts->phase == kThreadNew)
        return;
    // Everything the thread cached goes back to the arenas now; later
    // requests from other destructors use the arena directly.
    TCache *tc = ts->tcache;
    ts->tcache = &g_tcache_none;
    if (tc != &g_tcache_none)
        tcache_destroy(tc);
    if (ts->arena != nullptr)
        ts->arena->nthreads.fetch_sub(1, std::memory_order_relaxed);
    // The arena pointer is kept: other destructors may still allocate.
    ts->phase = kThreadExited;
}

namespace {

void thread_exit_hook(void *) { thread_cleanup(); }

void assign(ThreadState *ts, Arena *a) {
    if (ts->arena != nullptr)
        ts->arena->nthreads.fetch_sub(1, std::memory_order_relaxed);
    a->nthreads.fetch_add(1, std::memory_order_relaxed);
    ts->arena = a;
}

}  // namespace

Arena *thread_arena_slow() {
    if (!ensure_initialized())
        return nullptr;
    ThreadState *ts = &tls_thread_state;
    if (ts->arena != nullptr)  // initialization itself may have assigned one
        return ts->arena;
    unsigned index = g_next_arena.fetch_add(1, std::memory_order_relaxed) % g_narenas_auto;
    Arena *a = arena_get(index);
    if (a == nullptr)
        a = arena_get(0);  // arena 0 always exists once initialized
    g_threads_seen.fetch_add(1, std::memory_order_relaxed);
    assign(ts, a);
    ts->phase = kThreadActive;
    if (g_exit_hook_ready.load(std::memory_order_acquire))
        platform_thread_exit_arm(ts);
    return a;
}

TCache *thread_tcache_slow() {
    Arena *a = thread_arena();
    ThreadState *ts = &tls_thread_state;
    if (a == nullptr || ts->phase == kThreadExited || ts->tcache_off)
        return nullptr;
    if (ts->tcache == &g_tcache_none) {
        TCache *tc = tcache_create(a);
        if (tc == nullptr)
            return nullptr;
        ts->tcache = tc;
    }
    return ts->tcache;
}

void thread_tcache_set_enabled(bool on) {
    ThreadState *ts = &tls_thread_state;
    ts->tcache_off = !on;
    if (on || ts->tcache == &g_tcache_none)
        return;
    // The cache's counts of this thread's bytes go with it: kept here.
    uint64_t allocated = thread_bytes_allocated();
    uint64_t deallocated = thread_bytes_deallocated();
    TCache *tc = ts->tcache;
    ts->tcache = &g_tcache_none;
    tcache_destroy(tc);
    ts->allocated_uncached = allocated;
    ts->deallocated_uncached = deallocated;
}

bool thread_tcache_enabled() {
    return !tls_thread_state.tcache_off && g_tcache_total_slots != 0;
}

bool thread_set_arena(unsigned index) {
    if (thread_arena() == nullptr || index >= __atomic_load_n(&g_narenas, __ATOMIC_ACQUIRE))
        return false;
    Arena *a = arena_get(index);
    if (a == nullptr)
        return false;
    assign(&tls_thread_state, a);
    if (tls_thread_state.tcache != &g_tcache_none)
        tls_thread_state.tcache->arena = a;
    return true;
}

void thread_state_hook_init() {
    if (platform_thread_exit_hook(thread_exit_hook))
        g_exit_hook_ready.store(true, std::memory_order_release);
}

namespace {

// Bytes of the blocks one of a cache's per-class counts counts.
uint64_t cached_bytes(uint64_t (*count)(const TCache *, unsigned)) {
    const TCache *tc = tls_thread_state.tcache;
    uint64_t n = 0;
    for (unsigned bin = 0; bin < kNumTcacheClasses; bin++)
        n += count(tc, bin) * class_to_size(bin);
    return n;
}

}  // namespace

uint64_t thread_bytes_allocated() {
    return tls_thread_state.allocated_uncached + cached_bytes(tcache_bin_nmalloc);
}

uint64_t thread_bytes_deallocated() {
    return tls_thread_state.deallocated_uncached + cached_bytes(tcache_bin_nfree);
}

uint64_t thread_state_nthreads_seen() {
    return g_threads_seen.load(std::memory_order_relaxed);
}

}  // namespace arenalloc
