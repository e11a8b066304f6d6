//! `fab`: Flash-Aware Buffer (Jo et al. 2006; ALGORITHMS.md §1.3; seed 000 Table 2). Pages are
//! grouped by LBN; the victim is the group holding the most buffered pages (all pages count),
//! ties going to the least recently written group, so a full group leaves at once. The victim is
//! flushed whole in ascending offset (padded only if the padding policy says so; default none).
//!
//! This is the SSD-internal write-buffer setting used by seed 000: reads are served from the
//! buffer when present but never inserted and do not change recency (FAB's original host-cache
//! `cache_reads` mode is not implemented).
//!
//! Structure: one recency list per page count ("bucket"); a write moves its group to the front
//! of the bucket of its new count, so each bucket is in recency order and the victim is the tail
//! of the highest non-empty bucket — the same choice as scanning one recency list from the LRU
//! end for the largest group.

use super::groups::{insert_ordered, GroupStore};
use super::list::{Links, List, NIL};
use super::{BufferParams, FlushSink, WriteBuffer};
use crate::error::Result;
use crate::ftl::FtlView;
use crate::padding::Padding;
use crate::units::{Lpn, SectorMask};

pub struct FabBuffer {
    capacity: u64,
    store: GroupStore,
    links: Links,
    /// buckets[n] = groups holding n pages, most recently written first.
    buckets: Vec<List>,
    /// Last write stamp per group slot (keeps bucket order exact after a trim).
    stamp: Vec<u64>,
    clock: u64,
    padding: Box<dyn Padding>,
}

impl FabBuffer {
    pub fn new(p: BufferParams) -> Self {
        FabBuffer {
            capacity: p.capacity_pages,
            store: GroupStore::new(p.capacity_pages, p.pages_per_block),
            links: Links::default(),
            buckets: vec![List::default(); p.pages_per_block as usize + 1],
            stamp: Vec::new(),
            clock: 0,
            padding: p.padding,
        }
    }

    fn victim(&self) -> Option<u32> {
        self.buckets
            .iter()
            .rev()
            .find(|l| l.tail != NIL)
            .map(|l| l.tail)
    }

    fn evict(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        let Some(g) = self.victim() else {
            return Ok(false);
        };
        let n = self.store.group(g).n_pages as usize;
        self.links.remove(&mut self.buckets[n], g);
        self.store.flush_group(g, &mut *self.padding, sink)?;
        Ok(true)
    }
}

impl WriteBuffer for FabBuffer {
    /// The page index slot and group entry of `lpn`.
    #[inline]
    fn prefetch(&mut self, lpn: Lpn) {
        self.store.prefetch(lpn);
    }

    fn write(
        &mut self,
        lpn: Lpn,
        mask: SectorMask,
        version: u32,
        hint: u32,
        sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        if !self.store.has_page(lpn) {
            while self.store.held() >= self.capacity && self.evict(sink)? {}
        }
        let w = self.store.write(lpn, mask, version, hint)?;
        let g = w.group;
        let n = self.store.group(g).n_pages as usize;
        if !w.new_group {
            let old = if w.before == 0 { n - 1 } else { n };
            self.links.remove(&mut self.buckets[old], g);
        }
        self.links.push_front(&mut self.buckets[n], g);
        self.clock += 1;
        if self.stamp.len() <= g as usize {
            self.stamp.resize(g as usize + 1, 0);
        }
        self.stamp[g as usize] = self.clock;
        Ok(w.before)
    }

    fn read(
        &mut self,
        lpn: Lpn,
        _mask: SectorMask,
        _sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        Ok(self.store.mask_of(lpn))
    }

    fn trim(&mut self, lpn: Lpn) {
        let Some(g) = self.store.group_of(self.store.lbn_of(lpn)) else {
            return;
        };
        if !self.store.has_page(lpn) {
            return;
        }
        let n = self.store.group(g).n_pages as usize;
        self.links.remove(&mut self.buckets[n], g);
        let (_, empty) = self.store.trim(lpn).expect("page is buffered");
        if !empty {
            // Re-insert at its recency position among the groups of n − 1 pages.
            let stamp = &self.stamp;
            insert_ordered(&mut self.links, &mut self.buckets[n - 1], g, |i| {
                stamp[i as usize]
            });
        }
    }

    fn drains(&self) -> bool {
        true
    }

    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        self.evict(sink)
    }

    fn flush_all(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        while self.evict(sink)? {}
        Ok(())
    }

    fn pages(&self) -> u64 {
        self.store.held()
    }

    fn gauges(&mut self, view: &dyn FtlView) -> Vec<(&'static str, f64)> {
        crate::padding::gauges(&mut *self.padding, self.store.ppb, view)
    }
}

#[cfg(test)]
mod tests {
    use super::super::groups::testutil::FakeSink;
    use super::*;
    use crate::padding::NoPadding;

    fn fab(capacity: u64, ppb: u64) -> FabBuffer {
        FabBuffer::new(BufferParams {
            capacity_pages: capacity,
            pages_per_block: ppb,
            padding: Box::new(NoPadding),
        })
    }

    #[test]
    fn largest_group_then_lru_tie() {
        let mut b = fab(6, 4);
        let mut s = FakeSink::default();
        // Groups: 0 → 2 pages, 1 → 2 pages, 2 → 1 page, 3 → 1 page (written in that order).
        for lpn in [0, 1, 4, 5, 8, 12] {
            assert_eq!(b.write(lpn, 0xff, 1, 0, &mut s).unwrap(), 0);
        }
        // Full: a miss evicts the largest group; LBN 0 and 1 tie at 2 pages → LRU = LBN 0.
        b.write(16, 0xff, 1, 0, &mut s).unwrap();
        assert_eq!(s.lbns(), vec![0]);
        assert_eq!(s.flushed[0].offsets, vec![0, 1]);
        // Touch LBN 2 up to 2 pages: now LBN 1 (2 pages) and 2 (2 pages) tie; 1 is LRU.
        b.write(9, 0xff, 1, 0, &mut s).unwrap();
        b.write(20, 0xff, 1, 0, &mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 1]);
        // LBN 2 (2 pages) is rewritten, then LBN 3 grows to 2 pages after it: the tie goes to
        // LBN 2, now the less recently written one.
        b.write(8, 0xff, 2, 0, &mut s).unwrap();
        assert_eq!(b.write(8, 0xff, 3, 0, &mut s).unwrap(), 0xff);
        b.write(13, 0xff, 1, 0, &mut s).unwrap();
        assert_eq!(b.pages(), 6);
        b.write(24, 0xff, 1, 0, &mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 1, 2]);
    }

    #[test]
    fn full_group_first_and_flush_all_order() {
        let mut b = fab(8, 4);
        let mut s = FakeSink::default();
        for lpn in [3, 1, 8, 9, 10, 0, 2, 20] {
            b.write(lpn, 0xff, 1, 0, &mut s).unwrap();
        }
        // LBN 0 is full (4 pages), LBN 2 has 3, LBN 5 has 1.
        b.write(28, 0xff, 1, 0, &mut s).unwrap();
        assert_eq!(s.flushed[0].lbn, 0);
        assert_eq!(s.flushed[0].offsets, vec![0, 1, 2, 3]);
        assert!(!s.flushed[0].padded);
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 2, 5, 7]);
        assert_eq!(b.pages(), 0);
    }

    #[test]
    fn reads_do_not_insert_and_trim_keeps_order() {
        let mut b = fab(4, 4);
        let mut s = FakeSink::default();
        assert_eq!(b.read(0, 0xff, &mut s).unwrap(), 0);
        assert_eq!(b.pages(), 0);
        for lpn in [0, 1, 4, 5] {
            b.write(lpn, 0x0f, 1, 0, &mut s).unwrap();
        }
        assert_eq!(b.read(1, 0xff, &mut s).unwrap(), 0x0f);
        b.trim(1);
        b.trim(5);
        b.trim(5);
        assert_eq!(b.pages(), 2);
        // Both groups hold 1 page; LBN 0 is older → flushed first.
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 1]);
        b.write(0, 0xff, 1, 0, &mut s).unwrap();
        b.trim(0);
        assert_eq!(b.pages(), 0);
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 1]);
    }
}
