"""sched.py - the scheduler on io_uring, epoll and poll
(experiments/sched-baseline): ns per operation of every benchmark on each
backend, the traced run's histograms (quantiles and plots) and the
runtime's counters."""
import os

import results
from gen import data, plots
from gen.emit import fmt_num, macro_name, tex_escape, tt

EXP = "sched-baseline"
TOOLS = [("schedlat", "Schedule latency, queued (spawn or wake) to polled"),
         ("polltime", "Poll time: how long each poll function ran"),
         ("park", "Worker sleep time, park to unpark, whatever ended the sleep (Table~\\ref{tab:sched-hist} splits them)"),
         ("steal", "Tasks taken per successful steal"),
         ("tasksrc", "Polls by where find\\_work took the task")]
# (key of results.runtime_stats, name): w_ keys are the per-worker sums.
COUNTERS = [("polled", "polls"), ("w_lifo_hits", "LIFO hits"), ("w_global_batches", "global batches"),
            ("w_steals", "steals"), ("stolen", "tasks stolen"), ("w_steal_fails", "failed steals"),
            ("w_overflows", "overflows"), ("parked", "parks")]


def fastest_sentence(benches, backends, med):
    wins = {b: 0 for b in backends}
    spread = None
    for bench in benches:
        vals = [(med[(bench, k)], k) for k in backends if (bench, k) in med]
        if len(vals) < 2:
            continue
        vals.sort()
        wins[vals[0][1]] += 1
        r = vals[-1][0] / vals[0][0]
        if spread is None or r > spread[0]:
            spread = (r, bench, vals[0][1], vals[-1][1])
    parts = [f"{tex_escape(k)} on {n}" for k, n in wins.items() if n]
    s = "Fastest backend per benchmark: " + ", ".join(parts) + "."
    if spread:
        s += (f" The widest spread is on {tt(spread[1])}: {tex_escape(spread[3])} takes "
              f"{spread[0]:.2f} times as long as {tex_escape(spread[2])}.")
    return s


def generate(em, ctx):
    d = ctx.dir(EXP)
    meta = ctx.meta(EXP)
    rows = results.lines(os.path.join(d, "raw", "bench.jsonl")) if d else []
    if not rows:
        em.define("resSbFinding", data.missing("scheduler measurements", EXP))
        em.write("sched-throughput.tex", "")
        em.write("sched-figures.tex", "")
        em.write("sched-hist.tex", "")
        em.write("sched-counters.tex", "")
        em.define("resSbRounds", "n/a")
        em.define("resSbIters", "n/a")
        em.choice("resHaveSchedHist", False)
        return
    em.define("resSbRounds", tex_escape(meta.get("rounds", "n/a")))
    em.define("resSbIters", tex_escape(meta.get("iters", "n/a")))
    backends = data.ordered(rows, "backend")
    benches = data.ordered(rows, "bench")
    med = data.median_by(rows, ("bench", "backend"), "ns_per_op")
    for (bench, k), v in med.items():
        em.num(macro_name("sb", bench, k), v)
    em.define("resSbFinding", fastest_sentence(benches, backends, med))
    table = []
    for bench in benches:
        table.append([tt(bench)] + [fmt_num(med.get((bench, k))) for k in backends])
    em.table("sched-throughput.tex", "l" + "r" * len(backends),
             ["benchmark"] + [tex_escape(k) for k in backends], table,
             caption="Scheduler benchmarks on each I/O backend: ns per operation, median over "
                     f"{tex_escape(meta.get('rounds', '?'))} round(s) of "
                     f"{tex_escape(meta.get('iters', '?'))} timed iteration(s), 2 workers, untraced "
                     "(\\texttt{experiments/sched-baseline}).",
             label="tab:sched-throughput")

    stats = {k: data.counters(d, k) for k in backends}
    crow = [[tex_escape(name)] + [fmt_num(stats[k].get(key), 0) for k in backends]
            for key, name in COUNTERS]
    if any(stats.values()):
        em.table("sched-counters.tex", "l" + "r" * len(backends),
                 ["counter"] + [tex_escape(k) for k in backends], crow,
                 caption="The runtime's own counters in the traced run of every benchmark "
                 "(\\texttt{sched-bench --stats}), per backend.", label="tab:sched-counters")
    else:
        em.write("sched-counters.tex", "")

    why = data.why_no_hist(d)
    em.choice("resHaveSchedHist", not why)
    if why:
        em.write("sched-hist.tex", f"Histograms were not collected in this results set: {tex_escape(why)}")
        em.write("sched-figures.tex", "")
        return
    hrows = []
    for tool, _ in TOOLS[:3]:
        for k in backends:
            q = data.hist_quantiles(os.path.join(d, "hist", f"{tool}-{k}.json"))
            for label, (n, p50, p99, unit) in sorted(q.items()):
                hrows.append([tt(tool), tex_escape(k), tex_escape(label), fmt_num(n, 0),
                              fmt_num(p50, 0), fmt_num(p99, 0), tex_escape(unit)])
    em.table("sched-hist.tex", "lllrrrl", ["tool", "backend", "series", "events", "p50", "p99", "unit"],
             hrows, size="\\footnotesize",
             caption="Quantiles of the traced runs' histograms (upper bounds of log2 buckets), "
             "per backend, every benchmark in one run.", label="tab:sched-hist")
    figs = []
    for tool, what in TOOLS:
        rel = plots.tool_hist(em, ctx, EXP, tool, backends, f"sched-{tool}",
                              f"{tool}: sched-bench (all), 2 workers")
        if rel:
            figs.append(plots.figure(rel, f"{what}; sched-bench, every benchmark, one traced run "
                                     "per backend (\\texttt{experiments/sched-baseline}).",
                                     f"fig:sched-{tool}", "0.92\\linewidth"))
    em.write("sched-figures.tex", "\n".join(figs) if figs else "No histogram could be plotted.")
