//! FAST — fully-associative sector translation (ALGORITHMS.md §2.4 and §7 item 9; seed 000
//! Table 3): one sequential-write (SW) log block plus `ftl.log_blocks − 1` random-write (RW) log
//! blocks shared by every LBN and used as a FIFO.
//!
//! Write of page o of LBN b (pages of a flush unit in ascending order):
//! 1. page o of b's data block is free → written in place (an unmapped LBN first gets a block);
//! 2. o = 0 → if the SW log is in use it is merged first (switch if full and in order, partial if
//!    it holds a valid in-order prefix, full otherwise), then the SW log is given to b and page 0
//!    goes to it;
//! 3. the SW log belongs to b and o is its next offset → appended; when that fills the block
//!    (o = N−1) the SW log is switch-merged at once;
//! 4. the SW log belongs to b but o is not its next offset → the SW log is merged (partial or full),
//!    then the page is handled again from rule 1 (it normally goes to an RW log);
//! 5. otherwise the page is appended to the newest RW log block. When every RW log block is full,
//!    the oldest-written one is reclaimed: every LBN with a valid page in it is full-merged (newest
//!    pages from its data block, the SW log and all RW logs into a new block; the old data block,
//!    and the SW log if that LBN owns it, are erased), then the victim is erased.
//!
//! A whole-block unit (a full or padded group, seed 000 §3.4 and Fig 7–9) is programmed in offset
//! order into a fresh block, which becomes the data block (a switch merge): the old data block is
//! erased, the SW log too if it belongs to the LBN, and the LBN's pages in RW logs become dead
//! (their space is reclaimed with their RW block). For an LBN with no data block it is simply the
//! LBN's first data block (no merge).
//!
//! Counters: `ftl.merges.*` count LBN merges (a victim with k live LBNs = k full merges);
//! `ftl.erases.full` includes the victim's own erase; a victim with no valid page is erased
//! without a merge and counted in `ftl.erases.gc`.
//!
//! `ftl.fast.overhead_pages` (seed 000 §5, "overhead pages to log block"; reading of Fig 10(a)):
//! when an RW victim's reclaim full-merges LBN b and all of b's pages written into RW logs since
//! b's previous merge came from a single flush unit, those pages are overhead: they occupied log
//! space and were merged without any later page of b joining them. Counted pages include any
//! that were since overwritten. Any merge of b restarts its tally.
//!
//! Padding-model statistics: one sample per RW victim reclaim with R_DB = LBNs merged, R_LB = 1,
//! U_LB = 1 (RW victims are always full). SW-log merges are not samples (the model's FAST form
//! assumes R_LB = U_LB = 1 and prices only the RW full merges). A whole-block switch merge is
//! counted as though its h Host-cause pages had gone to the RW logs and their LBN had been
//! full-merged when that space was reclaimed: h/N of a sample with 1 data block, h/N log blocks
//! and h of h pages used (R_LB and U_LB stay 1; R_DB gains one data block per h logged pages).
//! With `ftl.model_stats = "seed"` (default, seed §3.5) only a switch merge that reclaims a log
//! block early (the SW log of its LBN) is counted so; with `"all-merges"` every padded one is.
//! `ftl.log_utilization` averages the programmed share of every reclaimed log block (RW victims
//! and SW logs).
//!
//! Seed 002's log-block statistics (`ftl::log_stats`, docs/metrics.md): the log records are LBNs'
//! log associations — an LBN's pages logged (SW or RW) since its last merge; a `Pages` unit that
//! logs a page is a hit when its LBN had an association when it arrived; an association is
//! classified when any merge of its LBN (RW victim reclaim, SW merge, whole-block switch) ends it.
//!
//! Device: physical blocks ≥ logical blocks + log blocks + 1 (the full-merge target).

use super::hybrid::{
    check_log_size, host_pages, store_answers, store_view, Merge, ModelStats, Stats, Store, DEAD,
    NONE,
};
use super::log_stats::{LogRef, LogState, LogStats, Utilisation};
use super::{Ftl, FtlView, Shape, Unit, UnitPage};
use crate::error::{Result, SimError};
use crate::nand::Nand;
use crate::units::{Geometry, Lbn, Lpn};
use std::collections::VecDeque;

const NO_LBN: Lbn = u64::MAX;

pub struct FastFtl {
    s: Store,
    sw: u32,
    sw_owner: Lbn,
    rw: VecDeque<u32>,
    rw_limit: usize,
    log_blocks: u64,
    stats: Stats,
    overhead: u64,
    /// Per LBN (one entry, so that a unit's tallies share its cache lines).
    tally: Vec<Tally>,
    unit_id: u64,
    model: ModelStats,
    log: LogStats,
}

/// What FAST counts per LBN since the LBN's last merge.
#[derive(Clone, Copy, Default)]
struct Tally {
    /// Pages written into RW logs, distinct flush units that wrote them, and the id of the last
    /// such unit (0: none) — `ftl.fast.overhead_pages`.
    rw_pages: u32,
    rw_units: u32,
    rw_last: u64,
    /// Seed 002's log association: the LBN's pages logged into the SW and RW logs.
    assoc: LogRef,
}

impl FastFtl {
    pub fn new(
        geo: &Geometry,
        log_blocks: u64,
        model: ModelStats,
        utilisation: Utilisation,
        check: bool,
    ) -> Result<Self> {
        if log_blocks < 2 {
            return Err(SimError::config(
                "ftl.log_blocks",
                format!("FAST needs ≥ 2 log blocks (1 SW + ≥ 1 RW), got {log_blocks}"),
            ));
        }
        check_log_size(geo, log_blocks)?;
        let lbns = geo.logical_blocks() as usize;
        Ok(FastFtl {
            s: Store::new(geo, check)?,
            sw: NONE,
            sw_owner: NO_LBN,
            rw: VecDeque::new(),
            rw_limit: (log_blocks - 1) as usize,
            log_blocks,
            stats: Stats::default(),
            overhead: 0,
            tally: vec![Tally::default(); lbns],
            unit_id: 0,
            model,
            log: LogStats::new(geo.pages_per_block as u32, utilisation),
        })
    }

    /// Seed 002: the log association of `lbn` ends (before its merge moves any page).
    fn end_assoc(&mut self, lbn: Lbn) {
        let r = &self.tally[lbn as usize].assoc;
        if r.references() == 0 {
            return;
        }
        let used = match self.log.utilisation {
            Utilisation::Written => r.pages(),
            Utilisation::Valid => self.valid_in_logs(lbn),
        };
        self.log.end(&mut self.tally[lbn as usize].assoc, used);
    }

    /// Pages of `lbn` whose newest copy is in a log block (not in its data block).
    fn valid_in_logs(&self, lbn: Lbn) -> u32 {
        let ppb = self.s.ppb;
        let d = self.s.data[lbn as usize];
        let first = (lbn * ppb as u64) as usize;
        self.s.l2p[first..first + ppb as usize]
            .iter()
            .filter(|&&p| p != NONE && p / ppb != d)
            .count() as u32
    }

    /// The overhead tally restarts (the association was ended by `end_assoc`).
    fn reset_tally(&mut self, lbn: Lbn) {
        let t = &mut self.tally[lbn as usize];
        (t.rw_pages, t.rw_units, t.rw_last) = (0, 0, 0);
    }

    /// Erase the SW log if `lbn` owns it (its pages have all moved or died); returns the erases.
    fn release_sw_of(&mut self, lbn: Lbn, nand: &mut Nand) -> u64 {
        if self.sw_owner != lbn {
            return 0;
        }
        self.s.reclaim_log(self.sw, &mut self.stats, nand);
        self.sw = NONE;
        self.sw_owner = NO_LBN;
        1
    }

    /// Full merge of `lbn` into a new data block; returns the erases it performed.
    fn merge_full(&mut self, lbn: Lbn, nand: &mut Nand) -> Result<u64> {
        self.end_assoc(lbn);
        let nb = self.s.rewrite(lbn, &[], false, nand)?;
        let d = self.s.remap(lbn, nb);
        let erases = self.s.erase_replaced(d, false, nand) + self.release_sw_of(lbn, nand);
        self.reset_tally(lbn);
        Ok(erases)
    }

    /// Merge the SW log (switch, partial or full as its contents allow).
    pub(crate) fn merge_sw(&mut self, nand: &mut Nand) -> Result<()> {
        let (b, lbn) = (self.sw, self.sw_owner);
        self.end_assoc(lbn);
        let ppb = self.s.ppb;
        let w = self.s.written[b as usize];
        if self.s.valid[b as usize] != w {
            let erases = self.merge_full(lbn, nand)?;
            self.stats.merge(Merge::Full, erases);
            return self.s.check_lbn(lbn);
        }
        let kind = if w == ppb {
            Merge::Switch
        } else {
            Merge::Partial
        };
        self.stats.reclaim(w);
        self.s.copy_tail(lbn, b, w, nand);
        let d = self.s.remap(lbn, b);
        let erases = self.s.erase_replaced(d, false, nand);
        self.sw = NONE;
        self.sw_owner = NO_LBN;
        self.stats.merge(kind, erases);
        self.reset_tally(lbn);
        self.s.check_lbn(lbn)
    }

    /// A whole-block unit: programmed in offset order into a fresh block that replaces the data
    /// block (a switch merge); the SW log is erased if it belongs to the LBN.
    fn write_block(
        &mut self,
        lbn: Lbn,
        pages: &[UnitPage],
        fill: bool,
        nand: &mut Nand,
    ) -> Result<()> {
        self.end_assoc(lbn);
        if !self.s.switch_in(lbn, pages, fill, nand)? {
            return Ok(()); // the LBN's first data block: nothing replaced
        }
        let sw_erases = self.release_sw_of(lbn, nand);
        let sw_reclaimed = sw_erases == 1;
        self.stats.merge(Merge::Switch, 1 + sw_erases);
        self.reset_tally(lbn);
        let (h, n) = host_pages(pages, self.s.ppb);
        let counted = match self.model {
            ModelStats::Seed => sw_reclaimed,
            ModelStats::AllMerges => h < n,
        };
        if counted && h > 0.0 {
            let frac = h / n;
            self.stats.add(frac, 1.0, frac, h, h);
        }
        self.s.check_lbn(lbn)
    }

    /// Reclaim the oldest RW log block: full-merge every LBN with a valid page in it, erase it.
    pub(crate) fn reclaim_rw(&mut self, nand: &mut Nand) -> Result<()> {
        let victim = self.rw.pop_front().expect("an RW log block to reclaim");
        let ppb = self.s.ppb;
        let base = (victim * ppb) as usize;
        let mut lbns: Vec<Lbn> = self.s.p2l[base..base + ppb as usize]
            .iter()
            .filter(|&&l| l < DEAD)
            .map(|&l| l as u64 / ppb as u64)
            .collect();
        lbns.sort_unstable();
        lbns.dedup();
        let victim_written = self.s.written[victim as usize];
        self.stats.reclaim(victim_written);
        for &l in &lbns {
            let t = &self.tally[l as usize];
            if t.rw_units == 1 {
                self.overhead += t.rw_pages as u64;
            }
            let erases = self.merge_full(l, nand)?;
            self.stats.merge(Merge::Full, erases);
            self.s.check_lbn(l)?;
        }
        self.s.erase(victim, nand);
        if lbns.is_empty() {
            self.stats.erases_gc += 1;
        } else {
            self.stats.erases[Merge::Full as usize] += 1;
        }
        self.stats
            .event(lbns.len() as f64, 1.0, victim_written as f64, ppb as f64);
        Ok(())
    }

    fn rw_append(&mut self, lbn: Lbn, p: &UnitPage, nand: &mut Nand) -> Result<()> {
        let ppb = self.s.ppb;
        loop {
            if let Some(&cur) = self.rw.back() {
                let w = self.s.written[cur as usize];
                if w < ppb {
                    let lpn = lbn * ppb as u64 + p.offset as u64;
                    self.s.program_unit(lpn, cur * ppb + w, p, nand);
                    let t = &mut self.tally[lbn as usize];
                    self.log.log_page(&mut t.assoc);
                    t.rw_pages += 1;
                    if t.rw_last != self.unit_id {
                        t.rw_last = self.unit_id;
                        t.rw_units += 1;
                    }
                    return Ok(());
                }
            }
            if self.rw.len() < self.rw_limit {
                let nb = self.s.alloc()?;
                self.rw.push_back(nb);
            } else {
                self.reclaim_rw(nand)?;
            }
        }
    }

    fn write_page(&mut self, lbn: Lbn, p: &UnitPage, nand: &mut Nand) -> Result<()> {
        let ppb = self.s.ppb;
        let o = p.offset;
        let lpn = lbn * ppb as u64 + o as u64;
        loop {
            if self.s.write_in_place(lbn, p, nand)? {
                return Ok(());
            }
            let assoc = &self.tally[lbn as usize].assoc;
            self.log.bound_for_log(assoc.references() > 0);
            if o == 0 {
                if self.sw != NONE {
                    self.merge_sw(nand)?;
                    continue;
                }
                self.sw = self.s.alloc()?;
                self.sw_owner = lbn;
                self.s.program_unit(lpn, self.sw * ppb, p, nand);
                self.log.log_page(&mut self.tally[lbn as usize].assoc);
                return Ok(());
            }
            if self.sw_owner == lbn {
                if self.s.written[self.sw as usize] == o {
                    self.s.program_unit(lpn, self.sw * ppb + o, p, nand);
                    self.log.log_page(&mut self.tally[lbn as usize].assoc);
                    if o + 1 == ppb {
                        self.merge_sw(nand)?;
                    }
                    return Ok(());
                }
                self.merge_sw(nand)?;
                continue;
            }
            return self.rw_append(lbn, p, nand);
        }
    }
}

impl FtlView for FastFtl {
    store_view!(log_blocks);
    fn log_state(&self, lbn: Lbn) -> Option<LogState> {
        let r = &self.tally.get(lbn as usize)?.assoc;
        (r.references() > 0).then(|| LogState {
            references: r.references(),
            pages: r.pages(),
        })
    }
}

impl Ftl for FastFtl {
    fn write_unit(&mut self, unit: Unit<'_>, nand: &mut Nand) -> Result<()> {
        self.log.begin();
        let r = match unit.shape {
            Shape::Block { fill } => self.write_block(unit.lbn, unit.pages, fill, nand),
            Shape::Pages => {
                self.unit_id += 1;
                unit.pages
                    .iter()
                    .try_for_each(|p| self.write_page(unit.lbn, p, nand))
            }
        };
        if self.log.logged() > 0 {
            self.log.settle(&mut self.tally[unit.lbn as usize].assoc);
        }
        self.log.finish();
        r
    }

    store_answers!(log);

    fn trim(&mut self, lpn: Lpn) {
        self.s.trim(lpn);
    }

    fn check_integrity(&self, latest: &[u32]) -> Result<()> {
        self.s.check_all(latest)?;
        if self.rw.len() > self.rw_limit {
            return Err(SimError::Integrity(format!(
                "{} RW log blocks, limit {}",
                self.rw.len(),
                self.rw_limit
            )));
        }
        if self.sw != NONE {
            let ppb = self.s.ppb;
            let first = self.sw_owner * ppb as u64;
            for i in 0..self.s.written[self.sw as usize] {
                let l = self.s.p2l[(self.sw * ppb + i) as usize];
                if l < DEAD && l as u64 != first + i as u64 {
                    return Err(SimError::Integrity(format!(
                        "SW log slot {i} holds LPN {l}, not page {i} of LBN {}",
                        self.sw_owner
                    )));
                }
            }
        }
        Ok(())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.stats.counters();
        c.push(("ftl.fast.overhead_pages", self.overhead));
        c.extend(self.log.counters());
        c
    }
}

const INFO: crate::component::Component = crate::component::Component::new(
    "ftl",
    "fast",
    "FAST: one sequential (SW) log block + fully associative RW log blocks in FIFO order; the \
             oldest RW log block is reclaimed by full-merging every LBN with a valid page in it.",
    crate::params::NONE,
    super::hybrid::SHARED_KEYS,
);

/// The registry entry of `fast`.
pub static ENTRY: super::Entry = super::Entry {
    info: INFO,
    build: |cfg, geo, _| {
        let (logs, model, utilisation) = super::hybrid::shared_options(cfg, geo)?;
        let check = cfg.run.check_integrity;
        Ok(Box::new(FastFtl::new(
            geo,
            logs,
            model,
            utilisation,
            check,
        )?))
    },
    spare_blocks: super::hybrid::entry_spare_blocks,
    provision: super::op_provision,
    resolve: super::hybrid::resolve,
    frontiers: None,
    check: |cfg, errors| {
        if cfg.ftl.log_blocks == 1 {
            errors.push(SimError::config(
                "ftl.log_blocks",
                "FAST needs 0 (automatic) or ≥ 2 log blocks: 1 SW log plus ≥ 1 RW log",
            ));
        }
    },
    default_op: super::uses_default_op,
    supports: super::Supports::NONE,
};

#[cfg(test)]
mod tests {
    use super::super::hybrid::testutil::*;
    use super::*;
    use crate::nand::Cause;

    fn fast(logs: u64) -> (FastFtl, Nand) {
        fast_model(logs, ModelStats::Seed)
    }

    fn fast_model(logs: u64, model: ModelStats) -> (FastFtl, Nand) {
        let g = geo(4, 4, 4 + logs + 1);
        (
            FastFtl::new(&g, logs, model, Utilisation::Written, true).unwrap(),
            Nand::new(g.physical_blocks),
        )
    }

    #[test]
    fn fig8_log_then_full_merge() {
        let (mut f, mut n) = fast(3);
        fig8a_log_and_merge(&mut f, &mut n, |f, n| f.reclaim_rw(n).unwrap());
        assert_eq!(f.stats.erases, [0, 0, 2]);
        assert_eq!(f.overhead, 2);
    }

    #[test]
    fn fig8_pad_then_switch() {
        for model in [ModelStats::Seed, ModelStats::AllMerges] {
            let (mut f, mut n) = fast_model(3, model);
            fig8b_pad_and_switch(&mut f, &mut n);
            assert_eq!(f.stats.erases, [1, 0, 0]);
            match model {
                // No log block reclaimed early: no sample.
                ModelStats::Seed => assert_eq!(f.stats.events, 0.0),
                // Its 2 host pages counted as logged: half an RW block, 1 data block to merge.
                ModelStats::AllMerges => assert_eq!(model_stats(&f.stats), (2.0, 1.0, 1.0)),
            }
        }
    }

    #[test]
    fn whole_block_without_data_block() {
        let (mut f, mut n) = fast(3);
        f.write_unit(Unit::new(2, &host(&[1, 2], 1), BLOCK), &mut n)
            .unwrap();
        assert_eq!((progs(&n), n.counters.erases), (4, 0));
        assert_eq!(n.counters.programs[Cause::Pad as usize], 2);
        assert_eq!(f.stats.merges, [0, 0, 0]);
        f.check_integrity(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn whole_block_reclaims_the_sw_log_of_its_lbn() {
        // Pages 0, 1 rewritten sequentially sit in the SW log; the padded group (host page 2)
        // replaces data block and SW log: 4 writes, 2 erases, one switch merge.
        for model in [ModelStats::Seed, ModelStats::AllMerges] {
            let (mut f, mut n) = fast_model(3, model);
            write_whole(&mut f, &mut n, 0..1);
            f.write_unit(Unit::pages(0, &host(&[0, 1], 2)), &mut n)
                .unwrap();
            assert_eq!(f.sw_owner, 0);
            let mut unit = padded(&[2], 3, &[0, 1], 2);
            unit.extend(padded(&[], 0, &[3], 1));
            let got = cost(&mut n, |n| {
                f.write_unit(Unit::new(0, &unit, BLOCK), n).unwrap()
            });
            assert_eq!(got, (4, 2));
            assert_eq!((f.stats.merges, f.stats.erases), ([1, 0, 0], [2, 0, 0]));
            assert_eq!((f.sw, f.sw_owner), (NONE, NO_LBN));
            assert_eq!(f.stats.log_utilization(4), 0.5);
            // Both readings count it (the SW log was reclaimed early): 1/4 of an RW block
            // holding 1 LBN → R_DB = 1 / 0.25.
            assert_eq!(model_stats(&f.stats), (4.0, 1.0, 1.0));
            f.check_integrity(&[2, 2, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
                .unwrap();
        }
    }

    #[test]
    fn whole_block_leaves_rw_pages_dead() {
        // LBN 0 has a page in the RW log; a padded group of LBN 0 replaces its data block (1
        // erase) and kills that page. The RW block, reclaimed later, merges only LBN 1; a second
        // RW block left with dead pages only is erased without a merge.
        let (mut f, mut n) = fast(3);
        write_whole(&mut f, &mut n, 0..2);
        f.write_unit(Unit::pages(0, &host(&[2], 2)), &mut n)
            .unwrap();
        f.write_unit(Unit::pages(1, &host(&[3], 2)), &mut n)
            .unwrap();
        let mut unit = [padded(&[1], 3, &[0, 3], 1), padded(&[], 0, &[2], 2)].concat();
        unit.sort_by_key(|p| p.offset);
        let got = cost(&mut n, |n| {
            f.write_unit(Unit::new(0, &unit, BLOCK), n).unwrap()
        });
        assert_eq!(got.1, 1);
        assert_eq!(f.stats.merges, [1, 0, 0]);
        assert_eq!(f.rw.len(), 1);
        let rw = f.rw[0] as usize;
        assert_eq!((f.s.written[rw], f.s.valid[rw]), (2, 1));
        f.check_integrity(&[1, 3, 2, 1, 1, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
        // Reclaiming that RW block (forced, half written) full-merges LBN 1 only: R_DB = 1.
        f.reclaim_rw(&mut n).unwrap();
        assert_eq!(f.stats.merges, [1, 0, 1]);
        assert_eq!(model_stats(&f.stats), (1.0, 1.0, 0.5));
        // An RW block whose only page died is erased without a merge (and samples R_DB = 0).
        f.write_unit(Unit::pages(0, &host(&[1], 4)), &mut n)
            .unwrap();
        let mut unit = padded(&[2], 5, &[0, 3], 1);
        unit.insert(1, padded(&[], 0, &[1], 4)[0]);
        f.write_unit(Unit::new(0, &unit, BLOCK), &mut n).unwrap();
        f.reclaim_rw(&mut n).unwrap();
        assert_eq!(f.stats.erases_gc, 1);
        assert_eq!(f.stats.merges, [2, 0, 1]);
        assert_eq!(model_stats(&f.stats), (0.5, 1.0, 3.0 / 8.0));
        f.check_integrity(&[1, 4, 5, 1, 1, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn sw_append_and_switch() {
        let (mut f, mut n) = fast(3);
        write_whole(&mut f, &mut n, 0..1);
        for o in 0..4 {
            f.write_unit(Unit::pages(0, &host(&[o], 2)), &mut n)
                .unwrap();
        }
        assert_eq!(merge_totals(&f, &n), ([1, 0, 0], 0, 1));
        assert_eq!(f.sw, NONE);
        // Unmerged model stats: SW switches are no model events.
        assert_eq!(f.stats.events, 0.0);
        f.check_integrity(&[2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn offset_zero_restarts_sw_log() {
        let (mut f, mut n) = fast(3);
        write_whole(&mut f, &mut n, 0..2);
        f.write_unit(Unit::pages(0, &host(&[0, 1], 2)), &mut n)
            .unwrap();
        f.write_unit(Unit::pages(1, &host(&[0], 2)), &mut n)
            .unwrap();
        assert_eq!(merge_totals(&f, &n), ([0, 1, 0], 2, 1));
        assert_eq!(f.sw_owner, 1);
        // Offset 0 again for the SW owner: its own SW log is merged, a new one started.
        f.write_unit(Unit::pages(1, &host(&[0], 3)), &mut n)
            .unwrap();
        assert_eq!(merge_totals(&f, &n), ([0, 2, 0], 5, 2));
        assert_eq!(f.sw_owner, 1);
        f.check_integrity(&[2, 2, 1, 1, 3, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn non_sequential_write_to_sw_owner() {
        let (mut f, mut n) = fast(3);
        write_whole(&mut f, &mut n, 0..1);
        f.write_unit(Unit::pages(0, &host(&[0, 1], 2)), &mut n)
            .unwrap();
        f.write_unit(Unit::pages(0, &host(&[3], 3)), &mut n)
            .unwrap();
        assert_eq!(merge_totals(&f, &n), ([0, 1, 0], 2, 1));
        assert_eq!(f.sw, NONE);
        assert_eq!(f.rw.len(), 1);
        assert_eq!(f.s.written[f.rw[0] as usize], 1);
        f.check_integrity(&[2, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn rw_fifo_victim_full_merges_two_lbns() {
        let (mut f, mut n) = fast(3);
        write_whole(&mut f, &mut n, 0..3);
        f.write_unit(Unit::pages(0, &host(&[1], 2)), &mut n)
            .unwrap();
        f.write_unit(Unit::pages(1, &host(&[1, 2], 2)), &mut n)
            .unwrap();
        f.write_unit(Unit::pages(0, &host(&[3], 3)), &mut n)
            .unwrap();
        for (o, v) in [(1, 2), (2, 2), (3, 2), (1, 3)] {
            f.write_unit(Unit::pages(2, &host(&[o], v)), &mut n)
                .unwrap();
        }
        assert_eq!(f.rw.len(), 2);
        assert_eq!(n.counters.erases, 0);
        f.write_unit(Unit::pages(2, &host(&[2], 4)), &mut n)
            .unwrap();
        assert_eq!(f.stats.merges, [0, 0, 2]);
        assert_eq!(f.stats.erases, [0, 0, 3]);
        assert_eq!(n.counters.erases, 3);
        assert_eq!(merge_progs(&n), 8);
        assert_eq!(f.overhead, 2);
        assert_eq!(model_stats(&f.stats), (2.0, 1.0, 1.0));
        assert_eq!(f.stat("r_db"), Some(2.0));
        f.check_integrity(&[1, 2, 1, 3, 1, 2, 2, 1, 1, 3, 4, 2, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn random_integrity_small_pools() {
        for (seed, logs) in [2u64, 3, 5].into_iter().enumerate() {
            let g = geo(4, 5, 5 + logs + 1);
            let mut f =
                FastFtl::new(&g, logs, ModelStats::Seed, Utilisation::Written, true).unwrap();
            let mut n = Nand::new(g.physical_blocks);
            random_run(&mut f, &mut n, 4, 5, 3000, 200 + seed as u64);
        }
    }

    #[test]
    fn random_integrity() {
        let g = geo(8, 12, 12 + 4 + 1);
        let mut f = FastFtl::new(&g, 4, ModelStats::AllMerges, Utilisation::Valid, true).unwrap();
        let mut n = Nand::new(g.physical_blocks);
        random_run_all_merges(&mut f, &mut n, 5, "fast");
    }

    /// Seed 002's statistics on FAST, worked by hand: N_p = 4, 1 SW + 2 RW log blocks, LBNs 0–2
    /// written whole first. A log record is an LBN's association (its pages in the logs since
    /// its last merge); a unit is a hit when its LBN has one.
    ///
    /// V1  LBN 0 {1,2}: miss, RW R1 ← 0:1, 0:2.             a0: refs 1, Σ 2
    /// V2  LBN 1 {1}:   miss, R1 ← 1:1.                      a1: refs 1, Σ 1
    /// V3  LBN 0 {1}:   hit, R1 ← 0:1 (R1 full).             a0: refs 2, Σ 3
    /// V4  LBN 2 {0,1}: miss, offset 0 opens the SW log S1 ← 2:0, 2:1.  a2: refs 1, Σ 2
    /// V5  LBN 1 {2,3}: hit, new RW R2 ← 1:2, 1:3.           a1: refs 2, Σ 3
    /// V6  LBN 0 {3}:   hit, R2 ← 0:3.                       a0: refs 3, Σ 4
    /// V7  LBN 1 {1}:   hit, R2 ← 1:1 (R2 full).             a1: refs 3, Σ 4
    /// V8  LBN 2 {3}:   hit; not S1's next offset: S1 partial-merged, a2 never re-referenced
    ///                  (2 pages, both valid); then RW: both full, victim R1 full-merges LBN 0
    ///                  (1:1 in R1 is dead): a0 re-referenced, Σ 4 ≤ 4 fits; 4 pages written,
    ///                  3 valid (0:1, 0:2, 0:3); new R3 ← 2:3.  a2': refs 1, Σ 1
    /// V9  LBN 1 {3}:   hit, R3 ← 1:3.                       a1: refs 4, Σ 5
    /// V10 LBN 0 {1,2}: miss, R3 ← 0:1, 0:2 (R3 full).       a0': refs 1, Σ 2
    /// V11 LBN 0 {3}:   hit; victim R2 full-merges LBN 1: a1 Σ 5 > 4 overflows; 5 pages written
    ///                  (used: 4, the block's worth), 3 valid (1:1, 1:2, 1:3); R4 ← 0:3.
    /// V12 LBN 2 {0,1,2}: hit, SW S2 ← 2:0, 2:1, 2:2.        a2': refs 2, Σ 4
    /// V13 LBN 2 {3}:   hit, S2 ← 2:3 fills it: switch-merged at once, while V13 writes: a2'
    ///                  refs 3, Σ 4 + 1 = 5 > 4 overflows; 5 written (4 used), 4 valid.
    ///
    /// Units 16 (3 + 13); hits 9, misses 4; never 1, fits 1, overflows 2. Used pages, written:
    /// 2 + 4 + 4 + 4 = 14 (re-referenced 12); valid: 2 + 3 + 3 + 4 = 12 (re-referenced 10).
    #[test]
    fn seed002_statistics_by_hand() {
        let make = |g: &Geometry, util| FastFtl::new(g, 3, ModelStats::Seed, util, true);
        let script: [(Lbn, &[u32]); 13] = [
            (0, &[1, 2]),
            (1, &[1]),
            (0, &[1]),
            (2, &[0, 1]),
            (1, &[2, 3]),
            (0, &[3]),
            (1, &[1]),
            (2, &[3]),
            (1, &[3]),
            (0, &[1, 2]),
            (0, &[3]),
            (2, &[0, 1, 2]),
            (2, &[3]),
        ];
        by_hand(
            3,
            |g, util| make(g, util).unwrap(),
            &script,
            |f, _, util| {
                assert_eq!(f.stats.merges, [1, 1, 2]);
                assert_log_stats(
                    f,
                    util,
                    [16, 9, 4, 1, 1, 2],
                    &[(1, 1), (3, 2), (4, 1)],
                    (14, 12, &[(50, 1), (100, 3)], &[(100, 3)]),
                    (12, 10, &[(50, 1), (75, 2), (100, 1)], &[(75, 2), (100, 1)]),
                );
                // LBN 0's association holds V10 and V11: 2 references, 3 pages.
                let state = LogState {
                    references: 2,
                    pages: 3,
                };
                assert_eq!(f.log_state(0), Some(state));
                assert_eq!((f.log_state(1), f.log_state(2)), (None, None));
                f.check_integrity(&[1, 11, 11, 12, 1, 8, 6, 10, 13, 13, 13, 14, 0, 0, 0, 0])
                    .unwrap();
            },
        );
    }

    /// A unit whose own association is merged while it writes: N_p = 4, 1 SW + 1 RW log block.
    ///
    /// Ua LBN 0 {1,2,3}: miss, R1 ← 0:1, 0:2, 0:3.                a0: refs 1, Σ 3
    /// Ub LBN 1 {1,2}:   miss, R1 ← 1:1 fills R1; page 2 reclaims R1, full-merging LBN 0 (a0
    ///                   never re-referenced, 3 pages) and LBN 1, whose association Ub itself
    ///                   opened: never re-referenced, 1 page, S_c = 2 (the page that went on
    ///                   counts); R2 ← 1:2 opens a1': refs 1, S_c 1.
    /// Uc LBN 1 {3}:     hit, R2 ← 1:3.                            a1': refs 2, Σ 2
    /// Ud LBN 0 {1,2,3}: miss, R2 ← 0:1, 0:2 fills R2; page 3 reclaims R2: LBN 0's new
    ///                   association (Ud's own: never, 2 pages) and a1' (re-referenced, Σ 2 ≤ 4:
    ///                   fits, 2 pages) merged; R3 ← 0:3.
    ///
    /// Units 6; hits 1, misses 3; never 3, fits 1; used 3 + 1 + 2 + 2 = 8 (re-referenced 2).
    #[test]
    fn association_merged_mid_unit_keeps_its_pages_beyond() {
        let g = geo(4, 2, 2 + 2 + 1);
        let mut f = FastFtl::new(&g, 2, ModelStats::Seed, Utilisation::Written, true).unwrap();
        let mut n = Nand::new(g.physical_blocks);
        write_whole(&mut f, &mut n, 0..2);
        f.write_unit(Unit::pages(0, &host(&[1, 2, 3], 2)), &mut n)
            .unwrap();
        f.write_unit(Unit::pages(1, &host(&[1, 2], 3)), &mut n)
            .unwrap();
        assert_eq!(log_counts(&f), [4, 0, 2, 2, 0, 0, 4, 0]);
        let state = LogState {
            references: 1,
            pages: 1,
        };
        assert_eq!(f.log_state(1), Some(state));
        f.write_unit(Unit::pages(1, &host(&[3], 4)), &mut n)
            .unwrap();
        f.write_unit(Unit::pages(0, &host(&[1, 2, 3], 5)), &mut n)
            .unwrap();
        assert_eq!(log_counts(&f), [6, 1, 3, 3, 1, 0, 8, 2]);
        assert_eq!(
            histogram(&f, "ftl.log.references_at_merge"),
            [(1, 3), (2, 1)]
        );
        assert_eq!(
            histogram(&f, "ftl.log.utilisation_at_merge"),
            [(25, 1), (50, 2), (75, 1)]
        );
        f.check_integrity(&[1, 5, 5, 5, 1, 3, 3, 4]).unwrap();
    }

    /// Against an oracle from the FTL's state before each unit (no trims): a `Pages` unit reaches
    /// the log exactly when its LBN has a data block whose page at one of its offsets is not free,
    /// and it is a hit exactly when a page of its LBN has its newest copy in a log block (SW or
    /// RW) then; `log_state` agrees with that after every unit; the utilisation reading changes
    /// nothing else.
    #[test]
    fn hits_and_misses_are_the_units_reaching_the_log() {
        for (i, logs) in [2u64, 3, 5].into_iter().enumerate() {
            let run = |util| {
                let g = geo(4, 6, 6 + logs + 1);
                let mut f = FastFtl::new(&g, logs, ModelStats::Seed, util, true).unwrap();
                let mut n = Nand::new(g.physical_blocks);
                let hit = |f: &FastFtl, lbn| f.valid_in_logs(lbn) > 0;
                let what = format!("{logs}");
                log_oracle(
                    &mut f,
                    &mut n,
                    |f| &f.s,
                    41 + i as u64,
                    hit,
                    assoc_state,
                    &what,
                )
            };
            let (w, v) = (run(Utilisation::Written), run(Utilisation::Valid));
            assert_only_used_pages_differ(&w, &v, &format!("{logs}"));
        }
    }

    /// `log_state` agrees with the pages of the LBN whose newest copy is in a log block.
    fn assoc_state(f: &FastFtl, l: Lbn) {
        let s = f.log_state(l);
        assert_eq!(s.is_some(), f.valid_in_logs(l) > 0);
        assert!(s.is_none_or(|s| s.references >= 1
            && s.references <= s.pages
            && f.valid_in_logs(l) <= s.pages));
    }
}
