"""plots.py - the paper's plots, made by the project's own plot code from
the results: tools/plot for the tools' histograms, and an experiment's plot
script (experiments/NAME/plot OUTDIR) run on a scratch copy of the results
layout under generated/work/, so the results directory is never written."""
import glob
import os
import shutil
import subprocess

PY = "/usr/bin/python3"
RUN = [PY, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mplrun.py")]


def tool_hist(em, ctx, experiment, tool, tags, out, title):
    """generated/@out.png: tools/plot of hist/@tool-TAG.json, one series per
    tag of @tags that has data; None (and a note on stderr) if none has."""
    d = ctx.dir(experiment)
    files, labels = [], []
    for tag in tags:
        p = os.path.join(d, "hist", f"{tool}-{tag}.json") if d else None
        if p and os.path.exists(p) and os.path.getsize(p):
            files.append(p)
            labels += ["--label", tag]
    if not files:
        return None
    prefix = os.path.join(em.outdir, out)
    r = subprocess.run(RUN + [ctx.source("tools/plot"), "-o", prefix, "--title", title] + labels + files,
                       capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(prefix + ".png"):
        print(f"generate: tools/plot {tool} ({experiment}) failed: {r.stderr.strip()[-300:]}")
        return None
    return ctx.figure(out + ".png")


def experiment_plot(em, ctx, experiment, script, names, scale=None):
    """Runs experiments/@experiment/@script on a scratch results layout
    (raw/ and meta.json linked, plots/ empty) and copies plots/NAME.png of
    each of @names to generated/@experiment-NAME.png; returns those paths
    (the ones that were made).  @scale: how much smaller than the script's
    own size the figures are drawn (gen/mplrun.py; its default if None)."""
    d = ctx.dir(experiment)
    if not d:
        return []
    work = os.path.join(em.outdir, "work", experiment)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "plots"))
    for entry in glob.glob(os.path.join(d, "*")):
        if os.path.basename(entry) != "plots":
            os.symlink(entry, os.path.join(work, os.path.basename(entry)))
    env = dict(os.environ, **({"PAPER_PLOT_SCALE": str(scale)} if scale else {}))
    r = subprocess.run(RUN + [ctx.source(f"experiments/{experiment}/{script}"), work],
                       capture_output=True, text=True, env=env)
    made = []
    for n in names:
        src = os.path.join(work, "plots", n + ".png")
        if os.path.exists(src):
            rel = f"{experiment}-{n}.png"
            shutil.copy(src, os.path.join(em.outdir, rel))
            made.append(ctx.figure(rel))
    if r.returncode != 0:
        print(f"generate: experiments/{experiment}/{script} failed: {r.stderr.strip()[-300:]}")
    return made


def figure(rel, caption, label, width="\\linewidth"):
    """A figure environment around generated/@rel."""
    return (f"\\begin{{figure}}[tbp]\n\\centering\n\\plot{{{rel}}}{{{width}}}\n"
            f"\\caption{{{caption}}}\n\\label{{{label}}}\n\\end{{figure}}\n")
