#!/usr/bin/env bash
# experiments-backends.sh - experiments/backends in quick mode: the echo
# server on each backend: every run echoed with its percentiles
# in order, the plots, and the slowdown it states.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

run_quick backends be
need "$tmp/be/summary.md" "backends summary"
n=$(wc -l < "$tmp/be/raw/echo.jsonl")
backends=$("$obj/bin/sched-bench" --list-backends)
nbk=$(echo $backends | wc -w)
[ "$n" -eq $((nbk * 2)) ] && echo "ok   $n echo lines ($nbk backends x 2 connection counts)" ||
	{ echo "FAIL backends: $n echo lines, not $nbk backends x 2 connection counts"; fail=1; }
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); assert r["msgs"] > 0 and r["p50_ns"] <= r["p99_ns"] <= r["p999_ns"], r' \
	"$tmp/be/raw/echo.jsonl" && echo "ok   backends: every run echoed, percentiles in order" || fail=1
need "$tmp/be/plots/echo.png" "backends plot echo.png"
if [ ! -e "$tmp/be/hist/NOT-COLLECTED" ]; then
	need "$tmp/be/plots/park.png" "backends plot park.png"
	perturbed "$tmp/be" $backends
fi
exit $fail
