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
