//! blocking-bench-tokio: the Tokio side of blitz's blocking-bench
//! (experiments/workloads/blocking_bench.c): a trivial closure's trip through
//! Tokio's blocking pool, with the same names, parameters and JSON
//! (docs/design.md's bench JSON plus ops_per_sec, p50_ns, p99_ns, max_ns, os_threads).
//!
//! Usage: blocking-bench-tokio [--workers N] [--iters K] [--warmup W] [--ops N]
//!                             [--bench NAME|all|NAME,NAME..] [--list]
//!
//!  - blocking_roundtrip: a task spawned on the runtime (so it runs on a
//!    worker, as blitz's block_on task does) awaits
//!    `spawn_blocking(move || i)` one after another; the latency of each;
//!  - blocking_burst: such a task calls spawn_blocking `ops` times, then
//!    awaits the JoinHandles in order; throughput only;
//!  - blocking_roundtrip_outside: the main thread calls `rt.spawn_blocking`
//!    and waits for each with `rt.block_on(handle)` (blitz: blitz_spawn_blocking
//!    and blitz_blocking_wait).
//!
//! The runtime has no I/O or time driver (as sync-bench-tokio's); the
//! blocking pool keeps Tokio's defaults (512 threads, 10 s keep-alive), which
//! are blitz's too.

use std::process::exit;
use std::time::Instant;

use tokio::runtime::{self, Runtime};

mod bench_args;
use bench_args::{median, parse_args, quantile, Cli, Program};

/// name, default ops, from, one latency sample per op
const BENCHES: &[(&str, usize, &str, bool)] = &[
    ("blocking_roundtrip", 2000, "task", true),
    ("blocking_burst", 1000, "task", false),
    ("blocking_roundtrip_outside", 2000, "thread", true),
];

fn elapsed_ns(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

fn roundtrip(rt: &Runtime, ops: usize) -> Vec<u64> {
    let task = rt.spawn(async move {
        let mut lat = Vec::with_capacity(ops);
        for i in 0..ops {
            let t0 = Instant::now();
            let v = tokio::task::spawn_blocking(move || i).await.unwrap();
            lat.push(elapsed_ns(t0));
            assert_eq!(v, i);
        }
        lat
    });
    rt.block_on(task).unwrap()
}

fn burst(rt: &Runtime, ops: usize) -> Vec<u64> {
    let task = rt.spawn(async move {
        let handles: Vec<_> = (0..ops).map(|i| tokio::task::spawn_blocking(move || i)).collect();
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(h.await.unwrap(), i);
        }
    });
    rt.block_on(task).unwrap();
    Vec::new()
}

fn roundtrip_outside(rt: &Runtime, ops: usize) -> Vec<u64> {
    let mut lat = Vec::with_capacity(ops);
    for i in 0..ops {
        let t0 = Instant::now();
        let v = rt.block_on(rt.spawn_blocking(move || i)).unwrap();
        lat.push(elapsed_ns(t0));
        assert_eq!(v, i);
    }
    lat
}

/// The process's threads now (/proc/self/status), or -1.
fn os_threads() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(-1)
}

fn main() {
    let names: Vec<&str> = BENCHES.iter().map(|b| b.0).collect();
    let cli = Cli {
        name: "blocking-bench-tokio",
        usage: "usage: blocking-bench-tokio [--workers N] [--iters K] [--warmup W] [--ops N] \
                [--bench NAME|all|A,B] [--list]\n  defaults: --workers 2 --iters 15 --warmup 3 --bench all",
    };
    let opts = parse_args(&Program::new(cli, &names, 2));
    let mut builder = runtime::Builder::new_multi_thread();
    builder.worker_threads(opts.workers);
    let rt = builder.build().unwrap_or_else(|e| {
        eprintln!("blocking-bench-tokio: runtime: {}", e);
        exit(1)
    });

    for &b in &opts.benches {
        let (name, default_ops, from, latency) = BENCHES[b];
        let ops = if opts.ops > 0 { opts.ops } else { default_ops };
        let run = match name {
            "blocking_roundtrip" => roundtrip,
            "blocking_burst" => burst,
            _ => roundtrip_outside,
        };
        let mut times = Vec::with_capacity(opts.iters);
        let mut lat = Vec::with_capacity(if latency { ops * opts.iters } else { 0 });
        for i in 0..opts.warmup + opts.iters {
            let t0 = Instant::now();
            let l = run(&rt, ops);
            let t = elapsed_ns(t0);
            if i >= opts.warmup {
                times.push(t);
                lat.extend(l);
            }
        }
        times.sort_unstable();
        lat.sort_unstable();
        let med = median(&times);
        let pct = if latency {
            format!(
                "\"p50_ns\":{},\"p99_ns\":{},\"max_ns\":{}",
                quantile(&lat, 0.50),
                quantile(&lat, 0.99),
                lat[lat.len() - 1]
            )
        } else {
            "\"p50_ns\":null,\"p99_ns\":null,\"max_ns\":null".to_string()
        };
        println!(
            "{{\"runtime\":\"tokio\",\"bench\":\"{}\",\"workers\":{},\"backend\":\"none\",\
             \"from\":\"{}\",\"ops\":{},\"iters\":{},\"median_ns\":{},\"min_ns\":{},\
             \"ns_per_op\":{:.2},\"ops_per_sec\":{:.1},{},\"os_threads\":{}}}",
            name,
            opts.workers,
            from,
            ops,
            opts.iters,
            med,
            times[0],
            med as f64 / ops as f64,
            ops as f64 * 1e9 / med as f64,
            pct,
            os_threads()
        );
    }
}
