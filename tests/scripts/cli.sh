#!/usr/bin/env bash
# cli.sh - every program but the BPF tools (tools-cli.sh covers those)
# answers a bad command line with one line on stderr, nothing on stdout and
# a non-zero exit, before doing any work: the benches, the experiment
# scripts (experiments/*/run, experiments/lib, the peers' scripts, every
# summarize and plot), tools/'s scripts and scripts/.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
PY=$(command -v /usr/bin/python3 || command -v python3)
fail=0 n=0

# refuses NAME CMD...: CMD exits non-zero with one line on stderr, no stdout.
refuses() {
	local name=$1 rc=0
	shift
	timeout 120 "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || rc=$?
	n=$((n + 1))
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && [ ! -s "$tmp/out" ]; then
		return
	fi
	echo "FAIL $name: exit $rc, $(wc -l < "$tmp/err") lines on stderr, $(wc -c < "$tmp/out") bytes on stdout:"
	head -n 4 "$tmp/err" | sed 's/^/  /'
	fail=1
}

# helps NAME CMD...: CMD --help prints a usage and exits 0 without running
# anything (the peers' scripts pass the options they do not know on to a
# benchmark: their --help once started a whole run).
helps() {
	local name=$1 rc=0
	shift
	timeout 20 "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || rc=$?
	n=$((n + 1))
	if [ $rc -eq 0 ] && grep -q 'usage:' "$tmp/out" && ! grep -q '^round ' "$tmp/err"; then
		return
	fi
	echo "FAIL $name: exit $rc, or no usage on stdout, or it started a run:"
	head -n 4 "$tmp/err" | sed 's/^/  /'
	fail=1
}
for r in run-sched run-echo run-sync run-blocking; do
	helps "peers/$r --help" "$src/experiments/peers/$r" --help
done

for b in "$obj"/bin/*-bench; do
	p=$(basename "$b")
	refuses "$p --no-such-option" "$b" --no-such-option
	refuses "$p --workers (no value)" "$b" --workers
	for v in 0 -1 abc 99999999999999999999; do
		refuses "$p --workers $v" "$b" --workers "$v"
	done
	refuses "$p extra argument" "$b" extra
	[ "$p" = echo-bench ] || [ "$p" = fs-bench ] || refuses "$p --bench nosuch" "$b" --bench nosuch
done

for r in "$src"/experiments/*/run; do
	e=$(basename "$(dirname "$r")")
	refuses "$e/run --no-such-option" "$r" --no-such-option
	refuses "$e/run --out (no value)" "$r" --out
	refuses "$e/run --build /nonexistent" "$r" --build /nonexistent
	refuses "$e/run extra argument" "$r" extra
done
refuses "run-default --no-such-option" "$src/experiments/run-default" --no-such-option
refuses "run-default /nonexistent" "$src/experiments/run-default" /nonexistent
refuses "lib/ab --no-such-option" "$src/experiments/lib/ab" --no-such-option
refuses "lib/ab (no arguments)" "$src/experiments/lib/ab"
refuses "peers/run-sched --no-such-option" "$src/experiments/peers/run-sched" "$obj" --no-such-option
refuses "peers/run-echo --no-such-option" "$src/experiments/peers/run-echo" "$obj" --no-such-option
refuses "peers/alternate (no arguments)" "$src/experiments/peers/alternate"
# run-sync and run-blocking build first (make progs): not in a sanitizer tree.
if [ -z "${BLITZ_SANITIZE:-}" ]; then
	refuses "peers/run-sync --no-such-option" "$src/experiments/peers/run-sync" "$obj" --no-such-option
	refuses "peers/run-blocking --workers 0" "$src/experiments/peers/run-blocking" "$obj" -- --workers 0
fi
for c in "$src"/experiments/peers/compare*; do
	refuses "peers/$(basename "$c") --no-such-option" "$PY" "$c" --no-such-option
	refuses "peers/$(basename "$c") /nonexistent" "$PY" "$c" /nonexistent
done
for s in "$src"/experiments/*/summarize "$src"/experiments/*/plot; do
	e=$(basename "$(dirname "$s")")/$(basename "$s")
	refuses "$e --no-such-option" "$PY" "$s" --no-such-option
	refuses "$e /nonexistent" "$PY" "$s" /nonexistent
	refuses "$e (no arguments)" "$PY" "$s"
done

for t in measure-cost measure-instructions measure-modes; do
	refuses "tools/$t --no-such-option" "$src/tools/$t" --no-such-option
	refuses "tools/$t -O (no value)" "$src/tools/$t" -O
	refuses "tools/$t -O /nonexistent" "$src/tools/$t" -O /nonexistent
	refuses "tools/$t extra argument" "$src/tools/$t" extra
done
refuses "tools/plot --no-such-option" "$PY" "$src/tools/plot" --no-such-option
refuses "tools/plot /nonexistent" "$PY" "$src/tools/plot" /nonexistent
refuses "tools/bpftrace/run (no arguments)" "$src/tools/bpftrace/run"
refuses "tools/bpftrace/run nosuch" "$src/tools/bpftrace/run" nosuch "$obj/lib/libblitz.so"

refuses "scripts/install-deps --no-such-option" "$src/scripts/install-deps" --no-such-option
refuses "scripts/stop-bpftrace abc" "$src/scripts/stop-bpftrace" abc
refuses "scripts/fresh-clone-check -n 0" "$src/scripts/fresh-clone-check" -n 0
refuses "scripts/fresh-clone-check -c (not a commit)" "$src/scripts/fresh-clone-check" -c no-such-commit
refuses "scripts/fresh-clone-check extra argument" "$src/scripts/fresh-clone-check" extra
refuses "scripts/gen-autoconf (no arguments)" "$src/scripts/gen-autoconf"
refuses "scripts/gen-autoconf /nonexistent" "$src/scripts/gen-autoconf" /nonexistent
refuses "scripts/gen-probes (no arguments)" "$src/scripts/gen-probes"

[ $fail -eq 1 ] || echo "ok   $n command lines: each bad one refused in one line with a non-zero exit, each --help answered"
exit $fail
