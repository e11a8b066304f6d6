//! The demand-based FTL through the engine: the CMT's hit ratio under uniform random access
//! against the independent reference model (LRU over C of N equally likely units hits with
//! probability C/N, independently of the past, once full), one translation-page read per read
//! miss on a clean cache, integrity through GC for both granularities, and timed mode (FIFO)
//! reporting every count of counts mode.

use ssdlab_core::engine::{NoProgress, RunResult};
use ssdlab_core::{simulate, Config};

mod common;

/// A 64 MiB device of 4 KiB pages (N = 16,384 LPNs, E = 1,024 entries per translation page:
/// 16 TPs; 2 × 2 dies for timed mode), filled first, then 20,000 warm-up and `requests`
/// measured uniform random 4 KiB requests.
fn run(read_fraction: f64, requests: u64, dftl: &str, extra: &str) -> RunResult {
    let cfg = format!(
        "[workload]\nkind = \"uniform\"\nrequests = {}\nfootprint_bytes = \"64MiB\"\n\
         read_fraction = {read_fraction}\nseed = 11\n\
         [device]\nlogical_bytes = \"64MiB\"\npages_per_block = 64\nop = 0.15\n\
         channels = 2\nchips_per_channel = 2\n\
         [ftl]\nkind = \"dftl\"\n[ftl.dftl]\n{dftl}\n\
         [buffer]\nkind = \"none\"\n\
         [run]\nprecondition = \"fill\"\nwarmup_requests = 20000\n{extra}",
        requests + 20_000
    );
    simulate(&Config::from_toml_str(&cfg).unwrap(), &mut NoProgress)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// |measured − p| within 4 standard errors of n independent Bernoulli(p) trials.
fn within(measured: f64, p: f64, n: f64, what: &str) {
    let se = (p * (1.0 - p) / n).sqrt();
    assert!(
        (measured - p).abs() < 4.0 * se,
        "{what}: {measured} vs {p} (4 s.e. = {})",
        4.0 * se
    );
}

#[test]
fn entry_cmt_hit_ratio_is_c_over_n() {
    for (c, reads) in [(2048u64, 1.0), (8192, 1.0), (4096, 0.5)] {
        let r = run(reads, 200_000, &format!("cmt_entries = {c}"), "");
        let m = |k: &str| r.metrics[k];
        let n = m("ftl.cmt.hits") + m("ftl.cmt.misses");
        assert_eq!(n, 200_000.0);
        within(
            m("ftl.cmt.hit_ratio"),
            c as f64 / 16384.0,
            n,
            &format!("C = {c}, reads {reads}"),
        );
    }
}

#[test]
fn page_cmt_hit_ratio_is_t_e_over_n() {
    // 4 TPs of 1,024 entries cached out of 16.
    let r = run(
        0.7,
        200_000,
        "granularity = \"page\"\ncmt_entries = 4096",
        "",
    );
    let n = r.metrics["ftl.cmt.hits"] + r.metrics["ftl.cmt.misses"];
    within(
        r.metrics["ftl.cmt.hit_ratio"],
        4.0 * 1024.0 / 16384.0,
        n,
        "page granularity",
    );
}

/// On a clean cache (reads only, after a bulk fill that wrote every translation page) every miss
/// reads exactly one translation page and nothing is written back.
#[test]
fn one_map_read_per_read_miss() {
    for g in ["entry", "page"] {
        let r = run(
            1.0,
            100_000,
            &format!("granularity = \"{g}\"\ncmt_fraction = 0.1"),
            "",
        );
        let m = |k: &str| r.metrics[k];
        assert!(m("ftl.cmt.misses") > 50_000.0, "{g}");
        assert_eq!(m("nand.reads.map"), m("ftl.cmt.misses"), "{g}");
        assert_eq!(m("nand.programs.map"), 0.0, "{g}");
        assert_eq!(m("ftl.cmt.read_evict_writes"), 0.0, "{g}");
        assert_eq!(m("nand.reads.host"), 100_000.0, "{g}");
    }
}

/// Mixed traffic with GC and integrity checking (versions of every LPN, valid counts, the CMT's
/// own structure, every translation-page write carrying all its dirty cached entries) for both
/// granularities; timed mode on 2 × 2 dies reports every count. 64-byte entries (E = 64: 256
/// translation pages), so that a GC victim's map update does not write every page of the map.
#[test]
fn integrity_and_timed_counts() {
    for g in ["entry", "page"] {
        let dftl = format!("granularity = \"{g}\"\ncmt_fraction = 0.2\nentry_bytes = 64");
        let counts = run(0.4, 60_000, &dftl, "check_integrity = true\n").metrics;
        assert!(
            counts["gc.victims"] > 100.0 && counts["ftl.cmt.gc_tp_updates"] > 0.0,
            "{g}"
        );
        assert!(counts["ftl.cmt.read_evict_writes"] > 0.0, "{g}");
        let timed = run(
            0.4,
            60_000,
            &dftl,
            "check_integrity = true\nmode = \"timed\"\nqueue_depth = 8\n",
        )
        .metrics;
        common::assert_counts_same_timed(&counts, &timed, g);
        assert!(timed["latency.read.mean_us"] > 0.0);
    }
}

/// PTSD's partitioned CMT (seed 004): over a whole mixed run with GC, a read never writes a
/// translation page, while the unpartitioned CMT of the same memory does; both dirty caches keep
/// integrity, and timed mode reports every count (E = 64, as above).
#[test]
fn partitioned_reads_never_write() {
    let base = "granularity = \"page\"\ncmt_fraction = 0.25\nentry_bytes = 64\n";
    let dftl = run(0.5, 60_000, base, "").metrics;
    assert!(dftl["ftl.cmt.read_evict_writes"] > 1000.0);
    for dirty in ["page", "entry"] {
        let cfg = format!("{base}partition = \"fixed\"\ndirty_cache = \"{dirty}\"\n");
        let counts = run(0.5, 60_000, &cfg, "check_integrity = true\n").metrics;
        assert_eq!(counts["ftl.cmt.read_evict_writes"], 0.0, "{dirty}");
        // Dirty entries leave by dirty evictions or with GC's map updates (batch update); under
        // this much GC an entry-level dirty region is emptied by GC before it fills.
        assert!(counts["ftl.cmt.batched_entries"] > 1000.0, "{dirty}");
        if dirty == "page" {
            assert!(counts["ftl.cmt.dirty_evictions"] > 100.0);
        }
        assert!(
            counts["nand.programs.map"] > 0.0 && counts["gc.victims"] > 0.0,
            "{dirty}"
        );
        let timed = run(
            0.5,
            60_000,
            &cfg,
            "check_integrity = true\nmode = \"timed\"\nqueue_depth = 16\n",
        )
        .metrics;
        common::assert_counts_same_timed(&counts, &timed, dirty);
    }
}
