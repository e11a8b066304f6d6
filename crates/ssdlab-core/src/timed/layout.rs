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
    /// The stripes in block order: one over every die, or one per set of dies
    /// ([`Layout::partitioned`]).
    stripes: Vec<Stripe>,
    /// Channel of each die.
    channel_of: Vec<u32>,
    planes: u32,
    /// Mapping units per NAND page.
    units: u32,
    /// Divisions by `units`, `planes` and `units · planes` (shifts and masks when they are
    /// powers of two, as they usually are: grouping takes a NAND page, plane or key per operation).
    units_div: Divisor,
    planes_div: Divisor,
    key_div: Divisor,
}

/// The blocks below `pbn_end` (and above the stripe before) lie on `dies`.
#[derive(Clone, Debug)]
struct Stripe {
    pbn_end: u64,
    /// Die of each page offset within a block.
    die_at: Vec<u32>,
    /// The NAND page (row) in its plane's block of each page offset within a block.
    row_at: Vec<u32>,
    /// Its dies, ascending (an erase of one of its FTL blocks erases a block on each).
    dies: Vec<u32>,
}

impl Layout {
    /// The layout of `d` for FTL blocks of `pages_per_block` mapping units, `units` of them in a
    /// NAND page.
    pub fn new(d: &DeviceConfig, pages_per_block: u64, units: u64) -> Layout {
        Layout::partitioned(
            d,
            pages_per_block,
            units,
            &[(u64::MAX, (0..d.dies() as u32).collect())],
        )
    }

    /// The same with the blocks in ranges, each striped over its own set of dies: `parts` gives
    /// each range's end (exclusive, ascending) and its dies. Within a set the stripe keeps the
    /// device's order (`device.stripe`) restricted to the set's dies.
    pub fn partitioned(
        d: &DeviceConfig,
        pages_per_block: u64,
        units: u64,
        parts: &[(u64, Vec<u32>)],
    ) -> Layout {
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
        let stripe = |pbn_end: u64, set: &[u32]| {
            let order: Vec<u32> = (0..dies)
                .map(die_of_position)
                .filter(|die| set.contains(die))
                .collect();
            let positions = order.len() as u64 * planes;
            let mut sorted = set.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            Stripe {
                pbn_end,
                die_at: (0..pages_per_block)
                    .map(|p| order[((p / units) % positions / planes) as usize])
                    .collect(),
                row_at: (0..pages_per_block)
                    .map(|p| (p / units / positions) as u32)
                    .collect(),
                dies: sorted,
            }
        };
        Layout {
            ppb: Divisor::new(pages_per_block),
            stripes: parts.iter().map(|(end, set)| stripe(*end, set)).collect(),
            channel_of: (0..dies).map(|die| (die / w) as u32).collect(),
            planes: d.planes_per_die,
            units: units as u32,
            units_div: Divisor::new(units),
            planes_div: Divisor::new(planes),
            key_div: Divisor::new(units * planes),
        }
    }

    /// The stripe of block `pbn`.
    #[inline]
    fn stripe(&self, pbn: u64) -> &Stripe {
        if self.stripes.len() == 1 {
            return &self.stripes[0];
        }
        self.stripe_among(pbn)
    }

    /// Several stripes (flows confined to sets of dies): the one holding `pbn`. Out of line: one
    /// stripe, the common case, is found without it.
    #[inline(never)]
    fn stripe_among(&self, pbn: u64) -> &Stripe {
        let all = &self.stripes;
        all.iter()
            .find(|s| pbn < s.pbn_end)
            .unwrap_or(&all[all.len() - 1])
    }

    /// The stripe of PPN `ppn`: its block's.
    #[inline(always)]
    fn stripe_of(&self, ppn: u32) -> &Stripe {
        if self.stripes.len() == 1 {
            return &self.stripes[0];
        }
        self.stripe_among(self.ppb.quot(ppn as u64))
    }

    /// The dies holding FTL block `pbn` (its erase erases a block on each).
    #[inline]
    pub fn block_dies(&self, pbn: u32) -> &[u32] {
        &self.stripe(pbn as u64).dies
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
        self.stripe_of(ppn).die_at[self.ppb.modulo(ppn as u64) as usize]
    }

    /// The channel of die `die`.
    #[inline]
    pub fn channel_of(&self, die: u32) -> u32 {
        self.channel_of[die as usize]
    }

    /// The plane holding PPN `ppn`.
    #[inline(always)]
    pub fn plane_of(&self, ppn: u32) -> u32 {
        self.planes_div.modulo(self.units_div.quot(ppn as u64)) as u32
    }

    /// The NAND page (row) of PPN `ppn` in its plane's block: its page type's index.
    #[inline]
    pub fn row_of(&self, ppn: u32) -> u32 {
        self.stripe_of(ppn).row_at[self.ppb.modulo(ppn as u64) as usize]
    }

    /// PPNs with the same key lie in one row of one die's planes: one multi-plane operation
    /// can read or program them (blocks hold whole keys: validation).
    #[inline]
    pub fn group_of(&self, ppn: u32) -> u32 {
        self.key_div.quot(ppn as u64) as u32
    }

    /// The NAND page of PPN `ppn` (its units share one array read and one program).
    #[inline]
    pub fn page_of(&self, ppn: u32) -> u32 {
        self.units_div.quot(ppn as u64) as u32
    }

    /// Whether PPN `ppn` is the last mapping unit of its NAND page.
    #[inline]
    pub fn last_unit(&self, ppn: u32) -> bool {
        self.units_div.modulo(ppn as u64) as u32 == self.units - 1
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
    fn a_set_of_dies_holds_its_blocks_alone() {
        // 4 channels × 2 ways (8 dies); blocks 0..3 on channel 0's dies, 3..10 on the others.
        let d = dev(4, 2, 1, "channel-first").one_plane();
        let (ch0, rest): (Vec<u32>, Vec<u32>) = (0..8).partition(|die| die / 2 == 0);
        let l = Layout::partitioned(&d, 24, 1, &[(3, ch0.clone()), (10, rest.clone())]);
        for (blocks, set) in [(0..3u32, &ch0), (3..10, &rest)] {
            for b in blocks {
                let mut per_die = [0; 8];
                for p in 0..24 {
                    per_die[l.die_of(b * 24 + p) as usize] += 1;
                }
                for die in 0..8 {
                    let want = if set.contains(&die) {
                        24 / set.len()
                    } else {
                        0
                    };
                    assert_eq!(per_die[die as usize], want, "block {b}, die {die}");
                }
                assert_eq!(l.block_dies(b), set.as_slice());
            }
        }
        // Within a set, consecutive pages still alternate channels (channel-first).
        let chans: Vec<u32> = (72..75).map(|p| l.channel_of(l.die_of(p))).collect();
        assert_eq!(chans, [1, 2, 3]);
        // One set of every die is the device's own layout.
        let all = Layout::partitioned(&d, 16, 1, &[(u64::MAX, (0..8).collect())]);
        let one = Layout::new(&d, 16, 1);
        for p in 0..64 {
            assert_eq!(
                (all.die_of(p), all.row_of(p)),
                (one.die_of(p), one.row_of(p))
            );
        }
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
