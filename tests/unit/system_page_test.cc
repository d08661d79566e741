// Unit tests of the start-up check of the system's page size
// (check_system_page, lib/init.cc): a system whose pages are bigger than
// the build's is refused with one line naming both sizes, then abort();
// one whose pages are the same or smaller is accepted.  The check is
// called here with chosen sizes, in a forked child, so that no hook in the
// library can make a real process believe in another page size.
#include <atf-c++.hpp>

#include <string>

#include "child_process.h"
#include "require_msg.h"

#include "init.h"
#include "platform.h"

using namespace arenalloc;

namespace {

void check_twice_the_page() { check_system_page(2 * kPage); }
void check_sixteen_times_the_page() { check_system_page(16 * kPage); }
void check_the_page() { check_system_page(kPage); }
void check_half_the_page() { check_system_page(kPage / 2); }
void check_this_system() { check_system_page(platform_page_size()); }

std::string refusal(size_t system_page) {
    return "arenalloc: the system's pages are " + std::to_string(system_page) +
           " bytes, larger than the " + std::to_string(kPage) +
           " bytes arenalloc was built for (configure --with-lg-page)\n";
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(larger_system_page__refused_with_one_line);
ATF_TEST_CASE_BODY(larger_system_page__refused_with_one_line) {
    ChildResult r = run_in_child(check_twice_the_page);
    ATF_REQUIRE_MSG(aborted(r), "status " << r.status);
    ATF_REQUIRE_EQ(r.err, refusal(2 * kPage));
    r = run_in_child(check_sixteen_times_the_page);
    ATF_REQUIRE_MSG(aborted(r), "status " << r.status);
    ATF_REQUIRE_EQ(r.err, refusal(16 * kPage));
}

ATF_TEST_CASE_WITHOUT_HEAD(same_or_smaller_system_page__accepted);
ATF_TEST_CASE_BODY(same_or_smaller_system_page__accepted) {
    for (void (*body)() : {check_the_page, check_half_the_page}) {
        ChildResult r = run_in_child(body);
        ATF_REQUIRE_MSG(exited_ok(r), "status " << r.status);
        ATF_REQUIRE_EQ(r.err, "");
    }
}

// The machine running the suite has pages no bigger than the build's (a
// 16 or 64 KiB build runs here on 4 KiB pages), so its own check passes.
ATF_TEST_CASE_WITHOUT_HEAD(this_system__accepted);
ATF_TEST_CASE_BODY(this_system__accepted) {
    ATF_REQUIRE(platform_page_size() <= kPage);
    ChildResult r = run_in_child(check_this_system);
    ATF_REQUIRE_MSG(exited_ok(r), "status " << r.status);
    ATF_REQUIRE_EQ(r.err, "");
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, larger_system_page__refused_with_one_line);
    ATF_ADD_TEST_CASE(tcs, same_or_smaller_system_page__accepted);
    ATF_ADD_TEST_CASE(tcs, this_system__accepted);
}
