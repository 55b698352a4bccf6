#!/usr/bin/env bash
# experiments-ablation.sh - experiments/ablation in quick mode: each
# scheduler knob switched off in turn: a timed line per benchmark and
# variant, the knobs at work in the runtime's counters, and the slowdown it
# states.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

run_quick ablation ab
need "$tmp/ab/raw/bench.jsonl" "ablation raw JSON"
need "$tmp/ab/summary.md" "ablation summary"
n=$(wc -l < "$tmp/ab/raw/bench.jsonl")
[ "$n" -eq $((nb * 7)) ] && echo "ok   $n timed lines ($nb benchmarks x 7 variants)" ||
	{ echo "FAIL ablation: $n timed lines, not $nb benchmarks x 7 variants"; fail=1; }
# The knobs at work, from the runtime's own counters.
lifo=$(grep -o 'lifo_hits=[0-9]*' "$tmp/ab/raw/traced-no-lifo.stats" | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
[ "$lifo" -eq 0 ] && echo "ok   ablation no-lifo: 0 LIFO hits" || { echo "FAIL ablation no-lifo: $lifo LIFO hits"; fail=1; }
if [ -e "$tmp/ab/hist/NOT-COLLECTED" ]; then
	echo "ok   ablation histograms not collected, and it says why: $(cat "$tmp/ab/hist/NOT-COLLECTED")"
else
	for t in schedlat polltime steal tasksrc; do need "$tmp/ab/plots/$t.png" "ablation plot $t.png"; done
	perturbed "$tmp/ab" default no-lifo steal-one
fi
exit $fail
