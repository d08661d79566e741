#! /usr/bin/env atf-sh
# bench_report_test — the arithmetic of tools/bench/report.py, the table
# users quote: on figures made up so that every expected value can be
# worked out by hand, the ratio to the best peer, its by-round range, the
# geometric mean, and the table of --tuned variants paired round by round
# (a variant is never taken as the best peer, even when it does best),
# the harness floor (a reference: never a peer, never in the main tables,
# only in its own table of shares), and the throughput of the workloads
# run at several thread counts; and that the floor library itself serves
# malloc-test.

report() { echo "$(atf_config_get top_srcdir)/tools/bench/report.py"; }

# Three rounds of two steps.  s1 (rates, higher is better):
#   round      arenalloc  peer1  peer2  v
#   1          100        120    90     100
#   2          100        100    95     130
#   3           80        112    80     120
# medians 100, 112, 90, 120: best peer peer1 (v excluded), ratio 1.12,
# by round 1.20 1.00 1.40; v against arenalloc round by round 100/100
# 100/130 80/120, median 0.77, range 0.67-1.00 (the ratio of the two
# medians would be 0.83, and pairing the rounds in sorted order 0.80).
# s2 (seconds, lower is better): arenalloc 2 2 2, peer1 1 1 1, peer2 4 4 4,
# v 1.5 1.0 3.0: ratio 2.00, by round 2.00-2.00; v 0.75 0.50 1.50,
# median 0.75.  Geometric mean over the two workloads sqrt(1.12 * 2).
# $variant: empty, or the name of the --tuned variant to add.
make_input() {
	printf 'date\t2026-01-01 00:00 UTC\nreps\t3\naggregate\tmedian\nsource\ttest\n' >meta.tsv
	for a in arenalloc peer1 peer2; do
		printf 'alloc\t%s\t/lib/%s.so\tv1\n' $a $a >>meta.tsv
	done
	if [ -n "$variant" ]; then
		printf 'variant\tv\nalloc\tv\t/lib/arenalloc.so\tarenalloc with MALLOC_OPTIONS=X\n' >>meta.tsv
	fi
	if [ -n "$floor" ]; then
		printf 'alloc\tfl\t/tmp/floor_alloc.so\tharness floor\nreference\tfl\n' >>meta.tsv
	fi
	printf 'step\ts1\tw1\trate\tprog 1\nstep\ts2\tw2\tseconds\tprog 2\n' >>meta.tsv
	: >raw.tsv
	row() { printf '%s\t%s\t%s\tresult\t%s\t%s\t%s\t%s\n' "$@" >>raw.tsv; }
	for r in "1 100 120 90 100 200" "2 100 100 95 130 250" "3 80 112 80 120 100"; do
		set -- $r
		row s1 arenalloc $1 rate $2 Mops/s higher
		row s1 peer1 $1 rate $3 Mops/s higher
		row s1 peer2 $1 rate $4 Mops/s higher
		[ -z "$variant" ] || row s1 v $1 rate $5 Mops/s higher
		[ -z "$floor" ] || row s1 fl $1 rate $6 Mops/s higher
	done
	for r in "1 1.5" "2 1.0" "3 3.0"; do
		set -- $r
		row s2 arenalloc $1 seconds 2 s lower
		row s2 peer1 $1 seconds 1 s lower
		row s2 peer2 $1 seconds 4 s lower
		[ -z "$variant" ] || row s2 v $1 seconds $2 s lower
	done
}

# The floor (fl) runs s1 only: rounds 200 250 100, median 200.  Shares
# of it: arenalloc 100/200 = 0.500, peer1 112/200 = 0.560, peer2 0.450;
# arenalloc round by round 100/200 100/250 80/100: 0.400-0.800.
floor=

atf_test_case ratios
ratios_head() {
	atf_set "descr" "ratio to the best peer, its by-round range and the geometric mean"
	atf_set "require.progs" "python3"
}
ratios_body() {
	variant=
	make_input
	atf_check python3 "$(report)" meta.tsv raw.tsv out
	atf_check -o match:'^\| s1 \| rate \(Mops/s, higher is better\) \| 100.0 \| \*\*112.0\*\* \| 90.00 \| peer1 \| 1.12 \| 1.00-1.40 \|$' cat out.md
	atf_check -o match:'^\| s2 \| seconds \(s, lower is better\) \| 2.000 \| \*\*1.000\*\* \| 4.000 \| peer1 \| 2.00 \| 2.00-2.00 \|$' cat out.md
	atf_check -o match:'over the workloads .*: \*\*1.50\*\*' cat out.md
	atf_check -o not-match:'tuned variants' cat out.md
	atf_check -o inline:'1.12 2.0\n' python3 -c '
import json, sys
d = json.load(open("out.json"))
print(round(d["summary"]["per_step"]["s1"], 4), round(d["summary"]["per_step"]["s2"], 4))'
}

atf_test_case processor
processor_head() {
	atf_set "descr" "the header names the processor when the run recorded it"
	atf_set "require.progs" "python3"
}
processor_body() {
	variant=
	make_input
	atf_check python3 "$(report)" meta.tsv raw.tsv out
	atf_check -o match:'^Run 2026-01-01 00:00 UTC on \?: \? CPU\(s\), ' cat out.md
	printf 'cpus\t2\ncpu_model\tSome CPU (family 6, model 167)\n' >>meta.tsv
	atf_check python3 "$(report)" meta.tsv raw.tsv out
	atf_check -o match:'^Run .*: 2 CPU\(s\) \(Some CPU \(family 6, model 167\)\), ' cat out.md
}

atf_test_case tuned_pairs
tuned_pairs_head() {
	atf_set "descr" "a --tuned variant: paired per-round ratios, never the best peer"
	atf_set "require.progs" "python3"
}
tuned_pairs_body() {
	variant=v
	make_input
	atf_check python3 "$(report)" meta.tsv raw.tsv out
	# v's median (120) beats peer1's, yet the ratio is still to peer1.
	atf_check -o match:'^\| s1 \| rate .* \| peer1 \| 1.12 \| 1.00-1.40 \|$' cat out.md
	atf_check -o match:'^## --tuned variants against the defaults, round by round' cat out.md
	atf_check -o match:'^\| s1 \| 0.77 \(0.67-1.00\) \|$' \
	    -o match:'^\| s2 \| 0.75 \(0.50-1.50\) \|$' cat out.md
	atf_check -o inline:'0.7692 3\n' python3 -c '
import json
d = json.load(open("out.json"))
vr = d["steps"][0]["figures"]["rate"]["variant_ratios"]["v"]
print(round(vr["median"], 4), vr["rounds"])'
}

# Thread-count steps, one allocator's figure per round:
#   step             arenalloc (rounds)  peer1 (rounds)
#   malloc-test-1t   10 12 11             20 20 20
#   malloc-test-2t   19 21 20             30 30 30
#   malloc-test-4t   44 40 42             50 50 50
#   omp-burst-1t      8  8  8              6  6  6   (Mallocs_per_s; its
#   omp-burst-2t      3  3  3              2  2  2    rounds_per_s is 100
#   omp-burst-4t      4  4  4              9  9  9    times as much)
# medians: arenalloc 11, 20, 42: 2T/1T 20/11 = 1.82, 4T/1T 42/11 = 3.82;
# peer1 1.50 and 2.50.  omp-burst gets no ratio to 1 thread, nor a dashed
# line in the chart.  $omp_counts and $mt_counts: the counts to write.
make_scaling_input() {
	printf 'date\t2026-01-01 00:00 UTC\ncpus\t4\nreps\t3\naggregate\tmedian\nsource\ttest\n' >meta.tsv
	printf 'alloc\tarenalloc\t/lib/a.so\tv1\nalloc\tpeer1\t/lib/p.so\tv1\n' >>meta.tsv
	for t in $mt_counts; do
		printf 'step\tmalloc-test-%st\tmalloc-test\tthroughput_Mops\tprog\n' $t >>meta.tsv
	done
	for t in $omp_counts; do
		printf 'step\tomp-burst-%st\tomp-burst\trounds_per_s\tprog\n' $t >>meta.tsv
	done
	: >raw.tsv
	row() { printf '%s\t%s\t%s\tresult\t%s\t%s\t%s\thigher\n' "$@" >>raw.tsv; }
	for line in "1 10 12 11 20" "2 19 21 20 30" "4 44 40 42 50"; do
		set -- $line
		in_counts $1 "$mt_counts" || continue
		for r in 1 2 3; do
			eval "v=\${$((r + 1))}"
			row malloc-test-$1t arenalloc $r throughput_Mops "$v" Mops/s
			row malloc-test-$1t peer1 $r throughput_Mops "$5" Mops/s
		done
	done
	for line in "1 8 6" "2 3 2" "4 4 9"; do
		set -- $line
		in_counts $1 "$omp_counts" || continue
		for r in 1 2 3; do
			row omp-burst-$1t arenalloc $r rounds_per_s "${2}00" rounds/s
			row omp-burst-$1t arenalloc $r Mallocs_per_s "$2" M/s
			row omp-burst-$1t peer1 $r rounds_per_s "${3}00" rounds/s
			row omp-burst-$1t peer1 $r Mallocs_per_s "$3" M/s
		done
	done
}

in_counts() { case " $2 " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# A well-formed XML file: the charts are read by browsers and viewers.
check_xml() {
	atf_check python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$1"
}

atf_test_case scaling
scaling_head() {
	atf_set "descr" "throughput by thread count: the tables, the JSON and the chart"
	atf_set "require.progs" "python3"
}
scaling_body() {
	mt_counts="1 2 4" omp_counts="1 2 4"
	make_scaling_input
	atf_check python3 "$(report)" meta.tsv raw.tsv out
	atf_check -o match:'^## malloc-test scaling: throughput_Mops' cat out.md
	atf_check -o match:'^\| allocator \| 1 thr \| 2 thr \| 4 thr \| 2T/1T \| 4T/1T \|$' \
	    -o match:'^\| arenalloc \| 11.00 \| 20.00 \| 42.00 \| 1.82 \| 3.82 \|$' \
	    -o match:'^\| peer1 \| \*\*20.00\*\* \| \*\*30.00\*\* \| \*\*50.00\*\* \| 1.50 \| 2.50 \|$' \
	    cat out.md
	# omp-burst: Mallocs_per_s (not rounds_per_s), and no ratio to 1 thread.
	atf_check -o match:'^## omp-burst scaling: Mallocs_per_s' \
	    -o match:'^\| allocator \| 1 thr \| 2 thr \| 4 thr \|$' \
	    -o match:'^\| arenalloc \| \*\*8.000\*\* \| \*\*3.000\*\* \| 4.000 \|$' cat out.md
	atf_check -o inline:'1\n' grep -c 'scaling.svg` draws' out.md
	atf_check -o inline:'11.0 42.0 4.0 11.0\n' python3 -c '
import json
d = json.load(open("out.json"))
sc = d["scaling"]
print(sc["malloc-test"]["by_allocator"]["arenalloc"]["1"],
      sc["malloc-test"]["by_allocator"]["arenalloc"]["4"],
      sc["omp-burst"]["by_allocator"]["arenalloc"]["4"],
      d["malloc_test_scaling"]["arenalloc"]["1"])'
	# The chart: two panels, one line per allocator in each, and the
	# dashed ideal from arenalloc's 1-thread figure in malloc-test's only.
	check_xml out.scaling.svg
	check_xml out.svg
	atf_check -o inline:'4\n' grep -c '<polyline' out.scaling.svg
	atf_check -o inline:'1\n' grep -c 'stroke-dasharray' out.scaling.svg
	atf_check -o match:'malloc-test: throughput_Mops' \
	    -o match:'omp-burst: Mallocs_per_s' -o match:'dashed \(malloc-test\)' \
	    cat out.scaling.svg
}

atf_test_case scaling_limits
scaling_limits_head() {
	atf_set "descr" "malloc-test at two counts: a table, no chart; omp-burst at one: nothing"
	atf_set "require.progs" "python3"
}
scaling_limits_body() {
	mt_counts="1 2" omp_counts="4"
	make_scaling_input
	atf_check python3 "$(report)" meta.tsv raw.tsv out
	atf_check -o match:'^\| allocator \| 1 thr \| 2 thr \| 2T/1T \|$' \
	    -o match:'^\| arenalloc \| 11.00 \| 20.00 \| 1.82 \|$' cat out.md
	atf_check -o not-match:'omp-burst scaling' -o not-match:'scaling.svg` draws' cat out.md
	atf_check -s exit:1 test -e out.scaling.svg
	atf_check -o inline:'malloc-test\n' python3 -c '
import json
print(" ".join(json.load(open("out.json"))["scaling"]))'
}

atf_test_case no_scaling
no_scaling_head() {
	atf_set "descr" "steps without thread counts: no scaling table and no chart"
	atf_set "require.progs" "python3"
}
no_scaling_body() {
	variant=
	make_input
	atf_check python3 "$(report)" meta.tsv raw.tsv out
	atf_check -o not-match:'scaling' cat out.md
	atf_check -s exit:1 test -e out.scaling.svg
}

atf_test_case floor_reference
floor_reference_head() {
	atf_set "descr" "the harness floor: its own table of shares, never a peer nor a column"
	atf_set "require.progs" "python3"
}
floor_reference_body() {
	variant= floor=fl
	make_input
	atf_check python3 "$(report)" meta.tsv raw.tsv out
	# The floor does best on s1, yet the ratio is still to peer1, the
	# bold value is peer1's and the summary has no column for it.
	atf_check -o match:'^\| step \| figure \| arenalloc \| peer1 \| peer2 \| best peer \| ratio \| by round \|$' \
	    -o match:'^\| s1 \| rate \(Mops/s, higher is better\) \| 100.0 \| \*\*112.0\*\* \| 90.00 \| peer1 \| 1.12 \| 1.00-1.40 \|$' \
	    cat out.md
	atf_check -o match:'^## w1 against the harness floor \(fl\)$' \
	    -o match:'^\| step \| fl \| arenalloc \| peer1 \| peer2 \| by round \|$' \
	    -o match:'^\| s1 \| 200.0 Mops/s \| 0.500 \| 0.560 \| 0.450 \| 0.400-0.800 \|$' \
	    -o not-match:'^\| s2 \| [0-9.]+ s \|' cat out.md
	# The allocators' table lists it, with what it is.
	atf_check -o match:'^\| fl \| /tmp/floor_alloc.so \| harness floor \|$' cat out.md
	atf_check -o inline:'1.12 0.5 [0.4, 0.8]\n' python3 -c '
import json
d = json.load(open("out.json"))
f = d["steps"][0]["figures"]["rate"]
r = f["share_of_reference"]["fl"]
print(round(f["ratio"], 4), r["shares"]["arenalloc"], r["subject_rounds"])'
	# The bar chart has no bar for it.
	check_xml out.svg
	atf_check -o not-match:'>fl<' cat out.svg
}

atf_test_case floor_library
floor_library_head() {
	atf_set "descr" "floor_alloc.c builds and serves malloc-test's threads"
	atf_set "require.progs" "cc"
}
floor_library_body() {
	local bench="$(atf_config_get top_srcdir)/tools/bench"
	atf_check cc -O2 -Wall -Werror -fPIC -shared -o floor_alloc.so "$bench/floor_alloc.c"
	atf_check cc -O2 -pthread -o malloc_test "$bench/malloc_test.c"
	atf_check -o match:"^malloc from: .*floor_alloc.so\$" \
	    -o match:'^result throughput_Mops [0-9.]+ Mops/s higher$' \
	    env LD_PRELOAD="$PWD/floor_alloc.so" ./malloc_test 1024 100000 3
}

atf_init_test_cases() {
	atf_add_test_case ratios
	atf_add_test_case processor
	atf_add_test_case tuned_pairs
	atf_add_test_case floor_reference
	atf_add_test_case floor_library
	atf_add_test_case scaling
	atf_add_test_case scaling_limits
	atf_add_test_case no_scaling
}
