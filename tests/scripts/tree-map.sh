#!/usr/bin/env bash
# tree-map.sh - docs/design.md's "Layout" is the one map of the tree
# (README.md, `make help` and docs/scheduler.md point to it): every .c and
# .h under core/ and backends/ is named in it, every folder of the tree
# down to two levels (the folders git tracks, without tests/fuzz/corpus/)
# is in it, and every name in it exists.  Prints each one that is not.
#
# The map is the first ``` block after "## Layout": a name ending in '/'
# is a folder, names indented two spaces more are inside it, and what
# follows two or more spaces on a line is a comment.
set -u
src=${BLITZ_SRCTREE:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 1

python3 - <<'PY'
import os, re, subprocess, sys

text = open("docs/design.md").read()
m = re.search(r"^## Layout\n.*?^```\n(.*?)^```", text, re.M | re.S)
if not m:
    print('FAIL docs/design.md has no "## Layout" section with a ``` block')
    sys.exit(1)

named = set()                       # every path the map names
bad = []
stack = []                          # (indent, folder) of the open folders
for n, line in enumerate(m.group(1).splitlines(), 1):
    if not line.strip():
        continue
    indent = len(line) - len(line.lstrip(" "))
    if indent % 2:
        bad.append(f"Layout line {n}: indented {indent} spaces, not a multiple of 2: {line.strip()}")
        continue
    while stack and stack[-1][0] >= indent:
        stack.pop()
    if stack and stack[-1][0] != indent - 2:
        bad.append(f"Layout line {n}: indented past its folder: {line.strip()}")
        continue
    base = stack[-1][1] if stack else ""
    names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0].split()
    for name in names:
        path = base + name
        named.add(path.rstrip("/"))
        if not os.path.exists(path):
            bad.append(f"Layout names {path}, which does not exist")
    folders = [x for x in names if x.endswith("/")]
    if len(folders) == 1 and names[-1] == folders[0]:
        stack.append((indent, base + folders[0]))

# Every source file of core/ and backends/, as it is on disk.
for top in ("core", "backends"):
    for d, dirs, files in os.walk(top):
        for f in files:
            p = os.path.join(d, f)
            if f.endswith((".c", ".h")) and p not in named:
                bad.append(f"{p} is not in docs/design.md's Layout")

# Every folder, two levels down, that holds a tracked file.
try:
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split()
except OSError:
    tracked = []
folders = set()
for f in tracked:
    parts = f.split("/")[:-1]
    for i in range(1, min(len(parts), 2) + 1):
        folders.add("/".join(parts[:i]))
for d in sorted(folders):
    if d.startswith("tests/fuzz/corpus") or not os.path.isdir(d):
        continue
    if d not in named:
        bad.append(f"folder {d}/ is not in docs/design.md's Layout")

for b in bad:
    print("FAIL " + b)
print(f"tree-map: {len(named)} names in the Layout, {len(bad)} problems")
sys.exit(1 if bad else 0)
PY
