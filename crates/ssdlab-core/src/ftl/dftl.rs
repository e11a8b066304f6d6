//! `dftl`: a demand-based page-mapped FTL (Gupta, Kim, Urgaonkar, ASPLOS'09; ALGORITHMS.md §2.6).
//! The full page map lives on flash in translation pages (TPs), each holding the entries of
//! E = `page_bytes / entry_bytes` consecutive LPNs; a global translation directory (GTD) says
//! where each TP is; a cached mapping table (CMT) of bounded size holds the entries in use.
//!
//! * Data and TPs are pages of one page-mapped FTL (`page.rs`) whose logical space is the N data
//!   LPNs followed by the ⌈N/E⌉ TPs: its L2P entries of the TPs are the GTD. TPs are written at a
//!   frontier of their own (the translation block pool); GC moves them like data, as mapping I/O.
//! * The CMT is an LRU list of cached units: single entries (`granularity = "entry"`) or whole
//!   TPs (`"page"`), each clean or dirty. The simulator keeps the true map; the CMT decides what
//!   the map costs in flash reads and programs, all of cause `map`.
//! * Host read of a mapped LPN: a CMT hit costs nothing more; a miss evicts the LRU unit if the
//!   CMT is full, reads the LPN's TP and caches the entry clean. An unmapped LPN costs nothing.
//! * Host write: the data page is programmed, then its entry updated: a hit marks it dirty; a
//!   miss evicts, reads the TP when `load_on_write_miss` (to learn the old copy; whole-TP caching
//!   always reads it) and caches the entry dirty.
//! * Evicting a dirty entry writes its TP back with every dirty cached entry of that TP (batch
//!   update): read the TP, write it, mark them clean. A dirty cached TP is written without a read.
//! * GC of data blocks: a moved LPN whose entry (or TP) is cached is marked dirty (lazy copying);
//!   the others are grouped by TP and each TP is read and written once.
//! * A TP never written (its LPNs were never evicted dirty) is not read: nothing of it is on flash.

mod part;

use super::page::PageFtl;
use super::{Ftl, FtlView, Unit};
use crate::error::{Result, SimError};
use crate::gc::VictimPolicy;
use crate::list::{List, NIL};
use crate::nand::{Cause, Mark, Nand};
use crate::units::{Divisor, Geometry, Lpn};

const NONE: u32 = u32::MAX;

crate::params! {
    /// The demand-based FTL's parameters (`[ftl.dftl]`).
    pub struct Params {
        /// CMT capacity in mapping entries; 0 = from `cmt_bytes`, else from `cmt_fraction`.
        cmt_entries: u64 = 0,
        /// CMT capacity in bytes of controller memory (÷ `entry_bytes` entries); 0 = unset.
        cmt_bytes: u64 = 0,
        /// CMT capacity as a fraction of the full map (N entries), in (0, 1]; used when neither
        /// `cmt_entries` nor `cmt_bytes` is set.
        cmt_fraction: f64 = 0.2,
        /// Bytes of one mapping entry on flash and in the CMT (4 as in DFTL; 8 in MQSim).
        entry_bytes: u64 = 4,
        /// What the CMT caches: "entry" (single entries) or "page" (whole translation pages).
        granularity: String = "entry".into(),
        /// A host write that misses the CMT reads its translation page first (to learn the old
        /// copy to invalidate); false = the entry is cached dirty without a read.
        load_on_write_miss: bool = true,
        /// GC runs when free blocks fall below this (≥ 2); 0 = automatic (as the page FTL's).
        gc_free_blocks: u64 = 0,
        /// "none": one CMT; "fixed": PTSD's clean and dirty regions (needs granularity = "page",
        /// the seed's base: the clean region caches whole translation pages); "adaptive": the
        /// regions' split follows the observed map costs of reads and writes (the seed's future
        /// work; docs/config.md).
        partition: String = "none".into(),
        /// Share of the CMT's memory for the clean region, in (0, 1) (50:50 in seed 004); the
        /// starting share under "adaptive".
        clean_ratio: f64 = 0.5,
        /// "adaptive": host accesses between two steps of the controller.
        adapt_every: u64 = 4096,
        /// "adaptive": how far one step moves the clean share toward its target, in (0, 1].
        adapt_gain: f64 = 0.5,
        /// "adaptive": the clean share stays within [adapt_min, 1 − adapt_min], adapt_min in (0, 0.5).
        adapt_min: f64 = 0.05,
        /// What the dirty region holds: "page" (whole translation pages: PART) or "entry"
        /// (updated entries grouped by translation page, written without a read: WRITEOPT).
        dirty_cache: String = "page".into(),
        /// Which translation page an entry-level dirty region writes back when full: "greedy"
        /// (the most dirty entries; the seed's choice) or "lru" (the least recently updated).
        writeback: String = "greedy".into(),
        /// How GC records the data pages it moved whose entries are not cached: "batch" (each
        /// such translation page read and written once, with every dirty cached entry of it) or
        /// "cache" (each moved entry is cached dirty, evicting as a miss does, and written back
        /// later; WiscSim's DFTL; entry granularity without partition).
        gc_map_update: String = "batch".into(),
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        let set = [self.cmt_entries > 0, self.cmt_bytes > 0]
            .iter()
            .filter(|&&x| x)
            .count();
        if set > 1 {
            return Err(SimError::config(
                format!("{table}.cmt_entries"),
                "set one of cmt_entries and cmt_bytes (or neither, to use cmt_fraction)",
            ));
        }
        if !(self.cmt_fraction > 0.0 && self.cmt_fraction <= 1.0) {
            return Err(SimError::config(
                format!("{table}.cmt_fraction"),
                format!("{} is not in (0, 1]", self.cmt_fraction),
            ));
        }
        if self.entry_bytes == 0 {
            return Err(SimError::config(
                format!("{table}.entry_bytes"),
                "0 is not ≥ 1",
            ));
        }
        let g = Granularity::parse(&self.granularity, table)?;
        match self.partition.as_str() {
            "none" => {}
            "fixed" | "adaptive" if g == Granularity::Page => {}
            "fixed" | "adaptive" => {
                return Err(SimError::config(
                    format!("{table}.granularity"),
                    format!(
                    "partition = \"{}\" caches whole translation pages in its clean region: set \
                     granularity = \"page\" (dirty_cache = \"entry\" keeps single entries dirty)",
                    self.partition
                ),
                ))
            }
            v => {
                return Err(crate::error::unknown_value(
                    format!("{table}.partition"),
                    v,
                    &["none", "fixed", "adaptive"],
                ))
            }
        }
        if self.adapt_every == 0 {
            return Err(SimError::config(
                format!("{table}.adapt_every"),
                "0 is not ≥ 1",
            ));
        }
        if !(self.adapt_gain > 0.0 && self.adapt_gain <= 1.0) {
            return Err(SimError::config(
                format!("{table}.adapt_gain"),
                format!("{} is not in (0, 1]", self.adapt_gain),
            ));
        }
        if !(self.adapt_min > 0.0 && self.adapt_min < 0.5) {
            return Err(SimError::config(
                format!("{table}.adapt_min"),
                format!("{} is not in (0, 0.5)", self.adapt_min),
            ));
        }
        if self.partition == "adaptive"
            && !(self.adapt_min..=1.0 - self.adapt_min).contains(&self.clean_ratio)
        {
            return Err(SimError::config(
                format!("{table}.clean_ratio"),
                format!(
                    "{} is outside [adapt_min, 1 − adapt_min] = [{}, {}]",
                    self.clean_ratio,
                    self.adapt_min,
                    1.0 - self.adapt_min
                ),
            ));
        }
        if !(self.clean_ratio > 0.0 && self.clean_ratio < 1.0) {
            return Err(SimError::config(
                format!("{table}.clean_ratio"),
                format!("{} is not in (0, 1)", self.clean_ratio),
            ));
        }
        if !matches!(self.dirty_cache.as_str(), "page" | "entry") {
            return Err(crate::error::unknown_value(
                format!("{table}.dirty_cache"),
                &self.dirty_cache,
                &["page", "entry"],
            ));
        }
        part::Writeback::parse(&self.writeback, table)?;
        match self.gc_map_update.as_str() {
            "batch" => {}
            "cache" if g == Granularity::Entry && self.partition == "none" => {}
            "cache" => {
                return Err(SimError::config(
                    format!("{table}.gc_map_update"),
                    "\"cache\" caches single moved entries: it needs granularity = \"entry\" and \
                     partition = \"none\"",
                ))
            }
            v => {
                return Err(crate::error::unknown_value(
                    format!("{table}.gc_map_update"),
                    v,
                    &["batch", "cache"],
                ))
            }
        }
        if self.gc_free_blocks == 1 {
            return Err(SimError::config(
                format!("{table}.gc_free_blocks"),
                "must be 0 (automatic) or ≥ 2: GC needs a free block to copy valid pages into",
            ));
        }
        Ok(())
    }
}

impl Params {
    /// Entries per translation page.
    pub fn entries_per_tp(&self, page_bytes: u64) -> Result<u64> {
        let e = page_bytes / self.entry_bytes;
        if e == 0 {
            return Err(SimError::config(
                "ftl.dftl.entry_bytes",
                format!(
                    "{} is larger than a page ({page_bytes} bytes)",
                    self.entry_bytes
                ),
            ));
        }
        Ok(e)
    }

    /// The CMT capacity in entries for `n` logical pages (at least one unit).
    pub fn cmt_capacity(&self, n: u64) -> u64 {
        let entries = if self.cmt_entries > 0 {
            self.cmt_entries
        } else if self.cmt_bytes > 0 {
            self.cmt_bytes / self.entry_bytes
        } else {
            (self.cmt_fraction * n as f64).round() as u64
        };
        entries.max(1)
    }

    /// The page FTL underneath: two host frontiers (data, translation pages) and GC's own.
    fn page(&self) -> super::page::Params {
        super::page::Params {
            gc_free_blocks: self.gc_free_blocks,
            streams: 2,
            separate_gc_frontier: true,
        }
    }

    /// Physical blocks needed beyond the data blocks: the translation pages' blocks and the page
    /// FTL's reserve and frontiers.
    pub fn spare_blocks(&self, logical_pages: u64, geo_page_bytes: u64, ppb: u64) -> Result<u64> {
        let tps = logical_pages.div_ceil(self.entries_per_tp(geo_page_bytes)?);
        let data_blocks = logical_pages.div_ceil(ppb);
        let all_blocks = (logical_pages + tps).div_ceil(ppb);
        Ok(all_blocks - data_blocks + self.page().spare_blocks())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granularity {
    Entry,
    Page,
}

impl Granularity {
    fn parse(v: &str, table: &str) -> Result<Self> {
        match v {
            "entry" => Ok(Granularity::Entry),
            "page" => Ok(Granularity::Page),
            _ => Err(crate::error::unknown_value(
                format!("{table}.granularity"),
                v,
                &["entry", "page"],
            )),
        }
    }
}

/// `c`'s index, slots and LRU list agree, within its capacity, and each TP's dirty count is the
/// number of its cached units marked dirty.
fn check_lru(c: &Cmt, what: &str) -> Result<()> {
    let bad = |m: String| Err(SimError::Integrity(format!("{what}: {m}")));
    let mut seen = 0u32;
    let mut dirty = vec![0u32; c.dirty_count.len()];
    let mut s = c.lru.head;
    while s != NIL {
        let key = c.nodes[s as usize].key;
        if c.index[key as usize] != s {
            return bad(format!(
                "slot {s} holds unit {key}, indexed at {}",
                c.index[key as usize]
            ));
        }
        if c.is_dirty(s) {
            dirty[c.tp_of(key) as usize] += 1;
        }
        seen += 1;
        s = c.nodes[s as usize].next;
    }
    if seen != c.lru.len || seen > c.capacity {
        return bad(format!(
            "{seen} units listed, {} counted, capacity {}",
            c.lru.len, c.capacity
        ));
    }
    if let Some(tp) = (0..dirty.len()).find(|&t| dirty[t] != c.dirty_count[t]) {
        return bad(format!(
            "TP {tp}: {} dirty units cached, {} counted",
            dirty[tp], c.dirty_count[tp]
        ));
    }
    Ok(())
}

/// A cached unit: its LRU links, its key, and the generation of its TP in which it was made
/// dirty (`CLEAN`: never since it was cached).
#[derive(Clone, Copy, Debug)]
struct Node {
    prev: u32,
    next: u32,
    key: u32,
    mark: u32,
}
crate::list::linked!(Node);

/// A node's mark before it is first made dirty; no generation takes this value.
const CLEAN: u32 = u32::MAX;

/// The cached mapping table: LRU over units (entries or TPs) with a dirty bit. A unit is dirty
/// when its mark is its TP's current generation, so a batch update cleans every dirty cached
/// entry of a TP at once by moving the TP to its next generation (no walk over the entries).
struct Cmt {
    capacity: u32,
    /// Unit key → slot (NONE: not cached).
    index: Vec<u32>,
    /// Slot → unit, one cache line (or less) per unit.
    nodes: Vec<Node>,
    lru: List,
    /// Units per TP: E for entries, 1 when the units are TPs.
    per_tp: Divisor,
    /// Per TP: its dirty cached units, and its generation.
    dirty_count: Vec<u32>,
    generation: Vec<u32>,
    free: Vec<u32>,
}

impl Cmt {
    /// `units` keys, `per_tp` of them in each of the `tps` translation pages.
    fn new(capacity: u64, units: u64, tps: u64, per_tp: u64) -> Result<Self> {
        let capacity = capacity.min(units) as u32;
        Ok(Cmt {
            capacity,
            index: crate::units::alloc_vec(units, NONE, "the CMT index")?,
            nodes: Vec::with_capacity(capacity as usize),
            lru: List::default(),
            per_tp: Divisor::new(per_tp),
            dirty_count: vec![0; tps as usize],
            generation: vec![0; tps as usize],
            free: Vec::new(),
        })
    }

    #[inline]
    fn slot(&self, key: u32) -> Option<u32> {
        let s = self.index[key as usize];
        (s != NONE).then_some(s)
    }

    #[inline]
    fn tp_of(&self, key: u32) -> u32 {
        self.per_tp.quot(key as u64) as u32
    }

    fn key(&self, s: u32) -> u32 {
        self.nodes[s as usize].key
    }

    fn full(&self) -> bool {
        self.lru.len >= self.capacity
    }

    #[inline]
    fn is_dirty(&self, s: u32) -> bool {
        let n = &self.nodes[s as usize];
        n.mark == self.generation[self.tp_of(n.key) as usize]
    }

    /// Start loading what a lookup of `key` reads.
    #[inline]
    fn prefetch(&self, key: u32) {
        crate::units::prefetch(&self.index, key as usize);
    }

    /// Start loading the slot caching `key`, if any (a prefetch of its index entry ran earlier).
    #[inline]
    fn prefetch_slot(&self, key: u32) {
        if let Some(&s) = self.index.get(key as usize).filter(|&&s| s != NONE) {
            crate::units::prefetch(&self.nodes, s as usize);
        }
    }

    /// Start loading what evicting the LRU unit writes: its index entry and its neighbour's
    /// links (the unit itself is loaded).
    #[inline]
    fn prefetch_victim(&self) {
        if let Some(n) = self.nodes.get(self.lru.tail as usize) {
            crate::units::prefetch(&self.index, n.key as usize);
            crate::units::prefetch(&self.nodes, n.prev as usize);
        }
    }

    /// Make slot `s` the most recently used.
    #[inline]
    fn touch(&mut self, s: u32) {
        if self.lru.head != s {
            let l = &mut self.lru;
            crate::list::unlink(&mut self.nodes, &mut l.head, &mut l.tail, s);
            crate::list::push_front(&mut self.nodes, &mut l.head, &mut l.tail, s);
        }
    }

    fn insert(&mut self, key: u32) -> u32 {
        let node = Node {
            prev: NIL,
            next: NIL,
            key,
            mark: CLEAN,
        };
        let s = crate::list::alloc(&mut self.nodes, &mut self.free, node);
        self.index[key as usize] = s;
        let l = &mut self.lru;
        crate::list::push_front(&mut self.nodes, &mut l.head, &mut l.tail, s);
        l.len += 1;
        s
    }

    fn remove(&mut self, s: u32) {
        debug_assert!(!self.is_dirty(s));
        let l = &mut self.lru;
        crate::list::unlink(&mut self.nodes, &mut l.head, &mut l.tail, s);
        l.len -= 1;
        self.index[self.nodes[s as usize].key as usize] = NONE;
        self.free.push(s);
    }

    /// Mark slot `s` dirty.
    #[inline]
    fn set_dirty(&mut self, s: u32) {
        let tp = self.tp_of(self.nodes[s as usize].key) as usize;
        let g = self.generation[tp];
        let n = &mut self.nodes[s as usize];
        if n.mark != g {
            n.mark = g;
            self.dirty_count[tp] += 1;
        }
    }

    /// Mark every dirty cached unit of `tp` clean; returns how many there were.
    fn clean_tp(&mut self, tp: u32) -> u32 {
        let n = std::mem::take(&mut self.dirty_count[tp as usize]);
        if n > 0 {
            let g = &mut self.generation[tp as usize];
            *g += 1;
            if *g == CLEAN {
                // After 2^32 - 1 generations: start again at 0, with no old mark left that
                // could match it (every unit of this TP is clean now).
                *g = 0;
                for i in 0..self.nodes.len() {
                    if self.tp_of(self.nodes[i].key) == tp {
                        self.nodes[i].mark = CLEAN;
                    }
                }
            }
        }
        n
    }
}

/// How many of GC's moved pages ahead their CMT slots are loaded (their index entries twice as
/// far).
const MOVED_AHEAD: usize = 16;

/// Append the positions of the set bits of `words` (the first is word `first` of the bitmap)
/// to `out` in ascending order, clearing them.
fn take_bits(words: &mut [u64], first: usize, out: &mut Vec<u32>) {
    for (i, w) in words.iter_mut().enumerate() {
        let base = ((first + i) * 64) as u32;
        while *w != 0 {
            out.push(base + w.trailing_zeros());
            *w &= *w - 1;
        }
    }
}

pub struct DftlFtl {
    page: PageFtl,
    /// Data LPNs (N).
    n: u64,
    /// Entries per TP (E).
    e: Divisor,
    ppb: u64,
    granularity: Granularity,
    load_on_write_miss: bool,
    cmt: Cmt,
    /// PTSD's clean and dirty regions, replacing `cmt` (`partition = "fixed"`).
    /// Boxed: an access takes it out of `self` (to reach the map I/O beside it) and puts it back.
    part: Option<Box<part::Part>>,
    cmt_entries: u64,
    tp_version: u32,
    moved: Vec<u32>,
    tps_to_update: Vec<u32>,
    /// GC's translation pages to update, one bit each (zero between updates).
    tp_bits: Vec<u64>,
    hits: u64,
    misses: u64,
    dirty_evictions: u64,
    read_evict_writes: u64,
    batched_entries: u64,
    gc_tp_updates: u64,
    /// Map reads and programs issued (the adaptive partition's controller prices them).
    map_reads: u64,
    map_programs: u64,
    /// `run.check_integrity`: also check every translation-page write's batch.
    check: bool,
    partitioned: bool,
    /// `gc_map_update = "cache"`: GC's moved entries are cached dirty.
    gc_caches_moved: bool,
    /// Timed mode: the last read of each TP, for what needs the entries it brought (a lookup
    /// that hits its cached copy, the copy's write-back) while it may be in flight.
    tp_read: Vec<Mark>,
}

impl DftlFtl {
    /// `read_us` and `program_us` price map I/O for the adaptive partition's controller.
    pub fn new(
        geo: &Geometry,
        gc: VictimPolicy,
        p: &Params,
        (read_us, program_us): (f64, f64),
        check: bool,
    ) -> Result<Self> {
        let n = geo.logical_pages;
        let e = p.entries_per_tp(geo.page_bytes)?;
        let tps = n.div_ceil(e);
        let inner = Geometry {
            logical_pages: n + tps,
            ..*geo
        };
        let pp = p.page();
        let mut page = PageFtl::new(&inner, gc, pp.gc_free_blocks, pp.streams, true, check)
            .map_err(|err| match err {
                SimError::Config { field, msg, .. } if field == "device.op" => SimError::config(
                    field,
                    format!(
                        "{msg}; the demand-based FTL also keeps {tps} translation pages on flash"
                    ),
                ),
                other => other,
            })?;
        page.set_translation(n, 1);
        let granularity = Granularity::parse(&p.granularity, "ftl.dftl")?;
        let capacity = p.cmt_capacity(n);
        let (units, unit_cap) = match granularity {
            Granularity::Entry => (n, capacity),
            Granularity::Page => (tps, (capacity / e).max(1)),
        };
        let part = match p.partition.as_str() {
            "fixed" | "adaptive" => Some(Box::new(part::Part::new(
                capacity,
                p.clean_ratio,
                p.dirty_cache == "entry",
                part::Writeback::parse(&p.writeback, "ftl.dftl")?,
                n,
                tps,
                e,
                (p.partition == "adaptive").then(|| part::Adapt::new(p, read_us, program_us)),
            )?)),
            _ => None,
        };
        let (units, unit_cap) = if part.is_some() {
            (0, 0)
        } else {
            (units, unit_cap)
        };
        Ok(DftlFtl {
            page,
            n,
            e: Divisor::new(e),
            ppb: geo.pages_per_block,
            granularity,
            load_on_write_miss: p.load_on_write_miss,
            cmt: Cmt::new(
                unit_cap,
                units,
                tps,
                if granularity == Granularity::Entry {
                    e
                } else {
                    1
                },
            )?,
            part,
            cmt_entries: capacity,
            tp_version: 0,
            moved: Vec::new(),
            tps_to_update: Vec::new(),
            tp_bits: vec![0; tps.div_ceil(64) as usize],
            hits: 0,
            misses: 0,
            dirty_evictions: 0,
            read_evict_writes: 0,
            batched_entries: 0,
            gc_tp_updates: 0,
            map_reads: 0,
            map_programs: 0,
            check,
            partitioned: p.partition != "none",
            gc_caches_moved: p.gc_map_update == "cache",
            tp_read: vec![Mark::NONE; tps as usize],
        })
    }

    #[inline]
    fn tp_of(&self, lpn: Lpn) -> u32 {
        self.e.quot(lpn) as u32
    }

    #[inline]
    fn key_of(&self, lpn: Lpn) -> u32 {
        match self.granularity {
            Granularity::Entry => lpn as u32,
            Granularity::Page => self.tp_of(lpn),
        }
    }

    /// Dirty cached entries (or a dirty cached copy) of translation page `tp`; None while an
    /// access has the partitioned CMT out.
    fn dirty_cached(&self, tp: u32) -> Option<u64> {
        if self.partitioned {
            return self.part.as_ref().map(|p| p.dirty_of(tp));
        }
        Some(self.cmt.dirty_count[tp as usize] as u64)
    }

    /// Read translation page `tp` once operation `after` is done (a write-back that frees its
    /// slot); the read, for what needs the entries it brings (NONE: the TP is not on flash).
    fn read_tp(&mut self, tp: u32, after: Mark, nand: &mut Nand) -> Mark {
        match self.page.ppn_of(self.n + tp as u64) {
            Some(ppn) => {
                self.map_reads += 1;
                nand.read_after(Cause::Map, ppn, after);
                self.tp_read[tp as usize] = nand.mark();
                nand.mark()
            }
            None => Mark::NONE,
        }
    }

    /// Write translation page `tp` back; its program waits for the TP's last read (the read of
    /// a read-modify-write, or the load of the cached copy written whole). Returns the program.
    fn write_tp(&mut self, tp: u32, nand: &mut Nand) -> Result<Mark> {
        // Batch update: a written translation page carries every dirty cached entry of it.
        // (While an access has the partitioned CMT out, its own write-backs take their entries
        // just before.)
        if let Some(left) = self.dirty_cached(tp).filter(|&n| self.check && n > 0) {
            return Err(SimError::Integrity(format!(
                "translation page {tp} written with {left} of its dirty cached entries left behind"
            )));
        }
        self.map_programs += 1;
        self.tp_version = self.tp_version.wrapping_add(1).max(1);
        let after = self.tp_read[tp as usize];
        self.page
            .write_translation(self.n + tp as u64, self.tp_version, after, nand)?;
        // The TP's program is the last operation (any GC it ran comes first).
        Ok(nand.mark())
    }

    /// Evict the LRU unit, writing its TP back if it is dirty: the write-back (NONE: none).
    fn evict(&mut self, host_read: bool, nand: &mut Nand) -> Result<Mark> {
        let s = self.cmt.lru.tail;
        if s == NIL {
            return Ok(Mark::NONE);
        }
        let mut written = Mark::NONE;
        if self.cmt.is_dirty(s) {
            self.dirty_evictions += 1;
            self.read_evict_writes += host_read as u64;
            let tp = self.cmt.tp_of(self.cmt.key(s));
            // A cached TP is written whole: no read.
            if self.granularity == Granularity::Entry {
                self.read_tp(tp, Mark::NONE, nand);
            }
            self.batched_entries += self.cmt.clean_tp(tp) as u64;
            written = self.write_tp(tp, nand)?;
        }
        self.cmt.remove(s);
        self.cmt.prefetch_victim();
        Ok(written)
    }

    /// Look `lpn`'s entry up for a host access, loading it on a miss; `write` leaves it dirty.
    /// Returns the map read that brought the entry: a miss's, which waits for the write-back of
    /// the victim whose slot it takes, or on a hit of a cached TP its load (in flight if of this
    /// batch); NONE: none.
    fn access(&mut self, lpn: Lpn, write: bool, nand: &mut Nand) -> Result<Mark> {
        if self.part.is_some() {
            return self.part_access(lpn, write, nand);
        }
        let key = self.key_of(lpn);
        let tp = self.tp_of(lpn);
        let (s, loaded) = match self.cmt.slot(key) {
            Some(s) => {
                self.hits += 1;
                self.cmt.touch(s);
                let loaded = match self.granularity {
                    Granularity::Page => self.tp_read[tp as usize],
                    // Loaded by an earlier miss of its own; the TP's last read may have
                    // been another entry's.
                    Granularity::Entry => Mark::NONE,
                };
                (s, loaded)
            }
            None => {
                self.misses += 1;
                let freed = if self.cmt.full() {
                    self.evict(!write, nand)?
                } else {
                    Mark::NONE
                };
                let loaded =
                    if !write || self.load_on_write_miss || self.granularity == Granularity::Page {
                        self.read_tp(tp, freed, nand)
                    } else {
                        Mark::NONE
                    };
                (self.cmt.insert(key), loaded)
            }
        };
        if write {
            self.cmt.set_dirty(s);
        }
        Ok(loaded)
    }

    /// Update the map for the data pages GC moved: cached entries turn dirty, the rest are
    /// written into their TPs, one read and one write per TP. Those writes may run GC again.
    #[inline]
    fn settle_moved(&mut self, nand: &mut Nand) -> Result<()> {
        if self.page.nothing_moved() {
            return Ok(());
        }
        self.settle_moved_slow(nand)
    }

    #[inline(never)]
    fn settle_moved_slow(&mut self, nand: &mut Nand) -> Result<()> {
        let mut moved = std::mem::take(&mut self.moved);
        let mut tps = std::mem::take(&mut self.tps_to_update);
        loop {
            self.page.take_moved(&mut moved);
            if moved.is_empty() {
                break;
            }
            // The TPs to update, as a bitmap over TPs (words lo..hi in use): ascending and
            // without repeats when read out, with no sort.
            let (mut lo, mut hi) = (usize::MAX, 0);
            let mut mark = |bits: &mut [u64], tp: u32| {
                let w = tp as usize / 64;
                bits[w] |= 1 << (tp % 64);
                (lo, hi) = (lo.min(w), hi.max(w + 1));
            };
            for (i, &lpn) in moved.iter().enumerate() {
                let (lpn, tp) = (lpn as u64, self.tp_of(lpn as u64));
                if let Some(part) = &self.part {
                    if !part.holds_dirty(lpn, tp) {
                        mark(&mut self.tp_bits, tp);
                    }
                    continue;
                }
                // The CMT lookups of GC's moves are random: load them a few moves ahead.
                if let Some(&ahead) = moved.get(i + 2 * MOVED_AHEAD) {
                    self.cmt.prefetch(self.key_of(ahead as u64));
                }
                if let Some(&ahead) = moved.get(i + MOVED_AHEAD) {
                    self.cmt.prefetch_slot(self.key_of(ahead as u64));
                }
                let key = self.key_of(lpn);
                match self.cmt.slot(key) {
                    Some(s) => self.cmt.set_dirty(s),
                    None if self.gc_caches_moved => {
                        // Cached dirty now, written back when evicted (its eviction may write
                        // a translation page and so run GC again: taken in the next round).
                        if self.cmt.full() {
                            self.evict(false, nand)?;
                        }
                        let s = self.cmt.insert(key);
                        self.cmt.set_dirty(s);
                    }
                    None => mark(&mut self.tp_bits, tp),
                }
            }
            tps.clear();
            take_bits(&mut self.tp_bits[lo.min(hi)..hi], lo, &mut tps);
            for &tp in &tps {
                self.gc_tp_updates += 1;
                // The page written carries the TP's other dirty cached entries too.
                self.batched_entries += match &mut self.part {
                    Some(part) => part.take_dirty(tp, tp as u64 * self.e.get(), self.e.get()),
                    None => self.cmt.clean_tp(tp) as u64,
                };
                // A cached clean copy is updated in place: no read.
                if !self.part.as_ref().is_some_and(|p| p.has_clean(tp)) {
                    self.read_tp(tp, Mark::NONE, nand);
                }
                self.write_tp(tp, nand)?;
            }
        }
        self.moved = moved;
        self.tps_to_update = tps;
        Ok(())
    }

    /// The CMT's invariants: index and slots agree, the LRU list holds every cached unit, and the
    /// per-TP dirty lists hold exactly the dirty entries of their TP.
    fn check_cmt(&self) -> Result<()> {
        if let Some(part) = &self.part {
            return part.check();
        }
        check_lru(&self.cmt, "CMT")
    }

    /// Dirty cached entries of TP `tp` now (entry granularity; 0 or the whole TP's flag for page).
    #[cfg(test)]
    fn dirty_in(&self, tp: u32) -> u32 {
        self.cmt.dirty_count[tp as usize]
    }
}

impl FtlView for DftlFtl {
    fn is_mapped(&self, lpn: Lpn) -> bool {
        lpn < self.n && self.page.is_mapped(lpn)
    }
    fn stat(&self, name: &str) -> Option<f64> {
        self.page.stat(name)
    }
    /// The page FTL's entries and the CMT's index entry of `lpn`, then (`deep`) its cached slot.
    #[inline]
    fn prefetch(&self, lpn: Lpn, deep: bool) {
        if lpn >= self.n {
            return;
        }
        self.page.prefetch(lpn, deep);
        if self.part.is_none() {
            let key = self.key_of(lpn);
            if deep {
                self.cmt.prefetch_slot(key);
            } else {
                self.cmt.prefetch(key);
            }
        }
    }
}

impl Ftl for DftlFtl {
    /// Host data goes to the data frontier (stream 0) whatever its hint: stream 1 holds the
    /// translation pages.
    fn write_unit(&mut self, unit: Unit<'_>, nand: &mut Nand) -> Result<()> {
        let first = unit.lbn * self.ppb;
        if self.part.is_none() {
            // Their CMT lookups load while the page FTL programs.
            for p in unit.pages {
                self.cmt.prefetch(self.key_of(first + p.offset as u64));
            }
        }
        self.page
            .write_unit(Unit::new(unit.lbn, unit.pages, unit.shape), nand)?;
        self.settle_moved(nand)?;
        for p in unit.pages {
            self.access(first + p.offset as u64, true, nand)?;
            self.settle_moved(nand)?;
        }
        Ok(())
    }

    fn ppn_of(&self, lpn: Lpn) -> Option<u32> {
        if lpn < self.n {
            self.page.ppn_of(lpn)
        } else {
            None
        }
    }

    /// A host read looks its entry up first; reads inside a flush (read-modify-write, padding)
    /// do not, as the write that follows looks the entry up.
    fn read(&mut self, lpn: Lpn, cause: Cause, nand: &mut Nand) -> Result<bool> {
        if cause == Cause::Host && self.part.is_none() && lpn < self.n {
            // The CMT lookup loads while the map entry does.
            self.cmt.prefetch(self.key_of(lpn));
        }
        if self.ppn_of(lpn).is_none() {
            return Ok(false);
        }
        let mut located = Mark::NONE;
        // A read by logical address (the host's, or read-ahead's) looks its entry up in the CMT.
        if matches!(cause, Cause::Host | Cause::ReadAhead) {
            located = self.access(lpn, false, nand)?;
            // The eviction's TP write may have run GC, which may have moved this very page.
            self.settle_moved(nand)?;
        }
        // The data read waits for the map read that located it (a CMT miss).
        if let Some(ppn) = self.page.ppn_of(lpn) {
            nand.read_after(cause, ppn, located);
        }
        Ok(true)
    }

    fn trim(&mut self, lpn: Lpn) {
        self.page.trim(lpn);
        // The entry changes; a cached one turns dirty (no load for an uncached one). The
        // partitioned CMT is left as it is: moving a clean region's copy to the dirty region may
        // need a write-back, which a trim cannot issue.
        if self.part.is_some() {
            return;
        }
        if let Some(s) = self.cmt.slot(self.key_of(lpn)) {
            self.cmt.set_dirty(s);
        }
    }

    fn version_of(&self, lpn: Lpn) -> u32 {
        self.page.version_of(lpn)
    }

    fn check_integrity(&self, latest: &[u32]) -> Result<()> {
        self.page.check_integrity(latest)?;
        self.check_cmt()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.page.counters();
        c.extend([
            ("ftl.cmt.hits", self.hits),
            ("ftl.cmt.misses", self.misses),
            ("ftl.cmt.dirty_evictions", self.dirty_evictions),
            ("ftl.cmt.read_evict_writes", self.read_evict_writes),
            ("ftl.cmt.batched_entries", self.batched_entries),
            ("ftl.cmt.gc_tp_updates", self.gc_tp_updates),
        ]);
        c
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let mut g = self.page.gauges();
        g.push(("ftl.cmt.capacity_entries", self.cmt_entries as f64));
        g.push(("ftl.cmt.entries_per_tp", self.e.get() as f64));
        if let Some(part) = &self.part {
            let (clean, dirty) = part.capacities();
            g.push(("ftl.cmt.clean_capacity_pages", clean as f64));
            g.push(("ftl.cmt.dirty_capacity", dirty as f64));
            if let Some(a) = part.adapt() {
                g.push(("ftl.cmt.clean_ratio", a.ratio));
                g.push(("ftl.cmt.adapt_steps", a.steps as f64));
            }
        }
        g
    }

    fn window_metrics(&self, counters: &[(&'static str, u64)]) -> Vec<(&'static str, f64)> {
        let get = |k: &str| counters.iter().find(|(n, _)| *n == k).map_or(0, |c| c.1) as f64;
        let (h, m) = (get("ftl.cmt.hits"), get("ftl.cmt.misses"));
        vec![(
            "ftl.cmt.hit_ratio",
            if h + m > 0.0 { h / (h + m) } else { f64::NAN },
        )]
    }
}

const INFO: crate::component::Component = crate::component::Component::new(
            "ftl",
            "dftl",
            "DFTL (demand-based): a page-mapped FTL whose map lives in translation pages on flash (a pool and frontier of \
             their own, located by a global translation directory); a cached mapping table of bounded size (entries or \
             whole translation pages, LRU) decides the map's cost: a miss reads a translation page, a dirty eviction \
             writes its page back with every dirty cached entry of it (batch update); GC updates cached entries lazily \
             and the others once per translation page. Map reads and programs have cause `map`.",
            crate::params::spec::<Params>(),
            &["ftl.gc"],
        );

/// The registry entry of `dftl`.
pub static ENTRY: super::Entry = super::Entry {
    info: INFO,
    build: |cfg, geo, _| {
        let p = table(cfg)?;
        Ok(Box::new(DftlFtl::new(
            geo,
            crate::gc::VictimPolicy::from_name(&cfg.ftl.gc)?,
            &p,
            (cfg.nand.read_us, cfg.nand.program_us),
            cfg.run.check_integrity,
        )?))
    },
    spare_blocks: |cfg, _, logical_blocks| {
        let ppb = cfg.device.pages_per_block;
        table(cfg)?.spare_blocks(logical_blocks * ppb, cfg.device.page_bytes.0, ppb)
    },
    provision: super::op_provision,
    resolve: super::no_resolve,
    frontiers: None,
    check: super::no_check,
    default_op: super::uses_default_op,
    supports: super::Supports::NONE,
};

/// `[ftl.dftl]` of `cfg`.
fn table(cfg: &crate::config::Config) -> Result<Params> {
    crate::params::of(&cfg.ftl.tables, "ftl", "dftl")
}

#[cfg(test)]
mod tests {
    use super::super::hybrid::testutil::geo;
    use super::*;
    use crate::ftl::UnitPage;

    /// 16 data LPNs, 4 pages per block, 1 KiB entries in 4 KiB pages: E = 4, so TP t holds LPNs
    /// 4t..4t+3; a CMT of 4 entries.
    fn tiny(granularity: &str, cmt_entries: u64) -> (DftlFtl, Nand) {
        build(Params {
            cmt_entries,
            entry_bytes: 1024,
            granularity: granularity.into(),
            ..Params::default()
        })
    }

    fn build(p: Params) -> (DftlFtl, Nand) {
        let geo = geo(4, 4, 16);
        (
            DftlFtl::new(&geo, VictimPolicy::Greedy, &p, (25.0, 200.0), true).unwrap(),
            Nand::new(16),
        )
    }

    /// The map's flash I/O and the CMT's counters, in the order named.
    fn expect(f: &DftlFtl, n: &Nand, want: &[(&str, u64)]) {
        for &(k, v) in want {
            let got = match k {
                "map reads" => n.counters.reads[Cause::Map as usize],
                "map programs" => n.counters.programs[Cause::Map as usize],
                _ => counter(f, &format!("ftl.cmt.{k}")),
            };
            assert_eq!(got, v, "{k}");
        }
    }

    fn write(f: &mut DftlFtl, n: &mut Nand, lpn: u64) {
        write_version(f, n, lpn, 1);
    }

    fn write_version(f: &mut DftlFtl, n: &mut Nand, lpn: u64, version: u32) {
        let page = [UnitPage::new((lpn % 4) as u32, version, Cause::Host)];
        f.write_unit(Unit::pages(lpn / 4, &page), n).unwrap();
    }

    /// Writes of versions 1..3000 to pseudo-random LPNs (an LCG from `seed`), enough for GC all
    /// along; `between` runs after each write with its version and the generator's state.
    /// Returns the latest version of every LPN.
    fn churn(
        f: &mut DftlFtl,
        n: &mut Nand,
        seed: u64,
        mut between: impl FnMut(&mut DftlFtl, &mut Nand, u32, &mut u64),
    ) -> Vec<u32> {
        let mut latest = vec![0u32; 16];
        let mut x = seed;
        for v in 1..3000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lpn = (x >> 33) % 16;
            write_version(f, n, lpn, v);
            latest[lpn as usize] = v;
            between(f, n, v, &mut x);
        }
        latest
    }

    fn counter(f: &DftlFtl, k: &str) -> u64 {
        f.counters().iter().find(|c| c.0 == k).unwrap().1
    }

    fn gauge(f: &DftlFtl, k: &str) -> f64 {
        f.gauges().iter().find(|g| g.0 == k).unwrap().1
    }

    /// Worked by hand (CMT in LRU order, MRU first; * = dirty):
    ///
    /// op        CMT after               flash I/O of the map
    /// w 0 1 4 8 8* 4* 1* 0*             none (misses; no TP on flash yet, nothing to read)
    /// w 12      12* 8* 4* 1*            evict 0*: batch TP 0 = {0, 1} (2 entries), write TP 0
    /// w 5       5* 12* 8* 4*            evict 1 (clean now): dropped
    /// w 13      13* 5* 12* 8*           evict 4*: batch TP 1 = {4, 5}, write TP 1
    /// r 0       0 13* 5 12*             evict 8*: batch TP 2 = {8}, write TP 2 (during a read);
    ///                                   read TP 0 (on flash)
    /// r 5       5 0 13* 12*             hit
    /// Totals: 8 misses, 1 hit, 3 dirty evictions (1 during a read), 5 batched entries,
    /// 3 TP programs, 1 TP read.
    #[test]
    fn entry_cmt_worked_by_hand() {
        let (mut f, mut n) = tiny("entry", 4);
        for lpn in [0, 1, 4, 8, 12, 5, 13] {
            write(&mut f, &mut n, lpn);
        }
        assert!(f.read(0, Cause::Host, &mut n).unwrap());
        assert!(f.read(5, Cause::Host, &mut n).unwrap());
        expect(
            &f,
            &n,
            &[
                ("misses", 8),
                ("hits", 1),
                ("dirty_evictions", 3),
                ("read_evict_writes", 1),
                ("batched_entries", 5),
                ("map programs", 3),
                ("map reads", 1),
            ],
        );
        assert_eq!(n.counters.reads[Cause::Host as usize], 2);
        // LPN 5's entry was cleaned by TP 1's write-back; 13 and 12 are dirty in TP 3.
        assert_eq!(
            (f.dirty_in(0), f.dirty_in(1), f.dirty_in(2), f.dirty_in(3)),
            (0, 0, 0, 2)
        );
        f.check_cmt().unwrap();
        // An unmapped LPN costs nothing and is not looked up.
        assert!(!f.read(2, Cause::Host, &mut n).unwrap());
        assert_eq!(counter(&f, "ftl.cmt.misses"), 8);
    }

    /// Whole-TP caching, 8 entries = 2 TPs (MRU first; * = dirty):
    ///
    /// op     CMT after      flash I/O of the map
    /// w 0    0*             miss (TP 0 not on flash: no read)
    /// w 4    1* 0*          miss
    /// w 1    0* 1*          hit
    /// w 8    2* 0*          miss: evict TP 1*, write it (no read: the whole TP is cached)
    /// w 2    0* 2*          hit
    /// r 4    1 0*           miss during a read: evict TP 2*, write it; read TP 1 (on flash)
    /// Totals: 4 misses, 2 hits, 2 TP programs (1 during a read), 1 TP read.
    #[test]
    fn page_cmt_worked_by_hand() {
        let (mut f, mut n) = tiny("page", 8);
        for lpn in [0, 4, 1, 8, 2] {
            write(&mut f, &mut n, lpn);
        }
        expect(
            &f,
            &n,
            &[
                ("misses", 3),
                ("hits", 2),
                ("map programs", 1),
                ("map reads", 0),
            ],
        );
        assert!(f.read(4, Cause::Host, &mut n).unwrap());
        expect(
            &f,
            &n,
            &[
                ("misses", 4),
                ("read_evict_writes", 1),
                ("dirty_evictions", 2),
                ("map programs", 2),
                ("map reads", 1),
            ],
        );
        assert_eq!((f.dirty_in(0), f.dirty_in(1)), (1, 0));
        f.check_cmt().unwrap();
    }

    fn part(dirty_cache: &str) -> (DftlFtl, Nand) {
        part_of("fixed", dirty_cache)
    }

    fn part_of(partition: &str, dirty_cache: &str) -> (DftlFtl, Nand) {
        build(Params {
            cmt_entries: 8,
            entry_bytes: 1024,
            granularity: "page".into(),
            partition: partition.into(),
            dirty_cache: dirty_cache.into(),
            adapt_every: 16,
            ..Params::default()
        })
    }

    /// PART (seed 004 §III-A), 8 entries of memory at 50:50 and E = 4: one clean TP, one dirty TP.
    ///
    /// op    clean  dirty  map I/O
    /// w 0   —      0      miss (TP 0 not on flash: no read)
    /// w 4   —      1      miss: the dirty region is full: write TP 0 back
    /// r 0   0      1      miss: read TP 0 into the clean region (nothing written)
    /// w 2   —      0      clean hit: TP 0 moves to the dirty region, whose TP 1 is written back
    /// r 4   1      0      miss: read TP 1 into the clean region
    /// r 0   1      0      dirty-region hit
    /// Totals: 2 hits, 4 misses, 2 TP programs, 2 TP reads, none while reading.
    #[test]
    fn part_worked_by_hand() {
        let (mut f, mut n) = part("page");
        write(&mut f, &mut n, 0);
        write(&mut f, &mut n, 4);
        assert!(f.read(0, Cause::Host, &mut n).unwrap());
        write(&mut f, &mut n, 2);
        assert!(f.read(4, Cause::Host, &mut n).unwrap());
        assert!(f.read(0, Cause::Host, &mut n).unwrap());
        expect(
            &f,
            &n,
            &[
                ("hits", 2),
                ("misses", 4),
                ("dirty_evictions", 2),
                ("read_evict_writes", 0),
                ("map programs", 2),
                ("map reads", 2),
            ],
        );
        f.check_cmt().unwrap();
    }

    /// WRITEOPT (seed 004 §III-C): 4 dirty entries, greedy batch update, no read on a write.
    ///
    /// op             dirty entries by TP        map I/O
    /// w 0 1 4 8      TP0 {0,1} TP1 {4} TP2 {8}  4 misses, no reads
    /// w 9            full: greedy victim TP 0 (2 entries), written (not on flash: no read)
    /// w 5            TP1 {4,5} TP2 {8,9}
    /// w 12           full: TP 1 and TP 2 have 2 each; TP 2 reached 2 first: written (2 entries)
    /// r 0            miss: read TP 0 into the clean region
    /// w 1            clean hit (TP 0 cached); 3 entries, added
    /// w 2            clean hit; full: victim TP 1 (2 entries), written
    /// Totals: 8 misses, 2 hits, 3 TP programs carrying 6 entries, 1 TP read.
    #[test]
    fn writeopt_worked_by_hand() {
        let (mut f, mut n) = part("entry");
        for lpn in [0, 1, 4, 8, 9, 5, 12] {
            write(&mut f, &mut n, lpn);
        }
        assert_eq!(n.counters.programs[Cause::Map as usize], 2);
        assert_eq!(counter(&f, "ftl.cmt.batched_entries"), 4);
        assert!(f.read(0, Cause::Host, &mut n).unwrap());
        write(&mut f, &mut n, 1);
        write(&mut f, &mut n, 2);
        expect(
            &f,
            &n,
            &[
                ("misses", 8),
                ("hits", 2),
                ("dirty_evictions", 3),
                ("batched_entries", 6),
                ("map programs", 3),
                ("map reads", 1),
            ],
        );
        f.check_cmt().unwrap();
    }

    /// The adaptive split (`partition = "adaptive"`), 16 entries, E = 4, a step every 4 accesses
    /// moving all the way (gain 1) to the cost share clamped to [0.25, 0.75]; map reads cost 25,
    /// programs 200. It starts at 50:50: 2 clean TPs, 2 dirty TPs.
    ///
    /// op          clean  dirty  map I/O                       step
    /// w 0 4 8 12  —      3 2    TP 0 and TP 1 written back    C_r 0, C_w 400: share 0.25:
    ///                                                          1 clean TP, 3 dirty
    /// r 0 4 0 4   1      3 2    4 misses, 4 reads (1 clean)   C_r 100, C_w 0: share 0.75:
    ///                                                          3 clean TPs, 1 dirty (holds 2)
    /// r 0         0 1    3 2    miss, read: 2 clean TPs, all the dirty region leaves
    /// r 4, r 12   0 1    3 2    clean hit, dirty hit
    /// w 1         1      0      clean hit: the over-full dirty region writes back TP 2 and
    ///                           TP 3, then takes TP 0      C_r 25, C_w 400: share 0.25
    /// Totals: 3 hits, 9 misses, 4 TP programs, 5 TP reads, none while reading; 3 steps.
    #[test]
    fn adaptive_split_worked_by_hand() {
        let (mut f, mut n) = build(Params {
            cmt_entries: 16,
            entry_bytes: 1024,
            granularity: "page".into(),
            partition: "adaptive".into(),
            adapt_every: 4,
            adapt_gain: 1.0,
            adapt_min: 0.25,
            ..Params::default()
        });
        for lpn in [0, 4, 8, 12] {
            write(&mut f, &mut n, lpn);
        }
        assert_eq!(gauge(&f, "ftl.cmt.clean_ratio"), 0.25);
        assert_eq!(gauge(&f, "ftl.cmt.clean_capacity_pages"), 1.0);
        assert_eq!(gauge(&f, "ftl.cmt.dirty_capacity"), 3.0);
        for lpn in [0, 4, 0, 4] {
            assert!(f.read(lpn, Cause::Host, &mut n).unwrap());
        }
        assert_eq!(gauge(&f, "ftl.cmt.clean_ratio"), 0.75);
        assert_eq!(gauge(&f, "ftl.cmt.clean_capacity_pages"), 3.0);
        assert_eq!(gauge(&f, "ftl.cmt.dirty_capacity"), 1.0);
        for lpn in [0, 4, 12] {
            assert!(f.read(lpn, Cause::Host, &mut n).unwrap());
        }
        expect(&f, &n, &[("hits", 2), ("misses", 9), ("map reads", 5)]);
        write(&mut f, &mut n, 1);
        expect(
            &f,
            &n,
            &[
                ("hits", 3),
                ("misses", 9),
                ("dirty_evictions", 4),
                ("read_evict_writes", 0),
                ("map programs", 4),
                ("map reads", 5),
            ],
        );
        assert_eq!(gauge(&f, "ftl.cmt.clean_ratio"), 0.25);
        assert_eq!(gauge(&f, "ftl.cmt.adapt_steps"), 3.0);
        f.check_cmt().unwrap();
    }

    /// `gc_map_update = "cache"`: GC never reads or writes a translation page to record its
    /// moves; the moved entries are cached dirty (the CMT may hold more dirty entries than the
    /// host left) and reach flash through dirty evictions, so every map program is an eviction's
    /// or a GC copy of a translation page. The map stays consistent through it all.
    #[test]
    fn gc_moves_cached_dirty() {
        let (mut f, mut n) = build(Params {
            cmt_entries: 4,
            entry_bytes: 1024,
            gc_map_update: "cache".into(),
            ..Params::default()
        });
        let latest = churn(&mut f, &mut n, 3, |_, _, _, _| {});
        assert!(counter(&f, "gc.victims") > 100);
        assert_eq!(counter(&f, "ftl.cmt.gc_tp_updates"), 0);
        let evictions = counter(&f, "ftl.cmt.dirty_evictions");
        let tp_copies = n.counters.programs[Cause::Map as usize] - evictions;
        // TP copies by GC: blocks holding translation pages were collected too.
        assert!(evictions > 100 && tp_copies < evictions);
        f.check_integrity(&latest).unwrap();
        f.check_cmt().unwrap();
        let bad = Params {
            granularity: "page".into(),
            gc_map_update: "cache".into(),
            ..Params::default()
        };
        let e = crate::params::Params::check(&bad, "ftl.dftl")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ftl.dftl.gc_map_update"), "{e}");
    }

    /// Many writes with GC: the map and the CMT stay consistent, and GC's map updates happen.
    #[test]
    fn integrity_through_gc() {
        for (granularity, partition, dirty) in [
            ("entry", "none", ""),
            ("page", "none", ""),
            ("page", "fixed", "page"),
            ("page", "fixed", "entry"),
            ("page", "adaptive", "page"),
            ("page", "adaptive", "entry"),
        ] {
            let (mut f, mut n) = if dirty.is_empty() {
                tiny(granularity, 4)
            } else {
                part_of(partition, dirty)
            };
            let latest = churn(&mut f, &mut n, 7, |f, n, v, x| {
                // Read-heavy stretches and write-only ones (the adaptive split moves both ways).
                let reads = if (v / 500) % 2 == 0 { 1 } else { 4 };
                for _ in 0..reads * ((v % 5 == 0) as u32) {
                    *x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    f.read((*x >> 20) % 16, Cause::Host, n).unwrap();
                }
                if v % 97 == 0 {
                    f.check_cmt().unwrap();
                }
            });
            assert!(counter(&f, "gc.victims") > 100, "{granularity}");
            if partition == "adaptive" {
                assert!(gauge(&f, "ftl.cmt.adapt_steps") > 100.0);
                assert_ne!(gauge(&f, "ftl.cmt.clean_ratio"), 0.5);
            }
            assert!(counter(&f, "ftl.cmt.gc_tp_updates") > 0, "{granularity}");
            f.check_integrity(&latest).unwrap();
        }
    }

    /// A translation page's generation only tells dirty units from clean ones: started just
    /// below the wrap, so that every TP wraps within the run, the run's map I/O, counters and
    /// dirty counts are those of a start at 0, for both granularities.
    #[test]
    fn generations_wrap_exactly() {
        for granularity in ["entry", "page"] {
            let run = |start: u32| {
                let (mut f, mut n) = tiny(granularity, 4);
                f.cmt.generation.fill(start);
                let latest = churn(&mut f, &mut n, 11, |f, n, v, _| {
                    f.read(v as u64 % 16, Cause::Host, n).unwrap();
                    if v % 101 == 0 {
                        f.check_cmt().unwrap();
                    }
                });
                f.check_integrity(&latest).unwrap();
                let dirty: Vec<u32> = (0..4).map(|tp| f.dirty_in(tp)).collect();
                let c = &n.counters;
                let nand = (c.reads, c.programs, c.erases);
                (f.counters(), dirty, nand, f.cmt.generation.clone())
            };
            let (counters, dirty, nand, _) = run(0);
            let (counters2, dirty2, nand2, generation) = run(CLEAN - 3);
            assert_eq!((counters, dirty), (counters2, dirty2), "{granularity}");
            assert_eq!(nand, nand2);
            assert!(generation.iter().all(|&g| g < 1000), "{generation:?}");
        }
    }

    /// A trim under the partitioned CMT unmaps the page and leaves the regions as they were.
    #[test]
    fn part_trim() {
        let (mut f, mut n) = part("page");
        write(&mut f, &mut n, 0);
        f.trim(0);
        f.trim(5);
        assert!(!f.is_mapped(0));
        assert_eq!(f.part.as_ref().unwrap().dirty_of(0), 1);
        f.check_cmt().unwrap();
    }

    #[test]
    fn take_bits_ascending_and_cleared() {
        let mut words = [0b1010u64, 0, 1 << 63];
        let mut out = vec![7];
        take_bits(&mut words, 2, &mut out);
        assert_eq!(out, [7, 129, 131, 319]);
        assert_eq!(words, [0, 0, 0]);
    }

    /// Timed mode: the operations logged since logging began, as (kind, cause, how far back
    /// the one each waits for is).
    fn logged(n: &Nand) -> Vec<(OpKind, Cause, u16)> {
        n.log().iter().map(|o| (o.kind, o.cause, o.after)).collect()
    }
    use crate::nand::OpKind::{self, Program as P, Read as R};

    /// A read miss whose victim is a dirty entry: the victim's TP read, its write-back, the map
    /// read into the freed slot, the data read, each waiting for the one before. A later hit
    /// reads at once.
    #[test]
    fn a_read_miss_chains_write_back_map_read_and_data_read() {
        let (mut f, mut n) = tiny("entry", 1);
        // 5*, then 0* (TP 1 written), 8* (TP 0 written), 1* (TP 2 written, TP 0 read).
        for lpn in [5, 0, 8, 1] {
            write(&mut f, &mut n, lpn);
        }
        n.set_logging(true);
        f.read(5, Cause::Host, &mut n).unwrap();
        let (map, host) = (Cause::Map, Cause::Host);
        assert_eq!(
            logged(&n),
            [(R, map, 0), (P, map, 1), (R, map, 1), (R, host, 1)]
        );
        n.clear_log();
        f.read(5, Cause::Host, &mut n).unwrap();
        assert_eq!(logged(&n), [(R, host, 0)]);
    }

    /// Whole TPs cached: a hit on a TP loaded in the same batch waits for that load; in a later
    /// batch it does not. A dirty TP's write-back needs no read, the load into its slot waits
    /// for it.
    #[test]
    fn a_hit_on_a_tp_in_flight_waits_for_its_load() {
        let (mut f, mut n) = tiny("page", 4);
        // TP 0* (0, 1, 2), then TP 1* (TP 0 written), TP 2* (TP 1 written).
        for lpn in [0, 1, 2, 4, 8] {
            write(&mut f, &mut n, lpn);
        }
        n.set_logging(true);
        f.read(1, Cause::Host, &mut n).unwrap();
        f.read(2, Cause::Host, &mut n).unwrap();
        let (map, host) = (Cause::Map, Cause::Host);
        assert_eq!(
            logged(&n),
            [(P, map, 0), (R, map, 1), (R, host, 1), (R, host, 2)]
        );
        n.clear_log();
        f.read(2, Cause::Host, &mut n).unwrap();
        assert_eq!(logged(&n), [(R, host, 0)]);
    }

    /// PTSD: a read miss loads into the clean region (no write-back) and its data read waits
    /// for the load, as does a clean hit in the same batch; a write miss writes the dirty
    /// region's victim back first, and its TP read waits for that (the data program, issued
    /// first, waits for nothing).
    #[test]
    fn partitioned_reads_and_writes_chain_their_map_io() {
        let (mut f, mut n) = part("page");
        for lpn in [0, 1, 4, 8] {
            write(&mut f, &mut n, lpn);
        }
        n.set_logging(true);
        f.read(1, Cause::Host, &mut n).unwrap();
        f.read(0, Cause::Host, &mut n).unwrap();
        let (map, host) = (Cause::Map, Cause::Host);
        assert_eq!(logged(&n), [(R, map, 0), (R, host, 1), (R, host, 2)]);
        n.clear_log();
        write(&mut f, &mut n, 5);
        assert_eq!(logged(&n), [(P, host, 0), (P, map, 0), (R, map, 1)]);
    }

    #[test]
    fn bad_params_name_fields() {
        use crate::params::Params as _;
        let e = Params {
            granularity: "block".into(),
            ..Params::default()
        }
        .check("ftl.dftl")
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("ftl.dftl.granularity") && e.contains("block"),
            "{e}"
        );
        let e = Params {
            cmt_entries: 10,
            cmt_bytes: 40,
            ..Params::default()
        }
        .check("ftl.dftl")
        .unwrap_err()
        .to_string();
        assert!(e.contains("ftl.dftl.cmt_entries"), "{e}");
        let e = Params {
            cmt_fraction: 0.0,
            ..Params::default()
        }
        .check("ftl.dftl")
        .unwrap_err()
        .to_string();
        assert!(e.contains("ftl.dftl.cmt_fraction"), "{e}");
    }
}
