// hardened_zero.cc — the S option's zero-size blocks
// (hardened_inaccessible.h): slots of a range that is never accessible.
#include "hardened_inaccessible.h"

#include <stdint.h>

#include "mutex.h"
#include "platform.h"
#include "report.h"

namespace arenalloc {

std::atomic<uintptr_t> g_zero_block_base{0};

namespace {

constexpr size_t kBitsPerWord = 64;
constexpr size_t kWords = kZeroBlockSlots / kBitsPerWord;
constexpr size_t kRangeBytes = kZeroBlockSlots * kZeroBlockSlot;
// The bitmap's mapping, whole pages, before a guard page and the range:
// [bitmap][guard][slots], so that no slot's neighbour is accessible.
constexpr size_t kBitmapBytes = (kWords * sizeof(uint64_t) + kPage - 1) & ~(kPage - 1);
constexpr size_t kMappingBytes = kBitmapBytes + kPage + kRangeBytes;

struct ZeroBlocks {
    Mutex mutex;
    uint64_t *live = nullptr;  // a bit per slot, set while it is a block
    size_t cursor = 0;         // the next slot to try
    bool reserve_tried = false;
};

ZeroBlocks g_zero;

// Lock held.  The mapping is made once: a failure is not retried, and
// malloc(0) then makes ordinary blocks.
bool reserve_locked() {
    if (g_zero.live != nullptr)
        return true;
    if (g_zero.reserve_tried)
        return false;
    g_zero.reserve_tried = true;
    char *m = static_cast<char *>(pages_map(kMappingBytes, kPage));
    if (m == nullptr)
        return false;
    if (!pages_protect(m + kBitmapBytes, kPage + kRangeBytes, false)) {
        pages_unmap(m, kMappingBytes);
        return false;
    }
    g_zero.live = reinterpret_cast<uint64_t *>(m);
    g_zero_block_base.store(reinterpret_cast<uintptr_t>(m + kBitmapBytes + kPage),
                            std::memory_order_release);
    return true;
}

// Lock held: a free slot at or after the cursor, going round; kZeroBlockSlots
// when all are taken.
size_t take_slot_locked() {
    size_t start = g_zero.cursor;
    for (size_t i = 0; i <= kWords; i++) {
        size_t w = (start / kBitsPerWord + i) % kWords;
        uint64_t taken = g_zero.live[w];
        // In the cursor's own word, on the first pass, the slots before it
        // count as taken: they come last.
        if (i == 0)
            taken |= (uint64_t{1} << (start % kBitsPerWord)) - 1;
        if (taken == ~uint64_t{0})
            continue;
        size_t slot = w * kBitsPerWord + static_cast<size_t>(__builtin_ctzll(~taken));
        g_zero.live[w] |= uint64_t{1} << (slot % kBitsPerWord);
        g_zero.cursor = (slot + 1) % kZeroBlockSlots;
        return slot;
    }
    return kZeroBlockSlots;
}

// What is wrong with p as a zero-size block (lock held), or nullptr; its
// slot in *slot.
const char *finding_locked(const void *p, size_t *slot) {
    uintptr_t offset = reinterpret_cast<uintptr_t>(p) - g_zero_block_base.load(std::memory_order_relaxed);
    if (offset % kZeroBlockSlot != 0)
        return "not the start of a block";
    *slot = offset / kZeroBlockSlot;
    if ((g_zero.live[*slot / kBitsPerWord] & (uint64_t{1} << (*slot % kBitsPerWord))) == 0)
        return "block already free (double free)";
    return nullptr;
}

}  // namespace

void *zero_block_allocate() {
    MutexGuard guard(g_zero.mutex);
    if (!reserve_locked())
        return nullptr;
    size_t slot = take_slot_locked();
    if (slot == kZeroBlockSlots)
        return nullptr;
    return reinterpret_cast<void *>(g_zero_block_base.load(std::memory_order_relaxed) +
                                    slot * kZeroBlockSlot);
}

bool zero_block_live(const void *p, const char *fn) {
    const char *finding;
    {
        MutexGuard guard(g_zero.mutex);
        size_t slot;
        finding = finding_locked(p, &slot);
    }
    if (finding != nullptr)
        report_invalid_pointer(fn, p, finding);
    return finding == nullptr;
}

void zero_block_free(const void *p, const char *fn) {
    const char *finding;
    {
        MutexGuard guard(g_zero.mutex);
        size_t slot;
        finding = finding_locked(p, &slot);
        if (finding == nullptr)
            g_zero.live[slot / kBitsPerWord] &= ~(uint64_t{1} << (slot % kBitsPerWord));
    }
    // Reported with the lock released: with option a the report returns.
    if (finding != nullptr)
        report_invalid_pointer(fn, p, finding);
}

void zero_block_prefork() { g_zero.mutex.lock(); }
void zero_block_postfork_parent() { g_zero.mutex.unlock(); }
void zero_block_postfork_child() { g_zero.mutex.reinit_in_child(); }

}  // namespace arenalloc
