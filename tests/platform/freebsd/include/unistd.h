/* Stub of FreeBSD <unistd.h>: readlink(2), sysconf(3), write(2),
 * getpid(2), sbrk(2), issetugid(2).  brk(2): sbrk is "not present on
 * the arm64 or riscv architectures". */
#ifndef STUB_UNISTD_H
#define STUB_UNISTD_H
#include <sys/types.h>
#define STDERR_FILENO 2
#define _SC_PAGESIZE 47
#define _SC_NPROCESSORS_ONLN 58
#ifdef __cplusplus
extern "C" {
#endif
ssize_t readlink(const char *__restrict, char *__restrict, size_t);
long sysconf(int);
ssize_t write(int, const void *, size_t);
pid_t getpid(void);
#if !defined(__aarch64__) && !defined(__riscv)
void *sbrk(intptr_t);
#endif
int issetugid(void);
#ifdef __cplusplus
}
#endif
#endif
