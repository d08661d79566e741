/* fork_latency.c -- how long fork() takes in the parent while THREADS
 * threads are busy in malloc and free (issue: "Fork from anywhere").
 *
 *     fork_latency THREADS FORKS
 *
 * The busy threads replace random blocks of 16 B-64 KiB in a private set of
 * 256 slots without pause.  The main thread forks FORKS times; each child
 * exits at once and the parent reaps it before the next fork.  The figure is
 * the time of the fork() call alone in the parent (the fork handlers, the
 * kernel's copy of the address space), as median and 90th percentile in
 * microseconds.  The allocator is chosen with LD_PRELOAD.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;

static void *busy(void *arg) {
    unsigned seed = (unsigned)(size_t)arg * 2654435761u;
    void *slots[256] = {0};
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        seed = seed * 1103515245u + 12345u;
        unsigned s = (seed >> 8) & 255;
        free(slots[s]);
        size_t size = (seed >> 16) % 1000 < 990 ? 16 + (seed >> 20) % 1024 : 65536;
        slots[s] = malloc(size);
        if (slots[s] != NULL)
            memset(slots[s], 1, 16);
    }
    for (int i = 0; i < 256; i++)
        free(slots[i]);
    return NULL;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fork_latency THREADS FORKS\n");
        return 2;
    }
    int nthreads = atoi(argv[1]);
    int nforks = atoi(argv[2]);
    pthread_t *threads = calloc((size_t)nthreads, sizeof *threads);
    double *took = calloc((size_t)nforks, sizeof *took);
    if (threads == NULL || took == NULL)
        return 1;
    for (int i = 0; i < nthreads; i++)
        pthread_create(&threads[i], NULL, busy, (void *)(size_t)(i + 1));
    usleep(100000);  // the threads' heaps grow to their working size
    for (int i = 0; i < nforks; i++) {
        double t0 = now_us();
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        took[i] = now_us() - t0;
        if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
            perror("fork_latency: fork");
            return 1;
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    qsort(took, (size_t)nforks, sizeof *took, by_value);
    printf("threads=%d forks=%d median_us=%.1f p90_us=%.1f\n", nthreads, nforks,
           took[nforks / 2], took[nforks * 9 / 10]);
    return 0;
}
