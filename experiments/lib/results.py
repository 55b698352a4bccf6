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


def lines(path):
    """The JSON objects of a file of JSON lines ([] if it is missing)."""
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip().startswith("{")]
    except OSError:
        return []


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
