// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * events.bpf.c - the runtime's event log (include/blitz/events.h): at each
 * event_flush, copy the worker's records into the ring buffer, up to
 * EVENTS_CHUNK per entry (one bpf_probe_read_user each).  One probe hit
 * per flush of up to BLITZ_EVENT_LOG_RECORDS events.
 */
#include "blitz.bpf.h"
#include "events.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EVENTS_RINGBUF_BYTES);
} chunks SEC(".maps");

__u64 flushes = 0;
/* Records that found no room in the ring buffer (user space too slow). */
__u64 lost = 0;
/*
 * Flushes not read (another layout, a count past the log), or read in
 * part (a failed copy: its records from there on are counted lost).
 */
__u64 bad = 0;

SEC("usdt")
int BPF_USDT(event_flush, int worker, __u64 log, __u32 count, __u64 seq)
{
	struct blitz_event_log_head head;
	__u32 tgid = current_tgid();

	if (count > BLITZ_EVENT_LOG_RECORDS ||
	    bpf_probe_read_user(&head, sizeof(head), (void *)log) ||
	    head.size != sizeof(struct blitz_event) || head.capacity != BLITZ_EVENT_LOG_RECORDS) {
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
			continue;
		}
		c->tgid = tgid;
		c->first = first;
		c->count = n;
		c->last = first + EVENTS_CHUNK >= count;
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
			__sync_fetch_and_add(&bad, 1);
			return 0;
		}
		/*
		 * The reader is woken only once a quarter of the ring waits (it
		 * takes what is there every 200 ms anyway): a wakeup at each
		 * chunk made a flush cost 15 us (pipeline, a reader keeping up).
		 */
		bpf_ringbuf_submit(c, bpf_ringbuf_query(&chunks, BPF_RB_AVAIL_DATA) >=
				      EVENTS_RINGBUF_BYTES / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
