#!/usr/bin/env bash
# tools-events.sh - blitz-events (the event log: the workers' rings in
# shared memory, the other threads' flushes at event_flush) on a known
# workload: its records count what the runtime's statistics count,
# exactly (spawns, polls, steals and stolen tasks, parks), nothing is
# lost (no lost span), the workers' logs come through their rings, every
# poll's start pairs with its end, every poll with its queueing (the
# threads that are not workers log theirs: sched-bench's main thread
# spawns and joins), the records come out in time order with each task's
# queued/start/end in turn and each start naming its queueing (-r), a
# trace written (-w, packed) and read back (--read) counts the same, raw
# (--raw) too, a
# reader that stops loses an exact, visible count and pairs nothing
# across it, the flight recorder's rings read from outside (--dump) hold
# what its own dump holds, bad input is one line and exit 1, and a
# sampled run (BLITZ_TRACE_SAMPLE) logs the same tasks a per-event tool
# sees.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init
T="$obj/tools/bin/blitz-events"

# turns FILE: each task's records in turn: queued (spawn or schedule),
# start, end, queued... (a start may come without its queueing: queued
# before the tool attached), each start naming the queueing before it
# (its seq).  A task's id is never reused.  Two records of a task made on different threads within 1 us of each
# other may be stamped in either order (rdtsc is not ordered with the
# memory accesses around it, and the CPUs' TSCs are in step only so far:
# docs/probes.md, "The event log"): such a pair counts as in turn if
# swapping it is.
turns() {
	"$PY" - "$1" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
step = {("end", "spawn"): "queued", ("end", "schedule"): "queued",
        ("end", "poll_start"): "start", ("queued", "poll_start"): "start",
        ("start", "poll_end"): "end"}
by = {}
for ns, pid, worker, event, task, arg, peer, tid, code, seq in r["records"]:
    if task:
        by.setdefault((pid, task), []).append((ns, (worker, tid), event, seq))
bad, swapped, misnumbered = [], 0, []
for task, recs in by.items():
    # A start takes the number of the queueing before it.
    queued = None
    for ns, who, event, seq in sorted(recs, key=lambda x: (x[3], x[2] == "poll_start")):
        if event in ("spawn", "schedule"):
            queued = seq
        elif event == "poll_start" and queued is not None and seq != queued:
            misnumbered.append((task, seq, queued))
    s, i = "end", 0
    while i < len(recs):
        n = step.get((s, recs[i][2]))
        if n is None and i + 1 < len(recs) and recs[i + 1][0] - recs[i][0] < 1000 \
                and recs[i + 1][1] != recs[i][1]:
            a = step.get((s, recs[i + 1][2]))
            b = a and step.get((a, recs[i][2]))
            if b:
                swapped, s, i = swapped + 1, b, i + 2
                continue
        if n is None:
            bad.append((recs[i], s, hex(task[1])))
            n = "end"
        s, i = n, i + 1
print("True" if not bad and not misnumbered else "%d out of turn, first %s; %d starts not "
      "numbered as their queueing, first %s" % (len(bad), bad[:3], len(misnumbered), misnumbered[:3]))
print("%d pairs within 1 us stamped the other way round" % swapped, file=sys.stderr)
PY
}
# replay FILE: the tool pairs each queueing with the poll that names it
# (task, seq) as their logs come, during the run; the same pairs from
# the whole run's records give the same histogram (ns from the records,
# each rounded on its own: a value within 2 ns of a bucket edge may fall
# on its other side, and only such values may).
replay() {
	"$PY" - "$1" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
queued, polls, slots, n, unpaired, edge = {}, [], {}, 0, 0, 0
slot = lambda v: 0 if v < 2 else v.bit_length() - 1
for ns, pid, worker, event, task, arg, peer, tid, code, seq in r["records"]:
    if event in ("spawn", "schedule"):
        queued[(pid, task, seq)] = ns
    elif event == "poll_start":
        polls.append(((pid, task, seq), ns))
for key, ns in polls:
    q = queued.pop(key, None)
    # A poll stamped before its queueing (unfenced rdtsc) is unpaired.
    if q is not None and ns >= q:
        v = ns - q
        slots[slot(v)] = slots.get(slot(v), 0) + 1
        edge += slot(max(v - 2, 0)) != slot(v + 2)
        n += 1
    else:
        unpaired += 1
h = [h for h in r["histograms"] if h["label"] == "schedule latency"][0]
tool = {i: b["count"] for i, b in enumerate(h["buckets"]) if b["count"]}
moved = sum(abs(slots.get(k, 0) - tool.get(k, 0)) for k in set(slots) | set(tool)) // 2
# Unpaired: only a poll stamped before its queueing (unfenced rdtsc), a few in 100,000.
print("same" if n == h["count"] and moved <= edge and unpaired == r["unpaired"]
      and unpaired * 1000 <= n else
      "the records pair %d (the tool %d), %d in another bucket (%d within 2 ns of an edge), "
      "%d unpaired (the tool %d)" % (n, h["count"], moved, edge, unpaired, r["unpaired"]))
PY
}

# check_records NAME: the two checks above on the run's records ($out).
check_records() {
	check "$1: -r, each task queued, started and ended in turn" "$(turns "$out")" True
	check "$1: schedule latency and unpaired polls during the run == from the sorted records" \
		"$(replay "$out")" same
}

# check_counts NAME: the run's totals ($out) against the runtime's statistics ($tmp/stats).
check_counts() {
	local name=$1 w
	check "$name: one object, unit ns, nothing lost (no lost span, no ring unread), unreadable or missed" \
		"$(jq_py "$out" '(len(r), r[0]["unit"], r[0]["lost"], r[0]["lost_spans"], r[0]["rings_missed"], r[0]["bad"], sum(w["flushes_missed"] + w["lost"] for w in r[0]["workers"]))')" \
		"(1, 'ns', 0, [], 0, 0, 0)"
	check "$name: the workers' poll starts == polled" "$(workers_sum poll_start)" "$(stat_total polled)"
	check "$name: poll ends == poll starts" "$(ev poll_end)" "$(ev poll_start)"
	check "$name: spawns == spawned (the workers' and the other threads')" \
		"$(ev spawn)" "$(stat_total spawned)"
	check "$name: polls that completed their task == spawned (each task ends once, on a worker or a joiner)" \
		"$(ev_ready)" "$(stat_total spawned)"
	for w in $(workers); do
		check "$name: worker $w poll starts == its polls" "$(wk $w poll_start)" "$(stat_worker $w polls)"
		check "$name: worker $w steals" "$(wk $w steal)" "$(stat_worker $w steals)"
		check "$name: worker $w tasks stolen" "$(wk $w stolen)" "$(stat_worker $w stolen)"
		check_after_stats "$name: worker $w parks" "$(wk $w park)" "$(stat_worker $w parks)"
		check "$name: worker $w unparks == parks (each sleep ends)" "$(wk $w unpark)" "$(wk $w park)"
	done
	check "$name: poll time, one per poll" \
		"$(jq_py "$out" '[h["count"] for h in r[0]["histograms"] if h["label"] == "poll time"][0]')" \
		"$(ev poll_start)"
	check "$name: every poll paired with its queueing or counted unpaired, none untrusted" \
		"$(jq_py "$out" '([h["count"] for h in r[0]["histograms"] if h["label"] == "schedule latency"][0] + r[0]["unpaired"], r[0]["untrusted"])')" \
		"($(ev poll_start), 0)"
	check "$name: nothing waits at the end (queueings, orphan polls)" \
		"$(jq_py "$out" '(r[0]["waiting"], r[0]["orphans"])')" "(0, 0)"
}

out="$tmp/events.out"
ev() { jq_py "$out" "r[0]['events']['$1']"; }
ev_ready() { jq_py "$out" "sum(w['ready'] for w in r[0]['workers'])"; }
wk() { jq_py "$out" "sum(w['$2'] for w in r[0]['workers'] if w['worker'] == $1)"; }
# The same over the workers (worker >= 0) or the other threads (-1).
workers_sum() { jq_py "$out" "sum(w['$1'] for w in r[0]['workers'] if w['worker'] >= 0)"; }
outside_sum() { jq_py "$out" "sum(w['$1'] for w in r[0]['workers'] if w['worker'] < 0)"; }

start_tool events -j -r
run_workload
stop_tool events
check_counts events
outside_spawns=$(outside_sum spawn)
if [ "$outside_spawns" -gt 0 ]; then
	ok "events: $outside_spawns spawns logged by threads that are not workers"
else
	bad "events: no spawn logged outside the workers (sched-bench's main thread spawns)"
fi
# The workers' logs come through their rings, the other threads' through event_flush.
check "events: logs from the workers' rings, and flushes of the other threads" \
	"$(jq_py "$out" '(r[0]["ring_logs"] > 0, r[0]["flushes"] > 0, r[0]["ring_logs"] + r[0]["flushes"] == r[0]["logs"])')" \
	"(True, True, True)"
check "events: -r, one record per event" \
	"$(jq_py "$out" 'len(r[0]["records"])')" "$(jq_py "$out" 'sum(r[0]["events"].values())')"
check "events: -r, in time order" \
	"$(jq_py "$out" 'all(a[0] <= b[0] for a, b in zip(r[0]["records"], r[0]["records"][1:]))')" True
check_records events

# -w: the logs into a file, nothing analysed; --read analyses it with
# the same output, which counts what a live run counts.
start_tool events -w "$tmp/events.trace" -j
run_workload
stop_tool events
cp "$tmp/events.out" "$tmp/write.out"
check "events -w: the logs written, nothing lost" \
	"$(jq_py "$tmp/write.out" '(r[0]["written"]["logs"] > 0, r[0]["written"]["records"] > 0, r[0]["lost"], r[0]["lost_spans"])')" \
	"(True, True, 0, [])"
"$T" --read "$tmp/events.trace" -j -r > "$tmp/events.out" 2> "$tmp/read.err" ||
	bad "events --read failed: $(cat "$tmp/read.err")"
check "events --read: as many logs and records as -w wrote" \
	"$(jq_py "$out" '(r[0]["logs"], sum(r[0]["events"].values()))')" \
	"$(jq_py "$tmp/write.out" '(r[0]["written"]["logs"], r[0]["written"]["records"])')"
check_counts "events -w, --read"
check_records "events -w, --read"
# -w packs the records (tools-trace-file.sh tests the encoding's edges):
# unpacked (--raw) they read the same, from a file several times larger.
"$T" --read "$tmp/events.trace" --raw -w "$tmp/events.raw" > /dev/null 2> "$tmp/read.err" ||
	bad "events --read --raw -w failed: $(cat "$tmp/read.err")"
"$T" --read "$tmp/events.raw" -j -r > "$tmp/raw.out" 2> "$tmp/read.err" ||
	bad "events --read of the raw file failed: $(cat "$tmp/read.err")"
check "events -w, --raw: the same analysis and records from the raw file (but the time printed)" \
	"$("$PY" -c 'import json, sys; a, b = ({k: v for k, v in json.load(open(p)).items() if k != "ts"} for p in sys.argv[1:]); print(a == b)' \
		"$tmp/events.out" "$tmp/raw.out")" True
check "events -w: packed, a third of the raw file's size at most" \
	"$("$PY" -c 'import os, sys; print(3 * os.path.getsize(sys.argv[1]) < os.path.getsize(sys.argv[2]))' \
		"$tmp/events.trace" "$tmp/events.raw")" True

# A thread that is not a worker logs its own records and flushes them
# when it waits: outside-queue's main thread spawns 5 tasks 300 ms apart
# without waiting, so its records come long after the workers' logs with
# the polls, which wait for them ("late": a queueing that came after its
# poll); then it joins them.  It links the library statically:
# the tool attaches to it (the last -b is the one taken).
start_tool events -j -r -b "$obj/tests/outside-queue"
outside_queue=(5 300)
timeout 300 "$obj/tests/outside-queue" "${outside_queue[@]}" ||
	bad "outside-queue ${outside_queue[*]} failed"
stop_tool events
check "events, outside-queue: its thread's spawns, the workers' polls, all ended" \
	"$(jq_py "$out" '(sum(w["spawn"] for w in r[0]["workers"] if w["worker"] < 0), sum(w["poll_start"] for w in r[0]["workers"] if w["worker"] >= 0), sum(w["ready"] for w in r[0]["workers"]))')" \
	"(5, 5, 5)"
check "events, outside-queue: every poll paired, nothing left waiting" \
	"$(jq_py "$out" '([h["count"] for h in r[0]["histograms"] if h["label"] == "schedule latency"][0], r[0]["unpaired"], r[0]["waiting"], r[0]["orphans"])')" \
	"(5, 0, 0, 0)"
late=$(jq_py "$out" 'r[0]["late"]')
if [ "$late" -gt 0 ]; then
	ok "events, outside-queue: $late queueings of the thread's log came after their polls"
else
	bad "events, outside-queue: no queueing came after its poll (late $late): the test missed its case"
fi
check_records "events, outside-queue"

# A tracer does not get the records of a window that closed before it
# came: with one worker, outside-queue -s spawns task 1 while a tool
# listens (its spawn record stays in the thread's log: the thread sleeps,
# not a blitz wait), the tool goes, task 2 runs with nobody listening (the
# worker's tick sees the window closed), a second tool comes and task 3
# is spawned: the second tool logs task 3's spawn and poll, and not task
# 1's spawn (it once did: a spawn it counted as never polled).
mkfifo "$tmp/steps.in" "$tmp/steps.out"
BLITZ_WORKERS=1 timeout 300 "$obj/tests/outside-queue" -s < "$tmp/steps.in" > "$tmp/steps.out" &
steps_pid=$!
# Read-write opens, which do not wait for the other end: a program that
# failed to start makes the steps fail (read -t), not the script hang.
exec 7<> "$tmp/steps.in" 8<> "$tmp/steps.out"
# step K: one more task spawned and run.
step() {
	local line=
	echo >&7
	read -r -t 300 -u 8 line || true
	[ "$line" = "ran $1" ] || bad "outside-queue -s: step $1 read '$line'"
}
# The tools must not hold the pipe's write end open (EOF ends the steps).
start_tool events -j -b "$obj/tests/outside-queue" 7>&- 8<&-
step 1
stop_tool events
step 2
start_tool events -j -b "$obj/tests/outside-queue" 7>&- 8<&-
step 3
exec 7>&-
wait "$steps_pid" || bad "outside-queue -s failed"
exec 8<&-
stop_tool events
check "events, a tool after another: the thread's spawns, the worker's polls, never polled" \
	"$(jq_py "$tmp/events.out" '(sum(w["spawn"] for w in r[0]["workers"] if w["worker"] < 0), sum(w["poll_start"] for w in r[0]["workers"] if w["worker"] >= 0), r[0]["never_polled"])')" \
	"(1, 1, 0)"

# A reader that missed its ring's announcement: with bpftrace holding
# event_ring's semaphore (it reads no ring), the one worker opens its
# window on the ring as it runs task 1 and announces it to bpftrace alone;
# task 2 then holds the worker in its poll, so that it ticks (and
# announces) no more; blitz-events comes, and the program exits with the
# runtime running.  The exiting thread, waiting for the unclaimed ring's
# reader, announces it again: the tool gets both polls' starts.  It once
# got none: nothing announced the ring at the exit.
if command -v bpftrace > /dev/null; then
	: > "$tmp/ring.bt.out"
	bpftrace -e 'usdt:'"$obj/tests/outside-queue"':blitz:event_ring { @announced = count(); }
		BEGIN { printf("Hit Ctrl-C\n"); }' > "$tmp/ring.bt.out" 2>&1 &
	twin_pid[ring]=$!
	wait_twin ring
	rm -f "$tmp/steps.in" "$tmp/steps.out"
	mkfifo "$tmp/steps.in" "$tmp/steps.out"
	# Out with the runtime running: what it holds is not a leak.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" BLITZ_WORKERS=1 timeout 300 \
		"$obj/tests/outside-queue" -s < "$tmp/steps.in" > "$tmp/steps.out" &
	steps_pid=$!
	exec 7<> "$tmp/steps.in" 8<> "$tmp/steps.out"
	step 1
	echo b >&7
	read -r -t 300 -u 8 line || true
	[ "$line" = "ran 2" ] || bad "outside-queue -s: the blocking step read '$line'"
	start_tool events -j -b "$obj/tests/outside-queue" 7>&- 8<&-
	exec 7>&-
	wait "$steps_pid" || bad "outside-queue -s failed"
	exec 8<&-
	stop_tool events
	stop_twins
	check "events, a ring whose reader missed its announcement: the worker's poll starts, rings missed" \
		"$(jq_py "$tmp/events.out" '(sum(w["poll_start"] for w in r[0]["workers"] if w["worker"] >= 0), r[0]["rings_missed"], r[0]["ring_logs"] > 0)')" \
		"(2, 0, True)"
else
	echo "skip events: a ring whose reader missed its announcement (no bpftrace)"
fi

# burst_wake: the program's thread spawns bursts that one worker on the
# same CPU runs as they come, and each task's block is reused by a spawn
# of the same burst: the thread's records often come after the polls of
# several tasks at one address, which their ids tell apart.
start_tool events -j -r
timeout 300 taskset -c 0 "$bench" --workers 1 --bench burst_wake --iters 400 --warmup 0 \
	> /dev/null 2> "$tmp/stats" || bad "sched-bench burst_wake failed: $(cat "$tmp/stats")"
stop_tool events
check "events, burst_wake pinned: as many polls as spawns, nothing left waiting" \
	"$(jq_py "$out" '(r[0]["events"]["poll_start"] == r[0]["events"]["spawn"] > 0, r[0]["waiting"], r[0]["orphans"])')" \
	"(True, 0, 0)"
ok "events, burst_wake pinned: $(jq_py "$out" 'r[0]["late"]') queueings came after their polls"
check_records "events, burst_wake pinned"

# In text, -r streams the records as they settle, the counts after them.
start_tool events -r -b "$obj/tests/outside-queue"
timeout 300 "$obj/tests/outside-queue" 3 200 || bad "outside-queue 3 200 failed"
# Before the tool is stopped: its process gone, every record has settled.
streamed=0
for _ in $(seq 300); do
	streamed=$(grep -c ' poll_end ' "$tmp/events.out" || true)
	[ "$streamed" -ge 3 ] && break
	sleep 0.1
done
check "events, text -r: the 3 polls' ends printed before the tool is stopped" "$streamed" 3
stop_tool events
text=$("$PY" - "$tmp/events.out" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1]) if l.strip()]
head = [i for i, l in enumerate(lines) if l[:2] == ["NS", "PID"]]
table = [i for i, l in enumerate(lines) if l[:2] == ["PID", "WORKER"]]
# NS PID WORKER TID EVENT TASK CODE ARG PEER SEQ
recs = [l for l in lines if len(l) == 10 and l[0].lstrip("-").isdigit() and l[4] in
        ("spawn", "schedule", "poll_start", "poll_end", "steal", "park", "unpark")]
# PID WORKER SPAWN SCHEDULE POLL_START READY STEAL STOLEN PARK UNPARK MISSED LOST
rows = [l for l in lines[table[0] + 1:] if len(l) == 12 and l[0].isdigit()] if table else []
# SPAWN SCHEDULE POLL_START (and as many ends) STEAL PARK UNPARK
events = sum(int(r[2]) + int(r[3]) + 2 * int(r[4]) + int(r[6]) + int(r[8]) + int(r[9]) for r in rows)
print("True" if head and table and head[0] < table[0] and len(recs) == events > 0 else
      "header %s, counts %s, %d record lines, %d events counted" % (head, table, len(recs), events))
PY
)
check "events, text -r: the records first (streamed), one line per event counted" "$text" True

# The blocking pool's threads wake the tasks waiting for their jobs, from their own logs.
start_tool events -j -r
run_blocking
stop_tool events
check "events, blocking-bench: nothing lost, unreadable or missed; nothing left waiting" \
	"$(jq_py "$out" '(r[0]["lost"], r[0]["lost_spans"], r[0]["bad"], sum(w["flushes_missed"] for w in r[0]["workers"]), r[0]["waiting"], r[0]["orphans"])')" \
	"(0, [], 0, 0, 0, 0)"
woken=$(outside_sum schedule)
if [ "$woken" -gt 0 ]; then
	ok "events, blocking-bench: $woken tasks woken by the pool's threads, logged"
else
	bad "events, blocking-bench: no schedule logged outside the workers"
fi
check_records "events, blocking-bench"

# Sampled: one task in 8 logged whole, the same tasks the per-event probes fire for.
start_tool events -j
start_tool polltime --per-event -j
run_workload BLITZ_TRACE_SAMPLE=8
stop_tool events
stop_tool polltime
polled=$(stat_total polled) sampled=$(ev poll_start)
check "events, BLITZ_TRACE_SAMPLE=8: poll starts == polltime --per-event's polls on the same run" \
	"$sampled" "$(jq_py "$tmp/polltime.out" 'sum(h["count"] for h in r[0]["histograms"])')"
if [ "$sampled" -gt 0 ] && [ "$sampled" -lt "$polled" ]; then
	ok "events, BLITZ_TRACE_SAMPLE=8: $sampled of the $polled polls logged"
else
	bad "events, BLITZ_TRACE_SAMPLE=8: $sampled of the $polled polls logged"
fi
check "events, BLITZ_TRACE_SAMPLE=8: steals are worker events, all logged" \
	"$(jq_py "$out" 'sum(w["steal"] for w in r[0]["workers"])')" "$(stat_sum steals)"
# A reader that stops loses records, counted exactly and placed: with
# --discard (a full ring drops at once) the tool is stopped (SIGSTOP)
# once it has mapped a ring, for 300 ms of a run of yield_many, whose
# rings are the smallest (BLITZ_EVENT_RING_KB=64: some 2,000 records,
# filled within the stop even on a slow or sanitized build).  What it
# took plus what it counted lost is every record the run made (3 per
# poll: its queueing, start and end; a steal; a park and its unpark; not
# the workers' waits for the tool, reader_wait, a record of their own), the
# lost spans add up to the loss, and no poll is paired across a span: each
# is paired, unpaired, or untrusted.
start_tool events -j --discard
lossy=(--bench yield_many --iters 20 --warmup 0)
BLITZ_EVENT_RING_KB=64 timeout 300 "$bench" "${lossy[@]}" --stats > /dev/null 2> "$tmp/stats" &
lossy_pid=$!
for _ in $(seq 500); do
	grep -q 'memfd:blitz-events' "/proc/${tool_pid[events]}/maps" 2>/dev/null && break
	sleep 0.01
done
kill -STOP "${tool_pid[events]}"
sleep 0.3
kill -CONT "${tool_pid[events]}"
wait "$lossy_pid" || bad "sched-bench ${lossy[*]} failed: $(cat "$tmp/stats")"
stop_tool events
lost=$(jq_py "$out" 'r[0]["lost"]')
if [ "$lost" -gt 0 ]; then
	ok "events, a stopped reader: $lost records lost in $(jq_py "$out" 'len(r[0]["lost_spans"])') spans"
else
	bad "events, a stopped reader: nothing lost (lost $lost): the test missed its case"
fi
check "events, a stopped reader: the lost spans add up to the loss, each a span of a worker" \
	"$(jq_py "$out" '(sum(s["records"] for s in r[0]["lost_spans"]), all(s["from_ns"] <= s["to_ns"] and s["worker"] >= 0 for s in r[0]["lost_spans"]))')" \
	"($lost, True)"
check "events, a stopped reader: records taken + lost == 3 x polled + steals + 2 x parks" \
	"$(jq_py "$out" "sum(r[0]['events'].values()) - r[0]['events']['reader_wait'] + r[0]['lost'] - (3 * $(stat_total polled) + $(stat_sum steals) + 2 * $(stat_sum parks)) in range(0, 8 * $(grep -c '^  worker ' "$tmp/stats") + 1)")" \
	True
check "events, a stopped reader: every poll start paired, unpaired or untrusted; nothing waits" \
	"$(jq_py "$out" '([h["count"] for h in r[0]["histograms"] if h["label"] == "schedule latency"][0] + r[0]["unpaired"] + r[0]["untrusted_polls"] == r[0]["events"]["poll_start"], r[0]["waiting"], r[0]["orphans"])')" \
	"(True, 0, 0)"

# The flight recorder (BLITZ_FLIGHT): the rings of a process no tool
# traces, read from outside while it runs (--dump), hold what its own
# dump holds (BLITZ_FLIGHT_SIGNAL: blitz-flight.PID, which --read reads):
# outside-queue -s with one worker runs 3 tasks, then both dumps are
# taken and the process goes on.
mkfifo "$tmp/flight.in" "$tmp/flight.out"
(cd "$tmp" && BLITZ_WORKERS=1 BLITZ_FLIGHT=16384 BLITZ_FLIGHT_SIGNAL=USR1 \
	exec timeout 300 "$obj/tests/outside-queue" -s < "$tmp/flight.in" > "$tmp/flight.out") &
flight_pid=$!
exec 7<> "$tmp/flight.in" 8<> "$tmp/flight.out"
for k in 1 2 3; do
	echo >&7
	read -r -t 300 -u 8 line || true
	[ "$line" = "ran $k" ] || bad "outside-queue -s, BLITZ_FLIGHT: step $k read '$line'"
done
# The subshell became timeout: its child is the program.
flight=$(pgrep -P "$flight_pid" -x outside-queue || true)
[ -n "$flight" ] || bad "outside-queue -s, BLITZ_FLIGHT: no process under $flight_pid"
"$T" --dump "$flight" -j > "$tmp/dump.out" 2> "$tmp/dump.err" || bad "--dump failed: $(cat "$tmp/dump.err")"
"$T" --dump "$flight" -w "$tmp/dump.trace" > /dev/null 2>> "$tmp/dump.err" ||
	bad "--dump -w failed: $(cat "$tmp/dump.err")"
kill -USR1 "$flight"
for _ in $(seq 300); do [ -s "$tmp/blitz-flight.$flight" ] && break; sleep 0.1; done
"$T" --read "$tmp/dump.trace" -j > "$tmp/dump-w.out" 2>> "$tmp/dump.err" || bad "--read of --dump -w failed"
"$T" --read "$tmp/blitz-flight.$flight" -j > "$tmp/dump-own.out" 2>> "$tmp/dump.err" ||
	bad "--read of blitz-flight.$flight failed: $(cat "$tmp/dump.err")"
exec 7>&-
wait "$flight_pid" || bad "outside-queue -s, BLITZ_FLIGHT failed"
exec 8<&-
polls() { jq_py "$1" '(r[0]["events"]["poll_start"], r[0]["events"]["poll_end"], sum(w["ready"] for w in r[0]["workers"]), r[0]["lost"])'; }
check "events --dump: the worker's 3 polls, each ended, nothing lost" "$(polls "$tmp/dump.out")" "(3, 3, 3, 0)"
check "events --dump -w, --read: the same" "$(polls "$tmp/dump-w.out")" "(3, 3, 3, 0)"
check "events --read of the process's own dump (BLITZ_FLIGHT_SIGNAL): the same" \
	"$(polls "$tmp/dump-own.out")" "(3, 3, 3, 0)"

expect_error "events --dump, no such process" "^blitz-events: no such process: 999999999$" \
	"$T" --dump 999999999
expect_error "events --dump, a process without rings" "has no event rings" "$T" --dump $$
expect_error "events --read, no such file" "No such file" "$T" --read "$tmp/nothing.trace"
expect_error "events --read, not a trace" "not a blitz-events trace (bad magic)$" \
	"$T" --read "$src/tools/README.md"
"$PY" -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[8] = 3; open(sys.argv[2], "wb").write(d)' \
	"$tmp/dump.trace" "$tmp/v3.trace"
expect_error "events --read, another layout's version" "a trace of layout version 3 (this tool reads 2)$" \
	"$T" --read "$tmp/v3.trace"
finish
