//! `oracle`: future knowledge of each page's remaining lifetime (not a lower bound of placement:
//! with few classes its bounds are coarse; see docs/config.md). A pre-pass over the workload gives
//! every host page write the time of the next write of its LPN; a page's class is its remaining
//! lifetime r (host page writes until that overwrite), at user writes and GC copies alike, against
//! bounds that double up to the device's logical pages N (`geometric`: N/2^(K−2), …, N/2, N for K
//! classes, the rest in the last), or in units of a line (`lines`: ⌊r / line pages⌋ capped at
//! the last, SepBIT's FK with its segments). Pages never overwritten go to the last line.

use super::{Class, Classifier};
use crate::error::{one_of, Result, SimError};
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
        /// Class bounds on the remaining lifetime: geometric (doubling up to the device's logical
        /// pages) | lines (SepBIT's FK: one class per line of lifetime).
        spacing: String = "geometric".into(),
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
        let spacing = ["geometric", "lines"];
        one_of(&format!("{table}.spacing"), &self.spacing, &spacing)
    }
}

pub struct Oracle {
    future: Future,
    /// Host page writes tagged so far (the arrival index of the next one).
    arrived: u64,
    /// Per LPN: the arrival index at which its current data is overwritten.
    death: Vec<u64>,
    /// Upper bounds (inclusive) of the remaining lifetime of every class but the last.
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
    /// `classes` as [`Params::classes_for`] gives them, on a device of `logical_pages` in lines
    /// of `line_pages`.
    pub fn new(
        p: &Params,
        classes: u32,
        logical_pages: u64,
        line_pages: u64,
        future: Future,
    ) -> Oracle {
        let k = classes.max(1) as u64;
        let bounds = (0..k - 1)
            .map(|c| {
                if p.spacing == "lines" {
                    (c + 1) * line_pages.max(1) - 1
                } else {
                    (logical_pages >> (k - 2 - c)).max(1)
                }
            })
            .collect();
        Oracle {
            death: future.first.clone(),
            future,
            arrived: 0,
            bounds,
        }
    }

    fn class_of(&self, remaining: u64) -> Class {
        self.bounds.partition_point(|&b| b < remaining) as Class
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

/// The registry entry of `oracle`.
pub static ENTRY: super::Entry = super::entry! {
    "oracle", Params,
    "Future knowledge, the lower bound: a pre-pass over the workload gives each host page write the time of its LPN's \
     next write; host writes and GC copies go by remaining lifetime (host page writes) against bounds doubling up to \
     the device's logical pages (or one line per class, SepBIT's FK); never-overwritten data to the last line.",
    build |_cfg, input, q| {
        let future = input.future.ok_or_else(|| {
            crate::error::SimError::Invalid("placement oracle built without its pre-pass".into())
        })?;
        let classes = q.classes_for(input.classes)?;
        Ok(Box::new(Oracle::new(&q, classes, input.logical_pages, input.line_pages, future)))
    },
    classes |k, q| q.classes_for(k),
    gc_through_ring |_| Ok(false),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn future_from_writes() {
        let f = Future::from_writes(&[3, 1, 3, 3, 0], 4);
        assert_eq!(f.next, [2, NEVER, 3, NEVER, NEVER]);
        assert_eq!(f.first, [4, 1, NEVER, 0]);
    }

    /// `lines` spacing, lines of 2 pages, 4 classes: class ⌊r / 2⌋, capped at 3.
    /// arrival  LPN  next write  r      class
    /// 0        0    2           2      1
    /// 1        1    4           3      1
    /// 2        0    5           3      1
    /// 3        2    8           5      2
    /// 4        1    never       —      3
    /// 5        0    6           1      0
    /// 6        0    never       —      3
    /// 7        3    never       —      3
    /// 8        2    never       —      3
    #[test]
    fn classes_by_remaining_lifetime() {
        let lpns = [0, 1, 0, 2, 1, 0, 0, 3, 2];
        let f = Future::from_writes(&lpns, 16);
        let lines = Params {
            spacing: "lines".into(),
            ..Params::default()
        };
        let mut o = Oracle::new(&lines, 4, 16, 2, f);
        assert_eq!(o.classes(), 4);
        let tags: Vec<u32> = lpns[..4].iter().map(|&l| o.tag(l)).collect();
        assert_eq!(tags, [1, 1, 1, 2]);
        // GC at arrival 4: LPN 0 dies at 5 (r = 1), LPN 2 at 8 (r = 4), LPN 9 was never written.
        assert_eq!(o.gc(0, 3, 0), 0);
        assert_eq!(o.gc(2, 0, 0), 2);
        assert_eq!(o.gc(9, 0, 0), 3);
        let tags: Vec<u32> = lpns[4..].iter().map(|&l| o.tag(l)).collect();
        assert_eq!(tags, [3, 0, 3, 3, 3]);
        assert_eq!(o.user(0, 3, 0), 3);
    }

    /// `geometric` spacing, N = 64 logical pages, 4 classes: bounds 16, 32, 64.
    #[test]
    fn geometric_bounds() {
        let o = Oracle::new(&Params::default(), 4, 64, 8, Future::default());
        assert_eq!(o.bounds, [16, 32, 64]);
        let classes: Vec<u32> = [0, 16, 17, 32, 33, 64, 65, NEVER]
            .iter()
            .map(|&r| o.class_of(r))
            .collect();
        assert_eq!(classes, [0, 0, 1, 1, 2, 2, 3, 3]);
        let o = Oracle::new(&Params::default(), 2, 64, 8, Future::default());
        assert_eq!(o.bounds, [64]);
    }
}
