//! `oracle`: future knowledge, the lower bound of placement. A pre-pass over the workload gives
//! every host page write the time of the next write of its LPN; a page's class is its remaining
//! lifetime (time until that overwrite, in host page writes) against geometric bounds, at user
//! writes and GC copies alike. Pages never overwritten go to the last line.

use super::{Class, Classifier};
use crate::error::{Result, SimError};
use crate::units::Lpn;

/// "Never overwritten again".
pub const NEVER: u64 = u64::MAX;

/// The pre-pass's result: for the i-th host page write (in arrival order, from 0), the index of
/// the next write of the same LPN (or [`NEVER`]); and for every LPN, the index of its first write.
#[derive(Clone, Debug, Default)]
pub struct Future {
    pub next: Vec<u64>,
    pub first: Vec<u64>,
}

impl Future {
    /// From the LPNs of the host page writes in arrival order, on a device of `logical_pages`.
    pub fn from_writes(lpns: &[Lpn], logical_pages: u64) -> Future {
        let mut first = vec![NEVER; logical_pages as usize];
        let mut next = vec![NEVER; lpns.len()];
        for (i, &lpn) in lpns.iter().enumerate().rev() {
            let slot = &mut first[lpn as usize];
            next[i] = *slot;
            *slot = i as u64;
        }
        Future { next, first }
    }
}

crate::params! {
    /// The oracle's parameters (`[placement.oracle]`).
    pub struct Params {
        /// Lines (classes), 2..=64; 0 = the FTL's open lines (`ftl.lines.open_lines`) or
        /// streams (`ftl.page.streams`).
        classes: u32 = 0,
        /// Upper bound of class 0's remaining lifetime, as a fraction of the device's logical
        /// pages; class k holds lifetimes up to first_bound·4^k (the last: the rest).
        first_bound: f64 = 0.25,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        if self.classes != 0 && !(2..=64).contains(&self.classes) {
            return Err(SimError::config(
                format!("{table}.classes"),
                format!("{} must be 0 (automatic) or in 2..=64", self.classes),
            ));
        }
        if !(self.first_bound > 0.0 && self.first_bound.is_finite()) {
            return Err(SimError::config(
                format!("{table}.first_bound"),
                format!("{} must be positive", self.first_bound),
            ));
        }
        Ok(())
    }
}

pub struct Oracle {
    future: Future,
    /// Host page writes tagged so far (the arrival index of the next one).
    arrived: u64,
    /// Per LPN: the arrival index at which its current data is overwritten.
    death: Vec<u64>,
    /// Upper bounds of the classes but the last, in host page writes.
    bounds: Vec<u64>,
}

impl Params {
    /// The classes used when the FTL has `k` open lines or streams.
    pub fn classes_for(&self, k: u32) -> Result<u32> {
        let c = if self.classes == 0 { k } else { self.classes };
        if !(2..=64).contains(&c) {
            return Err(SimError::config(
                "placement.oracle.classes",
                format!(
                    "the oracle needs 2..=64 classes, but gets {c} from the FTL's open lines or streams: set it here"
                ),
            ));
        }
        Ok(c)
    }
}

impl Oracle {
    /// `classes` as [`Params::classes_for`] gives them.
    pub fn new(p: &Params, classes: u32, logical_pages: u64, future: Future) -> Oracle {
        let unit = p.first_bound * logical_pages as f64;
        let bounds = (0..classes.max(1) - 1)
            .map(|k| (unit * 4f64.powi(k as i32)).ceil() as u64)
            .collect();
        Oracle {
            death: future.first.clone(),
            future,
            arrived: 0,
            bounds,
        }
    }

    fn class_of(&self, remaining: u64) -> Class {
        self.bounds
            .iter()
            .position(|&b| remaining <= b)
            .unwrap_or(self.bounds.len()) as Class
    }
}

impl Classifier for Oracle {
    fn classes(&self) -> u32 {
        self.bounds.len() as u32 + 1
    }
    fn tag(&mut self, lpn: Lpn) -> u32 {
        let i = self.arrived;
        self.arrived += 1;
        // Past the pre-pass (a longer run than the workload it saw): nothing is known.
        let next = self.future.next.get(i as usize).copied().unwrap_or(NEVER);
        if let Some(d) = self.death.get_mut(lpn as usize) {
            *d = next;
        }
        self.class_of(next.saturating_sub(i))
    }
    fn user(&mut self, _lpn: Lpn, tag: u32, _now: u64) -> Class {
        tag
    }
    fn gc(&mut self, lpn: Lpn, _from: Class, _now: u64) -> Class {
        let death = self.death.get(lpn as usize).copied().unwrap_or(NEVER);
        self.class_of(death.saturating_sub(self.arrived))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn future_from_writes() {
        let f = Future::from_writes(&[3, 1, 3, 3, 0], 4);
        assert_eq!(f.next, [2, NEVER, 3, NEVER, NEVER]);
        assert_eq!(f.first, [4, 1, NEVER, 0]);
    }

    /// 16 logical pages, first_bound 0.25: bounds 4, 16, 64 host page writes.
    #[test]
    fn classes_by_remaining_lifetime() {
        let lpns = [0, 1, 0, 2, 1, 0];
        let f = Future::from_writes(&lpns, 16);
        let mut o = Oracle::new(&Params::default(), 4, 16, f);
        assert_eq!(o.classes(), 4);
        let tags: Vec<u32> = lpns.iter().map(|&l| o.tag(l)).collect();
        // Lifetimes: 2, 3, 3, never, never, never.
        assert_eq!(tags, [0, 0, 0, 3, 3, 3]);
        // LPN 5 was never written: dies never; LPN 0's data lives forever from arrival 5 on.
        assert_eq!(o.gc(5, 0, 0), 3);
        assert_eq!(o.gc(0, 0, 0), 3);
        assert_eq!(o.class_of(4), 0);
        assert_eq!(o.class_of(5), 1);
        assert_eq!(o.class_of(64), 2);
        assert_eq!(o.class_of(65), 3);
    }
}
