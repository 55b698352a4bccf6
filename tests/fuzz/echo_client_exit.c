// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/echo_client_exit.c - experiments/workloads/echo_client.c (the
 * client helpers echo-bench shares with echo-loadgen) as fuzz-echo_opts
 * links it: its exit(2) on a bad value returns to the target
 * (bench_exit.h), as bench_util_exit.c does for bench_util.c.
 */
#include "bench_exit.h"
#include "../../experiments/workloads/echo_client.c"
