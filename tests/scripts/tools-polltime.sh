#!/usr/bin/env bash
# tools-polltime.sh - blitz-polltime on a known workload: one poll time per
# poll (total count == polled, per worker == that worker's polls), split by
# result with -R, in the common JSON schema.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

start_tool polltime --per-event -j -W -R
run_workload
stop_tool polltime
out="$tmp/polltime.out"
check "polltime: total count == polled" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"])')" "$(stat_total polled)"
check "polltime: unit ns, one object" "$(jq_py "$out" '(len(r), r[0]["unit"])')" "(1, 'ns')"
for w in $(workers); do
	check "polltime -W: worker $w count == its polls" \
		"$(jq_py "$out" "sum(h['count'] for h in r[0]['histograms'] if h['worker'] == $w)")" \
		"$(stat_worker $w polls)"
done
check "polltime -R: labels" \
	"$(jq_py "$out" 'sorted(set(h["label"].split()[-1] for h in r[0]["histograms"]))')" \
	"['pending', 'ready']"
check "polltime: no unpaired end, nothing dropped" "$(jq_py "$out" '(r[0]["unpaired"], r[0]["dropped"])')" "(0, 0)"
check "polltime: buckets add up to count" \
	"$(jq_py "$out" 'all(sum(b["count"] for b in h["buckets"]) == h["count"] for h in r[0]["histograms"])')" True
finish
