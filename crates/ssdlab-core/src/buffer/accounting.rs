//! Statistics of what buffers flush, kept by the buffer layer rather than the engine: the engine's
//! flush path records every [`FlushUnit`](super::FlushUnit) here and asks for the metrics and
//! histograms at the end of the run.

use crate::error::Result;
use std::collections::BTreeMap;

/// Flushed-group statistics (seed 000 Fig 15–16): group sizes and the number of flushes between
/// two flushes of the same LBN.
pub struct GroupStats {
    /// Flush index + 1 of each LBN's last flush (0 = never flushed).
    last_flush: Vec<u64>,
    flushes: u64,
    /// Flushes since the last [`reset_counts`](Self::reset_counts) (the measured window).
    measured: u64,
    size_counts: Vec<u64>,
    interval_log2: [u64; 64],
    interval_sum: u64,
    intervals: u64,
}

impl GroupStats {
    pub fn new(logical_blocks: u64, ppb: u64) -> Result<Self> {
        Ok(GroupStats {
            last_flush: crate::units::alloc_vec(logical_blocks, 0, "the group flush index")?,
            flushes: 0,
            measured: 0,
            size_counts: vec![0; ppb as usize + 1],
            interval_log2: [0; 64],
            interval_sum: 0,
            intervals: 0,
        })
    }

    /// Block `lbn` will be flushed soon: start loading its last-flush index.
    #[inline]
    pub fn prefetch(&self, lbn: u64) {
        crate::units::prefetch(&self.last_flush, lbn as usize);
    }

    /// One flush of `pages` pages of logical block `lbn`.
    #[inline]
    pub fn record(&mut self, lbn: u64, pages: usize) {
        self.flushes += 1;
        self.measured += 1;
        if let Some(n) = self.size_counts.get_mut(pages) {
            *n += 1;
        }
        let slot = &mut self.last_flush[lbn as usize];
        if *slot != 0 {
            let interval = self.flushes - *slot;
            self.interval_log2[63 - interval.leading_zeros() as usize] += 1;
            self.interval_sum += interval;
            self.intervals += 1;
        }
        *slot = self.flushes;
    }

    /// Forget the distributions (not the last-flush indexes) at the end of the warm-up.
    pub fn reset_counts(&mut self) {
        self.measured = 0;
        self.size_counts.iter_mut().for_each(|c| *c = 0);
        self.interval_log2 = [0; 64];
        self.interval_sum = 0;
        self.intervals = 0;
    }

    /// End-of-run metrics over the measured window: "buffer.flushed_groups" and
    /// "buffer.group_update_interval.mean" (NaN when no LBN was flushed twice).
    pub fn metrics(&self) -> Vec<(String, f64)> {
        let mean = if self.intervals > 0 {
            self.interval_sum as f64 / self.intervals as f64
        } else {
            f64::NAN
        };
        vec![
            ("buffer.flushed_groups".to_string(), self.measured as f64),
            ("buffer.group_update_interval.mean".to_string(), mean),
        ]
    }

    /// "buffer.flushed_group_pages" (exact) and "buffer.group_update_interval" (log2 buckets: the
    /// value is the bucket's lower bound), as (value, count) pairs in ascending value.
    pub fn histograms(&self) -> BTreeMap<String, Vec<(u64, u64)>> {
        let sizes = self
            .size_counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(v, &c)| (v as u64, c));
        let ints = self
            .interval_log2
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(k, &c)| (1u64 << k, c));
        BTreeMap::from([
            ("buffer.flushed_group_pages".to_string(), sizes.collect()),
            ("buffer.group_update_interval".to_string(), ints.collect()),
        ])
    }
}
