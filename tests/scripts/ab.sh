#!/usr/bin/env bash
# ab.sh - experiments/lib/ab: pairs in alternating order, one table row per
# benchmark with the pairs' ratio and win count, and clear failures (bad
# usage, a missing program, a benchmark that fails).  No timing checks: the
# same build on both sides.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
ab=$src/experiments/lib/ab
[ -x "$obj/bin/sched-bench" ] || { echo "no $obj/bin/sched-bench (make progs)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

"$ab" --rounds 3 --raw "$tmp/raw" "$obj" "$obj" sched-bench \
	--bench chained_spawn,ping_pong --workers 1 --iters 2 --warmup 0 > "$tmp/table" 2> "$tmp/err" ||
	{ echo "FAIL ab exited $?"; cat "$tmp/err"; exit 1; }
python3 - "$tmp/raw" "$tmp/table" <<'PY' || fail=1
import json, re, sys
raw = [json.loads(l) for l in open(sys.argv[1])]
table = open(sys.argv[2]).read()
fail = 0
if len(raw) != 12:
    print(f"FAIL {len(raw)} raw lines, want 3 rounds x 2 benchmarks x 2 builds"); fail = 1
# Each pair is back to back; A first in odd rounds, B first in even ones.
for i in range(0, len(raw) - 1, 2):
    a, b = raw[i], raw[i + 1]
    want = ("A", "B") if a["round"] % 2 else ("B", "A")
    if (a["build"], b["build"]) != want or a["bench"] != b["bench"] or a["round"] != b["round"]:
        print(f"FAIL pair {i // 2}: {a['build']},{b['build']} round {a['round']}, want {want}"); fail = 1
for bench in ("chained_spawn", "ping_pong"):
    m = re.search(rf"^\| {bench} \| \d+ \| \d+ \| [0-9.]+ \[[0-9.]+, [0-9.]+\] \| [0-3]/3 \|$", table, re.M)
    print(("ok   row " + bench) if m else f"FAIL no row for {bench}:\n{table}")
    fail |= not m
if not fail:
    print("ok   12 runs in pairs, order alternating")
sys.exit(fail)
PY

# --env-b: B's runs see the variable, A's do not (sched-bench's workers come
# from BLITZ_WORKERS when --workers is not given).
"$ab" --rounds 2 --raw "$tmp/raw-env" --env-b BLITZ_WORKERS=1 --env-a BLITZ_WORKERS=2 "$obj" "$obj" \
	sched-bench --bench chained_spawn --iters 2 --warmup 0 > "$tmp/table-env" 2> "$tmp/err" ||
	{ echo "FAIL ab --env-b exited $?"; cat "$tmp/err"; exit 1; }
python3 - "$tmp/raw-env" "$tmp/table-env" <<'PY' || fail=1
import json, sys
raw = [json.loads(l) for l in open(sys.argv[1])]
workers = sorted({(l["build"], l["workers"]) for l in raw})
head = open(sys.argv[2]).readline()
ok = workers == [("A", 2), ("B", 1)] and "(BLITZ_WORKERS=1)" in head and len(raw) == 4
print(("ok   " if ok else "FAIL ") + f"--env-a/--env-b: workers by side {workers}; {head.strip()}")
sys.exit(not ok)
PY

expect() {	# expect RC WHAT CMD...: CMD exits RC and says something on stderr
	local want=$1 what=$2 rc=0
	shift 2
	"$@" > /dev/null 2> "$tmp/e" || rc=$?
	if [ $rc -eq "$want" ] && [ -s "$tmp/e" ]; then
		echo "ok   $what: exit $rc, $(tail -n 1 "$tmp/e")"
	else
		echo "FAIL $what: exit $rc (want $want)"; cat "$tmp/e"; fail=1
	fi
}
expect 2 "no arguments" "$ab"
expect 2 "--rounds 0" "$ab" --rounds 0 "$obj" "$obj" sched-bench
expect 2 "--rounds x" "$ab" --rounds x "$obj" "$obj" sched-bench
expect 2 "unknown option" "$ab" --bogus 1 "$obj" "$obj" sched-bench
expect 2 "--env-b without =" "$ab" --env-b BLITZ_WAKE "$obj" "$obj" sched-bench
expect 1 "missing program" "$ab" "$obj" "$tmp" sched-bench
expect 1 "failing benchmark" "$ab" --rounds 1 "$obj" "$obj" sched-bench --bench no_such_bench
exit $fail
