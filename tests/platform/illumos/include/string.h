/* Stub of illumos <string.h>, as string(3C) (strchr, strlen, strncmp)
 * and memory(3C) (memcpy, memmove, memset) give it: what lib/ calls, and
 * what the compiler may call for a copy or a clear. */
#ifndef STUB_STRING_H
#define STUB_STRING_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
extern void *memcpy(void *__restrict, const void *__restrict, size_t);
extern void *memmove(void *, const void *, size_t);
extern void *memset(void *, int, size_t);
extern char *strchr(const char *, int);
extern size_t strlen(const char *);
extern int strncmp(const char *, const char *, size_t);
#ifdef __cplusplus
}
#endif
#endif
