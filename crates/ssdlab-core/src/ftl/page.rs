//! Page-mapped FTL: L2P / P2L arrays, one or several host write frontiers (streams), an optional
//! separate GC frontier, GC triggered by a free-block threshold with a pluggable victim policy,
//! and trim.
//!
//! Memory: 4 bytes of L2P per logical page + 4 bytes of P2L per physical page, plus ~40 bytes per
//! block. Validity is implied by P2L (an invalidated page has P2L = NONE), so no bitmap is kept.

use super::fdp::{self, Fdp};
use super::{Ftl, FtlView, Shape, Unit, UnitPage};
use crate::error::{Result, SimError};
use crate::gc::{Stalls, VictimPolicy, VictimSelector};
use crate::nand::{Cause, Mark, Nand};
use crate::placement::Classifier;
use crate::units::{alloc_vec, alloc_vec_if, Divisor, Geometry, Lbn, Lpn};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;
/// How many pages ahead GC prefetches the L2P entries of the pages it will move.
const GC_AHEAD: u32 = 8;

pub struct PageFtl {
    /// Pages of a unit of allocation and GC: a block, or with FDP a reclaim unit of several.
    ppb: u32,
    /// Pages of a logical block (a flush unit's LBN), and of a physical block.
    lppb: u32,
    block_of: Divisor,
    logical_pages: u64,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    valid: Vec<u32>,
    write_ptr: Vec<u32>,
    /// Free units of each reclaim group (one group without FDP).
    free: Vec<VecDeque<u32>>,
    /// Open unit of each frontier (NONE = none yet): the host streams (with FDP, one per
    /// placement identifier), then GC's.
    open: Vec<u32>,
    /// Host frontiers: the first `hosts` of `open`.
    hosts: usize,
    /// Where GC copies go without FDP or placement: its own frontier (`hosts`) or stream 0.
    gc_slot: usize,
    /// Victim selection of each reclaim group (each over every unit, holding its group's).
    selector: Vec<VictimSelector>,
    gc_threshold: u64,
    in_gc: bool,
    /// Logical time: host pages programmed so far (cost-benefit age).
    now: u64,
    /// Per-PPN version of the stored copy; empty unless integrity checking is on.
    oob_version: Vec<u32>,
    /// Per-LPN latest version this FTL received; empty unless integrity checking is on.
    expected: Vec<u32>,
    check: bool,
    gc_counts: crate::gc::Counts,
    /// LPNs from here on are translation pages of a demand-based FTL (`dftl.rs`): written at
    /// host frontier `map_slot` with cause `map`, GC copies included (u64::MAX: none).
    map_from: u64,
    map_slot: usize,
    /// Data LPNs GC moved since the last [`PageFtl::take_moved`] (kept only with translation pages).
    moved: Vec<u32>,
    /// `[placement]` other than none: it picks each page's frontier (host stream slots are its
    /// classes; GC copies go where it says), with each block's class and opening time.
    placement: Option<Placed>,
    /// `[fdp]` on: reclaim groups, handles and their statistics (`fdp.rs`).
    fdp: Option<Box<Fdp>>,
}

struct Placed {
    classifier: Box<dyn Classifier>,
    class: Vec<u32>,
    opened: Vec<u64>,
}

crate::params! {
    /// The page FTL's parameters (`[ftl.page]`).
    pub struct Params {
        /// GC runs when free blocks fall below this (≥ 2); 0 = automatic (open frontiers + 2).
        gc_free_blocks: u64 = 0,
        /// Host write frontiers (open blocks), 1..=64. Host pages go to frontier `hint % streams`.
        streams: u32 = 1,
        /// GC writes into its own frontier (true) or into the host frontier of stream 0 (false).
        separate_gc_frontier: bool = true,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        if self.gc_free_blocks == 1 {
            return Err(SimError::config(
                format!("{table}.gc_free_blocks"),
                "must be 0 (automatic) or ≥ 2: GC needs a free block to copy valid pages into",
            ));
        }
        if self.streams == 0 || self.streams > 64 {
            return Err(SimError::config(
                format!("{table}.streams"),
                "must be in 1..=64",
            ));
        }
        Ok(())
    }
}

impl Params {
    /// Open blocks: one per stream, plus GC's own.
    pub fn frontiers(&self) -> u64 {
        self.streams as u64 + self.separate_gc_frontier as u64
    }

    /// `gc_free_blocks` with 0 (automatic) replaced by the value used.
    pub fn gc_threshold(&self) -> u64 {
        if self.gc_free_blocks == 0 {
            self.frontiers() + 2
        } else {
            self.gc_free_blocks
        }
    }

    /// Physical blocks needed beyond the logical ones: the GC reserve, the open blocks and one.
    pub fn spare_blocks(&self) -> u64 {
        self.gc_threshold() + self.frontiers() + 1
    }
}

impl PageFtl {
    pub fn new(
        geo: &Geometry,
        gc: VictimPolicy,
        gc_free_blocks: u64,
        streams: u32,
        separate_gc: bool,
        check: bool,
    ) -> Result<Self> {
        let params = Params {
            gc_free_blocks,
            streams,
            separate_gc_frontier: separate_gc,
        };
        let (frontiers, threshold) = (params.frontiers(), params.gc_threshold());
        // GC must always find a block with an invalid page: keep more physical blocks than the
        // logical data can fill plus the open and reserved blocks.
        let need = geo.logical_blocks() + params.spare_blocks();
        let blocks = geo.physical_blocks;
        if blocks < need {
            let min_op = need as f64 / geo.logical_blocks() as f64 - 1.0;
            return Err(SimError::config(
                "device.op",
                format!(
                    "{blocks} physical blocks cannot hold {} logical blocks plus {threshold} GC-reserve and \
                     {frontiers} open blocks: this device needs device.op ≥ {min_op:.3} (or a larger \
                     device.logical_bytes, or fewer ftl.page.gc_free_blocks / ftl.page.streams)",
                    geo.logical_blocks()
                ),
            ));
        }
        let slots = frontiers as usize;
        let gc_slot = if separate_gc { streams as usize } else { 0 };
        Self::build(
            geo,
            gc,
            threshold,
            streams as usize,
            slots,
            gc_slot,
            1,
            check,
        )
    }

    /// The page FTL as an FDP device (`[fdp]`): its units are reclaim units, its host
    /// frontiers the placement identifiers, GC per reclaim group into the handle type's units.
    pub fn new_fdp(
        geo: &Geometry,
        gc: VictimPolicy,
        gc_free_blocks: u64,
        p: &fdp::Params,
        check: bool,
    ) -> Result<Self> {
        let k = p.blocks_per_ru(geo.block_bytes())?;
        let groups = p.reclaim_groups as u64;
        let per_group = geo.physical_blocks / k / groups;
        let threshold = p.gc_threshold(gc_free_blocks);
        let need = p.units_needed(geo.logical_blocks(), k, threshold);
        if per_group * groups < need {
            return Err(SimError::config(
                "device.op",
                format!(
                    "{} physical blocks make {} reclaim units of {k} block(s) in {groups} group(s); FDP needs {need}: \
                     the logical data ({} units) and, in every group, {threshold} GC-reserve, {} open and one more \
                     (raise device.op or device.logical_bytes, or use fewer fdp.handles, a smaller fdp.ru_bytes or \
                     fewer fdp.reclaim_groups)",
                    geo.physical_blocks,
                    per_group * groups,
                    geo.logical_pages.div_ceil(geo.pages_per_block * k),
                    p.frontiers() / groups
                ),
            ));
        }
        let units = Geometry {
            pages_per_block: geo.pages_per_block * k,
            physical_blocks: per_group * groups,
            ..*geo
        };
        let ids = p.identifiers() as usize;
        let mut f = Self::build(
            &units,
            gc,
            threshold,
            ids,
            p.frontiers() as usize,
            ids,
            groups as u32,
            check,
        )?;
        f.lppb = geo.pages_per_block as u32;
        f.fdp = Some(Box::new(Fdp::new(
            p,
            units.physical_blocks as u32,
            k as u32,
            units.pages_per_block,
            geo.page_bytes,
        )));
        Ok(f)
    }

    /// `groups` reclaim groups of equal runs of units; `slots` frontiers, the first `hosts` the
    /// host's, GC's at `gc_slot` unless FDP or placement says.
    #[allow(clippy::too_many_arguments)]
    fn build(
        geo: &Geometry,
        gc: VictimPolicy,
        threshold: u64,
        hosts: usize,
        slots: usize,
        gc_slot: usize,
        groups: u32,
        check: bool,
    ) -> Result<Self> {
        let ppb = geo.pages_per_block as u32;
        let blocks = geo.physical_blocks;
        let phys_pages = geo.physical_pages();
        super::check_ppn_range(phys_pages, NONE, "the page FTL")?;
        let per_group = (blocks / groups as u64) as u32;
        let free = (0..groups)
            .map(|g| (g * per_group..(g + 1) * per_group).collect())
            .collect();
        Ok(PageFtl {
            ppb,
            lppb: ppb,
            block_of: Divisor::new(ppb as u64),
            logical_pages: geo.logical_pages,
            l2p: alloc_vec(geo.logical_pages, NONE, "the L2P table")?,
            p2l: alloc_vec(phys_pages, NONE, "the P2L table")?,
            valid: vec![0; blocks as usize],
            write_ptr: vec![0; blocks as usize],
            free,
            open: vec![NONE; slots],
            hosts,
            gc_slot,
            selector: (0..groups)
                .map(|_| VictimSelector::new(gc, blocks as usize, ppb))
                .collect(),
            gc_threshold: threshold,
            in_gc: false,
            now: 0,
            oob_version: alloc_vec_if(check, phys_pages, 0, "integrity versions")?,
            expected: alloc_vec_if(check, geo.logical_pages, 0, "integrity versions")?,
            check,
            gc_counts: crate::gc::Counts::default(),
            map_from: u64::MAX,
            map_slot: 0,
            moved: Vec::new(),
            placement: None,
            fdp: None,
        })
    }

    /// Whether [`PageFtl::try_clone`] copies it: not with a placement classifier, whose state
    /// is not copied.
    pub fn copyable(&self) -> bool {
        self.placement.is_none()
    }

    /// A copy of this FTL's whole state (a preconditioned device reused by later runs,
    /// `engine/precondition.rs`); None unless [`PageFtl::copyable`].
    pub fn try_clone(&self) -> Option<PageFtl> {
        if !self.copyable() {
            return None;
        }
        Some(PageFtl {
            ppb: self.ppb,
            lppb: self.lppb,
            block_of: self.block_of,
            logical_pages: self.logical_pages,
            l2p: self.l2p.clone(),
            p2l: self.p2l.clone(),
            valid: self.valid.clone(),
            write_ptr: self.write_ptr.clone(),
            free: self.free.clone(),
            open: self.open.clone(),
            hosts: self.hosts,
            gc_slot: self.gc_slot,
            selector: self.selector.clone(),
            gc_threshold: self.gc_threshold,
            in_gc: self.in_gc,
            now: self.now,
            oob_version: self.oob_version.clone(),
            expected: self.expected.clone(),
            check: self.check,
            gc_counts: self.gc_counts,
            map_from: self.map_from,
            map_slot: self.map_slot,
            moved: self.moved.clone(),
            placement: None,
            fdp: self.fdp.clone(),
        })
    }

    /// Place pages by `classifier`: one host frontier per class (the FTL must have been built
    /// with that many streams and no separate GC frontier), GC copies where it says.
    pub fn with_placement(mut self, classifier: Box<dyn Classifier>) -> Result<Self> {
        let classes = classifier.classes() as usize;
        if let Some(f) = &self.fdp {
            // The classes are placement identifiers; GC stays the device's.
            if classes > f.identifiers() {
                return Err(SimError::config(
                    "placement.kind",
                    format!(
                        "placement writes to {classes} classes, but [fdp] offers {} placement identifiers \
                         (reclaim_groups × handles)",
                        f.identifiers()
                    ),
                ));
            }
        } else if classes != self.hosts || self.gc_slot != 0 {
            return Err(SimError::config(
                "ftl.page.streams",
                format!(
                    "placement writes to {classes} classes: the page FTL needs as many streams and no separate GC frontier"
                ),
            ));
        }
        let blocks = self.valid.len();
        self.placement = Some(Placed {
            classifier,
            class: vec![0; blocks],
            opened: vec![0; blocks],
        });
        Ok(self)
    }

    /// LPNs from `map_from` on hold translation pages, written at host frontier `map_slot`
    /// (a translation block pool of their own); GC reports the data LPNs it moves.
    pub(crate) fn set_translation(&mut self, map_from: u64, map_slot: usize) {
        self.map_from = map_from;
        self.map_slot = map_slot;
    }

    /// GC moved no data page since the last [`PageFtl::take_moved`].
    #[inline(always)]
    pub(crate) fn nothing_moved(&self) -> bool {
        self.moved.is_empty()
    }

    /// The data LPNs GC moved since the last call (their mappings changed).
    pub(crate) fn take_moved(&mut self, into: &mut Vec<u32>) {
        into.clear();
        std::mem::swap(into, &mut self.moved);
    }

    /// Program translation page `lpn` (≥ `map_from`) at the translation frontier.
    pub(crate) fn write_translation(
        &mut self,
        lpn: Lpn,
        version: u32,
        after: Mark,
        nand: &mut Nand,
    ) -> Result<()> {
        debug_assert!(lpn >= self.map_from && lpn < self.logical_pages);
        self.now += 1;
        self.program(lpn, version, Cause::Map, self.map_slot, false, after, nand)?;
        if self.check {
            self.expected[lpn as usize] = version;
        }
        Ok(())
    }

    /// The reclaim group of unit `b` (0 without FDP).
    #[inline(always)]
    fn group_index(&self, b: u32) -> usize {
        if self.selector.len() == 1 {
            return 0;
        }
        self.fdp.as_ref().map_or(0, |f| f.group_of_ru(b))
    }

    /// The victim selector of unit `b`'s reclaim group.
    #[inline(always)]
    fn selector_of(&mut self, b: u32) -> &mut VictimSelector {
        let g = self.group_index(b);
        &mut self.selector[g]
    }

    #[inline(always)]
    fn invalidate(&mut self, ppn: u32) {
        let b = self.block_of.quot(ppn as u64) as u32;
        self.p2l[ppn as usize] = NONE;
        self.valid[b as usize] -= 1;
        let v = self.valid[b as usize];
        self.selector_of(b).on_invalidate(b, v);
    }

    fn seal(&mut self, b: u32) {
        let (v, now) = (self.valid[b as usize], self.now);
        self.selector_of(b).on_seal(b, v, now);
        if let Some(p) = &mut self.placement {
            p.classifier.sealed(p.class[b as usize], self.now);
        }
    }

    /// Next free PPN of frontier `slot` (an index of `open`: a host stream or GC's).
    /// The common case (the open block has room) is inline; see [`PageFtl::next_ppn_slow`].
    #[inline(always)]
    fn next_ppn(&mut self, slot: usize, nand: &mut Nand) -> Result<u32> {
        let cur = self.open[slot];
        if cur != NONE {
            let wp = &mut self.write_ptr[cur as usize];
            if *wp < self.ppb {
                let off = *wp;
                *wp += 1;
                return Ok(cur * self.ppb + off);
            }
        }
        self.next_ppn_slow(slot, nand)
    }

    /// A full frontier is sealed; a new block is taken from the free pool, running GC first when
    /// the pool is below the threshold (never from inside GC, which may itself open this slot).
    #[inline(never)]
    fn next_ppn_slow(&mut self, slot: usize, nand: &mut Nand) -> Result<u32> {
        let group = self.fdp.as_ref().map_or(0, |f| f.group_of_slot(slot));
        loop {
            let cur = self.open[slot];
            if cur != NONE && self.write_ptr[cur as usize] < self.ppb {
                let off = self.write_ptr[cur as usize];
                self.write_ptr[cur as usize] += 1;
                return Ok(cur * self.ppb + off);
            }
            if cur != NONE {
                self.seal(cur);
                self.open[slot] = NONE;
            }
            if !self.in_gc && (self.free[group].len() as u64) < self.gc_threshold {
                self.collect(group, nand)?;
                continue;
            }
            let nb = self.free[group].pop_front().ok_or_else(|| {
                SimError::Invalid(match self.fdp {
                    Some(_) => format!(
                        "reclaim group {group} ran out of free reclaim units (raise device.op)"
                    ),
                    None => "page FTL ran out of free blocks (raise device.op)".into(),
                })
            })?;
            if let Some(p) = &mut self.placement {
                p.class[nb as usize] = slot as u32;
                p.opened[nb as usize] = self.now;
            }
            if let Some(f) = &mut self.fdp {
                f.opened(nb, slot);
            }
            self.open[slot] = nb;
        }
    }

    /// Program `lpn` at the next page of frontier `slot`, once operation `after` is done (the
    /// read of its data, if any). `gc_copy`: a copy out of a GC victim, whose old page the
    /// caller invalidates (it knows it, which spares a random L2P load); else the old copy is
    /// looked up and invalidated here.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn program(
        &mut self,
        lpn: Lpn,
        version: u32,
        cause: Cause,
        slot: usize,
        gc_copy: bool,
        after: Mark,
        nand: &mut Nand,
    ) -> Result<()> {
        // Look the old copy up only after next_ppn: it may run GC, which moves that copy.
        let ppn = self.next_ppn(slot, nand)?;
        if !gc_copy {
            let old = self.l2p[lpn as usize];
            if old != NONE {
                self.invalidate(old);
            }
        }
        self.l2p[lpn as usize] = ppn;
        self.p2l[ppn as usize] = lpn as u32;
        self.valid[self.block_of.quot(ppn as u64) as usize] += 1;
        if self.check {
            self.oob_version[ppn as usize] = version;
        }
        nand.program_after(cause, ppn, after);
        Ok(())
    }

    /// FDP's RU time limit: every handle's open RU that has outlived it is sealed as it is
    /// (the next write through the handle opens a new one), an "RU not fully written" event.
    #[inline(never)]
    fn switch_expired(&mut self) {
        let Some(f) = &mut self.fdp else { return };
        let open = &self.open;
        let expired = f.expired(|slot| open[slot] != NONE);
        for slot in expired {
            let left = self.open_left(slot);
            if left == 0 {
                continue; // full: sealed at the handle's next write anyway
            }
            self.seal(self.open[slot]);
            self.open[slot] = NONE;
            if let Some(f) = &mut self.fdp {
                f.switched_early(left);
            }
        }
    }

    /// Pages left to write in frontier `slot`'s open unit (0 without one).
    fn open_left(&self, slot: usize) -> u64 {
        match self.open[slot] {
            NONE => 0,
            b => (self.ppb - self.write_ptr[b as usize]) as u64,
        }
    }

    /// Reclaim units of reclaim group `group` until its free pool is back at the threshold.
    fn collect(&mut self, group: usize, nand: &mut Nand) -> Result<()> {
        self.in_gc = true;
        self.gc_counts.invocations += 1;
        let result = self.collect_inner(group, nand);
        self.in_gc = false;
        result
    }

    fn collect_inner(&mut self, group: usize, nand: &mut Nand) -> Result<()> {
        let mut stalls = Stalls::default();
        while (self.free[group].len() as u64) < self.gc_threshold {
            let valid = &self.valid;
            let victim = self.selector[group]
                .take_victim(self.now, |b| valid[b as usize])
                .ok_or_else(|| {
                    SimError::Invalid(match self.fdp {
                        Some(_) => format!(
                            "GC found no victim reclaim unit in reclaim group {group}: its units hold only valid \
                             data (writes favour one group; raise device.op)"
                        ),
                        None => "GC found no victim block (raise device.op)".into(),
                    })
                })?;
            let full = self.valid[victim as usize] == self.ppb;
            stalls.victim(full, self.valid.len(), "victim")?;
            self.reclaim(victim, nand)?;
        }
        self.check_after_gc()
    }

    /// Integrity mode: the structure and every version, after GC moved pages.
    fn check_after_gc(&self) -> Result<()> {
        if self.check {
            self.check_structure()?;
            self.check_versions(&self.expected)?;
        }
        Ok(())
    }

    /// Background GC (timed mode, while the device is idle): reclaim the next victim if the free
    /// pool is below twice the foreground threshold and that victim holds an invalid page.
    /// Returns whether it did.
    fn background_step(&mut self, nand: &mut Nand) -> Result<bool> {
        // The first reclaim group below twice the threshold.
        let Some(group) =
            (0..self.free.len()).find(|&g| (self.free[g].len() as u64) < 2 * self.gc_threshold)
        else {
            return Ok(false);
        };
        let valid = &self.valid;
        let Some(victim) = self.selector[group].peek_victim(self.now, |b| valid[b as usize]) else {
            return Ok(false);
        };
        if self.valid[victim as usize] == self.ppb {
            return Ok(false);
        }
        self.selector[group].remove(victim, self.valid[victim as usize]);
        self.in_gc = true;
        let r = self.reclaim(victim, nand);
        self.in_gc = false;
        r?;
        self.check_after_gc()?;
        Ok(true)
    }

    /// Move the valid pages of `victim` (taken from the selector) to the GC frontier and erase it.
    fn reclaim(&mut self, victim: u32, nand: &mut Nand) -> Result<()> {
        let mut slot = self.gc_slot;
        if let Some(f) = &mut self.fdp {
            slot = f.gc_slot(victim);
            f.reclaimed(victim, self.valid[victim as usize]);
        }
        let from = self.placement.as_mut().map(|p| {
            let from = p.class[victim as usize];
            p.classifier
                .collected(from, p.opened[victim as usize], self.now);
            from
        });
        let base = victim * self.ppb;
        let mut moved = 0;
        for off in 0..self.ppb {
            let src = base + off;
            // The L2P entries GC rewrites are random: start loading them a few pages ahead.
            if let Some(&ahead) = self.p2l.get((src + GC_AHEAD) as usize) {
                crate::units::prefetch_once(&self.l2p, ahead as usize);
            }
            let lpn = self.p2l[src as usize];
            if lpn == NONE {
                continue;
            }
            let version = if self.check {
                self.oob_version[src as usize]
            } else {
                0
            };
            if (lpn as u64) < self.map_from {
                // With FDP the device decides where GC copies go, whatever the host classifies.
                if let (Some(p), Some(from), None) = (&mut self.placement, from, &self.fdp) {
                    slot = checked_slot(p.classifier.gc(lpn as u64, from, self.now), self.hosts)?;
                }
                // A copy: its program waits for its read.
                nand.read(Cause::Gc, src);
                let read = nand.mark();
                self.program(lpn as u64, version, Cause::Gc, slot, true, read, nand)?;
                if self.map_from != u64::MAX {
                    self.moved.push(lpn);
                }
            } else {
                // A translation page stays in the translation pool; its move is mapping I/O.
                nand.read(Cause::Map, src);
                let read = nand.mark();
                let slot = self.map_slot;
                self.program(lpn as u64, version, Cause::Map, slot, true, read, nand)?;
            }
            // The old copy: the victim is out of the selector, so only its page and count change.
            self.p2l[src as usize] = NONE;
            self.valid[victim as usize] -= 1;
            moved += 1;
        }
        debug_assert_eq!(self.valid[victim as usize], 0);
        self.gc_counts.moved_pages += moved;
        if let Some(f) = &mut self.fdp {
            // Under FDP the device alone places GC copies: all of a victim's go to one slot.
            f.programmed(slot, Cause::Gc, moved);
        }
        self.write_ptr[victim as usize] = 0;
        let group = match &self.fdp {
            Some(f) => {
                // A reclaim unit erases each of its blocks.
                let k = f.blocks_per_ru;
                for b in victim * k..(victim + 1) * k {
                    nand.erase(b);
                }
                f.group_of_ru(victim)
            }
            None => {
                nand.erase(victim);
                0
            }
        };
        self.free[group].push_back(victim);
        self.gc_counts.victims += 1;
        Ok(())
    }

    /// Every LPN maps to a page holding version `latest[lpn]` (0 = must be unmapped).
    fn check_versions(&self, latest: &[u32]) -> Result<()> {
        for (lpn, &want) in latest.iter().enumerate() {
            let ppn = self.l2p[lpn];
            let stored = (ppn != NONE).then(|| (ppn, self.oob_version[ppn as usize]));
            super::check_version(lpn, want, stored)?;
        }
        Ok(())
    }

    /// Structural invariants that need no host versions: L2P and P2L agree, valid counts match.
    fn check_structure(&self) -> Result<()> {
        super::check_p2l(&self.l2p, &self.p2l, &self.valid, self.ppb, "block")?;
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn != NONE && self.p2l[ppn as usize] != lpn as u32 {
                return Err(SimError::Integrity(format!(
                    "LPN {lpn} maps to PPN {ppn}, which does not hold it"
                )));
            }
        }
        Ok(())
    }

    /// Free units (blocks, or reclaim units with FDP) in every group.
    pub fn free_blocks(&self) -> usize {
        self.free.iter().map(VecDeque::len).sum()
    }
}

/// A classifier's class as a host frontier index, or an error if it has no frontier.
fn checked_slot(c: u32, streams: usize) -> Result<usize> {
    if (c as usize) < streams {
        Ok(c as usize)
    } else {
        Err(SimError::Invalid(format!(
            "placement chose class {c}, but the page FTL has {streams} frontiers"
        )))
    }
}

impl FtlView for PageFtl {
    super::flat_view!();
    /// The L2P entry (the one random load of a host page program that the caches rarely hold)
    /// and, with `deep`, the P2L entry, block valid count and GC list entry of the page's current
    /// copy (invalidated by the program).
    #[inline]
    fn prefetch(&self, lpn: Lpn, deep: bool) {
        if deep {
            if let Some(&old) = self.l2p.get(lpn as usize) {
                crate::units::prefetch_once(&self.p2l, old as usize);
                let block = self.block_of.quot(old as u64) as usize;
                crate::units::prefetch(&self.valid, block);
                self.selector[self.group_index(block as u32)].prefetch(block as u32);
            }
        } else {
            crate::units::prefetch_once(&self.l2p, lpn as usize);
        }
    }
}

impl PageFtl {
    /// Program host pages of logical block `lbn` in order (`Shape::Pages`), at the frontier of
    /// stream `hint`. The engine's one-page flushes call it directly: the hot path of page-level
    /// buffers, with its arguments in registers.
    #[inline]
    pub fn program_unit(
        &mut self,
        lbn: Lbn,
        pages: &[UnitPage],
        hint: u32,
        nand: &mut Nand,
    ) -> Result<()> {
        let slot = match &self.fdp {
            Some(f) if self.placement.is_none() => f.host_slot(hint)?,
            _ => self.slot_of(hint),
        };
        let first = lbn * self.lppb as u64;
        for p in pages {
            let lpn = first + p.offset as u64;
            debug_assert!(lpn < self.logical_pages);
            let slot = match &mut self.placement {
                None => slot,
                Some(_) => self.placed_slot(lpn, slot as u32)?,
            };
            self.now += 1;
            self.program(lpn, p.version, p.cause, slot, false, p.after, nand)?;
            if let Some(f) = &mut self.fdp {
                f.programmed(slot, p.cause, 1);
            }
            if self.check {
                self.expected[lpn as usize] = p.version;
            }
        }
        Ok(())
    }

    /// With placement: the frontier of host page `lpn` whose flush unit carries `tag`.
    #[cold]
    fn placed_slot(&mut self, lpn: Lpn, tag: u32) -> Result<usize> {
        let p = self.placement.as_mut().expect("placement");
        let c = if p.classifier.per_batch() {
            // A flush unit is the batch and carries one tag: its pages' average is that tag.
            p.classifier.batch_class(std::slice::from_ref(&tag))
        } else {
            p.classifier.user(lpn, tag, self.now)
        };
        match &self.fdp {
            Some(f) => f.host_slot(c),
            None => checked_slot(c, self.hosts),
        }
    }

    /// Filler of a padded block, after its `data_pages`: pages that hold no data still cost
    /// their program and a page of space (dead at once); page mapping has no switch merge to
    /// gain from it. Out of line: the host path is the hot one.
    #[cold]
    #[inline(never)]
    fn program_filler(&mut self, data_pages: usize, slot: usize, nand: &mut Nand) -> Result<()> {
        // With placement the filler (dead at once) goes to frontier 0.
        let slot = if self.placement.is_some() { 0 } else { slot };
        for _ in data_pages..self.lppb as usize {
            self.now += 1;
            let ppn = self.next_ppn(slot, nand)?;
            if let Some(f) = &mut self.fdp {
                f.programmed(slot, Cause::Pad, 1);
            }
            nand.program(Cause::Pad, ppn);
        }
        Ok(())
    }

    #[inline(always)]
    fn slot_of(&self, hint: u32) -> usize {
        if self.placement.is_some() {
            // The tag itself: placed_slot classifies each page.
            return hint as usize;
        }
        let streams = self.hosts;
        if streams == 1 {
            0
        } else {
            hint as usize % streams
        }
    }
}

impl Ftl for PageFtl {
    #[inline]
    fn write_unit(&mut self, unit: Unit<'_>, nand: &mut Nand) -> Result<()> {
        self.program_unit(unit.lbn, unit.pages, unit.hint, nand)?;
        if let Shape::Block { fill: true } = unit.shape {
            self.program_filler(unit.pages.len(), self.slot_of(unit.hint), nand)?;
        }
        Ok(())
    }

    /// On a fresh device (nothing programmed yet, no versions kept, no log) each logical block
    /// lands in a block of its own: the first page opens it as `next_ppn` would (sealing the
    /// last, collecting if the pool is low), the rest are mapped in one sweep.
    fn fill_bulk(&mut self, nand: &mut Nand) -> Result<bool> {
        let ppb = self.ppb as u64;
        if self.now != 0
            || self.check
            || nand.logging()
            || self.placement.is_some()
            || self.fdp.as_ref().is_some_and(|f| f.blocks_per_ru != 1)
            || !self.logical_pages.is_multiple_of(ppb)
        {
            return Ok(false);
        }
        for lbn in 0..self.logical_pages / ppb {
            self.now += 1;
            let slot = match &mut self.fdp {
                Some(f) => {
                    let slot = f.fill_slot(lbn);
                    f.programmed(slot, Cause::Host, ppb);
                    slot
                }
                None => self.slot_of(0),
            };
            let first = self.next_ppn(slot, nand)?;
            debug_assert!(first.is_multiple_of(self.ppb), "a fill unit starts a block");
            let b = first / self.ppb;
            self.write_ptr[b as usize] = self.ppb;
            self.valid[b as usize] = self.ppb;
            self.now += ppb - 1;
            let lpn0 = (lbn * ppb) as usize;
            let l2p = &mut self.l2p[lpn0..lpn0 + ppb as usize];
            let p2l = &mut self.p2l[first as usize..(first + self.ppb) as usize];
            for (off, (l, p)) in l2p.iter_mut().zip(p2l.iter_mut()).enumerate() {
                *l = first + off as u32;
                *p = (lpn0 + off) as u32;
            }
            nand.counters.programs[Cause::Host as usize] += ppb;
        }
        Ok(true)
    }

    fn tags(&self) -> bool {
        self.placement.is_some()
    }

    fn placement_ids(&self) -> bool {
        self.fdp.is_some() && self.placement.is_none()
    }

    fn keeps_time(&self) -> bool {
        self.fdp.as_ref().is_some_and(|f| f.limits_time())
    }

    #[inline]
    fn set_time_us(&mut self, t_us: f64) {
        if let Some(f) = &mut self.fdp {
            if f.set_time(t_us) {
                self.switch_expired();
            }
        }
    }

    fn precondition_hint(&self, lbn: Lbn) -> u32 {
        match &self.fdp {
            Some(f) if self.placement.is_none() => f.fill_slot(lbn) as u32,
            _ => 0,
        }
    }

    fn begin_write(&mut self, bytes: u64) {
        if let Some(p) = &mut self.placement {
            p.classifier.begin_request(bytes);
        }
    }

    fn tag(&mut self, lpn: Lpn) -> u32 {
        self.placement.as_mut().map_or(0, |p| p.classifier.tag(lpn))
    }

    fn trim(&mut self, lpn: Lpn) {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.invalidate(old);
            self.l2p[lpn as usize] = NONE;
        }
        if let Some(p) = &mut self.placement {
            p.classifier.trim(lpn);
        }
        if self.check {
            self.expected[lpn as usize] = 0;
        }
    }

    fn ppn_of(&self, lpn: Lpn) -> Option<u32> {
        self.l2p.get(lpn as usize).copied().filter(|&p| p != NONE)
    }

    fn background_gc(&mut self, nand: &mut Nand) -> Result<bool> {
        self.background_step(nand)
    }

    fn version_of(&self, lpn: Lpn) -> u32 {
        match self.l2p.get(lpn as usize) {
            Some(&p) if p != NONE && self.check => self.oob_version[p as usize],
            _ => 0,
        }
    }

    fn check_integrity(&self, latest: &[u32]) -> Result<()> {
        self.check_structure()?;
        if self.check {
            self.check_versions(latest)?;
        }
        Ok(())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.gc_counts.metrics().to_vec();
        if let Some(p) = &self.placement {
            v.extend(p.classifier.counters());
        }
        if let Some(f) = &self.fdp {
            f.counters(&mut v);
        }
        v
    }

    fn window_metrics(&self, counters: &[(&'static str, u64)]) -> Vec<(&'static str, f64)> {
        let mut v = Vec::new();
        if let Some(f) = &self.fdp {
            f.window_metrics(counters, &mut v);
        }
        v
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![("ftl.free_blocks", self.free_blocks() as f64)];
        if let Some(p) = &self.placement {
            v.extend(p.classifier.gauges());
        }
        if let Some(f) = &self.fdp {
            f.gauges(|slot| self.open_left(slot), &mut v);
        }
        v
    }
}

/// `[ftl.page]` of `cfg`.
fn table(cfg: &crate::config::Config) -> Result<Params> {
    crate::params::of(&cfg.ftl.tables, "ftl", "page")
}

/// The page FTL's parameters as placement changes them: a frontier per class (streams = its
/// classes, given `streams` for automatic counts) and GC copies where it says (no GC frontier).
fn placed(cfg: &crate::config::Config, placement: &crate::placement::Entry) -> Result<Params> {
    let mut p = table(cfg)?;
    if cfg.placement.kind != "none" {
        p.streams = (placement.classes)(cfg, p.streams)?;
        p.separate_gc_frontier = false;
        if !(1..=64).contains(&p.streams) {
            return Err(SimError::config(
                "placement.kind",
                format!(
                    "`{}` writes to {} classes; the page FTL keeps 1..=64 frontiers",
                    cfg.placement.kind, p.streams
                ),
            ));
        }
    }
    Ok(p)
}

const INFO: crate::component::Component = crate::component::Component::new(
            "ftl",
            "page",
            "Page-mapped FTL: L2P/P2L, write frontiers per stream, GC by free-block threshold, trim. With a placement other \
             than none, one frontier per placement class (streams and separate_gc_frontier are resolved to it) and GC \
             copies where the placement says.",
            crate::params::spec::<Params>(),
            &["ftl.gc", "placement.kind"],
        );

/// The registry entry of `page`.
pub static ENTRY: super::Entry = super::Entry {
    info: INFO,
    build: |cfg, geo, classifier| {
        let p = table(cfg)?;
        let gc = crate::gc::VictimPolicy::from_name(&cfg.ftl.gc)?;
        let f = if cfg.fdp.enabled {
            PageFtl::new_fdp(geo, gc, p.gc_free_blocks, &cfg.fdp, cfg.run.check_integrity)?
        } else {
            PageFtl::new(
                geo,
                gc,
                p.gc_free_blocks,
                p.streams,
                p.separate_gc_frontier,
                cfg.run.check_integrity,
            )?
        };
        Ok(Box::new(if cfg.placement.kind == "none" {
            f
        } else {
            f.with_placement(classifier)?
        }))
    },
    spare_blocks: |cfg, placement, logical_blocks| {
        let p = placed(cfg, placement)?;
        if !cfg.fdp.enabled {
            return Ok(p.spare_blocks());
        }
        let f = &cfg.fdp;
        let k = f.blocks_per_ru(cfg.device.pages_per_block * cfg.device.page_bytes.0)?;
        Ok(f.spare_blocks(logical_blocks, k, f.gc_threshold(p.gc_free_blocks)))
    },
    provision: super::op_provision,
    resolve: |cfg, placement, _| {
        let mut p = placed(cfg, placement)?;
        p.gc_free_blocks = if cfg.fdp.enabled {
            cfg.fdp.gc_threshold(p.gc_free_blocks)
        } else {
            p.gc_threshold()
        };
        cfg.ftl
            .tables
            .insert("page".into(), serde_json::to_value(p).unwrap_or_default());
        Ok(())
    },
    // The resolved streams are the placement's classes.
    frontiers: Some(|cfg| Ok(table(cfg)?.streams)),
    check: super::no_check,
    default_op: super::uses_default_op,
    supports: super::Supports {
        background_gc: true,
        die_sets: true,
        large_pages: true,
        fdp: true,
    },
};

#[cfg(test)]
mod tests {
    use super::super::hybrid::testutil::geo;
    use super::*;

    fn ftl(check: bool) -> (PageFtl, Nand) {
        let geo = geo(4, 2, 8);
        (
            PageFtl::new(&geo, VictimPolicy::Greedy, 2, 1, true, check).unwrap(),
            Nand::new(8),
        )
    }

    fn write(f: &mut PageFtl, n: &mut Nand, lpn: u64, version: u32) {
        let page = [UnitPage::new((lpn % 4) as u32, version, Cause::Host)];
        f.write_unit(Unit::pages(lpn / 4, &page), n).unwrap();
    }

    #[test]
    fn integrity_holds_through_gc() {
        let (mut f, mut n) = ftl(true);
        let mut latest = vec![0u32; 8];
        let mut v = 0;
        for i in 0..200u64 {
            let lpn = (i * 7 + i / 3) % 8;
            v += 1;
            latest[lpn as usize] = v;
            write(&mut f, &mut n, lpn, v);
        }
        assert!(f.gc_counts.victims > 0);
        f.check_integrity(&latest).unwrap();
    }

    #[test]
    fn integrity_catches_stale_version_and_bad_counts() {
        let (mut f, mut n) = ftl(true);
        write(&mut f, &mut n, 3, 1);
        write(&mut f, &mut n, 3, 2);
        let e = f
            .check_integrity(&[0, 0, 0, 3, 0, 0, 0, 0])
            .unwrap_err()
            .to_string();
        assert!(e.contains("LPN 3") && e.contains("version 2"), "{e}");
        let e = f
            .check_integrity(&[0, 0, 0, 2, 0, 0, 0, 5])
            .unwrap_err()
            .to_string();
        assert!(e.contains("LPN 7") && e.contains("not mapped"), "{e}");
        f.valid[0] += 1;
        let e = f
            .check_integrity(&[0, 0, 0, 2, 0, 0, 0, 0])
            .unwrap_err()
            .to_string();
        assert!(e.contains("valid count"), "{e}");
    }

    /// Timed mode: every GC copy's program waits for its own read (the op just before it).
    #[test]
    fn gc_copies_program_after_their_reads() {
        // 32 LPNs in 64 pages: victims hold valid pages.
        let geo = geo(4, 8, 16);
        let mut f = PageFtl::new(&geo, VictimPolicy::Greedy, 2, 1, true, false).unwrap();
        let mut n = Nand::new(16);
        n.set_logging(true);
        let (mut copies, mut x) = (0, 1u64);
        for _ in 0..400 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            n.clear_log();
            write(&mut f, &mut n, (x >> 33) % 32, 1);
            let log = n.log();
            for (j, op) in log.iter().enumerate() {
                if op.cause == Cause::Gc && op.kind == crate::nand::OpKind::Program {
                    assert_eq!(op.after, 1, "{log:?}");
                    assert_eq!(
                        (log[j - 1].kind, log[j - 1].cause),
                        (crate::nand::OpKind::Read, Cause::Gc)
                    );
                    copies += 1;
                } else {
                    // Reads, host programs and erases wait for nothing of their own.
                    assert_eq!(op.after, 0, "{log:?}");
                }
            }
        }
        // Every page GC moved, once each.
        assert!(copies > 0);
        assert_eq!(copies, f.gc_counts.moved_pages);
    }

    #[test]
    fn trim_unmaps() {
        let (mut f, mut n) = ftl(true);
        write(&mut f, &mut n, 5, 1);
        assert!(f.is_mapped(5));
        f.trim(5);
        assert!(!f.is_mapped(5));
        assert!(!f.read(5, Cause::Host, &mut n).unwrap());
        assert_eq!(n.counters.reads[Cause::Host as usize], 0);
        f.check_integrity(&[0; 8]).unwrap();
    }
}
