//! Flash translation layers. An FTL owns all physical state: it maps LPNs to PPNs, chooses where
//! pages go, and reclaims space (GC or merges), issuing every NAND operation with its cause.
//!
//! Buffers and padding policies see an FTL only through the read-only [`FtlView`].

pub mod bast;
pub mod block;
pub mod dftl;
pub mod fast;
pub mod fdp;
pub mod hybrid;
pub mod lines;
pub mod log_stats;
pub mod page;
pub mod partitioned;

use crate::component::Component;
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::nand::{Cause, Mark, Nand};
use crate::placement::Classifier;
use crate::units::{Geometry, Lbn, Lpn};
pub use log_stats::LogState;

/// The `FtlView` answers of an FTL that maps pages in a flat `l2p` table (`NONE`: unmapped) and
/// keeps its free blocks in `free` (the page and line FTLs).
macro_rules! flat_view {
    () => {
        fn is_mapped(&self, lpn: Lpn) -> bool {
            self.l2p.get(lpn as usize).is_some_and(|&p| p != NONE)
        }
        fn stat(&self, name: &str) -> Option<f64> {
            match name {
                "free_blocks" => Some(self.free_blocks() as f64),
                _ => None,
            }
        }
    };
}
pub(crate) use flat_view;

/// An FTL's registry entry: what it is, how to build it, and its rules for what the
/// configuration leaves to it (the placement entry is the configured placement's).
/// An FTL from the resolved configuration, the geometry and the placement classifier.
pub type Ctor = fn(&Config, &Geometry, Box<dyn Classifier>) -> Result<Box<dyn Ftl>>;
/// The over-provisioning ρ used and the physical blocks for the given logical blocks.
pub type ProvisionFn = fn(&Config, u64, &mut Vec<String>) -> Result<(f64, u64)>;

pub struct Entry {
    pub info: Component,
    /// The FTL of the resolved configuration on `geo`, writing by the placement classifier
    /// (FTLs without several frontiers take placement `none` only).
    pub build: Ctor,
    /// Physical blocks it needs beyond the given logical blocks (engine `resolve` sizes
    /// auto-capacity devices with it).
    pub spare_blocks: fn(&Config, &crate::placement::Entry, u64) -> Result<u64>,
    /// The over-provisioning ρ used and the physical blocks for a device of the given logical
    /// blocks ([`op_provision`], or the FTL's own rule); what was accepted but probably not
    /// meant goes into the warnings.
    pub provision: ProvisionFn,
    /// Replace its automatic (0) settings by the values it will use, for a device of the given
    /// logical blocks, so that a result's configuration says exactly what produced it.
    pub resolve: fn(&mut Config, &crate::placement::Entry, u64) -> Result<()>,
    /// The classes it offers placement on the resolved configuration (None: one write
    /// frontier, so placement `none` only).
    pub frontiers: Option<fn(&Config) -> Result<u32>>,
    /// Its checks of shared keys (`ftl.gc`, `ftl.log_blocks`) as it reads them.
    pub check: fn(&Config, &mut Vec<SimError>),
    /// Whether an unset `device.op` is [`crate::config::DEFAULT_OP`] (false: it provisions by
    /// its own rule from the device it is given).
    pub default_op: fn(&Config) -> Result<bool>,
    /// What it implements beyond every FTL's interface (engine `check` refuses the rest).
    pub supports: Supports,
}

/// Mechanisms an FTL may implement beyond the common interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Supports {
    /// GC in the device's idle time (`ftl.background_gc`).
    pub background_gc: bool,
    /// One instance per set of dies (flows confined to channels or dies).
    pub die_sets: bool,
    /// Flash pages larger than the mapping unit (`nand.physical_page_bytes`): it writes each
    /// block's pages in order.
    pub large_pages: bool,
    /// NVMe Flexible Data Placement (`[fdp]`, `fdp.rs`).
    pub fdp: bool,
}

impl Supports {
    /// The common interface only.
    pub const NONE: Supports = Supports {
        background_gc: false,
        die_sets: false,
        large_pages: false,
        fdp: false,
    };
}

/// ⌈logical blocks · (1 + ρ)⌉ physical blocks at `device.op` (unset: its default).
pub fn op_provision(cfg: &Config, logical_blocks: u64, _: &mut Vec<String>) -> Result<(f64, u64)> {
    let op = cfg.device.op();
    Ok((op, crate::units::physical_blocks(logical_blocks, op)))
}

/// No checks of shared keys, no automatic settings, the default over-provisioning.
pub fn no_check(_: &Config, _: &mut Vec<SimError>) {}
pub fn no_resolve(_: &mut Config, _: &crate::placement::Entry, _: u64) -> Result<()> {
    Ok(())
}
pub fn uses_default_op(_: &Config) -> Result<bool> {
    Ok(true)
}

/// One page of a flush unit as the FTL receives it: its offset in the logical block, the version
/// it carries (integrity checking), why it is written (host data or padding) and, in timed mode,
/// the read its data needs first (a read-modify-write's or padding's; its program waits for it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitPage {
    pub offset: u32,
    pub version: u32,
    pub cause: Cause,
    pub after: Mark,
}

impl UnitPage {
    /// A page whose data is in the buffer (no read first).
    pub fn new(offset: u32, version: u32, cause: Cause) -> UnitPage {
        UnitPage {
            offset,
            version,
            cause,
            after: Mark::NONE,
        }
    }
}

/// What a write buffer or padding policy may ask of the FTL, without changing it.
pub trait FtlView {
    /// Does this LPN currently have data on flash?
    fn is_mapped(&self, lpn: Lpn) -> bool;
    /// A named running statistic of the FTL (e.g. hybrid FTLs' "r_db", "r_lb", "u_lb";
    /// "free_blocks"). None when the FTL does not keep it.
    fn stat(&self, name: &str) -> Option<f64>;
    /// `lpn` is about to be flushed (e.g. one of the next LRU victims): an FTL may start loading
    /// its mapping into the cache, and with `deep` (a later call for the same page, once that
    /// mapping is likely loaded) what the mapping points to. Changes nothing; the default does
    /// nothing.
    fn prefetch(&self, _lpn: Lpn, _deep: bool) {}
    /// A unit of logical block `lbn` is likely the next one flushed (a block-grouped buffer's
    /// next victim): an FTL may start loading the block's mapping. Changes nothing; the default
    /// does nothing.
    fn prefetch_unit(&self, _lbn: Lbn) {}
    /// Hybrid FTLs (seed 002's predictor input): what the log holds for logical block `lbn` now —
    /// None when it holds no log record (no log block on BAST, no page logged since its last
    /// merge on FAST) or the FTL has no log blocks.
    fn log_state(&self, _lbn: Lbn) -> Option<LogState> {
        None
    }
}

/// How a flush unit relates to its logical block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Some pages of the block, placed one by one (in place, or in log blocks).
    Pages,
    /// The whole logical block: a full group, or a padded one (seed 000 §3.4–3.5, Fig 7–9). Every
    /// offset that holds data on flash is in the unit. Block-mapped FTLs program it in offset
    /// order into a fresh block that replaces the data block (a switch merge). Offsets in no
    /// page hold no data: with `fill` they are programmed with filler (the seed charges a padded
    /// flush N page writes), otherwise left unprogrammed.
    Block { fill: bool },
}

/// One flush unit as the FTL receives it: pages of logical block `lbn` in ascending offset, how
/// they relate to the block, and the stream hint carried with the data (placement across write
/// frontiers).
#[derive(Clone, Copy, Debug)]
pub struct Unit<'a> {
    pub lbn: Lbn,
    pub pages: &'a [UnitPage],
    pub shape: Shape,
    pub hint: u32,
}

impl<'a> Unit<'a> {
    #[inline]
    pub fn new(lbn: Lbn, pages: &'a [UnitPage], shape: Shape) -> Unit<'a> {
        Unit {
            lbn,
            pages,
            shape,
            hint: 0,
        }
    }
    /// Some pages of block `lbn` (`Shape::Pages`).
    #[inline]
    pub fn pages(lbn: Lbn, pages: &'a [UnitPage]) -> Unit<'a> {
        Unit::new(lbn, pages, Shape::Pages)
    }
    #[inline]
    pub fn with_hint(self, hint: u32) -> Unit<'a> {
        Unit { hint, ..self }
    }
}

pub trait Ftl: FtlView + std::any::Any {
    /// Program the pages of one flush unit.
    fn write_unit(&mut self, unit: Unit<'_>, nand: &mut Nand) -> Result<()>;
    /// Placement: whether the FTL tags host pages itself. If so, the engine calls
    /// [`Ftl::begin_write`] for each write request and [`Ftl::tag`] for each of its pages, and
    /// the page's buffer entry carries the tag as its hint (instead of the request's stream).
    fn tags(&self) -> bool {
        false
    }
    /// FDP: host pages carry their request's placement identifier as their hint (instead of
    /// the request's stream).
    fn placement_ids(&self) -> bool {
        false
    }
    /// Whether the FTL follows the host's clock ([`Ftl::set_time_us`]): FDP's RU time limit.
    fn keeps_time(&self) -> bool {
        false
    }
    /// The host's clock: the time of the write request about to be served.
    fn set_time_us(&mut self, _t_us: f64) {}
    /// The hint the preconditioning writes logical block `lbn` with (FDP: its reclaim groups in
    /// turn, so that a fill spreads over them).
    fn precondition_hint(&self, _lbn: Lbn) -> u32 {
        0
    }
    /// Placement: a host write request of `bytes` bytes enters the write path.
    fn begin_write(&mut self, _bytes: u64) {}
    /// Placement: what host page `lpn` carries down as its hint.
    fn tag(&mut self, _lpn: Lpn) -> u32 {
        0
    }
    /// The PPN holding `lpn`'s newest copy (None: unmapped).
    fn ppn_of(&self, lpn: Lpn) -> Option<u32>;
    /// `run.precondition = "fill"` in bulk, when the FTL can: every logical block once, in
    /// order, as whole-block host writes (`write_unit` with `Shape::Block { fill: false }` and
    /// hint 0), leaving exactly the state and counts those writes would. Returns false when it
    /// does nothing; the engine then writes the blocks one by one.
    fn fill_bulk(&mut self, _nand: &mut Nand) -> Result<bool> {
        Ok(false)
    }
    /// Timed mode, `ftl.background_gc`, device idle: do one step of background garbage collection
    /// if the FTL wants one; returns whether it did. The default never does.
    fn background_gc(&mut self, _nand: &mut Nand) -> Result<bool> {
        Ok(false)
    }
    /// Read one page with the given cause; returns false (and costs nothing) if it is unmapped.
    /// Fails only where the read itself writes (a demand-based FTL's mapping write-back).
    fn read(&mut self, lpn: Lpn, cause: Cause, nand: &mut Nand) -> Result<bool> {
        let ppn = self.ppn_of(lpn);
        if let Some(ppn) = ppn {
            nand.read(cause, ppn);
        }
        Ok(ppn.is_some())
    }
    /// Discard one page.
    fn trim(&mut self, lpn: Lpn);
    /// Version stored with the page's current copy (0 when unmapped or not tracked).
    fn version_of(&self, lpn: Lpn) -> u32;
    /// Check the whole mapping against the latest version of every LPN (0 = never written or
    /// trimmed) and every per-block valid count against the pages. Errors say what is wrong.
    fn check_integrity(&self, latest: &[u32]) -> Result<()>;
    /// Monotone event counters (subtracted across warm-up): ("gc.victims", n), …
    fn counters(&self) -> Vec<(&'static str, u64)>;
    /// Point-in-time values reported as they are at the end.
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Monotone distributions, subtracted across warm-up as the counters are: name → (value,
    /// count) pairs in ascending value.
    fn histograms(&self) -> Vec<(&'static str, Vec<(u64, u64)>)> {
        Vec::new()
    }
    /// Ratios and means of a window, from its counters (`counters()` differences).
    fn window_metrics(&self, _counters: &[(&'static str, u64)]) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Integrity check of a page-mapped FTL's tables (NONE = u32::MAX): every page P2L holds is its
/// LPN's L2P entry, and each block's valid count is the number of its pages P2L holds. `unit`
/// names a block in errors ("block", "line").
pub(crate) fn check_p2l(
    l2p: &[u32],
    p2l: &[u32],
    valid: &[u32],
    pages_per_block: u32,
    unit: &str,
) -> Result<()> {
    use crate::error::SimError;
    let mut counted = vec![0u32; valid.len()];
    for (ppn, &lpn) in p2l.iter().enumerate() {
        if lpn == u32::MAX {
            continue;
        }
        if l2p[lpn as usize] != ppn as u32 {
            return Err(SimError::Integrity(format!(
                "PPN {ppn} claims LPN {lpn}, but LPN {lpn} maps to {}",
                l2p[lpn as usize]
            )));
        }
        counted[ppn / pages_per_block as usize] += 1;
    }
    for (b, (&c, &v)) in counted.iter().zip(valid).enumerate() {
        if c != v {
            return Err(SimError::Integrity(format!(
                "{unit} {b}: valid count {v}, but {c} valid pages"
            )));
        }
    }
    Ok(())
}

/// Error unless `pages` physical pages all have PPNs below `limit`, the first value the FTL
/// keeps for a marker (`what`: the FTL as the message names it).
pub(crate) fn check_ppn_range(pages: u64, limit: u32, what: &str) -> Result<()> {
    if pages >= limit as u64 {
        return Err(crate::error::SimError::Invalid(format!(
            "device too large for {what}: {pages} physical pages (max {})",
            limit as u64 - 1
        )));
    }
    Ok(())
}

/// Integrity check of one LPN: it must map to a page holding version `want` (0 = it must be
/// unmapped). `stored` is its (PPN, stored version) when mapped.
pub(crate) fn check_version(lpn: usize, want: u32, stored: Option<(u32, u32)>) -> Result<()> {
    use crate::error::SimError;
    match (want, stored) {
        (0, None) => Ok(()),
        (0, Some((ppn, _))) => Err(SimError::Integrity(format!(
            "LPN {lpn} was never written (or trimmed) but maps to PPN {ppn}"
        ))),
        (_, None) => Err(SimError::Integrity(format!(
            "LPN {lpn} (version {want}) is not mapped"
        ))),
        (_, Some((ppn, got))) if got != want => Err(SimError::Integrity(format!(
            "LPN {lpn} maps to PPN {ppn} holding version {got}, latest is {want}"
        ))),
        _ => Ok(()),
    }
}
