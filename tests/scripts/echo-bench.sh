#!/usr/bin/env bash
# echo-bench.sh - echo-bench runs on each backend and prints one JSON line
# with the fields docs/design.md and run-echo expect, msgs > 0; --server-only and
# --client-only work as two processes (the server stops on SIGTERM and on
# EOF on stdin); bad options exit 2.  Numbers only: no timing assertions.
set -euo pipefail
. "$(dirname "$0")/echo-lib.bash"

# Sanitizer builds are slow: keep the runs tiny.
if [ -n "${BLITZ_SANITIZE:-}" ]; then
	run=(--connections 2 --duration 0.3 --warmup 0.1)
else
	run=(--connections 4 --duration 1 --warmup 0.2)
fi

# check_json FILE WHAT RUNTIME BACKEND: one line, every field, msgs > 0.
check_json() {
	python3 - "$@" <<'PY'
import json, sys
path, what, runtime, backend = sys.argv[1:5]
lines = [l for l in open(path) if l.strip()]
assert len(lines) == 1, f"{what}: {len(lines)} lines"
r = json.loads(lines[0])
need = ["runtime", "bench", "workers", "backend", "connections", "size", "duration_s",
        "msgs", "msgs_per_sec", "bytes_per_sec", "min_ns", "p50_ns", "p99_ns", "p999_ns", "max_ns"]
missing = [k for k in need if k not in r]
assert not missing, f"{what}: missing {missing}"
assert r["runtime"] == runtime and r["bench"] == "echo", f"{what}: {r['runtime']} {r['bench']}"
assert backend == "-" or r["backend"] == backend, f"{what}: backend {r['backend']}"
assert r["msgs"] > 0 and r["msgs_per_sec"] > 0, f"{what}: msgs {r['msgs']}"
assert r["min_ns"] <= r["p50_ns"] <= r["p99_ns"] <= r["p999_ns"] <= r["max_ns"], f"{what}: percentiles out of order"
PY
}

ran=0
for b in $("${BLITZ_OBJTREE:?}/bin/sched-bench" --list-backends); do
	if ! "$bench" --backend "$b" "${run[@]}" > "$tmp/$b.json" 2> "$tmp/$b.err"; then
		bad "$b: exit $?: $(tail -n 1 "$tmp/$b.err")"
		continue
	fi
	if grep -q "asked for $b" "$tmp/$b.err"; then
		echo "skip $b: $(grep 'asked for' "$tmp/$b.err")"
		continue
	fi
	check_json "$tmp/$b.json" "$b" blitz "$b" && ok "$b: $(cat "$tmp/$b.json")" || bad "$b JSON"
	ran=$((ran + 1))
done
[ $ran -gt 0 ] || bad "no backend ran"

# Two processes: the server prints its address, the client measures it.
# start_server: the server's stdin is a FIFO we hold open (fd 7).
start_server() {
	rm -f "$tmp/in" "$tmp/addr"
	mkfifo "$tmp/in"
	"$bench" --server-only --workers 2 < "$tmp/in" > "$tmp/addr" 2> "$tmp/server.err" &
	server=$!
	pids+=("$server")
	exec 7> "$tmp/in"
	addr=
	for _ in $(seq 100); do
		addr=$(head -n 1 "$tmp/addr" 2>/dev/null || true)
		[ -n "$addr" ] && break
		sleep 0.1
	done
}
# under_load PORT: an established socket on local port PORT has received bytes.
under_load() {
	ss -Htni state established "( sport = :$1 )" 2>/dev/null | grep -q 'bytes_received:[1-9]'
}
# stopped PID: it exits by itself, status 0, within 10 s.
stopped() {
	for _ in $(seq 100); do
		kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
		sleep 0.1
	done
	return 1
}

start_server
if [ -z "$addr" ]; then
	bad "--server-only printed no address: $(cat "$tmp/server.err")"
else
	[ "$(wc -l < "$tmp/addr")" -eq 1 ] && ok "--server-only printed one line: $addr" ||
		bad "--server-only printed more than the address"
	"$bench" --client-only "$addr" --label peer "${run[@]}" > "$tmp/client.json" 2> "$tmp/client.err" &&
		check_json "$tmp/client.json" client-only peer - &&
		ok "--client-only: $(cat "$tmp/client.json")" || bad "--client-only: $(cat "$tmp/client.err")"
	exec 7>&-
	stopped "$server" && ok "--server-only stops at EOF on stdin" || bad "--server-only ignored EOF on stdin"
fi

start_server
if [ -n "$addr" ]; then
	kill -TERM "$server"
	exec 7>&-
	stopped "$server" && ok "--server-only stops on SIGTERM" || bad "--server-only ignored SIGTERM"
fi

# SIGTERM under load: a graceful stop that echoes every byte it read (the
# byte-exact client-side check is tests/unit/test_shutdown.c).
start_server
if [ -n "$addr" ]; then
	"$bench" --client-only "$addr" --connections 20 --warmup 0 --duration 5 > /dev/null 2>&1 &
	loader=$!
	pids+=("$loader")
	# Under load means the server has read bytes: wait for that (the
	# kernel's count on its sockets), not a fixed second, which a slow or
	# busy machine may spend before the first connection.
	for _ in $(seq 300); do
		under_load "${addr##*:}" && break
		sleep 0.1
	done
	kill -TERM "$server"
	stopped "$server" && ok "--server-only stops on SIGTERM under load" ||
		bad "--server-only under load did not stop: $(cat "$tmp/server.err")"
	exec 7>&-
	wait "$loader" 2>/dev/null || true
	line=$(grep "stopped gracefully" "$tmp/server.err" || true)
	read_b=$(echo "$line" | sed -n 's/.* \([0-9]*\) bytes read, \([0-9]*\) echoed/\1/p')
	echo_b=$(echo "$line" | sed -n 's/.* \([0-9]*\) bytes read, \([0-9]*\) echoed/\2/p')
	[ -n "$read_b" ] && [ "$read_b" -gt 0 ] && [ "$read_b" = "$echo_b" ] &&
		ok "SIGTERM under load: $line" || bad "SIGTERM under load: $(cat "$tmp/server.err")"
fi

"$bench" --client-only 127.0.0.1:1 "${run[@]}" > /dev/null 2> "$tmp/refused.err" && bad "no server, exit 0" ||
	{ grep -q "refused" "$tmp/refused.err" && ok "no server: $(cat "$tmp/refused.err")" || bad "no server: $(cat "$tmp/refused.err")"; }
for args in "--backend nope" "--connections 0" "--size x" "--duration 0" "--server-only --client-only 1.2.3.4:5" "--bogus"; do
	rc=0
	# shellcheck disable=SC2086
	"$bench" $args > /dev/null 2> "$tmp/opt.err" || rc=$?
	[ $rc -eq 2 ] && ok "$args: exit 2: $(head -n 1 "$tmp/opt.err")" || bad "$args: exit $rc"
done
exit $fail
