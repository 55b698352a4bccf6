"""meta.py - where the results come from: the machine sentence of the
Method section, the date on the title page, the versions of the peers, and
the appendix that cites each results directory's meta.json (commit,
kernel, CPU, configuration, knobs, tool versions)."""
import glob
import os
import re
import subprocess

from gen.emit import tex_escape, tt

ORDER = ["sched-baseline", "backends", "ablation", "peers", "probe-cost", "observer-effect"]


def config_lines(text):
    """The configuration's settings (comments and blanks left out)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("CONFIG_"):
            out.append(line)
        elif re.match(r"# CONFIG_\w+ is not set", line):
            out.append(line[2:].replace(" is not set", "=n"))
    return out


def stamp_date(d):
    """20261125T091737Z -> 2026-11-25 09:17 UTC (or the folder name)."""
    m = re.match(r"(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)", os.path.basename(d))
    return f"{m[1]}-{m[2]}-{m[3]} {m[4]}:{m[5]} UTC" if m else os.path.basename(d)


def version(cmd, pattern):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(pattern, out)
    return m.group(1) if m else None


def peer_versions(em, ctx):
    tokio = sorted(glob.glob("/usr/share/cargo/registry/tokio-1.*"))
    em.word("resTokioVersion", os.path.basename(tokio[-1])[len("tokio-"):] if tokio else "1.x")
    go = ctx.meta("peers").get("tools", {})
    go = go.get("go") if isinstance(go, dict) else None
    m = re.search(r"go(\d+\.\d+(\.\d+)?)", go or "")
    em.word("resGoVersion", m.group(1) if m else
            (version(["go", "version"], r"go(\d+\.\d+(?:\.\d+)?)") or "(not installed)"))
    bt = next((m["tools"].get("bpftrace") for m in (ctx.meta(n) for n in ctx.dirs)
               if isinstance(m.get("tools"), dict) and m["tools"].get("bpftrace")), None)
    m = re.search(r"v?(\d+\.\d+(?:\.\d+)?)", bt or "")
    em.word("resBpftraceVersion", m.group(1) if m else
            (version(["bpftrace", "--version"], r"v(\d+\.\d+(?:\.\d+)?)") or "(not installed)"))
    em.word("resLibuvVersion", version(["dpkg-query", "-W", "-f", "${Version}", "libuv1-dev"],
                                       r"^(\d+\.\d+(?:\.\d+)?)") or "(not installed)")


def breakable(v):
    """@v escaped, breakable after commas, '=' and underscores: a parameter
    such as a list of variants or benchmarks is one long token."""
    t = tex_escape(v).replace("\\_", "\\_\\allowbreak{}")
    return t.replace(",", ",\\allowbreak{}").replace("=", "=\\allowbreak{}")


def generate(em, ctx):
    names = [n for n in ORDER if ctx.dir(n)] + [n for n in ctx.dirs if n not in ORDER]
    metas = {n: ctx.meta(n) for n in names}
    first = next((metas[n] for n in names if metas[n]), {})
    cores = first.get("cores")
    em.define("resCores", str(cores) if cores else "n/a")
    kernels = sorted({m.get("kernel", "?") for m in metas.values() if m})
    cpus = sorted({m.get("cpu_model", "?") for m in metas.values() if m})
    em.define("resMachineSentence",
              f"one machine: {tex_escape(', '.join(cpus))}, {cores or 'an unknown number of'} "
              f"cores, Linux {tex_escape(', '.join(kernels))}, a virtual machine shared with "
              "other jobs while the experiments ran.")
    dates = sorted(stamp_date(ctx.dir(n)) for n in names)
    em.word("resResultsDate", (dates[0][:10] + (" to " + dates[-1][:10] if dates[-1][:10] != dates[0][:10] else ""))
            if dates else "(no results)")
    quick = [n for n in names if metas[n].get("quick")]
    if quick:
        note = ("Some results here were made in quick mode (" + ", ".join(tt(n) for n in quick) +
                "): one round of one iteration, which checks the pipeline but says nothing about "
                "performance; read their numbers as placeholders.")
        em.define("resAbstractScale", "The results in this copy include quick-mode runs, made to "
                  "test the pipeline; their numbers are placeholders.")
    else:
        note = ""
        em.define("resAbstractScale", f"All results come from one {cores}-core shared machine "
                  "and say what holds there, not at scale.")
    em.define("resRunsSentence", note)
    dirty = [n for n in names if metas[n].get("dirty")]
    em.define("resDirtySentence", ("The tree had uncommitted changes when " +
                                   ", ".join(tt(n) for n in dirty) + " ran." if dirty else
                                   "Every run was made from a clean tree at the commit named."))
    peer_versions(em, ctx)

    out = []
    for n in names:
        m, d = metas[n], ctx.dir(n)
        out.append(f"\\subsection*{{{tex_escape(n)}}}")
        out.append("\\begin{description}\\setlength{\\itemsep}{0pt}\\small")
        out.append(f"\\item[directory] {tt(os.path.relpath(d, ctx.srctree) if d.startswith(ctx.srctree) else d)}")
        out.append(f"\\item[commit] {tt(m.get('commit', '?'))}" + (" (with uncommitted changes)" if m.get("dirty") else ""))
        out.append(f"\\item[kernel, CPU] Linux {tex_escape(m.get('kernel', '?'))} ({tex_escape(m.get('machine', '?'))}), "
                   f"{tex_escape(m.get('cpu_model', '?'))}, {m.get('cores', '?')} cores")
        out.append(f"\\item[mode] {'quick (for tests)' if m.get('quick') else 'full'}")
        knobs = m.get("knobs") or {}
        out.append("\\item[knobs] " + (", ".join(tt(f"{k}={v}") for k, v in sorted(knobs.items()))
                                        if knobs else "none set (defaults)"))
        params = {k: v for k, v in m.items() if isinstance(v, str) and k not in
                  ("experiment", "kernel", "machine", "cpu_model", "commit", "config")}
        if params:
            out.append("\\item[parameters] " + "; ".join(f"{tex_escape(k)}: {breakable(v)}"
                                                          for k, v in sorted(params.items())))
        tools = m.get("tools")
        if isinstance(tools, dict):
            out.append("\\item[tools] " + "; ".join(f"{tex_escape(k)}: {breakable(v)}"
                                                     for k, v in sorted(tools.items())))
        cfg = config_lines(m.get("config", ""))
        if cfg:
            out.append("\\item[configuration] " + ", ".join(tt(c) for c in cfg))
        out.append("\\end{description}")
    em.write("appendix.tex", "\n".join(out) if out else "No results directories were used.")
