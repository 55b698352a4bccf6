"""modes.py - why benchmark rows run in two modes (experiments/modes): the
rows' untraced runs, the one-worker rows placed by hand on one CPU or two,
what the event log shows of chained_spawn's two kinds of iteration, and
the CPUs yield_many's slow and fast runs had at two workers."""
import json
import os
import statistics

import results
from gen import data, plots
from gen.emit import fmt_num, tt

EXP = "modes"
# The words each one-worker row's macros are named with.
PLACED = {"chained_spawn@1": "Chained", "spawn_many_remote@1": "Remote"}


def missing(em):
    em.define("resModesFinding", data.missing("mode measurements", EXP))
    for m in ("resModesRuns", "resModesPairs", "resModesRatioRange", "resModesItersParked",
              "resModesIters", "resModesAwakeUs", "resModesParkedUs", "resModesParkUs",
              "resModesPollsSlower", "resModesYieldRuns", "resModesYieldSlow",
              "resModesYieldSlowNs", "resModesYieldFastNs", "resModesYieldSlowCpus",
              "resModesYieldFastCpus"):
        em.define(m, "n/a")
    for f in ("modes-rows.tex", "modes-placement.tex", "modes-figures.tex"):
        em.write(f, "")


def rows_table(em, beside):
    """Each row's untraced runs: min, median and max ns per operation."""
    out = []
    for row in data.ordered(beside, "row"):
        v = [r["ns_per_op"] for r in beside if r["row"] == row]
        out.append([tt(row), fmt_num(len(v)), fmt_num(min(v), 1), fmt_num(statistics.median(v), 1),
                    fmt_num(max(v), 1), fmt_num(max(v) / min(v), 2) + "x"])
    em.table("modes-rows.tex", "lrrrrr", ["row", "runs", "min", "median", "max", "max/min"], out,
             caption="Each row run after run, untraced, on a machine standing still "
                     "(\\texttt{experiments/modes}, ns per operation).",
             label="tab:modes-rows")


def placement_table(em, placed):
    """Each one-worker row on one CPU and on two; the ratio of the medians."""
    out, ratios = [], []
    for row in data.ordered(placed, "row"):
        same = [r["ns_per_op"] for r in placed if r["row"] == row and r["placement"] == "same"]
        apart = [r["ns_per_op"] for r in placed if r["row"] == row and r["placement"] == "apart"]
        if not same or not apart:
            continue
        ratio = statistics.median(apart) / statistics.median(same)
        ratios.append(ratio)
        out.append([tt(row), fmt_num(len(same)),
                    f"{fmt_num(statistics.median(same), 1)} ({fmt_num(min(same), 1)}--{fmt_num(max(same), 1)})",
                    f"{fmt_num(statistics.median(apart), 1)} ({fmt_num(min(apart), 1)}--{fmt_num(max(apart), 1)})",
                    fmt_num(ratio, 2) + "x", "yes" if max(same) < min(apart) else "no"])
    em.table("modes-placement.tex", "lrrrrl",
             ["row", "pairs", "one CPU", "two CPUs", "ratio", "apart?"], out,
             caption="The one-worker rows with the program's thread and its worker placed by hand, "
                     "in alternated pairs: ns per operation, median (min--max); \\emph{apart?}: every "
                     "run on one CPU faster than every run on two.",
             label="tab:modes-placement")
    lo, hi = (min(ratios), max(ratios)) if ratios else (None, None)
    em.define("resModesRatioRange", "n/a" if lo is None else
              fmt_num(lo, 2) + "x" if abs(hi - lo) < 0.005 else f"{fmt_num(lo, 2)}--{fmt_num(hi, 2)}x")


def iterations(em, path):
    """chained_spawn@1's traced iterations: worker parked inside or not."""
    its = json.load(open(path)) if os.path.exists(path) else []
    awake = [r for r in its if all(w["parked_ns"] == 0 for w in r["workers"].values())]
    parked = [r for r in its if any(w["parked_ns"] > 0 for w in r["workers"].values())]

    def med(group, f):
        return statistics.median(f(r) for r in group) if group else None

    def busy(r):
        return sum(w["busy_ns"] for w in r["workers"].values())

    em.num("resModesIters", len(its))
    em.num("resModesItersParked", len(parked))
    em.num("resModesAwakeUs", med(awake, lambda r: r["ns"] / 1e3), 1)
    em.num("resModesParkedUs", med(parked, lambda r: r["ns"] / 1e3), 1)
    em.num("resModesParkUs", med(parked, lambda r: sum(w["parked_ns"] for w in r["workers"].values()) / 1e3), 1)
    slower = med(parked, busy) / med(awake, busy) if awake and parked else None
    em.define("resModesPollsSlower", "n/a" if slower is None else f"{(slower - 1) * 100:.0f}\\%")


def two_workers(em, beside):
    """yield_many@2's untraced runs: the slow ones (1.3x the fastest or
    more, the rule analyze splits iterations by) against the others, by
    the CPUs each run had (its CPU time over its wall time)."""
    runs = [r for r in beside if r["row"] == "yield_many@2" and "cpus" in r]
    fast = min((r["ns_per_op"] for r in runs), default=None)
    slow = [r for r in runs if r["ns_per_op"] >= 1.3 * fast] if runs else []
    rest = [r for r in runs if r not in slow]

    def med(group, f):
        return statistics.median(r[f] for r in group) if group else None

    em.num("resModesYieldRuns", len(runs) or None)
    em.num("resModesYieldSlow", len(slow) if runs else None)
    em.num("resModesYieldSlowNs", med(slow, "ns_per_op"), 1)
    em.num("resModesYieldFastNs", med(rest, "ns_per_op"), 1)
    em.num("resModesYieldSlowCpus", med(slow, "cpus"), 2)
    em.num("resModesYieldFastCpus", med(rest, "cpus"), 2)


def generate(em, ctx):
    d = ctx.dir(EXP)
    beside = results.lines(os.path.join(d, "raw", "beside.jsonl")) if d else []
    if not beside:
        missing(em)
        return
    meta = ctx.meta(EXP)
    em.define("resModesFinding", data.quick_note(meta))
    em.num("resModesRuns", int(meta.get("runs", 0)) or None)
    em.num("resModesPairs", int(meta.get("placement_pairs", 0)) or None)
    rows_table(em, beside)
    two_workers(em, beside)
    placement_table(em, results.lines(os.path.join(d, "raw", "placement.jsonl")))
    iterations(em, os.path.join(d, "raw", "chained_spawn@1.json"))
    made = plots.experiment_plot(em, ctx, EXP, "plot", ["placement", "timeline-awake", "timeline-parked"],
                                 scale=1.0)
    captions = {"placement": "Each one-worker row's runs, the program's thread and the worker on one CPU "
                             "or on two.",
                "timeline-awake": "A \\texttt{chained\\_spawn} iteration at one worker whose worker stayed "
                                  "awake (the median of them; \\texttt{tools/timeline}).",
                "timeline-parked": "One whose worker parked first (the median of them): the grey slice is "
                                   "the park, the wake comes from the other CPU."}
    figs = ""
    for rel in made:
        name = rel[len(EXP) + 1:-len(".png")]
        figs += plots.figure(rel, captions[name] + " (\\texttt{experiments/modes}.)", f"fig:modes-{name}")
    em.write("modes-figures.tex", figs)
