#!/usr/bin/env bash
# tools-plot.sh - tools/plot turns the tools' JSON into PNG and SVG from the
# JSON alone: two runs of a histogram tool overlaid (with --label), a file
# of several intervals and per-worker histograms, a counter tool (top) and
# an ewma time series.  The JSON here is written by hand in the tools'
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
if "$plot" "$tmp/epoll.json" "$tmp/top.json" > "$tmp/log" 2>&1; then
	echo "FAIL mixing two tools' files was accepted"; fail=1
else
	echo "ok   mixing two tools' files is refused: $(tail -n 1 "$tmp/log")"
fi
exit $fail
