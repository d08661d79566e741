/*
 * floor_alloc -- the harness floor of malloc-test: an LD_PRELOAD library
 * whose malloc and free do as little as a malloc and free can do, so that
 * malloc-test run under it measures the loop around the allocator (the
 * calls through the PLT, the byte written, the loop itself) and nothing
 * else.  No allocator can do much better than this on malloc-test; how
 * close each one comes tells how much of its time is its own.
 *
 * It is a measuring instrument, not an allocator: it never gives memory
 * back, never reuses a block bigger than BLOCK_SIZE, and keeps no
 * statistics.  tools/bench/run uses it for the malloc-test steps only,
 * where every thread takes and returns one block over and over.
 *
 * How: every request of at most BLOCK_SIZE bytes (and alignment) gets a
 * block of BLOCK_SIZE bytes.  Each thread keeps the blocks it has freed on
 * a bounded stack in initial-exec TLS; malloc pops, free pushes: one
 * compare and one load or store each, no lock, no atomic.  An empty stack
 * takes a fresh block from a static area with one atomic add; a full one
 * drops the block.  Bigger requests are carved from a second static area,
 * behind a header that records their size, and never freed.  Both areas
 * are .bss: untouched pages cost nothing, and no system call is made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define BLOCK_SIZE	((size_t)4096)
#define BLOCK_AREA	((size_t)256 << 20)	/* 65,536 blocks */
#define BIG_AREA	((size_t)1 << 30)
#define STACK_SLOTS	64
/* A big request's header: its usable size, then padding to 64 bytes. */
#define BIG_HEADER	((size_t)64)

#define EXPORT __attribute__((visibility("default")))
#define TLS __attribute__((tls_model("initial-exec")))

static char block_area[BLOCK_AREA] __attribute__((aligned(4096)));
static char big_area[BIG_AREA] __attribute__((aligned(4096)));
static size_t block_used, big_used;	/* bytes handed out; atomic */

static __thread void *free_stack[STACK_SLOTS] TLS;
static __thread unsigned free_count TLS;

static int
is_block(const void *p)
{
	return (uintptr_t)p - (uintptr_t)block_area < BLOCK_AREA;
}

static void *
fresh_block(void)
{
	size_t at = __atomic_fetch_add(&block_used, BLOCK_SIZE, __ATOMIC_RELAXED);

	if (at >= BLOCK_AREA) {
		errno = ENOMEM;
		return NULL;
	}
	return block_area + at;
}

/* A big block aligned to ALIGN (a power of two, at least BIG_HEADER). */
static void *
big_block(size_t size, size_t align)
{
	size_t need, at, user;

	if (size > BIG_AREA || align > BIG_AREA) {
		errno = ENOMEM;
		return NULL;
	}
	need = (BIG_HEADER + size + align - 1 + 63) & ~(size_t)63;
	at = __atomic_fetch_add(&big_used, need, __ATOMIC_RELAXED);
	if (at > BIG_AREA || need > BIG_AREA - at) {
		errno = ENOMEM;
		return NULL;
	}
	user = ((uintptr_t)big_area + at + BIG_HEADER + align - 1) & ~(uintptr_t)(align - 1);
	((size_t *)user)[-1] = size;
	return (void *)user;
}

static void *
floor_alloc(size_t size, size_t align)
{
	if (size <= BLOCK_SIZE && align <= BLOCK_SIZE) {
		if (free_count > 0)
			return free_stack[--free_count];
		return fresh_block();
	}
	return big_block(size, align < BIG_HEADER ? BIG_HEADER : align);
}

EXPORT void *
malloc(size_t size)
{
	/* The path malloc-test takes, spelled out so nothing else is in it. */
	if (__builtin_expect(size <= BLOCK_SIZE && free_count > 0, 1))
		return free_stack[--free_count];
	return floor_alloc(size, 1);
}

EXPORT void
free(void *p)
{
	if (__builtin_expect(is_block(p) && free_count < STACK_SLOTS, 1))
		free_stack[free_count++] = p;
}

EXPORT size_t
malloc_usable_size(void *p)
{
	if (p == NULL)
		return 0;
	return is_block(p) ? BLOCK_SIZE : ((size_t *)p)[-1];
}

EXPORT void *
calloc(size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	p = floor_alloc(n * size, 1);
	/* Reused blocks are dirty; fresh memory of either area is zero. */
	if (p != NULL && is_block(p))
		memset(p, 0, BLOCK_SIZE);
	return p;
}

EXPORT void *
realloc(void *old, size_t size)
{
	size_t have;
	void *p;

	if (old == NULL)
		return malloc(size);
	have = malloc_usable_size(old);
	if (size <= have && (is_block(old) || size > BLOCK_SIZE))
		return old;
	p = floor_alloc(size, 1);
	if (p == NULL)
		return NULL;
	memcpy(p, old, have < size ? have : size);
	free(old);
	return p;
}

static int
is_power_of_two(size_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

EXPORT int
posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (!is_power_of_two(align) || align % sizeof(void *) != 0)
		return EINVAL;
	p = floor_alloc(size, align);
	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *
aligned_alloc(size_t align, size_t size)
{
	if (!is_power_of_two(align)) {
		errno = EINVAL;
		return NULL;
	}
	return floor_alloc(size, align);
}

EXPORT void *
memalign(size_t align, size_t size)
{
	return aligned_alloc(align, size);
}

EXPORT void *
valloc(size_t size)
{
	return floor_alloc(size, 4096);
}

EXPORT void *
pvalloc(size_t size)
{
	return floor_alloc((size + 4095) & ~(size_t)4095, 4096);
}
