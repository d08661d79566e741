/*
 * malloc_np.h — the non-portable allocation interface as FreeBSD's libc
 * declares it: jemalloc 5's mallocx family and its MALLOCX_* flags, beside
 * what arenalloc.h declares (mallctl, mallctlnametomib, mallctlbymib,
 * malloc_stats_print, malloc_usable_size, reallocf and arenalloc's own
 * functions), which this header includes.  The two headers can be
 * included in either order, from C or C++.  See arenalloc(3),
 * "NON-STANDARD API".
 *
 * The flag values are those of jemalloc 5.3, bit for bit, so that a
 * program compiled against jemalloc's <malloc_np.h> passes the same
 * flags: bits 0-5 the base-2 logarithm of the alignment (0: none asked),
 * bit 6 zeroing, bits 8-19 a thread-cache number plus 2 (0: the calling
 * thread's own cache, 1: none), bits 20-31 an arena index plus 1 (0: the
 * calling thread's arena).
 */
#ifndef ARENALLOC_MALLOC_NP_H
#define ARENALLOC_MALLOC_NP_H

#include "arenalloc.h"

#ifndef MALLOCX_LG_ALIGN
/* Alignment to 1 << la bytes; la is not checked. */
#define MALLOCX_LG_ALIGN(la) ((int)(la))
/* Alignment to a bytes, a power of two (not checked). */
#define MALLOCX_ALIGN(a) ((int)__builtin_ctzll((unsigned long long)(a)))
/* New bytes read as zero (for rallocx and xallocx: those past the old size). */
#define MALLOCX_ZERO ((int)0x40)
/* Thread cache tc (see arenalloc(3): arenalloc has none to name). */
#define MALLOCX_TCACHE(tc) ((int)(((tc) + 2) << 8))
/* No thread cache: the block comes from, and goes back to, its arena. */
#define MALLOCX_TCACHE_NONE MALLOCX_TCACHE(-1)
/* Arena a (0 to the mallctl "arenas.narenas" less one). */
#define MALLOCX_ARENA(a) ((((int)(a)) + 1) << 20)
#endif

#ifndef MALLCTL_ARENAS_ALL
/* The arena index of mallctl names that mean every arena at once
 * ("arena.<i>.purge", "stats.arenas.<i>.*": the arenas merged). */
#define MALLCTL_ARENAS_ALL 4096
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ARENALLOC_NP_ALLOC_ATTRS(n) __attribute__((__malloc__, __alloc_size__(n)))
#define ARENALLOC_NP_RESIZE_ATTRS(n) __attribute__((__alloc_size__(n)))
#else
#define ARENALLOC_NP_ALLOC_ATTRS(n)
#define ARENALLOC_NP_RESIZE_ATTRS(n)
#endif

/* A program may define this to configure the allocator at link time, in
 * MALLOC_CONF's key:value form (arenalloc(3)); the library reads it if
 * it is there. */
extern const char *malloc_conf;

void *ARENALLOC_NAME(mallocx)(size_t size, int flags) ARENALLOC_NP_ALLOC_ATTRS(1);
void *ARENALLOC_NAME(rallocx)(void *ptr, size_t size, int flags) ARENALLOC_NP_RESIZE_ATTRS(2);
size_t ARENALLOC_NAME(xallocx)(void *ptr, size_t size, size_t extra, int flags);
size_t ARENALLOC_NAME(sallocx)(const void *ptr, int flags);
void ARENALLOC_NAME(dallocx)(void *ptr, int flags);
void ARENALLOC_NAME(sdallocx)(void *ptr, size_t size, int flags);
size_t ARENALLOC_NAME(nallocx)(size_t size, int flags);

#ifdef __cplusplus
}
#endif

#endif /* ARENALLOC_MALLOC_NP_H */
