// SPDX-License-Identifier: MIT
/*
 * tools/events_chunks.c - the logs of the threads that are not workers,
 * flushed at event_flush: the BPF side copies each into the ring buffer
 * in chunks of EVENTS_CHUNK records, which come in order per thread and
 * are put together here into whole logs for consume_log() (struct
 * pending: at most one flush half in per writing thread).  A chunk
 * missing (the ring buffer was full) cuts its flush in two, its loss at
 * the head of the second piece; the losses that no later chunk got
 * through to tell are read from the BPF side's map (losses_drain).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "array.h"
#include "print_loop.h"
#include "tool_args.h"
#include "events.h"
#include "events.skel.h"
#include "events_chunks.h"
#include "events_log.h"
#include "events_state.h"

static struct pending *pending_get(struct state *st, __u32 tgid, __u32 thread)
{
	struct pending *p;

	for (size_t i = 0; i < st->pend.n; i++) {
		p = pend_at(st, i);
		if (p->tgid == tgid && p->head.thread == thread)
			return p;
	}
	return NULL;
}

/* pending_new - a flush of @c's thread begins (or goes on after a hole). */
static struct pending *pending_new(struct state *st, const struct events_chunk *c)
{
	struct pending *p = st->spare;

	st->spare = NULL;
	if (!p && !(p = malloc(sizeof(*p))))
		tool_die(st->env, "out of memory");
	*(struct pending **)push(st, &st->pend) = p;
	p->tgid = c->tgid;
	p->n = 0;
	p->gone = false;
	p->head = c->head;
	if (!p->head.pid)
		p->head.pid = c->tgid;
	/* The runtime's count of lost records comes before its log's first record. */
	if (c->first)
		p->head.lost = p->head.lost_from = p->head.lost_to = 0;
	if (c->lost) {
		if (!p->head.lost || c->lost_from < p->head.lost_from)
			p->head.lost_from = c->lost_from;
		if (!p->head.lost || c->lost_to > p->head.lost_to)
			p->head.lost_to = c->lost_to;
		p->head.lost += c->lost;
	}
	return p;
}

/*
 * pending_out - what @p holds, as a log: the whole flush (@whole), or the
 * part before a hole (its flush's tick then not yet reached).
 */
void pending_out(struct state *st, struct pending *p, bool whole)
{
	struct blitz_event_log_head h = p->head;

	h.count = p->n;
	if (!whole)
		h.flushed = 0;
	if (consume_log(st, &h, p->rec, p->n))
		st->logs += whole;
	for (size_t i = 0; i < st->pend.n; i++) {
		if (pend_at(st, i) != p)
			continue;
		*(struct pending **)array_at(&st->pend, i) =
			*(struct pending **)array_at(&st->pend, st->pend.n - 1);
		st->pend.n--;
		break;
	}
	if (st->spare)
		free(p);
	else
		st->spare = p;
}

/*
 * on_chunk - part of a flush.  Its chunks come in order; one missing (the
 * ring buffer was full) makes a hole, whose records the next chunk that
 * got through counts (events.bpf.c: loss_carry): the flush is taken as
 * the piece before the hole and the piece after it, that loss at its head.
 */
int on_chunk(void *ctx, void *data, size_t size)
{
	struct state *st = ctx;
	const struct events_chunk *c = data;
	struct pending *p;
	__u32 n;

	if (size < sizeof(*c))
		return tool_sample_taken();
	p = pending_get(st, c->tgid, c->head.thread);
	if (p && (c->first == 0 || c->head.seq != p->head.seq)) {
		pending_out(st, p, true);	/* the flush before: its last chunks were lost */
		p = NULL;
	} else if (p && (c->lost || c->first != p->next)) {
		pending_out(st, p, false);	/* a hole in this one */
		p = NULL;
	}
	if (!p)
		p = pending_new(st, c);
	n = c->count < EVENTS_CHUNK ? c->count : EVENTS_CHUNK;
	if (n > BLITZ_EVENT_LOG_RECORDS - p->n)
		n = BLITZ_EVENT_LOG_RECORDS - p->n;
	memcpy(p->rec + p->n, c->rec, n * sizeof(*c->rec));
	p->n += n;
	p->next = c->first + c->count;
	if (c->last)
		pending_out(st, p, true);
	return tool_sample_taken();
}

/* take_all - what the ring buffers hold, Ctrl-C or not (before a print, a process's end). */
void take_all(struct state *st)
{
	if (st->rb)
		tool_ring_take(st->rb, 0, RING_CHUNKS, true);
}

/*
 * losses_drain - the losses the BPF side could not yet hand over (no
 * chunk of their thread got through since), of process @tgid (0: all),
 * each as a log of no records with that loss at its head.
 */
void losses_drain(struct state *st, __u32 tgid)
{
	int fd = st->skel ? bpf_map__fd(st->skel->maps.losses) : -1;
	static __u32 keys[EVENTS_LOSS_THREADS];
	__u32 *prev = NULL;
	size_t n = 0;
	struct events_loss l;

	if (fd < 0)
		return;
	/* The keys first: a delete during the walk would restart it. */
	while (n < EVENTS_LOSS_THREADS && !bpf_map_get_next_key(fd, prev, &keys[n])) {
		prev = &keys[n];
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		__u32 key = keys[i];

		if (bpf_map_lookup_elem(fd, &key, &l) || (tgid && l.tgid != tgid) || !l.records)
			continue;
		bpf_map_delete_elem(fd, &key);
		consume_log(st, &(struct blitz_event_log_head){
				.size = sizeof(struct blitz_event), .capacity = BLITZ_EVENT_LOG_RECORDS,
				.worker = l.worker, .thread = key, .version = BLITZ_EVENTS_VERSION,
				.runtime = l.runtime, .seq = l.seq, .ticks_mult = l.ticks_mult,
				.pid = l.tgid, .lost = l.records, .lost_from = l.from, .lost_to = l.to,
			    }, NULL, 0);
	}
}
