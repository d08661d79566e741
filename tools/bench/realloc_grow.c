/*
 * realloc_grow -- buffers grown by repeated realloc in small steps.
 *
 * String builders, growing arrays and network read buffers often call
 * realloc(p, n + a little) over and over.  An allocator that cannot grow
 * a block in place (or move it cheaply, e.g. with mremap for big ones)
 * copies the whole block again and again.
 *
 * Two phases, each ROUNDS times:
 *   small: SMALL buffers grown together, round robin, by 1 to 32 bytes a
 *          step, up to 4 KiB each (the small and medium size classes);
 *   large: LARGE buffers grown together, round robin, by 1 B to 16 KiB a
 *          step, up to LARGE_MIB MiB each (tens of MiB: the huge sizes).
 * Each step writes the bytes it added; at the end of a phase every buffer
 * is checked at a few places and freed.  Growing several buffers in turn
 * keeps each from simply sitting at the end of the heap.
 *
 * Usage: realloc_grow [ROUNDS [SMALL [LARGE [LARGE_MIB]]]]   (1 20000 8 32)
 *
 * Results: seconds (both phases), small_s, large_s.
 */
#include "bench.h"

struct buf {
	unsigned char	*p;
	size_t		 len;
};

/* Grow N buffers round robin by 1..MAX_STEP bytes until each holds LIMIT. */
static double
grow(size_t n, size_t limit, size_t max_step, uint64_t *rng)
{
	struct buf *b = calloc(n, sizeof(*b));
	size_t i, done = 0;
	double t0 = bench_now();

	if (b == NULL)
		bench_die("calloc failed");
	while (done < n) {
		for (i = 0; i < n; i++) {
			size_t step, len = b[i].len;
			unsigned char *p;

			if (len >= limit)
				continue;
			step = 1 + (size_t)(bench_rand(rng) % max_step);
			if (len + step > limit)
				step = limit - len;
			p = realloc(b[i].p, len + step);
			if (p == NULL)
				bench_die("realloc(%zu) returned NULL", len + step);
			memset(p + len, (int)(i & 0xff), step);
			b[i].p = p;
			b[i].len = len + step;
			if (b[i].len == limit)
				done++;
		}
	}
	for (i = 0; i < n; i++) {
		if (b[i].p[0] != (unsigned char)i ||
		    b[i].p[limit / 2] != (unsigned char)i ||
		    b[i].p[limit - 1] != (unsigned char)i)
			bench_die("realloc_grow: buffer %zu lost its contents", i);
		free(b[i].p);
	}
	free(b);
	return bench_now() - t0;
}

int
main(int argc, char **argv)
{
	unsigned long rounds = bench_arg(argc, argv, 1, 1, "rounds");
	unsigned long nsmall = bench_arg(argc, argv, 2, 20000, "small buffers");
	unsigned long nlarge = bench_arg(argc, argv, 3, 8, "large buffers");
	unsigned long large_mib = bench_arg(argc, argv, 4, 32, "large MiB");
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	double small_s = 0, large_s = 0;
	unsigned long r;

	if (rounds == 0 || nsmall == 0 || nlarge == 0 || large_mib == 0 ||
	    large_mib > 4096)
		bench_die("usage: realloc_grow [rounds [small [large [MiB]]]]");
	bench_report_provider();
	for (r = 0; r < rounds; r++) {
		small_s += grow(nsmall, 4096, 32, &rng);
		large_s += grow(nlarge, (size_t)large_mib << 20, 16384, &rng);
	}
	printf("%lu round(s): %lu buffers to 4 KiB in %.3f s, %lu buffers to "
	    "%lu MiB in %.3f s\n", rounds, nsmall, small_s, nlarge, large_mib,
	    large_s);
	bench_result("seconds", small_s + large_s, "s", "lower");
	bench_result("small_s", small_s, "s", "lower");
	bench_result("large_s", large_s, "s", "lower");
	return 0;
}
