//! The buffers' page index: LPN → a u32 value (a node or slab slot), an open-addressing table of
//! 8-byte (key, value) slots with linear probing, load ≤ 1/2 and backward-shift deletion (no
//! tombstones). It holds the keys, so lookups, misses and removals touch nothing else, and it is
//! small enough to stay in the L2 cache for the usual buffer sizes (a 64 MiB buffer of 4 KiB
//! pages: 256 KiB). Keys are u32: LPNs must be below 2^32 − 1, as every FTL's own tables require
//! ([`key`]; a larger LPN is refused, never aliased).

use crate::error::{Result, SimError};
use crate::units::Lpn;

const NIL: u32 = u32::MAX;

/// One table slot: a key and its value, or [`Slot::EMPTY`].
#[derive(Clone, Copy)]
struct Slot {
    key: u32,
    value: u32,
}

impl Slot {
    /// No key is u32::MAX ([`key`]), so an empty slot never matches a lookup.
    const EMPTY: Slot = Slot {
        key: u32::MAX,
        value: NIL,
    };
}

/// The table key of `lpn` (None beyond the table's range).
#[inline(always)]
pub(crate) fn key(lpn: Lpn) -> Option<u32> {
    u32::try_from(lpn).ok().filter(|&k| k != u32::MAX)
}

/// The table key of `lpn`, or an error naming it (for writes, which must buffer it).
#[inline(always)]
pub(crate) fn checked_key(lpn: Lpn) -> Result<u32> {
    key(lpn).ok_or_else(|| {
        SimError::Invalid(format!(
            "LPN {lpn} is beyond the write buffer's page index (LPNs below 2^32 − 1)"
        ))
    })
}

#[inline(always)]
fn hash(key: u64, shift: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

pub(crate) struct LpnIndex {
    /// Its length is a power of two.
    table: Vec<Slot>,
    /// 64 − log2(table length): the hash is the top bits of a multiplicative hash.
    shift: u32,
    len: usize,
}

impl LpnIndex {
    /// An index sized for `entries` at load ≤ 1/2 (it grows past 2^24 slots only as keys arrive).
    pub(crate) fn new(entries: u64) -> Self {
        let slots = (entries.saturating_add(1).saturating_mul(2))
            .clamp(16, 1 << 24)
            .next_power_of_two();
        Self::with_slots(slots as usize)
    }

    /// An index of `slots` slots (a power of two), for tests that need it to grow.
    pub(crate) fn with_slots(slots: usize) -> Self {
        debug_assert!(slots.is_power_of_two());
        LpnIndex {
            table: vec![Slot::EMPTY; slots],
            shift: 64 - slots.trailing_zeros(),
            len: 0,
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Start loading the slot where the lookup of `lpn` starts.
    #[inline(always)]
    pub(crate) fn prefetch(&self, lpn: Lpn) {
        crate::units::prefetch(&self.table, hash(lpn, self.shift));
    }

    /// Position holding key `k`, or the empty position where it would go.
    #[inline(always)]
    pub(crate) fn find(&self, k: u32) -> (usize, bool) {
        let m = self.table.len() - 1;
        let mut pos = hash(k as u64, self.shift);
        loop {
            let e = self.table[pos];
            if e.key == k {
                return (pos, true);
            }
            if e.value == NIL {
                return (pos, false);
            }
            pos = (pos + 1) & m;
        }
    }

    /// The value at a position [`LpnIndex::find`] found.
    #[inline(always)]
    pub(crate) fn value(&self, pos: usize) -> u32 {
        self.table[pos].value
    }

    /// The value of key `k`.
    #[inline]
    pub(crate) fn get(&self, k: u32) -> Option<u32> {
        let (pos, found) = self.find(k);
        found.then(|| self.value(pos))
    }

    /// The value of `lpn` (None when absent or beyond the key range: a read or trim of such an
    /// LPN finds nothing buffered).
    #[inline]
    pub(crate) fn lookup(&self, lpn: Lpn) -> Option<u32> {
        key(lpn).and_then(|k| self.get(k))
    }

    /// The node of `lpn` among `nodes` (the slots the index's values name), if buffered: what a
    /// read of a page-level buffer is served from.
    #[inline]
    pub(crate) fn page<'a, N>(&self, nodes: &'a [N], lpn: Lpn) -> Option<&'a N> {
        self.lookup(lpn).map(|i| &nodes[i as usize])
    }

    /// Remove `lpn` (a trim; nothing for an LPN beyond the key range); its value if it was there.
    #[inline]
    pub(crate) fn remove_lpn(&mut self, lpn: Lpn) -> Option<u32> {
        key(lpn).and_then(|k| self.remove(k))
    }

    /// Put `k` → `value` at `pos`, the empty position [`LpnIndex::find`] gave for `k` (nothing
    /// changed the index since).
    #[inline]
    pub(crate) fn insert_at(&mut self, mut pos: usize, k: u32, value: u32) {
        if (self.len + 1) * 2 > self.table.len() {
            self.grow();
            pos = self.find(k).0;
        }
        self.table[pos] = Slot { key: k, value };
        self.len += 1;
    }

    /// Remove the entry at `pos` (backward-shift deletion).
    #[inline]
    pub(crate) fn remove_at(&mut self, mut pos: usize) {
        let m = self.table.len() - 1;
        let mut j = pos;
        self.len -= 1;
        loop {
            j = (j + 1) & m;
            let e = self.table[j];
            if e.value == NIL {
                self.table[pos] = Slot::EMPTY;
                return;
            }
            let home = hash(e.key as u64, self.shift);
            // The entry at j may move back to pos unless its home lies cyclically in (pos, j].
            if (j.wrapping_sub(home) & m) >= (j.wrapping_sub(pos) & m) {
                self.table[pos] = e;
                pos = j;
            }
        }
    }

    /// Remove key `k`; its value if it was there.
    #[inline]
    pub(crate) fn remove(&mut self, k: u32) -> Option<u32> {
        let (pos, found) = self.find(k);
        found.then(|| {
            let v = self.value(pos);
            self.remove_at(pos);
            v
        })
    }

    /// Double the table (keeps the load at most 1/2 for any number of entries).
    #[cold]
    fn grow(&mut self) {
        let slots = self.table.len() * 2;
        let old = std::mem::replace(&mut self.table, vec![Slot::EMPTY; slots]);
        self.shift -= 1;
        let m = self.table.len() - 1;
        for e in old.into_iter().filter(|e| e.value != NIL) {
            let mut pos = hash(e.key as u64, self.shift);
            while self.table[pos].value != NIL {
                pos = (pos + 1) & m;
            }
            self.table[pos] = e;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Against a HashMap, from a tiny table that must grow, with colliding keys, removals that
    /// shift entries back, and the largest key.
    #[test]
    fn matches_a_map() {
        let mut ix = LpnIndex::with_slots(4);
        let mut model = HashMap::new();
        let mut rng = crate::rng::Rng::new(9);
        for step in 0..20_000u32 {
            let k = match rng.below(10) {
                0 => u32::MAX - 1,
                _ => (rng.below(300) * 64) as u32,
            };
            if rng.below(3) == 0 {
                assert_eq!(ix.remove(k), model.remove(&k));
            } else {
                let (pos, found) = ix.find(k);
                assert_eq!(found, model.contains_key(&k));
                if !found {
                    ix.insert_at(pos, k, step);
                    model.insert(k, step);
                }
            }
            assert_eq!(ix.len(), model.len());
            let probe = (rng.below(300) * 64) as u32;
            assert_eq!(ix.get(probe), model.get(&probe).copied());
        }
        assert!(ix.table.len() > 4);
        assert_eq!(
            (key(u32::MAX as u64), key(1 << 32), key(7)),
            (None, None, Some(7))
        );
    }
}
