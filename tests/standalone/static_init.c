/*
 * static_init.c — allocation before main and after it, in a static
 * program (tools/musl/build-and-test links it against musl's libc.a).
 *
 * A constructor runs before main, before anything in the program has
 * called malloc, so arenalloc must initialise itself there from nothing:
 * no dynamic loader, no LD_PRELOAD, no constructor of its own.  main then
 * checks that those early blocks are intact and are arenalloc's, and an
 * atexit handler allocates once more while the process is exiting.  The
 * program prints "static_init: ok" lines and exits 0, or says what failed
 * and exits 1.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arenalloc.h"

enum { NEARLY = 3 };

static void *early[NEARLY];
static const size_t early_size[NEARLY] = { 100, 40000, 3 << 20 };
static int early_ok = 1;
static int failures;

static void
fail(const char *what)
{
    printf("static_init: FAILED: %s\n", what);
    failures++;
}

/* Runs before main: the first allocations of the process. */
__attribute__((constructor(101))) static void
allocate_before_main(void)
{
    struct arenalloc_summary s;
    int i;

    /* Nothing has initialised the allocator yet: it must do so here. */
    early[0] = malloc(early_size[0]);
    early[1] = calloc(1, early_size[1]);
    if (posix_memalign(&early[2], 4096, early_size[2]) != 0)
        early[2] = NULL;
    for (i = 0; i < NEARLY; i++) {
        if (early[i] == NULL) {
            early_ok = 0;
            continue;
        }
        memset(early[i], 0x40 + i, early_size[i]);
    }
    if (arenalloc_get_summary(&s) != 0 ||
        s.nmalloc_small + s.nmalloc_large + s.nmalloc_huge < NEARLY)
        early_ok = 0;
}

/* Runs inside exit(), after main has returned. */
static void
allocate_at_exit(void)
{
    char *p = malloc(64);
    static const char ok[] = "static_init: ok: allocation at exit\n";

    if (p == NULL) {
        static const char bad[] = "static_init: FAILED: malloc in an atexit handler\n";
        write(STDOUT_FILENO, bad, sizeof bad - 1);
        _exit(1);
    }
    memcpy(p, ok, sizeof ok);
    fflush(stdout);
    write(STDOUT_FILENO, p, sizeof ok - 1);
    free(p);
}

int
main(void)
{
    struct arenalloc_summary s;
    size_t i, j;

    if (!early_ok)
        fail("allocation in a constructor before main");
    for (i = 0; i < NEARLY; i++) {
        const unsigned char *b = early[i];
        if (b == NULL)
            continue;
        for (j = 0; j < early_size[i]; j++)
            if (b[j] != 0x40 + i) {
                fail("a block allocated before main was overwritten");
                break;
            }
        if (malloc_usable_size(early[i]) < early_size[i])
            fail("malloc_usable_size of a block allocated before main");
        free(early[i]);
    }
    if (early[2] != NULL && ((uintptr_t)early[2] & 4095) != 0)
        fail("posix_memalign before main: not aligned");
    if (arenalloc_get_summary(&s) != 0)
        fail("arenalloc_get_summary");
    else if (s.nfree < NEARLY)
        fail("the frees of the early blocks were not counted by arenalloc");
    if (atexit(allocate_at_exit) != 0)
        fail("atexit");
    if (failures == 0)
        printf("static_init: ok: %d blocks allocated before main, checked and freed\n", NEARLY);
    return failures == 0 ? 0 : 1;
}
