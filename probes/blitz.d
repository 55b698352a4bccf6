/*
 * blitz.d - the probe catalog of the blitz runtime (provider "blitz").
 *
 * One probe per line (dtrace's parser trips over a provider on one line).
 * Every argument is an integer: worker indices are int (-1 = a thread that
 * is not a worker), task pointers are uint64_t, times are nanoseconds.
 * The codes an argument carries (dest, source, the reasons, unpark's waker,
 * the sync kind) are defined once, in blitz_probe_codes.h.
 * docs/probes.md documents every argument and when each probe fires;
 * tests/scripts/probe-catalog.sh keeps that table, this file and the notes
 * in libblitz.so in step.
 */
provider blitz {
	probe task_spawn(uint64_t task, int worker, int dest);
	probe task_schedule(uint64_t task, int worker, int dest);
	probe task_poll_start(int worker, uint64_t task, int source);
	probe task_poll_end(int worker, uint64_t task, int ready, uint64_t poll_ns);
	probe task_complete(int worker, uint64_t task, int cancelled);
	probe lifo_hit(int worker, uint64_t task);
	probe lifo_flush(int worker, uint64_t task, int reason);
	probe local_push(int worker, uint64_t task, uint32_t len);
	probe overflow(int worker, uint32_t count);
	probe steal(int thief, int victim, uint32_t count);
	probe steal_fail(int thief, int victim, int reason);
	probe global_batch(int worker, uint32_t count, uint64_t remaining);
	probe searching_start(int worker, uint32_t searching);
	probe searching_end(int worker, uint32_t searching, int found);
	probe park(int worker, uint64_t timeout_ns);
	probe unpark(int worker, int reason, int waker, uint64_t slept_ns);
	probe ewma_update(int worker, uint64_t avg_poll_ns, uint32_t interval);
	probe budget_exhausted(int worker, uint64_t tick);
	probe io_submit(int backend, int opcode, int fd, uint64_t op);
	probe io_complete(int backend, int opcode, int result, uint64_t latency_ns, uint64_t op);
	probe timer_fire(uint64_t task, uint64_t deadline_ns, uint64_t late_ns);
	probe sync_wait(int kind, uint64_t prim, uint64_t task);
	probe sync_wake(int kind, uint64_t prim, uint64_t task, uint64_t wait_ns);
	probe blocking_spawn(uint64_t job, uint32_t queued, uint32_t threads);
	probe blocking_start(uint64_t job, uint64_t wait_ns, uint32_t threads);
	probe blocking_end(uint64_t job, uint64_t run_ns, int64_t result);
	probe signal_recv(int signo, int pid, int fd);
	probe process_exit(int pid, int code, int signo, uint64_t run_ns);
	probe accept_emfile(int fd, int err, uint32_t shed);
	probe hist_snapshot(int worker, uint64_t hists, uint32_t size, uint64_t seq);
	probe event_flush(int worker, uint64_t log, uint32_t count, uint64_t seq);
	probe event_ring(int worker, uint64_t runtime, int fd, uint64_t bytes);
};
