// init.h — lazy initialization, the arena table and the fork handlers.
// The first allocation initializes everything (options, chunk geometry,
// arena 0) using only system calls, so nothing recurses into malloc; the
// hooks that might allocate (pthread_atfork, atexit) are installed
// afterwards, when the allocator can already serve them but before it
// opens to the other threads.
#ifndef ARENALLOC_INIT_H
#define ARENALLOC_INIT_H

#include <atomic>
#include <cstddef>

#include "util.h"

namespace arenalloc {

struct Arena;

extern AA_HIDDEN std::atomic<bool> g_initialized;
// The arena table: its first g_narenas_auto slots are the automatic arenas
// that threads are spread over (the N option), each null until first used;
// after them come the arenas arenas.create made, g_narenas slots in all.
// g_narenas only grows (arena_create_manual, release store after the
// arena is in its slot), so a reader that sees an index sees its arena.
extern AA_HIDDEN unsigned g_narenas_auto;
extern AA_HIDDEN unsigned g_narenas;
extern AA_HIDDEN std::atomic<Arena *> *g_arenas;

// Room in the table (kMaxArenas automatic arenas fit), and the bound on
// an index arenas.create gives: below mallctl's "all arenas" index 4096,
// and within the twelve bits of jemalloc's MALLOCX_ARENA(a) flag.
constexpr unsigned kArenaTableSlots = 4096;
constexpr unsigned kArenaIndexLimit = 4095;

// malloc's inline path serves sizes 1..g_fast_limit (compared as
// size - 1 < g_fast_limit, so 0 is never inline).  0 until initialization,
// and kept 0 when an option needs every call on the slow path.
extern AA_HIDDEN size_t g_fast_limit;

AA_NOINLINE bool init_slow();

// Refuses (one line, then abort()) a system whose pages are bigger than
// kPage: runs, purges and guard pages would cover parts of the kernel's
// pages.  Smaller system pages are fine (every kPage boundary is one of
// theirs).  Called by init_slow() with platform_page_size().
void check_system_page(size_t system_page);

AA_ALWAYS_INLINE bool ensure_initialized() {
    if (AA_LIKELY(g_initialized.load(std::memory_order_acquire)))
        return true;
    return init_slow();
}

// Arena index (< g_narenas), created on first use; nullptr if it cannot be.
Arena *arena_get(unsigned index);

// Arena index if it exists already, else nullptr (no creation).
Arena *arena_peek(unsigned index);

// A new arena outside the automatic ones (arenas.create): its index in
// *index, or nullptr when the table is full or memory is short.  Threads
// reach it only by choice (thread.arena), and no other arena lends it
// pages or borrows its pages (arena_large.cc).
Arena *arena_create_manual(unsigned *index);

inline bool arena_index_is_manual(unsigned index) { return index >= g_narenas_auto; }

// Take every allocator lock before fork(); release them in the parent;
// re-create them in the child.
void malloc_prefork();
void malloc_postfork_parent();
void malloc_postfork_child();

}  // namespace arenalloc

#endif
