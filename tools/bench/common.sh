# shellcheck shell=bash
# tools/bench/common.sh -- what tools/bench/run and tools/bench/callgrind
# share: finding (or installing) the allocator libraries and building
# arenalloc.  Sourced, not executed; the caller sets ROOT (the top of the
# source tree) and, for bench_arenalloc_lib, arenalloc_lib and no_build.

bench_die() {
	echo "bench: $*" >&2
	exit 1
}

bench_note() {
	echo "bench: $*" >&2
}

# The peers: shared object name and Debian package of each.
declare -A BENCH_SONAME=(
	[jemalloc]=libjemalloc.so.2
	[tcmalloc]=libtcmalloc_minimal.so.4
	[mimalloc]=libmimalloc.so.2
)
declare -A BENCH_PACKAGE=(
	[jemalloc]=libjemalloc2
	[tcmalloc]=libtcmalloc-minimal4
	[mimalloc]=libmimalloc2.0
)

bench_as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		return 1
	fi
}

# bench_apt_install PKG...: install Debian packages; false if that fails.
bench_apt_install() {
	command -v apt-get >/dev/null 2>&1 || return 1
	bench_note "installing: $*"
	bench_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >&2 ||
	    { bench_as_root apt-get update >&2 &&
	      bench_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >&2; }
}

BENCH_MULTIARCH=$( (gcc -print-multiarch || dpkg-architecture -qDEB_HOST_MULTIARCH) 2>/dev/null | head -n 1 || true)

# bench_find_lib SONAME: print the path of an installed library, or nothing.
bench_find_lib() {
	local d
	for d in ${BENCH_MULTIARCH:+/usr/lib/$BENCH_MULTIARCH /lib/$BENCH_MULTIARCH} \
	    /usr/lib64 /usr/lib /usr/local/lib; do
		if [ -e "$d/$1" ]; then
			echo "$d/$1"
			return 0
		fi
	done
	if command -v ldconfig >/dev/null 2>&1; then
		ldconfig -p 2>/dev/null | awk -v so="$1" '$1 == so { print $NF; exit }'
	fi
}

# bench_install_missing ALLOCATOR... [-- COMMAND=PACKAGE...]: install the
# packages of the named peers whose libraries are missing, and of each
# COMMAND not found, in one apt-get call; dies when that fails.
bench_install_missing() {
	local a missing=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case "$1" in
		jemalloc|tcmalloc|mimalloc)
			[ -n "$(bench_find_lib "${BENCH_SONAME[$1]}")" ] ||
			    missing="$missing ${BENCH_PACKAGE[$1]}" ;;
		esac
		shift
	done
	[ $# -gt 0 ] && shift
	for a in "$@"; do
		command -v "${a%%=*}" >/dev/null 2>&1 || missing="$missing ${a#*=}"
	done
	[ -z "$missing" ] && return 0
	# shellcheck disable=SC2086
	bench_apt_install $missing || bench_die "cannot install:$missing (install them by hand)"
}

# bench_peer_lib NAME: the real path of a peer's library (after install).
bench_peer_lib() {
	local p
	p=$(bench_find_lib "${BENCH_SONAME[$1]}")
	[ -n "$p" ] || bench_die "$1: ${BENCH_SONAME[$1]} not found"
	realpath "$p"
}

bench_pkg_version() {
	command -v dpkg-query >/dev/null 2>&1 &&
	    dpkg-query -W -f '${Version}' "$1" 2>/dev/null || echo "?"
}

# bench_arenalloc_lib: print the path of the libarenalloc.so to measure:
# $arenalloc_lib if set; with no_build=1 the existing build's library;
# otherwise the build brought up to date by tools/lib/setup.sh, as
# tools/run and tools/check do (the first time it installs the build
# packages, runs autogen.sh and configure; log: build/tools-build.log).
bench_arenalloc_lib() {
	local so="${ARENALLOC_BUILD:-$ROOT/build}/lib/.libs/libarenalloc.so"

	if [ -n "${arenalloc_lib:-}" ]; then
		[ -f "$arenalloc_lib" ] || bench_die "--lib: no such file: $arenalloc_lib"
		realpath "$arenalloc_lib"
		return
	fi
	if [ "${no_build:-0}" = 1 ]; then
		[ -f "$so" ] || bench_die "--no-build: $so does not exist"
		realpath "$so"
		return
	fi
	(
		set +euf
		# Read by setup.sh.
		# shellcheck disable=SC2034
		ARENALLOC_TOOL=tools/bench
		# shellcheck disable=SC2034
		ARENALLOC_QUIET=1
		# shellcheck source=tools/lib/setup.sh
		. "$ROOT/tools/lib/setup.sh"
		bench_note "bringing the arenalloc build up to date"
		arenalloc_setup >&2
		built=$ARENALLOC_BUILD/lib/.libs/libarenalloc.so
		[ -f "$built" ] || bench_die "the build did not produce $built"
		realpath "$built"
	)
}

# bench_libc_path: the real path of the C library (glibc's malloc).
bench_libc_path() {
	realpath "$(bench_find_lib libc.so.6)" 2>/dev/null || echo libc.so.6
}
