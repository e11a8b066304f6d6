//! Checks shared by the integration tests (each test crate uses some of them).
#![allow(dead_code)]

use ssdlab_core::engine::NoProgress;
use ssdlab_core::{simulate, Config, RunResult};
use std::collections::BTreeMap;

/// Simulate a TOML configuration that must run.
pub fn run(toml: &str) -> RunResult {
    simulate(&Config::from_toml_str(toml).unwrap(), &mut NoProgress).unwrap()
}

/// The error of a TOML configuration that must fail (to parse or to run).
pub fn error(toml: &str) -> String {
    match Config::from_toml_str(toml).and_then(|c| simulate(&c, &mut NoProgress)) {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e.to_string(),
    }
}

/// Every metric of a counts-mode run has the same value in the timed run of the same
/// configuration (NaN equal to NaN): time changes no count.
pub fn assert_counts_same_timed(
    counts: &BTreeMap<String, f64>,
    timed: &BTreeMap<String, f64>,
    what: &str,
) {
    for (k, v) in counts {
        let t = timed[k];
        assert!(
            t == *v || (v.is_nan() && t.is_nan()),
            "{what}: {k} = {v} in counts mode, {t} timed"
        );
    }
}

/// `a` and `b` report the same value of every metric in `keys`.
pub fn assert_same_metrics(
    a: &BTreeMap<String, f64>,
    b: &BTreeMap<String, f64>,
    keys: &[&str],
    what: &str,
) {
    for &k in keys {
        assert_eq!(a[k], b[k], "{what}: {k}");
    }
}
