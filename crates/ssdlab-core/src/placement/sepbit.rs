//! `sepbit`: SepBIT (Wang et al., FAST'22) as its artifact's trace simulator runs it. Six lines;
//! time is the host-page clock `now`.
//!
//! - **ℓ**, the lifespan threshold, is the mean lifespan (collection time − open time) of the last
//!   `refresh` (16) collected class-0 lines. It is recomputed from those lines alone each time
//!   that many have been collected, and is +∞ until then.
//! - **User write** of an LPN last user-written at t: its lifespan so far is v = now − t. It goes to
//!   class 0 (short-lived) if the LPN holds data and v < ℓ, else to class 1. With `window =
//!   "fifo"` (the artifact), the bound is min(ℓ, W). W is the length of the artifact's FIFO of
//!   recent user writes; see [`Params::window`].
//! - **GC copy**: out of a class-0 line → 2. Otherwise, by age = now − last user write: < 4ℓ → 3,
//!   < 16ℓ → 4, else 5.
//!
//! A trimmed LPN holds no data: its next write is a first write (class 1). `now` must advance by
//! one per host page, as the artifact's accessId does: W counts user writes.
//!
//! Metrics: gauge `placement.sepbit.lifespan_threshold` is ℓ in host pages, or -1 while ℓ is
//! still +∞; gauge `placement.sepbit.window_pages` is W (`fifo` only). Counter
//! `placement.sepbit.short_lived_writes` counts class-0 user writes, and
//! `placement.sepbit.threshold_updates` counts updates of ℓ.

use super::{Class, Classifier};
use crate::error::{one_of, Result};
use crate::units::Lpn;

crate::params! {
    /// SepBIT's parameters (`[placement.sepbit]`).
    pub struct Params {
        /// How far back a rewrite can see its previous write. `fifo` is the artifact: a FIFO of the
        /// last W user writes, where W grows by one per user write up to min(pages holding data,
        /// ℓ) and shrinks by at most one per write when over ℓ. A rewrite is short-lived iff
        /// v < min(ℓ, W), so before ℓ is known the window is the number of pages holding data.
        /// `full`: v < ℓ alone, as a full last-write map reads it, so every rewrite is short-lived
        /// before ℓ is known.
        window: String = "fifo".into(),
        /// Collected class-0 lines per update of ℓ, which is their mean lifespan (16 in the
        /// artifact).
        refresh: u32 = 16,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        one_of(&format!("{table}.window"), &self.window, &["fifo", "full"])?;
        super::check_nonzero(self.refresh as u64, table, "refresh")
    }
}

/// "Never user-written" (or trimmed since).
const NEVER: u64 = u64::MAX;

pub struct SepBit {
    /// Per LPN: the time of its last user write, or [`NEVER`].
    last: Vec<u64>,
    /// ℓ in host pages (+∞ until the first update).
    threshold: f64,
    fifo: bool,
    /// W: the FIFO's length (`fifo` only).
    window: u64,
    /// LPNs holding data (the artifact's valid-block count caps W).
    valid: u64,
    refresh: u32,
    /// Lifespans of the class-0 lines collected since the last update, and their number.
    span_sum: u64,
    spans: u32,
    short_lived: u64,
    updates: u64,
}

impl SepBit {
    pub fn new(p: &Params, logical_pages: u64) -> SepBit {
        SepBit {
            last: vec![NEVER; logical_pages as usize],
            threshold: f64::INFINITY,
            fifo: p.window != "full",
            window: 0,
            valid: 0,
            refresh: p.refresh.max(1),
            span_sum: 0,
            spans: 0,
            short_lived: 0,
            updates: 0,
        }
    }

    /// ℓ in host pages (+∞ before the first update).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
}

impl Classifier for SepBit {
    fn classes(&self) -> u32 {
        6
    }
    fn user(&mut self, lpn: Lpn, _tag: u32, now: u64) -> Class {
        let Some(slot) = self.last.get_mut(lpn as usize) else {
            return 1;
        };
        let prev = std::mem::replace(slot, now);
        if prev == NEVER {
            self.valid += 1;
        }
        let bound = if self.fifo {
            self.threshold.min(self.window as f64)
        } else {
            self.threshold
        };
        let short = prev != NEVER && (now.saturating_sub(prev) as f64) < bound;
        if self.fifo {
            // This write enters the FIFO; one entry leaves if it is over min(valid, ℓ), and one
            // more if it is still over ℓ (so it shrinks by one per write toward a smaller ℓ).
            self.window += 1;
            if self.window as f64 > (self.valid as f64).min(self.threshold) {
                self.window -= 1;
                if self.window as f64 > self.threshold {
                    self.window -= 1;
                }
            }
        }
        if short {
            self.short_lived += 1;
            0
        } else {
            1
        }
    }
    fn gc(&mut self, lpn: Lpn, from: Class, now: u64) -> Class {
        if from == 0 {
            return 2;
        }
        let age = match self.last.get(lpn as usize) {
            Some(&t) if t != NEVER => now.saturating_sub(t) as f64,
            _ => f64::INFINITY,
        };
        if age < 4.0 * self.threshold {
            3
        } else if age < 16.0 * self.threshold {
            4
        } else {
            5
        }
    }
    fn collected(&mut self, class: Class, opened: u64, now: u64) {
        if class != 0 {
            return;
        }
        self.span_sum += now.saturating_sub(opened);
        self.spans += 1;
        if self.spans == self.refresh {
            self.threshold = self.span_sum as f64 / self.refresh as f64;
            self.span_sum = 0;
            self.spans = 0;
            self.updates += 1;
        }
    }
    fn trim(&mut self, lpn: Lpn) {
        if let Some(t) = self.last.get_mut(lpn as usize) {
            if *t != NEVER {
                *t = NEVER;
                self.valid -= 1;
            }
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("placement.sepbit.short_lived_writes", self.short_lived),
            ("placement.sepbit.threshold_updates", self.updates),
        ]
    }
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let l = if self.threshold.is_finite() {
            self.threshold
        } else {
            -1.0
        };
        let mut g = vec![("placement.sepbit.lifespan_threshold", l)];
        if self.fifo {
            g.push(("placement.sepbit.window_pages", self.window as f64));
        }
        g
    }
}

/// The registry entry of `sepbit`.
pub static ENTRY: super::Entry = super::entry! {
    "sepbit", Params,
    "SepBIT (Wang et al., FAST'22, as its artifact runs it): a host rewrite whose previous copy lived less than ℓ (the \
     mean lifespan of the last 16 collected class-0 lines, +∞ at first; with the artifact's FIFO window) goes to line \
     0, other host writes to line 1; GC copies out of line 0 go to 2, others to 3, 4 or 5 by age against 4ℓ and 16ℓ. \
     Six lines.",
    build |_cfg, input, q| Ok(Box::new(SepBit::new(&q, input.logical_pages))),
    classes |_, _| Ok(6),
    gc_through_ring |_| Ok(false),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn gauge(s: &SepBit, name: &str) -> f64 {
        s.gauges().iter().find(|g| g.0 == name).unwrap().1
    }

    /// Worked by hand, `window = "fifo"`, 8 LPNs. valid = LPNs holding data after the write;
    /// W' = W + 1, then −1 if W' > min(valid, ℓ), then −1 more if still > ℓ.
    ///
    /// t   call              v    bound min(ℓ, W)   class   valid  W after
    /// 1   user 0            new  —                 1       1      1
    /// 2   user 1            new  —                 1       2      2
    /// 3   user 0            2    min(∞, 2) = 2     1       2      2 (3 > 2)
    /// 4   user 0            1    2                 0       2      2
    /// 5   user 2            new  —                 1       3      3
    /// 6   user 1            4    3                 1       3      3
    /// collected: a class-1 line (ignored), 15 class-0 lines of lifespan 4 (ℓ still ∞),
    ///   a 16th of lifespan 6 − 2 = 4 → ℓ = 64 / 16 = 4
    /// 7   user 2            2    min(4, 3) = 3     0       3      3
    /// 8   user 3            new  —                 1       4      4
    /// 9   user 0            5    min(4, 4) = 4     1       4      4
    /// 10  user 3            2    4                 0       4      4
    /// GC at 10 (4ℓ = 16, 16ℓ = 64):
    ///     gc 2 from 0       —                      2
    ///     gc 2 from 1       age 3 < 16             3
    ///     gc 1 from 4 @22   age 16 ≥ 16, < 64      4
    ///     gc 1 from 3 @69   age 63                 4
    ///     gc 1 from 5 @70   age 64 ≥ 64            5
    /// 16 class-0 lines of lifespan 1 → ℓ = 1 (the mean of these 16, not of all 32)
    /// 11  user 3            1    min(1, 4) = 1     1       4      3 (5 > 1 → 4 > 1 → 3)
    /// 12  user 2            5    1                 1       4      2
    /// trim 3 (valid 3); then 16 lines of lifespan 20 → ℓ = 20
    /// 13  user 3            new  —                 1       4      3
    /// 14  user 0            5    min(20, 3) = 3    1       4      4
    /// 15  user 0            1    4                 0       4      4 (5 > min(4, 20))
    #[test]
    fn fifo_worked_by_hand() {
        let mut s = SepBit::new(&Params::default(), 8);
        assert_eq!(s.classes(), 6);
        let mut got = Vec::new();
        for (t, lpn) in [(1, 0), (2, 1), (3, 0), (4, 0), (5, 2), (6, 1)] {
            got.push(s.user(lpn, 0, t));
        }
        assert_eq!(got, [1, 1, 1, 0, 1, 1]);
        assert_eq!(gauge(&s, "placement.sepbit.window_pages"), 3.0);
        s.collected(1, 0, 6);
        for _ in 0..15 {
            s.collected(0, 0, 4);
        }
        assert_eq!(gauge(&s, "placement.sepbit.lifespan_threshold"), -1.0);
        s.collected(0, 2, 6);
        assert_eq!(s.threshold(), 4.0);
        got.clear();
        for (t, lpn) in [(7, 2), (8, 3), (9, 0), (10, 3)] {
            got.push(s.user(lpn, 0, t));
        }
        assert_eq!(got, [0, 1, 1, 0]);
        assert_eq!(gauge(&s, "placement.sepbit.window_pages"), 4.0);
        let gc = [
            s.gc(2, 0, 10),
            s.gc(2, 1, 10),
            s.gc(1, 4, 22),
            s.gc(1, 3, 69),
            s.gc(1, 5, 70),
        ];
        assert_eq!(gc, [2, 3, 4, 4, 5]);
        for _ in 0..16 {
            s.collected(0, 9, 10);
        }
        assert_eq!(s.threshold(), 1.0);
        assert_eq!(s.user(3, 0, 11), 1);
        assert_eq!(gauge(&s, "placement.sepbit.window_pages"), 3.0);
        assert_eq!(s.user(2, 0, 12), 1);
        assert_eq!(gauge(&s, "placement.sepbit.window_pages"), 2.0);
        s.trim(3);
        for _ in 0..16 {
            s.collected(0, 0, 20);
        }
        assert_eq!(gauge(&s, "placement.sepbit.lifespan_threshold"), 20.0);
        got.clear();
        for (t, lpn) in [(13, 3), (14, 0), (15, 0)] {
            got.push(s.user(lpn, 0, t));
        }
        assert_eq!(got, [1, 1, 0]);
        assert_eq!(gauge(&s, "placement.sepbit.window_pages"), 4.0);
        assert_eq!(
            s.counters(),
            [
                ("placement.sepbit.short_lived_writes", 4),
                ("placement.sepbit.threshold_updates", 3)
            ]
        );
    }

    /// `window = "full"` on the same first writes: with ℓ = ∞ every rewrite is short-lived
    /// (t = 3: v = 2, class 0 where the FIFO said 1), and only ℓ bounds v afterwards. With
    /// ℓ = ∞, every GC copy from a class other than 0 goes to class 3.
    #[test]
    fn full_map_reads_v_against_l_alone() {
        let p = Params {
            window: "full".into(),
            ..Params::default()
        };
        let mut s = SepBit::new(&p, 8);
        let got: Vec<Class> = [(1, 0), (2, 1), (3, 0), (4, 0), (5, 2), (6, 1)]
            .iter()
            .map(|&(t, lpn)| s.user(lpn, 0, t))
            .collect();
        assert_eq!(got, [1, 1, 0, 0, 1, 0]);
        assert_eq!(s.gc(1, 1, 1_000_000), 3);
        assert_eq!(s.gc(7, 1, 1_000_000), 5, "never written: infinitely old");
        for _ in 0..16 {
            s.collected(0, 0, 3);
        }
        // ℓ = 3: v = 5 for LPN 0 → 1; v = 2 for LPN 2 → 0.
        assert_eq!(s.user(0, 0, 9), 1);
        assert_eq!(s.user(2, 0, 7), 0);
        assert_eq!(s.gauges().len(), 1, "no window gauge");
    }

    /// While ℓ = 2 the FIFO keeps only the last 2 user writes. When ℓ grows to 100 it regrows by
    /// one page per write, so a rewrite with W ≤ v < ℓ (and v < pages holding data) is long-lived
    /// under `fifo` and short-lived under `full`: LPN 30, written at t = 30, rewritten at t = 40
    /// (v = 10, W = 2, 40 pages hold data).
    #[test]
    fn window_lags_a_growing_threshold() {
        let run = |window: &str| {
            let p = Params {
                window: window.into(),
                refresh: 1,
            };
            let mut s = SepBit::new(&p, 64);
            s.collected(0, 0, 2);
            for t in 0..40 {
                s.user(t, 0, t);
            }
            s.collected(0, 0, 100);
            s.user(30, 0, 40)
        };
        assert_eq!(run("fifo"), 1);
        assert_eq!(run("full"), 0);
    }

    #[test]
    fn bad_params_name_the_field() {
        use crate::params::Params as _;
        let p = Params {
            window: "lru".into(),
            ..Params::default()
        };
        let e = p.check("placement.sepbit").unwrap_err().to_string();
        assert!(e.contains("placement.sepbit.window"), "{e}");
        let p = Params {
            refresh: 0,
            ..Params::default()
        };
        let e = p.check("placement.sepbit").unwrap_err().to_string();
        assert!(e.contains("placement.sepbit.refresh"), "{e}");
    }
}
