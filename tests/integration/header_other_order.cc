// Half of header_test: arenalloc.h first, then <malloc.h>.
#include "arenalloc.h"

#include <malloc.h>

size_t usable_size_other_order(void *p) { return malloc_usable_size(p); }
