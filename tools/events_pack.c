// SPDX-License-Identifier: MIT
/*
 * tools/events_pack.c - the packed encoding of a trace file's records
 * (<blitz/trace/events.h>, "A trace file"): each field a varint of its
 * difference from the record before, so that the small steps of a
 * worker's clock, its tasks' ids and a poll's vtable take a byte or two.
 * The cheapest reader is the one that writes the fewest bytes: a record's
 * copy into the page cache costs more than packing it (docs/probes.md,
 * "The trace file").
 */
#include <string.h>
#include "events_pack.h"

#define TYPE_ESC	15	/* the type nibble's escape: a varint follows */
#define CODE_ESC	7	/* the code's */
#define HAS_TASK	0x10
#define PREFETCH_AHEAD	16	/* records: 512 bytes, 8 lines */

static inline unsigned char *put_varint(unsigned char *p, __u64 v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* zz - @d, a difference modulo 2^64 taken as signed, in zigzag: small either way. */
static inline __u64 zz(__u64 d)
{
	return (d << 1) ^ (__u64)((__s64)d >> 63);
}

static inline __u64 unzz(__u64 v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

size_t events_pack(const struct blitz_event *rec, __u32 n, unsigned char *out)
{
	__u64 ticks = 0, task = 0, arg[TYPE_ESC + 1] = { 0 };
	unsigned char *p = out;

	for (__u32 i = 0; i < n; i++) {
		const struct blitz_event *e = &rec[i];
		unsigned type = e->type, code = e->code, slot = type < TYPE_ESC ? type : TYPE_ESC;

		/*
		 * The records were written on another CPU: ask for the line of a
		 * few records ahead, so that its transfer overlaps this packing.
		 */
		if (i + PREFETCH_AHEAD < n)
			__builtin_prefetch(&rec[i + PREFETCH_AHEAD]);

		*p++ = (unsigned char)(slot | (e->task ? HAS_TASK : 0) |
				       (code < CODE_ESC ? code : CODE_ESC) << 5);
		if (type >= TYPE_ESC)
			p = put_varint(p, type);
		if (code >= CODE_ESC)
			p = put_varint(p, code);
		p = put_varint(p, zz(e->ticks - ticks));
		ticks = e->ticks;
		if (e->task) {
			p = put_varint(p, zz(e->task - task));
			task = e->task;
		}
		p = put_varint(p, zz(e->arg - arg[slot]));
		arg[slot] = e->arg;
		p = put_varint(p, zz((__u64)(__s64)e->peer));
	}
	return (size_t)(p - out);
}

/*
 * get_varint - the varint at *@p (before @end) into *@v; false if it runs
 * past @end or past 64 bits (a tenth byte above 1).
 */
static inline bool get_varint(const unsigned char **p, const unsigned char *end, __u64 *v)
{
	__u64 x = 0;

	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char b = *(*p)++;

		if (shift == 63 && b > 1)
			return false;
		x |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

bool events_unpack(const unsigned char *in, size_t bytes, struct blitz_event *rec, __u32 n)
{
	const unsigned char *p = in, *end = in + bytes;
	__u64 ticks = 0, task = 0, arg[TYPE_ESC + 1] = { 0 };

	for (__u32 i = 0; i < n; i++) {
		struct blitz_event *e = &rec[i];
		__u64 type, code, v;
		unsigned head, slot;

		if (p >= end)
			return false;
		head = *p++;
		slot = head & TYPE_ESC;
		type = slot;
		code = head >> 5;
		if ((slot == TYPE_ESC && !get_varint(&p, end, &type)) ||
		    (code == CODE_ESC && !get_varint(&p, end, &code)) ||
		    type > 0xffff || code > 0xffff || !get_varint(&p, end, &v))
			return false;
		memset(e, 0, sizeof(*e));
		e->type = (unsigned short)type;
		e->code = (unsigned short)code;
		ticks += unzz(v);
		e->ticks = ticks;
		if (head & HAS_TASK) {
			if (!get_varint(&p, end, &v))
				return false;
			task += unzz(v);
			e->task = task;
		}
		if (!get_varint(&p, end, &v))
			return false;
		arg[slot] += unzz(v);
		e->arg = arg[slot];
		if (!get_varint(&p, end, &v) || v > 0xffffffffull)
			return false;
		e->peer = (int)(__s32)(__u32)unzz(v);
	}
	return p == end;
}
