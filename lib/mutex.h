// mutex.h — the lock every arena, the chunk registry and the metadata
// allocator use.  A thin wrapper over pthread mutexes that can be
// statically initialized (no constructor runs) and re-initialized in a
// fork child, where the parent's lock state is meaningless.
#ifndef ARENALLOC_MUTEX_H
#define ARENALLOC_MUTEX_H

#include <pthread.h>

#include <cstdint>

#include "config.h"

// A C library that knows whether the process has ever had a second thread
// (FreeBSD's __isthreaded) names that flag with configure
// --with-libc-threaded-flag=NAME; locks are then skipped while it is 0.
#if defined(ARENALLOC_ISTHREADED)
extern "C" int ARENALLOC_ISTHREADED;
#define AA_SINGLE_THREADED() (ARENALLOC_ISTHREADED == 0)
#else
#define AA_SINGLE_THREADED() false
#endif

namespace arenalloc {

// Tells the CPU the thread is waiting in a loop (lets a sibling hardware
// thread run, saves power); nothing where there is no such hint.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

struct Mutex {
    pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
    // Statistics, written only while the lock is held.
    uint64_t nacquired_ = 0;
    uint64_t ncontended_ = 0;
    // Whether the holder really took lock_ (not skipped while the process
    // had one thread), so unlock() matches lock() even if a thread was
    // created in between.
    bool taken_ = false;

    void lock() {
        if (AA_SINGLE_THREADED()) {
            nacquired_++;
            return;
        }
        if (pthread_mutex_trylock(&lock_) != 0) {
            pthread_mutex_lock(&lock_);
            ncontended_++;
        }
        taken_ = true;
        nacquired_++;
    }
    // lock(), but first retrying a busy lock up to spins times, pausing
    // between tries: for a lock whose holders keep it only briefly.
    void lock_spinning(unsigned spins) {
        if (AA_SINGLE_THREADED()) {
            lock();
            return;
        }
        if (pthread_mutex_trylock(&lock_) != 0) {
            // Contended, however it ends.
            bool got = false;
            for (unsigned i = 0; i < spins && !got; i++) {
                cpu_relax();
                got = pthread_mutex_trylock(&lock_) == 0;
            }
            if (!got)
                pthread_mutex_lock(&lock_);
            ncontended_++;
        }
        taken_ = true;
        nacquired_++;
    }
    // Takes the lock only if no one holds it: for a thread that has
    // somewhere else to go when it is busy.
    bool try_lock() {
        if (AA_SINGLE_THREADED()) {
            nacquired_++;
            return true;
        }
        if (pthread_mutex_trylock(&lock_) != 0)
            return false;
        taken_ = true;
        nacquired_++;
        return true;
    }
    void unlock() {
        if (taken_) {
            taken_ = false;
            pthread_mutex_unlock(&lock_);
        }
    }

    // For a mutex in zeroed metadata memory, which is not necessarily a
    // valid unlocked mutex on every system.
    void init() {
        pthread_mutex_init(&lock_, nullptr);
        taken_ = false;
    }

    // In a fork child only the forking thread exists; every lock it took in
    // the prefork handler is re-created free rather than unlocked.
    void reinit_in_child() {
        pthread_mutex_init(&lock_, nullptr);
        taken_ = false;
    }
};

// Tag for adopting a lock the caller already holds.
struct AlreadyLocked {};
constexpr AlreadyLocked kAlreadyLocked{};

class MutexGuard {
  public:
    explicit MutexGuard(Mutex &m) : m_(m) { m_.lock(); }
    MutexGuard(Mutex &m, AlreadyLocked) : m_(m) {}
    ~MutexGuard() { m_.unlock(); }
    MutexGuard(const MutexGuard &) = delete;
    MutexGuard &operator=(const MutexGuard &) = delete;

  private:
    Mutex &m_;
};

}  // namespace arenalloc

#endif
