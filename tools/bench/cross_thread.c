/*
 * cross_thread -- the seed 004 workload: memory allocated in one thread
 * and freed in another.
 *
 * Naviserver hands request buffers and Tcl objects from thread to thread;
 * every block is freed by a different thread than the one that allocated
 * it.  An allocator with thread caches must take such frees back cheaply
 * and must not let the memory pile up in the freeing thread.
 *
 * Here PRODUCERS threads each allocate BLOCKS blocks of 16 B to 8 KiB
 * (sizes log-uniform: a power of two 16..4096 plus a uniform part), write
 * a header, the first bytes and the last byte, and pass them in batches of
 * 64 through single-producer single-consumer rings (one per producer and
 * consumer, CAPACITY slots) to CONSUMERS threads, which check each block
 * and free it.  A full or empty ring makes the thread yield.
 *
 * Usage: cross_thread [PRODUCERS [CONSUMERS [BLOCKS [CAPACITY]]]]
 *        (2 2 2000000 1024)
 *
 * Results: Mops_per_s (blocks allocated and freed per second, millions),
 * rss_end_KiB (resident size once every block is freed).
 */
#include "bench.h"

#include <sched.h>

#define BATCH	64

struct ring {
	/* Written by the producer only. */
	unsigned long	 tail __attribute__((aligned(64)));
	/* Written by the consumer only. */
	unsigned long	 head __attribute__((aligned(64)));
	void		**slot __attribute__((aligned(64)));
};

/* At the start of each block (16 bytes at least, so the last byte is past it). */
struct block_header {
	size_t		 size;
};

static unsigned long nproducers, nconsumers, nblocks, capacity;
static struct ring *rings;		/* [producer * nconsumers + consumer] */
static volatile int producers_left;
static pthread_barrier_t start_barrier;

static struct ring *
ring_of(unsigned long p, unsigned long c)
{
	return &rings[p * nconsumers + c];
}

static size_t
pick_size(uint64_t *rng)
{
	uint64_t r = bench_rand(rng);
	unsigned e = 4 + (unsigned)(r % 9);		/* 16 .. 4096 */

	return ((size_t)1 << e) + (size_t)((r >> 8) % ((uint64_t)1 << e));
}

static void *
producer_main(void *arg)
{
	unsigned long p = (unsigned long)(uintptr_t)arg, i = 0, c = 0;
	uint64_t rng = bench_hash(p + 1) | 1;

	pthread_barrier_wait(&start_barrier);
	while (i < nblocks) {
		struct ring *r = ring_of(p, c);
		unsigned long head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		unsigned long n = 0, tail = r->tail;

		if (capacity - (tail - head) < BATCH) {
			sched_yield();
			continue;
		}
		for (n = 0; n < BATCH && i < nblocks; n++, i++) {
			size_t size = pick_size(&rng);
			unsigned char *b = bench_malloc(size);
			struct block_header *h = (struct block_header *)b;

			memset(b, 0x5a, size < 64 ? size : 64);
			h->size = size;
			b[size - 1] = 0xa5;
			r->slot[(tail + n) & (capacity - 1)] = b;
		}
		__atomic_store_n(&r->tail, tail + n, __ATOMIC_RELEASE);
		c = (c + 1) % nconsumers;
	}
	__atomic_sub_fetch(&producers_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *
consumer_main(void *arg)
{
	unsigned long c = (unsigned long)(uintptr_t)arg, p;

	pthread_barrier_wait(&start_barrier);
	for (;;) {
		int done = __atomic_load_n(&producers_left, __ATOMIC_ACQUIRE) == 0;
		unsigned long got = 0;

		for (p = 0; p < nproducers; p++) {
			struct ring *r = ring_of(p, c);
			unsigned long tail = __atomic_load_n(&r->tail,
			    __ATOMIC_ACQUIRE);
			unsigned long head = r->head;

			for (; head != tail; head++, got++) {
				unsigned char *b = r->slot[head & (capacity - 1)];
				struct block_header *h = (struct block_header *)b;

				if (h->size < 16 || h->size >= 8192 ||
				    b[h->size - 1] != 0xa5)
					bench_die("cross_thread: block %p "
					    "corrupted", (void *)b);
				free(b);
			}
			__atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
		}
		/* Producers were done before this pass began: all drained. */
		if (done)
			break;
		if (got == 0)
			sched_yield();
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t *tids;
	unsigned long i, n;
	double t0, elapsed;

	nproducers = bench_arg(argc, argv, 1, 2, "producers");
	nconsumers = bench_arg(argc, argv, 2, 2, "consumers");
	nblocks = bench_arg(argc, argv, 3, 2000000, "blocks");
	capacity = bench_arg(argc, argv, 4, 1024, "capacity");
	if (nproducers == 0 || nconsumers == 0 || nproducers > 256 ||
	    nconsumers > 256 || capacity < BATCH ||
	    (capacity & (capacity - 1)) != 0)
		bench_die("usage: cross_thread [producers [consumers [blocks "
		    "[capacity (a power of two >= %d)]]]]", BATCH);
	bench_report_provider();

	n = nproducers + nconsumers;
	rings = aligned_alloc(64, nproducers * nconsumers * sizeof(*rings));
	tids = calloc(n, sizeof(*tids));
	if (rings == NULL || tids == NULL)
		bench_die("out of memory");
	memset(rings, 0, nproducers * nconsumers * sizeof(*rings));
	for (i = 0; i < nproducers * nconsumers; i++)
		rings[i].slot = bench_malloc(capacity * sizeof(void *));
	producers_left = (int)nproducers;
	if (pthread_barrier_init(&start_barrier, NULL, (unsigned)n + 1) != 0)
		bench_die("pthread_barrier_init failed");

	for (i = 0; i < nproducers; i++)
		bench_spawn(&tids[i], producer_main, (void *)(uintptr_t)i);
	for (i = 0; i < nconsumers; i++)
		bench_spawn(&tids[nproducers + i], consumer_main,
		    (void *)(uintptr_t)i);
	t0 = bench_now();
	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	elapsed = bench_now() - t0;

	printf("%lu producer(s) -> %lu consumer(s), %lu blocks each: %.3f s\n",
	    nproducers, nconsumers, nblocks, elapsed);
	bench_result("Mops_per_s", (double)(nproducers * nblocks) / elapsed /
	    1e6, "Mops/s", "higher");
	bench_result("rss_end_KiB", (double)bench_rss_kib(), "KiB", "lower");
	for (i = 0; i < nproducers * nconsumers; i++)
		free(rings[i].slot);
	free(rings);
	free(tids);
	return 0;
}
