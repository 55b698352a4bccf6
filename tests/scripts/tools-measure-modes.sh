#!/usr/bin/env bash
# tools-measure-modes.sh - tools/measure-modes end to end, one pair per
# benchmark in summary mode (-s): each benchmark of `sched-bench --list` gets
# its iterations (-t: calibrated, at least one; -i: the same for all), a
# row of ratios from one control and one traced pair, and a row of the
# one-iteration runs' fixed cost; -b runs only the benchmarks it names, and
# a benchmark that reports a latency distribution (burst_wake) gets a row
# of p50 and p99 ratios; -H adds a column pair of runs with the semaphore
# held and no tool.  What the ratios read is not tested (a shared
# machine's noise); that every cell is filled in is.
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

mm -i 1 -b burst_wake,yield_many -o "$tmp/b"
check "measure-modes -b: only the benchmarks named, in that order" \
	"$(cut -d= -f1 "$tmp/b/iters" | tr '\n' ' ')" "burst_wake yield_many "
check "measure-modes: burst_wake's p50 and p99 ratios (control, summary; per-event not run)" \
	"$(grep -cE '^\| burst_wake( \| [0-9.]+ \[[^]]*\] \(1\)){4} \| - \| - \|$' "$tmp/mm.out")" 1
check "measure-modes: rows of burst_wake (ratios, latency, fixed cost) and yield_many (no latency)" \
	"$(grep -c '^| burst_wake |' "$tmp/mm.out") $(grep -c '^| yield_many |' "$tmp/mm.out")" "3 2"
mm -i 1 -H -b yield_many -o "$tmp/h"
check "measure-modes -H: a held pair (semaphore raised in its traced run), and its two columns" \
	"$(grep -c '"traced": true' "$tmp/h/pairs.held.jsonl") $(grep -cE '^\| yield_many \| 1( \| [0-9.]+ \[[^]]*\] \(1\)){6} \| - \| - \|$' "$tmp/mm.out")" "1 1"
rc=0
"$src/tools/measure-modes" -O "$obj" -b no_such_bench > "$tmp/bad.out" 2> "$tmp/bad.err" || rc=$?
check "measure-modes -b no_such_bench: exit 2, one line naming it" \
	"$rc $(grep -c 'no_such_bench' "$tmp/bad.err")" "2 1"
finish
