//! `lines`: a line-based FTL after LightNVM pblk (seed 001; ALGORITHMS.md §3.1). A line is an FTL
//! block that spans the parallel units: one block on each LUN, its pages written round-robin over
//! the LUNs (timed mode's stripe: page p of a line is on LUN p mod LUNs). Host pages enter a ring
//! write buffer as pblk's, each entry carrying its placement tag; the L2P points into the ring
//! until the write thread takes a batch of `batch_pages` entries and programs it. One open line
//! per placement class ([`crate::placement`]; `none` = pblk's single data line, shared by host and
//! GC data), plus optionally a line of GC's own. GC reclaims whole lines: victims by pblk's lists
//! (valid count < ¼, < ½, < full; the fewest-valid line of the first non-empty list), or greedy,
//! cost-benefit or FIFO.
//!
//! As in pblk, a host write invalidates the LPN's flash copy when it enters the ring, and a ring
//! entry overwritten before its batch is still programmed, dead on arrival. Pages left in the ring
//! at the end of a run are not programmed. GC copies enter the same ring a GC request at a time
//! (`pblk_write_gc_to_cache`; or, `gc_write = "direct"`, go straight to their line), and the
//! ring's size, pblk's `pblk_rb_calculate_size` of the device's geometry, is the rate limiter's
//! budget. Paced as pblk, the device is over-provisioned by pblk's rule ([`provision`]).

use super::{Ftl, FtlView, Shape, Unit};
use crate::error::{Result, SimError};
use crate::gc::{Stalls, VictimPolicy, VictimSelector};
use crate::nand::{Cause, Mark, Nand};
use crate::placement::{Class, Classifier};
use crate::units::{alloc_vec, alloc_vec_if, Divisor, Geometry, Lpn};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;
/// How many pages ahead GC prefetches the L2P entries of the pages it will move.
const GC_AHEAD: u32 = 8;
/// An L2P entry with this bit set points into the ring: the low bits are the entry's sequence
/// number (mod 2^31). Physical pages stay below it (checked at construction).
const IN_RING: u32 = 1 << 31;

crate::params! {
    /// The line FTL's parameters (`[ftl.lines]`).
    pub struct Params {
        /// Open user lines for placements whose number of classes is configurable; the lines
        /// actually open are the placement's classes (`none`: 1) plus the GC line, shown in the
        /// resolved configuration. Alias: `open`.
        #[alias = "open"]
        open_lines: u32 = 4,
        /// GC copies go to a line of their own, whatever the placement says.
        gc_line: bool = false,
        /// GC victim: pblk (fewest valid of the first non-empty list: < ¼ valid, < ½, < full) |
        /// greedy | cost-benefit | fifo.
        victim: String = "pblk".into(),
        /// Pages the write thread takes from the ring per batch: pblk's sec_per_write, by default
        /// its min_write_pgs = the device's optimal write size ws_opt (8 sectors on FEMU's
        /// Open-Channel SSD, the seed's platform).
        batch_pages: u32 = 8,
        /// How GC is paced against host writes. `pblk`: pblk's rate limiter (pblk-rl.c): GC
        /// starts when free blocks fall below the over-provisioning less one line and takes a
        /// share of the write budget (the ring's entries in windows of 64) that grows as free
        /// blocks fall, all of it at the reserve of ⌈100 / OP%⌉ lines; the device is
        /// over-provisioned as pblk_set_provision does (device.op unset: pblk's default 11% of
        /// the lines, at least 10; given: refused below that reserve). `burst`: whole lines
        /// collected at once while fewer than `gc_free_lines` are free. `gp`: the SepBIT artifact's log: after each host page, one
        /// line is collected when the garbage fraction of the written pages exceeds `gc_gp`.
        gc: String = "pblk".into(),
        /// GC runs while free lines are below this (`gc = "burst"`); 0 = automatic (open
        /// lines + 2).
        gc_free_lines: u64 = 0,
        /// Garbage fraction that triggers GC, and that a victim must reach (`gc = "gp"`; the
        /// artifact's 0.15).
        gc_gp: f64 = 0.15,
        /// The device's mw_cunits (sectors a LUN must have written after a sector before it
        /// can be read back: 24 on FEMU's Open-Channel SSD, the seed's platform), from which
        /// pblk sizes its ring: pblk_rb_calculate_size((max(mw_cunits, ws_opt) + ws_opt) × luns,
        /// mw_cunits × luns), ws_opt = batch_pages.
        mw_cunits: u32 = 24,
        /// pblk's write_buffer_size module parameter: ring entries asked for, used when above
        /// its default, (max(mw_cunits, ws_opt) + ws_opt) × luns; 0 = that default.
        write_buffer_size: u32 = 0,
        /// How GC copies are written. `ring`: as pblk's pblk_write_gc_to_cache, a collected
        /// line's valid pages are read a GC request at a time (up to pblk's max_write_pgs =
        /// min(batch_pages × luns, 64) sectors) and enter the ring as one run of entries, each
        /// carrying the class placement gives it; the write thread then places them with the
        /// host entries (for size-ema-batch they count in a batch's average class). `direct`:
        /// each copy is programmed at once to its class's line, bypassing the ring (not pblk).
        /// `auto`: ring when paced as pblk (`gc = "pblk"`), direct under `burst` and `gp`
        /// (ssdlab's and the SepBIT artifact's GC, which have no ring).
        gc_write: String = "auto".into(),
        /// Parallel units a line spans (pblk's blk_per_line), which sets the rate limiter's
        /// rounding, the ring's size and the GC request; 0 = the device's channels × chips ×
        /// dies.
        luns: u32 = 0,
        /// Prepare every class's open line at start, as the seed does with its four lines;
        /// false: a class's first line is taken at its first write.
        open_at_start: bool = true,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        if !matches!(
            self.victim.as_str(),
            "pblk" | "greedy" | "cost-benefit" | "fifo"
        ) {
            return Err(crate::error::unknown_value(
                format!("{table}.victim"),
                &self.victim,
                &["pblk", "greedy", "cost-benefit", "fifo"],
            ));
        }
        if self.open_lines == 0 || self.open_lines > 64 {
            return Err(SimError::config(
                format!("{table}.open_lines"),
                format!("{} must be in 1..=64", self.open_lines),
            ));
        }
        if self.batch_pages == 0 || self.batch_pages > 1 << 16 {
            return Err(SimError::config(
                format!("{table}.batch_pages"),
                format!("{} must be in 1..=65536", self.batch_pages),
            ));
        }
        if !matches!(self.gc.as_str(), "pblk" | "burst" | "gp") {
            return Err(crate::error::unknown_value(
                format!("{table}.gc"),
                &self.gc,
                &["pblk", "burst", "gp"],
            ));
        }
        if !(self.gc_gp > 0.0 && self.gc_gp < 1.0) {
            return Err(SimError::config(
                format!("{table}.gc_gp"),
                format!("{} must be in (0, 1)", self.gc_gp),
            ));
        }
        if self.mw_cunits > 1 << 16 {
            return Err(SimError::config(
                format!("{table}.mw_cunits"),
                format!("{} is over 65536", self.mw_cunits),
            ));
        }
        if self.write_buffer_size > 1 << 24 {
            return Err(SimError::config(
                format!("{table}.write_buffer_size"),
                format!("{} is over 16777216 entries", self.write_buffer_size),
            ));
        }
        if !matches!(self.gc_write.as_str(), "auto" | "ring" | "direct") {
            return Err(crate::error::unknown_value(
                format!("{table}.gc_write"),
                &self.gc_write,
                &["auto", "ring", "direct"],
            ));
        }
        if self.gc_free_lines == 1 {
            return Err(SimError::config(
                format!("{table}.gc_free_lines"),
                "must be 0 (automatic) or ≥ 2: GC needs a free line to copy valid pages into",
            ));
        }
        Ok(())
    }
}

/// How GC keeps pace with host writes (`gc`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pacing {
    Pblk(RateLimiter),
    Burst,
    /// The garbage fraction that triggers GC.
    Gp(f64),
}

/// pblk's NVM_MAX_VLBA: the most sectors of one I/O, the rate limiter's window and the
/// largest GC request.
pub const NVM_MAX_VLBA: u64 = 64;

/// pblk's default over-provisioning, in percent of the lines (PBLK_DEFAULT_OP, pblk.h).
pub const PBLK_DEFAULT_OP: u64 = 11;

/// `pblk_rb_calculate_size` (pblk-rb.c, Linux v5.10): the ring's entries for `nr_entries` asked
/// for and a back-pressure `threshold`, a power of two that holds two of the largest I/Os and
/// leaves one beyond the threshold.
pub fn pblk_rb_calculate_size(nr_entries: u64, threshold: u64) -> u64 {
    // 1 << get_count_order(x) is the least power of two ≥ x.
    let thr_sz = (threshold + NVM_MAX_VLBA).next_power_of_two();
    let max_sz = thr_sz.max(nr_entries);
    let mut size = max_sz.next_power_of_two().max(NVM_MAX_VLBA << 1);
    if threshold + NVM_MAX_VLBA >= size {
        size <<= 1;
    }
    size
}

/// The ring's entries as `pblk_rwb_init` sizes them (pblk-init.c, v5.10): threshold =
/// mw_cunits × LUNs, default (max(mw_cunits, ws_opt) + ws_opt) × LUNs, or `write_buffer_size`
/// when larger; ws_opt is `batch_pages` (pblk's sec_per_write is ws_opt unless changed). The
/// seed's device (mw_cunits 24, ws_opt 8, 8 LUNs): threshold 192, 256 asked, 512 entries.
pub fn ring_entries(p: &Params) -> u64 {
    let luns = p.luns.max(1) as u64;
    let (mw, ws) = (p.mw_cunits as u64, p.batch_pages as u64);
    let threshold = mw * luns;
    let asked = (mw.max(ws) + ws) * luns;
    let size = (p.write_buffer_size as u64).max(asked);
    pblk_rb_calculate_size(size, threshold)
}

/// Sectors of one GC request: pblk's max_write_pgs = min(ws_opt × LUNs, NVM_MAX_VLBA)
/// (pblk_core_init), the most valid sectors `pblk_gc_line_prepare_ws` puts in one request.
pub fn gc_request_pages(p: &Params) -> u64 {
    (p.batch_pages as u64 * p.luns.max(1) as u64).min(NVM_MAX_VLBA)
}

/// pblk's OP%: ⌊100 · spare / lines⌋ of `lines` lines, `spare` of them over-provisioned.
pub fn op_pct(lines: u64, spare: u64) -> u64 {
    100 * spare / lines.max(1)
}

/// `pblk_get_min_chks` in lines: the reserve pblk needs at an OP of `op_pct` percent, ⌈100 /
/// OP%⌉ lines ("in a worst case every line has OP invalid sectors: 1/OP lines free one");
/// None at 0%, where none is enough.
pub fn min_chks(op_pct: u64) -> Option<u64> {
    (op_pct > 0).then(|| 100u64.div_ceil(op_pct))
}

/// Whether pblk takes `spare` over-provisioned lines beside `data` lines of data: its
/// over-provisioned lines hold at least its reserve (`pblk_set_provision`).
pub fn pblk_accepts(data: u64, spare: u64) -> bool {
    min_chks(op_pct(data + spare, spare)).is_some_and(|m| spare >= m)
}

/// The fewest over-provisioned lines pblk takes beside `data` lines of data (more spare lines
/// only raise OP% and lower the reserve, so every larger count is taken too).
pub fn min_spare_lines(data: u64) -> u64 {
    // At spare = max(data, 2) OP is ≥ 50% and the reserve 2 lines: the search ends there.
    (1..=data.max(2))
        .find(|&s| pblk_accepts(data, s))
        .unwrap_or(data.max(2))
}

/// The error for `lines` lines, `data` of them data, that pblk refuses; `what` leads the
/// message ("0.07 gives").
fn refused(data: u64, lines: u64, what: &str) -> SimError {
    let spare = lines.saturating_sub(data);
    let pct = op_pct(lines, spare);
    let reserve = match min_chks(pct) {
        Some(m) => format!("its reserve of ⌈100 / {pct}⌉ = {m} lines"),
        None => "a reserve of ⌈100 / OP%⌉ lines, unbounded below 1%".to_string(),
    };
    let least = min_spare_lines(data);
    // Rounded up, so that it gives at least `least` spare lines.
    let rho_min = ((least as f64 / data.max(1) as f64) * 1e4).ceil() / 1e4;
    SimError::config(
        "device.op",
        format!(
            "{what} {spare} over-provisioned lines of {lines} (OP {pct}%), fewer than pblk's rate limiter \
             needs, {reserve} (pblk_get_min_chks); pblk refuses an OP this small when it is given \
             (pblk_set_provision), and so does the line FTL paced as pblk: this device ({data} lines of \
             data) needs device.op ≥ {rho_min} ({least} over-provisioned lines), or leave device.op out \
             for pblk's default (11% of the lines, at least 10), or set ftl.lines.gc = \"burst\""
        ),
    )
}

/// `pblk_set_provision` (pblk-init.c, v5.10) for a line FTL paced as pblk, on `data` lines of
/// data: the over-provisioning ρ and the lines. pblk's OP is that of the device it is given;
/// ssdlab's device is given by its logical capacity, so the spare lines are what changes.
/// - `device.op` given: ⌈data · (1 + ρ)⌉ lines, unless their over-provisioned lines fall short
///   of pblk's reserve of ⌈100 / OP%⌉ lines, which pblk refuses for an OP given ("OP too small
///   to create a sane instance"): a config error naming `device.op` and its least value.
/// - not given: pblk's default, PBLK_DEFAULT_OP = 11% of the lines (the fewest lines T with
///   ⌊T · 89 / 100⌋ ≥ data), raised, as pblk raises an insufficient default, to its reserve at
///   11%, ⌈100 / 11⌉ = 10 lines; a warning names the values (ssdlab's default 0.07 is not
///   pblk's).
pub fn provision(op: Option<f64>, data: u64, warnings: &mut Vec<String>) -> Result<(f64, u64)> {
    let data = data.max(1);
    if let Some(rho) = op {
        let lines = crate::units::physical_blocks(data, rho);
        if !pblk_accepts(data, lines.saturating_sub(data)) {
            return Err(refused(data, lines, &format!("{rho} gives")));
        }
        return Ok((rho, lines));
    }
    let at_default = (100 * data).div_ceil(100 - PBLK_DEFAULT_OP) - data;
    let reserve = min_chks(PBLK_DEFAULT_OP).unwrap_or(1);
    let spare = at_default.max(reserve);
    let rho = spare as f64 / data as f64;
    let ours = crate::units::physical_blocks(data, crate::config::DEFAULT_OP) - data;
    let raised = if spare > at_default {
        format!(
            ", raised to pblk's reserve at that OP, ⌈100 / {PBLK_DEFAULT_OP}⌉ = {reserve} lines,"
        )
    } else {
        ",".to_string()
    };
    warnings.push(format!(
        "device.op is not given: the line FTL paced as pblk (ftl.lines.gc = \"pblk\") over-provisions as \
         pblk does without an OP (pblk_set_provision): its default of {PBLK_DEFAULT_OP}% of the lines{raised} \
         so {spare} over-provisioned lines beside {data} of data, device.op = {rho:.4} (ssdlab's default \
         {} would give {ours}); set device.op to choose it",
        crate::config::DEFAULT_OP
    ));
    Ok((rho, data + spare))
}

/// pblk's rate limiter (`pblk-rl.c`, `pblk_rl_init`, `__pblk_rl_update_rates`), in blocks (one
/// line = `luns` blocks). Free blocks at or above `high`: the whole write budget is the host's.
/// Below: the host gets ⌊free / 2^shift⌋ of the budget's windows (shift = ⌈log2 high⌉ − log2
/// windows), GC the rest, and nothing at or below `rsv`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimiter {
    pub high: u64,
    pub rsv: u64,
    pub shift: u32,
    pub windows: u64,
}

impl RateLimiter {
    /// For `lines` lines of which `data_lines` hold logical data, `luns` blocks a line and a
    /// budget of `windows` windows (the ring's entries / NVM_MAX_VLBA, a power of two). pblk's
    /// op_blks are the lines beyond the data; high = op_blks − one line (the metadata blocks
    /// are not modelled); rsv = ⌈100 / OP%⌉ lines, OP% = ⌊100 · op lines / lines⌋
    /// (pblk_get_min_chks), which the op lines must hold, as pblk_set_provision requires.
    pub fn new(lines: u64, data_lines: u64, luns: u64, windows: u64) -> Result<RateLimiter> {
        let op_lines = lines.saturating_sub(data_lines);
        if !pblk_accepts(data_lines, op_lines) {
            return Err(refused(data_lines, lines, "the device has"));
        }
        let rsv_lines = min_chks(op_pct(lines, op_lines)).unwrap_or(op_lines);
        let high = (op_lines - 1).max(1) * luns;
        let high_pw = 64 - (high - 1).leading_zeros();
        Ok(RateLimiter {
            high,
            rsv: rsv_lines * luns,
            shift: high_pw.saturating_sub(windows.trailing_zeros()),
            windows,
        })
    }

    /// The host's windows of the budget at `free` free blocks (GC has the rest).
    pub fn user_windows(&self, free: u64) -> u64 {
        if free >= self.high {
            self.windows
        } else if free <= self.rsv {
            0
        } else {
            (free >> self.shift).min(self.windows)
        }
    }
}

impl Params {
    /// `gc_write` with `auto` replaced: whether GC copies go through the ring.
    pub fn gc_through_ring(&self) -> bool {
        match self.gc_write.as_str() {
            "auto" => self.gc == "pblk",
            w => w == "ring",
        }
    }

    /// `gc_free_lines` with 0 (automatic) replaced, for `open` open lines.
    pub fn gc_threshold(&self, open: u64) -> u64 {
        if self.gc_free_lines == 0 {
            open + 2
        } else {
            self.gc_free_lines
        }
    }

    /// Lines needed beyond the logical ones: the GC reserve, the open lines and one.
    pub fn spare_lines(&self, open: u64) -> u64 {
        self.gc_threshold(open) + open + 1
    }
}

/// pblk's GC lists (`pblk_line_gc_list`): closed lines by valid sectors.
const HIGH: u8 = 0; // < ¼ of the line valid (with the fully invalid ones)
const MID: u8 = 1; // < ½
const LOW: u8 = 2; // < full
const FULL: u8 = 3; // fully valid: never collected
const NOT_LISTED: u8 = u8::MAX;

/// Which of pblk's GC lists a closed line with `valid` valid pages belongs in.
#[derive(Clone, Copy)]
struct ListBounds {
    quarter: u32,
    half: u32,
    full: u32,
}

impl ListBounds {
    fn new(line_pages: u32) -> ListBounds {
        ListBounds {
            quarter: line_pages / 4,
            half: line_pages / 2,
            full: line_pages,
        }
    }

    fn list_of(&self, valid: u32) -> u8 {
        if valid < self.quarter {
            HIGH
        } else if valid < self.half {
            MID
        } else if valid < self.full {
            LOW
        } else {
            FULL
        }
    }
}

/// pblk's victim choice: closed lines in four lists by valid count (`pblk_line_gc_list`); the
/// victim is the fewest-valid line of the first non-empty list of high, mid, low, ties to the
/// earliest in its list (`pblk_gc_get_victim_line`; a line joins a list's tail when it enters it).
/// The lists are ranges of valid counts in order, so that line is the fewest-valid line of all
/// (fully valid ones excepted) and, among those, the one that entered its list first. Lines are
/// kept in buckets by valid count with the time they entered their list: a victim costs a scan
/// of one bucket, not of a list.
struct PblkLists {
    bounds: ListBounds,
    /// Each line's list (NOT_LISTED: open, free or taken) and when it entered it.
    list: Vec<u8>,
    entered: Vec<u64>,
    seq: u64,
    /// Buckets by valid count (0..=full), doubly linked.
    prev: Vec<u32>,
    next: Vec<u32>,
    head: Vec<u32>,
    /// No bucket below this holds a line.
    lowest: usize,
}

impl PblkLists {
    fn new(lines: usize, line_pages: u32) -> PblkLists {
        PblkLists {
            bounds: ListBounds::new(line_pages),
            list: vec![NOT_LISTED; lines],
            entered: vec![0; lines],
            seq: 0,
            prev: vec![NONE; lines],
            next: vec![NONE; lines],
            head: vec![NONE; line_pages as usize + 1],
            lowest: 0,
        }
    }

    fn push(&mut self, l: u32, valid: u32) {
        let h = self.head[valid as usize];
        self.prev[l as usize] = NONE;
        self.next[l as usize] = h;
        if h != NONE {
            self.prev[h as usize] = l;
        }
        self.head[valid as usize] = l;
        self.lowest = self.lowest.min(valid as usize);
    }

    fn remove(&mut self, l: u32, valid: u32) {
        let (p, n) = (self.prev[l as usize], self.next[l as usize]);
        if p == NONE {
            self.head[valid as usize] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
    }

    fn enter(&mut self, l: u32, which: u8) {
        self.list[l as usize] = which;
        self.entered[l as usize] = self.seq;
        self.seq += 1;
    }

    fn seal(&mut self, l: u32, valid: u32) {
        self.enter(l, self.bounds.list_of(valid));
        self.push(l, valid);
    }

    /// Line `l` lost a page; `valid` is its new count.
    #[inline]
    fn on_invalidate(&mut self, l: u32, valid: u32) {
        let now = self.list[l as usize];
        if now != NOT_LISTED {
            self.remove(l, valid + 1);
            self.push(l, valid);
            let to = self.bounds.list_of(valid);
            if to != now {
                self.enter(l, to);
            }
        }
    }

    /// Take line `l` (holding `valid` pages) out: it is the victim.
    fn unlink(&mut self, l: u32, valid: u32) {
        self.remove(l, valid);
        self.list[l as usize] = NOT_LISTED;
    }

    fn peek(&mut self) -> Option<u32> {
        while self.lowest < self.bounds.full as usize && self.head[self.lowest] == NONE {
            self.lowest += 1;
        }
        if self.lowest >= self.bounds.full as usize {
            return None;
        }
        let (mut cur, mut best) = (self.head[self.lowest], NONE);
        while cur != NONE {
            if best == NONE || self.entered[cur as usize] < self.entered[best as usize] {
                best = cur;
            }
            cur = self.next[cur as usize];
        }
        Some(best)
    }
}

enum Victims {
    Pblk(PblkLists),
    Other(VictimSelector),
}

/// A ring entry: a host page (or, with GC through the ring, a GC copy) waiting for the write
/// thread.
#[derive(Clone, Copy)]
struct Entry {
    lpn: u32,
    tag: u32,
    version: u32,
    gc: bool,
    /// The read its data came with (a GC copy's, a read-modify-write's): its program waits for it.
    after: Mark,
}

pub struct LinesFtl {
    line_pages: u32,
    line_of: Divisor,
    logical_pages: u64,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    valid: Vec<u32>,
    /// Pages programmed in each line (its write pointer).
    written: Vec<u32>,
    /// Each line's class (the open line it was) and the logical time it was opened.
    class: Vec<u32>,
    opened: Vec<u64>,
    free: VecDeque<u32>,
    /// The open line of each class (NONE: none yet); the last is GC's own with `gc_line`.
    open: Vec<u32>,
    gc_line: bool,
    /// GC copies enter the ring a GC request at a time (`gc_write = "ring"`, or the
    /// placement's `gc_through_ring`); else they are programmed at once.
    gc_ring: bool,
    /// Sectors of one GC request (pblk's max_write_pgs), and the requests entered so far.
    gc_request: u32,
    gc_requests: u64,
    /// The ring's size (pblk_rb_calculate_size): the rate limiter's budget.
    ring_entries: u64,
    victims: Victims,
    classifier: Box<dyn Classifier>,
    per_batch: bool,
    ring: VecDeque<Entry>,
    /// Sequence number of the ring's front entry.
    ring_front: u32,
    batch_pages: usize,
    batch_tags: Vec<u32>,
    gc_threshold: u64,
    pacing: Pacing,
    /// Blocks a line spans (the rate limiter counts free blocks).
    luns: u64,
    /// GC copies owed to the rate limiter, in host windows (one copy per `user` credits);
    /// negative after a GC request larger than what was owed (pblk checks GC's share of the
    /// ring before it inserts a request, not after).
    gc_credit: i64,
    /// The line GC is collecting page by page (NONE: none) and its next offset.
    gc_victim: u32,
    gc_cursor: u32,
    /// Sealed lines (the garbage fraction counts their invalid pages, as the artifact does).
    sealed: Vec<bool>,
    /// Invalid pages of sealed lines, and pages written in all lines not free.
    garbage: u64,
    used: u64,
    /// Host pages that waited for GC at the rate limiter's reserve, and collections forced
    /// by a lack of free lines outside burst GC.
    rl_stalls: u64,
    backstop: u64,
    in_gc: bool,
    /// Logical time: host pages programmed so far.
    now: u64,
    check: bool,
    oob_version: Vec<u32>,
    expected: Vec<u32>,
    gc_counts: crate::gc::Counts,
    /// Victims without a valid page (freed without copying; pblk frees them at once).
    gc_empty: u64,
    /// Ring entries programmed after a newer write of their LPN (dead on arrival).
    stale_programs: u64,
    /// Host pages (padding filler not counted) and GC copies programmed into each line class
    /// (k < 8).
    class_pages: [u64; 8],
    class_gc_pages: [u64; 8],
}

impl LinesFtl {
    pub fn new(
        geo: &Geometry,
        p: &Params,
        classifier: Box<dyn Classifier>,
        check: bool,
    ) -> Result<LinesFtl> {
        let line_pages = geo.pages_per_block as u32;
        let lines = geo.physical_blocks;
        let phys_pages = geo.physical_pages();
        super::check_ppn_range(phys_pages, IN_RING, "the line FTL")?;
        let classes = classifier.classes();
        let open = classes as u64 + p.gc_line as u64;
        let threshold = p.gc_threshold(open);
        let luns = p.luns.max(1) as u64;
        let ring_entries = ring_entries(p);
        let pacing = match p.gc.as_str() {
            "burst" => Pacing::Burst,
            "gp" => Pacing::Gp(p.gc_gp),
            _ => Pacing::Pblk(RateLimiter::new(
                lines,
                geo.logical_blocks(),
                luns,
                ring_entries / NVM_MAX_VLBA,
            )?),
        };
        // Paced GC needs one line to copy into beyond the open ones; burst GC its reserve.
        let spare = match pacing {
            Pacing::Burst => p.spare_lines(open),
            _ => open + 2,
        };
        let need = geo.logical_blocks() + spare;
        if lines < need {
            let min_op = need as f64 / geo.logical_blocks() as f64 - 1.0;
            return Err(SimError::config(
                "device.op",
                format!(
                    "{lines} lines cannot hold {} lines of data plus {threshold} GC-reserve and {open} open \
                     lines: this device needs device.op ≥ {min_op:.3} (or a larger device, or fewer \
                     ftl.lines.gc_free_lines / placement classes)",
                    geo.logical_blocks()
                ),
            ));
        }
        let victims = match p.victim.as_str() {
            "pblk" => Victims::Pblk(PblkLists::new(lines as usize, line_pages)),
            other => Victims::Other(VictimSelector::new(
                VictimPolicy::from_name(other)?,
                lines as usize,
                line_pages,
            )),
        };
        let mut f = LinesFtl {
            line_pages,
            line_of: Divisor::new(line_pages as u64),
            logical_pages: geo.logical_pages,
            l2p: alloc_vec(geo.logical_pages, NONE, "the L2P table")?,
            p2l: alloc_vec(phys_pages, NONE, "the P2L table")?,
            valid: vec![0; lines as usize],
            written: vec![0; lines as usize],
            class: vec![0; lines as usize],
            opened: vec![0; lines as usize],
            free: (0..lines as u32).collect(),
            open: vec![NONE; open as usize],
            gc_line: p.gc_line,
            gc_ring: p.gc_through_ring() || classifier.gc_through_ring(),
            gc_request: gc_request_pages(p) as u32,
            gc_requests: 0,
            ring_entries,
            victims,
            per_batch: classifier.per_batch(),
            classifier,
            ring: VecDeque::with_capacity(p.batch_pages as usize + 1),
            ring_front: 0,
            batch_pages: p.batch_pages as usize,
            batch_tags: Vec::with_capacity(p.batch_pages as usize),
            gc_threshold: threshold,
            pacing,
            luns,
            gc_credit: 0,
            gc_victim: NONE,
            gc_cursor: 0,
            sealed: vec![false; lines as usize],
            garbage: 0,
            used: 0,
            rl_stalls: 0,
            backstop: 0,
            in_gc: false,
            now: 0,
            check,
            oob_version: alloc_vec_if(check, phys_pages, 0, "integrity versions")?,
            expected: alloc_vec_if(check, geo.logical_pages, 0, "integrity versions")?,
            gc_counts: crate::gc::Counts::default(),
            gc_empty: 0,
            stale_programs: 0,
            class_pages: [0; 8],
            class_gc_pages: [0; 8],
        };
        if p.open_at_start {
            for k in 0..f.open.len() {
                f.open_line(k);
            }
        }
        Ok(f)
    }

    /// Take a free line as class `k`'s open line (the caller checked one is free).
    fn open_line(&mut self, k: usize) -> u32 {
        let l = self.free.pop_front().expect("a free line");
        self.open[k] = l;
        self.class[l as usize] = k as u32;
        self.opened[l as usize] = self.now;
        self.written[l as usize] = 0;
        l
    }

    /// The rate limiter, if GC is paced by pblk's.
    pub fn rate_limiter(&self) -> Option<RateLimiter> {
        match self.pacing {
            Pacing::Pblk(rl) => Some(rl),
            _ => None,
        }
    }

    /// The ring's entries (pblk_rb_calculate_size), the rate limiter's budget.
    pub fn ring_entries(&self) -> u64 {
        self.ring_entries
    }

    /// Open lines (placement classes plus the GC line).
    pub fn open_lines(&self) -> usize {
        self.open.len()
    }

    #[inline(always)]
    fn invalidate(&mut self, ppn: u32) {
        let l = self.line_of.quot(ppn as u64) as u32;
        self.p2l[ppn as usize] = NONE;
        self.valid[l as usize] -= 1;
        self.garbage += self.sealed[l as usize] as u64;
        let v = self.valid[l as usize];
        match &mut self.victims {
            Victims::Pblk(p) => p.on_invalidate(l, v),
            Victims::Other(s) => s.on_invalidate(l, v),
        }
    }

    /// The next free page of open line `k`, opening a new line (and collecting) when needed.
    #[inline(always)]
    fn next_ppn(&mut self, k: usize, nand: &mut Nand) -> Result<u32> {
        let l = self.open[k];
        if l != NONE && self.written[l as usize] < self.line_pages {
            let off = self.written[l as usize];
            self.written[l as usize] += 1;
            return Ok(l * self.line_pages + off);
        }
        self.next_ppn_slow(k, nand)
    }

    #[cold]
    #[inline(never)]
    fn next_ppn_slow(&mut self, k: usize, nand: &mut Nand) -> Result<u32> {
        let l = self.open[k];
        if l != NONE {
            self.seal(l);
            self.open[k] = NONE;
        }
        if !self.in_gc {
            let free = self.free.len() as u64;
            match self.pacing {
                Pacing::Burst if free < self.gc_threshold => self.collect(nand)?,
                // Paced GC fell behind: collect until a line can be spared.
                Pacing::Pblk(_) | Pacing::Gp(_) if free < 2 => {
                    self.backstop += 1;
                    self.collect_until(2, nand)?;
                }
                _ => {}
            }
        }
        // GC may have opened this class's line while copying.
        if self.open[k] != NONE {
            return self.next_ppn(k, nand);
        }
        if self.free.is_empty() {
            return Err(SimError::Invalid(format!(
                "the line FTL needed a new line for class {k} and none was free: GC copies opened more lines \
                 than ftl.lines.gc_free_lines ({}) keeps; raise it to at least the number of lines GC copies go \
                 to plus one (or device.op)",
                self.gc_threshold
            )));
        }
        let l = self.open_line(k);
        self.written[l as usize] = 1;
        Ok(l * self.line_pages)
    }

    fn seal(&mut self, l: u32) {
        let v = self.valid[l as usize];
        self.sealed[l as usize] = true;
        self.garbage += (self.written[l as usize] - v) as u64;
        match &mut self.victims {
            Victims::Pblk(p) => p.seal(l, v),
            Victims::Other(s) => s.on_seal(l, v, self.now),
        }
        self.classifier.sealed(self.class[l as usize], self.now);
    }

    /// Program `lpn` (version `version`) at open line `k`. `live`: the page is its LPN's newest
    /// copy (mapped); otherwise it is dead on arrival (a stale ring entry).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn program(
        &mut self,
        lpn: u32,
        version: u32,
        cause: Cause,
        k: usize,
        live: bool,
        after: Mark,
        nand: &mut Nand,
    ) -> Result<u32> {
        let ppn = self.next_ppn(k, nand)?;
        self.used += 1;
        if live {
            self.l2p[lpn as usize] = ppn;
            self.p2l[ppn as usize] = lpn;
            self.valid[self.line_of.quot(ppn as u64) as usize] += 1;
        }
        if self.check {
            self.oob_version[ppn as usize] = version;
        }
        nand.program_after(cause, ppn, after);
        Ok(ppn)
    }

    /// A host page enters the ring: its flash copy (if any) is invalid from now on.
    #[inline(always)]
    fn enter_ring(&mut self, lpn: u32, tag: u32, version: u32, gc: bool, after: Mark) {
        let old = self.l2p[lpn as usize];
        if old != NONE && old & IN_RING == 0 {
            self.invalidate(old);
        }
        let seq = self.ring_front.wrapping_add(self.ring.len() as u32);
        self.l2p[lpn as usize] = IN_RING | (seq & !IN_RING);
        self.ring.push_back(Entry {
            lpn,
            tag,
            version,
            gc,
            after,
        });
        if self.check {
            self.expected[lpn as usize] = version;
        }
    }

    /// The write thread: take batches of `batch_pages` entries while the ring holds one.
    #[inline]
    fn drain(&mut self, nand: &mut Nand) -> Result<()> {
        while self.ring.len() >= self.batch_pages {
            self.write_batch(self.batch_pages, nand)?;
        }
        Ok(())
    }

    /// Program the ring's first `n` entries: each to its class's line, or all to the batch's.
    fn write_batch(&mut self, n: usize, nand: &mut Nand) -> Result<()> {
        let batch_class = if self.per_batch {
            // GC entries bound for GC's own line are not in the batch's average.
            let own = self.gc_line;
            self.batch_tags.clear();
            self.batch_tags.extend(
                self.ring
                    .iter()
                    .take(n)
                    .filter(|e| !(own && e.gc))
                    .map(|e| e.tag),
            );
            Some(self.classifier.batch_class(&self.batch_tags))
        } else {
            None
        };
        for _ in 0..n {
            if self.ring.front().is_some_and(|e| e.gc) {
                self.write_gc_entry(batch_class, nand)?;
                continue;
            }
            // With GC copies written directly, the rate limiter is met here, before each host
            // page is programmed; through the ring it was met when the page entered it.
            if !self.gc_ring {
                self.pace(nand)?;
            }
            // The entry leaves the ring only once placed: GC, which may run while it is, sees
            // the L2P still pointing at it.
            let e = *self.ring.front().expect("n ≤ ring length");
            // The clock counts this page before it is placed (the artifact's accessId), so a
            // page's age at a later GC is the host pages written since.
            self.now += 1;
            let (k, cause, live) = if e.lpn == NONE {
                // Padding filler: no data, dead at once; placement does not see it.
                (
                    self.check_class(batch_class.unwrap_or(0))?,
                    Cause::Pad,
                    false,
                )
            } else {
                let live = self.l2p[e.lpn as usize] == IN_RING | (self.ring_front & !IN_RING);
                let k = match batch_class {
                    Some(c) => c,
                    None => self.classifier.user(e.lpn as Lpn, e.tag, self.now),
                };
                let k = self.check_class(k)?;
                if let Some(c) = self.class_pages.get_mut(k) {
                    *c += 1;
                }
                if !live {
                    self.stale_programs += 1;
                }
                (k, Cause::Host, live)
            };
            self.program(e.lpn, e.version, cause, k, live, e.after, nand)?;
            self.ring.pop_front();
            self.ring_front = self.ring_front.wrapping_add(1);
            if let Pacing::Gp(t) = self.pacing {
                self.collect_over_gp(t, nand)?;
            }
        }
        Ok(())
    }

    /// Program the ring's front entry, a GC copy: to the batch's line, or to the class it
    /// carries. It is GC's share of the budget (no pacing) and no host page (the clock stands).
    fn write_gc_entry(&mut self, batch_class: Option<Class>, nand: &mut Nand) -> Result<()> {
        let e = *self.ring.front().expect("a GC entry");
        let k = if self.gc_line {
            e.tag as usize // GC's own line
        } else {
            self.check_class(batch_class.unwrap_or(e.tag))?
        };
        // A host write or trim of the LPN since GC copied it leaves the copy dead on arrival.
        let live =
            e.lpn != NONE && self.l2p[e.lpn as usize] == IN_RING | (self.ring_front & !IN_RING);
        if !live {
            self.stale_programs += 1;
        }
        if let Some(c) = self.class_gc_pages.get_mut(k) {
            *c += 1;
        }
        self.program(e.lpn, e.version, Cause::Gc, k, live, e.after, nand)?;
        self.ring.pop_front();
        self.ring_front = self.ring_front.wrapping_add(1);
        if let Pacing::Gp(t) = self.pacing {
            self.collect_over_gp(t, nand)?;
        }
        Ok(())
    }

    /// pblk's rate limiter before a host page: at the reserve GC alone runs until free blocks
    /// are above it; between the reserve and `high`, GC takes its share of the budget: (windows
    /// − user) / user copies per host page, a GC request at a time through the ring (the write
    /// thread programs the ring meanwhile while the host waits), a page at a time directly.
    fn pace(&mut self, nand: &mut Nand) -> Result<()> {
        let Pacing::Pblk(rl) = self.pacing else {
            return Ok(());
        };
        let mut user = rl.user_windows(self.free.len() as u64 * self.luns);
        if user == rl.windows {
            self.gc_credit = 0;
            return Ok(());
        }
        if user == 0 {
            self.rl_stalls += 1;
            while user == 0 {
                if self.gc_step(nand)?.is_none() {
                    return Err(SimError::Invalid(format!(
                        "pblk's rate limiter gives host writes no share at {} free lines (GC starts below {}, \
                         host writes wait below {} with a ring of {} entries), and no closed line holds garbage \
                         to collect: pblk would wait forever; raise device.op, open fewer lines, or give \
                         ftl.lines.write_buffer_size a larger ring",
                        self.free.len(),
                        rl.high / self.luns,
                        (1u64 << rl.shift).div_ceil(self.luns).max(rl.rsv / self.luns + 1),
                        self.ring_entries
                    )));
                }
                if self.gc_ring {
                    self.drain(nand)?;
                }
                user = rl.user_windows(self.free.len() as u64 * self.luns);
            }
            return Ok(());
        }
        let (user, share) = (user as i64, (rl.windows - user) as i64);
        self.gc_credit += share;
        while self.gc_credit >= user {
            match self.gc_step(nand)? {
                Some(moved) => self.gc_credit -= user * moved.max(1) as i64,
                None => {
                    self.gc_credit = 0;
                    break;
                }
            }
        }
        Ok(())
    }

    /// One step of paced GC on the line being collected (choosing a victim first if none is):
    /// through the ring, its next GC request (erasing the line once it holds no valid page);
    /// directly, its next valid page, or its erase once it holds none. The pages copied; None:
    /// nothing to collect.
    fn gc_step(&mut self, nand: &mut Nand) -> Result<Option<u32>> {
        if self.gc_victim == NONE {
            let Some(v) = self.take_victim() else {
                return Ok(None);
            };
            self.gc_counts.invocations += 1;
            self.begin_victim(v);
            self.gc_victim = v;
            self.gc_cursor = 0;
        }
        let v = self.gc_victim;
        self.in_gc = true;
        let r = self.step_victim(v, nand);
        self.in_gc = false;
        let moved = r?;
        if self.check && self.gc_victim == NONE {
            self.check_structure()?;
            self.check_versions(&self.expected)?;
        }
        Ok(Some(moved))
    }

    /// The next step of collecting victim `v` from `gc_cursor` (see [`LinesFtl::gc_step`]): the
    /// pages copied.
    fn step_victim(&mut self, v: u32, nand: &mut Nand) -> Result<u32> {
        if self.gc_ring {
            return self.gc_request(v, nand);
        }
        let base = v * self.line_pages;
        while self.gc_cursor < self.written[v as usize] {
            let src = base + self.gc_cursor;
            self.gc_cursor += 1;
            if self.p2l[src as usize] != NONE {
                self.move_page(src, nand)?;
                return Ok(1);
            }
        }
        self.gc_victim = NONE;
        self.finish_victim(v, nand)?;
        Ok(0)
    }

    /// pblk_gc_line_prepare_ws and pblk_write_gc_to_cache: the next up to `gc_request` valid
    /// pages of victim `v` enter the ring as one run of entries; the victim is erased once it
    /// holds no valid page (its data is in the ring, as pblk puts a line back once its GC
    /// requests are in the write buffer).
    fn gc_request(&mut self, v: u32, nand: &mut Nand) -> Result<u32> {
        let base = v * self.line_pages;
        let mut moved = 0;
        while moved < self.gc_request
            && self.valid[v as usize] > 0
            && self.gc_cursor < self.written[v as usize]
        {
            let src = base + self.gc_cursor;
            self.gc_cursor += 1;
            // The L2P entries GC rewrites are random: start loading them a few pages ahead.
            if let Some(&ahead) = self.p2l.get((src + GC_AHEAD) as usize) {
                crate::units::prefetch_once(&self.l2p, ahead as usize);
            }
            if self.p2l[src as usize] != NONE {
                self.move_page(src, nand)?;
                moved += 1;
            }
        }
        self.gc_requests += (moved > 0) as u64;
        if self.valid[v as usize] == 0 {
            self.gc_victim = NONE;
            self.finish_victim(v, nand)?;
        }
        Ok(moved)
    }

    /// The SepBIT artifact's GC: when the garbage fraction of the written pages exceeds `t`,
    /// collect one sealed line whose own garbage fraction reaches `t` (the victim policy's
    /// choice; none if it falls short).
    fn collect_over_gp(&mut self, t: f64, nand: &mut Nand) -> Result<()> {
        if self.in_gc || (self.garbage as f64) <= t * self.used as f64 {
            return Ok(());
        }
        let lp = self.line_pages;
        if let Some(v) = self.take_victim_if(|valid| ((lp - valid) as f64) >= t * lp as f64) {
            self.in_gc = true;
            self.gc_counts.invocations += 1;
            let r = self.reclaim(v, nand);
            self.in_gc = false;
            r?;
        }
        Ok(())
    }

    #[inline(always)]
    fn check_class(&self, c: Class) -> Result<usize> {
        let k = c as usize;
        if k < self.open.len() {
            Ok(k)
        } else {
            Err(SimError::Invalid(format!(
                "placement chose line class {c}, but only {} lines are open",
                self.open.len()
            )))
        }
    }

    /// Reclaim lines until the free pool is back at the threshold.
    fn collect(&mut self, nand: &mut Nand) -> Result<()> {
        self.collect_until(self.gc_threshold, nand)
    }

    fn collect_until(&mut self, threshold: u64, nand: &mut Nand) -> Result<()> {
        self.in_gc = true;
        self.gc_counts.invocations += 1;
        let r = self.collect_inner(threshold, nand);
        self.in_gc = false;
        r?;
        if self.check {
            self.check_structure()?;
            self.check_versions(&self.expected)?;
        }
        Ok(())
    }

    /// The victim policy's next line, taken out of its lists.
    fn take_victim(&mut self) -> Option<u32> {
        self.take_victim_if(|_| true)
    }

    /// The victim policy's next line if `accept(its valid pages)`, taken out of its lists; else
    /// None, the lists unchanged.
    fn take_victim_if(&mut self, accept: impl Fn(u32) -> bool) -> Option<u32> {
        let valid = &self.valid;
        let ok = |l: u32| accept(valid[l as usize]);
        match &mut self.victims {
            Victims::Pblk(p) => {
                let l = p.peek().filter(|&l| ok(l))?;
                p.unlink(l, valid[l as usize]);
                Some(l)
            }
            Victims::Other(s) => {
                let l = s
                    .peek_victim(self.now, |l| valid[l as usize])
                    .filter(|&l| ok(l))?;
                s.remove(l, valid[l as usize]);
                Some(l)
            }
        }
    }

    fn collect_inner(&mut self, threshold: u64, nand: &mut Nand) -> Result<()> {
        let mut stalls = Stalls::default();
        while (self.free.len() as u64) < threshold {
            // A line paced GC was collecting is finished first.
            if self.gc_victim != NONE {
                let v = self.gc_victim;
                while self.gc_victim != NONE {
                    self.step_victim(v, nand)?;
                }
                continue;
            }
            let victim = self.take_victim().ok_or_else(|| {
                SimError::Invalid(
                    "GC found no line to collect: every closed line is fully valid (raise device.op)"
                        .into(),
                )
            })?;
            let full = self.valid[victim as usize] == self.line_pages;
            stalls.victim(full, self.valid.len(), "victim line")?;
            self.reclaim(victim, nand)?;
        }
        Ok(())
    }

    /// Move the valid pages of line `victim` to the lines placement chooses (through the ring,
    /// GC request by GC request), and erase it.
    fn reclaim(&mut self, victim: u32, nand: &mut Nand) -> Result<()> {
        self.begin_victim(victim);
        if self.gc_ring {
            // Paced GC's line, if any, is finished first (collect_inner): the cursor is free.
            debug_assert_eq!(self.gc_victim, NONE);
            self.gc_victim = victim;
            self.gc_cursor = 0;
            while self.gc_victim != NONE {
                self.gc_request(victim, nand)?;
            }
            return Ok(());
        }
        let base = victim * self.line_pages;
        for off in 0..self.written[victim as usize] {
            let src = base + off;
            // The L2P entries GC rewrites are random: start loading them a few pages ahead.
            if let Some(&ahead) = self.p2l.get((src + GC_AHEAD) as usize) {
                crate::units::prefetch_once(&self.l2p, ahead as usize);
            }
            if self.p2l[src as usize] != NONE {
                self.move_page(src, nand)?;
            }
        }
        self.finish_victim(victim, nand)
    }

    fn begin_victim(&mut self, victim: u32) {
        let from = self.class[victim as usize];
        self.classifier
            .collected(from, self.opened[victim as usize], self.now);
        if self.valid[victim as usize] == 0 {
            self.gc_empty += 1;
        }
    }

    /// Copy valid page `src` of a victim to the line placement chooses.
    fn move_page(&mut self, src: u32, nand: &mut Nand) -> Result<()> {
        let lpn = self.p2l[src as usize];
        let from = self.class[self.line_of.quot(src as u64) as usize];
        let c = self.classifier.gc(lpn as Lpn, from, self.now);
        let k = if self.gc_line {
            self.open.len() - 1 // GC's own line
        } else {
            self.check_class(c)?
        };
        let version = if self.check {
            self.oob_version[src as usize]
        } else {
            0
        };
        // A copy: its program waits for its read.
        nand.read(Cause::Gc, src);
        let read = nand.mark();
        self.gc_counts.moved_pages += 1;
        if self.gc_ring {
            // pblk_write_gc_to_cache: the copy waits in the ring with the host entries.
            self.enter_ring(lpn, k as u32, version, true, read);
            return Ok(());
        }
        self.invalidate(src);
        self.program(lpn, version, Cause::Gc, k, true, read, nand)?;
        if let Some(c) = self.class_gc_pages.get_mut(k) {
            *c += 1;
        }
        Ok(())
    }

    /// Erase a victim whose pages are all invalid and return it to the free pool.
    fn finish_victim(&mut self, victim: u32, nand: &mut Nand) -> Result<()> {
        debug_assert_eq!(self.valid[victim as usize], 0);
        let w = self.written[victim as usize] as u64;
        self.garbage -= w;
        self.used -= w;
        self.sealed[victim as usize] = false;
        self.written[victim as usize] = 0;
        nand.erase(victim);
        self.free.push_back(victim);
        self.gc_counts.victims += 1;
        Ok(())
    }

    fn ring_version(&self, seq: u32) -> u32 {
        let i = (seq.wrapping_sub(self.ring_front) & !IN_RING) as usize;
        self.ring.get(i).map_or(0, |e| e.version)
    }

    fn check_versions(&self, latest: &[u32]) -> Result<()> {
        for (lpn, &want) in latest.iter().enumerate() {
            let p = self.l2p[lpn];
            let stored = if p == NONE {
                None
            } else if p & IN_RING != 0 {
                Some((p, self.ring_version(p & !IN_RING)))
            } else {
                Some((p, self.oob_version[p as usize]))
            };
            super::check_version(lpn, want, stored)?;
        }
        Ok(())
    }

    /// L2P and P2L agree, valid counts match, ring markers point at entries of their LPN.
    fn check_structure(&self) -> Result<()> {
        super::check_p2l(&self.l2p, &self.p2l, &self.valid, self.line_pages, "line")?;
        for (lpn, &p) in self.l2p.iter().enumerate() {
            if p == NONE {
                continue;
            }
            if p & IN_RING != 0 {
                let i = ((p & !IN_RING).wrapping_sub(self.ring_front) & !IN_RING) as usize;
                if self.ring.get(i).map(|e| e.lpn) != Some(lpn as u32) {
                    return Err(SimError::Integrity(format!(
                        "LPN {lpn} points at ring entry {i}, which does not hold it"
                    )));
                }
            } else if self.p2l[p as usize] != lpn as u32 {
                return Err(SimError::Integrity(format!(
                    "LPN {lpn} maps to PPN {p}, which does not hold it"
                )));
            }
        }
        Ok(())
    }

    pub fn free_lines(&self) -> usize {
        self.free.len()
    }

    /// Its free units (lines), as the flat view reports them.
    fn free_blocks(&self) -> usize {
        self.free.len()
    }
}

/// Per-class metric names (classes 0..8).
const CLASS_PAGES: [&str; 8] = [
    "ftl.lines.class0_host_pages",
    "ftl.lines.class1_host_pages",
    "ftl.lines.class2_host_pages",
    "ftl.lines.class3_host_pages",
    "ftl.lines.class4_host_pages",
    "ftl.lines.class5_host_pages",
    "ftl.lines.class6_host_pages",
    "ftl.lines.class7_host_pages",
];
const CLASS_GC_PAGES: [&str; 8] = [
    "ftl.lines.class0_gc_pages",
    "ftl.lines.class1_gc_pages",
    "ftl.lines.class2_gc_pages",
    "ftl.lines.class3_gc_pages",
    "ftl.lines.class4_gc_pages",
    "ftl.lines.class5_gc_pages",
    "ftl.lines.class6_gc_pages",
    "ftl.lines.class7_gc_pages",
];
const CLASS_LINES: [&str; 8] = [
    "ftl.lines.class0_lines",
    "ftl.lines.class1_lines",
    "ftl.lines.class2_lines",
    "ftl.lines.class3_lines",
    "ftl.lines.class4_lines",
    "ftl.lines.class5_lines",
    "ftl.lines.class6_lines",
    "ftl.lines.class7_lines",
];
const CLASS_VALID: [&str; 8] = [
    "ftl.lines.class0_valid_pages",
    "ftl.lines.class1_valid_pages",
    "ftl.lines.class2_valid_pages",
    "ftl.lines.class3_valid_pages",
    "ftl.lines.class4_valid_pages",
    "ftl.lines.class5_valid_pages",
    "ftl.lines.class6_valid_pages",
    "ftl.lines.class7_valid_pages",
];

impl FtlView for LinesFtl {
    super::flat_view!();
    /// The L2P entry and, with `deep`, the P2L entry and line valid count of the page's flash
    /// copy (invalidated when the page enters the ring), as the page FTL does.
    #[inline]
    fn prefetch(&self, lpn: Lpn, deep: bool) {
        if deep {
            if let Some(&old) = self.l2p.get(lpn as usize) {
                if old & IN_RING == 0 {
                    crate::units::prefetch_once(&self.p2l, old as usize);
                    let line = self.line_of.quot(old as u64) as usize;
                    crate::units::prefetch(&self.valid, line);
                }
            }
        } else {
            crate::units::prefetch_once(&self.l2p, lpn as usize);
        }
    }
}

impl Ftl for LinesFtl {
    fn write_unit(&mut self, unit: Unit<'_>, nand: &mut Nand) -> Result<()> {
        let first = unit.lbn * self.line_pages as u64;
        for p in unit.pages {
            let lpn = first + p.offset as u64;
            debug_assert!(lpn < self.logical_pages);
            // pblk's rate limiter admits host pages into the ring, which GC shares.
            if self.gc_ring {
                self.pace(nand)?;
            }
            self.enter_ring(lpn as u32, unit.hint, p.version, false, p.after);
            self.drain(nand)?;
        }
        // Filler of a padded block (a buffer's padding policy): programmed in turn, dead at once.
        if let Shape::Block { fill: true } = unit.shape {
            for _ in unit.pages.len()..self.line_pages as usize {
                self.ring.push_back(Entry {
                    lpn: NONE,
                    tag: unit.hint,
                    version: 0,
                    gc: false,
                    after: Mark::NONE,
                });
                self.drain(nand)?;
            }
        }
        Ok(())
    }

    fn begin_write(&mut self, bytes: u64) {
        self.classifier.begin_request(bytes);
    }

    fn tag(&mut self, lpn: Lpn) -> u32 {
        self.classifier.tag(lpn)
    }

    fn tags(&self) -> bool {
        true
    }

    fn ppn_of(&self, lpn: Lpn) -> Option<u32> {
        self.l2p
            .get(lpn as usize)
            .copied()
            .filter(|&p| p != NONE && p & IN_RING == 0)
    }

    /// A page still in the ring is read from it (no flash read), as pblk reads its cache.
    fn read(&mut self, lpn: Lpn, cause: Cause, nand: &mut Nand) -> Result<bool> {
        match self.l2p.get(lpn as usize).copied() {
            None | Some(NONE) => Ok(false),
            Some(p) if p & IN_RING != 0 => Ok(true),
            Some(p) => {
                nand.read(cause, p);
                Ok(true)
            }
        }
    }

    fn trim(&mut self, lpn: Lpn) {
        let old = self.l2p[lpn as usize];
        if old != NONE && old & IN_RING == 0 {
            self.invalidate(old);
        }
        // A ring entry of the LPN is now stale: still programmed, dead on arrival.
        self.l2p[lpn as usize] = NONE;
        self.classifier.trim(lpn);
        if self.check {
            self.expected[lpn as usize] = 0;
        }
    }

    fn version_of(&self, lpn: Lpn) -> u32 {
        match self.l2p.get(lpn as usize).copied() {
            Some(p) if p != NONE && self.check => {
                if p & IN_RING != 0 {
                    self.ring_version(p & !IN_RING)
                } else {
                    self.oob_version[p as usize]
                }
            }
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
        v.extend([
            ("ftl.lines.empty_victims", self.gc_empty),
            ("ftl.lines.stale_programs", self.stale_programs),
            ("ftl.lines.rl_stalls", self.rl_stalls),
            ("ftl.lines.backstop_gc", self.backstop),
            ("ftl.lines.gc_requests", self.gc_requests),
        ]);
        let n = self.open.len().min(8);
        v.extend(
            CLASS_PAGES[..n]
                .iter()
                .zip(&self.class_pages)
                .map(|(k, &c)| (*k, c)),
        );
        v.extend(
            CLASS_GC_PAGES[..n]
                .iter()
                .zip(&self.class_gc_pages)
                .map(|(k, &c)| (*k, c)),
        );
        v.extend(self.classifier.counters());
        v
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![
            ("ftl.free_blocks", self.free.len() as f64),
            ("ftl.lines.open", self.open.len() as f64),
            ("ftl.lines.ring_pages", self.ring.len() as f64),
            ("ftl.lines.ring_entries", self.ring_entries as f64),
        ];
        // Lines (open and closed) and valid pages per class: a class's own over-provisioning.
        let n = self.open.len().min(8);
        let (mut lines, mut valid) = ([0u64; 8], [0u64; 8]);
        for (l, &w) in self.written.iter().enumerate() {
            // A free line has nothing written.
            let k = self.class[l] as usize;
            if k < 8 && w > 0 {
                lines[k] += 1;
                valid[k] += self.valid[l] as u64;
            }
        }
        v.extend(
            CLASS_LINES[..n]
                .iter()
                .zip(&lines)
                .map(|(k, &c)| (*k, c as f64)),
        );
        v.extend(
            CLASS_VALID[..n]
                .iter()
                .zip(&valid)
                .map(|(k, &c)| (*k, c as f64)),
        );
        v.extend(self.classifier.gauges());
        v
    }
}

/// `[ftl.lines]` of `cfg`.
fn table(cfg: &crate::config::Config) -> Result<Params> {
    crate::params::of(&cfg.ftl.tables, "ftl", "lines")
}

/// Blocks a line spans: `ftl.lines.luns`, or the device's LUNs.
fn luns(cfg: &crate::config::Config, p: &Params) -> u32 {
    if p.luns > 0 {
        p.luns
    } else {
        (cfg.device.channels * cfg.device.chips_per_channel * cfg.device.dies_per_chip).max(1)
    }
}

/// Open lines: the placement's classes, plus the GC line.
fn open_lines(
    cfg: &crate::config::Config,
    p: &Params,
    placement: &crate::placement::Entry,
) -> Result<u64> {
    let classes = (placement.classes)(cfg, p.open_lines)?;
    if classes == 0 || classes > 64 {
        return Err(SimError::config(
            "placement.kind",
            format!(
                "`{}` writes to {classes} classes; the line FTL keeps 1..=64 open lines",
                cfg.placement.kind
            ),
        ));
    }
    if p.open_lines != Params::default().open_lines && p.open_lines != classes {
        return Err(SimError::config(
            "ftl.lines.open_lines",
            format!(
                "{} open lines, but placement `{}` writes to {classes} classes: leave it out or set it to {classes}",
                p.open_lines, cfg.placement.kind
            ),
        ));
    }
    Ok(classes as u64 + p.gc_line as u64)
}

const INFO: crate::component::Component = crate::component::Component::new(
            "ftl",
            "lines",
            "Line-based FTL after LightNVM pblk (seed 001): a line is an FTL block spanning the LUNs (page p on LUN p mod LUNs), \
             host pages enter a ring write buffer carrying their placement tag and are programmed in batches of batch_pages by \
             the write thread, one open line per placement class (placement none = pblk's single line shared with GC) plus an \
             optional GC line; GC paced by pblk's rate limiter over a ring sized as pblk sizes it (or burst below \
             gc_free_lines free lines, or the SepBIT artifact's garbage-fraction trigger), its copies through the ring a GC \
             request at a time as pblk's pblk_write_gc_to_cache (or straight to their line), victim by pblk's lists (fewest \
             valid of the first non-empty list: < ¼, < ½, < full valid) or greedy / cost-benefit / FIFO; paced as pblk, the \
             device is over-provisioned by pblk's rule (device.op unset: pblk's default 11%, at least its reserve; given: \
             refused below ⌈100 / OP%⌉ lines). One erase = one line.",
            crate::params::spec::<Params>(),
            &["placement.kind"],
        );

/// The registry entry of `lines`.
pub static ENTRY: super::Entry = super::Entry {
    info: INFO,
    build: |cfg, geo, classifier| {
        let mut p = table(cfg)?;
        p.luns = luns(cfg, &p);
        Ok(Box::new(LinesFtl::new(
            geo,
            &p,
            classifier,
            cfg.run.check_integrity,
        )?))
    },
    spare_blocks: |cfg, placement, _| {
        let p = table(cfg)?;
        Ok(p.spare_lines(open_lines(cfg, &p, placement)?))
    },
    // Paced as pblk: pblk's over-provisioning rule (pblk_set_provision).
    provision: |cfg, logical_blocks, warnings| {
        if table(cfg)?.gc == "pblk" {
            provision(cfg.device.op, logical_blocks, warnings)
        } else {
            super::op_provision(cfg, logical_blocks, warnings)
        }
    },
    resolve: |cfg, placement, _| {
        let mut p = table(cfg)?;
        let open = open_lines(cfg, &p, placement)?;
        p.gc_free_lines = p.gc_threshold(open);
        p.open_lines = open as u32 - p.gc_line as u32;
        let forced = (placement.gc_through_ring)(cfg)?;
        p.gc_write = if forced || p.gc_through_ring() {
            "ring"
        } else {
            "direct"
        }
        .into();
        p.luns = luns(cfg, &p);
        cfg.ftl
            .tables
            .insert("lines".into(), serde_json::to_value(p).unwrap_or_default());
        Ok(())
    },
    // The resolved open lines, less the GC line, are the placement's classes.
    frontiers: Some(|cfg| Ok(table(cfg)?.open_lines)),
    check: |cfg, errors| {
        if cfg.ftl.gc != crate::config::FtlConfig::default().gc {
            errors.push(SimError::config(
                "ftl.gc",
                "the line FTL chooses victims by ftl.lines.victim (pblk | greedy | cost-benefit | fifo)",
            ));
        }
    },
    // Paced as pblk, an unset device.op is pblk's rule from the device it is given.
    default_op: |cfg| Ok(table(cfg)?.gc != "pblk"),
    supports: super::Supports::NONE,
};

#[cfg(test)]
mod tests {
    use super::super::hybrid::testutil::geo;
    use super::*;
    use crate::ftl::UnitPage;
    use crate::placement::none::FixedLines;

    /// pblk's victim choice: lines in four lists by valid count; the victim is the fewest-valid line
    /// of the first non-empty list of high, mid, low (ties: the earliest in its list). A line joins a
    /// list's tail when it enters it.
    struct ListsReference {
        bounds: ListBounds,
        list: Vec<u8>,
        prev: Vec<u32>,
        next: Vec<u32>,
        head: [u32; 4],
        tail: [u32; 4],
    }

    impl ListsReference {
        fn new(lines: usize, line_pages: u32) -> ListsReference {
            ListsReference {
                bounds: ListBounds::new(line_pages),
                list: vec![NOT_LISTED; lines],
                prev: vec![NONE; lines],
                next: vec![NONE; lines],
                head: [NONE; 4],
                tail: [NONE; 4],
            }
        }

        fn push(&mut self, l: u32, which: u8) {
            let t = self.tail[which as usize];
            self.prev[l as usize] = t;
            self.next[l as usize] = NONE;
            if t == NONE {
                self.head[which as usize] = l;
            } else {
                self.next[t as usize] = l;
            }
            self.tail[which as usize] = l;
            self.list[l as usize] = which;
        }

        fn unlink(&mut self, l: u32) {
            let which = self.list[l as usize] as usize;
            let (p, n) = (self.prev[l as usize], self.next[l as usize]);
            if p == NONE {
                self.head[which] = n;
            } else {
                self.next[p as usize] = n;
            }
            if n == NONE {
                self.tail[which] = p;
            } else {
                self.prev[n as usize] = p;
            }
            self.list[l as usize] = NOT_LISTED;
        }

        fn seal(&mut self, l: u32, valid: u32) {
            self.push(l, self.bounds.list_of(valid));
        }

        #[inline]
        fn on_invalidate(&mut self, l: u32, valid: u32) {
            let now = self.list[l as usize];
            if now != NOT_LISTED {
                let to = self.bounds.list_of(valid);
                if to != now {
                    self.unlink(l);
                    self.push(l, to);
                }
            }
        }

        fn peek(&self, valid: &[u32]) -> Option<u32> {
            for which in [HIGH, MID, LOW] {
                let mut cur = self.head[which as usize];
                let mut best = NONE;
                while cur != NONE {
                    if best == NONE || valid[cur as usize] < valid[best as usize] {
                        best = cur;
                    }
                    cur = self.next[cur as usize];
                }
                if best != NONE {
                    return Some(best);
                }
            }
            None
        }
    }

    /// pblk_rb_calculate_size by hand. The seed's device (FEMU's Open-Channel SSD: mw_cunits
    /// 24, ws_opt 8, 2 × 4 LUNs): threshold 24 × 8 = 192, asked (24 + 8) × 8 = 256; the
    /// threshold plus one largest I/O, 192 + 64 = 256, rounds to 256, the ring to max(256,
    /// 128) = 256, and as 256 ≥ 256 leaves no room beyond the threshold it doubles: 512
    /// entries, 8 windows of 64.
    #[test]
    fn ring_is_sized_as_pblk_sizes_it() {
        assert_eq!(pblk_rb_calculate_size(256, 192), 512);
        let thesis = Params {
            luns: 8,
            ..Default::default()
        };
        assert_eq!(ring_entries(&thesis), 512);
        assert_eq!(gc_request_pages(&thesis), 64);
        // 4 LUNs (the study's traces): threshold 96, asked 128; 96 + 64 = 160 → 256, which
        // has room: 256 entries, 4 windows; GC requests of 8 × 4 = 32 sectors.
        let four = Params {
            luns: 4,
            ..Default::default()
        };
        assert_eq!(pblk_rb_calculate_size(128, 96), 256);
        assert_eq!((ring_entries(&four), gc_request_pages(&four)), (256, 32));
        // One LUN: threshold 24, asked 32; 88 → 128, at least two largest I/Os (128): 128.
        assert_eq!(ring_entries(&Params::default()), 128);
        // OCSSD 1.2's defaults on 8 LUNs (ws_opt 4, mw_cunits = ws_opt << 3 = 32): threshold
        // 256, asked 36 × 8 = 288; 320 → 512, which has room: 512.
        let v12 = Params {
            luns: 8,
            batch_pages: 4,
            mw_cunits: 32,
            ..Default::default()
        };
        assert_eq!(ring_entries(&v12), 512);
        // write_buffer_size counts only above the default: 1000 → 1024; 100 → the default.
        for (asked, entries) in [(1000, 1024), (100, 512)] {
            let p = Params {
                write_buffer_size: asked,
                ..thesis.clone()
            };
            assert_eq!(ring_entries(&p), entries, "{asked}");
        }
    }

    /// pblk's rate limiter on the seed's device (32 lines of 8 LUNs, 22 of data, its ring of
    /// 512 entries a budget of 8 windows): GC starts below 9 free lines (72 blocks, 2^7 = 128 >
    /// 72 so the shift is 7 − 3 = 4: the host gets ⌊free blocks / 16⌋ windows); the reserve
    /// is ⌈100 / 31⌉ = 4 lines. GC copies (8 − user) / user pages per host page: 1 at 8 free
    /// lines, 5/3 at 6 and 7, 3 at 5.
    #[test]
    fn rate_limiter_on_the_seeds_device() {
        let rl = RateLimiter::new(32, 22, 8, 8).unwrap();
        assert_eq!((rl.high, rl.rsv, rl.shift, rl.windows), (72, 32, 4, 8));
        let by_free_lines: Vec<u64> = (0..=10).map(|l| rl.user_windows(l * 8)).collect();
        assert_eq!(by_free_lines, [0, 0, 0, 0, 0, 2, 3, 3, 4, 8, 8]);
        // The same 4 GiB in 16 MiB lines: 80 spare lines, GC below 79 (632 blocks, 2^10 >
        // 632, shift 7): the host's share is ⌊free lines / 16⌋ eighths.
        let rl = RateLimiter::new(256, 176, 8, 8).unwrap();
        assert_eq!((rl.high, rl.rsv, rl.shift), (632, 32, 7));
        assert_eq!(rl.user_windows(78 * 8), 4);
        assert_eq!(rl.user_windows(63 * 8), 3);
        assert_eq!(rl.user_windows(31 * 8), 1);
        assert_eq!(rl.user_windows(4 * 8), 0);
        assert_eq!(rl.user_windows(79 * 8), 8);
        // 7% over-provisioning: 7 lines, fewer than the reserve of ⌈100 / 6⌉ = 17.
        let e = RateLimiter::new(107, 100, 4, 8).unwrap_err().to_string();
        assert!(
            e.contains("device.op") && e.contains("⌈100 / 6⌉ = 17"),
            "{e}"
        );
    }

    /// pblk_set_provision. Not given: pblk's default 11% of the lines (⌊T · 89 / 100⌋ ≥
    /// data), at least its reserve at 11%, ⌈100 / 11⌉ = 10 lines. The seed's 22 lines of data:
    /// 11% is 25 lines, 3 spare, raised to 10: 32 lines (pblk's 31% on FEMU's 4 GiB device).
    /// 1,028 lines (a 514 MiB device of 512 KiB lines): ⌈102,800 / 89⌉ = 1,156, 128 spare
    /// (ssdlab's 0.07 would give 72). Given: 0.07 on 129 lines of data gives 139 lines, 10
    /// spare (OP 7%), below ⌈100 / 7⌉ = 15: refused; the fewest spare lines pblk takes are 13
    /// (12 at 141 lines is OP 8%, needing 13; 13 at 142 is 9%, needing 12), device.op ≥
    /// 13 / 129 rounded up, 0.1008.
    #[test]
    fn provision_as_pblk_set_provision() {
        let mut w = Vec::new();
        let (rho, lines) = provision(None, 22, &mut w).unwrap();
        assert_eq!((rho, lines), (10.0 / 22.0, 32));
        assert!(
            w[0].starts_with("device.op is not given")
                && w[0].contains("raised to pblk's reserve at that OP, ⌈100 / 11⌉ = 10 lines")
                && w[0].contains("10 over-provisioned lines beside 22 of data, device.op = 0.4545")
                && w[0].contains("ssdlab's default 0.07 would give 2"),
            "{}",
            w[0]
        );
        let (rho, lines) = provision(None, 1028, &mut w).unwrap();
        assert_eq!((rho, lines), (128.0 / 1028.0, 1156));
        assert!(
            !w[1].contains("raised") && w[1].contains("would give 72"),
            "{}",
            w[1]
        );
        // Given, and enough: as given (the study's 0.4545 on 22 lines: 32).
        assert_eq!(provision(Some(0.4545), 22, &mut w).unwrap(), (0.4545, 32));
        assert_eq!(provision(Some(0.07), 1028, &mut w).unwrap(), (0.07, 1100));
        assert_eq!(w.len(), 2, "no warning for a given device.op");
        let e = provision(Some(0.07), 129, &mut w).unwrap_err().to_string();
        assert!(
            e.contains("device.op")
                && e.contains("0.07 gives 10 over-provisioned lines of 139 (OP 7%)")
                && e.contains("⌈100 / 7⌉ = 15 lines")
                && e.contains("needs device.op ≥ 0.1008 (13 over-provisioned lines)"),
            "{e}"
        );
        assert_eq!(min_spare_lines(129), 13);
        assert_eq!(provision(Some(0.1008), 129, &mut w).unwrap().1, 143);
        // Every count from the least one up is taken (OP% only rises with it).
        for data in [1, 2, 22, 129, 1000, 40_000] {
            let least = min_spare_lines(data);
            assert!(!pblk_accepts(data, least - 1) || least == 1, "{data}");
            assert!(
                (least..least + 200).all(|s| pblk_accepts(data, s)),
                "{data}"
            );
        }
    }

    /// Records what a classifier sees: each LPN's last user-write time, and the age of every
    /// GC copy (time at GC − that last user write).
    struct Ages {
        last: Vec<u64>,
        ages: std::sync::Arc<std::sync::Mutex<Vec<(u32, u64)>>>,
    }

    impl Classifier for Ages {
        fn classes(&self) -> u32 {
            1
        }
        fn user(&mut self, lpn: Lpn, _tag: u32, now: u64) -> Class {
            self.last[lpn as usize] = now;
            0
        }
        fn gc(&mut self, lpn: Lpn, _from: Class, now: u64) -> Class {
            let age = now - self.last[lpn as usize];
            self.ages.lock().unwrap().push((lpn as u32, age));
            0
        }
    }

    /// The garbage-fraction GC (the SepBIT artifact's) and its clock, by hand: lines of 4
    /// pages; LPNs 0, 1, 2, 3 fill line 0, then LPN 0 again. Its old copy makes line 0's 1 of 4
    /// pages garbage, 1/5 of the written pages > 0.15, so GC collects line 0 right after that
    /// page, and copies LPNs 1, 2, 3 with ages 3, 2, 1: the host pages written since (the
    /// artifact's accessId, counted before a page is placed).
    #[test]
    fn gp_gc_collects_one_line_and_ages_count_pages_since() {
        let g = geo(4, 4, 8);
        let p = Params {
            gc: "gp".into(),
            batch_pages: 1,
            ..Default::default()
        };
        let ages = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let c = Ages {
            last: vec![0; 16],
            ages: ages.clone(),
        };
        let mut f = LinesFtl::new(&g, &p, Box::new(c), true).unwrap();
        let mut n = Nand::new(g.physical_blocks);
        let page = |offset| UnitPage::new(offset, 1, Cause::Host);
        for off in [0, 1, 2, 3] {
            f.write_unit(Unit::pages(0, &[page(off)]), &mut n).unwrap();
        }
        assert_eq!(f.gc_counts.victims, 0);
        f.write_unit(Unit::pages(0, &[page(0)]), &mut n).unwrap();
        assert_eq!((f.gc_counts.victims, f.gc_counts.moved_pages), (1, 3));
        assert_eq!(*ages.lock().unwrap(), [(1, 3), (2, 2), (3, 1)]);
        // Line 0 is free again; lines 1 (the open one, LPN 0 and the three copies) holds all.
        assert_eq!((f.garbage, f.used), (0, 4));
        assert_eq!(f.free_lines(), 7);
    }

    /// GC through the ring (`size-ema-batch`, `gc = "ring"`), by hand: lines and batches of 4
    /// pages, the four class lines 0–3 opened at start. LPNs 0–3 then 4–7, both batches of class
    /// 0, fill line 0 and seal it (4–7 go to line 4). LPNs 0 and 1 are written again (class 0,
    /// two entries: no batch yet), leaving 2 and 3 valid in line 0. GC of line 0 puts the two
    /// copies in the ring as entries of the coldest class 3 (pblk_write_gc_to_cache), where the
    /// write thread takes them with the two host entries: classes 0, 0, 3, 3 average 1.5, which
    /// rounds to 2, so line 2 receives all four; so do they with `coldest` and
    /// `ftl.lines.gc_write = "ring"`. With `coldest` and burst GC's automatic `direct` the
    /// copies go straight to line 3 and the host entries wait in the ring.
    #[test]
    fn gc_copies_batched_with_host_entries_through_the_ring() {
        let g = geo(4, 4, 16);
        let params = |write: &str| Params {
            gc: "burst".into(),
            gc_free_lines: 2,
            batch_pages: 4,
            gc_write: write.into(),
            ..Default::default()
        };
        let page = |offset| UnitPage::new(offset, 1 + offset / 4, Cause::Host);
        for (gc, write) in [("ring", "auto"), ("coldest", "ring"), ("coldest", "auto")] {
            let p = params(write);
            let sp = crate::placement::size_ema::Params {
                gc: gc.into(),
                ..Default::default()
            };
            let c = crate::placement::size_ema::SizeEma::new(&sp, true);
            let mut f = LinesFtl::new(&g, &p, Box::new(c), true).unwrap();
            let mut n = Nand::new(g.physical_blocks);
            let first: Vec<_> = (0..8).map(page).collect();
            f.write_unit(Unit::pages(0, &first), &mut n).unwrap();
            assert_eq!((f.written[0], f.written[4], f.valid[0]), (4, 4, 4));
            let again = [
                UnitPage::new(0, 9, Cause::Host),
                UnitPage::new(1, 9, Cause::Host),
            ];
            f.write_unit(Unit::pages(0, &again), &mut n).unwrap();
            assert_eq!((f.ring.len(), f.valid[0]), (2, 2));
            assert_eq!(f.take_victim(), Some(0));
            f.reclaim(0, &mut n).unwrap();
            assert_eq!((f.gc_counts.victims, f.gc_counts.moved_pages), (1, 2));
            if gc == "ring" || write == "ring" {
                let ring: Vec<_> = f.ring.iter().map(|e| (e.lpn, e.tag, e.gc)).collect();
                assert_eq!(
                    ring,
                    [(0, 0, false), (1, 0, false), (2, 3, true), (3, 3, true)]
                );
                f.drain(&mut n).unwrap();
                assert!(f.ring.is_empty());
                assert_eq!((f.written[2], f.valid[2], f.written[3]), (4, 4, 0));
                assert_eq!(
                    (f.class_pages[2], f.class_gc_pages[2], f.class_gc_pages[3]),
                    (2, 2, 0)
                );
                for lpn in 0..4 {
                    assert_eq!(f.line_of.quot(f.l2p[lpn] as u64), 2, "LPN {lpn}");
                }
                // The clock counts host pages only: 8 + 2.
                assert_eq!(f.now, 10);
            } else {
                assert_eq!((f.ring.len(), f.written[3], f.class_gc_pages[3]), (2, 2, 2));
                assert_eq!(f.written[2], 0);
            }
            assert_eq!(f.written[0], 0, "line 0 is free again");
            f.check_structure().unwrap();
            f.check_versions(&f.expected).unwrap();
        }
    }

    /// GC through the ring a request at a time (pblk_gc_line_prepare_ws, pblk_write_gc_to_cache),
    /// by hand: lines of 256 pages on 8 LUNs, batches of 8, so GC requests of min(8 × 8, 64) =
    /// 64. LPNs 0–511 fill lines 0 and 1; LPNs 0–105 written again go to line 2 (104 programmed,
    /// 2 in the ring), leaving line 0 150 valid pages, the victim. Collected whole (burst) or
    /// step by step (pblk's pacing), its 150 pages enter the ring behind the 2 host entries in
    /// three runs, 64, 64 and 22, LPNs 106–255 in order; the line is erased with the last.
    /// Written directly, the 150 copies are programmed at once and no request is counted.
    #[test]
    fn gc_enters_the_ring_a_request_at_a_time() {
        let g = geo(256, 2, 8);
        let page = |offset, version| UnitPage::new(offset, version, Cause::Host);
        for (gc, write) in [("burst", "ring"), ("pblk", "auto"), ("burst", "direct")] {
            let p = Params {
                gc: gc.into(),
                gc_free_lines: 2,
                luns: 8,
                gc_write: write.into(),
                ..Default::default()
            };
            let mut f = LinesFtl::new(&g, &p, Box::new(FixedLines { gc: 0 }), true).unwrap();
            assert_eq!(f.gc_request, 64);
            let mut n = Nand::new(g.physical_blocks);
            let fill: Vec<_> = (0..256).map(|o| page(o, 1)).collect();
            f.write_unit(Unit::pages(0, &fill), &mut n).unwrap();
            f.write_unit(Unit::pages(1, &fill), &mut n).unwrap();
            let again: Vec<_> = (0..106).map(|o| page(o, 2)).collect();
            f.write_unit(Unit::pages(0, &again), &mut n).unwrap();
            assert_eq!(
                (f.valid[0], f.ring.len(), f.gc_counts.victims),
                (150, 2, 0),
                "{gc}"
            );
            let runs = match (gc, write) {
                ("burst", "direct") => {
                    assert_eq!(f.take_victim(), Some(0));
                    f.reclaim(0, &mut n).unwrap();
                    assert_eq!((f.ring.len(), f.written[2], f.gc_requests), (2, 254, 0));
                    vec![]
                }
                ("burst", _) => {
                    assert_eq!(f.take_victim(), Some(0));
                    f.reclaim(0, &mut n).unwrap();
                    vec![150]
                }
                _ => (0..3)
                    .map(|_| f.gc_step(&mut n).unwrap().unwrap())
                    .collect(),
            };
            if gc == "pblk" {
                assert_eq!(runs, [64, 64, 22]);
            }
            if write != "direct" {
                assert_eq!(f.gc_requests, 3, "{gc}");
                let ring: Vec<_> = f.ring.iter().map(|e| (e.lpn, e.gc)).collect();
                let want: Vec<_> = [(104, false), (105, false)]
                    .into_iter()
                    .chain((106..256).map(|l| (l, true)))
                    .collect();
                assert_eq!(ring, want, "{gc}");
            }
            assert_eq!(
                (f.gc_counts.victims, f.gc_counts.moved_pages, f.written[0]),
                (1, 150, 0),
                "{gc}"
            );
            assert_eq!(f.gc_victim, NONE);
            f.check_structure().unwrap();
            f.check_versions(&f.expected).unwrap();
        }
    }

    /// Every class's line is taken at start (the seed prepares its four), or at the class's
    /// first write.
    #[test]
    fn open_lines_at_start() {
        let g = geo(4, 4, 16);
        for (at_start, free) in [(true, 12), (false, 16)] {
            let p = Params {
                gc: "burst".into(),
                gc_free_lines: 2,
                open_at_start: at_start,
                ..Default::default()
            };
            let c = crate::placement::size_ema::SizeEma::new(&Default::default(), false);
            let f = LinesFtl::new(&g, &p, Box::new(c), false).unwrap();
            assert_eq!(f.free_lines(), free);
        }
    }

    /// The bucketed lists choose exactly as pblk's lists scanned in full (the reference above,
    /// `pblk_gc_get_victim_line` over `gc_lists`), over random seals, invalidations and victims.
    #[test]
    fn buckets_choose_as_pblk_lists() {
        let (lines, pages) = (40usize, 16u32);
        let mut fast = PblkLists::new(lines, pages);
        let mut reference = ListsReference::new(lines, pages);
        let mut valid = vec![0u32; lines];
        let mut x = 12345u64;
        let mut rand = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut victims = 0;
        for _ in 0..20_000 {
            let l = rand(lines as u64) as usize;
            match rand(10) {
                0 if fast.list[l] == NOT_LISTED => {
                    valid[l] = rand(pages as u64 + 1) as u32;
                    fast.seal(l as u32, valid[l]);
                    reference.seal(l as u32, valid[l]);
                }
                1 => {
                    let want = reference.peek(&valid);
                    assert_eq!(fast.peek(), want);
                    if let Some(v) = want {
                        fast.unlink(v, valid[v as usize]);
                        reference.unlink(v);
                        victims += 1;
                    }
                }
                _ if fast.list[l] != NOT_LISTED && valid[l] > 0 => {
                    valid[l] -= 1;
                    fast.on_invalidate(l as u32, valid[l]);
                    reference.on_invalidate(l as u32, valid[l]);
                }
                _ => {}
            }
        }
        assert!(victims > 500, "{victims}");
    }
}
