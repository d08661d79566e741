/*
 * cg_pairs -- N x (malloc(SIZE); write one byte; free) in one thread, for
 * counting the instructions of the allocator's hit path with callgrind
 * (tools/bench/callgrind).
 *
 * Usage: cg_pairs N SIZE
 *
 * SIZE 0 runs the same loop without malloc and free (a static buffer
 * stands in), which measures the loop's own instructions.
 *
 * Output: "malloc from: PATH", the object that provides malloc().
 */
#include "bench.h"

static char stand_in[16];

int
main(int argc, char **argv)
{
	unsigned long n, size, i;

	if (argc != 3)
		bench_die("usage: cg_pairs N SIZE");
	n = bench_arg(argc, argv, 1, 0, "N");
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
