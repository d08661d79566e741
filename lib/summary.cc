// summary.cc — collecting and printing the summary.
#include "summary.h"

#include "arena.h"
#include "arenalloc.h"
#include "base.h"
#include "chunk.h"
#include "huge.h"
#include "init.h"
#include "platform.h"
#include "tcache.h"
#include "thread_state.h"

namespace arenalloc {

bool summary_collect(arenalloc_summary *out) {
    *out = arenalloc_summary{};
    if (!ensure_initialized())
        return false;
    // The caller's own cache counts are merged first; other live threads'
    // are merged when their caches next fill.
    TCache *tc = tls_thread_state.tcache;
    if (tc != &g_tcache_none)
        arena_merge_counts(tc->arena, &tc->counts);
    uint64_t nchunks = 0;
    for (unsigned i = 0; i < g_narenas; i++) {
        Arena *a = arena_peek(i);
        if (a == nullptr)
            continue;
        out->narenas_used++;
        MutexGuard guard(a->mutex);
        out->nmalloc_small += a->stats.nmalloc_small;
        out->nmalloc_large += a->stats.nmalloc_large;
        out->nfree += a->stats.ndalloc_small + a->stats.ndalloc_large;
        nchunks += a->stats.nchunks;
    }
    HugeStats huge;
    huge_stats(&huge);
    out->nmalloc_huge = huge.nmalloc;
    out->nfree += huge.ndalloc;
    out->mapped_chunks = nchunks * g_chunk.chunk_size;
    out->mapped_huge = huge.mapped;
    out->mapped_metadata = base_mapped();
    out->narenas = g_narenas;
    out->nthreads = thread_state_nthreads_seen();
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
