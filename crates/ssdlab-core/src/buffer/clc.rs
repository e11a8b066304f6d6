//! `clc`: Cold and Largest Cluster (Kang, Park, Jung, Shim, Cha, IEEE TC 2009; ALGORITHMS.md
//! §1.6; evaluated against REF on BAST by seed 002). A cluster is the buffered pages of one LBN.
//!
//! * Size-independent list (the hot part): clusters in LRU order, holding at most
//!   ⌊`hot_fraction` × capacity⌋ pages. Writing any page of a cluster (in either list) moves it
//!   to the head of this list; a page miss of an unbuffered LBN creates a one-page cluster there.
//! * While the hot list holds more pages than that, its LRU cluster moves into the size-dependent
//!   list (the cold part), ordered by size (pages) and, among equal sizes, by recency.
//! * Victim: the largest cold cluster (ties: the least recently written); with no cold cluster,
//!   the hot list's LRU cluster. It is flushed whole in ascending offset; pad-or-log per the
//!   padding policy (default none, as in the base policy).
//!
//! With `hot_fraction` = 1 nothing ever turns cold and CLC is block-level LRU (`block-lru`); with
//! 0 every cluster is cold at once and CLC is FAB ranking by pages (`fab` with `weight =
//! "pages"`; seed 000's FAB ranks by sectors); tests check both identities.
//!
//! Structure: the cold list is one recency list per cluster size (as in `fab`): a cluster
//! entering it is always the most recently written of its size (it was written after every
//! cluster already there turned cold), so it goes to the head of its size's list.
//! Reads never insert and do not change recency.

use super::groups::{grow, insert_ordered, GroupPolicy, GroupStore, SizeLists, Written};
use super::list::{Links, List, NIL};
use super::{BufferParams, FlushSink};
use crate::error::Result;
use crate::ftl::FtlView;
use crate::units::{Lpn, SectorMask};

crate::params! {
    /// CLC's parameters (`[buffer.clc]`).
    pub struct Params {
        /// Capacity of the size-independent (hot, LRU) cluster list as a fraction of the buffer,
        /// counted in pages, in [0, 1]. Seed 002 gives no value; 0.1 is ALGORITHMS.md's default
        /// (1 = block-level LRU, 0 = FAB by pages).
        hot_fraction: f64 = 0.1,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        super::unit_interval(table, "hot_fraction", self.hot_fraction)
    }
}

pub struct ClcBuffer {
    /// Pages the hot list may hold.
    hot_cap: u64,
    store: GroupStore,
    links: Links,
    hot: List,
    hot_pages: u64,
    /// Cold clusters by size, most recently written first.
    cold: SizeLists,
    /// Per group slot: in the hot list.
    is_hot: Vec<bool>,
    /// Last write stamp per group slot (keeps cold order exact after a trim).
    stamp: Vec<u64>,
    clock: u64,
    /// A victim choice in place of CLC's own (the `integrated` buffer's); None: CLC's.
    chooser: Option<Box<dyn VictimChoice>>,
}

/// A victim choice that replaces CLC's own, told of every cluster that turns cold or leaves the
/// cold list (`integrated.rs` builds on CLC through it).
pub trait VictimChoice: Send {
    /// Cluster `g` of `store` turned cold.
    fn cooled(&mut self, g: u32, store: &GroupStore, view: &dyn FtlView);
    /// Cluster `g` left the cold list (written again, flushed, or emptied by trims).
    fn removed(&mut self, g: u32);
    /// The victim, given CLC's own (`clc_victim`).
    fn choose(&mut self, clc_victim: u32, store: &GroupStore, view: &dyn FtlView) -> u32;
    fn gauges(&self) -> Vec<(&'static str, f64)>;
}

impl ClcBuffer {
    pub fn new(p: BufferParams, hot_fraction: f64) -> Self {
        ClcBuffer {
            hot_cap: (hot_fraction * p.capacity_pages as f64).floor() as u64,
            cold: SizeLists::new(p.pages_per_block),
            store: GroupStore::new(p),
            links: Links::default(),
            hot: List::default(),
            hot_pages: 0,
            is_hot: Vec::new(),
            stamp: Vec::new(),
            clock: 0,
            chooser: None,
        }
    }

    /// CLC's lists with another victim choice (the `integrated` buffer).
    pub fn with_choice(p: BufferParams, hot_fraction: f64, choice: Box<dyn VictimChoice>) -> Self {
        ClcBuffer {
            chooser: Some(choice),
            ..ClcBuffer::new(p, hot_fraction)
        }
    }

    /// Pages in the hot list.
    pub fn hot_pages(&self) -> u64 {
        self.hot_pages
    }

    /// The cluster evicted next: the largest cold one (least recently written among equals),
    /// else the hot list's LRU cluster.
    fn victim(&self) -> Option<u32> {
        self.cold
            .tails_desc()
            .next()
            .or((self.hot.tail != NIL).then_some(self.hot.tail))
    }

    fn unlink(&mut self, g: u32) {
        let n = self.store.group(g).n_pages;
        if self.is_hot[g as usize] {
            self.links.remove(&mut self.hot, g);
            self.hot_pages -= n as u64;
        } else {
            self.cold.remove(n, g);
        }
    }

    /// Move LRU clusters of the hot list into the cold list until it fits its capacity.
    fn cool(&mut self, view: &dyn FtlView) {
        while self.hot_pages > self.hot_cap {
            let g = self.hot.tail;
            let n = self.store.group(g).n_pages;
            self.links.remove(&mut self.hot, g);
            self.hot_pages -= n as u64;
            self.is_hot[g as usize] = false;
            self.cold.push_front(n, g);
            if let Some(c) = &mut self.chooser {
                c.cooled(g, &self.store, view);
            }
        }
    }
}

impl GroupPolicy for ClcBuffer {
    super::groups::store_in_field!();

    #[inline]
    fn written(&mut self, _lpn: Lpn, _mask: SectorMask, w: Written, sink: &dyn FlushSink) {
        let g = w.group;
        grow(&mut self.is_hot, g);
        grow(&mut self.stamp, g);
        let n = self.store.group(g).n_pages;
        let added = (w.before == 0) as u32;
        if w.new_group {
            self.links.push_front(&mut self.hot, g);
            self.hot_pages += 1;
        } else if self.is_hot[g as usize] {
            self.links.move_to_front(&mut self.hot, g);
            self.hot_pages += added as u64;
        } else {
            self.cold.remove(n - added, g);
            if let Some(c) = &mut self.chooser {
                c.removed(g);
            }
            self.links.push_front(&mut self.hot, g);
            self.hot_pages += n as u64;
        }
        self.is_hot[g as usize] = true;
        self.clock += 1;
        self.stamp[g as usize] = self.clock;
        self.cool(sink.view());
    }

    fn drop_page(&mut self, lpn: Lpn) {
        let Some(g) = self.store.page_group(lpn) else {
            return;
        };
        self.unlink(g);
        let (_, empty) = self.store.trim(lpn).expect("page is buffered");
        if empty {
            if let Some(c) = &mut self.chooser {
                c.removed(g);
            }
            return;
        }
        let n = self.store.group(g).n_pages;
        let stamp = &self.stamp;
        let by_stamp = |i: u32| stamp[i as usize];
        if self.is_hot[g as usize] {
            // Recency is unchanged; the hot list shrank, so nothing turns cold.
            insert_ordered(&mut self.links, &mut self.hot, g, by_stamp);
            self.hot_pages += n as u64;
        } else {
            self.cold.insert_ordered(n, g, by_stamp);
        }
    }

    fn evict(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        let Some(mut g) = self.victim() else {
            return Ok(false);
        };
        if let Some(c) = &mut self.chooser {
            g = c.choose(g, &self.store, sink.view());
            c.removed(g);
        }
        self.unlink(g);
        self.store.flush_group(g, sink)?;
        if let Some(next) = self.victim() {
            sink.prefetch_unit(self.store.group(next).lbn);
        }
        Ok(true)
    }

    fn more_gauges(&self, gauges: &mut Vec<(&'static str, f64)>) {
        if let Some(c) = &self.chooser {
            gauges.extend(c.gauges());
        }
    }
}

/// The registry entry of `clc`.
pub static ENTRY: super::Entry = super::entry! {
    "clc", Params, super::GROUP_KEYS, padding "none",
    "CLC (seed 002): clusters of an LBN's pages; writes move a cluster to an LRU list holding `hot_fraction` of the buffer, whose overflow goes to a cold list ordered by size; victim = the largest cold cluster (ties: least recently written), else the LRU cluster, flushed whole. Default padding: none.",
    |cfg, p, q| Ok(Box::new(ClcBuffer::new(p, q.hot_fraction)))
};

#[cfg(test)]
mod tests {
    use super::super::groups::testutil::{write_all, FakeSink};
    use super::super::WriteBuffer;
    use super::*;
    use crate::padding::{FixedPadding, NoPadding};

    fn clc(capacity: u64, hot_fraction: f64) -> ClcBuffer {
        ClcBuffer::new(
            BufferParams {
                capacity_pages: capacity,
                pages_per_block: 4,
                padding: Box::new(NoPadding),
            },
            hot_fraction,
        )
    }

    /// 4 pages per block, capacity 8, hot list ⌊0.5 × 8⌋ = 4 pages. LBN 0 = A, 1 = B, … 6 = G.
    ///
    /// step write   hot (MRU → LRU, pages)                     cold (size: MRU → LRU)
    ///  1   0 1 2   A3                                         —
    ///  2   4       B1 A3                                      —
    ///  3   8       C1 B1 A3 = 5 > 4: A turns cold → C1 B1      3: A
    ///  4   5       B2 C1                                      3: A
    ///  5   12      D1 B2 C1                                   3: A
    ///  6   9       C2 D1 B2 = 5: B cold → C2 D1 (3 pages)     3: A; 2: B
    ///      (8 pages buffered: the buffer is full)
    ///  7   4 (page hit in cold B) B2 C2 D1 = 5: D cold → B2 C2 (4)    3: A; 1: D
    ///  8   16 (miss) victim = largest cold = A, offsets 0 1 2 (5 pages left);
    ///              E1 B2 C2 = 5: C cold → E1 B2 (3)               2: C; 1: D
    ///  9   13 (new page of cold D; 7 pages, no eviction) D2 E1 B2 = 5: B cold
    ///              → D2 E1 (3)                                    2: B C
    /// 10   20      F1 D2 E1 = 4 (8 pages)                     2: B C
    /// 11   24 (miss) victim = largest cold: B and C hold 2, C is the least recently written
    ///              (step 6 vs step 7) → C, offsets 0 1; G1 F1 D2 E1 = 5: E cold → G1 F1 D2
    ///                                                             2: B; 1: E
    /// flush_all: cold largest first: B (0 1), E (0); then hot from the LRU end: D (0 1), F, G.
    #[test]
    fn hot_lru_then_largest_cold() {
        let mut b = clc(8, 0.5);
        let mut s = FakeSink::default();
        assert_eq!(write_all(&mut b, &mut s, &[0, 1, 2, 4, 8, 5, 12, 9]), 0);
        assert!(s.flushed.is_empty());
        assert_eq!((b.pages(), b.hot_pages()), (8, 3));
        assert_eq!(write_all(&mut b, &mut s, &[4]), 1);
        assert!(s.flushed.is_empty());
        assert_eq!((b.pages(), b.hot_pages()), (8, 4));
        assert_eq!(write_all(&mut b, &mut s, &[16]), 0);
        assert_eq!(s.lbns(), vec![0]);
        assert_eq!(s.flushed[0].offsets, vec![0, 1, 2]);
        assert_eq!((b.pages(), b.hot_pages()), (6, 3));
        write_all(&mut b, &mut s, &[13]);
        assert_eq!((b.pages(), b.hot_pages()), (7, 3));
        write_all(&mut b, &mut s, &[20]);
        assert_eq!((b.pages(), b.hot_pages(), s.flushed.len()), (8, 4, 1));
        write_all(&mut b, &mut s, &[24]);
        assert_eq!(s.lbns(), vec![0, 2]);
        assert_eq!(s.flushed[1].offsets, vec![0, 1]);
        assert_eq!((b.pages(), b.hot_pages()), (7, 4));
        b.flush_all(&mut s).unwrap();
        assert_eq!(s.lbns(), vec![0, 2, 1, 4, 3, 5, 6]);
        let sizes: Vec<usize> = s.flushed.iter().map(|f| f.offsets.len()).collect();
        assert_eq!(sizes, vec![3, 2, 2, 1, 2, 1, 1]);
        assert_eq!(s.flushed[4].offsets, vec![0, 1]);
        assert_eq!(b.pages(), 0);
    }

    /// A cluster growing past the hot capacity on its own turns cold at once; a full cold cluster
    /// is the next victim, padded per the padding policy; reads change nothing.
    #[test]
    fn reads_trims_and_padding() {
        let mut b = ClcBuffer::new(
            BufferParams {
                capacity_pages: 6,
                pages_per_block: 4,
                padding: Box::new(FixedPadding { threshold: 0.5 }),
            },
            0.4, // hot capacity ⌊2.4⌋ = 2 pages
        );
        let mut s = FakeSink::default();
        // A = LBN 0 gets 3 pages: cold after its 3rd. B = LBN 1, 2 pages: hot.
        write_all(&mut b, &mut s, &[3, 0, 1, 4, 5]);
        assert_eq!(b.hot_pages(), 2);
        assert_eq!(b.read(0, 0xff, &mut s).unwrap(), 0xff);
        assert_eq!(b.read(2, 0xff, &mut s).unwrap(), 0);
        // Trim a page of A (cold 3 → 2) and of B (hot 2 → 1).
        b.trim(1);
        b.trim(5);
        b.trim(5);
        assert_eq!((b.pages(), b.hot_pages()), (3, 1));
        // C = LBN 2 (1 page): hot holds C(1) B(1).
        write_all(&mut b, &mut s, &[8]);
        b.flush_all(&mut s).unwrap();
        // A (cold, 2 pages = half a block: padded), then hot LRU B, then C.
        let got: Vec<(u64, Vec<u32>, bool)> = s
            .flushed
            .iter()
            .map(|f| (f.lbn, f.offsets.clone(), f.padded))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, vec![0, 3], true),
                (1, vec![0], false),
                (2, vec![0], false)
            ]
        );
    }

    #[test]
    fn bad_fraction_names_field() {
        use crate::params::Params as _;
        let e = Params { hot_fraction: 1.5 }
            .check("buffer.clc")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("buffer.clc.hot_fraction") && e.contains("1.5"),
            "{e}"
        );
    }
}
