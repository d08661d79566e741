// mini_std.h — the few library parts of the C++ standard library that the
// integration tests use (string streams, threads, mutexes, condition
// variables), written over libc alone for the stand-alone build.
//
// Why: the stand-alone tests are linked statically against musl, and the
// only libstdc++ on the machine was built for glibc: its iostreams, locale
// and thread code cannot link against another C library.  Templates that
// live wholly in headers (vector, deque, string, algorithm, atomic) are
// used from the compiler's own headers; only what needs libstdc++.so is
// replaced here.  The names match the standard ones so that a test reads
// the same in both builds (test_util.h picks one set or the other).
#ifndef ARENALLOC_TESTS_STANDALONE_MINI_STD_H
#define ARENALLOC_TESTS_STANDALONE_MINI_STD_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>
#include <type_traits>
#include <utility>

namespace ministd {

// Aborts with a message: the subset has no exceptions to throw.
[[noreturn]] inline void
die(const char *what, int err)
{
    fprintf(stderr, "mini_std: %s failed (error %d)\n", what, err);
    abort();
}

// An output string stream for what the tests print: strings, characters,
// integers, floating point and pointers, in the standard's default format.
class ostringstream {
public:
    std::string str() const { return buf_; }

    ostringstream &operator<<(const std::string &s)
    {
        buf_ += s;
        return *this;
    }
    ostringstream &operator<<(const char *s)
    {
        buf_ += s != NULL ? s : "(null)";
        return *this;
    }
    ostringstream &operator<<(char c)
    {
        buf_ += c;
        return *this;
    }
    ostringstream &operator<<(bool b) { return *this << (b ? "1" : "0"); }
    ostringstream &operator<<(const void *p)
    {
        if (p == NULL)
            return *this << "0";
        return format("%p", p);
    }
    ostringstream &operator<<(double d) { return format("%g", d); }
    template <typename T>
    typename std::enable_if<std::is_integral<T>::value, ostringstream &>::type
    operator<<(T v)
    {
        if (std::is_signed<T>::value)
            return format("%lld", static_cast<long long>(v));
        return format("%llu", static_cast<unsigned long long>(v));
    }

private:
    template <typename V>
    ostringstream &format(const char *fmt, V v)
    {
        char tmp[64];
        int n = snprintf(tmp, sizeof tmp, fmt, v);
        if (n > 0)
            buf_.append(tmp, static_cast<size_t>(n) < sizeof tmp ? n : sizeof tmp - 1);
        return *this;
    }

    std::string buf_;
};

class mutex {
public:
    mutex() = default;
    mutex(const mutex &) = delete;
    mutex &operator=(const mutex &) = delete;
    ~mutex() { pthread_mutex_destroy(&m_); }

    void lock()
    {
        int err = pthread_mutex_lock(&m_);
        if (err != 0)
            die("pthread_mutex_lock", err);
    }
    void unlock() { pthread_mutex_unlock(&m_); }
    pthread_mutex_t *native_handle() { return &m_; }

private:
    pthread_mutex_t m_ = PTHREAD_MUTEX_INITIALIZER;
};

template <typename M>
class lock_guard {
public:
    explicit lock_guard(M &m) : m_(m) { m_.lock(); }
    lock_guard(const lock_guard &) = delete;
    lock_guard &operator=(const lock_guard &) = delete;
    ~lock_guard() { m_.unlock(); }

private:
    M &m_;
};

template <typename M>
class unique_lock {
public:
    explicit unique_lock(M &m) : m_(&m), owns_(true) { m_->lock(); }
    unique_lock(const unique_lock &) = delete;
    unique_lock &operator=(const unique_lock &) = delete;
    ~unique_lock()
    {
        if (owns_)
            m_->unlock();
    }

    void lock()
    {
        m_->lock();
        owns_ = true;
    }
    void unlock()
    {
        m_->unlock();
        owns_ = false;
    }
    M *mutex() const { return m_; }

private:
    M *m_;
    bool owns_;
};

class condition_variable {
public:
    condition_variable() = default;
    condition_variable(const condition_variable &) = delete;
    condition_variable &operator=(const condition_variable &) = delete;
    ~condition_variable() { pthread_cond_destroy(&c_); }

    void notify_one() { pthread_cond_signal(&c_); }
    void notify_all() { pthread_cond_broadcast(&c_); }
    void wait(unique_lock<ministd::mutex> &lock)
    {
        int err = pthread_cond_wait(&c_, lock.mutex()->native_handle());
        if (err != 0)
            die("pthread_cond_wait", err);
    }
    template <typename Pred>
    void wait(unique_lock<ministd::mutex> &lock, Pred ready)
    {
        while (!ready())
            wait(lock);
    }

private:
    pthread_cond_t c_ = PTHREAD_COND_INITIALIZER;
};

// A joinable thread running fn(args...) on copies of its arguments.
class thread {
public:
    thread() = default;
    template <typename F, typename... Args>
    explicit thread(F fn, Args... args)
    {
        auto call = [fn, args...]() mutable { fn(args...); };
        using Call = decltype(call);
        Call *heap = new Call(std::move(call));
        int err = pthread_create(&id_, NULL, &run<Call>, heap);
        if (err != 0)
            die("pthread_create", err);
        joinable_ = true;
    }
    thread(const thread &) = delete;
    thread &operator=(const thread &) = delete;
    thread(thread &&o) noexcept : id_(o.id_), joinable_(o.joinable_) { o.joinable_ = false; }
    thread &operator=(thread &&o) noexcept
    {
        if (joinable_)
            die("thread move onto a joinable thread", 0);
        id_ = o.id_;
        joinable_ = o.joinable_;
        o.joinable_ = false;
        return *this;
    }
    // Like std::thread: destroying a thread that was never joined is a bug.
    ~thread()
    {
        if (joinable_)
            die("thread destroyed unjoined", 0);
    }

    bool joinable() const { return joinable_; }
    void join()
    {
        int err = pthread_join(id_, NULL);
        if (err != 0)
            die("pthread_join", err);
        joinable_ = false;
    }

private:
    template <typename Call>
    static void *run(void *arg)
    {
        Call *call = static_cast<Call *>(arg);
        (*call)();
        delete call;
        return NULL;
    }

    pthread_t id_{};
    bool joinable_ = false;
};

}  // namespace ministd

#endif
