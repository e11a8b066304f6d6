//! GC victim selection shared by page-mapped FTLs: greedy, cost-benefit and FIFO.
//!
//! The FTL tells the selector when a block is sealed (full, eligible), when one of its pages is
//! invalidated, and when it is taken as a victim. Greedy keeps blocks in buckets by valid count
//! (O(1) updates, O(pages per block) pick); FIFO keeps seal order; cost-benefit scans the sealed
//! blocks (O(blocks) per pick, since its score ages with time).

use crate::error::{Result, SimError};

const NIL: u32 = u32::MAX;

/// The GC counters every page-mapped FTL reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub victims: u64,
    pub moved_pages: u64,
    pub invocations: u64,
}

impl Counts {
    /// As metrics: `gc.victims`, `gc.moved_pages`, `gc.invocations`.
    pub fn metrics(&self) -> [(&'static str, u64); 3] {
        [
            ("gc.victims", self.victims),
            ("gc.moved_pages", self.moved_pages),
            ("gc.invocations", self.invocations),
        ]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VictimPolicy {
    /// Fewest valid pages; ties to the block that reached that count first.
    Greedy,
    /// LFS cost-benefit: maximise (1 − u)·age / (1 + u), u = valid fraction,
    /// age = host page writes since the block was sealed.
    CostBenefit,
    /// Oldest sealed block first, whatever its valid count.
    Fifo,
}

impl VictimPolicy {
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "greedy" => Ok(VictimPolicy::Greedy),
            "cost-benefit" => Ok(VictimPolicy::CostBenefit),
            "fifo" => Ok(VictimPolicy::Fifo),
            other => Err(SimError::config(
                "ftl.gc",
                format!("unknown GC policy `{other}`"),
            )),
        }
    }
}

#[derive(Clone, Copy)]
struct Links {
    prev: u32,
    next: u32,
    sealed: bool,
}

#[derive(Clone)]
pub struct VictimSelector {
    policy: VictimPolicy,
    pages_per_block: u32,
    // Doubly linked lists over block indexes: bucket lists (greedy) or one seal-order list.
    /// Each block's list links and whether it is sealed, side by side: an invalidation
    /// touches all three, in one cache line.
    links: Vec<Links>,
    head: Vec<u32>,
    tail: Vec<u32>,
    seal_time: Vec<u64>,
    lowest: usize,
}

impl VictimSelector {
    pub fn new(policy: VictimPolicy, blocks: usize, pages_per_block: u32) -> Self {
        let lists = match policy {
            VictimPolicy::Greedy => pages_per_block as usize + 1,
            _ => 1,
        };
        VictimSelector {
            policy,
            pages_per_block,
            links: vec![
                Links {
                    prev: NIL,
                    next: NIL,
                    sealed: false,
                };
                blocks
            ],
            head: vec![NIL; lists],
            tail: vec![NIL; lists],
            seal_time: vec![0; blocks],
            lowest: 0,
        }
    }

    fn list_of(&self, valid: u32) -> usize {
        match self.policy {
            VictimPolicy::Greedy => valid as usize,
            _ => 0,
        }
    }

    fn push_tail(&mut self, list: usize, b: u32) {
        let t = self.tail[list];
        self.links[b as usize].prev = t;
        self.links[b as usize].next = NIL;
        if t == NIL {
            self.head[list] = b;
        } else {
            self.links[t as usize].next = b;
        }
        self.tail[list] = b;
        if list < self.lowest {
            self.lowest = list;
        }
    }

    fn unlink(&mut self, list: usize, b: u32) {
        let (p, n) = (self.links[b as usize].prev, self.links[b as usize].next);
        if p == NIL {
            self.head[list] = n;
        } else {
            self.links[p as usize].next = n;
        }
        if n == NIL {
            self.tail[list] = p;
        } else {
            self.links[n as usize].prev = p;
        }
        self.links[b as usize].prev = NIL;
        self.links[b as usize].next = NIL;
    }

    /// Block `b` is full and closed, holding `valid` valid pages, at logical time `now`.
    pub fn on_seal(&mut self, b: u32, valid: u32, now: u64) {
        self.links[b as usize].sealed = true;
        self.seal_time[b as usize] = now;
        let l = self.list_of(valid);
        self.push_tail(l, b);
    }

    /// Block `b` will soon lose a valid page: start loading its entry.
    #[inline]
    pub fn prefetch(&self, b: u32) {
        crate::units::prefetch(&self.links, b as usize);
    }

    /// One page of block `b` was invalidated; `valid` is its new valid count.
    #[inline]
    pub fn on_invalidate(&mut self, b: u32, valid: u32) {
        if self.policy == VictimPolicy::Greedy && self.links[b as usize].sealed {
            self.unlink(valid as usize + 1, b);
            self.push_tail(valid as usize, b);
        }
    }

    /// Pick and remove the victim. `valid_of` gives a block's valid count.
    pub fn take_victim(&mut self, now: u64, valid_of: impl Fn(u32) -> u32) -> Option<u32> {
        let b = self.peek_victim(now, &valid_of)?;
        self.remove(b, valid_of(b));
        Some(b)
    }

    /// Remove sealed block `b`, holding `valid` valid pages (the victim just peeked).
    pub fn remove(&mut self, b: u32, valid: u32) {
        let l = self.list_of(valid);
        self.unlink(l, b);
        self.links[b as usize].sealed = false;
    }

    /// The block [`VictimSelector::take_victim`] would take, left in place.
    pub fn peek_victim(&mut self, now: u64, valid_of: impl Fn(u32) -> u32) -> Option<u32> {
        Some(match self.policy {
            VictimPolicy::Greedy => {
                while self.lowest < self.head.len() && self.head[self.lowest] == NIL {
                    self.lowest += 1;
                }
                if self.lowest >= self.head.len() {
                    self.lowest = 0;
                    return None;
                }
                self.head[self.lowest]
            }
            VictimPolicy::Fifo => {
                let h = self.head[0];
                if h == NIL {
                    return None;
                }
                h
            }
            VictimPolicy::CostBenefit => {
                let n = self.pages_per_block as f64;
                let mut best = NIL;
                let mut best_score = f64::NEG_INFINITY;
                let mut cur = self.head[0];
                while cur != NIL {
                    let u = valid_of(cur) as f64 / n;
                    let age = (now - self.seal_time[cur as usize]) as f64 + 1.0;
                    let score = (1.0 - u) * age / (1.0 + u);
                    if score > best_score {
                        best_score = score;
                        best = cur;
                    }
                    cur = self.links[cur as usize].next;
                }
                if best == NIL {
                    return None;
                }
                best
            }
        })
    }
}

/// The registry entries of the GC victim policies (`ftl.gc`).
pub const POLICIES: &[crate::component::Component] = &[
    crate::component::Component::new(
        "gc",
        "greedy",
        "Victim = sealed block with the fewest valid pages.",
        crate::params::NONE,
        &[],
    ),
    crate::component::Component::new(
        "gc",
        "cost-benefit",
        "Victim maximises (1−u)·age/(1+u); age = host page writes since sealing.",
        crate::params::NONE,
        &[],
    ),
    crate::component::Component::new(
        "gc",
        "fifo",
        "Victim = oldest sealed block.",
        crate::params::NONE,
        &[],
    ),
];

/// Victims in a row that GC moved whole, gaining no space. Greedy and cost-benefit never pick a
/// fully valid block while another exists; FIFO (and a line victim order) may, so GC gives up only
/// when that goes on for more victims than there are blocks.
#[derive(Default)]
pub(crate) struct Stalls(usize);

impl Stalls {
    /// Count a victim (`full`: it was fully valid) among `blocks`; an error naming `what` (the
    /// victims) once more than `blocks` in a row were.
    #[inline]
    pub fn victim(&mut self, full: bool, blocks: usize, what: &str) -> Result<()> {
        if !full {
            self.0 = 0;
            return Ok(());
        }
        self.0 += 1;
        if self.0 > blocks {
            return Err(SimError::Invalid(format!(
                "GC cannot reclaim space: every {what} is fully valid (raise device.op)"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_picks_fewest_valid() {
        let valid = std::cell::RefCell::new(vec![4u32, 4, 4]);
        let mut s = VictimSelector::new(VictimPolicy::Greedy, 3, 4);
        for b in 0..3 {
            s.on_seal(b, 4, 0);
        }
        valid.borrow_mut()[1] = 3;
        s.on_invalidate(1, 3);
        valid.borrow_mut()[2] = 3;
        s.on_invalidate(2, 3);
        valid.borrow_mut()[2] = 2;
        s.on_invalidate(2, 2);
        let v = valid.borrow().clone();
        assert_eq!(s.take_victim(10, |b| v[b as usize]), Some(2));
        assert_eq!(s.take_victim(10, |b| v[b as usize]), Some(1));
        assert_eq!(s.take_victim(10, |b| v[b as usize]), Some(0));
        assert_eq!(s.take_victim(10, |b| v[b as usize]), None);
    }

    #[test]
    fn cost_benefit_prefers_old_cold_blocks() {
        let valid = [2u32, 2];
        let mut s = VictimSelector::new(VictimPolicy::CostBenefit, 2, 4);
        s.on_seal(0, 2, 0);
        s.on_seal(1, 2, 50);
        assert_eq!(s.take_victim(100, |b| valid[b as usize]), Some(0));
    }
}
