#!/usr/bin/env bash
# sched-bench.sh - `sched-bench --iter-stats` prints one line per timed
# iteration, and the polls it attributes to the workers add up to at least
# the benchmark's operations (every yield, spawn or ping is a poll); and
# blitz's own rows run (each checks its result: a subtree count, a sum)
# and print their fields, burst_wake its two quantiles in order; every
# line has its runs' spread in order (min <= p25 <= median <= p75 <= max),
# and "modes" exactly when stderr warns of two modes; compare marks a
# bimodal row of constructed lines and not a unimodal one, by the same
# rule as bench_spread() on the unit test's samples; --list-backends prints
# every backend blitz_backend_name() knows, auto left out, the list the
# scripts run over.  No timing checks.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
bin=$obj/bin/sched-bench
[ -x "$bin" ] || { echo "no $bin (make progs)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Each name one BLITZ_BACKEND takes (a bad one exits 2), and not auto.
backends=$("$bin" --list-backends)
for b in $backends; do
	[ "$b" != auto ] && BLITZ_BACKEND=$b "$bin" --list > /dev/null ||
		{ echo "FAIL --list-backends: '$b' is not a backend BLITZ_BACKEND takes"; exit 1; }
done
[ -n "$backends" ] && echo "ok   --list-backends:" $backends || { echo "FAIL --list-backends printed nothing"; exit 1; }
bench=yield_many
[ -z "${BLITZ_SANITIZE:-}" ] || bench=spawn_many_local
"$bin" --workers 2 --bench "$bench" --iters 3 --warmup 1 --iter-stats > "$tmp/out" 2> "$tmp/err" ||
	{ echo "FAIL sched-bench exited $?"; cat "$tmp/err"; exit 1; }
python3 - "$tmp/out" "$tmp/err" <<'PY'
import json, re, sys
result = json.loads(open(sys.argv[1]).read())
lines = [l for l in open(sys.argv[2]).read().splitlines() if " iter " in l]
fail = 0
if len(lines) != result["iters"]:
    print(f"FAIL {len(lines)} iteration lines for {result['iters']} iterations"); fail = 1
for i, line in enumerate(lines):
    m = re.match(r"(\w+) iter (\d+): ([0-9.]+) ms((?: \| w\d+ polls=\d+ stolen=\d+ parks=\d+)+)$", line)
    if not m or m.group(1) != result["bench"] or int(m.group(2)) != i:
        print(f"FAIL malformed: {line}"); fail = 1; continue
    polls = sum(int(p) for p in re.findall(r"polls=(\d+)", m.group(4)))
    workers = len(re.findall(r" w\d+ ", m.group(4)))
    if workers != result["workers"] or polls < result["ops"]:
        print(f"FAIL {line}: {workers} workers, {polls} polls < {result['ops']} ops"); fail = 1
    else:
        print(f"ok   {line}")
sys.exit(fail)
PY
for b in fanout_tree burst_wake pipeline; do
	"$bin" --workers 2 --bench "$b" --iters 2 --warmup 0 > "$tmp/$b" 2> "$tmp/$b.err" ||
		{ echo "FAIL sched-bench --bench $b exited $?"; cat "$tmp/$b.err"; exit 1; }
done
# Five runs of one more: enough for two modes to be possible (two and three).
"$bin" --workers 2 --bench spawn_many_local --iters 5 --warmup 0 > "$tmp/spawn" 2> "$tmp/spawn.err" ||
	{ echo "FAIL sched-bench --bench spawn_many_local exited $?"; cat "$tmp/spawn.err"; exit 1; }
cp "$tmp/out" "$tmp/first"; { grep -v " iter " "$tmp/err" || true; } > "$tmp/first.err"
. "$(dirname "$0")/bench-lib.bash"
check_spread sched-bench $(for f in first fanout_tree burst_wake pipeline spawn; do
	echo "$tmp/$f" "$tmp/$f.err"; done)
# compare: a row whose rounds fall into two modes, or whose round says so,
# is marked; a unimodal row is not.  Blitz's rounds are 4.0, 9.0, 4.1, 9.1,
# 8.7 ms (two near 4.05, three near 9.0), Tokio's 6.0 to 6.1; a second
# bench's blitz rounds are unimodal but its round 3 carries "modes".
python3 - "$src/experiments/peers/compare" <<'PY'
import importlib.machinery, importlib.util, json, subprocess, sys
loader = importlib.machinery.SourceFileLoader("compare", sys.argv[1])
compare = importlib.util.module_from_spec(importlib.util.spec_from_loader("compare", loader))
loader.exec_module(compare)
fail = 0
# The unit test's samples (tests/unit/test_bench_util.c): the same answers.
cases = [([450, 200, 435, 210, 455], [(205, 2), (450, 3)]), ([100, 101, 200, 201], [(100.5, 2), (200.5, 2)]),
         ([414, 435, 455, 333, 200], None), ([100, 150, 225, 340, 345], None),
         ([100, 115, 150, 160, 170], None), ([105, 115, 150, 160, 170], [(110, 2), (160, 3)]),
         ([100, 100, 101, 100, 120, 121, 120, 120], None), ([1, 1000], None), ([1, 1, 1000], None),
         ([0, 0, 0, 5, 5, 5], [(0, 3), (5, 3)]), ([0, 5, 5, 500, 500, 500], None), ([7] * 15, None),
         ([100 + 30 * i // 14 for i in range(15)], None)]
for vals, want in cases:
    got = compare.two_modes(vals)
    if got != want:
        print(f"FAIL two_modes({vals}) = {got}, not {want}"); fail = 1
lines = []
for rnd, (b1, t, b2) in enumerate([(4.0, 6.0, 5.0), (9.0, 6.1, 5.1), (4.1, 6.05, 5.2),
                                   (9.1, 6.02, 5.0), (8.7, 6.08, 5.1)], 1):
    for rt, bench, ms in (("blitz", "yield_many", b1), ("tokio", "yield_many", t), ("blitz", "ping_pong", b2),
                          ("tokio", "ping_pong", t)):
        r = {"round": rnd, "runtime": rt, "bench": bench, "workers": 2, "backend": "epoll", "ops": 1000,
             "iters": 5, "median_ns": int(ms * 1e6), "min_ns": int(ms * 1e6), "ns_per_op": ms * 1e3}
        if rt == "blitz" and bench == "ping_pong" and rnd == 3:
            r["modes"] = [{"ns": 4000000, "n": 2}, {"ns": 6000000, "n": 3}]
        lines.append(json.dumps(r))
out = subprocess.run([sys.executable, sys.argv[1]], input="\n".join(lines) + "\n",
                     capture_output=True, text=True, check=True).stdout
rows = {l.split(" | ")[0][2:]: l for l in out.splitlines() if l.startswith("| ") and "---" not in l}
want = {"yield_many": "| yield_many | 8.700 ms (4.000-9.100) [2 modes: 2 near 4.050, 3 near 9.000] | "
                      "6.050 ms (6.000-6.100) | 0.70x | 2/5 |",
        "ping_pong": "| ping_pong | 5.100 ms (5.000-5.200) [2 modes within round 3] | "
                     "6.050 ms (6.000-6.100) | 1.19x | 5/5 |"}
for b, w in want.items():
    if rows.get(b) != w:
        print(f"FAIL compare row {rows.get(b)!r}, not {w!r}"); fail = 1
if "[2 modes: K near X" not in out.split("| ping_pong |")[1]:
    print("FAIL compare: no line under the table explaining the marks"); fail = 1
if not fail:
    print("ok   compare marks the bimodal rows, not the unimodal one, and explains the marks")
sys.exit(fail)
PY
python3 - "$tmp" <<'PY'
import json, os, sys
fail = 0
for b in ("fanout_tree", "burst_wake", "pipeline"):
    r = json.loads(open(os.path.join(sys.argv[1], b)).read())
    lat = ("p50_ns" in r, "p99_ns" in r)
    if r["bench"] != b or r["iters"] != 2 or lat != ((True, True) if b == "burst_wake" else (False, False)):
        print(f"FAIL {b}: {r}"); fail = 1
    elif b == "burst_wake" and not 0 < r["p50_ns"] <= r["p99_ns"]:
        print(f"FAIL {b}: p50 {r['p50_ns']} p99 {r['p99_ns']}"); fail = 1
    else:
        print(f"ok   {b}")
sys.exit(fail)
PY
