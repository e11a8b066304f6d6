//! `run.clock_thread`: timed runs that place requests in time on a second thread give exactly
//! the one-thread results (every metric and histogram), over batches, passes, a warm-up,
//! watermark draining and every timed mechanism; runs where time feeds back into the
//! simulation stay on one thread.

use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config};
use std::path::{Path, PathBuf};

/// GC-heavy random writes and reads on 16 MiB after a fill, several batches of requests.
const BASE: &str = "[workload]\nkind = \"uniform\"\nrequests = 7000\nfootprint_bytes = \"16MiB\"\n\
                    read_fraction = 0.3\n\
                    [device]\nlogical_bytes = \"16MiB\"\npages_per_block = 32\nop = 0.1\n\
                    channels = 2\nchips_per_channel = 2\n\
                    [run]\nmode = \"timed\"\nprecondition = \"fill\"\nwarmup_requests = 500\n";

/// Every mechanism of the real-device model (controller, link, wake-up, watermark draining,
/// suspension, planes, TLC page times, 16 KiB pages of four mapping units).
const MECHANISMS: &str =
    "[controller]\ncores = 4\ncommand_us = 3.0\npage_us = 0.5\nwake_us = 1000.0\n\
                          [host]\nlink_mib_s = 3300.0\n\
                          [buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\ndrain_watermark = 0.8\n\
                          [nand]\nsuspend = \"program-erase\"\ncell = \"tlc\"\nread_csb_us = 70.0\n\
                          read_msb_us = 90.0\nprogram_csb_us = 1200.0\nprogram_msb_us = 2000.0\n\
                          physical_page_bytes = \"16KiB\"\n";

fn traces_dir() -> PathBuf {
    match std::env::var_os("SSDLAB_TRACES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    }
}

/// Both ways of running `cfg` (a TOML text whose `[run]` table comes last): metrics and
/// histograms equal but for `time.clock_thread`, which says whether the thread was used.
fn same_both_ways(name: &str, cfg: &str) -> bool {
    let run = |threaded: bool| {
        let c = Config::from_toml_str(&format!("{cfg}clock_thread = {threaded}\n")).unwrap();
        simulate(&c, &mut NoProgress).unwrap()
    };
    let (mut two, mut one) = (run(true), run(false));
    assert_eq!(one.metrics.remove("time.clock_thread"), Some(0.0), "{name}");
    let used = two.metrics.remove("time.clock_thread").unwrap() == 1.0;
    assert_eq!(two.metrics.len(), one.metrics.len(), "{name}");
    for (k, v) in &one.metrics {
        let t = two.metrics[k];
        assert!(
            t.to_bits() == v.to_bits() || (t.is_nan() && v.is_nan()),
            "{name}: {k} = {v} on one thread, {t} on two"
        );
    }
    assert_eq!(one.histograms, two.histograms, "{name}");
    assert!(one.metrics["run.measured_requests"] > 0.0, "{name}");
    used
}

#[test]
fn two_threads_give_one_threads_results() {
    let mech = BASE
        .replace(
            "chips_per_channel = 2\n",
            "chips_per_channel = 2\nplanes_per_die = 2\n",
        )
        .replace("[run]", &format!("{MECHANISMS}[run]"));
    let msr = traces_dir().join("caffeine_msr_hm0_sample/msr-cambridge1-sample.csv");
    let trace = format!(
        "[workload]\nkind = \"trace\"\npath = \"{}\"\naddress_map = \"compact\"\n\
         [device]\npages_per_block = 32\nchannels = 4\n[buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\n\
         drain_watermark = 0.5\n\
         [run]\nmode = \"timed\"\nqueue_depth = 0\nmax_inflight = 4\nrepeat = 2\n",
        msr.display()
    );
    let runs = [
        ("page, QD 32", format!("{BASE}queue_depth = 32\n")),
        ("page, QD 1", format!("{BASE}queue_depth = 1\n")),
        (
            "dftl, QD 128",
            format!(
                "{}queue_depth = 128\n",
                BASE.replace("[run]", "[ftl]\nkind = \"dftl\"\n[run]")
            ),
        ),
        (
            // Operations that wait for others (map reads, cached translation pages, copies)
            // over batches of requests and their drains.
            "ptsd, multi-page requests, drains, QD 8",
            format!(
                "{}queue_depth = 8\n",
                BASE.replace(
                    "read_fraction = 0.3\n",
                    "read_fraction = 0.3\nrequest_bytes = \"16KiB\"\n"
                )
                .replace(
                    "[run]",
                    "[ftl]\nkind = \"dftl\"\n[ftl.dftl]\ngranularity = \"page\"\n\
                         partition = \"fixed\"\n[buffer]\nkind = \"lru\"\nbytes = \"256KiB\"\n\
                         drain_watermark = 0.5\n[run]"
                )
            ),
        ),
        ("every mechanism", format!("{mech}queue_depth = 32\n")),
        ("trace, open loop, two passes", trace),
    ];
    for (name, cfg) in runs {
        assert!(
            same_both_ways(name, &cfg),
            "{name}: the clock thread was not used"
        );
    }
}

/// Where the clock decides what is simulated next or when background work runs, or a time
/// series samples the clock as it goes, the run stays on one thread (with the same results).
#[test]
fn time_that_feeds_back_keeps_one_thread() {
    let runs = [
        (
            "read-priority",
            "scheduler = \"read-priority\"\n".to_string(),
        ),
        ("time series", "sample_every = 1000\n".to_string()),
    ];
    for (name, run) in runs {
        assert!(!same_both_ways(name, &format!("{BASE}{run}")), "{name}");
    }
    let idle = BASE.replace(
        "[run]",
        "[buffer]\nkind = \"lru\"\nbytes = \"64KiB\"\ndrain_idle_us = 100\n[run]",
    );
    assert!(!same_both_ways(
        "idle draining",
        &format!("{idle}queue_depth = 0\n")
    ));
    let gc = BASE.replace("[run]", "[ftl]\nbackground_gc = true\n[run]");
    assert!(!same_both_ways(
        "background GC",
        &format!("{gc}queue_depth = 0\n")
    ));
}
