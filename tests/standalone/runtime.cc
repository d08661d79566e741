// runtime.cc — the C++ run-time support a stand-alone test program needs
// beyond the C library: operator new and delete (over malloc and free, so
// they too exercise the allocator under test), the guard of function-local
// statics, the pure-virtual trap, and the error paths the standard
// headers' containers call (_GLIBCXX_ASSERTIONS checks included).  With
// exceptions off (-fno-exceptions), each error path reports and aborts.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cstddef>
#include <new>

namespace {

[[noreturn]] void
die(const char *what, const char *detail)
{
    fprintf(stderr, "standalone runtime: %s%s%s\n", what, detail != NULL ? ": " : "",
            detail != NULL ? detail : "");
    abort();
}

void *
checked_malloc(std::size_t n)
{
    void *p = malloc(n != 0 ? n : 1);
    if (p == NULL)
        die("operator new", "out of memory");
    return p;
}

}  // namespace

void *operator new(std::size_t n) { return checked_malloc(n); }
void *operator new[](std::size_t n) { return checked_malloc(n); }
void operator delete(void *p) noexcept { free(p); }
void operator delete[](void *p) noexcept { free(p); }
void operator delete(void *p, std::size_t) noexcept { free(p); }
void operator delete[](void *p, std::size_t) noexcept { free(p); }

// Function-local statics: one lock for all of them (initializations are
// few and short); the first byte of the guard says "done".  A static whose
// initializer reaches its own guard again deadlocks, as the standard says
// is undefined.
namespace {
pthread_mutex_t g_static_init_lock = PTHREAD_MUTEX_INITIALIZER;
}

extern "C" int
__cxa_guard_acquire(uint64_t *guard)
{
    if (__atomic_load_n(reinterpret_cast<uint8_t *>(guard), __ATOMIC_ACQUIRE) != 0)
        return 0;
    pthread_mutex_lock(&g_static_init_lock);
    if (*reinterpret_cast<uint8_t *>(guard) != 0) {
        pthread_mutex_unlock(&g_static_init_lock);
        return 0;
    }
    return 1;  // the caller initializes, then calls release or abort
}

extern "C" void
__cxa_guard_release(uint64_t *guard)
{
    __atomic_store_n(reinterpret_cast<uint8_t *>(guard), 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_static_init_lock);
}

extern "C" void
__cxa_guard_abort(uint64_t *)
{
    pthread_mutex_unlock(&g_static_init_lock);
}

extern "C" void
__cxa_pure_virtual()
{
    die("pure virtual function called", NULL);
}

namespace std {
void
__glibcxx_assert_fail(const char *file, int line, const char *function,
                      const char *condition) noexcept
{
    fprintf(stderr, "%s:%d: %s: assertion '%s' failed\n", file, line, function, condition);
    abort();
}
void __throw_bad_alloc() { die("bad_alloc", NULL); }
void __throw_bad_array_new_length() { die("bad_array_new_length", NULL); }
void __throw_length_error(const char *s) { die("length_error", s); }
void __throw_logic_error(const char *s) { die("logic_error", s); }
void __throw_out_of_range(const char *s) { die("out_of_range", s); }
void __throw_out_of_range_fmt(const char *s, ...) { die("out_of_range", s); }
void __throw_invalid_argument(const char *s) { die("invalid_argument", s); }
void __throw_bad_function_call() { die("bad_function_call", NULL); }
}  // namespace std
