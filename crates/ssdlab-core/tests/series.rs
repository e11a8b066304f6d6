//! Time series (`run.sample_every`): rows at N, 2N, … and after the final flush; cumulative
//! counts that end at the run's metrics; sampling never changes the results.

use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config, RunResult};

fn run(toml: &str) -> RunResult {
    let cfg = Config::from_toml_str(toml).unwrap();
    simulate(&cfg, &mut NoProgress).unwrap()
}

/// Uniform 4 KiB writes over 2 MiB on a small page-mapped device (preconditioned, so GC runs).
fn base(requests: u64, buffer: &str, run_extra: &str) -> String {
    format!(
        "[workload]\nkind = \"uniform\"\nrequests = {requests}\nrequest_bytes = 4096\nfootprint_bytes = \"2MiB\"\n\
         [device]\nlogical_bytes = \"2MiB\"\npages_per_block = 16\nop = 0.25\n\
         [buffer]\nkind = \"{buffer}\"\nbytes = \"64KiB\"\n\
         [run]\nprecondition = \"fill\"\n{run_extra}\n"
    )
}

fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

#[test]
fn sampling_off_is_empty_and_on_changes_nothing() {
    let off = run(&base(2000, "lru", ""));
    assert!(off.series.is_empty());
    let on = run(&base(2000, "lru", "sample_every = 300"));
    assert_eq!(off.metrics.len(), on.metrics.len());
    for (k, v) in &off.metrics {
        assert!(same(*v, on.metrics[k]), "{k}: {v} vs {}", on.metrics[k]);
    }
    assert!(
        on.metrics["nand.erases"] > 0.0,
        "the case should exercise GC"
    );

    let s = &on.series;
    assert_eq!(
        s["requests"],
        vec![300.0, 600.0, 900.0, 1200.0, 1500.0, 1800.0, 2000.0]
    );
    assert!(s.values().all(|c| c.len() == 7));
    assert!(s["measured"].iter().all(|&m| m == 1.0));
    // One 4 KiB write per request.
    assert_eq!(s["host.write_pages"], s["requests"]);
    // The last row (after the final flush) is the end of the run.
    for (k, col) in s {
        if k != "requests" && k != "measured" {
            let end = on.metrics[k];
            assert!(same(*col.last().unwrap(), end), "{k}: {col:?} vs {end}");
        }
    }
    // Counters are cumulative.
    for k in [
        "nand.erases",
        "nand.programs.total",
        "nand.programs.host",
        "nand.programs.gc",
        "nand.reads.total",
        "buffer.flushes",
        "gc.victims",
    ] {
        assert!(s[k].windows(2).all(|w| w[0] <= w[1]), "{k}: {:?}", s[k]);
    }
    // WAF so far = programs / host pages, row by row.
    let rows = s["nand.programs.total"].iter().zip(&s["host.write_pages"]);
    for (i, (programs, pages)) in rows.enumerate() {
        assert_eq!(s["waf"][i], programs / pages);
    }
}

#[test]
fn rows_match_shorter_runs_and_warmup_rows_count_from_the_start() {
    // Without a buffer nothing is left to flush, so the row at k requests is the end of a run of
    // the first k requests (the same synthetic stream, cut short).
    let full = run(&base(
        1000,
        "none",
        "sample_every = 250\nwarmup_requests = 500",
    ));
    let s = &full.series;
    assert_eq!(s["requests"], vec![250.0, 500.0, 750.0, 1000.0]);
    assert_eq!(s["measured"], vec![0.0, 0.0, 1.0, 1.0]);
    let prefix: Vec<RunResult> = [250, 500, 750, 1000]
        .iter()
        .map(|&k| run(&base(k, "none", "")))
        .collect();
    for k in ["nand.erases", "nand.programs.total", "nand.programs.gc"] {
        let p = |i: usize| prefix[i].metrics[k];
        // Warm-up rows: since the run start; measured rows: since the end of the warm-up.
        assert_eq!(s[k], vec![p(0), p(1), p(2) - p(1), p(3) - p(1)], "{k}");
    }
    assert_eq!(s["host.write_pages"], vec![250.0, 500.0, 250.0, 500.0]);
    assert_eq!(
        full.metrics["nand.erases"],
        *s["nand.erases"].last().unwrap()
    );
}

#[test]
fn too_many_samples_name_the_field() {
    let cfg = Config::from_toml_str(&base(2_000_000, "none", "sample_every = 1")).unwrap();
    let e = simulate(&cfg, &mut NoProgress).unwrap_err().to_string();
    assert!(e.contains("run.sample_every"), "{e}");
}
