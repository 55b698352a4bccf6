"""data.py - reading results for the paper: medians per key, histogram
quantiles, the runtime's counters; and the sentences a part writes when
its results are missing."""
import os
import statistics

import results  # experiments/lib/results.py
from gen.emit import tt


def median_by(rows, keys, value):
    """(row[k] for k in @keys) -> median of row[@value] over @rows."""
    per = {}
    for r in rows:
        if r.get(value) is None:
            continue
        per.setdefault(tuple(r[k] for k in keys), []).append(r[value])
    return {k: statistics.median(v) for k, v in per.items()}


def ordered(rows, key):
    """The values of @key in @rows, in first-seen order."""
    out = []
    for r in rows:
        if r.get(key) is not None and r[key] not in out:
            out.append(r[key])
    return out


def hist_quantiles(path):
    """{label: (count, p50, p99, unit)} of a tool's JSON file (its intervals
    added up); quantiles are log2 bucket upper bounds. {} if no data."""
    objs = results.lines(path)
    if not objs:
        return {}
    unit = objs[-1].get("unit", "")
    out = {}
    for label, b in results.merged_hists(objs).items():
        n = sum(x["count"] for x in b)
        if n:
            out[label] = (n, results.quantile(b, n, 0.5), results.quantile(b, n, 0.99), unit)
    return out


def why_no_hist(d):
    """Why a results directory has no histograms ('' if it has some)."""
    p = os.path.join(d, "hist", "NOT-COLLECTED")
    if os.path.exists(p):
        return open(p).read().strip()
    return ""


def counters(d, tag):
    """The runtime's counters of the traced run @tag (raw/traced-@tag.stats)."""
    return results.runtime_stats(os.path.join(d, "raw", f"traced-{tag}.stats"))


def missing(what, experiment):
    """The sentence a part writes in place of results it does not have."""
    return (f"The {what} are not in this results set: it has no results of "
            f"{tt('experiments/' + experiment)}.")


def quick_note(meta):
    """A warning sentence when a results directory was made in quick mode."""
    if meta.get("quick"):
        return ("These results were made in quick mode (one round of one iteration): "
                "they show that the pipeline works, not how the runtime performs.")
    return ""
