// hardened_big.cc — the S option's quarantine of large and huge blocks
// (hardened_inaccessible.h): purged, inaccessible, first in first out.
#include "hardened_inaccessible.h"

#include <stdint.h>

#include "arena.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "huge.h"
#include "mutex.h"
#include "platform.h"
#include "report.h"
#include "thread_state.h"

namespace arenalloc {

namespace {

struct WaitingBlock {
    void *ptr = nullptr;
    size_t size = 0;  // its pages, the guard included
    bool resident = false;  // its pages were kept (not purged)
};

// A ring: held[(next + i) % kBigQuarantineSlots] for i < count, oldest
// first; bytes is the sum of their sizes.  count is read without the lock
// by big_quarantine_reports, to skip the look while the ring is empty.
struct BigQuarantine {
    Mutex mutex;
    WaitingBlock held[kBigQuarantineSlots] = {};
    unsigned next = 0;
    std::atomic<unsigned> count{0};
    size_t bytes = 0;
    size_t resident = 0;  // the sum of the sizes of the blocks that kept their pages
};

BigQuarantine g_big_quarantine;

// Lock held.
bool holds_locked(const void *ptr) {
    const BigQuarantine &q = g_big_quarantine;
    unsigned n = q.count.load(std::memory_order_relaxed);
    for (unsigned i = 0; i < n; i++)
        if (q.held[(q.next + i) % kBigQuarantineSlots].ptr == ptr)
            return true;
    return false;
}

// A block leaving the quarantine: accessible again (the guard page too,
// as the arena expects of a free block) and freed as free() would.
void release(const WaitingBlock &b, const char *fn) {
    // When the kernel refused to protect the pages, this changes nothing.
    (void)pages_protect(b.ptr, b.size, true);
    uintptr_t owner = registry_lookup(b.ptr);
    Chunk *c = (owner & kRegistryChunk) ? reinterpret_cast<Chunk *>(owner & ~kRegistryTagMask) : nullptr;
    Huge *h = (owner & kRegistryHuge) ? reinterpret_cast<Huge *>(owner & ~kRegistryTagMask) : nullptr;
    tls_thread_state.deallocated_uncached += c != nullptr ? arena_free(c, b.ptr, fn) : huge_free(h, b.ptr, fn);
}

}  // namespace

void big_quarantine_put(void *ptr, size_t usize, const char *fn) {
    WaitingBlock out[kBigQuarantineSlots];
    unsigned nout = 0;
    bool twice;
    {
        BigQuarantine &q = g_big_quarantine;
        MutexGuard guard(q.mutex);
        twice = holds_locked(ptr);
        if (!twice) {
            // Under the lock, so that no other free can take the block out
            // before it is protected.  Its guard page is inaccessible already.
            unsigned count = q.count.load(std::memory_order_relaxed);
            while (count != 0 &&
                   (count == kBigQuarantineSlots || q.bytes + usize > kBigQuarantineBytes)) {
                out[nout++] = q.held[q.next];
                q.bytes -= q.held[q.next].size;
                if (q.held[q.next].resident)
                    q.resident -= q.held[q.next].size;
                q.next = (q.next + 1) % kBigQuarantineSlots;
                count--;
            }
            bool resident = q.resident + usize <= kBigQuarantineResidentBytes;
            if (resident)
                q.resident += usize;
            else
                (void)pages_purge(ptr, usize - kPage, true);
            (void)pages_protect(ptr, usize, false);
            q.held[(q.next + count) % kBigQuarantineSlots] = {ptr, usize, resident};
            q.bytes += usize;
            q.count.store(count + 1, std::memory_order_relaxed);
        }
    }
    // Reported with the lock released: with option a the report returns.
    if (twice)
        report_invalid_pointer(fn, ptr, "block already free (in the quarantine)");
    for (unsigned i = 0; i < nout; i++)
        release(out[i], fn);
}

bool big_quarantine_reports(const void *ptr, const char *fn) {
    // Big blocks start on a page; most small ones do not.
    if ((reinterpret_cast<uintptr_t>(ptr) & (kPage - 1)) != 0 ||
        g_big_quarantine.count.load(std::memory_order_relaxed) == 0)
        return false;
    bool held;
    {
        MutexGuard guard(g_big_quarantine.mutex);
        held = holds_locked(ptr);
    }
    if (held)
        report_invalid_pointer(fn, ptr, "block already free (in the quarantine)");
    return held;
}

void big_quarantine_drain() {
    WaitingBlock out[kBigQuarantineSlots];
    unsigned nout = 0;
    {
        BigQuarantine &q = g_big_quarantine;
        MutexGuard guard(q.mutex);
        unsigned count = q.count.load(std::memory_order_relaxed);
        for (; nout < count; nout++)
            out[nout] = q.held[(q.next + nout) % kBigQuarantineSlots];
        q.next = 0;
        q.bytes = 0;
        q.resident = 0;
        q.count.store(0, std::memory_order_relaxed);
    }
    for (unsigned i = 0; i < nout; i++)
        release(out[i], "malloc");
}

void big_quarantine_prefork() { g_big_quarantine.mutex.lock(); }
void big_quarantine_postfork_parent() { g_big_quarantine.mutex.unlock(); }
void big_quarantine_postfork_child() { g_big_quarantine.mutex.reinit_in_child(); }

}  // namespace arenalloc
