//! `lru`: page-level LRU write buffer (ALGORITHMS.md §1.1). A write hit ORs the sector mask and
//! moves the page to MRU; a miss into a full buffer first flushes the LRU page.
//! Read hits do not change the order.

use super::list::{Links, List, Slab, NIL};
use super::{FlushSink, FlushUnit, PageWrite, WriteBuffer};
use crate::error::Result;
use crate::units::{Divisor, Lpn, SectorMask};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

#[derive(Clone, Copy)]
struct Node {
    lpn: Lpn,
    mask: SectorMask,
    version: u32,
    hint: u32,
}

pub struct LruBuffer {
    capacity: u64,
    ppb: Divisor,
    index: FxHashMap<Lpn, u32>,
    nodes: Slab<Node>,
    links: Links,
    lru: List,
}

impl LruBuffer {
    pub fn new(capacity_pages: u64, pages_per_block: u64) -> Self {
        let cap = capacity_pages.min(1 << 26) as usize;
        let mut index = FxHashMap::default();
        index.reserve(cap);
        LruBuffer {
            capacity: capacity_pages,
            ppb: Divisor::new(pages_per_block),
            index,
            nodes: Slab::default(),
            links: Links::default(),
            lru: List::default(),
        }
    }

    fn evict_tail(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        let i = self.lru.tail;
        debug_assert!(i != NIL);
        self.links.remove(&mut self.lru, i);
        let n = *self.nodes.get(i);
        self.nodes.release(i);
        self.index.remove(&n.lpn);
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
    #[inline]
    fn write(
        &mut self,
        lpn: Lpn,
        mask: SectorMask,
        version: u32,
        hint: u32,
        sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        // One probe finds the page or reserves its slot; the victim (the LRU tail, never the
        // page just inserted at the head) is flushed afterwards, which is equivalent to evicting
        // first because the victim does not depend on the new page.
        let slot = match self.index.entry(lpn) {
            Entry::Occupied(e) => {
                let i = *e.get();
                let n = self.nodes.get_mut(i);
                let before = n.mask;
                n.mask |= mask;
                n.version = version;
                n.hint = hint;
                self.links.move_to_front(&mut self.lru, i);
                return Ok(before);
            }
            Entry::Vacant(e) => {
                let i = self.nodes.insert(Node {
                    lpn,
                    mask,
                    version,
                    hint,
                });
                e.insert(i);
                i
            }
        };
        self.links.push_front(&mut self.lru, slot);
        if self.lru.len as u64 > self.capacity {
            self.evict_tail(sink)?;
        }
        Ok(0)
    }

    fn read(
        &mut self,
        lpn: Lpn,
        _mask: SectorMask,
        _sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        Ok(self.index.get(&lpn).map_or(0, |&i| self.nodes.get(i).mask))
    }

    fn trim(&mut self, lpn: Lpn) {
        if let Some(i) = self.index.remove(&lpn) {
            self.links.remove(&mut self.lru, i);
            self.nodes.release(i);
        }
    }

    fn flush_all(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        while self.lru.tail != NIL {
            self.evict_tail(sink)?;
        }
        Ok(())
    }

    fn pages(&self) -> u64 {
        self.lru.len as u64
    }
}
