// platform.h — the whole operating-system contract of arenalloc.  Every
// system call the allocator makes goes through these functions.  They are
// defined by platform_posix.cc (what POSIX systems share) and by one system
// file chosen by configure from host_os: platform_linux.cc,
// platform_freebsd.cc or platform_illumos.cc; only these include
// <sys/mman.h>.  Within each, features follow configure checks (config.h).
#ifndef ARENALLOC_PLATFORM_H
#define ARENALLOC_PLATFORM_H

#include <cstddef>
#include <cstdint>

#include "config.h"
#include "util.h"

namespace arenalloc {

constexpr unsigned kLgPage = LG_PAGE;
constexpr size_t kPage = size_t{1} << kLgPage;

// Counters kept by the platform layer, so that tests and statistics can
// see what was asked of the kernel.  Updated with relaxed atomics: the
// calls they count are slow paths.
struct PlatformCounters {
    uint64_t nmap;       // successful mmap calls
    uint64_t nunmap;     // munmap calls
    uint64_t nmadvise;   // madvise calls made to purge pages
    uint64_t nhuge;      // requests for huge pages (pages_prefer_huge)
    uint64_t mapped;     // bytes currently mapped by the allocator
};
void platform_counters(PlatformCounters *out);

// Maps size bytes (a page multiple) of zeroed, read-write memory whose
// address is a multiple of align (a power of two >= kPage).  Returns
// nullptr when the kernel refuses.
void *pages_map(size_t size, size_t align);

// Returns [addr, addr+size) (page aligned) to the kernel.
void pages_unmap(void *addr, size_t size);

// Tells the kernel the contents of [addr, addr+size) are no longer needed;
// the range stays mapped and reads as zero or old data until written.
// Lazily (MADV_FREE where there is one: the kernel takes the pages when it
// needs them, and rewriting them before that costs no fault), or with now
// set at once (MADV_DONTNEED: the resident size drops immediately).
// Returns true when the pages are known to read as zero afterwards.
bool pages_purge(void *addr, size_t size, bool now);

// Asks the kernel to back [addr, addr+size) with huge pages when it can
// (Linux: MADV_HUGEPAGE, for transparent huge pages in "madvise" mode).
// False where the system has no such request (FreeBSD promotes superpages
// on its own) or refuses it; the range is usable either way.
bool pages_prefer_huge(void *addr, size_t size);

// Makes [addr, addr+size) (page aligned) inaccessible, so that any access
// faults at once (a guard page), or read-write again.  False when the
// kernel refuses (e.g. out of mapping entries); nothing changed then.
bool pages_protect(void *addr, size_t size, bool accessible);

// Tries to resize the mapping at addr in place (no move).  Returns true on
// success.  Fails when the platform cannot, or the neighbouring range is
// taken.
bool pages_resize_in_place(void *addr, size_t old_size, size_t new_size);

// A monotonic clock in milliseconds, cheap enough for slow paths (a coarse
// clock where the system has one).
uint64_t platform_now_ms();

// Moves the pages of [old_addr, +old_size) to new_addr, which the caller
// mapped with new_size bytes, growing the block to new_size; the old range
// is unmapped.  False (nothing changed) where the platform cannot.
bool pages_move(void *old_addr, size_t old_size, void *new_addr, size_t new_size);

// 64 random bits: from the kernel (Linux: the AT_RANDOM bytes; FreeBSD:
// arc4random_buf; illumos: getrandom or arc4random_buf), else from
// addresses and the clock.
uint64_t platform_random_seed();

// Starts a detached thread running fn(arg); false when it cannot.
bool platform_thread_start(void *(*fn)(void *), void *arg);

// Registers fn to run when a thread that armed it exits (thread-specific
// data: platform_thread_exit_arm); once per process.  False when it
// cannot (no hook then).
bool platform_thread_exit_hook(void (*fn)(void *));

// Arms the exit hook for the calling thread: fn(arg) runs at its exit.
void platform_thread_exit_arm(void *arg);

// Sleeps for ms milliseconds (or until a signal).
void platform_sleep_ms(uint64_t ms);

// Number of CPUs this process may run on (at least 1).
unsigned platform_ncpus();

// getenv that returns nullptr in setuid/setgid programs.
const char *platform_secure_getenv(const char *name);

// Reads the target of the symbolic link at path into buf (NUL-terminated);
// returns false when there is no such link.  No file is opened.
bool platform_readlink(const char *path, char *buf, size_t cap);

// The page size the system uses (to check against kPage).
size_t platform_page_size();

// Opens path for appending (created if missing, close-on-exec); -1 on
// failure.  Writes to a descriptor, retrying short writes.
int platform_open_append(const char *path);
void platform_write_fd(int fd, const char *buf, size_t len);

// Process and thread ids, for trace records.
uint64_t platform_pid();
uint64_t platform_tid();

// Records an allocation event with utrace(2) where the system has it
// (BSD); returns false elsewhere.
bool platform_utrace(const void *ptr, size_t size, const void *result);

// Extends the data segment (sbrk) by size bytes starting at a multiple of
// align, for chunks; nullptr where there is no sbrk or it fails.
void *pages_map_sbrk(size_t size, size_t align);

// Writes bytes to standard error, retrying on short writes; never allocates.
// When the program has closed descriptor 2 (GNU tools do so in an atexit
// handler) it writes to the copy kept by platform_keep_stderr(), if any.
void platform_write_stderr(const char *buf, size_t len);

// Keeps a close-on-exec copy of standard error at a high descriptor, for
// reports due at exit (the P option); costs the program one descriptor,
// so only done when such a report was asked for.
void platform_keep_stderr();

// The program's short name, for messages (never nullptr).
const char *platform_progname();

[[noreturn]] void platform_abort();

// Registers fork handlers (pthread_atfork semantics).  Returns false when
// it cannot be arranged.
bool platform_atfork(void (*prepare)(), void (*parent)(), void (*child)());

// Whether the process has one thread now, so that no other thread can hold
// or wait for a lock: the C library's own flag where it has one (a libc
// build's --with-libc-threaded-flag, glibc's __libc_single_threaded), else
// the kernel's thread count (Linux /proc); false when it cannot tell.
// Async-signal-safe: the fork handlers ask it.
bool platform_single_threaded();

// The C library's lock over its list of open streams, which its fork()
// takes after the fork handlers run and which fflush(NULL) holds while it
// waits for each stream's lock.  The fork handler takes it before the
// allocator's locks (the C library's own order: a thread inside getline()
// holds a stream's lock and calls realloc), releases it in the parent and
// re-creates it in the child.  Nothing where the C library has no such
// lock to take (then fork ordering is the C library's affair).
void platform_stdio_list_lock();
void platform_stdio_list_unlock();
void platform_stdio_list_reset_in_child();

// Runs fn when the process exits normally (after the handlers the program
// registers later).  Returns false when it cannot be arranged.
bool platform_at_exit(void (*fn)());

}  // namespace arenalloc

#endif
