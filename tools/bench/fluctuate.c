/*
 * fluctuate -- the seed 003 workload: memory use swinging widely.
 *
 * The ubench memory test that found jemalloc 13 % slower than phkmalloc
 * allocates 1 KiB buffers, copies into them and frees them, so that the
 * process grows and shrinks again and again.  An allocator that hands
 * every freed page back to the kernel at once pays for it in madvise,
 * munmap, mmap and page faults on the next wave; one that never does keeps
 * the peak resident forever.  Purging must not thrash.
 *
 * Here THREADS threads run WAVES waves together.  In a wave each thread
 * allocates its share of the wave's size in 1 KiB buffers, copying 1 KiB
 * into each (from the buffer before it), then, after a barrier, frees them
 * all in the order it allocated them; another barrier ends the wave.  The
 * size of wave w goes up and down between PEAK_MIB / 8 and PEAK_MIB:
 *     PEAK_MIB * (1 + 7 * ((5 * w) mod 8) / 7) / 8
 * so live memory swings between near zero and PEAK_MIB.
 *
 * Usage: fluctuate [THREADS [WAVES [PEAK_MIB]]]   (2 16 256)
 *
 * Results: seconds; rss_low_KiB (resident size after the last wave, all
 * freed).  tools/bench/run counts the mmap/munmap/madvise/mremap/brk calls
 * of a separate, untimed run under strace.
 */
#include "bench.h"

#define BUF_SIZE	1024

static unsigned long nthreads, nwaves, peak_mib;
static pthread_barrier_t phase_barrier;

static size_t
wave_buffers(unsigned long w)
{
	size_t bytes = (size_t)peak_mib * 1024 * 1024 / 8 *
	    (1 + (size_t)((5 * w) % 8));

	return bytes / BUF_SIZE / nthreads;
}

static void *
worker_main(void *arg)
{
	size_t max = (size_t)peak_mib * 1024 * 1024 / BUF_SIZE / nthreads;
	unsigned char **buf = bench_malloc(max * sizeof(*buf));
	unsigned char seed[BUF_SIZE];
	unsigned long w;
	size_t i, n;
	unsigned sum = 0;

	memset(seed, (int)(uintptr_t)arg, sizeof(seed));
	for (w = 0; w < nwaves; w++) {
		const unsigned char *from = seed;

		n = wave_buffers(w);
		for (i = 0; i < n; i++) {
			buf[i] = bench_malloc(BUF_SIZE);
			memcpy(buf[i], from, BUF_SIZE);
			buf[i][i % BUF_SIZE]++;
			from = buf[i];
		}
		pthread_barrier_wait(&phase_barrier);
		for (i = 0; i < n; i++) {
			sum += buf[i][BUF_SIZE - 1];
			free(buf[i]);
		}
		pthread_barrier_wait(&phase_barrier);
	}
	free(buf);
	bench_keep((uintptr_t)sum);
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t *tids;
	unsigned long i;
	double t0, elapsed;

	nthreads = bench_arg(argc, argv, 1, 2, "thread count");
	nwaves = bench_arg(argc, argv, 2, 16, "waves");
	peak_mib = bench_arg(argc, argv, 3, 256, "peak MiB");
	if (nthreads == 0 || nthreads > 256 || nwaves == 0 || peak_mib == 0 ||
	    peak_mib > 65536)
		bench_die("usage: fluctuate [threads [waves [peak MiB]]]");
	bench_report_provider();
	tids = calloc(nthreads, sizeof(*tids));
	if (tids == NULL ||
	    pthread_barrier_init(&phase_barrier, NULL, (unsigned)nthreads) != 0)
		bench_die("set-up failed");

	t0 = bench_now();
	for (i = 0; i < nthreads; i++)
		bench_spawn(&tids[i], worker_main, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	elapsed = bench_now() - t0;

	printf("%lu thread(s), %lu wave(s) up to %lu MiB: %.3f s\n", nthreads,
	    nwaves, peak_mib, elapsed);
	bench_result("seconds", elapsed, "s", "lower");
	bench_result("rss_low_KiB", (double)bench_rss_kib(), "KiB", "lower");
	free(tids);
	return 0;
}
