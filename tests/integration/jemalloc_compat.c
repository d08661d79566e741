/*
 * jemalloc_compat — a program written against jemalloc 5.3's manual
 * (jemalloc(3)) and nothing else: the non-standard allocation API with
 * each MALLOCX_* flag, mallctl*() with every name issue 33 lists (its
 * documented type and access), malloc_stats_print's JSON and the
 * MALLOC_CONF / malloc_conf settings.  The same source builds against
 * jemalloc (-DCOMPAT_JEMALLOC, -ljemalloc) and against arenalloc
 * (<malloc_np.h>, libarenalloc); it must pass on both, so that nothing in
 * it can encode one library's own behaviour.  jemalloc_compat_test.sh
 * builds and runs it.
 *
 * Usage:
 *   jemalloc_compat [-j FILE]  every check; FILE receives the "J" output
 *                              of malloc_stats_print for a JSON parser
 *   jemalloc_compat -n N [-j FILE]
 *                              only: opt.narenas is N (set through
 *                              MALLOC_CONF or the malloc_conf global)
 * Output: "ok NAME" or "FAIL NAME: why" per check ("skip NAME: why" where
 * the manual makes a check depend on a build option the library reports
 * off), then "N passed, N failed"; exit status 1 on any failure.
 *
 * Built with -DCOMPAT_MALLOC_CONF_NARENAS=N, the program also defines the
 * malloc_conf global as "narenas:N".
 *
 * Results the manual leaves undefined (size 0, a zero alignment...) are not
 * tested.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef COMPAT_JEMALLOC
#include <jemalloc/jemalloc.h>
#else
#include <malloc_np.h>
/* FreeBSD declares reallocf in <stdlib.h>; glibc does not. */
void *reallocf(void *ptr, size_t size);
#define COMPAT_HAVE_REALLOCF 1
#endif

#ifdef COMPAT_MALLOC_CONF_NARENAS
#define COMPAT_STR_(x) #x
#define COMPAT_STR(x) COMPAT_STR_(x)
const char *malloc_conf = "narenas:" COMPAT_STR(COMPAT_MALLOC_CONF_NARENAS);
#endif

/* ------------------------------------------------------------------ */
/* Reporting */

static unsigned g_passed, g_failed;
static char g_why[1024];

/* A check returns NULL when it holds, else the reason (from failf). */
typedef const char *(*check_fn)(void);

static const char *failf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g_why, sizeof g_why, fmt, ap);
	va_end(ap);
	return g_why;
}

static void report(const char *name, const char *why)
{
	if (why == NULL) {
		printf("ok %s\n", name);
		g_passed++;
	} else {
		printf("FAIL %s: %s\n", name, why);
		g_failed++;
	}
	fflush(stdout);
}

static void run(const char *name, check_fn check)
{
	report(name, check());
}

static void skip(const char *name, const char *why)
{
	printf("skip %s: %s\n", name, why);
}

/* ------------------------------------------------------------------ */
/* mallctl helpers */

/* Reads NAME into OUT of exactly LEN bytes; 0, an errno value, or -1
 * when the call succeeded but reported another length. */
static int ctl_get(const char *name, void *out, size_t len)
{
	size_t got = len;
	int err = mallctl(name, out, &got, NULL, 0);
	if (err == 0 && got != len)
		return -1;
	return err;
}

static int ctl_set(const char *name, const void *value, size_t len)
{
	return mallctl(name, NULL, NULL, (void *)value, len);
}

static int ctl_call(const char *name)
{
	return mallctl(name, NULL, NULL, NULL, 0);
}

/* Whether the library says it was built without OPTION (config.OPTION
 * reads false); a library that cannot say is held to the whole manual. */
static bool config_off(const char *option)
{
	char name[64];
	bool on = true;
	snprintf(name, sizeof name, "config.%s", option);
	if (ctl_get(name, &on, sizeof on) != 0)
		return false;
	return !on;
}

static void refresh_stats(void)
{
	uint64_t epoch = 1;
	ctl_set("epoch", &epoch, sizeof epoch);
}

static size_t ctl_size(const char *fmt, unsigned a, unsigned b)
{
	char name[128];
	size_t v = (size_t)-1;
	snprintf(name, sizeof name, fmt, a, b);
	ctl_get(name, &v, sizeof v);
	return v;
}

static uint64_t ctl_u64(const char *fmt, unsigned a, unsigned b)
{
	char name[128];
	uint64_t v = UINT64_MAX;
	snprintf(name, sizeof name, fmt, a, b);
	ctl_get(name, &v, sizeof v);
	return v;
}

/* A size above every class (the largest does not exceed PTRDIFF_MAX);
 * read through a volatile so that the compiler does not warn about it. */
static volatile size_t g_too_big = (size_t)PTRDIFF_MAX + 1;
#define COMPAT_TOO_BIG (g_too_big + 0)

static const size_t g_sizes[] = {
	1, 8, 24, 100, 1000, 3000, 5000, 20000, 70000, 300000, 3u << 20,
};
#define NSIZES (sizeof g_sizes / sizeof g_sizes[0])

static void fill(void *p, int byte, size_t n)
{
	memset(p, byte, n);
}

/* Index of the first byte of P[0, N) that is not BYTE, or N. */
static size_t first_other(const void *p, int byte, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		if (c[i] != (unsigned char)byte)
			return i;
	return n;
}

/* ------------------------------------------------------------------ */
/* The mallctl names, each with the type and access jemalloc(3) gives it.
 * In a name, "0" stands for the arena <i> or class <j> (arena 0, bin 0,
 * large class 0) and "@" for an arena made by arenas.create.  NEEDS is the
 * config.* flag the manual puts in brackets: when the library reports it
 * false, the name may be absent (ENOENT). */

enum ctl_type { T_VOID, T_BOOL, T_UNSIGNED, T_UINT32, T_SIZE, T_SSIZE, T_UINT64, T_STRING };
enum ctl_access { READ_ONLY, READ_WRITE, ACTION /* "--": neither */ };

struct ctl_name {
	const char *name;
	enum ctl_type type;
	enum ctl_access access;
	const char *needs;
};

static const struct ctl_name g_names[] = {
	{ "version", T_STRING, READ_ONLY, NULL },
	{ "epoch", T_UINT64, READ_WRITE, NULL },
	{ "background_thread", T_BOOL, READ_WRITE, NULL },
	{ "max_background_threads", T_SIZE, READ_WRITE, NULL },

	{ "config.cache_oblivious", T_BOOL, READ_ONLY, NULL },
	{ "config.debug", T_BOOL, READ_ONLY, NULL },
	{ "config.fill", T_BOOL, READ_ONLY, NULL },
	{ "config.lazy_lock", T_BOOL, READ_ONLY, NULL },
	{ "config.malloc_conf", T_STRING, READ_ONLY, NULL },
	{ "config.prof", T_BOOL, READ_ONLY, NULL },
	{ "config.prof_libgcc", T_BOOL, READ_ONLY, NULL },
	{ "config.prof_libunwind", T_BOOL, READ_ONLY, NULL },
	{ "config.stats", T_BOOL, READ_ONLY, NULL },
	{ "config.utrace", T_BOOL, READ_ONLY, NULL },
	{ "config.xmalloc", T_BOOL, READ_ONLY, NULL },

	{ "opt.abort", T_BOOL, READ_ONLY, NULL },
	{ "opt.retain", T_BOOL, READ_ONLY, NULL },
	{ "opt.narenas", T_UNSIGNED, READ_ONLY, NULL },
	{ "opt.percpu_arena", T_STRING, READ_ONLY, NULL },
	{ "opt.background_thread", T_BOOL, READ_ONLY, NULL },
	{ "opt.dirty_decay_ms", T_SSIZE, READ_ONLY, NULL },
	{ "opt.muzzy_decay_ms", T_SSIZE, READ_ONLY, NULL },
	{ "opt.stats_print", T_BOOL, READ_ONLY, NULL },
	{ "opt.junk", T_STRING, READ_ONLY, "fill" },
	{ "opt.zero", T_BOOL, READ_ONLY, "fill" },
	{ "opt.utrace", T_BOOL, READ_ONLY, "utrace" },
	{ "opt.xmalloc", T_BOOL, READ_ONLY, "xmalloc" },
	{ "opt.tcache", T_BOOL, READ_ONLY, NULL },
	{ "opt.tcache_max", T_SIZE, READ_ONLY, NULL },
	{ "opt.thp", T_STRING, READ_ONLY, NULL },

	{ "thread.arena", T_UNSIGNED, READ_WRITE, NULL },
	{ "thread.allocated", T_UINT64, READ_ONLY, "stats" },
	{ "thread.deallocated", T_UINT64, READ_ONLY, "stats" },
	{ "thread.tcache.enabled", T_BOOL, READ_WRITE, NULL },
	{ "thread.tcache.flush", T_VOID, ACTION, NULL },
	{ "thread.idle", T_VOID, ACTION, NULL },

	{ "arena.0.initialized", T_BOOL, READ_ONLY, NULL },
	{ "arena.0.decay", T_VOID, ACTION, NULL },
	{ "arena.0.purge", T_VOID, ACTION, NULL },
	{ "arena.@.reset", T_VOID, ACTION, NULL },
	{ "arena.0.dirty_decay_ms", T_SSIZE, READ_WRITE, NULL },

	{ "arenas.narenas", T_UNSIGNED, READ_ONLY, NULL },
	{ "arenas.dirty_decay_ms", T_SSIZE, READ_WRITE, NULL },
	{ "arenas.quantum", T_SIZE, READ_ONLY, NULL },
	{ "arenas.page", T_SIZE, READ_ONLY, NULL },
	{ "arenas.tcache_max", T_SIZE, READ_ONLY, NULL },
	{ "arenas.nbins", T_UNSIGNED, READ_ONLY, NULL },
	{ "arenas.nhbins", T_UNSIGNED, READ_ONLY, NULL },
	{ "arenas.bin.0.size", T_SIZE, READ_ONLY, NULL },
	{ "arenas.bin.0.nregs", T_UINT32, READ_ONLY, NULL },
	{ "arenas.bin.0.slab_size", T_SIZE, READ_ONLY, NULL },
	{ "arenas.nlextents", T_UNSIGNED, READ_ONLY, NULL },
	{ "arenas.lextent.0.size", T_SIZE, READ_ONLY, NULL },

	{ "stats.allocated", T_SIZE, READ_ONLY, "stats" },
	{ "stats.active", T_SIZE, READ_ONLY, "stats" },
	{ "stats.metadata", T_SIZE, READ_ONLY, "stats" },
	{ "stats.resident", T_SIZE, READ_ONLY, "stats" },
	{ "stats.mapped", T_SIZE, READ_ONLY, "stats" },
	{ "stats.retained", T_SIZE, READ_ONLY, "stats" },
	{ "stats.zero_reallocs", T_SIZE, READ_ONLY, "stats" },
	{ "stats.background_thread.num_threads", T_SIZE, READ_ONLY, "stats" },
	{ "stats.background_thread.num_runs", T_UINT64, READ_ONLY, "stats" },
	{ "stats.background_thread.run_interval", T_UINT64, READ_ONLY, "stats" },
	{ "stats.mutexes.reset", T_VOID, ACTION, "stats" },

	{ "stats.arenas.0.nthreads", T_UNSIGNED, READ_ONLY, NULL },
	{ "stats.arenas.0.uptime", T_UINT64, READ_ONLY, NULL },
	{ "stats.arenas.0.pactive", T_SIZE, READ_ONLY, NULL },
	{ "stats.arenas.0.pdirty", T_SIZE, READ_ONLY, NULL },
	{ "stats.arenas.0.pmuzzy", T_SIZE, READ_ONLY, NULL },
	{ "stats.arenas.0.mapped", T_SIZE, READ_ONLY, "stats" },
	{ "stats.arenas.0.retained", T_SIZE, READ_ONLY, "stats" },
	{ "stats.arenas.0.base", T_SIZE, READ_ONLY, "stats" },
	{ "stats.arenas.0.resident", T_SIZE, READ_ONLY, "stats" },
	{ "stats.arenas.0.dirty_npurge", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.dirty_purged", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.small.allocated", T_SIZE, READ_ONLY, "stats" },
	{ "stats.arenas.0.small.nmalloc", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.small.ndalloc", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.small.nrequests", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.large.allocated", T_SIZE, READ_ONLY, "stats" },
	{ "stats.arenas.0.large.nmalloc", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.large.ndalloc", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.large.nrequests", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.bins.0.nmalloc", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.bins.0.ndalloc", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.bins.0.nrequests", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.bins.0.curregs", T_SIZE, READ_ONLY, "stats" },
	{ "stats.arenas.0.bins.0.nfills", T_UINT64, READ_ONLY, NULL },
	{ "stats.arenas.0.bins.0.nflushes", T_UINT64, READ_ONLY, NULL },
	{ "stats.arenas.0.bins.0.nslabs", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.bins.0.nreslabs", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.bins.0.curslabs", T_SIZE, READ_ONLY, "stats" },
	{ "stats.arenas.0.lextents.0.nmalloc", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.lextents.0.ndalloc", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.lextents.0.nrequests", T_UINT64, READ_ONLY, "stats" },
	{ "stats.arenas.0.lextents.0.curlextents", T_SIZE, READ_ONLY, "stats" },
};

/* stats.mutexes.<mutex>.<counter> for the global mutexes the manual
 * names ([--enable-stats]); each counter has its own type. */
static const char *const g_global_mutexes[] = {
	"ctl", "background_thread", "prof", "prof_thds_data", "prof_dump",
};

static const struct {
	const char *name;
	enum ctl_type type;
} g_mutex_counters[] = {
	{ "num_ops", T_UINT64 },
	{ "num_spin_acq", T_UINT64 },
	{ "num_wait", T_UINT64 },
	{ "max_wait_time", T_UINT64 },
	{ "total_wait_time", T_UINT64 },
	{ "max_num_thds", T_UINT32 },
	{ "num_owner_switch", T_UINT64 },
};

static size_t type_size(enum ctl_type type)
{
	switch (type) {
	case T_BOOL: return sizeof(bool);
	case T_UNSIGNED: return sizeof(unsigned);
	case T_UINT32: return sizeof(uint32_t);
	case T_SIZE: return sizeof(size_t);
	case T_SSIZE: return sizeof(ssize_t);
	case T_UINT64: return sizeof(uint64_t);
	case T_STRING: return sizeof(const char *);
	case T_VOID: break;
	}
	return 0;
}

static const char *type_name(enum ctl_type type)
{
	static const char *const names[] = {
		"void", "bool", "unsigned", "uint32_t", "size_t", "ssize_t",
		"uint64_t", "const char *",
	};
	return names[type];
}

/* The arena arenas.create made for these checks (the "@" in names). */
static unsigned g_made_arena = UINT32_MAX;

static void expand_name(const char *pattern, char *out, size_t outlen)
{
	const char *at = strchr(pattern, '@');
	if (at == NULL)
		snprintf(out, outlen, "%s", pattern);
	else
		snprintf(out, outlen, "%.*s%u%s", (int)(at - pattern), pattern,
		    g_made_arena, at + 1);
}

/* A value of TYPE the manual's meaning allows (a string: readable text). */
static const char *plausible(const char *name, enum ctl_type type, const void *value)
{
	if (type == T_BOOL) {
		unsigned char b;
		memcpy(&b, value, 1);
		if (b > 1)
			return failf("%s: bool holds %u", name, b);
	} else if (type == T_STRING) {
		const char *s;
		memcpy(&s, value, sizeof s);
		if (s == NULL)
			return failf("%s: NULL string", name);
		size_t n = strnlen(s, 4096);
		if (n == 4096)
			return failf("%s: no end to the string", name);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
				return failf("%s: string with byte 0x%02x", name, (unsigned char)s[i]);
	}
	return NULL;
}

/* Read with the documented size, a wrong size must give EINVAL; r- names
 * refuse writes (EPERM), rw names take back what they gave, "--" names
 * run with no value.  (The manual's EPERM for reading a void name is not
 * checked: jemalloc 5.3 itself answers a read of stats.mutexes.reset.) */
static const char *check_name(const char *name, enum ctl_type type,
    enum ctl_access access, const char *needs)
{
	unsigned char value[16], other[16];
	size_t size = type_size(type), len;
	int err;

	if (access == ACTION) {
		err = ctl_call(name);
		if (err == ENOENT && needs != NULL && config_off(needs))
			return NULL;
		if (err != 0)
			return failf("run: %s", strerror(err));
		return NULL;
	}

	memset(value, 0, sizeof value);
	len = size;
	err = mallctl(name, value, &len, NULL, 0);
	if (err == ENOENT && needs != NULL && config_off(needs))
		return NULL;
	if (err != 0)
		return failf("read as %s: %s", type_name(type), strerror(err));
	if (len != size)
		return failf("read as %s: length %zu", type_name(type), len);
	const char *why = plausible(name, type, value);
	if (why != NULL)
		return why;

	/* A smaller and a larger buffer both give EINVAL. */
	size_t wrong[2] = { size / 2, size * 2 };
	for (int i = 0; i < 2; i++) {
		len = wrong[i];
		err = mallctl(name, other, &len, NULL, 0);
		if (err != EINVAL)
			return failf("read with oldlen %zu (%s is %zu bytes): %s, not EINVAL",
			    wrong[i], type_name(type), size, err ? strerror(err) : "success");
	}

	if (access == READ_ONLY) {
		err = ctl_set(name, value, size);
		if (err != EPERM)
			return failf("write to a read-only name: %s, not EPERM",
			    err ? strerror(err) : "accepted");
		return NULL;
	}
	err = ctl_set(name, value, size + 1);
	if (err != EINVAL)
		return failf("write with newlen %zu: %s, not EINVAL", size + 1,
		    err ? strerror(err) : "accepted");
	err = ctl_set(name, value, size);
	if (err != 0)
		return failf("write back of the value read: %s", strerror(err));
	return NULL;
}

static void check_names(void)
{
	char name[128], label[192];

	for (size_t i = 0; i < sizeof g_names / sizeof g_names[0]; i++) {
		const struct ctl_name *n = &g_names[i];
		expand_name(n->name, name, sizeof name);
		snprintf(label, sizeof label, "mallctl %s (%s) %s", n->name,
		    type_name(n->type),
		    n->access == READ_ONLY ? "r-" : n->access == READ_WRITE ? "rw" : "--");
		report(label, check_name(name, n->type, n->access, n->needs));
	}
	for (size_t m = 0; m < sizeof g_global_mutexes / sizeof g_global_mutexes[0]; m++)
		for (size_t c = 0; c < sizeof g_mutex_counters / sizeof g_mutex_counters[0]; c++) {
			snprintf(name, sizeof name, "stats.mutexes.%s.%s",
			    g_global_mutexes[m], g_mutex_counters[c].name);
			snprintf(label, sizeof label, "mallctl %s (%s) r-", name,
			    type_name(g_mutex_counters[c].type));
			report(label, check_name(name, g_mutex_counters[c].type,
			    READ_ONLY, "stats"));
		}
}

/* ------------------------------------------------------------------ */
/* Option values with a documented set of settings */

static const char *check_string_settings(void)
{
	static const struct {
		const char *name;
		const char *needs;
		const char *settings[5];
	} options[] = {
		{ "opt.junk", "fill", { "true", "false", "alloc", "free", NULL } },
		{ "opt.thp", NULL, { "default", "always", "never", NULL } },
		{ "opt.percpu_arena", NULL, { "disabled", "percpu", "phycpu", NULL } },
	};
	for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
		const char *value = NULL;
		int err = ctl_get(options[i].name, &value, sizeof value);
		if (err == ENOENT && options[i].needs && config_off(options[i].needs))
			continue;
		if (err != 0 || value == NULL)
			return failf("%s: not readable as a string", options[i].name);
		bool known = false;
		for (int s = 0; options[i].settings[s] != NULL; s++)
			known |= strcmp(value, options[i].settings[s]) == 0;
		if (!known)
			return failf("%s is \"%s\", not a documented setting", options[i].name, value);
	}
	return NULL;
}

static const char *check_decay_settings(void)
{
	static const char *const names[] = {
		"opt.dirty_decay_ms", "opt.muzzy_decay_ms", "arenas.dirty_decay_ms",
		"arena.0.dirty_decay_ms",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		ssize_t ms = -2;
		if (ctl_get(names[i], &ms, sizeof ms) != 0)
			return failf("%s: not readable as ssize_t", names[i]);
		if (ms < -1)
			return failf("%s is %zd (the manual allows -1 or more)", names[i], ms);
	}
	return NULL;
}

static const char *check_thread_tcache_enabled(void)
{
	bool opt = false, enabled = false, off = false, back = true;
	if (ctl_get("opt.tcache", &opt, sizeof opt) != 0 ||
	    ctl_get("thread.tcache.enabled", &enabled, sizeof enabled) != 0)
		return failf("opt.tcache or thread.tcache.enabled unreadable");
	if (enabled != opt)
		return failf("thread.tcache.enabled %d where opt.tcache is %d", enabled, opt);
	if (ctl_set("thread.tcache.enabled", &off, sizeof off) != 0)
		return failf("thread.tcache.enabled: writing false refused");
	bool now = true;
	ctl_get("thread.tcache.enabled", &now, sizeof now);
	void *p = mallocx(64, 0);
	dallocx(p, 0);
	ctl_set("thread.tcache.enabled", &enabled, sizeof enabled);
	ctl_get("thread.tcache.enabled", &back, sizeof back);
	if (now)
		return failf("thread.tcache.enabled reads true after writing false");
	if (back != enabled)
		return failf("thread.tcache.enabled does not take back %d", enabled);
	return NULL;
}

static const char *check_background_thread_switch(void)
{
	bool initial = true, opt = true, on = true, off = false, got;
	if (ctl_get("background_thread", &initial, sizeof initial) != 0 ||
	    ctl_get("opt.background_thread", &opt, sizeof opt) != 0)
		return failf("background_thread or opt.background_thread unreadable");
	if (initial != opt)
		return failf("background_thread %d where opt.background_thread is %d", initial, opt);
	if (ctl_set("background_thread", &on, sizeof on) != 0)
		return failf("background_thread: writing true refused");
	got = false;
	ctl_get("background_thread", &got, sizeof got);
	if (!got)
		return failf("background_thread reads false after writing true");
	if (ctl_set("background_thread", &off, sizeof off) != 0)
		return failf("background_thread: writing false refused");
	got = true;
	ctl_get("background_thread", &got, sizeof got);
	if (got)
		return failf("background_thread reads true after writing false");
	ctl_set("background_thread", &initial, sizeof initial);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The allocation functions */

static const char *check_flag_values(void)
{
	/* A program compiled against one header runs on the other library:
	 * the flags are part of the binary interface (jemalloc 5.3's). */
	if (MALLOCX_LG_ALIGN(12) != 12)
		return failf("MALLOCX_LG_ALIGN(12) is %d", MALLOCX_LG_ALIGN(12));
	if (MALLOCX_ALIGN(4096) != 12)
		return failf("MALLOCX_ALIGN(4096) is %d", MALLOCX_ALIGN(4096));
	if (MALLOCX_ZERO != 0x40)
		return failf("MALLOCX_ZERO is %#x", MALLOCX_ZERO);
	if (MALLOCX_TCACHE_NONE != 0x100)
		return failf("MALLOCX_TCACHE_NONE is %#x", MALLOCX_TCACHE_NONE);
	if (MALLOCX_ARENA(3) != 4 << 20)
		return failf("MALLOCX_ARENA(3) is %#x", MALLOCX_ARENA(3));
#ifndef MALLCTL_ARENAS_ALL
	return failf("the header defines no MALLCTL_ARENAS_ALL");
#else
	if (MALLCTL_ARENAS_ALL != 4096)
		return failf("MALLCTL_ARENAS_ALL is %d", MALLCTL_ARENAS_ALL);
	return NULL;
#endif
}

static const char *check_mallocx_sizes(void)
{
	for (size_t i = 0; i < NSIZES; i++) {
		size_t size = g_sizes[i];
		unsigned char *p = mallocx(size, 0);
		if (p == NULL)
			return failf("mallocx(%zu, 0) failed", size);
		size_t real = sallocx(p, 0);
		if (real < size)
			return failf("sallocx %zu < %zu", real, size);
		if (malloc_usable_size(p) < size)
			return failf("malloc_usable_size %zu < %zu", malloc_usable_size(p), size);
		fill(p, 0x3c, real);
		dallocx(p, 0);
	}
	return NULL;
}

static const char *check_nallocx_matches(void)
{
	/* MALLOCX_ALIGN may call ffs(): not a constant expression. */
	const int flag_sets[] = {
		0, MALLOCX_ZERO, MALLOCX_TCACHE_NONE, MALLOCX_LG_ALIGN(6),
		MALLOCX_ALIGN(4096), MALLOCX_ALIGN(1 << 16) | MALLOCX_ZERO,
	};
	for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++)
		for (size_t i = 0; i < NSIZES; i++) {
			int flags = flag_sets[f];
			size_t predicted = nallocx(g_sizes[i], flags);
			void *p = mallocx(g_sizes[i], flags);
			if (p == NULL)
				return failf("mallocx(%zu, %#x) failed", g_sizes[i], flags);
			size_t real = sallocx(p, 0);
			dallocx(p, flags);
			if (predicted != real)
				return failf("nallocx(%zu, %#x) = %zu, sallocx of mallocx = %zu",
				    g_sizes[i], flags, predicted, real);
		}
	return NULL;
}

static const char *check_too_big(void)
{
	if (nallocx(COMPAT_TOO_BIG, 0) != 0)
		return failf("nallocx(PTRDIFF_MAX + 1) = %zu, not 0", nallocx(COMPAT_TOO_BIG, 0));
	if (nallocx(SIZE_MAX, 0) != 0)
		return failf("nallocx(SIZE_MAX) = %zu, not 0", nallocx(SIZE_MAX, 0));
	void *p = mallocx(COMPAT_TOO_BIG, 0);
	if (p != NULL)
		return failf("mallocx(PTRDIFF_MAX + 1) returned a block");
	return NULL;
}

static const char *check_alignment(void)
{
	for (unsigned lg = 0; lg <= 22; lg++)
		for (size_t i = 0; i < NSIZES; i++) {
			size_t align = (size_t)1 << lg, size = g_sizes[i];
			int by_lg = MALLOCX_LG_ALIGN(lg), by_value = MALLOCX_ALIGN(align);
			void *p = mallocx(size, by_lg);
			void *q = mallocx(size, by_value);
			if (p == NULL || q == NULL)
				return failf("mallocx(%zu, align %zu) failed", size, align);
			if ((uintptr_t)p % align != 0 || (uintptr_t)q % align != 0)
				return failf("mallocx(%zu, align %zu) gave %p and %p", size, align, p, q);
			if (sallocx(p, by_lg) < size || sallocx(q, by_value) < size)
				return failf("mallocx(%zu, align %zu): sallocx below the size", size, align);
			sdallocx(p, size, by_lg);
			dallocx(q, by_value);
		}
	/* rallocx honours the alignment flag when it moves or grows. */
	void *p = mallocx(100, 0);
	for (unsigned lg = 4; lg <= 21; lg++) {
		size_t align = (size_t)1 << lg;
		void *q = rallocx(p, 100 + lg * 1000, MALLOCX_LG_ALIGN(lg));
		if (q == NULL)
			return failf("rallocx to align %zu failed", align);
		p = q;
		if ((uintptr_t)p % align != 0)
			return failf("rallocx with align %zu gave %p", align, p);
	}
	dallocx(p, 0);
	return NULL;
}

/* Leaves dirty (non-zero) freed memory of about SIZE for the next
 * allocation to reuse, so that zeroing is really seen. */
static void dirty_freed_memory(size_t size)
{
	void *blocks[16];
	for (int i = 0; i < 16; i++) {
		blocks[i] = malloc(size);
		if (blocks[i] != NULL)
			fill(blocks[i], 0xa5, size);
	}
	for (int i = 15; i >= 0; i--)
		free(blocks[i]);
}

static const char *check_mallocx_zero(void)
{
	for (size_t i = 0; i < NSIZES; i++) {
		size_t size = g_sizes[i];
		dirty_freed_memory(size);
		for (int round = 0; round < 4; round++) {
			int flags = MALLOCX_ZERO | (round & 1 ? MALLOCX_TCACHE_NONE : 0) |
			    (round & 2 ? MALLOCX_LG_ALIGN(6) : 0);
			unsigned char *p = mallocx(size, flags);
			if (p == NULL)
				return failf("mallocx(%zu, ZERO) failed", size);
			size_t at = first_other(p, 0, size);
			if (at != size)
				return failf("mallocx(%zu, %#x): byte %zu not zero", size, flags, at);
			fill(p, 0xa5, sallocx(p, 0));
			dallocx(p, flags);
		}
	}
	return NULL;
}

/* MALLOCX_ZERO on growth: the real size before is the boundary between
 * the bytes kept and the bytes zeroed. */
static const char *check_rallocx_zero(void)
{
	static const size_t steps[] = { 10, 100, 3000, 20000, 200000, 3u << 20, 6u << 20 };
	dirty_freed_memory(6u << 20);
	dirty_freed_memory(20000);
	unsigned char *p = mallocx(steps[0], 0);
	size_t real = sallocx(p, 0);
	fill(p, 0x77, real);
	for (size_t i = 1; i < sizeof steps / sizeof steps[0]; i++) {
		unsigned char *q = rallocx(p, steps[i], MALLOCX_ZERO);
		if (q == NULL)
			return failf("rallocx(%zu, ZERO) failed", steps[i]);
		size_t at = first_other(q, 0x77, real);
		if (at != real)
			return failf("rallocx(%zu -> %zu, ZERO): kept byte %zu changed",
			    real, steps[i], at);
		at = first_other(q + real, 0, steps[i] - real);
		if (at != steps[i] - real)
			return failf("rallocx(%zu -> %zu, ZERO): new byte %zu not zero",
			    real, steps[i], real + at);
		p = q;
		real = sallocx(p, 0);
		fill(p, 0x77, real);
	}
	dallocx(p, 0);
	return NULL;
}

static const char *check_rallocx_contents(void)
{
	static const size_t steps[] = {
		16, 5000, 100, 200000, 4000, 5u << 20, 64, 3u << 20, 1,
	};
	unsigned char *p = mallocx(8, 0);
	size_t kept = 8;
	fill(p, 0x11, kept);
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		unsigned char *q = rallocx(p, steps[i], 0);
		if (q == NULL)
			return failf("rallocx to %zu failed", steps[i]);
		size_t keep = kept < steps[i] ? kept : steps[i];
		size_t at = first_other(q, 0x11, keep);
		if (at != keep)
			return failf("rallocx to %zu: byte %zu of %zu lost", steps[i], at, keep);
		if (sallocx(q, 0) < steps[i])
			return failf("rallocx to %zu: sallocx %zu", steps[i], sallocx(q, 0));
		p = q;
		kept = steps[i];
		fill(p, 0x11, kept);
	}
	dallocx(p, 0);
	return NULL;
}

static const char *check_rallocx_failure(void)
{
	static const size_t sizes[] = { 100, 20000, 3u << 20 };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		unsigned char *p = mallocx(sizes[i], 0);
		size_t real = sallocx(p, 0);
		fill(p, 0x42, real);
		void *q = rallocx(p, COMPAT_TOO_BIG, 0);
		if (q != NULL)
			return failf("rallocx(%zu -> PTRDIFF_MAX + 1) succeeded", sizes[i]);
		if (sallocx(p, 0) != real)
			return failf("after a failed rallocx sallocx %zu, was %zu", sallocx(p, 0), real);
		size_t at = first_other(p, 0x42, real);
		if (at != real)
			return failf("after a failed rallocx byte %zu changed", at);
		dallocx(p, 0);
	}
	return NULL;
}

/* xallocx never moves (it cannot: it returns a size) and its answer is
 * the block's real size afterwards; bytes it adds under MALLOCX_ZERO are
 * zero; the bytes before are kept. */
static const char *check_xallocx(void)
{
	static const struct {
		size_t start, size, extra;
	} cases[] = {
		{ 100, 100, 0 }, { 100, 90, 0 }, { 100, 110, 0 }, { 100, 5000, 0 },
		{ 5000, 5000, 1000 }, { 20000, 40000, 0 }, { 20000, 16384, 0 },
		{ 200000, 300000, 100000 }, { 300000, 100000, 0 },
		{ 3u << 20, 4u << 20, 0 }, { 4u << 20, 3u << 20, 0 },
		{ 3u << 20, 3u << 20, 2u << 20 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		for (int zero = 0; zero < 2; zero++) {
			int flags = zero ? MALLOCX_ZERO : 0;
			unsigned char *p = mallocx(cases[i].start, 0);
			size_t before = sallocx(p, 0);
			fill(p, 0x5e, before);
			size_t got = xallocx(p, cases[i].size, cases[i].extra, flags);
			size_t after = sallocx(p, 0);
			if (got != after)
				return failf("xallocx(%zu -> %zu + %zu) returned %zu, sallocx %zu",
				    cases[i].start, cases[i].size, cases[i].extra, got, after);
			if (cases[i].size <= before && got < cases[i].size)
				return failf("xallocx(%zu -> %zu) shrank below the size: %zu",
				    cases[i].start, cases[i].size, got);
			size_t keep = before < got ? before : got;
			size_t at = first_other(p, 0x5e, keep);
			if (at != keep)
				return failf("xallocx(%zu -> %zu): byte %zu changed",
				    cases[i].start, cases[i].size, at);
			if (zero && got > before && first_other(p + before, 0, got - before) != got - before)
				return failf("xallocx(%zu -> %zu, ZERO): grown bytes not zero",
				    cases[i].start, cases[i].size);
			dallocx(p, 0);
		}
	}
	return NULL;
}

#ifdef COMPAT_HAVE_REALLOCF
static const char *check_reallocf(void)
{
	char *p = malloc(100);
	memcpy(p, "reallocf", 9);
	char *q = reallocf(p, 100000);
	if (q == NULL || strcmp(q, "reallocf") != 0)
		return failf("reallocf growth lost the block");
	if (!config_off("stats")) {
		uint64_t freed_before = 0, freed_after = 0;
		ctl_get("thread.deallocated", &freed_before, sizeof freed_before);
		errno = 0;
		if (reallocf(q, COMPAT_TOO_BIG) != NULL)
			return failf("reallocf(PTRDIFF_MAX + 1) succeeded");
		if (errno != ENOMEM)
			return failf("reallocf failure: errno %d, not ENOMEM", errno);
		ctl_get("thread.deallocated", &freed_after, sizeof freed_after);
		if (freed_after - freed_before < 100000)
			return failf("reallocf failure did not free the block "
			    "(thread.deallocated grew by %llu)",
			    (unsigned long long)(freed_after - freed_before));
	} else if (reallocf(q, COMPAT_TOO_BIG) != NULL) {
		return failf("reallocf(PTRDIFF_MAX + 1) succeeded");
	}
	return NULL;
}
#endif

/* ------------------------------------------------------------------ */
/* Arenas: arenas.create, MALLOCX_ARENA with MALLOCX_TCACHE_NONE and the
 * statistics that count each call, dallocx/sdallocx, reset, purge. */

static const char *check_arenas_create(void)
{
	unsigned narenas_opt = 0, before = 0, after = 0, made = UINT32_MAX;
	ctl_get("opt.narenas", &narenas_opt, sizeof narenas_opt);
	ctl_get("arenas.narenas", &before, sizeof before);

	/* A wrong size: no arena, nothing written, *oldlenp 0. */
	unsigned char buf[2 * sizeof(unsigned)];
	memset(buf, 0xee, sizeof buf);
	size_t len = sizeof buf;
	if (mallctl("arenas.create", buf, &len, NULL, 0) == ENOENT)
		return failf("no arenas.create (ENOENT)");
	if (len != 0)
		return failf("arenas.create with oldlen %zu: *oldlenp %zu, not 0", sizeof buf, len);
	if (first_other(buf, 0xee, sizeof buf) != sizeof buf)
		return failf("arenas.create with a wrong oldlen wrote to oldp");
	ctl_get("arenas.narenas", &after, sizeof after);
	if (after != before)
		return failf("arenas.create with a wrong oldlen made an arena (%u -> %u)", before, after);

	if (ctl_get("arenas.create", &made, sizeof made) != 0)
		return failf("arenas.create failed");
	ctl_get("arenas.narenas", &after, sizeof after);
	if (made < narenas_opt)
		return failf("arenas.create gave %u, inside the automatic arenas (%u)", made, narenas_opt);
	if (made >= after)
		return failf("arenas.create gave %u, arenas.narenas is %u", made, after);
	/* initialized: "prior to the current epoch". */
	char name[64];
	bool initialized = false;
	refresh_stats();
	snprintf(name, sizeof name, "arena.%u.initialized", made);
	if (ctl_get(name, &initialized, sizeof initialized) != 0 || !initialized)
		return failf("%s is not true", name);
	g_made_arena = made;
	return NULL;
}

/* The bin whose size class serves SIZE, or UINT32_MAX. */
static unsigned bin_of(size_t size)
{
	unsigned nbins = 0;
	size_t class_size = nallocx(size, 0);
	ctl_get("arenas.nbins", &nbins, sizeof nbins);
	for (unsigned j = 0; j < nbins; j++)
		if (ctl_size("arenas.bin.%u.size", j, 0) == class_size)
			return j;
	return UINT32_MAX;
}

static unsigned lextent_of(size_t size)
{
	unsigned n = 0;
	size_t class_size = nallocx(size, 0);
	ctl_get("arenas.nlextents", &n, sizeof n);
	for (unsigned j = 0; j < n; j++)
		if (ctl_size("arenas.lextent.%u.size", j, 0) == class_size)
			return j;
	return UINT32_MAX;
}

#define COUNTED 10

static const char *check_arena_flag_small(void)
{
	unsigned a = g_made_arena, j = bin_of(40);
	int flags = MALLOCX_ARENA(a) | MALLOCX_TCACHE_NONE;
	void *blocks[COUNTED];

	if (j == UINT32_MAX)
		return failf("no bin has size nallocx(40, 0) = %zu", nallocx(40, 0));
	refresh_stats();
	uint64_t nmalloc0 = ctl_u64("stats.arenas.%u.bins.%u.nmalloc", a, j);
	uint64_t ndalloc0 = ctl_u64("stats.arenas.%u.bins.%u.ndalloc", a, j);
	size_t curregs0 = ctl_size("stats.arenas.%u.bins.%u.curregs", a, j);
	for (int i = 0; i < COUNTED; i++)
		if ((blocks[i] = mallocx(40, flags)) == NULL)
			return failf("mallocx(40, ARENA(%u) | TCACHE_NONE) failed", a);
	refresh_stats();
	uint64_t nmalloc = ctl_u64("stats.arenas.%u.bins.%u.nmalloc", a, j);
	size_t curregs = ctl_size("stats.arenas.%u.bins.%u.curregs", a, j);
	size_t small = ctl_size("stats.arenas.%u.small.allocated", a, 0);
	if (nmalloc - nmalloc0 != COUNTED || curregs - curregs0 != COUNTED)
		return failf("%d mallocx in arena %u (no tcache): bins.%u.nmalloc +%llu, curregs +%zu",
		    COUNTED, a, j, (unsigned long long)(nmalloc - nmalloc0), curregs - curregs0);
	if (small < COUNTED * nallocx(40, 0))
		return failf("stats.arenas.%u.small.allocated %zu after %d blocks of %zu",
		    a, small, COUNTED, nallocx(40, 0));
	/* Half freed with dallocx, half with sdallocx at the requested or
	 * the real size (both within the documented range). */
	for (int i = 0; i < COUNTED; i++) {
		if (i % 2 == 0)
			dallocx(blocks[i], flags);
		else
			sdallocx(blocks[i], i % 4 == 1 ? 40 : nallocx(40, 0), flags);
	}
	refresh_stats();
	uint64_t ndalloc = ctl_u64("stats.arenas.%u.bins.%u.ndalloc", a, j);
	curregs = ctl_size("stats.arenas.%u.bins.%u.curregs", a, j);
	if (ndalloc - ndalloc0 != COUNTED || curregs != curregs0)
		return failf("dallocx/sdallocx of %d (no tcache): bins.%u.ndalloc +%llu, curregs %zu (was %zu)",
		    COUNTED, j, (unsigned long long)(ndalloc - ndalloc0), curregs, curregs0);
	return NULL;
}

static const char *check_arena_flag_large(void)
{
	unsigned a = g_made_arena, j = lextent_of(1u << 20);
	int flags = MALLOCX_ARENA(a) | MALLOCX_TCACHE_NONE;

	if (j == UINT32_MAX)
		return failf("no large class has size nallocx(1 MiB, 0) = %zu", nallocx(1u << 20, 0));
	refresh_stats();
	uint64_t nmalloc0 = ctl_u64("stats.arenas.%u.large.nmalloc", a, 0);
	uint64_t ndalloc0 = ctl_u64("stats.arenas.%u.large.ndalloc", a, 0);
	void *p = mallocx(1u << 20, flags);
	if (p == NULL)
		return failf("mallocx(1 MiB, ARENA(%u)) failed", a);
	refresh_stats();
	size_t allocated = ctl_size("stats.arenas.%u.large.allocated", a, 0);
	uint64_t nmalloc = ctl_u64("stats.arenas.%u.large.nmalloc", a, 0);
	size_t cur = ctl_size("stats.arenas.%u.lextents.%u.curlextents", a, j);
	if (allocated < (1u << 20) || nmalloc - nmalloc0 != 1 || cur != 1)
		return failf("1 MiB in arena %u: large.allocated %zu, large.nmalloc +%llu, "
		    "lextents.%u.curlextents %zu", a, allocated,
		    (unsigned long long)(nmalloc - nmalloc0), j, cur);
	sdallocx(p, 1u << 20, flags);
	refresh_stats();
	uint64_t ndalloc = ctl_u64("stats.arenas.%u.large.ndalloc", a, 0);
	cur = ctl_size("stats.arenas.%u.lextents.%u.curlextents", a, j);
	if (ndalloc - ndalloc0 != 1 || cur != 0)
		return failf("after sdallocx: large.ndalloc +%llu, curlextents %zu",
		    (unsigned long long)(ndalloc - ndalloc0), cur);
	return NULL;
}

/* arena.<i>.purge gives back every unused dirty page, and the purge is
 * counted. */
static const char *check_arena_purge(void)
{
	unsigned a = g_made_arena;
	int flags = MALLOCX_ARENA(a) | MALLOCX_TCACHE_NONE;
	ssize_t keep = 10000;
	char name[64];

	snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", a);
	ctl_set(name, &keep, sizeof keep);
	/* 512 KiB: a large block in an arena whatever the library's chunk or
	 * extent size (a bigger one may be served apart from every arena). */
	unsigned char *p = mallocx(512u << 10, flags);
	if (p == NULL)
		return failf("mallocx(512 KiB, ARENA(%u)) failed", a);
	fill(p, 0x61, 512u << 10);
	dallocx(p, flags);
	refresh_stats();
	uint64_t npurge0 = ctl_u64("stats.arenas.%u.dirty_npurge", a, 0);
	uint64_t purged0 = ctl_u64("stats.arenas.%u.dirty_purged", a, 0);
	size_t dirty0 = ctl_size("stats.arenas.%u.pdirty", a, 0);
	snprintf(name, sizeof name, "arena.%u.purge", a);
	if (ctl_call(name) != 0)
		return failf("%s failed", name);
	refresh_stats();
	uint64_t npurge = ctl_u64("stats.arenas.%u.dirty_npurge", a, 0);
	uint64_t purged = ctl_u64("stats.arenas.%u.dirty_purged", a, 0);
	size_t dirty = ctl_size("stats.arenas.%u.pdirty", a, 0);
	if (dirty0 == 0)
		return failf("a freed 512 KiB block left no dirty page in arena %u", a);
	if (dirty != 0)
		return failf("pdirty %zu after arena.%u.purge", dirty, a);
	if (npurge <= npurge0 || purged - purged0 < dirty0)
		return failf("purge of %zu dirty pages: dirty_npurge +%llu, dirty_purged +%llu",
		    dirty0, (unsigned long long)(npurge - npurge0),
		    (unsigned long long)(purged - purged0));
	return NULL;
}

static const char *check_arena_decay_ms(void)
{
	unsigned a = g_made_arena;
	ssize_t defaults = -2, initial = -2, got = -2;
	char name[64];
	snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", a);
	/* The arena was made with the arenas.dirty_decay_ms of its time;
	 * check_arena_purge set it to 10 s since, so make one more. */
	unsigned fresh = 0;
	if (ctl_get("arenas.dirty_decay_ms", &defaults, sizeof defaults) != 0 ||
	    ctl_get("arenas.create", &fresh, sizeof fresh) != 0)
		return failf("arenas.dirty_decay_ms or arenas.create failed");
	snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", fresh);
	ctl_get(name, &initial, sizeof initial);
	if (initial != defaults)
		return failf("new arena's dirty_decay_ms %zd, arenas.dirty_decay_ms %zd", initial, defaults);
	static const ssize_t values[] = { -1, 0, 2500 };
	for (size_t i = 0; i < 3; i++) {
		if (ctl_set(name, &values[i], sizeof values[i]) != 0)
			return failf("%s = %zd refused", name, values[i]);
		ctl_get(name, &got, sizeof got);
		if (got != values[i])
			return failf("%s reads %zd after writing %zd", name, got, values[i]);
	}
	return NULL;
}

/* arena.<i>.reset on an arena made by arenas.create: its blocks are gone
 * (none is touched afterwards) and it serves new ones. */
static const char *check_arena_reset(void)
{
	unsigned a = g_made_arena;
	int flags = MALLOCX_ARENA(a) | MALLOCX_TCACHE_NONE;
	char name[64];

	for (int i = 0; i < COUNTED; i++)
		if (mallocx(100 + 1000 * i, flags) == NULL)
			return failf("mallocx in arena %u failed", a);
	if (mallocx(1u << 20, flags) == NULL)
		return failf("mallocx in arena %u failed", a);
	ctl_call("thread.tcache.flush");
	snprintf(name, sizeof name, "arena.%u.reset", a);
	if (ctl_call(name) != 0)
		return failf("%s failed", name);
	refresh_stats();
	size_t small = ctl_size("stats.arenas.%u.small.allocated", a, 0);
	size_t large = ctl_size("stats.arenas.%u.large.allocated", a, 0);
	if (small != 0 || large != 0)
		return failf("after %s: small.allocated %zu, large.allocated %zu", name, small, large);
	void *p = mallocx(100, flags);
	if (p == NULL)
		return failf("arena %u serves nothing after the reset", a);
	dallocx(p, flags);
	return NULL;
}

static const char *check_arenas_all(void)
{
#ifdef MALLCTL_ARENAS_ALL
	char name[64];
	snprintf(name, sizeof name, "arena.%d.purge", MALLCTL_ARENAS_ALL);
	if (ctl_call(name) != 0)
		return failf("%s failed", name);
	snprintf(name, sizeof name, "arena.%d.decay", MALLCTL_ARENAS_ALL);
	if (ctl_call(name) != 0)
		return failf("%s failed", name);
	bool initialized = false;
	snprintf(name, sizeof name, "arena.%d.initialized", MALLCTL_ARENAS_ALL);
	if (ctl_get(name, &initialized, sizeof initialized) != 0 || !initialized)
		return failf("%s is not true", name);
	return NULL;
#else
	return failf("the header defines no MALLCTL_ARENAS_ALL");
#endif
}

/* ------------------------------------------------------------------ */
/* Statistics through mallctl */

static const char *check_epoch(void)
{
	uint64_t one = 1, first = 0, second = 0;
	size_t len = sizeof first;
	if (mallctl("epoch", &first, &len, &one, sizeof one) != 0)
		return failf("epoch refresh failed");
	len = sizeof second;
	mallctl("epoch", &second, &len, &one, sizeof one);
	if (second != first + 1)
		return failf("two refreshes gave epochs %llu then %llu",
		    (unsigned long long)first, (unsigned long long)second);

	size_t before = 0, after = 0;
	ctl_get("stats.allocated", &before, sizeof before);
	size_t big = 64u << 20;
	void *p = mallocx(big, 0);
	if (p == NULL)
		return failf("mallocx(64 MiB) failed");
	refresh_stats();
	ctl_get("stats.allocated", &after, sizeof after);
	dallocx(p, 0);
	if (after < before + big)
		return failf("stats.allocated %zu -> %zu over a 64 MiB block", before, after);
	refresh_stats();
	ctl_get("stats.allocated", &after, sizeof after);
	if (after + big / 2 > before + big)
		return failf("stats.allocated %zu after freeing it", after);
	return NULL;
}

static const char *check_thread_counters(void)
{
	uint64_t a0 = 0, a1 = 0, d0 = 0, d1 = 0;
	ctl_get("thread.allocated", &a0, sizeof a0);
	ctl_get("thread.deallocated", &d0, sizeof d0);
	void *p = mallocx(100000, 0);
	dallocx(p, 0);
	ctl_get("thread.allocated", &a1, sizeof a1);
	ctl_get("thread.deallocated", &d1, sizeof d1);
	if (a1 - a0 < 100000 || d1 - d0 < 100000)
		return failf("100000 bytes: thread.allocated +%llu, thread.deallocated +%llu",
		    (unsigned long long)(a1 - a0), (unsigned long long)(d1 - d0));
	return NULL;
}

static const char *check_zero_reallocs(void)
{
	size_t before = 0, after = 0;
	refresh_stats();
	ctl_get("stats.zero_reallocs", &before, sizeof before);
	void *p = malloc(50);
	void *q = realloc(p, 0); /* the result depends on opt.zero_realloc */
	free(q);
	refresh_stats();
	ctl_get("stats.zero_reallocs", &after, sizeof after);
	if (after != before + 1)
		return failf("realloc(p, 0): stats.zero_reallocs %zu -> %zu", before, after);
	return NULL;
}

static const char *check_uptime(void)
{
	uint64_t first = 0, second = 0;
	refresh_stats();
	ctl_get("stats.arenas.0.uptime", &first, sizeof first);
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	nanosleep(&pause, NULL);
	refresh_stats();
	ctl_get("stats.arenas.0.uptime", &second, sizeof second);
	if (first == 0 || second < first + 20 * 1000 * 1000)
		return failf("uptime %llu ns then %llu ns across 20 ms",
		    (unsigned long long)first, (unsigned long long)second);
	return NULL;
}

/* mallctlnametomib of an interior name, then the rest of the MIB filled
 * in (the arena index as an integer component). */
static const char *check_interior_mib(void)
{
	size_t interior[6], full[6], len_interior = 6, len_full = 6;
	if (mallctlnametomib("stats.arenas", interior, &len_interior) != 0)
		return failf("mallctlnametomib(\"stats.arenas\") failed");
	if (len_interior != 2)
		return failf("mallctlnametomib(\"stats.arenas\"): miblen %zu, not 2", len_interior);
	if (mallctlnametomib("stats.arenas.0.pactive", full, &len_full) != 0 || len_full != 4)
		return failf("mallctlnametomib(\"stats.arenas.0.pactive\") failed");
	if (full[0] != interior[0] || full[1] != interior[1] || full[2] != 0)
		return failf("\"stats.arenas\" is not the start of \"stats.arenas.0.pactive\"");

	/* A partial MIB: *miblenp smaller than the name's components. */
	size_t partial[6], len_partial = 3;
	if (mallctlnametomib("stats.arenas.0.pactive", partial, &len_partial) != 0 ||
	    len_partial != 3 || memcmp(partial, full, 3 * sizeof full[0]) != 0)
		return failf("a 3-component MIB of \"stats.arenas.0.pactive\" differs");

	size_t by_mib = 0, by_name = 1, len = sizeof by_mib;
	refresh_stats();
	full[2] = g_made_arena;
	if (mallctlbymib(full, len_full, &by_mib, &len, NULL, 0) != 0)
		return failf("mallctlbymib(stats.arenas.%u.pactive) failed", g_made_arena);
	by_name = ctl_size("stats.arenas.%u.pactive", g_made_arena, 0);
	if (by_mib != by_name)
		return failf("stats.arenas.%u.pactive: %zu by MIB, %zu by name",
		    g_made_arena, by_mib, by_name);
	full[2] = 100000;
	len = sizeof by_mib;
	if (mallctlbymib(full, len_full, &by_mib, &len, NULL, 0) != ENOENT)
		return failf("mallctlbymib of arena 100000: not ENOENT");
	return NULL;
}

/* The manual's own example: the MIB of arenas.bin.0.size with the bin
 * index changed; each bin's size is a size class, in increasing order. */
static const char *check_bin_iteration(void)
{
	unsigned nbins = 0;
	size_t mib[4], miblen = 4, previous = 0, quantum = 0;
	if (ctl_get("arenas.nbins", &nbins, sizeof nbins) != 0 || nbins == 0)
		return failf("arenas.nbins unreadable or 0");
	ctl_get("arenas.quantum", &quantum, sizeof quantum);
	if (mallctlnametomib("arenas.bin.0.size", mib, &miblen) != 0 || miblen != 4)
		return failf("mallctlnametomib(\"arenas.bin.0.size\") failed");
	for (unsigned i = 0; i < nbins; i++) {
		size_t size = 0, len = sizeof size;
		mib[2] = i;
		if (mallctlbymib(mib, miblen, &size, &len, NULL, 0) != 0)
			return failf("arenas.bin.%u.size by MIB failed", i);
		if (size <= previous)
			return failf("arenas.bin.%u.size %zu after %zu", i, size, previous);
		if (nallocx(size, 0) != size)
			return failf("arenas.bin.%u.size %zu: nallocx gives %zu", i, size, nallocx(size, 0));
		uint32_t nregs = 0;
		char name[64];
		snprintf(name, sizeof name, "arenas.bin.%u.nregs", i);
		ctl_get(name, &nregs, sizeof nregs);
		size_t slab = ctl_size("arenas.bin.%u.slab_size", i, 0);
		if (nregs == 0 || (size_t)nregs * size > slab)
			return failf("bin %u: %u regions of %zu in a slab of %zu", i, nregs, size, slab);
		previous = size;
	}
	if (nallocx(1, 0) != ctl_size("arenas.bin.0.size", 0, 0))
		return failf("nallocx(1) is not bin 0's size");
	if (ctl_size("arenas.lextent.0.size", 0, 0) <= previous)
		return failf("arenas.lextent.0.size not above the last bin (%zu)", previous);
	mib[2] = 100000;
	size_t size = 0, len = sizeof size;
	if (mallctlbymib(mib, miblen, &size, &len, NULL, 0) != ENOENT)
		return failf("arenas.bin.100000.size: not ENOENT");
	if (quantum == 0 || (quantum & (quantum - 1)) != 0)
		return failf("arenas.quantum %zu", quantum);
	return NULL;
}

static const char *check_unknown_names(void)
{
	size_t mib[4], miblen = 4, v, len = sizeof v;
	if (mallctl("no.such.name", &v, &len, NULL, 0) != ENOENT)
		return failf("mallctl(\"no.such.name\"): not ENOENT");
	if (mallctlnametomib("no.such.name", mib, &miblen) != ENOENT)
		return failf("mallctlnametomib(\"no.such.name\"): not ENOENT");
	len = sizeof v;
	if (mallctl("stats.arenas.100000.pactive", &v, &len, NULL, 0) != ENOENT)
		return failf("stats.arenas.100000.pactive: not ENOENT");
	return NULL;
}

static const char *check_arenas_sizes(void)
{
	size_t page = 0, tcache_max = 0, opt_tcache_max = 0;
	unsigned nhbins = 0, nbins = 0;
	ctl_get("arenas.page", &page, sizeof page);
	ctl_get("arenas.tcache_max", &tcache_max, sizeof tcache_max);
	ctl_get("opt.tcache_max", &opt_tcache_max, sizeof opt_tcache_max);
	ctl_get("arenas.nhbins", &nhbins, sizeof nhbins);
	ctl_get("arenas.nbins", &nbins, sizeof nbins);
	/* The allocator's page is chosen when it is built (jemalloc's and
	 * arenalloc's --with-lg-page): the system's or a bigger power of two. */
	if (page == 0 || (page & (page - 1)) != 0 || page % (size_t)sysconf(_SC_PAGESIZE) != 0)
		return failf("arenas.page %zu, not a multiple of the system's %ld", page,
		             sysconf(_SC_PAGESIZE));
	if (tcache_max == 0 || nallocx(tcache_max, 0) != tcache_max)
		return failf("arenas.tcache_max %zu is not a size class", tcache_max);
	if (tcache_max > opt_tcache_max && nallocx(opt_tcache_max, 0) != tcache_max)
		return failf("arenas.tcache_max %zu above opt.tcache_max %zu", tcache_max, opt_tcache_max);
	if (nhbins == 0)
		return failf("arenas.nhbins is 0");
	return NULL;
}

/* ------------------------------------------------------------------ */
/* malloc_stats_print */

struct text_sink {
	FILE *out;
	size_t bytes;
	char start[32];
	size_t start_len;
	int calls_with_wrong_opaque;
};

static void collect(void *opaque, const char *text)
{
	struct text_sink *sink = opaque;
	size_t n = strlen(text);
	if (sink->start_len < sizeof sink->start - 1) {
		size_t room = sizeof sink->start - 1 - sink->start_len;
		size_t take = n < room ? n : room;
		memcpy(sink->start + sink->start_len, text, take);
		sink->start_len += take;
		sink->start[sink->start_len] = '\0';
	}
	sink->bytes += n;
	if (sink->out != NULL)
		fputs(text, sink->out);
}

static const char *g_json_path;

static const char *check_stats_text(void)
{
	struct text_sink sink = { 0 };
	malloc_stats_print(collect, &sink, NULL);
	if (sink.bytes == 0)
		return failf("no text");
	return NULL;
}

/* Writes malloc_stats_print(OPTS) to PATH (if not NULL) and checks that
 * it starts {"jemalloc":. */
static const char *json_to(const char *path, const char *opts)
{
	struct text_sink sink = { 0 };
	if (path != NULL && (sink.out = fopen(path, "w")) == NULL)
		return failf("cannot write %s", path);
	malloc_stats_print(collect, &sink, opts);
	if (sink.out != NULL)
		fclose(sink.out);
	/* The JSON may be indented or not; skip whitespace between tokens. */
	char compact[32];
	size_t n = 0;
	for (size_t i = 0; i < sink.start_len && n < sizeof compact - 1; i++)
		if (sink.start[i] != ' ' && sink.start[i] != '\n' && sink.start[i] != '\t')
			compact[n++] = sink.start[i];
	compact[n] = '\0';
	if (strncmp(compact, "{\"jemalloc\":", 12) != 0)
		return failf("\"%s\" output starts \"%s\", not {\"jemalloc\":", opts, sink.start);
	return NULL;
}

static const char *check_stats_json(void)
{
	return json_to(g_json_path, "J");
}

/* The letters that omit parts (g general, a per-arena, m merged, b bins,
 * l large classes, x mutexes), each beside J into FILE.J<letter>, for
 * jemalloc_compat_json.py --letters. */
static const char *check_stats_json_letters(void)
{
	static const char *const opts[] = { "Jg", "Ja", "Jm", "Jb", "Jl", "Jx" };
	char path[4096];
	static char first_why[sizeof g_why];
	bool failed = false;
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		if (g_json_path != NULL)
			snprintf(path, sizeof path, "%s.%s", g_json_path, opts[i]);
		const char *why = json_to(g_json_path != NULL ? path : NULL, opts[i]);
		if (why != NULL && !failed) /* every file is still written */
			snprintf(first_why, sizeof first_why, "%s", why);
		failed |= why != NULL;
	}
	return failed ? first_why : NULL;
}

/* ------------------------------------------------------------------ */

static const char *g_expected_narenas;

static const char *check_configured_narenas(void)
{
	unsigned narenas = 0;
	if (ctl_get("opt.narenas", &narenas, sizeof narenas) != 0)
		return failf("opt.narenas unreadable");
	if (narenas != (unsigned)strtoul(g_expected_narenas, NULL, 10))
		return failf("opt.narenas is %u (MALLOC_CONF \"%s\")", narenas,
		    getenv("MALLOC_CONF") ? getenv("MALLOC_CONF") : "");
	return NULL;
}

static void run_all(void)
{
	const char *version = NULL;
	if (ctl_get("version", &version, sizeof version) == 0 && version != NULL)
		printf("# version %s\n", version);
	run("MALLOCX_* and MALLCTL_ARENAS_ALL values", check_flag_values);
	run("mallocx sallocx malloc_usable_size dallocx", check_mallocx_sizes);
	run("nallocx == sallocx(mallocx(size, flags))", check_nallocx_matches);
	run("nallocx and mallocx above the largest class", check_too_big);
	run("MALLOCX_LG_ALIGN and MALLOCX_ALIGN (mallocx, rallocx)", check_alignment);
	run("MALLOCX_ZERO on mallocx", check_mallocx_zero);
	run("MALLOCX_ZERO on rallocx growth", check_rallocx_zero);
	run("rallocx keeps the contents", check_rallocx_contents);
	run("rallocx failure leaves the block", check_rallocx_failure);
	run("xallocx in place, returns the real size", check_xallocx);
#ifdef COMPAT_HAVE_REALLOCF
	run("reallocf", check_reallocf);
#else
	skip("reallocf", "not in this library");
#endif

	run("arenas.create", check_arenas_create);
	if (g_made_arena == UINT32_MAX) {
		report("arena checks", "arenas.create gave no arena");
	} else {
		run("arena.<i>.dirty_decay_ms and arenas.dirty_decay_ms", check_arena_decay_ms);
		run("mallctlnametomib interior name, mallctlbymib", check_interior_mib);
		if (!config_off("stats")) {
			run("MALLOCX_ARENA | MALLOCX_TCACHE_NONE small, dallocx, sdallocx",
			    check_arena_flag_small);
			run("MALLOCX_ARENA | MALLOCX_TCACHE_NONE large, sdallocx",
			    check_arena_flag_large);
			run("arena.<i>.purge and the purge counters", check_arena_purge);
			run("arena.<i>.reset", check_arena_reset);
		} else {
			skip("MALLOCX_ARENA statistics", "config.stats is false");
		}
	}
	run("MALLCTL_ARENAS_ALL purge, decay, initialized", check_arenas_all);
	run("arenas.bin.<i>.size through a MIB", check_bin_iteration);
	run("arenas page, tcache_max, nhbins", check_arenas_sizes);
	run("unknown names give ENOENT", check_unknown_names);
	run("opt.junk, opt.thp, opt.percpu_arena settings", check_string_settings);
	run("decay times", check_decay_settings);
	run("thread.tcache.enabled", check_thread_tcache_enabled);
	run("background_thread on and off", check_background_thread_switch);
	if (!config_off("stats")) {
		run("epoch refresh and stats.allocated", check_epoch);
		run("thread.allocated and thread.deallocated", check_thread_counters);
		run("stats.zero_reallocs", check_zero_reallocs);
	} else {
		skip("epoch and statistics", "config.stats is false");
	}
	run("stats.arenas.0.uptime", check_uptime);
	check_names();
	run("malloc_stats_print text", check_stats_text);
	run("malloc_stats_print \"J\"", check_stats_json);
	run("malloc_stats_print \"J\" with g, a, m, b, l, x", check_stats_json_letters);
}

int main(int argc, char **argv)
{
	int opt;
	while ((opt = getopt(argc, argv, "j:n:")) != -1) {
		switch (opt) {
		case 'j':
			g_json_path = optarg;
			break;
		case 'n':
			g_expected_narenas = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-j json-file] [-n narenas]\n", argv[0]);
			return 2;
		}
	}
	if (g_expected_narenas != NULL) {
		run("opt.narenas set by the configuration", check_configured_narenas);
		if (g_json_path != NULL)
			run("malloc_stats_print \"J\"", check_stats_json);
	} else {
		run_all();
	}
	printf("%u passed, %u failed\n", g_passed, g_failed);
	return g_failed == 0 ? 0 : 1;
}
