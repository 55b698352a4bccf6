//! What sync-bench-tokio and blocking-bench-tokio share (as their C sides
//! share experiments/workloads/bench_util.c): the options of a program that
//! runs a list of named benchmarks, and statistics of sorted samples.

use std::process::exit;

pub struct Opts {
    pub workers: usize,
    pub iters: usize,
    pub warmup: usize,
    pub ops: usize, // 0: each bench's default
    pub benches: Vec<usize>,
}

/// The program's usage line and defaults, and its benchmarks' names.
pub struct Program<'a> {
    pub name: &'a str,
    pub usage: &'a str,
    pub benches: &'a [&'a str],
    pub workers: usize,
}

fn usage(p: &Program, code: i32) -> ! {
    eprintln!("{}", p.usage);
    exit(code)
}

/// Parses --workers N --iters K --warmup W --ops N --bench NAME|all|A,B
/// --list --help (`--opt=value` works too); defaults: p.workers workers,
/// 15 iterations after 3 warm-ups, every bench.  Exits 2 on a bad option.
pub fn parse_args(p: &Program) -> Opts {
    let mut o = Opts { workers: p.workers, iters: 15, warmup: 3, ops: 0, benches: Vec::new() };
    let mut bench = "all".to_string();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-h" || a == "--help" {
            usage(p, 0);
        }
        if a == "--list" {
            for b in p.benches {
                println!("{}", b);
            }
            exit(0);
        }
        let (key, val) = match a.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => {
                i += 1;
                match args.get(i) {
                    Some(v) => (a.clone(), v.clone()),
                    None => {
                        eprintln!("{}: missing value for {}", p.name, a);
                        usage(p, 2)
                    }
                }
            }
        };
        let num = |v: &str| -> usize {
            v.parse().unwrap_or_else(|_| {
                eprintln!("{}: bad number for {}: {}", p.name, key, v);
                usage(p, 2)
            })
        };
        match key.as_str() {
            "--workers" => o.workers = num(&val),
            "--iters" => o.iters = num(&val),
            "--warmup" => o.warmup = num(&val),
            "--ops" => o.ops = num(&val),
            "--bench" => bench = val,
            _ => {
                eprintln!("{}: unknown option {}", p.name, key);
                usage(p, 2)
            }
        }
        i += 1;
    }
    if o.workers == 0 || o.iters == 0 {
        eprintln!("{}: --workers and --iters must be >= 1", p.name);
        usage(p, 2);
    }
    let names: Vec<&str> = bench.split(',').collect();
    for n in &names {
        if *n != "all" && !p.benches.contains(n) {
            eprintln!("{}: --bench {}: no such benchmark (try --list)", p.name, n);
            usage(p, 2);
        }
    }
    for (i, b) in p.benches.iter().enumerate() {
        if names.iter().any(|n| *n == "all" || n == b) {
            o.benches.push(i);
        }
    }
    o
}

/// The median of sorted samples; of an even count, the mean of the two
/// middle ones (as the C side's bench_median).
pub fn median(sorted: &[u64]) -> u64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
}
