//! `warcip`: WARCIP (Yang, Pei & Yang, SYSTOR'19) as the SepBIT artifact runs it. Line 0 takes
//! every GC copy. The other lines hold the clusters of user writes, which are kept in a sequence
//! (positions 1, 2, …).
//!
//! - **Rewrite interval.** A user write has ui = now − (its last user write) + penalty, or 0 for a
//!   first write. A GC copy sets the penalty to now − (its last user write), replacing any earlier
//!   penalty, so data that survives GC looks colder at its next rewrite. A user write resets the
//!   penalty to 0.
//! - **Nearest cluster.** The write goes to the cluster whose centre is nearest to ui; a tie goes
//!   to the later position. The centre is the running mean of the ui written into the cluster's
//!   open line. The count restarts when that line is sealed, so the next write into the cluster
//!   sets its centre to its own ui.
//! - **Rounds.** Every `period` (256) sealed user lines there is one round.
//!   - Split: a cluster that took more than half of the round's user writes is split if fewer
//!     than K lines are in use. A new cluster is inserted just before it, with centre = the mean of
//!     its neighbours' centres (position 0's centre stays 0).
//!   - Merge: otherwise, the first cluster that took fewer user writes than a line holds is
//!     marked, unless one is already marked. It is retired when its open line is next sealed.
//!   - The marked position is kept as a number, so a split before the merge shifts it onto the
//!     neighbour, as in the artifact.
//!
//! Lines and positions: each cluster holds one of the K lines. A split takes the lowest free line;
//! a merge frees one. The run starts with K − 1 user clusters on lines 1..K, all centres 0.
//!
//! A line's size is learned: it is the most user pages the classifier has put into one line
//! between seals. The FTL must call `sealed` before the next page it classifies into that line's
//! successor.
//!
//! Time is the host-page clock `now`, not the trace timestamps (µs) the artifact uses: classifiers
//! see no wall time. A trimmed LPN forgets its times, so its next write is a first write.
//!
//! Metrics: gauge `placement.warcip.clusters` is the number of user clusters in use; counters
//! `placement.warcip.splits` and `placement.warcip.merges` count splits and retirements.

use super::{Class, Classifier};
use crate::error::Result;
use crate::units::Lpn;

crate::params! {
    /// WARCIP's parameters (`[placement.warcip]`).
    pub struct Params {
        /// Lines, 2..=64: line 0 for GC copies plus up to K − 1 clusters of user writes (the
        /// SepBIT artifact's experiments use 6).
        classes: u32 = 6,
        /// Sealed user lines per split/merge round (256 in the artifact).
        period: u64 = 256,
    }
}

impl crate::params::Params for Params {
    fn check(&self, table: &str) -> Result<()> {
        super::check_classes(self.classes, table)?;
        super::check_nonzero(self.period, table, "period")
    }
}

/// "Never user-written" (or trimmed since).
const NEVER: u64 = u64::MAX;

#[derive(Clone, Debug)]
struct Cluster {
    centre: f64,
    /// User writes into its open line (the running mean's count).
    blocks: u64,
    /// User writes this round.
    writes: u64,
    line: Class,
}

pub struct Warcip {
    /// Per LPN: [its last user write or NEVER, its GC penalty]. ui needs both times, so this
    /// state is 16 bytes per LPN.
    times: Vec<[u64; 2]>,
    /// Position 0: the GC line (centre 0, never updated); then the user clusters.
    clusters: Vec<Cluster>,
    lines: u32,
    period: u64,
    sealed_user: u64,
    round_writes: u64,
    /// The position to retire at its next seal.
    merge_next: Option<usize>,
    /// The most user pages seen in one line (the merge bound).
    line_pages: u64,
    splits: u64,
    merges: u64,
}

impl Warcip {
    pub fn new(p: &Params, logical_pages: u64) -> Warcip {
        let lines = p.classes.clamp(2, 64);
        let mut clusters = Vec::with_capacity(lines as usize + 1);
        clusters.extend((0..lines).map(|line| Cluster {
            centre: 0.0,
            blocks: 0,
            writes: 0,
            line,
        }));
        Warcip {
            times: vec![[NEVER, 0]; logical_pages as usize],
            clusters,
            lines,
            period: p.period.max(1),
            sealed_user: 0,
            round_writes: 0,
            merge_next: None,
            line_pages: 0,
            splits: 0,
            merges: 0,
        }
    }

    /// (line, centre) of the user clusters, in position order.
    pub fn centres(&self) -> Vec<(Class, f64)> {
        self.clusters[1..]
            .iter()
            .map(|c| (c.line, c.centre))
            .collect()
    }

    fn round(&mut self) {
        let n = self.clusters.len();
        let half = self.round_writes / 2;
        let big = (1..n).find(|&i| self.clusters[i].writes > half);
        match big {
            Some(i) if n < self.lines as usize => {
                // The lowest line no cluster holds (one is free: fewer than K are in use).
                let line = (0..self.lines)
                    .find(|&l| self.clusters.iter().all(|c| c.line != l))
                    .unwrap_or(0);
                let centre = (self.clusters[i - 1].centre + self.clusters[i].centre) / 2.0;
                self.clusters.insert(
                    i,
                    Cluster {
                        centre,
                        blocks: 0,
                        writes: 0,
                        line,
                    },
                );
                self.splits += 1;
            }
            _ => {
                let small = (1..n).find(|&i| self.clusters[i].writes < self.line_pages);
                if self.merge_next.is_none() {
                    self.merge_next = small;
                }
            }
        }
        self.round_writes = 0;
        for c in &mut self.clusters {
            c.writes = 0;
        }
    }
}

impl Classifier for Warcip {
    fn classes(&self) -> u32 {
        self.lines
    }
    fn user(&mut self, lpn: Lpn, _tag: u32, now: u64) -> Class {
        let ui = match self.times.get_mut(lpn as usize) {
            Some(t) => {
                let ui = if t[0] == NEVER {
                    0
                } else {
                    now.saturating_sub(t[0]).saturating_add(t[1])
                };
                *t = [now, 0];
                ui
            }
            None => 0,
        } as f64;
        let mut best = 1;
        let mut min = f64::MAX;
        for i in (1..self.clusters.len()).rev() {
            let d = (self.clusters[i].centre - ui).abs();
            if d < min {
                best = i;
                min = d;
            }
        }
        let Some(c) = self.clusters.get_mut(best) else {
            return 0;
        };
        c.centre = (c.centre * c.blocks as f64 + ui) / (c.blocks + 1) as f64;
        c.blocks += 1;
        c.writes += 1;
        self.round_writes += 1;
        c.line
    }
    fn gc(&mut self, lpn: Lpn, _from: Class, now: u64) -> Class {
        if let Some(t) = self.times.get_mut(lpn as usize) {
            if t[0] != NEVER {
                t[1] = now.saturating_sub(t[0]);
            }
        }
        self.clusters[0].line
    }
    fn sealed(&mut self, line: Class, _now: u64) {
        let Some(pos) = self.clusters.iter().position(|c| c.line == line) else {
            return;
        };
        if pos != 0 {
            self.sealed_user += 1;
            self.line_pages = self.line_pages.max(self.clusters[pos].blocks);
        }
        // The last user cluster is never retired (a round cannot mark it: it took every write).
        if self.merge_next == Some(pos) && self.clusters.len() > 2 {
            self.clusters.remove(pos);
            self.merge_next = None;
            self.merges += 1;
        } else {
            self.clusters[pos].blocks = 0;
        }
        if self.sealed_user >= self.period {
            self.sealed_user = 0;
            self.round();
        }
    }
    fn trim(&mut self, lpn: Lpn) {
        if let Some(t) = self.times.get_mut(lpn as usize) {
            *t = [NEVER, 0];
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("placement.warcip.splits", self.splits),
            ("placement.warcip.merges", self.merges),
        ]
    }
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        vec![(
            "placement.warcip.clusters",
            (self.clusters.len() - 1) as f64,
        )]
    }
}

/// The registry entry of `warcip`.
pub static ENTRY: super::Entry = super::entry! {
    "warcip", Params,
    "WARCIP (Yang, Pei & Yang 2019, as the SepBIT artifact runs it): host writes go to the user cluster whose centre \
     (a running mean) is nearest their rewrite interval (now − last write + GC penalty, in host page writes); clusters \
     split and merge every `period` sealed user lines. Every GC copy goes to line 0 and sets the page's penalty.",
    build |_cfg, input, q| Ok(Box::new(Warcip::new(&q, input.logical_pages))),
    classes |_, q| Ok(q.classes),
    gc_through_ring |_| Ok(false),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: K = 3 (GC line 0, user clusters on lines 1 and 2), period = 2 sealed user
    /// lines, lines of 2 pages (the test seals a line after its 2nd page). Centres c1 (line 1),
    /// c2 (line 2) start at 0; b = pages in the open line; w = the round's writes.
    ///
    /// t   call        ui              nearest (ties → later)   line  after
    /// 1   user 0      new: 0          tie 0/0 → line 2         2     c2=0 b2=1
    /// 2   user 1      new: 0          tie → line 2             2     b2=2; seal 2 (1st; line=2 pages)
    /// 3   user 0      3−1 = 2         tie 2/2 → line 2         2     c2=(0·0+2)/1=2 (count restarted)
    /// 4   user 2      new: 0          |0−0| < |2−0| → line 1    1     c1=0 b1=1 w1=1
    /// 5   user 1      5−2 = 3         |2−3| < 3 → line 2        2     c2=(2·1+3)/2=2.5; seal 2 (2nd)
    ///     round: w1=1, w2=4 of 5 (half 2): w2 > 2 but 3 lines in use → no split;
    ///            first with w < 2 pages: line 1 → marked
    /// 6   user 3      new: 0          line 1                   1     seal 1 → retired (1 user seal)
    /// 7   user 0      7−3 = 4         only line 2              2     c2=4 (count restarted)
    /// 8   user 2      8−4 = 4         line 2                   2     c2=4; seal 2 (2nd)
    ///     round: line 2 took 2 of 3 (half 1) and 2 lines are in use → split: a cluster on the
    ///            free line 1 before it, centre (0 + 4)/2 = 2
    /// 9   user 3      9−6 = 3         tie |4−3| = |2−3| → line 2   2   c2=3
    /// 10  user 5      new: 0          |2−0| < |3−0| → line 1    1     c1=0
    /// 11  gc 5 from 1                 penalty 11−10 = 1        0
    /// 11  user 5      11−10+1 = 2     |3−2| < |0−2| → line 2    2     c2=(3+2)/2=2.5; seal 2
    ///     (without the penalty ui = 1 would go to line 1)
    /// 12  gc 3        penalty 12−9 = 3                          0
    /// 14  gc 3        penalty 14−9 = 5 (replaces 3)             0
    /// 14  user 3      14−9+5 = 10     line 2                   2     c2=10 (not 13: no sum)
    /// trim 5
    /// 15  user 5      new: 0          line 1                   1     c1=(0·1+0)/2=0 (not 2)
    #[test]
    fn clusters_worked_by_hand() {
        let p = Params {
            classes: 3,
            period: 2,
        };
        let mut w = Warcip::new(&p, 16);
        assert_eq!(w.classes(), 3);
        assert_eq!(w.centres(), [(1, 0.0), (2, 0.0)]);
        let mut got = vec![w.user(0, 0, 1), w.user(1, 0, 2)];
        w.sealed(2, 2);
        got.extend([w.user(0, 0, 3), w.user(2, 0, 4), w.user(1, 0, 5)]);
        assert_eq!(got, [2, 2, 2, 1, 2]);
        assert_eq!(w.centres(), [(1, 0.0), (2, 2.5)]);
        w.sealed(2, 5);
        assert_eq!(w.merge_next, Some(1));
        assert_eq!(w.user(3, 0, 6), 1);
        w.sealed(1, 6);
        assert_eq!(w.centres(), [(2, 2.5)]);
        assert_eq!(w.gauges(), [("placement.warcip.clusters", 1.0)]);
        assert_eq!([w.user(0, 0, 7), w.user(2, 0, 8)], [2, 2]);
        w.sealed(2, 8);
        assert_eq!(w.centres(), [(1, 2.0), (2, 4.0)]);
        assert_eq!([w.user(3, 0, 9), w.user(5, 0, 10)], [2, 1]);
        assert_eq!(w.centres(), [(1, 0.0), (2, 3.0)]);
        assert_eq!(w.gc(5, 1, 11), 0);
        assert_eq!(w.user(5, 0, 11), 2, "the GC penalty makes it colder");
        w.sealed(2, 11);
        assert_eq!(w.gc(3, 2, 12), 0);
        assert_eq!(w.gc(3, 0, 14), 0);
        assert_eq!(w.user(3, 0, 14), 2);
        assert_eq!(w.centres(), [(1, 0.0), (2, 10.0)]);
        w.trim(5);
        assert_eq!(w.user(5, 0, 15), 1);
        assert_eq!(w.centres(), [(1, 0.0), (2, 10.0)]);
        assert_eq!(
            w.counters(),
            [
                ("placement.warcip.splits", 1),
                ("placement.warcip.merges", 1)
            ]
        );
        assert_eq!(w.gauges(), [("placement.warcip.clusters", 2.0)]);
    }

    /// A marked position is a number: a split before the merge shifts it onto the neighbour.
    /// K = 4, lines [GC, A (line 1, centre 10), B (line 3, centre 20)], B marked (position 2),
    /// line 2 free. A round where A took 5 of 5 writes splits A: a cluster at position 1 on line 2,
    /// centre (0 + 10)/2 = 5; A moves to position 2 and the mark with it. Sealing A's line then
    /// retires A; B's seal retires nothing.
    #[test]
    fn a_split_shifts_the_mark() {
        let p = Params {
            classes: 4,
            period: 1,
        };
        let mut w = Warcip::new(&p, 8);
        let cluster = |line, centre, writes| Cluster {
            centre,
            blocks: 0,
            writes,
            line,
        };
        w.clusters = vec![cluster(0, 0.0, 0), cluster(1, 10.0, 5), cluster(3, 20.0, 0)];
        w.round_writes = 5;
        w.merge_next = Some(2);
        w.line_pages = 4;
        w.round();
        assert_eq!(w.centres(), [(2, 5.0), (1, 10.0), (3, 20.0)]);
        assert_eq!(w.merge_next, Some(2));
        w.sealed(1, 0);
        assert_eq!(w.centres(), [(2, 5.0), (3, 20.0)]);
        w.sealed(3, 0);
        assert_eq!(w.centres(), [(2, 5.0), (3, 20.0)]);
        // With period 1 each of these seals closed a round without writes: the first cluster
        // under one line's pages (position 1) is marked.
        assert_eq!(w.merge_next, Some(1));
        // The GC line's seals neither count nor retire.
        w.sealed(0, 0);
        assert_eq!(w.centres().len(), 2);
    }

    #[test]
    fn bad_params_name_the_field() {
        use crate::params::Params as _;
        let p = Params {
            classes: 65,
            ..Params::default()
        };
        let e = p.check("placement.warcip").unwrap_err().to_string();
        assert!(e.contains("placement.warcip.classes"), "{e}");
        let p = Params {
            period: 0,
            ..Params::default()
        };
        let e = p.check("placement.warcip").unwrap_err().to_string();
        assert!(e.contains("placement.warcip.period"), "{e}");
    }
}
