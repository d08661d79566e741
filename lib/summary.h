// summary.h — the whole-heap summary behind arenalloc_get_summary() and
// the P option's report at exit.  (Full statistics come later; this is
// the minimum an operator needs to see what the allocator did.)
#ifndef ARENALLOC_SUMMARY_H
#define ARENALLOC_SUMMARY_H

struct arenalloc_summary;

namespace arenalloc {

// Sums every arena (taking each lock in turn) and the huge blocks.
bool summary_collect(arenalloc_summary *out);

// Writes the four summary lines to stderr without allocating.
void summary_print();

}  // namespace arenalloc

#endif
