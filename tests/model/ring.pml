/*
 * ring.pml -- Promela model of blitz's per-worker ring (core/sched/queue.c):
 * the Chase-Lev style ring with a packed dual head and the three-phase
 * steal, checked by spin.
 *
 *   struct blitz_queue {
 *       _Atomic u64 head;          // steal << 32 | real
 *       _Atomic u32 tail;          // written by the owner only
 *       _Atomic(task*) buffer[256];
 *   };
 *
 * The model shrinks the ring so that exhaustive search is feasible:
 *
 *   C code                      model
 *   CAPACITY 256, half 128      CAP 4, HALF 2
 *   32-bit halves of a u64      HBITS-bit halves of an int (default 8:
 *                               a byte, like a u32 but wrapping at 256)
 *   head/tail start at 0        they start at START (default 254) so
 *                               that every run wraps past 255 -> 0
 *
 * All index arithmetic is unsigned and wraps (WRAP() is "& 255"), the way
 * the C code's u32 arithmetic wraps at 2^32.
 *
 * Processes: one owner (queue_push with overflow to the inject queue,
 * queue_pop) and two stealers (queue_steal_into).  Every C atomic
 * operation is one Promela step; a CAS is a d_step that compares the whole
 * packed head; plain loads of head/tail and each buffer slot read/write
 * are separate steps, so every interleaving of them is explored.  The
 * model assumes sequential consistency (see README.md).
 *
 * Tasks are ids 1..NTASKS.  Ghost state (not in the C code):
 *   live[slot]  the slot holds a task nobody has taken yet
 *   seen[id]    how many times task id was delivered (owner pop,
 *               stealer copy, moved to the inject queue, or left in the
 *               ring at the end)
 *   inflight    steals between their claim CAS and their release CAS
 *
 * Bug variants (compile-time macros, spin -DNAME -a ring.pml):
 *   BUG_ABANDON_STEAL   the stealer gives up when its release CAS fails
 *                       (the design's other form) instead of retrying (as
 *                       Tokio): steal_head stays behind real_head forever.
 *   BUG_ROOM_CHECK_REAL queue_push measures free room from real head instead
 *                       of steal head, so it can reuse slots that an
 *                       in-flight steal has claimed but not copied yet.
 *   BUG_NARROW_HALVES   3-bit halves (wrap at 8) instead of 8-bit ones: the
 *                       claim CAS suffers ABA when the owner pops a whole
 *                       wrap's worth of tasks while a stealer sleeps between
 *                       its head load and its CAS -- why blitz uses 32-bit
 *                       halves rather than 16-bit ones (docs/scheduler.md).
 *   NO_HEAD_INV         (with a bug variant) check only the slot-level
 *                       assertions, not the head invariants, to see the
 *                       overwrite itself rather than the broken invariant.
 * Other knobs: NTASKS (default 7), START (default 254).
 */

#define CAP   4
#define MASK  3
#define HALF  2

#ifdef BUG_NARROW_HALVES
#define HBITS 3
#ifndef NTASKS
#define NTASKS 10
#endif
#ifndef START
#define START 6
#endif
#else
#define HBITS 8
#endif

#ifndef NTASKS
#define NTASKS 7
#endif
#ifndef START
#define START 254
#endif

#define HMASK        ((1 << HBITS) - 1)
#define WRAP(x)      ((x) & HMASK)
#define PACK(s, r)   ((WRAP(s) << HBITS) | WRAP(r))
#define STEAL(h)     (((h) >> HBITS) & HMASK)
#define REAL(h)      ((h) & HMASK)

int  head;                 /* packed: steal << HBITS | real */
byte tail;                 /* only the owner writes it */
byte buf[CAP];             /* task ids, 0 = never written */

/* ghost state */
bool live[CAP];
byte seen[NTASKS + 1];
byte inflight;
byte inject_len;           /* tasks moved to the inject queue */

/*
 * Invariants of the packed head, checked inside every step that changes
 * head or tail (they are the only steps that can break them).  With
 * unsigned wrap-around, "steal <= real <= tail" reads:
 *  - the ring never spans more than CAP slots counting those claimed by
 *    an in-flight steal: tail - steal <= CAP;
 *  - steal head never passes real head, and real head never passes tail:
 *    tail - real <= tail - steal (both mod 2^HBITS);
 *  - steal != real only while a steal is between claim and release.
 */
#ifdef NO_HEAD_INV
#define HEAD_OK(h, t) 1     /* leave only the slot-level assertions */
#else
#define HEAD_OK(h, t) \
	(WRAP((t) - STEAL(h)) <= CAP && \
	 WRAP((t) - REAL(h)) <= WRAP((t) - STEAL(h)) && \
	 (inflight > 0 || STEAL(h) == REAL(h)))
#endif

/* take the task in slot idx: it must be there and nobody may have taken it */
inline take(idx)
{
	assert(live[idx]);
	assert(buf[idx] >= 1 && buf[idx] <= NTASKS);
	seen[buf[idx]]++;
	live[idx] = 0
}

/* ---------------------------------------------------------------- owner */

/*
 * queue_push(q, task, inject): owner only.
 *   tail = own tail; loop {
 *     h = load(head)
 *     if (tail - steal < CAP) { buffer[tail & MASK] = task; store(tail, tail+1); return }
 *     if (steal != real)      { inject_push(task); return }
 *     if (!CAS(head, h, pack(real+half, real+half))) { reload tail; continue }
 *     move buffer[real .. real+half) to the inject queue
 *     buffer[tail & MASK] = task; store(tail, tail+1); return
 *   }
 */
inline queue_push(task)
{
	t = tail;
push_retry:
	h = head;                                   /* load(head) */
	if
#ifdef BUG_ROOM_CHECK_REAL
	:: WRAP(t - REAL(h)) < CAP ->
#else
	:: WRAP(t - STEAL(h)) < CAP ->
#endif
		goto push_write
	:: else ->
		if
		:: STEAL(h) != REAL(h) ->
			/* a steal is in flight: the single task goes to inject */
			d_step { seen[task]++; inject_len++ };
			goto push_done
		:: else ->
			/* overflow: claim half of the ring for the inject queue */
			d_step {
				if
				:: head == h ->
					head = PACK(REAL(h) + HALF, REAL(h) + HALF);
					ok = 1;
					assert(HEAD_OK(head, tail))
				:: else -> ok = 0
				fi
			};
			if
			:: !ok -> t = tail; goto push_retry
			:: else
			fi;
			i = 0;
			do
			:: i < HALF ->
				/* one load of buffer[(real + i) & MASK], then inject_push */
				d_step {
					idx = WRAP(REAL(h) + i) & MASK;
					take(idx);
					inject_len++;
					i++
				}
			:: else -> break
			od;
			goto push_write
		fi
	fi;
push_write:
	atomic {                                    /* buffer[tail & MASK] = task */
		idx = t & MASK;
		/* the owner never overwrites a slot somebody has yet to take,
		 * in particular one a stealer claimed but has not copied yet */
		assert(!live[idx]);
		buf[idx] = task;
		live[idx] = 1
	};
	d_step {                                    /* store(tail, tail + 1) */
		tail = WRAP(t + 1);
		assert(HEAD_OK(head, tail))
	};
push_done:
	atomic { t = 0; h = 0; i = 0; idx = 0; ok = 0 }
}

/*
 * queue_pop(q): owner only.
 *   h = load(head); loop {
 *     if (real == tail) return NULL
 *     new = steal == real ? pack(real+1, real+1) : pack(steal, real+1)
 *     if (CAS(head, h, new)) return buffer[real & MASK]
 *     h = actual
 *   }
 */
inline queue_pop()
{
	h = head;                                   /* load(head) */
pop_retry:
	if
	:: REAL(h) == tail -> skip                  /* empty */
	:: else ->
		d_step {
			if
			:: head == h ->
				head = (STEAL(h) == REAL(h) ->
					PACK(REAL(h) + 1, REAL(h) + 1) :
					PACK(STEAL(h), REAL(h) + 1));
				ok = 1;
				assert(HEAD_OK(head, tail))
			:: else ->
				h = head;                   /* CAS failure returns actual */
				ok = 0
			fi
		};
		if
		:: !ok -> goto pop_retry
		:: else ->
			d_step {                    /* load buffer[real & MASK] */
				idx = REAL(h) & MASK;
				take(idx)
			}
		fi
	fi;
	d_step { h = 0; idx = 0; ok = 0 }
}

proctype owner()
{
	byte next = 1;
	byte t, i, idx;
	int h;
	bool ok;

	do
	:: next <= NTASKS -> queue_push(next); next++
	:: queue_pop()
	:: next > NTASKS -> break
	od
}

/* ------------------------------------------------------------- stealers */

/*
 * queue_steal_into(src, dst):
 *   h = load(src->head)
 *   if (steal != real) return NULL                     -- a steal is in flight
 *   avail = load(src->tail) - real; if (!avail) return NULL
 *   n = avail - avail/2, capped at CAP/2
 *   phase 1 claim:   CAS(src->head, h, pack(steal, real + n)) or return NULL
 *   phase 2 copy:    buffer[real .. real+n) -> dst buffer at dst tail,
 *                    store(dst->tail, ...)  (the first task is returned)
 *   phase 3 release: h = load(src->head);
 *                    while (!CAS(src->head, h, pack(real', real'))) h = actual
 * The destination ring is the stealer's own (it is empty when a worker
 * steals); here the copy simply delivers each task to the stealer.
 */
proctype stealer()
{
	byte t, n, i, idx, avail, r0;
	int h;
	bool ok;

	do
	:: break
	:: h = head;                                /* load(src->head) */
		if
		:: STEAL(h) != REAL(h) -> skip      /* steal in flight: none */
		:: else ->
			t = tail;                   /* load(src->tail) */
			avail = WRAP(t - REAL(h));
			if
			:: avail == 0 -> skip
			:: else ->
				n = avail - avail / 2;
				if
				:: n > HALF -> n = HALF
				:: else
				fi;
				/* phase 1: claim [real, real + n) */
				d_step {
					if
					:: head == h ->
						head = PACK(STEAL(h), REAL(h) + n);
						inflight++;
						ok = 1;
						assert(HEAD_OK(head, tail))
					:: else -> ok = 0
					fi
				};
				if
				:: ok ->
					/* phase 2: copy, one slot load per step */
					r0 = REAL(h);
					i = 0;
					do
					:: i < n ->
						d_step {
							idx = WRAP(r0 + i) & MASK;
							take(idx);
							i++
						}
					:: else -> break
					od;
					/* (store of dst tail: private to this stealer) */
					/* phase 3: release */
					h = head;           /* load(src->head) */
rel_retry:
					atomic {
						if
						:: head == h ->
							head = PACK(REAL(h), REAL(h));
							inflight--;
							ok = 1;
							assert(HEAD_OK(head, tail))
						:: else ->
							h = head;
							ok = 0
						fi
					};
					if
					:: ok -> skip
					:: else ->
#ifdef BUG_ABANDON_STEAL
						/* the design's other form: the steal is abandoned */
						d_step {
							inflight--;
							assert(HEAD_OK(head, tail))
						}
#else
						goto rel_retry
#endif
					fi
				:: else -> skip     /* lost the claim race: none */
				fi
			fi
		fi;
		d_step { t = 0; n = 0; i = 0; idx = 0; avail = 0; r0 = 0; h = 0; ok = 0 }
	od
}

/* ---------------------------------------------------------------- setup */

init
{
	byte i, idx;

	atomic {
		head = PACK(START, START);
		tail = START;
		run owner();
		run stealer();
		run stealer()
	};

	/* when owner and stealers are done: account for what is left */
	(_nr_pr == 1);
	d_step {
		/* no steal in flight any more: the heads must agree again */
		assert(inflight == 0);
		assert(STEAL(head) == REAL(head));
		/* the tasks still in the ring count as delivered once */
		i = REAL(head);
		do
		:: i != tail ->
			idx = i & MASK;
			take(idx);
			i = WRAP(i + 1)
		:: else -> break
		od;
		/* every task delivered exactly once, and no live slot left behind */
		i = 1;
		do
		:: i <= NTASKS -> assert(seen[i] == 1); i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < CAP -> assert(!live[i]); i++
		:: else -> break
		od
	}
}
