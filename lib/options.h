// options.h — MALLOC_OPTIONS in the BSD style.  Three sources, each read
// left to right, later letters overriding earlier ones: the name the
// /etc/malloc.conf symbolic link points to, the MALLOC_OPTIONS environment
// variable (not in setuid/setgid programs) and the _malloc_options global.
// An upper-case letter turns a behaviour on or doubles a value, lower case
// turns it off or halves it, and a decimal count repeats the next letter.
//
// One table (option_list.h) gives the struct, the defaults, both parsers,
// the opt.* mallctl names and the test that the manual documents them.
#ifndef ARENALLOC_OPTIONS_H
#define ARENALLOC_OPTIONS_H

#include <cstddef>
#include <cstdint>

#include "config.h"
#include "util.h"

namespace arenalloc {

// One member per row of option_list.h, in its order.
struct Options {
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) type field;
#define AA_LETTER_ONLY(letter, kind, type, field, dflt, min, max, text) type field;
#include "option_list.h"
    // An explicit a: a bad pointer is reported and the call ignored (the
    // block leaks) instead of abort().  Off by default, and A turns it off
    // again, so that only a lower-case a written out changes the default.
    bool continue_on_bad_pointer;
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
    kNone,      // no letter: the long form and mallctl only
};

// A row of option_list.h as the parsers read it.
struct OptionDef {
    char letter;            // upper case; the lower case letter is the inverse; 0: none
    OptionKind kind;
    bool Options::*flag;    // a bool option
    int Options::*value;    // a number, within [min, max]
    int min;
    int max;
    const char *text;       // what the value is, for warnings
    const char *long_name;  // the long form's name, or nullptr
};

// The rows with a letter, in alphabetical order.
extern const OptionDef *const kOptionTable;
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
