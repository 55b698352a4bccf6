#!/usr/bin/env bash
# tools-ewma.sh - blitz-ewma on a known workload: every worker's updates
# arrive (none dropped), and each update's interval is the one the runtime's
# rule gives for its average: clamp(1 ms / avg_poll_ns, 8, 255) when
# adaptive, exactly N with BLITZ_GLOBAL_INTERVAL=N.  The summary mode on
# the same run gives the same histogram, bucket by bucket.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

# A second blitz-ewma in its default mode, the summary, on the same run
# (start_tool keeps one per name).
"$obj/tools/bin/blitz-ewma" -b "$lib" -j -W > "$tmp/sum.out" 2> "$tmp/sum.err" &
sum=$!
wait_ready "$tmp/sum.err" $sum || { bad "ewma --summary did not attach: $(cat "$tmp/sum.err")"; finish; }
start_tool ewma -j -s -W
run_workload
stop_tool ewma
kill -INT $sum; wait $sum || bad "ewma --summary exited $?"
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
# The summary (the runtime's EWMA histogram, read at hist_snapshot) against
# every update on the same run, both attached before it began.
hists='sorted((h["worker"], h["count"], h["sum"], tuple((b["low"], b["count"]) for b in h["buckets"])) for x in r for h in x["histograms"])'
check "ewma --summary: each worker's histogram == the per-event one's, bucket by bucket" \
	"$(jq_py "$tmp/sum.out" "$hists")" "$(jq_py "$out" "$hists")"
check "ewma --summary: updates per worker == the series'" \
	"$(jq_py "$tmp/sum.out" 'sorted((w["worker"], w["updates"]) for x in r for w in x["workers"] if w["updates"])')" \
	"$(jq_py "$out" 'sorted((w["worker"], w["updates"]) for x in r for w in x["workers"] if w["updates"])')"
check "ewma --summary: no last/min/max (they need every update), a mean" \
	"$(jq_py "$tmp/sum.out" 'all(w["avg_poll_ns"]["last"] is None and w["avg_poll_ns"]["mean"] > 0 for x in r for w in x["workers"] if w["updates"])')" True

start_tool ewma -j -s
run_workload BLITZ_GLOBAL_INTERVAL=31
stop_tool ewma
check "ewma BLITZ_GLOBAL_INTERVAL=31: every interval is 31" \
	"$(jq_py "$out" 'sorted(set(s[4] for x in r for s in x["series"]))')" "[31]"
finish
