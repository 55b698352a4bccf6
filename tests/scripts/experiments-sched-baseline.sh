#!/usr/bin/env bash
# experiments-sched-baseline.sh - experiments/sched-baseline in quick mode:
# the scheduler benchmarks on each backend, traced beside untraced: its
# meta.json, one timed line per benchmark and backend, the histograms and
# plots, and the slowdown it states.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

run_quick sched-baseline sb
need "$tmp/sb/raw/bench.jsonl" "sched-baseline raw JSON"
need "$tmp/sb/summary.md" "sched-baseline summary"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["kernel"] and m["commit"] and m["config"]' \
	"$tmp/sb/meta.json" && echo "ok   meta.json has kernel, commit, config"
n=$(wc -l < "$tmp/sb/raw/bench.jsonl")
backends=$("$obj/bin/sched-bench" --list-backends)
nbk=$(echo $backends | wc -w)
[ "$n" -eq $((nb * nbk)) ] && echo "ok   $n timed lines ($nb benchmarks x $nbk backends)" ||
	{ echo "FAIL $n timed lines, not $nb benchmarks x $nbk backends"; fail=1; }
if [ -e "$tmp/sb/hist/NOT-COLLECTED" ]; then
	echo "ok   histograms not collected, and it says why: $(cat "$tmp/sb/hist/NOT-COLLECTED")"
else
	for t in schedlat polltime park steal tasksrc; do
		need "$tmp/sb/plots/$t.png" "plot $t.png"
		need "$tmp/sb/plots/$t.svg" "plot $t.svg"
		head -c 8 "$tmp/sb/plots/$t.png" | od -An -tx1 | grep -q '89 50 4e 47' || { echo "FAIL $t.png is not a PNG"; fail=1; }
	done
	perturbed "$tmp/sb" $backends
fi
exit $fail
