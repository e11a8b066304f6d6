//! Sequential read-ahead into the controller's DRAM (`[readahead]`), against hand-worked
//! results: a stream's reads become DRAM hits once its window is ahead (timed and counts), random
//! reads detect no stream, a write or a flush drops a page read ahead, and bad keys are named.

use std::collections::BTreeMap;

mod common;
use common::{error, run};

/// A filled 64 MiB device of 64 dies (8 channels × 8 chips), 64 pages per block, so that any 64
/// consecutive logical pages lie on 64 different dies; reads of 50 µs, 2 µs per page in DRAM,
/// no command or transfer time, no write buffer; QD 1. `workload` and `extra` add sections.
fn device(workload: &str, extra: &str) -> String {
    format!(
        "{workload}[device]\nlogical_bytes = \"64MiB\"\npages_per_block = 64\nchannels = 8\n\
         chips_per_channel = 8\n[nand]\nread_us = 50\ndram_us = 2\ncommand_us = 0\n\
         transfer_us = 0\n[buffer]\nkind = \"none\"\n\
         [run]\nmode = \"timed\"\nprecondition = \"fill\"\nqueue_depth = 1\n{extra}"
    )
}

/// `requests` sequential reads of `bytes` each (fio `rw = "read"`) from offset 0.
fn sequential(requests: u64, bytes: u64) -> String {
    format!(
        "[workload]\nkind = \"fio\"\nrequests = {requests}\nrequest_bytes = {bytes}\n\
         footprint_bytes = \"64MiB\"\n[workload.fio]\nrw = \"read\"\n"
    )
}

/// QD 1 sequential 4 KiB reads. Off: every read is a flash read, 50 µs. With `pages = 32`,
/// `trigger = 2`: read 1 (page 0) starts a stream and read 2 (page 1) makes it one; both are
/// flash reads (50 µs). Read 2, issued at 50, reads ahead pages 2..=33 from 50, each on its own
/// die (page 1's read is on a die of its own too): all in DRAM at 100, when read 2 completes.
/// Read 3 (page 2) is issued at 100 and served from DRAM: 2 µs; it tops the window up with page
/// 34 (in DRAM at 150). Read k ≥ 3 is issued at 100 + 2(k − 3) and its page, read ahead by read
/// k − 32 (or read 2), has been in DRAM since 2k + 80 at the latest: every read from the third
/// takes exactly `dram_us` = 2 µs. Mean over N reads: (2·50 + (N − 2)·2) / N.
#[test]
fn sequential_reads_become_dram_hits_once_the_window_is_ahead() {
    let n = 2000u64;
    let off = run(&device(&sequential(n, 4096), ""));
    assert_eq!(off.metrics["latency.read.mean_us"], 50.0);
    assert_eq!(off.metrics["latency.read.max_us"], 50.0);
    assert!(!off.metrics.contains_key("readahead.reads"));
    let on_toml = device(
        &sequential(n, 4096),
        "[readahead]\npages = 32\ntrigger = 2\n",
    );
    let on = run(&on_toml);
    let m = &on.metrics;
    let mean = (2.0 * 50.0 + (n - 2) as f64 * 2.0) / n as f64;
    assert_eq!(m["latency.read.mean_us"], mean);
    // The bound the mean meets for any N ≥ 2: DRAM time plus the two flash reads' excess.
    assert!(m["latency.read.mean_us"] <= 2.0 + 2.0 * 48.0 / n as f64);
    assert_eq!(m["latency.read.p50_us"], 2.0);
    assert_eq!(m["latency.read.p99_us"], 2.0);
    assert_eq!(m["latency.read.max_us"], 50.0);
    // Pages 2..=33, then one page per read from the third: 32 + (N − 2); two flash reads.
    assert_eq!(m["readahead.reads"], (32 + n - 2) as f64);
    assert_eq!(m["nand.reads.readahead"], (32 + n - 2) as f64);
    assert_eq!(m["readahead.hit_pages"], (n - 2) as f64);
    assert_eq!(m["nand.reads.host"], 2.0);
    assert_eq!(m["nand.reads.total"], (n + 32) as f64);
    assert_eq!(m["readahead.wasted_pages"], 0.0);
    // The clock on one thread places the same times; counts mode counts the same.
    let one = run(&on_toml.replace("[run]\nmode", "[run]\nclock_thread = false\nmode"));
    assert_eq!(one.metrics["time.clock_thread"], 0.0);
    assert_eq!(on.metrics["time.clock_thread"], 1.0);
    let timing = [
        "latency.read.mean_us",
        "latency.read.max_us",
        "time.simulated_us",
    ];
    common::assert_same_metrics(&one.metrics, m, &timing, "one thread");
    let counts = run(&on_toml.replace("mode = \"timed\"", "mode = \"counts\""));
    common::assert_counts_same_timed(&counts.metrics, m, "read-ahead");
}

/// A stream whose window has not caught up waits for its pages. One die: read 2 (issued at 50)
/// reads ahead pages 2..=5 on the die after its own read (50..100): 100..150, ..., 250..300.
/// Read 3 (page 2, issued at 100) waits for page 2 (150) and takes 150 + 2 − 100 = 52 µs; it
/// tops up page 6 (300..350). Read 4 (page 3, issued at 152) waits to 200: 50 µs; read 5 (202)
/// to 250: 50; read 6 (252) to 300: 50; read 7 (page 6, issued at 302) to 350: 50.
#[test]
fn a_read_waits_for_its_pages_read_ahead() {
    let toml = device(&sequential(7, 4096), "[readahead]\npages = 4\n")
        .replace("channels = 8\nchips_per_channel = 8\n", "");
    let m = run(&toml).metrics;
    let mean = (50.0 + 50.0 + 52.0 + 4.0 * 50.0) / 7.0;
    assert_eq!(m["latency.read.mean_us"], mean);
    assert_eq!(m["latency.read.max_us"], 52.0);
    assert_eq!(m["readahead.hit_pages"], 5.0);
}

/// Random reads form no stream: read-ahead on changes nothing (a 1 GiB device: no read of the
/// 2000 follows one of the 8 streams' last pages).
#[test]
fn random_reads_detect_no_stream() {
    let toml = device(
        "[workload]\nkind = \"uniform\"\nrequests = 2000\nread_fraction = 1.0\n\
         footprint_bytes = \"1GiB\"\n",
        "",
    )
    .replace("logical_bytes = \"64MiB\"", "logical_bytes = \"1GiB\"")
    .replace("queue_depth = 1", "queue_depth = 4");
    let off = run(&toml);
    let on = run(&(toml + "[readahead]\npages = 32\n"));
    assert_eq!(on.metrics["readahead.reads"], 0.0);
    assert_eq!(on.metrics["readahead.hit_pages"], 0.0);
    let same: Vec<&str> = off
        .metrics
        .keys()
        .filter(|k| k.starts_with("latency.read.") || k.starts_with("nand.reads."))
        .map(|k| k.as_str())
        .collect();
    assert!(same.len() > 10, "{same:?}");
    common::assert_same_metrics(&off.metrics, &on.metrics, &same, "random reads");
    assert_eq!(
        off.histograms["latency.read_ns"],
        on.histograms["latency.read_ns"]
    );
}

/// A trace of 4 KiB requests `(op, page)` on a filled 1 MiB device with read-ahead of 4 pages
/// (trigger 2), counts mode; `extra` adds keys.
fn trace(name: &str, rows: &[(&str, u64)], extra: &str) -> BTreeMap<String, f64> {
    let dir = std::env::temp_dir().join(format!("ssdlab-readahead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.csv"));
    let text: String = rows
        .iter()
        .enumerate()
        .map(|(i, (op, page))| format!("{},h,0,{op},{},4096,1\n", 1000 + i, page * 4096))
        .collect();
    std::fs::write(&p, text).unwrap();
    run(&format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\nformat = \"msr\"\n\
         [device]\nlogical_bytes = \"1MiB\"\npages_per_block = 16\nop = 0.5\n\
         [run]\nprecondition = \"fill\"\ncheck_integrity = true\n\
         [readahead]\npages = 4\ntrigger = 2\n{extra}",
        p.display()
    ))
    .metrics
}

/// R0 R1 W3 R2 R3 R4, no write buffer. R1 makes the stream and reads ahead pages 2..=5 (4
/// reads). W3 is programmed at once: page 3's copy is dropped unread (wasted). R2 hits and tops
/// the window up with page 6; R3 misses (a flash read) and adds page 7; R4 hits and adds 8.
/// Flash reads: R0, R1, R3; read-ahead 4 + 1 + 1 + 1 = 7.
#[test]
fn a_write_drops_a_page_read_ahead() {
    let rows = [
        ("Read", 0),
        ("Read", 1),
        ("Write", 3),
        ("Read", 2),
        ("Read", 3),
        ("Read", 4),
    ];
    let m = trace("write", &rows, "[buffer]\nkind = \"none\"\n");
    assert_eq!(m["readahead.wasted_pages"], 1.0);
    assert_eq!(m["readahead.hit_pages"], 2.0);
    assert_eq!(m["readahead.reads"], 7.0);
    assert_eq!(m["nand.reads.host"], 3.0);
    assert_eq!(m["nand.reads.total"], 10.0);
    assert_eq!(
        m["readahead.hit_pages"] + m["nand.reads.host"],
        m["host.read_pages"]
    );
}

/// W3 R0 R1 W9 R2 R3 through a one-page LRU buffer, integrity checked. R1 reads ahead pages
/// 2..=5 while page 3's new data waits in the buffer: the copy read ahead is the old one. W9
/// evicts page 3, whose program drops that copy (wasted). R2 hits (adds page 6); R3 misses the
/// buffer and the cache: a flash read of the new data (adds page 7). Serving the old copy would
/// fail the integrity check.
#[test]
fn programming_a_buffered_page_drops_its_copy_read_ahead() {
    let rows = [
        ("Write", 3),
        ("Read", 0),
        ("Read", 1),
        ("Write", 9),
        ("Read", 2),
        ("Read", 3),
    ];
    let m = trace(
        "flush",
        &rows,
        "[buffer]\nkind = \"lru\"\nbytes = \"4KiB\"\n",
    );
    assert_eq!(m["readahead.wasted_pages"], 1.0);
    assert_eq!(m["readahead.hit_pages"], 1.0);
    assert_eq!(m["buffer.read_hit_pages"], 0.0);
    assert_eq!(m["nand.reads.host"], 3.0);
    assert_eq!(m["readahead.reads"], 6.0);
}

/// Counts mode, N sequential 8 KiB reads (2 pages), read-ahead of P = 4 pages. Reads 1 and 2
/// (pages 0–3) are flash reads; read 2 reads ahead pages 4..=7; each later read hits its 2
/// pages and reads ahead 2 more. NAND reads: 4 + P + 2(N − 2) = 2N + P = host pages + P.
#[test]
fn counts_mode_reads_each_page_once_ahead() {
    let n = 100u64;
    let toml = |extra: &str| {
        device(
            &sequential(n, 8192),
            &format!("[readahead]\npages = 4\n{extra}"),
        )
        .replace("mode = \"timed\"", "mode = \"counts\"")
    };
    let m = run(&toml("")).metrics;
    assert_eq!(m["host.read_pages"], (2 * n) as f64);
    assert_eq!(m["nand.reads.host"], 4.0);
    assert_eq!(m["readahead.reads"], (4 + 2 * (n - 2)) as f64);
    assert_eq!(m["nand.reads.total"], (2 * n + 4) as f64);
    assert_eq!(m["readahead.hit_pages"], (2 * (n - 2)) as f64);
    assert_eq!(
        m["readahead.hit_pages"] + m["nand.reads.host"],
        m["host.read_pages"]
    );
    // The pages read ahead at the end are still cached: not wasted. A cache of one window
    // evicts only pages already read: the same counts.
    assert_eq!(m["readahead.wasted_pages"], 0.0);
    let small = run(&toml("cache_pages = 4\n")).metrics;
    common::assert_same_metrics(&m, &small, &["nand.reads.total", "readahead.hit_pages"], "");
    assert_eq!(small["readahead.wasted_pages"], 0.0);
    // Two streams interleaved through a one-window cache: each stream's fills evict pages the
    // other read ahead before it read them.
    let two = run(&toml("cache_pages = 4\n").replace(
        "[workload.fio]\nrw = \"read\"\n",
        "[workload.fio]\n[[workload.fio.jobs]]\nrw = \"read\"\nsize = \"50%\"\n\
         [[workload.fio.jobs]]\nrw = \"read\"\noffset = \"50%\"\nsize = \"50%\"\n",
    ))
    .metrics;
    assert!(two["readahead.wasted_pages"] > 0.0, "{two:?}");
    assert_eq!(
        two["readahead.hit_pages"] + two["nand.reads.host"],
        two["host.read_pages"]
    );
}

/// Every FTL, read-ahead on, a mix of sequential reads and writes: integrity checked, the
/// counts the same in timed mode (on several dies), and no host page read counted twice (a
/// buffer hit, a read-ahead hit, a flash read or unwritten; the line FTL serves pages still in
/// its write ring without a flash read).
#[test]
fn every_ftl_reads_ahead_consistently() {
    for ftl in ["page", "dftl", "block", "bast", "fast", "lines"] {
        let toml = format!(
            "[workload]\nkind = \"sequential\"\nrequests = 6000\nread_fraction = 0.6\nstreams = 3\n\
             footprint_bytes = \"8MiB\"\n[device]\nlogical_bytes = \"8MiB\"\npages_per_block = 32\n\
             op = 0.25\nchannels = 2\nchips_per_channel = 2\n[ftl]\nkind = \"{ftl}\"\n\
             [buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\n\
             [run]\nprecondition = \"fill\"\ncheck_integrity = true\n\
             [readahead]\npages = 8\nstreams = 4\n"
        );
        let counts = run(&toml).metrics;
        assert!(counts["readahead.hit_pages"] > 0.0, "{ftl}");
        let served = counts["readahead.hit_pages"]
            + counts["nand.reads.host"]
            + counts["buffer.read_hit_pages"]
            + counts["host.unwritten_read_pages"];
        assert!(served <= counts["host.read_pages"], "{ftl}");
        let timed = run(&toml.replace("[run]\n", "[run]\nmode = \"timed\"\n")).metrics;
        common::assert_counts_same_timed(&counts, &timed, ftl);
    }
}

/// Read-ahead under timed mode's other mechanisms (multi-plane dies, NAND pages of two units,
/// program suspension, a read-first host interface, several flows, a controller): every request
/// completes, the counts are counts mode's, and with the clock on its own thread the times are
/// the same as on one.
#[test]
fn read_ahead_meets_the_other_timed_mechanisms() {
    let base = "[workload]\nkind = \"sequential\"\nrequests = 4000\nread_fraction = 0.7\n\
                streams = 2\nfootprint_bytes = \"8MiB\"\n[device]\nlogical_bytes = \"8MiB\"\n\
                pages_per_block = 32\nop = 0.25\nchannels = 2\nchips_per_channel = 2\n\
                [buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\n[readahead]\npages = 8\n";
    let variants = [
        "[device]\nplanes_per_die = 2\n",
        "[nand]\nphysical_page_bytes = 8192\n",
        "[nand]\nsuspend = \"program\"\n",
        "[run]\nscheduler = \"read-priority\"\n",
        "[controller]\ncores = 2\ncommand_us = 3\n",
    ];
    for v in variants {
        // Merge the variant's keys into their sections.
        let mut toml =
            base.to_string() + "[run]\nprecondition = \"fill\"\ncheck_integrity = true\n";
        let (section, keys) = v.split_once('\n').unwrap();
        match toml.find(section) {
            Some(i) => toml.insert_str(i + section.len() + 1, keys),
            None => toml.push_str(v),
        }
        let counts = run(&toml).metrics;
        let timed_toml = toml.replace("[run]\n", "[run]\nmode = \"timed\"\n");
        let timed = run(&timed_toml);
        assert!(timed.metrics["readahead.hit_pages"] > 0.0, "{v}");
        let done: u64 = timed.histograms["latency.all_ns"]
            .iter()
            .map(|&(_, n)| n)
            .sum();
        assert_eq!(done, 4000, "{v}");
        if !v.contains("scheduler") {
            common::assert_counts_same_timed(&counts, &timed.metrics, v);
            let one = run(&timed_toml.replace("[run]\n", "[run]\nclock_thread = false\n"));
            let keys = [
                "latency.all.mean_us",
                "latency.read.max_us",
                "time.simulated_us",
            ];
            common::assert_same_metrics(&one.metrics, &timed.metrics, &keys, v);
        }
    }
    // Two flows reading sequentially, each in its own range: both streams read ahead.
    let flows = "[device]\nlogical_bytes = \"16MiB\"\npages_per_block = 32\nop = 0.25\n\
                 channels = 4\n[readahead]\npages = 16\n[run]\nmode = \"timed\"\nprecondition = \"fill\"\n";
    let flow = "[[flows]]\nqueue_depth = 2\n[flows.workload]\nkind = \"fio\"\nrequests = 1000\n\
                footprint_bytes = \"8MiB\"\n[flows.workload.fio]\nrw = \"read\"\n";
    let m = run(&format!("{flows}{flow}{flow}")).metrics;
    assert_eq!(m["host.read_pages"], 2000.0);
    assert!(
        m["readahead.hit_pages"] > 1900.0,
        "{}",
        m["readahead.hit_pages"]
    );
}

#[test]
fn bad_keys_are_named() {
    let base = device(&sequential(10, 4096), "");
    let e = error(&(base.clone() + "[readahead]\npages = 32\ntrigger = 0\n"));
    assert!(e.contains("readahead.trigger") && e.contains("≥ 1"), "{e}");
    let e = error(&(base.clone() + "[readahead]\npages = 32\nstreams = 0\n"));
    assert!(e.contains("readahead.streams"), "{e}");
    let e = error(&(base.clone() + "[readahead]\npages = 32\ncache_pages = 8\n"));
    assert!(
        e.contains("readahead.cache_pages") && e.contains("32"),
        "{e}"
    );
    let e = error(&(base.clone() + "[readahead]\npage = 32\n"));
    assert!(e.contains("readahead.page") && e.contains("pages"), "{e}");
    let e = error(&(base + "[readahead]\npages = 4294967295\nstreams = 4294967295\n"));
    assert!(
        e.contains("readahead.streams") && e.contains("cache_pages"),
        "{e}"
    );
}
