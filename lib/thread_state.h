// thread_state.h — what the allocator keeps per thread: the arena the
// thread was given round-robin on its first allocation.  It lives in
// initial-exec TLS (no allocation, no lazy TLS call on the fast path) and is
// let go by a thread-specific-data destructor when the thread exits.
#ifndef ARENALLOC_THREAD_STATE_H
#define ARENALLOC_THREAD_STATE_H

#include <atomic>
#include <cstdint>

#include "config.h"
#include "util.h"

#if defined(HAVE_TLS_MODEL_INITIAL_EXEC)
#define AA_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define AA_TLS_MODEL
#endif

namespace arenalloc {

struct Arena;
struct TCache;

enum ThreadPhase : uint8_t {
    kThreadNew = 0,   // no arena yet
    kThreadActive,    // has an arena (and its exit hook, where one exists)
    kThreadExited,    // the exit hook ran; the arena stays usable
};

// One per thread, in initial-exec TLS.  Only its own thread reads or
// writes it (no lock), except arena->nthreads, which counts the threads
// assigned to an arena.  tcache is never nullptr: &g_tcache_none stands
// for "no cache", so the inline paths need no null test.  arena is
// nullptr only in phase kThreadNew.
struct ThreadState {
    TCache *tcache;  // &g_tcache_none until the first small request, while
                     //   tcache_off, and after exit
    Arena *arena;
    uint8_t phase;
    bool tcache_off;  // thread.tcache.enabled was set to false: no cache is made
    // Bytes this thread allocated and freed outside its cache (large and
    // huge blocks, small ones when it has no cache); the cache counts the
    // rest.  For thread.allocated / thread.deallocated.
    uint64_t allocated_uncached;
    uint64_t deallocated_uncached;
    // The registry's answer (an arena chunk) for the granule this thread
    // last freed a block into, that granule's number, and the registry's
    // stamp when it was read (0: no memo); aa_free.
    uintptr_t free_memo_owner;
    uintptr_t free_memo_key;
    uint64_t free_memo_stamp;
};

extern AA_HIDDEN __thread ThreadState tls_thread_state AA_TLS_MODEL;

// Picks (and records) an arena for the calling thread; initializes the
// allocator on first use.  nullptr when initialization failed.
AA_NOINLINE Arena *thread_arena_slow();

AA_ALWAYS_INLINE Arena *thread_arena() {
    Arena *a = tls_thread_state.arena;
    if (AA_LIKELY(a != nullptr))
        return a;
    return thread_arena_slow();
}

// The calling thread's cache, created on first use; nullptr when there is
// none (initialization failed, no memory, or the thread is exiting).
AA_NOINLINE TCache *thread_tcache_slow();

// Turns the calling thread's cache off (everything it holds goes back to
// the arenas, and none is made until it is turned on again) or on; its
// byte counts are kept.  Whether it is on.
void thread_tcache_set_enabled(bool on);
bool thread_tcache_enabled();

// Moves the calling thread to arena index (used by tests); false if the
// index is out of range or the arena cannot be created.
bool thread_set_arena(unsigned index);

// Releases the calling thread's allocator state (returns its cache to the
// arenas); what a libc's thread exit, or the stand-alone library's
// thread-specific-data destructor, calls.
void thread_cleanup();

// Creates the thread-exit hook; called once after initialization.
void thread_state_hook_init();

// Bytes the calling thread has allocated / freed so far (a block resized in
// place by realloc counts as neither).
uint64_t thread_bytes_allocated();
uint64_t thread_bytes_deallocated();

// Number of threads ever assigned an arena (the counter is named for the
// debug descriptor).
extern AA_HIDDEN std::atomic<uint64_t> g_threads_seen;
uint64_t thread_state_nthreads_seen();

}  // namespace arenalloc

#endif
