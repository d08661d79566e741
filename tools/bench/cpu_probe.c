/*
 * cpu_probe -- how much two threads gain over one on this machine when
 * no allocator is involved: the ceiling for malloc-test's 2T/1T figure.
 *
 * Two loops, each run by 1 and then by THREADS threads, every thread doing
 * the same fixed work:
 *   throughput: six independent add/xor chains, which keep the integer
 *               units of a core busy (two hardware threads of one core
 *               share them: such a pair gains little over one thread);
 *   latency:    one chain of dependent multiplies, which leaves most of a
 *               core idle (even hardware threads of one core gain here).
 * A machine whose CPUs are separate cores shows about THREADS for both.
 *
 * Usage: cpu_probe [THREADS]   (2)
 *
 * Results: throughput_gain and latency_gain (total work per second with
 * THREADS threads over that with one).
 */
#include "bench.h"

#define ROUNDS	200000000UL

static volatile unsigned long sink[64 * 8];

static void *
throughput_loop(void *arg)
{
	unsigned long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, i;

	for (i = 0; i < ROUNDS; i++) {
		/* Six chains; the asm keeps the compiler from folding them. */
		__asm__ volatile("add %0, %1\n\txor %2, %3\n\tadd %4, %5\n\t"
		    "xor %1, %0\n\tadd %3, %2\n\txor %5, %4"
		    : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
	}
	sink[(uintptr_t)arg * 8] = a + b + c + d + e + f;
	return NULL;
}

static void *
latency_loop(void *arg)
{
	unsigned long x = (uintptr_t)arg + 1, i;

	for (i = 0; i < ROUNDS / 2; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	sink[(uintptr_t)arg * 8] = x;
	return NULL;
}

/* Seconds for n threads each running loop once. */
static double
timed(void *(*loop)(void *), unsigned long n)
{
	pthread_t tid[64];
	unsigned long i;
	double t0 = bench_now();

	for (i = 0; i < n; i++)
		if (pthread_create(&tid[i], NULL, loop, (void *)(uintptr_t)i) != 0)
			bench_die("cpu_probe: pthread_create failed");
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	return bench_now() - t0;
}

int
main(int argc, char **argv)
{
	unsigned long n = bench_arg(argc, argv, 1, 2, "threads");
	double t1, tn, l1, ln;

	if (n == 0 || n > 64)
		bench_die("usage: cpu_probe [threads (1..64)]");
	t1 = timed(throughput_loop, 1);
	tn = timed(throughput_loop, n);
	l1 = timed(latency_loop, 1);
	ln = timed(latency_loop, n);
	printf("%lu thread(s): throughput loop %.3f s (1 thread %.3f s), "
	    "latency loop %.3f s (1 thread %.3f s)\n", n, tn, t1, ln, l1);
	bench_result("throughput_gain", (double)n * t1 / tn, "x", "higher");
	bench_result("latency_gain", (double)n * l1 / ln, "x", "higher");
	return 0;
}
