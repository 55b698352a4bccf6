/* SPDX-License-Identifier: MIT */
/*
 * blitz/trace/histograms.h - the layout of a worker's summary histograms, as the
 * hist_snapshot probe hands them to a tracer (docs/probes.md, "Summary
 * histograms").
 *
 * While a tracer holds hist_snapshot's semaphore, every worker counts its
 * own scheduling events into log2 histograms in its own memory; at each
 * park, every few milliseconds of running and at its exit it fires
 * hist_snapshot(worker, hists, size, seq) with the address of this struct,
 * which a BPF program copies with bpf_probe_read_user().  The probe fires
 * on the worker's own thread, the only writer, so the copy is consistent.
 *
 * Plain C types only (no headers): the same text compiles for BPF.
 */
#ifndef BLITZ_TRACE_HISTOGRAMS_H
#define BLITZ_TRACE_HISTOGRAMS_H

/*
 * The layout's version (a snapshot's version): a tool checks it, with the
 * size, before it reads a snapshot, and counts the ones it skips.  Raised
 * whenever a field moves or changes meaning.
 */
#define BLITZ_HIST_VERSION	2

/*
 * Slot k counts values v with floor(log2(v)) == k, except slot 0, which
 * counts 0 and 1; values past the last slot land in it (the tools' hist.h
 * convention, MAX_SLOTS there).
 */
#define BLITZ_HIST_SLOTS	40
/* Room for task_poll_start's source codes (docs/probes.md, "Argument codes"). */
#define BLITZ_HIST_SOURCES	8

/* The histograms of a worker, and what each value is. */
enum blitz_hist_kind {
	BLITZ_HIST_POLL_READY = 0,	/* ns a poll ran, polls that completed their task (sampled) */
	BLITZ_HIST_POLL_PENDING,	/* ns a poll ran, the other polls (sampled) */
	BLITZ_HIST_SCHED,		/* ns from queued (spawn or schedule) to polled (sampled) */
	BLITZ_HIST_PARK,		/* ns, the sleep limit of each park */
	BLITZ_HIST_SLEEP_NOTIFIED,	/* ns slept, by unpark reason (the unpark probe's order) */
	BLITZ_HIST_SLEEP_TIMEOUT,
	BLITZ_HIST_SLEEP_SHUTDOWN,
	BLITZ_HIST_SLEEP_IO,
	BLITZ_HIST_STEAL,		/* tasks taken by each successful steal */
	BLITZ_HIST_GLOBAL_BATCH,	/* tasks taken by each global-queue batch */
	BLITZ_HIST_PUSH_LEN,		/* ring length after a push to the worker's own ring (during timed polls) */
	BLITZ_HIST_EWMA,		/* ns, the EWMA of poll time after each update */
	BLITZ_HIST_KINDS
};

/* One log2 histogram: what it recorded, and the sum of those values. */
struct blitz_hist_log2 {
	unsigned long long slots[BLITZ_HIST_SLOTS];
	unsigned long long count;	/* the sum of the slots: events[kind], or for the timed
					   kinds the events their samples stand for */
	unsigned long long sum;
};

struct blitz_hist_snapshot {
	unsigned int size;		/* sizeof(struct blitz_hist_snapshot) */
	unsigned int version;		/* BLITZ_HIST_VERSION */
	unsigned int kinds;		/* BLITZ_HIST_KINDS */
	int worker;			/* the worker's index */
	unsigned int sample;		/* one tick in sample is timed (BLITZ_HIST_SAMPLE; auto: the period now) */
	unsigned int reserved;		/* 0: keeps runtime 8-aligned for every compiler */
	unsigned long long runtime;	/* which runtime of the process: 1, 2, ... */
	unsigned long long seq;		/* this worker's snapshot number, from 1 */
	/*
	 * Every event, counted exactly (a poll, a park, a steal...; SCHED:
	 * the polls, each ends a wait in a queue).  The timed kinds POLL_*
	 * and SCHED record a sample of them, the polls and schedules of one
	 * tick in N, whose values stand for the worker's polls until the
	 * next timed tick (scaled to them at each snapshot), so
	 * that hist[].count is the events up to then, whatever the periods
	 * were; events minus count are the events not yet stood for.
	 * PUSH_LEN: events counts the pushes of the timed ticks, the
	 * histogram stands for the pushes of every poll the same way.
	 */
	unsigned long long events[BLITZ_HIST_KINDS];
	struct blitz_hist_log2 hist[BLITZ_HIST_KINDS];
	/*
	 * The worker's polls by where it found the task (the source codes of
	 * task_poll_start: LIFO slot, ring, batch, global queue, steal), every
	 * one counted; blitz-tasksrc's summary mode.  Last, so that the
	 * offsets above stay what summary.bt reads.
	 */
	unsigned long long polls_by_source[BLITZ_HIST_SOURCES];
};

#endif /* BLITZ_TRACE_HISTOGRAMS_H */
