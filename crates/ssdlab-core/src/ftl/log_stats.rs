//! Seed 002's log-block statistics (Park & Kang, §3.1–3.3; ALGORITHMS.md §1.14), kept by the
//! hybrid FTLs: log-block hits and misses per flush unit, and, at every merge of a log block, the
//! references it received, their summed cluster sizes against N_p and its utilisation.
//!
//! A *log record* is what the seed calls a log block. BAST: a physical log block (each block of an
//! LBN's chain is one). FAST, whose log blocks hold pages of any LBN: an LBN's *log association*,
//! its pages in the SW and RW logs since its last merge — what a log block is to a data block in
//! BAST: the log space one data block's clusters go to until it is merged.
//!
//! - A flush unit *reaches the log* when at least one of its pages is written into a log record
//!   (not in place, not as a whole-block switch). It is a *hit* when its LBN held a log record
//!   when it arrived, a *miss* otherwise (seed §3.1: "log block hit" / "log block miss").
//! - A *reference* to a record is a flush unit that wrote a page into it. Its size S_c is the
//!   number of the unit's pages logged from its first page into that record on, including those
//!   that went on into another record once this one was full or merged (seed §3.2: when
//!   S_c¹ + S_c² exceeds N_p, N_p pages fill the log block, which is full-merged, and the rest go
//!   to a new one). A record merged while the current unit still writes is therefore classified
//!   at the unit's end.
//! - At its merge a record is never re-referenced (one reference), re-referenced with
//!   Σ S_c ≤ N_p, or re-referenced with Σ S_c > N_p; its utilisation is its used pages / N_p
//!   (`ftl.log_utilisation`: programmed pages, or valid pages).

use crate::error::Result;

/// Which pages of a merged log block count as used (`ftl.log_utilisation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utilisation {
    /// Programmed pages, valid or not (seed 002 §3.3: a log block with one page written and the
    /// rest clean gains one page when erased).
    Written,
    /// Pages still holding the newest copy of their data at the merge.
    Valid,
}

impl Utilisation {
    pub fn parse(v: &str) -> Result<Self> {
        match v {
            "written" => Ok(Utilisation::Written),
            "valid" => Ok(Utilisation::Valid),
            _ => Err(crate::error::unknown_value(
                "ftl.log_utilisation",
                v,
                &["written", "valid"],
            )),
        }
    }
}

/// Seed 002's predictor input: what the log holds for one logical block now (hybrid FTLs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogState {
    /// Flush units that wrote pages into the LBN's current log record (BAST: the last block of
    /// its chain; FAST: its log association): 1 = not re-referenced yet.
    pub references: u32,
    /// Pages written into that record (BAST: programmed pages of the block, ≤ N_p; FAST: pages
    /// the LBN logged since its last merge, overwritten ones included).
    pub pages: u32,
}

/// One log record's tally.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct LogRef {
    /// Id of the last flush unit that logged a page here (0: none).
    last: u64,
    refs: u32,
    /// Σ S_c of the references already settled (all but the current unit's).
    sc: u32,
    /// The current unit's logged-page count when it first logged here.
    entry: u32,
    pages: u32,
}

impl LogRef {
    pub fn references(&self) -> u32 {
        self.refs
    }
    pub fn pages(&self) -> u32 {
        self.pages
    }
}

/// A record merged while the current unit references it: classified at the unit's end.
struct Ended {
    refs: u32,
    sc: u32,
    entry: u32,
    used: u32,
}

pub(crate) struct LogStats {
    ppb: u32,
    pub utilisation: Utilisation,
    /// Flush units received (the current one's id).
    unit: u64,
    in_unit: bool,
    /// Whether the current unit's LBN held a log record when the unit arrived; known at its
    /// first page bound for the log (nothing before changes the log).
    had_log: Option<bool>,
    /// Pages the current unit has logged so far.
    logged: u32,
    pending: Vec<Ended>,
    hits: u64,
    misses: u64,
    /// Merged records: never re-referenced, re-referenced with Σ S_c ≤ N_p, with Σ S_c > N_p.
    classes: [u64; 3],
    /// Σ used pages of merged records: all, re-referenced.
    used: [u64; 2],
    /// Merged records by references (index = references).
    refs_hist: Vec<u64>,
    /// Merged records by used pages (index = pages, 0..=N_p): all, re-referenced.
    used_hist: [Vec<u64>; 2],
}

pub const COUNTERS: [&str; 8] = [
    "ftl.log.requested_clusters",
    "ftl.log.hits",
    "ftl.log.misses",
    "ftl.log.merged_never_rereferenced",
    "ftl.log.merged_rereferenced_fits",
    "ftl.log.merged_rereferenced_overflows",
    "ftl.log.used_pages_at_merge",
    "ftl.log.used_pages_at_merge_rereferenced",
];

impl LogStats {
    pub fn new(ppb: u32, utilisation: Utilisation) -> Self {
        LogStats {
            ppb,
            utilisation,
            unit: 0,
            in_unit: false,
            had_log: None,
            logged: 0,
            pending: Vec::new(),
            hits: 0,
            misses: 0,
            classes: [0; 3],
            used: [0; 2],
            refs_hist: Vec::new(),
            used_hist: [vec![0; ppb as usize + 1], vec![0; ppb as usize + 1]],
        }
    }

    /// A flush unit arrives.
    #[inline]
    pub fn begin(&mut self) {
        self.unit += 1;
        self.in_unit = true;
        self.had_log = None;
        self.logged = 0;
    }

    /// A page of the current unit is bound for the log (it is not written in place); `has_log`:
    /// its LBN holds a log record now. Only the unit's first such page counts: until then the
    /// log is as the unit found it.
    #[inline]
    pub fn bound_for_log(&mut self, has_log: bool) {
        self.had_log.get_or_insert(has_log);
    }

    /// The current unit wrote a page into record `r` (its first makes the unit a reference).
    #[inline]
    pub fn log_page(&mut self, r: &mut LogRef) {
        if r.last != self.unit {
            r.last = self.unit;
            r.refs += 1;
            r.entry = self.logged;
        }
        r.pages += 1;
        self.logged += 1;
    }

    /// Record `r` is merged with `used` pages in use; `r` is reset for its next use.
    pub fn end(&mut self, r: &mut LogRef, used: u32) {
        if r.refs > 0 {
            if self.in_unit && r.last == self.unit {
                self.pending.push(Ended {
                    refs: r.refs,
                    sc: r.sc,
                    entry: r.entry,
                    used,
                });
            } else {
                self.classify(r.refs, r.sc, used);
            }
        }
        *r = LogRef::default();
    }

    /// Pages the current unit has logged so far.
    #[inline]
    pub fn logged(&self) -> u32 {
        self.logged
    }

    /// At the current unit's end, before `finish`: its pages count in the S_c of record `r` if
    /// it is one of its references not merged meanwhile (a merged one was reset; a record settled
    /// twice gains nothing the second time).
    #[inline]
    pub fn settle(&self, r: &mut LogRef) {
        if r.last == self.unit {
            r.sc += self.logged - r.entry;
            r.entry = self.logged;
        }
    }

    /// The current unit is done (its live references settled): the records merged while it
    /// wrote are classified, and it counts as a hit or a miss if it reached the log.
    #[inline]
    pub fn finish(&mut self) {
        while let Some(e) = self.pending.pop() {
            self.classify(e.refs, e.sc + self.logged - e.entry, e.used);
        }
        if self.logged > 0 {
            if self.had_log == Some(true) {
                self.hits += 1;
            } else {
                self.misses += 1;
            }
        }
        self.in_unit = false;
    }

    fn classify(&mut self, refs: u32, sc: u32, used: u32) {
        let class = if refs == 1 {
            0
        } else if sc <= self.ppb {
            1
        } else {
            2
        };
        self.classes[class] += 1;
        let r = refs as usize;
        if self.refs_hist.len() <= r {
            self.refs_hist.resize(r + 1, 0);
        }
        self.refs_hist[r] += 1;
        let used = used.min(self.ppb);
        self.used[0] += used as u64;
        self.used_hist[0][used as usize] += 1;
        if refs > 1 {
            self.used[1] += used as u64;
            self.used_hist[1][used as usize] += 1;
        }
    }

    pub fn counters(&self) -> [(&'static str, u64); 8] {
        let v = [
            self.unit,
            self.hits,
            self.misses,
            self.classes[0],
            self.classes[1],
            self.classes[2],
            self.used[0],
            self.used[1],
        ];
        std::array::from_fn(|i| (COUNTERS[i], v[i]))
    }

    /// "ftl.log.references_at_merge" (exact) and "ftl.log.utilisation_at_merge[_rereferenced]"
    /// (percent of N_p, rounded down: the value is the bucket's lower bound), cumulative.
    pub fn histograms(&self) -> Vec<(&'static str, Vec<(u64, u64)>)> {
        let exact = |h: &[u64]| -> Vec<(u64, u64)> {
            h.iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(v, &c)| (v as u64, c))
                .collect()
        };
        let percent = |h: &[u64]| -> Vec<(u64, u64)> {
            let mut out: Vec<(u64, u64)> = Vec::new();
            for (pages, &c) in h.iter().enumerate().filter(|(_, &c)| c > 0) {
                let p = pages as u64 * 100 / self.ppb as u64;
                match out.last_mut() {
                    Some((v, n)) if *v == p => *n += c,
                    _ => out.push((p, c)),
                }
            }
            out
        };
        vec![
            ("ftl.log.references_at_merge", exact(&self.refs_hist)),
            ("ftl.log.utilisation_at_merge", percent(&self.used_hist[0])),
            (
                "ftl.log.utilisation_at_merge_rereferenced",
                percent(&self.used_hist[1]),
            ),
        ]
    }

    /// The ratio and means of the measured window, from its counters (NaN when undefined).
    pub fn window_metrics(counters: &[(&'static str, u64)], ppb: u32) -> Vec<(&'static str, f64)> {
        let get = |k: &str| counters.iter().find(|(n, _)| *n == k).map_or(0, |x| x.1);
        let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { f64::NAN };
        let [_, hits, misses, never, fits, over, used, used_reref] = COUNTERS.map(get);
        let n = ppb as u64;
        vec![
            ("ftl.log.hit_ratio", ratio(hits, hits + misses)),
            (
                "ftl.log.utilisation_at_merge.mean",
                ratio(used, (never + fits + over) * n),
            ),
            (
                "ftl.log.utilisation_at_merge_rereferenced.mean",
                ratio(used_reref, (fits + over) * n),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed §3.2's overflow: S_c¹ = 3 pages, then S_c² = 3 on a block of N_p = 4: the block
    /// takes 1 page of the second cluster, is merged while the unit writes, and the other 2 go
    /// to a new record: the first is re-referenced with Σ S_c = 6 > 4 (settled at the unit's
    /// end), the second never re-referenced.
    #[test]
    fn overflow_counts_the_pages_beyond_the_block() {
        let mut s = LogStats::new(4, Utilisation::Written);
        let mut t = [LogRef::default(); 2];
        s.begin();
        s.bound_for_log(false);
        for _ in 0..3 {
            s.log_page(&mut t[0]);
        }
        s.settle(&mut t[0]);
        s.finish();
        assert_eq!((t[0].refs, t[0].sc, t[0].pages), (1, 3, 3));
        s.begin();
        s.bound_for_log(true);
        s.log_page(&mut t[0]);
        s.end(&mut t[0], 4);
        s.log_page(&mut t[1]);
        s.log_page(&mut t[1]);
        assert_eq!(
            s.classes,
            [0, 0, 0],
            "the merged block waits for the unit's end"
        );
        s.settle(&mut t[1]);
        s.finish();
        assert_eq!(s.classes, [0, 0, 1]);
        assert_eq!((t[1].refs, t[1].sc), (1, 2));
        s.end(&mut t[1], 2);
        assert_eq!(s.classes, [1, 0, 1]);
        assert_eq!((s.hits, s.misses, s.unit), (1, 1, 2));
        assert_eq!(s.used, [6, 4]);
        let h = s.histograms();
        assert_eq!(h[0].1, vec![(1, 1), (2, 1)]);
        assert_eq!(h[1].1, vec![(50, 1), (100, 1)]);
        assert_eq!(h[2].1, vec![(100, 1)]);
        let w = LogStats::window_metrics(&s.counters(), 4);
        assert_eq!(w[0].1, 0.5);
        assert_eq!(w[1].1, 6.0 / 8.0);
        assert_eq!(w[2].1, 1.0);
    }
}
