//! Request latencies: exact mean and maximum, and a log-linear histogram (HdrHistogram, three
//! significant digits: at most 0.1% relative error) for the percentiles and the distribution.

use hdrhistogram::Histogram;

/// Percentiles reported for each operation, as metric suffixes.
pub const PERCENTILES: &[(&str, f64)] = &[
    ("p50", 50.0),
    ("p90", 90.0),
    ("p99", 99.0),
    ("p999", 99.9),
    ("p9999", 99.99),
];

/// The latencies of one kind of request (recorded in ns).
#[derive(Clone, Debug)]
pub struct Latencies {
    hist: Histogram<u64>,
    sum_us: f64,
    max_us: f64,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies {
            hist: Histogram::new(3).expect("3 significant digits are valid"),
            sum_us: 0.0,
            max_us: 0.0,
        }
    }
}

impl Latencies {
    #[inline]
    pub fn record(&mut self, us: f64) {
        // The histogram resizes itself; only u64::MAX ns (584 years) could fail.
        let _ = self.hist.record((us * 1000.0).round() as u64);
        self.sum_us += us;
        self.max_us = self.max_us.max(us);
    }

    /// The samples of every one of `parts`, with the sum and maximum kept exactly by the caller
    /// (summed in recording order, as one `Latencies` recording them all would have).
    pub fn merged(parts: &[&Latencies], sum_us: f64, max_us: f64) -> Latencies {
        let mut all = Latencies::default();
        for p in parts {
            // Histograms of the same precision always add (they resize as needed).
            let _ = all.hist.add(&p.hist);
        }
        all.sum_us = sum_us;
        all.max_us = max_us;
        all
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn sum_us(&self) -> f64 {
        self.sum_us
    }

    pub fn reset(&mut self) {
        self.hist.reset();
        self.sum_us = 0.0;
        self.max_us = 0.0;
    }

    /// The `p`-th percentile in µs (NaN without samples).
    pub fn percentile_us(&self, p: f64) -> f64 {
        if self.count() == 0 {
            return f64::NAN;
        }
        self.hist.value_at_percentile(p) as f64 / 1000.0
    }

    /// `<prefix>.mean_us`, `.p50_us` … `.p9999_us`, `.max_us` (NaN without samples).
    pub fn metrics(&self, prefix: &str) -> Vec<(String, f64)> {
        let n = self.count();
        let nan_if_empty = |v: f64| if n == 0 { f64::NAN } else { v };
        let mut m = vec![(
            format!("{prefix}.mean_us"),
            nan_if_empty(self.sum_us / n as f64),
        )];
        for (name, p) in PERCENTILES {
            m.push((format!("{prefix}.{name}_us"), self.percentile_us(*p)));
        }
        m.push((format!("{prefix}.max_us"), nan_if_empty(self.max_us)));
        m
    }

    /// The distribution as (latency in ns, count) pairs in ascending latency: each pair is one
    /// histogram bucket (its value the bucket's highest equivalent value).
    pub fn distribution_ns(&self) -> Vec<(u64, u64)> {
        self.hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_within_a_tenth_of_a_percent() {
        let mut l = Latencies::default();
        for i in 1..=100_000u64 {
            l.record(i as f64 * 0.37);
        }
        let exact = |p: f64| (p / 100.0 * 100_000.0).ceil() * 0.37;
        for (_, p) in PERCENTILES {
            let got = l.percentile_us(*p);
            assert!(
                (got / exact(*p) - 1.0).abs() < 1e-3,
                "p{p}: {got} vs {}",
                exact(*p)
            );
        }
        let m: std::collections::BTreeMap<_, _> = l.metrics("x").into_iter().collect();
        assert!((m["x.mean_us"] - 50_000.5 * 0.37).abs() < 1e-6);
        assert_eq!(m["x.max_us"], 100_000.0 * 0.37);
        let d = l.distribution_ns();
        assert_eq!(d.iter().map(|&(_, c)| c).sum::<u64>(), 100_000);
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(Latencies::default().metrics("y")[0].1.is_nan());
    }
}
