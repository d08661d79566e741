// platform_illumos.cc — the illumos part of platform.h; see
// platform_posix.h for how it sits beside platform_posix.cc.  Not built
// or run here: tests/platform/compile_test compiles it against stub headers
// that declare what the illumos manual pages cited below give, nothing
// more.
#include "platform.h"
#include "platform_posix.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(HAVE_GETRANDOM)
#include <sys/random.h>
#endif

#include "util.h"

// illumos mmap(2): with MAP_ALIGN, addr is not a hint but the alignment
// the mapping must have (0 or a power-of-two multiple of the page size).
#if !defined(MAP_ALIGN)
#error "illumos' mmap(2) MAP_ALIGN is needed"
#endif

namespace arenalloc {

void *pages_map(size_t size, size_t align) {
    int saved_errno = errno;
    void *p = posix_map(reinterpret_cast<void *>(align), size, MAP_ALIGN);
    errno = saved_errno;
    return p;
}

bool pages_purge(void *addr, size_t size, bool now) {
    int saved_errno = errno;
    // illumos madvise(3C): after MADV_FREE the system frees the pages when
    // memory is short, and they then read as zero, else as the old data.
    // MADV_DONTNEED is not used even when now is set: for anonymous memory
    // it may write the contents to swap first.  madvise takes a caddr_t.
    (void)now;
#if defined(HAVE_MADV_FREE)
    madvise(static_cast<caddr_t>(addr), size, MADV_FREE);
#else
    (void)addr;
    (void)size;
#endif
    posix_count_purge();
    errno = saved_errno;
    return false;
}

bool pages_prefer_huge(void *addr, size_t size) {
    // illumos picks large pages for anonymous memory by its own policy;
    // memcntl(MC_HAT_ADVISE) could ask, but is not used here.
    posix_count_huge();
    (void)addr;
    (void)size;
    return false;
}

bool pages_resize_in_place(void *addr, size_t old_size, size_t new_size) {
    // No mremap on illumos: a mapping can shrink, never grow in place.
    return posix_shrink_in_place(addr, old_size, new_size);
}

bool pages_move(void *old_addr, size_t old_size, void *new_addr, size_t new_size) {
    // No mremap: huge reallocations copy.
    (void)old_addr;
    (void)old_size;
    (void)new_addr;
    (void)new_size;
    return false;
}

uint64_t platform_random_seed() {
    uint64_t seed = 0;
#if defined(HAVE_GETRANDOM)
    // illumos getrandom(2): the /dev/urandom source; GRND_NONBLOCK so that
    // an allocator never waits for entropy, and a short read or a failure
    // falls back below.
    int saved_errno = errno;
    ssize_t n = getrandom(&seed, sizeof(seed), GRND_NONBLOCK);
    errno = saved_errno;
    if (n == static_cast<ssize_t>(sizeof(seed)))
        return seed;
#endif
#if defined(HAVE_ARC4RANDOM_BUF)
    // illumos arc4random(3C): always succeeds.
    arc4random_buf(&seed, sizeof(seed));
    return seed;
#else
    return seed ^ posix_weak_seed();
#endif
}

unsigned platform_ncpus() {
    // illumos sysconf(3C): _SC_NPROCESSORS_ONLN, the processors online.
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<unsigned>(n) : 1u;
}

const char *platform_secure_getenv(const char *name) {
#if defined(HAVE_ISSETUGID)
    // illumos issetugid(2): non-zero when the process is running with
    // privileges it was given at exec (set-id, or changed since).
    if (issetugid() != 0)
        return nullptr;
#else
    if (getuid() != geteuid() || getgid() != getegid())
        return nullptr;
#endif
    return getenv(name);
}

uint64_t platform_tid() {
    // illumos pthread_self(3C): pthread_t is the thread's integer id (a
    // uint_t in <sys/types.h>), the one mdb and truss show.
    return static_cast<uint64_t>(pthread_self());
}

bool platform_utrace(const void *ptr, size_t size, const void *result) {
    // illumos has no utrace(2) (DTrace's pid provider sees the calls);
    // the U option writes text records instead.
    (void)ptr;
    (void)size;
    (void)result;
    return false;
}

bool platform_atfork(void (*prepare)(), void (*parent)(), void (*child)()) {
#if defined(HAVE_PTHREAD_ATFORK)
    // illumos pthread_atfork(3C).
    return pthread_atfork(prepare, parent, child) == 0;
#else
    (void)prepare;
    (void)parent;
    (void)child;
    return false;
#endif
}

}  // namespace arenalloc
