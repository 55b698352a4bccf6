"""results.py - what the experiments' summarize scripts share.

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
    import results

Everything here reads the raw files an experiment wrote, so a summary can be
remade from a results directory without re-running anything.
"""
import glob
import json
import os
import re
import statistics
import sys


def lines(path):
    """The JSON objects of a file of JSON lines ([] if it is missing)."""
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip().startswith("{")]
    except OSError:
        return []


def load(paths):
    """The JSON objects of the JSON-lines files @paths (stdin if none);
    lines that are not objects (progress, blank) are skipped."""
    files = [open(p) for p in paths] if paths else [sys.stdin]
    rows = []
    for f in files:
        rows += [json.loads(l) for l in f if l.strip().startswith("{")]
    return rows


class Rounds:
    """Bench result lines of several runtimes and rounds, grouped by
    (runtime, bench); benches in the order they first appear."""

    def __init__(self, rows):
        self.benches, self.per = [], {}
        for r in rows:
            if r["bench"] not in self.benches:
                self.benches.append(r["bench"])
            self.per.setdefault((r["runtime"], r["bench"]), []).append(r)
        self.rounds = max((len(v) for v in self.per.values()), default=0)

    def first(self, bench):
        """A line of @bench (for its parameters), blitz's if there is one."""
        for rt in ("blitz", "tokio"):
            if (rt, bench) in self.per:
                return self.per[(rt, bench)][0]
        return next(v[0] for (_, b), v in self.per.items() if b == bench)

    def med(self, runtime, bench, key):
        """The median over the rounds of @key (None where absent or null)."""
        vals = [r[key] for r in self.per.get((runtime, bench), []) if r.get(key) is not None]
        return statistics.median(vals) if vals else None


def ratio(a, b):
    """a / b as "0.00"; "n/a" if either is missing, "=" if both are 0."""
    if a is None or b is None:
        return "n/a"
    if b == 0:
        return "=" if a == 0 else "inf"
    return f"{a / b:.2f}"


def quantile(buckets, total, q):
    """Upper bound of the log2 bucket holding the q-quantile."""
    seen = 0
    for bk in buckets:
        seen += bk["count"]
        if seen >= q * total:
            return bk["high"]
    return buckets[-1]["high"] if buckets else 0


def merged_hists(objs):
    """label -> merged bucket list over every interval object of one tool."""
    out = {}
    for o in objs:
        for h in o.get("histograms", []):
            d = out.setdefault(h.get("label", ""), {})
            for b in h.get("buckets", []):
                k = (b["low"], b["high"])
                d[k] = d.get(k, 0) + b["count"]
    return {label: [{"low": lo, "high": hi, "count": c} for (lo, hi), c in sorted(d.items())]
            for label, d in out.items()}


def hist_table(outdir, tag_title):
    """Markdown rows: every histogram of every hist/TOOL-TAG.json."""
    paths = sorted(glob.glob(os.path.join(outdir, "hist", "*.json")))
    if not paths:
        why = os.path.join(outdir, "hist", "NOT-COLLECTED")
        return ["Histograms: " + open(why).read().strip()] if os.path.exists(why) else []
    rows = ["| tool | %s | histogram | count | p50 | p99 | unit |" % tag_title,
            "|---|---|---|---|---|---|---|"]
    for path in paths:
        tool, _, tag = os.path.basename(path)[:-5].partition("-")
        objs = lines(path)
        if not objs:
            rows.append(f"| {tool} | {tag} | (no output) | | | | |")
            continue
        unit = objs[-1].get("unit", "")
        for label, b in merged_hists(objs).items():
            n = sum(x["count"] for x in b)
            if n:
                rows.append(f"| {tool} | {tag} | {label} | {n} | {quantile(b, n, 0.5)} | "
                            f"{quantile(b, n, 0.99)} | {unit} |")
    return rows


def runtime_stats(path):
    """The counters sched-bench --stats printed: totals and per-worker sums."""
    tot = {}
    try:
        text = open(path).read()
    except OSError:
        return tot
    for line in text.splitlines():
        if line.startswith("stats:"):
            for k, v in re.findall(r"(\w+)=(\d+)", line):
                tot[k] = int(v)
        elif line.strip().startswith("worker "):
            for k, v in re.findall(r"(\w+)=(\d+)", line):
                if k not in ("ewma_poll_ns", "interval"):
                    tot["w_" + k] = tot.get("w_" + k, 0) + int(v)
    return tot
