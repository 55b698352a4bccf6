#!/usr/bin/env bash
# tests/scripts/fuzz-corpus.sh - every fuzz target (tests/fuzz/) replays its
# seed corpus, tests/fuzz/corpus/NAME/, without the fuzzer: the inputs that
# crashed once stay there, so this is their regression test.  A crash or a
# failed property aborts the replay.  Every target built must have a corpus.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}

shopt -s nullglob
targets=("$obj"/tests/fuzz-*)
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz target in $obj/tests"; exit 1; }
for t in "${targets[@]}"; do
	[ -x "$t" ] || continue
	name=${t##*/fuzz-}
	corpus=$src/tests/fuzz/corpus/$name
	[ -d "$corpus" ] || { echo "fuzz-$name: no corpus $corpus"; exit 1; }
	# The programs' own messages (bad options, --help) are dropped; on a
	# failure the replay runs again to show what failed.
	"$t" "$corpus" 2>/dev/null >"$obj/tests/replay-$name.log" ||
		{ echo "fuzz-$name failed on its corpus:"; "$t" "$corpus" 2>&1 | tail -n 20; exit 1; }
	tail -n 1 "$obj/tests/replay-$name.log"
done
