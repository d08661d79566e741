// platform_posix.cc — the POSIX part of platform.h, common to Linux,
// FreeBSD and illumos: unmapping, threads, clocks, files, stderr, exit.
// What differs between the systems (aligned mappings, purging, remapping,
// random seeds, CPU count, setuid checks, thread ids, utrace, fork hooks)
// is in the one system file configure picks by host_os; see
// platform_posix.h.  Within each file, features are chosen by configure
// checks (config.h), not by OS name.
#include "platform.h"
#include "platform_posix.h"
#include "mutex.h"

#include <atomic>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#if defined(HAVE___LIBC_SINGLE_THREADED)
#include <sys/single_threaded.h>
#endif

#include "util.h"

#if defined(HAVE_MAP_ANONYMOUS)
#define AA_MAP_ANON MAP_ANONYMOUS
#elif defined(HAVE_MAP_ANON)
#define AA_MAP_ANON MAP_ANON
#else
#error "arenalloc needs anonymous mmap"
#endif

namespace arenalloc {

namespace {

std::atomic<uint64_t> g_nmap{0};
std::atomic<uint64_t> g_nunmap{0};
std::atomic<uint64_t> g_nmadvise{0};
std::atomic<uint64_t> g_nhuge{0};
std::atomic<uint64_t> g_mapped{0};
int g_kept_stderr = -1;  // see platform_keep_stderr()

}  // namespace

void *posix_map(void *hint, size_t size, int extra_flags) {
    // The char * suits both declarations of mmap and munmap on illumos,
    // void * (POSIX) and caddr_t (the default, <sys/mman.h>).
    void *p = mmap(static_cast<char *>(hint), size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | AA_MAP_ANON | extra_flags, -1, 0);
    if (p == MAP_FAILED)
        return nullptr;
    g_nmap.fetch_add(1, std::memory_order_relaxed);
    g_mapped.fetch_add(size, std::memory_order_relaxed);
    return p;
}

void posix_count_purge() { g_nmadvise.fetch_add(1, std::memory_order_relaxed); }
void posix_count_huge() { g_nhuge.fetch_add(1, std::memory_order_relaxed); }

void posix_count_grown(size_t bytes) { g_mapped.fetch_add(bytes, std::memory_order_relaxed); }

void posix_count_moved_away(size_t old_bytes) {
    g_nunmap.fetch_add(1, std::memory_order_relaxed);
    g_mapped.fetch_sub(old_bytes, std::memory_order_relaxed);
}

bool posix_shrink_in_place(void *addr, size_t old_size, size_t new_size) {
    if (new_size > old_size)
        return false;
    if (new_size < old_size)
        pages_unmap(static_cast<char *>(addr) + new_size, old_size - new_size);
    return true;
}

uint64_t posix_weak_seed() {
    int local = 0;
    uint64_t seed = reinterpret_cast<uintptr_t>(&local) ^ (reinterpret_cast<uintptr_t>(&g_nmap) << 17);
    seed ^= platform_now_ms() * 0x9e3779b97f4a7c15ULL;
    return seed;
}

void platform_counters(PlatformCounters *out) {
    out->nmap = g_nmap.load(std::memory_order_relaxed);
    out->nunmap = g_nunmap.load(std::memory_order_relaxed);
    out->nmadvise = g_nmadvise.load(std::memory_order_relaxed);
    out->nhuge = g_nhuge.load(std::memory_order_relaxed);
    out->mapped = g_mapped.load(std::memory_order_relaxed);
}

void pages_unmap(void *addr, size_t size) {
    int saved_errno = errno;
    munmap(static_cast<char *>(addr), size);
    errno = saved_errno;
    g_nunmap.fetch_add(1, std::memory_order_relaxed);
    g_mapped.fetch_sub(size, std::memory_order_relaxed);
}

// Guard pages (the hardened profile): mprotect(2) is POSIX, the same on
// every system here.
bool pages_protect(void *addr, size_t size, bool accessible) {
    int saved_errno = errno;
    // char *: illumos declares mprotect with caddr_t by default.
    bool ok = mprotect(static_cast<char *>(addr), size,
                       accessible ? PROT_READ | PROT_WRITE : PROT_NONE) == 0;
    errno = saved_errno;
    return ok;
}

namespace {

pthread_key_t g_thread_exit_key;

}  // namespace

bool platform_thread_exit_hook(void (*fn)(void *)) {
    return pthread_key_create(&g_thread_exit_key, fn) == 0;
}

void platform_thread_exit_arm(void *arg) { pthread_setspecific(g_thread_exit_key, arg); }

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
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);  // Linux
#elif defined(CLOCK_MONOTONIC_FAST)
    clock_gettime(CLOCK_MONOTONIC_FAST, &ts);  // FreeBSD clock_gettime(2)
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
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
    const char *name = nullptr;
#if defined(HAVE_GETPROGNAME)
    name = getprogname();
#elif defined(HAVE_PROGRAM_INVOCATION_SHORT_NAME)
    name = program_invocation_short_name;
#endif
    return name != nullptr ? name : "arenalloc";
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

bool platform_at_exit(void (*fn)()) {
    g_exit_fn = fn;
#if defined(HAVE_ON_EXIT)
    return on_exit(run_exit_fn, nullptr) == 0;
#else
    return atexit(run_exit_fn) == 0;
#endif
}

bool platform_single_threaded() {
#if defined(ARENALLOC_ISTHREADED)
    return AA_SINGLE_THREADED();
#elif defined(HAVE___LIBC_SINGLE_THREADED)
    // glibc clears it when the process creates its first thread.
    return __libc_single_threaded != 0;
#elif defined(__linux__)
    // Linux without glibc (musl): field 20 of /proc/self/stat, after the
    // command name in parentheses (which may hold spaces and parentheses
    // itself, hence the last ')').
    int saved_errno = errno;  // fork() must not change it for the program
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = -1;
    char buf[512];
    if (fd >= 0) {
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
    }
    errno = saved_errno;
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = nullptr;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == ')')
            p = buf + i + 1;
    if (p == nullptr)
        return false;
    for (int field = 2; field < 20 && *p != '\0'; p++)
        if (*p == ' ')
            field++;
    return p[0] == '1' && p[1] == ' ';
#else
    return false;  // cannot tell: the handlers lock, as before
#endif
}

#if defined(HAVE__IO_LIST_LOCK)
// glibc exports these (libio); no public header declares them.
extern "C" void _IO_list_lock(void);
extern "C" void _IO_list_unlock(void);
extern "C" void _IO_list_resetlock(void);
#endif

// Where the C library has no such lock to take (musl; FreeBSD and
// illumos, whose libc calls _malloc_prefork in its own order when it
// imports arenalloc), nothing.
void platform_stdio_list_lock() {
#if defined(HAVE__IO_LIST_LOCK)
    // Recursive: fork()'s own _IO_list_lock() by this thread then passes.
    _IO_list_lock();
#endif
}

void platform_stdio_list_unlock() {
#if defined(HAVE__IO_LIST_LOCK)
    _IO_list_unlock();
#endif
}

void platform_stdio_list_reset_in_child() {
#if defined(HAVE__IO_LIST_LOCK)
    // fork() resets it too; a second reset is harmless, and covers a child
    // in which the C library thought itself single-threaded.
    _IO_list_resetlock();
#endif
}

}  // namespace arenalloc
