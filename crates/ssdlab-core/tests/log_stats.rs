//! Seed 002's log-block statistics through the engine (docs/metrics.md, "Log-block statistics"):
//! over a measured window (warm-up, repeats) the counters, the histograms and the derived ratios
//! agree with each other and with the buffer's flush count, and `ftl.log_utilisation` only
//! changes the utilisation metrics.

use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config, RunResult};

fn run(ftl: &str, extra: &str) -> RunResult {
    let cfg = format!(
        "[workload]\nkind = \"desktop\"\nrequests = 12000\nfootprint_bytes = \"14MiB\"\nseed = 5\n\
         [device]\nlogical_bytes = \"16MiB\"\npages_per_block = 32\nop = 0.1\n\
         [ftl]\nkind = \"{ftl}\"\nlog_blocks = 12\n{extra}\
         [buffer]\nkind = \"block-lru\"\nbytes = \"256KiB\"\n\
         [run]\nwarmup_requests = 4000\nrepeat = 2\ncheck_integrity = true\n"
    );
    simulate(&Config::from_toml_str(&cfg).unwrap(), &mut NoProgress).unwrap()
}

#[test]
fn window_counters_histograms_and_means_agree() {
    for ftl in ["bast", "fast"] {
        let r = run(ftl, "");
        let m = |k: &str| r.metrics[k];
        // Every flush unit the buffer sent is a cluster the FTL received.
        assert_eq!(
            m("ftl.log.requested_clusters"),
            m("buffer.flushes"),
            "{ftl}"
        );
        let (hits, misses) = (m("ftl.log.hits"), m("ftl.log.misses"));
        assert!(hits > 0.0 && misses > 0.0 && hits + misses <= m("buffer.flushes"));
        assert_eq!(m("ftl.log.hit_ratio"), hits / (hits + misses));
        let merged = m("ftl.log.merged_never_rereferenced")
            + m("ftl.log.merged_rereferenced_fits")
            + m("ftl.log.merged_rereferenced_overflows");
        let reref = merged - m("ftl.log.merged_never_rereferenced");
        assert!(reref > 0.0, "{ftl}");
        // The window's histograms count the window's merged log blocks (warm-up subtracted).
        let count = |h: &str| r.histograms[h].iter().map(|x| x.1).sum::<u64>() as f64;
        assert_eq!(count("ftl.log.references_at_merge"), merged, "{ftl}");
        assert_eq!(count("ftl.log.utilisation_at_merge"), merged, "{ftl}");
        assert_eq!(
            count("ftl.log.utilisation_at_merge_rereferenced"),
            reref,
            "{ftl}"
        );
        let never = r.histograms["ftl.log.references_at_merge"]
            .iter()
            .find(|x| x.0 == 1)
            .map_or(0.0, |x| x.1 as f64);
        assert_eq!(never, m("ftl.log.merged_never_rereferenced"));
        // Means from the exact page sums; the percent buckets bound them.
        for (mean, hist, n) in [
            (
                "ftl.log.utilisation_at_merge.mean",
                "ftl.log.utilisation_at_merge",
                merged,
            ),
            (
                "ftl.log.utilisation_at_merge_rereferenced.mean",
                "ftl.log.utilisation_at_merge_rereferenced",
                reref,
            ),
        ] {
            let low: f64 = r.histograms[hist]
                .iter()
                .map(|&(v, c)| (v * c) as f64)
                .sum();
            let high: f64 = r.histograms[hist]
                .iter()
                .map(|&(v, c)| ((v + 1).min(100) * c) as f64)
                .sum();
            let mean = m(mean);
            assert!(
                low / n / 100.0 <= mean && mean <= high / n / 100.0,
                "{ftl}: {mean}"
            );
        }
        assert_eq!(
            m("ftl.log.utilisation_at_merge.mean"),
            m("ftl.log.used_pages_at_merge") / (merged * 32.0)
        );
    }
}

#[test]
fn the_utilisation_reading_changes_only_the_utilisation() {
    for ftl in ["bast", "fast"] {
        let w = run(ftl, "log_utilisation = \"written\"\n");
        let v = run(ftl, "log_utilisation = \"valid\"\n");
        for (k, x) in &w.metrics {
            if k.contains("utilisation") || k.starts_with("ftl.log.used_pages") {
                assert!(v.metrics[k] <= *x, "{ftl}: {k}");
            } else if !k.starts_with("bench") {
                assert!(
                    x.to_bits() == v.metrics[k].to_bits(),
                    "{ftl}: {k} {x} {}",
                    v.metrics[k]
                );
            }
        }
        assert_eq!(w.config.ftl.log_utilisation, "written");
    }
}

#[test]
fn a_bad_utilisation_reading_names_the_key() {
    let c = Config::from_toml_str("[ftl]\nkind = \"bast\"\nlog_utilisation = \"all\"\n").unwrap();
    let e = simulate(&c, &mut NoProgress).unwrap_err().to_string();
    assert!(
        e.contains("ftl.log_utilisation") && e.contains("`all`"),
        "{e}"
    );
}
