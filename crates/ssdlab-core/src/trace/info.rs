//! Summary figures of a trace ([`info`]), computed in one streaming pass.

use std::path::Path;

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::TraceOptions;
use crate::error::{Result, SimError};
use crate::request::Op;

/// Figures of a trace, after the device filter.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct TraceInfo {
    /// Format name.
    pub format: String,
    /// Every request, trims included.
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Distinct `page_bytes` pages written (a write touching any byte of a page counts it).
    pub footprint_pages: u64,
    /// max(offset + size) over all requests.
    pub max_end_bytes: u64,
    /// Share of writes starting at the end of the previous write on the same dev (the
    /// first write of a dev is not sequential); 0.0 when there are no writes.
    pub seq_write_fraction: f64,
    /// Distinct devs.
    pub devices: u64,
    /// Every dev (volume) with its requests and footprint, in the order first seen.
    pub volumes: Vec<VolumeInfo>,
    /// Malformed records skipped (skip_invalid).
    pub skipped: u64,
    /// Requests replayed out of time order: blkparse requests that came later than its
    /// reorder window could repair (`TraceReader::late`); 0 for the other formats.
    pub late: u64,
    /// Time of the first and the last request in replay order (0.0 when none).
    pub first_time_us: f64,
    pub last_time_us: f64,
    /// Distribution of the latencies the trace measured, by operation (formats that record
    /// them: flashnet, msr, systor, blkparse D→C); absent when no request has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_latency: Option<super::MeasuredLatency>,
    /// The most requests outstanding at once on the measured device, each from its time to its
    /// time + its measured latency (a replayer's concurrency: `run.max_inflight`); absent when
    /// no request has a measured latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_max_outstanding: Option<u64>,
}

/// One volume (dev) of a trace.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct VolumeInfo {
    pub dev: u32,
    pub requests: u64,
    /// Distinct pages it writes (as `TraceInfo::footprint_pages`).
    pub footprint_pages: u64,
    /// Its highest address, max(offset + size).
    pub max_end_bytes: u64,
}

/// A set of page numbers stored as disjoint, non-adjacent runs `first -> last` (inclusive).
/// Memory and time grow with the number of runs, never with a request's size: one hostile
/// record of 2^64 bytes is one run (a per-page or per-64-page structure would not finish).
#[derive(Default)]
struct PageSet {
    runs: BTreeMap<u64, u64>,
}

impl PageSet {
    /// Add pages `first..=last`.
    fn insert_range(&mut self, first: u64, last: u64) {
        let (mut lo, mut hi) = (first, last);
        // A run starting before `first` that reaches it (or ends just before it) is merged.
        if let Some((&s, &e)) = self.runs.range(..=lo).next_back() {
            if e.saturating_add(1) >= lo {
                lo = s;
                hi = hi.max(e);
            }
        }
        // Then every run starting inside, or just after, the new one.
        while let Some((&s, &e)) = self.runs.range(lo..=hi.saturating_add(1)).next() {
            self.runs.remove(&s);
            hi = hi.max(e);
        }
        self.runs.insert(lo, hi);
    }
    fn len(&self) -> u64 {
        self.runs.iter().fold(0u64, |n, (&s, &e)| {
            n.saturating_add(e - s).saturating_add(1)
        })
    }
}

/// Stream the trace once and compute its [`TraceInfo`]. An empty trace gives zero counts.
pub fn info(path: &Path, opts: &TraceOptions, page_bytes: u64) -> Result<TraceInfo> {
    if page_bytes == 0 {
        return Err(SimError::config("page_bytes", "must be at least 1"));
    }
    let mut rd = super::open(path, opts)?;
    let mut ti = TraceInfo {
        format: rd.format().name().to_string(),
        ..Default::default()
    };
    let mut pages = PageSet::default();
    let mut last_write_end: FxHashMap<u32, u64> = FxHashMap::default();
    // Per volume, in the order first seen: its figures and written pages.
    let mut vols: super::volumes::ByVolume<(VolumeInfo, PageSet)> = Default::default();
    let mut seq = 0u64;
    let mut measured = super::measured::Collector::default();
    for r in &mut rd {
        let r = r?;
        measured.add(&r);
        if ti.requests == 0 {
            ti.first_time_us = r.time_us;
        }
        ti.last_time_us = r.time_us;
        ti.requests += 1;
        let end = r.offset_bytes + r.len_bytes;
        ti.max_end_bytes = ti.max_end_bytes.max(end);
        let vol = vols.get(r.dev);
        vol.0.requests += 1;
        vol.0.max_end_bytes = vol.0.max_end_bytes.max(end);
        match r.op {
            Op::Read => {
                ti.reads += 1;
                ti.read_bytes = ti.read_bytes.saturating_add(r.len_bytes);
            }
            Op::Trim => ti.trims += 1,
            Op::Write => {
                ti.writes += 1;
                ti.write_bytes = ti.write_bytes.saturating_add(r.len_bytes);
                if r.len_bytes > 0 {
                    let (first, last) = (r.offset_bytes / page_bytes, (end - 1) / page_bytes);
                    pages.insert_range(first, last);
                    vol.1.insert_range(first, last);
                }
                if last_write_end.insert(r.dev, end) == Some(r.offset_bytes) {
                    seq += 1;
                }
            }
        }
    }
    rd.check_recognised(opts.format.is_some())?;
    ti.footprint_pages = pages.len();
    ti.devices = vols.len() as u64;
    ti.volumes = vols
        .into_vec()
        .into_iter()
        .map(|(dev, (v, p))| VolumeInfo {
            dev,
            footprint_pages: p.len(),
            ..v
        })
        .collect();
    ti.seq_write_fraction = if ti.writes == 0 {
        0.0
    } else {
        seq as f64 / ti.writes as f64
    };
    ti.skipped = rd.skipped();
    ti.late = rd.late();
    ti.measured_latency = measured.finish();
    ti.measured_max_outstanding = ti
        .measured_latency
        .as_ref()
        .map(|_| measured.max_outstanding());
    Ok(ti)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_set_ranges() {
        let mut s = PageSet::default();
        s.insert_range(0, 0);
        s.insert_range(63, 64);
        s.insert_range(10, 200);
        assert_eq!(s.len(), 192);
        s.insert_range(1000, 1000);
        assert_eq!(s.len(), 193);
        let mut s = PageSet::default();
        s.insert_range(0, 63);
        assert_eq!(s.len(), 64);
        // Adjacent and overlapping runs merge; the whole u64 range is one run.
        let mut s = PageSet::default();
        s.insert_range(10, 19);
        s.insert_range(30, 39);
        s.insert_range(20, 29);
        assert_eq!((s.len(), s.runs.len()), (30, 1));
        s.insert_range(5, 45);
        s.insert_range(50, 50);
        assert_eq!((s.len(), s.runs.len()), (42, 2));
        s.insert_range(0, u64::MAX);
        assert_eq!((s.len(), s.runs.len()), (u64::MAX, 1));
    }

    #[test]
    fn page_set_matches_a_plain_set() {
        let mut s = PageSet::default();
        let mut plain = std::collections::BTreeSet::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let first = x % 500;
            let last = first + (x >> 20) % 12;
            s.insert_range(first, last);
            plain.extend(first..=last);
            assert_eq!(s.len(), plain.len() as u64);
        }
    }
}
