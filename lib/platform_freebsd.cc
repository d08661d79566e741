// platform_freebsd.cc — the FreeBSD part of platform.h; see
// platform_posix.h for how it sits beside platform_posix.cc.  Not built
// or run here: tests/platform/compile_test compiles it against stub headers
// that declare what the FreeBSD manual pages cited below give, nothing
// more.  The C library's single-thread flag, __isthreaded, is used by
// mutex.h (configure sets ARENALLOC_ISTHREADED=__isthreaded on FreeBSD).
#include "platform.h"
#include "platform_posix.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/thr.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(HAVE_UTRACE)
// The headers utrace(2) lists in its SYNOPSIS.
#include <sys/param.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/ktrace.h>
#endif

#include "util.h"

// FreeBSD mmap(2): MAP_ALIGNED(n) asks for a region aligned to 2^n bytes,
// and mmap fails rather than return another; no mapping is ever trimmed.
#if !defined(MAP_ALIGNED)
#error "FreeBSD's mmap(2) MAP_ALIGNED is needed"
#endif

namespace arenalloc {

void *pages_map(size_t size, size_t align) {
    int saved_errno = errno;
    // mmap(2) fails (EINVAL) for an alignment below a page or beyond the
    // address size, and when no aligned region is free (ENOMEM); align is
    // a power of two >= kPage here.
    void *p = posix_map(nullptr, size, MAP_ALIGNED(static_cast<int>(lg_floor(align))));
    errno = saved_errno;
    return p;
}

bool pages_purge(void *addr, size_t size, bool now) {
    int saved_errno = errno;
    // FreeBSD madvise(2): MADV_FREE lets the VM system reclaim the pages,
    // which afterwards read as zero or as the old data; MADV_DONTNEED only
    // lowers their priority and frees nothing.  Neither drops the pages at
    // once, so now makes no difference here.
    (void)now;
#if defined(HAVE_MADV_FREE)
    madvise(addr, size, MADV_FREE);
#else
    (void)addr;
    (void)size;
#endif
    posix_count_purge();
    errno = saved_errno;
    return false;
}

bool pages_prefer_huge(void *addr, size_t size) {
    // FreeBSD promotes aligned, fully populated 2 MiB ranges to superpages
    // by itself (vm.pmap.pg_ps_enabled): there is nothing to ask for.
    posix_count_huge();
    (void)addr;
    (void)size;
    return false;
}

bool pages_resize_in_place(void *addr, size_t old_size, size_t new_size) {
    // No mremap on FreeBSD: a mapping can shrink, never grow in place.
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
#if defined(HAVE_ARC4RANDOM_BUF)
    // FreeBSD arc4random(3): arc4random_buf fills a buffer from the
    // kernel-seeded generator; it keeps its state in its own pages, not
    // in malloc'ed memory, and never fails.
    uint64_t seed;
    arc4random_buf(&seed, sizeof(seed));
    return seed;
#else
    return posix_weak_seed();
#endif
}

unsigned platform_ncpus() {
    // FreeBSD sysconf(3): _SC_NPROCESSORS_ONLN, the CPUs online.
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<unsigned>(n) : 1u;
}

const char *platform_secure_getenv(const char *name) {
#if defined(HAVE_ISSETUGID)
    // FreeBSD issetugid(2): non-zero when the process was set-user-ID or
    // set-group-ID at exec, or changed its ids since; its environment
    // then comes from whoever ran it.
    if (issetugid() != 0)
        return nullptr;
#else
    if (getuid() != geteuid() || getgid() != getegid())
        return nullptr;
#endif
    return getenv(name);
}

uint64_t platform_tid() {
    // FreeBSD thr_self(2): the system-wide id of the calling thread, the
    // one ktrace and procstat show; a system call of libc, so a C library
    // build needs nothing from libthr for it.
    long id = 0;
    thr_self(&id);
    return static_cast<uint64_t>(id);
}

bool platform_utrace(const void *ptr, size_t size, const void *result) {
#if defined(HAVE_UTRACE)
    // FreeBSD utrace(2) adds len bytes at addr to the ktrace(1) log of a
    // traced process (nothing otherwise); the three words are the layout
    // of the malloc records kdump(1) decodes (sysdecode_utrace(3)).
    struct {
        const void *p;
        size_t s;
        const void *r;
    } record = {ptr, size, result};
    int saved_errno = errno;
    utrace(&record, sizeof(record));
    errno = saved_errno;
    return true;
#else
    (void)ptr;
    (void)size;
    (void)result;
    return false;
#endif
}

bool platform_atfork(void (*prepare)(), void (*parent)(), void (*child)()) {
#if defined(HAVE_PTHREAD_ATFORK)
    // FreeBSD pthread_atfork(3).
    return pthread_atfork(prepare, parent, child) == 0;
#else
    (void)prepare;
    (void)parent;
    (void)child;
    return false;
#endif
}

}  // namespace arenalloc
