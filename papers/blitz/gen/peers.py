"""peers.py - blitz against Tokio and Go on the scheduler benchmarks, and
against Tokio and libuv as echo servers (experiments/peers), each measured
in the same run with the runtimes alternating."""
import math
import os

import results
from gen import data, plots
from gen.emit import fmt_num, macro_name, tex_escape, tt

EXP = "peers"


def sched_part(em, rows, meta):
    runtimes = data.ordered(rows, "runtime")
    benches = data.ordered(rows, "bench")
    med = data.median_by(rows, ("runtime", "bench"), "ns_per_op")
    peers = [r for r in runtimes if r != "blitz"]
    table, ahead, logs = [], {p: 0 for p in peers}, {p: [] for p in peers}
    for b in benches:
        base = med.get(("blitz", b))
        row = [tt(b)] + [fmt_num(med.get((rt, b))) for rt in runtimes]
        for p in peers:
            v = med.get((p, b))
            r = v / base if v and base else None
            row.append(f"{r:.2f}" if r else "n/a")
            if r:
                logs[p].append(math.log(r))
                ahead[p] += r > 1
        table.append(row)
    em.table("peers-sched.tex", "l" + "r" * (len(runtimes) + len(peers)),
             ["benchmark"] + [f"{tex_escape(rt)}" for rt in runtimes] +
             [f"{tex_escape(p)}/blitz" for p in peers], table, size="\\footnotesize",
             caption="Scheduler benchmarks, ns per operation of each runtime, and each peer's time as a "
             "ratio to blitz's (above 1: blitz faster); median of "
             f"{tex_escape(meta.get('sched_rounds', '?'))} round(s) of {tex_escape(meta.get('sched_iters', '?'))} "
             "iteration(s), 2 workers, runtimes alternating (\\texttt{experiments/peers/run-sched}).",
             label="tab:peers-sched")
    parts = []
    for p in peers:
        if logs[p]:
            g = math.exp(sum(logs[p]) / len(logs[p]))
            em.num(macro_name("peer geo", p), g, 2)
            parts.append(f"blitz was faster than {tex_escape(p)} on {ahead[p]} of {len(logs[p])} benchmarks "
                         f"(geometric mean of {tex_escape(p)}/blitz: {g:.2f})")
    missing = [rt for rt in ("tokio", "go") if rt not in runtimes]
    s = "; ".join(parts) + "." if parts else "No peer ran."
    if missing:
        s += " Not in this run (could not be built): " + ", ".join(missing) + "."
    em.define("resPeerSchedFinding", "In this run, " + s)


def echo_part(em, rows, meta):
    servers = data.ordered(rows, "server") if any("server" in r for r in rows) else data.ordered(rows, "runtime")
    key = "server" if any("server" in r for r in rows) else "runtime"
    conns = sorted({r["connections"] for r in rows})
    med = {q: data.median_by(rows, ("connections", key), q) for q in ("msgs_per_sec", "p50_ns", "p99_ns")}
    table = []
    base_name = servers[0]
    for c in conns:
        base = med["msgs_per_sec"].get((c, base_name))
        for s in servers:
            thr = med["msgs_per_sec"].get((c, s))
            table.append([fmt_num(c, 0), tex_escape(s), fmt_num(thr, 0),
                          fmt_num((med["p50_ns"].get((c, s)) or 0) / 1000, 0),
                          fmt_num((med["p99_ns"].get((c, s)) or 0) / 1000, 0),
                          f"{base / thr:.2f}" if thr and base else "n/a"])
    em.table("peers-echo.tex", "rlrrrr",
             ["conns", "server", "msgs/s", "p50 (\\textmu s)", "p99 (\\textmu s)",
              f"{tex_escape(base_name)}/server msgs/s"], table, size="\\footnotesize",
             caption="Echo servers under the same closed-loop client, 64-byte messages: median over "
             f"{tex_escape(meta.get('echo_rounds', '?'))} round(s) of {tex_escape(meta.get('echo_duration_s', '?'))}\\,s, "
             "servers alternating; the last column is above 1 where blitz served more "
             "(\\texttt{experiments/peers/run-echo}).", label="tab:peers-echo")
    top = max(conns)
    best = max(servers, key=lambda s: med["msgs_per_sec"].get((top, s)) or 0)
    em.define("resPeerEchoFinding",
              f"At {fmt_num(top, 0)} connections the most messages per second were served by "
              f"{tex_escape(best)} ({fmt_num(med['msgs_per_sec'].get((top, best)), 0)}).")


def generate(em, ctx):
    d = ctx.dir(EXP)
    meta = ctx.meta(EXP)
    srows = results.lines(os.path.join(d, "raw", "sched.jsonl")) if d else []
    erows = results.lines(os.path.join(d, "raw", "echo.jsonl")) if d else []
    if srows:
        sched_part(em, srows, meta)
    else:
        em.define("resPeerSchedFinding", data.missing("scheduler comparisons with Tokio and Go", EXP))
        em.write("peers-sched.tex", "")
    if erows:
        echo_part(em, erows, meta)
    else:
        em.define("resPeerEchoFinding", data.missing("echo comparisons with Tokio and libuv", EXP))
        em.write("peers-echo.tex", "")
    figs = plots.experiment_plot(em, ctx, EXP, "plot", ["sched", "echo"], scale=0.8)
    text = []
    for rel in figs:
        what = ("Scheduler benchmarks, ns per operation per runtime (log scale)" if "sched" in rel else
                "Echo servers: throughput and p99 by connection count")
        text.append(plots.figure(rel, f"{what} (\\texttt{{experiments/peers/plot}}).",
                                 "fig:" + rel[:-4], "0.92\\linewidth"))
    em.write("peers-figures.tex", "\n".join(text))
