//! The kept preconditioned device (`engine/precondition.rs`): a run that starts from it reports
//! exactly what a run that wrote the device reports. One test function, so that no other test
//! of this binary moves the hit counter while it counts.

mod common;
use common::run;
use ssdlab_core::engine::{clear_precondition_cache, precondition_cache_hits};

/// A randomly preconditioned 8 MiB device with a write buffer, a greedy page FTL and 2 flows of
/// `workload` keys (timed, integrity checked), with `op` and `host` keys.
fn device(op: f64, host: &str, workload: &str) -> String {
    let mut s = format!(
        "[device]\nlogical_bytes = \"8MiB\"\nchannels = 4\npages_per_block = 32\nop = {op}\n\
         [nand]\nread_us = 50\nprogram_us = 500\nerase_us = 2000\n\
         [buffer]\nkind = \"fifo\"\nbytes = \"64KiB\"\n\
         [run]\nmode = \"timed\"\nprecondition = \"fill-random\"\ncheck_integrity = true\nseed = 3\n\
         [host]\n{host}"
    );
    for seed in [1, 2] {
        s += &format!(
            "[[flows]]\nnamespace = 0\nqueue_depth = 4\n[flows.workload]\nkind = \"uniform\"\n\
             requests = 3000\nfootprint_bytes = \"8MiB\"\nseed = {seed}\n{workload}"
        );
    }
    s
}

#[test]
fn a_run_from_the_kept_device_reports_what_a_run_that_wrote_it_does() {
    let writes = device(0.25, "", "read_fraction = 0.5\n");
    let reads = device(0.25, "cpu_us = 2\nwake_us = 3\n", "read_fraction = 1.0\n");
    clear_precondition_cache();
    let hits = precondition_cache_hits();
    let first = run(&writes);
    assert_eq!(
        precondition_cache_hits(),
        hits,
        "the first run writes the device"
    );
    // The same run again, and another workload and host on the same device: both from the copy.
    let again = run(&writes);
    let other = run(&reads);
    assert_eq!(precondition_cache_hits(), hits + 2);
    clear_precondition_cache();
    let other_fresh = run(&reads);
    assert_eq!(
        precondition_cache_hits(),
        hits + 2,
        "a cleared cache writes the device"
    );
    for (a, b, what) in [
        (&first, &again, "same run"),
        (&other_fresh, &other, "another run"),
    ] {
        // As text: NaN (a metric with nothing to measure) equals NaN.
        assert_eq!(
            format!("{:?}", a.metrics),
            format!("{:?}", b.metrics),
            "{what}: metrics"
        );
        assert_eq!(a.histograms, b.histograms, "{what}: histograms");
    }
    // The preconditioning left GC work behind (the copy carries the FTL's state, not a fresh
    // device): the write run erases, and every page write is checked for its latest version.
    assert!(first.metrics["nand.erases"] > 0.0);
    assert!(first.metrics["waf"] > 1.0, "{}", first.metrics["waf"]);
    // Another device (more over-provisioning) is not the kept one, nor is another seed.
    let before = precondition_cache_hits();
    run(&device(0.3, "", "read_fraction = 0.5\n"));
    run(&writes.replace("seed = 3\n", "seed = 4\n"));
    assert_eq!(precondition_cache_hits(), before);
}
