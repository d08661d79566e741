// The installed header arenalloc.h must compile in C++ together with the C
// library's <malloc.h>, in either order (this file includes it after
// <malloc.h>, header_other_order.cc before).
#include <malloc.h>

#include <atf-c++.hpp>

#include "arenalloc.h"

size_t usable_size_other_order(void *p);  // header_other_order.cc

ATF_TEST_CASE_WITHOUT_HEAD(header__with_malloc_h_in_cxx);
ATF_TEST_CASE_BODY(header__with_malloc_h_in_cxx) {
    void *p = malloc(100);
    ATF_REQUIRE(p != NULL);
    ATF_REQUIRE(malloc_usable_size(p) >= 100);
    ATF_REQUIRE_EQ(usable_size_other_order(p), malloc_usable_size(p));
    free(p);
    int trimmed = malloc_trim(0);
    ATF_REQUIRE(trimmed == 0 || trimmed == 1);
    ATF_REQUIRE(arenalloc_purge() < (size_t{1} << 40));
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, header__with_malloc_h_in_cxx);
}
