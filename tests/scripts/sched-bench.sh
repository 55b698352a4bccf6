#!/usr/bin/env bash
# sched-bench.sh - `sched-bench --iter-stats` prints one line per timed
# iteration, and the polls it attributes to the workers add up to at least
# the benchmark's operations (every yield, spawn or ping is a poll); and
# blitz's own rows run (each checks its result: a subtree count, a sum)
# and print their fields, burst_wake its two quantiles in order.  No
# timing checks.
set -euo pipefail
obj=${BLITZ_OBJTREE:?}
bin=$obj/bin/sched-bench
[ -x "$bin" ] || { echo "no $bin (make progs)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
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
	"$bin" --workers 2 --bench "$b" --iters 2 --warmup 0 > "$tmp/$b" 2> "$tmp/err" ||
		{ echo "FAIL sched-bench --bench $b exited $?"; cat "$tmp/err"; exit 1; }
done
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
