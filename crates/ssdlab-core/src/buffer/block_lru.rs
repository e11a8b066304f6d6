//! `block-lru`: pages grouped by LBN, LRU over groups (ALGORITHMS.md §1.2). Writing any page of a
//! group moves the group to MRU; the victim is the LRU group, flushed whole in ascending offset
//! (padded if the padding policy says so). Capacity counts pages; evicting a group frees all of
//! its pages.

use super::groups::GroupStore;
use super::list::{Links, List, NIL};
use super::{BufferParams, FlushSink, WriteBuffer};
use crate::error::Result;
use crate::ftl::FtlView;
use crate::padding::Padding;
use crate::units::{Lpn, SectorMask};

pub struct BlockLruBuffer {
    capacity: u64,
    store: GroupStore,
    /// Groups by recency, MRU at the head.
    links: Links,
    lru: List,
    padding: Box<dyn Padding>,
}

impl BlockLruBuffer {
    pub fn new(p: BufferParams) -> Self {
        BlockLruBuffer {
            capacity: p.capacity_pages,
            store: GroupStore::new(p.capacity_pages, p.pages_per_block),
            links: Links::default(),
            lru: List::default(),
            padding: p.padding,
        }
    }

    fn evict_lru(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        let g = self.lru.tail;
        self.links.remove(&mut self.lru, g);
        self.store.flush_group(g, &mut *self.padding, sink)
    }
}

impl WriteBuffer for BlockLruBuffer {
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
            while self.store.held() >= self.capacity && self.lru.tail != NIL {
                self.evict_lru(sink)?;
            }
        }
        let w = self.store.write(lpn, mask, version, hint)?;
        if w.new_group {
            self.links.push_front(&mut self.lru, w.group);
        } else {
            self.links.move_to_front(&mut self.lru, w.group);
        }
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
        if let Some((g, true)) = self.store.trim(lpn) {
            self.links.remove(&mut self.lru, g);
        }
    }

    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        if self.lru.tail == NIL {
            return Ok(false);
        }
        self.evict_lru(sink).map(|_| true)
    }

    fn pages(&self) -> u64 {
        self.store.held()
    }

    fn gauges(&mut self, view: &dyn FtlView) -> Vec<(&'static str, f64)> {
        crate::padding::gauges(&mut *self.padding, self.store.ppb, view)
    }
}

/// The registry entry of `block-lru`.
pub static ENTRY: super::Entry = super::Entry {
        info: crate::component::Component::new(
            "buffer",
            "block-lru",
            "Pages grouped by LBN, LRU over groups; the victim group is flushed whole in ascending offset.",
            crate::params::NONE,
            super::GROUP_KEYS,
        ),
        build: |_, p| Ok(Box::new(BlockLruBuffer::new(p))),
    default_padding: "none",
};
