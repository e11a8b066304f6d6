//! Refactoring and speed work must not change what is simulated: every metric, histogram and
//! time series of a fixed set of runs (every FTL and buffer, padding policies, GC policies,
//! synthetic workloads and a reference trace) is compared bit for bit with the stored results in
//! tests/golden/metrics.json.
//!
//! The stored results are regenerated with `SSDLAB_BLESS=1 cargo test --test golden_metrics`,
//! which is only right when a change is meant to alter results (say so in the commit).

use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DEVICE: &str = "[device]\nlogical_bytes = \"16MiB\"\npages_per_block = 32\nop = 0.1\n";
const ZIPF: &str = "[workload]\nkind = \"zipf\"\nrequests = 20000\nfootprint_bytes = \"12MiB\"\n\
                    request_bytes = \"8KiB\"\nread_fraction = 0.1\nseed = 7\n";
const DESKTOP: &str = "[workload]\nkind = \"desktop\"\nrequests = 20000\n\
                       footprint_bytes = \"14MiB\"\nseed = 3\n";

fn traces_dir() -> PathBuf {
    match std::env::var_os("SSDLAB_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    }
}

/// (name, configuration) of every run compared.
fn runs() -> Vec<(&'static str, String)> {
    let run = "[run]\nsample_every = 5000\ncheck_integrity = true\n";
    let mut v: Vec<(&'static str, String)> = vec![
        ("page-lru-greedy", format!("{ZIPF}{DEVICE}[buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\n")),
        ("page-none-cost-benefit-streams", format!(
            "{ZIPF}{DEVICE}[ftl]\ngc = \"cost-benefit\"\n[ftl.page]\nstreams = 2\n[buffer]\nkind = \"none\"\n")),
        ("page-fifo-shared-frontier", format!(
            "{DESKTOP}{DEVICE}[ftl]\ngc = \"fifo\"\n[ftl.page]\nseparate_gc_frontier = false\n\
             [buffer]\nkind = \"block-lru\"\nbytes = \"512KiB\"\n")),
        ("block-blocklru", format!("{DESKTOP}{DEVICE}[ftl]\nkind = \"block\"\n\
             [buffer]\nkind = \"block-lru\"\nbytes = \"512KiB\"\n")),
        ("block-fab-fixed", format!("{ZIPF}{DEVICE}[ftl]\nkind = \"block\"\n\
             [buffer]\nkind = \"fab\"\nbytes = \"512KiB\"\npadding = \"fixed\"\n[padding.fixed]\nthreshold = 0.25\n")),
        ("bast-bplru", format!("{DESKTOP}{DEVICE}[ftl]\nkind = \"bast\"\nlog_blocks = 8\n\
             [buffer]\nkind = \"bplru\"\nbytes = \"512KiB\"\n")),
        ("bast-single-hitstat", format!("{DESKTOP}{DEVICE}[ftl]\nkind = \"bast\"\n\
             log_blocks = 6\n[ftl.bast]\nvariant = \"single\"\n\
             [buffer]\nkind = \"hitstat\"\nbytes = \"512KiB\"\n[buffer.hitstat]\ninitial_levels = 8\nperiod = 512\n")),
        ("bast-chain-allmerges-hitstat", format!("{DESKTOP}{DEVICE}[ftl]\nkind = \"bast\"\n\
             model_stats = \"all-merges\"\n[ftl.bast]\nchain_limit = 2\nlookahead = 4\n\
             [buffer]\nkind = \"hitstat\"\nbytes = \"512KiB\"\npadding_fill = \"existing\"\n")),
        ("fast-hitstat", format!("{DESKTOP}{DEVICE}[ftl]\nkind = \"fast\"\nlog_blocks = 8\n\
             [buffer]\nkind = \"hitstat\"\nbytes = \"512KiB\"\n[buffer.hitstat]\nage_threshold = 3000\n")),
        ("fast-hitstat-adj", format!("{ZIPF}{DEVICE}[ftl]\nkind = \"fast\"\n\
             [buffer]\nkind = \"hitstat-adj\"\nbytes = \"512KiB\"\n[buffer.hitstat-adj]\nhit_log = 16\ninitial_levels = 4\n")),
        ("fast-bplru-full", format!("{ZIPF}{DEVICE}[ftl]\nkind = \"fast\"\n\
             [buffer]\nkind = \"bplru\"\nbytes = \"512KiB\"\n[buffer.bplru]\ncompensation = \"full\"\n")),
        ("bast-fab-model", format!("{DESKTOP}{DEVICE}[ftl]\nkind = \"bast\"\n\
             [buffer]\nkind = \"fab\"\nbytes = \"512KiB\"\npadding = \"model\"\n\
             [run]\nwarmup_requests = 3000\nrepeat = 2\nprecondition = \"fill\"\n")),
    ];
    for (_, cfg) in v.iter_mut() {
        if !cfg.contains("[run]") {
            cfg.push_str(run);
        }
    }
    let msr = traces_dir().join("caffeine_msr_hm0_sample/msr-cambridge1-sample.csv");
    v.push((
        "msr-trace-page-lru",
        format!(
            "[workload]\nkind = \"trace\"\npath = \"{}\"\naddress_map = \"compact\"\n\
             [device]\npages_per_block = 32\n[buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\n{run}",
            msr.display()
        ),
    ));
    v
}

/// Numbers as Rust's shortest round-trip text, so that the comparison is exact (and NaN fits).
fn num(x: f64) -> serde_json::Value {
    serde_json::json!(x.to_string())
}

fn outcome(cfg: &str) -> serde_json::Value {
    let c = Config::from_toml_str(cfg).unwrap();
    let r = simulate(&c, &mut NoProgress).unwrap();
    let metrics: BTreeMap<_, _> = r
        .metrics
        .iter()
        .map(|(k, v)| (k.clone(), num(*v)))
        .collect();
    let series: BTreeMap<_, Vec<_>> = r
        .series
        .iter()
        .map(|(k, v)| (k.clone(), v.iter().map(|x| num(*x)).collect()))
        .collect();
    serde_json::json!({"metrics": metrics, "histograms": r.histograms, "series": series})
}

#[test]
fn results_are_unchanged() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/metrics.json");
    let now: BTreeMap<String, serde_json::Value> = runs()
        .into_iter()
        .map(|(name, cfg)| (name.to_string(), outcome(&cfg)))
        .collect();
    if std::env::var_os("SSDLAB_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, serde_json::to_string_pretty(&now).unwrap() + "\n").unwrap();
        return;
    }
    let text = std::fs::read_to_string(&golden).expect("tests/golden/metrics.json (bless it)");
    let stored: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(
        stored.keys().collect::<Vec<_>>(),
        now.keys().collect::<Vec<_>>(),
        "the set of runs changed"
    );
    for (name, want) in &stored {
        let got = &now[name];
        for part in ["metrics", "histograms", "series"] {
            let (w, g) = (&want[part], &got[part]);
            if w != g {
                let (w, g) = (w.as_object().unwrap(), g.as_object().unwrap());
                let diff: Vec<String> = w
                    .keys()
                    .chain(g.keys())
                    .filter(|k| w.get(*k) != g.get(*k))
                    .map(|k| format!("{k}: {:?} -> {:?}", w.get(k), g.get(k)))
                    .take(8)
                    .collect();
                panic!("{name}: {part} changed:\n  {}", diff.join("\n  "));
            }
        }
    }
}

/// Timing must not change what is written: the same runs in timed mode (closed loop, several
/// dies and channels) give every counts-mode metric, histogram and series column exactly.
#[test]
fn timed_mode_counts_equal_counts_mode() {
    let timed = "[device]\nchannels = 2\nchips_per_channel = 2\ndies_per_chip = 2\n";
    for (name, cfg) in runs() {
        let counts = outcome(&cfg);
        let mut c = Config::from_toml_str(&cfg).unwrap();
        let t = Config::from_toml_str(timed).unwrap();
        c.run.mode = "timed".into();
        c.run.queue_depth = 8;
        (
            c.device.channels,
            c.device.chips_per_channel,
            c.device.dies_per_chip,
        ) = (
            t.device.channels,
            t.device.chips_per_channel,
            t.device.dies_per_chip,
        );
        let r = simulate(&c, &mut NoProgress).unwrap();
        for (k, want) in counts["metrics"].as_object().unwrap() {
            assert_eq!(&num(r.metrics[k]), want, "{name}: metric {k}");
        }
        let hist = serde_json::to_value(&r.histograms).unwrap();
        for (k, want) in counts["histograms"].as_object().unwrap() {
            assert_eq!(&hist[k], want, "{name}: histogram {k}");
        }
        for (k, want) in counts["series"].as_object().unwrap() {
            let got: Vec<_> = r.series[k].iter().map(|x| num(*x)).collect();
            assert_eq!(&serde_json::json!(got), want, "{name}: series {k}");
        }
        // Every request completed, and timed.
        let done: u64 = r.histograms["latency.all_ns"].iter().map(|&(_, n)| n).sum();
        assert_eq!(done as f64, r.metrics["run.measured_requests"], "{name}");
        assert!(r.metrics["time.simulated_us"] > 0.0, "{name}");
    }
}

/// `[[flows]]` with one flow is today's run: the golden runs in timed mode, each also given as
/// one flow (its workload and queue depth moved into `[[flows]]`), give every metric, histogram
/// and series column bit for bit.
#[test]
fn one_flow_is_the_single_workload() {
    for (name, cfg) in runs() {
        let mut c = Config::from_toml_str(&cfg).unwrap();
        c.run.mode = "timed".into();
        c.run.queue_depth = 8;
        c.device.channels = 2;
        c.device.chips_per_channel = 2;
        let mut f = c.clone();
        f.flows = vec![ssdlab_core::config::FlowConfig {
            workload: std::mem::take(&mut f.workload),
            queue_depth: 8,
            ..Default::default()
        }];
        f.run.queue_depth = ssdlab_core::config::RunConfig::default().queue_depth;
        let (single, flows) = (
            simulate(&c, &mut NoProgress).unwrap(),
            simulate(&f, &mut NoProgress).unwrap(),
        );
        let ours = |k: &String| !k.starts_with("flow.") && k != "time.clock_thread";
        let keys: Vec<_> = flows.metrics.keys().filter(|k| ours(k)).collect();
        assert_eq!(
            keys,
            single
                .metrics
                .keys()
                .filter(|k| ours(k))
                .collect::<Vec<_>>(),
            "{name}"
        );
        for k in keys {
            assert_eq!(
                num(flows.metrics[k]),
                num(single.metrics[k]),
                "{name}: metric {k}"
            );
        }
        for (k, h) in &single.histograms {
            assert_eq!(&flows.histograms[k], h, "{name}: histogram {k}");
        }
        let exact = |s: &BTreeMap<String, Vec<f64>>| -> BTreeMap<String, Vec<serde_json::Value>> {
            s.iter()
                .map(|(k, v)| (k.clone(), v.iter().map(|x| num(*x)).collect()))
                .collect()
        };
        assert_eq!(
            exact(&flows.series),
            exact(&single.series),
            "{name}: series"
        );
        // The flow's own metrics are the run's.
        for k in [
            "latency.all.mean_us",
            "latency.read.p99_us",
            "throughput.iops",
        ] {
            assert_eq!(
                num(flows.metrics[&format!("flow.0.{k}")]),
                num(single.metrics[k]),
                "{name}: {k}"
            );
        }
    }
}
