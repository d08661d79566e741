// huge.cc — huge blocks: one mapping each.
#include "huge.h"

#include <errno.h>
#include <stdint.h>

#include "arena.h"
#include "base.h"
#include "chunk_registry.h"
#include "decay.h"
#include "mutex.h"
#include "options.h"
#include "platform.h"
#include "report.h"
#include "util.h"

namespace arenalloc {

Huge *g_huge_live = nullptr;
HugeStats g_huge_stats = {};
size_t g_huge_cache_bytes = 0;

namespace {

Mutex g_huge_mutex;
Huge *g_huge_spare = nullptr;   // recycled descriptors

// Freed huge mappings kept for reuse (not purged, not registered): a
// program that frees and allocates multi-MiB blocks in turn then neither
// maps and unmaps nor faults its pages in again each time.  Bounded in
// bytes; a mapping unused for the decay time is unmapped at the next huge
// call.
struct CachedMapping {
    uintptr_t addr;
    size_t mapped;
    uint64_t since;  // platform_now_ms() when it was freed
};
constexpr unsigned kHugeCacheSlots = 32;
constexpr size_t kHugeCacheBytes = size_t{128} << 20;
CachedMapping g_huge_cache[kHugeCacheSlots];
unsigned g_huge_cache_count = 0;

void cache_remove_locked(unsigned i) {
    g_huge_cache_bytes -= g_huge_cache[i].mapped;
    g_huge_cache[i] = g_huge_cache[--g_huge_cache_count];
}

// Unmaps cached mappings freed before cutoff (all of them with UINT64_MAX).
void cache_expire_locked(uint64_t cutoff) {
    for (unsigned i = 0; i < g_huge_cache_count;) {
        if (g_huge_cache[i].since < cutoff) {
            pages_unmap(reinterpret_cast<void *>(g_huge_cache[i].addr), g_huge_cache[i].mapped);
            cache_remove_locked(i);
        } else {
            i++;
        }
    }
}

// Unmaps cached mappings unused for the decay rule's age limit (decay.h).
void cache_expire_aged_locked(uint64_t now) {
    uint64_t age = decay_age_limit_ms();
    cache_expire_locked(now > age ? now - age : 0);
}

// A cached mapping of at least mapped bytes aligned to align, trimmed to
// mapped bytes, or 0.  Best fit, so big mappings stay for big requests.
uintptr_t cache_take_locked(size_t mapped, size_t align) {
    unsigned best = kHugeCacheSlots;
    for (unsigned i = 0; i < g_huge_cache_count; i++) {
        const CachedMapping &m = g_huge_cache[i];
        if (m.mapped >= mapped && (m.addr & (align - 1)) == 0 &&
            (best == kHugeCacheSlots || m.mapped < g_huge_cache[best].mapped))
            best = i;
    }
    if (best == kHugeCacheSlots)
        return 0;
    CachedMapping &m = g_huge_cache[best];
    uintptr_t addr = m.addr;
    if (m.mapped == mapped) {
        cache_remove_locked(best);
    } else {
        // Keep the tail (granule-aligned, still mapped and untouched since
        // it was freed) for the next request instead of unmapping it.
        m.addr += mapped;
        m.mapped -= mapped;
        g_huge_cache_bytes -= mapped;
    }
    return addr;
}

// Keeps a freed mapping when it fits the bounds (joined with cached
// neighbours, unmapped here when the joined range outgrows the cache);
// false when the caller must unmap it.
bool cache_put_locked(uintptr_t addr, size_t mapped) {
    if (mapped > kHugeCacheBytes / 4)
        return false;
    uint64_t now = platform_now_ms();
    cache_expire_aged_locked(now);
    // Join a cached neighbour (the tail of a mapping split above, or the
    // block next to it): one range then serves a bigger request later.
    for (unsigned i = 0; i < g_huge_cache_count;) {
        CachedMapping &m = g_huge_cache[i];
        if (m.addr + m.mapped == addr || addr + mapped == m.addr) {
            if (m.addr < addr)
                addr = m.addr;
            mapped += m.mapped;
            cache_remove_locked(i);
        } else {
            i++;
        }
    }
    if (mapped > kHugeCacheBytes) {
        pages_unmap(reinterpret_cast<void *>(addr), mapped);
        return true;
    }
    while (g_huge_cache_count != 0 &&
           (g_huge_cache_count == kHugeCacheSlots || g_huge_cache_bytes + mapped > kHugeCacheBytes)) {
        // Evict the oldest.
        unsigned oldest = 0;
        for (unsigned i = 1; i < g_huge_cache_count; i++)
            if (g_huge_cache[i].since < g_huge_cache[oldest].since)
                oldest = i;
        pages_unmap(reinterpret_cast<void *>(g_huge_cache[oldest].addr), g_huge_cache[oldest].mapped);
        cache_remove_locked(oldest);
    }
    g_huge_cache[g_huge_cache_count++] = CachedMapping{addr, mapped, now};
    g_huge_cache_bytes += mapped;
    return true;
}

Huge *desc_alloc_locked() {
    Huge *h = g_huge_spare;
    if (h != nullptr) {
        g_huge_spare = h->next;
        return h;
    }
    return static_cast<Huge *>(base_alloc(sizeof(Huge)));
}

void list_insert_locked(Huge *h) {
    h->prev = nullptr;
    h->next = g_huge_live;
    if (g_huge_live != nullptr)
        g_huge_live->prev = h;
    g_huge_live = h;
}

void list_remove_locked(Huge *h) {
    if (h->prev != nullptr)
        h->prev->next = h->next;
    else
        g_huge_live = h->next;
    if (h->next != nullptr)
        h->next->prev = h->prev;
}

// The registry says h owns p's granule; h is trusted only once the lock is
// held and p matches a live block.
const char *validate_locked(Huge *h, const void *p) {
    if (h->addr == 0)
        return "block already free (double free)";
    if (reinterpret_cast<uintptr_t>(p) != h->addr)
        return "not the start of a block";
    return nullptr;
}

}  // namespace

namespace {

void *huge_map(Arena *arena, size_t size, size_t align, bool *fresh);

}  // namespace

void *huge_malloc(Arena *arena, size_t size, size_t align, bool zero) {
    bool fresh = false;
    void *p = huge_map(arena, size, align, &fresh);
    if (p != nullptr)
        fill_new_block(p, align_up(size, kPage), zero, fresh);  // fresh pages read zero
    decay_tick();
    return p;
}

namespace {

// A new mapping for a huge block, advised as the thp option asks.
void *map_fresh(size_t mapped, size_t align) {
    void *p = pages_map(mapped, align);
    if (p != nullptr && g_options.thp)
        pages_prefer_huge(p, mapped);
    return p;
}

void *huge_map(Arena *arena, size_t size, size_t align, bool *fresh) {
    size_t usize = align_up(size, kPage);
    size_t mapped = align_up(usize, kGranule);
    if (usize < size || mapped < usize) {
        errno = ENOMEM;
        return nullptr;
    }
    if (align < kGranule)
        align = kGranule;
    g_huge_mutex.lock();
    void *p = reinterpret_cast<void *>(cache_take_locked(mapped, align));
    *fresh = p == nullptr;
    if (p == nullptr) {
        // Map without the lock: other threads' huge calls need not wait
        // for the kernel.
        g_huge_mutex.unlock();
        p = map_fresh(mapped, align);
        g_huge_mutex.lock();
        if (p == nullptr) {
            // What the cache holds may be what stands in the way.
            cache_expire_locked(UINT64_MAX);
            p = map_fresh(mapped, align);
        }
        if (p == nullptr) {
            g_huge_mutex.unlock();
            errno = ENOMEM;
            return nullptr;
        }
    }
    MutexGuard guard(g_huge_mutex, kAlreadyLocked);
    Huge *h = desc_alloc_locked();
    if (h == nullptr || !registry_insert(p, mapped, reinterpret_cast<uintptr_t>(h) | kRegistryHuge)) {
        if (h != nullptr) {
            h->next = g_huge_spare;
            g_huge_spare = h;
        }
        pages_unmap(p, mapped);
        errno = ENOMEM;
        return nullptr;
    }
    h->addr = reinterpret_cast<uintptr_t>(p);
    h->usize = usize;
    h->mapped = mapped;
    h->arena = arena;
    list_insert_locked(h);
    g_huge_stats.nmalloc++;
    g_huge_stats.allocated += usize;
    g_huge_stats.mapped += mapped;
    return p;
}

}  // namespace

size_t huge_free(Huge *h, void *p, const char *fn) {
    g_huge_mutex.lock();
    const char *finding = validate_locked(h, p);
    if (AA_UNLIKELY(finding != nullptr)) {
        g_huge_mutex.unlock();
        report_invalid_pointer(fn, p, finding);
        return 0;
    }
    size_t usize = h->usize;
    size_t mapped = h->mapped;
    registry_remove(p, mapped);
    list_remove_locked(h);
    g_huge_stats.ndalloc++;
    g_huge_stats.allocated -= h->usize;
    g_huge_stats.mapped -= mapped;
    h->addr = 0;
    h->next = g_huge_spare;
    g_huge_spare = h;
    bool kept = cache_put_locked(reinterpret_cast<uintptr_t>(p), mapped);
    g_huge_mutex.unlock();
    if (!kept)
        pages_unmap(p, mapped);
    decay_tick();
    return usize;
}

size_t huge_usable_size(Huge *h, const void *p, const char *fn) {
    g_huge_mutex.lock();
    const char *finding = validate_locked(h, p);
    size_t usize = h->usize;
    g_huge_mutex.unlock();
    if (AA_UNLIKELY(finding != nullptr)) {
        report_invalid_pointer(fn, p, finding);
        return 0;
    }
    return usize;
}

bool huge_ralloc_in_place(Huge *h, void *p, size_t size) {
    size_t usize = align_up(size, kPage);
    size_t mapped = align_up(usize, kGranule);
    if (usize < size || mapped < usize)
        return false;
    MutexGuard guard(g_huge_mutex);
    if (validate_locked(h, p) != nullptr)
        return false;
    if (mapped > h->mapped) {
        // If the registry cannot record the new granules, undo the growth:
        // an unregistered tail would be unreachable by free().
        if (!pages_resize_in_place(p, h->mapped, mapped))
            return false;
        if (!registry_insert(p, mapped, reinterpret_cast<uintptr_t>(h) | kRegistryHuge)) {
            pages_resize_in_place(p, mapped, h->mapped);
            return false;
        }
    } else if (mapped < h->mapped) {
        registry_remove(static_cast<char *>(p) + mapped, h->mapped - mapped);
        pages_resize_in_place(p, h->mapped, mapped);
    }
    g_huge_stats.allocated += usize;
    g_huge_stats.allocated -= h->usize;
    g_huge_stats.mapped += mapped;
    g_huge_stats.mapped -= h->mapped;
    h->usize = usize;
    h->mapped = mapped;
    return true;
}

void *huge_ralloc_move(Huge *h, void *p, size_t size) {
    size_t usize = align_up(size, kPage);
    size_t mapped = align_up(usize, kGranule);
    if (usize < size || mapped < usize)
        return nullptr;
    MutexGuard guard(g_huge_mutex);
    if (validate_locked(h, p) != nullptr || mapped <= h->mapped)
        return nullptr;
    // Reserve an aligned range, then have the kernel move the pages there:
    // no copy, and the new block is registry-aligned like every other.
    void *target = pages_map(mapped, kGranule);
    if (target == nullptr)
        return nullptr;
    if (!registry_insert(target, mapped, reinterpret_cast<uintptr_t>(h) | kRegistryHuge)) {
        pages_unmap(target, mapped);
        return nullptr;
    }
    if (!pages_move(p, h->mapped, target, mapped)) {
        registry_remove(target, mapped);
        pages_unmap(target, mapped);
        return nullptr;
    }
    registry_remove(p, h->mapped);
    g_huge_stats.allocated += usize;
    g_huge_stats.allocated -= h->usize;
    g_huge_stats.mapped += mapped;
    g_huge_stats.mapped -= h->mapped;
    h->addr = reinterpret_cast<uintptr_t>(target);
    h->usize = usize;
    h->mapped = mapped;
    return target;
}

void huge_decay() {
    MutexGuard guard(g_huge_mutex);
    uint64_t now = platform_now_ms();
    cache_expire_aged_locked(now);
}

size_t huge_purge_cache() {
    MutexGuard guard(g_huge_mutex);
    size_t bytes = g_huge_cache_bytes;
    cache_expire_locked(UINT64_MAX);
    return bytes;
}

void huge_stats(HugeStats *out, size_t *cached_bytes) {
    MutexGuard guard(g_huge_mutex);
    *out = g_huge_stats;
    *cached_bytes = g_huge_cache_bytes;
}

void huge_prefork() { g_huge_mutex.lock(); }
void huge_postfork_parent() { g_huge_mutex.unlock(); }
void huge_postfork_child() { g_huge_mutex.reinit_in_child(); }

}  // namespace arenalloc
