// option_list.h — the one table of the allocator's options.  Every place
// that knows an option is generated from these rows: the Options struct
// (options.h), its defaults and the parsers' tables (options.cc), the
// opt.* mallctl names (ctl.cc), and the test that the manual documents
// every row (tests/unit/option_manual_test.cc).
//
// Include it after defining the row macros a reader needs (any left
// undefined expands to nothing); it undefines all six at its end, so it
// has no include guard and is included once per reading.
//
//   AA_OPTION(letter, kind, name, type, field, default, min, max, ctl_type, text)
//     letter    the upper-case letter, or 0 for none
//     kind      what the letter does (OptionKind); kNone without a letter
//     name      the key of name:value items, also mallctl's opt.<name>
//     type      bool or int: the type of Options::field
//     default   the value options_reset() gives it (an expression)
//     min, max  a number's bounds: a letter stops there, name:value
//               clamps to them (0, 0 for a bool)
//     ctl_type  the type mallctl("opt.<name>") reads
//     text      what it is, in a few words (the warnings use them)
//   AA_WORD_OPTION(letter, kind, name, field, default, off_words, on_words, text)
//     a bool option that jemalloc spells in words: name:value takes a
//     boolean or one of the words, and opt.<name> (const char *) reads
//     the first word of the list the value is in.  A list is words each
//     ended by '\0', ended by an empty word ("a\0b\0"); as a C string it
//     is its first word.
//   AA_LETTER_ONLY(letter, kind, type, field, default, min, max, text)
//     an option with a letter and nothing else
//   AA_IGNORED_LETTER(letter, text)
//     a letter of the BSD malloc accepted with no effect
//   AA_DERIVED_OPT(name, ctl_type, text)
//     an opt.* name that reports what the options add up to (ctl.cc
//     defines opt_<name>_value())
//   AA_CONF_KEY(key, text)
//     a key of jemalloc 5.3 with no field of its own: options.cc's
//     conf_<key>() maps its value onto the options (or checks it and
//     keeps it only for opt.*, where arenalloc has nothing to change)
//
// The rows are in the order of the opt.* names; the letter table is
// sorted at compile time.  Bounds and defaults with names are in
// options.h (kLgChunk* in chunk.h).

#ifndef AA_OPTION
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text)
#endif
#ifndef AA_WORD_OPTION
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text)
#endif
#ifndef AA_LETTER_ONLY
#define AA_LETTER_ONLY(letter, kind, type, field, dflt, min, max, text)
#endif
#ifndef AA_IGNORED_LETTER
#define AA_IGNORED_LETTER(letter, text)
#endif
#ifndef AA_DERIVED_OPT
#define AA_DERIVED_OPT(name, ctl_type, text)
#endif
#ifndef AA_CONF_KEY
#define AA_CONF_KEY(key, text)
#endif

// Warnings are fatal (and a bad pointer aborts: Options::continue_on_bad_pointer).
AA_OPTION('A', kBool, abort, bool, abort_on_warning, false, 0, 0, bool, "abort on warnings")
// Any warning about the options aborts once every source has been read.
AA_OPTION(0, kNone, abort_conf, bool, abort_conf, false, 0, 0, bool, "abort on a bad option")
// sbrk as a source of chunks.
AA_OPTION('D', kBool, sbrk, bool, use_sbrk, false, 0, 0, bool, "sbrk chunks")
// Dirty pages allowed = active >> this (or << -this); F lowers it.
AA_OPTION('F', kLogDown, lg_dirty_ratio, int, lg_dirty_ratio, kLgDirtyRatioDefault,
          kLgDirtyRatioMin, kLgDirtyRatioMax, ssize_t, "dirty page allowance")
// Thread-cache GC every 2^this allocations; 0 = off.
AA_OPTION('G', kLog, lg_tcache_gc, int, lg_tcache_gc, kLgTcacheGcDefault, 0, kLgTcacheGcMax,
          ssize_t, "thread-cache GC interval")
AA_OPTION(0, kNone, decay_ms, int, decay_ms, kDecayMsDefault, kDecayMsMin, kDecayMsMax,
          ssize_t, "decay time of dirty pages")
// jemalloc's name for decay_ms: -1 (never) is the longest decay, 0
// (at once) the shortest.
AA_DERIVED_OPT(dirty_decay_ms, ssize_t, "decay time of dirty pages")
AA_CONF_KEY(dirty_decay_ms, "decay time of dirty pages")
AA_OPTION(0, kNone, lazy_purge, bool, lazy_purge, false, 0, 0, bool, "purging with MADV_FREE")
// Pages purged with MADV_FREE are jemalloc's muzzy pages, never purged
// again: 0 without lazy_purge, -1 with it.
AA_DERIVED_OPT(muzzy_decay_ms, ssize_t, "decay time of muzzy pages")
AA_CONF_KEY(muzzy_decay_ms, "decay time of muzzy pages")
AA_WORD_OPTION(0, kNone, thp, thp, false, "default\0never\0", "always\0",
               "huge pages for chunks and huge blocks")
// Metadata never asks for huge pages: "disabled"; the key is checked only.
AA_DERIVED_OPT(metadata_thp, const char *, "huge pages for metadata")
AA_CONF_KEY(metadata_thp, "huge pages for metadata")
// Empty chunks and huge mappings are kept up to a bound whatever the key.
AA_DERIVED_OPT(retain, bool, "unused mappings kept")
AA_CONF_KEY(retain, "unused mappings kept")
// Threads take arenas round-robin: only "disabled" is accepted.
AA_DERIVED_OPT(percpu_arena, const char *, "arena per CPU")
AA_CONF_KEY(percpu_arena, "arena per CPU")
// The purging thread from the start (mallctl "background_thread" later).
AA_OPTION(0, kNone, background_thread, bool, background_thread, false, 0, 0, bool,
          "purging thread")
// Arena 0 serves every thread's large runs (arena.cc).
AA_OPTION(0, kNone, shared_large, bool, shared_large, true, 0, 0, bool,
          "large runs from arena 0")
// Thread-cache capacity << this; kTcacheShiftOff = off.
AA_OPTION('H', kLog, tcache_shift, int, tcache_shift, 0, kTcacheShiftOff, kTcacheShiftMax,
          ssize_t, "thread-cache size")
AA_DERIVED_OPT(tcache, bool, "thread caches in use")
// tcache:false is 7h; tcache:true undoes only that.
AA_CONF_KEY(tcache, "thread caches")
// The largest size cached (kTcacheLargeMax); the keys are checked only.
AA_DERIVED_OPT(tcache_max, size_t, "largest size in thread caches")
AA_CONF_KEY(tcache_max, "largest size in thread caches")
AA_CONF_KEY(lg_tcache_max, "largest size in thread caches")
// 0xa5 on allocation, 0x5a on free; jemalloc's "alloc" and "free" (one of
// the two) turn both on.
AA_WORD_OPTION('J', kBool, junk, junk, false, "false\0", "true\0alloc\0free\0",
               "junk filling")
// log2 of the chunk size.
AA_OPTION('K', kLog, lg_chunk, int, lg_chunk, kLgChunkDefault, kLgChunkMin, kLgChunkMax, size_t,
          "chunk size")
AA_OPTION('M', kBool, mmap, bool, use_mmap, true, 0, 0, bool, "mmap chunks")
// Four per CPU by default.
AA_OPTION('N', kDouble, narenas, int, narenas, default_narenas(), 1, kMaxArenas, unsigned,
          "arena count")
AA_OPTION('P', kBool, stats_print, bool, print_summary, false, 0, 0, bool, "statistics at exit")
// malloc_stats_print()'s opts for the report at exit.
AA_DERIVED_OPT(stats_print_opts, const char *, "statistics options at exit")
AA_CONF_KEY(stats_print_opts, "statistics options at exit")
AA_OPTION('U', kBool, utrace, bool, trace, false, 0, 0, bool, "tracing")
AA_OPTION('V', kBool, sysv, bool, malloc0_null, false, 0, 0, bool, "malloc(0) returns NULL")
AA_OPTION('X', kBool, xmalloc, bool, xmalloc, false, 0, 0, bool, "abort on out of memory")
AA_OPTION('Z', kBool, zero, bool, zero, false, 0, 0, bool, "zero filling")
// The hardened profile (hardened.h).
AA_LETTER_ONLY('S', kBool, bool, hardened, kHardenedDefault, 0, 0, "hardened profile")
// Size-class letters of the jemalloc-era BSD malloc.
AA_IGNORED_LETTER('C', "cacheline-spaced classes")
AA_IGNORED_LETTER('E', "medium classes")
AA_IGNORED_LETTER('Q', "quantum-spaced classes")

#undef AA_OPTION
#undef AA_WORD_OPTION
#undef AA_LETTER_ONLY
#undef AA_IGNORED_LETTER
#undef AA_DERIVED_OPT
#undef AA_CONF_KEY
