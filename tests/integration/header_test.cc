// The installed header arenalloc.h must compile in C++ together with the C
// library's <malloc.h>, in either order (this file includes it after
// <malloc.h>, header_other_order.cc before).
#include <malloc.h>
#include <pthread.h>

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
    ATF_REQUIRE(arenalloc_purge() < SIZE_MAX / 2);
}

extern "C" {
void _malloc_prefork(void);
void _malloc_postfork(void);
void _malloc_thread_cleanup(void);
}

namespace {

void *cleanup_then_allocate(void *) {
    void *p = malloc(100);
    free(p);
    // What a libc's thread exit calls; allocating afterwards still works
    // (other destructors may), without a thread cache.
    _malloc_thread_cleanup();
    void *q = malloc(100);
    ATF_REQUIRE(q != NULL);
    free(q);
    _malloc_thread_cleanup();  // twice is harmless
    return NULL;
}

}  // namespace

// The libc-private entry points: a fork()'s lock protocol and thread exit.
ATF_TEST_CASE_WITHOUT_HEAD(libc__entry_points);
ATF_TEST_CASE_BODY(libc__entry_points) {
    _malloc_prefork();
    _malloc_postfork();
    void *p = malloc(1000);
    ATF_REQUIRE(p != NULL);
    free(p);
    pthread_t t;
    ATF_REQUIRE_EQ(pthread_create(&t, NULL, cleanup_then_allocate, NULL), 0);
    ATF_REQUIRE_EQ(pthread_join(t, NULL), 0);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, libc__entry_points);
    ATF_ADD_TEST_CASE(tcs, header__with_malloc_h_in_cxx);
}
