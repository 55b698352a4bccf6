#!/usr/bin/env bash
# tools-exit.sh - a program that exits with its runtime still running
# (returns from main without blitz_runtime_free) still hands a tracer
# every poll: its workers give their summary histograms and event log to
# the tracer before the process goes (core/trace/exit_flush.h).
# outside-queue -x keeps its one worker busy with a task that yields for
# ever (so the worker never parks: no snapshot or flush before a park,
# only every 100-200 ms at a tick), runs 1,000 tasks, prints the
# runtime's polls so far and returns.  The tools must count at least
# those polls; without the hand-over they count none, or only those up
# to the last periodic flush (this passes without the hand-over only if
# such a flush falls in the millisecond between the last task and the
# exit).  Then the same for a thread that is not a worker (-X, below).
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

prog="$obj/tests/outside-queue"
start_tool polltime -j -b "$prog"
start_tool events -j -b "$prog"
# The runtime is left unfreed on purpose: under ASan, LeakSanitizer would
# report its blocks at the exit (and end the process with its output unwritten).
out=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" BLITZ_WORKERS=1 \
	timeout 300 "$prog" -x 1000) || bad "outside-queue -x failed: '$out'"
polled=${out##* }
check "outside-queue -x: its tasks ran" "${out% *}" "ran 1000 polled"
stop_tool polltime
stop_tool events
check "outside-queue -x, blitz-polltime (summary): at least the $polled polls before the exit" \
	"$(jq_py "$tmp/polltime.out" "sum(h['count'] for h in r[0]['histograms'] if h['label'] == 'all') >= $polled")" True
# After its hand-over the worker goes on polling the task that yields for
# ever, and the tool reads its ring in place, so the exit may stop it
# between a poll's start and its end: one poll (one worker) may be open.
check "outside-queue -x, blitz-events: spawns; at least the $polled polls, each ended but one at the exit" \
	"$(jq_py "$tmp/events.out" "(r[0]['events']['spawn'], r[0]['events']['poll_start'] >= $polled, 0 <= r[0]['events']['poll_start'] - r[0]['events']['poll_end'] <= 1)")" \
	"(1001, True, True)"

# A thread that is not a worker, which the exit stops where it is:
# outside-queue -X has a second thread spawn 1,000 tasks and then wait
# (pause(), not a blitz wait: its log is not flushed; a full log flushed
# 512 of them), and the program's thread return from main.  The exit
# hands over the records the thread's log holds (core/trace/event_log.c,
# "The process's exit"); without that, blitz-events counts 512 spawns.
start_tool events -j -b "$prog"
out=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" BLITZ_WORKERS=1 \
	timeout 300 "$prog" -X 1000) || bad "outside-queue -X failed: '$out'"
check "outside-queue -X: its tasks ran" "$out" "ran 1000"
stop_tool events
check "outside-queue -X, blitz-events: the second thread's 1000 spawns, each polled and paired" \
	"$(jq_py "$tmp/events.out" "(sum(w['spawn'] for w in r[0]['workers'] if w['worker'] < 0), r[0]['events']['spawn'], r[0]['events']['poll_start'], [h['count'] for h in r[0]['histograms'] if h['label'] == 'schedule latency'][0], r[0]['unpaired'], r[0]['never_polled'])")" \
	"(1000, 1000, 1000, 1000, 0, 0)"
finish
