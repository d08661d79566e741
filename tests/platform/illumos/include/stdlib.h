/* Stub of illumos <stdlib.h>: getenv(3C), abort(3C) (which does not
 * return), atexit(3C), arc4random(3C), getprogname(3C). */
#ifndef STUB_STDLIB_H
#define STUB_STDLIB_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
extern char *getenv(const char *);
extern void abort(void) __attribute__((__noreturn__));
extern int atexit(void (*)(void));
extern void arc4random_buf(void *, size_t);
extern const char *getprogname(void);
#ifdef __cplusplus
}
#endif
#endif
