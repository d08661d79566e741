// arenalloc_mdb.cc — an illumos mdb module for arenalloc heaps.
//
//   > ::load arenalloc            (arenalloc.so in a module directory)
//   > ::arenalloc_stats [-jb]     the statistics report (-j JSON, -b brief)
//   > ::arenalloc_arenas          one line per arena
//   > ADDR::arenalloc_find [-j]   the block holding ADDR: start, class, state
//   > ::arenalloc_verify [-j]     check the heap: "heap OK" or what is wrong
//   > ::walk arenalloc_chunk      the arenas' chunks (each with its aa_chunk_info)
//
// Every figure comes from the heap walker (tools/walker/, linked
// into the module), reading the target with mdb_vread; the heap is found
// through the exported symbol arenalloc_debug_descriptor, so a stripped
// libc or libarenalloc will do.  It works on a live process and on a core
// file alike: mdb_vread reads either.
//
// Built by configure only where <sys/mdb_modapi.h> exists (illumos); on
// other systems tests/mdb/fake_mdb compiles it against a stand-in header
// and runs its dcmds over the fake's own memory.
#include <sys/mdb_modapi.h>

#include <stdint.h>
#include <stdlib.h>

#include "arenalloc_walker.h"

namespace {

const char kDescriptorSymbol[] = "arenalloc_debug_descriptor";

int read_target(void *ctx, uint64_t addr, void *buf, size_t len) {
    (void)ctx;
    return mdb_vread(buf, len, static_cast<uintptr_t>(addr)) == static_cast<ssize_t>(len) ? 0 : 1;
}

// The walker over the current target, or NULL after saying why.
aa_walker *open_heap() {
    GElf_Sym sym;
    if (mdb_lookup_by_name(kDescriptorSymbol, &sym) != 0) {
        mdb_warn("arenalloc: no arenalloc in the target: no symbol %s\n", kDescriptorSymbol);
        return nullptr;
    }
    char why[512];
    aa_walker *w = aa_walker_open(read_target, nullptr, sym.st_value, why, sizeof(why));
    if (w == nullptr)
        mdb_warn("arenalloc: %s\n", why);
    return w;
}

// Prints a report the walker made (NULL: its error) and closes it.
int print_report(aa_walker *w, char *text) {
    int rc = DCMD_OK;
    if (text == nullptr) {
        mdb_warn("arenalloc: %s\n", aa_walker_error(w));
        rc = DCMD_ERR;
    } else {
        mdb_printf("%s", text);
        aa_walker_free_string(text);
    }
    aa_walker_close(w);
    return rc;
}

int dcmd_stats(uintptr_t addr, uint_t flags, int argc, const mdb_arg_t *argv) {
    (void)addr;
    uint_t json = 0, brief = 0;
    if ((flags & DCMD_ADDRSPEC) != 0 ||
        mdb_getopts(argc, argv, 'j', MDB_OPT_SETBITS, TRUE, &json, 'b', MDB_OPT_SETBITS, TRUE,
                    &brief, NULL) != argc)
        return DCMD_USAGE;
    aa_walker *w = open_heap();
    if (w == nullptr)
        return DCMD_ERR;
    int report = (json ? AA_REPORT_JSON : 0) | (brief ? AA_REPORT_NO_BINS | AA_REPORT_NO_LARGE : 0);
    return print_report(w, aa_walker_report(w, report));
}

int dcmd_find(uintptr_t addr, uint_t flags, int argc, const mdb_arg_t *argv) {
    uint_t json = 0;
    if ((flags & DCMD_ADDRSPEC) == 0 ||
        mdb_getopts(argc, argv, 'j', MDB_OPT_SETBITS, TRUE, &json, NULL) != argc)
        return DCMD_USAGE;
    aa_walker *w = open_heap();
    if (w == nullptr)
        return DCMD_ERR;
    return print_report(w, aa_walker_find_report(w, addr, json ? AA_REPORT_JSON : 0));
}

int dcmd_verify(uintptr_t addr, uint_t flags, int argc, const mdb_arg_t *argv) {
    (void)addr;
    uint_t json = 0;
    if ((flags & DCMD_ADDRSPEC) != 0 ||
        mdb_getopts(argc, argv, 'j', MDB_OPT_SETBITS, TRUE, &json, NULL) != argc)
        return DCMD_USAGE;
    aa_walker *w = open_heap();
    if (w == nullptr)
        return DCMD_ERR;
    return print_report(w, aa_walker_verify_report(w, json ? AA_REPORT_JSON : 0));
}

int dcmd_arenas(uintptr_t addr, uint_t flags, int argc, const mdb_arg_t *argv) {
    (void)addr;
    (void)argv;
    if ((flags & DCMD_ADDRSPEC) != 0 || argc != 0)
        return DCMD_USAGE;
    aa_walker *w = open_heap();
    if (w == nullptr)
        return DCMD_ERR;
    aa_config cfg;
    aa_walker_config(w, &cfg);
    mdb_printf("%5s %-18s %7s %6s %12s %12s %12s %12s %12s %10s %10s\n", "arena", "address",
               "threads", "chunks", "mapped", "active", "dirty", "small", "large", "nmalloc",
               "ndalloc");
    typedef unsigned long long ull;
    for (unsigned i = 0; i < cfg.narenas; i++) {
        aa_arena_stats a;
        int rc = aa_walker_arena(w, i, &a);
        if (rc < 0) {
            mdb_warn("arenalloc: %s\n", aa_walker_error(w));
            aa_walker_close(w);
            return DCMD_ERR;
        }
        if (rc == 0)
            continue;
        mdb_printf("%5u 0x%-16llx %7llu %6llu %12llu %12llu %12llu %12llu %12llu %10llu %10llu\n", i,
                   (ull)a.address, (ull)a.nthreads, (ull)a.nchunks, (ull)a.mapped, (ull)a.active,
                   (ull)a.dirty, (ull)a.allocated_small, (ull)a.allocated_large,
                   (ull)(a.nmalloc_small + a.nmalloc_large),
                   (ull)(a.ndalloc_small + a.ndalloc_large));
    }
    aa_walker_close(w);
    return DCMD_OK;
}

// The chunk walk: walk_init gathers the chunks (the walker's iteration),
// walk_step hands out one, with its aa_chunk_info as the walk data.
struct ChunkWalk {
    aa_chunk_info *chunks;
    size_t n, cap, next;
};

int gather_chunk(void *ctx, const aa_chunk_info *c) {
    ChunkWalk *cw = static_cast<ChunkWalk *>(ctx);
    if (cw->n == cw->cap) {
        size_t cap = cw->cap != 0 ? 2 * cw->cap : 16;
        void *p = realloc(cw->chunks, cap * sizeof(aa_chunk_info));
        if (p == nullptr)
            return 1;
        cw->chunks = static_cast<aa_chunk_info *>(p);
        cw->cap = cap;
    }
    cw->chunks[cw->n++] = *c;
    return 0;
}

int chunk_walk_init(mdb_walk_state_t *wsp) {
    if (wsp->walk_addr != 0) {
        mdb_warn("arenalloc_chunk: a global walk (no address)\n");
        return WALK_ERR;
    }
    aa_walker *w = open_heap();
    if (w == nullptr)
        return WALK_ERR;
    ChunkWalk *cw = static_cast<ChunkWalk *>(calloc(1, sizeof(ChunkWalk)));
    int rc = cw == nullptr ? 1 : aa_walker_chunks(w, gather_chunk, cw);
    if (rc != 0) {
        mdb_warn("arenalloc_chunk: %s\n", rc < 0 ? aa_walker_error(w) : "out of memory");
        aa_walker_close(w);
        if (cw != nullptr)
            free(cw->chunks);
        free(cw);
        return WALK_ERR;
    }
    aa_walker_close(w);
    wsp->walk_data = cw;
    return WALK_NEXT;
}

int chunk_walk_step(mdb_walk_state_t *wsp) {
    ChunkWalk *cw = static_cast<ChunkWalk *>(wsp->walk_data);
    if (cw->next == cw->n)
        return WALK_DONE;
    const aa_chunk_info *c = &cw->chunks[cw->next++];
    wsp->walk_addr = static_cast<uintptr_t>(c->address);
    return wsp->walk_callback(wsp->walk_addr, c, wsp->walk_cbdata);
}

void chunk_walk_fini(mdb_walk_state_t *wsp) {
    ChunkWalk *cw = static_cast<ChunkWalk *>(wsp->walk_data);
    if (cw != nullptr)
        free(cw->chunks);
    free(cw);
}

const mdb_dcmd_t dcmds[] = {
    {"arenalloc_stats", "[-jb]", "arenalloc heap statistics (-j JSON, -b without class tables)",
     dcmd_stats, nullptr},
    {"arenalloc_arenas", nullptr, "arenalloc arenas, one a line", dcmd_arenas, nullptr},
    {"arenalloc_find", ":[-j]", "what an address is in the arenalloc heap: block, class, state",
     dcmd_find, nullptr},
    {"arenalloc_verify", "[-j]", "check the arenalloc heap: \"heap OK\" or what is wrong",
     dcmd_verify, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

const mdb_walker_t walkers[] = {
    {"arenalloc_chunk", "the chunks of every arenalloc arena", chunk_walk_init, chunk_walk_step,
     chunk_walk_fini, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr},
};

const mdb_modinfo_t modinfo = {MDB_API_VERSION, dcmds, walkers};

}  // namespace

extern "C" const mdb_modinfo_t *_mdb_init(void);
extern "C" const mdb_modinfo_t *_mdb_init(void) { return &modinfo; }
