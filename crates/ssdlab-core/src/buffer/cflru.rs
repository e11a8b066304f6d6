//! `cflru`: Clean-First LRU (Park, Jung, Kang, Kim, Lee, CASES'06; ALGORITHMS.md §1.5). One LRU
//! list of clean and dirty pages ([`super::pagecache`]); every hit (read or write) moves the page
//! to the MRU end. The last `window` of the list (the clean-first region, the LRU side) is where
//! victims come from: the clean page nearest the LRU end within it is dropped (no write); when
//! the window holds no clean page, the LRU page, dirty, is flushed alone.
//!
//! The window is `round(window × capacity)` pages, at least 1 (a one-page window is plain LRU:
//! the victim is the tail either way). The paper's periodic re-tuning of the window is not
//! implemented (ALGORITHMS.md §1.5 [R]). On a stream of writes alone every page is dirty and
//! CFLRU is LRU.
//!
//! Structure: the window is the list's tail up to a boundary page, kept exactly `window` pages
//! long (or the whole list, when shorter) as pages come and go; its clean pages are also on a
//! second list in the same order, so the victim is that list's tail: O(1) per access, where a
//! scan of the window would cost O(window) per eviction.

use super::list::{Links, List};
use super::pagecache::{CachePolicy, PageCache, Pages, NIL};
use crate::error::{Result, SimError};

crate::params! {
    /// CFLRU's parameters (`[buffer.cflru]`).
    pub struct Params {
        /// true: a read miss inserts the page clean (whole, evicting first when full) and a read
        /// of a buffered page is a hit (page to MRU); false: reads are served from buffered
        /// sectors and change nothing (every page is then dirty and CFLRU is LRU).
        cache_reads: bool = true,
        /// The clean-first window as a fraction of the capacity: the last round(window ×
        /// capacity) pages of the LRU list, at least 1 (0 < window ≤ 1).
        window: f64 = 0.5,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        // Written so that NaN fails too.
        if !(self.window > 0.0 && self.window <= 1.0) {
            return Err(SimError::config(
                format!("{table}.window"),
                format!(
                    "{} is not a fraction of the capacity in (0, 1]",
                    self.window
                ),
            ));
        }
        Ok(())
    }
}

/// Page states: outside the window, in it (dirty), in it and on the clean list.
const WORKING: u8 = 0;
const WINDOW: u8 = 1;
const CLEAN: u8 = 2;

pub struct CflruPolicy {
    /// Window length in pages.
    w: u32,
    /// The MRU-most page of the window (NIL: the window is empty).
    boundary: u32,
    /// Pages in the window: min(w, buffered pages).
    wlen: u32,
    /// The window's clean pages, in list order (tail = nearest the LRU end).
    links: Links,
    clean: List,
}

pub type CflruBuffer = PageCache<CflruPolicy>;

/// Window pages for `window` (a checked fraction) of `capacity_pages`.
pub fn window_pages(window: f64, capacity_pages: u64) -> u32 {
    let w = (window * capacity_pages as f64).round() as u64;
    w.max(1).min(capacity_pages).min(u32::MAX as u64) as u32
}

pub fn new(
    capacity_pages: u64,
    pages_per_block: u64,
    full_mask: crate::units::SectorMask,
    p: &Params,
) -> Result<CflruBuffer> {
    p.check_params()?;
    let policy = CflruPolicy {
        w: window_pages(p.window, capacity_pages),
        boundary: NIL,
        wlen: 0,
        links: Links::default(),
        clean: List::default(),
    };
    Ok(PageCache::new(
        capacity_pages,
        pages_per_block,
        full_mask,
        p.cache_reads,
        policy,
    ))
}

impl Params {
    fn check_params(&self) -> Result<()> {
        crate::params::Params::check(self, "buffer.cflru")
    }
}

impl CflruPolicy {
    /// Page `i` leaves the window, if it is in it (before it is unlinked or moved).
    #[inline(always)]
    fn leave_window(&mut self, pages: &mut Pages, i: u32) {
        let p = pages.get_mut(i);
        if p.state == WORKING {
            return;
        }
        if p.state == CLEAN {
            self.links.remove(&mut self.clean, i);
        }
        p.state = WORKING;
        if self.boundary == i {
            self.boundary = p.next;
        }
        self.wlen -= 1;
    }

    /// Extend the window towards the MRU end until it holds min(w, buffered pages) pages.
    #[inline(always)]
    fn fill_window(&mut self, pages: &mut Pages) {
        let want = self.w.min(pages.len);
        while self.wlen < want {
            let i = if self.boundary == NIL {
                pages.tail
            } else {
                pages.get(self.boundary).prev
            };
            let p = pages.get_mut(i);
            if p.dirty {
                p.state = WINDOW;
            } else {
                p.state = CLEAN;
                self.links.push_front(&mut self.clean, i);
            }
            self.boundary = i;
            self.wlen += 1;
        }
    }
}

impl CachePolicy for CflruPolicy {
    #[inline]
    fn inserted(&mut self, pages: &mut Pages, _i: u32) {
        self.fill_window(pages);
    }

    #[inline]
    fn hit(&mut self, pages: &mut Pages, i: u32) {
        self.leave_window(pages, i);
        pages.move_to_front(i);
        self.fill_window(pages);
    }

    #[inline]
    fn unlink(&mut self, pages: &mut Pages, i: u32) {
        self.leave_window(pages, i);
        pages.unlink(i);
        self.fill_window(pages);
    }

    #[inline]
    fn victim(&mut self, pages: &mut Pages) -> u32 {
        if self.clean.tail != NIL {
            self.clean.tail
        } else {
            pages.tail
        }
    }
}

/// The registry entry of `cflru`.
pub static ENTRY: super::Entry = super::entry! {
    "cflru", Params, super::BUFFER_KEYS, padding "none",
    "CFLRU: one page-level LRU list of dirty pages and (with `cache_reads`) clean pages inserted on read misses; hits move to MRU; victim = the clean page nearest the LRU end among the last `window` × capacity pages (dropped, no write), else the LRU page (flushed alone).",
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

    fn cflru(cap: u64, window: f64, cache_reads: bool) -> CflruBuffer {
        new(
            cap,
            4,
            0xff,
            &Params {
                cache_reads,
                window,
            },
        )
        .unwrap()
    }

    /// The window's pages from MRU to LRU, checked against the list's last w pages.
    fn window_of(b: &CflruBuffer) -> Vec<u64> {
        let (pages, pol) = b.parts();
        let order = b.order();
        let w = (pol.w as usize).min(order.len());
        let mut got = vec![];
        let mut i = pol.boundary;
        while i != NIL {
            got.push(pages.get(i).lpn as u64);
            i = pages.get(i).next;
        }
        let want: Vec<u64> = order[order.len() - w..].iter().map(|p| p.0).collect();
        assert_eq!(got, want);
        got
    }

    // A hand-worked trace, capacity 4, window 0.5 (2 pages), 8-sector pages (list MRU → LRU,
    // window in braces; d dirty, c clean):
    //  1. W 1 v1                                                  [{1d}]
    //  2. R 2   miss: inserted clean                              [{2c 1d}]
    //  3. W 3 v2                                                  [3d {2c 1d}]
    //  4. R 4                                                     [4c 3d {2c 1d}]
    //  5. W 5 v3  full: clean 2 in the window → dropped (clean eviction 1)   [5d 4c {3d 1d}]
    //  6. W 6 v4  full, no clean page in the window: LRU page 1 → flushed (v1)
    //                                                             [6d 5d {4c 3d}]
    //  7. R 3     hit → MRU                                       [3d 6d {5d 4c}]
    //  8. W 7 v5  full: clean 4 → dropped (2)                      [7d 3d {6d 5d}]
    //  9. R 8     full: 5 → flushed (v3); 8 inserted clean         [8c 7d {3d 6d}]
    // 10. R 9     full: 6 → flushed (v4)                           [9c 8c {7d 3d}]
    // 11. W 10 v6 full: 3 → flushed (v2)                           [10d 9c {8c 7d}]
    // 12. W 11 v7 full: clean 8 → dropped (3), dirty 7 stays at the LRU end
    //                                                             [11d 10d {9c 7d}]
    // 13. W 9 0x01 v8  write hit on clean 9 (returns 0xff): dirty and whole, → MRU
    //                                                             [9d 11d {10d 7d}]
    // 14. trim 10                                                 [9d {11d 7d}]
    // 15. R 12    room: inserted clean                            [12c 9d {11d 7d}]
    // 16. flush_all: 7 (v5), 11 (v7), then clean 12 is dropped (not counted), 9 (v8, 0xff).
    #[test]
    fn hand_worked_trace() {
        let mut b = cflru(4, 0.5, true);
        let mut s = Sink::default();
        b.write(HostPage::new(1, 0xff, 1, 0), &mut s).unwrap();
        assert_eq!(window_of(&b), vec![1]);
        assert_eq!(b.read(2, 0xff, &mut s).unwrap(), 0);
        b.write(HostPage::new(3, 0xff, 2, 0), &mut s).unwrap();
        b.read(4, 0xff, &mut s).unwrap();
        assert_eq!(window_of(&b), vec![2, 1]);
        b.write(HostPage::new(5, 0xff, 3, 0), &mut s).unwrap();
        assert_eq!((s.lpns(), b.clean_evictions()), (vec![], 1));
        assert_eq!(window_of(&b), vec![3, 1]);
        b.write(HostPage::new(6, 0xff, 4, 0), &mut s).unwrap();
        assert_eq!(s.lpns(), vec![1]);
        assert_eq!(b.read(3, 0xff, &mut s).unwrap(), 0xff);
        assert_eq!(window_of(&b), vec![5, 4]);
        b.write(HostPage::new(7, 0xff, 5, 0), &mut s).unwrap();
        assert_eq!((s.lpns(), b.clean_evictions()), (vec![1], 2));
        b.read(8, 0xff, &mut s).unwrap();
        b.read(9, 0xff, &mut s).unwrap();
        b.write(HostPage::new(10, 0xff, 6, 0), &mut s).unwrap();
        assert_eq!(s.lpns(), vec![1, 5, 6, 3]);
        b.write(HostPage::new(11, 0xff, 7, 0), &mut s).unwrap();
        assert_eq!(b.clean_evictions(), 3);
        let lpns = |b: &CflruBuffer| b.order().iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(lpns(&b), vec![11, 10, 9, 7]);
        assert_eq!(b.write(HostPage::new(9, 0x01, 8, 0), &mut s).unwrap(), 0xff);
        assert_eq!(b.order()[0], (9, true, 0xff));
        assert_eq!(window_of(&b), vec![10, 7]);
        b.trim(10);
        assert_eq!(window_of(&b), vec![11, 7]);
        b.read(12, 0xff, &mut s).unwrap();
        b.flush_all(&mut s).unwrap();
        assert_eq!(
            s.0,
            vec![
                (1, 1, 0xff),
                (5, 3, 0xff),
                (6, 4, 0xff),
                (3, 2, 0xff),
                (7, 5, 0xff),
                (11, 7, 0xff),
                (9, 8, 0xff)
            ]
        );
        assert_eq!((b.pages(), b.clean_evictions()), (0, 3));
        assert_eq!(
            b.gauges(&Sink::default()),
            vec![("buffer.clean_evictions", 3.0)]
        );
    }

    /// A partial read hit on a dirty page leaves it whole (the engine reads the rest from
    /// flash): its flush needs no read-modify-write. Without `cache_reads` it stays partial.
    #[test]
    fn partial_read_fills_the_page() {
        for (cache_reads, want) in [(true, 0xff), (false, 0x0f)] {
            let mut b = cflru(2, 0.5, cache_reads);
            let mut s = Sink::default();
            b.write(HostPage::new(1, 0x0f, 1, 0), &mut s).unwrap();
            assert_eq!(b.read(1, 0x0f, &mut s).unwrap(), 0x0f);
            assert_eq!(b.order(), vec![(1, true, 0x0f)]);
            assert_eq!(b.read(1, 0x30, &mut s).unwrap(), 0x0f);
            b.flush_all(&mut s).unwrap();
            assert_eq!(s.0, vec![(1, 1, want)]);
        }
    }

    /// Window sizes: rounded to the nearest page, at least 1, at most the capacity; the check
    /// names the key and rejects 0, values above 1 and NaN.
    #[test]
    fn window_size_and_check() {
        assert_eq!(window_pages(0.5, 16384), 8192);
        assert_eq!(window_pages(0.25, 10), 3);
        assert_eq!(window_pages(1e-9, 10), 1);
        assert_eq!(window_pages(1.0, 7), 7);
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            let p = Params {
                cache_reads: true,
                window: bad,
            };
            let e = new(8, 4, 0xff, &p).err().unwrap().to_string();
            assert!(e.contains("buffer.cflru.window"), "{e}");
        }
    }

    /// On writes alone (with trims and reads that do not cache) CFLRU is LRU: the same hits and
    /// the same flushes in the same order, for any window.
    #[test]
    fn writes_alone_are_lru() {
        for window in [0.5, 1.0] {
            let cases = [(1, true), (7, true), (7, false)];
            assert_writes_alone_are_lru(3, &cases, |cap, cr| cflru(cap, window, cr));
        }
    }

    /// Against the literal rules (the window scanned from the LRU end at every eviction), with
    /// reads, partial writes and trims, several windows and both settings of `cache_reads`.
    #[test]
    fn matches_the_literal_rules() {
        let mut rng = crate::rng::Rng::new(13);
        for (cap, window, cache_reads) in [
            (1u64, 0.5, true),
            (6, 0.5, true),
            (6, 1.0, true),
            (6, 0.1, true),
            (6, 0.5, false),
            (40, 0.3, true),
        ] {
            let w = window_pages(window, cap) as usize;
            let victim = move |l: &mut Vec<MPage>| {
                let n = l.len();
                (n - w.min(n)..n)
                    .rev()
                    .find(|&k| !l[k].dirty)
                    .unwrap_or(n - 1)
            };
            let b = cflru(cap, window, cache_reads);
            assert_matches_model(b, cap, cache_reads, victim, &mut rng, 5, |b| {
                window_of(b);
            });
        }
    }
}
