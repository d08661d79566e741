# shellcheck shell=bash
# Shared set-up for tools/check and tools/run (sourced, not executed).
#
# After `arenalloc_setup', the packages the build needs are installed (on
# Debian and derivatives, with apt-get, only when some are missing), the
# tree is configured in $ARENALLOC_BUILD (default: build/ at the top of the
# source tree) and built with make, which rebuilds only what is out of date.
#
# Environment:
#   ARENALLOC_BUILD       build directory (default: <top>/build)
#   ARENALLOC_NO_INSTALL  set to 1 to never run apt-get
#   CONFIGURE_FLAGS       extra arguments for configure (first configure only)
#   MAKEFLAGS             passed through to make as usual

# Commands the build and the suite need, and the Debian package of each.
ARENALLOC_PACKAGES="g++ clang lld make autoconf automake libtool pkg-config kyua atf-sh libatf-dev python3 mandoc bmake binutils musl-tools musl-dev gdb libjemalloc-dev"
# What tools/cross-check adds: Debian's cross compilers and qemu-user.
# (Not g++-multilib for i386: it conflicts with the cross compilers; the
# i686 cross compiler builds 32-bit x86 programs that this kernel runs.)
ARENALLOC_CROSS_PACKAGES="g++-i686-linux-gnu g++-aarch64-linux-gnu g++-s390x-linux-gnu qemu-user"

ARENALLOC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

arenalloc_log() {
	printf '%s: %s\n' "${ARENALLOC_TOOL:-tools}" "$*" >&2
}

arenalloc_die() {
	arenalloc_log "$*"
	exit 2
}

arenalloc_ncpu() {
	nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1
}

# Packages of $ARENALLOC_PACKAGES that dpkg does not list as installed.
arenalloc_missing_packages() {
	local pkg status missing=
	for pkg in $ARENALLOC_PACKAGES; do
		status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) || status=
		case $status in
		*" installed") ;;
		*) missing="$missing $pkg" ;;
		esac
	done
	echo "$missing"
}

# Install what is missing (Debian: apt-get; elsewhere: only check commands).
arenalloc_install_deps() {
	local missing sudo=
	if [ "${ARENALLOC_NO_INSTALL:-0}" = 1 ]; then
		return 0
	fi
	if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
		local cmd absent=
		for cmd in c++ make autoreconf automake libtoolize pkg-config kyua; do
			command -v "$cmd" >/dev/null 2>&1 || absent="$absent $cmd"
		done
		[ -z "$absent" ] ||
		    arenalloc_die "not a Debian system and missing:$absent; install them by hand"
		return 0
	fi
	missing=$(arenalloc_missing_packages)
	[ -n "$missing" ] || return 0
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 ||
		    arenalloc_die "missing packages:$missing; not root and no sudo"
		sudo="sudo"
	fi
	arenalloc_log "installing:$missing"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update ||
	    arenalloc_die "apt-get update failed"
	# shellcheck disable=SC2086
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y $missing ||
	    arenalloc_die "apt-get install failed"
}

# The steps of arenalloc_build, output on stdout/stderr.
arenalloc_build_steps() {
	cd "$ARENALLOC_TOP" || return
	if [ ! -x configure ]; then
		echo "==> ./autogen.sh"
		./autogen.sh || return
	fi
	cd "$ARENALLOC_BUILD" || return
	if [ ! -f Makefile ]; then
		echo "==> configure ${CONFIGURE_FLAGS:-}"
		# shellcheck disable=SC2086
		"$ARENALLOC_TOP/configure" ${CONFIGURE_FLAGS:-} || return
	fi
	echo "==> make -j$(arenalloc_ncpu)"
	make -j"$(arenalloc_ncpu)"
}

# Configure (first time only) and build; make rebuilds only what is out of
# date (and re-runs autoconf/automake/configure itself when their inputs
# changed).  The output goes to the terminal, or with ARENALLOC_QUIET set to
# $ARENALLOC_BUILD/tools-build.log, whose end is shown on failure.
arenalloc_build() {
	local log
	# An in-tree configure (./configure at the top) forbids a separate
	# build directory: use the top directory then.
	if [ -z "${ARENALLOC_BUILD:-}" ]; then
		if [ -f "$ARENALLOC_TOP/config.status" ]; then
			ARENALLOC_BUILD=$ARENALLOC_TOP
		else
			ARENALLOC_BUILD=$ARENALLOC_TOP/build
		fi
	fi
	mkdir -p "$ARENALLOC_BUILD" || arenalloc_die "cannot create $ARENALLOC_BUILD"
	ARENALLOC_BUILD=$(cd "$ARENALLOC_BUILD" && pwd)
	if [ -n "${ARENALLOC_QUIET:-}" ]; then
		log=$ARENALLOC_BUILD/tools-build.log
		[ -f "$ARENALLOC_BUILD/Makefile" ] ||
		    arenalloc_log "first build, in $ARENALLOC_BUILD (a minute or two; log: $log)"
		if ! (arenalloc_build_steps) >"$log" 2>&1; then
			tail -n 40 "$log" >&2
			arenalloc_die "build failed (full log: $log)"
		fi
	elif ! (arenalloc_build_steps); then
		arenalloc_die "build failed"
	fi
}

arenalloc_setup() {
	arenalloc_install_deps
	arenalloc_build
}
