#!/usr/bin/env bash
# task-macros.sh - the coroutine macros of blitz/task.h in a user's program:
# tests/user/co_rules.c (every rule the header states) compiles with no
# warning under gcc and clang, -Wall -Wextra -Wimplicit-fallthrough -Werror,
# plain and with AddressSanitizer and UBSan, and runs to its "ok"; and
# tests/user/co_nested_switch.c (a YIELD inside the program's own switch)
# is stopped with SIGABRT and a message naming its file, the END line and
# the YIELD line, where it would otherwise report itself finished.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
# The programs link the build's libblitz.so; a sanitized library needs the
# same sanitizer's runtime in the program: every combination runs in the
# plain build, where the library has none.
[ -z "${BLITZ_SANITIZE:-}" ] || { echo "task-macros: checked in the plain run, not under SANITIZE=$BLITZ_SANITIZE"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
u=$src/tests/user
line_of() { grep -n "$1" "$u/co_nested_switch.c" | cut -d: -f1; }
yield_line=$(line_of CO_NESTED_YIELD_LINE) end_line=$(line_of CO_NESTED_END_LINE)
compilers=gcc
if command -v clang >/dev/null; then compilers="gcc clang"; else echo "note: clang not installed, gcc only"; fi
fail=0 runs=0
for cc in $compilers; do
	for san in none address undefined; do
		flags=(-std=gnu11 -Wall -Wextra -Wimplicit-fallthrough -Werror -O1 -g -I"$src/include")
		[ $san = none ] || flags+=(-fsanitize=$san -fno-sanitize-recover=all)
		link=(-L"$obj/lib" -lblitz -Wl,-rpath,"$obj/lib")
		for p in co_rules co_nested_switch; do
			if ! $cc "${flags[@]}" "$u/$p.c" -o "$tmp/$p" "${link[@]}" 2> "$tmp/cc.log"; then
				echo "FAIL $cc $san: $p.c does not compile cleanly:"; cat "$tmp/cc.log"; fail=1; continue 2
			fi
		done
		if ! out=$("$tmp/co_rules" 2>&1) || [ "$out" != "co_rules: ok" ]; then
			echo "FAIL $cc $san: co_rules: $out"; fail=1
		fi
		rc=0
		(ulimit -c 0; exec "$tmp/co_nested_switch" > "$tmp/out" 2> "$tmp/err") 2> /dev/null || rc=$?
		want="co_nested_switch.c:$end_line: coroutine resumed at line $yield_line,"
		if [ $rc -ne 134 ] || ! grep -qF "$want" "$tmp/err"; then
			echo "FAIL $cc $san: co_nested_switch: exit $rc (want 134, SIGABRT), stderr:"
			cat "$tmp/err" "$tmp/out"; fail=1
		fi
		runs=$((runs + 1))
		echo "ok   $cc $san"
	done
done
[ $fail -eq 0 ] || exit 1
echo "task-macros: $runs compiler/sanitizer builds, each warning-free, rules held, nested switch caught"
