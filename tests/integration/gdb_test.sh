#! /usr/bin/env atf-sh
# gdb_test — the gdb commands of contrib/gdb/arenalloc.py on a live process
# (gdb -p) and on its core file (gcore), against a stripped copy of the
# library: `arenalloc stats' equals the program's own malloc_stats_print,
# `arenalloc arenas' and `bins' its per-arena and per-bin figures, `find'
# names the right block, class and state for every known pointer, `verify'
# says "heap OK", and a heap corrupted from gdb fails it; bad targets give
# one line, never a Python traceback.  The program read is heap_target;
# stat_compare.py checks the answers.

use_heap_target() { . "$(atf_config_get top_srcdir)/tests/integration/heap_target.subr"; }
script() { echo "$(atf_config_get top_srcdir)/contrib/gdb/arenalloc.py"; }
compare_script() { echo "$(atf_config_get top_srcdir)/tests/integration/stat_compare.py"; }
compare() { python3 "$(compare_script)" "$@"; }

# gdb with its Python, and the walker library the script drives.
require_gdb() {
	command -v gdb >/dev/null 2>&1 || atf_skip "gdb is not installed"
	gdb -batch -nx -ex 'python print("python-ok")' 2>/dev/null | grep -q python-ok ||
	    atf_skip "this gdb has no Python"
	ARENALLOC_WALKER=$(atf_config_get top_builddir)/tools/walker/.libs/libarenalloc_walker.so
	[ -f "$ARENALLOC_WALKER" ] || atf_fail "no walker library at $ARENALLOC_WALKER"
	export ARENALLOC_WALKER
}

# After start_target: skips when gdb cannot attach for a reason Yama does
# not explain (a container without ptrace, a seccomp filter).
require_attach() {
	gdb -batch -nx -p $pid >attach.txt 2>&1
	if grep -q 'ptrace: Operation not permitted' attach.txt; then
		stop_target
		atf_skip "gdb cannot attach to a process here (ptrace: Operation not permitted)"
	fi
}

# arenalloc_gdb TARGET-ARGS -- COMMAND...: runs the gdb commands, in batch
# mode, on the target (-p PID, or PROGRAM CORE); output on stdout.
arenalloc_gdb() {
	args=""
	while [ "$1" != "--" ]; do args="$args $1"; shift; done
	shift
	set -- -batch -nx -ex "source $(script)" "$@"
	# shellcheck disable=SC2086
	gdb $args "$@" 2>&1
}

# The checks shared by the live and the core case; $@ is the gdb target
# (-p PID, or PROGRAM CORE).
check_commands() {
	arenalloc_gdb "$@" -- -ex 'arenalloc stats -json' >stats.txt
	atf_check -o inline:"" python3 "$(compare_script)" stats out stats.txt
	awk '/^ptr/ { print "arenalloc find -json " $(NF-2) }' out >finds.gdb
	arenalloc_gdb "$@" -- -x finds.gdb >find.txt
	atf_check -o inline:"" python3 "$(compare_script)" find out find.txt
	arenalloc_gdb "$@" -- -ex 'arenalloc verify' >verify.txt
	atf_check -o match:'^heap OK$' -o not-match:'heap CORRUPT' cat verify.txt
	arenalloc_gdb "$@" -- -ex 'arenalloc arenas' >arenas.txt
	atf_check -o inline:"" python3 "$(compare_script)" arenas out arenas.txt
	arenalloc_gdb "$@" -- -ex 'arenalloc bins' >bins.txt
	atf_check -o inline:"" python3 "$(compare_script)" bins out bins.txt
	# One arena's bins: that arena's table only.
	arenalloc_gdb "$@" -- -ex 'arenalloc bins 1' >bins1.txt
	atf_check -o match:'^arena 1:$' -o not-match:'^arena 0:$' cat bins1.txt
	# The text forms: the full report, known pointers in words, the chunks.
	a=$(compare pick out allocated)
	f=$(compare pick out free)
	t=$(compare pick out 'in a thread cache')
	h=$(compare pick out huge)
	# The program's own count of chunks (2 with 4 KiB pages; bigger pages
	# make bigger runs, and more chunks).
	n=$(grep -o '"nchunks": [0-9]*' out | head -n 1 | grep -o '[0-9]*$')
	[ -n "$n" ] || atf_fail "no nchunks in the program's statistics"
	arenalloc_gdb "$@" -- -ex 'arenalloc stats' -ex "arenalloc find $a" \
	    -ex "arenalloc find $f" -ex "arenalloc find (char *)$t" -ex "arenalloc find $h+100" \
	    -ex 'arenalloc find 0x1000' -ex 'arenalloc chunks -runs' >text.txt
	atf_check -o match:'Begin arenalloc statistics' -o match:'^arena 1:' \
	    -o match:"^$a: small region [0-9]+ at $a, class [0-9]+ \\([0-9]+ bytes\\).*; allocated\$" \
	    -o match:"^$f: small region [0-9]+ at $f, .*; free\$" \
	    -o match:"^$t: small region [0-9]+ at $t, .*; in a thread cache\$" \
	    -o match:"^0x[0-9a-f]+: huge block at $h, [0-9]+ bytes, offset 100; huge" \
	    -o match:'^0x1000: not in any arenalloc chunk$' \
	    -o match:"^$n chunks\$" -o match:'^chunk 0x[0-9a-f]+ .* arena 1 ' \
	    -o match:'^  run 0x[0-9a-f]+ +[0-9]+ pages +small +class' \
	    -o match:'^1 huge block$' -o not-match:'Traceback' -o not-match:'^arenalloc: ' \
	    cat text.txt
}

atf_test_case live
live_head() {
	atf_set "descr" "gdb -p PID: stats, arenas, bins, find, verify against the program's own; a heap corrupted from gdb fails verify"
	atf_set "require.progs" "python3 strip nm"
}
live_body() {
	use_heap_target
	require_gdb
	require_ptrace
	start_target
	require_attach
	check_commands -p $pid
	# Corrupt the page map entry of a live block's page from gdb (the tag
	# says "large" for a page of a small run): verify reports it; put back,
	# the heap is OK again.
	p=$(compare pick out allocated)
	arenalloc_gdb -p $pid -- -ex "arenalloc find -json $p" >entry.txt
	e=$(python3 -c 'import json,sys; print(json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][0])["page_map_entry"])' entry.txt)
	arenalloc_gdb -p $pid -- -ex "set var *(unsigned long *)$e ^= 2" -ex 'arenalloc verify' \
	    -ex "set var *(unsigned long *)$e ^= 2" -ex 'arenalloc verify' >corrupt.txt
	atf_check -o match:'state 0, page map tag 2' -o match:'^heap CORRUPT: [0-9]+ problems?$' \
	    -o match:'^heap OK$' cat corrupt.txt
	# The process runs on afterwards: gdb detached.
	atf_check -s exit:0 kill -0 $pid
	stop_target
}

atf_test_case core
core_head() {
	atf_set "descr" "gdb PROGRAM CORE (gcore): the same answers as on the live process"
	atf_set "require.progs" "python3 strip nm"
}
core_body() {
	use_heap_target
	require_gdb
	require_ptrace
	command -v gcore >/dev/null 2>&1 || atf_skip "gcore (gdb) is not installed"
	start_target
	require_attach
	atf_check -o ignore -e ignore gcore -o core $pid
	stop_target
	[ -f core.$pid ] || atf_fail "gcore wrote no core.$pid"
	prog=$(atf_config_get top_builddir)/tests/integration/heap_target
	check_commands "$prog" core.$pid
	# A copy with the page map entry of a live block's page corrupted (the
	# tag says "large" for a page of a small run): verify reports it.
	p=$(compare pick out allocated)
	arenalloc_gdb "$prog" core.$pid -- -ex "arenalloc find -json $p" >entry.txt
	cp core.$pid bad.core
	atf_check python3 "$(compare_script)" flip-tag bad.core entry.txt
	arenalloc_gdb "$prog" bad.core -- -ex 'arenalloc verify' >bad.txt
	atf_check -o match:'state 0, page map tag 2' -o match:'^heap CORRUPT: [0-9]+ problems?$' \
	    cat bad.txt
	# A copy that lacks the chunk's memory (its segment emptied, as when a
	# dump leaves memory out; gdb would read zeros there): what could be
	# read is printed, what could not is named; no "heap OK".
	cp core.$pid hole.core
	atf_check python3 "$(compare_script)" hole hole.core entry.txt
	arenalloc_gdb "$prog" hole.core -- -ex 'arenalloc stats' -ex 'arenalloc verify' \
	    -ex "arenalloc find $p" >hole.txt
	atf_check -o match:'Begin arenalloc statistics' -o match:'cannot read [0-9]+ bytes at 0x' \
	    -o match:'^arenalloc: cannot read [0-9]+ bytes at 0x' -o not-match:'heap OK' \
	    -o not-match:Traceback cat hole.txt
}

atf_test_case bad_input
bad_input_head() {
	atf_set "descr" "no process, no arenalloc, a wrong descriptor, no walker, bad arguments: one line each, no traceback"
	atf_set "require.progs" "python3 strip nm"
}
bad_input_body() {
	use_heap_target
	require_gdb
	require_ptrace
	arenalloc_gdb -- -ex 'arenalloc stats' >none.txt
	atf_check -o match:'^arenalloc: no process and no core file' -o not-match:Traceback cat none.txt
	# A process without arenalloc.
	mkfifo hold
	cat hold >/dev/null &
	other=$!
	exec 4>hold
	arenalloc_gdb -p $other -- -ex 'arenalloc verify' >other.txt
	exec 4>&-
	wait $other
	atf_check -o match:'^arenalloc: no arenalloc in this program: no symbol arenalloc_debug_descriptor' \
	    -o not-match:Traceback cat other.txt
	start_target
	require_attach
	# A descriptor that is not arenalloc's (its magic overwritten), then
	# one of another version; the walker's own line, no traceback.
	arenalloc_gdb -p $pid -- \
	    -ex 'set var *(unsigned char *)&arenalloc_debug_descriptor ^= 0xff' \
	    -ex 'arenalloc stats' \
	    -ex 'set var *(unsigned char *)&arenalloc_debug_descriptor ^= 0xff' \
	    -ex 'arenalloc find 0x1000' >magic.txt
	atf_check -o match:'^arenalloc: .*magic' -o match:'^0x1000: not in any arenalloc chunk$' \
	    -o not-match:Traceback cat magic.txt
	# Bad arguments, and no walker library.
	arenalloc_gdb -p $pid -- -ex 'arenalloc find' -ex 'arenalloc find nosuchvariable' \
	    -ex 'arenalloc bins 99' -ex 'arenalloc stats -nosuchoption' >args.txt
	atf_check -o match:'^arenalloc: usage: arenalloc find' \
	    -o match:'^arenalloc: find: not an address: nosuchvariable' \
	    -o match:'^arenalloc: no arena 99 \(arenas in use: 0, 1' \
	    -o match:'^arenalloc: unknown option -nosuchoption' -o not-match:Traceback cat args.txt
	ARENALLOC_WALKER=$PWD/nowhere.so arenalloc_gdb -p $pid -- -ex 'arenalloc stats' >nowalker.txt
	atf_check -o match:'^arenalloc: cannot find libarenalloc_walker.so \(set ARENALLOC_WALKER' \
	    -o not-match:Traceback cat nowalker.txt
	stop_target
}

atf_test_case auto_load
auto_load_head() {
	atf_set "descr" "the script auto-loaded as LIBRARY-gdb.py beside the library, then sourced again: the commands work"
	atf_set "require.progs" "python3 strip nm"
}
auto_load_body() {
	use_heap_target
	require_gdb
	require_ptrace
	start_target
	require_attach
	# gdb looks for OBJFILE-gdb.py beside the objfile; once loaded that
	# way, the script sourced again replaces its commands harmlessly.
	cp "$(script)" libarenalloc.so.0-gdb.py
	gdb -batch -nx -iex "set auto-load safe-path $PWD" -p $pid \
	    -ex 'help arenalloc verify' -ex 'arenalloc verify' \
	    -ex 'source libarenalloc.so.0-gdb.py' -ex 'arenalloc verify' >auto.txt 2>&1
	atf_check -o match:'^Check the heap' -o not-match:'Undefined command' \
	    -o not-match:Traceback -o not-match:'^arenalloc: ' cat auto.txt
	atf_check -o inline:"2\n" grep -c '^heap OK$' auto.txt
	stop_target
}

atf_test_case structs
structs_head() {
	atf_set "descr" "the script's ctypes structures mirror arenalloc_walker.h field by field"
	atf_set "require.progs" "python3"
}
structs_body() {
	atf_check -o inline:"9 structures match\n" python3 - "$(script)" \
	    "$(atf_config_get top_srcdir)/tools/walker/arenalloc_walker.h" <<'PY'
import importlib.util, re, sys
spec = importlib.util.spec_from_file_location("arenalloc_gdb", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
header = open(sys.argv[2]).read()
header = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
problems, n = [], 0
for st in mod.STRUCTS:
    m = re.search(r"struct %s \{(.*?)\};" % st.__name__, header, re.S)
    if not m:
        problems.append("%s: not in the header" % st.__name__)
        continue
    fields = []
    for decl in m.group(1).split(";"):
        decl = decl.strip()
        if not decl:
            continue
        typ, names = re.match(r"(uint64_t|char)\s+(.*)", decl).groups()
        for name in names.split(","):
            name = name.strip()
            arr = re.match(r"(\w+)\[(\d+)\]", name)
            fields.append((arr.group(1), "char[%s]" % arr.group(2)) if arr else (name, typ))
    mine = [(f, "char[%d]" % t._length_ if hasattr(t, "_length_") else "uint64_t")
            for f, t in st._fields_]
    if fields != mine:
        problems.append("%s: header %s, script %s" % (st.__name__, fields, mine))
    n += 1
print("\n".join(problems) if problems else "%d structures match" % n)
PY
}

atf_init_test_cases() {
	atf_add_test_case live
	atf_add_test_case core
	atf_add_test_case bad_input
	atf_add_test_case auto_load
	atf_add_test_case structs
}
