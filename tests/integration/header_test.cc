// The installed headers arenalloc.h and malloc_np.h must compile in C++
// together with the C library's <malloc.h>, in any order (this file
// includes <malloc.h>, arenalloc.h, malloc_np.h; header_other_order.cc the
// reverse), and in C (header_np_first.c and header_np_last.c).
#include <malloc.h>
#include <pthread.h>

#include <atf-c++.hpp>

#include "arenalloc.h"
#include "malloc_np.h"

size_t usable_size_other_order(void *p);  // header_other_order.cc
size_t mallocx_other_order(size_t n);     // header_other_order.cc
extern "C" size_t mallocx_from_c_np_first(size_t n);  // header_np_first.c
extern "C" size_t mallocx_from_c_np_last(size_t n);   // header_np_last.c

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

// The mallocx family and its flags, declared by malloc_np.h, work from
// every translation unit, C and C++, whatever the order of the headers.
ATF_TEST_CASE_WITHOUT_HEAD(header__malloc_np_any_order);
ATF_TEST_CASE_BODY(header__malloc_np_any_order)
{
    const size_t want = nallocx(100, MALLOCX_ALIGN(64) | MALLOCX_ZERO);
    ATF_REQUIRE(want >= 100);
    ATF_REQUIRE_EQ(mallocx_other_order(100), want);
    ATF_REQUIRE_EQ(mallocx_from_c_np_first(100), want);
    ATF_REQUIRE_EQ(mallocx_from_c_np_last(100), want);
    void *p = reallocf(NULL, 10);
    ATF_REQUIRE(p != NULL);
    ATF_REQUIRE_EQ(sallocx(p, 0), malloc_usable_size(p));
    dallocx(p, 0);
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
    ATF_ADD_TEST_CASE(tcs, header__malloc_np_any_order);
}
