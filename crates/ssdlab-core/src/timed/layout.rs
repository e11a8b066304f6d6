//! Where a NAND operation runs: the FTL's page and block numbers mapped onto channels and dies.
//!
//! An FTL block is a stripe over every plane of every die (a superblock, as a pblk line): with
//! one plane per die and NAND pages of one mapping unit (the defaults), its page `p` lies on the
//! die at stripe position `p mod D` (D = channels × chips per channel × dies per chip), in that
//! die's block of the same number. So the pages an FTL programs one after the other into an open
//! block (host writes, GC copies) go to consecutive stripe positions, and erasing an FTL block
//! erases one block on every die. The FTL itself never sees dies: counts are the same for every
//! geometry.
//!
//! With P = `device.planes_per_die` planes and NAND pages of k mapping units
//! (`nand.physical_page_bytes`), the stripe's unit is a die's multi-plane page: the block's
//! units `u` go to NAND page (slot) `s = u / k`, stripe position `s mod (D·P)`, on the die at
//! position `(s mod (D·P)) / P`, plane `s mod P`, in that plane's page (row) `s / (D·P)`. So k·P
//! consecutive units fill one row of one die's P planes (the same page offset in each plane, as
//! multi-plane commands require) before the stripe moves to the next die.
//!
//! `device.stripe` orders the positions: `channel-first` puts position k on channel k mod C
//! (way k / C), so consecutive pages use different buses; `die-first` puts it on way k mod W of
//! channel k / W (W = chips per channel × dies per chip). Dies are numbered channel by channel:
//! die = channel · W + way.

use crate::config::DeviceConfig;
use crate::units::Divisor;

#[derive(Clone, Debug)]
pub struct Layout {
    ppb: Divisor,
    /// Die of each page offset within a block.
    die_at: Vec<u32>,
    /// The NAND page (row) in its plane's block of each page offset within a block.
    row_at: Vec<u32>,
    /// Channel of each die.
    channel_of: Vec<u32>,
    planes: u32,
    /// Mapping units per NAND page.
    units: u32,
}

impl Layout {
    /// The layout of `d` for FTL blocks of `pages_per_block` mapping units, `units` of them in a
    /// NAND page.
    pub fn new(d: &DeviceConfig, pages_per_block: u64, units: u64) -> Layout {
        let (c, w) = (
            d.channels as u64,
            d.chips_per_channel as u64 * d.dies_per_chip as u64,
        );
        let dies = d.dies();
        let die_of_position = |k: u64| -> u32 {
            let (ch, way) = if d.stripe == "die-first" {
                (k / w, k % w)
            } else {
                (k % c, k / c)
            };
            (ch * w + way) as u32
        };
        let planes = d.planes_per_die as u64;
        let positions = dies * planes;
        Layout {
            ppb: Divisor::new(pages_per_block),
            die_at: (0..pages_per_block)
                .map(|p| die_of_position((p / units) % positions / planes))
                .collect(),
            row_at: (0..pages_per_block)
                .map(|p| (p / units / positions) as u32)
                .collect(),
            channel_of: (0..dies).map(|die| (die / w) as u32).collect(),
            planes: d.planes_per_die,
            units: units as u32,
        }
    }

    pub fn dies(&self) -> usize {
        self.channel_of.len()
    }

    pub fn channels(&self) -> usize {
        self.channel_of.last().map_or(0, |&c| c as usize + 1)
    }

    /// The die holding PPN `ppn`.
    #[inline]
    pub fn die_of(&self, ppn: u32) -> u32 {
        self.die_at[self.ppb.modulo(ppn as u64) as usize]
    }

    /// The channel of die `die`.
    #[inline]
    pub fn channel_of(&self, die: u32) -> u32 {
        self.channel_of[die as usize]
    }

    /// The plane holding PPN `ppn`.
    pub fn plane_of(&self, ppn: u32) -> u32 {
        ppn / self.units % self.planes
    }

    /// The NAND page (row) of PPN `ppn` in its plane's block: its page type's index.
    #[inline]
    pub fn row_of(&self, ppn: u32) -> u32 {
        self.row_at[self.ppb.modulo(ppn as u64) as usize]
    }

    /// PPNs with the same key lie in one row of one die's planes: one multi-plane operation
    /// can read or program them (blocks hold whole keys: validation).
    #[inline]
    pub fn group_of(&self, ppn: u32) -> u32 {
        ppn / (self.units * self.planes)
    }

    /// The NAND page of PPN `ppn` (its units share one array read and one program).
    #[inline]
    pub fn page_of(&self, ppn: u32) -> u32 {
        ppn / self.units
    }

    /// Whether PPN `ppn` is the last mapping unit of its NAND page.
    #[inline]
    pub fn last_unit(&self, ppn: u32) -> bool {
        ppn % self.units == self.units - 1
    }

    pub fn units_per_page(&self) -> u32 {
        self.units
    }

    pub fn planes(&self) -> u32 {
        self.planes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(channels: u32, chips: u32, dies: u32, stripe: &str) -> DeviceConfig {
        DeviceConfig {
            channels,
            chips_per_channel: chips,
            dies_per_chip: dies,
            planes_per_die: 2,
            stripe: stripe.into(),
            ..DeviceConfig::default()
        }
    }

    #[test]
    fn stripe_orders() {
        // 2 channels × (2 chips × 1 die): ways 0..2 per channel; die = channel · 2 + way.
        let l = Layout::new(&dev(2, 2, 1, "channel-first").one_plane(), 8, 1);
        let dies: Vec<u32> = (0..8).map(|p| l.die_of(p)).collect();
        assert_eq!(dies, [0, 2, 1, 3, 0, 2, 1, 3]);
        let chans: Vec<u32> = dies.iter().map(|&d| l.channel_of(d)).collect();
        assert_eq!(chans, [0, 1, 0, 1, 0, 1, 0, 1]);
        let l = Layout::new(&dev(2, 2, 1, "die-first").one_plane(), 8, 1);
        let dies: Vec<u32> = (0..8).map(|p| l.die_of(p)).collect();
        assert_eq!(dies, [0, 1, 2, 3, 0, 1, 2, 3]);
        // The offset in the block decides, not the block: PPN 8·b + p is on die_of(p).
        assert_eq!(l.die_of(8 * 5 + 2), 2);
        assert_eq!((l.dies(), l.channels()), (4, 2));
    }

    impl DeviceConfig {
        fn one_plane(mut self) -> Self {
            self.planes_per_die = 1;
            self
        }
    }

    #[test]
    fn planes_and_large_pages_fill_a_row_of_one_die_first() {
        // 2 dies (die-first) × 2 planes, NAND pages of 2 units: 4 units per die and row.
        let l = Layout::new(&dev(1, 2, 1, "die-first"), 16, 2);
        let at = |p| (l.die_of(p), l.plane_of(p), l.row_of(p), l.group_of(p));
        assert_eq!(at(0), (0, 0, 0, 0));
        assert_eq!(at(1), (0, 0, 0, 0));
        assert_eq!(at(2), (0, 1, 0, 0));
        assert_eq!(at(3), (0, 1, 0, 0));
        assert_eq!(at(4), (1, 0, 0, 1));
        assert_eq!(at(7), (1, 1, 0, 1));
        assert_eq!(at(8), (0, 0, 1, 2));
        assert_eq!(at(16 + 5), (1, 0, 0, 5)); // the next block starts over
        assert_eq!(
            (l.page_of(5), l.last_unit(5), l.last_unit(4)),
            (2, true, false)
        );
    }

    #[test]
    fn every_die_gets_an_equal_share_of_a_block() {
        let l = Layout::new(&dev(8, 2, 2, "channel-first"), 256, 1);
        let mut per_die = vec![0; l.dies()];
        for p in 0..256 {
            per_die[l.die_of(p) as usize] += 1;
        }
        assert!(per_die.iter().all(|&n| n == 8), "{per_die:?}");
        let rows: Vec<u32> = (0..256).map(|p| l.row_of(p)).collect();
        assert_eq!((rows[63], rows[64], rows[255]), (0, 1, 3)); // 32 dies × 2 planes per row
    }
}
