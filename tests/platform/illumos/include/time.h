/* Stub of illumos <time.h>, as clock_gettime(3C) and nanosleep(3C) give
 * it.  illumos has no coarse monotonic clock; CLOCK_MONOTONIC is
 * CLOCK_HIGHRES. */
#ifndef STUB_TIME_H
#define STUB_TIME_H
#include <sys/types.h>
struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
#define CLOCK_MONOTONIC 4
#ifdef __cplusplus
extern "C" {
#endif
extern int clock_gettime(clockid_t, struct timespec *);
extern int nanosleep(const struct timespec *, struct timespec *);
#ifdef __cplusplus
}
#endif
#endif
