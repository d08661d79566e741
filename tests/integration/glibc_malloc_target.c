/*
 * glibc_malloc_target.c — the program glibc_malloc_test runs, built twice:
 * alone (run with LD_PRELOAD) and linked with arenalloc.  It finds
 * arenalloc's mallctl with dlsym, so the same source serves both.
 *
 *   glibc_malloc_target first-mallopt
 *       mallopt(M_ARENA_MAX, 3) and mallopt(M_PERTURB, 7) as its first
 *       calls; prints "mallopt R1 R2 narenas N junk J".
 *   glibc_malloc_target mallinfo
 *       prints "malloc arenalloc|other", "hblkhd BEFORE AFTER" around a
 *       10 MiB allocation and "hblks BEFORE AFTER", then malloc_info's XML.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

static int first_mallopt(void)
{
	int r1 = mallopt(M_ARENA_MAX, 3);
	int r2 = mallopt(M_PERTURB, 7);
	mallctl_fn ctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
	unsigned narenas = 0;
	_Bool junk = 0;
	size_t len = sizeof(narenas);
	if (ctl == NULL || ctl("arenas.narenas", &narenas, &len, NULL, 0) != 0)
		return 1;
	/* opt.junk: bool, or jemalloc's string ("false", "true", ...). */
	len = sizeof(junk);
	if (ctl("opt.junk", &junk, &len, NULL, 0) != 0) {
		const char *s = NULL;
		len = sizeof(s);
		if (ctl("opt.junk", &s, &len, NULL, 0) != 0 || s == NULL)
			return 1;
		junk = strcmp(s, "false") != 0;
	}
	printf("mallopt %d %d narenas %u junk %d\n", r1, r2, narenas, junk ? 1 : 0);
	return 0;
}

static int show_mallinfo(void)
{
	struct mallinfo2 before = mallinfo2();
	char *p = malloc(10u << 20);
	if (p == NULL)
		return 1;
	memset(p, 1, 4096);
	struct mallinfo2 after = mallinfo2();
	printf("malloc %s\n", dlsym(RTLD_DEFAULT, "mallctl") != NULL ? "arenalloc" : "other");
	printf("hblkhd %zu %zu\n", before.hblkhd, after.hblkhd);
	printf("hblks %zu %zu\n", before.hblks, after.hblks);
	fflush(stdout);
	int r = malloc_info(0, stdout);
	free(p);
	return r;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "first-mallopt") == 0)
		return first_mallopt();
	if (argc == 2 && strcmp(argv[1], "mallinfo") == 0)
		return show_mallinfo();
	fprintf(stderr, "usage: glibc_malloc_target first-mallopt|mallinfo\n");
	return 2;
}
