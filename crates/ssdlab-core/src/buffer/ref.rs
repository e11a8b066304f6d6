//! `ref`: Recently-Evicted-First (Seo & Shin, IEEE TCE 2008; ALGORITHMS.md §1.7; evaluated against
//! CLC on BAST by seed 002, which describes it as the policy that sends the flash the clusters
//! most likely to own a log block already).
//!
//! * Pages in one page-level LRU list (write hits move a page to MRU; reads change nothing).
//! * Victim window: the W = max(1, ⌊`window` × capacity⌋) pages nearest the LRU end.
//! * Recently-evicted block list (REBL): the LBNs recently chosen as victims, oldest first, at
//!   most K of them. K = the FTL's log blocks (`FtlView::stat("log_blocks")`: BAST, FAST), read
//!   at the first eviction; FTLs without log blocks use `rebl_blocks`.
//! * Eviction: candidates are the LBNs with a page in the window. (1) If some are in the REBL,
//!   take the one with the most pages in the window, then the most recently entered in the REBL.
//!   (2) Otherwise take the one with the most pages in the window, ties going to the LBN of the
//!   least recently written page, and push it into the REBL (dropping the oldest entry when K
//!   are there). The chosen LBN's pages in the window (`evict_scope = "window"`) or all its
//!   buffered pages (`"all_buffered"`) are flushed as one unit in ascending offset; pad-or-log
//!   per the padding policy (default none).
//!
//! With `window` = 0 (one page) the victim is always the LRU page alone: REF is page-level LRU
//! (`lru`), whatever K; a test checks the identity.
//!
//! Structure: the window is kept as it moves (its upper end `wtop`; pages join it from above as
//! pages leave it), and each LBN keeps its window pages in LRU order, so its count and its least
//! recently written window page are at hand. Candidates sit in max-heaps keyed (count, oldest
//! page first) and (count, REBL entry) with lazy deletion: an entry is pushed at every change and
//! is valid while it matches the LBN's current state. LBNs whose first window page joins from
//! above come in stamp order, so those go to a queue instead of the first heap (the usual case
//! on scattered writes: one page per LBN in the window).

use super::index::{checked_key, LpnIndex};
use super::list::Slab;
use super::{flush_gathered, FlushSink, HostPage, PageWrite, WriteBuffer};
use crate::error::Result;
use crate::ftl::FtlView;
use crate::padding::Padding;
use crate::units::{Divisor, Lbn, Lpn, SectorMask};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const NIL: u32 = u32::MAX;

crate::params! {
    /// REF's parameters (`[buffer.ref]`).
    pub struct Params {
        /// Victim window: the pages nearest the LRU end whose LBNs are eviction candidates, as a
        /// fraction of the buffer in [0, 1]; W = max(1, ⌊window × capacity⌋) pages (0 = one
        /// page: page-level LRU).
        window: f64 = 0.1,
        /// Pages of the chosen LBN that are flushed: window (those in the victim window) |
        /// all_buffered (every buffered page of it).
        evict_scope: String = "window".into(),
        /// REBL capacity K for FTLs without log blocks (page, block); 0 = the log-block count a
        /// hybrid FTL gets on this device by default (3% of its logical blocks, at least 2).
        /// BAST and FAST always use their own `ftl.log_blocks`. The K used is the gauge
        /// `buffer.ref.rebl_capacity`.
        rebl_blocks: u64 = 0,
        /// REBL order: fifo (an LBN keeps the place it entered at; the oldest leaves when the
        /// list is full) | lru (choosing an LBN already in the REBL renews its place).
        rebl_order: String = "fifo".into(),
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        super::unit_interval(table, "window", self.window)?;
        Scope::from_name(&self.evict_scope, table)?;
        Order::from_name(&self.rebl_order, table)?;
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Window,
    AllBuffered,
}

impl Scope {
    pub fn from_name(name: &str, table: &str) -> Result<Self> {
        let scopes = [
            ("window", Scope::Window),
            ("all_buffered", Scope::AllBuffered),
        ];
        super::choice(table, "evict_scope", name, &scopes)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Fifo,
    Lru,
}

impl Order {
    pub fn from_name(name: &str, table: &str) -> Result<Self> {
        super::choice(
            table,
            "rebl_order",
            name,
            &[("fifo", Order::Fifo), ("lru", Order::Lru)],
        )
    }
}

/// REF settings: the parameters resolved against the buffer and device.
#[derive(Clone, Copy, Debug)]
pub struct RefParams {
    /// Victim window in pages (≥ 1).
    pub window_pages: u64,
    pub scope: Scope,
    /// K when the FTL reports no log blocks.
    pub rebl_blocks: u64,
    pub order: Order,
}

impl RefParams {
    /// From the parameters, the buffer capacity and the device's logical blocks.
    pub fn new(p: &Params, capacity_pages: u64, logical_blocks: u64) -> Result<Self> {
        let table = "buffer.ref";
        Ok(RefParams {
            window_pages: ((p.window * capacity_pages as f64).floor() as u64).max(1),
            scope: Scope::from_name(&p.evict_scope, table)?,
            rebl_blocks: if p.rebl_blocks == 0 {
                crate::ftl::hybrid::auto_log_blocks(logical_blocks)
            } else {
                p.rebl_blocks
            },
            order: Order::from_name(&p.rebl_order, table)?,
        })
    }
}

#[derive(Clone, Copy)]
struct Node {
    lpn: Lpn,
    /// Write clock of the page's last write: the LRU list is in stamp order.
    stamp: u64,
    mask: SectorMask,
    version: u32,
    hint: u32,
    /// LRU list: towards the MRU end (NIL at the head) and towards the LRU end.
    prev: u32,
    next: u32,
    /// The LBN's window pages, least recently written first: older and younger neighbour.
    wprev: u32,
    wnext: u32,
    /// The LBN's buffered pages (no order).
    bprev: u32,
    bnext: u32,
    in_win: bool,
}

crate::list::linked!(Node);

/// An LBN with buffered pages.
#[derive(Clone, Copy)]
struct Block {
    lbn: Lbn,
    /// First of its buffered pages.
    first: u32,
    n_pages: u32,
    /// Its pages in the window, and the least / most recently written of them.
    wcount: u32,
    wold: u32,
    wyoung: u32,
    /// Stamp of `wold`.
    wold_stamp: u64,
    /// Rebuild marker.
    mark: u64,
}

pub struct RefBuffer {
    capacity: u64,
    p: RefParams,
    ppb: Divisor,
    nodes: Vec<Node>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
    len: u64,
    index: LpnIndex,
    /// LBN → its slot in `blocks` (NIL: no buffered page).
    block_of: Vec<u32>,
    blocks: Slab<Block>,
    /// Upper (most recently written) end of the window, and its length.
    wtop: u32,
    win_len: u64,
    /// Candidates (pages in the window, least recently written window page first, LBN)...
    best: BinaryHeap<(u32, Reverse<u64>, Lbn)>,
    /// ...except those with one window page offered in stamp order (the usual case: an LBN
    /// whose first page joins the window from above), kept in a queue: (stamp, LBN).
    singles: VecDeque<(u64, Lbn)>,
    /// REBL members with pages in the window: (pages in the window, REBL entry, LBN).
    in_rebl: BinaryHeap<(u32, u64, Lbn)>,
    /// K, fixed at the first eviction (from the FTL view).
    k: Option<u64>,
    /// REBL entries, oldest first: (LBN, entry number); stale when `rebl_entry` moved on.
    rebl: VecDeque<(Lbn, u64)>,
    /// LBN → its current REBL entry number (0: not in the REBL).
    rebl_entry: Vec<u64>,
    rebl_len: u64,
    entries: u64,
    clock: u64,
    rebuilds: u64,
    scratch: Vec<PageWrite>,
    padding: Box<dyn Padding>,
}

impl RefBuffer {
    pub fn new(bp: super::BufferParams, p: RefParams) -> Self {
        RefBuffer {
            capacity: bp.capacity_pages,
            p,
            ppb: Divisor::new(bp.pages_per_block),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
            index: LpnIndex::new(bp.capacity_pages),
            block_of: Vec::new(),
            blocks: Slab::default(),
            wtop: NIL,
            win_len: 0,
            best: BinaryHeap::new(),
            singles: VecDeque::new(),
            in_rebl: BinaryHeap::new(),
            k: None,
            rebl: VecDeque::new(),
            rebl_entry: Vec::new(),
            rebl_len: 0,
            entries: 0,
            clock: 0,
            rebuilds: 0,
            scratch: Vec::new(),
            padding: bp.padding,
        }
    }

    /// The REBL's LBNs, oldest first (tests).
    pub fn rebl(&self) -> Vec<Lbn> {
        self.rebl
            .iter()
            .filter(|&&(l, e)| self.entry_of(l) == e)
            .map(|&(l, _)| l)
            .collect()
    }

    /// Pages in the victim window.
    pub fn window_len(&self) -> u64 {
        self.win_len
    }

    fn entry_of(&self, lbn: Lbn) -> u64 {
        self.rebl_entry.get(lbn as usize).copied().unwrap_or(0)
    }

    fn slot_of(&self, lbn: Lbn) -> Option<u32> {
        self.block_of
            .get(lbn as usize)
            .copied()
            .filter(|&b| b != NIL)
    }

    /// Record the current window state of block `b` as a candidate.
    fn touched(&mut self, b: u32) {
        let blk = *self.blocks.get(b);
        if blk.wcount == 0 {
            return;
        }
        self.offer(blk.wcount, blk.wold_stamp, blk.lbn);
        let bound = 4 * self.win_len as usize + 256;
        if self.best.len() > bound || self.in_rebl.len() > bound || self.singles.len() > bound {
            self.rebuild_candidates();
        }
    }

    fn offer(&mut self, count: u32, oldest: u64, lbn: Lbn) {
        if count == 1 && self.singles.back().is_none_or(|&(s, _)| s < oldest) {
            self.singles.push_back((oldest, lbn));
        } else {
            self.best.push((count, Reverse(oldest), lbn));
        }
        let e = self.entry_of(lbn);
        if e != 0 {
            self.in_rebl.push((count, e, lbn));
        }
    }

    /// Drop the stale candidates: one entry per LBN in the window, offered from the LRU end up
    /// (so that single-page LBNs come in stamp order).
    #[cold]
    fn rebuild_candidates(&mut self) {
        self.rebuilds += 1;
        self.best.clear();
        self.in_rebl.clear();
        self.singles.clear();
        let mut cur = if self.wtop == NIL { NIL } else { self.tail };
        while cur != NIL {
            let lbn = self.ppb.quot(self.nodes[cur as usize].lpn);
            let b = self.block_of[lbn as usize];
            let blk = self.blocks.get_mut(b);
            // (A page leaving the window is still linked here while its block is updated.)
            if blk.mark != self.rebuilds && blk.wcount > 0 {
                blk.mark = self.rebuilds;
                let blk = *blk;
                self.offer(blk.wcount, blk.wold_stamp, lbn);
            }
            if cur == self.wtop {
                break;
            }
            cur = self.nodes[cur as usize].prev;
        }
    }

    /// Whether a candidate entry matches block `lbn`'s current window state.
    fn current(&self, count: u32, oldest: u64, lbn: Lbn) -> Option<u32> {
        self.slot_of(lbn).filter(|&b| {
            let blk = self.blocks.get(b);
            blk.wcount == count && blk.wold_stamp == oldest
        })
    }

    fn block_slot(&self, i: u32) -> u32 {
        self.block_of[self.ppb.quot(self.nodes[i as usize].lpn) as usize]
    }

    /// Page `i` (just above the window) joins it as its most recent page.
    fn join_window(&mut self, i: u32) {
        let b = self.block_slot(i);
        let young = self.blocks.get(b).wyoung;
        let n = &mut self.nodes[i as usize];
        n.in_win = true;
        n.wprev = young;
        n.wnext = NIL;
        let stamp = n.stamp;
        if young != NIL {
            self.nodes[young as usize].wnext = i;
        }
        let blk = self.blocks.get_mut(b);
        if young == NIL {
            blk.wold = i;
            blk.wold_stamp = stamp;
        }
        blk.wyoung = i;
        blk.wcount += 1;
        self.win_len += 1;
        self.wtop = i;
        self.touched(b);
    }

    /// Page `i` leaves the window (call before unlinking it from the LRU list).
    fn leave_window(&mut self, i: u32, quiet: bool) {
        let b = self.block_slot(i);
        let n = self.nodes[i as usize];
        if self.wtop == i {
            self.wtop = n.next;
        }
        if n.wprev != NIL {
            self.nodes[n.wprev as usize].wnext = n.wnext;
        }
        if n.wnext != NIL {
            self.nodes[n.wnext as usize].wprev = n.wprev;
        }
        let next_stamp = if n.wnext != NIL {
            self.nodes[n.wnext as usize].stamp
        } else {
            0
        };
        let blk = self.blocks.get_mut(b);
        if blk.wold == i {
            blk.wold = n.wnext;
            blk.wold_stamp = next_stamp;
        }
        if blk.wyoung == i {
            blk.wyoung = n.wprev;
        }
        blk.wcount -= 1;
        self.nodes[i as usize].in_win = false;
        self.win_len -= 1;
        if !quiet {
            self.touched(b);
        }
    }

    /// Extend the window upwards to W pages (or the whole list).
    fn fill_window(&mut self) {
        while self.win_len < self.p.window_pages {
            let c = if self.wtop == NIL {
                self.tail
            } else {
                self.nodes[self.wtop as usize].prev
            };
            if c == NIL {
                break;
            }
            self.join_window(c);
            // The next page to join was written a buffer's worth of writes ago: load it now.
            let up = self.nodes[c as usize].prev;
            if up != NIL {
                crate::units::prefetch(&self.nodes, up as usize);
            }
        }
    }

    fn unlink(&mut self, i: u32) {
        crate::list::unlink(&mut self.nodes, &mut self.head, &mut self.tail, i);
    }

    fn push_front(&mut self, i: u32) {
        crate::list::push_front(&mut self.nodes, &mut self.head, &mut self.tail, i);
    }

    /// Remove page `i` from every structure (its data is the caller's).
    fn remove_page(&mut self, i: u32, quiet: bool) {
        if self.nodes[i as usize].in_win {
            self.leave_window(i, quiet);
        }
        self.unlink(i);
        let n = self.nodes[i as usize];
        let lbn = self.ppb.quot(n.lpn);
        let b = self.block_of[lbn as usize];
        if n.bprev != NIL {
            self.nodes[n.bprev as usize].bnext = n.bnext;
        } else {
            self.blocks.get_mut(b).first = n.bnext;
        }
        if n.bnext != NIL {
            self.nodes[n.bnext as usize].bprev = n.bprev;
        }
        let blk = self.blocks.get_mut(b);
        blk.n_pages -= 1;
        if blk.n_pages == 0 {
            self.blocks.release(b);
            self.block_of[lbn as usize] = NIL;
        }
        // Checked by `checked_key` when the page was buffered.
        self.index.remove(n.lpn as u32);
        self.free.push(i);
        self.len -= 1;
    }

    /// Make `lbn` the REBL's newest entry, dropping the oldest beyond K.
    fn rebl_push(&mut self, lbn: Lbn, k: u64) {
        if k == 0 {
            return;
        }
        if self.rebl_entry.len() <= lbn as usize {
            self.rebl_entry.resize(lbn as usize + 1, 0);
        }
        let renew = self.rebl_entry[lbn as usize] != 0;
        self.entries += 1;
        self.rebl_entry[lbn as usize] = self.entries;
        self.rebl.push_back((lbn, self.entries));
        if !renew {
            self.rebl_len += 1;
        }
        while self.rebl_len > k {
            let (l, e) = self.rebl.pop_front().expect("REBL entries");
            if self.rebl_entry[l as usize] == e {
                self.rebl_entry[l as usize] = 0;
                self.rebl_len -= 1;
            }
        }
        // Renewed entries leave stale ones behind: drop them once they dominate.
        if self.rebl.len() as u64 > 2 * self.rebl_len + 64 {
            let entry = &self.rebl_entry;
            self.rebl.retain(|&(l, e)| entry[l as usize] == e);
        }
    }

    /// The victim LBN's block slot (and whether it came from the REBL).
    fn choose(&mut self, k: u64) -> Option<(u32, bool)> {
        while let Some(&(c, e, lbn)) = self.in_rebl.peek() {
            match self.slot_of(lbn) {
                Some(b) if self.entry_of(lbn) == e && self.blocks.get(b).wcount == c => {
                    if self.p.order == Order::Lru {
                        self.rebl_push(lbn, k);
                    }
                    return Some((b, true));
                }
                _ => {
                    self.in_rebl.pop();
                }
            }
        }
        while let Some(&(c, Reverse(oldest), lbn)) = self.best.peek() {
            if self.current(c, oldest, lbn).is_some() {
                break;
            }
            self.best.pop();
        }
        while let Some(&(oldest, lbn)) = self.singles.front() {
            if self.current(1, oldest, lbn).is_some() {
                break;
            }
            self.singles.pop_front();
        }
        let single = self.singles.front().map(|&(s, l)| (1, Reverse(s), l));
        let pick = match (self.best.peek().copied(), single) {
            (Some(h), Some(q)) => Some(h.max(q)),
            (h, q) => h.or(q),
        };
        if let Some((_, _, lbn)) = pick {
            self.rebl_push(lbn, k);
            return self.slot_of(lbn).map(|b| (b, false));
        }
        None
    }

    /// The next victims are most likely the next single-page candidates, which joined the window
    /// long ago: start loading, in stages some evictions apart, the block entry of the fourth,
    /// the window page of the second, and the index slot and FTL mapping of the first.
    fn prefetch_victims(&self, sink: &dyn FlushSink) {
        if let Some(b) = self.singles.get(3).and_then(|&(_, l)| self.slot_of(l)) {
            self.blocks.prefetch(b);
        }
        if let Some(b) = self.singles.get(1).and_then(|&(_, l)| self.slot_of(l)) {
            let i = self.blocks.get(b).wold;
            if i != NIL {
                crate::units::prefetch(&self.nodes, i as usize);
            }
        }
        if let Some(&(_, lbn)) = self.singles.front() {
            sink.prefetch_unit(lbn);
            if let Some(b) = self.slot_of(lbn) {
                let i = self.blocks.get(b).wold;
                if i != NIL {
                    let lpn = self.nodes[i as usize].lpn;
                    self.index.prefetch(lpn);
                    sink.prefetch(lpn, false);
                }
            }
        }
    }

    fn evict(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        let k = *self.k.get_or_insert_with(|| {
            sink.view()
                .stat("log_blocks")
                .map_or(self.p.rebl_blocks, |v| v as u64)
        });
        let Some((b, _)) = self.choose(k) else {
            return Ok(false);
        };
        let blk = *self.blocks.get(b);
        let window = self.p.scope == Scope::Window;
        let mut cur = if window { blk.wold } else { blk.first };
        self.scratch.clear();
        let (mut newest, mut hint) = (0, 0);
        while cur != NIL {
            let n = self.nodes[cur as usize];
            let next = if window { n.wnext } else { n.bnext };
            self.scratch.push(PageWrite {
                offset: self.ppb.modulo(n.lpn) as u32,
                mask: n.mask,
                version: n.version,
            });
            if n.stamp >= newest {
                (newest, hint) = (n.stamp, n.hint);
            }
            self.remove_page(cur, true);
            cur = next;
        }
        // With `window`, pages of the LBN above the window stay; its heap entries are stale
        // (no window page left) until one of them joins the window.
        self.fill_window();
        let r = flush_gathered(
            &mut self.scratch,
            blk.lbn,
            hint,
            self.ppb.get(),
            &mut *self.padding,
            sink,
        );
        self.prefetch_victims(sink);
        r.map(|_| true)
    }
}

impl WriteBuffer for RefBuffer {
    /// The index slot where the lookup of `lpn` starts.
    #[inline]
    fn prefetch(&mut self, lpn: Lpn) {
        self.index.prefetch(lpn);
    }

    fn write(&mut self, page: HostPage, sink: &mut dyn FlushSink) -> Result<SectorMask> {
        let k = checked_key(page.lpn)?;
        self.clock += 1;
        let (mut pos, found) = self.index.find(k);
        if found {
            let i = self.index.value(pos);
            let n = &mut self.nodes[i as usize];
            let before = n.mask;
            n.mask |= page.mask;
            n.version = page.version;
            n.hint = page.hint;
            n.stamp = self.clock;
            let in_win = n.in_win;
            if in_win {
                self.leave_window(i, false);
            }
            if self.head != i {
                self.unlink(i);
                self.push_front(i);
            }
            if in_win {
                self.fill_window();
            }
            return Ok(before);
        }
        let mut evicted = false;
        while self.len >= self.capacity && self.evict(sink)? {
            evicted = true;
        }
        if evicted {
            pos = self.index.find(k).0;
        }
        let lbn = self.ppb.quot(page.lpn);
        let b = match self.slot_of(lbn) {
            Some(b) => b,
            None => {
                let b = self.blocks.insert(Block {
                    lbn,
                    first: NIL,
                    n_pages: 0,
                    wcount: 0,
                    wold: NIL,
                    wyoung: NIL,
                    wold_stamp: 0,
                    mark: 0,
                });
                if self.block_of.len() <= lbn as usize {
                    self.block_of.resize(lbn as usize + 1, NIL);
                }
                self.block_of[lbn as usize] = b;
                b
            }
        };
        let first = self.blocks.get(b).first;
        let node = Node {
            lpn: page.lpn,
            stamp: self.clock,
            mask: page.mask,
            version: page.version,
            hint: page.hint,
            prev: NIL,
            next: NIL,
            wprev: NIL,
            wnext: NIL,
            bprev: NIL,
            bnext: first,
            in_win: false,
        };
        let i = crate::list::alloc(&mut self.nodes, &mut self.free, node);
        if first != NIL {
            self.nodes[first as usize].bprev = i;
        }
        let blk = self.blocks.get_mut(b);
        blk.first = i;
        blk.n_pages += 1;
        self.push_front(i);
        self.index.insert_at(pos, k, i);
        self.len += 1;
        self.fill_window();
        Ok(0)
    }

    fn read(&mut self, lpn: Lpn, _: SectorMask, _: &mut dyn FlushSink) -> Result<SectorMask> {
        Ok(self.index.page(&self.nodes, lpn).map_or(0, |n| n.mask))
    }

    fn trim(&mut self, lpn: Lpn) {
        if let Some(i) = self.index.lookup(lpn) {
            self.remove_page(i, false);
            self.fill_window();
        }
    }

    fn drain_one(&mut self, sink: &mut dyn FlushSink) -> Result<bool> {
        self.evict(sink)
    }

    fn pages(&self) -> u64 {
        self.len
    }

    fn gauges(&mut self, view: &dyn FtlView) -> Vec<(&'static str, f64)> {
        let k = self.k.unwrap_or_else(|| {
            view.stat("log_blocks")
                .map_or(self.p.rebl_blocks, |v| v as u64)
        });
        let mut g = vec![("buffer.ref.rebl_capacity", k as f64)];
        g.extend(crate::padding::gauges(
            &mut *self.padding,
            self.ppb.get(),
            view,
        ));
        g
    }
}

/// Logical blocks of the (resolved) device.
fn logical_blocks(cfg: &crate::config::Config, pages_per_block: u64) -> u64 {
    match cfg.device.logical_bytes {
        crate::config::Capacity::Bytes(b) => b
            .div_ceil(cfg.device.page_bytes.0.max(1))
            .div_ceil(pages_per_block.max(1)),
        crate::config::Capacity::Auto => 0,
    }
}

/// The registry entry of `ref`.
pub static ENTRY: super::Entry = super::entry! {
    "ref", Params, super::GROUP_KEYS, padding "none",
    "REF (seed 002): page-level LRU; the victim is an LBN with pages in the window at the LRU end, preferring those in the recently-evicted block list (K = the FTL's log blocks), else the one with the most window pages (ties: the least recently written page); its window pages (or all its pages: `evict_scope`) are flushed as one unit. Default padding: none.",
    |cfg, p, q| {
        let rp = RefParams::new(&q, p.capacity_pages, logical_blocks(cfg, p.pages_per_block))?;
        Ok(Box::new(RefBuffer::new(p, rp)))
    }
};

#[cfg(test)]
mod tests {
    use super::super::groups::testutil::{flushed, write_all, FakeSink};
    use super::super::BufferParams;
    use super::*;
    use crate::padding::NoPadding;

    /// 4 pages per block, capacity `cap`, window ⌊window × cap⌋, K = `k` log blocks reported by
    /// the FTL view.
    fn setup(cap: u64, window: f64, scope: Scope, order: Order, k: f64) -> (RefBuffer, FakeSink) {
        let b = RefBuffer::new(
            BufferParams {
                capacity_pages: cap,
                pages_per_block: 4,
                padding: Box::new(NoPadding),
            },
            RefParams {
                window_pages: ((window * cap as f64) as u64).max(1),
                scope,
                rebl_blocks: 99,
                order,
            },
        );
        let mut s = FakeSink::default();
        s.view.stats.push(("log_blocks", k));
        (b, s)
    }

    /// Capacity 8, window 4 pages, K = 2. LBN 0 = A, 1 = B, 2 = C, … (4 pages each).
    ///
    /// write        LRU list, LRU end first (window = first 4)    evicted (LBN, offsets)  REBL
    /// 0 4 1 8 5 12 9 2   [0 4 1 8] 5 12 9 2: A 2, B 1, C 1
    /// 16 (full)    most window pages: A → its window pages 0 1    (A, 0 1)           A
    ///              [4 8 5 12] 9 2 16: B 2 (A's page 2 stays, above the window)
    /// 20           [4 8 5 12] 9 2 16 20
    /// 24 (full)    no REBL LBN in the window; B has 2 → 4 5       (B, 0 1)           A B
    ///              [8 12 9 2] 16 20 24: C 2, D 1, A 1
    /// 28           8 pages
    /// 32 (full)    A is in the REBL with a window page: A before C (2 pages) → 2
    ///                                                             (A, 2)             A B (fifo)
    ///              [8 12 9 16] 20 24 28 32: C 2, D 1, E 1
    /// 36 (full)    no REBL LBN in the window → C (8 9); C enters, K = 2: the oldest (A) drops
    ///                                                             (C, 0 1)           B C
    /// With rebl_order = lru, choosing A at 32 renews its place (B A), so B drops instead: A C.
    #[test]
    fn rebl_preference_and_fifo_drop() {
        for (order, after) in [(Order::Fifo, vec![1, 2]), (Order::Lru, vec![0, 2])] {
            let (mut b, mut s) = setup(8, 0.5, Scope::Window, order, 2.0);
            assert_eq!(write_all(&mut b, &mut s, &[0, 4, 1, 8, 5, 12, 9, 2]), 0);
            assert_eq!(b.window_len(), 4);
            write_all(&mut b, &mut s, &[16]);
            assert_eq!(flushed(&s), vec![(0, vec![0, 1])]);
            assert_eq!((b.pages(), b.rebl()), (7, vec![0]));
            write_all(&mut b, &mut s, &[20, 24]);
            assert_eq!(flushed(&s)[1], (1, vec![0, 1]));
            assert_eq!(b.rebl(), vec![0, 1]);
            write_all(&mut b, &mut s, &[28, 32]);
            assert_eq!(flushed(&s)[2], (0, vec![2]));
            let expect = if order == Order::Fifo { [0, 1] } else { [1, 0] };
            assert_eq!(b.rebl(), expect);
            write_all(&mut b, &mut s, &[36]);
            assert_eq!(flushed(&s)[3], (2, vec![0, 1]));
            assert_eq!(b.rebl(), after, "{order:?}");
            assert_eq!((b.pages(), s.flushed.len()), (7, 4));
        }
    }

    /// `all_buffered`: the chosen LBN leaves whole, pages above the window included.
    #[test]
    fn all_buffered_scope() {
        let (mut b, mut s) = setup(8, 0.5, Scope::AllBuffered, Order::Fifo, 2.0);
        write_all(&mut b, &mut s, &[0, 4, 1, 8, 5, 12, 9, 2, 16]);
        assert_eq!(flushed(&s), vec![(0, vec![0, 1, 2])]);
        assert_eq!(b.pages(), 6);
        b.flush_all(&mut s).unwrap();
        assert_eq!(b.pages(), 0);
        // Window [4 8 5 12]: B (2 pages) with all its pages, then [8 12 9 16] → C (8 9), then
        // D (12) and E (16) tie at one page: D's is least recently written.
        assert_eq!(
            flushed(&s)[1..],
            [(1, vec![0, 1]), (2, vec![0, 1]), (3, vec![0]), (4, vec![0])]
        );
    }

    /// Capacity 4, window 2. Writes 0 4 5 8: window [0 4] (A 1, B 1). A read of 4 changes
    /// nothing; a write hit on 0 (in the window) moves it to MRU and the window takes 5: [4 5],
    /// B 2. The miss 12 then evicts B's two pages (without the move, A and B would tie at one
    /// page and A's page 0, the least recently written, would go alone). Left: 8 0 12; flush_all
    /// takes [8 0] → C (page 8 older than 0), then [0 12] → A, then D.
    #[test]
    fn window_moves_on_hits_not_reads() {
        let (mut b, mut s) = setup(4, 0.5, Scope::Window, Order::Fifo, 4.0);
        assert_eq!(write_all(&mut b, &mut s, &[0, 4, 5, 8]), 0);
        assert_eq!(b.read(4, 0xff, &mut s).unwrap(), 0xff);
        assert_eq!(b.read(6, 0xff, &mut s).unwrap(), 0);
        assert_eq!(write_all(&mut b, &mut s, &[0]), 1);
        write_all(&mut b, &mut s, &[12]);
        assert_eq!(flushed(&s), vec![(1, vec![0, 1])]);
        b.flush_all(&mut s).unwrap();
        assert_eq!(
            flushed(&s),
            vec![(1, vec![0, 1]), (2, vec![0]), (0, vec![0]), (3, vec![0])]
        );
        assert_eq!(b.rebl(), vec![1, 2, 0, 3]);
    }

    /// K comes from the FTL (`log_blocks`) when it has log blocks, else from `rebl_blocks`; the
    /// gauge reports it. A trim inside the window lets the window extend.
    #[test]
    fn k_from_view_or_parameter_and_trim() {
        let (mut b, mut s) = setup(4, 0.5, Scope::Window, Order::Fifo, 3.0);
        write_all(&mut b, &mut s, &[0, 4, 8, 12]);
        b.trim(0);
        b.trim(0);
        // Window [4 8]; the trim of 0 made room: no eviction on 16.
        write_all(&mut b, &mut s, &[16]);
        assert!(s.flushed.is_empty());
        write_all(&mut b, &mut s, &[20]);
        assert_eq!(flushed(&s), vec![(1, vec![0])]);
        let view = s.view;
        assert_eq!(b.gauges(&view), vec![("buffer.ref.rebl_capacity", 3.0)]);
        let (mut b, mut s) = setup(4, 0.5, Scope::Window, Order::Fifo, 0.0);
        s.view.stats.clear();
        write_all(&mut b, &mut s, &[0, 4, 8, 12, 16]);
        assert_eq!(b.gauges(&s.view), vec![("buffer.ref.rebl_capacity", 99.0)]);
    }

    #[test]
    fn bad_values_name_the_field() {
        use crate::params::Params as _;
        let bad = |p: Params| p.check("buffer.ref").unwrap_err().to_string();
        let d = Params::default();
        let e = bad(Params {
            window: -0.1,
            ..d.clone()
        });
        assert!(e.contains("buffer.ref.window"), "{e}");
        let e = bad(Params {
            evict_scope: "block".into(),
            ..d.clone()
        });
        assert!(
            e.contains("buffer.ref.evict_scope") && e.contains("all_buffered"),
            "{e}"
        );
        let e = bad(Params {
            rebl_order: "lifo".into(),
            ..d
        });
        assert!(e.contains("buffer.ref.rebl_order"), "{e}");
    }
}
