/* Stub of FreeBSD <sys/thr.h>, as thr_self(2) gives it. */
#ifndef STUB_SYS_THR_H
#define STUB_SYS_THR_H
#ifdef __cplusplus
extern "C" {
#endif
int thr_self(long *id);
#ifdef __cplusplus
}
#endif
#endif
