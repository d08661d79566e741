/*
 * entry_cache -- the seed 000 workload: an LDAP server's entry cache.
 *
 * OpenLDAP's slapd keeps decoded directory entries in an LRU cache of a
 * fixed number of entries.  A full search walks every entry of a
 * directory larger than the cache, so each scan decodes (allocates) almost
 * every entry again and evicts (frees) the least recently used one; with
 * several clients the entry is often freed by another thread than the one
 * that allocated it.  Entry sizes are heavy-tailed: most a few KiB, a few
 * several MiB.  The seed's lesson: speed *and* size, stable from scan to
 * scan.
 *
 * Here KEYS entries exist, sized by a fixed hash of the key:
 *   88 %  1 KiB .. 8 KiB (uniform)
 *   10 %  8 KiB .. 128 KiB (log-uniform)
 *    2 %  128 KiB .. 4 MiB (log-uniform)
 * plus, per entry, a header and 4 to 12 attribute values of 16 to 256
 * bytes, as a decoded entry has.  The cache holds at most CACHE entries
 * (one table, one LRU list, one mutex).  THREADS threads each run SCANS
 * scans over all keys, thread t starting at key t * KEYS / THREADS.  A
 * hit moves the entry to the front and reads one byte per page of its
 * body; a miss builds the entry outside the lock (allocating and writing
 * every byte), inserts it and evicts from the tail; the evicting thread
 * frees what it evicted, outside the lock.
 *
 * Usage: entry_cache [THREADS [SCANS [KEYS [CACHE]]]]   (1 10 15000 3000)
 *
 * Results: scans_per_s; rss_scan_max_KiB and rss_scan_last_KiB (resident
 * size after each completed scan: the largest and the last); rss_empty_KiB
 * (after the cache is emptied at the end); hit_rate in the commentary.
 * Series: rss_after_scan_KiB, one value per completed scan.
 */
#include "bench.h"

#include <math.h>

struct entry {
	uint64_t	 key;
	struct entry	*lru_prev, *lru_next;	/* front = most recent */
	struct entry	*hash_next;
	size_t		 size;			/* bytes of body */
	unsigned char	*body;
	unsigned	 nattr;
	char		*attr[12];
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry **table;
static size_t table_mask;
static struct entry *lru_front, *lru_back;
static size_t cache_count, cache_max;
static unsigned long nkeys, nscans, nthreads;
static unsigned long hits, misses;

static pthread_mutex_t series_lock = PTHREAD_MUTEX_INITIALIZER;
static long *series;
static size_t nseries;

/* The body size of KEY: heavy-tailed, but always the same for a key. */
static size_t
body_size(uint64_t key)
{
	uint64_t h = bench_hash(key + 1);
	unsigned pick = (unsigned)(h % 100);
	double u = (double)((h >> 8) & 0xffffff) / (double)0x1000000;

	if (pick < 88)
		return 1024 + (size_t)(u * 7168);
	if (pick < 98)
		return (size_t)(8192.0 * pow(16.0, u));
	return (size_t)(131072.0 * pow(32.0, u));
}

static struct entry *
entry_build(uint64_t key)
{
	struct entry *e = bench_malloc(sizeof(*e));
	uint64_t h = bench_hash(key ^ 0x5bd1e995);
	unsigned i;

	e->key = key;
	e->size = body_size(key);
	e->body = bench_malloc(e->size);
	memset(e->body, (int)(key & 0xff), e->size);	/* "decode" it */
	e->nattr = 4 + (unsigned)(h % 9);
	for (i = 0; i < e->nattr; i++) {
		size_t n = 16 + (size_t)((h >> (4 + 4 * i)) & 0xff) % 241;

		e->attr[i] = bench_malloc(n);
		memset(e->attr[i], 'a' + (int)i, n - 1);
		e->attr[i][n - 1] = '\0';
	}
	return e;
}

static void
entry_free(struct entry *e)
{
	unsigned i;

	for (i = 0; i < e->nattr; i++)
		free(e->attr[i]);
	free(e->body);
	free(e);
}

/* The rest of this section runs with cache_lock held. */

static struct entry **
bucket(uint64_t key)
{
	return &table[bench_hash(key) & table_mask];
}

static void
lru_unlink(struct entry *e)
{
	if (e->lru_prev != NULL)
		e->lru_prev->lru_next = e->lru_next;
	else
		lru_front = e->lru_next;
	if (e->lru_next != NULL)
		e->lru_next->lru_prev = e->lru_prev;
	else
		lru_back = e->lru_prev;
}

static void
lru_push_front(struct entry *e)
{
	e->lru_prev = NULL;
	e->lru_next = lru_front;
	if (lru_front != NULL)
		lru_front->lru_prev = e;
	else
		lru_back = e;
	lru_front = e;
}

static struct entry *
cache_find(uint64_t key)
{
	struct entry *e;

	for (e = *bucket(key); e != NULL; e = e->hash_next)
		if (e->key == key)
			return e;
	return NULL;
}

static void
cache_remove(struct entry *e)
{
	struct entry **pp;

	for (pp = bucket(e->key); *pp != e; pp = &(*pp)->hash_next)
		continue;
	*pp = e->hash_next;
	lru_unlink(e);
	cache_count--;
}

/* Insert E; return the chain (via hash_next) of entries evicted for it. */
static struct entry *
cache_insert(struct entry *e)
{
	struct entry **b = bucket(e->key), *evicted = NULL;

	e->hash_next = *b;
	*b = e;
	lru_push_front(e);
	cache_count++;
	while (cache_count > cache_max) {
		struct entry *victim = lru_back;

		cache_remove(victim);
		victim->hash_next = evicted;
		evicted = victim;
	}
	return evicted;
}

/* End of the cache_lock section. */

static void
record_scan(void)
{
	long rss = bench_rss_kib();

	pthread_mutex_lock(&series_lock);
	series[nseries++] = rss;
	pthread_mutex_unlock(&series_lock);
}

static void *
scanner_main(void *arg)
{
	unsigned long t = (unsigned long)(uintptr_t)arg;
	unsigned long s, i, my_hits = 0, my_misses = 0;
	unsigned sum = 0;

	for (s = 0; s < nscans; s++) {
		for (i = 0; i < nkeys; i++) {
			uint64_t key = (t * nkeys / nthreads + i) % nkeys;
			struct entry *e, *evicted, *fresh;
			size_t off;

			pthread_mutex_lock(&cache_lock);
			e = cache_find(key);
			if (e != NULL) {
				lru_unlink(e);
				lru_push_front(e);
				for (off = 0; off < e->size; off += 4096)
					sum += e->body[off];
				pthread_mutex_unlock(&cache_lock);
				my_hits++;
				continue;
			}
			pthread_mutex_unlock(&cache_lock);

			fresh = entry_build(key);
			my_misses++;
			pthread_mutex_lock(&cache_lock);
			if (cache_find(key) != NULL) {
				/* Another thread got there first. */
				evicted = fresh;
				fresh->hash_next = NULL;
			} else {
				evicted = cache_insert(fresh);
			}
			pthread_mutex_unlock(&cache_lock);
			while (evicted != NULL) {
				struct entry *next = evicted->hash_next;

				entry_free(evicted);
				evicted = next;
			}
		}
		record_scan();
	}
	pthread_mutex_lock(&cache_lock);
	hits += my_hits;
	misses += my_misses;
	pthread_mutex_unlock(&cache_lock);
	bench_keep((uintptr_t)sum);
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t *tids;
	unsigned long i;
	size_t n;
	double t0, elapsed;
	long peak = 0;

	nthreads = bench_arg(argc, argv, 1, 1, "thread count");
	nscans = bench_arg(argc, argv, 2, 10, "scans");
	nkeys = bench_arg(argc, argv, 3, 15000, "keys");
	cache_max = bench_arg(argc, argv, 4, 3000, "cache size");
	if (nthreads == 0 || nthreads > 256 || nscans == 0 || nkeys == 0 ||
	    cache_max == 0)
		bench_die("usage: entry_cache [threads [scans [keys [cache]]]]");
	bench_report_provider();

	for (n = 1; n < 2 * cache_max; n <<= 1)
		continue;
	table = calloc(n, sizeof(*table));
	series = calloc(nthreads * nscans, sizeof(*series));
	tids = calloc(nthreads, sizeof(*tids));
	if (table == NULL || series == NULL || tids == NULL)
		bench_die("calloc failed");
	table_mask = n - 1;

	t0 = bench_now();
	for (i = 0; i < nthreads; i++)
		bench_spawn(&tids[i], scanner_main, (void *)(uintptr_t)i);
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	elapsed = bench_now() - t0;

	printf("%lu thread(s) x %lu scan(s) of %lu keys, cache %zu: "
	    "%.3f s, hit rate %.3f\n", nthreads, nscans, nkeys, cache_max,
	    elapsed, (double)hits / (double)(hits + misses));
	printf("series rss_after_scan_KiB");
	for (n = 0; n < nseries; n++) {
		printf(" %ld", series[n]);
		if (series[n] > peak)
			peak = series[n];
	}
	printf("\n");
	bench_result("scans_per_s", (double)nseries / elapsed, "scans/s",
	    "higher");
	bench_result("rss_scan_max_KiB", (double)peak, "KiB", "lower");
	bench_result("rss_scan_last_KiB", (double)series[nseries - 1], "KiB",
	    "lower");

	while (lru_back != NULL) {
		struct entry *e = lru_back;

		cache_remove(e);
		entry_free(e);
	}
	bench_result("rss_empty_KiB", (double)bench_rss_kib(), "KiB", "lower");
	free(tids);
	free(series);
	free(table);
	return 0;
}
