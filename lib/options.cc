// options.cc — the MALLOC_OPTIONS parser, driven by the rows of option_list.h.
#include "options.h"

#include "chunk_registry.h"
#include "platform.h"
#include "report.h"

// A program may define this to choose options at link time.
extern "C" const char *_malloc_options __attribute__((weak));

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
     min, max, text, #name},
#define AA_LETTER_ONLY(letter, kind, type, field, dflt, min, max, text) \
    {letter, OptionKind::kind, flag_member(&Options::field), value_member(&Options::field), \
     min, max, text, nullptr},
#define AA_IGNORED_LETTER(letter, text) \
    {letter, OptionKind::kIgnored, nullptr, nullptr, 0, 0, text, nullptr},
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

}  // namespace

void options_reset() {
    g_options = Options{};
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) \
    g_options.field = dflt;
#define AA_LETTER_ONLY(letter, kind, type, field, dflt, min, max, text) g_options.field = dflt;
#include "option_list.h"
}

namespace {

// ---- the long form -----------------------------------------------------------

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
    for (const OptionDef &o : kOptionRows) {
        if (o.long_name == nullptr || !same(s, colon, o.long_name))
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
