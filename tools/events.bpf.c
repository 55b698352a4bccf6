// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * events.bpf.c - the runtime's event log (include/blitz/trace/events.h), two
 * transports.  A worker that has a ring in shared memory announces it at
 * event_ring: the hit goes to user space, which maps the ring and reads
 * the logs in place (no probe hit per log).  Every other log (the threads
 * that are not workers, and a worker without a ring) comes at
 * event_flush: its records are copied into the ring buffer, up to
 * EVENTS_CHUNK per entry (one bpf_probe_read_user each), one probe hit
 * per flush of up to BLITZ_EVENT_LOG_RECORDS events.
 *
 * event_ring comes first: the programs are attached in this order, and a
 * worker that sees event_ring's semaphore up when event_flush's rises
 * opens its window on the ring.
 */
#include "blitz.bpf.h"
#include "events.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EVENTS_NOTES_BYTES);
} notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EVENTS_RINGBUF_BYTES);
} chunks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, EVENTS_LOSS_THREADS);
	__type(key, __u32);
	__type(value, struct events_loss);
} losses SEC(".maps");

__u64 flushes = 0;
/* Announcements of rings: made, and lost (the notes' ring buffer full). */
__u64 ring_notes = 0;
__u64 notes_lost = 0;
/* Records that found no room in the ring buffer (user space too slow). */
__u64 lost = 0;
/*
 * Flushes not read (another layout, a count past the log), or read in
 * part (a failed copy: its records from there on are counted lost).
 */
__u64 bad = 0;

SEC("usdt")
int BPF_USDT(event_ring, int worker, __u64 runtime, int fd, __u64 bytes)
{
	struct events_note *n = bpf_ringbuf_reserve(&notes, sizeof(*n), 0);

	if (!n) {
		__sync_fetch_and_add(&notes_lost, 1);
		return 0;
	}
	n->tgid = current_tgid();
	n->worker = worker;
	n->runtime = runtime;
	n->fd = fd;
	n->pad = 0;
	n->bytes = bytes;
	/* Woken at once: the worker's ring fills while nobody reads it. */
	bpf_ringbuf_submit(n, 0);
	__sync_fetch_and_add(&ring_notes, 1);
	return 0;
}

/*
 * loss_note - @n records of the log at @log from @first found no room:
 * kept for the thread's next chunk that gets through, with the ticks of
 * the first and last of them (read back from the log).
 */
static __always_inline void loss_note(__u32 tid, __u32 tgid,
				      const struct blitz_event_log_head *head, __u64 log,
				      __u32 first, __u32 n)
{
	__u64 rec = log + sizeof(*head), size = sizeof(struct blitz_event), from = 0, to = 0;
	struct events_loss *l;

	if (!n)
		return;
	bpf_probe_read_user(&from, sizeof(from), (void *)(rec + first * size));
	bpf_probe_read_user(&to, sizeof(to), (void *)(rec + (first + n - 1) * size));
	l = bpf_map_lookup_elem(&losses, &tid);
	if (!l) {
		struct events_loss nl = {
			.tgid = tgid, .worker = head->worker, .runtime = head->runtime,
			.ticks_mult = head->ticks_mult, .seq = head->seq,
			.records = n, .from = from, .to = to,
		};

		bpf_map_update_elem(&losses, &tid, &nl, BPF_ANY);
		return;
	}
	/* Only this thread writes its entry. */
	l->records += n;
	l->seq = head->seq;
	if (to > l->to)
		l->to = to;
}

/* loss_carry - the loss @c's thread has to tell, if any, into @c (which then precedes it). */
static __always_inline void loss_carry(__u32 tid, struct events_chunk *c)
{
	struct events_loss *l = bpf_map_lookup_elem(&losses, &tid);

	c->lost = c->lost_from = c->lost_to = 0;
	if (!l)
		return;
	c->lost = l->records;
	c->lost_from = l->from;
	c->lost_to = l->to;
	bpf_map_delete_elem(&losses, &tid);
}

SEC("usdt")
int BPF_USDT(event_flush, int worker, __u64 log, __u32 count, __u64 seq)
{
	struct blitz_event_log_head head;
	__u32 tgid = current_tgid(), tid = (__u32)bpf_get_current_pid_tgid();

	if (count > BLITZ_EVENT_LOG_RECORDS ||
	    bpf_probe_read_user(&head, sizeof(head), (void *)log) ||
	    head.size != sizeof(struct blitz_event) || head.capacity != BLITZ_EVENT_LOG_RECORDS ||
	    head.version != BLITZ_EVENTS_VERSION) {
		__sync_fetch_and_add(&bad, 1);
		return 0;
	}
	__sync_fetch_and_add(&flushes, 1);
	for (__u32 i = 0; i < EVENTS_CHUNKS; i++) {
		__u32 first = i * EVENTS_CHUNK, n;
		struct events_chunk *c;
		__u64 bytes;

		/* An empty flush still sends its header (the worker's clock). */
		if (first >= count && first > 0)
			break;
		n = count - first < EVENTS_CHUNK ? count - first : EVENTS_CHUNK;
		c = bpf_ringbuf_reserve(&chunks, sizeof(*c), 0);
		if (!c) {
			__sync_fetch_and_add(&lost, n);
			loss_note(tid, tgid, &head, log, first, n);
			continue;
		}
		c->tgid = tgid;
		c->first = first;
		c->count = n;
		c->last = first + EVENTS_CHUNK >= count;
		c->total = count;
		c->pad = 0;
		c->head = head;
		/*
		 * Only the n records (the pages past them may not be mapped),
		 * bounded where the verifier sees it.
		 */
		bytes = (__u64)n * sizeof(struct blitz_event);
		barrier_var(bytes);
		if (bytes > sizeof(c->rec))
			bytes = sizeof(c->rec);
		bytes &= 2 * sizeof(c->rec) - 1;	/* what the check says, in the verifier's terms */
		if (bpf_probe_read_user(c->rec, bytes,
					(void *)(log + sizeof(head) + first * sizeof(struct blitz_event)))) {
			/* This chunk and the rest are not delivered: lost, and the flush unreadable. */
			bpf_ringbuf_discard(c, 0);
			__sync_fetch_and_add(&lost, count - first);
			loss_note(tid, tgid, &head, log, first, count - first);
			__sync_fetch_and_add(&bad, 1);
			return 0;
		}
		loss_carry(tid, c);
		/*
		 * The reader is woken only once a quarter of the ring waits (it
		 * takes what is there at each pass anyway, 100 ms apart at most):
		 * a wakeup at each chunk made a flush cost 15 us (pipeline, a
		 * reader keeping up).
		 */
		bpf_ringbuf_submit(c, bpf_ringbuf_query(&chunks, BPF_RB_AVAIL_DATA) >=
				      EVENTS_RINGBUF_BYTES / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
