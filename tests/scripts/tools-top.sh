#!/usr/bin/env bash
# tools-top.sh - blitz-top on a known workload: its per-worker totals equal
# blitz_worker_stats (polls, steals, stolen, lifo_hits, global_batches,
# overflows exactly; steal_fails and parks allowing the few that follow the
# printing of the statistics), and the per-interval counters add up to them.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

start_tool top -j 0.5
run_workload
stop_tool top
out="$tmp/top.out"
for w in $(workers); do
	for c in polls steals stolen lifo_hits global_batches overflows; do
		check "top: worker $w $c" \
			"$(jq_py "$out" "sum(t['$c'] for t in r[-1]['totals'] if t['worker'] == $w)")" \
			"$(stat_worker $w $c)"
	done
	for c in steal_fails parks; do
		check_after_stats "top: worker $w $c" \
			"$(jq_py "$out" "sum(t['$c'] for t in r[-1]['totals'] if t['worker'] == $w)")" \
			"$(stat_worker $w $c)"
	done
done
check "top: intervals add up to the totals" \
	"$(jq_py "$out" 'sum(c["polls"] for x in r for c in x["counters"])')" \
	"$(jq_py "$out" 'sum(t["polls"] for t in r[-1]["totals"])')"
check "top: interval_s given" "$(jq_py "$out" 'all(x["interval_s"] is not None for x in r)')" True
finish
