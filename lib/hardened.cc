// hardened.cc — the S option's canaries, quarantine and guard pages (see
// hardened.h); the junk check at reuse is the arena's (arena.cc).
#include "hardened.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "allocator.h"
#include "arena.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "hardened_inaccessible.h"
#include "huge.h"
#include "page_map.h"
#include "platform.h"
#include "report.h"
#include "run.h"
#include "size_classes.h"
#include "tcache.h"
#include "thread_state.h"

namespace arenalloc {

uintptr_t g_hardened_key;

void hardened_configure() {
    g_hardened_key = static_cast<uintptr_t>(platform_random_seed()) | 1;
}

namespace {

// Past this, n + a page of guard could overflow; such requests fail anyway.
constexpr size_t kMaxRequest = PTRDIFF_MAX - 2 * kPage;

// A hash of the block's address under the process's random key, so that neither the stored size nor
// the canary byte can be predicted, or copied from another block.
uint64_t block_hash(const void *p) {
    uint64_t x = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)) ^
                 (static_cast<uint64_t>(g_hardened_key) * 0x9e3779b97f4a7c15ull);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 32;
    return x;
}

// Odd, so never NUL (a string's terminator written one byte too far) and
// never the junk byte.
unsigned char canary_byte(uint64_t hash) {
    return static_cast<unsigned char>(hash >> 56) | 1;
}

// The canary bytes of a block of n requested bytes whose trailer starts
// at trailer: those right after it, where an overflow lands first (a copy
// or a string running on), at most kCanaryBytes so that free() checks them
// at the cost of a word, not of the class's whole slack.
size_t canary_length(size_t n, size_t trailer) {
    return trailer - n < kCanaryBytes ? trailer - n : kCanaryBytes;
}

// The region size of the small block at p, or 0 when p is not in a small
// run.  Reads the page map without the lock: p is live and the caller's.
size_t small_region_size(const void *p) {
    PageMapEntry e = page_map_entry_of(p);
    return page_map_tag(e) == kPageSmall ? page_map_run(e)->region_size : 0;
}

// Writes the canary bytes and the size trailer of a new small block of n
// requested bytes in a region of region bytes.  The canary is most often
// a whole word: one store.
AA_ALWAYS_INLINE void arm_canary(void *p, size_t n, size_t region) {
    uint64_t h = block_hash(p);
    unsigned char *b = static_cast<unsigned char *>(p);
    size_t trailer = region - kHardenedTrailer;
    size_t canary = canary_length(n, trailer);
    if (AA_LIKELY(canary == kCanaryBytes)) {
        uint64_t word = 0x0101010101010101ull * canary_byte(h);
        memcpy(b + n, &word, sizeof(word));
    } else {
        memset(b + n, canary_byte(h), canary);
    }
    uint32_t t = static_cast<uint32_t>(h) ^ static_cast<uint32_t>(n);
    memcpy(b + trailer, &t, sizeof(t));
}

// Whether the canary of a block of n requested bytes (trailer as above)
// is intact.
AA_ALWAYS_INLINE bool canary_intact(const unsigned char *b, size_t n, size_t trailer, uint64_t h) {
    size_t canary = canary_length(n, trailer);
    if (AA_LIKELY(canary == kCanaryBytes)) {
        uint64_t word;
        memcpy(&word, b + n, sizeof(word));
        return word == 0x0101010101010101ull * canary_byte(h);
    }
    return first_byte_not(b + n, canary, canary_byte(h)) == canary;
}

// Whether p waits in the calling thread's quarantine.
AA_NOINLINE bool in_own_quarantine(const void *p) {
    const Quarantine *q = tls_thread_state.tcache->quarantine;  // the placeholder's is null
    if (q == nullptr)
        return false;
    for (uint32_t i = 0; i < q->count; i++)
        if (q->slot[(q->next + i) % kQuarantineSlots] == p)
            return true;
    return false;
}

// The requested size of the live small block p, after checking its
// trailer and canary; a finding is reported on behalf of fn (0 returned).
AA_ALWAYS_INLINE size_t checked_size(const void *p, size_t region, const char *fn) {
    uint64_t h = block_hash(p);
    const unsigned char *b = static_cast<const unsigned char *>(p);
    size_t trailer = region - kHardenedTrailer;
    uint32_t t;
    memcpy(&t, b + trailer, sizeof(t));
    size_t n = t ^ static_cast<uint32_t>(h);
    if (AA_UNLIKELY(n == 0 || n > trailer - 1)) {
        // A free region is junk throughout, whether it waits in a
        // quarantine, on a cache's stack or in its run: freed already.
        if (in_own_quarantine(p)) {
            report_invalid_pointer(fn, p, "block already free (in the quarantine)");
            return 0;
        }
        if (region_junk_changed_at(b, region) == region) {
            report_invalid_pointer(fn, p, "block already free");
            return 0;
        }
        report_overflow(fn, p, 0, false, region);
    }
    if (AA_UNLIKELY(!canary_intact(b, n, trailer, h)))
        report_overflow(fn, p, n, true, region);
    return n;
}

// The calling thread's cache, made on first use; nullptr when it can have
// none (it is exiting, or no memory).
TCache *own_cache() {
    TCache *tc = tls_thread_state.tcache;
    return AA_LIKELY(tc != &g_tcache_none) ? tc : thread_tcache_slow();
}

// quarantine_put() for every case but the steady state.
AA_NOINLINE void quarantine_put_slow(unsigned bin, void *p, size_t region, const char *fn) {
    TCache *tc = own_cache();
    if (AA_UNLIKELY(tc == nullptr || tc->quarantine == nullptr)) {
        tls_thread_state.deallocated_uncached += arena_free(chunk_containing(p), p, fn);
        return;
    }
    Quarantine *q = tc->quarantine;
    while (q->count != 0 && (q->count == kQuarantineSlots || q->bytes + region > kQuarantineBytes)) {
        void *out = q->slot[q->next];
        unsigned out_bin = q->bin[q->next];
        q->bytes -= class_to_size(out_bin);
        q->next = (q->next + 1) % kQuarantineSlots;
        q->count--;
        tcache_put_unmarked(tc, out_bin, out);
    }
    uint32_t tail = (q->next + q->count) % kQuarantineSlots;
    q->slot[tail] = p;
    q->bin[tail] = static_cast<uint8_t>(bin);
    q->count++;
    q->bytes += region;
}

// Puts the freed small region p (class bin, checked and junk-filled) in
// the calling thread's quarantine; the regions that leave it (the oldest,
// over the count or the byte bound) go onto the thread's cache.  A thread
// without a cache frees it to its arena at once.  Inline, the steady
// state: a full ring whose oldest leaves for a stack with room.
AA_ALWAYS_INLINE void quarantine_put(unsigned bin, void *p, size_t region, const char *fn) {
    TCache *tc = tls_thread_state.tcache;
    Quarantine *q = tc->quarantine;  // the placeholder's is null
    if (AA_LIKELY(q != nullptr) && AA_LIKELY(q->count == kQuarantineSlots)) {
        uint32_t i = q->next;
        void *out = q->slot[i];
        unsigned out_bin = q->bin[i];
        size_t bytes = q->bytes - class_to_size(out_bin) + region;
        TCacheBin *b = &tc->bins[out_bin];
        if (AA_LIKELY(bytes <= kQuarantineBytes) && AA_LIKELY(b->count() < g_tcache_slots[out_bin])) {
            q->slot[i] = p;
            q->bin[i] = static_cast<uint8_t>(bin);
            q->bytes = bytes;
            q->next = (i + 1) % kQuarantineSlots;
            *b->top++ = out;
            return;
        }
    }
    quarantine_put_slow(bin, p, region, fn);
}

// A free region of small class bin for malloc, checked to be junk
// throughout (a write after free is reported); nullptr with errno ENOMEM.
// From the thread's cache: a pop like the inline one, but the region's
// first word is left as it is, for the check.
// take_region() when the stack is empty, a tick is due, or the thread has
// no cache.
AA_NOINLINE void *take_region_slow(unsigned bin) {
    TCache *tc = own_cache();
    void *p;
    if (AA_UNLIKELY(tc == nullptr)) {
        Arena *a = thread_arena();
        p = a != nullptr ? arena_malloc_small(a, bin, false) : nullptr;  // checks the junk
        if (p == nullptr) {
            errno = ENOMEM;
            return nullptr;
        }
        tls_thread_state.allocated_uncached += class_to_size(bin);
        return p;
    }
    p = tcache_alloc_slow(tc, &tc->bins[bin]);  // fills, or ticks the cache
    if (p != nullptr)
        region_check_junk(p, class_to_size(bin));
    return p;
}

AA_ALWAYS_INLINE void *take_region(unsigned bin) {
    TCacheBin *b = &tls_thread_state.tcache->bins[bin];  // the placeholder's are empty
    if (AA_UNLIKELY(b->top == b->stack) || AA_UNLIKELY(b->tick_left <= 0))
        return take_region_slow(bin);
    b->tick_left--;  // counts the request (tcache_bin_nmalloc)
    void *p = *--b->top;
    size_t region = class_to_size(bin);
    if (AA_UNLIKELY(!region_junk_intact(p, region)))
        region_check_junk(p, region);  // reports
    return p;
}

// The full usable size of the large or huge block p just made, or 0.
size_t big_block_size(void *p) {
    uintptr_t owner = registry_lookup(p);
    if (owner & kRegistryChunk) {
        Chunk *c = reinterpret_cast<Chunk *>(owner & ~kRegistryTagMask);
        PageMapEntry e = __atomic_load_n(&c->map[chunk_page_index(c, p)], __ATOMIC_RELAXED);
        if (page_map_tag(e) != kPageLarge)
            return 0;
        return static_cast<size_t>(page_map_run(e)->npages) << kLgPage;
    }
    if (owner & kRegistryHuge)
        return huge_usable_size(reinterpret_cast<Huge *>(owner & ~kRegistryTagMask), p, "malloc");
    return 0;
}

void set_guard(void *p, size_t usize, bool on) {
    // When the kernel refuses (no mapping entries left) the block simply
    // has no guard; its usable size is the same either way.
    (void)pages_protect(static_cast<char *>(p) + usize - kPage, kPage, !on);
}

}  // namespace

HardenedRequest hardened_request(size_t size, size_t align) {
    size_t n = size == 0 ? 1 : size;
    if (n > kMaxRequest)
        return {0, align, false};
    size_t need = n + kHardenedSlack;
    bool small = align <= kMinSize ? need <= kSmallMax
                                   : align <= kPage && align_up(need, align) <= kSmallMax;
    if (small)
        return {need, align, true};
    return {align_up(n, kPage) + kPage, align < kPage ? kPage : align, false};
}

namespace {

// A small block of n requested bytes (n >= 1) from class bin, with its canary.
AA_ALWAYS_INLINE void *small_block(unsigned bin, size_t n, bool zero) {
    void *p = take_region(bin);
    if (p != nullptr) {
        if (zero)
            memset(p, 0, n);
        arm_canary(p, n, class_to_size(bin));
    }
    return p;
}

}  // namespace

void *hardened_allocate(size_t size, size_t align, bool zero) {
    // malloc's case first, as hardened_request() would decide it.
    if (AA_LIKELY(align <= kMinSize && size - 1 < kSmallMax - kHardenedSlack))
        return small_block(size_to_class(size + kHardenedSlack), size, zero);
    // Zero-size blocks are inaccessible (hardened_inaccessible.h); when
    // none is left, an ordinary one-byte block.
    if (size == 0 && align <= kMinSize) {
        if (void *p = zero_block_allocate())
            return p;
    }
    size_t n = size == 0 ? 1 : size;
    HardenedRequest r = hardened_request(size, align);
    if (r.size == 0) {
        errno = ENOMEM;
        return nullptr;
    }
    if (r.small) {
        // Every class is aligned to the largest power of two dividing it,
        // so the class of the size rounded up to the alignment will do.
        return small_block(size_to_class(r.align <= kMinSize ? r.size : align_up(r.size, r.align)),
                           n, zero);
    }
    void *p = allocate_big(r.size, r.align, zero);
    if (p != nullptr) {
        size_t usize = big_block_size(p);
        if (usize > kPage)
            set_guard(p, usize, true);
    }
    return p;
}

bool hardened_free(void *ptr, const char *fn) {
    uintptr_t owner = registry_lookup(ptr);
    if (owner & kRegistryChunk) {
        // A live small region, the common case, is recognised without the
        // arena lock, as the inline free does (the caller owns it: nothing
        // read here changes under it).
        PageMapEntry e = page_map_entry_in(owner, ptr);
        uint32_t reg;
        if (AA_LIKELY(page_map_tag(e) == kPageSmall) &&
            AA_LIKELY(run_region_at(page_map_run(e), reinterpret_cast<uintptr_t>(ptr) -
                                                         page_map_run(e)->base,
                                    &reg) == RegionAt::kLive)) {
            hardened_free_region(ptr, page_map_run(e)->size_class, fn);
            return true;
        }
        // Anything else is looked at under the lock, which reports what
        // is wrong.
        Chunk *c = reinterpret_cast<Chunk *>(owner & ~kRegistryTagMask);
        size_t usize = arena_usable_size(c, ptr, fn);
        if (usize == 0)
            return true;  // reported
        // Small or big by the page map, not by the size: a big block
        // (posix_memalign(2 MiB, 1)) may be no bigger than a small one.
        if (small_region_size(ptr) == 0) {
            big_quarantine_put(ptr, usize, fn);
            return true;
        }
        hardened_free_region(ptr, size_to_class(usize), fn);
        return true;
    }
    if (owner & kRegistryHuge) {
        size_t usize = huge_usable_size(reinterpret_cast<Huge *>(owner & ~kRegistryTagMask), ptr, fn);
        if (usize != 0)
            big_quarantine_put(ptr, usize, fn);
        return true;
    }
    if (zero_block_range_holds(ptr)) {
        zero_block_free(ptr, fn);
        return true;
    }
    return false;  // not ours: the caller reports it
}

void hardened_free_region(void *ptr, unsigned bin, const char *fn) {
    size_t region = class_to_size(bin);
    if (checked_size(ptr, region, fn) == 0)
        return;  // reported
    region_fill_junk(ptr, region);
    quarantine_put(bin, ptr, region, fn);
}

void *hardened_resize(void *ptr, size_t full, size_t size) {
    size_t n = size == 0 ? 1 : size;
    PageMapEntry e = page_map_entry_of(ptr);
    if (page_map_tag(e) == kPageSmall) {
        // The same class: only the canary and the trailer move.
        if (n > kSmallMax - kHardenedSlack || size_to_class(n + kHardenedSlack) != size_to_class(full))
            return nullptr;
        arm_canary(ptr, n, full);
        return ptr;
    }
    // A large or huge block: the guard page is its last.  What fits the
    // block as it is, without leaving more than half of it unused, stays.
    size_t usable = full - kPage;
    if (n <= usable && n > usable / 2)
        return ptr;
    if (n > kMaxRequest)
        return nullptr;
    // Otherwise the block is resized as realloc resizes it without S, the
    // guard page made accessible first (it may end up inside the block,
    // or be handed back) and set again at the new end.
    set_guard(ptr, full, false);
    size_t want = align_up(n, kPage) + kPage;
    void *p = nullptr;
    if (want > kSmallMax && resize_in_place(ptr, full, want))
        p = ptr;
    else
        p = grow_huge_by_moving(ptr, full, want);
    if (p == nullptr) {
        set_guard(ptr, full, true);
        return nullptr;
    }
    size_t now = big_block_size(p);
    if (now > kPage)
        set_guard(p, now, true);
    return p;
}

size_t hardened_usable_size(const void *ptr, size_t usize, const char *fn) {
    // By where the block lives, as in hardened_free.
    if (zero_block_range_holds(ptr))
        return 0;
    if (small_region_size(ptr) != 0)
        return checked_size(ptr, usize, fn);
    return usize - kPage;
}

}  // namespace arenalloc
