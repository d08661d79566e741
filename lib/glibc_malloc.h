// glibc_malloc.h — glibc's malloc extensions (mallinfo2/mallinfo, mallopt,
// malloc_info) over arenalloc's figures and options.  Built where the C
// library is glibc (__GLIBC__), whose <malloc.h> declares them; elsewhere
// this module is empty.
//
// How glibc's figures map onto arenalloc's (an "arena" of glibc is one
// of arenalloc's arenas, its "mmapped regions" arenalloc's huge blocks):
//   arena     bytes of the arenas' chunks (mapped, not huge, not metadata)
//   ordblks   free regions in the arenas' small runs
//   smblks    0 (no fast bins: the thread caches' blocks count as in use)
//   hblks     live huge blocks;  hblkhd  their mapped bytes
//   usmblks   0, as in glibc
//   fsmblks   0 (no fast bins)
//   uordblks  bytes of the arenas' small and large blocks (usable sizes,
//             thread-cached ones included)
//   fordblks  arena - uordblks: free regions and pages, chunk headers
//   keepcost  bytes malloc_trim(0) gives back: dirty pages, kept empty
//             chunks, cached huge mappings
#ifndef ARENALLOC_GLIBC_MALLOC_H
#define ARENALLOC_GLIBC_MALLOC_H

// <stdlib.h> first: on glibc it defines __GLIBC__, and elsewhere it is all
// this header needs (the stub headers of tests/platform have no <stdio.h>).
#include <stdlib.h>

#if defined(__GLIBC__)

#include <stdio.h>

namespace arenalloc {

struct GlibcMallinfo {
    size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks,
        keepcost;
};

// The figures above, now.
void glibc_mallinfo(GlibcMallinfo *out);

// mallopt(param, value): 1 where applied or accepted with no effect, 0 for
// a parameter or value that cannot be applied (the table is in
// glibc_malloc.cc and arenalloc(3)).
int glibc_mallopt(int param, int value);

// malloc_info(options, fp): glibc's XML with arenalloc's figures; EINVAL
// unless options is 0, as glibc.  Figures are collected before each
// write: writing to fp may allocate.
int glibc_malloc_info(int options, FILE *fp);

}  // namespace arenalloc

#endif  // __GLIBC__

#endif
