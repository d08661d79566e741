// fork() from a process whose threads are busy in malloc/free: the child's
// allocator must be usable (no lock left held, no corrupted state), in many
// rounds, each bounded by a timeout (a hang is a deadlock).

#include <sys/types.h>
#include <sys/wait.h>

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

const size_t KiB = 1024;
const size_t MiB = 1024 * 1024;

// Exit codes of the child.
enum { child_ok = 0, child_null = 3, child_corrupt = 4, child_thread = 5 };

const char *
child_error(int code)
{
    switch (code) {
    case child_null: return "an allocation returned NULL";
    case child_corrupt: return "a block's pattern was corrupted";
    case child_thread: return "pthread_create/join failed";
    default: return "unexpected exit status";
    }
}

// Threads looping malloc/free/realloc of random sizes until stopped.
class busy_threads {
public:
    explicit busy_threads(int n) : stop_(false), rounds_(0)
    {
        for (int i = 0; i < n; i++)
            threads_.emplace_back([this, i] { run(i); });
        // Wait until every thread is inside its loop.
        while (rounds_.load() < static_cast<uint64_t>(n) * 100)
            usleep(1000);
    }
    ~busy_threads() { stop(); }
    void stop(void)
    {
        stop_.store(true);
        for (tstd::thread &t : threads_)
            if (t.joinable())
                t.join();
    }
    bool failed(void) const { return failed_.load(); }

private:
    void run(int self)
    {
        testutil::rng r(0x5151ull * (self + 1));
        void *held[64] = {};
        size_t sizes[64] = {};
        while (!stop_.load(std::memory_order_relaxed)) {
            const int k = static_cast<int>(r.next() % 64);
            const uint64_t x = r.next() % 1000;
            const size_t n = x < 3 ? r.range(2 * MiB, 4 * MiB)
                             : x < 50 ? r.log_range(16 * KiB, 1 * MiB)
                                      : r.log_range(1, 14336);
            if (held[k] == NULL) {
                held[k] = malloc(n);
                sizes[k] = n;
            } else if (r.next() % 3 == 0) {
                void *q = realloc(held[k], n);
                if (q != NULL) {
                    held[k] = q;
                    sizes[k] = n;
                }
            } else {
                const size_t used = std::min<size_t>(sizes[k], 1024);
                if (testutil::first_not(held[k], used,
                                        static_cast<unsigned char>(k)) != used)
                    failed_.store(true);
                free(held[k]);
                held[k] = NULL;
                continue;
            }
            if (held[k] == NULL) {
                failed_.store(true);
                continue;
            }
            memset(held[k], k, std::min<size_t>(sizes[k], 1024));
            rounds_++;
        }
        for (void *p : held)
            free(p);
    }

    std::atomic<bool> stop_;
    std::atomic<bool> failed_{ false };
    std::atomic<uint64_t> rounds_;
    std::vector<tstd::thread> threads_;
};

// In the child: allocates and frees a few thousand blocks of several sizes
// (small, large, huge, aligned), checking their contents; returns an exit
// code.
int
child_workload(unsigned seed)
{
    testutil::rng r(seed);
    const size_t sizes[] = { 8, 24, 100, 1000, 4000, 14336, 20000, 100000,
                             1 * MiB, 3 * MiB };
    std::vector<std::pair<void *, size_t> > blocks;
    for (int i = 0; i < 3000; i++) {
        // Mostly small; every 10th from all sizes up to 100 KB, every 200th
        // a MiB or more.
        const size_t n = sizes[r.next() % (i % 200 == 0 ? 10
                                           : i % 10 == 0 ? 8 : 6)];
        void *p;
        if (i % 7 == 0) {
            if (posix_memalign(&p, 64 << (i % 5), n) != 0)
                return child_null;
        } else {
            p = malloc(n);
        }
        if (p == NULL)
            return child_null;
        testutil::pattern_fill(p, n, testutil::pattern_seed(p, n));
        blocks.push_back(std::make_pair(p, n));
        if (r.next() % 2 == 0) {
            const size_t k = r.next() % blocks.size();
            const auto b = blocks[k];
            if (testutil::pattern_check(b.first, b.second,
                                        testutil::pattern_seed(b.first,
                                                               b.second)) !=
                b.second)
                return child_corrupt;
            free(b.first);
            blocks[k] = blocks.back();
            blocks.pop_back();
        }
    }
    for (const auto &b : blocks) {
        if (testutil::pattern_check(b.first, b.second,
                                    testutil::pattern_seed(b.first,
                                                           b.second)) !=
            b.second)
            return child_corrupt;
        free(b.first);
    }
    return child_ok;
}

// Thread body in the child.
void *
child_thread_main(void *arg)
{
    const unsigned seed = static_cast<unsigned>(reinterpret_cast<uintptr_t>(arg));
    return reinterpret_cast<void *>(
        static_cast<uintptr_t>(child_workload(seed)));
}

// In the child: a new thread allocates (and exits, releasing its state),
// then the main thread allocates too.
int
child_with_thread(unsigned seed)
{
    for (int i = 0; i < 2; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, child_thread_main,
                           reinterpret_cast<void *>(
                               static_cast<uintptr_t>(seed + i))) != 0)
            return child_thread;
        void *rv;
        if (pthread_join(t, &rv) != 0)
            return child_thread;
        if (reinterpret_cast<uintptr_t>(rv) != child_ok)
            return static_cast<int>(reinterpret_cast<uintptr_t>(rv));
    }
    return child_workload(seed + 100);
}

// Waits up to timeout_s for pid; on timeout kills it and fails (deadlock).
void
wait_child(pid_t pid, int round, double timeout_s = 10)
{
    const double deadline = testutil::now_seconds() + timeout_s;
    int status;
    for (;;) {
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        ATF_REQUIRE(w == 0 || (w == -1 && errno == EINTR));
        if (testutil::now_seconds() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            TU_FAIL_MSG("round " << round << ": child did not exit within "
                                 << timeout_s << " s (deadlock in the "
                                 << "allocator after fork?)");
        }
        usleep(1000);
    }
    TU_REQUIRE_MSG(WIFEXITED(status),
                   "round " << round << ": child killed by signal "
                            << WTERMSIG(status) << " ("
                            << strsignal(WTERMSIG(status)) << ")");
    TU_REQUIRE_MSG(WEXITSTATUS(status) == child_ok,
                   "round " << round << ": child: "
                            << child_error(WEXITSTATUS(status)));
}

// fork() `rounds` times while 4 threads are busy; each child runs body.
template <typename F>
void
fork_rounds(int rounds, F body)
{
    testutil::detail::no_core_dumps();
    busy_threads busy(4);
    for (int round = 0; round < rounds; round++) {
        // Let the threads get back into the allocator between rounds.
        usleep(2000);
        const pid_t pid = fork();
        ATF_REQUIRE(pid != -1);
        if (pid == 0)
            _exit(body(round));
        wait_child(pid, round);
        ATF_REQUIRE(!busy.failed());
    }
    busy.stop();
    ATF_REQUIRE(!busy.failed());
}

}  // namespace

ATF_TEST_CASE(fork__busy_threads);
ATF_TEST_CASE_HEAD(fork__busy_threads)
{
    set_md_var("descr", "fork() while 4 threads malloc/free; the child "
                        "allocates and frees thousands of blocks");
    set_md_var("timeout", "300");
}
ATF_TEST_CASE_BODY(fork__busy_threads)
{
    fork_rounds(50, [](int round) {
        return child_workload(static_cast<unsigned>(round) + 1);
    });
}

ATF_TEST_CASE(fork__child_creates_thread);
ATF_TEST_CASE_HEAD(fork__child_creates_thread)
{
    set_md_var("descr", "fork() while threads are busy; the child creates a "
                        "thread that allocates");
    set_md_var("timeout", "300");
}
ATF_TEST_CASE_BODY(fork__child_creates_thread)
{
    fork_rounds(25, [](int round) {
        return child_with_thread(static_cast<unsigned>(round) * 7 + 1);
    });
}

ATF_TEST_CASE(fork__child_frees_parent_blocks);
ATF_TEST_CASE_HEAD(fork__child_frees_parent_blocks)
{
    set_md_var("descr", "blocks the parent allocated before fork() are "
                        "intact in the child, which frees them");
    set_md_var("timeout", "300");
}
ATF_TEST_CASE_BODY(fork__child_frees_parent_blocks)
{
    testutil::rng r(99);
    std::vector<std::pair<void *, size_t> > blocks;
    for (int i = 0; i < 2000; i++) {
        const size_t n = i % 400 == 0 ? 3 * MiB
                         : i % 20 == 0 ? r.log_range(16 * KiB, 1 * MiB)
                                       : r.log_range(1, 14336);
        void *p = malloc(n);
        ATF_REQUIRE(p != NULL);
        testutil::pattern_fill(p, n, testutil::pattern_seed(p, n));
        blocks.push_back(std::make_pair(p, n));
    }
    fork_rounds(20, [&blocks](int round) {
        for (const auto &b : blocks) {
            if (testutil::pattern_check(b.first, b.second,
                                        testutil::pattern_seed(b.first,
                                                               b.second)) !=
                b.second)
                return static_cast<int>(child_corrupt);
            free(b.first);
        }
        return child_workload(static_cast<unsigned>(round) + 1000);
    });
    for (const auto &b : blocks) {
        ATF_REQUIRE_EQ(testutil::pattern_check(b.first, b.second,
                           testutil::pattern_seed(b.first, b.second)),
                       b.second);
        free(b.first);
    }
}

ATF_TEST_CASE(fork__nested);
ATF_TEST_CASE_HEAD(fork__nested)
{
    set_md_var("descr", "a child of a busy process forks again while its own "
                        "thread allocates");
    set_md_var("timeout", "300");
}
ATF_TEST_CASE_BODY(fork__nested)
{
    fork_rounds(10, [](int round) {
        busy_threads inner(2);
        const pid_t pid = fork();
        if (pid == -1)
            return static_cast<int>(child_thread);
        if (pid == 0)
            _exit(child_workload(static_cast<unsigned>(round) + 5000));
        int status;
        const double deadline = testutil::now_seconds() + 8;
        for (;;) {
            const pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                break;
            if (testutil::now_seconds() > deadline) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                _exit(9);  // parent reports it as unexpected
            }
            usleep(1000);
        }
        inner.stop();
        if (inner.failed())
            return static_cast<int>(child_corrupt);
        if (!WIFEXITED(status))
            return static_cast<int>(child_corrupt);
        return WEXITSTATUS(status);
    });
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, fork__busy_threads);
    ATF_ADD_TEST_CASE(tcs, fork__child_creates_thread);
    ATF_ADD_TEST_CASE(tcs, fork__child_frees_parent_blocks);
    ATF_ADD_TEST_CASE(tcs, fork__nested);
}
