#!/usr/bin/env bash
# build.sh - the Kbuild-style build does what `make help` promises: quiet
# lines, V=1 commands, O= out of tree, rebuilds on a header or flag change
# (and only then), defaults without a .config, defconfig, help.
set -euo pipefail
src=${BLITZ_SRCTREE:?}
# The build system does not depend on the sanitizer a tree is built with:
# checked once, in the plain run (a minute of compiling per pass in CI).
[ -z "${BLITZ_SANITIZE:-}" ] || { echo "build: checked in the plain run, not under SANITIZE=$BLITZ_SANITIZE"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
o=$tmp/out
# A copy of the sources, so that touching headers and .config stays here.
mkdir -p "$tmp/src"
tar -C "$src" --exclude='./build*' --exclude=./results --exclude=./.git -cf - . | tar -C "$tmp/src" -xf -
cd "$tmp/src"
rm -f .config
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

make O="$o" -j2 > "$tmp/quiet.log" 2>&1 || { cat "$tmp/quiet.log"; exit 1; }
grep -qE '^  CC      core/sched/queue\.o$' "$tmp/quiet.log" && ok "quiet output" || bad "no '  CC      core/sched/queue.o' line"
grep -q -- '-Werror' "$tmp/quiet.log" && bad "quiet output shows commands" || true
[ -f "$o/lib/libblitz.a" ] && [ -f "$o/lib/libblitz.so" ] && [ -x "$o/bin/sched-bench" ] &&
	ok "out-of-tree artifacts in O=" || bad "artifacts missing in $o"
[ ! -e build ] && ok "nothing built in the source tree" || bad "O= still wrote build/"
grep -q '#define CONFIG_PROBES 1' "$o/include/generated/autoconf.h" &&
	ok "no .config: configs/defconfig used" || bad "autoconf.h without the defaults"

make O="$o" > "$tmp/again.log" 2>&1
grep -q '  CC ' "$tmp/again.log" && bad "a second make rebuilt something" || ok "nothing to do the second time"

sleep 1; touch core/sched/queue.h
make O="$o" > "$tmp/header.log" 2>&1
grep -q 'CC      core/sched/queue.o' "$tmp/header.log" && ok "header change rebuilds its users" || bad "core/sched/queue.h change did not rebuild core/sched/queue.o"
grep -q 'CC      core/sched/config.o' "$tmp/header.log" && bad "header change rebuilt an object that does not include it" || true

make O="$o" W=1 > "$tmp/flags.log" 2>&1 || { cat "$tmp/flags.log"; bad "W=1 build failed"; }
grep -q 'CC      core/sched/config.o' "$tmp/flags.log" && ok "flag change (W=1) rebuilds" || bad "W=1 did not rebuild"
make O="$o" W=1 -j2 tests > "$tmp/w1tests.log" 2>&1 && ok "W=1: the tests build too" ||
	{ grep -m5 error "$tmp/w1tests.log"; bad "W=1 tests build failed"; }

make O="$o" V=1 > "$tmp/v1.log" 2>&1
touch core/sched/idle.c; make O="$o" V=1 > "$tmp/v1.log" 2>&1
grep -q -- '-Wall -Wextra -Werror' "$tmp/v1.log" && ok "V=1 prints full commands with -Wall -Wextra -Werror" || bad "V=1 shows no command"

make defconfig > /dev/null && cmp -s .config configs/defconfig && ok "make defconfig" || bad "defconfig did not write .config"
make help > "$tmp/help" 2>&1
for t in all check run tools install clean distclean defconfig help O= V= W= SANITIZE= PREFIX= DESTDIR=; do
	grep -q -- "$t" "$tmp/help" || bad "make help does not list $t"
done
ok "make help lists the targets and variables"
make SANITIZE=bogus O="$o" > "$tmp/san.log" 2>&1 && bad "SANITIZE=bogus accepted" ||
	grep -q 'accepted values are thread, address, undefined' "$tmp/san.log" && ok "bad SANITIZE rejected clearly"
exit $fail
