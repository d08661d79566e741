#! /usr/bin/env atf-sh
# mdb_test — the mdb module (contrib/mdb/arenalloc_mdb.cc) run by fake_mdb,
# a host implementing the module API over its own memory: ::arenalloc_stats
# equals the program's own malloc_stats_print, ::arenalloc_arenas its
# per-arena figures, ::arenalloc_find names the right block, class and state
# for every known pointer, ::arenalloc_verify says "heap OK", and
# ::walk arenalloc_chunk lists every chunk.  See fake_mdb.cc for the files.

compare_script() { echo "$(atf_config_get top_srcdir)/tests/integration/stat_compare.py"; }

atf_test_case dcmds
dcmds_head() {
	atf_set "descr" "the module's dcmds and walker on a known heap, against the program's own statistics"
	atf_set "require.progs" "python3"
}
dcmds_body() {
	atf_check -e ignore "$(atf_config_get top_builddir)/tests/mdb/fake_mdb"
	atf_check -o inline:"" python3 "$(compare_script)" stats out stats.txt
	atf_check -o inline:"" python3 "$(compare_script)" find out find.txt
	atf_check -o inline:"" python3 "$(compare_script)" arenas out arenas.txt
	atf_check -o inline:'heap OK\n' cat verify.txt
	# The walk: as many chunks as the statistics count, in both arenas.
	n=$(python3 -c 'import json,sys; print([json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith("stats ")][0]["arenalloc"]["stats"]["nchunks"])' out)
	atf_check -o inline:"$n\n" grep -c '^chunk 0x[0-9a-f]* arena [0-9]* pages [0-9]*$' chunks.txt
	atf_check -o match:' arena 0 ' -o match:' arena 1 ' cat chunks.txt
	atf_check -o match:'^Allocated: ' -o match:': small region [0-9]+ at 0x[0-9a-f]+, .*offset 7, .*; allocated$' \
	    -o match:'; free$' -o match:'; in a thread cache$' -o match:': huge block at 0x[0-9a-f]+, [0-9]+ bytes, offset 999; huge' \
	    -o match:'^0x1000: not in any arenalloc chunk$' cat text.txt
	atf_check -o inline:'find-without-address 2\nstats-with-address 2\nverify-bad-option 2\n' cat misuse.txt
}

atf_init_test_cases() {
	atf_add_test_case dcmds
}
