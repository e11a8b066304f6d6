//! Shared storage for the LBN-grouped buffers (block-LRU, FAB, BPLRU, HitStat, CLC, BPAC): a page
//! index, a group index and per-group page chains in slabs, the capacity and the padding policy.
//! Ordering (recency lists, weight classes) stays with each policy, keyed by the group's slab
//! slot; [`GroupPolicy`] gives all but BPAC (which has a page region too) their `WriteBuffer`.

use super::index::{checked_key, LpnIndex};
use super::list::{Slab, NIL};
use super::{flush_gathered, BufferParams, FlushSink, HostPage, PageWrite, WriteBuffer};
use crate::error::Result;
use crate::ftl::FtlView;
use crate::padding::Padding;
use crate::units::{Divisor, Lbn, Lpn, SectorMask};

/// An LBN-grouped buffer's own rules over a [`GroupStore`]: how its lists follow a write and a
/// trim, and which group it evicts. The rest of its [`WriteBuffer`] is the same for all of them
/// and written once below: room is made before a page miss only (a hit needs none); reads are
/// served from the store and change no order; draining is evicting; the padding's gauges.
pub trait GroupPolicy: Send {
    fn store(&self) -> &GroupStore;
    fn store_mut(&mut self) -> &mut GroupStore;
    /// Order the group of write `w` (of `mask` into `lpn`, just stored) in the policy's lists.
    fn written(&mut self, lpn: Lpn, mask: SectorMask, w: Written, sink: &dyn FlushSink);
    /// Drop `lpn` from the store, if buffered, and keep the lists in order.
    fn drop_page(&mut self, lpn: Lpn);
    /// Flush the policy's victim group; false if nothing is buffered.
    fn evict(&mut self, sink: &mut dyn FlushSink) -> Result<bool>;
    /// A host write request begins ([`WriteBuffer::begin_request`]).
    fn request_begins(&mut self) {}
    /// The policy's own gauges, after the padding's.
    fn more_gauges(&self, _gauges: &mut Vec<(&'static str, f64)>) {}
}

/// [`GroupPolicy::store`] and [`GroupPolicy::store_mut`] of a buffer keeping its store in its
/// field `store` (all of them do).
macro_rules! store_in_field {
    () => {
        fn store(&self) -> &GroupStore {
            &self.store
        }
        fn store_mut(&mut self) -> &mut GroupStore {
            &mut self.store
        }
    };
}
pub(crate) use store_in_field;

impl<T: GroupPolicy> WriteBuffer for T {
    /// The page index slot and group entry of `lpn`.
    #[inline]
    fn prefetch(&mut self, lpn: Lpn) {
        self.store().prefetch(lpn);
    }

    #[inline]
    fn begin_request(&mut self) {
        self.request_begins();
    }

    #[inline]
    fn write(&mut self, page: HostPage, sink: &mut dyn FlushSink) -> Result<SectorMask> {
        if !self.store().has_page(page.lpn) {
            while self.store().is_full() && self.evict(sink)? {}
        }
        let w = self.store_mut().write(page)?;
        self.written(page.lpn, page.mask, w, sink);
        Ok(w.before)
    }

    fn read(&mut self, lpn: Lpn, _: SectorMask, _: &mut dyn FlushSink) -> Result<SectorMask> {
        Ok(self.store().mask_of(lpn))
    }

    fn trim(&mut self, lpn: Lpn) {
        self.drop_page(lpn);
    }

    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        self.evict(sink)
    }

    fn pages(&self) -> u64 {
        self.store().held()
    }

    fn gauges(&mut self, view: &dyn FtlView) -> Vec<(&'static str, f64)> {
        let mut g = self.store_mut().padding_gauges(view);
        self.more_gauges(&mut g);
        g
    }
}

/// Make slot `g` of a per-group table exist (tables grow as group slots are first used).
#[inline]
pub fn grow<T: Clone + Default>(table: &mut Vec<T>, g: u32) {
    if table.len() <= g as usize {
        table.resize(g as usize + 1, T::default());
    }
}

#[derive(Clone, Copy)]
struct Page {
    lpn: Lpn,
    mask: SectorMask,
    version: u32,
    /// Next page of the same group (singly linked, unordered).
    next: u32,
}

/// A buffered group: the pages of one logical block.
#[derive(Clone, Copy, Debug)]
pub struct Group {
    pub lbn: Lbn,
    first: u32,
    /// Buffered pages.
    pub n_pages: u32,
    /// Buffered sectors (the group's weight in seed 000).
    pub sectors: u32,
    /// Stream hint of the most recent page.
    pub hint: u32,
}

/// What [`GroupStore::write`] did.
#[derive(Clone, Copy, Debug)]
pub struct Written {
    /// Slab slot of the group.
    pub group: u32,
    /// Sectors of the page already buffered before this write (0 = page miss).
    pub before: SectorMask,
    /// The group was created by this write.
    pub new_group: bool,
    /// Slab slot of the page (stable while the page stays buffered; policies may keep
    /// per-page data indexed by it).
    pub page: u32,
}

/// A page [`GroupStore::take`] removed.
#[derive(Clone, Copy, Debug)]
pub struct Taken {
    /// Slab slot its group had.
    pub group: u32,
    /// The group is now empty (and already forgotten here).
    pub empty: bool,
    pub mask: SectorMask,
    pub version: u32,
    /// The slot the page had.
    pub page: u32,
}

pub struct GroupStore {
    pub ppb: u64,
    /// Pages the buffer holds at most.
    capacity: u64,
    block: Divisor,
    /// LPN → page slab slot.
    pages: LpnIndex,
    page_slab: Slab<Page>,
    /// LBN → slab slot of its group (NIL: none), grown as LBNs arrive: 4 bytes per logical
    /// block, and one load instead of a hash lookup.
    groups: Vec<u32>,
    group_slab: Slab<Group>,
    held: u64,
    scratch: Vec<PageWrite>,
    /// Decides whether a flushed group is padded.
    padding: Box<dyn Padding>,
}

impl GroupStore {
    /// A store for a buffer of `p.capacity_pages` pages of blocks of `p.pages_per_block` pages.
    pub fn new(p: BufferParams) -> Self {
        let (capacity_pages, ppb) = (p.capacity_pages, p.pages_per_block);
        GroupStore {
            ppb,
            capacity: capacity_pages,
            block: Divisor::new(ppb),
            pages: LpnIndex::new(capacity_pages),
            page_slab: Slab::default(),
            groups: Vec::new(),
            group_slab: Slab::default(),
            held: 0,
            scratch: Vec::new(),
            padding: p.padding,
        }
    }

    /// The LBN of `lpn` (a shift, not a division, for the usual block sizes).
    #[inline]
    pub fn lbn_of(&self, lpn: Lpn) -> Lbn {
        self.block.quot(lpn)
    }
    /// The offset of `lpn` in its block.
    #[inline]
    pub fn offset_of(&self, lpn: Lpn) -> u32 {
        self.block.modulo(lpn) as u32
    }

    /// Page `lpn` will be written soon: start loading its index slot and its group's entry.
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        self.pages.prefetch(lpn);
        crate::units::prefetch(&self.groups, self.lbn_of(lpn) as usize);
    }

    /// Pages buffered.
    pub fn held(&self) -> u64 {
        self.held
    }
    /// Held pages reach the capacity: a page miss must make room first.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.held >= self.capacity
    }
    pub fn has_page(&self, lpn: Lpn) -> bool {
        self.pages.lookup(lpn).is_some()
    }
    /// The group of `lpn` if the page is buffered.
    pub fn page_group(&self, lpn: Lpn) -> Option<u32> {
        if !self.has_page(lpn) {
            return None;
        }
        self.group_of(self.lbn_of(lpn))
    }
    pub fn group_of(&self, lbn: Lbn) -> Option<u32> {
        self.groups.get(lbn as usize).copied().filter(|&g| g != NIL)
    }
    pub fn group(&self, g: u32) -> &Group {
        self.group_slab.get(g)
    }
    pub fn mask_of(&self, lpn: Lpn) -> SectorMask {
        self.pages
            .lookup(lpn)
            .map_or(0, |i| self.page_slab.get(i).mask)
    }

    /// Buffer `page` (no eviction here: the policy makes room first).
    pub fn write(&mut self, page: HostPage) -> Result<Written> {
        let lbn = self.lbn_of(page.lpn);
        let k = checked_key(page.lpn)?;
        // One index probe, whether the page is buffered or not.
        let (slot, found) = self.pages.find(k);
        if found {
            let i = self.pages.value(slot);
            let p = self.page_slab.get_mut(i);
            let before = p.mask;
            p.mask |= page.mask;
            p.version = page.version;
            let added = (p.mask & !before).count_ones();
            let g = self.groups[lbn as usize];
            let gm = self.group_slab.get_mut(g);
            gm.hint = page.hint;
            gm.sectors += added;
            return Ok(Written {
                group: g,
                before,
                new_group: false,
                page: i,
            });
        }
        let (g, new_group) = match self.group_of(lbn) {
            Some(g) => (g, false),
            None => {
                let g = self.group_slab.insert(Group {
                    lbn,
                    first: NIL,
                    n_pages: 0,
                    sectors: 0,
                    hint: page.hint,
                });
                if self.groups.len() <= lbn as usize {
                    self.groups.resize(lbn as usize + 1, NIL);
                }
                self.groups[lbn as usize] = g;
                (g, true)
            }
        };
        let first = self.group_slab.get(g).first;
        let pi = self.page_slab.insert(Page {
            lpn: page.lpn,
            mask: page.mask,
            version: page.version,
            next: first,
        });
        let gm = self.group_slab.get_mut(g);
        gm.first = pi;
        gm.n_pages += 1;
        gm.sectors += page.mask.count_ones();
        gm.hint = page.hint;
        self.pages.insert_at(slot, k, pi);
        self.held += 1;
        Ok(Written {
            group: g,
            before: 0,
            new_group,
            page: pi,
        })
    }

    /// The padding policy (HitStat-adj reads its threshold).
    pub fn padding(&mut self) -> &mut dyn Padding {
        &mut *self.padding
    }

    /// The padding policy's gauges.
    pub fn padding_gauges(&mut self, view: &dyn FtlView) -> Vec<(&'static str, f64)> {
        crate::padding::gauges(&mut *self.padding, self.ppb, view)
    }

    /// Flush group `g` whole (ascending offsets, padded if the padding policy says so) and
    /// forget it. The policy must already have unlinked `g` from its own lists.
    pub fn flush_group(&mut self, g: u32, sink: &mut dyn FlushSink) -> Result<()> {
        let group = *self.group_slab.get(g);
        self.group_slab.release(g);
        self.groups[group.lbn as usize] = NIL;
        self.scratch.clear();
        let mut cur = group.first;
        while cur != NIL {
            let p = *self.page_slab.get(cur);
            self.page_slab.release(cur);
            // Checked by `checked_key` when the page was buffered.
            self.pages.remove(p.lpn as u32);
            self.scratch.push(PageWrite {
                offset: self.offset_of(p.lpn),
                mask: p.mask,
                version: p.version,
            });
            cur = p.next;
        }
        self.held -= group.n_pages as u64;
        flush_gathered(
            &mut self.scratch,
            group.lbn,
            group.hint,
            self.ppb,
            &mut *self.padding,
            sink,
        )
    }

    /// Set group `g`'s stream hint (a policy moving an older page into a group keeps the hint
    /// of the group's most recent write).
    pub fn set_hint(&mut self, g: u32, hint: u32) {
        self.group_slab.get_mut(g).hint = hint;
    }

    /// The buffered pages of group `g` as (LPN, page slot), in no particular order.
    pub fn pages_of(&self, g: u32) -> impl Iterator<Item = (Lpn, u32)> + '_ {
        let mut cur = self.group_slab.get(g).first;
        std::iter::from_fn(move || {
            (cur != NIL).then(|| {
                let i = cur;
                let p = self.page_slab.get(i);
                cur = p.next;
                (p.lpn, i)
            })
        })
    }

    /// Drop `lpn`. Returns its group's slot and whether the group is now empty (then it is
    /// already forgotten here; the policy unlinks it). None if the page was not buffered.
    pub fn trim(&mut self, lpn: Lpn) -> Option<(u32, bool)> {
        self.take(lpn).map(|t| (t.group, t.empty))
    }

    /// Remove `lpn` from its group without flushing it (trim, or a policy moving the page
    /// elsewhere): its data and what became of its group. None if the page was not buffered.
    pub fn take(&mut self, lpn: Lpn) -> Option<Taken> {
        let pi = self.pages.remove_lpn(lpn)?;
        let lbn = self.lbn_of(lpn);
        let g = self.groups[lbn as usize];
        let page = *self.page_slab.get(pi);
        let group = *self.group_slab.get(g);
        if group.first == pi {
            self.group_slab.get_mut(g).first = page.next;
        } else {
            let mut cur = group.first;
            while self.page_slab.get(cur).next != pi {
                cur = self.page_slab.get(cur).next;
            }
            self.page_slab.get_mut(cur).next = page.next;
        }
        self.page_slab.release(pi);
        self.held -= 1;
        let gm = self.group_slab.get_mut(g);
        gm.n_pages -= 1;
        gm.sectors -= page.mask.count_ones();
        let empty = gm.n_pages == 0;
        if empty {
            self.group_slab.release(g);
            self.groups[lbn as usize] = NIL;
        }
        Some(Taken {
            group: g,
            empty,
            mask: page.mask,
            version: page.version,
            page: pi,
        })
    }
}

/// Groups in one recency list per size (`n` = 0 ..= max), with a bitmap of the non-empty sizes
/// so that the largest non-empty size is found without scanning every list (CLC's cold list,
/// BPAC's block region).
pub struct SizeLists {
    links: super::list::Links,
    lists: Vec<super::list::List>,
    used: Vec<u64>,
}

impl SizeLists {
    pub fn new(max: u64) -> Self {
        let n = max as usize + 1;
        SizeLists {
            links: super::list::Links::default(),
            lists: vec![super::list::List::default(); n],
            used: vec![0; n.div_ceil(64)],
        }
    }

    /// Put `g` at the head (newest end) of list `n`.
    #[inline]
    pub fn push_front(&mut self, n: u32, g: u32) {
        self.links.push_front(&mut self.lists[n as usize], g);
        self.used[n as usize / 64] |= 1 << (n % 64);
    }

    #[inline]
    pub fn remove(&mut self, n: u32, g: u32) {
        let l = &mut self.lists[n as usize];
        self.links.remove(l, g);
        if l.len == 0 {
            self.used[n as usize / 64] &= !(1 << (n % 64));
        }
    }

    /// Insert `g` into list `n` at its place by descending `key` (see [`insert_ordered`]).
    pub fn insert_ordered(&mut self, n: u32, g: u32, key: impl Fn(u32) -> u64) {
        insert_ordered(&mut self.links, &mut self.lists[n as usize], g, key);
        self.used[n as usize / 64] |= 1 << (n % 64);
    }

    /// The oldest group of each non-empty list, largest size first.
    pub fn tails_desc(&self) -> impl Iterator<Item = u32> + '_ {
        self.used
            .iter()
            .enumerate()
            .rev()
            .flat_map(move |(w, &bits)| {
                let mut bits = bits;
                std::iter::from_fn(move || {
                    (bits != 0).then(|| {
                        let b = 63 - bits.leading_zeros();
                        bits &= !(1 << b);
                        self.lists[w * 64 + b as usize].tail
                    })
                })
            })
    }
}

/// Insert `g` into `l` (head = newest) before the first node whose `key` is not greater than
/// `g`'s, keeping a list ordered by descending key (e.g. last-write stamps). O(len); used only on
/// rare paths such as trims.
pub fn insert_ordered(
    links: &mut super::list::Links,
    l: &mut super::list::List,
    g: u32,
    key: impl Fn(u32) -> u64,
) {
    let k = key(g);
    let mut cur = l.head;
    while cur != NIL && key(cur) > k {
        cur = links.next(cur);
    }
    if cur == NIL {
        links.push_back(l, g);
        return;
    }
    if cur == l.head {
        links.push_front(l, g);
        return;
    }
    let mut after = Vec::new();
    while cur != NIL {
        after.push(cur);
        cur = links.next(cur);
    }
    for &a in &after {
        links.remove(l, a);
    }
    links.push_back(l, g);
    for &a in &after {
        links.push_back(l, a);
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! A fake sink recording flush units, with an FTL view whose statistics the test sets.
    use super::super::{FlushSink, FlushUnit, HostPage};
    use crate::error::Result;
    use crate::ftl::{FtlView, LogState};
    use crate::units::{Lbn, Lpn};

    #[derive(Default)]
    pub struct FakeView {
        pub stats: Vec<(&'static str, f64)>,
        /// Log records by LBN, oldest first.
        pub logs: Vec<(Lbn, LogState)>,
        /// A toy BAST kept by the sink's flushes: (log blocks, pages per block). A partial
        /// unpadded unit appends to its LBN's record or takes a new one (dropping the oldest when
        /// all are taken); a record reaching a block's pages is merged (the rest starts a new
        /// record); a padded or full unit drops the record (switch merge).
        pub log_model: Option<(usize, u32)>,
    }
    impl FtlView for FakeView {
        fn is_mapped(&self, _lpn: Lpn) -> bool {
            true
        }
        fn stat(&self, name: &str) -> Option<f64> {
            self.stats.iter().find(|(k, _)| *k == name).map(|&(_, v)| v)
        }
        fn log_state(&self, lbn: Lbn) -> Option<LogState> {
            self.logs.iter().find(|(x, _)| *x == lbn).map(|&(_, s)| s)
        }
    }
    impl FakeView {
        fn apply(&mut self, unit: &FlushUnit) {
            let Some((limit, ppb)) = self.log_model else {
                return;
            };
            let n = unit.pages.len() as u32;
            let pos = self.logs.iter().position(|(x, _)| *x == unit.lbn);
            let start = |logs: &mut Vec<(Lbn, LogState)>, pages: u32| {
                if logs.len() == limit {
                    logs.remove(0);
                }
                let references = 1;
                logs.push((unit.lbn, LogState { references, pages }));
            };
            if unit.padded || n == ppb {
                if let Some(i) = pos {
                    self.logs.remove(i);
                }
            } else if let Some(i) = pos {
                let s = &mut self.logs[i].1;
                s.references += 1;
                s.pages += n;
                if s.pages >= ppb {
                    let rest = s.pages - ppb;
                    self.logs.remove(i);
                    if rest > 0 {
                        start(&mut self.logs, rest);
                    }
                }
            } else {
                start(&mut self.logs, n);
            }
        }
    }

    /// One recorded flush: lbn, offsets, padded.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Flushed {
        pub lbn: Lbn,
        pub offsets: Vec<u32>,
        pub padded: bool,
    }

    #[derive(Default)]
    pub struct FakeSink {
        pub view: FakeView,
        pub flushed: Vec<Flushed>,
    }
    impl FakeSink {
        pub fn lbns(&self) -> Vec<Lbn> {
            self.flushed.iter().map(|f| f.lbn).collect()
        }
    }

    /// Each flush as (LBN, offsets).
    pub fn flushed(s: &FakeSink) -> Vec<(Lbn, Vec<u32>)> {
        s.flushed
            .iter()
            .map(|f| (f.lbn, f.offsets.clone()))
            .collect()
    }

    /// Write whole pages `lpns` (version 1, hint 0) into `b`; returns the write hits.
    pub fn write_all(
        b: &mut dyn crate::buffer::WriteBuffer,
        s: &mut FakeSink,
        lpns: &[u64],
    ) -> u32 {
        let mut hits = 0;
        for &lpn in lpns {
            hits += (b.write(HostPage::new(lpn, 0xff, 1, 0), s).unwrap() != 0) as u32;
        }
        hits
    }
    impl FlushSink for FakeSink {
        fn flush(&mut self, unit: &FlushUnit) -> Result<()> {
            self.view.apply(unit);
            self.flushed.push(Flushed {
                lbn: unit.lbn,
                offsets: unit.pages.iter().map(|p| p.offset).collect(),
                padded: unit.padded,
            });
            Ok(())
        }
        fn view(&self) -> &dyn FtlView {
            &self.view
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The non-empty sizes are visited largest first across bitmap words; a list that
    /// empties leaves the order.
    #[test]
    fn size_lists_largest_first() {
        let mut l = SizeLists::new(130);
        for (g, n) in [(0, 3), (1, 64), (2, 70), (3, 129), (4, 70)] {
            l.push_front(n, g);
        }
        // Size 70 holds 4 (newest) then 2: its tail is 2.
        assert_eq!(l.tails_desc().collect::<Vec<_>>(), vec![3, 2, 1, 0]);
        l.remove(70, 2);
        assert_eq!(l.tails_desc().collect::<Vec<_>>(), vec![3, 4, 1, 0]);
        l.remove(70, 4);
        l.remove(129, 3);
        assert_eq!(l.tails_desc().collect::<Vec<_>>(), vec![1, 0]);
    }

    /// The page index takes LPNs below 2^32 − 1: a larger one is an error naming it, and none
    /// aliases a small LPN with the same low 32 bits.
    #[test]
    fn lpns_beyond_the_index_range() {
        // Large blocks: the group table is indexed by LBN (the engine bounds LBNs by the device).
        let mut s = GroupStore::new(BufferParams {
            capacity_pages: 8,
            pages_per_block: 1 << 16,
            padding: Box::new(crate::padding::NoPadding),
        });
        let top = u32::MAX as u64 - 1;
        assert_eq!(s.write(HostPage::new(top, 1, 1, 0)).unwrap().before, 0);
        assert_eq!(s.write(HostPage::new(5, 2, 2, 0)).unwrap().before, 0);
        assert_eq!(s.write(HostPage::new(5, 4, 3, 0)).unwrap().before, 2);
        let err = s
            .write(HostPage::new(top + 1, 1, 4, 0))
            .expect_err("beyond the index");
        assert!(
            err.to_string().contains(&format!("LPN {}", top + 1)),
            "{err}"
        );
        let alias = (1u64 << 32) + 5;
        assert!(s.write(HostPage::new(alias, 1, 5, 0)).is_err());
        assert!(!s.has_page(alias) && s.mask_of(alias) == 0 && s.trim(alias).is_none());
        assert_eq!((s.held(), s.mask_of(5), s.mask_of(top)), (2, 6, 1));
    }
}
