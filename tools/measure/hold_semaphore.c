// SPDX-License-Identifier: MIT
/*
 * hold_semaphore.c - for measurement only (tools/measure/hold.sh sets it
 * up): an LD_PRELOAD object that raises one USDT semaphore of libblitz.so
 * before main(), as the kernel does when a tracer attaches, so that a run
 * takes the paths a traced run takes with no tracer: under valgrind, where
 * uprobes do not fire (tools/measure-instructions), and natively, to time
 * the runtime's side of a mode apart from the tools' (measure-modes -H).
 * The library is not changed: the semaphores are hidden symbols, so the
 * address comes from its .note.stapsdt (BLITZ_HOLD_SEMAPHORE, hex, as
 * `readelf -n` prints it), relative to where the loader put the library.
 * Nothing fires: the probe sites stay nops, only the _ENABLED() tests see a
 * tracer.  A process without libblitz (the shell of the valgrind launcher)
 * is left alone; the one it is raised in says so on stderr, which the
 * script checks.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find_blitz(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	if (!strstr(info->dlpi_name, "libblitz.so"))
		return 0;
	*(uintptr_t *)base = info->dlpi_addr;
	return 1;
}

__attribute__((constructor)) static void hold_semaphore(void)
{
	const char *v = getenv("BLITZ_HOLD_SEMAPHORE");
	uintptr_t base = 0, off;
	char *end;

	if (!v)
		return;
	off = strtoull(v, &end, 16);
	if (*end || !off) {
		fprintf(stderr, "BLITZ_HOLD_SEMAPHORE=%s: expected the semaphore's address in hex\n", v);
		exit(2);
	}
	if (!dl_iterate_phdr(find_blitz, &base))
		return;
	/* The program has no threads yet: a plain increment, as the kernel's. */
	(*(volatile unsigned short *)(base + off))++;
	fprintf(stderr, "hold_semaphore: raised at %#lx\n", (unsigned long)off);
}
