//! Checks shared by the integration tests (each test crate uses some of them).
#![allow(dead_code)]

use std::collections::BTreeMap;

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
