/*
 * free_all -- a long-running process that frees everything (issue 3).
 *
 * A server works through a big job, frees all of it, and goes back to
 * light traffic.  Does its resident size come back near where it started,
 * and how soon, without any explicit call (malloc_trim, arenalloc_purge)?
 *
 * The program records its resident size, allocates PEAK MiB in blocks of
 * 64 B to 2 MiB (log-uniform, every byte written), frees them all in a
 * shuffled order, then for LINGER seconds does light traffic: every
 * PERIOD milliseconds it allocates, writes and frees 8 blocks of 64 B to
 * 64 KiB, sampling its resident size each time.
 *
 * Usage: free_all [PEAK_MIB [LINGER_S [PERIOD_MS]]]   (256 12 10)
 *
 * Results: rss_final_KiB (at the end of the linger, above the start);
 * release_s (seconds after the last free until the resident size is within
 * 10 % or 8 MiB of the start, whichever is larger; LINGER when never);
 * rss_after_free_KiB (right after the frees, above the start);
 * rss_peak_KiB (above the start); rss_start_KiB.
 */
#include "bench.h"

#include <math.h>

static long
above(long rss, long start)
{
	return rss > start ? rss - start : 0;
}

int
main(int argc, char **argv)
{
	unsigned long peak_mib = bench_arg(argc, argv, 1, 256, "PEAK_MIB");
	unsigned long linger_s = bench_arg(argc, argv, 2, 12, "LINGER_S");
	unsigned long period_ms = bench_arg(argc, argv, 3, 10, "PERIOD_MS");
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	size_t peak = (size_t)peak_mib << 20, total = 0, n = 0, cap = 1024;
	void **blocks;
	long start, top, after_free, now_rss = 0;
	double t0, release = -1;

	bench_report_provider();
	/* Let the allocator and stdio set themselves up first. */
	free(bench_malloc(100));
	start = bench_rss_kib();

	blocks = bench_malloc(cap * sizeof(*blocks));
	while (total < peak) {
		double u = (double)(bench_rand(&rng) >> 11) / 9007199254740992.0;
		size_t size = (size_t)exp(log(64.0) + u * (log(2.0 * 1048576) - log(64.0)));

		if (n == cap) {
			void **grown = realloc(blocks, 2 * cap * sizeof(*blocks));

			if (grown == NULL)
				bench_die("realloc of the block table failed");
			blocks = grown;
			cap *= 2;
		}
		blocks[n] = bench_malloc(size);
		memset(blocks[n], 0x5c, size);
		n++;
		total += size;
	}
	top = bench_rss_kib();
	for (size_t i = n; i > 1; i--) {
		size_t j = bench_rand(&rng) % i;
		void *t = blocks[i - 1];

		blocks[i - 1] = blocks[j];
		blocks[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		free(blocks[i]);
	free(blocks);
	after_free = bench_rss_kib();

	long slack = start / 10 > 8192 ? start / 10 : 8192;
	t0 = bench_now();
	while (bench_now() - t0 < (double)linger_s) {
		struct timespec ts = { 0, (long)period_ms * 1000000L };

		for (int k = 0; k < 8; k++) {
			size_t size = 64 + bench_rand(&rng) % (64 * 1024 - 64);
			char *p = bench_malloc(size);

			memset(p, 1, size);
			bench_keep(p);
			free(p);
		}
		now_rss = bench_rss_kib();
		if (release < 0 && now_rss <= start + slack)
			release = bench_now() - t0;
		nanosleep(&ts, NULL);
	}

	printf("%zu blocks, %zu MiB; RSS start %ld KiB, peak +%ld, after the "
	    "frees +%ld, after %lu s of light traffic +%ld\n", n, total >> 20,
	    start, above(top, start), above(after_free, start), linger_s,
	    above(now_rss, start));
	bench_result("rss_final_KiB", (double)above(now_rss, start), "KiB", "lower");
	bench_result("release_s", release < 0 ? (double)linger_s : release, "s", "lower");
	bench_result("rss_after_free_KiB", (double)above(after_free, start), "KiB", "lower");
	bench_result("rss_peak_KiB", (double)above(top, start), "KiB", "lower");
	bench_result("rss_start_KiB", (double)start, "KiB", "lower");
	return 0;
}
