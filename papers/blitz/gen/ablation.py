"""ablation.py - each scheduler policy switched off or changed in turn
(experiments/ablation): ns per operation against the default in the same
run, the runtime's counters (which show each knob at work) and the traced
histograms."""
import math
import os

import results
from gen import data, plots
from gen.emit import fmt_num, macro_name, tex_escape, tt
from gen.sched import COUNTERS

EXP = "ablation"
# What each variant takes away, in the project's words (experiments/ablation/README.md).
WHAT = {
    "default": "nothing: the baseline",
    "no-lifo": "the LIFO slot: spawned and woken tasks go to the back of the ring",
    "fixed-interval": "the adaptive global-queue interval (a fixed one instead)",
    "steal-one": "steal-half: a thief takes one task",
    "budget-32": "a smaller cooperative budget",
    "budget-512": "a larger cooperative budget",
    "wake-eager": "backlog's threshold: a busy worker wakes a sleeper for any backlog "
                  "of two tasks (Tokio's rule)",
    "wake-bounded": "backlog's rule: a busy worker wakes a sleeper only for a larger backlog, "
                    "after being awake for long, or on overflow",
}


def variants(d):
    """[(name, [assignments])] from raw/variants.txt, the baseline first."""
    out = []
    for line in open(os.path.join(d, "raw", "variants.txt")):
        name, _, env = line.strip().partition("=")
        if name:
            out.append((name, [] if env == "-" else env.split()))
    return out


def geomean(rs):
    """The geometric mean of the ratios @rs; None for none."""
    return math.exp(sum(map(math.log, rs)) / len(rs)) if rs else None


def sync_rows(meta, benches):
    """sync-bench's waiting rows in this run (meta.json's sync_rows); empty
    for a results set from before those rows were timed."""
    return [b for b in (meta.get("sync_rows") or "").split(",") if b in benches]


def waiting_rows(meta, benches, names, med):
    """A sentence: each variant's geometric-mean ratio over sync-bench's
    waiting rows against sched-bench's, each over the rows it has; empty
    without waiting rows."""
    sync = sync_rows(meta, benches)
    if not sync:
        return ""
    sched = [b for b in benches if b not in sync]

    def geo(n, rows):
        return geomean([med[(b, n)] / med[(b, names[0])] for b in rows
                        if med.get((b, n)) and med.get((b, names[0]))])

    def have(n, rows):
        return sum(1 for b in rows if med.get((b, n)) and med.get((b, names[0])))

    parts = []
    for n in names[1:]:
        a, b = geo(n, sync), geo(n, sched)
        if a and b:
            short = f" (over {have(n, sync)} of the {len(sync)})" if have(n, sync) < len(sync) else ""
            parts.append(f"{tex_escape(n)} {a:.2f}{short} against {b:.2f}")
    if not parts:
        return ""
    return ("On the rows where tasks wait on each other (sync-bench's " +
            ", ".join(tt(b) for b in sync) +
            "), each variant's time over the baseline's, geometric mean, against the same over "
            "sched-bench's rows: " + "; ".join(parts) + ".")


def generate(em, ctx):
    d = ctx.dir(EXP)
    rows = results.lines(os.path.join(d, "raw", "bench.jsonl")) if d else []
    fixed = "n/a"
    if not rows:
        em.define("resAbFinding", data.missing("ablation measurements", EXP))
        em.define("resFixedInterval", fixed)
        em.define("resAbRounds", "n/a")
        em.define("resAbIters", "n/a")
        em.define("resAbBackend", "n/a")
        em.define("resAbCheck", "")
        em.define("resAbWaiting", "")
        for f in ("ablation-variants.tex", "ablation-throughput.tex", "ablation-counters.tex",
                  "ablation-figures.tex"):
            em.write(f, "")
        return
    meta = ctx.meta(EXP)
    vs = variants(d)
    names = [n for n, _ in vs]
    base = names[0]
    for n, env in vs:
        for a in env:
            if a.startswith("BLITZ_GLOBAL_INTERVAL="):
                fixed = a.partition("=")[2]
    em.define("resFixedInterval", tex_escape(fixed))
    em.define("resAbRounds", tex_escape(meta.get("rounds", "n/a")))
    em.define("resAbIters", tex_escape(meta.get("iters", "n/a")))
    em.word("resAbBackend", meta.get("backend", "auto"))
    em.table("ablation-variants.tex", "l l p{0.45\\linewidth}", ["variant", "knobs", "what it removes or changes"],
             [[tex_escape(n), ", ".join(tt(a) for a in env) or "(defaults)", tex_escape(WHAT.get(n, ""))]
              for n, env in vs],
             caption="The ablation's variants; each is compared with the first in the same run.",
             label="tab:ablation-variants")

    benches = data.ordered(rows, "bench")
    med = data.median_by(rows, ("bench", "variant"), "ns_per_op")
    sync = sync_rows(meta, benches)
    table, worst, geo = [], None, {}
    for b in benches:
        ref = med.get((b, base))
        row = [tt(b), fmt_num(ref)]
        for n in names[1:]:
            v = med.get((b, n))
            r = v / ref if v and ref else None
            row.append(f"{r:.2f}" if r else "n/a")
            if r and b not in sync:  # sched-bench's rows; the waiting rows: waiting_rows
                geo.setdefault(n, []).append(r)
                if worst is None or r > worst[0]:
                    worst = (r, n, b)
        table.append(row)
    em.table("ablation-throughput.tex", "lr" + "r" * (len(names) - 1),
             ["benchmark", f"{tex_escape(base)} (ns/op)"] + [tex_escape(n) for n in names[1:]], table,
             size="\\footnotesize",
             caption=f"Ablation: ns per operation of the {tex_escape(base)} policy, and each variant's time "
             f"as a ratio to it (above 1: slower), median of {tex_escape(meta.get('rounds', '?'))} round(s) "
             "in which the variants alternate; 2 workers, untraced. sched-bench's benchmarks, then "
             "sync-bench's rows where tasks wait on each other, where the run has them.",
             label="tab:ablation-throughput")
    parts = []
    for n in names[1:]:
        if geo.get(n):
            g = geomean(geo[n])
            em.num(macro_name("ab geo", n), g, 2)
            parts.append(f"{tex_escape(n)} {g:.2f}")
    s = "Geometric means of the ratios over sched-bench's benchmarks: " + ", ".join(parts) + "."
    if worst:
        s += (f" The largest change among them is {tex_escape(worst[1])} on {tt(worst[2])}, "
              f"{worst[0]:.2f} times the {tex_escape(base)} time.")
    em.define("resAbFinding", s)
    em.define("resAbWaiting", waiting_rows(meta, benches, names, med))

    stats = {n: data.counters(d, n) for n in names}
    if any(stats.values()):
        crow = [[tex_escape(label)] + [fmt_num(stats[n].get(k), 0) for n in names] for k, label in COUNTERS]
        crow.append(["mean steal size"] + [
            f"{stats[n]['stolen'] / stats[n]['w_steals']:.1f}" if stats[n].get("w_steals") else "n/a"
            for n in names])
        em.table("ablation-counters.tex", "l" + "r" * len(names), ["counter"] + [tex_escape(n) for n in names],
                 crow, size="\\footnotesize",
                 caption="The runtime's counters in one traced run of every benchmark per variant: "
                 "each knob at work (no LIFO hits without the slot, a mean steal of one task under steal-one).",
                 label="tab:ablation-counters")
        lifo = stats.get("no-lifo", {}).get("w_lifo_hits")
        st = stats.get("steal-one", {})
        check = []
        if lifo is not None:
            check.append(f"no-lifo made {fmt_num(lifo, 0)} LIFO hits")
        if st.get("w_steals"):
            check.append(f"steal-one's mean steal was {st['stolen'] / st['w_steals']:.2f} tasks")
        em.define("resAbCheck", ("In this run " + " and ".join(check) + ".") if check else "")
    else:
        em.write("ablation-counters.tex", "")
        em.define("resAbCheck", "")

    why = data.why_no_hist(d)
    figs = []
    if not why:
        for tool, what in (("schedlat", "Schedule latency per variant"),
                           ("steal", "Tasks per steal per variant"),
                           ("tasksrc", "Polls by task source per variant")):
            rel = plots.tool_hist(em, ctx, EXP, tool, names, f"ablation-{tool}",
                                  f"{tool}: sched-bench (all), one series per variant")
            if rel:
                figs.append(plots.figure(rel, f"{what} (\\texttt{{experiments/ablation}}, traced run).",
                                         f"fig:ablation-{tool}", "0.92\\linewidth"))
    else:
        figs.append(f"Histograms were not collected in this results set: {tex_escape(why)}")
    em.write("ablation-figures.tex", "\n".join(figs))
