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
//! Padding-model statistics: one event per RW victim reclaim with R_DB = LBNs merged, R_LB = 1,
//! U_LB = 1 (RW victims are always full). SW-log merges are not model events (the model's FAST
//! form assumes R_LB = U_LB = 1 and prices only the RW full merges). Accounting rule of seed §3.5:
//! when a flush unit carrying Pad-cause pages completes a switch or partial merge of the SW log of
//! its own LBN, it is counted as though its h Host-cause pages had gone to the RW logs and their
//! LBN had been full-merged when that space was reclaimed: h/N of an event with 1 data block,
//! h/N log blocks and h of h pages used (R_LB and U_LB stay 1; R_DB gains one data block per h
//! logged pages). `ftl.log_utilization` averages the programmed share of every reclaimed log block
//! (RW victims and SW logs).
//!
//! Device: physical blocks ≥ logical blocks + log blocks + 1 (the full-merge target).

use super::hybrid::{check_size, Merge, Stats, Store, DEAD, NONE};
use super::{Ftl, FtlView, UnitPage};
use crate::error::{Result, SimError};
use crate::nand::{Cause, Nand};
use crate::units::{Geometry, Lbn, Lpn};
use std::collections::VecDeque;

const NO_LBN: Lbn = u64::MAX;

pub struct FastFtl {
    s: Store,
    data: Vec<u32>,
    sw: u32,
    sw_owner: Lbn,
    rw: VecDeque<u32>,
    rw_limit: usize,
    log_blocks: u64,
    stats: Stats,
    overhead: u64,
    /// Per LBN since its last merge: pages written into RW logs, distinct flush units that wrote
    /// them, and the id of the last such unit.
    rw_pages: Vec<u32>,
    rw_units: Vec<u32>,
    last_unit: Vec<u64>,
    unit_id: u64,
    unit_lbn: Lbn,
    unit_padded: bool,
    unit_host: u32,
}

/// Physical blocks needed beyond the logical ones.
pub fn spare_blocks(log_blocks: u64) -> u64 {
    log_blocks + 1
}

impl FastFtl {
    pub fn new(geo: &Geometry, log_blocks: u64, check: bool) -> Result<Self> {
        if log_blocks < 2 {
            return Err(SimError::config(
                "ftl.log_blocks",
                format!("FAST needs ≥ 2 log blocks (1 SW + ≥ 1 RW), got {log_blocks}"),
            ));
        }
        check_size(
            geo,
            spare_blocks(log_blocks),
            &format!("{log_blocks} log blocks (ftl.log_blocks) and 1 merge block"),
        )?;
        let lbns = geo.logical_blocks() as usize;
        Ok(FastFtl {
            s: Store::new(geo, check)?,
            data: vec![NONE; lbns],
            sw: NONE,
            sw_owner: NO_LBN,
            rw: VecDeque::new(),
            rw_limit: (log_blocks - 1) as usize,
            log_blocks,
            stats: Stats::default(),
            overhead: 0,
            rw_pages: vec![0; lbns],
            rw_units: vec![0; lbns],
            last_unit: vec![u64::MAX; lbns],
            unit_id: 0,
            unit_lbn: NO_LBN,
            unit_padded: false,
            unit_host: 0,
        })
    }

    fn reset_tally(&mut self, lbn: Lbn) {
        self.rw_pages[lbn as usize] = 0;
        self.rw_units[lbn as usize] = 0;
        self.last_unit[lbn as usize] = u64::MAX;
    }

    /// Full merge of `lbn` into a new data block; returns the erases it performed.
    fn merge_full(&mut self, lbn: Lbn, nand: &mut Nand) -> Result<u64> {
        let d = self.data[lbn as usize];
        let nb = self.s.rewrite(lbn, &[], nand)?;
        self.data[lbn as usize] = nb;
        let mut erases = 0;
        if d != NONE {
            self.s.erase(d, nand);
            erases += 1;
        }
        if self.sw_owner == lbn {
            self.stats.reclaim(self.s.written[self.sw as usize]);
            self.s.erase(self.sw, nand);
            self.sw = NONE;
            self.sw_owner = NO_LBN;
            erases += 1;
        }
        self.reset_tally(lbn);
        Ok(erases)
    }

    /// Merge the SW log (switch, partial or full as its contents allow).
    pub(crate) fn merge_sw(&mut self, nand: &mut Nand) -> Result<()> {
        let (b, lbn) = (self.sw, self.sw_owner);
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
        let first = lbn * ppb as u64;
        for o in w..ppb {
            let lpn = first + o as u64;
            if self.s.is_mapped(lpn) {
                self.s.copy(lpn, b * ppb + o, nand);
            }
        }
        let d = self.data[lbn as usize];
        self.data[lbn as usize] = b;
        let mut erases = 0;
        if d != NONE {
            self.s.erase(d, nand);
            erases += 1;
        }
        self.sw = NONE;
        self.sw_owner = NO_LBN;
        self.stats.merge(kind, erases);
        self.reset_tally(lbn);
        if self.unit_padded && self.unit_lbn == lbn && self.unit_host > 0 {
            let h = self.unit_host as f64;
            let frac = h / ppb as f64;
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
            if self.rw_units[l as usize] == 1 {
                self.overhead += self.rw_pages[l as usize] as u64;
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
                    let l = lbn as usize;
                    self.rw_pages[l] += 1;
                    if self.last_unit[l] != self.unit_id {
                        self.last_unit[l] = self.unit_id;
                        self.rw_units[l] += 1;
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
            let mut d = self.data[lbn as usize];
            if d == NONE {
                d = self.s.alloc()?;
                self.data[lbn as usize] = d;
            }
            if self.s.page_free(d * ppb + o) {
                self.s.program_unit(lpn, d * ppb + o, p, nand);
                return Ok(());
            }
            if o == 0 {
                if self.sw != NONE {
                    self.merge_sw(nand)?;
                    continue;
                }
                self.sw = self.s.alloc()?;
                self.sw_owner = lbn;
                self.s.program_unit(lpn, self.sw * ppb, p, nand);
                return Ok(());
            }
            if self.sw_owner == lbn {
                if self.s.written[self.sw as usize] == o {
                    self.s.program_unit(lpn, self.sw * ppb + o, p, nand);
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
    fn is_mapped(&self, lpn: Lpn) -> bool {
        self.s.is_mapped(lpn)
    }
    fn stat(&self, name: &str) -> Option<f64> {
        match name {
            "free_blocks" => Some(self.s.free.len() as f64),
            _ => self.stats.stat(name, self.log_blocks),
        }
    }
}

impl Ftl for FastFtl {
    fn write_unit(
        &mut self,
        lbn: Lbn,
        pages: &[UnitPage],
        _hint: u32,
        nand: &mut Nand,
    ) -> Result<()> {
        self.unit_id += 1;
        self.unit_lbn = lbn;
        self.unit_padded = pages.iter().any(|p| p.cause == Cause::Pad);
        self.unit_host = pages.iter().filter(|p| p.cause == Cause::Host).count() as u32;
        let mut r = Ok(());
        for p in pages {
            r = self.write_page(lbn, p, nand);
            if r.is_err() {
                break;
            }
        }
        self.unit_lbn = NO_LBN;
        self.unit_padded = false;
        r
    }

    fn trim(&mut self, lpn: Lpn) {
        self.s.trim(lpn);
    }

    fn version_of(&self, lpn: Lpn) -> u32 {
        self.s.version_of(lpn)
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
        c
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        self.stats.gauges(self.s.ppb, self.s.free.len())
    }
}

#[cfg(test)]
mod tests {
    use super::super::hybrid::testutil::*;
    use super::*;

    fn fast(logs: u64) -> (FastFtl, Nand) {
        let g = geo(4, 4, 4 + logs + 1);
        (
            FastFtl::new(&g, logs, true).unwrap(),
            Nand::new(g.physical_blocks),
        )
    }

    fn progs(n: &Nand) -> u64 {
        n.counters.programs_total()
    }

    fn merge_progs(n: &Nand) -> u64 {
        n.counters.programs[Cause::Merge as usize]
    }

    #[test]
    fn fig8_log_then_full_merge() {
        let (mut f, mut n) = fast(3);
        f.write_unit(0, &host(&[0, 1, 2, 3], 1), 0, &mut n).unwrap();
        let (p0, e0) = (progs(&n), n.counters.erases);
        f.write_unit(0, &host(&[1, 2], 2), 0, &mut n).unwrap();
        f.reclaim_rw(&mut n).unwrap();
        assert_eq!(progs(&n) - p0, 6);
        assert_eq!(n.counters.erases - e0, 2);
        assert_eq!(f.stats.merges, [0, 0, 1]);
        assert_eq!(f.stats.erases, [0, 0, 2]);
        assert_eq!(f.overhead, 2);
        f.check_integrity(&[1, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn fig8_pad_then_switch() {
        let (mut f, mut n) = fast(3);
        f.write_unit(0, &host(&[0, 1, 2, 3], 1), 0, &mut n).unwrap();
        let (p0, e0) = (progs(&n), n.counters.erases);
        let mut unit = host(&[0, 1, 2, 3], 2);
        for i in [0, 3] {
            unit[i].cause = Cause::Pad;
            unit[i].version = 1;
        }
        f.write_unit(0, &unit, 0, &mut n).unwrap();
        assert_eq!(progs(&n) - p0, 4);
        assert_eq!(n.counters.erases - e0, 1);
        assert_eq!(f.stats.merges, [1, 0, 0]);
        assert_eq!(f.stats.erases, [1, 0, 0]);
        assert_eq!(
            (f.stats.r_db(), f.stats.r_lb(), f.stats.u_lb()),
            (2.0, 1.0, 1.0)
        );
        f.check_integrity(&[1, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn sw_append_and_switch() {
        let (mut f, mut n) = fast(3);
        f.write_unit(0, &host(&[0, 1, 2, 3], 1), 0, &mut n).unwrap();
        for o in 0..4 {
            f.write_unit(0, &host(&[o], 2), 0, &mut n).unwrap();
        }
        assert_eq!(f.stats.merges, [1, 0, 0]);
        assert_eq!(n.counters.erases, 1);
        assert_eq!(merge_progs(&n), 0);
        assert_eq!(f.sw, NONE);
        // Unmerged model stats: SW switches are no model events.
        assert_eq!(f.stats.events, 0.0);
        f.check_integrity(&[2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn offset_zero_restarts_sw_log() {
        let (mut f, mut n) = fast(3);
        f.write_unit(0, &host(&[0, 1, 2, 3], 1), 0, &mut n).unwrap();
        f.write_unit(1, &host(&[0, 1, 2, 3], 1), 0, &mut n).unwrap();
        f.write_unit(0, &host(&[0, 1], 2), 0, &mut n).unwrap();
        f.write_unit(1, &host(&[0], 2), 0, &mut n).unwrap();
        assert_eq!(f.stats.merges, [0, 1, 0]);
        assert_eq!(merge_progs(&n), 2);
        assert_eq!(n.counters.erases, 1);
        assert_eq!(f.sw_owner, 1);
        // Offset 0 again for the SW owner: its own SW log is merged, a new one started.
        f.write_unit(1, &host(&[0], 3), 0, &mut n).unwrap();
        assert_eq!(f.stats.merges, [0, 2, 0]);
        assert_eq!(merge_progs(&n), 5);
        assert_eq!(n.counters.erases, 2);
        assert_eq!(f.sw_owner, 1);
        f.check_integrity(&[2, 2, 1, 1, 3, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn non_sequential_write_to_sw_owner() {
        let (mut f, mut n) = fast(3);
        f.write_unit(0, &host(&[0, 1, 2, 3], 1), 0, &mut n).unwrap();
        f.write_unit(0, &host(&[0, 1], 2), 0, &mut n).unwrap();
        f.write_unit(0, &host(&[3], 3), 0, &mut n).unwrap();
        assert_eq!(f.stats.merges, [0, 1, 0]);
        assert_eq!(merge_progs(&n), 2);
        assert_eq!(n.counters.erases, 1);
        assert_eq!(f.sw, NONE);
        assert_eq!(f.rw.len(), 1);
        assert_eq!(f.s.written[f.rw[0] as usize], 1);
        f.check_integrity(&[2, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn rw_fifo_victim_full_merges_two_lbns() {
        let (mut f, mut n) = fast(3);
        for l in 0..3 {
            f.write_unit(l, &host(&[0, 1, 2, 3], 1), 0, &mut n).unwrap();
        }
        f.write_unit(0, &host(&[1], 2), 0, &mut n).unwrap();
        f.write_unit(1, &host(&[1, 2], 2), 0, &mut n).unwrap();
        f.write_unit(0, &host(&[3], 3), 0, &mut n).unwrap();
        for (o, v) in [(1, 2), (2, 2), (3, 2), (1, 3)] {
            f.write_unit(2, &host(&[o], v), 0, &mut n).unwrap();
        }
        assert_eq!(f.rw.len(), 2);
        assert_eq!(n.counters.erases, 0);
        f.write_unit(2, &host(&[2], 4), 0, &mut n).unwrap();
        assert_eq!(f.stats.merges, [0, 0, 2]);
        assert_eq!(f.stats.erases, [0, 0, 3]);
        assert_eq!(n.counters.erases, 3);
        assert_eq!(merge_progs(&n), 8);
        assert_eq!(f.overhead, 2);
        assert_eq!(
            (f.stats.r_db(), f.stats.r_lb(), f.stats.u_lb()),
            (2.0, 1.0, 1.0)
        );
        assert_eq!(f.stat("r_db"), Some(2.0));
        f.check_integrity(&[1, 2, 1, 3, 1, 2, 2, 1, 1, 3, 4, 2, 0, 0, 0, 0])
            .unwrap();
    }

    #[test]
    fn random_integrity_small_pools() {
        for (seed, logs) in [2u64, 3, 5].into_iter().enumerate() {
            let g = geo(4, 5, 5 + logs + 1);
            let mut f = FastFtl::new(&g, logs, true).unwrap();
            let mut n = Nand::new(g.physical_blocks);
            random_run(&mut f, &mut n, 4, 5, 3000, 200 + seed as u64);
        }
    }

    #[test]
    fn random_integrity() {
        let g = geo(8, 12, 12 + 4 + 1);
        let mut f = FastFtl::new(&g, 4, true).unwrap();
        let mut n = Nand::new(g.physical_blocks);
        random_run(&mut f, &mut n, 8, 12, 5000, 5);
        let erases: u64 = f
            .counters()
            .iter()
            .filter(|(k, _)| k.starts_with("ftl.erases"))
            .map(|x| x.1)
            .sum();
        assert_eq!(erases, n.counters.erases);
        assert!(
            f.stats.merges.iter().all(|&m| m > 0),
            "{:?}",
            f.stats.merges
        );
    }
}
