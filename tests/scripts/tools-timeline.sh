#!/usr/bin/env bash
# tools-timeline.sh - tools/timeline turns a trace file into the Chrome
# Trace Event Format and swimlanes (docs/timeline.md).  A flight
# recorder's dump of a real run (sched-bench spawn_many_local on two
# workers: spawns, steals, parks) converts with every element the file
# holds, counted here from the file by a reader of its own: a poll slice
# per poll_start paired with its end, a flow per queueing whose poll is
# a slice and per steal (from the victim's track), the counters' last
# values, a track per worker and no other.  A window (--events,
# --from/--to) holds its records alone.  Speedscope, in headless
# Chromium, loads a window: the profiles in the page's state are the
# workers' tracks with the JSON's slices, exactly, and a screenshot of it
# is not blank.  A missing, truncated or foreign file is one line and
# exit 1.  Needs no root: the flight recorder is the runtime's own.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
timeline="$src/tools/timeline"
# speedscope's release, installed by npm outside the source tree; pinned,
# since the page check reads the app's state, which is not an interface.
speedscope_version=1.25.0
npm_dir=${BLITZ_NPM_CACHE:-${HOME:-/tmp}/.cache/blitz/npm}
[ -n "$PY" ] || skip "no python3"
[ -x "$bench" ] || skip "no $bench (run make first)"
tmp=$(mktemp -d)
bench_pid=
cleanup() {
	if [ -n "$bench_pid" ]; then
		kill "$bench_pid" 2>/dev/null || true
		wait "$bench_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
py_file() { "$PY" -c "$1" "${@:2}"; }

# one_line_error NAME FILE ERE: tools/timeline FILE exits 1 with one line
# on stderr that matches ERE.
one_line_error() {
	local rc=0
	"$timeline" "$2" -o "$tmp/bad.json" > /dev/null 2> "$tmp/bad.err" || rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l < "$tmp/bad.err")" -eq 1 ] &&
		grep -Eq "^timeline: .*$3" "$tmp/bad.err"; then
		ok "$1: exit 1, one line: $(cat "$tmp/bad.err")"
	else
		bad "$1: exit $rc, stderr: $(cat "$tmp/bad.err")"
	fi
}

# ---- Bad input, made here ----
"$PY" - "$tmp" <<'PY'
import struct, sys
d = sys.argv[1]
head = struct.pack("<QIIII", 0x3276657a74696c62, 2, 88, 32, 0)
# A log whose head says 3 records, and one record.
log = struct.pack("<IIiIIIQQQQIIQQQ", 32, 512, 0, 1, 100, 2, 1, 1, 1 << 32, 0, 3, 100, 0, 0, 0)
rec = struct.pack("<QQQHHi", 1000, 1, 0x1000, 1, 1, 0)
open(d + "/truncated.trace", "wb").write(head + log + rec)
open(d + "/magic.trace", "wb").write(b"notblitz" + head[8:] + log + rec * 3)
open(d + "/version.trace", "wb").write(head[:8] + struct.pack("<I", 1) + head[12:] + log + rec * 3)
PY
one_line_error "a missing file" "$tmp/no-such.trace" "cannot read .*no-such.trace"
one_line_error "a truncated file" "$tmp/truncated.trace" "truncated.trace: truncated"
one_line_error "a wrong magic" "$tmp/magic.trace" "magic.trace: not a blitz trace \(bad magic"
one_line_error "another layout version" "$tmp/version.trace" "version.trace: a trace of layout version 1"

# ---- A flight recorder's dump of a real run ----
# The signal's handler writes blitz-flight.PID in the working directory
# (as PATH.part, renamed when complete: the file's appearance is the end).
(cd "$tmp" && BLITZ_FLIGHT=4096 BLITZ_FLIGHT_SIGNAL=USR2 \
	exec "$bench" --workers 2 --bench spawn_many_local --iters 100000 > "$tmp/bench.out" 2>&1) &
bench_pid=$!
# The workers' rings (memfds "blitz-events") exist once the recorder is on.
for _ in $(seq 100); do
	ls -l "/proc/$bench_pid/fd" 2>/dev/null | grep -q blitz-events && break
	sleep 0.1
done
sleep 0.5
dump="$tmp/blitz-flight.$bench_pid"
# A machine busy elsewhere can leave one worker off its CPU for the whole
# window the recorder keeps, with nothing stolen: take another dump then.
for attempt in 1 2 3 4 5; do
	rm -f "$dump"
	kill -USR2 "$bench_pid"
	for _ in $(seq 100); do [ -e "$dump" ] && break; sleep 0.1; done
	[ -s "$dump" ] || break
	steals=$("$timeline" "$dump" -o /dev/null 2>&1 | grep -o 'steals of [0-9]*' | grep -o '[0-9]*$' || echo 0)
	[ "${steals:-0}" -gt 0 ] && break
	echo "     dump $attempt holds no steal; another in 0.5 s"
	sleep 0.5
done
kill "$bench_pid" 2>/dev/null || true
wait "$bench_pid" 2>/dev/null || true
bench_pid=
[ -s "$dump" ] || { bad "no flight recorder dump ($dump): $(tail -n 3 "$tmp/bench.out")"; finish; }

if ! "$timeline" "$dump" -o "$tmp/full.json" 2> "$tmp/full.err"; then
	bad "tools/timeline on the dump: $(cat "$tmp/full.err")"; finish
fi
check "summary: one line on stderr" "$(wc -l < "$tmp/full.err")" 1
echo "     $(cat "$tmp/full.err")"

# expect.py TRACE DEST_GLOBAL: what the file holds, by a reader of its own.  A poll's
# end closes the innermost open poll of its task on its track (a worker,
# or a thread by id); a jump in a track's log numbers (head.seq), or a
# log reporting lost records, forgets what was open.  A queueing (pid,
# task, seq) is taken by the earliest poll start naming it: a flow when
# that poll is a slice.  The counters start where every worker has
# records: queued is a track's queueings from then (dest not global) less
# those taken; parked, the workers whose last park has no unpark.
cat > "$tmp/expect.py" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
H, R = struct.Struct("<IIiIIIQQQQIIQQQ"), struct.Struct("<QQQHHi")
at, tracks = 24, {}
while at < len(data):
    h = H.unpack_from(data, at)
    worker, thread, seq, mult, count, pid = h[2], h[4], h[7], h[8], h[10], h[11]
    t = tracks.setdefault((pid, h[6], worker, thread if worker < 0 else 0),
                          {"thread": thread, "recs": [], "breaks": set(), "seq": None})
    if t["seq"] is not None and seq != t["seq"] + 1 or h[12]:
        t["breaks"].add(len(t["recs"]))
    t["seq"] = seq
    for i in range(count):
        ticks, task, arg, typ, code, peer = R.unpack_from(data, at + 88 + 32 * i)
        t["recs"].append(((ticks * mult) >> 32, typ, code, task, arg, peer))
    at += 88 + 32 * count
polls = unfinished = steals = parked = 0
queueings, starts, sliced = {}, [], set()
for (pid, rt, worker, _), t in tracks.items():
    open_, park = [], False
    for i, (ns, typ, code, task, arg, peer) in enumerate(t["recs"]):
        if i in t["breaks"]:
            open_, park = [], False
        if typ == 3:
            open_.append((task, i))
            starts.append((ns, (pid, task, peer & 0xffffffff), (id(t), i)))
        elif typ == 4 and task in [o[0] for o in open_]:
            d = max(k for k, o in enumerate(open_) if o[0] == task)
            polls += 1
            sliced.add((id(t), open_[d][1]))
            del open_[d:]
        elif typ in (1, 2):
            queueings.setdefault((pid, task, peer & 0xffffffff), (worker, t["thread"], code, ns))
        elif typ == 5:
            steals += 1
        elif typ in (6, 7):
            park = typ == 6
    unfinished += len(open_)
    sliced |= {(id(t), i) for _, i in open_}
    parked += park
taken, flows = set(), 0
for ns, key, start in sorted(starts, key=lambda s: s[0]):
    if key in queueings and key not in taken:
        taken.add(key)
        flows += start in sliced
t0 = min(t["recs"][0][0] for t in tracks.values())
common = max(t["recs"][0][0] for (_, _, w, _), t in tracks.items() if w >= 0)
queued = {}
for key, (worker, thread, dest, ns) in queueings.items():
    if ns >= common:
        name = ("global queue" if dest == int(sys.argv[2]) else
                "worker %d queued" % worker if worker >= 0 else "thread %d queued" % thread)
        queued[name] = queued.get(name, 0) + (key not in taken)
workers = sorted((w, t["thread"]) for (_, _, w, _), t in tracks.items() if w >= 0)
print(repr({"polls": polls, "unfinished": unfinished, "queue_flows": flows, "steals": steals,
            "steal_flows": steals, "parked": parked, "queued": dict(sorted(queued.items())),
            "tracks": [("worker %d" % w, tid) for w, tid in workers],
            "common_ms": round((common - t0) / 1e6, 6)}))
PY
# counted.py JSON: the same, from the timeline's JSON (a steal's flow
# counts when it comes from another track, the victim's).
cat > "$tmp/counted.py" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
outs = {e["bind_id"]: e for e in x if e.get("flow_out")}
flows = [(outs[e["bind_id"]], e) for e in x if e.get("flow_in") and e["bind_id"] in outs]
last = {}
for e in sorted((e for e in ev if e["ph"] == "C"), key=lambda e: e["ts"]):
    last[e["name"]] = list(e["args"].values())[0]
polls = [e for e in x if e["cat"] == "poll"]
print(repr({"polls": sum(e["args"]["result"] != "unfinished" for e in polls),
            "unfinished": sum(e["args"]["result"] == "unfinished" for e in polls),
            "queue_flows": sum(a["cat"] == "queue" and b["cat"] == "poll" for a, b in flows),
            "steals": sum(e["name"] == "steal" for e in x),
            "steal_flows": sum(a["name"] == "stolen" and b["name"] == "steal" and
                               a["tid"] != b["tid"] for a, b in flows),
            "parked": last.get("parked", 0),
            "queued": dict(sorted((k, v) for k, v in last.items() if k != "parked")),
            "tracks": sorted((e["args"]["name"], e["tid"]) for e in ev
                             if e["ph"] == "M" and e["name"] == "thread_name")}))
PY
"$PY" "$tmp/expect.py" "$dump" "$(probe_code DEST_GLOBAL)" > "$tmp/expect"
"$PY" "$tmp/counted.py" "$tmp/full.json" > "$tmp/counted"
field() { py_file 'import ast, sys; print(ast.literal_eval(open(sys.argv[1]).read())[sys.argv[2]])' "$@"; }
for f in polls unfinished queue_flows steals steal_flows parked queued tracks; do
	check "the dump's $f" "$(field "$tmp/counted" $f)" "$(field "$tmp/expect" $f)"
done
check "a track per worker, no other" \
	"$(field "$tmp/counted" tracks | grep -o "'[a-z]* [0-9]*'" | tr -d "'" | paste -sd, -)" \
	"worker 0,worker 1"
check "the dump has polls, flows and steals to check" "$(py_file '
import ast, sys
e = ast.literal_eval(open(sys.argv[1]).read())
print(e["polls"] > 1000 and e["queue_flows"] > 1000 and e["steals"] > 0)' "$tmp/expect")" True

# ---- Windows: the first 4,000 records; 0.5 ms where both workers have records ----
# in_window FILE: every slice inside the window, every flow's two ends in the file.
in_window() {
	py_file '
import json, sys
d = json.load(open(sys.argv[1]))
lo, hi = (v * 1000 for v in d["otherData"]["window_ms"])
x = [e for e in d["traceEvents"] if e["ph"] == "X"]
outs = {e["bind_id"] for e in x if e.get("flow_out")}
ins = {e["bind_id"] for e in x if e.get("flow_in")}
out = [e for e in x if not lo - 0.001 <= e["ts"] <= e["ts"] + e["dur"] <= hi + 0.001]
print(out[:2] if out else "unpaired flows %s" % sorted(outs ^ ins)[:5] if outs != ins
      else len(x) > 0)' "$1"
}
window=4000
"$timeline" "$dump" -o "$tmp/first.json" --events $window 2> "$tmp/first.err" ||
	bad "--events $window: $(cat "$tmp/first.err")"
check "--events $window: its records" "$(py_file '
import json, sys
print(json.load(open(sys.argv[1]))["otherData"]["records"])' "$tmp/first.json")" $window
check "--events $window: every slice inside the window, every flow's two ends in the file" \
	"$(in_window "$tmp/first.json")" True
from=$(field "$tmp/expect" common_ms)
to=$("$PY" -c "print(round($from + 0.5, 6))")
"$timeline" "$dump" -o "$tmp/window.json" --from "$from" --to "$to" 2> "$tmp/window.err" ||
	bad "--from $from --to $to: $(cat "$tmp/window.err")"
check "--from $from --to $to: every slice inside the window, every flow's two ends in the file" \
	"$(in_window "$tmp/window.json")" True
echo "     $(cat "$tmp/window.err")"
# --pid: the process the file holds gives the same window; another, one line.
pid=$(py_file '
import json, sys
print(min(e["pid"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"))' "$tmp/window.json")
"$timeline" "$dump" -o "$tmp/pid.json" --pid "$pid" --from "$from" --to "$to" 2> "$tmp/pid.err" ||
	bad "--pid $pid: $(cat "$tmp/pid.err")"
check "--pid $pid: the same records as without it" "$(py_file '
import json, sys
print(json.load(open(sys.argv[1]))["otherData"]["records"] == json.load(open(sys.argv[2]))["otherData"]["records"])' \
	"$tmp/pid.json" "$tmp/window.json")" True
if "$timeline" "$dump" -o /dev/null --pid $((pid + 1)) 2> "$tmp/nopid.err"; then
	bad "--pid $((pid + 1)): took a pid the file does not hold"
else
	check "--pid of a process not in the file: one line naming it" \
		"$(wc -l < "$tmp/nopid.err") $(grep -c "no log of pid $((pid + 1))" "$tmp/nopid.err")" "1 1"
fi

# ---- The picture ----
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	"$timeline" "$dump" -o /dev/null --from "$from" --to "$to" --arrows --png "$tmp/lanes.png" \
		--svg "$tmp/lanes.svg" 2> "$tmp/lanes.err" || bad "--png/--svg: $(cat "$tmp/lanes.err")"
	if [ "$(head -c 8 "$tmp/lanes.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		grep -q 'worker 0' "$tmp/lanes.svg" && grep -q 'worker 1' "$tmp/lanes.svg"; then
		ok "--png/--svg: a PNG, and an SVG with a lane per worker"
	else
		bad "--png/--svg: no PNG, or the SVG has no lane per worker"
	fi
else
	echo "skip --png/--svg: python3-matplotlib not installed"
fi

# ---- A browser: speedscope in headless Chromium ----
# browser_skip REASON: the checks above stand; the test ends as skipped.
browser_skip() { [ $fail -eq 0 ] || finish; echo "speedscope check skipped: $*"; exit 77; }
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || browser_skip "no chromium (apt-get install chromium)"
page="$npm_dir/node_modules/speedscope/dist/release/index.html"
installed=$(py_file 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' \
	"$npm_dir/node_modules/speedscope/package.json" 2>/dev/null || true)
if [ "$installed" != $speedscope_version ]; then
	command -v npm > /dev/null || browser_skip "no npm to install speedscope"
	mkdir -p "$npm_dir"
	timeout 300 npm install --prefix "$npm_dir" --no-audit --no-fund --silent \
		speedscope@$speedscope_version > "$tmp/npm.log" 2>&1 ||
		browser_skip "npm could not install speedscope@$speedscope_version: $(tail -n 1 "$tmp/npm.log")"
fi
[ -f "$page" ] || browser_skip "speedscope's package has no $page"

# Speedscope's offline way in: index.html#localProfilePath=FILE.js loads
# FILE.js, which hands it the profile (speedscope.loadFileFromBase64, as
# its command line does).  Ours then waits for the app's state (a prop of
# its preact tree), counts each profile's calls by name, and leaves them
# in a <meta name="blitz-check"> for --dump-dom.
"$PY" - "$tmp/window.json" "$tmp/load.js" <<'PY'
import base64, json, sys
src, out = sys.argv[1], sys.argv[2]
profile = base64.b64encode(open(src, "rb").read()).decode()
check = r'''
(function check(tries) {
  function find(v) {
    if (!v) return null;
    if (v.props && v.props.profileGroup) return v.props.profileGroup;
    for (var i = 0; v.__k && i < v.__k.length; i++) {
      var g = find(v.__k[i]);
      if (g) return g;
    }
    return null;
  }
  var g = null, els = document.querySelectorAll("body, body *");
  for (var e = 0; !g && e < els.length; e++) g = find(els[e].__k);
  if (!g) {
    if (tries > 0) setTimeout(function () { check(tries - 1); }, 100);
    return;
  }
  var out = g.profiles.map(function (p) {
    var counts = {};
    (function walk(n) {
      n.children.forEach(function (c) {
        var name = c.frame.name.split(" {")[0];
        counts[name] = (counts[name] || 0) + 1;
        walk(c);
      });
    })(p.profile.getAppendOrderCalltreeRoot());
    return {name: p.profile.getName(), counts: counts};
  });
  var m = document.createElement("meta");
  m.name = "blitz-check";
  m.content = JSON.stringify(out);
  document.head.appendChild(m);
})(150);
'''
open(out, "w").write("speedscope.loadFileFromBase64(%s, %s);\n%s"
                     % (json.dumps("window.json"), json.dumps(profile), check))
PY
url="file://$page#localProfilePath=$tmp/load.js"
chrome_run() {
	timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chrome" \
		--allow-file-access-from-files --virtual-time-budget=15000 --window-size=1280,720 "$@" \
		2>> "$tmp/chrome.err"
}
chrome_run --dump-dom "$url" > "$tmp/dom.html" ||
	bad "chromium --dump-dom failed: $(tail -n 2 "$tmp/chrome.err")"
check "speedscope: the page loaded the JSON" \
	"$(grep -c '<title>window.json - speedscope</title>' "$tmp/dom.html")" 1
# The profiles speedscope made (one per track with slices), against the JSON's tracks.
"$PY" - "$tmp/dom.html" "$tmp/window.json" > "$tmp/browser" <<'PY'
import html, json, re, sys
m = re.search(r'<meta name="blitz-check" content="([^"]*)"', open(sys.argv[1]).read())
page = json.loads(html.unescape(m.group(1))) if m else []
ev = json.load(open(sys.argv[2]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
want = {}
for e in ev:
    if e["ph"] == "X":
        c = want.setdefault(names[e["tid"]], {})
        c[e["name"]] = c.get(e["name"], 0) + 1
got = {}
for p in page:
    track = re.search(r"(worker \d+|thread \d+) \(tid \d+\)$", p["name"])
    got[track.group(1) if track else p["name"]] = p["counts"]
polls = lambda c: sum(v for k, v in c.items() if k.startswith("poll "))
print(sorted(got))
print(sorted(want))
print(got == want)
print(", ".join("%s: %d polls, %d slices" % (t, polls(c), sum(c.values()))
                for t, c in sorted(got.items())))
PY
check "speedscope: its profiles are the workers' tracks" \
	"$(sed -n 1p "$tmp/browser")" "$(sed -n 2p "$tmp/browser")"
check "speedscope: each profile's calls by name are the track's slices" \
	"$(sed -n 3p "$tmp/browser")" True
echo "     speedscope read $(sed -n 4p "$tmp/browser")"

# Not blank: the PNG decoded here (8-bit RGB or RGBA: no imaging library
# needed), 16 colours or more, and the area below the toolbar (the flame
# chart) not of one colour.  Up to three shots.  Reported, not checked:
# some windows (thousands of tiny slices on one track) draw the area the
# heuristic reads in one colour, where the page's own profiles (above)
# are right; the page's state is the check.
cat > "$tmp/not_blank.py" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
if d[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(print("not a PNG"))
at, idat = 8, b""
while at < len(d):
    n, kind = struct.unpack(">I4s", d[at:at + 8])
    body = d[at + 8:at + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    at += 12 + n
bpp = {2: 3, 6: 4}.get(ctype)
if depth != 8 or not bpp:
    sys.exit(print("a PNG of depth %d, colour type %d" % (depth, ctype)))


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        line[i] = (line[i] + (0, a, b, (a + b) // 2, paeth(a, b, c))[f]) & 255
    rows.append(bytes(line))
    prev = line
pix = lambda y: [rows[y][x * bpp:x * bpp + 3] for x in range(w)]
colours = {p for y in range(0, h, 4) for p in pix(y)}
chart = [p for y in range(h // 8, h, 4) for p in pix(y)]
top = max(set(chart), key=chart.count)
print(len(colours) >= 16 and sum(p != top for p in chart) > len(chart) // 100)
PY
shot=False
for _ in 1 2 3; do
	chrome_run --screenshot="$tmp/speedscope.png" "$url" > /dev/null ||
		{ bad "chromium --screenshot failed: $(tail -n 2 "$tmp/chrome.err")"; break; }
	shot=$("$PY" "$tmp/not_blank.py" "$tmp/speedscope.png")
	[ "$shot" = True ] && break
done
echo "     speedscope: the screenshot is not blank: $shot ($tmp/speedscope.png)"
finish
