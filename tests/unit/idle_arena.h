// idle_arena.h — an arena of the table that no thread is assigned to, for
// unit tests that call the arena's functions directly: nothing but the
// test touches it.
#ifndef ARENALLOC_TESTS_IDLE_ARENA_H
#define ARENALLOC_TESTS_IDLE_ARENA_H

#include <atf-c++.hpp>

#include "arena.h"
#include "init.h"
#include "options.h"

// Arena i, created if need be.  Large runs come from the arena asked
// (shared_large off), so a test sees them where it made them.
inline arenalloc::Arena *idle_arena(unsigned i) {
    ATF_REQUIRE(arenalloc::ensure_initialized());
    ATF_REQUIRE(arenalloc::g_narenas > i);
    arenalloc::g_options.shared_large = false;
    arenalloc::Arena *a = arenalloc::arena_get(i);
    ATF_REQUIRE(a != nullptr);
    ATF_REQUIRE_EQ(a->index, i);
    return a;
}

#endif
