// util.h — small freestanding helpers shared by every layer: attributes,
// bit operations and number formatting that never allocate.
#ifndef ARENALLOC_UTIL_H
#define ARENALLOC_UTIL_H

#include <cstddef>
#include <cstdint>

#define AA_LIKELY(x) __builtin_expect(!!(x), 1)
#define AA_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define AA_ALWAYS_INLINE inline __attribute__((always_inline))
#define AA_NOINLINE __attribute__((noinline))
#define AA_NORETURN __attribute__((noreturn))
#define AA_EXPORT __attribute__((visibility("default")))
// For the two exported functions that hold inline hit paths, malloc and
// free (api.cc): each starts on a 64-byte line, so its hot instructions
// span as few fetch lines as they can, whatever code comes before it.  At
// the 16-byte alignment GCC and clang give functions on x86-64, malloc's
// 22 instructions crossed three lines, and malloc-test took 2.5-5.5 %
// longer a pair (paired rounds at 1, 2, 4 and 8 threads; lib/DECISIONS.md,
// "malloc and free start on a cache line").
#define AA_ENTRY __attribute__((aligned(64)))
// For data declared in one file and used in others: -fvisibility=hidden
// covers definitions only, and without this the fast paths would reach
// such data through the GOT.
#define AA_HIDDEN __attribute__((visibility("hidden")))

namespace arenalloc {

constexpr bool is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Index of the highest set bit; x must be non-zero.
constexpr unsigned lg_floor(size_t x) {
    return 63u - static_cast<unsigned>(__builtin_clzll(x));
}

constexpr size_t align_up(size_t x, size_t align) {
    return (x + align - 1) & ~(align - 1);
}

// Formats v into buf (no terminator) and returns the digit count; buf
// must hold 20 characters for decimal and 16 for hex.
size_t format_decimal(char *buf, uint64_t v);
size_t format_hex(char *buf, uint64_t v);

// The offset of the first of the n bytes at p that is not c, or n: a scan
// that compares 32 bytes at a time (the S option's junk and canary checks).
size_t first_byte_not(const void *p, size_t n, unsigned char c);

// Bounded string builder over a caller-provided buffer, for messages that
// must be composed without malloc or stdio.
class LineBuffer {
  public:
    LineBuffer(char *buf, size_t cap) : buf_(buf), cap_(cap), len_(0) {}
    LineBuffer &str(const char *s);
    LineBuffer &dec(uint64_t v);
    LineBuffer &hex(uint64_t v);  // with a 0x prefix
    LineBuffer &chr(char c);
    // Right-aligned in width columns (never truncated).
    LineBuffer &rdec(uint64_t v, unsigned width);
    void clear() { len_ = 0; }
    const char *data() const { return buf_; }
    size_t size() const { return len_; }

  private:
    char *buf_;
    size_t cap_;
    size_t len_;
};

}  // namespace arenalloc

#endif
