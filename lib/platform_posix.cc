// platform_posix.cc — the POSIX implementation of platform.h (Linux,
// FreeBSD, illumos), chosen between by configure checks, never by OS name.
#include "platform.h"

#include <atomic>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_UTRACE
#include <sys/ktrace.h>
#endif
#ifdef HAVE_GETAUXVAL
#include <sys/auxv.h>
#endif

#include "util.h"

#if defined(HAVE_MAP_ANONYMOUS)
#define AA_MAP_ANON MAP_ANONYMOUS
#elif defined(HAVE_MAP_ANON)
#define AA_MAP_ANON MAP_ANON
#else
#error "arenalloc needs anonymous mmap"
#endif

extern "C" char *program_invocation_short_name __attribute__((weak));
extern "C" const char *getprogname(void) __attribute__((weak));

namespace arenalloc {

namespace {

std::atomic<uint64_t> g_nmap{0};
std::atomic<uint64_t> g_nunmap{0};
std::atomic<uint64_t> g_nmadvise{0};
std::atomic<uint64_t> g_mapped{0};
int g_kept_stderr = -1;  // see platform_keep_stderr()

void *map_exact(void *hint, size_t size) {
    void *p = mmap(hint, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | AA_MAP_ANON, -1, 0);
    if (p == MAP_FAILED)
        return nullptr;
    g_nmap.fetch_add(1, std::memory_order_relaxed);
    g_mapped.fetch_add(size, std::memory_order_relaxed);
    return p;
}

}  // namespace

void platform_counters(PlatformCounters *out) {
    out->nmap = g_nmap.load(std::memory_order_relaxed);
    out->nunmap = g_nunmap.load(std::memory_order_relaxed);
    out->nmadvise = g_nmadvise.load(std::memory_order_relaxed);
    out->mapped = g_mapped.load(std::memory_order_relaxed);
}

void *pages_map(size_t size, size_t align) {
    int saved_errno = errno;
    // Most mappings come back aligned by luck when the kernel places them
    // next to the previous one; try that first to avoid the over-map.
    void *p = map_exact(nullptr, size);
    if (p == nullptr) {
        errno = saved_errno;
        return nullptr;
    }
    if ((reinterpret_cast<uintptr_t>(p) & (align - 1)) == 0)
        return p;
    pages_unmap(p, size);

    size_t over = size + align - kPage;
    if (over < size) {  // wrapped: no such mapping can exist
        errno = saved_errno;
        return nullptr;
    }
    char *raw = static_cast<char *>(map_exact(nullptr, over));
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

void pages_unmap(void *addr, size_t size) {
    int saved_errno = errno;
    munmap(addr, size);
    errno = saved_errno;
    g_nunmap.fetch_add(1, std::memory_order_relaxed);
    g_mapped.fetch_sub(size, std::memory_order_relaxed);
}

bool pages_purge(void *addr, size_t size, bool now) {
    int saved_errno = errno;
    bool zeroed = false;  // see below
    bool done = false;
#if defined(HAVE_MADV_FREE)
    if (!now)
        done = madvise(addr, size, MADV_FREE) == 0;
#else
    (void)now;
#endif
#if defined(HAVE_MADV_DONTNEED)
    // Linux's MADV_DONTNEED drops private anonymous pages (later reads give
    // zeros) but on other systems it may be a mere hint, so purged pages
    // are never assumed to be zero.
    if (!done)
        done = madvise(addr, size, MADV_DONTNEED) == 0;
#endif
    (void)addr;
    (void)size;
    (void)done;
    g_nmadvise.fetch_add(1, std::memory_order_relaxed);
    errno = saved_errno;
    return zeroed;
}

bool pages_protect(void *addr, size_t size, bool accessible) {
    int saved_errno = errno;
    bool ok = mprotect(addr, size, accessible ? PROT_READ | PROT_WRITE : PROT_NONE) == 0;
    errno = saved_errno;
    return ok;
}

bool pages_resize_in_place(void *addr, size_t old_size, size_t new_size) {
    if (new_size == old_size)
        return true;
    if (new_size < old_size) {
        pages_unmap(static_cast<char *>(addr) + new_size, old_size - new_size);
        return true;
    }
#if defined(HAVE_MREMAP)
    int saved_errno = errno;
    void *p = mremap(addr, old_size, new_size, 0);
    errno = saved_errno;
    if (p == MAP_FAILED)
        return false;
    g_mapped.fetch_add(new_size - old_size, std::memory_order_relaxed);
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
    g_nunmap.fetch_add(1, std::memory_order_relaxed);
    g_mapped.fetch_sub(old_size, std::memory_order_relaxed);
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
    uint64_t seed = 0;
#if defined(HAVE_GETAUXVAL) && defined(AT_RANDOM)
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(getauxval(AT_RANDOM));
    if (bytes != nullptr) {
        for (int i = 0; i < 8; i++)
            seed = (seed << 8) | bytes[8 + i];
        return seed;
    }
#endif
    int local = 0;
    seed = reinterpret_cast<uintptr_t>(&local) ^ (reinterpret_cast<uintptr_t>(&g_nmap) << 17);
    seed ^= platform_now_ms() * 0x9e3779b97f4a7c15ULL;
    return seed;
}

bool platform_thread_start(void *(*fn)(void *), void *arg) {
    int saved_errno = errno;
    pthread_attr_t attr;
    bool ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t thread;
        ok = pthread_create(&thread, &attr, fn, arg) == 0;
        pthread_attr_destroy(&attr);
    }
    errno = saved_errno;
    return ok;
}

void platform_sleep_ms(uint64_t ms) {
    int saved_errno = errno;
    struct timespec ts;
    ts.tv_sec = static_cast<time_t>(ms / 1000);
    ts.tv_nsec = static_cast<long>((ms % 1000) * 1000000);
    nanosleep(&ts, nullptr);
    errno = saved_errno;
}

uint64_t platform_now_ms() {
    struct timespec ts;
#if defined(CLOCK_MONOTONIC_COARSE)
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

unsigned platform_ncpus() {
#if defined(HAVE_SCHED_GETAFFINITY) && defined(CPU_COUNT)
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

bool platform_readlink(const char *path, char *buf, size_t cap) {
    int saved_errno = errno;
    ssize_t n = readlink(path, buf, cap - 1);
    errno = saved_errno;
    if (n < 0)
        return false;
    buf[n] = '\0';
    return true;
}

size_t platform_page_size() {
    long n = sysconf(_SC_PAGESIZE);
    return n > 0 ? static_cast<size_t>(n) : kPage;
}

int platform_open_append(const char *path) {
    int saved_errno = errno;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    errno = saved_errno;
    return fd;
}

void platform_write_fd(int fd, const char *buf, size_t len) {
    int saved_errno = errno;
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        buf += n;
        len -= static_cast<size_t>(n);
    }
    errno = saved_errno;
}

uint64_t platform_pid() { return static_cast<uint64_t>(getpid()); }

uint64_t platform_tid() {
#if defined(SYS_gettid)
    return static_cast<uint64_t>(syscall(SYS_gettid));
#else
    return reinterpret_cast<uintptr_t>(pthread_self());
#endif
}

bool platform_utrace(const void *ptr, size_t size, const void *result) {
#if defined(HAVE_UTRACE)
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

void *pages_map_sbrk(size_t size, size_t align) {
#if defined(HAVE_SBRK)
    // sbrk is not thread-safe; chunks are rare, a lock is cheap here.
    static pthread_mutex_t sbrk_lock = PTHREAD_MUTEX_INITIALIZER;
    int saved_errno = errno;
    pthread_mutex_lock(&sbrk_lock);
    void *result = nullptr;
    void *cur = sbrk(0);
    if (cur != reinterpret_cast<void *>(-1)) {
        uintptr_t start = align_up(reinterpret_cast<uintptr_t>(cur), align);
        size_t grow = start - reinterpret_cast<uintptr_t>(cur) + size;
        if (grow >= size && sbrk(static_cast<intptr_t>(grow)) == cur) {
            result = reinterpret_cast<void *>(start);
            g_mapped.fetch_add(size, std::memory_order_relaxed);
        }
    }
    pthread_mutex_unlock(&sbrk_lock);
    errno = saved_errno;
    return result;
#else
    (void)size;
    (void)align;
    return nullptr;
#endif
}

void platform_keep_stderr() {
    if (g_kept_stderr < 0) {
        int saved_errno = errno;
        g_kept_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 64);
        errno = saved_errno;
    }
}

void platform_write_stderr(const char *buf, size_t len) {
    int saved_errno = errno;
    int fd = STDERR_FILENO;
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EBADF && fd == STDERR_FILENO && g_kept_stderr >= 0) {
                fd = g_kept_stderr;
                continue;
            }
            break;
        }
        buf += n;
        len -= static_cast<size_t>(n);
    }
    errno = saved_errno;
}

const char *platform_progname() {
    if (&getprogname != nullptr) {
        const char *name = getprogname();
        if (name != nullptr)
            return name;
    }
    if (&program_invocation_short_name != nullptr && program_invocation_short_name != nullptr)
        return program_invocation_short_name;
    return "arenalloc";
}

void platform_abort() {
    abort();
}

namespace {
void (*g_exit_fn)() = nullptr;
#if defined(HAVE_ON_EXIT)
void run_exit_fn(int, void *) { g_exit_fn(); }
#else
void run_exit_fn() { g_exit_fn(); }
#endif
}  // namespace

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

bool platform_at_exit(void (*fn)()) {
    g_exit_fn = fn;
#if defined(HAVE_ON_EXIT)
    return on_exit(run_exit_fn, nullptr) == 0;
#else
    return atexit(run_exit_fn) == 0;
#endif
}

}  // namespace arenalloc
