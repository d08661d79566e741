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
#define EINTR 4
#define EBADF 9
#endif
