// allocator.cc — the semantic layer between the C API and the arenas.
#include "allocator.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "config.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "hardened.h"
#include "hardened_inaccessible.h"
#include "huge.h"
#include "init.h"
#include "report.h"
#include "size_classes.h"
#include "stats.h"
#include "tcache.h"
#include "thread_state.h"
#include "trace.h"
#include "options.h"

namespace arenalloc {

namespace {

constexpr size_t kMaxRequest = PTRDIFF_MAX;

// Where the standards leave the choice to the C library, the host's
// contract (configure --with-malloc-contract; arenalloc(3), STANDARDS).  A
// libc's own config.h that does not say gets the BSD one.
#if !defined(ARENALLOC_REALLOC_ZERO_FREES)
#define ARENALLOC_REALLOC_ZERO_FREES 0
#endif
#if !defined(ARENALLOC_MEMALIGN_ROUNDS_UP)
#define ARENALLOC_MEMALIGN_ROUNDS_UP 0
#endif
#if !defined(ARENALLOC_POSIX_MEMALIGN_SETS_ERRNO)
#define ARENALLOC_POSIX_MEMALIGN_SETS_ERRNO 0
#endif
constexpr bool kReallocZeroFrees = ARENALLOC_REALLOC_ZERO_FREES != 0;
constexpr bool kMemalignRoundsUp = ARENALLOC_MEMALIGN_ROUNDS_UP != 0;
constexpr bool kPosixMemalignSetsErrno = ARENALLOC_POSIX_MEMALIGN_SETS_ERRNO != 0;

}  // namespace

AA_NOINLINE void *fail_enomem() {
    errno = ENOMEM;
    return nullptr;
}

void *counted(void *p, size_t usize) {
    if (p != nullptr)
        tls_thread_state.allocated_uncached += usize;
    return p;
}

// The one routing between small, large and huge: allocate_big_once
// follows it, and request_usable_size answers from it what a block would
// measure.
BlockRoute route_request(size_t size, size_t align) {
    if (align <= kPage) {
        // Every class is aligned to the largest power of two dividing it
        // (size_classes_test), so the class of the size rounded up to the
        // alignment will do.
        size_t s = align_up(size, align);
        if (s <= g_chunk.large_max) {
            unsigned cls = size_to_class(s);
            return {cls < kNumBins ? BlockKind::kSmall : BlockKind::kLarge, cls,
                    class_to_size(cls)};
        }
        return {BlockKind::kHuge, 0, align_up(s, kPage)};
    }
    // A large run can be aligned by skipping its leading pages, as long as
    // the worst-case padding still fits a chunk.
    size_t s = size < kSmallMax + 1 ? kSmallMax + 1 : size;
    if (s <= g_chunk.large_max) {
        unsigned cls = size_to_class(s);
        if (class_to_size(cls) + align - kPage <= g_chunk.large_max)
            return {BlockKind::kLarge, cls, class_to_size(cls)};
    }
    return {BlockKind::kHuge, 0, align_up(size, kPage)};
}

namespace {

// Requests above kSmallMax with natural (page) alignment, or any request
// with alignment above what a small class gives.  The thread cache serves
// the classes it holds unless the alignment is above a page (a run
// aligned by skipping pages is not one of its blocks): asked first, as
// the aligned fast paths' misses (a tick due) come here.
void *allocate_big_once(size_t size, size_t align, bool zero) {
    Arena *a = thread_arena();
    if (a == nullptr)
        return fail_enomem();
    if (align <= kPage && align_up(size, align) <= kTcacheLargeMax)
        return allocate_small_slow(size_to_class(align_up(size, align)), zero);
    BlockRoute route = route_request(size, align);
    if (route.kind == BlockKind::kHuge)
        return counted(huge_malloc(a, route.usize, align, zero), route.usize);
    return counted(arena_malloc_large(a, route.cls, align > kPage ? align : kPage, zero),
                   route.usize);
}

// (Under S the big blocks waiting in their quarantine go too: they hold
// address space, which a limit such as RLIMIT_AS counts.)
void reclaim_for_retry() {
    if (g_options.hardened)
        big_quarantine_drain();
    aa_purge();
}

}  // namespace

void (*const g_reclaim_for_retry)() = reclaim_for_retry;

// When the system refuses memory, what this thread's cache, the arenas'
// dirty pages and empty chunks and the cached huge mappings hold goes
// back first, and the request is tried once more.
void *allocate_big(size_t size, size_t align, bool zero) {
    if (size > kMaxRequest)
        return fail_enomem();
    void *p = allocate_big_once(size, align, zero);
    if (AA_UNLIKELY(p == nullptr) && thread_arena() != nullptr) {
        reclaim_for_retry();
        p = allocate_big_once(size, align, zero);
        if (p == nullptr)
            return fail_enomem();
    }
    return p;
}

// Small requests made outside malloc itself (calloc, realloc, aligned),
// and those of the cached large classes: the same cache, out of line,
// zeroing when asked.
void *allocate_small_slow(unsigned bin, bool zero) {
    if (zero && bin >= kNumBins)
        return tcache_calloc_large(tls_thread_state.tcache, bin);
    void *p = tcache_alloc(tls_thread_state.tcache, bin);
    if (p != nullptr && zero)
        memset(p, 0, class_to_size(bin));
    return p;
}

namespace {

AA_ALWAYS_INLINE void *allocate(size_t size, bool zero) {
    if (AA_UNLIKELY(hardened_in_force()))
        return hardened_allocate(size, kMinSize, zero);
    if (AA_LIKELY(size <= kTcacheLargeMax))  // small, or a cached large class
        return allocate_small_slow(size_to_class(size), zero);
    return allocate_big(size, kPage, zero);
}

}  // namespace

void *allocate_aligned(size_t size, size_t align, bool zero) {
    if (align <= kMinSize)
        return allocate(size, zero);
    if (size == 0)
        size = 1;
    if (size > kMaxRequest)
        return fail_enomem();
    if (AA_UNLIKELY(hardened_in_force()))
        return hardened_allocate(size, align, zero);
    return allocate_big(size, align, zero);
}

// Usable size of a live block, or 0 after reporting a bad pointer.
size_t block_usable_size(const void *ptr, const char *fn) {
    uintptr_t owner = registry_lookup(ptr);
    if (owner & kRegistryChunk) {
        Chunk *c = reinterpret_cast<Chunk *>(owner & ~kRegistryTagMask);
        size_t usize = arena_usable_size(c, ptr, fn);
        // Under S a freed big block is live to its arena while it waits,
        // inaccessible, in the quarantine: nothing may read it.
        if (AA_UNLIKELY(g_options.hardened) && usize != 0 && big_quarantine_reports(ptr, fn))
            return 0;
        // A block in a thread cache is free, though its arena counts it as
        // out: the caches are checked too.
        if (usize != 0 && usize <= kTcacheLargeMax &&
            tcache_any_holds(tls_thread_state.tcache, size_to_class(usize), ptr)) {
            report_invalid_pointer(fn, ptr, "block already free (in a thread cache)");
            return 0;
        }
        return usize;
    }
    if (owner & kRegistryHuge) {
        size_t usize = huge_usable_size(reinterpret_cast<Huge *>(owner & ~kRegistryTagMask), ptr, fn);
        if (AA_UNLIKELY(g_options.hardened) && usize != 0 && big_quarantine_reports(ptr, fn))
            return 0;
        return usize;
    }
    ensure_initialized();  // the options say whether the report aborts
    // A zero-size block of S counts as the block a 0-byte request would
    // otherwise get (so that free_sized's check holds); hardened_usable_size
    // says 0.
    if (g_options.hardened && zero_block_range_holds(ptr))
        return zero_block_live(ptr, fn) ? request_usable_size(hardened_request(0, kMinSize).size, kMinSize) : 0;
    report_invalid_pointer(fn, ptr, "not allocated by arenalloc");
    return 0;
}

void deallocate(void *ptr, const char *fn) {
    if (AA_UNLIKELY(g_options.hardened) && hardened_free(ptr, fn))
        return;  // checked and quarantined (hardened.h)
    uintptr_t owner = registry_lookup(ptr);
    if (AA_LIKELY(owner & kRegistryChunk)) {
        tls_thread_state.deallocated_uncached +=
            arena_free(reinterpret_cast<Chunk *>(owner & ~kRegistryTagMask), ptr, fn);
        return;
    }
    if (owner & kRegistryHuge) {
        tls_thread_state.deallocated_uncached +=
            huge_free(reinterpret_cast<Huge *>(owner & ~kRegistryTagMask), ptr, fn);
        return;
    }
    ensure_initialized();  // the options say whether the report aborts
    report_invalid_pointer(fn, ptr, "not allocated by arenalloc");
}

namespace {

void free_hardened_region(void *ptr, unsigned bin) {
    trace_call("free", ptr, 0, nullptr);
    hardened_free_region(ptr, bin, "free");
}

}  // namespace

void (*const g_free_hardened_region)(void *p, unsigned bin) = free_hardened_region;

namespace {

// The bin of ptr when a look without the arena lock finds it a live small
// block: what aa_free checks (a region start of a small run), its bitmap
// bit (not free in the arena) and the free mark (not in a thread cache);
// -1 otherwise, and the caller takes block_usable_size(), which looks
// again under the lock and reports what is wrong.  A block the program
// owns cannot change under this look; one it does not own may be caught
// in the middle of a change, and then either answer leads to the locked
// look or to the outcome a free() of it would have.
AA_ALWAYS_INLINE int live_small_bin(const void *ptr) {
    PageMapEntry e = page_map_entry_of(ptr);
    if (AA_UNLIKELY(page_map_tag(e) != kPageSmall))
        return -1;
    const Run *r = reinterpret_cast<const Run *>(e);
    uint32_t reg = 0;
    if (AA_UNLIKELY(run_region_at(r, reinterpret_cast<uintptr_t>(ptr) - r->base, &reg) !=
                    RegionAt::kLive))
        return -1;
    if (AA_UNLIKELY(*static_cast<const uintptr_t *>(ptr) == kFreeMark))
        return -1;
    return r->size_class;
}

}  // namespace

// Tries to satisfy realloc without moving the block.
bool resize_in_place(void *ptr, size_t old_usize, size_t size) {
    if (old_usize <= kSmallMax)
        return size <= kSmallMax && size_to_class(size) == size_to_class(old_usize);
    uintptr_t owner = registry_lookup(ptr);
    if (owner & kRegistryChunk) {
        if (size <= kSmallMax || size > g_chunk.large_max)
            return false;
        return arena_ralloc_large_in_place(reinterpret_cast<Chunk *>(owner & ~kRegistryTagMask),
                                           ptr, size_to_class(size));
    }
    if (size <= g_chunk.large_max)
        return false;
    return huge_ralloc_in_place(reinterpret_cast<Huge *>(owner & ~kRegistryTagMask), ptr, size);
}

namespace {

// The end of every public function that can fail: with X, abort rather
// than return NULL.
AA_ALWAYS_INLINE void *finish(const char *fn, const void *arg, size_t size, void *result) {
    if (AA_UNLIKELY(result == nullptr) && g_options.xmalloc)
        report_out_of_memory(fn, size);
    if (AA_UNLIKELY(g_options.trace))
        trace_call(fn, arg, size, result);
    return result;
}

// realloc of a live small block (live_small_bin) to another class.  The
// new block comes from the thread cache; the old one goes straight back
// to its run under the arena lock: through the cache, the blocks that
// growing buffers leave behind would be handed out again newest first,
// scattered over many runs, and keep those runs (and their pages) from
// emptying (realloc_grow's small phase: 9 % more resident at its peak).
AA_NOINLINE void *realloc_small_move(void *ptr, unsigned bin, size_t size) {
    void *fresh = allocate(size, false);
    if (fresh != nullptr) {
        size_t old_usize = bin_info(bin).region_size;
        memcpy(fresh, ptr, old_usize < size ? old_usize : size);
        deallocate(ptr, "realloc");
    }
    return finish("realloc", ptr, size, fresh);
}

}  // namespace

void *finish_call(const char *fn, const void *arg, size_t size, void *result) {
    return finish(fn, arg, size, result);
}

// The usable size a block made by allocate_aligned(size, align) has (align
// at most kMinSize: by allocate(size)), following the same routing.
size_t request_usable_size(size_t size, size_t align) {
    if (align <= kMinSize && size <= kSmallMax)
        return class_to_size(size_to_class(size));
    if (align <= kMinSize)
        align = kPage;
    if (size == 0)
        size = 1;
    if (size > kMaxRequest)
        return 0;
    return route_request(size, align).usize;
}

bool sized_free_matches(void *ptr, size_t align, size_t size, const char *fn) {
    if (!ensure_initialized())
        return false;
    // Checked against the page map (or the huge descriptor) before the
    // block is touched; a bad pointer is reported there.
    size_t usize = block_usable_size(ptr, fn);
    if (usize == 0)
        return false;
    // Under S a block is bigger than its request by its canary or guard
    // page: the expected size is that of what hardened_allocate asked for.
    size_t expected = 0;
    if (is_pow2(align) && !g_options.hardened) {
        expected = request_usable_size(size, align);
    } else if (is_pow2(align)) {
        HardenedRequest r = hardened_request(size, align);
        if (r.size != 0)
            expected = request_usable_size(r.size, r.align);
    }
    if (AA_UNLIKELY(usize != expected || (reinterpret_cast<uintptr_t>(ptr) & (align - 1)) != 0)) {
        char buf[128];
        LineBuffer finding(buf, sizeof(buf) - 1);
        if (!is_pow2(align))
            finding.str("alignment ").dec(align).str(" is not a power of two");
        else if (usize != expected)
            finding.str("size ").dec(size).str(" does not match the block (")
                .dec(usize).str(" usable bytes)");
        else
            finding.str("block is not aligned to ").dec(align);
        buf[finding.size()] = '\0';
        report_invalid_pointer(fn, ptr, buf);
        return false;  // with a: ignored, the block leaks
    }
    return true;
}

void aa_free_sized(void *ptr, size_t align, size_t size, const char *fn) {
    if (ptr != nullptr && sized_free_matches(ptr, align, size, fn))
        aa_free(ptr);  // the thread cache takes small blocks, as free() does
}

void *malloc_slow(size_t size) {
    if (!ensure_initialized())
        return fail_enomem();
    if (size == 0 && g_options.malloc0_null) {
        trace_call("malloc", nullptr, 0, nullptr);
        return nullptr;
    }
    return finish("malloc", nullptr, size, allocate(size, false));
}

void *aa_calloc(size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return finish("calloc", nullptr, SIZE_MAX, fail_enomem());
    if (total == 0 && ensure_initialized() && g_options.malloc0_null) {
        trace_call("calloc", nullptr, 0, nullptr);
        return nullptr;
    }
    // Huge blocks are fresh mappings, already zero.
    return finish("calloc", nullptr, total, allocate(total, true));
}

// A huge block that cannot grow where it is moves without a copy.
void *grow_huge_by_moving(void *ptr, size_t old_usize, size_t size) {
    if (old_usize <= g_chunk.large_max || size <= old_usize)
        return nullptr;
    uintptr_t owner = registry_lookup(ptr);
    return huge_ralloc_move(reinterpret_cast<Huge *>(owner & ~kRegistryTagMask), ptr, size);
}

namespace {

AA_NOINLINE void *realloc_slow(void *ptr, size_t size) {
    if (ptr == nullptr)
        return finish("realloc", nullptr, size, allocate(size, false));
    if (size == 0) {
        g_zero_reallocs.fetch_add(1, std::memory_order_relaxed);
        if (g_options.malloc0_null || kReallocZeroFrees) {
            // With V, or where the C library's contract says so (glibc,
            // illumos), realloc(p, 0) frees p and returns NULL: checked first
            // as any realloc is, so that a block waiting in a thread cache
            // is reported rather than freed again under the cache.
            trace_call("realloc", ptr, 0, nullptr);
            if (block_usable_size(ptr, "realloc") != 0)
                deallocate(ptr, "realloc");
            return nullptr;
        }
        size = 1;  // the BSD contract: a minimal block; NULL only means failure
    }
    if (size > kMaxRequest)
        return finish("realloc", ptr, size, fail_enomem());
    // With S, the canary and the guard page follow the new size
    // (hardened.h); a live small region, the common case, is recognised
    // without the arena lock.  A zero-size block is live with 0 bytes.
    bool hardened = g_options.hardened;
    int bin = hardened ? live_small_bin(ptr) : -1;
    size_t old_usize = bin >= 0 ? class_to_size(static_cast<unsigned>(bin))
                                : block_usable_size(ptr, "realloc");
    bool live = old_usize != 0;
    if (AA_UNLIKELY(hardened) && live) {
        size_t full = old_usize;
        old_usize = hardened_usable_size(ptr, full, "realloc");
        live = old_usize != 0 || zero_block_range_holds(ptr);
        if (old_usize != 0) {
            if (void *resized = hardened_resize(ptr, full, size))
                return finish("realloc", ptr, size, resized);
        }
    }
    if (!live)
        return nullptr;  // reported; the bad pointer is left alone
    if (!hardened && resize_in_place(ptr, old_usize, size))
        return finish("realloc", ptr, size, ptr);
    if (!hardened) {
        if (void *moved = grow_huge_by_moving(ptr, old_usize, size))
            return finish("realloc", ptr, size, moved);
    }
    void *fresh = allocate(size, false);
    if (fresh == nullptr)
        return finish("realloc", ptr, size, nullptr);
    memcpy(fresh, ptr, old_usize < size ? old_usize : size);
    deallocate(ptr, "realloc");
    return finish("realloc", ptr, size, fresh);
}

}  // namespace

// A live small block, the common case, is looked up without the arena
// lock; anything else takes realloc_slow(), which checks under the lock.
void *aa_realloc(void *ptr, size_t size) {
    if (AA_LIKELY(ptr != nullptr && size != 0 && !g_options.hardened &&
                  tls_thread_state.tcache != &g_tcache_none)) {
        // The mark check reads the block's first word, seldom cached when
        // a block is grown a little at a time: start the load now, to
        // overlap the page map and run look-ups.
        __builtin_prefetch(ptr);
        int bin = live_small_bin(ptr);
        if (AA_LIKELY(bin >= 0)) {
            if (size <= kSmallMax && size_to_class(size) == static_cast<unsigned>(bin))
                return finish("realloc", ptr, size, ptr);
            return realloc_small_move(ptr, static_cast<unsigned>(bin), size);
        }
    }
    return realloc_slow(ptr, size);
}

void *aa_reallocarray(void *ptr, size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return finish("reallocarray", ptr, SIZE_MAX, fail_enomem());
    return aa_realloc(ptr, total);
}

// realloc(), and when the new block cannot be had (ENOMEM) the old one is
// freed too, so that `p = reallocf(p, n)' never leaks.  A pointer realloc
// refuses as bad is reported there and left alone, not freed.
void *aa_reallocf(void *ptr, size_t size) {
    int saved_errno = errno;
    errno = 0;
    void *p = aa_realloc(ptr, size);
    if (p == nullptr && errno == ENOMEM) {
        if (ptr != nullptr)
            aa_free(ptr);
        errno = ENOMEM;
        return nullptr;
    }
    if (p != nullptr || errno == 0)
        errno = saved_errno;
    return p;
}

// (The free mark is the only thing read at ptr, as for a small block.)
void free_large(void *ptr, PageMapEntry e) {
    // Under S no large block goes onto a cache, and a freed one may be
    // inaccessible (in the quarantine): nothing at ptr is read here.
    if (page_map_tag(e) != kPageLarge || AA_UNLIKELY(g_options.hardened))
        return free_slow(ptr);
    const Run *r = page_map_run(e);
    unsigned cls = r->size_class;
    // (A class below kNumBins would be a run released meanwhile: a racing
    // double free, left to the locked path.)
    if (cls - kNumBins >= kNumTcacheClasses - kNumBins ||
        r->base != reinterpret_cast<uintptr_t>(ptr))
        return free_slow(ptr);
    TCache *tc = tls_thread_state.tcache;
    if (AA_UNLIKELY(tc == &g_tcache_none)) {
        // A thread's first free gets it a cache, as for a small block (a
        // consumer of blocks others allocate); with none to be had (caches
        // off, or the thread exiting) the arena frees the block, unless
        // another thread's cache holds it, which the arena cannot see.
        tc = g_tcache_slots[cls] != 0 ? thread_tcache_slow() : nullptr;
        if (tc == nullptr) {
            if (*static_cast<const uintptr_t *>(ptr) == kFreeMark &&
                tcache_any_holds(&g_tcache_none, cls, ptr))
                return tcache_report_double_free(ptr);
            return free_slow(ptr);
        }
    }
    tcache_free(tc, cls, ptr);
}

void free_slow(void *ptr) {
    if (ptr == nullptr)
        return;
    trace_call("free", ptr, 0, nullptr);
    deallocate(ptr, "free");
}

void (*const g_free_uncached)(void *p) = free_slow;

namespace {

// posix_memalign, aligned_alloc and memalign of a block of a cached class
// (small, or large up to 64 KiB: whole pages) aligned to at most a page,
// served as malloc serves it: the class of the size rounded up to the
// alignment is always aligned to it (size_classes_test), so a
// thread-cache pop will do.  nullptr when the inline paths are shut (an
// option needs every call on the slow path), the request is not cached, or
// the class's stack is empty or its tick due: the caller then takes the
// general path, which fills it and ticks (and leaves errno alone when
// that fails).
AA_ALWAYS_INLINE void *aligned_small_fast(size_t align, size_t size) {
    if (size - 1 >= g_fast_limit || align > kPage)
        return nullptr;
    size_t rounded = align_up(size, align);
    if (rounded - 1 >= g_fast_limit)
        return nullptr;
    return tcache_try_alloc_at_offset(tls_thread_state.tcache, size_t{kSizeClasses.bin_offset_words[(rounded + 7) >> 3]});
}

// The general paths, apart so that the fast ones above need no frame.
AA_NOINLINE int posix_memalign_general(void **out, size_t align, size_t size) {
    int saved_errno = errno;
    void *p = finish("posix_memalign", reinterpret_cast<void *>(align), size,
                     allocate_aligned(size, align, false));
    if (p == nullptr) {
        // POSIX asks only for the return value; glibc sets errno as well,
        // and programs written for it test errno.
        errno = kPosixMemalignSetsErrno ? ENOMEM : saved_errno;
        return ENOMEM;
    }
    *out = p;
    return 0;
}

AA_NOINLINE void *aligned_alloc_general(size_t align, size_t size) {
    return finish("aligned_alloc", reinterpret_cast<void *>(align), size,
                  allocate_aligned(size, align, false));
}

}  // namespace

int aa_posix_memalign(void **out, size_t align, size_t size) {
    if (!is_pow2(align) || align % sizeof(void *) != 0)
        return EINVAL;
    void *fast = aligned_small_fast(align, size);
    if (AA_LIKELY(fast != nullptr)) {
        *out = fast;
        return 0;
    }
    return posix_memalign_general(out, align, size);
}

void *aa_aligned_alloc(size_t align, size_t size) {
    if (!is_pow2(align)) {
        errno = EINVAL;
        return nullptr;
    }
    void *fast = aligned_small_fast(align, size);
    if (AA_LIKELY(fast != nullptr))
        return fast;
    return aligned_alloc_general(align, size);
}

void *aa_memalign(size_t align, size_t size) {
    if (!is_pow2(align)) {
        // glibc takes any alignment, rounded up to a power of two (0 and 1:
        // none); the BSDs and illumos refuse it.
        if (!kMemalignRoundsUp || align > (SIZE_MAX >> 1) + 1) {
            errno = EINVAL;
            return nullptr;
        }
        align = align == 0 ? 1 : size_t{1} << (lg_floor(align) + 1);
    }
    return aa_aligned_alloc(align, size);
}

void *aa_valloc(size_t size) {
    return finish("valloc", nullptr, size, allocate_aligned(size, kPage, false));
}

void *aa_pvalloc(size_t size) {
    size_t rounded = align_up(size == 0 ? 1 : size, kPage);
    if (rounded < size)
        return finish("pvalloc", nullptr, size, fail_enomem());
    return finish("pvalloc", nullptr, size, allocate_aligned(rounded, kPage, false));
}

size_t aa_usable_size(const void *ptr, const char *fn) {
    if (ptr == nullptr)
        return 0;
    size_t usize = block_usable_size(ptr, fn);
    if (AA_UNLIKELY(g_options.hardened) && usize != 0)
        usize = hardened_usable_size(ptr, usize, fn);
    return usize;
}

}  // namespace arenalloc

namespace arenalloc {

size_t aa_purge() {
    if (!ensure_initialized())
        return 0;
    if (tls_thread_state.tcache != &g_tcache_none)
        tcache_flush_all(tls_thread_state.tcache);
    uint64_t pages = 0;
    for (unsigned i = 0; i < g_narenas; i++)
        if (Arena *a = arena_peek(i))
            pages += arena_purge_all(a, true);
    return static_cast<size_t>(pages << kLgPage) + huge_purge_cache();
}

}  // namespace arenalloc
