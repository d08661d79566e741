/*
 * malloc_test -- the seed 001 workload: N threads, each doing ITER rounds
 * of malloc(SIZE) followed by free().
 *
 * Usage: malloc_test [SIZE [ITERATIONS [THREADS]]]
 *        (defaults: 1024 bytes, 10000000 rounds, 1 thread)
 *
 * The threads are created first and released together by a barrier, so the
 * measured interval covers only the allocation loops running side by side.
 * Each round writes one byte into the block so the compiler cannot drop the
 * malloc/free pair and the block is really handed out.
 *
 * Output (stdout):
 *   malloc from: PATH                    object that provides malloc()
 *   Starting test with N threads...
 *   Thread I: S seconds for R requests of B bytes   (one line per thread)
 *   elapsed: S seconds                   wall time, barrier to last join
 *   result per_thread_s S s lower        mean of the threads' own times
 *   result throughput_Mops M Mops/s higher
 *                                        all threads' pairs / elapsed
 *
 * The program makes no judgement about the figures; tools/bench/run
 * collects them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

struct worker {
	pthread_t	 tid;
	unsigned	 index;
	size_t		 size;
	unsigned long	 iterations;
	double		 seconds;
	int		 failed;
};

static pthread_barrier_t start_barrier;

/*
 * A store the optimiser must keep; it also keeps each block "used".  One
 * per thread: a variable shared by the threads would bounce its cache line
 * between the CPUs at every iteration, and a fast allocator's 2T/1T would
 * measure that bouncing.
 */
static __thread void *volatile sink;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long i;
	double t0;

	pthread_barrier_wait(&start_barrier);
	t0 = now();
	for (i = 0; i < w->iterations; i++) {
		char *p = malloc(w->size);

		if (p == NULL) {
			w->failed = 1;
			break;
		}
		p[0] = (char)i;
		sink = p;
		free(p);
	}
	w->seconds = now() - t0;
	return NULL;
}

static unsigned long
parse_count(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v == 0) {
		fprintf(stderr, "malloc_test: bad %s: '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int
main(int argc, char *argv[])
{
	size_t size = 1024;
	unsigned long iterations = 10000000UL;
	unsigned long nthreads = 1;
	struct worker *workers;
	unsigned long i;
	double t0, elapsed, sum = 0;
	int failed = 0;

	if (argc > 4 || (argc > 1 && strcmp(argv[1], "-h") == 0)) {
		fprintf(stderr,
		    "usage: malloc_test [size [iterations [threads]]]\n");
		return 2;
	}
	if (argc > 1)
		size = (size_t)parse_count(argv[1], "size");
	if (argc > 2)
		iterations = parse_count(argv[2], "iterations");
	if (argc > 3)
		nthreads = parse_count(argv[3], "thread count");
	if (nthreads > 4096) {
		fprintf(stderr, "malloc_test: at most 4096 threads\n");
		return 2;
	}

	bench_report_provider();
	printf("Starting test with %lu thread%s...\n", nthreads,
	    nthreads == 1 ? "" : "s");
	fflush(stdout);

	workers = calloc(nthreads, sizeof(*workers));
	if (workers == NULL) {
		perror("malloc_test: calloc");
		return 1;
	}
	if (pthread_barrier_init(&start_barrier, NULL,
	    (unsigned)nthreads + 1) != 0) {
		fprintf(stderr, "malloc_test: pthread_barrier_init failed\n");
		return 1;
	}
	for (i = 0; i < nthreads; i++) {
		int error;

		workers[i].index = (unsigned)i;
		workers[i].size = size;
		workers[i].iterations = iterations;
		error = pthread_create(&workers[i].tid, NULL, worker_main,
		    &workers[i]);
		if (error != 0) {
			fprintf(stderr, "malloc_test: pthread_create: %s\n",
			    strerror(error));
			return 1;
		}
	}

	t0 = now();
	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < nthreads; i++)
		pthread_join(workers[i].tid, NULL);
	elapsed = now() - t0;

	for (i = 0; i < nthreads; i++) {
		printf("Thread %u: %.6f seconds for %lu requests of %zu bytes\n",
		    workers[i].index, workers[i].seconds, iterations, size);
		failed |= workers[i].failed;
		sum += workers[i].seconds;
	}
	printf("elapsed: %.6f seconds\n", elapsed);
	/* The figures tools/bench/run collects (see bench.h for the format). */
	printf("result per_thread_s %.6g s lower\n", sum / (double)nthreads);
	printf("result throughput_Mops %.6g Mops/s higher\n",
	    (double)nthreads * (double)iterations / elapsed / 1e6);
	free(workers);
	if (failed) {
		fprintf(stderr, "malloc_test: malloc returned NULL\n");
		return 1;
	}
	return 0;
}
