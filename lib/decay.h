// decay.h — who applies the decay rule, and when.  The decay time
// (g_options.decay_ms) is the longest a page stays dirty, or a freed huge
// mapping cached, while the process uses the allocator at all: what has
// been unused for nine tenths of it is purged at the next look, and looks
// come at least every tenth.  An arena looks whenever it releases a run;
// an arena nobody touches any more (its threads idle or gone), and the
// huge mapping cache, need someone else: any thread that takes a slow
// path (a thread-cache fill or flush, every 512th allocation of a class
// from a cache (tcache.cc: kDecayLookAllocs), a large or huge allocation or
// free) calls
// decay_tick(), which every tenth of the decay time sweeps every arena and
// the huge cache.  The background thread, when on, sweeps once a second.
#ifndef ARENALLOC_DECAY_H
#define ARENALLOC_DECAY_H

#include <cstdint>

#include "options.h"
#include "util.h"

namespace arenalloc {

// How long a dirty page or cached mapping may stay unused before the next
// look purges it, and the longest time between sweeps.
inline uint64_t decay_sweep_interval_ms() {
    uint64_t tenth = static_cast<uint64_t>(g_options.decay_ms) / 10;
    return tenth != 0 ? tenth : 1;
}
inline uint64_t decay_age_limit_ms() {
    return static_cast<uint64_t>(g_options.decay_ms) - decay_sweep_interval_ms();
}
// The same for an arena with a decay time of its own (arena.<i>.dirty_decay_ms):
// nine tenths of it.  Sweeps still come every tenth of the option's time.
inline uint64_t decay_age_limit_ms(int32_t decay_ms) {
    uint64_t ms = static_cast<uint64_t>(decay_ms);
    uint64_t tenth = ms / 10 != 0 ? ms / 10 : 1;
    return ms - tenth;
}

// Sweeps when the last sweep is at least a tenth of the decay time old.
// Call with no allocator lock held.
void decay_tick();

// Applies the decay rule to every arena and the huge cache now.
void decay_sweep();

// Makes the next decay_tick() sweep (tests, and after fork).
void decay_tick_expire();

}  // namespace arenalloc

#endif
