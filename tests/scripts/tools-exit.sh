#!/usr/bin/env bash
# tools-exit.sh - a program that exits with its runtime still running
# (returns from main without blitz_runtime_free) still hands a tracer
# every poll: its workers give their summary histograms and event log to
# the tracer before the process goes (core/sched/exit_flush.h).
# outside-queue -x spawns 1,000 tasks, waits for them outside blitz and
# returns, all in a few ms: without the hand-over no worker's periodic
# snapshot or flush came before the exit, and the tools saw no poll time
# at all (blitz-polltime) or a part of the polls (blitz-events).
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

prog="$obj/tests/outside-queue"
start_tool polltime -j -b "$prog"
start_tool events -j -b "$prog"
ran=$(timeout 300 "$prog" -x 1000) || bad "outside-queue -x failed: '$ran'"
check "outside-queue -x: its tasks ran" "$ran" "ran 1000"
stop_tool polltime
stop_tool events
check "outside-queue -x, blitz-polltime (summary): polls timed or counted" \
	"$(jq_py "$tmp/polltime.out" 'sum(h["count"] for h in r[0]["histograms"] if h["label"] == "all")')" 1000
check "outside-queue -x, blitz-events: spawns, poll starts, poll ends, nothing left waiting" \
	"$(jq_py "$tmp/events.out" '(r[0]["events"]["spawn"], r[0]["events"]["poll_start"], r[0]["events"]["poll_end"], r[0]["waiting"])')" \
	"(1000, 1000, 1000, 0)"
finish
