/* Stub of FreeBSD <sys/ktrace.h>, as utrace(2) gives it. */
#ifndef STUB_SYS_KTRACE_H
#define STUB_SYS_KTRACE_H
#include <sys/types.h>
#ifdef __cplusplus
extern "C" {
#endif
int utrace(const void *addr, size_t len);
#ifdef __cplusplus
}
#endif
#endif
