// arena_run.cc — pages of an arena: run descriptors, the free runs' size
// buckets and dirty list, page-map tagging, chunks, and cutting runs from
// free pages and coalescing them back.
#include <stdint.h>
#include <string.h>

#include "arena_internal.h"
#include "base.h"
#include "debug_assert.h"
#include "platform.h"

namespace arenalloc {

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

namespace {

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

}  // namespace

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

namespace {

// One boundary page of free run r, when the other already names it.
void tag_free_boundary(Run *r, uint32_t page) {
    PageMapEntry *map = r->chunk->map;
    map[page] = page_map_entry(r, kPageFree) | (map[page] & kPageDirty);
}

}  // namespace

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

namespace {

void dirty_list_append(Arena *a, Run *r) {
    r->dirty_next = nullptr;
    r->dirty_prev = a->dirty_last;
    if (a->dirty_last != nullptr)
        a->dirty_last->dirty_next = r;
    else
        a->dirty_first = r;
    a->dirty_last = r;
}

}  // namespace

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

namespace {

// npages free pages, dirty_taken of them dirty, become active.  The clean
// ones will be faulted in: maybe_purge's guard against thrashing counts them.
void note_pages_taken(Arena *a, uint32_t npages, uint32_t dirty_taken) {
    note_dirty_dropped(a, dirty_taken);
    a->nclean_taken += npages - dirty_taken;
    a->nactive += npages;
    if (a->nactive > a->nactive_peak)
        a->nactive_peak = a->nactive;
}

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

}  // namespace

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

namespace {

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

// The first free run of at least need pages: in need's floor bucket, which
// may hold shorter runs too, or the first one in a bucket above.
Run *find_free_fit(Arena *a, uint32_t need) {
    unsigned b = free_bucket(need);
    for (Run *r = a->free_buckets[b]; r != nullptr; r = r->next) {
        if (r->npages >= need)
            return r;
    }
    unsigned nb = bucket_next(a, b + 1);
    return nb < kNumClasses ? a->free_buckets[nb] : nullptr;
}

// The common cut, npages from the front of longer free run found: the rest
// stays free under found's descriptor, keeping its place on the dirty list
// (its pages' age) and, unless its size bucket changes, its bucket; the
// taken pages get descriptor result.
Run *cut_front(Arena *a, Run *found, uint32_t npages, Run *result) {
    Chunk *c = found->chunk;
    uint32_t first = run_first_page(found);
    uint32_t total = found->npages;
    uint32_t trail = total - npages;
    uint32_t dirty_taken = count_dirty(found, first, npages);
    note_pages_taken(a, npages, dirty_taken);
    // (At the head of its bucket, as a reinserted run would be: the next
    // cut of that size comes from it.)
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
    result->chunk = c;
    result->base = chunk_page_addr(c, first);
    result->npages = npages;
    result->ndirty = 0;
    result->zeroed = dirty_taken == 0 ? found->zeroed : 0;
    c->nfree_pages -= npages;
    return result;
}

// Any other cut: npages after lead pages of free run found, the whole run
// when neither a lead nor a trail is left.  The lead keeps found's
// descriptor, the trail gets spare2, the taken pages spare1 (or found's
// descriptor when there is no lead); an unused spare is freed.
Run *cut_around(Arena *a, Run *found, uint32_t lead, uint32_t npages, Run *spare1,
                Run *spare2) {
    Chunk *c = found->chunk;
    uint32_t first = run_first_page(found);
    uint32_t total = found->npages;
    uint32_t trail = total - lead - npages;
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

}  // namespace

Run *run_alloc(Arena *a, uint32_t npages, uint32_t align_pages, RunSource from) {
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
    if (found == nullptr) {
        found = find_free_fit(a, need);
        if (found == nullptr && from == RunSource::kAnyOrGrow && arena_grow(a))
            found = find_free_fit(a, need);
    }
    if (found == nullptr) {
        desc_free(a, spare1);
        return nullptr;
    }

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
    if (spare2 == nullptr)
        return cut_front(a, found, npages, spare1);
    return cut_around(a, found, lead, npages, spare1, spare2);
}

bool run_extend(Arena *a, Run *r, uint32_t extra) {
    Chunk *c = r->chunk;
    uint32_t after = run_first_page(r) + r->npages;
    if (after >= c->npages)
        return false;
    PageMapEntry e = c->map[after];
    if (page_map_tag(e) != kPageFree)
        return false;
    Run *next = page_map_run(e);
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
    r->npages += extra;
    return true;
}

bool run_trim_tail(Arena *a, Run *r, uint32_t npages) {
    Run *tail = desc_alloc(a);
    if (tail == nullptr)
        return false;
    tail->chunk = r->chunk;
    tail->base = chunk_page_addr(r->chunk, run_first_page(r) + npages);
    tail->npages = r->npages - npages;
    r->npages = npages;
    run_release(a, tail);
    return true;
}

namespace {

// A free run that took in the pages released after it, as it was before:
// where it stood on its lists.
struct GrownRun {
    Run *run;           // nullptr: no free run before
    unsigned bucket;    // its size bucket
    bool was_dirty;     // it was on the dirty list
    bool was_one_page;  // its first page was its last: untagged since
};

// A free run just before released run r takes r's pages in (releases in
// address order, as when a program frees what it allocated in turn,
// always find one): it stays on its lists, and moves only where it must
// (place_grown_run).  Returns the run that now holds r's pages.
Run *merge_into_previous(Arena *a, Run *r, GrownRun *grown) {
    Chunk *c = r->chunk;
    uint32_t first = run_first_page(r);
    if (first <= c->header_pages)
        return r;
    PageMapEntry e = c->map[first - 1];
    if (page_map_tag(e) != kPageFree)
        return r;
    Run *prev = page_map_run(e);
    AA_ASSERT(prev->state == kPageFree && run_map_agrees(prev));
    grown->run = prev;
    grown->bucket = free_bucket(prev->npages);
    grown->was_dirty = prev->ndirty != 0;
    grown->was_one_page = prev->npages == 1;
    untag_boundary(c, first - 1);
    prev->npages += r->npages;
    prev->ndirty += r->ndirty;
    if (r->ndirty != 0)
        prev->dirty_since = r->dirty_since;
    prev->zeroed = 0;
    desc_free(a, r);
    return prev;
}

// A free run just after run r (being released) joins it.
void merge_next(Arena *a, Run *r) {
    Chunk *c = r->chunk;
    uint32_t after = run_first_page(r) + r->npages;
    if (after >= c->npages)
        return;
    PageMapEntry e = c->map[after];
    if (page_map_tag(e) != kPageFree)
        return;
    Run *next = page_map_run(e);
    free_run_remove(a, next);
    untag_boundary(c, after);
    if (r->ndirty == 0)
        r->dirty_since = next->dirty_since;  // only its pages are dirty
    r->npages += next->npages;
    r->ndirty += next->ndirty;
    desc_free(a, next);
}

// Puts a grown free run where it belongs now: its pages are the newest
// dirty ones, so its place is the back of the dirty list (clean pages
// leave its age and place as they were); it leaves its bucket only for
// another one.  False when it covers its chunk now: it is then off both
// lists, for the empty-chunk path.
bool place_grown_run(Arena *a, const GrownRun &g, bool dirty) {
    Run *r = g.run;
    bool whole = r->npages == chunk_usable_pages();
    bool rebucket = whole || free_bucket(r->npages) != g.bucket ||
                    a->free_buckets[g.bucket] != r;
    bool stays = g.was_dirty && (a->dirty_last == r || !dirty);
    if (rebucket)
        bucket_remove_from(a, r, g.bucket);
    if (g.was_dirty && (whole || !stays))
        dirty_list_remove(a, r);
    if (whole)
        return false;
    if (g.was_one_page)
        tag_free_boundaries(r);
    else
        tag_free_boundary(r, run_first_page(r) + r->npages - 1);  // its first page names it already
    if (rebucket)
        bucket_insert(a, r);
    if (!stays && r->ndirty != 0)
        dirty_list_append(a, r);
    AA_ASSERT(run_map_agrees(r));
    return true;
}

}  // namespace

// An empty chunk is kept (up to kRetainedChunks per arena, its pages
// purged by the usual rules) or unmapped.
void run_release(Arena *a, Run *r, bool dirty) {
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

    GrownRun grown = {};
    r = merge_into_previous(a, r, &grown);
    merge_next(a, r);
    if (grown.run != nullptr && place_grown_run(a, grown, dirty)) {
        maybe_purge(a, now);
        return;
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

}  // namespace arenalloc
