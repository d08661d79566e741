/*
 * options_global_helper: a program linked with libarenalloc that chooses
 * its options at link time through the _malloc_options global (read after
 * /etc/malloc.conf and MALLOC_OPTIONS).  Run by options_flags_test
 * (options__global_after_environment); not a test program itself.
 */
#include <stdio.h>
#include <stdlib.h>

const char *_malloc_options = "V";

int
main(void)
{
	void *p = malloc(0);

	printf("malloc0_null=%d\n", p == NULL);
	free(p);
	return 0;
}
