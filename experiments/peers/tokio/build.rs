//! Sets the cfg `std_black_box` where the compiler's std has
//! `std::hint::black_box` (stable since Rust 1.66); src/sync_bench.rs has a
//! fallback for older compilers, such as Debian 12's rustc 1.63.
use std::process::Command;

fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    // "rustc 1.63.0 (4b91a6ea7 2022-08-08)"
    text.split_whitespace().nth(1)?.split('.').nth(1)?.parse().ok()
}

fn main() {
    let minor = rustc_minor().unwrap_or(0);
    if minor >= 80 {
        println!("cargo:rustc-check-cfg=cfg(std_black_box)");
    }
    if minor >= 66 {
        println!("cargo:rustc-cfg=std_black_box");
    }
}
