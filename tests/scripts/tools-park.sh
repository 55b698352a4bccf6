#!/usr/bin/env bash
# tools-park.sh - blitz-park on a known workload: every park is seen
# (parks started == parked), every sleep ended (the runtime wakes its
# sleepers at shutdown) and was timed (unpark's slept_ns is never 0 when the
# tool attached first), split by reason with the wakers named.  Then, on
# an idle echo-bench server already running: the sleeps in progress when
# the tool attached are counted apart (at most one per worker), and each
# worker's timed sleeps add up to most of the traced time, never more.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

start_tool park --per-event -j -W
run_workload
stop_tool park
out="$tmp/park.out"
check_after_stats "park: parks started == parked" "$(jq_py "$out" 'r[0]["parks_total"]')" "$(stat_total parked)"
for w in $(workers); do
	check_after_stats "park: worker $w parks" \
		"$(jq_py "$out" "sum(p['count'] for p in r[0]['parks'] if p['worker'] == $w)")" \
		"$(stat_worker $w parks)"
done
check "park: timed sleeps == parks started (none open at exit)" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"])')" "$(jq_py "$out" 'r[0]["parks_total"]')"
check "park: notified sleeps == wakers counted" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"] if h["label"].endswith("notified"))')" \
	"$(jq_py "$out" 'sum(w["count"] for w in r[0]["wakers"])')"
check "park: reasons are known, wakers in range" \
	"$(jq_py "$out" 'all(h["label"].split()[-1] in ("notified", "timeout", "shutdown", "io") for h in r[0]["histograms"]) and all('"$(probe_code WAKER_OUTSIDE)"' <= w["waker"] < '"$(workers | wc -l)"' for w in r[0]["wakers"])')" True
check "park: no unpark without a duration (slept_ns 0), nothing dropped" "$(jq_py "$out" '(r[0]["unpaired"], r[0]["dropped"])')" "(0, 0)"

# in_range NAME LO GOT HI: LO <= GOT <= HI (integers).
in_range() {
	if [ "$2" -le "$3" ] && [ "$3" -le "$4" ]; then ok "$1: $2 <= $3 <= $4"
	else bad "$1: $3 not in $2..$4"; fi
}

# The idle server's workers sleep in 10 ms timeouts; its stdin is a FIFO we
# hold open (fd 7), EOF stops it.
idle_workers=2
if [ ! -x "$obj/bin/echo-bench" ]; then
	echo "skip park: idle run (no $obj/bin/echo-bench)"
	finish
fi
mkfifo "$tmp/idle.in"
"$obj/bin/echo-bench" --server-only --workers $idle_workers < "$tmp/idle.in" > "$tmp/idle.addr" 2> "$tmp/idle.err" &
idle=$!
exec 7> "$tmp/idle.in"
for _ in $(seq 100); do [ -s "$tmp/idle.addr" ] && break; sleep 0.1; done
[ -s "$tmp/idle.addr" ] || { bad "park: echo-bench --server-only did not start: $(cat "$tmp/idle.err")"; finish; }
# worker_awake_ns W: how long the server's worker W has been on a CPU or
# waiting in a run queue, in ns (the kernel's schedstat: run, wait, slices).
worker_awake_ns() {
	local t
	for t in /proc/$idle/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "blitz-worker$1" ] || continue
		awk '{ print $1 + $2 }' "$t/schedstat"
		return
	done
	echo 0
}
t0=$(date +%s%N)
start_tool park --per-event -j -W
t1=$(date +%s%N)
declare -A awake1 awake2
for w in $(seq 0 $((idle_workers - 1))); do awake1[$w]=$(worker_awake_ns $w); done
sleep 0.5
for w in $(seq 0 $((idle_workers - 1))); do awake2[$w]=$(worker_awake_ns $w); done
t2=$(date +%s%N)
stop_tool park
t3=$(date +%s%N)
exec 7>&-
wait $idle || bad "park: echo-bench --server-only exited $?"
untimed=$(jq_py "$out" 'r[0]["unpaired"]')
in_range "park (idle): sleeps in progress at attach (slept_ns 0), at most one per worker" 0 "$untimed" $idle_workers
# park is attached before unpark: every timed sleep's park was counted.
in_range "park (idle): timed sleeps, some, at most the parks started" 1 \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"])')" "$(jq_py "$out" 'r[0]["parks_total"]')"
check "park (idle): nothing dropped" "$(jq_py "$out" 'r[0]["dropped"]')" 0
# Lower bound: half of the window less the time the worker was awake in
# it, as the kernel counted (on a CPU, or runnable and waiting for one: a
# busy machine makes that long, and it is not sleep); upper: the whole run.
for w in $(seq 0 $((idle_workers - 1))); do
	awake=$((awake2[$w] - awake1[$w]))
	in_range "park (idle): worker $w slept (us): over half of [attached, stopped] less its $((awake / 1000)) us awake, under [started, exited]" \
		$(((t2 - t1 - awake) / 2000)) \
		"$(jq_py "$out" "int(sum(h['sum'] for h in r[0]['histograms'] if h['worker'] == $w))")" \
		$(((t3 - t0) / 1000))
done
finish
