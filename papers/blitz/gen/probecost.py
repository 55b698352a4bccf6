"""probecost.py - what the probes cost (experiments/probe-cost): the
unattached overhead against a build without probes (median of the paired
rounds' ratios, and callgrind's instruction counts), and the cost per hit
with every probe attached."""
import os
import statistics

import results
from gen import data
from gen.emit import fmt_num, tex_escape, tt

EXP = "probe-cost"


def pct(x):
    return "n/a" if x is None else f"{(x - 1) * 100:+.1f}\\%"


def paired(timed, bench, workers):
    """probes / no probes of each round's pair of runs."""
    by_round = {}
    for r in timed:
        if r["bench"] == bench and r.get("workers") == workers and r["variant"] in ("probes", "noprobes"):
            by_round.setdefault(r.get("round"), {})[r["variant"]] = r["median_ns"]
    return [v["probes"] / v["noprobes"] for v in by_round.values() if v.get("probes") and v.get("noprobes")]


def spread(ratios):
    """median [p25, p75] of @ratios as percentages."""
    if not ratios:
        return "n/a", None
    m = statistics.median(ratios)
    if len(ratios) >= 2:
        q = statistics.quantiles(ratios, n=4, method="inclusive")
        return f"{pct(m)} [{pct(q[0])}, {pct(q[2])}]", m
    return pct(m), m


def generate(em, ctx):
    d = ctx.dir(EXP)
    rows = results.lines(os.path.join(d, "raw.jsonl")) if d else []
    timed = [r for r in rows if "median_ns" in r]
    if not timed:
        em.define("resPcFinding", data.missing("probe-cost measurements", EXP))
        for m in ("resPcRounds", "resPcIters", "resPcOverheadRange", "resPcInstrRange", "resPcCostRange"):
            em.define(m, "n/a")
        em.write("probecost.tex", "")
        return
    meta = ctx.meta(EXP)
    em.define("resPcRounds", tex_escape(meta.get("rounds", "n/a")))
    em.define("resPcIters", tex_escape(meta.get("iters", "n/a")))
    benches = data.ordered(timed, "bench")
    workers = sorted({r.get("workers") for r in timed if r["variant"] in ("probes", "noprobes")},
                     key=lambda w: -(w or 0))
    attached_w = next((r.get("workers") for r in timed if r["variant"] == "attached"), None)
    med = data.median_by(timed, ("variant", "bench", "workers"), "median_ns")
    hits = {r["bench"]: r for r in rows if r.get("variant") == "hits"}
    instr = {}
    for r in rows:
        if r.get("variant") == "instructions" and r.get("instructions"):
            instr.setdefault(r["bench"], {})[r["build"]] = r["instructions"]

    head = ["benchmark"] + [f"{w} worker{'s' if w != 1 else ''}" for w in workers]
    cols = "l" + "r" * len(workers)
    if instr:
        head.append("instructions")
        cols += "r"
    if attached_w is not None:
        head += ["hits per run", "cost per hit (ns)"]
        cols += "rr"
    table, costs, medians, instr_over = [], [], [], []
    for b in benches:
        row = [tt(b)]
        for w in workers:
            text, m = spread(paired(timed, b, w))
            row.append(text)
            if m is not None:
                medians.append(m)
        if instr:
            v = instr.get(b, {})
            over = v["probes"] / v["noprobes"] if v.get("probes") and v.get("noprobes") else None
            row.append("n/a" if over is None else f"{(over - 1) * 100:+.2f}\\%")
            if over is not None:
                instr_over.append(over)
        if attached_w is not None:
            att, on = med.get(("attached", b, attached_w)), med.get(("probes", b, attached_w))
            h = hits.get(b)
            per_run = h["hits"] / h["runs"] if h and h.get("runs") else None
            cost = (att - on) / per_run if att and on and per_run else None
            row += [fmt_num(per_run, 0), fmt_num(cost, 0)]
            if cost is not None:
                costs.append(cost)
        table.append(row)
    em.table("probecost.tex", cols, head, table,
             caption="The cost of the probes. Unattached: the median over "
             f"{tex_escape(meta.get('rounds', '?'))} round(s) of the ratio of each round's pair of runs "
             "(probes / no probes $-1$), 25th and 75th percentiles in brackets, per worker count. "
             "Instructions: callgrind, 1 worker, whole run, both builds. Attached: every probe counted "
             "by bpftrace; cost per hit = (attached $-$ unattached median) / hits per run.",
             label="tab:probecost", size="\\footnotesize")
    em.define("resPcOverheadRange", f"{pct(min(medians))} to {pct(max(medians))}" if medians else "n/a")
    em.define("resPcInstrRange", f"{(min(instr_over) - 1) * 100:+.2f}\\% to {(max(instr_over) - 1) * 100:+.2f}\\%"
              if instr_over else "n/a (no valgrind)")
    em.define("resPcCostRange", f"{fmt_num(min(costs), 0)} to {fmt_num(max(costs), 0)}\\,ns"
              if costs else "n/a (not measured: needs root and bpftrace)")
    em.define("resPcFinding", "")
