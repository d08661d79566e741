/* lib/config.h as configure would write it for FreeBSD 14 on arm64: that
 * of amd64 but for sbrk, which brk(2) says arm64 does not have. */
#include "config-amd64.h"
#undef HAVE_SBRK
