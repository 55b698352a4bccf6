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
# sched-bench's benchmarks and the sync-bench rows meta.json names, per variant.
ns=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["sync_rows"].split(",")))' "$tmp/ab/meta.json")
nv=$(wc -l < "$tmp/ab/raw/variants.txt")
n=$(wc -l < "$tmp/ab/raw/bench.jsonl")
[ "$n" -eq $(((nb + ns) * nv)) ] && echo "ok   $n timed lines (($nb + $ns sync) benchmarks x $nv variants)" ||
	{ echo "FAIL ablation: $n timed lines, not ($nb + $ns sync) benchmarks x $nv variants"; fail=1; }
for row in mutex_contended_4t barrier_4t; do
	grep -q "\"variant\":\"wake-bounded\".*\"bench\":\"$row\"" "$tmp/ab/raw/bench.jsonl" &&
		grep -q "| $row |" "$tmp/ab/summary.md" && echo "ok   ablation: sync-bench's $row in the raw lines and the summary" ||
		{ echo "FAIL ablation: sync-bench's $row missing"; fail=1; }
done
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
