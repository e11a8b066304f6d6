//! Checks shared by the integration tests.

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
