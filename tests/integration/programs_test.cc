// Real programs run with libarenalloc preloaded, checked by their output
// against the same programs run on the system allocator.

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <atf-c++.hpp>

#include "test_util.h"

#ifndef ARENALLOC_SHLIB
#error "ARENALLOC_SHLIB (path of the built libarenalloc.so) must be defined"
#endif

namespace {

std::string
shlib(const atf::tests::tc &tc)
{
    const std::string path = tc.get_config_var("shlib", ARENALLOC_SHLIB);
    if (access(path.c_str(), R_OK) != 0)
        ATF_FAIL("the built library " + path + " is missing");
    return path;
}

// Sum of "allocations served" over every summary in err (one per process
// that ran preloaded with MALLOC_OPTIONS=P); -1 when there is none.
long long
allocations_served(const std::string &err)
{
    static const std::regex re(
        "^arenalloc: allocations served: ([0-9]+) \\(small");
    long long total = -1;
    for (const std::string &l : testutil::lines_of(err)) {
        std::smatch m;
        if (std::regex_search(l, m, re))
            total = (total < 0 ? 0 : total) + std::stoll(m[1]);
    }
    return total;
}

// Requires that ld.so, run with LD_DEBUG=bindings and LD_DEBUG_OUTPUT=prefix,
// bound no allocation function of any process it logged to libc, and at
// least one to libarenalloc.
void
require_bound_to_arenalloc(const std::string &prefix, const std::string &what)
{
    DIR *d = opendir(".");
    ATF_REQUIRE(d != NULL);
    std::vector<std::string> files;
    while (struct dirent *e = readdir(d))
        if (testutil::starts_with(e->d_name, prefix + "."))
            files.push_back(e->d_name);
    closedir(d);
    TU_REQUIRE_MSG(!files.empty(), what << ": ld.so wrote no binding log");
    static const std::regex re(
        "binding file (.*) to (.*): normal symbol `(malloc|calloc|realloc|"
        "free)'");
    int bound = 0;
    for (const std::string &f : files) {
        std::ifstream in(f.c_str());
        std::string line;
        while (std::getline(in, line)) {
            std::smatch m;
            if (!std::regex_search(line, m, re))
                continue;
            // A binding to the main program is fine: a non-PIE executable
            // that takes malloc's address holds the canonical PLT entry,
            // itself bound to libarenalloc.
            TU_REQUIRE_MSG(m[2].str().find("/libc.so") == std::string::npos,
                           what << ": " << m[3] << " of " << m[1]
                                << " bound to " << m[2]);
            if (m[2].str().find("libarenalloc") != std::string::npos)
                bound++;
        }
        unlink(f.c_str());
    }
    TU_REQUIRE_MSG(bound > 0, what << ": malloc never bound to libarenalloc");
}

// Runs argv twice, on the system allocator and with arenalloc preloaded,
// and requires the same stdout.  The preloaded run is checked to have used
// arenalloc (ld.so's binding log); with min_allocs > 0 it also runs with
// MALLOC_OPTIONS=P and requires that many allocations served (only for
// programs that keep stderr open to the end: coreutils close it).  Returns
// the output.
std::string
run_both(const atf::tests::tc &tc, const std::vector<std::string> &argv,
         const std::vector<std::string> &env, const std::string &input,
         long long min_allocs)
{
    static int runs = 0;
    std::vector<std::string> plain_env(env);
    plain_env.push_back("LD_PRELOAD=");
    const testutil::child_result plain =
        testutil::run_program(argv, plain_env, input, 240);
    TU_REQUIRE_MSG(plain.exited_ok(),
                   "without arenalloc: " << argv[0] << ": " << plain.describe());

    const std::string log = "ld-bindings-" + std::to_string(++runs);
    std::vector<std::string> pre_env(env);
    pre_env.push_back("LD_PRELOAD=" + shlib(tc));
    pre_env.push_back("LD_DEBUG=bindings");
    pre_env.push_back("LD_DEBUG_OUTPUT=" + log);
    if (min_allocs > 0)
        pre_env.push_back("MALLOC_OPTIONS=P");
    const testutil::child_result pre =
        testutil::run_program(argv, pre_env, input, 240);
    TU_REQUIRE_MSG(pre.exited_ok(),
                   "with arenalloc: " << argv[0] << ": " << pre.describe());
    require_bound_to_arenalloc(log, argv[0]);
    if (min_allocs > 0) {
        const long long served = allocations_served(pre.err);
        TU_REQUIRE_MSG(served >= min_allocs,
                       argv[0] << ": allocations served by arenalloc: "
                               << served << " (expected at least "
                               << min_allocs << "); stderr: [" << pre.err
                               << "]");
    }
    TU_REQUIRE_MSG(pre.out == plain.out,
                   argv[0] << ": output differs with arenalloc ("
                           << pre.out.size() << " bytes against "
                           << plain.out.size() << ")");
    return pre.out;
}

// A file of n lines of random integers (with duplicates and negatives).
std::string
make_numbers_file(const std::string &name, int n, uint64_t seed)
{
    testutil::rng r(seed);
    std::ofstream f(name.c_str());
    for (int i = 0; i < n; i++) {
        const int64_t v = static_cast<int64_t>(r.next() % 2000000001ull) -
                          1000000000;
        f << v;
        if (i % 5 == 0)
            f << " text" << r.next() % 1000;
        f << "\n";
    }
    f.close();
    ATF_REQUIRE(f.good());
    return name;
}

std::string
require_program(const std::string &name,
                const std::vector<std::string> &fallbacks = {})
{
    const std::string path = testutil::find_program(name, fallbacks);
    if (path.empty())
        ATF_SKIP(name + " not found");
    return path;
}

// Builds and sorts large dicts, lists, sets and strings, also from threads,
// and prints checksums of the results.
const char python_script[] = R"PY(
import hashlib, random, threading

random.seed(20240601)
N = 200000

d = {}
for i in range(N):
    k = "key-%d-%x" % (i, random.getrandbits(40))
    d[k] = [random.random(), i, str(i) * (i % 7)]
items = sorted(d.items(), key=lambda kv: (kv[1][0], kv[0]))
h = hashlib.sha256()
for k, v in items[::7]:
    h.update(k.encode())
    h.update(repr(v).encode())

lst = [random.randint(-10**9, 10**9) for _ in range(N)]
lst.sort()
s = set(lst)
words = sorted(set(k.split("-")[2] for k in d), reverse=True)
big = {i: bytes(i % 50000) for i in range(0, N, 50)}
joined = "".join(words[:50000])
inv = {v[1]: k for k, v in d.items()}
del d

results = [None] * 4
def work(t):
    r = random.Random(t)
    x = sorted((r.random(), str(r.getrandbits(64)) * (t + 1)) for _ in range(50000))
    y = {e[1]: e[0] for e in x}
    results[t] = hashlib.sha256(repr((x[::100], len(y))).encode()).hexdigest()
threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()

print(len(items), len(lst), len(s), len(words), len(inv),
      sum(len(b) for b in big.values()), len(joined))
print(h.hexdigest())
print(hashlib.sha256(repr(lst[::13]).encode()).hexdigest())
print(hashlib.sha256(joined.encode()).hexdigest())
for r in results:
    print(r)
)PY";

}  // namespace

ATF_TEST_CASE(programs__python_dicts_and_lists);
ATF_TEST_CASE_HEAD(programs__python_dicts_and_lists)
{
    set_md_var("descr", "python3 builds and sorts large dicts and lists");
    set_md_var("timeout", "600");
}
ATF_TEST_CASE_BODY(programs__python_dicts_and_lists)
{
    // Prefer the system interpreter to wrappers (pyenv shims) found in PATH.
    const std::string python = require_program(
        "python3", { "/usr/bin/python3", "/usr/local/bin/python3" });
    // PYTHONMALLOC=malloc: every Python object comes from malloc, not from
    // pymalloc's own arenas.
    const std::string out = run_both(
        *this, { python, "-c", python_script },
        { "PYTHONMALLOC=malloc", "PYTHONHASHSEED=0" }, "/dev/null", 200000);
    const std::vector<std::string> lines = testutil::lines_of(out);
    TU_REQUIRE_MSG(lines.size() == 8, "unexpected output [" << out << "]");
    TU_REQUIRE_MSG(testutil::starts_with(lines[0], "200000 200000 "),
                   "unexpected output [" << lines[0] << "]");
}

ATF_TEST_CASE(programs__sort);
ATF_TEST_CASE_HEAD(programs__sort)
{
    set_md_var("descr", "sort, sort -n and a multi-threaded sort -n with "
                        "temporary files on 200,000 lines");
    set_md_var("timeout", "600");
}
ATF_TEST_CASE_BODY(programs__sort)
{
    const std::string sort = require_program("sort", { "/usr/bin/sort",
                                                       "/bin/sort" });
    const std::string input = make_numbers_file("numbers.txt", 200000, 7);
    const std::vector<std::string> env = { "LC_ALL=C" };

    const std::string lex = run_both(*this, { sort, input }, env, "/dev/null",
                                     0);
    std::vector<std::string> lines = testutil::lines_of(lex);
    ATF_REQUIRE_EQ(lines.size(), 200000u);
    for (size_t i = 1; i < lines.size(); i++)
        TU_REQUIRE_MSG(lines[i - 1] <= lines[i],
                       "sort output not sorted at line " << i + 1);

    const std::string num = run_both(*this, { sort, "-n", input }, env,
                                     "/dev/null", 0);
    lines = testutil::lines_of(num);
    ATF_REQUIRE_EQ(lines.size(), 200000u);
    for (size_t i = 1; i < lines.size(); i++)
        TU_REQUIRE_MSG(std::stoll(lines[i - 1]) <= std::stoll(lines[i]),
                       "sort -n output not sorted at line " << i + 1);

    // Threads and temporary files; from stdin.
    const std::string par = run_both(
        *this, { sort, "-n", "--parallel=4", "-S", "1M", "-T", "." }, env,
        input, 0);
    TU_REQUIRE_MSG(par == num, "sort -n --parallel=4 -S 1M differs from "
                               "sort -n");
}

ATF_TEST_CASE(programs__gzip_round_trip);
ATF_TEST_CASE_HEAD(programs__gzip_round_trip)
{
    set_md_var("descr", "gzip | gunzip restores a generated file");
    set_md_var("timeout", "300");
}
ATF_TEST_CASE_BODY(programs__gzip_round_trip)
{
    require_program("gzip", { "/usr/bin/gzip", "/bin/gzip" });
    const std::string sh = require_program("sh", { "/bin/sh" });
    const std::string input = make_numbers_file("numbers.txt", 200000, 11);
    std::ifstream f(input.c_str());
    std::stringstream content;
    content << f.rdbuf();

    const std::string out = run_both(
        *this, { sh, "-c", "gzip -c -6 | gzip -d -c" }, {}, input, 0);
    TU_REQUIRE_MSG(out == content.str(),
                   "gzip | gzip -d did not restore the file ("
                       << out.size() << " bytes against "
                       << content.str().size() << ")");
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, programs__python_dicts_and_lists);
    ATF_ADD_TEST_CASE(tcs, programs__sort);
    ATF_ADD_TEST_CASE(tcs, programs__gzip_round_trip);
}
