/* Stub of illumos <sys/mman.h> in its default (not strictly POSIX) form,
 * where mmap, munmap, madvise and mprotect take and give caddr_t (char *):
 * mmap(2), munmap(2), madvise(3C), mprotect(2). */
#ifndef STUB_SYS_MMAN_H
#define STUB_SYS_MMAN_H
#include <sys/types.h>

#define PROT_NONE 0x0
#define PROT_READ 0x1
#define PROT_WRITE 0x2
#define MAP_PRIVATE 2
#define MAP_ANON 0x100
#define MAP_ANONYMOUS MAP_ANON
/* mmap(2): addr is the alignment the mapping must have. */
#define MAP_ALIGN 0x200
#define MAP_FAILED ((void *)-1)
/* madvise(3C) */
#define MADV_FREE 5

#ifdef __cplusplus
extern "C" {
#endif
extern caddr_t mmap(caddr_t, size_t, int, int, int, off_t);
extern int munmap(caddr_t, size_t);
extern int madvise(caddr_t, size_t, int);
extern int mprotect(caddr_t, size_t, int);
#ifdef __cplusplus
}
#endif
#endif
