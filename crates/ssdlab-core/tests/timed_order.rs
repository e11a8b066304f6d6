//! Timed mode orders a request's dependent operations as the FTL issues them (docs/config.md,
//! "Timed mode"): worked by hand at queue depth 1 on an idle device, so every latency is a sum
//! of operation times. Command C = 3 µs, read R = 50, transfer T = 10, program P = 500 on
//! 2 channels × 2 dies: a read on an idle die and channel takes C + R + T = 63 µs, a program
//! C + T + P = 513. A block's page p lies on channel p mod 2, so two consecutive pages of a
//! block are on different channels and dies.

use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config};
use std::collections::BTreeMap;

const READ: f64 = 3.0 + 50.0 + 10.0;
const PROGRAM: f64 = 3.0 + 10.0 + 500.0;

/// A filled 8 MiB device of 4 KiB pages without a buffer, replaying `rows` (op, byte offset,
/// bytes) one at a time; `ftl` adds to the configuration.
fn replay(name: &str, rows: &[(&str, u64, u64)], ftl: &str) -> BTreeMap<String, f64> {
    let dir = std::env::temp_dir().join(format!("ssdlab-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.csv"));
    let text: String = rows
        .iter()
        .enumerate()
        .map(|(i, (op, off, len))| format!("{},h,0,{op},{off},{len},1\n", 1000 + i))
        .collect();
    std::fs::write(&p, text).unwrap();
    let cfg = format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\nformat = \"msr\"\n\
         [device]\nlogical_bytes = \"8MiB\"\npages_per_block = 64\nop = 0.5\n\
         channels = 2\nchips_per_channel = 2\n{ftl}\
         [nand]\nread_us = 50\nprogram_us = 500\nerase_us = 1000\ncommand_us = 3\n\
         transfer_us = 10\ndram_us = 0\n[buffer]\nkind = \"none\"\n\
         [run]\nmode = \"timed\"\nqueue_depth = 1\nprecondition = \"fill\"\n",
        p.display()
    );
    let r = simulate(&Config::from_toml_str(&cfg).unwrap(), &mut NoProgress)
        .unwrap_or_else(|e| panic!("{e}"));
    r.metrics
}

fn close(m: &BTreeMap<String, f64>, k: &str, v: f64) {
    assert!((m[k] - v).abs() < 1e-9, "{k} = {} (expected {v})", m[k]);
}

/// DFTL caching whole translation pages, one at a time (E = 1,024 entries: TP 0 maps LPNs
/// 0..1023, TP 1 the rest). The fill leaves TP 0 on flash and TP 1 cached dirty. Then:
/// 1. read LPN 0: a miss; TP 1 is written back (513), TP 0 read into its slot after it (63),
///    the data read after that (63): 639;
/// 2. read LPN 0 again: a hit, one read: 63;
/// 3. read LPNs 0 and 1 (one request): two hits, independent, on two channels at once: 63;
/// 4. read LPN 1500: a miss with a clean victim: the map read, then the data read: 126.
#[test]
fn dftl_read_miss_is_map_read_then_data_read() {
    let m = replay(
        "dftl",
        &[
            ("Read", 0, 4096),
            ("Read", 0, 4096),
            ("Read", 0, 8192),
            ("Read", 1500 * 4096, 4096),
        ],
        "[ftl]\nkind = \"dftl\"\n[ftl.dftl]\ngranularity = \"page\"\ncmt_entries = 1024\n",
    );
    let lat = [PROGRAM + 2.0 * READ, READ, READ, 2.0 * READ];
    assert_eq!((lat[0], lat[3]), (639.0, 126.0));
    close(&m, "ftl.cmt.misses", 2.0);
    close(&m, "ftl.cmt.hits", 3.0);
    close(&m, "ftl.cmt.dirty_evictions", 1.0);
    close(&m, "nand.reads.map", 2.0);
    close(&m, "latency.read.max_us", lat[0]);
    close(&m, "latency.read.mean_us", lat.iter().sum::<f64>() / 4.0);
    // The full map in DRAM (the page FTL): every request one read, the pair of pages at once.
    let m = replay(
        "page",
        &[
            ("Read", 0, 4096),
            ("Read", 0, 8192),
            ("Read", 1500 * 4096, 4096),
        ],
        "",
    );
    close(&m, "latency.read.max_us", READ);
    close(&m, "latency.read.mean_us", READ);
}

/// A partial-page write reads the page's old copy and programs the merged page after it:
/// 63 + 513; a whole page is programmed at once: 513.
#[test]
fn read_modify_write_reads_before_it_programs() {
    let m = replay("rmw", &[("Write", 0, 2048), ("Write", 4096, 4096)], "");
    close(&m, "nand.reads.rmw", 1.0);
    close(&m, "latency.write.max_us", READ + PROGRAM);
    close(
        &m,
        "latency.write.mean_us",
        (READ + PROGRAM + PROGRAM) / 2.0,
    );
}
