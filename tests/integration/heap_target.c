/*
 * heap_target — the program arenalloc-stat's tests read.  Run with
 * libarenalloc preloaded, it builds a known heap in two arenas:
 *   - small blocks allocated and live (one also named by an interior
 *     pointer), in arena 0 and arena 1;
 *   - small blocks freed by another thread that then exited, so they are
 *     back in their runs' bitmaps (free);
 *   - small blocks freed by this thread, held in its thread cache;
 *   - a live large block and a freed one; a live huge block and a freed
 *     one (its mapping kept in the huge cache);
 * then prints its own statistics (malloc_stats_print, its own JSON layout:
 * opts "A") and one line
 * per known pointer:
 *   ptr STATE ADDRESS START SIZE
 * (STATE as arenalloc-stat words it, START the block's start, SIZE its
 * usable size), then "READY", and waits until its standard input closes.
 * Nothing is allocated from the statistics on: the heap stays as printed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

typedef void (*stats_print_fn)(void (*)(void *, const char *), void *, const char *);
typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef size_t (*usable_fn)(void *);

static char g_stats[1 << 20];
static size_t g_stats_len;
static char g_lines[1 << 16];
static size_t g_lines_len;
static usable_fn g_usable;

static void collect(void *opaque, const char *s) {
    size_t n = strlen(s);
    (void)opaque;
    if (g_stats_len + n < sizeof(g_stats)) {
        memcpy(g_stats + g_stats_len, s, n);
        g_stats_len += n;
    }
}

static void note(const char *state, void *addr, void *start, size_t size) {
    g_lines_len += (size_t)snprintf(g_lines + g_lines_len, sizeof(g_lines) - g_lines_len,
                                    "ptr %s %#lx %#lx %zu\n", state, (unsigned long)addr,
                                    (unsigned long)start, size);
}

static void write_all(const char *p, size_t n) {
    while (n != 0) {
        ssize_t w = write(1, p, n);
        if (w <= 0)
            exit(3);
        p += w;
        n -= (size_t)w;
    }
}

enum { kFreed = 20 };
static void *g_to_free[kFreed];
static void *g_arena1[8];
static mallctl_fn g_mallctl;

/* Frees blocks another thread allocated, then exits: its cache is flushed
 * back to the arena, so the blocks end up free in their runs. */
static void *free_and_exit(void *arg) {
    (void)arg;
    for (int i = 0; i < kFreed; i++)
        free(g_to_free[i]);
    return NULL;
}

/* Moves to arena 1 and leaves live blocks there. */
static void *fill_arena1(void *arg) {
    unsigned one = 1;
    (void)arg;
    if (g_mallctl("thread.arena", NULL, NULL, &one, sizeof(one)) != 0)
        return (void *)1;
    for (int i = 0; i < 8; i++)
        g_arena1[i] = malloc(200 + i * 300);
    g_arena1[7] = realloc(g_arena1[7], 40000); /* a large block in arena 1 */
    return NULL;
}

int main(void) {
#if defined(__linux__) && defined(PR_SET_PTRACER)
    /* Under Yama's ptrace_scope 1, let a non-parent (arenalloc-stat, gcore)
     * attach. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    stats_print_fn stats_print = (stats_print_fn)dlsym(RTLD_DEFAULT, "malloc_stats_print");
    g_mallctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
    g_usable = (usable_fn)dlsym(RTLD_DEFAULT, "malloc_usable_size");
    if (stats_print == NULL || g_mallctl == NULL || g_usable == NULL) {
        fprintf(stderr, "heap_target: arenalloc is not loaded (LD_PRELOAD it)\n");
        return 2;
    }
    /* Blocks kept live, of several small classes. */
    static void *live[64];
    for (int i = 0; i < 64; i++) {
        live[i] = malloc(16 + (size_t)i * 37);
        memset(live[i], 0xab, 16);
    }
    /* Blocks freed by another thread (class 160). */
    for (int i = 0; i < kFreed; i++)
        g_to_free[i] = malloc(150);
    void *keep160 = malloc(150); /* keeps the run alive */
    pthread_t t;
    if (pthread_create(&t, NULL, free_and_exit, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 2;
    if (pthread_create(&t, NULL, fill_arena1, NULL) != 0)
        return 2;
    void *rc;
    if (pthread_join(t, &rc) != 0 || rc != NULL)
        return 2;
    /* Blocks freed by this thread: its cache holds them (class 96). */
    void *cached[6];
    for (int i = 0; i < 6; i++)
        cached[i] = malloc(90);
    for (int i = 0; i < 3; i++)
        free(cached[i]);
    void *large = malloc(100000);
    void *large_freed = malloc(50000);
    free(large_freed);
    void *huge = malloc(5u << 20);
    memset(huge, 1, 4096);
    void *huge_freed = malloc(3u << 20);
    memset(huge_freed, 1, 4096);
    free(huge_freed);

    /* The statistics, as the program itself sees them. */
    stats_print(collect, NULL, "A"); /* arenalloc's own JSON layout */

    for (int i = 0; i < 64; i += 9)
        note("allocated", live[i], live[i], g_usable(live[i]));
    note("allocated", (char *)live[5] + 5, live[5], g_usable(live[5]));
    note("allocated", keep160, keep160, g_usable(keep160));
    for (int i = 0; i < kFreed; i += 7)
        note("free", g_to_free[i], g_to_free[i], g_usable(keep160));
    for (int i = 0; i < 3; i++)
        note("in a thread cache", cached[i], cached[i], g_usable(cached[3]));
    for (int i = 3; i < 6; i++)
        note("allocated", cached[i], cached[i], g_usable(cached[i]));
    for (int i = 0; i < 8; i++)
        note("allocated", g_arena1[i], g_arena1[i], g_usable(g_arena1[i]));
    note("allocated", large, large, g_usable(large));
    note("allocated", (char *)large + 4097, large, g_usable(large));
    note("huge", huge, huge, g_usable(huge));
    note("huge", (char *)huge + 12345, huge, g_usable(huge));

    write_all("stats ", 6);
    write_all(g_stats, g_stats_len);
    write_all("\n", 1);
    write_all(g_lines, g_lines_len);
    write_all("READY\n", 6);
    char c;
    while (read(0, &c, 1) > 0) {
    }
    return 0;
}
