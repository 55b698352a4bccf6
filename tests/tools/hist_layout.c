// SPDX-License-Identifier: MIT
/*
 * tests/tools/hist_layout.c - hist-layout: fire the hist_snapshot probe
 * (docs/probes.md, "Summary histograms") with snapshots no tool may read,
 * as a runtime built from another tree would: two whose size is not
 * sizeof(struct blitz_hist_snapshot), then three of the right size whose
 * version is BLITZ_HIST_VERSION + 1.  A summary-mode tool must skip all
 * five, merge nothing and say so (tools/summary.bpf.h, summary_take;
 * tests/scripts/tools-summary.sh).  The probe is a bare <sys/sdt.h> one
 * under the runtime's provider name: without a semaphore, it fires
 * whether a tool is attached or not.
 */
#include <stdio.h>
#include <string.h>
#include <sys/sdt.h>
#include <blitz/trace/histograms.h>

#define SHORT_SNAPSHOTS		2
#define NEWER_SNAPSHOTS		3

static struct blitz_hist_snapshot snap;

/*
 * The size is a constant at each site and the address sits in a
 * callee-saved register, as at the runtime's site (libblitz.so's note:
 * "8@%r12 4@$4232"): bpftrace 0.17 builds a program the verifier refuses
 * for some other argument registers (a context pointer moved, then read).
 */
#define FIRE(sz, ver)							\
	do {								\
		register struct blitz_hist_snapshot *p asm("r12") = &snap;	\
		register int w asm("ebx") = snap.worker;		\
		snap.size = (sz);					\
		snap.version = (ver);					\
		snap.seq = ++seq;					\
		STAP_PROBE4(blitz, hist_snapshot, w, p, (unsigned)(sz), snap.seq); \
	} while (0)

int main(void)
{
	unsigned long long seq = 0;

	memset(&snap, 0, sizeof(snap));
	snap.kinds = BLITZ_HIST_KINDS;
	snap.runtime = 1;
	/* Every event counted, so that a snapshot merged by mistake shows. */
	for (int k = 0; k < BLITZ_HIST_KINDS; k++) {
		snap.events[k] = 1000;
		snap.hist[k].slots[10] = snap.hist[k].count = 1000;
	}
	for (int i = 0; i < SHORT_SNAPSHOTS; i++)
		FIRE(sizeof(snap) - 8, BLITZ_HIST_VERSION);
	for (int i = 0; i < NEWER_SNAPSHOTS; i++)
		FIRE(sizeof(snap), BLITZ_HIST_VERSION + 1);
	printf("fired %d snapshots of another layout\n", SHORT_SNAPSHOTS + NEWER_SNAPSHOTS);
	return 0;
}
