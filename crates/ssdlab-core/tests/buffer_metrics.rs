//! Buffer metrics every policy reports through the engine, checked against what a small trace
//! implies: `buffer.occupancy.mean` (pages buffered after each write request, averaged), write
//! hits apart from writes to pages cached clean for a read (`buffer.clean_write_hit_pages`), and
//! the invariant that a buffer holding every page it is given hits on every write but the first
//! of each page, whatever its policy.

use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config};
use std::collections::BTreeMap;
use std::collections::BTreeSet;

/// A request of the test trace: (write, first page, pages).
type Req = (bool, u64, u64);

/// `count` requests over `pages` pages, one or two pages each, about a third of them reads
/// (a fixed linear congruential stream).
fn requests(pages: u64, count: usize) -> Vec<Req> {
    let mut x: u64 = 12345;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    (0..count)
        .map(|_| {
            let write = next() % 3 != 0;
            let first = next() % pages;
            let n = if first + 1 < pages && next() % 4 == 0 {
                2
            } else {
                1
            };
            (write, first, n)
        })
        .collect()
}

/// The requests as a UMass/SPC trace file (LBA in sectors, sizes in bytes, time in seconds).
fn write_trace(reqs: &[Req], name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "ssdlab-buffer-metrics-{}-{name}.spc",
        std::process::id()
    ));
    let mut text = String::new();
    for (i, &(w, first, n)) in reqs.iter().enumerate() {
        let op = if w { "w" } else { "r" };
        text += &format!("0,{},{},{op},{}.0\n", first * 8, n * 4096, i);
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn run(path: &std::path::Path, buffer: &str, extra: &str) -> BTreeMap<String, f64> {
    let text = format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\nformat = \"umass\"\n\
         [device]\nlogical_bytes = \"8MiB\"\npages_per_block = 16\nop = 0.25\n\
         [buffer]\nkind = \"{buffer}\"\nbytes = \"1MiB\"\n{extra}\
         [run]\ncheck_integrity = true\n",
        path.display()
    );
    let c = Config::from_toml_str(&text).unwrap();
    simulate(&c, &mut NoProgress)
        .unwrap_or_else(|e| panic!("{buffer}: {e}"))
        .metrics
}

/// What the trace implies for a buffer that never evicts: distinct pages written, write hits
/// (re-writes), first writes of pages read before (clean hits where reads are cached), and the
/// mean over write requests of the pages held after each (`cache_reads`: read pages too).
struct Expect {
    distinct: f64,
    hits: f64,
    clean_hits: f64,
    occupancy: f64,
    occupancy_reads: f64,
}

fn expect(reqs: &[Req]) -> Expect {
    let (mut written, mut read) = (BTreeSet::new(), BTreeSet::new());
    let (mut hits, mut clean_hits) = (0u64, 0u64);
    let (mut occ, mut occ_reads, mut writes) = (0u64, 0u64, 0u64);
    for &(w, first, n) in reqs {
        for p in first..first + n {
            if !w {
                read.insert(p);
            } else if !written.insert(p) {
                hits += 1;
            } else if read.contains(&p) {
                clean_hits += 1;
            }
        }
        if w {
            writes += 1;
            occ += written.len() as u64;
            occ_reads += written.union(&read).count() as u64;
        }
    }
    Expect {
        distinct: written.len() as f64,
        hits: hits as f64,
        clean_hits: clean_hits as f64,
        occupancy: occ as f64 / writes as f64,
        occupancy_reads: occ_reads as f64 / writes as f64,
    }
}

/// Every write-buffer policy the hwb study compares, with a 256-page buffer over a 250-page
/// footprint: nothing is evicted, so each has LRU's write hit ratio, 1 − distinct / written
/// (computed from the trace), programs each distinct page once (at the final flush), and holds
/// on average the pages written so far (and read so far, where reads are cached). A write to a
/// page cached clean for a read is counted apart, not as a write hit.
#[test]
fn a_buffer_that_holds_everything_hits_as_lru_does() {
    let reqs = requests(250, 600);
    let path = write_trace(&reqs, "all");
    let e = expect(&reqs);
    assert!(
        e.clean_hits > 40.0 && e.hits > 200.0,
        "a trace that tests something: {} clean, {} hits",
        e.clean_hits,
        e.hits
    );
    let runs = [
        ("lru", "", false),
        ("lru-wsr", "[buffer.lru-wsr]\ncache_reads = false\n", false),
        ("lru-wsr", "[buffer.lru-wsr]\ncache_reads = true\n", true),
        ("cflru", "[buffer.cflru]\ncache_reads = false\n", false),
        ("cflru", "[buffer.cflru]\ncache_reads = true\n", true),
        ("bpac", "", false),
        ("hwb", "", false),
    ];
    for (kind, extra, cache_reads) in runs {
        let m = run(&path, kind, extra);
        let what = format!("{kind} {extra}");
        let written = m["host.write_pages"];
        assert_eq!(m["buffer.write_hit_pages"], e.hits, "{what}");
        assert_eq!(
            m["buffer.page_hit_ratio"],
            1.0 - e.distinct / written,
            "{what}"
        );
        assert_eq!(m["nand.programs.host"], e.distinct, "{what}");
        let (clean, occ) = if cache_reads {
            (e.clean_hits, e.occupancy_reads)
        } else {
            (0.0, e.occupancy)
        };
        assert_eq!(m["buffer.clean_write_hit_pages"], clean, "{what}");
        assert!(
            (m["buffer.occupancy.mean"] - occ).abs() < 1e-9,
            "{what}: {} != {occ}",
            m["buffer.occupancy.mean"]
        );
    }
    // HWB's old rule flushes from its cold region (86 pages) while the buffer has room.
    let m = run(&path, "hwb", "[buffer.hwb]\nevict_when = \"region_full\"\n");
    assert!(m["buffer.write_hit_pages"] < e.hits);
    assert!(m["buffer.occupancy.mean"] < e.occupancy);
    // No buffer holds nothing.
    let m = run(&path, "none", "");
    assert_eq!(
        (m["buffer.occupancy.mean"], m["buffer.write_hit_pages"]),
        (0.0, 0.0)
    );
    std::fs::remove_file(path).ok();
}

/// LRU with a buffer smaller than the footprint holds exactly its capacity once it has filled:
/// the mean over write requests is (Σ of the pages held while filling + capacity × the rest) /
/// write requests, from the trace.
#[test]
fn lru_occupancy_once_full() {
    let reqs = requests(1024, 3000);
    let path = write_trace(&reqs, "lru");
    let cap = 256u64;
    let mut held = BTreeSet::new();
    let (mut sum, mut writes) = (0u64, 0u64);
    for &(w, first, n) in &reqs {
        if w {
            held.extend(first..first + n);
            sum += (held.len() as u64).min(cap);
            writes += 1;
        }
    }
    // Held pages are the distinct pages written until the buffer first fills; LRU never drops
    // below its capacity after that.
    let m = run(&path, "lru", "");
    assert!(held.len() as u64 > cap);
    assert!((m["buffer.occupancy.mean"] - sum as f64 / writes as f64).abs() < 1e-9);
    std::fs::remove_file(path).ok();
}
