// libarenalloc_cxx, the C++ operator new and delete (arenalloc(3), "C++"):
// this program links it, so its own new and delete are arenalloc's.
// Correct use over many sizes and alignments is never reported; a sized
// delete that names the wrong size is reported by sdallocx, which the
// operators call, with one line, and the process aborts, in default
// mode (in a forked child) and under S (cxx_target_linked run with
// MALLOC_OPTIONS=S); the new-handler is called and bad_alloc thrown as the
// standard says, nothrow new returns nullptr; and an ordinary g++ program,
// cxx_target, gets all of this from LD_PRELOAD.  Controls: a delete of a
// size in the block's own class, and cxx_target run without the library
// (libstdc++'s delete drops the size), are not reported.

#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <new>
#include <regex>
#include <string>
#include <vector>

#include <atf-c++.hpp>

#include "arenalloc.h"
#include "cxx_sweep.h"
#include "test_util.h"

#if !defined(ARENALLOC_CXX_SHLIB) || !defined(ARENALLOC_MAIN_SHLIB) || !defined(ARENALLOC_CXX_TARGET_DIR)
#error "ARENALLOC_CXX_SHLIB, ARENALLOC_MAIN_SHLIB and ARENALLOC_CXX_TARGET_DIR must be defined"
#endif

namespace {

// A request no allocator can meet, on 32-bit targets as on 64-bit ones.
const size_t kImpossible = SIZE_MAX - 4096;

std::string
report(const std::string &fn, const void *p, size_t claimed, size_t usable)
{
    return "arenalloc: " + fn + "(): invalid pointer " + testutil::hex(p) + ": size " +
           std::to_string(claimed) + " does not match the block (" + std::to_string(usable) +
           " usable bytes)";
}

// The child aborted, and wrote exactly the one report line (qemu-user
// adds a line of its own about the signal).
void
require_abort_with(const testutil::child_result &r, const std::string &line)
{
    TU_REQUIRE_MSG(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
                   "expected an abort: " << r.describe());
    const std::vector<std::string> lines = testutil::report_lines(r.err);
    TU_REQUIRE_MSG(lines.size() == 1 && lines[0] == line,
                   "stderr [" << r.err << "], expected [" << line << "]");
}

// Runs bad(p) in a forked child on a block from make(); the usable size is
// this process's (default mode: the block's whole class).
template <typename Make, typename Bad>
void
require_death_in_child(const std::string &fn, size_t claimed, Make make, Bad bad)
{
    for (int round = 0; round < 3; round++) {
        void *p = make();
        const size_t usable = ARENALLOC_NAME(malloc_usable_size)(p);
        const testutil::child_result r = testutil::run_in_child([&] { bad(p); });
        require_abort_with(r, report(fn, p, claimed, usable));
        // The block stays allocated: the next round gets another address.
    }
}

// --- cxx_target, run with the library linked or preloaded -----------------

std::string
target(bool linked)
{
    return std::string(ARENALLOC_CXX_TARGET_DIR) + (linked ? "/cxx_target_linked" : "/cxx_target");
}

std::vector<std::string>
environment(bool preload, const std::string &options)
{
    std::vector<std::string> env = { "MALLOC_OPTIONS=" + options, "MALLOC_CONF=" };
    env.push_back(preload ? std::string("LD_PRELOAD=") + ARENALLOC_CXX_SHLIB + " " + ARENALLOC_MAIN_SHLIB
                          : std::string("LD_PRELOAD="));
    return env;
}

testutil::child_result
run_target(bool linked, bool preload, const std::string &options, const std::vector<std::string> &args)
{
    std::vector<std::string> argv = { target(linked) };
    argv.insert(argv.end(), args.begin(), args.end());
    return testutil::run_program(argv, environment(preload, options), "/dev/null", 300);
}

// cxx_target's "block=P claimed=M" line.
void
read_block_line(const testutil::child_result &r, std::string *block, size_t *claimed)
{
    static const std::regex block_re("^block=(0x[0-9a-f]+) claimed=([0-9]+)$");
    for (const std::string &line : testutil::lines_of(r.out)) {
        std::smatch m;
        if (std::regex_match(line, m, block_re)) {
            *block = m[1];
            *claimed = std::stoull(m[2]);
            return;
        }
    }
    TU_FAIL_MSG("no block= line from cxx_target: " << r.describe() << " stdout [" << r.out << "]");
}

// A bad delete in cxx_target: one report naming fn, the block and the size
// it claimed, then an abort.  Under S a block's usable size counts its
// canary or guard page, which the program cannot see: the figure is then
// only required to cover the request (at least min_usable).
void
require_target_report(const testutil::child_result &r, const std::string &fn, size_t min_usable)
{
    std::string block;
    size_t claimed = 0;
    read_block_line(r, &block, &claimed);
    TU_REQUIRE_MSG(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
                   "expected an abort: " << r.describe() << " stdout [" << r.out << "]");
    const std::regex line_re("^arenalloc: " + fn + "\\(\\): invalid pointer " + block + ": size " +
                             std::to_string(claimed) + " does not match the block \\(([0-9]+) usable bytes\\)$");
    const std::vector<std::string> lines = testutil::report_lines(r.err);
    std::smatch m;
    TU_REQUIRE_MSG(lines.size() == 1 && std::regex_match(lines[0], m, line_re), "stderr [" << r.err << "]");
    TU_REQUIRE_MSG(std::stoull(m[1]) >= min_usable, "usable " << m[1] << " < " << min_usable);
    TU_REQUIRE_MSG(r.out.find("survived") == std::string::npos, "stdout [" << r.out << "]");
}

struct BadDelete {
    std::vector<std::string> args;
    const char *fn;
    size_t min_usable;
};

// Each kind of bad delete: plain, aligned, array, and the base-class bug,
// small, large and huge.
const std::vector<BadDelete> &
bad_deletes()
{
    static const std::vector<BadDelete> v = {
        { { "wrong-size", "100", "200" }, "sdallocx", 100 },
        { { "wrong-size", "24", "8" }, "sdallocx", 24 },
        { { "wrong-size", "100000", "70000" }, "sdallocx", 100000 },
        { { "wrong-size", "3145728", "2097152" }, "sdallocx", 3145728 },
        { { "wrong-aligned-size", "100", "300", "64" }, "sdallocx", 100 },
        { { "wrong-aligned-size", "5000", "100", "4096" }, "sdallocx", 5000 },
        { { "wrong-array-size", "1000", "10" }, "sdallocx", 1000 },
        { { "base-delete" }, "sdallocx", 424 },
    };
    return v;
}

// Whether the top bit of size_t, as an alignment, is more than the
// address space can give: on 64-bit targets (2^63); a 32-bit process can
// be given a block at 2 GiB (i386 under a 64-bit kernel is).
bool
alignment_out_of_reach()
{
    return sizeof(void *) == 8;
}

int handler_calls = 0;
int handler_calls_before_giving_up = 0;

// A new-handler that cannot find memory: after its allowance it removes
// itself, so that the next failure throws.
void
counting_handler()
{
    handler_calls++;
    if (handler_calls >= handler_calls_before_giving_up)
        std::set_new_handler(nullptr);
}

void
install_counting_handler(int allowance)
{
    handler_calls = 0;
    handler_calls_before_giving_up = allowance;
    std::set_new_handler(counting_handler);
}

// fn() must throw std::bad_alloc after the handler ran allowance times.
template <typename F>
void
require_bad_alloc_after_handler(const char *what, F fn)
{
    install_counting_handler(3);
    bool threw = false;
    try {
        void *p = fn();
        testutil::escape(p);
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    std::set_new_handler(nullptr);
    TU_REQUIRE_MSG(threw, what << " did not throw bad_alloc");
    TU_REQUIRE_MSG(handler_calls == 3, what << ": the new-handler ran " << handler_calls << " times, not 3");
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(sweep__every_form_no_report);
ATF_TEST_CASE_BODY(sweep__every_form_no_report)
{
    const std::string why = cxxsweep::all();
    TU_REQUIRE_MSG(why.empty(), why);
}

ATF_TEST_CASE_WITHOUT_HEAD(aligned__64_4096_2mib);
ATF_TEST_CASE_BODY(aligned__64_4096_2mib)
{
    for (size_t align : { size_t(64), size_t(4096), size_t(2) << 20 }) {
        const std::align_val_t al = static_cast<std::align_val_t>(align);
        std::vector<void *> live;
        for (size_t n : { size_t(1), size_t(100), align, align + 1, size_t(3) << 20 }) {
            void *p = ::operator new(n, al);
            void *q = ::operator new[](n, al, std::nothrow);
            TU_REQUIRE_MSG(q != nullptr, "nothrow aligned new[](" << n << ", " << align << ")");
            TU_REQUIRE_MSG(testutil::is_aligned(p, align) && testutil::is_aligned(q, align),
                           n << " bytes aligned to " << align << ": " << p << " " << q);
            // arenalloc's own blocks: their usable size is the request's.
            TU_REQUIRE_MSG(ARENALLOC_NAME(malloc_usable_size)(p) >= n, "usable size of " << p);
            live.push_back(p);
            ::operator delete[](q, n, al);
        }
        for (void *p : live)
            ::operator delete(p, al);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(delete__null_is_no_op);
ATF_TEST_CASE_BODY(delete__null_is_no_op)
{
    const std::align_val_t al = static_cast<std::align_val_t>(64);
    for (size_t n : { size_t(0), size_t(1), size_t(100), size_t(1) << 30, SIZE_MAX }) {
        ::operator delete(nullptr, n);
        ::operator delete[](nullptr, n);
        ::operator delete(nullptr, n, al);
        ::operator delete[](nullptr, n, al);
    }
    ::operator delete(nullptr);
    ::operator delete[](nullptr);
    ::operator delete(nullptr, al);
    ::operator delete[](nullptr, al);
    ::operator delete(nullptr, std::nothrow);
    ::operator delete[](nullptr, al, std::nothrow);
}

ATF_TEST_CASE_WITHOUT_HEAD(new__zero_bytes_distinct);
ATF_TEST_CASE_BODY(new__zero_bytes_distinct)
{
    void *a = ::operator new(0);
    void *b = ::operator new(0);
    void *c = ::operator new[](0, std::nothrow);
    void *d = ::operator new(0, static_cast<std::align_val_t>(256));
    for (void *p : { a, b, c, d })
        testutil::escape(p);
    ATF_REQUIRE(a != nullptr && b != nullptr && c != nullptr && d != nullptr);
    ATF_REQUIRE(a != b && a != c && b != c && a != d);
    ATF_REQUIRE(testutil::is_aligned(d, 256));
    const size_t zero = 0;
    ::operator delete(a, zero);
    ::operator delete(b, zero);
    ::operator delete[](c, zero);
    ::operator delete(d, zero, static_cast<std::align_val_t>(256));
}

ATF_TEST_CASE_WITHOUT_HEAD(new_handler__called_then_bad_alloc);
ATF_TEST_CASE_BODY(new_handler__called_then_bad_alloc)
{
    const size_t n = testutil::opaque(kImpossible);
    const std::align_val_t al = static_cast<std::align_val_t>(4096);
    const std::align_val_t too_far = static_cast<std::align_val_t>((SIZE_MAX >> 1) + 1);
    require_bad_alloc_after_handler("operator new", [n] { return ::operator new(n); });
    require_bad_alloc_after_handler("operator new[]", [n] { return ::operator new[](n); });
    require_bad_alloc_after_handler("aligned operator new", [n, al] { return ::operator new(n, al); });
    require_bad_alloc_after_handler("aligned operator new[]", [n, al] { return ::operator new[](n, al); });
    if (alignment_out_of_reach())
        require_bad_alloc_after_handler("operator new, alignment too large",
                                        [too_far] { return ::operator new(16, too_far); });
    // A handler that throws bad_alloc itself ends the loop at once.
    handler_calls = 0;
    std::set_new_handler([] {
        handler_calls++;
        throw std::bad_alloc();
    });
    bool threw = false;
    try {
        testutil::escape(::operator new(n));
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    std::set_new_handler(nullptr);
    ATF_REQUIRE(threw);
    ATF_REQUIRE_EQ(1, handler_calls);
    // No handler: bad_alloc straight away.
    threw = false;
    try {
        testutil::escape(::operator new(n));
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    ATF_REQUIRE(threw);
}

ATF_TEST_CASE_WITHOUT_HEAD(nothrow__returns_nullptr);
ATF_TEST_CASE_BODY(nothrow__returns_nullptr)
{
    const size_t n = testutil::opaque(kImpossible);
    const std::align_val_t al = static_cast<std::align_val_t>(64);
    const std::align_val_t too_far = static_cast<std::align_val_t>((SIZE_MAX >> 1) + 1);
    // Without a handler, then with one, which the nothrow forms call too
    // (they are the throwing forms with the exception caught).
    for (int with_handler = 0; with_handler < 2; with_handler++) {
        std::vector<std::pair<const char *, void *(*)(size_t)>> forms = {
            { "new(nothrow)", [](size_t s) { return ::operator new(s, std::nothrow); } },
            { "new[](nothrow)", [](size_t s) { return ::operator new[](s, std::nothrow); } },
            { "new(align, nothrow)",
              [](size_t s) { return ::operator new(s, static_cast<std::align_val_t>(64), std::nothrow); } },
            { "new[](align, nothrow)",
              [](size_t s) { return ::operator new[](s, static_cast<std::align_val_t>(64), std::nothrow); } },
        };
        for (const auto &f : forms) {
            if (with_handler)
                install_counting_handler(2);
            void *p = f.second(n);
            std::set_new_handler(nullptr);
            TU_REQUIRE_MSG(p == nullptr, f.first << " of " << n << " bytes gave " << p);
            if (with_handler)
                TU_REQUIRE_MSG(handler_calls == 2, f.first << ": handler ran " << handler_calls << " times");
        }
    }
    if (alignment_out_of_reach())
        ATF_REQUIRE(::operator new(16, too_far, std::nothrow) == nullptr);
    // A new-expression with (nothrow) reaches the same functions.
    char *chars = new (std::nothrow) char[n];
    ATF_REQUIRE(chars == nullptr);
    void *ok = ::operator new(100, al, std::nothrow);
    ATF_REQUIRE(ok != nullptr);
    ::operator delete(ok, 100, al);
}

// An alignment that is not a power of two: the standard leaves it
// undefined; here it is refused at once, without the new-handler.
ATF_TEST_CASE_WITHOUT_HEAD(aligned__not_power_of_two_refused);
ATF_TEST_CASE_BODY(aligned__not_power_of_two_refused)
{
    const std::align_val_t al48 = static_cast<std::align_val_t>(48);
    install_counting_handler(5);
    bool threw = false;
    try {
        testutil::escape(::operator new(16, al48));
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    void *p = ::operator new(16, al48, std::nothrow);
    std::set_new_handler(nullptr);
    ATF_REQUIRE(threw);
    ATF_REQUIRE(p == nullptr);
    ATF_REQUIRE_EQ(0, handler_calls);
}

// Default mode, in forked children of this process.
ATF_TEST_CASE_WITHOUT_HEAD(wrong_size__reported_and_aborts);
ATF_TEST_CASE_BODY(wrong_size__reported_and_aborts)
{
    struct Plain {
        size_t size, claimed;
    };
    for (const Plain &c : { Plain{ 100, 200 }, Plain{ 24, 8 }, Plain{ 5000, 4000 }, Plain{ 100000, 70000 },
                            Plain{ size_t(3) << 20, size_t(2) << 20 }, Plain{ 0, 4096 } }) {
        require_death_in_child("sdallocx", c.claimed, [c] { return ::operator new(c.size); },
                               [c](void *p) { ::operator delete(testutil::opaque(p), c.claimed); });
        require_death_in_child("sdallocx", c.claimed, [c] { return ::operator new[](c.size); },
                               [c](void *p) { ::operator delete[](testutil::opaque(p), c.claimed); });
    }
    const std::align_val_t al = static_cast<std::align_val_t>(64);
    require_death_in_child("sdallocx", 300, [al] { return ::operator new(100, al); },
                           [al](void *p) { ::operator delete(testutil::opaque(p), 300, al); });
    require_death_in_child("sdallocx", 100, [al] { return ::operator new[](5000, al); },
                           [al](void *p) { ::operator delete[](testutil::opaque(p), 100, al); });
    // The same size with another alignment is another request too.
    const std::align_val_t page = static_cast<std::align_val_t>(4096);
    require_death_in_child("sdallocx", 100, [page] { return ::operator new(100, page); },
                           [al](void *p) { ::operator delete(testutil::opaque(p), 100, al); });
}

// The control: a claimed size in the block's own size class is that block's
// (the check is the size class's, as free_sized's and sdallocx's), and the right size
// is never reported.
ATF_TEST_CASE_WITHOUT_HEAD(wrong_size__same_class_not_reported);
ATF_TEST_CASE_BODY(wrong_size__same_class_not_reported)
{
    const testutil::child_result r = testutil::run_in_child([] {
        void *p = ::operator new(100);
        ::operator delete(testutil::opaque(p), 105);
        void *q = ::operator new(100);
        ::operator delete(testutil::opaque(q), 100);
    });
    TU_REQUIRE_MSG(r.exited_ok() && r.err.empty(), r.describe());
}

// The base-class bug, in this process's children: a Derived deleted
// through a Base* without a virtual destructor passes sizeof(Base).
ATF_TEST_CASE_WITHOUT_HEAD(wrong_size__base_class_delete);
ATF_TEST_CASE_BODY(wrong_size__base_class_delete)
{
    struct Base {
        unsigned char header[24];
        ~Base() {}
    };
    struct Derived : Base {
        unsigned char body[400];
    };
    require_death_in_child("sdallocx", sizeof(Base), [] { return static_cast<void *>(new Derived); },
                           [](void *p) { delete static_cast<Base *>(testutil::opaque(p)); });
}

// cxx_target_linked, default mode and S: every kind of bad delete.  The
// program calls no malloc itself, so where the toolchain links with
// --as-needed (Debian's gcc does) libarenalloc is not in its own list and
// glibc's malloc comes first: the operators must not depend on malloc.
ATF_TEST_CASE_WITHOUT_HEAD(wrong_size__linked_default_and_S);
ATF_TEST_CASE_BODY(wrong_size__linked_default_and_S)
{
    for (const char *options : { "", "S" })
        for (const BadDelete &b : bad_deletes())
            require_target_report(run_target(true, false, options, b.args), b.fn, b.min_usable);
}

ATF_TEST_CASE_WITHOUT_HEAD(sweep__linked_under_S);
ATF_TEST_CASE_BODY(sweep__linked_under_S)
{
    const testutil::child_result r = run_target(true, false, "S", { "sweep" });
    TU_REQUIRE_MSG(r.exited_ok() && r.out == "sweep ok\n" && r.err.empty(),
                   r.describe() << " stdout [" << r.out << "]");
}

// An ordinary g++ program (cxx_target, nothing of arenalloc linked) with
// LD_PRELOAD="libarenalloc_cxx.so libarenalloc.so".
ATF_TEST_CASE_WITHOUT_HEAD(preloaded__sweep_default_and_S);
ATF_TEST_CASE_BODY(preloaded__sweep_default_and_S)
{
    for (const char *options : { "", "S" }) {
        const testutil::child_result r = run_target(false, true, options, { "sweep" });
        TU_REQUIRE_MSG(r.exited_ok() && r.out == "sweep ok\n" && r.err.empty(),
                       "MALLOC_OPTIONS=" << options << ": " << r.describe() << " stdout [" << r.out << "]");
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(preloaded__wrong_size_default_and_S);
ATF_TEST_CASE_BODY(preloaded__wrong_size_default_and_S)
{
    for (const char *options : { "", "S" })
        for (const BadDelete &b : bad_deletes())
            require_target_report(run_target(false, true, options, b.args), b.fn, b.min_usable);
    // The control: without the library, libstdc++'s sized delete drops the
    // size and nothing is seen.
    const testutil::child_result r = run_target(false, false, "", { "base-delete" });
    TU_REQUIRE_MSG(r.exited_ok() && r.out.find("survived") != std::string::npos, r.describe());
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, sweep__every_form_no_report);
    ATF_ADD_TEST_CASE(tcs, aligned__64_4096_2mib);
    ATF_ADD_TEST_CASE(tcs, delete__null_is_no_op);
    ATF_ADD_TEST_CASE(tcs, new__zero_bytes_distinct);
    ATF_ADD_TEST_CASE(tcs, new_handler__called_then_bad_alloc);
    ATF_ADD_TEST_CASE(tcs, nothrow__returns_nullptr);
    ATF_ADD_TEST_CASE(tcs, aligned__not_power_of_two_refused);
    ATF_ADD_TEST_CASE(tcs, wrong_size__reported_and_aborts);
    ATF_ADD_TEST_CASE(tcs, wrong_size__same_class_not_reported);
    ATF_ADD_TEST_CASE(tcs, wrong_size__base_class_delete);
    ATF_ADD_TEST_CASE(tcs, wrong_size__linked_default_and_S);
    ATF_ADD_TEST_CASE(tcs, sweep__linked_under_S);
    ATF_ADD_TEST_CASE(tcs, preloaded__sweep_default_and_S);
    ATF_ADD_TEST_CASE(tcs, preloaded__wrong_size_default_and_S);
}
