#!/usr/bin/env bash
# experiments-fs-read.sh - experiments/fs-read in quick mode: file reads on
# io_uring and the blocking pool: a line per row and the table.
set -euo pipefail
. "$(dirname "$0")/experiments-lib.bash"

run_quick fs-read fr
need "$tmp/fr/summary.md" "fs-read summary"
n=$(wc -l < "$tmp/fr/raw/fs.jsonl")
want=12	# 2 backends x (4 warm + 2 cold rows); 6 where io_uring is not available
grep -q 'not available' "$tmp/fr/raw/stderr.log" && want=6
[ "$n" -eq $want ] && echo "ok   fs-read: $n lines" || { echo "FAIL fs-read: $n lines, not $want"; fail=1; }
grep -q '^| 4K | 1 |' "$tmp/fr/summary.md" && echo "ok   fs-read: table" || { echo "FAIL fs-read: no table"; fail=1; }
exit $fail
