//! `integrated`: a write buffer built on seed 002's three design criteria (§4), which the seed
//! states and leaves unbuilt. It is CLC (`clc.rs`: a hot LRU cluster list and cold clusters by
//! size) with a different victim choice and, by default, `reref` padding.
//!
//! 1. **Clustering against log-block re-reference, by the observed hit ratio.** At each eviction
//!    the candidates are CLC's victim (the largest cold cluster) and up to `candidates` cold
//!    clusters whose LBN owned a log record when they turned cold (REF's "recently evicted"
//!    blocks, found without a configured count: a buffered LBN cannot gain a log record, so the
//!    record can only have gone since, which is checked). Each scores
//!    (1 − h)·S_c/N_p + h·u, with u = min(P + S_c, N_p)/N_p when the LBN has a log record holding
//!    P pages (flushing it there is a log-block hit) and 0 otherwise; the highest wins, CLC's
//!    victim on a tie. h is the log-block hit ratio of this buffer's own recent flushes (an
//!    exponential mean over ≈`hit_window` flushes), so with few log blocks (h ≈ 0) the policy is
//!    CLC, and as log blocks become plentiful it prefers clusters whose log block is still there,
//!    as REF does. With no log blocks (page FTL) h stays 0 and it is exactly CLC (a test).
//! 2. **Padding only what will not be re-referenced**: the default padding is `reref`
//!    (`padding/reref.rs`), which predicts per LBN, and never pads a miss whose pages are the
//!    block's in-order prefix (its log block ends in a partial or switch merge, which costs what
//!    padding costs, or less when later flushes continue the order).
//! 3. **Log-block utilisation**: u is the utilisation the victim brings its log block to, and
//!    S_c/N_p is that of the new log block a miss takes, so the score prefers the victim that
//!    fills log blocks most.

use super::clc::{ClcBuffer, VictimChoice};
use super::groups::GroupStore;
use super::list::{Links, List, NIL};
use super::BufferParams;
use crate::error::{Result, SimError};
use crate::ftl::FtlView;

crate::params! {
    /// The integrated buffer's parameters (`[buffer.integrated]`).
    pub struct Params {
        /// Capacity of the hot (LRU) cluster list as a fraction of the buffer, as CLC's.
        hot_fraction: f64 = 0.1,
        /// Cold clusters with a log record examined per eviction, oldest first (besides CLC's
        /// victim); 0 = CLC's victim choice.
        candidates: u64 = 8,
        /// Flushes in the observed log-block hit ratio h (the exponential mean's horizon, ≥ 1).
        hit_window: u64 = 256,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        let clc = super::clc::Params {
            hot_fraction: self.hot_fraction,
        };
        crate::params::Params::check(&clc, table)?;
        if self.hit_window == 0 {
            return Err(SimError::config(
                format!("{table}.hit_window"),
                "0 is not ≥ 1".to_string(),
            ));
        }
        Ok(())
    }
}

/// The `integrated` buffer: CLC's lists with this file's victim choice.
pub fn buffer(p: BufferParams, q: &Params) -> ClcBuffer {
    ClcBuffer::with_choice(p, q.hot_fraction, Box::new(Chooser::new(q)))
}

/// The victim choice CLC delegates to when it runs as `integrated`.
pub struct Chooser {
    candidates: u32,
    alpha: f64,
    /// Observed log-block hit ratio of recent flushes.
    h: f64,
    links: Links,
    /// Cold clusters whose LBN had a log record when they turned cold, most recent first.
    logged: List,
    member: Vec<bool>,
    flushes: u64,
    hits: u64,
    /// Evictions whose victim was not CLC's.
    overrides: u64,
}

impl Chooser {
    pub fn new(p: &Params) -> Self {
        Chooser {
            candidates: p.candidates.min(u32::MAX as u64) as u32,
            alpha: 1.0 / p.hit_window as f64,
            h: 0.0,
            links: Links::default(),
            logged: List::default(),
            member: Vec::new(),
            flushes: 0,
            hits: 0,
            overrides: 0,
        }
    }
}

impl VictimChoice for Chooser {
    fn cooled(&mut self, g: u32, store: &GroupStore, view: &dyn FtlView) {
        if self.candidates > 0 && view.log_state(store.group(g).lbn).is_some() {
            if self.member.len() <= g as usize {
                self.member.resize(g as usize + 1, false);
            }
            self.member[g as usize] = true;
            self.links.push_front(&mut self.logged, g);
        }
    }

    fn removed(&mut self, g: u32) {
        if let Some(m) = self.member.get_mut(g as usize) {
            if *m {
                *m = false;
                self.links.remove(&mut self.logged, g);
            }
        }
    }

    /// The victim among `clc_victim` and the oldest logged cold clusters; whether its flush hits
    /// a log record feeds the observed hit ratio h.
    fn choose(&mut self, clc_victim: u32, store: &GroupStore, view: &dyn FtlView) -> u32 {
        let n_p = store.ppb as f64;
        let h = self.h;
        let score = |g: u32| {
            let grp = store.group(g);
            let s = grp.n_pages as f64 / n_p;
            match view.log_state(grp.lbn) {
                Some(ls) => {
                    let u = ((ls.pages + grp.n_pages) as f64).min(n_p) / n_p;
                    ((1.0 - h) * s + h * u, true)
                }
                None => ((1.0 - h) * s, false),
            }
        };
        let (mut best, (mut best_score, mut best_hit)) = (clc_victim, score(clc_victim));
        if h > 0.0 {
            let mut g = self.logged.tail;
            let mut seen = 0;
            while g != NIL && seen < self.candidates {
                let older = self.links.prev(g);
                seen += 1;
                if g != clc_victim {
                    if view.log_state(store.group(g).lbn).is_none() {
                        // Its log record was merged: no longer a candidate.
                        self.removed(g);
                    } else {
                        let (sc, hit) = score(g);
                        if sc > best_score {
                            (best, best_score, best_hit) = (g, sc, hit);
                        }
                    }
                }
                g = older;
            }
        }
        self.overrides += (best != clc_victim) as u64;
        self.flushes += 1;
        self.hits += best_hit as u64;
        self.h += self.alpha * (best_hit as u64 as f64 - self.h);
        best
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("buffer.integrated.weight", self.h),
            ("buffer.integrated.flushes", self.flushes as f64),
            ("buffer.integrated.log_hits", self.hits as f64),
            ("buffer.integrated.overrides", self.overrides as f64),
        ]
    }
}

/// The registry entry of `integrated`.
pub static ENTRY: super::Entry = super::entry! {
    "integrated", Params, super::GROUP_KEYS, padding "reref",
    "Seed 002's three criteria: CLC's hot LRU and size-ordered cold cluster lists; the victim is the best of CLC's \
     (the largest cold cluster) and the oldest `candidates` cold clusters whose LBN has a log record, scored \
     (1 − h)·S_c/N_p + h·u (u = the utilisation the flush brings the LBN's log block to, 0 on a log-block miss; \
     h = the observed log-block hit ratio of recent flushes), so it is CLC with few log blocks and favours live log \
     blocks, fullest first, with many. Default padding: reref.",
    |cfg, p, q| Ok(Box::new(buffer(p, &q)))
};

#[cfg(test)]
mod tests {
    use super::super::groups::testutil::{write_all, FakeSink};
    use super::super::{BufferParams, WriteBuffer};
    use super::*;
    use crate::ftl::LogState;
    use crate::padding::NoPadding;

    fn integrated(capacity: u64, hot_fraction: f64, hit_window: u64) -> ClcBuffer {
        buffer(
            BufferParams {
                capacity_pages: capacity,
                pages_per_block: 4,
                padding: Box::new(NoPadding),
            },
            &Params {
                hot_fraction,
                candidates: 8,
                hit_window,
            },
        )
    }

    fn record(pages: u32) -> LogState {
        LogState {
            references: 1,
            pages,
        }
    }

    /// 4 pages per block, capacity 8, no hot list (every cluster is cold at once), h = the last
    /// flush's hit (window 1). Log records (set by hand): LBN 5 (1 page), 6 (3), 7 (1).
    ///
    /// 1. Buffer LBN 5 ×3, 6 ×1, 7 ×2, 2 ×1, 3 ×1 (8 pages). Writing LBN 4 evicts with h = 0:
    ///    CLC's victim, the largest cluster, LBN 5 — a log hit, so h = 1.
    /// 2. Buffer LBN 2 and 3 a second page each (8 pages). Writing LBN 8 evicts with h = 1:
    ///    CLC's victim is LBN 7 (2 pages, the least recently written of the 2-page clusters),
    ///    scoring u = (1 + 2)/4 = 0.75; LBN 6 fills its log block, u = (3 + 1)/4 = 1: LBN 6.
    /// 3. LBN 7's record is merged (removed). Writing LBN 9 evicts with h = 1: every cluster
    ///    scores 0, so CLC's victim, LBN 7, a miss: h = 0.
    #[test]
    fn victims_worked_by_hand() {
        let mut b = integrated(8, 0.0, 1);
        let mut s = FakeSink::default();
        s.view.logs = vec![(5, record(1)), (6, record(3)), (7, record(1))];
        write_all(&mut b, &mut s, &[20, 21, 22, 24, 28, 29, 8, 12]);
        write_all(&mut b, &mut s, &[16]);
        assert_eq!(s.lbns(), [5]);
        write_all(&mut b, &mut s, &[9, 13, 32]);
        assert_eq!(s.lbns(), [5, 6]);
        s.view.logs.retain(|l| l.0 != 7);
        write_all(&mut b, &mut s, &[36]);
        assert_eq!(s.lbns(), [5, 6, 7]);
        let g = b.gauges(&s.view);
        let get = |k: &str| g.iter().find(|(n, _)| *n == k).unwrap().1;
        assert_eq!(get("buffer.integrated.weight"), 0.0);
        assert_eq!(get("buffer.integrated.flushes"), 3.0);
        assert_eq!(get("buffer.integrated.log_hits"), 2.0);
        assert_eq!(get("buffer.integrated.overrides"), 1.0);
    }

    /// h between 0 and 1 (window 2: h moves half-way to each outcome). Records: LBN 5 (0 pages),
    /// 6 (1), 7 (3); capacity 6, no hot list.
    /// 1. LBN 5 ×4, 6 ×1, 2 ×1; writing LBN 3 evicts LBN 5 (CLC's victim, a hit): h = 0.5.
    /// 2. LBN 2 ×2 more, 4 ×1 (6 pages); writing LBN 10: CLC's victim LBN 2 (3 pages, a miss)
    ///    scores 0.5·3/4 = 0.375, LBN 6 (a 1-page hit into a 1-page record)
    ///    0.5·1/4 + 0.5·2/4 = 0.375: a tie, so CLC's victim, LBN 2: h = 0.25.
    /// 3. LBN 3 ×1 more, 7 ×1 (6 pages); writing a second page of LBN 7: CLC's victim LBN 3
    ///    (2 pages, a miss) scores 0.75·2/4 = 0.375, LBN 7 (a 1-page hit into a 3-page record)
    ///    0.75·1/4 + 0.25·4/4 = 0.4375: LBN 7.
    #[test]
    fn weighted_scores() {
        let mut b = integrated(6, 0.0, 2);
        let mut s = FakeSink::default();
        s.view.logs = vec![(5, record(0)), (6, record(1)), (7, record(3))];
        write_all(&mut b, &mut s, &[20, 21, 22, 23, 24, 8, 12]);
        assert_eq!(s.lbns(), [5]);
        write_all(&mut b, &mut s, &[9, 10, 16, 40]);
        assert_eq!(s.lbns(), [5, 2]);
        write_all(&mut b, &mut s, &[13, 28, 29]);
        assert_eq!(s.lbns(), [5, 2, 7]);
        let g = b.gauges(&s.view);
        let h = g
            .iter()
            .find(|(n, _)| *n == "buffer.integrated.weight")
            .unwrap()
            .1;
        assert_eq!(h, 0.625);
    }

    /// With no log records (the page FTL) the integrated buffer flushes exactly what CLC does.
    #[test]
    fn without_log_records_it_is_clc() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let lpns: Vec<u64> = (0..20_000)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                // Skewed: half the writes in the first 64 pages.
                if rng.is_multiple_of(2) {
                    rng % 64
                } else {
                    rng % 4096
                }
            })
            .collect();
        let mut a = integrated(100, 0.1, 16);
        let mut clc = ClcBuffer::new(
            BufferParams {
                capacity_pages: 100,
                pages_per_block: 4,
                padding: Box::new(NoPadding),
            },
            0.1,
        );
        let (mut sa, mut sc) = (FakeSink::default(), FakeSink::default());
        write_all(&mut a, &mut sa, &lpns);
        write_all(&mut clc, &mut sc, &lpns);
        a.flush_all(&mut sa).unwrap();
        clc.flush_all(&mut sc).unwrap();
        assert!(sa.flushed.len() > 5_000);
        assert_eq!(sa.flushed, sc.flushed);
    }

    #[test]
    fn bad_params_name_field() {
        use crate::params::Params as _;
        let bad = |p: Params| p.check("buffer.integrated").unwrap_err().to_string();
        let d = Params::default;
        let e = bad(Params {
            hit_window: 0,
            ..d()
        });
        assert!(e.contains("buffer.integrated.hit_window"), "{e}");
        let e = bad(Params {
            hot_fraction: -0.1,
            ..d()
        });
        assert!(e.contains("buffer.integrated.hot_fraction"), "{e}");
    }
}
