"""observer.py - what each histogram tool costs in each of its modes, and
how far its histogram lands from the reference (experiments/observer-effect,
when this results set has it: its summarize --json output,
observer-effect.json, and its plot)."""
import json
import os
import shutil
import statistics

from gen.emit import fmt_num, tex_escape, tt

EXP = "observer-effect"


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def probe_path_text(paths):
    """What an attached probe costs per hit on each site, and against the
    LTTng-UST anchor (observer-effect.json's uprobe_paths), as prose."""
    n1, n5, lt = (paths or {}).get("nop1"), (paths or {}).get("nop5"), (paths or {}).get("lttng")
    text = ""
    if n1 and n5:
        text += (f"With the cheapest eBPF program there is (bpftrace's \\texttt{{count()}}) on a site "
                 f"that does nothing else, a hit costs {fmt_num(n5['ns_per_hit'], 0)}~ns on blitz's "
                 f"five-byte probe site, which the kernel rewrites into a call, and "
                 f"{fmt_num(n1['ns_per_hit'], 0)}~ns on the one-byte site that \\texttt{{sys/sdt.h}} "
                 f"emits, which traps on every hit. ")
    else:
        text += "This results set has no measurement of a single probe hit (bpftrace missing). "
    if lt and lt["ns_per_hit"] > 0:
        kept = "every event kept" if lt.get("hits_counted") else "some events lost"
        text += (f"The anchor for a per-event mode, an LTTng-UST tracepoint of the same two fields "
                 f"(a worker, a task) that a session records with its timestamp into per-CPU buffers "
                 f"in the process's memory, costs {fmt_num(lt['ns_per_hit'], 0)}~ns per event ({kept})")
        if n5:
            text += (f": a probe hit costs {fmt_num(n5['ns_per_hit'] / lt['ns_per_hit'], 1)} times as "
                     f"much, before its program does any work")
        text += "."
    else:
        text += "The LTTng-UST anchor is not in this results set."
    return text


def event_log_text(by):
    """The event log (mode log: blitz-events) against per event and the
    summary mode, on the tools it stands in for, as prose."""
    log = [c for (t, m), cs in by.items() if m == "log" and t in ("polltime", "schedlat") for c in cs]
    if not log:
        return ("This results set has no measurement of the event log (its observer-effect run "
                "predates the log or left its mode out).")
    def over(mode):
        return [c for (t, m), cs in by.items() if m == mode and t in ("polltime", "schedlat") for c in cs]
    text = (f"Over the same workloads, with the log standing in for \\texttt{{polltime}} and "
            f"\\texttt{{schedlat}}, the median slowdown is {fmt_num(med([c['slowdown'] for c in log]), 2)}")
    pe, su = over("per-event"), over("summary")
    if pe:
        text += f" against {fmt_num(med([c['slowdown'] for c in pe]), 2)} per event"
    if su:
        text += f" and {fmt_num(med([c['slowdown'] for c in su]), 2)} in summary mode"
    emd = med([c.get("emd_buckets") for c in log])
    if emd is not None:
        text += f"; its histograms lie {fmt_num(emd, 2)} buckets (EMD, median) from the reference"
        pe_emd = med([c.get("emd_buckets") for c in pe])
        if pe_emd is not None:
            text += f", per event's {fmt_num(pe_emd, 2)}"
    return text + " (Table~\\ref{tab:observer}, mode \\texttt{log})."


def generate(em, ctx):
    d = ctx.dir(EXP)
    em.write("observer-figure.tex", "")     # replaced below when there is a plot
    path = os.path.join(d, "observer-effect.json") if d else None
    if not path or not os.path.exists(path):
        em.define("resProbePathText", "Its measurements of a single probe hit are not in this "
                  "results set either.")
        em.define("resEventLogText", "Its measurements are not in this results set.")
        why = ("it has no results of " + tt("experiments/observer-effect") if not d else
               "its observer-effect directory has no \\texttt{observer-effect.json}")
        em.define("resObserverText",
                  "The per-tool, per-mode measurements of the observer effect (slowdown, cost per hit, "
                  f"distance of each histogram from a reference) are not in this results set: {why}. "
                  "The probe-cost experiment above gives the cost per hit of every probe attached at once.")
        em.write("observer.tex", "")
        return
    doc = json.load(open(path))
    em.define("resProbePathText", probe_path_text(doc.get("uprobe_paths")))
    cells = doc.get("cells", [])
    by = {}
    for c in cells:
        by.setdefault((c["tool"], c["mode"]), []).append(c)
    rows = []
    for (tool, mode), cs in sorted(by.items()):
        s = med([c.get("slowdown") for c in cs])
        cost = med([c.get("cost_per_hit_ns") for c in cs])
        emd = med([c.get("emd_buckets") for c in cs])
        rows.append([tt(tool), tex_escape(mode), str(len(cs)), fmt_num(s, 2),
                     fmt_num(cost, 0), fmt_num(emd, 2)])
    em.define("resEventLogText", event_log_text(by))
    em.table("observer.tex", "llrrrr", ["tool", "mode", "workloads", "slowdown", "ns per hit", "EMD (buckets)"],
             rows, size="\\footnotesize",
             caption="The observer effect per tool and mode: median over the workloads of the slowdown "
             "(traced / untraced time of paired runs), the cost per probe hit, and the earth mover's "
             "distance of the histogram from the reference (\\texttt{experiments/observer-effect}).",
             label="tab:observer")
    ref = doc.get("reference", {})
    within = [r for r in ref.get("per", []) if r.get("within_2pct")]
    text = (f"Table~\\ref{{tab:observer}} gives the observer effect of each tool in each mode, over "
            f"{len({c['workload'] for c in cells})} workloads. ")
    if ref.get("missing"):
        text += "No reference histogram was available: distances are from the per-event mode."
    else:
        text += (f"The reference (the {tex_escape(ref.get('mode', 'summary'))} mode) was within 2\\% of the "
                 f"untraced run for {len(within)} of {len(ref.get('per', []))} tool and workload pairs.")
    png = os.path.join(d, "plots", "observer-effect.png")
    if os.path.exists(png):
        shutil.copy(png, os.path.join(em.outdir, "observer-effect.png"))
        ctx.figure("observer-effect.png")
        em.write("observer-figure.tex", "\\begin{figure}[tbp]\\centering\\plot{observer-effect.png}{0.92\\linewidth}"
                 "\\caption{Slowdown per tool and mode (\\texttt{experiments/observer-effect/plot}).}"
                 "\\label{fig:observer}\\end{figure}")
        text += " Figure~\\ref{fig:observer} plots the slowdowns."
    em.define("resObserverText", text)
