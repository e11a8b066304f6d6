//! `block-lru`: pages grouped by LBN, LRU over groups (ALGORITHMS.md §1.2). Writing any page of a
//! group moves the group to MRU; the victim is the LRU group, flushed whole in ascending offset
//! (padded if the padding policy says so). Capacity counts pages; evicting a group frees all of
//! its pages.

use super::groups::{GroupPolicy, GroupStore, Written};
use super::list::{Links, List, NIL};
use super::{BufferParams, FlushSink};
use crate::error::Result;
use crate::units::{Lpn, SectorMask};

pub struct BlockLruBuffer {
    store: GroupStore,
    /// Groups by recency, MRU at the head.
    links: Links,
    lru: List,
}

impl BlockLruBuffer {
    pub fn new(p: BufferParams) -> Self {
        BlockLruBuffer {
            store: GroupStore::new(p),
            links: Links::default(),
            lru: List::default(),
        }
    }
}

impl GroupPolicy for BlockLruBuffer {
    super::groups::store_in_field!();

    #[inline]
    fn written(&mut self, _lpn: Lpn, _mask: SectorMask, w: Written, _sink: &dyn FlushSink) {
        if w.new_group {
            self.links.push_front(&mut self.lru, w.group);
        } else {
            self.links.move_to_front(&mut self.lru, w.group);
        }
    }

    fn drop_page(&mut self, lpn: Lpn) {
        if let Some((g, true)) = self.store.trim(lpn) {
            self.links.remove(&mut self.lru, g);
        }
    }

    /// The victim: the LRU group.
    fn evict(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        let g = self.lru.tail;
        if g == NIL {
            return Ok(false);
        }
        self.links.remove(&mut self.lru, g);
        self.store.flush_group(g, sink)?;
        Ok(true)
    }
}

/// The registry entry of `block-lru`.
pub static ENTRY: super::Entry = super::entry! {
    "block-lru", crate::params::NoParams, super::GROUP_KEYS, padding "none",
    "Pages grouped by LBN, LRU over groups; the victim group is flushed whole in ascending offset.",
    |_cfg, p, _| Ok(Box::new(BlockLruBuffer::new(p)))
};
