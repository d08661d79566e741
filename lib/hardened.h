// hardened.h — the hardened profile (MALLOC_OPTIONS flag S, or configure
// --enable-hardened): checks that catch heap overflows and writes after
// free as they happen, at a cost in speed and memory.  Off by default; with
// S on, options_need_slow_path() shuts the inline fast paths, so every
// malloc comes here through the slow path, and every free too: the thread
// caches' stacks are made with no room for the inline push (tcache.h), whose
// overflow hands the block to the checked free.  The caches stay on behind
// these checks, so S takes no lock and no atomic read-modify-write more than
// the default when a cache has what is asked for, and the default build's
// hit paths are untouched.
//
//  - A canary after each small block.  A request of n bytes (n >= 1) is
//    served from the class of n + kHardenedSlack; the region's last four
//    bytes hold n, mixed with a keyed hash of the block's address, and the
//    bytes from n up to them hold a canary byte (odd, so never NUL; also
//    keyed by the address).  free() and realloc() (and malloc_usable_size)
//    check both: a write of even one byte past the requested size, a NUL
//    included, is reported and the program aborted.  The canary is the
//    kCanaryBytes right after the block (fewer when the class leaves less
//    room): an overflow lands there first, and checking it costs a word.  malloc_usable_size
//    reports n, the requested size, so a caller that fills what it is told
//    is usable never touches the canary.
//  - Junk on free, checked at reuse.  A freed small region's first
//    kJunkHeadBytes and last four bytes (arena.h) are filled with the J
//    option's free byte (kJunkOnFree); new small runs are junk throughout.
//    A free region carries no free mark (tcache.h): under S it reads as
//    junk there, in a quarantine, on a cache's stack or in its run.  malloc
//    checks those bytes when it hands the region out again, and reports a
//    write after free; free() of a region that reads as junk there (its
//    size trailer overwritten) reports a double free.  Filling and
//    checking a bounded part keeps the cost of a free the same whatever
//    the block's size; a write after free past the head is not seen.
//  - Delayed reuse.  A freed small region waits in its thread's quarantine
//    (tcache.h: kQuarantineSlots regions, at most kQuarantineBytes) before
//    it goes onto the thread cache's stack; a second free while it waits is
//    a double free.
//  - Guard pages.  A large or huge block gets one more page, made
//    inaccessible (pages_protect), right after its usable size: a write
//    past malloc_usable_size() faults at once.  realloc keeps a block
//    where it is only when the canary and the guard can follow its new
//    size (hardened_resize).
//  - Freed large and huge blocks, and zero-size blocks, inaccessible:
//    hardened_inaccessible.h.
#ifndef ARENALLOC_HARDENED_H
#define ARENALLOC_HARDENED_H

#include <cstddef>
#include <cstdint>

#include "init.h"
#include "options.h"
#include "util.h"

namespace arenalloc {

constexpr size_t kHardenedTrailer = 4;                     // the stored size
constexpr size_t kHardenedSlack = kHardenedTrailer + 1;    // and one canary byte at least
constexpr size_t kCanaryBytes = 8;                         // at most this many canary bytes

// A random per-process key: the stored sizes and canary bytes are hashed
// with it, so that they cannot be predicted.  Drawn by hardened_configure()
// at initialization.
extern AA_HIDDEN uintptr_t g_hardened_key;
void hardened_configure();

// Whether S is in force; initializes first, so that the very first block
// is made by the same rules that will free it.
AA_ALWAYS_INLINE bool hardened_in_force() {
    return ensure_initialized() && g_options.hardened;
}

// A block of size bytes aligned to align (a power of two; kMinSize or less
// for plain malloc), zeroed when zero is set, with its canary or guard
// page; nullptr with errno ENOMEM on failure.
void *hardened_allocate(size_t size, size_t align, bool zero);

// What hardened_allocate(size, align) asks of the arenas: a block of size
// bytes aligned to align (kMinSize or less: plain malloc), small (with a
// canary) or not (with a guard page).  size is 0 when the request cannot
// be met.  free_sized() under S checks a block against it.
struct HardenedRequest {
    size_t size;
    size_t align;
    bool small;
};
HardenedRequest hardened_request(size_t size, size_t align);

// free(ptr) on behalf of fn: checks the canary of a small block and puts
// it in the quarantine, puts a large or huge block in its own quarantine,
// frees a zero-size block (true: nothing more to do); false for a pointer
// it does not recognise, which the caller reports.
bool hardened_free(void *ptr, const char *fn);

// free(ptr) on behalf of fn of what the inline free found a region start
// of a small run of class bin (tcache.h): its canary checked (a region
// freed already reads as junk there: a double free), then quarantined.
void hardened_free_region(void *ptr, unsigned bin, const char *fn);

// realloc(ptr, size) of a live block whose full usable size is full,
// without a copy where that can be done: a small block whose class stays
// the same gets its canary at the new size; a big one is resized as
// realloc does without S (in place, or a huge one moved by remapping), its
// guard page following the new end.  The block (ptr, or where it moved),
// or nullptr when it must be copied.
void *hardened_resize(void *ptr, size_t full, size_t size);

// The usable size of the live block ptr, whose full usable size (checked
// by the caller) is usize: the requested size of a small block, once its
// canary is checked; a large or huge block's size less the guard page; 0
// for a zero-size block.  Small or big by where the block lives.
size_t hardened_usable_size(const void *ptr, size_t usize, const char *fn);

}  // namespace arenalloc

#endif
