//! NVMe Flexible Data Placement (TP4146, NVMe 2.x) on the page FTL (`[fdp]`; off by default).
//!
//! The specification's terms, as modelled:
//! - **Reclaim group (RG)**: a set of dies; the device's dies split into `reclaim_groups` equal
//!   sets, each with its own free reclaim units and its own GC (data never leaves its group).
//! - **Reclaim unit (RU)**: what GC erases as one; `ru_bytes` (a whole number of FTL blocks; an
//!   FTL block is a superblock across the group's dies, the default RU). The page FTL's unit of
//!   allocation and GC becomes the RU.
//! - **Reclaim unit handle (RUH)**: `handles` of them; each holds one open RU in every group,
//!   which the host's writes through it fill in order.
//! - **Placement identifier (PID)**: what a write carries, naming a group and a handle:
//!   `PID = group × handles + handle` (the specification puts the group in the identifier's
//!   upper bits; with one group the PID is the handle). A PID outside `0 .. reclaim_groups ×
//!   handles` is an error naming it.
//! - **Handle type**: `initially-isolated` — GC may gather valid data of several handles into
//!   one RU (here: one shared GC RU per group); `persistently-isolated` — GC keeps each
//!   handle's data in RUs of that handle (one GC RU per handle and group).
//!
//! Reported as the FDP statistics log page defines them: host bytes with metadata written
//! (HBMW: host data programmed), media bytes with metadata written (MBMW: every program, GC,
//! padding and mapping included), media bytes erased (MBE); `fdp.waf` = MBMW / HBMW. Per
//! handle: bytes written (host and GC), RUs reclaimed and the valid share they held; the RU
//! handle status (remaining writable bytes of each handle's open RU) as gauges, so in the time
//! series. Events: an RU reclaimed while still partly valid counts "media reallocated" pages;
//! with an active RU time limit (`ru_time_limit_s`, the specification's ERUTL), a handle's RU
//! open longer than it is switched for a new one at the handle's next write request, "RU not
//! fully written", its rest left unwritten (erased with it when reclaimed). The limit runs on
//! the host's clock: the write requests' times (their arrival times in timed mode too).

use crate::error::{Result, SimError};
use crate::nand::Cause;

pub use crate::config::FdpConfig as Params;
use crate::config::FDP_PERSISTENTLY as PERSISTENTLY;

impl Params {
    pub(crate) fn persistent(&self) -> bool {
        self.handle_type == PERSISTENTLY
    }

    /// Placement identifiers a write may carry: groups × handles.
    pub fn identifiers(&self) -> u32 {
        self.reclaim_groups * self.handles
    }

    /// Open reclaim units: every handle's in every group, and GC's (one per group when handles
    /// share GC units, one per handle and group when they are persistently isolated).
    pub fn frontiers(&self) -> u64 {
        let host = self.identifiers() as u64;
        host + if self.persistent() {
            host
        } else {
            self.reclaim_groups as u64
        }
    }

    /// Free reclaim units below which a group runs GC: `gc_free_blocks`, or (0, automatic)
    /// the group's open units + 2.
    pub fn gc_threshold(&self, gc_free_blocks: u64) -> u64 {
        if gc_free_blocks == 0 {
            self.frontiers() / self.reclaim_groups as u64 + 2
        } else {
            gc_free_blocks
        }
    }

    /// Reclaim units of `k` blocks a device of `logical_blocks` needs: its data, and in every
    /// group the GC reserve, the open units and one more.
    pub fn units_needed(&self, logical_blocks: u64, k: u64, threshold: u64) -> u64 {
        let groups = self.reclaim_groups as u64;
        logical_blocks.div_ceil(k) + groups * (threshold + self.frontiers() / groups + 1)
    }

    /// Physical blocks beyond `logical_blocks` that make enough reclaim units in every group
    /// (whole units per group, the rest unused).
    pub fn spare_blocks(&self, logical_blocks: u64, k: u64, threshold: u64) -> u64 {
        let groups = self.reclaim_groups as u64;
        (self.units_needed(logical_blocks, k, threshold) * k + k * groups - 1)
            .saturating_sub(logical_blocks)
    }

    /// FTL blocks in one reclaim unit, for FTL blocks of `block_bytes`.
    pub fn blocks_per_ru(&self, block_bytes: u64) -> Result<u64> {
        let ru = self.ru_bytes.0;
        if ru == 0 {
            return Ok(1);
        }
        if !ru.is_multiple_of(block_bytes) {
            return Err(SimError::config(
                "fdp.ru_bytes",
                format!(
                    "{ru} bytes is not a whole number of FTL blocks ({block_bytes} bytes: device.pages_per_block \
                     × device.page_bytes, one superblock across a group's dies)"
                ),
            ));
        }
        Ok(ru / block_bytes)
    }
}

/// Who owns a reclaim unit: a handle, or GC's shared units (initially isolated handles).
const SHARED: u32 = u32::MAX;

/// What one handle's reclaim units took (and GC's shared units', kept apart).
#[derive(Clone, Debug, Default)]
struct HandleStats {
    /// Host data pages programmed into its units.
    host_pages: u64,
    /// Every other page programmed into them: GC copies, padding, mapping pages.
    other_pages: u64,
    reclaimed: u64,
    valid_at_reclaim: u64,
}

impl HandleStats {
    fn add(&mut self, o: &HandleStats) {
        self.host_pages += o.host_pages;
        self.other_pages += o.other_pages;
        self.reclaimed += o.reclaimed;
        self.valid_at_reclaim += o.valid_at_reclaim;
    }
}

/// The FDP state the page FTL keeps beside its own: who owns each RU and what each handle did.
/// Slots (the FTL's open units) are numbered: host slot `group × handles + handle` (= the
/// PID), then GC slots — `identifiers + group` (shared) or `identifiers + PID` (persistent).
#[derive(Clone, Debug)]
pub struct Fdp {
    handles: u32,
    groups: u32,
    persistent: bool,
    /// FTL blocks per RU (an RU's erase erases each), and the pages of one RU.
    pub(crate) blocks_per_ru: u32,
    ru_pages: u64,
    page_bytes: u64,
    /// RUs per group (group g holds RUs g·per_group .. (g+1)·per_group).
    per_group: u32,
    owner: Vec<u32>,
    /// Pages programmed through each slot, [host data, other]: a slot's units all belong to
    /// its owner, so these are the owners' counts (kept per slot: no lookup per page).
    slot_pages: Vec<[u64; 2]>,
    /// Reclaims of each owner's units (handles, then GC's shared units).
    stats: Vec<HandleStats>,
    shared: HandleStats,
    /// Metric names, made once.
    names: Vec<[&'static str; NAMES]>,
    /// Pages that were still valid in reclaimed RUs (moved by GC): media reallocated.
    reallocated_pages: u64,
    /// The active RU time limit in µs (infinite: none), the host's clock (the latest write
    /// request's time), when each host slot's open RU opened, and the earliest expiry.
    time_limit_us: f64,
    now_us: f64,
    opened_us: Vec<f64>,
    next_expiry_us: f64,
    /// RUs switched before they were full (by the time limit), and the pages left unwritten.
    not_fully_written: u64,
    unwritten_pages: u64,
}

impl Fdp {
    /// The state of `rus` reclaim units of `blocks_per_ru` FTL blocks and `ru_pages` pages.
    pub fn new(p: &Params, rus: u32, blocks_per_ru: u32, ru_pages: u64, page_bytes: u64) -> Fdp {
        Fdp {
            handles: p.handles,
            groups: p.reclaim_groups,
            persistent: p.persistent(),
            blocks_per_ru,
            ru_pages,
            page_bytes,
            per_group: rus / p.reclaim_groups,
            owner: vec![SHARED; rus as usize],
            slot_pages: vec![[0; 2]; p.frontiers() as usize],
            stats: vec![HandleStats::default(); p.handles as usize],
            shared: HandleStats::default(),
            names: (0..p.handles).map(handle_names).collect(),
            reallocated_pages: 0,
            time_limit_us: match p.ru_time_limit_s {
                0.0 => f64::INFINITY,
                s => s * 1e6,
            },
            now_us: 0.0,
            opened_us: vec![0.0; p.identifiers() as usize],
            next_expiry_us: f64::INFINITY,
            not_fully_written: 0,
            unwritten_pages: 0,
        }
    }

    /// Whether an RU time limit is set (the FTL then follows the host's clock).
    pub fn limits_time(&self) -> bool {
        self.time_limit_us.is_finite()
    }

    /// The host's clock moves to `t_us`: true when an open RU may have outlived the time limit
    /// (then [`Fdp::expired`] says which).
    #[inline(always)]
    pub fn set_time(&mut self, t_us: f64) -> bool {
        self.now_us = t_us;
        t_us >= self.next_expiry_us
    }

    /// Host slots whose open RU has outlived the time limit (`is_open`: whether a slot has an
    /// open RU), with the next expiry recomputed over the others.
    pub fn expired(&mut self, is_open: impl Fn(usize) -> bool) -> Vec<usize> {
        let mut out = Vec::new();
        self.next_expiry_us = f64::INFINITY;
        for slot in 0..self.identifiers() {
            if !is_open(slot) {
                continue;
            }
            let end = self.opened_us[slot] + self.time_limit_us;
            if end <= self.now_us {
                out.push(slot);
            } else {
                self.next_expiry_us = self.next_expiry_us.min(end);
            }
        }
        out
    }

    /// An RU was switched before it was full, `unwritten` pages left unwritten.
    pub fn switched_early(&mut self, unwritten: u64) {
        self.not_fully_written += 1;
        self.unwritten_pages += unwritten;
    }

    /// The owner of a slot's units: its handle, or GC's shared units.
    fn slot_owner(&self, slot: usize) -> u32 {
        let ids = self.identifiers();
        if slot < ids {
            (slot % self.handles as usize) as u32
        } else if self.persistent {
            ((slot - ids) % self.handles as usize) as u32
        } else {
            SHARED
        }
    }

    /// Host slots: one per PID.
    pub fn identifiers(&self) -> usize {
        (self.groups * self.handles) as usize
    }

    /// The slot the preconditioning fills logical block `lbn` through: handle 0 of each reclaim
    /// group in turn.
    pub fn fill_slot(&self, lbn: u64) -> usize {
        (lbn % self.groups as u64) as usize * self.handles as usize
    }

    /// The host slot of a write carrying placement identifier `pid`.
    #[inline]
    pub fn host_slot(&self, pid: u32) -> Result<usize> {
        if (pid as usize) < self.identifiers() {
            Ok(pid as usize)
        } else {
            Err(SimError::Invalid(format!(
                "placement identifier {pid} is out of range: [fdp] has {} reclaim group(s) × {} handles, \
                 identifiers 0..={} (group × handles + handle)",
                self.groups,
                self.handles,
                self.identifiers() - 1
            )))
        }
    }

    /// The group of RU `ru`.
    #[inline]
    pub fn group_of_ru(&self, ru: u32) -> usize {
        ((ru / self.per_group.max(1)) as usize).min(self.groups as usize - 1)
    }

    /// The group a slot writes into.
    #[inline]
    pub fn group_of_slot(&self, slot: usize) -> usize {
        let ids = self.identifiers();
        let pid = if slot < ids {
            slot
        } else if self.persistent {
            slot - ids
        } else {
            return slot - ids;
        };
        pid / self.handles as usize
    }

    /// The slot GC copies the valid pages of RU `victim` into: its group's shared GC unit, or
    /// (persistent isolation) its handle's GC unit in that group.
    pub fn gc_slot(&self, victim: u32) -> usize {
        let group = self.group_of_ru(victim);
        let ids = self.identifiers();
        match self.owner[victim as usize] {
            h if self.persistent && h != SHARED => ids + group * self.handles as usize + h as usize,
            _ => ids + group,
        }
    }

    /// Slot `slot` opened RU `ru`: it belongs to the slot's handle (or to GC's shared units).
    pub fn opened(&mut self, ru: u32, slot: usize) {
        self.owner[ru as usize] = self.slot_owner(slot);
        if slot < self.identifiers() {
            self.opened_us[slot] = self.now_us;
            let end = self.now_us + self.time_limit_us;
            self.next_expiry_us = self.next_expiry_us.min(end);
        }
    }

    fn stats_of(&mut self, owner: u32) -> &mut HandleStats {
        if owner == SHARED {
            &mut self.shared
        } else {
            &mut self.stats[owner as usize]
        }
    }

    /// `pages` pages of cause `cause` were programmed through slot `slot`.
    #[inline(always)]
    pub fn programmed(&mut self, slot: usize, cause: Cause, pages: u64) {
        self.slot_pages[slot][(cause != Cause::Host) as usize] += pages;
    }

    /// Each owner's statistics: its reclaims and the pages its slots programmed.
    fn owners(&self) -> (Vec<HandleStats>, HandleStats) {
        let (mut handles, mut shared) = (self.stats.clone(), self.shared.clone());
        for (slot, &[host, other]) in self.slot_pages.iter().enumerate() {
            let s = HandleStats {
                host_pages: host,
                other_pages: other,
                ..Default::default()
            };
            match self.slot_owner(slot) {
                SHARED => shared.add(&s),
                h => handles[h as usize].add(&s),
            }
        }
        (handles, shared)
    }

    /// RU `ru` is reclaimed holding `valid` pages (which GC moves).
    pub fn reclaimed(&mut self, ru: u32, valid: u32) {
        self.reallocated_pages += valid as u64;
        let owner = self.owner[ru as usize];
        let s = self.stats_of(owner);
        s.reclaimed += 1;
        s.valid_at_reclaim += valid as u64;
        self.owner[ru as usize] = SHARED;
    }

    /// Counters (differences over the measured window are the metrics): MBMW and MBE as the
    /// FDP statistics log page defines them (the engine adds HBMW, the host's writes, and
    /// `fdp.waf`), and each handle's.
    pub fn counters(&self, v: &mut Vec<(&'static str, u64)>) {
        let pb = self.page_bytes;
        let (handles, shared) = self.owners();
        let all = handles.iter().chain(std::iter::once(&shared));
        let (media, erased) = all.fold((0, 0), |(m, e), s| {
            (m + s.host_pages + s.other_pages, e + s.reclaimed)
        });
        v.push(("fdp.mbmw_bytes", media * pb));
        v.push(("fdp.mbe_bytes", erased * self.ru_pages * pb));
        for (s, n) in handles.iter().zip(&self.names) {
            v.push((n[0], s.host_pages * pb));
            v.push((n[1], s.other_pages * pb));
            v.push((n[2], s.reclaimed));
            v.push((n[3], s.valid_at_reclaim));
        }
        let s = &shared;
        v.push(("fdp.gc_shared.gc_bytes_written", s.other_pages * pb));
        v.push(("fdp.gc_shared.rus_reclaimed", s.reclaimed));
        v.push(("fdp.gc_shared.valid_pages_at_reclaim", s.valid_at_reclaim));
        v.push((
            "fdp.events.media_reallocated_bytes",
            self.reallocated_pages * pb,
        ));
        v.push(("fdp.events.ru_not_fully_written", self.not_fully_written));
        v.push(("fdp.events.ru_unwritten_bytes", self.unwritten_pages * pb));
    }

    /// The window's ratios from its counters: each handle's valid share of the RUs reclaimed
    /// (NaN where none was).
    pub fn window_metrics(&self, c: &[(&'static str, u64)], v: &mut Vec<(&'static str, f64)>) {
        let get = |k: &str| c.iter().find(|(n, _)| *n == k).map_or(0, |c| c.1) as f64;
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
        let ru = self.ru_pages as f64;
        for n in &self.names {
            v.push((n[5], ratio(get(n[3]), get(n[2]) * ru)));
        }
        v.push((
            "fdp.gc_shared.valid_share_at_reclaim",
            ratio(
                get("fdp.gc_shared.valid_pages_at_reclaim"),
                get("fdp.gc_shared.rus_reclaimed") * ru,
            ),
        ));
    }

    /// The RU handle status: each handle's open RUs' remaining writable bytes (summed over the
    /// groups), from each slot's open unit and write pointer (`open`, `written`: pages).
    pub fn gauges(&self, open_left: impl Fn(usize) -> u64, v: &mut Vec<(&'static str, f64)>) {
        for h in 0..self.handles as usize {
            let left: u64 = (0..self.groups as usize)
                .map(|g| open_left(g * self.handles as usize + h))
                .sum();
            v.push((self.names[h][4], (left * self.page_bytes) as f64));
        }
    }
}

/// Ranges of FTL blocks, each with its dies: (end block, dies).
pub type Stripes = Vec<(u64, Vec<u32>)>;

/// Timed mode with several reclaim groups: where the FTL blocks lie, as `Clock::partition`
/// takes them — group g's reclaim units (blocks g·n·k .. (g+1)·n·k, n units of k blocks per
/// group) on the g-th of equal runs of dies (numbered channel by channel). None: one group.
pub fn stripes(cfg: &crate::config::Config, physical_blocks: u64) -> Result<Option<Stripes>> {
    let p = &cfg.fdp;
    if !p.enabled || p.reclaim_groups == 1 {
        return Ok(None);
    }
    let k = p.blocks_per_ru(cfg.device.pages_per_block * cfg.device.page_bytes.0)?;
    let groups = p.reclaim_groups as u64;
    let blocks = physical_blocks / k / groups * k;
    let dies = cfg.device.dies() / groups;
    Ok(Some(
        (0..groups)
            .map(|g| {
                let end = if g + 1 == groups {
                    u64::MAX
                } else {
                    (g + 1) * blocks
                };
                (end, ((g * dies) as u32..((g + 1) * dies) as u32).collect())
            })
            .collect(),
    ))
}

/// Metric names per handle.
const NAMES: usize = 6;

/// Handle `h`'s metric names (interned: made once per handle number, for the process).
fn handle_names(h: u32) -> [&'static str; NAMES] {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static INTERNED: OnceLock<Mutex<HashMap<u32, [&'static str; NAMES]>>> = OnceLock::new();
    let map = INTERNED.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    *map.entry(h).or_insert_with(|| {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        [
            leak(format!("fdp.handle.{h}.host_bytes_written")),
            leak(format!("fdp.handle.{h}.gc_bytes_written")),
            leak(format!("fdp.handle.{h}.rus_reclaimed")),
            leak(format!("fdp.handle.{h}.valid_pages_at_reclaim")),
            leak(format!("fdp.handle.{h}.ru_remaining_bytes")),
            leak(format!("fdp.handle.{h}.valid_share_at_reclaim")),
        ]
    })
}

/// The registry's line for FDP: `[fdp]`, its keys and what it reads.
pub const INFO: crate::component::Component = crate::component::Component::new(
    "interface",
    "fdp",
    "NVMe Flexible Data Placement on the page FTL: reclaim groups (sets of dies), reclaim units, \
     handles each with an open RU per group, placement identifiers from the host, initially or \
     persistently isolated GC; reports HBMW, MBMW, MBE and fdp.waf.",
    crate::params::spec::<Params>(),
    &[
        "ftl.kind",
        "ftl.gc",
        "device.pages_per_block",
        "device.page_bytes",
    ],
)
.at_table("fdp");
