#! /usr/bin/env atf-sh
# stat_cross_test — this machine's arenalloc-stat reading a heap of another
# architecture: heap_target and the library cross-built here (configure
# --host, as tools/cross-check does) for 32-bit x86, read live (also by
# this machine's gdb commands) and from its core (gcore); and for s390x (64-bit, big-endian), read from the core
# qemu-user writes when the program dies of a signal.  The answers are
# checked as stat_test checks them.  Each case is skipped, by the name of
# what is missing, without the cross compiler (or qemu-s390x).  qemu-user's
# core names no mapped file: the library is given with --lib.

# elf_kind FILE: its ELF class and byte order, e_ident[4..5] in hex
# ("01 01": 32-bit little-endian, "02 02": 64-bit big-endian).
elf_kind() { od -An -tx1 -j4 -N2 "$1" | tr -s ' ' | sed 's/^ //'; }

# require_ptrace, start_target, wait_until_ready, stop_target, check_reader
use_heap_target() { . "$(atf_config_get top_srcdir)/tests/integration/heap_target.subr"; }

# cross_build TRIPLE LOADER: the library and heap_target for TRIPLE in
# ./cross, the programs asking for TRIPLE's loader and libraries where the
# cross toolchain put them (/usr/TRIPLE/lib).
cross_build() {
	mkdir cross || atf_fail "mkdir cross"
	if ! (unset CFLAGS CXXFLAGS CPPFLAGS LDFLAGS LIBS CONFIG_SITE
		cd cross && "$(atf_config_get top_srcdir)/configure" --host="$1" \
		CC="$1-gcc" CXX="$1-g++" PKG_CONFIG=false \
		ATF_CXX_CFLAGS="-I$(atf_config_get top_srcdir)/tests/cross" ATF_CXX_LIBS= \
		LDFLAGS="-Wl,--dynamic-linker=/usr/$1/lib/$2 -Wl,-rpath,/usr/$1/lib" \
		>configure.log 2>&1); then
		tail -n 20 cross/configure.log
		atf_fail "configure --host=$1 failed"
	fi
	if ! make -C cross -j2 lib/libarenalloc.la tests/integration/heap_target >cross/make.log 2>&1; then
		tail -n 20 cross/make.log
		atf_fail "the $1 build failed"
	fi
}

# This machine's gdb, with contrib/gdb/arenalloc.py driving this machine's
# walker library, on the same process ($pid): the same figures, heap OK
# (where gdb has Python, as gdb_test requires).
gdb_reads_i386() {
	gdb -batch -nx -ex 'python print("python-ok")' 2>/dev/null | grep -q python-ok || return 0
	ARENALLOC_WALKER=$(atf_config_get top_builddir)/tools/walker/.libs/libarenalloc_walker.so
	export ARENALLOC_WALKER
	source_script="source $(atf_config_get top_srcdir)/contrib/gdb/arenalloc.py"
	gdb -batch -nx -p $pid -ex "$source_script" -ex 'arenalloc stats -json' >gdb-stats.txt 2>&1
	atf_check -o inline:"" python3 "$(atf_config_get top_srcdir)/tests/integration/stat_compare.py" \
	    stats out gdb-stats.txt
	atf_check -o match:'^heap OK$' -e ignore gdb -batch -nx -p $pid -ex "$source_script" -ex 'arenalloc verify'
}

atf_test_case i386
i386_head() {
	atf_set "descr" "arenalloc-stat reads a 32-bit x86 process, live and from its core"
	atf_set "require.progs" "i686-linux-gnu-gcc i686-linux-gnu-g++ python3 strip nm gcore"
}
i386_body() {
	use_heap_target
	require_ptrace
	cross_build i686-linux-gnu ld-linux.so.2
	start_target cross/lib/.libs/libarenalloc.so cross/tests/integration/heap_target
	atf_check_equal "$(elf_kind libarenalloc.so.0)" "01 01"
	check_reader $pid
	gdb_reads_i386
	atf_check -o ignore -e ignore gcore -o core $pid
	stop_target
	[ -f core.$pid ] || atf_fail "gcore wrote no core.$pid"
	atf_check_equal "$(elf_kind core.$pid)" "01 01"
	check_reader core.$pid
}

atf_test_case s390x
s390x_head() {
	atf_set "descr" "arenalloc-stat reads the core qemu-user wrote for a big-endian s390x process"
	atf_set "require.progs" "s390x-linux-gnu-gcc s390x-linux-gnu-g++ s390x-linux-gnu-strip qemu-s390x python3"
}
s390x_body() {
	use_heap_target
	cross_build s390x-linux-gnu ld64.so.1
	cp cross/lib/.libs/libarenalloc.so libarenalloc.so.0 || atf_fail "no library"
	atf_check s390x-linux-gnu-strip --strip-all libarenalloc.so.0
	atf_check_equal "$(elf_kind libarenalloc.so.0)" "02 02"
	# heap_target prints its report, then dies of SIGABRT: qemu-user
	# writes the guest's core, qemu_heap_target_*.core, here (and the
	# kernel qemu's own, ./core, not wanted).
	mkfifo in
	(ulimit -c unlimited
	 exec qemu-s390x -L /usr/s390x-linux-gnu -E LD_PRELOAD="$PWD/libarenalloc.so.0" \
	    cross/tests/integration/heap_target <in >out 2>err) &
	pid=$!
	exec 3>in
	wait_until_ready
	kill -ABRT $pid
	wait $pid
	exec 3>&-
	rm -f core
	set -- qemu_heap_target_*.core
	[ -f "$1" ] || atf_fail "qemu-s390x wrote no core"
	atf_check_equal "$(elf_kind "$1")" "02 02"
	# The core names no mapped file: without --lib, one line saying so.
	atf_check -s exit:2 -e match:'name the library with --lib' "$(stat_cmd)" "$1"
	check_reader "$1" --lib libarenalloc.so.0
}

atf_init_test_cases() {
	atf_add_test_case i386
	atf_add_test_case s390x
}
