# tests/platform/syntax_test — the FreeBSD and illumos platform layers are
# compiled (syntax only, with the library's flags and -Werror) against
# stub headers that declare what those systems' manual pages give, and
# nothing from this machine's C library: -nostdinc drops every system
# directory, then only the stub directory, the C++ library's headers and
# the compiler's own (<stddef.h>) are put back.
#
# Made by make from tests/platform/syntax_test.sh, which see; the
# compiler, its flags and its header directories are those of the build.

CXX='@SYNTAX_CXX@'
LIB_CXXFLAGS='@SYNTAX_CXXFLAGS@'
# The C++ library's header directories and the compiler's own, as -isystem.
CXX_SYSTEM_DIRS='@SYNTAX_SYSTEM_DIRS@'
TOP_SRCDIR='@SYNTAX_TOP_SRCDIR@'
TOP_BUILDDIR='@SYNTAX_TOP_BUILDDIR@'

# libstdc++'s <bits/c++config.h> includes <bits/os_defines.h>, which is
# glibc's (it includes <features.h>); defining its guard skips it.  It
# only concerns gets, isinf/isnan and thread ids, none of which the
# platform layer uses.
CXX_LIBRARY_GLUE='-D_GLIBCXX_OS_DEFINES=1'

# Predefined macros: those of this Linux compiler out, the target's in.
target_macros() {
    echo "-U__linux__ -U__linux -U__gnu_linux__ -Ulinux"
    case $1 in
    freebsd) echo "-D__FreeBSD__=14" ;;
    illumos) echo "-D__sun -D__sun__ -D__SVR4 -D__illumos__" ;;
    esac
}

# compile OS FILE [PATH]: compiles lib/FILE (or PATH, under the name
# FILE) for OS.  The lib/ headers are copied to a fresh directory first,
# beside the OS's config.h: "config.h" is looked up next to platform.h
# before any -I, so a lib/config.h left by an in-tree build must not be in
# reach.
compile() {
    os=$1 file=$2 path=${3:-$TOP_SRCDIR/lib/$2}
    rm -rf src && mkdir src || return 2
    cp "$TOP_SRCDIR"/lib/*.h src/ || return 2
    rm -f src/config.h
    cp "$TOP_SRCDIR/tests/platform/$os/config.h" "$path" src/ || return 2
    if [ "${path##*/}" != "$file" ]; then
        mv "src/${path##*/}" "src/$file" || return 2
    fi
    # A header is checked the way it is used, included by a source file.
    unit=$file
    case $file in
    *.h) unit=include_$file.cc; echo "#include \"$file\"" >"src/$unit" ;;
    esac
    # shellcheck disable=SC2046,SC2086
    "$CXX" $LIB_CXXFLAGS -Werror -fsyntax-only -nostdinc $(target_macros "$os") \
        $CXX_LIBRARY_GLUE -isystem "$TOP_SRCDIR/tests/platform/$os/include" \
        $CXX_SYSTEM_DIRS -Isrc "src/$unit"
}

# compiles OS FILE: lib/FILE compiles for OS without any diagnostic.
compiles() {
    echo "compiling lib/$2 for $1"
    if ! compile "$1" "$2" >diagnostics 2>&1 || [ -s diagnostics ]; then
        cat diagnostics >&2
        atf_fail "lib/$2 does not compile cleanly against the $1 stubs"
    fi
}

# refused OS FILE PATH WORD: PATH does not compile for OS, and the
# compiler's complaint names WORD.
refused() {
    if compile "$1" "$2" "$3" >diagnostics 2>&1; then
        cat diagnostics >&2
        atf_fail "$3 compiled against the $1 stubs"
    fi
    if ! grep -q "$4" diagnostics; then
        cat diagnostics >&2
        atf_fail "$3 failed for $1, but not for want of $4"
    fi
}

# Every file of OS's platform layer compiles, and mutex.h, which uses
# <pthread.h> and, on FreeBSD, __isthreaded.
check_layer() {
    for file in platform_posix.cc "platform_$1.cc" mutex.h; do
        compiles "$1" "$file"
    done
}

atf_test_case freebsd
freebsd_head() {
    atf_set "descr" "lib/platform_freebsd.cc, platform_posix.cc and mutex.h compile against the FreeBSD stubs"
}
freebsd_body() {
    check_layer freebsd
}

atf_test_case illumos
illumos_head() {
    atf_set "descr" "lib/platform_illumos.cc, platform_posix.cc and mutex.h compile against the illumos stubs"
}
illumos_body() {
    check_layer illumos
}

atf_test_case linux_file_fails_on_the_stubs
linux_file_fails_on_the_stubs_head() {
    atf_set "descr" "The check can fail: the Linux file, which needs" \
        "headers neither system has, does not compile against the stubs"
}
linux_file_fails_on_the_stubs_body() {
    for os in freebsd illumos; do
        refused "$os" platform_linux.cc "$TOP_SRCDIR/lib/platform_linux.cc" sched.h
    done
}

atf_test_case broken_edit_fails
broken_edit_fails_head() {
    atf_set "descr" "The check can fail: a system file calling what its" \
        "system lacks (mremap) is refused"
}
broken_edit_fails_body() {
    for os in freebsd illumos; do
        cp "$TOP_SRCDIR/lib/platform_$os.cc" edited.cc
        printf '%s\n' 'namespace arenalloc {' \
            'void *broken(void *p) { return mremap(p, 1, 2, 0); }' '}' >>edited.cc
        refused "$os" "platform_$os.cc" "$PWD/edited.cc" mremap
    done
}

atf_test_case library_compiles_with_clang
library_compiles_with_clang_head() {
    atf_set "descr" "Every file of the library built here compiles with" \
        "clang++ (FreeBSD's compiler) and the library's flags, without a" \
        "diagnostic"
}
library_compiles_with_clang_body() {
    command -v clang++ >/dev/null 2>&1 || atf_skip "clang++ is not installed"
    for path in "$TOP_SRCDIR"/lib/*.cc; do
        case ${path##*/} in
        platform_freebsd.cc|platform_illumos.cc) continue ;;  # the stubs' cases
        esac
        echo "compiling lib/${path##*/} with clang++"
        # shellcheck disable=SC2086
        if ! clang++ $LIB_CXXFLAGS -Werror -fsyntax-only -I"$TOP_BUILDDIR/lib" \
            -I"$TOP_SRCDIR/lib" "$path" >diagnostics 2>&1 || [ -s diagnostics ]; then
            cat diagnostics >&2
            atf_fail "lib/${path##*/} does not compile cleanly with clang++"
        fi
    done
}

atf_init_test_cases() {
    atf_add_test_case library_compiles_with_clang
    atf_add_test_case freebsd
    atf_add_test_case illumos
    atf_add_test_case linux_file_fails_on_the_stubs
    atf_add_test_case broken_edit_fails
}
