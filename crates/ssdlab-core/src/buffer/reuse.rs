//! Re-use distance in distinct pages, as seed 003 defines it ("the number of distinct pages
//! between two consecutive accesses to the same page"), measured from any earlier write position:
//! a Fenwick tree over write positions marks the latest write of every page written so far, so
//! the distinct pages written after position `s` are the marks after `s`. Positions start at 1
//! and are renumbered densely when the tree is full; the owner first renumbers its own stamps
//! with [`Reuse::rank`], then calls [`Reuse::compact`].

use rustc_hash::FxHashMap;

/// Tree positions at least (grown to twice the distinct pages at each compaction).
const MIN_LEN: u64 = 1024;

pub struct Reuse {
    /// LPN → position of its latest write.
    last: FxHashMap<u64, u64>,
    /// Fenwick tree over positions 1..=len (index 0 unused): 1 where a page's latest write is.
    tree: Vec<u32>,
    /// Position of the next write.
    next: u64,
}

impl Default for Reuse {
    fn default() -> Self {
        Reuse {
            last: FxHashMap::default(),
            tree: vec![0; MIN_LEN as usize + 1],
            next: 1,
        }
    }
}

impl Reuse {
    /// A tree of `len` positions (tests: one that never compacts).
    #[cfg(test)]
    pub fn with_len(len: u64) -> Self {
        Reuse {
            tree: vec![0; len as usize + 1],
            ..Default::default()
        }
    }

    fn len(&self) -> u64 {
        self.tree.len() as u64 - 1
    }

    fn add(&mut self, mut i: u64, delta: i32) {
        while i <= self.len() {
            let t = &mut self.tree[i as usize];
            *t = t.wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Pages whose latest write is at position `s` or before.
    pub fn rank(&self, s: u64) -> u64 {
        let mut i = s.min(self.len());
        let mut n = 0u64;
        while i > 0 {
            n += self.tree[i as usize] as u64;
            i &= i - 1;
        }
        n
    }

    /// The position the next recorded write takes.
    pub fn next_position(&self) -> u64 {
        self.next
    }

    /// Distinct pages whose latest write is after position `s` (up to the last recorded).
    pub fn since(&self, s: u64) -> u64 {
        self.last.len() as u64 - self.rank(s)
    }

    /// The next write has no position left: renumber ([`Self::rank`], then [`Self::compact`]).
    pub fn full(&self) -> bool {
        self.next > self.len()
    }

    /// Record a write of `lpn` at [`Self::next_position`].
    pub fn record(&mut self, lpn: u64) {
        let pos = self.next;
        self.next += 1;
        if let Some(old) = self.last.insert(lpn, pos) {
            self.add(old, -1);
        }
        self.add(pos, 1);
    }

    /// Renumber positions densely (each mark's new position is its rank), in a tree of twice
    /// the marks; any stamp `s` becomes `rank(s)`, which keeps every distance.
    pub fn compact(&mut self) {
        let mut by_pos: Vec<(u64, u64)> = self.last.iter().map(|(&l, &p)| (p, l)).collect();
        by_pos.sort_unstable();
        let n = by_pos.len() as u64;
        self.tree = vec![0; (2 * n).max(MIN_LEN) as usize + 1];
        for (i, &(_, lpn)) in by_pos.iter().enumerate() {
            self.last.insert(lpn, i as u64 + 1);
        }
        // Every position 1..=n is marked: node i covers (i − lowbit(i), i].
        for i in 1..=n {
            self.tree[i as usize] = (i & i.wrapping_neg()) as u32;
        }
        for i in n + 1..=self.len() {
            let low = i & i.wrapping_neg();
            let covered = n.saturating_sub(i - low).min(low);
            self.tree[i as usize] = covered as u32;
        }
        self.next = n + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes 0, 1, 1, 1, 0, 2 at positions 1–6: after them the latest writes are 1 (pos 4),
    /// 0 (5) and 2 (6). Before the second write of 0 (position 5), the distinct pages written
    /// since its first (position 1) are {1}: one, where the clock distance is 4.
    #[test]
    fn hand_worked() {
        let mut r = Reuse::default();
        for lpn in [0, 1, 1, 1] {
            r.record(lpn);
        }
        assert_eq!((r.next_position(), r.since(1)), (5, 1));
        assert_eq!((r.since(0), r.since(3), r.since(4)), (2, 1, 0));
        r.record(0);
        r.record(2);
        assert_eq!(
            (r.since(1), r.since(4), r.since(5), r.since(6)),
            (3, 2, 1, 0)
        );
        assert_eq!((r.rank(3), r.rank(4), r.rank(6)), (0, 1, 3));
    }

    /// Against a literal count (the distinct pages among the writes after each stamp), across
    /// many compactions: stamps renumbered through `rank` keep their distances.
    #[test]
    fn matches_a_literal_count_across_compactions() {
        let mut rng = crate::rng::Rng::new(5);
        let mut r = Reuse::default();
        let mut log: Vec<u64> = Vec::new();
        // (stamp in `r`, index in `log` of the write it was taken after)
        let mut stamps: Vec<(u64, usize)> = Vec::new();
        let mut compactions = 0;
        for step in 0..20_000 {
            if r.full() {
                for s in &mut stamps {
                    s.0 = r.rank(s.0);
                }
                r.compact();
                compactions += 1;
            }
            let lpn = rng.below(300);
            r.record(lpn);
            log.push(lpn);
            if step % 97 == 0 {
                stamps.push((r.next_position() - 1, log.len()));
            }
            if step % 1013 == 0 {
                for &(s, at) in &stamps {
                    let want: std::collections::BTreeSet<u64> = log[at..].iter().copied().collect();
                    let want = want.len() as u64;
                    assert_eq!(r.since(s), want, "step {step}");
                }
            }
        }
        assert!(compactions > 5);
    }
}
