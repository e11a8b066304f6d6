//! Latencies measured on the traced device ([`Request::measured`]): their distribution per
//! operation, exact (nearest-rank percentiles) in memory proportional to the number of
//! distinct values.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use rustc_hash::FxHashMap;

use super::TraceOptions;
use crate::error::Result;
use crate::request::{Op, Request};
use crate::units::At;

/// The measured latencies of a trace's reads and writes (µs), each in trace order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeasuredSeries {
    /// Format name (detected or given).
    pub format: String,
    pub read: Vec<f32>,
    pub write: Vec<f32>,
    /// Requests without a measured latency (trims included).
    pub missing: u64,
}

/// Read a trace's measured latencies (after the device filter); an empty series when the format
/// records none.
pub fn measured_latencies(path: &Path, opts: &TraceOptions) -> Result<MeasuredSeries> {
    let mut rd = super::open(path, opts)?;
    let mut m = MeasuredSeries {
        format: rd.format().name().to_string(),
        ..Default::default()
    };
    for r in &mut rd {
        let r = r?;
        match (r.op, r.measured()) {
            (Op::Read, Some(v)) => m.read.push(v),
            (Op::Write, Some(v)) => m.write.push(v),
            _ => m.missing += 1,
        }
    }
    rd.check_recognised(opts.format.is_some())?;
    Ok(m)
}

/// The percentiles reported, with their names.
pub const PERCENTILES: [(f64, &str); 4] =
    [(50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9")];

/// Distribution of one operation's measured latencies (µs).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    #[serde(rename = "p99.9_us")]
    pub p999_us: f64,
}

/// Measured latency distributions by operation (an operation without any is absent).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct MeasuredLatency {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<LatencySummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<LatencySummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<LatencySummary>,
}

/// Counts of each distinct latency of one operation.
#[derive(Default)]
struct Counts {
    /// f32 bits → requests; the bits of non-negative floats sort as their values.
    by_value: FxHashMap<u32, u64>,
    n: u64,
    sum: f64,
}

impl Counts {
    fn add(&mut self, v: f32) {
        *self.by_value.entry(v.to_bits()).or_insert(0) += 1;
        self.n += 1;
        self.sum += f64::from(v);
    }

    fn summary(&self) -> Option<LatencySummary> {
        if self.n == 0 {
            return None;
        }
        let mut sorted: Vec<(u32, u64)> = self.by_value.iter().map(|(&b, &c)| (b, c)).collect();
        sorted.sort_unstable();
        // Nearest rank: the smallest value with at least ceil(p/100 * n) values at or below it.
        let pct = |p: f64| {
            let rank = ((p / 100.0 * self.n as f64).ceil() as u64).max(1);
            let mut seen = 0;
            for &(bits, c) in &sorted {
                seen += c;
                if seen >= rank {
                    return f64::from(f32::from_bits(bits));
                }
            }
            f64::from(f32::from_bits(sorted[sorted.len() - 1].0))
        };
        Some(LatencySummary {
            count: self.n,
            mean_us: self.sum / self.n as f64,
            p50_us: pct(PERCENTILES[0].0),
            p90_us: pct(PERCENTILES[1].0),
            p99_us: pct(PERCENTILES[2].0),
            p999_us: pct(PERCENTILES[3].0),
        })
    }
}

/// Collects the measured latencies of a stream of requests, and how many were outstanding at
/// once on the measured device (each from its time to its time + its measured latency).
#[derive(Default)]
pub(crate) struct Collector {
    read: Counts,
    write: Counts,
    trim: Counts,
    /// Ends of the requests still outstanding at the latest request's time.
    ends: BinaryHeap<Reverse<At>>,
    max_outstanding: u64,
}

impl Collector {
    pub(crate) fn add(&mut self, r: &Request) {
        if let Some(v) = r.measured() {
            match r.op {
                Op::Read => self.read.add(v),
                Op::Write => self.write.add(v),
                Op::Trim => self.trim.add(v),
            }
            // Requests come in time order: those ended by now leave (one that ends exactly
            // as another starts is not outstanding with it).
            while self
                .ends
                .peek()
                .is_some_and(|&Reverse(At(end))| end <= r.time_us)
            {
                self.ends.pop();
            }
            self.ends.push(Reverse(At(r.time_us + f64::from(v))));
            self.max_outstanding = self.max_outstanding.max(self.ends.len() as u64);
        }
    }

    /// The most requests with a measured latency outstanding at once (0 when none had one):
    /// the concurrency the trace was measured at, e.g. a replayer's thread count.
    pub(crate) fn max_outstanding(&self) -> u64 {
        self.max_outstanding
    }

    /// None when no request had a measured latency.
    pub(crate) fn finish(&self) -> Option<MeasuredLatency> {
        let m = MeasuredLatency {
            read: self.read.summary(),
            write: self.write.summary(),
            trim: self.trim.summary(),
        };
        (m != MeasuredLatency::default()).then_some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let mut c = Collector::default();
        for (i, v) in [5.0f32, 1.0, 3.0, 2.0, 4.0, 3.0, 7.0, 6.0, 9.0, 8.0]
            .iter()
            .enumerate()
        {
            let mut r = Request::new(i as f64, Op::Read, 0, 4096, 0);
            r.measured_us = *v;
            c.add(&r);
        }
        c.add(&Request::new(0.0, Op::Write, 0, 4096, 0));
        let m = c.finish().unwrap();
        assert_eq!(m.write, None);
        let r = m.read.unwrap();
        // 10 values 1..9 with 3 twice: rank 5 → 4, rank 9 → 8, rank 10 → 9.
        assert_eq!(
            (r.count, r.mean_us, r.p50_us, r.p90_us, r.p99_us, r.p999_us),
            (10, 4.8, 4.0, 8.0, 9.0, 9.0)
        );
        assert_eq!(Collector::default().finish(), None);
    }

    #[test]
    fn max_outstanding_by_hand() {
        let mut c = Collector::default();
        // [0, 10), [2, 5), [4, 6), [5, 20), [10, 11), [30, 31); a request without a measured
        // latency does not count.
        for (t, v) in [
            (0.0, 10.0),
            (2.0, 3.0),
            (4.0, 2.0),
            (5.0, 15.0),
            (10.0, 1.0),
            (30.0, 1.0),
        ] {
            let mut r = Request::new(t, Op::Read, 0, 4096, 0);
            r.measured_us = v as f32;
            c.add(&r);
            c.add(&Request::new(t, Op::Write, 0, 4096, 0));
        }
        // At 4: [0,10), [2,5), [4,6) → 3; at 5: [2,5) has ended → 3; at 10: [5,20), [10,11) → 2.
        assert_eq!(c.max_outstanding(), 3);
        assert_eq!(Collector::default().max_outstanding(), 0);
    }
}
