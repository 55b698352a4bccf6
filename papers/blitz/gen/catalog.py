"""catalog.py - the probe catalog as a table: every probe and its
arguments from probes/blitz.d, what it fires on from docs/probes.md's
catalog (the prose lives there, once), grouped by the part of the
runtime it belongs to."""
import re

from gen.emit import macro_name, tex_escape, tt

GROUPS = [("task", "tasks"), ("lifo", "scheduler"), ("local", "scheduler"),
          ("overflow", "scheduler"), ("steal", "scheduler"), ("global", "scheduler"),
          ("searching", "idle"), ("park", "idle"), ("unpark", "idle"),
          ("ewma", "scheduler"), ("budget", "scheduler"), ("io", "I/O"),
          ("timer", "time"), ("sync", "sync"), ("blocking", "blocking pool"),
          ("signal", "process"), ("process", "process")]


def probes(path):
    """[(name, [(type, arg)])] in the order of @path."""
    out = []
    for m in re.finditer(r"probe\s+(\w+)\s*\(([^)]*)\)", open(path).read()):
        args = []
        for a in m.group(2).split(","):
            a = a.strip().split()
            if a:
                args.append((" ".join(a[:-1]), a[-1]))
        out.append((m.group(1), args))
    return out


def fires_when(path):
    """probe -> the 'fires when' cell of docs/probes.md's catalog."""
    out = {}
    try:
        text = open(path).read()
    except OSError:
        return out
    for line in text.splitlines():
        m = re.match(r"\|\s*`(\w+)`\s*\|.*\|\s*([^|]+?)\s*\|\s*$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def group(name):
    for prefix, g in GROUPS:
        if name.startswith(prefix):
            return g
    return "other"


def plain(md):
    """A docs cell as LaTeX: backticks to typewriter, the rest escaped."""
    parts = re.split(r"`([^`]*)`", md)
    return "".join(tt(p) if i % 2 else tex_escape(p) for i, p in enumerate(parts))


def generate(em, ctx):
    ps = probes(ctx.source("probes/blitz.d"))
    when = fires_when(ctx.source("docs/probes.md"))
    em.num(macro_name("probe count"), len(ps), 0)
    groups = sorted({group(n) for n, _ in ps}, key=lambda g: [x[1] for x in GROUPS].index(g)
                    if g in [x[1] for x in GROUPS] else 99)
    em.num(macro_name("probe groups"), len(groups), 0)
    rows = []
    for name, args in ps:
        rows.append([tex_escape(group(name)), tt(name),
                     ", ".join(tt(a) for _, a in args),
                     plain(when.get(name, "(not in docs/probes.md)"))])
    lines = ["\\begin{footnotesize}",
             "\\begin{longtable}{@{}l l p{0.27\\linewidth} p{0.40\\linewidth}@{}}",
             "\\caption{The probe catalog: every USDT probe of provider \\texttt{blitz}, its "
             "arguments (\\texttt{probes/blitz.d}) and when it fires (\\texttt{docs/probes.md}). "
             "Generated from both files.}\\label{tab:catalog}\\\\",
             "\\toprule part & probe & arguments & fires when \\\\ \\midrule \\endfirsthead",
             "\\toprule part & probe & arguments & fires when \\\\ \\midrule \\endhead",
             "\\bottomrule \\endfoot"]
    lines += [" & ".join(r) + " \\\\" for r in rows]
    lines += ["\\end{longtable}", "\\end{footnotesize}"]
    em.write("catalog.tex", "\n".join(lines))
