// new_delete.cc — the replaceable global operator new and operator delete
// of C++17 and C++20 (every form: plain, nothrow, aligned, sized) over
// arenalloc, built as a library of its own, libarenalloc_cxx.
//
// Why: libstdc++'s sized and aligned delete drop the size and call free(),
// so a delete that names the wrong size (a derived object deleted through
// a base without a virtual destructor, new[] freed with delete) is never
// seen.  Here the sized forms call sdallocx, whose check (free_sized's)
// reports a mismatch under its own name and aborts (arenalloc(3), "C++").
//
// A program linked with -larenalloc_cxx -larenalloc that never calls malloc
// itself loses libarenalloc from its own list with --as-needed (Debian's
// default), the C library is then searched first, and malloc and free are
// the C library's while sdallocx checks arenalloc's blocks.  So malloc and
// free (the fast paths) serve new and unsized delete only once they are
// seen to be arenalloc's; otherwise mallocx and dallocx, which only
// arenalloc defines, do.
//
// This is the one file of arenalloc built with exceptions and linked with
// libstdc++ (throwing new must throw std::bad_alloc and call the
// new-handler); libarenalloc itself stays free of the C++ runtime
// (lib/DECISIONS.md, "C++ operators in a library of their own").  Only the
// operators are exported (new_delete.map).
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

#include <atomic>
#include <new>

#include "malloc_np.h"

namespace {

// 0: not looked at yet, 1: malloc and free are arenalloc's, 2: they are not.
std::atomic<int> g_malloc_is_ours{0};

// Whether malloc and free, as this library's calls are bound, are in the
// object that defines mallocx.  A static program (dladdr knows no object)
// has one of each, and a copy of malloc beside arenalloc's would not link.
// A race only repeats the look; the answer is the same.
bool malloc_is_ours() {
    int known = g_malloc_is_ours.load(std::memory_order_relaxed);
    if (known == 0) {
        Dl_info ours, m, f;
        bool found = dladdr(reinterpret_cast<void *>(&ARENALLOC_NAME(mallocx)), &ours) != 0;
        bool same = !found;
        if (found && dladdr(reinterpret_cast<void *>(&ARENALLOC_NAME(malloc)), &m) != 0 &&
            dladdr(reinterpret_cast<void *>(&ARENALLOC_NAME(free)), &f) != 0)
            same = m.dli_fbase == ours.dli_fbase && f.dli_fbase == ours.dli_fbase;
        known = same ? 1 : 2;
        g_malloc_is_ours.store(known, std::memory_order_relaxed);
    }
    return known == 1;
}

// new must give a distinct pointer for 0 bytes; every delete that names a
// size must then name the same request, or the check would compare
// against another one.
inline size_t request_size(size_t size) { return size != 0 ? size : 1; }

inline bool is_power_of_two(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// The standard's loop: while the allocator has nothing, the new-handler
// may free something and return (try again), throw bad_alloc, or end the
// program; with no handler installed, bad_alloc is thrown.
template <typename Allocate>
void *allocate_or_throw(Allocate allocate) {
    for (;;) {
        void *p = allocate();
        if (p != nullptr)
            return p;
        std::new_handler handler = std::get_new_handler();
        if (handler == nullptr)
            throw std::bad_alloc();
        handler();
    }
}

void *allocate_aligned_or_throw(size_t size, std::align_val_t alignment) {
    size_t align = static_cast<size_t>(alignment);
    // Not a power of two: no handler can make that satisfiable, so fail at
    // once rather than loop (the standard leaves the call undefined).
    if (!is_power_of_two(align))
        throw std::bad_alloc();
    const int flags = MALLOCX_ALIGN(align);
    size = request_size(size);
    if (malloc_is_ours())
        return allocate_or_throw([=] { return ARENALLOC_NAME(aligned_alloc)(align, size); });
    return allocate_or_throw([=] { return ARENALLOC_NAME(mallocx)(size, flags); });
}

}  // namespace

void *operator new(size_t size) {
    size = request_size(size);
    if (malloc_is_ours())
        return allocate_or_throw([=] { return ARENALLOC_NAME(malloc)(size); });
    return allocate_or_throw([=] { return ARENALLOC_NAME(mallocx)(size, 0); });
}

void *operator new(size_t size, std::align_val_t alignment) {
    return allocate_aligned_or_throw(size, alignment);
}

// The nothrow and array forms go through the throwing single-object one, as
// the standard's defaults do, so that a program that replaces only that
// one gets it from all of them.
void *operator new(size_t size, const std::nothrow_t &) noexcept {
    try {
        return ::operator new(size);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

void *operator new(size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    try {
        return ::operator new(size, alignment);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

void *operator new[](size_t size) { return ::operator new(size); }

void *operator new[](size_t size, std::align_val_t alignment) {
    return ::operator new(size, alignment);
}

void *operator new[](size_t size, const std::nothrow_t &) noexcept {
    try {
        return ::operator new[](size);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

void *operator new[](size_t size, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    try {
        return ::operator new[](size, alignment);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

// free, dallocx and sdallocx do nothing with NULL, as delete must.
void operator delete(void *ptr) noexcept {
    if (malloc_is_ours())
        ARENALLOC_NAME(free)(ptr);
    else
        ARENALLOC_NAME(dallocx)(ptr, 0);
}

void operator delete(void *ptr, size_t size) noexcept {
    ARENALLOC_NAME(sdallocx)(ptr, request_size(size), 0);
}

void operator delete(void *ptr, std::align_val_t) noexcept { ::operator delete(ptr); }

// The size is checked with the alignment new was given: the same size
// aligned otherwise may be another size class.
void operator delete(void *ptr, size_t size, std::align_val_t alignment) noexcept {
    ARENALLOC_NAME(sdallocx)(ptr, request_size(size), MALLOCX_ALIGN(static_cast<size_t>(alignment)));
}

void operator delete(void *ptr, const std::nothrow_t &) noexcept { ::operator delete(ptr); }

void operator delete(void *ptr, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    ::operator delete(ptr, alignment);
}

void operator delete[](void *ptr) noexcept { ::operator delete(ptr); }

void operator delete[](void *ptr, size_t size) noexcept { ::operator delete(ptr, size); }

void operator delete[](void *ptr, std::align_val_t alignment) noexcept {
    ::operator delete(ptr, alignment);
}

void operator delete[](void *ptr, size_t size, std::align_val_t alignment) noexcept {
    ::operator delete(ptr, size, alignment);
}

void operator delete[](void *ptr, const std::nothrow_t &) noexcept { ::operator delete(ptr); }

void operator delete[](void *ptr, std::align_val_t alignment, const std::nothrow_t &) noexcept {
    ::operator delete(ptr, alignment);
}
