#!/usr/bin/env bash
# sync-bench.sh - sync-bench runs every benchmark with tiny counts and each
# prints one valid JSON line with the required fields, its runs' spread in
# order (min <= p25 <= median <= p75 <= max) and "modes" exactly when
# stderr warns of two modes; compare-sync marks a bimodal row of
# constructed lines and not a unimodal one.  No timing checks.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
bin=$obj/bin/sync-bench
[ -x "$bin" ] || { echo "no $bin (make progs)"; exit 77; }
# Sanitizer builds are slow: keep the counts tiny there too.
ops=200
[ -z "${BLITZ_SANITIZE:-}" ] || ops=40
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$bin" --list > "$tmp/list"
"$bin" --iters 1 --warmup 0 --ops "$ops" --workers 2 > "$tmp/out" 2> "$tmp/err" ||
	{ echo "FAIL sync-bench exited $?"; cat "$tmp/err"; exit 1; }
python3 - "$tmp/list" "$tmp/out" "${BLITZ_SANITIZE:-}" "$ops" <<'PY'
import json, sys
names = open(sys.argv[1]).read().split()
lines = open(sys.argv[2]).read().splitlines()
sanitized = bool(sys.argv[3])
fail = 0
if len(names) != 18:
    print(f"FAIL --list gives {len(names)} benchmarks, not 18"); fail = 1
if len(lines) != len(names):
    print(f"FAIL {len(lines)} lines for {len(names)} benchmarks"); fail = 1
fields = {"runtime": str, "bench": str, "workers": int, "backend": str, "ops": int,
          "iters": int, "median_ns": int, "min_ns": int, "ns_per_op": float,
          "p25_ns": int, "p75_ns": int, "max_ns": int}
seen = []
for line in lines:
    try:
        r = json.loads(line)
    except ValueError as e:
        print(f"FAIL not JSON: {line!r}: {e}"); fail = 1; continue
    for k, t in fields.items():
        if not isinstance(r.get(k), (int, float) if t is float else t):
            print(f"FAIL {r.get('bench')}: field {k} missing or not {t.__name__}"); fail = 1
    a = r.get("allocs_per_op", "missing")
    if not (a is None and sanitized) and not isinstance(a, (int, float)):
        print(f"FAIL {r.get('bench')}: allocs_per_op is {a!r}"); fail = 1
    if (r.get("runtime"), r.get("ops"), r.get("iters")) != ("blitz", int(sys.argv[4]), 1):
        print(f"FAIL {r.get('bench')}: runtime/ops/iters {r.get('runtime')}/{r.get('ops')}/{r.get('iters')}"); fail = 1
    seen.append(r.get("bench"))
if seen != names:
    print(f"FAIL benches printed {seen}, listed {names}"); fail = 1
if not fail:
    print(f"ok   {len(lines)} benchmarks, valid JSON with the required fields")
sys.exit(fail)
PY
# Five runs each of a single-thread and a contended benchmark: two modes are
# possible (two and three), and when a line has them stderr says so once.
"$bin" --iters 5 --warmup 0 --ops "$ops" --workers 2 --bench channel_try_send,mutex_contended_4t \
	> "$tmp/five" 2> "$tmp/five.err" || { echo "FAIL sync-bench --iters 5 exited $?"; cat "$tmp/five.err"; exit 1; }
. "$(dirname "$0")/bench-lib.bash"
check_spread sync-bench "$tmp/five" "$tmp/five.err"
python3 - "$tmp/five" <<'PY'
import json, sys
fail = 0
for line in open(sys.argv[1]).read().splitlines():
    r = json.loads(line)
    if r["iters"] != 5:
        print(f"FAIL {r['bench']}: iters {r['iters']}"); fail = 1
    elif list(r)[-1] != "allocs_per_op":
        print(f"FAIL {r['bench']}: allocs_per_op is not the last field: {list(r)}"); fail = 1
sys.exit(fail)
PY
# compare-sync: blitz's rounds of mutex_contended_4t fall into two modes
# (15.0, 51.0, 62.0, 14.5, 55.0 ns/op: two near 14.75, three near 55.0),
# Tokio's do not; blitz's notify_ping_pong rounds are unimodal but round 2
# carries "modes".
python3 - "$src/experiments/peers/compare-sync" <<'PY'
import json, subprocess, sys
lines = []
for rnd, (b1, t, b2) in enumerate([(15.0, 30.0, 40.0), (51.0, 31.0, 41.0), (62.0, 30.5, 42.0),
                                   (14.5, 30.2, 40.5), (55.0, 30.8, 41.5)], 1):
    for rt, bench, ns in (("blitz", "mutex_contended_4t", b1), ("tokio", "mutex_contended_4t", t),
                          ("blitz", "notify_ping_pong", b2), ("tokio", "notify_ping_pong", t)):
        r = {"round": rnd, "runtime": rt, "bench": bench, "workers": 4, "backend": "epoll", "ops": 10000,
             "iters": 5, "median_ns": int(ns * 1e4), "min_ns": int(ns * 1e4), "ns_per_op": ns,
             "allocs_per_op": 0.0}
        if rt == "blitz" and bench == "notify_ping_pong" and rnd == 2:
            r["modes"] = [{"ns": 300000, "n": 2}, {"ns": 420000, "n": 3}]
        lines.append(json.dumps(r))
out = subprocess.run([sys.executable, sys.argv[1]], input="\n".join(lines) + "\n",
                     capture_output=True, text=True, check=True).stdout
rows = {l.split(" | ")[0][2:]: l for l in out.splitlines() if l.startswith("| ") and "---" not in l}
want = {"mutex_contended_4t": "| mutex_contended_4t | 10000 | 4 | 51.00 (14.50-62.00) [2 modes: 2 near 14.75, "
                              "3 near 55.00] | 30.50 (30.00-31.00) | 1.67 | 2/5 | 0.0000 | 0.0000 | = |",
        "notify_ping_pong": "| notify_ping_pong | 10000 | 4 | 41.00 (40.00-42.00) [2 modes within round 2] | "
                            "30.50 (30.00-31.00) | 1.34 | 0/5 | 0.0000 | 0.0000 | = |"}
fail = 0
for b, w in want.items():
    if rows.get(b) != w:
        print(f"FAIL compare-sync row {rows.get(b)!r}, not {w!r}"); fail = 1
if "[2 modes: K near X" not in out.split("| notify_ping_pong |")[1]:
    print("FAIL compare-sync: no line under the table explaining the marks"); fail = 1
if not fail:
    print("ok   compare-sync marks the bimodal rows, not the unimodal one, and explains the marks")
sys.exit(fail)
PY
check_bench_names "$bin" mutex_try_lock notify_ping_pong
