#!/usr/bin/env bash
# tools-schedlat.sh - blitz-schedlat on a known workload: every poll of the
# run is in the histogram (total count == the runtime's polled), with and
# without -W, and the JSON follows the common histogram schema.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

start_tool schedlat --per-event -j
run_workload
stop_tool schedlat
out="$tmp/schedlat.out"
check "schedlat: one JSON object at exit" "$(jq_py "$out" 'len(r)')" 1
check "schedlat: total count == polled" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"])')" "$(stat_total polled)"
check "schedlat: buckets add up to count" \
	"$(jq_py "$out" 'all(sum(b["count"] for b in h["buckets"]) == h["count"] for h in r[0]["histograms"])')" True
check "schedlat: schema" "$(jq_py "$out" '(r[0]["tool"], r[0]["unit"], r[0]["interval_s"], r[0]["histograms"][0]["label"], r[0]["histograms"][0]["worker"], r[0]["histograms"][0]["buckets"][0]["low"], r[0]["histograms"][0]["buckets"][0]["high"])')" \
	"('schedlat', 'us', None, 'all', -1, 0, 1)"
check "schedlat: log2 bucket bounds" \
	"$(jq_py "$out" 'all(b["low"] == (0 if i == 0 else 2**i) and b["high"] == 2**(i+1)-1 for h in r[0]["histograms"] for i, b in enumerate(h["buckets"]))')" True
check "schedlat: no unpaired polls, nothing dropped" \
	"$(jq_py "$out" '(r[0]["unpaired"], r[0]["dropped"])')" "(0, 0)"

cp "$out" "$tmp/schedlat-all.json"

start_tool schedlat --per-event -j -W -m
run_workload
stop_tool schedlat
check "schedlat -W -m: unit" "$(jq_py "$out" 'r[0]["unit"]')" ms
for w in $(workers); do
	check "schedlat -W: worker $w count == its polls" \
		"$(jq_py "$out" "sum(h['count'] for h in r[0]['histograms'] if h['worker'] == $w)")" \
		"$(stat_worker $w polls)"
done

# Text output: the runqlat layout.
start_tool schedlat --per-event
run_workload
stop_tool schedlat
if grep -q '^     usecs               : count    distribution$' "$tmp/schedlat.out" &&
   grep -Eq '^ +0 -> 1 +: [0-9]+ +\|[* ]{40}\|$' "$tmp/schedlat.out"; then
	ok "schedlat: text histogram in runqlat's layout"
else
	bad "schedlat: text output:"; cat "$tmp/schedlat.out"
fi

# tools/plot draws this run's JSON (the plot itself is tested by tools-plot.sh).
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	if "$src/tools/plot" -o "$tmp/plot" "$tmp/schedlat-all.json" > "$tmp/plot.log" 2>&1 &&
	   [ "$(head -c 8 "$tmp/plot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
	   [ -s "$tmp/plot.svg" ]; then
		ok "schedlat: tools/plot made a PNG and an SVG of its JSON"
	else
		bad "schedlat: tools/plot: $(cat "$tmp/plot.log")"
	fi
fi
finish
