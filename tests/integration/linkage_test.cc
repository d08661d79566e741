// The built libarenalloc.so: it needs libc (and libpthread) only, refers to
// no C++ runtime symbol, exports exactly the public API and has no static
// constructor.  The prefixed libraries export exactly the same names with
// their prefix, and no object compiled for lib/ refers to the C++ runtime.
// libarenalloc_cxx.so (lib/cxx/), the C++ operators, is the one that may:
// it needs libarenalloc and the C and C++ run-time libraries only, exports
// the operators only, and frees by size only through arenalloc's own
// sdallocx.

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <regex>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <atf-c++.hpp>

#include "config.h"
#include "test_util.h"

#ifndef ARENALLOC_SHLIB
#error "ARENALLOC_SHLIB (path of the built libarenalloc.so) must be defined"
#endif
#if !defined(ARENALLOC_INSTALLED_SHLIB) || !defined(ARENALLOC_INSTALLED_PREFIX) || \
    !defined(ARENALLOC_PREFIXED_SHLIB) || !defined(ARENALLOC_CXX_SHLIB)
#error "ARENALLOC_INSTALLED_SHLIB, _PREFIX, ARENALLOC_PREFIXED_SHLIB and ARENALLOC_CXX_SHLIB must be defined"
#endif

namespace {

std::string
shlib(const atf::tests::tc &tc)
{
    const std::string path = tc.get_config_var("shlib", ARENALLOC_SHLIB);
    if (access(path.c_str(), R_OK) != 0)
        ATF_FAIL("the built library " + path + " is missing");
    return path;
}

// Runs a binutils tool on the library and returns its stdout.
std::string
tool_output(const std::string &tool, const std::vector<std::string> &args)
{
    const std::string path = testutil::find_program(tool);
    if (path.empty())
        ATF_SKIP(tool + " not found (binutils)");
    std::vector<std::string> argv = { path };
    argv.insert(argv.end(), args.begin(), args.end());
    const testutil::child_result r =
        testutil::run_program(argv, { "LC_ALL=C" }, "/dev/null", 60);
    TU_REQUIRE_MSG(r.exited_ok(), tool << ": " << r.describe());
    return r.out;
}

// The symbol names of `nm -D` output (version suffixes removed), skipping
// absolute symbols (version nodes such as ARENALLOC_1.0).
std::set<std::string>
nm_names(const std::string &out)
{
    std::set<std::string> names;
    for (const std::string &line : testutil::lines_of(out)) {
        std::istringstream ss(line);
        std::vector<std::string> f;
        std::string w;
        while (ss >> w)
            f.push_back(w);
        if (f.empty())
            continue;
        const std::string type = f.size() >= 2 ? f[f.size() - 2] : "";
        if (type == "A")
            continue;
        std::string name = f.back();
        name = name.substr(0, name.find('@'));
        names.insert(name);
    }
    return names;
}

std::string
join(const std::set<std::string> &s)
{
    std::string out;
    for (const std::string &e : s)
        out += (out.empty() ? "" : " ") + e;
    return out;
}

}  // namespace

namespace {

// The DT_NEEDED entries of the shared library at path.
std::vector<std::string>
needed_libraries(const std::string &path)
{
    const std::string out = tool_output("readelf", { "-d", "-W", path });
    static const std::regex needed_re("\\(NEEDED\\).*\\[(.*)\\]");
    std::vector<std::string> needed;
    for (const std::string &line : testutil::lines_of(out)) {
        std::smatch m;
        if (std::regex_search(line, m, needed_re))
            needed.push_back(m[1]);
    }
    return needed;
}

bool
contains(const std::vector<std::string> &v, const std::string &s)
{
    return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

ATF_TEST_CASE_WITHOUT_HEAD(linkage__needed_libraries);
ATF_TEST_CASE_BODY(linkage__needed_libraries)
{
    // A sanitized build (configure --enable-ubsan) needs the sanitizer's
    // run-time library as well, and only that.
    static const std::regex allowed_re(
#ifdef ARENALLOC_SANITIZED
        "^(libc\\.so\\..*|libpthread\\.so\\..*|ld-linux.*|libubsan\\.so\\..*)$");
#else
        "^(libc\\.so\\..*|libpthread\\.so\\..*|ld-linux.*)$");
#endif
    const std::vector<std::string> needed = needed_libraries(shlib(*this));
    TU_REQUIRE_MSG(contains(needed, "libc.so.6"), "libc.so.6 not needed?");
    for (const std::string &n : needed)
        TU_REQUIRE_MSG(std::regex_match(n, allowed_re),
                       "libarenalloc.so needs " << n
                                                << " (only libc/libpthread "
                                                   "allowed)");
}

// libarenalloc_cxx.so: libarenalloc and the run-time libraries of C and
// C++ (libstdc++ and what it brings: libgcc_s, libm), nothing else.
ATF_TEST_CASE_WITHOUT_HEAD(linkage__cxx_needed_libraries);
ATF_TEST_CASE_BODY(linkage__cxx_needed_libraries)
{
    static const std::regex allowed_re(
        "^(libarenalloc\\.so\\..*|libstdc\\+\\+\\.so\\..*|libgcc_s\\.so\\..*|libm\\.so\\..*|"
        "libc\\.so\\..*|libpthread\\.so\\..*|ld-linux.*"
#ifdef ARENALLOC_SANITIZED
        "|libubsan\\.so\\..*"
#endif
        ")$");
    const std::vector<std::string> needed = needed_libraries(ARENALLOC_CXX_SHLIB);
    TU_REQUIRE_MSG(contains(needed, "libarenalloc.so.0"), "libarenalloc.so.0 not needed?");
    TU_REQUIRE_MSG(contains(needed, "libstdc++.so.6"), "libstdc++.so.6 not needed?");
    for (const std::string &n : needed)
        TU_REQUIRE_MSG(std::regex_match(n, allowed_re), "libarenalloc_cxx.so needs " << n);
}

// libarenalloc_cxx.so exports every replaceable operator new and delete
// (mangled for this target's size_t) and nothing else.  It calls mallocx,
// dallocx and sdallocx, which only arenalloc defines, and no sized free
// the C library may define too (C23's free_sized): where the C library's
// malloc is found first, its blocks must still be arenalloc's, and the
// sized delete arenalloc's check (lib/cxx/new_delete.cc).
ATF_TEST_CASE_WITHOUT_HEAD(linkage__cxx_exports_operators_only);
ATF_TEST_CASE_BODY(linkage__cxx_exports_operators_only)
{
    const std::string z = typeid(std::size_t).name();  // "m" or "j"
    const std::string nothrow = "RKSt9nothrow_t", al = "St11align_val_t";
    std::set<std::string> expected;
    for (const char *op : { "_Znw", "_Zna" })
        for (const std::string &rest : { std::string(), nothrow, al, al + nothrow })
            expected.insert(std::string(op) + z + rest);
    for (const char *op : { "_ZdlPv", "_ZdaPv" })
        for (const std::string &rest : { std::string(), z, al, z + al, nothrow, al + nothrow })
            expected.insert(std::string(op) + rest);
    ATF_REQUIRE_EQ(20u, expected.size());
    const std::set<std::string> defined =
        nm_names(tool_output("nm", { "-D", "--defined-only", ARENALLOC_CXX_SHLIB }));
    TU_REQUIRE_MSG(defined == expected, "exports [" << join(defined) << "], expected [" << join(expected) << "]");

    const std::string prefix = ARENALLOC_INSTALLED_PREFIX;
    const std::set<std::string> undefined =
        nm_names(tool_output("nm", { "-D", "--undefined-only", ARENALLOC_CXX_SHLIB }));
    for (const char *fn : { "mallocx", "dallocx", "sdallocx" })
        TU_REQUIRE_MSG(undefined.count(prefix + fn) == 1, "libarenalloc_cxx.so does not call " << prefix + fn);
    for (const char *fn : { "calloc", "realloc", "posix_memalign", "memalign", "free_sized",
                            "free_aligned_sized" })
        TU_REQUIRE_MSG(undefined.count(fn) == 0 && undefined.count(prefix + fn) == 0,
                       "libarenalloc_cxx.so calls " << fn);
}

ATF_TEST_CASE_WITHOUT_HEAD(linkage__no_cxx_runtime_symbols);
ATF_TEST_CASE_BODY(linkage__no_cxx_runtime_symbols)
{
    // No __cxa_, _Z, __gxx_ or _Unwind_ symbol at all: the library is
    // linked without the C runtime's start files (whose crtbegin refers
    // to __cxa_finalize) and registers its exit report with on_exit()
    // rather than atexit() (which compiles to __cxa_atexit), so any such
    // symbol means a C++ runtime dependency crept in.
    const std::string out =
        tool_output("nm", { "-D", "--undefined-only", shlib(*this) });
    const std::set<std::string> undefined = nm_names(out);
    ATF_REQUIRE(!undefined.empty());
    for (const std::string &s : undefined) {
        TU_REQUIRE_MSG(!testutil::starts_with(s, "__cxa_") &&
                           !testutil::starts_with(s, "_Z") &&
                           !testutil::starts_with(s, "__gxx_") &&
                           !testutil::starts_with(s, "_Unwind_"),
                       "libarenalloc.so refers to the C++ runtime symbol "
                           << s);
    }
    for (const char *version : { "@GLIBCXX", "@CXXABI", "@GCC_" })
        TU_REQUIRE_MSG(out.find(version) == std::string::npos,
                       "libarenalloc.so refers to a " << version + 1
                                                      << " symbol: [" << out
                                                      << "]");
    const std::set<std::string> defined = nm_names(
        tool_output("nm", { "-D", "--defined-only", shlib(*this) }));
    for (const std::string &s : defined)
        TU_REQUIRE_MSG(!testutil::starts_with(s, "_Z"),
                       "libarenalloc.so exports the C++ symbol " << s);
}

namespace {

// The public API: every name of lib/Symbol.map (and, on glibc, of
// lib/Symbol.glibc.map).
const std::set<std::string> &
public_names(void)
{
    static const std::set<std::string> names = {
        "malloc",        "calloc",         "realloc",
        "free",          "reallocarray",   "reallocf",       "posix_memalign",
        "aligned_alloc", "memalign",       "valloc",
        "pvalloc",       "malloc_usable_size", "arenalloc_get_summary",
        "arenalloc_purge", "malloc_trim", "malloc_stats_print",
        "mallctl", "mallctlnametomib", "mallctlbymib",
        "_malloc_prefork", "_malloc_postfork", "_malloc_postfork_child",
        "_malloc_thread_cleanup", "free_sized", "free_aligned_sized",
        "arenalloc_debug_descriptor",
        "mallocx", "rallocx", "xallocx", "sallocx", "dallocx", "sdallocx", "nallocx",
#if defined(__GLIBC__)
        // glibc's extensions, exported where the C library is glibc
        // (lib/Symbol.glibc.map).
        "mallinfo", "mallinfo2", "mallopt", "malloc_info",
#endif
    };
    return names;
}

// The shared library at path exports the public API with prefix in front
// of every name, and nothing else; every export is code.
void
require_exports(const std::string &path, const std::string &prefix)
{
    if (access(path.c_str(), R_OK) != 0)
        ATF_FAIL("the built library " + path + " is missing");
    std::set<std::string> expected;
    for (const std::string &n : public_names())
        expected.insert(prefix + n);
    const std::string out =
        tool_output("nm", { "-D", "--defined-only", path });
    const std::set<std::string> defined = nm_names(out);
    std::set<std::string> extra, missing;
    std::set_difference(defined.begin(), defined.end(), expected.begin(),
                        expected.end(), std::inserter(extra, extra.end()));
    std::set_difference(expected.begin(), expected.end(), defined.begin(),
                        defined.end(), std::inserter(missing, missing.end()));
    TU_REQUIRE_MSG(missing.empty(), path << " does not export: " << join(missing));
    TU_REQUIRE_MSG(extra.empty(), path << " exports beyond the public API: "
                                       << join(extra));
    // Every export is a function, except the debug descriptor: one
    // constant object (read-only after relocation).
    for (const std::string &line : testutil::lines_of(out)) {
        std::istringstream ss(line);
        std::string addr, type, name;
        if (!(ss >> addr >> type >> name) || type == "A")
            continue;
        if (name == prefix + "arenalloc_debug_descriptor") {
            TU_REQUIRE_MSG(type == "D" || type == "R",
                           "export " << name << " has type " << type
                                     << " (not initialized data)");
            continue;
        }
        TU_REQUIRE_MSG(type == "T" || type == "W" || type == "i",
                       "export " << name << " has type " << type
                                 << " (not code)");
    }
}

}  // namespace

// The library the tests link and preload (in a --with-symbol-prefix build,
// its copy with the standard names).
ATF_TEST_CASE_WITHOUT_HEAD(linkage__exported_symbols);
ATF_TEST_CASE_BODY(linkage__exported_symbols)
{
    require_exports(shlib(*this), "");
}

// The library make install installs, with the configured prefix (none by
// default: then the same file as above).
ATF_TEST_CASE_WITHOUT_HEAD(linkage__installed_exported_symbols);
ATF_TEST_CASE_BODY(linkage__installed_exported_symbols)
{
    require_exports(ARENALLOC_INSTALLED_SHLIB, ARENALLOC_INSTALLED_PREFIX);
}

// lib/libarenalloc_prefixed, built in every configuration.
ATF_TEST_CASE_WITHOUT_HEAD(linkage__prefixed_exported_symbols);
ATF_TEST_CASE_BODY(linkage__prefixed_exported_symbols)
{
    require_exports(ARENALLOC_PREFIXED_SHLIB, "arena_");
}

namespace {

// The objects libtool compiled for lib/: the PIC and non-PIC object each
// lib/*.lo names (pic_object='.libs/x.o', non_pic_object='x.o').
std::vector<std::string>
lib_objects(const std::string &libdir, std::set<std::string> *sources)
{
    std::vector<std::string> objects;
    DIR *d = opendir(libdir.c_str());
    TU_REQUIRE_MSG(d != NULL, "cannot read " << libdir);
    while (struct dirent *e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() < 4 || name.compare(name.size() - 3, 3, ".lo") != 0)
            continue;
        // lib_<target>_la-<source>.lo: remember <source>.
        const std::string::size_type dash = name.rfind("_la-");
        if (dash != std::string::npos)
            sources->insert(name.substr(dash + 4, name.size() - dash - 7));
        std::ifstream lo(libdir + "/" + name);
        std::string line;
        while (std::getline(lo, line)) {
            static const std::regex obj_re("^(pic_object|non_pic_object)='(.*)'$");
            std::smatch m;
            if (std::regex_match(line, m, obj_re) && m[2] != "none")
                objects.push_back(libdir + "/" + std::string(m[2]));
        }
    }
    closedir(d);
    return objects;
}

}  // namespace

// nm on every object of lib/: no reference to libstdc++ (std:: functions,
// operator new/delete), to libgcc_s's unwinder or to the C++ ABI
// (__cxa_*, __gxx_personality_*).  A _Z name may be referred to only if
// some object of lib/ defines it (our own C++ functions).
ATF_TEST_CASE_WITHOUT_HEAD(linkage__objects_need_no_cxx_runtime);
ATF_TEST_CASE_BODY(linkage__objects_need_no_cxx_runtime)
{
    const std::string top_builddir =
        get_config_var("top_builddir", ARENALLOC_TOP_BUILDDIR);
    const std::string top_srcdir =
        get_config_var("top_srcdir", ARENALLOC_TOP_SRCDIR);
    std::set<std::string> compiled;
    const std::vector<std::string> objects =
        lib_objects(top_builddir + "/lib", &compiled);

    // Every lib/*.cc was compiled (so the scan below cannot pass empty),
    // but for the other systems' platform files: one platform_SYSTEM.cc is
    // built, the one configure picked.
    DIR *d = opendir((top_srcdir + "/lib").c_str());
    ATF_REQUIRE(d != NULL);
    unsigned nsources = 0, nplatform = 0;
    while (struct dirent *e = readdir(d)) {
        const std::string n = e->d_name;
        if (n.size() > 3 && n.compare(n.size() - 3, 3, ".cc") == 0) {
            if (n.compare(0, 9, "platform_") == 0 && n != "platform_posix.cc") {
                nplatform += compiled.count(n.substr(0, n.size() - 3));
                continue;
            }
            nsources++;
            TU_REQUIRE_MSG(compiled.count(n.substr(0, n.size() - 3)) == 1,
                           "no object of lib/" << n << " in " << top_builddir
                                               << "/lib");
        }
    }
    closedir(d);
    ATF_REQUIRE_EQ(nplatform, 1u);
    ATF_REQUIRE(nsources >= 20);
    ATF_REQUIRE(objects.size() >= nsources);

    std::set<std::string> defined, undefined;
    std::map<std::string, std::string> user;  // undefined name -> an object
    for (const std::string &o : objects) {
        for (const std::string &n :
             nm_names(tool_output("nm", { "--defined-only", o })))
            defined.insert(n);
        for (const std::string &n :
             nm_names(tool_output("nm", { "--undefined-only", o }))) {
            undefined.insert(n);
            user.emplace(n, o);
        }
    }
    for (const std::string &u : undefined) {
        const bool runtime = testutil::starts_with(u, "__cxa_") ||
                             testutil::starts_with(u, "__gxx_personality") ||
                             testutil::starts_with(u, "_Unwind_") ||
                             testutil::starts_with(u, "_ZNSt") ||
                             testutil::starts_with(u, "_ZSt") ||
                             (testutil::starts_with(u, "_Z") && defined.count(u) == 0);
        TU_REQUIRE_MSG(!runtime, user[u] << " refers to the C++ runtime symbol " << u);
    }
}

ATF_TEST_CASE_WITHOUT_HEAD(linkage__no_static_constructors);
ATF_TEST_CASE_BODY(linkage__no_static_constructors)
{
    // The library is linked without the C runtime's start files, so any
    // entry in .init_array/.fini_array (or .ctors/.dtors) is a static
    // constructor or destructor from lib/.
    const std::string out =
        tool_output("readelf", { "-S", "-W", shlib(*this) });
    static const std::regex re(
        "\\]\\s+\\.(init_array|fini_array|ctors|dtors)\\s+\\S+\\s+[0-9a-f]+\\s+"
        "[0-9a-f]+\\s+([0-9a-f]+)");
    for (const std::string &line : testutil::lines_of(out)) {
        std::smatch m;
        if (std::regex_search(line, m, re))
            TU_REQUIRE_MSG(std::stoul(m[2], NULL, 16) == 0,
                           "." << m[1] << " is not empty: a static constructor "
                               "or destructor in lib/");
    }
}

// Issue 9 item 2: the code of malloc and free themselves is the thread
// cache's hit path (everything else is reached by a jump out of it), and
// it holds no atomic read-modify-write (no lock prefix, no xchg with
// memory) and calls nothing (so no mutex either).  It reads the x86-64
// disassembly; a debug or sanitized build puts checks into the path.
ATF_TEST_CASE_WITHOUT_HEAD(linkage__hit_paths_take_no_lock);
ATF_TEST_CASE_BODY(linkage__hit_paths_take_no_lock)
{
#if !defined(__x86_64__)
    ATF_SKIP("reads x86-64 disassembly");
#elif ARENALLOC_DEBUG || defined(ARENALLOC_SANITIZED)
    ATF_SKIP("a debug or sanitized build puts checks into the hit path");
#else
    const std::string out = tool_output(
        "objdump", { "-d", "--no-show-raw-insn", "-M", "att", shlib(*this) });
    static const std::regex atomic_re(
        "^\\s*[0-9a-f]+:\\s+(lock\\b|xchg\\S*\\s+.*\\()");
    static const std::regex call_re("^\\s*[0-9a-f]+:\\s+call");
    for (const std::string fn : { "malloc", "free" }) {
        // Its body: from the line "ADDRESS <fn>:" to the blank line.
        std::vector<std::string> body;
        bool in = false;
        for (const std::string &line : testutil::lines_of(out)) {
            if (!in) {
                const std::string head = " <" + fn + ">:";
                in = line.size() > head.size() &&
                     line.compare(line.size() - head.size(), head.size(), head) == 0;
                continue;
            }
            if (line.empty())
                break;
            body.push_back(line);
        }
        TU_REQUIRE_MSG(body.size() >= 5, "no body of " << fn << " in objdump -d");
        for (const std::string &line : body) {
            TU_REQUIRE_MSG(!std::regex_search(line, atomic_re),
                           fn << " has an atomic read-modify-write: " << line);
            TU_REQUIRE_MSG(!std::regex_search(line, call_re),
                           fn << " calls out of its hit path: " << line);
        }
    }
#endif
}

ATF_INIT_TEST_CASES(tcs)
{
    ATF_ADD_TEST_CASE(tcs, linkage__needed_libraries);
    ATF_ADD_TEST_CASE(tcs, linkage__no_cxx_runtime_symbols);
    ATF_ADD_TEST_CASE(tcs, linkage__cxx_needed_libraries);
    ATF_ADD_TEST_CASE(tcs, linkage__cxx_exports_operators_only);
    ATF_ADD_TEST_CASE(tcs, linkage__exported_symbols);
    ATF_ADD_TEST_CASE(tcs, linkage__installed_exported_symbols);
    ATF_ADD_TEST_CASE(tcs, linkage__prefixed_exported_symbols);
    ATF_ADD_TEST_CASE(tcs, linkage__objects_need_no_cxx_runtime);
    ATF_ADD_TEST_CASE(tcs, linkage__no_static_constructors);
    ATF_ADD_TEST_CASE(tcs, linkage__hit_paths_take_no_lock);
}
