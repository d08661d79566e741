/*
 * arenalloc_walker.h — the heap walker's C interface.
 *
 * The walker inspects an arenalloc heap in ANOTHER address space (a
 * stopped process, a core file, a debugger's target) through one callback
 * that reads target memory; it never dereferences a target pointer.  All
 * it knows of the allocator comes from the exported debug descriptor
 * (lib/debug_descriptor.h), so it works with a stripped library.
 *
 * The target must not change while a call runs (stop the process).  Each
 * call reads what it needs afresh: nothing is cached between calls, so one
 * walker can follow a process that runs between calls.
 *
 * Plain C types only (every figure a uint64_t), for use from C, from an
 * mdb module and from Python ctypes.  Functions that can fail return -1
 * and leave a one-line reason in aa_walker_error().
 */
#ifndef ARENALLOC_WALKER_H
#define ARENALLOC_WALKER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AA_WALKER_API_VERSION 1

/* Reads len bytes of the target at addr into buf; returns 0 when all of
 * them were read, anything else when not. */
typedef int (*aa_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

typedef struct aa_walker aa_walker;

/* Opens the heap whose descriptor (the arenalloc_debug_descriptor
 * object) is at descriptor_addr in the target.  NULL on failure, with a
 * one-line reason in err (wrong magic: not arenalloc; another version;
 * unreadable memory). */
aa_walker *aa_walker_open(aa_read_fn read, void *ctx, uint64_t descriptor_addr,
                          char *err, size_t errlen);
void aa_walker_close(aa_walker *w);
const char *aa_walker_error(const aa_walker *w);

struct aa_config {
    uint64_t descriptor_version;
    uint64_t page_size;
    uint64_t quantum;
    uint64_t chunk_size;
    uint64_t lg_chunk;
    uint64_t chunk_header_pages;
    uint64_t nbins;        /* small classes */
    uint64_t nclasses;     /* all classes in the table */
    uint64_t nlarge;       /* large classes usable with this chunk size */
    uint64_t small_max;
    uint64_t large_max;
    uint64_t narenas;      /* arena slots */
    uint64_t initialized;  /* 0: the allocator has not run yet (empty heap) */
    char package_version[24];
};
int aa_walker_config(aa_walker *w, struct aa_config *out);

/* Whole-heap figures: the "stats" section of malloc_stats_print. */
struct aa_totals {
    uint64_t narenas, narenas_used;
    uint64_t allocated, active, metadata, resident, mapped, retained, dirty;
    uint64_t nchunks;
    uint64_t huge_nmalloc, huge_ndalloc, huge_current, huge_allocated, huge_mapped;
    uint64_t huge_cached;      /* bytes of freed huge mappings kept for reuse */
    uint64_t nmalloc_small, nmalloc_large, nmalloc, nfree;
    uint64_t nthreads_seen;
    uint64_t tcaches;          /* thread caches in use (not of exited threads) */
    uint64_t tcache_regions;   /* free blocks held in thread caches (small
                                  regions and blocks of the cached large
                                  classes) */
    uint64_t tcache_bytes;
};
int aa_walker_totals(aa_walker *w, struct aa_totals *out);

/* One arena (the per-arena section of malloc_stats_print).  Returns 1,
 * 0 when arena index was never created, -1 on error. */
struct aa_arena_stats {
    uint64_t index, address, nthreads;
    uint64_t mapped, retained, active, dirty, resident;
    uint64_t allocated_small, allocated_large;
    uint64_t nmalloc_small, ndalloc_small, nmalloc_large, ndalloc_large;
    uint64_t npurge_passes, nmadvise, npurged_pages;
    uint64_t lock_acquired, lock_contended;
    uint64_t nchunks;
    uint64_t lock_held;  /* the target was stopped holding this arena's lock:
                            its figures may be caught mid-update */
};
int aa_walker_arena(aa_walker *w, unsigned arena, struct aa_arena_stats *out);

/* Small class bin of an arena; same return values as aa_walker_arena. */
struct aa_bin_stats {
    uint64_t bin, region_size, nregs, run_size;
    uint64_t nmalloc, ndalloc, nrequests, curregs, curruns, nruns, nfills, nflushes;
};
int aa_walker_bin(aa_walker *w, unsigned arena, unsigned bin, struct aa_bin_stats *out);

/* Large class lclass (0 .. nlarge-1) of an arena. */
struct aa_large_stats {
    uint64_t lclass, size, nmalloc, ndalloc, curruns;
};
int aa_walker_large(aa_walker *w, unsigned arena, unsigned lclass, struct aa_large_stats *out);

/* Iteration: the callback returns 0 to go on; anything else stops the
 * walk and is returned.  The functions return 0 at the end, -1 on error. */
struct aa_chunk_info {
    uint64_t address, size, arena_index, arena_address;
    uint64_t npages, header_pages, nfree_pages, from_sbrk;
};
int aa_walker_chunks(aa_walker *w, int (*cb)(void *ctx, const struct aa_chunk_info *), void *ctx);

enum aa_run_state { AA_RUN_FREE = 0, AA_RUN_SMALL = 1, AA_RUN_LARGE = 2 };
struct aa_run_info {
    uint64_t chunk, address, npages, state; /* enum aa_run_state */
    uint64_t size_class;                    /* small: bin; large: class index */
    uint64_t region_size;                   /* small: region; large: block size */
    uint64_t nregs, nfree;                  /* small */
    uint64_t ndirty;                        /* free: dirty pages */
    uint64_t descriptor;                    /* the Run in metadata memory */
};
/* Runs of the chunk at chunk_address, in address order. */
int aa_walker_runs(aa_walker *w, uint64_t chunk_address,
                   int (*cb)(void *ctx, const struct aa_run_info *), void *ctx);

struct aa_huge_info {
    uint64_t address, usize, mapped, arena_address, descriptor;
};
int aa_walker_huge(aa_walker *w, int (*cb)(void *ctx, const struct aa_huge_info *), void *ctx);

/* What an address is. */
enum aa_state {
    AA_STATE_NOT_HEAP = 0,   /* not in any arenalloc chunk */
    AA_STATE_ALLOCATED = 1,  /* in a live small or large block */
    AA_STATE_FREE = 2,       /* in a free small region */
    AA_STATE_TCACHE = 3,     /* in a free block held by a thread cache */
    AA_STATE_HUGE = 4,       /* in a live huge block */
    AA_STATE_HEADER = 5,     /* in a chunk's header or page map */
    AA_STATE_FREE_PAGES = 6, /* in a free run of pages */
    AA_STATE_UNUSED = 7,     /* past the last region of a run, or past a huge block's end */
};
struct aa_find_result {
    uint64_t address;
    uint64_t state;          /* enum aa_state */
    uint64_t chunk;          /* arena chunk, or the huge mapping's start */
    uint64_t arena_index;    /* UINT64_MAX when unknown */
    uint64_t run;            /* run start (small, large, free pages) */
    uint64_t run_pages;
    uint64_t size_class;     /* class index; UINT64_MAX for huge or none */
    uint64_t size;           /* usable size of the block (region, large, huge) */
    uint64_t region_index;   /* small */
    uint64_t region_start;   /* start of the block holding address */
    uint64_t offset;         /* address - region_start */
    uint64_t tcache;         /* AA_STATE_TCACHE: the cache holding it */
    uint64_t page_map_entry; /* arena chunk: address of the page's map entry */
    uint64_t run_descriptor; /* the Run describing the page, when there is one */
};
int aa_walker_find(aa_walker *w, uint64_t address, struct aa_find_result *out);
/* "allocated", "free", "in a thread cache", "huge", ... */
const char *aa_walker_state_name(uint64_t state);

/* Checks every invariant the walker knows (page maps against runs,
 * bitmaps against counts, bins and free lists, arena and huge totals,
 * the chunk registry against the arenas and the huge list, thread cache
 * entries); finding(ctx, text) is called once per problem.  Returns the
 * number of problems (0: heap OK), -1 when the heap could not be read. */
int aa_walker_verify(aa_walker *w, void (*finding)(void *ctx, const char *text), void *ctx);

/* Reports as malloc'd strings (free with aa_walker_free_string), NULL on
 * error.  flags: AA_REPORT_JSON; AA_REPORT_NO_BINS / NO_LARGE leave out
 * the per-class tables of the text report. */
#define AA_REPORT_JSON 1
#define AA_REPORT_NO_BINS 2
#define AA_REPORT_NO_LARGE 4
char *aa_walker_report(aa_walker *w, int flags);
/* One address, in words ("0x...: small region 3 of class 48 (48 bytes)
 * at 0x..., allocated"), or JSON. */
char *aa_walker_find_report(aa_walker *w, uint64_t address, int flags);
/* The findings, one a line, then "heap OK" or "heap CORRUPT: N problems";
 * or JSON {"ok": bool, "findings": [...]}. */
char *aa_walker_verify_report(aa_walker *w, int flags);
void aa_walker_free_string(char *s);

#ifdef __cplusplus
}
#endif

#endif
