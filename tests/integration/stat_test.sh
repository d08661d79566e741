#! /usr/bin/env atf-sh
# stat_test — arenalloc-stat on a live process and on its core file, against
# a stripped copy of the library: its statistics equal the program's own
# (malloc_stats_print), --find names the right block, class and state for
# every known pointer, --verify passes; a corrupted core fails --verify;
# bad targets give one clear line.  The program read is heap_target.

# require_ptrace, start_target, stop_target, check_reader, stat_cmd
use_heap_target() { . "$(atf_config_get top_srcdir)/tests/integration/heap_target.subr"; }
compare_script() { echo "$(atf_config_get top_srcdir)/tests/integration/stat_compare.py"; }
compare() { python3 "$(compare_script)" "$@"; }

atf_test_case live
live_head() {
	atf_set "descr" "arenalloc-stat PID: figures, find and verify against the program's own"
	atf_set "require.progs" "python3 strip nm"
}
live_body() {
	use_heap_target
	require_ptrace
	start_target
	check_reader $pid
	# The process runs on afterwards: it was released.
	atf_check -s exit:0 kill -0 $pid
	stop_target
}

atf_test_case core
core_head() {
	atf_set "descr" "arenalloc-stat CORE (gcore): the same answers; a corrupted copy fails verify"
	atf_set "require.progs" "python3 strip nm"
}
core_body() {
	use_heap_target
	require_ptrace
	command -v gcore >/dev/null 2>&1 || atf_skip "gcore (gdb) is not installed"
	start_target
	atf_check -o ignore -e ignore gcore -o core $pid
	stop_target
	[ -f core.$pid ] || atf_fail "gcore wrote no core.$pid"
	check_reader core.$pid
	# Corrupt the page map entry of a live block's page in a copy: the
	# entry's tag says "large" for a page of a small run.
	p=$(compare pick out allocated)
	atf_check -o save:entry.json "$(stat_cmd)" --json --find "$p" core.$pid
	cp core.$pid bad.core
	atf_check python3 "$(compare_script)" flip-tag bad.core entry.json
	atf_check -s exit:1 -o match:'heap CORRUPT' -o match:'state 0, page map tag 2' \
	    "$(stat_cmd)" --verify bad.core
	# A core that lacks the chunk's memory (its segment emptied, as when a
	# dump is cut short): the statistics (metadata memory) are still
	# printed; verify, which needs the chunk, says what it could not read.
	cp core.$pid hole.core
	atf_check python3 "$(compare_script)" hole hole.core entry.json
	atf_check -o match:'^Allocated: ' "$(stat_cmd)" hole.core
	atf_check -s exit:2 -o ignore -e match:'cannot read [0-9]+ bytes at 0x' "$(stat_cmd)" --verify hole.core
	# A core cut short: one line saying so.
	head -c 1048576 core.$pid >short.core
	atf_check -s exit:2 -e match:'short.core is truncated' "$(stat_cmd)" short.core
}

atf_test_case bad_targets
bad_targets_head() {
	atf_set "descr" "another program, a file that is not a core, no such process: one clear line"
}
bad_targets_body() {
	use_heap_target
	require_ptrace
	echo hello >notcore
	atf_check -s exit:2 -e match:'neither a process id nor an ELF core file' \
	    "$(stat_cmd)" notcore
	atf_check -s exit:2 -e match:'^arenalloc-stat: no process 999999999' \
	    "$(stat_cmd)" 999999999
	mkfifo hold
	cat hold >/dev/null &
	other=$!
	exec 4>hold
	atf_check -s exit:2 -e match:'no arenalloc in the target' "$(stat_cmd)" $other
	exec 4>&-
	wait $other
	atf_check -s exit:2 -e match:'usage' "$(stat_cmd)"
}

atf_init_test_cases() {
	atf_add_test_case live
	atf_add_test_case core
	atf_add_test_case bad_targets
}
