// Every form of operator new and delete, used correctly, over many sizes
// and alignments (the sized deletes naming the size new was given): what
// must never be reported.  Shared by cxx_test (in its own process) and
// cxx_target (linked or preloaded, with MALLOC_OPTIONS=S as well).  Each
// sweep returns "" or the first thing that went wrong; a wrong report
// aborts the process instead.
#ifndef ARENALLOC_TESTS_INTEGRATION_CXX_SWEEP_H
#define ARENALLOC_TESTS_INTEGRATION_CXX_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <new>
#include <sstream>
#include <string>
#include <vector>

namespace cxxsweep {

const size_t kMiB = size_t(1) << 20;

// Every size up to 1 KiB, then around each power of two up to 4 MiB (the
// class boundaries, the large and huge thresholds), and 0.
inline std::vector<size_t>
sizes(size_t limit = 4 * kMiB)
{
    std::vector<size_t> v;
    for (size_t n = 0; n <= 1024; n++)
        v.push_back(n);
    for (size_t p = 2048; p <= limit; p *= 2)
        for (size_t n : { p - 1, p, p + 1, p + p / 4, p + p / 2 + 8, p + 3 * p / 4 })
            if (n <= limit)
                v.push_back(n);
    return v;
}

// 1 to 2 MiB, each power of two.
inline std::vector<size_t>
alignments()
{
    std::vector<size_t> v;
    for (size_t a = 1; a <= 2 * kMiB; a *= 2)
        v.push_back(a);
    return v;
}

// Touches the first and last byte, so that a block too small for its
// request faults (or breaks a canary) rather than pass.
inline void
touch(void *p, size_t n)
{
    if (n == 0)
        return;
    volatile unsigned char *b = static_cast<unsigned char *>(p);
    b[0] = 0xa5;
    b[n - 1] = 0x5a;
}

inline std::string
failure(const char *what, size_t size, size_t align, const void *p)
{
    std::ostringstream ss;
    ss << what << " (size " << size << ", alignment " << align << "): " << p;
    return ss.str();
}

// new, new[] and their nothrow forms, freed by the sized deletes (and the
// unsized ones for a third of the sizes).
inline std::string
sized()
{
    for (size_t n : sizes()) {
        void *p = ::operator new(n);
        void *a = ::operator new[](n);
        void *q = ::operator new(n, std::nothrow);
        void *r = ::operator new[](n, std::nothrow);
        if (q == nullptr || r == nullptr)
            return failure("nothrow new returned nullptr", n, 0, nullptr);
        if (p == a || p == q || p == r || a == q || a == r || q == r)
            return failure("two live blocks at one address", n, 0, p);
        touch(p, n); touch(a, n); touch(q, n); touch(r, n);
        ::operator delete(p, n);
        ::operator delete[](a, n);
        if (n % 3 == 0) {
            ::operator delete(q, std::nothrow);
            ::operator delete[](r);
        } else {
            ::operator delete(q, n);
            ::operator delete[](r, n);
        }
    }
    return "";
}

// The aligned forms at every alignment from 1 to 2 MiB, sizes up to
// 3 MiB: the pointer aligned, freed by the sized aligned deletes (the
// unsized ones for a third).
inline std::string
aligned()
{
    const std::vector<size_t> few = { 0, 1, 7, 8, 15, 16, 17, 48, 63, 64, 65, 100, 1000, 4095, 4096,
                                      4097, 14336, 20000, 70000, kMiB, 3 * kMiB };
    for (size_t align : alignments()) {
        const std::align_val_t al = static_cast<std::align_val_t>(align);
        for (size_t n : few) {
            void *p = ::operator new(n, al);
            void *a = ::operator new[](n, al);
            void *q = ::operator new(n, al, std::nothrow);
            if (q == nullptr)
                return failure("aligned nothrow new returned nullptr", n, align, nullptr);
            for (void *x : { p, a, q })
                if (reinterpret_cast<uintptr_t>(x) % align != 0)
                    return failure("aligned new: block not aligned", n, align, x);
            touch(p, n); touch(a, n); touch(q, n);
            ::operator delete(p, n, al);
            if (n % 3 == 0) {
                ::operator delete[](a, al);
                ::operator delete(q, al, std::nothrow);
            } else {
                ::operator delete[](a, n, al);
                ::operator delete(q, n, al);
            }
        }
    }
    return "";
}

// A class with a destructor: new[] asks for the elements plus a cookie
// that holds the count, and delete[] passes that same total to the sized
// delete (the compiler's part, which must match the allocator's check).
struct Counted {
    static size_t destroyed;
    size_t payload[3] = { 1, 2, 3 };
    ~Counted() { destroyed++; }
};
inline size_t Counted::destroyed = 0;

struct alignas(64) AlignedCounted {
    static size_t destroyed;
    unsigned char line[64] = {};
    ~AlignedCounted() { destroyed++; }
};
inline size_t AlignedCounted::destroyed = 0;

// Over-aligned types without a destructor: new picks the aligned forms.
struct alignas(4096) PageAligned {
    unsigned char page[4096];
};
struct alignas(2 * 1024 * 1024) HugeAligned {
    unsigned char bytes[64];
};

template <typename T>
std::string
counted_arrays(const char *name)
{
    std::vector<size_t> counts;
    for (size_t n = 0; n <= 600; n++)
        counts.push_back(n);
    for (size_t n : { 1000, 4096, 10000, 50000, 100000 })
        counts.push_back(n);
    for (size_t n : counts) {
        // Through a volatile count: the compiler must compute the cookie
        // at run time, as it does for any array of unknown length.
        volatile size_t count = n;
        T *a = new T[count];
        if (reinterpret_cast<uintptr_t>(a) % alignof(T) != 0)
            return failure(name, n * sizeof(T), alignof(T), a);
        const size_t before = T::destroyed;
        delete[] a;
        if (T::destroyed - before != n)
            return failure("delete[] ran the wrong number of destructors", n, alignof(T), nullptr);
    }
    return "";
}

inline std::string
arrays_and_types()
{
    std::string why = counted_arrays<Counted>("new Counted[]: not aligned");
    if (why.empty())
        why = counted_arrays<AlignedCounted>("new AlignedCounted[]: not aligned");
    if (!why.empty())
        return why;
    for (int i = 0; i < 20; i++) {
        PageAligned *page = new PageAligned;
        PageAligned *pages = new PageAligned[3];
        HugeAligned *huge = new HugeAligned;
        HugeAligned *huges = new HugeAligned[2];
        if (reinterpret_cast<uintptr_t>(page) % 4096 != 0 || reinterpret_cast<uintptr_t>(pages) % 4096 != 0)
            return failure("new PageAligned: not aligned", sizeof(PageAligned), 4096, page);
        if (reinterpret_cast<uintptr_t>(huge) % (2 * kMiB) != 0 ||
            reinterpret_cast<uintptr_t>(huges) % (2 * kMiB) != 0)
            return failure("new HugeAligned: not aligned", sizeof(HugeAligned), 2 * kMiB, huge);
        memset(pages, 1, 3 * sizeof(PageAligned));
        memset(huges, 2, 2 * sizeof(HugeAligned));
        delete page;
        delete[] pages;
        delete huge;
        delete[] huges;
    }
    return "";
}

// All of the above; "" when everything passed.
inline std::string
all()
{
    std::string why = sized();
    if (why.empty())
        why = aligned();
    if (why.empty())
        why = arrays_and_types();
    return why;
}

}  // namespace cxxsweep

#endif  // !ARENALLOC_TESTS_INTEGRATION_CXX_SWEEP_H
