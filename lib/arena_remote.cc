// arena_remote.cc — small regions freed by threads of other arenas:
// pushed without the lock in batches, drained by the next lock holder; and
// the lock-free pool the batches are recycled through.
#include <stdint.h>

#include "arena_internal.h"
#include "base.h"
#include "debug_assert.h"

namespace arenalloc {

namespace {

// Returns the regions of the batches from b on (all of class bin_index,
// all of this arena) to their runs, and the batches to the pool.
void remote_release_locked(Arena *a, unsigned bin_index, RemoteBatch *b, bool keep_empty) {
    if (b == nullptr)
        return;
    RemoteBatch *first = b;
    for (;;) {
        unsigned others = release_regions_locked(a, bin_index, b->regions, b->count, keep_empty);
        AA_ASSERT(others == 0);
        (void)others;
        b->count = 0;
        if (b->next == nullptr)
            break;
        b = b->next;
    }
    remote_batch_put(first, b);
}

}  // namespace

// drain_remote_locked's work, once a push is pending.
uint64_t drain_remote_pending_locked(Arena *a, bool keep_empty) {
    uint64_t pending = a->remote.pending.exchange(0, std::memory_order_seq_cst);
    for (uint64_t left = pending; left != 0; left &= left - 1) {
        unsigned bin = static_cast<unsigned>(__builtin_ctzll(left));
        remote_release_locked(a, bin,
                              a->remote.chains[bin].exchange(nullptr, std::memory_order_seq_cst),
                              keep_empty);
    }
    return pending;
}

namespace {

// Batches nobody holds: a lock-free stack.  Only whole-list operations
// are used (push a list, take the whole stack), so no pop can be fooled
// by a batch that left and came back (ABA).
std::atomic<RemoteBatch *> g_remote_batch_pool{nullptr};

}  // namespace

RemoteBatch *remote_batch_get(RemoteBatch **spare) {
    RemoteBatch *b = *spare;
    if (b == nullptr && g_remote_batch_pool.load(std::memory_order_relaxed) != nullptr)
        b = g_remote_batch_pool.exchange(nullptr, std::memory_order_acquire);
    if (b == nullptr)
        return static_cast<RemoteBatch *>(base_alloc(sizeof(RemoteBatch)));
    *spare = b->next;
    return b;
}

void remote_batch_put(RemoteBatch *first, RemoteBatch *last) {
    RemoteBatch *head = g_remote_batch_pool.load(std::memory_order_relaxed);
    do {
        last->next = head;
    } while (!g_remote_batch_pool.compare_exchange_weak(head, first, std::memory_order_release,
                                                        std::memory_order_relaxed));
}

unsigned arena_push_remote(Arena *a, unsigned bin, void **ptrs, unsigned n, RemoteBatch *batch) {
    AA_ASSERT(bin < kNumBins);
    unsigned kept = 0;
    unsigned count = 0;
    for (unsigned i = 0; i < n; i++) {
        void *p = ptrs[i];
        if (count == kRemoteBatchRegions || chunk_containing(p)->arena != a)
            ptrs[kept++] = p;  // the caller's next pass
        else
            batch->regions[count++] = p;
    }
    batch->count = count;
    std::atomic<RemoteBatch *> &head = a->remote.chains[bin];
    RemoteBatch *old = head.load(std::memory_order_relaxed);
    // Sequentially consistent, like the drain's exchanges (pending, then
    // the chains): a push that the drain's exchange of the chain missed
    // then sees the bit cleared and sets it again.
    do {
        batch->next = old;
    } while (!head.compare_exchange_weak(old, batch, std::memory_order_seq_cst,
                                         std::memory_order_relaxed));
    if ((a->remote.pending.load(std::memory_order_seq_cst) & (uint64_t{1} << bin)) == 0)
        a->remote.pending.fetch_or(uint64_t{1} << bin, std::memory_order_seq_cst);
    return kept;
}

void arena_drain_remote_locked(Arena *a) { drain_remote_locked(a, false); }

void arena_drain_remote(Arena *a) {
    // Not even the lock when there is nothing to return (a cache's GC
    // visit calls this for every thread, often at the same time).
    if (a->remote.pending.load(std::memory_order_relaxed) == 0)
        return;
    MutexGuard guard(a->mutex);
    arena_drain_remote_locked(a);
}

}  // namespace arenalloc
