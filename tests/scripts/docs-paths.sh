#!/usr/bin/env bash
# docs-paths.sh - the documentation points at things that exist: every
# source path named in docs/*.md, README.md, the READMEs and NOTEBOOKs of
# experiments/ (and the peers' READMEs), tools/ and tests/model/ exists in
# the tree, and every reference of the
# form `FILE.md, "Section"` (in those documents and in source comments)
# names a heading of that file.  Placeholders (NAME, *, {a,b}) and build
# outputs (build/..., $(O)/..., include/generated/) are not checked.
set -u
src=${BLITZ_SRCTREE:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 1

python3 - <<'PY'
import glob, os, re, subprocess, sys

docs = sorted(glob.glob("docs/*.md") + ["README.md"] + glob.glob("experiments/*/README.md")
              + glob.glob("experiments/*/NOTEBOOK.md") + glob.glob("experiments/peers/*/README.md")
              + ["tools/README.md", "tests/model/README.md", "papers/README.md"])
tops = "core|docs|tools|backends|include|experiments|tests|scripts|probes|configs|papers"
# A path starts a word (not after '/', '$', '.', '-' or a letter: that would
# be a build output such as build/tests/blitz-tests).
path_re = re.compile(r"(?<![\w/$.-])((?:\.\./)*(?:%s)/[\w./*{},-]*[\w/*}-])" % tops)
bad = []

for f in docs:
    for n, line in enumerate(open(f), 1):
        for p in path_re.findall(line):
            if re.search(r"[A-Z]{3,}|\*|\{|generated/", p):
                continue                    # a placeholder or a generated file
            q = os.path.normpath(os.path.join(os.path.dirname(f), p)) if p.startswith("../") else p
            if q.endswith(".o"):
                q = q[:-2] + ".c"           # an object: its source
            if not os.path.exists(q.rstrip("/")):
                bad.append(f"{f}:{n}: {p} does not exist")

# `FILE.md, "Section"`, possibly across a line break (and a comment's " * ").
ref_re = re.compile(r"((?:docs/|experiments/(?:[\w-]+/)+|tests/model/|tests/|tools/)?[\w-]+\.md),\s+(?:\*\s+)?\"([^\"]+)\"")
try:
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split()
except OSError:
    files = []
if not files:                               # not a git checkout: the documents alone
    files = docs
for f in files:
    if not f.endswith((".md", ".c", ".h", ".pml", ".sh", ".rs")) or not os.path.isfile(f):
        continue
    text = open(f, errors="replace").read()
    for m in ref_re.finditer(text):
        doc, sec = m.group(1), " ".join(m.group(2).replace(" * ", " ").replace("*", "").split())
        cands = [doc, os.path.join(os.path.dirname(f), doc)]
        path = next((c for c in cands if os.path.isfile(c)), None)
        n = text.count("\n", 0, m.start()) + 1
        if path is None and doc == "FILE.md":
            continue                        # the form itself, as documented
        if path is None:
            bad.append(f"{f}:{n}: {doc} does not exist")
            continue
        heads = [" ".join(l.lstrip("#").split()) for l in open(path) if l.startswith("#")]
        if not any(sec in h for h in heads):
            bad.append(f'{f}:{n}: {doc} has no section "{sec}"')

for b in bad:
    print(b)
print(f"docs-paths: {len(docs)} documents, {len(bad)} broken references")
sys.exit(1 if bad else 0)
PY
