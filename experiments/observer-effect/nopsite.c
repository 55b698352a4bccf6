// SPDX-License-Identifier: MIT
/*
 * nopsite - what an attached USDT probe costs per hit on the two kinds of
 * probe site x86-64 kernels know: the 1-byte nop that <sys/sdt.h> emits
 * (each hit traps: int3) and a 5-byte nop, which kernels with
 * arch_uprobe_optimize rewrite into a call to a uprobe trampoline once
 * the probe has been hit (no trap).  Nothing else differs between the
 * two sites: same note, same (no) arguments, same loop.
 *
 *   nopsite SITE N      SITE: nop1 or nop5; N calls of the site
 *
 * Prints one JSON line: the site, the calls and the ns per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/sdt.h>

static __attribute__((noinline)) void site_nop1(void)
{
	STAP_PROBE(nopsite, nop1);
}

/*
 * The same macro, its nop replaced by the 5-byte one (0f 1f 44 00 00):
 * _SDT_NOP is expanded where STAP_PROBE is used, so redefining it here
 * changes only the sites below.  As bytes: the assembler would shorten
 * "nopl 0x0(%rax,%rax,1)" to 4 (no displacement); ';' separates them
 * because a comma would split the macro's argument.
 */
#undef _SDT_NOP
#define _SDT_NOP .byte 0x0f; .byte 0x1f; .byte 0x44; .byte 0x00; .byte 0x00

static __attribute__((noinline)) void site_nop5(void)
{
	STAP_PROBE(nopsite, nop5);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	void (*site)(void);
	double t0;
	long n, i;

	if (argc != 3 || (strcmp(argv[1], "nop1") && strcmp(argv[1], "nop5")) ||
	    (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: nopsite nop1|nop5 CALLS\n");
		return 2;
	}
	site = strcmp(argv[1], "nop1") ? site_nop5 : site_nop1;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		site();
	printf("{\"site\":\"%s\",\"calls\":%ld,\"ns_per_call\":%.2f}\n", argv[1], n,
	       (now_ns() - t0) / n);
	return 0;
}
