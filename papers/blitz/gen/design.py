"""design.py - the runtime's constants, read from the source (not results,
but not typed into the text either): include/blitz/config.h's #defines,
the EWMA's initial value and weight from core/sched/worker.c, the task
state word's fields from core/sched/task.h."""
import re

from gen.emit import macro_name


def defines(path):
    """name -> integer value of every numeric #define in @path."""
    out = {}
    for m in re.finditer(r"^#define\s+(\w+)\s+([0-9]+)u?l*l*\b", open(path).read(), re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def ns_text(ns):
    """@ns as the largest whole unit: 10 ms, 50 us, 1 ms."""
    for unit, per in (("s", 10**9), ("ms", 10**6), ("\\textmu s", 10**3)):
        if ns >= per and ns % per == 0:
            return f"{ns // per}\\,{unit}"
    return f"{ns}\\,ns"


def generate(em, ctx):
    d = defines(ctx.source("include/blitz/config.h"))
    for key, name in (("BLITZ_BUDGET_PER_TICK", "budget"), ("BLITZ_MAX_LIFO_POLLS", "lifo polls"),
                      ("BLITZ_QUEUE_CAPACITY", "ring slots"), ("BLITZ_BATCH_BUFFER", "batch buffer"),
                      ("BLITZ_MIN_GLOBAL_BATCH", "min global batch"),
                      ("BLITZ_MAX_GLOBAL_BATCH", "max global batch"),
                      ("BLITZ_MIN_GLOBAL_INTERVAL", "min interval"),
                      ("BLITZ_MAX_GLOBAL_INTERVAL", "max interval")):
        em.num(macro_name(name), d[key], 0)
    em.num(macro_name("steal cap"), d["BLITZ_QUEUE_CAPACITY"] // 2, 0)
    em.define(macro_name("target latency"), ns_text(d["BLITZ_TARGET_GLOBAL_LATENCY_NS"]))
    em.define(macro_name("park timeout"), ns_text(d["BLITZ_PARK_TIMEOUT_NS"]))
    em.define(macro_name("wake backlog"), ns_text(d["BLITZ_WAKE_BACKLOG_NS"]))
    em.define(macro_name("wake busy"), ns_text(d["BLITZ_WAKE_BUSY_NS"]))

    worker = open(ctx.source("core/sched/worker.c")).read()
    init = re.search(r"ewma_poll_ns\s*=\s*(\d+);", worker)
    em.define(macro_name("ewma initial"), ns_text(int(init.group(1))) if init else "n/a")
    alpha = re.search(r"EWMA \(alpha ([0-9.]+)\)", worker)
    em.define(macro_name("ewma alpha"), alpha.group(1) if alpha else "n/a")

    task = open(ctx.source("core/sched/task.h")).read()
    shifts = {m.group(1): int(m.group(2)) for m in
              re.finditer(r"#define\s+TASK_(\w+)_SHIFT\s+(\d+)", task)}
    ref = shifts.get("REF")
    em.num(macro_name("ref bits"), 64 - ref if ref is not None else None, 0)
