// SPDX-License-Identifier: MIT
/* tests/fuzz/hist_copy.c - experiments/workloads/hist.c, which echo_bench.c's client uses, for fuzz-echo_opts. */
#include "../../experiments/workloads/hist.c"
