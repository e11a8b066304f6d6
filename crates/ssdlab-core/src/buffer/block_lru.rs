//! `block-lru`: pages grouped by LBN, LRU over groups (ALGORITHMS.md §1.2). Writing any page of a
//! group moves the group to MRU; the victim is the LRU group, flushed whole in ascending offset
//! (padded if the padding policy says so). Capacity counts pages; evicting a group frees all of
//! its pages.

use super::list::{Links, List, Slab, NIL};
use super::{sort_pages, BufferParams, FlushSink, FlushUnit, PageWrite, WriteBuffer};
use crate::error::Result;
use crate::padding::Padding;
use crate::units::{Lbn, Lpn, SectorMask};
use rustc_hash::FxHashMap;

#[derive(Clone, Copy)]
struct Page {
    lpn: Lpn,
    mask: SectorMask,
    version: u32,
    /// Next page of the same group (singly linked, unordered).
    next: u32,
}

#[derive(Clone, Copy)]
struct Group {
    lbn: Lbn,
    first: u32,
    n_pages: u32,
    hint: u32,
}

pub struct BlockLruBuffer {
    capacity: u64,
    ppb: u64,
    pages: FxHashMap<Lpn, u32>,
    page_slab: Slab<Page>,
    groups: FxHashMap<Lbn, u32>,
    group_slab: Slab<Group>,
    links: Links,
    lru: List,
    held: u64,
    padding: Box<dyn Padding>,
    scratch: Vec<PageWrite>,
}

impl BlockLruBuffer {
    pub fn new(p: BufferParams) -> Self {
        BlockLruBuffer {
            capacity: p.capacity_pages,
            ppb: p.pages_per_block,
            pages: FxHashMap::default(),
            page_slab: Slab::default(),
            groups: FxHashMap::default(),
            group_slab: Slab::default(),
            links: Links::default(),
            lru: List::default(),
            held: 0,
            padding: p.padding,
            scratch: Vec::new(),
        }
    }

    /// Flush group `g` whole and forget it.
    fn evict_group(&mut self, g: u32, sink: &mut dyn FlushSink) -> Result<()> {
        self.links.remove(&mut self.lru, g);
        let group = *self.group_slab.get(g);
        self.group_slab.release(g);
        self.groups.remove(&group.lbn);
        self.scratch.clear();
        let mut cur = group.first;
        while cur != NIL {
            let p = *self.page_slab.get(cur);
            self.page_slab.release(cur);
            self.pages.remove(&p.lpn);
            self.scratch.push(PageWrite {
                offset: (p.lpn % self.ppb) as u32,
                mask: p.mask,
                version: p.version,
            });
            cur = p.next;
        }
        self.held -= group.n_pages as u64;
        sort_pages(&mut self.scratch);
        let padded = self
            .padding
            .pad(group.lbn, group.n_pages as u64, self.ppb, sink.view());
        let scratch = std::mem::take(&mut self.scratch);
        let r = sink.flush(&FlushUnit {
            lbn: group.lbn,
            pages: &scratch,
            padded,
            hint: group.hint,
        });
        self.scratch = scratch;
        r
    }
}

impl WriteBuffer for BlockLruBuffer {
    fn write(
        &mut self,
        lpn: Lpn,
        mask: SectorMask,
        version: u32,
        hint: u32,
        sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        let lbn = lpn / self.ppb;
        if let Some(&pi) = self.pages.get(&lpn) {
            let p = self.page_slab.get_mut(pi);
            let before = p.mask;
            p.mask |= mask;
            p.version = version;
            let g = self.groups[&lbn];
            self.group_slab.get_mut(g).hint = hint;
            self.links.move_to_front(&mut self.lru, g);
            return Ok(before);
        }
        while self.held >= self.capacity && self.lru.tail != NIL {
            let victim = self.lru.tail;
            self.evict_group(victim, sink)?;
        }
        let g = match self.groups.get(&lbn) {
            Some(&g) => g,
            None => {
                let g = self.group_slab.insert(Group {
                    lbn,
                    first: NIL,
                    n_pages: 0,
                    hint,
                });
                self.links.push_front(&mut self.lru, g);
                self.groups.insert(lbn, g);
                g
            }
        };
        let group = self.group_slab.get_mut(g);
        let pi = self.page_slab.insert(Page {
            lpn,
            mask,
            version,
            next: group.first,
        });
        group.first = pi;
        group.n_pages += 1;
        group.hint = hint;
        self.pages.insert(lpn, pi);
        self.held += 1;
        self.links.move_to_front(&mut self.lru, g);
        Ok(0)
    }

    fn read(
        &mut self,
        lpn: Lpn,
        _mask: SectorMask,
        _sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        Ok(self
            .pages
            .get(&lpn)
            .map_or(0, |&i| self.page_slab.get(i).mask))
    }

    fn trim(&mut self, lpn: Lpn) {
        let Some(pi) = self.pages.remove(&lpn) else {
            return;
        };
        let lbn = lpn / self.ppb;
        let g = self.groups[&lbn];
        let next = self.page_slab.get(pi).next;
        let group = *self.group_slab.get(g);
        if group.first == pi {
            self.group_slab.get_mut(g).first = next;
        } else {
            let mut cur = group.first;
            while self.page_slab.get(cur).next != pi {
                cur = self.page_slab.get(cur).next;
            }
            self.page_slab.get_mut(cur).next = next;
        }
        self.page_slab.release(pi);
        self.held -= 1;
        let gm = self.group_slab.get_mut(g);
        gm.n_pages -= 1;
        if gm.n_pages == 0 {
            self.links.remove(&mut self.lru, g);
            self.group_slab.release(g);
            self.groups.remove(&lbn);
        }
    }

    fn flush_all(&mut self, sink: &mut dyn FlushSink) -> Result<()> {
        while self.lru.tail != NIL {
            let victim = self.lru.tail;
            self.evict_group(victim, sink)?;
        }
        Ok(())
    }

    fn pages(&self) -> u64 {
        self.held
    }
}
