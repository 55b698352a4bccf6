#!/usr/bin/env bash
# tools-bpftrace.sh - every bpftrace twin in tools/bpftrace/ attaches
# (through tools/bpftrace/run) and prints its maps for one run of a known
# workload, and its totals equal the runtime's statistics: the scheduler's
# twins all at once on sched-bench, the blocking pool's on blocking-bench.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
[ "$(id -u)" -eq 0 ] || skip "needs root to attach uprobes"
command -v bpftrace >/dev/null || skip "bpftrace not installed"
cfg="$src/configs/defconfig"; [ -f "$src/.config" ] && cfg="$src/.config"
grep -q '^CONFIG_PROBES=y' "$cfg" || skip "CONFIG_PROBES is off"
[ -x "$bench" ] && [ -x "$bbench" ] && [ -e "$lib" ] || skip "no $bench, $bbench or $lib (run make first)"
[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
ulimit -l unlimited 2>/dev/null || true
tmp=$(mktemp -d)
workload=(--bench all --iters 1 --warmup 0)
[ "${BLITZ_SANITIZE:-}" = thread ] && workload=(--bench spawn_many_local --iters 1 --warmup 0)

# Twins of tools for the blocking pool watch blocking-bench; the others
# watch sched-bench, all at once.
declare -A load_of=([blockinglat]=run_blocking)
names=() sched_names=()
for f in "$src"/tools/bpftrace/*.bt; do
	n=$(basename "$f" .bt)
	names+=("$n")
	[ -n "${load_of[$n]:-}" ] || sched_names+=("$n")
done
trap tools_cleanup EXIT

for n in "${sched_names[@]}"; do start_twin "$n"; done
for n in "${sched_names[@]}"; do wait_twin "$n"; done
run_workload
stop_twins
cp "$tmp/stats" "$tmp/sched.stats"
for n in "${!load_of[@]}"; do
	start_twin "$n"
	wait_twin "$n"
	"${load_of[$n]}"
	stop_twins
	cp "$tmp/stats" "$tmp/$n.stats"
done
cp "$tmp/sched.stats" "$tmp/stats"

val() { bt_val "$tmp/$1.bt.out" "$2"; }
hist_total() { bt_hist_total "$tmp/$1.bt.out" "$2"; }

for n in "${names[@]}"; do
	if grep -q '^@' "$tmp/$n.bt.out"; then ok "$n.bt: attached and printed its maps"
	else bad "$n.bt printed no map:"; cat "$tmp/$n.bt.out"; fi
done
polled=$(stat_total polled)
check "schedlat.bt: @count == polled" "$(val schedlat count)" "$polled"
check "schedlat.bt: histogram total == polled" "$(hist_total schedlat usecs)" "$polled"
check "schedlat.bt: no unpaired poll" "$(val schedlat unpaired)" 0
check "polltime.bt: histogram total == polled" "$(hist_total polltime nsecs)" "$polled"
check "tasksrc.bt: @total == polled" "$(val tasksrc total)" "$polled"
check "tasksrc.bt: source SRC_LIFO == lifo_hits" \
	"$(awk -v c="$(probe_code SRC_LIFO)" '$0 ~ "^@polls\\[-?[0-9]+, " c "\\]:" { s += $NF } END { print s + 0 }' "$tmp/tasksrc.bt.out")" \
	"$(stat_sum lifo_hits)"
check "steal.bt: @stolen == stolen" "$(val steal stolen)" "$(stat_total stolen)"
# events.bt: @events is keyed by the writer (worker, or thread: not a
# worker) and enum blitz_event_type (1 spawn, 3 poll_start, 4 poll_end, 6 park).
ev_count() {
	awk -v k="@events[$1," -v t="$2]:" '$1 == k && $2 == t { s += $3 } END { print s + 0 }' \
		"$tmp/events.bt.out"
}
check "events.bt: the workers' poll_start records == polled" "$(ev_count worker 3)" "$polled"
check "events.bt: the workers' poll_end records == polled" "$(ev_count worker 4)" "$polled"
check "events.bt: spawn records, the workers' and the other threads' == spawned" \
	"$(( $(ev_count worker 1) + $(ev_count thread 1) ))" "$(stat_total spawned)"
check "events.bt: @stolen == stolen" "$(val events stolen)" "$(stat_total stolen)"
check_after_stats "events.bt: park records == parked" "$(ev_count worker 6)" "$(stat_total parked)"
check "steal.bt: @steals == steals" "$(val steal steals)" "$(stat_sum steals)"
check "steal.bt: size histogram total == steals" "$(hist_total steal tasks)" "$(stat_sum steals)"
check_after_stats "park.bt: @parks == parked" "$(val park parks)" "$(stat_total parked)"
check "park.bt: every park ended" "$(val park sleeps)" "$(val park parks)"
check "park.bt: histogram total == parks" "$(hist_total park usecs)" "$(val park parks)"
check "park.bt: no unpark without a duration (slept_ns 0)" "$(val park unpaired)" 0
check "top.bt: polls == polled" "$(val top t_polls)" "$polled"
check "top.bt: lifo_hits" "$(val top t_lifo_hits)" "$(stat_sum lifo_hits)"
check "top.bt: global_batches" "$(val top t_global_batches)" "$(stat_sum global_batches)"
check "top.bt: overflows" "$(val top t_overflows)" "$(stat_sum overflows)"
check_after_stats "top.bt: steal_fails" "$(val top t_steal_fails)" "$(stat_sum steal_fails)"
if bt_has_hist "$tmp/ewma.bt.out" avg_poll_ns; then ok "ewma.bt: average poll time histogram"
else bad "ewma.bt: no @avg_poll_ns histogram"; fi
[ "$(val ewma updates)" -gt 0 ] && ok "ewma.bt: updates counted" || bad "ewma.bt: no updates"
check "summary.bt: @polls == polled" "$(val summary polls)" "$polled"
check "summary.bt: poll-time slots total == @polls_timed" "$(val summary poll_ns)" "$(val summary polls_timed)"
check "summary.bt: @steals == steals" "$(val summary steals)" "$(stat_sum steals)"
check "summary.bt: @stolen == stolen" "$(val summary stolen)" "$(stat_total stolen)"
check "summary.bt: steal-size slots total == steals" "$(val summary steal_tasks)" "$(stat_sum steals)"
# (ewma.bt's histogram, not its @updates: that one is cleared each second,
# and an update between its print and its clear is lost.)
check "summary.bt: EWMA slots total == ewma.bt's histogram total (every update, both attached first)" \
	"$(val summary ewma_ns)" "$(hist_total ewma avg_poll_ns)"
check_after_stats "summary.bt: @parks == parked" "$(val summary parks)" "$(stat_total parked)"
jobs=$(stat_total jobs "$tmp/blockinglat.stats")
check "blockinglat.bt: @ran == the jobs blocking-bench ran" "$(val blockinglat ran)" "$jobs"
check "blockinglat.bt: wait histogram total == jobs" "$(hist_total blockinglat wait_usecs)" "$jobs"
check "blockinglat.bt: run histogram total == jobs" "$(hist_total blockinglat run_usecs)" "$jobs"
finish
