/* header_test in C: malloc_np.h before arenalloc.h and the C library's
 * headers. */
#include "malloc_np.h"
#include "arenalloc.h"

#include <malloc.h>
#include <stdlib.h>

size_t mallocx_from_c_np_first(size_t n);

/* As header_other_order.cc's mallocx_other_order. */
size_t mallocx_from_c_np_first(size_t n)
{
    void *p = mallocx(n, MALLOCX_ALIGN(64) | MALLOCX_ZERO);
    size_t usable = p != NULL ? sallocx(p, 0) : 0;
    p = rallocx(p, n, MALLOCX_LG_ALIGN(6));
    dallocx(p, MALLOCX_TCACHE_NONE);
    return usable;
}
