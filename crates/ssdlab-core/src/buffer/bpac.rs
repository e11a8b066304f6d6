//! `bpac`: Block-Page Adaptive Cache (Wu, Eckart, He, MSST 2010; ALGORITHMS.md §1.9, with the
//! flow seed 003 describes for its BPAC baseline: "when the page region is full, the dirty page
//! with over PIRD is moved to the block region; if the block region is also full, the block with
//! over BIRD is evicted"). ALGORITHMS.md reconstructs the policy from the paper's abstract; every
//! rule the sources leave open is a named parameter.
//!
//! * Distances count distinct pages, as seed 003 defines a re-use distance ("the number of
//!   distinct pages between two consecutive accesses to the same page"; [`super::reuse`]):
//!   PIRD(p) = the distinct pages written between the last two writes of page p; BIRD(b) = the
//!   distinct pages written between the last two writes into LBN b's block-region cluster; a
//!   cluster's idle age = the distinct pages written since its last write. `distance =
//!   "page_writes"` counts host page writes instead (the difference of two writes' clock values).
//! * Page region: pages in LRU order, at most P_target of them (`page_overflow = "demote"`).
//!   Block region: the other pages, clustered by LBN, clusters in LRU order.
//! * A page missing the buffer enters the block region (its LBN's cluster, which moves to MRU).
//! * A write hit in the block region with PIRD ≤ T_PIRD promotes the page to the page region's
//!   MRU end (it leaves its cluster); with PIRD > T_PIRD the page is updated in place. Either way
//!   the cluster was written: it moves to MRU. A write hit in the page region moves the page to
//!   MRU and does not touch the block region (hot pages of otherwise cold blocks must not keep
//!   those blocks buffered).
//! * Page region above P_target: `demote` (seed 003) moves its LRU page — the one furthest past
//!   T_PIRD since its last write — into its LBN's cluster, which moves to MRU (as seed 003's
//!   own cold region receives pages); `evict` (ALGORITHMS.md) leaves it there until room is
//!   needed, then flushes it together with its LBN's cluster.
//! * Victim (buffer full, `block_victim = "largest"`): the largest cluster idle longer than
//!   T_BIRD (ties: least recently written), else the LRU cluster; `"oldest"`: the LRU cluster.
//!   With an empty block region the page region's LRU page goes (alone). Clusters are flushed
//!   whole in ascending offset; pad-or-log per the padding policy (default none).
//! * Adaptation: T_PIRD = the median (lower) of each `stat_window` PIRDs observed at write hits
//!   (either region), T_BIRD = the mean of each `stat_window` BIRDs; P_target ARC-style from two
//!   ghost lists (FIFO): the LPNs of flushed pages that had been in the page region, and the LBNs
//!   of clusters flushed by the block-region rule. A page miss found in the first grows P_target
//!   by one page, else one whose LBN is in the second shrinks it by one; the entry is dropped.
//!
//! Reads never insert and change nothing.

use super::groups::{GroupStore, SizeLists};
use super::index::{checked_key, LpnIndex};
use super::list::{Links, List, NIL};
use super::{BufferParams, FlushSink, HostPage, WriteBuffer};
use crate::error::{Result, SimError};
use crate::ftl::FtlView;
use crate::units::{Lpn, SectorMask};

crate::params! {
    /// BPAC's parameters (`[buffer.bpac]`).
    pub struct Params {
        /// Initial page-region target P_target as a fraction of the buffer, in [0, 1] (the
        /// ghost lists then adapt it by single pages; gauge `buffer.bpac.page_target`).
        page_target_fraction: f64 = 0.25,
        /// Ghost list of the page region: how many LPNs of flushed pages that had been in the
        /// page region are remembered, as a fraction of the buffer's pages (≥ 0; 0 = none; at
        /// most 16 Mi entries).
        page_ghost_fraction: f64 = 1.0,
        /// Ghost list of the block region: how many LBNs of clusters flushed by the
        /// block-region rule are remembered, as a fraction of the buffer's pages (≥ 0; 0 = none;
        /// at most 16 Mi entries).
        block_ghost_fraction: f64 = 1.0,
        /// T_PIRD: median (the lower median of each `stat_window` PIRDs observed at write hits)
        /// | fixed (`pird_threshold` throughout).
        pird_mode: String = "median".into(),
        /// T_PIRD before the first window completes (median) or always (fixed), as a fraction
        /// of the buffer's pages, in `distance` units (≥ 0).
        pird_threshold: f64 = 0.5,
        /// T_BIRD: mean (the mean of each `stat_window` BIRDs observed) | fixed
        /// (`bird_threshold` throughout).
        bird_mode: String = "mean".into(),
        /// T_BIRD before the first window completes (mean) or always (fixed), as a fraction of
        /// the buffer's pages, in `distance` units (≥ 0).
        bird_threshold: f64 = 1.0,
        /// Observations per update of T_PIRD and of T_BIRD (≥ 1).
        stat_window: u64 = 1024,
        /// Page region above P_target: demote (its LRU page moves into its LBN's cluster at
        /// once; seed 003) | evict (when room is needed, its LRU page is flushed with its LBN's
        /// cluster; ALGORITHMS.md).
        page_overflow: String = "demote".into(),
        /// Block-region victim: largest (the largest cluster idle longer than T_BIRD, else the
        /// LRU cluster) | oldest (the LRU cluster).
        block_victim: String = "largest".into(),
        /// Unit of PIRD, BIRD and a cluster's idle age: distinct_pages (the distinct pages
        /// written in between, seed 003's re-use distance) | page_writes (host page writes: the
        /// difference of the two writes' clock values).
        distance: String = "distinct_pages".into(),
    }
}

fn choice<'a>(table: &str, field: &str, value: &str, valid: &[&'a str]) -> Result<&'a str> {
    valid
        .iter()
        .find(|&&v| v == value)
        .copied()
        .ok_or_else(|| crate::error::unknown_value(format!("{table}.{field}"), value, valid))
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        let fractions = [
            ("page_target_fraction", self.page_target_fraction, 1.0),
            (
                "page_ghost_fraction",
                self.page_ghost_fraction,
                f64::INFINITY,
            ),
            (
                "block_ghost_fraction",
                self.block_ghost_fraction,
                f64::INFINITY,
            ),
            ("pird_threshold", self.pird_threshold, f64::INFINITY),
            ("bird_threshold", self.bird_threshold, f64::INFINITY),
        ];
        for (field, v, max) in fractions {
            if !(v >= 0.0 && v <= max) {
                let range = if max == 1.0 { "[0, 1]" } else { "[0, ∞)" };
                return Err(SimError::config(
                    format!("{table}.{field}"),
                    format!("{v} is not in {range}"),
                ));
            }
        }
        if self.stat_window == 0 {
            return Err(SimError::config(
                format!("{table}.stat_window"),
                "must be ≥ 1",
            ));
        }
        BpacParams::new(self, 1, table).map(|_| ())
    }
}

/// BPAC settings: the parameters resolved against the buffer capacity.
#[derive(Clone, Copy, Debug)]
pub struct BpacParams {
    pub page_target: u64,
    pub page_ghost: u64,
    pub block_ghost: u64,
    pub pird_adaptive: bool,
    pub t_pird: f64,
    pub bird_adaptive: bool,
    pub t_bird: f64,
    pub stat_window: u64,
    pub demote: bool,
    pub largest: bool,
    /// `distance = "distinct_pages"` (else page writes).
    pub distinct: bool,
}

impl BpacParams {
    pub fn new(p: &Params, capacity_pages: u64, table: &str) -> Result<Self> {
        let cap = capacity_pages as f64;
        Ok(BpacParams {
            page_target: (p.page_target_fraction * cap).floor() as u64,
            page_ghost: (p.page_ghost_fraction * cap).floor() as u64,
            block_ghost: (p.block_ghost_fraction * cap).floor() as u64,
            pird_adaptive: choice(table, "pird_mode", &p.pird_mode, &["median", "fixed"])?
                == "median",
            t_pird: p.pird_threshold * cap,
            bird_adaptive: choice(table, "bird_mode", &p.bird_mode, &["mean", "fixed"])? == "mean",
            t_bird: p.bird_threshold * cap,
            stat_window: p.stat_window,
            demote: choice(
                table,
                "page_overflow",
                &p.page_overflow,
                &["demote", "evict"],
            )? == "demote",
            largest: choice(
                table,
                "block_victim",
                &p.block_victim,
                &["largest", "oldest"],
            )? == "largest",
            distinct: choice(
                table,
                "distance",
                &p.distance,
                &["distinct_pages", "page_writes"],
            )? == "distinct_pages",
        })
    }
}

/// Ghost list entries at most (16 Mi: 64 MiB of ring plus its index).
const MAX_GHOST: u64 = 1 << 24;

/// A FIFO set of remembered keys (LPNs or LBNs) with O(1) membership.
struct Ghost {
    ring: Vec<u32>,
    pos: usize,
    index: LpnIndex,
}

impl Ghost {
    const EMPTY: u32 = u32::MAX;

    fn new(capacity: u64) -> Self {
        let n = capacity.min(MAX_GHOST) as usize;
        Ghost {
            ring: vec![Self::EMPTY; n],
            pos: 0,
            index: LpnIndex::new(n as u64),
        }
    }

    fn insert(&mut self, k: u32) {
        if self.ring.is_empty() {
            return;
        }
        let old = self.ring[self.pos];
        if old != Self::EMPTY {
            // Still remembered from this slot (not since removed or inserted again)?
            let (at, found) = self.index.find(old);
            if found && self.index.value(at) == self.pos as u32 {
                self.index.remove_at(at);
            }
        }
        self.ring[self.pos] = k;
        let (at, found) = self.index.find(k);
        if found {
            self.index.remove_at(at);
        }
        let (at, _) = self.index.find(k);
        self.index.insert_at(at, k, self.pos as u32);
        self.pos = (self.pos + 1) % self.ring.len();
    }

    #[inline]
    fn prefetch(&self, k: u32) {
        self.index.prefetch(k as u64);
    }

    /// Forget `k`; whether it was remembered.
    fn remove(&mut self, k: u32) -> bool {
        self.index.remove(k).is_some()
    }
}

/// A page of the page region.
#[derive(Clone, Copy)]
struct PNode {
    lpn: Lpn,
    stamp: u64,
    mask: SectorMask,
    version: u32,
    hint: u32,
    prev: u32,
    next: u32,
}

crate::list::linked!(PNode);

/// Flag on a block-region page's stamp: the page has been in the page region.
const DEMOTED: u64 = 1 << 63;

pub struct BpacBuffer {
    capacity: u64,
    p: BpacParams,
    /// The write being handled: its position in `reuse` (distinct_pages) or its page-write
    /// count; every stamp below is such a value.
    now: u64,
    /// The latest write of every page written (distinct_pages).
    reuse: super::reuse::Reuse,
    // Block region.
    store: GroupStore,
    /// Last write per page slot of `store` (| DEMOTED).
    pstamp: Vec<u64>,
    /// Last write per cluster slot.
    gstamp: Vec<u64>,
    /// Pages flagged DEMOTED per cluster slot (flushes of clusters without any skip the scan).
    gdemoted: Vec<u32>,
    /// Clusters by size (n pages), each list most recently written first.
    buckets: SizeLists,
    /// All clusters, most recently written first.
    lru_links: Links,
    lru: List,
    // Page region.
    nodes: Vec<PNode>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
    plen: u64,
    pindex: LpnIndex,
    // Adaptation.
    page_target: u64,
    t_pird: f64,
    t_bird: f64,
    pirds: Vec<u64>,
    bird_sum: u64,
    bird_n: u64,
    page_ghost: Ghost,
    block_ghost: Ghost,
    promotions: u64,
    demotions: u64,
}

impl BpacBuffer {
    pub fn new(bp: BufferParams, p: BpacParams) -> Self {
        let (cap, ppb) = (bp.capacity_pages, bp.pages_per_block);
        BpacBuffer {
            capacity: cap,
            now: 0,
            reuse: Default::default(),
            store: GroupStore::new(bp),
            pstamp: Vec::new(),
            gstamp: Vec::new(),
            gdemoted: Vec::new(),
            buckets: SizeLists::new(ppb),
            lru_links: Links::default(),
            lru: List::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            plen: 0,
            pindex: LpnIndex::new(p.page_target.min(cap)),
            page_target: p.page_target.min(cap),
            t_pird: p.t_pird,
            t_bird: p.t_bird,
            pirds: Vec::new(),
            bird_sum: 0,
            bird_n: 0,
            page_ghost: Ghost::new(p.page_ghost),
            block_ghost: Ghost::new(p.block_ghost),
            promotions: 0,
            demotions: 0,
            p,
        }
    }

    /// (pages in the page region, P_target, T_PIRD, T_BIRD).
    pub fn state(&self) -> (u64, u64, f64, f64) {
        (self.plen, self.page_target, self.t_pird, self.t_bird)
    }

    /// Pages moved into the page region and back into the block region so far.
    pub fn moves(&self) -> (u64, u64) {
        (self.promotions, self.demotions)
    }

    /// The distance from stamp `s` to the write being handled (module doc).
    fn dist(&self, s: u64) -> u64 {
        if self.p.distinct {
            self.reuse.since(s)
        } else {
            self.now - s
        }
    }

    /// Renumber every stamp as `reuse` asks before it compacts its positions.
    fn renumber(&mut self) {
        let r = &self.reuse;
        for n in &mut self.nodes {
            n.stamp = r.rank(n.stamp);
        }
        for s in &mut self.pstamp {
            *s = (*s & DEMOTED) | r.rank(*s & !DEMOTED);
        }
        for s in &mut self.gstamp {
            *s = r.rank(*s);
        }
        self.reuse.compact();
    }

    fn observe_pird(&mut self, d: u64) {
        if !self.p.pird_adaptive {
            return;
        }
        self.pirds.push(d);
        if self.pirds.len() as u64 == self.p.stat_window {
            let mid = (self.pirds.len() - 1) / 2;
            self.t_pird = *self.pirds.select_nth_unstable(mid).1 as f64;
            self.pirds.clear();
        }
    }

    fn observe_bird(&mut self, d: u64) {
        if !self.p.bird_adaptive {
            return;
        }
        self.bird_sum += d;
        self.bird_n += 1;
        if self.bird_n == self.p.stat_window {
            self.t_bird = self.bird_sum as f64 / self.bird_n as f64;
            (self.bird_sum, self.bird_n) = (0, 0);
        }
    }

    fn grow_tables(&mut self, page: u32, group: u32) {
        if self.pstamp.len() <= page as usize {
            self.pstamp.resize(page as usize + 1, 0);
        }
        if self.gstamp.len() <= group as usize {
            self.gstamp.resize(group as usize + 1, 0);
            self.gdemoted.resize(group as usize + 1, 0);
        }
    }

    /// Cluster `g` received a page or a write, or lost a page to a promotion (`old` = its
    /// previous size; None: new): it moves to the head of its size's list and of the LRU list.
    fn cluster_written(&mut self, g: u32, old: Option<u32>) {
        match old {
            None => {
                self.lru_links.push_front(&mut self.lru, g);
                self.gdemoted[g as usize] = 0;
            }
            Some(o) => {
                self.buckets.remove(o, g);
                self.lru_links.move_to_front(&mut self.lru, g);
            }
        }
        let n = self.store.group(g).n_pages;
        self.buckets.push_front(n, g);
        self.gstamp[g as usize] = self.now;
    }

    fn page_unlink(&mut self, i: u32) {
        crate::list::unlink(&mut self.nodes, &mut self.head, &mut self.tail, i);
    }

    fn page_push_front(&mut self, i: u32) {
        crate::list::push_front(&mut self.nodes, &mut self.head, &mut self.tail, i);
    }

    fn page_insert(&mut self, node: PNode) {
        let k = node.lpn as u32; // checked by `checked_key` on the write
        let i = crate::list::alloc(&mut self.nodes, &mut self.free, node);
        self.page_push_front(i);
        let (at, _) = self.pindex.find(k);
        self.pindex.insert_at(at, k, i);
        self.plen += 1;
    }

    fn page_remove(&mut self, i: u32) -> PNode {
        let n = self.nodes[i as usize];
        self.page_unlink(i);
        self.pindex.remove(n.lpn as u32);
        self.free.push(i);
        self.plen -= 1;
        n
    }

    /// Move the page region's LRU page into its LBN's cluster; the cluster's slot.
    fn demote_tail(&mut self) -> Result<u32> {
        let n = self.page_remove(self.tail);
        let old_hint = self
            .store
            .group_of(self.store.lbn_of(n.lpn))
            .map(|g| self.store.group(g).hint);
        let w = self
            .store
            .write(HostPage::new(n.lpn, n.mask, n.version, n.hint))?;
        // The cluster's hint stays that of its latest write.
        if let Some(h) = old_hint {
            self.store.set_hint(w.group, h);
        }
        self.grow_tables(w.page, w.group);
        self.pstamp[w.page as usize] = n.stamp | DEMOTED;
        let size = self.store.group(w.group).n_pages;
        self.cluster_written(w.group, (!w.new_group).then(|| size - 1));
        self.gdemoted[w.group as usize] += 1;
        self.demotions += 1;
        Ok(w.group)
    }

    /// `demote`: keep the page region within P_target.
    fn rebalance(&mut self) -> Result<()> {
        if self.p.demote {
            while self.plen > self.page_target {
                self.demote_tail()?;
            }
        }
        Ok(())
    }

    fn block_victim(&self) -> u32 {
        if self.p.largest {
            for g in self.buckets.tails_desc() {
                if self.dist(self.gstamp[g as usize]) as f64 > self.t_bird {
                    return g;
                }
            }
        }
        self.lru.tail
    }

    /// Flush cluster `g` whole; `by_block_rule`: it is a block-region victim (ghost of LBNs).
    fn flush_cluster(
        &mut self,
        g: u32,
        by_block_rule: bool,
        sink: &mut dyn FlushSink,
    ) -> Result<()> {
        let n = self.store.group(g).n_pages;
        self.buckets.remove(n, g);
        self.lru_links.remove(&mut self.lru, g);
        if self.gdemoted[g as usize] > 0 {
            for (lpn, page) in self.store.pages_of(g) {
                if self.pstamp[page as usize] & DEMOTED != 0 {
                    self.page_ghost.insert(lpn as u32);
                }
            }
        }
        if by_block_rule {
            self.block_ghost.insert(self.store.group(g).lbn as u32);
        }
        self.store.flush_group(g, sink)
    }

    fn evict(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        let overflow = !self.p.demote && self.plen > self.page_target;
        if self.plen > 0 && (overflow || self.store.held() == 0) {
            let g = self.demote_tail()?;
            self.flush_cluster(g, false, sink)?;
        } else if self.store.held() > 0 {
            let g = self.block_victim();
            self.flush_cluster(g, true, sink)?;
        } else {
            return Ok(false);
        }
        // The next victim's test reads the stamps of the oldest clusters of the largest sizes,
        // written long ago: start loading them.
        for g in self.buckets.tails_desc().take(4).chain([self.lru.tail]) {
            if g != NIL {
                crate::units::prefetch(&self.gstamp, g as usize);
            }
        }
        Ok(true)
    }

    /// A write of page `lpn` (key `k`) at clock `self.now`.
    fn write_page(
        &mut self,
        k: u32,
        page: HostPage,
        sink: &mut dyn FlushSink,
    ) -> Result<SectorMask> {
        if let Some(i) = self.pindex.get(k) {
            let before = self.nodes[i as usize].mask;
            let pird = self.dist(self.nodes[i as usize].stamp);
            let n = &mut self.nodes[i as usize];
            n.mask |= page.mask;
            n.version = page.version;
            n.hint = page.hint;
            n.stamp = self.now;
            if self.head != i {
                self.page_unlink(i);
                self.page_push_front(i);
            }
            self.observe_pird(pird);
            return Ok(before);
        }
        if self.store.has_page(page.lpn) {
            let w = self.store.write(page)?;
            let g = w.group;
            let last = self.pstamp[w.page as usize];
            let pird = self.dist(last & !DEMOTED);
            // Decided on the thresholds so far; then this write's distances are observed.
            let promote = pird as f64 <= self.t_pird;
            self.observe_pird(pird);
            self.observe_bird(self.dist(self.gstamp[g as usize]));
            if promote {
                let t = self.store.take(page.lpn).expect("page is buffered");
                if last & DEMOTED != 0 {
                    self.gdemoted[g as usize] -= 1;
                }
                if t.empty {
                    self.buckets.remove(1, g);
                    self.lru_links.remove(&mut self.lru, g);
                } else {
                    let size = self.store.group(g).n_pages;
                    self.cluster_written(g, Some(size + 1));
                }
                self.page_insert(PNode {
                    lpn: page.lpn,
                    stamp: self.now,
                    mask: t.mask,
                    version: t.version,
                    hint: page.hint,
                    prev: NIL,
                    next: NIL,
                });
                self.promotions += 1;
                self.rebalance()?;
            } else {
                self.pstamp[w.page as usize] = (last & DEMOTED) | self.now;
                let size = self.store.group(g).n_pages;
                self.cluster_written(g, Some(size));
            }
            return Ok(w.before);
        }
        // A page miss: the ghost lists adapt P_target, then room is made.
        if self.page_ghost.remove(k) {
            self.page_target = (self.page_target + 1).min(self.capacity);
        } else if self.block_ghost.remove(self.store.lbn_of(page.lpn) as u32) {
            self.page_target = self.page_target.saturating_sub(1);
        }
        while self.store.held() + self.plen >= self.capacity && self.evict(sink)? {}
        let w = self.store.write(page)?;
        self.grow_tables(w.page, w.group);
        self.pstamp[w.page as usize] = self.now;
        if !w.new_group {
            self.observe_bird(self.dist(self.gstamp[w.group as usize]));
        }
        let size = self.store.group(w.group).n_pages;
        self.cluster_written(w.group, (!w.new_group).then(|| size - 1));
        self.rebalance()?;
        Ok(0)
    }
}

impl WriteBuffer for BpacBuffer {
    #[inline]
    fn prefetch(&mut self, lpn: Lpn) {
        self.pindex.prefetch(lpn);
        self.store.prefetch(lpn);
        self.page_ghost.prefetch(lpn as u32);
        self.block_ghost.prefetch(self.store.lbn_of(lpn) as u32);
    }

    fn write(&mut self, page: HostPage, sink: &mut dyn FlushSink) -> Result<SectorMask> {
        let k = checked_key(page.lpn)?;
        if !self.p.distinct {
            self.now += 1;
            return self.write_page(k, page, sink);
        }
        if self.reuse.full() {
            self.renumber();
        }
        self.now = self.reuse.next_position();
        // Distances are taken before the write is recorded: it is not "in between".
        let r = self.write_page(k, page, sink);
        self.reuse.record(page.lpn);
        r
    }

    /// From the page region, else the block region.
    fn read(&mut self, lpn: Lpn, _: SectorMask, _: &mut dyn FlushSink) -> Result<SectorMask> {
        Ok(match self.pindex.page(&self.nodes, lpn) {
            Some(n) => n.mask,
            None => self.store.mask_of(lpn),
        })
    }

    fn trim(&mut self, lpn: Lpn) {
        if let Some(i) = self.pindex.lookup(lpn) {
            self.page_remove(i);
            return;
        }
        let Some(t) = self.store.take(lpn) else {
            return;
        };
        let g = t.group;
        if self.pstamp[t.page as usize] & DEMOTED != 0 {
            self.gdemoted[g as usize] -= 1;
        }
        if t.empty {
            self.buckets.remove(1, g);
            self.lru_links.remove(&mut self.lru, g);
            return;
        }
        // Recency is unchanged: the cluster moves to its place among the smaller ones.
        let size = self.store.group(g).n_pages;
        self.buckets.remove(size + 1, g);
        let gstamp = &self.gstamp;
        self.buckets.insert_ordered(size, g, |i| gstamp[i as usize]);
    }

    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        self.evict(sink)
    }

    fn pages(&self) -> u64 {
        self.store.held() + self.plen
    }

    fn gauges(&mut self, view: &dyn FtlView) -> Vec<(&'static str, f64)> {
        let mut g = vec![
            ("buffer.bpac.page_target", self.page_target as f64),
            ("buffer.bpac.t_pird", self.t_pird),
            ("buffer.bpac.t_bird", self.t_bird),
        ];
        g.extend(self.store.padding_gauges(view));
        g
    }
}

/// The registry entry of `bpac`.
pub static ENTRY: super::Entry = super::entry! {
    "bpac", Params, super::GROUP_KEYS, padding "none",
    "BPAC (seed 003's PIRD/BIRD flow): new pages join their LBN's cluster in the block region; a rewrite within T_PIRD promotes the page to the page-level LRU region (target size adapted by ghost lists), whose overflow is demoted back; victim = the largest cluster idle beyond T_BIRD, else the LRU cluster, flushed whole. PIRD, BIRD and idle ages count distinct pages written in between (seed 003's re-use distance). Default padding: none.",
    |cfg, p, q| {
        let bp = BpacParams::new(&q, p.capacity_pages, "buffer.bpac")?;
        Ok(Box::new(BpacBuffer::new(p, bp)))
    }
};

#[cfg(test)]
mod tests {
    use super::super::groups::testutil::{flushed, write_all, FakeSink};
    use super::*;
    use crate::padding::NoPadding;

    /// 4 pages per block.
    fn bpac(capacity: u64, p: Params) -> BpacBuffer {
        let bp = BpacParams::new(&p, capacity, "buffer.bpac").unwrap();
        BpacBuffer::new(
            BufferParams {
                capacity_pages: capacity,
                pages_per_block: 4,
                padding: Box::new(NoPadding),
            },
            bp,
        )
    }

    fn fixed(pird: f64, bird: f64) -> Params {
        Params {
            pird_mode: "fixed".into(),
            pird_threshold: pird,
            bird_mode: "fixed".into(),
            bird_threshold: bird,
            ..Params::default()
        }
    }

    /// Capacity 8, P_target ⌊0.25 × 8⌋ = 2, T_PIRD = 0.5 × 8 = 4 (fixed), T_BIRD = 800 (fixed:
    /// no cluster is ever idle enough, victims are LRU clusters), ghost lists of 8 entries.
    /// LBN 0 = A, 1 = B, …; tN = the write clock.
    ///
    /// t1 0 (A: 0)   t2 4 (B: 4)   t3 0: block hit, PIRD 2 ≤ 4 → promoted; page region [0]
    /// t4 8 (C: 8)   t5 4: PIRD 3 → promoted, [4 0]   t6 12 (D: 12)
    /// t7 8: PIRD 3 → promoted, [8 4 0]: 3 > 2 → the LRU page 0 is demoted into A (new cluster,
    ///    MRU); page region [8 4]
    /// t8 1 → A {0 1}   t9 13 → D {12 13}   t10 16 (E)   t11 20 (F): 8 pages, full
    /// t12 24 (G): victim = LRU cluster A → (0, [0 1]); page 0 had been in the page region → the
    ///    page ghost gets LPN 0, the block ghost LBN 0
    /// t13 2: miss; LBN 0 in the block ghost → P_target 1; [8 4] > 1 → 4 demoted into B
    /// t14 0: miss; LPN 0 in the page ghost → P_target 2; full → victim = LRU cluster D
    ///    → (3, [0 1]); A {2 0}
    /// flush_all: LRU clusters E F G B A, then (block region empty) the page region's 8 alone.
    #[test]
    fn promotion_demotion_and_ghosts() {
        let mut b = bpac(8, fixed(0.5, 100.0));
        let mut s = FakeSink::default();
        assert_eq!(write_all(&mut b, &mut s, &[0, 4, 0, 8, 4, 12]), 2);
        assert_eq!((b.state().0, b.moves()), (2, (2, 0)));
        assert_eq!(write_all(&mut b, &mut s, &[8]), 1);
        assert_eq!((b.state().0, b.moves()), (2, (3, 1)));
        write_all(&mut b, &mut s, &[1, 13, 16, 20]);
        assert!(s.flushed.is_empty());
        assert_eq!(b.pages(), 8);
        write_all(&mut b, &mut s, &[24]);
        assert_eq!(flushed(&s), vec![(0, vec![0, 1])]);
        write_all(&mut b, &mut s, &[2]);
        assert_eq!((b.state().0, b.state().1, b.moves()), (1, 1, (3, 2)));
        write_all(&mut b, &mut s, &[0]);
        assert_eq!(flushed(&s)[1], (3, vec![0, 1]));
        assert_eq!(b.state(), (1, 2, 4.0, 800.0));
        b.flush_all(&mut s).unwrap();
        assert_eq!(
            flushed(&s)[2..],
            [
                (4, vec![0]),
                (5, vec![0]),
                (6, vec![0]),
                (1, vec![0]),
                (0, vec![0, 2]),
                (2, vec![0])
            ]
        );
        assert_eq!((b.pages(), b.moves()), (0, (3, 3)));
    }

    /// The same writes with `page_overflow = "evict"`: the page region may exceed P_target until
    /// room is needed; then its LRU page leaves with its LBN's cluster (no block-ghost entry).
    ///
    /// t7: [8 4 0] stays. t8 1 → A {1} (new). t12 24, full: 3 > 2 → 0 joins A and A {0 1} is
    /// flushed (page ghost: 0). t13 2 → A {2}: no ghost hit. t14 0: page ghost → P_target 3;
    /// full, [8 4] ≤ 3 → LRU cluster D → (3, [0 1]).
    /// flush_all: clusters E F G A (LRU order), then the page region from its LRU end: 4, 8.
    #[test]
    fn evict_mode() {
        let p = Params {
            page_overflow: "evict".into(),
            ..fixed(0.5, 100.0)
        };
        let mut b = bpac(8, p);
        let mut s = FakeSink::default();
        write_all(&mut b, &mut s, &[0, 4, 0, 8, 4, 12, 8, 1, 13, 16, 20]);
        assert_eq!((b.state().0, b.moves()), (3, (3, 0)));
        write_all(&mut b, &mut s, &[24, 2]);
        assert_eq!(flushed(&s), vec![(0, vec![0, 1])]);
        assert_eq!(b.state().1, 2);
        write_all(&mut b, &mut s, &[0]);
        assert_eq!(flushed(&s)[1], (3, vec![0, 1]));
        assert_eq!(b.state().1, 3);
        b.flush_all(&mut s).unwrap();
        assert_eq!(
            flushed(&s)[2..],
            [
                (4, vec![0]),
                (5, vec![0]),
                (6, vec![0]),
                (0, vec![0, 2]),
                (1, vec![0]),
                (2, vec![0])
            ]
        );
    }

    /// Capacity 6, T_PIRD = 0 (no promotion: BPAC is its block region alone), T_BIRD = 3, idle
    /// ages in page writes (`distance = "page_writes"`).
    ///
    /// t1 4 (B)  t2-t4 0 1 2 (A, 3 pages)  t5 8 (C)  t6 12 (D): full.  t7 8, t8 12: hits.
    /// t9 16: idle ages B 8, A 5, C 2, D 1; beyond 3: B (1 page) and A (3) → the largest, A,
    ///    although B is the LRU cluster (`oldest` takes B).
    /// t10 17, t11 18 → E {16 17 18}  t12 20: idle B 11, C 5, D 4, E 1 → B, C, D qualify, all
    ///    of 1 page → the least recently written, B.   t13 24: C (6) over D (5).
    /// t14 25: D (idle 6) → G {24 25}.  flush_all at t14: idle E 3, F 2, G 0: none beyond 3 →
    ///    LRU order E, F, G (not the larger G before F).
    #[test]
    fn largest_idle_cluster_else_lru() {
        let writes = || Params {
            distance: "page_writes".into(),
            ..fixed(0.0, 0.5)
        };
        let mut b = bpac(6, writes());
        let mut s = FakeSink::default();
        assert_eq!(write_all(&mut b, &mut s, &[4, 0, 1, 2, 8, 12, 8, 12]), 2);
        write_all(&mut b, &mut s, &[16]);
        assert_eq!(flushed(&s), vec![(0, vec![0, 1, 2])]);
        write_all(&mut b, &mut s, &[17, 18, 20, 24, 25]);
        b.flush_all(&mut s).unwrap();
        assert_eq!(
            flushed(&s),
            vec![
                (0, vec![0, 1, 2]),
                (1, vec![0]),
                (2, vec![0]),
                (3, vec![0]),
                (4, vec![0, 1, 2]),
                (5, vec![0]),
                (6, vec![0, 1])
            ]
        );
        assert_eq!(b.moves(), (0, 0));
        let p = Params {
            block_victim: "oldest".into(),
            ..writes()
        };
        let mut b = bpac(6, p);
        let mut s = FakeSink::default();
        write_all(&mut b, &mut s, &[4, 0, 1, 2, 8, 12, 8, 12, 16]);
        assert_eq!(flushed(&s), vec![(1, vec![0])]);
    }

    /// Capacity 16: T_PIRD starts at 8, T_BIRD at 16; `stat_window` = 3 observations of each.
    /// Distances in distinct pages (tN = the write's position; a page's latest write is its mark):
    ///
    /// t1 0 (A), t2 1 (A: BIRD = pages written since A's write t1: none, 0), t3 4 (B)
    /// t4 0: PIRD = pages since t1: {1, 4} = 2 ≤ 8 → promoted; BIRD since t2: {4} = 1; A's last
    ///    write is now t4 (it lost a page)                 PIRDs [2]      BIRDs [0 1]
    /// t5 0 (page region): PIRD 0                         [2 0]
    /// t6 4: PIRD = pages since t3: {0} = 1 ≤ 8 → promoted; BIRD since t3: 1
    ///                                                    [2 0 1] → T_PIRD = lower median 1
    ///                                                    [0 1 1] → T_BIRD = 2/3
    /// t7 1: PIRD = pages since t2: {0, 4} = 2 > 1 → stays; BIRD since t4: {0, 4} = 2
    /// In page writes the same writes give PIRDs 3 1 3 5 and BIRDs 1 2 3 3: T_PIRD 3, T_BIRD 2.
    #[test]
    fn thresholds_adapt() {
        for (distance, t_pird, t_bird) in [
            ("distinct_pages", 1.0, 2.0 / 3.0),
            ("page_writes", 3.0, 2.0),
        ] {
            let p = Params {
                stat_window: 3,
                distance: distance.into(),
                ..Params::default()
            };
            let mut b = bpac(16, p);
            let mut s = FakeSink::default();
            write_all(&mut b, &mut s, &[0, 1, 4, 0, 0]);
            assert_eq!(b.state(), (1, 4, 8.0, 16.0));
            write_all(&mut b, &mut s, &[4]);
            assert_eq!(b.state(), (2, 4, t_pird, t_bird), "{distance}");
            write_all(&mut b, &mut s, &[1]);
            assert_eq!((b.state().0, b.moves()), (2, (2, 0)));
            assert_eq!(
                b.gauges(&s.view),
                vec![
                    ("buffer.bpac.page_target", 4.0),
                    ("buffer.bpac.t_pird", t_pird),
                    ("buffer.bpac.t_bird", t_bird)
                ]
            );
        }
    }

    /// Renumbering the write positions (many times over 30,000 writes of 600 pages) changes
    /// nothing: the same flushes, hits and thresholds as with positions never renumbered.
    #[test]
    fn renumbering_keeps_every_distance() {
        let p = Params {
            stat_window: 16,
            ..Params::default()
        };
        let mut rng = crate::rng::Rng::new(3);
        let lpns: Vec<u64> = (0..30_000)
            .map(|_| {
                if rng.below(3) == 0 {
                    rng.below(40)
                } else {
                    rng.below(600)
                }
            })
            .collect();
        let (mut a, mut b) = (bpac(64, p.clone()), bpac(64, p));
        b.reuse = super::super::reuse::Reuse::with_len(40_000);
        let (mut sa, mut sb) = (FakeSink::default(), FakeSink::default());
        for chunk in lpns.chunks(1000) {
            assert_eq!(
                write_all(&mut a, &mut sa, chunk),
                write_all(&mut b, &mut sb, chunk)
            );
            assert_eq!(a.state(), b.state());
        }
        assert!(a.moves().0 > 100);
        assert_eq!(flushed(&sa), flushed(&sb));
    }

    /// T_PIRD = 1 (fixed, 1/8 of 8 pages). Writes 0 1 1 1 0: 1's second write is 0 distinct
    /// pages after its first → promoted; 0's second write comes 1 distinct page ({1}) after its
    /// first → promoted, where in page writes it comes 4 writes later and stays in its cluster.
    #[test]
    fn pird_counts_distinct_pages() {
        for (distance, promotions) in [("distinct_pages", 2), ("page_writes", 1)] {
            let p = Params {
                distance: distance.into(),
                ..fixed(0.125, 100.0)
            };
            let mut b = bpac(8, p);
            let mut s = FakeSink::default();
            assert_eq!(write_all(&mut b, &mut s, &[0, 1, 1, 1, 0]), 3);
            assert_eq!(b.moves(), (promotions, 0), "{distance}");
        }
    }

    /// Two entries: 1 2 3 → 1 is forgotten. 3 is removed on a hit. 2 inserted again becomes
    /// the newest, so 4 takes 3's old slot and 5 then drops 2: 4 and 5 remain.
    #[test]
    fn ghost_is_a_bounded_fifo() {
        let mut g = Ghost::new(2);
        for k in [1, 2, 3] {
            g.insert(k);
        }
        assert!(!g.remove(1) && g.remove(3) && !g.remove(3));
        for k in [2, 4, 5] {
            g.insert(k);
        }
        assert!(!g.remove(2) && g.remove(4) && g.remove(5));
        let mut none = Ghost::new(0);
        none.insert(7);
        assert!(!none.remove(7));
    }

    #[test]
    fn reads_and_trims() {
        let mut b = bpac(8, fixed(0.5, 100.0));
        let mut s = FakeSink::default();
        write_all(&mut b, &mut s, &[0, 1, 0, 5, 6, 7]);
        // Page 0 is in the page region, 1 and LBN 1's pages in the block region.
        assert_eq!(b.read(0, 0xff, &mut s).unwrap(), 0xff);
        assert_eq!(b.read(5, 0xff, &mut s).unwrap(), 0xff);
        assert_eq!(b.read(2, 0xff, &mut s).unwrap(), 0);
        b.trim(0);
        b.trim(6);
        b.trim(6);
        assert_eq!((b.pages(), b.state().0), (3, 0));
        b.flush_all(&mut s).unwrap();
        assert_eq!(flushed(&s), vec![(0, vec![1]), (1, vec![1, 3])]);
    }

    #[test]
    fn bad_values_name_the_field() {
        use crate::params::Params as _;
        let bad = |p: Params| p.check("buffer.bpac").unwrap_err().to_string();
        let d = Params::default();
        for (p, field) in [
            (
                Params {
                    page_target_fraction: 1.5,
                    ..d.clone()
                },
                "page_target_fraction",
            ),
            (
                Params {
                    pird_threshold: -1.0,
                    ..d.clone()
                },
                "pird_threshold",
            ),
            (
                Params {
                    stat_window: 0,
                    ..d.clone()
                },
                "stat_window",
            ),
            (
                Params {
                    pird_mode: "mean".into(),
                    ..d.clone()
                },
                "pird_mode",
            ),
            (
                Params {
                    page_overflow: "drop".into(),
                    ..d.clone()
                },
                "page_overflow",
            ),
            (
                Params {
                    block_victim: "lru".into(),
                    ..d.clone()
                },
                "block_victim",
            ),
        ] {
            let e = bad(p);
            assert!(e.contains(&format!("buffer.bpac.{field}")), "{e}");
        }
    }
}
