// arenalloc-stat — prints the heap report of a running process or of a
// core file, from outside, through the heap walker:
//
//   arenalloc-stat [--json] [--verify] [--find ADDRESS]... [--lib PATH] PID|CORE
//
// A PID is stopped (every thread, with ptrace) while it is read, then
// released.  A core file is read with the files it names (NT_FILE): the
// library's symbol table gives the descriptor's address even when the
// library is stripped.  The target may be of another architecture (32- or
// 64-bit, either byte order).  Exit status: 0, 1 when --verify found
// problems, 2 when the target could not be read.
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "arenalloc_walker.h"
#include "target.h"

namespace {

void usage(FILE *f) {
    fprintf(f,
            "usage: arenalloc-stat [--json] [--verify] [--find ADDRESS]... [--lib PATH] PID|CORE\n"
            "  PID        a running process: stopped while it is read\n"
            "  CORE       an ELF core file (gcore, or a crash dump)\n"
            "  --find A   what address A is: its block, size class and state\n"
            "  --verify   check the heap's invariants; ends with \"heap OK\" or what is wrong\n"
            "  --json     JSON instead of text\n"
            "  --lib PATH read the descriptor's symbol from PATH (the library the target\n"
            "             mapped, when it has moved since, or when the core names no\n"
            "             mapped files, as qemu-user's do)\n");
}

int read_target(void *ctx, uint64_t addr, void *buf, size_t len) {
    return static_cast<aastat::Target *>(ctx)->read(addr, buf, len);
}

bool all_digits(const char *s) {
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++)
        if (!isdigit(static_cast<unsigned char>(*s)))
            return false;
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    bool json = false, verify = false;
    std::vector<uint64_t> finds;
    std::string lib, what;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--json") {
            json = true;
        } else if (a == "--verify") {
            verify = true;
        } else if ((a == "--find" || a == "--lib") && i + 1 < argc) {
            if (a == "--lib") {
                lib = argv[++i];
                continue;
            }
            char *end;
            errno = 0;
            uint64_t v = strtoull(argv[++i], &end, 0);
            if (*end != '\0' || errno != 0 || argv[i][0] == '\0') {
                fprintf(stderr, "arenalloc-stat: --find: not an address: %s\n", argv[i]);
                return 2;
            }
            finds.push_back(v);
        } else if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else if (a.size() > 1 && a[0] == '-') {
            fprintf(stderr, "arenalloc-stat: unknown option %s\n", a.c_str());
            usage(stderr);
            return 2;
        } else if (what.empty()) {
            what = a;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (what.empty()) {
        usage(stderr);
        return 2;
    }
    std::string err;
    std::unique_ptr<aastat::Target> target;
    if (all_digits(what.c_str()) && access(what.c_str(), F_OK) != 0)
        target.reset(aastat::open_process(atoi(what.c_str()), &err));
    else
        target.reset(aastat::open_core(what, &err));
    if (!target) {
        fprintf(stderr, "arenalloc-stat: %s\n", err.c_str());
        return 2;
    }
    std::string found_in;
    uint64_t desc = aastat::find_descriptor(*target, lib, &err, &found_in);
    if (desc == 0) {
        fprintf(stderr, "arenalloc-stat: %s: %s\n", target->describe().c_str(), err.c_str());
        return 2;
    }
    char why[512];
    aa_walker *w = aa_walker_open(read_target, target.get(), desc, why, sizeof(why));
    if (w == nullptr) {
        fprintf(stderr, "arenalloc-stat: %s: %s\n", target->describe().c_str(), why);
        return 2;
    }
    int flags = json ? AA_REPORT_JSON : 0;
    int status = 0;
    auto emit = [&](char *s) {
        if (s == nullptr) {
            fprintf(stderr, "arenalloc-stat: %s: %s\n", target->describe().c_str(),
                    aa_walker_error(w));
            status = 2;
            return;
        }
        fputs(s, stdout);
        aa_walker_free_string(s);
    };
    if (!json && (verify || !finds.empty()))
        printf("arenalloc-stat: %s, arenalloc in %s\n", target->describe().c_str(),
               found_in.c_str());
    for (uint64_t a : finds)
        emit(aa_walker_find_report(w, a, flags));
    if (verify) {
        char *r = aa_walker_verify_report(w, flags);
        bool ok = r != nullptr && (strstr(r, json ? "\"ok\": true" : "heap OK\n") != nullptr);
        emit(r);
        if (!ok && status == 0)
            status = 1;
    }
    if (finds.empty() && !verify) {
        if (!json)
            printf("arenalloc-stat: %s, arenalloc in %s\n", target->describe().c_str(),
                   found_in.c_str());
        emit(aa_walker_report(w, flags));
    }
    aa_walker_close(w);
    target.reset();  // releases a stopped process
    fflush(stdout);
    return status;
}
