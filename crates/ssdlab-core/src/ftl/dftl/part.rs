//! PTSD's partitioned CMT (seed 004 §III-A, §III-C; ALGORITHMS.md §4.2), `ftl.dftl.partition =
//! "fixed"`: the CMT's memory is split into a clean region of translation pages (LRU) and a dirty
//! region (`clean_ratio` : 1 − `clean_ratio`, 50:50 in the seed).
//!
//! * Read: a hit in either region serves it. A miss evicts the clean region's LRU page (never a
//!   write) and loads the TP there: a read costs at most one map read and the data read.
//! * Write, `dirty_cache = "page"` (PART): a dirty-region hit refreshes the page; a clean-region hit
//!   moves the page to the dirty region; a miss reads the TP into the dirty region. A full dirty
//!   region first writes its LRU page back (no read: the whole page is cached).
//! * Write, `dirty_cache = "entry"` (WRITEOPT): the updated entry is appended to the dirty region
//!   without reading its TP. A full dirty region writes back the TP chosen by `writeback`
//!   (`greedy`: the one with the most dirty entries; `lru`: the least recently updated) with all
//!   its dirty entries (batch update): read the TP unless its clean copy is cached, write it.
//! * A write hits when its entry's mapping is cached (a dirty entry, or its TP in either region).
//!
//! `partition = "adaptive"` (the seed's future work, §III-D: the split should follow the workload)
//! moves the split with a controller on the observed map costs. Every `adapt_every` host accesses
//! it prices the window's map I/O caused by reads (C_r = map reads × `nand.read_us`) and by writes
//! (C_w = map reads × `nand.read_us` + map programs × `nand.program_us`), takes the clean region's
//! target share t = C_r / (C_r + C_w) clamped to [`adapt_min`, 1 − `adapt_min`], and moves the
//! share `adapt_gain` of the way to it (a window without map I/O leaves it). The regions follow:
//! the clean region shrinks at once (dropping clean TPs costs nothing); the dirty region shrinks
//! lazily, its surplus written back by the next writes that miss, and until then the clean
//! region only grows into memory the dirty region has released, so the CMT never holds more than
//! its memory (give or take one page: each region keeps at least one unit).

use super::{Cmt, DftlFtl};
use crate::error::{Result, SimError};
use crate::list::{Links, List, NIL};
use crate::nand::{Mark, Nand};
use crate::units::Lpn;

/// How a full entry-level dirty region picks the TP to write back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writeback {
    Greedy,
    Lru,
}

impl Writeback {
    pub fn parse(v: &str, table: &str) -> Result<Self> {
        match v {
            "greedy" => Ok(Writeback::Greedy),
            "lru" => Ok(Writeback::Lru),
            _ => Err(crate::error::unknown_value(
                format!("{table}.writeback"),
                v,
                &["greedy", "lru"],
            )),
        }
    }
}

/// The dirty region of entries, grouped by TP.
pub(super) struct DirtyEntries {
    capacity: u64,
    count: u64,
    present: Vec<bool>,
    per_tp: Vec<u32>,
    writeback: Writeback,
    links: Links,
    /// Greedy: TPs by dirty count (bucket c holds the TPs with c dirty entries, most recently
    /// raised first). LRU: bucket 0 holds every TP with dirty entries, most recently updated first.
    buckets: Vec<List>,
    max: usize,
}

impl DirtyEntries {
    fn new(capacity: u64, n: u64, tps: u64, e: u64, writeback: Writeback) -> Self {
        DirtyEntries {
            capacity: capacity.max(1),
            count: 0,
            present: vec![false; n as usize],
            per_tp: vec![0; tps as usize],
            writeback,
            links: Links::default(),
            buckets: vec![List::default(); e as usize + 1],
            max: 0,
        }
    }

    fn bucket_of(&self, tp: u32) -> usize {
        match self.writeback {
            Writeback::Greedy => self.per_tp[tp as usize] as usize,
            Writeback::Lru => 0,
        }
    }

    /// Add or refresh the dirty entry of `lpn` (in TP `tp`).
    fn add(&mut self, lpn: Lpn, tp: u32) {
        let had = self.per_tp[tp as usize];
        if had > 0 {
            let b = self.bucket_of(tp);
            self.links.remove(&mut self.buckets[b], tp);
        }
        if !self.present[lpn as usize] {
            self.present[lpn as usize] = true;
            self.per_tp[tp as usize] += 1;
            self.count += 1;
        }
        let b = self.bucket_of(tp);
        self.links.push_front(&mut self.buckets[b], tp);
        self.max = self.max.max(b);
    }

    /// The TP to write back next.
    fn victim(&mut self) -> Option<u32> {
        while self.buckets[self.max].len == 0 {
            if self.max == 0 {
                return None;
            }
            self.max -= 1;
        }
        Some(self.buckets[self.max].tail)
    }

    /// Drop the dirty entries of `tp` (LPNs `first..first + e`); returns how many there were.
    fn take(&mut self, tp: u32, first: Lpn, e: u64) -> u32 {
        let n = self.per_tp[tp as usize];
        if n == 0 {
            return 0;
        }
        let b = self.bucket_of(tp);
        self.links.remove(&mut self.buckets[b], tp);
        let end = (first + e).min(self.present.len() as u64);
        for p in &mut self.present[first as usize..end as usize] {
            *p = false;
        }
        self.per_tp[tp as usize] = 0;
        self.count -= n as u64;
        n
    }
}

pub(super) enum Dirty {
    Pages(Cmt),
    Entries(DirtyEntries),
}

pub(super) struct Part {
    clean: Cmt,
    dirty: Dirty,
    /// The CMT's memory in entries, and entries per TP.
    total: u64,
    e: u64,
    adapt: Option<Adapt>,
}

/// The adaptive split's controller state (module docs).
pub(super) struct Adapt {
    every: u64,
    gain: f64,
    min: f64,
    /// The clean region's share of the memory now.
    pub(super) ratio: f64,
    read_us: f64,
    program_us: f64,
    accesses: u64,
    /// This window's map I/O: reads caused by host reads, reads and programs by host writes.
    read_map_reads: u64,
    write_map_reads: u64,
    write_map_programs: u64,
    pub(super) steps: u64,
}

impl Adapt {
    pub(super) fn new(p: &super::Params, read_us: f64, program_us: f64) -> Adapt {
        Adapt {
            every: p.adapt_every,
            gain: p.adapt_gain,
            min: p.adapt_min,
            ratio: p.clean_ratio,
            read_us,
            program_us,
            accesses: 0,
            read_map_reads: 0,
            write_map_reads: 0,
            write_map_programs: 0,
            steps: 0,
        }
    }

    /// Count one access's map I/O; returns the new clean share when a step is due and moves it.
    fn observe(&mut self, write: bool, map_reads: u64, map_programs: u64) -> Option<f64> {
        if write {
            self.write_map_reads += map_reads;
            self.write_map_programs += map_programs;
        } else {
            self.read_map_reads += map_reads;
        }
        self.accesses += 1;
        if self.accesses < self.every {
            return None;
        }
        let c_r = self.read_map_reads as f64 * self.read_us;
        let c_w = self.write_map_reads as f64 * self.read_us
            + self.write_map_programs as f64 * self.program_us;
        self.accesses = 0;
        self.read_map_reads = 0;
        self.write_map_reads = 0;
        self.write_map_programs = 0;
        self.steps += 1;
        if c_r + c_w <= 0.0 {
            return None;
        }
        let target = (c_r / (c_r + c_w)).clamp(self.min, 1.0 - self.min);
        self.ratio += self.gain * (target - self.ratio);
        Some(self.ratio)
    }
}

impl Part {
    /// `capacity` entries of CMT memory: `clean_ratio` of it for clean TPs, the rest for dirty
    /// TPs or dirty entries (at least one unit each).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        capacity: u64,
        clean_ratio: f64,
        entries: bool,
        writeback: Writeback,
        n: u64,
        tps: u64,
        e: u64,
        adapt: Option<Adapt>,
    ) -> Result<Self> {
        // Both regions may grow to every TP (the adaptive split moves their capacities).
        let dirty = if entries {
            Dirty::Entries(DirtyEntries::new(1, n, tps, e, writeback))
        } else {
            Dirty::Pages(Cmt::new(tps, tps, tps, 1)?)
        };
        let mut part = Part {
            clean: Cmt::new(tps, tps, tps, 1)?,
            dirty,
            total: capacity,
            e,
            adapt,
        };
        part.split(clean_ratio);
        Ok(part)
    }

    /// Give the clean region `clean_ratio` of the memory (whole TPs) and the dirty region the
    /// rest, at least one unit each. The clean region drops its surplus now; the dirty region's
    /// is written back by later writes.
    fn split(&mut self, clean_ratio: f64) {
        let clean_entries = (clean_ratio * self.total as f64).round() as u64;
        let clean_pages = (clean_entries / self.e).max(1);
        let dirty_entries = self.total.saturating_sub(clean_pages * self.e);
        self.clean.capacity = clean_pages.min(self.clean.index.len() as u64) as u32;
        while self.clean.lru.len > self.clean.capacity {
            self.clean.remove(self.clean.lru.tail);
        }
        match &mut self.dirty {
            Dirty::Pages(c) => {
                c.capacity = (dirty_entries / self.e).max(1).min(c.index.len() as u64) as u32
            }
            Dirty::Entries(d) => d.capacity = dirty_entries.max(1),
        }
    }

    /// Entries the dirty region holds now.
    fn dirty_entries(&self) -> u64 {
        match &self.dirty {
            Dirty::Pages(c) => c.lru.len as u64 * self.e,
            Dirty::Entries(d) => d.count,
        }
    }

    /// Is the clean region full: at its capacity, or at the memory the dirty region leaves?
    fn clean_full(&self) -> bool {
        let left = (self.total.saturating_sub(self.dirty_entries()) / self.e).max(1);
        self.clean.lru.len as u64 >= left.min(self.clean.capacity as u64)
    }

    /// The adaptive controller's clean share and steps, if adaptive.
    pub(super) fn adapt(&self) -> Option<&Adapt> {
        self.adapt.as_ref()
    }

    /// Units each region holds at most: (clean TPs, dirty TPs or entries).
    pub(super) fn capacities(&self) -> (u64, u64) {
        let dirty = match &self.dirty {
            Dirty::Pages(c) => c.capacity as u64,
            Dirty::Entries(d) => d.capacity,
        };
        (self.clean.capacity as u64, dirty)
    }

    /// Is GC's move of `lpn` recorded in the cache already (its entry or TP is dirty)?
    pub(super) fn holds_dirty(&self, lpn: Lpn, tp: u32) -> bool {
        match &self.dirty {
            Dirty::Pages(c) => c.slot(tp).is_some(),
            Dirty::Entries(d) => d.present[lpn as usize],
        }
    }

    /// Dirty entries of `tp` in the dirty region (page mode: 1 if its page is there).
    pub(super) fn dirty_of(&self, tp: u32) -> u64 {
        match &self.dirty {
            Dirty::Pages(c) => c.slot(tp).is_some() as u64,
            Dirty::Entries(d) => d.per_tp[tp as usize] as u64,
        }
    }

    /// A write of `tp` (LPNs `first..first + e`) carries its dirty entries: drop them from the
    /// dirty region; returns how many. (Page mode: a dirty TP is never written this way.)
    pub(super) fn take_dirty(&mut self, tp: u32, first: Lpn, e: u64) -> u64 {
        match &mut self.dirty {
            Dirty::Pages(_) => 0,
            Dirty::Entries(d) => d.take(tp, first, e) as u64,
        }
    }

    /// Is a clean copy of `tp` cached (a write-back then needs no read)?
    pub(super) fn has_clean(&self, tp: u32) -> bool {
        self.clean.slot(tp).is_some()
    }

    pub(super) fn check(&self) -> Result<()> {
        super::check_lru(&self.clean, "clean region")?;
        // The memory bound, give or take the clean region's one page.
        let held = self.clean.lru.len as u64 * self.e + self.dirty_entries();
        if held > self.total + self.e {
            return Err(SimError::Integrity(format!(
                "CMT regions hold {held} entries, over the memory of {} (+ one page)",
                self.total
            )));
        }
        match &self.dirty {
            Dirty::Pages(c) => super::check_lru(c, "dirty region"),
            Dirty::Entries(d) => {
                let listed: u64 = d.per_tp.iter().map(|&c| c as u64).sum();
                let present = d.present.iter().filter(|&&p| p).count() as u64;
                if listed != d.count || present != d.count || d.count > d.capacity {
                    return Err(SimError::Integrity(format!(
                        "CMT dirty region: {} entries counted, {listed} by TP, {present} present, capacity {}",
                        d.count, d.capacity
                    )));
                }
                let mut in_lists = 0u64;
                for list in &d.buckets {
                    let mut t = list.head;
                    while t != NIL {
                        in_lists += d.per_tp[t as usize] as u64;
                        t = d.links.next(t);
                    }
                }
                if in_lists != d.count {
                    return Err(SimError::Integrity(format!(
                        "CMT dirty region: the victim lists hold {in_lists} of {} entries",
                        d.count
                    )));
                }
                Ok(())
            }
        }
    }
}

impl DftlFtl {
    /// A host access through the partitioned CMT: the map read that loaded the entry (NONE:
    /// none), as [`DftlFtl::access`].
    pub(super) fn part_access(&mut self, lpn: Lpn, write: bool, nand: &mut Nand) -> Result<Mark> {
        let tp = self.tp_of(lpn);
        let mut part = self.part.take().expect("partitioned CMT");
        let before = (self.map_reads, self.map_programs);
        let r = if write {
            self.part_write(&mut part, lpn, tp, nand)
        } else {
            Ok(self.part_read(&mut part, lpn, tp, nand))
        };
        if let Some(a) = &mut part.adapt {
            let (reads, programs) = (self.map_reads - before.0, self.map_programs - before.1);
            if let Some(ratio) = a.observe(write, reads, programs) {
                part.split(ratio);
            }
        }
        self.part = Some(part);
        r
    }

    fn part_read(&mut self, part: &mut Part, lpn: Lpn, tp: u32, nand: &mut Nand) -> Mark {
        // A cached TP's entries came with its load (in flight if of this batch); a dirty
        // entry with the write that set it.
        if let Some(s) = part.clean.slot(tp) {
            self.hits += 1;
            part.clean.touch(s);
            return self.tp_read[tp as usize];
        }
        let dirty_hit = match &mut part.dirty {
            Dirty::Pages(c) => c
                .slot(tp)
                .map(|s| c.touch(s))
                .map(|_| self.tp_read[tp as usize]),
            Dirty::Entries(d) => d.present[lpn as usize].then_some(Mark::NONE),
        };
        if let Some(loaded) = dirty_hit {
            self.hits += 1;
            return loaded;
        }
        self.misses += 1;
        // A clean victim: dropped, nothing to wait for.
        while part.clean_full() {
            part.clean.remove(part.clean.lru.tail);
        }
        let loaded = self.read_tp(tp, Mark::NONE, nand);
        part.clean.insert(tp);
        loaded
    }

    fn part_write(&mut self, part: &mut Part, lpn: Lpn, tp: u32, nand: &mut Nand) -> Result<Mark> {
        let clean = part.clean.slot(tp);
        match &mut part.dirty {
            Dirty::Pages(dirty) => {
                if let Some(s) = dirty.slot(tp) {
                    self.hits += 1;
                    dirty.touch(s);
                    return Ok(Mark::NONE);
                }
                match clean {
                    Some(s) => {
                        self.hits += 1;
                        part.clean.remove(s);
                    }
                    None => self.misses += 1,
                }
                // The read into the freed slot waits for the write-back (of a page cached
                // whole: no read first).
                let mut freed = Mark::NONE;
                while dirty.full() {
                    let victim = dirty.lru.tail;
                    let key = dirty.key(victim);
                    dirty.remove(victim);
                    self.dirty_evictions += 1;
                    self.batched_entries += 1;
                    freed = self.write_tp(key, nand)?;
                }
                let loaded = if clean.is_none() {
                    self.read_tp(tp, freed, nand)
                } else {
                    Mark::NONE
                };
                dirty.insert(tp);
                Ok(loaded)
            }
            Dirty::Entries(d) => {
                if d.present[lpn as usize] {
                    self.hits += 1;
                } else if let Some(s) = clean {
                    self.hits += 1;
                    part.clean.touch(s);
                } else {
                    self.misses += 1;
                }
                while !d.present[lpn as usize] && d.count >= d.capacity {
                    let victim = d.victim().expect("a full dirty region has a victim");
                    let first = victim as u64 * self.e.get();
                    self.dirty_evictions += 1;
                    self.batched_entries += d.take(victim, first, self.e.get()) as u64;
                    if part.clean.slot(victim).is_none() {
                        self.read_tp(victim, Mark::NONE, nand);
                    }
                    self.write_tp(victim, nand)?;
                }
                // The entry is appended without reading its TP.
                d.add(lpn, tp);
                Ok(Mark::NONE)
            }
        }
    }
}
