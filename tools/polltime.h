/* SPDX-License-Identifier: MIT */
/* tools/polltime.h - types shared by polltime.bpf.c and polltime.c. */
#ifndef BLITZ_TOOLS_POLLTIME_H
#define BLITZ_TOOLS_POLLTIME_H

#include "hist.h"

#define POLLTIME_MAX_HISTS	1024

/* hist_key.label with -R: how the poll ended. */
#define POLL_PENDING	0
#define POLL_READY	1
#define POLL_ANY	2	/* not split */

#endif
