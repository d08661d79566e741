// report.h — every message the allocator prints.  Kept out of line and
// cold so the message text and formatting stay off the fast paths; all of
// it is written with write(2) from stack buffers, never with malloc/stdio.
#ifndef ARENALLOC_REPORT_H
#define ARENALLOC_REPORT_H

#include <cstddef>

#include "util.h"

namespace arenalloc {

// A bad pointer passed to fn ("free", "realloc", ...): one line
//   arenalloc: free(): invalid pointer 0x...: <finding>
// then abort(); with an explicit a in the options it returns, and the
// caller ignores the call: leaking is always preferred to corrupting.
// Before initialization the options are zero, which aborts.
__attribute__((cold)) AA_NOINLINE void report_invalid_pointer(const char *fn, const void *ptr,
                                                               const char *finding);

// The system's pages are bigger than the build's (init.cc,
// check_system_page): "arenalloc: the system's pages are <system> bytes,
// larger than the <built> bytes arenalloc was built for (configure
// --with-lg-page)", then abort().
[[noreturn]] __attribute__((cold)) AA_NOINLINE void report_page_too_large(size_t system_page,
                                                                           size_t built_page);

// Out of memory with the X option: "arenalloc: <fn>(): out of memory
// (<size> bytes)", then abort().
[[noreturn]] __attribute__((cold)) AA_NOINLINE void report_out_of_memory(const char *fn,
                                                                          size_t size);

// An options warning: "<prog>: (malloc) <text>"; fatal when A is in force.
__attribute__((cold)) AA_NOINLINE void report_options_warning(const char *text, char c);

// The hardened profile (S) found a freed region changed when malloc was
// about to hand it out again: "arenalloc: malloc(): write after free to
// 0x<block+offset> (block 0x<block>, size class <region_size>)", then
// abort().
[[noreturn]] __attribute__((cold)) AA_NOINLINE void report_write_after_free(
    const void *block, size_t offset, size_t region_size);

// The hardened profile (S) found the canary after a small block changed
// when fn ("free", "realloc", ...) checked it: "arenalloc: <fn>(): write
// past the end of block 0x<p> (requested <n> bytes, size class <size>)",
// or "(size trailer overwritten, size class <size>)" when the stored size
// itself is gone, then abort().
[[noreturn]] __attribute__((cold)) AA_NOINLINE void report_overflow(
    const char *fn, const void *ptr, size_t requested, bool size_known, size_t region_size);

}  // namespace arenalloc

#endif
