// target_format.h — how a target stores its numbers: the width of its
// words (pointers, size_t: 4 or 8 bytes) and its byte order.  The walker
// and arenalloc-stat run on this machine but may read a process, core file
// or library of another architecture; every integer they take from the
// target is decoded here, and nowhere else.
#ifndef ARENALLOC_WALKER_TARGET_FORMAT_H
#define ARENALLOC_WALKER_TARGET_FORMAT_H

#include <cstdint>

namespace walker {

struct TargetFormat {
    uint32_t word_size = 8;
    bool big_endian = false;

    // The unsigned integer of size bytes stored at p.  A field wider than
    // 8 bytes gives its low-order 8.
    uint64_t load(const uint8_t *p, uint32_t size) const {
        if (size > 8) {
            if (big_endian)
                p += size - 8;
            size = 8;
        }
        uint64_t v = 0;
        for (uint32_t i = 0; i < size; i++) {
            uint32_t byte = big_endian ? i : size - 1 - i;
            v = (v << 8) | p[byte];
        }
        return v;
    }

    uint64_t load_word(const uint8_t *p) const { return load(p, word_size); }

    // The order whose reading of the 8 bytes at p is value, when one is.
    static bool order_of(const uint8_t *p, uint64_t value, bool *big_endian) {
        for (bool big : {false, true}) {
            TargetFormat f;
            f.big_endian = big;
            if (f.load(p, 8) == value) {
                *big_endian = big;
                return true;
            }
        }
        return false;
    }
};

}  // namespace walker

#endif
