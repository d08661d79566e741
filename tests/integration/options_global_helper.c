/*
 * options_global_helper: a program linked with libarenalloc that chooses
 * its options at link time through both globals: jemalloc's malloc_conf
 * (read first of the five sources) and the BSD _malloc_options (read
 * last).  Prints what they gave: malloc(0)'s result (V here, sysv:false
 * in malloc_conf), the arena count and junk filling (malloc_conf only).
 * Run by options_flags_test (options__global_after_environment,
 * options__malloc_conf_global_first); not a test program itself.
 */
#include <stdio.h>
#include <stdlib.h>

#include "arenalloc.h"

const char *_malloc_options = "V";
const char *malloc_conf = "sysv:false,narenas:3,junk:alloc";

int
main(void)
{
	void *p = malloc(0);
	unsigned narenas = 0;
	const char *junk = "(error)";
	size_t len = sizeof(narenas);

	printf("malloc0_null=%d\n", p == NULL);
	free(p);
	if (mallctl("opt.narenas", &narenas, &len, NULL, 0) != 0)
		narenas = 0;
	len = sizeof(junk);
	if (mallctl("opt.junk", &junk, &len, NULL, 0) != 0)
		junk = "(error)";
	printf("narenas=%u\njunk=%s\n", narenas, junk);
	return 0;
}
