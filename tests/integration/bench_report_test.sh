#! /usr/bin/env atf-sh
# bench_report_test — the arithmetic of tools/bench/report.py, the table
# users quote: on figures made up so that every expected value can be
# worked out by hand, the ratio to the best peer, its by-round range, the
# geometric mean, and the table of --tuned variants paired round by round
# (a variant is never taken as the best peer, even when it does best).

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
	printf 'step\ts1\tw1\trate\tprog 1\nstep\ts2\tw2\tseconds\tprog 2\n' >>meta.tsv
	: >raw.tsv
	row() { printf '%s\t%s\t%s\tresult\t%s\t%s\t%s\t%s\n' "$@" >>raw.tsv; }
	for r in "1 100 120 90 100" "2 100 100 95 130" "3 80 112 80 120"; do
		set -- $r
		row s1 arenalloc $1 rate $2 Mops/s higher
		row s1 peer1 $1 rate $3 Mops/s higher
		row s1 peer2 $1 rate $4 Mops/s higher
		[ -z "$variant" ] || row s1 v $1 rate $5 Mops/s higher
	done
	for r in "1 1.5" "2 1.0" "3 3.0"; do
		set -- $r
		row s2 arenalloc $1 seconds 2 s lower
		row s2 peer1 $1 seconds 1 s lower
		row s2 peer2 $1 seconds 4 s lower
		[ -z "$variant" ] || row s2 v $1 seconds $2 s lower
	done
}

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

atf_init_test_cases() {
	atf_add_test_case ratios
	atf_add_test_case tuned_pairs
}
