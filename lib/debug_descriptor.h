/*
 * debug_descriptor.h — the one contract between the allocator and the
 * tools that inspect a heap from outside (tools/walker, arenalloc-stat,
 * the gdb and mdb helpers).  The library exports one constant object,
 * arenalloc_debug_descriptor, found by its dynamic symbol even in a
 * stripped library; it says where the allocator's globals are and how the
 * structures a walker reads are laid out, so no tool depends on debug
 * information or on being built from the same sources.
 *
 * C-compatible (the mdb module and other tools include it); fixed-width
 * fields only, addresses in 8-byte slots, so a reader can take the whole
 * object in one read.  A reader checks magic, byte_order, pointer_size
 * and version before anything else, and reads a field only through its
 * aa_debug_field (offset, size): a field grown from 4 to 8 bytes keeps
 * its meaning without a new version.  Nor does a field appended at the
 * end need one: an older reader reads the prefix it knows, and a newer
 * one reads the field only when the descriptor's size reaches past it.
 *
 * Changing a described structure: tests/unit/debug_descriptor_test lists
 * every member of each and fails when one is added, removed or moved;
 * update the descriptor (lib/debug_descriptor.cc), the list, the layout
 * hash below, and ARENALLOC_DEBUG_VERSION when an old walker would
 * misread the new layout (a field removed or its meaning changed).
 */
#ifndef ARENALLOC_DEBUG_DESCRIPTOR_H
#define ARENALLOC_DEBUG_DESCRIPTOR_H

#include <stdint.h>

/* The bytes "arnalbg1" on a little-endian machine, "1gblanra" on a big-endian one. */
#define ARENALLOC_DEBUG_MAGIC 0x3167626c616e7261ULL
/* 4: TCacheBin's last field counts down to the cache's next tick
 * (tick_left) where it counted requests (nmalloc); nothing else changed,
 * and a reader that does not read that field reads version 3 as 4. */
#define ARENALLOC_DEBUG_VERSION 4
#define ARENALLOC_DEBUG_BYTE_ORDER 0x01020304u
/* FNV-1a of the member names of every described structure, in order
 * (see the unit test): bumped by whoever changes a structure. */
#define ARENALLOC_DEBUG_LAYOUT_HASH 0x9ab794fd67da5e11ULL

#ifdef __cplusplus
extern "C" {
#endif

/* An address in the target: 8 bytes whatever the pointer size.  A
 * 32-bit target's pointer is the slot's first 4 bytes and the rest is
 * zero: u64 reads it only on a little-endian target (on a big-endian one
 * it holds the address shifted up 32 bits). */
typedef union aa_debug_addr {
    const void *ptr;
    uint64_t u64;
} aa_debug_addr;

/* Where a member lies in its structure. */
typedef struct aa_debug_field {
    uint32_t offset;
    uint32_t size;
} aa_debug_field;

/* A global variable of the allocator. */
typedef struct aa_debug_var {
    aa_debug_addr addr;
    uint64_t size;
} aa_debug_var;

struct aa_debug_mutex_layout { /* Mutex: its lock statistics */
    uint32_t size, pad_;
    aa_debug_field nacquired, ncontended;
    aa_debug_field taken; /* nonzero while held (a target stopped inside the allocator) */
};

struct aa_debug_bin_layout { /* Bin: one small class of an arena */
    uint32_t size, pad_;
    aa_debug_field current, nonfull, nmalloc, ndalloc, nrequests, nfills,
        nflushes, nruns, curruns, empty;
};

struct aa_debug_large_layout { /* LargeClassStats */
    uint32_t size, pad_;
    aa_debug_field nmalloc, ndalloc, curruns;
};

struct aa_debug_arena_stats_layout { /* ArenaStats */
    uint32_t size, pad_;
    aa_debug_field nmalloc_small, ndalloc_small, nmalloc_large, ndalloc_large,
        allocated_small, allocated_large, nchunks, npurge_passes, nmadvise,
        npurged_pages;
};

struct aa_debug_arena_layout { /* Arena */
    uint32_t size, pad_;
    aa_debug_field mutex, index, nthreads, bins, free_buckets, chunks,
        nempty_chunks, nactive, ndirty, dirty_first, stats, large, nkept;
};

struct aa_debug_chunk_layout { /* Chunk header; map[] is the page map */
    uint32_t size, pad_;
    aa_debug_field magic, arena, next, prev, npages, header_pages, nfree_pages,
        from_sbrk, map;
    uint64_t page_map_entry_size;
};

struct aa_debug_run_layout { /* Run descriptor */
    uint32_t size, pad_;
    aa_debug_field base, region_size, reciprocal, nregs, nfree, state,
        size_class, npages, ndirty, chunk, next, prev, dirty_next, bitmap;
};

struct aa_debug_huge_layout { /* Huge: a live huge block */
    uint32_t size, pad_;
    aa_debug_field addr, usize, mapped, arena, next;
};

struct aa_debug_huge_stats_layout { /* HugeStats */
    uint32_t size, pad_;
    aa_debug_field nmalloc, ndalloc, allocated, mapped;
};

struct aa_debug_tcache_layout { /* TCache: a thread cache */
    uint32_t size, pad_;
    aa_debug_field bins, arena, next_free, next_all;
};

struct aa_debug_tcache_bin_layout { /* TCacheBin: one class's stack */
    uint32_t size, pad_;
    aa_debug_field top, stack, limit; /* void **: [stack, top) of [stack, limit) */
    aa_debug_field tick_left;         /* int64_t: requests until the cache's next tick */
};

struct aa_debug_bin_info_layout { /* BinInfo: geometry of a small class */
    uint32_t size, pad_;
    aa_debug_field region_size, run_pages, nregs, reciprocal;
};

struct aa_debug_size_classes_layout { /* SizeClassTable */
    uint32_t size, pad_;
    aa_debug_field size_, bin; /* size_: uint64_t size[nclasses] */
};

struct aa_debug_chunk_geometry_layout { /* ChunkGeometry */
    uint32_t size, pad_;
    aa_debug_field lg_chunk, chunk_size, npages, header_pages, large_max;
};

/* The chunk registry: a two-level radix tree over address >> lg_granule.
 * root[key >> leaf_bits] is a leaf (or 0) of 2^leaf_bits slots; a slot
 * holds an owner address | tag. */
struct aa_debug_registry {
    aa_debug_var root; /* the root array itself */
    uint32_t lg_granule, address_bits, root_bits, leaf_bits;
    uint64_t tag_chunk, tag_huge, tag_mask;
};

/* Page map entries: run address | tag | flags. */
struct aa_debug_page_map {
    uint64_t tag_small, tag_free, tag_large, tag_header, tag_mask;
    uint64_t dirty_flag, flag_mask;
};

struct arenalloc_debug_descriptor {
    /* Fixed header: the same place in every version. */
    uint64_t magic;        /* ARENALLOC_DEBUG_MAGIC */
    uint32_t version;      /* ARENALLOC_DEBUG_VERSION */
    uint32_t size;         /* sizeof(struct arenalloc_debug_descriptor) */
    uint32_t byte_order;   /* ARENALLOC_DEBUG_BYTE_ORDER as stored */
    uint32_t pointer_size; /* sizeof(void *) in the target */
    uint64_t layout_hash;  /* ARENALLOC_DEBUG_LAYOUT_HASH */
    char package_version[24];

    /* Constants fixed when the library was built. */
    uint64_t page_size, lg_page, quantum, nclasses, nbins, small_max,
        max_run_regions, bitmap_words, chunk_magic;

    /* Globals. */
    aa_debug_var initialized;   /* std::atomic<bool>: set once the heap exists */
    aa_debug_var narenas;       /* unsigned: slots in the arena table */
    aa_debug_var arenas;        /* Arena *[narenas] pointer (the table's address) */
    aa_debug_var chunk_geometry; /* ChunkGeometry */
    aa_debug_var size_classes;  /* SizeClassTable */
    aa_debug_var huge_live;     /* Huge *: list head through Huge::next */
    aa_debug_var huge_stats;    /* HugeStats */
    aa_debug_var huge_cached;   /* size_t: bytes of freed huge mappings kept */
    aa_debug_var base_mapped;   /* uint64_t: metadata bytes */
    aa_debug_var threads_seen;  /* uint64_t: threads ever given an arena */
    aa_debug_var tcache_all;    /* TCache *: every cache, via next_all */
    aa_debug_var tcache_free;   /* TCache *: caches of exited threads, via next_free */
    aa_debug_var hardened_key;  /* uintptr_t: key of the S profile's canaries */

    struct aa_debug_registry registry;
    struct aa_debug_page_map page_map;

    struct aa_debug_mutex_layout mutex;
    struct aa_debug_arena_layout arena;
    struct aa_debug_arena_stats_layout arena_stats;
    struct aa_debug_bin_layout bin;
    struct aa_debug_large_layout large;
    struct aa_debug_chunk_layout chunk;
    struct aa_debug_run_layout run;
    struct aa_debug_huge_layout huge;
    struct aa_debug_huge_stats_layout huge_stats_layout;
    struct aa_debug_tcache_layout tcache;
    struct aa_debug_tcache_bin_layout tcache_bin;
    struct aa_debug_bin_info_layout bin_info;
    struct aa_debug_size_classes_layout size_class_table;
    struct aa_debug_chunk_geometry_layout chunk_geometry_layout;

    /* Appended to version 3: a reader reads a field below only when size
     * reaches past it, and otherwise takes the default it names. */
    uint64_t tcache_nclasses; /* entries of TCache::bins[]: the nbins small
                                 classes, then the smallest large ones (an
                                 entry of class c >= nbins is the start of a
                                 large run of class c, which its arena counts
                                 as allocated); absent: nbins */
};

/* The allocator's own instance (exported by libarenalloc). */
extern const struct arenalloc_debug_descriptor arenalloc_debug_descriptor;

#ifdef __cplusplus
}
#endif

#endif
