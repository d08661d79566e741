/*
 * bench.h -- the little that the tools/bench workloads share.
 *
 * Each workload is one C file that includes this header and is compiled
 * by tools/bench/run with `cc -O2 -pthread`.  They use only the standard
 * malloc API; the allocator under test is chosen by LD_PRELOAD.
 *
 * What a workload prints on stdout, one item per line, for the driver:
 *
 *   malloc from: PATH                  the object that provides malloc()
 *   result NAME VALUE UNIT BETTER      one figure; BETTER is "lower" or
 *                                      "higher"; NAME unique per program
 *   series NAME V1 V2 ...              a list kept in the JSON only
 *
 * Anything else is commentary for a person running it by hand.
 */
#ifndef BENCH_H
#define BENCH_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every helper below may go unused in a given workload. */
#define BENCH_FN static __attribute__((unused))

/*
 * bench_keep(P): a store the optimiser must keep, so that a malloc/free
 * pair (or a computed sum) is not elided.  Thread-local: one variable that
 * every thread stored to would bounce its cache line between the CPUs on
 * every call and measure that instead of the allocator.
 */
static __thread void *volatile bench_sink;

#define bench_keep(p)	__atomic_store_n(&bench_sink, (void *)(p), \
			    __ATOMIC_RELAXED)

BENCH_FN inline double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

BENCH_FN void __attribute__((noreturn, format(printf, 1, 2)))
bench_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* malloc() that treats NULL as fatal: a benchmark cannot go on without. */
BENCH_FN inline void *
bench_malloc(size_t size)
{
	void *p = malloc(size);

	if (p == NULL)
		bench_die("malloc(%zu) returned NULL", size);
	return p;
}

BENCH_FN void
bench_report_provider(void)
{
	Dl_info info;
	void *(*fn)(size_t) = malloc;

	if (dladdr((void *)fn, &info) != 0 && info.dli_fname != NULL)
		printf("malloc from: %s\n", info.dli_fname);
	else
		printf("malloc from: unknown\n");
}

BENCH_FN void
bench_result(const char *name, double value, const char *unit,
    const char *better)
{
	printf("result %s %.6g %s %s\n", name, value, unit, better);
}

/* Resident set size of this process in KiB, from /proc/self/statm. */
BENCH_FN long
bench_rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, resident;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* xorshift64*: a small, fast generator; each thread keeps its own state. */
BENCH_FN inline uint64_t
bench_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* A fixed hash of a key: the same key always gets the same size. */
BENCH_FN inline uint64_t
bench_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

BENCH_FN unsigned long
bench_arg(int argc, char **argv, int i, unsigned long dflt, const char *what)
{
	char *end;
	unsigned long v;

	if (i >= argc)
		return dflt;
	errno = 0;
	v = strtoul(argv[i], &end, 10);
	if (errno != 0 || end == argv[i] || *end != '\0')
		bench_die("bad %s: '%s'", what, argv[i]);
	return v;
}

BENCH_FN void
bench_spawn(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	int error = pthread_create(tid, NULL, fn, arg);

	if (error != 0)
		bench_die("pthread_create: %s", strerror(error));
}

#endif /* BENCH_H */
