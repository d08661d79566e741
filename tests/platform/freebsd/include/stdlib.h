/* Stub of FreeBSD <stdlib.h>: getenv(3), abort(3) (which does not
 * return), atexit(3), arc4random(3), getprogname(3). */
#ifndef STUB_STDLIB_H
#define STUB_STDLIB_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
char *getenv(const char *);
void abort(void) __attribute__((__noreturn__));
int atexit(void (*)(void));
void arc4random_buf(void *, size_t);
const char *getprogname(void);
#ifdef __cplusplus
}
#endif
#endif
