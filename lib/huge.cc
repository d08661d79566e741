// huge.cc — huge blocks: one mapping each.
#include "huge.h"

#include <errno.h>

#include "arena.h"
#include "base.h"
#include "chunk_registry.h"
#include "mutex.h"
#include "platform.h"
#include "report.h"
#include "util.h"

namespace arenalloc {

namespace {

Mutex g_huge_mutex;
Huge *g_huge_live = nullptr;    // every live huge block
Huge *g_huge_spare = nullptr;   // recycled descriptors
HugeStats g_huge_stats = {};

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

void *huge_map(Arena *arena, size_t size, size_t align);

}  // namespace

void *huge_malloc(Arena *arena, size_t size, size_t align) {
    void *p = huge_map(arena, size, align);
    if (p != nullptr)
        fill_new_block(p, align_up(size, kPage), false, true);  // fresh pages read zero
    return p;
}

namespace {

void *huge_map(Arena *arena, size_t size, size_t align) {
    size_t usize = align_up(size, kPage);
    size_t mapped = align_up(usize, kGranule);
    if (usize < size || mapped < usize) {
        errno = ENOMEM;
        return nullptr;
    }
    if (align < kGranule)
        align = kGranule;
    void *p = pages_map(mapped, align);
    if (p == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
    MutexGuard guard(g_huge_mutex);
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
    g_huge_mutex.unlock();
    pages_unmap(p, mapped);
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

void huge_stats(HugeStats *out) {
    MutexGuard guard(g_huge_mutex);
    *out = g_huge_stats;
}

void huge_prefork() { g_huge_mutex.lock(); }
void huge_postfork_parent() { g_huge_mutex.unlock(); }
void huge_postfork_child() { g_huge_mutex.reinit_in_child(); }

}  // namespace arenalloc
