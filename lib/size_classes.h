// size_classes.h — the one table of size classes, computed at compile
// time and shared by the allocator, the tests, the statistics and the
// debugger descriptor.
//
// Classes: 8; 16..128 every 16 bytes; then four classes per doubling
// (160 192 224 256, 320 384 448 512, ...), so a request never wastes more
// than 25% of its block.  Classes up to kSmallMax are *small* (cut from
// runs into equal regions, one bin each); the page-multiple classes above
// are *large* (a run of whole pages each); requests above the largest
// large class that fits a chunk are *huge* (their own mapping, rounded up
// to the page).
#ifndef ARENALLOC_SIZE_CLASSES_H
#define ARENALLOC_SIZE_CLASSES_H

#include <cstddef>
#include <cstdint>

#include "debug_assert.h"
#include "platform.h"
#include "util.h"

namespace arenalloc {

constexpr size_t kQuantum = 16;
constexpr size_t kMinSize = 8;
constexpr unsigned kLgFirstGroup = 7;   // first four-per-doubling group starts at 128
constexpr unsigned kLgLastGroup = 30;   // classes are generated up to 2^31 bytes
constexpr unsigned kNumQuantumClasses = 1 + 128 / kQuantum;  // 8, 16..128
constexpr unsigned kNumClasses = kNumQuantumClasses + 4 * (kLgLastGroup - kLgFirstGroup + 1);
// Small classes end below four pages (3.5 pages: 14 KiB with 4 KiB pages,
// 56 KiB with 16 KiB, 224 KiB with 64 KiB): from four pages on, every
// class of the four-per-doubling series is a whole number of pages, so a
// large run holds its block with no tail, and no class below that is
// rounded up to whole pages (lib/DECISIONS.md, "Page sizes").
constexpr size_t kSmallMax = size_t{7} << (kLgPage - 1);
// Sizes up to here map to their class by table, and malloc's inline path
// serves exactly these: every small class, so that an 8 KiB buffer (BUFSIZ
// on glibc) takes it too, and the large classes that thread caches hold
// (tcache.h: kTcacheLargeMax).  A size past the table costs a computed
// lookup and a slower path, some 40 more instructions a malloc + free pair
// (tools/bench/callgrind); the table is 8 KiB, and a program touches only
// the lines of the sizes it asks for.
// With pages above 16 KiB the small classes reach past 64 KiB, and the
// table follows the thread caches' bound (tcache.h): 64 KiB of table with
// 64 KiB pages.
constexpr size_t kLookupMax = kPage <= (16 << 10) ? size_t{64} << 10 : 4 * kPage;
// Bounds the run bitmap: a one-page run of the 8-byte class (512 regions
// with 4 KiB pages, 8192 with 64 KiB) is the most regions a run holds.
constexpr unsigned kMaxRunRegions = static_cast<unsigned>(kPage / kMinSize);
constexpr unsigned kMaxRunPages = 16;

constexpr size_t class_size_formula(unsigned idx) {
    if (idx == 0)
        return kMinSize;
    if (idx < kNumQuantumClasses)
        return idx * kQuantum;
    unsigned g = (idx - kNumQuantumClasses) / 4;
    unsigned k = (idx - kNumQuantumClasses) % 4;
    size_t base = size_t{1} << (kLgFirstGroup + g);
    return base + (k + 1) * (base / 4);
}

// Class index for a request of size bytes (size <= the largest class),
// by arithmetic; the hot path uses the table for small requests.
constexpr unsigned size_to_class_formula(size_t size) {
    if (size <= kMinSize)
        return 0;
    if (size <= 128)
        return static_cast<unsigned>((size + kQuantum - 1) / kQuantum);
    size_t x = size - 1;
    unsigned lg = lg_floor(x);
    unsigned k = static_cast<unsigned>((x >> (lg - 2)) & 3);
    return kNumQuantumClasses + (lg - kLgFirstGroup) * 4 + k;
}

constexpr unsigned count_small_classes() {
    unsigned n = 0;
    while (class_size_formula(n) <= kSmallMax)
        n++;
    return n;
}

constexpr unsigned kNumBins = count_small_classes();

// Geometry of the runs a small class is cut from.
// ceil(2^64 / size): offset * it, modulo 2^64, is below it exactly when
// size divides offset (for offsets and sizes far below 2^32, as here).
constexpr uint64_t region_start_magic(size_t size) {
    return ~uint64_t{0} / size + 1;
}

// Whether a byte offset inside a run is a region start: one multiply and
// one compare on free()'s fast path.  Needs runs without a tail
// (make_bin_info), so that "a multiple of the size" is enough.
AA_ALWAYS_INLINE bool region_is_start(uint64_t start_magic, size_t offset) {
    return static_cast<uint64_t>(offset) * start_magic < start_magic;
}

// Runs of a class are grown (by doubling) towards kRunGrowRegions regions
// while at most kRunGrowMaxBytes (make_bin_info): 16 pages of 4 KiB, 4 of
// 16 KiB, and no growth past the fewest pages with 64 KiB pages, which
// already hold 64 regions of every class up to 1 KiB.
constexpr uint32_t kRunGrowRegions = 64;
constexpr size_t kRunGrowMaxBytes = 64 << 10;
constexpr uint32_t kRunGrowMaxPages =
    kRunGrowMaxBytes >= kPage ? static_cast<uint32_t>(kRunGrowMaxBytes >> kLgPage) : 1;

// One small class's run geometry: computed at compile time (make_bin_info),
// constant, read without a lock.  run_pages pages hold exactly nregs
// regions of region_size bytes, with no tail (nregs * region_size ==
// run_pages * kPage), which region_is_start() relies on.
struct BinInfo {
    uint32_t region_size;
    uint32_t run_pages;
    uint32_t nregs;
    uint32_t reciprocal;   // ceil(2^32 / region_size): offset -> index by multiply
    uint64_t start_magic;  // region_start_magic(region_size)
};

// A run is the fewest whole pages that hold a whole number of regions
// (the least common multiple of the region size and the page): no tail
// is wasted, and every region-size multiple inside the run is a region
// start, which is what lets free() check a pointer with one multiply
// (region_is_start()).  Classes here have an odd part of at most 7 and
// are below four pages, so a run is at most 7 pages whatever the page; a
// multiple of that is tail-free too, which lets runs with few regions
// grow (below).
constexpr BinInfo make_bin_info(size_t size) {
    uint32_t pages = 1;
    while (pages * kPage % size != 0)
        pages++;
    // Doubled while that holds few regions and stays within
    // kRunGrowMaxPages: a run is cut and released for every nregs blocks
    // when memory swings (fluctuate: 1 KiB blocks, 4 to a page), and
    // cutting one costs a few hundred instructions under the arena lock.
    // Up to 64 regions in 16 pages (64 KiB, mimalloc's page size for
    // small blocks) rather than 16 in 4: fluctuate 6 % faster and 8 %
    // fewer instructions, entry-cache's resident size after it empties
    // its cache 12 % lower; realloc_grow's peak 3 % higher.  Pages of a
    // run that no region reached are never touched (except with S, which
    // fills a new run with junk), so a class used for a few blocks costs
    // no more resident memory than before.
    while (pages * kPage / size < kRunGrowRegions && pages * 2 <= kRunGrowMaxPages)
        pages *= 2;
    BinInfo b{};
    b.region_size = static_cast<uint32_t>(size);
    b.run_pages = pages;
    b.nregs = static_cast<uint32_t>(pages * kPage / size);
    b.reciprocal = static_cast<uint32_t>(((uint64_t{1} << 32) + size - 1) / size);
    b.start_magic = region_start_magic(size);
    return b;
}

struct SizeClassTable {
    uint64_t size[kNumClasses];
    BinInfo bin[kNumBins];
    uint8_t lookup[kLookupMax / 8 + 1];  // (size + 7) / 8 -> class index
    uint8_t bin_offset_words[kLookupMax / 8 + 1];  // the same, times 4: the
                                                   //   class's cache bin
                                                   //   (tcache_bin_at_offset)
};

constexpr SizeClassTable make_size_class_table() {
    SizeClassTable t{};
    for (unsigned i = 0; i < kNumClasses; i++)
        t.size[i] = class_size_formula(i);
    for (unsigned i = 0; i < kNumBins; i++)
        t.bin[i] = make_bin_info(class_size_formula(i));
    for (size_t i = 0; i <= kLookupMax / 8; i++)
        t.lookup[i] = static_cast<uint8_t>(size_to_class_formula(i * 8));
    for (size_t i = 0; i <= kLookupMax / 8; i++)
        t.bin_offset_words[i] = static_cast<uint8_t>(4 * t.lookup[i]);
    return t;
}

extern AA_HIDDEN const SizeClassTable kSizeClasses;

static_assert(kLgPage != 12 || kNumBins == 36, "small classes end at 14336 bytes with 4 KiB pages");
static_assert(class_size_formula(kNumBins - 1) == kSmallMax, "kSmallMax is a class");
static_assert(class_size_formula(kNumBins) % kPage == 0, "large classes are page multiples");
static_assert(kNumClasses < 256, "class index fits a byte");
static_assert(4 * size_to_class_formula(kLookupMax) < 256, "class index times 4 fits a byte");

constexpr bool runs_within_bounds() {
    for (unsigned i = 0; i < kNumBins; i++) {
        BinInfo b = make_bin_info(class_size_formula(i));
        if (b.run_pages > kMaxRunPages || b.nregs > kMaxRunRegions)
            return false;
    }
    return true;
}
static_assert(runs_within_bounds(), "every run fits the page and bitmap bounds");

AA_ALWAYS_INLINE unsigned size_to_class(size_t size) {
    unsigned c = AA_LIKELY(size <= kLookupMax) ? kSizeClasses.lookup[(size + 7) >> 3]
                                               : size_to_class_formula(size);
    // The smallest class that holds size.
    AA_ASSERT(c < kNumClasses && kSizeClasses.size[c] >= size &&
              (c == 0 || kSizeClasses.size[c - 1] < size));
    return c;
}

AA_ALWAYS_INLINE size_t class_to_size(unsigned idx) {
    AA_ASSERT(idx < kNumClasses);
    return kSizeClasses.size[idx];
}

AA_ALWAYS_INLINE const BinInfo &bin_info(unsigned bin) {
    AA_ASSERT(bin < kNumBins);
    return kSizeClasses.bin[bin];
}

// Region index of byte offset within a run whose class has the given
// reciprocal: exact at every region start (the size-class unit test),
// which is where it is asked (run_region_at checks region_is_start
// first).  With 4 KiB pages it is exact for every offset inside a run;
// with bigger pages, not for the last bytes of some regions of the
// classes with an odd factor (lib/DECISIONS.md, "Page sizes").
AA_ALWAYS_INLINE uint32_t region_index(uint32_t reciprocal, size_t offset) {
    return static_cast<uint32_t>((static_cast<uint64_t>(offset) * reciprocal) >> 32);
}

}  // namespace arenalloc

#endif
