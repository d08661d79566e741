/* Stub of FreeBSD <errno.h> (errno(2)): errno is a macro over the
 * per-thread __error(). */
#ifndef STUB_ERRNO_H
#define STUB_ERRNO_H
#ifdef __cplusplus
extern "C" {
#endif
int *__error(void);
#ifdef __cplusplus
}
#endif
#define errno (*__error())
#define EPERM 1
#define ENOENT 2
#define EINTR 4
#define EBADF 9
#define ENOMEM 12
#define EFAULT 14
#define EINVAL 22
#define EAGAIN 35
#endif
