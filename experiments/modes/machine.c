// SPDX-License-Identifier: MIT
/*
 * machine.c - what this machine's two CPUs do alone, with no runtime: the
 * other half of the modes experiment (README.md).  Rounds of two tests,
 * each printed as a JSON line:
 *  - "spin": two threads, one pinned to each CPU, each runs the same chain
 *    of dependent multiplies, sharing nothing: ns per step of each;
 *  - "line": the two threads hand a cache line back and forth (each waits
 *    for the other's store, then stores): ns per hand-over, the price of
 *    every cross-worker event of a scheduler (a steal, a wake, a queue's
 *    index).
 * A machine whose figures move between rounds moves a benchmark's with
 * them, whatever the runtime does.
 *
 *   machine [ROUNDS [MS_PER_TEST]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

struct arg {
	int cpu;
	uint64_t steps, ns;
	volatile uint64_t sink;
};

static void *spin(void *p)
{
	struct arg *a = p;
	uint64_t x = 1, t;

	pin(a->cpu);
	t = now_ns();
	for (uint64_t i = 0; i < a->steps; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	a->ns = now_ns() - t;
	a->sink = x;
	return NULL;
}

/* The line: even values are the first thread's turn, odd the second's. */
static _Alignas(64) _Atomic uint64_t line;
static uint64_t hand_overs;

static void *bounce(void *p)
{
	struct arg *a = p;
	uint64_t me = (uint64_t)a->cpu & 1, t = now_ns();

	pin(a->cpu);
	for (uint64_t i = 0; i < hand_overs; i++) {
		uint64_t v;

		/* Acquire/release: the turn is the only thing published. */
		while (((v = atomic_load_explicit(&line, memory_order_acquire)) & 1) != me)
			;
		atomic_store_explicit(&line, v + 1, memory_order_release);
	}
	a->ns = now_ns() - t;
	return NULL;
}

static void both(void *(*fn)(void *), struct arg a[2])
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, fn, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	double ms = argc > 2 ? atof(argv[2]) : 20;
	uint64_t steps = 1000000, t;

	if (rounds < 1 || ms <= 0) {
		fprintf(stderr, "usage: machine [ROUNDS [MS_PER_TEST]]\n");
		return 2;
	}
	/* Calibrate the spin to about MS on CPU 0, once. */
	{
		struct arg c = { .cpu = 0, .steps = steps };

		spin(&c);
		steps = (uint64_t)((double)steps * ms * 1e6 / (double)(c.ns ? c.ns : 1));
	}
	hand_overs = 100000;
	for (int r = 0; r < rounds; r++) {
		struct arg a[2] = { { .cpu = 0, .steps = steps }, { .cpu = 1, .steps = steps } };

		both(spin, a);
		printf("{\"round\":%d,\"test\":\"spin\",\"ns_per_step\":[%.3f,%.3f]}\n", r,
		       (double)a[0].ns / (double)steps, (double)a[1].ns / (double)steps);
		atomic_store(&line, 0);
		t = now_ns();
		both(bounce, a);
		printf("{\"round\":%d,\"test\":\"line\",\"ns_per_hand_over\":%.1f}\n", r,
		       (double)(now_ns() - t) / (2.0 * (double)hand_overs));
		fflush(stdout);
	}
	return 0;
}
