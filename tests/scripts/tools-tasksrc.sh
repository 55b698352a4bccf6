#!/usr/bin/env bash
# tools-tasksrc.sh - blitz-tasksrc on a known workload, in both modes:
# every poll counted once by source, and each source agrees with the counter
# of the mechanism that produced it: LIFO == lifo_hits, steal == steals,
# global queue == global_batches; BLITZ_LIFO=0 gives no LIFO source at all.
# Per event (a probe hit per poll) total == polled, the helper threads'
# polls included; in summary mode (the runtime's own counts, read at
# hist_snapshot) each worker's total == its polls, and the two modes agree
# on every worker's sources.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

out="$tmp/tasksrc.out"

# check_sources WHAT: each source against its mechanism's counter, and each
# worker's total against its polls (both modes count these the same).
check_sources() {
	check "$1: LIFO == sum of lifo_hits" "$(jq_py "$out" 'r[0]["total"]["lifo"]')" "$(stat_sum lifo_hits)"
	check "$1: steal == sum of steals" "$(jq_py "$out" 'r[0]["total"]["steal"]')" "$(stat_sum steals)"
	check "$1: global == sum of global_batches" "$(jq_py "$out" 'r[0]["total"]["global"]')" "$(stat_sum global_batches)"
	for w in $(workers); do
		check "$1: worker $w total == its polls" \
			"$(jq_py "$out" "sum(c['total'] for c in r[0]['counters'] if c['worker'] == $w)")" \
			"$(stat_worker $w polls)"
	done
}

start_tool tasksrc -j --per-event
run_workload
stop_tool tasksrc
check "tasksrc: total == polled" "$(jq_py "$out" 'r[0]["total"]["total"]')" "$(stat_total polled)"
check_sources tasksrc
check "tasksrc: no unknown source" "$(jq_py "$out" 'r[0]["total"]["other"]')" 0

start_tool tasksrc -j --per-event
run_workload BLITZ_LIFO=0
stop_tool tasksrc
check "tasksrc BLITZ_LIFO=0: no LIFO source" "$(jq_py "$out" 'r[0]["total"]["lifo"]')" 0
check "tasksrc BLITZ_LIFO=0: total == polled" "$(jq_py "$out" 'r[0]["total"]["total"]')" "$(stat_total polled)"

# Summary mode (the default): the runtime counts its workers' polls.
start_tool tasksrc -j
run_workload
stop_tool tasksrc
check_sources "tasksrc summary"
check "tasksrc summary: no helper or unknown source" \
	"$(jq_py "$out" 'r[0]["total"]["helper"] + r[0]["total"]["other"]')" 0
finish
