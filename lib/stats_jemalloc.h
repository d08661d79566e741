// stats_jemalloc.h — malloc_stats_print's JSON in jemalloc 5.3's layout
// (opts "J"), for tools written against jemalloc.
#ifndef ARENALLOC_STATS_JEMALLOC_H
#define ARENALLOC_STATS_JEMALLOC_H

#include "stats.h"
#include "stats_emitter.h"

namespace arenalloc {

// Writes {"jemalloc": {...}} for heap h: merged is every arena summed
// (nullptr: no "merged" section), scratch the space one arena's snapshot
// is read into.  The caller holds the report lock that guards both.
void stats_print_jemalloc_json(Emitter &e, const HeapSnapshot &h, const ArenaSnapshot *merged,
                               ArenaSnapshot *scratch, const char *opts);

}  // namespace arenalloc

#endif
