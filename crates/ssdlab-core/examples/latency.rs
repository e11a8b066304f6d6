//! Random-access latency of this machine's memory at several working-set sizes, for `make bench`:
//! a pointer chase through one 64-byte line per step, in a random cyclic order over a table of
//! the given size (each load needs the one before, so the time per step is the latency). The
//! page FTL's tables of the bench scenario hold 17 MiB; its buffer index about 1 MiB.
//!
//! `cargo run --release --example latency -- [MiB ...]` prints one JSON object, MiB → ns per load.

use std::time::Instant;

const LINE_WORDS: usize = 8; // 64-byte lines of u64

fn chase_ns(mib: usize) -> f64 {
    let lines = (mib << 20) / 64;
    // A random cyclic order of the lines (xorshift-driven Fisher–Yates; fixed seed).
    let mut order: Vec<usize> = (0..lines).collect();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in (1..lines).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let mut next = vec![0u64; lines * LINE_WORDS];
    for k in 0..lines {
        next[order[k] * LINE_WORDS] = (order[(k + 1) % lines] * LINE_WORDS) as u64;
    }
    let mut p = 0usize;
    for _ in 0..lines {
        p = next[p] as usize; // warm the caches and TLB
    }
    let steps = 10_000_000;
    let t = Instant::now();
    for _ in 0..steps {
        p = next[p] as usize;
    }
    let ns = t.elapsed().as_nanos() as f64 / steps as f64;
    std::hint::black_box(p);
    ns
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes in MiB"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1, 4, 16, 64]
    } else {
        sizes
    };
    let fields: Vec<String> = sizes
        .iter()
        .map(|&m| format!("\"{m}\": {:.1}", chase_ns(m)))
        .collect();
    println!("{{{}}}", fields.join(", "));
}
