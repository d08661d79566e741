// Unit tests of lib/mutex.h built as a C library would build it, with a
// "has the process ever had a second thread" flag: locks are skipped while
// it is 0, and an unlock always matches its lock.
#include <atf-c++.hpp>

#include <errno.h>
#include <pthread.h>

#define ARENALLOC_ISTHREADED test_isthreaded
#include "mutex.h"

extern "C" int test_isthreaded;
int test_isthreaded = 0;

using namespace arenalloc;

ATF_TEST_CASE_WITHOUT_HEAD(mutex__skipped_while_single_threaded);
ATF_TEST_CASE_BODY(mutex__skipped_while_single_threaded) {
    Mutex m;
    test_isthreaded = 0;
    m.lock();
    // Not taken: the underlying mutex is free.
    ATF_REQUIRE_EQ(pthread_mutex_trylock(&m.lock_), 0);
    ATF_REQUIRE_EQ(pthread_mutex_unlock(&m.lock_), 0);
    m.unlock();
    ATF_REQUIRE_EQ(m.nacquired_, 1u);
}

ATF_TEST_CASE_WITHOUT_HEAD(mutex__taken_once_threaded);
ATF_TEST_CASE_BODY(mutex__taken_once_threaded) {
    Mutex m;
    test_isthreaded = 1;
    m.lock();
    ATF_REQUIRE_EQ(pthread_mutex_trylock(&m.lock_), EBUSY);
    m.unlock();
    ATF_REQUIRE_EQ(pthread_mutex_trylock(&m.lock_), 0);
    ATF_REQUIRE_EQ(pthread_mutex_unlock(&m.lock_), 0);
}

ATF_TEST_CASE_WITHOUT_HEAD(mutex__unlock_matches_lock_across_the_switch);
ATF_TEST_CASE_BODY(mutex__unlock_matches_lock_across_the_switch) {
    // Locked while single-threaded, unlocked after a thread appeared: the
    // unlock must not release a mutex that was never taken.
    Mutex m;
    test_isthreaded = 0;
    m.lock();
    test_isthreaded = 1;
    m.unlock();
    ATF_REQUIRE_EQ(pthread_mutex_trylock(&m.lock_), 0);
    ATF_REQUIRE_EQ(pthread_mutex_unlock(&m.lock_), 0);
    // And the other way round.
    m.lock();
    test_isthreaded = 0;
    m.unlock();
    ATF_REQUIRE_EQ(pthread_mutex_trylock(&m.lock_), 0);
    ATF_REQUIRE_EQ(pthread_mutex_unlock(&m.lock_), 0);
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, mutex__skipped_while_single_threaded);
    ATF_ADD_TEST_CASE(tcs, mutex__taken_once_threaded);
    ATF_ADD_TEST_CASE(tcs, mutex__unlock_matches_lock_across_the_switch);
}
