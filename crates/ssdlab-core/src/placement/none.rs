//! `none`: one line for everything (pblk: user and GC data share the open line).

use super::{Class, Classifier};
use crate::units::Lpn;

/// Host writes to line 0, GC copies to line `gc`: 0 is one line for everything (`none`), 1 a
/// double write frontier (`sep-gc`).
pub struct FixedLines {
    pub gc: Class,
}

impl Classifier for FixedLines {
    fn classes(&self) -> u32 {
        self.gc + 1
    }
    fn user(&mut self, _lpn: Lpn, _tag: u32, _now: u64) -> Class {
        0
    }
    fn gc(&mut self, _lpn: Lpn, _from: Class, _now: u64) -> Class {
        self.gc
    }
}

/// The registry entry of `none`.
pub static ENTRY: super::Entry = super::entry! {
    "none", crate::params::NoParams,
    "No separation: one frontier for host and GC data (the line FTL: pblk's single open line; the page FTL keeps \
     its own streams and GC frontier).",
    build |_cfg, _, _| Ok(Box::new(FixedLines { gc: 0 })),
    classes |_, _| Ok(1),
    gc_through_ring |_| Ok(false),
};
