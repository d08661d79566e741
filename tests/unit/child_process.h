// child_process.h — runs a piece of the allocator that is meant to abort
// in a forked child, with the child's stderr captured, so that a unit test
// can check the one line it writes and how it ends.
#ifndef ARENALLOC_TESTS_UNIT_CHILD_PROCESS_H
#define ARENALLOC_TESTS_UNIT_CHILD_PROCESS_H

#include <atf-c++.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

struct ChildResult {
    int status;
    std::string err;  // what the child wrote to stderr
};

// Runs body in a child whose stderr is a pipe; the child exits 0 when
// body returns.
inline ChildResult run_in_child(void (*body)()) {
    int fds[2];
    ATF_REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    ATF_REQUIRE(pid != -1);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        close(fds[1]);
        body();
        _exit(0);
    }
    close(fds[1]);
    ChildResult r{0, ""};
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
        r.err.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    ATF_REQUIRE(waitpid(pid, &r.status, 0) == pid);
    return r;
}

inline bool aborted(const ChildResult &r) {
    return WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT;
}

inline bool exited_ok(const ChildResult &r) {
    return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
}

#endif
