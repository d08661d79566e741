// init.cc — bootstrap and fork handling.
#include "init.h"

#include "arena.h"
#include "background.h"
#include "base.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "ctl.h"
#include "huge.h"
#include "mutex.h"
#include "options.h"
#include "platform.h"
#include "stats.h"
#include "summary.h"
#include "tcache.h"
#include "thread_state.h"
#include "trace.h"
#include "report.h"

namespace arenalloc {

std::atomic<bool> g_initialized{false};
unsigned g_narenas = 0;
size_t g_fast_limit = 0;

namespace {

Mutex g_init_mutex;     // serializes initialization
// The thread in init_slow() while it installs the hooks (its
// tls_thread_state's address, unique per thread), or nullptr.
std::atomic<const void *> g_init_owner{nullptr};
Mutex g_arenas_mutex;   // serializes arena creation
std::atomic<Arena *> *g_arenas = nullptr;

// The P report: the summary lines, then the full statistics.
void print_at_exit() {
    summary_print();
    stats_print(nullptr, nullptr, "");
}

void install_hooks() {
    platform_atfork(malloc_prefork, malloc_postfork_parent, malloc_postfork_child);
    if (g_options.print_summary) {
        platform_keep_stderr();
        platform_at_exit(print_at_exit);
    }
}

}  // namespace

bool init_slow() {
    // The hooks may allocate: the thread installing them is served (its
    // data structures are ready) while every other thread waits.
    if (g_init_owner.load(std::memory_order_relaxed) == &tls_thread_state)
        return true;
    g_init_mutex.lock();
    if (g_initialized.load(std::memory_order_acquire)) {
        g_init_mutex.unlock();
        return true;
    }
    // A library built for one page size must not run with another: its
    // chunk and run arithmetic would be wrong everywhere.
    if (platform_page_size() != kPage) {
        report_fatal("the system page size differs from the one arenalloc was built for");
        g_init_mutex.unlock();
        return false;
    }
    options_init();
    chunk_configure(static_cast<unsigned>(g_options.lg_chunk));
    tcache_configure();
    unsigned n = static_cast<unsigned>(g_options.narenas);
    void *table = base_alloc(n * sizeof(std::atomic<Arena *>));
    Arena *first = table != nullptr ? arena_create(0) : nullptr;
    if (first == nullptr) {
        g_init_mutex.unlock();
        return false;
    }
    // The exit hook exists before any thread can be given an arena, so
    // every thread's cache is returned when it exits (it does not allocate).
    thread_state_hook_init();
    g_arenas = static_cast<std::atomic<Arena *> *>(table);
    g_arenas[0].store(first, std::memory_order_release);
    g_narenas = n;
    trace_init();
    // The fork handlers are in place before any other thread can take an
    // allocator lock: a fork in between would leave the child waiting
    // forever on a lock held by a thread it does not have.  (Found by
    // tools/check-sanitized: the slower instrumented build widened the
    // window enough for prefixed_test's fork_while_busy to hang.)
    g_init_owner.store(&tls_thread_state, std::memory_order_relaxed);
    install_hooks();
    g_init_owner.store(nullptr, std::memory_order_relaxed);
    g_initialized.store(true, std::memory_order_release);
    // Options that need every call on the slow path keep the inline fast
    // paths shut; otherwise they open now.
    if (!options_need_slow_path())
        g_fast_limit = kLookupMax;
    g_init_mutex.unlock();
    return true;
}

Arena *arena_peek(unsigned index) {
    return g_arenas[index].load(std::memory_order_acquire);
}

Arena *arena_get(unsigned index) {
    Arena *a = arena_peek(index);
    if (AA_LIKELY(a != nullptr))
        return a;
    MutexGuard guard(g_arenas_mutex);
    a = g_arenas[index].load(std::memory_order_relaxed);
    if (a == nullptr) {
        a = arena_create(index);
        if (a != nullptr)
            g_arenas[index].store(a, std::memory_order_release);
    }
    return a;
}

// Lock order, everywhere: init, ctl, stats print, stats heap, tcache list,
// arena table, arenas by index, huge, registry, base.
void malloc_prefork() {
    // The forking thread's cache goes back first: the child starts with
    // its regions in the arenas, and flushing needs the arena locks.
    if (tls_thread_state.tcache != &g_tcache_none)
        tcache_flush_all(tls_thread_state.tcache);
    g_init_mutex.lock();
    if (!g_initialized.load(std::memory_order_acquire))
        return;
    ctl_prefork();
    stats_prefork();
    tcache_prefork();
    g_arenas_mutex.lock();
    for (unsigned i = 0; i < g_narenas; i++) {
        Arena *a = arena_peek(i);
        if (a != nullptr)
            arena_prefork(a);
    }
    huge_prefork();
    registry_prefork();
    base_prefork();
}

void malloc_postfork_parent() {
    if (g_initialized.load(std::memory_order_acquire)) {
        base_postfork_parent();
        registry_postfork_parent();
        huge_postfork_parent();
        for (unsigned i = g_narenas; i-- > 0;) {
            Arena *a = arena_peek(i);
            if (a != nullptr)
                arena_postfork_parent(a);
        }
        g_arenas_mutex.unlock();
        tcache_postfork_parent();
        stats_postfork_parent();
        ctl_postfork_parent();
    }
    g_init_mutex.unlock();
}

void malloc_postfork_child() {
    if (g_initialized.load(std::memory_order_acquire)) {
        base_postfork_child();
        registry_postfork_child();
        huge_postfork_child();
        for (unsigned i = 0; i < g_narenas; i++) {
            Arena *a = arena_peek(i);
            if (a != nullptr) {
                arena_postfork_child(a);
                // Only the forking thread survives in the child.
                a->nthreads.store(0, std::memory_order_relaxed);
            }
        }
        if (tls_thread_state.arena != nullptr)
            tls_thread_state.arena->nthreads.store(1, std::memory_order_relaxed);
        g_arenas_mutex.reinit_in_child();
        tcache_postfork_child();
        stats_postfork_child();
        ctl_postfork_child();
        background_postfork_child();
    }
    g_init_mutex.reinit_in_child();
}

}  // namespace arenalloc
