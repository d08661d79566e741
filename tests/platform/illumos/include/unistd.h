/* Stub of illumos <unistd.h>: readlink(2), sysconf(3C), write(2),
 * getpid(2), sbrk(2), issetugid(2). */
#ifndef STUB_UNISTD_H
#define STUB_UNISTD_H
#include <sys/types.h>
#define STDERR_FILENO 2
#define _SC_PAGESIZE 11
#define _SC_NPROCESSORS_ONLN 15
#ifdef __cplusplus
extern "C" {
#endif
extern ssize_t readlink(const char *__restrict, char *__restrict, size_t);
extern long sysconf(int);
extern ssize_t write(int, const void *, size_t);
extern pid_t getpid(void);
extern void *sbrk(intptr_t);
extern int issetugid(void);
#ifdef __cplusplus
}
#endif
#endif
