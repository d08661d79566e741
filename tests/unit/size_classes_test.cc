// Unit tests of the size-class table (lib/size_classes.h).
#include <atf-c++.hpp>

#include "require_msg.h"

#include <cstdint>

#include "size_classes.h"

using namespace arenalloc;

ATF_TEST_CASE_WITHOUT_HEAD(size_classes__strictly_increasing);
ATF_TEST_CASE_BODY(size_classes__strictly_increasing) {
    ATF_REQUIRE_EQ(class_to_size(0), kMinSize);
    for (unsigned i = 1; i < kNumClasses; i++)
        ATF_REQUIRE(class_to_size(i) > class_to_size(i - 1));
}

ATF_TEST_CASE_WITHOUT_HEAD(size_classes__waste_bounded);
ATF_TEST_CASE_BODY(size_classes__waste_bounded) {
    // The block given for a request one byte above the previous class wastes
    // less than a quarter of the block; below 64 bytes the 16-byte quantum
    // (malloc's alignment guarantee) bounds the waste to 15 bytes instead.
    for (unsigned i = 1; i < kNumClasses; i++) {
        uint64_t prev = class_to_size(i - 1), cur = class_to_size(i);
        uint64_t waste = cur - (prev + 1);
        if (cur > 64)
            ATF_REQUIRE_MSG(waste * 4 < cur, "class " << i << " size " << cur);
        else
            ATF_REQUIRE_MSG(waste < kQuantum, "class " << i << " size " << cur);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(size_to_class__smallest_fitting);
ATF_TEST_CASE_BODY(size_to_class__smallest_fitting) {
    for (size_t s = 0; s <= 4 << 20; s += (s < 65536 ? 1 : 509)) {
        unsigned c = size_to_class(s);
        ATF_REQUIRE_MSG(class_to_size(c) >= s, "size " << s);
        if (c > 0)
            ATF_REQUIRE_MSG(class_to_size(c - 1) < s, "size " << s);
    }
    // Every class maps to itself, up to the largest.
    for (unsigned i = 0; i < kNumClasses; i++)
        ATF_REQUIRE_EQ(size_to_class(class_to_size(i)), i);
}

ATF_TEST_CASE_WITHOUT_HEAD(size_to_class__table_matches_formula);
ATF_TEST_CASE_BODY(size_to_class__table_matches_formula) {
    for (size_t s = 0; s <= kLookupMax; s++)
        ATF_REQUIRE_EQ(size_to_class(s), size_to_class_formula(s));
}

ATF_TEST_CASE_WITHOUT_HEAD(size_classes__small_and_large_boundary);
ATF_TEST_CASE_BODY(size_classes__small_and_large_boundary) {
    ATF_REQUIRE_EQ(class_to_size(kNumBins - 1), kSmallMax);
    for (unsigned i = kNumBins; i < kNumClasses; i++)
        ATF_REQUIRE_EQ(class_to_size(i) % kPage, 0u);
}

ATF_TEST_CASE_WITHOUT_HEAD(bin_info__geometry);
ATF_TEST_CASE_BODY(bin_info__geometry) {
    for (unsigned b = 0; b < kNumBins; b++) {
        const BinInfo &info = bin_info(b);
        ATF_REQUIRE_EQ(info.region_size, class_to_size(b));
        ATF_REQUIRE(info.nregs >= 1);
        ATF_REQUIRE(info.nregs <= kMaxRunRegions);
        ATF_REQUIRE(info.run_pages >= 1 && info.run_pages <= kMaxRunPages);
        // No tail: the run is exactly its regions (region_is_start() relies
        // on it): the fewest pages that are, doubled while that holds fewer
        // than kRunGrowRegions regions and stays within kRunGrowMaxPages.
        ATF_REQUIRE_EQ(uint64_t{info.nregs} * info.region_size, uint64_t{info.run_pages} * kPage);
        uint32_t fewest = 1;
        while (fewest * kPage % info.region_size != 0)
            fewest++;
        ATF_REQUIRE_EQ(info.run_pages % fewest, 0u);
        uint32_t factor = info.run_pages / fewest;
        ATF_REQUIRE_EQ(factor & (factor - 1), 0u);
        if (factor > 1)
            ATF_REQUIRE(info.run_pages / 2 * kPage / info.region_size < kRunGrowRegions);
        ATF_REQUIRE(info.nregs >= kRunGrowRegions || info.run_pages * 2 > kRunGrowMaxPages);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(region_index__exact_for_every_offset);
ATF_TEST_CASE_BODY(region_index__exact_for_every_offset) {
    // Exact at every region start of every run, which is where it is asked
    // (run_region_at); with 4 KiB pages at every byte of the run too.  With
    // bigger pages the 32-bit reciprocal's error reaches the last bytes of
    // some regions (lib/DECISIONS.md, "Page sizes").
    for (unsigned b = 0; b < kNumBins; b++) {
        const BinInfo &info = bin_info(b);
        size_t run = size_t{info.run_pages} * kPage;
        for (size_t off = 0; off < run; off++) {
            if (kLgPage != 12 && off % info.region_size != 0)
                continue;
            ATF_REQUIRE_MSG(region_index(info.reciprocal, off) == off / info.region_size,
                            "class " << b << " offset " << off);
        }
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(region_is_start__only_region_starts_pass);
ATF_TEST_CASE_BODY(region_is_start__only_region_starts_pass) {
    // free()'s check: true exactly for the offset of a region start, for
    // every byte offset of the run (free() only asks about offsets inside
    // runs: the page map found the run), and for a few runs' worth beyond.
    for (unsigned bin = 0; bin < kNumBins; bin++) {
        const BinInfo &b = bin_info(bin);
        ATF_REQUIRE_EQ(b.start_magic, region_start_magic(b.region_size));
        size_t run = size_t{b.run_pages} * kPage;
        for (size_t off = 0; off < 4 * run; off++)
            ATF_REQUIRE_MSG(region_is_start(b.start_magic, off) == (off % b.region_size == 0),
                            "class " << bin << " offset " << off);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(size_classes__natural_alignment);
ATF_TEST_CASE_BODY(size_classes__natural_alignment) {
    // Regions start at multiples of their size from a page-aligned run, so a
    // class is aligned to the largest power of two dividing it: at least 16
    // for every class of 16 bytes or more.
    for (unsigned b = 1; b < kNumBins; b++) {
        size_t s = class_to_size(b);
        ATF_REQUIRE_EQ(s % kQuantum, 0u);
    }
    // Rounding a request up to a power-of-two alignment a <= page and taking
    // its class gives a multiple of a: aligned allocation relies on it, for
    // every size malloc's inline path serves.
    for (size_t a = 8; a <= kPage; a *= 2)
        for (size_t s = 1; s <= kLookupMax; s++) {
            size_t r = (s + a - 1) & ~(a - 1);
            if (r > kLookupMax)
                break;
            ATF_REQUIRE_MSG(class_to_size(size_to_class(r)) % a == 0, "a=" << a << " s=" << s);
        }
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, region_is_start__only_region_starts_pass);
    ATF_ADD_TEST_CASE(tcs, size_classes__strictly_increasing);
    ATF_ADD_TEST_CASE(tcs, size_classes__waste_bounded);
    ATF_ADD_TEST_CASE(tcs, size_to_class__smallest_fitting);
    ATF_ADD_TEST_CASE(tcs, size_to_class__table_matches_formula);
    ATF_ADD_TEST_CASE(tcs, size_classes__small_and_large_boundary);
    ATF_ADD_TEST_CASE(tcs, bin_info__geometry);
    ATF_ADD_TEST_CASE(tcs, region_index__exact_for_every_offset);
    ATF_ADD_TEST_CASE(tcs, size_classes__natural_alignment);
}
