#!/usr/bin/env bash
# tools-park.sh - blitz-park on a known workload: every park is seen
# (parks started == parked), every sleep ended (the runtime wakes its
# sleepers at shutdown) and was timed (unpark's slept_ns is never 0 when the
# tool attached first), split by reason with the wakers named.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

start_tool park -j -W
run_workload
stop_tool park
out="$tmp/park.out"
check_after_stats "park: parks started == parked" "$(jq_py "$out" 'r[0]["parks_total"]')" "$(stat_total parked)"
for w in $(workers); do
	check_after_stats "park: worker $w parks" \
		"$(jq_py "$out" "sum(p['count'] for p in r[0]['parks'] if p['worker'] == $w)")" \
		"$(stat_worker $w parks)"
done
check "park: timed sleeps == parks started (none open at exit)" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"])')" "$(jq_py "$out" 'r[0]["parks_total"]')"
check "park: notified sleeps == wakers counted" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"] if h["label"].endswith("notified"))')" \
	"$(jq_py "$out" 'sum(w["count"] for w in r[0]["wakers"])')"
check "park: reasons are known, wakers in range" \
	"$(jq_py "$out" 'all(h["label"].split()[-1] in ("notified", "timeout", "shutdown", "io") for h in r[0]["histograms"]) and all(-1 <= w["waker"] < '"$(workers | wc -l)"' for w in r[0]["wakers"])')" True
check "park: no unpark without a duration (slept_ns 0), nothing dropped" "$(jq_py "$out" '(r[0]["unpaired"], r[0]["dropped"])')" "(0, 0)"
finish
