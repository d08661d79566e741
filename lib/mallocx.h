// mallocx.h — jemalloc 5's non-standard allocation functions (the mallocx
// family of malloc_np.h), with the flag word decoded here; api.cc exports
// them.  Semantics and the choices where jemalloc leaves the behaviour
// undefined: arenalloc(3), "NON-STANDARD API".
#ifndef ARENALLOC_MALLOCX_H
#define ARENALLOC_MALLOCX_H

#include <cstddef>

namespace arenalloc {

void *aa_mallocx(size_t size, int flags);
void *aa_rallocx(void *ptr, size_t size, int flags);
size_t aa_xallocx(void *ptr, size_t size, size_t extra, int flags);
size_t aa_sallocx(const void *ptr, int flags);
void aa_dallocx(void *ptr, int flags);
void aa_sdallocx(void *ptr, size_t size, int flags);
size_t aa_nallocx(size_t size, int flags);

}  // namespace arenalloc

#endif
