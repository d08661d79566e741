// platform_linux.cc — the Linux part of platform.h (glibc, and musl where
// configure finds the same functions): aligned mappings by over-mapping,
// MADV_FREE/MADV_DONTNEED, mremap, AT_RANDOM, the affinity mask, gettid,
// __register_atfork.  Built and tested here; see platform_posix.h for how
// it sits beside platform_posix.cc.
#include "platform.h"
#include "platform_posix.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef HAVE_GETAUXVAL
#include <sys/auxv.h>
#endif

#include "util.h"

namespace arenalloc {

void *pages_map(size_t size, size_t align) {
    int saved_errno = errno;
    // Linux has no aligned mmap.  Most mappings come back aligned by luck
    // when the kernel places them next to the previous one; try that first
    // to avoid the over-map.
    void *p = posix_map(nullptr, size, 0);
    if (p == nullptr) {
        errno = saved_errno;
        return nullptr;
    }
    if ((reinterpret_cast<uintptr_t>(p) & (align - 1)) == 0)
        return p;
    pages_unmap(p, size);
    // The kernel hands out addresses downwards, so the aligned address just
    // below is usually free: ask for it (a hint, not MAP_FIXED) before
    // paying for an over-sized mapping and two trims.
    void *hint = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(p) & ~(align - 1));
    p = posix_map(hint, size, 0);
    if (p == hint)
        return p;
    if (p != nullptr)
        pages_unmap(p, size);

    // mmap aligns to the system's page, which may be smaller than kPage.
    size_t over = size + align - platform_page_size();
    if (over < size) {  // wrapped: no such mapping can exist
        errno = saved_errno;
        return nullptr;
    }
    char *raw = static_cast<char *>(posix_map(nullptr, over, 0));
    if (raw == nullptr) {
        errno = saved_errno;
        return nullptr;
    }
    uintptr_t start = align_up(reinterpret_cast<uintptr_t>(raw), align);
    size_t lead = start - reinterpret_cast<uintptr_t>(raw);
    size_t trail = over - lead - size;
    if (lead != 0)
        pages_unmap(raw, lead);
    if (trail != 0)
        pages_unmap(reinterpret_cast<char *>(start) + size, trail);
    errno = saved_errno;
    return reinterpret_cast<void *>(start);
}

bool pages_purge(void *addr, size_t size, bool now) {
    int saved_errno = errno;
    bool done = false;
#if defined(HAVE_MADV_FREE)
    // Kernels before 4.5 refuse MADV_FREE (EINVAL): fall through.
    if (!now)
        done = madvise(addr, size, MADV_FREE) == 0;
#else
    (void)now;
#endif
#if defined(HAVE_MADV_DONTNEED)
    // MADV_DONTNEED drops private anonymous pages at once (later reads give
    // zeros), but purged pages are still never promised to be zero: the
    // callers do not rely on it on any system.
    if (!done)
        done = madvise(addr, size, MADV_DONTNEED) == 0;
#endif
    (void)addr;
    (void)size;
    (void)done;
    posix_count_purge();
    errno = saved_errno;
    return false;
}

bool pages_prefer_huge(void *addr, size_t size) {
    posix_count_huge();
#if defined(HAVE_MADV_HUGEPAGE)
    // Refused (EINVAL) by kernels built without transparent huge pages.
    int saved_errno = errno;
    bool done = madvise(addr, size, MADV_HUGEPAGE) == 0;
    errno = saved_errno;
    return done;
#else
    (void)addr;
    (void)size;
    return false;
#endif
}

bool pages_resize_in_place(void *addr, size_t old_size, size_t new_size) {
    if (new_size <= old_size)
        return posix_shrink_in_place(addr, old_size, new_size);
#if defined(HAVE_MREMAP)
    // Without MREMAP_MAYMOVE, mremap grows the mapping where it is or fails.
    int saved_errno = errno;
    void *p = mremap(addr, old_size, new_size, 0);
    errno = saved_errno;
    if (p == MAP_FAILED)
        return false;
    posix_count_grown(new_size - old_size);
    return true;
#else
    return false;
#endif
}

bool pages_move(void *old_addr, size_t old_size, void *new_addr, size_t new_size) {
#if defined(HAVE_MREMAP) && defined(MREMAP_FIXED)
    int saved_errno = errno;
    void *p = mremap(old_addr, old_size, new_size, MREMAP_MAYMOVE | MREMAP_FIXED, new_addr);
    errno = saved_errno;
    if (p == MAP_FAILED)
        return false;
    // The reservation at new_addr was counted when it was mapped; the old
    // range is gone now.
    posix_count_moved_away(old_size);
    return true;
#else
    (void)old_addr;
    (void)old_size;
    (void)new_addr;
    (void)new_size;
    return false;
#endif
}

uint64_t platform_random_seed() {
#if defined(HAVE_GETAUXVAL) && defined(AT_RANDOM)
    // The 16 random bytes the kernel gives each process (AT_RANDOM),
    // read without a system call.
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(getauxval(AT_RANDOM));
    if (bytes != nullptr) {
        uint64_t seed = 0;
        for (int i = 0; i < 8; i++)
            seed = (seed << 8) | bytes[8 + i];
        return seed;
    }
#endif
    return posix_weak_seed();
}

unsigned platform_ncpus() {
#if defined(HAVE_SCHED_GETAFFINITY) && defined(CPU_COUNT)
    // The CPUs this process may run on (taskset, cgroups cpusets), not all
    // of the machine's.
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return static_cast<unsigned>(n);
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<unsigned>(n) : 1u;
}

const char *platform_secure_getenv(const char *name) {
#if defined(HAVE_ISSETUGID)
    if (issetugid() != 0)
        return nullptr;
    return getenv(name);
#elif defined(HAVE_SECURE_GETENV)
    return secure_getenv(name);
#elif defined(HAVE_GETAUXVAL) && defined(AT_SECURE)
    if (getauxval(AT_SECURE) != 0)
        return nullptr;
    return getenv(name);
#else
    if (getuid() != geteuid() || getgid() != getegid())
        return nullptr;
    return getenv(name);
#endif
}

uint64_t platform_tid() {
#if defined(SYS_gettid)
    return static_cast<uint64_t>(syscall(SYS_gettid));
#else
    return reinterpret_cast<uintptr_t>(pthread_self());
#endif
}

bool platform_utrace(const void *ptr, size_t size, const void *result) {
    // Linux has no utrace(2); the U option writes text records instead.
    (void)ptr;
    (void)size;
    (void)result;
    return false;
}

#if defined(HAVE___REGISTER_ATFORK)
extern "C" int __register_atfork(void (*)(), void (*)(), void (*)(), void *);
#endif

bool platform_atfork(void (*prepare)(), void (*parent)(), void (*child)()) {
#if defined(HAVE___REGISTER_ATFORK)
    // No DSO handle: the library is linked -z nodelete and never unloaded.
    return __register_atfork(prepare, parent, child, nullptr) == 0;
#elif defined(HAVE_PTHREAD_ATFORK)
    return pthread_atfork(prepare, parent, child) == 0;
#else
    (void)prepare;
    (void)parent;
    (void)child;
    return false;
#endif
}

}  // namespace arenalloc
