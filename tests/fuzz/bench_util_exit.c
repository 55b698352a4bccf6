// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/bench_util_exit.c - experiments/workloads/bench_util.c as the
 * fuzz targets of the benches' options link it: its exit(2) on a bad value
 * returns to the target (bench_exit.h).
 */
#include "bench_exit.h"
#include "../../experiments/workloads/bench_util.c"
