// arena.cc — page runs, bins and the small/large paths of an arena.
#include "arena.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base.h"
#include "chunk_registry.h"
#include "debug_assert.h"
#include "decay.h"
#include "init.h"
#include "options.h"
#include "platform.h"
#include "report.h"
#include "tcache.h"

namespace arenalloc {

namespace {


// ---- thread counts ---------------------------------------------------

void merge_bin_counts_locked(Arena *a, unsigned bin, CountDelta d) {
    a->bins[bin].nrequests += d.nmalloc;
    a->stats.nmalloc_small += d.nmalloc;
    a->stats.ndalloc_small += d.nfree;
}

// A cached large class's requests and frees (its runs are counted apart).
void merge_large_counts_locked(Arena *a, CountDelta d) {
    a->stats.nmalloc_large += d.nmalloc;
    a->stats.ndalloc_large += d.nfree;
}

// ---- run descriptors -------------------------------------------------

Run *desc_alloc(Arena *a) {
    Run *r = a->spare_runs;
    if (r != nullptr) {
        a->spare_runs = r->next;
        // The next spare is seldom cached (it was freed runs ago): start
        // loading it now, for the next call to find it ready.
        if (r->next != nullptr)
            __builtin_prefetch(r->next, 1);
    } else {
        r = static_cast<Run *>(base_alloc(sizeof(Run)));
        if (r == nullptr)
            return nullptr;
    }
    memset(r, 0, sizeof(*r));
    return r;
}

void desc_free(Arena *a, Run *r) {
    r->state = kPageHeader;  // never mistaken for a live run by a debugger
    r->next = a->spare_runs;
    a->spare_runs = r;
}

// ---- free buckets ----------------------------------------------------

// The largest size class not above npages pages.  Page multiples are
// above the quantum classes, where classes are 2^lg times 1, 1.25, 1.5 and
// 1.75: the two bits below the leading one pick among them.
constexpr unsigned free_bucket(uint32_t npages) {
    size_t bytes = static_cast<size_t>(npages) << kLgPage;
    unsigned lg = lg_floor(bytes);
    unsigned quarter = static_cast<unsigned>((bytes >> (lg - 2)) & 3);
    return kNumQuantumClasses + (lg - kLgFirstGroup) * 4 + quarter - 1;
}

constexpr bool free_bucket_is_floor_class_of(uint32_t n) {
    size_t bytes = static_cast<size_t>(n) << kLgPage;
    unsigned c = free_bucket(n);
    return class_size_formula(c) <= bytes && class_size_formula(c + 1) > bytes;
}

// Every run length up to 2^12 pages, and above that the lengths where the
// three leading bits change (each quarter of a power of two and the length
// before it), which are the only places free_bucket() and the floor class
// can part: both depend on those bits alone there.  (Every length up to a
// chunk of 2^30 bytes is more steps than clang evaluates in a constant
// expression.)
constexpr bool free_bucket_is_floor_class(uint32_t most_pages) {
    for (uint32_t n = 1; n <= most_pages && n <= (uint32_t{1} << 12); n++) {
        if (!free_bucket_is_floor_class_of(n))
            return false;
    }
    for (uint32_t lg = 12; (uint32_t{1} << lg) < most_pages; lg++) {
        for (uint32_t q = 4; q < 8; q++) {
            uint32_t n = q << (lg - 2);
            if (n > most_pages)
                break;
            if (!free_bucket_is_floor_class_of(n) || !free_bucket_is_floor_class_of(n - 1))
                return false;
        }
    }
    return free_bucket_is_floor_class_of(most_pages);
}
static_assert(free_bucket_is_floor_class(uint32_t{1} << (kLgChunkMax - kLgPage)),
              "free_bucket() is the floor class for every run length");

void bucket_insert(Arena *a, Run *r) {
    unsigned b = free_bucket(r->npages);
    run_list_push(&a->free_buckets[b], r);
    a->free_nonempty[b / 64] |= uint64_t{1} << (b % 64);
}

// Takes r off bucket b, the one its length had when it was inserted.
void bucket_remove_from(Arena *a, Run *r, unsigned b) {
    run_list_remove(&a->free_buckets[b], r);
    if (a->free_buckets[b] == nullptr)
        a->free_nonempty[b / 64] &= ~(uint64_t{1} << (b % 64));
}

void bucket_remove(Arena *a, Run *r) { bucket_remove_from(a, r, free_bucket(r->npages)); }

// First non-empty bucket at or above b, or kNumClasses.
unsigned bucket_next(const Arena *a, unsigned b) {
    for (unsigned w = b / 64; w < (kNumClasses + 63) / 64; w++) {
        uint64_t bits = a->free_nonempty[w];
        if (w == b / 64)
            bits &= ~uint64_t{0} << (b % 64);
        if (bits != 0)
            return w * 64 + static_cast<unsigned>(__builtin_ctzll(bits));
    }
    return kNumClasses;
}

// ---- page map --------------------------------------------------------

uint32_t run_first_page(const Run *r) {
    return chunk_page_index(r->chunk, reinterpret_cast<void *>(r->base));
}

void tag_pages(Run *r, PageTag tag) {
    page_map_fill(r->chunk->map + run_first_page(r), r->npages, page_map_entry(r, tag));
}

// A free run's boundary pages point at it; its inner pages only say "free".
// The dirty bit of every page is kept as it is.
void tag_free_boundaries(Run *r) {
    PageMapEntry *map = r->chunk->map;
    uint32_t first = run_first_page(r);
    uint32_t last = first + r->npages - 1;
    map[first] = page_map_entry(r, kPageFree) | (map[first] & kPageDirty);
    map[last] = page_map_entry(r, kPageFree) | (map[last] & kPageDirty);
}

// One boundary page of free run r, when the other already names it.
void tag_free_boundary(Run *r, uint32_t page) {
    PageMapEntry *map = r->chunk->map;
    map[page] = page_map_entry(r, kPageFree) | (map[page] & kPageDirty);
}

void untag_boundary(Chunk *c, uint32_t page) {
    c->map[page] = kPageFree | (c->map[page] & kPageDirty);
}

// The dirty pages among n pages of free run r from page first on: read
// from the page map only when r is part dirty, part clean.
uint32_t count_dirty(const Run *r, uint32_t first, uint32_t n) {
    if (r->ndirty == 0)
        return 0;
    if (r->ndirty == r->npages)
        return n;
    return page_map_count_dirty(r->chunk->map + first, n);
}

// For AA_ASSERT: run r lies in its chunk's usable pages, and the map
// entries of its first and last page name r with r's state.
[[maybe_unused]] bool run_map_agrees(const Run *r) {
    const Chunk *c = r->chunk;
    uint32_t first = run_first_page(r);
    uint32_t last = first + r->npages - 1;
    return r->npages != 0 && first >= c->header_pages && last < c->npages &&
           page_map_run(c->map[first]) == r && page_map_tag(c->map[first]) == r->state &&
           page_map_run(c->map[last]) == r && page_map_tag(c->map[last]) == r->state;
}

// For AA_ASSERT: c is a live arena chunk, and the registry says so for p.
[[maybe_unused]] bool chunk_owns(const Chunk *c, const void *p) {
    return c->magic == kChunkMagic &&
           registry_lookup(p) == (reinterpret_cast<uintptr_t>(c) | kRegistryChunk);
}

// ---- free runs: size buckets and the dirty list --------------------------

void dirty_list_append(Arena *a, Run *r) {
    r->dirty_next = nullptr;
    r->dirty_prev = a->dirty_last;
    if (a->dirty_last != nullptr)
        a->dirty_last->dirty_next = r;
    else
        a->dirty_first = r;
    a->dirty_last = r;
}

void dirty_list_remove(Arena *a, Run *r) {
    if (r->dirty_prev != nullptr)
        r->dirty_prev->dirty_next = r->dirty_next;
    else
        a->dirty_first = r->dirty_next;
    if (r->dirty_next != nullptr)
        r->dirty_next->dirty_prev = r->dirty_prev;
    else
        a->dirty_last = r->dirty_prev;
    r->dirty_next = r->dirty_prev = nullptr;
}

// A free run is on its size bucket, and on the dirty list when it has
// dirty pages.
void free_run_insert(Arena *a, Run *r) {
    AA_ASSERT(r->state == kPageFree && r->ndirty <= r->npages && run_map_agrees(r));
    bucket_insert(a, r);
    if (r->ndirty != 0)
        dirty_list_append(a, r);
}

void free_run_remove(Arena *a, Run *r) {
    AA_ASSERT(r->state == kPageFree && r->ndirty <= r->npages && run_map_agrees(r));
    bucket_remove(a, r);
    if (r->ndirty != 0)
        dirty_list_remove(a, r);
}

void note_dirty_dropped(Arena *a, uint32_t n) {
    AA_ASSERT(a->ndirty >= n);
    a->ndirty -= n;
}

// npages free pages, dirty_taken of them dirty, become active.  The clean
// ones will be faulted in: maybe_purge's guard against thrashing counts them.
void note_pages_taken(Arena *a, uint32_t npages, uint32_t dirty_taken) {
    note_dirty_dropped(a, dirty_taken);
    a->nclean_taken += npages - dirty_taken;
    a->nactive += npages;
    if (a->nactive > a->nactive_peak)
        a->nactive_peak = a->nactive;
}

// ---- chunks ----------------------------------------------------------

uint32_t chunk_usable_pages() { return g_chunk.npages - g_chunk.header_pages; }

// Adds new chunk c to the arena as one clean free run described by r.
void chunk_add(Arena *a, Chunk *c, Run *r) {
    a->stats.nchunks++;
    c->next = a->chunks;
    c->prev = nullptr;
    if (a->chunks != nullptr)
        a->chunks->prev = c;
    a->chunks = c;

    for (uint32_t i = c->header_pages; i < c->npages; i++)
        c->map[i] = kPageFree;
    r->chunk = c;
    r->base = chunk_page_addr(c, c->header_pages);
    r->npages = chunk_usable_pages();
    r->state = kPageFree;
    r->zeroed = 1;  // fresh from the kernel
    c->nfree_pages = r->npages;
    tag_free_boundaries(r);
    free_run_insert(a, r);
    a->nempty_chunks++;
}

// Maps new chunks: one for a new arena, then about half as many as the
// arena has (kChunkBatchMax at most) in one mapping, so a growing arena
// makes a handful of mmap calls; the ones not needed yet wait as empty
// chunks, untouched but for their headers.
bool arena_grow(Arena *a) {
    uint64_t want = a->stats.nchunks / 2;
    if (want < 1)
        want = 1;
    if (want > kChunkBatchMax)
        want = kChunkBatchMax;
    Chunk *got[kChunkBatchMax];
    unsigned n = chunk_map(a, got, static_cast<unsigned>(want));
    unsigned added = 0;
    for (; added < n; added++) {
        Run *r = desc_alloc(a);
        if (r == nullptr)
            break;
        chunk_add(a, got[added], r);
    }
    for (unsigned i = added; i < n; i++)
        chunk_unmap(got[i]);
    return added != 0;
}

// Unmaps an empty chunk whose one free run, covering every usable page,
// has been taken off the free lists.
void chunk_release(Arena *a, Chunk *c, Run *whole) {
    note_dirty_dropped(a, whole->ndirty);
    desc_free(a, whole);
    if (c->prev != nullptr)
        c->prev->next = c->next;
    else
        a->chunks = c->next;
    if (c->next != nullptr)
        c->next->prev = c->prev;
    c->next = c->prev = nullptr;
    a->stats.nchunks--;
    chunk_unmap(c);
}

// ---- purging -------------------------------------------------------------

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

// The fewest pages a run needs to come from arena 0 under shared_large:
// more than the largest class the thread caches keep.
constexpr uint32_t kSharedLargeMinPages = static_cast<uint32_t>(kTcacheLargeMax >> kLgPage);

// How many times a free into arena 0 retries its busy lock before it
// sleeps on it.
constexpr unsigned kSharedLargeSpins = 100;

// One lock does not serve many threads that do little but take and return
// large blocks (tools/bench large-threads).  So arena 0's lock is watched
// over windows of kSharedWatchWindow acquisitions: when more than one in
// kSharedBusyShare of them found it held (a thread had to wait), sharing
// pauses for a tenth of the decay time (each thread's large runs come from
// its own arena meanwhile) and is then tried again.  Without the pause, large-threads with 8 threads on 2 CPUs made a third of the pairs a
// second that it makes with shared_large off (a quarter of arena 0's lock
// acquisitions found it held); entry-cache's windows see a few in 512.
// (Counting also the large requests that found it held and went elsewhere
// caught that sooner, but paused entry-cache too: 3 or 4 of 11 runs peaked
// above 350 MiB.)
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
// keeps the minimum.  (entry-cache with 4 threads: as the scanners
// finished, the others' frees left 30-50 MiB dirty in each finished
// thread's arena and the process grew by a quarter.)
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
// A working set that moves can still purge and refault in a loop: four
// blocks of 512-640 KiB allocated and freed over and over landed in two
// chunks by turns, so after each round of frees the dirty pages were 1.4
// times the peak of active ones, and every round purged and then faulted
// the same pages in again (one madvise and 1.6-2.2 us a malloc + free pair,
// against jemalloc's 0.42 us).  So when the ratio rule is about to purge
// again within a hundredth of the decay time, and since its last purge the
// arena made at least half as many clean (purged or untouched) pages active
// as that purge gave back, the allowance doubles for the rest of the decay
// period, twice at most.  A program that only frees makes no page active
// and never sees a doubling.
constexpr uint32_t kMaxAllowanceBoost = 2;

bool ratio_purges_thrash(const Arena *a, uint32_t now32) {
    // (An arena no thread is assigned to keeps the minimum: a doubling
    // there would only wait for the next thread to inherit it.)
    uint32_t window = static_cast<uint32_t>(g_options.decay_ms) / 100;
    return a->ratio_purged != 0 && now32 - a->ratio_purged_at < window &&
           a->nclean_taken * 2 >= a->ratio_purged &&
           arena_in_use(a);
}

// Decay: free runs whose pages have been dirty for nine tenths of the
// decay time are purged (see decay.h).  The dirty list is in the order runs became dirty, near enough
// (the rest of a split run keeps its age but goes to the back), so the
// walk stops at the first run too young.  The decay period also bounds how
// long the ratio rule remembers its peak.
void release_empty_runs_locked(Arena *a, bool purge);

void decay_locked(Arena *a, uint64_t now) {
    uint32_t decay = static_cast<uint32_t>(decay_age_limit_ms());
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
        a->decay_epoch_end = now + static_cast<uint64_t>(g_options.decay_ms);
        a->nactive_peak = a->nactive;
        a->lg_allowance_boost = 0;
    }
}

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

// ---- page runs -------------------------------------------------------

// Where run_alloc may take pages from: any free run, growing the arena when
// none fits; any free run; or only a free run whose first npages pages are
// mostly dirty (resident already), looked for among the oldest dirty runs.
enum class RunSource { kAnyOrGrow, kAny, kDirty };

// The most dirty runs a kDirty search looks at: it runs under another
// thread's arena lock.
constexpr unsigned kDirtySearchMax = 64;

// A dirty free run of a whose first npages pages (and the alignment lead)
// fit and are at least half dirty, or nullptr.
Run *find_dirty_fit(Arena *a, uint32_t need, uint32_t npages) {
    unsigned looked = 0;
    for (Run *r = a->dirty_first; r != nullptr && looked < kDirtySearchMax;
         r = r->dirty_next, looked++) {
        if (r->npages >= need && r->ndirty * 2 >= npages &&
            count_dirty(r, run_first_page(r), need) * 2 >= npages)
            return r;
    }
    return nullptr;
}

// Takes npages pages, starting at a multiple of align_pages pages, from the
// free runs, as from says.  The result is untagged.
Run *run_alloc(Arena *a, uint32_t npages, uint32_t align_pages,
               RunSource from = RunSource::kAnyOrGrow) {
    uint32_t need = npages + align_pages - 1;
    if (need > chunk_usable_pages())
        return nullptr;
    // A lender's dirty run first: most of those searches find none, and
    // then need no descriptor.
    Run *found = nullptr;
    if (from == RunSource::kDirty && (found = find_dirty_fit(a, need, npages)) == nullptr)
        return nullptr;
    // The descriptors a split may need are taken before any free run is
    // touched, so that failure leaves them as they were: one here, a
    // second below when the cut needs two.
    Run *spare1 = desc_alloc(a);
    if (spare1 == nullptr)
        return nullptr;

    for (int attempt = 0; attempt < 2 && found == nullptr; attempt++) {
        unsigned b = free_bucket(need);
        // The floor bucket may hold runs shorter than need: look through it.
        for (Run *r = a->free_buckets[b]; r != nullptr; r = r->next) {
            if (r->npages >= need) {
                found = r;
                break;
            }
        }
        if (found == nullptr) {
            unsigned nb = bucket_next(a, b + 1);
            if (nb < kNumClasses)
                found = a->free_buckets[nb];
        }
        if (found == nullptr &&
            (attempt != 0 || from != RunSource::kAnyOrGrow || !arena_grow(a)))
            break;
    }
    if (found == nullptr) {
        desc_free(a, spare1);
        return nullptr;
    }

    Chunk *c = found->chunk;
    uint32_t first = run_first_page(found);
    uint32_t total = found->npages;
    uint32_t lead = 0;
    if (align_pages > 1) {
        uintptr_t aligned = align_up(found->base, static_cast<size_t>(align_pages) << kLgPage);
        lead = static_cast<uint32_t>((aligned - found->base) >> kLgPage);
    }
    uint32_t trail = total - lead - npages;
    Run *spare2 = nullptr;
    if (lead != 0 || trail == 0) {
        spare2 = desc_alloc(a);
        if (spare2 == nullptr) {
            desc_free(a, spare1);
            return nullptr;
        }
    }
    if (total == chunk_usable_pages())
        a->nempty_chunks--;
    if (spare2 == nullptr) {
        // The common cut, the front of a longer run: the rest stays free
        // under found's descriptor, keeping its place on the dirty list
        // (its pages' age) and, unless its size bucket changes, its
        // bucket; the taken pages get a fresh descriptor.
        uint32_t dirty_taken = count_dirty(found, first, npages);
        note_pages_taken(a, npages, dirty_taken);
        // (At the head of its bucket, as a reinserted run would be: the
        // next cut of that size comes from it.)
        bool rebucket = free_bucket(total) != free_bucket(trail) ||
                        a->free_buckets[free_bucket(total)] != found;
        if (rebucket)
            bucket_remove(a, found);
        if (found->ndirty == dirty_taken && dirty_taken != 0)
            dirty_list_remove(a, found);
        untag_boundary(c, first);
        found->base = chunk_page_addr(c, first + npages);
        found->npages = trail;
        found->ndirty -= dirty_taken;
        tag_free_boundary(found, first + npages);  // its last page names it already
        if (rebucket)
            bucket_insert(a, found);
        AA_ASSERT(run_map_agrees(found));
        Run *result = spare1;
        result->chunk = c;
        result->base = chunk_page_addr(c, first);
        result->npages = npages;
        result->ndirty = 0;
        result->zeroed = dirty_taken == 0 ? found->zeroed : 0;
        c->nfree_pages -= npages;
        return result;
    }
    free_run_remove(a, found);
    uint32_t dirty_lead = lead != 0 ? count_dirty(found, first, lead) : 0;
    uint32_t dirty_taken = count_dirty(found, first + lead, npages);
    uint32_t dirty_trail = found->ndirty - dirty_lead - dirty_taken;
    note_pages_taken(a, npages, dirty_taken);
    untag_boundary(c, first);
    untag_boundary(c, first + total - 1);

    Run *result = found;
    if (lead != 0) {
        found->npages = lead;
        found->ndirty = dirty_lead;
        tag_free_boundaries(found);
        free_run_insert(a, found);
        result = spare1;
        spare1 = nullptr;
        result->chunk = c;
        result->zeroed = found->zeroed;
    }
    result->base = chunk_page_addr(c, first + lead);
    result->npages = npages;
    result->ndirty = 0;
    if (dirty_taken != 0)
        result->zeroed = 0;
    if (trail != 0) {
        Run *t = spare2;
        spare2 = nullptr;
        t->chunk = c;
        t->base = chunk_page_addr(c, first + lead + npages);
        t->npages = trail;
        t->state = kPageFree;
        t->zeroed = found->zeroed;
        t->ndirty = dirty_trail;
        t->dirty_since = found->dirty_since;
        tag_free_boundaries(t);
        free_run_insert(a, t);
    }
    if (spare1 != nullptr)
        desc_free(a, spare1);
    if (spare2 != nullptr)
        desc_free(a, spare2);
    AA_ASSERT(c->nfree_pages >= npages && dirty_trail <= trail);
    c->nfree_pages -= npages;
    return result;
}

// Returns a run's pages to the free runs as dirty pages (clean ones when
// the caller purged them), merging with free neighbours; an empty chunk is
// kept (up to kRetainedChunks per arena, its pages purged by the usual
// rules) or unmapped.
void run_release(Arena *a, Run *r, bool dirty = true) {
    Chunk *c = r->chunk;
    uint32_t first = run_first_page(r);
    uint32_t n = r->npages;
    page_map_fill(c->map + first, n, dirty ? kPageFree | kPageDirty : kPageFree);
    r->state = kPageFree;
    r->zeroed = 0;
    r->size_class = 0;
    r->ndirty = dirty ? n : 0;
    // A coarse clock read from the vDSO: a few nanoseconds.  A run merged
    // with free neighbours takes the new pages' age.
    uint64_t now = platform_now_ms();
    r->dirty_since = static_cast<uint32_t>(now);
    AA_ASSERT(a->nactive >= n && c->nfree_pages + n <= chunk_usable_pages());
    c->nfree_pages += n;
    a->nactive -= n;
    a->ndirty += r->ndirty;

    // A free run just before takes the pages in (releases in address
    // order, as when a program frees what it allocated in turn, always
    // find one): it stays on its lists, and moves only where it must.
    Run *grown = nullptr;
    unsigned grown_bucket = 0;
    bool grown_dirty = false;
    bool grown_one_page = false;  // its first page was its last: untagged below
    if (first > c->header_pages) {
        PageMapEntry e = c->map[first - 1];
        if (page_map_tag(e) == kPageFree) {
            Run *prev = page_map_run(e);
            AA_ASSERT(prev->state == kPageFree && run_map_agrees(prev));
            grown = prev;
            grown_bucket = free_bucket(prev->npages);
            grown_dirty = prev->ndirty != 0;
            grown_one_page = prev->npages == 1;
            untag_boundary(c, first - 1);
            prev->npages += r->npages;
            prev->ndirty += r->ndirty;
            if (r->ndirty != 0)
                prev->dirty_since = r->dirty_since;
            prev->zeroed = 0;
            desc_free(a, r);
            r = prev;
            first = run_first_page(r);
        }
    }
    uint32_t after = first + r->npages;
    if (after < c->npages) {
        PageMapEntry e = c->map[after];
        if (page_map_tag(e) == kPageFree) {
            Run *next = page_map_run(e);
            free_run_remove(a, next);
            untag_boundary(c, after);
            if (r->ndirty == 0)
                r->dirty_since = next->dirty_since;  // only its pages are dirty
            r->npages += next->npages;
            r->ndirty += next->ndirty;
            desc_free(a, next);
        }
    }
    if (grown != nullptr) {
        // Its pages are the newest dirty ones now: its place is the back
        // of the dirty list.  It leaves its bucket only for another one,
        // and both lists when it covers the chunk (below).
        bool whole = r->npages == chunk_usable_pages();
        bool rebucket = whole || free_bucket(r->npages) != grown_bucket ||
                        a->free_buckets[grown_bucket] != r;
        // (Clean pages leave its age and its place as they were.)
        bool stays = grown_dirty && (a->dirty_last == r || !dirty);
        if (rebucket)
            bucket_remove_from(a, r, grown_bucket);
        if (grown_dirty && (whole || !stays))
            dirty_list_remove(a, r);
        if (!whole) {
            if (grown_one_page)
                tag_free_boundaries(r);
            else
                tag_free_boundary(r, first + r->npages - 1);  // its first page names it already
            if (rebucket)
                bucket_insert(a, r);
            if (!stays && r->ndirty != 0)
                dirty_list_append(a, r);
            AA_ASSERT(run_map_agrees(r));
            maybe_purge(a, now);
            return;
        }
    }
    if (r->npages == chunk_usable_pages()) {
        if (a->nempty_chunks >= kRetainedChunks && !c->from_sbrk) {
            untag_boundary(c, c->header_pages);
            untag_boundary(c, c->npages - 1);
            chunk_release(a, c, r);
            return;
        }
        a->nempty_chunks++;
    }
    tag_free_boundaries(r);
    free_run_insert(a, r);
    maybe_purge(a, now);
}

// ---- bins ------------------------------------------------------------

// Runs that fall empty are kept on their bin's empty list for the next
// refill rather than released.  When every block is freed by another
// thread, each refill would otherwise cut new runs from the free pages and
// each drain of the frees would give them back (a run cut and released
// for every few mallocs in the classes of a few KiB).  They may hold half
// the arena's dirty allowance in pages (dirty_allowed(): F and f double and
// halve it) and one chunk's worth at most, besides that allowance: taking
// them out of it left the dirty pages just over it after a program freed
// everything, and a purge pass and its refaults followed (fluctuate:
// 103,000 page faults instead of 68,000).  Half the allowance without the
// chunk bound left a program that freed everything with a third more
// resident memory (entry-cache, 4 threads).  Kept
// runs age like dirty pages: once the oldest has been kept for the decay
// time they are all purged and released (decay_locked); a purge releases
// them at once.
uint64_t kept_allowed(const Arena *a) {
    uint64_t half = dirty_allowed(a) / 2;
    return half < g_chunk.npages ? half : g_chunk.npages;
}

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

Run *bin_refill(Arena *a, unsigned bin_index) {
    Bin &bin = a->bins[bin_index];
    Run *r = bin.nonfull;
    if (r != nullptr) {
        run_list_remove(&bin.nonfull, r);
    } else if (bin.empty != nullptr) {
        r = take_kept_run(a, bin);
    } else {
        const BinInfo &info = bin_info(bin_index);
        // A power-of-two class larger than a page (8 KiB) gets a run
        // aligned to its size, so every small block is aligned to the
        // largest power of two dividing its class.
        uint32_t align_pages = 1;
        if (is_pow2(info.region_size) && info.region_size > kPage)
            align_pages = info.region_size >> kLgPage;
        r = run_alloc(a, info.run_pages, align_pages);
        if (r == nullptr)
            return nullptr;
        r->state = kPageSmall;
        r->size_class = static_cast<uint8_t>(bin_index);
        r->bin4 = static_cast<uint8_t>(4 * bin_index);
        r->region_size = info.region_size;
        r->reciprocal = info.reciprocal;
        r->start_magic = info.start_magic;
        r->nregs = static_cast<uint16_t>(info.nregs);
        r->nfree = static_cast<uint16_t>(info.nregs);
        r->hint = 0;
        r->bitmap.init(info.nregs);
        tag_pages(r, kPageSmall);
        AA_ASSERT(r->bitmap.count_free() == r->nfree && run_map_agrees(r));
        // With S every free region reads as junk, so that malloc can check
        // it: a new run's regions are junk to begin with.
        if (AA_UNLIKELY(g_options.hardened))
            memset(reinterpret_cast<void *>(r->base), kJunkOnFree,
                   static_cast<size_t>(r->npages) << kLgPage);
        bin.nruns++;
        bin.curruns++;
    }
    // The old current run is full (we only refill then); full runs sit on
    // no list until a free makes room in them.
    bin.current = r;
    return r;
}

// Checks p against the page map (lock held).  Returns nullptr and the run
// (and region index for small runs) when p is a live block start, or the
// finding to report.
const char *validate_locked(Chunk *c, const void *p, Run **run_out, uint32_t *reg_out) {
    uint32_t page = chunk_page_index(c, p);
    PageMapEntry e = c->map[page];
    switch (page_map_tag(e)) {
    case kPageSmall: {
        Run *r = page_map_run(e);
        const BinInfo &info = bin_info(r->size_class);
        size_t offset = reinterpret_cast<uintptr_t>(p) - r->base;
        uint32_t reg = region_index(info.reciprocal, offset);
        if (reg >= info.nregs || static_cast<size_t>(reg) * info.region_size != offset)
            return "not the start of a block";
        if (r->bitmap.is_free(reg))
            return "block already free (double free)";
        AA_ASSERT(r->chunk == c && r->size_class < kNumBins && run_map_agrees(r));
        *run_out = r;
        *reg_out = reg;
        return nullptr;
    }
    case kPageLarge: {
        Run *r = page_map_run(e);
        if (reinterpret_cast<uintptr_t>(p) != r->base)
            return "not the start of a block";
        AA_ASSERT(r->chunk == c && r->size_class >= kNumBins && run_map_agrees(r));
        *run_out = r;
        return nullptr;
    }
    case kPageFree:
        return "block already free (or never allocated)";
    default:
        return "not a block returned by malloc";
    }
}

}  // namespace

Arena *arena_create(unsigned index) {
    void *mem = base_alloc(sizeof(Arena));
    if (mem == nullptr)
        return nullptr;
    // base memory is zeroed, which is a valid empty arena except for the
    // mutex, which is initialized explicitly.
    Arena *a = static_cast<Arena *>(mem);
    a->mutex.init();
    a->index = index;
    return a;
}

namespace {

// One region of the bin, or nullptr when no run can be had (lock held).
void *region_take_locked(Arena *a, unsigned bin_index) {
    const BinInfo &info = bin_info(bin_index);
    Bin &bin = a->bins[bin_index];
    Run *r = bin.current;
    if (AA_UNLIKELY(r == nullptr || r->nfree == 0)) {
        r = bin_refill(a, bin_index);
        if (r == nullptr)
            return nullptr;
    }
    unsigned hint = r->hint;
    unsigned reg = r->bitmap.take_first(&hint);
    r->hint = static_cast<uint16_t>(hint);
    r->nfree--;
    AA_ASSERT(reg < r->nregs && r->state == kPageSmall && r->size_class == bin_index);
    AA_ASSERT(r->bitmap.count_free() == r->nfree);
    bin.nmalloc++;
    a->stats.allocated_small += info.region_size;
    return reinterpret_cast<void *>(r->base + static_cast<uintptr_t>(reg) * info.region_size);
}

// Run r of bin (not its current run) has every region free now.
void run_fell_empty(Arena *a, Bin &bin, Run *r, bool was_full, bool keep_empty) {
    if (!was_full)
        run_list_remove(&bin.nonfull, r);
    if (keep_empty || may_keep_empty_run(a, r)) {
        keep_empty_run(a, bin, r);
    } else {
        bin.curruns--;
        run_release(a, r);
    }
}

// Marks region reg of small run r of bin free, validated by the caller,
// and moves r between the bin's lists (lock held); the counts are the
// caller's.  A run that falls empty is kept on the bin's empty list while
// the arena may keep it (may_keep_empty_run), or always with keep_empty (a
// refill's drain: the refill takes them at once, trim_empty_runs_locked
// releases the rest).
AA_ALWAYS_INLINE void region_free_locked(Arena *a, Bin &bin, Run *r, uint32_t reg,
                                         uint32_t nregs, bool keep_empty) {
    bool was_full = r->nfree == 0;
    r->bitmap.set_free(reg);
    r->nfree++;
    AA_ASSERT(r->nfree <= r->nregs && r->bitmap.count_free() == r->nfree);
    if (reg / 64 < r->hint)
        r->hint = static_cast<uint16_t>(reg / 64);
    if (r == bin.current)
        return;
    if (r->nfree == nregs)
        run_fell_empty(a, bin, r, was_full, keep_empty);
    else if (was_full)
        run_list_push(&bin.nonfull, r);
}

// Returns region reg of small run r, validated by the caller (lock held).
void region_release_locked(Arena *a, Run *r, uint32_t reg, bool keep_empty = false) {
    unsigned bin_index = r->size_class;
    const BinInfo &info = bin_info(bin_index);
    Bin &bin = a->bins[bin_index];
    region_free_locked(a, bin, r, reg, info.nregs, keep_empty);
    bin.ndalloc++;
    a->stats.allocated_small -= info.region_size;
}

// Returns the cached region p of chunk c to its run once the page map and
// the bitmap confirm it is a live region start (lock held); a bad one is
// reported on behalf of free() with the lock dropped, and left alone.
void release_checked_locked(Arena *a, Chunk *c, void *p, bool keep_empty = false) {
    Run *r = nullptr;
    uint32_t reg = 0;
    const char *finding = validate_locked(c, p, &r, &reg);
    if (AA_UNLIKELY(finding != nullptr)) {
        a->mutex.unlock();
        report_invalid_pointer("free", p, finding);
        a->mutex.lock();
        return;
    }
    region_release_locked(a, r, reg, keep_empty);
}

}  // namespace

namespace {

// S: a region handed out again must still hold the junk written when it
// was freed; anything else is a write after free, reported with the first
// byte that changed.
void check_junk_on_reuse(void *p, size_t usize) {
    size_t changed = first_byte_not(p, usize, kJunkOnFree);
    if (AA_UNLIKELY(changed != usize))
        report_write_after_free(p, changed, usize);
}

}  // namespace

void fill_new_block(void *p, size_t usize, bool zero, bool known_zero) {
    if (zero || g_options.zero) {
        if (!known_zero)
            memset(p, 0, usize);
    } else if (g_options.junk) {
        memset(p, kJunkOnAlloc, usize);
    }
}

void *arena_malloc_small(Arena *a, unsigned bin_index, bool zero) {
    a->mutex.lock();
    arena_drain_remote_locked(a);
    void *p = region_take_locked(a, bin_index);
    if (p != nullptr) {
        a->stats.nmalloc_small++;
        a->bins[bin_index].nrequests++;
    }
    a->mutex.unlock();
    if (AA_UNLIKELY(p == nullptr)) {
        errno = ENOMEM;
        return nullptr;
    }
    if (AA_UNLIKELY(g_options.hardened))
        check_junk_on_reuse(p, bin_info(bin_index).region_size);
    fill_new_block(p, bin_info(bin_index).region_size, zero, false);
    return p;
}

namespace {

// Returns the regions ptrs[0..n) of class bin_index that belong to this
// arena to their runs, each checked like free() checks it, and moves the
// others' to the front of ptrs, returning how many (lock held).  The
// common case, a live region start of a run of that class, is checked and
// returned inline, with the class's geometry at hand and the counts added
// once; anything else takes release_checked_locked(), which reports it or
// returns a region whose run changed class.
unsigned release_regions_locked(Arena *a, unsigned bin_index, void **ptrs, unsigned n,
                                bool keep_empty) {
    const BinInfo &info = bin_info(bin_index);
    Bin &bin = a->bins[bin_index];
    uint64_t released = 0;
    unsigned kept = 0;
    for (unsigned i = 0; i < n; i++) {
        void *p = ptrs[i];
        Chunk *c = chunk_containing(p);
        AA_ASSERT(chunk_owns(c, p));  // a cache holds only regions it was given
        if (c->arena != a) {
            ptrs[kept++] = p;  // another arena's: the caller's next pass
            continue;
        }
        PageMapEntry e = c->map[chunk_page_index(c, p)];
        Run *r = page_map_run(e);
        if (AA_UNLIKELY(page_map_tag(e) != kPageSmall || r->size_class != bin_index)) {
            release_checked_locked(a, c, p, keep_empty);
            continue;
        }
        size_t offset = reinterpret_cast<uintptr_t>(p) - r->base;
        uint32_t reg = region_index(info.reciprocal, offset);
        if (AA_UNLIKELY(reg >= info.nregs || static_cast<size_t>(reg) * info.region_size != offset ||
                        r->bitmap.is_free(reg))) {
            release_checked_locked(a, c, p, keep_empty);  // reports it
            continue;
        }
        AA_ASSERT(r->chunk == c && run_map_agrees(r));
        region_free_locked(a, bin, r, reg, info.nregs, keep_empty);
        released++;
    }
    bin.ndalloc += released;
    a->stats.allocated_small -= released * info.region_size;
    return kept;
}

// Returns the regions of the batches from b on (all of class bin_index,
// all of this arena) to their runs, and the batches to the pool.
void remote_release_locked(Arena *a, unsigned bin_index, RemoteBatch *b, bool keep_empty) {
    if (b == nullptr)
        return;
    RemoteBatch *first = b;
    for (;;) {
        unsigned others = release_regions_locked(a, bin_index, b->regions, b->count, keep_empty);
        AA_ASSERT(others == 0);
        (void)others;
        b->count = 0;
        if (b->next == nullptr)
            break;
        b = b->next;
    }
    remote_batch_put(first, b);
}

// Drains the batches other threads pushed; returns the bins they were for.
uint64_t drain_remote_locked(Arena *a, bool keep_empty) {
    if (AA_LIKELY(a->remote.pending.load(std::memory_order_relaxed) == 0))
        return 0;
    uint64_t pending = a->remote.pending.exchange(0, std::memory_order_seq_cst);
    for (uint64_t left = pending; left != 0; left &= left - 1) {
        unsigned bin = static_cast<unsigned>(__builtin_ctzll(left));
        remote_release_locked(a, bin,
                              a->remote.chains[bin].exchange(nullptr, std::memory_order_seq_cst),
                              keep_empty);
    }
    return pending;
}

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

}  // namespace

unsigned arena_fill_small(Arena *a, unsigned bin_index, void **out, unsigned n,
                          CountDelta counts) {
    MutexGuard guard(a->mutex);
    merge_bin_counts_locked(a, bin_index, counts);
    a->bins[bin_index].nfills++;
    // Regions other threads freed go back to their runs first, each checked
    // against its run's bitmap as free() checks it: only free() of the
    // freeing thread's fast path vouched for them, and a block freed twice
    // (once without the mark, e.g. after realloc moved it) or whose run
    // was released meanwhile must be reported here, not handed out.  Runs
    // the drain empties are kept until the fill has taken what it needs.
    uint64_t drained = drain_remote_locked(a, true);
    unsigned got = 0;
    // Filled from the top down, so that the stack hands out the lowest
    // addresses first and live regions stay packed.
    const BinInfo &info = bin_info(bin_index);
    Bin &bin = a->bins[bin_index];
    while (got < n) {
        Run *r = bin.current;
        if (r == nullptr || r->nfree == 0) {
            r = bin_refill(a, bin_index);
            if (r == nullptr)
                break;
        }
        // As many regions as the run gives, lowest first, word by word
        // (region_take_locked's steps for a whole batch).
        unsigned take = n - got < r->nfree ? n - got : r->nfree;
        unsigned w = r->hint;
        for (unsigned left = take; left != 0;) {
            uint64_t bits = r->bitmap.words[w];
            while (bits != 0 && left != 0) {
                unsigned reg = w * 64 + static_cast<unsigned>(__builtin_ctzll(bits));
                bits &= bits - 1;
                out[n - 1 - got++] = reinterpret_cast<void *>(
                    r->base + static_cast<uintptr_t>(reg) * info.region_size);
                left--;
            }
            r->bitmap.words[w] = bits;
            if (bits == 0 && left != 0)
                w++;
        }
        r->hint = static_cast<uint16_t>(w);
        r->nfree = static_cast<uint16_t>(r->nfree - take);
        AA_ASSERT(r->bitmap.count_free() == r->nfree);
        bin.nmalloc += take;
        a->stats.allocated_small += static_cast<uint64_t>(take) * info.region_size;
    }
    trim_empty_runs_locked(a, drained);
    if (got != 0 && got < n) {
        for (unsigned i = 0; i < got; i++)
            out[i] = out[n - got + i];
    }
    return got;
}

unsigned arena_flush_small(Arena *a, unsigned bin, void **ptrs, unsigned n) {
    MutexGuard guard(a->mutex);
    arena_drain_remote_locked(a);
    a->bins[bin].nflushes++;
    return release_regions_locked(a, bin, ptrs, n, false);
}

namespace {

// Batches nobody holds: a lock-free stack.  Only whole-list operations
// are used (push a list, take the whole stack), so no pop can be fooled
// by a batch that left and came back (ABA).
std::atomic<RemoteBatch *> g_remote_batch_pool{nullptr};

}  // namespace

RemoteBatch *remote_batch_get(RemoteBatch **spare) {
    RemoteBatch *b = *spare;
    if (b == nullptr && g_remote_batch_pool.load(std::memory_order_relaxed) != nullptr)
        b = g_remote_batch_pool.exchange(nullptr, std::memory_order_acquire);
    if (b == nullptr)
        return static_cast<RemoteBatch *>(base_alloc(sizeof(RemoteBatch)));
    *spare = b->next;
    return b;
}

void remote_batch_put(RemoteBatch *first, RemoteBatch *last) {
    RemoteBatch *head = g_remote_batch_pool.load(std::memory_order_relaxed);
    do {
        last->next = head;
    } while (!g_remote_batch_pool.compare_exchange_weak(head, first, std::memory_order_release,
                                                        std::memory_order_relaxed));
}

unsigned arena_push_remote(Arena *a, unsigned bin, void **ptrs, unsigned n, RemoteBatch *batch) {
    AA_ASSERT(bin < kNumBins);
    unsigned kept = 0;
    unsigned count = 0;
    for (unsigned i = 0; i < n; i++) {
        void *p = ptrs[i];
        if (count == kRemoteBatchRegions || chunk_containing(p)->arena != a)
            ptrs[kept++] = p;  // the caller's next pass
        else
            batch->regions[count++] = p;
    }
    batch->count = count;
    std::atomic<RemoteBatch *> &head = a->remote.chains[bin];
    RemoteBatch *old = head.load(std::memory_order_relaxed);
    // Sequentially consistent, like the drain's exchanges (pending, then
    // the chains): a push that the drain's exchange of the chain missed
    // then sees the bit cleared and sets it again.
    do {
        batch->next = old;
    } while (!head.compare_exchange_weak(old, batch, std::memory_order_seq_cst,
                                         std::memory_order_relaxed));
    if ((a->remote.pending.load(std::memory_order_seq_cst) & (uint64_t{1} << bin)) == 0)
        a->remote.pending.fetch_or(uint64_t{1} << bin, std::memory_order_seq_cst);
    return kept;
}


void arena_drain_remote_locked(Arena *a) { drain_remote_locked(a, false); }

void arena_drain_remote(Arena *a) {
    // Not even the lock when there is nothing to return (a cache's GC
    // visit calls this for every thread, often at the same time).
    if (a->remote.pending.load(std::memory_order_relaxed) == 0)
        return;
    MutexGuard guard(a->mutex);
    arena_drain_remote_locked(a);
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

namespace {

// Large runs above the thread caches' classes come from arena 0 for every
// thread (the shared_large option, on by default): kept apart from the
// small runs of the other arenas, whose chunks they would otherwise split
// (arena 0 still serves the small requests of its own threads), and
// pooled, so a page one thread frees is the next page any thread's large
// request takes.
// (entry-cache, 2 CPUs, 15 paired rounds: peak resident size after a scan
// 362 -> 330 MiB with 4 threads, 297 -> 280 MiB with 1, and no slower; in
// the 4-thread run, each thread's arena held 15-30 MiB of dirty pages from
// large blocks that the others could not use.)  Arena 0 is only tried:
// while another thread holds it, the request takes the path below, so
// large requests never queue behind each other; and the watch above turns
// sharing off for a while when the lock is busy.
//
// A large run for a thread of arena a: from a's free pages, else from
// another arena's dirty free pages, else from a's new chunks.  Arenas hand
// pages to each other only this way: a large block lives in the arena of
// its chunk (frees and resizes lock that one), while a small run must
// belong to the arena of its bin.  Without it, pages freed into one arena
// (by another thread, or after its own thread finished) waited there for
// the decay time while the others mapped more (entry-cache with 4 threads:
// peak resident size 392-457 MiB in four runs, with it 331-373).  Only
// dirty pages are taken: clean ones cost a page fault wherever they come
// from, and an arena no thread uses keeps only the minimum of dirty pages,
// so a block lent from its clean pages would be purged and faulted in
// again at every free and malloc.  Other arenas are only tried, never
// waited for.  Returns the run with its arena locked, in *owner, or
// nullptr with none locked.
Run *run_alloc_anywhere(Arena *a, uint32_t npages, uint32_t align_pages, Arena **owner) {
    if (npages > kSharedLargeMinPages && g_options.shared_large && a->index != 0 &&
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
    for (unsigned i = 1; i < g_narenas; i++) {
        Arena *b = arena_peek((a->index + i) % g_narenas);
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

}  // namespace

void *arena_malloc_large(Arena *a, unsigned cls, size_t align, bool zero,
                         const CountDelta *cache_counts) {
    size_t usize = class_to_size(cls);
    uint32_t npages = static_cast<uint32_t>(usize >> kLgPage);
    uint32_t align_pages = static_cast<uint32_t>(align >> kLgPage);
    if (align_pages == 0)
        align_pages = 1;
    Run *r = run_alloc_anywhere(a, npages, align_pages, &a);
    if (r == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
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

namespace {

// Returns validated large run r to the free pages (lock held); the
// request was counted by the caller or its thread cache.
void large_release_locked(Arena *a, Run *r) {
    a->stats.allocated_large -= static_cast<size_t>(r->npages) << kLgPage;
    a->large[r->size_class - kNumBins].ndalloc++;
    a->large[r->size_class - kNumBins].curruns--;
    run_release(a, r);
}

}  // namespace

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

bool arena_region_is_free(Chunk *c, const void *p) {
    AA_ASSERT(chunk_owns(c, p));
    Arena *a = c->arena;
    MutexGuard guard(a->mutex);
    arena_drain_remote_locked(a);
    PageMapEntry e = c->map[chunk_page_index(c, p)];
    if (page_map_tag(e) != kPageSmall)
        return false;
    const Run *r = page_map_run(e);
    uint32_t reg = region_index(r->reciprocal, reinterpret_cast<uintptr_t>(p) - r->base);
    return reg < r->nregs && r->bitmap.is_free(reg);
}

size_t arena_usable_size(Chunk *c, const void *p, const char *fn) {
    AA_ASSERT(chunk_owns(c, p));
    Arena *a = c->arena;
    a->mutex.lock();
    arena_drain_remote_locked(a);
    Run *r = nullptr;
    uint32_t reg = 0;
    const char *finding = validate_locked(c, p, &r, &reg);
    size_t usize = 0;
    if (finding == nullptr) {
        usize = r->state == kPageSmall ? bin_info(r->size_class).region_size
                                        : static_cast<size_t>(r->npages) << kLgPage;
    }
    a->mutex.unlock();
    if (AA_UNLIKELY(finding != nullptr))
        report_invalid_pointer(fn, p, finding);
    return usize;
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
    uint32_t first = run_first_page(r);
    if (new_pages == old_pages) {
        r->size_class = static_cast<uint8_t>(cls);
        return true;
    }
    if (new_pages < old_pages) {
        Run *tail = desc_alloc(a);
        if (tail == nullptr)
            return false;
        tail->chunk = c;
        tail->base = chunk_page_addr(c, first + new_pages);
        tail->npages = old_pages - new_pages;
        r->npages = new_pages;
        move_large_class(a, r, cls);
        a->stats.allocated_large -= static_cast<uint64_t>(tail->npages) << kLgPage;
        run_release(a, tail);
        return true;
    }
    uint32_t after = first + old_pages;
    if (after >= c->npages)
        return false;
    PageMapEntry e = c->map[after];
    if (page_map_tag(e) != kPageFree)
        return false;
    Run *next = page_map_run(e);
    uint32_t extra = new_pages - old_pages;
    if (next->npages < extra)
        return false;
    free_run_remove(a, next);
    uint32_t dirty_taken = count_dirty(next, after, extra);
    note_pages_taken(a, extra, dirty_taken);
    untag_boundary(c, after);
    untag_boundary(c, after + next->npages - 1);
    if (next->npages == extra) {
        desc_free(a, next);
    } else {
        next->base += static_cast<uintptr_t>(extra) << kLgPage;
        next->npages -= extra;
        next->ndirty -= dirty_taken;
        tag_free_boundaries(next);
        free_run_insert(a, next);
    }
    c->nfree_pages -= extra;
    r->npages = new_pages;
    move_large_class(a, r, cls);
    tag_pages(r, kPageLarge);
    a->stats.allocated_large += static_cast<uint64_t>(extra) << kLgPage;
    return true;
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

void arena_prefork(Arena *a) { a->mutex.lock(); }
void arena_postfork_parent(Arena *a) { a->mutex.unlock(); }
void arena_postfork_child(Arena *a) { a->mutex.reinit_in_child(); }

}  // namespace arenalloc
