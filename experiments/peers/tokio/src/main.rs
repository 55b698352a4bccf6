//! sched-bench-tokio: the scheduler benches of Tokio's
//! `benches/rt_multi_threaded.rs`, with Tokio's parameters, re-hosted in a
//! plain binary (no criterion/bencher) so that blitz can be compared against
//! them with the same driver and the same JSON output.
//!
//! Every bench body below follows Tokio's bench code; see
//! `experiments/peers/README.md` for the mapping and the deviations.
//!
//! Usage: sched-bench-tokio [--workers N] [--iters K] [--warmup W]
//!                          [--bench NAME|all|NAME,NAME..] [--backend none|epoll]
//! Prints one JSON line per bench.

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{mpsc, Arc};
use std::time::Instant;

use tokio::runtime::{self, Runtime};
use tokio::sync::oneshot;

mod bench_args;
use bench_args::{median, parse_args_with, Cli, Dialect, Extra, Opts, Program};

const NUM_SPAWN: usize = 10_000; // spawn_many_*, spawn_await
const NUM_YIELD: usize = 1_000; // yield_many: yields per task
const YIELD_TASKS: usize = 200; // yield_many: tasks
const NUM_PINGS: usize = 1_000; // ping_pong
const CHAIN_LEN: usize = 1_000; // chained_spawn

/// Benches run by `--bench all`, in this order.
const ALL: &[&str] = &[
    "spawn_many_local",
    "spawn_many_remote",
    "yield_many",
    "ping_pong",
    "chained_spawn",
    "spawn_await",
];
/// Extra benches, only run when named explicitly (see README).
const EXTRA: &[&str] = &["spawn_many_local_task", "spawn_await_task"];

/// --backend none|epoll, sched-bench-tokio's own option.
struct Backend(String);

impl Extra for Backend {
    fn set(&mut self, key: &str, val: &str) -> bool {
        if key != "--backend" {
            return false;
        }
        self.0 = val.to_string();
        true
    }

    fn check(&self) -> Result<(), String> {
        match self.0.as_str() {
            "none" | "epoll" => Ok(()),
            _ => Err("--backend must be none or epoll".to_string()),
        }
    }
}

/// One runtime per process, reused by every bench and iteration.
/// Tokio's bench uses `.enable_all()`; `--backend none` leaves the I/O and
/// time drivers out (workers park on a condvar), `--backend epoll` is
/// exactly Tokio's builder (one parked worker sits in epoll_wait).
fn rt(workers: usize, backend: &str) -> Runtime {
    let mut b = runtime::Builder::new_multi_thread();
    b.worker_threads(workers);
    if backend == "epoll" {
        b.enable_all();
    }
    b.build().unwrap()
}

// ---------------------------------------------------------------------------
// Bench bodies. Each constructor does the once-per-bench setup that Tokio
// does outside `b.iter(..)` and returns the closure Tokio passes to it.

/// Tokio: rt_multi_spawn_many_local. Spawns from inside `block_on`.
/// NB: the block_on thread is not a worker, so in Tokio 1.24 these spawns
/// go through the shared inject queue (see README).
fn spawn_many_local(rt: &Runtime) -> impl FnMut() + '_ {
    let (tx, rx) = mpsc::sync_channel(1000);
    let rem = Arc::new(AtomicUsize::new(0));

    move || {
        rem.store(NUM_SPAWN, Relaxed);

        rt.block_on(async {
            for _ in 0..NUM_SPAWN {
                let tx = tx.clone();
                let rem = rem.clone();

                tokio::spawn(async move {
                    if 1 == rem.fetch_sub(1, Relaxed) {
                        tx.send(()).unwrap();
                    }
                });
            }

            rx.recv().unwrap();
        });
    }
}

/// Extra (not in Tokio): spawn_many_local, but the 10,000 spawns are done by
/// a task running on a worker, so they hit that worker's local queue.
fn spawn_many_local_task(rt: &Runtime) -> impl FnMut() + '_ {
    let (tx, rx) = mpsc::sync_channel(1000);
    let rem = Arc::new(AtomicUsize::new(0));

    move || {
        rem.store(NUM_SPAWN, Relaxed);
        let tx = tx.clone();
        let rem = rem.clone();

        rt.spawn(async move {
            for _ in 0..NUM_SPAWN {
                let tx = tx.clone();
                let rem = rem.clone();

                tokio::spawn(async move {
                    if 1 == rem.fetch_sub(1, Relaxed) {
                        tx.send(()).unwrap();
                    }
                });
            }
        });

        rx.recv().unwrap();
    }
}

/// Tokio: rt_multi_spawn_many_remote_idle. Spawns from the main thread via
/// the runtime handle, then awaits every JoinHandle inside block_on.
fn spawn_many_remote(rt: &Runtime) -> impl FnMut() + '_ {
    let mut handles = Vec::with_capacity(NUM_SPAWN);

    move || {
        for _ in 0..NUM_SPAWN {
            handles.push(rt.spawn(async {}));
        }

        rt.block_on(async {
            for handle in handles.drain(..) {
                handle.await.unwrap();
            }
        });
    }
}

/// Tokio: rt_multi_yield_many.
fn yield_many(rt: &Runtime) -> impl FnMut() + '_ {
    let (tx, rx) = mpsc::sync_channel(YIELD_TASKS);

    move || {
        for _ in 0..YIELD_TASKS {
            let tx = tx.clone();

            rt.spawn(async move {
                for _ in 0..NUM_YIELD {
                    tokio::task::yield_now().await;
                }

                tx.send(()).unwrap();
            });
        }

        for _ in 0..YIELD_TASKS {
            rx.recv().unwrap();
        }
    }
}

/// Tokio: rt_multi_ping_pong.
fn ping_pong(rt: &Runtime) -> impl FnMut() + '_ {
    let (done_tx, done_rx) = mpsc::sync_channel(1000);
    let rem = Arc::new(AtomicUsize::new(0));

    move || {
        let done_tx = done_tx.clone();
        let rem = rem.clone();
        rem.store(NUM_PINGS, Relaxed);

        rt.block_on(async {
            tokio::spawn(async move {
                for _ in 0..NUM_PINGS {
                    let rem = rem.clone();
                    let done_tx = done_tx.clone();

                    tokio::spawn(async move {
                        let (tx1, rx1) = oneshot::channel();
                        let (tx2, rx2) = oneshot::channel();

                        tokio::spawn(async move {
                            rx1.await.unwrap();
                            tx2.send(()).unwrap();
                        });

                        tx1.send(()).unwrap();
                        rx2.await.unwrap();

                        if 1 == rem.fetch_sub(1, Relaxed) {
                            done_tx.send(()).unwrap();
                        }
                    });
                }
            });

            done_rx.recv().unwrap();
        });
    }
}

/// Tokio: rt_multi_chained_spawn.
fn chained_spawn(rt: &Runtime) -> impl FnMut() + '_ {
    fn iter(done_tx: mpsc::SyncSender<()>, n: usize) {
        if n == 0 {
            done_tx.send(()).unwrap();
        } else {
            tokio::spawn(async move {
                iter(done_tx, n - 1);
            });
        }
    }

    let (done_tx, done_rx) = mpsc::sync_channel(1000);

    move || {
        let done_tx = done_tx.clone();

        rt.block_on(async {
            tokio::spawn(async move {
                iter(done_tx, CHAIN_LEN);
            });

            done_rx.recv().unwrap();
        });
    }
}

/// Ours (not in Tokio): from inside one task (block_on, like
/// spawn_many_local) spawn 10,000 tasks, then await each JoinHandle in
/// spawn order.
async fn spawn_await_body() {
    let mut handles = Vec::with_capacity(NUM_SPAWN);
    for i in 0..NUM_SPAWN {
        handles.push(tokio::spawn(async move { i }));
    }
    let mut sum = 0usize;
    for handle in handles {
        sum += handle.await.unwrap();
    }
    assert_eq!(sum, NUM_SPAWN * (NUM_SPAWN - 1) / 2);
}

fn spawn_await(rt: &Runtime) -> impl FnMut() + '_ {
    move || rt.block_on(spawn_await_body())
}

/// Extra: spawn_await with the spawning/awaiting task running on a worker.
fn spawn_await_task(rt: &Runtime) -> impl FnMut() + '_ {
    move || {
        rt.block_on(async {
            tokio::spawn(spawn_await_body()).await.unwrap();
        })
    }
}

// ---------------------------------------------------------------------------

fn measure(opts: &Opts, f: &mut dyn FnMut()) -> Vec<u64> {
    for _ in 0..opts.warmup {
        f();
    }
    let mut samples = Vec::with_capacity(opts.iters);
    for _ in 0..opts.iters {
        let t0 = Instant::now();
        f();
        samples.push(t0.elapsed().as_nanos() as u64);
    }
    samples
}

fn main() {
    let usage = format!(
        "usage: sched-bench-tokio [--workers N] [--iters K] [--warmup W] \
         [--bench NAME|all] [--backend none|epoll]\n  benches: {} (all), {} (extra)\n  \
         defaults: --workers 2 --iters 15 --warmup 3 --bench all --backend none",
        ALL.join(" "),
        EXTRA.join(" ")
    );
    let names = [ALL, EXTRA].concat();
    let program = Program {
        cli: Cli { name: "sched-bench-tokio", usage: &usage },
        dialect: Dialect::Sched,
        benches: &names,
        named_only: EXTRA,
        workers: 2,
    };
    let mut backend = Backend("none".to_string());
    let opts = parse_args_with(&program, &mut backend);
    let backend = backend.0;
    let rt = rt(opts.workers, &backend);

    for name in opts.benches.iter().map(|&i| names[i]) {
        let (ops, mut samples) = match name {
            "spawn_many_local" => (NUM_SPAWN, measure(&opts, &mut spawn_many_local(&rt))),
            "spawn_many_local_task" => {
                (NUM_SPAWN, measure(&opts, &mut spawn_many_local_task(&rt)))
            }
            "spawn_many_remote" => (NUM_SPAWN, measure(&opts, &mut spawn_many_remote(&rt))),
            "yield_many" => (YIELD_TASKS * NUM_YIELD, measure(&opts, &mut yield_many(&rt))),
            "ping_pong" => (NUM_PINGS, measure(&opts, &mut ping_pong(&rt))),
            "chained_spawn" => (CHAIN_LEN, measure(&opts, &mut chained_spawn(&rt))),
            "spawn_await" => (NUM_SPAWN, measure(&opts, &mut spawn_await(&rt))),
            "spawn_await_task" => (NUM_SPAWN, measure(&opts, &mut spawn_await_task(&rt))),
            _ => unreachable!(),
        };
        samples.sort_unstable();
        let med = median(&samples);
        println!(
            "{{\"runtime\":\"tokio\",\"bench\":\"{}\",\"workers\":{},\"backend\":\"{}\",\
             \"ops\":{},\"iters\":{},\"median_ns\":{},\"min_ns\":{},\"ns_per_op\":{:.2}}}",
            name,
            opts.workers,
            backend,
            ops,
            opts.iters,
            med,
            samples[0],
            med as f64 / ops as f64
        );
    }
}
