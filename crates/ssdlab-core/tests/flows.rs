//! Several flows on one device (`[[flows]]`): one flow is today's run bit for bit whatever the
//! front end; round robin shares a saturated device equally, weighted round robin by weight;
//! the urgent class is fetched first; open-loop flows at low load are not slowed; each flow
//! keeps to its range; configuration errors name the flow's key.

mod common;
use common::{error, run};
use ssdlab_core::config::{FlowConfig, RunConfig};
use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config, RunResult};
use std::path::{Path, PathBuf};

fn traces_dir() -> PathBuf {
    match std::env::var_os("SSDLAB_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    }
}

/// `cfg` (a single workload) with its workload, queue depth and cap moved into one flow.
fn as_one_flow(cfg: &Config) -> Config {
    let mut f = cfg.clone();
    let run = RunConfig::default();
    f.flows = vec![FlowConfig {
        workload: std::mem::take(&mut f.workload),
        queue_depth: cfg.run.queue_depth,
        max_inflight: cfg.run.max_inflight,
        ..Default::default()
    }];
    (f.run.queue_depth, f.run.max_inflight) = (run.queue_depth, run.max_inflight);
    f
}

const GC_HEAVY: &str =
    "[workload]\nkind = \"uniform\"\nrequests = 6000\nfootprint_bytes = \"16MiB\"\n\
                        read_fraction = 0.3\n\
                        [device]\nlogical_bytes = \"16MiB\"\npages_per_block = 32\nop = 0.1\n\
                        channels = 2\nchips_per_channel = 2\n";

#[test]
fn one_flow_is_today_with_every_front_end() {
    let mechanisms = "[controller]\ncores = 4\ncommand_us = 3.0\npage_us = 0.5\nwake_us = 1000.0\n\
                      [host]\nlink_mib_s = 3300.0\n\
                      [buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\ndrain_watermark = 0.8\n\
                      [nand]\nsuspend = \"program-erase\"\ncell = \"tlc\"\nread_csb_us = 70.0\n\
                      read_msb_us = 90.0\nprogram_csb_us = 1200.0\nprogram_msb_us = 2000.0\n\
                      physical_page_bytes = \"16KiB\"\n";
    let timed = "[run]\nmode = \"timed\"\nprecondition = \"fill\"\nwarmup_requests = 500\n";
    let msr = traces_dir().join("caffeine_msr_hm0_sample/msr-cambridge1-sample.csv");
    let open_loop = |iops: u32| {
        GC_HEAVY.replace(
            "read_fraction = 0.3\n",
            &format!("read_fraction = 0.3\narrival = \"poisson\"\niops = {iops}\n"),
        )
    };
    let cases = [
        (
            "mechanisms, QD 32",
            format!(
                "{}{mechanisms}{timed}queue_depth = 32\n",
                GC_HEAVY.replace("op = 0.1\n", "op = 0.1\nplanes_per_die = 2\n")
            ),
        ),
        (
            "read-priority, QD 16",
            format!("{GC_HEAVY}[buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\n{timed}queue_depth = 16\nscheduler = \"read-priority\"\n"),
        ),
        (
            "write-stop, open loop",
            format!("{}[buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\n{timed}queue_depth = 0\nscheduler = \"write-stop\"\n", open_loop(3000)),
        ),
        (
            "idle draining and background GC, open loop",
            format!("{}[ftl]\nbackground_gc = true\n\
                     [buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\ndrain_idle_us = 200.0\n{timed}queue_depth = 0\n", open_loop(1500)),
        ),
        (
            "MSR trace, open loop, cap, two passes",
            format!(
                "[workload]\nkind = \"trace\"\npath = \"{}\"\naddress_map = \"compact\"\n\
                 [device]\npages_per_block = 32\nchannels = 4\n[buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\n\
                 drain_watermark = 0.5\n\
                 [run]\nmode = \"timed\"\nqueue_depth = 0\nmax_inflight = 4\nrepeat = 2\nsample_every = 1000\n",
                msr.display()
            ),
        ),
    ];
    for (name, toml) in cases {
        let c = Config::from_toml_str(&toml).unwrap();
        let (single, flows) = (
            simulate(&c, &mut NoProgress).unwrap(),
            simulate(&as_one_flow(&c), &mut NoProgress).unwrap(),
        );
        let ours = |k: &&String| !k.starts_with("flow.") && *k != "time.clock_thread";
        let keys: Vec<_> = single.metrics.keys().filter(ours).collect();
        assert_eq!(
            keys,
            flows.metrics.keys().filter(ours).collect::<Vec<_>>(),
            "{name}"
        );
        for k in keys {
            let (a, b) = (single.metrics[k], flows.metrics[k]);
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{name}: {k} = {a} alone, {b} as a flow"
            );
        }
        for (k, h) in &single.histograms {
            assert_eq!(&flows.histograms[k], h, "{name}: histogram {k}");
        }
        assert_eq!(single.series.len(), flows.series.len(), "{name}");
        assert_eq!(flows.metrics["flow.0.waf_share"], 1.0, "{name}");
        assert!(single.metrics["run.measured_requests"] > 0.0, "{name}");
    }
}

/// Two statistically identical closed-loop flows (their own seeds) on 8 × 4 dies, GC on.
fn twins(host: &str, weights: (u32, u32), requests: (u64, u64)) -> String {
    let flow = |w: u32, n: u64| {
        format!(
            "[[flows]]\nqueue_depth = 32\nweight = {w}\n[flows.workload]\nkind = \"uniform\"\n\
             requests = {n}\nfootprint_bytes = \"256MiB\"\nread_fraction = 0.7\n"
        )
    };
    format!(
        "[device]\nchannels = 8\nchips_per_channel = 4\nlogical_bytes = \"512MiB\"\nop = 0.25\n\
         [run]\nmode = \"timed\"\nprecondition = \"fill\"\nwarmup_requests = 2000\nalone = true\n\
         [host]\n{host}{}{}",
        flow(weights.0, requests.0),
        flow(weights.1, requests.1)
    )
}

fn iops(r: &RunResult, i: usize) -> f64 {
    r.metrics[&format!("flow.{i}.throughput.iops")]
}

#[test]
fn round_robin_shares_a_device_equally() {
    let r = run(&twins("", (1, 1), (60_000, 60_000)));
    let ratio = iops(&r, 0) / iops(&r, 1);
    assert!((ratio - 1.0).abs() <= 0.02, "throughput ratio {ratio}");
    assert!(
        r.metrics["fairness"] >= 0.98,
        "fairness {}",
        r.metrics["fairness"]
    );
    // Every measured request is one flow's.
    let n = r.metrics["flow.0.requests"] + r.metrics["flow.1.requests"];
    assert_eq!(n, r.metrics["run.measured_requests"]);
    let share = r.metrics["flow.0.waf_share"] + r.metrics["flow.1.waf_share"];
    assert!((share - 1.0).abs() < 1e-12);
    // Slowdown = shared ÷ alone mean response time.
    for i in 0..2 {
        let s = r.metrics[&format!("flow.{i}.latency.all.mean_us")]
            / r.metrics[&format!("flow.{i}.alone.latency.all.mean_us")];
        assert_eq!(s, r.metrics[&format!("flow.{i}.slowdown")]);
        assert!(s > 1.5, "two saturating flows slow each other: {s}");
    }
}

#[test]
fn weighted_round_robin_shares_a_saturated_device_by_weight() {
    // 8 commands in the device at once: the queues stay full and the arbitration decides;
    // request counts in the weights' ratio, so both flows run to about the same end.
    let host = "arbitration = \"weighted-round-robin\"\ndevice_queue_depth = 8\n";
    for (w0, w1) in [(3, 1), (2, 1)] {
        let r = run(&twins(
            host,
            (w0, w1),
            (30_000 * w0 as u64, 30_000 * w1 as u64),
        ));
        let ratio = iops(&r, 0) / iops(&r, 1);
        let want = w0 as f64 / w1 as f64;
        assert!(
            (ratio / want - 1.0).abs() <= 0.02,
            "{w0}:{w1}: ratio {ratio}"
        );
    }
}

#[test]
fn the_urgent_class_is_fetched_first() {
    // Two commands at once; the urgent flow keeps more than that outstanding, so while it has
    // requests left the other flow's get no command slot.
    let cfg = |arbitration: &str| {
        format!(
            "[device]\nchannels = 2\nchips_per_channel = 2\nlogical_bytes = \"64MiB\"\n\
             [run]\nmode = \"timed\"\nprecondition = \"fill\"\n[host]\narbitration = \"{arbitration}\"\ndevice_queue_depth = 2\n\
             [[flows]]\nqueue_depth = 4\npriority = \"urgent\"\n[flows.workload]\nkind = \"uniform\"\n\
             requests = 3000\nfootprint_bytes = \"32MiB\"\nread_fraction = 1.0\n\
             [[flows]]\nqueue_depth = 8\n[flows.workload]\nkind = \"uniform\"\nrequests = 3000\n\
             footprint_bytes = \"32MiB\"\nread_fraction = 1.0\n"
        )
    };
    let span_us =
        |r: &RunResult, i: usize| r.metrics[&format!("flow.{i}.requests")] / iops(r, i) * 1e6;
    let wrr = run(&cfg("weighted-round-robin"));
    // The other flow's first requests waited for all of the urgent flow's.
    assert!(wrr.metrics["flow.1.latency.all.max_us"] >= span_us(&wrr, 0));
    let rr = run(&cfg("round-robin"));
    assert!(rr.metrics["flow.1.latency.all.max_us"] < 0.1 * span_us(&rr, 0));
    assert!(rr
        .warnings
        .iter()
        .any(|w| w.contains("flows[0]: priority and weight are not used")));
}

#[test]
fn open_loop_flows_at_low_load_are_not_slowed() {
    let flow = |seed: u64| {
        format!(
            "[[flows]]\nqueue_depth = 0\n[flows.workload]\nkind = \"uniform\"\nrequests = 5000\n\
             footprint_bytes = \"128MiB\"\nread_fraction = 0.7\narrival = \"poisson\"\niops = 100\nseed = {seed}\n"
        )
    };
    let r = run(&format!(
        "[device]\nchannels = 8\nchips_per_channel = 4\nlogical_bytes = \"512MiB\"\n\
         [buffer]\nkind = \"none\"\n\
         [run]\nmode = \"timed\"\nprecondition = \"fill\"\nalone = true\n{}{}",
        flow(1),
        flow(2)
    ));
    for i in 0..2 {
        let s = r.metrics[&format!("flow.{i}.slowdown")];
        assert!((s - 1.0).abs() <= 0.01, "flow {i}: slowdown {s}");
    }
    assert!(r.metrics["fairness"] >= 0.98);
}

#[test]
fn each_flow_keeps_to_its_range() {
    // Two flows, a quarter and three quarters of a 64 MiB device; each writes its whole range
    // (folded), checked against the latest versions.
    let flow = |share: f64, mib: u64| {
        format!(
            "[[flows]]\nshare = {share}\n[flows.workload]\nkind = \"uniform\"\nrequests = 20000\n\
             footprint_bytes = \"{mib}MiB\"\naddress_map = \"fold\"\n"
        )
    };
    let base = "[device]\nlogical_bytes = \"64MiB\"\npages_per_block = 32\n\
                [run]\nmode = \"timed\"\ncheck_integrity = true\n";
    let r = run(&format!("{base}{}{}", flow(0.25, 16), flow(0.75, 48)));
    assert_eq!(r.metrics["run.measured_requests"], 40_000.0);
    // Without folding, a flow whose addresses pass its range is an error naming it.
    let e = error(
        &format!("{base}{}{}", flow(0.25, 32), flow(0.75, 32))
            .replace("address_map = \"fold\"\n", ""),
    );
    assert!(e.contains("flows[0]'s range"), "{e}");
    // An "auto" device holds every flow's footprint, each in its own range.
    let auto = run(&format!(
        "[device]\npages_per_block = 32\n[run]\nmode = \"timed\"\ncheck_integrity = true\n{}{}",
        flow(0.25, 16).replace("share = 0.25\n", ""),
        flow(0.75, 48).replace("share = 0.75\n", "")
    ));
    assert_eq!(
        auto.metrics["device.logical_pages"],
        (64 << 20) as f64 / 4096.0
    );
}

#[test]
fn configuration_errors_name_the_flow() {
    // A flow's own keys come before its workload's table.
    let flow = |keys: &str| {
        format!("[[flows]]\n{keys}[flows.workload]\nkind = \"uniform\"\nrequests = 100\n")
    };
    let timed = "[run]\nmode = \"timed\"\n";
    for (toml, want) in [
        (flow(""), "several flows share the device in time"),
        (
            format!("{timed}{}", flow("priority = \"vip\"\n")),
            "flows[0].priority",
        ),
        (
            format!("{timed}{}{}", flow(""), flow("weight = 0\n")),
            "flows[1].weight",
        ),
        (
            format!(
                "{timed}{}[[flows]]\n[flows.workload]\nkind = \"nosuch\"\n",
                flow("")
            ),
            "flows[1].workload.kind",
        ),
        (
            format!("{timed}{}", flow("queue_depth = 4\nmax_inflight = 2\n")),
            "flows[0].max_inflight",
        ),
        (
            format!("{timed}{}{}", flow("share = 0.5\n"), flow("")),
            "give every flow one, or none",
        ),
        (
            format!("{timed}{}{}", flow("share = 0.7\n"), flow("share = 0.6\n")),
            "add up to",
        ),
        (
            format!("{timed}[workload]\nkind = \"zipf\"\n{}", flow("")),
            "[workload] would not be used",
        ),
        (format!("{timed}{}", flow("bogus = 1\n")), "flows[0].bogus"),
        (
            format!("{timed}[host]\narbitration = \"lottery\"\n{}", flow("")),
            "host.arbitration",
        ),
        (
            format!("{timed}{}read_fraction = 2.0\n", flow("")),
            "flows[0].workload.read_fraction",
        ),
        (
            format!(
                "{timed}[placement]\nkind = \"oracle\"\n[ftl]\nkind = \"lines\"\n{}",
                flow("")
            ),
            "placement.kind",
        ),
    ] {
        let e = error(&toml);
        assert!(e.contains(want), "{want}: {e}");
    }
}

/// A reader confined to channel 0 beside a neighbour on channels 1–7, no write buffer: `load`
/// sets the neighbour's requests and queue depth.
fn confined(neighbour: &str, load: (u64, u32)) -> String {
    format!(
        "[device]\nchannels = 8\nchips_per_channel = 4\nlogical_bytes = \"512MiB\"\nop = 0.25\n\
         [buffer]\nkind = \"none\"\n\
         [run]\nmode = \"timed\"\nprecondition = \"fill\"\ncheck_integrity = true\nalone = true\n\
         [[flows]]\nqueue_depth = 8\nchannels = [0]\n[flows.workload]\nkind = \"uniform\"\n\
         requests = 10000\nfootprint_bytes = \"256MiB\"\nread_fraction = 0.5\n\
         [[flows]]\nqueue_depth = {}\n{neighbour}[flows.workload]\nkind = \"uniform\"\n\
         requests = {}\nfootprint_bytes = \"256MiB\"\nread_fraction = 0.1\n",
        load.1, load.0
    )
}

#[test]
fn a_flow_confined_to_a_channel_is_isolated() {
    // Every operation of each set's FTL stays in its blocks (`check_integrity` checks each one),
    // so nothing the neighbour does reaches the reader: its results are the same whatever the
    // neighbour's load, and the same as alone.
    let others = "channels = [1, 2, 3, 4, 5, 6, 7]\n";
    let light = run(&confined(others, (10_000, 4)));
    let heavy = run(&confined(others, (40_000, 64)));
    let reader: Vec<_> = light
        .metrics
        .keys()
        .filter(|k| {
            k.starts_with("flow.0.")
                && !["alone", "slowdown", "waf_share"]
                    .iter()
                    .any(|x| k.contains(x))
        })
        .collect();
    assert!(reader.len() > 20);
    for k in reader {
        let (a, b) = (light.metrics[k], heavy.metrics[k]);
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "{k}: {a} beside a light neighbour, {b} beside a heavy one"
        );
    }
    assert_eq!(
        light.histograms["flow.0.latency.read_ns"],
        heavy.histograms["flow.0.latency.read_ns"]
    );
    assert_eq!(heavy.metrics["flow.0.slowdown"], 1.0);
    // A neighbour on every die (channel 0's included) does slow the reader.
    let shared = run(&confined("", (40_000, 64)));
    assert!(
        shared.metrics["flow.0.slowdown"] > 1.2,
        "{}",
        shared.metrics["flow.0.slowdown"]
    );
    // Each set has its own FTL and blocks: together, the device.
    assert_eq!(
        heavy.metrics["device.logical_pages"],
        (512 << 20) as f64 / 4096.0
    );
}

#[test]
fn confinement_errors_name_the_key() {
    let base = "[device]\nchannels = 2\nchips_per_channel = 2\n[run]\nmode = \"timed\"\n";
    for (flow, want) in [
        (
            "channels = [2]\n",
            "`flows[0].channels`: channel 2 does not exist",
        ),
        ("dies = [4]\n", "`flows[0].dies`: die 4 does not exist"),
        (
            "channels = [0]\ndies = [2, 3]\n",
            "none of its dies is on its channels",
        ),
        (
            "channels = [0]\n[ftl]\nkind = \"dftl\"\n",
            "need the page FTL",
        ),
    ] {
        let e = error(&format!("{base}[[flows]]\n{flow}"));
        assert!(e.contains(want), "{want}: {e}");
    }
}

/// `flows[i].fast_forward_requests`: a sequential writer fast-forwarded through two passes of a
/// randomly preconditioned 4 MiB device (1,024 pages) measures the sequential-overwrite state,
/// whose GC victims hold nothing: WAF exactly 1, where the same 1,024 measured requests without
/// the fast-forward pay the random state's GC copies. The metrics count only the requests after
/// it; an open-loop flow refuses it.
#[test]
fn fast_forward_starts_the_measured_window_from_the_state_it_leaves() {
    let text = |ff: u64, depth: u32| {
        format!(
            "[device]\nlogical_bytes = \"4MiB\"\npages_per_block = 16\nop = 0.25\nchannels = 2\n\
             chips_per_channel = 2\n[buffer]\nkind = \"none\"\n\
             [run]\nmode = \"timed\"\nprecondition = \"fill-random\"\n\
             [[flows]]\nqueue_depth = {depth}\nfast_forward_requests = {ff}\n\
             [flows.workload]\nkind = \"sequential\"\nrequests = {}\nfootprint_bytes = \"4MiB\"\n",
            ff + 1024
        )
    };
    let after = run(&text(2048, 4)).metrics;
    let before = run(&text(0, 4)).metrics;
    assert_eq!(after["flow.0.requests"], 1024.0);
    assert_eq!(after["nand.programs.host"], 1024.0);
    assert_eq!(after["waf"], 1.0);
    assert_eq!(before["flow.0.requests"], 1024.0);
    assert!(before["waf"] > 1.2, "random state: waf {}", before["waf"]);
    let e = error(&text(10, 0));
    assert!(e.contains("flows[0].fast_forward_requests"), "{e}");
}
