//! `dac`: Dynamic dAta Clustering (Chiang, Lee & Chang, SPE 1999) as the SepBIT artifact runs it.
//! Every LPN has a level 0..K−1, which is its line. The first write of an LPN puts it at level 0;
//! each host rewrite moves it one level up (hotter, capped at K−1); each GC copy moves it one level
//! down (colder, floor 0) and goes to the line of its new level. User and GC writes share the K
//! lines. A trimmed LPN forgets its level: its next write is a first write again.

use super::{Class, Classifier};
use crate::error::Result;
use crate::units::Lpn;

crate::params! {
    /// DAC's parameters (`[placement.dac]`).
    pub struct Params {
        /// Levels = lines, 2..=64 (the SepBIT artifact's experiments use 6).
        classes: u32 = 6,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        super::check_classes(self.classes, table)
    }
}

/// The level of an LPN that holds no data (never written, or trimmed).
const ABSENT: u8 = u8::MAX;

pub struct Dac {
    /// Per LPN: its level, or [`ABSENT`].
    level: Vec<u8>,
    /// The highest level, K − 1.
    top: u8,
}

impl Dac {
    pub fn new(p: &Params, logical_pages: u64) -> Dac {
        Dac {
            level: vec![ABSENT; logical_pages as usize],
            top: (p.classes.clamp(2, 64) - 1) as u8,
        }
    }
}

impl Classifier for Dac {
    fn classes(&self) -> u32 {
        self.top as u32 + 1
    }
    fn user(&mut self, lpn: Lpn, _tag: u32, _now: u64) -> Class {
        let Some(l) = self.level.get_mut(lpn as usize) else {
            return 0;
        };
        *l = if *l == ABSENT {
            0
        } else {
            (*l + 1).min(self.top)
        };
        *l as Class
    }
    fn gc(&mut self, lpn: Lpn, _from: Class, _now: u64) -> Class {
        let Some(l) = self.level.get_mut(lpn as usize) else {
            return 0;
        };
        if *l == ABSENT {
            // Only valid (written) pages are copied; nothing to move.
            return 0;
        }
        *l = l.saturating_sub(1);
        *l as Class
    }
    fn trim(&mut self, lpn: Lpn) {
        if let Some(l) = self.level.get_mut(lpn as usize) {
            *l = ABSENT;
        }
    }
}

/// The registry entry of `dac`.
pub static ENTRY: super::Entry = super::entry! {
    "dac", Params,
    "DAC (Chiang, Lee & Chang 1999, as the SepBIT artifact runs it): each LPN's level is its line — a first write puts \
     it at level 0, each host rewrite one level up (capped at classes − 1), each GC copy one level down (floor 0).",
    build |_cfg, input, q| Ok(Box::new(Dac::new(&q, input.logical_pages))),
    classes |_, q| Ok(q.classes),
    gc_through_ring |_| Ok(false),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand, K = 3 (levels 0, 1, 2):
    /// call       level before → after   class
    /// user 5     new → 0                0
    /// user 5     0 → 1                  1
    /// user 5     1 → 2                  2
    /// user 5     2 → 2 (cap)            2
    /// gc 5       2 → 1                  1
    /// gc 5       1 → 0                  0
    /// gc 5       0 → 0 (floor)          0
    /// user 5     0 → 1 (a rewrite)      1
    /// user 7     new → 0                0
    /// trim 5
    /// user 5     new → 0                0
    /// user 5     0 → 1                  1
    #[test]
    fn levels_worked_by_hand() {
        let p = Params { classes: 3 };
        let mut d = Dac::new(&p, 8);
        assert_eq!(d.classes(), 3);
        let mut got = Vec::new();
        for _ in 0..4 {
            got.push(d.user(5, 0, 0));
        }
        for _ in 0..3 {
            got.push(d.gc(5, 0, 0));
        }
        got.push(d.user(5, 0, 0));
        got.push(d.user(7, 0, 0));
        d.trim(5);
        got.push(d.user(5, 0, 0));
        got.push(d.user(5, 0, 0));
        assert_eq!(got, [0, 1, 2, 2, 1, 0, 0, 1, 0, 0, 1]);
        // Out of range: no state, no panic.
        assert_eq!(d.user(8, 0, 0), 0);
        assert_eq!(d.gc(8, 1, 0), 0);
    }

    /// The direction: rewrites climb, GC copies sink, for any K (default 6: the cap is level 5).
    #[test]
    fn rewrites_climb_gc_sinks() {
        let mut d = Dac::new(&Params::default(), 4);
        let up: Vec<Class> = (0..8).map(|_| d.user(2, 0, 0)).collect();
        assert_eq!(up, [0, 1, 2, 3, 4, 5, 5, 5]);
        let down: Vec<Class> = (0..7).map(|_| d.gc(2, 5, 0)).collect();
        assert_eq!(down, [4, 3, 2, 1, 0, 0, 0]);
    }

    #[test]
    fn bad_params_name_the_field() {
        use crate::params::Params as _;
        let e = Params { classes: 1 }
            .check("placement.dac")
            .unwrap_err()
            .to_string();
        assert!(e.contains("placement.dac.classes"), "{e}");
    }
}
