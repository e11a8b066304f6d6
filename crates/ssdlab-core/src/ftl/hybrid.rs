//! Shared machinery of the block-mapped and hybrid (log-block) FTLs: a page store with fixed
//! per-page state (free / dead / holding an LPN), the newest copy of every LPN, per-block valid and
//! written counts, a free-block pool, integrity versions, and the merge statistics the padding
//! model reads (R_DB, R_LB, U_LB).
//!
//! The store also keeps the block map (LBN → data PBN) with the steps on it that the FTLs share
//! (in-place writes, the data block a merge replaces); the FTLs keep their log-block bookkeeping
//! themselves. The store's `l2p` is the simulator's view of where the newest copy of each page is
//! (what the real FTL finds by scanning its data block and log blocks), which makes every merge a
//! lookup.

use super::UnitPage;
use crate::error::{Result, SimError};
use crate::nand::{Cause, Mark, Nand};
use crate::units::{alloc_vec, alloc_vec_if, prefetch, Divisor, Geometry, Lbn, Lpn};
use std::collections::VecDeque;

pub(crate) const NONE: u32 = u32::MAX;
/// Page state: programmed, but its data is no longer the newest copy (or was trimmed).
pub(crate) const DEAD: u32 = u32::MAX - 1;

/// Default log-block pool: 3% of the data blocks, at least 2 (ALGORITHMS.md §7 item 10).
pub fn auto_log_blocks(logical_blocks: u64) -> u64 {
    ((logical_blocks as f64 * 0.03).ceil() as u64).max(2)
}

/// Configured log-block count (`ftl.log_blocks`, 0 = auto) for a device of `logical_blocks`.
pub fn log_blocks(configured: u64, logical_blocks: u64) -> u64 {
    if configured == 0 {
        auto_log_blocks(logical_blocks)
    } else {
        configured
    }
}

/// The shared keys a hybrid (log-block) FTL reads.
pub const SHARED_KEYS: &[&str] = &["ftl.log_blocks", "ftl.model_stats", "ftl.log_utilisation"];

/// The shared keys as the hybrid FTLs take them on `geo`: the log blocks (`ftl.log_blocks`,
/// 0 = automatic), `ftl.model_stats` and `ftl.log_utilisation`.
pub(crate) fn shared_options(
    cfg: &crate::config::Config,
    geo: &Geometry,
) -> Result<(u64, ModelStats, super::log_stats::Utilisation)> {
    Ok((
        log_blocks(cfg.ftl.log_blocks, geo.logical_blocks()),
        ModelStats::parse(&cfg.ftl.model_stats)?,
        super::log_stats::Utilisation::parse(&cfg.ftl.log_utilisation)?,
    ))
}

/// The automatic log-block count resolved for a device of `logical_blocks` logical blocks.
pub(crate) fn resolve(
    cfg: &mut crate::config::Config,
    _: &crate::placement::Entry,
    logical_blocks: u64,
) -> Result<()> {
    cfg.ftl.log_blocks = log_blocks(cfg.ftl.log_blocks, logical_blocks);
    Ok(())
}

/// Error unless the device has `logical + extra` physical blocks; names device.op (and the
/// minimum ρ) and, when log blocks are involved, ftl.log_blocks.
pub(crate) fn check_size(geo: &Geometry, extra: u64, what: &str) -> Result<()> {
    let need = geo.logical_blocks() + extra;
    if geo.physical_blocks < need {
        let min_op = need as f64 / geo.logical_blocks() as f64 - 1.0;
        return Err(SimError::config(
            "device.op",
            format!(
                "{} physical blocks cannot hold {} logical blocks plus {what}: this device needs \
                 device.op ≥ {min_op:.3} (or fewer ftl.log_blocks, or a larger device.logical_bytes)",
                geo.physical_blocks,
                geo.logical_blocks()
            ),
        ));
    }
    Ok(())
}

/// Physical blocks a log-block FTL (BAST, FAST) needs beyond the logical ones: its log blocks and
/// the target of a full merge.
pub fn log_spare_blocks(log_blocks: u64) -> u64 {
    log_blocks + 1
}

/// The registry entries' `spare_blocks` of BAST and FAST: the spare blocks of the log blocks
/// `ftl.log_blocks` gives on a device of `logical_blocks`.
pub fn entry_spare_blocks(
    cfg: &crate::config::Config,
    _: &crate::placement::Entry,
    logical_blocks: u64,
) -> Result<u64> {
    Ok(log_spare_blocks(log_blocks(
        cfg.ftl.log_blocks,
        logical_blocks,
    )))
}

/// Error unless the device holds `log_blocks` log blocks and the full-merge block beyond its
/// logical blocks.
pub(crate) fn check_log_size(geo: &Geometry, log_blocks: u64) -> Result<()> {
    check_size(
        geo,
        log_spare_blocks(log_blocks),
        &format!("{log_blocks} log blocks (ftl.log_blocks) and 1 merge block"),
    )
}

pub(crate) struct Store {
    pub ppb: u32,
    /// The block map: LBN → its data block (NONE: none yet).
    pub data: Vec<u32>,
    /// PPN → block (a shift for the usual power-of-two block sizes, not a division per page).
    block_of: Divisor,
    pub l2p: Vec<u32>,
    pub p2l: Vec<u32>,
    pub valid: Vec<u32>,
    /// Programmed pages (valid + dead) per block since its last erase.
    pub written: Vec<u32>,
    pub free: VecDeque<u32>,
    pub check: bool,
    pub oob: Vec<u32>,
    pub expected: Vec<u32>,
}

impl Store {
    pub fn new(geo: &Geometry, check: bool) -> Result<Self> {
        let phys = geo.physical_pages();
        // The logical pages fit as well (fewer than the physical ones past `check_size`).
        super::check_ppn_range(phys.max(geo.logical_pages), DEAD, "a block-mapped FTL")?;
        let blocks = geo.physical_blocks as usize;
        Ok(Store {
            ppb: geo.pages_per_block as u32,
            data: vec![NONE; geo.logical_blocks() as usize],
            block_of: Divisor::new(geo.pages_per_block),
            l2p: alloc_vec(geo.logical_pages, NONE, "the L2P table")?,
            p2l: alloc_vec(phys, NONE, "the P2L table")?,
            valid: vec![0; blocks],
            written: vec![0; blocks],
            free: (0..blocks as u32).collect(),
            check,
            oob: alloc_vec_if(check, phys, 0, "integrity versions")?,
            expected: alloc_vec_if(check, geo.logical_pages, 0, "integrity versions")?,
        })
    }

    /// `lbn`'s data block, a free block given to it first if it has none.
    #[inline]
    pub fn data_block(&mut self, lbn: Lbn) -> Result<u32> {
        let d = self.data[lbn as usize];
        if d != NONE {
            return Ok(d);
        }
        let d = self.alloc()?;
        self.data[lbn as usize] = d;
        Ok(d)
    }

    /// Write `p` at its own offset of `lbn`'s data block (one given first if it has none) when
    /// that page is free; false when it is not (the page must go elsewhere).
    #[inline]
    pub fn write_in_place(&mut self, lbn: Lbn, p: &UnitPage, nand: &mut Nand) -> Result<bool> {
        let ppn = self.data_block(lbn)? * self.ppb + p.offset;
        if !self.page_free(ppn) {
            return Ok(false);
        }
        self.program_unit(lbn * self.ppb as u64 + p.offset as u64, ppn, p, nand);
        Ok(true)
    }

    /// Make `b` the data block of `lbn`; returns the one it replaces (NONE: none).
    #[inline]
    pub fn remap(&mut self, lbn: Lbn, b: u32) -> u32 {
        std::mem::replace(&mut self.data[lbn as usize], b)
    }

    /// Erase a merge's old data block `d`, if there was one (NONE: none), with [`Store::erase`]
    /// or, when its pages were moved with [`Store::move_tail`], [`Store::erase_dying`]. Returns
    /// the erases (0 or 1).
    pub fn erase_replaced(&mut self, d: u32, dying: bool, nand: &mut Nand) -> u64 {
        if d == NONE {
            return 0;
        }
        if dying {
            self.erase_dying(d, nand);
        } else {
            self.erase(d, nand);
        }
        1
    }

    /// Erase the log block `b` that a merge reclaims, its programmed pages counted in
    /// `ftl.log_utilization`; returns them.
    pub fn reclaim_log(&mut self, b: u32, stats: &mut Stats, nand: &mut Nand) -> u32 {
        let w = self.written[b as usize];
        stats.reclaim(w);
        self.erase(b, nand);
        w
    }

    pub fn alloc(&mut self) -> Result<u32> {
        self.free.pop_front().ok_or_else(|| {
            SimError::Invalid("block-mapped FTL ran out of free blocks (raise device.op)".into())
        })
    }

    #[inline]
    pub fn page_free(&self, ppn: u32) -> bool {
        self.p2l[ppn as usize] == NONE
    }

    #[inline(always)]
    fn invalidate(&mut self, ppn: u32) {
        self.p2l[ppn as usize] = DEAD;
        self.valid[self.block_of.quot(ppn as u64) as usize] -= 1;
    }

    /// Program `lpn` into the free page `ppn` (its old copy, if any, becomes dead), once
    /// operation `after` (the read of its data, if any) is done.
    #[inline(always)]
    pub fn program(
        &mut self,
        lpn: Lpn,
        ppn: u32,
        version: u32,
        cause: Cause,
        after: Mark,
        nand: &mut Nand,
    ) {
        debug_assert!(self.page_free(ppn), "PPN {ppn} is not free");
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.invalidate(old);
        }
        self.l2p[lpn as usize] = ppn;
        self.p2l[ppn as usize] = lpn as u32;
        let b = self.block_of.quot(ppn as u64) as usize;
        self.valid[b] += 1;
        self.written[b] += 1;
        if self.check {
            self.oob[ppn as usize] = version;
        }
        nand.program_after(cause, ppn, after);
    }

    /// Host/pad page of a flush unit: also remembers its version as the latest.
    pub fn program_unit(&mut self, lpn: Lpn, ppn: u32, p: &UnitPage, nand: &mut Nand) {
        self.program(lpn, ppn, p.version, p.cause, p.after, nand);
        if self.check {
            self.expected[lpn as usize] = p.version;
        }
    }

    /// Merge copy of `lpn` from its newest copy `src` to the free page `dst`, mapping only: the
    /// caller adds the NAND read and program and `dst`'s block counts (once per merge, not per
    /// page).
    #[inline(always)]
    fn relocate(&mut self, lpn: usize, src: u32, dst: u32) {
        debug_assert!(self.page_free(dst), "PPN {dst} is not free");
        self.invalidate(src);
        self.l2p[lpn] = dst;
        self.p2l[dst as usize] = lpn as u32;
        if self.check {
            self.oob[dst as usize] = self.oob[src as usize];
        }
    }

    /// Timed mode: log the merge copies of the mapped pages among LPNs `lpn..lpn + n` to PPNs
    /// `ppn..ppn + n` (before the caller moves them; their counts come in bulk, [`Store::copied`]).
    fn log_copies(&self, lpn: usize, ppn: u32, n: usize, nand: &mut Nand) {
        if !nand.logging() {
            return;
        }
        for (i, &src) in self.l2p[lpn..lpn + n].iter().enumerate() {
            if src != NONE {
                nand.log_copy(Cause::Merge, src, ppn + i as u32);
            }
        }
    }

    /// Count `n` merge copies (read + program) into block `b`.
    #[inline]
    fn copied(&mut self, b: u32, n: u32, nand: &mut Nand) {
        self.valid[b as usize] += n;
        self.written[b as usize] += n;
        nand.counters.reads[Cause::Merge as usize] += n as u64;
        nand.counters.programs[Cause::Merge as usize] += n as u64;
    }

    /// Start loading the L2P entries `lpn..lpn + n` and the P2L entries `ppn..ppn + n` of a merge,
    /// a cache line each, all at once: one iteration per page is too long for the core to run
    /// far enough ahead on its own.
    #[inline]
    pub fn prefetch_merge(&self, lpn: usize, ppn: usize, n: usize) {
        const PER_LINE: usize = 64 / std::mem::size_of::<u32>();
        for o in (0..n).step_by(PER_LINE) {
            prefetch(&self.l2p, lpn + o);
            prefetch(&self.p2l, ppn + o);
        }
    }

    /// Merge copies into block `b`: the newest copy of every mapped page of `lbn` at offsets
    /// `from..ppb` is read and programmed at its own offset of `b` (free there). Returns the
    /// number of copies.
    pub fn copy_tail(&mut self, lbn: Lbn, b: u32, from: u32, nand: &mut Nand) -> u32 {
        let ppb = self.ppb as usize;
        let first = lbn as usize * ppb;
        let base = b * self.ppb;
        let n_offsets = ppb - from as usize;
        self.prefetch_merge(first + from as usize, (base + from) as usize, n_offsets);
        self.log_copies(first + from as usize, base + from, n_offsets, nand);
        // ... and the old copies' P2L entries.
        for o in from as usize..ppb {
            prefetch(&self.p2l, self.l2p[first + o] as usize);
        }
        let mut n = 0;
        for o in from as usize..ppb {
            let lpn = first + o;
            let src = self.l2p[lpn];
            let dst = base + o as u32;
            let mapped = src != NONE;
            // An unmapped offset makes the same stores on `dst` and `b` and leaves them as they
            // were, so that no branch mispredicts on the pattern of mapped pages (about one in
            // two on a Zipf workload).
            let t = if mapped { src } else { dst };
            self.p2l[t as usize] = DEAD;
            let tb = self.block_of.quot(t as u64) as usize;
            self.valid[tb] = self.valid[tb].wrapping_sub(1);
            self.l2p[lpn] = if mapped { dst } else { NONE };
            self.p2l[dst as usize] = if mapped { lpn as u32 } else { NONE };
            if self.check {
                self.oob[dst as usize] = self.oob[t as usize];
            }
            n += mapped as u32;
        }
        // `b` lost one valid page per unmapped offset above.
        let unmapped = ppb as u32 - from - n;
        self.valid[b as usize] = self.valid[b as usize].wrapping_add(unmapped);
        self.copied(b, n, nand);
        n
    }

    /// Merge copies, as [`Store::copy_tail`], when every source lies in a block that the caller
    /// erases with [`Store::erase_dying`] right after (BAST: an LBN's pages are only ever in its
    /// data block and its own log chain). The old copies are then not marked dead one by one:
    /// only the new mapping is written, offset by offset with no dependence between offsets (so
    /// the loop is vectorised and touches no random memory).
    pub fn move_tail(&mut self, lbn: Lbn, b: u32, from: u32, nand: &mut Nand) -> u32 {
        let ppb = self.ppb as usize;
        let (lo, hi) = (lbn as usize * ppb + from as usize, (lbn as usize + 1) * ppb);
        let base = (b * self.ppb + from) as usize;
        self.prefetch_merge(lo, base, hi - lo);
        self.log_copies(lo, base as u32, hi - lo, nand);
        if self.check {
            for (i, &src) in self.l2p[lo..hi].iter().enumerate() {
                if src != NONE {
                    self.oob[base + i] = self.oob[src as usize];
                }
            }
        }
        let l2p = &mut self.l2p[lo..hi];
        let p2l = &mut self.p2l[base..base + (hi - lo)];
        let (mut lpn, mut dst) = (lo as u32, base as u32);
        let mut n = 0;
        for (l, p) in l2p.iter_mut().zip(p2l) {
            let mapped = *l != NONE;
            *l = if mapped { dst } else { NONE };
            *p = if mapped { lpn } else { NONE };
            n += mapped as u32;
            lpn += 1;
            dst += 1;
        }
        self.copied(b, n, nand);
        n
    }

    /// Erase a block whose pages' newest copies have all moved away with [`Store::move_tail`]
    /// (its valid count is stale).
    pub fn erase_dying(&mut self, b: u32, nand: &mut Nand) {
        self.valid[b as usize] = 0;
        self.erase(b, nand);
    }

    /// Erase a block that holds no valid page and return it to the pool.
    pub fn erase(&mut self, b: u32, nand: &mut Nand) {
        debug_assert_eq!(
            self.valid[b as usize], 0,
            "erasing block {b} with valid pages"
        );
        let base = (b * self.ppb) as usize;
        self.p2l[base..base + self.ppb as usize].fill(NONE);
        self.written[b as usize] = 0;
        nand.erase(b);
        self.free.push_back(b);
    }

    /// Program a page that holds no data (padding filler): it costs a program (cause Pad) and
    /// is dead at once.
    pub fn program_filler(&mut self, ppn: u32, nand: &mut Nand) {
        debug_assert!(self.page_free(ppn), "PPN {ppn} is not free");
        self.p2l[ppn as usize] = DEAD;
        self.written[self.block_of.quot(ppn as u64) as usize] += 1;
        nand.program(Cause::Pad, ppn);
    }

    /// A new block receives, at their own offsets, the page `unit` brings (its own cause) or else
    /// the newest copy of the mapped page (cause Merge); offsets with neither get filler when
    /// `fill`. With an empty unit this is the full merge of `lbn`; with a whole-block unit, the
    /// block of a switch merge. Returns the new block; the caller erases the blocks left without
    /// valid pages.
    pub fn rewrite(
        &mut self,
        lbn: Lbn,
        unit: &[UnitPage],
        fill: bool,
        nand: &mut Nand,
    ) -> Result<u32> {
        let nb = self.alloc()?;
        if unit.is_empty() && !fill {
            // A full merge: the newest copy of every mapped page, in offset order.
            self.copy_tail(lbn, nb, 0, nand);
            return Ok(nb);
        }
        let first = lbn * self.ppb as u64;
        let mut it = unit.iter().peekable();
        let mut copies = 0;
        for o in 0..self.ppb {
            let lpn = first + o as u64;
            let dst = nb * self.ppb + o;
            let src = self.l2p[lpn as usize];
            if let Some(p) = it.next_if(|p| p.offset == o) {
                self.program_unit(lpn, dst, p, nand);
            } else if src != NONE {
                self.relocate(lpn as usize, src, dst);
                nand.log_copy(Cause::Merge, src, dst);
                copies += 1;
            } else if fill {
                self.program_filler(dst, nand);
            }
        }
        self.copied(nb, copies, nand);
        Ok(nb)
    }

    /// A whole-block unit (`Shape::Block`) written into a fresh block that becomes `lbn`'s data
    /// block; the old data block, if any, is erased. Returns whether there was one (false: the
    /// LBN's first data block, nothing replaced).
    pub fn switch_in(
        &mut self,
        lbn: Lbn,
        pages: &[UnitPage],
        fill: bool,
        nand: &mut Nand,
    ) -> Result<bool> {
        let nb = self.rewrite(lbn, pages, fill, nand)?;
        let old = self.remap(lbn, nb);
        Ok(self.erase_replaced(old, false, nand) == 1)
    }

    pub fn trim(&mut self, lpn: Lpn) {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.invalidate(old);
            self.l2p[lpn as usize] = NONE;
        }
        if self.check {
            self.expected[lpn as usize] = 0;
        }
    }

    pub fn ppn_of(&self, lpn: Lpn) -> Option<u32> {
        self.l2p.get(lpn as usize).copied().filter(|&p| p != NONE)
    }

    pub fn is_mapped(&self, lpn: Lpn) -> bool {
        self.l2p.get(lpn as usize).is_some_and(|&p| p != NONE)
    }

    pub fn version_of(&self, lpn: Lpn) -> u32 {
        match self.l2p.get(lpn as usize) {
            Some(&p) if p != NONE && self.check => self.oob[p as usize],
            _ => 0,
        }
    }

    /// Cheap check after a merge: every page of `lbn` holds its latest version.
    pub fn check_lbn(&self, lbn: Lbn) -> Result<()> {
        if !self.check {
            return Ok(());
        }
        let first = lbn * self.ppb as u64;
        for lpn in first..first + self.ppb as u64 {
            self.check_one(lpn as usize, self.expected[lpn as usize])?;
        }
        Ok(())
    }

    fn check_one(&self, lpn: usize, want: u32) -> Result<()> {
        let ppn = self.l2p[lpn];
        let stored = (ppn != NONE).then(|| (ppn, self.oob[ppn as usize]));
        super::check_version(lpn, want, stored)
    }

    /// Whole-device check: L2P and P2L agree, valid/written counts match the pages, free blocks
    /// are empty, and (when tracked) every LPN holds `latest[lpn]`.
    pub fn check_all(&self, latest: &[u32]) -> Result<()> {
        let ppb = self.ppb as usize;
        let mut valid = vec![0u32; self.valid.len()];
        let mut written = vec![0u32; self.valid.len()];
        for (ppn, &lpn) in self.p2l.iter().enumerate() {
            if lpn == NONE {
                continue;
            }
            written[ppn / ppb] += 1;
            if lpn == DEAD {
                continue;
            }
            if self.l2p[lpn as usize] != ppn as u32 {
                return Err(SimError::Integrity(format!(
                    "PPN {ppn} claims LPN {lpn}, but LPN {lpn} maps to PPN {}",
                    self.l2p[lpn as usize]
                )));
            }
            valid[ppn / ppb] += 1;
        }
        for b in 0..self.valid.len() {
            if valid[b] != self.valid[b] {
                return Err(SimError::Integrity(format!(
                    "block {b}: valid count {}, but {} valid pages",
                    self.valid[b], valid[b]
                )));
            }
            if written[b] != self.written[b] {
                return Err(SimError::Integrity(format!(
                    "block {b}: written count {}, but {} programmed pages",
                    self.written[b], written[b]
                )));
            }
        }
        for &b in &self.free {
            if self.written[b as usize] != 0 {
                return Err(SimError::Integrity(format!(
                    "free block {b} has programmed pages"
                )));
            }
        }
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn != NONE && self.p2l[ppn as usize] != lpn as u32 {
                return Err(SimError::Integrity(format!(
                    "LPN {lpn} maps to PPN {ppn}, which does not hold it"
                )));
            }
        }
        if self.check {
            for (lpn, &want) in latest.iter().enumerate() {
                self.check_one(lpn, want)?;
            }
        }
        Ok(())
    }
}

/// The Host-cause pages h of a whole-block unit and the block size N, as the padding model counts
/// a switch merge.
pub(crate) fn host_pages(pages: &[UnitPage], ppb: u32) -> (f64, f64) {
    let h = pages.iter().filter(|p| p.cause == Cause::Host).count();
    (h as f64, ppb as f64)
}

/// The `FtlView` answers of a hybrid FTL that its page store `s` and merge statistics `stats`
/// give alone (`$log_blocks`: the field that holds its log-block count; none: 0).
macro_rules! store_view {
    ($($log_blocks:ident)?) => {
        fn is_mapped(&self, lpn: Lpn) -> bool {
            self.s.is_mapped(lpn)
        }
        fn stat(&self, name: &str) -> Option<f64> {
            self.stats.stat(name, 0 $(+ self.$log_blocks)?, self.s.free.len())
        }
    };
}
pub(crate) use store_view;

/// The `Ftl` answers of a hybrid FTL that `s` and `stats` give alone; with `log`, also those of
/// its seed 002 log statistics `log` (histograms and window metrics).
macro_rules! store_answers {
    ($($log:ident)?) => {
        fn version_of(&self, lpn: Lpn) -> u32 {
            self.s.version_of(lpn)
        }
        fn ppn_of(&self, lpn: Lpn) -> Option<u32> {
            self.s.ppn_of(lpn)
        }
        fn gauges(&self) -> Vec<(&'static str, f64)> {
            self.stats.gauges(self.s.ppb, self.s.free.len())
        }
        $(
            fn histograms(&self) -> Vec<(&'static str, Vec<(u64, u64)>)> {
                self.$log.histograms()
            }
            fn window_metrics(&self, counters: &[(&'static str, u64)]) -> Vec<(&'static str, f64)> {
                LogStats::window_metrics(counters, self.s.ppb)
            }
        )?
    };
}
pub(crate) use store_answers;

/// Which events feed the padding model's running R_DB / R_LB / U_LB (`ftl.model_stats`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelStats {
    /// Seed 000 §3.5 (last paragraph): samples come from log blocks reclaimed by full merges; a
    /// whole-block (padded or full) switch merge contributes only when it reclaims log blocks
    /// early, counted as though the group's pages had been logged and full-merged.
    Seed,
    /// Every merge is a sample, and every padded switch merge counts as its host pages logged
    /// and full-merged on their own (the reading of ssdlab 0.2).
    AllMerges,
}

impl ModelStats {
    pub fn parse(v: &str) -> Result<Self> {
        match v {
            "seed" => Ok(ModelStats::Seed),
            "all-merges" => Ok(ModelStats::AllMerges),
            _ => Err(crate::error::unknown_value(
                "ftl.model_stats",
                v,
                &["seed", "all-merges"],
            )),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Merge {
    Switch,
    Partial,
    Full,
}

/// Merge counters and the running padding-model statistics.
#[derive(Default, Debug, Clone)]
pub(crate) struct Stats {
    pub merges: [u64; 3],
    pub erases: [u64; 3],
    /// Erases outside merges (dead log blocks reclaimed without merging anything).
    pub erases_gc: u64,
    /// Model events (merges as R_DB / R_LB / U_LB count them; may be fractional, see FAST).
    pub events: f64,
    pub data_blocks: f64,
    pub log_blocks: f64,
    pub log_written: f64,
    pub log_capacity: f64,
    /// Real reclaimed log blocks and their programmed pages (ftl.log_utilization).
    pub reclaimed: u64,
    pub reclaimed_written: u64,
}

impl Stats {
    pub fn merge(&mut self, kind: Merge, erases: u64) {
        self.merges[kind as usize] += 1;
        self.erases[kind as usize] += erases;
    }
    /// One model event: `db` data blocks and `lb` log blocks holding `written` pages.
    pub fn event(&mut self, db: f64, lb: f64, written: f64, capacity: f64) {
        self.add(1.0, db, lb, written, capacity);
    }
    /// A weighted model event (`events` may be a fraction of a merge).
    pub fn add(&mut self, events: f64, db: f64, lb: f64, written: f64, capacity: f64) {
        self.events += events;
        self.data_blocks += db;
        self.log_blocks += lb;
        self.log_written += written;
        self.log_capacity += capacity;
    }
    pub fn reclaim(&mut self, written: u32) {
        self.reclaimed += 1;
        self.reclaimed_written += written as u64;
    }
    pub fn r_db(&self) -> f64 {
        ratio(self.data_blocks, self.events)
    }
    pub fn r_lb(&self) -> f64 {
        ratio(self.log_blocks, self.events)
    }
    pub fn u_lb(&self) -> f64 {
        ratio(self.log_written, self.log_capacity)
    }
    pub fn log_utilization(&self, ppb: u32) -> f64 {
        ratio(
            self.reclaimed_written as f64,
            (self.reclaimed * ppb as u64) as f64,
        )
    }
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("ftl.merges.switch", self.merges[0]),
            ("ftl.merges.partial", self.merges[1]),
            ("ftl.merges.full", self.merges[2]),
            ("ftl.erases.switch", self.erases[0]),
            ("ftl.erases.partial", self.erases[1]),
            ("ftl.erases.full", self.erases[2]),
            ("ftl.erases.gc", self.erases_gc),
        ]
    }
    pub fn gauges(&self, ppb: u32, free: usize) -> Vec<(&'static str, f64)> {
        vec![
            ("ftl.r_db", self.r_db()),
            ("ftl.r_lb", self.r_lb()),
            ("ftl.u_lb", self.u_lb()),
            ("ftl.log_utilization", self.log_utilization(ppb)),
            ("ftl.model_samples", self.events),
            ("ftl.free_blocks", free as f64),
        ]
    }
    /// The statistic `name` a buffer may ask of a hybrid FTL with `log_blocks` log blocks and
    /// `free` free blocks.
    pub fn stat(&self, name: &str, log_blocks: u64, free: usize) -> Option<f64> {
        match name {
            "free_blocks" => Some(free as f64),
            "r_db" => Some(self.r_db()),
            "r_lb" => Some(self.r_lb()),
            "u_lb" => Some(self.u_lb()),
            "log_blocks" => Some(log_blocks as f64),
            _ => None,
        }
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Deterministic test helpers shared by the FTL test modules.
#[cfg(test)]
pub(crate) mod testutil {
    use super::*;
    use crate::ftl::log_stats::Utilisation;
    use crate::ftl::{Ftl, Shape, Unit};

    /// Seed 002's log counters of `f`, in `log_stats::COUNTERS` order.
    pub fn log_counts(f: &dyn Ftl) -> [u64; 8] {
        let c = f.counters();
        crate::ftl::log_stats::COUNTERS.map(|k| c.iter().find(|(n, _)| *n == k).unwrap().1)
    }

    /// The FTL histogram `name` of `f`.
    pub fn histogram(f: &dyn Ftl, name: &str) -> Vec<(u64, u64)> {
        f.histograms()
            .into_iter()
            .find(|(k, _)| *k == name)
            .unwrap()
            .1
    }

    pub fn geo(ppb: u64, logical_blocks: u64, physical_blocks: u64) -> Geometry {
        Geometry {
            page_bytes: 4096,
            pages_per_block: ppb,
            logical_pages: logical_blocks * ppb,
            physical_blocks,
        }
    }

    pub fn host(offsets: &[u32], version: u32) -> Vec<UnitPage> {
        offsets
            .iter()
            .map(|&o| UnitPage::new(o, version, Cause::Host))
            .collect()
    }

    /// Xorshift PRNG (tests only).
    pub struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        pub fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Host pages followed by Pad-cause copies of `pad` offsets holding `pad_version`, ascending.
    pub fn padded(
        host_offsets: &[u32],
        version: u32,
        pad: &[u32],
        pad_version: u32,
    ) -> Vec<UnitPage> {
        let mut v = host(host_offsets, version);
        v.extend(
            pad.iter()
                .map(|&o| UnitPage::new(o, pad_version, Cause::Pad)),
        );
        v.sort_by_key(|p| p.offset);
        v
    }

    /// One random step for `random_run`: None after a trim (done here), else a unit to write
    /// (single pages, runs, random subsets; some padded, whole-block with or without filler),
    /// its versions recorded in `latest`.
    pub fn next_unit(
        f: &mut dyn Ftl,
        rng: &mut Rng,
        ppb: u32,
        lbns: u64,
        latest: &mut [u32],
        v: &mut u32,
        trims: bool,
    ) -> Option<(Lbn, Vec<UnitPage>, Shape)> {
        let lbn = if rng.below(3) == 0 {
            rng.below(lbns.min(3))
        } else {
            rng.below(lbns)
        };
        let first = lbn * ppb as u64;
        let kind = rng.below(10);
        let mut unit = Vec::new();
        if kind == 0 {
            let lpn = first + rng.below(ppb as u64);
            if !trims {
                return None;
            }
            f.trim(lpn);
            latest[lpn as usize] = 0;
            return None;
        } else if kind <= 5 {
            unit.push(rng.below(ppb as u64) as u32);
        } else if kind <= 7 {
            let start = rng.below(ppb as u64) as u32;
            let len = 1 + rng.below((ppb - start) as u64) as u32;
            unit.extend(start..start + len);
        } else {
            unit.extend((0..ppb).filter(|_| rng.below(2) == 0));
            if unit.is_empty() {
                unit.push(0);
            }
        }
        let padded = kind == 9;
        let mut pages = Vec::new();
        for o in 0..ppb {
            let lpn = (first + o as u64) as usize;
            if unit.contains(&o) {
                *v += 1;
                latest[lpn] = *v;
                pages.push(UnitPage::new(o, *v, Cause::Host));
            } else if padded && latest[lpn] != 0 {
                assert_eq!(f.version_of(lpn as u64), latest[lpn]);
                pages.push(UnitPage::new(o, latest[lpn], Cause::Pad));
            }
        }
        let shape = if padded || pages.len() == ppb as usize {
            Shape::Block {
                fill: rng.below(2) == 0,
            }
        } else {
            Shape::Pages
        };
        Some((lbn, pages, shape))
    }

    pub const BLOCK: Shape = Shape::Block { fill: true };

    /// R_DB, R_LB and U_LB of a hybrid FTL's statistics.
    pub fn model_stats(s: &Stats) -> (f64, f64, f64) {
        (s.r_db(), s.r_lb(), s.u_lb())
    }

    pub fn progs(n: &Nand) -> u64 {
        n.counters.programs_total()
    }

    pub fn merge_progs(n: &Nand) -> u64 {
        n.counters.programs[Cause::Merge as usize]
    }

    /// The programs and erases `op` costs on `n`.
    pub fn cost(n: &mut Nand, op: impl FnOnce(&mut Nand)) -> (u64, u64) {
        let (p0, e0) = (progs(n), n.counters.erases);
        op(n);
        (progs(n) - p0, n.counters.erases - e0)
    }

    /// The merges the FTL's counters report: switch, partial, full.
    pub fn merges(f: &dyn Ftl) -> [u64; 3] {
        let all = f.counters();
        ["ftl.merges.switch", "ftl.merges.partial", "ftl.merges.full"]
            .map(|k| all.iter().find(|(name, _)| *name == k).unwrap().1)
    }

    /// Seed Fig 7–8(a) on N = 4: pages 1 and 2 of a whole-written LBN 0 logged, then `merge`
    /// full-merges them: 6 programs (2 logged, 4 copies), 2 erases.
    pub fn fig8a_log_and_merge<F: Ftl>(
        f: &mut F,
        n: &mut Nand,
        merge: impl FnOnce(&mut F, &mut Nand),
    ) {
        write_whole(f, n, 0..1);
        let log_and_merge = |n: &mut Nand| {
            f.write_unit(Unit::pages(0, &host(&[1, 2], 2)), n).unwrap();
            merge(f, n);
        };
        assert_eq!(cost(n, log_and_merge), (6, 2));
        assert_eq!(merges(f), [0, 0, 1]);
        f.check_integrity(&[1, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    /// Seed Fig 7–8(b) on N = 4: pages 1, 2 of a whole-written LBN 0 buffered, 0 and 3 read and
    /// padded, the whole block written in order and switch-merged: 4 page writes (2 of them
    /// Pad), 1 erase (the old data block).
    pub fn fig8b_pad_and_switch(f: &mut dyn Ftl, n: &mut Nand) {
        write_whole(f, n, 0..1);
        let unit = padded(&[1, 2], 2, &[0, 3], 1);
        assert_eq!(
            cost(n, |n| f.write_unit(Unit::new(0, &unit, BLOCK), n).unwrap()),
            (4, 1)
        );
        assert_eq!(n.counters.programs[Cause::Pad as usize], 2);
        assert_eq!(merges(f), [1, 0, 0]);
        f.check_integrity(&[1, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    /// The merges so far (switch, partial, full), their copies (Merge programs) and all erases.
    pub fn merge_totals(f: &dyn Ftl, n: &Nand) -> ([u64; 3], u64, u64) {
        (merges(f), merge_progs(n), n.counters.erases)
    }

    /// A long [`random_run`] (N = 8, 12 LBNs, 5000 steps from `seed`) that must see every kind of
    /// merge, the FTL's erases agreeing with the NAND's.
    pub fn random_run_all_merges(f: &mut dyn Ftl, n: &mut Nand, seed: u64, what: &str) {
        random_run(f, n, 8, 12, 5000, seed);
        assert_erases_agree(f, n);
        let m = merges(f);
        assert!(m.iter().all(|&x| x > 0), "{what}: {m:?}");
    }

    /// The erases the FTL's counters report, all kinds together, are the NAND's.
    pub fn assert_erases_agree(f: &dyn Ftl, nand: &Nand) {
        let c = f.counters();
        let erases = c.iter().filter(|(k, _)| k.starts_with("ftl.erases"));
        assert_eq!(erases.map(|x| x.1).sum::<u64>(), nand.counters.erases);
    }

    /// Every page of the LBNs `lbns` (N = 4) written at version 1: in place, no log block.
    pub fn write_whole(f: &mut dyn Ftl, nand: &mut Nand, lbns: std::ops::Range<Lbn>) {
        for l in lbns {
            f.write_unit(Unit::pages(l, &host(&[0, 1, 2, 3], 1)), nand)
                .unwrap();
        }
    }

    /// Seed 002's hand-worked run on N = 4, 4 LBNs and `logs` log blocks, once for each
    /// utilisation reading on the FTL `make` builds for it: LBNs 0–2 written whole, then
    /// `script`'s `Pages` units, the i-th at version `2 + i`; `check` asserts what that gives.
    pub fn by_hand<F: Ftl>(
        logs: u64,
        make: impl Fn(&Geometry, Utilisation) -> F,
        script: &[(Lbn, &[u32])],
        check: impl Fn(&mut F, &mut Nand, Utilisation),
    ) {
        for util in [Utilisation::Written, Utilisation::Valid] {
            let g = geo(4, 4, 4 + logs + 1);
            let (mut f, mut n) = (make(&g, util), Nand::new(g.physical_blocks));
            write_whole(&mut f, &mut n, 0..3);
            for (i, &(l, offs)) in script.iter().enumerate() {
                f.write_unit(Unit::pages(l, &host(offs, 2 + i as u32)), &mut n)
                    .unwrap();
            }
            check(&mut f, &mut n, util);
        }
    }

    /// What the utilisation reading changes in seed 002's statistics: the used pages (all,
    /// re-referenced) and the histograms of utilisation at merge (all, re-referenced).
    pub type Utilised<'a> = (u64, u64, &'a [(u64, u64)], &'a [(u64, u64)]);

    /// Seed 002's log statistics after a hand-worked run (N = 4): the counters (`log_counts`
    /// order, less the used pages), the histogram of references at merge, what reading `util`
    /// gives (`written` or `valid`), and the window metrics they make.
    pub fn assert_log_stats(
        f: &dyn Ftl,
        util: Utilisation,
        counts: [u64; 6],
        references: &[(u64, u64)],
        written: Utilised,
        valid: Utilised,
    ) {
        let (used, reref, utilisation, rereferenced) = match util {
            Utilisation::Written => written,
            Utilisation::Valid => valid,
        };
        let [units, hits, misses, never, fits, overflows] = counts;
        let counts = [units, hits, misses, never, fits, overflows, used, reref];
        assert_eq!(log_counts(f), counts);
        assert_eq!(histogram(f, "ftl.log.references_at_merge"), references);
        assert_eq!(histogram(f, "ftl.log.utilisation_at_merge"), utilisation);
        assert_eq!(
            histogram(f, "ftl.log.utilisation_at_merge_rereferenced"),
            rereferenced
        );
        let [_, hits, misses, never, fits, overflows, used, reref] = counts.map(|c| c as f64);
        let w = f.window_metrics(&f.counters());
        assert_eq!(w[0], ("ftl.log.hit_ratio", hits / (hits + misses)));
        assert_eq!(w[1].1, used / ((never + fits + overflows) * 4.0));
        assert_eq!(w[2].1, reref / ((fits + overflows) * 4.0));
    }

    /// What one oracle run of [`log_oracle`] ends with: its log counts, merges and NAND counters.
    pub type OracleRun = ([u64; 8], [u64; 3], crate::nand::NandCounters);

    /// Seed 002's oracle on a hybrid FTL `f` whose page store `s` gives: 4000 random units on
    /// N = 4 and 6 LBNs (no trims: a merge a unit causes before its first logged page may free
    /// a trimmed offset in the new data block, and the page then goes in place). A `Pages` unit
    /// reaches the log exactly when its LBN has a data block whose page at one of its offsets is
    /// not free, and is a hit exactly when `hit(f, lbn)` before it; every unit is requested;
    /// `each(f, lbn)` checks every LBN after every unit. Every reclaimed log record is
    /// classified once.
    pub fn log_oracle<F: Ftl>(
        f: &mut F,
        n: &mut Nand,
        s: impl Fn(&F) -> &Store,
        seed: u64,
        hit: impl Fn(&F, Lbn) -> bool,
        each: impl Fn(&F, Lbn),
        what: &str,
    ) -> OracleRun {
        let (ppb, lbns) = (4u32, 6u64);
        let mut rng = Rng(seed);
        let mut latest = vec![0u32; (lbns * ppb as u64) as usize];
        let (mut ver, mut units, mut reach) = (0, 0u64, [0u64; 2]);
        for _ in 0..4000 {
            let Some((lbn, pages, shape)) =
                next_unit(f, &mut rng, ppb, lbns, &mut latest, &mut ver, false)
            else {
                continue;
            };
            let d = s(f).data[lbn as usize];
            let reaches = shape == Shape::Pages
                && d != NONE
                && pages.iter().any(|p| !s(f).page_free(d * ppb + p.offset));
            if reaches {
                reach[usize::from(hit(f, lbn))] += 1;
            }
            f.write_unit(Unit::new(lbn, &pages, shape), n).unwrap();
            units += 1;
            let c = log_counts(f);
            assert_eq!([c[0], c[2], c[1]], [units, reach[0], reach[1]], "{what}");
            for l in 0..lbns {
                each(f, l);
            }
        }
        f.check_integrity(&latest).unwrap();
        let c = log_counts(f);
        let refs = histogram(f, "ftl.log.references_at_merge");
        assert_eq!(refs.iter().map(|x| x.1).sum::<u64>(), c[3] + c[4] + c[5]);
        assert!(
            c[1] > 0 && c[2] > 0 && c[3] > 0 && c[4] > 0,
            "{what}: {c:?}"
        );
        (c, merges(f), n.counters.clone())
    }

    /// Runs of [`log_oracle`] counting written and valid pages: the utilisation reading changes
    /// nothing but the used pages, and counting written pages never finds fewer.
    pub fn assert_only_used_pages_differ(written: &OracleRun, valid: &OracleRun, what: &str) {
        let ((w, wm, wn), (vc, vm, vn)) = (written, valid);
        assert_eq!((&w[..6], wm, wn), (&vc[..6], vm, vn), "{what}");
        assert!(w[6] >= vc[6] && w[7] >= vc[7], "{what}: {w:?} {vc:?}");
    }

    /// Random single-page and multi-page units (some padded, whole-block with or without filler,
    /// some trims) with versions checked.
    pub fn random_run(
        f: &mut dyn Ftl,
        nand: &mut Nand,
        ppb: u32,
        lbns: u64,
        steps: u32,
        seed: u64,
    ) {
        let mut rng = Rng(seed);
        let mut latest = vec![0u32; (lbns * ppb as u64) as usize];
        let mut v = 0u32;
        for step in 0..steps {
            let Some((lbn, pages, shape)) =
                next_unit(f, &mut rng, ppb, lbns, &mut latest, &mut v, true)
            else {
                continue;
            };
            f.write_unit(Unit::new(lbn, &pages, shape), nand).unwrap();
            if step % 500 == 0 {
                f.check_integrity(&latest).unwrap();
            }
        }
        f.check_integrity(&latest).unwrap();
    }
}
