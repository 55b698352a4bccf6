/*
 * readiness.pml -- Promela model of the epoll backend's read marks
 * (backends/readiness.c: perform, readiness_submit, learn, readiness_ended,
 * readiness_run; backends/epoll.c: epoll_arm, epoll_reap).  Checked by
 * spin; tests/model/run runs it, README.md maps it onto the C code.
 *
 * One TCP connection's receive side, read by one task until EOF.  The
 * descriptor's number was used before: its entry starts with the old
 * file's marks (@tcp, @drained, @ended: any values) and the new file is
 * not yet in the epoll set.
 *
 * The rule under test: a read that returned less than it asked for (a
 * short read) emptied the receive queue, so the next read waits for the
 * edge that the next arrival makes instead of trying (@drained); after an
 * event reported the peer's FIN (@ended) a short read proves nothing, since
 * the EOF that follows makes no edge.  A newly registered descriptor's marks
 * are reset (learn), but the registration itself may report the file ready,
 * and that event can run on another worker before or around learn.
 *
 * Processes:
 *   peer     D units of data, one at a time, then the FIN; each arrival
 *            makes an edge (the epoll item ready) if the file is watched
 *   reader   the task: readiness_submit (try unless @drained and not
 *            @ended or someone is queued; else queue, note @events, arm:
 *            EPOLL_CTL_ADD makes the item ready at once if the file is
 *            readable; learn if newly added), then wait for the
 *            completion; until a read returns 0
 *   reaper   a worker in epoll_reap: takes the ready item, its mask read
 *            then (EPOLLIN if anything is queued or the FIN came,
 *            EPOLLRDHUP with the FIN); RDHUP: readiness_ended; then
 *            readiness_run of the read side; two critical sections, as in C
 *   checker  when nothing can move, the reader saw EOF and every byte
 *
 * Knobs:
 *   D                     units of data (default 3); a read asks for ASK=2
 *   BUG_LEARN_CLEARS_ENDED learn as it was: clears @ended whatever ran
 *                         since the registration
 *   BUG_NO_ENDED          readiness_ended does nothing: a short read
 *                         before the FIN hides the EOF
 */

#ifndef D
#define D 3
#endif
#define ASK 2
#define EAGAIN 255

/* the socket */
byte avail;			/* units in the receive queue */
bit fin;			/* the peer's FIN is queued behind them */
bit registered;			/* in the epoll set */
bit ready;			/* the epoll item is on the ready list */

/* the fd entry, under its lock l */
bit l;
bit tcp, drained, ended;
byte events;			/* read_events */
bit queued;			/* the reader's operation is on the read list */
bit completed;			/* ... and was completed, with cres */
byte cres;

/* what the reader saw */
byte got;
bit eof;

inline lock() { atomic { l == 0 -> l = 1 } }
inline unlock() { l = 0 }

/* perform - a read of ASK units under the lock, marking a short TCP read. */
inline perform(res) {
	atomic {		/* the socket's lock: arrivals wait */
		if
		:: avail >= ASK -> avail = avail - ASK; res = ASK
		:: avail > 0 && avail < ASK -> res = avail; avail = 0
		:: avail == 0 && fin -> res = 0
		:: avail == 0 && !fin -> res = EAGAIN
		fi
	};
	if
	:: tcp && res != EAGAIN && res > 0 && res < ASK -> drained = 1
	:: else
	fi
}

/* run_read - readiness_run(e, 0): the edge clears @drained, the list runs. */
inline run_read(r) {
	lock();
	events++;
	drained = 0;
	if
	:: queued ->
		perform(r);
		if
		:: r != EAGAIN -> queued = 0; cres = r; completed = 1
		:: else
		fi
	:: else
	fi;
	unlock()
}

inline deliver(res) {
	if
	:: res == 0 -> eof = 1
	:: else -> got = got + res
	fi
}

proctype peer()
{
	byte i;

	for (i : 1 .. D) {
		atomic {
			avail++;
			if
			:: registered -> ready = 1
			:: else
			fi
		}
	}
	atomic {
		fin = 1;
		if
		:: registered -> ready = 1
		:: else
		fi
	}
}

proctype reader()
{
	byte res, seen, r;
	bit added, rerun;

	do
	:: eof -> break
	:: else ->
		/* readiness_submit */
		lock();
		if
		:: !queued && !(drained && !ended) ->
			perform(res);
			if
			:: res != EAGAIN ->
				unlock();
				deliver(res);
				goto next
			:: else
			fi
		:: else
		fi;
		queued = 1;
		seen = events;
		unlock();
		/* epoll_arm: EPOLL_CTL_ADD, EEXIST if already watched */
		atomic {
			if
			:: !registered ->
				registered = 1;
				added = 1;
				if
				:: avail > 0 || fin -> ready = 1
				:: else
				fi
			:: else -> added = 0
			fi
		}
		/* learn */
		if
		:: added ->
			rerun = 0;
			lock();
			tcp = 1;
#ifdef BUG_LEARN_CLEARS_ENDED
			ended = 0;
#else
			if
			:: events == seen -> ended = 0
			:: else -> rerun = drained && queued
			fi;
#endif
			drained = 0;
			unlock();
			if
			:: rerun -> run_read(r)
			:: else
			fi
		:: else
		fi;
		/* wait for the completion */
		completed == 1;
		completed = 0;
		deliver(cres);
next:		skip
	od
}

proctype reaper()
{
	bit in, rdhup;
	byte r;

end:	do
	:: atomic {
		ready == 1 ->
		ready = 0;
		in = (avail > 0 || fin);
		rdhup = fin
	   }
		if
		:: rdhup ->
#ifndef BUG_NO_ENDED
			lock();
			ended = 1;
			events++;
			unlock()
#else
			skip
#endif
		:: else
		fi;
		if
		:: in -> run_read(r)
		:: else
		fi
	od
}

proctype checker()
{
	timeout ->
	assert(eof == 1 && got == D)
}

init
{
	/* the old file's marks */
	if
	:: tcp = 0
	:: tcp = 1
	fi;
	if
	:: drained = 0
	:: drained = 1
	fi;
	if
	:: ended = 0
	:: ended = 1
	fi;
	atomic {
		run peer();
		run reader();
		run reaper();
		run checker()
	}
}
