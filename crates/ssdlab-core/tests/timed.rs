//! Timed mode against exact results: fixed-latency reads, M/M/1 and M/D/1 queues, the closed
//! network of N requests on D dies, the saturation bounds of dies and channels; determinism, and a
//! real trace replayed with GC. Statistical checks use batch means from the time series
//! (`run.sample_every`): the run's mean must lie within four standard errors of the exact value,
//! and the standard error must itself be small, so that the check cannot pass by being vague.

use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config, RunResult};
use std::path::{Path, PathBuf};

mod common;

/// A preconditioned device read at random (every read reaches flash: no buffer): `channels` ×
/// `ways` dies, array read time `read_us`; `workload` and `nand` add keys to those sections.
fn reads(
    channels: u32,
    ways: u32,
    read_us: f64,
    workload: &str,
    queue_depth: u32,
    sample_every: u64,
    nand: &str,
) -> RunResult {
    let text = format!(
        "[workload]\nkind = \"uniform\"\nfootprint_bytes = \"64MiB\"\nread_fraction = 1.0\n{workload}\
         [device]\nlogical_bytes = \"64MiB\"\npages_per_block = 128\nchannels = {channels}\n\
         chips_per_channel = {ways}\n[nand]\nread_us = {read_us}\n{nand}\n[buffer]\nkind = \"none\"\n\
         [run]\nmode = \"timed\"\nprecondition = \"fill\"\nqueue_depth = {queue_depth}\n\
         sample_every = {sample_every}\n"
    );
    simulate(&Config::from_toml_str(&text).unwrap(), &mut NoProgress).unwrap()
}

/// Mean and standard error of a series column's batch means (the last row, taken after the
/// final flush, is not a batch).
fn batch_mean(r: &RunResult, column: &str) -> (f64, f64) {
    let col = &r.series[column];
    let b: Vec<f64> = col[..col.len() - 1].to_vec();
    let n = b.len() as f64;
    let mean = b.iter().sum::<f64>() / n;
    let var = b.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

fn within(what: &str, got: (f64, f64), exact: f64, max_rel_se: f64) {
    let (mean, se) = got;
    assert!(
        se / exact < max_rel_se,
        "{what}: standard error {se:.4} is too large for a check ({exact})"
    );
    assert!(
        (mean - exact).abs() < 4.0 * se,
        "{what}: {mean:.4} vs exact {exact:.4} (standard error {se:.4})"
    );
}

#[test]
fn qd1_read_latency_is_command_plus_read_plus_transfer() {
    // 8 KiB / 400 MB/s = 20.48 µs on the bus.
    let text = "[workload]\nkind = \"uniform\"\nrequests = 5000\nfootprint_bytes = \"32MiB\"\n\
                read_fraction = 1.0\nrequest_bytes = \"8KiB\"\n[device]\nlogical_bytes = \"32MiB\"\n\
                page_bytes = \"8KiB\"\nop = 0.25\nchannels = 2\nchips_per_channel = 4\n[nand]\nread_us = 47\n\
                command_us = 3\nchannel_mb_s = 400\n[buffer]\nkind = \"none\"\n\
                [run]\nmode = \"timed\"\nqueue_depth = 1\nprecondition = \"fill\"\n";
    let r = simulate(&Config::from_toml_str(text).unwrap(), &mut NoProgress).unwrap();
    let exact = 3.0 + 47.0 + 8192.0 / 400.0;
    let m = &r.metrics;
    assert_eq!(m["host.read_requests"], 5000.0);
    assert!(
        (m["latency.read.mean_us"] - exact).abs() < 1e-9,
        "{}",
        m["latency.read.mean_us"]
    );
    assert!((m["latency.read.max_us"] - exact).abs() < 1e-9);
    for p in ["p50", "p99", "p9999"] {
        let v = m[&format!("latency.read.{p}_us")];
        assert!((v / exact - 1.0).abs() < 1e-3, "{p}: {v}");
    }
    // One request at a time: the device is busy exactly the run's length.
    assert!((m["throughput.iops"] - 1e6 / exact).abs() < 1e-6 * 1e6 / exact);
    assert!((m["queue.mean_outstanding"] - 1.0).abs() < 1e-9);
}

#[test]
fn mm1_and_md1_mean_response_time() {
    let s = 100.0;
    for (rho, requests) in [(0.3, 100_000u64), (0.6, 200_000), (0.9, 1_000_000)] {
        for service in ["exponential", "fixed"] {
            let workload = format!(
                "requests = {requests}\narrival = \"poisson\"\niops = {}\nseed = 11\n",
                rho / s * 1e6
            );
            let nand = format!("service = \"{service}\"");
            let r = reads(1, 1, s, &workload, 0, requests / 50, &nand);
            let exact = if service == "exponential" {
                s / (1.0 - rho) // M/M/1
            } else {
                s + rho * s / (2.0 * (1.0 - rho)) // M/D/1, Pollaczek–Khinchine
            };
            let what = format!("{service} service, ρ = {rho}");
            within(
                &what,
                batch_mean(&r, "interval.latency.mean_us"),
                exact,
                0.03,
            );
            assert!(
                (r.metrics["util.die.mean"] - rho).abs() < 0.03,
                "{what}: utilisation"
            );
        }
    }
}

#[test]
fn closed_network_throughput() {
    let s = 50.0;
    for (channels, ways) in [(4u32, 1u32), (8, 4)] {
        let d = (channels * ways) as f64;
        for n in [1u32, 4, 32, 128] {
            let workload = "requests = 200000\nseed = 3\n";
            let r = reads(
                channels,
                ways,
                s,
                workload,
                n,
                4000,
                "service = \"exponential\"",
            );
            let n = n as f64;
            // Exact for N requests routed at random among D exponential FIFO servers.
            let exact = d * n / ((n + d - 1.0) * s) * 1e6;
            within(
                &format!("D = {d}, N = {n}"),
                batch_mean(&r, "interval.iops"),
                exact,
                0.02,
            );
        }
    }
}

#[test]
fn saturation_bounds() {
    // Die-bound: 32 dies / 50 µs = 640 K reads/s; 8 channels / 5.12 µs = 1.56 M/s.
    // Channel-bound: 32 dies / 10 µs = 3.2 M/s; 8 channels / 20 µs = 400 K/s.
    for (read_us, mb_s, bound) in [(50.0, 800.0, 640_000.0), (10.0, 204.8, 400_000.0)] {
        let mut last = 0.0;
        for qd in [1u32, 8, 64, 1024] {
            let nand = format!("channel_mb_s = {mb_s}");
            let r = reads(8, 4, read_us, "requests = 100000\n", qd, 0, &nand);
            let iops = r.metrics["throughput.iops"];
            assert!(iops <= bound * (1.0 + 1e-9), "QD {qd}: {iops} > {bound}");
            assert!(iops >= last, "QD {qd}: {iops} fell below {last}");
            last = iops;
        }
        assert!(last >= 0.95 * bound, "QD 1024 reaches {last} of {bound}");
    }
}

fn traces_dir() -> PathBuf {
    match std::env::var_os("SSDLAB_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    }
}

/// A real, write-heavy trace replayed twice, folded onto a 512 MiB device (it writes 1 GiB: GC), open loop at 20× its speed: integrity checked, every request read completed
/// and timed, and the same result twice.
#[test]
fn trace_with_gc_determinism_and_nothing_dropped() {
    let path = traces_dir().join("blkreplay_1and1/linux-mysql.load.gz");
    let text = format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\naddress_map = \"fold\"\n\
         [device]\nlogical_bytes = \"512MiB\"\nop = 0.1\nchannels = 4\nchips_per_channel = 2\n[buffer]\nkind = \"lru\"\nbytes = \"4MiB\"\n\
         [run]\nmode = \"timed\"\nqueue_depth = 0\ntime_scale = 0.05\ncheck_integrity = true\n\
         repeat = 2\n",
        path.display()
    );
    let c = Config::from_toml_str(&text).unwrap();
    let a = simulate(&c, &mut NoProgress).unwrap();
    let m = &a.metrics;
    assert_eq!(m["run.requests"], 2.0 * 80_794.0);
    let timed: u64 = a.histograms["latency.all_ns"].iter().map(|&(_, n)| n).sum();
    assert_eq!(timed, 2 * 80_794);
    assert_eq!(
        m["host.read_requests"] + m["host.write_requests"],
        2.0 * 80_794.0
    );
    assert!(m["gc.victims"] > 100.0, "GC ran: {}", m["gc.victims"]);
    assert!(m["latency.write.p99_us"] >= m["latency.write.p50_us"]);
    assert!(m["latency.all.max_us"] >= m["latency.all.p9999_us"] * 0.999);
    let b = simulate(&c, &mut NoProgress).unwrap();
    assert_eq!(format!("{:?}", a.metrics), format!("{:?}", b.metrics));
    assert_eq!(a.histograms, b.histograms);
}

/// Background GC (`ftl.background_gc`): sparse random writes on a filled device leave the dies idle
/// between requests; GC then runs there instead of in front of the writes. Integrity holds, every
/// victim is collected in the background, and the writes wait far less.
#[test]
fn background_gc_runs_while_idle() {
    let text = "[workload]\nkind = \"uniform\"\nrequests = 20000\nfootprint_bytes = \"32MiB\"\niops = 400\n\
                [device]\nlogical_bytes = \"32MiB\"\npages_per_block = 64\nop = 0.1\nchannels = 2\n\
                chips_per_channel = 2\n[buffer]\nkind = \"none\"\n\
                [ftl]\nbackground_gc = true\nbackground_gc_idle_us = 100\n\
                [run]\nmode = \"timed\"\nqueue_depth = 0\nprecondition = \"fill\"\ncheck_integrity = true\n";
    let mut c = Config::from_toml_str(text).unwrap();
    let bg = simulate(&c, &mut NoProgress).unwrap().metrics;
    c.ftl.background_gc = false;
    let fg = simulate(&c, &mut NoProgress).unwrap().metrics;
    assert!(fg["gc.invocations"] > 0.0 && !fg.contains_key("gc.background_victims"));
    assert_eq!(bg["gc.invocations"], 0.0, "no foreground GC left");
    assert_eq!(bg["gc.background_victims"], bg["gc.victims"]);
    assert!(bg["latency.write.mean_us"] < 0.5 * fg["latency.write.mean_us"]);
    assert!(bg["latency.write.p99_us"] < 0.5 * fg["latency.write.p99_us"]);
    // It needs idle time, and a page FTL.
    c.ftl.background_gc = true;
    c.run.mode = "counts".into();
    let e = simulate(&c, &mut NoProgress).unwrap_err().to_string();
    assert!(
        e.contains("ftl.background_gc") && e.contains("run.mode"),
        "{e}"
    );
    c.run.mode = "timed".into();
    c.ftl.kind = "bast".into();
    let e = simulate(&c, &mut NoProgress).unwrap_err().to_string();
    assert!(e.contains("ftl.background_gc") && e.contains("bast"), "{e}");
}

/// 6000 Zipf requests (`read_fraction` of them reads) through `ftl` and a 512 KiB `buffer` on a
/// filled 16 MiB device of 2 × 2 dies, with `run` (TOML lines) added to `[run]`.
fn zipf_on_4_dies(ftl: &str, buffer: &str, read_fraction: f64, run: &str) -> Config {
    let text = format!(
        "[workload]\nkind = \"zipf\"\nrequests = 6000\nfootprint_bytes = \"12MiB\"\n\
         request_bytes = \"8KiB\"\nread_fraction = {read_fraction}\nseed = 5\n\
         [device]\nlogical_bytes = \"16MiB\"\npages_per_block = 32\nop = 0.15\n\
         [ftl]\nkind = \"{ftl}\"\n[buffer]\nkind = \"{buffer}\"\nbytes = \"512KiB\"\n\
         [run]\nprecondition = \"fill\"\n{run}"
    );
    let mut c = Config::from_toml_str(&text).unwrap();
    // The geometry in both modes: the line FTL sizes pblk's ring from its LUNs.
    (c.device.channels, c.device.chips_per_channel) = (2, 2);
    c
}

/// Timing never changes what is written: for every FTL × every write buffer (the registry's
/// lists), a timed run (closed loop, 2 × 2 dies) reports exactly the counts-mode metrics.
#[test]
fn every_ftl_and_buffer_counts_the_same_in_timed_mode() {
    use ssdlab_core::registry::names;
    for ftl in names("ftl") {
        for buffer in names("buffer") {
            let mut c = zipf_on_4_dies(ftl, buffer, 0.2, "check_integrity = true\n");
            let counts = simulate(&c, &mut NoProgress).unwrap().metrics;
            c.run.mode = "timed".into();
            c.run.queue_depth = 4;
            let timed = simulate(&c, &mut NoProgress).unwrap().metrics;
            common::assert_counts_same_timed(&counts, &timed, &format!("{ftl} × {buffer}"));
            assert_eq!(timed["run.measured_requests"], 6000.0);
            assert!(timed["latency.all.mean_us"] > 0.0, "{ftl} × {buffer}");
        }
    }
}

/// Host-interface scheduling (`run.scheduler`, seed 004 §III-B) worked by hand. One die, reads
/// 50 µs, programs 200 µs, no bus or DRAM time; a one-page LRU buffer; closed loop of 3; the
/// trace W0 R5 W1 R6 R7 (page numbers) after a fill. W1 must flush page 0 (one program).
///
/// fifo: W0 done at 0; R5 reads 0–50; W1 (issued at 0) programs 50–250; R6 (issued at 0, when W0
/// completes) reads 250–300; R7 (issued at 50) 300–350. Reads 50, 300, 300; writes 0, 250.
///
/// write-stop: W1 must flush while R5 is in service: writes are held. R6 (submitted at 0) is
/// taken at once and reads 50–100; R7 (submitted at 50) 100–150. When R7 completes no read is
/// left: W1 is taken at 150, synchronously, and programs 150–350. Reads 50, 100, 100; writes 0,
/// 350 (from its submission at 0); 200 µs stalled; R6 and R7 overtook W1. read-priority: the
/// same here (nothing comes after W1 to stall).
#[test]
fn host_interface_schedulers_worked_by_hand() {
    let dir = std::env::temp_dir().join(format!("ssdlab-timed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("wrwrr.csv");
    let rows: String = [
        ("Write", 0),
        ("Read", 5),
        ("Write", 1),
        ("Read", 6),
        ("Read", 7),
    ]
    .iter()
    .enumerate()
    .map(|(i, (op, page))| format!("{},h,0,{op},{},4096,1\n", 1000 + i, page * 4096))
    .collect();
    std::fs::write(&p, rows).unwrap();
    let run = |scheduler: &str| {
        let text = format!(
            "[workload]\nkind = \"trace\"\npath = \"{}\"\nformat = \"msr\"\n\
             [device]\nlogical_bytes = \"1MiB\"\npages_per_block = 16\nop = 0.5\n\
             [nand]\nread_us = 50\nprogram_us = 200\ncommand_us = 0\ntransfer_us = 0\ndram_us = 0\n\
             [buffer]\nkind = \"lru\"\nbytes = \"4KiB\"\n\
             [run]\nmode = \"timed\"\nqueue_depth = 3\nprecondition = \"fill\"\nscheduler = \"{scheduler}\"\n",
            p.display()
        );
        simulate(&Config::from_toml_str(&text).unwrap(), &mut NoProgress)
            .unwrap()
            .metrics
    };
    let close = |m: &std::collections::BTreeMap<String, f64>, k: &str, v: f64| {
        assert!((m[k] - v).abs() < 1e-9, "{k} = {} (expected {v})", m[k]);
    };
    let fifo = run("fifo");
    close(&fifo, "latency.read.mean_us", (50.0 + 300.0 + 300.0) / 3.0);
    close(&fifo, "latency.write.max_us", 250.0);
    assert!(!fifo.contains_key("queue.write_stops"));
    for (s, stalled) in [("write-stop", 200.0), ("read-priority", 0.0)] {
        let m = run(s);
        close(&m, "latency.read.mean_us", (50.0 + 100.0 + 100.0) / 3.0);
        close(&m, "latency.read.max_us", 100.0);
        close(&m, "latency.write.max_us", 350.0);
        close(&m, "latency.write.mean_us", 175.0);
        close(&m, "queue.write_stops", 1.0);
        close(&m, "queue.stalled_us", stalled);
        close(&m, "queue.out_of_order", 2.0);
        // The same operations, in another order.
        let same = [
            "nand.programs.host",
            "nand.reads.host",
            "host.read_requests",
        ];
        common::assert_same_metrics(&m, &fifo, &same, s);
    }
}

/// The host-interface schedulers on a mixed random workload: every request completes once; with
/// reads only nothing is held and the latencies are FIFO's; write-stop never lets a flush start
/// while a read is in the device, and pays for it in stalls.
#[test]
fn host_interface_schedulers_on_random_mixes() {
    let run = |scheduler: &str, read_fraction: f64| {
        let text = format!(
            "[workload]\nkind = \"uniform\"\nrequests = 20000\nfootprint_bytes = \"24MiB\"\n\
             read_fraction = {read_fraction}\nseed = 3\n\
             [device]\nlogical_bytes = \"32MiB\"\npages_per_block = 64\nop = 0.15\nchannels = 2\n\
             chips_per_channel = 2\n[buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\n\
             [run]\nmode = \"timed\"\nqueue_depth = 16\nprecondition = \"fill\"\n\
             check_integrity = true\nscheduler = \"{scheduler}\"\n"
        );
        simulate(&Config::from_toml_str(&text).unwrap(), &mut NoProgress)
            .unwrap()
            .metrics
    };
    let fifo = run("fifo", 1.0);
    for s in ["read-priority", "write-stop"] {
        let m = run(s, 1.0);
        for k in [
            "latency.read.mean_us",
            "latency.read.p99_us",
            "throughput.iops",
        ] {
            assert_eq!(m[k], fifo[k], "{s}: {k}");
        }
        assert_eq!(m["queue.out_of_order"], 0.0);
    }
    let fifo = run("fifo", 0.7);
    let rp = run("read-priority", 0.7);
    let ws = run("write-stop", 0.7);
    for m in [&rp, &ws] {
        assert_eq!(m["run.measured_requests"], 20000.0);
        assert_eq!(m["host.read_requests"], fifo["host.read_requests"]);
        assert!(m["queue.write_stops"] > 100.0);
        assert!(m["queue.out_of_order"] > 100.0);
    }
    assert_eq!(rp["queue.stalled_us"], 0.0);
    assert!(ws["queue.stalled_us"] > 0.0);
    // Holding flushes back while reads are in the device shortens the reads' wait.
    assert!(ws["latency.read.mean_us"] < fifo["latency.read.mean_us"]);
    assert!(rp["latency.read.mean_us"] < fifo["latency.read.mean_us"]);
}

/// A write waits for room in the buffer: a flushed page's slot frees when the flush's operations
/// complete. One die, programs 200 µs, no bus or DRAM time; a 2-page buffer flushed whole (fifo,
/// batch_pages = 0); closed loop of 4; five writes of distinct pages:
/// W0, W1 fill the buffer (done at 0); W2 flushes both (programs 0–200, 200–400) and takes a
/// slot freed at 400; W3 (issued at 0) takes the other: done at 400, not 0; W4 (issued at 0)
/// flushes W2's and W3's pages (400–800) and waits for a slot until 800.
#[test]
fn writes_wait_for_room_in_the_buffer() {
    let dir = std::env::temp_dir().join(format!("ssdlab-timed-room-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("w5.csv");
    let rows: String = (0..5)
        .map(|i| format!("{},h,0,Write,{},4096,1\n", 1000 + i, i * 4096))
        .collect();
    std::fs::write(&p, rows).unwrap();
    let text = format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\nformat = \"msr\"\n\
         [device]\nlogical_bytes = \"1MiB\"\npages_per_block = 16\nop = 0.5\n\
         [nand]\nprogram_us = 200\ncommand_us = 0\ntransfer_us = 0\ndram_us = 0\n\
         [buffer]\nkind = \"fifo\"\nbytes = \"8KiB\"\n[buffer.fifo]\nbatch_pages = 0\n\
         [run]\nmode = \"timed\"\nqueue_depth = 4\n",
        p.display()
    );
    let m = simulate(&Config::from_toml_str(&text).unwrap(), &mut NoProgress)
        .unwrap()
        .metrics;
    assert_eq!(m["latency.write.max_us"], 800.0);
    assert!(
        (m["latency.write.mean_us"] - 1600.0 / 5.0).abs() < 1e-9,
        "{}",
        m["latency.write.mean_us"]
    );
}

/// The NAND mechanisms (suspension, multi-plane, page types, NAND pages of several units) change
/// only times: every FTL reports the counts-mode metrics with all of them on.
#[test]
fn nand_mechanisms_change_no_count() {
    use ssdlab_core::registry::names;
    for ftl in names("ftl") {
        let mut c = zipf_on_4_dies(ftl, "lru", 0.3, "");
        let counts = simulate(&c, &mut NoProgress).unwrap().metrics;
        c.run.mode = "timed".into();
        c.run.queue_depth = 8;
        c.device.planes_per_die = 2;
        c.nand.suspend = "program-erase".into();
        c.nand.cell = "mlc".into();
        (c.nand.read_msb_us, c.nand.program_msb_us) = (Some(90.0), Some(1500.0));
        if ftl == "page" {
            c.nand.physical_page_bytes = Some(ssdlab_core::units::Size(16384));
        }
        let timed = simulate(&c, &mut NoProgress).unwrap().metrics;
        common::assert_counts_same_timed(&counts, &timed, ftl);
        assert!(timed["nand.array_programs"] > 0.0, "{ftl}");
        assert!(
            timed["nand.array_programs"] < timed["nand.programs.total"],
            "{ftl}: multi-plane programs group pages"
        );
        assert_eq!(simulate(&c, &mut NoProgress).unwrap().metrics, timed);
    }
}

/// Suspension cuts the read tail under GC (Wu & He, FAST '12): a 70/30 mix on a filled device.
#[test]
fn suspension_cuts_the_read_tail_under_gc() {
    let text = "[workload]\nkind = \"uniform\"\nrequests = 20000\nfootprint_bytes = \"32MiB\"\n\
                read_fraction = 0.3\nseed = 3\n\
                [device]\nlogical_bytes = \"32MiB\"\nop = 0.15\nchannels = 2\nchips_per_channel = 2\n\
                [run]\nmode = \"timed\"\nqueue_depth = 16\nprecondition = \"fill\"\n";
    let mut c = Config::from_toml_str(text).unwrap();
    let plain = simulate(&c, &mut NoProgress).unwrap().metrics;
    c.nand.suspend = "program-erase".into();
    let s = simulate(&c, &mut NoProgress).unwrap().metrics;
    assert!(s["nand.suspensions"] > 0.0);
    let (p, q) = (plain["latency.read.p99_us"], s["latency.read.p99_us"]);
    assert!(q < 0.5 * p, "read p99 {q} µs with suspension, {p} without");
    assert_eq!(s["nand.programs.total"], plain["nand.programs.total"]);
}
