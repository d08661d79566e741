// bitmap.h — the free-region bitmap of a small run.  A set bit means the
// region is free, so allocation is "find first set, clear it" and freeing
// sets the bit back; a bit already set on free is a double free.
#ifndef ARENALLOC_BITMAP_H
#define ARENALLOC_BITMAP_H

#include <cstddef>
#include <cstdint>

#include "size_classes.h"
#include "util.h"

namespace arenalloc {

constexpr unsigned kBitmapWords = kMaxRunRegions / 64;

struct RunBitmap {
    uint64_t words[kBitmapWords];

    // All nregs regions free, no bit beyond nregs set.
    void init(unsigned nregs) {
        unsigned full = nregs / 64;
        for (unsigned i = 0; i < full; i++)
            words[i] = ~uint64_t{0};
        if (full < kBitmapWords) {
            words[full] = (uint64_t{1} << (nregs % 64)) - 1;
            for (unsigned i = full + 1; i < kBitmapWords; i++)
                words[i] = 0;
        }
    }

    bool is_free(unsigned reg) const {
        return (words[reg / 64] >> (reg % 64)) & 1;
    }

    // Lowest free region at or after word hint, marked allocated; the caller
    // knows one exists.  Lowest-first keeps a run's live regions packed.
    unsigned take_first(unsigned *hint) {
        unsigned w = *hint;
        while (words[w] == 0)
            w++;
        unsigned bit = static_cast<unsigned>(__builtin_ctzll(words[w]));
        words[w] &= words[w] - 1;
        *hint = w;
        return w * 64 + bit;
    }

    void set_free(unsigned reg) { words[reg / 64] |= uint64_t{1} << (reg % 64); }

    unsigned count_free() const {
        unsigned n = 0;
        for (unsigned i = 0; i < kBitmapWords; i++)
            n += static_cast<unsigned>(__builtin_popcountll(words[i]));
        return n;
    }
};

}  // namespace arenalloc

#endif
