// The manual page documents every row of the option table
// (lib/option_list.h): each letter has its entry in the MALLOC_OPTIONS
// flags list, each key is given in "Key:value items", and each opt.*
// name is in the mallctl list, which names nothing the table lacks.  A
// row added to the table without its manual text fails here.
#include <atf-c++.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "require_msg.h"

namespace {

// What the table names, read from its rows.
std::vector<char> table_letters() {
    std::vector<char> v;
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) \
    if ((letter) != 0)                                                              \
        v.push_back(letter);
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) \
    if ((letter) != 0)                                                               \
        v.push_back(letter);
#define AA_LETTER_ONLY(letter, kind, type, field, dflt, min, max, text) v.push_back(letter);
#define AA_IGNORED_LETTER(letter, text) v.push_back(letter);
#include "option_list.h"
    return v;
}

// The keys of key:value items: the rows' names and jemalloc's keys.
std::vector<std::string> table_long_names() {
    std::vector<std::string> v;
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) v.push_back(#name);
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) \
    v.push_back(#name);
#define AA_CONF_KEY(key, text) v.push_back(#key);
#include "option_list.h"
    return v;
}

std::vector<std::string> table_opt_names() {
    std::vector<std::string> v;
#define AA_OPTION(letter, kind, name, type, field, dflt, min, max, ctl_type, text) v.push_back(#name);
#define AA_WORD_OPTION(letter, kind, name, field, dflt, off_words, on_words, text) \
    v.push_back(#name);
#define AA_DERIVED_OPT(name, ctl_type, text) v.push_back(#name);
#include "option_list.h"
    return v;
}

// The manual's lines (the source tree's, found through Kyua's config).
std::vector<std::string> manual_lines(const atf::tests::tc &tc) {
    const std::string top = tc.get_config_var("top_srcdir", ARENALLOC_TOP_SRCDIR);
    std::ifstream manual((top + "/man/arenalloc.3").c_str());
    std::vector<std::string> lines;
    for (std::string l; std::getline(manual, l);)
        lines.push_back(l);
    ATF_REQUIRE_MSG(lines.size() > 100, "cannot read the manual under " << top);
    return lines;
}

bool starts_with(const std::string &s, const std::string &head) {
    return s.compare(0, head.size(), head) == 0;
}

// The lines of the subsection with this heading (".Ss name"), up to the
// next heading.
std::vector<std::string> subsection(const std::vector<std::string> &lines, const std::string &name) {
    std::vector<std::string> out;
    bool in = false;
    for (const std::string &l : lines) {
        if (starts_with(l, ".Ss ") || starts_with(l, ".Sh ")) {
            if (in)
                break;
            in = l == ".Ss " + name;
            continue;
        }
        if (in)
            out.push_back(l);
    }
    ATF_REQUIRE_MSG(!out.empty(), "the manual has no subsection '" << name << "'");
    return out;
}

std::vector<std::string> words(const std::string &line) {
    std::istringstream in(line);
    std::vector<std::string> w;
    std::string s;
    while (in >> s)
        w.push_back(s);
    return w;
}

bool is_name(const std::string &s) {
    if (s.empty())
        return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    return true;
}

// The names the mallctl list gives as opt.*: ".It Va opt.a , b , c" names
// opt.a, opt.b and opt.c.
std::set<std::string> manual_opt_names(const std::vector<std::string> &lines) {
    std::set<std::string> names;
    for (const std::string &l : subsection(lines, "mallctl")) {
        if (!starts_with(l, ".It Va opt."))
            continue;
        const std::vector<std::string> w = words(l);
        names.insert(w[2].substr(4));
        for (size_t i = 3; i < w.size(); i++)
            if (is_name(w[i]))
                names.insert(w[i]);
    }
    return names;
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(manual__has_an_entry_for_every_letter);
ATF_TEST_CASE_BODY(manual__has_an_entry_for_every_letter) {
    const std::vector<std::string> flags = subsection(manual_lines(*this), "MALLOC_OPTIONS");
    const std::vector<char> letters = table_letters();
    ATF_REQUIRE(letters.size() >= 18);
    for (char c : letters) {
        const std::string entry = std::string(".It Cm ") + c;
        bool found = false;
        for (const std::string &l : flags)
            found = found || l == entry || starts_with(l, entry + " ");
        ATF_REQUIRE_MSG(found, "MALLOC_OPTIONS has no '" << entry << "' entry");
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(manual__gives_every_long_name);
ATF_TEST_CASE_BODY(manual__gives_every_long_name) {
    std::set<std::string> given;
    for (const std::string &l : subsection(manual_lines(*this), "Key:value items"))
        if (starts_with(l, ".Va ") || starts_with(l, ".It Va "))
            for (const std::string &w : words(l))
                given.insert(w);
    const std::vector<std::string> names = table_long_names();
    ATF_REQUIRE(names.size() >= 18);
    for (const std::string &n : names)
        ATF_REQUIRE_MSG(given.count(n) == 1,
                        "\"Key:value items\" does not give '" << n << "' (.Va)");
}

ATF_TEST_CASE_WITHOUT_HEAD(manual__lists_every_opt_name);
ATF_TEST_CASE_BODY(manual__lists_every_opt_name) {
    const std::set<std::string> listed = manual_opt_names(manual_lines(*this));
    const std::vector<std::string> names = table_opt_names();
    ATF_REQUIRE(names.size() >= 19);
    for (const std::string &n : names)
        ATF_REQUIRE_MSG(listed.count(n) == 1, "the mallctl list lacks opt." << n);
    const std::set<std::string> table(names.begin(), names.end());
    for (const std::string &n : listed)
        ATF_REQUIRE_MSG(table.count(n) == 1, "the mallctl list gives opt." << n
                                                 << ", which lib/option_list.h lacks");
}

ATF_INIT_TEST_CASES(tcs) {
    ATF_ADD_TEST_CASE(tcs, manual__has_an_entry_for_every_letter);
    ATF_ADD_TEST_CASE(tcs, manual__gives_every_long_name);
    ATF_ADD_TEST_CASE(tcs, manual__lists_every_opt_name);
}
