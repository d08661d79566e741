# tests/platform/compile_test — the library as FreeBSD and illumos would
# build it, short of running it.  For each target, every file of lib/ the
# library is built from there (the common files, platform_posix.cc and the
# system's own file) is compiled to an object by clang for the real target
# triple, so with that target's predefined macros, type sizes and ABI,
# with the library's flags and -Werror, against stub system headers that
# declare what the system's manual pages give (tests/platform/OS/include;
# -nostdinc keeps this machine's C library out) and a config.h with
# configure's answers for that system (tests/platform/OS/config-ARCH.h).
# The objects are then linked into a shared object, with lib/Symbol.map
# as its version script (every public name must be defined), and:
#   - every symbol it leaves undefined is in tests/platform/OS/libc-symbols.txt,
#     the functions that system's libc provides, each with its manual page;
#   - none is of the C++ runtime (__cxa_*, operator new/delete, ...);
#   - no object has global constructors or destructors (.init_array,
#     .ctors, .fini_array, .dtors, .preinit_array).
# The C++ headers the library includes (<atomic>, <cstddef>, <cstdint>,
# header-only) are this machine's libstdc++'s, as clang finds them;
# FreeBSD's own are libc++'s.
#
# Made by make from tests/platform/compile_test.sh; the flags are the
# build's (LIB_CXXFLAGS), the tools those tools/lib/setup.sh installs.

CLANGXX='@COMPILE_CLANGXX@'
LINKER='@COMPILE_LD@'
READELF='@COMPILE_READELF@'
LIB_CXXFLAGS='@COMPILE_CXXFLAGS@'
TOP_SRCDIR='@COMPILE_TOP_SRCDIR@'
TOP_BUILDDIR='@COMPILE_TOP_BUILDDIR@'

# libstdc++'s <bits/c++config.h> includes <bits/os_defines.h>, which is
# glibc's (it includes <features.h>); defining its guard skips it.  It
# only concerns gets, isinf/isnan and thread ids, none of which lib/ uses.
CXX_LIBRARY_GLUE='-D_GLIBCXX_OS_DEFINES=1'

# The tools are required, not optional: a missing one fails the test
# rather than skipping it, so that a CI without clang cannot pass it.
need_tools() {
    for tool in "$CLANGXX" "$LINKER" "$READELF"; do
        command -v "$tool" >/dev/null 2>&1 ||
            atf_fail "$tool is not installed (tools/lib/setup.sh installs clang, lld and binutils)"
    done
}

# The header directories put back after -nostdinc: the C++ library's, as
# clang lists them for this machine, and clang's own (<stddef.h>).
system_dirs() {
    dirs=
    for d in $(LC_ALL=C "$CLANGXX" -xc++ -E -v /dev/null 2>&1 |
        sed -n '/^#include <\.\.\.> search starts here:/,/^End of search list/p' |
        sed -n 's|^ *\(/[^ ]*\)$|\1|p'); do
        case $d in */c++/*) dirs="$dirs -isystem $d" ;; esac
    done
    echo "$dirs -isystem $("$CLANGXX" -print-resource-dir)/include"
}

# sources OS: the lib/*.cc files the library is built from on OS, every
# one but the other systems' platform files.
sources() {
    for path in "$TOP_SRCDIR"/lib/*.cc; do
        case ${path##*/} in
        platform_posix.cc | "platform_$1.cc") ;;
        platform_*.cc) continue ;;
        esac
        echo "${path##*/}"
    done
}

# prepare OS ARCH: src/ holds lib/'s headers and OS's sources, and a
# config.h that is OS's config-ARCH.h plus this build's package names.
# "config.h" is looked up next to platform.h before any -I, so a
# lib/config.h left by an in-tree build must not be copied.
prepare() {
    rm -rf src obj && mkdir src obj || return 2
    cp "$TOP_SRCDIR"/lib/*.h "$TOP_SRCDIR"/tests/platform/"$1"/config-*.h src/ || return 2
    for file in $(sources "$1"); do
        cp "$TOP_SRCDIR/lib/$file" src/ || return 2
    done
    { echo "#include \"config-$2.h\""
      grep '^#define PACKAGE_' "$TOP_BUILDDIR/lib/config.h"
    } >src/config.h || return 2
}

# compile OS TRIPLE FILE [FLAGS...]: src/FILE to obj/, for TRIPLE against
# OS's stubs; the compiler's diagnostics on stdout and stderr.
compile() {
    os=$1 triple=$2 file=$3
    shift 3
    # shellcheck disable=SC2046,SC2086
    "$CLANGXX" --target="$triple" $LIB_CXXFLAGS -fPIC -Werror -nostdinc \
        $CXX_LIBRARY_GLUE -isystem "$TOP_SRCDIR/tests/platform/$os/include" \
        $SYSTEM_DIRS -Isrc "$@" -c "src/$file" -o "obj/${file%.cc}.o"
}

# compiles OS TRIPLE FILE: as compile, and fails the test on any
# diagnostic.
compiles() {
    echo "compiling lib/$3 for $2"
    if ! compile "$@" >diagnostics 2>&1 || [ -s diagnostics ]; then
        cat diagnostics >&2
        atf_fail "lib/$3 does not compile cleanly for $2 against the $1 stubs"
    fi
}

# link SO [FLAGS...]: obj/*.o into the shared object SO, with nothing
# else (no C library, no start files, no C++ runtime).
link() {
    so=$1
    shift
    "$LINKER" -shared "$@" -o "$so" obj/*.o
}

# undefined SO: the names SO leaves undefined, one a line.
undefined() {
    "$READELF" -W --dyn-syms "$1" |
        awk '$7 == "UND" && $8 != "" { sub(/@.*/, "", $8); print $8 }' | sort -u
}

# check_undefined SO LIST: every name SO leaves undefined is in LIST (first
# word of each line, # comments), and none is of the C++ runtime; each
# one that is not is named on stderr.
check_undefined() {
    status=0
    undefined "$1" >undefined.txt || return 2
    [ -s undefined.txt ] || { echo "no undefined symbol at all in $1" >&2; return 2; }
    while read -r name; do
        case $name in
        __cxa_* | __gxx_personality* | _Unwind_* | __dynamic_cast | _Zn[wa]* | _Zd[la]* | _ZT[VIS]* | _ZSt*)
            echo "C++ runtime symbol undefined: $name" >&2
            status=1
            continue ;;
        esac
        if ! sed 's/#.*//' "$2" | awk -v n="$name" '$1 == n { found = 1 } END { exit !found }'; then
            echo "undefined, and not a documented libc function ($2): $name" >&2
            status=1
        fi
    done <undefined.txt
    return $status
}

# check_no_constructors FILE...: no global constructor or destructor
# section in any FILE; each one found is named on stderr.
check_no_constructors() {
    status=0
    for file in "$@"; do
        for section in $("$READELF" -SW "$file" |
            sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\) .*/\1/p'); do
            case $section in
            .preinit_array | .init_array | .fini_array | .ctors | .dtors | .ctors.* | .dtors.* | .init_array.* | .fini_array.*)
                echo "global constructor or destructor: $section in ${file##*/}" >&2
                status=1 ;;
            esac
        done
    done
    return $status
}

# build_and_check OS ARCH TRIPLE MACRO: the whole check for one target,
# whose compiler predefines MACRO (and not __linux__).
build_and_check() {
    need_tools
    SYSTEM_DIRS=$(system_dirs)
    "$CLANGXX" --target="$3" -dM -E -xc++ /dev/null >macros || atf_fail "$CLANGXX cannot target $3"
    grep -q "^#define $4 " macros || atf_fail "$CLANGXX does not define $4 for $3"
    if grep -q '^#define __linux__ ' macros; then
        atf_fail "$CLANGXX defines __linux__ for $3"
    fi
    prepare "$1" "$2" || atf_fail "could not set up the sources"
    for file in $(sources "$1"); do
        compiles "$1" "$3" "$file"
    done
    # lib/Symbol.map as the version script, as a libc's SYM_MAPS uses it:
    # every public name must be defined, and only those are exported.
    link libarenalloc.so --version-script="$TOP_SRCDIR/lib/Symbol.map" \
        --no-undefined-version >diagnostics 2>&1 || {
        cat diagnostics >&2
        atf_fail "the $3 objects do not link into a shared object exporting lib/Symbol.map"
    }
    echo "undefined in libarenalloc.so for $3:"
    undefined libarenalloc.so | tr '\n' ' '
    echo
    check_undefined libarenalloc.so "$TOP_SRCDIR/tests/platform/$1/libc-symbols.txt" ||
        atf_fail "libarenalloc.so for $3 needs what $1's libc does not document (above)"
    check_no_constructors obj/*.o libarenalloc.so ||
        atf_fail "the $3 build has global constructors or destructors (above)"
}

atf_test_case freebsd_x86_64
freebsd_x86_64_head() {
    atf_set "descr" "lib/ compiles for x86_64-unknown-freebsd14.0 against" \
        "the FreeBSD stubs, and links leaving only documented libc functions undefined"
}
freebsd_x86_64_body() {
    build_and_check freebsd amd64 x86_64-unknown-freebsd14.0 __FreeBSD__
}

atf_test_case freebsd_aarch64
freebsd_aarch64_head() {
    atf_set "descr" "lib/ compiles for aarch64-unknown-freebsd14.0 (no sbrk)" \
        "against the FreeBSD stubs, and links leaving only documented libc functions undefined"
}
freebsd_aarch64_body() {
    build_and_check freebsd arm64 aarch64-unknown-freebsd14.0 __FreeBSD__
}

atf_test_case illumos_x86_64
illumos_x86_64_head() {
    atf_set "descr" "lib/ compiles for x86_64-pc-solaris2.11 against" \
        "the illumos stubs, and links leaving only documented libc functions undefined"
}
illumos_x86_64_body() {
    build_and_check illumos amd64 x86_64-pc-solaris2.11 __sun
}

atf_test_case configs_decide_every_check
configs_decide_every_check_head() {
    atf_set "descr" "Each system's config.h decides every name configure" \
        "defines (lib/config.h.in), as defined or as an #undef comment"
}
configs_decide_every_check_body() {
    template=$TOP_SRCDIR/lib/config.h.in
    [ -f "$template" ] || template=$TOP_BUILDDIR/lib/config.h.in
    names=$(sed -n 's|^#undef \([A-Za-z0-9_]*\)$|\1|p' "$template")
    [ -n "$names" ] || atf_fail "no #undef line in $template"
    for os in freebsd illumos; do
        config=$TOP_SRCDIR/tests/platform/$os/config-amd64.h
        for name in $names; do
            case $name in PACKAGE* | VERSION | LT_OBJDIR | STDC_HEADERS) continue ;; esac
            grep -Eq "^(#define $name( |\$)|/\* #undef $name \*/)" "$config" ||
                atf_fail "$config does not decide $name (configure.ac defines it)"
        done
    done
}

# refused OS TRIPLE FILE PATH WORD: PATH, compiled as lib/FILE, does not
# compile for TRIPLE, and the complaint names WORD.
refused() {
    prepare "$1" amd64 || atf_fail "could not set up the sources"
    cp "$4" "src/$3" || atf_fail "could not copy $4"
    if compile "$1" "$2" "$3" >diagnostics 2>&1; then
        cat diagnostics >&2
        atf_fail "$4 compiled for $2"
    fi
    if ! grep -q "$5" diagnostics; then
        cat diagnostics >&2
        atf_fail "$4 failed for $2, but not for want of $5"
    fi
}

atf_test_case linux_file_fails_on_the_stubs
linux_file_fails_on_the_stubs_head() {
    atf_set "descr" "The check can fail: the Linux file, which needs" \
        "headers neither system has, does not compile against the stubs"
}
linux_file_fails_on_the_stubs_body() {
    need_tools
    SYSTEM_DIRS=$(system_dirs)
    refused freebsd x86_64-unknown-freebsd14.0 platform_linux.cc "$TOP_SRCDIR/lib/platform_linux.cc" sched.h
    refused illumos x86_64-pc-solaris2.11 platform_linux.cc "$TOP_SRCDIR/lib/platform_linux.cc" sched.h
}

atf_test_case broken_edit_fails
broken_edit_fails_head() {
    atf_set "descr" "The check can fail: a system file calling what its" \
        "system lacks (mremap) is refused"
}
broken_edit_fails_body() {
    need_tools
    SYSTEM_DIRS=$(system_dirs)
    for target in freebsd:x86_64-unknown-freebsd14.0 illumos:x86_64-pc-solaris2.11; do
        os=${target%%:*}
        cp "$TOP_SRCDIR/lib/platform_$os.cc" edited.cc
        printf '%s\n' 'namespace arenalloc {' \
            'void *broken(void *p) { return mremap(p, 1, 2, 0); }' '}' >>edited.cc
        refused "$os" "${target#*:}" "platform_$os.cc" "$PWD/edited.cc" mremap
    done
}

# rejected WHAT SOURCE: an object made from SOURCE (for FreeBSD x86_64) is
# refused by the link checks, which name WHAT.
rejected() {
    prepare freebsd amd64 || atf_fail "could not set up the sources"
    printf '%s\n' "$2" >src/extra.cc
    compiles freebsd x86_64-unknown-freebsd14.0 extra.cc
    link extra.so >diagnostics 2>&1 || { cat diagnostics >&2; atf_fail "extra.so does not link"; }
    if check_undefined extra.so "$TOP_SRCDIR/tests/platform/freebsd/libc-symbols.txt" 2>diagnostics &&
        check_no_constructors obj/extra.o 2>>diagnostics; then
        atf_fail "an object with $1 passed the checks"
    fi
    cat diagnostics
    grep -q "$1" diagnostics || atf_fail "the checks failed, but did not name $1"
}

atf_test_case link_checks_can_fail
link_checks_can_fail_head() {
    atf_set "descr" "The check can fail: a glibc-only function, operator" \
        "new and a global constructor are each refused, by name"
}
link_checks_can_fail_body() {
    need_tools
    SYSTEM_DIRS=$(system_dirs)
    rejected mallinfo 'extern "C" void *mallinfo(void);
void *stats() { return mallinfo(); }'
    rejected _Znwm 'int *one() { return new int(1); }'
    rejected .init_array 'extern "C" int getpid(void);
int g_pid = getpid();
int pid() { return g_pid; }'
}

atf_test_case library_compiles_with_clang
library_compiles_with_clang_head() {
    atf_set "descr" "Every file of the library built here compiles with" \
        "clang++ (FreeBSD's compiler) and the library's flags for this" \
        "machine, without a diagnostic"
}
library_compiles_with_clang_body() {
    need_tools
    for path in "$TOP_SRCDIR"/lib/*.cc; do
        case ${path##*/} in
        platform_freebsd.cc|platform_illumos.cc) continue ;;  # the targets' cases
        esac
        echo "compiling lib/${path##*/} with $CLANGXX"
        # shellcheck disable=SC2086
        if ! "$CLANGXX" $LIB_CXXFLAGS -Werror -fsyntax-only -I"$TOP_BUILDDIR/lib" \
            -I"$TOP_SRCDIR/lib" "$path" >diagnostics 2>&1 || [ -s diagnostics ]; then
            cat diagnostics >&2
            atf_fail "lib/${path##*/} does not compile cleanly with $CLANGXX"
        fi
    done
}

atf_init_test_cases() {
    atf_add_test_case freebsd_x86_64
    atf_add_test_case freebsd_aarch64
    atf_add_test_case illumos_x86_64
    atf_add_test_case configs_decide_every_check
    atf_add_test_case linux_file_fails_on_the_stubs
    atf_add_test_case broken_edit_fails
    atf_add_test_case link_checks_can_fail
    atf_add_test_case library_compiles_with_clang
}
