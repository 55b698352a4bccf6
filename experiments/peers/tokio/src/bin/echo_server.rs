//! echo-server-tokio: the Tokio peer of blitz's echo-bench server.
//!
//! A multi-thread runtime (`--workers N`, default 2) serves TCP echo:
//! accept in the `block_on` task, one spawned task per connection that
//! reads up to 16 KB and writes all of it back, with TCP_NODELAY, exactly
//! what echo-bench's blitz server does.  The address goes to stdout (one
//! line), then it serves until SIGINT or SIGTERM (their default action:
//! the package has no `signal` feature, and needs none).
//!
//! Only the package's features (`rt-multi-thread`, `net`, `time`): reads and writes use
//! `try_read` / `try_write` with `readable()` / `writable()`, which is what
//! `AsyncReadExt::read` / `AsyncWriteExt::write_all` do underneath (tokio's
//! `io-util` is not enabled in this package).
//!
//! Usage: echo-server-tokio [--workers N] [--listen ADDR]   (default 127.0.0.1:0)

use std::io::{self, Write};
use std::net::SocketAddr;
use std::process::exit;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::runtime;

const BUF: usize = 16384;

#[path = "../bench_args.rs"]
mod bench_args;
use bench_args::Cli;

fn bad(opt: &str, val: &str, expected: &str) -> ! {
    eprintln!("echo-server-tokio: {opt} {val}: expected {expected}");
    exit(2)
}

fn parse_args() -> (usize, SocketAddr) {
    let cli = Cli {
        name: "echo-server-tokio",
        usage: "usage: echo-server-tokio [--workers N] [--listen ADDR]\n  \
                defaults: --workers 2 --listen 127.0.0.1:0",
    };
    let mut workers = 2;
    let mut listen: SocketAddr = "127.0.0.1:0".parse().unwrap();
    cli.options(None, |key, val| {
        let val = match (key, val) {
            (_, Some(val)) => val,
            ("--workers" | "--listen", None) => {
                eprintln!("echo-server-tokio: {key} needs a value");
                exit(2)
            }
            (_, None) => return false,
        };
        match key {
            "--workers" => {
                workers = match val.parse::<usize>() {
                    Ok(n) if (1..=1024).contains(&n) => n,
                    _ => bad("--workers", val, "a number from 1 to 1024"),
                }
            }
            "--listen" => {
                listen = match val.parse() {
                    Ok(a) => a,
                    Err(_) => bad("--listen", val, "IP:PORT"),
                }
            }
            _ => return false,
        }
        true
    });
    (workers, listen)
}

/// Write all of `buf`: try first, wait for writability only when the
/// socket buffer is full.
async fn write_all(s: &TcpStream, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match s.try_write(buf) {
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => s.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Echo until end of stream or an error.
async fn echo(s: TcpStream) -> io::Result<()> {
    let mut buf = vec![0u8; BUF];
    loop {
        match s.try_read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => write_all(&s, &buf[..n]).await?,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => s.readable().await?,
            Err(e) => return Err(e),
        }
    }
}

fn main() {
    let (workers, listen) = parse_args();
    let rt = runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("echo-server-tokio: runtime: {e}");
            exit(1)
        });
    rt.block_on(async move {
        let l = TcpListener::bind(listen).await.unwrap_or_else(|e| {
            eprintln!("echo-server-tokio: {listen}: {e}");
            exit(1)
        });
        let addr = l.local_addr().expect("local_addr");
        println!("{addr}");
        io::stdout().flush().ok();
        eprintln!("echo-server-tokio: serving on {addr} ({workers} workers)");
        loop {
            match l.accept().await {
                Ok((s, _)) => {
                    s.set_nodelay(true).ok();
                    tokio::spawn(async move {
                        let _ = echo(s).await;
                    });
                }
                // EMFILE and the like: back off 1 ms, as blitz's server does.
                Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
            }
        }
    });
}
