// options.h — MALLOC_OPTIONS in the BSD style.  Three sources, each read
// left to right, later letters overriding earlier ones: the name the
// /etc/malloc.conf symbolic link points to, the MALLOC_OPTIONS environment
// variable (not in setuid/setgid programs) and the _malloc_options global.
// An upper-case letter turns a behaviour on or doubles a value, lower case
// turns it off or halves it, and a decimal count repeats the next letter.
#ifndef ARENALLOC_OPTIONS_H
#define ARENALLOC_OPTIONS_H

#include <cstdint>

#include "util.h"

namespace arenalloc {

struct Options {
    bool abort_on_warning;  // A: warnings are fatal
    bool print_summary;     // P: print the summary at exit
    unsigned lg_chunk;      // K/k: log2 of the chunk size
    int narenas_shift;      // N/n: arenas = (4 x CPUs) << shift (or >> -shift)
    int lg_dirty_ratio;     // F/f: dirty pages allowed = active >> this (or << -this)
};

extern AA_HIDDEN Options g_options;

// Bounds of the numeric options (documented in arenalloc(3)).
constexpr unsigned kMaxArenas = 4096;
constexpr int kLgDirtyRatioDefault = 3;  // dirty up to 1/8 of active
constexpr int kLgDirtyRatioMin = -10;    // dirty up to 1024 x active (F)
constexpr int kLgDirtyRatioMax = 30;     // dirty down to the one-chunk floor (f)

// Parses the three sources into g_options.  Runs once, during
// initialization, without allocating.
void options_init();

// Parses one string into g_options (used by options_init and the tests).
void options_parse(const char *opts);

}  // namespace arenalloc

#endif
