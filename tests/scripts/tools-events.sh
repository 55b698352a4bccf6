#!/usr/bin/env bash
# tools-events.sh - blitz-events (the event log: a probe hit per flush of
# up to 512 records) on a known workload: its records count what the
# runtime's statistics count, exactly (spawns, polls, steals and stolen
# tasks, parks), nothing is lost, every poll's start pairs with its end,
# every poll with its queueing (the threads that are not workers log
# theirs: sched-bench's main thread spawns and joins), the records come
# out in time order with each task's queued/start/end in turn (-r), and a
# sampled run (BLITZ_TRACE_SAMPLE) logs the same tasks a per-event tool
# sees.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

# turns FILE: each task's records in turn: queued (spawn or schedule),
# start, end, queued... (a start may come without its queueing: queued
# before the tool attached).  Task blocks are reused, so an address may
# be spawned again after its end (or after a queueing whose task was
# dropped unpolled).  Two records of a task made on different threads within 1 us of each
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
        ("start", "poll_end"): "end", ("queued", "spawn"): "queued"}
by = {}
for ns, pid, worker, event, task, arg, peer, tid in r["records"]:
    if task:
        by.setdefault((pid, task), []).append((ns, (worker, tid), event))
bad, swapped = [], 0
for task, recs in by.items():
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
print("True" if not bad else "%d out of turn, first %s" % (len(bad), bad[:3]))
print("%d pairs within 1 us stamped the other way round" % swapped, file=sys.stderr)
PY
}
# replay FILE: the tool pairs queueings with polls as the logs' flushes
# settle them, during the run; the same pairs from the whole run's
# records, sorted once, give the same histogram (ns from the records,
# each rounded on its own: a value within 2 ns of a bucket edge may fall
# on its other side, and only such values may).
replay() {
	"$PY" - "$1" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
last, slots, n, unpaired, edge = {}, {}, 0, 0, 0
slot = lambda v: 0 if v < 2 else v.bit_length() - 1
for ns, pid, worker, event, task, arg, peer, tid in r["records"]:
    if event in ("spawn", "schedule"):
        last[(pid, task)] = ns
    elif event == "poll_start":
        q = last.pop((pid, task), None)
        if q is not None:
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

start_tool events -j -r
run_workload
stop_tool events
out="$tmp/events.out"
ev() { jq_py "$out" "r[0]['events']['$1']"; }
ev_ready() { jq_py "$out" "sum(w['ready'] for w in r[0]['workers'])"; }
wk() { jq_py "$out" "sum(w['$2'] for w in r[0]['workers'] if w['worker'] == $1)"; }
# The same over the workers (worker >= 0) or the other threads (-1).
workers_sum() { jq_py "$out" "sum(w['$1'] for w in r[0]['workers'] if w['worker'] >= 0)"; }
outside_sum() { jq_py "$out" "sum(w['$1'] for w in r[0]['workers'] if w['worker'] < 0)"; }

check "events: one object, unit ns, no flush lost, unreadable or missed" \
	"$(jq_py "$out" '(len(r), r[0]["unit"], r[0]["lost"], r[0]["bad"], sum(w["flushes_missed"] for w in r[0]["workers"]))')" \
	"(1, 'ns', 0, 0, 0)"
check "events: the workers' poll starts == polled" "$(workers_sum poll_start)" "$(stat_total polled)"
check "events: poll ends == poll starts" "$(ev poll_end)" "$(ev poll_start)"
check "events: spawns == spawned (the workers' and the other threads')" \
	"$(ev spawn)" "$(stat_total spawned)"
outside_spawns=$(outside_sum spawn)
if [ "$outside_spawns" -gt 0 ]; then
	ok "events: $outside_spawns spawns logged by threads that are not workers"
else
	bad "events: no spawn logged outside the workers (sched-bench's main thread spawns)"
fi
check "events: polls that completed their task == spawned (each task ends once, on a worker or a joiner)" \
	"$(ev_ready)" "$(stat_total spawned)"
for w in $(workers); do
	check "events: worker $w poll starts == its polls" "$(wk $w poll_start)" "$(stat_worker $w polls)"
	check "events: worker $w steals" "$(wk $w steal)" "$(stat_worker $w steals)"
	check "events: worker $w tasks stolen" "$(wk $w stolen)" "$(stat_worker $w stolen)"
	check_after_stats "events: worker $w parks" "$(wk $w park)" "$(stat_worker $w parks)"
	check "events: worker $w unparks == parks (each sleep ends)" "$(wk $w unpark)" "$(wk $w park)"
done
check "events: poll time, one per poll" \
	"$(jq_py "$out" '[h["count"] for h in r[0]["histograms"] if h["label"] == "poll time"][0]')" \
	"$(ev poll_start)"
check "events: every poll paired with its queueing or counted unpaired" \
	"$(jq_py "$out" '[h["count"] for h in r[0]["histograms"] if h["label"] == "schedule latency"][0] + r[0]["unpaired"]')" \
	"$(ev poll_start)"
check "events: nothing waits at the end (queueings, orphan polls)" \
	"$(jq_py "$out" '(r[0]["waiting"], r[0]["orphans"])')" "(0, 0)"
check "events: -r, one record per event" \
	"$(jq_py "$out" 'len(r[0]["records"])')" "$(jq_py "$out" 'sum(r[0]["events"].values())')"
check "events: -r, in time order" \
	"$(jq_py "$out" 'all(a[0] <= b[0] for a, b in zip(r[0]["records"], r[0]["records"][1:]))')" True
check_records events

# A thread that is not a worker logs its own records and flushes them
# when it waits: outside-queue's main thread spawns 5 tasks 300 ms apart
# without waiting, so its records come long after the workers' flushes
# have settled past them ("late": paired behind the merge, with the polls
# held as orphans); then it joins them.  It links the library statically:
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
	ok "events, outside-queue: $late records of the thread's log paired behind the merge"
else
	bad "events, outside-queue: no record paired behind the merge (late $late): the test missed its case"
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

# burst_wake: the program's thread spawns bursts that one worker on the
# same CPU runs as they come, and each task's block is reused by a spawn
# of the same burst: the thread's records often come after the polls of
# several tasks at one address (the orphans are a list per address).
start_tool events -j -r
timeout 300 taskset -c 0 "$bench" --workers 1 --bench burst_wake --iters 400 --warmup 0 \
	> /dev/null 2> "$tmp/stats" || bad "sched-bench burst_wake failed: $(cat "$tmp/stats")"
stop_tool events
check "events, burst_wake pinned: as many polls as spawns, nothing left waiting" \
	"$(jq_py "$out" '(r[0]["events"]["poll_start"] == r[0]["events"]["spawn"] > 0, r[0]["waiting"], r[0]["orphans"])')" \
	"(True, 0, 0)"
ok "events, burst_wake pinned: $(jq_py "$out" 'r[0]["late"]') records of the thread's log paired behind the merge"
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
recs = [l for l in lines if len(l) == 8 and l[0].lstrip("-").isdigit() and l[4] in
        ("spawn", "schedule", "poll_start", "poll_end", "steal", "park", "unpark")]
rows = [l for l in lines[table[0] + 1:] if len(l) == 11 and l[0].isdigit()] if table else []
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
check "events, blocking-bench: no flush lost, unreadable or missed; nothing left waiting" \
	"$(jq_py "$out" '(r[0]["lost"], r[0]["bad"], sum(w["flushes_missed"] for w in r[0]["workers"]), r[0]["waiting"], r[0]["orphans"])')" \
	"(0, 0, 0, 0, 0)"
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
finish
