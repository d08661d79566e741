// options.cc — the MALLOC_OPTIONS parser, driven by the rows of option_list.h.
#include "options.h"

#include "chunk_registry.h"
#include "platform.h"
#include "report.h"

// A program may define either to choose options at link time: BSD's
// _malloc_options, jemalloc's malloc_conf.
extern "C" const char *_malloc_options __attribute__((weak));
extern "C" const char *malloc_conf __attribute__((weak));

namespace arenalloc {

Options g_options;

namespace {

// The member pointer of a bool option, or of a number: an OptionDef names
// its field in the one that matches the field's type.
constexpr bool Options::*flag_member(bool Options::*m) { return m; }
constexpr bool Options::*flag_member(int Options::*) { return nullptr; }
constexpr int Options::*value_member(int Options::*m) { return m; }
constexpr int Options::*value_member(bool Options::*) { return nullptr; }

// Every row of option_list.h that a parser reads, in the table's order.
constexpr OptionDef kOptionRows[] = {
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) \
    {letter, OptionKind::kind, flag_member(&Options::field), value_member(&Options::field), \
     min, max, text, #name, nullptr, nullptr},
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) \
    {letter, OptionKind::kind, &Options::field, nullptr, 0, 0, text, #name, off_words, on_words},
#define AA_LETTER_ONLY(letter, kind, type, field, dflt, min, max, text) \
    {letter, OptionKind::kind, flag_member(&Options::field), value_member(&Options::field), \
     min, max, text, nullptr, nullptr, nullptr},
#define AA_IGNORED_LETTER(letter, text) \
    {letter, OptionKind::kIgnored, nullptr, nullptr, 0, 0, text, nullptr, nullptr, nullptr},
#include "option_list.h"
};

constexpr unsigned count_letters() {
    unsigned n = 0;
    for (const OptionDef &o : kOptionRows)
        n += o.letter != 0 ? 1 : 0;
    return n;
}

struct LetterTable {
    OptionDef rows[count_letters()];
};

// The rows with a letter, sorted by it (insertion sort, at compile time).
constexpr LetterTable sort_letters() {
    LetterTable t{};
    unsigned n = 0;
    for (const OptionDef &o : kOptionRows) {
        if (o.letter == 0)
            continue;
        unsigned i = n++;
        for (; i > 0 && t.rows[i - 1].letter > o.letter; i--)
            t.rows[i] = t.rows[i - 1];
        t.rows[i] = o;
    }
    return t;
}

constexpr LetterTable kLetters = sort_letters();

constexpr bool letters_distinct() {
    for (unsigned i = 1; i < count_letters(); i++)
        if (kLetters.rows[i - 1].letter == kLetters.rows[i].letter)
            return false;
    return true;
}
static_assert(letters_distinct(), "two rows of option_list.h share a letter");

// kNone, and only kNone, marks a row without a letter.
constexpr bool kinds_match_letters() {
    for (const OptionDef &o : kOptionRows)
        if ((o.letter == 0) != (o.kind == OptionKind::kNone))
            return false;
    return true;
}
static_assert(kinds_match_letters(), "a row of option_list.h has a letter and kNone, or neither");

// Four arenas per CPU, within the bound.
int default_narenas() {
    uint64_t n = uint64_t{4} * platform_ncpus();
    return static_cast<int>(n > kMaxArenas ? kMaxArenas : n);
}

}  // namespace

const OptionDef *const kOptionTable = kLetters.rows;
const unsigned kOptionTableSize = count_letters();

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
    line.str(o.text).str(at_max ? " at its maximum, ignoring" : " at its minimum, ignoring");
    text[line.size()] = '\0';
    warn(text, c);
}

// A letter repeated by a count warns at most once; the process goes on
// with the value it reached.
bool g_warned = false;

// Every warning about the options, for abort_conf.
unsigned g_warning_count = 0;

void count_warning(const char *text, char c) {
    g_warning_count++;
    report_options_warning(text, c);
}

void warn(const char *text, char c) {
    if (g_warned)
        return;
    g_warned = true;
    count_warning(text, c);
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
    case OptionKind::kNone:
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

// stats_print_opts, a copy (its source may be a part of a longer string).
constexpr size_t kStatsPrintOptsMax = 15;
char g_stats_print_opts[kStatsPrintOptsMax + 1];

}  // namespace

void options_reset() {
    g_options = Options{};
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) \
    g_options.field = dflt;
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) \
    g_options.field = dflt;
#define AA_LETTER_ONLY(letter, kind, type, field, dflt, min, max, text) g_options.field = dflt;
#include "option_list.h"
    g_stats_print_opts[0] = '\0';
    g_warning_count = 0;
}

unsigned options_warning_count() { return g_warning_count; }

const char *options_stats_print_opts() { return g_stats_print_opts; }

namespace {

// ---- key:value items ---------------------------------------------------------

// The name of the string being parsed, for warnings.
const char *g_source = "malloc options";

bool same(const char *a, size_t alen, const char *b) {
    size_t i = 0;
    for (; i < alen; i++)
        if (b[i] != a[i])
            return false;
    return b[i] == '\0';
}

// "<what> in <source>: '<text>'", then " (<hint>)" when there is one; the
// quoted text is cut at 48 bytes and control bytes shown as '?'.
void item_warning(const char *what, const char *text, size_t len, const char *hint = nullptr) {
    char buf[200];
    LineBuffer line(buf, sizeof(buf) - 1);
    line.str(what).str(" in ").str(g_source).str(": '");
    for (size_t i = 0; i < len && i < 48; i++) {
        unsigned char u = static_cast<unsigned char>(text[i]);
        line.chr(u < 0x20 || u >= 0x7f ? '?' : text[i]);
    }
    line.chr('\'');
    if (hint != nullptr)
        line.str(" (").str(hint).chr(')');
    buf[line.size()] = '\0';
    count_warning(buf, '\0');
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

// Whether [s, s+len) is one of words, a list of '\0'-ended words ended by
// an empty one (option_list.h, AA_WORD_OPTION).
bool is_one_of(const char *s, size_t len, const char *words) {
    for (const char *w = words; *w != '\0'; w += __builtin_strlen(w) + 1)
        if (same(s, len, w))
            return true;
    return false;
}

// ---- the keys of jemalloc without a row of their own (AA_CONF_KEY) ----------
// Each takes the value and returns nullptr when it applied it, or what the
// warning says (and may set *hint, the warning's note in parentheses).

constexpr const char *kBadValue = "Bad value";
constexpr const char *kOutOfBounds = "Value out of bounds";
constexpr const char *kClamped = "clamped";

// -1 (never purge by time) is the longest decay, 0 to 99 (at once) the
// shortest; other values as decay_ms.
const char *conf_dirty_decay_ms(const char *v, size_t len, const char **hint) {
    long long ms;
    if (!parse_int(v, len, &ms) || ms < -1)
        return kBadValue;
    if (ms == -1 || ms > kDecayMsMax) {
        g_options.decay_ms = kDecayMsMax;
        if (ms == -1)
            return nullptr;
        *hint = kClamped;
        return kOutOfBounds;
    }
    g_options.decay_ms = ms < kDecayMsMin ? kDecayMsMin : static_cast<int>(ms);
    return nullptr;
}

// Muzzy pages are those purged with MADV_FREE (lazy_purge), which
// arenalloc never purges again: 0 purges with MADV_DONTNEED, any other
// time with MADV_FREE.
const char *conf_muzzy_decay_ms(const char *v, size_t len, const char **) {
    long long ms;
    if (!parse_int(v, len, &ms) || ms < -1)
        return kBadValue;
    g_options.lazy_purge = ms != 0;
    return nullptr;
}

const char *conf_metadata_thp(const char *v, size_t len, const char **) {
    return is_one_of(v, len, "disabled\0auto\0always\0") ? nullptr : kBadValue;
}

const char *conf_retain(const char *v, size_t len, const char **) {
    bool b;
    return parse_bool(v, len, &b) ? nullptr : kBadValue;
}

const char *conf_percpu_arena(const char *v, size_t len, const char **hint) {
    if (same(v, len, "disabled"))
        return nullptr;
    if (same(v, len, "percpu") || same(v, len, "phycpu")) {
        *hint = "threads take arenas round-robin";
        return "Unsupported value";
    }
    return kBadValue;
}

const char *conf_tcache(const char *v, size_t len, const char **) {
    bool on;
    if (!parse_bool(v, len, &on))
        return kBadValue;
    if (!on)
        g_options.tcache_shift = kTcacheShiftOff;
    else if (g_options.tcache_shift == kTcacheShiftOff)
        g_options.tcache_shift = 0;
    return nullptr;
}

const char *conf_tcache_max(const char *v, size_t len, const char **) {
    long long n;
    return parse_int(v, len, &n) && n >= 0 ? nullptr : kBadValue;
}

const char *conf_lg_tcache_max(const char *v, size_t len, const char **) {
    long long n;
    return parse_int(v, len, &n) && n >= 0 && n < 64 ? nullptr : kBadValue;
}

// Letters only (malloc_stats_print's options), kept for the report at exit.
const char *conf_stats_print_opts(const char *v, size_t len, const char **) {
    if (len > kStatsPrintOptsMax)
        return kBadValue;
    for (size_t i = 0; i < len; i++)
        if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z')))
            return kBadValue;
    for (size_t i = 0; i < len; i++)
        g_stats_print_opts[i] = v[i];
    g_stats_print_opts[len] = '\0';
    return nullptr;
}

struct ConfKey {
    const char *key;
    const char *(*apply)(const char *value, size_t len, const char **hint);
};

constexpr ConfKey kConfKeys[] = {
#define AA_CONF_KEY(key, text) {#key, conf_##key},
#include "option_list.h"
};

// ---- items ---------------------------------------------------------------------

bool is_key_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

// The length of the key that starts the item: letters, digits and '_',
// from a letter or '_' (0 when the item starts otherwise).
size_t key_length(const char *s, size_t len) {
    if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    size_t n = 0;
    while (n < len && is_key_char(s[n]))
        n++;
    return n;
}

// A key of a row or of kConfKeys.
bool is_known_key(const char *key, size_t len) {
    for (const OptionDef &o : kOptionRows)
        if (o.long_name != nullptr && same(key, len, o.long_name))
            return true;
    for (const ConfKey &k : kConfKeys)
        if (same(key, len, k.key))
            return true;
    return false;
}

void apply_row(const OptionDef &o, const char *item, size_t len, const char *v, size_t vlen) {
    if (o.flag != nullptr) {
        bool b;
        if (parse_bool(v, vlen, &b))
            set_bool(o.flag, b);
        else if (o.on_words != nullptr && is_one_of(v, vlen, o.on_words))
            set_bool(o.flag, true);
        else if (o.off_words != nullptr && is_one_of(v, vlen, o.off_words))
            set_bool(o.flag, false);
        else
            item_warning(kBadValue, item, len);
        return;
    }
    long long n;
    if (!parse_int(v, vlen, &n)) {
        item_warning(kBadValue, item, len);
        return;
    }
    if (n < o.min || n > o.max) {
        n = n < o.min ? o.min : o.max;
        item_warning(kOutOfBounds, item, len, kClamped);
    }
    g_options.*(o.value) = static_cast<int>(n);
}

// key:value, the key klen bytes long.
void apply_key_value(const char *item, size_t len, size_t klen) {
    const char *v = item + klen + 1;
    size_t vlen = len - klen - 1;
    for (const OptionDef &o : kOptionRows) {
        if (o.long_name != nullptr && same(item, klen, o.long_name)) {
            apply_row(o, item, len, v, vlen);
            return;
        }
    }
    for (const ConfKey &k : kConfKeys) {
        if (same(item, klen, k.key)) {
            const char *hint = nullptr;
            if (const char *what = k.apply(v, vlen, &hint))
                item_warning(what, item, len, hint);
            return;
        }
    }
    item_warning("Unsupported option", item, klen);
}

void parse_letters(const char *s, size_t len) {
    unsigned repeat = 0;
    bool counting = false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            repeat = repeat * 10 + static_cast<unsigned>(c - '0');
            if (repeat > kMaxRepeat)
                repeat = kMaxRepeat;
            counting = true;
            continue;
        }
        unsigned n = counting ? repeat : 1;
        g_warned = false;
        for (unsigned k = 0; k < n; k++)
            apply_flag(c);
        repeat = 0;
        counting = false;
    }
}

// "narenas=12" means narenas:12; a run of letters cannot hold '=', so the
// item is not applied, and the warning says what to write.
void equals_warning(const char *item, size_t len, size_t klen) {
    char hint[80];
    LineBuffer line(hint, sizeof(hint) - 1);
    line.str("ignored; write ");
    for (size_t i = 0; i < len && i < 40; i++) {
        unsigned char u = static_cast<unsigned char>(item[i]);
        line.chr(i == klen ? ':' : (u < 0x20 || u >= 0x7f ? '?' : item[i]));
    }
    hint[line.size()] = '\0';
    item_warning("'=' instead of ':'", item, len, hint);
}

void parse_item(const char *s, size_t len, OptionSyntax syntax) {
    size_t k = key_length(s, len);
    // One letter before ':' or '=' is a letter run, as it always was ("J:").
    size_t shortest = syntax == OptionSyntax::kKeyValue ? 1 : 2;
    if (k >= shortest && k < len && s[k] == ':') {
        apply_key_value(s, len, k);
    } else if (k >= shortest && k < len && s[k] == '=') {
        equals_warning(s, len, k);
    } else if (syntax == OptionSyntax::kKeyValue) {
        item_warning(k == len ? "Missing value" : "Malformed item", s, len);
    } else if (k == len && k >= 2 && is_known_key(s, k)) {
        // "junk" alone is a key without its value, not j, u, n and k.
        item_warning("Missing value", s, len);
    } else {
        parse_letters(s, len);
    }
}

}  // namespace

void options_parse(const char *opts, const char *source, OptionSyntax syntax) {
    g_source = source;
    const char *item = opts;
    for (const char *s = opts;; s++) {
        if (*s == ',' || *s == '\0') {
            if (s != item)
                parse_item(item, static_cast<size_t>(s - item), syntax);
            if (*s == '\0')
                break;
            item = s + 1;
        }
    }
    // Chunks must come from somewhere.
    if (!g_options.use_sbrk && !g_options.use_mmap)
        g_options.use_mmap = true;
}

void options_set_conf_path(const char *path) { g_conf_path = path; }

// The order keeps each family's own: jemalloc reads malloc_conf, the link
// and MALLOC_CONF; the BSD malloc the link, MALLOC_OPTIONS and
// _malloc_options (lib/DECISIONS.md, "Option sources and their order").
void options_init() {
    options_reset();
    if (&malloc_conf != nullptr && malloc_conf != nullptr)
        options_parse(malloc_conf, "malloc_conf", OptionSyntax::kKeyValue);
    char link[256];
    if (platform_readlink(g_conf_path, link, sizeof(link)))
        options_parse(link, g_conf_path, OptionSyntax::kMixed);
    const char *conf = platform_secure_getenv("MALLOC_CONF");
    if (conf != nullptr)
        options_parse(conf, "MALLOC_CONF", OptionSyntax::kKeyValue);
    const char *env = platform_secure_getenv("MALLOC_OPTIONS");
    if (env != nullptr)
        options_parse(env, "MALLOC_OPTIONS", OptionSyntax::kMixed);
    if (&_malloc_options != nullptr && _malloc_options != nullptr)
        options_parse(_malloc_options, "_malloc_options", OptionSyntax::kMixed);
    if (g_options.abort_conf && g_warning_count != 0) {
        report_options_warning("bad options and abort_conf:true, aborting", '\0');
        platform_abort();
    }
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

bool options_shut_tcache() {
    return g_options.junk || g_options.zero || g_options.trace || g_options.xmalloc ||
           g_options.tcache_shift <= kTcacheShiftOff;
}

bool options_need_slow_path() { return options_shut_tcache() || g_options.hardened; }

}  // namespace arenalloc
