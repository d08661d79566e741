/*
 * cg_pairs -- N x (malloc(SIZE); write one byte; free) in one thread, for
 * counting the instructions of the allocator's hit path with callgrind
 * (tools/bench/callgrind).
 *
 * Usage: cg_pairs N SIZE[@ALIGN]
 *
 * SIZE@ALIGN takes the blocks with posix_memalign(&p, ALIGN, SIZE) instead
 * (seed 002's call is posix_memalign(64, 64)).  SIZE 0 runs the same loop
 * without malloc and free (a static buffer stands in), which measures the
 * loop's own instructions.
 *
 * Output: "malloc from: PATH", the object that provides malloc().
 */
#include "bench.h"

static char stand_in[16];

int
main(int argc, char **argv)
{
	unsigned long n, size, align = 0, i;
	char *at;

	if (argc != 3)
		bench_die("usage: cg_pairs N SIZE[@ALIGN]");
	n = bench_arg(argc, argv, 1, 0, "N");
	if ((at = strchr(argv[2], '@')) != NULL) {
		char *spec[2] = { at + 1, NULL };

		*at = '\0';
		align = bench_arg(1, spec, 0, 0, "ALIGN");
		if (align == 0 || (align & (align - 1)) != 0 || align % sizeof(void *) != 0)
			bench_die("bad ALIGN: '%s'", at + 1);
	}
	size = bench_arg(argc, argv, 2, 0, "SIZE");
	bench_report_provider();
	fflush(stdout);
	if (size == 0) {
		for (i = 0; i < n; i++) {
			char *p = stand_in;

			p[0] = (char)i;
			bench_keep(p);
		}
		return 0;
	}
	if (align != 0) {
		for (i = 0; i < n; i++) {
			void *v;
			char *p;

			if (posix_memalign(&v, align, size) != 0)
				return 1;
			p = v;
			p[0] = (char)i;
			bench_keep(p);
			free(p);
		}
		return 0;
	}
	for (i = 0; i < n; i++) {
		char *p = malloc(size);

		if (p == NULL)
			return 1;
		p[0] = (char)i;
		bench_keep(p);
		free(p);
	}
	return 0;
}
