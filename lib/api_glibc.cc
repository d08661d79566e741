// api_glibc.cc — the exported glibc extensions (Linux, glibc builds only):
// mallinfo2, mallinfo, mallopt, malloc_info, thin wrappers over
// glibc_malloc.h.  glibc's own <malloc.h> gives the structures, so their
// layouts are glibc's by construction.  Their names are listed in
// Symbol.glibc.map, not Symbol.map: a C library that imports arenalloc
// (FreeBSD, musl) has no such functions.
#include <stdlib.h>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)

#include <limits.h>
#include <stdio.h>
#include <malloc.h>

#include "arenalloc.h"
#include "glibc_malloc.h"
#include "util.h"

using namespace arenalloc;

namespace {

// mallinfo's fields are int: a figure past INT_MAX stays at INT_MAX
// rather than wrapping to a negative or small number.
int saturated(size_t v) { return v > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(v); }

}  // namespace

extern "C" {

AA_EXPORT struct mallinfo2 ARENALLOC_NAME(mallinfo2)(void) ARENALLOC_NOTHROW {
    GlibcMallinfo m;
    glibc_mallinfo(&m);
    struct mallinfo2 out;
    out.arena = m.arena;
    out.ordblks = m.ordblks;
    out.smblks = m.smblks;
    out.hblks = m.hblks;
    out.hblkhd = m.hblkhd;
    out.usmblks = m.usmblks;
    out.fsmblks = m.fsmblks;
    out.uordblks = m.uordblks;
    out.fordblks = m.fordblks;
    out.keepcost = m.keepcost;
    return out;
}

AA_EXPORT struct mallinfo ARENALLOC_NAME(mallinfo)(void) ARENALLOC_NOTHROW {
    GlibcMallinfo m;
    glibc_mallinfo(&m);
    struct mallinfo out;
    out.arena = saturated(m.arena);
    out.ordblks = saturated(m.ordblks);
    out.smblks = saturated(m.smblks);
    out.hblks = saturated(m.hblks);
    out.hblkhd = saturated(m.hblkhd);
    out.usmblks = saturated(m.usmblks);
    out.fsmblks = saturated(m.fsmblks);
    out.uordblks = saturated(m.uordblks);
    out.fordblks = saturated(m.fordblks);
    out.keepcost = saturated(m.keepcost);
    return out;
}

AA_EXPORT int ARENALLOC_NAME(mallopt)(int param, int value) ARENALLOC_NOTHROW {
    return glibc_mallopt(param, value);
}

AA_EXPORT int ARENALLOC_NAME(malloc_info)(int options, FILE *fp) ARENALLOC_NOTHROW {
    return glibc_malloc_info(options, fp);
}

}  // extern "C"

#endif  // __GLIBC__
