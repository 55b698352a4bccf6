"""backends.py - the echo server on io_uring, epoll and poll
(experiments/backends): throughput and round-trip percentiles by
connection count, and the scheduler's histograms under that I/O load."""
import os

import results
from gen import data, plots
from gen.emit import fmt_num, tex_escape, tt

EXP = "backends"


def generate(em, ctx):
    d = ctx.dir(EXP)
    rows = results.lines(os.path.join(d, "raw", "echo.jsonl")) if d else []
    meta = ctx.meta(EXP)
    if not rows:
        em.define("resBeFinding", data.missing("echo measurements", EXP))
        for f in ("backends-echo.tex", "backends-hist.tex", "backends-figures.tex", "backends-echo-figure.tex"):
            em.write(f, "")
        em.define("resBeDuration", "n/a")
        em.define("resBeRounds", "n/a")
        em.define("resBeTracedConns", "n/a")
        em.define("resBeParkFinding", "")
        em.choice("resHaveBackendsHist", False)
        return
    em.define("resBeDuration", tex_escape(meta.get("duration_s", "n/a")) + "\\,s")
    em.define("resBeRounds", tex_escape(meta.get("rounds", "n/a")))
    em.define("resBeTracedConns", tex_escape(meta.get("traced_connections", "n/a")))
    backends = data.ordered(rows, "backend")
    conns = sorted({r["connections"] for r in rows})
    med = {k: data.median_by(rows, ("connections", "backend"), k)
           for k in ("msgs_per_sec", "p50_ns", "p99_ns", "p999_ns")}
    table = []
    for c in conns:
        base = med["msgs_per_sec"].get((c, backends[0]))
        for k in backends:
            thr = med["msgs_per_sec"].get((c, k))
            table.append([fmt_num(c, 0), tex_escape(k), fmt_num(thr, 0)] +
                         [fmt_num(med[q].get((c, k), 0) / 1000, 0) for q in ("p50_ns", "p99_ns", "p999_ns")] +
                         [f"{thr / base:.2f}" if thr and base else "n/a"])
    em.table("backends-echo.tex", "rlrrrrr",
             ["conns", "backend", "msgs/s", "p50 (\\textmu s)", "p99 (\\textmu s)", "p99.9 (\\textmu s)",
              f"vs {tex_escape(backends[0])}"], table,
             caption="Echo server, 64-byte messages, 2 workers, the same closed-loop client for every "
             f"backend: median over {tex_escape(meta.get('rounds', '?'))} round(s) of "
             f"{tex_escape(meta.get('duration_s', '?'))}\\,s (\\texttt{{experiments/backends}}).",
             label="tab:backends-echo")
    # Which backend served the most messages at the largest connection count.
    top = max(conns)
    best = max(backends, key=lambda k: med["msgs_per_sec"].get((top, k)) or 0)
    low = min(backends, key=lambda k: med["p99_ns"].get((top, k)) or float("inf"))
    em.define("resBeFinding",
              f"At {fmt_num(top, 0)} connections {tex_escape(best)} served the most messages per "
              f"second ({fmt_num(med['msgs_per_sec'].get((top, best)), 0)}) and {tex_escape(low)} "
              f"had the lowest p99 ({fmt_num(med['p99_ns'].get((top, low), 0) / 1000, 0)}\\,\\textmu s).")

    why = data.why_no_hist(d)
    em.choice("resHaveBackendsHist", not why)
    if why:
        em.define("resBeParkFinding", "")
        em.write("backends-hist.tex", f"Histograms were not collected in this results set: {tex_escape(why)}")
        em.write("backends-figures.tex", "")
    else:
        hrows, shares = [], []
        for k in backends:
            q = data.hist_quantiles(os.path.join(d, "hist", f"park-{k}.json"))
            total = sum(v[0] for v in q.values())
            if total:
                shares.append(f"{tex_escape(k)} {100 * q.get('io', (0,))[0] / total:.0f}\\%")
            for label, (n, p50, p99, unit) in sorted(q.items()):
                hrows.append([tex_escape(k), tex_escape(label), fmt_num(n, 0), fmt_num(p50, 0),
                              fmt_num(p99, 0), tex_escape(unit)])
        em.define("resBeParkFinding", "Share of the sleeps ended by I/O completions: " +
                  ", ".join(shares) + "." if shares else "")
        em.table("backends-hist.tex", "llrrrl", ["backend", "ended by", "sleeps", "p50", "p99", "unit"],
                 hrows, size="\\footnotesize",
                 caption="How workers slept under the echo load, by what ended the sleep: "
                 "\\emph{io}, completions in the I/O driver; \\emph{notified}, another worker; "
                 "\\emph{timeout}, the park limit (traced run, "
                 f"{tex_escape(meta.get('traced_connections', '?'))} connections).",
                 label="tab:backends-park")
        figs = []
        for tool, what in (("park", "Worker sleep time under the echo load, whatever ended the sleep (Table~\\ref{tab:backends-park} splits them)"),
                           ("schedlat", "Schedule latency under the echo load")):
            rel = plots.tool_hist(em, ctx, EXP, tool, backends, f"backends-{tool}",
                                  f"{tool}: echo server, {meta.get('traced_connections', '?')} connections, 2 workers")
            if rel:
                figs.append(plots.figure(rel, f"{what} (\\texttt{{experiments/backends}}, traced run).",
                                         f"fig:backends-{tool}", "0.92\\linewidth"))
        em.write("backends-figures.tex", "\n".join(figs))
    echo = plots.experiment_plot(em, ctx, EXP, "plot", ["echo"], scale=0.85)
    em.write("backends-echo-figure.tex", plots.figure(
        echo[0], "Echo throughput and round-trip latency by connection count, one colour per backend "
        "(\\texttt{experiments/backends/plot}).", "fig:backends-echo", "0.92\\linewidth") if echo else "")
