// chunk_registry.cc — radix tree updates.
#include "chunk_registry.h"

#include "base.h"
#include "mutex.h"

namespace arenalloc {

// "= {}": constant initialization, spelled out.  Without it the array's
// default construction is a loop that only the optimizer removes, and an
// instrumented build (-fsanitize=undefined) keeps it as a static
// constructor, which the library must not have.
std::atomic<RegistryLeaf *> g_registry_root[size_t{1} << kRegistryRootBits] = {};
std::atomic<uint64_t> g_registry_stamp{1};

namespace {

Mutex g_registry_mutex;

constexpr uintptr_t kLeafMask = (uintptr_t{1} << kRegistryLeafBits) - 1;

RegistryLeaf *leaf_for(uintptr_t key, bool create) {
    std::atomic<RegistryLeaf *> &slot = g_registry_root[key >> kRegistryLeafBits];
    RegistryLeaf *leaf = slot.load(std::memory_order_acquire);
    if (leaf == nullptr && create) {
        leaf = static_cast<RegistryLeaf *>(base_alloc(sizeof(RegistryLeaf)));
        if (leaf != nullptr)
            slot.store(leaf, std::memory_order_release);
    }
    return leaf;
}

}  // namespace

bool registry_insert(const void *addr, size_t size, uintptr_t value) {
    uintptr_t first = reinterpret_cast<uintptr_t>(addr) >> kLgGranule;
    uintptr_t last = (reinterpret_cast<uintptr_t>(addr) + size - 1) >> kLgGranule;
    if (reinterpret_cast<uintptr_t>(addr) + size - 1 > kRegistryAddressMax)
        return false;
    MutexGuard guard(g_registry_mutex);
    // Make every leaf first, so a failure leaves nothing half-recorded.
    for (uintptr_t key = first; key <= last; key = (key | kLeafMask) + 1) {
        if (leaf_for(key, true) == nullptr)
            return false;
    }
    for (uintptr_t key = first; key <= last; key++)
        leaf_for(key, false)->slots[key & kLeafMask].store(value, std::memory_order_release);
    return true;
}

void registry_remove(const void *addr, size_t size) {
    uintptr_t first = reinterpret_cast<uintptr_t>(addr) >> kLgGranule;
    uintptr_t last = (reinterpret_cast<uintptr_t>(addr) + size - 1) >> kLgGranule;
    MutexGuard guard(g_registry_mutex);
    for (uintptr_t key = first; key <= last; key++)
        leaf_for(key, false)->slots[key & kLeafMask].store(0, std::memory_order_release);
    // Every thread's memo goes stale.  A free that still reads the old
    // stamp is of a block in a granule that is not being removed (a live
    // block keeps its chunk), or of a bad pointer, which the tree would
    // not have caught any more safely while the granule is being unmapped.
    g_registry_stamp.store(g_registry_stamp.load(std::memory_order_relaxed) + 1,
                           std::memory_order_release);
}

void registry_for_each(void (*visit)(uintptr_t value, void *ctx), void *ctx) {
    uintptr_t previous = 0;
    for (size_t i = 0; i < (size_t{1} << kRegistryRootBits); i++) {
        RegistryLeaf *leaf = g_registry_root[i].load(std::memory_order_acquire);
        if (leaf == nullptr)
            continue;
        for (size_t j = 0; j <= kLeafMask; j++) {
            uintptr_t v = leaf->slots[j].load(std::memory_order_acquire);
            if (v != 0 && v != previous)
                visit(v, ctx);
            previous = v;
        }
    }
}

void registry_prefork() { g_registry_mutex.lock(); }
void registry_postfork_parent() { g_registry_mutex.unlock(); }
void registry_postfork_child() { g_registry_mutex.reinit_in_child(); }

}  // namespace arenalloc
