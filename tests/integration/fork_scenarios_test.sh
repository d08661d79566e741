#! /usr/bin/env atf-sh
# fork_scenarios_test — fork from a signal handler in a single-threaded
# process, and fork beside threads inside getline() and fflush(NULL): the
# library linked and preloaded.  A deadlock never ends; the time limit of
# each run (timeout(1)) turns it into a failure that names the scenario.
# FORK_SCENARIO_FORKS sets the fork count of each run (tools/fork-soak runs
# 10,000).

builddir() { atf_config_get top_builddir; }

# run_scenario linked|preloaded signal|stdio forks seconds
run_scenario() {
	how=$1 scenario=$2 forks=${FORK_SCENARIO_FORKS:-$3} limit=$4
	if [ "$how" = linked ]; then
		set -- "$(builddir)/tests/integration/fork_scenarios_linked" "$scenario" "$forks"
	else
		set -- env LD_PRELOAD="$(atf_config_get shlib)" \
		    "$(builddir)/tests/integration/fork_scenarios" "$scenario" "$forks"
	fi
	timeout -s KILL "$limit" "$@" >out 2>err
	rc=$?
	cat out err
	if [ $rc -eq 137 ] || [ $rc -eq 124 ]; then
		atf_fail "$scenario ($how): no end after $limit s: a fork deadlocked"
	fi
	[ $rc -eq 0 ] || atf_fail "$scenario ($how): exit status $rc: $(cat err)"
	grep -q "^$scenario: " out || atf_fail "$scenario ($how): no report"
	grep -q "^malloc: arenalloc$" out || atf_fail "$scenario ($how): not run on arenalloc: $(head -1 out)"
}

scenario_head() {
	atf_set "descr" "$1"
	atf_set "require.progs" "timeout"
}
signal_descr="a single-threaded program forks in a SIGUSR1 handler while it mallocs, frees and forks"
stdio_descr="forks beside threads inside getline() and fflush(NULL)"

atf_test_case signal_handler
signal_handler_head() { scenario_head "$signal_descr (linked, then preloaded)"; }
signal_handler_body() { for how in linked preloaded; do run_scenario $how signal 10000 300; done; }
atf_test_case stdio_locks
stdio_locks_head() { scenario_head "$stdio_descr (linked, then preloaded)"; }
stdio_locks_body() { for how in linked preloaded; do run_scenario $how stdio 10000 300; done; }

atf_init_test_cases() {
	atf_add_test_case signal_handler
	atf_add_test_case stdio_locks
}
