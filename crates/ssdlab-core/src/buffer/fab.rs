//! `fab`: Flash-Aware Buffer (Jo et al. 2006; ALGORITHMS.md §1.3) as seed 000 configures it
//! (Table 2: "1. Group contains the most sectors. 2. Group of Least Recently Used."). Pages are
//! grouped by LBN; the victim is the group holding the most buffered 512-byte sectors (a partly
//! written page counts the sectors it holds), ties going to the least recently written group,
//! so a full group leaves at once. The victim is flushed whole in ascending offset (padded only
//! if the padding policy says so; default none). `weight = "pages"` ranks by buffered pages
//! instead, as Jo et al.'s FAB and its reference implementation do (ALGORITHMS.md §1.3(b)); CLC
//! with no hot list is that policy.
//!
//! This is the SSD-internal write-buffer setting used by seed 000: reads are served from the
//! buffer when present but never inserted and do not change recency (FAB's original host-cache
//! `cache_reads` mode is not implemented).
//!
//! Structure: one recency list per weight ("bucket"); a write moves its group to the front of
//! the bucket of its new weight, so each bucket is in recency order and the victim is the tail
//! of the highest non-empty bucket — the same choice as scanning one recency list from the LRU
//! end for the heaviest group. `top` bounds the highest non-empty bucket from above and is
//! lowered lazily at evictions: it rises by at most a write's sectors, so the search costs
//! amortised O(sectors written).

use super::groups::{grow, insert_ordered, GroupPolicy, GroupStore, Written};
use super::list::{Links, List, NIL};
use super::{BufferParams, FlushSink};
use crate::error::Result;
use crate::units::{Lpn, SectorMask};

crate::params! {
    /// FAB's parameters (`[buffer.fab]`).
    pub struct Params {
        /// What makes a group the victim: sectors (the most buffered 512-byte sectors; seed 000
        /// Table 2, "Group contains the most sectors") | pages (the most buffered pages, as Jo et
        /// al.'s FAB counts; CLC with hot_fraction = 0 is this policy). Ties: least recently
        /// written.
        weight: String = "sectors".into(),
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        by_sectors(&self.weight, table).map(|_| ())
    }
}

/// Whether `weight` (`[buffer.fab] weight`) ranks groups by sectors.
pub fn by_sectors(weight: &str, table: &str) -> Result<bool> {
    super::choice(
        table,
        "weight",
        weight,
        &[("sectors", true), ("pages", false)],
    )
}

pub struct FabBuffer {
    store: GroupStore,
    links: Links,
    /// buckets[w] = groups of weight w, most recently written first (grown as weights arrive).
    buckets: Vec<List>,
    /// No bucket above this one is non-empty.
    top: usize,
    by_sectors: bool,
    /// Last write stamp per group slot (keeps bucket order exact after a trim).
    stamp: Vec<u64>,
    clock: u64,
}

impl FabBuffer {
    /// FAB ranking groups by sectors (`by_sectors`, seed 000) or by pages.
    pub fn new(p: BufferParams, by_sectors: bool) -> Self {
        FabBuffer {
            links: Links::default(),
            buckets: vec![List::default(); p.pages_per_block as usize + 1],
            top: 0,
            by_sectors,
            stamp: Vec::new(),
            clock: 0,
            store: GroupStore::new(p),
        }
    }

    /// The weight that ranks group `g`.
    #[inline]
    fn weight(&self, g: u32) -> usize {
        let gr = self.store.group(g);
        if self.by_sectors {
            gr.sectors as usize
        } else {
            gr.n_pages as usize
        }
    }

    /// Put `g` at the front of the bucket of weight `w`.
    #[inline]
    fn push_front(&mut self, w: usize, g: u32) {
        if w >= self.buckets.len() {
            self.buckets.resize(w + 1, List::default());
        }
        self.links.push_front(&mut self.buckets[w], g);
        self.top = self.top.max(w);
    }

    fn victim(&mut self) -> Option<u32> {
        loop {
            let tail = self.buckets[self.top].tail;
            if tail != NIL {
                return Some(tail);
            }
            if self.top == 0 {
                return None;
            }
            self.top -= 1;
        }
    }
}

impl GroupPolicy for FabBuffer {
    super::groups::store_in_field!();

    #[inline]
    fn written(&mut self, _lpn: Lpn, mask: SectorMask, w: Written, _sink: &dyn FlushSink) {
        let g = w.group;
        let now = self.weight(g);
        if !w.new_group {
            let added = if self.by_sectors {
                (mask & !w.before).count_ones() as usize
            } else {
                (w.before == 0) as usize
            };
            self.links.remove(&mut self.buckets[now - added], g);
        }
        self.push_front(now, g);
        self.clock += 1;
        grow(&mut self.stamp, g);
        self.stamp[g as usize] = self.clock;
    }

    fn drop_page(&mut self, lpn: Lpn) {
        let Some(g) = self.store.page_group(lpn) else {
            return;
        };
        let w = self.weight(g);
        self.links.remove(&mut self.buckets[w], g);
        let (_, empty) = self.store.trim(lpn).expect("page is buffered");
        if !empty {
            // Re-insert at its recency position among the groups of its new (lower) weight.
            let w = self.weight(g);
            let stamp = &self.stamp;
            insert_ordered(&mut self.links, &mut self.buckets[w], g, |i| {
                stamp[i as usize]
            });
        }
    }

    fn evict(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        let Some(g) = self.victim() else {
            return Ok(false);
        };
        let w = self.weight(g);
        self.links.remove(&mut self.buckets[w], g);
        self.store.flush_group(g, sink)?;
        Ok(true)
    }
}

/// The registry entry of `fab`.
pub static ENTRY: super::Entry = super::entry! {
    "fab", Params, super::GROUP_KEYS, padding "none",
    "FAB (seed 000 Table 2): pages grouped by LBN; victim = the group holding the most sectors (`weight`; ties: least recently written), flushed whole. Reads are not cached. Default padding: none.",
    |cfg, p, q| {
        let by_sectors = by_sectors(&q.weight, "buffer.fab")?;
        Ok(Box::new(FabBuffer::new(p, by_sectors)))
    }
};

#[cfg(test)]
mod tests {
    use super::super::groups::testutil::FakeSink;
    use super::super::{HostPage, WriteBuffer};
    use super::*;
    use crate::padding::NoPadding;

    /// FAB as configured by default (by sectors); the first tests write equal masks, so pages
    /// would rank the same.
    fn fab(capacity: u64, ppb: u64) -> FabBuffer {
        fab_by(capacity, ppb, true)
    }

    fn fab_by(capacity: u64, ppb: u64, by_sectors: bool) -> FabBuffer {
        FabBuffer::new(
            BufferParams {
                capacity_pages: capacity,
                pages_per_block: ppb,
                padding: Box::new(NoPadding),
            },
            by_sectors,
        )
    }

    /// Seed 000 Table 2: the victim holds the most sectors, ties to the least recently written.
    /// Blocks of 4 pages of 8 sectors, a 4-page buffer. LBN 0 holds 3 pages of 1 sector each,
    /// LBN 1 one whole page (8 sectors): the next miss flushes LBN 1, with fewer pages (by pages:
    /// LBN 0). Then LBN 0 (3 pages) and LBN 2 (1 page, written later) hold 3 sectors each: the
    /// tie goes to LBN 0. A hit adding sectors raises a group (LBN 3: 1 → 3); a hit adding
    /// none renews its recency only (LBN 2), so of the two 3-sector groups LBN 3 is now the less
    /// recently written.
    #[test]
    fn most_sectors_first_then_lru_among_equals() {
        let mut s = FakeSink::default();
        let mut pages = fab_by(4, 4, false);
        let mut b = fab_by(4, 4, true);
        for (lpn, mask) in [(0, 0x01), (1, 0x01), (2, 0x01), (4, 0xff), (8, 0x07)] {
            b.write(HostPage::new(lpn, mask, 1, 0), &mut s).unwrap();
        }
        assert_eq!(s.lbns(), vec![1]);
        let mut sp = FakeSink::default();
        for (lpn, mask) in [(0, 0x01), (1, 0x01), (2, 0x01), (4, 0xff), (8, 0x07)] {
            pages
                .write(HostPage::new(lpn, mask, 1, 0), &mut sp)
                .unwrap();
        }
        assert_eq!(sp.lbns(), vec![0], "by pages: the 3-page group");
        // LBN 0: 3 sectors (older), LBN 2: 3 sectors; LBN 3 arrives.
        b.write(HostPage::new(12, 0x01, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![1, 0]);
        assert_eq!(s.flushed[1].offsets, vec![0, 1, 2]);
        assert_eq!(
            b.write(HostPage::new(12, 0x06, 2, 0), &mut s).unwrap(),
            0x01
        );
        assert_eq!(b.write(HostPage::new(8, 0x01, 2, 0), &mut s).unwrap(), 0x07);
        for lpn in [16, 20] {
            b.write(HostPage::new(lpn, 0x01, 1, 0), &mut s).unwrap();
        }
        assert_eq!(b.pages(), 4);
        b.write(HostPage::new(24, 0x01, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![1, 0, 3]);
        // Left: LBN 2 (3 sectors), then LBNs 4, 5, 6 (1 each) in write order.
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![1, 0, 3, 2, 4, 5, 6]);
    }

    /// A trim lowers a group's weight by the sectors its page held.
    #[test]
    fn trim_lowers_the_weight_by_its_sectors() {
        let mut b = fab_by(8, 4, true);
        let mut s = FakeSink::default();
        // LBN 0: pages 0 (8 sectors) and 1 (1); LBN 1: page 4 (6 sectors), written later.
        for (lpn, mask) in [(0, 0xff), (1, 0x01), (4, 0x3f)] {
            b.write(HostPage::new(lpn, mask, 1, 0), &mut s).unwrap();
        }
        // Trimming page 0 leaves LBN 0 with 1 sector: LBN 1 (6) goes first.
        b.trim(0);
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![1, 0]);
    }

    #[test]
    fn largest_group_then_lru_tie() {
        let mut b = fab(6, 4);
        let mut s = FakeSink::default();
        // Groups: 0 → 2 pages, 1 → 2 pages, 2 → 1 page, 3 → 1 page (written in that order).
        for lpn in [0, 1, 4, 5, 8, 12] {
            assert_eq!(b.write(HostPage::new(lpn, 0xff, 1, 0), &mut s).unwrap(), 0);
        }
        // Full: a miss evicts the largest group; LBN 0 and 1 tie at 2 pages → LRU = LBN 0.
        b.write(HostPage::new(16, 0xff, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![0]);
        assert_eq!(s.flushed[0].offsets, vec![0, 1]);
        // Touch LBN 2 up to 2 pages: now LBN 1 (2 pages) and 2 (2 pages) tie; 1 is LRU.
        b.write(HostPage::new(9, 0xff, 1, 0), &mut s).unwrap();
        b.write(HostPage::new(20, 0xff, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 1]);
        // LBN 2 (2 pages) is rewritten, then LBN 3 grows to 2 pages after it: the tie goes to
        // LBN 2, now the less recently written one.
        b.write(HostPage::new(8, 0xff, 2, 0), &mut s).unwrap();
        assert_eq!(b.write(HostPage::new(8, 0xff, 3, 0), &mut s).unwrap(), 0xff);
        b.write(HostPage::new(13, 0xff, 1, 0), &mut s).unwrap();
        assert_eq!(b.pages(), 6);
        b.write(HostPage::new(24, 0xff, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 1, 2]);
    }

    #[test]
    fn full_group_first_and_flush_all_order() {
        let mut b = fab(8, 4);
        let mut s = FakeSink::default();
        for lpn in [3, 1, 8, 9, 10, 0, 2, 20] {
            b.write(HostPage::new(lpn, 0xff, 1, 0), &mut s).unwrap();
        }
        // LBN 0 is full (4 pages), LBN 2 has 3, LBN 5 has 1.
        b.write(HostPage::new(28, 0xff, 1, 0), &mut s).unwrap();
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
            b.write(HostPage::new(lpn, 0x0f, 1, 0), &mut s).unwrap();
        }
        assert_eq!(b.read(1, 0xff, &mut s).unwrap(), 0x0f);
        b.trim(1);
        b.trim(5);
        b.trim(5);
        assert_eq!(b.pages(), 2);
        // Both groups hold 1 page; LBN 0 is older → flushed first.
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 1]);
        b.write(HostPage::new(0, 0xff, 1, 0), &mut s).unwrap();
        b.trim(0);
        assert_eq!(b.pages(), 0);
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 1]);
    }
}
