// api.cc — the exported C interface: thin wrappers and nothing else.  Only
// the names listed in Symbol.map leave the shared library.
//
// Every name is spelled ARENALLOC_NAME(name): compiled with
// -DARENALLOC_SYMBOL_PREFIX=P (configure --with-symbol-prefix, and always
// for lib/libarenalloc_prefixed) it defines Pmalloc etc. instead, so that
// the library no longer replaces the process's malloc.  Nothing else in
// lib/ depends on the prefix: the fork and thread-exit hooks are
// registered with the internal functions, not through these names.
#include <stddef.h>

#include "allocator.h"
#include "ctl.h"
#include "init.h"
#include "mallocx.h"
#include "thread_state.h"
#include "malloc_np.h"
#include "debug_descriptor.h"
#include "stats.h"
#include "summary.h"
#include "util.h"

using namespace arenalloc;

extern "C" {

// The debug descriptor (debug_descriptor.cc) is read by debuggers only:
// nothing in the allocator refers to it, so a static link would leave its
// object out of the program.  This reference keeps it wherever malloc is.
extern "C" const struct arenalloc_debug_descriptor ARENALLOC_NAME(arenalloc_debug_descriptor);
__attribute__((used)) static const void *const debug_descriptor_anchor =
    &ARENALLOC_NAME(arenalloc_debug_descriptor);

AA_EXPORT AA_ENTRY void *ARENALLOC_NAME(malloc)(size_t size) { return aa_malloc(size); }
AA_EXPORT void *ARENALLOC_NAME(calloc)(size_t n, size_t size) { return aa_calloc(n, size); }
AA_EXPORT void *ARENALLOC_NAME(realloc)(void *ptr, size_t size) { return aa_realloc(ptr, size); }
AA_EXPORT void *ARENALLOC_NAME(reallocarray)(void *ptr, size_t n, size_t size) { return aa_reallocarray(ptr, n, size); }
AA_EXPORT void *ARENALLOC_NAME(reallocf)(void *ptr, size_t size) { return aa_reallocf(ptr, size); }
AA_EXPORT AA_ENTRY void ARENALLOC_NAME(free)(void *ptr) { aa_free(ptr); }
AA_EXPORT int ARENALLOC_NAME(posix_memalign)(void **out, size_t align, size_t size) {
    return aa_posix_memalign(out, align, size);
}
AA_EXPORT void *ARENALLOC_NAME(aligned_alloc)(size_t align, size_t size) { return aa_aligned_alloc(align, size); }
AA_EXPORT void *ARENALLOC_NAME(memalign)(size_t align, size_t size) { return aa_memalign(align, size); }
AA_EXPORT void *ARENALLOC_NAME(valloc)(size_t size) { return aa_valloc(size); }
AA_EXPORT void *ARENALLOC_NAME(pvalloc)(size_t size) { return aa_pvalloc(size); }
AA_EXPORT void ARENALLOC_NAME(free_sized)(void *ptr, size_t size) ARENALLOC_NOTHROW {
    aa_free_sized(ptr, 1, size, "free_sized");
}
AA_EXPORT void ARENALLOC_NAME(free_aligned_sized)(void *ptr, size_t align, size_t size) ARENALLOC_NOTHROW {
    aa_free_sized(ptr, align, size, "free_aligned_sized");
}
AA_EXPORT size_t ARENALLOC_NAME(malloc_usable_size)(void *ptr) ARENALLOC_NOTHROW { return aa_usable_size(ptr); }

// jemalloc's non-standard interface (malloc_np.h).
AA_EXPORT void *ARENALLOC_NAME(mallocx)(size_t size, int flags) { return aa_mallocx(size, flags); }
AA_EXPORT void *ARENALLOC_NAME(rallocx)(void *ptr, size_t size, int flags) { return aa_rallocx(ptr, size, flags); }
AA_EXPORT size_t ARENALLOC_NAME(xallocx)(void *ptr, size_t size, size_t extra, int flags) {
    return aa_xallocx(ptr, size, extra, flags);
}
AA_EXPORT size_t ARENALLOC_NAME(sallocx)(const void *ptr, int flags) { return aa_sallocx(ptr, flags); }
AA_EXPORT void ARENALLOC_NAME(dallocx)(void *ptr, int flags) { aa_dallocx(ptr, flags); }
AA_EXPORT void ARENALLOC_NAME(sdallocx)(void *ptr, size_t size, int flags) { aa_sdallocx(ptr, size, flags); }
AA_EXPORT size_t ARENALLOC_NAME(nallocx)(size_t size, int flags) { return aa_nallocx(size, flags); }

AA_EXPORT size_t ARENALLOC_NAME(arenalloc_purge)(void) { return aa_purge(); }

// glibc's malloc_trim: the padding is ignored (nothing is kept at the top
// of a heap here); 1 when memory was given back, as glibc documents.
AA_EXPORT int ARENALLOC_NAME(malloc_trim)(size_t pad) ARENALLOC_NOTHROW {
    (void)pad;
    return aa_purge() != 0 ? 1 : 0;
}

AA_EXPORT void ARENALLOC_NAME(malloc_stats_print)(void (*write_cb)(void *, const char *), void *cbopaque,
                                  const char *opts) {
    stats_print(write_cb, cbopaque, opts);
}

AA_EXPORT int ARENALLOC_NAME(mallctl)(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) {
    return ctl_byname(name, oldp, oldlenp, newp, newlen);
}

AA_EXPORT int ARENALLOC_NAME(mallctlnametomib)(const char *name, size_t *mibp, size_t *miblenp) {
    return ctl_nametomib(name, mibp, miblenp);
}

AA_EXPORT int ARENALLOC_NAME(mallctlbymib)(const size_t *mib, size_t miblen, void *oldp, size_t *oldlenp,
                           void *newp, size_t newlen) {
    return ctl_bymib(mib, miblen, oldp, oldlenp, newp, newlen);
}

// Entry points for a C library that imports arenalloc as its malloc: its
// fork() calls _malloc_prefork() before forking and _malloc_postfork() (in
// the parent) or _malloc_postfork_child() (in the child) after; its thread
// exit calls _malloc_thread_cleanup().  The stand-alone library registers
// the same functions with pthread_atfork and a thread-specific-data key.
AA_EXPORT void ARENALLOC_NAME(_malloc_prefork)(void) { malloc_prefork(); }
AA_EXPORT void ARENALLOC_NAME(_malloc_postfork)(void) { malloc_postfork_parent(); }
AA_EXPORT void ARENALLOC_NAME(_malloc_postfork_child)(void) { malloc_postfork_child(); }
AA_EXPORT void ARENALLOC_NAME(_malloc_thread_cleanup)(void) { thread_cleanup(); }

AA_EXPORT int ARENALLOC_NAME(arenalloc_get_summary)(struct arenalloc_summary *out) {
    return summary_collect(out) ? 0 : -1;
}

}  // extern "C"
