// Half of header_test: malloc_np.h, then arenalloc.h, then <malloc.h>.
#include "malloc_np.h"
#include "arenalloc.h"

#include <malloc.h>

size_t usable_size_other_order(void *p) { return malloc_usable_size(p); }

// A block made and freed with the flags of header_test.cc's nallocx; its
// usable size.
size_t mallocx_other_order(size_t n)
{
    void *p = mallocx(n, MALLOCX_ALIGN(64) | MALLOCX_ZERO);
    size_t usable = p != NULL ? sallocx(p, 0) : 0;
    sdallocx(p, n, MALLOCX_ALIGN(64));
    return usable;
}
