//! Read-ahead in time (`[readahead]`; the cache and its streams are the engine's,
//! `engine/readahead.rs`): a request's read-ahead reads are background work from when the
//! controller has handled it, and each slot of the read-ahead cache has its page in DRAM when the
//! read that filled it completes. A read that hits a slot waits for that time.

use super::Clock;
use crate::nand::{Cause, NandOp, OpKind};

/// A filled slot whose page needed no flash read (the FTL held its data in DRAM), as the
/// engine marks it in the slots it hands over (slots are below 2^31).
pub const NO_READ: u32 = 1 << 31;

impl Clock {
    /// A request handled by the controller at `ready_us` hit the read-ahead slots `hits`, then
    /// read ahead `ops` (background work from `ready_us`) into the slots `fills`, in order: one
    /// read-ahead flash read each, unless marked [`NO_READ`]. When the pages it hit are in DRAM
    /// (0 without any).
    pub fn read_ahead(
        &mut self,
        ready_us: f64,
        ops: &[NandOp],
        hits: &[u32],
        fills: &[u32],
    ) -> f64 {
        let wait = hits
            .iter()
            .map(|&s| {
                self.read_ahead_ready
                    .get(s as usize)
                    .copied()
                    .unwrap_or(0.0)
            })
            .fold(0.0, f64::max);
        if !ops.is_empty() {
            let end = self.run_ops(ready_us, ops);
            self.busy_until = self.busy_until.max(end);
        }
        self.fill_slots(ready_us, ops, fills);
        wait
    }

    /// The slots `fills` have their pages in DRAM when their reads among `ops` (placed last)
    /// complete; those marked [`NO_READ`] at `ready_us`.
    fn fill_slots(&mut self, ready_us: f64, ops: &[NandOp], fills: &[u32]) {
        let mut ready = std::mem::take(&mut self.read_ahead_ready);
        let placed = match &self.grouped {
            Some(g) => g.done(),
            None => &self.done,
        };
        let mut reads = ops
            .iter()
            .zip(placed)
            .filter(|(op, _)| op.kind == OpKind::Read && op.cause == Cause::ReadAhead)
            .map(|(_, &d)| d);
        for &s in fills {
            let at = if s & NO_READ != 0 {
                ready_us
            } else {
                reads.next().unwrap_or(ready_us)
            };
            let i = (s & !NO_READ) as usize;
            if ready.len() <= i {
                ready.resize(i + 1, 0.0);
            }
            ready[i] = at;
        }
        self.read_ahead_ready = ready;
    }
}
