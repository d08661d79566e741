// arena.cc — an arena: its creation, free() of its blocks, the counts thread
// caches hand over, and the fork hooks.  The rest of the arena layer is in
// arena_*.cc (arena_internal.h says which file holds what).
#include "arena.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "arena_internal.h"
#include "base.h"
#include "debug_assert.h"
#include "decay.h"
#include "options.h"
#include "platform.h"
#include "report.h"
#include "tcache.h"

namespace arenalloc {

std::atomic<int32_t> g_arena_decay_ms_default{kDecayMsOption};

Arena *arena_create(unsigned index) {
    void *mem = base_alloc(sizeof(Arena));
    if (mem == nullptr)
        return nullptr;
    // base memory is zeroed, which is a valid empty arena except for the
    // mutex, which is initialized explicitly.
    Arena *a = static_cast<Arena *>(mem);
    a->mutex.init();
    a->index = index;
    a->decay_ms = g_arena_decay_ms_default.load(std::memory_order_relaxed);
    a->created_ms = platform_now_ms();
    return a;
}

void fill_new_block(void *p, size_t usize, bool zero, bool known_zero) {
    if (zero || g_options.zero) {
        if (!known_zero)
            memset(p, 0, usize);
    } else if (g_options.junk) {
        memset(p, kJunkOnAlloc, usize);
    }
}

void arena_merge_counts(Arena *a, const CountDelta *counts, unsigned nclasses) {
    MutexGuard guard(a->mutex);
    for (unsigned cls = 0; cls < nclasses; cls++) {
        if (cls < kNumBins)
            merge_bin_counts_locked(a, cls, counts[cls]);
        else
            merge_large_counts_locked(a, counts[cls]);
    }
}

size_t arena_free(Chunk *c, void *p, const char *fn) {
    AA_ASSERT(chunk_owns(c, p));
    Arena *a = c->arena;
    // Arena 0 takes every thread's large frees (shared_large), held only
    // briefly each time: waiting a moment for it costs less than sleeping.
    if (a->index == 0 && g_options.shared_large)
        a->mutex.lock_spinning(kSharedLargeSpins);
    else
        a->mutex.lock();
    arena_drain_remote_locked(a);
    Run *r = nullptr;
    uint32_t reg = 0;
    const char *finding = validate_locked(c, p, &r, &reg);
    if (AA_UNLIKELY(finding != nullptr)) {
        a->mutex.unlock();
        report_invalid_pointer(fn, p, finding);
        return 0;
    }
    size_t usize = r->state == kPageSmall ? r->region_size
                                           : static_cast<size_t>(r->npages) << kLgPage;
    if (AA_UNLIKELY(g_options.junk))
        memset(p, kJunkOnFree, usize);
    if (r->state == kPageSmall) {
        // A region freed here rather than through a thread cache (realloc
        // moved it, or the thread has no cache) carries the free mark too:
        // a second free() of it on the cache's path then finds it free in
        // the bitmap and reports it, where it would have cached a free
        // region and handed it out twice.  (J and S promise free regions
        // all junk; their frees take the locked path, which checks.)
        if (kFreeChecks && !g_options.junk && !g_options.hardened)
            *static_cast<uintptr_t *>(p) = kFreeMark;
        a->stats.ndalloc_small++;
        region_release_locked(a, r, reg);
        a->mutex.unlock();
        return usize;
    }
    a->stats.ndalloc_large++;
    large_release_locked(a, r);
    a->mutex.unlock();
    decay_tick();
    return usize;
}

void arena_prefork(Arena *a) { a->mutex.lock(); }
void arena_postfork_parent(Arena *a) { a->mutex.unlock(); }
void arena_postfork_child(Arena *a) { a->mutex.reinit_in_child(); }

}  // namespace arenalloc
