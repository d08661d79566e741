/* Stub of FreeBSD <sys/types.h>, as types(5) gives it for the LP64
 * ports (amd64, arm64): only the types lib/ names.  size_t comes from
 * the compiler's <stddef.h>. */
#ifndef STUB_SYS_TYPES_H
#define STUB_SYS_TYPES_H
#include <stddef.h>
#include <stdint.h>
typedef long ssize_t;
typedef long off_t;
typedef int pid_t;
typedef long time_t;
typedef int clockid_t;
#endif
