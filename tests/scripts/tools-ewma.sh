#!/usr/bin/env bash
# tools-ewma.sh - blitz-ewma on a known workload: every worker's updates
# arrive (none dropped), and each update's interval is the one the runtime's
# rule gives for its average: clamp(1 ms / avg_poll_ns, 8, 255) when
# adaptive, exactly N with BLITZ_GLOBAL_INTERVAL=N.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

start_tool ewma -j -s
run_workload
stop_tool ewma
out="$tmp/ewma.out"
nw=$(grep -c '^  worker ' "$tmp/stats")
check "ewma: updates, from workers 0..$((nw - 1)) only" \
	"$(jq_py "$out" "len([s for x in r for s in x['series']]) > 0 and all(0 <= s[2] < $nw for x in r for s in x['series'])")" True
check "ewma: series length == updates counted" \
	"$(jq_py "$out" 'sum(len(x["series"]) for x in r)')" "$(jq_py "$out" 'sum(w["updates"] for x in r for w in x["workers"])')"
check "ewma: adaptive interval == clamp(1e6 / avg, 8, 255) at every update" \
	"$(jq_py "$out" 'sum(1 for x in r for s in x["series"] if s[4] != min(255, max(8, 1000000 // s[3])))')" 0
check "ewma: last/min/max consistent" \
	"$(jq_py "$out" 'all(w["interval"]["min"] <= w["interval"]["last"] <= w["interval"]["max"] and w["avg_poll_ns"]["min"] <= w["avg_poll_ns"]["last"] <= w["avg_poll_ns"]["max"] for x in r for w in x["workers"] if w["updates"])')" True
check "ewma: histogram count == updates" \
	"$(jq_py "$out" 'sum(h["count"] for x in r for h in x["histograms"])')" "$(jq_py "$out" 'sum(len(x["series"]) for x in r)')"
check "ewma: nothing dropped" "$(jq_py "$out" 'sum(x["dropped"] for x in r)')" 0

start_tool ewma -j -s
run_workload BLITZ_GLOBAL_INTERVAL=31
stop_tool ewma
check "ewma BLITZ_GLOBAL_INTERVAL=31: every interval is 31" \
	"$(jq_py "$out" 'sorted(set(s[4] for x in r for s in x["series"]))')" "[31]"
finish
