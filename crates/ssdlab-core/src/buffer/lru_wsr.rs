//! `lru-wsr`: LRU with Write Sequence Reordering (Jung, Shim, Park, Kang, Cha, IEEE TCE 2008;
//! ALGORITHMS.md §1.8), a baseline of seed 003. One LRU list of clean and dirty pages
//! ([`super::pagecache`]); each page carries a cold flag, 0 on insertion. Every hit (read or
//! write) clears it and moves the page to the MRU end. The victim is found at the LRU end: a clean
//! page is dropped; a dirty page whose flag is set is flushed alone; a dirty page whose flag is
//! clear gets a second chance: its flag is set, it moves to the MRU end, and the next tail is
//! examined. Every dirty page is passed over at most once before its flag is set, so the loop
//! ends within one pass over the list.
//!
//! Seed 003 describes LRU-WSR as keeping dirty pages judged hot by their re-use distance: the
//! cold flag is that judgement, a dirty page not accessed during one trip from MRU to LRU being
//! cold.
//!
//! When every page is dirty (writes alone, or `cache_reads = false`) LRU-WSR is exactly LRU: the
//! pages accessed since they were last given a second chance lie at the MRU side of every cold
//! page, so the tail is cold (and the LRU page) whenever any page is cold, and when none is, the
//! loop passes over the whole list, which leaves its order unchanged, and evicts the tail. It
//! reorders writes only when clean pages stop the loop part-way.

use super::pagecache::{CachePolicy, PageCache, Pages};
use crate::error::Result;

crate::params! {
    /// LRU-WSR's parameters (`[buffer.lru-wsr]`).
    pub struct Params {
        /// true: a read miss inserts the page clean (whole, evicting first when full) and a read
        /// of a buffered page is a hit (flag cleared, page to MRU); false: reads are served from
        /// buffered sectors and change nothing (every page is then dirty and LRU-WSR is LRU).
        cache_reads: bool = true,
    }
}

impl crate::params::Params for Params {}

/// Page state: the cold flag.
const COLD: u8 = 1;

pub struct WsrPolicy;

pub type LruWsrBuffer = PageCache<WsrPolicy>;

pub fn new(
    capacity_pages: u64,
    pages_per_block: u64,
    full_mask: crate::units::SectorMask,
    p: &Params,
) -> Result<LruWsrBuffer> {
    Ok(PageCache::new(
        capacity_pages,
        pages_per_block,
        full_mask,
        p.cache_reads,
        WsrPolicy,
    ))
}

impl CachePolicy for WsrPolicy {
    #[inline]
    fn inserted(&mut self, _pages: &mut Pages, _i: u32) {}

    #[inline]
    fn hit(&mut self, pages: &mut Pages, i: u32) {
        pages.get_mut(i).state = 0;
        pages.move_to_front(i);
    }

    #[inline]
    fn unlink(&mut self, pages: &mut Pages, i: u32) {
        pages.unlink(i);
    }

    #[inline]
    fn victim(&mut self, pages: &mut Pages) -> u32 {
        loop {
            let t = pages.tail;
            let p = pages.get_mut(t);
            if !p.dirty || p.state == COLD {
                return t;
            }
            // Second chance (a lone page comes straight back here, now cold).
            p.state = COLD;
            pages.move_to_front(t);
        }
    }
}

/// The registry entry of `lru-wsr`.
pub static ENTRY: super::Entry = super::entry! {
    "lru-wsr", Params, super::BUFFER_KEYS, padding "none",
    "LRU-WSR: one page-level LRU list of dirty pages and (with `cache_reads`) clean pages inserted on read misses; a hit clears the page's cold flag and moves it to MRU; at the LRU end a clean page is dropped, a cold dirty page flushed alone, a dirty page not cold marked cold and moved to MRU (second chance).",
    |cfg, p, q| {
        Ok(Box::new(new(p.capacity_pages, p.pages_per_block, super::full_page_mask(cfg), &q)?))
    }
};

#[cfg(test)]
mod tests {
    use super::super::pagecache::testutil::{
        assert_matches_model, assert_writes_alone_are_lru, MPage, Sink,
    };
    use super::super::{HostPage, WriteBuffer};
    use super::*;

    fn wsr(cap: u64, cache_reads: bool) -> LruWsrBuffer {
        new(cap, 4, 0xff, &Params { cache_reads }).unwrap()
    }

    // A hand-worked trace, capacity 3 pages of 8 sectors (list MRU → LRU; d dirty, c clean,
    // * cold):
    //  1. R 10         miss: 10 inserted clean                      [10c]
    //  2. W 1 0x0f v1  miss                                         [1d 10c]
    //  3. W 2 v2       miss                                         [2d 1d 10c]
    //  4. R 1 0xf0     partial hit on dirty 1 (returns 0x0f): the flash read makes it whole
    //                  (0xff); hit → MRU                            [1d 2d 10c]
    //  5. W 3 v3       full: tail 10 clean → dropped (clean eviction 1)   [3 1 2]
    //  6. W 4 v4       full: 2, 1, 3 are dirty and not cold: each is marked cold and moved to
    //                  MRU ([3* 1* 2*]); tail 2 is now cold → flushed (v2)  [4 3* 1*]
    //  7. R 3          full hit (0xff): cold flag cleared, MRU      [3 4 1*]
    //  8. R 20         miss, full: tail 1 cold → flushed (v1, whole: 0xff)  [20c 3 4]
    //  9. W 20 0x01 v5 write hit on a clean page (returns 0xff): dirty, whole   [20 3 4]
    // 10. W 5 v6       full: 4, 3, 20 get second chances ([20* 3* 4*]); 4 → flushed (v4)
    //                                                               [5 20* 3*]
    // 11. trim 3                                                    [5 20*]
    // 12. R 6          miss, room: inserted clean                   [6c 5 20*]
    // 13. flush_all: 20 cold → flushed (v5); 5 → second chance [5* 6c]; 6 clean → dropped (the
    //     final flush does not count it); 5 → flushed (v6).
    #[test]
    fn hand_worked_trace() {
        let mut b = wsr(3, true);
        let mut s = Sink::default();
        assert_eq!(b.read(10, 0xff, &mut s).unwrap(), 0);
        assert_eq!(b.write(HostPage::new(1, 0x0f, 1, 0), &mut s).unwrap(), 0);
        assert_eq!(b.write(HostPage::new(2, 0xff, 2, 0), &mut s).unwrap(), 0);
        assert_eq!(b.read(1, 0xf0, &mut s).unwrap(), 0x0f);
        assert_eq!(
            b.order(),
            vec![(1, true, 0xff), (2, true, 0xff), (10, false, 0xff)]
        );
        b.write(HostPage::new(3, 0xff, 3, 0), &mut s).unwrap();
        assert_eq!((s.lpns(), b.clean_evictions()), (vec![], 1));
        b.write(HostPage::new(4, 0xff, 4, 0), &mut s).unwrap();
        assert_eq!(s.lpns(), vec![2]);
        let lpns = |b: &LruWsrBuffer| b.order().iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(lpns(&b), vec![4, 3, 1]);
        assert_eq!(b.read(3, 0xff, &mut s).unwrap(), 0xff);
        assert_eq!(lpns(&b), vec![3, 4, 1]);
        assert_eq!(b.read(20, 0xff, &mut s).unwrap(), 0);
        assert_eq!(
            b.write(HostPage::new(20, 0x01, 5, 0), &mut s).unwrap(),
            0xff
        );
        assert_eq!(b.order()[0], (20, true, 0xff));
        b.write(HostPage::new(5, 0xff, 6, 0), &mut s).unwrap();
        assert_eq!(lpns(&b), vec![5, 20, 3]);
        b.trim(3);
        b.read(6, 0xff, &mut s).unwrap();
        assert_eq!(b.pages(), 3);
        b.flush_all(&mut s).unwrap();
        assert_eq!(
            s.0,
            vec![
                (2, 2, 0xff),
                (1, 1, 0xff),
                (4, 4, 0xff),
                (20, 5, 0xff),
                (5, 6, 0xff)
            ]
        );
        assert_eq!((b.pages(), b.clean_evictions()), (0, 1));
        assert_eq!(
            b.gauges(&Sink::default()),
            vec![("buffer.clean_evictions", 1.0)]
        );
    }

    // The same trace with `cache_reads = false`: reads return buffered sectors and change
    // nothing, so only the writes order the list.
    //  6. W 4: 1, 2, 3 get second chances; 1 → flushed (v1, partial 0x0f: no read filled it)
    //  9. W 20 0x01 v5: a miss; tail 2 (cold) → flushed.  10. W 5: 3 (cold) → flushed.
    // 13. flush_all [5 20 4]: 4, 20, 5 get second chances, then leave in that order.
    #[test]
    fn reads_not_cached() {
        let mut b = wsr(3, false);
        let mut s = Sink::default();
        assert_eq!(b.read(10, 0xff, &mut s).unwrap(), 0);
        b.write(HostPage::new(1, 0x0f, 1, 0), &mut s).unwrap();
        b.write(HostPage::new(2, 0xff, 2, 0), &mut s).unwrap();
        assert_eq!(b.read(1, 0xf0, &mut s).unwrap(), 0x0f);
        b.write(HostPage::new(3, 0xff, 3, 0), &mut s).unwrap();
        b.write(HostPage::new(4, 0xff, 4, 0), &mut s).unwrap();
        assert_eq!(b.read(3, 0xff, &mut s).unwrap(), 0xff);
        assert_eq!(b.read(20, 0xff, &mut s).unwrap(), 0);
        assert_eq!(b.write(HostPage::new(20, 0x01, 5, 0), &mut s).unwrap(), 0);
        b.write(HostPage::new(5, 0xff, 6, 0), &mut s).unwrap();
        b.trim(3);
        assert_eq!(b.read(6, 0xff, &mut s).unwrap(), 0);
        b.flush_all(&mut s).unwrap();
        assert_eq!(
            s.0,
            vec![
                (1, 1, 0x0f),
                (2, 2, 0xff),
                (3, 3, 0xff),
                (4, 4, 0xff),
                (20, 5, 0x01),
                (5, 6, 0xff)
            ]
        );
        assert_eq!(b.clean_evictions(), 0);
    }

    /// A lone dirty page in a one-page buffer: the loop gives it its second chance, then flushes
    /// it; a write to a page that is not buffered then takes its place.
    #[test]
    fn one_page_buffer() {
        let mut b = wsr(1, true);
        let mut s = Sink::default();
        b.write(HostPage::new(7, 0xff, 1, 0), &mut s).unwrap();
        b.write(HostPage::new(8, 0xff, 2, 0), &mut s).unwrap();
        b.read(9, 0xff, &mut s).unwrap();
        b.read(10, 0xff, &mut s).unwrap();
        assert_eq!((s.lpns(), b.clean_evictions()), (vec![7, 8], 1));
        assert_eq!(b.order(), vec![(10, false, 0xff)]);
    }

    /// On writes alone (with trims and reads that do not cache) LRU-WSR is LRU: the same hits
    /// and the same flushes in the same order.
    #[test]
    fn writes_alone_are_lru() {
        assert_writes_alone_are_lru(7, &[(1, true), (7, true), (7, false)], wsr);
    }

    /// Against the literal rules (a Vec scanned from the LRU end), with reads, partial writes
    /// and trims, for both settings of `cache_reads`.
    #[test]
    fn matches_the_literal_rules() {
        let victim = |l: &mut Vec<MPage>| loop {
            let t = l.len() - 1;
            if !l[t].dirty || l[t].cold {
                return t;
            }
            let mut p = l.pop().unwrap();
            p.cold = true;
            l.insert(0, p);
        };
        let mut rng = crate::rng::Rng::new(11);
        for (cap, cache_reads) in [(1u64, true), (5, true), (5, false), (40, true)] {
            let b = wsr(cap, cache_reads);
            assert_matches_model(b, cap, cache_reads, victim, &mut rng, 3, |_| {});
        }
    }
}
