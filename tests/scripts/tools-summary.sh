#!/usr/bin/env bash
# tools-summary.sh - the tools' summary mode (the runtime's own histograms,
# read at hist_snapshot) on a known workload: its counts equal the
# runtime's statistics exactly (polls, the timed ticks' polls standing for every poll,
# steals and stolen tasks, parks), a per-event tool attached to the same
# run counts what the summary counts, and a tool attached and detached
# while a benchmark runs sees a window of it and leaves its counts as an
# untraced run's.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init
# A fixed period for the known workload (the default, auto, follows each
# worker's EWMA); the run attached mid-way below keeps the default.
export BLITZ_HIST_SAMPLE=8

# A second polltime, per event, on the same run (start_tool keeps one per name).
"$obj/tools/bin/blitz-polltime" -b "$lib" --per-event -j > "$tmp/pe.out" 2> "$tmp/pe.err" &
pe=$!
wait_ready "$tmp/pe.err" $pe || { bad "polltime --per-event did not attach: $(cat "$tmp/pe.err")"; finish; }
start_tool polltime -j -W -R
start_tool schedlat -j
start_tool steal -j -W
start_tool park -j -W
run_workload
for n in polltime schedlat steal park; do stop_tool $n; done
kill -INT $pe; wait $pe || bad "polltime --per-event exited $?"

out="$tmp/polltime.out" polled=$(stat_total polled)
check "polltime --summary: timed + not timed == polled" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"]) + r[0]["unpaired"]')" "$polled"
for w in $(workers); do
	polls=$(stat_worker $w polls)
	# One tick in 8 timed, the first with polls among them; at the exit's
	# snapshot the timed polls stand for every poll of the worker.
	check "polltime --summary: worker $w timed polls stand for its $polls polls" \
		"$(jq_py "$out" "sum(h['count'] for h in r[0]['histograms'] if h['worker'] == $w)")" \
		"$polls"
done
check "polltime --summary: ready and pending, buckets add up to count" \
	"$(jq_py "$out" 'sorted(set(h["label"].split()[-1] for h in r[0]["histograms"])), all(sum(b["count"] for b in h["buckets"]) == h["count"] for h in r[0]["histograms"])')" \
	"(['pending', 'ready'], True)"
check "polltime --per-event on the same run: count == the summary's polls" \
	"$(jq_py "$tmp/pe.out" 'sum(h["count"] for h in r[0]["histograms"])')" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"]) + r[0]["unpaired"]')"
check "polltime: the two modes' JSON has the same keys" \
	"$(jq_py "$out" 'sorted(r[0])')" "$(jq_py "$tmp/pe.out" 'sorted(r[0])')"

out="$tmp/schedlat.out"
check "schedlat --summary: timed + not timed == polled" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"]) + r[0]["unpaired"]')" "$polled"
check "schedlat --summary: some timed, schema" \
	"$(jq_py "$out" '(sum(h["count"] for h in r[0]["histograms"]) > 0, r[0]["tool"], r[0]["unit"], r[0]["dropped"])')" \
	"(True, 'schedlat', 'us', 0)"

out="$tmp/steal.out"
check "steal --summary: steals == steals" "$(jq_py "$out" 'r[0]["steals"]')" "$(stat_sum steals)"
check "steal --summary: tasks == stolen" "$(jq_py "$out" 'r[0]["tasks"]')" "$(stat_total stolen)"
check "steal --summary: size histogram total == steals" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"])')" "$(stat_sum steals)"
for w in $(workers); do
	check "steal --summary -W: worker $w steals" \
		"$(jq_py "$out" "sum(h['count'] for h in r[0]['histograms'] if h['worker'] == $w)")" \
		"$(stat_worker $w steals)"
done

out="$tmp/park.out"
check_after_stats "park --summary: parks started == parked" "$(jq_py "$out" 'r[0]["parks_total"]')" "$(stat_total parked)"
for w in $(workers); do
	check_after_stats "park --summary: worker $w parks" \
		"$(jq_py "$out" "sum(p['count'] for p in r[0]['parks'] if p['worker'] == $w)")" \
		"$(stat_worker $w parks)"
done
check "park --summary: every sleep timed (none open at exit)" \
	"$(jq_py "$out" 'sum(h["count"] for h in r[0]["histograms"])')" "$(jq_py "$out" 'r[0]["parks_total"]')"
check "park --summary: reasons are known, no wakers (per event only)" \
	"$(jq_py "$out" 'all(h["label"].split()[-1] in ("notified", "timeout", "shutdown", "io") for h in r[0]["histograms"]), r[0]["wakers"]')" \
	"(True, [])"

# --- attached and detached mid-run -----------------------------------------
unset BLITZ_HIST_SAMPLE
# attach_detach_run ITERS: a run of ITERS yield_many iterations, two tools
# attached and detached in turn while it runs; returns 2 if it ended
# before the second detached (a tool's start takes seconds on a busy
# machine: the caller then runs one 4 times longer, not a failure).
attach_detach_run() {
	long=(--bench yield_many --iters "$1" --warmup 0)
	timeout 600 "$bench" "${long[@]}" --stats > /dev/null 2> "$tmp/stats" &
	run=$!
	sleep 0.3
	start_tool polltime -j
	sleep 0.5
	stop_tool polltime
	start_tool polltime -j
	sleep 0.3
	stop_tool polltime
	cp "$tmp/polltime.out" "$tmp/second.out"
	if ! kill -0 $run 2>/dev/null; then
		wait $run || true
		return 2
	fi
	wait $run || bad "sched-bench ${long[*]} exited $? while tools attached and detached"
}
# The shortest run that outlasts two attaches and detaches: from 50
# iterations (seconds under a sanitizer, where 500 took 5 minutes with the
# untraced run below) up, four times more each time it ended too soon.
for iters in 50 200 800 3200 12800 0; do
	[ "$iters" -gt 0 ] || { bad "attach/detach mid-run: sched-bench ended before the second tool detached, even at 12800 iterations"; finish; }
	rc=0
	attach_detach_run "$iters" || rc=$?
	[ $rc -eq 2 ] || break
	echo "attach/detach mid-run: $iters iterations ended before the tools were done; 4 times more"
done
timeout 600 "$bench" "${long[@]}" --stats > /dev/null 2> "$tmp/untraced.stats"
untraced=$(stat_total polled "$tmp/untraced.stats")
check "attach/detach mid-run: the run spawned what an untraced run spawns" \
	"$(stat_total spawned)" "$(stat_total spawned "$tmp/untraced.stats")"
# The workers' polls: every yield and completion, less the few polls the
# main thread runs itself while it helps in blitz_block_on (no worker
# counts those; how many depends on timing): at most one per iteration.
polled=$(stat_total polled) iters=${long[3]}
if [ $((polled - untraced)) -le "$iters" ] && [ $((untraced - polled)) -le "$iters" ]; then
	ok "attach/detach mid-run: the workers' polls, $polled, are an untraced run's, $untraced, within $iters"
else
	bad "attach/detach mid-run: the workers' polls, $polled, differ from an untraced run's, $untraced, by more than $iters"
fi
window=$(jq_py "$tmp/second.out" 'sum(h["count"] for h in r[0]["histograms"]) + r[0]["unpaired"]')
if [ "$window" -gt 0 ] && [ "$window" -lt "$untraced" ]; then
	ok "attach/detach mid-run: the second tool saw a window of the run: 0 < $window < $untraced polls"
else
	bad "attach/detach mid-run: the second tool's window has $window polls (the run $untraced)"
fi

# --- text output: runqlat's layout, as per event ----------------------------
start_tool polltime
run_workload
stop_tool polltime
if grep -q '^     nsecs               : count    distribution$' "$tmp/polltime.out"; then
	ok "polltime --summary: text histogram in runqlat's layout"
else
	bad "polltime --summary: text output:"; cat "$tmp/polltime.out"
fi

# --- snapshots of another layout: skipped, counted, said -------------------
# hist-layout fires hist_snapshot 5 times with layouts no tool may read (2
# of another size, then 3 of the next version): every summary tool merges
# none and says how many it skipped, and which version it saw.
version=$(sed -n 's/^#define BLITZ_HIST_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
	"$src/include/blitz/trace/histograms.h")
summary_tools=(polltime schedlat steal park tasksrc ewma)
for n in "${summary_tools[@]}"; do lib="$obj/tests/hist-layout" start_tool $n -j; done
bt=0
if command -v bpftrace > /dev/null; then
	lib="$obj/tests/hist-layout" start_twin summary; wait_twin summary; bt=1
fi
"$obj/tests/hist-layout" > /dev/null || bad "hist-layout exited $?"
for n in "${summary_tools[@]}"; do stop_tool $n; done
[ $bt -eq 0 ] || stop_twins
for n in "${summary_tools[@]}"; do
	msg="blitz-$n: 5 snapshots skipped: the runtime's histogram layout is version $((version + 1)), this tool reads version $version"
	if grep -qF "$msg" "$tmp/$n.err"; then ok "$n --summary: skips 5 snapshots of another layout and says so"
	else bad "$n --summary: no \"$msg\" in: $(cat "$tmp/$n.err")"; fi
	check "$n --summary: merges nothing of another layout" \
		"$(jq_py "$tmp/$n.out" 'sum(h["count"] for h in r[-1]["histograms"])')" 0
done
if [ $bt -eq 1 ]; then
	check "summary.bt: @skipped_other_layout == 5" "$(bt_val "$tmp/summary.bt.out" skipped_other_layout)" 5
	if grep -q '^@polls\b' "$tmp/summary.bt.out"; then bad "summary.bt: read a snapshot of another layout"
	else ok "summary.bt: read no snapshot of another layout"; fi
else
	echo "skip summary.bt on another layout: bpftrace not installed"
fi
finish
