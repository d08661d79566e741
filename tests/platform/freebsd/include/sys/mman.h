/* Stub of FreeBSD <sys/mman.h>, as mmap(2), munmap(2), madvise(2) and
 * mprotect(2) give it. */
#ifndef STUB_SYS_MMAN_H
#define STUB_SYS_MMAN_H
#include <sys/types.h>

#define PROT_NONE 0x00
#define PROT_READ 0x01
#define PROT_WRITE 0x02
#define MAP_PRIVATE 0x0002
#define MAP_ANON 0x1000
#define MAP_ANONYMOUS MAP_ANON
/* mmap(2): MAP_ALIGNED(n), n the binary logarithm of the alignment. */
#define MAP_ALIGNMENT_SHIFT 24
#define MAP_ALIGNED(n) ((n) << MAP_ALIGNMENT_SHIFT)
#define MAP_FAILED ((void *)-1)
/* madvise(2) */
#define MADV_FREE 5

#ifdef __cplusplus
extern "C" {
#endif
void *mmap(void *, size_t, int, int, int, off_t);
int munmap(void *, size_t);
int madvise(void *, size_t, int);
int mprotect(void *, size_t, int);
#ifdef __cplusplus
}
#endif
#endif
