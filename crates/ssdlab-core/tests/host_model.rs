//! The host side of a measurement (`host.cpu_us`, `host.wake_us`, `flows[i].cpu`), flows that
//! share a namespace (fio's jobs on one device) and runs bounded by simulated time
//! (`run.warmup_us`, `run.runtime_us`), and a campaign's preconditioning (`fill-random`):
//! hand-worked latencies and throughput ceilings.

mod common;
use common::{error, run};
use ssdlab_core::RunResult;

/// A filled device of `dies` dies (one per channel), reads of 50 µs and nothing else timed,
/// with `host` keys and `flows` (closed-loop random 4 KiB readers of `depth` each, sharing
/// namespace 0, on the cores listed).
fn device(dies: u32, host: &str, run: &str, flows: &[(u32, Option<u32>)], requests: u64) -> String {
    let mut s = format!(
        "[device]\nlogical_bytes = \"16MiB\"\nchannels = {dies}\npages_per_block = 32\n\
         [nand]\nread_us = 50\ndram_us = 0\n\
         [run]\nmode = \"timed\"\nprecondition = \"fill\"\n{run}[host]\n{host}"
    );
    for (depth, cpu) in flows {
        let cpu = cpu.map_or(String::new(), |c| format!("cpu = {c}\n"));
        s += &format!(
            "[[flows]]\nnamespace = 0\nqueue_depth = {depth}\n{cpu}[flows.workload]\nkind = \"uniform\"\n\
             read_fraction = 1.0\nrequests = {requests}\nfootprint_bytes = \"16MiB\"\n"
        );
    }
    s
}

/// One thread at QD 1 on one die: `device` with `host` keys.
fn one_reader(host: &str, requests: u64) -> String {
    device(1, host, "", &[(1, None)], requests)
}

#[test]
fn queue_depth_one_latency_is_the_device_plus_wake_plus_cpu() {
    // One thread at QD 1: each read takes the array read (50), then the thread wakes (7) and
    // handles it (3): 60 µs, and the next is submitted then.
    let r = run(&one_reader("cpu_us = 3\nwake_us = 7\n", 2000));
    assert_eq!(r.metrics["latency.read.mean_us"], 60.0);
    assert_eq!(r.metrics["latency.read.max_us"], 60.0);
    let iops = r.metrics["throughput.iops"];
    assert!((iops - 1e6 / 60.0).abs() < 1e-6 * iops, "{iops}");
    // Off, the read is the device's 50 µs: the host model adds exactly its two terms.
    let off = run(&one_reader("", 2000));
    assert_eq!(off.metrics["latency.read.mean_us"], 50.0);
    // With 2 of the 3 µs spent submitting the next read (fio's slat), a read's latency (its
    // clat) ends 2 µs earlier, and the next reaches the device 2 µs after it: 58 µs each, one
    // every 60 µs as before.
    let split = run(&one_reader(
        "cpu_us = 3\nsubmit_us = 2\nwake_us = 7\n",
        2000,
    ));
    assert_eq!(split.metrics["latency.read.mean_us"], 58.0);
    assert_eq!(split.metrics["latency.read.max_us"], 58.0);
    let iops = split.metrics["throughput.iops"];
    assert!((iops - 1e6 / 60.0).abs() < 1e-3 * iops, "{iops}");
    let e = error(&one_reader("cpu_us = 1\nsubmit_us = 2\n", 10));
    assert!(
        e.contains("host.submit_us") && e.contains("host.cpu_us"),
        "{e}"
    );
}

#[test]
fn a_thread_tops_out_at_one_request_per_cpu_us() {
    // 64 dies, 64 outstanding: the device could serve 1.28 M reads/s, but the thread handles a
    // completion every 10 µs: 100,000 IOPS; a busy thread does not wait to wake.
    let r = run(&device(
        64,
        "cpu_us = 10\nwake_us = 5\n",
        "",
        &[(64, None)],
        40_000,
    ));
    let iops = r.metrics["throughput.iops"];
    assert!((iops / 100_000.0 - 1.0).abs() < 0.01, "{iops}");
    // Two threads on their own cores: twice the ceiling (the device is far from full).
    let two = run(&device(
        64,
        "cpu_us = 10\n",
        "",
        &[(32, None), (32, None)],
        20_000,
    ));
    let iops = two.metrics["throughput.iops"];
    assert!((iops / 200_000.0 - 1.0).abs() < 0.01, "{iops}");
    // The same two on one core share its ceiling.
    let one = run(&device(
        64,
        "cpu_us = 10\n",
        "",
        &[(32, Some(2)), (32, Some(2))],
        20_000,
    ));
    let iops = one.metrics["throughput.iops"];
    assert!((iops / 100_000.0 - 1.0).abs() < 0.01, "{iops}");
    // Little's law holds on the measured window: outstanding = IOPS × latency.
    let lat = r.metrics["latency.read.mean_us"];
    let little = r.metrics["throughput.iops"] * lat * 1e-6;
    assert!((little / 64.0 - 1.0).abs() < 0.01, "{little}");
}

#[test]
fn flows_of_one_namespace_share_its_range() {
    // Two jobs on namespace 0 of an "auto" device: it holds one footprint, not two, and both
    // read it (every read hits a written page: none is served for free).
    let toml = device(4, "", "", &[(4, None), (4, None)], 4000)
        .replace("logical_bytes = \"16MiB\"\n", "")
        .replace(
            "precondition = \"fill\"\n",
            "precondition = \"fill\"\ncheck_integrity = true\n",
        );
    let r = run(&toml);
    assert_eq!(r.metrics["device.logical_pages"], 4096.0);
    assert_eq!(r.metrics["flow.0.requests"], 4000.0);
    assert_eq!(r.metrics["flow.1.requests"], 4000.0);
    assert_eq!(r.metrics["nand.reads.total"], 8000.0);
    // Without a namespace each flow has a range of its own: twice the device.
    let own = run(&toml.replace("namespace = 0\n", ""));
    assert_eq!(own.metrics["device.logical_pages"], 8192.0);
    // A namespace's flows keep to its dies and share.
    let e = error(&device(4, "", "", &[(4, None), (4, None)], 100).replacen(
        "namespace = 0\n",
        "namespace = 0\nchannels = [0]\n",
        1,
    ));
    assert!(
        e.contains("flows[1].dies") && e.contains("same channels and dies"),
        "{e}"
    );
}

#[test]
fn a_time_bounded_run_measures_its_window() {
    // QD 1 on one die: a read every 50 µs. A 1 ms warm-up and 10 ms of runtime submit about
    // 200 reads in the window (the workload's 100,000 bound the run only as a cap).
    let r = run(&device(
        1,
        "",
        "warmup_us = 1000\nruntime_us = 10000\n",
        &[(1, None)],
        100_000,
    ));
    assert_eq!(r.metrics["run.measured_requests"], 200.0);
    assert_eq!(r.metrics["throughput.iops"], 20_000.0);
    // The cap still bounds it.
    let capped = run(&device(1, "", "runtime_us = 10000\n", &[(1, None)], 50));
    assert_eq!(capped.metrics["run.measured_requests"], 50.0);
    // A warm-up the run never reaches is an error that says so.
    let e = error(&device(1, "", "warmup_us = 1e9\n", &[(1, None)], 10));
    assert!(
        e.contains("run.warmup_us") && e.contains("ended before the warm-up"),
        "{e}"
    );
    // Without flows these keys are an error naming them.
    let plain = "[run]\nmode = \"timed\"\nruntime_us = 100\n[host]\ncpu_us = 2\n";
    let e = error(plain);
    assert!(
        e.contains("run.runtime_us") && e.contains("host.cpu_us") && e.contains("needs [[flows]]"),
        "{e}"
    );
}

#[test]
fn a_random_precondition_scatters_what_the_fill_laid_out_in_stripes() {
    // 16 dies, 64 KiB reads (16 pages) at 16-page-aligned offsets, QD 1. After the sequential
    // fill a read's pages lie on 16 different dies: one read time (50 µs). After the random
    // overwrites (twice the device) they are scattered: dies collide and reads take longer.
    let toml = |pre: &str| {
        format!(
            "[device]\nlogical_bytes = \"16MiB\"\nchannels = 16\npages_per_block = 32\nop = 0.25\n\
             [nand]\nread_us = 50\ndram_us = 0\n\
             [run]\nmode = \"timed\"\nprecondition = \"{pre}\"\ncheck_integrity = true\nqueue_depth = 1\n\
             [workload]\nkind = \"fio\"\nrequests = 2000\nfootprint_bytes = \"16MiB\"\nrequest_bytes = 65536\n\
             [workload.fio]\nrw = \"randread\"\n"
        )
    };
    let filled = run(&toml("fill"));
    assert_eq!(filled.metrics["latency.read.mean_us"], 50.0);
    let random = run(&toml("fill-random"));
    let mean = random.metrics["latency.read.mean_us"];
    // 16 pages on 16 dies at random: the busiest die holds 3 or 4 of them (expected maximum
    // load of 16 balls in 16 bins ≈ 3.3), so a read takes about 3.3 read times.
    assert!((150.0..=200.0).contains(&mean), "{mean}");
    assert_eq!(random.metrics["host.unwritten_read_pages"], 0.0);
    // The oracle knows the fill's writes, not the random ones.
    let e = error(
        &toml("fill-random").replace("[workload]", "[placement]\nkind = \"oracle\"\n[workload]"),
    );
    assert!(e.contains("run.precondition"), "{e}");
}

#[test]
fn a_block_too_short_to_reach_every_die_is_noted() {
    // 32 dies, 16 KiB NAND pages of 4 units: a 32-unit block fills 8 rows, so 24 dies stay empty.
    let toml = "[device]\nlogical_bytes = \"16MiB\"\nchannels = 8\nchips_per_channel = 4\npages_per_block = 32\nop = 0.25\n\
                [nand]\nphysical_page_bytes = \"16KiB\"\n[run]\nmode = \"timed\"\n\
                [workload]\nkind = \"uniform\"\nrequests = 100\nfootprint_bytes = \"16MiB\"\n";
    let r = run(toml);
    let note = r
        .warnings
        .iter()
        .find(|w| w.contains("NAND page rows"))
        .expect("noted");
    assert!(
        note.contains("only 8 of the 32 dies") && note.contains("at least 128"),
        "{note}"
    );
    let wide = run(&toml.replace("pages_per_block = 32", "pages_per_block = 128"));
    assert!(!wide.warnings.iter().any(|w| w.contains("NAND page rows")));
}

#[test]
fn in_order_admission_makes_saturated_writes_alike() {
    // A 1 MiB write cache drained above half full, 64 random writes outstanding on a filled
    // device whose GC bounds them, 16 KiB NAND pages (a drained unit's slot frees only when its
    // page's last unit is programmed, so slots free in bursts). Earliest-slot: most writes find a
    // slot at once and a few wait for a stalled flush (p50 far below the mean). In order: they wait their turn (p50 near the
    // mean), at the same throughput.
    let toml = |admission: &str| {
        format!(
            "[device]\nlogical_bytes = \"64MiB\"\nchannels = 4\nchips_per_channel = 2\npages_per_block = 64\nop = 0.12\n\
             [nand]\nread_us = 50\nprogram_us = 500\nerase_us = 100\nphysical_page_bytes = \"16KiB\"\n\
             [buffer]\nkind = \"fifo\"\nbytes = \"1MiB\"\ndrain_watermark = 0.5\nadmission = \"{admission}\"\n\
             [run]\nmode = \"timed\"\nprecondition = \"fill-random\"\nqueue_depth = 64\nwarmup_requests = 5000\n\
             [workload]\nkind = \"uniform\"\nread_fraction = 0.0\nrequests = 40000\nfootprint_bytes = \"64MiB\"\n"
        )
    };
    let (any, fifo) = (run(&toml("earliest-slot")), run(&toml("in-order")));
    let ratio =
        |r: &RunResult| r.metrics["latency.write.p50_us"] / r.metrics["latency.write.mean_us"];
    assert!(ratio(&any) < 0.2, "earliest-slot p50/mean {}", ratio(&any));
    assert!(
        (0.8..1.2).contains(&ratio(&fifo)),
        "in-order p50/mean {}",
        ratio(&fifo)
    );
    let (a, b) = (
        any.metrics["throughput.iops"],
        fifo.metrics["throughput.iops"],
    );
    assert!((b / a - 1.0).abs() < 0.05, "{a} vs {b}");
    // Counts are the same: admission only places writes in time.
    assert_eq!(
        any.metrics["nand.programs.total"],
        fifo.metrics["nand.programs.total"]
    );
}

#[test]
fn a_submission_queue_bound_to_one_core_tops_out_at_its_core() {
    // 64 dies could serve 1.28 M reads/s; four firmware cores of 10 µs a command serve 400,000.
    // Bound to its queue's core, one flow gets one core: 100,000; two flows two: 200,000.
    let ctl = |affinity: bool| {
        format!("[controller]\ncores = 4\ncommand_us = 10\nqueue_affinity = {affinity}\n")
    };
    let iops = |host: &str, flows: &[(u32, Option<u32>)]| {
        run(&device(64, host, "", flows, 20_000)).metrics["throughput.iops"]
    };
    let pooled = iops(&ctl(false), &[(64, None)]);
    assert!((pooled / 400_000.0 - 1.0).abs() < 0.01, "{pooled}");
    let bound = iops(&ctl(true), &[(64, None)]);
    assert!((bound / 100_000.0 - 1.0).abs() < 0.01, "{bound}");
    let two = iops(&ctl(true), &[(32, None), (32, None)]);
    assert!((two / 200_000.0 - 1.0).abs() < 0.01, "{two}");
    // Five queues on four cores: the first and the fifth share core 0, which sets the pace of
    // both; the three others run at their cores' 100,000 each.
    let five = run(&device(64, &ctl(true), "", &[(48, None); 5], 10_000));
    let per_flow: Vec<f64> = (0..5)
        .map(|i| five.metrics[&format!("flow.{i}.throughput.iops")])
        .collect();
    for i in [0, 4] {
        assert!((per_flow[i] / 50_000.0 - 1.0).abs() < 0.02, "{per_flow:?}");
    }
    for i in 1..4 {
        assert!((per_flow[i] / 100_000.0 - 1.0).abs() < 0.02, "{per_flow:?}");
    }
    let e = error(&device(
        64,
        "[controller]\nqueue_affinity = true\n",
        "",
        &[(1, None)],
        10,
    ));
    assert!(
        e.contains("controller.queue_affinity") && e.contains("cores"),
        "{e}"
    );
}
