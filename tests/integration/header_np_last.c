/* header_test in C: the C library's headers and arenalloc.h before
 * malloc_np.h. */
#include <malloc.h>
#include <stdlib.h>

#include "arenalloc.h"
#include "malloc_np.h"

size_t mallocx_from_c_np_last(size_t n);

/* As header_other_order.cc's mallocx_other_order. */
size_t mallocx_from_c_np_last(size_t n)
{
    void *p = mallocx(n, MALLOCX_ALIGN(64) | MALLOCX_ZERO | MALLOCX_ARENA(0));
    size_t usable = p != NULL ? xallocx(p, n, 0, 0) : 0;
    free(reallocf(p, n));
    return usable;
}
