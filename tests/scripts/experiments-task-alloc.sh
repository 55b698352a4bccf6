#!/usr/bin/env bash
# experiments-task-alloc.sh - experiments/task-alloc in quick mode: task
# allocation under an address-space limit: a line per benchmark and limit,
# and the table.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

run_quick task-alloc ta
n=$(grep -c '"limit_kb"' "$tmp/ta/raw/bench.jsonl")
[ "$n" -eq 4 ] && echo "ok   task-alloc: 4 lines (2 benchmarks, no limit and one)" ||
	{ echo "FAIL task-alloc: $n lines, not 4"; fail=1; }
grep -q '^| 150000 |' "$tmp/ta/summary.md" && echo "ok   task-alloc: table by limit" ||
	{ echo "FAIL task-alloc: no row for the limit"; fail=1; }
exit $fail
