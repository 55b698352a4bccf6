# tools-lib.bash - sourced by tests/scripts/tools-*.sh (not a test itself:
# the harness runs *.sh only).
#
# tools_init checks what the tool tests need (exit 77 with one line when
# something is missing), builds the tools and sets:
#   src obj lib bench tmp   the trees, libblitz.so, sched-bench, a scratch dir
#   workload                the sched-bench arguments (smaller under TSan)
#   bbench blocking_workload  blocking-bench and its arguments: 3,000 jobs
#                           that sleep 100 us each (blocking_jobs)
# start_tool NAME ARGS...   starts blitz-NAME -b $lib ARGS in the background,
#                           output in $tmp/NAME.out, stderr in $tmp/NAME.err,
#                           and waits for its ready line (wait_ready)
# stop_tool NAME            SIGINT, then waits for it to print and exit
# wait_line FILE ERE SECS [PID]  until a line of FILE matches ERE: at most SECS
#                           seconds, or until PID exits; 1 if none does
# wait_ready ERRFILE PID    until a tool's ready line: "Tracing ... Hit Ctrl-C
#                           to end.", printed once its probes are attached
# wait_exit PID SECS        until PID (a child) exits, at most SECS seconds; 1 if not
# run_workload [ENV=V...]   runs sched-bench $workload --stats; stats in $tmp/stats
# run_blocking [ENV=V...]   the same for blocking-bench $blocking_workload
# start_twin NAME          starts tools/bpftrace/NAME.bt on $lib in the background,
#                           output in $tmp/NAME.bt.out (twin_pid[NAME])
# wait_twin NAME            until it has attached (a minute at most: several
#                           bpftrace processes compile at once on two cores)
# stop_twins                stops them all (scripts/stop-bpftrace) and waits
# bt_val FILE MAP / bt_hist_total FILE MAP / bt_has_hist FILE MAP
#                           a bpftrace map's summed values / histogram total
# stat_total KEY [FILE] / stat_sum KEY / stat_worker I KEY   the runtime's statistics
# probe_code NAME           the value of a code of probes/blitz_probe_codes.h (SRC_LIFO)
# workers                   the worker indices of the last run
# jq_py FILE EXPR           a Python expression over r, the list of JSON lines
# check NAME GOT EXPECTED   one "ok"/"FAIL" line; failures make finish exit 1
# check_after_stats NAME GOT EXPECTED   the same, for parks and failed steals

src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
lib="$obj/lib/libblitz.so" bench="$obj/bin/sched-bench"
bbench="$obj/bin/blocking-bench"
# Its three benchmarks run 1,000 jobs each.
blocking_workload=(--iters 1 --warmup 0 --ops 1000 --sleep-us 100) blocking_jobs=3000
fail=0
# The longest wait for a tool's ready line: it takes 0.02-0.3 s (2026-12-02,
# 2 CPUs busy or not); this is for several tools loading at once on a
# machine shared with other work, and a failure says which tool it was.
ready_secs=120
# Debian's python3 (a pyenv shim on PATH starts 5x slower).
PY=$(command -v /usr/bin/python3 || command -v python3 || true)
declare -A tool_pid=() twin_pid=()

skip() { echo "$*"; exit 77; }

tools_init() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to load BPF programs"
	local cfg="$src/configs/defconfig"
	[ -f "$src/.config" ] && cfg="$src/.config"
	grep -q '^CONFIG_PROBES=y' "$cfg" || skip "CONFIG_PROBES is off"
	grep -q '^CONFIG_BPF_TOOLS=y' "$cfg" || skip "CONFIG_BPF_TOOLS is off"
	for t in clang bpftool pkg-config; do
		command -v $t >/dev/null || [ -x /usr/sbin/$t ] || skip "tools not buildable: $t not installed"
	done
	pkg-config --exists libbpf || skip "tools not buildable: libbpf-dev not installed"
	[ -n "$PY" ] || skip "no python3 to read the tools' JSON"
	[ -x "$bench" ] && [ -x "$bbench" ] && [ -e "$lib" ] || skip "no $bench, $bbench or $lib (run make first)"
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
	ulimit -l unlimited 2>/dev/null || true

	tmp=$(mktemp -d)
	trap tools_cleanup EXIT
	# SANITIZE as the tree was built: the top level rewrites its flags file otherwise.
	if ! make -s -C "$src" O="$obj" SANITIZE="${BLITZ_SANITIZE:-}" tools > "$tmp/build.log" 2>&1; then
		echo "FAIL make tools:"; cat "$tmp/build.log"; exit 1
	fi
	workload=(--bench all --iters 1 --warmup 0)
	# A ThreadSanitizer build is ~10x slower: one benchmark is enough.
	[ "${BLITZ_SANITIZE:-}" = thread ] && workload=(--bench spawn_many_local --iters 1 --warmup 0)
	return 0
}

tools_cleanup() {
	local n
	stop_twins || true
	for n in "${!tool_pid[@]}"; do
		kill -INT "${tool_pid[$n]}" 2>/dev/null || true
		wait "${tool_pid[$n]}" 2>/dev/null || true
	done
	rm -rf "$tmp"
}

# start_tool NAME ARGS: blitz-NAME in the background, returning once it has
# attached.  Its files are emptied here first: the redirections below are
# made by the forked child, which on a busy machine may run after the
# first grep, and a previous run's "Hit Ctrl-C" would then pass for this
# one's (the tool, signalled before its exec, would die with 130 and
# leave the old output in place).
start_tool() {
	local name=$1; shift
	: > "$tmp/$name.out"
	: > "$tmp/$name.err"
	"$obj/tools/bin/blitz-$name" -b "$lib" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" &
	tool_pid[$name]=$!
	wait_ready "$tmp/$name.err" "${tool_pid[$name]}" && return 0
	kill -KILL "${tool_pid[$name]}" 2>/dev/null || true	# not ready in $ready_secs s
	wait "${tool_pid[$name]}" 2>/dev/null || true
	unset "tool_pid[$name]"
	grep -q 'BPF unavailable' "$tmp/$name.err" && skip "$(cat "$tmp/$name.err")"
	echo "FAIL blitz-$name did not attach: $(cat "$tmp/$name.err")"
	exit 1
}

wait_line() {
	local file=$1 ere=$2 end=$((SECONDS + $3)) pid=${4:-}
	for (( ; ; )); do
		grep -Eq -- "$ere" "$file" 2>/dev/null && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			grep -Eq -- "$ere" "$file" 2>/dev/null
			return
		fi
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

wait_ready() { wait_line "$1" 'Hit Ctrl-C' "$ready_secs" "$2"; }

# The shell reaps its children as they end: kill -0 fails once PID has exited.
wait_exit() {
	local end=$((SECONDS + $2))
	while kill -0 "$1" 2>/dev/null; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

stop_tool() {
	local name=$1 rc=0
	kill -INT "${tool_pid[$name]}"
	wait "${tool_pid[$name]}" || rc=$?
	unset "tool_pid[$name]"
	if [ $rc -ne 0 ]; then
		echo "FAIL blitz-$name exited $rc: $(cat "$tmp/$name.err")"; fail=1
	fi
}

# run_stats PROG ARGS_ARRAY_NAME [ENV=V...]: PROG ARGS --stats, the
# statistics in $tmp/stats.  A hang is a failure with a message, not the
# harness's 600 s timeout.
run_stats() {
	local prog=$1 rc=0
	local -n args=$2
	shift 2
	timeout 300 env "$@" "$prog" "${args[@]}" --stats > /dev/null 2> "$tmp/stats" || rc=$?
	[ $rc -eq 0 ] && return 0
	echo "FAIL $(basename "$prog") ${args[*]} $* exited $rc (124: hung for 300 s):"
	cat "$tmp/stats"
	exit 1
}
run_workload() { run_stats "$bench" workload "$@"; }
run_blocking() { run_stats "$bbench" blocking_workload "$@"; }

start_twin() {
	: > "$tmp/$1.bt.out"	# as start_tool: no earlier run's banner
	"$src/tools/bpftrace/run" "$1" "$lib" > "$tmp/$1.bt.out" 2>&1 &
	twin_pid[$1]=$!
}

wait_twin() {
	for _ in $(seq 600); do
		grep -q 'Hit Ctrl-C' "$tmp/$1.bt.out" && return 0
		kill -0 "${twin_pid[$1]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "FAIL $1.bt did not attach:"; cat "$tmp/$1.bt.out"
	exit 1
}

stop_twins() {
	local n rc=0
	[ ${#twin_pid[@]} -gt 0 ] || return 0
	"$src/scripts/stop-bpftrace" "${twin_pid[@]}" || rc=1
	for n in "${!twin_pid[@]}"; do wait "${twin_pid[$n]}" || true; done
	twin_pid=()
	[ $rc -eq 0 ] || bad "a bpftrace twin ignored SIGINT for 60 s"
}

# A map's values summed (@m: N and @m[k...]: N lines).
bt_val() { awk -v m="@$2" '{ k = $1; sub(/\[.*/, "", k); sub(/:$/, "", k) }
	k == m && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$1"; }
# The sum of a histogram's bucket counts.
bt_hist_total() { awk -v m="@$2" '/^@/ { k = $1; sub(/\[.*/, "", k); sub(/:$/, "", k); on = (k == m) }
	on && /^\[/ { sub(/^\[[^])]*[])] */, ""); s += $1 } END { print s + 0 }' "$1"; }
bt_has_hist() { grep -A1 "^@$2" "$1" | grep -q '^\['; }

# The worker indices of the last run: 0 .. workers-1.
workers() { seq 0 $(($(grep -c '^  worker ' "$tmp/stats") - 1)); }
probe_code() { sed -n "s/^[[:space:]]*$1 = \(-\{0,1\}[0-9]*\),.*/\1/p" "$src/probes/blitz_probe_codes.h"; }
stat_total() { sed -n "s/.*stats:.* $1=\([0-9]*\).*/\1/p" "${2:-$tmp/stats}"; }
stat_sum() { grep -o " $1=[0-9]*" "$tmp/stats" | cut -d= -f2 | awk '{s+=$1} END {print s+0}'; }
stat_worker() { sed -n "s/.*worker $1:.* $2=\([0-9]*\).*/\1/p" "$tmp/stats"; }

# jq_py FILE EXPR: EXPR over the JSON lines of FILE (r); an expression that
# fails prints "jq_py failed: ..." (which check() never takes as a value).
jq_py() {
	"$PY" -c '
import json, sys
try:
    r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    v = eval(sys.argv[2])
except Exception as e:
    print("jq_py failed: %s on %s: %r" % (sys.argv[2], sys.argv[1], e))
    sys.exit(0)
print(v if not isinstance(v, float) or v != int(v) else int(v))' "$1" "$2"
}

# check NAME GOT EXPECTED: equal, and neither empty nor a failed jq_py.
check() {
	if [ -z "$2" ] || [[ $2 == "jq_py failed:"* || $3 == "jq_py failed:"* ]]; then
		echo "FAIL $1: no value: '$2' / '$3'"; fail=1
	elif [ "$2" = "$3" ]; then echo "ok   $1: $2 = $3"
	else echo "FAIL $1: $2 != $3"; fail=1; fi
}

# check_after_stats NAME GOT EXPECTED: for counters of events that can
# still happen after sched-bench printed its statistics (it prints them
# before blitz_runtime_free(), while the workers may still search and park
# once more): GOT may exceed EXPECTED by a few, never fall short.
check_after_stats() {
	local slack=$((4 * $(grep -c '^  worker ' "$tmp/stats")))
	if [ "$2" -ge "$3" ] && [ "$2" -le $(($3 + slack)) ]; then
		if [ "$2" = "$3" ]; then echo "ok   $1: $2 = $3"
		else echo "ok   $1: $2 = $3 + $(($2 - $3)) after the stats were printed"; fi
	else echo "FAIL $1: $2 != $3 (0..$slack more allowed)"; fail=1; fi
}

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

finish() { exit $fail; }

# expect_error NAME PATTERN CMD...: bad input: exit 1, one line on stderr
# matching PATTERN, nothing on stdout.
expect_error() {
	local name=$1 pat=$2 rc=0; shift 2
	"$@" > "$tmp/e.out" 2> "$tmp/e.err" || rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l < "$tmp/e.err")" -eq 1 ] && grep -q -- "$pat" "$tmp/e.err" &&
	   [ ! -s "$tmp/e.out" ]; then
		ok "$name: $(cat "$tmp/e.err")"
	else
		bad "$name: exit $rc, stderr: $(cat "$tmp/e.err")"
	fi
}
