// Unit tests of the run bitmap (lib/bitmap.h).
#include <atf-c++.hpp>

#include "bitmap.h"

using namespace arenalloc;

ATF_TEST_CASE_WITHOUT_HEAD(bitmap__init_counts);
ATF_TEST_CASE_BODY(bitmap__init_counts) {
    unsigned sizes[] = {1, 2, 63, 64, 65, 127, 128, 129, 300, 511, 512};
    for (unsigned n : sizes) {
        RunBitmap bm;
        bm.init(n);
        ATF_REQUIRE_EQ(bm.count_free(), n);
        for (unsigned i = 0; i < kMaxRunRegions; i++)
            ATF_REQUIRE_EQ(bm.is_free(i), i < n);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(bitmap__take_lowest_first);
ATF_TEST_CASE_BODY(bitmap__take_lowest_first) {
    RunBitmap bm;
    bm.init(300);
    unsigned hint = 0;
    for (unsigned i = 0; i < 300; i++) {
        ATF_REQUIRE_EQ(bm.take_first(&hint), i);
        ATF_REQUIRE(!bm.is_free(i));
    }
    ATF_REQUIRE_EQ(bm.count_free(), 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(bitmap__free_then_reuse);
ATF_TEST_CASE_BODY(bitmap__free_then_reuse) {
    RunBitmap bm;
    bm.init(512);
    unsigned hint = 0;
    for (unsigned i = 0; i < 512; i++)
        bm.take_first(&hint);
    bm.set_free(200);
    bm.set_free(70);
    bm.set_free(511);
    ATF_REQUIRE_EQ(bm.count_free(), 3u);
    hint = 0;
    ATF_REQUIRE_EQ(bm.take_first(&hint), 70u);
    ATF_REQUIRE_EQ(hint, 1u);
    ATF_REQUIRE_EQ(bm.take_first(&hint), 200u);
    ATF_REQUIRE_EQ(bm.take_first(&hint), 511u);
    ATF_REQUIRE_EQ(bm.count_free(), 0u);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, bitmap__init_counts);
    ATF_ADD_TEST_CASE(tcs, bitmap__take_lowest_first);
    ATF_ADD_TEST_CASE(tcs, bitmap__free_then_reuse);
}
