#!/usr/bin/env bash
# examples/trace.sh - watch an example from outside, as root: first with
# bpftrace on the USDT probes of libblitz.so, then with blitz-schedlat.
#
#	examples/trace.sh [EXAMPLE]	(default: pipeline)
#
# BLITZ_OBJTREE names the build tree (default: build/ in the source tree).
# The probes live in the library, so a tracer attaches to libblitz.so by
# path, before the program starts: every process that maps the library
# afterwards is traced (docs/probes.md lists every probe and argument).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
obj=${BLITZ_OBJTREE:-$src/build}
lib=$obj/lib/libblitz.so
prog=$obj/examples/${1:-pipeline}
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill -INT "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "trace.sh: run it as root (BPF needs CAP_BPF and CAP_PERFMON)"; exit 1; }
[ -x "$prog" ] && [ -e "$lib" ] || { echo "trace.sh: no $prog or $lib (make)"; exit 1; }

# What BPF needs here: locked memory for its maps, and tracefs (where the
# uprobes are registered), mounted if it is not.
ulimit -l unlimited 2>/dev/null || true
[ -e /sys/kernel/tracing/uprobe_events ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true

# attached FILE PID: wait until the tracer printed its banner (it has attached).
attached() {
	for _ in $(seq 600); do
		grep -q 'Hit Ctrl-C' "$1" && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	echo "trace.sh: the tracer did not attach:"; cat "$1" "$tmp"/*.err; exit 1
}

# 1. bpftrace: polls per worker (-1: a thread helping in blitz_join), the
#    channel waits (sync_wait's kind 8: a send found the channel full, 9: a
#    receive found it empty; probes/blitz_probe_codes.h), and steal sizes.
bpftrace -e '
BEGIN { printf("Tracing %s... Hit Ctrl-C to end.\n", str($1)); }
usdt:$1:blitz:task_poll_start { @polls_by_worker[arg0] = count(); }
usdt:$1:blitz:sync_wait /arg0 == 8/ { @chan_waits["send, channel full"] = count(); }
usdt:$1:blitz:sync_wait /arg0 == 9/ { @chan_waits["recv, channel empty"] = count(); }
usdt:$1:blitz:steal { @tasks_per_steal = hist(arg2); }' "$(readlink -f "$lib")" > "$tmp/bt.out" 2> "$tmp/bt.err" &
pid=$!
attached "$tmp/bt.out" "$pid"
echo "== $prog, traced by bpftrace"
"$prog"
# bpftrace prints its maps when interrupted; stop-bpftrace insists until it does.
"$src/scripts/stop-bpftrace" "$pid"
wait "$pid" || true
pid=
echo "== bpftrace"
grep -v 'Hit Ctrl-C\|^Attaching' "$tmp/bt.out"

# 2. blitz-schedlat: how long each queued task waited for its poll.  In its
#    default (summary) mode it reads the histograms the runtime keeps while
#    a tracer is attached, so the run it describes is hardly slowed.
tool=$obj/tools/bin/blitz-schedlat
[ -x "$tool" ] || { echo "trace.sh: no $tool (make tools)"; exit 1; }
"$tool" -b "$lib" > "$tmp/schedlat.out" 2> "$tmp/schedlat.err" &
pid=$!
attached "$tmp/schedlat.err" "$pid"
"$prog" > /dev/null
kill -INT "$pid"
wait "$pid"
pid=
echo "== blitz-schedlat: schedule latency of that run"
cat "$tmp/schedlat.out"
