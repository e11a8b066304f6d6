//! `lru`: page-level LRU write buffer (ALGORITHMS.md §1.1). A write hit ORs the sector mask and
//! moves the page to MRU; a miss into a full buffer first flushes the LRU page.
//! Read hits do not change the order.
//!
//! Layout (the hot path of page-level runs): every buffered page is one 32-byte node (LPN, mask,
//! version, hint and its u32 LRU links) in a `Vec`, found through the page index
//! ([`super::index`]), which holds the keys: a miss, the victim's removal and the shifts behind
//! it never touch a node, so the chain of dependent cache accesses per page stays short. The
//! whole structure of a 64 MiB buffer (16 Ki pages) is ~0.75 MiB and stays in the L2 cache.

use super::index::{checked_key, LpnIndex};
use super::{FlushSink, FlushUnit, HostPage, PageWrite, WriteBuffer};
use crate::error::Result;
use crate::units::{Divisor, Lpn, SectorMask};

const NIL: u32 = u32::MAX;
/// Prefetch distances down the LRU end, in pages from the tail ([`LruBuffer::prefetch_victims`]).
const P2L_AHEAD: usize = 2;
const L2P_AHEAD: usize = 4;
const NODE_AHEAD: usize = 6;

#[derive(Clone, Copy)]
struct Node {
    lpn: Lpn,
    mask: SectorMask,
    version: u32,
    hint: u32,
    /// Towards the MRU end (NIL at the head).
    prev: u32,
    /// Towards the LRU end (NIL at the tail).
    next: u32,
}

crate::list::linked!(Node);

pub struct LruBuffer {
    capacity: u64,
    ppb: Divisor,
    nodes: Vec<Node>,
    /// Node slots released by evictions and trims.
    free: Vec<u32>,
    /// MRU and LRU ends, and the number of buffered pages.
    head: u32,
    tail: u32,
    len: u32,
    /// The buffered LPNs and their nodes.
    index: LpnIndex,
    /// The next victims as last seen: `ahead[d]` is the node `d` places up from the tail. Only
    /// prefetch hints are drawn from it, so it may go stale (a hit moves a node away); it is
    /// walked again from the tail when it no longer starts where the list does.
    ahead: [u32; NODE_AHEAD],
}

impl LruBuffer {
    pub fn new(capacity_pages: u64, pages_per_block: u64) -> Self {
        let cap = capacity_pages.saturating_add(1).min(1 << 22) as usize;
        LruBuffer {
            capacity: capacity_pages,
            ppb: Divisor::new(pages_per_block),
            nodes: Vec::with_capacity(cap),
            free: Vec::new(),
            ahead: [NIL; NODE_AHEAD],
            head: NIL,
            tail: NIL,
            len: 0,
            index: LpnIndex::new(capacity_pages),
        }
    }

    #[inline(always)]
    fn unlink(&mut self, i: u32) {
        crate::list::unlink(&mut self.nodes, &mut self.head, &mut self.tail, i);
    }

    #[inline(always)]
    fn push_front(&mut self, i: u32) {
        crate::list::push_front(&mut self.nodes, &mut self.head, &mut self.tail, i);
    }

    /// Start loading what the next victims will touch, in stages some evictions apart: the
    /// victims are cold (last written a buffer's worth of pages ago), and each stage needs what
    /// an earlier one fetched. With `t1` the new tail: the node [`NODE_AHEAD`] − 1 places up,
    /// the L2P entry of the page [`L2P_AHEAD`] − 1 up (its node fetched evictions ago), and the
    /// P2L entry that the L2P entry of the page [`P2L_AHEAD`] − 1 up points to. The window of
    /// next victims moves up one node per eviction (one dependent load, of a node fetched the
    /// eviction before) rather than being walked from the tail each time.
    #[inline(always)]
    fn prefetch_victims(&mut self, t1: u32, sink: &dyn FlushSink) {
        if self.ahead[1] == t1 {
            self.ahead.copy_within(1.., 0);
            let last = self.ahead[NODE_AHEAD - 2];
            self.ahead[NODE_AHEAD - 1] = if last == NIL {
                NIL
            } else {
                self.nodes[last as usize].prev
            };
        } else {
            let mut t = t1;
            for a in &mut self.ahead {
                *a = t;
                if t != NIL {
                    t = self.nodes[t as usize].prev;
                }
            }
        }
        let deep = self.ahead[P2L_AHEAD - 1];
        if deep != NIL {
            let lpn = self.nodes[deep as usize].lpn;
            sink.prefetch(lpn, true);
            // Its index slot too (the eviction removes it).
            self.index.prefetch(lpn);
        }
        let l2p = self.ahead[L2P_AHEAD - 1];
        if l2p != NIL {
            sink.prefetch(self.nodes[l2p as usize].lpn, false);
        }
        let far = self.ahead[NODE_AHEAD - 1];
        if far != NIL {
            crate::units::prefetch(&self.nodes, far as usize);
        }
    }

    fn evict_tail(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        let i = self.tail;
        debug_assert!(i != NIL);
        let n = self.nodes[i as usize];
        self.tail = n.prev;
        if n.prev != NIL {
            self.nodes[n.prev as usize].next = NIL;
        } else {
            self.head = NIL;
        }
        self.prefetch_victims(n.prev, sink);
        self.len -= 1;
        // Checked by `key` when the page was buffered.
        let (pos, found) = self.index.find(n.lpn as u32);
        debug_assert!(found && self.index.value(pos) == i);
        self.index.remove_at(pos);
        self.free.push(i);
        let page = [PageWrite {
            offset: self.ppb.modulo(n.lpn) as u32,
            mask: n.mask,
            version: n.version,
        }];
        sink.flush(&FlushUnit {
            lbn: self.ppb.quot(n.lpn),
            pages: &page,
            padded: false,
            hint: n.hint,
        })
    }
}

impl WriteBuffer for LruBuffer {
    /// The index slot where the lookup of `lpn` starts.
    #[inline]
    fn prefetch(&mut self, lpn: Lpn) {
        self.index.prefetch(lpn);
    }

    #[inline]
    fn write(&mut self, page: HostPage, sink: &mut dyn FlushSink) -> Result<SectorMask> {
        let k = checked_key(page.lpn)?;
        let (pos, found) = self.index.find(k);
        if found {
            let i = self.index.value(pos);
            let n = &mut self.nodes[i as usize];
            let before = n.mask;
            n.mask |= page.mask;
            n.version = page.version;
            n.hint = page.hint;
            if self.head != i {
                self.unlink(i);
                self.push_front(i);
            }
            return Ok(before);
        }
        // The victim (the LRU tail, never the page just inserted at the head) is flushed after
        // the insertion, which is equivalent to evicting first: it does not depend on the page.
        let node = Node {
            lpn: page.lpn,
            mask: page.mask,
            version: page.version,
            hint: page.hint,
            prev: NIL,
            next: NIL,
        };
        let i = crate::list::alloc(&mut self.nodes, &mut self.free, node);
        self.index.insert_at(pos, k, i);
        self.push_front(i);
        self.len += 1;
        if self.len as u64 > self.capacity {
            self.evict_tail(sink)?;
        }
        Ok(0)
    }

    fn read(&mut self, lpn: Lpn, _: SectorMask, _: &mut dyn FlushSink) -> Result<SectorMask> {
        Ok(self.index.page(&self.nodes, lpn).map_or(0, |n| n.mask))
    }

    fn trim(&mut self, lpn: Lpn) {
        if let Some(i) = self.index.remove_lpn(lpn) {
            self.unlink(i);
            self.len -= 1;
            self.free.push(i);
        }
    }

    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        if self.tail == NIL {
            return Ok(false);
        }
        self.evict_tail(sink).map(|_| true)
    }

    fn pages(&self) -> u64 {
        self.len as u64
    }
}

/// The registry entry of `lru`.
pub static ENTRY: super::Entry = super::entry! {
    "lru", crate::params::NoParams, super::BUFFER_KEYS, padding "none",
    "Page-level LRU; write hits move to MRU, the LRU page is flushed alone.",
    |_cfg, p, _| Ok(Box::new(LruBuffer::new(p.capacity_pages, p.pages_per_block)))
};

#[cfg(test)]
mod tests {
    use super::super::pagecache::testutil::Sink;
    use super::*;

    /// Keys are u32: the largest LPN it takes is buffered like any other, a larger one is an
    /// error naming it, and none aliases a small LPN with the same low 32 bits.
    #[test]
    fn lpns_beyond_the_key_range() {
        let mut b = LruBuffer::new(4, 4);
        let mut sink = Sink(Vec::new());
        let top = u32::MAX as u64 - 1;
        assert_eq!(b.write(HostPage::new(top, 1, 1, 0), &mut sink).unwrap(), 0);
        assert_eq!(b.write(HostPage::new(5, 2, 2, 0), &mut sink).unwrap(), 0);
        assert_eq!(b.read(top, 1, &mut sink).unwrap(), 1);
        let err = b
            .write(HostPage::new(top + 1, 1, 3, 0), &mut sink)
            .unwrap_err();
        assert!(
            err.to_string().contains(&format!("LPN {}", top + 1)),
            "{err}"
        );
        let alias = (1u64 << 32) + 5;
        assert!(b.write(HostPage::new(alias, 4, 4, 0), &mut sink).is_err());
        assert_eq!(b.read(alias, 4, &mut sink).unwrap(), 0);
        b.trim(alias);
        assert_eq!((b.pages(), b.read(5, 2, &mut sink).unwrap()), (2, 2));
    }

    /// Against a plain model (a Vec in MRU order), with a tiny table that must grow and keys
    /// that collide, trims and reads included.
    #[test]
    fn matches_a_model() {
        let mut rng = crate::rng::Rng::new(5);
        for cap in [1u64, 3, 40] {
            let mut b = LruBuffer::new(cap, 4);
            b.index = LpnIndex::with_slots(4);
            let mut model: Vec<(u64, SectorMask, u32)> = vec![];
            let mut sink = Sink(vec![]);
            let mut want = vec![];
            for v in 1..5000u32 {
                let lpn = rng.below(97) * 1024;
                let mask = 1 << rng.below(8);
                match rng.below(10) {
                    0 => {
                        b.trim(lpn);
                        model.retain(|e| e.0 != lpn);
                    }
                    1 => {
                        let got = b.read(lpn, mask, &mut sink).unwrap();
                        let m = model.iter().find(|e| e.0 == lpn).map_or(0, |e| e.1);
                        assert_eq!(got, m);
                    }
                    _ => {
                        let got = b.write(HostPage::new(lpn, mask, v, 0), &mut sink).unwrap();
                        let before = match model.iter().position(|e| e.0 == lpn) {
                            Some(k) => {
                                let e = model.remove(k);
                                model.insert(0, (lpn, e.1 | mask, v));
                                e.1
                            }
                            None => {
                                model.insert(0, (lpn, mask, v));
                                if model.len() as u64 > cap {
                                    let (l, m, ver) = model.pop().unwrap();
                                    want.push((l, ver, m));
                                }
                                0
                            }
                        };
                        assert_eq!(got, before);
                    }
                }
                assert_eq!(b.pages(), model.len() as u64);
            }
            b.flush_all(&mut sink).unwrap();
            while let Some((l, m, ver)) = model.pop() {
                want.push((l, ver, m));
            }
            assert_eq!(sink.0, want);
        }
    }
}
