#!/usr/bin/env bash
# tools-blockinglat.sh - blitz-blockinglat on a known load (blocking-bench:
# 3,000 jobs, each sleeping 100 us): every job is in both histograms (queue
# wait and run time counts == the jobs the program ran == the pool's
# jobs_done), every run time covers the 100 us sleep, -T splits by pool
# thread, intervals add up, the text is runqlat's layout; and the bpftrace
# twin, attached to the same run, counts the same jobs.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init
# The twin watches the first run with the tool.
twin=
if command -v bpftrace > /dev/null; then
	twin=$tmp/blockinglat.bt.out
	start_twin blockinglat
	wait_twin blockinglat
fi
start_tool blockinglat -j
run_blocking
stop_tool blockinglat
stop_twins

out="$tmp/blockinglat.out"
jobs=$(stat_total jobs)
check "blocking-bench ran the jobs it was given" "$jobs" "$blocking_jobs"
check "jobs_done == jobs" "$(stat_total jobs_done)" "$jobs"
check "blockinglat: one JSON object at exit" "$(jq_py "$out" 'len(r)')" 1
check "blockinglat: labels" "$(jq_py "$out" '[h["label"] for h in r[0]["histograms"]]')" "['wait', 'run']"
check "blockinglat: queue wait count == jobs" \
	"$(jq_py "$out" 'r[0]["histograms"][0]["count"]')" "$jobs"
check "blockinglat: run time count == jobs" \
	"$(jq_py "$out" 'r[0]["histograms"][1]["count"]')" "$jobs"
check "blockinglat: buckets add up to count" \
	"$(jq_py "$out" 'all(sum(b["count"] for b in h["buckets"]) == h["count"] for h in r[0]["histograms"])')" True
check "blockinglat: schema" "$(jq_py "$out" '(r[0]["tool"], r[0]["unit"], r[0]["interval_s"], r[0]["histograms"][0]["worker"], r[0]["histograms"][0]["buckets"][0]["low"], r[0]["histograms"][0]["buckets"][0]["high"])')" \
	"('blockinglat', 'us', None, -1, 0, 1)"
check "blockinglat: log2 bucket bounds" \
	"$(jq_py "$out" 'all(b["low"] == (0 if i == 0 else 2**i) and b["high"] == 2**(i+1)-1 for h in r[0]["histograms"] for i, b in enumerate(h["buckets"]))')" True
check "blockinglat: every run time >= the 100 us sleep (no count below 64 us)" \
	"$(jq_py "$out" 'sum(b["count"] for b in r[0]["histograms"][1]["buckets"] if b["high"] < 64)')" 0
check "blockinglat: run time sum >= jobs x 100 us" \
	"$(jq_py "$out" 'r[0]["histograms"][1]["sum"] >= 100 * '"$jobs")" True
check "blockinglat: no unpaired event, nothing dropped" \
	"$(jq_py "$out" '(r[0]["unpaired"], r[0]["dropped"])')" "(0, 0)"

if [ -n "$twin" ]; then
	val() { bt_val "$twin" "$1"; }
	hist_total() { bt_hist_total "$twin" "$1"; }
	check "blockinglat.bt: @waited == jobs" "$(val waited)" "$jobs"
	check "blockinglat.bt: @ran == jobs" "$(val ran)" "$jobs"
	check "blockinglat.bt: @wait_usecs total == jobs" "$(hist_total wait_usecs)" "$jobs"
	check "blockinglat.bt: @run_usecs total == jobs" "$(hist_total run_usecs)" "$jobs"
	check "blockinglat.bt: no unpaired event" "$(val unpaired)" 0
	t=$(val threads)
	if [ "$t" -ge 1 ] && [ "$t" -le "$(stat_total threads_started)" ]; then
		ok "blockinglat.bt: @threads $t <= threads_started"
	else
		bad "blockinglat.bt: @threads $t, threads_started $(stat_total threads_started)"
	fi
else
	echo "ok   bpftrace not installed: blockinglat.bt not checked"
fi

# -T per pool thread, in ms, printed every half second: the intervals add
# up to the jobs, each thread's two histograms are there, no more threads
# than the pool started (capped at 4).
start_tool blockinglat -j -T -m 0.5
run_blocking BLITZ_BLOCKING_THREADS=4
stop_tool blockinglat
check "blockinglat -T: threads_started <= the cap" "$(($(stat_total threads_started) <= 4))" 1
check "blockinglat -T -m: unit ms, interval set" \
	"$(jq_py "$out" '(r[0]["unit"], r[0]["interval_s"] is not None)')" "('ms', True)"
check "blockinglat -T: wait counts over intervals and threads == jobs" \
	"$(jq_py "$out" 'sum(h["count"] for o in r for h in o["histograms"] if h["label"].endswith(" wait"))')" "$jobs"
check "blockinglat -T: run counts over intervals and threads == jobs" \
	"$(jq_py "$out" 'sum(h["count"] for o in r for h in o["histograms"] if h["label"].endswith(" run"))')" "$jobs"
check "blockinglat -T: labels are 'thread TID wait|run'" \
	"$(jq_py "$out" 'all(__import__("re").fullmatch(r"thread [0-9]+ (wait|run)", h["label"]) for o in r for h in o["histograms"])')" True
check "blockinglat -T: at most threads_started threads" \
	"$(jq_py "$out" 'len({h["label"].split()[1] for o in r for h in o["histograms"]}) <= '"$(stat_total threads_started)")" True

# Text output: the runqlat layout, one histogram per interval of a job.
start_tool blockinglat
run_blocking
stop_tool blockinglat
if grep -qx 'queue wait' "$out" && grep -qx 'run time' "$out" &&
   grep -q '^     usecs               : count    distribution$' "$out" &&
   grep -Eq '^ +0 -> 1 +: [0-9]+ +\|[* ]{40}\|$' "$out"; then
	ok "blockinglat: text histograms in runqlat's layout"
else
	bad "blockinglat: text output:"; cat "$out"
fi
finish
