//! Timed mode's front end and background work, worked by hand: the open loop's cap
//! (`run.max_inflight`), the controller's cores and the host link (`[controller]`,
//! `host.link_mib_s`), the write buffer's background draining (`buffer.drain_*`); and counts
//! that stay counts mode's whenever draining is off.

use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config};
use std::collections::BTreeMap;

mod common;

type Metrics = BTreeMap<String, f64>;

/// An MSR trace of (µs, op, page) rows, 4 KiB each, in a fresh file.
fn trace(name: &str, rows: &[(u64, &str, u64)]) -> String {
    let dir = std::env::temp_dir().join(format!("ssdlab-front-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.csv"));
    let text: String = rows
        .iter()
        .map(|(us, op, page)| format!("{},h,0,{op},{},4096,1\n", 10 * us, page * 4096))
        .collect();
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A 1 MiB device of `dies` dies (channels): reads 50 µs, programs 200 µs, no bus or command
/// time, `dram_us` per page; `extra` adds whole sections.
fn run_dram(path: &str, dies: u32, dram_us: f64, extra: &str) -> Metrics {
    let text = format!(
        "[workload]\nkind = \"trace\"\npath = \"{path}\"\nformat = \"msr\"\n\
         [device]\nlogical_bytes = \"1MiB\"\npages_per_block = 16\nop = 0.5\nchannels = {dies}\n\
         [nand]\nread_us = 50\nprogram_us = 200\ncommand_us = 0\ntransfer_us = 0\n\
         dram_us = {dram_us}\n{extra}"
    );
    let c = Config::from_toml_str(&text).unwrap();
    simulate(&c, &mut NoProgress).unwrap().metrics
}

/// [`run_dram`] with 1 µs of DRAM time per page (the default).
fn run(path: &str, dies: u32, extra: &str) -> Metrics {
    run_dram(path, dies, 1.0, extra)
}

fn close(m: &Metrics, k: &str, v: f64) {
    assert!((m[k] - v).abs() < 1e-9, "{k} = {} (expected {v})", m[k]);
}

/// Three reads at t = 0 on two dies (pages 0 and 2 on die 0, page 1 on die 1), a fourth at
/// 1000 µs. No cap: R2 waits for R0's die, 50–100 (latency 100). `max_inflight = 2`: R2 is
/// issued when R0 completes, at 50, and reads 50–100 (latency 50); R3 arrives after everything
/// completed and is issued at its arrival. The same with a host-interface scheduler.
#[test]
fn max_inflight_issues_at_a_completion() {
    let p = trace(
        "cap",
        &[
            (0, "Read", 0),
            (0, "Read", 1),
            (0, "Read", 2),
            (1000, "Read", 3),
        ],
    );
    let base = "[buffer]\nkind = \"none\"\n[run]\nmode = \"timed\"\nqueue_depth = 0\n\
                precondition = \"fill\"\n";
    let open = run(&p, 2, base);
    close(&open, "latency.read.max_us", 100.0);
    close(&open, "latency.read.mean_us", 250.0 / 4.0);
    close(&open, "queue.max_outstanding", 3.0);
    for scheduler in ["fifo", "read-priority", "write-stop"] {
        let m = run(
            &p,
            2,
            &format!("{base}max_inflight = 2\nscheduler = \"{scheduler}\"\n"),
        );
        close(&m, "latency.read.max_us", 50.0);
        close(&m, "latency.read.mean_us", 50.0);
        close(&m, "queue.max_outstanding", 2.0);
        close(&m, "time.simulated_us", 1050.0);
    }
    // A cap of 1: one request at a time, each issued when the one before completes.
    let one = run(&p, 2, &format!("{base}max_inflight = 1\n"));
    close(&one, "latency.read.max_us", 50.0);
    close(&one, "queue.max_outstanding", 1.0);
    close(&one, "throughput.iops", 4.0 / 1050e-6);
}

/// One controller core (10 µs a command), a link of 390.625 MiB/s (10 µs per 4 KiB), 1 µs of
/// DRAM per page, one die; W0 W1 (pages 0, 1), R0 (a hit), R5 (flash) all at t = 0:
/// W0: core 0–10, link 10–20, DRAM → 21. W1: core 10–20, link 20–30, DRAM → 31.
/// R0: core 20–30, DRAM → 31, link 31–41. R5: core 30–40, read 40–90, link 90–100.
/// Two cores, no link: W0, W1 on cores 0–10 (→ 11); R0 10–20 (→ 21); R5 10–20, read 20–70.
#[test]
fn controller_cores_and_host_link_worked_by_hand() {
    let p = trace(
        "ctrl",
        &[
            (0, "Write", 0),
            (0, "Write", 1),
            (0, "Read", 0),
            (0, "Read", 5),
        ],
    );
    let base = "[buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\n\
                [run]\nmode = \"timed\"\nqueue_depth = 0\nprecondition = \"fill\"\n";
    let m = run(
        &p,
        1,
        &format!("{base}[controller]\ncores = 1\ncommand_us = 10\n[host]\nlink_mib_s = 390.625\n"),
    );
    close(&m, "latency.write.mean_us", (21.0 + 31.0) / 2.0);
    close(&m, "latency.read.mean_us", (41.0 + 100.0) / 2.0);
    close(&m, "latency.read.max_us", 100.0);
    close(&m, "util.controller.mean", 40.0 / 100.0);
    close(&m, "util.link", 40.0 / 100.0);
    let two = run(
        &p,
        1,
        &format!("{base}[controller]\ncores = 2\ncommand_us = 10\n"),
    );
    close(&two, "latency.write.max_us", 11.0);
    close(&two, "latency.read.mean_us", (21.0 + 70.0) / 2.0);
    close(&two, "util.controller.mean", 40.0 / (2.0 * 70.0));
    assert!(!two.contains_key("util.link"));
    // Per-page firmware time: 2 µs a page on one core: W0 0–12 (→ 13), W1 12–24 (→ 25),
    // R0 24–36 (→ 37), R5 36–48, read 48–98.
    let pages = run(
        &p,
        1,
        &format!("{base}[controller]\ncores = 1\ncommand_us = 10\npage_us = 2\n"),
    );
    close(&pages, "latency.write.mean_us", (13.0 + 25.0) / 2.0);
    close(&pages, "latency.read.mean_us", (37.0 + 98.0) / 2.0);
    // Off by default: a hit costs its DRAM time, nothing waits.
    let off = run(&p, 1, base);
    close(&off, "latency.write.max_us", 1.0);
    close(&off, "latency.read.mean_us", (1.0 + 50.0) / 2.0);
    assert!(!off.contains_key("util.controller.mean"));
}

/// Idle draining, one die, no DRAM time, an LRU buffer of 16 pages, `drain_idle_us = 100`:
/// W0 W1 W2 at t = 0 complete at once; idle from 0, the drain flushes the LRU victims one after
/// another: W0's page 100–300, W1's 300–500. R9 (flash) arrives at 400: the drain stops (W2's
/// page stays), and R9 waits for the program under way: 500–550, latency 150. Idle again from
/// 550: W2's page 650–850. R2 at 20,000 µs finds the buffer empty and reads flash: 50.
/// Without draining R9 reads at once (50) and R2 hits (0).
#[test]
fn idle_draining_empties_the_buffer_between_requests() {
    let p = trace(
        "idle",
        &[
            (0, "Write", 0),
            (0, "Write", 1),
            (0, "Write", 2),
            (400, "Read", 9),
            (20_000, "Read", 2),
        ],
    );
    let base = "[buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\n";
    let tail = "[run]\nmode = \"timed\"\nqueue_depth = 0\nprecondition = \"fill\"\n\
                check_integrity = true\n";
    let m = run_dram(&p, 1, 0.0, &format!("{base}drain_idle_us = 100\n{tail}"));
    close(&m, "latency.read.max_us", 150.0);
    close(&m, "latency.read.mean_us", (150.0 + 50.0) / 2.0);
    close(&m, "latency.write.max_us", 0.0);
    close(&m, "buffer.drained_pages", 3.0);
    close(&m, "buffer.drained_flushes", 3.0);
    close(&m, "buffer.read_hit_pages", 0.0);
    close(&m, "nand.reads.host", 2.0);
    close(&m, "nand.programs.host", 3.0);
    let off = run_dram(&p, 1, 0.0, &format!("{base}{tail}"));
    close(&off, "latency.read.mean_us", 25.0);
    close(&off, "buffer.read_hit_pages", 1.0);
    assert!(!off.contains_key("buffer.drained_pages"));
}

/// Watermark draining: a 4-page LRU buffer drained above half full (2 pages); one die; W0..W3
/// and R9 at t = 0. W2 leaves 3 pages: W0's page drains 0–200; W3: W1's 200–400. The writes
/// do not wait (0), R9 queues behind both programs: 400–450. Without draining: 50.
#[test]
fn watermark_draining_works_behind_the_writes() {
    let p = trace(
        "mark",
        &[
            (0, "Write", 0),
            (0, "Write", 1),
            (0, "Write", 2),
            (0, "Write", 3),
            (0, "Read", 9),
        ],
    );
    let base = "[buffer]\nkind = \"lru\"\nbytes = \"16KiB\"\n";
    let tail = "[run]\nmode = \"timed\"\nqueue_depth = 0\nprecondition = \"fill\"\n";
    let m = run_dram(&p, 1, 0.0, &format!("{base}drain_watermark = 0.5\n{tail}"));
    close(&m, "latency.write.max_us", 0.0);
    close(&m, "latency.read.max_us", 450.0);
    close(&m, "buffer.drained_pages", 2.0);
    let off = run_dram(&p, 1, 0.0, &format!("{base}drain_watermark = 1.0\n{tail}"));
    close(&off, "latency.read.max_us", 50.0);
    assert!(!off.contains_key("buffer.drained_pages"));
}

/// When a flushed page's slot frees (`buffer.release`). One die, programs 200 µs, no bus or
/// command time, 1 µs of DRAM per page; a 2-page buffer flushed whole (fifo, batch_pages = 0).
/// W0, W1 (pages 0, 1) at t = 0 fill it (done at 1). W2 (page 2) at 0 evicts both: programs
/// 0–200, 200–400; under either rule it completes with its flush, at 400. W3 (page 3) at 10
/// needs no eviction, only the slot W2's flush left: "on-program" frees it when the flush's
/// programs complete, so W3 is done at 400 (latency 390); "on-evict" (SSDsim's insert2buffer)
/// frees it at W2's eviction, so W3 is done at its buffer insert, 10 + 1 = 11 (latency 1).
#[test]
fn buffer_release_on_evict_or_on_program() {
    let p = trace(
        "release",
        &[
            (0, "Write", 0),
            (0, "Write", 1),
            (0, "Write", 2),
            (10, "Write", 3),
        ],
    );
    let m = |release: &str| {
        run(
            &p,
            1,
            &format!(
                "[buffer]\nkind = \"fifo\"\nbytes = \"8KiB\"\nrelease = \"{release}\"\n\
                 [buffer.fifo]\nbatch_pages = 0\n[run]\nmode = \"timed\"\nqueue_depth = 0\n"
            ),
        )
    };
    let program = m("on-program");
    close(&program, "latency.write.max_us", 400.0);
    close(
        &program,
        "latency.write.mean_us",
        (1.0 + 1.0 + 400.0 + 390.0) / 4.0,
    );
    let evict = m("on-evict");
    close(&evict, "latency.write.max_us", 400.0);
    close(
        &evict,
        "latency.write.mean_us",
        (1.0 + 1.0 + 400.0 + 1.0) / 4.0,
    );
    // The default is on-program (today's rule), and the rule changes no count.
    let default = run(
        &p,
        1,
        "[buffer]\nkind = \"fifo\"\nbytes = \"8KiB\"\n[buffer.fifo]\nbatch_pages = 0\n\
         [run]\nmode = \"timed\"\nqueue_depth = 0\n",
    );
    close(
        &default,
        "latency.write.mean_us",
        program["latency.write.mean_us"],
    );
    let same = [
        "nand.programs.host",
        "buffer.flushed_pages",
        "buffer.flushes",
    ];
    common::assert_same_metrics(&program, &evict, &same, "drain release");
}

/// `buffer.drain_mb_s` bounds the rate slots free, whatever the flash does. The set-up of
/// [`buffer_release_on_evict_or_on_program`] with "on-evict" (slots would free at eviction) and a
/// write path of 40.96 MB/s: 100 µs per 4 KiB page. W2's flush of two pages at 0 retires them
/// 0–200, so W3 (at 10) gets its slot at 200 and is done then (its DRAM copy made while it
/// waited: latency 190) instead of at 11; W2 still completes with its programs, at 400.
/// Unlimited in effect (10^9 MB/s): as without it.
#[test]
fn drain_rate_bounds_when_slots_free() {
    let p = trace(
        "drain-rate",
        &[
            (0, "Write", 0),
            (0, "Write", 1),
            (0, "Write", 2),
            (10, "Write", 3),
        ],
    );
    let m = |rate: &str| {
        run(
            &p,
            1,
            &format!(
                "[buffer]\nkind = \"fifo\"\nbytes = \"8KiB\"\nrelease = \"on-evict\"\n{rate}\
                 [buffer.fifo]\nbatch_pages = 0\n[run]\nmode = \"timed\"\nqueue_depth = 0\n"
            ),
        )
    };
    let slow = m("drain_mb_s = 40.96\n");
    close(&slow, "latency.write.max_us", 400.0);
    close(
        &slow,
        "latency.write.mean_us",
        (1.0 + 1.0 + 400.0 + 190.0) / 4.0,
    );
    let fast = m("drain_mb_s = 1e9\n");
    let none = m("");
    close(
        &fast,
        "latency.write.mean_us",
        none["latency.write.mean_us"],
    );
    close(
        &none,
        "latency.write.mean_us",
        (1.0 + 1.0 + 400.0 + 1.0) / 4.0,
    );
}

/// Drained pages free their slots by the same rule. A 2-page LRU buffer drained above half full
/// (1 page), one die, no DRAM time; W0 W1 W2 at t = 0. W1 leaves 2 pages: W0's page drains
/// 0–200. W2 takes the slot it left: at 200 with "on-program", at 0 with "on-evict".
#[test]
fn drained_slots_follow_buffer_release() {
    let p = trace(
        "release-drain",
        &[(0, "Write", 0), (0, "Write", 1), (0, "Write", 2)],
    );
    let m = |release: &str| {
        run_dram(
            &p,
            1,
            0.0,
            &format!(
                "[buffer]\nkind = \"lru\"\nbytes = \"8KiB\"\ndrain_watermark = 0.5\n\
                 release = \"{release}\"\n[run]\nmode = \"timed\"\nqueue_depth = 0\n"
            ),
        )
    };
    let program = m("on-program");
    close(&program, "latency.write.max_us", 200.0);
    close(&program, "buffer.drained_pages", 2.0);
    let evict = m("on-evict");
    close(&evict, "latency.write.max_us", 0.0);
    close(&evict, "buffer.drained_pages", 2.0);
}

/// Every count of counts mode, identical in timed mode with the front end on (controller,
/// link, an open loop capped at 4) and draining off, for the page FTL and DFTL under three
/// buffers.
#[test]
fn front_end_leaves_counts_unchanged() {
    for ftl in ["page", "dftl"] {
        for buffer in ["lru", "block-lru", "bplru"] {
            let text = format!(
                "[workload]\nkind = \"zipf\"\nrequests = 5000\nfootprint_bytes = \"12MiB\"\n\
                 request_bytes = \"8KiB\"\nread_fraction = 0.3\nseed = 7\niops = 20000\n\
                 [device]\nlogical_bytes = \"16MiB\"\npages_per_block = 32\nop = 0.15\n\
                 [ftl]\nkind = \"{ftl}\"\n[buffer]\nkind = \"{buffer}\"\nbytes = \"512KiB\"\n\
                 [controller]\ncores = 2\ncommand_us = 5\npage_us = 1\n[host]\nlink_mib_s = 800\n\
                 [run]\nprecondition = \"fill\"\nmax_inflight = 4\nqueue_depth = 0\n"
            );
            let mut c = Config::from_toml_str(&text).unwrap();
            let counts = simulate(&c, &mut NoProgress).unwrap().metrics;
            c.run.mode = "timed".into();
            (c.device.channels, c.device.chips_per_channel) = (2, 2);
            let timed = simulate(&c, &mut NoProgress).unwrap().metrics;
            common::assert_counts_same_timed(&counts, &timed, &format!("{ftl} × {buffer}"));
            assert_eq!(timed["queue.max_outstanding"], 4.0);
            assert!(timed["util.controller.mean"] > 0.0 && timed["util.link"] > 0.0);
        }
    }
}

/// Keys that do not fit together are errors naming the key.
#[test]
fn front_end_config_errors() {
    let p = trace("err", &[(0, "Write", 0)]);
    let err = |extra: &str| {
        let text = format!(
            "[workload]\nkind = \"trace\"\npath = \"{p}\"\nformat = \"msr\"\n\
             [device]\nlogical_bytes = \"1MiB\"\npages_per_block = 16\nop = 0.5\n{extra}"
        );
        match Config::from_toml_str(&text) {
            Err(e) => e.to_string(),
            Ok(c) => simulate(&c, &mut NoProgress).unwrap_err().to_string(),
        }
    };
    for (extra, want) in [
        (
            "[run]\nmode = \"timed\"\nmax_inflight = 4\n",
            "run.max_inflight",
        ),
        ("[controller]\ncommand_us = 5\n", "controller.cores"),
        ("[host]\nlink_mib_s = -1\n", "host.link_mib_s"),
        (
            "[buffer]\ndrain_watermark = 1.5\n",
            "buffer.drain_watermark",
        ),
        ("[buffer]\ndrain_idle_us = 10\n", "run.mode"),
        (
            "[buffer]\ndrain_mb_s = 0\n[run]\nmode = \"timed\"\n",
            "buffer.drain_mb_s",
        ),
        (
            "[buffer]\ndrain_mb_s = 100\n",
            "`buffer.drain_mb_s`: a timed-mode setting",
        ),
        (
            "[buffer]\nrelease = \"on-flush\"\n",
            "config field `buffer.release`: unknown value `on-flush`",
        ),
        (
            "[buffer]\ndrain_idle_us = 10\n[run]\nmode = \"timed\"\nscheduler = \"write-stop\"\n",
            "run.scheduler",
        ),
    ] {
        let e = err(extra);
        assert!(e.contains(want), "{extra}: {e}");
    }
}

/// Every buffer drains with its own victims and loses nothing: a sparse open loop (idle gaps)
/// over a filled device, integrity checked.
#[test]
fn every_draining_buffer_keeps_its_data() {
    use ssdlab_core::registry::names;
    for buffer in names("buffer") {
        let text = format!(
            "[workload]\nkind = \"zipf\"\nrequests = 3000\nfootprint_bytes = \"8MiB\"\n\
             read_fraction = 0.3\nseed = 9\niops = 2000\n\
             [device]\nlogical_bytes = \"16MiB\"\npages_per_block = 32\nop = 0.15\nchannels = 2\n\
             [buffer]\nkind = \"{buffer}\"\nbytes = \"512KiB\"\ndrain_watermark = 0.5\n\
             drain_idle_us = 200\n\
             [run]\nmode = \"timed\"\nqueue_depth = 0\nprecondition = \"fill\"\ncheck_integrity = true\n"
        );
        let c = Config::from_toml_str(&text).unwrap();
        let m = simulate(&c, &mut NoProgress).unwrap().metrics;
        assert_eq!(m["run.measured_requests"], 3000.0, "{buffer}");
        let drained = m["buffer.drained_pages"];
        assert_eq!(drained > 0.0, buffer != "none", "{buffer}: {drained}");
        assert!(drained <= m["buffer.flushed_pages"], "{buffer}");
    }
}

/// The idle power state: reads at 0, 10 and 100,000 µs (two dies, no buffer), a 900 µs wake
/// after 50,000 µs idle. The first two find the device awake (it starts awake): 50 µs each. The
/// third comes after 99,950 µs idle and waits the wake: 900 + 50. A fourth at 100,100, during
/// the third's wake, waits for the same wake: it reads from 100,900 on the other die, 850 µs.
#[test]
fn the_first_read_after_an_idle_period_waits_the_wake() {
    let p = trace(
        "wake",
        &[
            (0, "Read", 0),
            (10, "Read", 1),
            (100_000, "Read", 2),
            (100_100, "Read", 3),
        ],
    );
    let base = "[buffer]\nkind = \"none\"\n[run]\nmode = \"timed\"\nqueue_depth = 0\n\
                precondition = \"fill\"\n";
    let m = run(
        &p,
        2,
        &format!("{base}[controller]\nwake_us = 900\nsleep_after_us = 50000\n"),
    );
    close(&m, "latency.read.max_us", 950.0);
    close(
        &m,
        "latency.read.mean_us",
        (50.0 + 50.0 + 950.0 + 850.0) / 4.0,
    );
    close(&m, "controller.wakes", 1.0);
    // Idle for less than sleep_after_us: no wake.
    let awake = run(
        &p,
        2,
        &format!("{base}[controller]\nwake_us = 900\nsleep_after_us = 200000\n"),
    );
    close(&awake, "latency.read.max_us", 50.0);
    close(&awake, "controller.wakes", 0.0);
}
