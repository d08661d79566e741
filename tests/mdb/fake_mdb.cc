// fake_mdb — a host for contrib/mdb/arenalloc_mdb.cc on a system without
// mdb.  It implements the part of the mdb module API the module uses (the
// stand-in tests/mdb/stub/sys/mdb_modapi.h) over this process's own
// memory, builds a known heap, and runs the module's dcmds and walker on
// it, as mdb would on a live process.
//
// The heap read is the prefixed copy of arenalloc (arena_malloc...) beside
// glibc's malloc, which serves the walker's own allocations: the heap
// being read does not change while a dcmd runs.  So the descriptor the
// symbol lookup finds is arena_arenalloc_debug_descriptor.
//
// In the current directory it writes:
//   out         "stats JSON" (arena_malloc_stats_print) and "ptr STATE ADDRESS
//               START SIZE" lines, as tests/integration/heap_target prints
//   stats.txt   ::arenalloc_stats -j        find.txt   ADDR::arenalloc_find -j, per ptr
//   verify.txt  ::arenalloc_verify          arenas.txt ::arenalloc_arenas
//   chunks.txt  ::walk arenalloc_chunk: "chunk ADDRESS arena N pages N"
//   text.txt    ::arenalloc_stats, ADDR::arenalloc_find for one ptr of each state
//   misuse.txt  "DCMD RESULT" for wrong calls (DCMD_USAGE is 2)
// and exits 0 when every dcmd returned DCMD_OK where it should.
#define _GNU_SOURCE 1
#include <sys/mdb_modapi.h>
#include <sys/uio.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include "arenalloc.h"
#include "arenalloc_walker.h"
#include "debug_descriptor.h"

extern "C" const struct arenalloc_debug_descriptor ARENALLOC_NAME(arenalloc_debug_descriptor);
extern "C" const mdb_modinfo_t *_mdb_init(void);

// --- the module API, over this process ------------------------------------------

static FILE *g_out = stdout;

extern "C" ssize_t mdb_vread(void *buf, size_t len, uintptr_t addr) {
    // process_vm_readv on ourselves: an unmapped address fails (EFAULT)
    // instead of crashing, as mdb_vread fails on a hole in the target.
    struct iovec local = {buf, len}, remote = {reinterpret_cast<void *>(addr), len};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
}

extern "C" int mdb_lookup_by_name(const char *name, GElf_Sym *sym) {
    if (strcmp(name, "arenalloc_debug_descriptor") != 0)
        return -1;
    memset(sym, 0, sizeof(*sym));
    sym->st_value = reinterpret_cast<uintptr_t>(&ARENALLOC_NAME(arenalloc_debug_descriptor));
    sym->st_size = sizeof(struct arenalloc_debug_descriptor);
    return 0;
}

// Options as mdb takes them: "-jb" or "-j" "-b"; only MDB_OPT_SETBITS
// (char, MDB_OPT_SETBITS, uint_t bits, uint_t *target).  Returns the index
// of the first argument that is not an option.
extern "C" int mdb_getopts(int argc, const mdb_arg_t *argv, ...) {
    struct Opt {
        char c;
        uint_t bits;
        uint_t *target;
    } opts[16];
    int nopts = 0;
    va_list ap;
    va_start(ap, argv);
    for (int c; nopts < 16 && (c = va_arg(ap, int)) != 0;) {
        uint_t type = va_arg(ap, uint_t);
        if (type != MDB_OPT_SETBITS) {
            fprintf(stderr, "fake_mdb: mdb_getopts: option type %u not implemented\n", type);
            va_end(ap);
            return -1;
        }
        opts[nopts].c = static_cast<char>(c);
        opts[nopts].bits = va_arg(ap, uint_t);
        opts[nopts].target = va_arg(ap, uint_t *);
        nopts++;
    }
    va_end(ap);
    int i = 0;
    for (; i < argc; i++) {
        if (argv[i].a_type != MDB_TYPE_STRING || argv[i].a_un.a_str[0] != '-')
            break;
        for (const char *p = argv[i].a_un.a_str + 1; *p != '\0'; p++) {
            int k = 0;
            while (k < nopts && opts[k].c != *p)
                k++;
            if (k == nopts)
                return i;  // unknown option: mdb stops here too
            *opts[k].target |= opts[k].bits;
        }
    }
    return i;
}

extern "C" void mdb_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(g_out, fmt, ap);
    va_end(ap);
}

extern "C" void mdb_warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("mdb: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

// --- running dcmds ------------------------------------------------------------------

static const mdb_modinfo_t *g_mod;
static int g_failures;

static const mdb_dcmd_t *dcmd(const char *name) {
    for (const mdb_dcmd_t *d = g_mod->mi_dcmds; d->dc_name != nullptr; d++)
        if (strcmp(d->dc_name, name) == 0)
            return d;
    fprintf(stderr, "fake_mdb: the module has no dcmd %s\n", name);
    _exit(2);
}

// [addr]::name [opt], output to f; returns the dcmd's result.
static int call(FILE *f, const char *name, uintptr_t addr, bool addrspec, const char *opt) {
    mdb_arg_t arg;
    arg.a_type = MDB_TYPE_STRING;
    arg.a_un.a_str = opt;
    g_out = f;
    int rc = dcmd(name)->dc_funcp(addr, addrspec ? DCMD_ADDRSPEC : 0, opt ? 1 : 0, &arg);
    g_out = stdout;
    return rc;
}

static void expect_ok(FILE *f, const char *name, uintptr_t addr, bool addrspec, const char *opt) {
    int rc = call(f, name, addr, addrspec, opt);
    if (rc != DCMD_OK) {
        fprintf(stderr, "fake_mdb: %s returned %d\n", name, rc);
        g_failures++;
    }
}

static int print_chunk(uintptr_t addr, const void *data, void *cbdata) {
    const aa_chunk_info *c = static_cast<const aa_chunk_info *>(data);
    fprintf(static_cast<FILE *>(cbdata), "chunk 0x%lx arena %llu pages %llu\n",
            static_cast<unsigned long>(addr), static_cast<unsigned long long>(c->arena_index),
            static_cast<unsigned long long>(c->npages));
    return WALK_NEXT;
}

// ::walk arenalloc_chunk, as mdb drives a walker.
static int walk(const char *name, mdb_walk_cb_t cb, void *cbdata) {
    const mdb_walker_t *w = g_mod->mi_walkers;
    while (w->walk_name != nullptr && strcmp(w->walk_name, name) != 0)
        w++;
    if (w->walk_name == nullptr)
        return -1;
    mdb_walk_state_t ws;
    memset(&ws, 0, sizeof(ws));
    ws.walk_callback = cb;
    ws.walk_cbdata = cbdata;
    ws.walk_arg = w->walk_init_arg;
    if (w->walk_init(&ws) != WALK_NEXT)
        return -1;
    int rc;
    while ((rc = w->walk_step(&ws)) == WALK_NEXT) {
    }
    if (w->walk_fini != nullptr)
        w->walk_fini(&ws);
    return rc == WALK_DONE ? 0 : -1;
}

// --- the heap ----------------------------------------------------------------------

static std::string g_lines;

static void note(const char *state, void *addr, void *start, size_t size) {
    char line[160];
    snprintf(line, sizeof(line), "ptr %s %#lx %#lx %zu\n", state, (unsigned long)addr,
             (unsigned long)start, size);
    g_lines += line;
}

static void collect(void *opaque, const char *s) { static_cast<std::string *>(opaque)->append(s); }

enum { kFreed = 12 };
static void *g_to_free[kFreed];
static void *g_arena1[4];

static void *free_and_exit(void *) {
    for (void *p : g_to_free)
        ARENALLOC_NAME(free)(p);
    return nullptr;
}

static void *fill_arena1(void *) {
    unsigned one = 1;
    if (ARENALLOC_NAME(mallctl)("thread.arena", nullptr, nullptr, &one, sizeof(one)) != 0)
        return reinterpret_cast<void *>(1);
    for (int i = 0; i < 4; i++)
        g_arena1[i] = ARENALLOC_NAME(malloc)(300 + i * 500);
    return nullptr;
}

int main() {
    g_mod = _mdb_init();
    if (g_mod == nullptr || g_mod->mi_dvers != MDB_API_VERSION) {
        fprintf(stderr, "fake_mdb: _mdb_init gave no module of this API version\n");
        return 2;
    }
    // A known heap: live blocks, blocks freed by an exited thread (free),
    // blocks freed by this thread (in its cache), arena 1, large, huge.
    static void *live[24];
    for (int i = 0; i < 24; i++)
        live[i] = ARENALLOC_NAME(malloc)(24 + static_cast<size_t>(i) * 53);
    for (int i = 0; i < kFreed; i++)
        g_to_free[i] = ARENALLOC_NAME(malloc)(150);
    void *keep = ARENALLOC_NAME(malloc)(150);
    pthread_t t;
    void *rc = nullptr;
    if (pthread_create(&t, nullptr, free_and_exit, nullptr) != 0 || pthread_join(t, nullptr) != 0 ||
        pthread_create(&t, nullptr, fill_arena1, nullptr) != 0 || pthread_join(t, &rc) != 0 ||
        rc != nullptr)
        return 2;
    void *cached[4];
    for (void *&p : cached)
        p = ARENALLOC_NAME(malloc)(90);
    ARENALLOC_NAME(free)(cached[0]);
    ARENALLOC_NAME(free)(cached[1]);
    void *large = ARENALLOC_NAME(malloc)(70000);
    void *huge = ARENALLOC_NAME(malloc)(3u << 20);
    // A freed huge block: its mapping stays in the huge cache.
    void *huge_freed = ARENALLOC_NAME(malloc)(5u << 20);
    memset(huge_freed, 1, 4096);
    ARENALLOC_NAME(free)(huge_freed);

    std::string stats;
    ARENALLOC_NAME(malloc_stats_print)(collect, &stats, "A");  // arenalloc's own layout
    auto usable = [](void *p) { return ARENALLOC_NAME(malloc_usable_size)(p); };
    for (int i = 0; i < 24; i += 5)
        note("allocated", live[i], live[i], usable(live[i]));
    note("allocated", static_cast<char *>(live[3]) + 7, live[3], usable(live[3]));
    note("allocated", keep, keep, usable(keep));
    for (int i = 0; i < kFreed; i += 5)
        note("free", g_to_free[i], g_to_free[i], usable(keep));
    note("in a thread cache", cached[0], cached[0], usable(cached[2]));
    note("in a thread cache", cached[1], cached[1], usable(cached[2]));
    for (void *p : g_arena1)
        note("allocated", p, p, usable(p));
    note("allocated", static_cast<char *>(large) + 5000, large, usable(large));
    note("huge", huge, huge, usable(huge));
    note("huge", static_cast<char *>(huge) + 999, huge, usable(huge));

    FILE *out = fopen("out", "w");
    fprintf(out, "stats %s\n%s", stats.c_str(), g_lines.c_str());
    fclose(out);

    FILE *f = fopen("stats.txt", "w");
    expect_ok(f, "arenalloc_stats", 0, false, "-j");
    fclose(f);
    f = fopen("find.txt", "w");
    for (size_t pos = 0; (pos = g_lines.find("ptr ", pos)) != std::string::npos; pos++) {
        size_t eol = g_lines.find('\n', pos);
        std::string line = g_lines.substr(pos, eol - pos);
        // The address is the third word from the end.
        size_t e = line.rfind(' ');
        e = line.rfind(' ', e - 1);
        size_t b = line.rfind(' ', e - 1);
        uintptr_t a = strtoul(line.substr(b + 1, e - b - 1).c_str(), nullptr, 16);
        expect_ok(f, "arenalloc_find", a, true, "-j");
    }
    fclose(f);
    f = fopen("verify.txt", "w");
    expect_ok(f, "arenalloc_verify", 0, false, nullptr);
    fclose(f);
    f = fopen("arenas.txt", "w");
    expect_ok(f, "arenalloc_arenas", 0, false, nullptr);
    fclose(f);
    f = fopen("chunks.txt", "w");
    if (walk("arenalloc_chunk", print_chunk, f) != 0) {
        fprintf(stderr, "fake_mdb: ::walk arenalloc_chunk failed\n");
        g_failures++;
    }
    fclose(f);
    f = fopen("text.txt", "w");
    expect_ok(f, "arenalloc_stats", 0, false, "-b");
    expect_ok(f, "arenalloc_find", reinterpret_cast<uintptr_t>(live[3]) + 7, true, nullptr);
    expect_ok(f, "arenalloc_find", reinterpret_cast<uintptr_t>(g_to_free[0]), true, nullptr);
    expect_ok(f, "arenalloc_find", reinterpret_cast<uintptr_t>(cached[0]), true, nullptr);
    expect_ok(f, "arenalloc_find", reinterpret_cast<uintptr_t>(huge) + 999, true, nullptr);
    expect_ok(f, "arenalloc_find", 0x1000, true, nullptr);
    fclose(f);
    f = fopen("misuse.txt", "w");
    fprintf(f, "find-without-address %d\n", call(f, "arenalloc_find", 0, false, nullptr));
    fprintf(f, "stats-with-address %d\n", call(f, "arenalloc_stats", 0x1000, true, nullptr));
    fprintf(f, "verify-bad-option %d\n", call(f, "arenalloc_verify", 0, false, "-x"));
    fclose(f);
    return g_failures == 0 ? 0 : 1;
}
