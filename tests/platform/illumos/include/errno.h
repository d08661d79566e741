/* Stub of illumos <errno.h> (errno(3C)): errno is a macro over the
 * per-thread ___errno(). */
#ifndef STUB_ERRNO_H
#define STUB_ERRNO_H
#ifdef __cplusplus
extern "C" {
#endif
extern int *___errno(void);
#ifdef __cplusplus
}
#endif
#define errno (*(___errno()))
#define EPERM 1
#define ENOENT 2
#define EINTR 4
#define EBADF 9
#define EAGAIN 11
#define ENOMEM 12
#define EFAULT 14
#define EINVAL 22
#endif
