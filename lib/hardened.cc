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

// The region size of the small block at p, or 0 when p is not in a small
// run.  Reads the page map without the lock: p is live and the caller's.
size_t small_region_size(const void *p) {
    uintptr_t owner = registry_lookup(p);
    if ((owner & kRegistryChunk) == 0)
        return 0;
    Chunk *c = reinterpret_cast<Chunk *>(owner & ~kRegistryTagMask);
    PageMapEntry e = __atomic_load_n(&c->map[chunk_page_index(c, p)], __ATOMIC_RELAXED);
    return page_map_tag(e) == kPageSmall ? page_map_run(e)->region_size : 0;
}

// Writes the canary bytes and the size trailer of a new small block of n
// requested bytes in a region of region bytes.
void arm_canary(void *p, size_t n, size_t region) {
    uint64_t h = block_hash(p);
    unsigned char *b = static_cast<unsigned char *>(p);
    size_t trailer = region - kHardenedTrailer;
    memset(b + n, canary_byte(h), trailer - n);
    uint32_t t = static_cast<uint32_t>(h) ^ static_cast<uint32_t>(n);
    memcpy(b + trailer, &t, sizeof(t));
}

bool in_quarantine(const void *p) {
    Arena *a = chunk_containing(p)->arena;
    MutexGuard guard(a->mutex);
    const Quarantine &q = a->quarantine;
    for (uint32_t i = 0; i < q.count; i++)
        if (q.slot[(q.next + i) % kQuarantineSlots] == p)
            return true;
    return false;
}

// The requested size of the live small block p, after checking its
// trailer and canary; a finding is reported on behalf of fn (0 returned).
size_t checked_size(const void *p, size_t region, const char *fn) {
    uint64_t h = block_hash(p);
    const unsigned char *b = static_cast<const unsigned char *>(p);
    size_t trailer = region - kHardenedTrailer;
    uint32_t t;
    memcpy(&t, b + trailer, sizeof(t));
    size_t n = t ^ static_cast<uint32_t>(h);
    if (AA_UNLIKELY(n == 0 || n > trailer - 1)) {
        // A block waiting in the quarantine is all junk: freed already.
        if (in_quarantine(p)) {
            report_invalid_pointer(fn, p, "block already free (in the quarantine)");
            return 0;
        }
        report_overflow(fn, p, 0, false, region);
    }
    if (AA_UNLIKELY(first_byte_not(b + n, trailer - n, canary_byte(h)) != trailer - n))
        report_overflow(fn, p, n, true, region);
    return n;
}

// Puts the freed small region p in its arena's quarantine; the regions
// that leave it (the oldest, over the count or the byte bound) go back to
// their runs.
void quarantine_put(Arena *a, void *p, size_t region, const char *fn) {
    void *out[kQuarantineSlots];
    unsigned nout = 0;
    {
        MutexGuard guard(a->mutex);
        Quarantine &q = a->quarantine;
        while (q.count != 0 && (q.count == kQuarantineSlots || q.bytes + region > kQuarantineBytes)) {
            out[nout++] = q.slot[q.next];
            q.bytes -= q.size[q.next];
            q.next = (q.next + 1) % kQuarantineSlots;
            q.count--;
        }
        uint32_t tail = (q.next + q.count) % kQuarantineSlots;
        q.slot[tail] = p;
        q.size[tail] = static_cast<uint32_t>(region);
        q.count++;
        q.bytes += region;
    }
    for (unsigned i = 0; i < nout; i++)
        tls_thread_state.deallocated_uncached += arena_free(chunk_containing(out[i]), out[i], fn);
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

void *hardened_allocate(size_t size, size_t align, bool zero) {
    // Zero-size blocks are inaccessible (hardened_inaccessible.h); when
    // none is left, an ordinary one-byte block.
    if (size == 0 && align <= kMinSize) {
        if (void *p = zero_block_allocate())
            return p;
    }
    HardenedRequest r = hardened_request(size, align);
    if (r.size == 0) {
        errno = ENOMEM;
        return nullptr;
    }
    if (r.small) {
        void *p = r.align <= kMinSize ? allocate_small_slow(size_to_class(r.size), zero)
                                      : allocate_big(r.size, r.align, zero);
        if (p != nullptr)
            arm_canary(p, size == 0 ? 1 : size, small_region_size(p));
        return p;
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
        Chunk *c = reinterpret_cast<Chunk *>(owner & ~kRegistryTagMask);
        size_t usize = arena_usable_size(c, ptr, fn);  // checks ptr first
        if (usize == 0)
            return true;  // reported
        // Small or big by the page map, not by the size: a big block
        // (posix_memalign(2 MiB, 1)) may be no bigger than a small one.
        if (small_region_size(ptr) == 0) {
            big_quarantine_put(ptr, usize, fn);
            return true;
        }
        if (checked_size(ptr, usize, fn) == 0)
            return true;
        memset(ptr, kJunkOnFree, usize);
        quarantine_put(c->arena, ptr, usize, fn);
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

size_t hardened_usable_size(const void *ptr, size_t usize, const char *fn) {
    // By where the block lives, as in hardened_free.
    if (zero_block_range_holds(ptr))
        return 0;
    if (small_region_size(ptr) != 0)
        return checked_size(ptr, usize, fn);
    return usize - kPage;
}

}  // namespace arenalloc
