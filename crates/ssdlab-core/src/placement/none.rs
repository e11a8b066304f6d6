//! `none`: one line for everything (pblk: user and GC data share the open line).

use super::{Class, Classifier};
use crate::units::Lpn;

pub struct NoSeparation;

impl Classifier for NoSeparation {
    fn classes(&self) -> u32 {
        1
    }
    fn user(&mut self, _lpn: Lpn, _tag: u32, _now: u64) -> Class {
        0
    }
    fn gc(&mut self, _lpn: Lpn, _from: Class, _now: u64) -> Class {
        0
    }
}

/// The registry entry of `none`.
pub static ENTRY: super::Entry = super::Entry {
        info: crate::component::Component::new(
            "placement",
            "none",
            "No separation: one frontier for host and GC data (the line FTL: pblk's single open line; the page FTL keeps \
             its own streams and GC frontier).",
            crate::params::NONE,
            &[],
        ),
        build: |_, _| Ok(Box::new(NoSeparation)),
        classes: |_, _| Ok(1),
    gc_through_ring: |_| Ok(false),
};
