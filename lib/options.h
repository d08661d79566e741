// options.h — MALLOC_OPTIONS in the BSD style.  Three sources, each read
// left to right, later letters overriding earlier ones: the name the
// /etc/malloc.conf symbolic link points to, the MALLOC_OPTIONS environment
// variable (not in setuid/setgid programs) and the _malloc_options global.
// An upper-case letter turns a behaviour on or doubles a value, lower case
// turns it off or halves it, and a decimal count repeats the next letter.
//
// One table (kOptionTable) drives the parser, the list of options in force
// and the test that the manual documents every letter.
#ifndef ARENALLOC_OPTIONS_H
#define ARENALLOC_OPTIONS_H

#include <cstddef>
#include <cstdint>

#include "config.h"
#include "util.h"

namespace arenalloc {

struct Options {
    bool abort_on_warning;  // A: warnings are fatal
    // An explicit a: a bad pointer is reported and the call ignored (the
    // block leaks) instead of abort().  Off by default, and A turns it off
    // again, so that only a lower-case a written out changes the default.
    bool continue_on_bad_pointer;
    bool use_sbrk;          // D: sbrk as a source of chunks
    bool use_mmap;          // M: mmap as a source of chunks
    int lg_dirty_ratio;     // F/f: dirty pages allowed = active >> this (or << -this)
    int lg_tcache_gc;       // G/g: thread-cache GC every 2^this allocations; 0 = off
    int tcache_shift;       // H/h: thread-cache capacity << this; kTcacheShiftOff = off
    bool junk;              // J: 0xa5 on allocation, 0x5a on free
    int lg_chunk;           // K/k: log2 of the chunk size
    int narenas;            // N/n: number of arenas
    bool print_summary;     // P: print the summary at exit
    bool trace;             // U: trace every call
    bool malloc0_null;      // V: malloc(0) returns NULL
    bool xmalloc;           // X: abort instead of returning NULL
    bool zero;              // Z: zero every new block
    bool hardened;          // S: the hardened profile (hardened.h)
    int decay_ms;           // long form only: the decay time of dirty pages
    bool lazy_purge;        // long form only: purge with MADV_FREE, not MADV_DONTNEED
    bool thp;               // long form only: ask for huge pages for chunks and huge blocks
    bool shared_large;      // long form only: arena 0 serves every thread's large runs (arena.cc)
};

extern AA_HIDDEN Options g_options;

// Defaults and bounds (documented in arenalloc(3)).
constexpr unsigned kMaxArenas = 4096;
constexpr int kLgDirtyRatioDefault = 0;  // dirty up to the recent peak of active
constexpr int kLgDirtyRatioMin = -10;    // F's bound: the ratio rule is off
constexpr int kLgDirtyRatioMax = 30;     // dirty down to the one-chunk floor (f)
constexpr int kLgTcacheGcDefault = 13;   // 8192 allocations
constexpr int kLgTcacheGcMax = 30;
constexpr int kTcacheShiftMax = 3;
constexpr int kTcacheShiftOff = -7;      // "7h" turns thread caches off
constexpr int kDecayMsDefault = 10000;
constexpr int kDecayMsMin = 100;
constexpr int kDecayMsMax = 3600000;

// S is on from the start in a build configured with --enable-hardened
// (a libc's own config.h may leave the macro out: off).
#ifndef ARENALLOC_HARDENED_DEFAULT
#define ARENALLOC_HARDENED_DEFAULT 0
#endif
constexpr bool kHardenedDefault = ARENALLOC_HARDENED_DEFAULT != 0;

enum class OptionKind : uint8_t {
    kBool,      // upper case on, lower case off
    kLog,       // upper case +1, lower case -1, within [min, max]
    kLogDown,   // upper case -1, lower case +1 (F: a smaller shift allows more)
    kDouble,    // upper case x2, lower case /2, within [min, max]
    kIgnored,   // accepted for compatibility, no effect
};

struct OptionDef {
    char letter;          // upper case; the lower case letter is the inverse
    OptionKind kind;
    bool Options::*flag;  // kBool
    int Options::*value;  // kLog, kLogDown, kDouble
    int min;
    int max;
    const char *name;     // what the value is, for warnings
};

extern const OptionDef kOptionTable[];
extern const unsigned kOptionTableSize;

// Restores the defaults (narenas from the CPU count).
void options_reset();

// Parses the three sources into g_options after options_reset().  Runs
// once, during initialization, without allocating.
void options_init();

// Parses one string into g_options (used by options_init and the tests).
// A string that starts "name:" is in the long form, "name:value,...", for
// values that doubling expresses badly (narenas:12, decay_ms:5000); any
// other string is BSD letters.
void options_parse(const char *opts);

// Path of the configuration link; tests substitute their own.
void options_set_conf_path(const char *path);

// Writes the boolean options as letters (upper case when on), NUL-
// terminated; returns the length.
size_t options_in_force(char *buf, size_t cap);

// True when an option needs every call to take the slow path (junk or
// zero filling, tracing, aborting on failure, no thread caches, the
// hardened profile).
bool options_need_slow_path();

}  // namespace arenalloc

#endif
