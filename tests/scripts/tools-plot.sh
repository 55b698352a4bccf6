#!/usr/bin/env bash
# tools-plot.sh - tools/plot turns the tools' JSON into PNG and SVG from the
# JSON alone: two runs of a histogram tool overlaid (with --label), a file
# of several intervals and per-worker histograms, a counter tool (top), an
# ewma time series and blitz-events' timeline (-r records).  The JSON here is written by hand in the tools'
# schema, so this test needs neither root nor BPF.
set -euo pipefail
src=${BLITZ_SRCTREE:?}
plot="$src/tools/plot"
fail=0
[ -x /usr/bin/python3 ] || { echo "no /usr/bin/python3"; exit 77; }
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || { echo "python3-matplotlib not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

hist() { # label worker count...: one histogram object
	local label=$1 worker=$2 i=0 b= n=0 c; shift 2
	for c in "$@"; do
		b="$b${b:+,}{\"low\":$([ $i -eq 0 ] && echo 0 || echo $((1 << i))),\"high\":$(((1 << (i + 1)) - 1)),\"count\":$c}"
		n=$((n + c)); i=$((i + 1))
	done
	echo "{\"label\":\"$label\",\"worker\":$worker,\"buckets\":[$b],\"count\":$n,\"sum\":$((n * 3))}"
}
head='"tool":"schedlat","unit":"us","ts":1700000000.5'
echo "{$head,\"interval_s\":null,\"histograms\":[$(hist all -1 3 10 40 100 20 5)],\"unpaired\":0,\"dropped\":0}" > "$tmp/epoll.json"
{
	echo "{$head,\"interval_s\":1.0,\"histograms\":[$(hist 'worker 0' 0 1 5 80 30),$(hist 'worker 1' 1 0 2 60 50 9)],\"unpaired\":0,\"dropped\":0}"
	echo "{$head,\"interval_s\":1.0,\"histograms\":[$(hist 'worker 0' 0 0 1 8 3),$(hist 'worker 1' 1)],\"unpaired\":0,\"dropped\":0}"
} > "$tmp/io_uring.json"
echo '{"tool":"top","unit":"events","ts":1700000000.5,"interval_s":1.0,"histograms":[],"counters":[{"worker":0,"polls":10,"steals":1,"stolen":4,"steal_fails":2,"parks":3,"lifo_hits":5,"global_batches":1,"global_tasks":2,"overflows":0,"overflowed":0}],"totals":[{"worker":0,"polls":10,"steals":1,"stolen":4,"steal_fails":2,"parks":3,"lifo_hits":5,"global_batches":1,"global_tasks":2,"overflows":0,"overflowed":0}],"dropped":0}' > "$tmp/top.json"
echo '{"tool":"ewma","unit":"ns","ts":1700000000.5,"interval_s":null,"histograms":[],"workers":[],"series":[[1700000000.1,7,0,120,255],[1700000000.2,7,0,9000,111],[1700000000.3,7,1,50000,20]],"dropped":0}' > "$tmp/ewma.json"
# blitz-events -j -r: [ns, pid, worker, event, task, arg, peer, tid]; the
# program's thread spawns two tasks, worker 1 steals one from worker 0, a
# join nests a poll, worker 1 sleeps.
echo '{"tool":"events","unit":"ns","ts":1700000000.5,"interval_s":null,"histograms":[{"label":"poll time","worker":-1,"buckets":[{"low":64,"high":127,"count":3}],"count":3,"sum":300}],"records":[[0,7,-1,"spawn",4096,3,-1,7],[10,7,-1,"spawn",8192,3,-1,7],[50,7,0,"poll_start",4096,2,-1,8],[60,7,1,"steal",0,1,0,9],[70,7,1,"poll_start",8192,1,-1,9],[80,7,0,"poll_start",12288,0,-1,8],[150,7,0,"poll_end",12288,1,-1,8],[170,7,1,"poll_end",8192,1,-1,9],[180,7,1,"park",0,10000000,-1,9],[200,7,0,"poll_end",4096,1,-1,8],[900,7,1,"unpark",0,1,0,9]]}' > "$tmp/events.json"

is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
is_svg() { [ -s "$1" ] && grep -q '<svg' "$1"; }
expect() { # name prefix
	if is_png "$2.png" && is_svg "$2.svg"; then echo "ok   $1: $2.png (PNG signature) and $2.svg"
	else echo "FAIL $1: no valid $2.png / $2.svg"; fail=1; fi
}

"$plot" -o "$tmp/cmp" --title "schedule latency by backend" --label epoll --label io_uring \
	"$tmp/epoll.json" "$tmp/io_uring.json" > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail=1; }
expect "two runs overlaid" "$tmp/cmp"
grep -q 'epoll' "$tmp/cmp.svg" && grep -q 'io_uring' "$tmp/cmp.svg" &&
	echo "ok   legend names both runs" || { echo "FAIL legend"; fail=1; }
"$plot" "$tmp/io_uring.json" > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail=1; }
expect "one run, intervals added, one series per worker (default prefix)" "$tmp/io_uring"
"$plot" -o "$tmp/top" "$tmp/top.json" > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail=1; }
expect "counter tool" "$tmp/top"
"$plot" -o "$tmp/ewma" "$tmp/ewma.json" > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail=1; }
expect "ewma time series" "$tmp/ewma-series"
"$plot" -o "$tmp/events" "$tmp/events.json" > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail=1; }
expect "blitz-events: its histogram" "$tmp/events"
expect "blitz-events: the timeline of its records" "$tmp/events-timeline"
grep -q 'thread 7' "$tmp/events-timeline.svg" && grep -q 'worker 1' "$tmp/events-timeline.svg" &&
	grep -q '3 polls of 3 tasks' "$tmp/events-timeline.svg" &&
	echo "ok   timeline: a row per worker and thread, every poll (a nested one too)" ||
	{ echo "FAIL timeline rows or poll count"; fail=1; }
"$plot" -o "$tmp/events-w" --window 0.00016:0.001 "$tmp/events.json" > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail=1; }
grep -q '2 polls of 2 tasks' "$tmp/events-w-timeline.svg" &&
	echo "ok   timeline --window 0.00016:0.001 (160-1000 ns): the two polls that overlap it" ||
	{ echo "FAIL timeline --window"; fail=1; }
if "$plot" --window 5:1 "$tmp/events.json" > "$tmp/log" 2>&1; then
	echo "FAIL --window 5:1 was accepted"; fail=1
else
	echo "ok   --window 5:1 is refused: $(tail -n 1 "$tmp/log")"
fi
if "$plot" "$tmp/epoll.json" "$tmp/top.json" > "$tmp/log" 2>&1; then
	echo "FAIL mixing two tools' files was accepted"; fail=1
else
	echo "ok   mixing two tools' files is refused: $(tail -n 1 "$tmp/log")"
fi
exit $fail
