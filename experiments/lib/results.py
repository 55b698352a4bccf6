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


def die(msg):
    """A bad command line: one line on stderr naming the script, exit 2."""
    print(f"{os.path.basename(sys.argv[0])}: {msg}", file=sys.stderr)
    sys.exit(2)


def path_arg(doc, want_dir=True):
    """The one argument of a summarize or plot script: a results directory
    (or, with want_dir False, a file).  -h/--help prints @doc; anything
    else is one line and exit 2."""
    args = sys.argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(doc.strip())
        sys.exit(0)
    what = "a results directory" if want_dir else "a file"
    if len(args) != 1 or args[0].startswith("-"):
        die(f"expected one argument, {what} (usage: {doc.strip().split(':')[0]})")
    if not (os.path.isdir if want_dir else os.path.isfile)(args[0]):
        die(f"{args[0]}: not {what}")
    return args[0]


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
    for p in paths:
        if p in ("-h", "--help"):
            print(sys.modules["__main__"].__doc__.strip())
            sys.exit(0)
        if p.startswith("-"):
            die(f"unknown option '{p}' (usage: {os.path.basename(sys.argv[0])} FILE..., or lines on stdin)")
        if not os.path.isfile(p):
            die(f"{p}: no such file")
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

    def wins(self, bench, a, b, key):
        """"k/n": in how many of the n rounds that ran both, @a's @key was
        below @b's in the same round ("n/a" without a "round" field).  A
        row whose runs land in one of two regimes has a median that says
        which regime most rounds drew; this says how often each side won."""
        def by_round(rt):
            return {r["round"]: r[key] for r in self.per.get((rt, bench), [])
                    if r.get("round") is not None and r.get(key) is not None}
        ra, rb = by_round(a), by_round(b)
        both = [k for k in ra if k in rb]
        if not both:
            return "n/a"
        return f"{sum(1 for k in both if ra[k] < rb[k])}/{len(both)}"


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
    """Markdown rows: every histogram of every hist/TOOL-TAG.json, with the
    mode it was collected in and how much slower than untraced its run was."""
    paths = sorted(glob.glob(os.path.join(outdir, "hist", "*.json")))
    if not paths:
        why = os.path.join(outdir, "hist", "NOT-COLLECTED")
        return ["Histograms: " + open(why).read().strip()] if os.path.exists(why) else []
    pert = perturbation(outdir)
    modes = pert.get("modes", {})
    rows = ["| tool | mode | %s | traced / untraced | histogram | count | p50 | p99 | unit |" % tag_title,
            "|---|---|---|---|---|---|---|---|---|"]
    for path in paths:
        tool, _, tag = os.path.basename(path)[:-5].partition("-")
        slow = pert["runs"].get(tag, {}).get("slowdown")
        head = f"| {tool} | {modes.get(tool, 'per-event')} | {tag} | {times(slow)} |"
        objs = lines(path)
        if not objs:
            rows.append(f"{head} (no output) | | | | |")
            continue
        unit = objs[-1].get("unit", "")
        for label, b in merged_hists(objs).items():
            n = sum(x["count"] for x in b)
            if n:
                rows.append(f"{head} {label} | {n} | {quantile(b, n, 0.5)} | "
                            f"{quantile(b, n, 0.99)} | {unit} |")
    return rows


# ---------------------------------------------------------------------------
# Perturbation: each traced run beside the same command untraced
# (common.sh's traced_run writes raw/traced-TAG.jsonl and
# raw/untraced-TAG.jsonl, every line tagged with its "pair").

def run_time(row):
    """The time a bench line measured: sched-bench's median iteration (ns),
    or echo-bench's time per message (ns, from its rate)."""
    if "msgs_per_sec" in row:
        return 1e9 / row["msgs_per_sec"] if row["msgs_per_sec"] else None
    return row.get("median_ns")


def bench_key(row):
    """The name of the workload a bench line measured."""
    if "connections" in row:
        return f"{row['bench']}-{row['connections']}conns"
    return row["bench"]


def pair_slowdowns(traced, untraced):
    """{bench: [traced / untraced time, per pair]} and the same for the whole
    command ("run": the sum over its benchmarks), per pair."""
    t = {(r["pair"], bench_key(r)): run_time(r) for r in traced}
    u = {(r["pair"], bench_key(r)): run_time(r) for r in untraced}
    per, whole = {}, {}
    for (pair, bench), tv in t.items():
        uv = u.get((pair, bench))
        if not tv or not uv:
            continue
        per.setdefault(bench, []).append(tv / uv)
        w = whole.setdefault(pair, [0, 0])
        w[0] += tv
        w[1] += uv
    return per, [tv / uv for tv, uv in whole.values()]


def cpu_times(path):
    """{pair: CPU seconds (user + system)} from a .times file: "pair N", then
    bash's `times` (the shell's own line, then its children's: the command)."""
    out, pair, n = {}, None, 0
    try:
        text = open(path).read()
    except OSError:
        return out
    sec = lambda t: int(t.split("m")[0]) * 60 + float(t.split("m")[1].rstrip("s"))
    for line in text.splitlines():
        if line.startswith("pair "):
            pair, n = int(line.split()[1]), 0
            continue
        n += 1
        if pair is not None and n == 2:
            user, sys_ = line.split()
            out[pair] = sec(user) + sec(sys_)
    return out


def perturbation(outdir):
    """{"runs": {tag: {"slowdown", "pairs", "benches": {bench: {...}}}}} from
    the traced and untraced lines of every tag (medians over the pairs)."""
    out = {"runs": {}}
    meta = os.path.join(outdir, "meta.json")
    if os.path.exists(meta):
        out["modes"] = json.load(open(meta)).get("perturbation", {}).get("modes", {})
    for path in sorted(glob.glob(os.path.join(outdir, "raw", "traced-*.jsonl"))):
        tag = os.path.basename(path)[len("traced-"):-len(".jsonl")]
        traced = [r for r in lines(path) if "pair" in r]
        untraced = [r for r in lines(os.path.join(outdir, "raw", f"untraced-{tag}.jsonl")) if "pair" in r]
        per, whole = pair_slowdowns(traced, untraced)
        if not whole:
            continue
        benches = {}
        for bench, ratios in per.items():
            med = lambda rows: statistics.median(run_time(r) for r in rows if bench_key(r) == bench)
            benches[bench] = {"untraced_ns": round(med(untraced), 1), "traced_ns": round(med(traced), 1),
                              "slowdown": round(statistics.median(ratios), 3),
                              "pair_range": [round(min(ratios), 3), round(max(ratios), 3)]}
        out["runs"][tag] = {"slowdown": round(statistics.median(whole), 3), "pairs": len(whole),
                            "pair_range": [round(min(whole), 3), round(max(whole), 3)],
                            "benches": benches}
        tc = cpu_times(os.path.join(outdir, "raw", f"traced-{tag}.times"))
        uc = cpu_times(os.path.join(outdir, "raw", f"untraced-{tag}.times"))
        cpu = [tc[p] / uc[p] for p in tc if p in uc and uc[p] > 0]
        if cpu:
            out["runs"][tag]["cpu_slowdown"] = round(statistics.median(cpu), 3)
            out["runs"][tag]["cpu_pair_range"] = [round(min(cpu), 3), round(max(cpu), 3)]
    return out


def write_perturbation(outdir, modes):
    """Adds "perturbation" to OUTDIR/meta.json; @modes: ["TOOL=MODE", ...]."""
    path = os.path.join(outdir, "meta.json")
    meta = json.load(open(path))
    pert = perturbation(outdir)
    pert["modes"] = dict(m.split("=", 1) for m in modes)
    pert["what"] = ("slowdown = traced / untraced time of the same command, run back to back "
                    "(which goes first alternates); the median over the pairs, and pair_range the "
                    "lowest and highest pair. Per benchmark: its "
                    "median iteration time (sched-bench) or time per message (echo-bench); "
                    "per run: the sum over its benchmarks; cpu_slowdown: the same for the "
                    "command's CPU time (user + system), which a busy machine disturbs less")
    meta["perturbation"] = pert
    json.dump(meta, open(path, "w"), indent=2)


def times(slowdown):
    return "n/a" if slowdown is None else f"{slowdown:.1f}x"


def times_range(r):
    """A cell: the median of the pairs, and with two or more their range."""
    lo, hi = r.get("pair_range", [None, None])
    if lo is None or r.get("pairs", 2) < 2 and lo == hi:
        return times(r["slowdown"])
    return f"{times(r['slowdown'])} [{lo:.1f}, {hi:.1f}]"


def slowdown_label(outdir, tag):
    """A plot's series name: the tag and how much slower tracing made it."""
    run = perturbation(outdir)["runs"].get(tag, {})
    slow = run.get("slowdown")
    if slow is None:
        return f"{tag}, slowdown not measured"
    lo, hi = run.get("pair_range", [slow, slow])
    spread = f" (pairs {lo:.1f}-{hi:.1f})" if run.get("pairs", 1) > 1 else ""
    return f"{tag}, traced {slow:.1f}x slower than untraced{spread}"


def perturbation_table(outdir, tag_title):
    """Markdown: per benchmark and tag, traced / untraced (median of pairs)."""
    pert = perturbation(outdir)
    runs = pert["runs"]
    if not runs:
        return []
    tags = list(runs)
    benches = []
    for r in runs.values():
        benches += [b for b in r["benches"] if b not in benches]
    pairs = sorted({r["pairs"] for r in runs.values()})
    modes = ", ".join(f"{t} {m}" for t, m in sorted(pert.get("modes", {}).items())) or "per-event"
    rows = [f"What tracing cost: traced / untraced time of the same command, run back to back "
            f"({'/'.join(map(str, pairs))} pair(s), order alternating; median of the pairs, "
            f"[lowest, highest pair]). "
            f"Tools ({modes}): those of one traced pass attached together; a tag ending in "
            f"-per-event is a pass of its own for the tools without a summary mode. "
            f"Tracing cannot make a run faster: a ratio below 1, or pairs that straddle 1, "
            f"measure the machine's noise, which is then larger than what tracing cost "
            f"(a quick run's few short pairs on a busy machine); read a longer run.\n",
            f"| bench | " + " | ".join(f"{tag_title} {t}".strip() for t in tags) + " |",
            "|---|" + "---|" * len(tags)]
    for b in benches + ["(whole run)"]:
        cells = []
        for t in tags:
            r = runs[t] if b == "(whole run)" else dict(runs[t]["benches"].get(b) or {},
                                                          pairs=runs[t]["pairs"])
            cells.append(times_range(r) if r and "slowdown" in r else "n/a")
        rows.append(f"| {b} | " + " | ".join(cells) + " |")
    if any("cpu_slowdown" in r for r in runs.values()):
        cells = [times_range({"slowdown": r["cpu_slowdown"], "pair_range": r["cpu_pair_range"],
                              "pairs": r["pairs"]}) if "cpu_slowdown" in r else "n/a"
                 for r in runs.values()]
        rows.append("| (whole run, CPU time) | " + " | ".join(cells) + " |")
    return rows


def runtime_stats(path):
    """The counters sched-bench --stats printed: totals and per-worker sums,
    added up over every run the file holds (one per traced pair)."""
    tot = {}
    try:
        text = open(path).read()
    except OSError:
        return tot
    for line in text.splitlines():
        if line.startswith("stats:"):
            for k, v in re.findall(r"(\w+)=(\d+)", line):
                tot[k] = tot.get(k, 0) + int(v)
        elif line.strip().startswith("worker "):
            for k, v in re.findall(r"(\w+)=(\d+)", line):
                if k not in ("ewma_poll_ns", "interval"):
                    tot["w_" + k] = tot.get("w_" + k, 0) + int(v)
    return tot
