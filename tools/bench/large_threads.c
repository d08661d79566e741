/*
 * large_threads -- many threads taking and returning large blocks at once.
 *
 * Not a seed workload: it watches the cost of arenalloc's shared_large
 * design, where every thread's large blocks above 64 KiB come from one
 * arena (arena 0).  If that arena's lock made threads queue, this is where
 * it would show: THREADS threads, released together by a barrier, each
 * keeping a ring of KEEP blocks of 72 KiB to 1.4 MiB (log-uniform) and
 * replacing the oldest ITERATIONS times: free it, malloc the next, write
 * one byte per 4 KiB page.  arenalloc's thread caches stop at 64 KiB, so
 * every one of its calls reaches the arenas' page runs.
 *
 * Usage: large_threads [THREADS [ITERATIONS [KEEP]]]   (4 100000 8)
 *
 * Results: Mops_per_s (all threads' malloc + free pairs per second of wall
 * time, barrier to last join), per_thread_s (mean of the threads' own
 * times), rss_end_KiB (resident size after every thread freed its ring).
 */
#include "bench.h"

#include <math.h>

struct worker {
	pthread_t	 tid;
	unsigned	 index;
	double		 seconds;
};

static pthread_barrier_t start;
static unsigned long iterations, keep;

static void *
work(void *arg)
{
	struct worker *w = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (w->index + 1);
	char **ring = calloc(keep, sizeof(*ring));
	double t0;

	if (ring == NULL)
		bench_die("calloc failed");
	pthread_barrier_wait(&start);
	t0 = bench_now();
	for (unsigned long i = 0; i < iterations; i++) {
		double u = (double)(bench_rand(&rng) >> 11) / 9007199254740992.0;
		size_t n = (size_t)(73728.0 * pow(20.0, u));
		unsigned long k = i % keep;

		free(ring[k]);
		ring[k] = bench_malloc(n);
		for (size_t o = 0; o < n; o += 4096)
			ring[k][o] = (char)i;
	}
	w->seconds = bench_now() - t0;
	for (unsigned long k = 0; k < keep; k++)
		free(ring[k]);
	free(ring);
	return NULL;
}

int
main(int argc, char **argv)
{
	unsigned long nthreads = bench_arg(argc, argv, 1, 4, "THREADS");
	struct worker *workers;
	double t0, elapsed, sum = 0;

	iterations = bench_arg(argc, argv, 2, 100000, "ITERATIONS");
	keep = bench_arg(argc, argv, 3, 8, "KEEP");
	if (nthreads == 0 || iterations == 0 || keep == 0)
		bench_die("THREADS, ITERATIONS and KEEP must be positive");
	bench_report_provider();
	workers = calloc(nthreads, sizeof(*workers));
	if (workers == NULL)
		bench_die("calloc failed");
	pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
	for (unsigned long i = 0; i < nthreads; i++) {
		workers[i].index = (unsigned)i;
		bench_spawn(&workers[i].tid, work, &workers[i]);
	}
	pthread_barrier_wait(&start);
	t0 = bench_now();
	for (unsigned long i = 0; i < nthreads; i++)
		pthread_join(workers[i].tid, NULL);
	elapsed = bench_now() - t0;
	for (unsigned long i = 0; i < nthreads; i++)
		sum += workers[i].seconds;
	printf("%lu thread(s) x %lu blocks of 72 KiB-1.4 MiB, %lu kept: %.3f s\n",
	    nthreads, iterations, keep, elapsed);
	bench_result("Mops_per_s", (double)nthreads * iterations / elapsed / 1e6,
	    "Mops/s", "higher");
	bench_result("per_thread_s", sum / nthreads, "s", "lower");
	bench_result("rss_end_KiB", (double)bench_rss_kib(), "KiB", "lower");
	free(workers);
	return 0;
}
