// options.cc — the MALLOC_OPTIONS parser, driven by kOptionTable.
#include "options.h"

#include "chunk_registry.h"
#include "platform.h"
#include "report.h"

// A program may define this to choose options at link time.
extern "C" const char *_malloc_options __attribute__((weak));

namespace arenalloc {

Options g_options;

const OptionDef kOptionTable[] = {
    {'A', OptionKind::kBool, &Options::abort_on_warning, nullptr, 0, 0, "abort on warnings"},
    {'C', OptionKind::kIgnored, nullptr, nullptr, 0, 0, "cacheline-spaced classes"},
    {'D', OptionKind::kBool, &Options::use_sbrk, nullptr, 0, 0, "sbrk chunks"},
    {'E', OptionKind::kIgnored, nullptr, nullptr, 0, 0, "medium classes"},
    {'F', OptionKind::kLogDown, nullptr, &Options::lg_dirty_ratio, kLgDirtyRatioMin,
     kLgDirtyRatioMax, "dirty page allowance"},
    {'G', OptionKind::kLog, nullptr, &Options::lg_tcache_gc, 0, kLgTcacheGcMax,
     "thread-cache GC interval"},
    {'H', OptionKind::kLog, nullptr, &Options::tcache_shift, kTcacheShiftOff, kTcacheShiftMax,
     "thread-cache size"},
    {'J', OptionKind::kBool, &Options::junk, nullptr, 0, 0, "junk filling"},
    {'K', OptionKind::kLog, nullptr, &Options::lg_chunk, kLgChunkMin, kLgChunkMax, "chunk size"},
    {'M', OptionKind::kBool, &Options::use_mmap, nullptr, 0, 0, "mmap chunks"},
    {'N', OptionKind::kDouble, nullptr, &Options::narenas, 1, kMaxArenas, "arena count"},
    {'P', OptionKind::kBool, &Options::print_summary, nullptr, 0, 0, "statistics at exit"},
    {'Q', OptionKind::kIgnored, nullptr, nullptr, 0, 0, "quantum-spaced classes"},
    {'S', OptionKind::kBool, &Options::hardened, nullptr, 0, 0, "hardened profile"},
    {'U', OptionKind::kBool, &Options::trace, nullptr, 0, 0, "tracing"},
    {'V', OptionKind::kBool, &Options::malloc0_null, nullptr, 0, 0, "malloc(0) returns NULL"},
    {'X', OptionKind::kBool, &Options::xmalloc, nullptr, 0, 0, "abort on out of memory"},
    {'Z', OptionKind::kBool, &Options::zero, nullptr, 0, 0, "zero filling"},
};
const unsigned kOptionTableSize = sizeof(kOptionTable) / sizeof(kOptionTable[0]);

namespace {

constexpr unsigned kMaxRepeat = 64;  // a count beyond this cannot change anything
const char *g_conf_path = "/etc/malloc.conf";

const OptionDef *find_option(char upper) {
    for (unsigned i = 0; i < kOptionTableSize; i++)
        if (kOptionTable[i].letter == upper)
            return &kOptionTable[i];
    return nullptr;
}

void warn(const char *text, char c);

void bound_warning(const OptionDef &o, bool at_max, char c) {
    char text[96];
    LineBuffer line(text, sizeof(text) - 1);
    line.str(o.name).str(at_max ? " at its maximum, ignoring" : " at its minimum, ignoring");
    text[line.size()] = '\0';
    warn(text, c);
}

// A letter repeated by a count warns at most once; the process goes on
// with the value it reached.
bool g_warned = false;

void warn(const char *text, char c) {
    if (g_warned)
        return;
    g_warned = true;
    report_options_warning(text, c);
}

// A and a also choose what a bad pointer does (the default, which is
// neither, aborts); see Options::continue_on_bad_pointer.
void set_bool(bool Options::*flag, bool on) {
    g_options.*flag = on;
    if (flag == &Options::abort_on_warning)
        g_options.continue_on_bad_pointer = !on;
}

void apply_flag(char c) {
    bool upper = c >= 'A' && c <= 'Z';
    char key = upper ? c : static_cast<char>(c - 'a' + 'A');
    const OptionDef *o = (upper || (c >= 'a' && c <= 'z')) ? find_option(key) : nullptr;
    if (o == nullptr) {
        warn("Unsupported character in malloc options", c);
        return;
    }
    switch (o->kind) {
    case OptionKind::kBool:
        set_bool(o->flag, upper);
        return;
    case OptionKind::kIgnored:
        return;
    case OptionKind::kLog:
    case OptionKind::kLogDown: {
        int &v = g_options.*(o->value);
        bool up = (o->kind == OptionKind::kLog) == upper;
        if (up ? v >= o->max : v <= o->min)
            bound_warning(*o, up == (o->kind == OptionKind::kLog), c);
        else
            v += up ? 1 : -1;
        return;
    }
    case OptionKind::kDouble: {
        // A doubling that would pass the bound stops at the bound (with a
        // warning): 4 x 24 CPUs doubled five times is 3072, then 4096.
        int &v = g_options.*(o->value);
        if (upper ? v >= o->max : v <= o->min) {
            bound_warning(*o, upper, c);
        } else if (upper ? v > o->max / 2 : v / 2 < o->min) {
            v = upper ? o->max : o->min;
            bound_warning(*o, upper, c);
        } else {
            v = upper ? v * 2 : v / 2;
        }
        return;
    }
    }
}

}  // namespace

void options_reset() {
    g_options = Options{};
    g_options.use_mmap = true;
    g_options.lg_dirty_ratio = kLgDirtyRatioDefault;
    g_options.lg_tcache_gc = kLgTcacheGcDefault;
    g_options.tcache_shift = 0;
    g_options.lg_chunk = kLgChunkDefault;
    g_options.decay_ms = kDecayMsDefault;
    g_options.lazy_purge = false;
    g_options.thp = false;
    g_options.shared_large = true;
    g_options.hardened = kHardenedDefault;
    uint64_t n = uint64_t{4} * platform_ncpus();
    g_options.narenas = static_cast<int>(n > kMaxArenas ? kMaxArenas : n);
}

namespace {

// ---- the long form -----------------------------------------------------------

struct LongOption {
    const char *name;       // as the mallctl opt.* names
    bool Options::*flag;    // a boolean, or
    int Options::*value;    // a number within [min, max]
    int min;
    int max;
};

const LongOption kLongOptions[] = {
    {"abort", &Options::abort_on_warning, nullptr, 0, 0},
    {"sbrk", &Options::use_sbrk, nullptr, 0, 0},
    {"mmap", &Options::use_mmap, nullptr, 0, 0},
    {"junk", &Options::junk, nullptr, 0, 0},
    {"zero", &Options::zero, nullptr, 0, 0},
    {"xmalloc", &Options::xmalloc, nullptr, 0, 0},
    {"sysv", &Options::malloc0_null, nullptr, 0, 0},
    {"utrace", &Options::trace, nullptr, 0, 0},
    {"stats_print", &Options::print_summary, nullptr, 0, 0},
    {"lazy_purge", &Options::lazy_purge, nullptr, 0, 0},
    {"thp", &Options::thp, nullptr, 0, 0},
    {"shared_large", &Options::shared_large, nullptr, 0, 0},
    {"narenas", nullptr, &Options::narenas, 1, static_cast<int>(kMaxArenas)},
    {"lg_chunk", nullptr, &Options::lg_chunk, kLgChunkMin, kLgChunkMax},
    {"lg_dirty_ratio", nullptr, &Options::lg_dirty_ratio, kLgDirtyRatioMin, kLgDirtyRatioMax},
    {"lg_tcache_gc", nullptr, &Options::lg_tcache_gc, 0, kLgTcacheGcMax},
    {"tcache_shift", nullptr, &Options::tcache_shift, kTcacheShiftOff, kTcacheShiftMax},
    {"decay_ms", nullptr, &Options::decay_ms, kDecayMsMin, kDecayMsMax},
};

bool same(const char *a, size_t alen, const char *b) {
    size_t i = 0;
    for (; i < alen; i++)
        if (b[i] != a[i])
            return false;
    return b[i] == '\0';
}

void long_warning(const char *what, const char *name, size_t len) {
    char text[160];
    LineBuffer line(text, sizeof(text) - 1);
    line.str(what).str(": '");
    for (size_t i = 0; i < len && i < 48; i++) {
        unsigned char u = static_cast<unsigned char>(name[i]);
        line.chr(u < 0x20 || u >= 0x7f ? '?' : name[i]);
    }
    line.chr('\'');
    text[line.size()] = '\0';
    report_options_warning(text, '\0');
}

// A decimal integer (optional sign) in [s, s+len); false when malformed.
bool parse_int(const char *s, size_t len, long long *out) {
    size_t i = 0;
    bool negative = false;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        negative = s[i++] == '-';
    if (i == len)
        return false;
    long long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        if (v < (1LL << 40))
            v = v * 10 + (s[i] - '0');
    }
    *out = negative ? -v : v;
    return true;
}

bool parse_bool(const char *s, size_t len, bool *out) {
    if (same(s, len, "true") || same(s, len, "1") || same(s, len, "yes")) {
        *out = true;
        return true;
    }
    if (same(s, len, "false") || same(s, len, "0") || same(s, len, "no")) {
        *out = false;
        return true;
    }
    return false;
}

void parse_long_item(const char *s, size_t len) {
    size_t colon = 0;
    while (colon < len && s[colon] != ':')
        colon++;
    if (colon == len) {
        long_warning("Missing value in malloc options", s, len);
        return;
    }
    const char *value = s + colon + 1;
    size_t vlen = len - colon - 1;
    for (const LongOption &o : kLongOptions) {
        if (!same(s, colon, o.name))
            continue;
        if (o.flag != nullptr) {
            bool b;
            if (parse_bool(value, vlen, &b))
                set_bool(o.flag, b);
            else
                long_warning("Bad value in malloc options", s, len);
            return;
        }
        long long v;
        if (!parse_int(value, vlen, &v)) {
            long_warning("Bad value in malloc options", s, len);
            return;
        }
        if (v < o.min || v > o.max) {
            v = v < o.min ? o.min : o.max;
            long_warning("Value out of bounds in malloc options, clamped", s, len);
        }
        g_options.*(o.value) = static_cast<int>(v);
        return;
    }
    long_warning("Unsupported option in malloc options", s, colon);
}

void parse_long_form(const char *opts) {
    const char *item = opts;
    for (const char *s = opts;; s++) {
        if (*s == ',' || *s == '\0') {
            if (s != item)
                parse_long_item(item, static_cast<size_t>(s - item));
            if (*s == '\0')
                break;
            item = s + 1;
        }
    }
}

}  // namespace

// The long form starts with a name of two or more lower-case letters (or
// underscores) and a ':'; anything else, ':' included, is BSD letters.
bool is_long_form(const char *s) {
    size_t n = 0;
    while ((s[n] >= 'a' && s[n] <= 'z') || s[n] == '_')
        n++;
    return n >= 2 && s[n] == ':';
}

void options_parse(const char *opts) {
    if (is_long_form(opts)) {
        parse_long_form(opts);
        if (!g_options.use_sbrk && !g_options.use_mmap)
            g_options.use_mmap = true;
        return;
    }
    unsigned repeat = 0;
    bool counting = false;
    for (const char *s = opts; *s != '\0'; s++) {
        char c = *s;
        if (c >= '0' && c <= '9') {
            repeat = repeat * 10 + static_cast<unsigned>(c - '0');
            if (repeat > kMaxRepeat)
                repeat = kMaxRepeat;
            counting = true;
            continue;
        }
        unsigned n = counting ? repeat : 1;
        g_warned = false;
        for (unsigned i = 0; i < n; i++)
            apply_flag(c);
        repeat = 0;
        counting = false;
    }
    // Chunks must come from somewhere.
    if (!g_options.use_sbrk && !g_options.use_mmap)
        g_options.use_mmap = true;
}

void options_set_conf_path(const char *path) { g_conf_path = path; }

void options_init() {
    options_reset();
    char link[256];
    if (platform_readlink(g_conf_path, link, sizeof(link)))
        options_parse(link);
    const char *env = platform_secure_getenv("MALLOC_OPTIONS");
    if (env != nullptr)
        options_parse(env);
    if (&_malloc_options != nullptr && _malloc_options != nullptr)
        options_parse(_malloc_options);
}

size_t options_in_force(char *buf, size_t cap) {
    size_t n = 0;
    for (unsigned i = 0; i < kOptionTableSize && n + 1 < cap; i++) {
        const OptionDef &o = kOptionTable[i];
        if (o.kind != OptionKind::kBool)
            continue;
        buf[n++] = g_options.*(o.flag) ? o.letter : static_cast<char>(o.letter - 'A' + 'a');
    }
    if (cap != 0)
        buf[n] = '\0';
    return n;
}

bool options_need_slow_path() {
    return g_options.junk || g_options.zero || g_options.trace || g_options.xmalloc ||
           g_options.tcache_shift <= kTcacheShiftOff || g_options.hardened;
}

}  // namespace arenalloc
