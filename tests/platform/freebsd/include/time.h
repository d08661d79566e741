/* Stub of FreeBSD <time.h>, as clock_gettime(2) and nanosleep(2) give
 * it; CLOCK_MONOTONIC_FAST is FreeBSD's cheaper, tick-precise clock. */
#ifndef STUB_TIME_H
#define STUB_TIME_H
#include <sys/types.h>
struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
#define CLOCK_MONOTONIC 4
#define CLOCK_MONOTONIC_FAST 12
#ifdef __cplusplus
extern "C" {
#endif
int clock_gettime(clockid_t, struct timespec *);
int nanosleep(const struct timespec *, struct timespec *);
#ifdef __cplusplus
}
#endif
#endif
