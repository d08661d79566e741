// chunk_registry.h — a two-level radix tree mapping every granule of
// address space the allocator owns to what owns it: an arena chunk or a
// huge allocation.  free() asks it first, so a pointer the allocator never
// returned is recognised before anything at that address is touched, and a
// debugger can enumerate the heap from it.
//
// Readers take no lock (entries and leaves are published with release
// stores); writers serialize on the registry mutex.
#ifndef ARENALLOC_CHUNK_REGISTRY_H
#define ARENALLOC_CHUNK_REGISTRY_H

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "platform.h"
#include "util.h"

namespace arenalloc {

// The registry's unit: the smallest chunk size allowed and the alignment of
// every chunk and huge mapping, so no granule is ever shared by two owners.
constexpr unsigned kLgGranule = 18;

// Chunk sizes (the K option's bounds): a chunk covers whole granules, and
// at least 16 pages, so that a header page and the longest small run (7
// pages) fit: 256 KiB with 4 or 16 KiB pages, 1 MiB with 64 KiB pages.
// 2 MiB by default whatever the page (lib/DECISIONS.md, "Page sizes").
constexpr int kLgChunkDefault = 21;  // 2 MiB
constexpr int kLgChunkMin = kLgGranule > kLgPage + 4 ? kLgGranule : static_cast<int>(kLgPage + 4);
constexpr int kLgChunkMax = 30;          // 1 GiB
constexpr size_t kGranule = size_t{1} << kLgGranule;
// The address bits the registry covers: 48, the user address space of
// x86-64, arm64 (4-level tables) and s390x (up to 4 TiB unless a program
// asks for more), or the whole of a 32-bit pointer.  A mapping beyond it is
// refused (registry_insert), never truncated.  On 32-bit targets the two
// levels are then 7 bits each: a 512-byte root and 512-byte leaves.
constexpr unsigned kPointerBits = sizeof(uintptr_t) * 8;
constexpr unsigned kRegistryAddressBits = kPointerBits < 48 ? kPointerBits : 48;
// The highest address covered (spelt so that no shift is by the width of
// uintptr_t on a 32-bit target).
constexpr uintptr_t kRegistryAddressMax =
    kRegistryAddressBits == kPointerBits ? UINTPTR_MAX
                                         : (uintptr_t{1} << (kRegistryAddressBits % kPointerBits)) - 1;
constexpr unsigned kRegistryKeyBits = kRegistryAddressBits - kLgGranule;
constexpr unsigned kRegistryLeafBits = kRegistryKeyBits / 2;
constexpr unsigned kRegistryRootBits = kRegistryKeyBits - kRegistryLeafBits;

enum RegistryTag : uintptr_t {
    kRegistryChunk = 1,  // value is a Chunk *
    kRegistryHuge = 2,   // value is a Huge *
};
constexpr uintptr_t kRegistryTagMask = 3;

struct RegistryLeaf {
    std::atomic<uintptr_t> slots[size_t{1} << kRegistryLeafBits];
};

extern AA_HIDDEN std::atomic<RegistryLeaf *> g_registry_root[size_t{1} << kRegistryRootBits];

// Advanced by every registry_remove: a thread's memo of the granule it
// last freed into (ThreadState, aa_free) is good while the stamp it was
// taken under is current.  Compared apart from the granule number, so no
// address (not even one past the registry's 48 bits) and no number of
// removals can make a stale memo match.  Starts at 1: a memo of stamp 0
// is none.
extern AA_HIDDEN std::atomic<uint64_t> g_registry_stamp;
// 64-bit counters (this stamp, the arenas' statistics) are atomics on
// 32-bit targets too: they must be lock-free there (i386: cmpxchg8b), since
// a locked atomic would call libatomic, outside the allocator.
static_assert(std::atomic<uint64_t>::is_always_lock_free, "64-bit atomics must be lock-free");

// Tagged owner of the granule holding addr, or 0 if the allocator does not
// own it.
AA_ALWAYS_INLINE uintptr_t registry_lookup(const void *addr) {
    uintptr_t key = reinterpret_cast<uintptr_t>(addr) >> kLgGranule;
    // An address at or above 2^kRegistryAddressBits has a root index past
    // the table: one compare checks both.
    uintptr_t root = key >> kRegistryLeafBits;
    if (AA_UNLIKELY(root >= (uintptr_t{1} << kRegistryRootBits)))
        return 0;
    RegistryLeaf *leaf = g_registry_root[root].load(std::memory_order_acquire);
    if (AA_UNLIKELY(leaf == nullptr))
        return 0;
    return leaf->slots[key & ((uintptr_t{1} << kRegistryLeafBits) - 1)].load(
        std::memory_order_acquire);
}

// Records value for every granule of [addr, addr+size) (granule aligned).
// Returns false when a leaf could not be allocated (nothing is recorded).
bool registry_insert(const void *addr, size_t size, uintptr_t value);

// Forgets every granule of [addr, addr+size).
void registry_remove(const void *addr, size_t size);

// Calls visit(value) for each distinct owner, in address order; the
// caller serializes against changes (used by the consistency checks).
void registry_for_each(void (*visit)(uintptr_t value, void *ctx), void *ctx);

void registry_prefork();
void registry_postfork_parent();
void registry_postfork_child();

}  // namespace arenalloc

#endif
