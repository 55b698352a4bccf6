# bench-lib.bash - sourced by the tests of the benches (sched-bench.sh,
# sync-bench.sh, blocking-bench.sh; bench_parse_args and bench_spread in
# experiments/workloads/bench_util.c); not a test itself: the harness runs
# *.sh only.
#
# check_bench_names BIN A B   an unknown --bench is refused (exit 2), and
#                             --bench A,B prints exactly two lines; exits 1
#                             on a failure
# check_spread PROG OUT ERR...
#                             each JSON line of each OUT (with ERR, its
#                             stderr) has its runs' spread in order (min <=
#                             p25 <= median <= p75 <= max), and "modes"
#                             exactly when ERR warns of two modes for it,
#                             once, in bench_print_spread()'s words; no
#                             warning names a benchmark OUT lacks; an ok or
#                             FAIL line per benchmark, returns 1 on a failure

check_bench_names() {
	local bin=$1 a=$2 b=$3 n rc=0

	"$bin" --bench no_such_bench > /dev/null 2>&1 || rc=$?
	[ $rc -eq 2 ] || { echo "FAIL --bench no_such_bench: exit $rc"; exit 1; }
	echo "ok   unknown benchmark refused"
	n=$("$bin" --iters 1 --warmup 0 --ops 10 --bench "$a,$b" | wc -l)
	[ "$n" -eq 2 ] || { echo "FAIL --bench $a,$b printed $n lines"; exit 1; }
	echo "ok   --bench A,B"
}

check_spread() {
	python3 - "$@" <<'PY'
import json, re, sys
prog, files = sys.argv[1], sys.argv[2:]
fail = 0
for out, err in zip(files[::2], files[1::2]):
    rows = [json.loads(l) for l in open(out).read().splitlines() if l.strip()]
    warn = [l for l in open(err).read().splitlines() if "two modes" in l]
    for l in warn:
        if not any(l.startswith(f"{prog}: {r['bench']}: ") for r in rows):
            print(f"FAIL {out}: a warning for no benchmark of it: {l}"); fail = 1
    for r in rows:
        q = [r.get(k) for k in ("min_ns", "p25_ns", "median_ns", "p75_ns", "max_ns")]
        mine = [l for l in warn if l.startswith(f"{prog}: {r['bench']}: ")]
        m = r.get("modes")
        want = (rf"{prog}: {r['bench']}: the {r['iters']} runs fall into two modes: "
                rf"{m[0]['n']} near [0-9.]+ ns/op, {m[1]['n']} near [0-9.]+ ns/op; the median hides it$"
                if m and len(m) == 2 else None)
        if not all(isinstance(v, int) for v in q) or q != sorted(q):
            print(f"FAIL {r['bench']}: min, p25, median, p75, max {q}"); fail = 1
        elif m is None and mine:
            print(f"FAIL {r['bench']}: warned {mine} without \"modes\""); fail = 1
        elif m is not None and not (
                want and m[0]["n"] + m[1]["n"] == r["iters"] and q[0] <= m[0]["ns"] < m[1]["ns"] <= q[4] and
                len(mine) == 1 and re.match(want, mine[0])):
            print(f"FAIL {r['bench']}: modes {m}, warning {mine}"); fail = 1
        else:
            print(f"ok   {r['bench']}: spread {q}" + (f", two modes {m}" if m else ""))
sys.exit(fail)
PY
}
