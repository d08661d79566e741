// options.h — the options: BSD letters and jemalloc's key:value items.
// Five sources, each read left to right, a later setting overriding an
// earlier one: the malloc_conf global, the name the /etc/malloc.conf
// symbolic link points to, the MALLOC_CONF environment variable, the
// MALLOC_OPTIONS environment variable (the two variables not in
// setuid/setgid programs) and the _malloc_options global.  The jemalloc
// sources (malloc_conf, MALLOC_CONF) hold key:value items; the BSD ones
// may mix them with runs of letters (arenalloc(3), "Item syntax").
// An upper-case letter turns a behaviour on or doubles a value, lower case
// turns it off or halves it, and a decimal count repeats the next letter.
//
// One table (option_list.h) gives the struct, the defaults, the parsers,
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
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) bool field;
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
    kNone,      // no letter: key:value items and mallctl only
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
    const char *long_name;  // the key of name:value items, or nullptr
    // A word option's words (option_list.h, AA_WORD_OPTION); nullptr
    // for the others.
    const char *off_words;
    const char *on_words;
};

// The rows with a letter, in alphabetical order.
extern const OptionDef *const kOptionTable;
extern const unsigned kOptionTableSize;

// Restores the defaults (narenas from the CPU count).
void options_reset();

// Parses the five sources into g_options after options_reset().  Runs
// once, during initialization, without allocating.  With abort_conf set
// (by any source), a warning about any source aborts at the end.
void options_init();

// What a source may hold: jemalloc's key:value items only, or those mixed
// with runs of BSD letters.
enum class OptionSyntax : uint8_t { kKeyValue, kMixed };

// Parses one string into g_options (used by options_init and the tests):
// items separated by ','.  An item whose key (two or more letters, digits
// or '_', from a letter or '_') is followed by ':' is key:value; anything
// else, in the mixed syntax, is a run of letters, except a key followed by
// '=' or a bare key of the table, which are warned about.  source names
// the string in warnings.
void options_parse(const char *opts, const char *source = "malloc options",
                   OptionSyntax syntax = OptionSyntax::kMixed);

// The warnings the last options_init() (or options_reset() and parses)
// wrote.
unsigned options_warning_count();

// stats_print_opts: malloc_stats_print()'s opts for the report at exit
// ("" by default).
const char *options_stats_print_opts();

// Path of the configuration link; tests substitute their own.
void options_set_conf_path(const char *path);

// Writes the boolean options as letters (upper case when on), NUL-
// terminated; returns the length.
size_t options_in_force(char *buf, size_t cap);

// True when an option needs every call to take the slow path (junk or
// zero filling, tracing, aborting on failure, no thread caches, the
// hardened profile).
bool options_need_slow_path();

// True when an option needs every block to pass the arena, so that thread
// caches are not made: all of the above but S, whose checks run on the
// slow paths in front of the caches (hardened.h).
bool options_shut_tcache();

}  // namespace arenalloc

#endif
