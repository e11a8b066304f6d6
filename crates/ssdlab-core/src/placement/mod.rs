//! Data placement: which open line (write frontier) each programmed page goes to. A classifier
//! sees host writes twice: when a request's pages enter the write path ([`Classifier::tag`]: what
//! each buffer entry carries, e.g. the size class of its request), and when the FTL programs them
//! ([`Classifier::user`]); it sees every GC copy ([`Classifier::gc`]) and every line sealed or
//! collected. Classes are numbered 0..[`Classifier::classes`]; the FTL keeps one open line per
//! class. Logical time `now` is the FTL's count of host pages programmed (SepBIT's accessId).
//!
//! A new classifier is one file here (its parameters, rules and [`Entry`]) plus one line in
//! `registry.rs`.

pub mod dac;
pub mod none;
pub mod oracle;
pub mod sep_gc;
pub mod sepbit;
pub mod size_ema;
pub mod warcip;

use crate::component::Component;
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::units::Lpn;

/// Ok when `{table}.classes` is in 2..=64 (a classifier's own line count).
pub(crate) fn check_classes(classes: u32, table: &str) -> Result<()> {
    if !(2..=64).contains(&classes) {
        return Err(SimError::config(
            format!("{table}.classes"),
            format!("{classes} must be in 2..=64"),
        ));
    }
    Ok(())
}

/// Ok when `{table}.{field}` (a count of events between updates) is not 0.
pub(crate) fn check_nonzero(value: u64, table: &str, field: &str) -> Result<()> {
    if value == 0 {
        return Err(SimError::config(
            format!("{table}.{field}"),
            "0 must be at least 1",
        ));
    }
    Ok(())
}

/// An open line's index, 0 = the first (the hottest, for classifiers that order by temperature).
pub type Class = u32;

/// A placement scheme's registry entry.
pub struct Entry {
    pub info: Component,
    pub build: fn(&Config, PlacementInput) -> Result<Box<dyn Classifier>>,
    /// The classes it writes to, given the FTL's open lines `k` (for automatic class counts).
    pub classes: fn(&Config, u32) -> Result<u32>,
    /// Whether the line FTL must send its GC copies through the ring whatever
    /// `ftl.lines.gc_write` says.
    pub gc_through_ring: fn(&Config) -> Result<bool>,
}

/// A placement scheme's registry entry with its name written once, where each `q` is its
/// `[placement.<name>]` table read as `Params` (`crate::params::NoParams` for none):
/// `entry!(name, Params, summary, build |cfg, input, q| …, classes |k, q| …,
/// gc_through_ring |q| …)`.
macro_rules! entry {
    ($name:literal, $params:ty, $summary:expr,
     build |$cfg:ident, $input:pat_param, $q:pat_param| $build:expr,
     classes |$k:pat_param, $qc:pat_param| $classes:expr,
     gc_through_ring |$qr:pat_param| $ring:expr $(,)?) => {
        $crate::placement::Entry {
            info: $crate::component::Component::of::<$params>("placement", $name, $summary, &[]),
            build: |$cfg, $input| {
                let $q: $params = $crate::params::of(&$cfg.placement.tables, "placement", $name)?;
                $build
            },
            classes: |cfg, $k| {
                let $qc: $params = $crate::params::of(&cfg.placement.tables, "placement", $name)?;
                $classes
            },
            gc_through_ring: |cfg| {
                let $qr: $params = $crate::params::of(&cfg.placement.tables, "placement", $name)?;
                $ring
            },
        }
    };
}
pub(crate) use entry;

/// What every classifier is built from.
#[derive(Clone, Debug)]
pub struct PlacementInput {
    /// Logical pages of the device (per-LPN state).
    pub logical_pages: u64,
    /// Classes for classifiers whose count is configurable and left at 0 (automatic): the
    /// FTL's open lines (`ftl.lines.open_lines`) or streams (`ftl.page.streams`).
    pub classes: u32,
    /// Pages of a line (the FTL's block).
    pub line_pages: u64,
    /// The oracle's future knowledge (None unless `placement.kind = "oracle"`).
    pub future: Option<oracle::Future>,
}

pub trait Classifier: Send {
    /// Open lines it writes to, user and GC writes together.
    fn classes(&self) -> u32;
    /// A host write request of `bytes` bytes enters the write path; its pages' [`tag`]s follow.
    ///
    /// [`tag`]: Classifier::tag
    fn begin_request(&mut self, _bytes: u64) {}
    /// What host page `lpn` of the current request carries down in its buffer entry (the flush
    /// unit's hint). The default carries nothing (0).
    fn tag(&mut self, _lpn: Lpn) -> u32 {
        0
    }
    /// Whether a batch of host pages (the write thread's batch, a flush unit) goes to one line
    /// chosen by [`Classifier::batch_class`] rather than page by page.
    fn per_batch(&self) -> bool {
        false
    }
    /// The line of a whole batch, from its pages' tags (only for [`Classifier::per_batch`]).
    fn batch_class(&self, _tags: &[u32]) -> Class {
        0
    }
    /// Host page `lpn`, carrying `tag`, is programmed at logical time `now`: its line.
    fn user(&mut self, lpn: Lpn, tag: u32, now: u64) -> Class;
    /// GC copies `lpn` out of a line of class `from` at logical time `now`: its line, or with
    /// [`Classifier::gc_through_ring`] the class its ring entry carries.
    fn gc(&mut self, lpn: Lpn, from: Class, now: u64) -> Class;
    /// Whether GC copies must enter the line FTL's write ring as entries (pblk's
    /// `pblk_write_gc_to_cache`), to be batched and placed with host entries by the write
    /// thread, whatever `ftl.lines.gc_write` says (which sends them there when paced as pblk).
    fn gc_through_ring(&self) -> bool {
        false
    }
    /// A line of class `class` was filled and closed at `now`.
    fn sealed(&mut self, _class: Class, _now: u64) {}
    /// A line of class `class`, opened at `opened`, is collected at `now` (before its pages'
    /// [`Classifier::gc`] calls).
    fn collected(&mut self, _class: Class, _opened: u64, _now: u64) {}
    /// `lpn` was discarded.
    fn trim(&mut self, _lpn: Lpn) {}
    /// Monotone event counters, named `placement.<kind>.<what>`.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// Point-in-time values, named `placement.<kind>.<what>`.
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}
