// init.cc — bootstrap and fork handling.
#include "init.h"

#include "arena.h"
#include "background.h"
#include "base.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "ctl.h"
#include "hardened.h"
#include "hardened_inaccessible.h"
#include "huge.h"
#include "mutex.h"
#include "option_overrides.h"
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
unsigned g_narenas_auto = 0;
unsigned g_narenas = 0;
size_t g_fast_limit = 0;
std::atomic<Arena *> *g_arenas = nullptr;

namespace {

Mutex g_init_mutex;     // serializes initialization
// The thread inside init_slow() (its tls_thread_state's address, unique
// per thread), or nullptr; and whether the allocator can serve it yet.
// A hook it registers may allocate and so come back into init_slow().
std::atomic<const void *> g_init_owner{nullptr};
std::atomic<bool> g_init_owner_served{false};
// The fork handlers' registration, tried once before the mutex is first
// taken (see init_slow()).
// (pid << 2) | kForkHooksTrying while process pid is trying.
constexpr uint64_t kForkHooksUntried = 0, kForkHooksOk = 1, kForkHooksFailed = 2,
                   kForkHooksTrying = 3;
std::atomic<uint64_t> g_fork_hooks{kForkHooksUntried};
Mutex g_arenas_mutex;   // serializes arena creation

// The P report: the summary lines, then the full statistics.
void print_at_exit() {
    summary_print();
    stats_print(nullptr, nullptr, options_stats_print_opts());
}

bool install_fork_hooks() {
    return platform_atfork(malloc_prefork, malloc_postfork_parent, malloc_postfork_child);
}

void install_exit_hook() {
    if (g_options.print_summary) {
        platform_keep_stderr();
        platform_at_exit(print_at_exit);
    }
}

// Ends init_slow() (the mutex is held).
bool init_done(bool ok) {
    g_init_owner.store(nullptr, std::memory_order_relaxed);
    g_init_owner_served.store(false, std::memory_order_relaxed);
    if (ok)
        g_initialized.store(true, std::memory_order_release);
    g_init_mutex.unlock();
    return ok;
}

}  // namespace

// A fork by another thread while an allocator lock is held and no fork
// handler is registered would leave the child waiting forever on a lock
// held by a thread it does not have (prefixed_test's
// prefixed__fork_while_busy).  So the handlers are registered before the
// first lock is taken.  (Not under the mutex: the
// registration waits for a fork in progress, and that fork would copy the
// held mutex.)  Where registering allocates (not glibc), that allocation
// fails, nothing being ready, and the handlers are registered again once
// the allocator can serve it, still before any other thread can take an
// allocator lock.
// abort() rather than exit(): this runs inside the process's first
// allocation, perhaps in the C library's or the loader's start-up, where
// exit handlers and stdio (which allocate) cannot run; and rather than
// failing every allocation with ENOMEM, which a program would report as
// running out of memory, or retry.
void check_system_page(size_t system_page) {
    if (system_page > kPage)
        report_page_too_large(system_page, kPage);
}

bool init_slow() {
    if (g_init_owner.load(std::memory_order_relaxed) == &tls_thread_state)
        return g_init_owner_served.load(std::memory_order_relaxed);
    // One thread registers; the others wait for it before taking any lock.
    // A child forked meanwhile (the registration waits for the fork) finds
    // the attempt made by another process, and makes its own.
    const uint64_t trying = (platform_pid() << 2) | kForkHooksTrying;
    for (;;) {
        uint64_t state = g_fork_hooks.load(std::memory_order_acquire);
        if (state == kForkHooksOk || state == kForkHooksFailed)
            break;
        if (state == trying)
            continue;  // another thread of this process: a short wait
        if (!g_fork_hooks.compare_exchange_strong(state, trying, std::memory_order_acq_rel))
            continue;
        g_init_owner.store(&tls_thread_state, std::memory_order_relaxed);
        bool ok = install_fork_hooks();
        g_init_owner.store(nullptr, std::memory_order_relaxed);
        g_fork_hooks.store(ok ? kForkHooksOk : kForkHooksFailed, std::memory_order_release);
        break;
    }
    g_init_mutex.lock();
    if (g_initialized.load(std::memory_order_acquire)) {
        g_init_mutex.unlock();
        return true;
    }
    g_init_owner.store(&tls_thread_state, std::memory_order_relaxed);
    check_system_page(platform_page_size());
    options_init();
    option_overrides_apply();  // the program's own calls (mallopt) win
    chunk_configure(static_cast<unsigned>(g_options.lg_chunk));
    tcache_configure();
    hardened_configure();
    unsigned n = static_cast<unsigned>(g_options.narenas);
    static_assert(kMaxArenas <= kArenaTableSlots, "every automatic arena has a slot");
    void *table = base_alloc(kArenaTableSlots * sizeof(std::atomic<Arena *>));
    Arena *first = table != nullptr ? arena_create(0) : nullptr;
    if (first == nullptr)
        return init_done(false);
    // The exit hook exists before any thread can be given an arena, so
    // every thread's cache is returned when it exits (it does not allocate).
    thread_state_hook_init();
    g_arenas = static_cast<std::atomic<Arena *> *>(table);
    g_arenas[0].store(first, std::memory_order_release);
    g_narenas_auto = n;
    g_narenas = n;
    trace_init();
    // Hooks that may allocate: the allocator serves this thread now, and
    // the others once it is published.
    g_init_owner_served.store(true, std::memory_order_relaxed);
    if (g_fork_hooks.load(std::memory_order_relaxed) == kForkHooksFailed &&
        install_fork_hooks())
        g_fork_hooks.store(kForkHooksOk, std::memory_order_relaxed);
    install_exit_hook();
    // Options that need every call on the slow path keep the inline fast
    // paths shut; otherwise they open now.
    if (!options_need_slow_path())
        g_fast_limit = kLookupMax;
    init_done(true);
    // Started once the allocator serves every thread: creating a thread
    // allocates (and may take the C library's locks: arenalloc(3) says
    // when the option is unsafe).
    if (g_options.background_thread)
        background_thread_set(true);
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

Arena *arena_create_manual(unsigned *index) {
    MutexGuard guard(g_arenas_mutex);
    unsigned i = g_narenas;
    if (i >= kArenaIndexLimit)
        return nullptr;
    Arena *a = arena_create(i);
    if (a == nullptr)
        return nullptr;
    g_arenas[i].store(a, std::memory_order_release);
    __atomic_store_n(&g_narenas, i + 1, __ATOMIC_RELEASE);
    *index = i;
    return a;
}

namespace {

// Whether this fork's prepare handler took the locks (the process had more
// than one thread), for the handlers after the fork.  Written by the
// forking thread only: while it is set the init mutex is held, so no other
// fork is in between, and g_initialized cannot change (initialization
// holds that mutex) to say which locks were taken.
bool g_fork_took_locks = false;

}  // namespace

// Fork protocol (lib/README, "Fork").  With one thread in the process no
// lock is taken: no other thread can hold one, and a fork from a signal
// handler that interrupted this thread inside the allocator (POSIX lists
// fork as async-signal-safe) would wait forever for a lock its own thread
// holds.  Otherwise the C library's stream-list lock comes first, then
// ours, in the order: init, ctl, stats print, stats heap, tcache list,
// S's zero-size blocks and big-block quarantine (leaves: nothing
// else is locked while one of them is held), arena table, arenas
// by index, huge, registry, base (the order used everywhere).
void malloc_prefork() {
    if (platform_single_threaded())
        return;
    platform_stdio_list_lock();
    // The forking thread's cache goes back first: the child starts with
    // its regions in the arenas, and flushing needs the arena locks.
    if (tls_thread_state.tcache != &g_tcache_none)
        tcache_flush_all(tls_thread_state.tcache);
    g_init_mutex.lock();
    g_fork_took_locks = true;
    if (!g_initialized.load(std::memory_order_acquire))
        return;
    ctl_prefork();
    stats_prefork();
    tcache_prefork();
    zero_block_prefork();
    big_quarantine_prefork();
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
    if (!g_fork_took_locks)
        return;
    g_fork_took_locks = false;
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
        big_quarantine_postfork_parent();
        zero_block_postfork_parent();
        tcache_postfork_parent();
        stats_postfork_parent();
        ctl_postfork_parent();
    }
    g_init_mutex.unlock();
    platform_stdio_list_unlock();
}

// Every lock is re-created free, whether the prepare handler took it or,
// in a single-threaded process, the code a signal handler interrupted
// holds it (the child of such a fork may only call async-signal-safe
// functions, as with any C library's malloc: the heap is as the
// interrupted call left it).
void malloc_postfork_child() {
    // This handler ran, so it is registered in the child, whatever state
    // the registering thread had reached at the fork.
    g_fork_hooks.store(kForkHooksOk, std::memory_order_relaxed);
    if (g_fork_took_locks)
        platform_stdio_list_reset_in_child();
    g_fork_took_locks = false;
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
        big_quarantine_postfork_child();
        zero_block_postfork_child();
        tcache_postfork_child();
        stats_postfork_child();
        ctl_postfork_child();
        background_postfork_child();
    }
    g_init_mutex.reinit_in_child();
}

}  // namespace arenalloc
