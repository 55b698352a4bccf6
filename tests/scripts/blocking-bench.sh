#!/usr/bin/env bash
# blocking-bench.sh - blocking-bench runs every benchmark tiny and prints
# one valid JSON line each: the fields, numbers above 0, percentiles in
# order (null for the burst), the pool's threads counted; compare-blocking
# makes its table of them; unknown benchmarks are refused.  Numbers only:
# no timing checks.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
bin=$obj/bin/blocking-bench
[ -x "$bin" ] || { echo "no $bin (make progs)"; exit 77; }
command -v python3 > /dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ops=50

"$bin" --list > "$tmp/list"
"$bin" --iters 2 --warmup 1 --ops "$ops" --workers 2 > "$tmp/out" 2> "$tmp/err" ||
	{ echo "FAIL blocking-bench exited $?"; cat "$tmp/err"; exit 1; }
python3 - "$tmp/list" "$tmp/out" "$ops" <<'PY'
import json, sys
names = open(sys.argv[1]).read().split()
lines = open(sys.argv[2]).read().splitlines()
ops = int(sys.argv[3])
fail = 0
want = ["blocking_roundtrip", "blocking_burst", "blocking_roundtrip_outside"]
if names != want:
    print(f"FAIL --list gives {names}"); fail = 1
fields = {"runtime": str, "bench": str, "workers": int, "backend": str, "from": str,
          "ops": int, "iters": int, "median_ns": int, "min_ns": int, "ns_per_op": float,
          "ops_per_sec": float, "os_threads": int}
seen = []
for line in lines:
    r = json.loads(line)
    b = r.get("bench")
    seen.append(b)
    for k, t in fields.items():
        if not isinstance(r.get(k), (int, float) if t is float else t):
            print(f"FAIL {b}: field {k} missing or not {t.__name__}"); fail = 1
    if fail:
        continue
    if (r["runtime"], r["ops"], r["iters"], r["workers"]) != ("blitz", ops, 2, 2):
        print(f"FAIL {b}: runtime/ops/iters/workers in {line}"); fail = 1
    if min(r["median_ns"], r["min_ns"], r["ns_per_op"], r["ops_per_sec"]) <= 0 or r["min_ns"] > r["median_ns"]:
        print(f"FAIL {b}: times {line}"); fail = 1
    pct = [r.get(k, "missing") for k in ("p50_ns", "p99_ns", "max_ns")]
    if b == "blocking_burst":
        if pct != [None] * 3:
            print(f"FAIL {b}: percentiles {pct}, not null"); fail = 1
    elif not all(isinstance(v, int) and v > 0 for v in pct) or pct != sorted(pct):
        print(f"FAIL {b}: percentiles {pct}"); fail = 1
    # main, 2 workers and at least one pool thread (idle threads live 10 s).
    if r["os_threads"] < 4:
        print(f"FAIL {b}: {r['os_threads']} threads"); fail = 1
    if r["from"] != ("thread" if b.endswith("_outside") else "task"):
        print(f"FAIL {b}: from {r['from']}"); fail = 1
if seen != want:
    print(f"FAIL benches printed {seen}"); fail = 1
if not fail:
    print(f"ok   {len(lines)} benchmarks, valid JSON: {' '.join(l for l in lines)}")
sys.exit(fail)
PY
rows=$("$src/experiments/peers/compare-blocking" "$tmp/out" | grep -c '^| blocking_')
[ "$rows" -eq 3 ] && echo "ok   compare-blocking: 3 rows" || { echo "FAIL compare-blocking: $rows rows"; exit 1; }
. "$(dirname "$0")/bench-lib.bash"
check_bench_names "$bin" blocking_roundtrip blocking_burst
