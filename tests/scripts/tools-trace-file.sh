#!/usr/bin/env bash
# tools-trace-file.sh - the trace file's two encodings (<blitz/trace/events.h>,
# "A trace file"): a raw file of records chosen to reach every edge of
# the packed encoding (each field at 0 and at its largest, steps back in
# time, task 0 between tasks, types and codes past their escapes, an
# empty log) goes through blitz-events --read into a packed file and
# back into a raw one byte for byte; tools/timeline reads the same
# records from both; a packed log whose bytes do not hold its records,
# a varint past 64 bits (both readers), a file cut inside a log and
# --raw without -w are each refused or read up to the cut, in one line.
set -euo pipefail
. "$(dirname "$0")/tools-lib.bash"
tools_init
T="$obj/tools/bin/blitz-events"

"$PY" - "$tmp/edges.raw" "$tmp/steps.raw" <<'EOF'
import random, struct, sys
FILE_HEAD, LOG_HEAD, RECORD = (struct.Struct(f) for f in
                               ("<QIIII", "<IIiIIIQQQQIIQQQ", "<QQQHHi"))
M = (1 << 64) - 1
edges = [(0, 0, 0, 0, 0, 0), (M, M, M, 0xffff, 0xffff, -(1 << 31)),
         (1, 1, 0, 15, 7, (1 << 31) - 1), (1 << 63, 5, 1 << 63, 16, 6, -1),
         (100, 0, 12345, 3, 0, 0), (50, 7, 12340, 3, 1, 5), (M, (1 << 63) + 3, 1, 14, 8, 0),
         (0, M, 0, 2, 0xffff, -2)]
rnd = random.Random(7)
wide = [(rnd.getrandbits(64), rnd.choice((0, rnd.getrandbits(64))), rnd.getrandbits(64),
         rnd.getrandbits(16), rnd.getrandbits(16), rnd.randint(-(1 << 31), (1 << 31) - 1))
        for _ in range(512)]
step = [(1000 + 37 * i, 1 + i // 3, 0x7f0000001000 + 128 * (i // 3), 1 + i % 4, i % 3, i // 3)
        for i in range(500)]
for path, logs in ((sys.argv[1], (edges, wide, [], step)), (sys.argv[2], (step,))):
    with open(path, "wb") as f:
        f.write(FILE_HEAD.pack(0x3276657a74696c62, 2, LOG_HEAD.size, RECORD.size, 0))
        for seq, recs in enumerate(logs, 1):
            f.write(LOG_HEAD.pack(32, 512, seq - 2, 2, 4242, 2, 1, seq, 1 << 32, 0, len(recs),
                                  4242, 0, 0, 0))
            for r in recs:
                f.write(RECORD.pack(*r))
EOF

"$T" --read "$tmp/edges.raw" -w "$tmp/edges.packed" > /dev/null 2> "$tmp/err" ||
	bad "--read FILE -w: $(cat "$tmp/err")"
"$T" --read "$tmp/edges.packed" --raw -w "$tmp/edges.back" > /dev/null 2> "$tmp/err" ||
	bad "--read FILE --raw -w: $(cat "$tmp/err")"
check "packed, then unpacked: the raw file byte for byte" \
	"$(cmp -s "$tmp/edges.raw" "$tmp/edges.back" && echo same || echo differs)" same
check "-w packs: the packed file's magic" \
	"$(head -c 8 "$tmp/edges.packed" | od -An -c | tr -d ' ')" "bltzpkv2"
# A worker's small steps (a clock 37 ticks on, tasks and blocks in turn) take a few bytes.
"$T" --read "$tmp/steps.raw" -w "$tmp/steps.packed" > /dev/null 2> "$tmp/err" ||
	bad "--read FILE -w: $(cat "$tmp/err")"
check "packed: 500 records of small steps in 8 bytes a record at most" \
	"$("$PY" -c 'import os, sys; print(os.path.getsize(sys.argv[1]) <= 24 + 92 + 500 * 8, os.path.getsize(sys.argv[1]))' \
		"$tmp/steps.packed" | cut -d' ' -f1)" True

# The timeline's reader (Python) decodes the packed file to the same records.
check "tools/timeline reads the same records from both" "$("$PY" - "$src/tools/timeline" \
	"$tmp/edges.raw" "$tmp/edges.packed" <<'EOF'
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("timeline", sys.argv[1])
tl = importlib.util.module_from_spec(importlib.util.spec_from_loader("timeline", loader))
loader.exec_module(tl)
raw, packed = (tl.read_trace(p) for p in sys.argv[2:])
print(len(raw), sum(len(r) for _, r in raw),
      [(vars(a), r) for a, r in raw] == [(vars(a), r) for a, r in packed])
EOF
)" "4 1020 True"

# A packed log whose byte count is one short: its last record does not
# decode; the error names the log.  The first log starts at byte 24, its
# count of bytes after its 88-byte head.
"$PY" -c 'import struct, sys; d = bytearray(open(sys.argv[1], "rb").read()); n, = struct.unpack_from("<I", d, 112); struct.pack_into("<I", d, 112, n - 1); open(sys.argv[2], "wb").write(d)' \
	"$tmp/edges.packed" "$tmp/short.packed"
expect_error "--read, a packed log short of its records" \
	"damaged: the log at byte 24 does not unpack into its 8 records$" "$T" --read "$tmp/short.packed"
# A varint past 64 bits (a tenth byte of 2) is refused by both readers alike.
"$PY" -c 'import struct, sys
body = bytes([1]) + bytes([0x80] * 9 + [2]) + bytes([0, 0])
head = struct.pack("<IIiIIIQQQQIIQQQ", 32, 512, 0, 1, 1, 2, 1, 1, 1 << 32, 0, 1, 1, 0, 0, 0)
open(sys.argv[1], "wb").write(struct.pack("<QIIII", 0x32766b707a746c62, 2, 88, 32, 0) + head +
                              struct.pack("<I", len(body)) + body)' "$tmp/wide.packed"
expect_error "--read, a packed varint past 64 bits" \
	"damaged: the log at byte 24 does not unpack into its 1 records$" "$T" --read "$tmp/wide.packed"
rc=0
"$PY" "$src/tools/timeline" "$tmp/wide.packed" -o "$tmp/wide.json" 2> "$tmp/wide.err" || rc=$?
check "tools/timeline, a packed varint past 64 bits: refused" \
	"$rc $(grep -c "does not unpack into its 1 records" "$tmp/wide.err")" "1 1"
# Cut inside the last log: read up to it, and said.
head -c -10 "$tmp/edges.packed" > "$tmp/cut.packed"
"$T" --read "$tmp/cut.packed" -j > "$tmp/cut.out" 2> "$tmp/cut.err" || bad "--read of a cut file failed"
check "--read, a packed file cut inside a log: the logs before it" \
	"$(jq_py "$tmp/cut.out" 'r[0]["logs"]'), $(grep -c "cut short in the log at byte" "$tmp/cut.err")" "3, 1"

rc=0
"$T" --raw > /dev/null 2> "$tmp/raw.err" || rc=$?
check "--raw without -w: a usage error" "$rc $(grep -c -- "--raw is how -w writes" "$tmp/raw.err")" "2 1"
finish
