//! Block-mapped FTL (ALGORITHMS.md §2.2): LBN → PBN, every page at its own offset.
//!
//! A flush unit whose pages all land on free pages of the mapped block is written in place (an
//! unmapped LBN first gets a free block). A unit that overwrites any page of its block rewrites the
//! block once: a free block receives every valid page not in the unit (read + program, cause
//! Merge) and the unit's pages (their own cause), the LBN is remapped and the old block erased.
//! That rewrite is counted as a full merge (`ftl.merges.full`, `ftl.erases.full`).
//!
//! A whole-block unit (a full or padded group) needs no copy: it is programmed in offset order
//! into a free block that replaces the data block, whose erase is a switch merge
//! (`ftl.merges.switch`, `ftl.erases.switch`). An LBN without a data block gets it as its first.
//! With `fill`, offsets that hold no data are programmed with filler. There are no log blocks, so
//! R_DB / R_LB / U_LB stay 0.
//!
//! Device: one spare block beyond the logical blocks (the rewrite target).

use super::hybrid::{check_size, store_answers, store_view, Merge, Stats, Store, NONE};
use super::{Ftl, FtlView, Shape, Unit};
use crate::error::Result;
use crate::nand::Nand;
use crate::units::{Geometry, Lpn};

pub struct BlockFtl {
    s: Store,
    stats: Stats,
}

/// Physical blocks needed beyond the logical ones.
pub fn spare_blocks() -> u64 {
    1
}

impl BlockFtl {
    pub fn new(geo: &Geometry, check: bool) -> Result<Self> {
        check_size(geo, spare_blocks(), "1 spare block for block rewrites")?;
        Ok(BlockFtl {
            s: Store::new(geo, check)?,
            stats: Stats::default(),
        })
    }
}

impl FtlView for BlockFtl {
    store_view!();
}

impl Ftl for BlockFtl {
    fn write_unit(&mut self, unit: Unit<'_>, nand: &mut Nand) -> Result<()> {
        let ppb = self.s.ppb;
        let first = unit.lbn * ppb as u64;
        if let Shape::Block { fill } = unit.shape {
            if self.s.switch_in(unit.lbn, unit.pages, fill, nand)? {
                self.stats.merge(Merge::Switch, 1);
            }
            return self.s.check_lbn(unit.lbn);
        }
        let d = self.s.data_block(unit.lbn)?;
        if unit
            .pages
            .iter()
            .all(|p| self.s.page_free(d * ppb + p.offset))
        {
            for p in unit.pages {
                self.s
                    .program_unit(first + p.offset as u64, d * ppb + p.offset, p, nand);
            }
            return Ok(());
        }
        let nb = self.s.rewrite(unit.lbn, unit.pages, false, nand)?;
        self.s.erase(d, nand);
        self.s.remap(unit.lbn, nb);
        self.stats.merge(Merge::Full, 1);
        self.s.check_lbn(unit.lbn)
    }

    store_answers!();

    fn trim(&mut self, lpn: Lpn) {
        self.s.trim(lpn);
    }

    fn check_integrity(&self, latest: &[u32]) -> Result<()> {
        self.s.check_all(latest)?;
        // Every valid page sits at its own offset of its LBN's data block.
        for (lpn, &ppn) in self.s.l2p.iter().enumerate() {
            if ppn == NONE {
                continue;
            }
            let lbn = lpn / self.s.ppb as usize;
            let want = self.s.data[lbn] * self.s.ppb + (lpn % self.s.ppb as usize) as u32;
            if ppn != want {
                return Err(crate::error::SimError::Integrity(format!(
                    "LPN {lpn} at PPN {ppn}, not at its offset of data block {}",
                    self.s.data[lbn]
                )));
            }
        }
        Ok(())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.stats.counters()
    }
}

const INFO: crate::component::Component = crate::component::Component::new(
            "ftl",
            "block",
            "Block-mapped FTL: pages at fixed offsets; a flush unit overwriting any page rewrites its block once.",
            crate::params::NONE,
            &[],
        );

/// The registry entry of `block`.
pub static ENTRY: super::Entry = super::Entry {
    info: INFO,
    build: |cfg, geo, _| Ok(Box::new(BlockFtl::new(geo, cfg.run.check_integrity)?)),
    spare_blocks: |_, _, _| Ok(spare_blocks()),
    provision: super::op_provision,
    resolve: super::no_resolve,
    frontiers: None,
    check: super::no_check,
    default_op: super::uses_default_op,
    supports: super::Supports::NONE,
};

#[cfg(test)]
mod tests {
    use super::super::hybrid::testutil::*;
    use super::*;
    use crate::nand::Cause;

    #[test]
    fn in_place_then_overwrite_costs() {
        let mut f = BlockFtl::new(&geo(4, 2, 3), true).unwrap();
        let mut n = Nand::new(3);
        f.write_unit(Unit::pages(0, &host(&[0, 2], 1)), &mut n)
            .unwrap();
        f.write_unit(Unit::pages(0, &host(&[1], 2)), &mut n)
            .unwrap();
        assert_eq!(n.counters.programs_total(), 3);
        assert_eq!(n.counters.erases, 0);
        // Overwrite of page 2 in a unit with page 3 (free): one rewrite.
        f.write_unit(Unit::pages(0, &host(&[2, 3], 3)), &mut n)
            .unwrap();
        assert_eq!(n.counters.erases, 1);
        assert_eq!(n.counters.programs[Cause::Merge as usize], 2);
        assert_eq!(n.counters.reads[Cause::Merge as usize], 2);
        assert_eq!(n.counters.programs[Cause::Host as usize], 5);
        assert_eq!(f.stats.merges[Merge::Full as usize], 1);
        f.check_integrity(&[1, 2, 3, 3, 0, 0, 0, 0]).unwrap();
    }

    #[test]
    fn whole_block_is_a_switch_merge() {
        let mut f = BlockFtl::new(&geo(4, 2, 3), true).unwrap();
        let mut n = Nand::new(3);
        // First data block of LBN 0, with filler for offsets 0 and 3: no merge.
        f.write_unit(
            Unit::new(0, &host(&[1, 2], 1), Shape::Block { fill: true }),
            &mut n,
        )
        .unwrap();
        assert_eq!((n.counters.programs_total(), n.counters.erases), (4, 0));
        assert_eq!(f.stats.merges, [0, 0, 0]);
        // A padded group (host 2, pads 1) replaces it: no merge copies, one erase, a switch.
        let unit = padded(&[2], 2, &[1], 1);
        f.write_unit(Unit::new(0, &unit, Shape::Block { fill: true }), &mut n)
            .unwrap();
        assert_eq!(n.counters.programs[Cause::Pad as usize], 2 + 3);
        assert_eq!(n.counters.programs[Cause::Merge as usize], 0);
        assert_eq!(n.counters.erases, 1);
        assert_eq!((f.stats.merges, f.stats.erases), ([1, 0, 0], [1, 0, 0]));
        f.check_integrity(&[0, 1, 2, 0, 0, 0, 0, 0]).unwrap();
    }

    #[test]
    fn random_integrity() {
        let mut f = BlockFtl::new(&geo(8, 6, 7), true).unwrap();
        let mut n = Nand::new(7);
        random_run(&mut f, &mut n, 8, 6, 5000, 7);
        assert_erases_agree(&f, &n);
    }
}
