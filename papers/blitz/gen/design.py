"""design.py - the runtime's constants, read from the source (not results,
but not typed into the text either): include/blitz/config.h's #defines,
the EWMA's initial value and weight from core/sched/worker.c, the task
state word's fields from core/sched/task.h, the summary histograms'
snapshot intervals from core/trace/histogram.h, the event log's size and
park flush interval from include/blitz/trace/events.h."""
import re
import sys

from gen.emit import macro_name


def source(ctx, rel):
    """The text of @rel in the tree, or "" (with a warning: the constants
    it gave become n/a) when another change moved it."""
    try:
        return open(ctx.source(rel)).read()
    except OSError:
        print(f"generate: warning: {rel} not found: its constants are n/a in the paper", file=sys.stderr)
        return ""


def defines(text):
    """name -> integer value of every numeric #define in @text."""
    out = {}
    for m in re.finditer(r"^#define\s+(\w+)\s+([0-9]+)u?l*l*\b", text, re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def ns_text(ns):
    """@ns as the largest whole unit: 10 ms, 50 us, 1 ms (n/a if None)."""
    if ns is None:
        return "n/a"
    for unit, per in (("s", 10**9), ("ms", 10**6), ("\\textmu s", 10**3)):
        if ns >= per and ns % per == 0:
            return f"{ns // per}\\,{unit}"
    return f"{ns}\\,ns"


def generate(em, ctx):
    d = defines(source(ctx, "include/blitz/config.h"))
    d.update(defines(source(ctx, "core/sched/constants.h")))
    missing = [k for k in ("BLITZ_BUDGET_PER_TICK", "BLITZ_QUEUE_CAPACITY", "BLITZ_PARK_TIMEOUT_NS")
               if k not in d]
    if missing:
        print(f"generate: warning: include/blitz/config.h has no {', '.join(missing)}", file=sys.stderr)
    for key, name in (("BLITZ_BUDGET_PER_TICK", "budget"), ("BLITZ_MAX_LIFO_POLLS", "lifo polls"),
                      ("BLITZ_QUEUE_CAPACITY", "ring slots"), ("BLITZ_BATCH_BUFFER", "batch buffer"),
                      ("BLITZ_MIN_GLOBAL_BATCH", "min global batch"),
                      ("BLITZ_MAX_GLOBAL_BATCH", "max global batch"),
                      ("BLITZ_MIN_GLOBAL_INTERVAL", "min interval"),
                      ("BLITZ_MAX_GLOBAL_INTERVAL", "max interval")):
        em.num(macro_name(name), d.get(key), 0)
    cap = d.get("BLITZ_QUEUE_CAPACITY")
    em.num(macro_name("steal cap"), cap // 2 if cap else None, 0)
    em.define(macro_name("target latency"), ns_text(d.get("BLITZ_TARGET_GLOBAL_LATENCY_NS")))
    em.define(macro_name("park timeout"), ns_text(d.get("BLITZ_PARK_TIMEOUT_NS")))
    em.define(macro_name("wake min backlog"), ns_text(d.get("BLITZ_WAKE_MIN_BACKLOG_NS")))
    em.define(macro_name("wake backlog"), ns_text(d.get("BLITZ_WAKE_BACKLOG_NS")))
    em.define(macro_name("wake busy"), ns_text(d.get("BLITZ_WAKE_BUSY_NS")))

    hist = defines(source(ctx, "core/trace/histogram.h"))
    em.define(macro_name("snapshot park"), ns_text(hist.get("HIST_SNAPSHOT_PARK_NS")))
    em.define(macro_name("snapshot tick"), ns_text(hist.get("HIST_SNAPSHOT_NS")))

    events = defines(source(ctx, "include/blitz/trace/events.h"))
    em.num(macro_name("event log records"), events.get("BLITZ_EVENT_LOG_RECORDS"), 0)
    em.define(macro_name("event park flush"), ns_text(events.get("BLITZ_EVENT_PARK_FLUSH_NS")))

    worker = source(ctx, "core/sched/worker.c")
    # The starting value: the assignment commented as the default (a later
    # "= 1" keeps the average above zero).
    init = re.search(r"ewma_poll_ns\s*=\s*(\d+);[^\n]*default", worker)
    em.define(macro_name("ewma initial"), ns_text(int(init.group(1))) if init else "n/a")
    alpha = re.search(r"EWMA \(alpha ([0-9.]+)\)", worker)
    em.define(macro_name("ewma alpha"), alpha.group(1) if alpha else "n/a")

    task = source(ctx, "core/sched/task.h")
    shifts = {m.group(1): int(m.group(2)) for m in
              re.finditer(r"#define\s+TASK_(\w+)_SHIFT\s+(\d+)", task)}
    ref = shifts.get("REF")
    em.num(macro_name("ref bits"), 64 - ref if ref is not None else None, 0)
