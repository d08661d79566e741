// cxx_target: an ordinary C++ program that cxx_test runs with
// libarenalloc_cxx preloaded (cxx_target) or linked (cxx_target_linked),
// in default mode and with MALLOC_OPTIONS=S.  It includes nothing of
// arenalloc.  What it does is named by its arguments:
//   sweep                  every form of new and delete used correctly
//                          (cxx_sweep.h); prints "sweep ok"
//   wrong-size N M         ::operator new(N), then ::operator delete(p, M)
//   wrong-aligned-size N M A   the same with alignment A
//   wrong-array-size N M   ::operator new[](N), then delete[](p, M)
//   base-delete            a derived object deleted through a base without
//                          a virtual destructor (the size is the base's)
// Before a bad delete it prints "block=P claimed=M" (flushed); after one
// that returns, "survived".
#include <stdio.h>
#include <stdlib.h>

#include <new>
#include <string>

#include "cxx_sweep.h"

namespace {

struct Base {
    unsigned char header[24];
    ~Base() {}  // not virtual: deleting a Derived through Base* is the bug
};

struct Derived : Base {
    unsigned char body[400];
};

size_t arg(char **argv, int i) { return static_cast<size_t>(strtoull(argv[i], nullptr, 0)); }

void say_block(const void *p, size_t claimed) {
    printf("block=%p claimed=%zu\n", p, claimed);
    fflush(stdout);
}

void survived() {
    printf("survived\n");
    fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
    const std::string what = argc > 1 ? argv[1] : "";
    if (what == "sweep" && argc == 2) {
        const std::string why = cxxsweep::all();
        if (!why.empty()) {
            printf("sweep failed: %s\n", why.c_str());
            return 1;
        }
        printf("sweep ok\n");
        return 0;
    }
    if (what == "wrong-size" && argc == 4) {
        void *p = ::operator new(arg(argv, 2));
        say_block(p, arg(argv, 3));
        ::operator delete(p, arg(argv, 3));
        survived();
        return 0;
    }
    if (what == "wrong-aligned-size" && argc == 5) {
        const std::align_val_t al = static_cast<std::align_val_t>(arg(argv, 4));
        void *p = ::operator new(arg(argv, 2), al);
        say_block(p, arg(argv, 3));
        ::operator delete(p, arg(argv, 3), al);
        survived();
        return 0;
    }
    if (what == "wrong-array-size" && argc == 4) {
        void *p = ::operator new[](arg(argv, 2));
        say_block(p, arg(argv, 3));
        ::operator delete[](p, arg(argv, 3));
        survived();
        return 0;
    }
    if (what == "base-delete" && argc == 2) {
        Base *b = new Derived;
        say_block(b, sizeof(Base));
        delete b;
        survived();
        return 0;
    }
    fprintf(stderr, "usage: cxx_target sweep | wrong-size N M | wrong-aligned-size N M A | "
                    "wrong-array-size N M | base-delete\n");
    return 2;
}
