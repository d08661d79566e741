// Unit tests of the hardened profile (lib/hardened.h), called directly with
// S in force: the requested size kept behind each small block, the canary
// check (an overwrite aborts: checked in a forked child), the quarantine,
// guard pages after large and huge blocks (which free() then quarantines,
// inaccessible), zero-size blocks, and refused requests.
#include <atf-c++.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "arena.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "hardened.h"
#include "hardened_inaccessible.h"
#include "huge.h"
#include "init.h"
#include "options.h"
#include "require_msg.h"
#include "size_classes.h"
#include "tcache.h"
#include "thread_state.h"

using namespace arenalloc;

namespace {

void hardened_on() {
    setenv("MALLOC_OPTIONS", "S", 1);
    ATF_REQUIRE(hardened_in_force());
}

// The block's whole usable size, as the allocator knows it.
size_t full_size(void *p) {
    uintptr_t owner = registry_lookup(p);
    if (owner & kRegistryHuge)
        return huge_usable_size(reinterpret_cast<Huge *>(owner & ~kRegistryTagMask), p, "test");
    ATF_REQUIRE(owner & kRegistryChunk);
    return arena_usable_size(chunk_containing(p), p, "test");
}

struct ChildResult {
    int signal;  // 0 when it exited
    std::string err;
};

// Runs body in a forked child, its stderr captured.
ChildResult in_child(void (*body)(void *), void *arg) {
    int fds[2];
    ATF_REQUIRE_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ATF_REQUIRE(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};  // the abort is expected: no core file
        setrlimit(RLIMIT_CORE, &no_core);
        dup2(fds[1], 2);
        close(fds[0]);
        body(arg);
        _exit(0);
    }
    close(fds[1]);
    ChildResult r;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
        r.err.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    ATF_REQUIRE_EQ(waitpid(pid, &status, 0), pid);
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return r;
}

void check_block(void *p) {
    size_t n = hardened_usable_size(p, full_size(p), "free");
    (void)n;
}

void write_byte_past(void *arg) {
    char *p = static_cast<char *>(arg);
    p[100] = '\0';  // one past a 100-byte request: a string's terminator
    check_block(p);
}

void write_trailer(void *arg) {
    char *p = static_cast<char *>(arg);
    memset(p + full_size(p) - kHardenedTrailer, 0, kHardenedTrailer);
    check_block(p);
}

void write_guard_page(void *arg) {
    char *p = static_cast<char *>(arg);
    p[hardened_usable_size(p, full_size(p), "test")] = 1;
}

void write_first_byte(void *arg) {
    static_cast<volatile char *>(arg)[0] = 1;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(hardened__small_blocks_keep_the_requested_size);
ATF_TEST_CASE_BODY(hardened__small_blocks_keep_the_requested_size) {
    hardened_on();
    for (size_t n : {size_t{1}, size_t{3}, size_t{8}, size_t{100}, size_t{1000},
                     kSmallMax - kHardenedSlack}) {
        char *p = static_cast<char *>(hardened_allocate(n, kMinSize, false));
        ATF_REQUIRE(p != nullptr);
        size_t full = full_size(p);
        ATF_REQUIRE_MSG(full <= kSmallMax, n);
        ATF_REQUIRE_MSG(full >= n + kHardenedSlack, n);
        memset(p, 0x61, n);  // every byte the caller is told it has
        ATF_REQUIRE_MSG(hardened_usable_size(p, full, "malloc_usable_size") == n, n);
    }
    // malloc(0) is a slot of the inaccessible range, with 0 usable bytes.
    void *z = hardened_allocate(0, kMinSize, false);
    ATF_REQUIRE(zero_block_range_holds(z));
    ATF_REQUIRE_EQ(hardened_usable_size(z, 1, "malloc_usable_size"), 0u);
    ATF_REQUIRE(hardened_free(z, "free"));
    // Zeroed when asked, up to the request.
    unsigned char *c = static_cast<unsigned char *>(hardened_allocate(200, kMinSize, true));
    for (int i = 0; i < 200; i++)
        ATF_REQUIRE_EQ(c[i], 0);
}

ATF_TEST_CASE_WITHOUT_HEAD(hardened__aligned_small_blocks);
ATF_TEST_CASE_BODY(hardened__aligned_small_blocks) {
    hardened_on();
    for (size_t align : {size_t{32}, size_t{256}, kPage}) {
        void *p = hardened_allocate(100, align, false);
        ATF_REQUIRE(p != nullptr);
        ATF_REQUIRE_MSG(reinterpret_cast<uintptr_t>(p) % align == 0, align);
        ATF_REQUIRE_MSG(hardened_usable_size(p, full_size(p), "malloc_usable_size") == 100, align);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(hardened__overwrites_detected);
ATF_TEST_CASE_BODY(hardened__overwrites_detected) {
    hardened_on();
    struct Overwrite {
        void (*body)(void *);
        const char *finding;
    };
    const Overwrite overwrites[] = {
        {write_byte_past, "(requested 100 bytes, size class "},
        {write_trailer, "(size trailer overwritten, size class "},
    };
    for (const Overwrite &o : overwrites) {
        void *p = hardened_allocate(100, kMinSize, false);
        ATF_REQUIRE(p != nullptr);
        ChildResult r = in_child(o.body, p);
        ATF_REQUIRE_EQ(r.signal, SIGABRT);
        ATF_REQUIRE_MSG(r.err.find("free(): write past the end of block") != std::string::npos, r.err);
        ATF_REQUIRE_MSG(r.err.find(o.finding) != std::string::npos, r.err);
        // The parent's copy is intact and passes.
        ATF_REQUIRE_EQ(hardened_usable_size(p, full_size(p), "free"), 100u);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(hardened__free_goes_through_the_quarantine);
ATF_TEST_CASE_BODY(hardened__free_goes_through_the_quarantine) {
    hardened_on();
    unsigned char *p = static_cast<unsigned char *>(hardened_allocate(40, kMinSize, false));
    ATF_REQUIRE(p != nullptr);
    Chunk *c = chunk_containing(p);
    size_t full = full_size(p);
    unsigned bin = size_to_class(full);
    // S keeps the thread caches, each with its quarantine.
    TCache *tc = tls_thread_state.tcache;
    ATF_REQUIRE(tc != &g_tcache_none && tc->quarantine != nullptr);
    const Quarantine *q = tc->quarantine;
    uint32_t held = q->count;
    ATF_REQUIRE(hardened_free(p, "free"));
    ATF_REQUIRE_EQ(q->count, held + 1 <= kQuarantineSlots ? held + 1 : kQuarantineSlots);
    // Junk-filled, and neither back in its run nor on the cache's stack.
    for (size_t i = 0; i < full; i++)
        ATF_REQUIRE_EQ(p[i], kJunkOnFree);
    ATF_REQUIRE(!arena_region_is_free(c, p));
    auto on_stack = [&] {
        for (void **slot = tc->bins[bin].stack; slot < tc->bins[bin].top; slot++)
            if (*slot == p)
                return true;
        return false;
    };
    ATF_REQUIRE(!on_stack());
    // A second free while it waits is refused (reported; with the a
    // option the process goes on).
    g_options.continue_on_bad_pointer = true;
    uint32_t count = q->count;
    ATF_REQUIRE(hardened_free(p, "free"));
    ATF_REQUIRE_EQ(q->count, count);
    // Enough later frees push it out, onto the cache's stack.
    for (unsigned i = 0; i < kQuarantineSlots; i++) {
        void *other = hardened_allocate(40, kMinSize, false);
        ATF_REQUIRE(other != p);
        ATF_REQUIRE(hardened_free(other, "free"));
    }
    ATF_REQUIRE(on_stack());
    ATF_REQUIRE(q->count <= kQuarantineSlots);
    ATF_REQUIRE(q->bytes <= kQuarantineBytes);
    // Still junk throughout (a free region under S carries no free mark),
    // so a free of it now is refused too.
    for (size_t i = 0; i < full; i++)
        ATF_REQUIRE_EQ(p[i], kJunkOnFree);
    ATF_REQUIRE(hardened_free(p, "free"));
    ATF_REQUIRE(on_stack());
}

ATF_TEST_CASE_WITHOUT_HEAD(hardened__guard_page_after_large_blocks);
ATF_TEST_CASE_BODY(hardened__guard_page_after_large_blocks) {
    hardened_on();
    const size_t n = 20000 * (kPage / 4096);  // 20000 with 4 KiB pages: large
    char *p = static_cast<char *>(hardened_allocate(n, kMinSize, false));
    ATF_REQUIRE(p != nullptr);
    size_t full = full_size(p);
    ATF_REQUIRE(full > kSmallMax);
    // The request rounded to pages, then one page of guard.
    size_t usable = hardened_usable_size(p, full, "malloc_usable_size");
    ATF_REQUIRE_EQ(usable, full - kPage);
    ATF_REQUIRE(usable >= n);
    memset(p, 1, usable);
    ChildResult r = in_child(write_guard_page, p);
    ATF_REQUIRE_EQ(r.signal, SIGSEGV);
    // free() keeps the block, inaccessible, in the quarantine.
    ATF_REQUIRE(hardened_free(p, "free"));
    r = in_child(write_first_byte, p);
    ATF_REQUIRE_EQ(r.signal, SIGSEGV);
}

ATF_TEST_CASE_WITHOUT_HEAD(hardened__guard_page_after_huge_blocks);
ATF_TEST_CASE_BODY(hardened__guard_page_after_huge_blocks) {
    hardened_on();
    const size_t n = size_t{3} << 20;
    char *p = static_cast<char *>(hardened_allocate(n, kMinSize, false));
    ATF_REQUIRE(p != nullptr);
    ATF_REQUIRE(registry_lookup(p) & kRegistryHuge);
    size_t full = full_size(p);
    ATF_REQUIRE_EQ(full, n + kPage);
    ATF_REQUIRE_EQ(hardened_usable_size(p, full, "malloc_usable_size"), n);
    ChildResult r = in_child(write_guard_page, p);
    ATF_REQUIRE_EQ(r.signal, SIGSEGV);
    ATF_REQUIRE(hardened_free(p, "free"));
    r = in_child(write_first_byte, p);
    ATF_REQUIRE_EQ(r.signal, SIGSEGV);
}

ATF_TEST_CASE_WITHOUT_HEAD(hardened__impossible_requests_fail);
ATF_TEST_CASE_BODY(hardened__impossible_requests_fail) {
    hardened_on();
    errno = 0;
    ATF_REQUIRE(hardened_allocate(SIZE_MAX - 10, kMinSize, false) == nullptr);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    errno = 0;
    ATF_REQUIRE(hardened_allocate(SIZE_MAX / 2, kPage, false) == nullptr);
    ATF_REQUIRE_EQ(errno, ENOMEM);
    // Not a block of the allocator: left to the caller.
    static char outside[64];
    ATF_REQUIRE(!hardened_free(outside, "free"));
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, hardened__small_blocks_keep_the_requested_size);
    ATF_ADD_TEST_CASE(tcs, hardened__aligned_small_blocks);
    ATF_ADD_TEST_CASE(tcs, hardened__overwrites_detected);
    ATF_ADD_TEST_CASE(tcs, hardened__free_goes_through_the_quarantine);
    ATF_ADD_TEST_CASE(tcs, hardened__guard_page_after_large_blocks);
    ATF_ADD_TEST_CASE(tcs, hardened__guard_page_after_huge_blocks);
    ATF_ADD_TEST_CASE(tcs, hardened__impossible_requests_fail);
}
