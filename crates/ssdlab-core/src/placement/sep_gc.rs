//! `sep-gc`: user writes in line 0, GC copies in line 1 (SepBIT's SepGC; Van Houdt's double
//! write frontier).

use super::{Class, Classifier};
use crate::units::Lpn;

pub struct SepGc;

impl Classifier for SepGc {
    fn classes(&self) -> u32 {
        2
    }
    fn user(&mut self, _lpn: Lpn, _tag: u32, _now: u64) -> Class {
        0
    }
    fn gc(&mut self, _lpn: Lpn, _from: Class, _now: u64) -> Class {
        1
    }
}

/// The registry entry of `sep-gc`.
pub static ENTRY: super::Entry = super::Entry {
    info: crate::component::Component::new(
        "placement",
        "sep-gc",
        "Host writes to line 0, GC copies to line 1 (SepGC; a double write frontier).",
        crate::params::NONE,
        &[],
    ),
    build: |_, _| Ok(Box::new(SepGc)),
    classes: |_, _| Ok(2),
    gc_through_ring: |_| Ok(false),
};
