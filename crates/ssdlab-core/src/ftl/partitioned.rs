//! Several FTLs side by side, each over its own range of logical pages and its own physical
//! blocks: the flows confined to one set of dies (`[[flows]]` `channels`, `dies`) share one
//! FTL, whose blocks lie on those dies only (the timed layout stripes them there). Each FTL
//! numbers its pages and blocks from 0; the NAND adds the FTL's base to every address it logs
//! ([`Nand::set_base`]), so the operations carry device-wide addresses.

use super::{Ftl, FtlView, Unit};
use crate::error::{Result, SimError};
use crate::nand::{Cause, Nand, OpKind};
use crate::units::Lpn;

/// One FTL and where it lies: its first logical page and count, its first physical block and
/// count.
pub struct Part {
    pub ftl: Box<dyn Ftl>,
    pub lpn_base: Lpn,
    pub lpns: Lpn,
    pub pbn_base: u32,
    pub blocks: u32,
}

pub struct Partitioned {
    parts: Vec<Part>,
    pages_per_block: u32,
    /// The part background GC tries first (they take turns).
    next_gc: usize,
    /// `run.check_integrity`: every operation a part logs lies in its own blocks.
    check: bool,
}

impl Partitioned {
    /// `parts` in ascending logical and physical order, each starting where the one before ends.
    pub fn new(parts: Vec<Part>, pages_per_block: u32, check: bool) -> Partitioned {
        Partitioned {
            parts,
            pages_per_block,
            next_gc: 0,
            check,
        }
    }

    /// The part holding `lpn`, and `lpn` in it.
    #[inline]
    fn at(&self, lpn: Lpn) -> (usize, Lpn) {
        let i = self
            .parts
            .iter()
            .position(|p| lpn < p.lpn_base + p.lpns)
            .unwrap_or(self.parts.len() - 1);
        (i, lpn - self.parts[i].lpn_base)
    }

    /// Run `f` on part `i`'s FTL, then move the addresses it logged to its pages and blocks
    /// (checked, with `check`, to stay in them: its flows' operations never reach another set's
    /// dies).
    #[inline]
    fn on<R>(
        &mut self,
        i: usize,
        nand: &mut Nand,
        f: impl FnOnce(&mut dyn Ftl, &mut Nand) -> Result<R>,
    ) -> Result<R> {
        let ppb = self.pages_per_block;
        let p = &mut self.parts[i];
        let end = p.pbn_base + p.blocks;
        let logged = nand.log().len();
        nand.set_block_base(p.pbn_base);
        let r = f(&mut *p.ftl, nand);
        nand.set_block_base(0);
        let blocks = p.pbn_base..end;
        for op in &mut nand.log_mut()[logged..] {
            let block = match op.kind {
                OpKind::Erase => {
                    op.addr += p.pbn_base;
                    op.addr
                }
                _ => {
                    op.addr += p.pbn_base * ppb;
                    op.addr / ppb
                }
            };
            if self.check && !blocks.contains(&block) {
                return Err(SimError::Integrity(format!(
                    "the FTL of the flows on set {i} of dies issued {op:?} outside its blocks {}..{end}",
                    p.pbn_base
                )));
            }
        }
        r
    }
}

impl FtlView for Partitioned {
    fn is_mapped(&self, lpn: Lpn) -> bool {
        let (i, l) = self.at(lpn);
        self.parts[i].ftl.is_mapped(l)
    }
    /// Counts (free blocks) are the parts' sum; ratios have no meaning across parts.
    fn stat(&self, name: &str) -> Option<f64> {
        match name {
            "free_blocks" => self.parts.iter().map(|p| p.ftl.stat(name)).sum(),
            _ => None,
        }
    }
    fn prefetch(&self, lpn: Lpn, deep: bool) {
        let (i, l) = self.at(lpn);
        self.parts[i].ftl.prefetch(l, deep);
    }
}

impl Ftl for Partitioned {
    fn write_unit(&mut self, unit: Unit<'_>, nand: &mut Nand) -> Result<()> {
        let ppb = self.pages_per_block as u64;
        let (i, l) = self.at(unit.lbn * ppb);
        self.on(i, nand, |f, n| {
            f.write_unit(
                Unit {
                    lbn: l / ppb,
                    ..unit
                },
                n,
            )
        })
    }
    fn ppn_of(&self, lpn: Lpn) -> Option<u32> {
        let (i, l) = self.at(lpn);
        let p = &self.parts[i];
        p.ftl
            .ppn_of(l)
            .map(|ppn| ppn + p.pbn_base * self.pages_per_block)
    }
    fn fill_bulk(&mut self, nand: &mut Nand) -> Result<bool> {
        let mut filled = Vec::new();
        for i in 0..self.parts.len() {
            filled.push(self.on(i, nand, |f, n| f.fill_bulk(n))?);
        }
        match (filled.iter().all(|&f| f), filled.iter().any(|&f| f)) {
            (true, _) => Ok(true),
            (false, false) => Ok(false),
            _ => Err(SimError::Integrity(
                "some of the flows' FTLs filled in bulk and some did not".into(),
            )),
        }
    }
    fn background_gc(&mut self, nand: &mut Nand) -> Result<bool> {
        let n = self.parts.len();
        for k in 0..n {
            let i = (self.next_gc + k) % n;
            if self.on(i, nand, |f, n| f.background_gc(n))? {
                self.next_gc = (i + 1) % n;
                return Ok(true);
            }
        }
        Ok(false)
    }
    fn read(&mut self, lpn: Lpn, cause: Cause, nand: &mut Nand) -> Result<bool> {
        let (i, l) = self.at(lpn);
        self.on(i, nand, |f, n| f.read(l, cause, n))
    }
    fn trim(&mut self, lpn: Lpn) {
        let (i, l) = self.at(lpn);
        self.parts[i].ftl.trim(l);
    }
    fn version_of(&self, lpn: Lpn) -> u32 {
        let (i, l) = self.at(lpn);
        self.parts[i].ftl.version_of(l)
    }
    fn check_integrity(&self, latest: &[u32]) -> Result<()> {
        for p in &self.parts {
            let (a, b) = (p.lpn_base as usize, (p.lpn_base + p.lpns) as usize);
            p.ftl.check_integrity(&latest[a..b.min(latest.len())])?;
        }
        Ok(())
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        sum_by_name(self.parts.iter().map(|p| p.ftl.counters()))
    }
    /// The page FTL's gauges are counts (free blocks): summed.
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        sum_by_name(self.parts.iter().map(|p| p.ftl.gauges()))
    }
}

/// The parts' values summed by name, in the order the names first come.
fn sum_by_name<T: std::ops::AddAssign>(
    lists: impl Iterator<Item = Vec<(&'static str, T)>>,
) -> Vec<(&'static str, T)> {
    let mut out: Vec<(&'static str, T)> = Vec::new();
    for (k, v) in lists.flatten() {
        match out.iter_mut().find(|(o, _)| *o == k) {
            Some((_, s)) => *s += v,
            None => out.push((k, v)),
        }
    }
    out
}
