#!/usr/bin/python3
"""mplrun.py SCRIPT ARGS...: runs one of the project's plot scripts
(tools/plot, experiments/NAME/plot) for the paper's page.  The scripts size
their figures for a screen (13 x 5 inches, 8-point legends); printed a
column wide that is 4-point text.  Here every figure is made smaller by
PAPER_PLOT_SCALE (so the same point sizes are larger on the page) and saved
at 200 dpi; the script itself is unchanged."""
import os
import runpy
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.figure  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

SCALE = float(os.environ.get("PAPER_PLOT_SCALE", "0.62"))
_subplots = plt.subplots
_savefig = matplotlib.figure.Figure.savefig


def subplots(*args, **kw):
    if "figsize" in kw:
        w, h = kw["figsize"]
        kw["figsize"] = (w * SCALE, h * SCALE * 1.15)
    return _subplots(*args, **kw)


def savefig(self, *args, **kw):
    kw["dpi"] = 200
    return _savefig(self, *args, **kw)


plt.subplots = subplots
matplotlib.figure.Figure.savefig = savefig
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
