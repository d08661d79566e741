/* Stub of illumos <fcntl.h>, as open(2) and fcntl(2) give it. */
#ifndef STUB_FCNTL_H
#define STUB_FCNTL_H
#include <sys/types.h>
#define O_WRONLY 1
#define O_APPEND 0x08
#define O_CREAT 0x100
#define O_CLOEXEC 0x800000
#define F_DUPFD_CLOEXEC 37
#ifdef __cplusplus
extern "C" {
#endif
extern int open(const char *, int, ...);
extern int fcntl(int, int, ...);
#ifdef __cplusplus
}
#endif
#endif
