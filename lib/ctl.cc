// ctl.cc — the mallctl() name tree and its handlers.
//
// The tree is constant data (no constructor runs): each node has a name,
// named children, or one child that stands for every number its index
// check accepts, or a handler when it is a leaf.  A lookup by name and a
// walk by MIB follow the same nodes, so the two cannot disagree.
#include "ctl.h"

#include "background.h"

#include <errno.h>
#include <string.h>
#include <sys/types.h>

#include <cstdint>

#include "arena.h"
#include "background.h"
#include "base.h"
#include "chunk.h"
#include "config.h"
#include "debug_assert.h"
#include "init.h"
#include "mutex.h"
#include "options.h"
#include "size_classes.h"
#include "stats.h"
#include "tcache.h"
#include "thread_state.h"
#include "util.h"

namespace arenalloc {

namespace {

// ---------------------------------------------------------------------------
// Requests and the read/write rules every handler shares.

struct Request {
    const size_t *mib;
    size_t miblen;
    void *oldp;
    size_t *oldlenp;
    void *newp;
    size_t newlen;
};

using Handler = int (*)(const Request &r);

// Copies v out when the caller asked for it.  A size other than sizeof(T)
// copies what fits of the value, reports that length and fails.
template <typename T>
int read_value(const Request &r, const T &v) {
    if (r.oldp == nullptr || r.oldlenp == nullptr)
        return 0;
    if (*r.oldlenp != sizeof(T)) {
        size_t n = *r.oldlenp < sizeof(T) ? *r.oldlenp : sizeof(T);
        memcpy(r.oldp, &v, n);
        *r.oldlenp = n;
        return EINVAL;
    }
    memcpy(r.oldp, &v, sizeof(T));
    return 0;
}

// The new value, when the caller gave one (newp set) of the right size.
template <typename T>
int write_value(const Request &r, T *v, bool *given) {
    *given = false;
    if (r.newp == nullptr)
        return 0;
    if (r.newlen != sizeof(T))
        return EINVAL;
    memcpy(v, r.newp, sizeof(T));
    *given = true;
    return 0;
}

bool writes(const Request &r) { return r.newp != nullptr || r.newlen != 0; }

// A trigger neither reads nor writes a value.
bool touches_values(const Request &r) {
    return r.oldp != nullptr || r.oldlenp != nullptr || writes(r);
}

// ---------------------------------------------------------------------------
// The snapshot behind stats.*: the heap totals and one snapshot per arena
// (in metadata memory, made when the arena is first seen), plus all arenas
// merged.  Guarded by g_ctl_mutex; taken again on every epoch write.

struct ArenaSlot {
    ArenaSnapshot *snap;  // metadata memory, kept for the process's life
    bool valid;           // the arena existed at the last refresh
    // Its lock counts at the last stats.mutexes.reset: snapshots report
    // the counts since then.
    uint64_t lock_acquired_base;
    uint64_t lock_contended_base;
};

Mutex g_ctl_mutex;
bool g_have_snapshot = false;
uint64_t g_epoch = 0;
HeapSnapshot g_heap;
ArenaSlot *g_slots = nullptr;       // kArenaTableSlots entries
ArenaSnapshot *g_merged = nullptr;  // every valid arena summed

// The decay time arenas.create gives a new arena.
int32_t arenas_decay_ms_default() {
    int32_t d = g_arena_decay_ms_default.load(std::memory_order_relaxed);
    return decay_ms_as_given(d);
}

// Takes a new snapshot (g_ctl_mutex held).  False when metadata memory for
// the snapshot itself cannot be had.
bool refresh() {
    if (g_slots == nullptr) {
        g_merged = static_cast<ArenaSnapshot *>(base_alloc(sizeof(ArenaSnapshot)));
        if (g_merged == nullptr)
            return false;
        g_slots = static_cast<ArenaSlot *>(base_alloc(kArenaTableSlots * sizeof(ArenaSlot)));
        if (g_slots == nullptr)
            return false;
    }
    if (!stats_heap(&g_heap))  // merges the caller's own cache counts first
        return false;
    memset(g_merged, 0, sizeof(*g_merged));
    g_merged->index = static_cast<unsigned>(kCtlArenasAll);
    g_merged->decay_ms = arenas_decay_ms_default();
    for (unsigned i = 0; i < g_narenas; i++) {
        ArenaSlot &s = g_slots[i];
        s.valid = false;
        if (arena_peek(i) == nullptr)
            continue;
        if (s.snap == nullptr)
            s.snap = static_cast<ArenaSnapshot *>(base_alloc(sizeof(ArenaSnapshot)));
        if (s.snap == nullptr || !stats_arena(i, s.snap))
            continue;
        s.valid = true;
        s.snap->lock_acquired -= s.lock_acquired_base;
        s.snap->lock_contended -= s.lock_contended_base;
        stats_merge_arena(g_merged, *s.snap);
    }
    g_epoch++;
    g_have_snapshot = true;
    return true;
}

// 0 once a snapshot exists (g_ctl_mutex held).
int snapshot_ready() {
    if (g_have_snapshot || refresh())
        return 0;
    return EAGAIN;
}

bool is_all_arenas(size_t i) { return i == kCtlArenasAll || i == g_narenas; }

// Arena i's snapshot, or the merged one; nullptr when the arena had no
// statistics at the last refresh (g_ctl_mutex held, snapshot ready).
const ArenaSnapshot *arena_snapshot(size_t i) {
    if (is_all_arenas(i))
        return g_merged;
    if (i < g_narenas && g_slots[i].valid)
        return g_slots[i].snap;
    return nullptr;
}

unsigned nlextents() {
    unsigned n = 0;
    while (n < kNumLargeClasses && class_to_size(kNumBins + n) <= g_chunk.large_max)
        n++;
    return n;
}

// ---------------------------------------------------------------------------
// Handlers.  Read-only values: CTL_RO defines a handler from an expression
// (r, the request, in scope); the stats forms evaluate theirs under the
// snapshot lock with h (the heap), a (the arena <i> = mib[2]), b (the bin
// <j> = mib[4]) or l (the large class <j> = mib[4]) in scope.

#define CTL_RO(fn, T, expr)                          \
    int fn(const Request &r) {                       \
        (void)r;                                     \
        if (writes(r))                               \
            return EPERM;                            \
        T v_ = static_cast<T>(expr);                 \
        return read_value<T>(r, v_);                 \
    }

#define CTL_STATS_RO(fn, T, lookup, expr)            \
    int fn(const Request &r) {                       \
        if (writes(r))                               \
            return EPERM;                            \
        T v_;                                        \
        {                                            \
            MutexGuard guard_(g_ctl_mutex);          \
            if (int e_ = snapshot_ready())           \
                return e_;                           \
            lookup;                                  \
            v_ = static_cast<T>(expr);               \
        }                                            \
        return read_value<T>(r, v_);                 \
    }

#define CTL_HEAP(fn, T, expr) CTL_STATS_RO(fn, T, const HeapSnapshot &h = g_heap, expr)

#define CTL_ARENA_LOOKUP                                   \
    const ArenaSnapshot *a = arena_snapshot(r.mib[2]);     \
    if (a == nullptr)                                      \
        return ENOENT

#define CTL_ARENA(fn, T, expr) CTL_STATS_RO(fn, T, CTL_ARENA_LOOKUP, expr)

#define CTL_BIN(fn, T, field)                                                 \
    CTL_STATS_RO(fn, T, CTL_ARENA_LOOKUP; const BinSnapshot &b = a->bins[r.mib[4]], \
                 b.field)

#define CTL_LARGE(fn, T, field)                                                 \
    CTL_STATS_RO(fn, T, CTL_ARENA_LOOKUP; const LargeSnapshot &l = a->large[r.mib[4]], \
                 l.field)

// version, epoch.

const char kVersion[] = PACKAGE_NAME " " PACKAGE_VERSION;
CTL_RO(version_ctl, const char *, kVersion)

int epoch_ctl(const Request &r) {
    uint64_t ignored;
    bool given;
    if (int e = write_value(r, &ignored, &given))
        return e;
    uint64_t v;
    {
        MutexGuard guard(g_ctl_mutex);
        if (given ? !refresh() : snapshot_ready() != 0)
            return EAGAIN;
        v = g_epoch;
    }
    return read_value(r, v);
}

// config.*: how this library was built, in jemalloc's terms.  Junk and
// zero filling (fill) and the X option (xmalloc) are always built in;
// there is no heap profiling and no cache-oblivious offsetting of large
// blocks; locks are skipped while the process has one thread (lazy_lock)
// only where the C library names its flag; utrace is the U option, built
// everywhere (ktrace records, or text lines where there is no utrace(2)).

const char kConfigMallocConf[] = "";
CTL_RO(config_cache_oblivious_ctl, bool, false)
CTL_RO(config_debug_ctl, bool, kDebug)
CTL_RO(config_fill_ctl, bool, true)
#if defined(ARENALLOC_ISTHREADED)
CTL_RO(config_lazy_lock_ctl, bool, true)
#else
CTL_RO(config_lazy_lock_ctl, bool, false)
#endif
CTL_RO(config_malloc_conf_ctl, const char *, kConfigMallocConf)
CTL_RO(config_opt_safety_checks_ctl, bool, kFreeChecks)
CTL_RO(config_prof_ctl, bool, false)
CTL_RO(config_prof_libgcc_ctl, bool, false)
CTL_RO(config_prof_libunwind_ctl, bool, false)
CTL_RO(config_stats_ctl, bool, kStats)
CTL_RO(config_utrace_ctl, bool, true)
CTL_RO(config_xmalloc_ctl, bool, true)

// max_background_threads: arenalloc has one purging thread at most, so
// the only value to write is 1.
int max_background_threads_ctl(const Request &r) {
    size_t v;
    bool given;
    if (int e = write_value(r, &v, &given))
        return e;
    if (given && v != kMaxBackgroundThreads)
        return EINVAL;
    return read_value(r, kMaxBackgroundThreads);
}

// A read-write switch (bool): the state before is read out, then a new
// one applied by set, which answers false when it cannot be (EAGAIN).
int rw_switch(const Request &r, bool old, bool (*set)(bool)) {
    bool on;
    bool given;
    if (int e = write_value(r, &on, &given))
        return e;
    if (int e = read_value(r, old))
        return e;
    if (given && !set(on))
        return EAGAIN;
    return 0;
}

// background_thread: the optional purging thread.
int background_thread_ctl(const Request &r) {
    return rw_switch(r, background_thread_enabled(), background_thread_set);
}

// thread.*

int thread_arena_ctl(const Request &r) {
    Arena *cur = thread_arena();
    if (cur == nullptr)
        return EAGAIN;
    unsigned old = cur->index;
    unsigned target;
    bool given;
    if (int e = write_value(r, &target, &given))
        return e;
    if (given && target >= __atomic_load_n(&g_narenas, __ATOMIC_ACQUIRE))
        return EINVAL;
    if (int e = read_value(r, old))
        return e;
    if (!given || target == old)
        return 0;
    // What the cache holds came from the old arena, and its unmerged
    // counts belong there: both go back before the move.
    if (tls_thread_state.tcache != &g_tcache_none)
        tcache_flush_all(tls_thread_state.tcache);
    return thread_set_arena(target) ? 0 : EAGAIN;
}

int thread_tcache_flush_ctl(const Request &r) {
    if (touches_values(r))
        return EPERM;
    if (tls_thread_state.tcache != &g_tcache_none)
        tcache_flush_all(tls_thread_state.tcache);
    return 0;
}

bool set_thread_tcache(bool on) {
    thread_tcache_set_enabled(on);
    return true;
}

int thread_tcache_enabled_ctl(const Request &r) {
    return rw_switch(r, thread_tcache_enabled(), set_thread_tcache);
}

// thread.idle: the thread will not allocate for a while: its cache goes
// back, and its arena's purging rules are applied now rather than at its
// next use.
int thread_idle_ctl(const Request &r) {
    if (touches_values(r))
        return EPERM;
    if (tls_thread_state.tcache != &g_tcache_none)
        tcache_flush_all(tls_thread_state.tcache);
    if (Arena *a = tls_thread_state.arena)
        arena_decay(a);
    return 0;
}

CTL_RO(thread_allocated_ctl, uint64_t, thread_bytes_allocated())
CTL_RO(thread_deallocated_ctl, uint64_t, thread_bytes_deallocated())

// opt.*: one per named row of option_list.h.

// Thread caches are off when H went to its minimum (tcache.cc sizes none).
bool opt_tcache_value() { return g_tcache_slots[0] != 0; }

// jemalloc's names for what arenalloc has (option_list.h says why each).
ssize_t opt_dirty_decay_ms_value() { return g_options.decay_ms; }
ssize_t opt_muzzy_decay_ms_value() { return g_options.lazy_purge ? -1 : 0; }
const char *opt_metadata_thp_value() { return "disabled"; }
bool opt_retain_value() { return true; }
const char *opt_percpu_arena_value() { return "disabled"; }
size_t opt_tcache_max_value() { return kTcacheLargeMax; }
const char *opt_stats_print_opts_value() { return options_stats_print_opts(); }

// A word option's list (off or on) as a C string is its first word.
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) \
    CTL_RO(opt_##name##_ctl, ctl_type, g_options.field)
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) \
    CTL_RO(opt_##name##_ctl, const char *, g_options.field ? on_words : off_words)
#define AA_DERIVED_OPT(name, ctl_type, text) CTL_RO(opt_##name##_ctl, ctl_type, opt_##name##_value())
#include "option_list.h"

// arena.<i>.*

// A trigger applying act to arena <i> = mib[1], or to every arena.
int arena_trigger(const Request &r, void (*act)(Arena *)) {
    if (touches_values(r))
        return EPERM;
    size_t i = r.mib[1];
    for (unsigned k = 0; k < g_narenas; k++) {
        if (!is_all_arenas(i) && k != i)
            continue;
        if (Arena *a = arena_peek(k))
            act(a);
    }
    return 0;
}

void purge_dirty_pages(Arena *a) { arena_purge_all(a, false); }

int arena_purge_ctl(const Request &r) { return arena_trigger(r, purge_dirty_pages); }

// arena.<i>.decay: the decay rule applied now, rather than at the next
// sweep or use.
int arena_decay_ctl(const Request &r) { return arena_trigger(r, arena_decay); }

// arena.<i>.reset: every block of an arena of arenas.create discarded.
// EFAULT for an automatic arena (jemalloc's answer), whose blocks any
// thread may hold.
int arena_reset_ctl(const Request &r) {
    if (touches_values(r))
        return EPERM;
    size_t i = r.mib[1];
    if (is_all_arenas(i) || !arena_index_is_manual(static_cast<unsigned>(i)))
        return EFAULT;
    Arena *a = arena_peek(static_cast<unsigned>(i));
    if (a == nullptr)
        return EFAULT;
    // This thread's cache may hold blocks of the arena (the only cache
    // that can be flushed from here; the others are the caller's duty).
    if (tls_thread_state.tcache != &g_tcache_none)
        tcache_flush_all(tls_thread_state.tcache);
    return arena_reset(a, tls_thread_state.tcache) ? 0 : EFAULT;
}

// A decay time a mallctl may set: the decay_ms option's bounds, and
// jemalloc's -1 (never) and 0 (at once), applied as the longest and the
// shortest (arena.h: decay_ms_applied).  Others fail with EFAULT, as
// jemalloc's own out-of-range values do.
bool decay_ms_ok(ssize_t ms) { return ms == -1 || ms == 0 || (ms >= kDecayMsMin && ms <= kDecayMsMax); }

// A decay time's request (ssize_t, read-write): old read out; a new one,
// checked, in *ms, *given set, for the caller to apply.
int decay_ms_request(const Request &r, ssize_t old, ssize_t *ms, bool *given) {
    if (int e = write_value(r, ms, given))
        return e;
    if (*given && !decay_ms_ok(*ms))
        return EFAULT;
    return read_value(r, old);
}

// arena.<i>.dirty_decay_ms: one arena's decay time (ssize_t, read-write);
// EFAULT for the "all arenas" index or an arena not created yet.
int arena_dirty_decay_ms_ctl(const Request &r) {
    size_t i = r.mib[1];
    Arena *a = is_all_arenas(i) ? nullptr : arena_peek(static_cast<unsigned>(i));
    if (a == nullptr)
        return EFAULT;
    ssize_t ms;
    bool given;
    if (int e = decay_ms_request(r, arena_decay_ms(a), &ms, &given))
        return e;
    if (given)
        arena_set_decay_ms(a, static_cast<int32_t>(ms));
    return 0;
}

// *.muzzy_decay_ms: arenalloc purges dirty pages straight to clean ones,
// with no muzzy (lazily freed) stage in between: jemalloc's 0.  Writing 0
// changes nothing; writing anything else fails as an impossible value.
int muzzy_decay_ms_ctl(const Request &r) {
    ssize_t ms;
    bool given;
    if (int e = write_value(r, &ms, &given))
        return e;
    if (given && ms != 0)
        return EFAULT;
    return read_value(r, ssize_t{0});
}

int arena_initialized_ctl(const Request &r) {
    if (writes(r))
        return EPERM;
    bool v;
    {
        MutexGuard guard(g_ctl_mutex);
        if (int e = snapshot_ready())
            return e;
        v = is_all_arenas(r.mib[1]) || g_slots[r.mib[1]].valid;
    }
    return read_value(r, v);
}

// arenas.*

CTL_RO(arenas_narenas_ctl, unsigned, __atomic_load_n(&g_narenas, __ATOMIC_ACQUIRE))

// arenas.create: a new arena, its index read out (unsigned).  As in
// jemalloc, nothing is made unless the index can be returned; extent
// hooks cannot be given (arenalloc maps its own chunks): writing any but
// a null extent_hooks_t * fails.
int arenas_create_ctl(const Request &r) {
    if (r.oldp == nullptr || r.oldlenp == nullptr || *r.oldlenp != sizeof(unsigned)) {
        if (r.oldlenp != nullptr)
            *r.oldlenp = 0;
        return EINVAL;
    }
    void *hooks;
    bool given;
    if (int e = write_value(r, &hooks, &given))
        return e;
    if (given && hooks != nullptr)
        return EFAULT;
    unsigned index;
    if (arena_create_manual(&index) == nullptr)
        return EAGAIN;
    return read_value(r, index);
}

// arenas.dirty_decay_ms: the decay time of arenas made from now on.
int arenas_dirty_decay_ms_ctl(const Request &r) {
    ssize_t ms;
    bool given;
    if (int e = decay_ms_request(r, arenas_decay_ms_default(), &ms, &given))
        return e;
    if (given)
        g_arena_decay_ms_default.store(static_cast<int32_t>(ms), std::memory_order_relaxed);
    return 0;
}

CTL_RO(arenas_tcache_max_ctl, size_t, kTcacheLargeMax)
CTL_RO(arenas_nhbins_ctl, unsigned, kNumTcacheClasses)
CTL_RO(arenas_page_ctl, size_t, kPage)
CTL_RO(arenas_quantum_ctl, size_t, kQuantum)
CTL_RO(arenas_chunksize_ctl, size_t, g_chunk.chunk_size)
CTL_RO(arenas_nbins_ctl, unsigned, kNumBins)
CTL_RO(arenas_bin_size_ctl, size_t, bin_info(static_cast<unsigned>(r.mib[2])).region_size)
CTL_RO(arenas_bin_nregs_ctl, uint32_t, bin_info(static_cast<unsigned>(r.mib[2])).nregs)
CTL_RO(arenas_bin_run_size_ctl, size_t,
       size_t{bin_info(static_cast<unsigned>(r.mib[2])).run_pages} << kLgPage)
CTL_RO(arenas_nlextents_ctl, unsigned, nlextents())
CTL_RO(arenas_lextent_size_ctl, size_t, class_to_size(kNumBins + static_cast<unsigned>(r.mib[2])))

// stats.*

CTL_HEAP(stats_allocated_ctl, size_t, h.allocated)
CTL_HEAP(stats_active_ctl, size_t, h.active)
CTL_HEAP(stats_metadata_ctl, size_t, h.metadata)
CTL_HEAP(stats_resident_ctl, size_t, h.resident)
CTL_HEAP(stats_mapped_ctl, size_t, h.mapped)
CTL_HEAP(stats_retained_ctl, size_t, h.retained)
CTL_HEAP(stats_huge_allocated_ctl, size_t, h.huge_allocated)
CTL_HEAP(stats_huge_nmalloc_ctl, uint64_t, h.huge_nmalloc)
CTL_HEAP(stats_huge_ndalloc_ctl, uint64_t, h.huge_ndalloc)
CTL_HEAP(stats_huge_cached_ctl, size_t, h.huge_cached)

CTL_RO(stats_zero_reallocs_ctl, size_t, g_zero_reallocs.load(std::memory_order_relaxed))
CTL_RO(stats_bg_num_threads_ctl, size_t, background_num_threads())
CTL_RO(stats_bg_num_runs_ctl, uint64_t, background_num_runs())
CTL_RO(stats_bg_run_interval_ctl, uint64_t, background_run_interval_ns())

// stats.mutexes.<name>.<counter>: jemalloc's global mutexes.  Of
// arenalloc's, only the mallctl lock (ctl) has a counterpart; it counts
// acquisitions and those that had to wait, nothing else.  The background
// thread takes no lock, and there is no profiling: their counters are 0.
enum GlobalMutex : size_t { kMutexCtl = 0 };

const Mutex *global_mutex(size_t which) { return which == kMutexCtl ? &g_ctl_mutex : nullptr; }

// The ctl lock's counts at the last stats.mutexes.reset (see ArenaSlot).
std::atomic<uint64_t> g_ctl_acquired_base{0};
std::atomic<uint64_t> g_ctl_contended_base{0};

// The counters are read without the lock (a torn pair of counts, at
// worst): taking the ctl lock to read its own counts would count itself.
#define CTL_GLOBAL_MUTEX(fn, T, field, base)                                 \
    int fn(const Request &r) {                                                \
        if (writes(r))                                                        \
            return EPERM;                                                     \
        const Mutex *m = global_mutex(r.mib[2]);                              \
        T v = m != nullptr ? static_cast<T>(__atomic_load_n(&m->field, __ATOMIC_RELAXED) - \
                                            base.load(std::memory_order_relaxed)) : 0; \
        return read_value<T>(r, v);                                           \
    }
CTL_GLOBAL_MUTEX(stats_mutex_num_ops_ctl, uint64_t, nacquired_, g_ctl_acquired_base)
CTL_GLOBAL_MUTEX(stats_mutex_num_wait_ctl, uint64_t, ncontended_, g_ctl_contended_base)

// stats.mutexes.reset: the lock counts mallctl reports start again from 0.
// The counters themselves run on (arena 0's lock watch works from their
// differences): the reset records where each stands, and reads subtract
// it.  The current snapshot's counts become 0 too.
int stats_mutexes_reset_ctl(const Request &r) {
    if (touches_values(r))
        return EPERM;
    MutexGuard guard(g_ctl_mutex);
    // This acquisition included: a read right after the reset gives 0.
    g_ctl_acquired_base.store(__atomic_load_n(&g_ctl_mutex.nacquired_, __ATOMIC_RELAXED),
                              std::memory_order_relaxed);
    g_ctl_contended_base.store(__atomic_load_n(&g_ctl_mutex.ncontended_, __ATOMIC_RELAXED),
                               std::memory_order_relaxed);
    if (g_slots == nullptr)
        return 0;
    for (unsigned i = 0; i < g_narenas; i++) {
        Arena *a = arena_peek(i);
        if (a == nullptr)
            continue;
        ArenaSlot &s = g_slots[i];
        {
            MutexGuard arena_guard(a->mutex);
            s.lock_acquired_base = a->mutex.nacquired_;
            s.lock_contended_base = a->mutex.ncontended_;
        }
        if (s.snap != nullptr) {
            s.snap->lock_acquired = 0;
            s.snap->lock_contended = 0;
        }
    }
    g_merged->lock_acquired = 0;
    g_merged->lock_contended = 0;
    return 0;
}
CTL_RO(stats_mutex_zero_ctl, uint64_t, 0)
CTL_RO(stats_mutex_max_num_thds_ctl, uint32_t, 0)

CTL_ARENA(sa_nthreads_ctl, unsigned, a->nthreads)
CTL_ARENA(sa_mapped_ctl, size_t, a->mapped)
CTL_ARENA(sa_retained_ctl, size_t, a->retained)
CTL_ARENA(sa_active_ctl, size_t, a->active)
CTL_ARENA(sa_dirty_ctl, size_t, a->dirty)
CTL_ARENA(sa_resident_ctl, size_t, a->resident)
CTL_ARENA(sa_pactive_ctl, size_t, a->active >> kLgPage)
CTL_ARENA(sa_pdirty_ctl, size_t, a->dirty >> kLgPage)
CTL_ARENA(sa_npurge_ctl, uint64_t, a->npurge_passes)
CTL_ARENA(sa_nmadvise_ctl, uint64_t, a->nmadvise)
CTL_ARENA(sa_purged_ctl, uint64_t, a->npurged_pages)
CTL_ARENA(sa_uptime_ctl, uint64_t, a->uptime_ms * 1000000)
CTL_ARENA(sa_dirty_decay_ms_ctl, ssize_t, a->decay_ms)
// No muzzy pages (see muzzy_decay_ms_ctl): their counts are 0.
CTL_ARENA(sa_zero_size_ctl, size_t, (static_cast<void>(a), 0))
CTL_ARENA(sa_zero_u64_ctl, uint64_t, (static_cast<void>(a), 0))
CTL_ARENA(sa_muzzy_decay_ms_ctl, ssize_t, (static_cast<void>(a), 0))
CTL_ARENA(sa_mutex_max_num_thds_ctl, uint32_t, (static_cast<void>(a), 0))

// base: metadata bytes.  An arena's own is its Arena structure; the rest
// (run descriptors, the registry, thread caches, ...) is shared by all
// and counted in arena 0, as jemalloc counts its shared metadata in arena
// 0, so that the arenas add up to stats.metadata.
size_t arena_struct_bytes() { return align_up(sizeof(Arena), 64); }

size_t arena_base_bytes(size_t i) {
    if (is_all_arenas(i))
        return g_heap.metadata;
    if (i != 0)
        return arena_struct_bytes();
    size_t others = 0;
    for (unsigned k = 1; k < g_narenas; k++)
        if (g_slots[k].valid)
            others += arena_struct_bytes();
    return g_heap.metadata - others;
}

CTL_ARENA(sa_base_ctl, size_t, (static_cast<void>(a), arena_base_bytes(r.mib[2])))

// small.*: sums over the bins, as jemalloc counts them (nmalloc and
// ndalloc at the arena, cache fills and flushes included; nrequests at
// the program).
uint64_t bins_sum(const ArenaSnapshot *a, uint64_t BinSnapshot::*field) {
    uint64_t n = 0;
    for (unsigned b = 0; b < kNumBins; b++)
        n += a->bins[b].*field;
    return n;
}

CTL_ARENA(sa_small_allocated_ctl, size_t, a->allocated_small)
CTL_ARENA(sa_small_nmalloc_ctl, uint64_t, bins_sum(a, &BinSnapshot::nmalloc))
CTL_ARENA(sa_small_ndalloc_ctl, uint64_t, bins_sum(a, &BinSnapshot::ndalloc))
CTL_ARENA(sa_small_nrequests_ctl, uint64_t, bins_sum(a, &BinSnapshot::nrequests))
CTL_ARENA(sa_small_nfills_ctl, uint64_t, bins_sum(a, &BinSnapshot::nfills))
CTL_ARENA(sa_small_nflushes_ctl, uint64_t, bins_sum(a, &BinSnapshot::nflushes))
CTL_ARENA(sa_large_allocated_ctl, size_t, a->allocated_large)
CTL_ARENA(sa_large_nmalloc_ctl, uint64_t, a->nmalloc_large)
CTL_ARENA(sa_large_ndalloc_ctl, uint64_t, a->ndalloc_large)
CTL_ARENA(sa_large_nrequests_ctl, uint64_t, a->nmalloc_large)
CTL_ARENA(sa_mutex_num_ops_ctl, uint64_t, a->lock_acquired)
CTL_ARENA(sa_mutex_num_wait_ctl, uint64_t, a->lock_contended)

CTL_BIN(sa_bin_nmalloc_ctl, uint64_t, nmalloc)
CTL_BIN(sa_bin_ndalloc_ctl, uint64_t, ndalloc)
CTL_BIN(sa_bin_nrequests_ctl, uint64_t, nrequests)
CTL_BIN(sa_bin_curregs_ctl, size_t, curregs)
CTL_BIN(sa_bin_curruns_ctl, size_t, curruns)
CTL_BIN(sa_bin_nruns_ctl, uint64_t, nruns)
CTL_BIN(sa_bin_nfills_ctl, uint64_t, nfills)
CTL_BIN(sa_bin_nflushes_ctl, uint64_t, nflushes)
CTL_BIN(sa_bin_nreslabs_ctl, uint64_t, nreslabs)

CTL_LARGE(sa_lextent_nmalloc_ctl, uint64_t, nmalloc)
CTL_LARGE(sa_lextent_ndalloc_ctl, uint64_t, ndalloc)
CTL_LARGE(sa_lextent_nrequests_ctl, uint64_t, nmalloc)
CTL_LARGE(sa_lextent_curlextents_ctl, size_t, curruns)

// ---------------------------------------------------------------------------
// Index checks for numbered components.

bool arena_index_ok(size_t i) { return i < g_narenas || is_all_arenas(i); }
bool bin_index_ok(size_t i) { return i < kNumBins; }
bool lextent_index_ok(size_t i) { return i < nlextents(); }

// ---------------------------------------------------------------------------
// The tree, leaves first.

struct Node {
    const char *name;          // nullptr for the numbered child of an indexed node
    const Node *children;      // named children, or the one numbered child
    uint16_t nchildren;
    bool (*index_ok)(size_t);  // set: children[0] stands for every number it accepts
    Handler handler;           // set: a leaf
};

#define LEAF(n, h) {n, nullptr, 0, nullptr, h}
#define INNER(n, kids) \
    {n, kids, static_cast<uint16_t>(sizeof(kids) / sizeof(kids[0])), nullptr, nullptr}
#define NUMBERED(n, kid, check) {n, kid, 1, check, nullptr}

constexpr Node kThreadTcache[] = {
    LEAF("flush", thread_tcache_flush_ctl),
    LEAF("enabled", thread_tcache_enabled_ctl),
};
constexpr Node kThread[] = {
    LEAF("arena", thread_arena_ctl),
    INNER("tcache", kThreadTcache),
    LEAF("allocated", thread_allocated_ctl),
    LEAF("deallocated", thread_deallocated_ctl),
    LEAF("idle", thread_idle_ctl),
};

constexpr Node kConfig[] = {
    LEAF("cache_oblivious", config_cache_oblivious_ctl),
    LEAF("debug", config_debug_ctl),
    LEAF("fill", config_fill_ctl),
    LEAF("lazy_lock", config_lazy_lock_ctl),
    LEAF("malloc_conf", config_malloc_conf_ctl),
    LEAF("opt_safety_checks", config_opt_safety_checks_ctl),
    LEAF("prof", config_prof_ctl),
    LEAF("prof_libgcc", config_prof_libgcc_ctl),
    LEAF("prof_libunwind", config_prof_libunwind_ctl),
    LEAF("stats", config_stats_ctl),
    LEAF("utrace", config_utrace_ctl),
    LEAF("xmalloc", config_xmalloc_ctl),
};

constexpr Node kOpt[] = {
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) \
    LEAF(#name, opt_##name##_ctl),
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) \
    LEAF(#name, opt_##name##_ctl),
#define AA_DERIVED_OPT(name, ctl_type, text) LEAF(#name, opt_##name##_ctl),
#include "option_list.h"
};

constexpr Node kArenaI[] = {
    LEAF("purge", arena_purge_ctl),
    LEAF("initialized", arena_initialized_ctl),
    LEAF("decay", arena_decay_ctl),
    LEAF("reset", arena_reset_ctl),
    LEAF("dirty_decay_ms", arena_dirty_decay_ms_ctl),
    LEAF("muzzy_decay_ms", muzzy_decay_ms_ctl),
};
constexpr Node kArenaINumbered[] = {INNER(nullptr, kArenaI)};

constexpr Node kArenasBinI[] = {
    LEAF("size", arenas_bin_size_ctl),
    LEAF("nregs", arenas_bin_nregs_ctl),
    LEAF("run_size", arenas_bin_run_size_ctl),
    LEAF("slab_size", arenas_bin_run_size_ctl),  // jemalloc 5's name
};
constexpr Node kArenasBinNumbered[] = {INNER(nullptr, kArenasBinI)};
constexpr Node kArenasLextentI[] = {
    LEAF("size", arenas_lextent_size_ctl),
};
constexpr Node kArenasLextentNumbered[] = {INNER(nullptr, kArenasLextentI)};
constexpr Node kArenas[] = {
    LEAF("narenas", arenas_narenas_ctl),
    LEAF("page", arenas_page_ctl),
    LEAF("quantum", arenas_quantum_ctl),
    LEAF("chunksize", arenas_chunksize_ctl),
    LEAF("nbins", arenas_nbins_ctl),
    NUMBERED("bin", kArenasBinNumbered, bin_index_ok),
    LEAF("nlextents", arenas_nlextents_ctl),
    NUMBERED("lextent", kArenasLextentNumbered, lextent_index_ok),
    LEAF("create", arenas_create_ctl),
    LEAF("tcache_max", arenas_tcache_max_ctl),
    LEAF("nhbins", arenas_nhbins_ctl),
    LEAF("dirty_decay_ms", arenas_dirty_decay_ms_ctl),
    LEAF("muzzy_decay_ms", muzzy_decay_ms_ctl),
};

constexpr Node kStatsHuge[] = {
    LEAF("allocated", stats_huge_allocated_ctl),
    LEAF("nmalloc", stats_huge_nmalloc_ctl),
    LEAF("ndalloc", stats_huge_ndalloc_ctl),
    LEAF("cached", stats_huge_cached_ctl),
};
constexpr Node kStatsArenaSmall[] = {
    LEAF("allocated", sa_small_allocated_ctl),
    LEAF("nmalloc", sa_small_nmalloc_ctl),
    LEAF("ndalloc", sa_small_ndalloc_ctl),
    LEAF("nrequests", sa_small_nrequests_ctl),
    LEAF("nfills", sa_small_nfills_ctl),
    LEAF("nflushes", sa_small_nflushes_ctl),
};
constexpr Node kStatsArenaLarge[] = {
    LEAF("allocated", sa_large_allocated_ctl),
    LEAF("nmalloc", sa_large_nmalloc_ctl),
    LEAF("ndalloc", sa_large_ndalloc_ctl),
    LEAF("nrequests", sa_large_nrequests_ctl),
};
constexpr Node kStatsArenaBinJ[] = {
    LEAF("nmalloc", sa_bin_nmalloc_ctl),
    LEAF("ndalloc", sa_bin_ndalloc_ctl),
    LEAF("nrequests", sa_bin_nrequests_ctl),
    LEAF("curregs", sa_bin_curregs_ctl),
    LEAF("curruns", sa_bin_curruns_ctl),
    LEAF("nruns", sa_bin_nruns_ctl),
    LEAF("nfills", sa_bin_nfills_ctl),
    LEAF("nflushes", sa_bin_nflushes_ctl),
    LEAF("nslabs", sa_bin_nruns_ctl),     // jemalloc 5's names: a slab is a small run
    LEAF("curslabs", sa_bin_curruns_ctl),
    LEAF("nreslabs", sa_bin_nreslabs_ctl),
};
constexpr Node kStatsArenaBinNumbered[] = {INNER(nullptr, kStatsArenaBinJ)};
constexpr Node kStatsArenaLextentJ[] = {
    LEAF("nmalloc", sa_lextent_nmalloc_ctl),
    LEAF("ndalloc", sa_lextent_ndalloc_ctl),
    LEAF("nrequests", sa_lextent_nrequests_ctl),
    LEAF("curlextents", sa_lextent_curlextents_ctl),
};
constexpr Node kStatsArenaLextentNumbered[] = {INNER(nullptr, kStatsArenaLextentJ)};
constexpr Node kStatsArenaMutex[] = {
    LEAF("num_ops", sa_mutex_num_ops_ctl),
    LEAF("num_wait", sa_mutex_num_wait_ctl),
    LEAF("num_spin_acq", sa_zero_u64_ctl),
    LEAF("num_owner_switch", sa_zero_u64_ctl),
    LEAF("total_wait_time", sa_zero_u64_ctl),
    LEAF("max_wait_time", sa_zero_u64_ctl),
    LEAF("max_num_thds", sa_mutex_max_num_thds_ctl),
};
constexpr Node kStatsArenaMutexes[] = {
    INNER("arena", kStatsArenaMutex),
};
constexpr Node kStatsArenaI[] = {
    LEAF("nthreads", sa_nthreads_ctl),
    LEAF("mapped", sa_mapped_ctl),
    LEAF("retained", sa_retained_ctl),
    LEAF("active", sa_active_ctl),
    LEAF("dirty", sa_dirty_ctl),
    LEAF("resident", sa_resident_ctl),
    LEAF("pactive", sa_pactive_ctl),
    LEAF("pdirty", sa_pdirty_ctl),
    LEAF("npurge", sa_npurge_ctl),
    LEAF("nmadvise", sa_nmadvise_ctl),
    LEAF("purged", sa_purged_ctl),
    LEAF("uptime", sa_uptime_ctl),
    LEAF("base", sa_base_ctl),
    LEAF("pmuzzy", sa_zero_size_ctl),
    LEAF("dirty_npurge", sa_npurge_ctl),
    LEAF("dirty_nmadvise", sa_nmadvise_ctl),
    LEAF("dirty_purged", sa_purged_ctl),
    LEAF("muzzy_npurge", sa_zero_u64_ctl),
    LEAF("muzzy_nmadvise", sa_zero_u64_ctl),
    LEAF("muzzy_purged", sa_zero_u64_ctl),
    LEAF("dirty_decay_ms", sa_dirty_decay_ms_ctl),
    LEAF("muzzy_decay_ms", sa_muzzy_decay_ms_ctl),
    INNER("small", kStatsArenaSmall),
    INNER("large", kStatsArenaLarge),
    NUMBERED("bins", kStatsArenaBinNumbered, bin_index_ok),
    NUMBERED("lextents", kStatsArenaLextentNumbered, lextent_index_ok),
    INNER("mutexes", kStatsArenaMutexes),
};
constexpr Node kStatsArenaNumbered[] = {INNER(nullptr, kStatsArenaI)};
constexpr Node kStatsBackgroundThread[] = {
    LEAF("num_threads", stats_bg_num_threads_ctl),
    LEAF("num_runs", stats_bg_num_runs_ctl),
    LEAF("run_interval", stats_bg_run_interval_ctl),
};
constexpr Node kStatsMutexCounters[] = {
    LEAF("num_ops", stats_mutex_num_ops_ctl),
    LEAF("num_wait", stats_mutex_num_wait_ctl),
    LEAF("num_spin_acq", stats_mutex_zero_ctl),
    LEAF("num_owner_switch", stats_mutex_zero_ctl),
    LEAF("total_wait_time", stats_mutex_zero_ctl),
    LEAF("max_wait_time", stats_mutex_zero_ctl),
    LEAF("max_num_thds", stats_mutex_max_num_thds_ctl),
};
// jemalloc 5.3's global mutexes, in its order except ctl first (its
// index is kMutexCtl).
constexpr Node kStatsMutexes[] = {
    INNER("ctl", kStatsMutexCounters),
    INNER("background_thread", kStatsMutexCounters),
    INNER("max_per_bg_thd", kStatsMutexCounters),
    INNER("prof", kStatsMutexCounters),
    INNER("prof_thds_data", kStatsMutexCounters),
    INNER("prof_dump", kStatsMutexCounters),
    INNER("prof_recent_alloc", kStatsMutexCounters),
    INNER("prof_recent_dump", kStatsMutexCounters),
    INNER("prof_stats", kStatsMutexCounters),
    LEAF("reset", stats_mutexes_reset_ctl),
};
constexpr Node kStats[] = {
    LEAF("allocated", stats_allocated_ctl),
    LEAF("active", stats_active_ctl),
    LEAF("metadata", stats_metadata_ctl),
    LEAF("resident", stats_resident_ctl),
    LEAF("mapped", stats_mapped_ctl),
    LEAF("retained", stats_retained_ctl),
    INNER("huge", kStatsHuge),
    NUMBERED("arenas", kStatsArenaNumbered, arena_index_ok),
    LEAF("zero_reallocs", stats_zero_reallocs_ctl),
    INNER("background_thread", kStatsBackgroundThread),
    INNER("mutexes", kStatsMutexes),
};

constexpr Node kTop[] = {
    LEAF("version", version_ctl),
    LEAF("epoch", epoch_ctl),
    LEAF("background_thread", background_thread_ctl),
    INNER("thread", kThread),
    INNER("opt", kOpt),
    NUMBERED("arena", kArenaINumbered, arena_index_ok),
    INNER("arenas", kArenas),
    INNER("stats", kStats),
    LEAF("max_background_threads", max_background_threads_ctl),
    INNER("config", kConfig),
};
constexpr Node kRoot = INNER("", kTop);

// ---------------------------------------------------------------------------
// Lookup and walk.

// The decimal number in s[0, len), or false (empty, not digits, too big).
bool parse_index(const char *s, size_t len, size_t *out) {
    if (len == 0 || len > 9)  // more digits than any index can have
        return false;
    size_t v = 0;
    for (size_t k = 0; k < len; k++) {
        if (s[k] < '0' || s[k] > '9')
            return false;
        v = v * 10 + static_cast<size_t>(s[k] - '0');
    }
    *out = v;
    return true;
}

bool name_is(const char *name, const char *s, size_t len) {
    return strncmp(name, s, len) == 0 && name[len] == '\0';
}

// Translates name into mib, at most cap components.  *reached is the node
// the name ends at (a leaf, or an inner node: a prefix MIB for the caller
// to complete), or nullptr when cap ran out first (a partial MIB); *depth
// is the number of components written.
int lookup(const char *name, size_t *mib, size_t cap, size_t *depth, const Node **reached) {
    const Node *node = &kRoot;
    const char *p = name;
    size_t d = 0;
    *reached = nullptr;
    if (*p == '\0')
        return ENOENT;
    for (;;) {
        if (d == cap) {
            *depth = d;
            return 0;  // partial
        }
        if (node->handler != nullptr)
            return ENOENT;  // a leaf with more name after it
        const char *end = strchr(p, '.');
        size_t len = end != nullptr ? static_cast<size_t>(end - p) : strlen(p);
        if (node->index_ok != nullptr) {
            size_t i;
            if (!parse_index(p, len, &i) || !node->index_ok(i))
                return ENOENT;
            mib[d++] = i;
            node = &node->children[0];
        } else {
            const Node *found = nullptr;
            for (uint16_t k = 0; k < node->nchildren; k++) {
                if (name_is(node->children[k].name, p, len)) {
                    found = &node->children[k];
                    mib[d++] = k;
                    break;
                }
            }
            if (found == nullptr)
                return ENOENT;
            node = found;
        }
        if (end == nullptr)
            break;
        p = end + 1;
    }
    *depth = d;
    *reached = node;
    return 0;
}

const Node *walk(const size_t *mib, size_t miblen) {
    const Node *node = &kRoot;
    for (size_t d = 0; d < miblen; d++) {
        if (node->handler != nullptr)
            return nullptr;
        if (node->index_ok != nullptr) {
            if (!node->index_ok(mib[d]))
                return nullptr;
            node = &node->children[0];
        } else {
            if (mib[d] >= node->nchildren)
                return nullptr;
            node = &node->children[mib[d]];
        }
    }
    return node->handler != nullptr ? node : nullptr;
}

int call(const Node *leaf, const size_t *mib, size_t miblen, void *oldp, size_t *oldlenp,
         void *newp, size_t newlen) {
    Request r{mib, miblen, oldp, oldlenp, newp, newlen};
    return leaf->handler(r);
}

}  // namespace

int ctl_byname(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) {
    if (name == nullptr)
        return EINVAL;
    if (!ensure_initialized())
        return EAGAIN;
    size_t mib[kCtlMaxDepth];
    size_t depth;
    const Node *leaf;
    int e = lookup(name, mib, kCtlMaxDepth, &depth, &leaf);
    if (e != 0)
        return e;
    if (leaf == nullptr || leaf->handler == nullptr)
        return ENOENT;  // too deep, or a name that stops at an inner node
    return call(leaf, mib, depth, oldp, oldlenp, newp, newlen);
}

int ctl_nametomib(const char *name, size_t *mibp, size_t *miblenp) {
    if (name == nullptr || mibp == nullptr || miblenp == nullptr)
        return EINVAL;
    if (!ensure_initialized())
        return EAGAIN;
    size_t depth;
    const Node *reached;  // an inner node too: jemalloc's prefix MIBs
    int e = lookup(name, mibp, *miblenp, &depth, &reached);
    if (e == 0)
        *miblenp = depth;
    return e;
}

int ctl_bymib(const size_t *mib, size_t miblen, void *oldp, size_t *oldlenp, void *newp,
              size_t newlen) {
    if (mib == nullptr && miblen != 0)
        return EINVAL;
    if (!ensure_initialized())
        return EAGAIN;
    const Node *leaf = walk(mib, miblen);
    if (leaf == nullptr)
        return ENOENT;
    return call(leaf, mib, miblen, oldp, oldlenp, newp, newlen);
}

void ctl_prefork() { g_ctl_mutex.lock(); }
void ctl_postfork_parent() { g_ctl_mutex.unlock(); }
void ctl_postfork_child() { g_ctl_mutex.reinit_in_child(); }

}  // namespace arenalloc
