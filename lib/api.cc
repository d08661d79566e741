// api.cc — the exported C interface: thin wrappers and nothing else.  Only
// the names listed in Symbol.map leave the shared library.
#include <stddef.h>

#include "allocator.h"
#include "ctl.h"
#include "init.h"
#include "thread_state.h"
#include "arenalloc.h"
#include "stats.h"
#include "summary.h"
#include "util.h"

using namespace arenalloc;

extern "C" {

AA_EXPORT void *malloc(size_t size) { return aa_malloc(size); }
AA_EXPORT void *calloc(size_t n, size_t size) { return aa_calloc(n, size); }
AA_EXPORT void *realloc(void *ptr, size_t size) { return aa_realloc(ptr, size); }
AA_EXPORT void *reallocarray(void *ptr, size_t n, size_t size) { return aa_reallocarray(ptr, n, size); }
AA_EXPORT void free(void *ptr) { aa_free(ptr); }
AA_EXPORT int posix_memalign(void **out, size_t align, size_t size) {
    return aa_posix_memalign(out, align, size);
}
AA_EXPORT void *aligned_alloc(size_t align, size_t size) { return aa_aligned_alloc(align, size); }
AA_EXPORT void *memalign(size_t align, size_t size) { return aa_aligned_alloc(align, size); }
AA_EXPORT void *valloc(size_t size) { return aa_valloc(size); }
AA_EXPORT void *pvalloc(size_t size) { return aa_pvalloc(size); }
AA_EXPORT void free_sized(void *ptr, size_t size) ARENALLOC_NOTHROW {
    aa_free_sized(ptr, 1, size, "free_sized");
}
AA_EXPORT void free_aligned_sized(void *ptr, size_t align, size_t size) ARENALLOC_NOTHROW {
    aa_free_sized(ptr, align, size, "free_aligned_sized");
}
AA_EXPORT size_t malloc_usable_size(void *ptr) ARENALLOC_NOTHROW { return aa_usable_size(ptr); }

AA_EXPORT size_t arenalloc_purge(void) { return aa_purge(); }

// glibc's malloc_trim: the padding is ignored (nothing is kept at the top
// of a heap here); 1 when memory was given back, as glibc documents.
AA_EXPORT int malloc_trim(size_t pad) ARENALLOC_NOTHROW {
    (void)pad;
    return aa_purge() != 0 ? 1 : 0;
}

AA_EXPORT void malloc_stats_print(void (*write_cb)(void *, const char *), void *cbopaque,
                                  const char *opts) {
    stats_print(write_cb, cbopaque, opts);
}

AA_EXPORT int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) {
    return ctl_byname(name, oldp, oldlenp, newp, newlen);
}

AA_EXPORT int mallctlnametomib(const char *name, size_t *mibp, size_t *miblenp) {
    return ctl_nametomib(name, mibp, miblenp);
}

AA_EXPORT int mallctlbymib(const size_t *mib, size_t miblen, void *oldp, size_t *oldlenp,
                           void *newp, size_t newlen) {
    return ctl_bymib(mib, miblen, oldp, oldlenp, newp, newlen);
}

// Entry points for a C library that imports arenalloc as its malloc: its
// fork() calls _malloc_prefork() before forking and _malloc_postfork() (in
// the parent) or _malloc_postfork_child() (in the child) after; its thread
// exit calls _malloc_thread_cleanup().  The stand-alone library registers
// the same functions with pthread_atfork and a thread-specific-data key.
AA_EXPORT void _malloc_prefork(void) { malloc_prefork(); }
AA_EXPORT void _malloc_postfork(void) { malloc_postfork_parent(); }
AA_EXPORT void _malloc_postfork_child(void) { malloc_postfork_child(); }
AA_EXPORT void _malloc_thread_cleanup(void) { thread_cleanup(); }

AA_EXPORT int arenalloc_get_summary(struct arenalloc_summary *out) {
    return summary_collect(out) ? 0 : -1;
}

}  // extern "C"
