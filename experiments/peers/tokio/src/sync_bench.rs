//! sync-bench-tokio: the Tokio side of blitz's sync-bench
//! (experiments/workloads/sync_bench.c): the 18 benchmarks blitz-io compares
//! with Tokio, on tokio::sync, with the same names, parameters and JSON
//! (docs/design.md's bench JSON plus `allocs_per_op`).
//!
//! Usage: sync-bench-tokio [--workers N] [--iters K] [--warmup W] [--ops N]
//!                         [--bench NAME|all|NAME,NAME..] [--list]
//!
//! Only the operations are timed; an iteration's setup (creating and filling
//! a channel, ...) and teardown (drops) are not.  Allocations are counted by
//! a counting #[global_allocator] (alloc, alloc_zeroed and realloc count one
//! each, as the C side counts malloc, calloc and realloc).
//!
//! Tokio has no MPMC channel: channel_mpmc_4p4c shares one bounded
//! `mpsc::Receiver` between the 4 consumers behind an `Arc<tokio::sync::Mutex>`
//! (a consumer holds the lock across its `recv().await`), the usual way to
//! get MPMC out of tokio::sync.

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::Future;
#[cfg(std_black_box)]
use std::hint::black_box;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Instant;

/// Before Rust 1.66 (Debian 12's rustc is 1.63) std has no black_box: a
/// volatile read of the value keeps the optimiser from seeing through it,
/// as std's does (build.rs sets std_black_box where std has one).
#[cfg(not(std_black_box))]
fn black_box<T>(x: T) -> T {
    // SAFETY: reads x once and forgets the original, so exactly one copy lives on.
    unsafe {
        let y = std::ptr::read_volatile(&x);
        std::mem::forget(x);
        y
    }
}

use tokio::runtime::{self, Runtime};

mod bench_args;
use bench_args::{median, parse_args, Cli, Opts, Program};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::sync::{Barrier, Mutex, Notify, OnceCell, RwLock, Semaphore};

// ---------------------------------------------------------------------------
// Allocation counting

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed); // a statistic: read after the tasks joined
        System.alloc(l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        System.alloc_zeroed(l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        System.realloc(p, l, size)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

// ---------------------------------------------------------------------------
// Options

const MPMC_CAPACITY: usize = 1000; // blitz rounds its ring up to 1024
const BCAST_CAPACITY: usize = 16;

/// name, default ops, runs tasks on the runtime
const BENCHES: &[(&str, usize, bool)] = &[
    ("mutex_try_lock", 1_000_000, false),
    ("rwlock_try_read", 1_000_000, false),
    ("rwlock_try_write", 1_000_000, false),
    ("semaphore_try_acquire", 1_000_000, false),
    ("oncecell_get", 1_000_000, false),
    ("oncecell_set", 1_000_000, false),
    ("channel_try_send", 100_000, false),
    ("channel_try_recv", 100_000, false),
    ("channel_roundtrip", 100_000, false),
    ("oneshot_create_send_recv", 100_000, false),
    ("broadcast_send_recv4", 100_000, false),
    ("watch_send_borrow", 100_000, false),
    ("channel_mpmc_4p4c", 10_000, true),
    ("mutex_contended_4t", 10_000, true),
    ("rwlock_contended_4r2w", 10_000, true),
    ("semaphore_contended_8t2p", 10_000, true),
    ("barrier_4t", 10_000, true),
    ("notify_ping_pong", 10_000, true),
];

// ---------------------------------------------------------------------------
// Measurement

/// Runs `setup` (untimed), `run` (timed) and drops the state (untimed),
/// warmup + iters times.  Returns the sorted run times and the allocations
/// made by the timed runs.
fn measure<S>(
    opts: &Opts,
    mut setup: impl FnMut() -> S,
    mut run: impl FnMut(&mut S),
) -> (Vec<u64>, usize) {
    let mut samples = Vec::with_capacity(opts.iters);
    let mut allocs = 0;
    for i in 0..opts.warmup + opts.iters {
        let mut s = setup();
        let a0 = ALLOCS.load(Relaxed);
        let t0 = Instant::now();
        run(&mut s);
        let t = t0.elapsed().as_nanos() as u64;
        let a = ALLOCS.load(Relaxed) - a0;
        drop(s);
        if i >= opts.warmup {
            samples.push(t);
            allocs += a;
        }
    }
    samples.sort_unstable();
    (samples, allocs)
}

/// Task `i`'s part when `ops` are split over `n` tasks.
fn share(ops: usize, n: usize, i: usize) -> usize {
    ops / n + usize::from(i < ops % n)
}

/// Spawns the futures from inside `block_on` and awaits every JoinHandle.
fn run_group<F>(rt: &Runtime, tasks: Vec<F>)
where
    F: Future<Output = ()> + Send + 'static,
{
    rt.block_on(async move {
        let handles: Vec<_> = tasks.into_iter().map(tokio::spawn).collect();
        for h in handles {
            h.await.unwrap();
        }
    });
}

// ---------------------------------------------------------------------------
// Single thread, try_ operations

fn mutex_try_lock(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || Mutex::new(0u64), |m| {
        for _ in 0..ops {
            drop(black_box(m.try_lock().unwrap()));
        }
    })
}

fn rwlock_try_read(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || RwLock::new(0u64), |l| {
        for _ in 0..ops {
            drop(black_box(l.try_read().unwrap()));
        }
    })
}

fn rwlock_try_write(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || RwLock::new(0u64), |l| {
        for _ in 0..ops {
            drop(black_box(l.try_write().unwrap()));
        }
    })
}

fn semaphore_try_acquire(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || Semaphore::new(10), |s| {
        for _ in 0..ops {
            drop(black_box(s.try_acquire().unwrap()));
        }
    })
}

fn oncecell_get(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(
        o,
        || OnceCell::new_with(Some(42u64)),
        |c| {
            let mut sum = 0u64;
            for _ in 0..ops {
                sum += *black_box(&*c).get().unwrap();
            }
            black_box(sum);
        },
    )
}

fn oncecell_set(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || (), |_| {
        for i in 0..ops {
            let c = OnceCell::new();
            c.set(i as u64).unwrap();
            black_box(&c);
        }
    })
}

// ---------------------------------------------------------------------------
// Single thread, channels

fn channel_try_send(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || mpsc::channel::<u64>(ops), |(tx, _rx)| {
        for i in 0..ops as u64 {
            tx.try_send(i).unwrap();
        }
    })
}

fn channel_try_recv(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(
        o,
        || {
            let (tx, rx) = mpsc::channel::<u64>(ops);
            for i in 0..ops as u64 {
                tx.try_send(i).unwrap();
            }
            (tx, rx)
        },
        |(_tx, rx)| {
            let mut sum = 0u64;
            for _ in 0..ops {
                sum += rx.try_recv().unwrap();
            }
            black_box(sum);
        },
    )
}

fn channel_roundtrip(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || mpsc::channel::<u64>(1024), |(tx, rx)| {
        let mut sum = 0u64;
        for i in 0..ops as u64 {
            tx.try_send(i).unwrap();
            sum += rx.try_recv().unwrap();
        }
        black_box(sum);
    })
}

fn oneshot_create_send_recv(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || (), |_| {
        let mut sum = 0u64;
        for i in 0..ops as u64 {
            let (tx, mut rx) = oneshot::channel::<u64>();
            tx.send(i).unwrap();
            sum += rx.try_recv().unwrap();
        }
        black_box(sum);
    })
}

fn broadcast_send_recv4(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(
        o,
        || {
            let (tx, rx0) = broadcast::channel::<u64>(BCAST_CAPACITY);
            let rxs = vec![rx0, tx.subscribe(), tx.subscribe(), tx.subscribe()];
            (tx, rxs)
        },
        |(tx, rxs)| {
            let mut sum = 0u64;
            for i in 0..ops as u64 {
                tx.send(i).unwrap();
                for rx in rxs.iter_mut() {
                    sum += rx.try_recv().unwrap();
                }
            }
            black_box(sum);
        },
    )
}

fn watch_send_borrow(o: &Opts, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || watch::channel(0u64), |(tx, rx)| {
        let mut sum = 0u64;
        for i in 0..ops as u64 {
            tx.send(i).unwrap();
            sum += *rx.borrow();
        }
        black_box(sum);
    })
}

// ---------------------------------------------------------------------------
// Tasks on the runtime

type MpmcState = (Option<mpsc::Sender<u64>>, Arc<Mutex<mpsc::Receiver<u64>>>);

fn channel_mpmc_4p4c(o: &Opts, rt: &Runtime, ops: usize) -> (Vec<u64>, usize) {
    measure(
        o,
        || -> MpmcState {
            let (tx, rx) = mpsc::channel::<u64>(MPMC_CAPACITY);
            (Some(tx), Arc::new(Mutex::new(rx)))
        },
        |(tx, rx)| {
            let tx = tx.take().unwrap();
            let received = Arc::new(AtomicUsize::new(0));
            let mut tasks: Vec<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>> = Vec::new();
            for i in 0..4 {
                let tx = tx.clone();
                let n = share(ops, 4, i);
                tasks.push(Box::pin(async move {
                    for v in 0..n as u64 {
                        tx.send(v).await.unwrap();
                    }
                }));
            }
            drop(tx); // the channel closes when the last producer is done
            for _ in 0..4 {
                let rx = rx.clone();
                let received = received.clone();
                tasks.push(Box::pin(async move {
                    let mut n = 0;
                    while rx.lock().await.recv().await.is_some() {
                        n += 1;
                    }
                    received.fetch_add(n, Relaxed);
                }));
            }
            run_group(rt, tasks);
            assert_eq!(received.load(Relaxed), ops);
        },
    )
}

fn mutex_contended_4t(o: &Opts, rt: &Runtime, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || Arc::new(Mutex::new(0u64)), |m| {
        let tasks: Vec<_> = (0..4)
            .map(|i| {
                let m = m.clone();
                let n = share(ops, 4, i);
                async move {
                    for _ in 0..n {
                        *m.lock().await += 1;
                    }
                }
            })
            .collect();
        run_group(rt, tasks);
        assert_eq!(*m.try_lock().unwrap(), ops as u64);
    })
}

fn rwlock_contended_4r2w(o: &Opts, rt: &Runtime, ops: usize) -> (Vec<u64>, usize) {
    let writes = ops / 5;
    let reads = ops - writes;
    measure(o, || Arc::new(RwLock::new(0u64)), |l| {
        let tasks: Vec<_> = (0..6)
            .map(|i| {
                let l = l.clone();
                let write = i >= 4;
                let n = if write { share(writes, 2, i - 4) } else { share(reads, 4, i) };
                async move {
                    for _ in 0..n {
                        if write {
                            *l.write().await += 1;
                        } else {
                            black_box(*l.read().await);
                        }
                    }
                }
            })
            .collect();
        run_group(rt, tasks);
        assert_eq!(*l.try_read().unwrap(), writes as u64);
    })
}

fn semaphore_contended_8t2p(o: &Opts, rt: &Runtime, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || Arc::new(Semaphore::new(2)), |s| {
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let s = s.clone();
                let n = share(ops, 8, i);
                async move {
                    for _ in 0..n {
                        drop(s.acquire().await.unwrap());
                    }
                }
            })
            .collect();
        run_group(rt, tasks);
        assert_eq!(s.available_permits(), 2);
    })
}

fn barrier_4t(o: &Opts, rt: &Runtime, ops: usize) -> (Vec<u64>, usize) {
    measure(o, || Arc::new(Barrier::new(4)), |b| {
        let leaders = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let b = b.clone();
                let leaders = leaders.clone();
                async move {
                    let mut led = 0;
                    for _ in 0..ops {
                        led += usize::from(b.wait().await.is_leader());
                    }
                    leaders.fetch_add(led, Relaxed);
                }
            })
            .collect();
        run_group(rt, tasks);
        assert_eq!(leaders.load(Relaxed), ops);
    })
}

fn notify_ping_pong(o: &Opts, rt: &Runtime, ops: usize) -> (Vec<u64>, usize) {
    measure(
        o,
        || (Arc::new(Notify::new()), Arc::new(Notify::new())),
        |(ping, pong)| {
            let tasks: Vec<_> = (0..2)
                .map(|i| {
                    let (ping, pong) = (ping.clone(), pong.clone());
                    async move {
                        for _ in 0..ops {
                            if i == 0 {
                                ping.notify_one();
                                pong.notified().await;
                            } else {
                                ping.notified().await;
                                pong.notify_one();
                            }
                        }
                    }
                })
                .collect();
            run_group(rt, tasks);
        },
    )
}

// ---------------------------------------------------------------------------

fn run_one(name: &str, o: &Opts, rt: Option<&Runtime>, ops: usize) -> (Vec<u64>, usize) {
    match name {
        "mutex_try_lock" => mutex_try_lock(o, ops),
        "rwlock_try_read" => rwlock_try_read(o, ops),
        "rwlock_try_write" => rwlock_try_write(o, ops),
        "semaphore_try_acquire" => semaphore_try_acquire(o, ops),
        "oncecell_get" => oncecell_get(o, ops),
        "oncecell_set" => oncecell_set(o, ops),
        "channel_try_send" => channel_try_send(o, ops),
        "channel_try_recv" => channel_try_recv(o, ops),
        "channel_roundtrip" => channel_roundtrip(o, ops),
        "oneshot_create_send_recv" => oneshot_create_send_recv(o, ops),
        "broadcast_send_recv4" => broadcast_send_recv4(o, ops),
        "watch_send_borrow" => watch_send_borrow(o, ops),
        "channel_mpmc_4p4c" => channel_mpmc_4p4c(o, rt.unwrap(), ops),
        "mutex_contended_4t" => mutex_contended_4t(o, rt.unwrap(), ops),
        "rwlock_contended_4r2w" => rwlock_contended_4r2w(o, rt.unwrap(), ops),
        "semaphore_contended_8t2p" => semaphore_contended_8t2p(o, rt.unwrap(), ops),
        "barrier_4t" => barrier_4t(o, rt.unwrap(), ops),
        "notify_ping_pong" => notify_ping_pong(o, rt.unwrap(), ops),
        _ => unreachable!(),
    }
}

fn main() {
    let names: Vec<&str> = BENCHES.iter().map(|b| b.0).collect();
    let cli = Cli {
        name: "sync-bench-tokio",
        usage: "usage: sync-bench-tokio [--workers N] [--iters K] [--warmup W] [--ops N] \
                [--bench NAME|all|A,B] [--list]\n  defaults: --workers 4 --iters 15 --warmup 3 --bench all",
    };
    let opts = parse_args(&Program::new(cli, &names, 4));
    let mut rt: Option<Runtime> = None;

    for &b in &opts.benches {
        let (name, default_ops, tasks) = BENCHES[b];
        let ops = if opts.ops > 0 { opts.ops } else { default_ops };
        if tasks && rt.is_none() {
            // No I/O or time driver, as sched-bench-tokio's default
            // (--backend none); the workers park on a condvar.
            let mut builder = runtime::Builder::new_multi_thread();
            builder.worker_threads(opts.workers);
            rt = Some(builder.build().unwrap());
        }
        let (samples, allocs) = run_one(name, &opts, rt.as_ref(), ops);
        let med = median(&samples);
        println!(
            "{{\"runtime\":\"tokio\",\"bench\":\"{}\",\"workers\":{},\"backend\":\"none\",\
             \"ops\":{},\"iters\":{},\"median_ns\":{},\"min_ns\":{},\"ns_per_op\":{:.2},\
             \"allocs_per_op\":{:.4}}}",
            name,
            if tasks { opts.workers } else { 1 },
            ops,
            opts.iters,
            med,
            samples[0],
            med as f64 / ops as f64,
            allocs as f64 / (ops * opts.iters) as f64
        );
    }
}
