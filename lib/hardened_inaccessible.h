// hardened_inaccessible.h — the S option's blocks that no access may
// reach (hardened.h has the rest of the profile):
//
//  - Large and huge blocks in quarantine (hardened_big.cc).  free() does
//    not give such a block back at once: its pages are purged (no resident
//    memory; the first kBigQuarantineResidentBytes waiting keep theirs)
//    and made inaccessible, and it waits, oldest first, until the
//    blocks behind it pass kBigQuarantineBytes (or kBigQuarantineSlots).
//    A read or write after free faults at once, and a second free while it
//    waits is reported.  Only then is it made accessible and freed, so a
//    block freed, its pages reused by the next request and freed again is
//    a block still in the quarantine, not the new owner's.
//  - Zero-size blocks (hardened_zero.cc).  malloc(0) returns a 16-byte
//    slot of an address range that is never accessible, unique while it
//    lives; free() and realloc() take it, malloc_usable_size() gives 0, a
//    second free is reported.  The live slots are a bitmap in a separate,
//    accessible mapping; slots are handed out round the range in turn, so
//    a freed one comes back only after every other has.
//
// Each has a lock of its own, taken last (nothing else is locked while
// either is held), re-created in a fork child like the others (init.cc).
#ifndef ARENALLOC_HARDENED_INACCESSIBLE_H
#define ARENALLOC_HARDENED_INACCESSIBLE_H

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "util.h"

namespace arenalloc {

// The quarantine's bounds: address space only, since its pages are
// purged (lib/DECISIONS.md, "The big-block quarantine").  A block bigger
// than the budget still waits, alone, until the next big free.
constexpr size_t kBigQuarantineBytes = size_t{32} << 20;
constexpr unsigned kBigQuarantineSlots = 64;
// Up to this much of the waiting blocks keeps its pages (inaccessible all
// the same): purging costs a system call and, when the block is reused,
// a page fault per page, which for blocks freed and asked for again at a
// high rate costs more than the checks themselves (lib/DECISIONS.md, "S
// keeps the thread caches").
constexpr size_t kBigQuarantineResidentBytes = size_t{4} << 20;

// Puts the live large or huge block ptr, of usize bytes with its guard
// page, in the quarantine, and frees what leaves it; a block waiting there
// already is reported on behalf of fn instead.
void big_quarantine_put(void *ptr, size_t usize, const char *fn);

// Whether the big block ptr waits in the quarantine; reported on behalf
// of fn when it does (a use of a freed block), so that the caller stops.
bool big_quarantine_reports(const void *ptr, const char *fn);

// Frees every block waiting in the quarantine (a request the system
// refused is about to be tried again).
void big_quarantine_drain();

void big_quarantine_prefork();
void big_quarantine_postfork_parent();
void big_quarantine_postfork_child();

// A zero-size block's slot: the alignment malloc promises.
constexpr size_t kZeroBlockSlot = 16;
// The number of slots; past them, malloc(0) under S gives an ordinary
// one-byte block.
constexpr size_t kZeroBlockSlots = size_t{1} << 18;

// The first slot's address, 0 until the range is reserved.
extern AA_HIDDEN std::atomic<uintptr_t> g_zero_block_base;

// Whether p lies in the range of zero-size blocks (live or not).
AA_ALWAYS_INLINE bool zero_block_range_holds(const void *p) {
    uintptr_t base = g_zero_block_base.load(std::memory_order_acquire);
    return base != 0 && reinterpret_cast<uintptr_t>(p) - base < kZeroBlockSlots * kZeroBlockSlot;
}

// A new zero-size block, or nullptr when none is left (or the range
// cannot be reserved).
void *zero_block_allocate();

// Whether p (in the range) is a live zero-size block; what is wrong is
// reported on behalf of fn otherwise.
bool zero_block_live(const void *p, const char *fn);

// Frees the zero-size block p (in the range), or reports on behalf of fn
// why it cannot.
void zero_block_free(const void *p, const char *fn);

void zero_block_prefork();
void zero_block_postfork_parent();
void zero_block_postfork_child();

}  // namespace arenalloc

#endif
