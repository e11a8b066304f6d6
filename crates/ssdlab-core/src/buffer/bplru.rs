//! `bplru`: Block Padding LRU (Kim & Ahn 2008; ALGORITHMS.md §1.4) as configured in seed 000
//! Table 2: pages grouped by LBN in one LRU list; victim = a full group first (all pages of the
//! block buffered; the one nearest the LRU end), else the LRU group; flushed whole in ascending
//! offset and padded per the padding policy (default `fixed` at 0.5 of a block, the thesis
//! setting).
//!
//! LRU compensation (`buffer.bplru_compensation`): `strict` (default) moves a group to the LRU
//! tail when the write that completes a strictly sequential fill 0, 1, …, N−1 arrives; `full`
//! moves it there when it becomes full in any order; `off` never. Reads never insert and do not
//! change recency.

use super::groups::{grow, GroupPolicy, GroupStore, Written};
use super::list::{Links, List, NIL};
use super::{BufferParams, FlushSink};
use crate::error::Result;
use crate::units::{Lpn, SectorMask};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compensation {
    Strict,
    Full,
    Off,
}

crate::params! {
    /// BPLRU's parameters (`[buffer.bplru]`).
    pub struct Params {
        /// LRU compensation: strict (a group filled sequentially from offset 0 to N−1 moves to
        /// the LRU end) | full (any full group does) | off.
        compensation: String = "strict".into(),
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        Compensation::from_name(&self.compensation, table).map(|_| ())
    }
}

impl Compensation {
    pub fn from_name(name: &str, table: &str) -> Result<Self> {
        use Compensation::*;
        let modes = [("strict", Strict), ("full", Full), ("off", Off)];
        super::choice(table, "compensation", name, &modes)
    }
}

/// `seq_next` value once a group's fill is no longer strictly sequential.
const BROKEN: u32 = u32::MAX;

pub struct BplruBuffer {
    store: GroupStore,
    /// All groups, MRU at the head.
    links: Links,
    lru: List,
    /// Full groups only, in the same relative order as in `lru`.
    flinks: Links,
    full: List,
    /// Next expected offset of a strictly sequential fill per group slot (BROKEN when not).
    seq_next: Vec<u32>,
    comp: Compensation,
}

impl BplruBuffer {
    pub fn new(p: BufferParams, comp: Compensation) -> Self {
        BplruBuffer {
            store: GroupStore::new(p),
            links: Links::default(),
            lru: List::default(),
            flinks: Links::default(),
            full: List::default(),
            seq_next: Vec::new(),
            comp,
        }
    }

    fn is_full(&self, g: u32) -> bool {
        self.store.group(g).n_pages as u64 == self.store.ppb
    }

    /// The group evicted next: the least recently used full group, else the least recently used.
    fn victim(&self) -> Option<u32> {
        [self.full.tail, self.lru.tail]
            .into_iter()
            .find(|&g| g != NIL)
    }
}

impl GroupPolicy for BplruBuffer {
    super::groups::store_in_field!();

    #[inline]
    fn written(&mut self, lpn: Lpn, _mask: SectorMask, w: Written, _sink: &dyn FlushSink) {
        let g = w.group;
        grow(&mut self.seq_next, g);
        if w.new_group {
            self.seq_next[g as usize] = 0;
            self.links.push_front(&mut self.lru, g);
        } else {
            self.links.move_to_front(&mut self.lru, g);
        }
        let offset = self.store.offset_of(lpn);
        let seq = &mut self.seq_next[g as usize];
        *seq = if *seq == offset { offset + 1 } else { BROKEN };
        let completed_seq = *seq as u64 == self.store.ppb;
        let full = self.is_full(g);
        let became_full = full && w.before == 0;
        if became_full {
            self.flinks.push_front(&mut self.full, g);
        } else if full {
            self.flinks.move_to_front(&mut self.full, g);
        }
        let compensate = match self.comp {
            Compensation::Strict => completed_seq,
            Compensation::Full => became_full,
            Compensation::Off => false,
        };
        if compensate {
            self.links.move_to_back(&mut self.lru, g);
            self.flinks.move_to_back(&mut self.full, g);
        }
    }

    fn drop_page(&mut self, lpn: Lpn) {
        let Some(g) = self.store.page_group(lpn) else {
            return;
        };
        if self.is_full(g) {
            self.flinks.remove(&mut self.full, g);
        }
        let (_, empty) = self.store.trim(lpn).expect("page is buffered");
        self.seq_next[g as usize] = BROKEN;
        if empty {
            self.links.remove(&mut self.lru, g);
        }
    }

    fn evict(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        let Some(g) = self.victim() else {
            return Ok(false);
        };
        if self.is_full(g) {
            self.flinks.remove(&mut self.full, g);
        }
        self.links.remove(&mut self.lru, g);
        self.store.flush_group(g, sink)?;
        // Likely the next victim (unless written before then): start loading its mapping.
        if let Some(next) = self.victim() {
            sink.prefetch_unit(self.store.group(next).lbn);
        }
        Ok(true)
    }
}

/// The registry entry of `bplru`.
pub static ENTRY: super::Entry = super::entry! {
    "bplru", Params, super::GROUP_KEYS, padding "fixed",
    "BPLRU: block-level LRU; victim = a full group first, else the LRU group; LRU compensation moves sequentially filled groups to the LRU end. Default padding: fixed at 0.5 of a block.",
    |cfg, p, q| {
        let comp = Compensation::from_name(&q.compensation, "buffer.bplru")?;
        Ok(Box::new(BplruBuffer::new(p, comp)))
    }
};

#[cfg(test)]
mod tests {
    use super::super::groups::testutil::FakeSink;
    use super::super::{HostPage, WriteBuffer};
    use super::*;
    use crate::padding::{FixedPadding, NoPadding};

    fn bplru(capacity: u64, comp: Compensation) -> BplruBuffer {
        BplruBuffer::new(
            BufferParams {
                capacity_pages: capacity,
                pages_per_block: 4,
                padding: Box::new(NoPadding),
            },
            comp,
        )
    }

    /// Fill LBN `a` out of order, then LBN `b` strictly sequentially, then one page of LBN 9;
    /// return the LBN evicted by the next miss.
    fn victim_after(comp: Compensation, seq_first: bool) -> u64 {
        let mut b = bplru(9, comp);
        let mut s = FakeSink::default();
        let ooo = |lbn: u64| [3, 1, 0, 2].map(|o| lbn * 4 + o);
        let seq = |lbn: u64| [0, 1, 2, 3].map(|o| lbn * 4 + o);
        let order: Vec<u64> = if seq_first {
            seq(1).into_iter().chain(ooo(2)).collect()
        } else {
            ooo(2).into_iter().chain(seq(1)).collect()
        };
        for lpn in order.into_iter().chain([36]) {
            b.write(HostPage::new(lpn, 0xff, 1, 0), &mut s).unwrap();
        }
        assert!(s.flushed.is_empty());
        b.write(HostPage::new(40, 0xff, 1, 0), &mut s).unwrap();
        s.flushed[0].lbn
    }

    #[test]
    fn compensation_modes() {
        // Out-of-order full group (LBN 2) first, then sequential LBN 1.
        assert_eq!(victim_after(Compensation::Strict, false), 1);
        assert_eq!(victim_after(Compensation::Full, false), 1);
        assert_eq!(victim_after(Compensation::Off, false), 2);
        // Sequential LBN 1 first, then out-of-order LBN 2.
        assert_eq!(victim_after(Compensation::Strict, true), 1);
        assert_eq!(victim_after(Compensation::Full, true), 2);
        assert_eq!(victim_after(Compensation::Off, true), 1);
    }

    #[test]
    fn full_group_first_else_lru() {
        let mut b = bplru(7, Compensation::Off);
        let mut s = FakeSink::default();
        // LBN 0: 1 page (LRU), LBN 1: full (written out of order), LBN 2: 2 pages.
        for lpn in [0, 7, 5, 4, 6, 8, 9] {
            b.write(HostPage::new(lpn, 0xff, 1, 0), &mut s).unwrap();
        }
        b.write(HostPage::new(0, 0xff, 2, 0), &mut s).unwrap(); // hit: LBN 0 to MRU, no eviction
        b.write(HostPage::new(12, 0xff, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![1]);
        assert_eq!(s.flushed[0].offsets, vec![0, 1, 2, 3]);
        // No full group left: the LRU group (LBN 2; LBN 0 was rewritten after it).
        b.write(HostPage::new(16, 0xff, 1, 0), &mut s).unwrap();
        b.write(HostPage::new(20, 0xff, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![1]);
        b.write(HostPage::new(24, 0xff, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![1]);
        b.write(HostPage::new(28, 0xff, 1, 0), &mut s).unwrap();
        assert_eq!(s.lbns(), vec![1, 2]);
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![1, 2, 0, 3, 4, 5, 6, 7]);
        assert_eq!(b.pages(), 0);
    }

    #[test]
    fn padding_half_block() {
        let mut b = BplruBuffer::new(
            BufferParams {
                capacity_pages: 8,
                pages_per_block: 4,
                padding: Box::new(FixedPadding { threshold: 0.5 }),
            },
            Compensation::Strict,
        );
        let mut s = FakeSink::default();
        for lpn in [0, 1, 4, 8, 9, 10, 11] {
            b.write(HostPage::new(lpn, 0xff, 1, 0), &mut s).unwrap();
        }
        b.trim(1);
        b.flush_all(&mut s).unwrap();
        // LBN 2 full (no padding needed), then LRU order: LBN 0 (1 page after trim), LBN 1.
        let got: Vec<(u64, bool)> = s.flushed.iter().map(|f| (f.lbn, f.padded)).collect();
        assert_eq!(got, vec![(2, false), (0, false), (1, false)]);
        let mut s = FakeSink::default();
        for lpn in [0, 1, 4] {
            b.write(HostPage::new(lpn, 0xff, 1, 0), &mut s).unwrap();
        }
        b.flush_all(&mut s).unwrap();
        let got: Vec<(u64, bool)> = s.flushed.iter().map(|f| (f.lbn, f.padded)).collect();
        assert_eq!(got, vec![(0, true), (1, false)]);
    }

    #[test]
    fn bad_mode_names_field() {
        let e = Compensation::from_name("lazy", "buffer.bplru")
            .unwrap_err()
            .to_string();
        assert!(e.contains("buffer.bplru.compensation"), "{e}");
    }
}
