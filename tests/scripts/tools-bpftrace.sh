#!/usr/bin/env bash
# tools-bpftrace.sh - every bpftrace twin in tools/bpftrace/ attaches (all
# at once, through tools/bpftrace/run) and prints its maps for one run of a
# known workload, and its totals equal the runtime's statistics.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
[ "$(id -u)" -eq 0 ] || skip "needs root to attach uprobes"
command -v bpftrace >/dev/null || skip "bpftrace not installed"
cfg="$src/configs/defconfig"; [ -f "$src/.config" ] && cfg="$src/.config"
grep -q '^CONFIG_PROBES=y' "$cfg" || skip "CONFIG_PROBES is off"
[ -x "$bench" ] && [ -e "$lib" ] || skip "no $bench or $lib (run make first)"
[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
ulimit -l unlimited 2>/dev/null || true
tmp=$(mktemp -d)
workload=(--bench all --iters 1 --warmup 0)
[ "${BLITZ_SANITIZE:-}" = thread ] && workload=(--bench spawn_many_local --iters 1 --warmup 0)

names=()
for f in "$src"/tools/bpftrace/*.bt; do names+=("$(basename "$f" .bt)"); done
declare -A bt=()
cleanup() {
	[ ${#bt[@]} -gt 0 ] && "$src/scripts/stop-bpftrace" "${bt[@]}"
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

for n in "${names[@]}"; do
	"$src/tools/bpftrace/run" "$n" "$lib" > "$tmp/$n.out" 2>&1 &
	bt[$n]=$!
done
# Seven bpftrace processes compile at once on two cores: allow a minute.
for n in "${names[@]}"; do
	for _ in $(seq 600); do
		grep -q 'Hit Ctrl-C' "$tmp/$n.out" && break
		kill -0 "${bt[$n]}" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'Hit Ctrl-C' "$tmp/$n.out" || { echo "FAIL $n.bt did not attach:"; cat "$tmp/$n.out"; exit 1; }
done
run_workload
"$src/scripts/stop-bpftrace" "${bt[@]}" || bad "a bpftrace twin ignored SIGINT for 60 s"
for n in "${names[@]}"; do wait "${bt[$n]}" || true; done
bt=()

# val NAME MAP: the sum of a map's values (@m: N or @m[k...]: N lines).
val() { awk -v m="@$2" '{ k = $1; sub(/\[.*/, "", k); sub(/:$/, "", k) }
	k == m && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$tmp/$1.out"; }
# hist_total NAME MAP: the sum of a histogram's bucket counts.
hist_total() { awk -v m="@$2" '/^@/ { k = $1; sub(/\[.*/, "", k); sub(/:$/, "", k); on = (k == m) }
	on && /^\[/ { sub(/^\[[^])]*[])] */, ""); s += $1 } END { print s + 0 }' "$tmp/$1.out"; }
has_hist() { grep -A1 "^@$2" "$tmp/$1.out" | grep -q '^\['; }

for n in "${names[@]}"; do
	if grep -q '^@' "$tmp/$n.out"; then ok "$n.bt: attached and printed its maps"
	else bad "$n.bt printed no map:"; cat "$tmp/$n.out"; fi
done
polled=$(stat_total polled)
check "schedlat.bt: @count == polled" "$(val schedlat count)" "$polled"
check "schedlat.bt: histogram total == polled" "$(hist_total schedlat usecs)" "$polled"
check "schedlat.bt: no unpaired poll" "$(val schedlat unpaired)" 0
check "polltime.bt: histogram total == polled" "$(hist_total polltime nsecs)" "$polled"
check "tasksrc.bt: @total == polled" "$(val tasksrc total)" "$polled"
check "tasksrc.bt: source 0 == lifo_hits" \
	"$(awk '/^@polls\[-?[0-9]+, 0\]:/ { s += $NF } END { print s + 0 }' "$tmp/tasksrc.out")" "$(stat_sum lifo_hits)"
check "steal.bt: @stolen == stolen" "$(val steal stolen)" "$(stat_total stolen)"
check "steal.bt: @steals == steals" "$(val steal steals)" "$(stat_sum steals)"
check "steal.bt: size histogram total == steals" "$(hist_total steal tasks)" "$(stat_sum steals)"
check_after_stats "park.bt: @parks == parked" "$(val park parks)" "$(stat_total parked)"
check "park.bt: every park ended" "$(val park sleeps)" "$(val park parks)"
check "top.bt: polls == polled" "$(val top t_polls)" "$polled"
check "top.bt: lifo_hits" "$(val top t_lifo_hits)" "$(stat_sum lifo_hits)"
check "top.bt: global_batches" "$(val top t_global_batches)" "$(stat_sum global_batches)"
check "top.bt: overflows" "$(val top t_overflows)" "$(stat_sum overflows)"
check_after_stats "top.bt: steal_fails" "$(val top t_steal_fails)" "$(stat_sum steal_fails)"
if has_hist ewma avg_poll_ns; then ok "ewma.bt: average poll time histogram"
else bad "ewma.bt: no @avg_poll_ns histogram"; fi
[ "$(val ewma updates)" -gt 0 ] && ok "ewma.bt: updates counted" || bad "ewma.bt: no updates"
finish
