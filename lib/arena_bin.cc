// arena_bin.cc — bins: small regions cut from runs of one class, one at
// a time or a batch for a thread cache, and their return.
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "arena_internal.h"
#include "debug_assert.h"
#include "options.h"
#include "report.h"
#include "tcache.h"

namespace arenalloc {

namespace {

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
        r->bin_offset_words = static_cast<uint8_t>(4 * bin_index);
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
    bin.nreslabs++;
    return r;
}

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

}  // namespace

// Returns region reg of small run r, validated by the caller (lock held).
void region_release_locked(Arena *a, Run *r, uint32_t reg, bool keep_empty) {
    unsigned bin_index = r->size_class;
    const BinInfo &info = bin_info(bin_index);
    Bin &bin = a->bins[bin_index];
    region_free_locked(a, bin, r, reg, info.nregs, keep_empty);
    bin.ndalloc++;
    a->stats.allocated_small -= info.region_size;
}

namespace {

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

// S: a region handed out again must still hold the junk written when it
// was freed; anything else is a write after free, reported with the first
// byte that changed.
}  // namespace

size_t region_junk_changed_at(const void *p, size_t usize) {
    // The common answer, nothing changed, costs a few loads; a change is
    // then located byte by byte for the report.
    if (region_junk_intact(p, usize))
        return usize;
    if (usize <= kJunkHeadBytes + kJunkTailBytes)
        return first_byte_not(p, usize, kJunkOnFree);
    size_t head = first_byte_not(p, kJunkHeadBytes, kJunkOnFree);
    if (head != kJunkHeadBytes)
        return head;
    size_t tail = usize - kJunkTailBytes;
    size_t changed = first_byte_not(static_cast<const char *>(p) + tail, kJunkTailBytes, kJunkOnFree);
    return changed == kJunkTailBytes ? usize : tail + changed;
}

void region_check_junk(void *p, size_t usize) {
    size_t changed = region_junk_changed_at(p, usize);
    if (AA_UNLIKELY(changed != usize))
        report_write_after_free(p, changed, usize);
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
        region_check_junk(p, bin_info(bin_index).region_size);
    else if (kFreeChecks)
        *static_cast<uintptr_t *>(p) = 0;  // no stale free mark in a live block
    fill_new_block(p, bin_info(bin_index).region_size, zero, false);
    return p;
}

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
        uint32_t reg = 0;
        if (AA_UNLIKELY(run_region_at(r, reinterpret_cast<uintptr_t>(p) - r->base, &reg) !=
                        RegionAt::kLive)) {
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

}  // namespace arenalloc
