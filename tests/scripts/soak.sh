#!/usr/bin/env bash
# soak.sh - the soak (experiments/soak) in quick mode, so that it does not
# rot: 10 s of the mixed load, every check of the program holds (the
# flatness checks are not judged in a run that short: they need 2 minutes
# after the warm-up), the counts agree, the run writes what the README
# says; bad options exit 2.  Counts only: nothing here depends on speed.
# Under a sanitizer the program runs alone (the run script would rebuild
# the tree without the flags), 4 s at 50 connections: ASan and LSan watch
# every allocation of the runtime under the load, to the exit.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
soak=$obj/bin/blitz-soak
[ -x "$soak" ] || { echo "no $soak (make progs)"; exit 77; }
command -v python3 > /dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

if [ -n "${BLITZ_SANITIZE:-}" ]; then
	dir=$tmp
	conns=50
	"$soak" --duration 4 --connections $conns --samples "$dir/samples.jsonl" \
		> "$dir/soak.json" 2> "$dir/stderr.log" ||
		{ echo "FAIL soak under $BLITZ_SANITIZE:"; tail -30 "$dir/stderr.log"; exit 1; }
	ok "soak under $BLITZ_SANITIZE: exit 0"
else
	dir=$tmp/run
	conns=200
	"$src/experiments/soak/run" --quick --build "$obj" --out "$dir" > "$tmp/log" 2>&1 ||
		{ echo "FAIL experiments/soak/run --quick:"; tail -30 "$tmp/log"; exit 1; }
	ok "experiments/soak/run --quick: exit 0"
	for f in meta.json summary.md samples.jsonl soak.json; do
		[ -s "$dir/$f" ] && ok "$f written" || bad "no $f"
	done
	grep -q '^\*\*PASS\*\*' "$dir/summary.md" && ok "summary says PASS" || bad "summary does not say PASS"
	if /usr/bin/python3 -c 'import matplotlib' 2> /dev/null; then
		head -c 8 "$dir/plots/soak.png" 2> /dev/null | od -An -tx1 | grep -q '89 50 4e 47' &&
			ok "plots/soak.png" || bad "no plots/soak.png"
	fi
fi

python3 - "$dir/soak.json" "$dir/samples.jsonl" "$conns" <<'PY' && ok "the checks and the counts agree" || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
conns = int(sys.argv[3])
samples = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
c = r["checks"]
assert r["ok"] is True, c
for k in ("fds_back", "no_task_lost", "no_byte_wrong", "no_wrong_result", "stopped"):
    assert c[k] is True, (k, c)
# Too short to tell a leak from the warm-up: not judged, and said so.
assert c["rss_flat"] is None and c["heap_flat"] is None and c["fds_flat"] is None, c
assert r["connections"] == conns, r["connections"]
assert r["tasks_spawned"] == r["tasks_completed"] + r["tasks_cancelled"] == r["runtime_spawned"], r
for kind, (s, done, cancelled) in r["tasks"].items():
    assert s == done + cancelled, (kind, s, done, cancelled)
assert r["tasks"]["driver"] == [6, 6, 0] and r["tasks"]["acceptor"] == [1, 0, 1], r["tasks"]
assert r["live_tasks_rest"] == 0 and r["fds_rest"] == r["fds_before"], r
# Every connection was closed, at the end at the latest, and the server saw each.
assert r["conns_opened"] == r["conns_closed"] == r["accepted"] >= conns, r
assert r["msgs"] > 0 and r["bytes_checked"] >= r["msgs"] and r["bytes_wrong"] == 0, r
load = [s for s in samples if s["phase"] == "load"]
rest = [s for s in samples if s["phase"] == "rest"]
assert len(load) == r["samples"] >= 2 and len(rest) == 1, (len(load), len(rest))
assert rest[0]["live_tasks"] == 0 and rest[0]["client_fds"] == rest[0]["server_fds"] == 0, rest[0]
PY

# Bad options: one line, exit 2.
for args in "--duration 0" "--duration abc" "--connections 0" "--warmup 9 --duration 5" "--bogus" "extra"; do
	set +e
	# shellcheck disable=SC2086 # the options are words
	"$soak" $args > /dev/null 2> "$tmp/bad.err"
	rc=$?
	set -e
	[ "$rc" = 2 ] && [ -s "$tmp/bad.err" ] && ok "soak $args: exit 2: $(head -n 1 "$tmp/bad.err")" ||
		bad "soak $args: exit $rc"
done
if [ -z "${BLITZ_SANITIZE:-}" ]; then
	set +e
	SOAK_TIME=abc "$src/experiments/soak/run" --build "$obj" --out "$tmp/bad" > /dev/null 2> "$tmp/bad.err"
	rc=$?
	set -e
	[ "$rc" = 2 ] && grep -q 'duration abc' "$tmp/bad.err" &&
		ok "SOAK_TIME=abc: exit 2: $(grep 'duration abc' "$tmp/bad.err")" || bad "SOAK_TIME=abc: exit $rc"
fi
exit $fail
