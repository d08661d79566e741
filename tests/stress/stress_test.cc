// Multi-threaded stress: many threads allocate, realloc and free blocks of
// random sizes (1 byte to several MiB); every block carries a pattern derived
// from its address and size that is checked before it is freed, and a large
// share of the blocks is freed by a thread other than the one that allocated
// them.

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include <atomic>
#include <deque>
#include <string>
#include <vector>

#include "../integration/test_util.h"

namespace {

const size_t KiB = 1024;
const size_t MiB = 1024 * 1024;
const size_t small_max = testutil::largest_small_class();
const size_t large_max = 1792 * KiB;

// Time budget of one case; the threads stop early when it runs out.
const double budget_s = 4.0;

struct block {
    void *p = NULL;
    size_t n = 0;
    uint64_t seed = 0;
    int owner = -1;  // index of the thread that allocated it
};

// The first failure seen by any thread; the others stop when it is set.
struct failure_log {
    std::atomic<bool> failed{ false };
    tstd::mutex mu;
    std::string message;

    void fail(const std::string &m)
    {
        tstd::lock_guard<tstd::mutex> lock(mu);
        if (!failed.load()) {
            message = m;
            failed.store(true);
        }
    }
};

// Mostly small, some large, a few huge.
size_t
random_size(testutil::rng &r)
{
    const uint64_t x = r.next() % 1000;
    if (x < 8)
        return r.range(large_max + 1, 6 * MiB);
    if (x < 80)
        return r.log_range(small_max + 1, large_max);
    return r.log_range(1, small_max);
}

bool
make_block(block &b, size_t n, int owner, failure_log &log)
{
    void *p = malloc(n);
    if (p == NULL) {
        tstd::ostringstream ss;
        ss << "thread " << owner << ": malloc(" << n << ") returned NULL";
        log.fail(ss.str());
        return false;
    }
    b.p = p;
    b.n = n;
    b.seed = testutil::pattern_seed(p, n);
    b.owner = owner;
    testutil::pattern_fill(p, n, b.seed);
    return true;
}

bool
check_block(const block &b, int self, const char *when, failure_log &log)
{
    const size_t off = testutil::pattern_check(b.p, b.n, b.seed);
    if (off != b.n) {
        tstd::ostringstream ss;
        ss << "thread " << self << " (" << when << "): block " << b.p
           << " of " << b.n << " bytes allocated by thread " << b.owner
           << " corrupted at offset " << off;
        log.fail(ss.str());
        return false;
    }
    return true;
}

struct counters {
    std::atomic<uint64_t> ops{ 0 }, frees{ 0 }, cross_frees{ 0 },
        reallocs{ 0 }, bytes{ 0 };
};

// Checks and frees b on behalf of thread self, counting cross-thread frees.
bool
release(block &b, int self, counters &c, failure_log &log)
{
    if (!check_block(b, self, "free", log))
        return false;
    free(b.p);
    c.frees++;
    if (b.owner != self)
        c.cross_frees++;
    b = block();
    return true;
}

struct shared_slot {
    tstd::mutex mu;
    block b;
};

}  // namespace

ATF_TEST_CASE(stress__mixed_cross_thread);
ATF_TEST_CASE_HEAD(stress__mixed_cross_thread)
{
    set_md_var("descr", "8 threads allocate, realloc and free random sizes; "
                        "blocks travel between threads through shared slots");
    set_md_var("timeout", "120");
}
ATF_TEST_CASE_BODY(stress__mixed_cross_thread)
{
    const int nthreads = 8;
    const int nslots = 512;
    const int nlocal = 32;
    const uint64_t max_ops = 60000;

    std::vector<shared_slot> slots(nslots);
    failure_log log;
    counters c;
    const double deadline = testutil::now_seconds() + budget_s;

    auto worker = [&](int self) {
        testutil::rng r(0x1234567ull * (self + 1));
        std::vector<block> local(nlocal);
        for (uint64_t op = 0; op < max_ops && !log.failed.load(); op++) {
            if ((op & 63) == 0 && testutil::now_seconds() > deadline)
                break;
            c.ops++;
            const uint64_t what = r.next() % 100;
            if (what < 45) {
                // Allocate; put the block in a shared slot 70% of the time
                // (whatever was there, probably another thread's, is freed).
                block b;
                if (!make_block(b, random_size(r), self, log))
                    break;
                c.bytes += b.n;
                if (r.next() % 10 < 7) {
                    block old;
                    shared_slot &s = slots[r.next() % nslots];
                    {
                        tstd::lock_guard<tstd::mutex> lock(s.mu);
                        old = s.b;
                        s.b = b;
                    }
                    if (old.p != NULL && !release(old, self, c, log))
                        break;
                } else {
                    block &l = local[r.next() % nlocal];
                    if (l.p != NULL && !release(l, self, c, log))
                        break;
                    l = b;
                }
            } else if (what < 65) {
                // realloc a local block (possibly adopted from another
                // thread) to a new random size; the common bytes must stay.
                block &l = local[r.next() % nlocal];
                if (l.p == NULL)
                    continue;
                if (!check_block(l, self, "before realloc", log))
                    break;
                const size_t m = random_size(r);
                void *q = realloc(l.p, m);
                if (q == NULL) {
                    tstd::ostringstream ss;
                    ss << "thread " << self << ": realloc(" << l.p << ", "
                       << m << ") returned NULL";
                    log.fail(ss.str());
                    break;
                }
                c.reallocs++;
                const size_t keep = std::min(l.n, m);
                const size_t off = testutil::pattern_check(q, keep, l.seed);
                if (off != keep) {
                    tstd::ostringstream ss;
                    ss << "thread " << self << ": realloc " << l.n << " -> "
                       << m << " changed byte " << off;
                    log.fail(ss.str());
                    // l.p may be freed already: the slot must not keep it
                    // for the final release.
                    free(q);
                    l = block();
                    break;
                }
                l.p = q;
                l.n = m;
                l.seed = testutil::pattern_seed(q, m);
                l.owner = self;
                testutil::pattern_fill(q, m, l.seed);
            } else if (what < 85) {
                // Adopt a block from a shared slot into a local slot.
                block taken;
                shared_slot &s = slots[r.next() % nslots];
                {
                    tstd::lock_guard<tstd::mutex> lock(s.mu);
                    taken = s.b;
                    s.b = block();
                }
                if (taken.p == NULL)
                    continue;
                block &l = local[r.next() % nlocal];
                if (l.p != NULL && !release(l, self, c, log))
                    break;
                l = taken;
            } else {
                block &l = local[r.next() % nlocal];
                if (l.p != NULL && !release(l, self, c, log))
                    break;
            }
        }
        for (block &l : local)
            if (l.p != NULL)
                release(l, self, c, log);
    };

    std::vector<tstd::thread> threads;
    for (int i = 0; i < nthreads; i++)
        threads.emplace_back(worker, i);
    for (tstd::thread &t : threads)
        t.join();
    for (shared_slot &s : slots)
        if (s.b.p != NULL)
            release(s.b, -1, c, log);

    if (log.failed.load())
        ATF_FAIL(log.message);
    tstd::ostringstream summary;
    summary << c.ops.load() << " ops, " << c.frees.load() << " frees, "
            << c.cross_frees.load() << " by another thread, "
            << c.reallocs.load() << " reallocs, " << c.bytes.load() / MiB
            << " MiB allocated";
    printf("%s\n", summary.str().c_str());
    TU_REQUIRE_MSG(c.ops.load() >= 1000u * nthreads,
                   "too little work done: " << summary.str());
    TU_REQUIRE_MSG(c.cross_frees.load() * 10 >= c.frees.load() * 3,
                   "fewer than 30% cross-thread frees: " << summary.str());
}

ATF_TEST_CASE(stress__producer_consumer);
ATF_TEST_CASE_HEAD(stress__producer_consumer)
{
    set_md_var("descr", "4 producers allocate 1 KiB-10 MiB entries, 4 "
                        "consumers check and free them (seed 000)");
    set_md_var("timeout", "120");
}
ATF_TEST_CASE_BODY(stress__producer_consumer)
{
    const int nproducers = 4;
    const int nconsumers = 4;
    const size_t queue_max = 256;
    const uint64_t per_producer = 20000;

    tstd::mutex mu;
    tstd::condition_variable not_empty, not_full;
    std::deque<block> queue;
    int producers_left = nproducers;
    failure_log log;
    counters c;
    const double deadline = testutil::now_seconds() + budget_s;

    auto producer = [&](int self) {
        testutil::rng r(0xABCDEFull * (self + 1));
        for (uint64_t i = 0; i < per_producer && !log.failed.load(); i++) {
            if ((i & 31) == 0 && testutil::now_seconds() > deadline)
                break;
            const uint64_t x = r.next() % 1000;
            const size_t n = x < 5 ? r.range(2 * MiB, 10 * MiB)
                             : x < 100 ? r.log_range(16 * KiB, 1 * MiB)
                                       : r.log_range(KiB, 16 * KiB);
            block b;
            if (!make_block(b, n, self, log))
                break;
            c.ops++;
            c.bytes += n;
            tstd::unique_lock<tstd::mutex> lock(mu);
            not_full.wait(lock, [&] {
                return queue.size() < queue_max || log.failed.load();
            });
            queue.push_back(b);
            not_empty.notify_one();
        }
        tstd::lock_guard<tstd::mutex> lock(mu);
        producers_left--;
        not_empty.notify_all();
    };
    auto consumer = [&](int self) {
        for (;;) {
            block b;
            {
                tstd::unique_lock<tstd::mutex> lock(mu);
                not_empty.wait(lock, [&] {
                    return !queue.empty() || producers_left == 0;
                });
                if (queue.empty())
                    return;
                b = queue.front();
                queue.pop_front();
                not_full.notify_one();
            }
            if (!release(b, self, c, log)) {
                tstd::lock_guard<tstd::mutex> lock(mu);
                not_full.notify_all();
                return;
            }
        }
    };

    std::vector<tstd::thread> threads;
    for (int i = 0; i < nproducers; i++)
        threads.emplace_back(producer, i);
    for (int i = 0; i < nconsumers; i++)
        threads.emplace_back(consumer, nproducers + i);
    for (tstd::thread &t : threads)
        t.join();
    for (block &b : queue)
        free(b.p);

    if (log.failed.load())
        ATF_FAIL(log.message);
    tstd::ostringstream summary;
    summary << c.ops.load() << " blocks, " << c.frees.load() << " frees, "
            << c.cross_frees.load() << " by another thread, "
            << c.bytes.load() / MiB << " MiB allocated";
    printf("%s\n", summary.str().c_str());
    TU_REQUIRE_MSG(c.ops.load() >= 1000u, "too little work done: "
                                              << summary.str());
    TU_REQUIRE_MSG(c.frees.load() == c.ops.load(),
                   "not every block was freed: " << summary.str());
    TU_REQUIRE_MSG(c.cross_frees.load() == c.frees.load(),
                   "some blocks freed by their producer: " << summary.str());
}

ATF_TEST_CASE(stress__small_cross_thread);
ATF_TEST_CASE_HEAD(stress__small_cross_thread)
{
    set_md_var("descr", "8 threads exchange small blocks of every class");
    set_md_var("timeout", "120");
}
ATF_TEST_CASE_BODY(stress__small_cross_thread)
{
    // Small blocks only, so that runs fill up, empty and get reused while
    // other threads free into them.
    // Many slots: a thread that runs alone for a whole time slice (few
    // CPUs) still mostly replaces blocks that other threads left.
    const int nthreads = 8;
    const int nslots = 65536;
    const uint64_t max_ops = 400000;

    std::vector<shared_slot> slots(nslots);
    failure_log log;
    counters c;
    const double deadline = testutil::now_seconds() + budget_s / 2;

    auto worker = [&](int self) {
        testutil::rng r(0x777ull * (self + 1));
        for (uint64_t op = 0; op < max_ops && !log.failed.load(); op++) {
            if ((op & 255) == 0 && testutil::now_seconds() > deadline)
                break;
            c.ops++;
            block b;
            if (!make_block(b, r.log_range(1, small_max / 4), self, log))
                break;
            block old;
            shared_slot &s = slots[r.next() % nslots];
            {
                tstd::lock_guard<tstd::mutex> lock(s.mu);
                old = s.b;
                s.b = b;
            }
            if (old.p != NULL && !release(old, self, c, log))
                break;
        }
    };

    std::vector<tstd::thread> threads;
    for (int i = 0; i < nthreads; i++)
        threads.emplace_back(worker, i);
    for (tstd::thread &t : threads)
        t.join();
    for (shared_slot &s : slots)
        if (s.b.p != NULL)
            release(s.b, -1, c, log);

    if (log.failed.load())
        ATF_FAIL(log.message);
    tstd::ostringstream summary;
    summary << c.ops.load() << " ops, " << c.frees.load() << " frees, "
            << c.cross_frees.load() << " by another thread";
    printf("%s\n", summary.str().c_str());
    TU_REQUIRE_MSG(c.ops.load() >= 10000u, "too little work done: "
                                               << summary.str());
    // 7 in 8 would be other threads' blocks if the threads ran in lockstep;
    // on few CPUs a thread often replaces its own recent blocks.
    TU_REQUIRE_MSG(c.cross_frees.load() * 10 >= c.frees.load() * 3,
                   "fewer than 30% cross-thread frees: " << summary.str());
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, stress__mixed_cross_thread);
    ATF_ADD_TEST_CASE(tcs, stress__producer_consumer);
    ATF_ADD_TEST_CASE(tcs, stress__small_cross_thread);
}
