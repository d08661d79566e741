// glibc_malloc.cc — glibc's mallinfo, mallopt and malloc_info over
// arenalloc's statistics and options (glibc_malloc.h has the mapping).
#include "glibc_malloc.h"

#if defined(__GLIBC__)

#include <errno.h>
#include <malloc.h>

#include "init.h"
#include "option_overrides.h"
#include "size_classes.h"
#include "stats.h"

namespace arenalloc {

void glibc_mallinfo(GlibcMallinfo *out) {
    *out = GlibcMallinfo{};
    HeapSnapshot h;
    if (!stats_heap(&h))
        return;
    uint64_t free_regions = 0, mapped = 0, allocated = 0;
    for (unsigned i = 0; i < g_narenas; i++) {
        ArenaFreeSummary s;
        if (!stats_arena_free(i, &s))
            continue;
        free_regions += s.free_regions;
        mapped += s.mapped;
        allocated += s.allocated;
    }
    out->arena = mapped;
    out->ordblks = free_regions;
    out->hblks = h.huge_cur;
    out->hblkhd = h.huge_mapped;
    out->uordblks = allocated;
    out->fordblks = mapped > allocated ? mapped - allocated : 0;
    out->keepcost = h.dirty + h.retained + h.huge_cached;
}

// The parameters, what arenalloc does with them, and the answer:
//   M_ARENA_MAX       the arena count (narenas), before the first
//                     allocation only: 1; afterwards the arena table is
//                     fixed: 0.  Values below 1 are ignored, as glibc: 1.
//   M_PERTURB         junk filling (the J option) on for a non-zero
//                     value, off for 0, before the first allocation only:
//                     1; afterwards 0.  arenalloc's junk bytes are its own
//                     (0xa5, 0x5a), not the value.
//   M_MXFAST          accepted, no effect (no fast bins): 1 for 0 to
//                     80 * sizeof(size_t) / 4 as glibc, else 0.
//   M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD, M_MMAP_MAX,
//   M_CHECK_ACTION, M_ARENA_TEST, M_NLBLKS, M_GRAIN, M_KEEP
//                     accepted, no effect: purging follows the dirty ratio
//                     and decay, blocks above the largest large class are
//                     always mapped alone, a bad pointer is always
//                     reported: 1.
//   anything else     0.
int glibc_mallopt(int param, int value) {
    switch (param) {
    case M_ARENA_MAX:
        if (value <= 0)
            return 1;
        return option_override_narenas(static_cast<unsigned>(value)) ? 1 : 0;
    case M_PERTURB:
        return option_override_junk(value != 0) ? 1 : 0;
    case M_MXFAST:
        return value >= 0 && static_cast<size_t>(value) <= 80 * sizeof(size_t) / 4 ? 1 : 0;
    case M_TRIM_THRESHOLD:
    case M_TOP_PAD:
    case M_MMAP_THRESHOLD:
    case M_MMAP_MAX:
    case M_CHECK_ACTION:
    case M_ARENA_TEST:
    case M_NLBLKS:
    case M_GRAIN:
    case M_KEEP:
        return 1;
    default:
        return 0;
    }
}

namespace {

void xml_total(FILE *fp, const char *type, uint64_t count, uint64_t size) {
    fprintf(fp, "<total type=\"%s\" count=\"%llu\" size=\"%llu\"/>\n", type,
            static_cast<unsigned long long>(count), static_cast<unsigned long long>(size));
}

// glibc's four lines on the memory a heap (or all) got from the system;
// arenalloc keeps no peak, so "max" is the current size.
void xml_system(FILE *fp, uint64_t mapped) {
    unsigned long long m = mapped;
    fprintf(fp, "<system type=\"current\" size=\"%llu\"/>\n", m);
    fprintf(fp, "<system type=\"max\" size=\"%llu\"/>\n", m);
    fprintf(fp, "<aspace type=\"total\" size=\"%llu\"/>\n", m);
    fprintf(fp, "<aspace type=\"mprotect\" size=\"%llu\"/>\n", m);
}

}  // namespace

int glibc_malloc_info(int options, FILE *fp) {
    if (options != 0)
        return EINVAL;
    if (!ensure_initialized())
        return 0;
    fputs("<malloc version=\"1\">\n", fp);
    uint64_t free_regions = 0, free_bytes = 0, mapped = 0;
    for (unsigned i = 0; i < g_narenas; i++) {
        ArenaFreeSummary s;
        if (!stats_arena_free(i, &s))
            continue;
        uint64_t arena_free = s.mapped > s.allocated ? s.mapped - s.allocated : 0;
        free_regions += s.free_regions;
        free_bytes += arena_free;
        mapped += s.mapped;
        fprintf(fp, "<heap nr=\"%u\">\n<sizes>\n", i);
        uint64_t from = 1;
        for (unsigned b = 0; b < kNumBins; b++) {
            uint64_t size = bin_info(b).region_size;
            if (s.bin_free[b] != 0)
                fprintf(fp, "  <size from=\"%llu\" to=\"%llu\" total=\"%llu\" count=\"%llu\"/>\n",
                        static_cast<unsigned long long>(from), static_cast<unsigned long long>(size),
                        static_cast<unsigned long long>(s.bin_free[b] * size),
                        static_cast<unsigned long long>(s.bin_free[b]));
            from = size + 1;
        }
        fputs("</sizes>\n", fp);
        xml_total(fp, "fast", 0, 0);
        xml_total(fp, "rest", s.free_regions, arena_free);
        xml_system(fp, s.mapped);
        fputs("</heap>\n", fp);
    }
    HeapSnapshot h;
    stats_heap(&h);
    xml_total(fp, "fast", 0, 0);
    xml_total(fp, "rest", free_regions, free_bytes);
    xml_total(fp, "mmap", h.huge_cur, h.huge_mapped);
    xml_system(fp, mapped);
    fputs("</malloc>\n", fp);
    return 0;
}

}  // namespace arenalloc

#endif  // __GLIBC__
