// ctl.h — the mallctl() name space: jemalloc's control and statistics
// interface (mallctl, mallctlnametomib, mallctlbymib) over a constant tree
// of names.
//
// A name is a dotted path ("stats.arenas.0.bins.3.curregs"); a component
// that is a number (<i>, <j>) is decimal in a name and the number itself
// in a MIB, while a named component is its position among its siblings.
// The stats.* values (and arena.<i>.initialized) come from a snapshot taken
// when "epoch" is written (or on first use) and kept until the next write,
// so that a tool reads one consistent picture; everything else is live.
//
// Errors, as jemalloc's: ENOENT for an unknown name, an index out of range
// or an arena without statistics; EINVAL when *oldlenp or newlen is not the
// value's size (on a short or long read, min(size, *oldlenp) bytes are
// copied and *oldlenp says how many); EPERM for writing a read-only name,
// or reading or writing a trigger such as "thread.tcache.flush"; EFAULT
// for an action that cannot be done (resetting an automatic arena, a
// decay time out of bounds), as jemalloc answers; EAGAIN when the
// allocator cannot initialize or the snapshot cannot get memory.
//
// Safe from any thread at any time: nothing allocates from the heap (the
// snapshot lives in static storage and in metadata memory), and one mutex
// guards the snapshot.
#ifndef ARENALLOC_CTL_H
#define ARENALLOC_CTL_H

#include <cstddef>

namespace arenalloc {

// Deepest name in the tree ("stats.arenas.<i>.bins.<j>.nmalloc" is 6).
constexpr size_t kCtlMaxDepth = 6;

// The arena index that stands for all arenas merged (stats.arenas.<i>) or
// all arenas at once (arena.<i>.purge): jemalloc's MALLCTL_ARENAS_ALL.
// jemalloc 4's spelling, the index narenas, means the same.
constexpr size_t kCtlArenasAll = 4096;

int ctl_byname(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

// Translates name to a MIB.  *miblenp is the room in mibp on entry and the
// number of components written on return; a name with more components than
// that room gives a partial MIB (0 is returned) to complete by hand.  An
// inner name ("stats.arenas") gives its prefix, as jemalloc's does: the
// caller appends the rest (an arena index, then names' positions) and
// calls ctl_bymib, which answers ENOENT for a MIB that stops at an inner
// node.
int ctl_nametomib(const char *name, size_t *mibp, size_t *miblenp);

int ctl_bymib(const size_t *mib, size_t miblen, void *oldp, size_t *oldlenp, void *newp,
              size_t newlen);

// The snapshot's lock, around fork().  ctl_prefork must come before every
// other allocator lock: the snapshot is taken with this one held.
void ctl_prefork();
void ctl_postfork_parent();
void ctl_postfork_child();

}  // namespace arenalloc

#endif
