#!/usr/bin/env bash
# experiments.sh - each experiment runs in quick mode and writes its
# meta.json, raw JSON and (where it plots) PNG/SVG plots.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
# Experiments rebuild the tree they are given; a sanitizer tree would be
# rebuilt without its flags.  The plain build runs them.
[ -z "${BLITZ_SANITIZE:-}" ] || { echo "experiments run in the plain build, not under SANITIZE=$BLITZ_SANITIZE"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
need() { [ -s "$1" ] && echo "ok   $2" || { echo "FAIL $2: no $1"; fail=1; }; }
# perturbed DIR TAG...: meta.json has each TAG's slowdown (traced / untraced,
# above 0, per benchmark too), and the summary and plots say it.
perturbed() {
	local dir=$1
	shift
	python3 - "$dir/meta.json" "$@" <<'PY' && echo "ok   $(basename "$dir"): slowdown of every traced run in meta.json" || fail=1
import json, sys
p = json.load(open(sys.argv[1]))["perturbation"]
assert p["modes"] and all(m in ("summary", "per-event") for m in p["modes"].values()), p["modes"]
for tag in sys.argv[2:]:
    r = p["runs"][tag]
    assert r["slowdown"] > 0 and r["pairs"] >= 1 and r["benches"], (tag, r)
    assert all(b["slowdown"] > 0 and b["untraced_ns"] > 0 for b in r["benches"].values()), (tag, r)
PY
	grep -q '^## What tracing cost' "$dir/summary.md" && grep -q '| traced / untraced |' "$dir/summary.md" &&
		echo "ok   $(basename "$dir"): summary states the slowdown" ||
		{ echo "FAIL $(basename "$dir"): summary does not state the slowdown"; fail=1; }
	grep -q 'traced [0-9.]*x slower than untraced' "$dir"/plots/*.svg &&
		echo "ok   $(basename "$dir"): plots state the slowdown" ||
		{ echo "FAIL $(basename "$dir"): no slowdown in the plots"; fail=1; }
}

"$src/experiments/sched-baseline/run" --quick --build "$obj" --out "$tmp/sb" > "$tmp/sb.log" 2>&1 ||
	{ echo "FAIL sched-baseline:"; tail -20 "$tmp/sb.log"; exit 1; }
need "$tmp/sb/meta.json" "sched-baseline meta.json"
need "$tmp/sb/raw/bench.jsonl" "sched-baseline raw JSON"
need "$tmp/sb/summary.md" "sched-baseline summary"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["kernel"] and m["commit"] and m["config"]' \
	"$tmp/sb/meta.json" && echo "ok   meta.json has kernel, commit, config"
# One timed line per benchmark (sched-bench --list: the one list of them) and run.
nb=$("$obj/bin/sched-bench" --list | wc -w)
n=$(wc -l < "$tmp/sb/raw/bench.jsonl")
[ "$n" -eq $((nb * 3)) ] && echo "ok   $n timed lines ($nb benchmarks x 3 backends)" ||
	{ echo "FAIL $n timed lines, not $nb benchmarks x 3 backends"; fail=1; }
if [ -e "$tmp/sb/hist/NOT-COLLECTED" ]; then
	echo "ok   histograms not collected, and it says why: $(cat "$tmp/sb/hist/NOT-COLLECTED")"
else
	for t in schedlat polltime park steal tasksrc; do
		need "$tmp/sb/plots/$t.png" "plot $t.png"
		need "$tmp/sb/plots/$t.svg" "plot $t.svg"
		head -c 8 "$tmp/sb/plots/$t.png" | od -An -tx1 | grep -q '89 50 4e 47' || { echo "FAIL $t.png is not a PNG"; fail=1; }
	done
	perturbed "$tmp/sb" io_uring epoll poll
fi

"$src/experiments/ablation/run" --quick --build "$obj" --out "$tmp/ab" > "$tmp/ab.log" 2>&1 ||
	{ echo "FAIL ablation:"; tail -20 "$tmp/ab.log"; exit 1; }
need "$tmp/ab/meta.json" "ablation meta.json"
need "$tmp/ab/raw/bench.jsonl" "ablation raw JSON"
need "$tmp/ab/summary.md" "ablation summary"
n=$(wc -l < "$tmp/ab/raw/bench.jsonl")
[ "$n" -eq $((nb * 7)) ] && echo "ok   $n timed lines ($nb benchmarks x 7 variants)" ||
	{ echo "FAIL ablation: $n timed lines, not $nb benchmarks x 7 variants"; fail=1; }
# The knobs at work, from the runtime's own counters.
lifo=$(grep -o 'lifo_hits=[0-9]*' "$tmp/ab/raw/traced-no-lifo.stats" | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
[ "$lifo" -eq 0 ] && echo "ok   ablation no-lifo: 0 LIFO hits" || { echo "FAIL ablation no-lifo: $lifo LIFO hits"; fail=1; }
if [ -e "$tmp/ab/hist/NOT-COLLECTED" ]; then
	echo "ok   ablation histograms not collected, and it says why: $(cat "$tmp/ab/hist/NOT-COLLECTED")"
else
	for t in schedlat polltime steal tasksrc; do need "$tmp/ab/plots/$t.png" "ablation plot $t.png"; done
	perturbed "$tmp/ab" default no-lifo steal-one
fi

"$src/experiments/backends/run" --quick --build "$obj" --out "$tmp/be" > "$tmp/be.log" 2>&1 ||
	{ echo "FAIL backends:"; tail -20 "$tmp/be.log"; exit 1; }
need "$tmp/be/meta.json" "backends meta.json"
need "$tmp/be/summary.md" "backends summary"
n=$(wc -l < "$tmp/be/raw/echo.jsonl")
[ "$n" -eq 6 ] && echo "ok   6 echo lines (3 backends x 2 connection counts)" || { echo "FAIL backends: $n echo lines"; fail=1; }
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); assert r["msgs"] > 0 and r["p50_ns"] <= r["p99_ns"] <= r["p999_ns"], r' \
	"$tmp/be/raw/echo.jsonl" && echo "ok   backends: every run echoed, percentiles in order" || fail=1
need "$tmp/be/plots/echo.png" "backends plot echo.png"
if [ ! -e "$tmp/be/hist/NOT-COLLECTED" ]; then
	need "$tmp/be/plots/park.png" "backends plot park.png"
	perturbed "$tmp/be" io_uring epoll poll
fi

"$src/experiments/peers/run" --quick --build "$obj" --out "$tmp/pe" > "$tmp/pe.log" 2>&1 ||
	{ echo "FAIL peers:"; tail -20 "$tmp/pe.log"; exit 1; }
need "$tmp/pe/meta.json" "peers meta.json"
need "$tmp/pe/raw/sched.jsonl" "peers raw sched JSON"
need "$tmp/pe/raw/echo.jsonl" "peers raw echo JSON"
need "$tmp/pe/summary.md" "peers summary"
grep -q '| spawn_many_local |' "$tmp/pe/sched.md" && echo "ok   peers: ratio table" || { echo "FAIL peers: no ratio table"; fail=1; }
need "$tmp/pe/plots/sched.png" "peers plot sched.png"
need "$tmp/pe/plots/echo.png" "peers plot echo.png"
# The load generator reports the server's CPU per message (pinned apart
# where there are two CPUs), which the echo plot shows.
python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all(r["msgs"] > 0 and r["server_cpu_ns_per_msg"] > 0 for r in rows), rows' \
	"$tmp/pe/raw/echo.jsonl" && echo "ok   peers: every echo line has the server's CPU per message" || fail=1

"$src/experiments/probe-cost/run" --quick --build "$obj" --out "$tmp/pc" > "$tmp/pc.log" 2>&1 ||
	{ echo "FAIL probe-cost:"; tail -20 "$tmp/pc.log"; exit 1; }
need "$tmp/pc/meta.json" "probe-cost meta.json"
need "$tmp/pc/raw.jsonl" "probe-cost raw JSON"
need "$tmp/pc/summary.md" "probe-cost summary"
if command -v valgrind > /dev/null; then
	# One instruction count per benchmark and build, both above zero.
	n=$(grep -c '"variant":"instructions".*"instructions":[1-9]' "$tmp/pc/raw.jsonl" || true)
	want=$((2 * $("$obj/bin/sched-bench" --list | wc -l)))
	[ "$n" -eq "$want" ] || { echo "FAIL probe-cost: $n instruction counts, want $want"; exit 1; }
	grep -q '^Instructions (callgrind' "$tmp/pc/summary.md" ||
		{ echo "FAIL probe-cost: no instruction table"; exit 1; }
	echo "ok   probe-cost: $n instruction counts and their table"
fi

"$src/experiments/fs-read/run" --quick --build "$obj" --out "$tmp/fr" > "$tmp/fr.log" 2>&1 ||
	{ echo "FAIL fs-read:"; tail -20 "$tmp/fr.log"; exit 1; }
need "$tmp/fr/meta.json" "fs-read meta.json"
need "$tmp/fr/summary.md" "fs-read summary"
n=$(wc -l < "$tmp/fr/raw/fs.jsonl")
want=12	# 2 backends x (4 warm + 2 cold rows); 6 where io_uring is not available
grep -q 'not available' "$tmp/fr/raw/stderr.log" && want=6
[ "$n" -eq $want ] && echo "ok   fs-read: $n lines" || { echo "FAIL fs-read: $n lines, not $want"; fail=1; }
grep -q '^| 4K | 1 |' "$tmp/fr/summary.md" && echo "ok   fs-read: table" || { echo "FAIL fs-read: no table"; fail=1; }
"$src/experiments/observer-effect/run" --quick --build "$obj" --out "$tmp/oe" > "$tmp/oe.log" 2>&1 ||
	{ echo "FAIL observer-effect:"; tail -20 "$tmp/oe.log"; exit 1; }
need "$tmp/oe/meta.json" "observer-effect meta.json"
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
	python3 - "$tmp/oe" "$("$obj/bin/sched-bench" --list | tr '\n' ' ')" <<'PY' && echo "ok   observer-effect: every cell's slowdown, hits and distance" || fail=1
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
no_summary = all(m["skipped"] for m in modes if m["mode"] == "summary")
assert fig["reference"]["missing"] == no_summary, fig["reference"]
# Every tool's histogram inside the "all" cell, against the tool alone.
assert {(d["tool"], d["workload"]) for d in fig["with_all_tools"] if d["mode"] == "per-event"} >= \
    {("polltime", w) for w in workloads}, fig["with_all_tools"]
# The uprobe paths, where bpftrace could count them: every call a hit.
nops = fig["uprobe_paths"]
assert not nops or (set(nops) == {"nop1", "nop5"} and all(
    n["hits_counted"] and n["traced_ns_per_call"] > 0 for n in nops.values())), nops
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
"$src/experiments/task-alloc/run" --quick --build "$obj" --out "$tmp/ta" > "$tmp/ta.log" 2>&1 ||
	{ echo "FAIL task-alloc:"; tail -20 "$tmp/ta.log"; exit 1; }
need "$tmp/ta/meta.json" "task-alloc meta.json"
n=$(grep -c '"limit_kb"' "$tmp/ta/raw/bench.jsonl")
[ "$n" -eq 4 ] && echo "ok   task-alloc: 4 lines (2 benchmarks, no limit and one)" ||
	{ echo "FAIL task-alloc: $n lines, not 4"; fail=1; }
grep -q '^| 150000 |' "$tmp/ta/summary.md" && echo "ok   task-alloc: table by limit" ||
	{ echo "FAIL task-alloc: no row for the limit"; fail=1; }
exit $fail
