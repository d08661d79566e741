// Unit tests of lib/util.h: the bit helpers, number formatting without
// stdio, the byte scan the S option's checks use, and LineBuffer.
#include <atf-c++.hpp>

#include <cstdint>
#include <cstring>
#include <string>

#include "require_msg.h"
#include "util.h"

using namespace arenalloc;

namespace {

std::string decimal(uint64_t v) {
    char buf[20];
    size_t n = format_decimal(buf, v);
    ATF_REQUIRE(n >= 1 && n <= sizeof(buf));
    return std::string(buf, n);
}

std::string hex(uint64_t v) {
    char buf[16];
    size_t n = format_hex(buf, v);
    ATF_REQUIRE(n >= 1 && n <= sizeof(buf));
    return std::string(buf, n);
}

std::string contents(const LineBuffer &lb) { return std::string(lb.data(), lb.size()); }

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(util__is_pow2);
ATF_TEST_CASE_BODY(util__is_pow2) {
    ATF_REQUIRE(!is_pow2(0));
    ATF_REQUIRE(is_pow2(1));
    ATF_REQUIRE(is_pow2(2));
    ATF_REQUIRE(!is_pow2(3));
    ATF_REQUIRE(is_pow2(4096));
    ATF_REQUIRE(!is_pow2(4097));
    ATF_REQUIRE(!is_pow2(6144));
    const unsigned top_bit = sizeof(size_t) * 8 - 1;  // 63, or 31 on 32-bit targets
    ATF_REQUIRE(is_pow2(size_t{1} << top_bit));
    ATF_REQUIRE(!is_pow2((size_t{1} << top_bit) + 1));
    ATF_REQUIRE(!is_pow2(SIZE_MAX));
    static_assert(is_pow2(64) && !is_pow2(96), "usable in constant expressions");
}

ATF_TEST_CASE_WITHOUT_HEAD(util__lg_floor);
ATF_TEST_CASE_BODY(util__lg_floor) {
    ATF_REQUIRE_EQ(lg_floor(1), 0u);
    ATF_REQUIRE_EQ(lg_floor(2), 1u);
    ATF_REQUIRE_EQ(lg_floor(3), 1u);
    ATF_REQUIRE_EQ(lg_floor(4095), 11u);
    ATF_REQUIRE_EQ(lg_floor(4096), 12u);
    ATF_REQUIRE_EQ(lg_floor(4097), 12u);
    ATF_REQUIRE_EQ(lg_floor(SIZE_MAX), sizeof(size_t) * 8 - 1);
    for (unsigned k = 0; k < sizeof(size_t) * 8; k++) {
        size_t x = size_t{1} << k;
        ATF_REQUIRE_MSG(lg_floor(x) == k, "2^" << k);
        if (k >= 2)
            ATF_REQUIRE_MSG(lg_floor(x - 1) == k - 1, "2^" << k << " - 1");
        if (k >= 1)
            ATF_REQUIRE_MSG(lg_floor(x + 1) == k, "2^" << k << " + 1");
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(util__align_up);
ATF_TEST_CASE_BODY(util__align_up) {
    ATF_REQUIRE_EQ(align_up(0, 16), 0u);
    ATF_REQUIRE_EQ(align_up(1, 16), 16u);
    ATF_REQUIRE_EQ(align_up(15, 16), 16u);
    ATF_REQUIRE_EQ(align_up(16, 16), 16u);
    ATF_REQUIRE_EQ(align_up(17, 16), 32u);
    ATF_REQUIRE_EQ(align_up(4097, 4096), 8192u);
    ATF_REQUIRE_EQ(align_up(12345, 1), 12345u);
    ATF_REQUIRE_EQ(align_up((size_t{3} << 20) + 1, size_t{2} << 20), size_t{4} << 20);
}

ATF_TEST_CASE_WITHOUT_HEAD(util__format_numbers);
ATF_TEST_CASE_BODY(util__format_numbers) {
    struct Expected {
        uint64_t v;
        const char *decimal;
        const char *hex;
    };
    const Expected expected[] = {
        {0, "0", "0"},
        {7, "7", "7"},
        {10, "10", "a"},
        {16, "16", "10"},
        {99, "99", "63"},
        {100, "100", "64"},
        {0xdeadbeef, "3735928559", "deadbeef"},
        {1234567890, "1234567890", "499602d2"},
        {0x0123456789abcdefull, "81985529216486895", "123456789abcdef"},
        {UINT64_MAX, "18446744073709551615", "ffffffffffffffff"},
    };
    for (const Expected &e : expected) {
        ATF_REQUIRE_MSG(decimal(e.v) == e.decimal, e.v);
        ATF_REQUIRE_MSG(hex(e.v) == e.hex, e.v);
    }
    // Every power of ten has one more digit than the number before it.
    uint64_t p = 1;
    for (size_t digits = 1; digits <= 19; digits++, p *= 10) {
        ATF_REQUIRE_MSG(decimal(p) == "1" + std::string(digits - 1, '0'), p);
        if (p > 1)
            ATF_REQUIRE_MSG(decimal(p - 1) == std::string(digits - 1, '9'), p - 1);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(util__first_byte_not);
ATF_TEST_CASE_BODY(util__first_byte_not) {
    // Lengths and positions on both sides of the 32-byte steps, from an
    // odd start so that the word loads are unaligned.
    unsigned char buf[1 + 200] = {};
    unsigned char *p = buf + 1;
    ATF_REQUIRE_EQ(first_byte_not(p, 0, 0x5a), 0u);
    for (size_t n = 1; n <= 200; n += (n < 70 ? 1 : 13)) {
        memset(p, 0x5a, n);
        ATF_REQUIRE_MSG(first_byte_not(p, n, 0x5a) == n, "n=" << n);
        ATF_REQUIRE_MSG(first_byte_not(p, n, 0xa5) == 0, "n=" << n);
        for (size_t at = 0; at < n; at++) {
            p[at] = 0x5b;
            ATF_REQUIRE_MSG(first_byte_not(p, n, 0x5a) == at, "n=" << n << " at=" << at);
            p[at] = 0x5a;
        }
    }
    // The first of two differing bytes counts, in the word loop too.
    memset(p, 0, 200);
    p[150] = 1;
    p[40] = 1;
    ATF_REQUIRE_EQ(first_byte_not(p, 200, 0), 40u);
}

ATF_TEST_CASE_WITHOUT_HEAD(util__line_buffer_composes);
ATF_TEST_CASE_BODY(util__line_buffer_composes) {
    char buf[64];
    LineBuffer lb(buf, sizeof(buf));
    ATF_REQUIRE_EQ(lb.size(), 0u);
    lb.str("size=").dec(4096).chr(' ').str("at ").hex(0x7f00ab).chr('!');
    ATF_REQUIRE_EQ(contents(lb), "size=4096 at 0x7f00ab!");
    lb.clear();
    ATF_REQUIRE_EQ(lb.size(), 0u);
    lb.hex(0).dec(0);
    ATF_REQUIRE_EQ(contents(lb), "0x00");
}

ATF_TEST_CASE_WITHOUT_HEAD(util__line_buffer_right_aligns);
ATF_TEST_CASE_BODY(util__line_buffer_right_aligns) {
    char buf[64];
    LineBuffer lb(buf, sizeof(buf));
    lb.rdec(42, 6).chr('|').rdec(123456, 3).chr('|').rdec(7, 0).chr('|').rdec(100, 3);
    // Padded to the width, never cut to it.
    ATF_REQUIRE_EQ(contents(lb), "    42|123456|7|100");
}

ATF_TEST_CASE_WITHOUT_HEAD(util__line_buffer_stops_at_capacity);
ATF_TEST_CASE_BODY(util__line_buffer_stops_at_capacity) {
    char buf[16];
    memset(buf, '#', sizeof(buf));
    LineBuffer lb(buf, 10);
    lb.str("abcdef").dec(1234567).hex(0xff).chr('z').rdec(5, 8);
    ATF_REQUIRE_EQ(lb.size(), 10u);
    ATF_REQUIRE_EQ(contents(lb), "abcdef1234");
    for (size_t i = 10; i < sizeof(buf); i++)
        ATF_REQUIRE_MSG(buf[i] == '#', "byte " << i << " past the capacity was written");
    // Cleared, it takes text again from the start.
    lb.clear();
    lb.str("ok");
    ATF_REQUIRE_EQ(contents(lb), "ok");
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, util__is_pow2);
    ATF_ADD_TEST_CASE(tcs, util__lg_floor);
    ATF_ADD_TEST_CASE(tcs, util__align_up);
    ATF_ADD_TEST_CASE(tcs, util__format_numbers);
    ATF_ADD_TEST_CASE(tcs, util__first_byte_not);
    ATF_ADD_TEST_CASE(tcs, util__line_buffer_composes);
    ATF_ADD_TEST_CASE(tcs, util__line_buffer_right_aligns);
    ATF_ADD_TEST_CASE(tcs, util__line_buffer_stops_at_capacity);
}
