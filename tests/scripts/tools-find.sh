#!/usr/bin/env bash
# tools-find.sh - what a tool traces and how it starts and stops around it:
# (a) with no process mapping its library, a tool says so in one line on
#     stderr, with how to fix it and which process maps another
#     libblitz.so; with one mapping it, or with -p, it says nothing;
# (b) -p PID, attached to a sched-bench already running, finds the
#     libblitz.so it maps, counts its events, and exits by itself when it ends;
# (c) one SIGINT ends every tool, idle (blitz-events and
#     blitz-ewma in their ring buffer's poll), and one sent before a tool
#     is ready ends it too (a script's background job starts with SIGINT
#     ignored until the tool's handler is in place);
# (d) a tool installed in PREFIX/bin traces PREFIX/lib/libblitz.so, not a
#     build tree's beside PREFIX; a build tree's tool its tree's.
# No wait here assumes a speed: each waits for what the tool prints, the
# bounds (20 to 120 s) are for a tool that never prints it.  The warning
# comes at 2 s of the tool's clock (tools/usdt_target.c's watch decides
# before its 4th print of -j 1): once a tool has printed 5 times, it must
# be there, once, or never (with a process that maps the library, or -p).
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init
T="$obj/tools/bin"
unmapped='no process maps '

# What this script starts (tools, sched-bench, echo-bench) goes at its
# exit, whatever the exit: a program left running would be traced by the
# next test's tools.  jobs -pr: its children still running (not reaped,
# so no pid reused).
find_cleanup() {
	local p
	for p in $(jobs -pr); do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	tools_cleanup
}
trap find_cleanup EXIT

# A copy of the library that no process maps (another tree or a
# program on this machine may map $lib at any time).
mkdir -p "$tmp/priv"
cp "$(readlink -f "$lib")" "$tmp/priv/libblitz.so"
priv=$(readlink -f "$tmp/priv/libblitz.so")

# launch NAME ARGS: blitz-NAME ARGS in the background, out/err in
# $tmp/NAME.{out,err}; its pid in $launched.
launch() {
	local name=$1; shift
	: > "$tmp/$name.out"
	: > "$tmp/$name.err"
	"$T/blitz-$name" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" &
	launched=$!
}

# ready NAME PID: its ready line, or a failure (and the test ends).
ready() {
	wait_ready "$tmp/$1.err" "$2" && return 0
	kill -KILL "$2" 2>/dev/null || true
	bad "blitz-$1 not ready in $ready_secs s: $(cat "$tmp/$1.err")"
	finish
}

# prints FILE N: until FILE has N lines (a -j 1 tool's prints), 120 s at most.
prints() {
	local end=$((SECONDS + 120))
	until [ "$(wc -l < "$1")" -ge "$2" ]; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

# sigint NAME PID WHAT: one SIGINT; it must exit 0 within 20 s.
sigint() {
	local rc=0 t0=$SECONDS
	kill -INT "$2"
	if ! wait_exit "$2" 20; then
		bad "blitz-$1 $3: still running 20 s after one SIGINT"
		kill -KILL "$2" 2>/dev/null || true
		wait "$2" 2>/dev/null || true
		return
	fi
	wait "$2" || rc=$?
	if [ $rc -eq 0 ]; then
		ok "blitz-$1 $3: exited 0 after one SIGINT ($((SECONDS - t0)) s)"
	else
		bad "blitz-$1 $3: exit $rc after one SIGINT: $(cat "$tmp/$1.err")"
	fi
}

# --- (a) the warning -------------------------------------------------------
# An idle echo-bench server maps $lib, another libblitz.so than the copy:
# the warning names a process that maps one (it or another).
srv=
if [ -x "$obj/bin/echo-bench" ]; then
	mkfifo "$tmp/srv.in"
	"$obj/bin/echo-bench" --server-only --workers 1 < "$tmp/srv.in" > "$tmp/srv.addr" 2> "$tmp/srv.err" &
	srv=$!
	exec 7> "$tmp/srv.in"
	wait_line "$tmp/srv.addr" . 60 $srv || bad "echo-bench --server-only did not start: $(cat "$tmp/srv.err")"
fi

launch polltime -b "$priv" -j 1
p=$launched
ready polltime $p
t0=$SECONDS
wait_line "$tmp/polltime.err" "$unmapped" 120 $p && ok "unmapped: the warning $((SECONDS - t0)) s after the ready line"
prints "$tmp/polltime.out" 5 || bad "polltime -j 1: fewer than 5 prints in 120 s"
sigint polltime $p "(nothing maps its library)"
check "unmapped: one warning line, by the 5th print" "$(grep -c "$unmapped" "$tmp/polltime.err" || true)" 1
line=$(grep "$unmapped" "$tmp/polltime.err" || true)
echo "     $line"
case $line in
"blitz-polltime: $unmapped$priv yet"*"-p PID"*"-b PATH"*) ok "unmapped: names the library, -p and -b" ;;
*) bad "unmapped: the line: '$line'" ;;
esac
if [ -n "$srv" ]; then
	if [[ $line =~ \(process\ [0-9]+,\ .*,\ maps\ /.*libblitz\.so.*\)$ ]]; then
		ok "unmapped: names a process that maps another libblitz.so"
	else
		bad "unmapped: no process named, with echo-bench mapping $lib: '$line'"
	fi
fi

# With a process that maps it: nothing.
if [ -n "$srv" ]; then
	launch schedlat -b "$lib" -j 1
	p=$launched
	ready schedlat $p
	prints "$tmp/schedlat.out" 5 || bad "schedlat -j 1: fewer than 5 prints in 120 s"
	sigint schedlat $p "(echo-bench maps its library)"
	check "mapped: no warning while echo-bench maps $lib" \
		"$(grep -c "$unmapped" "$tmp/schedlat.err" || true)" 0
	exec 7>&-
	wait $srv || bad "echo-bench --server-only exited $?"
fi

# --- (b) -p on a running sched-bench ----------------------------------------
# One worker yielding until it is stopped; the tools attach to it running,
# once it maps libblitz.so.
"$bench" --workers 1 --bench yield_many --iters 1000000 --warmup 0 > /dev/null 2>&1 &
bpid=$!
wait_line "/proc/$bpid/maps" libblitz 60 $bpid || { bad "sched-bench did not map libblitz.so"; finish; }
launch events -p $bpid -j 1
ev=$launched
launch polltime -p $bpid -j 1
pt=$launched
ready events $ev
ready polltime $pt
# Its polls counted, and past the warning's time by the tool's clock.
end=$((SECONDS + 120))
until [ "$(wc -l < "$tmp/events.out")" -ge 5 ] && [ "$(wc -l < "$tmp/polltime.out")" -ge 5 ] &&
      [ "$(jq_py "$tmp/events.out" 'sum(x["events"]["poll_start"] for x in r)')" -gt 0 ] 2>/dev/null; do
	[ $SECONDS -lt $end ] || { bad "-p: no polls counted in 120 s"; break; }
	sleep 0.2
done
kill -TERM $bpid
wait $bpid || true
for t in events:$ev polltime:$pt; do
	n=${t%:*} p=${t#*:} rc=0
	if wait_exit $p 60; then
		wait $p || rc=$?
		check "-p: blitz-$n exits by itself (0) when the process ends" $rc 0
	else
		bad "-p: blitz-$n still running 60 s after its process ended"
		kill -KILL $p 2>/dev/null || true
	fi
	check "-p: blitz-$n's banner names the library the process maps" \
		"$(grep -c "in $(readlink -f "$lib") of PID $bpid\.\.\. Hit Ctrl-C" "$tmp/$n.err" || true)" 1
	check "-p: blitz-$n never says the library is unmapped" \
		"$(grep -c "$unmapped" "$tmp/$n.err" || true)" 0
done
check "-p: blitz-events counted the process's polls" \
	"$(jq_py "$tmp/events.out" 'sum(x["events"]["poll_start"] for x in r) > 0 and all(w["pid"] == '$bpid' for x in r for w in x["workers"])')" True
check "-p: blitz-polltime counted its polls" \
	"$(jq_py "$tmp/polltime.out" 'sum(h["count"] for x in r for h in x["histograms"] if h["label"] == "all") > 0')" True

# --- (c) one SIGINT ---------------------------------------------------------
# Idle: ready, then past the warning (2 s of waiting), then one SIGINT.
for t in "$T"/blitz-*; do
	n=${t##*/blitz-}
	launch "$n" -b "$priv" -j
	p=$launched
	ready "$n" $p
	wait_line "$tmp/$n.err" "$unmapped" 60 $p || bad "blitz-$n: no warning in 60 s"
	sigint "$n" $p "(idle)"
	[ -s "$tmp/$n.out" ] || bad "blitz-$n (idle): printed nothing at SIGINT"
done
# Before it is ready: as soon as its handler is in place (SigCgt, once
# it has exec'ed), likely while it loads or attaches.
caught() {
	local c
	[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$(readlink -f "$T/blitz-events")" ] || return 1
	c=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
	[ -n "$c" ] && [ $((0x$c & 2)) -ne 0 ]
}
early=0
for _ in 1 2 3; do
	launch events -b "$priv" -j
	p=$launched
	end=$((SECONDS + 60))
	until caught $p; do
		kill -0 $p 2>/dev/null && [ $SECONDS -lt $end ] || break
	done
	grep -q 'Hit Ctrl-C' "$tmp/events.err" || early=$((early + 1))
	sigint events $p "(SIGINT once its handler is in place)"
done
ok "blitz-events: $early of the 3 SIGINTs came before the ready line"

# --- (d) the default library ------------------------------------------------
# A build tree's layout with an install under it: tree/lib, tree/tools/bin,
# tree/prefix/{bin,lib}, each library a copy of its own.
mkdir -p "$tmp/tree/lib" "$tmp/tree/tools/bin" "$tmp/tree/prefix/bin" "$tmp/tree/prefix/lib"
cp "$priv" "$tmp/tree/lib/libblitz.so"
cp "$priv" "$tmp/tree/prefix/lib/libblitz.so"
cp "$T/blitz-polltime" "$tmp/tree/prefix/bin/"
cp "$T/blitz-polltime" "$tmp/tree/tools/bin/"
tree=$(readlink -f "$tmp/tree")
# default DIR [ENV=V]: DIR/blitz-polltime, no -b: the library its banner names.
default() {
	local dir=$1 p rc=0; shift
	: > "$tmp/def.err"
	env -u BLITZ_LIB "$@" "$dir/blitz-polltime" -j > /dev/null 2> "$tmp/def.err" &
	p=$!
	if ! wait_ready "$tmp/def.err" $p; then
		kill -KILL $p 2>/dev/null || true
		wait $p 2>/dev/null || true
		echo "not ready: $(cat "$tmp/def.err")"
		return
	fi
	kill -INT $p
	wait $p || rc=$?
	sed -n 's/^Tracing poll time in \(.*\)\.\.\. Hit Ctrl-C to end\.$/\1/p' "$tmp/def.err"
}
check "installed: PREFIX/bin/blitz-polltime traces PREFIX/lib/libblitz.so" \
	"$(default "$tree/prefix/bin")" "$tree/prefix/lib/libblitz.so"
check "build tree: BUILD/tools/bin/blitz-polltime traces BUILD/lib/libblitz.so" \
	"$(default "$tree/tools/bin")" "$tree/lib/libblitz.so"
check "installed, \$BLITZ_LIB first" \
	"$(default "$tree/prefix/bin" BLITZ_LIB="$tree/lib/libblitz.so")" "$tree/lib/libblitz.so"
finish
