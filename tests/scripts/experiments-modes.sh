#!/usr/bin/env bash
# experiments-modes.sh - experiments/modes in quick mode: each row's runs
# beside the machine (a line per run, the table per row, the CPUs it had),
# the one-worker rows placed by hand (each placement run, in pairs), the
# two-worker row placed by hand once, and as root the
# traced half: every row's trace read whole (nothing lost) and its
# iterations found in the log; analyze refuses what is not a trace file.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

run_quick modes m
n=$(grep -c '"line_ns"' "$tmp/m/raw/beside.jsonl")
[ "$n" -eq 12 ] && echo "ok   modes: 12 untraced runs beside the machine (4 rows x 3)" ||
	{ echo "FAIL modes: $n untraced runs, not 12"; fail=1; }
# Each run's CPUs had: its CPU time over its wall time, above 0 and at most
# the machine's CPUs (a little over for the clocks' granularity).
n=$(python3 -c 'import json, os, sys
print(sum(1 for l in open(sys.argv[1]) for r in [json.loads(l)]
          if 0 < r["cpus"] <= os.cpu_count() * 1.05))' "$tmp/m/raw/beside.jsonl")
[ "$n" -eq 12 ] && echo "ok   modes: every untraced run says how many CPUs it had" ||
	{ echo "FAIL modes: $n of 12 runs with a plausible CPUs-had figure"; fail=1; }
for row in yield_many@2 chained_spawn@1 spawn_many_remote@1 mutex_contended_4t@4; do
	grep -q "^## $row: 3 runs" "$tmp/m/summary.md" && echo "ok   modes: $row's table" ||
		{ echo "FAIL modes: no table for $row"; fail=1; }
done
# Quick mode: 2 pairs of each one-worker row; a run's ns per op is positive.
placed="chained_spawn@1 spawn_many_remote@1"
if grep -q '^placement: needs CPUs 0 and 1' "$tmp/m/summary.md"; then
	echo "     modes: placement not checked (this process cannot run on CPUs 0 and 1)"
	placed=
fi
for row in $placed; do
	for pl in same apart; do
		n=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) for r in [json.loads(l)]
          if r["row"] == sys.argv[2] and r["placement"] == sys.argv[3] and r["ns_per_op"] > 0))' \
			"$tmp/m/raw/placement.jsonl" "$row" "$pl")
		[ "$n" -eq 2 ] && echo "ok   modes: $row placed $pl: 2 runs" ||
			{ echo "FAIL modes: $row placed $pl: $n runs, not 2"; fail=1; }
	done
	grep -q "^| $row | apart / same |" "$tmp/m/summary.md" && echo "ok   modes: $row's placement ratio" ||
		{ echo "FAIL modes: no placement ratio for $row"; fail=1; }
done
# The two-worker row by hand, one round: each placement once, and the
# busiest worker's share of the polls between a half and all of them.
if [ -n "$placed" ]; then
	"$src/experiments/modes/placement" -O "$obj" -n 1 -r yield_many@2 -o "$tmp" > "$tmp/ym.md"
	for pl in spread stacked free; do
		python3 -c 'import json, sys
r = [r for l in open(sys.argv[1]) for r in [json.loads(l)] if r["placement"] == sys.argv[2]]
sys.exit(not (len(r) == 1 and r[0]["ns_per_op"] > 0 and 0.5 <= r[0]["poll_share"] <= 1))' \
			"$tmp/placement.jsonl" "$pl" && echo "ok   modes: yield_many@2 placed $pl" ||
			{ echo "FAIL modes: yield_many@2 placed $pl: $(grep "| $pl |" "$tmp/ym.md")"; fail=1; }
	done
fi
if [ -n "$placed" ] && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	[ -s "$tmp/m/plots/placement.png" ] && echo "ok   modes: plots/placement.png drawn" ||
		{ echo "FAIL modes: no plots/placement.png: $(tail -n 1 "$tmp/m/plots/modes.err" 2>/dev/null)"; fail=1; }
fi
if [ "$(id -u)" -eq 0 ] && [ -x "$obj/tools/bin/blitz-events" ]; then
	for row in yield_many@2 mutex_contended_4t@4; do
		grep -A2 "^### $row" "$tmp/m/summary.md" | grep -q ' 0 records lost in 0 spans' &&
			echo "ok   modes: $row traced, nothing lost" ||
			{ echo "FAIL modes: $row's trace lost records or is missing"; fail=1; }
		# 2 runs of 1 warm-up and 5 iterations; analyze --skip 1 leaves 5 per run.
		its=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/m/raw/$row.json")
		[ "$its" -ge 10 ] && echo "ok   modes: $row: $its iterations found in the log" ||
			{ echo "FAIL modes: $row: $its iterations found in the log, not 10 or more"; fail=1; }
	done
else
	echo "     modes: the traced half not checked (not root, or no tools)"
fi
printf 'not a trace' > "$tmp/bad.trace"
for f in "$tmp/bad.trace" "$tmp/missing.trace"; do
	if /usr/bin/python3 "$src/experiments/modes/analyze" "$f" > "$tmp/an.out" 2>&1; then
		echo "FAIL modes: analyze took $f"; fail=1
	elif [ "$(wc -l < "$tmp/an.out")" -eq 1 ] && grep -q '^analyze: ' "$tmp/an.out"; then
		echo "ok   modes: analyze refuses $(basename "$f") in one line: $(cat "$tmp/an.out")"
	else
		echo "FAIL modes: analyze on $f: $(cat "$tmp/an.out")"; fail=1
	fi
done
exit $fail
