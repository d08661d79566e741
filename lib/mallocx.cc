// mallocx.cc — the mallocx family over the allocator's own functions: the
// flag word is decoded once, then the requests take the routing, checks
// and reports of the standard calls (allocator.cc), except that a request
// which names an arena or declines the thread cache is served by the
// arena directly.
#include "mallocx.h"

#include <stdint.h>
#include <string.h>

#include "allocator.h"
#include "arena.h"
#include "hardened.h"
#include "hardened_inaccessible.h"
#include "huge.h"
#include "init.h"
#include "malloc_np.h"
#include "options.h"
#include "size_classes.h"
#include "thread_state.h"
#include "trace.h"
#include "util.h"

namespace arenalloc {

namespace {

// The fields of the flag word (malloc_np.h builds them).
constexpr unsigned kLgAlignMask = 0x3f;
constexpr unsigned kTcacheShift = 8;
constexpr unsigned kTcacheFieldMask = 0xfff;
constexpr unsigned kArenaShift = 20;
static_assert(MALLOCX_LG_ALIGN(kLgAlignMask) == static_cast<int>(kLgAlignMask) &&
                  (MALLOCX_ZERO & static_cast<int>(kLgAlignMask)) == 0,
              "the alignment field is below the zero bit");
static_assert(MALLOCX_TCACHE_NONE == 1 << kTcacheShift && MALLOCX_TCACHE(0) == 2 << kTcacheShift,
              "thread-cache field: 0 the thread's own, 1 none, 2 + n cache n");
static_assert(MALLOCX_ARENA(0) == 1 << kArenaShift && kTcacheShift + 12 == kArenaShift,
              "arena field: 0 the thread's, 1 + n arena n");

struct Flags {
    size_t align;        // a power of two, 1 when none is asked; 0 when too big
    bool zero;
    bool past_cache;     // served by and freed to the arena, not the thread cache
    bool named_arena;
    unsigned arena;      // named_arena: its index
};

Flags decode(int flags) {
    unsigned bits = static_cast<unsigned>(flags);
    unsigned lg = bits & kLgAlignMask;
    unsigned tcache = (bits >> kTcacheShift) & kTcacheFieldMask;
    unsigned arena = bits >> kArenaShift;
    Flags f;
    // An alignment past PTRDIFF_MAX can never be met.
    f.align = lg < sizeof(size_t) * 8 - 1 ? size_t{1} << lg : 0;
    f.zero = (bits & static_cast<unsigned>(MALLOCX_ZERO)) != 0;
    // arenalloc has no tcache.create, so a named cache cannot be one of
    // its caches: like MALLOCX_TCACHE_NONE.  A named arena is served
    // exactly, which a thread cache (filled from the thread's arena)
    // could not do.
    f.named_arena = arena != 0;
    f.arena = arena - 1;
    f.past_cache = tcache != 0 || f.named_arena;
    return f;
}

// Whether a request can be met at all: its size rounded up to pages and
// its alignment's padding within PTRDIFF_MAX (what nallocx answers 0 to).
bool request_fits(size_t size, const Flags &f) {
    size_t padding = (f.align < kPage ? kPage : f.align) - 1;
    return f.align != 0 && size <= static_cast<size_t>(PTRDIFF_MAX) - padding;
}

// A block from arena a itself, following the routing of allocate_aligned
// so that its usable size is the one nallocx answers.
void *allocate_in_arena(Arena *a, size_t size, size_t align, bool zero) {
    BlockRoute route = route_request(size, align <= kMinSize ? 1 : align);
    size_t big_align = align < kPage ? kPage : align;
    switch (route.kind) {
    case BlockKind::kSmall:
        return counted(arena_malloc_small(a, route.cls, zero), route.usize);
    case BlockKind::kLarge:
        return counted(arena_malloc_large_in(a, route.cls, big_align, zero), route.usize);
    case BlockKind::kHuge:
        return counted(huge_malloc(a, route.usize, big_align, zero), route.usize);
    }
    return nullptr;
}

// mallocx's block (size at least 1).  Under S every block takes the
// hardened path (through allocate_aligned), which knows no arena choice.
void *allocate_flagged(size_t size, const Flags &f) {
    if (!ensure_initialized() || !request_fits(size, f))
        return fail_enomem();
    if (!f.past_cache || g_options.hardened)
        return allocate_aligned(size, f.align, f.zero);
    Arena *a = nullptr;
    if (!f.named_arena)
        a = thread_arena();
    else if (f.arena < g_narenas)
        a = arena_get(f.arena);
    if (a == nullptr)
        return fail_enomem();  // an index out of range included
    void *p = allocate_in_arena(a, size, f.align, f.zero);
    if (p == nullptr) {
        // As for any request: what is kept back goes to the system first.
        aa_purge();
        p = allocate_in_arena(a, size, f.align, f.zero);
        if (p == nullptr)
            return fail_enomem();
    }
    return p;
}

// Frees a block already checked as live: past the thread cache when the
// flags say so (and under S, whose checks are deallocate's), else as
// free() does.
void release(void *ptr, const Flags &f, const char *fn) {
    if (f.past_cache || g_options.hardened)
        deallocate(ptr, fn);
    else
        aa_free(ptr);
}

bool is_aligned(const void *ptr, size_t align) {
    return (reinterpret_cast<uintptr_t>(ptr) & (align - 1)) == 0;
}

// The bytes from old_usize to the block's new usable size read as zero
// (MALLOCX_ZERO after a growth in place).
void zero_grown(void *ptr, size_t old_usize, size_t new_usize) {
    if (new_usize > old_usize)
        memset(static_cast<char *>(ptr) + old_usize, 0, new_usize - old_usize);
}

}  // namespace

// jemalloc leaves size 0 undefined; here it is a request for one byte,
// as jemalloc in fact serves it.
void *aa_mallocx(size_t size, int flags) {
    Flags f = decode(flags);
    if (size == 0)
        size = 1;
    return finish_call("mallocx", nullptr, size, allocate_flagged(size, f));
}

void *aa_rallocx(void *ptr, size_t size, int flags) {
    if (ptr == nullptr)
        return aa_mallocx(size, flags);
    Flags f = decode(flags);
    if (size == 0)
        size = 1;
    if (!ensure_initialized())
        return fail_enomem();
    size_t old_usize = block_usable_size(ptr, "rallocx");
    bool hardened = g_options.hardened;
    // Under S the canary and the guard page follow the size: the block
    // always moves, and its contents are what the program was given.
    size_t old_size = hardened && old_usize != 0 ? hardened_usable_size(ptr, old_usize, "rallocx")
                                                 : old_usize;
    // (A zero-size block of S is live with 0 bytes.)
    if (old_size == 0 && !(old_usize != 0 && hardened && zero_block_range_holds(ptr)))
        return nullptr;  // reported; the bad pointer is left alone
    if (!request_fits(size, f))
        return finish_call("rallocx", ptr, size, fail_enomem());
    // In place only where the alignment does not change the size class, so
    // that the block is what mallocx(size, flags) would give (nallocx,
    // and the size sdallocx checks): an 8-byte region that happens to lie
    // on a page is not what 1 byte aligned to a page is.
    if (!hardened && is_aligned(ptr, f.align) &&
        request_usable_size(size, f.align) == request_usable_size(size, 1) &&
        resize_in_place(ptr, old_usize, size)) {
        if (f.zero)
            zero_grown(ptr, old_usize, block_usable_size(ptr, "rallocx"));
        return finish_call("rallocx", ptr, size, ptr);
    }
    // As realloc does, without a copy where it can: not past the page
    // alignment the move keeps, nor into another arena, nor with bytes to
    // zero.
    if (!hardened && !f.past_cache && !f.zero && f.align <= kPage) {
        if (void *moved = grow_huge_by_moving(ptr, old_usize, size))
            return finish_call("rallocx", ptr, size, moved);
    }
    void *fresh = allocate_flagged(size, f);
    if (fresh == nullptr)
        return finish_call("rallocx", ptr, size, nullptr);  // ptr is left as it was
    memcpy(fresh, ptr, old_size < size ? old_size : size);
    release(ptr, f, "rallocx");
    return finish_call("rallocx", ptr, size, fresh);
}

// In place only: at least size + extra bytes if the block can grow that
// far, else at least size, else unchanged; a block bigger than
// size + extra shrinks to it where it can.  The usable size that results.
size_t aa_xallocx(void *ptr, size_t size, size_t extra, int flags) {
    if (ptr == nullptr || !ensure_initialized())
        return 0;
    Flags f = decode(flags);
    if (size == 0)
        size = 1;
    size_t old_usize = block_usable_size(ptr, "xallocx");
    if (old_usize == 0)
        return 0;  // reported
    if (g_options.hardened)
        return hardened_usable_size(ptr, old_usize, "xallocx");  // never in place under S
    if (f.align == 0 || !is_aligned(ptr, f.align))
        return old_usize;
    constexpr size_t kMost = static_cast<size_t>(PTRDIFF_MAX);
    size_t most = size > kMost || extra > kMost - size ? kMost : size + extra;
    if (most > old_usize) {
        if (!resize_in_place(ptr, old_usize, most) && size > old_usize && size < most)
            (void)resize_in_place(ptr, old_usize, size);
    } else if (most < old_usize) {
        (void)resize_in_place(ptr, old_usize, most);
    }
    size_t usize = block_usable_size(ptr, "xallocx");
    if (f.zero)
        zero_grown(ptr, old_usize, usize);
    return usize;
}

size_t aa_sallocx(const void *ptr, int flags) {
    (void)flags;  // jemalloc reads none of them here either
    return aa_usable_size(ptr, "sallocx");
}

void aa_dallocx(void *ptr, int flags) {
    if (ptr == nullptr || !ensure_initialized())
        return;
    if (AA_UNLIKELY(g_options.trace))
        trace_call("dallocx", ptr, 0, nullptr);
    // Checked first, so that a bad pointer is reported as dallocx's.
    if (block_usable_size(ptr, "dallocx") != 0)
        release(ptr, decode(flags), "dallocx");
}

// free_sized's check with the flags' alignment: any size from the one
// requested to the block's usable size is accepted (jemalloc's rule), as
// they all give the block's size class.
void aa_sdallocx(void *ptr, size_t size, int flags) {
    if (ptr == nullptr || !ensure_initialized())
        return;
    if (AA_UNLIKELY(g_options.trace))
        trace_call("sdallocx", ptr, size, nullptr);
    Flags f = decode(flags);
    if (sized_free_matches(ptr, f.align, size, "sdallocx"))
        release(ptr, f, "sdallocx");
}

// What sallocx(mallocx(size, flags)) would give, without allocating.
size_t aa_nallocx(size_t size, int flags) {
    if (!ensure_initialized())
        return 0;
    Flags f = decode(flags);
    if (size == 0)
        size = 1;
    if (!request_fits(size, f))
        return 0;
    if (AA_UNLIKELY(g_options.hardened)) {
        // A small block reports its requested size; a big one its size
        // less the guard page (hardened.h).
        HardenedRequest r = hardened_request(size, f.align);
        if (r.size == 0)
            return 0;
        return r.small ? size : request_usable_size(r.size, r.align) - kPage;
    }
    return request_usable_size(size, f.align);
}

}  // namespace arenalloc
