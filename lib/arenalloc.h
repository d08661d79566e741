/*
 * arenalloc.h — the non-standard interface of the arenalloc allocator.
 * The standard functions (malloc, free, ...) are declared by <stdlib.h>
 * and <malloc.h> as usual.
 *
 * A library built with a symbol prefix P (./configure
 * --with-symbol-prefix=P, or lib/libarenalloc_prefixed with arena_) names
 * every exported function P<name>: Pmalloc, Pfree, Pmallctl,
 * Parenalloc_purge, P_malloc_prefork...  and leaves the process's own
 * malloc alone.  Its users define ARENALLOC_SYMBOL_PREFIX as P (the
 * installed header of such a build does so on the line below), and this
 * header then declares the prefixed names, standard functions included;
 * ARENALLOC_NAME(malloc) spells Pmalloc.
 */
#ifndef ARENALLOC_H
#define ARENALLOC_H

/* ARENALLOC_SYMBOL_PREFIX_LINE */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * glibc's <malloc.h> declares malloc_usable_size and malloc_trim as not
 * throwing; in C++ the declarations here must say the same, in whichever
 * order the two headers are included.  Prefixed names are declared only
 * here.
 */
#if defined(__cplusplus) && defined(__GLIBC__) && !defined(ARENALLOC_SYMBOL_PREFIX)
#define ARENALLOC_NOTHROW noexcept(true)
#else
#define ARENALLOC_NOTHROW
#endif

#ifdef ARENALLOC_SYMBOL_PREFIX
#define ARENALLOC_PASTE_(a, b) a##b
#define ARENALLOC_PASTE(a, b) ARENALLOC_PASTE_(a, b)
#define ARENALLOC_NAME(name) ARENALLOC_PASTE(ARENALLOC_SYMBOL_PREFIX, name)

/* The standard functions, which <stdlib.h> declares only unprefixed. */
void *ARENALLOC_NAME(malloc)(size_t size);
void *ARENALLOC_NAME(calloc)(size_t n, size_t size);
void *ARENALLOC_NAME(realloc)(void *ptr, size_t size);
void *ARENALLOC_NAME(reallocarray)(void *ptr, size_t n, size_t size);
void ARENALLOC_NAME(free)(void *ptr);
int ARENALLOC_NAME(posix_memalign)(void **out, size_t align, size_t size);
void *ARENALLOC_NAME(aligned_alloc)(size_t align, size_t size);
void *ARENALLOC_NAME(memalign)(size_t align, size_t size);
void *ARENALLOC_NAME(valloc)(size_t size);
void *ARENALLOC_NAME(pvalloc)(size_t size);
#else
#define ARENALLOC_NAME(name) name
#endif

/*
 * FreeBSD's reallocf (its <stdlib.h> declares it; glibc's and musl's do
 * not): realloc that also frees ptr when the new block cannot be had.
 */
void *ARENALLOC_NAME(reallocf)(void *ptr, size_t size);

/*
 * The entry points a C library calls from fork() and thread exit
 * (arenalloc(3), "In a C library"); the stand-alone library does the same
 * through pthread_atfork handlers and a thread-exit destructor.
 */
void ARENALLOC_NAME(_malloc_prefork)(void);
void ARENALLOC_NAME(_malloc_postfork)(void);
void ARENALLOC_NAME(_malloc_postfork_child)(void);
void ARENALLOC_NAME(_malloc_thread_cleanup)(void);

/*
 * C23 sized deallocation.  size (and alignment) must be those the block was
 * allocated with; the size is checked against the block's size class, and
 * a mismatch is reported like an invalid pointer (arenalloc(3)).
 */
void ARENALLOC_NAME(free_sized)(void *ptr, size_t size) ARENALLOC_NOTHROW;
void ARENALLOC_NAME(free_aligned_sized)(void *ptr, size_t alignment, size_t size) ARENALLOC_NOTHROW;

/* Usable size of a block returned by this allocator (0 for NULL). */
size_t ARENALLOC_NAME(malloc_usable_size)(void *ptr) ARENALLOC_NOTHROW;

/*
 * Gives free memory back to the system now: the calling thread's cache is
 * returned to the arenas, every dirty page is purged and every empty chunk
 * unmapped.  Returns the number of bytes given back.  malloc_trim(0) does
 * the same and returns 1 when anything was given back.
 */
size_t ARENALLOC_NAME(arenalloc_purge)(void);
int ARENALLOC_NAME(malloc_trim)(size_t pad) ARENALLOC_NOTHROW;

/*
 * Writes a report of the allocator's statistics through write_cb (to
 * standard error when write_cb is NULL), in pieces, allocating nothing.
 * opts, as jemalloc 5.3's: "J" for JSON in jemalloc's layout instead of
 * text; g, m, a, b, l, x leave out the general information, the merged
 * arenas, the per-arena sections, the bin tables, the large-class tables
 * and the lock counts.  arenalloc's own: "A" for JSON in arenalloc's
 * layout, t to leave out the text's heap totals.  See arenalloc(3),
 * STATISTICS.
 */
void ARENALLOC_NAME(malloc_stats_print)(void (*write_cb)(void *, const char *), void *cbopaque,
                                        const char *opts);

/*
 * Named queries and controls in the style of jemalloc's mallctl: read a
 * value into *oldp (*oldlenp bytes), write one from newp (newlen bytes).
 * Return 0, or ENOENT (unknown name), EINVAL (wrong size or value) or
 * EPERM (a read-only name written).  The names are listed in
 * arenalloc(3), STATISTICS.
 */
int ARENALLOC_NAME(mallctl)(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
int ARENALLOC_NAME(mallctlnametomib)(const char *name, size_t *mibp, size_t *miblenp);
int ARENALLOC_NAME(mallctlbymib)(const size_t *mib, size_t miblen, void *oldp, size_t *oldlenp,
                                 void *newp, size_t newlen);

/* A whole-heap summary; the mapped_* figures are bytes mapped now. */
struct arenalloc_summary {
    uint64_t nmalloc_small;   /* small allocations served */
    uint64_t nmalloc_large;   /* large allocations served */
    uint64_t nmalloc_huge;    /* huge allocations served */
    uint64_t nfree;           /* blocks freed (all kinds) */
    uint64_t mapped_chunks;   /* arena chunks, retained spares included */
    uint64_t mapped_huge;     /* mappings of live huge blocks (not cached ones) */
    uint64_t mapped_metadata; /* the allocator's own metadata */
    unsigned narenas;         /* arenas configured */
    unsigned narenas_used;    /* arenas created so far */
    uint64_t nthreads;        /* threads ever given an arena */
};

/* Fills *out; returns 0, or -1 when the allocator cannot initialize. */
int ARENALLOC_NAME(arenalloc_get_summary)(struct arenalloc_summary *out);

#ifdef __cplusplus
}
#endif

#endif /* ARENALLOC_H */
