// util.cc — number formatting without stdio, and a byte scan.
#include "util.h"

#include <string.h>

namespace arenalloc {

size_t format_decimal(char *buf, uint64_t v) {
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

size_t first_byte_not(const void *p, size_t n, unsigned char c) {
    const unsigned char *b = static_cast<const unsigned char *>(p);
    const uint64_t pattern = 0x0101010101010101ull * c;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w0, w1, w2, w3;  // four loads, no copy through the stack
        memcpy(&w0, b + i, 8);
        memcpy(&w1, b + i + 8, 8);
        memcpy(&w2, b + i + 16, 8);
        memcpy(&w3, b + i + 24, 8);
        if (((w0 ^ pattern) | (w1 ^ pattern) | (w2 ^ pattern) | (w3 ^ pattern)) != 0)
            break;
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        if (w != pattern)
            break;
    }
    for (; i < n; i++)
        if (b[i] != c)
            return i;
    return n;
}

size_t format_hex(char *buf, uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = digits[v & 0xf];
        v >>= 4;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

LineBuffer &LineBuffer::str(const char *s) {
    while (*s != '\0' && len_ < cap_)
        buf_[len_++] = *s++;
    return *this;
}

LineBuffer &LineBuffer::chr(char c) {
    if (len_ < cap_)
        buf_[len_++] = c;
    return *this;
}

LineBuffer &LineBuffer::dec(uint64_t v) {
    char tmp[20];
    size_t n = format_decimal(tmp, v);
    for (size_t i = 0; i < n; i++)
        chr(tmp[i]);
    return *this;
}

LineBuffer &LineBuffer::hex(uint64_t v) {
    char tmp[16];
    size_t n = format_hex(tmp, v);
    str("0x");
    for (size_t i = 0; i < n; i++)
        chr(tmp[i]);
    return *this;
}

}  // namespace arenalloc

namespace arenalloc {

LineBuffer &LineBuffer::rdec(uint64_t v, unsigned width) {
    char tmp[20];
    size_t n = format_decimal(tmp, v);
    for (size_t i = n; i < width; i++)
        chr(' ');
    for (size_t i = 0; i < n; i++)
        chr(tmp[i]);
    return *this;
}

}  // namespace arenalloc
