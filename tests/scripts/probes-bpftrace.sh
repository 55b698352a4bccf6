#!/usr/bin/env bash
# probes-bpftrace.sh - the probes tell the truth: counted by bpftrace on a
# known workload, they equal the runtime's own statistics; and a probe fires
# only where documented (BLITZ_LIFO=0: no lifo_hit at all).
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
lib="$obj/lib/libblitz.so" bench="$obj/bin/sched-bench"
[ "$(id -u)" -eq 0 ] || { echo "needs root to attach uprobes"; exit 77; }
command -v bpftrace >/dev/null || { echo "bpftrace not installed"; exit 77; }
grep -q '^CONFIG_PROBES=y' "$( [ -f "$src/.config" ] && echo "$src/.config" || echo "$src/configs/defconfig")" ||
	{ echo "CONFIG_PROBES is off"; exit 77; }
[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
ulimit -l unlimited 2>/dev/null || true

tmp=$(mktemp -d)
bt_pid=
cleanup() { [ -n "$bt_pid" ] && "$src/scripts/stop-bpftrace" "$bt_pid"; rm -rf "$tmp"; }
trap cleanup EXIT

# run_traced ENV... : run the workload under bpftrace; leaves $tmp/bt and $tmp/stats
run_traced() {
	# Attach by library path (bpftrace 0.17 cannot resolve a library's USDT
	# for `-c` before the library is loaded), then start the workload.
	bpftrace -e "
		BEGIN { printf(\"ready\\n\"); }
		usdt:$lib:blitz:steal { @stolen = sum(arg2); @steals = count(); }
		usdt:$lib:blitz:lifo_hit { @lifo = count(); }
		usdt:$lib:blitz:task_poll_start { @polls = count(); }
		usdt:$lib:blitz:task_spawn { @spawned = count(); }
		usdt:$lib:blitz:park { @parks = count(); }
		usdt:$lib:blitz:task_complete { @completed = count(); }" > "$tmp/bt" 2>&1 &
	bt_pid=$!
	for _ in $(seq 300); do grep -q ready "$tmp/bt" && break; sleep 0.1; done
	grep -q ready "$tmp/bt" || { echo "bpftrace did not attach:"; cat "$tmp/bt"; exit 77; }
	# A hang is a failure with a message, not the harness's timeout.
	timeout 300 env "$@" "$bench" --bench all --iters 1 --warmup 0 --stats > /dev/null 2> "$tmp/stats" ||
		{ echo "FAIL sched-bench $* exited $? (124: hung for 300 s)"; cat "$tmp/stats"; exit 1; }
	"$src/scripts/stop-bpftrace" "$bt_pid" || true; wait "$bt_pid" || true; bt_pid=
}
bt() { awk -v k="@$1:" '$1==k {print $2}' "$tmp/bt" | grep . || echo 0; }
stat_total() { sed -n "s/.*stats:.* $1=\([0-9]*\).*/\1/p" "$tmp/stats"; }
stat_sum() { grep -o " $1=[0-9]*" "$tmp/stats" | cut -d= -f2 | awk '{s+=$1} END {print s+0}'; }

fail=0
check() { # name traced expected
	if [ "$2" = "$3" ]; then echo "ok   $1: probes $2 = stats $3"
	else echo "FAIL $1: probes $2 != stats $3"; fail=1; fi
}

run_traced BLITZ_LIFO=1
check "task_poll_start vs polled" "$(bt polls)" "$(stat_total polled)"
check "task_spawn vs spawned" "$(bt spawned)" "$(stat_total spawned)"
check "steal count vs stolen" "$(bt stolen)" "$(stat_total stolen)"
check "steal events vs steals" "$(bt steals)" "$(stat_sum steals)"
check "lifo_hit vs lifo_hits" "$(bt lifo)" "$(stat_sum lifo_hits)"
# sched-bench prints its statistics before the runtime stops: a worker may
# park once more after that (probes >= stats, by at most a few per worker).
parks=$(bt parks) parked=$(stat_total parked)
if [ "$parks" -ge "$parked" ] && [ "$parks" -le $((parked + 8)) ]; then
	echo "ok   park vs parked: probes $parks, stats $parked (+ parks after the snapshot)"
else
	echo "FAIL park vs parked: probes $parks, stats $parked"; fail=1
fi
[ "$(bt lifo)" -gt 0 ] || { echo "FAIL no lifo_hit with the LIFO slot on"; fail=1; }

run_traced BLITZ_LIFO=0 BLITZ_TRACE_SAMPLE=1
check "BLITZ_LIFO=0: lifo_hit" "$(bt lifo)" 0
check "BLITZ_LIFO=0: lifo_hits" "$(stat_sum lifo_hits)" 0
check "BLITZ_LIFO=0: polls" "$(bt polls)" "$(stat_total polled)"

# Sampling: one task in 4 traced, each traced whole.
run_traced BLITZ_TRACE_SAMPLE=4
spawned=$(stat_total spawned) traced=$(bt spawned)
check "BLITZ_TRACE_SAMPLE=4: traced tasks all complete" "$(bt completed)" "$traced"
lo=$((spawned / 4 - 8)) hi=$((spawned / 4 + 8))
if [ "$traced" -ge "$lo" ] && [ "$traced" -le "$hi" ]; then
	echo "ok   BLITZ_TRACE_SAMPLE=4: $traced of $spawned tasks traced"
else
	echo "FAIL BLITZ_TRACE_SAMPLE=4: $traced of $spawned tasks traced, expected about a quarter"; fail=1
fi
[ "$(bt lifo)" = "$(stat_sum lifo_hits)" ] && echo "ok   scheduler probes are not sampled" ||
	{ echo "FAIL lifo_hit sampled"; fail=1; }
exit $fail
