/* Stub of illumos <sys/random.h>, as getrandom(2) gives it. */
#ifndef STUB_SYS_RANDOM_H
#define STUB_SYS_RANDOM_H
#include <sys/types.h>
#define GRND_NONBLOCK 0x0001
#ifdef __cplusplus
extern "C" {
#endif
extern ssize_t getrandom(void *, size_t, unsigned int);
#ifdef __cplusplus
}
#endif
#endif
