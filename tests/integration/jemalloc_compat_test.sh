#! /usr/bin/env atf-sh
# jemalloc_compat_test — jemalloc_compat.c, a program written against
# jemalloc 5.3's manual, built and run against Debian's libjemalloc (it
# must pass there: that shows it encodes jemalloc's behaviour, not
# arenalloc's) and against this tree's library.  Each case also runs it
# with MALLOC_CONF=narenas:3, and a build that defines the malloc_conf
# global ("narenas:5") alone and under MALLOC_CONF (which is read after
# it, so wins); jemalloc_compat_json.py checks the "J" statistics.
#
# The program is compiled here, not by make: a library that lacks part of
# the interface makes this test fail, not the build.

# Substituted by make (tests/integration/Makefile.am.inc).
COMPAT_CC='%%CC%%'
COMPAT_CFLAGS="-std=c11 -D_GNU_SOURCE -O1 -g -fno-builtin -Wall"

srcdir() { echo "$(atf_config_get top_srcdir)/tests/integration"; }

# build NAME FLAGS...: compiles jemalloc_compat.c into NAME (twice: as is,
# and as NAME_global with the malloc_conf global).
build() {
	name=$1; shift
	for variant in "" "-DCOMPAT_MALLOC_CONF_NARENAS=5"; do
		out=$name${variant:+_global}
		# shellcheck disable=SC2086
		if ! $COMPAT_CC $COMPAT_CFLAGS $variant -o "$out" \
		    "$(srcdir)/jemalloc_compat.c" "$@" >build.err 2>&1; then
			cat build.err
			atf_fail "$out does not build: $(grep -m1 error build.err)"
		fi
	done
}

# run_program LABEL [VAR=VALUE...] PROGRAM ARGS...: runs it without the
# caller's MALLOC_CONF; its failures are added to $failures.
run_program() {
	label=$1; shift
	env -u MALLOC_CONF "$@" >out 2>err
	rc=$?
	echo "== $label"
	cat out err
	grep -q '^[0-9]* passed, 0 failed$' out && [ $rc -eq 0 ] && return 0
	failures="$failures
$label: exit status $rc; $(grep -m3 '^FAIL' out | tr '\n' ' ')"
}

# check_json LABEL FILE [NARENAS] | check_json LABEL --letters FILE
check_json() {
	label=$1 file=$2; shift 2
	if ! python3 "$(srcdir)/jemalloc_compat_json.py" "$file" "$@" >json.out 2>&1; then
		cat json.out
		failures="$failures
$label: $(head -3 json.out | tr '\n' ' ')"
	fi
}

# run_all PROGRAM: every run of one library's builds.
run_all() {
	prog=$1
	failures=
	run_program "all checks" "./$prog" -j stats.json
	check_json "JSON of all checks" stats.json
	check_json "JSON with g, a, m, b, l, x" --letters stats.json
	run_program "MALLOC_CONF=narenas:3" MALLOC_CONF=narenas:3 "./$prog" -n 3 -j conf.json
	check_json "JSON under MALLOC_CONF=narenas:3" conf.json 3
	run_program "malloc_conf global narenas:5" "./${prog}_global" -n 5
	run_program "malloc_conf global narenas:5, MALLOC_CONF=narenas:3" \
	    MALLOC_CONF=narenas:3 "./${prog}_global" -n 3
	[ -z "$failures" ] || atf_fail "$(echo "$failures" | sed '/^$/d' | head -8)"
}

atf_test_case jemalloc
jemalloc_head() {
	atf_set "descr" "the program built against Debian's libjemalloc 5.3 passes"
	atf_set "require.progs" "python3"
}
jemalloc_body() {
	printf '#include <jemalloc/jemalloc.h>\n' >probe.c
	$COMPAT_CC -E probe.c >/dev/null 2>&1 ||
	    atf_skip "jemalloc/jemalloc.h not found (install libjemalloc-dev)"
	build compat_jemalloc -DCOMPAT_JEMALLOC -ljemalloc
	run_all compat_jemalloc
}

atf_test_case arenalloc
arenalloc_head() {
	atf_set "descr" "the program built against this tree's libarenalloc passes"
	atf_set "require.progs" "python3"
}
arenalloc_body() {
	shlib=$(atf_config_get shlib)
	build compat_arenalloc -I"$(atf_config_get top_srcdir)/lib" \
	    -I"$(atf_config_get top_builddir)/lib" "$shlib" -Wl,-rpath,"$(dirname "$shlib")"
	run_all compat_arenalloc
}

atf_init_test_cases() {
	atf_add_test_case jemalloc
	atf_add_test_case arenalloc
}
