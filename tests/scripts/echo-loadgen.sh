#!/usr/bin/env bash
# echo-loadgen.sh - the neutral load generator (experiments/peers/loadgen)
# builds without blitz, measures echo-bench's server and prints one JSON line
# with the fields run-echo and compare-echo read (msgs > 0, errors 0, the
# server's and its own CPU per message, each split into user and kernel
# time that add up to it); a server whose echo differs is
# counted in "errors" with exit 1; bad arguments exit 2 with one line.
# Numbers only: no timing assertions.
set -euo pipefail
src=${BLITZ_SRCTREE:?}
command -v "${CC:-cc}" > /dev/null || { echo "no C compiler"; exit 77; }
. "$(dirname "$0")/echo-lib.bash"

"$src/experiments/peers/loadgen/build" "$tmp" > /dev/null 2> "$tmp/build.err" ||
	{ echo "FAIL build: $(tail -n 1 "$tmp/build.err")"; exit 1; }
lg="$tmp/echo-loadgen"
if command -v nm > /dev/null && nm -D "$lg" | grep -q blitz; then
	bad "echo-loadgen uses blitz: $(nm -D "$lg" | grep blitz | head -n 1)"
else
	ok "echo-loadgen is built without blitz"
fi

# start_server CMD...: sets addr and server (its pid).
start_server() {
	: > "$tmp/addr"
	"$@" > "$tmp/addr" 2> "$tmp/server.err" < /dev/null &
	server=$!
	pids+=("$server")
	addr=
	for _ in $(seq 100); do
		addr=$(head -n 1 "$tmp/addr")
		[ -n "$addr" ] && break
		sleep 0.1
	done
}

# check_json FILE WHAT ERRORS: one line, every field, msgs > 0, ERRORS errors.
check_json() {
	python3 - "$@" <<'PY'
import json, sys
path, what, errors = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = [l for l in open(path) if l.strip()]
assert len(lines) == 1, f"{what}: {len(lines)} lines"
r = json.loads(lines[0])
need = ["runtime", "bench", "client", "workers", "backend", "connections", "size", "duration_s",
        "window_s", "msgs", "msgs_per_sec", "min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns",
        "max_ns", "client_cpu_ns_per_msg", "client_user_ns_per_msg", "client_sys_ns_per_msg",
        "server_cpu_ns_per_msg", "server_user_ns_per_msg", "server_sys_ns_per_msg", "errors"]
missing = [k for k in need if k not in r]
assert not missing, f"{what}: missing {missing}"
assert r["errors"] == errors, f"{what}: {r['errors']} errors, expected {errors}"
if errors:
    sys.exit(0)
assert r["msgs"] > 0 and r["msgs_per_sec"] > 0 and r["window_s"] > 0, f"{what}: msgs {r['msgs']}"
assert r["min_ns"] <= r["p50_ns"] <= r["p90_ns"] <= r["p99_ns"] <= r["p999_ns"] <= r["max_ns"], \
    f"{what}: percentiles out of order"
assert r["client_cpu_ns_per_msg"] > 0, f"{what}: no CPU per message"
assert r["server_cpu_ns_per_msg"] is not None and r["server_cpu_ns_per_msg"] >= 0, f"{what}: no server CPU"
# The split adds up to the whole (each printed to 0.1 ns), for both processes.
for who in ("client", "server"):
    u, k, c = (r[f"{who}_{m}_ns_per_msg"] for m in ("user", "sys", "cpu"))
    assert u >= 0 and k >= 0 and abs(u + k - c) <= 0.15, f"{what}: {who} user {u} + kernel {k} != {c}"
# Fairness: the connections' round trips add up to msgs, so the least and
# the most a connection made bound msgs; a connection's longest is a round
# trip of the window; no gap without an echo is longer than the window
# (all hold however starved the load generator was).
n = r["connections"]
assert 0 <= r["conn_msgs_min"] <= r["conn_msgs_p50"] <= r["conn_msgs_max"], f"{what}: conn_msgs out of order"
assert r["conn_msgs_min"] * n <= r["msgs"] <= r["conn_msgs_max"] * n, f"{what}: conn_msgs do not bound msgs"
assert r["min_ns"] <= r["conn_max_p50_ns"] <= r["max_ns"], f"{what}: conn_max_p50_ns out of range"
assert 0 <= r["echo_gap_max_ns"] <= r["window_s"] * 1e9, f"{what}: echo_gap_max_ns {r['echo_gap_max_ns']}"
PY
}

start_server "$bench" --server-only --workers 1
if [ -z "$addr" ]; then
	bad "echo-bench --server-only printed no address: $(cat "$tmp/server.err")"
else
	for run in "--connections 4 --size 64" "--connections 1 --size 4K" "--connections 50 --size 100"; do
		# shellcheck disable=SC2086
		if "$lg" $run --duration 0.5 --warmup 0.1 --server-pid "$server" --label blitz "$addr" \
			> "$tmp/line" 2> "$tmp/err" && check_json "$tmp/line" "$run" 0; then
			ok "$run: $(cat "$tmp/line")"
		else
			bad "$run: $(cat "$tmp/err")"
		fi
	done
	# Starved for the whole window (stopped before the warm-up ends, let go
	# well after the window's end): the window waits for its first round
	# trip instead of closing at the wake that opened it with none.
	"$lg" --connections 2 --duration 0.3 --warmup 1 --server-pid "$server" --label blitz "$addr" \
		> "$tmp/line" 2> "$tmp/err" &
	lgp=$!
	sleep 0.3
	kill -STOP $lgp 2>/dev/null || true
	sleep 2
	kill -CONT $lgp 2>/dev/null || true
	if wait $lgp && check_json "$tmp/line" "stopped through its window" 0; then
		ok "a load generator stopped through its whole window still measures: $(cat "$tmp/line")"
	else
		bad "stopped through its window: $(cat "$tmp/line" "$tmp/err")"
	fi
	kill "$server"
fi

# A server whose echo differs in one byte: counted, exit 1, the line printed;
# the run ends when both connections have failed, not after --duration.
cat > "$tmp/bad.py" <<'PY'
import socket, threading
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print("127.0.0.1:%d" % s.getsockname()[1], flush=True)
def serve(c):
    n = 0
    while True:
        d = c.recv(4096)
        if not d:
            return
        n += len(d)
        c.sendall(d if n < 200 else d[:-1] + b"#")
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
start_server python3 "$tmp/bad.py"
rc=0
"$lg" --connections 2 --duration 60 --warmup 0 "$addr" > "$tmp/line" 2> "$tmp/err" || rc=$?
[ $rc -eq 1 ] && check_json "$tmp/line" "bad echo" 2 &&
	ok "a wrong echo: exit 1, 2 errors: $(head -n 1 "$tmp/err")" ||
	bad "a wrong echo: exit $rc: $(cat "$tmp/line" "$tmp/err")"
kill "$server"

rc=0
"$lg" --duration 0.3 127.0.0.1:1 > /dev/null 2> "$tmp/err" || rc=$?
[ $rc -eq 1 ] && grep -q refused "$tmp/err" && ok "no server: exit 1: $(cat "$tmp/err")" ||
	bad "no server: exit $rc: $(cat "$tmp/err")"
for args in "" "--connections 0 1.2.3.4:5" "--size 2M 1.2.3.4:5" "--size x 1.2.3.4:5" \
	"--duration 0 1.2.3.4:5" "--warmup -1 1.2.3.4:5" "--bogus 1.2.3.4:5" "1.2.3.4" \
	"1.2.3.4:99999" "a:1 b:2" "--server-pid 0 1.2.3.4:5" "--duration"; do
	rc=0
	# shellcheck disable=SC2086
	"$lg" $args > /dev/null 2> "$tmp/opt.err" || rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l < "$tmp/opt.err")" -eq 1 ] &&
		ok "'$args': exit 2: $(cat "$tmp/opt.err")" || bad "'$args': exit $rc: $(cat "$tmp/opt.err")"
done
exit $fail
