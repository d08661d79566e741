// arena_purge.cc — when an arena gives dirty pages back: the ratio rule
// and its guard against thrashing, decay, the empty runs bins keep, and
// explicit purges.
#include <stdint.h>

#include "arena_internal.h"
#include "debug_assert.h"
#include "decay.h"
#include "options.h"
#include "platform.h"

namespace arenalloc {

namespace {

// Gives the pages of free run r back to the kernel (one madvise for the
// whole run: its clean pages are already purged or never touched).  Lazy
// purging (MADV_FREE) only when asked for: its pages stay counted in the
// process's resident size until the kernel runs short, which is the figure
// users and their monitoring read.
void purge_run(Arena *a, Run *r, bool now) {
    dirty_list_remove(a, r);
    uint32_t first = run_first_page(r);
    bool zeroed = pages_purge(reinterpret_cast<void *>(r->base),
                              static_cast<size_t>(r->npages) << kLgPage,
                              now || !g_options.lazy_purge);
    page_map_clear_dirty(r->chunk->map + first, r->npages);
    a->stats.npurged_pages += r->ndirty;
    a->stats.nmadvise++;
    note_dirty_dropped(a, r->ndirty);
    r->ndirty = 0;
    r->zeroed = zeroed ? 1 : 0;
}

// Purges the oldest dirty runs until at least npages dirty pages are gone
// (or none are left); now as for pages_purge().
void purge_oldest(Arena *a, uint64_t npages, bool now = false) {
    if (npages == 0 || a->dirty_first == nullptr)
        return;
    a->stats.npurge_passes++;
    uint64_t done = 0;
    while (done < npages && a->dirty_first != nullptr) {
        done += a->dirty_first->ndirty;
        purge_run(a, a->dirty_first, now);
    }
}

// Whether some thread allocates from arena a: a thread is assigned to it,
// or it is arena 0 and serves every thread's large runs.
bool arena_in_use(const Arena *a) {
    return a->nthreads.load(std::memory_order_relaxed) != 0 ||
           (a->index == 0 && g_options.shared_large);
}

// An arena no thread is assigned to (arena 0 aside while it serves every
// thread's large runs) allocates only when another arena's
// large request takes its free pages (run_alloc_anywhere): its dirty pages
// mostly wait for the decay time while other arenas map new ones, so it
// keeps the minimum: otherwise the dirty pages of every arena whose
// threads finished add up while the live arenas map more.
uint64_t dirty_allowed(const Arena *a) {
    int shift = g_options.lg_dirty_ratio;
    // At F's bound the ratio rule is off (FreeBSD's "6F"): decay only.
    if (shift <= kLgDirtyRatioMin)
        return UINT64_MAX;
    if (!arena_in_use(a))
        return g_chunk.npages;
    uint64_t allowed = shift >= 0 ? a->nactive_peak >> shift : a->nactive_peak << -shift;
    // Below one chunk's worth, purging costs more than the memory it saves.
    if (allowed < g_chunk.npages)
        allowed = g_chunk.npages;
    return allowed << a->lg_allowance_boost;
}

// The two purging rules, applied after pages become dirty: the ratio of
// dirty to recently active pages (down to half the allowance, so the next
// frees do not purge again at once), and decay, below.
//
// A working set that moves can still purge and refault in a loop: a few
// large blocks allocated and freed over and over may land in two chunks
// by turns, so that after each round of frees the dirty pages exceed the
// allowance and every round purges and then faults the same pages in
// again, an madvise and page faults per malloc + free.  So when the ratio
// rule is about to purge
// again within a hundredth of the decay time, and since its last purge the
// arena made at least half as many clean (purged or untouched) pages active
// as that purge gave back, the allowance doubles for the rest of the decay
// period, twice at most.  A program that only frees makes no page active
// and never sees a doubling.
constexpr uint32_t kMaxAllowanceBoost = 2;

bool ratio_purges_thrash(const Arena *a, uint32_t now32) {
    // (An arena no thread is assigned to keeps the minimum: a doubling
    // there would only wait for the next thread to inherit it.)
    uint32_t window = static_cast<uint32_t>(arena_decay_ms_locked(a)) / 100;
    return a->ratio_purged != 0 && now32 - a->ratio_purged_at < window &&
           a->nclean_taken * 2 >= a->ratio_purged &&
           arena_in_use(a);
}

void release_empty_runs_locked(Arena *a, bool purge);

// Decay: free runs whose pages have been dirty for nine tenths of the
// decay time are purged (see decay.h).  The dirty list is in the order
// runs became dirty, near enough (the rest of a split run keeps its age
// but goes to the back), so the walk stops at the first run too young.
// The decay period also bounds how long the ratio rule remembers its peak.

void decay_locked(Arena *a, uint64_t now) {
    uint32_t decay = static_cast<uint32_t>(decay_age_limit_ms(arena_decay_ms_locked(a)));
    uint32_t now32 = static_cast<uint32_t>(now);
    if (a->dirty_first != nullptr && now32 - a->dirty_first->dirty_since >= decay) {
        a->stats.npurge_passes++;
        while (a->dirty_first != nullptr && now32 - a->dirty_first->dirty_since >= decay)
            purge_run(a, a->dirty_first, false);
    }
    if (a->nkept != 0 && now32 - a->kept_since >= decay) {
        a->stats.npurge_passes++;
        release_empty_runs_locked(a, true);  // calls back here, with nkept 0
    }
    if (now >= a->decay_epoch_end) {
        a->decay_epoch_end = now + static_cast<uint64_t>(arena_decay_ms_locked(a));
        a->nactive_peak = a->nactive;
        a->lg_allowance_boost = 0;
    }
}

}  // namespace

void maybe_purge(Arena *a, uint64_t now) {
    uint64_t allowed = dirty_allowed(a);
    if (a->ndirty > allowed) {
        uint32_t now32 = static_cast<uint32_t>(now);
        if (a->lg_allowance_boost < kMaxAllowanceBoost && ratio_purges_thrash(a, now32)) {
            a->lg_allowance_boost++;
            allowed = dirty_allowed(a);
        }
        if (a->ndirty > allowed) {
            uint64_t before = a->ndirty;
            purge_oldest(a, a->ndirty - allowed / 2);
            a->ratio_purged = before - a->ndirty;
            a->ratio_purged_at = now32;
            a->nclean_taken = 0;
        }
    }
    decay_locked(a, now);
}

namespace {

// Runs that fall empty are kept on their bin's empty list for the next
// refill rather than released.  When every block is freed by another
// thread, each refill would otherwise cut new runs from the free pages and
// each drain of the frees would give them back (a run cut and released
// for every few mallocs in the classes of a few KiB).  They may hold half
// the arena's dirty allowance in pages (dirty_allowed(): F and f double and
// halve it) and one chunk's worth at most, besides that allowance: counted
// inside it, they would leave the dirty pages just over it after a program
// frees everything, and a purge pass and its refaults would follow; the
// chunk bound keeps a program that frees everything from holding much
// more resident memory than the allowance.  Kept runs age like dirty
// pages: once the oldest has been kept for the decay time they are all
// purged and released (decay_locked); a purge releases them at once.
uint64_t kept_allowed(const Arena *a) {
    uint64_t half = dirty_allowed(a) / 2;
    return half < g_chunk.npages ? half : g_chunk.npages;
}

}  // namespace

bool may_keep_empty_run(const Arena *a, const Run *r) {
    return a->nkept + r->npages <= kept_allowed(a);
}

void keep_empty_run(Arena *a, Bin &bin, Run *r) {
    if (a->nkept == 0)
        a->kept_since = static_cast<uint32_t>(platform_now_ms());
    run_list_push(&bin.empty, r);
    bin.nempty++;
    a->nkept += r->npages;
}

// Takes the newest kept run off bin's empty list, for a refill.
Run *take_kept_run(Arena *a, Bin &bin) {
    Run *r = bin.empty;
    run_list_remove(&bin.empty, r);
    bin.nempty--;
    a->nkept -= r->npages;
    return r;
}

namespace {

// Takes the newest kept run off bin's empty list, to be released.
Run *unkeep_run(Arena *a, Bin &bin) {
    bin.curruns--;
    return take_kept_run(a, bin);
}

// Gives an unkept run's pages back, purged first when purge is set (aged
// out: no need to wait another decay time as dirty pages).
void release_unkept_run(Arena *a, Run *r, bool purge) {
    if (purge) {
        pages_purge(reinterpret_cast<void *>(r->base), static_cast<size_t>(r->npages) << kLgPage,
                    !g_options.lazy_purge);
        a->stats.npurged_pages += r->npages;
        a->stats.nmadvise++;
    }
    run_release(a, r, !purge);
}

// Releases every bin's kept empty runs (lock held).  All are taken off
// their lists first: releasing looks at decay (maybe_purge), which would
// otherwise come back here for the rest.
void release_empty_runs_locked(Arena *a, bool purge) {
    Run *all = nullptr;
    for (unsigned b = 0; b < kNumBins; b++) {
        while (a->bins[b].empty != nullptr)
            run_list_push(&all, unkeep_run(a, a->bins[b]));
    }
    while (Run *r = all) {
        run_list_remove(&all, r);
        release_unkept_run(a, r, purge);
    }
}

}  // namespace

// After a refill's drain: releases kept runs of the bins in mask until the
// arena keeps no more than it may.
void trim_empty_runs_locked(Arena *a, uint64_t mask) {
    uint64_t allowed = kept_allowed(a);
    for (; mask != 0 && a->nkept > allowed; mask &= mask - 1) {
        Bin &bin = a->bins[__builtin_ctzll(mask)];
        while (bin.empty != nullptr && a->nkept > allowed)
            release_unkept_run(a, unkeep_run(a, bin), false);
    }
}

uint64_t arena_purge_all(Arena *a, bool unmap_empty) {
    MutexGuard guard(a->mutex);
    arena_drain_remote_locked(a);
    release_empty_runs_locked(a, false);  // dirty: purged just below
    uint64_t released = a->ndirty;
    purge_oldest(a, a->ndirty, true);
    // Pages faulted in after an explicit purge are not the ratio rule's
    // thrash, and a doubling it made ends here.
    a->lg_allowance_boost = 0;
    a->ratio_purged = 0;
    a->nclean_taken = 0;
    if (!unmap_empty)
        return released;
    Chunk *c = a->chunks;
    while (c != nullptr) {
        Chunk *next = c->next;
        if (c->nfree_pages == chunk_usable_pages() && !c->from_sbrk) {
            Run *whole = page_map_run(c->map[c->header_pages]);
            free_run_remove(a, whole);
            untag_boundary(c, c->header_pages);
            untag_boundary(c, c->npages - 1);
            a->nempty_chunks--;
            released += whole->npages;
            chunk_release(a, c, whole);
        }
        c = next;
    }
    return released;
}

void arena_decay(Arena *a) {
    MutexGuard guard(a->mutex);
    arena_drain_remote_locked(a);
    // The ratio rule too: an arena whose last thread left since it last
    // purged keeps only the minimum (dirty_allowed) from now on.
    maybe_purge(a, platform_now_ms());
    trim_empty_runs_locked(a, (uint64_t{1} << kNumBins) - 1);
}

int32_t arena_decay_ms(Arena *a) {
    MutexGuard guard(a->mutex);
    return decay_ms_as_given(a->decay_ms);
}

void arena_set_decay_ms(Arena *a, int32_t ms) {
    {
        MutexGuard guard(a->mutex);
        a->decay_ms = ms;
        // The period in progress ends with the old time: the new one
        // starts from now.
        a->decay_epoch_end = 0;
    }
    arena_purge_all(a, false);
}

}  // namespace arenalloc
