/*
 * arenalloc-demo: a short multi-threaded malloc workload.
 *
 * `tools/run' runs it with libarenalloc.so preloaded.  It only uses the
 * standard C API (malloc, calloc, realloc, posix_memalign, free), so it runs
 * the same under any malloc.
 *
 * NTHREADS threads each keep a table of live blocks of random sizes from
 * 1 byte to 1 MiB (log-uniform, weighted towards small sizes: mostly small
 * blocks, some large ones of whole pages).  Every block is filled with a pattern derived from a per-block
 * tag and checked before it is freed or resized.  About a quarter of the
 * blocks are handed to another thread through a shared queue, and that
 * thread checks and frees them.  The run stops after OPS_PER_THREAD
 * operations per thread or after RUN_SECONDS, whichever comes first.
 *
 * Exit status: 0 when every check passed, 1 on a pattern mismatch, a NULL
 * from the allocator, a misaligned block or a non-zeroed calloc block.
 *
 * Usage: arenalloc-demo [seconds]
 */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NTHREADS	4
#define LIVE_SLOTS	256		/* live blocks per thread */
#define QUEUE_SLOTS	1024		/* cross-thread hand-off queue */
#define OPS_PER_THREAD	400000
#define RUN_SECONDS	1.5
#define MAX_LG_SIZE	20		/* 1 MiB */

struct block {
	unsigned char	*p;
	size_t		 size;
	uint64_t	 tag;
};

struct worker {
	pthread_t	 thread;
	unsigned	 id;
	uint64_t	 rng;
	struct block	 live[LIVE_SLOTS];
	/* Counters, read by main after join. */
	unsigned long	 nalloc, nfree, nrealloc, nremote_free, bytes;
};

static struct {
	pthread_mutex_t	 lock;
	struct block	 slot[QUEUE_SLOTS];
	unsigned	 head, count;
} queue = { PTHREAD_MUTEX_INITIALIZER, { { NULL, 0, 0 } }, 0, 0 };

static volatile int	failed;
static struct timespec	start;
static double		run_seconds = RUN_SECONDS;

static uint64_t
next_random(uint64_t *state)
{
	/* xorshift64* */
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

static double
elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start.tv_sec) +
	    (double)(now.tv_nsec - start.tv_nsec) / 1e9;
}

/*
 * 1 .. 1 MiB - 1, log-uniform; three requests in four are at most 8 KiB,
 * as in most programs.
 */
static size_t
random_size(uint64_t *rng)
{
	uint64_t r = next_random(rng);
	unsigned lg = (unsigned)((r >> 40) % ((r & 3) != 0 ? 13 : MAX_LG_SIZE));
	size_t base = (size_t)1 << lg;

	return base + (size_t)((r >> 8) % base);	/* base .. 2*base-1 */
}

static size_t
clamp_size(size_t size)
{
	return size > ((size_t)1 << MAX_LG_SIZE) ? (size_t)1 << MAX_LG_SIZE : size;
}

/*
 * The pattern: word k (8 bytes) of a block holds tag + k * PATTERN_STEP, in
 * native byte order; a tail shorter than a word holds that word's first
 * bytes.  Written and compared a word at a time so that big blocks stay cheap.
 */
#define PATTERN_STEP	UINT64_C(0x9e3779b97f4a7c15)

static void
fill(const struct block *b)
{
	size_t k, nwords = b->size / 8;
	uint64_t v = b->tag;

	for (k = 0; k < nwords; k++, v += PATTERN_STEP)
		memcpy(b->p + k * 8, &v, 8);
	memcpy(b->p + nwords * 8, &v, b->size % 8);
}

static int
check(const struct block *b, size_t len, const char *what)
{
	size_t k, i, nwords = len / 8;
	uint64_t v = b->tag;
	unsigned char expect[8];

	for (k = 0; k <= nwords; k++, v += PATTERN_STEP) {
		size_t n = k < nwords ? 8 : len % 8;

		if (n == 0 || memcmp(b->p + k * 8, &v, n) == 0)
			continue;
		memcpy(expect, &v, 8);
		for (i = 0; i < n && b->p[k * 8 + i] == expect[i]; i++)
			;
		fprintf(stderr, "arenalloc-demo: %s: pattern mismatch in "
		    "block %p (size %zu) at offset %zu: 0x%02x instead of "
		    "0x%02x\n", what, (void *)b->p, b->size, k * 8 + i,
		    b->p[k * 8 + i], expect[i]);
		failed = 1;
		return -1;
	}
	return 0;
}

static int
allocate(struct worker *w, struct block *b)
{
	size_t size = random_size(&w->rng);
	unsigned how = (unsigned)(next_random(&w->rng) % 8);
	size_t i;

	b->size = size;
	b->tag = next_random(&w->rng);
	if (how == 0) {
		b->p = calloc(1, size);
		if (b->p != NULL) {
			for (i = 0; i < size; i++) {
				if (b->p[i] != 0) {
					fprintf(stderr, "arenalloc-demo: calloc(1, "
					    "%zu) = %p: byte %zu is not zero\n",
					    size, (void *)b->p, i);
					failed = 1;
					return -1;
				}
			}
		}
	} else if (how == 1) {
		size_t align = (size_t)1 << (3 + next_random(&w->rng) % 10);
		void *p = NULL;
		int error = posix_memalign(&p, align, size);

		if (error != 0) {
			fprintf(stderr, "arenalloc-demo: posix_memalign(%zu, "
			    "%zu): %s\n", align, size, strerror(error));
			failed = 1;
			return -1;
		}
		if (((uintptr_t)p & (align - 1)) != 0) {
			fprintf(stderr, "arenalloc-demo: posix_memalign(%zu, "
			    "%zu) = %p: misaligned\n", align, size, p);
			failed = 1;
			return -1;
		}
		b->p = p;
	} else {
		b->p = malloc(size);
	}
	if (b->p == NULL) {
		fprintf(stderr, "arenalloc-demo: allocating %zu bytes: %s\n",
		    size, strerror(errno));
		failed = 1;
		return -1;
	}
	fill(b);
	w->nalloc++;
	w->bytes += size;
	return 0;
}

static int
resize(struct worker *w, struct block *b)
{
	size_t newsize = clamp_size((next_random(&w->rng) & 1) ?
	    b->size * 2 + 1 : b->size / 2 + 1);
	unsigned char *p;

	if (check(b, b->size, "before realloc") != 0)
		return -1;
	p = realloc(b->p, newsize);
	if (p == NULL) {
		fprintf(stderr, "arenalloc-demo: realloc(%p, %zu): %s\n",
		    (void *)b->p, newsize, strerror(errno));
		failed = 1;
		return -1;
	}
	b->p = p;
	if (check(b, newsize < b->size ? newsize : b->size, "after realloc") != 0)
		return -1;
	b->size = newsize;
	fill(b);
	w->nrealloc++;
	w->bytes += newsize;
	return 0;
}

static int
release(struct worker *w, struct block *b, const char *what)
{
	if (check(b, b->size, what) != 0)
		return -1;
	free(b->p);
	b->p = NULL;
	w->nfree++;
	return 0;
}

/*
 * Hand b to whichever thread comes next; take in exchange (into *out) a
 * block queued by another thread, if any.  Returns 1 when *out was set.
 */
static int
exchange(struct worker *w, struct block *b, struct block *out)
{
	int got = 0;
	unsigned i;

	pthread_mutex_lock(&queue.lock);
	if (queue.count > 0) {
		*out = queue.slot[queue.head];
		queue.head = (queue.head + 1) % QUEUE_SLOTS;
		queue.count--;
		got = 1;
	}
	if (queue.count < QUEUE_SLOTS) {
		i = (queue.head + queue.count) % QUEUE_SLOTS;
		queue.slot[i] = *b;
		queue.count++;
		b->p = NULL;
	}
	pthread_mutex_unlock(&queue.lock);
	(void)w;
	return got;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	struct block other;
	unsigned long op;
	unsigned i;

	for (op = 0; op < OPS_PER_THREAD && !failed; op++) {
		if ((op & 255) == 0 && elapsed() > run_seconds)
			break;
		i = (unsigned)(next_random(&w->rng) % LIVE_SLOTS);
		if (w->live[i].p == NULL) {
			if (allocate(w, &w->live[i]) != 0)
				break;
			continue;
		}
		switch (next_random(&w->rng) % 8) {
		case 0:
			if (resize(w, &w->live[i]) != 0)
				goto out;
			break;
		case 1:
		case 2:
			/* Give the block away; free one from another thread. */
			if (check(&w->live[i], w->live[i].size, "before hand-off") != 0)
				goto out;
			if (exchange(w, &w->live[i], &other)) {
				if (release(w, &other, "freed by another thread") != 0)
					goto out;
				w->nremote_free++;
			}
			if (w->live[i].p != NULL &&
			    release(w, &w->live[i], "free") != 0)
				goto out;
			break;
		default:
			if (release(w, &w->live[i], "free") != 0)
				goto out;
			break;
		}
	}
out:
	/* After a failure, free without checking: one report is enough. */
	for (i = 0; i < LIVE_SLOTS; i++) {
		if (w->live[i].p == NULL)
			continue;
		if (failed) {
			free(w->live[i].p);
			w->live[i].p = NULL;
		} else if (release(w, &w->live[i], "final free") != 0) {
			i--;	/* free this one in the failed branch */
		}
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	static struct worker workers[NTHREADS];
	unsigned long nalloc = 0, nfree = 0, nrealloc = 0, nremote = 0;
	unsigned long bytes = 0;
	unsigned i;
	int error;

	if (argc > 2 || (argc == 2 && (run_seconds = atof(argv[1])) <= 0)) {
		fprintf(stderr, "usage: %s [seconds]\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < NTHREADS; i++) {
		workers[i].id = i;
		workers[i].rng = UINT64_C(0x9e3779b97f4a7c15) * (i + 1);
		error = pthread_create(&workers[i].thread, NULL, work, &workers[i]);
		if (error != 0) {
			fprintf(stderr, "arenalloc-demo: pthread_create: %s\n",
			    strerror(error));
			return 1;
		}
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(workers[i].thread, NULL);

	/* Blocks still queued for hand-off: check and free them here. */
	while (queue.count > 0 && !failed) {
		struct block *b = &queue.slot[queue.head];

		if (check(b, b->size, "freed by main thread") == 0) {
			free(b->p);
			nfree++;
			nremote++;
		}
		queue.head = (queue.head + 1) % QUEUE_SLOTS;
		queue.count--;
	}

	for (i = 0; i < NTHREADS; i++) {
		nalloc += workers[i].nalloc;
		nfree += workers[i].nfree;
		nrealloc += workers[i].nrealloc;
		nremote += workers[i].nremote_free;
		bytes += workers[i].bytes;
	}
	printf("arenalloc-demo: %u threads, %.2f s: %lu allocations, "
	    "%lu reallocs, %lu frees (%lu by another thread), %lu MiB written\n",
	    NTHREADS, elapsed(), nalloc, nrealloc, nfree, nremote, bytes >> 20);
	if (failed) {
		printf("arenalloc-demo: FAILED\n");
		return 1;
	}
	printf("arenalloc-demo: all blocks checked, no errors\n");
	return 0;
}
