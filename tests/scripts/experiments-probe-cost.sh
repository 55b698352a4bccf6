#!/usr/bin/env bash
# experiments-probe-cost.sh - experiments/probe-cost in quick mode: what a
# probe costs: its table, and an instruction count per benchmark and build
# where valgrind runs.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

run_quick probe-cost pc
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
