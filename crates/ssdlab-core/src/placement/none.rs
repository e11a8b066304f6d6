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
