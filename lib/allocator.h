// allocator.h — malloc semantics (errno, overflow, alignment rules, the
// routing between small, large and huge) as ordinary functions, so that
// api.cc is nothing but thin exports and the rules can be tested apart.
//
// malloc and free of small blocks are inline here: their hit paths are a
// thread-cache pop and push.  On x86-64 malloc's is 22 instructions and
// free's 34, the ownership, region-start and double-free checks included
// (64 per pair with the loop and the calls, 64.2 with the tick a cache
// takes every 512 allocations of a class: tools/bench/callgrind); any
// miss is a call to a slow path in allocator.cc.  malloc of the large
// classes that thread caches hold (16 to 64 KiB) takes the same inline
// path; their free is one call away (free_large): 88 per pair.
#ifndef ARENALLOC_ALLOCATOR_H
#define ARENALLOC_ALLOCATOR_H

#include <cstddef>
#include <cstdint>

#include "chunk.h"
#include "chunk_registry.h"
#include "init.h"
#include "page_map.h"
#include "run.h"
#include "size_classes.h"
#include "tcache.h"
#include "thread_state.h"
#include "util.h"

namespace arenalloc {

// Slow paths of aa_malloc and aa_free.
AA_NOINLINE void *allocate_small_slow(unsigned bin, bool zero);  // calloc's, too
AA_NOINLINE void *allocate_big(size_t size, size_t align, bool zero);
AA_NOINLINE void *malloc_slow(size_t size);
AA_NOINLINE void free_slow(void *ptr);
// free() of what aa_free's inline path did not take (page-map entry e):
// the start of a large run of a cached class goes onto the thread cache,
// anything else to free_slow().
AA_NOINLINE void free_large(void *ptr, PageMapEntry e);

AA_ALWAYS_INLINE void *aa_malloc(size_t size) {
    if (AA_LIKELY(size - 1 < g_fast_limit)) {
        if (size > kLookupMax)  // g_fast_limit never exceeds kLookupMax
            __builtin_unreachable();
        // size - 1 is at hand from the test above: ((size - 1) >> 3) + 1
        // is (size + 7) >> 3, one instruction fewer.
        return tcache_alloc_at_offset(tls_thread_state.tcache, size_t{kSizeClasses.bin_offset_words[((size - 1) >> 3) + 1]});
    }
    return malloc_slow(size);
}

// The entry of ptr's page in the chunk whose registry answer (a
// kRegistryChunk owner) is given.  owner is the chunk's address plus the
// tag: both the page index and the page map are reached from it directly,
// the tag folded into the constants rather than masked off.
AA_ALWAYS_INLINE PageMapEntry page_map_entry_in(uintptr_t owner, const void *ptr) {
    uintptr_t page = (reinterpret_cast<uintptr_t>(ptr) + kRegistryChunk - owner) >> kLgPage;
    const PageMapEntry *map =
        reinterpret_cast<const PageMapEntry *>(owner + (offsetof(Chunk, map) - kRegistryChunk));
    return __atomic_load_n(&map[page], __ATOMIC_RELAXED);
}

// The page-map entry of the arena page that holds ptr, read without the
// arena lock (nothing at ptr is read), or kPageFree when the registry does
// not know ptr as part of an arena chunk.  A kPageSmall entry is the run.
AA_ALWAYS_INLINE PageMapEntry page_map_entry_of(const void *ptr) {
    uintptr_t owner = registry_lookup(ptr);
    if (AA_UNLIKELY((owner & kRegistryChunk) == 0))
        return kPageFree;
    return page_map_entry_in(owner, ptr);
}

// A small region goes onto the thread cache once the registry and the page
// map confirm it is a region start (nothing at ptr is read), and so does a
// block of a cached large class once they confirm it is a large run's start
// (free_large); everything else takes free_slow(), which checks it under
// the arena lock.
AA_ALWAYS_INLINE void aa_free(void *ptr) {
    ThreadState *ts = &tls_thread_state;
    TCache *tc = ts->tcache;
    // The memo spares a thread that frees into one chunk after another
    // the registry's two dependent loads.  The granule and the stamp are
    // compared apart: folded into one word, a pointer past 2^48 could
    // match a memo taken under another stamp.  (The stamp is read before
    // the registry on a miss, so a memo taken while its granule was being
    // removed is stale already.)
    uintptr_t key = reinterpret_cast<uintptr_t>(ptr) >> kLgGranule;
    uint64_t stamp = g_registry_stamp.load(std::memory_order_relaxed);
    uintptr_t owner = ts->free_memo_owner;
    if (AA_UNLIKELY(key != ts->free_memo_key) || AA_UNLIKELY(stamp != ts->free_memo_stamp)) {
        owner = registry_lookup(ptr);
        if (AA_UNLIKELY((owner & kRegistryChunk) == 0))
            return free_large(ptr, kPageFree);
        ts->free_memo_owner = owner;
        ts->free_memo_key = key;
        ts->free_memo_stamp = stamp;
    }
    PageMapEntry e = page_map_entry_in(owner, ptr);
    if (AA_LIKELY(page_map_tag(e) == kPageSmall)) {
        const Run *r = reinterpret_cast<const Run *>(e);
        size_t offset = reinterpret_cast<uintptr_t>(ptr) - r->base;
        if (!kFreeChecks || AA_LIKELY(run_offset_is_region_start(r, offset)))
            return tcache_free_at_offset(tc, size_t{r->bin_offset_words}, ptr);
    }
    free_large(ptr, e);
}

// The out-of-line pieces that mallocx.cc builds the jemalloc-style
// interface from.

enum class BlockKind { kSmall, kLarge, kHuge };

// Where a block for a request of size bytes (1 to kMaxRequest) aligned to
// align (a power of two) comes from.
struct BlockRoute {
    BlockKind kind;
    unsigned cls;  // kSmall and kLarge: the size class
    size_t usize;  // the usable size the block gets
};
BlockRoute route_request(size_t size, size_t align);

// The usable size a block made by allocate_aligned(size, align) has, 0 when
// the request is too big.
size_t request_usable_size(size_t size, size_t align);

// A block as posix_memalign makes it (align at most kMinSize: as malloc
// does), zeroed when asked, through the thread cache where its class is
// cached; nullptr with errno ENOMEM.
void *allocate_aligned(size_t size, size_t align, bool zero);

// Usable size of a live block, or 0 after reporting a bad pointer on
// behalf of fn (a block waiting in a thread cache included).
size_t block_usable_size(const void *ptr, const char *fn);

// Frees straight to the block's arena (or its huge mapping), past the
// thread cache; bad pointers are reported on behalf of fn.
void deallocate(void *ptr, const char *fn);

// Resizes the live block ptr (usable size old_usize) to size bytes
// without moving it; false when that cannot be done.
bool resize_in_place(void *ptr, size_t old_usize, size_t size);

// The live block ptr (usable size old_usize), when it is huge and size
// is bigger, grown by moving its pages to a new range without a copy; the
// new address, or nullptr.
void *grow_huge_by_moving(void *ptr, size_t old_usize, size_t size);

// The end of a public call that returns a block (result): with X a
// failure aborts, with U the call is traced.
void *finish_call(const char *fn, const void *arg, size_t size, void *result);

// NULL with errno ENOMEM: every failed request ends here.
void *fail_enomem();

// Adds a block made outside the thread cache to the thread's byte count
// (thread.allocated); p itself.
void *counted(void *p, size_t usize);

// free_sized's check: whether ptr's block is the one size (aligned to
// align) gives; a mismatch or a bad pointer is reported on behalf of fn.
bool sized_free_matches(void *ptr, size_t align, size_t size, const char *fn);

void *aa_calloc(size_t n, size_t size);
void *aa_realloc(void *ptr, size_t size);
void *aa_reallocarray(void *ptr, size_t n, size_t size);
// FreeBSD's reallocf: realloc that frees ptr when it runs out of memory.
void *aa_reallocf(void *ptr, size_t size);
int aa_posix_memalign(void **out, size_t align, size_t size);
void *aa_aligned_alloc(size_t align, size_t size);
void *aa_memalign(size_t align, size_t size);
void *aa_valloc(size_t size);
void *aa_pvalloc(size_t size);
size_t aa_usable_size(const void *ptr, const char *fn = "malloc_usable_size");

// C23's free_sized (align 1) and free_aligned_sized: the block's size class
// must be the one size (aligned to align) gives; a mismatch is reported
// like a bad pointer, and the block is then left alone.
void aa_free_sized(void *ptr, size_t align, size_t size, const char *fn);

// Returns the calling thread's cache to the arenas, purges every dirty
// page and unmaps every empty chunk; the bytes given back.
size_t aa_purge();

}  // namespace arenalloc

#endif
