/* Stub of FreeBSD <fcntl.h>, as open(2) and fcntl(2) give it. */
#ifndef STUB_FCNTL_H
#define STUB_FCNTL_H
#include <sys/types.h>
#define O_WRONLY 0x0001
#define O_APPEND 0x0008
#define O_CREAT 0x0200
#define O_CLOEXEC 0x00100000
#define F_DUPFD_CLOEXEC 17
#ifdef __cplusplus
extern "C" {
#endif
int open(const char *, int, ...);
int fcntl(int, int, ...);
#ifdef __cplusplus
}
#endif
#endif
