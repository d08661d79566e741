// Unit tests of the internal consistency checks (lib/debug_assert.h):
// with configure --enable-debug a failed AA_ASSERT writes its one line and
// aborts, and the checks wired into the arena catch a corrupted run; in
// other builds AA_ASSERT neither evaluates its condition nor stops the
// program.  Each case runs in both kinds of build and checks what that
// build promises (kDebug).
#include <atf-c++.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "child_process.h"

#include "allocator.h"
#include "arena.h"
#include "chunk.h"
#include "debug_assert.h"
#include "init.h"
#include "size_classes.h"
#include "thread_state.h"

using namespace arenalloc;

namespace {

void failing_check() {
    AA_ASSERT(1 + 1 == 3);
}
constexpr int kFailingCheckLine = __LINE__ - 2;

// Frees a small region after adding one to its run's free count behind
// the arena's back: the bitmap then disagrees with nfree.
void free_with_corrupt_count() {
    if (!ensure_initialized())
        _exit(2);
    Arena *a = thread_arena();
    if (a == nullptr)
        _exit(2);
    unsigned bin = size_to_class(64);
    void *keep = arena_malloc_small(a, bin, false);  // the run stays alive
    void *p = arena_malloc_small(a, bin, false);
    if (keep == nullptr || p == nullptr)
        _exit(2);
    Chunk *c = chunk_containing(p);
    Run *r = page_map_run(c->map[chunk_page_index(c, p)]);
    r->nfree++;
    arena_free(c, p, "free");
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(debug_assert__condition_evaluated_only_in_debug);
ATF_TEST_CASE_BODY(debug_assert__condition_evaluated_only_in_debug)
{
    int evaluations = 0;
    AA_ASSERT(++evaluations == 1);
    ATF_REQUIRE_EQ(evaluations, kDebug ? 1 : 0);
}

ATF_TEST_CASE_WITHOUT_HEAD(debug_assert__failure_line_and_abort);
ATF_TEST_CASE_BODY(debug_assert__failure_line_and_abort)
{
    const ChildResult r = run_in_child(failing_check);
    if (!kDebug) {
        ATF_REQUIRE(exited_ok(r));
        ATF_REQUIRE_EQ(r.err, "");
        return;
    }
    ATF_REQUIRE(aborted(r));
    ATF_REQUIRE_EQ(r.err, "arenalloc: internal check failed: debug_assert_test.cc:" +
                              std::to_string(kFailingCheckLine) + ": 1 + 1 == 3\n");
}

ATF_TEST_CASE_WITHOUT_HEAD(debug_assert__arena_catches_corrupt_run);
ATF_TEST_CASE_BODY(debug_assert__arena_catches_corrupt_run)
{
    const ChildResult r = run_in_child(free_with_corrupt_count);
    if (!kDebug) {
        // Nothing checks nfree against the bitmap: the free goes through.
        ATF_REQUIRE(exited_ok(r));
        ATF_REQUIRE_EQ(r.err, "");
        return;
    }
    ATF_REQUIRE(aborted(r));
    ATF_REQUIRE_MATCH("^arenalloc: internal check failed: arena[a-z_]*\\.cc:[0-9]+: "
                      ".*r->bitmap\\.count_free\\(\\) == r->nfree\n$",
                      r.err);
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, debug_assert__condition_evaluated_only_in_debug);
    ATF_ADD_TEST_CASE(tcs, debug_assert__failure_line_and_abort);
    ATF_ADD_TEST_CASE(tcs, debug_assert__arena_catches_corrupt_run);
}
