//! Where a NAND operation runs: the FTL's page and block numbers mapped onto channels and dies.
//!
//! An FTL block is a stripe over every die (a superblock, as a pblk line): its page `p` lies on
//! the die at stripe position `p mod D` (D = channels × chips per channel × dies per chip), in
//! that die's block of the same number, which sits on plane `block mod planes_per_die`. So the
//! pages an FTL programs one after the other into an open block (host writes, GC copies) go to
//! consecutive stripe positions, and erasing an FTL block erases one block on every die. The FTL
//! itself never sees dies: counts are the same for every geometry.
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
    /// Channel of each die.
    channel_of: Vec<u32>,
    planes: u32,
}

impl Layout {
    pub fn new(d: &DeviceConfig, pages_per_block: u64) -> Layout {
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
        Layout {
            ppb: Divisor::new(pages_per_block),
            die_at: (0..pages_per_block)
                .map(|p| die_of_position(p % dies))
                .collect(),
            channel_of: (0..dies).map(|die| (die / w) as u32).collect(),
            planes: d.planes_per_die,
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

    /// The plane, on every die, of the FTL's block `block`.
    pub fn plane_of(&self, block: u32) -> u32 {
        block % self.planes
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
        let l = Layout::new(&dev(2, 2, 1, "channel-first"), 8);
        let dies: Vec<u32> = (0..8).map(|p| l.die_of(p)).collect();
        assert_eq!(dies, [0, 2, 1, 3, 0, 2, 1, 3]);
        let chans: Vec<u32> = dies.iter().map(|&d| l.channel_of(d)).collect();
        assert_eq!(chans, [0, 1, 0, 1, 0, 1, 0, 1]);
        let l = Layout::new(&dev(2, 2, 1, "die-first"), 8);
        let dies: Vec<u32> = (0..8).map(|p| l.die_of(p)).collect();
        assert_eq!(dies, [0, 1, 2, 3, 0, 1, 2, 3]);
        // The offset in the block decides, not the block: PPN 8·b + p is on die_of(p).
        assert_eq!(l.die_of(8 * 5 + 2), 2);
        assert_eq!((l.dies(), l.channels()), (4, 2));
        assert_eq!((l.plane_of(6), l.plane_of(7)), (0, 1));
    }

    #[test]
    fn every_die_gets_an_equal_share_of_a_block() {
        let l = Layout::new(&dev(8, 2, 2, "channel-first"), 256);
        let mut per_die = vec![0; l.dies()];
        for p in 0..256 {
            per_die[l.die_of(p) as usize] += 1;
        }
        assert!(per_die.iter().all(|&n| n == 8), "{per_die:?}");
    }
}
