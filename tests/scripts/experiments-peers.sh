#!/usr/bin/env bash
# experiments-peers.sh - experiments/peers in quick mode: blitz against
# Tokio, Go and libuv: the ratio tables, the plots, and the server's CPU per
# message on every echo line, split into user space and kernel.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

run_quick peers pe
need "$tmp/pe/raw/sched.jsonl" "peers raw sched JSON"
need "$tmp/pe/raw/echo.jsonl" "peers raw echo JSON"
need "$tmp/pe/summary.md" "peers summary"
grep -q '| spawn_many_local |' "$tmp/pe/sched.md" && echo "ok   peers: ratio table" || { echo "FAIL peers: no ratio table"; fail=1; }
# Beside each peer's ratio, in how many rounds blitz was the faster (k/n).
if grep -q 'blitz faster than' "$tmp/pe/sched.md"; then
	grep -E '^\| spawn_many_local \|' "$tmp/pe/sched.md" | grep -qE '\| [0-9]+/[0-9]+ \|$' &&
		echo "ok   peers: rounds won beside each ratio" ||
		{ echo "FAIL peers: no k/n rounds beside the ratios"; fail=1; }
elif grep -q '/blitz' "$tmp/pe/sched.md"; then
	echo "FAIL peers: a peer's ratio without the rounds blitz won"; fail=1
fi
# meta.json says how each peer was built: Tokio as its users build for
# speed (LTO, one codegen unit, opt-level 3), or why it was skipped.
python3 -c 'import json,sys
pb = json.load(open(sys.argv[1]))["peer_builds"]
assert set(pb) == {"tokio", "go", "libuv"}, pb
t = pb["tokio"]
assert "skipped" in t or (t["profile.release"]["lto"] in (True, "fat") and
    t["profile.release"]["codegen-units"] == 1 and t["profile.release"]["opt-level"] == 3), t' \
	"$tmp/pe/meta.json" && echo "ok   peers: meta.json has each peer's build flags" ||
	{ echo "FAIL peers: meta.json without peer_builds"; fail=1; }
need "$tmp/pe/plots/sched.png" "peers plot sched.png"
need "$tmp/pe/plots/echo.png" "peers plot echo.png"
# The load generator reports the server's CPU per message (pinned apart
# where there are two CPUs), which the echo plot shows.
python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all(r["msgs"] > 0 and r["server_cpu_ns_per_msg"] > 0 for r in rows), rows' \
	"$tmp/pe/raw/echo.jsonl" && echo "ok   peers: every echo line has the server's CPU per message" || fail=1
# ... split into user space and kernel, in a table of its own.
python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["server_user_ns_per_msg"] + r["server_sys_ns_per_msg"] > 0 for r in rows), rows' \
	"$tmp/pe/raw/echo.jsonl" && grep -q '^| server | user ns | kernel ns | user |' "$tmp/pe/echo.md" &&
	echo "ok   peers: the echo table splits the server's CPU into user and kernel" ||
	{ echo "FAIL peers: no user/kernel split of the server's CPU in echo.md"; fail=1; }
exit $fail
