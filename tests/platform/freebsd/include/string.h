/* Stub of FreeBSD <string.h>, as memcpy(3), memmove(3), memset(3),
 * strchr(3), strlen(3) and strcmp(3) (strncmp) give it: what lib/ calls,
 * and what the compiler may call for a copy or a clear. */
#ifndef STUB_STRING_H
#define STUB_STRING_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
void *memcpy(void *__restrict, const void *__restrict, size_t);
void *memmove(void *, const void *, size_t);
void *memset(void *, int, size_t);
char *strchr(const char *, int);
size_t strlen(const char *);
int strncmp(const char *, const char *, size_t);
#ifdef __cplusplus
}
#endif
#endif
