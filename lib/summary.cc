// summary.cc — collecting and printing the summary.
#include "summary.h"

#include "arenalloc.h"
#include "chunk.h"
#include "platform.h"
#include "stats.h"
#include "util.h"

namespace arenalloc {

bool summary_collect(arenalloc_summary *out) {
    *out = arenalloc_summary{};
    HeapSnapshot h;
    if (!stats_heap(&h))
        return false;
    out->nmalloc_small = h.nmalloc_small;
    out->nmalloc_large = h.nmalloc_large;
    out->nmalloc_huge = h.huge_nmalloc;
    out->nfree = h.nfree;
    out->mapped_chunks = h.nchunks * g_chunk.chunk_size;
    out->mapped_huge = h.huge_mapped;
    out->mapped_metadata = h.metadata;
    out->narenas = h.narenas;
    out->narenas_used = h.narenas_used;
    out->nthreads = h.nthreads_seen;
    return true;
}

void summary_print() {
    arenalloc_summary s;
    if (!summary_collect(&s))
        return;
    char buf[512];
    LineBuffer line(buf, sizeof(buf));
    line.str("arenalloc: allocations served: ")
        .dec(s.nmalloc_small + s.nmalloc_large + s.nmalloc_huge)
        .str(" (small ").dec(s.nmalloc_small)
        .str(", large ").dec(s.nmalloc_large)
        .str(", huge ").dec(s.nmalloc_huge).str(")\n");
    line.str("arenalloc: frees: ").dec(s.nfree).chr('\n');
    line.str("arenalloc: bytes mapped at exit: ")
        .dec(s.mapped_chunks + s.mapped_huge + s.mapped_metadata)
        .str(" (chunks ").dec(s.mapped_chunks)
        .str(", huge ").dec(s.mapped_huge)
        .str(", metadata ").dec(s.mapped_metadata).str(")\n");
    line.str("arenalloc: arenas: ").dec(s.narenas_used).str(" used of ").dec(s.narenas)
        .str(", threads seen: ").dec(s.nthreads).chr('\n');
    platform_write_stderr(line.data(), line.size());
}

}  // namespace arenalloc
