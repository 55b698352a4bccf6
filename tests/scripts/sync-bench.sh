#!/usr/bin/env bash
# sync-bench.sh - sync-bench runs every benchmark with tiny counts and each
# prints one valid JSON line with the required fields.  No timing checks.
set -euo pipefail
obj=${BLITZ_OBJTREE:?}
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
          "iters": int, "median_ns": int, "min_ns": int, "ns_per_op": float}
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
. "$(dirname "$0")/bench-lib.bash"
check_bench_names "$bin" mutex_try_lock notify_ping_pong
