#!/usr/bin/env bash
# tools-cli.sh - the tools' command line: a bad one is one line and exit 2;
# one-line errors with exit 1 (not root, no such process, a binary without
# blitz probes), --help, and -p:
# attached to one process before it maps libblitz.so, a tool counts exactly
# that process's events while another runs beside it, and exits by itself
# (printing its histogram) when the process ends.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init
T="$obj/tools/bin"


for t in "$T"/blitz-*; do
	n=$(basename "$t")
	"$t" --help > "$tmp/help" 2>&1 && grep -q "Usage: $n" "$tmp/help" && grep -q EXAMPLES "$tmp/help" &&
		ok "$n --help" || bad "$n --help: $(head -3 "$tmp/help")"
	# A bad command line: one line on stderr (getopt's or the tool's), exit 2.
	for args in --no-such-option -p "-p abc" "1 2 3" 0; do
		rc=0
		# shellcheck disable=SC2086 # each word is an argument
		"$t" $args > "$tmp/e.out" 2> "$tmp/e.err" || rc=$?
		if [ $rc -eq 2 ] && [ "$(wc -l < "$tmp/e.err")" -eq 1 ] && [ ! -s "$tmp/e.out" ]; then
			ok "$n $args: $(cat "$tmp/e.err")"
		else
			bad "$n $args: exit $rc, stderr: $(head -3 "$tmp/e.err")"
		fi
	done
done
if command -v setpriv > /dev/null; then
	expect_error "not root" "^blitz-schedlat: must be run as root (needs CAP_BPF/CAP_PERFMON)$" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$T/blitz-schedlat" -b "$lib"
fi
expect_error "no such process" "^blitz-park: no such process: 999999999$" "$T/blitz-park" -p 999999999
expect_error "binary without probes" "has no blitz USDT probes (built with CONFIG_PROBES=n?)$" \
	"$T/blitz-steal" -b "$bench"
expect_error "not an ELF file" "is not an ELF file$" "$T/blitz-top" -b "$src/tools/README.md"
expect_error "missing binary" "No such file" "$T/blitz-ewma" -b "$tmp/nothing.so"

# -p: the target waits on a FIFO so that the tool attaches before it execs
# sched-bench (and maps libblitz.so); a second sched-bench runs untraced.
mkfifo "$tmp/go"
bash -c 'read -r _ < "$1"; shift; exec "$@"' _ "$tmp/go" \
	"$bench" "${workload[@]}" --stats > /dev/null 2> "$tmp/stats" &
target=$!
"$T/blitz-tasksrc" -p $target -b "$lib" -j > "$tmp/tasksrc.out" 2> "$tmp/tasksrc.err" &
tool_pid[tasksrc]=$!
wait_ready "$tmp/tasksrc.err" "${tool_pid[tasksrc]}" || bad "-p: blitz-tasksrc not ready: $(cat "$tmp/tasksrc.err")"
"$bench" "${workload[@]}" > /dev/null 2>&1 &
other=$!
echo go > "$tmp/go"
rc=0
wait "${tool_pid[tasksrc]}" || rc=$?
unset "tool_pid[tasksrc]"
wait $target $other || true
check "-p: the tool exits by itself when the process ends" "$rc" 0
check "-p: total == the target's polled, the other process not counted" \
	"$(jq_py "$tmp/tasksrc.out" 'r[0]["total"]["total"]')" "$(stat_total polled)"
finish
