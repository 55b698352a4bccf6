//! The command line of every program of the Tokio peer, and statistics of
//! sorted samples.  `Cli::options` is the option loop all four walk
//! (echo-server-tokio uses it alone, for its own options); `parse_args`
//! builds on it the options of a program that runs a list of named
//! benchmarks (sched-, sync- and blocking-bench-tokio), as the C side's
//! experiments/workloads/bench_util.c does for its benches.
//!
//! Each program includes this file as a module of its own and uses part of
//! it; what one of them leaves unused is not dead code.
#![allow(dead_code)]

use std::process::exit;

/// A program's name (what its messages start with) and its usage text.
pub struct Cli<'a> {
    pub name: &'a str,
    pub usage: &'a str,
}

impl Cli<'_> {
    /// The usage on stderr, then exit with `code`.
    pub fn usage(&self, code: i32) -> ! {
        eprintln!("{}", self.usage);
        exit(code)
    }

    /// "NAME: MSG" and the usage on stderr, exit 2.
    pub fn fail(&self, msg: &str) -> ! {
        eprintln!("{}: {}", self.name, msg);
        self.usage(2)
    }

    /// Walks the command line.  `-h`/`--help` prints the usage and exits 0;
    /// `--list`, if `list` is given, prints those names one a line and exits
    /// 0.  Any other argument is an option, `--key=value` or `--key value`:
    /// `set(key, Some(value))`, or `set(key, None)` when the value is missing
    /// (no `=` and nothing after it).  `set` returns false for a key that is
    /// not an option of the program: "unknown option KEY", usage, exit 2.
    pub fn options(&self, list: Option<&[&str]>, mut set: impl FnMut(&str, Option<&str>) -> bool) {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            if a == "-h" || a == "--help" {
                self.usage(0);
            }
            if let (Some(names), "--list") = (list, a) {
                for n in names {
                    println!("{}", n);
                }
                exit(0);
            }
            let (key, val) = match a.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => {
                    i += 1;
                    (a, args.get(i).map(String::as_str))
                }
            };
            if !set(key, val) {
                self.fail(&format!("unknown option {}", key));
            }
            i += 1;
        }
    }
}

pub struct Opts {
    pub workers: usize,
    pub iters: usize,
    pub warmup: usize,
    pub ops: usize, // 0: each bench's default
    /// Indexes into `Program::benches`, in the order they run.
    pub benches: Vec<usize>,
}

/// What a benchmark program's command line takes besides --workers N,
/// --iters K, --warmup W and --bench NAME|all|A,B, and how it reads --bench.
pub enum Dialect {
    /// The C side's bench_parse_args (sync-bench, blocking-bench): --ops N
    /// and --list too; --bench runs the benchmarks it names in the program's
    /// order, each once; an unknown one is "no such benchmark (try --list)".
    BenchUtil,
    /// sched-bench-go's (and so sched-bench-tokio's): no --ops, no --list;
    /// --bench runs them in the order named, repeats included, "all" where it
    /// stands; an unknown one is an "unknown bench".
    Sched,
}

/// A benchmark program: its name and usage, its benchmarks, its defaults.
pub struct Program<'a> {
    pub cli: Cli<'a>,
    pub dialect: Dialect,
    /// Every benchmark, in the order "all" (the default) runs them.
    pub benches: &'a [&'a str],
    /// Those of `benches` that "all" leaves out: they run only when named.
    pub named_only: &'a [&'a str],
    pub workers: usize,
}

impl<'a> Program<'a> {
    /// A program in the BenchUtil dialect whose "all" runs every benchmark.
    pub fn new(cli: Cli<'a>, benches: &'a [&'a str], workers: usize) -> Self {
        Program { cli, dialect: Dialect::BenchUtil, benches, named_only: &[], workers }
    }
}

/// A program's own options, besides the ones `parse_args` knows.
pub trait Extra {
    /// Takes option `key`'s value; false if `key` is not one of them.
    fn set(&mut self, key: &str, val: &str) -> bool;
    /// Once every option is read and the shared ones are checked (before
    /// --bench's names): what is wrong with the program's own, if anything.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// No options of its own.
impl Extra for () {
    fn set(&mut self, _: &str, _: &str) -> bool {
        false
    }
}

/// parse_args_with() for a program without options of its own.
pub fn parse_args(p: &Program) -> Opts {
    parse_args_with(p, &mut ())
}

/// Parses --workers N --iters K --warmup W --bench NAME|all|A,B, what
/// p.dialect adds, `extra`'s options and --help (`--opt=value` works too);
/// defaults: p.workers workers, 15 iterations after 3 warm-ups, "all".
/// Exits 2 on a bad option.
pub fn parse_args_with(p: &Program, extra: &mut impl Extra) -> Opts {
    let mut o = Opts { workers: p.workers, iters: 15, warmup: 3, ops: 0, benches: Vec::new() };
    let mut bench = "all".to_string();
    let bench_util = matches!(p.dialect, Dialect::BenchUtil);
    p.cli.options(if bench_util { Some(p.benches) } else { None }, |key, val| {
        let val = match val {
            Some(v) => v,
            None => p.cli.fail(&format!("missing value for {}", key)),
        };
        let num = |v: &str| -> usize {
            v.parse()
                .unwrap_or_else(|_| p.cli.fail(&format!("bad number for {}: {}", key, v)))
        };
        match key {
            "--workers" => o.workers = num(val),
            "--iters" => o.iters = num(val),
            "--warmup" => o.warmup = num(val),
            "--ops" if bench_util => o.ops = num(val),
            "--bench" => bench = val.to_string(),
            _ => return extra.set(key, val),
        }
        true
    });
    if o.workers == 0 || o.iters == 0 {
        p.cli.fail("--workers and --iters must be >= 1");
    }
    if let Err(msg) = extra.check() {
        p.cli.fail(&msg);
    }
    o.benches = select(p, &bench);
    o
}

/// The benchmarks --bench `bench` runs, as p.dialect reads it.
fn select(p: &Program, bench: &str) -> Vec<usize> {
    let index = |name: &str| p.benches.iter().position(|b| *b == name);
    let in_all = |i: &usize| !p.named_only.contains(&p.benches[*i]);
    let names: Vec<&str> = bench.split(',').collect();
    let mut run = Vec::new();
    match p.dialect {
        Dialect::BenchUtil => {
            for n in &names {
                if *n != "all" && index(n).is_none() {
                    p.cli.fail(&format!("--bench {}: no such benchmark (try --list)", n));
                }
            }
            for i in 0..p.benches.len() {
                if names.iter().any(|n| (*n == "all" && in_all(&i)) || *n == p.benches[i]) {
                    run.push(i);
                }
            }
        }
        Dialect::Sched => {
            for n in names {
                if n == "all" {
                    run.extend((0..p.benches.len()).filter(in_all));
                } else if let Some(i) = index(n) {
                    run.push(i);
                } else {
                    p.cli.fail(&format!("unknown bench {}", n));
                }
            }
        }
    }
    run
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

/// The nearest-rank quantile of sorted samples (as the C side's bench_quantile).
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
