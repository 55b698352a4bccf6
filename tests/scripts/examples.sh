#!/usr/bin/env bash
# examples.sh - every program of examples/ (the example-y list of
# examples/Kbuild) runs on each I/O backend, exits 0 and prints its
# summary line with the right numbers and the backend it ran on; each
# example also compiles on its own against the public headers and the
# shared library (as examples/README.md builds one out of the tree); and,
# as root with bpftrace and the tools, examples/trace.sh prints bpftrace's
# maps and blitz-schedlat's histogram.  Exit 77: the examples are not built.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

mapfile -t examples < <(sed -n 's/^example-y *+= *\([a-z0-9_-]*\).*/\1/p' "$src/examples/Kbuild")
[ ${#examples[@]} -gt 0 ] || { echo "FAIL no example-y in examples/Kbuild"; exit 1; }
for e in "${examples[@]}"; do
	[ -x "$obj/examples/$e" ] || { echo "no $obj/examples/$e (make examples)"; exit 77; }
done

# expect NAME BACKEND: the line NAME must print (an extended regex).
expect() {
	case $1 in
	hello)    echo "^hello: 4 tasks, [0-9]+ workers, backend $2, total 5005000$" ;;
	echo)     echo "^echo: 200 of 200 clients echoed 10 x 100 bytes \($2\)$" ;;
	timeout)  echo "^timeout: after [0-9.]+ ms, at step 4 of 4; its read ended with \"Operation canceled\"; then HELLO got \"WORLD\" \($2\)$" ;;
	pipeline) echo "^pipeline: 20000 squares of 1\.\.20000, sum 2666866670000 \($2, [0-9]+ workers\)$" ;;
	blocking) echo "^blocking: main's job gave 144; [0-9]+ pool threads started; the ticker ticked [0-9]+ times meanwhile \($2\)$" ;;
	*)        echo "" ;;
	esac
}

# The backends, from the program (BLITZ_BACKEND's words but auto).  One
# that cannot start here makes the runtime fall back, saying "asked for"
# on stderr: that backend is skipped, with the reason.
backends=$("$obj/bin/sched-bench" --list-backends)
for b in $backends; do
	for e in "${examples[@]}"; do
		want=$(expect "$e" "$b")
		[ -n "$want" ] || { bad "$e: examples.sh does not know what it prints (add it to expect)"; continue; }
		rc=0
		# A hang is a failure with a message, not the harness's timeout.
		BLITZ_BACKEND=$b timeout 120 "$obj/examples/$e" > "$tmp/out" 2> "$tmp/err" || rc=$?
		if grep -q "asked for $b" "$tmp/err"; then
			echo "skip $b: $(grep -m1 'asked for' "$tmp/err")"
			break
		fi
		if [ $rc -ne 0 ]; then
			bad "$b $e: exit $rc: $(tail -n 3 "$tmp/err" "$tmp/out" | tr '\n' ' ')"
		elif grep -qv '^blitz: ' "$tmp/err"; then
			# The runtime's own notices ("blitz: ...") are allowed.
			bad "$b $e: wrote to stderr: $(grep -v '^blitz: ' "$tmp/err" | head -n 3 | tr '\n' ' ')"
		elif line=$(grep -E "$want" "$tmp/out"); then
			ok "$b $e: $line"
		else
			bad "$b $e: no line matching /$want/ in: $(tr '\n' '|' < "$tmp/out")"
		fi
	done
done

# Out of the tree: only <blitz.h> and -lblitz, as a program of one's own
# (sanitizer builds need their runtime at link time: not tried there).
if [ -n "${BLITZ_SANITIZE:-}" ]; then
	echo "skip the standalone builds: BLITZ_SANITIZE=$BLITZ_SANITIZE"
else
	for e in "${examples[@]}"; do
		if cc -std=gnu11 -Wall -Wextra -Werror -I"$src/include" -o "$tmp/$e" "$src/examples/$e.c" \
		      -L"$obj/lib" -lblitz -Wl,-rpath,"$obj/lib" 2> "$tmp/cc.err" &&
		   "$tmp/$e" > /dev/null 2>&1; then
			ok "$e builds alone (cc $e.c -I include -lblitz) and runs"
		else
			bad "$e alone: $(head -n 5 "$tmp/cc.err" | tr '\n' ' ')"
		fi
	done
fi

# trace.sh, where it can run: root, bpftrace, the tools, no sanitizer.
why=
[ -z "${BLITZ_SANITIZE:-}" ] || why="BLITZ_SANITIZE=$BLITZ_SANITIZE"
[ "$(id -u)" -eq 0 ] || why=${why:-"not root"}
command -v bpftrace > /dev/null || why=${why:-"bpftrace not installed"}
[ -x "$obj/tools/bin/blitz-schedlat" ] || why=${why:-"no $obj/tools/bin/blitz-schedlat (make tools)"}
if [ -n "$why" ]; then
	echo "skip trace.sh: $why"
elif BLITZ_OBJTREE=$obj timeout 300 bash "$src/examples/trace.sh" > "$tmp/trace" 2>&1 &&
     grep -q '^@polls_by_worker\[[0-9]*\]: [1-9]' "$tmp/trace" &&
     grep -q '^@chan_waits\[' "$tmp/trace" &&
     grep -Eq '^ +0 -> 1 +: [0-9]+ +\|[* ]{40}\|$' "$tmp/trace"; then
	ok "trace.sh: bpftrace's maps and blitz-schedlat's histogram of pipeline"
else
	bad "trace.sh:"; tail -n 30 "$tmp/trace"
fi
exit $fail
