#!/usr/bin/env bash
# tools-measure-modes.sh - tools/measure-modes end to end, one pair per
# benchmark in summary mode (-s): each benchmark of `sched-bench --list` gets
# its iterations (-t: calibrated, at least one; -i: the same for all), a
# row of ratios from one control and one traced pair, and a row of the
# one-iteration runs' fixed cost.  What the ratios read is not tested (a
# shared machine's noise); that every cell is filled in is.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

benches=$("$bench" --list)
nb=$(echo "$benches" | wc -w)
mm() { "$src/tools/measure-modes" -O "$obj" -s -p 1 "$@" > "$tmp/mm.out" 2> "$tmp/mm.err" ||
	{ bad "measure-modes $*: exit $?: $(tail -3 "$tmp/mm.err")"; finish; }; }

mm -t 2 -o "$tmp/t"
check "measure-modes -t: one iteration count per benchmark, each at least 1" \
	"$(awk -F= '$2 >= 1 { n++ } END { print n + 0 }' "$tmp/t/iters")" "$nb"
check "measure-modes -t: the benchmarks of sched-bench --list, in order" \
	"$(cut -d= -f1 "$tmp/t/iters" | tr '\n' ' ')" "$(echo $benches) "
# A row: | bench | iters | 6 cells |; the summary-only run leaves per-event '-'.
check "measure-modes: a ratio row per benchmark, control and summary from one pair each" \
	"$(grep -cE '^\| [a-z_]+ \| [0-9]+ \| [0-9.]+ \[[^]]*\] \(1\) \| [0-9.]+ \[[^]]*\] \(1\) \| [0-9.]+ \[[^]]*\] \(1\) \| [0-9.]+ \[[^]]*\] \(1\) \| - \| - \|$' "$tmp/mm.out")" "$nb"
check "measure-modes: a fixed-cost row per benchmark (control, summary)" \
	"$(grep -cE '^\| [a-z_]+ \| -?[0-9]+ \[[^]]*\] \(1\) \| -?[0-9]+ \[[^]]*\] \(1\) \|$' "$tmp/mm.out")" "$nb"

mm -i 2 -o "$tmp/i"
check "measure-modes -i 2: every benchmark runs 2 iterations" \
	"$(grep -c '=2$' "$tmp/i/iters")" "$nb"
finish
