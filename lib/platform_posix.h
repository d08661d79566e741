// platform_posix.h — what platform_posix.cc shares with the one system
// file configure builds beside it (platform_linux.cc, platform_freebsd.cc
// or platform_illumos.cc, chosen by host_os).  Together the two files
// define every function of platform.h, each exactly once.  Internal to the
// platform layer: the rest of lib/ includes platform.h only.
#ifndef ARENALLOC_PLATFORM_POSIX_H
#define ARENALLOC_PLATFORM_POSIX_H

#include <cstddef>
#include <cstdint>

namespace arenalloc {

// mmap(hint, size, read-write, private anonymous | extra_flags), counted
// in platform_counters().  hint is mmap's addr argument (an alignment
// where extra_flags holds illumos' MAP_ALIGN).  nullptr on failure; errno
// may change.
void *posix_map(void *hint, size_t size, int extra_flags);

// Counts what a system file does to mappings with its own calls.
void posix_count_purge();                       // one madvise
void posix_count_huge();                        // one request for huge pages
void posix_count_grown(size_t bytes);           // grown in place by bytes
void posix_count_moved_away(size_t old_bytes);  // old range gone (moved)

// pages_resize_in_place for new_size <= old_size (unmaps the tail, true);
// false when the mapping would have to grow.
bool posix_shrink_in_place(void *addr, size_t old_size, size_t new_size);

// 64 bits from addresses and the clock: not secret, for systems or moments
// without a random source at hand.
uint64_t posix_weak_seed();

}  // namespace arenalloc

#endif
