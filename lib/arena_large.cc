// arena_large.cc — large blocks: whole-page runs, taken from arena 0
// for every thread (shared_large) while its lock is not too busy, or from
// another arena's dirty pages; thread-cache flushes; resizing in place.
#include <errno.h>
#include <stdint.h>

#include "arena_internal.h"
#include "debug_assert.h"
#include "decay.h"
#include "init.h"
#include "options.h"
#include "platform.h"
#include "report.h"
#include "tcache.h"

namespace arenalloc {

namespace {

// The fewest pages a run needs to come from arena 0 under shared_large:
// more than the largest class the thread caches keep.
constexpr uint32_t kSharedLargeMinPages = static_cast<uint32_t>(kTcacheLargeMax >> kLgPage);

// One lock does not serve many threads that do little but take and return
// large blocks (tools/bench large-threads).  So arena 0's lock is watched
// over windows of kSharedWatchWindow acquisitions: when more than one in
// kSharedBusyShare of them found it held (a thread had to wait), sharing
// pauses for a tenth of the decay time (each thread's large runs come from
// its own arena meanwhile) and is then tried again.  Threads that queue on
// one lock run at a fraction of the speed they have on their own arenas,
// while a program that only now and then meets another thread there
// (a few in a window) gains from the sharing.  Only acquisitions are
// counted, not the large requests that found the lock held and went
// elsewhere: those are frequent in programs that gain from sharing too.
constexpr uint64_t kSharedWatchWindow = 512;
constexpr uint64_t kSharedBusyShare = 16;

uint64_t g_shared_window_acquired;   // arena 0's counts at the window's start
uint64_t g_shared_window_contended;  // (both under arena 0's lock)
std::atomic<uint64_t> g_shared_paused_until{0};  // platform_now_ms(); 0: not paused

// Set when a pause ends: the window that spans it counted the lock's other
// users only, so the next one starts afresh.
std::atomic<bool> g_shared_window_stale{false};

bool shared_large_paused() {
    uint64_t until = g_shared_paused_until.load(std::memory_order_relaxed);
    if (AA_LIKELY(until == 0))
        return false;
    if (platform_now_ms() < until)
        return true;
    // Only the pause read here ends: one set meanwhile stays.
    if (g_shared_paused_until.compare_exchange_strong(until, 0, std::memory_order_relaxed))
        g_shared_window_stale.store(true, std::memory_order_relaxed);
    return false;
}

// Closes the watch window once it is full (arena 0's lock held).
void shared_large_watch_locked(Arena *shared) {
    if (AA_UNLIKELY(g_shared_window_stale.load(std::memory_order_relaxed))) {
        g_shared_window_stale.store(false, std::memory_order_relaxed);
        g_shared_window_acquired = shared->mutex.nacquired_;
        g_shared_window_contended = shared->mutex.ncontended_;
        return;
    }
    uint64_t acquired = shared->mutex.nacquired_ - g_shared_window_acquired;
    if (acquired < kSharedWatchWindow)
        return;
    uint64_t contended = shared->mutex.ncontended_ - g_shared_window_contended;
    g_shared_window_acquired = shared->mutex.nacquired_;
    g_shared_window_contended = shared->mutex.ncontended_;
    if (contended * kSharedBusyShare > acquired)
        g_shared_paused_until.store(platform_now_ms() + decay_sweep_interval_ms(),
                                    std::memory_order_relaxed);
}

// Large runs above the thread caches' classes come from arena 0 for every
// thread (the shared_large option, on by default): kept apart from the
// small runs of the other arenas, whose chunks they would otherwise split
// (arena 0 still serves the small requests of its own threads), and
// pooled, so a page one thread frees is the next page any thread's large
// request takes, rather than each arena holding dirty pages from large
// blocks that the others cannot use.  Arena 0 is only tried:
// while another thread holds it, the request takes the path below, so
// large requests never queue behind each other; and the watch above turns
// sharing off for a while when the lock is busy.
//
// A large run for a thread of arena a: from a's free pages, else from
// another arena's dirty free pages, else from a's new chunks.  Arenas hand
// pages to each other only this way: a large block lives in the arena of
// its chunk (frees and resizes lock that one), while a small run must
// belong to the arena of its bin.  It keeps pages freed into one arena (by
// another thread, or after its own thread finished) from waiting there for
// the decay time while the others map more.  Only
// dirty pages are taken: clean ones cost a page fault wherever they come
// from, and an arena no thread uses keeps only the minimum of dirty pages,
// so a block lent from its clean pages would be purged and faulted in
// again at every free and malloc.  Other arenas are only tried, never
// waited for.  Returns the run with its arena locked, in *owner, or
// nullptr with none locked.
Run *run_alloc_anywhere(Arena *a, uint32_t npages, uint32_t align_pages, Arena **owner) {
    // An arena of arenas.create keeps its blocks to itself, and no other
    // arena's: what arena.<i>.reset discards is exactly what its threads
    // allocated.
    bool manual = arena_index_is_manual(a->index);
    if (!manual && npages > kSharedLargeMinPages && g_options.shared_large && a->index != 0 &&
        !shared_large_paused()) {
        Arena *shared = arena_peek(0);
        if (shared->mutex.try_lock()) {
            shared_large_watch_locked(shared);
            arena_drain_remote_locked(shared);
            Run *r = run_alloc(shared, npages, align_pages);
            if (r != nullptr) {
                *owner = shared;
                return r;
            }
            shared->mutex.unlock();
        }
    }
    a->mutex.lock();
    arena_drain_remote_locked(a);
    Run *r = run_alloc(a, npages, align_pages, RunSource::kAny);
    if (r != nullptr) {
        *owner = a;
        return r;
    }
    a->mutex.unlock();
    for (unsigned i = 1; !manual && i < g_narenas_auto; i++) {
        Arena *b = arena_peek((a->index + i) % g_narenas_auto);
        if (b == nullptr || __atomic_load_n(&b->ndirty, __ATOMIC_RELAXED) < npages / 2 ||
            !b->mutex.try_lock())
            continue;
        arena_drain_remote_locked(b);
        r = run_alloc(b, npages, align_pages, RunSource::kDirty);
        if (r != nullptr) {
            *owner = b;
            return r;
        }
        b->mutex.unlock();
    }
    a->mutex.lock();
    r = run_alloc(a, npages, align_pages);
    if (r == nullptr) {
        a->mutex.unlock();
        return nullptr;
    }
    *owner = a;
    return r;
}

// The pages of large class cls; an alignment in pages (at least one).
uint32_t large_run_pages(unsigned cls) { return static_cast<uint32_t>(class_to_size(cls) >> kLgPage); }
uint32_t large_align_pages(size_t align) {
    uint32_t align_pages = static_cast<uint32_t>(align >> kLgPage);
    return align_pages == 0 ? 1 : align_pages;
}

// Makes run r (untagged, a's lock held) the large block of class cls,
// counts it, unlocks a and fills the block as the options ask.
void *large_run_hand_out(Arena *a, Run *r, unsigned cls, bool zero, const CountDelta *cache_counts) {
    size_t usize = class_to_size(cls);
    r->state = kPageLarge;
    r->size_class = static_cast<uint8_t>(cls);
    bool zeroed = r->zeroed;
    tag_pages(r, kPageLarge);
    if (cache_counts == nullptr)
        a->stats.nmalloc_large++;
    else
        merge_large_counts_locked(a, *cache_counts);
    a->stats.allocated_large += usize;
    a->large[cls - kNumBins].nmalloc++;
    a->large[cls - kNumBins].curruns++;
    a->mutex.unlock();
    void *p = reinterpret_cast<void *>(r->base);
    fill_new_block(p, usize, zero, zeroed);
    decay_tick();
    return p;
}

}  // namespace

void *arena_malloc_large(Arena *a, unsigned cls, size_t align, bool zero,
                         const CountDelta *cache_counts) {
    Run *r = run_alloc_anywhere(a, large_run_pages(cls), large_align_pages(align), &a);
    if (r == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
    return large_run_hand_out(a, r, cls, zero, cache_counts);
}

void *arena_malloc_large_in(Arena *a, unsigned cls, size_t align, bool zero) {
    a->mutex.lock();
    arena_drain_remote_locked(a);
    Run *r = run_alloc(a, large_run_pages(cls), large_align_pages(align));
    if (r == nullptr) {
        a->mutex.unlock();
        errno = ENOMEM;
        return nullptr;
    }
    return large_run_hand_out(a, r, cls, zero, nullptr);
}

// Returns validated large run r to the free pages (lock held); the
// request was counted by the caller or its thread cache.
void large_release_locked(Arena *a, Run *r) {
    a->stats.allocated_large -= static_cast<size_t>(r->npages) << kLgPage;
    a->large[r->size_class - kNumBins].ndalloc++;
    a->large[r->size_class - kNumBins].curruns--;
    run_release(a, r);
}

unsigned arena_flush_large(Arena *a, unsigned cls, void **ptrs, unsigned n, CountDelta counts) {
    unsigned kept = 0;
    {
        MutexGuard guard(a->mutex);
        arena_drain_remote_locked(a);
        merge_large_counts_locked(a, counts);
        for (unsigned i = 0; i < n; i++) {
            void *p = ptrs[i];
            Chunk *c = chunk_containing(p);
            if (c->arena != a) {
                ptrs[kept++] = p;  // another arena's: the caller's next pass
                continue;
            }
            Run *r = nullptr;
            uint32_t reg = 0;
            const char *finding = validate_locked(c, p, &r, &reg);
            if (finding == nullptr && (r->state != kPageLarge || r->size_class != cls))
                finding = "not a block of its thread-cache class";
            if (AA_UNLIKELY(finding != nullptr)) {
                a->mutex.unlock();
                report_invalid_pointer("free", p, finding);
                a->mutex.lock();
                continue;
            }
            large_release_locked(a, r);
        }
    }
    decay_tick();
    return kept;
}

namespace {

// A large block resized in place changes class: it leaves one class's
// counts and joins the other's.
void move_large_class(Arena *a, Run *r, unsigned cls) {
    a->large[r->size_class - kNumBins].curruns--;
    a->large[r->size_class - kNumBins].ndalloc++;
    a->large[cls - kNumBins].curruns++;
    a->large[cls - kNumBins].nmalloc++;
    r->size_class = static_cast<uint8_t>(cls);
}

}  // namespace

bool arena_ralloc_large_in_place(Chunk *c, void *p, unsigned cls) {
    AA_ASSERT(chunk_owns(c, p) && cls >= kNumBins && cls < kNumClasses);
    Arena *a = c->arena;
    uint32_t new_pages = static_cast<uint32_t>(class_to_size(cls) >> kLgPage);
    MutexGuard guard(a->mutex);
    Run *r = nullptr;
    uint32_t reg = 0;
    if (validate_locked(c, p, &r, &reg) != nullptr || r->state != kPageLarge)
        return false;
    uint32_t old_pages = r->npages;
    if (new_pages == old_pages) {
        r->size_class = static_cast<uint8_t>(cls);
        return true;
    }
    if (new_pages < old_pages) {
        if (!run_trim_tail(a, r, new_pages))
            return false;
        move_large_class(a, r, cls);
        a->stats.allocated_large -= static_cast<uint64_t>(old_pages - new_pages) << kLgPage;
        return true;
    }
    if (!run_extend(a, r, new_pages - old_pages))
        return false;
    move_large_class(a, r, cls);
    tag_pages(r, kPageLarge);
    a->stats.allocated_large += static_cast<uint64_t>(new_pages - old_pages) << kLgPage;
    return true;
}

}  // namespace arenalloc
