#!/usr/bin/env bash
# tools-steal.sh - blitz-steal on a known workload: the steal sizes add up
# to the tasks stolen, one histogram entry per steal, failed attempts and
# the thief-by-victim matrix agree with each worker's statistics; with
# BLITZ_STEAL=one every steal takes exactly one task.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

start_tool steal --per-event -j
run_workload
stop_tool steal
out="$tmp/steal.out"
check "steal: sum of steal sizes == stolen" "$(jq_py "$out" 'r[0]["histograms"][0]["sum"] if r[0]["histograms"] else 0')" "$(stat_total stolen)"
check "steal: number of steals == sum of steals" "$(jq_py "$out" 'r[0]["steals"]')" "$(stat_sum steals)"
check "steal: histogram count == steals" "$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"])')" "$(stat_sum steals)"
check "steal: unit tasks" "$(jq_py "$out" 'r[0]["unit"]')" tasks
for w in $(workers); do
	check "steal: matrix row $w == worker $w stolen" \
		"$(jq_py "$out" "sum(r[0]['matrix']['tasks'][$w]) if r[0]['matrix']['workers'] > $w else 0")" \
		"$(stat_worker $w stolen)"
	check_after_stats "steal: failed attempts of worker $w" \
		"$(jq_py "$out" "sum(r[0]['matrix']['fails'][$w]) if r[0]['matrix']['workers'] > $w else 0")" \
		"$(stat_worker $w steal_fails)"
done
check "steal: nobody steals from itself" \
	"$(jq_py "$out" 'all(r[0]["matrix"][m][i][i] == 0 for m in ("tasks", "steals", "fails") for i in range(r[0]["matrix"]["workers"]))')" True

start_tool steal --per-event -j -W
run_workload BLITZ_STEAL=one
stop_tool steal
check "steal BLITZ_STEAL=one: every steal takes one task" \
	"$(jq_py "$out" 'all(len(h["buckets"]) == 1 and h["sum"] == h["count"] for h in r[0]["histograms"])')" True
check "steal BLITZ_STEAL=one: stolen" "$(jq_py "$out" 'r[0]["tasks"]')" "$(stat_total stolen)"
finish
