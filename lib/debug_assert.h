// debug_assert.h — internal consistency checks, compiled in by configure
// --enable-debug.  AA_ASSERT(cond) states an invariant that the
// allocator's own code keeps (never a check of the caller's input: bad
// pointers are reported by report.h in every build).  A failed check means
// the heap is already inconsistent, so it writes one line
//   arenalloc: internal check failed: arena.cc:123: r->nfree <= r->nregs
// with write(2) (no malloc, no stdio: the allocator may be mid-update)
// and aborts.  In other builds AA_ASSERT is nothing: cond is type-checked
// but never evaluated, so a check may scan a bitmap or the page map.
//
// (Not named assert.h: lib/ is on every include path, where it would
// shadow the C library's <assert.h>.)
#ifndef ARENALLOC_DEBUG_ASSERT_H
#define ARENALLOC_DEBUG_ASSERT_H

#include "config.h"
#include "util.h"

namespace arenalloc {

constexpr bool kDebug = ARENALLOC_DEBUG != 0;

#if ARENALLOC_DEBUG
[[noreturn]] __attribute__((cold)) AA_NOINLINE void debug_assert_failed(const char *file,
                                                                         int line,
                                                                         const char *cond);
#endif

}  // namespace arenalloc

#if ARENALLOC_DEBUG
#define AA_ASSERT(cond)                                                     \
    (AA_LIKELY(cond) ? static_cast<void>(0)                                 \
                     : ::arenalloc::debug_assert_failed(__FILE__, __LINE__, #cond))
#else
#define AA_ASSERT(cond) static_cast<void>(sizeof(!(cond)))
#endif

#endif
