#!/usr/bin/env bash
# tools-events.sh - blitz-events (the event log: a probe hit per flush of
# up to 512 records) on a known workload: its records count what the
# runtime's statistics count, exactly (polls, steals and stolen tasks,
# parks), nothing is lost, every poll's start pairs with its end, the
# records come out in time order with each task's queued/start/end in
# turn (-r), and a sampled run (BLITZ_TRACE_SAMPLE) logs the same tasks a
# per-event tool sees.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init

start_tool events -j -r
run_workload
stop_tool events
out="$tmp/events.out"
ev() { jq_py "$out" "r[0]['events']['$1']"; }
wk() { jq_py "$out" "sum(w['$2'] for w in r[0]['workers'] if w['worker'] == $1)"; }

check "events: one object, unit ns, no flush lost, unreadable or missed" \
	"$(jq_py "$out" '(len(r), r[0]["unit"], r[0]["lost"], r[0]["bad"], sum(w["flushes_missed"] for w in r[0]["workers"]))')" \
	"(1, 'ns', 0, 0, 0)"
check "events: poll starts == polled" "$(ev poll_start)" "$(stat_total polled)"
check "events: poll ends == poll starts" "$(ev poll_end)" "$(ev poll_start)"
for w in $(workers); do
	check "events: worker $w poll starts == its polls" "$(wk $w poll_start)" "$(stat_worker $w polls)"
	check "events: worker $w steals" "$(wk $w steal)" "$(stat_worker $w steals)"
	check "events: worker $w tasks stolen" "$(wk $w stolen)" "$(stat_worker $w stolen)"
	check_after_stats "events: worker $w parks" "$(wk $w park)" "$(stat_worker $w parks)"
	check "events: worker $w unparks == parks (each sleep ends)" "$(wk $w unpark)" "$(wk $w park)"
done
check "events: poll time, one per poll" \
	"$(jq_py "$out" '[h["count"] for h in r[0]["histograms"] if h["label"] == "poll time"][0]')" \
	"$(stat_total polled)"
check "events: every poll paired with its queueing or counted unpaired" \
	"$(jq_py "$out" '[h["count"] for h in r[0]["histograms"] if h["label"] == "schedule latency"][0] + r[0]["unpaired"]')" \
	"$(stat_total polled)"
spawned=$(stat_total spawned) logged=$(ev spawn)
if [ "$logged" -gt 0 ] && [ "$logged" -le "$spawned" ]; then
	ok "events: the workers' spawns, $logged, are some of the $spawned spawned"
else
	bad "events: $logged spawns logged, $spawned spawned"
fi
check "events: -r, one record per event" \
	"$(jq_py "$out" 'len(r[0]["records"])')" "$(jq_py "$out" 'sum(r[0]["events"].values())')"
check "events: -r, in time order" \
	"$(jq_py "$out" 'all(a[0] <= b[0] for a, b in zip(r[0]["records"], r[0]["records"][1:]))')" True
# Each task's records in turn: queued (spawn or schedule), start, end,
# queued... (a start may come without its queueing: queued outside the
# workers).  Task blocks are reused, so an address may be spawned again
# after its end (or after a queueing whose task was dropped unpolled).
# Two records of a task made on different workers within 1 us of each
# other may be stamped in either order (rdtsc is not ordered with the
# memory accesses around it, and the CPUs' TSCs are in step only so far:
# docs/probes.md, "The event log"): such a pair counts as in turn if
# swapping it is.
turns=$("$PY" - "$out" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
step = {("end", "spawn"): "queued", ("end", "schedule"): "queued",
        ("end", "poll_start"): "start", ("queued", "poll_start"): "start",
        ("start", "poll_end"): "end", ("queued", "spawn"): "queued"}
by = {}
for ns, pid, worker, event, task, arg, peer in r["records"]:
    if task:
        by.setdefault((pid, task), []).append((ns, worker, event))
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
)
check "events: -r, each task queued, started and ended in turn" "$turns" True
# The tool pairs queueings with polls as the workers' flushes settle them,
# during the run; the same pairs from the whole run's records, sorted
# once, give the same histogram (ns from the records: a bucket edge may
# round the other way, one value in a thousand at most).
replay=$("$PY" - "$out" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
last, slots, n = {}, {}, 0
for ns, pid, worker, event, task, arg, peer in r["records"]:
    if event in ("spawn", "schedule"):
        last[(pid, task)] = ns
    elif event == "poll_start":
        q = last.pop((pid, task), None)
        if q is not None:
            v = ns - q
            s = 0 if v < 2 else v.bit_length() - 1
            slots[s] = slots.get(s, 0) + 1
            n += 1
h = [h for h in r["histograms"] if h["label"] == "schedule latency"][0]
tool = {i: b["count"] for i, b in enumerate(h["buckets"]) if b["count"]}
moved = sum(abs(slots.get(k, 0) - tool.get(k, 0)) for k in set(slots) | set(tool)) // 2
print("same" if n == h["count"] and moved * 1000 <= n else
      "the records pair %d (the tool %d), %d in another bucket" % (n, h["count"], moved))
PY
)
check "events: schedule latency paired during the run == paired from the sorted records" "$replay" same

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
