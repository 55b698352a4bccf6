//! sched-bench-tokio: the scheduler benches of Tokio's
//! `benches/rt_multi_threaded.rs`, with Tokio's parameters, re-hosted in a
//! plain binary (no criterion/bencher) so that blitz can be compared against
//! them with the same driver and the same JSON output.
//!
//! Every bench body below follows Tokio's bench code, but for
//! fanout_tree, burst_wake and pipeline, which are blitz's own (its
//! sched-bench has them too); see `experiments/peers/README.md` for the
//! mapping and the deviations.
//!
//! Usage: sched-bench-tokio [--workers N] [--iters K] [--warmup W]
//!                          [--bench NAME|all|NAME,NAME..] [--backend none|epoll]
//! Prints one JSON line per bench.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering::{AcqRel, Relaxed};
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use tokio::runtime::{self, Runtime};
use tokio::sync::{mpsc as tmpsc, oneshot};

mod bench_args;
use bench_args::{median, parse_args_with, quantile, Cli, Dialect, Extra, Opts, Program};

const NUM_SPAWN: usize = 10_000; // spawn_many_*, spawn_await
const NUM_YIELD: usize = 1_000; // yield_many: yields per task
const YIELD_TASKS: usize = 200; // yield_many: tasks
const NUM_PINGS: usize = 1_000; // ping_pong
const CHAIN_LEN: usize = 1_000; // chained_spawn
const FANOUT: usize = 4; // fanout_tree: children per task
const FANOUT_DEPTH: usize = 7; // fanout_tree: levels below the root
const FANOUT_TASKS: usize = 21_845; // fanout_tree: (4^8 - 1) / 3
const BURST_TASKS: usize = 100; // burst_wake: spawns per burst
const BURSTS: usize = 10; // burst_wake: bursts per iteration
const BURST_GAP: Duration = Duration::from_micros(1000); // idle before each burst
const PIPE_STAGES: usize = 4; // pipeline: tasks, source and sink included
const PIPE_ITEMS: usize = 10_000;
const PIPE_CAPACITY: usize = 16;

/// Benches run by `--bench all`, in this order.
const ALL: &[&str] = &[
    "spawn_many_local",
    "spawn_many_remote",
    "yield_many",
    "ping_pong",
    "chained_spawn",
    "spawn_await",
    "fanout_tree",
    "burst_wake",
    "pipeline",
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

/// Ours: each task spawns FANOUT children and awaits them in spawn order,
/// FANOUT_DEPTH levels below a root that block_on spawns (so that every
/// node runs on a worker); each returns the tasks in its subtree.
fn node(depth: usize) -> Pin<Box<dyn Future<Output = usize> + Send>> {
    Box::pin(async move {
        let mut count = 1;
        if depth > 0 {
            let mut handles = Vec::with_capacity(FANOUT);
            for _ in 0..FANOUT {
                handles.push(tokio::spawn(node(depth - 1)));
            }
            for h in handles {
                count += h.await.unwrap();
            }
        }
        count
    })
}

fn fanout_tree(rt: &Runtime) -> impl FnMut() + '_ {
    move || {
        let n = rt.block_on(async { tokio::spawn(node(FANOUT_DEPTH)).await.unwrap() });
        assert_eq!(n, FANOUT_TASKS);
    }
}

/// Ours: BURSTS times, let the runtime go idle (a 1 ms sleep, not timed),
/// then spawn BURST_TASKS tasks from the main thread and wait for all of
/// them (a sync_channel from the last). Each task's wait from its spawn
/// to its first poll is a latency sample; the time is the bursts' alone.
fn burst_wake(rt: &Runtime) -> impl FnMut(&mut Vec<u64>) -> u64 + '_ {
    let (tx, rx) = mpsc::sync_channel(1);
    let wait: Arc<Vec<AtomicU64>> = Arc::new((0..BURST_TASKS).map(|_| AtomicU64::new(0)).collect());
    let left = Arc::new(AtomicUsize::new(0));

    move |lat: &mut Vec<u64>| {
        let mut total = 0;
        for _ in 0..BURSTS {
            std::thread::sleep(BURST_GAP);
            left.store(BURST_TASKS, Relaxed);
            let start = Instant::now();
            for i in 0..BURST_TASKS {
                let (tx, wait, left) = (tx.clone(), wait.clone(), left.clone());
                let spawned = Instant::now();
                rt.spawn(async move {
                    wait[i].store(spawned.elapsed().as_nanos() as u64, Relaxed);
                    // AcqRel: the last one's send follows every task's sample.
                    if left.fetch_sub(1, AcqRel) == 1 {
                        tx.send(()).unwrap();
                    }
                });
            }
            rx.recv().unwrap();
            total += start.elapsed().as_nanos() as u64;
            lat.extend(wait.iter().map(|w| w.load(Relaxed)));
        }
        total
    }
}

/// Ours: PIPE_STAGES tasks in a chain joined by bounded channels of
/// PIPE_CAPACITY; the source sends PIPE_ITEMS numbers through the relays
/// to the sink, which sums them. A root task spawns the stages (sink
/// first) and awaits the sink.
async fn pipeline_body() -> u64 {
    let (tx, mut rx) = tmpsc::channel::<u64>(PIPE_CAPACITY);
    let sink = tokio::spawn(async move {
        let mut sum = 0;
        while let Some(v) = rx.recv().await {
            sum += v;
        }
        sum
    });
    let mut next = tx;
    for _ in 0..PIPE_STAGES - 2 {
        let (tx, mut rx) = tmpsc::channel::<u64>(PIPE_CAPACITY);
        let out = next;
        tokio::spawn(async move {
            while let Some(v) = rx.recv().await {
                out.send(v).await.unwrap();
            }
        });
        next = tx;
    }
    tokio::spawn(async move {
        for i in 0..PIPE_ITEMS as u64 {
            next.send(i).await.unwrap();
        }
    });
    sink.await.unwrap()
}

fn pipeline(rt: &Runtime) -> impl FnMut() + '_ {
    move || {
        let sum = rt.block_on(async { tokio::spawn(pipeline_body()).await.unwrap() });
        assert_eq!(sum, (PIPE_ITEMS * (PIPE_ITEMS - 1) / 2) as u64);
    }
}

// ---------------------------------------------------------------------------

fn measure(opts: &Opts, f: &mut dyn FnMut()) -> Vec<u64> {
    let mut timed = |_: &mut Vec<u64>| {
        let t0 = Instant::now();
        f();
        t0.elapsed().as_nanos() as u64
    };
    measure_timed(opts, &mut timed).0
}

/// A bench that times itself and samples latencies: the iterations'
/// times, and the latency samples of the measured iterations.
fn measure_timed(opts: &Opts, f: &mut dyn FnMut(&mut Vec<u64>) -> u64) -> (Vec<u64>, Vec<u64>) {
    let mut lat = Vec::new();
    for _ in 0..opts.warmup {
        f(&mut lat);
    }
    lat.clear();
    let samples = (0..opts.iters).map(|_| f(&mut lat)).collect();
    (samples, lat)
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
        let mut lat = Vec::new();
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
            "fanout_tree" => (FANOUT_TASKS, measure(&opts, &mut fanout_tree(&rt))),
            "burst_wake" => {
                let (samples, l) = measure_timed(&opts, &mut burst_wake(&rt));
                lat = l;
                (BURSTS * BURST_TASKS, samples)
            }
            "pipeline" => (PIPE_ITEMS, measure(&opts, &mut pipeline(&rt))),
            _ => unreachable!(),
        };
        samples.sort_unstable();
        let med = median(&samples);
        // burst_wake: spawn to first poll over every measured task, nearest rank.
        lat.sort_unstable();
        let extra = if lat.is_empty() {
            String::new()
        } else {
            format!(",\"p50_ns\":{},\"p99_ns\":{}", quantile(&lat, 0.50), quantile(&lat, 0.99))
        };
        println!(
            "{{\"runtime\":\"tokio\",\"bench\":\"{}\",\"workers\":{},\"backend\":\"{}\",\
             \"ops\":{},\"iters\":{},\"median_ns\":{},\"min_ns\":{},\"ns_per_op\":{:.2}{}}}",
            name,
            opts.workers,
            backend,
            ops,
            opts.iters,
            med,
            samples[0],
            med as f64 / ops as f64,
            extra
        );
    }
}
