#!/usr/bin/env bash
# experiments-probe-cost.sh - experiments/probe-cost in quick mode: what a
# probe costs: its table, and an instruction count per benchmark and build
# where valgrind runs.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

"$src/experiments/probe-cost/run" --quick --build "$obj" --out "$tmp/pc" > "$tmp/pc.log" 2>&1 ||
	{ echo "FAIL probe-cost:"; tail -20 "$tmp/pc.log"; exit 1; }
need "$tmp/pc/meta.json" "probe-cost meta.json"
need "$tmp/pc/raw.jsonl" "probe-cost raw JSON"
need "$tmp/pc/summary.md" "probe-cost summary"
if command -v valgrind > /dev/null; then
	# One instruction count per benchmark and build, both above zero.
	n=$(grep -c '"variant":"instructions".*"instructions":[1-9]' "$tmp/pc/raw.jsonl" || true)
	want=$((2 * $("$obj/bin/sched-bench" --list | wc -l)))
	[ "$n" -eq "$want" ] || { echo "FAIL probe-cost: $n instruction counts, want $want"; exit 1; }
	grep -q '^Instructions (callgrind' "$tmp/pc/summary.md" ||
		{ echo "FAIL probe-cost: no instruction table"; exit 1; }
	echo "ok   probe-cost: $n instruction counts and their table"
fi
exit $fail
