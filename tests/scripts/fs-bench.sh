#!/usr/bin/env bash
# fs-bench.sh - fs-bench runs tiny on every backend and prints one valid
# JSON line per backend, block size and task count: the fields, numbers
# above 0, percentiles in order, the reads where docs/fs.md says they run
# (io_uring's own on io_uring, the pool on every other backend), a warm cache;
# --cold drops it (where the filesystem can); its file is removed; bad
# options exit 2.  Numbers only: no timing checks.
set -euo pipefail
obj=${BLITZ_OBJTREE:?}
bin=$obj/bin/fs-bench
[ -x "$bin" ] || { echo "no $bin (make progs)"; exit 77; }
command -v python3 > /dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# check FILE CACHE: every line valid; prints the backends that ran.
check() {
	python3 - "$@" <<'PY'
import json, sys
path, cache = sys.argv[1:3]
need = {"runtime": str, "bench": str, "workers": int, "backend": str, "via": str,
        "cache": str, "file_bytes": int, "block_bytes": int, "tasks": int, "ops": int,
        "iters": int, "median_ns": int, "min_ns": int, "ns_per_op": float,
        "mb_per_sec": float, "ops_per_sec": float, "p50_ns": int, "p99_ns": int,
        "p999_ns": int, "max_ns": int, "cached_pct": float}
fail, backends = 0, []
for line in open(path):
    r = json.loads(line)
    what = f"{r.get('backend')} block {r.get('block_bytes')} tasks {r.get('tasks')}"
    for k, t in need.items():
        if not isinstance(r.get(k), (int, float) if t is float else t):
            print(f"FAIL {what}: {k} missing or not {t.__name__}"); fail = 1
    if fail:
        continue
    if (r["runtime"], r["bench"], r["cache"]) != ("blitz", "fs_read", cache):
        print(f"FAIL {what}: runtime/bench/cache {r['runtime']}/{r['bench']}/{r['cache']}"); fail = 1
    if min(r[k] for k in ("median_ns", "min_ns", "mb_per_sec", "ops_per_sec", "p50_ns")) <= 0:
        print(f"FAIL {what}: a number is not above 0: {line.strip()}"); fail = 1
    if not r["min_ns"] <= r["median_ns"] or not r["p50_ns"] <= r["p99_ns"] <= r["p999_ns"] <= r["max_ns"]:
        print(f"FAIL {what}: out of order: {line.strip()}"); fail = 1
    if r["ops"] != -(-r["file_bytes"] // r["block_bytes"]):
        print(f"FAIL {what}: {r['ops']} ops for {r['file_bytes']} bytes"); fail = 1
    if r["via"] != ("io_uring" if r["backend"] == "io_uring" else "pool"):
        print(f"FAIL {what}: reads ran via {r['via']}"); fail = 1
    if not 0 <= r["cached_pct"] <= 100 or (cache == "warm" and r["cached_pct"] < 50):
        print(f"FAIL {what}: cached_pct {r['cached_pct']} with a {cache} cache"); fail = 1
    if r["backend"] not in backends:
        backends.append(r["backend"])
print(" ".join(backends))
sys.exit(fail)
PY
}

# Warm: every backend (from the program) x 2 block sizes x 2 task counts,
# minus the unavailable.
backends=$("$obj/bin/sched-bench" --list-backends)
"$bin" --backend "$(echo "$backends" | paste -sd, -)" --size 1M --block 4K,64K --tasks 1,4 --iters 2 --warmup 1 \
	--dir "$tmp" > "$tmp/warm.json" 2> "$tmp/warm.err" || { bad "fs-bench exited $?: $(cat "$tmp/warm.err")"; exit 1; }
ran=$(check "$tmp/warm.json" warm | tail -n 1) || { cat "$tmp/warm.json"; bad "warm lines"; }
n=$(wc -l < "$tmp/warm.json")
nb=$(echo "$ran" | wc -w)
[ "$nb" -gt 0 ] && [ "$n" -eq $((nb * 4)) ] && ok "warm: $n lines, backends $ran" ||
	bad "warm: $n lines for backends '$ran': $(cat "$tmp/warm.err")"
for b in $backends; do
	case " $ran " in *" $b "*) ;; *) grep -q "$b is not available" "$tmp/warm.err" &&
		echo "skip $b: $(grep "$b is not available" "$tmp/warm.err")" || bad "$b: no lines, no reason"
	esac
done
ls "$tmp" | grep -q '^fs-bench\.' && bad "the temporary file was left behind" || ok "its file is removed"

# Cold: the file's pages dropped before each pass (not on tmpfs, which has no disk).
"$bin" --backend epoll --size 1M --block 64K --tasks 2 --iters 2 --warmup 0 --cold \
	--dir "$tmp" > "$tmp/cold.json" 2> "$tmp/cold.err" || bad "--cold exited $?: $(cat "$tmp/cold.err")"
check "$tmp/cold.json" cold > /dev/null && ok "--cold: $(cat "$tmp/cold.json")" || bad "--cold line"
fstype=$(stat -f -c %T "$tmp")
if [ "$fstype" = tmpfs ] || [ "$fstype" = ramfs ]; then
	echo "skip --cold cached_pct: $tmp is on $fstype"
else
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["cached_pct"] >= 50)' \
		"$tmp/cold.json" && ok "--cold: the cache was dropped ($fstype)" || bad "--cold: the pages stayed"
fi

for args in "--block 1000" "--block 0" "--backend nope" "--backend epoll,epoll" "--tasks 0" \
	    "--size x" "--iters 0" "--bogus"; do
	rc=0
	# shellcheck disable=SC2086
	"$bin" $args --dir "$tmp" > /dev/null 2> "$tmp/opt.err" || rc=$?
	[ $rc -eq 2 ] && ok "$args: exit 2: $(head -n 1 "$tmp/opt.err")" || bad "$args: exit $rc"
done
exit $fail
