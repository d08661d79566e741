/*
 * omp_burst -- the seed 002 workload: many threads asking for small
 * 64-byte-aligned buffers at the same instant.
 *
 * GraphicsMagick runs each image operation as an OpenMP parallel region;
 * at the start of a region every thread allocates a few small aligned
 * buffers with posix_memalign(64, ...).  With 40 threads released at once,
 * an allocator that serializes them turns the whole program serial.
 *
 * Here THREADS threads run rounds.  A round starts at a barrier that
 * releases all of them together; each thread then does INNER times: take
 * six small buffers (posix_memalign with alignment 64, sizes 64 to 512),
 * write every byte, read one back, free them (in a different order); a
 * second barrier ends the round.  Rounds repeat until SECONDS have passed.
 *
 * Usage: omp_burst [THREADS [SECONDS_MS [INNER]]]   (40 2000 16)
 *
 * Results: rounds_per_s (the "iterations per second"), Mallocs_per_s.
 */
#include "bench.h"

static const size_t sizes[] = { 64, 64, 128, 192, 256, 512 };
#define NBUF (sizeof(sizes) / sizeof(sizes[0]))

static pthread_barrier_t round_start, round_end;
static volatile int stop;
static double deadline;
static unsigned long rounds;
static unsigned long inner = 16;

static void *
worker_main(void *arg)
{
	unsigned long k, n = 0;
	unsigned sum = 0;
	size_t i;
	int r;

	(void)arg;
	for (;;) {
		pthread_barrier_wait(&round_start);
		if (stop)
			break;
		for (k = 0; k < inner; k++) {
			unsigned char *buf[NBUF];

			for (i = 0; i < NBUF; i++) {
				void *p;

				r = posix_memalign(&p, 64, sizes[i]);
				if (r != 0)
					bench_die("posix_memalign(64, %zu): %s",
					    sizes[i], strerror(r));
				if (((uintptr_t)p & 63) != 0)
					bench_die("posix_memalign(64, %zu) "
					    "returned %p", sizes[i], p);
				buf[i] = p;
				memset(p, (int)(k + i), sizes[i]);
			}
			for (i = 0; i < NBUF; i++)
				sum += buf[i][sizes[i] - 1];
			/* Free the odd ones first, then the even ones. */
			for (i = 1; i < NBUF; i += 2)
				free(buf[i]);
			for (i = 0; i < NBUF; i += 2)
				free(buf[i]);
			n++;
		}
		r = pthread_barrier_wait(&round_end);
		if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
			/* Decided here, read by all after the next start. */
			rounds++;
			if (bench_now() >= deadline)
				stop = 1;
		}
	}
	bench_keep((uintptr_t)(sum + n));
	return NULL;
}

int
main(int argc, char **argv)
{
	unsigned long nthreads = bench_arg(argc, argv, 1, 40, "thread count");
	unsigned long ms = bench_arg(argc, argv, 2, 2000, "milliseconds");
	pthread_t *tids;
	unsigned long i;
	double t0, elapsed;

	inner = bench_arg(argc, argv, 3, 16, "inner repetitions");
	if (nthreads == 0 || nthreads > 1024 || ms == 0 || inner == 0)
		bench_die("usage: omp_burst [threads [ms [inner]]]");
	bench_report_provider();
	tids = bench_malloc(nthreads * sizeof(*tids));
	if (pthread_barrier_init(&round_start, NULL, (unsigned)nthreads) != 0 ||
	    pthread_barrier_init(&round_end, NULL, (unsigned)nthreads) != 0)
		bench_die("pthread_barrier_init failed");

	t0 = bench_now();
	deadline = t0 + (double)ms / 1000.0;
	for (i = 0; i < nthreads; i++)
		bench_spawn(&tids[i], worker_main, NULL);
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	elapsed = bench_now() - t0;

	printf("%lu threads, %lu rounds in %.3f s\n", nthreads, rounds,
	    elapsed);
	bench_result("rounds_per_s", (double)rounds / elapsed, "rounds/s",
	    "higher");
	bench_result("Mallocs_per_s", (double)rounds * (double)nthreads *
	    (double)inner * (double)NBUF / elapsed / 1e6, "M/s", "higher");
	free(tids);
	return 0;
}
