//! `workload.kind = "cachelib"`: the I/O a hybrid flash cache makes as CacheLib's flash engine
//! (Navy) lays it out, each engine writing with its own FDP placement identifier as CacheLib
//! does with FDP on (cachelib.org, "FDP enabled cache"; "Configure HybridCache").
//!
//! The cache uses the first `utilisation` × `workload.footprint_bytes` of the device (the rest
//! is never written: the host's over-provisioning), in two engines:
//! - **small objects, BigHash**: a set-associative hash over the first `soc_share` of the
//!   cache, in buckets of `bucket_bytes`; an insert hashes its key to a bucket (uniformly) and
//!   rewrites the whole bucket (a read of it, then a write, when `bucket_read`) — random writes;
//! - **large objects, BlockCache**: a log of regions of `region_bytes` over the rest; objects
//!   are gathered in memory into the open region, which is written whole once full (in writes
//!   of at most `write_bytes`, Navy's largest device write), the regions reused in FIFO order
//!   (the oldest region evicted) — sequential writes over the log.
//!
//! An insert is small with probability `small_object_share`; a large object's size is drawn
//! log-uniformly in `large_min_bytes ..= large_max_bytes`. With `workload.read_fraction` > 0,
//! lookups read a random bucket, or a random large object's extent in a written region.
//! Requests arrive as the synthetic workloads' do; `workload.requests` counts the device I/Os.

use crate::config::WorkloadConfig;
use crate::error::{Result, SimError};
use crate::request::Op;
use crate::rng::Rng;
use crate::units::Size;
use std::collections::VecDeque;

const PAGE: u64 = 4096;

crate::params! {
    /// The CacheLib flash cache's layout and insert mix (`[workload.cachelib]`; docs/workloads.md).
    pub struct CacheLibParams {
        /// Share of workload.footprint_bytes (set it to the device's logical bytes) the cache uses; the rest is never written.
        utilisation: f64 = 1.0,
        /// Share of the cache given to the small-object engine, BigHash [R: CacheLib's FDP study's 4%].
        soc_share: f64 = 0.04,
        /// Share of inserts that are small objects (each rewrites one BigHash bucket) [R].
        small_object_share: f64 = 0.9,
        /// Smallest large object in bytes (log-uniform sizes) [R].
        large_min_bytes: Size = Size(2048),
        /// Largest large object in bytes [R].
        large_max_bytes: Size = Size(256 << 10),
        /// BigHash bucket size in bytes (CacheLib's default 4 KiB).
        bucket_bytes: Size = Size(4096),
        /// BlockCache region size in bytes (CacheLib's documented 16 MiB).
        region_bytes: Size = Size(16 << 20),
        /// Largest device write in bytes (Navy's default 1 MiB): a region is written in writes of this size.
        write_bytes: Size = Size(1 << 20),
        /// An insert reads its bucket before rewriting it (BigHash's read-modify-write).
        bucket_read: bool = true,
        /// FDP placement identifier of BigHash's I/O.
        soc_placement_id: u16 = 0,
        /// FDP placement identifier of BlockCache's I/O.
        loc_placement_id: u16 = 1,
    }
}

impl crate::params::Params for CacheLibParams {
    fn check(&self, table: &str) -> Result<()> {
        let field = |k: &str| format!("{table}.{k}");
        for (k, v) in [
            ("utilisation", self.utilisation),
            ("soc_share", self.soc_share),
            ("small_object_share", self.small_object_share),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(SimError::config(field(k), format!("{v} is not in [0, 1]")));
            }
        }
        for (k, v) in [
            ("bucket_bytes", self.bucket_bytes.0),
            ("region_bytes", self.region_bytes.0),
            ("write_bytes", self.write_bytes.0),
            ("large_min_bytes", self.large_min_bytes.0),
        ] {
            if v == 0 || !v.is_multiple_of(512) {
                return Err(SimError::config(
                    field(k),
                    format!("{v} must be a positive multiple of 512 bytes"),
                ));
            }
        }
        if self.large_max_bytes.0 < self.large_min_bytes.0 {
            return Err(SimError::config(
                field("large_max_bytes"),
                format!(
                    "{} is below large_min_bytes = {}",
                    self.large_max_bytes.0, self.large_min_bytes.0
                ),
            ));
        }
        if self.large_max_bytes.0 > self.region_bytes.0 {
            return Err(SimError::config(
                field("large_max_bytes"),
                "a large object must fit in one region (region_bytes)",
            ));
        }
        Ok(())
    }
}

/// The cache's layout on the device: BigHash's buckets, then BlockCache's regions.
#[derive(Clone, Copy, Debug)]
struct Layout {
    buckets: u64,
    regions: u64,
    loc_base: u64,
}

impl CacheLibParams {
    /// The layout over `footprint` bytes, or an error naming what is too small.
    fn layout(&self, footprint: u64) -> Result<Layout> {
        let cache = (footprint as f64 * self.utilisation) as u64;
        let (bucket, region) = (self.bucket_bytes.0, self.region_bytes.0);
        let buckets = (cache as f64 * self.soc_share) as u64 / bucket;
        let loc_base = buckets * bucket;
        let regions = cache.saturating_sub(loc_base) / region;
        let too_small = |what: &str| {
            SimError::config(
                "workload.footprint_bytes",
                format!(
                    "{footprint} bytes × utilisation {} leave {what}: raise workload.footprint_bytes",
                    self.utilisation
                ),
            )
        };
        if buckets == 0 && self.soc_share > 0.0 && self.small_object_share > 0.0 {
            return Err(too_small("no BigHash bucket (soc_share)"));
        }
        if regions < 2 && self.small_object_share < 1.0 {
            return Err(too_small(
                "fewer than two BlockCache regions (region_bytes)",
            ));
        }
        Ok(Layout {
            buckets,
            regions,
            loc_base,
        })
    }
}

/// Check the parameters against the workload's footprint.
pub fn check(w: &WorkloadConfig, p: &CacheLibParams) -> Result<()> {
    p.layout(w.footprint_bytes.0).map(|_| ())
}

/// The generator's state: the open region's fill, the next region slot, the I/O queued.
#[derive(Clone, Debug)]
pub struct CacheLib {
    p: CacheLibParams,
    layout: Layout,
    read_fraction: f64,
    /// Bytes gathered in the open region.
    filled: u64,
    /// Regions written so far (the next one goes to slot `written % regions`).
    written: u64,
    /// I/O waiting to be emitted: (op, offset, length, placement identifier).
    queue: VecDeque<(Op, u64, u64, u16)>,
}

impl CacheLib {
    pub fn new(w: &WorkloadConfig, p: CacheLibParams) -> Result<CacheLib> {
        let layout = p.layout(w.footprint_bytes.0)?;
        Ok(CacheLib {
            p,
            layout,
            read_fraction: w.read_fraction,
            filled: 0,
            written: 0,
            queue: VecDeque::new(),
        })
    }

    /// The next device I/O: (op, offset, length, placement identifier).
    pub fn next(&mut self, rng: &mut Rng) -> (Op, u64, u64, u16) {
        loop {
            if let Some(io) = self.queue.pop_front() {
                return io;
            }
            if self.read_fraction > 0.0 && rng.f64() < self.read_fraction {
                if let Some(io) = self.lookup(rng) {
                    return io;
                }
                continue;
            }
            self.insert(rng);
        }
    }

    fn small(&self, rng: &mut Rng) -> bool {
        self.layout.regions == 0
            || (self.layout.buckets > 0 && rng.f64() < self.p.small_object_share)
    }

    fn bucket(&self, rng: &mut Rng) -> u64 {
        rng.below(self.layout.buckets) * self.p.bucket_bytes.0
    }

    /// A large object's size: log-uniform in the configured range, in whole 4 KiB pages.
    fn large_bytes(&self, rng: &mut Rng) -> u64 {
        let (lo, hi) = (
            self.p.large_min_bytes.0 as f64,
            self.p.large_max_bytes.0 as f64,
        );
        let b = (lo.ln() + rng.f64() * (hi / lo).ln()).exp() as u64;
        b.clamp(self.p.large_min_bytes.0, self.p.large_max_bytes.0)
    }

    /// One insert: a bucket rewrite (queued), or a large object into the open region, which
    /// is written out (queued) once full.
    fn insert(&mut self, rng: &mut Rng) {
        let soc = self.p.soc_placement_id;
        if self.small(rng) {
            let off = self.bucket(rng);
            let len = self.p.bucket_bytes.0;
            if self.p.bucket_read {
                self.queue.push_back((Op::Read, off, len, soc));
            }
            self.queue.push_back((Op::Write, off, len, soc));
            return;
        }
        let size = self.large_bytes(rng);
        let region = self.p.region_bytes.0;
        if self.filled + size > region {
            // The open region is full: written whole, then the next (the oldest) is reused.
            let base = self.layout.loc_base + (self.written % self.layout.regions) * region;
            let mut off = 0;
            while off < region {
                let len = self.p.write_bytes.0.min(region - off);
                let pid = self.p.loc_placement_id;
                self.queue.push_back((Op::Write, base + off, len, pid));
                off += len;
            }
            self.written += 1;
            self.filled = 0;
        }
        self.filled += size;
    }

    /// A lookup: a bucket read, or a large object's extent in a written region (None when
    /// no region is written yet).
    fn lookup(&mut self, rng: &mut Rng) -> Option<(Op, u64, u64, u16)> {
        if self.small(rng) {
            let len = self.p.bucket_bytes.0;
            return Some((Op::Read, self.bucket(rng), len, self.p.soc_placement_id));
        }
        let live = self.written.min(self.layout.regions);
        if live == 0 {
            return None;
        }
        let region = self.p.region_bytes.0;
        let len = self.large_bytes(rng).div_ceil(PAGE) * PAGE;
        let len = len.min(region);
        let slot = rng.below(live);
        let start = rng.below((region - len) / PAGE + 1) * PAGE;
        let off = self.layout.loc_base + slot * region + start;
        Some((Op::Read, off, len, self.p.loc_placement_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(footprint: u64) -> WorkloadConfig {
        WorkloadConfig {
            footprint_bytes: Size(footprint),
            ..Default::default()
        }
    }

    /// 64 MiB at 50%: 32 MiB of cache, 4% = 1.28 MiB of buckets (327 of 4 KiB), the rest 1 MiB
    /// regions (30 of them after the buckets); nothing beyond the cache is ever touched; the
    /// regions are written whole, in order, and reused oldest first.
    #[test]
    fn layout_and_write_order_as_worked_by_hand() {
        let p = CacheLibParams {
            utilisation: 0.5,
            region_bytes: Size(1 << 20),
            write_bytes: Size(256 << 10),
            large_max_bytes: Size(64 << 10),
            ..Default::default()
        };
        let mut g = CacheLib::new(&workload(64 << 20), p).unwrap();
        assert_eq!(g.layout.buckets, 327);
        assert_eq!(g.layout.loc_base, 327 * 4096);
        assert_eq!(g.layout.regions, 30);
        let mut rng = Rng::new(7);
        let mut region_writes = Vec::new();
        let (mut soc_reads, mut soc_writes) = (0, 0);
        for _ in 0..200_000 {
            let (op, off, len, pid) = g.next(&mut rng);
            assert!(off + len <= 32 << 20, "beyond the cache: {off} + {len}");
            match (op, pid) {
                (Op::Read, 0) => soc_reads += 1,
                (Op::Write, 0) => {
                    assert_eq!((off % 4096, len, off < 327 * 4096), (0, 4096, true));
                    soc_writes += 1;
                }
                (Op::Write, 1) => region_writes.push((off, len)),
                other => panic!("{other:?}"),
            }
        }
        // Each bucket write follows its read.
        assert_eq!(soc_reads, soc_writes);
        // Regions: four 256 KiB writes each, in slot order, wrapping after 30.
        assert!(region_writes.len() > 4 * 30, "{}", region_writes.len());
        for (i, &(off, len)) in region_writes.iter().enumerate() {
            let slot = (i as u64 / 4) % 30;
            let expect = 327 * 4096 + slot * (1 << 20) + (i as u64 % 4) * (256 << 10);
            assert_eq!((off, len), (expect, 256 << 10), "write {i}");
        }
    }

    #[test]
    fn too_small_a_cache_names_the_key() {
        let p = CacheLibParams::default();
        let e = CacheLib::new(&workload(16 << 20), p)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("workload.footprint_bytes") && e.contains("regions"),
            "{e}"
        );
    }
}
