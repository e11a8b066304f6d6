//! The page list of the buffers that also cache what the host reads, `cflru` and `lru-wsr`
//! (ALGORITHMS.md §0.2 "Reads", §1.5, §1.8). Each buffered page is either
//! - **dirty**: host-written sectors (a sector mask), flushed alone when evicted, or
//! - **clean**: a page read from flash, whole (flash reads whole pages), dropped when evicted at
//!   no cost.
//!
//! With `cache_reads`, a read miss inserts the page clean (evicting first when full) and a read
//! of a buffered page is an access like a write hit; a read that finds only part of its sectors
//! in a dirty page makes the engine read the page from flash, after which the whole page is
//! present (its later flush needs no read-modify-write). A write to a clean page makes it dirty
//! with every sector present. Without `cache_reads`, reads are served from buffered sectors and
//! change nothing: the policy runs on the write traffic alone.
//!
//! [`PageCache`] does all of this and the bookkeeping; a policy ([`CachePolicy`]) decides only
//! what a hit does to the order and which page leaves. The layout follows `lru`: 32-byte nodes in
//! a `Vec` with u32 links, found through the page index.

use super::index::{checked_key, key, LpnIndex};
use super::{FlushSink, FlushUnit, HostPage, PageWrite, WriteBuffer};
use crate::error::Result;
use crate::ftl::FtlView;
use crate::units::{Divisor, Lpn, SectorMask};

pub const NIL: u32 = u32::MAX;
/// Prefetch distances from the LRU end, in pages ([`PageCache::prefetch_victims`]).
const P2L_AHEAD: usize = 2;
const L2P_AHEAD: usize = 4;
const NODE_AHEAD: usize = 6;

/// One buffered page.
#[derive(Clone, Copy, Debug)]
pub struct Page {
    pub mask: SectorMask,
    /// The page index key (the LPN; below 2^32 − 1).
    pub lpn: u32,
    pub version: u32,
    pub hint: u32,
    /// Towards the MRU end (NIL at the head).
    pub prev: u32,
    /// Towards the LRU end (NIL at the tail).
    pub next: u32,
    pub dirty: bool,
    /// The policy's own per-page state (0 when the page is inserted).
    pub state: u8,
}

crate::list::linked!(Page);

/// The recency list (head = MRU) over the buffered pages, with their index.
pub struct Pages {
    nodes: Vec<Page>,
    /// Node slots released by evictions and trims.
    free: Vec<u32>,
    pub head: u32,
    pub tail: u32,
    pub len: u32,
    index: LpnIndex,
}

impl Pages {
    fn new(capacity: u64) -> Self {
        Pages {
            nodes: Vec::with_capacity(capacity.saturating_add(1).min(1 << 22) as usize),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
            index: LpnIndex::new(capacity),
        }
    }

    #[inline(always)]
    pub fn get(&self, i: u32) -> &Page {
        &self.nodes[i as usize]
    }

    #[inline(always)]
    pub fn get_mut(&mut self, i: u32) -> &mut Page {
        &mut self.nodes[i as usize]
    }

    /// Take page `i` out of the list (its slot and index entry stay).
    #[inline(always)]
    pub fn unlink(&mut self, i: u32) {
        crate::list::unlink(&mut self.nodes, &mut self.head, &mut self.tail, i);
        self.len -= 1;
    }

    /// Put page `i` (not in the list) at the MRU end.
    #[inline(always)]
    pub fn push_front(&mut self, i: u32) {
        crate::list::push_front(&mut self.nodes, &mut self.head, &mut self.tail, i);
        self.len += 1;
    }

    #[inline(always)]
    pub fn move_to_front(&mut self, i: u32) {
        if self.head != i {
            self.unlink(i);
            self.push_front(i);
        }
    }

    /// A new page at the MRU end; `k` is not buffered.
    #[inline]
    fn insert(&mut self, k: u32, page: Page) -> u32 {
        let i = crate::list::alloc(&mut self.nodes, &mut self.free, page);
        let (pos, found) = self.index.find(k);
        debug_assert!(!found);
        self.index.insert_at(pos, k, i);
        self.push_front(i);
        i
    }

    /// Forget unlinked page `i`: its index entry and slot.
    #[inline]
    fn release(&mut self, i: u32) {
        let removed = self.index.remove(self.nodes[i as usize].lpn);
        debug_assert_eq!(removed, Some(i));
        self.free.push(i);
    }
}

/// What distinguishes the policies: the order a hit leaves and the choice of the victim.
pub trait CachePolicy: Send {
    /// Page `i` was just put at the MRU end (a miss).
    fn inserted(&mut self, pages: &mut Pages, i: u32);
    /// Page `i`, buffered, was read or written (its fields already updated).
    fn hit(&mut self, pages: &mut Pages, i: u32);
    /// Take page `i` out of the list: it is evicted or trimmed.
    fn unlink(&mut self, pages: &mut Pages, i: u32);
    /// The page to evict (the list is not empty). May reorder the list on the way.
    fn victim(&mut self, pages: &mut Pages) -> u32;
}

/// A page-level buffer of clean and dirty pages, ordered by the policy `P`.
pub struct PageCache<P> {
    pages: Pages,
    policy: P,
    capacity: u64,
    ppb: Divisor,
    /// Every sector of a page.
    full: SectorMask,
    cache_reads: bool,
    /// Clean pages evicted to make room ("buffer.clean_evictions").
    clean_evictions: u64,
    /// The last write hit found its page clean ([`WriteBuffer::last_write_hit_clean`]).
    hit_clean: bool,
    /// The pages nearest the LRU end as last seen (`ahead[d]`: `d` places up from the tail), for
    /// prefetch hints only: it may go stale, and is walked again when it no longer starts at the
    /// tail.
    ahead: [u32; NODE_AHEAD],
}

impl<P: CachePolicy> PageCache<P> {
    pub fn new(
        capacity_pages: u64,
        pages_per_block: u64,
        full_mask: SectorMask,
        cache_reads: bool,
        policy: P,
    ) -> Self {
        PageCache {
            pages: Pages::new(capacity_pages),
            policy,
            capacity: capacity_pages,
            ppb: Divisor::new(pages_per_block),
            full: full_mask,
            cache_reads,
            clean_evictions: 0,
            hit_clean: false,
            ahead: [NIL; NODE_AHEAD],
        }
    }

    /// Start loading what the next evictions will touch, as `lru` does: the victims are mostly
    /// at or near the LRU end (exactly there when every page is dirty), cold in the caches. In
    /// stages some evictions apart, each needing what an earlier one fetched: the node
    /// [`NODE_AHEAD`] − 1 places up from the tail, the L2P entry of the page [`L2P_AHEAD`] − 1
    /// up, and what the L2P entry of the page [`P2L_AHEAD`] − 1 up points to.
    #[inline(always)]
    fn prefetch_victims(&mut self, sink: &dyn FlushSink) {
        let t = self.pages.tail;
        if t != NIL && self.ahead[1] == t {
            self.ahead.copy_within(1.., 0);
            let last = self.ahead[NODE_AHEAD - 2];
            self.ahead[NODE_AHEAD - 1] = if last == NIL {
                NIL
            } else {
                self.pages.get(last).prev
            };
        } else {
            let mut i = t;
            for a in &mut self.ahead {
                *a = i;
                if i != NIL {
                    i = self.pages.get(i).prev;
                }
            }
        }
        let deep = self.ahead[P2L_AHEAD - 1];
        if deep != NIL {
            let lpn = self.pages.get(deep).lpn;
            sink.prefetch(lpn as Lpn, true);
            self.pages.index.prefetch(lpn as Lpn);
        }
        let l2p = self.ahead[L2P_AHEAD - 1];
        if l2p != NIL {
            sink.prefetch(self.pages.get(l2p).lpn as Lpn, false);
        }
        let far = self.ahead[NODE_AHEAD - 1];
        if far != NIL {
            crate::units::prefetch(&self.pages.nodes, far as usize);
        }
    }

    #[cfg(test)]
    pub(crate) fn parts(&self) -> (&Pages, &P) {
        (&self.pages, &self.policy)
    }

    #[cfg(test)]
    pub(crate) fn clean_evictions(&self) -> u64 {
        self.clean_evictions
    }

    /// The buffered pages from MRU to LRU: (LPN, dirty, mask).
    #[cfg(test)]
    pub(crate) fn order(&self) -> Vec<(Lpn, bool, SectorMask)> {
        let mut v = vec![];
        let mut i = self.pages.head;
        while i != NIL {
            let p = self.pages.get(i);
            v.push((p.lpn as Lpn, p.dirty, p.mask));
            i = p.next;
        }
        v
    }

    /// Evict the policy's victim: a dirty page is flushed alone, a clean one dropped (counted
    /// when `for_room`, i.e. not by the final flush).
    fn evict(&mut self, sink: &mut dyn FlushSink, for_room: bool) -> Result<()> {
        let v = self.policy.victim(&mut self.pages);
        let p = *self.pages.get(v);
        self.policy.unlink(&mut self.pages, v);
        self.pages.release(v);
        self.prefetch_victims(sink);
        if !p.dirty {
            self.clean_evictions += for_room as u64;
            return Ok(());
        }
        let lpn = p.lpn as Lpn;
        let page = [PageWrite {
            offset: self.ppb.modulo(lpn) as u32,
            mask: p.mask,
            version: p.version,
        }];
        sink.flush(&FlushUnit {
            lbn: self.ppb.quot(lpn),
            pages: &page,
            padded: false,
            hint: p.hint,
        })
    }

    /// A new page at the MRU end, after making room.
    fn insert(&mut self, k: u32, page: Page, sink: &mut dyn FlushSink) -> Result<()> {
        if self.pages.len as u64 >= self.capacity {
            self.evict(sink, true)?;
        }
        let i = self.pages.insert(k, page);
        self.policy.inserted(&mut self.pages, i);
        Ok(())
    }
}

impl<P: CachePolicy> WriteBuffer for PageCache<P> {
    /// The index slot where the lookup of `lpn` starts.
    #[inline]
    fn prefetch(&mut self, lpn: Lpn) {
        self.pages.index.prefetch(lpn);
    }

    #[inline]
    fn write(&mut self, page: HostPage, sink: &mut dyn FlushSink) -> Result<SectorMask> {
        let k = checked_key(page.lpn)?;
        if let Some(i) = self.pages.index.get(k) {
            // A clean page holds every sector: it becomes dirty and stays whole.
            let p = self.pages.get_mut(i);
            let before = p.mask;
            self.hit_clean = !p.dirty;
            p.mask |= page.mask;
            p.version = page.version;
            p.hint = page.hint;
            p.dirty = true;
            self.policy.hit(&mut self.pages, i);
            return Ok(before);
        }
        if self.capacity == 0 {
            // Nothing can be held: the page goes through.
            return super::flush_page(sink, page, self.ppb.get()).map(|_| 0);
        }
        let new = Page {
            mask: page.mask,
            lpn: k,
            version: page.version,
            hint: page.hint,
            prev: NIL,
            next: NIL,
            dirty: true,
            state: 0,
        };
        self.insert(k, new, sink)?;
        Ok(0)
    }

    #[inline]
    fn last_write_hit_clean(&self) -> bool {
        self.hit_clean
    }

    fn read(&mut self, lpn: Lpn, mask: SectorMask, sink: &mut dyn FlushSink) -> Result<SectorMask> {
        let Some(k) = key(lpn) else { return Ok(0) };
        match self.pages.index.get(k) {
            Some(i) => {
                let before = self.pages.get(i).mask;
                if self.cache_reads {
                    if before & mask != mask {
                        // The engine reads the page from flash: all of it is present afterwards.
                        self.pages.get_mut(i).mask = self.full;
                    }
                    self.policy.hit(&mut self.pages, i);
                }
                Ok(before)
            }
            None => {
                if self.cache_reads && self.capacity > 0 {
                    let page = Page {
                        mask: self.full,
                        lpn: k,
                        version: 0,
                        hint: 0,
                        prev: NIL,
                        next: NIL,
                        dirty: false,
                        state: 0,
                    };
                    self.insert(k, page, sink)?;
                }
                Ok(0)
            }
        }
    }

    fn trim(&mut self, lpn: Lpn) {
        if let Some(i) = self.pages.index.lookup(lpn) {
            self.policy.unlink(&mut self.pages, i);
            self.pages.release(i);
        }
    }

    /// The policy's victim goes, as for room: a clean one is dropped, a dirty one flushed.
    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        if self.pages.len == 0 {
            return Ok(false);
        }
        self.evict(sink, true)?;
        Ok(true)
    }

    fn flush_all(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        while self.pages.len > 0 {
            self.evict(sink, false)?;
        }
        Ok(())
    }

    fn pages(&self) -> u64 {
        self.pages.len as u64
    }

    fn gauges(&mut self, _view: &dyn FtlView) -> Vec<(&'static str, f64)> {
        vec![("buffer.clean_evictions", self.clean_evictions as f64)]
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! A sink recording one-page flushes, and a literal model of a clean-page cache.
    use super::super::{FlushSink, FlushUnit, HostPage};
    use crate::error::Result;
    use crate::ftl::FtlView;
    use crate::units::{Lpn, SectorMask};

    /// On writes alone (with trims, and reads when `cache_reads` is off) the policy made by
    /// `make(capacity, cache_reads)` is LRU: the same hits and the same flushes in the same order.
    pub fn assert_writes_alone_are_lru<B: super::super::WriteBuffer>(
        seed: u64,
        cases: &[(u64, bool)],
        mut make: impl FnMut(u64, bool) -> B,
    ) {
        use super::super::lru::LruBuffer;
        let mut rng = crate::rng::Rng::new(seed);
        for &(cap, cache_reads) in cases {
            let mut b = make(cap, cache_reads);
            let mut lru = LruBuffer::new(cap, 4);
            let (mut s, mut t) = (Sink::default(), Sink::default());
            for v in 1..5000u32 {
                let lpn = rng.below(40);
                let mask = 1 << rng.below(8);
                match rng.below(10) {
                    0 => {
                        b.trim(lpn);
                        super::super::WriteBuffer::trim(&mut lru, lpn);
                    }
                    1 if !cache_reads => assert_eq!(
                        b.read(lpn, mask, &mut s).unwrap(),
                        super::super::WriteBuffer::read(&mut lru, lpn, mask, &mut t).unwrap()
                    ),
                    _ => assert_eq!(
                        b.write(HostPage::new(lpn, mask, v, 0), &mut s).unwrap(),
                        super::super::WriteBuffer::write(
                            &mut lru,
                            HostPage::new(lpn, mask, v, 0),
                            &mut t
                        )
                        .unwrap()
                    ),
                }
            }
            b.flush_all(&mut s).unwrap();
            super::super::WriteBuffer::flush_all(&mut lru, &mut t).unwrap();
            assert!(s.0.len() > 1000);
            assert_eq!(s.0, t.0);
        }
    }

    /// Drive `b` (of `cap` pages) and a literal [`Model`] with the same `victim` rule through 6,000 random reads,
    /// partial writes and trims (LPNs multiples of `lpn_step`), comparing every answer and the
    /// list order after each step (then `check(&b)`), and the flushes and clean evictions at the
    /// end.
    pub fn assert_matches_model<P: super::CachePolicy, V: FnMut(&mut Vec<MPage>) -> usize>(
        mut b: super::PageCache<P>,
        cap: u64,
        cache_reads: bool,
        victim: V,
        rng: &mut crate::rng::Rng,
        lpn_step: u64,
        mut check: impl FnMut(&super::PageCache<P>),
    ) {
        use super::super::WriteBuffer;
        let mut s = Sink::default();
        let mut m = Model {
            list: vec![],
            cap: cap as usize,
            full: 0xff,
            cache_reads,
            victim,
            flushed: vec![],
            clean_evictions: 0,
        };
        for v in 1..6000u32 {
            let lpn = rng.below(60) * lpn_step;
            let mask = if rng.below(2) == 0 {
                0xff
            } else {
                1 << rng.below(8)
            };
            match rng.below(10) {
                0 => {
                    b.trim(lpn);
                    m.trim(lpn);
                }
                1..=4 => assert_eq!(b.read(lpn, mask, &mut s).unwrap(), m.read(lpn, mask)),
                _ => assert_eq!(
                    b.write(HostPage::new(lpn, mask, v, 0), &mut s).unwrap(),
                    m.write(lpn, mask, v)
                ),
            }
            let order: Vec<_> = m.list.iter().map(|p| (p.lpn, p.dirty, p.mask)).collect();
            assert_eq!(b.order(), order);
            check(&b);
        }
        b.flush_all(&mut s).unwrap();
        m.flush_all();
        assert_eq!(s.0, m.flushed);
        assert_eq!(b.clean_evictions(), m.clean_evictions);
        assert!(m.clean_evictions > 0 || !cache_reads);
    }

    /// Recorded flushes: (LPN, version, mask). Blocks of 4 pages.
    #[derive(Default)]
    pub struct Sink(pub Vec<(Lpn, u32, SectorMask)>);
    impl Sink {
        pub fn lpns(&self) -> Vec<Lpn> {
            self.0.iter().map(|f| f.0).collect()
        }
    }
    impl FtlView for Sink {
        fn is_mapped(&self, _: Lpn) -> bool {
            false
        }
        fn stat(&self, _: &str) -> Option<f64> {
            None
        }
    }
    impl FlushSink for Sink {
        fn flush(&mut self, u: &FlushUnit) -> Result<()> {
            assert_eq!((u.pages.len(), u.padded), (1, false));
            let p = u.pages[0];
            self.0
                .push((u.lbn * 4 + p.offset as u64, p.version, p.mask));
            Ok(())
        }
        fn view(&self) -> &dyn FtlView {
            self
        }
    }

    /// A page of the model: LPN, mask, version, dirty, cold.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct MPage {
        pub lpn: Lpn,
        pub mask: SectorMask,
        pub version: u32,
        pub dirty: bool,
        pub cold: bool,
    }

    /// The rules of ALGORITHMS.md §0.2 over a plain Vec in MRU order, the victim chosen by
    /// `victim` (which may reorder the Vec): what [`super::PageCache`] must do.
    pub struct Model<V> {
        pub list: Vec<MPage>,
        pub cap: usize,
        pub full: SectorMask,
        pub cache_reads: bool,
        pub victim: V,
        pub flushed: Vec<(Lpn, u32, SectorMask)>,
        pub clean_evictions: u64,
    }

    impl<V: FnMut(&mut Vec<MPage>) -> usize> Model<V> {
        fn evict(&mut self, for_room: bool) {
            let v = (self.victim)(&mut self.list);
            let p = self.list.remove(v);
            if p.dirty {
                self.flushed.push((p.lpn, p.version, p.mask));
            } else if for_room {
                self.clean_evictions += 1;
            }
        }
        fn touch(&mut self, k: usize) {
            let mut p = self.list.remove(k);
            p.cold = false;
            self.list.insert(0, p);
        }
        pub fn write(&mut self, lpn: Lpn, mask: SectorMask, version: u32) -> SectorMask {
            if let Some(k) = self.list.iter().position(|p| p.lpn == lpn) {
                let p = &mut self.list[k];
                let before = p.mask;
                (p.mask, p.version, p.dirty) = (before | mask, version, true);
                self.touch(k);
                return before;
            }
            if self.list.len() >= self.cap {
                self.evict(true);
            }
            let p = MPage {
                lpn,
                mask,
                version,
                dirty: true,
                cold: false,
            };
            self.list.insert(0, p);
            0
        }
        pub fn read(&mut self, lpn: Lpn, mask: SectorMask) -> SectorMask {
            match self.list.iter().position(|p| p.lpn == lpn) {
                Some(k) => {
                    let before = self.list[k].mask;
                    if self.cache_reads {
                        if before & mask != mask {
                            self.list[k].mask = self.full;
                        }
                        self.touch(k);
                    }
                    before
                }
                None => {
                    if self.cache_reads {
                        if self.list.len() >= self.cap {
                            self.evict(true);
                        }
                        let p = MPage {
                            lpn,
                            mask: self.full,
                            version: 0,
                            dirty: false,
                            cold: false,
                        };
                        self.list.insert(0, p);
                    }
                    0
                }
            }
        }
        pub fn trim(&mut self, lpn: Lpn) {
            self.list.retain(|p| p.lpn != lpn);
        }
        pub fn flush_all(&mut self) {
            while !self.list.is_empty() {
                self.evict(false);
            }
        }
    }
}
