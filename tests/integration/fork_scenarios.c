/* fork_scenarios — the two ways a fork can meet the allocator's locks that
 * a C library's own malloc survives (issue: "Fork from anywhere").
 *
 *   fork_scenarios signal N
 *       One thread that mallocs, frees, reallocs and forks in a loop, while
 *       three sender processes send it SIGUSR1 without pause; the handler
 *       forks too (POSIX lists fork as async-signal-safe), so a fork often
 *       starts while the interrupted code is inside malloc, free or fork.
 *       Runs until N forks in all, at least N/4 of them from the handler.
 *
 *   fork_scenarios stdio N
 *       Threads that read a file with getline() (which holds the stream's
 *       lock while it reallocs its line) and threads that call fflush(NULL)
 *       (which holds the C library's list of streams while it waits for
 *       each stream's lock), while the main thread forks N times.
 *
 * Every child allocates and frees before it exits (the handler's children
 * only exit: they may call async-signal-safe functions only).  Exits 0 and
 * prints the counts when done; a deadlock never ends, which the caller's
 * time limit turns into a failure.  Plain C over libc: built linked with
 * libarenalloc and also alone, to run with it preloaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
    fprintf(stderr, "fork_scenarios: %s: %s\n", what, strerror(errno));
    exit(2);
}

static unsigned next_random(unsigned *state) {
    *state = *state * 1103515245u + 12345u;
    return *state >> 8;
}

/* Waits for a child that must exit 0, retrying when a signal interrupts. */
static void reap(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fork_scenarios: child %d ended with status 0x%x\n", (int)pid, status);
        exit(1);
    }
}

/* What a child of an ordinary fork does: its heap must work. */
static void child_uses_heap(void) {
    char *blocks[16];
    for (int i = 0; i < 16; i++) {
        blocks[i] = malloc((size_t)(i + 1) * 100);
        if (blocks[i] == NULL)
            _exit(3);
        memset(blocks[i], i, (size_t)(i + 1) * 100);
    }
    for (int i = 0; i < 16; i++)
        free(blocks[i]);
    _exit(0);
}

/* An ordinary fork: the child uses its heap and exits, the parent reaps it. */
static void fork_and_reap(void) {
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0)
        child_uses_heap();
    reap(pid);
}

/* ---- signal ---------------------------------------------------------- */

static volatile sig_atomic_t handler_forks;
static volatile sig_atomic_t handler_failures;

static void on_signal(int sig) {
    (void)sig;
    int saved = errno;
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    if (pid < 0) {
        handler_failures++;
    } else {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        handler_forks++;
    }
    errno = saved;
}

static int run_signal(long n) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        die("sigaction");
    pid_t self = getpid();
    pid_t senders[3];
    for (int i = 0; i < 3; i++) {
        senders[i] = fork();
        if (senders[i] < 0)
            die("fork (sender)");
        if (senders[i] == 0) {
            /* Signals come faster than the handler's forks end: most
             * arrive while it runs or while the loop is in the allocator. */
            unsigned seed = (unsigned)getpid();
            while (getppid() == self) {
                kill(self, SIGUSR1);
                usleep(200 + next_random(&seed) % 800);
            }
            _exit(0);
        }
    }
    unsigned seed = 12345;
    char *slots[64] = {0};
    long loop_forks = 0;
    time_t deadline = time(NULL) + 240;  // below the test's own limit
    while (loop_forks + handler_forks < n || handler_forks < n / 4) {
        for (int i = 0; i < 200; i++) {
            unsigned r = next_random(&seed);
            unsigned s = r % 64;
            size_t size = 1 + (r >> 6) % 5000;
            if (slots[s] == NULL) {
                slots[s] = malloc(size);
                if (slots[s] == NULL)
                    die("malloc");
                slots[s][0] = 1;
            } else if (r & 1) {
                char *q = realloc(slots[s], size);
                if (q == NULL)
                    die("realloc");
                slots[s] = q;
            } else {
                free(slots[s]);
                slots[s] = NULL;
            }
        }
        fork_and_reap();
        loop_forks++;
        if (time(NULL) > deadline) {
            fprintf(stderr, "fork_scenarios: too slow: %ld forks, %ld from the handler\n",
                    loop_forks + handler_forks, (long)handler_forks);
            return 1;
        }
    }
    for (int i = 0; i < 3; i++) {
        kill(senders[i], SIGKILL);
        while (waitpid(senders[i], NULL, 0) < 0 && errno == EINTR) {
        }
    }
    for (int s = 0; s < 64; s++)
        free(slots[s]);
    printf("signal: %ld forks, %ld from the signal handler\n", loop_forks + handler_forks,
           (long)handler_forks);
    return handler_failures == 0 ? 0 : 1;
}

/* ---- stdio ----------------------------------------------------------- */

static atomic_int stop_threads;
static char input_path[64];

static void *reader(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    FILE *f = fopen(input_path, "r");
    if (f == NULL)
        die("fopen");
    while (!atomic_load(&stop_threads)) {
        /* A fresh buffer for each line: getline mallocs and reallocs it
         * while it holds the stream's lock. */
        char *line = NULL;
        size_t cap = 0;
        if (getline(&line, &cap, f) < 0)
            rewind(f);
        free(line);
        void *extra = malloc(1 + next_random(&seed) % 3000);
        free(extra);
        // The stream's lock is not fair either: a reader that takes it
        // back at once starves the flushers, and the fork behind them.
        if ((next_random(&seed) & 3) == 0)
            usleep(1);
    }
    fclose(f);
    return NULL;
}

static void *flusher(void *arg) {
    (void)arg;
    while (!atomic_load(&stop_threads)) {
        /* Holds the list of streams, then waits for each stream's lock.
         * (A pause between calls: the list lock is not fair, and a flusher
         * that never lets go starves the forking thread.) */
        fflush(NULL);
        usleep(20);
    }
    return NULL;
}

static int run_stdio(long n) {
    strcpy(input_path, "/tmp/fork_scenarios.XXXXXX");
    int fd = mkstemp(input_path);
    if (fd < 0)
        die("mkstemp");
    FILE *out = fdopen(fd, "w");
    if (out == NULL)
        die("fdopen");
    unsigned seed = 99;
    for (int i = 0; i < 400; i++) {
        int len = 1 + (int)(next_random(&seed) % 6000);
        for (int j = 0; j < len; j++)
            fputc('a' + j % 26, out);
        fputc('\n', out);
    }
    fclose(out);

    enum { kReaders = 3, kFlushers = 2 };
    pthread_t threads[kReaders + kFlushers];
    for (int i = 0; i < kReaders; i++)
        if (pthread_create(&threads[i], NULL, reader, (void *)(uintptr_t)(i + 1)) != 0)
            die("pthread_create");
    for (int i = 0; i < kFlushers; i++)
        if (pthread_create(&threads[kReaders + i], NULL, flusher, NULL) != 0)
            die("pthread_create");
    for (long i = 0; i < n; i++)
        fork_and_reap();
    atomic_store(&stop_threads, 1);
    for (int i = 0; i < kReaders + kFlushers; i++)
        pthread_join(threads[i], NULL);
    unlink(input_path);
    printf("stdio: %ld forks beside %d getline and %d fflush(NULL) threads\n", n, kReaders,
           kFlushers);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fork_scenarios signal|stdio N\n");
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    /* Which malloc this is: the caller requires arenalloc, so that a
     * preload that did not take cannot pass for a result. */
    printf("malloc: %s\n", dlsym(RTLD_DEFAULT, "mallctl") != NULL ? "arenalloc" : "other");
    fflush(stdout);
    if (strcmp(argv[1], "signal") == 0)
        return run_signal(n);
    if (strcmp(argv[1], "stdio") == 0)
        return run_stdio(n);
    fprintf(stderr, "fork_scenarios: unknown scenario %s\n", argv[1]);
    return 2;
}
