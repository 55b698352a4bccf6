#!/usr/bin/env bash
# experiments-observer-effect.sh - experiments/observer-effect in quick
# mode: every tool and mode against untraced: every cell's slowdown, hits
# and distance, the event log's cells, the control, the reference and its
# 2% check, the uprobe paths and the LTTng-UST anchor.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

run_quick observer-effect oe
need "$tmp/oe/summary.md" "observer-effect summary"
if [ -e "$tmp/oe/hist/NOT-COLLECTED" ]; then
	echo "ok   observer-effect not measured, and it says why: $(cat "$tmp/oe/summary.md")"
else
	need "$tmp/oe/raw/runs.jsonl" "observer-effect raw runs"
	need "$tmp/oe/observer-effect.json" "observer-effect figures (JSON)"
	need "$tmp/oe/plots/observer-effect.png" "observer-effect plot"
	head -c 8 "$tmp/oe/plots/observer-effect.png" | od -An -tx1 | grep -q '89 50 4e 47' ||
		{ echo "FAIL observer-effect.png is not a PNG"; fail=1; }
	# Every tool per-event on every workload, a positive slowdown for every
	# cell, a traced run for each untraced one, and the per-event hits of
	# polltime at least one poll per operation the benchmark reports.
	# The anchor is measured where its tools are (scripts/install-deps installs them).
	LTTNG_THERE=
	if command -v lttng > /dev/null && command -v lttng-sessiond > /dev/null &&
	   command -v babeltrace2 > /dev/null && pkg-config --exists lttng-ust 2> /dev/null; then
		LTTNG_THERE=1
	else
		echo "skip observer-effect: the LTTng-UST anchor (lttng-tools, babeltrace2, liblttng-ust-dev not installed)"
	fi
	LTTNG_THERE=$LTTNG_THERE python3 - "$tmp/oe" "$("$obj/bin/sched-bench" --list | tr '\n' ' ')" <<'PY' && echo "ok   observer-effect: every cell's slowdown, hits and distance" || fail=1
import json, os, sys
out, known = sys.argv[1], sys.argv[2].split()
fig = json.load(open(os.path.join(out, "observer-effect.json")))
runs = [json.loads(l) for l in open(os.path.join(out, "raw", "runs.jsonl"))]
modes = [json.loads(l) for l in open(os.path.join(out, "raw", "modes.jsonl"))]
meta = json.load(open(os.path.join(out, "meta.json")))
cells = {(c["tool"], c["mode"], c["workload"]): c for c in fig["cells"]}
workloads = fig["workloads"]
benches = [w for w in workloads if w != "echo"]
assert "echo" in workloads and benches and set(benches) <= set(known), workloads
for t in ("polltime", "schedlat", "park", "steal", "ewma", "all"):
    for w in workloads:
        assert (t, "per-event", w) in cells, (t, w)
for w in workloads:     # the control: nothing attached to either run
    assert cells[("none", "control", w)]["hits_per_run"] is None, w
for m in modes:
    ran = any(k[:2] == (m["tool"], m["mode"]) for k in cells)
    assert ran == (not m["skipped"]), m
    if m["mode"] == "summary" and m["skipped"]:
        assert m["skipped"].startswith("not available in this build"), m
for c in cells.values():
    for k in ("slowdown", "cpu_slowdown", "pairs", "hits_per_run", "cost_per_hit_ns",
              "cpu_per_hit_ns", "emd_buckets", "p50_shift", "p99_shift", "distance_from"):
        assert k in c, (k, c)
    assert c["slowdown"] > 0 and c["cpu_slowdown"] > 0 and c["pairs"] >= 1, c
assert sum(r["traced"] for r in runs) == sum(not r["traced"] for r in runs) == \
    sum(c["pairs"] for c in cells.values()), "unpaired runs"
ops = {r["bench"]: r["ops"] for r in runs if r["workload"] in benches}
per_run = int(meta["iters"]) + int(meta["warmup"])
for b in benches:
    hits = cells[("polltime", "per-event", b)]["hits_per_run"]
    assert hits >= ops[b] * per_run, (b, hits, ops[b])
# The event log: blitz-events for polltime, schedlat and all, not for the
# tools whose histograms it does not make; every poll recorded, none lost.
for w in workloads:
    for t in ("polltime", "schedlat", "all"):
        assert (t, "log", w) in cells, (t, w)
    assert ("park", "log", w) not in cells, w
for b in benches:
    rec = json.loads(open(os.path.join(out, "hist", "polltime-log", b + ".p1.polltime.json")).readline())
    n = sum(x["count"] for h in rec["histograms"] for x in h["buckets"])
    assert n >= ops[b] * per_run and rec["dropped"] == 0 and rec["probe_hits"] > 0, (b, n, rec)
no_summary = all(m["skipped"] for m in modes if m["mode"] == "summary")
assert fig["reference"]["missing"] == no_summary, fig["reference"]
# Every tool's histogram inside the "all" cell, against the tool alone.
assert {(d["tool"], d["workload"]) for d in fig["with_all_tools"] if d["mode"] == "per-event"} >= \
    {("polltime", w) for w in workloads}, fig["with_all_tools"]
# The uprobe paths, where bpftrace could count them, and the LTTng-UST
# anchor where lttng is installed: every call a hit (none lost).
nops = fig["uprobe_paths"]
want = ({"nop1", "nop5"} if nops.keys() & {"nop1", "nop5"} else set()) | \
    ({"lttng"} if os.environ.get("LTTNG_THERE") else set())
assert set(nops) == want and all(
    n["hits_counted"] and n["traced_ns_per_call"] > 0 for n in nops.values()), (want, nops, fig["lttng_anchor"])
# The run says whether it measured the anchor, and why not where it did not.
assert (fig["lttng_anchor"] == "measured") == bool(os.environ.get("LTTNG_THERE")) and fig["lttng_anchor"], \
    fig["lttng_anchor"]
PY
	if grep -q '"missing": true' "$tmp/oe/observer-effect.json"; then
		grep -q 'The reference is missing' "$tmp/oe/summary.md" &&
			echo "ok   observer-effect: says the reference is missing (no summary mode)" ||
			{ echo "FAIL observer-effect: the summary does not say the reference is missing"; fail=1; }
	else
		grep -q '^## Reference' "$tmp/oe/summary.md" && grep -q ' yes \| NO ' "$tmp/oe/summary.md" &&
			echo "ok   observer-effect: the reference and its 2% check" ||
			{ echo "FAIL observer-effect: no reference table"; fail=1; }
	fi
fi
# log-cost: the event log's cost beside untraced runs, one round of one
# benchmark: its row, its records per operation counted from the trace
# file's logs (yield_many's three: a schedule, a poll's end and start;
# none missing from the file at the count), and blitz-events' final count
# (nothing lost).
if [ "$(id -u)" -eq 0 ] && [ -x "$obj/tools/bin/blitz-events" ]; then
	"$src/experiments/observer-effect/log-cost" -O "$obj" -p 1 -w 1 -i 2 -b yield_many \
		-o "$tmp/lc" > "$tmp/lc.md" 2> "$tmp/lc.log" ||
		{ echo "FAIL log-cost: $(tail -n 1 "$tmp/lc.log")"; fail=1; }
	grep -q '^| yield_many | 1 | ' "$tmp/lc.md" && echo "ok   log-cost: a row for yield_many" ||
		{ echo "FAIL log-cost: no row: $(cat "$tmp/lc.md")"; fail=1; }
	rpo=$(awk -F'|' '/^\| yield_many \| 1 \| / { gsub(/ /, "", $5); print $5 }' "$tmp/lc.md")
	awk -v r="${rpo:-0}" 'BEGIN { exit !(r >= 2.95 && r <= 3.1) }' &&
		echo "ok   log-cost: yield_many's records per operation: $rpo" ||
		{ echo "FAIL log-cost: yield_many's records per operation: '$rpo', not 3"; fail=1; }
	grep -q ' 0 records lost in 0 spans' "$tmp/lc.md" && echo "ok   log-cost: nothing lost" ||
		{ echo "FAIL log-cost: $(grep '^blitz-events' "$tmp/lc.md")"; fail=1; }
fi
exit $fail
